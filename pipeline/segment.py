"""Segment: cut each cleaned document into sections, one per paper, plus document context.

Every kept (not dropped) non-blank line of a document ends up in exactly one of: a section, or
the document's ``context`` (headline, lead, award headers and their intros, reference links).

Which lines start a section (:func:`choose_anchors`): every line's title candidate
(:mod:`pipeline.candidates`) scored by the title classifier (:mod:`pipeline.title_model`),
then a few rules on top (a list or table run whose majority are titles, a headline of unique
markup, a metadata block that repeats the title above it, lines of names and venue headings
never); with no candidate kept, inline mentions in prose (:func:`find_paper_mentions`), then a
page that links one arXiv paper. ``docs/segmentation.md`` describes the method.

A section runs from its anchor to the line before the next anchor, award header, reference line
(a ``参考链接：``-style key-value line, whose URL goes to ``doc_urls``) or a heading that is not a
paper and is above the anchor's level or names a venue or an award. Award headers and the text
after them up to the next anchor are context; the most recent award header gives
``ctx_award_raw``, the nearest heading naming a venue and year ``ctx_venue``/``ctx_year``
(``ctx_venue`` is ``""`` under a heading that takes the place of a venue heading at its level
and names no known venue, "# CoRL … # RSS": its papers are another venue's, not the document's).

Document venue and year (``doc_venue``, ``doc_year``) come from the venue mentions in the
context text: the venue mentioned most often with a year, and its most frequent year; a venue
named in a sentence dated with a month (``2024 年 12 月，NeurIPS…``) takes that year; with no
year, the first year the sections' prose gives it, else the year of its proceedings links; with
no venue, the proceedings it links to outside its sections or from at least half of them
(:func:`pipeline.fields.venue_from_url`).

An article without award headers may give its papers one award in its headline and lead
("The ACL 2024 best paper awards went to ..."): ``lead_award_raw`` of the sections the lead
names, else of every section (:func:`pipeline.fields.lead_award`; None when the lead names
several awards or speaks of nominees).
"""

from __future__ import annotations

import logging
import re
from collections import Counter
from contextvars import ContextVar

import pandas as pd

from . import paper_records, title_model
from .candidates import (
    ABOUT_PAPERS,
    LEADING_TAGS,
    Candidate,
    find_candidates,
    has_paper_evidence,
    labelled_names,
    title_is_part,
    venue_beside_title,
)
from .clean import front_matter_headline
from .config import Config
from .credits import names_only
from .fields import (
    find_award_label,
    find_dated_venue_years,
    find_venue_years,
    fold_title,
    lead_award,
    normalize_award,
    parse_key_value,
    split_sentences,
    venue_from_url,
)
from .headings import (
    BILINGUAL,
    BOOK_TITLE,
    ENUMERATED_HEADING,
)
from .identifiers import find_arxiv_ids, find_urls
from .names import is_institution
from .normalize import detect_script
from .stage import Stage
from .textutil import Line, latin_words, plain, span_coverage, split_lines, trim_span

log = logging.getLogger(__name__)
#: The document being segmented, for the DEBUG lines that say which headings were rejected as
#: paper titles (set by :func:`segment_documents`; None when a caller segments bare text).
_DOCUMENT: ContextVar[str | None] = ContextVar("segment_document", default=None)


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
#: Title score at which a kept title is evidence enough that a document is about a paper (a
#: paper's page: its title over its abstract, no other word of papers).
CONFIDENT_TITLE_SCORE = 0.8
#: Letters an award header may hold besides its label, venue and year (a counter such as 篇).
MAX_AWARD_HEADER_REST = 1

_MD_HEADING = re.compile(r"^#{1,6}\s+\S")
_BOLD_LINE = re.compile(r"^(?:\*\*|__)(?P<inner>[^*_].*?)(?:\*\*|__)[：:]?$")
_MENTION = re.compile(
    r"《(?P<book>[^《》\n]{2,200})》(?:\s*[（(](?:[^（）()\n]|\([^()\n]*\))+[）)])?"
    r"|[“\"](?:\*\*|__)?(?P<quoted>[A-Z][^“”\"\n*]{8,250})(?:\*\*|__)?\s*[”\"]"
    r"|‘(?P<squoted>[A-Z][^‘\n]{8,250}?)’(?![A-Za-z])"
    r"|[「『](?P<corner>[^「」『』\n]{2,200})[」』]"
)
#: An unquoted English title in prose: capitalised words (a colon may follow one), with the
#: short function words of titles between them ("Beyond Accuracy: Behavioral Testing of NLP
#: Models with CheckList"); see :func:`_title_case_spans`.
_CAP_WORD = r"(?:[A-Z0-9][\w'’-]*\w|[A-Z])"
_TITLE_FUNCTION_WORDS = (r"(?:a|an|the|of|for|and|or|in|on|with|to|via|from|at|as|into|over|under|without"
                         r"|through|towards?|beyond|is|are|not|vs\.?)")
_TITLE_CASE_SPAN = re.compile(rf"(?<![\w'’-])(?:{_CAP_WORD}['’]s\s+)*(?P<title>{_CAP_WORD}:?(?:\s+(?:{_TITLE_FUNCTION_WORDS}\s+)*{_CAP_WORD}:?)+)")
#: The owner in the possessive that may open a title-case span ("ICML 2014's ").
_VENUE_POSSESSIVE = re.compile(r"^(?:\S+\s+){0,3}?\S+['’]s\s+")
#: Fewest words, and capitalised words, of an unquoted title in prose.
MIN_PROSE_TITLE_WORDS = 4
MIN_PROSE_TITLE_CAPS = 3
#: Shortest Chinese title quoted in prose, in 《…》 or 「…」 (they also name journals, quote
#: speech and name tracks: 《自然》, 「数据集与基准」).
MIN_ZH_MENTION_CHARS = 8
_HAN = re.compile(r"[\u3400-\u9fff]")
#: A gloss in brackets closing a mention ("自然（Nature）"): no part of its length.
_GLOSS_AFTER = re.compile(r"\s*[（(][^（）()]*[)）]\s*$")
_OPENERS = frozenset("（(《「『“【[")
_CLOSERS = frozenset("）)》」』”】]")
_SENTENCE_PUNCT = re.compile(r"[。，；！？,;!?]")
# Words that mark a sentence as talking about a paper (zh-Hans, zh-Hant, en).
_PAPER_CUE = re.compile(
    r"论文|論文|paper|arXiv|作者|一作|第一作者|通讯作者|通訊作者|提出|获奖|獲獎|最佳|杰出|傑出|研究团队|研究團隊"
    r"|award|prize|winners?\b|authors?\b|co-?authors?\b|colleagues|researchers|et al\b",
    re.IGNORECASE,
)
#: A quotation of speech: a closing quote then a verb of saying, or the verb then the quote.
_SPEECH = re.compile(
    r"[”\"]\s*,?\s*(?:says|said|adds|added|notes|noted|explains|explained|recalls|recalled)\b"
    r"|\b(?:says|said|adds|added|noted|explained)\s*[,:]\s*[“\"]"
)
#: A lead about papers that were up for an award, not given one.
_NOT_AWARDED = re.compile(r"候选|候選|入围|入圍|提名名单|candidates?\b|finalists?\b|shortlist|nominat|missed the|none of", re.I)
# Words that mark a 《》 as a policy, a book, a film or a news item rather than a paper.
_NOT_PAPER_CUE = re.compile(r"印发|印發|出版社|小说|小說|电影|電影|报道称|報導稱|方案|通知|条例|條例|新闻|新聞|一书|一書")
_TITLE_LINE = re.compile(r"^(?P<title>[^\u3400-\u9fff]+?)(?:\s+(?P<deco>[\u3400-\u9fff]{1,8}))?$")
_LIST_ITEM = re.compile(r"^(?:[-*•·▪●]|\(?\d+[.)、]|[（(]\d+[）)])\s*")
_SENTENCE_END = re.compile(r"[。；;，,]$|[。！]")

#: Keys of a section dict; ``ctx_venue``/``ctx_year`` are the venue and year of the nearest
#: heading above the section that names one (None when none does).
SECTION_FIELDS = ("ordinal", "char_start", "char_end", "heading", "text", "ctx_award_raw", "lead_award_raw",
                  "ctx_venue", "ctx_year")
_CONTEXT_FIELDS = ("ctx_venue", "ctx_year")
#: Columns of the sections batch that :func:`explode_sections` builds (``doc_venue``/``doc_year``
#: are the section's heading context when it has one, else the document's).
EXPLODED_COLUMNS = ("section_id", "doc_id", *(f for f in SECTION_FIELDS if f not in _CONTEXT_FIELDS),
                    "doc_venue", "doc_year", "paper_record")


def _is_title_line(s: str, min_words: int = MIN_TITLE_WORDS) -> bool:
    """Whether ``s`` is an English title standing alone: at least ``min_words`` Latin words,
    mostly Latin letters, starting with a capital or a digit, not ending like a sentence, at
    most :data:`MAX_TITLE_CHARS` long, optionally followed by a short Chinese decoration."""
    if len(s) > MAX_TITLE_CHARS and not "\u3400" <= s[-1:] <= "\u9fff":
        return False  # without a Chinese decoration at its end the title is the whole line: too long
    m = _TITLE_LINE.match(s)
    if not m or _LIST_ITEM.match(s) or parse_key_value(s) is not None or "://" in s:
        return False
    title = m.group("title")
    words = latin_words(title)
    if len(words) < min_words or title.rstrip().endswith((".", ",", ";", ":")):
        return False
    if len(title) > MAX_TITLE_CHARS or max(len(w) for w in words) > MAX_TITLE_WORD_CHARS:
        return False
    if title.isascii():  # every letter is Latin (the usual case: no count needed)
        return title[0].isupper() or title[0].isdigit()
    letters = sum(ch.isalpha() for ch in title)
    latin = sum(ch.isascii() and ch.isalpha() for ch in title)
    return letters > 0 and latin / letters >= MIN_TITLE_LATIN_SHARE and (title[0].isupper() or title[0].isdigit())


