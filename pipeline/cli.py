"""Command-line interface (click): ``python -m pipeline run CORPUS --out OUT``,
``python -m pipeline status OUT`` and ``python -m pipeline export OUT DEST``.

Logging is configured here only: ``LEVEL logger: message`` lines on stderr
(:class:`TextFormatter`), or JSON lines with ``--log-format json`` (:class:`JsonFormatter`; the
summary is an ``"event": "summary"`` record); control characters are always escaped
(:func:`pipeline.textutil.escape_controls`). ``run`` sets the model hubs offline unless
``--allow-downloads``. Exit codes: 0 all files processed (or within ``--max-failed``); 1 failed
files; 2 configuration or usage error, or an output folder refused (:mod:`pipeline.outdir`);
3 could not run (output not writable, lock held).
"""

from __future__ import annotations

import datetime as dt
import importlib.util
import json
import logging
import os
import sys
from pathlib import Path
from typing import Any, NoReturn

import click

from .config import EMBED_BACKENDS, ENGINES, TARGET_SCRIPTS, Config, load_config
from .errors import ConfigError, EmptiedCorpus
from .failures import too_many_in_run
from .outdir import WRITE_PROBE, OutputRefused, check
from .textutil import CONTROLS, escape_controls

EXIT_OK, EXIT_FAILED_FILES, EXIT_USAGE, EXIT_CANNOT_RUN = 0, 1, 2, 3
#: Exit codes after SIGINT or SIGTERM: 128 + the signal number (shell convention).
EXIT_INTERRUPTED, EXIT_TERMINATED = 130, 143
LOG_FORMATS = ("text", "json")
#: The shipped defaults, quoted in ``--help``.
_DEFAULTS = Config()
#: Stage order of the seconds ``status`` prints (:data:`pipeline.runner.STAGE_NAMES`, not imported).
STAGE_ORDER = ("ingest", "clean", "segment", "normalize", "extract", "dedup", "write")
#: Failed files listed by ``status`` and the run's summary before "... and N more".
STATUS_MAX_FAILED = 20
#: Environment variables that keep the model hubs (huggingface_hub, transformers) offline.
OFFLINE_VARIABLES = ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE")

log = logging.getLogger("pipeline.cli")


class JsonFormatter(logging.Formatter):
    """One JSON object per record: ``time`` (ISO 8601 UTC), ``level``, ``logger``, ``message``,
    ``exception`` when any, and the fields of ``extra={"data": {...}}``."""

    def format(self, record: logging.LogRecord) -> str:
        obj: dict[str, Any] = {
            "time": dt.datetime.fromtimestamp(record.created, dt.timezone.utc).isoformat(timespec="milliseconds"),
            "level": record.levelname,
            "logger": record.name,
            "message": record.getMessage(),
        }
        if record.exc_info:
            obj["exception"] = self.formatException(record.exc_info)
        data = getattr(record, "data", None)
        if isinstance(data, dict):
            obj.update(data)
        # json escapes C0 controls; the rest of CONTROLS as \uXXXX too
        return CONTROLS.sub(lambda m: f"\\u{ord(m.group()):04x}", json.dumps(obj, ensure_ascii=False, default=str))


class TextFormatter(logging.Formatter):
    """``LEVEL logger: message``, control characters escaped (a traceback keeps its line breaks)."""

    def __init__(self) -> None:
        super().__init__("%(levelname)s %(name)s: %(message)s")

    def formatMessage(self, record: logging.LogRecord) -> str:  # noqa: N802 - logging's name
        record.message = escape_controls(record.message)
        return super().formatMessage(record)

    def formatException(self, ei: Any) -> str:  # noqa: N802 - logging's name
        return "\n".join(escape_controls(line) for line in super().formatException(ei).split("\n"))


def _setup_logging(log_format: str, verbose: int) -> None:
    """Log to stderr at WARNING as text or JSON lines; ``verbose`` 1: INFO, 2+: also the pipeline's
    own DEBUG lines (not other libraries')."""
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(JsonFormatter() if log_format == "json" else TextFormatter())
    handler._pipeline_cli = True  # type: ignore[attr-defined]  # ours: replaced on the next call
    root = logging.getLogger()
    for old in list(root.handlers):
        if getattr(old, "_pipeline_cli", False):
            root.removeHandler(old)
    root.addHandler(handler)
    root.setLevel(logging.INFO if verbose else logging.WARNING)
    logging.getLogger("pipeline").setLevel(logging.DEBUG if verbose >= 2 else logging.NOTSET)


