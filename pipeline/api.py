"""The Python entry point for orchestrators (cron, Airflow, Dagster): :func:`run`.

``pipeline.run(corpus, out, config)`` does what ``python -m pipeline run CORPUS --out OUT`` does,
without the summary, and returns a :class:`RunResult`: the exit code the command would give and
where the published files are.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .config import Config


@dataclass(frozen=True)
class RunResult:
    """What :func:`run` published.

    Attributes:
        exit_code: as the command's: 0, or 1 when more files failed than ``run.max_failed``
            allows (the outputs are published either way).
        run_id: the run's id (``manifest.json``'s ``run_id``).
        counts: rows per table (``documents`` ... ``errors``).
        files: corpus files ``processed``, ``reused`` (unchanged since the last run) and ``removed``.
        failed_files: documents that could not be read or processed (status ``error``).
        tables: table name -> its Parquet file in ``out``.
        report: ``report.html``, or None when it could not be written.
        card: the dataset card ``README.md``.
        manifest: ``manifest.json``.
    """

    exit_code: int
    run_id: str
    counts: dict[str, int]
    files: dict[str, int]
    failed_files: int
    tables: dict[str, Path]
    report: Path | None
    card: Path
    manifest: Path


def run(corpus: str | Path, out: str | Path, config: Config | str | Path | Mapping[str, Any] | None = None, *,
        full: bool = False, progress: bool = False, allow_empty: bool = False) -> RunResult:
    """Run the pipeline over ``corpus`` and publish the tables in ``out`` (incremental, locked,
    atomic per file: :mod:`pipeline.runner`, :mod:`pipeline.publish`).

    Args:
        corpus: folder of articles (read recursively).
        out: output folder (created if missing; must be empty, new, or one an earlier run wrote).
        config: None for the defaults; a :class:`pipeline.config.Config`; a TOML file's path; or
            overrides by section, e.g. ``{"dedup": {"match_threshold": 0.8}}``.
        full: process every file again (ignore the state).
        progress: show progress bars.
        allow_empty: publish empty tables when ``corpus`` lists no file but ``out`` holds a run's.

    Model hubs stay offline (``HF_HUB_OFFLINE=1``, ``TRANSFORMERS_OFFLINE=1``) during the run
    unless the environment already sets them; on return (or raise) ``os.environ`` is the
    caller's again, including what libraries imported during the run set in it (see
    :func:`caller_environment`).

    Raises:
        FileNotFoundError: ``corpus`` is not a folder.
        pipeline.errors.ConfigError: a bad configuration (``config`` or the file it names).
        pipeline.outdir.OutputRefused: ``out`` overlaps the corpus or holds files the pipeline did
            not write (nothing written).
        pipeline.publish.OutputLocked: another run is writing ``out``.
        pipeline.errors.EmptiedCorpus: ``corpus`` lists no file, ``out`` holds a run's tables and
            ``allow_empty`` is False (nothing published).
        OSError: ``out`` cannot be written.
    """
    with caller_environment():
        for name in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE"):
            os.environ.setdefault(name, "1")
        return _run(corpus, out, config, full=full, progress=progress, allow_empty=allow_empty)


@contextlib.contextmanager
def caller_environment() -> Iterator[None]:
    """Restore ``os.environ`` on exit to what it was on entry: variables added inside are removed,
    changed or removed ones put back. A library reads such settings when it is imported, so one
    imported inside keeps what it read; the caller's process and its later subprocesses do not."""
    saved = dict(os.environ)
    try:
        yield
    finally:
        for name in [n for n in os.environ if n not in saved]:
            del os.environ[name]
        for name, value in saved.items():
            if os.environ.get(name) != value:
                os.environ[name] = value


def _run(corpus: str | Path, out: str | Path, config: Config | str | Path | Mapping[str, Any] | None, *,
         full: bool, progress: bool, allow_empty: bool) -> RunResult:
    """:func:`run` inside the offline environment."""
    from .config import Config, load_config
    from .failures import too_many_in_run
    from .publish import TABLE_FILES
    from .runner import run as run_pipeline

    if config is None or isinstance(config, Mapping):
        config = load_config(None, dict(config or {}))
    elif not isinstance(config, Config):
        config = load_config(config)
    out = Path(out)
    result = run_pipeline(corpus, out, config, progress=progress, full=full, allow_empty=allow_empty)
    manifest = result.manifest
    report = out / "report.html"
    return RunResult(
        exit_code=1 if too_many_in_run(manifest, config.run.max_failed) else 0,
        run_id=result.run_id,
        counts=dict(result.counts),
        files={k: len(v) for k, v in result.files.items()},
        failed_files=int((manifest.get("status_counts") or {}).get("error", 0)),
        tables={name.removesuffix(".parquet"): out / name for name in TABLE_FILES},
        report=report if report.is_file() else None,
        card=out / "README.md",
        manifest=out / "manifest.json",
    )
