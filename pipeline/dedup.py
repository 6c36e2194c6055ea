"""Dedup: group the sections that mention the same paper and fuse each group into one
canonical record, with provenance.

Method
------
1. **Embeddings.** Each section is embedded from what identifies its paper: the English title,
   the Chinese title and the head of the summary (:func:`embedding_text`), through the
   configured :class:`pipeline.embed.Embedder` (L2-normalized, so a dot product is a cosine).
2. **Candidates** (blocking). Pairs sharing an exact key (arXiv id; folded title,
   :func:`pipeline.fields.fold_title`) plus each section's ``K_NEIGHBOURS`` nearest neighbours
   by cosine, plus the nearest titles across languages: each distinct (English, Chinese) title
   pair's ``TITLE_NEIGHBOURS`` nearest other pairs, each section with the first section of
   each (:func:`_title_neighbour_keys`). Neighbours come from an exact search over the matrix
   in row blocks, so memory stays ``O(n * block)`` rather than ``O(n^2)``, or from an IVF
   index from ``dedup.ann_min_sections`` rows on (:func:`_ivf_index`).
3. **Score** of a pair, in [0, 1]: ``w * cosine + (1 - w) * title_similarity`` with ``w =
   dedup.embed_weight``; title similarity is the :class:`difflib.SequenceMatcher` ratio (as
   computed by ``cydifflib``, the same algorithm compiled: equal ratios) of the
   folded English titles or of the folded Chinese titles (both in the target script), the
   higher when both exist; when neither pair of titles exists the score is the cosine alone.
   Then ``+ AUTHOR_BONUS`` when the author lists overlap, ``- VENUE_CONFLICT_PENALTY`` when the
   venues differ and ``- YEAR_CONFLICT_PENALTY`` when the years are more than one apart. An
   equal arXiv id or an equal folded title (English or Chinese) scores 1.0. **Cannot-link**
   constraints: two sections of one document are not the same paper unless they share an exact
   key (one paper named twice in an article); two different arXiv ids never merge.
4. **Clustering**: greedy average linkage. Candidate pairs are visited by descending score;
   two clusters merge only if no cross pair is cannot-linked and either the pair shares an
   exact key (a must-link: the same arXiv id or folded title is the same paper however weak the
   other evidence, e.g. a mention that is only an arXiv link) or the *average* score over all
   their cross pairs reaches ``dedup.match_threshold``. Checking the members keeps chains
   (A~B, B~C, C unrelated to A) from merging (average linkage, Sokal & Michener 1958;
   constrained clustering with cannot-links, Wagstaff et al. 2001). A cluster larger than
   ``AVERAGE_SAMPLE`` members is represented in that average by ``AVERAGE_SAMPLE`` of them,
   evenly spaced in section order, so a merge costs at most ``AVERAGE_SAMPLE**2`` pair scores
   however popular the paper; cannot-links are checked on per-cluster indexes (its arXiv id, its
   members' keys per document), exactly, without visiting cross pairs. The averages a block of
   visits needs are scored together, upper bounds first (:func:`_merge_visits`): the same
   decisions as one at a time.

Calibration. On the seeds (default USE embedder, ``embed_weight`` 0.5, exact keys switched
off) same-paper pairs across the two scripts score at least 0.76 and different-paper pairs at
most 0.45. The cosine alone does not separate the two sets (same paper as low as 0.51,
different papers up to 0.62: long explainers and short abstracts of one paper differ), which is
why the title similarity carries half the weight. On the dedup evaluation set
(``tests/fixtures/dedup``: 33 papers, 63 mentions, near-miss sequels and siblings;
``python -m pipeline.evaluate_dedup`` prints the sweep) pairwise precision and recall are both
1.0 for thresholds 0.50-0.55; at 0.45 sibling papers merge (precision 0.86), at 0.60 a paper
named only by its Chinese title misses its English mentions (recall 0.92: cross-language title
cosines of translations are 0.63-0.78). The default 0.55 is the high-precision end of that
plateau; the weights and penalties above were set on the same set.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import itertools
import logging
import math
import operator
import os
import pickle
import re
import shutil
import sys
import tempfile
from collections import Counter
from collections.abc import Callable, Container, Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
from cydifflib import SequenceMatcher  # difflib's algorithm in Cython: the same ratios, ~5x faster

from .config import Config
from .embed import DEFAULT_MAX_CHARS, Embedder, submit_encode
from .fields import fold_title, fold_title_words
from .memory import release_free_memory
from .score_helper import ScoreHelper
from .stage import records
from .vectors import VectorFile, portable, read_npy, restored, write_npy
from .write import PAPERS_SCHEMA

log = logging.getLogger(__name__)

#: Nearest neighbours per section that become candidate pairs.
K_NEIGHBOURS = 10
#: Nearest other distinct title pairs per distinct (English, Chinese) title pair whose first
#: sections become candidates of its sections (:func:`_title_neighbour_keys`). With the copies of
#: a title out of the search, 3 reach about as far as the 10 per section did before (where most
#: were copies): on the 10k bench corpus, against the generator's truth (papers by index, on the
#: 61,747 sections whose count matched their article's), B-cubed F1 0.7446 with the search per
#: section, 0.7468 with 3, 0.7445 with 4, 0.7436 with 5 and 0.7406 with 10 distinct pairs (more
#: candidates: more merges of different papers that share title words); the dedup evaluation set
#: (tests/fixtures/dedup) scores the same at every threshold with 3 and with the old search.
TITLE_NEIGHBOURS = 3
#: Queries per block of the exact neighbour search (``faiss.knn``: block x n float32 of scores).
SEARCH_BLOCK = 1024
#: IVF lists per square root of the number of rows, and lists scanned per query. faiss's
#: guideline (wiki "Guidelines to choose an index") is 4*sqrt(n) to 16*sqrt(n) lists; fewer,
#: longer lists keep the k-means (``nlist**2``) cheap. Measured on the 50k bench corpus's
#: 521,768 distinct vectors (recall@10 of 2,000 queries against the exact search,
#: ``python -m bench.ann_recall``; bench/README.md): 2*sqrt(n) lists and 16 probes found 98.93%,
#: 4*sqrt(n) lists 98.63%.
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
#: Score added when two mentions' author lists overlap by at least AUTHOR_MIN_OVERLAP
#: (Jaccard of :func:`_author_keys`); subtracted when both name a venue and the venues differ,
#: or both a year and the years are more than one apart (an arXiv year and a venue year may
#: differ by one). Calibrated on the dedup evaluation set (tests/fixtures/dedup).
AUTHOR_BONUS = 0.10
AUTHOR_MIN_OVERLAP = 0.5
VENUE_CONFLICT_PENALTY = 0.10
YEAR_CONFLICT_PENALTY = 0.10
#: Score cap of two English titles that differ by a whole word on each side ("Probabilistic"
#: vs "Implicit") or by a sequel marker on one side ("Improved", "2", "XL", "v2"): such pairs are
#: near-miss papers (a follow-up, a sibling method), not spelling variants.
TITLE_CONFLICT_SIMILARITY = 0.3
#: Two title words are the same word when their SequenceMatcher ratio reaches this (typos:
#: "Probablistic"/"Probabilistic" 0.96; "Modelling"/"Modeling" are folded before).
WORD_MATCH_RATIO = 0.85
#: Words that mark a follow-up paper when only one of two titles has them.
SEQUEL_WORDS = frozenset("improved improving revisited revisiting extended scaling faster better v2 v3 xl plus pro".split())
_CJK = re.compile(r"[\u3400-\u9fff]")
_WORD = re.compile(r"[^\W_]+")
#: A section's ``match_score`` is its average score to at most this many other members of its
#: paper (the first ones in section order), so a paper mentioned thousands of times costs
#: linear, not quadratic, time.
JOIN_SCORE_SAMPLE = 64
#: Pairs :func:`_join_scores` scores at a time (with their indexes, about 40 bytes a pair: 10 MiB;
#: 2**20 held ~100 MB more at 50k articles, whose largest paper has ~10,000 mentions).
JOIN_BATCH = 1 << 18
#: Members per side whose cross pairs average linkage averages when two clusters may merge.
#: Up to this size every member counts (the exact average over all ``|A| x |B|`` cross pairs);
#: a larger cluster is represented by this many members evenly spaced in section order
#: (deterministic, independent of merge order), so one merge check costs at most
#: ``AVERAGE_SAMPLE ** 2`` pair scores however large the clusters (a mention joining a big
#: cluster: ``AVERAGE_SAMPLE``), and clustering stays near linear when a popular paper has
#: thousands of mentions. Measured on a generated 1k-article corpus (11.8k sections, clusters up
#: to 167 members) against the exact average: 64 moves one section, 96 and 128 give the same
#: partition; on that corpus replicated 4 times (47k sections, clusters up to 656) 96 differs in 2
#: clusters, 64 in 7, 128 in 4.
AVERAGE_SAMPLE = 96
#: Pairs scored per numpy batch in :meth:`PairScorer.scores` (memory: about ``2 x batch x d``
#: float32 gathered embedding rows, 8 MiB at ``d = 512``).
SCORE_BATCH = 4096
#: Candidate pairs converted to Python values at a time in the merge loop (:func:`_pair_stream`).
STREAM_BLOCK = 65536
#: Visits whose cluster averages the merge loop scores together (:func:`_merge_visits`), and
#: the most cross pairs it gathers for them (about 40 bytes a pair while scored).
MERGE_BLOCK = 4096
MERGE_PAIRS = 1 << 20
#: How far below the threshold an average of upper bounds, summed in float64 (``reduceat``: the
#: mean of ``m <= AVERAGE_SAMPLE**2`` scores in [0, 1] is off by less than ``m * 2**-53``), must be to fail
#: without its exact average: a thousand times that error.
BOUND_MARGIN = 1e-9
#: From this many sections on, with ``run.workers`` of two or more and the content vectors in a
#: file (the runner's), clustering scores its bulk pairs on two processes
#: (:class:`pipeline.score_helper.ScoreHelper`): below it, the helper's start-up (a few seconds
#: of a core) costs about what it saves (the 12k sections of the 1k bench corpus score their
#: candidates in about 4 s).
SHARED_SCORES_MIN_SECTIONS = 20_000
#: Candidate pairs scored at a time by :func:`_visited_pairs` (a multiple of SCORE_BATCH).
CANDIDATE_BLOCK = 64 * SCORE_BATCH
#: Entries of the string-pair caches of the title similarities (about 200 bytes each).
TITLE_PAIR_CACHE = 1 << 16
#: Entries of the per-title word index of the conflict test (:func:`_word_index`; ~1.3 KB each).
TITLE_INDEX_CACHE = 1 << 12
#: Characters of the summary that go into the embedding text.
SUMMARY_HEAD_CHARS = 200

PAPER_COLUMNS = (
    "paper_id", "title", "title_zh", "arxiv_id", "venue", "year", "award", "authors", "institutions",
    "urls", "url_kinds", "summary", "section_ids", "doc_ids", "n_mentions", "n_sources", "conflicts",
)


#: The sections columns dedup reads (clustering, :func:`fuse`, :func:`embedding_text`): the
#: runner keeps only these for every section of a run (plus ``_summary_chars``, see
#: :func:`slim_sections`), never the texts.
DEDUP_COLUMNS = ("section_id", "doc_id", "title", "title_zh", "arxiv_id", "authors", "institutions", "venue",
                 "year", "award", "award_raw", "urls", "url_kinds", "summary_norm")


#: The list columns of :func:`slim_sections` (lists of strings).
SLIM_LIST_COLUMNS = ("authors", "institutions", "urls", "url_kinds")
_LIST_OF_STR = pa.list_(pa.string())


def _plain_list(value: object) -> list | None:
    """A list column's value for Arrow: a list (an array or tuple becomes one), None for a
    missing marker (None, NaN, ``pd.NA``).

    Raises:
        TypeError: anything else (a string, a number): not a list.
    """
    if isinstance(value, list):
        return value
    if isinstance(value, tuple | np.ndarray):
        return list(value)
    if value is None or (not isinstance(value, str | bytes) and pd.api.types.is_scalar(value) and pd.isna(value)):
        return None
    raise TypeError(f"not a list: {type(value).__name__}")


def slim_sections(sections: pd.DataFrame) -> pd.DataFrame:
    """What dedup needs of ``sections`` once they are embedded, a fraction of their size.

    Returns:
        the :data:`DEDUP_COLUMNS` of ``sections`` (a missing one as None), with ``summary_norm``
        and ``summary`` cut to one character (their presence is what clustering reads; embed
        the sections before slimming them)
        and ``_summary_chars`` (int: characters of the whole ``summary_norm``, 0 when none; a
        ``summary`` column is there even when ``sections`` has none, all None), by
        which :func:`fuse` picks the longest summary without holding it. The list columns
        (:data:`SLIM_LIST_COLUMNS`) are Arrow lists of strings (``pd.ArrowDtype``; an element
        reads back as a Python list, a missing one as ``pd.NA``, None through
        :func:`pipeline.stage.records`): a few bytes per name instead of a Python list of ``str``
        objects (about 1 KB a section for the four). A column whose values are not all lists of
        strings (or missing) is kept as it is.
    """
    out = pd.DataFrame({c: sections[c] if c in sections else None for c in DEDUP_COLUMNS}, index=sections.index)
    for name in SLIM_LIST_COLUMNS:
        try:
            out[name] = pd.array(pa.array([_plain_list(v) for v in out[name].tolist()], _LIST_OF_STR),
                                 dtype=pd.ArrowDtype(_LIST_OF_STR))
        except (pa.ArrowException, TypeError, ValueError):  # not lists of strings: kept as they are
            pass
    summaries = out["summary_norm"].tolist()
    out["_summary_chars"] = [len(v) if isinstance(v, str) else 0 for v in summaries]
    out["summary_norm"] = [v[:1] if isinstance(v, str) else None for v in summaries]
    # clustering counts a summary in either script (PairScorer); always a column, so that every
    # chunk of a run has the same columns (SlimColumns)
    out["summary"] = [v[:1] if isinstance(v, str) else None for v in sections["summary"]] if "summary" in sections else None
    return out.reset_index(drop=True)


#: The columns :class:`PairScorer` reads (its codes are built from them).
SCORER_COLUMNS = ("doc_id", "arxiv_id", "title", "title_zh", "summary_norm", "summary", "authors", "year", "venue")


class SlimColumns:
    """The :func:`slim_sections` frames of a run, appended chunk by chunk to an unnamed scratch
    file (each column of each chunk pickled on its own) and read back a few columns at a time,
    so that dedup holds only what a step needs: the scorer's codes are built from
    :data:`SCORER_COLUMNS`, fusion reads every column once clustering is done. Held in memory
    instead, every section's slim row (about 310 bytes, 180 MB at 600,000 sections) would sit
    under the per-document phase, the embedding and every step of clustering.

    Pickle keeps each value and dtype as appended, so :meth:`read` equals the same columns of
    ``pd.concat(frames, ignore_index=True)``.

    Args:
        folder: where the file goes (None: the system's temporary folder).

    Raises:
        OSError: the file cannot be created or written.
    """

    def __init__(self, folder: str | Path | None = None) -> None:
        self._file = tempfile.TemporaryFile(dir=folder, prefix="slim-", suffix=".pkl")
        self._parts: dict[str, list[tuple[int, int]]] = {}  # column -> (offset, bytes) per chunk
        self._empty: pd.DataFrame | None = None  # the first frame's columns and dtypes, no rows
        self.n = 0

    @property
    def columns(self) -> list[str]:
        """The columns, as in the first frame appended (none before)."""
        return [] if self._empty is None else list(self._empty.columns)

    def append(self, frame: pd.DataFrame) -> None:
        """Add the rows of ``frame`` after the others.

        Raises:
            ValueError: its columns are not those of the first frame.
        """
        if self._empty is None:
            self._empty = frame.iloc[:0].reset_index(drop=True)
        elif list(frame.columns) != self.columns:
            raise ValueError(f"columns {list(frame.columns)} differ from the first chunk's {self.columns}")
        for name in self.columns:
            self._write(name, frame[name])
        self.n += len(frame)

    def _write(self, name: str, column: pd.Series) -> None:
        """Pickle ``column`` at the end of the file as the next chunk of ``name``."""
        self._file.seek(0, 2)
        data = pickle.dumps(column.reset_index(drop=True), protocol=pickle.HIGHEST_PROTOCOL)
        self._parts.setdefault(name, []).append((self._file.tell(), len(data)))
        self._file.write(data)

    def _pieces(self, name: str, chunks: Iterable[int]) -> list[pd.Series]:
        out = []
        for k in chunks:
            offset, size = self._parts[name][k]
            self._file.seek(offset)
            out.append(pickle.loads(self._file.read(size)))
        return out

    def _names(self, columns: Sequence[str] | None) -> list[str]:
        return self.columns if columns is None else [c for c in columns if c in self.columns]

    @property
    def n_chunks(self) -> int:
        """How many chunks (appended frames, or :meth:`regrouped` batches) the store holds."""
        return len(next(iter(self._parts.values()), []))

    def read(self, columns: Sequence[str] | None = None) -> pd.DataFrame:
        """The rows of every frame appended, in order (index ``0..n-1``), with ``columns`` (those
        that exist, in the order given; None: all)."""
        out: dict[str, pd.Series] = {}
        for name in self._names(columns):
            pieces = self._pieces(name, range(len(self._parts.get(name, []))))
            out[name] = pd.concat(pieces, ignore_index=True) if pieces else self._empty[name]
        return pd.DataFrame(out, index=pd.RangeIndex(self.n))

    def read_chunk(self, k: int, columns: Sequence[str] | None = None) -> pd.DataFrame:
        """The rows of chunk ``k`` alone (index ``0..len-1``), with ``columns`` as in :meth:`read`.

        Raises:
            IndexError: no chunk ``k``.
        """
        if not 0 <= k < self.n_chunks:
            raise IndexError(f"chunk {k} of {self.n_chunks}")
        return pd.DataFrame({name: self._pieces(name, [k])[0] for name in self._names(columns)})

    def regrouped(self, positions: np.ndarray, bounds: Sequence[int], folder: str | Path | None = None) -> SlimColumns:
        """A new store of the rows at ``positions`` (into this store's ``n`` rows, in that order),
        cut into chunks at ``bounds`` (chunk ``k``: ``positions[bounds[k]:bounds[k + 1]]``), for
        reading them a chunk at a time in an order other than the one they were appended in
        (:func:`cluster_papers` fuses cluster by cluster). Written one column at a time, so
        memory holds one column of every row (not every column, as :meth:`read` of all).

        Args:
            positions: int ``(m,)``, each in ``0..n-1`` (repeats allowed).
            bounds: ``0 = bounds[0] <= ... <= bounds[-1] = m``.
            folder: where the new store's file goes (None: the system's temporary folder).

        Raises:
            ValueError: ``bounds`` do not run from 0 to ``m`` in order.
            IndexError: a position outside ``0..n-1``.
        """
        positions = np.asarray(positions, dtype=np.int64)
        bounds = [int(b) for b in bounds]
        if not bounds or bounds[0] != 0 or bounds[-1] != len(positions) or any(
                a > b for a, b in zip(bounds, bounds[1:], strict=False)):
            raise ValueError(f"bounds must run from 0 to {len(positions)} in order")
        if len(positions) and (positions.min() < 0 or positions.max() >= self.n):
            raise IndexError(f"positions outside 0..{self.n - 1}")
        out = SlimColumns(folder)
        out._empty = self._empty
        for name in self.columns:
            column = self.read([name])[name]
            for lo, hi in zip(bounds, bounds[1:], strict=False):  # a take per chunk: compact pieces
                out._write(name, column.iloc[positions[lo:hi]])
            del column
        out.n = len(positions)
        return out

    def close(self) -> None:
        """Drop the file (idempotent)."""
        self._file.close()


class _StoredColumns:
    """The columns ``names`` of a :class:`SlimColumns` store as :class:`PairScorer` reads a
    DataFrame (``len``, ``columns``, ``frame[name]``), each read from the store when asked and
    taken into ``order``, so that building the codes holds one column of every row at a time,
    not all of :data:`SCORER_COLUMNS` (the 595,757 sections of the 50k bench corpus: 100 MB of
    Arrow strings at once, twice during the take into section-id order).

    Args:
        store: the rows.
        names: the columns offered (those the store has).
        order: int ``(n,)``: row ``i`` here is the store's row ``order[i]``; None: as stored.
    """

    def __init__(self, store: SlimColumns, names: Sequence[str], order: np.ndarray | None = None):
        self._store, self._order = store, order
        self.columns = [c for c in names if c in store.columns]

    def __len__(self) -> int:
        return self._store.n

    def __getitem__(self, name: str) -> pd.Series:
        """Column ``name`` (index ``0..n-1``, in ``order``).

        Raises:
            KeyError: not one of :attr:`columns`.
        """
        if name not in self.columns:
            raise KeyError(name)
        column = self._store.read([name])[name]
        return column if self._order is None else column.iloc[self._order].reset_index(drop=True)


def _embedding_source(row: dict) -> tuple[str, int]:
    """:func:`embedding_text` of ``row`` and how many characters of its sources it leaves out:
    the summary past its first :data:`SUMMARY_HEAD_CHARS` characters, or, for a section with no
    title and no summary, its text past as many."""
    summary = row.get("summary_norm") or row.get("summary") or ""
    head = summary[:SUMMARY_HEAD_CHARS]
    text = "\n".join(p for p in (row.get("title"), row.get("title_zh"), head) if p)
    if text:
        return text, len(summary) - len(head)
    full = row.get("text") or ""
    text = full[:SUMMARY_HEAD_CHARS]
    return text, len(full) - len(text)


def embedding_text(row: dict) -> str:
    """The text embedded for a section: title, Chinese title and summary head (its first
    :data:`SUMMARY_HEAD_CHARS` characters), one per line; for a section with none of them, the
    first :data:`SUMMARY_HEAD_CHARS` characters of its text."""
    return _embedding_source(row)[0]


def embedding_chars_cut(row: dict, max_chars: int = DEFAULT_MAX_CHARS) -> int:
    """How many characters of a section's embedding sources its embedding leaves out (the
    ``sections.embedding_chars_cut`` column; 0 when the vector saw all of them): the summary
    past its head (:func:`embedding_text`), or the text past its head for a section with no
    title and no summary, plus the characters of :func:`embedding_text` past the embedder's
    ``max_chars`` (:data:`pipeline.embed.DEFAULT_MAX_CHARS`, the cut of every configured
    embedder). A sentence-transformers model's own token limit is not counted: it depends on
    the model's tokenizer."""
    text, cut = _embedding_source(row)
    return cut + max(0, len(text) - max_chars)


