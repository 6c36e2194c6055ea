"""String similarity of paper titles, the title half of a pair's score (:mod:`pipeline.dedup.score`).

English titles: the :class:`difflib.SequenceMatcher` ratio (``cydifflib``: the same algorithm
compiled, equal ratios) of the folded titles, capped when the words conflict (a substituted
word, a sequel marker: :func:`english_title_similarity`); Chinese titles: the ratio of the
folded titles. :func:`_ratio_upper_bounds` bounds a ratio cheaply (rapidfuzz's Indel
similarity) so that pairs far below the threshold are never compared exactly.
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

#: Entries of the string-pair caches of the title similarities (about 200 bytes each).
TITLE_PAIR_CACHE = 1 << 16

#: Entries of the per-title word index of the conflict test (:func:`_word_index`; ~1.3 KB each).
TITLE_INDEX_CACHE = 1 << 12


#: A paper's short name, as articles write it alone or before its title's colon ("XYZ",
#: "Self-XYZ", "XYZ 3D", "Adaptive Batch Calibration"): at most this many words and characters.
NAME_MAX_WORDS = 3
NAME_MAX_CHARS = 30
#: Shortest folded short name (a single letter names nothing).
MIN_NAME_CHARS = 2

#: Title similarity of a mention titled only by a paper's short name and a full title that opens
#: with that name, or with words whose initials spell it ("ABC" and "Adaptive Batch Calibration:
#: …"): the name alone does not tell two papers of one name apart, so authors, venue and year
#: still count.
#: Calibrated on the development split of the real-world corpus (bench/README.md, "Thresholds").
ALIAS_SIMILARITY = 0.7

_NAME_PART = re.compile(r"^\s*(?P<name>[^:：]+?)\s*[:：]\s*\S")


def _is_name(s: str) -> bool:
    words = s.split()
    return 0 < len(words) <= NAME_MAX_WORDS and len(s) <= NAME_MAX_CHARS and _CJK.search(s) is None


@functools.lru_cache(maxsize=65536)
def name_keys(title: str) -> tuple[str, str, bool]:
    """``(name, initials, bare)`` of an English title: ``name`` the folded short name
    (:func:`pipeline.fields.fold_title`) when the whole title is one (``bare``) or opens it
    before a colon, else ``""`` (a function word names nothing); ``initials`` the lower-cased
    initials of a name of three or more capitalised words of two letters or more (``abc`` of "Adaptive Batch Calibration: …"), else ``""``. A bare name equal to
    another title's name or initials is an alias of that title (:data:`ALIAS_SIMILARITY`)."""
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
    """A folded short name of :data:`MIN_NAME_CHARS` or more that is no English function word
    ("the", "on"): those open titles without naming a paper."""
    from ..yake_port import EN_STOP_WORDS

    return len(name) >= MIN_NAME_CHARS and name not in EN_STOP_WORDS


def _titles(row: dict) -> tuple[str | None, str | None]:
    """``(English title, Chinese title)`` of a section; a ``title`` holding Chinese characters
    (a translated title filed as the title) counts as Chinese."""
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


#: Most abbreviations a title has written out (:func:`_expanded_words`); a title with more keeps
#: them as written. A real title has a few ("QA with LLMs via RL"); written out, one is up to 7
#: times longer, and difflib's ratio costs the product of the two lengths (bench/README.md,
#: "Thresholds").
MAX_EXPANDED_ABBREVIATIONS = 4


@functools.lru_cache(maxsize=65536)
def _expanded_words(title: str) -> str:
    """:func:`pipeline.fields.fold_title_words` of an English title with the abbreviations of
    ``pipeline/data/title_abbreviations.txt`` written out ("llms" -> "large language models"),
    when it has at most :data:`MAX_EXPANDED_ABBREVIATIONS` of them (else as written)."""
    pattern, table = _abbreviations()
    words = fold_title_words(title)
    expanded, n = pattern.subn(lambda m: table[m.group(0)], words, count=MAX_EXPANDED_ABBREVIATIONS + 1)
    return words if n > MAX_EXPANDED_ABBREVIATIONS else expanded


@functools.lru_cache(maxsize=TITLE_INDEX_CACHE)
def _written_abbreviations(title: str) -> frozenset[str]:
    """The expansions of the abbreviations an English title writes (not its words written out),
    each in the singular (plural ``s`` dropped as in :func:`_title_words`): "LLMs and RL" ->
    {"large language model", "reinforcement learning"}."""
    pattern, table = _abbreviations()
    return frozenset(" ".join(map(_singular, table[m.group(0)].split()))
                     for m in pattern.finditer(fold_title_words(title)))