class Terminated(KeyboardInterrupt):
    """SIGTERM raised in the main thread like Ctrl-C, so a scheduler's stop cleans up as an
    interrupt does (workers stopped, run folder removed, lock released, state kept)."""


def _raise_terminated(signum: int, frame: Any) -> None:
    raise Terminated(f"signal {signum}")


def _fail(message: str, code: int, log_format: str) -> NoReturn:
    """Say ``message`` on stderr (a text line, or an ERROR JSON record) and exit with ``code``."""
    if log_format == "json":
        log.error(message, extra={"data": {"event": "exit", "exit_code": code}})
    else:
        click.echo(escape_controls(message), err=True)
    sys.exit(code)


def format_summary(summary: dict) -> str:
    """The one-screen end-of-run summary as text."""
    lines = [
        "",
        "Run summary",
        f"  documents read                    {summary['documents']:>8}",
        f"  sections                          {summary['sections']:>8}",
        f"  papers                            {summary['papers']:>8}",
        f"  papers with mentions in 2+ docs   {summary['papers_multi_document']:>8}",
        f"  dropped spans                     {summary['dropped_spans']:>8}",
        f"  failed files                      {summary['failed_files']:>8}"
        + (f"  ({summary['failed_new']} new, {summary['failed_known']} known)" if summary['failed_files'] else ""),
        f"  empty files                       {summary['empty_files']:>8}",
        f"  skipped files                     {summary['skipped_files']:>8}",
        f"  duplicate documents (same bytes)  {summary['duplicate_files']:>8}",
        f"  files processed (new or changed)  {summary['files_processed']:>8}",
        f"  files reused (unchanged)          {summary['files_reused']:>8}",
        f"  files removed since last run      {summary['files_removed']:>8}",
    ]
    changes = summary.get("changes") or {}
    if changes:  # papers by kind of change since the last run (changes.parquet)
        lines.append("  papers since last run             " + ", ".join(f"{n} {k.replace('_', ' ')}"
                                                                        for k, n in changes.items()))
    lines.append("  seconds per stage")
    lines += [f"    {name:<31} {secs:>8.2f}" for name, secs in summary["seconds"].items()]
    lines.append(f"    {'total':<31} {sum(summary['seconds'].values()):>8.2f}")
    failed = summary.get("failed", [])
    if failed:
        lines.append("  failed files (messages in errors.parquet; known: failed on the same bytes last run)")
        lines += [f"    {'known' if f['known'] else 'new  '}  {escape_controls(f['path'])}  {f['error_type']}"
                  for f in failed[:STATUS_MAX_FAILED]]
        if len(failed) > STATUS_MAX_FAILED:
            lines.append(f"    ... and {len(failed) - STATUS_MAX_FAILED} more")
    return "\n".join(lines)


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
def cli() -> None:
    """Turn a folder of scraped articles about research papers into deduplicated Parquet."""


@cli.command()
@click.argument("corpus", type=click.Path(path_type=Path))
@click.option("--out", "out", type=click.Path(path_type=Path), required=True,
              help="Output folder for documents/sections/papers/paper_ids/changes/dropped/context/errors .parquet, manifest.json, report.html and README.md (the dataset card).")
@click.option("--config", "config_path", type=click.Path(path_type=Path), default=None,
              help="TOML file overriding the defaults (unknown keys are errors).")
@click.option("--target-script", type=click.Choice(TARGET_SCRIPTS), default=None,
              help=f"Script of text_norm and Chinese fields (default {_DEFAULTS.normalize.target_script}).")
@click.option("--embedder", "backend", type=click.Choice(EMBED_BACKENDS), default=None,
              help="Embedding backend for dedup: 'use' (offline multilingual USE v3, default) "
                   "or 'sentence-transformers'.")
@click.option("--embedder-model", default=None,
              help="Model name or local path for --embedder sentence-transformers.")
