"""Dedup step 5, fuse: one canonical record per cluster (:func:`fuse`), with a stable paper id
(:func:`paper_id_for`). :func:`cluster_all` runs steps 2-5 over a run's scratch data (the
runner's call), :func:`cluster_papers` clusters and fuses, and :func:`dedup` runs the whole
stage the same way on sections held in memory.
"""

from __future__ import annotations

import hashlib
import logging
import tempfile
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from ..config import Config
from ..embed import DEFAULT_MAX_CHARS, Embedder
from ..memory import release_free_memory
from ..stage import records
from ..vectors import VectorFile
from ..write import PAPERS_SCHEMA
from .cluster import cluster_sections
from .embed import EmbeddingParts, SectionEmbeddings, _check_permutation, embed_sections, embedding_cuts
from .score import PairScorer
from .scratch import PAPER_COLUMNS, SCORER_COLUMNS, ScratchColumns, _StoredColumns
from .titles import _english_ratio, _folded, name_keys

log = logging.getLogger(__package__)  # one logger for every step: "pipeline.dedup"


def _vote(values: Sequence, field: str, conflicts: list[str]):
    """Most common non-missing value (ties: first in mention order); records disagreement."""
    present = [v for v in values if v is not None and not (isinstance(v, float) and np.isnan(v))]
    if not present:
        return None
    counts = Counter(present)
    if len(counts) > 1:
        conflicts.append(f"{field}: " + " | ".join(str(v) for v in dict.fromkeys(present)))
    best = max(counts.values())
    return next(v for v in present if counts[v] == best)


#: Most tied titles compared with each other (a popular paper's spellings, pairwise).
MAX_TIED_TITLES = 20


def _title_vote(folded: Sequence[str | None], conflicts: list[str]) -> str | None:
    """:func:`_vote` of folded titles; a tie goes to the medoid spelling (highest count-weighted
    :func:`_english_ratio` sum: a typo stands apart), then to the first mentioned."""
    best = _vote(folded, "title", conflicts)
    counts = Counter(f for f in folded if f is not None)
    tied = [f for f in counts if counts[f] == counts[best]] if best is not None else []
    if not 1 < len(tied) <= MAX_TIED_TITLES:
        return best
    return max(tied, key=lambda f: (sum(c * _english_ratio(f, g) for g, c in counts.items() if g != f), -tied.index(f)))


def paper_id_for(arxiv_id: str | None, title: str | None, first_section_id: str) -> str:
    """Stable paper id: ``p-`` + 16 hex digits of SHA-256 of the arXiv id when known, else of the
    folded title, else of the first mention's section id."""
    if arxiv_id:
        key = f"arxiv:{arxiv_id}"
    elif title and _folded(title):
        key = f"title:{_folded(title)}"
    else:
        key = f"section:{first_section_id}"
    return "p-" + hashlib.sha256(key.encode()).hexdigest()[:16]


