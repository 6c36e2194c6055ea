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
    """Hand the memory freed by a finished phase back to the system, so that the next phase's
    allocations (numpy, Python objects) can use it: Arrow's memory pool keeps freed pages for
    later Arrow buffers (``pyarrow.MemoryPool.release_unused``, mimalloc's or jemalloc's
    collect), and glibc keeps the free top and holes of its heap (``malloc_trim(0)``, glibc's
    manual; skipped where there is no glibc). Takes milliseconds; changes no result.

    At the end of the 10k bench corpus's per-document phase this gave back about 110 MB
    (Arrow's pool ~80 MB, glibc's heap ~30 MB) of a 714 MB RSS.
    """
    pa.default_memory_pool().release_unused()
    trim = _malloc_trim()
    if trim is not None:
        trim(0)


#: glibc's ``mallopt`` parameter numbers (``malloc.h``).
_M_MMAP_THRESHOLD = -3
#: Blocks from this many bytes on get a memory map of their own (see :func:`tune_allocators`).
MMAP_THRESHOLD = 1 << 20


def tune_allocators() -> bool:
    """Have this process give memory back to the system as soon as its large blocks are freed,
    for a batch run whose phases each build and drop arrays of hundreds of MB (its peak resident
    set is what a user sizes the machine by):

    * glibc serves every block of :data:`MMAP_THRESHOLD` bytes (1 MiB) or more with a memory map
      of its own, unmapped when freed (``mallopt(M_MMAP_THRESHOLD)``). By default the threshold
      starts at 128 KiB and rises to the size of each mapped block freed, up to 32 MiB
      (mallopt(3)), after which numpy's arrays come from the heap, whose freed holes stay
      resident until :func:`release_free_memory`.
    * Arrow's buffers come from the system allocator (``pyarrow.system_memory_pool``) instead of
      mimalloc, whose per-thread heaps keep freed pages (Arrow's "Memory Management" docs).

    A setting the user made in the environment is left as it is: ``MALLOC_MMAP_THRESHOLD_``
    (glibc's own variable) keeps glibc's threshold, ``ARROW_DEFAULT_MEMORY_POOL`` Arrow's pool.

    Measured on the 10k bench corpus (the run's process, state and embedding cache reused): peak
    RSS 631 MB before, 493 MB at 7615dab with this and that session's other memory changes
    (``bench/README.md``, sixth session); the tables do not change. Cost: each large block is mapped and faulted in anew (a loop that only
    allocates 2.4 MB arrays ran 17x slower); the pair scores of 400,000 pairs took the same CPU
    time either way (31.8-38.2 s, noisy). Call it at the start of a process (the CLI's run,
    each pool worker): it changes the whole process.

    Returns:
        whether glibc's threshold was set (False: another C library, or the user's variable).
    """
    if "ARROW_DEFAULT_MEMORY_POOL" not in os.environ:
        pa.set_memory_pool(pa.system_memory_pool())
    if "MALLOC_MMAP_THRESHOLD_" in os.environ:
        return False
    mallopt = _mallopt()
    return bool(mallopt is not None and mallopt(_M_MMAP_THRESHOLD, MMAP_THRESHOLD))


@functools.cache
def _mallopt() -> Any:
    """glibc's ``mallopt``, or None (another C library, another system)."""
    try:
        return _libc().mallopt
    except (OSError, AttributeError):
        return None


@functools.cache
def _libc() -> Any:
    import ctypes
    import ctypes.util

    return ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")


@functools.cache
def _malloc_trim() -> Any:
    """glibc's ``malloc_trim``, or None (another C library, another system)."""
    try:
        return _libc().malloc_trim
    except (OSError, AttributeError):
        return None


#: Net allocations between two collections of the youngest generation, in a run's process and
#: its workers (:func:`collect_less_often`; Python's default is 700).
GC_THRESHOLD = 10_000


@contextlib.contextmanager
def collect_less_often(threshold: int = GC_THRESHOLD) -> Iterator[None]:
    """Within the block, collect the youngest generation every ``threshold`` net allocations
    instead of Python's 700, and restore the thresholds after it (``gc.set_threshold``).

    A run allocates mostly short-lived, acyclic objects (rows as dicts, decoded JSON, strings):
    at 700, collections of the youngest generation come often enough to promote many of them,
    and the full collections that follow scan the whole heap. On the 2,000 files of two folders
    of the 10k bench corpus with 2 workers, the run's own process spent 0.86 s in the collector
    (0.62 s in 9 full collections) before, 0.30 s after (1 full collection); during the
    per-document phase its CPU time went from 1.98 s to 1.72 s, which the workers get.
    """
    before = gc.get_threshold()
    gc.set_threshold(threshold, *before[1:])
    try:
        yield
    finally:
        gc.set_threshold(*before)
