"""Dedup: group the sections that mention the same paper and fuse each group into one
canonical record, with provenance.

Method
------
1. **Embeddings.** Each section is embedded from what identifies its paper: the English title,
   the Chinese title and the head of the summary (:func:`embedding_text`), through the
   configured :class:`pipeline.embed.Embedder` (L2-normalized, so a dot product is a cosine).
2. **Candidates** (blocking). Pairs sharing an exact key (arXiv id; folded title,
   :func:`pipeline.fields.fold_title`) plus each section's ``K_NEIGHBOURS`` nearest neighbours
   by cosine. Neighbours come from an exact search over the matrix in row blocks, so memory
   stays ``O(n * block)`` rather than ``O(n^2)``.
3. **Score** of a pair, in [0, 1]: ``w * cosine + (1 - w) * title_similarity`` with ``w =
   dedup.embed_weight``; title similarity is the :class:`difflib.SequenceMatcher` ratio of the
   folded English titles or of the folded Chinese titles (both in the target script), the
   higher when both exist; when neither pair of titles exists the score is the cosine alone.
   Then ``+ AUTHOR_BONUS`` when the author lists overlap, ``- VENUE_CONFLICT_PENALTY`` when the
   venues differ and ``- YEAR_CONFLICT_PENALTY`` when the years are more than one apart. An
   equal arXiv id or an equal folded title (English or Chinese) scores 1.0. **Cannot-link**
   constraints: two sections of one document are not the same paper unless they share an exact
   key (one paper named twice in an article); two different arXiv ids never merge.
4. **Clustering**: greedy average linkage. Candidate pairs are visited by descending score;
   two clusters merge only if no cross pair is cannot-linked and either the pair shares an
   exact key (a must-link: the same arXiv id or folded title is the same paper however weak the
   other evidence, e.g. a mention that is only an arXiv link) or the *average* score over all
   their cross pairs reaches ``dedup.match_threshold``. Checking every member keeps
   chains (A~B, B~C, C unrelated to A) from merging (average linkage, Sokal & Michener 1958;
   constrained clustering with cannot-links, Wagstaff et al. 2001).

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

from __future__ import annotations

import functools
import hashlib
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from difflib import SequenceMatcher

import numpy as np
import pandas as pd

from .config import Config
from .embed import Embedder
from .fields import fold_title, fold_title_words
from .stage import records

#: Nearest neighbours per section that become candidate pairs.
K_NEIGHBOURS = 10
#: Rows per block in the exact neighbour search (memory: block x n float32).
SEARCH_BLOCK = 1024
#: IVF lists per square root of the number of sections (faiss guideline: nlist between
#: 4*sqrt(n) and 16*sqrt(n)), and lists scanned per query.
IVF_LISTS_PER_SQRT = 4
IVF_NPROBE = 16
#: Score added when two mentions' author lists overlap by at least AUTHOR_MIN_OVERLAP
#: (Jaccard of :func:`_author_keys`); subtracted when both name a venue and the venues differ,
#: or both a year and the years are more than one apart (an arXiv year and a venue year may
#: differ by one). Calibrated on the dedup evaluation set (tests/fixtures/dedup).
AUTHOR_BONUS = 0.10
AUTHOR_MIN_OVERLAP = 0.5
VENUE_CONFLICT_PENALTY = 0.10
YEAR_CONFLICT_PENALTY = 0.10
#: Score cap of two English titles that differ by a whole word on each side ("Probabilistic"
#: vs "Implicit") or by a sequel marker on one side ("Improved", "2", "XL", "v2"): such pairs are
#: near-miss papers (a follow-up, a sibling method), not spelling variants.
TITLE_CONFLICT_SIMILARITY = 0.3
#: Two title words are the same word when their SequenceMatcher ratio reaches this (typos:
#: "Probablistic"/"Probabilistic" 0.96; "Modelling"/"Modeling" are folded before).
WORD_MATCH_RATIO = 0.85
#: Words that mark a follow-up paper when only one of two titles has them.
SEQUEL_WORDS = frozenset("improved improving revisited revisiting extended scaling faster better v2 v3 xl plus pro".split())
_CJK = re.compile(r"[\u3400-\u9fff]")
_WORD = re.compile(r"[^\W_]+")
#: A section's ``match_score`` is its average score to at most this many other members of its
#: paper (the first ones in section order), so a paper mentioned thousands of times costs
#: linear, not quadratic, time.
JOIN_SCORE_SAMPLE = 64
#: Characters of the summary that go into the embedding text.
SUMMARY_HEAD_CHARS = 200

PAPER_COLUMNS = (
    "paper_id", "title", "title_zh", "arxiv_id", "venue", "year", "award", "authors", "institutions",
    "urls", "url_kinds", "summary", "section_ids", "doc_ids", "n_mentions", "n_sources", "conflicts",
)


def embedding_text(row: dict) -> str:
    """The text embedded for a section: title, Chinese title and summary head, one per line."""
    summary = row.get("summary_norm") or row.get("summary") or ""
    parts = [row.get("title"), row.get("title_zh"), summary[:SUMMARY_HEAD_CHARS]]
    text = "\n".join(p for p in parts if p)
    return text or (row.get("text") or "")[:SUMMARY_HEAD_CHARS]


@dataclass(frozen=True)
class SectionEmbeddings:
    """The vectors dedup compares, one row per section (float32, rows L2-normalized).

    Attributes:
        content: ``(n, d)``: :func:`embedding_text` (titles and the head of the summary).
        title: ``(n, d)``: the English title alone; an all-zero row when the section has none.
        title_zh: ``(n, d)``: the Chinese title alone (target script); zero when none.
    """

    content: np.ndarray
    title: np.ndarray
    title_zh: np.ndarray


def _titles(row: dict) -> tuple[str | None, str | None]:
    """``(English title, Chinese title)`` of a section; a ``title`` holding Chinese characters
    (a translated title filed as the title) counts as Chinese."""
    title = row.get("title") if _present(row.get("title")) else None
    title_zh = row.get("title_zh") if _present(row.get("title_zh")) else None
    if title is not None and _CJK.search(title):
        title, title_zh = None, title_zh or title
    return title, title_zh


def embed_sections(sections: pd.DataFrame, embedder: Embedder) -> SectionEmbeddings:
    """Embed every section's :func:`embedding_text` and its titles (one ``encode`` call).

    Args:
        sections: rows with ``title``, ``title_zh``, ``summary_norm`` (or ``summary``), ``text``.
        embedder: any :class:`pipeline.embed.Embedder`.

    Returns:
        :class:`SectionEmbeddings` with ``n = len(sections)`` rows.
    """
    rows = records(sections)
    texts = [embedding_text(r) for r in rows]
    titles = [_titles(r) for r in rows]
    extra = list(dict.fromkeys(t for pair in titles for t in pair if t))
    vectors = np.asarray(embedder.encode(texts + extra), dtype=np.float32) if texts or extra else np.zeros((0, 0), np.float32)
    n, dim = len(texts), (vectors.shape[1] if vectors.size else getattr(embedder, "dim", 0))
    content = vectors[:n] if n else np.zeros((0, dim), np.float32)
    row_of = {t: n + k for k, t in enumerate(extra)}
    title = np.zeros((n, dim), np.float32)
    title_zh = np.zeros((n, dim), np.float32)
    for i, (en, zh) in enumerate(titles):
        if en:
            title[i] = vectors[row_of[en]]
        if zh:
            title_zh[i] = vectors[row_of[zh]]
    return SectionEmbeddings(content=content, title=title, title_zh=title_zh)


def _ann_neighbour_index(emb: np.ndarray, k: int) -> np.ndarray:
    """Approximate ``k`` nearest neighbours of every row: int64 array ``(n, k)`` of row indices
    (``-1`` where fewer were found), the row itself excluded.

    faiss ``IndexIVFFlat`` with inner product (Johnson, Douze & Jégou 2019, "Billion-scale
    similarity search with GPUs", arXiv:1702.08734; faiss wiki "Faster search"): the rows are
    partitioned by k-means into ``nlist = IVF_LISTS_PER_SQRT * sqrt(n)`` lists and each query
    scans the ``IVF_NPROBE`` nearest lists, so a query costs about ``n * nprobe / nlist``
    dot products and the whole search grows as ``n^1.5`` rather than ``n^2``; the k-means seed is
    fixed, so the same input gives the same neighbours.
    """
    import faiss

    n, d = emb.shape
    nlist = max(1, int(IVF_LISTS_PER_SQRT * np.sqrt(n)))
    quantizer = faiss.IndexFlatIP(d)
    index = faiss.IndexIVFFlat(quantizer, d, nlist, faiss.METRIC_INNER_PRODUCT)
    index.cp.seed = 1234
    index.train(emb)
    index.add(emb)
    index.nprobe = min(IVF_NPROBE, nlist)
    _, idx = index.search(emb, k + 1)
    out = np.full((n, k), -1, dtype=np.int64)
    for i, row in enumerate(idx):
        others = [int(j) for j in row if j != i and j >= 0][:k]
        out[i, : len(others)] = others
    return out


def _neighbours(emb: np.ndarray, k: int, ann_min: int = 20_000) -> list[tuple[int, int]]:
    """Pairs ``(i, j)``, ``i < j``, with ``j`` among the ``k`` nearest neighbours of ``i`` or vice
    versa: exact search for fewer than ``ann_min`` rows, :func:`_ann_neighbour_index` from there."""
    n = emb.shape[0]
    pairs = set()
    k = min(k, n - 1)
    if k <= 0:
        return []
    if n >= ann_min:
        for i, row in enumerate(_ann_neighbour_index(np.ascontiguousarray(emb, dtype=np.float32), k)):
            for j in row:
                if j >= 0:
                    pairs.add((min(i, int(j)), max(i, int(j))))
        return sorted(pairs)
    for start in range(0, n, SEARCH_BLOCK):
        sims = emb[start : start + SEARCH_BLOCK] @ emb.T
        for r in range(sims.shape[0]):
            sims[r, start + r] = -np.inf
        idx = np.argpartition(-sims, k - 1, axis=1)[:, :k]
        for r, row in enumerate(idx):
            i = start + r
            for j in row:
                pairs.add((min(i, int(j)), max(i, int(j))))
    return sorted(pairs)


def _key_pairs(members: list[int], doc: list[str]) -> set[tuple[int, int]]:
    """Candidate pairs for one exact-key group, linear in its size: each member with the first
    member of the group that stands in another document (a hub), never two members of one
    document (they cannot link). All pairs would be quadratic: a key shared by thousands of
    mentions (one paper repeated down a long page) made millions of pairs."""
    heads: list[int] = []
    for m in members:
        if len(heads) < 2 and all(doc[h] != doc[m] for h in heads):
            heads.append(m)
    pairs = set()
    for m in members:
        hub = next((h for h in heads if doc[h] != doc[m]), None)
        if hub is not None:
            pairs.add((min(m, hub), max(m, hub)))
    return pairs


def _present(value) -> bool:
    return isinstance(value, str) and bool(value)


def _author_keys(authors) -> frozenset[str]:
    """Comparable author keys: the last token of a Latin name, case-folded (``Fischer Abaigar`` and
    ``F. Abaigar`` both give ``abaigar``); a CJK name whole. Lists given in different scripts
    (Chinese names vs. pinyin) share no key, so only agreement is evidence, not disagreement."""
    keys = set()
    for name in authors if authors is not None else ():
        name = str(name).strip()
        if not name:
            continue
        keys.add(name.split()[-1].casefold().strip(".") if name.isascii() else name)
    return frozenset(keys)


@functools.lru_cache(maxsize=65536)
def _folded(title: str) -> str:
    """:func:`pipeline.fields.fold_title`, computed once per title."""
    return fold_title(title)


@functools.lru_cache(maxsize=65536)
def _title_words(title: str) -> tuple[str, ...]:
    """Words of a folded-ready English title: NFKC, case-folded, British spellings folded (as
    :func:`pipeline.fields.fold_title`), split at non-alphanumerics, plural ``s`` dropped."""
    words = []
    for w in _WORD.findall(fold_title_words(title)):
        words.append(w[:-1] if len(w) > 3 and w.endswith("s") and not w.endswith("ss") else w)
    return tuple(words)


@functools.lru_cache(maxsize=65536)
def _same_word(w: str, v: str) -> bool:
    """Whether two title words are the same word up to a typo (ratio >= WORD_MATCH_RATIO).
    difflib's ``real_quick_ratio`` and ``quick_ratio`` are upper bounds of ``ratio`` (difflib
    docs), so most pairs are rejected without the full comparison; the result is the same."""
    if w == v:
        return True
    sm = SequenceMatcher(None, w, v)
    return (sm.real_quick_ratio() >= WORD_MATCH_RATIO and sm.quick_ratio() >= WORD_MATCH_RATIO
            and sm.ratio() >= WORD_MATCH_RATIO)


def english_title_similarity(a: str, b: str) -> float:
    """Similarity of two English titles in [0, 1].

    The :class:`difflib.SequenceMatcher` ratio of the folded titles
    (:func:`pipeline.fields.fold_title`), capped at :data:`TITLE_CONFLICT_SIMILARITY` when the
    titles conflict: after pairing words that are equal or nearly so (ratio >=
    :data:`WORD_MATCH_RATIO`, i.e. typos), each title keeps a word of its own (a substitution:
    "Denoising Diffusion Probabilistic Models" vs "... Implicit Models"), or the one-sided words
    include a one- or two-digit number or one of :data:`SEQUEL_WORDS` ("Llama 2", "Improved
    ..."; a year such as "(CVPR 2024)" is not a sequel marker). A title that
    only lacks words of the other (a dropped word, a missing subtitle) is not a conflict.
    """
    fa, fb = sorted((_folded(a), _folded(b)))  # ratio() is not symmetric: fix the order
    ratio = SequenceMatcher(None, fa, fb).ratio()
    wa, wb = _title_words(a), _title_words(b)
    only_a = [w for w in wa if not any(_same_word(w, v) for v in wb)]
    only_b = [w for w in wb if not any(_same_word(w, v) for v in wa)]
    one_sided = only_a + only_b
    sequel = any((w.isdigit() and len(w) <= 2) or w in SEQUEL_WORDS for w in one_sided)  # not a year
    if (only_a and only_b) or sequel:
        return min(ratio, TITLE_CONFLICT_SIMILARITY)
    return ratio


class PairScorer:
    """Pair scores and constraints over the sections of one run (see the module docstring)."""

    def __init__(self, sections: pd.DataFrame, emb: SectionEmbeddings, embed_weight: float):
        self.emb = emb
        self.w = embed_weight
        rows = records(sections)
        n = len(rows)
        self.doc = [r["doc_id"] for r in rows]
        self.arxiv = [r.get("arxiv_id") if _present(r.get("arxiv_id")) else None for r in rows]
        titles = [_titles(r) for r in rows]
        self.title = [t[0] for t in titles]
        self.folded = [fold_title(t[0]) or None if t[0] else None for t in titles]
        self.folded_zh = [fold_title(t[1]) or None if t[1] else None for t in titles]
        self.has_summary = [_present(r.get("summary_norm")) or _present(r.get("summary")) for r in rows]
        self.authors = [_author_keys(r.get("authors")) for r in rows]
        self.year = [int(r["year"]) if r.get("year") is not None and not pd.isna(r.get("year")) else None for r in rows]
        self.venue = [r.get("venue") if _present(r.get("venue")) else None for r in rows]
        assert emb.content.shape[0] == n, "one embedding row per section"
        self._scores: dict[tuple[int, int], float] = {}

    def cannot_link(self, i: int, j: int) -> bool:
        if self.arxiv[i] is not None and self.arxiv[j] is not None and self.arxiv[i] != self.arxiv[j]:
            return True
        return self.doc[i] == self.doc[j] and not self.exact(i, j)

    def title_similarity(self, i: int, j: int) -> float | None:
        """Same-language title similarity when both have a title in one language (English:
        :func:`english_title_similarity`; Chinese: SequenceMatcher ratio of the folded titles);
        else the cosine of the title embeddings across languages; None without titles."""
        sims = []
        if self.title[i] and self.title[j]:
            sims.append(english_title_similarity(self.title[i], self.title[j]))
        if self.folded_zh[i] and self.folded_zh[j]:
            a, b = sorted((self.folded_zh[i], self.folded_zh[j]))
            sims.append(SequenceMatcher(None, a, b).ratio())
        if sims:
            return max(sims)
        e = self.emb
        cross = [float(x[i] @ y[j]) for x, y in ((e.title, e.title_zh), (e.title_zh, e.title))
                 if x[i].any() and y[j].any()]
        return max(cross) if cross else None

    def exact(self, i: int, j: int) -> bool:
        """Whether ``i`` and ``j`` share an exact key: the arXiv id or a folded title."""
        if self.arxiv[i] is not None and self.arxiv[i] == self.arxiv[j]:
            return True
        return any(key[i] is not None and key[i] == key[j] for key in (self.folded, self.folded_zh))

    def score(self, i: int, j: int) -> float:
        """The pair score of sections ``i`` and ``j`` (symmetric; computed once per pair, since
        average linkage asks for the same cross pairs again as clusters grow)."""
        key = (i, j) if i < j else (j, i)
        cached = self._scores.get(key)
        if cached is None:
            cached = self._scores[key] = self._score(*key)
        return cached

    def _score(self, i: int, j: int) -> float:
        if self.cannot_link(i, j):
            return float("-inf")
        if self.exact(i, j):
            return 1.0
        cos = float(self.emb.content[i] @ self.emb.content[j])
        title_sim = self.title_similarity(i, j)
        if title_sim is None:
            score = cos
        elif self.has_summary[i] and self.has_summary[j]:
            score = self.w * cos + (1.0 - self.w) * title_sim
        else:  # a bare mention: the content vector is its title again, the titles decide
            score = title_sim
        a, b = self.authors[i], self.authors[j]
        if a and b and len(a & b) / len(a | b) >= AUTHOR_MIN_OVERLAP:
            score += AUTHOR_BONUS
        if self.venue[i] is not None and self.venue[j] is not None and self.venue[i] != self.venue[j]:
            score -= VENUE_CONFLICT_PENALTY
        if self.year[i] is not None and self.year[j] is not None and abs(self.year[i] - self.year[j]) > 1:
            score -= YEAR_CONFLICT_PENALTY
        return min(1.0, max(0.0, score))


def cluster_sections(sections: pd.DataFrame, emb: SectionEmbeddings | np.ndarray,
                     config: Config) -> tuple[list[int], list[float | None]]:
    """Cluster sections into papers (see the module docstring).

    Args:
        sections: rows with ``doc_id``, ``arxiv_id``, ``title``.
        emb: :func:`embed_sections` of ``sections``; a bare float32 array ``(len(sections), d)``
            is taken as the content vectors, with no title vectors.

    Returns:
        ``(labels, join_scores)``: a cluster label per section (ints, first appearance order) and
        the average score of the section to the other members of its cluster, at most
        :data:`JOIN_SCORE_SAMPLE` of them (None when alone).
    """
    n = len(sections)
    if isinstance(emb, np.ndarray):
        emb = SectionEmbeddings(content=emb, title=np.zeros_like(emb), title_zh=np.zeros_like(emb))
    scorer = PairScorer(sections, emb, config.dedup.embed_weight)
    candidates = set(_neighbours(emb.content, K_NEIGHBOURS, config.dedup.ann_min_sections))
    # titles across languages: neighbours among the title vectors (English or Chinese, summed)
    titles = emb.title + emb.title_zh
    norms = np.linalg.norm(titles, axis=1, keepdims=True)
    titles = np.divide(titles, norms, out=np.zeros_like(titles), where=norms > 0)
    if titles.any():
        candidates.update(_neighbours(titles, K_NEIGHBOURS, config.dedup.ann_min_sections))
    for key in (scorer.arxiv, scorer.folded):
        groups: dict[str, list[int]] = {}
        for i, value in enumerate(key):
            if value is not None:
                groups.setdefault(value, []).append(i)
        for members in groups.values():
            candidates.update(_key_pairs(members, scorer.doc))
    scored = sorted(((scorer.score(i, j), i, j) for i, j in candidates), key=lambda t: (-t[0], t[1], t[2]))

    cluster_of = list(range(n))
    members: dict[int, list[int]] = {i: [i] for i in range(n)}
    # one paper named twice in one document (an exact key: same arXiv id or folded title) is one
    # mention group from the start; other sections of a document never join each other
    for key in (scorer.arxiv, scorer.folded, scorer.folded_zh):
        first: dict[tuple[str, str], int] = {}
        for i, value in enumerate(key):
            if value is None:
                continue
            j = first.setdefault((scorer.doc[i], value), i)
            a, b = cluster_of[i], cluster_of[j]
            if a == b or any(scorer.cannot_link(x, y) for x in members[a] for y in members[b]):
                continue
            keep, gone = min(a, b), max(a, b)
            for x in members[gone]:
                cluster_of[x] = keep
            members[keep].extend(members.pop(gone))
    threshold = config.dedup.match_threshold
    for s, i, j in scored:
        if s < threshold:
            break
        a, b = cluster_of[i], cluster_of[j]
        if a == b:
            continue
        if any(scorer.cannot_link(x, y) for x in members[a] for y in members[b]):
            continue
        # an exact key (same arXiv id or folded title) links outright (must-link); any other
        # pair needs the average over all cross pairs to reach the threshold
        if not scorer.exact(i, j):
            cross = [scorer.score(x, y) for x in members[a] for y in members[b]]
            if sum(cross) / len(cross) < threshold:
                continue
        keep, gone = min(a, b), max(a, b)
        for x in members[gone]:
            cluster_of[x] = keep
        members[keep].extend(members.pop(gone))

    relabel: dict[int, int] = {}
    labels = [relabel.setdefault(c, len(relabel)) for c in cluster_of]
    join_scores: list[float | None] = []
    for i in range(n):
        others = [x for x in members[cluster_of[i]] if x != i][:JOIN_SCORE_SAMPLE]
        join_scores.append(float(np.mean([scorer.score(i, x) for x in others])) if others else None)
    return labels, join_scores


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


def paper_id_for(arxiv_id: str | None, title: str | None, first_section_id: str) -> str:
    """Stable paper id: ``p-`` + 16 hex digits of SHA-256 of the arXiv id when known, else of the
    folded title, else of the first mention's section id."""
    if arxiv_id:
        key = f"arxiv:{arxiv_id}"
    elif title and fold_title(title):
        key = f"title:{fold_title(title)}"
    else:
        key = f"section:{first_section_id}"
    return "p-" + hashlib.sha256(key.encode()).hexdigest()[:16]


def fuse(group: pd.DataFrame) -> dict:
    """One canonical record from the sections of one paper (rows in section-id order).

    Rules: present beats missing; the value most mentions agree on beats the others (ties: the
    first mention); the title is the most common folded title, spelled as in the mention with
    the most metadata; authors and institutions from the fullest list; URLs are the union in
    mention order (``url_kinds`` aligned with them); the longest summary, in the target script
    (``summary_norm`` of the mentions). Disagreements go to ``conflicts`` as
    ``"field: a | b"`` strings.
    """
    conflicts: list[str] = []
    rows = records(group)
    richness = [sum(bool(r.get(f)) for f in ("arxiv_id", "authors", "institutions", "award_raw")) for r in rows]
    folded = [fold_title(r["title"]) if r.get("title") else None for r in rows]
    best_fold = _vote(folded, "title", conflicts)
    title = None
    if best_fold is not None:
        candidates = [(richness[i], -i, rows[i]["title"]) for i in range(len(rows)) if folded[i] == best_fold]
        title = max(candidates)[2]
    authors = max((r["authors"] for r in rows), key=len, default=[])
    institutions = max((r["institutions"] for r in rows), key=len, default=[])
    url_kinds: dict[str, str] = {}
    for r in rows:
        for u, k in zip(r["urls"], r["url_kinds"], strict=True):
            url_kinds.setdefault(u, k)
    summaries = [r["summary_norm"] for r in rows if r.get("summary_norm")]
    arxiv_id = _vote([r["arxiv_id"] for r in rows], "arxiv_id", conflicts)
    year = _vote([r["year"] for r in rows], "year", conflicts)
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
        "summary": max(summaries, key=len) if summaries else None,
        "section_ids": [r["section_id"] for r in rows],
        "doc_ids": sorted(dict.fromkeys(r["doc_id"] for r in rows)),
        "n_mentions": len(rows),
        "n_sources": len({r["doc_id"] for r in rows}),  # copies folded by the runner (count_sources)
        "conflicts": conflicts,
    }
    record["paper_id"] = paper_id_for(arxiv_id, title, rows[0]["section_id"])
    return record


