"""Dedup step 2, candidates (blocking): the section pairs worth scoring.

Pairs sharing an exact key (:func:`_key_pairs`, linear in a key's mentions), each section's
:data:`K_NEIGHBOURS` nearest neighbours by content cosine, and the nearest titles across languages
(:func:`_title_neighbour_keys`). Neighbours from faiss: exact below ``dedup.ann_min_sections``
rows, an IVF index with on-disk lists above. Pairs are int64 keys ``low * n + high``.
"""

from __future__ import annotations

import contextlib
import logging
import os
import shutil
import sys
import tempfile
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from ..vectors import write_npy
from .embed import SectionEmbeddings

log = logging.getLogger(__package__)  # one logger for every step: "pipeline.dedup"


#: Nearest neighbours per section that become candidate pairs.
K_NEIGHBOURS = 10

#: Nearest other distinct title pairs searched per distinct (English, Chinese) title pair: 3 scored
#: best of 3, 4, 5 and 10 on the 10k bench corpus (bench/README.md).
TITLE_NEIGHBOURS = 3

#: Queries per block of the exact neighbour search (``faiss.knn``: block x n float32 of scores).
SEARCH_BLOCK = 1024

#: IVF lists per square root of the rows, and lists probed per query. faiss's guideline is 4 to 16
#: (wiki "Guidelines to choose an index"); fewer lists keep k-means cheap; recall:
#: ``python -m bench.ann_recall`` (bench/README.md, "Thresholds").
IVF_LISTS_PER_SQRT = 2

IVF_NPROBE = 16

#: Training rows per IVF list (faiss default 256, warns below 39): keeps training ``O(n)``.
IVF_TRAIN_PER_LIST = 64

#: Queries per IVF search call, and rows per block copied into the training sample.
ANN_BLOCK = 8192

#: Rows per shard of the on-disk IVF lists (each shard built in memory, then merged).
IVF_SHARD_ROWS = 32768

#: Seed of faiss's k-means (``ClusteringParameters.seed``) and of the training sample.
IVF_SEED = 1234

#: Candidate pairs converted to Python values at a time in the merge loop (:func:`_pair_stream`).
STREAM_BLOCK = 65536


def ivf_list_count(n: int) -> int:
    """``IVF_LISTS_PER_SQRT * sqrt(n)`` lists, at least 1, at most ``n``."""
    return max(1, min(n, int(IVF_LISTS_PER_SQRT * np.sqrt(n))))


def _scratch_npy(folder: str | Path | None, shape: tuple[int, ...], dtype=np.float32) -> tuple[np.ndarray, Path]:
    """``(matrix, path)``: an empty writable mapped ``.npy`` of ``shape`` in ``folder`` (None: temp);
    the caller removes it."""
    fd, name = tempfile.mkstemp(dir=folder, prefix="dedup-", suffix=".npy")
    os.close(fd)
    return write_npy(name, shape, dtype), Path(name)


def _training_sample(matrix: np.ndarray, limit: int, folder: str | Path | None) -> tuple[np.ndarray, Path | None]:
    """k-means training rows: ``(matrix, None)`` up to ``limit`` rows, else ``limit`` rows drawn
    without replacement (seed :data:`IVF_SEED`) in row order into a scratch ``.npy``: ``(sample, path)``."""
    n = len(matrix)
    if n <= limit:
        return matrix, None
    index = np.sort(np.random.default_rng(IVF_SEED).choice(n, limit, replace=False))
    out, path = _scratch_npy(folder, (limit, matrix.shape[1]))
    for start in range(0, limit, ANN_BLOCK):
        out[start : start + ANN_BLOCK] = matrix[index[start : start + ANN_BLOCK]]
    return out, path


@contextlib.contextmanager
def _stdout_to_stderr() -> Iterator[None]:
    """Redirect C writes to fd 1 to fd 2 in the block (stdout is the run's report)."""
    sys.stdout.flush()
    saved = os.dup(1)
    try:
        os.dup2(2, 1)
        yield
    finally:
        os.dup2(saved, 1)
        os.close(saved)


