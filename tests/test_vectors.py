"""The on-disk vector matrix (pipeline.vectors.VectorFile) that dedup reads the content vectors from."""

from __future__ import annotations

import os

import numpy as np
import pytest

from pipeline import vectors
from pipeline.vectors import VectorFile


def _matrix(n: int, d: int, seed: int = 0) -> np.ndarray:
    return np.random.default_rng(seed).standard_normal((n, d)).astype(np.float32)


def test_rows_and_take_give_back_what_was_appended_bit_for_bit(tmp_path) -> None:
    a, b = _matrix(70, 8, 1), _matrix(30, 8, 2)
    whole = np.concatenate([a, b])
    f = VectorFile(tmp_path)
    assert f.shape == (0, 0) and len(f) == 0
    f.append(a)
    f.append(np.zeros((0, 3), np.float32))  # an empty batch adds nothing, whatever its width
    f.append(b)
    assert f.shape == (100, 8) and len(f) == 100
    assert list(tmp_path.iterdir()) == []  # an unnamed temporary file
    np.testing.assert_array_equal(f.read(), whole)
    np.testing.assert_array_equal(f.rows(65, 75), whole[65:75])
    np.testing.assert_array_equal(f.rows(95, 500), whole[95:])  # clipped like a slice
    assert f.rows(120, 130).shape == (0, 8)
    index = np.array([99, 0, 5, 5, -1, 42])
    np.testing.assert_array_equal(f.take(index), whole[index])  # any order, repeats, negative
    assert f.take(np.array([], np.int64)).shape == (0, 8)
    f.append(a[:3])  # a take after an append reads the new rows too
    np.testing.assert_array_equal(f.take(np.array([100, 102])), a[[0, 2]])
    with pytest.raises(IndexError):
        f.take(np.array([103]))
    out = f.take(np.array([1, 2]))
    out[:] = 0  # a fresh, writable array: the file is unchanged
    np.testing.assert_array_equal(f.rows(1, 3), whole[1:3])
    f.close()
    f.close()  # idempotent


def _read_in_another_process(conn, f: VectorFile) -> None:
    """Spawned by the test below: sends back what ``f`` reads there, then what an append says."""
    try:
        conn.send((f.shape, f.take(np.array([3, 0, 3, -1])), f.rows(1, 4), f.read()))
        try:
            f.append(np.zeros((1, 4), np.float32))
            conn.send("appended")
        except ValueError as exc:
            conn.send(str(exc))
    finally:
        conn.close()


def test_a_vector_file_handed_to_a_spawned_process_reads_the_same_rows(tmp_path) -> None:
    """Dedup's score helper (pipeline.score_helper) gets the content vectors as the open file:
    the same rows there, bit for bit, after this process has closed its own, and read-only."""
    import multiprocessing

    whole = _matrix(9, 4, 3)
    f = VectorFile(tmp_path)
    f.append(whole)
    ctx = multiprocessing.get_context("spawn")
    here, there = ctx.Pipe()
    process = ctx.Process(target=_read_in_another_process, args=(there, f))
    process.start()
    there.close()
    f.close()  # the other process holds the file through its own descriptor
    try:
        shape, taken, rows, read = here.recv()
        refused = here.recv()
    finally:
        process.join(60)
    assert process.exitcode == 0
    assert shape == (9, 4)
    np.testing.assert_array_equal(taken, whole[[3, 0, 3, -1]])
    np.testing.assert_array_equal(rows, whole[1:4])
    np.testing.assert_array_equal(read, whole)
    assert "read-only" in refused