def fuse(group: pd.DataFrame | Sequence[dict]) -> dict:
    """One canonical record from the sections of one paper (rows in section-id order: a DataFrame
    or :func:`pipeline.stage.records` dicts).

    Present beats missing; the majority wins (ties: first mention); the title is the most common
    folded title, spelled as in the mention with most metadata; authors and institutions from the
    fullest list; URLs the union in mention order; the longest summary (``summary_from`` names its
    section). Disagreements go to ``conflicts`` as ``"field: a | b"``.
    """
    conflicts: list[str] = []
    rows = records(group) if isinstance(group, pd.DataFrame) else group
    richness = [sum(bool(r.get(f)) for f in ("arxiv_id", "authors", "institutions", "award_raw")) for r in rows]
    folded = [_folded(r["title"]) if r.get("title") else None for r in rows]  # a paper repeats its titles
    # a short name alone beside a title it opens or abbreviates is no candidate title
    names = [name_keys(r["title"]) if r.get("title") else None for r in rows]
    expanded = {key for n in names if n and not n[2] for key in n[:2] if key}
    folded = [None if n and n[2] and n[0] in expanded else f for f, n in zip(folded, names, strict=True)]
    best_fold = _title_vote(folded, conflicts)
    title = None
    if best_fold is not None:
        candidates = [(richness[i], -i, rows[i]["title"]) for i in range(len(rows)) if folded[i] == best_fold]
        title = max(candidates)[2]
    authors = max((r["authors"] or [] for r in rows), key=len, default=[])  # a missing list counts as empty
    institutions = max((r["institutions"] or [] for r in rows), key=len, default=[])
    url_kinds: dict[str, str] = {}
    for r in rows:
        for u, k in zip(r["urls"] or [], r["url_kinds"] or [], strict=True):
            url_kinds.setdefault(u, k)
    # ``_summary_chars`` when the rows are slim, else length
    lengths = [(r.get("_summary_chars") or len(r["summary_norm"]), -k) for k, r in enumerate(rows) if r.get("summary_norm")]
    longest = rows[-max(lengths)[1]] if lengths else None
    arxiv_id = _vote([r["arxiv_id"] for r in rows], "arxiv_id", conflicts)
    # an int whatever the dtype, so a conflict reads "2024", not "2024.0"
    year = _vote([None if r["year"] is None or r["year"] != r["year"] else int(r["year"]) for r in rows],
                 "year", conflicts)
    record = {
        "title": title,
        "title_zh": _vote([r["title_zh"] for r in rows], "title_zh", conflicts),
        "arxiv_id": arxiv_id,
        "venue": _vote([r["venue"] for r in rows], "venue", conflicts),
        "year": int(year) if year is not None else None,
        "award": _vote([r["award"] for r in rows], "award", conflicts),
        "authors": list(authors),
        "institutions": list(institutions),
        "urls": list(url_kinds),
        "url_kinds": list(url_kinds.values()),
        "summary": longest["summary_norm"] if longest is not None else None,
        "summary_from": longest["section_id"] if longest is not None else None,
        "section_ids": [r["section_id"] for r in rows],
        "doc_ids": sorted(dict.fromkeys(r["doc_id"] for r in rows)),
        "n_mentions": len(rows),
        "n_sources": len({r["doc_id"] for r in rows}),  # copies folded by the runner (count_sources)
        "conflicts": conflicts,
    }
    record["paper_id"] = paper_id_for(arxiv_id, title, rows[0]["section_id"])
    return record


