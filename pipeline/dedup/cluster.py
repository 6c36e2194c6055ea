"""Dedup step 4, cluster: greedy average linkage with cannot-links over the visited pairs.

Candidate pairs are scored and visited by descending score; two clusters merge when no cross pair
is cannot-linked and either the pair shares an exact key or the average score of their sampled
cross pairs reaches ``dedup.match_threshold`` (:func:`_merge_visits`). A section's match score is
its mean score to the first members of its cluster (:func:`_join_scores`).
"""

from __future__ import annotations

import itertools
import logging
import math
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path

import numpy as np
import pandas as pd

from ..config import Config
from ..executor import ProcessPool, given
from ..memory import release_free_memory
from ..vectors import read_npy
from .candidates import (
    K_NEIGHBOURS,
    STREAM_BLOCK,
    TITLE_NEIGHBOURS,
    _key_groups,
    _key_pairs,
    _neighbour_keys,
    _pair_keys,
    _scratch_npy,
    _shared_rows,
    _title_neighbour_keys,
)
from .embed import SectionEmbeddings
from .score import PairScorer, _first_appearance, _int_array, _visited_pairs
from .titles import _chinese_pair_similarity, _english_conflict, _english_ratio, _word_index

log = logging.getLogger(__package__)  # one logger for every step: "pipeline.dedup"


#: Clustering's steps in run order, each with its percent share of clustering's time (50k bench
#: run, bench/README.md): the progress bar's advance per step.
CLUSTERING_STEPS = {"content_neighbours": 50, "title_neighbours": 4, "key_pairs": 1, "scoring": 20,
                    "merging": 13, "join_scores": 5, "fusion": 7}

#: A section's ``match_score`` averages at most this many other members (the first in section
#: order): linear, not quadratic, in a paper's mentions.
JOIN_SCORE_SAMPLE = 64

#: Pairs :func:`_join_scores` scores at a time (about 40 bytes a pair with their indexes).
JOIN_BATCH = 1 << 18

#: Members per side whose cross pairs a merge check averages; larger clusters use this many evenly
#: spaced (deterministic). Chosen against the exact average (bench/README.md, "Thresholds").
AVERAGE_SAMPLE = 96

#: Visits the merge loop scores together, and the most cross pairs it gathers for them.
MERGE_BLOCK = 4096

MERGE_PAIRS = 1 << 20

#: How far below the threshold an average of upper bounds must be to fail without its exact
#: average: a thousand times float64 summation error (``m * 2**-53``).
BOUND_MARGIN = 1e-9

#: From this many sections, with two or more workers and file-backed vectors, bulk pairs are
#: scored on two processes (:class:`SharedScores`); below, start-up costs what it saves.
SHARED_SCORES_MIN_SECTIONS = 20_000
#: Pairs below which a :class:`SharedScores` call is scored here alone.
MIN_SHARED_PAIRS = 4096


def _scores_of(pairs: tuple[np.ndarray, np.ndarray, float | None], scorer: PairScorer) -> np.ndarray:
    """In the helper process: ``scorer.scores`` of ``(i, j, exact_from)``."""
    i, j, exact_from = pairs
    return scorer.scores(i, j, exact_from=exact_from)


