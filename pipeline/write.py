"""Write: the output tables as Parquet (zstd) with explicit Arrow schemas, plus ``manifest.json``.

The schemas below are the output contract analysts and checks rely on; columns may be added,
never renamed or retyped. Each Parquet file carries the pipeline version and the
configuration fingerprint in its key-value metadata (as ``datasets`` does with its
``huggingface`` key), and nothing that changes between identical runs (no timestamps), so two
runs over the same corpus write identical table contents.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

STR = pa.string()
LIST_STR = pa.list_(pa.string())

DOCUMENTS_SCHEMA = pa.schema([
    ("doc_id", STR), ("source_path", STR), ("content_sha256", STR), ("encoding", STR), ("lang", STR),
    ("n_bytes", pa.int64()), ("n_chars", pa.int64()), ("text", STR), ("status", STR), ("error", STR),
    ("venue", STR), ("year", pa.int16()), ("urls", LIST_STR), ("n_sections", pa.int32()),
    ("raw_text", STR), ("title", STR), ("url", STR), ("published", STR), ("notes", STR), ("dup_of", STR),
])
SECTIONS_SCHEMA = pa.schema([
    ("section_id", STR), ("doc_id", STR), ("ordinal", pa.int32()), ("char_start", pa.int64()),
    ("char_end", pa.int64()), ("heading", STR), ("lang", STR), ("text", STR), ("text_norm", STR),
    ("title", STR), ("title_zh", STR), ("authors", LIST_STR), ("authors_truncated", pa.bool_()),
    ("institutions", LIST_STR), ("venue", STR), ("year", pa.int16()), ("award", STR), ("award_raw", STR),
    ("arxiv_id", STR), ("arxiv_version", STR), ("urls", LIST_STR), ("url_kinds", LIST_STR), ("summary", STR),
    ("summary_norm", STR), ("keywords", LIST_STR),
    ("paper_id", STR), ("match_score", pa.float32()),
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

TABLES = {
    "documents": DOCUMENTS_SCHEMA,
    "sections": SECTIONS_SCHEMA,
    "papers": PAPERS_SCHEMA,
    "dropped": DROPPED_SCHEMA,
    "context": CONTEXT_SCHEMA,
}


def to_table(df: pd.DataFrame, schema: pa.Schema, metadata: dict[str, str]) -> pa.Table:
    """Select the schema's columns of ``df`` in order and convert with that schema.

    Raises:
        KeyError: ``df`` lacks a column of the schema (names the missing ones).
        pyarrow.ArrowInvalid / ArrowTypeError: a value does not fit its column type.
    """
    missing = [n for n in schema.names if n not in df.columns]
    if missing:
        raise KeyError(f"output table lacks columns {missing}; it has {sorted(df.columns)}")
    frame = df[schema.names].astype(object).where(df[schema.names].notna(), None)
    table = pa.Table.from_pandas(frame, schema=schema, preserve_index=False)
    return table.replace_schema_metadata({k.encode(): v.encode() for k, v in metadata.items()})


def write_tables(out_dir: str | Path, frames: dict[str, pd.DataFrame], metadata: dict[str, str]) -> dict[str, int]:
    """Write each of :data:`TABLES` from ``frames`` to ``<out_dir>/<name>.parquet`` (zstd).

    Returns:
        row count per table.
    """
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    counts = {}
    for name, schema in TABLES.items():
        table = to_table(frames[name], schema, metadata)
        pq.write_table(table, out / f"{name}.parquet", compression="zstd")
        counts[name] = table.num_rows
    return counts


def write_manifest(out_dir: str | Path, manifest: dict[str, Any]) -> None:
    """Write ``manifest.json`` (UTF-8, sorted keys, indented)."""
    path = Path(out_dir) / "manifest.json"
    path.write_text(json.dumps(manifest, ensure_ascii=False, indent=2, sort_keys=True, allow_nan=False) + "\n", encoding="utf-8")
