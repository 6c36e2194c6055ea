"""Dedup: group the sections that mention the same paper and fuse each group into one
canonical record, with provenance.

A package of steps, each a module, run in this order over the run's scratch data (the
sections' columns and vectors in scratch files): :mod:`~pipeline.dedup.embed` (vectors) ->
:mod:`~pipeline.dedup.candidates` (pairs worth scoring) -> :mod:`~pipeline.dedup.score` (pair
scores) -> :mod:`~pipeline.dedup.cluster` (papers) -> :mod:`~pipeline.dedup.fuse` (one record
a paper) -> :mod:`~pipeline.dedup.copies` (documents that copy another);
:mod:`~pipeline.dedup.scratch` holds the columns, :mod:`~pipeline.dedup.titles` the title
similarity.

Method
------
1. **Embeddings.** Each section is embedded from what identifies its paper: the English title,
   the Chinese title and the head of the summary (:func:`embedding_text`), through the
   configured :class:`pipeline.embed.Embedder` (L2-normalized, so a dot product is a cosine).
2. **Candidates** (blocking). Pairs sharing an exact key (arXiv id; folded title,
   :func:`pipeline.fields.fold_title`) or a short name (:func:`~pipeline.dedup.titles.name_keys`) plus each section's ``K_NEIGHBOURS`` nearest neighbours
   by cosine, plus the nearest titles across languages: each distinct (English, Chinese) title
   pair's ``TITLE_NEIGHBOURS`` nearest other pairs, each section with the first section of
   each (:func:`~pipeline.dedup.candidates._title_neighbour_keys`). Neighbours come from faiss:
   an exact search in blocks of queries, or an IVF index trained by faiss from
   ``dedup.ann_min_sections`` rows on (:func:`~pipeline.dedup.candidates._neighbour_index`).
3. **Score** of a pair, in [0, 1]: ``w * cosine + (1 - w) * title_similarity`` with ``w =
   dedup.embed_weight``; title similarity is the :class:`difflib.SequenceMatcher` ratio (as
   computed by ``cydifflib``, the same algorithm compiled: equal ratios) of the
   folded English titles or of the folded Chinese titles (both in the target script), the
   higher when both exist; when neither pair of titles exists the score is the cosine alone.
   Then ``+ AUTHOR_BONUS`` when the author lists overlap (and a word substituted between the
   two English titles is then read as a typo, not a sibling paper), ``- AUTHOR_CONFLICT_PENALTY``
   when two Latin author lists share no surname, ``- VENUE_CONFLICT_PENALTY`` when the venues
   differ and ``- YEAR_CONFLICT_PENALTY`` when the years are more than one apart. A mention
   titled only by a paper's short name and a title that opens with that name or its initials
   ("XYZ" and "XYZ: A Method for …", "ABC" and "Adaptive Batch Calibration: …") are an
   alias: scored by the titles alone, at least ``ALIAS_SIMILARITY``; such pairs are candidates
   too. A name that opens (or abbreviates) the titles of two papers (two full titles less
   similar than ``ALIAS_SIMILARITY``, neither's subtitle inside the other: "XYZ: A Serving
   System …" and "XYZ: Learning from Traces …") is no alias of either. An equal arXiv id or an equal folded title (English or Chinese) scores 1.0. **Cannot-link**
   constraints: two sections of one document are not the same paper unless they share an exact
   key (one paper named twice in an article); two different arXiv ids never merge.
4. **Clustering**: greedy average linkage. Candidate pairs are visited by descending score;
   two clusters merge only if no cross pair is cannot-linked and either the pair shares an
   exact key (a must-link: the same arXiv id or folded title is the same paper however weak the
   other evidence, e.g. a mention that is only an arXiv link) or the *average* score over all
   their cross pairs reaches ``dedup.match_threshold``. Checking the members keeps chains
   (A~B, B~C, C unrelated to A) from merging (average linkage, Sokal & Michener 1958;
   constrained clustering with cannot-links, Wagstaff et al. 2001). A cluster larger than
   ``AVERAGE_SAMPLE`` members is represented in that average by ``AVERAGE_SAMPLE`` of them,
   evenly spaced in section order, so a merge costs at most ``AVERAGE_SAMPLE**2`` pair scores
   however popular the paper; cannot-links are checked on per-cluster indexes (its arXiv id, its
   members' keys per document), exactly, without visiting cross pairs. The averages a block of
   visits needs are scored together, upper bounds first (:func:`~pipeline.dedup.cluster._merge_visits`): the same
   decisions as one at a time.

Calibration. On the seeds (default USE embedder, ``embed_weight`` 0.5, exact keys switched
off) same-paper pairs across the two scripts score at least 0.76 and different-paper pairs at
most 0.45. The cosine alone does not separate the two sets (same paper as low as 0.51,
different papers up to 0.62: long explainers and short abstracts of one paper differ), which is
why the title similarity carries half the weight. On the dedup evaluation set
(``tests/fixtures/dedup``: 33 papers, 63 mentions, near-miss sequels and siblings;
``python -m pipeline.evaluate_dedup`` prints the sweep) pairwise precision and recall are both
1.0 for thresholds 0.50-0.55; at 0.45 sibling papers merge (precision 0.86), at 0.60 a paper
named only by its Chinese title misses its English mentions (recall 0.92: cross-language title
cosines of translations are 0.63-0.78). The default 0.55 is the high-precision end of that
plateau; the weights and penalties above were set on the same set.
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
