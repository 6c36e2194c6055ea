"""YAKE keyword scores of English text (Campos et al., Information Sciences 509, 2020) as the
``yake`` package 0.7 computes them, with its tokenizer, tags and similarity but plain dicts
and lists instead of its per-term objects and networkx graph (:func:`yake_extract`);
tests/test_nlp.py checks it against the package. Why a port: bench/README.md."""

from __future__ import annotations

import functools
import math
import string
from typing import NamedTuple

import numpy

from . import _spacy_without_torch  # noqa: F401 - before spaCy: thinc without torch (see there)

# isort: split
from spacy.lang.en.stop_words import STOP_WORDS as _SPACY_EN_STOP_WORDS

#: English stop words: spaCy's list plus topic-less write-up words and their commonest finite
#: verbs; YAKE never starts or ends a candidate with one.
EN_STOP_WORDS = frozenset(_SPACY_EN_STOP_WORDS) | frozenset(
    "paper papers study studies work works author authors propose proposes proposed show shows "
    "showed shown method methods result results approach approaches new using based "
    "researchers researcher colleagues team teams unlike "
    # finite verbs of write-ups (a phrase around one is a clause)
    "uses makes lets gives gave brings finds found turns grows happens replaces combines learns "
    "improves improve allows enables achieves introduces adopts adopted reaches reaching beats "
    "prefers prefer takes loses generates need needs let".split()
)


#: YAKE settings of the English keywords: n-grams of up to 3 words, a co-occurrence window of
#: 1 word, near-duplicates (``seqm`` similarity above 0.9) removed.
YAKE_NGRAM = 3
YAKE_WINDOW = 1
YAKE_DEDUP_LIM = 0.9
_YAKE_EXCLUDE = frozenset(string.punctuation)
_YAKE_DISCARD = frozenset("ud")  # YAKE's tags of digits and unusual tokens: no co-occurrence


_YAKE_PUNCT_DELETE = str.maketrans("", "", string.punctuation)


@functools.lru_cache(maxsize=65536)
def _yake_tag(word: str, inside: bool) -> str:
    """YAKE's tag of a word (``yake.data.utils.get_tag``), first in its sentence or not."""
    from yake.data.utils import get_tag

    return get_tag(word, int(inside), _YAKE_EXCLUDE)


def _yake_similar(a: str, b: str) -> bool:
    """Whether two YAKE candidates (lower case) are near-duplicates: the ``yake`` package's
    ``seqm`` pre-filter and similarity (``KeywordExtractor._aggressive_pre_filter`` and
    ``_ultra_fast_similarity``) above :data:`YAKE_DEDUP_LIM`."""
    la, lb = len(a), len(b)
    m = max(la, lb)
    if a != b:
        if abs(la - lb) > m * 0.6:
            return False
        if m > 3 and (a[0] != b[0] or a[-1] != b[-1]
                      or (min(la, lb) >= 3 and a[:2].lower() != b[:2].lower())):
            return False
        if abs(a.count(" ") - b.count(" ")) > 1:
            return False
    return _yake_similarity()(a, b) > YAKE_DEDUP_LIM


def _yake_short(term: str) -> bool:
    """Whether ``term`` has under 3 characters besides ASCII punctuation (a YAKE stop term)."""
    if term.isalnum():  # no punctuation to delete
        return len(term) < 3
    return len(term.translate(_YAKE_PUNCT_DELETE)) < 3


@functools.lru_cache(maxsize=65536)
def _yake_term(low: str) -> tuple[str, bool]:
    """A word's YAKE term (``low`` less a final ``s`` when over 3 characters) and whether it is a
    stop term."""
    unique = low[:-1] if low.endswith("s") and len(low) > 3 else low
    return unique, low in EN_STOP_WORDS or unique in EN_STOP_WORDS or _yake_short(unique)


@functools.cache
def _yake_pre_filter():
    """``yake.data.utils.pre_filter``, imported once."""
    from yake.data.utils import pre_filter

    return pre_filter


@functools.cache
def _yake_similarity():
    from yake import KeywordExtractor

    return KeywordExtractor._ultra_fast_similarity