def _nested_abbreviations(a: str, b: str) -> bool:
    """Whether each title writes an abbreviation the other does not, one's expansion inside the
    other's ("LMs" / "LLMs", "LLMs" / "MLLMs"): two terms, a substituted word, though written out
    one title only lacks a word of the other ("language model" / "large language model")."""
    only_a = _written_abbreviations(a) - _written_abbreviations(b)
    only_b = _written_abbreviations(b) - _written_abbreviations(a)
    return any(f" {x} " in f" {y} " or f" {y} " in f" {x} " for x in only_a for y in only_b)


@functools.lru_cache(maxsize=65536)
def compared_title(title: str) -> str:
    """The form in which English titles are compared for similarity: :func:`_expanded_words`
    folded as :func:`pipeline.fields.fold_title` (the exact key stays the plain fold)."""
    return fold_title(_expanded_words(title))


@functools.lru_cache(maxsize=65536)
def _title_words(title: str) -> tuple[str, ...]:
    """Words of an English title as compared (:func:`_expanded_words`), split at
    non-alphanumerics, plural ``s`` dropped."""
    return tuple(map(_singular, _WORD.findall(_expanded_words(title))))


def _singular(word: str) -> str:
    """A title word without a plural ``s`` (``models`` -> ``model``; not ``loss``, ``gas``)."""
    return word[:-1] if len(word) > 3 and word.endswith("s") and not word.endswith("ss") else word


@functools.lru_cache(maxsize=65536)
def _same_word(w: str, v: str) -> bool:
    """Whether two title words are the same word up to a typo (ratio >= WORD_MATCH_RATIO).
    difflib's ``real_quick_ratio`` and ``quick_ratio`` are upper bounds of ``ratio`` (difflib
    docs), so most pairs are rejected without the full comparison; the result is the same. Two
    different numbers are never the same word ("333"/"3333": a typo of a number is another number)."""
    if w == v:
        return True
    if w.isdigit() and v.isdigit():
        return False
    sm = SequenceMatcher(None, w, v)
    return (sm.real_quick_ratio() >= WORD_MATCH_RATIO and sm.quick_ratio() >= WORD_MATCH_RATIO
            and sm.ratio() >= WORD_MATCH_RATIO)


def english_title_similarity(a: str, b: str) -> float:
    """Similarity of two English titles in [0, 1], symmetric.

    The :class:`difflib.SequenceMatcher` ratio of the folded titles
    (:func:`pipeline.fields.fold_title`), capped at :data:`TITLE_CONFLICT_SIMILARITY` when the
    titles conflict: after pairing equal or near-equal words (ratio >= :data:`WORD_MATCH_RATIO`:
    typos), each keeps a word of its own (a substitution), or the one-sided words include a
    sequel marker (:func:`_is_sequel_word`: a number other than a year, or one of
    :data:`SEQUEL_WORDS`). A title that only lacks words of the other is no conflict.
    """
    ratio = _english_ratio(a, b)
    if ratio > TITLE_CONFLICT_SIMILARITY and _english_conflict(a, b):
        return TITLE_CONFLICT_SIMILARITY
    return ratio


def same_authors_title_similarity(a: str, b: str) -> float:
    """:func:`english_title_similarity` of two titles whose mentions name the same authors: a
    word substituted on each side is then a typo or a rewording ("Learned"/"Learning",
    "Sync"/"Sink"), so only a sequel marker caps the ratio (a sequel keeps its authors)."""
    ratio = _english_ratio(a, b)
    if ratio > TITLE_CONFLICT_SIMILARITY and _sequel_conflict(a, b):
        return TITLE_CONFLICT_SIMILARITY
    return ratio


@functools.lru_cache(maxsize=TITLE_PAIR_CACHE)
def _sequel_conflict(a: str, b: str) -> bool:
    """Whether the words one title has and the other lacks hold a sequel marker, or each holds a
    number (two different years: "… 2019" and "… 2020" are two editions)."""
    wa, set_a, by_length_a = _word_index(a)
    wb, set_b, by_length_b = _word_index(b)
    only_a, only_b = _one_sided(wa, set_b, by_length_b), _one_sided(wb, set_a, by_length_a)
    return (any(map(_is_sequel_word, only_a)) or any(map(_is_sequel_word, only_b))
            or (any(w.isdigit() for w in only_a) and any(w.isdigit() for w in only_b)))


@functools.lru_cache(maxsize=TITLE_PAIR_CACHE)
def _english_ratio(a: str, b: str) -> float:
    """SequenceMatcher ratio of the titles as compared (:func:`compared_title`), in sorted order
    (ratio() is not symmetric)."""
    fa, fb = sorted((compared_title(a), compared_title(b)))
    return SequenceMatcher(None, fa, fb).ratio()


