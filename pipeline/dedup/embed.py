"""Dedup step 1, embed: the vectors dedup compares.

Each section is embedded from what identifies its paper, its English title, Chinese title and
summary head (:func:`embedding_text`), and each distinct title text once
(:class:`SectionEmbeddings`), through the configured :class:`pipeline.embed.Embedder`
(L2-normalized: a dot product is a cosine).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import NamedTuple

import numpy as np
import pandas as pd
import pyarrow as pa

from ..embed import DEFAULT_MAX_CHARS, Embedder, submit_encode
from ..stage import records
from ..vectors import VectorFile, portable, restored
from .titles import _titles

#: Characters of the summary that go into the embedding text.
SUMMARY_HEAD_CHARS = 200


def _embedding_source(row: dict) -> tuple[str, int]:
    """``(embedding_text(row), characters of its sources left out)``: the summary past its first
    :data:`SUMMARY_HEAD_CHARS`, or for a section with no title and no summary its text past as many."""
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
    """Characters of a section's embedding sources its vector leaves out (the
    ``sections.embedding_chars_cut`` column; 0 when none): the summary (or text) past its head,
    plus what :func:`embedding_text` has past the embedder's ``max_chars``. A model's own token
    limit is not counted."""
    text, cut = _embedding_source(row)
    return cut + max(0, len(text) - max_chars)


def embedding_cuts(sections: pd.DataFrame, max_chars: int = DEFAULT_MAX_CHARS) -> list[int]:
    """:func:`embedding_chars_cut` of every row of ``sections``, row for row."""
    rows = records(sections[[c for c in ("title", "title_zh", "summary_norm", "summary", "text") if c in sections]])
    return [embedding_chars_cut(r, max_chars) for r in rows]


@dataclass(frozen=True)
class SectionEmbeddings:
    """The vectors dedup compares (float32, rows L2-normalized); a title text shared by many
    sections is stored once.

    Attributes:
        content: ``(n, d)``: :func:`embedding_text` of each section; an array or a read-only
            memory map.
        title_vectors: ``(m, d)``: one row per distinct title text; an array or a memory map.
        title_row: int32 ``(n,)``: row of the section's English title in ``title_vectors``; -1
            when none.
        title_zh_row: int32 ``(n,)``: row of its Chinese title (target script); -1 when none.
        title_texts: the ``m`` title texts, row for row (for :class:`EmbeddingParts`).
    """

    content: np.ndarray
    title_vectors: np.ndarray
    title_row: np.ndarray
    title_zh_row: np.ndarray
    title_texts: tuple[str, ...] = ()

    @classmethod
    def from_dense(cls, content: np.ndarray, title: np.ndarray | None = None,
                   title_zh: np.ndarray | None = None) -> SectionEmbeddings:
        """From ``(n, d)`` title matrices with an all-zero row for a missing title."""
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
        """The sections in ``order`` (an index array of length ``n``); the title table is shared."""
        return SectionEmbeddings(self.content[order], self.title_vectors, self.title_row[order],
                                 self.title_zh_row[order], self.title_texts)

    def without_content(self) -> SectionEmbeddings:
        """The same sections with an ``(n, 0)`` content matrix, for content rows kept elsewhere
        (:class:`pipeline.vectors.VectorFile`); :meth:`with_content` puts them back."""
        return SectionEmbeddings(np.empty((len(self.title_row), 0), np.float32), self.title_vectors, self.title_row,
                                 self.title_zh_row, self.title_texts)

    def __reduce__(self):
        """Pickled for another process: a mapped ``.npy`` goes as its path
        (:func:`pipeline.vectors.portable`)."""
        return _embeddings, (portable(self.content), portable(self.title_vectors), self.title_row,
                             self.title_zh_row, self.title_texts)

    def with_content(self, content: np.ndarray) -> SectionEmbeddings:
        """The same sections with ``content`` (``(n, d)``, an array or a memory map).

        Raises:
            ValueError: ``content`` does not have one row per section.
        """
        if content.shape[0] != len(self.title_row):
            raise ValueError(f"{content.shape[0]} content rows for {len(self.title_row)} sections")
        return SectionEmbeddings(content, self.title_vectors, self.title_row, self.title_zh_row, self.title_texts)

    def title_sums(self, rows_en: np.ndarray, rows_zh: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
        """The vectors the cross-language title neighbours are searched on: per section the
        L2-normalized sum of the title vectors at rows ``rows_en`` and ``rows_zh`` (``-1``: none; zero
        without titles), float32 ``(len(rows_en), d)``, written into ``out`` when given."""
        part = np.zeros((len(rows_en), self.title_vectors.shape[1]), np.float32) if out is None else out
        part[:] = 0
        for row in (rows_en, rows_zh):
            has = row >= 0
            part[has] += self.title_vectors[row[has]]
        norms = np.linalg.norm(part, axis=1, keepdims=True)
        np.divide(part, norms, out=part, where=norms > 0)
        return part


def _embeddings(content, title_vectors, title_row, title_zh_row, title_texts) -> SectionEmbeddings:
    """The :class:`SectionEmbeddings` of its ``__reduce__``."""
    return SectionEmbeddings(restored(content), restored(title_vectors), title_row, title_zh_row, title_texts)


def _check_permutation(positions: np.ndarray | None, n: int) -> None:
    """Raise ``ValueError`` unless ``positions`` is None or a permutation of ``range(n)``."""
    if positions is not None and (len(positions) != n or not np.array_equal(np.sort(positions), np.arange(n))):
        raise ValueError(f"positions must be a permutation of {n} rows")


class EmbeddingParts:
    """:class:`SectionEmbeddings` of consecutive chunks, added as they come (:meth:`add`) and
    joined at the end (:meth:`join`). A title text already seen keeps its first row, so a popular
    title's vector is held once.

    Args:
        folder: when given, the title vectors go to a :class:`pipeline.vectors.VectorFile` there
            (memory-mapped when joined); None: in memory.

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
        """Append the sections of ``part`` (its titles named by ``title_texts``).

        Raises:
            ValueError: ``part`` has title vectors that ``title_texts`` does not name.
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
        """The sections added, one part after the other; the parts are dropped.

        Args:
            positions: int ``(n,)``: where row ``k`` of the concatenation goes (a permutation);
                None: in turn.
            texts: keep ``title_texts`` (only needed to concatenate again); False gives ``()``.

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


