"""The per-document stages on one batch of files: ingest, clean, segment, explode, normalize,
extract (:func:`process_files`, the unit of work of every engine), with per-row error isolation
and the per-file time budget; the results as rows per file (:class:`BatchResult`)."""

from __future__ import annotations

import contextlib
import logging
import math
import os
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any, NamedTuple

import pandas as pd

from . import clean, extract, front_matter, ingest, normalize, segment
from .budget import Timeout, enable_cpu_backstop, time_limit
from .config import Config
from .errors import ErrorText
from .memory import tune_allocators
from .run_tables import (
    _failed_reads,
    _restore_failed,
    json_rows,
    mark_copies,
)
from .stage import Stage
from .state import Entry, frame_records

log = logging.getLogger(__name__)

#: The per-document stages by name, in order (progress bars, :class:`BatchResult` seconds).
DOCUMENT_STAGE_NAMES = ("ingest", "clean", "segment", "normalize", "extract")
DOCUMENT_STAGES: tuple[Stage, ...] = (ingest.STAGE, clean.STAGE, segment.STAGE)
SECTION_STAGES: tuple[Stage, ...] = (normalize.STAGE, extract.STAGE)

#: pandas string storage in the per-document stages: ``"python"`` avoids copying ``str`` into
#: Arrow and back each pass (bench/README.md); rows are the same either way.
DOCUMENT_STRING_STORAGE = "python"


def _document_strings() -> contextlib.AbstractContextManager:
    """A context in which new pandas string columns use :data:`DOCUMENT_STRING_STORAGE`."""
    return pd.option_context("mode.string_storage", DOCUMENT_STRING_STORAGE)


def _run_isolated(stage: Stage, batch: pd.DataFrame, config: Config,
                  key: str) -> tuple[pd.DataFrame, dict[str, ErrorText]]:
    """Run ``stage`` on ``batch``; on failure rerun row by row. Returns ``(output, failures)``,
    failures mapping each failing row's ``key`` to :func:`_error_message`."""
    try:
        return stage(batch, config), {}
    except Exception:  # noqa: BLE001 - isolate the bad row, keep the run going
        log.exception("stage %s failed on a batch; retrying row by row", stage.name)
    outs, failures = [], {}
    for i in range(len(batch)):
        row = batch.iloc[i : i + 1].reset_index(drop=True)
        try:
            outs.append(stage(row, config))
        except Exception as exc:  # noqa: BLE001
            failures[row[key].iloc[0]] = _error_message(stage.name, exc)
    out = pd.concat(outs, ignore_index=True) if outs else stage.fn(batch.iloc[0:0], config)
    return out, failures


def _error_message(stage_name: str, exc: BaseException) -> ErrorText:
    """``"<stage>: <ErrorType>: <message>"``, lone surrogates as ``\\udcXX`` (UTF-8 cannot hold them)."""
    message = f"{stage_name}: {type(exc).__name__}: {exc}"
    return ErrorText(message.encode("utf-8", "backslashreplace").decode("utf-8"), stage_name, type(exc).__name__)


def _mark_failed(docs: pd.DataFrame, failures: dict[str, ErrorText]) -> pd.DataFrame:
    """``docs`` with the ``failures`` rows (doc id -> message) made ``error``, with
    :data:`pipeline.ingest.ERROR_FIELDS`."""
    for doc_id, message in failures.items():
        mask = docs["doc_id"] == doc_id
        docs.loc[mask, "status"] = "error"
        docs.loc[mask, "error"] = str(message)
        docs.loc[mask, "_error_stage"] = message.stage
        docs.loc[mask, "_error_type"] = message.error_type
        log.warning("document %s failed: %s", doc_id, message)
    return docs

