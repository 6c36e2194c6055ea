"""What one line of a document reads as, for the segmenter: an English title line, an award
header, a heading that names a venue edition, a heading level. Each is a predicate of the line
alone (:mod:`pipeline.segment` decides from them and the lines around)."""

from __future__ import annotations

import re

from .fields import (
    continues_value,
    find_award_label,
    find_venue_years,
    normalize_award,
    parse_key_value,
)
from .headings import (
    BILINGUAL,
    BOOK_TITLE,
)
from .textutil import Line, latin_words, plain, span_coverage, split_lines, trim_span

#: A standalone English title has at least this many Latin words.
MIN_TITLE_WORDS = 3


#: Longest English title, in characters (the longest titles of ML venues run to ~250).
MAX_TITLE_CHARS = 300


#: Longest word of a title, in characters (longer "words" are junk, not English).
MAX_TITLE_WORD_CHARS = 40


#: Share of Latin letters among letters (Latin + CJK) in a title line.
MIN_TITLE_LATIN_SHARE = 0.8


#: Longest award header line, in characters (a header is a label, not a sentence).
MAX_AWARD_HEADER_CHARS = 40


#: Longest line that names a venue with its year and is a heading, not a paper title.
MAX_VENUE_HEADING_CHARS = 60


#: Letters an award header may hold besides its label, venue and year (a counter such as 篇).
MAX_AWARD_HEADER_REST = 1


_BOLD_LINE = re.compile(r"^(?:\*\*|__)(?P<inner>[^*_].*?)(?:\*\*|__)[：:]?$")


_TITLE_LINE = re.compile(r"^(?P<title>[^\u3400-\u9fff]+?)(?:\s+(?P<deco>[\u3400-\u9fff]{1,8}))?$")
_LIST_ITEM = re.compile(r"^(?:[-*•·▪●]|\(?\d+[.)、]|[（(]\d+[）)])\s*")


_SENTENCE_END = re.compile(r"[。；;，,]$|[。！]")


def _is_title_line(s: str) -> bool:
    """Whether ``s`` is an English title standing alone (by the constants above), starting with a
    capital or digit, not ending like a sentence, maybe followed by a short Chinese decoration."""
    if len(s) > MAX_TITLE_CHARS and not "\u3400" <= s[-1:] <= "\u9fff":
        return False
    m = _TITLE_LINE.match(s)
    if not m or _LIST_ITEM.match(s) or parse_key_value(s) is not None or "://" in s:
        return False
    title = m.group("title")
    words = latin_words(title)
    if len(words) < MIN_TITLE_WORDS or title.rstrip().endswith((".", ",", ";", ":")):
        return False
    if len(title) > MAX_TITLE_CHARS or max(len(w) for w in words) > MAX_TITLE_WORD_CHARS:
        return False
    if title.isascii():
        return title[0].isupper() or title[0].isdigit()
    letters = sum(ch.isalpha() for ch in title)
    latin = sum(ch.isascii() and ch.isalpha() for ch in title)
    return letters > 0 and latin / letters >= MIN_TITLE_LATIN_SHARE and (title[0].isupper() or title[0].isdigit())


#: A count, qualifier or track in brackets after an award header: "（3 篇）", "(Datasets & Benchmarks Track)".
_HEADER_COUNT = re.compile(r"[（(][^()（）\n]{0,12}[)）]"
                           r"|[（(][^()（）\n]{0,40}(?:\btracks?\b|赛道|賽道)[^()（）\n]{0,12}[)）]", re.I)


#: Words an award header may hold besides its label: the track and the kind of list.
_HEADER_FILLER = re.compile(r"\b(?:papers?|awards?|main|track|notable|selected|the|and)\b|论文|論文"
                            r"|[\d一二两兩三四五六七八九十]*篇|首届|首屆|本届|本屆|今年|年度", re.I)