class EmbeddingInputs(NamedTuple):
    """What :func:`embed_sections` encodes of ``n`` sections, without the sections (the runner
    spills it per chunk, :meth:`to_batch`, and encodes later).

    Attributes:
        texts: ``n`` :func:`embedding_text` strings.
        titles: ``n`` ``(English title, Chinese title)`` pairs (:func:`_titles`; None where missing).
    """

    texts: list[str]
    titles: list[tuple[str | None, str | None]]

    def to_batch(self) -> pa.RecordBatch:
        """As an Arrow record batch (``text``, ``title``, ``title_zh``: strings, titles nullable);
        :meth:`from_batch` gives the same values back."""
        return pa.record_batch([pa.array(self.texts, pa.string()), pa.array([t for t, _ in self.titles], pa.string()),
                                pa.array([z for _, z in self.titles], pa.string())], names=["text", "title", "title_zh"])

    @classmethod
    def from_batch(cls, batch: pa.RecordBatch) -> EmbeddingInputs:
        """The inputs of a :meth:`to_batch` batch."""
        titles = list(zip(batch.column(1).to_pylist(), batch.column(2).to_pylist(), strict=True))
        return cls(batch.column(0).to_pylist(), titles)


def embedding_inputs(sections: pd.DataFrame) -> EmbeddingInputs:
    """The :class:`EmbeddingInputs` of ``sections`` (rows with ``title``, ``title_zh``,
    ``summary_norm`` or ``summary``, ``text``), row for row."""
    rows = records(sections[[c for c in ("title", "title_zh", "summary_norm", "summary", "text") if c in sections]])
    return EmbeddingInputs([embedding_text(r) for r in rows], [_titles(r) for r in rows])


def embed_inputs(inputs: EmbeddingInputs, embedder: Embedder) -> SectionEmbeddings:
    """Encode :func:`embedding_inputs` in one ``encode`` call (section texts, then each distinct
    title once): :class:`SectionEmbeddings` of ``len(inputs.texts)`` rows."""
    return submit_inputs(inputs, embedder)()


def submit_inputs(inputs: EmbeddingInputs, embedder: Embedder) -> Callable[[], SectionEmbeddings]:
    """:func:`embed_inputs`, started (:func:`pipeline.embed.submit_encode`): the returned
    function waits for and gives the same result."""
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
    """:func:`embed_inputs` of :func:`embedding_inputs` of ``sections`` (rows with ``title``,
    ``title_zh``, ``summary_norm`` or ``summary``, ``text``): :class:`SectionEmbeddings` of
    ``len(sections)`` rows."""
    return embed_inputs(embedding_inputs(sections), embedder)
