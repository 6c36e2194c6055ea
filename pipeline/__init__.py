"""paper-pipeline: scraped articles about research papers -> clean, deduplicated Parquet.

Stages, in order: ingest -> clean -> segment -> normalize -> extract -> dedup -> write
(see :mod:`pipeline.runner` for the whole cascade).
"""

__version__ = "0.1.0"
