"""Language tools shared by the stages: spaCy pipelines for Chinese and English, sentence
boundaries, award/venue/metadata-key entities and section keywords.

Public API:

* :func:`zh_nlp`, :func:`en_nlp` -- the spaCy pipelines, built once per process;
* :func:`sentences` -- sentences of a text (the :data:`SENTENCE_COMPONENT` rules);
* :func:`entities` -- ``AWARD``, ``VENUE`` and ``KEY`` spans (the :data:`ENTITY_COMPONENT`);
* :func:`parse` -- one ``Doc`` of a section (tokens, sentences, entities); :func:`token_spans`
  reads it;
* :func:`parse_section` -- what the extract stage reads every field from: the entities,
  sentences and (Chinese) tokens of :func:`parse`'s ``Doc``, without a ``Doc``
  (:class:`ParsedSection`); :func:`stated_award` and :func:`is_specific_award` read it;
* :func:`keywords` -- topic keywords (jieba TF-IDF for Chinese, YAKE for English), from a text
  or from a ``Doc``'s tokens (jieba then does not run again);
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
import math
import re
import string
from collections import Counter
from collections.abc import Iterator, Sequence
from importlib import resources
from typing import TYPE_CHECKING, NamedTuple

import jieba
import numpy

from . import _spacy_without_torch  # noqa: F401 - before spaCy: thinc without torch (see there)

# isort: split
from spacy.attrs import ENT_IOB, ENT_TYPE, IDX, IS_SPACE, LENGTH, SENT_START
from spacy.lang.en.stop_words import STOP_WORDS as _SPACY_EN_STOP_WORDS
from spacy.lang.zh.stop_words import STOP_WORDS as _SPACY_ZH_STOP_WORDS
from spacy.language import Language
from spacy.tokens import Doc

from .credits import _find_credit, parse_credit_line
from .fields import (
    _AWARD_CUE,
    _AWARD_LABEL,
    _AWARDISH,
    _BULLET,
    _CASE_EXTRA,
    _EMOJI_KEYS,
    _EN_ORG_HEADS,
    _GENERIC_AWARD_LABEL,
    _GLOSS,
    _KEY_LINE,
    _url_spans,
    anchored_finditer,
    find_venue_years,
    is_institution,
    normalize_award,
    parse_key_value,
)
from .normalize import to_script

if TYPE_CHECKING:
    from yake import KeywordExtractor

__all__ = [
    "EN_GENERIC_WORDS",
    "EN_STOP_WORDS",
    "ENTITY_COMPONENT",
    "ENTITY_LABELS",
    "SENTENCE_COMPONENT",
    "TECH_TOKEN",
    "USER_DICT",
    "WRITTEN",
    "ZH_GENERIC_WORDS",
    "ZH_STOP_WORDS",
    "Entity",
    "en_nlp",
    "entities",
    "keywords",
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

_HAN = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")


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


# ---------------------------------------------------------------------------------------------
# Sentences
# ---------------------------------------------------------------------------------------------

#: Characters that end a sentence outside quotations, brackets, book titles and URLs: the
#: ideographic full stop, full-width exclamation/question marks and semicolon, ASCII ``!?``.
#: (``.`` ends a sentence only under the rules of :func:`_period_ends`; ASCII ``;`` never.)
_TERMINALS = frozenset("。！？；!?")
#: Characters that may continue a run of terminals (``?!``, ``。。``, ``...``).
_TERMINAL_RUN = frozenset("。！？；!?.")
#: Closing quotes and brackets kept with the sentence they close (``“好。”`` is one sentence).
_CLOSERS = frozenset("」』”’\"）)】]》〉")
#: Paired marks. Nothing inside a matched pair (on one line) ends a sentence.
_PAIRS = {"《": "》", "〈": "〉", "「": "」", "『": "』", "“": "”", "‘": "’",
          "(": ")", "（": "）", "[": "]", "【": "】"}
_CLOSE_TO_OPEN = {c: o for o, c in _PAIRS.items()}
#: Book-title marks: a title ending in ``?`` (``《…Mirage?》``) ends no sentence.
_TITLE_OPENERS = frozenset("《〈")
#: What may not start a sentence: a boundary is dropped when the next character is one of
#: these (``“为什么？”，`` continues the sentence).
_CONTINUATION = frozenset("，,、；;：:。.！!？?）)]】」』”’》〉")
#: Words that a ``.`` follows without ending a sentence (lower-cased, without the dot): Latin
#: and scholarly abbreviations (``e.g.``, ``i.e.``, ``et al.``, ``cf.``, ``vs.``), figure, table,
#: equation, section and page references, titles of persons, month names (not "May").
_ABBREVIATIONS = frozenset(
    "al cf vs viz ca approx resp eg ie incl esp fig figs eq eqs sec secs tab tabs ref refs vol vols "
    "no nos pp ch chap app alg thm def lem prop dr mr mrs ms prof st jr sr dept univ "
    "jan feb mar apr jun jul aug sep sept oct nov dec".split()
)
_WORD_BEFORE = re.compile(r"((?:[A-Za-z]\.)+[A-Za-z]?|[A-Za-z]+)$")
#: An enumeration label alone at the start of a line (``1.``, ``a.``, ``IV.``): not a sentence.
_ENUM_HEAD = re.compile(r"[-*•·]?\s*(?:\d{1,3}|[A-Za-z]|[IVXivx]{1,4})")
_LOWER = re.compile(r"[a-z]")
#: A lower-case word (not arXiv, iPhone): a line starting with one continues the sentence.
_LOWER_WORD = re.compile(r"[a-z][a-z'-]*(?![A-Za-z0-9])")
_SPACE = frozenset(" \t\r\n\u3000\u00a0")


_PAIR_MARKS = re.compile("[" + re.escape("".join(sorted(set(_PAIRS) | set(_CLOSE_TO_OPEN)))) + '"]')


def _protected(text: str) -> tuple[bytearray, dict[int, int]]:
    """Where sentences may not end, and the quotations that may end one.

    Returns:
        ``(inside, quote_ends)``: ``inside[i]`` is 1 for a character inside a URL
        (:func:`pipeline.fields.find_urls` spans) or strictly inside a matched pair of marks of
        :data:`_PAIRS` or ASCII ``"``; ``quote_ends`` maps the index of each closing mark of a
        matched quotation or bracket (not a book title) to the index of its opening mark. Pairs
        are matched on one line (a stack per line; a closer without its opener, an opener
        without its closer, and ``’`` between two letters, an apostrophe, are ignored).
    """
    n = len(text)
    url = bytearray(n)
    for s, e, _ in _url_spans(text):
        url[s:e] = b"\x01" * (e - s)
    inside = bytearray(url)
    quote_ends: dict[int, int] = {}
    line_start = 0
    while line_start <= n:
        line_end = text.find("\n", line_start)
        line_end = n if line_end == -1 else line_end
        stack: list[tuple[str, int]] = []
        ascii_open: int | None = None
        for hit in _PAIR_MARKS.finditer(text, line_start, line_end):  # the marks only
            i, c = hit.start(), hit.group()
            if url[i]:
                continue  # brackets and quotes inside a URL pair with nothing
            if c in _PAIRS:
                stack.append((c, i))
            elif c in _CLOSE_TO_OPEN:
                if c == "’" and 0 < i < n - 1 and text[i - 1].isalpha() and text[i + 1].isalpha():
                    continue  # an apostrophe (model’s)
                opener = _CLOSE_TO_OPEN[c]
                if stack and stack[-1][0] == opener:  # the innermost open mark (most closers)
                    k = len(stack) - 1
                else:
                    k = next((k for k in range(len(stack) - 2, -1, -1) if stack[k][0] == opener), None)
                    if k is None:
                        continue
                o = stack[k][1]
                del stack[k:]
                inside[o + 1 : i] = b"\x01" * (i - o - 1)
                if opener not in _TITLE_OPENERS:
                    quote_ends[i] = o
            elif c == '"':
                if ascii_open is None:
                    ascii_open = i
                else:
                    inside[ascii_open + 1 : i] = b"\x01" * (i - ascii_open - 1)
                    quote_ends[i] = ascii_open
                    ascii_open = None
        line_start = line_end + 1
    return inside, quote_ends


def _period_ends(text: str, i: int) -> bool:
    """Whether the ``.`` at ``text[i]`` can end a sentence: not followed by a letter or digit
    (``3.5``, ``arxiv.org``), not after an abbreviation (:data:`_ABBREVIATIONS`, dotted forms
    such as ``e.g.``/``U.S.``, a single capital initial as in ``J. Smith``), not after an
    enumeration label alone at the start of a line (``1.``)."""
    nxt = text[i + 1] if i + 1 < len(text) else ""
    if nxt and (nxt.isalnum() or nxt in "_-/@"):
        return False
    if i > 0 and text[i - 1] == ".":
        return True  # the later dots of an ellipsis; the first dot decided
    m = _WORD_BEFORE.search(text, max(0, i - 24), i)
    if m:
        w = m.group(1)
        if "." in w or (len(w) == 1 and w.isupper()) or w.lower() in _ABBREVIATIONS:
            return False
    line_start = text.rfind("\n", 0, i) + 1
    return not _ENUM_HEAD.fullmatch(text[line_start:i].strip())


def _skip_space(text: str, i: int) -> int:
    n = len(text)
    while i < n and text[i] in _SPACE:
        i += 1
    return i


def _next_start(text: str, end: int, ascii_terminal: bool, before: str) -> int | None:
    """The start of the sentence after a terminal run ending at ``end``, or None when the text
    goes on in the same sentence: at the end of the text, before a continuation mark
    (:data:`_CONTINUATION`), and after an ASCII ``.!?`` before a lower-case letter or glued to
    the next word (a Han character may follow ``?``/``!`` directly, and ``.`` after Han text:
    ``before``, the character before the run, ``""`` for none or when that does not count)."""
    k = end
    n = len(text)
    while k < n and text[k] in _SPACE:
        k += 1
    if k >= n or text[k] in _CONTINUATION:
        return None
    if ascii_terminal:
        if _LOWER.match(text[k]):
            return None
        if k == end and not (_HAN.match(text[k]) and (text[end - 1] in "!?" or _HAN.match(before))):
            return None
    return k


def _sentence_starts(text: str) -> list[int]:
    """Character offsets where a sentence other than the first starts (sorted, each the offset
    of a non-space character; the whitespace before it belongs to the previous sentence).

    Rules, in order:

    * a line break ends a sentence unless the next line starts with a lower-case Latin word
      (a hard-wrapped English sentence; ``arXiv:`` is no such word); a blank line always does;
    * nothing inside a URL or a matched pair of quotation marks, brackets or book-title marks
      (:func:`_protected`) ends a sentence;
    * ``。！？；!?`` end a sentence, and ``.`` where :func:`_period_ends` allows; a run of them
      and the closing quotes/brackets right after it stay with the sentence;
    * a quotation or bracket whose content ends in such a mark ends the sentence after its
      closing mark when that mark is a full stop (``稱為「神經刻度法則。」``: both Chinese
      conventions put 。 inside the quote only at a sentence end), when the quotation opened
      the sentence or followed a colon (``他说：“好！”``), or when whitespace follows it; a
      quoted question inside a sentence (``所谓“为什么？”这一问题``) ends none;
    * no sentence starts at a continuation mark, nor, after an ASCII ``.!?``, at a lower-case
      letter or glued to the next word (:func:`_next_start`).
    """
    n = len(text)
    inside, quote_ends = _protected(text)
    starts: list[int] = []
    sent_start = _skip_space(text, 0)

    def add(k: int | None) -> None:
        nonlocal sent_start
        if k is not None and 0 < k < n and (not starts or k > starts[-1]):
            starts.append(k)
            sent_start = k

    i = sent_start
    # only line breaks, terminals and closing quotes can end a sentence: visit those (every
    # other character would just move i on by one)
    marks = [m.start() for m in _SENTENCE_MARKS.finditer(text, i)]
    if quote_ends:
        marks = sorted(set(marks).union(quote_ends))
    for p in marks:
        if p < i:
            continue
        i = p
        c = text[i]
        if c == "\n":
            k = _skip_space(text, i)
            if k < n and (text.count("\n", i, k) >= 2 or not _LOWER_WORD.match(text, k)):
                add(k)
            i = k
            continue
        if inside[i]:
            i += 1
            continue
        if c in _TERMINALS or (c == "." and _period_ends(text, i)):
            end = i + 1
            while end < n and text[end] in _TERMINAL_RUN and not inside[end]:
                end += 1
            while end < n and text[end] in _CLOSERS:
                end += 1
            if end == i + 1:  # one mark, nothing closed: most sentence ends
                ascii_terminal = c in ".!?"
            else:
                ascii_terminal = all(ch in ".!?" for ch in text[i:end] if ch not in _CLOSERS)
            add(_next_start(text, end, ascii_terminal, text[i - 1] if i else ""))
            i = end
            continue
        if i in quote_ends:
            j = i - 1
            while j > quote_ends[i] and text[j] in _CLOSERS:
                j -= 1
            if text[j] in _TERMINALS or text[j] == ".":
                end = i + 1
                while end < n and text[end] in _CLOSERS:
                    end += 1
                o = quote_ends[i]
                before = text[sent_start:o].rstrip()
                opened = o <= sent_start or before.endswith(("：", ":"))
                if text[j] in "。." or opened or (end < n and text[end] in _SPACE):
                    add(_next_start(text, end, text[j] in ".!?", ""))
                i = end
                continue
        i += 1
    return starts


_SENTENCE_MARKS = re.compile(r"[\n。！？；!?.]")


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
    :func:`_sentence_starts` over ``doc.text``. A start that falls inside a token moves to
    the start of that token. Returns the same ``Doc``."""
    if not len(doc):
        return doc
    idx = doc.to_array(IDX).tolist()  # each token's first character
    flags = numpy.full(len(doc), -1, dtype="int64")  # -1: no sentence start
    flags[0] = 1
    for s in _sentence_starts(_doc_text(doc)):
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
        :func:`_sentence_starts` (``。！？；!?``, ``.`` at a real sentence end -- not in
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
        holding a start of :func:`_sentence_starts`, and ends at the end of the token before
        the next one (the last one at the end of the last token); ``[]`` for an empty text.

        For an English section without tokens the same spans come from
        :func:`_sentence_starts` directly when every start follows whitespace: spaCy's
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
        firsts = sorted({0, *(bisect.bisect_right(starts, s) - 1 for s in _sentence_starts(self.text))})
        return [(starts[k], ends[nxt - 1]) for k, nxt in zip(firsts, [*firsts[1:], len(starts)], strict=True)]

    def _spans_without_doc(self) -> list[tuple[int, int]] | None:
        text = self.text
        if not text:
            return []
        starts = [0]
        for s in _sentence_starts(text):
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
    after = list(itertools.accumulate(len(w) + sp for w, sp in zip(words, spaces, strict=True)))
    starts = [0, *after[:-1]] if after else []
    return starts, [a + len(w) for a, w in zip(starts, words, strict=True)], [w.isspace() for w in words]


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
    """The text of some character spans of ``doc`` and its tokens there, for :func:`keywords`.

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


# ---------------------------------------------------------------------------------------------
# Keywords
# ---------------------------------------------------------------------------------------------

# TeX math ($...$, $$...$$, \(...\), \[...\]) is notation, not topic: removed before extraction.
_TEX_MATH = re.compile(r"\$\$.+?\$\$|\$[^$\n]+\$|\\\(.+?\\\)|\\\[.+?\\\]", re.S)

if TYPE_CHECKING:
    from .credits import Credit

_NUMBER = re.compile(r"^[\d.,%]+$")
_PUNCT_ONLY = re.compile(r"^[\W_]+$")
# A Latin word in Chinese text (LLM, ResNet, pass@k, ImageNet-1k, GPT-2, and with a dot between
# digits GPT-3.5, Llama-3.1-8B, v1.2.3), not glued to a letter or digit before it (so 1.7B
# gives no "B").
_LATIN_WORD = r"[A-Za-z][A-Za-z0-9]*(?:[-@'][A-Za-z0-9]+|(?<=[0-9])\.[0-9][A-Za-z0-9]*)*"
_LATIN_RUN = re.compile(rf"(?<![A-Za-z0-9.@'-]){_LATIN_WORD}(?:[ \t]+{_LATIN_WORD})*")
#: How deep in the ranking a longer candidate may still replace kept keywords it contains, as a
#: multiple of the number of keywords asked for (see :func:`_dedup`).
REPLACE_WINDOW = 4
#: Longest Latin run in Chinese text read as one term, in words; longer runs are titles or
#: quoted sentences, whose words are no keywords.
MAX_LATIN_TERM_WORDS = 3
# A Latin gloss in brackets right after Chinese text (大语言模型（LLMs，large language models）)
# repeats the Chinese term: it is not counted again.
_HAN_RUN_AT_END = re.compile(r"[\u4e00-\u9fff]{1,16}$")
_GLOSS_PAREN = re.compile(
    r"(?<=[\u4e00-\u9fff])[（(][^（）()\u4e00-\u9fff\n]*[A-Za-z][^（）()\u4e00-\u9fff\n]*[）)]"
)
# A line end not preceded by sentence or clause punctuation.
_LINE_END = re.compile(r"(?<=[^\s.!?:;,])[ \t]*\n")
_MARKDOWN = re.compile(r"[*_#>`|]+|!?\[([^\]]*)\]\([^)]*\)")

#: Chinese words that jieba's general IDF table ranks high in a paper write-up but that say
#: nothing about a paper's topic: the discourse words of the write-ups (this paper, the
#: authors, propose, show, method, result ...), and the nouns and verbs every article about a
#: machine-learning paper uses (model, training, data, task, performance ...). The words of
#: :data:`ZH_STOP_WORDS` are dropped as well.
ZH_GENERIC_WORDS = frozenset(
    # discourse words of paper write-ups (kept from pipeline.extract.GENERIC_WORDS)
    "本文 该文 本研究 该研究 论文 该论文 本论文 作者 他们 我们 研究 研究者 方法 提出 结果 实验 表明 发现 "
    "进行 通过 以及 这些 这种 一种 其中 此外 同时 然而 因此 "
    # the same in Taiwan usage (written in Simplified characters after conversion)
    "透过 借由 藉由 该篇 本篇 "
    # more discourse words: summaries, claims, hedges
    "此类 该类 这类 诸如 要么 基于 相较 相比 相对 首次 首先 其次 最后 总结 总体 综合 具体 具体而言 进一步 "
    "深入 系统性 全面 显著 明显 有效 高效 重要 关键 核心 主要 广泛 普遍 新颖 创新 突破 贡献 意义 启示 "
    "价值 影响 深远 视角 角度 层面 方面 领域 背景 动机 现象 情况 条件 情境 场景 过程 阶段 问题 挑战 局限 "
    "限制 瓶颈 思路 途径 方向 手段 工具 框架 方案 策略 机制 技术 理论 分析 验证 实证 评估 实验结果 "
    "作者团队 研究成果 研究者们 学界 业界 社群 读者 "
    # verbs and adjectives of write-ups that name no topic (provide, solve, reach, show, ...)
    "提供 解决 达成 忽视 证明 展示 揭示 探讨 探索 采用 引入 构建 建立 包括 涵盖 改进 增强 推动 保证 "
    "完整 现实 真实 标准 步骤 设置 情形 程度 整体 方式 形式 类型 特定 多种 简单 稳定 强大 优异 主动 "
    "互动 回应 识别 估计 解释 观察 调整 成功 实务 带来 面临 面对 导致 意味着 意味著 强烈建议 高质量 "
    "高品质 优势 潜力 "
    # nouns and verbs every ML write-up uses
    "模型 训练 数据 资料 算法 演算法 任务 性能 效能 效果 表现 能力 提升 提高 改善 优化 设计 应用 使用 "
    "利用 实现 生成 学习 系统 结构 架构 参数 指标 基准 基线 样本 输入 输出 规模 人工智慧 "
    "AI".split()
)
#: Chinese stop words: spaCy's list for Chinese (``spacy.lang.zh.stop_words``).
ZH_STOP_WORDS = frozenset(_SPACY_ZH_STOP_WORDS)
#: English stop words: spaCy's list for English plus the words of paper write-ups that say
#: nothing about a paper's topic (kept from pipeline.extract) and the finite verbs write-ups use
#: most (the English pipeline has no tagger to find verbs). YAKE never starts or ends a
#: candidate with one of them.
EN_STOP_WORDS = frozenset(_SPACY_EN_STOP_WORDS) | frozenset(
    "paper papers study studies work works author authors propose proposes proposed show shows "
    "showed shown method methods result results approach approaches new using based "
    "researchers researcher colleagues team teams unlike "
    # finite verbs of write-ups (a phrase around one is a clause:  "LoRA replaces", "field learns")
    "uses makes lets gives gave brings finds found turns grows happens replaces combines learns "
    "improves improve allows enables achieves introduces adopts adopted reaches reaching beats "
    "prefers prefer takes loses generates need needs let".split()
)
#: English nouns every ML write-up uses, and the words of award announcements: a keyword made
#: of these words only (``models``, ``deep learning``, ``large language models`` -- as generic as
#: LLM --, ``test of time award``) is dropped, but
#: they may stand inside a longer keyword (``diffusion models``, ``reinforcement learning``).
EN_GENERIC_WORDS = frozenset(
    "model models token tokens data ai ml llm llms large language deep learning machine network networks neural "
    "training task tasks performance benchmark benchmarks dataset datasets "
    "year years conference award awards prize outstanding best honorable honourable mention "
    "runner runners up committee time test track main".split()
)


_WORD_SEPARATORS = re.compile(r"[\s-]+")


@functools.lru_cache(maxsize=65536)
def _is_generic_latin(term: str) -> bool:
    """True when every word of ``term`` is a stop word or a generic word (cached per term)."""
    words = _WORD_SEPARATORS.split(term.lower())
    return all(w in EN_STOP_WORDS or w in EN_GENERIC_WORDS for w in words if w)


def _strip_noise(text: str) -> str:
    """``text`` without TeX math, URLs and Markdown markup (each replaced by a space, so no
    word is glued to its neighbour)."""
    text = _TEX_MATH.sub(" ", text)
    spans = _url_spans(text)
    if spans:
        parts, pos = [], 0
        for s, e, _ in spans:
            parts += [text[pos:s], " "]
            pos = e
        text = "".join([*parts, text[pos:]])
    return _MARKDOWN.sub(lambda m: f" {m.group(1) or ''} ", text)


def _blank(m: re.Match[str], keep: int | None = None) -> str:
    """The match as spaces of the same length (keeping group ``keep`` as written)."""
    if keep is None or m.group(keep) is None:
        return " " * len(m.group())
    return " " * (m.start(keep) - m.start()) + m.group(keep) + " " * (m.end() - m.end(keep))


def _mask_noise(text: str) -> str:
    """:func:`_strip_noise` that keeps every offset: TeX math, URLs and Markdown markup become
    as many spaces (a link keeps its text in place). Used for Chinese keywords, whose jieba
    tokens come as offsets into the text (see :func:`keywords`)."""
    text = _TEX_MATH.sub(_blank, text)
    for s, e, _ in _url_spans(text):
        text = text[:s] + " " * (e - s) + text[e:]
    return _MARKDOWN.sub(lambda m: _blank(m, 1), text)


@functools.lru_cache(maxsize=16384)
def _whole_word(term: str) -> re.Pattern[str]:
    """``term`` as a case-insensitive whole-word pattern (no ASCII letter or digit on either
    side), compiled once per term: these patterns are built per keyword candidate, and left to
    :mod:`re`'s own 512-entry cache they would evict every other compiled pattern."""
    return re.compile(rf"(?<![A-Za-z0-9]){re.escape(term)}(?![A-Za-z0-9])", re.I)


#: Non-ASCII characters that a case-insensitive ``re`` pattern of ASCII letters matches (İ, ı,
#: ſ, Kelvin sign; :data:`pipeline.fields._CASE_EXTRA`): a text holding one is searched with
#: :func:`_whole_word`'s pattern.
_IGNORECASE_EXTRA = _CASE_EXTRA
_IGNORECASE_EXTRA_RE = re.compile(f"[{''.join(_IGNORECASE_EXTRA)}]")
_ASCII_ALNUM = frozenset(string.ascii_letters + string.digits)


def _flat_lower(text: str) -> str | None:
    """``text.lower()`` when ``text`` is "flat" for :func:`_whole_word_spans` (its lower case
    keeps its length and it holds none of :data:`_IGNORECASE_EXTRA`), else ``None``."""
    low = text.lower()
    return low if len(low) == len(text) and _IGNORECASE_EXTRA_RE.search(text) is None else None


def _whole_word_spans(term: str, text: str, flat_lower: str | None = None) -> Iterator[tuple[int, int]]:
    """``(start, end)`` of the matches of :func:`_whole_word` ``(term)`` in ``text``, in order:
    a case-insensitive search of the lower-cased strings with the same boundary test when both
    allow it (an ASCII term, a text whose lower case keeps its length and holds none of
    :data:`_IGNORECASE_EXTRA`), else the compiled pattern. ``flat_lower``: :func:`_flat_lower`
    of ``text`` when the caller searches one text for many terms (``None``: computed here)."""
    low = flat_lower if flat_lower is not None else _flat_lower(text)
    if not term.isascii() or low is None or not term:
        for m in _whole_word(term).finditer(text):
            yield m.span()
        return
    key, k, n = term.lower(), len(term), len(text)
    i = low.find(key)
    while i >= 0:
        if (i == 0 or text[i - 1] not in _ASCII_ALNUM) and (i + k == n or text[i + k] not in _ASCII_ALNUM):
            yield i, i + k
            i = low.find(key, i + k)
        else:
            i = low.find(key, i + 1)


#: What may stand between a sentence end and the word a sentence opens with (see :func:`_cased`).
_LEAD_CHARS = frozenset(" \t\"'“‘(（*#>-•·")


_ASCII_LETTER = re.compile(r"[A-Za-z]")


def _cased(term: str, text: str, flat_lower: str | None = None) -> str:
    """The case a keyword is returned in.

    A Latin keyword is lower-cased when ``text`` writes it in lower case somewhere (``score
    matching``). Otherwise it keeps the case of its first occurrence that is not at a sentence
    start (``Gaussian Process``, ``ResNet``, ``RLHF``, ``ImageNet``); a phrase seen only
    at sentence starts is lower-cased when only its first letter is upper case (``Sharp
    jumps`` -> ``sharp jumps``), and a single word seen only there keeps its case (``Hinton``:
    names open sentences more often than common words become keywords). A term with no Latin
    letter is returned as given. ``flat_lower``: :func:`_flat_lower` of ``text`` when the
    caller cases several terms of one text.
    """
    if _ASCII_LETTER.search(term) is None:
        return term
    low = term.lower()
    surface = None
    for a, b in _whole_word_spans(term, text, flat_lower):
        group = text[a:b]
        if group == low and low != group.upper():
            return low
        if surface is None:
            # the character before the match, skipping spaces, quotes, brackets and bullets
            # (text[:a].rstrip(...)[-1:], without copying the text)
            j = a - 1
            while j >= 0 and text[j] in _LEAD_CHARS:
                j -= 1
            if j >= 0 and text[j] not in ".!?。！？\n":
                surface = group
    if surface is None:  # only at sentence starts: "Sharp jumps" -> "sharp jumps", "Hinton" kept
        return low if " " in term and term[1:] == term[1:].lower() else term
    return surface


_NO_BIGRAMS: frozenset[tuple[str, str]] = frozenset()


@functools.lru_cache(maxsize=16384)  # ~400 bytes an entry (a frozenset of bigrams): ~6 MiB full
def _dedup_facts(cand: str) -> tuple[str, bool, bool, bool, frozenset[tuple[str, str]], int]:
    """What :func:`_dedup` reads of one candidate whatever the others: ``(lower case, has a Han
    character, ASCII, flat, bigrams of its lower-cased words, length)`` (see there). A pure
    function of the candidate, cached: the common terms of a corpus come back in many sections."""
    low = cand.lower()
    asc = cand.isascii() and cand != ""
    han = not asc and _HAN.search(cand) is not None
    words = low.split()
    return (low, han, asc, len(low) == len(cand) and (asc or _IGNORECASE_EXTRA_RE.search(cand) is None),
            frozenset(zip(words, words[1:], strict=False)) if len(words) > 1 else _NO_BIGRAMS, len(cand))


def _dedup(ranked: list[str], n: int, cjk: bool) -> list[str]:
    """The first ``n`` of ``ranked`` without repeats: a candidate contained in a kept keyword is
    skipped, and a candidate among the first ``REPLACE_WINDOW * n`` that contains kept
    keywords replaces them at the first one's rank (扩散模型 replaces an earlier 扩散).
    Containment is substring containment for Han text and whole-word containment
    (case-insensitive) for Latin text; a Latin phrase that shares two consecutive words with a
    kept one is skipped too."""

    window = ranked[: REPLACE_WINDOW * n]
    # Per candidate: (lower case, Han substring test, ASCII, flat, bigrams of its lower-cased
    # words, Han, length). The containment tests with their cheap cases first: a Han term (when cjk)
    # is a substring; an ASCII term b stands in a text a only when b's lower case is inside
    # a's, whenever a is "flat" (its lower case keeps its length and it holds none of
    # _IGNORECASE_EXTRA: _whole_word_spans then searches the lower-cased strings), so that
    # substring test comes before the whole-word test. Plain loops: this runs per section.
    # A match of either test is as long as the term (re's case-insensitive match compares one
    # character with one), so a term longer than the text is not tested.
    info: dict[str, tuple[str, bool, bool, bool, frozenset[tuple[str, str]], bool, int]] = {}
    for cand in window:
        if cand in info:
            continue
        low, han, asc, flat, bigrams, length = _dedup_facts(cand)
        info[cand] = (low, cjk and han, asc, flat, bigrams, han, length)

    kept: list[str] = []
    # (keyword, lower case, Han substring test, ASCII, flat, length) of each kept keyword
    kept_info: list[tuple[str, str, bool, bool, bool, int]] = []
    # The kept keywords joined by newlines: a candidate without a newline is a substring of a
    # kept keyword exactly when it is one of this string (no match can span a separator).
    joined = ""
    grams: frozenset[tuple[str, str]] = _NO_BIGRAMS  # the kept keywords' bigrams together
    for cand in window:
        low, s_cand, a_cand, f_cand, g_cand, h_cand, n_cand = info[cand]
        if s_cand and "\n" not in cand:
            skip = cand in joined
        else:
            skip = False
            for k, lk, _, _, fk, nk in kept_info:  # a candidate inside a kept keyword is skipped
                if nk < n_cand:
                    continue
                if s_cand:
                    skip = cand in k
                else:
                    skip = ((not (a_cand and fk) or low in lk)
                            and next(_whole_word_spans(cand, k, lk if fk else None), None) is not None)
                if skip:
                    break
        if not skip and not h_cand and g_cand:
            # a shifted window over a kept phrase (private training algorithm)
            skip = not g_cand.isdisjoint(grams)
        if skip:
            continue
        inner = []  # kept keywords inside the candidate
        flat = low if f_cand else None
        for i, (k, lk, sk, ak, _, nk) in enumerate(kept_info):
            if nk > n_cand:
                continue
            if sk:
                if k in cand:
                    inner.append(i)
            elif ((not (ak and f_cand) or lk in low)
                  and next(_whole_word_spans(k, cand, flat), None) is not None):
                inner.append(i)
        if inner:
            kept[inner[0]] = cand
            kept = [k for i, k in enumerate(kept) if i not in inner[1:]]
            kept_info = [(k, *info[k][:4], info[k][6]) for k in kept]
            joined = "\n".join(kept)
            grams = _NO_BIGRAMS.union(*(info[k][4] for k in kept))
        elif len(kept) < n:
            kept.append(cand)
            kept_info.append((cand, low, s_cand, a_cand, f_cand, n_cand))
            joined = "\n".join(kept)
            grams = grams | g_cand if g_cand else grams
    return kept[:n]


# ---------------------------------------------------------------------------------------------
# Topic priors: the title, credited people and institutions, marked terms
# ---------------------------------------------------------------------------------------------

#: Factor on the score of a candidate that the section's title names: a Latin term whose words
#: stand in the title in that order (``contrastive learning``, ``Gaussian Process``), or an
#: acronym of consecutive title words (GAN, VAE, ViT). See :func:`_topic`.
TITLE_BOOST = 4.0
#: Factor on the score of a Chinese term the text marks with quotation marks (「不可能语言」,
#: 「暂存器」): write-ups quote the terms a paper coins or defines.
QUOTED_BOOST = 2.0
#: Fewest occurrences of two adjacent Chinese words for their compound to be a candidate
#: (视频 + 分割 -> 视频分割).
MIN_COMPOUND_COUNT = 2

#: A Latin token that reads as a name of a method, system or dataset rather than a word: an
#: acronym (LoRA, RLHF, GPUs), a word with an inner capital (AlexNet, ResNet, BiLSTM) or a
#: word with a digit (word2vec, GPT-2).
_NAME_LIKE = re.compile(
    r"(?:[A-Z][A-Z0-9]+s?|[A-Za-z]*[a-z][A-Z][A-Za-z0-9]*|[A-Za-z]+[0-9][A-Za-z0-9]*)"
    r"(?:-[A-Za-z0-9]+|(?<=[0-9])\.[0-9][A-Za-z0-9]*)*"
)
_TITLE_WORD = re.compile(r"[A-Za-z0-9]+(?:['’-][A-Za-z0-9]+)*")
# A paper title quoted in the text: 《…》, 〈…〉, “…” or "…" holding a Latin letter.
_QUOTED_TITLE = re.compile(r"[《〈“\"]([^《》〈〉“”\"\n]{0,200}?[A-Za-z][^《》〈〉“”\"\n]{0,200}?)[》〉”\"]")
# A Chinese term in quotation marks: 2-8 Han characters (2-6 are kept, see :func:`_quoted_terms`).
_QUOTED_TERM = re.compile(r"[「『“\"‘]([\u4e00-\u9fff]{2,8})[」』”\"’]")
#: Characters of function words (particles, conjunctions, prepositions, copulas): a quoted
#: text holding one is a phrase or a clause (「最小但具代表性」), not a term.
_FUNCTION_CHARS = re.compile(r"[的了是在和与及或但而且就都也把被让从对向为着过吗呢吧之其所个]")
#: Degree adverbs cut from the start of a quoted term.
_DEGREE_ADVERBS = frozenset("最更较很")
_SENTENCE_SPLIT = re.compile(r"(?<=[。！？；!?;])|(?<=\.)\s+")
#: A character after which :data:`_SENTENCE_SPLIT` may cut.
_SENTENCE_SPLIT_MARK = re.compile(r"[。！？；!?;.]")


class _Topic(NamedTuple):
    """What a section says about its own topic apart from the counts of its words.

    Attributes:
        titles: casefolded word tuples of the title lines (:func:`_topic`), a final ``s`` cut
            from words longer than 3 letters.
        han_title: the first line when it is a title line with Han characters (语言模型会抗拒
            对齐：来自语言建模的证据), else ``""``.
        initials: the capitalised initials of each title's words, with and without the stop
            words (``GAN`` for Generative Adversarial Nets, ``RLFHF`` and ``RLHF``): an acronym
            of 2-6 consecutive title words is a substring of one (:func:`_in_title`).
        names: casefolded names of the people and institutions credited in the text.
        name_words: casefolded words of the credited people's names (``goodfellow``).
    """

    titles: tuple[tuple[str, ...], ...]
    han_title: str
    initials: tuple[str, ...]
    names: frozenset[str]
    name_words: frozenset[str]


def _stem(word: str) -> str:
    w = word.casefold()
    return w[:-1] if len(w) > 3 and w.endswith("s") and not w.endswith("ss") else w


_SENTENCE_END = re.compile(r"[。！？.!?；;]$")


def _topic(text: str, line_credit: dict[str, Credit | None] | None = None) -> _Topic:
    """The title prior and the credited names of a section text.

    Title lines: the first non-empty line when it reads as a heading (at most 200 characters,
    no sentence punctuation at its end, not a credit line), every other line without Han
    characters and sentence punctuation at its end that has 2+ words (a Latin title repeated
    in a Chinese section), and every quoted text with a Latin letter (《Generative Adversarial
    Nets》, "Towards Robust Language Models"). Names: the authors and institutions that
    :func:`pipeline.credits.find_credit` reads in each sentence and
    :func:`pipeline.credits.parse_credit_line` in each line.

    ``line_credit``: a dict that receives each stripped non-empty line's
    :func:`~pipeline.credits.parse_credit_line` (so a caller that needs them too does not parse
    the lines again); lines already in it are not parsed again.
    """
    lines = [ln.strip() for ln in text.split("\n") if ln.strip()]
    line_credit = {} if line_credit is None else line_credit
    for ln in lines:
        if ln not in line_credit:
            line_credit[ln] = parse_credit_line(ln)
    titles: list[str] = []
    han_title = ""
    for k, ln in enumerate(lines):
        if len(ln) > 200 or _SENTENCE_END.search(ln) or line_credit[ln] is not None:
            continue
        if k == 0 or (not _HAN.search(ln) and len(_TITLE_WORD.findall(ln)) >= 2):
            titles.append(ln)
            han_title = ln if k == 0 and _HAN.search(ln) else han_title
    titles += [m.group(1) for m in _QUOTED_TITLE.finditer(text)]
    tuples, initials = [], []
    for t in titles:
        words = _TITLE_WORD.findall(t)
        if not words:
            continue
        tuples.append(tuple(_stem(w) for w in words))
        content = [w for w in words if w.lower() not in EN_STOP_WORDS]
        # (without stop words: the same acronyms again when the title has none)
        for ws in (words, content) if len(content) != len(words) else (words,):
            initials.append("".join(w[0].upper() for w in ws))
    names, name_words = set(), set()
    for ln in lines:
        credits = [line_credit[ln], _find_credit(ln)]
        # a sentence that is the whole line has its credit already (the names are sets); a line
        # without a mark before its last character is one sentence (the split's lookbehinds
        # cost a test at every character, so it runs only when a mark is there)
        if _SENTENCE_SPLIT_MARK.search(ln, 0, len(ln) - 1):
            credits += [_find_credit(s) for s in _SENTENCE_SPLIT.split(ln) if s != ln and s.strip()]
        for c in credits:
            if c is None:
                continue
            for a in c.authors:
                names.add(a.casefold())
                name_words.update(w.casefold().strip(".") for w in a.split() if len(w.strip(".")) >= 2)
            # an institution without a head word is often a misreading (来自语言建模的证据)
            names.update(i.casefold() for i in c.institutions if is_institution(i))
    return _Topic(tuple(tuples), han_title, tuple(initials), frozenset(names), frozenset(name_words))


def _in_title(term: str, topic: _Topic) -> bool:
    """Whether the title names a Latin ``term``: its words stand in a title line in that order
    (a single word only when it is name-like, :func:`_name_like`: SAM, not Towards; not a whole
    title line: that is the title, not a term of it), or it is an acronym of consecutive title
    words (a plural ``s`` ignored: LLMs)."""
    words, acronym, name_like = _title_probe(term)
    if not words:
        return False
    if acronym:
        short = term.rstrip("s")
        # an acronym of 2-6 consecutive title words: a substring of a title's initials (tested
        # here, for the few acronym-like terms, rather than listing every substring per section)
        if 2 <= len(short) <= 6 and any(short in caps for caps in topic.initials):
            return True
    if len(words) == 1 and not name_like:
        return False  # a plain title word (Towards, Sparsity) is no term by itself
    k = len(words)
    return any(t[i : i + k] == words and len(t) > k for t in topic.titles for i in range(len(t) - k + 1))


@functools.lru_cache(maxsize=65536)
def _title_probe(term: str) -> tuple[tuple[str, ...], bool, bool]:
    """What :func:`_in_title` reads of ``term`` whatever the title: its stemmed words
    (:func:`_stem`; ``()`` for a term with a Han character or no Latin word), whether it is a
    single acronym-like word (2-6 capitals, a plural ``s``), whether it is a single name-like
    word (:func:`_name_like`). Cached per term: every candidate of every section asks."""
    words = tuple(_stem(w) for w in _TITLE_WORD.findall(term))
    if not words or _HAN.search(term):
        return (), False, False
    single = len(words) == 1
    return words, single and re.fullmatch(r"[A-Z]{2,6}s?", term) is not None, single and _name_like(term)


def _credited(term: str, topic: _Topic) -> bool:
    """Whether ``term`` names a credited person or institution (``Geoffrey Hinton``,
    ``Hinton``, ``普林斯顿大学``) or any institution (:func:`pipeline.fields.is_institution`:
    新加坡国立大学, Sea AI Lab)."""
    low, institution, words = _credit_probe(term)
    if low in topic.names or institution:
        return True
    return bool(words) and topic.name_words.issuperset(words)


@functools.lru_cache(maxsize=65536)
def _credit_probe(term: str) -> tuple[str, bool, tuple[str, ...]]:
    """What :func:`_credited` reads of ``term`` whatever the text: its casefolded form, whether
    it is an institution, its casefolded words without dots. Cached per term: the keyword
    filters ask it of every candidate of every section."""
    low = term.casefold()
    return low, is_institution(term), tuple(w.strip(".") for w in low.split())


@functools.lru_cache(maxsize=65536)
def _name_like(term: str) -> bool:
    """Whether ``term`` is a single name-like Latin token (:data:`_NAME_LIKE`) that is not a
    venue (NeurIPS, ICLR) nor generic (LLMs). Cached per term: every Latin word of every
    English section is asked."""
    return (_NAME_LIKE.fullmatch(term) is not None and not _is_generic_latin(term)
            and not find_venue_years(term))


def _words(work: str, tokens: Sequence[tuple[int, int]]) -> list[str]:
    """The words of ``tokens`` over ``work`` as jieba's ``cut`` of ``work`` would yield them:
    a token's characters that ``work`` blanks out (Latin runs, glosses, URLs, markup) split it
    and are dropped, and ``""`` stands for any whitespace between or inside tokens (it breaks
    a compound as jieba's whitespace tokens do). A list (the caller needs them all)."""
    out: list[str] = []
    add = out.append
    last = math.inf  # no gap before the first token
    for s, e in tokens:
        if s > last:
            add("")
        piece = work[s:e]
        if piece.isalnum():  # the common case (a word of letters or digits): no whitespace
            add(piece)
            last = e
            continue
        parts = piece.split()
        if len(parts) == 1 and len(parts[0]) == len(piece):  # no whitespace either
            add(piece)
        elif not parts:
            add("")
        else:
            if piece[0].isspace():
                add("")
            for k, part in enumerate(parts):
                if k:
                    add("")
                add(part)
            if piece[-1].isspace():
                add("")
        last = e
    return out


def _word_before(tokens: Sequence[tuple[int, int]] | None, text: str, start: int, end: int) -> str:
    """The last jieba word of ``text[start:end]``: the token ending at ``end`` when ``tokens``
    holds one inside the span, else jieba's cut of the span (tokens are offsets into ``text``)."""
    if tokens is not None:
        k = bisect.bisect_left(tokens, (end, end)) - 1
        while k >= 0 and tokens[k][1] > end:
            k -= 1
        if k >= 0 and tokens[k][1] == end and tokens[k][0] >= start:
            return text[tokens[k][0] : end]
    return _jieba_tokenizer().lcut(text[start:end])[-1]


def _cut_span(tokens: Sequence[tuple[int, int]] | None, text: str, start: int, end: int) -> list[str]:
    """jieba's words of ``text[start:end]``: the tokens that tile the span exactly when
    ``tokens`` has them, else jieba's cut of the span."""
    if tokens is not None:
        k = bisect.bisect_left(tokens, (start, start))
        words, pos = [], start
        while k < len(tokens) and tokens[k][0] == pos and tokens[k][1] <= end:
            words.append(text[tokens[k][0] : tokens[k][1]])
            pos = tokens[k][1]
            k += 1
        if pos == end:
            return words
    return _jieba_tokenizer().lcut(text[start:end])


def _zh_candidates(text: str, topic: _Topic | None = None,
                   tokens: Sequence[tuple[int, int]] | None = None) -> Counter[str]:
    """Candidate terms of Chinese text with their counts.

    Latin glosses in brackets after Chinese text are left out, except the items of a gloss
    that the title names (对比学习（contrastive learning） under the title "Contrastive Learning
    of Visual Representations"). Latin runs of at most :data:`MAX_LATIN_TERM_WORDS` words without
    stop words (``score matching``, ``RLHF``, ``Gaussian Process``) are one candidate each;
    the Han text between them is segmented by the jieba tokenizer with the user dictionary
    (:func:`_jieba_tokenizer`). Two adjacent Han words that occur together at least
    :data:`MIN_COMPOUND_COUNT` times are a candidate compound (视频 + 分割 -> 视频分割, 政策 + 工具
    -> 政策工具) when both are plain dictionary words (not stop words, not terms of the user
    dictionary: 缺失资料 + 版本 is no new term) and the first is not generic (提升 + 推理). A Chinese term in quotation marks (「不可能语言」; see
    :func:`_quoted_terms`) is a candidate, counted wherever it occurs. A dictionary term of 4+
    Han characters made of two candidates that each occur :data:`MIN_COMPOUND_COUNT` times on
    their own adds the count of the rarer part (视频分割 in a text about 视频 and 分割), and a
    Chinese term glossed with an acronym (大语言模型（LLMs）) adds the acronym's count.
    Dropped: tokens shorter than 2 characters, :data:`ZH_GENERIC_WORDS`, :data:`ZH_STOP_WORDS`,
    :data:`EN_STOP_WORDS`, :data:`EN_GENERIC_WORDS`, numbers, punctuation, Han words that
    are not in the dictionary (jieba's HMM guesses across a word boundary, 从粗到细 -> 粗到, when
    the text is cut here; single characters of unknown runs in the tokens of :func:`parse`,
    see :data:`JIEBA_HMM`; the user dictionary counts as dictionary), and, with ``topic``, the
    people and institutions credited in the text and any institution (:func:`_credited`).

    ``tokens``: jieba token spans over ``text`` (sorted ``(start, end)`` offsets, as a spaCy
    ``Doc`` of :func:`zh_nlp` gives them); with them jieba does not run again, without them
    the text is cut here.
    """
    tok = _jieba_tokenizer()
    counts: Counter[str] = Counter()

    def add_latin(run: str) -> None:
        term = _latin_term(run)
        if term is not None and not (topic and _credited(term, topic)):
            counts[term] = counts.get(term, 0) + 1

    aliases: list[tuple[str, str]] = []  # (Chinese term, the acronym its gloss gives)
    if topic is not None:
        for m in _GLOSS_PAREN.finditer(text):
            items = [item.strip() for item in re.split(r"[,，;；、]", m.group()[1:-1])]
            for item in items:
                if _in_title(item, topic):
                    add_latin(item)
            # the Han run (up to 16 characters) just before the gloss, looked for in those 16
            # characters only: searching all the text before each gloss made this quadratic
            window = max(0, m.start() - 16)
            before = _HAN_RUN_AT_END.search(text, window, m.start())
            term = _word_before(tokens, text, before.start(), m.start()) if before else ""
            if len(term) >= 3 and tok.FREQ.get(term) and term not in ZH_GENERIC_WORDS:
                aliases += [(term, item) for item in items if re.fullmatch(r"[A-Z]{2,6}s?", item)]
    # glosses and Latin runs become blanks of their length, so token offsets still apply and
    # Han words are not joined across them
    text = _GLOSS_PAREN.sub(lambda m: "\n" + " " * (len(m.group()) - 1), text)
    pieces, pos = [], 0
    for m in _LATIN_RUN.finditer(text):
        pieces.append(text[pos : m.start()])
        pieces.append("\n" + " " * (m.end() - m.start() - 1))
        pos = m.end()
        add_latin(m.group())
    pieces.append(text[pos:])
    work = "".join(pieces)

    # The words in order, each distinct one (as jieba or _words gives it) judged once: its
    # stripped form's verdict (_zh_word_verdict, then the credited-name test, which depends on
    # the text). Counted words go in at their first occurrence, with all their occurrences
    # (Counter counts the sequence in C).
    raws = cut_protected(tok, work) if tokens is None else _words(work, tokens)
    plain: dict[str, str] = {}  # raw word -> stripped, for the plain words (Han at both ends)
    opens: set[str] = set()  # raw plain words that may open a compound
    # _credited(w, topic), inlined: it is asked of every distinct word
    names = topic.names if topic is not None else frozenset()
    name_words = topic.name_words if topic is not None else frozenset()
    count_of = counts.get  # (a Counter's own += calls __missing__ for every new word)
    for raw, c in Counter(raws).items():
        w, is_plain, may_open, counted, probe = _zh_raw_verdict(raw)
        if counted:
            if topic is not None:
                low, institution, words = probe
                if low in names or institution or (words and name_words.issuperset(words)):
                    counted = False
            if counted:
                counts[w] = count_of(w, 0) + c
        if is_plain:
            plain[raw] = w
            if may_open:
                opens.add(raw)
    # two adjacent plain words, the first not generic: a compound candidate
    pairs = Counter([plain[a] + plain[b] for a, b in zip(raws, raws[1:], strict=False)
                     if a in opens and b in plain])
    for pair, c in pairs.items():
        if c >= MIN_COMPOUND_COUNT and pair not in counts:
            counts[pair] = c
    for term in _quoted_terms(text, tokens):
        counts[term] = max(counts[term], text.count(term))
    # A dictionary term made of two candidates the text uses on their own stands for them:
    # 视频分割 (once) in a text about 视频 (many times) and 分割 (fewer) counts the rarer part.
    for term in [t for t in counts if len(t) >= 4 and _HAN.fullmatch(t[0]) and tok.FREQ.get(t)]:
        parts = [min(counts[term[:i]], counts[term[i:]]) for i in range(2, len(term) - 1)
                 if counts.get(term[:i], 0) >= MIN_COMPOUND_COUNT and counts.get(term[i:], 0) >= MIN_COMPOUND_COUNT]
        counts[term] += max(parts, default=0)
    for term, acronym in set(aliases):  # 大语言模型（LLMs）: the term counts the acronym's uses too
        if counts[term] and counts[acronym]:
            counts[term] += counts[acronym]
    return counts


@functools.lru_cache(maxsize=65536)
def _latin_term(run: str) -> str | None:
    """The candidate term of a Latin run of Chinese text (its words, see :func:`_zh_candidates`):
    None for more than :data:`MAX_LATIN_TERM_WORDS` words, a phrase with function words
    (:data:`EN_STOP_WORDS`; one word left of it is the term), a term under 2 characters or a
    generic one (:data:`ZH_GENERIC_WORDS`, :func:`_is_generic_latin`). A pure function of the
    run, cached: acronyms and names come back in many sections."""
    words = run.split()
    if len(words) > MAX_LATIN_TERM_WORDS:
        return None
    if any(w.lower() in EN_STOP_WORDS for w in words):
        words = [w for w in words if w.lower() not in EN_STOP_WORDS]
        if len(words) != 1:
            return None  # a phrase with function words: no term
    term = " ".join(words)
    if len(term) >= 2 and term not in ZH_GENERIC_WORDS and not _is_generic_latin(term):
        return term
    return None


@functools.lru_cache(maxsize=65536)
def _zh_word_verdict(w: str) -> tuple[bool, bool, bool, bool]:
    """What :func:`_zh_candidates` needs to know of one jieba word ``w`` (stripped):
    ``(han, plain, opens, counted)``: Han characters at both ends; a plain word (a dictionary
    word of 2+ characters, not a stop word, not a term of the user dictionary, not a number);
    a plain word that is not generic, so it may open a compound; a candidate (2+ characters, not
    generic, not a stop word, not a number or punctuation, a Han word only when in the
    dictionary) unless the text credits it (that test, :func:`_credited`, is the caller's).

    It depends on ``w`` and the fixed dictionaries only, so it is cached across texts: the
    common words of a corpus are judged once per process instead of once per section."""
    tok = _jieba_tokenizer()
    han = bool(w) and _HAN.fullmatch(w[0]) is not None and _HAN.fullmatch(w[-1]) is not None
    plain = han and (len(w) >= 2 and w not in ZH_STOP_WORDS and w not in _user_terms()
                     and not _NUMBER.match(w) and bool(tok.FREQ.get(w)))
    counted = not (len(w) < 2 or w in ZH_GENERIC_WORDS or w in ZH_STOP_WORDS or _is_generic_latin(w)
                   or _NUMBER.match(w) or _PUNCT_ONLY.match(w)
                   or (_HAN.search(w) and not tok.FREQ.get(w)))
    return han, plain, plain and w not in ZH_GENERIC_WORDS, counted


@functools.lru_cache(maxsize=65536)
def _zh_raw_verdict(raw: str) -> tuple[str, bool, bool, bool, tuple[str, bool, tuple[str, ...]] | None]:
    """:func:`_zh_word_verdict` of a word as cut (``raw``, stripped first), in one cached call:
    ``(stripped, plain, opens, counted, probe)``, ``probe`` the :func:`_credit_probe` of a
    counted word (None otherwise), which :func:`_zh_candidates` tests against the text's
    credited names."""
    w = raw.strip()
    _, plain, opens, counted = _zh_word_verdict(w)
    return w, plain, opens, counted, _credit_probe(w) if counted else None


@functools.cache
def _user_terms() -> frozenset[str]:
    """The words of :func:`load_user_dict`."""
    return frozenset(w for w, _, _ in load_user_dict())


def _quoted_terms(text: str, tokens: Sequence[tuple[int, int]] | None = None) -> set[str]:
    """Chinese terms in quotation marks: 2-6 Han characters after a leading degree adverb
    (最更较很) is cut, made of dictionary words, without the character of a function word
    (:data:`_FUNCTION_CHARS`), not generic, not an institution. ``tokens``: jieba token spans
    over ``text`` (see :func:`_zh_candidates`); a quotation mark ends a jieba block, so the
    tokens inside the marks are jieba's cut of the term."""
    tok = _jieba_tokenizer()
    out = set()
    for m in _QUOTED_TERM.finditer(text):
        start = m.start(1)
        term = m.group(1)
        if term[0] in _DEGREE_ADVERBS:  # 「最弱势群体」 -> 弱势群体
            term, start = term[1:], start + 1
        if (not 2 <= len(term) <= 6 or term in ZH_GENERIC_WORDS or _FUNCTION_CHARS.search(term)
                or not all(tok.FREQ.get(p) for p in _cut_span(tokens, text, start, m.end(1)))):
            continue
        if is_institution(term):
            continue
        out.add(term)
    return out


def idf_table() -> tuple[dict[str, float], float]:
    """jieba's default IDF table (word -> IDF) and its median, as ``jieba.analyse.extract_tags``
    uses them (read at each call: ``jieba.analyse.set_idf_path`` changes them). ``jieba.analyse``
    is imported at the first call: it imports ``jieba.posseg`` and reads its IDF file (about
    1.7 s and 100 MB resident), which a run's own process does not need when worker processes
    run the stages (they load it in :func:`pipeline.workers.warm_models`)."""
    import jieba.analyse

    tfidf = jieba.analyse.default_tfidf
    return tfidf.idf_freq, tfidf.median_idf


def _zh_keywords(text: str, n: int, tokens: Sequence[tuple[int, int]] | None = None) -> list[str]:
    """jieba-style TF-IDF keywords of Chinese text (see :func:`keywords`)."""
    simplified = to_script(text, "zh-Hans")
    if tokens is not None and len(simplified) != len(text):
        tokens = None  # the conversion moved the offsets: cut the text here
    simplified = _mask_noise(simplified)
    topic = _topic(simplified)
    counts = _zh_candidates(simplified, topic, tokens)
    if not counts:
        return []
    idf, median = idf_table()
    total = sum(counts.values())
    first = {w: simplified.find(w) % (len(simplified) + 1) for w in counts}  # not found (-1): last
    quoted = _quoted_terms(simplified, tokens)
    scores = {}
    han_title = topic.han_title
    for w, c in counts.items():
        s = c / total * idf.get(w, median)
        # _in_title is False for a term with a Han character (_title_probe): that test first
        if (c >= 2 and w in han_title) if _HAN.search(w) else _in_title(w, topic):
            s *= TITLE_BOOST
        if w in quoted:
            s *= QUOTED_BOOST
        scores[w] = s
    # Case and plural variants of one Latin term (Token/token, LLMs/LLM) pool their scores
    # under the form seen first.
    keys = {w.casefold() for w in scores}
    merged: dict[str, float] = {}
    canon: dict[str, str] = {}
    for w in sorted(scores, key=lambda w: first[w]):
        key = w.casefold()
        if len(key) > 3 and key.endswith("s") and key[:-1] in keys:
            key = key[:-1]
        canon.setdefault(key, w)
        merged[canon[key]] = merged.get(canon[key], 0.0) + scores[w]
    ranked = sorted(merged, key=lambda w: (-merged[w], first[w]))
    kept = _dedup(ranked, n, cjk=True)
    # the text's lower case once for all Latin keywords (most Chinese keywords have none)
    flat = _flat_lower(simplified) if any(_ASCII_LETTER.search(w) for w in kept) else None
    return [_cased(w, simplified, flat) for w in kept]


@functools.cache
def _yake(top: int) -> KeywordExtractor:
    """A YAKE extractor (n-grams up to 3 words, ``top`` candidates, :data:`EN_STOP_WORDS`),
    built once per ``top``: the reference that :func:`_yake_extract` reproduces (the keywords
    use that; tests/test_nlp.py compares both). YAKE reads its stop words from the given set
    and never downloads anything (its lemmatizer, which needs NLTK or spaCy data, is off)."""
    import yake

    return yake.KeywordExtractor(lan="en", n=YAKE_NGRAM, dedup_lim=YAKE_DEDUP_LIM, dedup_func="seqm",
                                 window_size=YAKE_WINDOW, top=top, stopwords=set(EN_STOP_WORDS),
                                 lemmatize=False)


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
    """YAKE's tag of a word (``yake.data.utils.get_tag``; it reads the position in the
    sentence only as first word or not)."""
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
    if term.isalnum():  # no punctuation to delete (str.translate costs a dict lookup a character)
        return len(term) < 3
    return len(term.translate(_YAKE_PUNCT_DELETE)) < 3


@functools.lru_cache(maxsize=65536)
def _yake_term(low: str) -> tuple[str, bool]:
    """A word's YAKE term (its lower case ``low`` less a final ``s`` when over 3 characters)
    and whether the word makes it a stop term (``low`` or the term in :data:`EN_STOP_WORDS`,
    or the term :func:`_yake_short`). A pure function of the word, cached: every section asks
    it of each of its distinct words."""
    unique = low[:-1] if low.endswith("s") and len(low) > 3 else low
    return unique, low in EN_STOP_WORDS or unique in EN_STOP_WORDS or _yake_short(unique)


@functools.cache
def _yake_pre_filter():
    """``yake.data.utils.pre_filter``, imported once (an import statement in a function
    costs a lookup under the import lock on every call)."""
    from yake.data.utils import pre_filter

    return pre_filter


@functools.cache
def _yake_similarity():
    from yake import KeywordExtractor

    return KeywordExtractor._ultra_fast_similarity


def _yake_extract(text: str, top: int) -> list[tuple[str, float]]:
    """YAKE keywords of ``text``: the same ``(keyword, score)`` list, best (lowest) score
    first, as ``yake.KeywordExtractor(lan="en", n=3, dedup_lim=0.9, dedup_func="seqm",
    window_size=1, top=top, stopwords=EN_STOP_WORDS, lemmatize=False).extract_keywords(text)``
    (yake 0.7; :func:`_yake` builds that extractor, and tests/test_nlp.py checks that both
    agree), computed with plain dicts and lists instead of the package's per-term objects and
    networkx co-occurrence graph, about five times faster.

    Steps, as the package takes them (Campos et al. 2020): the package's own pre-filter and
    segtok sentence splitter and tokenizer (``yake.data.utils``); per word its tag (``d``
    digit, ``u`` unusual, ``a`` acronym, ``n`` capitalised inside a sentence, ``p`` plain),
    its term (lower case, a final ``s`` cut from words over 3 letters; a stop word, or under 3
    letters without punctuation, is a stop term), co-occurrence with the word before it in its
    block (punctuation ends a block; ``d``/``u`` tokens take no part) and the candidates of 1-3
    words ending at it; term scores ``H = WPos * WRel / (WCase + WFreq / WRel + WSpread /
    WRel)``; candidate scores ``prod(H) / ((sum(H) + 1) * TF)`` with stop words inside weighted
    by their co-occurrence probabilities; candidates starting or ending with a stop term, or
    holding a ``d``/``u`` token in every occurrence, are dropped; then the near-duplicate
    filter (:func:`_yake_similar`) down to ``top``.
    """
    if not text:
        return []
    sentences = _yake_sentences(_yake_pre_filter()(text.replace("\n", " ")))
    n_sent = len(sentences)
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
    # One pass over the words. The candidates (n-grams, n <= YAKE_NGRAM = 3) and the
    # co-occurrence window (YAKE_WINDOW = 1) end at the current word, so the two words before
    # it in its block are all that is kept of the block. A candidate's key is its lower case:
    # its words' lower cases joined by a space (str.lower maps each character alone but for
    # the final sigma, whose context a space ends).
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
            # candidates ending at this word: itself, then with 1 and 2 words before it; ok:
            # no digit or unusual token in this occurrence (nor a co-occurrence without). One
            # that starts or ends with a stop term is never scored, so it is not kept at all
            # (for speed: most n-grams of a text touch a stop word).
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
    valid_tfs = [f for f, s in zip(tf, is_stop, strict=True) if not s]
    if not valid_tfs:
        return []
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
    # the same float operations per term as written out in YAKE, with the logarithms of the
    # (few distinct) counts and median positions looked up once per section
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
        # numpy.median of sorted ints: the middle one, or the mean of the two middle ones (their
        # sum is exact, so this is numpy's float; numpy.median costs ~20 us a call)
        med = occ[mid] if len(occ) % 2 else (occ[mid - 1] + occ[mid]) / 2
        wpos = log_pos.get(med)
        if wpos is None:
            wpos = log_pos[med] = log(log(3.0 + med))
        h.append((wpos * wrel) / (wcase + (wfreq / wrel) + (wspread / wrel)))
    scored: list[tuple[float, str, str]] = []
    for key, (kw, ok, terms, ctf) in cands.items():
        if not ok:  # (candidates with a stop term at either end were never kept)
            continue
        # YAKE's sum and product over the words (from 0.0 and 1.0: the first step gives the
        # first word's value exactly), written out per length: the ends are no stop terms, so
        # only the middle word of a trigram can be one (weighted by the probabilities of its
        # co-occurrences with its neighbours)
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
    # a kept key can be a near-duplicate only with the same first and last character, or when
    # both are at most 3 characters long (the pre-filter of _yake_similar)
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
    """``(mean, standard deviation)`` of a non-empty list of counts (floats holding whole
    numbers), the same floats as ``numpy.array(counts).mean()`` and ``.std()`` without the
    ~15 us of Python those spend per call: the sum of whole numbers is exact in any order, so
    the mean is numpy's; the deviation takes numpy's own steps (``numpy/_core/_methods.py``,
    ``_var``): deviations squared, summed by numpy's pairwise ``add.reduce``, divided by n,
    square root (correctly rounded in :mod:`math` and numpy alike). tests/test_nlp.py compares
    both."""
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
    """An upper-case letter at the end (``$``: or before a final newline), as segtok's
    ``MIDDLE_INITIAL_END`` (``\\b\\p{Lu}\\p{Ll}+\\W+\\p{Lu}$``) needs one; searched from two
    characters before the end, it tells cheaply that the pattern cannot match."""
    import regex

    return regex.compile(r"\p{Lu}$", regex.UNICODE)


@functools.cache
def _initial_end():
    """The initial that segtok's ``ABBREVIATIONS`` (alternative 4: ``A.-A``, ``A.A``, ``A``
    after a title, a name list or a bracket) needs at the end: ``[\\p{Lu}\\p{Lt}]\\p{Lm}?$``,
    searched from three characters before the end. Without it only a known abbreviation can
    match there, so :func:`_split_multi` searches a shorter tail."""
    import regex

    return regex.compile(r"[\p{Lu}\p{Lt}]\p{Lm}?$", regex.UNICODE)


#: Most distinct sentences whose YAKE tokens are kept (:func:`_yake_sentence`); an entry is a
#: sentence and its tokens, about 2.5 kB for a sentence of 70 characters (~20 MB when full).
YAKE_SENTENCE_CACHE = 1 << 13
#: ...of sentences up to this many characters (a longer one, e.g. a run-on page without full
#: stops, is tokenized each time and never held).
YAKE_CACHED_SENTENCE_CHARS = 512


def _yake_sentences(text: str) -> list[tuple[tuple[str, str | None, str], ...]]:
    """``yake.data.utils.tokenize_sentences(text)`` (yake 0.7.3: segtok's ``split_multi``
    sentences, here :func:`_split_multi`, each tokenized by :func:`_yake_sentence`, empty
    sentences left out), each token with its YAKE tag and lower case; tests/test_nlp.py checks
    that the tokens agree."""
    return [(_yake_sentence if len(s) <= YAKE_CACHED_SENTENCE_CHARS else _yake_sentence.__wrapped__)(s)
            for s in _split_multi(text) if len(s.strip()) > 0]


#: Longest match of segtok's ``ABBREVIATIONS`` pattern (segtok 1.5.11) that does not start at
#: the string's start, with room to spare: the pattern is anchored at the end (``$``), and
#: its alternatives are a known abbreviation (at most 6 characters) or a prefix of at most 10
#: characters (``Commander``, ``Professor`` and a space; ``, and``) and at most 6 for the
#: initials ``A.-A``, one more for a final newline before ``$``.
_ABBREVIATION_TAIL = 32
#: The same for a span that does not end in an upper-case letter (segtok's ``[\p{Lu}\p{Lt}]
#: \p{Lm}?`` before ``$``, :func:`_initial_end`): then only a known abbreviation can match
#: (at most 6 characters and a final newline).
_KNOWN_ABBREVIATION_TAIL = 10


def _split_multi(text: str) -> list[str]:
    """segtok's ``split_multi(text)`` (segtok 1.5.11, ``segtok/segmenter.py``: ``_sentences``
    over ``_abbreviation_joiner`` of the ``MAY_CROSS_ONE_LINE`` split), as a list, with the
    same steps and segtok's own patterns, but the test whether a span ends in an abbreviation
    (``ABBREVIATIONS.search(span)``, about 45 us for a span of a hundred characters, which
    segtok pays at every full stop) searches only from the last :data:`_ABBREVIATION_TAIL`
    characters of a longer span (``regex`` reads the characters before ``pos`` for ``\\b``
    and lookbehinds, and no match can start earlier) plus the one alternative anchored at
    the start that such a span can still match (``^\\d+$``). Of segtok's two-pattern tests
    (``A and B``, pure matches), the one anchored at the start of the next span, which
    rarely matches, goes first, so the unanchored search over the whole previous span
    (``BEFORE_LOWER``, ``ENDS_IN_DATE_DIGITS``, ``MIDDLE_INITIAL_END``, the last after the
    cheap test :func:`_upper_end`) mostly does not run. tests/test_nlp.py checks the
    result against segtok's on fixtures and generated text."""
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
    """YAKE's tokens of one sentence, as ``yake.data.utils.tokenize_sentences`` makes them
    (segtok's ``web_tokenizer`` and ``split_contractions``; tokens that are empty or start
    with an apostrophe and have more characters dropped), each as ``(token, tag, lower
    case)``: the tag :func:`_yake_tag` gives at its position, ``None`` for a token of
    punctuation only (it ends a co-occurrence block, see :func:`_yake_extract`). A pure
    function of the sentence, cached: a corpus repeats sentences across documents
    (boilerplate, quoted abstracts), and segtok's regular expressions cost about a fifth of
    the English keywords."""
    from segtok.tokenizer import split_contractions, web_tokenizer

    tokens = [w for w in split_contractions(web_tokenizer(sentence))
              if not (w.startswith("'") and len(w) > 1) and len(w) > 0]
    return tuple((w, None, w) if not w.strip(string.punctuation) else (w, _yake_tag(w, pos > 0), w.lower())
                 for pos, w in enumerate(tokens))


#: Words that mark a clause fragment, not a term: an adverb after the first word or alone
#: (``canary examples independently``, ``training rarely finds``; ``differentially private
#: training`` is fine) or a past tense/participle at the end (``Meta AI released``,
#: ``detected``). The English pipeline has no tagger, so this goes by spelling only: ``LoRA
#: replaces`` still passes. Nouns in -ly are exempt.
_ADVERB = re.compile(r"^[a-z]{3,}ly$")
_PAST = re.compile(r"^[a-z]{2,}[^e]ed$")
_LY_NOUNS = frozenset("family anomaly assembly supply monopoly italy july reply butterfly".split())


@functools.lru_cache(maxsize=65536)
def _en_phrase_ok(phrase: str) -> bool:
    """Whether a YAKE phrase can be a keyword: no stop word anywhere (YAKE itself only keeps
    them off the ends, which lets through ``audit a differentially``), not only generic words,
    not a number or punctuation, not an institution (last word an organisation head of
    :mod:`pipeline.fields`: University, Institute, Lab, AI ...), no adverb after the first
    word, no past participle at the end. Cached per phrase (a pure function of it)."""
    words = phrase.split()
    low = [w.lower() for w in words]
    if len(phrase) < 2 or _NUMBER.match(phrase.replace(" ", "")) or _PUNCT_ONLY.match(phrase):
        return False
    if any(w in EN_STOP_WORDS for w in low) or _is_generic_latin(phrase):
        return False
    if any(_ADVERB.match(w) and w not in _LY_NOUNS for w in (low[1:] or low)) or _PAST.match(low[-1]):
        return False
    return low[-1] not in _EN_ORG_HEADS


# A Latin word not glued to a letter, digit, dot, @, apostrophe or hyphen before it.
_LATIN_TOKEN = re.compile(rf"(?<![A-Za-z0-9.@'-]){_LATIN_WORD}")

#: Most name-like tokens (:func:`_name_like`) put ahead of the YAKE phrases, as a fraction of
#: the number of keywords asked for.
EN_NAME_SHARE = 0.5


def _en_keywords(text: str, n: int) -> list[str]:
    """YAKE keywords of English text (see :func:`keywords`)."""
    stripped = _strip_noise(text)
    line_credit: dict[str, Credit | None] = {}
    topic = _topic(stripped, line_credit)
    # A credit line (Lvmin Zhang, Anyi Rao and Maneesh Agrawala, Stanford University) names
    # people, not the topic. A line without final punctuation (a heading, a name list) ends a
    # sentence: YAKE's sentence splitter (segtok) would otherwise run it into the next line.
    # (_topic has parsed every non-empty line already.)
    lines = [ln for ln in stripped.split("\n")
             if (line_credit[k] if (k := ln.strip()) in line_credit else parse_credit_line(k)) is None]
    clean = _LINE_END.sub(".\n", "\n".join(lines))
    if not clean.strip():
        return []
    # Name-like tokens (LoRA, RLHF, word2vec, AlexNet) name the paper's methods, systems and
    # data: they go first, those the title names first, then by count and position.
    names: Counter[str] = Counter()
    first: dict[str, int] = {}
    for m in _LATIN_TOKEN.finditer(clean):
        w = m.group()
        if _name_like(w) and not _credited(w, topic):
            names[w] += 1
            first.setdefault(w, m.start())
    lead = sorted(names, key=lambda w: (not _in_title(w, topic), -names[w], first[w]))
    lead = lead[: max(1, int(EN_NAME_SHARE * n))]
    ranked: list[str] = []
    seen: set[str] = set()
    for phrase, _score in _yake_extract(clean, max(30, 6 * n)):
        key = phrase.casefold()
        words = phrase.split()
        if key in seen or not _en_phrase_ok(phrase) or _credited(phrase, topic):
            continue
        if len(words) > 1 and any(w in lead for w in words):
            continue  #  "LoRA replaces": a clause around a name that is kept by itself
        seen.add(key)
        ranked.append(phrase)
    flat = _flat_lower(clean)  # once for all keywords
    return [_cased(k, clean, flat) for k in _dedup(lead + ranked, n, cjk=False)]


def keywords(text: str | Doc, lang: str, n: int, tokens: Sequence[tuple[int, int]] | None = None) -> list[str]:
    """The ``n`` topic keywords of a section.

    Args:
        text: the section text (metadata values and body); TeX math, URLs and Markdown
            markup are removed first. Or a ``Doc`` of :func:`zh_nlp` / :func:`en_nlp` (from
            :func:`parse`): its text, and for Chinese its tokens as ``tokens``.
        lang: BCP 47 tag of the text: ``en`` selects YAKE, ``zh-Hans``/``zh-Hant``/``mixed``
            select jieba (other tags: see :func:`_is_english`).
        n: how many keywords at most (``n <= 0`` gives ``[]``).
        tokens: the jieba segmentation of ``text`` already made (the tokens of the section,
            :meth:`ParsedSection.topic`), as sorted ``(start, end)`` character offsets into ``text``
            (:func:`token_spans`); Chinese keywords then use them and jieba does not run
            again. ``None``: ``text`` is segmented here. English keywords ignore them.

    Returns:
        A list of at most ``n`` distinct keywords (``str``), best first. Chinese keywords are
        in zh-Hans (the text is converted with :func:`pipeline.normalize.to_script` first;
        convert the result to the target script). Case of Latin keywords (:func:`_cased`):
        lower case when the text writes them in lower case (``score matching``, ``preference
        pairs``), else as written (``ResNet``, ``RLHF``, ``Gaussian Process``). A keyword
        contained in a better-ranked one is dropped, and a longer candidate replaces the
        keywords it contains (扩散模型, not 扩散 and 模型). ``[]`` for an empty text.

    Methods:

    * Chinese: TF-IDF as ``jieba.analyse.extract_tags`` computes it (jieba README, "基于
      TF-IDF 算法的关键词抽取"): term frequency in the section times the inverse document
      frequency of jieba's shipped IDF table (``jieba/analyse/idf.txt``), the table's median
      for unknown terms, so the user dictionary's domain terms (absent from the table) outrank
      common words such as 模型. Candidates come from :func:`_zh_candidates` (user dictionary
      active; generic words, stop words, numbers, punctuation and HMM guesses dropped).
      TF-IDF was chosen over jieba's TextRank because it scored better against hand-picked
      keywords of the seed articles (see tests/test_nlp.py).
    * English: YAKE (Campos et al., "YAKE! Keyword extraction from single documents using
      multiple local features", Information Sciences 509, 2020) as the ``yake`` package
      (0.7) computes it, with the package's tokenizer and similarity but a leaner data
      structure (:func:`_yake_extract`; same keywords and scores, about five times faster):
      candidate n-grams of 1-3 words (:data:`YAKE_NGRAM`, co-occurrence window
      :data:`YAKE_WINDOW`) scored by casing, position, frequency, context dispersion and
      sentence spread (lower is better), the best ``max(30, 6 * n)`` kept after YAKE's
      sequence-matcher dedup (threshold :data:`YAKE_DEDUP_LIM`), :data:`EN_STOP_WORDS` as the
      stop list, no lemmatizer (nothing is downloaded). Phrases are then filtered by :func:`_en_phrase_ok`
      (no stop word inside, not only :data:`EN_GENERIC_WORDS`, no institution, no adverb or
      trailing past participle) and by :func:`_dedup` (containment, shifted windows).
    """
    if isinstance(text, Doc):
        doc = text
        text = _doc_text(doc)
        if tokens is None:
            starts, ends, space = _token_arrays(doc)
            tokens = [(a, b) for a, b, sp in zip(starts, ends, space, strict=True) if not sp]
    if n <= 0 or not text or not text.strip():
        return []
    if _is_english(lang, text):
        return _en_keywords(text, n)
    return _zh_keywords(text, n, tokens)