@contextlib.contextmanager
def _ivf_index(matrix: np.ndarray, folder: str | Path | None) -> Iterator[Any]:
    """A faiss ``IndexIVFFlat`` (inner product) over the unit rows of ``matrix`` (float32 ``(n, d)``),
    for the ``with`` block: :func:`ivf_list_count` lists (Jégou, Douze & Schmid 2011) by faiss
    k-means on :func:`_training_sample`, as ``OnDiskInvertedLists`` in ``folder`` (None: temp)
    merged from :data:`IVF_SHARD_ROWS`-row shards."""
    import faiss
    from faiss.contrib.ondisk import merge_ondisk

    n, d = matrix.shape
    nlist = ivf_list_count(n)
    quantizer = faiss.IndexFlatIP(d)
    index = faiss.IndexIVFFlat(quantizer, d, nlist, faiss.METRIC_INNER_PRODUCT)
    index.cp.seed = IVF_SEED
    index.cp.max_points_per_centroid = IVF_TRAIN_PER_LIST
    sample, sample_path = _training_sample(matrix, nlist * IVF_TRAIN_PER_LIST, folder)
    index.train(np.ascontiguousarray(sample, dtype=np.float32))
    del sample
    if sample_path is not None:
        sample_path.unlink()
    log.debug("dedup: IVF k-means done (%d lists over %d rows)", nlist, n)
    index.nprobe = min(IVF_NPROBE, nlist)
    work = Path(tempfile.mkdtemp(dir=folder, prefix="ivf-"))
    try:
        shards = []
        for start in range(0, n, IVF_SHARD_ROWS):
            shard = faiss.clone_index(index)
            block = np.ascontiguousarray(matrix[start : start + IVF_SHARD_ROWS], dtype=np.float32)
            shard.add_with_ids(block, np.arange(start, start + len(block), dtype=np.int64))
            shards.append(str(work / f"shard-{len(shards)}.index"))
            faiss.write_index(shard, shards[-1])
            del shard, block
        with _stdout_to_stderr():  # faiss prints the list file's size on the C stdout
            merge_ondisk(index, shards, str(work / "lists.ivfdata"))
        for name in shards:
            os.unlink(name)
        yield index
    finally:
        shutil.rmtree(work, ignore_errors=True)


def _neighbour_index(matrix: np.ndarray, k: int, ann_min: int = 20_000, folder: str | Path | None = None) -> np.ndarray:
    """The ``k`` nearest other rows of each row of ``matrix`` (float32 ``(n, d)``) by inner
    product: int ``(n, k)`` (int32 below 2**31 rows), ``-1`` where fewer found. Exact
    (``faiss.knn``) below ``ann_min`` rows, else :func:`_ivf_index` probing :data:`IVF_NPROBE` lists.
    Each query asks ``k + 1`` and drops itself."""
    import faiss

    n = len(matrix)
    out = np.full((n, max(k, 0)), -1, np.int32 if n <= np.iinfo(np.int32).max else np.int64)
    kk = min(k, n - 1)
    if kk <= 0:
        return out
    with _ivf_index(matrix, folder) if n >= ann_min else contextlib.nullcontext() as index:
        block = ANN_BLOCK if index is not None else SEARCH_BLOCK
        base = None if index is not None else np.ascontiguousarray(matrix, dtype=np.float32)
        for start in range(0, n, block):
            x = np.ascontiguousarray(matrix[start : start + block], dtype=np.float32)
            if index is not None:
                found = index.search(x, kk + 1)[1]
            else:
                found = faiss.knn(x, base, kk + 1, metric=faiss.METRIC_INNER_PRODUCT)[1]
            rows = np.arange(start, start + len(x))[:, None]
            keep = (found >= 0) & (found != rows)
            # kept neighbours first, in rank order
            ranked = np.argsort(~keep, axis=1, kind="stable")[:, :kk]
            out[start : start + len(x), :kk] = np.where(np.take_along_axis(keep, ranked, axis=1),
                                                        np.take_along_axis(found, ranked, axis=1), -1)
    return out


def _pair_keys(i: np.ndarray, j: np.ndarray, n: int) -> np.ndarray:
    """The distinct unordered pairs of ``(i[t], j[t])`` (values in ``[0, n)``) as keys
    ``low * n + high``: int64 ``(m,)``, sorted."""
    i, j = np.asarray(i, dtype=np.int64), np.asarray(j, dtype=np.int64)
    return np.unique(np.minimum(i, j) * n + np.maximum(i, j))


def _unique_sorted(keys: np.ndarray) -> np.ndarray:
    """``np.unique(keys)`` of an int array that may be sorted in place (one copy fewer)."""
    keys.sort()
    if keys.size < 2:
        return keys
    new = np.empty(keys.size, dtype=bool)
    new[0] = True
    np.not_equal(keys[1:], keys[:-1], out=new[1:])
    return keys[new]


def _neighbour_keys(emb: np.ndarray, k: int, ann_min: int = 20_000, folder: str | Path | None = None) -> np.ndarray:
    """Pairs with one among the other's ``k`` nearest rows of ``emb`` (:func:`_neighbour_index`),
    as :func:`_pair_keys` keys: int64 ``(m,)``, sorted."""
    n = len(emb)
    k = min(k, n - 1)
    if k <= 0:
        return np.zeros(0, np.int64)
    idx = _neighbour_index(emb, k, ann_min, folder)
    keys = np.empty(int(np.count_nonzero(idx >= 0)), np.int64)
    at = 0
    for start in range(0, n, STREAM_BLOCK):
        block = idx[start : start + STREAM_BLOCK]
        at = _write_keys(keys, at, np.arange(start, start + len(block)), block, n)
    del idx
    return _unique_sorted(keys[:at])