@click.option("--device", default=None, help="Torch device for sentence-transformers (default: GPU if present).")
@click.option("--match-threshold", type=float, default=None,
              help="Lowest average-linkage score at which two sections are one paper "
                   f"(0..1, default {_DEFAULTS.dedup.match_threshold:.2f}).")
@click.option("--batch-size", type=int, default=None, help=f"Documents per batch through the stages (default {_DEFAULTS.run.batch_size}).")
@click.option("--workers", type=int, default=None,
              help="Processes for the per-document stages, ingest to extract, and then for embedding "
                   f"(default: every core, here {_DEFAULTS.run.workers}; 1 = in this process). "
                   "With --engine ray: CPUs of the local Ray instance.")
@click.option("--engine", type=click.Choice(ENGINES), default=None,
              help="Where the stages run: 'local' (default; this machine, --workers processes) or 'ray' "
                   "(Ray actors; needs the ray extra).")
@click.option("--ray-address", default=None,
              help="Address of an existing Ray cluster for --engine ray (default: RAY_ADDRESS, else a local Ray "
                   "instance).")
@click.option("--quiet", is_flag=True, default=False, help="No progress bars and no summary.")
@click.option("--no-embedding-cache", is_flag=True, default=False,
              help="Embed every section afresh; do not read or fill OUT/.pipeline/cache/embeddings.sqlite.")
@click.option("--file-timeout", type=float, default=None,
              help="Seconds the per-document stages may spend on a file, per MiB for a file over 1 MiB; a "
                   "slower file becomes an error row (Timeout) and the run goes on (0 = no limit; default "
                   f"{_DEFAULTS.run.file_timeout:g}).")
@click.option("--full", is_flag=True, default=False,
              help="Process every file again, ignoring what earlier runs kept in OUT/.pipeline/state (a clean rebuild).")
@click.option("--allow-empty", is_flag=True, default=False,
              help="Publish empty tables when CORPUS lists no file although OUT holds an earlier run's "
                   "(default: refuse with exit 2, as an unmounted corpus folder looks the same).")
@click.option("--log-format", type=click.Choice(LOG_FORMATS), default="text",
              help="Log lines on stderr as text (default) or one JSON object per line, the final summary "
                   "included (for schedulers; no progress bars).")
@click.option("--max-failed", type=float, default=None,
              help="Failed files a run may have and still exit 0: a count, or below 1 a fraction of the "
                   "documents read (0.05 = 5%; default 0).")
@click.option("--allow-downloads", is_flag=True, default=False,
              help="Let model libraries download from their hubs (default: offline, HF_HUB_OFFLINE=1 and "
                   "TRANSFORMERS_OFFLINE=1).")
@click.option("-v", "--verbose", count=True,
              help="Log at INFO level (default WARNING); -vv adds the pipeline's DEBUG lines.")
