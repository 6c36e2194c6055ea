"""The runner: chains the stages, owns I/O, batching, progress, timing and error isolation.

Pipeline order::

    list_corpus  files under CORPUS, sorted
    state        unchanged files reused from OUT/.pipeline/state
    ingest       file -> documents                                 per document
    clean        documents -> + dropped                            per document
    segment      documents -> + sections, context                  per document
    explode      documents -> sections, one row per section        per document
    normalize    sections -> + lang, text_norm                     per section
    extract      sections -> + fields                              per section
    assemble     rows in corpus order, ASSEMBLY_CHUNK files at a time, to scratch tables
    dedup        all sections -> papers                            global
    write        second pass: + paper_id, match_score, dup_of; Parquet, manifest, report, card
    publish      files renamed to the top of OUT, the manifest last

:func:`process_files` (the per-document stages on one batch) runs here, in a pool or on Ray
(:mod:`pipeline.executor`). Documents a stage fails on get ``status="error"`` and the run goes on.
An incremental run (:mod:`pipeline.state`) writes the same tables as a full rebuild.
"""

from __future__ import annotations

import collections
import contextlib
import datetime as dt
import logging
import math
import os
import shutil
import time
from collections import Counter
from collections.abc import Callable, Generator, Iterable, Iterator, Mapping
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from . import __version__, ingest, outdir, segment
from . import formats as ingest_formats
from .card import write_card
from .config import Config
from .dedup import (
    CLUSTERING_STEPS,
    EmbeddingInputs,
    EmbeddingParts,
    ScratchColumns,
    SectionEmbeddings,
    cluster_all,
    copy_candidates,
    count_sources,
    duplicate_documents,
    embedding_cuts,
    embedding_inputs,
    paper_sets,
    submit_inputs,
)
from .documents import (
    DOCUMENT_STAGE_NAMES,
    DOCUMENT_STAGES,
    SECTION_STAGES,
    BatchResult,
    _document_strings,
    died_file,
    model_loaders,
    process_files,
    stage_worker,
    warm_models,
)
from .embed import DEFAULT_MAX_CHARS, Embedder, check_model_path, make_local_embedder
from .embed_cache import CachedEmbedder, EmbeddingCache
from .errors import EmptiedCorpus
from .executor import Executor, InProcess, ProcessPool, given
from .failures import failed_files
from .identity import stable_ids
from .memory import collect_less_often, release_free_memory
from .progress import Progress, progress_mode
from .publish import (
    CACHE_DIR,
    MANIFEST,
    STATE_DIR,
    OutputLock,
    adopt,
    crash_point,
    flush_folder,
    new_run_id,
    publish,
    recover,
)
from .run_tables import (
    _SUMMARY_SCHEMA,
    SCRATCH_DIR,  # noqa: F401 - where a run's scratch folder is (runner.SCRATCH_DIR)
    Outcome,
    RunContext,
    TableFiles,
    _assemble_documents,
    _empty_sections,
    _fill_columns,
    _previous_manifest,
    _removed_files,
    _run_manifest,
    _scattered,
    _spans,
    _Spill,
    _write_report,
    errors_table,
    json_rows,
    mark_copies,
    no_paper_reasons,
    report_frames,
)
from .stage import check_chain
from .state import Entry, StateStore, file_sha256, state_key
from .vectors import VectorFile
from .write import (
    CONTEXT_SCHEMA,
    DOCUMENTS_SCHEMA,
    DROPPED_SCHEMA,
    ERRORS_SCHEMA,
    PAPERS_SCHEMA,
    SECTIONS_SCHEMA,
    TableWriter,
    write_manifest,
)

log = logging.getLogger(__name__)

#: What became of each corpus file in a run (``RunResult.files``, manifest ``files``).
FILE_OUTCOMES = ("processed", "reused", "removed")
STAGE_NAMES = ("ingest", "clean", "segment", "normalize", "extract", "dedup", "write")


@dataclass
class RunResult:
    """What a run produced.

    Attributes:
        out_dir: the output folder (``OUT``).
        frames: the tables by name, read lazily (:class:`TableFiles`).
        seconds: seconds per stage (:data:`STAGE_NAMES`).
        counts: rows per written table.
        run_dir: the published run's folder (``OUT``).
        run_id: ``manifest.json``'s ``run_id``.
        files: corpus files ``processed``, ``reused`` and ``removed``.
        manifest: ``manifest.json`` as a dict.
        stats: summary figures not in the manifest.
    """

    out_dir: Path
    frames: Mapping[str, pd.DataFrame]
    seconds: dict[str, float] = field(default_factory=dict)
    counts: dict[str, int] = field(default_factory=dict)
    run_dir: Path | None = None
    run_id: str = ""
    files: dict[str, list[str]] = field(default_factory=lambda: {k: [] for k in FILE_OUTCOMES})
    manifest: dict[str, Any] = field(default_factory=dict)
    stats: dict[str, int] = field(default_factory=dict)

    def summary(self) -> dict[str, Any]:
        """The numbers of the one-screen summary (no table is read)."""
        status = self.manifest.get("status_counts", {})
        return {
            "documents": int(status.get("ok", 0)),
            "sections": self.counts.get("sections", 0),
            "papers": self.counts.get("papers", 0),
            "papers_multi_document": self.stats.get("papers_multi_document", 0),
            "dropped_spans": self.counts.get("dropped", 0),
            "failed_files": int(status.get("error", 0)),
            "failed_new": sum(not f["known"] for f in self.manifest.get("failed", [])),
            "failed_known": sum(bool(f["known"]) for f in self.manifest.get("failed", [])),
            "empty_files": int(status.get("empty", 0)),
            "skipped_files": int(status.get("skipped", 0)),
            "duplicate_files": int(status.get("duplicate", 0)),
            "files_processed": len(self.files.get("processed", [])),
            "files_reused": len(self.files.get("reused", [])),
            "files_removed": len(self.files.get("removed", [])),
            "changes": dict(self.manifest.get("changes") or {}),
            "failed": [{k: f[k] for k in ("path", "error_type", "known")} for f in self.manifest.get("failed", [])],
            "seconds": self.seconds,
        }


