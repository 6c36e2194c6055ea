"""The run's scratch columns: what dedup reads of every section (:data:`DEDUP_COLUMNS`, slimmed
by :func:`slim_sections`), kept on disk chunk by chunk (:class:`SlimColumns`) and read back a
few columns at a time.
"""

from __future__ import annotations

import logging
import pickle
import tempfile
from collections.abc import Iterable, Sequence
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa

log = logging.getLogger(__package__)  # one logger for every step: "pipeline.dedup"


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