def dedup(sections: pd.DataFrame, config: Config, embedder: Embedder) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The global dedup stage on sections held in memory (scratch files in a temporary folder,
    then :func:`cluster_all`).

    ``sections``: the extract columns plus ``section_id``, ``doc_id``. Returns ``(sections,
    papers)``: ``sections`` sorted by ``section_id`` with ``paper_id``, ``match_score`` (float or
    None) and ``embedding_chars_cut``; ``papers`` with :data:`PAPER_COLUMNS`, by ``paper_id``.
    """
    sections = sections.sort_values("section_id", kind="stable").reset_index(drop=True)
    if sections.empty:
        out = sections.assign(paper_id=pd.Series(dtype=object), match_score=pd.Series(dtype=float),
                              embedding_chars_cut=pd.Series(dtype="int32"))
        return out, pd.DataFrame(columns=list(PAPER_COLUMNS))
    cuts = embedding_cuts(sections, getattr(embedder, "max_chars", None) or DEFAULT_MAX_CHARS)
    with tempfile.TemporaryDirectory(prefix="dedup-") as scratch:
        slims = ScratchColumns.write(sections, Path(scratch) / "sections.parquet")
        parts, content = EmbeddingParts(scratch), VectorFile(scratch)
        part = embed_sections(sections, embedder)
        content.append(part.content)
        parts.add(part.without_content())
        paper_ids, scores, papers, _ = cluster_all(slims, parts, config, scratch, content)
    # each paper's summary: the whole summary_norm of the section it names
    summary_of = dict(zip(sections["section_id"], sections["summary_norm"], strict=True)) \
        if "summary_norm" in sections else {}
    records = papers.to_pylist()
    for r in records:
        r["summary"] = summary_of.get(r.pop("summary_from"))
    return (sections.assign(paper_id=paper_ids.to_pylist(), match_score=scores.to_pylist(), embedding_chars_cut=cuts),
            pd.DataFrame(records, columns=list(PAPER_COLUMNS)))


def cluster_all(slims: ScratchColumns, vectors: EmbeddingParts, config: Config, scratch: str | Path,
                content: VectorFile | None = None, on_step: Callable[[str], None] | None = None,
                ) -> tuple[pa.Array, pa.Array, pa.Table, pd.Series]:
    """Dedup over every section of a run, from its chunks' slim columns and embeddings. Consumes
    its inputs (``slims`` closed, ``vectors`` joined as read): one copy of the vectors at peak.

    Args:
        slims: the sections in corpus order (the runner's scratch Parquet).
        vectors: the chunks' :func:`embed_sections`, in the same order.
        content: the content vectors in corpus order when ``vectors`` has none: copied to a
            memory-mapped ``.npy`` in section-id order; closed here.

    Returns:
        ``(paper_ids, match_scores, papers, doc_ids)``: per section in corpus order its paper id
        (Arrow string), match score (Arrow float32, null alone) and doc id (string Series, index
        ``0..n-1``); ``papers`` as :func:`cluster_papers` gives them.
    """
    if not slims.n or not vectors.n:  # no sections (nothing to embed)
        doc_ids = slims.series("doc_id")
        slims.close()
        if content is not None:
            content.close()
        return pa.array([], pa.string()), pa.array([], pa.float32()), FUSED_PAPERS_SCHEMA.empty_table(), doc_ids
    # dedup works in section-id order; the vectors are copied into it part by part
    order = section_order(slims.column("section_id").to_numpy(zero_copy_only=False))
    rank = np.empty_like(order)
    rank[order] = np.arange(len(order))
    emb = vectors.join(positions=rank, texts=False)
    if content is not None:
        emb = emb.with_content(content.permuted(order, scratch))
        content.close()
    release_free_memory()  # the chunks' assembly, before the k-means trainings
    try:
        sorted_ids, sorted_scores, papers = cluster_papers(slims, emb, config, scratch, order=order, on_step=on_step)
        doc_ids = slims.series("doc_id")  # read after clustering, not held through it
    finally:
        slims.close()
    del emb
    back = pa.array(rank)  # back to corpus order
    return sorted_ids.take(back), sorted_scores.take(back), papers, doc_ids


def section_order(section_ids: Sequence[str]) -> np.ndarray:
    """int64 ``(n,)``: the stable argsort of ``section_ids``, the order dedup clusters in."""
    return np.argsort(np.asarray(section_ids, dtype=object), kind="stable")


#: Rows :func:`cluster_groups` converts to dicts at a time (whole clusters; a larger one alone).
FUSE_BATCH_ROWS = 8192


def _group_batches(labels: np.ndarray, batch_rows: int) -> tuple[np.ndarray, np.ndarray, list[tuple[int, int, int]]]:
    """How :func:`cluster_groups` batches whole clusters: ``(by, starts, batches)``; ``by`` the
    stable argsort of ``labels``, ``starts`` int64 ``(g + 1,)`` each cluster's first position in
    ``by``; per batch ``(first, stop, last)``, clusters ``first..last - 1`` of about ``batch_rows``
    rows at ``by[starts[first]:stop]``."""
    n = len(labels)
    by = np.argsort(labels, kind="stable")
    ranked = labels[by]
    starts = np.concatenate([[0], np.flatnonzero(ranked[1:] != ranked[:-1]) + 1, [n]]).astype(np.int64)
    ends = starts[1:]
    batches, g = [], 0
    while g < len(ends):
        last = int(np.searchsorted(ends, starts[g] + max(1, batch_rows), side="right"))
        last = max(last, g + 1)  # at least one whole cluster
        batches.append((g, int(ends[last - 1]), last))
        g = last
    return by, starts, batches


def cluster_groups(store: ScratchColumns, labels: Sequence[int] | np.ndarray, batch_rows: int = FUSE_BATCH_ROWS,
                   order: np.ndarray | None = None, folder: str | Path | None = None) -> Iterator[tuple[int, list[dict]]]:
    """The rows of each cluster as dicts, grouped as ``groupby(labels, sort=True)``.

    Args:
        store: the sections; row ``order[i]`` is row ``i`` here (None: identity). Copied in
            cluster order batch by batch (in ``folder``): one column and one batch held.
        labels: ``n`` integer cluster labels, aligned with the rows.
        batch_rows: rows converted at a time; the result does not depend on it.

    Yields ``(label, rows)`` by ascending label, rows as :data:`DEDUP_COLUMNS` dicts in row order.
    ValueError when ``labels`` and the rows (or ``order``) differ in length.
    """
    labels = np.asarray(labels)
    n = store.n if order is None else len(order)
    if len(labels) != n:
        raise ValueError(f"{len(labels)} labels for {n} rows")
    if n == 0:
        return
    by, starts, batches = _group_batches(labels, batch_rows)
    positions = by if order is None else np.asarray(order)[by]
    grouped = store.regrouped(positions, [0, *(stop for _, stop, _ in batches)], folder)
    try:
        for k, (first, _, last) in enumerate(batches):
            lo = int(starts[first])
            rows = grouped.rows(k)
            for g in range(first, last):
                yield labels[by[starts[g]]].item(), rows[starts[g] - lo : starts[g + 1] - lo]
            del rows
    finally:
        grouped.close()


#: The papers :func:`cluster_papers` gives: :data:`pipeline.write.PAPERS_SCHEMA` plus ``summary_from``.
FUSED_PAPERS_SCHEMA = PAPERS_SCHEMA.append(pa.field("summary_from", pa.string()))

#: :func:`cluster_papers` turns this many fused records at a time into Arrow rows.
FUSED_BATCH = 4096


def cluster_papers(sections: ScratchColumns, emb: SectionEmbeddings, config: Config, scratch: str | Path,
                   order: np.ndarray | None = None, on_step: Callable[[str], None] | None = None,
                   ) -> tuple[pa.Array, pa.Array, pa.Table]:
    """Cluster embedded sections into papers and fuse each paper's record.

    Args:
        sections: the run's :class:`ScratchColumns` (:data:`DEDUP_COLUMNS`), row ``order[i]`` the
            ``i``-th in section-id order (``order`` None: already so); read column by column.
        emb: :func:`embed_sections` of the rows, in section-id order.
        scratch: for :func:`cluster_sections` and fusion's regrouped copy.

    Returns:
        ``(paper_ids, match_scores, papers)``: per row in section-id order the paper id (Arrow
        string) and match score (Arrow float32, null alone); ``papers`` an Arrow table of
        :data:`FUSED_PAPERS_SCHEMA` sorted by ``paper_id``.

    Raises:
        ValueError: ``order`` not a permutation of the rows; ``emb`` not of ``n`` rows.
        pyarrow.ArrowInvalid: a fused value does not fit its column.
    """
    n = sections.n
    _check_permutation(order, n)
    if len(emb.title_row) != n:
        raise ValueError(f"{len(emb.title_row)} embedding rows for {n} sections")
    if n == 0:
        return pa.array([], pa.string()), pa.array([], pa.float32()), FUSED_PAPERS_SCHEMA.empty_table()
    scorer = PairScorer(_StoredColumns(sections, SCORER_COLUMNS, order), emb, config.dedup.embed_weight)
    release_free_memory()  # what building the codes freed, given back before the searches
    labels, join_scores = cluster_sections(scorer, emb, config, scratch, as_arrays=True, on_step=on_step)
    del scorer
    release_free_memory()  # clustering's state, before the rows come back for fusion
    log.debug("dedup: fusing %d sections", n)
    papers, parts, paper_of_cluster, taken = [], [], {}, set()
    for label, group in cluster_groups(sections, labels, order=order, folder=scratch):
        record = fuse(group)
        if record["paper_id"] in taken:
            # two papers share a key: the later one is keyed by its first mention
            record["paper_id"] = paper_id_for(None, None, record["section_ids"][0])
        taken.add(record["paper_id"])
        paper_of_cluster[label] = record["paper_id"]
        papers.append(record)
        if len(papers) >= FUSED_BATCH:  # Arrow rows, not Python objects, for every paper
            parts.append(pa.Table.from_pylist(papers, schema=FUSED_PAPERS_SCHEMA))
            papers = []
    parts.append(pa.Table.from_pylist(papers, schema=FUSED_PAPERS_SCHEMA))
    table = pa.concat_tables(parts)
    del parts, papers
    by_id = pc.sort_indices(table["paper_id"])
    columns = {}
    for name in FUSED_PAPERS_SCHEMA.names:  # a column at a time: the unsorted one goes at once
        columns[name] = table[name].take(by_id).combine_chunks()
        table = table.drop_columns([name])
    # labels are 0..L-1 (first appearance): each section's paper id by a take
    ids_of_labels = pa.array([paper_of_cluster[label] for label in range(len(paper_of_cluster))], pa.string())
    return (ids_of_labels.take(pa.array(labels)), pa.array(join_scores, pa.float32(), mask=np.isnan(join_scores)),
            pa.table(columns, schema=FUSED_PAPERS_SCHEMA))
