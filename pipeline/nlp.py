"""Language tools of the extract stage: jieba words of Chinese sections, spaCy tokens of English
ones, sentence spans (rules of :func:`pipeline.sentences.sentence_starts`) and award/venue/
metadata-key entities. Section keywords are in :mod:`pipeline.keywords`.

Chinese is cut by a private ``jieba.Tokenizer`` with the shipped ML-domain dictionary (jieba
README, "载入词典"; ``jieba.dt`` untouched), English by ``spacy.blank("en")``; a
:data:`TECH_TOKEN` stays one token in both. Entities come from :mod:`pipeline.fields`'s
character patterns, not tokens (jieba cuts a label differently by context).

All offsets are character offsets (Python ``str`` indices) into the text given.
"""

from __future__ import annotations

import bisect
import functools
import itertools
import operator
import re
from collections.abc import Sequence
from importlib import resources
from typing import TYPE_CHECKING, NamedTuple

import jieba

from . import _spacy_without_torch  # noqa: F401 - before spaCy: thinc without torch (see there)

# isort: split
from spacy.attrs import IDX, LENGTH

from .fields import (
    _AWARD_CUE,
    _AWARD_LABEL,
    _BULLET,
    _EMOJI_KEYS,
    _GENERIC_AWARD_LABEL,
    _KEY_LINE,
    award_label_at,
    find_venue_years,
    normalize_award,
    parse_key_value,
)
from .normalize import to_script
from .sentences import sentence_starts
from .textutil import HAN as _HAN
from .textutil import anchored_finditer

if TYPE_CHECKING:
    from spacy.language import Language

jieba.setLogLevel(60)  # jieba prints its dictionary loading to stderr at INFO

#: The ML-domain jieba user dictionary shipped with the package (``word freq tag`` lines).
USER_DICT = "ml_terms.txt"


class Entity(NamedTuple):
    """One entity found by :func:`_find_entities`: ``label`` (``"AWARD"``, ``"VENUE"``, ``"KEY"``),
    ``text[start:end]`` the mention ``text``, and ``value``: one of :data:`pipeline.fields.AWARDS`,
    the venue with its adjacent year (``"NeurIPS 2025"``), or one of :data:`pipeline.fields.KEYS`.
    """

    label: str
    start: int
    end: int
    text: str
    value: str


def _is_english(lang: str, text: str) -> bool:
    """True when ``lang`` (a BCP 47 tag as written by the normalize stage) selects the English
    tools: ``en``/``en-*``; ``zh-*`` and ``mixed`` select Chinese; any other tag (``und``, empty)
    selects English when ``text`` holds no Han character."""
    tag = (lang or "").strip().lower()
    if tag == "en" or tag.startswith("en-"):
        return True
    if tag.startswith("zh") or tag == "mixed":
        return False
    return not _HAN.search(text)


# --- User dictionary and pipelines ----------------------------------------------------------------


@functools.cache
def load_user_dict() -> tuple[tuple[str, int, str], ...]:
    """The shipped ML-domain user dictionary (``pipeline/data/ml_terms.txt``) as ``(word, freq,
    tag)`` entries in file order (zh-Hans term, jieba count, jieba POS tag).

    Raises:
        ValueError: a line does not have the ``word freq tag`` form.
    """
    text = resources.files(__package__).joinpath("data", USER_DICT).read_text(encoding="utf-8")
    out: list[tuple[str, int, str]] = []
    for n, line in enumerate(text.splitlines(), 1):
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        parts = line.split(" ")
        if len(parts) != 3 or not parts[1].isdigit():
            raise ValueError(f"{USER_DICT}:{n}: expected 'word freq tag', got {line!r}")
        out.append((parts[0], int(parts[1]), parts[2]))
    return tuple(out)


@functools.cache
def _jieba_tokenizer() -> jieba.Tokenizer:
    """A private jieba tokenizer: jieba's dictionary plus :func:`load_user_dict` (a user term keeps
    jieba's count when higher), built once per process."""
    tok = jieba.Tokenizer()
    tok.initialize()
    for word, freq, tag in load_user_dict():
        tok.add_word(word, max(freq, tok.FREQ.get(word) or 0), tag)
    return tok


