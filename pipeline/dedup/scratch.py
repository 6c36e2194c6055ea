"""The run's scratch columns: what dedup reads of every section, column by column, from the
runner's scratch ``sections.parquet`` (:class:`ScratchColumns`)."""

from __future__ import annotations

import contextlib
import shutil
import tempfile
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from ..write import SECTIONS_SCHEMA, to_table

PAPER_COLUMNS = (
    "paper_id", "title", "title_zh", "arxiv_id", "venue", "year", "award", "authors", "institutions",
    "urls", "url_kinds", "summary", "section_ids", "doc_ids", "n_mentions", "n_sources", "conflicts",
)

#: The sections columns fusion reads; ``summary_norm`` cut to its first character and
#: ``_summary_chars`` its length (:meth:`ScratchColumns.column`).
DEDUP_COLUMNS = ("section_id", "doc_id", "title", "title_zh", "arxiv_id", "authors", "institutions", "venue",
                 "year", "award", "award_raw", "urls", "url_kinds", "summary_norm", "_summary_chars")

#: The columns :class:`pipeline.dedup.score.PairScorer` reads (its codes are built from them).
SCORER_COLUMNS = ("doc_id", "arxiv_id", "title", "title_zh", "summary_norm", "summary", "authors", "year", "venue")

#: The columns of the file dedup reads, as :data:`pipeline.write.SECTIONS_SCHEMA` types them.
SCRATCH_SCHEMA = pa.schema([SECTIONS_SCHEMA.field(name) for name in (*DEDUP_COLUMNS[:-1], "summary")])

#: Rows per batch when a text column is read for its first character or its length.
TEXT_BATCH = 65536


class ScratchColumns:
    """The sections of a Parquet file (:data:`SCRATCH_SCHEMA` columns), read one column at a time.

    Raises OSError: the file cannot be read; pyarrow.ArrowInvalid: it is not Parquet.
    """

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self._file = pq.ParquetFile(self.path)
        self.n = self._file.metadata.num_rows

    @classmethod
    def write(cls, sections: pd.DataFrame, path: str | Path) -> ScratchColumns:
        """Write ``sections``' :data:`SCRATCH_SCHEMA` columns (missing: null) to ``path`` and open it;
        pyarrow.ArrowInvalid / ArrowTypeError when a value does not fit."""
        missing = {name: None for name in SCRATCH_SCHEMA.names if name not in sections}
        pq.write_table(to_table(sections.assign(**missing), SCRATCH_SCHEMA, {}), path)
        return cls(path)

    def column(self, name: str) -> pa.ChunkedArray:
        """Column ``name`` of every row, in file order; ``summary_norm`` and ``summary`` cut to their
        first character, ``_summary_chars`` the whole ``summary_norm``'s length (0 where none).
        KeyError for a missing column."""
        derived = {"summary_norm": "summary_norm", "summary": "summary", "_summary_chars": "summary_norm"}
        source = derived.get(name, name)
        if source not in self._file.schema_arrow.names:
            raise KeyError(name)
        if name not in derived:
            return self._file.read(columns=[name]).column(0)
        parts = []
        for batch in self._file.iter_batches(batch_size=TEXT_BATCH, columns=[source]):
            text = batch.column(0)
            if name == "_summary_chars":
                parts.append(pc.fill_null(pc.utf8_length(text), 0).cast(pa.int32()))
            else:
                parts.append(pc.utf8_slice_codeunits(text, 0, 1))
        return pa.chunked_array(parts, type=pa.int32() if name == "_summary_chars" else pa.string())

    def series(self, name: str, order: np.ndarray | None = None) -> pd.Series:
        """:meth:`column` as a Series (``pd.ArrowDtype``) taken into ``order`` (None: file order),
        index ``0..n-1``."""
        column = self.column(name)
        if order is not None:
            column = column.take(pa.array(order))
        return pd.Series(pd.arrays.ArrowExtensionArray(column), name=name)

    def regrouped(self, positions: np.ndarray, bounds: Sequence[int], folder: str | Path | None = None) -> Regrouped:
        """The :data:`DEDUP_COLUMNS` of the rows at ``positions``, in chunks at ``bounds`` (chunk
        ``k``: ``positions[bounds[k]:bounds[k + 1]]``), written column by column as Arrow IPC files
        in ``folder``: memory holds one column of every row.

        Raises:
            ValueError: ``bounds`` do not run from 0 to ``len(positions)`` in order.
            IndexError: a position outside ``0..n-1``.
        """
        positions = np.asarray(positions, dtype=np.int64)
        bounds = [int(b) for b in bounds]
        if not bounds or bounds[0] != 0 or bounds[-1] != len(positions) or any(
                a > b for a, b in zip(bounds, bounds[1:], strict=False)):
            raise ValueError(f"bounds must run from 0 to {len(positions)} in order")
        if len(positions) and (positions.min() < 0 or positions.max() >= self.n):
            raise IndexError(f"positions outside 0..{self.n - 1}")
        out = Regrouped(Path(tempfile.mkdtemp(dir=folder, prefix="regrouped-")), len(bounds) - 1)
        take = pa.array(positions)
        for name in DEDUP_COLUMNS:
            column = self.column(name).take(take).combine_chunks()
            schema = pa.schema([(name, column.type)])
            with pa.OSFile(str(out.dir / f"{name}.arrow"), "wb") as sink, pa.ipc.new_file(sink, schema) as writer:
                for lo, hi in zip(bounds, bounds[1:], strict=False):
                    writer.write_batch(pa.record_batch([column.slice(lo, hi - lo)], schema=schema))
            del column
        return out

    def close(self) -> None:
        """Let the file go (it is the runner's: it stays)."""
        self._file.close()


class Regrouped:
    """The chunks of :meth:`ScratchColumns.regrouped`: ``dir`` (one IPC file a column, removed by
    :meth:`close`) and ``n_chunks``."""

    def __init__(self, folder: Path, n_chunks: int) -> None:
        self.dir, self.n_chunks = folder, n_chunks

    def rows(self, k: int) -> list[dict]:
        """Chunk ``k``'s rows as :data:`DEDUP_COLUMNS` dicts (lists as lists, missing None), via
        memory maps. IndexError for no chunk ``k``."""
        if not 0 <= k < self.n_chunks:
            raise IndexError(f"chunk {k} of {self.n_chunks}")
        with contextlib.ExitStack() as maps:
            columns = [pa.ipc.open_file(maps.enter_context(pa.memory_map(str(self.dir / f"{name}.arrow"))))
                       .get_batch(k).column(0) for name in DEDUP_COLUMNS]
            return pa.table(columns, names=list(DEDUP_COLUMNS)).to_pylist()

    def close(self) -> None:
        """Remove the folder (idempotent)."""
        shutil.rmtree(self.dir, ignore_errors=True)


class _StoredColumns:
    """Columns ``names`` of ``store`` as :class:`pipeline.dedup.score.PairScorer` reads a DataFrame,
    each read when asked and taken into ``order`` (row ``i`` is ``store``'s ``order[i]``; None: as
    stored)."""

    def __init__(self, store: ScratchColumns, names: Sequence[str], order: np.ndarray | None = None):
        self._store, self._order = store, order
        self.columns = list(names)

    def __len__(self) -> int:
        return self._store.n

    def __getitem__(self, name: str) -> pd.Series:
        """Column ``name`` (index ``0..n-1``, in ``order``); KeyError unless in :attr:`columns`."""
        if name not in self.columns:
            raise KeyError(name)
        return self._store.series(name, self._order)
