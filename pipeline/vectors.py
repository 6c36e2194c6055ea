"""Matrices of vectors kept in scratch ``.npy`` files and read through numpy memory maps.

Dedup compares every section's content vector (``n * d * 4`` bytes: 1.2 GB for 600,000 sections
of 512 dimensions) but reads only blocks of rows or the rows of a batch of pairs. The vectors
are appended chunk by chunk (:class:`VectorFile`) and read back as one read-only
``numpy.memmap`` (:func:`numpy.lib.format.open_memmap`): the pages a read touches are clean file
pages, which the kernel reclaims under pressure, not the process's anonymous memory.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

import numpy as np
from numpy.lib.format import open_memmap

#: Rows per block when rows are copied from one file to another.
COPY_BLOCK = 16384


def write_npy(path: str | Path, shape: tuple[int, ...], dtype: np.dtype | type = np.float32) -> np.memmap:
    """A new ``.npy`` file of ``shape`` at ``path``, mapped for writing (``open_memmap`` ``w+``).

    Raises:
        OSError: the file cannot be created or sized.
    """
    return open_memmap(str(path), mode="w+", dtype=np.dtype(dtype), shape=shape)


def read_npy(path: str | Path) -> np.memmap:
    """The ``.npy`` file at ``path``, mapped read-only (pickled by :func:`portable` as its path)."""
    return np.load(str(path), mmap_mode="r")


def portable(matrix: np.ndarray) -> np.ndarray | tuple[str, str]:
    """What another process needs to read ``matrix``: a whole mapped ``.npy`` file as
    ``("npy", path)`` (not its bytes), anything else as it is; :func:`restored` reverses it."""
    if isinstance(matrix, np.memmap) and isinstance(matrix.filename, str) and matrix.filename.endswith(".npy"):
        return ("npy", matrix.filename)
    return matrix


def restored(value: np.ndarray | tuple[str, str]) -> np.ndarray:
    """The matrix of a :func:`portable` value."""
    if isinstance(value, tuple):
        return read_npy(value[1])
    return value


class VectorFile:
    """An ``(n, d)`` matrix appended chunk by chunk (:meth:`append`, one ``.npy`` file a chunk,
    in a scratch folder of its own) and read as one memory-mapped ``.npy`` (:meth:`matrix`,
    :meth:`permuted`). Reads are bit for bit the rows appended.

    Args:
        folder: where its scratch folder goes (None: the system's temporary folder).
        d: columns, when known before the first append.
        dtype: the element type (default float32).

    Raises:
        OSError: the folder or a file cannot be created or written.
    """

    def __init__(self, folder: str | Path | None = None, d: int | None = None, dtype: np.dtype | type = np.float32):
        self.dir = Path(tempfile.mkdtemp(dir=folder, prefix="vectors-"))
        self.n = 0
        self.d = d
        self.dtype = np.dtype(dtype)
        self._parts: list[Path] = []
        self._joined: np.memmap | None = None

    @property
    def shape(self) -> tuple[int, int]:
        """``(n, d)`` (``d`` 0 before anything is appended)."""
        return self.n, self.d or 0

    def __len__(self) -> int:
        return self.n

    def append(self, rows: np.ndarray) -> None:
        """Add the rows of an ``(m, d)`` array after the others (converted to ``dtype``).

        Raises:
            ValueError: ``rows`` is not 2-D, its width is not ``d``, or :meth:`matrix` was read.
        """
        if self._joined is not None:
            raise ValueError("rows cannot be appended once the matrix is read")
        rows = np.asarray(rows)
        if rows.ndim != 2:
            raise ValueError(f"expected an (m, d) array, got shape {rows.shape}")
        if not len(rows):
            return
        if self.d is None:
            self.d = rows.shape[1]
        elif rows.shape[1] != self.d:
            raise ValueError(f"expected rows of width {self.d}, got {rows.shape[1]}")
        path = self.dir / f"part-{len(self._parts):06d}.npy"
        np.save(path, np.ascontiguousarray(rows, dtype=self.dtype))
        self._parts.append(path)
        self.n += len(rows)

    def matrix(self) -> np.ndarray:
        """All rows, ``(n, d)``, as one read-only memory map (the parts are joined into one file
        on the first call, a block at a time, and removed)."""
        if self._joined is None:
            path = self.dir / "matrix.npy"
            out = write_npy(path, self.shape, self.dtype)
            at = 0
            for part in self._parts:
                rows = read_npy(part)
                for start in range(0, len(rows), COPY_BLOCK):
                    block = rows[start : start + COPY_BLOCK]
                    out[at : at + len(block)] = block
                    at += len(block)
                del rows
                part.unlink()
            out.flush()
            del out
            self._parts = []
            self._joined = read_npy(path)
        return self._joined

    def permuted(self, order: np.ndarray, folder: str | Path) -> np.ndarray:
        """A new ``.npy`` file in ``folder`` whose row ``k`` is row ``order[k]`` of this matrix,
        written :data:`COPY_BLOCK` rows at a time: its read-only memory map (the file stays
        until ``folder`` is removed).

        Raises:
            ValueError: ``order`` is not a permutation of the ``n`` rows.
        """
        order = np.asarray(order)
        if len(order) != self.n or not np.array_equal(np.sort(order), np.arange(self.n)):
            raise ValueError(f"order must be a permutation of the {self.n} rows ({len(order)} entries given)")
        source = self.matrix()
        fd, name = tempfile.mkstemp(dir=folder, prefix="vectors-", suffix=".npy")
        os.close(fd)  # (open_memmap writes it again)
        out = write_npy(name, self.shape, self.dtype)
        for start in range(0, self.n, COPY_BLOCK):
            index = order[start : start + COPY_BLOCK]
            out[start : start + len(index)] = source[index]
        out.flush()
        del out
        return read_npy(name)

    def close(self) -> None:
        """Remove the scratch folder (idempotent); maps already handed out stay readable."""
        self._joined = None
        shutil.rmtree(self.dir, ignore_errors=True)
