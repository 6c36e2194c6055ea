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
    """Hand freed memory back to the system: Arrow's pool (``release_unused``) and glibc's heap
    (``malloc_trim(0)``, skipped without glibc). Changes no result."""
    pa.default_memory_pool().release_unused()
    trim = _glibc("malloc_trim")
    if trim is not None:
        trim(0)


#: glibc's ``mallopt`` parameter numbers (``malloc.h``).
_M_MMAP_THRESHOLD = -3
#: Blocks from this many bytes on get a memory map of their own (see :func:`tune_allocators`).
MMAP_THRESHOLD = 1 << 20


def tune_allocators() -> bool:
    """Have this process give large freed blocks back at once: glibc maps blocks of
    :data:`MMAP_THRESHOLD` bytes or more on their own (``mallopt(M_MMAP_THRESHOLD)``, else the
    threshold climbs to 32 MiB, mallopt(3)), and Arrow uses the system allocator, not mimalloc.
    Users' ``MALLOC_MMAP_THRESHOLD_`` / ``ARROW_DEFAULT_MEMORY_POOL`` win. Affects the whole
    process: call at its start (costs: bench/README.md).

    Returns whether glibc's threshold was set.
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


#: Net allocations between young-generation collections in a run's processes (Python's default: 700).
GC_THRESHOLD = 10_000


@contextlib.contextmanager
def collect_less_often(threshold: int = GC_THRESHOLD) -> Iterator[None]:
    """Within the block, collect the young generation every ``threshold`` net allocations (restored
    after): a run's short-lived acyclic objects otherwise trigger full collections."""
    before = gc.get_threshold()
    gc.set_threshold(threshold, *before[1:])
    try:
        yield
    finally:
        gc.set_threshold(*before)