def yake_extract(text: str, top: int) -> list[tuple[str, float]]:
    """YAKE keywords of ``text``: the same ``(keyword, score)`` list, best (lowest) score first,
    as ``yake.KeywordExtractor(lan="en", n=3, dedup_lim=0.9, dedup_func="seqm", window_size=1,
    top=top, stopwords=EN_STOP_WORDS, lemmatize=False).extract_keywords(text)`` (yake 0.7;
    tests/test_nlp.py checks both agree).

    Method: Campos et al. 2020 as the package implements it: term scores ``H = WPos * WRel /
    (WCase + WFreq / WRel + WSpread / WRel)``, candidate scores ``prod(H) / ((sum(H) + 1) *
    TF)``, candidates starting or ending with a stop term or holding a digit/unusual token in
    every occurrence dropped, then the near-duplicate filter (:func:`_yake_similar`) to ``top``.
    """
    if not text:
        return []
    sentences = _yake_sentences(_yake_pre_filter()(text.replace("\n", " ")))
    counts = _count(sentences)
    h = _term_scores(counts, len(sentences))
    return [] if h is None else _ranked(counts, h, top)


class _Counts(NamedTuple):
    """What one pass over a text's words gathers (term ids index the lists)."""

    tf: list[float]  # occurrences of each term
    tf_a: list[float]  # ... tagged acronym
    tf_n: list[float]  # ... tagged capitalised inside a sentence
    occurs: list[list[int]]  # sentence ids (distinct, ascending) of each term
    is_stop: list[bool]
    edges: dict[tuple[int, int], float]  # co-occurrences (term before, term after)
    cands: dict[str, list]  # unique kw -> [kw, valid tags seen, term ids, tf]


def _count(sentences: list[tuple[tuple[str, str | None, str], ...]]) -> _Counts:
    """Terms, co-occurrences and candidates of YAKE's tokenized sentences (see
    :func:`yake_extract`)."""
    discard = _YAKE_DISCARD
    index: dict[str, int] = {}  # term -> id
    word_term: dict[str, int] = {}  # lower-case word -> term id
    tf: list[float] = []
    tf_a: list[float] = []
    tf_n: list[float] = []
    occurs: list[list[int]] = []  # sentence ids (distinct, ascending) of each term
    is_stop: list[bool] = []
    edges: dict[tuple[int, int], float] = {}
    cands: dict[str, list] = {}  # unique kw -> [kw, valid tags seen, term ids, tf]
    # one pass: candidates (n <= 3) and the window (1) end at the current word; a candidate's key
    # is its words' lower cases joined by a space
    for sid, sentence in enumerate(sentences):
        prev = prev2 = None  # (ok, word, term id, lower case) of the block's last two words
        for word, tag, low in sentence:
            if tag is None:  # punctuation only: the block ends
                prev = prev2 = None
                continue
            t = word_term.get(low)
            if t is None:
                unique, stop_term = _yake_term(low)
                t = index.get(unique)
                if t is None:
                    t = index[unique] = len(tf)
                    is_stop.append(stop_term)
                    tf.append(0.0)
                    tf_a.append(0.0)
                    tf_n.append(0.0)
                    occurs.append([])
                word_term[low] = t
            occ = occurs[t]
            if not occ or occ[-1] != sid:
                occ.append(sid)
            tf[t] += 1.0
            if tag == "a":
                tf_a[t] += 1.0
            elif tag == "n":
                tf_n[t] += 1.0
            # candidates ending at this word (1-3 words); ok: no digit or unusual token; one with
            # a stop term at either end is never scored, so not kept
            ok = tag not in discard
            last_ok = not is_stop[t]
            if last_ok:
                c = cands.get(low)
                if c is None:
                    cands[low] = [word, ok, (t,), 1.0]
                else:
                    c[1] = c[1] or ok
                    c[3] += 1.0
            if prev is not None:
                ok1, word1, t1, low1 = prev
                ok1 = ok and ok1
                if ok1:
                    edges[(t1, t)] = edges.get((t1, t), 0.0) + 1.0
                if last_ok and not is_stop[t1]:
                    key = f"{low1} {low}"
                    c = cands.get(key)
                    if c is None:
                        cands[key] = [f"{word1} {word}", ok1, (t1, t), 1.0]
                    else:
                        c[1] = c[1] or ok1
                        c[3] += 1.0
                if prev2 is not None and last_ok and not is_stop[prev2[2]]:
                    ok2, word2, t2, low2 = prev2
                    ok2 = ok1 and ok2
                    key = f"{low2} {low1} {low}"
                    c = cands.get(key)
                    if c is None:
                        cands[key] = [f"{word2} {word1} {word}", ok2, (t2, t1, t), 1.0]
                    else:
                        c[1] = c[1] or ok2
                        c[3] += 1.0
            prev2, prev = prev, (ok, word, t, low)
    return _Counts(tf, tf_a, tf_n, occurs, is_stop, edges, cands)