class FileResult(NamedTuple):
    """What the per-document stages made of one listed file, rows as the state's JSON bytes.

    Attributes:
        source_path: relative to the corpus.
        documents, sections: JSON bytes of its rows.
        n_documents, n_sections: row counts.
        content_hashes: each documents row's ``content_sha256`` (None where none).
    """

    source_path: str
    documents: bytes
    sections: bytes
    n_documents: int
    n_sections: int
    content_hashes: tuple[str | None, ...]

    @classmethod
    def from_rows(cls, source_path: str, documents: list[dict[str, Any]], sections: list[dict[str, Any]]) -> FileResult:
        """The result of a file from its plain rows."""
        entry = Entry.from_rows(source_path, "", documents, sections)
        hashes = tuple(h if isinstance(h := r.get("content_sha256"), str) else None for r in documents)
        return cls(source_path, entry.documents, entry.sections, entry.n_documents, entry.n_sections, hashes)

    def rows(self) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
        """``(documents rows, sections rows)``, decoded."""
        return json_rows(self.documents), json_rows(self.sections)


@dataclass
class BatchResult:
    """What the per-document stages made of one batch, as plain values (crosses processes).

    Attributes:
        files: a :class:`FileResult` per listed file, in batch order.
        failed_files: files of rows a stage raised on (not kept in the state).
        seconds: per :data:`DOCUMENT_STAGE_NAMES`, measured where it ran.
        n_files: listed files in the batch.
    """

    files: list[FileResult]
    failed_files: set[str]
    seconds: dict[str, float]
    n_files: int


def model_loaders(config: Config) -> list[tuple[str, Callable[[], Any]]]:
    """``(name, load)`` of every model the stages use, in load order; each cached per process."""
    from . import keywords as kw
    from . import nlp

    def opencc() -> None:
        for script in dict.fromkeys((config.normalize.target_script, "zh-Hans", "zh-Hant")):
            normalize.to_script("机器学习模型與資料", script)

    def keywords() -> None:
        kw.keywords("深度学习模型在图像识别任务上取得了很好的效果。", "zh-Hans", config.extract.n_keywords)
        kw.keywords("Large language models learn in context from a few examples.", "en",
                     config.extract.n_keywords)

    return [("jieba", nlp._jieba_tokenizer), ("spaCy en", nlp.en_nlp), ("OpenCC", opencc),
            ("jieba IDF", kw.idf_table), ("keywords", keywords)]


def warm_models(config: Config) -> Config:
    """Load every model of :func:`model_loaders` and return ``config``: an executor's ``setup``."""
    for _, load in model_loaders(config):
        load()
    return config


def stage_worker(config: Config) -> Config:
    """:func:`warm_models` in a pool process, after :func:`pipeline.memory.tune_allocators` and
    :func:`pipeline.budget.enable_cpu_backstop`."""
    tune_allocators()
    enable_cpu_backstop()
    return warm_models(config)


def process_files(batch: pd.DataFrame, config: Config) -> BatchResult:
    """The per-document stages on one batch of the listing (``source_path``, ``abs_path``): every
    engine's unit of work; depends only on its arguments.

    Returns:
        the :class:`BatchResult`; a failing row or a file over ``config.run.file_timeout`` is an
        error row, never an exception.
    """
    seconds = dict.fromkeys(DOCUMENT_STAGE_NAMES, 0.0)
    with _document_strings():
        return _batch_result(batch, *_process_within_budget(batch.reset_index(drop=True), config, seconds), seconds)


def _batch_result(batch: pd.DataFrame, docs: pd.DataFrame, sections: pd.DataFrame, failed_files: set[str],
                  seconds: dict[str, float]) -> BatchResult:
    files = [FileResult.from_rows(path, doc_rows, section_rows)
             for path, doc_rows, section_rows in _split_by_file(batch["source_path"].tolist(), docs, sections)]
    return BatchResult(files=files, failed_files=failed_files, seconds=seconds, n_files=len(batch))


