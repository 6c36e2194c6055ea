"""Write: the output tables as Parquet (zstd) with explicit Arrow schemas, plus ``manifest.json``.

The schemas are the output contract: columns may be added, never renamed or retyped. Each file's
key-value metadata holds the pipeline version, configuration fingerprint and ``schema_version``,
and nothing that changes between identical runs, so identical runs write identical files.

Besides :data:`TABLES`, a run writes ``errors.parquet`` (:data:`ERRORS_SCHEMA`),
``paper_ids.parquet`` and ``changes.parquet`` (:data:`EXTRA_TABLES`: the run's inputs and
history, not its data).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

#: Output schema version (``schema_version`` metadata); raise it when a column changes.
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

#: ``errors.parquet``: ``path`` (file or ``file.jsonl#N``), ``stage`` (a stage, or ``per-document``),
#: ``error_type`` (exception name, or ``BinaryContent``, ``EmptyDocument``, ``InvalidJSON``,
#: ``InvalidRecord``, ``Timeout``), ``message`` (as ``documents.error``).
ERRORS_SCHEMA = pa.schema([("path", STR), ("stage", STR), ("error_type", STR), ("message", STR)])
#: ``paper_ids.parquet``: every paper id ever issued and the paper it names now.
PAPER_IDS_SCHEMA = pa.schema([("paper_id", STR), ("current_id", STR), ("since_run", STR), ("reason", STR)])
#: ``changes.parquet``: papers added, removed, merged, split and changed since the last run.
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
#: Tables written when the frames hold them, outside the data contract of :data:`TABLES`.
EXTRA_TABLES = {"errors": ERRORS_SCHEMA, "paper_ids": PAPER_IDS_SCHEMA, "changes": CHANGES_SCHEMA}


def to_table(df: pd.DataFrame, schema: pa.Schema, metadata: dict[str, str]) -> pa.Table:
    """The schema's columns of ``df`` in order, converted with that schema.

    Raises:
        KeyError: ``df`` lacks a schema column.
        pyarrow.ArrowInvalid / ArrowTypeError: a value does not fit its column type.
    """
    missing = [n for n in schema.names if n not in df.columns]
    if missing:
        raise KeyError(f"output table lacks columns {missing}; it has {sorted(df.columns)}")
    # column by column, missing markers as nulls; a dtype of the field's kind converts from its
    # array, others from Python values (so a bool in an int column is an error, not a cast)
    columns = [pa.array(_values(df[f.name], f.type), type=f.type, from_pandas=True) for f in schema]
    table = pa.Table.from_arrays(columns, schema=schema)
    metadata = {"schema_version": SCHEMA_VERSION, **metadata}
    return table.replace_schema_metadata({k.encode(): v.encode() for k, v in metadata.items()})


def _values(column: pd.Series, field_type: pa.DataType) -> pd.Series | list:
    """The Series itself when its dtype is of ``field_type``'s kind, else its Python values."""
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
    """One output table written batch by batch (``ParquetWriter``, zstd); each :meth:`write` is one
    or more row groups. ``metadata`` as in :func:`to_table` (``schema_version`` added). Closed
    after no write, the file holds the schema and no rows."""

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