def _term_scores(counts: _Counts, n_sent: int) -> list[float] | None:
    """YAKE's score ``H`` of each term (lower is better), or None when every term is a stop term."""
    tf, tf_a, tf_n, occurs, is_stop, edges, _ = counts
    valid_tfs = [f for f, s in zip(tf, is_stop, strict=True) if not s]
    if not valid_tfs:
        return None
    avg_tf, std_tf = _count_mean_std(valid_tfs)
    max_tf = max(tf)
    n_terms = len(tf)
    wdl, wil, wdr, wir = [0] * n_terms, [0.0] * n_terms, [0] * n_terms, [0.0] * n_terms
    for (a, b), w in edges.items():
        wdr[a] += 1
        wir[a] += w
        wdl[b] += 1
        wil[b] += w
    h: list[float] = []
    log = math.log
    freq_norm = avg_tf + std_tf
    # the same float operations per term as YAKE's, logarithms looked up once per section
    log_tf: dict[float, float] = {}
    log_pos: dict[float, float] = {}
    for f, dl, il, dr, ir, occ, ca, cn in zip(tf, wdl, wil, wdr, wir, occurs, tf_a, tf_n, strict=True):
        pwl = 0 if il == 0 else dl / il
        pwr = 0 if ir == 0 else dr / ir
        r = f / max_tf
        wrel = (0.5 + (pwl * r)) + (0.5 + (pwr * r))
        wfreq = f / freq_norm
        wspread = len(occ) / n_sent
        lf = log_tf.get(f)
        if lf is None:
            lf = log_tf[f] = log(f)
        wcase = (ca if ca >= cn else cn) / (1.0 + lf)  # max(ca, cn)
        mid = len(occ) // 2
        # numpy.median of sorted ints (the sum of the two middle ones is exact: numpy's float)
        med = occ[mid] if len(occ) % 2 else (occ[mid - 1] + occ[mid]) / 2
        wpos = log_pos.get(med)
        if wpos is None:
            wpos = log_pos[med] = log(log(3.0 + med))
        h.append((wpos * wrel) / (wcase + (wfreq / wrel) + (wspread / wrel)))
    return h


def _ranked(counts: _Counts, h: list[float], top: int) -> list[tuple[str, float]]:
    """The ``top`` best candidates with their scores, near-duplicates dropped (see :func:`yake_extract`)."""
    tf, _, _, _, is_stop, edges, cands = counts
    scored: list[tuple[float, str, str]] = []
    for key, (kw, ok, terms, ctf) in cands.items():
        if not ok:  # (candidates with a stop term at either end were never kept)
            continue
        # YAKE's sum and product over the words per length; only a trigram's middle word can be a stop term
        if len(terms) == 1:
            sum_h = prod_h = h[terms[0]]
        elif len(terms) == 2:
            a, b = terms
            sum_h, prod_h = h[a] + h[b], h[a] * h[b]
        else:
            a, m, b = terms
            if is_stop[m]:
                prob = (edges.get((a, m), 0.0) / tf[a]) * (edges.get((m, b), 0.0) / tf[b])
                sum_h, prod_h = h[a] - (1 - prob) + h[b], h[a] * (1 + (1 - prob)) * h[b]
            else:
                sum_h, prod_h = h[a] + h[m] + h[b], h[a] * h[m] * h[b]
        den = (sum_h + 1) * ctf
        scored.append((prod_h / den if den else math.inf, key, kw))
    scored.sort(key=lambda s: s[0])  # stable: ties keep the order of first occurrence
    out: list[tuple[str, float]] = []
    # near-duplicates share first and last character, or are both at most 3 characters long
    by_ends: dict[tuple[str, str], list[str]] = {}
    short: list[str] = []
    for score, key, kw in scored:
        ends = (key[0], key[-1])
        near = by_ends.get(ends)
        if near is None:  # the first kept key with these ends (most): nothing to compare
            if len(key) <= 3 and short and any(_yake_similar(key, k) for k in short):
                continue
            by_ends[ends] = [key]
        else:
            if any(_yake_similar(key, k) for k in near) or (
                    len(key) <= 3 and any(_yake_similar(key, k) for k in short)):
                continue
            near.append(key)
        if len(key) <= 3:
            short.append(key)
        out.append((kw, float(score)))
        if len(out) == top:
            break
    return out




