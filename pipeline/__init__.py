"""paper-pipeline: scraped articles about research papers -> clean, deduplicated Parquet.

Stages, in order: ingest -> clean -> segment -> normalize -> extract -> dedup -> write
(see :mod:`pipeline.runner` for the whole cascade). For orchestrators: :func:`run`
(:mod:`pipeline.api`), ``pipeline.run(corpus, out, config) -> RunResult``.
"""

__version__ = "0.1.0"

from .api import RunResult, run  # noqa: E402 - after __version__, which the modules it loads read

__all__ = ["RunResult", "__version__", "run"]