def _is_award_header(s: str) -> bool:
    """A line that is only an award label, maybe with a venue and year, a count and track words,
    at most ``MAX_AWARD_HEADER_REST`` letters left ("best papers announced" is no header); a short
    qualifier may follow a dash ("… – Main Conference"), a winner precede it ("…等团队获最佳论文")."""
    if len(s) > MAX_AWARD_HEADER_CHARS + MAX_HEADER_QUALIFIER_CHARS or _SENTENCE_END.search(s):
        return False
    if len(s) <= MAX_AWARD_HEADER_CHARS and _bare_award_header(s):
        return True
    m = _HEADER_QUALIFIER.fullmatch(s) if any(d in s for d in "–—-") else None
    if m is not None:
        return len(m.group("head")) <= MAX_AWARD_HEADER_CHARS and _bare_award_header(m.group("head"))
    won = _WON_AWARD.fullmatch(s) if _CJK_WON.search(s) else None
    return won is not None and _bare_award_header(won.group("head"))


#: A header saying who won the award below it: a short subject, a verb of winning, an award header.
_CJK_WON = re.compile(r"获|獲|摘得|拿下")


_WON_AWARD = re.compile(r"[^，,。：:！!？?]{1,16}?(?:斩获|斬獲|荣获|榮獲|获得|獲得|获|獲|摘得|拿下)(?P<head>[^:：]{2,20})")


#: An award header, a dash, and a short qualifier (a track, a category) of at most three words.
_HEADER_QUALIFIER = re.compile(r"(?P<head>.+?)\s+[–—-]\s+(?:[\w&'’.]+\s*){1,3}")


MAX_HEADER_QUALIFIER_CHARS = 25


def _bare_award_header(s: str) -> bool:
    if parse_key_value(s) is not None:
        return False
    label = find_award_label(s)
    if label is None or normalize_award(label) is None:
        return False
    rest = _HEADER_COUNT.sub(" ", s.replace(label, " "))
    for _, _, start, end in sorted(find_venue_years(rest), key=lambda v: -v[2]):
        rest = rest[:start] + " " + rest[end:]
    rest = _HEADER_FILLER.sub(" ", rest)
    return sum(ch.isalpha() for ch in rest) <= MAX_AWARD_HEADER_REST




def _english_title(t: str) -> bool:
    """Whether ``t`` reads as an English title (:func:`_is_title_line`), also in ``中文（English）``
    or ``《English》``."""
    t = t.strip()
    m = BOOK_TITLE.fullmatch(t) if t[:1] == "《" else None
    if m:
        t = m.group("inner")
    m = BILINGUAL.fullmatch(t) if "(" in t or "（" in t else None
    if m:
        return any(_is_title_line(part.strip()) for part in (m.group("a"), m.group("b")))
    return _is_title_line(t)


def _venue_heading(t: str) -> bool:
    """A short line naming a venue with its year ("**ICML 2024**"): a heading, never a title."""
    return len(t) <= MAX_VENUE_HEADING_CHARS and _names_venue_year(t)


def _names_venue_year(t: str) -> bool:
    """Whether ``t`` names a venue with its year (titles do not name their venue)."""
    return any(year is not None for _, year, _, _ in find_venue_years(t))


_BOLD_LEAD_COLON = re.compile(r"^\s*(?:\*\*|__)(?P<label>[^*_\n]{3,60})(?:\*\*|__)\s*[:：]\s*(?P<rest>.+)$")


def _described_award_header(raw: str) -> bool:
    """A bold award header then a sentence describing the award ("**Didactic Paper Award**: Paper
    that does a great job at explaining the problem.")."""
    m = _BOLD_LEAD_COLON.match(raw) if raw.lstrip().startswith(("**", "__")) else None
    if m is None or not _is_award_header(m.group("label").strip()):
        return False
    rest = m.group("rest").strip()
    words = [w for w in re.findall(r"[A-Za-z][A-Za-z'’-]{3,}", rest)]
    return bool(re.search(r"[.!?)]$", rest)) and len(words) >= 2 and sum(w[0].islower() for w in words) * 2 >= len(words)


