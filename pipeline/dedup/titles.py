"""String similarity of paper titles, the title half of a pair's score (:mod:`pipeline.dedup.score`).

English: :class:`difflib.SequenceMatcher` ratio (``cydifflib``, same algorithm compiled) of the
folded titles, capped when the words conflict (:func:`english_title_similarity`); Chinese: the
ratio of the folded titles. :func:`_ratio_upper_bounds` prunes pairs far below the threshold.
"""

from __future__ import annotations

import functools
import math
import re
from collections.abc import Container, Sequence

import numpy as np
from cydifflib import SequenceMatcher  # difflib's algorithm in Cython: the same ratios, faster

from ..fields import fold_title, fold_title_words
from ..textutil import data_lines

#: Score cap of two English titles differing by a whole word on each side or by a sequel marker
#: on one: near-miss papers (follow-ups, siblings), not spelling variants.
TITLE_CONFLICT_SIMILARITY = 0.3

#: Two title words are the same word at this SequenceMatcher ratio (typos score about 0.96).
WORD_MATCH_RATIO = 0.85

#: Words that mark a follow-up paper when only one of two titles has them.
SEQUEL_WORDS = frozenset("improved improving revisited revisiting extended scaling faster better v2 v3 xl plus pro".split())

_CJK = re.compile(r"[\u3400-\u9fff]")

_WORD = re.compile(r"[^\W_]+")

#: Entries of the string-pair caches of the title similarities (about 200 bytes each).
TITLE_PAIR_CACHE = 1 << 16

#: Entries of the per-title word index cache (:func:`_word_index`; ~1.3 KB each).
TITLE_INDEX_CACHE = 1 << 12


#: A paper's short name ("XYZ", "XYZ 3D"), alone or before its title's colon: at most this many
#: words and characters.
NAME_MAX_WORDS = 3
NAME_MAX_CHARS = 30
#: Shortest folded short name (a single letter names nothing).
MIN_NAME_CHARS = 2

#: Title similarity of a mention titled only by a short name and a full title opening with that
#: name or its initials; authors, venue and year still count. Calibrated on the real corpus's dev
#: split (bench/README.md, "Thresholds").
ALIAS_SIMILARITY = 0.7

_NAME_PART = re.compile(r"^\s*(?P<name>[^:：]+?)\s*[:：]\s*\S")


def _is_name(s: str) -> bool:
    words = s.split()
    return 0 < len(words) <= NAME_MAX_WORDS and len(s) <= NAME_MAX_CHARS and _CJK.search(s) is None


@functools.lru_cache(maxsize=65536)
def name_keys(title: str) -> tuple[str, str, bool]:
    """``(name, initials, bare)`` of an English title: ``name`` the folded short name when the
    title is one (``bare``) or opens with one before a colon, else ``""``; ``initials`` those of
    a name of three or more capitalised words, else ``""``."""
    if _is_name(title) and not _NAME_PART.match(title):
        name = fold_title(title)
        return (name, "", True) if _names_something(name) else ("", "", False)
    m = _NAME_PART.match(title)
    if m is None or not _is_name(m.group("name")) or not _names_something(name := fold_title(m.group("name"))):
        return "", "", False
    words = _WORD.findall(m.group("name"))
    initials = ("".join(w[0] for w in words).casefold()
                if len(words) >= 3 and all(w[0].isupper() and len(w) > 1 for w in words) else "")
    return name, initials, False


def _names_something(name: str) -> bool:
    """A folded short name of :data:`MIN_NAME_CHARS` or more that is no English function word."""
    from ..yake_port import EN_STOP_WORDS

    return len(name) >= MIN_NAME_CHARS and name not in EN_STOP_WORDS


def _titles(row: dict) -> tuple[str | None, str | None]:
    """``(English title, Chinese title)`` of a section; a ``title`` with Chinese characters counts as Chinese."""
    title = row.get("title") if _present(row.get("title")) else None
    title_zh = row.get("title_zh") if _present(row.get("title_zh")) else None
    if title is not None and _CJK.search(title):
        title, title_zh = None, title_zh or title
    return title, title_zh


def _present(value) -> bool:
    return isinstance(value, str) and bool(value)


@functools.lru_cache(maxsize=65536)
def _folded(title: str) -> str:
    """:func:`pipeline.fields.fold_title`, computed once per title."""
    return fold_title(title)


@functools.cache
def _abbreviations() -> tuple[re.Pattern, dict[str, str]]:
    """The whole-word pattern and expansions of ``pipeline/data/title_abbreviations.txt``."""
    table = {short.strip(): long.strip() for short, _, long in
             (line.partition("\t") for line in data_lines("title_abbreviations.txt"))}
    words = "|".join(sorted(map(re.escape, table), key=len, reverse=True))
    return re.compile(rf"(?<![^\W_])(?:{words})(?![^\W_])"), table


#: Most abbreviations a title has written out; more are kept as written (expansion multiplies
#: difflib's quadratic cost; bench/README.md, "Thresholds").
MAX_EXPANDED_ABBREVIATIONS = 4