#: Whether :func:`zh_words_and_spaces` guesses unknown words with jieba's HMM (jieba README,
#: "未登录词"): off, as the keywords drop non-dictionary words anyway.
JIEBA_HMM = False


#: How many distinct Han blocks (:data:`_JIEBA_PIECES`) the Chinese tokenizer keeps the words of (LRU).
JIEBA_BLOCK_CACHE = 1 << 16
#: ...of blocks up to this many characters.
JIEBA_CACHED_BLOCK_CHARS = 64

#: One piece of a text as jieba 0.42.1's ``Tokenizer.cut`` splits it: group 1 a block of
#: ``re_han_default`` (segmented with the dictionary), group 2 whitespace (``re_skip_default``),
#: group 3 other characters (yielded one by one).
_JIEBA_HAN_CLASS = jieba.re_han_default.pattern[2:-3]  # "([...]+)": the class's members
_JIEBA_PIECES = re.compile(rf"([{_JIEBA_HAN_CLASS}]+)|(\s+)|([^{_JIEBA_HAN_CLASS}\s]+)")


#: A technical token kept whole: letters and digits joined by hyphens or by dots between digits,
#: maybe ``%`` (``Llama-3.1-8B``, ``23.4%``); within one jieba block.
TECH_TOKEN = re.compile(
    r"(?<![A-Za-z0-9])[A-Za-z0-9]+(?:(?:-|(?<=[0-9])\.(?=[0-9]))[A-Za-z0-9]+)+(?:(?<=[0-9])%)?"
    r"|(?<![A-Za-z0-9.])[0-9]+%"
)


def cut_protected(tok: jieba.Tokenizer, text: str, hmm: bool = True) -> list[str]:
    """jieba's words of ``text`` (``tok.cut(text, HMM=hmm)``) with each :data:`TECH_TOKEN` one word."""
    if TECH_TOKEN.search(text) is None:
        return list(tok.cut(text, HMM=hmm))
    words: list[str] = []
    pos = 0
    for m in TECH_TOKEN.finditer(text):
        if m.start() > pos:
            words += tok.cut(text[pos : m.start()], HMM=hmm)
        words.append(m.group())
        pos = m.end()
    if pos < len(text):
        words += tok.cut(text[pos:], HMM=hmm)
    return words


def _cut_block(block: str) -> tuple[str, ...]:
    """jieba's words of one Han block (:func:`cut_protected`, HMM :data:`JIEBA_HMM`)."""
    return tuple(cut_protected(_jieba_tokenizer(), block, JIEBA_HMM))


_cached_cut_block = functools.lru_cache(maxsize=JIEBA_BLOCK_CACHE)(_cut_block)


def zh_words_and_spaces(text: str) -> tuple[list[str], list[bool]]:
    """jieba's words of ``text`` aligned as spaCy's ``get_words_and_spaces``: a single ``" "`` after
    a word sets its ``spaces`` entry, other whitespace runs are words; joined back they give ``text``."""
    words: list[str] = []
    spaced: list[int] = []  # the words followed by one " "
    for block, gap, chars in _JIEBA_PIECES.findall(text):
        if block:
            words += _cached_cut_block(block) if len(block) <= JIEBA_CACHED_BLOCK_CHARS else _cut_block(block)
        elif chars:
            words += chars  # one word per character
        else:
            if words and gap[0] == " ":
                spaced.append(len(words) - 1)
                gap = gap[1:]
                if not gap:
                    continue
            words.append(gap)
    spaces = [False] * len(words)
    for k in spaced:
        spaces[k] = True
    return words, spaces


#: :data:`TECH_TOKEN` as a whole string, for spaCy's ``Tokenizer.token_match``.
_TECH_TOKEN_WHOLE = re.compile(rf"(?:{TECH_TOKEN.pattern})")


@functools.cache
def en_nlp() -> Language:
    """``spacy.blank("en")`` whose ``token_match`` keeps a :data:`TECH_TOKEN` whole, built once."""
    import spacy

    nlp = spacy.blank("en")
    nlp.tokenizer.token_match = _TECH_TOKEN_WHOLE.fullmatch  # spaCy's hook for tokens kept whole
    return nlp


# --- Entities -------------------------------------------------------------------------------------


#: Markup around a metadata key that is not part of it (``**作者**：``, ``【摘要】：``).
_KEY_DECORATION = "*_【】[] \t"