def _count_mean_std(counts: list[float]) -> tuple[float, float]:
    """``(mean, standard deviation)`` of a non-empty list of whole-number floats, the same floats
    as ``numpy.array(counts).mean()`` and ``.std()`` (tests/test_nlp.py)."""
    mean = sum(counts) / len(counts)
    dev = numpy.array(counts) - mean
    return mean, math.sqrt(float(numpy.add.reduce(dev * dev)) / len(counts))


@functools.cache
def _digits_only():
    """segtok's ``^\\d+$`` alternative of ``ABBREVIATIONS`` as ``regex`` reads it (Unicode
    digits; ``$`` also before a final newline), for ``match``."""
    import regex

    return regex.compile(r"\d+$", regex.UNICODE)


@functools.cache
def _upper_end():
    """An upper-case letter at the end, which segtok's ``MIDDLE_INITIAL_END`` needs (a cheap test)."""
    import regex

    return regex.compile(r"\p{Lu}$", regex.UNICODE)


@functools.cache
def _initial_end():
    """The initial segtok's ``ABBREVIATIONS`` alternative 4 needs at the end; without it only a
    known abbreviation can match, and :func:`_split_multi` searches a shorter tail."""
    import regex

    return regex.compile(r"[\p{Lu}\p{Lt}]\p{Lm}?$", regex.UNICODE)


#: Most distinct sentences whose YAKE tokens are kept (:func:`_yake_sentence`).
YAKE_SENTENCE_CACHE = 1 << 13
#: ...of sentences up to this many characters (a longer one is tokenized each time).
YAKE_CACHED_SENTENCE_CHARS = 512


#: Longest piece of a sentence segtok tokenizes at once (its ``word_tokenizer`` is quadratic in
#: tokens ending in a comma; bench/README.md); a longer one is cut at white space.
YAKE_MAX_SENTENCE_CHARS = 4096


def _yake_sentences(text: str) -> list[tuple[tuple[str, str | None, str], ...]]:
    """``yake.data.utils.tokenize_sentences(text)`` (yake 0.7.3) with :func:`_split_multi` and
    :func:`_yake_sentence`, each token with its YAKE tag and lower case; tests/test_nlp.py checks
    the tokens agree (a sentence over :data:`YAKE_MAX_SENTENCE_CHARS` is tokenized piece by
    piece, :func:`_long_sentence`)."""
    return [(_yake_sentence if len(s) <= YAKE_CACHED_SENTENCE_CHARS
             else _yake_sentence.__wrapped__ if len(s) <= YAKE_MAX_SENTENCE_CHARS else _long_sentence)(s)
            for s in _split_multi(text) if len(s.strip()) > 0]


def _long_sentence(sentence: str) -> tuple[tuple[str, str | None, str], ...]:
    """:func:`_yake_sentence` of a sentence over :data:`YAKE_MAX_SENTENCE_CHARS`, in pieces cut at
    white space (else at the limit), later pieces tagged as inside a sentence."""
    tokens: list[tuple[str, str | None, str]] = []
    start = 0
    while start < len(sentence):
        end = min(len(sentence), start + YAKE_MAX_SENTENCE_CHARS)
        if end < len(sentence):
            cut = max(sentence.rfind(" ", start + 1, end), sentence.rfind("\n", start + 1, end))
            end = cut if cut > start else end
        piece = _yake_sentence.__wrapped__(sentence[start:end])
        if tokens:  # (the first token of a later piece is not the sentence's first)
            piece = tuple((w, _yake_tag(w, True) if tag is not None else None, low) for w, tag, low in piece)
        tokens += piece
        start = end
    return tuple(tokens)