@functools.lru_cache(maxsize=65536)
def _expanded_words(title: str) -> str:
    """:func:`pipeline.fields.fold_title_words` of an English title with its abbreviations
    written out (at most :data:`MAX_EXPANDED_ABBREVIATIONS`, else as written)."""
    pattern, table = _abbreviations()
    words = fold_title_words(title)
    expanded, n = pattern.subn(lambda m: table[m.group(0)], words, count=MAX_EXPANDED_ABBREVIATIONS + 1)
    return words if n > MAX_EXPANDED_ABBREVIATIONS else expanded


@functools.lru_cache(maxsize=TITLE_INDEX_CACHE)
def _written_abbreviations(title: str) -> frozenset[str]:
    """The singular expansions of the abbreviations an English title writes ("LLMs" -> "large
    language model")."""
    pattern, table = _abbreviations()
    return frozenset(" ".join(map(_singular, table[m.group(0)].split()))
                     for m in pattern.finditer(fold_title_words(title)))


def _nested_abbreviations(a: str, b: str) -> bool:
    """Whether each title writes an abbreviation the other does not, one's expansion inside the
    other's ("LMs" / "LLMs"): two terms, though written out they only differ by a word."""
    only_a = _written_abbreviations(a) - _written_abbreviations(b)
    only_b = _written_abbreviations(b) - _written_abbreviations(a)
    return any(f" {x} " in f" {y} " or f" {y} " in f" {x} " for x in only_a for y in only_b)


@functools.lru_cache(maxsize=65536)
def compared_title(title: str) -> str:
    """English titles as compared: :func:`_expanded_words`, folded (the exact key stays the plain fold)."""
    return fold_title(_expanded_words(title))


@functools.lru_cache(maxsize=65536)
def _title_words(title: str) -> tuple[str, ...]:
    """Words of an English title as compared, split at non-alphanumerics, plural ``s`` dropped."""
    return tuple(map(_singular, _WORD.findall(_expanded_words(title))))


def _singular(word: str) -> str:
    """A title word without a plural ``s`` (``models`` -> ``model``; not ``loss``, ``gas``)."""
    return word[:-1] if len(word) > 3 and word.endswith("s") and not word.endswith("ss") else word


@functools.lru_cache(maxsize=65536)
def _same_word(w: str, v: str) -> bool:
    """Whether two words are the same up to a typo (ratio >= :data:`WORD_MATCH_RATIO`), difflib's
    quick upper bounds first; two different numbers never are."""
    if w == v:
        return True
    if w.isdigit() and v.isdigit():
        return False
    sm = SequenceMatcher(None, w, v)
    return (sm.real_quick_ratio() >= WORD_MATCH_RATIO and sm.quick_ratio() >= WORD_MATCH_RATIO
            and sm.ratio() >= WORD_MATCH_RATIO)


def english_title_similarity(a: str, b: str) -> float:
    """Similarity of two English titles in [0, 1], symmetric: the SequenceMatcher ratio of the
    folded titles, capped at :data:`TITLE_CONFLICT_SIMILARITY` when after pairing equal or
    near-equal words each keeps a word of its own, or the one-sided words include a sequel marker
    (:func:`_is_sequel_word`). A title that only lacks words of the other is no conflict."""
    ratio = _english_ratio(a, b)
    if ratio > TITLE_CONFLICT_SIMILARITY and _english_conflict(a, b):
        return TITLE_CONFLICT_SIMILARITY
    return ratio


def same_authors_title_similarity(a: str, b: str) -> float:
    """:func:`english_title_similarity` for mentions naming the same authors: only a sequel marker
    caps the ratio (a substituted word is then a typo or rewording)."""
    ratio = _english_ratio(a, b)
    if ratio > TITLE_CONFLICT_SIMILARITY and _sequel_conflict(a, b):
        return TITLE_CONFLICT_SIMILARITY
    return ratio


@functools.lru_cache(maxsize=TITLE_PAIR_CACHE)
def _sequel_conflict(a: str, b: str) -> bool:
    """Whether the one-sided words hold a sequel marker, or each side holds a number."""
    wa, set_a, by_length_a = _word_index(a)
    wb, set_b, by_length_b = _word_index(b)
    only_a, only_b = _one_sided(wa, set_b, by_length_b), _one_sided(wb, set_a, by_length_a)
    return (any(map(_is_sequel_word, only_a)) or any(map(_is_sequel_word, only_b))
            or (any(w.isdigit() for w in only_a) and any(w.isdigit() for w in only_b)))


@functools.lru_cache(maxsize=TITLE_PAIR_CACHE)
def _english_ratio(a: str, b: str) -> float:
    """SequenceMatcher ratio of :func:`compared_title` forms, in sorted order (ratio() is asymmetric)."""
    fa, fb = sorted((compared_title(a), compared_title(b)))
    return SequenceMatcher(None, fa, fb).ratio()