def _key_entities(text: str) -> list[Entity]:
    """``KEY`` entities: an emoji key of :data:`pipeline.fields._EMOJI_KEYS` or a ``key：`` that
    :func:`pipeline.fields.parse_key_value` knows, at a line start after bullets."""
    out: list[Entity] = []
    pos = 0
    for line in text.split("\n"):
        lead = _BULLET.match(line).end()  # type: ignore[union-attr]  # it matches "" at least
        s = line[lead:]
        base = pos + lead
        if s and s[0] in _EMOJI_KEYS:
            end = 1 + (1 if s[1:2] == "\ufe0f" else 0)
            out.append(Entity("KEY", base, base + end, s[:end], _EMOJI_KEYS[s[0]]))
            rest = s[end:]
            skip = len(rest) - len(rest.lstrip())
            s, base = rest[skip:], base + end + skip
        m = _KEY_LINE.match(s) if ":" in s or "：" in s else None  # the substring tests are cheaper
        if m:
            value = m.group("value").strip()
            parsed = parse_key_value(s) if value else parse_key_value(f"{m.group('key')}：x")
            if parsed is not None:
                key, at = m.group("key"), base + m.start("key")
                start = at + len(key) - len(key.lstrip(_KEY_DECORATION))
                end = at + len(key.rstrip(_KEY_DECORATION))
                out.append(Entity("KEY", start, end, text[start:end], parsed[0]))
        pos += len(line) + 1
    return out


#: What every match of :data:`pipeline.fields._GENERIC_AWARD_LABEL` holds (within one line).
_GENERIC_AWARD_HEAD = re.compile("Award|Prize|奖|獎")

#: The words every match of :data:`pipeline.fields._AWARD_LABEL` starts with, lower-cased (keep in step).
_AWARD_LABEL_HEADS = ("最佳", "杰出", "傑出", "优秀", "優秀", "时间", "時間", "荣誉", "榮譽",
                      "best", "outstanding", "distinguished", "test", "honorable", "honourable", "runner")


def _award_label_matches(text: str) -> list[re.Match[str]]:
    """``list(pipeline.fields._AWARD_LABEL.finditer(text))``, tried only where one of
    :data:`_AWARD_LABEL_HEADS` starts (:func:`pipeline.textutil.anchored_finditer`)."""
    return list(anchored_finditer(_AWARD_LABEL, text, _AWARD_LABEL_HEADS))


#: Bounds of the Han run before 奖/獎 in :data:`pipeline.fields._GENERIC_AWARD_LABEL`'s
#: Chinese alternative (``[\u4e00-\u9fff]{2,6}(?:奖|獎)``).
_GENERIC_ZH_MAX, _GENERIC_ZH_MIN = 6, 2


def _generic_award_matches(text: str) -> list[re.Match[str]]:
    r"""``list(pipeline.fields._GENERIC_AWARD_LABEL.finditer(text))``, scanning only lines holding
    a :data:`_GENERIC_AWARD_HEAD` (only 2 to 6 characters before each 奖/獎 when no Award/Prize)."""
    out: list[re.Match[str]] = []
    heads = [m.start() for m in _GENERIC_AWARD_HEAD.finditer(text)]
    k, n = 0, len(heads)
    while k < n:
        line_start = text.rfind("\n", 0, heads[k]) + 1
        line_end = text.find("\n", heads[k])
        line_end = len(text) if line_end < 0 else line_end
        first = k
        while k < n and heads[k] < line_end:
            k += 1
        if any(text[j] not in "奖獎" for j in heads[first:k]):  # an Award or a Prize
            out += _GENERIC_AWARD_LABEL.finditer(text, line_start, line_end)
            continue
        tried = line_start  # every start before this was tried or is inside a match
        for j in heads[first:k]:
            for p in range(max(tried, j - _GENERIC_ZH_MAX), j - _GENERIC_ZH_MIN + 1):
                if p < tried:
                    continue  # inside the last match
                m = _GENERIC_AWARD_LABEL.match(text, p, line_end)
                if m:
                    out.append(m)
                    tried = m.end()
            tried = max(tried, j - _GENERIC_ZH_MIN + 1)
    return out