#: A count or qualifier in brackets after an award header: "（3 篇）", "(部分)", "(5 papers)", a
#: track ("（Datasets & Benchmarks Track）").
_HEADER_COUNT = re.compile(r"[（(][^()（）\n]{0,12}[)）]"
                           r"|[（(][^()（）\n]{0,40}(?:\btracks?\b|赛道|賽道)[^()（）\n]{0,12}[)）]", re.I)
#: Words an award header may hold besides its label: the track and the kind of list.
_HEADER_FILLER = re.compile(r"\b(?:papers?|awards?|main|track|notable|selected|the|and)\b|论文|論文"
                            r"|[\d一二两兩三四五六七八九十]*篇|首届|首屆|本届|本屆|今年|年度", re.I)


def _is_award_header(s: str) -> bool:
    """A line that is only an award label, optionally with a venue and year, a count in
    brackets and track words (:data:`_HEADER_FILLER`): what is left after removing those holds
    at most ``MAX_AWARD_HEADER_REST`` letters (so a headline such as "<venue> <year> best papers
    announced" is not a header); a track or category of at most three words may follow a dash
    ("Honorable Mention Papers – Main Conference"); a short subject and a verb of winning may
    come before it ("上交大CMU等团队获最佳论文")."""
    if len(s) > MAX_AWARD_HEADER_CHARS + MAX_HEADER_QUALIFIER_CHARS or _SENTENCE_END.search(s):
        return False
    if len(s) <= MAX_AWARD_HEADER_CHARS and _bare_award_header(s):
        return True
    m = _HEADER_QUALIFIER.fullmatch(s) if any(d in s for d in "–—-") else None
    if m is not None:
        return len(m.group("head")) <= MAX_AWARD_HEADER_CHARS and _bare_award_header(m.group("head"))
    won = _WON_AWARD.fullmatch(s) if _CJK_WON.search(s) else None
    return won is not None and _bare_award_header(won.group("head"))


#: A header that says who won the award below it: "上交大CMU等团队获最佳论文" (a short subject,
#: a verb of winning, then a bare award header).
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


#: An award header, a dash, and a short qualifier (a track, a category) of at most three words.
_HEADER_QUALIFIER = re.compile(r"(?P<head>.+?)\s+[–—-]\s+(?:[\w&'’.]+\s*){1,3}")


def kept_lines(text: str, dropped: list[dict]) -> list[Line]:
    """The non-blank lines of ``text`` outside the dropped spans; a line that a hard wrap split
    inside bold or book-title marks (:func:`_wrapped_inside_marks`) is one line with the next,
    its newline read as a space (offsets stay those of ``text``)."""
    covered = span_coverage((d["char_start"], d["char_end"]) for d in dropped)
    out: list[Line] = []
    follows = False  # the previous physical line was kept
    for line in split_lines(text):
        if line.blank:
            follows = False
            continue
        start, end = trim_span(text, line.start, line.end)
        if covered(start, end):
            follows = False
            continue
        if follows and _wrapped_inside_marks(out[-1].stripped, line.stripped):
            joined = text[out[-1].start : line.end].replace("\r", " ").replace("\n", " ")
            out[-1] = Line(out[-1].start, line.end, joined)
            continue
        out.append(line)
        follows = True
    return out


def _drop_restated_mentions(lines: list[Line], anchors: dict[int, Candidate | str | None]) -> None:
    """A paper named inside a line of prose ("一篇是**Title**，…" in the lead) that a later line
    gives as its own heading ("**Title**") is that section's paper: the line that holds more
    than the title anchors none (``anchors`` is updated in place)."""
    titles: dict[int, str] = {}
    for at, anchor in anchors.items():
        title = anchor.title if isinstance(anchor, Candidate) else anchor
        if title:
            titles[at] = fold_title(title)
    # (a line of prose around the title is far longer than it: not folded)
    heads = sorted((at, key) for at, key in titles.items()
                   if len(key) >= MIN_RESTATED_CHARS and len(lines[at].stripped) <= 2 * len(key) + 40
                   and fold_title(plain(lines[at].stripped)) == key)
    if not heads:
        return
    for at, key in list(titles.items()):
        if any(later > at and head != key and head in key for later, head in heads):
            del anchors[at]


#: Shortest folded title that a later heading restates for an earlier mention to be dropped.
MIN_RESTATED_CHARS = 12


def _unwrapped(text: str, lines: list[Line]) -> str:
    """``text`` with the newlines inside ``lines`` (those :func:`kept_lines` joined) read as
    spaces: the same length, so every offset holds."""
    joined = [line for line in lines if text.find("\n", line.start, line.end) >= 0]
    if not joined:
        return text
    pieces, pos = [], 0
    for line in joined:
        pieces.append(text[pos : line.start])
        pieces.append(text[line.start : line.end].replace("\n", " "))
        pos = line.end
    pieces.append(text[pos:])
    return "".join(pieces)


def _wrapped_inside_marks(first: str, second: str) -> bool:
    """Whether a hard wrap split a span of marks between two adjacent lines: ``first`` opens
    bold it does not close and ``second`` closes it ("**1、An image speaks a thousand words, On
    image" / "transcreation for cultural relevance**"), or ``first`` opens 《 and ``second``
    closes it before opening another. A line that starts a heading or a list item is not a
    continuation."""
    if second[:1] in "#>|" or _LIST_ITEM.match(second):
        return False
    if "**" in first and "**" in second and first.count("**") % 2 and second.count("**") % 2:
        return True
    if "《" in first and first.rfind("《") > first.rfind("》"):
        closing = second.find("》")
        return closing >= 0 and second.find("《", 0, closing) < 0
    return False


def _cut(text: str, start: int, end: int, dropped: list[dict]) -> str:
    """``text[start:end]`` with any dropped span inside it removed."""
    pieces, pos = [], start
    for d in dropped:
        a, b = d["char_start"], d["char_end"]
        if b <= start or a >= end:
            continue
        pieces.append(text[pos:a])
        pos = max(pos, b)
    pieces.append(text[pos:end])
    return "".join(pieces).strip()


def _heading_text(s: str) -> str | None:
    """The text of a heading-marked line (Markdown heading, whole-line bold, enumerated
    heading ``1.`` ``一、`` ``（一）`` ``(1)``), or None for an unmarked line."""
    raw = s.strip()
    if _MD_HEADING.match(raw):
        inner = plain(raw)
    elif m := _BOLD_LINE.match(raw):
        inner = m.group("inner").strip()
    elif m := ENUMERATED_HEADING.match(plain(raw)):
        return m.group("title").strip()
    else:
        return None
    m = ENUMERATED_HEADING.match(inner)  # "## 1. Title", "**一、Title**"
    return m.group("title").strip() if m else inner


def _english_title(t: str, min_words: int = MIN_TITLE_WORDS) -> bool:
    """Whether ``t`` reads as an English paper title (see :func:`_is_title_line`), also inside a
    bilingual form ``中文（English）`` / ``English（中文）`` or book-title marks ``《English》``."""
    t = t.strip()
    # (the patterns need a leading 《 / a bracket: tested first, as most lines have neither)
    m = BOOK_TITLE.fullmatch(t) if t[:1] == "《" else None
    if m:
        t = m.group("inner")
    m = BILINGUAL.fullmatch(t) if "(" in t or "（" in t else None
    if m:
        return any(_is_title_line(part.strip(), min_words) for part in (m.group("a"), m.group("b")))
    return _is_title_line(t, min_words)


def _venue_heading(t: str) -> bool:
    """A short line that names a venue with its year ("**ICML 2024**", "本期主題：ICLR 2024 …"):
    a heading of the papers under it, never a paper's title."""
    return len(t) <= MAX_VENUE_HEADING_CHARS and _names_venue_year(t)


def _names_venue_year(t: str) -> bool:
    """Whether ``t`` names a venue with its year ("ICML 2025 ..."): a headline or a part heading,
    since paper titles do not name the venue that accepted them."""
    return any(year is not None for _, year, _, _ in find_venue_years(t))


_BOLD_LEAD_COLON = re.compile(r"^\s*(?:\*\*|__)(?P<label>[^*_\n]{3,60})(?:\*\*|__)\s*[:：]\s*(?P<rest>.+)$")


def _described_award_header(raw: str) -> bool:
    """An award header in bold followed by a sentence that describes the award ("**Didactic Paper
    Award**: Paper that does a great job at explaining the problem."): the rest ends like a
    sentence and most of its longer words are lower-case, so it is no paper title."""
    m = _BOLD_LEAD_COLON.match(raw) if raw.lstrip().startswith(("**", "__")) else None
    if m is None or not _is_award_header(m.group("label").strip()):
        return False
    rest = m.group("rest").strip()
    words = [w for w in re.findall(r"[A-Za-z][A-Za-z'’-]{3,}", rest)]
    return bool(re.search(r"[.!?)]$", rest)) and len(words) >= 2 and sum(w[0].islower() for w in words) * 2 >= len(words)


