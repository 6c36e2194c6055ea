"""A matrix of vectors kept in a scratch file instead of in memory.

Dedup compares every section's content vector (``n * d * 4`` bytes: 1.2 GB for 600,000 sections
of 512 dimensions), but it never needs all of them at once: the neighbour search reads them in
blocks and the pair scores read the rows of a batch of pairs. :class:`VectorFile` holds them in an
unnamed temporary file and hands out fresh arrays, read with plain (positioned) reads, so a
dropped array frees its memory and nothing else of the file stays in the process's resident set
(the kernel's page cache keeps the file, which costs the process nothing). It does not read
through a memory map: on Linux 6.x a map of a file in the page cache brings in large folios, so
a few hundred scattered rows can put hundreds of MB of the file in the resident set (measured:
256 random rows of a 1.2 GB file, +400 MB; 4,096 rows, all of it), which a peak-RSS figure then
counts until the map is dropped.

:class:`IvfListsFile` does the same for the copy of the rows that dedup's approximate
neighbour index keeps (faiss inverted lists): written with positioned writes and read back a
list at a time, also with positioned reads.
"""

from __future__ import annotations

import contextlib
import os
import sys
import tempfile
from pathlib import Path

import numpy as np

#: Rows per block when a whole file is copied (:meth:`VectorFile.permuted`).
COPY_BLOCK = 16384