def _batches(df: pd.DataFrame, size: int) -> Iterator[pd.DataFrame]:
    for start in range(0, len(df), size):
        yield df.iloc[start : start + size].reset_index(drop=True)


def run(corpus: str | Path, out_dir: str | Path, config: Config, embedder: Embedder | None = None,
        progress: bool | str | None = None, full: bool = False, allow_empty: bool = False) -> RunResult:
    """Run the pipeline over ``corpus`` and publish the outputs in ``out_dir``.

    Unchanged files (:mod:`pipeline.state`) are reused; dedup runs over all sections. The run is
    written to ``OUT/.pipeline/runs/<run_id>/`` and published under a lock
    (:mod:`pipeline.publish`); the result equals a full rebuild's on every engine.

    ``corpus`` is read recursively; ``out_dir`` is created if missing; ``embedder`` replaces the
    one ``config.embed`` builds; ``progress`` as :func:`pipeline.progress.progress_mode`; ``full``
    ignores the state (not the embedding cache); ``allow_empty`` publishes empty tables over a
    non-empty published run.

    Raises:
        FileNotFoundError: ``corpus`` is not a folder.
        pipeline.publish.OutputLocked: another run holds the lock.
        pipeline.outdir.OutputRefused: ``out_dir`` overlaps the corpus or holds foreign files.
        pipeline.errors.ConfigError: the embedder cannot be built, or Ray is missing.
        pipeline.errors.EmptiedCorpus: nothing to read over a non-empty run, not ``allow_empty``.
        OSError: ``out_dir`` cannot be written.
    """
    corpus, out_dir = Path(corpus), Path(out_dir)
    if not corpus.is_dir():
        raise FileNotFoundError(f"corpus folder {corpus} does not exist or is not a folder")
    outdir.check(corpus, out_dir)  # before the lock file is made in a folder that is not ours
    if embedder is None and config.embed.backend == "sentence-transformers" and isinstance(config.embed.model, str):
        check_model_path(config.embed.model)  # a wrong model path: exit 2 with nothing written
    out_dir.mkdir(parents=True, exist_ok=True)
    with OutputLock(out_dir), collect_less_often():
        layout = outdir.claim(corpus, out_dir)
        adopt(out_dir, layout)
        recover(out_dir)
        engine: Any = contextlib.nullcontext()
        if config.run.engine == "ray":
            from .engine_ray import RayEngine  # Ray is an optional extra

            engine = RayEngine(config)
        with engine as started_engine:
            started = dt.datetime.now(dt.timezone.utc)
            return _run_locked(RunContext(
                corpus=corpus, out_dir=out_dir, config=config, started=started, run_id=new_run_id(started), full=full,
                allow_empty=allow_empty, layout=layout, engine=started_engine,
                bars=Progress(progress_mode(progress, config.run.quiet)), seconds=dict.fromkeys(STAGE_NAMES, 0.0)),
                embedder)


@contextlib.contextmanager
def _timed(seconds: dict[str, float], stage: str) -> Iterator[None]:
    """Add the block's wall time to ``seconds[stage]`` (not when it raises)."""
    t0 = time.perf_counter()
    yield
    seconds[stage] += time.perf_counter() - t0


def _holds_no_text(paths: Iterable[str]) -> bool:
    """Whether every listed file is empty, or none is listed (an unmounted share looks so)."""
    with contextlib.suppress(OSError):  # (the run reports an unreadable file as an error row)
        return not any(os.path.getsize(path) for path in paths)
    return False


def _keep_gathered(store: StateStore) -> None:
    """Write what the state gathered when a run stops on an error; a failure only warns (a cache)."""
    try:
        store.flush()
    except Exception as exc:  # noqa: BLE001
        log.warning("could not keep the last results in the state (%s: %s); those files will be "
                    "processed again", type(exc).__name__, exc)


def _run_locked(ctx: RunContext, embedder: Embedder | None) -> RunResult:
    """:func:`run` once the lock is held: the stages in the order of the module docstring."""
    if ctx.config.run.quiet:  # the model libraries' own bars too
        os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
    check_chain(DOCUMENT_STAGES, ingest.LISTING_COLUMNS)
    check_chain(SECTION_STAGES, [*segment.EXPLODED_COLUMNS])
    with _timed(ctx.seconds, "ingest"):
        plan = _plan(ctx)  # list_corpus, state
    with _run_folder(ctx, embedder, plan.store) as (ctx, after_embedding), _document_feed(ctx, plan) as feed:
        first = _first_pass(ctx, feed, plan)  # ingest ... extract per document, then assemble
        found = _dedup(ctx, first, after_embedding)  # embedding, clustering, fusion
        outcome = _second_pass(ctx, first, found, plan.skipped)  # write
    return _publish_run(ctx, plan, outcome)  # manifest, report, card, publish


