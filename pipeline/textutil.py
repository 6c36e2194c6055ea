"""Small pure text helpers shared by the stages: lines and blocks with their offsets.

All offsets are character offsets (Python ``str`` indices) into the decoded document text.
"""

from __future__ import annotations

import bisect
import functools
import itertools
import math
import re
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from importlib import resources
from itertools import repeat
from operator import mul

#: A year of the 1900s or 2000s standing alone (no digit either side).
YEAR = re.compile(r"(?<!\d)(?:19|20)\d\d(?!\d)")
_LINK_TARGET = r"\((?:[^()\n]|\([^()\n]*\))*\)"
#: A Markdown link, as regex source: its text (group ``text``) and its target in parentheses (one
#: level nested); neither part crosses the other's delimiters, so the scan is linear.
MD_LINK = rf"\[(?P<text>[^\[\]\n]*)\]{_LINK_TARGET}"
_BARE_LINK = rf"\[[^\[\]\n]*\]{_LINK_TARGET}"
#: A link in brackets ("[[Paper](url)]") or a bare one, as regex source, without groups.
MD_LINK_GROUP = rf"\[{_BARE_LINK}\]|{_BARE_LINK}"

#: One Han character (CJK unified ideographs, extension A, compatibility ideographs).
HAN = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")
_CJK_RUN = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]+")
# Every pair of adjacent CJK characters, overlapping pairs included, in order.
_CJK_BIGRAM = re.compile(r"(?=([\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]{2}))")
_LATIN_WORD = re.compile(r"[A-Za-z][A-Za-z\-']{2,}")
URL_ONLY = re.compile(r"^\W{0,3}(https?://|www\.)\S+$")
#: Characters that can forge or hide log lines: C0/C1 controls, DEL, U+2028/9, bidi overrides.
CONTROLS = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]")


@dataclass(frozen=True)
class Line:
    """One line of a document: ``text`` without its newline, at ``[start, end)``; ``stripped``
    is ``text`` without surrounding whitespace (ideographic space included)."""

    start: int
    end: int
    text: str
    stripped: str = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "stripped", self.text.strip())

    @property
    def blank(self) -> bool:
        """True when the line holds only whitespace."""
        return not self.stripped


def split_lines(text: str) -> list[Line]:
    """Lines of ``text`` with their offsets; ``end`` of a line excludes ``\\n``."""
    end = len(text)
    lines, pos = [], 0
    while pos < end:
        nl = text.find("\n", pos, end)
        stop = end if nl == -1 else nl
        lines.append(Line(pos, stop, text[pos:stop]))
        pos = stop + 1
    return lines


def data_lines(name: str) -> list[str]:
    """The lines of ``pipeline/data/<name>`` (UTF-8), stripped, blank and ``#`` lines left out."""
    text = resources.files(__package__).joinpath("data", name).read_text(encoding="utf-8")
    return [ln.strip() for ln in text.splitlines() if ln.strip() and not ln.startswith("#")]


def blocks(lines: list[Line]) -> list[list[Line]]:
    """Group lines into blocks (paragraphs): maximal runs of non-blank lines."""
    out: list[list[Line]] = []
    current: list[Line] = []
    for line in lines:
        if line.blank:
            if current:
                out.append(current)
                current = []
        else:
            current.append(line)
    if current:
        out.append(current)
    return out


def trim_span(text: str, start: int, end: int) -> tuple[int, int]:
    """Shrink ``[start, end)`` so that it neither starts nor ends with whitespace."""
    while start < end and text[start].isspace():
        start += 1
    while end > start and text[end - 1].isspace():
        end -= 1
    return start, end


def cjk_count(s: str) -> int:
    """Number of CJK unified ideographs in ``s``."""
    return sum(map(len, _CJK_RUN.findall(s)))


def latin_words(s: str) -> list[str]:
    """Latin-script words of three or more letters in ``s``."""
    return _LATIN_WORD.findall(s)