def _may_be_same_length(m: int, k: int) -> bool:
    """Whether difflib's ``real_quick_ratio`` of words of ``m`` and ``k`` characters reaches
    :data:`WORD_MATCH_RATIO`."""
    return 2.0 * min(m, k) / (m + k) >= WORD_MATCH_RATIO


@functools.lru_cache(maxsize=1024)
def _matchable_lengths(m: int) -> tuple[int, int]:
    """The interval ``(low, high)`` of lengths ``k`` that :func:`_may_be_same_length` accepts
    beside ``m`` (>= 1); its ends are found with the predicate itself."""
    r = WORD_MATCH_RATIO
    low = max(1, math.floor(m * r / (2 - r)) - 1)
    while not _may_be_same_length(m, low):
        low += 1
    high = math.ceil(m * (2 - r) / r) + 1
    while not _may_be_same_length(m, high):
        high -= 1
    return low, high


@functools.lru_cache(maxsize=TITLE_INDEX_CACHE)
def _word_index(title: str) -> tuple[tuple[str, ...], frozenset[str], tuple[tuple[int, tuple[str, ...]], ...]]:
    """``(words, set, by length)`` of a title's :func:`_title_words`, built once per title."""
    words = _title_words(title)
    by_length: dict[int, list[str]] = {}
    for v in words:
        by_length.setdefault(len(v), []).append(v)
    return words, frozenset(words), tuple((k, tuple(vs)) for k, vs in by_length.items())


def _one_sided(words: Sequence[str], other_set: Container[str],
               other_by_length: Sequence[tuple[int, Sequence[str]]], first: bool = False) -> list[str]:
    """The words of ``words`` (in order) the other title has neither equal nor nearly so; with
    ``first``, only the first. The typo test runs only on length-compatible words (same result)."""
    out: list[str] = []
    for w in words:
        if w in other_set:
            continue
        low, high = _matchable_lengths(len(w))
        for k, vs in other_by_length:
            if low <= k <= high and any(_same_word(w, v) for v in vs):
                break
        else:
            out.append(w)
            if first:
                break
    return out


def _is_sequel_word(word: str) -> bool:
    """A number other than a year 1900-2099 ("Llama 2"), or one of :data:`SEQUEL_WORDS`."""
    return (word.isdigit() and not (len(word) == 4 and word[:2] in ("19", "20"))) or word in SEQUEL_WORDS


@functools.lru_cache(maxsize=TITLE_PAIR_CACHE)
def _english_conflict(a: str, b: str) -> bool:
    """Whether two English titles conflict: each keeps a word the other lacks, the one-sided words
    hold a sequel marker, or abbreviations nest (:func:`_nested_abbreviations`)."""
    wa, set_a, by_length_a = _word_index(a)
    wb, set_b, by_length_b = _word_index(b)
    only_a = _one_sided(wa, set_b, by_length_b)
    if any(_is_sequel_word(w) for w in only_a) or _nested_abbreviations(a, b):
        return True
    # beside a one-sided word of a, any one-sided word of b conflicts; else only a sequel word
    candidates = wb if only_a else [w for w in wb if _is_sequel_word(w)]
    return bool(candidates) and bool(_one_sided(candidates, set_a, by_length_a, first=True))


@functools.lru_cache(maxsize=TITLE_PAIR_CACHE)
def _chinese_pair_similarity(a: str, b: str) -> float:
    """SequenceMatcher ratio of two folded Chinese titles, ``a <= b``, once per pair."""
    return SequenceMatcher(None, a, b).ratio()


@functools.cache
def _indel_ratio():
    """``rapidfuzz.process.cpdist`` with the ``fuzz.ratio`` scorer, or None without rapidfuzz."""
    try:
        from rapidfuzz import fuzz, process
    except ImportError:  # the bound falls back to the string lengths
        return None
    return functools.partial(process.cpdist, scorer=fuzz.ratio, dtype=np.float64, workers=1)


def _ratio_upper_bounds(a: list[str], b: list[str]) -> np.ndarray:
    """Upper bounds of ``SequenceMatcher(None, a[t], b[t]).ratio()``: float64 ``(len(a),)``.

    The ratio is ``2 M / (|a| + |b|)`` with ``M`` a common subsequence's length, so the normalized
    Indel similarity (rapidfuzz ``fuzz.ratio``; Hyyrö 2004) and ``real_quick_ratio`` bound it;
    ``1e-9`` covers the percentage's rounding.
    """
    la = np.fromiter(map(len, a), np.float64, len(a))
    lb = np.fromiter(map(len, b), np.float64, len(b))
    total = la + lb
    bound = np.divide(2.0 * np.minimum(la, lb), total, out=np.ones_like(total), where=total > 0)
    cpdist = _indel_ratio()
    if cpdist is not None and len(a):
        indel = cpdist(a, b) / 100.0 + 1e-9
        bound = np.where((la > 0) & (lb > 0), np.minimum(bound, indel), bound)
    return bound