@contextlib.contextmanager
def _run_folder(ctx: RunContext, embedder: Embedder | None,
                store: StateStore) -> Iterator[tuple[RunContext, Callable[[], None] | None]]:
    """``(ctx with embedder and metadata, callback once all sections are embedded)`` in a new run
    folder; the embedder is made and closed here unless given. On an error the folder goes."""
    built = None  # an embedder made here, closed here (a PooledEmbedder's processes)
    if embedder is None:
        embedder = built = ctx.engine.embedder(ctx.config) if ctx.engine is not None else make_local_embedder(ctx.config)
    cache = EmbeddingCache(ctx.out_dir / CACHE_DIR / "embeddings.sqlite") if ctx.config.run.embedding_cache else None
    if cache is not None:
        embedder = CachedEmbedder(embedder, cache)
    ctx = replace(ctx, embedder=embedder, metadata={
        "pipeline_version": __version__, "config_fingerprint": ctx.config.fingerprint(), "embedder": embedder.model_id})
    ctx.run_dir.mkdir(parents=True)
    try:
        yield ctx, getattr(built, "close", None)
    except BaseException:
        if hasattr(built, "terminate"):
            built.terminate()  # the embedding processes stop at once, not after their pieces
        shutil.rmtree(ctx.run_dir, ignore_errors=True)
        _keep_gathered(store)  # nothing left to write unless the first try failed
        raise
    finally:
        ctx.bars.close()
        if cache is not None:
            cache.close()
        if hasattr(built, "close"):
            built.close()


@dataclass
class _Plan:
    """The corpus ``listing`` and what the ``store`` holds: ``sha_of`` (per path, SHA-256 or
    None), ``entries`` (per reused path), ``reused`` paths and the ``todo`` rows."""

    listing: pd.DataFrame
    skipped: pd.DataFrame
    sha_of: dict[str, str | None]
    store: StateStore
    entries: dict[str, Entry]
    reused: list[str]
    todo: pd.DataFrame


def _plan(ctx: RunContext) -> _Plan:
    """List the corpus and find the files the state holds; raises :class:`EmptiedCorpus` as :func:`run` says."""
    listing, skipped = ingest.list_corpus(ctx.corpus, ctx.config.ingest.extensions)
    if not ctx.allow_empty and _holds_no_text(listing["abs_path"]) and (
            held := len(_removed_files(_previous_manifest(ctx.out_dir), set()))):
        raise EmptiedCorpus(
            f"corpus {ctx.corpus} lists no file with content, but the tables published in {ctx.out_dir} hold {held} "
            "file(s); an unmounted or unfinished corpus folder would empty them, so nothing was published "
            "(pass --allow-empty to publish empty tables)")
    store = StateStore(ctx.out_dir / STATE_DIR, state_key(ctx.config), ctx.run_id)
    known = {} if ctx.full else store.load()
    sha_of = dict(zip(listing["source_path"].tolist(), [file_sha256(p) for p in listing["abs_path"]], strict=True))
    entries = {path: known[(path, sha)] for path, sha in sha_of.items() if sha is not None and (path, sha) in known}
    reused = [p for p in sha_of if p in entries]
    todo = listing[~listing["source_path"].isin(entries)].reset_index(drop=True)
    log.info("%d file(s) unchanged and reused, %d to process", len(reused), len(todo))
    return _Plan(listing, skipped, sha_of, store, entries, reused, todo)


@contextlib.contextmanager
def _document_feed(ctx: RunContext, plan: _Plan) -> Iterator[_DocumentFeed]:
    """The per-document stages on ``plan.todo``, results taken as the assembly needs them; the
    executor is stopped on leaving, even on an error."""
    results, parallel = _document_results(plan.todo, ctx.config, ctx.engine)
    if len(plan.todo) and not parallel:  # load models before the first batch, on their own bar
        with _timed(ctx.seconds, "ingest"):
            _load_models(ctx.config, ctx.bars)
    documents_bar = ctx.bars.bar("documents", len(plan.sha_of) + len(plan.skipped), "file")
    if len(plan.todo) and parallel:  # the workers load their models before their first batch
        documents_bar.set_postfix_str("workers loading models")
    with contextlib.closing(documents_bar), contextlib.closing(results):
        try:
            yield _DocumentFeed(results, parallel, plan.sha_of, plan.entries, plan.store, documents_bar)
        except BaseException:
            _keep_gathered(plan.store)  # before the pool waits for its batches: a SIGKILL may follow a SIGTERM
            raise


def _publish_run(ctx: RunContext, plan: _Plan, outcome: Outcome) -> RunResult:
    """Write the manifest, report and dataset card into the run folder and publish it to ``OUT``."""
    run_dir, out_dir = ctx.run_dir, ctx.out_dir
    previous = _previous_manifest(out_dir)
    files = {"processed": plan.todo["source_path"].tolist(), "reused": plan.reused,
             "removed": _removed_files(previous, set(plan.sha_of))}
    manifest = _run_manifest(ctx, outcome, files, plan.store.key)
    manifest["failed"] = failed_files(outcome.errors, plan.sha_of, previous)
    manifest["changes"] = outcome.changes
    write_manifest(run_dir, manifest)
    release_free_memory()  # the whole dedup's memory, before the report reads the tables back
    previous_run = out_dir if (out_dir / MANIFEST).is_file() else None  # OUT holds the published run, if any
    _write_report(run_dir, report_frames(run_dir, outcome.errors), manifest, previous_run)
    write_card(run_dir, manifest)
    flush_folder(run_dir)
    crash_point("before-swap")
    publish(out_dir, ctx.run_id, migrate=ctx.layout != "tables")
    if ctx.layout != "tables":
        outdir.mark(out_dir, "tables")
    return RunResult(out_dir=out_dir, frames=TableFiles(out_dir), seconds=ctx.seconds, counts=outcome.counts,
                     run_dir=out_dir, run_id=ctx.run_id, files=files, manifest=manifest, stats=outcome.stats)


