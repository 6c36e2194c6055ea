"""Dedup: group the sections that mention the same paper and fuse each group into one record.

Steps, in order: :mod:`~pipeline.dedup.embed` -> :mod:`~pipeline.dedup.candidates` ->
:mod:`~pipeline.dedup.score` -> :mod:`~pipeline.dedup.cluster` -> :mod:`~pipeline.dedup.fuse` ->
:mod:`~pipeline.dedup.copies`; :mod:`~pipeline.dedup.scratch` holds the columns,
:mod:`~pipeline.dedup.titles` the title similarity. Method and calibration: docs/dedup.md.
"""

from .candidates import K_NEIGHBOURS, TITLE_NEIGHBOURS, ivf_list_count
from .cluster import AVERAGE_SAMPLE, CLUSTERING_STEPS, JOIN_SCORE_SAMPLE, cluster_sections
from .copies import (
    DUP_MIN_RESEMBLANCE,
    copy_candidates,
    count_sources,
    duplicate_documents,
    paper_sets,
)
from .embed import (
    SUMMARY_HEAD_CHARS,
    EmbeddingInputs,
    EmbeddingParts,
    SectionEmbeddings,
    embed_inputs,
    embed_sections,
    embedding_chars_cut,
    embedding_cuts,
    embedding_inputs,
    embedding_text,
    submit_inputs,
)
from .fuse import (
    FUSED_PAPERS_SCHEMA,
    cluster_all,
    cluster_groups,
    cluster_papers,
    dedup,
    paper_id_for,
    section_order,
)
from .score import PairScorer
from .scratch import DEDUP_COLUMNS, PAPER_COLUMNS, SCORER_COLUMNS, ScratchColumns
from .titles import english_title_similarity

__all__ = [
    "AVERAGE_SAMPLE", "DEDUP_COLUMNS", "DUP_MIN_RESEMBLANCE", "FUSED_PAPERS_SCHEMA", "JOIN_SCORE_SAMPLE",
    "K_NEIGHBOURS", "PAPER_COLUMNS", "SCORER_COLUMNS", "SUMMARY_HEAD_CHARS",
    "TITLE_NEIGHBOURS", "EmbeddingInputs", "EmbeddingParts", "PairScorer", "ScratchColumns", "SectionEmbeddings",
    "CLUSTERING_STEPS", "cluster_all", "cluster_groups", "cluster_papers", "cluster_sections", "copy_candidates", "count_sources", "dedup",
    "duplicate_documents", "embed_inputs", "embed_sections", "embedding_chars_cut", "embedding_cuts",
    "embedding_inputs", "embedding_text", "english_title_similarity",
    "ivf_list_count", "paper_id_for", "paper_sets", "section_order", "submit_inputs",
]
