"""Handing freed memory back to the system between the phases of a run."""

from __future__ import annotations

import contextlib
import functools
import gc
import os
from collections.abc import Iterator
from typing import Any

import pyarrow as pa


def release_free_memory() -> None:
    """Hand the memory freed by a finished phase back to the system: Arrow's pool keeps freed pages
    (``pyarrow.MemoryPool.release_unused``) and glibc the free top and holes of its heap
    (``malloc_trim(0)``; skipped without glibc). Takes milliseconds; changes no result."""
    pa.default_memory_pool().release_unused()
    trim = _glibc("malloc_trim")
    if trim is not None:
        trim(0)


#: glibc's ``mallopt`` parameter numbers (``malloc.h``).
_M_MMAP_THRESHOLD = -3
#: Blocks from this many bytes on get a memory map of their own (see :func:`tune_allocators`).
MMAP_THRESHOLD = 1 << 20


def tune_allocators() -> bool:
    """Have this process give large freed blocks back to the system at once.

    * glibc serves every block of :data:`MMAP_THRESHOLD` bytes or more with its own memory map,
      unmapped when freed (``mallopt(M_MMAP_THRESHOLD)``; by default the threshold rises up to
      32 MiB, after which numpy's arrays come from the heap, mallopt(3)).
    * Arrow's buffers come from the system allocator instead of mimalloc, whose per-thread heaps
      keep freed pages.

    A user's ``MALLOC_MMAP_THRESHOLD_`` or ``ARROW_DEFAULT_MEMORY_POOL`` is left as it is. Each
    large block is then mapped anew (slower for a loop of large allocations; the measurements are in
    bench/README.md). Call it at the start of a process: it changes the whole process.

    Returns:
        whether glibc's threshold was set (False: another C library, or the user's variable).
    """
    if "ARROW_DEFAULT_MEMORY_POOL" not in os.environ:
        pa.set_memory_pool(pa.system_memory_pool())
    if "MALLOC_MMAP_THRESHOLD_" in os.environ:
        return False
    mallopt = _glibc("mallopt")
    return bool(mallopt is not None and mallopt(_M_MMAP_THRESHOLD, MMAP_THRESHOLD))


@functools.cache
def _glibc(name: str) -> Any:
    """glibc's function ``name`` (``mallopt``, ``malloc_trim``), or None (another C library or system)."""
    import ctypes
    import ctypes.util

    try:
        return getattr(ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6"), name)
    except (OSError, AttributeError):
        return None


#: Net allocations between two collections of the youngest generation, in a run's process and
#: its workers (:func:`collect_less_often`; Python's default is 700).
GC_THRESHOLD = 10_000


@contextlib.contextmanager
def collect_less_often(threshold: int = GC_THRESHOLD) -> Iterator[None]:
    """Within the block, collect the youngest generation every ``threshold`` net allocations instead of
    Python's 700, and restore the thresholds after it. A run allocates mostly short-lived acyclic
    objects (rows as dicts, decoded JSON, strings), which frequent young collections promote into
    full collections of the whole heap."""
    before = gc.get_threshold()
    gc.set_threshold(threshold, *before[1:])
    try:
        yield
    finally:
        gc.set_threshold(*before)