def cosine(a: Counter, b: Counter) -> float:
    """Cosine similarity of two sparse count vectors (0.0 when either is empty)."""
    if not a or not b:
        return 0.0
    if len(a) > len(b):
        a, b = b, a
    num = sum(map(mul, a.values(), map(b.get, a, repeat(0))))
    va, vb = a.values(), b.values()
    den = math.sqrt(sum(map(mul, va, va))) * math.sqrt(sum(map(mul, vb, vb)))
    return num / den if den else 0.0


#: An HTML line break, which some Markdown writes inside a line ("**Title**<br>_A, B_").
HTML_BREAK = re.compile(r"<br\s*/?>", re.I)
_MD_HEADING = re.compile(r"^#{1,6}\s+")
_MD_STRONG = re.compile(r"\*\*|__")
_MD_WRAP = re.compile(r"^[*_](?P<inner>[^*_].*[^*_])[*_]$")
#: Characters at a line's end searched for :data:`_HEADING_TAIL` (a few attribute blocks).
HEADING_TAIL_SPAN = 600
#: What closes a heading line but is no text of it: an attribute block ("{#intro .unnumbered}",
#: Pandoc, kramdown), a permalink mark ("[¶](#intro)", "¶") or an empty anchor ('<a id="tot"></a>').
_HEADING_TAIL = re.compile(r"(?:\s*\{#[A-Za-z][^{}\n]{0,200}\}|\s*\[[¶#§🔗]\]\(#[^()\s]*(?:\s+\"[^\"()]*\")?\)|\s+¶|\s*<a\s+(?:id|name)\s*=\s*[\"'][^\"'<>]*[\"']\s*>\s*</a>)+\s*$")


def plain(line: str) -> str:
    """A line without a leading ``## ``, ``**``/``__``, one ``*...*`` wrapping the whole line, a
    heading's tail (:data:`_HEADING_TAIL`) and surrounding whitespace (CommonMark 0.31, 4.2 and
    6.2). Offsets are not kept: use it to classify a line, never to cut text."""
    if "#" not in line and "*" not in line and "_" not in line and "¶" not in line and "</a>" not in line:
        return line.strip()
    s = _MD_STRONG.sub("", _MD_HEADING.sub("", line.strip())).strip()
    if s.endswith(("}", ")", "¶", ">")):  # the end only: the search is quadratic
        s = s[:-HEADING_TAIL_SPAN] + _HEADING_TAIL.sub("", s[-HEADING_TAIL_SPAN:])
    m = _MD_WRAP.match(s)
    return m.group("inner").strip() if m else s


_WORD_OR_NUMBER = re.compile(r"[A-Za-z0-9]+(?:['’.\-][A-Za-z0-9]+)*")


def text_units(s: str) -> int:
    """Length of ``s`` in script-fair units: one per CJK ideograph, one per Latin word or number
    (punctuation, spaces and symbols count nothing), so one threshold serves both scripts."""
    return cjk_count(s) + len(_WORD_OR_NUMBER.findall(s))


#: English function words, which carry no topic (stop list; van Rijsbergen 1979, ch. 2).
STOPWORDS_EN = frozenset(
    """a about above after again against all also am an and any are aren't as at be because been
    before being below between both but by can could did do does doing down during each few for
    from further had has have having he her here hers herself him himself his how however i if in
    into is it its itself just let's like may me might more most must my myself new no nor not now
    of off on once one only or other our ours ourselves out over own same she should so some such
    than that the their theirs them themselves then there these they this those through to too
    two under until up us very via was we were what when where which while who whom why will with
    would yet you your yours yourself yourselves said says say also many much well""".split()
)


def content_profile(s: str) -> Counter:
    """Bag of topic features of ``s``: CJK character bigrams (Nie et al. 2000) and lower-cased
    Latin words less :data:`STOPWORDS_EN`, plurals folded (``studies`` -> ``study``)."""
    c = Counter(_CJK_BIGRAM.findall(s))
    get = c.get
    for word, count in Counter(map(str.lower, latin_words(s))).items():
        feature = _content_word(word)
        if feature is not None:
            c[feature] = get(feature, 0) + count
    return c