def _may_be_same_length(m: int, k: int) -> bool:
    """difflib's ``real_quick_ratio`` of two words of ``m`` and ``k`` characters (``2 min(m, k) /
    (m + k)``, an upper bound of their ratio) reaches :data:`WORD_MATCH_RATIO`: the cheap first
    test of :func:`_same_word`, on the lengths alone."""
    return 2.0 * min(m, k) / (m + k) >= WORD_MATCH_RATIO


@functools.lru_cache(maxsize=1024)
def _matchable_lengths(m: int) -> tuple[int, int]:
    """The word lengths ``k`` that :func:`_may_be_same_length` accepts beside ``m`` (>= 1), as
    the interval ``(low, high)``: ``2 min(m, k) / (m + k)`` rises with ``k`` up to ``m`` and falls
    after it, so they are the lengths from about ``m R / (2 - R)`` to ``m (2 - R) / R`` (``R`` =
    :data:`WORD_MATCH_RATIO`); the ends are found with the predicate itself, so it decides them."""
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
    """:func:`_title_words` of an English title, as a set, and grouped by length (``(length,
    words)`` in order of first appearance): what :func:`_one_sided` needs of the other title,
    built once per title rather than once per pair."""
    words = _title_words(title)
    by_length: dict[int, list[str]] = {}
    for v in words:
        by_length.setdefault(len(v), []).append(v)
    return words, frozenset(words), tuple((k, tuple(vs)) for k, vs in by_length.items())


def _one_sided(words: Sequence[str], other_set: Container[str],
               other_by_length: Sequence[tuple[int, Sequence[str]]], first: bool = False) -> list[str]:
    """The words of ``words`` (in order, repeats kept) that the other title has neither equal
    (``other_set``) nor nearly so (:func:`_same_word`); with ``first``, only the first of them
    (the search stops there). The typo test only runs on the other title's words
    (``other_by_length``: :func:`_word_index`) whose length can reach :data:`WORD_MATCH_RATIO`
    (:func:`_matchable_lengths`): the same words as testing every pair."""
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
    """A word that tells a sequel or a variant apart: a number ("Llama 2", "Part 101"; a year,
    four digits from 1900 to 2099, is not one: a mention may add its year to a title) or one of
    :data:`SEQUEL_WORDS`."""
    return (word.isdigit() and not (len(word) == 4 and word[:2] in ("19", "20"))) or word in SEQUEL_WORDS


@functools.lru_cache(maxsize=TITLE_PAIR_CACHE)
def _english_conflict(a: str, b: str) -> bool:
    """Whether two English titles conflict (:func:`english_title_similarity`): each keeps a
    word the other lacks, the one-sided words hold a sequel marker, or each writes an
    abbreviation nested in the other's (:func:`_nested_abbreviations`). Equal words are paired by
    set lookup first; the typo test (:func:`_same_word`) only runs on length-compatible words."""
    wa, set_a, by_length_a = _word_index(a)
    wb, set_b, by_length_b = _word_index(b)
    only_a = _one_sided(wa, set_b, by_length_b)
    if any(_is_sequel_word(w) for w in only_a) or _nested_abbreviations(a, b):
        return True
    # b's side decides: beside a one-sided word of a, any one-sided word of b is a conflict;
    # without one, only a one-sided sequel word of b is. The search stops at the first.
    candidates = wb if only_a else [w for w in wb if _is_sequel_word(w)]
    return bool(candidates) and bool(_one_sided(candidates, set_a, by_length_a, first=True))


@functools.lru_cache(maxsize=TITLE_PAIR_CACHE)
def _chinese_pair_similarity(a: str, b: str) -> float:
    """SequenceMatcher ratio of two folded Chinese titles, ``a <= b`` (ratio() is not symmetric:
    the order is fixed), computed once per pair of titles."""
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

    The ratio is ``2 M / (|a| + |b|)`` with ``M`` the characters of difflib's matching blocks,
    which are increasing in both strings, i.e. a common subsequence, so ``M`` is at most the
    longest common subsequence: the normalized Indel similarity ``2 LCS / (|a| + |b|)``
    (rapidfuzz ``fuzz.ratio`` / 100, a bit-parallel C implementation, Hyyrö 2004) and
    ``2 min(|a|, |b|) / (|a| + |b|)`` (difflib's ``real_quick_ratio``) bound it, as does any
    junk heuristic (it only removes matches). Exact, so a pair pruned by the bound is below the
    ratio's threshold too; ``1e-9`` covers the float rounding of the percentage.
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