def _write_keys(keys: np.ndarray, at: int, rows: np.ndarray, others: np.ndarray, n: int) -> int:
    """Write the keys of ``(rows[i], others[i, j])`` (``-1`` and self skipped) into ``keys`` from
    ``at``, unsorted; returns the next position."""
    mine = np.broadcast_to(np.asarray(rows, np.int64)[:, None], others.shape)
    use = (others >= 0) & (others != mine)
    mine, other = mine[use], others[use].astype(np.int64)
    part = np.minimum(mine, other) * n + np.maximum(mine, other)
    keys[at : at + len(part)] = part
    return at + len(part)


def _title_neighbour_keys(emb: SectionEmbeddings, k: int, ann_min: int = 20_000,
                          folder: str | Path | None = None) -> np.ndarray:
    """Candidate pairs from titles across languages, as :func:`_pair_keys` keys (int64 ``(m,)``,
    sorted; ``n = len(emb.title_row)``).

    Each distinct ``(English, Chinese)`` title pair (vector: :meth:`SectionEmbeddings.title_sums`)
    is searched once for its ``k`` nearest others; its sections pair with the first section of each
    neighbour and of its own pair (searching sections would find copies of their own title).
    Sections without a title take no part.

    Args:
        k: neighbours per distinct title pair.
        ann_min: distinct pairs from which the IVF index searches.
        folder: scratch folder of the IVF lists (None: temp).
    """
    n = len(emb.title_row)
    titled = np.flatnonzero((emb.title_row >= 0) | (emb.title_zh_row >= 0))
    if titled.size < 2:
        return np.zeros(0, np.int64)
    width = int(max(emb.title_row.max(initial=-1), emb.title_zh_row.max(initial=-1))) + 2
    pair = emb.title_row[titled].astype(np.int64) * width + (emb.title_zh_row[titled].astype(np.int64) + 1)
    _, first, title_of = np.unique(pair, return_index=True, return_inverse=True)
    del pair
    title_of = title_of.reshape(-1)  # numpy 2.0 gives the input's shape
    rep = titled[first]  # each distinct pair's first section (np.unique: first occurrence)
    en, zh = emb.title_row[rep], emb.title_zh_row[rep]
    matrix, path = _scratch_npy(folder, (len(rep), emb.title_vectors.shape[1]))
    for start in range(0, len(rep), ANN_BLOCK):
        emb.title_sums(en[start : start + ANN_BLOCK], zh[start : start + ANN_BLOCK], out=matrix[start : start + ANN_BLOCK])
    try:
        near = _neighbour_index(matrix, k, ann_min, folder)  # (distinct, k) distinct pairs, -1: none
    finally:
        del matrix
        path.unlink()
    found = near >= 0
    near = np.where(found, rep[np.maximum(near, 0)], -1)  # as representatives' rows
    keys = np.empty(int(found.sum(axis=1)[title_of].sum()) + len(titled), np.int64)
    at = 0
    for start in range(0, len(titled), STREAM_BLOCK):
        of = title_of[start : start + STREAM_BLOCK]
        others = np.concatenate([near[of], rep[of][:, None]], axis=1)  # neighbours, then its own pair's
        at = _write_keys(keys, at, titled[start : start + STREAM_BLOCK], others, n)
    return _unique_sorted(keys[:at])


def _key_pairs(members: list[int], doc: Sequence) -> set[tuple[int, int]]:
    """Pairs for one exact-key group, linear in its size: each member with the group's first
    member in another document (a hub); never two members of one document."""
    heads: list[int] = []
    for m in members:
        if len(heads) < 2 and all(doc[h] != doc[m] for h in heads):
            heads.append(m)
    pairs = set()
    for m in members:
        hub = next((h for h in heads if doc[h] != doc[m]), None)
        if hub is not None:
            pairs.add((min(m, hub), max(m, hub)))
    return pairs


def _shared_rows(values: np.ndarray) -> np.ndarray:
    """The rows whose value (int, ``-1``: none) at least one other row shares: int64, ascending."""
    valid = np.flatnonzero(values >= 0)
    if not valid.size:
        return valid
    _, inverse, counts = np.unique(values[valid], return_inverse=True, return_counts=True)
    return valid[counts[inverse.ravel()] > 1]


def _key_groups(values: np.ndarray) -> Iterator[list[int]]:
    """Rows of each value (``-1``: none) shared by two or more rows, ascending lists by value."""
    rows = _shared_rows(values)
    if not rows.size:
        return
    by = rows[np.argsort(values[rows], kind="stable")]
    ranked = values[by]
    bounds = np.flatnonzero(ranked[1:] != ranked[:-1]) + 1
    for members in np.split(by, bounds):
        yield members.tolist()
