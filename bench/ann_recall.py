"""Recall and seconds of dedup's approximate neighbour search for a few IVF settings.

``python -m bench.ann_recall OUT/.pipeline/cache/embeddings.sqlite [--queries 2000] [--seed 1] 4,16,64 2,16,64``

Each setting is ``lists per sqrt(n),probes,training rows a list`` (the module constants
:data:`pipeline.dedup.candidates.IVF_LISTS_PER_SQRT`, :data:`~pipeline.dedup.candidates.IVF_NPROBE` and
:data:`~pipeline.dedup.candidates.IVF_TRAIN_PER_LIST`, set for the call and put back after). The vectors are
every vector of a run's embedding cache (content and titles, each distinct text once, in the
order of their text hash), or any float32 ``(n, d)`` array given to :func:`ann_recall`.

Recall@k (Manning, Raghavan & Schütze 2008, ch. 8) here: the share of each query's exact ``k``
nearest rows by inner product (the row itself left out, as dedup leaves it out) that the
search returns, averaged over queries drawn at random without replacement. A returned row
whose inner product ties the exact ``k``-th counts as found (``by_score``), so copies of one
vector do not count as misses.
"""

from __future__ import annotations

import argparse
import sqlite3
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

import numpy as np

K = 10
#: Most probes a setting may ask for.
MAX_NPROBE = 256


def cache_vectors(path: str | Path) -> np.ndarray:
    """Every vector of an embedding cache (:class:`pipeline.embed_cache.EmbeddingCache`'s SQLite
    file), in the order of their text hash: float32 ``(n, d)``.

    Raises:
        ValueError: the cache holds no vectors, or vectors of different lengths.
        sqlite3.DatabaseError: ``path`` is not an SQLite database.
    """
    with sqlite3.connect(f"file:{Path(path)}?mode=ro", uri=True) as db:
        blobs = [b for (b,) in db.execute("SELECT vector FROM embeddings ORDER BY text_sha256")]
    if not blobs:
        raise ValueError(f"{path}: no vectors")
    if len({len(b) for b in blobs}) != 1:
        raise ValueError(f"{path}: vectors of different lengths (several models?)")
    return np.ascontiguousarray(np.stack([np.frombuffer(b, "<f4") for b in blobs]), dtype=np.float32)


def exact_neighbours(x: np.ndarray, queries: np.ndarray, k: int = K) -> tuple[np.ndarray, np.ndarray]:
    """The exact ``k`` nearest rows of ``x`` (float32 ``(n, d)``) to each row index in ``queries``
    by inner product, the query row left out: ``(ids, kth)``, int ``(q, k)`` (in no order) and
    float32 ``(q,)``, the ``k``-th largest inner product. Needs ``n > k``."""
    ids = np.empty((len(queries), k), np.int64)
    kth = np.empty(len(queries), np.float32)
    for start in range(0, len(queries), 256):  # 256 x n float32 at a time
        q = queries[start : start + 256]
        sims = x[q] @ x.T
        sims[np.arange(len(q)), q] = -np.inf
        part = np.argpartition(-sims, k - 1, axis=1)[:, :k]
        ids[start : start + len(q)] = part
        kth[start : start + len(q)] = np.take_along_axis(sims, part, 1).min(axis=1)
    return ids, kth