def _classify(lines: list[Line]) -> list[str]:
    """A kind per kept line: ``reference`` (a ``参考链接：``-style line, with its links or alone
    above them), ``award_header``,
    ``kv_title`` (a metadata title line), ``kv`` (another metadata line), ``award_lead`` (a
    sentence that gives one award to the papers after it: :func:`_is_award_lead`) or ``body``."""
    kinds = []
    for i, line in enumerate(lines):
        s = plain(line.text)
        kv = parse_key_value(s)
        if kv is not None and kv[0] == "reference_url" or (
                kv is None and s.endswith((":", "：")) and (
                    (label := parse_key_value(s + " -")) is not None and label[0] == "reference_url"
                    or _heads_link_list(s, lines, i))):
            # a reference line, or the label of a list of references or links under it
            # ("参考链接：", "最佳论文链接（按文章顺序）：" / "[1]https://…" / "[2]https://…")
            kinds.append("reference")
        elif (len(s) <= MAX_AWARD_HEADER_CHARS + MAX_HEADER_QUALIFIER_CHARS and (
                _is_award_header(s) or ((marked := _heading_text(line.text)) is not None and _is_award_header(marked)))
              ) or _described_award_header(line.text):
            kinds.append("award_header")
        elif kv is not None:
            kinds.append("kv_title" if kv[0] == "title" else "kv")
        elif _is_award_lead(s):
            kinds.append("award_lead")
        else:
            kinds.append("body")
    return kinds


#: Longest label line over a list of links, and the fewest links under it.
MAX_LINK_LABEL_CHARS = 30
MIN_LISTED_LINKS = 2
_LINK_ONLY = re.compile(r"(?:[\[【(（]?\d{1,2}[\]】)）.]?\s*)?<?https?://\S+?>?")


def _heads_link_list(s: str, lines: list[Line], i: int) -> bool:
    """Whether a short label line ending in a colon is followed by :data:`MIN_LISTED_LINKS` lines
    or more that are bare links ("[1]https://…"): a list of the article's links, not a paper."""
    if len(s) > MAX_LINK_LABEL_CHARS or i + MIN_LISTED_LINKS >= len(lines):
        return False
    return all(_LINK_ONLY.fullmatch(lines[k].stripped) for k in range(i + 1, i + 1 + MIN_LISTED_LINKS))


#: Longest sentence that announces the award of the papers after it.
MAX_AWARD_LEAD_CHARS = 100
#: The heading level given to such a sentence: below every heading (1-6 Markdown, 7 bold).
AWARD_LEAD_LEVEL = 8


def _is_award_lead(s: str) -> bool:
    """A short sentence ending in a colon that gives one award to the papers listed after it
    ("此外，还有两篇论文获得了最佳论文亚军：", "The winners of the 2013 Test-of-Time Paper Award
    are:"): it heads them like an award header. It names no paper itself (no quoted title), one
    award class only (:func:`pipeline.fields.lead_award`), and no candidates or nominees."""
    if not s.endswith((":", "：")) or len(s) > MAX_AWARD_LEAD_CHARS or any(ch in s for ch in "《》“”\"「」"):
        return False
    return lead_award(s) is not None and not _NOT_AWARDED.search(s)


#: Candidate styles of Markdown headings.
_HEADING_STYLES = frozenset({"md1", "md2", "md3"})
#: Fewest anchors of a list for a heading right above one of them to be a group's name.
MIN_GROUPED_ITEMS = 3


def choose_anchors(lines: list[Line], kinds: list[str]) -> dict[int, Candidate | str]:
    """The lines that start a section, mapped to their title candidate.

    Every line's title candidate (:func:`pipeline.candidates.find_candidates`) is scored by the
    title classifier (:mod:`pipeline.title_model`); those at or above its threshold anchor a
    section, except award headers and reference lines. When every anchor is a metadata title
    line (``Title:`` / ``论文标题：``), :func:`_metadata_anchors` places the sections, since the
    metadata may follow its body. When none is kept, :func:`segment_document` tries the
    narrative layout (:func:`find_paper_mentions`).
    """
    cands = find_candidates(lines)
    if not cands:
        return {}
    model = title_model.load()
    scores = model.scores(cands)
    # award headers, reference lines, lines of person names (alone or after a label: "Organizers
    # include: A, B") and venue headings (after a leading venue tag: "(CVPR 2019)Title" is a
    # title) are never a paper's title
    eligible = [kinds[c.line] not in ("award_header", "reference") and not c.features.get("self_credit")
                and not labelled_names(c.title) and not names_only(c.title)
                and not (c.features.get("venue_year") and _venue_heading(LEADING_TAGS.sub("", c.title) or c.title))
                for c in cands]
    chosen = {c.line: c for c, p, ok in zip(cands, scores, eligible, strict=True) if ok and p >= model.threshold}
    # two or more items of one list or table that name a venue edition beside their titles
    # ("1. 《Title》 CVPR 2016 Author") are the entries of a paper list
    beside = [c for c, ok in zip(cands, eligible, strict=True) if ok and venue_beside_title(c, lines[c.line].stripped)]
    chosen.update({c.line: c for c in beside if sum(b.style == c.style for b in beside) >= 2})
    # siblings: in a run of candidates of one markup style (a list, a table), when at least two
    # and at least half of the items are kept titles, the other items are titles too; a heading
    # or an award header between items (an award category, a venue) does not end their run
    items = [k for k, c in enumerate(cands)
             if (c.style not in _HEADING_STYLES or c.line in chosen) and kinds[c.line] != "award_header"]
    run: list[int] = []
    for n in range(len(items) + 1):
        k = items[n] if n < len(items) else len(cands)
        if k < len(cands) and run and cands[k].style == cands[run[-1]].style and cands[k].style != "plain":
            run.append(k)
            continue
        kept = sum(cands[j].line in chosen for j in run)
        if kept >= 2 and 2 * kept >= len(run):
            chosen.update({cands[j].line: cands[j] for j in run if eligible[j]})
        run = [k] if k < len(cands) and cands[k].style != "plain" else []
    _entries_with_notes(cands, scores, eligible, items, chosen)
    _sibling_headings(lines, cands, eligible, chosen)
    _numbered_siblings(lines, cands, eligible, chosen)
    if log.isEnabledFor(logging.DEBUG):  # marked spans and near misses, not every plain line
        for c, p in zip(cands, scores, strict=True):
            if c.line not in chosen and (c.style != "plain" or p >= model.threshold / 4):
                log.debug("document %s: heading %r rejected as a paper title: score %.2f < %.2f",
                          _DOCUMENT.get(), c.title[:120], p, model.threshold)
    _explainer_parts(lines, cands, scores, chosen)
    # an anchor whose markup no other anchor shares, without paper evidence of its own, in a
    # document whose other anchors share a markup, is the article's headline or a trailer
    # ("Next week: …"), not one more paper
    styles = Counter(c.style for c in chosen.values())
    if len(chosen) >= 3 and max(styles.values()) >= 2:
        for line in [at for at, c in chosen.items() if styles[c.style] == 1 and not has_paper_evidence(c)]:
            del chosen[line]
    # a heading right above an anchor of a list (no line between them), in a document whose
    # anchors are mostly that list's, names a group of the list's papers ("#### RAG and LLM")
    if len(chosen) >= MIN_GROUPED_ITEMS:
        for at in [at for at, c in chosen.items() if c.style in _HEADING_STYLES]:
            below = chosen.get(at + 1)
            if (below is not None and below.style not in _HEADING_STYLES
                    and 2 * styles[below.style] >= len(chosen) and styles[below.style] >= MIN_GROUPED_ITEMS):
                del chosen[at]
    # a metadata block after its body repeats the title of a line above it: the paper starts at
    # that line (when no other anchor comes between them)
    keys: dict[int, str] = {}

    def key_of(c: Candidate) -> str:
        if c.line not in keys:
            keys[c.line] = fold_title(c.title)
        return keys[c.line]

    for line in sorted(at for at, c in chosen.items() if c.style == "kv_title"):
        key = key_of(chosen[line])
        if len(key) < 8:
            continue
        floor = max((a for a in chosen if a < line), default=-1)  # no anchor between them
        head = chosen[line].title[:8].casefold()  # (a cheap test before folding each candidate)
        earlier = [c for c in cands if floor < c.line < line and head in c.title.casefold() and key in key_of(c)]
        if earlier:
            chosen[earlier[-1].line] = earlier[-1]
    # a paper's title given twice in a row (a title line, then a metadata block that repeats
    # it after the body) is one paper: the later anchor does not start a section
    previous = None
    for line in sorted(chosen):
        key = key_of(chosen[line])
        if previous is not None and key and (key == previous or (len(key) >= 8 and (key in previous or previous in key))):
            del chosen[line]
        else:
            previous = key
    # a document that never speaks of papers, where no kept title has a credit, an arXiv id or
    # a metadata line, is not about papers (a news article, a FAQ, a recipe)
    confident = any(p >= CONFIDENT_TITLE_SCORE for c, p in zip(cands, scores, strict=True) if c.line in chosen)
    if (chosen and not confident and not cands[0].features.get("about_papers")
            and not any(has_paper_evidence(c) for c in chosen.values())
            and not any(find_venue_years(line.text) for line in lines)):
        return {}
    if chosen and all(c.style == "kv_title" for c in chosen.values()):
        starts = _metadata_anchors(lines, kinds)
        by_line = {c.line: c for c in cands}
        if starts:
            return {i: title if title else by_line.get(i) or Candidate(i, lines[i].stripped, "plain")
                    for i, title in starts.items()}
    return dict(sorted(chosen.items()))


