"""A matrix of vectors kept in a scratch file instead of in memory.

Dedup compares every section's content vector (``n * d * 4`` bytes: 1.2 GB for 600,000 sections
of 512 dimensions), but it never needs all of them at once: the neighbour search reads them in
blocks and the pair scores read the rows of a batch of pairs. :class:`VectorFile` holds them in an
unnamed temporary file and hands out fresh arrays: blocks by plain reads, scattered rows through a
memory map that is dropped every :data:`TAKE_RESIDENT_ROWS` rows, so the pages it brought in leave
the process's resident set (the kernel's page cache keeps them, which costs the process nothing).
While a map is held, the kernel may map far more than the touched rows (fault-around, large
page-cache folios): on Linux 6.x a few thousand random rows can map most of the file, which the
resident set (and a peak-RSS measurement) then counts until the map is dropped. Copies
(:meth:`VectorFile.permuted`) therefore use plain reads and positioned writes, not the map.
"""

from __future__ import annotations

import mmap
import os
import tempfile
from pathlib import Path

import numpy as np

#: Rows gathered through one memory map before it is dropped: at most this many rows' pages
#: (4 KiB each, 64 MiB for 16384 rows) count in the resident set at a time.
TAKE_RESIDENT_ROWS = 16384

#: Rows per block when a whole file is copied (:meth:`VectorFile.permuted`).
COPY_BLOCK = 16384


class VectorFile:
    """An ``(n, d)`` matrix of ``dtype`` in an unnamed temporary file, written by :meth:`append`,
    read by :meth:`rows` (blocks) and :meth:`take` (any rows). Every read returns a fresh array:
    the values are bit for bit those appended.

    ``d`` is fixed by the first :meth:`append` (or given). The file is gone when the object is
    closed or collected (``tempfile.TemporaryFile``).

    Args:
        folder: where the file goes (None: the system's temporary folder).
        d: columns, when known before the first append.
        dtype: the element type (default float32).

    Raises:
        OSError: the file cannot be created (no such folder, no space); from :meth:`append`,
            when it cannot be written.
    """

    def __init__(self, folder: str | Path | None = None, d: int | None = None, dtype: np.dtype | type = np.float32):
        self._file = tempfile.TemporaryFile(dir=folder, prefix="vectors-", suffix=".vec")
        self.n = 0
        self.d = d
        self.dtype = np.dtype(dtype)
        self._map: mmap.mmap | None = None
        self._view: np.ndarray | None = None
        self._mapped_rows = 0

    @property
    def shape(self) -> tuple[int, int]:
        """``(n, d)`` (``d`` 0 before anything is appended)."""
        return self.n, self.d or 0

    def __len__(self) -> int:
        return self.n

    def append(self, rows: np.ndarray) -> None:
        """Add the rows of an ``(m, d)`` array after the others (converted to ``dtype``).

        Raises:
            ValueError: ``rows`` is not 2-D, or its width is not ``d``.
        """
        rows = np.asarray(rows)
        if rows.ndim != 2:
            raise ValueError(f"expected an (m, d) array, got shape {rows.shape}")
        if not len(rows):  # nothing to add (its width is not checked: an empty batch may have none)
            return
        if self.d is None:
            self.d = rows.shape[1]
        elif rows.shape[1] != self.d:
            raise ValueError(f"expected rows of width {self.d}, got {rows.shape[1]}")
        self._unmap()
        self._file.seek(0, 2)
        np.ascontiguousarray(rows, dtype=self.dtype).tofile(self._file)
        self._file.flush()
        self.n += len(rows)

    def rows(self, start: int, stop: int) -> np.ndarray:
        """Rows ``start:stop`` (clipped to ``[0, n]``): a fresh ``(stop - start, d)`` array read
        from the file (not mapped: dropping it frees its memory)."""
        start, stop = max(0, start), min(stop, self.n)
        d = self.d or 0
        if stop <= start or not d:
            return np.zeros((max(0, stop - start), d), self.dtype)
        self._file.seek(start * d * self.dtype.itemsize)
        return np.fromfile(self._file, dtype=self.dtype, count=(stop - start) * d).reshape(-1, d)

    def take(self, index: np.ndarray) -> np.ndarray:
        """The rows at ``index`` (integer array, any order, repeats allowed): a fresh
        ``(len(index), d)`` array, as ``matrix[index]`` would give it. Read through a memory map
        (see the module docstring for what it costs in resident memory while held).

        Raises:
            IndexError: an index is outside ``[-n, n)``.
            TypeError: ``index`` is not of an integer type.
        """
        index = np.asarray(index)
        d = self.d or 0
        if not index.size:
            return np.zeros((0, d), self.dtype)
        if not np.issubdtype(index.dtype, np.integer):
            raise TypeError(f"row indexes must be integers, got {index.dtype}")
        if int(index.min()) < -self.n or int(index.max()) >= self.n:
            raise IndexError(f"index out of range for {self.n} rows")
        index = index.astype(np.int64)  # in range: no wrap-around
        if not d:
            return np.zeros((index.size, 0), self.dtype)
        if self._view is None:
            self._map = mmap.mmap(self._file.fileno(), self.n * d * self.dtype.itemsize, access=mmap.ACCESS_READ)
            self._view = np.frombuffer(self._map, dtype=self.dtype).reshape(self.n, d)
        out = self._view[index]
        self._mapped_rows += index.size
        if self._mapped_rows >= TAKE_RESIDENT_ROWS:
            self._unmap()
        return out

    def read(self) -> np.ndarray:
        """The whole matrix, ``(n, d)``, in memory."""
        return self.rows(0, self.n)

    def permuted(self, order: np.ndarray, folder: str | Path | None = None) -> VectorFile:
        """A new file whose row ``k`` is row ``order[k]`` of this one: this file is read in
        blocks of :data:`COPY_BLOCK` rows (plain reads) and each row written at its place in the
        new file, so memory holds one block and no map.

        Raises:
            ValueError: ``order`` is not a permutation of the ``n`` rows.
        """
        order = np.asarray(order)
        if len(order) != self.n or not np.array_equal(np.sort(order), np.arange(self.n)):
            raise ValueError(f"order must be a permutation of the {self.n} rows ({len(order)} entries given)")
        out = VectorFile(folder, self.d, self.dtype)
        if not self.n or not self.d:
            out.n = self.n
            return out
        self._unmap()
        row_bytes = self.d * self.dtype.itemsize
        target = np.empty(self.n, np.int64)
        target[order] = np.arange(self.n)  # where each source row goes
        fd = out._file.fileno()
        os.ftruncate(fd, self.n * row_bytes)
        for start in range(0, self.n, COPY_BLOCK):
            block = self.rows(start, start + COPY_BLOCK)
            for row, at in zip(block, target[start : start + len(block)].tolist(), strict=True):
                os.pwrite(fd, row.tobytes(), at * row_bytes)
        out.n = self.n
        return out

    def _unmap(self) -> None:
        """Drop the memory map (its pages leave the resident set)."""
        self._view = None
        if self._map is not None:
            self._map.close()
            self._map = None
        self._mapped_rows = 0

    def close(self) -> None:
        """Drop the map and the file (idempotent)."""
        self._unmap()
        self._file.close()

    def __del__(self) -> None:
        try:
            self.close()
        except Exception:  # interpreter shutdown: nothing left to free
            pass