def died_file(batch: pd.DataFrame, config: Config) -> BatchResult:
    """The :class:`BatchResult` of a batch whose worker died on it alone: each file an error row
    ``WorkerDied`` (stage ``per-document``; not kept, so retried next run)."""
    seconds = dict.fromkeys(DOCUMENT_STAGE_NAMES, 0.0)
    message = ErrorText("WorkerDied: the worker process running the per-document stages on this file died "
                        "(killed, out of memory, a crash in native code, or native code past its CPU limit: "
                        "run.file_timeout)", "per-document", "WorkerDied")
    for path in batch["source_path"]:
        log.warning("%s: %s", path, message)
    with _document_strings():
        failed = dict.fromkeys(batch["source_path"], message)
        return _batch_result(batch, *_process_batch(batch.reset_index(drop=True), config, seconds, failed_reads=failed),
                             seconds)


def _process_within_budget(batch: pd.DataFrame, config: Config,
                           seconds: dict[str, float]) -> tuple[pd.DataFrame, pd.DataFrame, set[str]]:
    """:func:`_process_batch` under :func:`pipeline.budget.time_limit` of :func:`_budget` seconds;
    an overrun batch is redone file by file, and a file over its budget is a ``Timeout`` error row
    (stage ``per-document``; not kept, so retried next run)."""
    budget = _budget(batch, config.run.file_timeout)
    try:
        with time_limit(budget):
            return _process_batch(batch, config, seconds)
    except Timeout:
        pass
    if len(batch) > 1:
        parts = [_process_within_budget(batch.iloc[i : i + 1].reset_index(drop=True), config, seconds)
                 for i in range(len(batch))]
        sections = [p[1] for p in parts if len(p[1])] or [parts[0][1]]  # an empty frame's dtypes differ
        return (pd.concat([p[0] for p in parts], ignore_index=True), pd.concat(sections, ignore_index=True),
                set().union(*(p[2] for p in parts)))
    path = batch["source_path"].iloc[0]
    message = ErrorText(f"Timeout: the per-document stages took more than {budget:g} s on this file "
                        "(run.file_timeout)", "per-document", "Timeout")
    log.warning("%s: %s", path, message)
    return _process_batch(batch, config, seconds, failed_reads={path: message})


BUDGET_MIB = 4
"""The budget grows by ``file_timeout`` per this many MiB: the per-document stages take about 3 s
per MiB of real Markdown (bench/README.md, "Per-file time budget"), so the default of 120 s gives
about ten times that."""


def _budget(batch: pd.DataFrame, file_timeout: float) -> float:
    """``file_timeout`` per :data:`BUDGET_MIB` MiB of the batch (rounded up), at least
    ``file_timeout``; 0 when it is 0."""
    if not file_timeout:
        return 0.0
    size = 0
    for path in batch["abs_path"]:
        with contextlib.suppress(OSError):  # a file the reader cannot open fails there
            size += os.stat(path).st_size
    return max(file_timeout, math.ceil(file_timeout * size / (BUDGET_MIB * 2**20)))