def first_line_end(text: str) -> int:
    """The offset where the first non-blank line of ``text`` ends."""
    start = len(text) - len(text.lstrip())
    end = text.find("\n", start)
    return len(text) if end < 0 else end


#: Opening lines of a one-paper page that may give its paper's award (and venue edition).
ONE_PAPER_AWARD_LINES = 5
#: Highest score of a sub-heading read as a part of the explainer above it (see
#: :func:`_explainer_parts`); a paper's title under a heading scores higher.
MAX_PART_SCORE = 0.6
#: Lines above the heading of a one-paper explainer (a date, a tag line).
MAX_EXPLAINER_HEAD_LINE = 2


def _explainer_parts(lines: list[Line], cands: list[Candidate], scores, chosen: dict[int, Candidate]) -> None:
    """Drop the sub-headings of a one-paper explainer from ``chosen``: when the first kept title
    is a top heading of the page (within its first lines) that scores as a confident title, and
    every other kept title is a deeper heading or a bold lead that scores below
    :data:`MAX_PART_SCORE` without paper evidence of its own (a credit, an arXiv id, metadata),
    those are the explainer's parts ("Hand Amodal Segmentation Module (HASM)"), not papers."""
    if len(chosen) < 2:
        return
    first = min(chosen)
    head = chosen[first]
    if first > MAX_EXPLAINER_HEAD_LINE or head.style not in ("md1", "md2"):
        return
    score = {c.line: p for c, p in zip(cands, scores, strict=True) if c.line in chosen}
    if score[first] < CONFIDENT_TITLE_SCORE:
        return
    top = _heading_level(lines[first].stripped)
    rest = [at for at in chosen if at != first]
    for at in rest:
        c = chosen[at]
        level = _heading_level(lines[at].stripped)
        deeper = c.style in ("bold_lead", "bold_line") or (c.style in _HEADING_STYLES and level > top)
        if not deeper or score[at] >= MAX_PART_SCORE or has_paper_evidence(c):
            return
    for at in rest:
        del chosen[at]


#: Lines after a heading whose labels make its layout signature (see :func:`_sibling_headings`).
SIGNATURE_LINES = 3
_LINE_LABEL = re.compile(r"^[^:：]{1,24}(?=[:：])")


def _signature(lines: list[Line], at: int) -> tuple[str, ...]:
    """The labels ("Track", "Authors", "作者") of the lines right after a heading."""
    labels = []
    for line in lines[at + 1 : at + 1 + SIGNATURE_LINES]:
        if _heading_level(line.stripped) and not _BOLD_LINE.match(line.stripped):
            break
        m = _LINE_LABEL.match(plain(line.stripped).strip())
        labels.append(m.group(0).strip().casefold() if m else "")
    return tuple(labels) if any(labels) else ()


def _sibling_headings(lines: list[Line], cands: list[Candidate], eligible: list[bool],
                      chosen: dict[int, Candidate]) -> None:
    """Headings of one level laid out alike: when at least two and half of the headings of a
    level are kept titles, another heading of that level whose following lines carry the same
    labels as most kept ones ("## 3. Title" / "**Track:**" / "**Authors:**") is a title too;
    a label more where the kept ones have an unlabelled line ("**arXiv**: TBD | **ICML 2024**"
    where the others write "**ICML 2024**") does not set it apart (``chosen`` is updated in
    place)."""
    for style in _HEADING_STYLES:
        same = [k for k, c in enumerate(cands) if c.style == style]
        kept = [k for k in same if cands[k].line in chosen]
        if len(kept) < 2 or 2 * len(kept) < len(same) or len(kept) == len(same):
            continue
        common = Counter(_signature(lines, cands[k].line) for k in kept).most_common(1)[0]
        if not common[0] or 2 * common[1] < len(kept):
            continue
        for k in same:
            if cands[k].line not in chosen and eligible[k] and _same_layout(_signature(lines, cands[k].line), common[0]):
                chosen[cands[k].line] = cands[k]


def _same_layout(signature: tuple[str, ...], common: tuple[str, ...]) -> bool:
    """Whether a heading's :func:`_signature` has every label of the common one in its place
    (it may label a line that the common layout leaves unlabelled)."""
    return len(signature) == len(common) and all(a == b for a, b in zip(signature, common, strict=True) if b)


#: A running number that opens a marked line ("**1、Title**", "## 2. Title").
_RUNNING_NUMBER = re.compile(r"^(?:#{1,6}\s+|\*\*|__)?\s*(\d{1,3})\s*[.、．]")
#: Fewest items of a numbered run for its unkept items to follow the kept ones.
MIN_NUMBERED_RUN = 3


def _numbered_siblings(lines: list[Line], cands: list[Candidate], eligible: list[bool],
                       chosen: dict[int, Candidate]) -> None:
    """Items of one markup style numbered 1, 2, 3, … (prose between them allowed): when at
    least two and half of a run of :data:`MIN_NUMBERED_RUN` or more are kept titles, the others
    are titles too ("**1、An image speaks a thousand words, but can everyone listen? …**" among
    "**2、Title**" … "**5、Title**"; ``chosen`` is updated in place)."""
    runs: dict[str, list[list[int]]] = {}
    for k, c in enumerate(cands):
        if c.style == "plain" or c.style == "table":
            continue
        m = _RUNNING_NUMBER.match(lines[c.line].stripped)
        if m is None:
            continue
        n, style_runs = int(m.group(1)), runs.setdefault(c.style, [])
        if style_runs and n == _number_of(lines, cands[style_runs[-1][-1]]) + 1:
            style_runs[-1].append(k)
        else:
            style_runs.append([k])
    for run in (r for style_runs in runs.values() for r in style_runs if len(r) >= MIN_NUMBERED_RUN):
        kept = sum(cands[k].line in chosen for k in run)
        if kept >= 2 and 2 * kept >= len(run):
            chosen.update({cands[k].line: cands[k] for k in run if eligible[k]})


def _number_of(lines: list[Line], cand: Candidate) -> int:
    m = _RUNNING_NUMBER.match(lines[cand.line].stripped)
    return int(m.group(1)) if m else -1


#: Fewest entries, and notes, of a list whose entries each may carry a note line.
MIN_NOTED_ENTRIES = 3
MIN_NOTES = 2


def _entries_with_notes(cands: list[Candidate], scores, eligible: list[bool], items: list[int],
                        chosen: dict[int, Candidate]) -> None:
    """Entries of a list that each may carry a note line of another markup (a linked title, then
    ``- what I liked about it``): in a stretch of ``items`` (indices into ``cands``) of two
    styles where every item of one style (the notes) follows an item of the other (the
    entries), and at least half of the entries have one, the style with the higher mean score
    is the entries'. When at least two and at
    least half of the entries are kept titles, every entry is one and no note is (``chosen`` is
    updated in place)."""

    def settle(stretch: list[int], entry: str | None, note: str | None) -> None:
        if entry is None or note is None or entry == "plain":
            return
        entries = [k for k in stretch if cands[k].style == entry]
        notes = [k for k in stretch if cands[k].style == note]
        if len(entries) < MIN_NOTED_ENTRIES or len(notes) < MIN_NOTES or 2 * len(notes) < len(entries):
            return
        if sum(scores[k] for k in entries) / len(entries) <= sum(scores[k] for k in notes) / len(notes):
            return
        kept = sum(cands[k].line in chosen for k in entries)
        if kept < 2 or 2 * kept < len(entries):
            return
        chosen.update({cands[k].line: cands[k] for k in entries if eligible[k]})
        for k in notes:
            chosen.pop(cands[k].line, None)

    stretch: list[int] = []
    entry = note = None
    for k in items:
        style, prev = cands[k].style, cands[stretch[-1]].style if stretch else None
        if style == "plain" and cands[k].line not in chosen:
            continue  # a line of prose (a note without list markup)
        if stretch and (style == entry or (prev == entry and style == (note := note or style))):
            stretch.append(k)
            continue
        settle(stretch, entry, note)
        stretch, entry, note = [k], style, None
    settle(stretch, entry, note)