def embedding_cuts(sections: pd.DataFrame, max_chars: int = DEFAULT_MAX_CHARS) -> list[int]:
    """:func:`embedding_chars_cut` of every row of ``sections`` (rows with ``title``,
    ``title_zh``, ``summary_norm`` or ``summary``, ``text``), row for row."""
    rows = records(sections[[c for c in ("title", "title_zh", "summary_norm", "summary", "text") if c in sections]])
    return [embedding_chars_cut(r, max_chars) for r in rows]


@dataclass(frozen=True)
class SectionEmbeddings:
    """The vectors dedup compares (float32, rows L2-normalized). A title text shared by many
    sections (a popular paper) is stored once, so the memory is ``(n + m) * d * 4`` bytes for
    ``n`` sections and ``m`` distinct titles rather than ``3 * n * d * 4``.

    Attributes:
        content: ``(n, d)``: :func:`embedding_text` of each section (titles and summary head); an
            array, or the runner's read-only memory map of a scratch ``.npy``
            (:meth:`with_content`).
        title_vectors: ``(m, d)``: one row per distinct title text; an array, or a memory map
            (the runner's, :class:`EmbeddingParts` with a folder).
        title_row: int32 ``(n,)``: row of the section's English title in ``title_vectors``; -1
            when it has none.
        title_zh_row: int32 ``(n,)``: row of its Chinese title (target script); -1 when none.
        title_texts: the ``m`` title texts, row for row (merging chunks: :meth:`concat`).
    """

    content: np.ndarray
    title_vectors: np.ndarray
    title_row: np.ndarray
    title_zh_row: np.ndarray
    title_texts: tuple[str, ...] = ()

    @classmethod
    def from_dense(cls, content: np.ndarray, title: np.ndarray | None = None,
                   title_zh: np.ndarray | None = None) -> SectionEmbeddings:
        """From ``(n, d)`` title matrices with an all-zero row for a missing title (each present
        row is stored as its own title row)."""
        n, d = content.shape
        rows, vectors = [], []
        for matrix in (title, title_zh):
            row = np.full(n, -1, np.int32)
            if matrix is not None and matrix.size:
                present = np.flatnonzero(matrix.any(axis=1))
                row[present] = sum(len(v) for v in vectors) + np.arange(len(present), dtype=np.int32)
                vectors.append(matrix[present])
            rows.append(row)
        table = np.concatenate(vectors).astype(np.float32) if vectors else np.zeros((0, d), np.float32)
        return cls(content, table, rows[0], rows[1])

    def _dense(self, row: np.ndarray) -> np.ndarray:
        out = np.zeros(self.content.shape, np.float32)
        has = row >= 0
        out[has] = self.title_vectors[row[has]]
        return out

    @property
    def title(self) -> np.ndarray:
        """``(n, d)`` English title vectors, all-zero rows where none (built on each call)."""
        return self._dense(self.title_row)

    @property
    def title_zh(self) -> np.ndarray:
        """``(n, d)`` Chinese title vectors, all-zero rows where none (built on each call)."""
        return self._dense(self.title_zh_row)

    def take(self, order: np.ndarray) -> SectionEmbeddings:
        """The sections in ``order`` (an index array of length ``n``); the title table is shared
        (the content comes back in memory)."""
        return SectionEmbeddings(self.content[order], self.title_vectors, self.title_row[order],
                                 self.title_zh_row[order], self.title_texts)

    def without_content(self) -> SectionEmbeddings:
        """The same sections with a zero-width ``(n, 0)`` content matrix, for when the content
        rows are kept elsewhere (the runner appends them to a :class:`pipeline.vectors.VectorFile`);
        :meth:`concat` joins such parts, :meth:`with_content` puts the rows back."""
        return SectionEmbeddings(np.empty((len(self.title_row), 0), np.float32), self.title_vectors, self.title_row,
                                 self.title_zh_row, self.title_texts)

    def __reduce__(self):
        """Pickled for another process (:class:`pipeline.score_helper.ScoreHelper`): a mapped
        ``.npy`` goes as its path, not its bytes (:func:`pipeline.vectors.portable`)."""
        return _embeddings, (portable(self.content), portable(self.title_vectors), self.title_row,
                             self.title_zh_row, self.title_texts)

    def with_content(self, content: np.ndarray) -> SectionEmbeddings:
        """The same sections with ``content`` (``(n, d)``, an array or a memory map) as their content vectors.

        Raises:
            ValueError: ``content`` does not have one row per section.
        """
        if content.shape[0] != len(self.title_row):
            raise ValueError(f"{content.shape[0]} content rows for {len(self.title_row)} sections")
        return SectionEmbeddings(content, self.title_vectors, self.title_row, self.title_zh_row, self.title_texts)

    def title_matrix(self, block: int = 65536) -> np.ndarray:
        """``(n, d)`` float32: per section the sum of its English and Chinese title vectors,
        L2-normalized (zero row without titles), built ``block`` rows at a time: what the
        cross-language title neighbours are searched on."""
        out = np.zeros((len(self.title_row), self.title_vectors.shape[1]), np.float32)
        for start in range(0, len(out), block):
            self.title_rows(start, start + block, out=out[start : start + block])
        return out

    def title_rows(self, start: int, stop: int, out: np.ndarray | None = None) -> np.ndarray:
        """Rows ``start:stop`` of :meth:`title_matrix` (float32 ``(rows, d)``), written into ``out``
        (a zeroed block of that shape) when given; the whole matrix is never built."""
        stop = min(stop, len(self.title_row))
        return self._title_sums(self.title_row[start:stop], self.title_zh_row[start:stop], out)

    def title_rows_at(self, index: np.ndarray) -> np.ndarray:
        """The rows of :meth:`title_matrix` at an integer array ``index``: float32 ``(len(index), d)``."""
        return self._title_sums(self.title_row[index], self.title_zh_row[index])

    def _title_sums(self, rows_en: np.ndarray, rows_zh: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
        """Per section the L2-normalized sum of the title vectors at table rows ``rows_en`` and
        ``rows_zh`` (``-1``: none), into ``out`` (zeroed) when given."""
        part = np.zeros((len(rows_en), self.title_vectors.shape[1]), np.float32) if out is None else out
        part[:] = 0
        for row in (rows_en, rows_zh):
            has = row >= 0
            part[has] += self.title_vectors[row[has]]
        norms = np.linalg.norm(part, axis=1, keepdims=True)
        np.divide(part, norms, out=part, where=norms > 0)
        return part

    @staticmethod
    def concat(parts: list[SectionEmbeddings], positions: np.ndarray | None = None) -> SectionEmbeddings:
        """The sections of ``parts`` one after the other; a title text in several parts keeps
        the row of its first part (needs ``title_texts``): :class:`EmbeddingParts` of them.

        Args:
            parts: emptied as they are taken (so the parts and the result are not both held).
            positions: int ``(n,)``: where row ``k`` of the concatenation goes in the result
                (a permutation; e.g. the rank of each section in section-id order). None: in turn.

        Raises:
            ValueError: ``parts`` is empty, or ``positions`` is not a permutation of ``n`` rows.
        """
        if not parts:
            raise ValueError("no embeddings to concatenate")
        _check_permutation(positions, sum(len(p.title_row) for p in parts))  # before the parts are taken
        joined = EmbeddingParts()
        while parts:
            joined.add(parts.pop(0))
        return joined.join(positions)


def _embeddings(content, title_vectors, title_row, title_zh_row, title_texts) -> SectionEmbeddings:
    """The :class:`SectionEmbeddings` of its ``__reduce__``."""
    return SectionEmbeddings(restored(content), restored(title_vectors), title_row, title_zh_row, title_texts)


def _check_permutation(positions: np.ndarray | None, n: int) -> None:
    """Raise ``ValueError`` unless ``positions`` is None or a permutation of ``range(n)``."""
    if positions is not None and (len(positions) != n or not np.array_equal(np.sort(positions), np.arange(n))):
        raise ValueError(f"positions must be a permutation of {n} rows")


class EmbeddingParts:
    """:class:`SectionEmbeddings` of consecutive chunks, joined as they come (:meth:`add`) and
    made one at the end (:meth:`join`), as :meth:`SectionEmbeddings.concat` gives them.

    Each part's title table is folded in when the part is added: a title text already seen
    keeps the row of its first part and its vector is not kept again, so a popular paper's title
    costs ``d * 4`` bytes once, not once per chunk until the end (the runner adds a part per
    chunk and keeps the content vectors on disk, so its parts have none). The content arrays of
    the parts are kept until :meth:`join`.

    Args:
        folder: when given, the title vectors go to a :class:`pipeline.vectors.VectorFile` there
            as they come (``m * d * 4`` bytes on disk instead of in memory: 160 MB for the 80k
            distinct titles of the 50k bench corpus), and the joined sections read them from it.
            None: they stay in memory.

    Attributes:
        n: sections added so far.

    Raises:
        OSError: from :meth:`add`, when the title file cannot be created or written.
    """

    def __init__(self, folder: str | Path | None = None) -> None:
        self.n = 0
        self._folder = folder
        self._file: VectorFile | None = None
        self._row_of: dict[str, int] = {}
        self._tables: list[np.ndarray] = []
        self._rows: list[np.ndarray] = []
        self._rows_zh: list[np.ndarray] = []
        self._contents: list[np.ndarray] = []

    def add(self, part: SectionEmbeddings) -> None:
        """Append the sections of ``part`` (its content an array, e.g. ``(m, 0)``; its titles
        named by ``title_texts``).

        Raises:
            ValueError: ``part`` has title vectors that ``title_texts`` does not name (e.g. a
                :meth:`join` with ``texts=False``, or :meth:`SectionEmbeddings.from_dense`):
                their rows could not be merged by text.
        """
        if len(part.title_texts) != part.title_vectors.shape[0]:
            raise ValueError(f"{part.title_vectors.shape[0]} title vectors but {len(part.title_texts)} title texts: "
                             "parts are merged by title text")
        remap = np.empty(len(part.title_texts), np.int32)
        new = []
        for k, text in enumerate(part.title_texts):
            if text not in self._row_of:
                self._row_of[text] = len(self._row_of)
                new.append(k)
            remap[k] = self._row_of[text]
        if self._folder is not None:
            if self._file is None:
                self._file = VectorFile(self._folder, part.title_vectors.shape[1])
            self._file.append(part.title_vectors[new])
        else:
            self._tables.append(part.title_vectors[new])
        for src, dst in ((part.title_row, self._rows), (part.title_zh_row, self._rows_zh)):
            dst.append(np.where(src >= 0, remap[np.maximum(src, 0)] if len(remap) else -1, -1).astype(np.int32))
        self._contents.append(part.content)
        self.n += len(part.title_row)

    def join(self, positions: np.ndarray | None = None, texts: bool = True) -> SectionEmbeddings:
        """The sections added, one part after the other, and the parts are dropped.

        Args:
            positions: int ``(n,)``: where row ``k`` of the concatenation goes in the result
                (a permutation). None: in turn.
            texts: keep the title texts (``title_texts``, needed only to concatenate the result
                again); False gives ``()``: clustering does not read them, and they are about
                120 bytes a distinct title (10 MB for the 50k bench corpus's 80k titles).

        Raises:
            ValueError: nothing was added, or ``positions`` is not a permutation of ``n`` rows.
        """
        n = self.n
        if not self._contents:
            raise ValueError("no embeddings to concatenate")
        _check_permutation(positions, n)
        if positions is None:
            positions = np.arange(n)
        content = np.empty((n, self._contents[0].shape[1]), np.float32)
        offset = 0
        while self._contents:
            part = self._contents.pop(0)
            content[positions[offset : offset + len(part)]] = part
            offset += len(part)
        title_row, title_zh_row = np.empty(n, np.int32), np.empty(n, np.int32)
        title_row[positions], title_zh_row[positions] = np.concatenate(self._rows), np.concatenate(self._rows_zh)
        table = self._file.matrix() if self._file is not None else np.concatenate(self._tables)
        kept = tuple(self._row_of) if texts else ()
        self._file, self._tables, self._rows, self._rows_zh, self._row_of, self.n = None, [], [], [], {}, 0
        return SectionEmbeddings(content, table, title_row, title_zh_row, kept)


def _titles(row: dict) -> tuple[str | None, str | None]:
    """``(English title, Chinese title)`` of a section; a ``title`` holding Chinese characters
    (a translated title filed as the title) counts as Chinese."""
    title = row.get("title") if _present(row.get("title")) else None
    title_zh = row.get("title_zh") if _present(row.get("title_zh")) else None
    if title is not None and _CJK.search(title):
        title, title_zh = None, title_zh or title
    return title, title_zh


class EmbeddingInputs(NamedTuple):
    """What :func:`embed_sections` encodes of ``n`` sections, without the sections: the runner
    writes it per chunk to a scratch file (:meth:`to_batch`) and encodes after the chunks are
    written (:func:`embedding_inputs`).

    Attributes:
        texts: ``n`` :func:`embedding_text` strings (at most ~3 short lines each).
        titles: ``n`` ``(English title, Chinese title)`` pairs (:func:`_titles`; None where missing).
    """

    texts: list[str]
    titles: list[tuple[str | None, str | None]]

    def to_batch(self) -> pa.RecordBatch:
        """As an Arrow record batch (``text``, ``title``, ``title_zh``: strings, the titles
        nullable), to wait on disk (:meth:`from_batch` gives the same values back)."""
        return pa.record_batch([pa.array(self.texts, pa.string()), pa.array([t for t, _ in self.titles], pa.string()),
                                pa.array([z for _, z in self.titles], pa.string())], names=["text", "title", "title_zh"])

    @classmethod
    def from_batch(cls, batch: pa.RecordBatch) -> EmbeddingInputs:
        """The inputs of a :meth:`to_batch` batch."""
        titles = list(zip(batch.column(1).to_pylist(), batch.column(2).to_pylist(), strict=True))
        return cls(batch.column(0).to_pylist(), titles)


def embedding_inputs(sections: pd.DataFrame) -> EmbeddingInputs:
    """The texts :func:`embed_sections` encodes for ``sections`` (rows with ``title``,
    ``title_zh``, ``summary_norm`` or ``summary``, ``text``), row for row."""
    rows = records(sections[[c for c in ("title", "title_zh", "summary_norm", "summary", "text") if c in sections]])
    return EmbeddingInputs([embedding_text(r) for r in rows], [_titles(r) for r in rows])


def embed_inputs(inputs: EmbeddingInputs, embedder: Embedder) -> SectionEmbeddings:
    """Encode :func:`embedding_inputs` (one ``encode`` call: the section texts, then each distinct
    title once).

    Returns:
        :class:`SectionEmbeddings` with ``n = len(inputs.texts)`` rows.
    """
    return submit_inputs(inputs, embedder)()


def submit_inputs(inputs: EmbeddingInputs, embedder: Embedder) -> Callable[[], SectionEmbeddings]:
    """:func:`embed_inputs`, started (:func:`pipeline.embed.submit_encode`): the returned function
    waits for the vectors and gives what :func:`embed_inputs` gives. The runner submits a chunk
    before it waits for the one before, so that the embedding processes go on with the next
    chunk while it stores the vectors of the last (the same vectors, cache and counts as
    embedding the chunks in turn: :meth:`pipeline.embed_cache.CachedEmbedder.submit`)."""
    texts, titles = inputs
    extra = list(dict.fromkeys(t for pair in titles for t in pair if t))
    pending = submit_encode(embedder, texts + extra) if texts or extra else None
    return lambda: _embedded(texts, titles, extra, pending, embedder)


def _embedded(texts: list[str], titles: list[tuple[str | None, str | None]], extra: list[str],
              pending: Callable[[], np.ndarray] | None, embedder: Embedder) -> SectionEmbeddings:
    vectors = np.asarray(pending(), dtype=np.float32) if pending is not None else np.zeros((0, 0), np.float32)
    n, dim = len(texts), (vectors.shape[1] if vectors.size else getattr(embedder, "dim", 0))
    content = vectors[:n] if n else np.zeros((0, dim), np.float32)
    table = vectors[n:] if extra else np.zeros((0, dim), np.float32)
    row_of = {t: k for k, t in enumerate(extra)}
    title_row = np.array([row_of[en] if en else -1 for en, _ in titles], np.int32)
    title_zh_row = np.array([row_of[zh] if zh else -1 for _, zh in titles], np.int32)
    return SectionEmbeddings(content, table, title_row, title_zh_row, tuple(extra))


def embed_sections(sections: pd.DataFrame, embedder: Embedder) -> SectionEmbeddings:
    """Embed every section's :func:`embedding_text` and its titles (one ``encode`` call):
    :func:`embed_inputs` of :func:`embedding_inputs`.

    Args:
        sections: rows with ``title``, ``title_zh``, ``summary_norm`` (or ``summary``), ``text``.
        embedder: any :class:`pipeline.embed.Embedder`.

    Returns:
        :class:`SectionEmbeddings` with ``n = len(sections)`` rows.
    """
    return embed_inputs(embedding_inputs(sections), embedder)


def ivf_list_count(n: int) -> int:
    """The IVF lists of :func:`_ivf_index` over ``n`` rows: ``IVF_LISTS_PER_SQRT * sqrt(n)``, at
    least 1 and at most ``n`` (the k-means needs a row per list)."""
    return max(1, min(n, int(IVF_LISTS_PER_SQRT * np.sqrt(n))))


def _scratch_npy(folder: str | Path | None, shape: tuple[int, ...], dtype=np.float32) -> tuple[np.ndarray, Path | None]:
    """An empty matrix of ``shape``: a new ``.npy`` file in ``folder`` mapped for writing, with
    its path (the caller removes it), or an array in memory (``folder`` None) and None."""
    if folder is None:
        return np.empty(shape, dtype), None
    fd, name = tempfile.mkstemp(dir=folder, prefix="dedup-", suffix=".npy")
    os.close(fd)
    return write_npy(name, shape, dtype), Path(name)


def _training_sample(matrix: np.ndarray, limit: int, folder: str | Path | None) -> tuple[np.ndarray, Path | None]:
    """The k-means training rows of :func:`_ivf_index`: all of ``matrix`` up to ``limit`` rows,
    else ``limit`` rows drawn without replacement (seed :data:`IVF_SEED`), in row order, copied
    :data:`ANN_BLOCK` at a time into a scratch ``.npy`` in ``folder`` (``(sample, path)``; in
    memory when ``folder`` is None), so faiss trains on them without a copy of its own."""
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
    """A faiss ``IndexIVFFlat`` over the rows of ``matrix`` (float32 ``(n, d)``, L2-normalized),
    inner product, for the ``with`` block.

    An inverted file (Jégou, Douze & Schmid 2011, "Product quantization for nearest neighbor
    search", IEEE TPAMI 33(1)): ``nlist = IVF_LISTS_PER_SQRT * sqrt(n)`` lists from faiss's own
    spherical k-means (``index.train``, seed :data:`IVF_SEED`) on :data:`IVF_TRAIN_PER_LIST`
    rows per list (:func:`_training_sample`), each row in its nearest list. With a ``folder``
    the lists are faiss ``OnDiskInvertedLists`` there (``faiss.contrib.ondisk.merge_ondisk`` of
    shards of :data:`IVF_SHARD_ROWS` rows, each written with ``faiss.write_index``): read through
    a memory map, so the index costs file pages, not ``n * d * 4`` bytes of the process's own
    memory. Without a folder they stay in memory.
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
    if folder is None:
        for start in range(0, n, ANN_BLOCK):
            index.add(np.ascontiguousarray(matrix[start : start + ANN_BLOCK], dtype=np.float32))
        yield index
        return
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
    ``[0, n)``) as keys ``low * n + high``: int64 ``(m,)``, sorted (:func:`_key_pairs_of` gives
    the pairs back)."""
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


def _key_pairs_of(keys: np.ndarray, n: int) -> np.ndarray:
    """The pairs of :func:`_pair_keys` keys: int64 ``(m, 2)``, each row ``(low, high)``."""
    return np.stack([keys // n, keys % n], axis=1) if keys.size else np.zeros((0, 2), np.int64)


def _neighbour_pairs(emb: np.ndarray, k: int, ann_min: int = 20_000, folder: str | Path | None = None) -> np.ndarray:
    """Pairs ``(i, j)``, ``i < j``, with ``j`` among the ``k`` nearest neighbours of ``i`` (by dot
    product of the rows of ``emb``, ``(n, d)``) or vice versa: int64 ``(m, 2)``, rows sorted
    (:func:`_neighbour_keys`, as pairs)."""
    return _key_pairs_of(_neighbour_keys(emb, k, ann_min, folder), len(emb))


def _neighbour_keys(emb: np.ndarray, k: int, ann_min: int = 20_000, folder: str | Path | None = None) -> np.ndarray:
    """The pairs of :func:`_neighbour_pairs` as :func:`_pair_keys` keys: int64 ``(m,)``, sorted
    (8 bytes a pair rather than 16), from :func:`_neighbour_index` (exact below ``ann_min``
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
    """Candidate pairs from the sections' titles, across languages, as :func:`_pair_keys` keys
    (int64 ``(m,)``, sorted; ``n = len(emb.title_row)``).

    The search runs over the *distinct* titles, not the sections: a section's title vector is
    the L2-normalized sum of its English and Chinese title vectors (:meth:`SectionEmbeddings.title_rows`),
    so the sections with the same ``(English, Chinese)`` title pair have the same vector.
    Each distinct pair is searched once for its ``k`` nearest other distinct pairs
    (:func:`_neighbour_index`; exact below ``ann_min`` distinct pairs, the IVF index from
    there), and every section with that pair becomes a candidate with the *representative* of
    each of them (the neighbour pair's first section in row order) and with its own pair's
    representative. Sections without a title take no part.

    Why not a search over the sections: a paper reported by several sources repeats its title,
    so most of a section's nearest title vectors were copies of its own (exact ties, 29% of the
    rows of the 10k bench corpus kept copies among their neighbours), which crowd out the other
    titles and tie-break arbitrarily; and the search cost grows with the copies (591,951 titled
    sections against 98,938 distinct pairs in the 50k bench corpus: a sixth of the queries, over
    IVF lists 2.4 times shorter; the title k-means and search took 10.2 s against 154.8 in
    ``make bench``). One representative per neighbour gives each section at most ``k + 1``
    candidates of its own (a representative also gets those of the sections that name its
    pair); clustering compares whole clusters once two of their members meet
    (:func:`_merge_visits`), and the copies of a title join each other through the
    representative (and through the exact title keys).

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
    matrix, path = _scratch_npy(folder if len(rep) >= ann_min else None, (len(rep), emb.title_vectors.shape[1]))
    for start in range(0, len(rep), ANN_BLOCK):
        emb._title_sums(en[start : start + ANN_BLOCK], zh[start : start + ANN_BLOCK], out=matrix[start : start + ANN_BLOCK])
    try:
        near = _neighbour_index(matrix, k, ann_min, folder)  # (distinct, k) distinct pairs, -1: none
    finally:
        del matrix
        if path is not None:
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


def _present(value) -> bool:
    return isinstance(value, str) and bool(value)


def _author_keys(authors) -> frozenset[str]:
    """Comparable author keys: the last token of a Latin name, case-folded (``Fischer Abaigar`` and
    ``F. Abaigar`` both give ``abaigar``); a CJK name whole. Lists given in different scripts
    (Chinese names vs. pinyin) share no key, so only agreement is evidence, not disagreement."""
    keys = set()
    for name in authors if authors is not None else ():
        name = str(name).strip()
        if not name:
            continue
        keys.add(name.split()[-1].casefold().strip(".") if name.isascii() else name)
    return frozenset(keys)


@functools.lru_cache(maxsize=65536)
def _folded(title: str) -> str:
    """:func:`pipeline.fields.fold_title`, computed once per title."""
    return fold_title(title)


@functools.lru_cache(maxsize=65536)
def _title_words(title: str) -> tuple[str, ...]:
    """Words of a folded-ready English title: NFKC, case-folded, British spellings folded (as
    :func:`pipeline.fields.fold_title`), split at non-alphanumerics, plural ``s`` dropped."""
    words = []
    for w in _WORD.findall(fold_title_words(title)):
        words.append(w[:-1] if len(w) > 3 and w.endswith("s") and not w.endswith("ss") else w)
    return tuple(words)


@functools.lru_cache(maxsize=65536)
def _same_word(w: str, v: str) -> bool:
    """Whether two title words are the same word up to a typo (ratio >= WORD_MATCH_RATIO).
    difflib's ``real_quick_ratio`` and ``quick_ratio`` are upper bounds of ``ratio`` (difflib
    docs), so most pairs are rejected without the full comparison; the result is the same."""
    if w == v:
        return True
    sm = SequenceMatcher(None, w, v)
    return (sm.real_quick_ratio() >= WORD_MATCH_RATIO and sm.quick_ratio() >= WORD_MATCH_RATIO
            and sm.ratio() >= WORD_MATCH_RATIO)


def english_title_similarity(a: str, b: str) -> float:
    """Similarity of two English titles in [0, 1].

    The :class:`difflib.SequenceMatcher` ratio of the folded titles
    (:func:`pipeline.fields.fold_title`), capped at :data:`TITLE_CONFLICT_SIMILARITY` when the
    titles conflict: after pairing words that are equal or nearly so (ratio >=
    :data:`WORD_MATCH_RATIO`, i.e. typos), each title keeps a word of its own (a substitution:
    "Denoising Diffusion Probabilistic Models" vs "... Implicit Models"), or the one-sided words
    include a one- or two-digit number or one of :data:`SEQUEL_WORDS` ("Llama 2", "Improved
    ..."; a year such as "(CVPR 2024)" is not a sequel marker). A title that
    only lacks words of the other (a dropped word, a missing subtitle) is not a conflict.

    Symmetric. The word check only runs when the ratio is above the cap (below it the cap
    changes nothing): :func:`_english_ratio` then :func:`_english_conflict`, each cached.
    """
    ratio = _english_ratio(a, b)
    if ratio > TITLE_CONFLICT_SIMILARITY and _english_conflict(a, b):
        return TITLE_CONFLICT_SIMILARITY
    return ratio


@functools.lru_cache(maxsize=TITLE_PAIR_CACHE)
def _english_ratio(a: str, b: str) -> float:
    """SequenceMatcher ratio of the folded titles, in sorted order (ratio() is not symmetric)."""
    fa, fb = sorted((_folded(a), _folded(b)))
    return SequenceMatcher(None, fa, fb).ratio()


def _may_be_same_length(m: int, k: int) -> bool:
    """difflib's ``real_quick_ratio`` of two words of ``m`` and ``k`` characters (``2 min(m, k) /
    (m + k)``, an upper bound of their ratio) reaches :data:`WORD_MATCH_RATIO`: the cheap first
    test of :func:`_same_word`, on the lengths alone."""
    return 2.0 * min(m, k) / (m + k) >= WORD_MATCH_RATIO


@functools.lru_cache(maxsize=1024)
def _matchable_lengths(m: int) -> tuple[int, int]:
    """The word lengths ``k`` that :func:`_may_be_same_length` accepts beside ``m`` (>= 1), as
    the interval ``(low, high)``: ``2 min(m, k) / (m + k)`` rises with ``k`` up to ``m`` and falls
    after it, so they are the lengths from about ``m R / (2 - R)`` to ``m (2 - R) / R`` (``R`` =
    :data:`WORD_MATCH_RATIO`); the ends are found with the predicate itself, so it decides them."""
    r = WORD_MATCH_RATIO
    low = max(1, math.floor(m * r / (2 - r)) - 1)
    while not _may_be_same_length(m, low):
        low += 1
    high = math.ceil(m * (2 - r) / r) + 1
    while not _may_be_same_length(m, high):
        high -= 1
    return low, high


@functools.lru_cache(maxsize=TITLE_INDEX_CACHE)
def _word_index(title: str) -> tuple[tuple[str, ...], frozenset[str], tuple[tuple[int, tuple[str, ...]], ...]]:
    """:func:`_title_words` of an English title, as a set, and grouped by length (``(length,
    words)`` in order of first appearance): what :func:`_one_sided` needs of the other title,
    built once per title rather than once per pair."""
    words = _title_words(title)
    by_length: dict[int, list[str]] = {}
    for v in words:
        by_length.setdefault(len(v), []).append(v)
    return words, frozenset(words), tuple((k, tuple(vs)) for k, vs in by_length.items())


def _one_sided(words: Sequence[str], other_set: Container[str],
               other_by_length: Sequence[tuple[int, Sequence[str]]], first: bool = False) -> list[str]:
    """The words of ``words`` (in order, repeats kept) that the other title has neither equal
    (``other_set``) nor nearly so (:func:`_same_word`); with ``first``, only the first of them
    (the search stops there). The typo test only runs on the other title's words
    (``other_by_length``: :func:`_word_index`) whose length can reach :data:`WORD_MATCH_RATIO`
    (:func:`_matchable_lengths`): the same words as testing every pair."""
    out: list[str] = []
    for w in words:
        if w in other_set:
            continue
        low, high = _matchable_lengths(len(w))
        for k, vs in other_by_length:
            if low <= k <= high and any(_same_word(w, v) for v in vs):
                break
        else:
            out.append(w)
            if first:
                break
    return out


def _is_sequel_word(word: str) -> bool:
    """A word that tells a sequel or a variant apart: a one- or two-digit number ("Llama 2"; a
    year is not one) or one of :data:`SEQUEL_WORDS`."""
    return (word.isdigit() and len(word) <= 2) or word in SEQUEL_WORDS


@functools.lru_cache(maxsize=TITLE_PAIR_CACHE)
def _english_conflict(a: str, b: str) -> bool:
    """Whether two English titles conflict (:func:`english_title_similarity`): each keeps a
    word the other lacks, or the one-sided words hold a sequel marker. Equal words are paired by
    set lookup first; the typo test (:func:`_same_word`) only runs on length-compatible words."""
    wa, set_a, by_length_a = _word_index(a)
    wb, set_b, by_length_b = _word_index(b)
    only_a = _one_sided(wa, set_b, by_length_b)
    if any(_is_sequel_word(w) for w in only_a):
        return True
    # b's side decides: beside a one-sided word of a, any one-sided word of b is a conflict;
    # without one, only a one-sided sequel word of b is. The search stops at the first.
    candidates = wb if only_a else [w for w in wb if _is_sequel_word(w)]
    return bool(candidates) and bool(_one_sided(candidates, set_a, by_length_a, first=True))


@functools.lru_cache(maxsize=TITLE_PAIR_CACHE)
def _chinese_pair_similarity(a: str, b: str) -> float:
    """SequenceMatcher ratio of two folded Chinese titles, ``a <= b`` (ratio() is not symmetric:
    the order is fixed), computed once per pair of titles."""
    return SequenceMatcher(None, a, b).ratio()


@functools.cache
def _indel_ratio():
    """``rapidfuzz.process.cpdist`` with the ``fuzz.ratio`` scorer, or None without rapidfuzz."""
    try:
        from rapidfuzz import fuzz, process
    except ImportError:  # the bound falls back to the string lengths
        return None
    return functools.partial(process.cpdist, scorer=fuzz.ratio, dtype=np.float64, workers=1)


def _ratio_upper_bounds(a: list[str], b: list[str]) -> np.ndarray:
    """Upper bounds of ``SequenceMatcher(None, a[t], b[t]).ratio()``: float64 ``(len(a),)``.

    The ratio is ``2 M / (|a| + |b|)`` with ``M`` the characters of difflib's matching blocks,
    which are increasing in both strings, i.e. a common subsequence, so ``M`` is at most the
    longest common subsequence: the normalized Indel similarity ``2 LCS / (|a| + |b|)``
    (rapidfuzz ``fuzz.ratio`` / 100, a bit-parallel C implementation, Hyyrö 2004) and
    ``2 min(|a|, |b|) / (|a| + |b|)`` (difflib's ``real_quick_ratio``) bound it, as does any
    junk heuristic (it only removes matches). Exact, so a pair pruned by the bound is below the
    ratio's threshold too; ``1e-9`` covers the float rounding of the percentage.
    """
    la = np.fromiter(map(len, a), np.float64, len(a))
    lb = np.fromiter(map(len, b), np.float64, len(b))
    total = la + lb
    bound = np.divide(2.0 * np.minimum(la, lb), total, out=np.ones_like(total), where=total > 0)
    cpdist = _indel_ratio()
    if cpdist is not None and len(a):
        indel = cpdist(a, b) / 100.0 + 1e-9
        bound = np.where((la > 0) & (lb > 0), np.minimum(bound, indel), bound)
    return bound


def _codes(values: Sequence) -> tuple[np.ndarray, list]:
    """Integer codes of hashable values: ``(codes, table)`` with ``codes`` int64 ``(len(values),)``
    (equal values, equal codes; ``-1`` for None and empty values) and ``table[code]`` the value."""
    index: dict = {}
    codes = np.fromiter((index.setdefault(v, len(index)) if v is not None and v != frozenset() else -1
                         for v in values), np.int64, len(values))
    return codes, list(index)


def _first_appearance(raw: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Renumber integer ids (``-1``: missing) in order of first appearance, as :func:`_codes`
    numbers values: ``(codes, ids)``, ``codes`` int64 like ``raw`` and ``ids[code]`` the raw id
    of each code."""
    raw = np.asarray(raw, dtype=np.int64)
    valid = raw >= 0
    values = raw[valid]
    ids, first = np.unique(values, return_index=True)
    ids = ids[np.argsort(first, kind="stable")]
    new_of = np.full(int(ids.max()) + 1 if ids.size else 0, -1, np.int64)
    new_of[ids] = np.arange(len(ids))
    codes = np.full(len(raw), -1, np.int64)
    codes[valid] = new_of[values]
    return codes, ids


def _arrow_column(frame: pd.DataFrame, name: str) -> pa.Array | None:
    """Column ``name`` of ``frame`` as one Arrow array (pandas' missing markers: null; an absent
    column: all null), or None when Arrow cannot hold its values (mixed types, lone surrogates)."""
    if name not in frame.columns:
        return pa.nulls(len(frame))
    try:
        array = pa.array(frame[name], from_pandas=True)
    except (pa.ArrowException, TypeError, ValueError, UnicodeError):
        return None
    return array.combine_chunks() if isinstance(array, pa.ChunkedArray) else array


def _is_text(dtype: pa.DataType) -> bool:
    return pa.types.is_string(dtype) or pa.types.is_large_string(dtype)


def _dictionary_ids(array: pa.Array) -> tuple[np.ndarray, list]:
    """Arrow's dictionary encoding of ``array``: ``(ids, dictionary)``, ``ids`` int64 ``(n,)``
    (``-1`` for null) into the Python list of its distinct values."""
    encoded = array.dictionary_encode()
    ids = np.asarray(encoded.indices.fill_null(-1).to_numpy(zero_copy_only=False), dtype=np.int64)
    return ids, encoded.dictionary.to_pylist()


def _string_codes(frame: pd.DataFrame, name: str, empty_is_missing: bool = True) -> tuple[np.ndarray, list] | None:
    """:func:`_codes` of a string column's values (missing and, when ``empty_is_missing``, empty
    strings: ``-1``), computed by Arrow's dictionary encoding without a Python object per row:
    the same ``(codes, table)`` as ``_codes`` of the values. None when the column does not hold
    only strings and missing markers, or, without ``empty_is_missing``, holds a missing marker
    (``_codes`` of the raw values gives NaN and ``pd.NA`` codes of their own): the caller then
    codes the Python values."""
    array = _arrow_column(frame, name)
    if array is None:
        return None
    if not empty_is_missing and array.null_count:  # a missing marker is a value there (see _codes)
        return None
    if pa.types.is_null(array.type):
        return np.full(len(array), -1, np.int64), []
    if not _is_text(array.type):
        return None
    raw, dictionary = _dictionary_ids(array)
    keep = np.array([bool(v) or not empty_is_missing for v in dictionary], dtype=bool)
    raw = np.where(raw >= 0, np.where(keep, np.arange(len(keep)), -1)[np.maximum(raw, 0)], -1) if len(keep) else raw
    codes, ids = _first_appearance(raw)
    return codes, [dictionary[k] for k in ids.tolist()]


class _KeySets(Sequence):
    """Sets of strings held as integer ids into one table of their distinct strings, in CSR
    layout (set ``k``'s ids, ascending: ``ids[offsets[k]:offsets[k + 1]]``): about 4 bytes a
    member instead of a Python frozenset a set (the author keys of the 595,757 sections of the 50k
    bench corpus, 94,815 distinct sets: 52 MB as frozensets, held through every step of
    clustering). ``sets[k]`` gives set ``k`` back as a frozenset of its strings; :meth:`jaccard`
    compares sets by their ids, many pairs at once.

    Attributes:
        keys: the distinct strings (``ids`` index it).
        ids: int32 ``(total members,)``; offsets: int64 ``(len(sets) + 1,)``.
    """

    def __init__(self, keys: list[str], ids: np.ndarray, offsets: np.ndarray):
        self.keys, self.ids, self.offsets = keys, ids, offsets

    @classmethod
    def code(cls, sets: Iterable[frozenset[str]]) -> tuple[np.ndarray, _KeySets]:
        """:func:`_codes` of ``sets`` (equal sets, equal codes in order of first appearance; an
        empty set: ``-1``) with the table as a :class:`_KeySets`: ``(codes, table)``, ``codes``
        int64 ``(len(sets),)``. Reads ``sets`` once (a generator is not held)."""
        import array

        key_id: dict[str, int] = {}
        set_code: dict[tuple[int, ...], int] = {}
        ids, offsets, codes = array.array("i"), array.array("q", [0]), array.array("q")
        for keys in sets:
            if not keys:
                codes.append(-1)
                continue
            members = tuple(sorted({key_id.setdefault(k, len(key_id)) for k in keys}))  # a set, whatever came
            code = set_code.get(members)
            if code is None:
                code = set_code[members] = len(set_code)
                ids.extend(members)
                offsets.append(len(ids))
            codes.append(code)
        return (np.frombuffer(codes, dtype=np.int64).copy(),
                cls(list(key_id), np.frombuffer(ids, dtype=np.int32).copy(), np.frombuffer(offsets, dtype=np.int64).copy()))

    def __len__(self) -> int:
        return len(self.offsets) - 1

    def __getitem__(self, k):
        if isinstance(k, slice):
            return [self[i] for i in range(*k.indices(len(self)))]
        at = operator.index(k)  # (an int; a float or a str is a TypeError, as for a list)
        if at < 0:
            at += len(self)
        if not 0 <= at < len(self):
            raise IndexError(f"set {k} of {len(self)}")
        return frozenset(self.keys[i] for i in self.ids[self.offsets[at] : self.offsets[at + 1]].tolist())

    def jaccard(self, x: np.ndarray, y: np.ndarray) -> np.ndarray:
        """``len(X & Y) / len(X | Y)`` of sets ``x[t]`` and ``y[t]`` (int arrays of set numbers
        in ``0..len - 1``, of equal length; the sets non-empty): float64 ``(len(x),)``, the value
        Python's set operations give (exact counts, one correctly rounded division). The members
        of every pair are tagged with the pair's position and matched by one sorted intersection,
        for pairs of at most :data:`JACCARD_MEMBERS` members together at a time (so that long
        lists shared by many sections do not make the arrays large).

        Raises:
            IndexError: a set number outside ``0..len - 1``.
            ValueError: ``x`` and ``y`` differ in length.
        """
        x, y = np.asarray(x, dtype=np.int64), np.asarray(y, dtype=np.int64)
        if len(x) != len(y):
            raise ValueError(f"{len(x)} and {len(y)} set numbers")
        for sets in (x, y):
            if sets.size and (sets.min() < 0 or sets.max() >= len(self)):
                raise IndexError(f"set numbers outside 0..{len(self) - 1}")
        members = np.cumsum(self.offsets[x + 1] - self.offsets[x] + self.offsets[y + 1] - self.offsets[y])
        out = np.empty(len(x))
        start = 0
        while start < len(x):  # whole pairs, at least one, up to JACCARD_MEMBERS members
            base = members[start - 1] if start else 0
            stop = max(start + 1, int(np.searchsorted(members, base + JACCARD_MEMBERS, side="right")))
            out[start:stop] = self._jaccard(x[start:stop], y[start:stop])
            start = stop
        return out

    def _jaccard(self, x: np.ndarray, y: np.ndarray) -> np.ndarray:
        """:meth:`jaccard` of one slice of pairs, all at once."""
        width = np.int64(max(len(self.keys), 1))

        def tagged(sets: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
            sizes = self.offsets[sets + 1] - self.offsets[sets]
            pair = np.repeat(np.arange(len(sets), dtype=np.int64), sizes)
            # each member's position in ids: its set's offset plus its rank in the set
            at = np.arange(int(sizes.sum()), dtype=np.int64) - np.repeat(np.cumsum(sizes) - sizes, sizes)
            return pair * width + self.ids[np.repeat(self.offsets[sets], sizes) + at], sizes

        tags_x, size_x = tagged(x)
        tags_y, size_y = tagged(y)
        shared = np.intersect1d(tags_x, tags_y, assume_unique=True) // width
        both = np.bincount(shared, minlength=len(x)).astype(np.int64)
        return both / (size_x + size_y - both)


#: :meth:`_KeySets.jaccard` matches the members of at most this many pairs' sets together at a
#: time (its arrays: a few int64 per member, tens of MB).
JACCARD_MEMBERS = 1 << 20

#: Separator of the author names joined by :func:`_author_codes` (a control character: a name
#: holding one is coded the slow way).
_NAME_SEPARATOR = "\x1f"


def _author_codes(frame: pd.DataFrame) -> tuple[np.ndarray, _KeySets] | None:
    """:func:`_codes` of :func:`_author_keys` of each row's ``authors`` list, the table as a
    :class:`_KeySets`, with :func:`_author_keys` computed once per distinct list (Arrow joins
    each list's names and dictionary-encodes them) instead of once per row. None when the
    column is not lists of strings without missing names (the caller then codes the Python
    values)."""
    array = _arrow_column(frame, "authors")
    if array is None:
        return None
    if pa.types.is_null(array.type):
        return np.full(len(array), -1, np.int64), _KeySets.code(())[1]
    if not (pa.types.is_list(array.type) or pa.types.is_large_list(array.type)) or not pa.types.is_string(array.type.value_type):
        return None  # (Arrow's binary_join has no kernel for lists of large_string)
    import pyarrow.compute as pc

    names = pc.list_flatten(array)
    if names.null_count or (len(names) and pc.any(pc.match_substring(names, _NAME_SEPARATOR)).as_py()):
        return None
    raw, joined = _dictionary_ids(pc.binary_join(array, _NAME_SEPARATOR))
    lists, ids = _first_appearance(raw)  # the distinct lists in order of first appearance
    list_key, table = _KeySets.code(_author_keys(joined[raw_id].split(_NAME_SEPARATOR) if joined[raw_id] else [])
                                    for raw_id in ids.tolist())
    codes = np.where(lists >= 0, list_key[np.maximum(lists, 0)], -1) if len(ids) else lists
    return codes, table


def _int_array(values: np.ndarray):
    """``values`` as an ``array.array`` of 8-byte ints (indexing gives Python ints, without a
    Python object per element held)."""
    import array

    out = array.array("q")
    out.frombytes(np.ascontiguousarray(values, dtype=np.int64).tobytes())
    return out


def _folded_codes(title_code: np.ndarray, table: list) -> tuple[np.ndarray, list, np.ndarray]:
    """Codes of the folded titles (:func:`_folded`; an empty fold is missing) of sections whose
    titles have codes ``title_code`` (-1: none) into ``table`` (in order of first appearance):
    ``(codes, folded_table, code_of)``, the first two as :func:`_codes` of the per-section folded
    values; ``code_of`` int64 ``(len(table),)`` is the folded code of each entry of ``table``
    (-1: an empty fold), by which the folds of ``table`` read as ``folded_table`` strings without
    a second copy of them (:class:`_Decoded`)."""
    index: dict[str, int] = {}
    code_of = np.array([index.setdefault(f, len(index)) if (f := _folded(t)) else -1 for t in table], dtype=np.int64)
    codes = np.where(title_code >= 0, code_of[np.maximum(title_code, 0)], -1) if len(table) else np.full(len(title_code), -1, np.int64)
    return codes, list(index), code_of


class _Decoded(Sequence):
    """A per-section column held as integer codes and a table of the distinct values:
    ``column[i]`` is ``table[codes[i]]``, or ``missing`` where the code is -1. It reads like the
    list of values without holding a Python object per section."""

    def __init__(self, codes: np.ndarray, table: Sequence, missing=None):
        self._codes, self._table, self._missing = codes, table, missing

    def __len__(self) -> int:
        return len(self._codes)

    def __getitem__(self, i):
        if isinstance(i, slice):
            return [self[k] for k in range(*i.indices(len(self)))]
        code = self._codes[i]
        return self._table[code] if code >= 0 else self._missing


class _Optional(Sequence):
    """Per-section ints with a presence mask: ``column[i]`` is ``int(values[i])``, or None where
    ``present[i]`` is false (no Python object per section)."""

    def __init__(self, values: np.ndarray, present: np.ndarray):
        self._values, self._present = values, present

    def __len__(self) -> int:
        return len(self._values)

    def __getitem__(self, i):
        if isinstance(i, slice):
            return [self[k] for k in range(*i.indices(len(self)))]
        return int(self._values[i]) if self._present[i] else None


class PairScorer:
    """Pair scores and constraints over the sections of one run (see the module docstring).

    :meth:`scores` scores arrays of pairs at once (numpy over integer codes of the sections' keys,
    titles, authors, venues and years; the string comparisons once per distinct pair of strings);
    :meth:`score` is one pair of it, cached.

    Memory: per section only the int64 codes below (about 60 bytes), plus one copy of each
    distinct value (the author key sets as integer ids, :class:`_KeySets`); the per-section
    attributes read from them (:class:`_Decoded`).

    Attributes (one entry per section, ``n = len(sections)``, in row order):
        doc, arxiv, title, folded, folded_zh, venue: ``doc_id``, arXiv id, English title (see
            :func:`_titles`), folded English / Chinese title (:func:`pipeline.fields.fold_title`)
            and venue; None where missing.
        has_summary: bool; authors: :func:`_author_keys` (frozensets, built when read from the
            :class:`_KeySets` table; empty where none); year:
            int or None.
        doc_code, arxiv_code, folded_code, folded_zh_code, title_code, author_code, venue_code:
            int64 ``(n,)`` codes of the above (equal values, equal codes; ``-1`` where missing).
    """

    def __init__(self, sections: pd.DataFrame, emb: SectionEmbeddings, embed_weight: float):
        self.emb = emb
        self.w = embed_weight
        from .stage import present

        n = len(sections)

        def column(name: str) -> list:  # as stage.records gives it (missing markers: None), per column
            return [present(v) for v in sections[name].tolist()] if name in sections.columns else [None] * n

        # each column becomes codes and a table of its distinct values; string columns through
        # Arrow (no Python object per section: the objects of a per-row pass stay scattered over
        # the heap), other values through Python as before, one column at a time
        doc = _string_codes(sections, "doc_id", empty_is_missing=False)
        self.doc_code, doc_table = doc if doc is not None else _codes(sections["doc_id"].tolist())
        arxiv = _string_codes(sections, "arxiv_id")
        self.arxiv_code, arxiv_table = (arxiv if arxiv is not None else
                                        _codes([v if _present(v) else None for v in column("arxiv_id")]))
        title_code, self._title_table, zh_code, zh_table = self._title_codes(sections, column)
        # folded titles: each distinct title folded once; a folded value's first appearance is
        # that of its first title, so coding the distinct titles in code order numbers them as
        # coding every section would
        self.folded_code, folded_table, fold_of_title = _folded_codes(title_code, self._title_table)
        self.title_code = title_code
        self.folded_zh_code, self._zh_table, _ = _folded_codes(zh_code, zh_table)
        del zh_code, zh_table
        # the fold of each English title ("" when empty), the strings of folded_table shared
        self._title_folded = _Decoded(fold_of_title, folded_table, "")
        self._summary = self._summary_present(sections, column)
        authors = _author_codes(sections)
        self.author_code, self._author_table = (authors if authors is not None else
                                                _KeySets.code(_author_keys(v) for v in column("authors")))
        self._year, self._has_year = self._years(sections, column)
        venue = _string_codes(sections, "venue")
        self.venue_code, venue_table = (venue if venue is not None else
                                        _codes([v if _present(v) else None for v in column("venue")]))
        assert emb.content.shape[0] == n, "one embedding row per section"
        self.doc = _Decoded(self.doc_code, doc_table)
        self.arxiv = _Decoded(self.arxiv_code, arxiv_table)
        self.title = _Decoded(self.title_code, self._title_table)
        self.folded = _Decoded(self.folded_code, folded_table)
        self.folded_zh = _Decoded(self.folded_zh_code, self._zh_table)
        self.venue = _Decoded(self.venue_code, venue_table)
        self.authors = _Decoded(self.author_code, self._author_table, frozenset())
        self.has_summary = self._summary
        self.year = _Optional(self._year, self._has_year)
        self._title_vec = emb.title_row >= 0
        self._title_zh_vec = emb.title_zh_row >= 0
        self._scores: dict[tuple[int, int], float] = {}

    def __len__(self) -> int:
        """The number of sections."""
        return len(self.doc_code)

    @staticmethod
    def _title_codes(sections: pd.DataFrame, column: Callable[[str], list]
                     ) -> tuple[np.ndarray, list, np.ndarray, list]:
        """Codes and tables of the English and the Chinese title of each section (:func:`_titles`:
        a ``title`` with Chinese characters counts as the Chinese title when there is none):
        ``(title_code, title_table, zh_code, zh_table)`` as :func:`_codes` of the per-section
        values. The Chinese-character test runs once per distinct title."""
        title, zh = _string_codes(sections, "title"), _string_codes(sections, "title_zh")
        if title is None or zh is None:
            titles = [_titles({"title": t, "title_zh": z}) for t, z in zip(column("title"), column("title_zh"), strict=True)]
            title_code, title_table = _codes([t[0] for t in titles])
            zh_code, zh_table = _codes([t[1] for t in titles])
            return title_code, title_table, zh_code, zh_table
        (t_code, t_table), (z_code, z_table) = title, zh
        chinese = np.array([bool(_CJK.search(t)) for t in t_table], dtype=bool)
        has_t = t_code >= 0
        t_chinese = has_t & chinese[np.maximum(t_code, 0)] if len(t_table) else has_t
        title_code, ids = _first_appearance(np.where(has_t & ~t_chinese, t_code, -1))
        title_table = [t_table[k] for k in ids.tolist()]
        # the Chinese title: title_zh, else a Chinese title; one id per distinct string of both
        zh_id: dict[str, int] = {}
        z_ids = np.array([zh_id.setdefault(z, len(zh_id)) for z in z_table], dtype=np.int64)
        t_ids = np.array([zh_id.setdefault(t, len(zh_id)) if c else -1 for t, c in zip(t_table, chinese, strict=True)],
                         dtype=np.int64)
        raw = np.where(z_code >= 0, z_ids[np.maximum(z_code, 0)] if len(z_ids) else -1,
                       np.where(t_chinese, t_ids[np.maximum(t_code, 0)] if len(t_ids) else -1, -1))
        zh_code, ids = _first_appearance(raw)
        strings = list(zh_id)
        return title_code, title_table, zh_code, [strings[k] for k in ids.tolist()]

    @staticmethod
    def _summary_present(sections: pd.DataFrame, column: Callable[[str], list]) -> np.ndarray:
        """Per section whether ``summary_norm`` or ``summary`` is a non-empty string: bool ``(n,)``."""
        arrays = [_arrow_column(sections, name) for name in ("summary_norm", "summary")]
        if all(a is not None and (pa.types.is_null(a.type) or _is_text(a.type)) for a in arrays):
            import pyarrow.compute as pc

            out = np.zeros(len(sections), dtype=bool)
            for a in arrays:
                if not pa.types.is_null(a.type):
                    out |= np.asarray(pc.fill_null(pc.greater(pc.binary_length(a), 0), False))
            return out
        return np.array([_present(a) or _present(b) for a, b in
                         zip(column("summary_norm"), column("summary"), strict=True)], dtype=bool)

    @staticmethod
    def _years(sections: pd.DataFrame, column: Callable[[str], list]) -> tuple[np.ndarray, np.ndarray]:
        """``(year, has_year)``: int64 and bool ``(n,)``, the year as ``int(value)`` (0 where
        missing). A numeric column is read as numpy; anything else value by value."""
        values = sections["year"] if "year" in sections.columns else None
        if values is not None and (pd.api.types.is_float_dtype(values.dtype) or pd.api.types.is_integer_dtype(values.dtype)):
            floats = values.to_numpy(dtype=np.float64, na_value=np.nan)
            has = ~np.isnan(floats)
            if np.isfinite(floats[has]).all() and (np.abs(floats[has]) < 2.0**53).all():
                return np.where(has, floats, 0).astype(np.int64), has
        years = [int(v) if v is not None else None for v in column("year")]
        return (np.array([y if y is not None else 0 for y in years], dtype=np.int64),
                np.array([y is not None for y in years], dtype=bool))

    def cannot_link(self, i: int, j: int) -> bool:
        """Whether ``i`` and ``j`` may never be one paper: different arXiv ids, or one document
        without a shared exact key."""
        a, b = self.arxiv_code[i], self.arxiv_code[j]
        if a >= 0 and b >= 0 and a != b:
            return True
        return self.doc_code[i] == self.doc_code[j] and not self.exact(i, j)

    def title_similarity(self, i: int, j: int) -> float | None:
        """Same-language title similarity when both have a title in one language (English:
        :func:`english_title_similarity`; Chinese: SequenceMatcher ratio of the folded titles);
        else the cosine of the title embeddings across languages; None without titles."""
        sims = []
        if self.folded_code[i] >= 0 and self.folded_code[j] >= 0:  # English titles that fold to something
            sims.append(english_title_similarity(self.title[i], self.title[j]))
        if self.folded_zh[i] and self.folded_zh[j]:
            sims.append(_chinese_pair_similarity(*sorted((self.folded_zh[i], self.folded_zh[j]))))
        if sims:
            return max(sims)
        e = self.emb
        cross = [float(e.title_vectors[x[i]] @ e.title_vectors[y[j]])
                 for x, y in ((e.title_row, e.title_zh_row), (e.title_zh_row, e.title_row)) if x[i] >= 0 and y[j] >= 0]
        return max(cross) if cross else None

    def exact(self, i: int, j: int) -> bool:
        """Whether ``i`` and ``j`` share an exact key: the arXiv id or a folded title."""
        return any(code[i] >= 0 and code[i] == code[j] for code in (self.arxiv_code, self.folded_code, self.folded_zh_code))

    def exact_pairs(self, i: np.ndarray, j: np.ndarray) -> np.ndarray:
        """:meth:`exact` of the pairs ``(i[t], j[t])``: bool ``(len(i),)``."""
        out = np.zeros(len(i), dtype=bool)
        for code in (self.arxiv_code, self.folded_code, self.folded_zh_code):
            a, b = code[i], code[j]
            out |= (a >= 0) & (a == b)
        return out

    def score(self, i: int, j: int) -> float:
        """The pair score of sections ``i`` and ``j`` in [0, 1], ``-inf`` when cannot-linked
        (symmetric; :meth:`scores` of the one pair, cached)."""
        key = (i, j) if i < j else (j, i)
        cached = self._scores.get(key)
        if cached is None:
            cached = self._scores[key] = float(self.scores(np.array([key[0]]), np.array([key[1]]))[0])
        return cached

    def scores(self, i: np.ndarray, j: np.ndarray, exact_from: float | None = None) -> np.ndarray:
        """Pair scores of the sections ``(i[t], j[t])`` (int arrays of equal length): float64
        ``(len(i),)`` in [0, 1], ``-inf`` for a cannot-linked pair, 1.0 for an exact key
        (module docstring, step 3), in numpy batches of :data:`SCORE_BATCH` pairs.

        The content cosine of each pair is a float32 dot product of its two rows (a stacked
        ``matmul``, bit-identical to ``content[i] @ content[j]``); the title similarities are
        computed once per distinct pair of titles (and cached across calls).

        Args:
            exact_from: when given, a pair whose score is provably below it gets that upper bound
                instead of its score (both below ``exact_from``): the title similarity is then
                bounded by :func:`_ratio_upper_bounds` instead of computed. Scores at or above
                ``exact_from`` are exact. Clustering only needs the pairs above its threshold.
                ``math.inf``: every pair gets the first, cheapest bound (the Indel ratio's),
                an upper bound of its score (exact where no title pair is compared as strings):
                what the merge loop tries its averages with first (:func:`_merge_visits`).
        """
        i, j = np.asarray(i, dtype=np.int64), np.asarray(j, dtype=np.int64)
        lo, hi = np.minimum(i, j), np.maximum(i, j)
        out = np.empty(len(lo), dtype=np.float64)
        for s in range(0, len(lo), SCORE_BATCH):
            out[s : s + SCORE_BATCH] = self._score_batch(lo[s : s + SCORE_BATCH], hi[s : s + SCORE_BATCH], exact_from)
        return out

    def _score_batch(self, a: np.ndarray, b: np.ndarray, exact_from: float | None) -> np.ndarray:
        exact = self.exact_pairs(a, b)
        xa, xb = self.arxiv_code[a], self.arxiv_code[b]
        cannot = ((xa >= 0) & (xb >= 0) & (xa != xb)) | ((self.doc_code[a] == self.doc_code[b]) & ~exact)
        out = np.where(cannot, -np.inf, 1.0)
        rest = np.flatnonzero(~exact & ~cannot)
        if not rest.size:
            return out
        a, b = a[rest], b[rest]
        content = self.emb.content
        cos = np.matmul(content[a][:, None, :], content[b][:, :, None])[:, 0, 0].astype(np.float64)
        ea, eb = self.title_code[a], self.title_code[b]
        za, zb = self.folded_zh_code[a], self.folded_zh_code[b]
        # an English title that folds to nothing ("!!!", "---") is not compared as a string (two
        # empty folds have ratio 1.0), as it is no exact key: the content decides
        en = (self.folded_code[a] >= 0) & (self.folded_code[b] >= 0)
        zh = (za >= 0) & (zb >= 0)
        by_string = en | zh
        title_sim = np.full(len(a), np.nan)
        cross = np.flatnonzero(~by_string)  # no title pair in one language: title vectors across
        if cross.size:
            title_sim[cross] = self._cross_title_cosines(a[cross], b[cross])
        bonus = self._author_bonus(a, b)
        exact_title = by_string
        if exact_from is not None and 0.0 <= self.w <= 1.0 and by_string.any():  # score monotone in title_sim
            # ever tighter and dearer upper bounds of the title similarity (Indel ratio, then the
            # English ratio before its word-conflict cap), each only for the pairs the previous
            # one could not put below exact_from
            for en_fn, en_table, zh_fn in ((_ratio_upper_bounds, self._title_folded, _ratio_upper_bounds),
                                           (self._english_ratios, self._title_table, self._chinese_sims)):
                bound = np.fmax(self._pair_sims(ea, eb, en & exact_title, en_table, en_fn),
                                self._pair_sims(za, zb, zh & exact_title, self._zh_table, zh_fn))
                title_sim = np.where(exact_title, bound, title_sim)
                exact_title = exact_title & (self._combine(a, b, cos, title_sim, bonus) >= exact_from)
                if not exact_title.any():
                    break
        if exact_title.any():
            title_sim[exact_title] = np.fmax(
                self._pair_sims(ea, eb, en & exact_title, self._title_table, self._english_sims),
                self._pair_sims(za, zb, zh & exact_title, self._zh_table, self._chinese_sims))[exact_title]
        out[rest] = self._combine(a, b, cos, title_sim, bonus)
        return out

    def _combine(self, a: np.ndarray, b: np.ndarray, cos: np.ndarray, title_sim: np.ndarray,
                 bonus: np.ndarray) -> np.ndarray:
        """The score from its parts, in the order of the scalar formula (so bit-identical):
        title similarity (NaN: none) weighted with the cosine, author bonus, venue and year
        penalties, clipped to [0, 1]."""
        has_title = ~np.isnan(title_sim)
        both_summaries = self._summary[a] & self._summary[b]
        with np.errstate(invalid="ignore"):
            weighted = self.w * cos + (1.0 - self.w) * title_sim
        # a bare mention: the content vector is its title again, the titles decide
        score = np.where(has_title, np.where(both_summaries, weighted, title_sim), cos)
        score = score + np.where(bonus, AUTHOR_BONUS, 0.0)
        va, vb = self.venue_code[a], self.venue_code[b]
        score = score - np.where((va >= 0) & (vb >= 0) & (va != vb), VENUE_CONFLICT_PENALTY, 0.0)
        years = self._has_year[a] & self._has_year[b] & (np.abs(self._year[a] - self._year[b]) > 1)
        score = score - np.where(years, YEAR_CONFLICT_PENALTY, 0.0)
        return np.minimum(1.0, np.maximum(0.0, score))

    def _cross_title_cosines(self, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        """Max over (English title of one, Chinese title of the other) of the title-vector cosine:
        float64 ``(len(a),)``, NaN where neither combination has both vectors."""
        e = self.emb
        out = np.full(len(a), np.nan)
        for x, y, hx, hy in ((e.title_row, e.title_zh_row, self._title_vec, self._title_zh_vec),
                             (e.title_zh_row, e.title_row, self._title_zh_vec, self._title_vec)):
            t = np.flatnonzero(hx[a] & hy[b])
            if t.size:
                va, vb = e.title_vectors[x[a[t]]], e.title_vectors[y[b[t]]]
                cos = np.matmul(va[:, None, :], vb[:, :, None])[:, 0, 0].astype(np.float64)
                out[t] = np.fmax(out[t], cos)
        return out

    @staticmethod
    def _pair_sims(ca: np.ndarray, cb: np.ndarray, mask: np.ndarray, table: Sequence, fn) -> np.ndarray:
        """``fn`` over the distinct string pairs ``(table[ca[t]], table[cb[t]])`` where ``mask``
        (codes ordered low first: every similarity here is symmetric), spread back to the pairs:
        float64 ``(len(ca),)``, NaN outside ``mask``."""
        return PairScorer._pair_values(ca, cb, mask, len(table), lambda x, y: fn(
            [table[k] for k in x.tolist()], [table[k] for k in y.tolist()]))

    @staticmethod
    def _pair_values(ca: np.ndarray, cb: np.ndarray, mask: np.ndarray, size: int, fn) -> np.ndarray:
        """``fn(x, y)`` (int64 code arrays, one entry per distinct pair, ``x <= y``) over the
        distinct code pairs ``(ca[t], cb[t])`` where ``mask`` (codes below ``size``), spread back
        to the pairs: float64 ``(len(ca),)``, NaN outside ``mask``."""
        out = np.full(len(ca), np.nan)
        t = np.flatnonzero(mask)
        if not t.size:
            return out
        lo, hi = np.minimum(ca[t], cb[t]), np.maximum(ca[t], cb[t])
        keys, inverse = np.unique(lo * size + hi, return_inverse=True)
        out[t] = np.asarray(fn(keys // size, keys % size), dtype=np.float64)[inverse.ravel()]
        return out

    @staticmethod
    def _english_sims(a: list[str], b: list[str]) -> list[float]:
        return [english_title_similarity(x, y) for x, y in zip(a, b, strict=True)]

    @staticmethod
    def _english_ratios(a: list[str], b: list[str]) -> list[float]:
        return [_english_ratio(x, y) for x, y in zip(a, b, strict=True)]

    @staticmethod
    def _chinese_sims(a: list[str], b: list[str]) -> list[float]:
        return [_chinese_pair_similarity(*sorted((x, y))) for x, y in zip(a, b, strict=True)]

    def _author_bonus(self, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        """Whether the author keys of each pair overlap by Jaccard >= :data:`AUTHOR_MIN_OVERLAP`
        (both lists non-empty): bool ``(len(a),)``, computed once per distinct pair of lists."""
        ca, cb = self.author_code[a], self.author_code[b]
        sims = self._pair_values(ca, cb, (ca >= 0) & (cb >= 0), len(self._author_table), self._author_table.jaccard)
        with np.errstate(invalid="ignore"):
            return sims >= AUTHOR_MIN_OVERLAP


def _sample(members: list[int]) -> list[int]:
    """At most :data:`AVERAGE_SAMPLE` of a cluster's members (``members`` in section order):
    all of them, or that many evenly spaced."""
    n = len(members)
    if n <= AVERAGE_SAMPLE:
        return members
    return [members[k * n // AVERAGE_SAMPLE] for k in range(AVERAGE_SAMPLE)]


class _Members(dict):
    """Cluster -> its members in section order, stored only once a cluster has two or more: a
    cluster not stored is the singleton ``[c]`` (a fresh list, not stored)."""

    def __missing__(self, c: int) -> list[int]:
        return [c]


def _each(sigs: int | set[int]) -> Iterable[int]:
    """The signatures of one document in a cluster (:attr:`_Clusters.docs`): an int is one."""
    return sigs if isinstance(sigs, set) else (sigs,)


class _Clusters:
    """The growing partition of :func:`cluster_sections`, with per-cluster indexes so that a
    merge's cannot-link check does not look at every cross pair.

    Each cluster keeps its members in section order, its arXiv id (a cluster never holds two:
    different ids are cannot-linked, and every merge is checked) and, per document, the distinct
    exact-key signatures ``(arXiv, folded title, folded Chinese title)`` of its members there.
    Two clusters are cannot-linked exactly when some cross pair is
    (:meth:`PairScorer.cannot_link`): their arXiv ids differ, or a document both hold has
    signatures on the two sides that share no key. That needs only the documents both clusters
    hold, looked up from the smaller side, and repeats of one mention in a document share one
    signature, so the check costs ``O(min(|docs A|, |docs B|))``, not ``O(|A| |B|)``. A merge moves
    the smaller cluster into the larger (union by size): ``O(n log n)`` relabelling in all.
    """

    def __init__(self, scorer: PairScorer):
        import array

        n = len(scorer.doc)
        # per section 8-byte machine ints (array.array gives Python ints back), not Python lists
        self.of = array.array("q", range(n))
        self.members: dict[int, list[int]] = _Members()  # a singleton is not stored: [c]
        self.arxiv = _int_array(scorer.arxiv_code)
        # a code per distinct signature (numbered by first appearance), from the code columns
        # themselves: no tuple per section
        keys = np.stack([scorer.arxiv_code, scorer.folded_code, scorer.folded_zh_code], axis=1)
        distinct, inverse = np.unique(keys, axis=0, return_inverse=True)
        codes, ids = _first_appearance(inverse.ravel())
        self.sig_table = [tuple(row) for row in distinct[ids].tolist()]
        del keys, distinct, inverse
        self.sig_code = _int_array(codes)
        self.doc_code = _int_array(scorer.doc_code)
        # per cluster of two or more, its documents' signatures: an int when one, else a set
        # (most documents hold one signature a cluster; a set costs ~200 bytes more)
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
            kept.sort()  # two sorted runs: one linear merge
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
                     ) -> tuple[list[int], list[float | None]] | tuple[np.ndarray, np.ndarray]:
    """Cluster sections into papers (see the module docstring).

    Candidate pairs (neighbours of the content vectors, of the distinct title vectors
    (:func:`_title_neighbour_keys`), exact-key hubs of :func:`_key_pairs`) are scored in numpy batches (:meth:`PairScorer.scores`, exact
    from ``dedup.match_threshold`` up) and visited by descending score, ties by section index.
    A merge is checked with the cluster indexes of :class:`_Clusters` (cannot-links) and, unless
    the pair shares an exact key, with the average score over the cross pairs of at most
    :data:`AVERAGE_SAMPLE` members per side (:func:`_sample`; all pairs up to that size), summed
    exactly (``math.fsum``: independent of member order). A failed average is not recomputed
    until one of the two clusters has grown. The averages are scored :data:`MERGE_BLOCK` visits
    at a time (:func:`_merge_visits`). Cost: near linear in the number of sections (plus
    the neighbour search: exact ``O(n^2)`` below ``dedup.ann_min_sections``, ``O(n^1.5)`` above).

    Args:
        sections: rows with ``doc_id``, ``arxiv_id``, ``title`` (:data:`SCORER_COLUMNS` are
            read), or the :class:`PairScorer` built from them with ``emb`` and
            ``dedup.embed_weight`` (so that the caller need not hold the rows while clustering
            runs: :func:`cluster_papers` with a loader).
        emb: :func:`embed_sections` of ``sections``; a bare float32 array ``(len(sections), d)``
            is taken as the content vectors, with no title vectors.
        scratch: a folder for scratch files: from ``dedup.ann_min_sections`` rows on, the
            approximate index keeps its lists there (:func:`_ivf_index`), and the pairs the merge
            loop visits wait there (:func:`_spilled_pairs`). None: both stay in memory. The
            result is the same either way. Content in a memory-mapped ``.npy``
            (the runner's) is read from its file throughout.

        as_arrays: return numpy arrays instead of lists (the same values, without a Python
            object per section: :func:`cluster_papers` with a store).

    Returns:
        ``(labels, join_scores)``: a cluster label per section (ints, first appearance order) and
        the average score of the section to the other members of its cluster, at most
        :data:`JOIN_SCORE_SAMPLE` of them, the first in section order (None when alone); with
        ``as_arrays``, int64 and float64 ``(n,)`` (NaN when alone).

    From :data:`SHARED_SCORES_MIN_SECTIONS` sections on, with ``run.workers`` of two or more and
    the content vectors in a memory-mapped ``.npy`` (the runner's), the candidate
    pairs and the join scores are scored half in a helper process
    (:class:`pipeline.score_helper.ScoreHelper`, started before the searches): the same values
    on two cores.
    """
    if isinstance(emb, np.ndarray):
        emb = SectionEmbeddings.from_dense(emb)
    # the codes of every key (about 60 bytes a section) are held through the searches: the
    # k-means sample waits on disk (_training_sample)
    scorer = sections if isinstance(sections, PairScorer) else PairScorer(sections, emb, config.dedup.embed_weight)
    del sections
    n = len(scorer)
    # started before the searches, so that it has loaded the scorer by the time it is needed
    helper = (ScoreHelper(scorer) if config.run.workers >= 2 and n >= SHARED_SCORES_MIN_SECTIONS
              and isinstance(emb.content, np.memmap) else None)
    try:
        return _cluster(scorer, emb, config, scratch, as_arrays, helper.scores if helper is not None else scorer.scores)
    finally:
        if helper is not None:
            helper.close()


def _cluster(scorer: PairScorer, emb: SectionEmbeddings, config: Config, scratch: str | Path | None,
             as_arrays: bool, scores: Callable[..., np.ndarray],
             ) -> tuple[list[int], list[float | None]] | tuple[np.ndarray, np.ndarray]:
    """:func:`cluster_sections` once its scorer is built; ``scores``: ``scorer.scores`` or a
    :class:`pipeline.score_helper.ScoreHelper`'s (the same values), for the bulk scoring."""
    n = len(scorer)
    threshold = config.dedup.match_threshold
    ann_min = config.dedup.ann_min_sections
    found = [_neighbour_keys(emb.content, K_NEIGHBOURS, ann_min, scratch)]
    log.debug("dedup: %d sections, %d content-neighbour pairs", n, len(found[0]))
    # titles across languages: neighbours among the title vectors (English or Chinese, summed)
    if (emb.title_row >= 0).any() or (emb.title_zh_row >= 0).any():
        found.append(_title_neighbour_keys(emb, TITLE_NEIGHBOURS, ann_min, scratch))
        log.debug("dedup: %d title-neighbour pairs", len(found[-1]))
    doc_codes = _int_array(scorer.doc_code)
    for key in (scorer.arxiv_code, scorer.folded_code):  # equal codes: equal keys
        key_pairs = [p for members in _key_groups(key) for p in _key_pairs(members, doc_codes)]
        pairs = np.array(key_pairs, dtype=np.int64).reshape(-1, 2)
        found.append(_pair_keys(pairs[:, 0], pairs[:, 1], n))
        del key_pairs, pairs
    release_free_memory()  # the searches' blocks and lists
    log.debug("dedup: candidate pairs from %d sources", len(found))
    left, right = _visited_pairs(found, n, scorer, threshold, scores)
    release_free_memory()  # the scored candidates below the threshold and the sort
    log.debug("dedup: %d candidate pairs at or above the threshold", len(left))
    exact = scorer.exact_pairs(left, right)
    visits = _spilled_pairs(left, right, exact, scratch) if scratch is not None else (left, right, exact)
    del left, right, exact

    clusters = _Clusters(scorer)
    # one paper named twice in one document (an exact key: same arXiv id or folded title) is one
    # mention group from the start; other sections of a document never join each other. Only
    # the sections whose (document, key) is shared can merge: the others are skipped.
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
    labels = _first_appearance(np.frombuffer(clusters.of, dtype=np.int64))[0]
    # only the member lists are needed from here: the cluster indexes (tens of MB at 50k
    # articles, as the failed averages, gone already) go before the join scores' batches
    members = list(members.values())
    del clusters
    release_free_memory()
    join_scores = _join_scores(scorer, members, n, scores)
    for cache in (_english_ratio, _english_conflict, _word_index, _chinese_pair_similarity):
        cache.cache_clear()  # this corpus's title pairs (up to ~13 MB each): not needed again
    if as_arrays:
        return labels, join_scores
    return labels.tolist(), [None if np.isnan(v) else v for v in join_scores.tolist()]


def _merge_visits(clusters: _Clusters, visits: tuple[np.ndarray, np.ndarray, np.ndarray] | np.ndarray,
                  threshold: float, scores: Callable[..., np.ndarray],
                  ) -> dict[tuple[int, int], tuple[int, int]]:
    """The merge loop of :func:`cluster_sections`: each visited pair ``(i, j, exact)`` (in
    :func:`_pair_stream` order) merges the clusters of ``i`` and ``j`` unless they are one
    already, are cannot-linked, or (not an exact key, not two singletons) the average of their
    sampled cross-pair scores (:func:`_sample`, ``math.fsum``) is below ``threshold``. Returns
    the failed averages, ``{(a, b): (|a|, |b|)}``: a pair of clusters is not tried again until
    one of them has grown.

    The averages are scored :data:`MERGE_BLOCK` visits at a time: the clusters each visit would
    compare *now* are gathered first and their cross pairs scored in one call of ``scores``
    (``scorer.scores``, or a :class:`pipeline.score_helper.ScoreHelper`'s on two cores), instead
    of one small call each (most averages fail, so most visits leave the clusters as they are).
    The visits are then applied in order; a visit whose clusters a merge earlier in the block
    has changed is scored on its own then. A cluster's members only change by merging, which
    grows it and retires the smaller side's id, so ``(a, b, |a|, |b|)`` names one set of cross
    pairs: every decision is the one the visit-by-visit loop makes (the same scores, summed
    the same way).
    """
    failed: dict[tuple[int, int], tuple[int, int]] = {}
    members = clusters.members

    def cross_pairs(a: int, b: int) -> tuple[np.ndarray, np.ndarray]:
        xs, ys = _sample(members[a]), _sample(members[b])
        return np.repeat(np.array(xs, np.int64), len(ys)), np.tile(np.array(ys, np.int64), len(xs))

    def to_try(i: int, j: int) -> tuple[int, int, tuple[int, int]] | None:
        """The clusters a visit compares now (low id first) and their sizes; None when it is
        skipped: one cluster holds both, their average failed at these sizes, or they are
        cannot-linked."""
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
        # the averages the block needs as the clusters are now, scored together: at most
        # MERGE_PAIRS cross pairs (the visits after that wait for the next block)
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
            # an exact key (same arXiv id or folded title) links outright (must-link); any other
            # pair needs the average over the (sampled) cross pairs to reach the threshold; two
            # singletons' only cross pair is (i, j) itself, already above it
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
    """The averages of :func:`_merge_visits`' block: ``wanted`` maps a key to its span
    ``(lo, hi)`` of the cross pairs ``concatenate(parts_i), concatenate(parts_j)`` (contiguous,
    in order). Returns key -> the ``math.fsum`` average of the span's scores, or ``-inf`` for a
    span whose average of upper bounds (``scores(..., exact_from=math.inf)``, the cheap title
    bounds) is below ``threshold`` by more than :data:`BOUND_MARGIN`: its exact average is
    below too, so it fails as it would. Only the other spans are scored exactly."""
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


def _visited_pairs(found: list[np.ndarray], n: int, scorer: PairScorer, threshold: float,
                   scores: Callable[..., np.ndarray] | None = None) -> tuple[np.ndarray, np.ndarray]:
    """The distinct candidate pairs scoring at least ``threshold``, in the order the merge loop
    visits them: by descending score, ties by ``(low, high)`` section index.

    Args:
        found: candidate pairs from each source (content neighbours, title neighbours, exact-key
            hubs) as :func:`_pair_keys` keys: int64 ``(m_t,)`` arrays, each sorted and without
            repeats (a pair may be in several). Emptied as they are scored.
        scorer: the pairs' :class:`PairScorer`.
        scores: what scores them: ``scorer.scores`` (None) or a
            :class:`pipeline.score_helper.ScoreHelper`'s, which gives the same values.

    Returns:
        ``(left, right)``: int ``(k,)`` each (int32 below 2**31 sections, else int64), ``left < right``.

    Each source's keys are scored :data:`CANDIDATE_BLOCK` at a time (whole
    :data:`SCORE_BATCH` batches; a pair's score does not depend on the batch it is in), leaving
    out the keys of the sources scored before it, and only the pairs at or above the threshold
    are kept for the sort. Never are all candidates held as pairs, scores and a sort order at
    once (about 40 bytes a candidate, 12M candidates at 50k articles): only the sources' keys,
    8 bytes a candidate, and the pairs above the threshold.
    """
    score = scorer.scores if scores is None else scores
    done: list[np.ndarray] = []  # the keys of the sources already scored
    kept_keys, kept_scores = [], []
    while found:
        keys = found.pop(0)
        for start in range(0, len(keys), CANDIDATE_BLOCK):
            block = keys[start : start + CANDIDATE_BLOCK]
            # the pairs of an earlier source were scored there: left out a block at a time (the
            # lookups of a whole source held about three int64 copies of it at once)
            for earlier in done:
                if block.size and earlier.size:
                    at = np.minimum(np.searchsorted(earlier, block), earlier.size - 1)
                    block = block[earlier[at] != block]
            if not block.size:
                continue
            got = score(block // n, block % n, exact_from=threshold)
            above = got >= threshold  # the rest is never visited
            kept_keys.append(block[above])
            kept_scores.append(got[above])
        done.append(keys)
    del done
    keys_above = np.concatenate(kept_keys) if kept_keys else np.zeros(0, np.int64)
    del kept_keys
    scores_above = np.concatenate(kept_scores) if kept_scores else np.zeros(0, np.float64)
    del kept_scores
    np.negative(scores_above, out=scores_above)
    # a key low * n + high orders as (low, high): one sort key instead of the two columns
    order = np.lexsort((keys_above, scores_above))
    del scores_above
    keys_above = keys_above[order]
    del order
    dtype = np.int32 if n <= np.iinfo(np.int32).max else np.int64  # half the bytes a pair
    left, right = np.empty(len(keys_above), dtype), np.empty(len(keys_above), dtype)
    for start in range(0, len(keys_above), CANDIDATE_BLOCK):  # no int64 temporary of all pairs
        block = keys_above[start : start + CANDIDATE_BLOCK]
        left[start : start + CANDIDATE_BLOCK], right[start : start + CANDIDATE_BLOCK] = block // n, block % n
    return left, right


def _pair_stream(pairs: tuple[np.ndarray, np.ndarray, np.ndarray] | np.ndarray) -> Iterator[tuple[int, int, bool]]:
    """``zip(left, right, exact)`` as Python values, converted :data:`STREAM_BLOCK` at a time (the
    whole arrays as lists would cost about 80 bytes a pair); ``pairs``: the three arrays, or
    their :func:`_spilled_pairs` matrix ``(m, 3)``, read a block at a time."""
    stacked = isinstance(pairs, np.ndarray)
    for start in range(0, len(pairs) if stacked else len(pairs[0]), STREAM_BLOCK):
        if stacked:
            block = np.asarray(pairs[start : start + STREAM_BLOCK])
            left, right, exact = block[:, 0], block[:, 1], block[:, 2] != 0
        else:
            left, right, exact = (a[start : start + STREAM_BLOCK] for a in pairs)
        yield from zip(left.tolist(), right.tolist(), exact.tolist(), strict=True)


def _spilled_pairs(left: np.ndarray, right: np.ndarray, exact: np.ndarray, folder: str | Path) -> np.ndarray:
    """The pairs the merge loop visits as one ``(m, 3)`` matrix of rows ``(left, right, exact)``
    in ``left``'s int type, in a scratch ``.npy`` in ``folder`` mapped read-only (its name is
    removed at once: the map keeps the file until it is dropped), which :func:`_pair_stream`
    reads a block at a time: the loop then holds one block instead of 9 bytes a pair."""
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
    """Per section, the mean score to the first :data:`JOIN_SCORE_SAMPLE` other members of its
    cluster in section order (``clusters``: member lists in section order): float64 ``(n,)``,
    NaN when alone; ``O(n * JOIN_SCORE_SAMPLE)`` pair scores, :data:`JOIN_BATCH` pairs at a time
    (a large cluster a slice of its members at a time).

    Each section's pairs are summed in one ``bincount`` (in head order, from 0), whatever the
    batches: its pairs are never split between two of them, so the result does not depend on
    :data:`JOIN_BATCH`. ``scores``: as :func:`_visited_pairs` takes it.
    """
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
        # the members a slice holds: at most about JOIN_BATCH pair rows (a member's rows stay together)
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


def _vote(values: Sequence, field: str, conflicts: list[str]):
    """Most common non-missing value (ties: first in mention order); records disagreement."""
    present = [v for v in values if v is not None and not (isinstance(v, float) and np.isnan(v))]
    if not present:
        return None
    counts = Counter(present)
    if len(counts) > 1:
        conflicts.append(f"{field}: " + " | ".join(str(v) for v in dict.fromkeys(present)))
    best = max(counts.values())
    return next(v for v in present if counts[v] == best)


def paper_id_for(arxiv_id: str | None, title: str | None, first_section_id: str) -> str:
    """Stable paper id: ``p-`` + 16 hex digits of SHA-256 of the arXiv id when known, else of the
    folded title, else of the first mention's section id."""
    if arxiv_id:
        key = f"arxiv:{arxiv_id}"
    elif title and _folded(title):
        key = f"title:{_folded(title)}"
    else:
        key = f"section:{first_section_id}"
    return "p-" + hashlib.sha256(key.encode()).hexdigest()[:16]


def fuse(group: pd.DataFrame | Sequence[dict]) -> dict:
    """One canonical record from the sections of one paper (rows in section-id order: a
    DataFrame, or its rows as :func:`pipeline.stage.records` gives them).

    Rules: present beats missing; the value most mentions agree on beats the others (ties: the
    first mention); the title is the most common folded title, spelled as in the mention with
    the most metadata; authors and institutions from the fullest list; URLs are the union in
    mention order (``url_kinds`` aligned with them); the longest summary, in the target script
    (``summary_norm`` of the mentions; ``summary_from`` names the section it came from).
    Disagreements go to ``conflicts`` as ``"field: a | b"`` strings.
    """
    conflicts: list[str] = []
    rows = records(group) if isinstance(group, pd.DataFrame) else group
    richness = [sum(bool(r.get(f)) for f in ("arxiv_id", "authors", "institutions", "award_raw")) for r in rows]
    folded = [_folded(r["title"]) if r.get("title") else None for r in rows]  # a paper repeats its titles
    best_fold = _vote(folded, "title", conflicts)
    title = None
    if best_fold is not None:
        candidates = [(richness[i], -i, rows[i]["title"]) for i in range(len(rows)) if folded[i] == best_fold]
        title = max(candidates)[2]
    authors = max((r["authors"] or [] for r in rows), key=len, default=[])  # a missing list counts as empty
    institutions = max((r["institutions"] or [] for r in rows), key=len, default=[])
    url_kinds: dict[str, str] = {}
    for r in rows:
        for u, k in zip(r["urls"] or [], r["url_kinds"] or [], strict=True):
            url_kinds.setdefault(u, k)
    # the longest summary: by ``_summary_chars`` when the rows are slim (the runner puts the
    # whole text back from ``summary_from``), else by the text's own length; ties: first mention
    lengths = [(r.get("_summary_chars") or len(r["summary_norm"]), -k) for k, r in enumerate(rows) if r.get("summary_norm")]
    longest = rows[-max(lengths)[1]] if lengths else None
    arxiv_id = _vote([r["arxiv_id"] for r in rows], "arxiv_id", conflicts)
    # a year as an int whatever its column's dtype (chunks read back as float, int or object),
    # so that a conflict reads "year: 2024 | 2021", not "2024.0"
    year = _vote([None if r["year"] is None or r["year"] != r["year"] else int(r["year"]) for r in rows],
                 "year", conflicts)
    record = {
        "title": title,
        "title_zh": _vote([r["title_zh"] for r in rows], "title_zh", conflicts),
        "arxiv_id": arxiv_id,
        "venue": _vote([r["venue"] for r in rows], "venue", conflicts),
        "year": int(year) if year is not None else None,
        "award": _vote([r["award"] for r in rows], "award", conflicts),
        "authors": list(authors),
        "institutions": list(institutions),
        "urls": list(url_kinds),
        "url_kinds": list(url_kinds.values()),
        "summary": longest["summary_norm"] if longest is not None else None,
        "summary_from": longest["section_id"] if longest is not None else None,
        "section_ids": [r["section_id"] for r in rows],
        "doc_ids": sorted(dict.fromkeys(r["doc_id"] for r in rows)),
        "n_mentions": len(rows),
        "n_sources": len({r["doc_id"] for r in rows}),  # copies folded by the runner (count_sources)
        "conflicts": conflicts,
    }
    record["paper_id"] = paper_id_for(arxiv_id, title, rows[0]["section_id"])
    return record


def dedup(sections: pd.DataFrame, config: Config, embedder: Embedder) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The global dedup stage on sections held in memory (:func:`embed_sections` then
    :func:`cluster_papers`; the runner calls those two itself, chunk by chunk).

    Args:
        sections: one row per section with the extract columns plus ``section_id``, ``doc_id``.
        embedder: the configured embedder (loaded once by the runner).

    Returns:
        ``(sections, papers)``: ``sections`` sorted by ``section_id`` with added ``paper_id`` (str),
        ``match_score`` (float or None: average score to the other mentions of its paper) and
        ``embedding_chars_cut`` (int: :func:`embedding_chars_cut`);
        ``papers`` with the columns of :data:`PAPER_COLUMNS`, sorted by ``paper_id``.
    """
    sections = sections.sort_values("section_id", kind="stable").reset_index(drop=True)
    if sections.empty:
        out = sections.assign(paper_id=pd.Series(dtype=object), match_score=pd.Series(dtype=float),
                              embedding_chars_cut=pd.Series(dtype="int32"))
        return out, pd.DataFrame(columns=list(PAPER_COLUMNS))
    cuts = embedding_cuts(sections, getattr(embedder, "max_chars", None) or DEFAULT_MAX_CHARS)
    paper_ids, scores, papers = cluster_papers(sections, embed_sections(sections, embedder), config)
    return (sections.assign(paper_id=paper_ids, match_score=scores, embedding_chars_cut=cuts),
            papers.drop(columns="summary_from"))


def section_order(section_ids: Sequence[str]) -> np.ndarray:
    """int64 ``(n,)``: the stable argsort of ``section_ids``, the order dedup clusters in."""
    return np.argsort(np.asarray(section_ids, dtype=object), kind="stable")


#: :func:`cluster_groups` converts the rows of about this many sections to dicts at a time
#: (whole clusters: a larger cluster is one batch of its own).
FUSE_BATCH_ROWS = 8192


def _group_batches(labels: np.ndarray, batch_rows: int) -> tuple[np.ndarray, np.ndarray, list[tuple[int, int, int]]]:
    """How :func:`cluster_groups` batches whole clusters.

    Returns:
        ``(by, starts, batches)``: ``by`` int64 ``(n,)`` the stable argsort of ``labels``;
        ``starts`` int64 ``(g + 1,)`` each cluster's first position in ``by`` (and ``n``); per
        batch ``(first, stop, last)``: clusters ``first..last - 1`` (in label order), about
        ``batch_rows`` rows and at least one whole cluster, at ``by[starts[first]:stop]``
        (``stop = starts[last]``).
    """
    n = len(labels)
    by = np.argsort(labels, kind="stable")
    ranked = labels[by]
    starts = np.concatenate([[0], np.flatnonzero(ranked[1:] != ranked[:-1]) + 1, [n]]).astype(np.int64)
    ends = starts[1:]
    batches, g = [], 0
    while g < len(ends):
        last = int(np.searchsorted(ends, starts[g] + max(1, batch_rows), side="right"))
        last = max(last, g + 1)  # at least one whole cluster
        batches.append((g, int(ends[last - 1]), last))
        g = last
    return by, starts, batches


def cluster_groups(frame: pd.DataFrame | SlimColumns, labels: Sequence[int] | np.ndarray,
                   batch_rows: int = FUSE_BATCH_ROWS, order: np.ndarray | None = None,
                   folder: str | Path | None = None) -> Iterator[tuple[int, list[dict]]]:
    """The rows of each cluster, as ``frame.groupby(labels, sort=True)`` groups them, as dicts.

    Args:
        frame: ``n`` rows (any columns): a DataFrame, or a :class:`SlimColumns` store whose row
            ``order[i]`` is row ``i`` here (``order``: int ``(n,)``, for a store only; None: row
            ``i``). A store is first copied in cluster order, batch by batch
            (:meth:`SlimColumns.regrouped`, in ``folder``), so that no more than one column of
            every row and one batch of all columns are held.
        labels: ``n`` integer cluster labels, aligned with ``frame``'s rows.
        batch_rows: rows converted to dicts at a time (:func:`pipeline.stage.records` on a batch
            of whole clusters); the result does not depend on it.

    Yields:
        ``(label, rows)`` in ascending label order; ``rows`` are the cluster's rows as
        :func:`pipeline.stage.records` gives them, in ``frame`` order. Only one batch of rows is
        held at a time, and the per-group cost of a pandas ``groupby`` (a DataFrame and a
        ``to_dict`` per cluster, most of fusion's time) is paid per batch instead.

    Raises:
        ValueError: when ``labels`` and ``frame`` (or ``order``) differ in length, or ``order``
            comes with a DataFrame.
    """
    labels = np.asarray(labels)
    if isinstance(frame, SlimColumns):
        n = frame.n if order is None else len(order)
    elif order is not None:
        raise ValueError("order is for a SlimColumns store; take the frame's rows instead")
    else:
        n = len(frame)
    if len(labels) != n:
        raise ValueError(f"{len(labels)} labels for {n} rows")
    if n == 0:
        return
    by, starts, batches = _group_batches(labels, batch_rows)
    grouped = None
    if isinstance(frame, SlimColumns):
        positions = by if order is None else np.asarray(order)[by]
        grouped = frame.regrouped(positions, [0, *(stop for _, stop, _ in batches)], folder)
    try:
        for k, (first, stop, last) in enumerate(batches):
            lo = int(starts[first])
            rows = records(grouped.read_chunk(k) if grouped is not None else frame.iloc[by[lo:stop]])
            for g in range(first, last):
                yield labels[by[starts[g]]].item(), rows[starts[g] - lo : starts[g + 1] - lo]
            del rows
    finally:
        if grouped is not None:
            grouped.close()


#: The papers a store-fed :func:`cluster_papers` gives (Arrow): :data:`pipeline.write.PAPERS_SCHEMA`
#: plus ``summary_from``.
FUSED_PAPERS_SCHEMA = PAPERS_SCHEMA.append(pa.field("summary_from", pa.string()))
#: :func:`cluster_papers` turns this many fused records at a time into Arrow rows (store path).
FUSED_BATCH = 4096


def cluster_papers(sections: pd.DataFrame | SlimColumns, emb: SectionEmbeddings, config: Config,
                   scratch: str | Path | None = None, order: np.ndarray | None = None,
                   ) -> tuple[list[str] | pa.Array, list[float | None] | pa.Array, pd.DataFrame | pa.Table]:
    """Cluster embedded sections into papers and fuse each paper's record.

    Args:
        sections: ``n`` rows with :data:`DEDUP_COLUMNS` (whole or :func:`slim_sections`): a
            DataFrame in any order (clustered in ``section_id`` order, so the result does not
            depend on it), or the runner's :class:`SlimColumns` store, whose row ``order[i]``
            is the ``i``-th in section-id order (``order`` None: already in that order). A store
            is read for :data:`SCORER_COLUMNS` before clustering, and for fusion after it one
            column at a time into cluster order (:func:`cluster_groups`), so the rows are never
            all held while clustering runs, nor all at once after.
        emb: :func:`embed_sections` of the rows, in section-id order for a store, row for row
            for a DataFrame.
        scratch: passed to :func:`cluster_sections` (a folder for the content vectors and the
            approximate index's lists while the neighbours are searched) and, for a store, where
            fusion's regrouped copy goes.
        order: int ``(n,)``, for a store only (see ``sections``).

    Returns:
        ``(paper_ids, match_scores, papers)``: per row of ``sections`` (in section-id order for a
        store, in its own order for a DataFrame) the paper id and the match score (see
        :func:`dedup`): lists, or for a store Arrow arrays (string; float32, null where the
        section is alone), without a Python object per section; ``papers`` with :data:`PAPER_COLUMNS` plus ``summary_from`` (the section
        id whose ``summary_norm`` is the paper's ``summary``), sorted by ``paper_id``: a
        DataFrame, or for a store an Arrow table of :data:`FUSED_PAPERS_SCHEMA` (a few bytes per
        value instead of a Python object: the 23,892 papers of the 10k bench corpus take 27 MB
        as Arrow, 72 MB as Python lists and strings).

    Raises:
        ValueError: ``order`` with a DataFrame, or not a permutation of the store's rows;
            ``emb`` not of ``n`` rows.
        pyarrow.ArrowInvalid: (store) a fused value does not fit its column (a year beyond int16).
    """
    store = isinstance(sections, SlimColumns)
    if order is not None and not store:
        raise ValueError("order is for a SlimColumns store; take the frame's rows instead")
    n = sections.n if store else len(sections)
    _check_permutation(order, n)
    if len(emb.title_row) != n:
        raise ValueError(f"{len(emb.title_row)} embedding rows for {n} sections")
    if n == 0:
        if store:
            return pa.array([], pa.string()), pa.array([], pa.float32()), FUSED_PAPERS_SCHEMA.empty_table()
        return [], [], pd.DataFrame(columns=[*PAPER_COLUMNS, "summary_from"])
    if store:  # read for the scorer a column at a time, then again for fusion
        scorer = PairScorer(_StoredColumns(sections, SCORER_COLUMNS, order), emb, config.dedup.embed_weight)
        # what building the codes freed, given back before the searches
        release_free_memory()
        labels, join_scores = cluster_sections(scorer, emb, config, scratch, as_arrays=True)
        del scorer
        release_free_memory()  # clustering's state, before the rows come back for fusion
        log.debug("dedup: fusing %d sections", n)
        groups = cluster_groups(sections, labels, order=order, folder=scratch)
    else:
        rows_order = section_order(sections["section_id"])
        if np.array_equal(rows_order, np.arange(n)):  # already in section-id order: no copy
            ordered, emb_ordered = sections.reset_index(drop=True), emb
        else:
            ordered, emb_ordered = sections.iloc[rows_order].reset_index(drop=True), emb.take(rows_order)
        labels, join_scores = cluster_sections(ordered, emb_ordered, config, scratch)
        del emb_ordered
        groups = cluster_groups(ordered, labels)
    papers, parts, paper_of_cluster, taken = [], [], {}, set()
    for label, group in groups:
        record = fuse(group)
        if record["paper_id"] in taken:
            # two papers share a key (one title twice in a document): the later one, in
            # section-id order, is keyed by its first mention instead, which is just as stable
            record["paper_id"] = paper_id_for(None, None, record["section_ids"][0])
        taken.add(record["paper_id"])
        paper_of_cluster[label] = record["paper_id"]
        papers.append(record)
        if store and len(papers) >= FUSED_BATCH:  # Arrow rows, not Python objects, for every paper
            parts.append(pa.Table.from_pylist(papers, schema=FUSED_PAPERS_SCHEMA))
            papers = []
    if store:
        parts.append(pa.Table.from_pylist(papers, schema=FUSED_PAPERS_SCHEMA))
        table = pa.concat_tables(parts)
        del parts, papers
        by_id = pc.sort_indices(table["paper_id"])
        columns = {}
        for name in FUSED_PAPERS_SCHEMA.names:  # a column at a time: the unsorted one goes at once
            columns[name] = table[name].take(by_id).combine_chunks()
            table = table.drop_columns([name])
        papers_out = pa.table(columns, schema=FUSED_PAPERS_SCHEMA)
    else:
        papers_df = pd.DataFrame(papers, columns=[*PAPER_COLUMNS, "summary_from"]).sort_values("paper_id")
        papers_out = papers_df.reset_index(drop=True)
    if store:  # labels are 0..L-1 (first appearance): each section's paper id by a take
        ids_of_labels = pa.array([paper_of_cluster[label] for label in range(len(paper_of_cluster))], pa.string())
        return (ids_of_labels.take(pa.array(labels)), pa.array(join_scores, pa.float32(), mask=np.isnan(join_scores)),
                papers_out)
    paper_ids: list[str] = [""] * n
    scores: list[float | None] = [None] * n
    for k, row in enumerate(rows_order):
        paper_ids[row] = paper_of_cluster[labels[k]]
        scores[row] = join_scores[k]
    return paper_ids, scores, papers_out


# ---------------------------------------------------------------------------------------------
# Duplicate documents
# ---------------------------------------------------------------------------------------------

#: Character shingle length for comparing two documents' kept text (Broder 1997, "On the
#: resemblance and containment of documents"): 5 characters is about two Chinese words or one
#: English word, short enough that a copy with a few edited characters still shares most shingles.
SHINGLE_CHARS = 5
#: Two documents that mention the same papers are copies of one article when the Jaccard
#: resemblance of their sections' shingles reaches this. Boilerplate (bylines, share prompts,
#: related lists) is outside the sections, so a syndicated copy reaches about 1.0; two different
#: write-ups of the same papers share well under 0.3 (the seed report and digest: 0.02).
DUP_MIN_RESEMBLANCE = 0.8


#: A code point past Unicode's last (21 bits hold both): pads a text shorter than a shingle.
_SHINGLE_PAD = (1 << 21) - 1


def _shingle_keys(text: str) -> np.ndarray:
    """The distinct character shingles of ``text`` with its whitespace removed (every run of
    :data:`SHINGLE_CHARS` characters; a shorter text is one shingle; no text, none), each
    packed exactly into two uint64 (the
    :data:`SHINGLE_CHARS` = 5 code points of 21 bits: three in the first, two in the second; a
    text shorter than a shingle padded with :data:`_SHINGLE_PAD`): uint64 ``(m, 2)``, rows
    sorted and distinct. 16 bytes a shingle where a Python set of str holds about 70."""
    assert SHINGLE_CHARS == 5, "the packing assumes 5 code points"
    s = "".join(text.split())
    if not s:
        return np.zeros((0, 2), np.uint64)
    points = np.frombuffer(s.encode("utf-32-le", "surrogatepass"), dtype="<u4").astype(np.uint64)
    if len(points) < SHINGLE_CHARS:
        points = np.concatenate([points, np.full(SHINGLE_CHARS - len(points), _SHINGLE_PAD, np.uint64)])
    w = np.lib.stride_tricks.sliding_window_view(points, SHINGLE_CHARS)
    hi = (w[:, 0] << np.uint64(42)) | (w[:, 1] << np.uint64(21)) | w[:, 2]
    lo = (w[:, 3] << np.uint64(21)) | w[:, 4]
    order = np.lexsort((lo, hi))
    hi, lo = hi[order], lo[order]
    new = np.ones(len(hi), dtype=bool)
    new[1:] = (hi[1:] != hi[:-1]) | (lo[1:] != lo[:-1])
    return np.stack([hi[new], lo[new]], axis=1)


def _shared_shingles(a: np.ndarray, b: np.ndarray) -> int:
    """Rows common to two :func:`_shingle_keys` arrays (each distinct): ``len(A & B)`` of the sets."""
    if not len(a) or not len(b):
        return 0
    both = np.concatenate([a, b])
    both = both[np.lexsort((both[:, 1], both[:, 0]))]
    return int(((both[1:, 0] == both[:-1, 0]) & (both[1:, 1] == both[:-1, 1])).sum())


def find_duplicate_documents(documents: pd.DataFrame, sections: pd.DataFrame) -> list[str | None]:
    """``dup_of`` for each document: the ``doc_id`` of the earlier document it copies, or None.

    A document copies an earlier one (in ``documents`` row order, i.e. by source path) when
    (a) its bytes are identical (status ``duplicate``; the first path is named in ``error``), or
    (b) both have sections, mention exactly the same set of papers, and the Jaccard resemblance
    of their sections' ``text_norm`` character shingles is at least
    :data:`DUP_MIN_RESEMBLANCE` (the same article syndicated with other boilerplate or another
    script). Only documents with the same paper set are compared, so the cost is small.

    Args:
        documents: rows with ``doc_id``, ``status``, ``content_sha256``.
        sections: rows with ``doc_id``, ``paper_id``, ``text_norm``.

    Returns:
        A list aligned with ``documents`` rows. A copy of a copy points to the first original.
    """
    papers_of = paper_sets(sections["doc_id"], sections["paper_id"])
    texts: dict[str, list[str]] = {}
    for doc_id, text in zip(sections["doc_id"], sections["text_norm"], strict=True):
        texts.setdefault(doc_id, []).append(text or "")
    return duplicate_documents(zip(documents["doc_id"], documents["status"], documents["content_sha256"], strict=True),
                               papers_of, {d: "\n".join(t) for d, t in texts.items()})


def paper_sets(doc_ids: Sequence[str], paper_ids: Sequence[str] | pa.Array) -> dict[str, frozenset[str]]:
    """The set of papers each document mentions (documents without sections are absent).

    ``paper_ids`` aligned with ``doc_ids``: a sequence of strings, or an Arrow string array
    (read through its dictionary, so each distinct id is one Python string).
    """
    if isinstance(paper_ids, pa.ChunkedArray):
        paper_ids = paper_ids.combine_chunks()
    if isinstance(paper_ids, pa.Array):
        paper_ids = _Decoded(*_dictionary_ids(paper_ids))
    sets: dict[str, set[str]] = {}
    for doc_id, paper_id in zip(doc_ids, paper_ids, strict=True):
        sets.setdefault(doc_id, set()).add(paper_id)
    return {d: frozenset(p) for d, p in sets.items()}


def copy_candidates(papers_of: dict[str, frozenset[str]]) -> set[str]:
    """Documents whose paper set another document shares: the only ones whose text
    :func:`duplicate_documents` reads."""
    count = Counter(papers_of.values())
    return {d for d, papers in papers_of.items() if count[papers] > 1}


def duplicate_documents(documents, papers_of: dict[str, frozenset[str]], text_of: dict[str, str]) -> list[str | None]:
    """:func:`find_duplicate_documents` over streamed inputs.

    Args:
        documents: iterable of ``(doc_id, status, content_sha256)`` in output order.
        papers_of: :func:`paper_sets` of the run's sections.
        text_of: the sections' ``text_norm`` joined by newlines, for at least the
            :func:`copy_candidates` (others are never compared).

    Returns:
        ``dup_of`` per document, in the order given.

    Cost: each copy candidate is compared with the earlier originals of its paper set, so
    quadratic in the size of the largest such group (564 documents with one paper set in the 50k
    bench corpus: 158,766 pairs at about 1.4 ms each); the size bound of the Jaccard resemblance
    (``min(|A|, |B|) / max(|A|, |B|)``) skips the pairs that cannot reach the bar without
    comparing them (28,017 of those 158,766 are compared).
    """
    first_of_content: dict[str, str] = {}
    dup_of: list[str | None] = []
    candidates = copy_candidates(papers_of)
    # per paper set, its originals so far with their shingles (:func:`_shingle_keys`: the
    # resemblance of their shingle sets, exactly, at a quarter of a Python set's memory)
    originals: dict[frozenset[str], list[tuple[str, np.ndarray]]] = {}
    for doc_id, status, sha in documents:
        target = None
        if isinstance(sha, str):
            if status == "duplicate" and sha in first_of_content:
                target = first_of_content[sha]
            first_of_content.setdefault(sha, doc_id)
        if target is None and doc_id in candidates:
            papers = papers_of[doc_id]
            shingles = _shingle_keys(text_of[doc_id])
            size = len(shingles)
            for other_id, other in originals.get(papers, []):
                # the resemblance is at most min / max of the two set sizes (|A & B| <= min,
                # |A | B| >= max): a pair whose sizes alone keep it below the bar is not compared
                # (the same verdicts; a margin far above rounding keeps a pair at the bar)
                if min(size, len(other)) < DUP_MIN_RESEMBLANCE * max(size, len(other)) * (1 - 1e-9):
                    continue
                shared = _shared_shingles(shingles, other)
                union = len(shingles) + len(other) - shared
                if union and shared / union >= DUP_MIN_RESEMBLANCE:
                    target = other_id
                    break
            if target is None:
                originals.setdefault(papers, []).append((doc_id, shingles))
        dup_of.append(target)
    return dup_of


def count_sources(doc_ids: pa.Array | pa.ChunkedArray, documents: Sequence[str] | pa.Array,
                  dup_of: Sequence[str | None] | pa.Array) -> pa.Array:
    """``n_sources`` per paper: distinct documents among its ``doc_ids`` once every copy is
    counted as its original, computed by Arrow (no Python object per paper or mention).

    Args:
        doc_ids: the papers' ``doc_ids`` column, an Arrow list of strings (a null list: none).
        documents: every document's ``doc_id`` (distinct, as the runner makes them): strings,
            or an Arrow string array (converted once by a caller that counts papers in batches).
        dup_of: aligned with ``documents``, the original each one copies, or None (null);
            strings or an Arrow string array.

    Returns:
        int32 Arrow array, one count per paper (0 for a paper without documents).

    Raises:
        ValueError: ``documents`` and ``dup_of`` differ in length.
    """
    if len(documents) != len(dup_of):
        raise ValueError(f"{len(dup_of)} dup_of values for {len(documents)} documents")
    lists = doc_ids.combine_chunks() if isinstance(doc_ids, pa.ChunkedArray) else doc_ids
    flat = pc.list_flatten(lists)
    docs = (documents if isinstance(documents, pa.Array) else pa.array(documents, pa.string())).cast(pa.string())
    copied = (dup_of.cast(pa.string()) if isinstance(dup_of, pa.Array)  # (a null-typed array: no copies)
              else pa.array([o if isinstance(o, str) else None for o in dup_of], pa.string()))  # (NaN: none)
    originals = pc.coalesce(copied, docs)
    source = pc.coalesce(originals.take(pc.index_in(flat, value_set=docs)), flat)  # a copy counts as its original
    counted = pa.table({"paper": pc.list_parent_indices(lists), "source": source}).group_by("paper").aggregate(
        [("source", "count_distinct")])
    out = np.zeros(len(lists), np.int32)
    out[counted["paper"].to_numpy()] = counted["source_count_distinct"].to_numpy()
    return pa.array(out)