def _award_entities(text: str) -> list[Entity]:
    """``AWARD`` entities: matches of the award-label pattern (:func:`pipeline.fields.award_label_at`), then generic ``… Award/Prize`` / ``…奖``
    labels overlapping none of them that :func:`pipeline.fields.normalize_award` reads as an award."""
    out: list[Entity] = []
    for m in _award_label_matches(text):
        label = award_label_at(text, m.start(), m.end())
        out.append(Entity("AWARD", m.start(), m.start() + len(label), label, normalize_award(label) or "other"))
    for m in _generic_award_matches(text):
        if any(e.start < m.end() and m.start() < e.end for e in out):
            continue
        award = normalize_award(m.group())
        if award is not None:
            out.append(Entity("AWARD", m.start(), m.end(), m.group(), award))
    return out


def _find_entities(text: str) -> list[Entity]:
    """All entities of ``text``, non-overlapping, in order of ``start``: of two that overlap the
    longer wins, then the earlier (as :func:`spacy.util.filter_spans`)."""
    found = _key_entities(text)
    for venue, year, start, end in find_venue_years(text):
        found.append(Entity("VENUE", start, end, text[start:end], f"{venue} {year}" if year else venue))
    found += _award_entities(text)
    kept: list[Entity] = []
    for e in sorted(found, key=lambda e: (-(e.end - e.start), e.start)):
        if all(e.end <= k.start or k.end <= e.start for k in kept):
            kept.append(e)
    return sorted(kept, key=lambda e: e.start)


def _zh_analysed(text: str) -> str:
    """The text a Chinese section is segmented as: its zh-Hans rendering when that keeps every
    offset (jieba's dictionaries are Simplified), else ``text``."""
    over = to_script(text, "zh-Hans")
    if over != text and (len(over) != len(text) or _HAN.split(text) != _HAN.split(over)):
        return text
    return over


def _spans_of_tokens(text: str, starts: list[int], ends: list[int]) -> list[tuple[int, int]]:
    """Sentence spans over tokens: each :func:`sentence_starts` start moved to its token's start,
    each end at its last token's end."""
    if not starts:
        return []
    firsts = sorted({0, *(bisect.bisect_right(starts, s) - 1 for s in sentence_starts(text))})
    return [(starts[k], ends[nxt - 1]) for k, nxt in zip(firsts, [*firsts[1:], len(starts)], strict=True)]


class ParsedSection:
    """One section as the extract stage reads it (:func:`parse_section`): ``written`` as given,
    ``text`` analysed (its zh-Hans rendering, same offsets), ``entities`` of ``written``, and for
    Chinese ``tokens`` of ``text`` as lists (starts, ends, is_space); None for English.
    """

    __slots__ = ("written", "text", "entities", "tokens", "_sentences")

    def __init__(self, written: str, entities: list[Entity],
                 tokens: tuple[list[int], list[int], list[bool]] | None = None, text: str | None = None) -> None:
        self.written = written
        self.text = written if text is None else text
        self.entities = entities
        self.tokens = tokens
        self._sentences: list[tuple[int, int]] | None = None

    def sentence_spans(self) -> list[tuple[int, int]]:
        """``(start, end)`` character spans of the sentences (:func:`_spans_of_tokens`), computed on
        first use (English: over :func:`en_nlp`'s tokens unless every start follows whitespace).

        Raises:
            ValueError: from spaCy, when the English tokens are read and ``text`` is longer
                than ``nlp.max_length`` (1,000,000 characters).
        """
        if self._sentences is None:
            if self.tokens is not None:
                spans = _spans_of_tokens(self.text, *self.tokens[:2])
            else:
                spans = self._spans_without_tokens()
                if spans is None:
                    doc = en_nlp().make_doc(self.text)
                    arr = doc.to_array([IDX, LENGTH]) if len(doc) else None
                    starts = arr[:, 0].tolist() if arr is not None else []
                    ends = (arr[:, 0] + arr[:, 1]).tolist() if arr is not None else []
                    spans = _spans_of_tokens(self.text, starts, ends)
            self._sentences = spans
        return self._sentences

    def _spans_without_tokens(self) -> list[tuple[int, int]] | None:
        text = self.text
        if not text:
            return []
        starts = [0]
        for s in sentence_starts(text):
            if text[s].isspace() or not text[s - 1].isspace():
                return None  # not the first character of a token: read the tokens
            starts.append(s)
        # less a single space after a non-space character: its last token's trailing space
        return [(a, b - 1 if b >= 2 and text[b - 1] == " " and not text[b - 2].isspace() else b)
                for a, b in zip(starts, [*starts[1:], len(text)], strict=True)]

    def topic(self, segments: Sequence[tuple[int, int]]) -> tuple[str, list[tuple[int, int]] | None]:
        """The text of ``segments`` (``(start, end)`` spans of :attr:`text`, in order, not
        overlapping) joined by ``"\\n"``, and the non-space tokens cut to the segments as sorted
        ``(start, end)`` offsets into that text (None for English)."""
        if self.tokens is None:
            return "\n".join(self.text[s:e] for s, e in segments), None
        return _cut_tokens(self.text, *self.tokens, segments)