class SharedScores:
    """:meth:`PairScorer.scores` shared with a second process: the helper scores the first half of
    each call of at least :data:`MIN_SHARED_PAIRS` pairs; the same floats, on two cores.

    The helper (a one-process :class:`pipeline.executor.ProcessPool`) starts at once with the scorer
    pickled once (vectors as paths, :func:`pipeline.vectors.portable`). A helper that fails is
    dropped with a warning and its half scored here. A context manager.
    """

    def __init__(self, scorer: PairScorer):
        self.scorer = scorer
        self._pool: ProcessPool | None = ProcessPool(1, given, scorer)
        try:
            self._pool.start(wait=False)
        except Exception as exc:  # no second process (a pickling error, no resources)
            self._drop(exc)

    @property
    def alive(self) -> bool:
        """Whether calls are shared with the helper (it started and has not failed)."""
        return self._pool is not None

    def __call__(self, i: np.ndarray, j: np.ndarray, exact_from: float | None = None) -> np.ndarray:
        """``scorer.scores(i, j, exact_from=exact_from)``: float64 ``(len(i),)``."""
        i, j = np.asarray(i, dtype=np.int64), np.asarray(j, dtype=np.int64)
        if self._pool is None or len(i) < MIN_SHARED_PAIRS:
            return self.scorer.scores(i, j, exact_from=exact_from)
        half = len(i) // 2
        try:
            there = self._pool.submit(_scores_of, (i[:half], j[:half], exact_from))
        except Exception as exc:  # it died since the last call
            self._drop(exc)
            return self.scorer.scores(i, j, exact_from=exact_from)
        rest = self.scorer.scores(i[half:], j[half:], exact_from=exact_from)
        try:
            first = there.result()
        except Exception as exc:  # it died or erred: its half is scored here
            self._drop(exc)
            first = self.scorer.scores(i[:half], j[:half], exact_from=exact_from)
        return np.concatenate([first, rest])

    def _drop(self, exc: Exception) -> None:
        log.warning("dedup: no pair-score helper process, scoring on one core: %s: %s", type(exc).__name__, exc)
        if self._pool is not None:
            self._pool.terminate()
            self._pool = None

    def __enter__(self) -> SharedScores:
        return self

    def __exit__(self, *exc: object) -> None:
        """The helper stops: at once (after an error or an interrupt) or once idle."""
        if self._pool is not None:
            self._pool.__exit__(*exc)
            self._pool = None