def _metadata_anchors(lines: list[Line], kinds: list[str]) -> dict[int, str | None]:
    """Anchors of articles whose papers are marked only by metadata blocks with a title line.

    When more body text follows the last block than precedes the first one (after the
    headline), metadata comes *before* each body: a section starts at each block. Otherwise
    metadata comes *after* each body: a section runs from the line after the previous block (for
    the first, the line after the headline or the last award header or heading above it) to the
    end of its block, headed by the block's title.

    Returns:
        ``{start line: heading}``; a heading of None means the start line is the heading.
    """
    is_meta = [k in ("kv", "kv_title") for k in kinds]
    blocks: list[tuple[int, int]] = []
    i = 0
    while i < len(kinds):
        if is_meta[i]:
            j = i
            while j + 1 < len(kinds) and is_meta[j + 1]:
                j += 1
            if "kv_title" in kinds[i : j + 1]:
                blocks.append((i, j))
            i = j + 1
        else:
            i += 1
    if not blocks:
        return {}
    first = 1 if len(lines) > 1 and len(lines[0].stripped) <= MAX_AWARD_HEADER_CHARS else 0

    def body_chars(indices: range) -> int:
        return sum(len(lines[k].stripped) for k in indices if kinds[k] == "body" and not _heading_level(lines[k].stripped))

    # the body before the first block is its paper's only when no award header, heading or
    # short line naming a venue edition comes between them (text above one is the article's lead)
    lead_end = max((k + 1 for k in range(first, blocks[0][0])
                    if kinds[k] == "award_header" or _heading_level(lines[k].stripped) or _venue_heading(lines[k].stripped)),
                   default=first)
    if body_chars(range(blocks[-1][1] + 1, len(kinds))) > body_chars(range(lead_end, blocks[0][0])):
        return dict.fromkeys(start for start, _ in blocks)
    starts = [lead_end] + [end + 1 for _, end in blocks[:-1]]
    titles = [next(plain(lines[k].stripped) for k in range(a, b + 1) if kinds[k] == "kv_title") for a, b in blocks]
    return {i: _kv_title(t) for i, t in zip(starts, titles, strict=True)
            if i < len(kinds) and kinds[i] not in ("award_header", "reference")}


def _kv_title(line: str) -> str | None:
    """The value of a ``Title: …`` metadata line."""
    kv = parse_key_value(line)
    return kv[1] if kv is not None else None


def find_paper_mentions(paragraph: str) -> list[tuple[int, str]]:
    """Inline paper mentions of a paragraph, in order, as ``(offset, mention)``.

    A mention is a title in book-title marks ``《…》`` (with the ``（…）`` gloss after it, if any),
    in corner brackets ``「…」`` / ``『…』`` (Traditional Chinese quotation marks), or an English
    title in quotation marks (“…”, "…", ‘…’). It counts when its sentence holds a paper cue word
    (论文, paper, arXiv, 作者, 一作, 提出, 获奖, award ...) or, for book-title and corner marks,
    when the inner text is an English title. A 《》 or 「」 that names a policy, a book, a film or
    a news item (a sentence with such a cue) is not a mention unless it is an English title; a
    Chinese mention has at least :data:`MIN_ZH_MENTION_CHARS` characters, and in 「」 no clause
    punctuation (corner brackets also quote speech, names and track names). A short quoted
    name of a venue edition (“NeurIPS 2025 Best Paper Award”) is never a mention, nor a quotation
    in a paragraph that quotes speech (``"…," says Mori``).
    ``offset`` is the character offset in ``paragraph`` where the section of the paper starts:
    its sentence (so the authors named before the title stay with it); when an earlier mention
    shares the sentence, the clause that introduces this one (after the last ，；： and a joining
    word such as 以及 / and), or the mention itself when no separator comes between them.
    """
    has_marks = any(ch in paragraph for ch in '《“"‘「『')
    if not has_marks and not _PAPER_CUE.search(paragraph):
        return []  # a mention opens with a quotation mark (_MENTION) or stands in a sentence with a cue
    found: list[tuple[int, str]] = []
    pos = 0
    speech: bool | None = None  # whether the paragraph quotes speech (looked for at its first quote)
    for sentence in split_sentences(paragraph):
        cue: bool | None = None  # looked for at the sentence's first mention only
        not_paper: bool | None = None  # likewise
        previous_end: int | None = None
        marked = list(_MENTION.finditer(sentence)) if has_marks else []
        if not marked and _PAPER_CUE.search(sentence) and not _HAN.search(sentence):
            for at, title, end in _title_case_spans(sentence):  # an English title written without quotes
                start = 0 if previous_end is None else _clause_start(sentence, at, previous_end)
                found.append((pos + start, title))
                previous_end = end
        for m in marked:
            in_quotes = m.group("quoted") or m.group("squoted")
            inner = m.group("book") or m.group("corner") or in_quotes.rstrip(",.;:，。；：")  # “Title,” in prose
            english = _english_title(inner)
            if _venue_heading(inner):
                continue  # “NeurIPS 2025 Best Paper Award” names an award, not a paper
            if cue is None:
                cue = bool(_PAPER_CUE.search(sentence))
            if not_paper is None and (m.group("book") or m.group("corner")):
                not_paper = bool(_NOT_PAPER_CUE.search(sentence))
            if in_quotes and speech is None:
                speech = bool(_SPEECH.search(paragraph))
            if in_quotes and speech:
                continue  # a paragraph that quotes someone ("…," says Mori): its quotes are speech
            if m.group("book"):  # 《自然》, 《自然（Nature）》 name a journal: a Chinese title is longer
                ok = english or (cue and len(_GLOSS_AFTER.sub("", inner)) >= MIN_ZH_MENTION_CHARS and not not_paper)
            elif m.group("corner"):  # 「…」 also quotes speech: a title is long and has no clauses
                ok = english or (cue and len(inner) >= MIN_ZH_MENTION_CHARS and not _SENTENCE_PUNCT.search(inner)
                                 and not not_paper)
            else:
                ok = english and cue
            if ok:
                start = 0 if previous_end is None else _clause_start(sentence, m.start(), previous_end)
                found.append((pos + start, m.group(0).strip()))
                previous_end = m.end()
        pos += len(sentence)
    return found


#: Words that join a clause to the one before it; a paper's section starts after them
#: ("…，以及 Ilya Sutskever … 的《…》" starts at the first author).
_CLAUSE_CONNECTIVE = re.compile(r"^(?:以及|及|和|与|與|还有|還有|另有|并且|並且|而|and\s+|as\s+well\s+as\s+|while\s+)", re.I)
_CLAUSE_SEPARATORS = frozenset("，,；;：:")


def _clause_start(sentence: str, mention: int, floor: int) -> int:
    """Where the clause that introduces a mention starts: after the last clause separator
    (，；： outside brackets) between ``floor`` (the end of the previous mention in the sentence)
    and the mention, and after a joining word (以及, and); the mention itself when the clause
    holds the previous mention too."""
    depth, cut = 0, None
    for i in range(floor, mention):
        ch = sentence[i]
        if ch in _OPENERS:
            depth += 1
        elif ch in _CLOSERS:
            depth = max(0, depth - 1)
        elif depth == 0 and ch in _CLAUSE_SEPARATORS:
            cut = i + 1
    if cut is None:
        return mention
    while cut < mention and sentence[cut].isspace():
        cut += 1
    m = _CLAUSE_CONNECTIVE.match(sentence[cut:mention])
    if m:
        cut += m.end()
        while cut < mention and sentence[cut].isspace():
            cut += 1
    return cut


def _title_case_spans(sentence: str) -> list[tuple[int, str, int]]:
    """Unquoted English titles in a sentence, as ``(start, title, end)``: spans of
    :data:`_TITLE_CASE_SPAN` of at least :data:`MIN_PROSE_TITLE_WORDS` words,
    :data:`MIN_PROSE_TITLE_CAPS` of them capitalised, that are neither an award label, a venue
    nor an institution (capitalised names of things that are not papers), in a sentence whose
    other words hold a paper cue ("went to", "paper", "award" ...: :data:`_PAPER_CUE`). A venue
    edition in the possessive before the title is not part of it ("won by ICML 2014's DeCAF: …")."""
    found = []
    for m in _TITLE_CASE_SPAN.finditer(sentence):  # (a possessive before it is not part of it: "ICML 2014's")
        start, span = m.start("title"), m.group("title").rstrip(":")
        owner = _VENUE_POSSESSIVE.match(span)
        if owner and find_venue_years(owner.group(0)):
            start, span = start + owner.end(), span[owner.end():]
        words = span.split()
        rest = sentence[:start] + " " + sentence[m.end("title"):]
        if (len(words) < MIN_PROSE_TITLE_WORDS or sum(w[0].isupper() or w[0].isdigit() for w in words) < MIN_PROSE_TITLE_CAPS
                or not _english_title(span) or find_award_label(span) or find_venue_years(span) or is_institution(span)
                or names_only(span) or not _PAPER_CUE.search(rest)):  # the sentence speaks of a paper around the title
            continue
        found.append((start, span, m.end("title")))
    return found


def find_paper_mention(paragraph: str) -> str | None:
    """The first inline paper mention of a paragraph (see :func:`find_paper_mentions`), or None."""
    mentions = find_paper_mentions(paragraph)
    return mentions[0][1] if mentions else None


def _narrative(lines: list[Line], kinds: list[str]) -> tuple[list[Line], list[str], dict[int, str | None]]:
    """Split body lines at inline paper mentions; each piece that starts at a mention anchors a
    section whose heading is the mention. A mention of a paper already mentioned above is part
    of the section it stands in."""
    out_lines: list[Line] = []
    out_kinds: list[str] = []
    anchors: dict[int, str | None] = {}
    seen: set[str] = set()  # a paper mentioned again (a line that links it twice) opens no new section
    for line, kind in zip(lines, kinds, strict=True):
        mentions = find_paper_mentions(line.text) if kind == "body" else []
        mentions = [(off, m) for off, m in mentions if not (fold_title(m) in seen or seen.add(fold_title(m)))]
        cuts = sorted({off for off, _ in mentions if off > 0})
        bounds = [0, *cuts, len(line.text)]
        first_at: dict[int, str] = {}
        for off, mention in mentions:
            first_at.setdefault(off, mention)
        for a, b in zip(bounds, bounds[1:], strict=False):
            piece = Line(line.start + a, line.start + b, line.text[a:b])
            if piece.blank:
                continue
            if a in first_at:
                anchors[len(out_lines)] = first_at[a]
            out_lines.append(piece)
            out_kinds.append(kind)
    return out_lines, out_kinds, anchors