def dedup(sections: pd.DataFrame, config: Config, embedder: Embedder) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The global dedup stage.

    Args:
        sections: one row per section with the extract columns plus ``section_id``, ``doc_id``.
        embedder: the configured embedder (loaded once by the runner).

    Returns:
        ``(sections, papers)``: ``sections`` with added ``paper_id`` (str) and ``match_score``
        (float or None: average score to the other mentions of its paper); ``papers`` with the
        columns of :data:`PAPER_COLUMNS`, sorted by ``paper_id``.
    """
    sections = sections.sort_values("section_id", kind="stable").reset_index(drop=True)
    if sections.empty:
        out = sections.assign(paper_id=pd.Series(dtype=object), match_score=pd.Series(dtype=float))
        return out, pd.DataFrame(columns=list(PAPER_COLUMNS))
    emb = embed_sections(sections, embedder)
    labels, join_scores = cluster_sections(sections, emb, config)
    sections = sections.assign(_cluster=labels, match_score=join_scores)
    papers, paper_of_cluster, taken = [], {}, set()
    for label, group in sections.groupby("_cluster", sort=True):
        record = fuse(group)
        if record["paper_id"] in taken:
            # two papers share a key (one title twice in a document): the later one, in
            # section-id order, is keyed by its first mention instead, which is just as stable
            record["paper_id"] = paper_id_for(None, None, record["section_ids"][0])
        taken.add(record["paper_id"])
        paper_of_cluster[label] = record["paper_id"]
        papers.append(record)
    sections = sections.assign(paper_id=[paper_of_cluster[c] for c in labels]).drop(columns="_cluster")
    papers_df = pd.DataFrame(papers, columns=list(PAPER_COLUMNS)).sort_values("paper_id").reset_index(drop=True)
    return sections, papers_df


# ---------------------------------------------------------------------------------------------
# Duplicate documents
# ---------------------------------------------------------------------------------------------

#: Character shingle length for comparing two documents' kept text (Broder 1997, "On the
#: resemblance and containment of documents"): 5 characters is about two Chinese words or one
#: English word, short enough that a copy with a few edited characters still shares most shingles.
SHINGLE_CHARS = 5
#: Two documents that mention the same papers are copies of one article when the Jaccard
#: resemblance of their sections' shingles reaches this. Boilerplate (bylines, share prompts,
#: related lists) is outside the sections, so a syndicated copy reaches about 1.0; two different
#: write-ups of the same papers share well under 0.3 (the seed report and digest: 0.02).
DUP_MIN_RESEMBLANCE = 0.8


def _shingles(text: str) -> set[str]:
    s = "".join(text.split())
    return {s[i : i + SHINGLE_CHARS] for i in range(max(1, len(s) - SHINGLE_CHARS + 1))} if s else set()


def find_duplicate_documents(documents: pd.DataFrame, sections: pd.DataFrame) -> list[str | None]:
    """``dup_of`` for each document: the ``doc_id`` of the earlier document it copies, or None.

    A document copies an earlier one (in ``documents`` row order, i.e. by source path) when
    (a) its bytes are identical (status ``duplicate``; the first path is named in ``error``), or
    (b) both have sections, mention exactly the same set of papers, and the Jaccard resemblance
    of their sections' ``text_norm`` character shingles is at least
    :data:`DUP_MIN_RESEMBLANCE` (the same article syndicated with other boilerplate or another
    script). Only documents with the same paper set are compared, so the cost is small.

    Args:
        documents: rows with ``doc_id``, ``source_path``, ``status``, ``content_sha256``.
        sections: rows with ``doc_id``, ``paper_id``, ``text_norm``.

    Returns:
        A list aligned with ``documents`` rows. A copy of a copy points to the first original.
    """
    first_of_content: dict[str, str] = {}
    dup_of: list[str | None] = []
    by_doc: dict[str, list[dict]] = {}
    for row in records(sections):
        by_doc.setdefault(row["doc_id"], []).append(row)
    originals: dict[frozenset[str], list[tuple[str, set[str]]]] = {}
    for doc_id, status, sha in zip(documents["doc_id"], documents["status"], documents["content_sha256"],
                                   strict=True):
        target = None
        if isinstance(sha, str):
            if status == "duplicate" and sha in first_of_content:
                target = first_of_content[sha]
            first_of_content.setdefault(sha, doc_id)
        rows = by_doc.get(doc_id, [])
        if target is None and rows:
            papers = frozenset(r["paper_id"] for r in rows)
            shingles = _shingles("\n".join(r["text_norm"] for r in rows))
            for other_id, other in originals.get(papers, []):
                union = len(shingles | other)
                if union and len(shingles & other) / union >= DUP_MIN_RESEMBLANCE:
                    target = other_id
                    break
            if target is None:
                originals.setdefault(papers, []).append((doc_id, shingles))
        dup_of.append(target)
    return dup_of


def count_sources(papers: pd.DataFrame, dup_of: dict[str, str | None]) -> list[int]:
    """``n_sources`` per paper: distinct documents among its ``doc_ids`` once every copy is
    counted as its original (``dup_of``: doc_id -> original doc_id or None)."""
    def original(doc_id: str) -> str:
        target = dup_of.get(doc_id)
        return target if isinstance(target, str) else doc_id

    return [len({original(d) for d in doc_ids}) for doc_ids in papers["doc_ids"]]