#: At most one worker per this many files: a worker's start-up (~8 s) against ~0.13 s per file
#: breaks even at about 120 files for two workers (bench/README.md).
MIN_FILES_PER_WORKER = 64
#: Batches per pool worker (an even load when documents differ), never over ``run.batch_size``.
BATCHES_PER_WORKER = 4


def pool_workers(n_files: int, workers: int) -> int:
    """``min(workers, n_files // MIN_FILES_PER_WORKER)``, at least 1 (1 means in-process)."""
    return max(1, min(workers, n_files // MIN_FILES_PER_WORKER))


def pool_batch_size(n_files: int, workers: int, batch_size: int) -> int:
    """Documents per batch: about :data:`BATCHES_PER_WORKER` batches per worker, at most
    ``batch_size`` (the split never changes the outputs)."""
    return max(1, min(batch_size, math.ceil(n_files / (workers * BATCHES_PER_WORKER))))


def _document_results(todo: pd.DataFrame, config: Config, engine: Any) -> tuple[Generator[BatchResult, None, None], bool]:
    """``(results, parallel)``: each batch's :class:`BatchResult` in order, and whether they ran
    outside this process. Closing ``results`` stops the workers."""
    size = config.run.batch_size
    if engine is not None:
        executor = engine.executor(math.ceil(len(todo) / size), warm_models, config)
    elif (workers := pool_workers(len(todo), config.run.workers)) > 1:
        size = pool_batch_size(len(todo), workers, size)
        log.info("per-document stages on %d worker processes, %d file(s) per batch", workers, size)
        batches = _batches(todo, size)
        return _surviving(ProcessPool(workers, stage_worker, config), batches, config), True
    else:  # the models are loaded here, with their progress bar (_load_models)
        executor = InProcess(given, config)
    return _mapped(executor, process_files, _batches(todo, size)), not isinstance(executor, InProcess)


def _mapped(executor: Executor, fn: Callable[[Any, Any], Any], items: Iterable[Any]) -> Generator[Any, None, None]:
    """``executor.map(fn, items)`` in the executor's ``with`` block (stopped at once if left early)."""
    with executor:
        yield from executor.map(fn, items)


def _surviving(pool: ProcessPool, batches: Iterable[pd.DataFrame], config: Config) -> Generator[BatchResult, None, None]:
    """:func:`process_files` of every batch on ``pool``; when a worker dies, the rest run one file
    at a time on a fresh pool, and a file whose worker dies again is an error row (``WorkerDied``)."""
    pending = collections.deque(batches)
    try:
        with pool:
            for result in pool.map(process_files, list(pending)):
                pending.popleft()
                yield result
            return
    except BrokenProcessPool as exc:
        log.warning("a worker process died (%s); the %d batch(es) left run one file at a time", exc, len(pending))
    single: ProcessPool | None = None
    try:
        for batch in pending:
            for k in range(len(batch)):
                one = batch.iloc[k : k + 1]
                single = single or ProcessPool(1, stage_worker, config)
                try:
                    result = single.submit(process_files, one).result()
                except BrokenProcessPool:
                    single.terminate()
                    single = None
                    result = died_file(one, config)
                yield result
    except BaseException:  # Ctrl-C, SIGTERM, an error: the file under way is not wanted
        if single is not None:
            single.terminate()
            single = None
        raise
    finally:
        if single is not None:
            single.close()


def _load_models(config: Config, bars: Progress) -> None:
    """Load the per-document stages' models here, one ``models`` bar step each."""
    loaders = model_loaders(config)
    with bars.bar("models", len(loaders), "model") as bar:
        for name, load in loaders:
            bar.set_postfix_str(name)  # what is loading now
            load()
            bar.update(1)


def _reusable(path: str, sha: str | None, content_hashes: tuple[str | None, ...]) -> bool:
    """Whether a file's result may be kept in the state: hashed, and every row read from those bytes."""
    if sha is None or not content_hashes or any(not isinstance(h, str) for h in content_hashes):
        return False
    whole_file = not path.lower().endswith(ingest_formats.RECORD_SUFFIXES)
    return not whole_file or all(h == sha for h in content_hashes)


#: Listed files assembled per chunk, written before the next is read (memory holds one chunk).
ASSEMBLY_CHUNK = 256
#: Rows per Arrow batch when the second pass rereads the scratch tables (documents use
#: :data:`DOCUMENT_REREAD_BATCH`).
REREAD_BATCH = 8192
DOCUMENT_REREAD_BATCH = 2048
#: Papers written per batch in the second pass; above ``PAPER_BATCH * PAPER_SPILL_FILES`` papers a
#: batch grows.
PAPER_BATCH = 8192
PAPER_SPILL_FILES = 64
#: Chunks submitted to the embedder beyond the one being stored, so its processes stay busy.
EMBED_CHUNKS_IN_FLIGHT = 1


class _DocumentFeed:
    """Per-document results, stored as they arrive and kept in ``store`` when reusable.
    ``entries``: per path, its state entry; ``pending``: per path, ``(documents, sections)`` JSON
    bytes not yet taken; ``parallel``: run outside this process; ``finished``: perf_counter at
    the last result."""

    def __init__(self, results: Iterator[BatchResult], parallel: bool, sha_of: dict[str, str | None],
                 entries: dict[str, Entry], store: StateStore, bar: Any):
        self._results = iter(results)
        self.parallel = parallel
        self._sha_of = sha_of
        self.entries = entries
        self.pending: dict[str, tuple[bytes, bytes]] = {}
        self.store = store
        self._stage_seconds = dict.fromkeys(DOCUMENT_STAGE_NAMES, 0.0)
        self.bar = bar
        self.counted: set[str] = set()  # the files of this run's results, counted on the bar
        self.started = time.perf_counter()
        self.finished: float | None = None

    def _take(self, result: BatchResult) -> set[str]:
        for name, secs in result.seconds.items():
            self._stage_seconds[name] += secs
        if getattr(self.bar, "postfix", None):  # (a disabled bar has none)
            self.bar.set_postfix_str("", refresh=False)
        self.bar.update(result.n_files)
        self.counted.update(file.source_path for file in result.files)
        fresh = []
        for file in result.files:
            path = file.source_path
            sha = self._sha_of[path]
            entry = Entry(path, sha or "", file.documents, file.sections, file.n_documents, file.n_sections)
            self.pending[path] = (entry.documents, entry.sections)  # the entry's bytes go once it is stored
            if path not in result.failed_files and _reusable(path, sha, file.content_hashes):
                self.entries[path] = entry
                fresh.append(entry)
        self.store.keep(fresh)
        return {file.source_path for file in result.files}

    def has(self, path: str) -> bool:
        """Whether the rows of ``path`` are in (reused, or processed by now)."""
        return path in self.entries or path in self.pending

    def until(self, paths: Iterable[str]) -> None:
        """Take results until every one of ``paths`` is in."""
        self._pull({p for p in paths if not self.has(p)})

    def finish(self) -> None:
        """Take every remaining result."""
        self._pull(None)

    def _pull(self, missing: set[str] | None) -> None:
        """Take results until ``missing`` is empty (None: until the last one)."""
        while (missing is None or missing) and self.finished is None:
            result = next(self._results, None)
            if result is None:
                self._end()
                break
            taken = self._take(result)
            if missing is not None:
                missing -= taken

    def _end(self) -> None:
        self.finished = time.perf_counter()
        self.store.flush()  # the last results: every processed file is in the state from here
        crash_point("after-documents")

    def stage_seconds(self) -> dict[str, float]:
        """Seconds per document stage (after :meth:`finish`): in-process times, else the phase's
        wall time shared in proportion, so they add up."""
        total = sum(self._stage_seconds.values())
        if not self.parallel or total <= 0:
            return dict(self._stage_seconds)
        wall = (self.finished or time.perf_counter()) - self.started
        return {name: wall * secs / total for name, secs in self._stage_seconds.items()}

    def in_phase(self) -> bool:
        """Whether the parallel per-document phase still runs."""
        return self.parallel and self.finished is None


class _FirstPass:
    """The first pass: each chunk's rows, copies marked, written to ``dropped``/``context`` and the
    scratch tables, embedding inputs to a scratch stream; ``doc_keys``, ``inputs``,
    ``status_counts``, ``error_frames``, ``repaired`` for the manifest."""

    def __init__(self, ctx: RunContext):
        self.ctx = ctx
        scratch, metadata = ctx.scratch, ctx.metadata
        self.max_chars = getattr(ctx.embedder, "max_chars", None) or DEFAULT_MAX_CHARS  # for embedding_chars_cut
        self.repaired: list[str] = []
        self.tmp_docs = TableWriter(scratch / "documents.parquet", DOCUMENTS_SCHEMA, metadata)
        self.tmp_sections = TableWriter(scratch / "sections.parquet", SECTIONS_SCHEMA, metadata)
        self.dropped_out = TableWriter(ctx.run_dir / "dropped.parquet", DROPPED_SCHEMA, metadata)
        self.context_out = TableWriter(ctx.run_dir / "context.parquet", CONTEXT_SCHEMA, metadata)
        self.seen: dict[str, str] = {}
        self.embed_path = scratch / "embedding-inputs.arrow"
        self.embed_file = pa.OSFile(str(self.embed_path), "wb")
        self.embed_out: pa.ipc.RecordBatchStreamWriter | None = None
        self.doc_keys: list[tuple[str, str, Any]] = []
        self.inputs: dict[str, str] = {}
        self.status_counts: Counter[str] = Counter()
        self.error_frames: list[pd.DataFrame] = []

    def add_chunk(self, chunk: list[tuple[str, str | None]], per_file: list[tuple[list[dict], list[dict]]]) -> None:
        """Assemble one chunk of ``(path, skip reason)`` from ``per_file`` (consumed)."""
        for doc_rows, section_rows in per_file:  # copies across files, in corpus order
            if gone := mark_copies(doc_rows, self.seen):
                section_rows[:] = [s for s in section_rows if s["doc_id"] not in gone]
        doc_records = [row for doc_rows, _ in per_file for row in doc_rows]
        section_records = [row for _, section_rows in per_file for row in section_rows]
        per_file.clear()
        # Python strings (DOCUMENT_STRING_STORAGE): written to Arrow once
        with _document_strings():
            chunk_skipped = pd.DataFrame({"source_path": [p for p, r in chunk if r is not None],
                                          "reason": [r for _, r in chunk if r is not None]})
            documents = _assemble_documents([pd.DataFrame(doc_records)] if doc_records else [], chunk_skipped)
            documents = documents.drop(columns=[c for c in ("_ingest_status",) if c in documents])
            sections = pd.DataFrame(section_records) if section_records else _empty_sections()
            del doc_records, section_records
            sections = sections[sections["doc_id"].isin(documents.loc[documents["status"] == "ok", "doc_id"])]
            doc_order = {d: i for i, d in enumerate(documents["doc_id"])}
            sections = sections.sort_values(["doc_id", "ordinal"], kind="stable",
                                            key=lambda c: c.map(doc_order) if c.name == "doc_id" else c)
            sections = sections.reset_index(drop=True)
            documents = documents.assign(
                n_sections=documents["doc_id"].map(sections["doc_id"].value_counts()).fillna(0), dup_of=None)
            documents = documents.assign(reason=no_paper_reasons(documents["status"], documents["n_sections"]))
            self.dropped_out.write(_spans(documents, "dropped", ("char_start", "char_end", "reason", "text")))
            self.context_out.write(_spans(documents, "context", ("char_start", "char_end", "kind")))
            self.tmp_docs.write(documents)
            self.tmp_sections.write(sections.assign(paper_id=None, match_score=None,
                                                    embedding_chars_cut=embedding_cuts(sections, self.max_chars)))
            self.doc_keys.extend(zip(documents["doc_id"], documents["status"], documents["content_sha256"],
                                     strict=True))
            self.inputs.update((p, h) for p, h in zip(documents["source_path"], documents["content_sha256"],
                                                      strict=True) if isinstance(h, str))
            self.status_counts.update(documents["status"])
            if len(sections):
                batch = embedding_inputs(sections).to_batch()
                if self.embed_out is None:
                    self.embed_out = pa.ipc.new_stream(self.embed_file, batch.schema)
                self.embed_out.write_batch(batch)
                del batch
        self.error_frames.append(errors_table(documents))  # outside: default string storage
        del documents, sections

    def close_scratch(self) -> None:
        self.tmp_docs.close()
        self.tmp_sections.close()

    def close_inputs(self) -> None:
        if self.embed_out is not None:
            self.embed_out.close()
        self.embed_file.close()

    def close_tables(self, counts: dict[str, int], skipped: pd.DataFrame) -> pd.DataFrame:
        """Close ``dropped`` and ``context``, write ``errors`` (rows into ``counts``); returns errors."""
        counts["dropped"] = self.dropped_out.close()
        counts["context"] = self.context_out.close()
        errors = (pd.concat(self.error_frames, ignore_index=True) if self.error_frames
                  else errors_table(_assemble_documents([], skipped)))
        errors_out = TableWriter(self.ctx.run_dir / "errors.parquet", ERRORS_SCHEMA, self.ctx.metadata)
        errors_out.write(errors)
        counts["errors"] = errors_out.close()
        return errors


def _embed_chunks(ctx: RunContext, first: _FirstPass, n_sections: int) -> tuple[EmbeddingParts, VectorFile]:
    """Embed the chunks' inputs, :data:`EMBED_CHUNKS_IN_FLIGHT` ahead: ``(title vectors, each
    distinct title once; content vectors in corpus order)``, on disk."""
    vectors = EmbeddingParts(ctx.scratch)
    content = VectorFile(ctx.scratch)
    first.close_inputs()
    in_flight: collections.deque[tuple[int, Callable[[], SectionEmbeddings]]] = collections.deque()
    embedding_bar = ctx.bars.bar("embedding", n_sections, "section")

    def take_oldest() -> None:
        n_rows, wait = in_flight.popleft()
        part = wait()
        content.append(part.content)
        vectors.add(part.without_content())
        embedding_bar.update(n_rows)

    with embedding_bar, pa.OSFile(str(first.embed_path), "rb") as embed_in:  # plain reads, not a map: a read batch is freed after use
        for batch in pa.ipc.open_stream(embed_in) if first.embed_out is not None else ():
            in_flight.append((batch.num_rows, submit_inputs(EmbeddingInputs.from_batch(batch), ctx.embedder)))
            del batch
            if len(in_flight) > EMBED_CHUNKS_IN_FLIGHT:
                take_oldest()
        while in_flight:
            take_oldest()
    first.embed_path.unlink()
    return vectors, content


@dataclass
class _Papers:
    """What dedup hands the second pass: ``late`` (``paper_id``, ``match_score``: name -> (values,
    Arrow type), emptied once written), ``papers_of``, copy ``candidates``, each paper's summary
    section, the spilled papers (``fused``, per ``paper_batch``) and :class:`Outcome`'s parts."""

    late: dict[str, tuple[Any, Any]]
    papers_of: dict[str, frozenset[str]]
    candidates: Iterable[str]
    summary_from: pa.Array
    n_papers: int
    fused: _Spill
    summaries_found: list[_Spill]
    paper_batch: int
    changes: dict[str, int]
    dedup_seconds: dict[str, float]


def _write_papers(ctx: RunContext, found: _Papers, doc_keys: list[tuple[str, str, Any]], dup_of: list[str | None],
                  writing_bar: Any) -> tuple[int, int]:
    """Write ``papers.parquet`` from the spilled papers, ``paper_batch`` at a time, with summaries
    and source counts (copies as originals): ``(rows, papers with several documents)``.
    RuntimeError: the spill gave other batches back."""
    all_docs = pa.array([d for d, _, _ in doc_keys], pa.string())
    all_dup_of = pa.array(dup_of, pa.string())
    papers_out = TableWriter(ctx.run_dir / "papers.parquet", PAPERS_SCHEMA, ctx.metadata)
    start, multi_document, n_papers = 0, 0, found.n_papers
    for k, batch in enumerate(found.fused.batches()):
        if len(batch) != min(found.paper_batch, n_papers - start):
            raise RuntimeError(f"paper batch {k} of {len(batch)} rows at row {start} of {n_papers}")
        summaries = found.summaries_found[k].read()
        rows = [pc.subtract(r, pa.scalar(start, pa.int32())) for r in summaries["row"].chunks]
        papers = pa.Table.from_batches([batch])
        papers = papers.set_column(papers.schema.get_field_index("summary"), "summary",
                                   _scattered(len(batch), rows, summaries["summary"].chunks))
        del summaries, rows
        papers = papers.drop_columns(["summary_from"])
        papers = papers.set_column(papers.schema.get_field_index("n_sources"), "n_sources",
                                   count_sources(papers["doc_ids"], all_docs, all_dup_of))
        papers_out.write_table(papers)
        multi_document += pc.sum(pc.greater(pc.list_value_length(papers["doc_ids"]), 1)).as_py() or 0
        start += len(batch)
        writing_bar.update(len(batch))
        del papers
    if start != n_papers:
        raise RuntimeError(f"{start} papers read back of {n_papers}")
    return papers_out.close(), multi_document


def _write_sections_and_documents(ctx: RunContext, found: _Papers, doc_keys: list[tuple[str, str, Any]],
                                  writing_bar: Any) -> tuple[dict[str, int], list[str | None]]:
    """Second pass: ``sections`` with ``found.late``, spilling summaries by paper batch, then
    ``documents`` with ``dup_of``: ``({"sections": rows, "documents": rows}, dup_of)``."""
    texts: dict[str, Any] = {}  # doc id -> its sections' texts (a list), then joined (a str)
    wanted_docs = pa.array(list(found.candidates), pa.string())

    def collect(table: pa.Table) -> None:
        """The rows the second pass needs the text of: summary sources and copy candidates."""
        row = pc.index_in(table["section_id"], value_set=found.summary_from)
        source = pc.is_valid(row)
        if pc.any(source).as_py():
            summaries = pa.table([pc.filter(row, source), pc.filter(table["summary_norm"], source)], schema=_SUMMARY_SCHEMA)
            spill_of = summaries["row"].to_numpy() // found.paper_batch
            for k in np.unique(spill_of).tolist():
                found.summaries_found[k].write(summaries.filter(pa.array(spill_of == k)))
        rows = table.filter(pc.is_in(table["doc_id"], wanted_docs)).select(["doc_id", "text_norm"]).to_pylist()
        for r in rows:
            texts.setdefault(r["doc_id"], []).append(r["text_norm"] or "")
        writing_bar.update(table.num_rows)

    scratch, run_dir = ctx.scratch, ctx.run_dir
    counts = {"sections": _fill_columns(scratch / "sections.parquet", run_dir / "sections.parquet", SECTIONS_SCHEMA,
                                        ctx.metadata, found.late, collect, batch_rows=REREAD_BATCH)}
    found.late.clear()  # the only reference to the per-section columns
    crash_point("mid-write")
    for d in texts:  # one at a time: lists and joined texts are never all held
        texts[d] = "\n".join(texts[d])
    dup_of = duplicate_documents(doc_keys, found.papers_of, texts)
    texts.clear()
    counts["documents"] = _fill_columns(scratch / "documents.parquet", run_dir / "documents.parquet", DOCUMENTS_SCHEMA,
                                        ctx.metadata, {"dup_of": (dup_of, pa.string())},
                                        lambda table: writing_bar.update(table.num_rows),
                                        batch_rows=DOCUMENT_REREAD_BATCH)
    return counts, dup_of


def _first_pass(ctx: RunContext, feed: _DocumentFeed, plan: _Plan) -> _FirstPass:
    """The feed's chunks of :data:`ASSEMBLY_CHUNK` files into a :class:`_FirstPass`, then the state
    settled: memory holds one chunk plus what dedup needs of every section."""
    ctx.scratch.mkdir()
    first = _FirstPass(ctx)
    items = [(p, None) for p in plan.sha_of] + list(zip(plan.skipped["source_path"], plan.skipped["reason"], strict=True))
    items.sort(key=lambda item: ingest.source_sort_key(item[0]))  # (path, None) or (path, skip reason), in corpus order
    abs_paths = dict(zip(plan.listing["source_path"], plan.listing["abs_path"], strict=True))
    # processed files count on the documents bar as they come, reused and skipped ones here
    with feed.bar:
        for start in range(0, len(items), ASSEMBLY_CHUNK):
            chunk = items[start : start + ASSEMBLY_CHUNK]
            listed = [p for p, reason in chunk if reason is None]
            feed.until(listed)
            t0 = time.perf_counter()
            overlapped = feed.in_phase()  # this chunk's time is inside the per-document wall time
            per_file = [_file_rows(p, feed, abs_paths[p], ctx.config, first.repaired) for p in listed]
            first.add_chunk(chunk, per_file)
            del per_file
            if not overlapped:
                ctx.seconds["ingest"] += time.perf_counter() - t0
            feed.bar.update(sum(1 for p, _ in chunk if p not in feed.counted))
    feed.finish()
    for name, secs in feed.stage_seconds().items():
        ctx.seconds[name] += secs
    first.close_scratch()
    with _timed(ctx.seconds, "ingest"):
        live = [feed.entries[p] for p in plan.sha_of if p in feed.entries]
        if first.repaired:  # damaged entries were replaced: rewrite the state so the next run reads the new ones
            feed.store.compact(live)
        else:
            feed.store.maybe_compact(live, force=ctx.full)
        feed.store.drop_cached_rows()  # every file is read
        release_free_memory()  # the per-document phase's chunks and the state's compaction
    return first


def _dedup(ctx: RunContext, first: _FirstPass, after_embedding: Callable[[], None] | None) -> _Papers:
    """Embed every section, cluster and fuse into papers (stable ids) from the slim scratch
    columns; the papers spilled to disk."""
    slims = ScratchColumns(ctx.scratch / "sections.parquet")  # what dedup reads of every section, a column at a time
    log.debug("assembled %d sections; embedding", slims.n)
    t0 = time.perf_counter()
    vectors, content = _embed_chunks(ctx, first, slims.n)
    if after_embedding is not None:
        after_embedding()
    release_free_memory()
    dedup_seconds = {"embedding": time.perf_counter() - t0}
    log.debug("embedded; clustering")
    t0 = time.perf_counter()
    with ctx.bars.steps("clustering", CLUSTERING_STEPS) as step_done:  # the last step, fusion, ends with the block
        paper_ids, match_scores, papers, section_doc_ids = cluster_all(slims, vectors, ctx.config, ctx.scratch, content,
                                                                        on_step=step_done)
        paper_ids, papers, changes = stable_ids(paper_ids, papers, ctx.run_dir, ctx.metadata, slims.path)
        papers_of = paper_sets(section_doc_ids, paper_ids)
        del section_doc_ids
        candidates = copy_candidates(papers_of)
    summary_from = papers["summary_from"].combine_chunks()  # per paper, the section its summary is in
    n_papers = papers.num_rows
    paper_batch = max(PAPER_BATCH, -(-n_papers // PAPER_SPILL_FILES))
    fused = _Spill(ctx.scratch / "papers.arrow", papers.schema)
    fused.write(papers.combine_chunks(), max_chunksize=paper_batch)
    summaries_found = [_Spill(ctx.scratch / f"summaries-{k}.arrow", _SUMMARY_SCHEMA) for k in range(-(-n_papers // paper_batch))]
    del papers, vectors, content, slims
    release_free_memory()  # clustering's arrays and fusion's rows, before the second pass reads the tables
    dedup_seconds["clustering"] = time.perf_counter() - t0
    # to the millisecond, as in the manifest, so the parts add up
    dedup_seconds = {k: round(v, 3) for k, v in dedup_seconds.items()}
    ctx.seconds["dedup"] += sum(dedup_seconds.values())
    late = {"paper_id": (paper_ids, pa.string()), "match_score": (match_scores, pa.float32())}
    return _Papers(late, papers_of, candidates, summary_from, n_papers, fused, summaries_found, paper_batch, changes,
                   dedup_seconds)


def _second_pass(ctx: RunContext, first: _FirstPass, found: _Papers, skipped: pd.DataFrame) -> Outcome:
    """Dedup columns into ``sections`` and ``documents``, then ``papers``, ``errors``, the first
    pass's tables closed; scratch removed."""
    log.debug("clustered into %d papers; writing", found.n_papers)
    with _timed(ctx.seconds, "write"):
        n_sections = len(found.late["paper_id"][0])
        writing_bar = ctx.bars.bar("writing", n_sections + len(first.doc_keys) + found.n_papers, "row")
        counts, dup_of = _write_sections_and_documents(ctx, found, first.doc_keys, writing_bar)
        counts["papers"], multi_document = _write_papers(ctx, found, first.doc_keys, dup_of, writing_bar)
        errors = first.close_tables(counts, skipped)
        counts |= {name: pq.ParquetFile(ctx.run_dir / f"{name}.parquet").metadata.num_rows
                   for name in ("paper_ids", "changes")}
        writing_bar.close()
        shutil.rmtree(ctx.scratch)
    return Outcome(counts=counts, inputs=first.inputs, status_counts=dict(sorted(first.status_counts.items())),
                   errors=errors, stats={"papers_multi_document": int(multi_document)},
                   dedup_seconds=found.dedup_seconds, changes=found.changes)


def _file_rows(path: str, feed: _DocumentFeed, abs_path: str, config: Config,
               repaired: list[str]) -> tuple[list[dict], list[dict]]:
    """``(documents rows, sections rows)`` of one file: from ``feed.pending``, else the state; an
    unreadable state copy is reprocessed and ``path`` added to ``repaired``."""
    if path in feed.pending:
        documents, sections = feed.pending.pop(path)
        return json_rows(documents), json_rows(sections)
    entries = feed.entries
    try:
        return feed.store.read_rows(entries[path])
    except Exception as exc:  # noqa: BLE001 - the state is a cache: losing an entry costs time only
        log.warning("state entry of %s is unreadable (%s: %s); processing the file again", path,
                    type(exc).__name__, exc)
    listing = pd.DataFrame({"source_path": [path], "abs_path": [abs_path]})
    result = process_files(listing, config)
    files = {f.source_path: f.rows() for f in result.files}
    doc_rows, section_rows = files.get(path, ([], []))
    entries[path] = Entry.from_rows(path, entries[path].content_sha256, doc_rows, section_rows)
    repaired.append(path)
    return json_rows(entries[path].documents), json_rows(entries[path].sections)