def _heading_level(raw: str) -> int:
    """A heading line's level: 1-6 for Markdown headings, 7 for a whole bold line, 0 otherwise."""
    m = re.match(r"^(#{1,6})\s+\S", raw)
    if m:
        return len(m.group(1))
    return 7 if _BOLD_LINE.match(raw) else 0


def _names_context(raw: str) -> bool:
    """Whether a heading names a venue with its year or an award (a part of the article, not of
    one paper's explainer)."""
    s = plain(raw)
    return _names_venue_year(s) or _is_award_header(s)


_AFTER_DIGIT = re.compile(r'[0-9]"')


def _open_quotation(line: str) -> bool:
    """Whether ``line`` holds an odd number of straight double quotes, not all after a digit
    (inch marks: 'a 12" board')."""
    n = line.count('"')
    return n % 2 == 1 and len(_AFTER_DIGIT.findall(line)) < n


def wrapped_inside_marks(first: str, second: str) -> bool:
    """Whether a hard wrap split bold or a quotation (``"``, “, 《) between two adjacent lines:
    ``first`` opens it and ``second`` closes it ("**Title, On" / "more words**"); never before a
    heading or list item."""
    if second[:1] in "#>|" or _LIST_ITEM.match(second):
        return False
    # ``second`` is read before ``first``: ``first`` may be many lines joined already
    if second.count("**") % 2 and first.count("**") % 2:
        return True
    if second.count('"') % 2 and _open_quotation(first):
        return True
    for opening, closing_mark in (("《", "》"), ("“", "”")):
        closing = second.find(closing_mark)
        if closing >= 0 and opening in first and first.rfind(opening) > first.rfind(closing_mark):
            return second.find(opening, 0, closing) < 0
    return False


def labels_a_value(line: str, title: str) -> bool:
    """Whether ``title``, a candidate of ``line``, is followed by a colon and a value ("**Session**:
    Best Full Papers"; a label when repeated :data:`pipeline.segment.MIN_LABEL_REPEATS` times)."""
    text = plain(line)
    at = text.casefold().find(title.casefold())
    return at >= 0 and text[at + len(title):].lstrip()[:1] in (":", "：")


def kept_lines(text: str, dropped: list[dict]) -> list[Line]:
    """The non-blank lines of ``text`` outside the dropped spans, lines split by a hard wrap
    (:func:`wrapped_inside_marks`) or a folded YAML value (:func:`pipeline.fields.continues_value`)
    joined, newline read as a space (offsets into ``text``); fenced code is never joined."""
    covered = span_coverage((d["char_start"], d["char_end"]) for d in dropped)
    out: list[Line] = []
    follows = False  # the previous physical line was kept
    head = ""  # the first physical line of out[-1]: a folded value continues its key line
    end_at = 0  # where out[-1] ends once the lines joined to it are (joined when read: linear time)

    def last() -> Line:
        if out[-1].end != end_at:
            out[-1] = Line(out[-1].start, end_at, text[out[-1].start : end_at].replace("\r", " ").replace("\n", " "))
        return out[-1]

    fence = ""  # the marker of the fenced code block the line is in (CommonMark 4.5)
    for line in split_lines(text):
        if line.blank:
            follows = False
            continue
        start, end = trim_span(text, line.start, line.end)
        if covered(start, end):
            follows = False
            continue
        if not fence and line.stripped.startswith(("```", "~~~")):
            fence, follows = line.stripped[:3], False
        elif fence and line.stripped.startswith(fence) and not line.stripped.strip("`~ "):
            fence, follows = "", False
        if follows and not fence and (continues_value(head, line.text)
                                      or wrapped_inside_marks(last().stripped, line.stripped)):
            end_at = line.end
            continue
        if out:
            last()
        out.append(line)
        head, end_at = line.text, line.end
        follows = True
    if out:
        last()
    return out
