"""Dedup step 1, embed: each section's :func:`embedding_text` and each distinct title once
(:class:`SectionEmbeddings`), through the configured :class:`pipeline.embed.Embedder` (unit rows)."""

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
    """``(embedding_text(row), characters of its sources left out)``."""
    summary = row.get("summary_norm") or row.get("summary") or ""
    head = summary[:SUMMARY_HEAD_CHARS]
    text = "\n".join(p for p in (row.get("title"), row.get("title_zh"), head) if p)
    if text:
        return text, len(summary) - len(head)
    full = row.get("text") or ""
    text = full[:SUMMARY_HEAD_CHARS]
    return text, len(full) - len(text)


def embedding_text(row: dict) -> str:
    """Title, Chinese title and the first :data:`SUMMARY_HEAD_CHARS` of the summary, one per line;
    with none of them, the text's first :data:`SUMMARY_HEAD_CHARS`."""
    return _embedding_source(row)[0]


def embedding_chars_cut(row: dict, max_chars: int = DEFAULT_MAX_CHARS) -> int:
    """``sections.embedding_chars_cut``: characters of a section's sources its vector leaves out
    (past the summary head, plus past the embedder's ``max_chars``); token limits not counted."""
    text, cut = _embedding_source(row)
    return cut + max(0, len(text) - max_chars)


def embedding_cuts(sections: pd.DataFrame, max_chars: int = DEFAULT_MAX_CHARS) -> list[int]:
    """:func:`embedding_chars_cut` of every row of ``sections``, row for row."""
    rows = records(sections[[c for c in ("title", "title_zh", "summary_norm", "summary", "text") if c in sections]])
    return [embedding_chars_cut(r, max_chars) for r in rows]


@dataclass(frozen=True)
class SectionEmbeddings:
    """The vectors dedup compares (float32, unit rows); shared title texts stored once.

    Attributes:
        content: ``(n, d)`` of each :func:`embedding_text`; an array or read-only memory map.
        title_vectors: ``(m, d)``, one row per distinct title text.
        title_row, title_zh_row: int32 ``(n,)`` rows of the English / Chinese title, -1 when none.
        title_texts: the ``m`` title texts, row for row.
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
        """``(n, d)`` English title vectors, zero rows where none (built per call)."""
        return self._dense(self.title_row)

    @property
    def title_zh(self) -> np.ndarray:
        """``(n, d)`` Chinese title vectors, zero rows where none (built per call)."""
        return self._dense(self.title_zh_row)

    def take(self, order: np.ndarray) -> SectionEmbeddings:
        """The sections in ``order`` (an index array of length ``n``); the title table is shared."""
        return SectionEmbeddings(self.content[order], self.title_vectors, self.title_row[order],
                                 self.title_zh_row[order], self.title_texts)

    def without_content(self) -> SectionEmbeddings:
        """Same sections with an ``(n, 0)`` content matrix; :meth:`with_content` puts it back."""
        return SectionEmbeddings(np.empty((len(self.title_row), 0), np.float32), self.title_vectors, self.title_row,
                                 self.title_zh_row, self.title_texts)

    def __reduce__(self):
        """A mapped ``.npy`` pickles as its path (:func:`pipeline.vectors.portable`)."""
        return _embeddings, (portable(self.content), portable(self.title_vectors), self.title_row,
                             self.title_zh_row, self.title_texts)

    def with_content(self, content: np.ndarray) -> SectionEmbeddings:
        """The same sections with ``content`` ``(n, d)``; ValueError unless one row per section."""
        if content.shape[0] != len(self.title_row):
            raise ValueError(f"{content.shape[0]} content rows for {len(self.title_row)} sections")
        return SectionEmbeddings(content, self.title_vectors, self.title_row, self.title_zh_row, self.title_texts)

    def title_sums(self, rows_en: np.ndarray, rows_zh: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
        """Per section the normalized sum of title vectors at ``rows_en`` and ``rows_zh`` (-1 none;
        zero without titles): float32 ``(len(rows_en), d)``, into ``out`` when given."""
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
    """:class:`SectionEmbeddings` of consecutive chunks, :meth:`add`-ed and :meth:`join`-ed; a
    title text keeps its first row.

    Args:
        folder: title vectors go to a :class:`pipeline.vectors.VectorFile` there; None: memory.

    Attributes:
        n: sections added so far.

    Raises OSError: from :meth:`add`, when the title file cannot be written.
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
        """Append ``part``'s sections; ValueError when its title vectors lack ``title_texts``."""
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
        """The sections added, in turn; the parts are dropped.

        Args:
            positions: int ``(n,)`` permutation, where row ``k`` goes; None: in turn.
            texts: keep ``title_texts``; False gives ``()``.

        Raises ValueError: nothing added, or ``positions`` not a permutation of ``n``.
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
    """What :func:`embed_sections` encodes of ``n`` sections (spilled per chunk by the runner):
    ``texts`` (:func:`embedding_text`) and ``titles`` (``(English, Chinese)``, None missing)."""

    texts: list[str]
    titles: list[tuple[str | None, str | None]]

    def to_batch(self) -> pa.RecordBatch:
        """Arrow batch ``text``, ``title``, ``title_zh`` (titles nullable); :meth:`from_batch` inverts it."""
        return pa.record_batch([pa.array(self.texts, pa.string()), pa.array([t for t, _ in self.titles], pa.string()),
                                pa.array([z for _, z in self.titles], pa.string())], names=["text", "title", "title_zh"])

    @classmethod
    def from_batch(cls, batch: pa.RecordBatch) -> EmbeddingInputs:
        """The inputs of a :meth:`to_batch` batch."""
        titles = list(zip(batch.column(1).to_pylist(), batch.column(2).to_pylist(), strict=True))
        return cls(batch.column(0).to_pylist(), titles)


def embedding_inputs(sections: pd.DataFrame) -> EmbeddingInputs:
    """:class:`EmbeddingInputs` of ``sections`` (``title``, ``title_zh``, ``summary_norm`` or
    ``summary``, ``text``), row for row."""
    rows = records(sections[[c for c in ("title", "title_zh", "summary_norm", "summary", "text") if c in sections]])
    return EmbeddingInputs([embedding_text(r) for r in rows], [_titles(r) for r in rows])


def embed_inputs(inputs: EmbeddingInputs, embedder: Embedder) -> SectionEmbeddings:
    """One ``encode`` call (texts, then each distinct title once): :class:`SectionEmbeddings`."""
    return submit_inputs(inputs, embedder)()


def submit_inputs(inputs: EmbeddingInputs, embedder: Embedder) -> Callable[[], SectionEmbeddings]:
    """:func:`embed_inputs`, started; the returned function waits for the same result."""
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
    """:func:`embed_inputs` of :func:`embedding_inputs` of ``sections``."""
    return embed_inputs(embedding_inputs(sections), embedder)