def run(corpus: Path, out: Path, config_path: Path | None, target_script: str | None, backend: str | None,
        embedder_model: str | None, device: str | None, match_threshold: float | None, batch_size: int | None,
        workers: int | None, engine: str | None, ray_address: str | None, quiet: bool, no_embedding_cache: bool,
        full: bool, allow_empty: bool, log_format: str, max_failed: float | None, allow_downloads: bool,
        verbose: int, file_timeout: float | None) -> None:
    """Run the pipeline on the articles in CORPUS (read recursively) and publish Parquet in --out.

    Only new and changed files are processed; unchanged ones are reused from OUT/.pipeline/state. OUT must
    not overlap CORPUS, and must be empty, new, or a folder an earlier run wrote.
    """
    for name in OFFLINE_VARIABLES:  # before any model library is imported: they read it once
        os.environ[name] = "0" if allow_downloads else "1"
    if quiet or log_format == "json" or not sys.stderr.isatty():
        # the model libraries' own bars follow the run's
        os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
    _setup_logging(log_format, verbose)
    overrides: dict[str, dict] = {}

    def put(section: str, key: str, value) -> None:
        if value is not None:
            overrides.setdefault(section, {})[key] = value

    for section, key, value in (("normalize", "target_script", target_script), ("embed", "backend", backend),
                                ("embed", "model", embedder_model), ("embed", "device", device),
                                ("dedup", "match_threshold", match_threshold), ("run", "batch_size", batch_size),
                                ("run", "workers", workers), ("run", "engine", engine),
                                ("run", "ray_address", ray_address), ("run", "max_failed", max_failed)):
        put(section, key, value)
    put("run", "file_timeout", file_timeout)
    if quiet:
        put("run", "quiet", True)
    if no_embedding_cache:
        put("run", "embedding_cache", False)
    try:
        config = load_config(config_path, overrides)
    except ConfigError as exc:
        _fail(f"configuration error: {exc}", EXIT_USAGE, log_format)
    if config.run.engine == "ray" and importlib.util.find_spec("ray") is None:
        from .engine_ray import RAY_MISSING

        _fail(f"configuration error: {RAY_MISSING}", EXIT_USAGE, log_format)
    if not corpus.is_dir():
        _fail(f"error: corpus folder {corpus} does not exist or is not a folder", EXIT_USAGE, log_format)
    if config.embed.backend == "sentence-transformers" and isinstance(config.embed.model, str):
        from .embed import check_model_path

        try:  # before the output folder is made: a wrong path writes nothing
            check_model_path(config.embed.model)
        except ConfigError as exc:
            _fail(f"configuration error: {exc}", EXIT_USAGE, log_format)
    from . import title_model

    try:  # the segmenter's classifier: a damaged install stops here, once, not in every document
        title_model.load()
    except ValueError as exc:
        _fail(f"error: could not run: {exc} (reinstall the package or retrain it)", EXIT_CANNOT_RUN, log_format)
    _prepare_output(corpus, out, log_format)

    import signal
    import threading

    from .memory import tune_allocators
    from .publish import OutputLocked, published_run_id  # heavy imports only once arguments are valid
    from .runner import run as run_pipeline

    tune_allocators()  # this process is the run's: freed memory goes back as each phase ends

    main_thread = threading.current_thread() is threading.main_thread()  # signal handlers live there only
    published_before = published_run_id(out)
    previous = signal.signal(signal.SIGTERM, _raise_terminated) if main_thread else None
    try:
        result = run_pipeline(corpus, out, config, progress="log" if log_format == "json" else None, full=full,
                              allow_empty=allow_empty)
    except KeyboardInterrupt as exc:
        what = "terminated (SIGTERM)" if isinstance(exc, Terminated) else "interrupted"
        code = EXIT_TERMINATED if isinstance(exc, Terminated) else EXIT_INTERRUPTED
        if published_run_id(out) != published_before:  # the stop came after this run's publish step
            _fail(f"error: the run was {what} after it was published to {out} (complete; its "
                  f"summary was not printed: `python -m pipeline status {out}` shows it)", code, log_format)
        _fail(f"error: the run was {what}; nothing new was published (files finished before the stop, "
              f"if any, are kept in {out}/.pipeline/state for the next run)", code, log_format)
    except OutputLocked as exc:
        _fail(f"error: could not run: {exc}", EXIT_CANNOT_RUN, log_format)
    except (OutputRefused, EmptiedCorpus) as exc:
        _fail(f"error: {exc}", EXIT_USAGE, log_format)
    except ConfigError as exc:
        _fail(f"configuration error: {exc}", EXIT_USAGE, log_format)
    except OSError as exc:
        _fail(f"error: could not run: {exc}", EXIT_CANNOT_RUN, log_format)
    except Exception:  # noqa: BLE001 - a bug, not a bad file: say so, and not with exit 1
        log.exception("internal error; no outputs were published")
        _fail("error: the run stopped on an internal error (traceback above); please report it", EXIT_CANNOT_RUN,
              log_format)
    finally:
        if main_thread:
            signal.signal(signal.SIGTERM, previous)
    sys.exit(_finish(result, config, corpus, out, log_format))


def _prepare_output(corpus: Path, out: Path, log_format: str) -> None:
    """Refuse a foreign output folder (exit 2; nothing written), then make it and check it is
    writable (exit 3)."""
    try:
        check(corpus, out)
    except OutputRefused as exc:
        _fail(f"error: {exc}", EXIT_USAGE, log_format)
    try:
        out.mkdir(parents=True, exist_ok=True)
        probe = out / WRITE_PROBE
        probe.write_bytes(b"")
        probe.unlink()
    except OSError as exc:
        _fail(f"error: could not run: output folder {out} is not a writable folder ({exc})", EXIT_CANNOT_RUN,
              log_format)