#: Words by which an explainer names the one paper it is about ("the ICLR 2024 paper <title>").
_ONE_PAPER_CUE = re.compile(r"\bpaper\b|论文|論文|\bpreprint\b", re.I)
#: Lines after the headline in which an explainer names the paper it is about.
RESTATED_HEADLINE_LINES = 4


def _restated_headline(lines: list[Line]) -> str | None:
    """The first line of a page when it is an English paper title (:func:`_english_title`) that
    one of the next :data:`RESTATED_HEADLINE_LINES` lines restates as a paper mention (a sentence
    holding the title, and more, that speaks of one paper: :data:`_ONE_PAPER_CUE`); else None."""
    if len(lines) < 2 or _heading_level(lines[0].stripped) > 1:
        return None
    head = plain(lines[0].stripped).strip()
    key = fold_title(head)
    if len(head.split()) < MIN_TITLE_WORDS or not _english_title(head) or _names_context(head):
        return None
    for line in lines[1 : 1 + RESTATED_HEADLINE_LINES]:
        for sentence in split_sentences(plain(line.stripped)):
            folded = fold_title(sentence)
            if key in folded and len(folded) > len(key) + 10 and _ONE_PAPER_CUE.search(sentence):
                return head
    return None


#: A Markdown link to a paper's page or file: its text may be the paper's title.
_PAPER_LINK = re.compile(
    r"\[(?P<text>[^\[\]\n]{8,300})\]\((?P<url>https?://(?:arxiv\.org/(?:abs|pdf)/|openreview\.net/(?:forum|pdf)"
    r"|aclanthology\.org/|\S+?\.pdf\b)[^)\s]*)\)", re.I)


def _quoted_title(lines: list[Line]) -> str | None:
    """The first English title in quotation marks, 《》 or 「」 anywhere in a page about one
    paper ("Official implementation of "<title>""), else the first English title that links to
    a paper's page or file (``[Title](https://openreview.net/forum?id=…)``), for its one
    section's heading; None when there is none."""
    for line in lines:
        for m in _MENTION.finditer(line.text) if any(ch in line.text for ch in '《“"‘「『') else ():
            inner = m.group("book") or m.group("corner") or (m.group("quoted") or m.group("squoted")).rstrip(",.;:，。；：")
            if _english_title(inner) and not _venue_heading(inner):
                return inner
    for line in lines:
        for m in _PAPER_LINK.finditer(line.text) if "](" in line.text else ():
            inner = m.group("text").strip()
            if _english_title(inner) and not _venue_heading(inner):
                return inner
    return None


def _untitled_blocks(lines: list[Line], kinds: list[str]) -> list[int]:
    """The first lines of metadata blocks that credit a paper and link it but never title it
    (``Author: A, B`` / ``paper: https://arxiv.org/abs/…`` / ``Code: …``), when a page holds two
    or more: each block opens one untitled section. Empty otherwise."""
    starts: list[int] = []
    i = 0
    while i < len(kinds):
        if kinds[i] != "kv":
            i += 1
            continue
        j = i
        while j < len(kinds) and kinds[j] == "kv":
            j += 1
        keys = {kv[0] for line in lines[i:j] if (kv := parse_key_value(plain(line.text))) is not None}
        if {"authors", "paper_url"} <= keys:
            starts.append(i)
        i = j
    return starts if len(starts) >= 2 else []


def _heading_level(raw: str) -> int:
    """A heading line's level: 1-6 for Markdown headings, 7 for a whole bold line, 0 otherwise."""
    m = re.match(r"^(#{1,6})\s+\S", raw)
    if m:
        return len(m.group(1))
    return 7 if _BOLD_LINE.match(raw) else 0


def _names_context(raw: str) -> bool:
    """Whether a heading names a venue with its year or an award: it heads a part of the
    article (a venue's or an award's papers), not a part of one paper's explainer."""
    s = plain(raw)
    return _names_venue_year(s) or _is_award_header(s)


#: A heading that is only an acronym (and a year): at a level of venue headings, a venue's name.
_ACRONYM_HEADING = re.compile(r"(?P<venue>[A-Z][A-Z0-9&]{1,9})(?:\s*(?P<year>(?:19|20)\d\d))?")


def _venue_levels(lines: list[Line]) -> frozenset[int]:
    """The heading levels at which two headings or more name different venues (a guide with a
    part per venue: "# CoRL", "# RSS", "# ICRA")."""
    named: dict[int, set[str]] = {}
    for line in lines:
        level = _heading_level(line.stripped)
        if level:
            named.setdefault(level, set()).update(v for v, _, _, _ in find_venue_years(plain(line.stripped))[:1])
    return frozenset(level for level, venues in named.items() if len(venues) >= 2)


#: A heading that is only a venue's acronym and a two-digit year ("CVPR 24").
_SHORT_YEAR_HEADING = re.compile(r"[A-Za-z][A-Za-z&]{1,9}\s+(\d\d)")
#: A year alone at the end of a line ("… Vol. 43, No. 4. 2024").
_LINE_END_YEAR = re.compile(r"(?<![\d.\-/])((?:19|20)\d\d)\.?\s*$")


def _enter_heading(venue_ctx: dict[int, tuple[str, int | None]], level: int, raw: str,
                   venue_levels: frozenset[int] = frozenset()) -> None:
    """A heading at ``level`` ends the context of the headings at its level and below; when it
    names a venue, that venue (and year) is the context of the sections under it."""
    level = level or 7
    sibling = venue_ctx.get(level)
    for k in [k for k in venue_ctx if k >= level]:
        del venue_ctx[k]
    found = find_venue_years(plain(raw))
    if found:
        venue, year, _, _ = found[0]
        if year is None and (short := _SHORT_YEAR_HEADING.fullmatch(plain(raw).strip(" \t*_#:："))):
            year = 2000 + int(short.group(1))  # a heading of a venue and two digits: "#### CVPR 24"
        venue_ctx[level] = (venue, year)
    elif sibling is not None and sibling[0] and level in venue_levels:
        # a heading in the place of a venue heading, at a level of venue headings ("# CoRL" …
        # "# RSS" … "# ICRA"), heads a part of another venue: the one its acronym names, else
        # one not known here (the document's venue is not its papers')
        m = _ACRONYM_HEADING.fullmatch(plain(raw).strip())
        venue_ctx[level] = (m.group("venue"), int(m.group("year")) if m.group("year") else None) if m else ("", None)


def _row_text(cand: Candidate) -> str:
    """A table row's section text: one line per cell, ``Header: cell`` when the table names its
    columns (so a column named Authors or 作者 reads as a metadata line). A cell of several
    lines stays on its lines, except under an author or institution column, where its lines
    become one ``;``-separated list ("A, Google<br>B, EPFL": one person and affiliation a line)."""
    out = []
    for k, cell in enumerate(cand.cells):
        text = _cell_text(cell)
        name = plain(cand.header[k]).strip() if k < len(cand.header) else ""
        if text and name and "\n" in text and _names_people(name):
            text = "; ".join(text.split("\n"))
        if text:
            out.append(f"{name}: {text}" if name and "\n" not in text else text)
    return "\n".join(out)


def _names_people(column: str) -> bool:
    """Whether a table column's header is an author or institution key (Authors, 作者, 单位)."""
    parsed = parse_key_value(f"{column}: x")
    return parsed is not None and parsed[0] in ("authors", "institutions")


def _cell_text(cell: str) -> str:
    """A table cell's text on lines: HTML line breaks as newlines, tags and Markdown markup removed."""
    cell = re.sub(r"<br\s*/?>", "\n", cell, flags=re.I)
    cell = re.sub(r"<[^>]{1,200}>", " ", cell)
    return "\n".join(plain(part).strip() for part in cell.split("\n") if plain(part).strip())


#: Evidence that a page reports one piece of research, each kind counted once (see
#: :func:`_one_paper_evidence`): strong kinds weigh 2, weak ones 1.
_PAPER_FILE_LINK = re.compile(r"https?://\S+?\.pdf\b|openreview\.net/(?:forum|pdf)\?id=[\w-]*", re.I)
_ABSTRACT_VOICE = re.compile(
    r"\b(?:in\s+this\s+(?:paper|work)|we\s+(?:propose|introduce|present))\b"
    r"|(?:本文|我们|我們|作者|团队|團隊|研究者|研究人员|研究人員)(?:首次|还|還|進一步|进一步)?提出", re.I)
_AUTHOR_ROLE = re.compile(r"第一作者|通[讯訊]作者|共同一作|\b(?:corresponding|first|lead)\s+author\b", re.I)
_WEAK_PAPER_WORD = re.compile(r"论文|論文|\bpaper\b", re.I)
#: The evidence weight at which a page with no title anchor is about one paper.
ONE_PAPER_EVIDENCE = 2


def _one_paper_evidence(text: str) -> int:
    """How strongly a page reads as a report of one paper: a link to one paper's file (a PDF,
    an OpenReview page: the only one the page links; links to several are a list of papers),
    the voice of an abstract ("In this paper we", "本文提出") and an author's role (通讯作者,
    "corresponding author") weigh 2 each; a word for a paper weighs 1. A byline (``作者：…``)
    and a word for papers alone do not make a report of one."""
    one_file = len({m.group(0) for m in _PAPER_FILE_LINK.finditer(text)}) == 1
    score = 2 * (one_file + sum(bool(p.search(text)) for p in (_ABSTRACT_VOICE, _AUTHOR_ROLE)))
    return score + bool(_WEAK_PAPER_WORD.search(text))