#: Longest match of segtok 1.5.11's end-anchored ``ABBREVIATIONS`` not at the string's start,
#: with room to spare (a prefix of at most 10 characters and initials of at most 6).
_ABBREVIATION_TAIL = 32
#: The same for a span not ending in an upper-case letter: only a known abbreviation can match.
_KNOWN_ABBREVIATION_TAIL = 10


def _split_multi(text: str) -> list[str]:
    """segtok's ``split_multi(text)`` (segtok 1.5.11, ``segtok/segmenter.py``) as a list, with its
    own steps and patterns, except that the abbreviation test searches only the last
    :data:`_ABBREVIATION_TAIL` characters of a longer span (no match can start earlier), plus
    ``^\\d+$``, and of segtok's two-pattern tests the rarely matching anchored one goes first.
    tests/test_nlp.py checks the result against segtok's on fixtures and generated text."""
    import segtok.segmenter as sg

    spans = sg.MAY_CROSS_ONE_LINE.split(text)

    def abbreviation(span: str) -> bool:
        n = len(span)
        if n <= _ABBREVIATION_TAIL:
            return sg.ABBREVIATIONS.search(span) is not None
        tail = _ABBREVIATION_TAIL if _initial_end().search(span, n - 3) else _KNOWN_ABBREVIATION_TAIL
        return (sg.ABBREVIATIONS.search(span, n - tail) is not None
                or _digits_only().match(span) is not None)

    joined: list[str] = []  # segtok's _abbreviation_joiner
    segment, total = None, len(spans)
    for pos in range(total):
        if pos % 2:  # odd: a (potential) sentence terminal; even: a segment
            prev_s, marker = spans[pos - 1], spans[pos]
            next_s = spans[pos + 1] if pos + 1 < total else None
            if prev_s[-1:].isspace() or (marker[0] == "." and abbreviation(prev_s)):
                continue  # join
            if marker[0] == "." and next_s and (
                    sg.LONE_WORD.match(next_s)
                    or (sg.MONTH.match(next_s) and sg.ENDS_IN_DATE_DIGITS.search(prev_s))
                    or (_upper_end().search(prev_s, max(0, len(prev_s) - 2)) is not None
                        and sg.UPPER_WORD_START.match(next_s) and sg.MIDDLE_INITIAL_END.search(prev_s))):
                continue  # join
            joined.append("".join(spans[segment : pos + 1]))
            segment = None
        elif segment is None:
            segment = pos
    if segment is not None:
        joined.append("".join(spans[segment:total]))

    out: list[str] = []  # segtok's _sentences (join_on_lowercase False, short length 55)
    short = sg.SHORT_SENTENCE_LENGTH
    last = None
    for current in joined:
        if last is None:
            last = current
            continue
        shorter = len(current) < short or len(last) < short
        if ((sg.LOWER_WORD.match(current) and sg.BEFORE_LOWER.match(last))
                or (shorter and sg._is_open(last) and (
                    sg._is_not_opened(current) or last.endswith(" et al. ")
                    or (sg.UPPER_CASE_END.search(last) and sg.UPPER_CASE_START.match(current))))
                or (shorter and sg._is_open(last, "[]") and (
                    sg._is_not_opened(current, "[]") or last.endswith(" et al. ")
                    or (sg.UPPER_CASE_END.search(last) and sg.UPPER_CASE_START.match(current))))
                or sg.CONTINUATIONS.match(current)):
            last = f"{last}{current}"
        else:
            out.append(last.strip())
            last = current
    if last is not None:
        out.append(last.strip())
    return out


@functools.lru_cache(maxsize=YAKE_SENTENCE_CACHE)
def _yake_sentence(sentence: str) -> tuple[tuple[str, str | None, str], ...]:
    """YAKE's tokens of one sentence as ``yake.data.utils.tokenize_sentences`` makes them, each
    ``(token, tag, lower case)``; tag ``None`` for punctuation only (it ends a co-occurrence block)."""
    from segtok.tokenizer import split_contractions, web_tokenizer

    tokens = [w for w in split_contractions(web_tokenizer(sentence))
              if not (w.startswith("'") and len(w) > 1) and len(w) > 0]
    return tuple((w, None, w) if not w.strip(string.punctuation) else (w, _yake_tag(w, pos > 0), w.lower())
                 for pos, w in enumerate(tokens))
