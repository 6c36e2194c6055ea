"""Dedup step 6, copies: documents that copy an earlier one (byte-identical, or the same papers
with nearly the same text, :func:`duplicate_documents`), and each paper's distinct sources with
copies folded (:func:`count_sources`)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from .score import _Decoded, _dictionary_ids

#: Character shingle length (Broder 1997, "On the resemblance and containment of documents"):
#: about two Chinese words or one English word, so lightly edited copies share most shingles.
SHINGLE_CHARS = 5

#: Jaccard resemblance of two same-paper documents' section shingles from which they are copies:
#: boilerplate is outside the sections, so syndicated copies reach about 1.0.
DUP_MIN_RESEMBLANCE = 0.8

#: A code point past Unicode's last (21 bits hold both): pads a text shorter than a shingle.
_SHINGLE_PAD = (1 << 21) - 1


def _shingle_keys(text: str) -> np.ndarray:
    """The distinct :data:`SHINGLE_CHARS`-character shingles of ``text`` without whitespace (a
    shorter text: one, padded with :data:`_SHINGLE_PAD`), each 5 code points packed into two
    uint64: ``(m, 2)``, rows sorted and distinct."""
    assert SHINGLE_CHARS == 5, "the packing assumes 5 code points"
    s = "".join(text.split())
    if not s:
        return np.zeros((0, 2), np.uint64)
    points = np.frombuffer(s.encode("utf-32-le", "surrogatepass"), dtype="<u4").astype(np.uint64)
    if len(points) < SHINGLE_CHARS:
        points = np.concatenate([points, np.full(SHINGLE_CHARS - len(points), _SHINGLE_PAD, np.uint64)])
    w = np.lib.stride_tricks.sliding_window_view(points, SHINGLE_CHARS)
    hi = (w[:, 0] << np.uint64(42)) | (w[:, 1] << np.uint64(21)) | w[:, 2]
    lo = (w[:, 3] << np.uint64(21)) | w[:, 4]
    order = np.lexsort((lo, hi))
    hi, lo = hi[order], lo[order]
    new = np.ones(len(hi), dtype=bool)
    new[1:] = (hi[1:] != hi[:-1]) | (lo[1:] != lo[:-1])
    return np.stack([hi[new], lo[new]], axis=1)


def _shared_shingles(a: np.ndarray, b: np.ndarray) -> int:
    """``len(A & B)`` of two :func:`_shingle_keys` arrays."""
    if not len(a) or not len(b):
        return 0
    both = np.concatenate([a, b])
    both = both[np.lexsort((both[:, 1], both[:, 0]))]
    return int(((both[1:, 0] == both[:-1, 0]) & (both[1:, 1] == both[:-1, 1])).sum())


def paper_sets(doc_ids: Sequence[str], paper_ids: Sequence[str] | pa.Array) -> dict[str, frozenset[str]]:
    """Per document, the set of papers it mentions (documents without sections absent);
    ``paper_ids`` aligned with ``doc_ids``, strings or an Arrow string array."""
    if isinstance(paper_ids, pa.ChunkedArray):
        paper_ids = paper_ids.combine_chunks()
    if isinstance(paper_ids, pa.Array):
        paper_ids = _Decoded(*_dictionary_ids(paper_ids))
    sets: dict[str, set[str]] = {}
    for doc_id, paper_id in zip(doc_ids, paper_ids, strict=True):
        sets.setdefault(doc_id, set()).add(paper_id)
    return {d: frozenset(p) for d, p in sets.items()}


def copy_candidates(papers_of: dict[str, frozenset[str]]) -> set[str]:
    """Documents whose paper set another shares: the only ones :func:`duplicate_documents` reads."""
    count = Counter(papers_of.values())
    return {d for d, papers in papers_of.items() if count[papers] > 1}


def duplicate_documents(documents, papers_of: dict[str, frozenset[str]], text_of: dict[str, str]) -> list[str | None]:
    """``dup_of`` per document: the ``doc_id`` of the earlier document it copies (a copy of a copy
    names the first original), or None.

    A copy has (a) identical bytes (status ``duplicate``), or (b) the same set of papers and a
    Jaccard resemblance of ``text_norm`` shingles of at least :data:`DUP_MIN_RESEMBLANCE`; the
    earliest original wins. Prefix filtering (Chaudhuri et al. 2006; Bayardo et al. 2007) compares
    only originals sharing a rare prefix shingle: the same verdicts as every pair, near-linear time.

    Args:
        documents: iterable of ``(doc_id, status, content_sha256)`` in output order.
        papers_of: :func:`paper_sets` of the run's sections.
        text_of: sections' ``text_norm`` joined by newlines, for at least :func:`copy_candidates`.
    """
    first_of_content: dict[str, str] = {}
    dup_of: list[str | None] = []
    candidates = copy_candidates(papers_of)
    prefixes = _rarest_prefixes({d: _shingle_keys(text_of[d]) for d in candidates}, papers_of)
    # per paper set: its originals (doc id, shingles) and, per prefix shingle, their positions
    originals: dict[frozenset[str], list[tuple[str, np.ndarray]]] = {}
    holders: dict[frozenset[str], dict[int, list[int]]] = {}
    for doc_id, status, sha in documents:
        target = None
        if isinstance(sha, str):
            if status == "duplicate" and sha in first_of_content:
                target = first_of_content[sha]
            first_of_content.setdefault(sha, doc_id)
        if target is None and doc_id in candidates:
            papers = papers_of[doc_id]
            shingles, prefix = prefixes[doc_id]
            known, index = originals.setdefault(papers, []), holders.setdefault(papers, {})
            for k in sorted({k for rank in prefix for k in index.get(rank, ())}):
                other_id, other = known[k]
                shared = _shared_shingles(shingles, other)
                union = len(shingles) + len(other) - shared
                if union and shared / union >= DUP_MIN_RESEMBLANCE:
                    target = other_id
                    break
            if target is None:
                for rank in prefix:
                    index.setdefault(rank, []).append(len(known))
                known.append((doc_id, shingles))
        dup_of.append(target)
    return dup_of


def _rarest_prefixes(shingles_of: dict[str, np.ndarray],
                     papers_of: dict[str, frozenset[str]]) -> dict[str, tuple[np.ndarray, list[int]]]:
    """Per document, its shingles and prefix ranks: the ``n - floor(t n) + 1`` rarest of its ``n``
    shingles (``t`` = :data:`DUP_MIN_RESEMBLANCE`), ranked by document count in its paper set, then value."""
    by_set: dict[frozenset[str], list[str]] = {}
    for d in shingles_of:
        by_set.setdefault(papers_of[d], []).append(d)
    out: dict[str, tuple[np.ndarray, list[int]]] = {}
    row = np.dtype([("hi", "<u8"), ("lo", "<u8")])
    for docs in by_set.values():
        arrays = [np.ascontiguousarray(shingles_of[d]).view(row).ravel() for d in docs]
        _, inverse, counts = np.unique(np.concatenate(arrays), return_inverse=True, return_counts=True)
        rank_of = np.empty(len(counts), np.int64)
        rank_of[np.lexsort((np.arange(len(counts)), counts))] = np.arange(len(counts))
        ranks = rank_of[inverse.ravel()]
        start = 0
        for d, arr in zip(docs, arrays, strict=True):
            n = len(arr)
            mine = np.sort(ranks[start : start + n])
            start += n
            size = n - int(DUP_MIN_RESEMBLANCE * n) + 1 if n else 0
            out[d] = (shingles_of[d], mine[: min(size, n)].tolist())
    return out


def count_sources(doc_ids: pa.Array | pa.ChunkedArray, documents: Sequence[str] | pa.Array,
                  dup_of: Sequence[str | None] | pa.Array) -> pa.Array:
    """``n_sources`` per paper: distinct documents among its ``doc_ids`` with copies counted as
    their originals, computed in Arrow.

    Args:
        doc_ids: the papers' ``doc_ids`` column, an Arrow list of strings (null: none).
        documents: every document's distinct ``doc_id``: strings or an Arrow string array.
        dup_of: aligned with ``documents``, each one's original or None.

    Returns int32 Arrow array, one count per paper.

    Raises ValueError: ``documents`` and ``dup_of`` differ in length.
    """
    if len(documents) != len(dup_of):
        raise ValueError(f"{len(dup_of)} dup_of values for {len(documents)} documents")
    lists = doc_ids.combine_chunks() if isinstance(doc_ids, pa.ChunkedArray) else doc_ids
    flat = pc.list_flatten(lists)
    docs = (documents if isinstance(documents, pa.Array) else pa.array(documents, pa.string())).cast(pa.string())
    copied = (dup_of.cast(pa.string()) if isinstance(dup_of, pa.Array)  # (a null-typed array: no copies)
              else pa.array([o if isinstance(o, str) else None for o in dup_of], pa.string()))  # (NaN: none)
    originals = pc.coalesce(copied, docs)
    source = pc.coalesce(originals.take(pc.index_in(flat, value_set=docs)), flat)  # a copy counts as its original
    counted = pa.table({"paper": pc.list_parent_indices(lists), "source": source}).group_by("paper").aggregate(
        [("source", "count_distinct")])
    out = np.zeros(len(lists), np.int32)
    out[counted["paper"].to_numpy()] = counted["source_count_distinct"].to_numpy()
    return pa.array(out)