def _finish(result: Any, config: Config, corpus: Path, out: Path, log_format: str) -> int:
    """Print the summary and return the exit code: 1 when more files failed than ``run.max_failed``, else 0."""
    summary = result.summary()
    code = EXIT_FAILED_FILES if too_many_in_run(result.manifest, config.run.max_failed) else EXIT_OK
    if result.counts.get("documents", 0) == 0:
        if log_format == "json":
            log.warning("no files found under %s", corpus)
        else:
            click.echo(f"warning: no files found under {corpus}", err=True)
    report = report_path(result)
    if log_format == "json":  # the summary record is written whatever the level and --quiet
        record = log.makeRecord(log.name, logging.INFO, __file__, 0, "run finished", (), None, extra={"data": {
            "event": "summary", "exit_code": code, "out": str(out), "run_id": result.manifest.get("run_id"),
            **{k: v for k, v in summary.items() if k != "seconds"},
            "seconds": {k: round(v, 3) for k, v in summary["seconds"].items()},
            "report": str(report) if report else None}})
        log.handle(record)
    elif not config.run.quiet:
        click.echo(format_summary(summary))
        click.echo(f"\nwrote {out}/")
        click.echo(f"report: {report}" if report else "report: none (report.html could not be written; see the log)")
    return code


def report_path(result: Any) -> Path | None:
    """The run's ``report.html`` (in the output folder, else the run folder), or None when none was written."""
    for folder in (result.out_dir, result.run_dir):
        if folder is not None and (Path(folder) / "report.html").exists():
            return Path(folder) / "report.html"
    return None


def format_status(manifest: dict[str, Any], out: Path, running_pid: int | None = None) -> str:
    """What the last published run did, as text (for ``python -m pipeline status``)."""
    files = manifest.get("files") or {}
    counts = manifest.get("row_counts") or {}
    statuses = manifest.get("status_counts") or {}
    errors = manifest.get("errors")
    seconds = manifest.get("seconds") or {}
    lines = [
        f"Last run in {out}",
        f"  run                {manifest.get('run_id', 'unknown (older version)')}"
        + (f" ({manifest['mode']})" if manifest.get("mode") else ""),
        f"  started            {manifest.get('started_at', 'unknown')}",
        f"  finished           {manifest.get('finished_at', 'unknown')}",
        f"  corpus             {manifest.get('corpus', 'unknown')}",
        f"  pipeline           {manifest.get('pipeline_version', 'unknown')}"
        f" (config {manifest.get('config_fingerprint', 'unknown')})",
    ]
    if files:
        lines.append(f"  files              {len(files.get('processed', []))} processed, "
                     f"{len(files.get('reused', []))} reused, {len(files.get('removed', []))} removed")
    if statuses:
        lines.append("  documents          " + ", ".join(f"{v} {k}" for k, v in statuses.items()))
    if counts:
        lines.append("  rows               " + ", ".join(f"{k} {v}" for k, v in counts.items()))
    changes = manifest.get("changes") or _change_counts(out)
    if changes:  # in the order of changes.parquet (the manifest's keys are sorted)
        from .identity import CHANGE_KINDS

        kinds = [k for k in CHANGE_KINDS if k in changes] + sorted(set(changes) - set(CHANGE_KINDS))
        lines.append("  papers changed     " + ", ".join(f"{changes[k]} {k.replace('_', ' ')}" for k in kinds)
                     + " (changes.parquet)")
    if errors is not None:
        failed = [e for e in errors if e.get("error_type") != "EmptyDocument"]
        known = {f.get("path"): f.get("known") for f in manifest.get("failed") or [] if isinstance(f, dict)}
        n_known = sum(bool(known.get(e.get("path"))) for e in failed)
        lines.append(f"  failed files       {len(failed)}"
                     + (f" ({len(failed) - n_known} new, {n_known} known)" if "failed" in manifest and failed else ""))
        for e in failed[:STATUS_MAX_FAILED]:
            tag = ("known  " if known.get(e.get("path")) else "new    ") if "failed" in manifest else ""
            lines.append(escape_controls(f"    {tag}{e.get('path')}  [{e.get('stage')}] {e.get('error_type')}: "
                                         f"{e.get('message')}"))
        if len(failed) > STATUS_MAX_FAILED:
            lines.append(f"    ... and {len(failed) - STATUS_MAX_FAILED} more (errors.parquet)")
    if seconds:
        lines.append("  seconds per stage")
        order = {name: i for i, name in enumerate(STAGE_ORDER)}
        for name in sorted(seconds, key=lambda n: (order.get(n, len(order)), n)):
            lines.append(f"    {name:<16} {float(seconds[name]):>8.2f}")
        lines.append(f"    {'total':<16} {sum(float(v) for v in seconds.values()):>8.2f}")
    if running_pid is not None:
        lines.append(f"  note: a run is in progress now (pid {running_pid})")
    return "\n".join(lines)


