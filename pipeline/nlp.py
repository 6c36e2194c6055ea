"""Language tools shared by the stages: spaCy pipelines for Chinese and English, sentence
boundaries (rules in :mod:`pipeline.sentences`) and award/venue/metadata-key entities. Section
keywords are in :mod:`pipeline.keywords`.

Public API:

* :func:`zh_nlp`, :func:`en_nlp` -- the spaCy pipelines, built once per process;
* :func:`sentences` -- sentences of a text (the :data:`SENTENCE_COMPONENT` rules);
* :func:`entities` -- ``AWARD``, ``VENUE`` and ``KEY`` spans (the :data:`ENTITY_COMPONENT`);
* :func:`parse` -- one ``Doc`` of a section (tokens, sentences, entities); :func:`token_spans`
  reads it;
* :func:`parse_section` -- what the extract stage reads every field from: the entities,
  sentences and (Chinese) tokens of :func:`parse`'s ``Doc``, without a ``Doc``
  (:class:`ParsedSection`); :func:`stated_award` and :func:`is_specific_award` read it;
* :func:`load_user_dict` -- the shipped ML-domain jieba dictionary, as ``(word, freq, tag)``.

Pipelines. ``zh_nlp()`` is ``spacy.blank("zh")`` with the jieba segmenter (spaCy docs, "Chinese
language data", ``segmenter = "jieba"``). Its tokenizer segments with a private
``jieba.Tokenizer`` that holds jieba's default dictionary plus the ML-domain user dictionary
shipped in ``pipeline/data/ml_terms.txt`` (jieba README, "载入词典" / ``add_word``), so terms
such as 扩散模型, 共形预测, 强化学习 stay one token; a technical token (:data:`TECH_TOKEN`: ``GPT-3.5``,
``Llama-3.1-8B``, ``23.4%``, ``v1.2.3``) is split off before jieba cuts (:func:`cut_protected`)
and stays one token too. The module-level ``jieba.dt`` tokenizer, which other code may use, is
left untouched. ``en_nlp()`` is ``spacy.blank("en")`` with a ``token_match`` that keeps a :data:`TECH_TOKEN`
whole. Both end with
the same two components:

1. :data:`SENTENCE_COMPONENT`: rule-based sentence starts (see :func:`sentences`); it replaces
   spaCy's stock ``sentencizer``, which cuts ``https://arxiv.`` from ``org/abs/…``, splits
   after ``e.g.``/``et al.`` and inside ``《…》`` and quotations.
2. :data:`ENTITY_COMPONENT`: award labels, venue mentions and metadata keys found with the
   patterns of :mod:`pipeline.fields` over ``doc.text`` and written to ``doc.ents`` (token
   aligned) and ``doc._.paper_entities`` (exact character spans). This follows spaCy's
   documented recipe for patterns that cross token boundaries ("Rule-based matching: regular
   expressions -- matching on the full text", ``re.finditer(doc.text)`` + ``Doc.char_span``):
   jieba's segmentation of a label depends on its context (最佳论文亚军 may come out as 最佳/论文
   /亚军 or 最佳/论文亚/军), so token or phrase patterns of an ``EntityRuler`` would miss mentions
   that the character patterns find, and fields.py already holds those patterns. The same holds
   for the other two labels: a ``KEY`` is a line-start form (bullet, emoji, markup such as
   ``**作者**`` or ``【摘要】``, a key of one or more tokens -- 代码/地址 --, a colon) that
   :func:`pipeline.fields.parse_key_value` reads, and a venue with its year may be one jieba
   token (``ICLR2025``) or several (2025/年/NeurIPS, ICML/'/24), which token patterns cannot
   split or join alike; the patterns run once per ``Doc`` over its text (over the
   text as written when :func:`parse` made the ``Doc`` over a zh-Hans rendering, see
   :data:`WRITTEN`), and the ``Span`` objects come from ``Doc.char_span(...,
   alignment_mode="expand")``.

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
import numpy

from . import _spacy_without_torch  # noqa: F401 - before spaCy: thinc without torch (see there)

# isort: split
from spacy.attrs import ENT_IOB, ENT_TYPE, IDX, IS_SPACE, LENGTH, SENT_START
from spacy.language import Language
from spacy.tokens import Doc

from .fields import (
    _AWARD_CUE,
    _AWARD_LABEL,
    _AWARDISH,
    _BULLET,
    _EMOJI_KEYS,
    _GENERIC_AWARD_LABEL,
    _GLOSS,
    _KEY_LINE,
    find_venue_years,
    normalize_award,
    parse_key_value,
)
from .normalize import to_script
from .sentences import sentence_starts
from .textutil import anchored_finditer

if TYPE_CHECKING:
    pass

__all__ = [
    "ENTITY_COMPONENT",
    "ENTITY_LABELS",
    "SENTENCE_COMPONENT",
    "TECH_TOKEN",
    "USER_DICT",
    "WRITTEN",
    "Entity",
    "en_nlp",
    "entities",
    "cut_protected",
    "is_specific_award",
    "load_user_dict",
    "parse",
    "sentences",
    "stated_award",
    "token_spans",
    "zh_nlp",
]

jieba.setLogLevel(60)  # jieba prints its dictionary loading to stderr at INFO

#: Name of the sentence-boundary component in both pipelines.
SENTENCE_COMPONENT = "paper_sentences"
#: Name of the entity component in both pipelines.
ENTITY_COMPONENT = "paper_entities"
#: ``Doc.user_data`` key of the text as written when the ``Doc`` is made over its zh-Hans
#: rendering (:func:`parse`); :data:`ENTITY_COMPONENT` matches its patterns there.
WRITTEN = "paper_text_as_written"
#: Labels written by :data:`ENTITY_COMPONENT`.
ENTITY_LABELS: tuple[str, ...] = ("AWARD", "VENUE", "KEY")
#: The ML-domain jieba user dictionary shipped with the package (``word freq tag`` lines).
USER_DICT = "ml_terms.txt"


class Entity(NamedTuple):
    """One entity found by :data:`ENTITY_COMPONENT`.

    Attributes:
        label: one of :data:`ENTITY_LABELS`.
        start: character offset of the first character.
        end: character offset after the last character (``text[start:end]`` is the mention).
        text: the mention as written.
        value: the canonical reading: for ``AWARD`` one of :data:`pipeline.fields.AWARDS`;
            for ``VENUE`` the canonical venue, with the year when one is adjacent
            (``"NeurIPS 2025"``, ``"NeurIPS"``); for ``KEY`` one of :data:`pipeline.fields.KEYS`.
    """

    label: str
    start: int
    end: int
    text: str
    value: str


if not Doc.has_extension(ENTITY_COMPONENT):
    Doc.set_extension(ENTITY_COMPONENT, default=None)

# ---------------------------------------------------------------------------------------------
# Language routing
# ---------------------------------------------------------------------------------------------

from .textutil import HAN as _HAN  # noqa: E402


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


# ---------------------------------------------------------------------------------------------
# User dictionary and pipelines
# ---------------------------------------------------------------------------------------------


@functools.cache
def load_user_dict() -> tuple[tuple[str, int, str], ...]:
    """The shipped ML-domain user dictionary (``pipeline/data/ml_terms.txt``).

    Returns:
        ``(word, freq, tag)`` entries in file order: ``word`` a zh-Hans term, ``freq`` a jieba
        word count (the file gives 100 for every term), ``tag`` a jieba POS tag (``"nz"``).
        Comment (``#``) and blank lines are skipped.

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
    """A private jieba tokenizer: jieba's default dictionary plus :func:`load_user_dict`.

    A user term keeps jieba's own count when that is higher (神经网络 is in jieba's dictionary),
    so adding the dictionary never makes a known word rarer. Built once per process.
    """
    tok = jieba.Tokenizer()
    tok.initialize()
    for word, freq, tag in load_user_dict():
        tok.add_word(word, max(freq, tok.FREQ.get(word) or 0), tag)
    return tok


#: Whether the Chinese pipeline's tokenizer (the ``Doc`` tokens of :func:`parse`) guesses words
#: missing from its dictionaries with jieba's HMM (jieba README, "未登录词"). Off: the keywords
#: drop words that are not in the dictionary anyway, so the guesses only cost time (about a
#: quarter of jieba's); unknown runs come out as single characters. The keyword helpers that
#: cut a short span themselves (a quoted term, the word before a gloss) keep the HMM on: there a
#: guessed word marks a span that is no dictionary term (「最小化…」 cut to 小化…).
JIEBA_HMM = False


#: How many distinct Han blocks (:data:`_JIEBA_PIECES`) the Chinese tokenizer keeps the jieba
#: words of. Sections repeat blocks across documents (boilerplate, names, venue lines): a
#: block cut once is not cut again. An entry is a block and a tuple of its words (a few dozen
#: characters on average); least recently used blocks go first.
JIEBA_BLOCK_CACHE = 1 << 16
#: ...of blocks up to this many characters (clauses; a longer block, e.g. unpunctuated text, is
#: cut each time), so a full cache holds at most about 64k x 64 characters and their words.
JIEBA_CACHED_BLOCK_CHARS = 64

#: One piece of a text as jieba's ``Tokenizer.cut`` sees it (jieba 0.42.1, ``cut``): group 1 a
#: block of jieba's ``re_han_default`` (Han characters, ASCII letters and digits, ``+#&._%-``),
#: which jieba segments with its dictionary; group 2 a run of whitespace, which jieba yields as
#: whitespace pieces (``re_skip_default``); group 3 a run of other characters, which jieba
#: yields one by one. ``\s`` is ``str.isspace`` for ``str`` patterns.
_JIEBA_HAN_CLASS = jieba.re_han_default.pattern[2:-3]  # "([...]+)": the class's members
_JIEBA_PIECES = re.compile(rf"([{_JIEBA_HAN_CLASS}]+)|(\s+)|([^{_JIEBA_HAN_CLASS}\s]+)")


#: A technical token that stays one token (the Chinese pipeline's ``Doc``, its keywords) where
#: jieba and spaCy would cut it at its punctuation: a model name or version, letters and digits
#: joined by hyphens and by dots between digits, with an optional ``%`` after a digit
#: (``GPT-4``, ``GPT-3.5``, ``Llama-3.1-8B``, ``v1.2.3``, ``23.4%``, ``1.72``), or digits and
#: ``%`` (``1000%``). Every character is in jieba's block class (:data:`_JIEBA_HAN_CLASS`), so a
#: match never crosses a block; a dot between letters (``arxiv.org``, ``e.g``) joins nothing.
TECH_TOKEN = re.compile(
    r"(?<![A-Za-z0-9])[A-Za-z0-9]+(?:(?:-|(?<=[0-9])\.(?=[0-9]))[A-Za-z0-9]+)+(?:(?<=[0-9])%)?"
    r"|(?<![A-Za-z0-9.])[0-9]+%"
)


def cut_protected(tok: jieba.Tokenizer, text: str, hmm: bool = True) -> list[str]:
    """jieba's words of ``text`` (``tok.cut(text, HMM=hmm)``), each :data:`TECH_TOKEN` match one
    word: the text between matches is cut by jieba, the matches are kept whole (a regex
    pre-split, as jieba cuts each block of its ``re_han_default`` on its own: a match holds
    only block characters, so the words around it are those jieba gives)."""
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


class _JiebaDocMaker:
    """spaCy's jieba ``ChineseTokenizer`` with a linear-time ``__call__`` and a cache of the
    words of each Han block.

    The stock tokenizer segments the whole text with ``jieba.Tokenizer.cut`` and aligns the
    words with the text by ``spacy.util.get_words_and_spaces``, which slices the rest of the
    text for every word (quadratic in the length of a section). This one walks the text once
    in the pieces jieba's ``cut`` splits it into (:data:`_JIEBA_PIECES`): a Han block gives
    the words of ``cut`` over that block alone (``cut`` segments each block on its own, so the
    words are the same; a block's words are kept, :data:`JIEBA_BLOCK_CACHE`), any other
    non-space character is a word, and whitespace is aligned as ``get_words_and_spaces``
    does: one ``" "`` after a word is that word's ``whitespace_``, any other run a whitespace
    token. The ``Doc`` is the same (tokens, whitespace tokens and ``spaces``); every other
    attribute is the wrapped tokenizer's."""

    def __init__(self, tokenizer) -> None:
        self._tokenizer = tokenizer
        self._block_words = functools.lru_cache(maxsize=JIEBA_BLOCK_CACHE)(self._cut_block)

    def __getattr__(self, name: str):
        return getattr(self._tokenizer, name)

    def _cut_block(self, block: str) -> tuple[str, ...]:
        """jieba's words of one Han block (a full match of ``jieba.re_han_default``), a
        :data:`TECH_TOKEN` one word (:func:`cut_protected`)."""
        return tuple(cut_protected(self._tokenizer.jieba_seg, block, JIEBA_HMM))

    def words_and_spaces(self, text: str) -> tuple[list[str], list[bool]]:
        """``(words, spaces)`` of ``text`` for ``Doc(vocab, words=..., spaces=...)``: jieba's
        non-space words in order, whitespace runs between them as tokens, less the single
        ``" "`` right after a word, which sets that word's ``spaces`` entry."""
        words: list[str] = []
        spaced: list[int] = []  # the words followed by one " "
        block_words = self._block_words
        for block, gap, chars in _JIEBA_PIECES.findall(text):
            if block:
                words += block_words(block) if len(block) <= JIEBA_CACHED_BLOCK_CHARS else self._cut_block(block)
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

    def __call__(self, text: str) -> Doc:
        words, spaces = self.words_and_spaces(text)
        return Doc(self._tokenizer.vocab, words=words, spaces=spaces)


@functools.cache
def zh_nlp() -> Language:
    """The Chinese spaCy pipeline, built once per process.

    ``spacy.blank("zh")`` with the jieba segmenter, whose jieba tokenizer holds the ML-domain
    user dictionary (jieba's HMM for unknown words off: :data:`JIEBA_HMM`; the tokenizer is
    wrapped by a linear-time aligner, ``_JiebaDocMaker``, that makes the same ``Doc``), then :data:`SENTENCE_COMPONENT` and :data:`ENTITY_COMPONENT`. Works on
    Simplified and Traditional text (jieba's dictionary and the user dictionary are Simplified,
    so Traditional text segments less well; convert with :func:`pipeline.normalize.to_script`
    where segmentation matters).
    """
    import spacy

    nlp = spacy.blank("zh", config={"nlp": {"tokenizer": {"segmenter": "jieba"}}})
    nlp.tokenizer.jieba_seg = _jieba_tokenizer()  # ChineseTokenizer calls jieba_seg.cut(text, cut_all=False)
    nlp.tokenizer = _JiebaDocMaker(nlp.tokenizer)
    nlp.add_pipe(SENTENCE_COMPONENT)
    nlp.add_pipe(ENTITY_COMPONENT)
    return nlp


#: :data:`TECH_TOKEN` as a whole string, for spaCy's ``Tokenizer.token_match``.
_TECH_TOKEN_WHOLE = re.compile(rf"(?:{TECH_TOKEN.pattern})")


@functools.cache
def en_nlp() -> Language:
    """The English spaCy pipeline, built once per process: ``spacy.blank("en")`` (rule-based
    tokenizer, no trained model; its ``token_match`` keeps a :data:`TECH_TOKEN` whole: spaCy
    splits ``Llama-3.1-8B`` at the hyphen before ``8B`` and ``23.4%`` before the ``%``), then
    :data:`SENTENCE_COMPONENT` and :data:`ENTITY_COMPONENT`."""
    import spacy

    nlp = spacy.blank("en")
    nlp.tokenizer.token_match = _TECH_TOKEN_WHOLE.fullmatch  # spaCy's hook for tokens kept whole
    nlp.add_pipe(SENTENCE_COMPONENT)
    nlp.add_pipe(ENTITY_COMPONENT)
    return nlp


def _nlp_for(lang: str, text: str) -> Language:
    return en_nlp() if _is_english(lang, text) else zh_nlp()



#: ``Doc.user_data`` key of ``doc.text`` computed once (spaCy joins the tokens' texts on every
#: ``doc.text``; a Doc's text never changes).
_DOC_TEXT = "paper_doc_text"


def _doc_text(doc: Doc) -> str:
    """``doc.text``, computed once per ``Doc`` and kept in its ``user_data``."""
    text = doc.user_data.get(_DOC_TEXT)
    if not isinstance(text, str):
        text = doc.user_data[_DOC_TEXT] = doc.text
    return text


@Language.component(SENTENCE_COMPONENT)
def sentence_component(doc: Doc) -> Doc:
    """spaCy component: set ``Token.is_sent_start`` for every token from
    :func:`sentence_starts` over ``doc.text``. A start that falls inside a token moves to
    the start of that token. Returns the same ``Doc``."""
    if not len(doc):
        return doc
    idx = doc.to_array(IDX).tolist()  # each token's first character
    flags = numpy.full(len(doc), -1, dtype="int64")  # -1: no sentence start
    flags[0] = 1
    for s in sentence_starts(_doc_text(doc)):
        flags[bisect.bisect_right(idx, s) - 1] = 1  # the token holding the start
    # one pass (setting Token.is_sent_start token by token is slow); spaCy's arrays are uint64
    doc.from_array([SENT_START], flags.astype("uint64").reshape(-1, 1))
    return doc


def sentences(text: str, lang: str) -> list[str]:
    """Sentences of ``text``.

    Args:
        text: any text (at most spaCy's ``nlp.max_length``, 1,000,000 characters).
        lang: BCP 47 tag of the text: ``zh-Hans``, ``zh-Hant`` and ``mixed`` use
            :func:`zh_nlp`, ``en`` uses :func:`en_nlp` (other tags: see :func:`_is_english`).

    Returns:
        The sentences in order, each stripped of surrounding whitespace, empty ones dropped;
        joined they give back ``text`` up to whitespace. Boundary rules: see
        :func:`sentence_starts` (``。！？；!?``, ``.`` at a real sentence end -- not in
        ``3.5``, ``e.g.``, ``et al.``, ``Fig. 2``, ``J. Smith``, URLs --, closing quotes kept
        with their sentence, never inside ``《…》``, ``「…」``, ``“…”`` or brackets, and line
        breaks). Returns ``[]`` for an empty or blank text.

    Raises:
        ValueError: from spaCy, when ``text`` is longer than ``nlp.max_length``.
    """
    if not text or not text.strip():
        return []
    doc = _sentence_doc(_nlp_for(lang, text), text)
    return [s.text.strip() for s in doc.sents if s.text.strip()]


def _sentence_doc(nlp: Language, text: str) -> Doc:
    """``nlp``'s tokens of ``text`` and its :data:`SENTENCE_COMPONENT` sentence starts, without
    the entity component (for :func:`sentences`, and for a :class:`ParsedSection`, which holds
    its entities already)."""
    doc = nlp.make_doc(text)
    doc.user_data[_DOC_TEXT] = text
    return nlp.get_pipe(SENTENCE_COMPONENT)(doc)


# ---------------------------------------------------------------------------------------------
# Entities
# ---------------------------------------------------------------------------------------------


#: Markup around a metadata key that is not part of it (``**作者**：``, ``【摘要】：``).
_KEY_DECORATION = "*_【】[] \t"


def _key_entities(text: str) -> list[Entity]:
    """Metadata keys at line starts: an emoji key of :data:`pipeline.fields._EMOJI_KEYS` and a
    ``key：`` whose key :func:`pipeline.fields.parse_key_value` knows (a key alone on its line,
    ``摘要：``, counts too). Leading bullets, ``>`` and ``#`` are skipped as fields.py does."""
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


#: What every match of :data:`pipeline.fields._GENERIC_AWARD_LABEL` holds (case-sensitive, as
#: that pattern is). That pattern matches within one line (its classes hold no ``\n``).
_GENERIC_AWARD_HEAD = re.compile("Award|Prize|奖|獎")

#: The words every match of :data:`pipeline.fields._AWARD_LABEL` starts with, lower-cased:
#: the heads of its Chinese alternatives (最佳/杰出/优秀 + 论文, 时间检验, 荣誉提名, in both scripts)
#: and of its English ones (``\bbest``, ``\boutstanding``, ``\bdistinguished``, ``\btest``,
#: ``\bhonou?rable``, ``\brunners?``).
_AWARD_LABEL_HEADS = ("最佳", "杰出", "傑出", "优秀", "優秀", "时间", "時間", "荣誉", "榮譽",
                      "best", "outstanding", "distinguished", "test", "honorable", "honourable", "runner")


def _award_label_matches(text: str) -> list[re.Match[str]]:
    """``list(pipeline.fields._AWARD_LABEL.finditer(text))``, trying the pattern only where one
    of :data:`_AWARD_LABEL_HEADS` starts (:func:`pipeline.fields.anchored_finditer`)."""
    return list(anchored_finditer(_AWARD_LABEL, text, _AWARD_LABEL_HEADS))


#: The most Han characters before 奖/獎 in a match of the Chinese alternative of
#: :data:`pipeline.fields._GENERIC_AWARD_LABEL` (``[\u4e00-\u9fff]{2,6}(?:奖|獎)``), and the fewest.
_GENERIC_ZH_MAX, _GENERIC_ZH_MIN = 6, 2


def _generic_award_matches(text: str) -> list[re.Match[str]]:
    r"""``list(pipeline.fields._GENERIC_AWARD_LABEL.finditer(text))``, scanning only the lines
    that hold a :data:`_GENERIC_AWARD_HEAD` (most sections have none): no match crosses a line
    break, and a scan cut at a ``"\n"`` reads its ``\b`` and ``(?!…)`` at the cut as at that
    ``"\n"`` (neither a word character nor one of the excluded ones).

    A line without ``Award``/``Prize`` can only hold matches of the Chinese alternative, each
    starting 2 to 6 characters before its 奖/獎: the pattern is tried there only, in order, from
    the end of the last match on (as ``finditer`` goes on), instead of at every character of
    the line. A line with ``Award``/``Prize`` is scanned whole (the English alternative may
    start any number of characters before its head)."""
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
    """Award labels: every match of fields.py's award-label pattern (with a parenthesised gloss
    right after it kept, as :func:`pipeline.fields.find_award_label` does), then the generic
    ``<Capitalised words> Award/Prize`` / ``…奖`` labels that overlap none of them and that
    :func:`pipeline.fields.normalize_award` reads as an award (so 获奖 and 奖励 are not)."""
    out: list[Entity] = []
    for m in _award_label_matches(text):
        start, end = m.start(), m.end()
        gloss = _GLOSS.match(text, end)
        if gloss and (_AWARD_LABEL.search(gloss.group()) or _AWARDISH.search(gloss.group())):
            end = gloss.end()
        label = text[start:end].strip()
        out.append(Entity("AWARD", start, start + len(label), label, normalize_award(label) or "other"))
    for m in _generic_award_matches(text):
        if any(e.start < m.end() and m.start() < e.end for e in out):
            continue
        award = normalize_award(m.group())
        if award is not None:
            out.append(Entity("AWARD", m.start(), m.end(), m.group(), award))
    return out


def _find_entities(text: str) -> list[Entity]:
    """All entities of ``text``, non-overlapping, in order of ``start``: where two overlap, the
    longer wins (then the earlier), as :func:`spacy.util.filter_spans` decides."""
    found = _key_entities(text)
    for venue, year, start, end in find_venue_years(text):
        found.append(Entity("VENUE", start, end, text[start:end], f"{venue} {year}" if year else venue))
    found += _award_entities(text)
    kept: list[Entity] = []
    for e in sorted(found, key=lambda e: (-(e.end - e.start), e.start)):
        if all(e.end <= k.start or k.end <= e.start for k in kept):
            kept.append(e)
    return sorted(kept, key=lambda e: e.start)


@Language.component(ENTITY_COMPONENT)
def entity_component(doc: Doc) -> Doc:
    """spaCy component: find :func:`_find_entities` in ``doc.text`` (or in the text as written,
    ``doc.user_data[WRITTEN]``, when :func:`parse` made the ``Doc`` over its zh-Hans
    rendering: same offsets); store them in
    ``doc._.paper_entities`` (list of :class:`Entity`, exact character spans) and as
    ``doc.ents`` (spans expanded to whole tokens, ``label_`` the label, ``kb_id_`` the
    canonical value; a span that would overlap an earlier one after expansion is left out of
    ``doc.ents`` only). Returns the same ``Doc``."""
    text = doc.user_data.get(WRITTEN)
    if not isinstance(text, str) or len(text) != len(_doc_text(doc)):
        text = _doc_text(doc)
    found = _find_entities(text)
    doc._.set(ENTITY_COMPONENT, found)
    spans, last_end = [], -1
    for e in found:
        span = doc.char_span(e.start, e.end, label=e.label, kb_id=e.value, alignment_mode="expand")
        if span is not None and len(span) and span.start >= last_end:
            spans.append(span)
            last_end = span.end
    # what the ``doc.ents`` setter does, less its copy of every Span (spaCy 3, Doc.ents), and
    # with the tokens outside the spans set to O in one array write first: ``set_ents``' own
    # default ("outside") tests each token against a Python set, 0.1 s per 1,000 bench files
    if len(doc):
        outside = numpy.zeros((len(doc), 2), dtype="uint64")
        outside[:, 0] = 2  # ENT_IOB O, ENT_TYPE none
        doc.from_array([ENT_IOB, ENT_TYPE], outside)
    doc.set_ents(spans, default="unmodified")
    return doc


def entities(text: str, lang: str) -> list[Entity]:
    """Award labels, venue mentions and metadata keys in ``text``.

    Args:
        text: a line, a section or a whole article.
        lang: BCP 47 tag choosing the pipeline, as for :func:`sentences`.

    Returns:
        :class:`Entity` tuples ``(label, start, end, text, value)`` in order of ``start``,
        non-overlapping, with exact character offsets into ``text``:

        * ``AWARD``: an award label as :func:`pipeline.fields.find_award_label` reads it, in
          zh-Hans, zh-Hant or English (杰出论文奖, 傑出論文獎, 最佳論文亞軍, 荣誉提名, Best Paper
          Runner-Up, Outstanding Paper, Test of Time ...); ``value`` its
          :func:`pipeline.fields.normalize_award` class;
        * ``VENUE``: a venue mention with its adjacent year as
          :func:`pipeline.fields.find_venue_years` reads it (NeurIPS 2025, ICML'24, ICLR2025,
          神经信息处理系统大会); ``value`` ``"<venue> <year>"`` or ``"<venue>"``;
        * ``KEY``: a metadata key at a line start (作者, 機構, Authors, 论文链接, arXiv, 项目主页,
          Code, 摘要, Abstract, TL;DR, 论文 1, 📄, 👥, 🏆 ...), the key without its colon;
          ``value`` the canonical key of :func:`pipeline.fields.parse_key_value`.

        ``[]`` for an empty text.

    Raises:
        ValueError: from spaCy, when ``text`` is longer than ``nlp.max_length``.
    """
    if not text:
        return []
    doc = _nlp_for(lang, text)(text)
    return list(doc._.get(ENTITY_COMPONENT) or [])


def _zh_analysed(text: str) -> str:
    """The text a Chinese section is segmented as: its zh-Hans rendering
    (:func:`pipeline.normalize.to_script`) when that keeps every character's offset, else
    ``text`` itself (see :func:`parse`)."""
    over = to_script(text, "zh-Hans")
    # kept when every changed character is a Han one replaced by a Han one: of two texts of
    # one length, exactly when they split into the same non-Han pieces at each Han character
    if over != text and (len(over) != len(text) or _HAN.split(text) != _HAN.split(over)):
        return text
    return over


def parse(text: str, lang: str) -> Doc:
    """One ``Doc`` of a section: its tokens, sentences (:data:`SENTENCE_COMPONENT`) and
    entities (:data:`ENTITY_COMPONENT`, in ``doc._.paper_entities``), made once so that the
    extract stage reads everything from it (jieba runs once per section).

    Args:
        text: the section text.
        lang: BCP 47 tag choosing the pipeline, as for :func:`sentences`.

    Returns:
        ``en_nlp()(text)`` for English; for Chinese ``zh_nlp()`` over the zh-Hans rendering of
        ``text`` (:func:`pipeline.normalize.to_script`: jieba's dictionaries are Simplified, so
        Traditional text segments into the same words as the keywords expect) when that
        rendering keeps every character's offset (it changes Han characters only, one for one;
        OpenCC does so on all the fixtures), else over ``text`` as is. Either way character
        offsets into the ``Doc`` are offsets into ``text``. ``text`` itself is kept in
        ``doc.user_data[WRITTEN]``: the entity patterns read it (the metadata keys and award
        labels of :mod:`pipeline.fields` list each script's own words -- 論文連結 is no
        Simplified key once converted, 论文连结 --, so they see the text as written), and
        ``Entity.text`` is the mention as written.

    Raises:
        ValueError: from spaCy, when ``text`` is longer than ``nlp.max_length``.
    """
    pipeline, over = (en_nlp(), text) if _is_english(lang, text) else (zh_nlp(), _zh_analysed(text))
    doc = pipeline.make_doc(over)
    doc.user_data[_DOC_TEXT] = over  # the Doc's text is the text it was made of
    doc.user_data[WRITTEN] = text
    return pipeline(doc)


class ParsedSection:
    """One section as the extract stage reads it (:func:`parse_section`): its entities, its
    sentences and, for Chinese, its jieba tokens -- what :func:`parse`'s ``Doc`` holds, without
    the ``Doc``.

    Attributes:
        written: the section text as given.
        text: the text analysed: ``written``, or for Chinese its zh-Hans rendering when
            :func:`parse` makes the ``Doc`` over it (same length, same offsets).
        entities: :func:`entities` of ``written`` (:class:`Entity` list in order of ``start``,
            exact character offsets), as ``doc._.paper_entities`` holds them.
        tokens: for a Chinese section the tokens of :func:`parse`'s ``Doc`` as three lists:
            each token's first character, end character and ``is_space`` flag (the words of
            the tokenizer's ``words_and_spaces``, placed as ``Doc`` places them: one after the
            other, one character further after a word followed by a space); None for an
            English one, whose tokens nothing reads (YAKE tokenizes its own text). Reading
            them from jieba's words instead of a ``Doc`` skips making the ``Doc``, its
            ``Token`` structs, sentence flags and entity spans, which nothing reads.
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
        """``[(sent.start_char, sent.end_char) for sent in doc.sents]`` of the section's
        :func:`parse` ``Doc`` (computed on first use, then kept).

        For a Chinese section they come from its tokens as :data:`SENTENCE_COMPONENT` and
        ``Doc.sents`` place them: a sentence starts at the first token and at each token
        holding a start of :func:`sentence_starts`, and ends at the end of the token before
        the next one (the last one at the end of the last token); ``[]`` for an empty text.

        For an English section without tokens the same spans come from
        :func:`sentence_starts` directly when every start follows whitespace: spaCy's
        tokenizer cuts the text at every boundary between whitespace and non-whitespace
        (spaCy 3, ``Tokenizer.__call__``), so such a start is the first character of a token
        and the sentence component moves none of them. Tokens cover the text with no gap except
        the one space after a token that the tokenizer records as ``Token.whitespace_``, so a
        sentence ends where the next one starts, less that space (and the last one at the
        text's end, less a final space). Otherwise (a start glued to the character before it,
        as after ``。`` in English text) the ``Doc`` is made and read.
        """
        if self._sentences is None:
            if self.tokens is not None:
                spans = self._spans_of_tokens()
            else:
                spans = self._spans_without_doc()
                if spans is None:  # the Doc's sentences (a Doc of tokens and sentences only)
                    spans = [(s.start_char, s.end_char) for s in _sentence_doc(en_nlp(), self.written).sents]
            self._sentences = spans
        return self._sentences

    def _spans_of_tokens(self) -> list[tuple[int, int]]:
        starts, ends, _ = self.tokens
        if not starts:
            return []
        firsts = sorted({0, *(bisect.bisect_right(starts, s) - 1 for s in sentence_starts(self.text))})
        return [(starts[k], ends[nxt - 1]) for k, nxt in zip(firsts, [*firsts[1:], len(starts)], strict=True)]

    def _spans_without_doc(self) -> list[tuple[int, int]] | None:
        text = self.text
        if not text:
            return []
        starts = [0]
        for s in sentence_starts(text):
            if text[s].isspace() or not text[s - 1].isspace():
                return None  # not the first character of a token: read the Doc
            starts.append(s)
        # a sentence ends at the next start (or the text's end), less a run of whitespace that is
        # one space after a non-space character: that space is its last token's whitespace_
        return [(a, b - 1 if b >= 2 and text[b - 1] == " " and not text[b - 2].isspace() else b)
                for a, b in zip(starts, [*starts[1:], len(text)], strict=True)]

    def topic(self, segments: Sequence[tuple[int, int]]) -> tuple[str, list[tuple[int, int]] | None]:
        """:func:`token_spans` of the section's tokens (Chinese); for an English section the
        segments' text alone, ``(text, None)`` (the English keywords read no tokens)."""
        if self.tokens is None:
            return "\n".join(self.text[s:e] for s, e in segments), None
        return _cut_tokens(self.text, *self.tokens, segments)


def _zh_tokens(text: str) -> tuple[list[int], list[int], list[bool]]:
    """The tokens ``zh_nlp().make_doc(text)`` has, as :attr:`ParsedSection.tokens` holds them."""
    words, spaces = zh_nlp().tokenizer.words_and_spaces(text)
    lengths = list(map(len, words))
    starts = [0, *itertools.accumulate(map(operator.add, lengths, spaces))][: len(words)]
    return starts, list(map(operator.add, starts, lengths)), list(map(str.isspace, words))


def parse_section(text: str, lang: str) -> ParsedSection:
    """A section for the extract stage: its entities (:func:`_find_entities` of ``text``), its
    sentences on demand (:meth:`ParsedSection.sentence_spans`), and for Chinese text its
    tokens; no ``Doc``. They are what the ``Doc`` of :func:`parse` gives: the same entities,
    sentence spans, tokens and segment texts.

    Args:
        text: the section text.
        lang: BCP 47 tag choosing the pipeline, as for :func:`sentences`.

    Raises:
        ValueError: from spaCy, for English text only, when its sentences are read, a start
            does not follow whitespace and ``text`` is longer than ``nlp.max_length``.
    """
    if _is_english(lang, text):
        return ParsedSection(text, _find_entities(text))
    over = _zh_analysed(text)
    return ParsedSection(text, _find_entities(text), _zh_tokens(over), over)


def _token_arrays(doc: Doc) -> tuple[list[int], list[int], list[int]]:
    """Each token's first character, end character and ``is_space`` flag (lists)."""
    if not len(doc):
        return [], [], []
    arr = doc.to_array([IDX, LENGTH, IS_SPACE])
    starts = arr[:, 0].tolist()
    ends = (arr[:, 0] + arr[:, 1]).tolist()
    return starts, ends, arr[:, 2].tolist()


def token_spans(doc: Doc, segments: Sequence[tuple[int, int]],
                with_tokens: bool = True) -> tuple[str, list[tuple[int, int]] | None]:
    """The text of some character spans of ``doc`` and its tokens there, for :func:`pipeline.keywords.keywords`.

    Args:
        doc: a ``Doc`` (from :func:`parse`).
        segments: ``(start, end)`` character spans of ``doc.text``, in order, not overlapping.
        with_tokens: False when only the text is wanted (the English keywords read no tokens).

    Returns:
        ``(text, spans)``: ``text`` the segments joined by ``"\\n"``; ``spans`` the doc's
        non-space tokens cut to the segments, as sorted ``(start, end)`` offsets into ``text``
        (None when not ``with_tokens``).
    """
    text = _doc_text(doc)
    if not with_tokens:
        return "\n".join(text[s:e] for s, e in segments), None
    # the token arrays in one call (iterating the Doc makes a Token object per token)
    return _cut_tokens(text, *_token_arrays(doc), segments)


def _cut_tokens(text: str, starts: list[int], ends: list[int], space: Sequence[int | bool],
                segments: Sequence[tuple[int, int]]) -> tuple[str, list[tuple[int, int]]]:
    """:func:`token_spans` of the tokens ``starts``, ``ends``, ``space`` of ``text``."""
    parts: list[str] = []
    spans: list[tuple[int, int]] = []
    pos = 0
    for s, e in segments:
        # tokens k0 .. k1-1 overlap [s, e): the one holding s (or the first) up to the last one
        # starting before e; only the first and the last can stick out, those between lie
        # inside and are just shifted (in one comprehension: a segment holds hundreds)
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
    """Whether an ``AWARD`` entity is a known award label (best paper, outstanding paper,
    honourable mention, test of time ...), not a generic ``<Words> Award`` / ``…奖`` phrase:
    :func:`pipeline.fields.find_award_label` prefers the first specific label of a text."""
    return entity.label == "AWARD" and _AWARD_LABEL.match(entity.text) is not None


def stated_award(section: ParsedSection, start: int, end: int) -> Entity | None:
    """The award a paragraph gives a paper, as :func:`pipeline.fields.find_stated_award`
    reads it, from a :func:`parse_section` ``section``: the first specific ``AWARD`` entity
    (:func:`is_specific_award`) of the first sentence
    (:meth:`ParsedSection.sentence_spans`) within ``[start, end)`` (character offsets) that
    holds one and an award verb (获得, 包括, 颁给, won, awarded ...). None when there is none."""
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
