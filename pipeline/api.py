"""The Python entry point for orchestrators (cron, Airflow, Dagster): :func:`run`, as
``python -m pipeline run CORPUS --out OUT`` without the summary, returning a :class:`RunResult`."""

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
        exit_code: the command's: 0, or 1 when more files failed than ``run.max_failed`` allows
            (published either way).
        run_id: ``manifest.json``'s ``run_id``.
        counts: rows per table.
        files: corpus files ``processed``, ``reused`` and ``removed``.
        failed_files: documents with status ``error``.
        tables: table name -> its Parquet file in ``out``.
        report: ``report.html``, or None when not written.
        card, manifest: ``README.md`` and ``manifest.json``.
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
    """Run the pipeline over ``corpus`` and publish the tables in ``out`` (:mod:`pipeline.runner`).

    Args:
        out: output folder (created if missing; empty, new, or an earlier run's).
        config: None (defaults), a :class:`pipeline.config.Config`, a TOML path, or overrides by
            section (``{"dedup": {"match_threshold": 0.8}}``).
        full, progress, allow_empty: as :func:`pipeline.runner.run`.

    Model hubs stay offline unless the environment says otherwise; ``os.environ`` is restored
    on return (:func:`caller_environment`).

    Raises:
        FileNotFoundError: ``corpus`` is not a folder.
        pipeline.errors.ConfigError: a bad configuration.
        pipeline.outdir.OutputRefused: ``out`` overlaps the corpus or holds foreign files.
        pipeline.publish.OutputLocked: another run is writing ``out``.
        pipeline.errors.EmptiedCorpus: nothing listed over a non-empty ``out`` without ``allow_empty``.
        OSError: ``out`` cannot be written.
    """
    with caller_environment():
        for name in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE"):
            os.environ.setdefault(name, "1")
        return _run(corpus, out, config, full=full, progress=progress, allow_empty=allow_empty)


@contextlib.contextmanager
def caller_environment() -> Iterator[None]:
    """Restore ``os.environ`` on exit (added variables removed, changed ones put back); libraries
    imported inside keep what they read."""
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
