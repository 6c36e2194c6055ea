"""Sentence boundaries of Chinese and English text, by rule (:func:`sentence_starts`), read by
:meth:`pipeline.nlp.ParsedSection.sentence_spans`. All offsets are character offsets into the
text given."""

from __future__ import annotations

import re

from .identifiers import _url_spans
from .textutil import HAN as _HAN

# --- Sentences ------------------------------------------------------------------------------------

#: Characters that end a sentence outside quotations, brackets, book titles and URLs (``.``
#: only by :func:`_period_ends`; ASCII ``;`` never).
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
#: What may not start a sentence (``“为什么？”，`` continues it).
_CONTINUATION = frozenset("，,、；;：:。.！!？?）)]】」』”’》〉")
#: Words that a ``.`` follows without ending a sentence (lower-cased, no dot): scholarly and
#: reference abbreviations, titles of persons, months.
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
        (:func:`pipeline.identifiers.find_urls` spans) or strictly inside a matched pair of marks of
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
    """Whether the ``.`` at ``text[i]`` can end a sentence: not before a letter or digit
    (``3.5``), not after an abbreviation, a dotted form (``U.S.``) or an initial (``J. Smith``),
    not after a line-opening enumeration label (``1.``)."""
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
    """The start of the sentence after a terminal run ending at ``end``, or None at the text's end,
    before a continuation mark, or after an ASCII ``.!?`` before a lower-case letter or glued
    to the next word (unless Han follows ``?``/``!``, or ``.`` after Han: ``before``)."""
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


def sentence_starts(text: str) -> list[int]:
    """Character offsets where a sentence other than the first starts (sorted, each the offset
    of a non-space character; the whitespace before it belongs to the previous sentence).

    Rules: a line break ends a sentence unless the next line starts with a lower-case word (a
    blank line always does); nothing inside a URL or a matched pair (:func:`_protected`) does;
    ``。！？；!?`` and :func:`_period_ends`'s ``.`` do, with their closers; a quotation ending in
    one ends the sentence after its closer when that is a full stop, it opened the sentence or
    followed a colon (``他说：“好！”``), or whitespace follows (not ``所谓“为什么？”这一问题``);
    :func:`_next_start` decides where the next one starts.
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
    # only line breaks, terminals and closing quotes can end a sentence: visit those
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