@functools.lru_cache(maxsize=1 << 14)
def _content_word(word: str) -> str | None:
    """A lower-cased Latin word as a :func:`content_profile` feature: None for a stop word, the
    singular for an English plural of more than four letters (not ``-ss``, ``-us``, ``-is``)."""
    if word in STOPWORDS_EN:
        return None
    if len(word) > 4 and not word.endswith(("ss", "us", "is")):
        if word.endswith("ies"):
            return word[:-3] + "y"
        if word.endswith("s"):
            return word[:-1]
    return word


def span_coverage(spans: Iterable[tuple[int, int]]) -> Callable[[int, int], bool]:
    """Whether ``[start, end)`` lies wholly inside one of ``spans`` (``(start, end)`` pairs, any
    order, overlapping or not): O(log n) per query."""
    ordered = sorted(spans)
    starts = [a for a, _ in ordered]
    reach = list(itertools.accumulate((b for _, b in ordered), max))

    def covered(start: int, end: int) -> bool:
        k = bisect.bisect_right(starts, start)
        return k > 0 and reach[k - 1] >= end

    return covered


def escape_controls(text: str) -> str:
    """``text`` with each of :data:`CONTROLS` written as its Python escape (``\\n``, ``\\x1b``,
    ``\\u202e``), so that a file name or message cannot start a new log line or recolour a terminal."""
    return CONTROLS.sub(lambda m: m.group().encode("unicode_escape").decode("ascii"), text)


#: Entries kept per memo of a pure text function (:func:`_memoised`): the hit rate's knee
#: (bench/README.md, "Thresholds").
MEMO_ENTRIES = 16384
#: Longest argument (characters) that is memoised: longer texts are read once or twice.
MEMO_MAX_CHARS = 1000


def _memoised(copy: Callable | None = None) -> Callable:
    """Decorator: memoise a pure function of one text in a bounded LRU (:data:`MEMO_ENTRIES`;
    texts up to :data:`MEMO_MAX_CHARS`). ``copy`` copies a mutable result for each caller."""

    def decorate(fn: Callable) -> Callable:
        cached = functools.lru_cache(maxsize=MEMO_ENTRIES)(fn)

        if copy is None:
            @functools.wraps(fn)
            def memoised(text):
                if not text or len(text) > MEMO_MAX_CHARS:
                    return fn(text)
                return cached(text)
        else:
            @functools.wraps(fn)
            def memoised(text):
                if not text or len(text) > MEMO_MAX_CHARS:
                    return fn(text)
                return copy(cached(text))

        memoised.cache_clear = cached.cache_clear  # type: ignore[attr-defined]
        memoised.cache_info = cached.cache_info  # type: ignore[attr-defined]
        return memoised

    return decorate


#: Non-ASCII characters that a case-insensitive pattern of ASCII letters matches (İ, ı, ſ, K).
_CASE_EXTRA = ("\u0130", "\u0131", "\u017f", "\u212a")


def anchored_finditer(pattern: re.Pattern[str], text: str, anchors: Iterable[str]) -> Iterator[re.Match[str]]:
    r"""``pattern.finditer(text)`` for a case-insensitive pattern whose every match starts with one
    of ``anchors`` (lower case), trying ``pattern.match`` only where an anchor occurs."""
    low = text.lower()
    if len(low) != len(text) or (not text.isascii() and any(c in text for c in _CASE_EXTRA)):
        yield from pattern.finditer(text)
        return
    starts: set[int] = set()
    for anchor in anchors:
        i = low.find(anchor)
        while i >= 0:
            starts.add(i)
            i = low.find(anchor, i + 1)
    pos = 0
    for i in sorted(starts):
        if i >= pos and (m := pattern.match(text, i)) is not None:
            yield m
            pos = m.end()