def _process_batch(batch: pd.DataFrame, config: Config, seconds: dict[str, float],
                   failed_reads: dict[str, ErrorText] | None = None) -> tuple[pd.DataFrame, pd.DataFrame, set[str]]:
    """The per-document stages on one batch; ``failed_reads`` (path -> message) become error rows.

    Returns:
        ``(documents, sections, failed files)``: documents rows (columns through segment, plus
        ``_ingest_status`` and ``_file``), sections rows, and files a stage raised on.
    """
    files = set(batch["source_path"])
    t0 = time.perf_counter()
    if failed_reads:
        batch = batch[~batch["source_path"].isin(failed_reads)].reset_index(drop=True)
    docs, failures = _run_isolated(ingest.STAGE, batch, config, key="source_path")
    failures |= failed_reads or {}
    failed_files = set(failures)
    if failures:  # a file the reader itself choked on: its own error row, the run goes on
        docs = pd.concat([docs, _failed_reads(failures)], ignore_index=True)
    docs = docs.assign(_ingest_status=docs["status"], _file=[_file_of(p, files) for p in docs["source_path"]])
    # copies inside one file: only files that have one are marked
    repeated = docs.duplicated(["_file", "content_sha256"]) & docs["content_sha256"].notna() if len(docs) else None
    if repeated is not None and repeated.any():
        rows = docs[["doc_id", "source_path", "content_sha256", "_ingest_status", "_file", "status", "error"]].to_dict("records")
        seen: dict[str, dict[str, str]] = {}  # per file: content hash -> first path
        for row in rows:
            mark_copies([row], seen.setdefault(row["_file"], {}))
        docs = docs.assign(**{c: pd.array([row[c] for row in rows], dtype=docs[c].dtype) for c in ("doc_id", "status", "error")})
    docs = docs.reset_index(drop=True)
    seconds["ingest"] += time.perf_counter() - t0
    # identical bytes in two files share a doc_id until mark_copies: separate rounds keep ids unique
    docs = docs.assign(_order=range(len(docs)))
    rounds = [group for _, group in docs.groupby(docs.groupby("doc_id", dropna=False).cumcount(), sort=True)]
    doc_parts, section_parts = [], []
    for part in rounds or [docs]:
        part_docs, part_sections, failed = _document_stages(part.reset_index(drop=True), config, seconds)
        failed_files |= set(part_docs.loc[part_docs["doc_id"].isin(failed), "_file"])
        doc_parts.append(part_docs)
        section_parts.append(part_sections.assign(_file=part_sections["doc_id"].map(
            dict(zip(part_docs["doc_id"], part_docs["_file"], strict=True)))))
    docs = pd.concat(doc_parts, ignore_index=True).sort_values("_order", kind="stable").drop(columns="_order")
    sections = pd.concat(section_parts, ignore_index=True)
    return docs.reset_index(drop=True), sections, failed_files


def _document_stages(docs: pd.DataFrame, config: Config,
                     seconds: dict[str, float]) -> tuple[pd.DataFrame, pd.DataFrame, set[str]]:
    """clean through extract on ``docs`` (unique ``doc_id``): ``(documents, sections, failed doc ids)``."""
    failed: set[str] = set()
    for stage in DOCUMENT_STAGES[1:]:
        t0 = time.perf_counter()
        out, failures = _run_isolated(stage, docs, config, key="doc_id")
        if failures:
            out = _restore_failed(docs, out, failures)
        docs = _mark_failed(out.reset_index(drop=True), failures)
        failed |= set(failures)
        seconds[stage.name] += time.perf_counter() - t0
    ok = docs[docs["status"] == "ok"]
    sections = front_matter.attach(segment.explode_sections(ok), ok)
    for stage in SECTION_STAGES:
        t0 = time.perf_counter()
        sections, failures = _run_isolated(stage, sections, config, key="section_id")
        if failures:
            failed_docs = {sid.rsplit("-", 1)[0]: msg for sid, msg in failures.items()}
            docs = _mark_failed(docs, failed_docs)
            failed |= set(failed_docs)
            sections = sections[~sections["doc_id"].isin(failed_docs)].reset_index(drop=True)
        seconds[stage.name] += time.perf_counter() - t0
    return docs, sections, failed


def _file_of(source_path: str, files: set[str]) -> str:
    """The listed file a documents row comes from (``feed.jsonl#3`` -> ``feed.jsonl``)."""
    if source_path in files:
        return source_path
    return ingest.source_sort_key(source_path)[0]


def _split_by_file(paths: list[str], docs: pd.DataFrame,
                   sections: pd.DataFrame) -> Iterator[tuple[str, list[dict], list[dict]]]:
    """``(file, documents rows, sections rows)`` per listed file, as dicts without ``_file`` and
    ``sections``."""
    def by_file(frame: pd.DataFrame, drop: list[str]) -> dict[str, list[dict]]:
        # one conversion of the frame, rows grouped in frame order
        groups: dict[str, list[dict]] = {}
        if len(frame):
            for file, row in zip(frame["_file"].tolist(), frame_records(frame.drop(columns=drop)), strict=True):
                groups.setdefault(file, []).append(row)
        return groups

    doc_groups = by_file(docs, [c for c in ("_file", "sections") if c in docs])
    section_groups = by_file(sections, ["_file"])
    for path in paths:
        yield path, doc_groups.get(path, []), section_groups.get(path, [])
