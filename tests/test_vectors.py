"""pipeline.vectors: matrices appended chunk by chunk to .npy files and read as memory maps."""

from __future__ import annotations

import pickle

import numpy as np
import pytest

from pipeline.vectors import VectorFile, portable, read_npy, restored


def test_matrix_gives_back_what_was_appended_bit_for_bit(tmp_path) -> None:
    rng = np.random.default_rng(0)
    parts = [rng.normal(size=(m, 5)).astype(np.float32) for m in (3, 0, 7, 1)]
    store = VectorFile(tmp_path)
    for p in parts:
        store.append(p)
    assert store.shape == (11, 5) and len(store) == 11
    matrix = store.matrix()
    assert isinstance(matrix, np.memmap) and not matrix.flags.writeable
    np.testing.assert_array_equal(matrix, np.concatenate(parts))
    assert store.matrix() is matrix  # joined once
    with pytest.raises(ValueError, match="once the matrix is read"):
        store.append(parts[0])
    store.close()
    np.testing.assert_array_equal(matrix[2], parts[0][2])  # a map handed out stays readable
    assert list(tmp_path.iterdir()) == []


def test_appends_of_another_width_or_shape_are_refused(tmp_path) -> None:
    store = VectorFile(tmp_path)
    store.append(np.zeros((2, 4), np.float32))
    with pytest.raises(ValueError, match="width 4"):
        store.append(np.zeros((2, 3), np.float32))
    with pytest.raises(ValueError, match=r"\(m, d\) array"):
        store.append(np.zeros(4, np.float32))
    assert store.shape == (2, 4)
    store.close()


def test_permuted_copies_rows_in_the_given_order(tmp_path, monkeypatch) -> None:
    import pipeline.vectors as vectors

    monkeypatch.setattr(vectors, "COPY_BLOCK", 3)
    x = np.arange(40, dtype=np.float32).reshape(10, 4)
    store = VectorFile(tmp_path)
    store.append(x[:6])
    store.append(x[6:])
    order = np.random.default_rng(1).permutation(10)
    got = store.permuted(order, tmp_path)
    np.testing.assert_array_equal(got, x[order])
    with pytest.raises(ValueError, match="permutation of the 10 rows"):
        store.permuted(np.zeros(10, np.int64), tmp_path)
    store.close()


def test_a_mapped_matrix_goes_to_another_process_as_its_path(tmp_path) -> None:
    store = VectorFile(tmp_path)
    store.append(np.eye(3, dtype=np.float32))
    matrix = store.matrix()
    value = portable(matrix)
    assert value == ("npy", matrix.filename)
    again = restored(pickle.loads(pickle.dumps(value)))
    np.testing.assert_array_equal(again, np.eye(3))
    in_memory = np.ones((2, 2))
    assert portable(in_memory) is in_memory and restored(in_memory) is in_memory
    np.testing.assert_array_equal(read_npy(matrix.filename), matrix)
    store.close()