def _change_counts(out: Path) -> dict[str, int]:
    """Rows of ``OUT/changes.parquet`` per :data:`pipeline.identity.CHANGE_KINDS`; empty when unreadable."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from .identity import CHANGE_KINDS

    try:
        kinds = pq.read_table(out / "changes.parquet", columns=["change"])["change"].to_pylist()
    except (OSError, KeyError, pa.ArrowException):
        return {}
    return {kind: kinds.count(kind) for kind in CHANGE_KINDS}


@cli.command()
@click.argument("out", type=click.Path(path_type=Path))
@click.option("--json", "as_json", is_flag=True, default=False, help="Print the last run's manifest.json instead.")
def status(out: Path, as_json: bool) -> None:
    """Show what the last run published in OUT did: when, corpus, counts, papers added, removed,
    merged, split and with changed fields, files processed, reused and removed, failed files,
    seconds per stage.

    Exit 0; 2 when OUT is not a folder; 3 when no run has been published in it.
    """
    from .publish import MANIFEST, lock_holder

    if not out.is_dir():
        click.echo(f"error: {out} is not an output folder (no such folder)", err=True)
        sys.exit(EXIT_USAGE)
    path = out / MANIFEST
    try:
        manifest = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        running = lock_holder(out)
        extra = f"; a run is in progress (pid {running})" if running else ""
        click.echo(f"error: no run has been published in {out} yet (no {path}){extra}", err=True)
        sys.exit(EXIT_CANNOT_RUN)
    except (OSError, ValueError) as exc:
        click.echo(f"error: cannot read {path}: {exc}", err=True)
        sys.exit(EXIT_CANNOT_RUN)
    if not isinstance(manifest, dict):
        click.echo(f"error: cannot read {path}: a JSON {type(manifest).__name__}, not a run's manifest", err=True)
        sys.exit(EXIT_CANNOT_RUN)
    if as_json:
        click.echo(json.dumps(manifest, ensure_ascii=False, indent=2, sort_keys=True))
    else:
        click.echo(format_status(manifest, out, lock_holder(out)))
    sys.exit(EXIT_OK)


@cli.command()
@click.argument("out", type=click.Path(path_type=Path))
@click.argument("dest", type=click.Path(path_type=Path))
def export(out: Path, dest: Path) -> None:
    """Copy the published tables and dataset card (README.md) of OUT into the new folder DEST:
    what an analyst or a dataset hub needs, without run history, state or caches.

    Exit 0; 2 when DEST exists and is not empty, overlaps OUT or lies inside the published run's
    corpus (the next run would read it as articles); 3 when OUT has no published run
    or a run is writing it.
    """
    from .export import ExportRefused, NothingPublished, export
    from .publish import OutputLocked

    try:
        written = export(out, dest)
    except ExportRefused as exc:
        click.echo(f"error: {exc}", err=True)
        sys.exit(EXIT_USAGE)
    except (NothingPublished, OutputLocked, OSError) as exc:
        click.echo(f"error: could not export: {exc}", err=True)
        sys.exit(EXIT_CANNOT_RUN)
    click.echo(f"wrote {len(written)} files to {dest}/: {', '.join(p.name for p in written)}")
    sys.exit(EXIT_OK)


def main() -> None:
    """Console entry point."""
    cli()
