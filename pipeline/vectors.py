"""Matrices of vectors kept in scratch ``.npy`` files and read through numpy memory maps: clean
file pages the kernel can reclaim, not anonymous memory (content vectors are ``n * d * 4`` bytes)."""

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
    """A new ``.npy`` of ``shape`` at ``path``, mapped for writing; OSError when not creatable."""
    return open_memmap(str(path), mode="w+", dtype=np.dtype(dtype), shape=shape)


def read_npy(path: str | Path) -> np.memmap:
    """The ``.npy`` file at ``path``, mapped read-only (pickled by :func:`portable` as its path)."""
    return np.load(str(path), mmap_mode="r")


def portable(matrix: np.ndarray) -> np.ndarray | tuple[str, str]:
    """``("npy", path)`` for a whole mapped ``.npy``, anything else as is; :func:`restored` reverses it."""
    if isinstance(matrix, np.memmap) and isinstance(matrix.filename, str) and matrix.filename.endswith(".npy"):
        return ("npy", matrix.filename)
    return matrix


def restored(value: np.ndarray | tuple[str, str]) -> np.ndarray:
    """The matrix of a :func:`portable` value."""
    if isinstance(value, tuple):
        return read_npy(value[1])
    return value


class VectorFile:
    """An ``(n, d)`` matrix appended chunk by chunk (a ``.npy`` per chunk in its own scratch
    folder under ``folder``) and read as one memory map (:meth:`matrix`, :meth:`permuted`), bit for
    bit. ``d`` when known; ``dtype`` default float32. OSError when files cannot be written."""

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
        """Append an ``(m, d)`` array (as ``dtype``). ValueError when not 2-D, wrong width, or
        after :meth:`matrix`."""
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
        """All rows ``(n, d)`` as one read-only map (parts joined on the first call)."""
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
        """A read-only map of a new ``.npy`` in ``folder`` whose row ``k`` is row ``order[k]``.
        ValueError unless ``order`` permutes the ``n`` rows."""
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