def _about_one_paper(text: str) -> bool:
    """Whether a document with no title anchor still reports a paper: it links exactly one
    arXiv paper; or it speaks of papers (:data:`pipeline.candidates.ABOUT_PAPERS`) and one of
    its sentences gives an award of a venue edition ("won the NeurIPS 2024 best paper award": a
    news item on an award paper); or, linking no arXiv paper, it carries the evidence of a
    report on one paper (:func:`_one_paper_evidence`). A venue named with its year alone is news
    about the conference (attendance, submissions, a call for papers), not a report of a paper."""
    arxiv = {a for a, _ in find_arxiv_ids(text)}
    if len(arxiv) == 1:
        return True
    if not arxiv and _one_paper_evidence(text) >= ONE_PAPER_EVIDENCE:
        return True
    if arxiv or not ABOUT_PAPERS.search(text) or not find_award_label(text):
        return False
    return any(find_award_label(sentence) and _names_venue_year(sentence)
               for paragraph in text.split("\n") for sentence in split_sentences(paragraph))


def segment_document(text: str, dropped: list[dict], title: str | None = None) -> dict:
    """Sections and context of one document.

    Args:
        text: the decoded document text.
        dropped: spans from :func:`pipeline.clean.find_dropped`.
        title: the page's own title (an HTML ``<title>``, a record's title field), or None. When
            the text does not hold it, it is read as the headline: it may name the venue and
            the award of every paper below (main-content extraction leaves it out).

    Returns:
        dict with ``sections`` (list of dicts with the keys of :data:`SECTION_FIELDS`; offsets
        are characters into ``text``, ``text`` is the section's slice without dropped spans),
        ``context`` (list of ``{char_start, char_end, kind}``, kind in ``headline``, ``lead``,
        ``award_header``, ``award_intro``, ``reference``, ``trailer``), ``doc_venue`` (str or
        None), ``doc_year`` (int or None), ``doc_urls`` (list of str).
    """
    lines = kept_lines(text, dropped)
    # a line joined across a hard wrap (kept_lines) is one line of its section's text too
    body_text = _unwrapped(text, lines)
    kinds = _classify(lines)
    anchors: dict[int, Candidate | str | None] = dict(choose_anchors(lines, kinds))
    headline = _restated_headline(lines)
    if headline is not None:
        # the page's first line is a paper's title that its opening prose names as the paper it
        # is about ("This article explains the ICLR 2024 paper <title> by …"): one explainer,
        # whose sub-headings are its parts, not papers
        anchors = {0: headline}
    if not anchors or (len(anchors) == 1 and all(isinstance(c, Candidate) and c.style == "plain" for c in anchors.values())):
        # (one unmarked line kept as a title is weak evidence: papers named in the prose, two
        # or more, are the article's layout)
        split_lines_, split_kinds, narrative = _narrative(lines, kinds)
        if not anchors or len(narrative) >= 2:
            lines, kinds, anchors = split_lines_, split_kinds, dict(narrative)
    if not anchors:
        anchors = dict.fromkeys(_untitled_blocks(lines, kinds), "")
    if not anchors and lines and _about_one_paper("\n".join(line.text for line in lines)):
        # a page about one paper that never writes its title as a heading or a quoted name in a
        # sentence about a paper: the page is that paper's one section, titled by an English
        # title quoted anywhere, else untitled (its first line is the page's headline, not the
        # paper's title)
        anchors = {0: _quoted_title(lines) or ""}
    if len(anchors) >= 2:
        _drop_restated_mentions(lines, anchors)
    if len(anchors) <= 1 and "reference" in kinds:
        # under one paper, a list of references is that paper's ("參考資料：" / "* [論文](arxiv…)"):
        # a bare label line does not end its section
        kinds = ["body" if k == "reference" and parse_key_value(plain(line.text)) is None else k
                 for line, k in zip(lines, kinds, strict=True)]

    sections: list[dict] = []
    context: list[dict] = []
    doc_urls: list[str] = []
    current: list[Line] | None = None
    current_cand: Candidate | None = None
    award_raw: str | None = None
    award_level = 99
    venue_ctx: dict[int, tuple[str, int | None]] = {}  # heading level -> venue and year it names
    lead_ctx: tuple[str | None, int | None] = (None, None)  # the venue and year the lead names
    state = "lead"  # what non-section lines are, before the first anchor / after a header
    award_headers = False  # an award header seen (an award lead sentence is none)
    venue_levels = _venue_levels(lines) if sum(line.text.startswith("#") for line in lines) >= 2 else frozenset()
    heading: str | None = None

    def close() -> None:
        nonlocal current, current_cand
        if current:
            start, end = trim_span(text, current[0].start, current[-1].end)
            body = _cut(body_text, start, end, dropped)
            if current_cand is not None and current_cand.style == "table":
                body = _row_text(current_cand)
            ctx = venue_ctx[max(venue_ctx)] if venue_ctx else lead_ctx
            sections.append({
                "ordinal": len(sections),
                "char_start": start,
                "char_end": end,
                "heading": heading if heading is not None else current[0].stripped,
                "text": body,
                "ctx_award_raw": award_raw,
                "lead_award_raw": None,
                "ctx_venue": ctx[0],
                "ctx_year": ctx[1],
            })
        current, current_cand = None, None

    def add_context(line: Line, kind: str) -> None:
        nonlocal lead_ctx
        start, end = trim_span(text, line.start, line.end)
        context.append({"char_start": start, "char_end": end, "kind": kind})
        if not venue_ctx and kind in ("headline", "lead", "award_intro"):
            # the venue edition the text right above names ("For the NeurIPS 2024 Test of Time
            # Award, two papers ...") is the context of the sections under it, until a heading
            dated = [(v, y) for v, y, _, _ in find_venue_years(line.stripped) if y is not None]
            if dated:
                # a lead that names two venues above the first paper ("NeurIPS 2025 best papers
                # … as I did with ICML 2025 …") gives none: the document's venue decides
                lead_ctx = (None, None) if not sections and lead_ctx[0] not in (None, dated[0][0]) else dated[0]

    for i, (line, kind) in enumerate(zip(lines, kinds, strict=True)):
        level = _heading_level(line.stripped)
        if i in anchors:
            close()
            current = [line]
            anchor = anchors[i]
            if isinstance(anchor, Candidate):
                current_cand = anchor
                heading = anchor.title if title_is_part(anchor, line.stripped) else None
            else:
                heading = anchor
        elif i + 1 in anchors and _venue_heading(_LIST_ITEM.sub("", plain(line.stripped))):
            # a short line naming a venue edition right above a paper ("• ICCV2015" in a list
            # grouped by venue) heads the papers below it, like a heading
            close()
            _enter_heading(venue_ctx, 7, line.stripped)
            add_context(line, "headline" if not context and state == "lead" and not sections else state)
        elif kind == "award_header" or (kind == "award_lead" and (award_raw is None or award_level == AWARD_LEAD_LEVEL)):
            # (an award lead under an award header is that award's prose: the header holds)
            if kind == "award_lead":  # a sentence, not a heading: every heading below ends it
                level = AWARD_LEAD_LEVEL
            close()
            award_raw, award_level = line.stripped, level
            award_headers = award_headers or kind == "award_header"
            _enter_heading(venue_ctx, level, line.stripped, venue_levels)
            add_context(line, "award_header")
            state = "award_intro"
        elif kind == "reference":
            close()
            add_context(line, "reference")
            doc_urls.extend(u for u in find_urls(line.stripped) if u not in doc_urls)
            state = "trailer"
        elif level and (not current or not _heading_level(current[0].stripped)
                        or level < _heading_level(current[0].stripped) or _names_context(line.stripped)):
            # a heading that is not a paper closes the section and sets the context below it
            close()
            if level <= award_level:
                award_raw, award_level = None, 99
            _enter_heading(venue_ctx, level, line.stripped, venue_levels)
            add_context(line, "headline" if not context and state == "lead" and not sections else state)
        elif current is not None:
            current.append(line)
        else:
            add_context(line, "headline" if not context and state == "lead" and not sections else state)
    close()

    headline = title.strip() if title and title.strip() not in text else front_matter_headline(dropped)
    venue_counts: Counter = Counter()
    year_counts: Counter = Counter()
    first_section = sections[0]["char_start"] if sections else len(text)
    # a venue named between or after the sections counts when its line speaks of papers ("a
    # keynote at CVPR 2023" under a paper does not make the document's papers CVPR's)
    spans = [text[span["char_start"] : span["char_end"]] for span in context]
    spans = [t for span, t in zip(context, spans, strict=True)
             if span["char_start"] < first_section or span["kind"] in ("award_header", "award_intro", "reference")
             or _PAPER_CUE.search(t)]
    for span_text in [headline] + spans:
        for venue, year, _, _ in find_venue_years(span_text):
            venue_counts[venue] += 2 if year else 1
            if year:
                year_counts[(venue, year)] += 1
        for venue, year in find_dated_venue_years(span_text):
            venue_counts[venue] += 1  # the undated mention counted 1 above; dated, it counts 2
            year_counts[(venue, year)] += 1
    linked = Counter(filter(None, map(venue_from_url, find_urls(text)))) if "://" in text else Counter()
    # links outside the sections, and the venue that at least half of the sections link to (a
    # venue's reading list); one section's own proceedings link names that paper's venue only
    # (pipeline.extract)
    context_linked: Counter = Counter()
    if linked:
        section_urls = [set(find_urls(sec["text"])) for sec in sections]
        in_sections = set().union(*section_urls)
        context_linked.update(filter(None, (venue_from_url(u) for u in find_urls(text) if u not in in_sections)))
        # (each section's venues in sorted order: a tie in most_common goes to the first counted)
        per_section = Counter(v for urls in section_urls for v in sorted(set(filter(None, map(venue_from_url, urls)))))
        context_linked.update({v: n for v, n in per_section.items() if 2 * n >= len(sections)})
        if not context_linked and len(per_section) == 1 and min(per_section.values()) >= 2:
            # the one venue edition that every proceedings link of a reading list names, from
            # two papers or more, is the list's (the others link a preprint or a code host)
            context_linked.update(per_section)
    if not venue_counts:  # no venue named in the context: the proceedings its context links to may
        for (venue, year), n in context_linked.items():
            venue_counts[venue] += n
            year_counts[(venue, year)] += n
    doc_venue = venue_counts.most_common(1)[0][0] if venue_counts else None
    years = [(n, y) for (v, y), n in year_counts.items() if v == doc_venue]
    if doc_venue is not None and not years:  # named without a year: the year its links give
        years = [(n, y) for (v, y), n in linked.items() if v == doc_venue]
    if doc_venue is not None and not years:
        # the context names the venue but not its year: the sections' prose may ("在 NeurIPS
        # 2023 公布的获奖名单中", "2024 年 12 月，NeurIPS 把…"); the first such year counts
        for sec in sections:
            found = [y for v, y, _, _ in find_venue_years(sec["text"]) if v == doc_venue and y]
            found += [y for v, y in find_dated_venue_years(sec["text"]) if v == doc_venue]
            if found:
                years = [(1, found[0])]
                break
    if doc_venue is not None and not years:
        # a line above the papers that names the venue and ends with a year alone: a journal
        # issue ("ACM Transactions on Graphics (TOG): Vol. 43, No. 4. 2024")
        for span_text in [headline] + [t for span, t in zip(context, (text[c["char_start"] : c["char_end"]] for c in context), strict=True)
                                       if span["char_start"] < first_section]:
            end_year = _LINE_END_YEAR.search(span_text) if span_text else None
            if end_year and any(v == doc_venue for v, _, _, _ in find_venue_years(span_text)):
                years = [(1, int(end_year.group(1)))]
                break
    doc_year = max(years)[1] if years else None
    if doc_venue is None and len(sections) == 1 and sections[0]["char_start"] <= first_line_end(text):
        # a page that is one paper's section from its first line names its venue edition in its
        # opening lines ("[NeurIPS 2024 Best Paper Award] Official impl. of …")
        opening = "\n".join([ln for ln in sections[0]["text"].splitlines() if ln.strip()][:ONE_PAPER_AWARD_LINES])
        dated = [(v, y) for v, y, _, _ in find_venue_years(opening) if y is not None]
        if dated:
            doc_venue, doc_year = dated[0]

    # an article without award headers may give all its papers one award in its headline/lead
    # (the papers under an award lead sentence keep that sentence's: pipeline.extract)
    if not award_headers:
        lead = "\n".join([headline] + [text[span["char_start"] : span["char_end"]] for span in context
                                        if span["kind"] in ("headline", "lead")])
        label = lead_award(lead) if not _NOT_AWARDED.search(lead) else None  # nominated, shortlisted
        # a lead that names some of the papers gives the award to those only (notes on an award
        # paper that go on to the papers it builds on)
        if label is not None and sections:
            lead_key = fold_title(lead)
            named = [sec for sec in sections if len(k := fold_title(sec["heading"] or "")) >= 8 and k in lead_key]
            for sec in named or sections:
                sec["lead_award_raw"] = label
    if len(sections) == 1 and not sections[0]["lead_award_raw"] and not sections[0]["ctx_award_raw"]:
        # a page about one paper says its award in its opening lines ("This year's ACL 2022 best
        # paper was …", "(ICLR 2025 Oral, Outstanding Paper Award)")
        opening = "\n".join([ln for ln in sections[0]["text"].splitlines() if ln.strip()][:ONE_PAPER_AWARD_LINES])
        if not _NOT_AWARDED.search(opening):
            sections[0]["lead_award_raw"] = lead_award(opening)
    return {"sections": sections, "context": context, "doc_venue": doc_venue, "doc_year": doc_year,
            "doc_urls": doc_urls}