def _sample(members: list[int]) -> list[int]:
    """At most :data:`AVERAGE_SAMPLE` of ``members`` (section order): all, or evenly spaced."""
    n = len(members)
    if n <= AVERAGE_SAMPLE:
        return members
    return [members[k * n // AVERAGE_SAMPLE] for k in range(AVERAGE_SAMPLE)]


class _Members(dict):
    """Cluster -> members in section order, stored only from two members (else ``[c]``)."""

    def __missing__(self, c: int) -> list[int]:
        return [c]


def _each(sigs: int | set[int]) -> Iterable[int]:
    """The signatures of one document in a cluster (:attr:`_Clusters.docs`): an int is one."""
    return sigs if isinstance(sigs, set) else (sigs,)


class _Clusters:
    """The growing partition of :func:`cluster_sections`. Each cluster keeps its members, its arXiv
    id and, per document, its members' exact-key signatures, so a cannot-link check costs
    ``O(min(|docs A|, |docs B|))``. Union by size: ``O(n log n)`` relabelling."""

    def __init__(self, scorer: PairScorer):
        import array

        n = len(scorer.doc)
        # 8-byte machine ints per section, not Python lists
        self.of = array.array("q", range(n))
        self.members: dict[int, list[int]] = _Members()  # a singleton is not stored: [c]
        self.arxiv = _int_array(scorer.arxiv_code)
        # one code per distinct signature, from the code columns
        keys = np.stack([scorer.arxiv_code, scorer.folded_code, scorer.folded_zh_code], axis=1)
        distinct, inverse = np.unique(keys, axis=0, return_inverse=True)
        codes, ids = _first_appearance(inverse.ravel())
        self.sig_table = [tuple(row) for row in distinct[ids].tolist()]
        del keys, distinct, inverse
        self.sig_code = _int_array(codes)
        self.doc_code = _int_array(scorer.doc_code)
        # per cluster of two or more, its documents' signatures: an int when one (most), else a set
        self.docs: dict[int, dict[int, int | set[int]]] = {}  # absent: a singleton, read from its member
        self._sig_exact: dict[tuple[int, int], bool] = {}
        import bisect

        self._insort = bisect.insort

    def _docs(self, c: int) -> dict[int, int | set[int]]:
        docs = self.docs.get(c)
        return docs if docs is not None else {self.doc_code[c]: self.sig_code[c]}

    def _exact(self, s: int, t: int) -> bool:
        key = (s, t) if s < t else (t, s)
        found = self._sig_exact.get(key)
        if found is None:
            found = self._sig_exact[key] = any(
                x >= 0 and x == y for x, y in zip(self.sig_table[s], self.sig_table[t], strict=True))
        return found

    def cannot_link(self, a: int, b: int) -> bool:
        """Whether clusters ``a`` and ``b`` hold a cannot-linked cross pair."""
        xa, xb = self.arxiv[a], self.arxiv[b]
        if xa >= 0 and xb >= 0 and xa != xb:
            return True
        da, db = self._docs(a), self._docs(b)
        if len(da) > len(db):
            da, db = db, da
        for doc, sigs in da.items():
            other = db.get(doc)
            if other is not None and not all(self._exact(s, t) for s in _each(sigs) for t in _each(other)):
                return True
        return False

    def merge(self, a: int, b: int) -> None:
        """Merge clusters ``a`` and ``b`` (the smaller into the larger)."""
        big, small = (a, b) if len(self.members[a]) >= len(self.members[b]) else (b, a)
        moved = self.members.pop(small, None) or [small]
        kept = self.members.setdefault(big, [big])
        for x in moved:
            self.of[x] = big
        if len(moved) <= 4:
            for x in moved:
                self._insort(kept, x)
        else:
            kept.extend(moved)
            kept.sort()  # two sorted runs: timsort merges them linearly
        self.arxiv[big] = max(self.arxiv[big], self.arxiv[small])  # equal, or one is -1
        docs = self._docs(big)
        for doc, sigs in self._docs(small).items():
            held = docs.get(doc)
            if held is None or held == sigs:
                docs[doc] = sigs  # the small cluster's set (if one) is not used again
            elif isinstance(held, set):
                held.update(_each(sigs))
            else:
                docs[doc] = {held, *_each(sigs)}
        self.docs[big] = docs
        self.docs.pop(small, None)


def cluster_sections(sections: pd.DataFrame | PairScorer, emb: SectionEmbeddings | np.ndarray,
                     config: Config, scratch: str | Path | None = None, as_arrays: bool = False,
                     on_step: Callable[[str], None] | None = None,
                     ) -> tuple[list[int], list[float | None]] | tuple[np.ndarray, np.ndarray]:
    """Cluster sections into papers (docs/dedup.md, step 4).

    Candidate pairs (content and title neighbours, exact-key hubs) are scored and visited by
    descending score, ties by index (:func:`_merge_visits`). A merge needs no cannot-link and an
    exact key or a ``math.fsum`` average over at most :data:`AVERAGE_SAMPLE` members per side at
    the threshold. See :class:`SharedScores` for two-process scoring (same values).

    Args:
        sections: rows with :data:`SCORER_COLUMNS`, or the :class:`PairScorer` built from them.
        emb: :func:`embed_sections` of ``sections``; a bare float32 ``(n, d)`` array is the
            content vectors, with no title vectors.
        scratch: folder for scratch files (None: temp); as_arrays: numpy arrays, not lists.
        on_step: called with each :data:`CLUSTERING_STEPS` name but ``"fusion"`` as it ends.

    Returns:
        ``(labels, join_scores)``: cluster label per section (first appearance order) and mean
        score to the first :data:`JOIN_SCORE_SAMPLE` other members (None alone); with
        ``as_arrays``, int64 and float64 ``(n,)`` (NaN alone).
    """
    if isinstance(emb, np.ndarray):
        emb = SectionEmbeddings.from_dense(emb)
    # the key codes are held through the searches; the k-means sample waits on disk
    scorer = sections if isinstance(sections, PairScorer) else PairScorer(sections, emb, config.dedup.embed_weight)
    del sections
    n = len(scorer)
    if config.run.workers < 2 or n < SHARED_SCORES_MIN_SECTIONS or not isinstance(emb.content, np.memmap):
        return _cluster(scorer, emb, config, scratch, as_arrays, scorer.scores, on_step or (lambda step: None))
    with SharedScores(scorer) as shared:
        return _cluster(scorer, emb, config, scratch, as_arrays, shared, on_step or (lambda step: None))


def _cluster(scorer: PairScorer, emb: SectionEmbeddings, config: Config, scratch: str | Path | None,
             as_arrays: bool, scores: Callable[..., np.ndarray], on_step: Callable[[str], None],
             ) -> tuple[list[int], list[float | None]] | tuple[np.ndarray, np.ndarray]:
    """:func:`cluster_sections` once its scorer is built; ``scores``: ``scorer.scores`` or a
    :class:`SharedScores` (the same values), for the bulk scoring."""
    n = len(scorer)
    threshold = config.dedup.match_threshold
    ann_min = config.dedup.ann_min_sections
    found = [_neighbour_keys(emb.content, K_NEIGHBOURS, ann_min, scratch)]
    log.debug("dedup: %d sections, %d content-neighbour pairs", n, len(found[0]))
    on_step("content_neighbours")
    # titles across languages: neighbours among the title vectors (English or Chinese, summed)
    if (emb.title_row >= 0).any() or (emb.title_zh_row >= 0).any():
        found.append(_title_neighbour_keys(emb, TITLE_NEIGHBOURS, ann_min, scratch))
        log.debug("dedup: %d title-neighbour pairs", len(found[-1]))
    on_step("title_neighbours")
    doc_codes = _int_array(scorer.doc_code)
    # equal codes, equal keys; name and initials share one code space
    names = np.concatenate([scorer.name_code, scorer.initials_code])
    for key, rows in ((scorer.arxiv_code, None), (scorer.folded_code, None), (names, n)):
        key_pairs = [p for members in _key_groups(key)
                     for p in _key_pairs(members if rows is None else sorted({m % rows for m in members}), doc_codes)]
        pairs = np.array(key_pairs, dtype=np.int64).reshape(-1, 2)
        found.append(_pair_keys(pairs[:, 0], pairs[:, 1], n))
        del key_pairs, pairs
    release_free_memory()  # the searches' blocks and lists
    log.debug("dedup: candidate pairs from %d sources", len(found))
    on_step("key_pairs")
    left, right = _visited_pairs(found, n, scorer, threshold, scores)
    release_free_memory()  # the scored candidates below the threshold and the sort
    log.debug("dedup: %d candidate pairs at or above the threshold", len(left))
    on_step("scoring")
    exact = scorer.exact_pairs(left, right)
    visits = _spilled_pairs(left, right, exact, scratch)
    del left, right, exact

    clusters = _Clusters(scorer)
    # a paper named twice in one document (exact key) is one group from the start; other sections
    # of a document never join; only sections with a shared (document, key) can merge
    for key in (scorer.arxiv_code, scorer.folded_code, scorer.folded_zh_code):
        mention = np.where(key >= 0, scorer.doc_code * (int(key.max(initial=-1)) + 1) + key, -1)
        shared = _shared_rows(mention)
        first: dict[int, int] = {}
        for i, value in zip(shared.tolist(), mention[shared].tolist(), strict=True):
            j = first.setdefault(value, i)
            a, b = clusters.of[i], clusters.of[j]
            if a != b and not clusters.cannot_link(a, b):
                clusters.merge(a, b)
        del mention, shared, first
    failed = _merge_visits(clusters, visits, threshold, scores)
    del visits, failed
    members = clusters.members
    log.debug("dedup: merged into %d clusters of two or more", len(members))
    on_step("merging")
    labels = _first_appearance(np.frombuffer(clusters.of, dtype=np.int64))[0]
    # free the cluster indexes before the join scores' batches
    members = list(members.values())
    del clusters
    release_free_memory()
    join_scores = _join_scores(scorer, members, n, scores)
    on_step("join_scores")
    for cache in (_english_ratio, _english_conflict, _word_index, _chinese_pair_similarity):
        cache.cache_clear()  # this corpus's title pairs (up to ~13 MB each): not needed again
    if as_arrays:
        return labels, join_scores
    return labels.tolist(), [None if np.isnan(v) else v for v in join_scores.tolist()]


def _merge_visits(clusters: _Clusters, visits: np.ndarray,
                  threshold: float, scores: Callable[..., np.ndarray],
                  ) -> dict[tuple[int, int], tuple[int, int]]:
    """The merge loop: each visit ``(i, j, exact)`` merges the clusters of ``i`` and ``j`` unless
    already one, cannot-linked, or (not exact, not two singletons) their sampled average is below
    ``threshold``. Returns failed averages ``{(a, b): (|a|, |b|)}`` (retried only after growth).
    Averages are scored a :data:`MERGE_BLOCK` at a time; a visit whose clusters changed within the
    block is rescored alone, so decisions equal the visit-by-visit loop's."""
    failed: dict[tuple[int, int], tuple[int, int]] = {}
    members = clusters.members

    def cross_pairs(a: int, b: int) -> tuple[np.ndarray, np.ndarray]:
        xs, ys = _sample(members[a]), _sample(members[b])
        return np.repeat(np.array(xs, np.int64), len(ys)), np.tile(np.array(ys, np.int64), len(xs))

    def to_try(i: int, j: int) -> tuple[int, int, tuple[int, int]] | None:
        """``(low cluster, high cluster, sizes)`` to compare now, or None when skipped."""
        a, b = clusters.of[i], clusters.of[j]
        if a == b:
            return None
        if a > b:
            a, b = b, a
        sizes = (len(members[a]), len(members[b]))
        if failed.get((a, b)) == sizes or clusters.cannot_link(a, b):
            return None
        return a, b, sizes

    stream = _pair_stream(visits)
    block: list[tuple[int, int, bool]] = []
    while True:
        block += itertools.islice(stream, MERGE_BLOCK - len(block))
        if not block:
            break
        # the block's averages scored together, at most MERGE_PAIRS cross pairs
        wanted: dict[tuple[int, int, tuple[int, int]], tuple[int, int]] = {}
        parts_i, parts_j, pairs, end = [], [], 0, len(block)
        for k, (i, j, is_exact) in enumerate(block):
            if pairs >= MERGE_PAIRS:
                end = k
                break
            tried = None if is_exact else to_try(i, j)
            if tried is None or tried[2] == (1, 1) or tried in wanted:
                continue
            ci, cj = cross_pairs(tried[0], tried[1])
            wanted[tried] = (pairs, pairs + len(ci))
            parts_i.append(ci)
            parts_j.append(cj)
            pairs += len(ci)
        averages = _block_averages(wanted, parts_i, parts_j, threshold, scores) if wanted else {}
        del wanted, parts_i, parts_j
        block, later = block[:end], block[end:]
        for i, j, is_exact in block:
            tried = to_try(i, j)
            if tried is None:
                continue
            a, b, sizes = tried
            # exact links outright; two singletons' only cross pair is above already
            if not is_exact and sizes != (1, 1):
                average = averages.get(tried)
                if average is None:  # a merge earlier in the block changed a side
                    ci, cj = cross_pairs(a, b)
                    average = _block_averages({tried: (0, len(ci))}, [ci], [cj], threshold, scores)[tried]
                if average < threshold:
                    failed[(a, b)] = sizes
                    continue
            clusters.merge(a, b)
        block = later
    return failed


def _block_averages(wanted: dict[tuple, tuple[int, int]], parts_i: list[np.ndarray], parts_j: list[np.ndarray],
                    threshold: float, scores: Callable[..., np.ndarray]) -> dict[tuple, float]:
    """Key -> ``math.fsum`` average over its span ``(lo, hi)`` of the concatenated cross pairs, or
    ``-inf`` where the upper bounds' average is below ``threshold`` by over :data:`BOUND_MARGIN`."""
    ci, cj = np.concatenate(parts_i), np.concatenate(parts_j)
    spans = np.array(list(wanted.values()), dtype=np.int64)
    lengths = spans[:, 1] - spans[:, 0]
    with np.errstate(invalid="ignore"):  # a cannot-linked pair's -inf
        bound_means = np.add.reduceat(scores(ci, cj, exact_from=math.inf), spans[:, 0]) / lengths
    averages: dict[tuple, float] = {}
    rest = []
    for key, mean in zip(wanted, bound_means.tolist(), strict=True):
        if mean < threshold - BOUND_MARGIN:
            averages[key] = -math.inf
        else:
            rest.append(key)
    if rest:
        picked = [wanted[key] for key in rest]
        pick = np.concatenate([np.arange(lo, hi) for lo, hi in picked])
        got = scores(ci[pick], cj[pick]).tolist()
        at = 0
        for key, (lo, hi) in zip(rest, picked, strict=True):
            averages[key] = math.fsum(got[at : at + hi - lo]) / (hi - lo)
            at += hi - lo
    return averages


def _pair_stream(pairs: np.ndarray) -> Iterator[tuple[int, int, bool]]:
    """The ``(left, right, exact)`` rows of :func:`_spilled_pairs` as Python values, by block."""
    for start in range(0, len(pairs), STREAM_BLOCK):
        block = np.asarray(pairs[start : start + STREAM_BLOCK])
        yield from zip(block[:, 0].tolist(), block[:, 1].tolist(), (block[:, 2] != 0).tolist(), strict=True)


def _spilled_pairs(left: np.ndarray, right: np.ndarray, exact: np.ndarray, folder: str | Path | None) -> np.ndarray:
    """The visited pairs as an ``(m, 3)`` matrix ``(left, right, exact)`` in an unlinked,
    read-only mapped scratch ``.npy`` in ``folder``."""
    out, path = _scratch_npy(folder, (len(left), 3), left.dtype)
    for start in range(0, len(left), STREAM_BLOCK):
        stop = start + STREAM_BLOCK
        out[start:stop] = np.stack([left[start:stop], right[start:stop], exact[start:stop].astype(left.dtype)], axis=1)
    out.flush()
    del out
    mapped = read_npy(path)
    path.unlink()
    return mapped


def _join_scores(scorer: PairScorer, clusters: list[list[int]], n: int,
                 scores: Callable[..., np.ndarray] | None = None) -> np.ndarray:
    """Per section, mean score to the first :data:`JOIN_SCORE_SAMPLE` other members in section
    order: float64 ``(n,)``, NaN alone; independent of :data:`JOIN_BATCH` (a section's pairs are
    never split)."""
    score = scorer.scores if scores is None else scores
    total = np.zeros(n)
    count = np.zeros(n, dtype=np.int64)
    batch_i: list[np.ndarray] = []
    batch_j: list[np.ndarray] = []
    pending = 0

    def flush() -> None:
        if batch_i:
            i, j = np.concatenate(batch_i), np.concatenate(batch_j)
            batch_i.clear()
            batch_j.clear()
            total[:] += np.bincount(i, weights=score(i, j), minlength=n)
            count[:] += np.bincount(i, minlength=n)

    for members in clusters:
        if len(members) < 2:
            continue
        m = np.array(members, dtype=np.int64)
        heads = m[: JOIN_SCORE_SAMPLE + 1]
        # members per slice: about JOIN_BATCH pair rows
        step = max(1, JOIN_BATCH // len(heads))
        for start in range(0, len(m), step):
            part = m[start : start + step]
            i, j = np.repeat(part, len(heads)), np.tile(heads, len(part))
            # the first JOIN_SCORE_SAMPLE heads other than the section itself
            rank = np.tile(np.arange(len(heads)), len(part)) - (j > i) * np.repeat(np.isin(part, heads), len(heads))
            keep = (i != j) & (rank < JOIN_SCORE_SAMPLE)
            batch_i.append(i[keep])
            batch_j.append(j[keep])
            pending += int(keep.sum())
            if pending >= JOIN_BATCH:
                flush()
                pending = 0
    flush()
    return np.divide(total, count, out=np.full(n, np.nan), where=count > 0)