def test_rows_come_back_whole_from_short_positioned_reads(tmp_path, monkeypatch) -> None:
    """Linux gives at most about 2 GiB per read: rows reads on until it has them all."""
    whole = _matrix(50, 6, 4)
    f = VectorFile(tmp_path)
    f.append(whole)
    real = vectors.os.preadv
    calls = []

    def short(fd, buffers, offset):
        calls.append(offset)
        return real(fd, [memoryview(buffers[0])[:7]], offset)  # 7 bytes at most per call

    monkeypatch.setattr(vectors.os, "preadv", short)
    np.testing.assert_array_equal(f.rows(3, 41), whole[3:41])
    assert len(calls) == -(-38 * 6 * 4 // 7)


def test_appends_of_another_width_or_shape_are_refused(tmp_path) -> None:
    f = VectorFile(tmp_path)
    f.append(_matrix(4, 6))
    with pytest.raises(ValueError, match="width 6"):
        f.append(_matrix(4, 5))
    with pytest.raises(ValueError, match=r"\(m, d\)"):
        f.append(np.zeros(6, np.float32))
    assert f.shape == (4, 6)
    empty = VectorFile(tmp_path, d=6)
    with pytest.raises(IndexError):
        empty.take(np.array([0]))
    assert empty.take(np.array([], np.int64)).shape == (0, 6)
    with pytest.raises(FileNotFoundError):
        VectorFile(tmp_path / "missing")


def test_permuted_copies_rows_in_the_given_order(tmp_path, monkeypatch) -> None:
    monkeypatch.setattr(vectors, "COPY_BLOCK", 7)  # several blocks
    m = _matrix(40, 5).astype(np.float64)
    f = VectorFile(tmp_path, dtype=np.float64)
    f.append(m)
    order = np.random.default_rng(3).permutation(40)
    g = f.permuted(order, tmp_path)
    assert g.dtype == np.float64 and g.shape == (40, 5)
    np.testing.assert_array_equal(g.read(), m[order])
    np.testing.assert_array_equal(f.read(), m)  # the source is unchanged
    with pytest.raises(ValueError, match="permutation"):
        f.permuted(order[:-1])
    with pytest.raises(ValueError, match="permutation"):
        f.permuted(np.zeros(40, np.int64))  # repeats: not a permutation


def test_take_refuses_what_matrix_indexing_would_not_mean(tmp_path) -> None:
    f = VectorFile(tmp_path)
    f.append(_matrix(5, 3))
    for bad in (np.array([1.7]), np.array([True, False, True, False, True]), np.array(["1"])):
        with pytest.raises(TypeError, match="integers"):
            f.take(bad)
    with pytest.raises(IndexError):
        f.take(np.array([2**64 - 1], np.uint64))  # no wrap-around to -1
    with pytest.raises(IndexError):
        f.take(np.array([-6]))
    assert f.take(np.array([], np.float64)).shape == (0, 3)
    empty_width = VectorFile(tmp_path)
    empty_width.append(np.zeros((4, 0), np.float32))
    assert empty_width.take(np.array([3])).shape == (1, 0)
    with pytest.raises(IndexError):
        empty_width.take(np.array([100]))
    assert empty_width.permuted(np.arange(4)[::-1]).shape == (4, 0)


def test_take_reads_scattered_rows_and_runs(tmp_path) -> None:
    m = _matrix(300, 6, 4)
    f = VectorFile(tmp_path)
    f.append(m)
    rng = np.random.default_rng(1)
    for index in (rng.integers(-300, 300, size=500), np.arange(40, 90), np.array([7, 7, 8, -1, 299, 0]),
                  rng.permutation(300)[:3].astype(np.uint16), np.array([[3, 4], [299, 3]])):
        np.testing.assert_array_equal(f.take(index), m[index])


def _faiss_lists(lists_file: vectors.IvfListsFile):
    """faiss's own ``OnDiskInvertedLists`` over the file, read-only, at its sizes."""
    import faiss

    lists = faiss.OnDiskInvertedLists(lists_file.nlist, lists_file.code_size, lists_file.path)
    lists.set_all_lists_sizes(faiss.swig_ptr(lists_file.sizes))
    lists.totsize = lists_file.totsize
    lists.read_only = True
    lists.prefetch_nthread = 0
    lists.do_mmap()
    return lists


def test_ivf_lists_file_has_faiss_on_disk_layout(tmp_path) -> None:
    """Each list holds its rows in row order (codes, then ids), as ``index.add`` of the rows in
    order would; ``read_list`` gives them back, and so does faiss's own ``OnDiskInvertedLists``."""
    import faiss

    m = _matrix(60, 4, 9)
    assign = np.random.default_rng(2).integers(-1, 5, size=60)  # -1: not stored, as IndexIVF.add skips it
    assign[:3] = 2  # list 0..4; list 4 may be empty
    with vectors.IvfListsFile(tmp_path, assign, 6, 16) as lists_file:
        assert list(tmp_path.iterdir()) == []  # Linux: read through its descriptor, no name left behind
        for start in range(0, 60, 13):  # blocks of rows, in order
            lists_file.write_codes(start, m[start : start + 13])
        with pytest.raises(ValueError, match="not finished"):
            lists_file.read_list(0)
        lists_file.finish()
        lists = _faiss_lists(lists_file)
        for j in range(6):
            rows = np.flatnonzero(assign == j)
            codes, ids = lists_file.read_list(j)
            assert codes.shape == (len(rows), 16) and ids.dtype == np.int64
            np.testing.assert_array_equal(ids, rows)
            np.testing.assert_array_equal(codes.view(np.float32), m[rows])
            assert lists.list_size(j) == len(rows)
            if len(rows):
                np.testing.assert_array_equal(faiss.rev_swig_ptr(lists.get_ids(j), len(rows)), rows)
                np.testing.assert_array_equal(
                    faiss.rev_swig_ptr(lists.get_codes(j), len(rows) * 16).view(np.float32).reshape(-1, 4), m[rows])
        del lists
    assert list(tmp_path.iterdir()) == []  # closed: the file is gone


def test_ivf_lists_file_outlives_its_folder(tmp_path) -> None:
    """On Linux the file is read through its open descriptor (no name), so removing the folder
    during the search (a cleaner, a user) does not break the run."""
    import shutil
    import sys

    folder = tmp_path / "scratch"
    folder.mkdir()
    m = _matrix(8, 2)
    lists_file = vectors.IvfListsFile(folder, np.zeros(8, np.int64), 1, 8)
    lists_file.write_codes(0, m)
    lists_file.finish()
    if sys.platform.startswith("linux"):
        shutil.rmtree(folder)
    codes, ids = lists_file.read_list(0)
    np.testing.assert_array_equal(ids, np.arange(8))
    np.testing.assert_array_equal(codes.view(np.float32), m)
    lists_file.close()


def test_ivf_lists_file_read_of_a_cut_file_is_an_error(tmp_path) -> None:
    """A list read that comes back short (the scratch file cut under the run) raises, rather
    than handing out rows of zeros."""
    lists_file = vectors.IvfListsFile(tmp_path, np.array([0, 1, 1, 0]), 2, 8)
    lists_file.write_codes(0, _matrix(4, 2))
    lists_file.finish()
    os.ftruncate(lists_file._fd, lists_file.totsize - 4)
    assert lists_file.read_list(0)[1].tolist() == [0, 3]
    with pytest.raises(OSError, match="short read"):
        lists_file.read_list(1)
    lists_file.close()


def test_ivf_lists_file_refuses_ids_before_all_codes(tmp_path) -> None:
    assign = np.array([0, 1, 1, 0])
    lists_file = vectors.IvfListsFile(tmp_path, assign, 2, 8)
    lists_file.write_codes(0, _matrix(2, 2))
    with pytest.raises(ValueError, match="not written"):
        lists_file.finish()
    lists_file.close()
    lists_file.close()  # idempotent
    with pytest.raises(FileNotFoundError):
        vectors.IvfListsFile(tmp_path / "missing", assign, 2, 8)
