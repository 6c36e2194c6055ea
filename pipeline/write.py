"""Write: the output tables as Parquet (zstd) with explicit Arrow schemas, plus ``manifest.json``.

The schemas below are the output contract analysts and checks rely on; columns may be added,
never renamed or retyped. Each Parquet file carries the pipeline version and the
configuration fingerprint in its key-value metadata (as ``datasets`` does with its
``huggingface`` key), plus ``schema_version`` (:data:`SCHEMA_VERSION`), and nothing that changes
between identical runs (no timestamps), so two runs over the same corpus write identical files.

Besides the five tables of :data:`TABLES`, a run writes ``errors.parquet``
(:data:`ERRORS_SCHEMA`, one row per file or JSON line that could not be read, decoded or parsed,
or that has no text), ``paper_ids.parquet`` and ``changes.parquet`` (:data:`PAPER_IDS_SCHEMA`,
:data:`CHANGES_SCHEMA`); they are kept apart from :data:`TABLES` because they describe the run's
inputs and history rather than its data.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

#: Version of the output schemas, in every Parquet file's key-value metadata
#: (``schema_version``); raise it when a column is added, renamed or retyped.
SCHEMA_VERSION = "3"

STR = pa.string()
LIST_STR = pa.list_(pa.string())

DOCUMENTS_SCHEMA = pa.schema([
    ("doc_id", STR), ("source_path", STR), ("content_sha256", STR), ("encoding", STR), ("lang", STR),
    ("n_bytes", pa.int64()), ("n_chars", pa.int64()), ("text", STR), ("status", STR), ("error", STR),
    ("venue", STR), ("year", pa.int16()), ("urls", LIST_STR), ("n_sections", pa.int32()),
    ("raw_text", STR), ("title", STR), ("url", STR), ("published", STR), ("notes", STR), ("dup_of", STR),
    ("reason", STR),
])
SECTIONS_SCHEMA = pa.schema([
    ("section_id", STR), ("doc_id", STR), ("ordinal", pa.int32()), ("char_start", pa.int64()),
    ("char_end", pa.int64()), ("heading", STR), ("lang", STR), ("text", STR), ("text_norm", STR),
    ("title", STR), ("title_zh", STR), ("authors", LIST_STR), ("authors_truncated", pa.bool_()),
    ("institutions", LIST_STR), ("venue", STR), ("year", pa.int16()), ("award", STR), ("award_raw", STR),
    ("arxiv_id", STR), ("arxiv_version", STR), ("urls", LIST_STR), ("url_kinds", LIST_STR), ("summary", STR),
    ("summary_norm", STR), ("keywords", LIST_STR),
    ("paper_id", STR), ("match_score", pa.float32()), ("embedding_chars_cut", pa.int32()),
])
PAPERS_SCHEMA = pa.schema([
    ("paper_id", STR), ("title", STR), ("title_zh", STR), ("arxiv_id", STR), ("venue", STR),
    ("year", pa.int16()), ("award", STR), ("authors", LIST_STR), ("institutions", LIST_STR), ("urls", LIST_STR),
    ("url_kinds", LIST_STR), ("summary", STR), ("section_ids", LIST_STR), ("doc_ids", LIST_STR), ("n_mentions", pa.int32()),
    ("n_sources", pa.int32()), ("conflicts", LIST_STR),
])
DROPPED_SCHEMA = pa.schema([
    ("doc_id", STR), ("char_start", pa.int64()), ("char_end", pa.int64()), ("reason", STR), ("text", STR),
])
CONTEXT_SCHEMA = pa.schema([
    ("doc_id", STR), ("char_start", pa.int64()), ("char_end", pa.int64()), ("kind", STR),
])

#: ``errors.parquet``: ``path`` (the file, or ``file.jsonl#N`` for one JSON line), ``stage``
#: (``ingest``, ``clean``, ``segment``, ``normalize`` or ``extract``; ``per-document`` for a file
#: over its time budget), ``error_type`` (a Python exception name, or ``BinaryContent``,
#: ``EmptyDocument``, ``InvalidJSON``, ``InvalidRecord``, ``Timeout``),
#: ``message`` (as in ``documents.error``).
ERRORS_SCHEMA = pa.schema([("path", STR), ("stage", STR), ("error_type", STR), ("message", STR)])
#: ``paper_ids.parquet``: every paper id ever issued in the output folder and the paper it names
#: now (:mod:`pipeline.identity`).
PAPER_IDS_SCHEMA = pa.schema([("paper_id", STR), ("current_id", STR), ("since_run", STR), ("reason", STR)])
#: ``changes.parquet``: the papers added, removed, merged, split and changed since the last run
#: (:mod:`pipeline.identity`).
CHANGES_SCHEMA = pa.schema([
    ("run_id", STR), ("previous_run_id", STR), ("change", STR), ("paper_id", STR), ("related_id", STR),
    ("field", STR), ("old_value", STR), ("new_value", STR),
])

TABLES = {
    "documents": DOCUMENTS_SCHEMA,
    "sections": SECTIONS_SCHEMA,
    "papers": PAPERS_SCHEMA,
    "dropped": DROPPED_SCHEMA,
    "context": CONTEXT_SCHEMA,
}
#: Tables written when the frames hold them, outside the data contract of :data:`TABLES`: the
#: run's errors, the paper ids' history and the changes since the last run.
EXTRA_TABLES = {"errors": ERRORS_SCHEMA, "paper_ids": PAPER_IDS_SCHEMA, "changes": CHANGES_SCHEMA}


def to_table(df: pd.DataFrame, schema: pa.Schema, metadata: dict[str, str]) -> pa.Table:
    """Select the schema's columns of ``df`` in order and convert with that schema.

    Raises:
        KeyError: ``df`` lacks a column of the schema (names the missing ones).
        pyarrow.ArrowInvalid / ArrowTypeError: a value does not fit its column type.
    """
    missing = [n for n in schema.names if n not in df.columns]
    if missing:
        raise KeyError(f"output table lacks columns {missing}; it has {sorted(df.columns)}")
    # column by column, missing markers (None, NaN, pd.NA) as nulls (pyarrow's from_pandas
    # semantics): a column whose dtype already is of the field's kind converts from its array,
    # any other from its Python values (so a bool in an int column or a float in a bool column is
    # an error, not a cast), without an object copy of the frame
    columns = [pa.array(_values(df[f.name], f.type), type=f.type, from_pandas=True) for f in schema]
    table = pa.Table.from_arrays(columns, schema=schema)
    metadata = {"schema_version": SCHEMA_VERSION, **metadata}
    return table.replace_schema_metadata({k.encode(): v.encode() for k, v in metadata.items()})


def _values(column: pd.Series, field_type: pa.DataType) -> pd.Series | list:
    """What :func:`to_table` converts of ``column`` into ``field_type``: the Series itself when its
    dtype is of the field's kind (string; int, unsigned or float for a number; bool), else its
    values as Python objects."""
    kind = getattr(column.dtype, "kind", "O")
    if pa.types.is_string(field_type):
        same = isinstance(column.dtype, pd.StringDtype)
    elif pa.types.is_integer(field_type) or pa.types.is_floating(field_type):
        same = kind in "iuf"
    elif pa.types.is_boolean(field_type):
        same = kind == "b"
    else:
        same = False
    return column if same else column.tolist()


class TableWriter:
    """One output table written batch by batch (``pyarrow.parquet.ParquetWriter``, zstd), so a
    run never holds a whole table: each :meth:`write` becomes one or more row groups.

    Args:
        path: the Parquet file to write (its folder must exist).
        schema: one of :data:`TABLES` / :data:`EXTRA_TABLES` (or any Arrow schema).
        metadata: key-value metadata as in :func:`to_table` (``schema_version`` added).

    A file closed after no :meth:`write` holds the schema and no rows.
    """

    def __init__(self, path: str | Path, schema: pa.Schema, metadata: dict[str, str]):
        self.path = Path(path)
        self.schema = schema
        self.metadata = metadata
        meta = {"schema_version": SCHEMA_VERSION, **metadata}
        self._writer = pq.ParquetWriter(self.path, schema.with_metadata({k.encode(): v.encode() for k, v in meta.items()}),
                                        compression="zstd")
        self.num_rows = 0

    def write(self, df: pd.DataFrame) -> None:
        """Append the rows of ``df`` (its schema columns; see :func:`to_table` for the errors)."""
        if len(df):
            self.write_table(to_table(df, self.schema, self.metadata))

    def write_table(self, table: pa.Table) -> None:
        """Append an Arrow table of this schema (metadata may differ)."""
        if table.num_rows:
            self._writer.write_table(table.cast(self._writer.schema))
            self.num_rows += table.num_rows

    def close(self) -> int:
        """Finish the file; returns its row count."""
        self._writer.close()
        return self.num_rows


def write_manifest(out_dir: str | Path, manifest: dict[str, Any]) -> Path:
    """Write ``manifest.json`` (UTF-8, sorted keys, indented); returns its path."""
    path = Path(out_dir) / "manifest.json"
    path.write_text(json.dumps(manifest, ensure_ascii=False, indent=2, sort_keys=True, allow_nan=False) + "\n", encoding="utf-8")
    return path