class VectorFile:
    """An ``(n, d)`` matrix of ``dtype`` in an unnamed temporary file, written by :meth:`append`,
    read by :meth:`rows` (blocks) and :meth:`take` (any rows), both plain reads. Every read
    returns a fresh array: the values are bit for bit those appended.

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

    @property
    def shape(self) -> tuple[int, int]:
        """``(n, d)`` (``d`` 0 before anything is appended)."""
        return self.n, self.d or 0

    def __len__(self) -> int:
        return self.n

    def append(self, rows: np.ndarray) -> None:
        """Add the rows of an ``(m, d)`` array after the others (converted to ``dtype``).

        Raises:
            ValueError: ``rows`` is not 2-D, or its width is not ``d``; the file was handed
                over by another process (:meth:`__reduce__`).
        """
        if not self._file.writable():
            raise ValueError("this VectorFile was handed over by another process: it is read-only")
        rows = np.asarray(rows)
        if rows.ndim != 2:
            raise ValueError(f"expected an (m, d) array, got shape {rows.shape}")
        if not len(rows):  # nothing to add (its width is not checked: an empty batch may have none)
            return
        if self.d is None:
            self.d = rows.shape[1]
        elif rows.shape[1] != self.d:
            raise ValueError(f"expected rows of width {self.d}, got {rows.shape[1]}")
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
        out = np.empty((stop - start, d), self.dtype)
        # positioned reads: the file's offset is shared with a process that holds it through
        # :meth:`__reduce__`, so nothing here may depend on it; Linux returns at most about
        # 2 GiB per call (``MAX_RW_COUNT``), so a large read takes several
        _read_at(self._file.fileno(), memoryview(out.reshape(-1).view(np.uint8)), start * d * self.dtype.itemsize)
        return out

    def take(self, index: np.ndarray) -> np.ndarray:
        """The rows at ``index`` (integer array, any order, repeats allowed): a fresh
        ``(len(index), d)`` array, as ``matrix[index]`` would give it. Each run of consecutive
        rows is one positioned read (about 2 us a scattered row; a memory map would be about
        1 us, at the cost in resident memory the module docstring describes).

        Raises:
            IndexError: an index is outside ``[-n, n)``.
            TypeError: ``index`` is not of an integer type.
            OSError: a read fails or comes back short.
        """
        index = self._checked(index)
        d = self.d or 0
        if not index.size or not d:
            return np.zeros((index.size, d), self.dtype)
        index %= self.n  # negative rows count from the end
        wanted = np.unique(index)  # sorted
        out = np.empty((len(wanted), d), self.dtype)
        row_bytes = d * self.dtype.itemsize
        flat = memoryview(out.reshape(-1).view(np.uint8))
        cuts = np.flatnonzero(np.diff(wanted) != 1) + 1  # runs of consecutive rows: one read each
        lo = np.concatenate([[0], cuts]) * row_bytes  # where each run goes in ``out``, bytes
        hi = np.concatenate([cuts, [len(wanted)]]) * row_bytes
        at = wanted[lo // row_bytes] * row_bytes  # where it starts in the file
        fd = self._file.fileno()
        for start, stop, offset in zip(lo.tolist(), hi.tolist(), at.tolist(), strict=True):
            _read_at(fd, flat[start:stop], offset)
        return out[np.searchsorted(wanted, index)]

    def _checked(self, index: np.ndarray) -> np.ndarray:
        """``index`` as a fresh int64 array, each in ``[-n, n)``.

        Raises:
            IndexError: an index is outside ``[-n, n)``.
            TypeError: ``index`` is not of an integer type (an empty one may be of any type).
        """
        index = np.asarray(index)
        if not index.size:
            return np.zeros(0, np.int64)
        if not np.issubdtype(index.dtype, np.integer):
            raise TypeError(f"row indexes must be integers, got {index.dtype}")
        if int(index.min()) < -self.n or int(index.max()) >= self.n:
            raise IndexError(f"index out of range for {self.n} rows")
        return index.astype(np.int64)  # in range: no wrap-around

    def read(self) -> np.ndarray:
        """The whole matrix, ``(n, d)``, in memory."""
        return self.rows(0, self.n)

    def permuted(self, order: np.ndarray, folder: str | Path | None = None) -> VectorFile:
        """A new file whose row ``k`` is row ``order[k]`` of this one, appended
        :data:`COPY_BLOCK` rows at a time (each block by :meth:`take`), so memory holds one block.

        Raises:
            ValueError: ``order`` is not a permutation of the ``n`` rows.
        """
        order = np.asarray(order)
        if len(order) != self.n or not np.array_equal(np.sort(order), np.arange(self.n)):
            raise ValueError(f"order must be a permutation of the {self.n} rows ({len(order)} entries given)")
        out = VectorFile(folder, self.d, self.dtype)
        for start in range(0, self.n, COPY_BLOCK):
            out.append(self.take(order[start : start + COPY_BLOCK]))
        return out

    def __reduce__(self):
        """Pickled for another process of :mod:`multiprocessing` (an argument of a ``spawn``
        start, or sent on one of its connections): the file goes as its descriptor, as
        :mod:`multiprocessing` hands over a connection's (:func:`multiprocessing.reduction.DupFd`:
        inherited at the start, else through its resource sharer while this process lives). The
        other process reads the same rows without a copy, even after this one has closed its
        own. The copy is for reading: its :meth:`append` raises ``ValueError``.
        """
        from multiprocessing import reduction

        return _attached, (reduction.DupFd(self._file.fileno()), self.n, self.d, self.dtype.str)

    def close(self) -> None:
        """Drop the file (idempotent)."""
        self._file.close()

    def __del__(self) -> None:
        try:
            self.close()
        except Exception:  # interpreter shutdown: nothing left to free
            pass


def _read_at(fd: int, buffer: memoryview, offset: int) -> None:
    """Fill ``buffer`` from byte ``offset`` of ``fd`` with positioned reads (``os.preadv``: the
    file's offset is untouched), as many as it takes (Linux returns at most about 2 GiB a call).

    Raises:
        OSError: the file ends first, or a read fails.
    """
    done = 0
    while done < len(buffer):
        got = os.preadv(fd, (buffer[done:],), offset + done)
        if got <= 0:
            raise OSError(f"short read at byte {offset + done}: {len(buffer) - done} bytes missing")
        done += got


def _attached(fd, n: int, d: int | None, dtype: str) -> VectorFile:
    """The :class:`VectorFile` of :meth:`VectorFile.__reduce__` in the receiving process: the
    same file through the descriptor it was handed (``fd``: what ``DupFd`` gives), read-only."""
    out = VectorFile.__new__(VectorFile)
    out._file = os.fdopen(fd.detach(), "rb")
    out.n, out.d, out.dtype = n, d, np.dtype(dtype)
    return out


class IvfListsFile:
    """The inverted lists of a faiss ``IndexIVFFlat`` (Jégou, Douze & Schmid 2011, "Product
    quantization for nearest neighbor search", IEEE TPAMI 33(1): an inverted file of the rows
    by their nearest k-means centroid) in a scratch file, in the layout of faiss's
    ``OnDiskInvertedLists`` (``faiss/invlists/OnDiskInvertedLists.h``: list after list, each its
    ``size`` codes then its ``size`` int64 ids, capacity equal to size).

    The file is written with plain positioned writes (:meth:`write_codes`, then :meth:`finish`
    for the ids) and read back a list at a time (:meth:`read_list`), not through a map, so it
    costs the process no resident memory beyond the list it reads. Every list holds its rows in
    row order, as faiss's ``index.add`` of the rows in order fills them.

    Args:
        folder: where the file goes (None: the system's temporary folder). On Linux the name is
            removed at once (the file is read through its open descriptor), so nothing is left
            behind however the process ends, and a removed folder does not matter; elsewhere
            the file keeps its name (``ivf-*.lists``) until :meth:`close`.
        assign: int ``(n,)``: the list of each row (``quantizer.assign``; ``-1``: the row is
            not stored, as ``IndexIVF.add`` skips it).
        nlist: the number of lists.
        code_size: bytes per row (``4 * d`` for float32 rows).

    Raises:
        OSError: the file cannot be created or sized.
    """

    def __init__(self, folder: str | Path | None, assign: np.ndarray, nlist: int, code_size: int):
        assign = np.asarray(assign, dtype=np.int64)
        self.nlist, self.code_size = nlist, code_size
        self.assign = assign
        self.sizes = np.bincount(assign[assign >= 0], minlength=nlist).astype(np.uint64)
        per_list = self.sizes * np.uint64(code_size + 8)
        self.offsets = np.concatenate([np.zeros(1, np.uint64), np.cumsum(per_list)[:-1]]).astype(np.uint64)
        self.totsize = int(per_list.sum())
        self._filled = np.zeros(nlist, np.int64)
        fd, name = tempfile.mkstemp(dir=folder, prefix="ivf-", suffix=".lists")
        self.path: str | None = name
        self._fd: int | None = fd
        self._named = True
        try:
            os.ftruncate(fd, self.totsize)
        except OSError:
            self.close()
            raise
        if sys.platform.startswith("linux"):  # read through the descriptor: no name is left
            os.unlink(name)
            self.path, self._named = f"/proc/self/fd/{fd}", False

    def write_codes(self, start: int, codes: np.ndarray) -> None:
        """Write the codes of rows ``start:start + len(codes)`` (a ``(m, code_size)``-byte array,
        e.g. float32 ``(m, d)``) at the end of their lists; the rows must come in order, each once.

        Raises:
            OSError: a write fails.
        """
        codes = np.ascontiguousarray(codes)
        lists = self.assign[start : start + len(codes)]
        order = np.argsort(lists, kind="stable")
        order = order[lists[order] >= 0]
        if not order.size:
            return
        grouped = np.ascontiguousarray(codes[order]).view(np.uint8).reshape(len(order), self.code_size)
        sorted_lists = lists[order]
        cuts = np.flatnonzero(np.diff(sorted_lists)) + 1
        for lo, hi in zip(np.concatenate([[0], cuts]).tolist(), np.concatenate([cuts, [len(order)]]).tolist(), strict=True):
            j = int(sorted_lists[lo])
            at = int(self.offsets[j]) + int(self._filled[j]) * self.code_size
            _pwrite_all(self._fd, grouped[lo:hi], at)
            self._filled[j] += hi - lo

    def finish(self) -> None:
        """Write every list's ids (its rows in row order), once all codes are written.

        Raises:
            ValueError: not every stored row's codes were written.
            OSError: a write fails.
        """
        if not np.array_equal(self._filled, self.sizes.astype(np.int64)):
            raise ValueError("the codes of some rows were not written")
        order = np.argsort(self.assign, kind="stable")
        order = order[self.assign[order] >= 0]
        ends = np.cumsum(self.sizes.astype(np.int64))
        for j in np.flatnonzero(self.sizes).tolist():
            ids = order[ends[j] - int(self.sizes[j]) : ends[j]].astype(np.int64)
            _pwrite_all(self._fd, ids, int(self.offsets[j]) + int(self.sizes[j]) * self.code_size)
        self.assign = None  # written: the lists' sizes and offsets are all the search needs

    def read_list(self, j: int) -> tuple[np.ndarray, np.ndarray]:
        """List ``j`` read with positioned reads (no map: see the module docstring; as many
        reads as it takes, :func:`_read_at`): ``(codes, ids)``, uint8 ``(size, code_size)``
        (float32 rows: ``codes.view(np.float32)``) and int64 ``(size,)``, its rows in row order;
        fresh arrays.

        Raises:
            OSError: a read fails or the file ends first (it was cut).
            ValueError: the ids are not written yet (:meth:`finish`).
        """
        if self.assign is not None:
            raise ValueError("the lists are not finished")
        size = int(self.sizes[j])
        buf = np.empty(size * (self.code_size + 8), np.uint8)  # not zeroed: the reads fill it
        _read_at(self._fd, memoryview(buf), int(self.offsets[j]))
        cut = size * self.code_size
        # the ids copied out, so that they are aligned whatever code_size
        return buf[:cut].reshape(size, self.code_size), buf[cut:].view(np.int64).copy()

    def close(self) -> None:
        """Remove the file (idempotent)."""
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None
        if self.path is not None and self._named:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(self.path)
        self.path = None

    def __enter__(self) -> IvfListsFile:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __del__(self) -> None:
        try:
            self.close()
        except Exception:  # interpreter shutdown
            pass


def _pwrite_all(fd: int, data: np.ndarray, offset: int) -> None:
    """Write the bytes of the contiguous array ``data`` at ``offset`` of ``fd``, all of them.

    Raises:
        OSError: the write fails or writes nothing.
    """
    view = memoryview(np.ascontiguousarray(data)).cast("B")
    while view:
        written = os.pwrite(fd, view, offset)
        if written <= 0:
            raise OSError(f"short write at offset {offset}")
        view, offset = view[written:], offset + written
