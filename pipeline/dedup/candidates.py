"""Dedup step 2, candidates (blocking): the section pairs worth scoring.

Pairs sharing an exact key (arXiv id, folded title; :func:`_key_pairs`, linear in a key's
mentions), each section's :data:`K_NEIGHBOURS` nearest neighbours by content cosine, and the
nearest titles across languages (:func:`_title_neighbour_keys`). Neighbours come from faiss:
an exact search below ``dedup.ann_min_sections`` rows, an IVF index with on-disk lists from
there (:func:`_neighbour_index`). Pairs are int64 keys ``low * n + high`` (:func:`_pair_keys`).
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

#: Nearest other distinct title pairs per distinct (English, Chinese) title pair whose first
#: sections become candidates of its sections (:func:`_title_neighbour_keys`): 3 scored best of 3,
#: 4, 5 and 10 on the 10k bench corpus (bench/README.md).
TITLE_NEIGHBOURS = 3

#: Queries per block of the exact neighbour search (``faiss.knn``: block x n float32 of scores).
SEARCH_BLOCK = 1024

#: IVF lists per square root of the number of rows, and lists scanned per query. faiss's
#: guideline (wiki "Guidelines to choose an index") is 4*sqrt(n) to 16*sqrt(n) lists; fewer,
#: longer lists keep the k-means (``nlist**2``) cheap; recall against the exact search is
#: measured by ``python -m bench.ann_recall`` (bench/README.md, "Thresholds").
IVF_LISTS_PER_SQRT = 2

IVF_NPROBE = 16

#: Training rows per IVF list (faiss ``ClusteringParameters.max_points_per_centroid``, default
#: 256; faiss warns below 39): a sample of ``IVF_TRAIN_PER_LIST * nlist`` rows keeps the training
#: ``O(n)`` instead of ``n^1.5``. Below that many rows, every row trains.
IVF_TRAIN_PER_LIST = 64

#: Queries per search call of the IVF index, and rows per block copied into the training sample
#: (16 MiB of float32 at ``d = 512``).
ANN_BLOCK = 8192

#: Rows per shard of the on-disk IVF lists (:func:`_ivf_index`: each shard's lists are built in
#: memory, 64 MiB at ``d = 512``, then merged into the file).
IVF_SHARD_ROWS = 32768

#: Seed of faiss's k-means (``ClusteringParameters.seed``) and of the training sample.
IVF_SEED = 1234

#: Candidate pairs converted to Python values at a time in the merge loop (:func:`_pair_stream`).
STREAM_BLOCK = 65536


def ivf_list_count(n: int) -> int:
    """The IVF lists of :func:`_ivf_index` over ``n`` rows: ``IVF_LISTS_PER_SQRT * sqrt(n)``, at
    least 1 and at most ``n`` (the k-means needs a row per list)."""
    return max(1, min(n, int(IVF_LISTS_PER_SQRT * np.sqrt(n))))


def _scratch_npy(folder: str | Path | None, shape: tuple[int, ...], dtype=np.float32) -> tuple[np.ndarray, Path]:
    """An empty matrix of ``shape`` in a new ``.npy`` file in ``folder`` (None: the system's
    temporary folder), mapped for writing, and its path (the caller removes it)."""
    fd, name = tempfile.mkstemp(dir=folder, prefix="dedup-", suffix=".npy")
    os.close(fd)
    return write_npy(name, shape, dtype), Path(name)


def _training_sample(matrix: np.ndarray, limit: int, folder: str | Path | None) -> tuple[np.ndarray, Path | None]:
    """The k-means training rows of :func:`_ivf_index`: all of ``matrix`` up to ``limit`` rows
    (``(matrix, None)``), else ``limit`` rows drawn without replacement (seed :data:`IVF_SEED`),
    in row order, copied :data:`ANN_BLOCK` at a time into a scratch ``.npy`` in ``folder``
    (``(sample, path)``), so faiss trains on them without a copy of its own."""
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
    """Send what C code writes to file descriptor 1 to descriptor 2 for the ``with`` block (the
    run's standard output is for its own report)."""
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
    """A faiss ``IndexIVFFlat`` (inner product) over the rows of ``matrix`` (float32 ``(n, d)``,
    L2-normalized), for the ``with`` block.

    ``nlist = IVF_LISTS_PER_SQRT * sqrt(n)`` lists (Jégou, Douze & Schmid 2011) from faiss's own
    k-means (seed :data:`IVF_SEED`) on :data:`IVF_TRAIN_PER_LIST` rows per list
    (:func:`_training_sample`). The lists are faiss ``OnDiskInvertedLists`` in ``folder``
    (``merge_ondisk`` of shards of :data:`IVF_SHARD_ROWS` rows), read through a memory map.
    ``folder`` None: the system's temporary folder.
    """
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
    """The ``k`` nearest other rows of every row of ``matrix`` (float32 ``(n, d)``, an array or a
    memory map) by inner product: an int array ``(n, k)`` of row indices, ``-1`` where fewer were
    found (``k >= n``, a row with NaN values); int32 up to 2**31 - 1 rows, int64 beyond.

    Exact below ``ann_min`` rows (``faiss.knn``, the brute-force search of ``IndexFlatIP``, in
    blocks of :data:`SEARCH_BLOCK` queries); from there the IVF index of :func:`_ivf_index`
    (lists in ``folder``), probing :data:`IVF_NPROBE` lists a query. Each query asks for
    ``k + 1`` rows and drops itself (among exact ties the row itself may be left out: then the
    first ``k`` others are kept).
    """
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
            # per row, the kept neighbours first, in rank order (a stable sort of the drop flags)
            ranked = np.argsort(~keep, axis=1, kind="stable")[:, :kk]
            out[start : start + len(x), :kk] = np.where(np.take_along_axis(keep, ranked, axis=1),
                                                        np.take_along_axis(found, ranked, axis=1), -1)
    return out


def _pair_keys(i: np.ndarray, j: np.ndarray, n: int) -> np.ndarray:
    """The distinct unordered pairs among ``(i[t], j[t])`` (int arrays of equal length, values in
    ``[0, n)``) as keys ``low * n + high``: int64 ``(m,)``, sorted."""
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
    """Pairs ``(i, j)``, ``i < j``, with ``j`` among the ``k`` nearest neighbours of ``i`` (by dot
    product of the rows of ``emb``, ``(n, d)``) or vice versa, as :func:`_pair_keys` keys: int64
    ``(m,)``, sorted, from :func:`_neighbour_index` (exact below ``ann_min``
    rows, the IVF index from there, its lists in ``folder``); the pairs are collected as arrays
    (one ``unique`` over ``n * k`` keys), not a Python set."""
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
    """Write the :func:`_pair_keys` keys of ``(rows[i], others[i, j])`` (``rows`` int ``(b,)``,
    ``others`` int ``(b, m)``; ``-1`` and a row's own index skipped) into ``keys`` from
    position ``at`` (unsorted, possibly repeated); return the position after them."""
    mine = np.broadcast_to(np.asarray(rows, np.int64)[:, None], others.shape)
    use = (others >= 0) & (others != mine)
    mine, other = mine[use], others[use].astype(np.int64)
    part = np.minimum(mine, other) * n + np.maximum(mine, other)
    keys[at : at + len(part)] = part
    return at + len(part)


def _title_neighbour_keys(emb: SectionEmbeddings, k: int, ann_min: int = 20_000,
                          folder: str | Path | None = None) -> np.ndarray:
    """Candidate pairs from the sections' titles, across languages, as :func:`_pair_keys` keys (int64
    ``(m,)``, sorted; ``n = len(emb.title_row)``).

    The search runs over the distinct ``(English, Chinese)`` title pairs (a section's title vector
    is the normalized sum of its two title vectors, :meth:`SectionEmbeddings.title_sums`): each is
    searched once for its ``k`` nearest other pairs (:func:`_neighbour_index`), and every section
    with it becomes a candidate with the representative (first section) of each neighbour and of its
    own pair. Searching the sections instead would fill each section's neighbours with copies of its
    own title. Sections without a title take no part.

    Args:
        emb: the sections' embeddings (``title_row``, ``title_zh_row``, ``title_vectors`` are read).
        k: neighbours per distinct title pair (:data:`TITLE_NEIGHBOURS` in clustering).
        ann_min: distinct pairs from which the IVF index searches (``dedup.ann_min_sections``).
        folder: scratch folder of the IVF index's lists (None: the system's temporary folder).
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
    """Candidate pairs for one exact-key group, linear in its size: each member with the first
    member of the group that stands in another document (a hub), never two members of one
    document (they cannot link). All pairs would be quadratic: a key shared by thousands of
    mentions (one paper repeated down a long page) made millions of pairs."""
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
    """The rows of each value (int, ``-1``: none) that two or more rows share, as ascending lists,
    in ascending order of the value."""
    rows = _shared_rows(values)
    if not rows.size:
        return
    by = rows[np.argsort(values[rows], kind="stable")]
    ranked = values[by]
    bounds = np.flatnonzero(ranked[1:] != ranked[:-1]) + 1
    for members in np.split(by, bounds):
        yield members.tolist()
