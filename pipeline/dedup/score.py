"""Dedup step 3, score: pair scores and cannot-link constraints (:class:`PairScorer`) and the
candidate pairs at or above the threshold in visiting order (:func:`_visited_pairs`).

Score: ``w * cosine + (1 - w) * title_similarity`` (``w = dedup.embed_weight``), plus
:data:`AUTHOR_BONUS`, less conflict penalties, clipped to [0, 1]; exact key 1.0, cannot-link
``-inf`` (docs/dedup.md, step 3). Columns are integer codes so scoring is numpy over arrays.
"""

from __future__ import annotations

import functools
import operator
import re
from collections.abc import Callable, Iterable, Sequence

import numpy as np
import pandas as pd
import pyarrow as pa

from .embed import SectionEmbeddings
from .titles import (
    _CJK,
    ALIAS_SIMILARITY,
    TITLE_CONFLICT_SIMILARITY,
    _chinese_pair_similarity,
    _english_ratio,
    _folded,
    _present,
    _ratio_upper_bounds,
    _sequel_conflict,
    _titles,
    compared_title,
    english_title_similarity,
    name_keys,
    same_authors_title_similarity,
)

#: A short Latin name opening a Chinese title before a colon ("AgentGym-RL：透過…").
_ZH_LEAD_NAME = re.compile(r"\s*([A-Za-z][\w.+\-]*[A-Za-z0-9])\s*[:：]\s*(?=[^\x00-\x7f]*[\u3400-\u9fff])")


#: Added when author lists overlap by at least AUTHOR_MIN_OVERLAP (Jaccard of :func:`_author_keys`);
#: subtracted for different venues or years over one apart. Calibrated on tests/fixtures/dedup.
AUTHOR_BONUS = 0.10

AUTHOR_MIN_OVERLAP = 0.5

VENUE_CONFLICT_PENALTY = 0.10

#: Subtracted when both list Latin-named authors sharing no surname. Calibrated on the real
#: corpus's dev split (bench/README.md).
AUTHOR_CONFLICT_PENALTY = 0.20

YEAR_CONFLICT_PENALTY = 0.10

#: Subtracted from a title-decided pair whose titles are in two languages (cross-language title
#: cosines of one topic run high). Calibrated on the dev split (bench/README.md, "Thresholds").
CROSS_TITLE_PENALTY = 0.08

#: Pairs scored per numpy batch in :meth:`PairScorer.scores` (``2 x batch x d`` float32).
SCORE_BATCH = 4096

#: Candidate pairs scored at a time by :func:`_visited_pairs` (a multiple of SCORE_BATCH).
CANDIDATE_BLOCK = 64 * SCORE_BATCH


def _author_keys(authors) -> frozenset[str]:
    """Author keys: a Latin name's last token case-folded, a CJK name whole (scripts never match)."""
    keys = set()
    for name in authors if authors is not None else ():
        name = str(name).strip()
        if not name:
            continue
        keys.add(name.split()[-1].casefold().strip(".") if name.isascii() else name)
    return frozenset(keys)


def _codes(values: Sequence) -> tuple[np.ndarray, list]:
    """``(codes, table)``: int64 ``(len(values),)`` codes in order of first appearance (``-1`` for
    None and empty sets), ``table[code]`` the value."""
    index: dict = {}
    codes = np.fromiter((index.setdefault(v, len(index)) if v is not None and v != frozenset() else -1
                         for v in values), np.int64, len(values))
    return codes, list(index)


#: Distinct full titles checked by :func:`_two_papers` for a short name.
NAME_TITLES_CHECKED = 32


def _two_papers(titles: list[str]) -> bool:
    """Whether two titles sharing a short name are two papers': ratio below
    :data:`~pipeline.dedup.titles.ALIAS_SIMILARITY` and neither's post-colon words inside the other."""
    folded = list(dict.fromkeys(t for t in titles if _folded(t)))[:NAME_TITLES_CHECKED]
    rests = [_folded(re.split(r"[:：]", t, maxsplit=1)[-1]) or _folded(t) for t in folded]
    for i, x in enumerate(folded):
        for j in range(i + 1, len(folded)):
            y = folded[j]
            if (_english_ratio(x, y) < ALIAS_SIMILARITY and rests[i] not in _folded(y)
                    and rests[j] not in _folded(x)):
                return True
    return False