def _zh_tokens(text: str) -> tuple[list[int], list[int], list[bool]]:
    """:attr:`ParsedSection.tokens` of ``text`` (:func:`zh_words_and_spaces`)."""
    words, spaces = zh_words_and_spaces(text)
    lengths = list(map(len, words))
    starts = [0, *itertools.accumulate(map(operator.add, lengths, spaces))][: len(words)]
    return starts, list(map(operator.add, starts, lengths)), list(map(str.isspace, words))


def parse_section(text: str, lang: str) -> ParsedSection:
    """A :class:`ParsedSection` of ``text``: entities, and for Chinese (``lang`` as
    :func:`_is_english` reads it) the jieba tokens of its zh-Hans rendering (:func:`_zh_analysed`)."""
    if _is_english(lang, text):
        return ParsedSection(text, _find_entities(text))
    over = _zh_analysed(text)
    return ParsedSection(text, _find_entities(text), _zh_tokens(over), over)


def _cut_tokens(text: str, starts: list[int], ends: list[int], space: Sequence[int | bool],
                segments: Sequence[tuple[int, int]]) -> tuple[str, list[tuple[int, int]]]:
    """:meth:`ParsedSection.topic` of the tokens ``starts``, ``ends``, ``space`` of ``text``."""
    parts: list[str] = []
    spans: list[tuple[int, int]] = []
    pos = 0
    for s, e in segments:
        # tokens k0 .. k1-1 overlap [s, e); only the first and the last can stick out
        k0 = max(0, bisect.bisect_right(starts, s) - 1)
        k1 = bisect.bisect_left(starts, e, k0)
        off = s - pos  # doc offset - off = offset in the joined text
        for k in (k0, k1 - 1) if k1 - k0 > 1 else range(k0, k1):
            a, b = max(starts[k], s), min(ends[k], e)
            if b > a and not space[k]:
                spans.append((a - off, b - off))
            if k == k0 and k1 - k0 > 2:
                spans += [(a - off, b - off) for a, b, sp in zip(starts[k0 + 1 : k1 - 1], ends[k0 + 1 : k1 - 1],
                                                                 space[k0 + 1 : k1 - 1], strict=True)
                           if b > a and not sp]
        parts.append(text[s:e])
        pos += e - s + 1
    return "\n".join(parts), spans


def is_specific_award(entity: Entity) -> bool:
    """Whether an ``AWARD`` entity is a known award label, not a generic ``… Award`` / ``…奖``
    phrase (:func:`pipeline.fields.find_award_label` prefers the first specific label)."""
    return entity.label == "AWARD" and _AWARD_LABEL.match(entity.text) is not None


def stated_award(section: ParsedSection, start: int, end: int) -> Entity | None:
    """The first specific ``AWARD`` entity of the first sentence in ``[start, end)`` holding one and
    an award verb (:data:`pipeline.fields._AWARD_CUE`: 获得, won ...); else None."""
    found = [e for e in section.entities if start <= e.start and e.end <= end and is_specific_award(e)]
    if not found:
        return None
    text = section.written
    for sent_start, sent_end in section.sentence_spans():
        a, b = max(sent_start, start), min(sent_end, end)
        if b <= a:
            continue
        inside = [e for e in found if a <= e.start < b]
        if inside and _AWARD_CUE.search(text, a, b):
            return inside[0]
    return None