#: A Markdown heading line (ATX: 1-6 ``#``), its text in group 1.
_MARKDOWN_HEADING = re.compile(r"^ {0,3}#{1,6}[ \t]+(.+?)[ \t#]*$", re.M)


def long_heading_notes(text: str) -> list[str]:
    """A note for each Markdown heading of ``text`` longer than :data:`MAX_TITLE_CHARS`: such a
    heading is never a paper's title, so the paper it names gets no section of its own."""
    notes = []
    for m in _MARKDOWN_HEADING.finditer(text):
        heading = plain(m.group(1)).strip()
        if len(heading) > MAX_TITLE_CHARS:
            notes.append(f"segment: a heading of {len(heading):,} characters (a title has at most {MAX_TITLE_CHARS}) "
                         f"starts no section: {heading[:60]!r}...")
    return notes


def segment_documents(batch: pd.DataFrame, config: Config) -> pd.DataFrame:
    """Stage function: add ``sections``, ``context``, ``doc_venue``, ``doc_year``, ``doc_urls`` and
    the document's script ``lang`` (:func:`pipeline.normalize.detect_script` over its whole text),
    and a note per overlong heading to ``notes`` when the batch has that column
    (:func:`long_heading_notes`).

    Input columns: ``text`` (str), ``dropped`` (list of span dicts), ``status`` (str), and
    optionally ``paper_record`` (JSON or None): a paper record's document is one section
    (:func:`pipeline.paper_records.record_section`), and ``title`` (str or None: the page's
    title, a headline when the text lacks it). Documents whose status is not ``"ok"`` get
    no sections and no context.
    """
    papers = batch["paper_record"] if "paper_record" in batch else [None] * len(batch)
    titles = batch["title"] if "title" in batch else [None] * len(batch)
    results = []
    for doc_id, text, dropped, status, paper, title in zip(batch["doc_id"], batch["text"], batch["dropped"],
                                                            batch["status"], papers, titles, strict=True):
        if status != "ok":
            results.append({"sections": [], "context": [], "doc_venue": None, "doc_year": None, "doc_urls": []})
        elif isinstance(paper, str):
            results.append(paper_records.record_section(text, paper))
        else:
            token = _DOCUMENT.set(doc_id)
            try:
                results.append(segment_document(text, dropped, title if isinstance(title, str) else None))
            finally:
                _DOCUMENT.reset(token)
    out = batch.copy()
    for key in ("sections", "context", "doc_venue", "doc_year", "doc_urls"):
        out[key] = [r[key] for r in results]
    out["lang"] = [detect_script(t) if s == "ok" else None for t, s in zip(batch["text"], batch["status"], strict=True)]
    if "notes" in out:
        out["notes"] = [_with_notes(n, long_heading_notes(t) if s == "ok" and not isinstance(p, str) else [])
                        for n, t, s, p in zip(out["notes"], batch["text"], batch["status"], papers, strict=True)]
    return out


def _with_notes(notes: str | None, more: list[str]) -> str | None:
    """A ``notes`` value (``"; "``-joined, None when empty) with ``more`` appended."""
    if not more:
        return notes
    return "; ".join([notes, *more] if isinstance(notes, str) and notes else more)


def explode_sections(documents: pd.DataFrame) -> pd.DataFrame:
    """One row per section: ``section_id``, ``doc_id``, the :data:`SECTION_FIELDS`, ``doc_venue``,
    ``doc_year``, ``paper_record`` (the document's, None when it has no such column).

    ``section_id`` is ``"<doc_id>-<ordinal, 3 digits>"``, stable because ``doc_id`` is a content
    hash and ordinals follow document order.
    """
    rows = []
    for doc in documents.itertuples(index=False):
        for sec in doc.sections:
            # the venue of the nearest heading above the section, else the document's
            ctx_venue = sec.get("ctx_venue")
            venue = (ctx_venue or None) if ctx_venue is not None else doc.doc_venue
            year = sec.get("ctx_year") if ctx_venue is not None else doc.doc_year
            rows.append({
                "section_id": f"{doc.doc_id}-{sec['ordinal']:03d}",
                "doc_id": doc.doc_id,
                **{k: sec.get(k) for k in SECTION_FIELDS if k not in _CONTEXT_FIELDS},
                "doc_venue": venue,
                "doc_year": year if year is not None or venue != doc.doc_venue else doc.doc_year,
                "paper_record": getattr(doc, "paper_record", None),
            })
    return pd.DataFrame(rows, columns=list(EXPLODED_COLUMNS))


STAGE = Stage(
    name="segment",
    fn=segment_documents,
    requires=("doc_id", "text", "dropped", "status"),
    adds=("sections", "context", "doc_venue", "doc_year", "doc_urls", "lang"),
)
