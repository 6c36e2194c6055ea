"""Command-line interface (click): ``python -m pipeline run CORPUS --out OUT``.

Logging is configured here and only here (library modules use ``getLogger(__name__)``).
Exit codes: 0 all files processed; 1 finished with some files failed; 2 configuration or
usage error; 3 could not run (e.g. the corpus folder is missing or the output not writable).
"""

from __future__ import annotations

import logging
import sys
from pathlib import Path

import click

from .config import EMBED_BACKENDS, TARGET_SCRIPTS, load_config
from .errors import ConfigError

EXIT_OK, EXIT_FAILED_FILES, EXIT_USAGE, EXIT_CANNOT_RUN = 0, 1, 2, 3


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
        f"  failed files                      {summary['failed_files']:>8}",
        f"  empty files                       {summary['empty_files']:>8}",
        f"  skipped files                     {summary['skipped_files']:>8}",
        f"  duplicate files (same bytes)      {summary['duplicate_files']:>8}",
        "  seconds per stage",
    ]
    lines += [f"    {name:<31} {secs:>8.2f}" for name, secs in summary["seconds"].items()]
    lines.append(f"    {'total':<31} {sum(summary['seconds'].values()):>8.2f}")
    return "\n".join(lines)


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
def cli() -> None:
    """Turn a folder of scraped articles about research papers into deduplicated Parquet."""


@cli.command()
@click.argument("corpus", type=click.Path(path_type=Path))
@click.option("--out", "out", type=click.Path(path_type=Path), required=True,
              help="Output folder for documents/sections/papers/dropped/context .parquet and manifest.json.")
@click.option("--config", "config_path", type=click.Path(path_type=Path), default=None,
              help="TOML file overriding the defaults (unknown keys are errors).")
@click.option("--target-script", type=click.Choice(TARGET_SCRIPTS), default=None,
              help="Script of text_norm and Chinese fields (default zh-Hans).")
@click.option("--embedder", "backend", type=click.Choice(EMBED_BACKENDS), default=None,
              help="Embedding backend for dedup: 'use' (offline multilingual USE v3, default) "
                   "or 'sentence-transformers'.")
@click.option("--embedder-model", default=None,
              help="Model name or local path for --embedder sentence-transformers.")
@click.option("--device", default=None, help="Torch device for sentence-transformers (default: GPU if present).")
@click.option("--match-threshold", type=float, default=None,
              help="Lowest average-linkage score at which two sections are one paper (0..1, default 0.60).")
@click.option("--batch-size", type=int, default=None, help="Documents per batch through the stages (default 64).")
@click.option("--quiet", is_flag=True, default=False, help="No progress bars and no summary.")
@click.option("--no-embedding-cache", is_flag=True, default=False,
              help="Embed every section afresh; do not read or fill OUT/.cache/embeddings.sqlite.")
@click.option("-v", "--verbose", is_flag=True, default=False, help="Log at INFO level (default WARNING).")
def run(corpus: Path, out: Path, config_path: Path | None, target_script: str | None, backend: str | None,
        embedder_model: str | None, device: str | None, match_threshold: float | None, batch_size: int | None,
        quiet: bool, no_embedding_cache: bool, verbose: bool) -> None:
    """Run the pipeline on the articles in CORPUS (read recursively) and write Parquet into --out."""
    logging.basicConfig(level=logging.INFO if verbose else logging.WARNING,
                        format="%(levelname)s %(name)s: %(message)s", stream=sys.stderr)
    overrides: dict[str, dict] = {}

    def put(section: str, key: str, value) -> None:
        if value is not None:
            overrides.setdefault(section, {})[key] = value

    put("normalize", "target_script", target_script)
    put("embed", "backend", backend)
    put("embed", "model", embedder_model)
    put("embed", "device", device)
    put("dedup", "match_threshold", match_threshold)
    put("run", "batch_size", batch_size)
    if quiet:
        put("run", "quiet", True)
    if no_embedding_cache:
        put("run", "embedding_cache", False)
    try:
        config = load_config(config_path, overrides)
    except ConfigError as exc:
        click.echo(f"configuration error: {exc}", err=True)
        sys.exit(EXIT_USAGE)
    if not corpus.is_dir():
        click.echo(f"error: corpus folder {corpus} does not exist or is not a folder", err=True)
        sys.exit(EXIT_USAGE)
    try:  # fail before the work, not after it
        out.mkdir(parents=True, exist_ok=True)
        probe = out / ".write-test"
        probe.write_bytes(b"")
        probe.unlink()
    except OSError as exc:
        click.echo(f"error: could not run: output folder {out} is not a writable folder ({exc})", err=True)
        sys.exit(EXIT_CANNOT_RUN)

    from .runner import run as run_pipeline  # heavy imports only once arguments are valid

    try:
        result = run_pipeline(corpus, out, config)
    except ConfigError as exc:
        click.echo(f"configuration error: {exc}", err=True)
        sys.exit(EXIT_USAGE)
    except OSError as exc:
        click.echo(f"error: could not run: {exc}", err=True)
        sys.exit(EXIT_CANNOT_RUN)
    except Exception:  # noqa: BLE001 - a bug, not a bad file: say so, and not with exit 1
        logging.getLogger(__name__).exception("internal error; no outputs were published")
        click.echo("error: the run stopped on an internal error (traceback above); please report it", err=True)
        sys.exit(EXIT_CANNOT_RUN)
    summary = result.summary()
    if result.counts.get("documents", 0) == 0:
        click.echo(f"warning: no files found under {corpus}", err=True)
    if not config.run.quiet:
        click.echo(format_summary(summary))
        click.echo(f"\nwrote {out}/")
    sys.exit(EXIT_FAILED_FILES if summary["failed_files"] else EXIT_OK)


def main() -> None:
    """Console entry point."""
    cli()