def _first_appearance(raw: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(codes, ids)``: ids (``-1`` missing) renumbered by first appearance; ``ids[code]`` the raw id."""
    raw = np.asarray(raw, dtype=np.int64)
    valid = raw >= 0
    values = raw[valid]
    ids, first = np.unique(values, return_index=True)
    ids = ids[np.argsort(first, kind="stable")]
    new_of = np.full(int(ids.max()) + 1 if ids.size else 0, -1, np.int64)
    new_of[ids] = np.arange(len(ids))
    codes = np.full(len(raw), -1, np.int64)
    codes[valid] = new_of[values]
    return codes, ids


def _arrow_column(frame: pd.DataFrame, name: str) -> pa.Array | None:
    """Column ``name`` as one Arrow array (absent: all null), or None when Arrow cannot hold it."""
    if name not in frame.columns:
        return pa.nulls(len(frame))
    try:
        array = pa.array(frame[name], from_pandas=True)
    except (pa.ArrowException, TypeError, ValueError, UnicodeError):
        return None
    return array.combine_chunks() if isinstance(array, pa.ChunkedArray) else array


def _is_text(dtype: pa.DataType) -> bool:
    return pa.types.is_string(dtype) or pa.types.is_large_string(dtype)


def _dictionary_ids(array: pa.Array) -> tuple[np.ndarray, list]:
    """``(ids, dictionary)``: Arrow's dictionary encoding, ``ids`` int64 ``(n,)`` (``-1`` null)."""
    encoded = array.dictionary_encode()
    ids = np.asarray(encoded.indices.fill_null(-1).to_numpy(zero_copy_only=False), dtype=np.int64)
    return ids, encoded.dictionary.to_pylist()


def _string_codes(frame: pd.DataFrame, name: str, empty_is_missing: bool = True) -> tuple[np.ndarray, list] | None:
    """:func:`_codes` of a string column via Arrow dictionary encoding (missing, and empty with
    ``empty_is_missing``: ``-1``). None when the column is not only strings and missing markers
    (or holds missing markers without ``empty_is_missing``): the caller codes it in Python."""
    array = _arrow_column(frame, name)
    if array is None:
        return None
    if not empty_is_missing and array.null_count:  # a missing marker is a value there (see _codes)
        return None
    if pa.types.is_null(array.type):
        return np.full(len(array), -1, np.int64), []
    if not _is_text(array.type):
        return None
    raw, dictionary = _dictionary_ids(array)
    keep = np.array([bool(v) or not empty_is_missing for v in dictionary], dtype=bool)
    raw = np.where(raw >= 0, np.where(keep, np.arange(len(keep)), -1)[np.maximum(raw, 0)], -1) if len(keep) else raw
    codes, ids = _first_appearance(raw)
    return codes, [dictionary[k] for k in ids.tolist()]


class _KeySets(Sequence):
    """Sets of strings as int ids into a table of distinct ``keys``, CSR layout: set ``k`` is
    ``ids[offsets[k]:offsets[k + 1]]`` ascending (int32 ids, int64 offsets); ``sets[k]`` a frozenset."""

    def __init__(self, keys: list[str], ids: np.ndarray, offsets: np.ndarray):
        self.keys, self.ids, self.offsets = keys, ids, offsets

    @classmethod
    def code(cls, sets: Iterable[frozenset[str]]) -> tuple[np.ndarray, _KeySets]:
        """``(codes, table)``: :func:`_codes` of ``sets`` (empty ``-1``), the table a :class:`_KeySets`."""
        import array

        key_id: dict[str, int] = {}
        set_code: dict[tuple[int, ...], int] = {}
        ids, offsets, codes = array.array("i"), array.array("q", [0]), array.array("q")
        for keys in sets:
            if not keys:
                codes.append(-1)
                continue
            members = tuple(sorted({key_id.setdefault(k, len(key_id)) for k in keys}))  # a set, whatever came
            code = set_code.get(members)
            if code is None:
                code = set_code[members] = len(set_code)
                ids.extend(members)
                offsets.append(len(ids))
            codes.append(code)
        return (np.frombuffer(codes, dtype=np.int64).copy(),
                cls(list(key_id), np.frombuffer(ids, dtype=np.int32).copy(), np.frombuffer(offsets, dtype=np.int64).copy()))

    def __len__(self) -> int:
        return len(self.offsets) - 1

    def __getitem__(self, k):
        if isinstance(k, slice):
            return [self[i] for i in range(*k.indices(len(self)))]
        at = operator.index(k)  # a float or a str is a TypeError, as for a list
        if at < 0:
            at += len(self)
        if not 0 <= at < len(self):
            raise IndexError(f"set {k} of {len(self)}")
        return frozenset(self.keys[i] for i in self.ids[self.offsets[at] : self.offsets[at + 1]].tolist())

    def jaccard(self, x: np.ndarray, y: np.ndarray) -> np.ndarray:
        """Jaccard of non-empty sets ``x[t]`` and ``y[t]``: float64 ``(len(x),)``, as Python's sets.

        Raises:
            IndexError: a set number out of range.
            ValueError: ``x`` and ``y`` differ in length.
        """
        x, y = np.asarray(x, dtype=np.int64), np.asarray(y, dtype=np.int64)
        if len(x) != len(y):
            raise ValueError(f"{len(x)} and {len(y)} set numbers")
        for sets in (x, y):
            if sets.size and (sets.min() < 0 or sets.max() >= len(self)):
                raise IndexError(f"set numbers outside 0..{len(self) - 1}")
        members = np.cumsum(self.offsets[x + 1] - self.offsets[x] + self.offsets[y + 1] - self.offsets[y])
        out = np.empty(len(x))
        start = 0
        while start < len(x):  # whole pairs, at least one, up to JACCARD_MEMBERS members
            base = members[start - 1] if start else 0
            stop = max(start + 1, int(np.searchsorted(members, base + JACCARD_MEMBERS, side="right")))
            out[start:stop] = self._jaccard(x[start:stop], y[start:stop])
            start = stop
        return out

    def _jaccard(self, x: np.ndarray, y: np.ndarray) -> np.ndarray:
        """:meth:`jaccard` of one slice of pairs, all at once."""
        width = np.int64(max(len(self.keys), 1))

        def tagged(sets: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
            sizes = self.offsets[sets + 1] - self.offsets[sets]
            pair = np.repeat(np.arange(len(sets), dtype=np.int64), sizes)
            # each member's position in ids: its set's offset plus its rank in the set
            at = np.arange(int(sizes.sum()), dtype=np.int64) - np.repeat(np.cumsum(sizes) - sizes, sizes)
            return pair * width + self.ids[np.repeat(self.offsets[sets], sizes) + at], sizes

        tags_x, size_x = tagged(x)
        tags_y, size_y = tagged(y)
        shared = np.intersect1d(tags_x, tags_y, assume_unique=True) // width
        both = np.bincount(shared, minlength=len(x)).astype(np.int64)
        return both / (size_x + size_y - both)


#: Set members :meth:`_KeySets.jaccard` matches at a time (a few int64 each: tens of MB).
JACCARD_MEMBERS = 1 << 20

#: Separator of joined author names (a name holding it is coded the slow way).
_NAME_SEPARATOR = "\x1f"


def _author_codes(frame: pd.DataFrame) -> tuple[np.ndarray, _KeySets] | None:
    """``(codes, _KeySets)`` of each row's :func:`_author_keys`, once per distinct list (Arrow).
    None when ``authors`` is not lists of non-missing strings: the caller codes it in Python."""
    array = _arrow_column(frame, "authors")
    if array is None:
        return None
    if pa.types.is_null(array.type):
        return np.full(len(array), -1, np.int64), _KeySets.code(())[1]
    if not (pa.types.is_list(array.type) or pa.types.is_large_list(array.type)) or not pa.types.is_string(array.type.value_type):
        return None  # Arrow's binary_join has no kernel for lists of large_string
    import pyarrow.compute as pc

    names = pc.list_flatten(array)
    if names.null_count or (len(names) and pc.any(pc.match_substring(names, _NAME_SEPARATOR)).as_py()):
        return None
    raw, joined = _dictionary_ids(pc.binary_join(array, _NAME_SEPARATOR))
    lists, ids = _first_appearance(raw)
    list_key, table = _KeySets.code(_author_keys(joined[raw_id].split(_NAME_SEPARATOR) if joined[raw_id] else [])
                                    for raw_id in ids.tolist())
    codes = np.where(lists >= 0, list_key[np.maximum(lists, 0)], -1) if len(ids) else lists
    return codes, table


def _int_array(values: np.ndarray):
    """``values`` as an ``array.array`` of 8-byte ints (no Python object per element held)."""
    import array

    out = array.array("q")
    out.frombytes(np.ascontiguousarray(values, dtype=np.int64).tobytes())
    return out


def _folded_codes(title_code: np.ndarray, table: list) -> tuple[np.ndarray, list, np.ndarray]:
    """``(codes, folded_table, code_of)``: :func:`_codes` of the folded titles (empty: missing) and
    ``code_of`` int64 ``(len(table),)``, each title code's folded code (-1 empty)."""
    index: dict[str, int] = {}
    code_of = np.array([index.setdefault(f, len(index)) if (f := _folded(t)) else -1 for t in table], dtype=np.int64)
    codes = np.where(title_code >= 0, code_of[np.maximum(title_code, 0)], -1) if len(table) else np.full(len(title_code), -1, np.int64)
    return codes, list(index), code_of


class _Decoded(Sequence):
    """A per-section column: ``column[i]`` is ``table[codes[i]]``, ``missing`` where code is -1."""

    def __init__(self, codes: np.ndarray, table: Sequence, missing=None):
        self._codes, self._table, self._missing = codes, table, missing

    def __len__(self) -> int:
        return len(self._codes)

    def __getitem__(self, i):
        if isinstance(i, slice):
            return [self[k] for k in range(*i.indices(len(self)))]
        code = self._codes[i]
        return self._table[code] if code >= 0 else self._missing


class _Optional(Sequence):
    """Per-section ints with a presence mask: ``column[i]`` is ``int(values[i])`` or None."""

    def __init__(self, values: np.ndarray, present: np.ndarray):
        self._values, self._present = values, present

    def __len__(self) -> int:
        return len(self._values)

    def __getitem__(self, i):
        if isinstance(i, slice):
            return [self[k] for k in range(*i.indices(len(self)))]
        return int(self._values[i]) if self._present[i] else None


class PairScorer:
    """Pair scores and constraints over the sections of one run (docs/dedup.md, step 3).
    :meth:`scores` scores arrays of pairs; :meth:`score` one pair, cached.

    Attributes (one entry per section, in row order):
        doc, arxiv, title, folded, folded_zh, venue: per section, None where missing.
        has_summary: bool; authors: :func:`_author_keys` frozensets; year: int or None.
        doc_code, arxiv_code, folded_code, folded_zh_code, title_code, author_code, venue_code:
            int64 ``(n,)`` codes of the above (``-1`` where missing).
    """

    def __init__(self, sections: pd.DataFrame, emb: SectionEmbeddings, embed_weight: float):
        self.emb = emb
        self.w = embed_weight
        from ..stage import present

        n = len(sections)

        def column(name: str) -> list:  # as stage.records gives it (missing markers: None), per column
            return [present(v) for v in sections[name].tolist()] if name in sections.columns else [None] * n

        doc = _string_codes(sections, "doc_id", empty_is_missing=False)
        self.doc_code, doc_table = doc if doc is not None else _codes(sections["doc_id"].tolist())
        arxiv = _string_codes(sections, "arxiv_id")
        self.arxiv_code, arxiv_table = (arxiv if arxiv is not None else
                                        _codes([v if _present(v) else None for v in column("arxiv_id")]))
        title_code, self._title_table, zh_code, zh_table = self._title_codes(sections, column)
        # each distinct title folded once, in code order
        self.folded_code, folded_table, _ = _folded_codes(title_code, self._title_table)
        self.title_code = title_code
        self.name_code, self.initials_code, self._bare_name = self._name_codes(title_code, self._title_table)
        self.folded_zh_code, self._zh_table, _ = _folded_codes(zh_code, zh_table)
        # the short name a Chinese title opens with ("AgentGym-RL：…"), folded; "" for none
        leads = np.array([_folded(m.group(1)) if (m := _ZH_LEAD_NAME.match(z)) else "" for z in zh_table] + [""], dtype=object)
        self._zh_lead = leads[np.where(zh_code >= 0, zh_code, len(zh_table))]
        del zh_code, zh_table
        # each English title as its similarity compares it, for the ratio's bounds
        self._title_compared = [compared_title(t) for t in self._title_table]  # by title code
        self._summary = self._summary_present(sections, column)
        authors = _author_codes(sections)
        self.author_code, self._author_table = (authors if authors is not None else
                                                _KeySets.code(_author_keys(v) for v in column("authors")))
        self._year, self._has_year = self._years(sections, column)
        venue = _string_codes(sections, "venue")
        self.venue_code, venue_table = (venue if venue is not None else
                                        _codes([v if _present(v) else None for v in column("venue")]))
        assert emb.content.shape[0] == n, "one embedding row per section"
        self.doc = _Decoded(self.doc_code, doc_table)
        self.arxiv = _Decoded(self.arxiv_code, arxiv_table)
        self.title = _Decoded(self.title_code, self._title_table)
        self.folded = _Decoded(self.folded_code, folded_table)
        self.folded_zh = _Decoded(self.folded_zh_code, self._zh_table)
        self.venue = _Decoded(self.venue_code, venue_table)
        self.authors = _Decoded(self.author_code, self._author_table, frozenset())
        self.has_summary = self._summary
        self.year = _Optional(self._year, self._has_year)
        self._title_vec = emb.title_row >= 0
        self._title_zh_vec = emb.title_zh_row >= 0
        self._scores: dict[tuple[int, int], float] = {}

    def __len__(self) -> int:
        """The number of sections."""
        return len(self.doc_code)

    @staticmethod
    def _title_codes(sections: pd.DataFrame, column: Callable[[str], list]
                     ) -> tuple[np.ndarray, list, np.ndarray, list]:
        """``(title_code, title_table, zh_code, zh_table)`` of each section's English and Chinese
        title (:func:`_titles`)."""
        title, zh = _string_codes(sections, "title"), _string_codes(sections, "title_zh")
        if title is None or zh is None:
            titles = [_titles({"title": t, "title_zh": z}) for t, z in zip(column("title"), column("title_zh"), strict=True)]
            title_code, title_table = _codes([t[0] for t in titles])
            zh_code, zh_table = _codes([t[1] for t in titles])
            return title_code, title_table, zh_code, zh_table
        (t_code, t_table), (z_code, z_table) = title, zh
        chinese = np.array([bool(_CJK.search(t)) for t in t_table], dtype=bool)
        has_t = t_code >= 0
        t_chinese = has_t & chinese[np.maximum(t_code, 0)] if len(t_table) else has_t
        title_code, ids = _first_appearance(np.where(has_t & ~t_chinese, t_code, -1))
        title_table = [t_table[k] for k in ids.tolist()]
        # the Chinese title: title_zh, else a Chinese title; one id per distinct string of both
        zh_id: dict[str, int] = {}
        z_ids = np.array([zh_id.setdefault(z, len(zh_id)) for z in z_table], dtype=np.int64)
        t_ids = np.array([zh_id.setdefault(t, len(zh_id)) if c else -1 for t, c in zip(t_table, chinese, strict=True)],
                         dtype=np.int64)
        raw = np.where(z_code >= 0, z_ids[np.maximum(z_code, 0)] if len(z_ids) else -1,
                       np.where(t_chinese, t_ids[np.maximum(t_code, 0)] if len(t_ids) else -1, -1))
        zh_code, ids = _first_appearance(raw)
        strings = list(zh_id)
        return title_code, title_table, zh_code, [strings[k] for k in ids.tolist()]

    @staticmethod
    def _name_codes(title_code: np.ndarray, table: list) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``(name_code, initials_code, bare)`` per section (:func:`~pipeline.dedup.titles.name_keys`):
        int64 codes in one space (``-1`` none), and whether the title is the name alone."""
        ids: dict[str, int] = {}
        keys = [name_keys(t) for t in table]
        name = np.array([ids.setdefault(k, len(ids)) if k else -1 for k, _, _ in keys] + [-1], dtype=np.int64)
        initials = np.array([ids.setdefault(k, len(ids)) if k else -1 for _, k, _ in keys] + [-1], dtype=np.int64)
        bare = np.array([b for _, _, b in keys] + [False], dtype=bool)
        # a name that opens (or abbreviates) the titles of two papers names neither alone
        carriers: dict[int, list[str]] = {}
        for t, (nm, ini, is_bare) in zip(table, keys, strict=True):
            if not is_bare:
                for k in {nm, ini} - {""}:
                    carriers.setdefault(ids[k], []).append(t)
        ambiguous = {code for code, titles in carriers.items() if _two_papers(titles)}
        if ambiguous:
            name[np.isin(name, list(ambiguous)) & bare] = -1
        at = np.where(title_code >= 0, title_code, len(table))  # no title: the trailing "none" entry
        return name[at], initials[at], bare[at]

    def _aliases(self, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        """Whether one of each pair is titled by a short name alone that is the other's name or
        initials: bool ``(len(a),)``."""
        out = np.zeros(len(a), dtype=bool)
        for x, y in ((a, b), (b, a)):
            name = self.name_code[x]
            out |= self._bare_name[x] & (name >= 0) & ((name == self.name_code[y]) | (name == self.initials_code[y]))
        return out

    @staticmethod
    def _summary_present(sections: pd.DataFrame, column: Callable[[str], list]) -> np.ndarray:
        """Per section whether ``summary_norm`` or ``summary`` is a non-empty string: bool ``(n,)``."""
        arrays = [_arrow_column(sections, name) for name in ("summary_norm", "summary")]
        if all(a is not None and (pa.types.is_null(a.type) or _is_text(a.type)) for a in arrays):
            import pyarrow.compute as pc

            out = np.zeros(len(sections), dtype=bool)
            for a in arrays:
                if not pa.types.is_null(a.type):
                    out |= np.asarray(pc.fill_null(pc.greater(pc.binary_length(a), 0), False))
            return out
        return np.array([_present(a) or _present(b) for a, b in
                         zip(column("summary_norm"), column("summary"), strict=True)], dtype=bool)

    @staticmethod
    def _years(sections: pd.DataFrame, column: Callable[[str], list]) -> tuple[np.ndarray, np.ndarray]:
        """``(year, has_year)``: int64 and bool ``(n,)`` (0 where missing)."""
        values = sections["year"] if "year" in sections.columns else None
        if values is not None and (pd.api.types.is_float_dtype(values.dtype) or pd.api.types.is_integer_dtype(values.dtype)):
            floats = values.to_numpy(dtype=np.float64, na_value=np.nan)
            has = ~np.isnan(floats)
            if np.isfinite(floats[has]).all() and (np.abs(floats[has]) < 2.0**53).all():
                return np.where(has, floats, 0).astype(np.int64), has
        years = [int(v) if v is not None else None for v in column("year")]
        return (np.array([y if y is not None else 0 for y in years], dtype=np.int64),
                np.array([y is not None for y in years], dtype=bool))

    def cannot_link(self, i: int, j: int) -> bool:
        """Whether ``i`` and ``j`` may never be one paper: different arXiv ids, or one document
        without a shared exact key."""
        a, b = self.arxiv_code[i], self.arxiv_code[j]
        if a >= 0 and b >= 0 and a != b:
            return True
        return self.doc_code[i] == self.doc_code[j] and not self.exact(i, j)

    def exact(self, i: int, j: int) -> bool:
        """Whether ``i`` and ``j`` share an exact key: the arXiv id or a folded title."""
        return any(code[i] >= 0 and code[i] == code[j] for code in (self.arxiv_code, self.folded_code, self.folded_zh_code))

    def exact_pairs(self, i: np.ndarray, j: np.ndarray) -> np.ndarray:
        """:meth:`exact` of the pairs ``(i[t], j[t])``: bool ``(len(i),)``."""
        out = np.zeros(len(i), dtype=bool)
        for code in (self.arxiv_code, self.folded_code, self.folded_zh_code):
            a, b = code[i], code[j]
            out |= (a >= 0) & (a == b)
        return out

    def score(self, i: int, j: int) -> float:
        """The pair score of sections ``i`` and ``j`` (:meth:`scores`), symmetric, cached."""
        key = (i, j) if i < j else (j, i)
        cached = self._scores.get(key)
        if cached is None:
            cached = self._scores[key] = float(self.scores(np.array([key[0]]), np.array([key[1]]))[0])
        return cached

    def scores(self, i: np.ndarray, j: np.ndarray, exact_from: float | None = None) -> np.ndarray:
        """Pair scores of ``(i[t], j[t])``: float64 ``(len(i),)`` in [0, 1], ``-inf`` cannot-linked,
        1.0 exact (docs/dedup.md, step 3), in batches of :data:`SCORE_BATCH`. The cosine is
        bit-identical to ``content[i] @ content[j]``.

        Args:
            exact_from: when given, pairs provably below it get an upper bound instead
                (:func:`_ratio_upper_bounds`); ``math.inf``: the cheapest bound for all.
        """
        i, j = np.asarray(i, dtype=np.int64), np.asarray(j, dtype=np.int64)
        lo, hi = np.minimum(i, j), np.maximum(i, j)
        out = np.empty(len(lo), dtype=np.float64)
        for s in range(0, len(lo), SCORE_BATCH):
            out[s : s + SCORE_BATCH] = self._score_batch(lo[s : s + SCORE_BATCH], hi[s : s + SCORE_BATCH], exact_from)
        return out

    def _score_batch(self, a: np.ndarray, b: np.ndarray, exact_from: float | None) -> np.ndarray:
        exact = self.exact_pairs(a, b)
        xa, xb = self.arxiv_code[a], self.arxiv_code[b]
        cannot = ((xa >= 0) & (xb >= 0) & (xa != xb)) | ((self.doc_code[a] == self.doc_code[b]) & ~exact)
        out = np.where(cannot, -np.inf, 1.0)
        rest = np.flatnonzero(~exact & ~cannot)
        if not rest.size:
            return out
        a, b = a[rest], b[rest]
        content = self.emb.content
        cos = np.matmul(content[a][:, None, :], content[b][:, :, None])[:, 0, 0].astype(np.float64)
        ea, eb = self.title_code[a], self.title_code[b]
        za, zb = self.folded_zh_code[a], self.folded_zh_code[b]
        # an empty fold is not compared (two empty folds would have ratio 1.0)
        en = (self.folded_code[a] >= 0) & (self.folded_code[b] >= 0)
        zh = (za >= 0) & (zb >= 0)
        by_string = en | zh
        title_sim = np.full(len(a), np.nan)
        cross = np.flatnonzero(~by_string)  # no title pair in one language: title vectors across
        lead_conflict = np.zeros(len(a), dtype=bool)
        if cross.size:
            title_sim[cross] = self._cross_title_cosines(a[cross], b[cross])
            lead_conflict[cross] = self._lead_conflicts(a[cross], b[cross])
        overlap, alias = self._author_overlap(a, b), self._aliases(a, b)
        exact_title = by_string
        if exact_from is not None and 0.0 <= self.w <= 1.0 and by_string.any():  # score monotone in title_sim
            # ever tighter, dearer upper bounds, each for the pairs the previous one left
            for en_fn, en_table, zh_fn in ((_ratio_upper_bounds, self._title_compared, _ratio_upper_bounds),
                                           (self._english_ratios, self._title_table, self._chinese_sims)):
                bound = np.fmax(self._pair_sims(ea, eb, en & exact_title, en_table, en_fn),
                                self._pair_sims(za, zb, zh & exact_title, self._zh_table, zh_fn))
                title_sim = np.where(exact_title, bound, title_sim)
                exact_title = exact_title & (self._combine(a, b, cos, title_sim, overlap, alias, ~by_string) >= exact_from)
                if not exact_title.any():
                    break
        sequel = np.zeros(len(a), dtype=bool)
        if exact_title.any():
            # English titles of mentions naming the same authors: a substituted word is no conflict
            same = np.nan_to_num(overlap, nan=0.0) >= AUTHOR_MIN_OVERLAP
            title_sim[exact_title] = np.fmax(np.fmax(
                self._pair_sims(ea, eb, en & exact_title & ~same, self._title_table, self._english_sims),
                self._pair_sims(ea, eb, en & exact_title & same, self._title_table, self._same_author_sims)),
                self._pair_sims(za, zb, zh & exact_title, self._zh_table, self._chinese_sims))[exact_title]
            sequel = self._pair_sims(ea, eb, en & exact_title, self._title_table, self._sequels) == 1.0
        # version or sequel words, or a Chinese lead name the English title lacks: two papers
        score = self._combine(a, b, cos, title_sim, overlap, alias, ~by_string)
        sequel = sequel | lead_conflict
        out[rest] = np.where(sequel, np.minimum(score, TITLE_CONFLICT_SIMILARITY), score)
        return out

    def _combine(self, a: np.ndarray, b: np.ndarray, cos: np.ndarray, title_sim: np.ndarray,
                 overlap: np.ndarray, alias: np.ndarray, cross: np.ndarray) -> np.ndarray:
        """The score from its parts (title similarity NaN: none), clipped to [0, 1]; ``alias`` pairs
        decided by titles; ``cross`` marks cross-language title similarities."""
        # an alias: the titles decide, as the bare mention's content says little else
        title_sim = np.where(alias, np.fmax(title_sim, ALIAS_SIMILARITY), title_sim)
        has_title = ~np.isnan(title_sim)
        by_titles = alias | ~(self._summary[a] & self._summary[b])
        with np.errstate(invalid="ignore"):
            weighted = self.w * cos + (1.0 - self.w) * title_sim
        alone = title_sim - np.where(cross & ~alias, CROSS_TITLE_PENALTY, 0.0)
        score = np.where(has_title, np.where(by_titles, alone, weighted), cos)
        with np.errstate(invalid="ignore"):
            score = score + np.where(overlap >= AUTHOR_MIN_OVERLAP, AUTHOR_BONUS, 0.0)
            latin = self._latin_authors
            score = score - np.where((overlap == 0) & latin[self.author_code[a]] & latin[self.author_code[b]],
                                     AUTHOR_CONFLICT_PENALTY, 0.0)
        va, vb = self.venue_code[a], self.venue_code[b]
        score = score - np.where((va >= 0) & (vb >= 0) & (va != vb), VENUE_CONFLICT_PENALTY, 0.0)
        years = self._has_year[a] & self._has_year[b] & (np.abs(self._year[a] - self._year[b]) > 1)
        score = score - np.where(years, YEAR_CONFLICT_PENALTY, 0.0)
        return np.minimum(1.0, np.maximum(0.0, score))

    def _lead_conflicts(self, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        """Whether one of each pair has a Chinese title opening with a short name that the other's
        English title lacks: bool ``(len(a),)``."""
        out = np.zeros(len(a), dtype=bool)
        for x, y in ((a, b), (b, a)):
            lead = self._zh_lead[x]
            t = np.flatnonzero((lead != "") & (self.folded_code[y] >= 0))
            for k in t.tolist():
                out[k] = lead[k] not in self.folded[int(y[k])]
        return out

    def _cross_title_cosines(self, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        """Max cross-language title-vector cosine: float64 ``(len(a),)``, NaN without both vectors."""
        e = self.emb
        out = np.full(len(a), np.nan)
        for x, y, hx, hy in ((e.title_row, e.title_zh_row, self._title_vec, self._title_zh_vec),
                             (e.title_zh_row, e.title_row, self._title_zh_vec, self._title_vec)):
            t = np.flatnonzero(hx[a] & hy[b])
            if t.size:
                va, vb = e.title_vectors[x[a[t]]], e.title_vectors[y[b[t]]]
                cos = np.matmul(va[:, None, :], vb[:, :, None])[:, 0, 0].astype(np.float64)
                out[t] = np.fmax(out[t], cos)
        return out

    @staticmethod
    def _pair_sims(ca: np.ndarray, cb: np.ndarray, mask: np.ndarray, table: Sequence, fn) -> np.ndarray:
        """``fn`` over the distinct string pairs where ``mask``, spread back: float64 ``(len(ca),)``,
        NaN outside ``mask``."""
        return PairScorer._pair_values(ca, cb, mask, len(table), lambda x, y: fn(
            [table[k] for k in x.tolist()], [table[k] for k in y.tolist()]))

    @staticmethod
    def _pair_values(ca: np.ndarray, cb: np.ndarray, mask: np.ndarray, size: int, fn) -> np.ndarray:
        """``fn(x, y)`` over distinct code pairs (``x <= y``, below ``size``) where ``mask``, spread
        back: float64, NaN outside ``mask``."""
        out = np.full(len(ca), np.nan)
        t = np.flatnonzero(mask)
        if not t.size:
            return out
        lo, hi = np.minimum(ca[t], cb[t]), np.maximum(ca[t], cb[t])
        keys, inverse = np.unique(lo * size + hi, return_inverse=True)
        out[t] = np.asarray(fn(keys // size, keys % size), dtype=np.float64)[inverse.ravel()]
        return out

    @staticmethod
    def _english_sims(a: list[str], b: list[str]) -> list[float]:
        return [english_title_similarity(x, y) for x, y in zip(a, b, strict=True)]

    @staticmethod
    def _same_author_sims(a: list[str], b: list[str]) -> list[float]:
        return [same_authors_title_similarity(x, y) for x, y in zip(a, b, strict=True)]

    @staticmethod
    def _sequels(a: list[str], b: list[str]) -> list[float]:
        return [float(_sequel_conflict(x, y)) for x, y in zip(a, b, strict=True)]

    @staticmethod
    def _english_ratios(a: list[str], b: list[str]) -> list[float]:
        return [_english_ratio(x, y) for x, y in zip(a, b, strict=True)]

    @staticmethod
    def _chinese_sims(a: list[str], b: list[str]) -> list[float]:
        return [_chinese_pair_similarity(*sorted((x, y))) for x, y in zip(a, b, strict=True)]

    def _author_overlap(self, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        """Jaccard of the author keys of each pair: float64 ``(len(a),)``, NaN where a list is empty."""
        ca, cb = self.author_code[a], self.author_code[b]
        return self._pair_values(ca, cb, (ca >= 0) & (cb >= 0), len(self._author_table), self._author_table.jaccard)

    @functools.cached_property
    def _latin_authors(self) -> np.ndarray:
        """Per author-list code, whether all keys are Latin surnames (``False`` last, for ``-1``):
        bool ``(len(table) + 1,)``."""
        table = self._author_table
        out = np.zeros(len(table) + 1, dtype=bool)
        if len(table) and table.ids.size:
            ascii_key = np.fromiter((k.isascii() for k in table.keys), bool, len(table.keys))
            out[:-1] = np.add.reduceat((~ascii_key[table.ids]).astype(np.int64), table.offsets[:-1]) == 0
        return out


def _visited_pairs(found: list[np.ndarray], n: int, scorer: PairScorer, threshold: float,
                   scores: Callable[..., np.ndarray] | None = None) -> tuple[np.ndarray, np.ndarray]:
    """The distinct candidate pairs scoring at least ``threshold``, in merge-loop order:
    descending score, ties by ``(low, high)``.

    Args:
        found: candidate pairs per source as :func:`_pair_keys` keys (int64, sorted); emptied.
        scores: ``scorer.scores`` (None) or a :class:`pipeline.dedup.cluster.SharedScores`.

    Returns:
        ``(left, right)``: int ``(k,)`` each (int32 below 2**31 sections, else int64), ``left < right``.
        Scored :data:`CANDIDATE_BLOCK` keys at a time.
    """
    score = scorer.scores if scores is None else scores
    done: list[np.ndarray] = []  # the keys of the sources already scored
    kept_keys, kept_scores = [], []
    while found:
        keys = found.pop(0)
        for start in range(0, len(keys), CANDIDATE_BLOCK):
            block = keys[start : start + CANDIDATE_BLOCK]
            # pairs of an earlier source were scored there: left out a block at a time
            for earlier in done:
                if block.size and earlier.size:
                    at = np.minimum(np.searchsorted(earlier, block), earlier.size - 1)
                    block = block[earlier[at] != block]
            if not block.size:
                continue
            got = score(block // n, block % n, exact_from=threshold)
            above = got >= threshold
            kept_keys.append(block[above])
            kept_scores.append(got[above])
        done.append(keys)
    del done
    keys_above = np.concatenate(kept_keys) if kept_keys else np.zeros(0, np.int64)
    del kept_keys
    scores_above = np.concatenate(kept_scores) if kept_scores else np.zeros(0, np.float64)
    del kept_scores
    np.negative(scores_above, out=scores_above)
    # key low * n + high orders as (low, high)
    order = np.lexsort((keys_above, scores_above))
    del scores_above
    keys_above = keys_above[order]
    del order
    dtype = np.int32 if n <= np.iinfo(np.int32).max else np.int64
    left, right = np.empty(len(keys_above), dtype), np.empty(len(keys_above), dtype)
    for start in range(0, len(keys_above), CANDIDATE_BLOCK):  # no int64 temporary of all pairs
        block = keys_above[start : start + CANDIDATE_BLOCK]
        left[start : start + CANDIDATE_BLOCK], right[start : start + CANDIDATE_BLOCK] = block // n, block % n
    return left, right