def ann_recall(x: np.ndarray, settings: Sequence[tuple[int, int, int]], n_queries: int = 2000,
               seed: int = 1, k: int = K) -> list[dict[str, float]]:
    """Run :func:`pipeline.dedup.candidates._neighbour_index` on ``x`` (float32 ``(n, d)``, rows
    L2-normalized) once per setting ``(lists per sqrt(n), probes, training rows a list)``.

    Returns:
        per setting ``{"lists_per_sqrt", "nprobe", "train_per_list", "nlist", "seconds",
        "recall", "by_score"}`` (``nprobe``: the lists scanned, at most ``nlist``): ``seconds`` of the search (k-means included, wall), ``recall``
        the share of the exact neighbours found, ``by_score`` the share of returned rows at or
        above the exact ``k``-th inner product (less 1e-6), over ``min(n_queries, n)`` queries.

    Raises:
        ValueError: ``x`` has ``k`` rows or fewer, a setting the search refuses (more than
            :data:`MAX_NPROBE` probes over more lists), or a row that is not finite.
    """
    from pipeline.dedup import candidates as dedup

    n = len(x)
    if n <= k:
        raise ValueError(f"{n} rows: more than k = {k} are needed")
    queries = np.random.default_rng(seed).choice(n, min(n_queries, n), replace=False)
    exact, kth = exact_neighbours(x, queries, k)
    saved = dedup.IVF_LISTS_PER_SQRT, dedup.IVF_NPROBE, dedup.IVF_TRAIN_PER_LIST
    out = []
    try:
        for per_sqrt, nprobe, train in settings:
            dedup.IVF_LISTS_PER_SQRT, dedup.IVF_NPROBE, dedup.IVF_TRAIN_PER_LIST = per_sqrt, nprobe, train
            with tempfile.TemporaryDirectory() as folder:
                t0 = time.perf_counter()
                found = dedup._neighbour_index(x, k, ann_min=0, folder=folder)
                seconds = time.perf_counter() - t0
            got = found[queries]
            recall = float(np.mean([len(set(g.tolist()) & set(e.tolist())) / k for g, e in zip(got, exact, strict=True)]))
            scores = np.einsum("qd,qkd->qk", x[queries], x[np.maximum(got, 0)])
            by_score = float(np.mean(((scores >= kth[:, None] - 1e-6) & (got >= 0)).sum(axis=1) / k))
            nlist = dedup.ivf_list_count(n)  # (with this setting's lists per sqrt(n))
            out.append({"lists_per_sqrt": per_sqrt, "nprobe": min(nprobe, nlist), "train_per_list": train,
                        "nlist": nlist, "seconds": round(seconds, 2),
                        "recall": round(recall, 4), "by_score": round(by_score, 4)})
    finally:
        dedup.IVF_LISTS_PER_SQRT, dedup.IVF_NPROBE, dedup.IVF_TRAIN_PER_LIST = saved
    return out


def _setting(text: str) -> tuple[int, int, int]:
    try:
        per_sqrt, nprobe, train = (int(v) for v in text.split(","))
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r}: expected LISTS_PER_SQRT,NPROBE,TRAIN_PER_LIST") from None
    if min(per_sqrt, nprobe, train) < 1:
        raise argparse.ArgumentTypeError(f"{text!r}: each number must be at least 1")
    if nprobe > MAX_NPROBE:
        raise argparse.ArgumentTypeError(f"{text!r}: at most {MAX_NPROBE} probes (pipeline.dedup's search)")
    return per_sqrt, nprobe, train


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.ann_recall", description=__doc__.split("\n")[0])
    parser.add_argument("cache", type=Path, help="a run's OUT/.pipeline/cache/embeddings.sqlite")
    parser.add_argument("settings", type=_setting, nargs="+", help="LISTS_PER_SQRT,NPROBE,TRAIN_PER_LIST")
    parser.add_argument("--queries", type=int, default=2000)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args(argv)
    if args.queries < 1:
        parser.error("--queries must be at least 1")
    if args.seed < 0:
        parser.error("--seed must be 0 or more")
    try:
        x = cache_vectors(args.cache)
        print(f"{len(x)} vectors of {x.shape[1]} dimensions, {min(args.queries, len(x))} queries", flush=True)
        for row in ann_recall(x, args.settings, args.queries, args.seed):
            print(", ".join(f"{k} {v}" for k, v in row.items()), flush=True)
    except (sqlite3.Error, ValueError, TypeError) as err:  # not a cache, or vectors the search refuses
        print(f"error: {args.cache}: {err}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
