"""Title candidates: every span of a document that could be a paper's title, with the evidence
around it, as a feature vector for :mod:`pipeline.title_model`.

A candidate is one kept line's most title-like span by markup (:data:`STYLES`); inline
mentions in prose are not candidates. Features (:data:`FEATURES`, floats) describe the span, the
lines after it up to the next candidate, its siblings of the same style and its place: shallow
text and markup features for a trained classifier (Kohlschütter et al., "Boilerplate Detection
using Shallow Text Features", WSDM 2010).
"""

from __future__ import annotations

import functools
import math
import operator
import re
import string
from collections import Counter
from dataclasses import dataclass, field

from .credits import _LOW, _UP, find_credit, parse_credit_line
from .fields import (
    GENERIC_PAPER_KEYS,
    MONTHS,
    PLACEHOLDER_VALUE,
    find_award_label,
    find_venue_years,
    fold_title,
    normalize_award,
    parse_key_value,
)
from .headings import (
    BOOK_TITLE,
    DECORATION_ONLY,
    ENUMERATED_HEADING,
    LEADING_DECORATION,
    LIST_NUMBER,
    MAX_DECORATION_CHARS,
    NUMBERED_HEADING,
    venue_label,
    without_venue_label,
)
from .identifiers import find_arxiv_ids, find_urls
from .textutil import HTML_BREAK, YEAR, Line, data_lines, latin_words, plain

_MD_HEADING = re.compile(r"^(?P<hashes>#{1,6})[ \t]+(?P<text>\S.*)$")
_BOLD_LINE = re.compile(r"^(?:\*\*|__)(?P<inner>[^*_].*?)(?:\*\*|__)[：:]?$")
_BOLD_RUN = re.compile(r"(?:\*\*|__)(?P<inner>[^*_\n].*?)(?:\*\*|__)")
_LINK = re.compile(r"\[(?P<text>[^\[\]\n]{2,400})\]\((?P<url><[^<>\n]*>|[^()\s]+(?:\([^()\s]*\)[^()\s]*)?)\)")
_BULLET = re.compile(rf"^(?:[-*+](?=\s)\s*|[•·▪●◆◇■□➤►▶✅☑️📄📌🔹🔸]\s*|{LIST_NUMBER}[.)、．]\s*|[（(]\d{{1,3}}[）)]\s*)(?:\[[ xX]\]\s*)?")
_HTML_A = re.compile(r"<a\s[^>]*?href=[\"'](?P<href>[^\"']+)[\"'][^>]*>(?P<text>.*?)</a>", re.I | re.S)
_HTML_BOLD = re.compile(r"</?(?:b|strong)(?:\s[^>]*)?>", re.I)
_IMAGE = re.compile(r"!\[[^\]\n]*\]\([^)\s]*\)")
_TABLE_ROW = re.compile(r"^\s*\|[^|\n]*\|")
#: Longest line that can hold a title candidate, in characters (a table row may be wider).
MAX_LINE_CHARS = 2000
MAX_ROW_CHARS = 20000


#: First characters of the lines whose title span can be shorter than the line (markup).
_MARKUP_STARTS = frozenset("#|*_-+•·▪●◆◇■□➤►▶✅☑📄📌🔹🔸<[《“\"「『【(（")


def _is_table_rule(s: str) -> bool:
    """A Markdown table's delimiter row (``|---|:--:|``)."""
    return "--" in s and "|" in s and not s.strip(" \t:|-")


def _is_italic_line(s: str) -> bool:
    """A line wrapped in one emphasis marker (``*A, B and C*``, ``_A, B_``)."""
    s = s.rstrip()
    return len(s) >= 3 and s[0] in "*_" and s[1] != s[0] and s[-1] == s[0] and s[-2] != s[0]
_HAN = re.compile(r"[\u3400-\u9fff]")
_SENTENCE_PUNCT = re.compile(r"[。，；！？,;!?]")
_ZH_SENTENCE_PUNCT = re.compile(r"[。，；！？]")
_SENTENCE_END = re.compile(r"[.。!！?？;；，,]\s*$")
#: A reference's title line: one sentence of at most 200 characters ending with a period.
_CITATION_TITLE = re.compile(r"^[A-Z0-9][^.!?。]{8,198}\.$")
_STATEMENT_END = re.compile(r"[.。!！;；，,]\s*$")  # a question may be a title
#: The start of a line that continues the line above it in a hard-wrapped paragraph: a
#: lower-case word but a credit's "by"/"and", a reference's "in"/"pp"/"vol", a link or an id.
_CONTINUES = re.compile(r"(?!(?:by|and|et\s+al|arxiv|https?|www|in|pp|vol|doi)\b)[a-z]")
#: The shortest line (characters) counted as a line of a hard-wrapped paragraph.
MIN_WRAPPED_LINE_CHARS = 40
#: TeX math in a line ("$$n^{2}$$", "\frac{X}{S}"): a formula or prose about one, not a title.
_TEX_MATH = re.compile(r"\$\$|\\(?:frac|left|right|mathbb|mathrm|sqrt|sum|cdot|leq|geq|times|begin|end)\b")
#: A line that is only a date or arXiv subject classes ("2025年2月27日", "cs.AI; cs.CV"): no title.
_MONTH = f"(?:{MONTHS})"
#: A clock time that opens a list item of a programme ("10:40", "8:00pm", "14:30-15:00").
_CLOCK_TIME = re.compile(r"\s*\d{1,2}:\d\d(?:\s*[ap]\.?m\.?)?(?![\d:])", re.I)
_NOT_TITLE_LINE = re.compile(
    rf"(?:(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun)[a-z]*,?\s+)?(?:{_MONTH}\s+\d{{1,2}}(?:st|nd|rd|th)?,?\s+\d{{4}}"
    rf"|\d{{1,2}}\s+{_MONTH},?\s+\d{{4}}|{_MONTH}\s+\d{{4}}|\d{{4}}[-/.]\d{{1,2}}[-/.]\d{{1,2}}"
    r"|\d{4}\s*年\s*\d{1,2}\s*月(?:\s*\d{1,2}\s*[日号號])?)(?:\s+\d{1,2}:\d{2}(?::\d{2})?)?"
    r"|(?:(?:cs|math|stat|eess|econ|physics|q-bio|q-fin)\.[A-Z]{2}[;,\s]*)+",
    re.I,
)
_TRAILING_REF = re.compile(r"(?<!\s)(?:\s*(?:arxiv\s*[:：]?\s*\S+|https?://\S+|doi\s*[:：]\s*\S+|\(\s*\)|[\[(（]\s*(?:pdf|paper|code|link)\s*[\])）]))+\s*$", re.I)
_TAG = re.compile(r"<[^>]{1,200}>")
_QUOTED = re.compile(r"^[\"“「『](?P<inner>[^\"“”「」『』]{4,400})[\"”」』]")
#: A person's name in a list of names: 2-4 capitalised Latin words ("Yi‐Chieh Wu").
_NAME = re.compile(rf"^[{_UP}][{_UP}{_LOW}'’.\-\u2010\u2011]+(?:\s+[{_UP}][{_UP}{_LOW}'’.\-\u2010\u2011]*){{1,3}}$")
_CREDIT_WORD = re.compile(
    r"作者|一作|通讯作者|通訊作者|团队|團隊|研究者|研究人员|研究人員|机构|機構|单位|單位|来自|來自"
    r"|\bauthors?\b|\bby\b|\bet al\b|university|institute|大学|大學|实验室|實驗室|研究院",
    re.I,
)
_PAPER_WORD = re.compile(r"论文|論文|paper|arxiv|预印本|預印本|\bpdf\b|github|代码|代碼|\bcode\b|项目|項目|project", re.I)
# The same words as literals and the few whole words, for the per-line evidence.
_CREDIT_LITERALS = ("作者", "一作", "团队", "團隊", "研究者", "研究人员", "研究人員", "机构", "機構", "单位", "單位",
                    "来自", "來自", "university", "institute", "大学", "大學", "实验室", "實驗室", "研究院")
_CREDIT_WORDS = re.compile(r"\bauthors?\b|\bby\b|\bet al\b")
_PAPER_LITERALS = ("论文", "論文", "paper", "arxiv", "预印本", "預印本", "github", "代码", "代碼", "项目", "項目",
                   "project")
_PAPER_WORDS = re.compile(r"\bpdf\b|\bcode\b")


def _credit_word(lower: str) -> bool:
    return any(w in lower for w in _CREDIT_LITERALS) or bool(
        ("author" in lower or "by" in lower or "et al" in lower) and _CREDIT_WORDS.search(lower))


def _paper_word(lower: str) -> bool:
    return any(w in lower for w in _PAPER_LITERALS) or bool(
        ("pdf" in lower or "code" in lower) and _PAPER_WORDS.search(lower))


#: Words that say a text is about research papers.
ABOUT_PAPERS = re.compile(r"论文|論文|arXiv|预印本|預印本|\bpapers?\b|\bpreprints?\b|\bproceedings\b", re.I)
_QUESTION = re.compile(r"[?？]\s*$|^(?:what|why|how|when|where|which|who)\b|什么|什麼|为什么|為什麼|如何|怎么|怎麼", re.I)

#: Lines looked at after a candidate for its evidence (up to the next candidate).
EVIDENCE_LINES = 3
#: Longest candidate title, in characters (the longest titles of ML venues run to ~250).
MAX_TITLE_CHARS = 300
#: Longest plain (unmarked) line that can be a title, in characters.
MAX_PLAIN_CHARS = 200
#: Shortest candidate title, in characters (short names such as "VAR" or "D4RT" are allowed).
MIN_TITLE_CHARS = 3

#: Markup styles a candidate can have; one indicator feature each.
STYLES = ("md1", "md2", "md3", "bold_line", "bold_lead", "link_lead", "list", "table", "numbered",
          "kv_title", "book", "enum", "quoted", "plain")

#: Feature names, in the order of :meth:`Candidate.vector`: the classifier's inputs (a few more
#: flags in :attr:`Candidate.features` serve :func:`has_paper_evidence` only).
FEATURES: tuple[str, ...] = (
    *(f"style_{s}" for s in STYLES if s not in ("md3", "bold_line", "book", "quoted")),
    "latin_words", "han_chars", "chars", "titlecase_share", "colon_inside", "ends_like_sentence",
    "sentence_punct", "question", "venue_year", "award_label", "has_digit_start",
    "has_url", "has_arxiv", "paper_word_in_line", "self_credit", "italic_line",
    "next_authors", "next_prose_credit", "next_kv_authors", "next_arxiv",
    "next_credit_word", "next_paper_word", "next_body_chars", "next_candidate_gap",
    "siblings", "sibling_evidence_share", "doc_candidates", "position", "style_share",
)


_FEATURE_ORDER = operator.itemgetter(*FEATURES)


def _has_url(raw: str) -> bool:
    """:func:`pipeline.identifiers.find_urls` finds something (every URL holds a slash or "www.")."""
    return ("/" in raw or "www." in raw.lower()) and bool(find_urls(raw))


@dataclass
class Candidate:
    """A title candidate: ``title`` is the span's text without markup, from kept line ``line``;
    ``cells`` a table row's cells; ``features`` set by :func:`find_candidates`."""

    line: int
    title: str
    style: str
    level: int = 0
    cells: list[str] = field(default_factory=list)
    header: list[str] = field(default_factory=list)
    features: dict[str, float] = field(default_factory=dict)
    #: a line of a hard-wrapped paragraph, of TeX math or ending in a colon: scored with the
    #: others, never an anchor
    prose: bool = False

    def vector(self) -> tuple[float, ...]:
        """The features in :data:`FEATURES` order (every one is set by :func:`find_candidates`)."""
        return _FEATURE_ORDER(self.features)


def unlink(t: str) -> str:
    """``t`` with Markdown links replaced by their text and images removed."""
    t = _IMAGE.sub(" ", t)
    return _LINK.sub(lambda m: m.group("text"), t) if "](" in t else t


def _clean_title(t: str) -> str:
    t = unlink(_TAG.sub(" ", HTML_BREAK.sub(" ", t)))
    t = plain(t).strip(" \t*_`~>|:：-–—·•")
    m = ENUMERATED_HEADING.match(t)
    if m and not re.match(r"^\d+\.\d", t):
        t = m.group("title").strip()
    if (m := GLUED_YEAR.match(t)) and len(t) - m.end() >= MIN_TITLE_CHARS * 3:
        t = t[m.end():]  # "CVPR2015-DynamicFusion：…"
    return t.strip()


_ASCII_LETTER = re.compile(r"[A-Za-z]{2}")
#: A quoted title after the authors of a formatted reference (MLA, Chicago, IEEE):
#: 'He, Kaiming, et al. "Deep residual learning for image recognition." arXiv preprint …'.
_QUOTED_IN_REFERENCE = re.compile(r'(?<=\.\s)["“](?P<title>[^"“”]{8,300}?)[.,]?["”]')
#: GB/T 7714 document-type marks that close a reference's title ("Title[J]. Journal, 2014").
_GBT_TYPE_MARK = re.compile(r"\[(?:J|C|M|D|R|A|N|P|S|Z|EB/OL|J/OL|C/OL|DB/OL)\]")
#: A GB/T 7714 reference's one author: "He K", "LeCun Y", "张三" (surname and initials, or a Han name).
_GBT_ONE_AUTHOR = re.compile(r"[A-Z][A-Za-z'’-]+(?: [A-Z][A-Za-z'’-]+)? [A-Z]{1,3}|[\u3400-\u9fff]{2,4}")
#: An APA reference's title after its year: "Author, A., & Author, B. (2021). Title. Venue".
#: An APA author before the year: a surname, a comma and given names or initials ("Doe, J.",
#: "Doe, Jane"); a title before "(2021)." ("Title (2021). Code and slides.") has none.
_APA_AUTHOR = re.compile(r"(?<![\w'’-])[^\W\d_][\w'’-]*,\s+[A-Z]")  # (from a word's start: linear time)
_APA_TITLE = re.compile(r"\((?:19|20)\d\d[a-z]?\)\.\s+(?P<title>[^.?!]{8,300}[?!]?)")


#: A title quoted or linked right after the word paper in a news item ('the paper "Title", by A',
#: 'for the paper [Title](url) by A, B').
_NAMED_PAPER = re.compile(r"\b[Pp]aper\s+(?:titled\s+|entitled\s+)?(?:[\"“](?P<q>[^\"“”]{12,300})[\"”]"
                          r"|\[(?P<l>[^\[\]]{12,300})\]\()")


#: An ACM reference's title after its year: "A, B, and C. 2025. Title. In Proceedings of …".
_ACM_TITLE = re.compile(r"\.\s(?:19|20)\d\d[a-z]?\.\s+(?P<title>.{8,300}?(?:[?!]|(?=\.)))\.?\s+"
                        r"(?=In\b|Proceedings\b|arXiv\b|ACM\b|IEEE\b)")


def citation_title(s: str) -> str | None:
    """The title of a formatted reference (MLA/Chicago/IEEE quoted title, GB/T 7714 title before
    its ``[J]``/``[C]`` mark, APA title after ``(YEAR).``, ACM title after ``. YEAR.``); None for
    any other text. Styles: the Chicago Manual of Style, GB/T 7714-2015, APA 7, the ACM Reference Format."""
    if m := _GBT_TYPE_MARK.search(s):
        head = s[: m.start()]
        cut = head.rfind("et al. ")
        names = head.split(". ")[0]
        cut = cut + len("et al. ") if cut >= 0 else (
            head.find(". ") + 2 if _is_name_list(names) or _GBT_ONE_AUTHOR.fullmatch(names) else 0)
        title = head[cut:].strip()
        return title if len(title) >= MIN_TITLE_CHARS * 3 else None
    if (m := _QUOTED_IN_REFERENCE.search(s)) and (m.start() == 0 or s[: m.start()].rstrip().endswith(".")):
        return m.group("title").strip()
    if (m := _APA_TITLE.search(s)) and _APA_AUTHOR.search(s[: m.start()]):
        return m.group("title").strip()
    if (m := _ACM_TITLE.search(s)) and bool(names := s[: m.start()].strip(" *_")) \
            and (_is_name_list(names) or _NAME.match(names)):
        return m.group("title").strip()
    return None


def cited_parts(s: str) -> tuple[str, str, str, int | None] | None:
    """``(title, authors, after, year)`` of a formatted reference (:func:`citation_title`):
    the text before the title without its year (``A and B. 2025.``, ``A, B. (2021).``), the text
    after it, and the first year after the title, else before it; None for any other text."""
    title = citation_title(s)
    if title is None or (at := s.find(title)) <= 0:
        return None
    before, after = s[:at], s[at + len(title):]
    year = YEAR.search(after) or YEAR.search(before)
    return (title, _YEAR_TAIL.sub("", before.rstrip(' "“')).rstrip(" ."), after,
            int(year.group(0)) if year else None)


#: The year closing a reference's authors ("A and B. 2025.", "A, B. (2021)."); it starts only
#: where a run of spaces, dots and brackets starts, so a long run is scanned once (linear time).
_YEAR_TAIL = re.compile(r"(?<![\s.(])[\s.(]*(?:19|20)\d\d[a-z]?\)?[.\s]*$")


#: A link to a reader's notes closing a list item ("Title [summary](/paper/x.md)").
_NOTES_LINK_TAIL = re.compile(r"(?<!\s)\s*\[(?:summary|notes?|review|笔记|筆記|解读|解讀)\]\([^()\s]+\)\s*$", re.I)
#: A short name or a note in brackets glued to a title's last word ("Transformers(UT)",
#: "Prediction(Short Papers)").
_GLUED_SHORT_NAME = re.compile(r"(?<=[A-Za-z])\((?:[A-Z][\w-]{0,15}|[A-Z][a-z]+ [A-Z][a-z]+)\)\s*$")
#: A year, maybe after a venue's acronym, glued to a title by a hyphen ("2011-Title", "CVPR2015-Title").
GLUED_YEAR = re.compile(r"(?:[A-Z]{2,8})?(?:19|20)\d\d\s*[-–]\s*(?=[^\W\d_])")


def _heading_title(t: str) -> str:
    """A Markdown heading's title without link groups and bracketed tags around it ("[NeurIPS
    2022] Title [[PDF]](…)"), when ``3 * MIN_TITLE_CHARS`` characters are left."""
    t = _clean_title(_LINK_TAGS.sub(" ", t) if "[[" in t else t)
    if t[:1] in "[【(（" or t[-1:] in "]】":
        bare = _TRAILING_TAGS.sub("", LEADING_TAGS.sub("", t)).strip()
        t = bare if len(bare) >= MIN_TITLE_CHARS * 3 else t
    return t


def _table_cells(s: str) -> list[str]:
    inner = s.strip()
    inner = inner[1:] if inner.startswith("|") else inner
    inner = inner[:-1] if inner.endswith("|") else inner
    return [c.strip() for c in re.split(r"(?<!\\)\|", inner)]


#: Table header names of a title column (folded: lower-case, no spaces).
_TITLE_HEADERS = re.compile(r"^(?:papers?|titles?|papertitles?|name|论文|論文|论文名称?|論文名稱?|论文标题|論文標題|标题|標題|题目|題目|名称|名稱|文章)$")


#: Table header names of a column of paper titles (folded as for :data:`_TITLE_HEADERS`).
_PAPER_HEADERS = re.compile(r"^(?:papers?|papertitles?|titles?|论文|論文|论文名称?|論文名稱?|论文标题|論文標題|论文题目|論文題目)$")


def _header_name(name: str) -> str:
    """A table header cell as plain text, lower case, no spaces."""
    return re.sub(r"\s+", "", plain(name)).lower()


def titled_row(cand: Candidate) -> bool:
    """Whether a table row has the candidate's title in a column its header names as paper titles
    ("| Year | Title | Authors |"): a paper, whatever its words."""
    for k, name in enumerate(cand.header):
        if k < len(cand.cells) and _PAPER_HEADERS.match(_header_name(name)):
            return cand.title in _clean_title(cand.cells[k]) and len(_LETTER.findall(cand.title)) >= 2
    return False


#: A span that is only an identifier ("arXiv:2309.07906"): no title.
_IDENTIFIER_ONLY = re.compile(r"(?:arxiv\s*[:：]?\s*)?\d{4}\.\d{4,5}(?:v\d+)?|doi\s*[:：]?\s*10\.\S+|10\.\d{4,9}/\S+", re.I)
#: Link texts that name a kind of link, not a paper.
_LINK_KIND = r"pdf|paper|code|link|arxiv|project|github|论文|論文|代码|代碼|链接|鏈接|video|slides?"
#: ... alone or in a short phrase ("Paper Link", "Read Paper", "View PDF", "Project Page").
_GENERIC_LINK = re.compile(rf"(?:(?:read|view|see|open|download|get|full|the)\s+)?(?:{_LINK_KIND})(?:\s+(?:link|page|here|text))?", re.I)


#: Links closing a line whose texts only name kinds of link ("… codecs. [arXiv](…) [Code](…)").
_KIND_LINKS_TAIL = re.compile(
    r"(?<!\s)(?:\s*\[\s*(?:(?:" + _LINK_KIND + r"|abs|page|html|here)\s*){1,3}\]\([^()\s]+(?:\([^()\s]*\)[^()\s]*)?\)[\s,|/·]*)+$",
    re.I)


#: A short link text ending in a kind of link ("ACL Anthology PDF", "Official Code").
_KIND_WORD_TAIL = re.compile(r"^(?:\S+\s+){0,2}(?:pdf|code|slides|video|link)$", re.I)


def _names_a_link(text: str) -> bool:
    """Whether a link's text only names the link ("PDF", "arXiv 2502.16487", "ACL Anthology PDF"),
    not a paper."""
    t = text.strip(" *_")
    return bool(_GENERIC_LINK.fullmatch(t) or _IDENTIFIER_ONLY.fullmatch(t) or _KIND_WORD_TAIL.search(t))


def title_header_cell(cells: list[str], header: list[str]) -> str | None:
    """A table row's title from the first title-header column (``Title``, ``论文``) holding at least
    :data:`MIN_TITLE_CHARS`: the cell's first part, or its one link's text; any length; else None."""
    for k, name in enumerate(header):
        if k < len(cells) and _TITLE_HEADERS.match(_header_name(name)):
            first_part = HTML_BREAK.split(cells[k])[0]
            links = _LINK.findall(first_part)
            # one linked name among words about it ("重读 [AlexNet](…) 论文")
            text = _clean_title(links[0][0] if len(links) == 1 and not _GENERIC_LINK.fullmatch(links[0][0].strip())
                                else first_part)
            if len(text) >= MIN_TITLE_CHARS:
                return text
    return None


def _title_cell(cells: list[str], header: list[str] | None = None) -> str | None:
    """A table row's likeliest title cell: under a title header (:func:`title_header_cell`),
    else linked or bold text, else the wordiest cell that is no number, date or bare link; None
    when none, or the title header's cell is over :data:`MAX_TITLE_CHARS`."""
    if header and (text := title_header_cell(cells, header)) is not None:
        return text if len(text) <= MAX_TITLE_CHARS else None
    best, best_score = None, 0.0
    for k, cell in enumerate(cells):
        first_part = HTML_BREAK.split(cell)[0]
        link = next((m for m in _LINK.finditer(first_part) if not _names_a_link(m.group("text"))), None)
        bold = _BOLD_RUN.search(first_part)
        text = _clean_title(link.group("text") if link else bold.group("inner") if bold else first_part)
        if (len(text) < MIN_TITLE_CHARS or len(text) > MAX_TITLE_CHARS or re.fullmatch(r"[\d\s./:-]+", text)
                or text.startswith("http")):
            continue
        words = len(latin_words(text)) + len(_HAN.findall(text)) / 2
        score = min(words, 20) + (3 if link or bold else 0) - 0.5 * k
        if score > best_score:
            best, best_score = text, score
    return best


_HTML_HEADING = re.compile(r"<h(?P<level>[1-6])\b[^<>]*>(?P<inner>.*?)</h(?P=level)\s*>", re.I)


def html_to_markdown(raw: str) -> str:
    """Inline HTML of a line as Markdown (headings, links, bold, ``<li>``), other tags removed."""
    if "<" not in raw:
        return raw
    if m := _HTML_HEADING.fullmatch(raw.strip()):
        raw = "#" * int(m.group("level")) + " " + m.group("inner")
    s = _HTML_A.sub(lambda m: f"[{_TAG.sub('', m.group('text')).strip()}]({m.group('href')})", raw)
    s = _HTML_BOLD.sub("**", s)
    s = re.sub(r"^\s*<li[^>]*>", "- ", s, flags=re.I)
    return _TAG.sub(" ", s).strip()


def candidate_of(line: Line, header: list[str] | None = None) -> Candidate | None:
    """The title candidate of one line, or None when no span of it can be a title; ``header``
    is the header row's cells when the line is a row of a table that has one."""
    raw = line.stripped
    if len(raw) > (MAX_ROW_CHARS if raw.startswith("|") else MAX_LINE_CHARS):
        return None  # a title is short; a longer line is prose or junk
    if len(raw) > MAX_TITLE_CHARS and raw[0] not in _MARKUP_STARTS and not raw[0].isdigit():
        return None  # a long line without markup: prose, never a title's line
    if raw.startswith("<") and not _TABLE_ROW.match(raw):
        raw = html_to_markdown(raw)
    if not raw or len(raw) < MIN_TITLE_CHARS:
        return None
    s = plain(raw)
    if _NOT_TITLE_LINE.fullmatch(s.strip(" *_#")):
        return None
    if _TABLE_ROW.match(raw):
        if _is_table_rule(raw):
            return None
        cells = _table_cells(raw)
        title = _title_cell(cells, header)
        return Candidate(0, title, "table", cells=cells, header=header or []) if title else None
    if m := _MD_HEADING.match(raw):
        if (kv := parse_key_value(s)) is not None and kv[0] in ("authors", "institutions"):
            return None  # "#### Authors: A, B"
        level = len(m.group("hashes"))
        style = "md1" if level == 1 else "md2" if level == 2 else "md3"
        # ("# CVPR 2024 Best Paper: Title": the venue label is context)
        return _made(without_venue_label(_heading_title(m.group("text").rstrip().rstrip("#"))), style, level)
    if NUMBERED_HEADING.match(s):
        return _made(_clean_title(NUMBERED_HEADING.match(s).group("title")), "numbered")
    kv = parse_key_value(s)
    if kv is not None:
        if kv[0] == "title":
            return _made(" ".join(_clean_title(kv[1]).split()), "kv_title")
        # "Paper: [Title](url)" (not "Code: [repo](…)")
        m = _LINK.match(kv[1]) if kv[0] == "paper_url" and _paper_label(s) else None
        return _made(_clean_title(m.group("text")), "link_lead") if m else None
    if m := _BOLD_LINE.match(raw):
        return _made(_clean_title(m.group("inner")), "bold_line")
    bullet = _BULLET.match(raw)
    body = raw[bullet.end():].strip() if bullet else raw
    if body.startswith(("**[", "__[")):  # a bold link: "**[Title](url).** Authors"
        body = body[:2] + unlink(body[2:])
    if (m := _BOLD_RUN.match(body) or _CODE_SPAN.match(body)) and (
            _is_venue_tag(m.group("inner")) or (m.group(0)[0] == "`" and len(body) - m.end() >= MIN_TITLE_CHARS * 3)):
        body = body[m.end():].strip()  # "**[ICML 2025]** Title. [[paper](…)]", "`Journal (KBS)` Title": a tag
    elif m := _BOLD_RUN.match(body):
        return _made(_clean_title(m.group("inner")), "bold_lead")
    if m := _LINK.match(body):
        if m.group("url").startswith("#"):
            return None  # a table of contents' entry
        return _made(_clean_title(m.group("text")), "link_lead")
    if m := _QUOTED.match(plain(body)):
        return _made(m.group("inner").strip(), "quoted")
    if m := BOOK_TITLE.match(plain(body)):
        if m.end() >= len(plain(body)) - 2:
            return _made(m.group("inner").strip(), "book")
        if bullet:  # "1. 《Title》 CVPR 2016 Author"
            return _made(m.group("inner").strip(), "list")
    if bullet:
        if _CLOCK_TIME.match(plain(body)):  # "10:40 Track on Algorithms"
            return None
        return _made(_clean_title(_title_part(body)), "list")
    if ENUMERATED_HEADING.match(s):
        return _made(_clean_title(s), "enum")
    if len(s) > MAX_PLAIN_CHARS or len(_SENTENCE_PUNCT.findall(s)) > 2:
        return None  # a plain line this long, or with clauses, is prose
    text = _clean_title(s)
    # "… instead. arXiv: 2106.09685" and "… codecs. [arXiv](…)" end a sentence
    core = _TRAILING_REF.sub("", _clean_title(plain(_KIND_LINKS_TAIL.sub("", raw))) if "](" in raw else text)
    if len(text) <= MAX_TITLE_CHARS and core and not _STATEMENT_END.search(core):
        return _made(text, "plain")
    if _CITATION_TITLE.match(core) and not _ZH_SENTENCE_PUNCT.search(core):
        return _made(core[:-1], "reference")  # a reference's title line: "Title Words Here."
    return None


#: A code span opening a list item ("`NeurIPS 2024` [Title](…)").
_CODE_SPAN = re.compile(r"`(?P<inner>[^`\n]{1,40})`")


def _is_venue_tag(s: str) -> bool:
    """Whether ``s`` (a bold run or code span opening an item) only names a venue edition ("[ICML 2025]")."""
    return venue_label(plain(s).strip(" []【】()（）"))


#: Link groups and short bracketed tags after a title: ``[[note]](…)``, ``[[Paper](…)]``, ``[pdf]``.
_LINK_TAGS = re.compile(r"\[\[[^\[\]\n]{1,40}\]\]?\([^()\s]*\)\]?|\[\[[^\[\]\n]{1,40}\]\]")
_TRAILING_TAGS = re.compile(r"(?<!\s)(?:\s*[\[【][^\]】\n]{1,12}[\]】])+\s*$")
#: Bracketed tags that open a title: "[ICML 2019] Title", "(CVPR 2019)Title".
LEADING_TAGS = re.compile(r"^(?:\s*[\[【(（][^\]】)）\n]{1,40}[\]】)）])+\s*")


def _title_part(body: str) -> str:
    """A list item's title part: before an HTML break, without leading tags and authors (``A, B.
    Title``), before a separator that starts its other fields (" - ", " | ", ". " before names)."""
    first = HTML_BREAK.split(body, maxsplit=1)[0] if "<" in body else body
    if len(_TAG.sub("", first).strip()) >= MIN_TITLE_CHARS * 3:
        body = _TAG.sub(" ", first)
    if "](" in body:  # "Title [summary](…)": a link to the reader's notes on it
        body = _NOTES_LINK_TAIL.sub("", body)
    s = LEADING_TAGS.sub("", unlink(_LINK_TAGS.sub(" ", plain(body)))).strip()
    s = _TRAILING_TAGS.sub("", s)
    if (cited := citation_title(s)) is not None:
        return cited
    if named := _NAMED_PAPER.search(body):  # "Best paper award at ISPA for the paper [Title](…) by A"
        return _clean_title(named.group("q") or named.group("l"))
    if (glued := _GLUED_SHORT_NAME.search(s)) and glued.start() >= MIN_TITLE_CHARS * 3:
        s = s[: glued.start()]  # "Universal Transformers(UT)": a short name glued to the title
    if (note := _TRAILING_NOTE.search(s)) and _strip_venue_tail(s[: note.start()]) != s[: note.start()]:
        s = s[: note.start()]  # "Title. IJCAI 2022 [a note on it]"
    s = s.lstrip(" :：")  # "(Poster #3): A, B. Title": the tag's colon
    s = _strip_label_fields(s)
    lead = _leading_names_end(s, body)
    if lead:  # "A, B. Title"
        s = s[lead:].lstrip(" :：")
    s = _strip_venue_tail(s)
    for sep in (" - ", " – ", " — ", " | ", "：", ": http", " http"):  # " http": "Title https://…"
        i = s.find(sep)
        if sep == "：" and 0 < i < len(s) - 1 and _ASCII_LETTER.fullmatch(s[i - 1] + s[i + 1]):
            continue  # "DynamicFusion：Reconstruction and …": a full-width colon in a Latin title
        if i >= MIN_TITLE_CHARS * 3 and not (sep == " http" and s[i - 1] in ":："):  # "论文/Paper: http…" a label
            s = s[:i]
    # "Title*Authors*" (emphasis glued to the title) and "Title (A and B)"
    s = s.rstrip(" *_")
    # (after the emphasis, one name after a comma is a credit too: "*Title*, A")
    m = re.search(r"(?<![*_])[*_]+(?=[^*_]{3,}$)", s)
    rest = s[m.end():].strip(" *_.") if m else ""
    if m and m.start() >= MIN_TITLE_CHARS * 3 and (
            _is_name_list(rest) or (rest[:1] in ",，" and _NAME.match(rest.lstrip(",， ")))):
        return s[: m.start()].strip()
    m = re.search(r"(?<!\s)\s*[（(]([^（）()]{3,300})[）)]\s*\.?$", s)
    if m and m.start() >= MIN_TITLE_CHARS * 3 and (_is_name_list(m.group(1)) or _credits(m.group(1))):
        s = s[: m.start()]
    for m in re.finditer(r"[.?!]\s+", s):
        rest = s[m.end():]
        if m.start() >= MIN_TITLE_CHARS * 3 and (_is_name_list(rest.split(". ")[0]) or _CREDIT_WORD.match(rest)):
            return s[: m.start() + (1 if s[m.start()] in "?!" else 0)]
    return s


#: Letters a label field may hold besides its award label, venue and year ("Asia", "Main").
MAX_LABEL_FIELD_REST = 5
#: A list item's first field naming its award, maybe with a year and venue ("2024 best paper, ").
_LABEL_FIELD = re.compile(r"^(?P<field>[^,，]{3,40})[,，]\s+")
#: Trailing fields that only name links ("…, [arXiv](…) / [Website](…)" once unlinked).
_LINK_FIELDS = re.compile(r"(?:[,，]\s*(?:pdf|paper|code|link|arxiv|openreview|project|github|website|video|slides?)"
                          r"(?:\s*/\s*(?:pdf|paper|code|link|arxiv|openreview|project|github|website|video|slides?))*)+\s*$", re.I)


def _strip_label_fields(s: str) -> str:
    """A list item without a first award-label field ("2024 best system paper, Title, …") and
    without trailing link-name fields."""
    m = _LABEL_FIELD.match(s)
    if m and (label := find_award_label(m.group("field"))) and normalize_award(label):
        rest = m.group("field").replace(label, " ")
        for _, _, start, end in sorted(find_venue_years(rest), key=lambda v: -v[2]):
            rest = rest[:start] + " " + rest[end:]
        if sum(ch.isalpha() for ch in rest) <= MAX_LABEL_FIELD_REST:  # ("SIGGRAPH Asia best paper")
            s = s[m.end():]
    return _LINK_FIELDS.sub("", s)


_VENUE_TAIL = re.compile(r"[.,](?:\s+|(?=[A-Z]))(?P<tail>[^.,]{2,40}?)\.?\s*$")
#: A bracketed note closing a list item ("… IJCAI 2022 [融入知识图谱…]").
_TRAILING_NOTE = re.compile(r"(?<!\s)\s*[\[【][^\[\]【】\n]{1,80}[\]】]\s*$")


def _strip_venue_tail(s: str) -> str:
    """A title without a last field that only names a venue edition ("Title. ICML 2022.")."""
    m = _VENUE_TAIL.search(s)
    if m is None or m.start() < MIN_TITLE_CHARS * 3:
        return s
    rest = m.group("tail")
    found = find_venue_years(rest)
    if not any(year for _, year, _, _ in found):
        return s
    for _, _, start, end in sorted(found, key=lambda v: -v[2]):
        rest = rest[:start] + " " + rest[end:]
    return s[: m.start()] if sum(ch.isalpha() for ch in rest) <= MAX_LABEL_FIELD_REST else s


def _leading_names_end(s: str, body: str) -> int:
    """Where the title starts in a list item that opens with its authors ("A, B. Title"): after
    the last ". " preceded by a name list (or one name before a link: ``A Name. [Title](url)``)
    that leaves a title of ``3 * MIN_TITLE_CHARS`` or more; else 0."""
    end = 0
    for m in re.finditer(r"\.\s+", s[:MAX_TITLE_CHARS]):
        rest, names = s[m.end():], s[: m.start()]
        if len(rest) < MIN_TITLE_CHARS * 3 or _is_name_list(rest.rstrip(". ")):
            continue
        if _is_name_list(names) or (_NAME.match(names) and f"[{rest[:MIN_TITLE_CHARS * 3]}" in body):
            end = m.end()
    return end


#: The shipped phrases of :func:`is_list_heading` (``pipeline/data``; its header says the format).
LIST_HEADINGS_FILE = "list_headings.txt"
#: Longest list heading, and longest venue name before its phrase, in characters.
MAX_LIST_HEADING_CHARS = 80
MAX_VENUE_CHARS = 30
_LIST_HEADING_NOISE = re.compile(r"\d+\s*年?|[（(][^()（）\n]{0,12}[)）]|[^\w\s-]|_")


#: What may follow the phrase of a list heading: a year, a count, brackets, punctuation.
_AFTER_LIST_HEADING = string.digits + string.punctuation + string.whitespace + "（）【】：，。、篇年"


@functools.lru_cache(maxsize=1)
def _list_headings() -> tuple[frozenset[str], tuple[str, ...]]:
    """The phrases, as a set and as a tuple for ``str.endswith`` (a quick test first)."""
    phrases = frozenset(ln.casefold() for ln in data_lines(LIST_HEADINGS_FILE))
    return phrases, tuple(phrases)


def is_list_heading(title: str) -> bool:
    """Whether ``title`` is a generic heading over a list of papers ("Accepted Papers (2024)"):
    a phrase of :data:`LIST_HEADINGS_FILE` once a venue edition, numbers and punctuation are removed."""
    phrases, ending = _list_headings()
    if len(title) > MAX_LIST_HEADING_CHARS or not title.casefold().rstrip(_AFTER_LIST_HEADING).endswith(ending):
        return False
    s = " ".join(_LIST_HEADING_NOISE.sub(" ", title.casefold()).split())
    if s in phrases:
        return True
    if len(s) > MAX_LIST_HEADING_CHARS // 2 + MAX_VENUE_CHARS:
        return False  # more words before the phrase than a venue's name
    s = title
    for _, _, start, end in sorted(find_venue_years(s), key=lambda v: -v[2]):
        s = s[:start] + " " + s[end:]
    return " ".join(_LIST_HEADING_NOISE.sub(" ", s.casefold()).split()) in phrases


def _paper_label(s: str) -> bool:
    """Whether the key of key-value line ``s`` is the bare paper label ("Paper:", "论文：")."""
    key = re.split(r"[:：]", _BULLET.sub("", s.strip()), maxsplit=1)[0]
    return re.sub(r"[*_【】\[\]\s]", "", key).casefold() in GENERIC_PAPER_KEYS


def _made(title: str, style: str, level: int = 0) -> Candidate | None:
    title = title.strip()
    if title.endswith(".") and not title.endswith("..") and style not in ("plain", "list"):
        title = title[:-1].rstrip()  # "**Title.** Authors"
    if LEADING_DECORATION.match(title):
        title = LEADING_DECORATION.match(title).group("title").strip()
    if not (MIN_TITLE_CHARS <= len(title) <= MAX_TITLE_CHARS) or "://" in title or DECORATION_ONLY.match(title):
        return None  # (a bracketed label alone, 【往期回顾】, names a part of the article)
    if PLACEHOLDER_VALUE.fullmatch(title) or _GENERIC_LINK.fullmatch(title) or is_list_heading(title) \
            or _IDENTIFIER_ONLY.fullmatch(title):
        return None  # "N/A", a link's name ("PDF"), a list's heading ("Publications")
    return Candidate(0, title, style, level)


#: Candidate styles of an item of a list or a row of a table (the span is a part of its line).
ITEM_STYLES = frozenset({"list", "bold_lead", "link_lead", "table"})


_TWO_DIGITS = re.compile(r"\d\d")


#: A letter of any script (a title has one; a date or a number has none).
_LETTER = re.compile(r"[^\W\d_]")


def venue_beside_title(c: Candidate, raw: str) -> bool:
    """Whether a list item, table row or heading (``raw``) names a dated venue outside its title
    span ("1. 《Title》 CVPR 2016 Author")."""
    if (c.style not in ITEM_STYLES and c.style not in ("md1", "md2", "md3")) or not _TWO_DIGITS.search(raw) \
            or not _LETTER.search(c.title):
        return False  # (a year has two digits; a span without a letter is no title)
    rest = plain(" | ".join(c.cells) if c.cells else raw).replace(c.title, " ", 1)
    return any(year is not None for _, year, _, _ in find_venue_years(rest))


#: Candidate styles whose heading is the candidate's span rather than its whole line.
_SPAN_HEADING_STYLES = frozenset({"table", "bold_lead", "link_lead", "list", "quoted"})


def title_is_part(cand: Candidate, raw: str) -> bool:
    """Whether a candidate's title is only part of its line ``raw``: then the title is the heading."""
    if cand.style not in _SPAN_HEADING_STYLES:
        return False
    rest = fold_title(plain(raw)).replace(fold_title(cand.title), "", 1)
    # a list item's marker and a headline decoration (【深度解析】) are not "more than the title"
    return len(rest) > (MAX_DECORATION_CHARS + 4 if cand.style == "list" else 3) or venue_beside_title(cand, raw)


_LATIN_LETTER = re.compile(r"[A-Za-z]")
_NAME_MARKS = re.compile(r"[\d*†‡§¶∗]+")  # footnote marks and affiliation numbers after a name
_NAME_SEPARATOR = re.compile(r",|;|\band\b|&|\s[·•]\s")
#: Where a separator of :data:`_NAME_SEPARATOR` can be once the marks are removed ("a1nd" too).
_MAY_SEPARATE = re.compile(r"[,;&·•]|a[\d*†‡§¶∗]*n[\d*†‡§¶∗]*d")


@functools.lru_cache(maxsize=65536)
def _is_name_list(s: str) -> bool:
    """A line that is a list of person names (``A, B and C``; ``张三、李四``)."""
    s = plain(s).strip(" *_")
    if not s or len(s) > 600:
        return False
    if _HAN.search(s) and not _LATIN_LETTER.search(s):
        parts = re.split(r"[、，,]", s)
        return len(parts) >= 2 and all(1 < len(p.strip()) <= 4 for p in parts if p.strip())
    if not _MAY_SEPARATE.search(s):
        return False  # one part: no list
    parts = [p.strip() for p in _NAME_SEPARATOR.split(_NAME_MARKS.sub("", s)) if p.strip()]
    return len(parts) >= 2 and sum(bool(_NAME.match(p)) for p in parts) >= 0.7 * len(parts)


_COLON_INSIDE = re.compile(r"\S[:：]\s*\S")
#: What separates a line's fields (title, authors, venue) after its title.
_FIELD_SEPARATOR = re.compile(r"\s[-–—|]\s|<br\s*/?>|\|")


#: Words of other alphabets (Greek to Arabic) and kana/Hangul, counted as Latin words or CJK characters.
_OTHER_WORD = re.compile(r"[\u0370-\u03ff\u0400-\u052f\u0530-\u06ff]{3,}")
_KANA_HANGUL = re.compile(r"[\u3040-\u30ff\uac00-\ud7af]")


def _line_features(title: str, raw: str) -> dict[str, float]:
    words = latin_words(title)
    han = len(_HAN.findall(title))
    if not title.isascii():
        words += _OTHER_WORD.findall(title)
        han += len(_KANA_HANGUL.findall(title))
    caps = sum(w[0].isupper() for w in words)
    s = plain(raw)
    rest = s.replace(title, " ", 1)
    award = find_award_label(title) if len(title) <= 80 else None  # an award header is short
    return {
        "latin_words": min(len(words), 30) / 10,
        "han_chars": min(han, 80) / 20,
        "chars": min(len(title), 300) / 100,
        "titlecase_share": caps / len(words) if words else 0.0,
        "colon_inside": float(bool(_COLON_INSIDE.search(title))),
        "ends_like_sentence": float(bool(_SENTENCE_END.search(title))),
        "sentence_punct": min(len(_SENTENCE_PUNCT.findall(title)), 5) / 5,
        "question": float(bool(_QUESTION.search(title))),
        "venue_year": float(any(y is not None for _, y, _, _ in find_venue_years(title))),
        "award_label": float(award is not None and normalize_award(award) is not None),
        "has_digit_start": float(title[:1].isdigit()),
        "has_url": float(_has_url(raw)),
        "has_arxiv": float(bool(find_arxiv_ids(raw))),
        "credit_in_line": float(bool(_CREDIT_WORD.search(rest))),
        "paper_word_in_line": float(bool(_PAPER_WORD.search(rest))),
        "names_in_line": float(any(_is_name_list(p) for p in _FIELD_SEPARATOR.split(rest))),
        "self_credit": float(_is_name_list(title) or _credits(title)),
        "italic_line": float(bool(_is_italic_line(raw))),
    }


@functools.lru_cache(maxsize=65536)
def labelled_names(title: str) -> bool:
    """A label followed by a list of people ("Chairs: A and B"): never a paper's title."""
    label, sep, rest = title.partition(":")
    return bool(sep) and bool(_ROLE_LABEL.search(label)) and (_is_name_list(rest) or _credits(rest.strip()))


#: The end of a label that introduces people: "Organizers include", "Program Chairs", "Speakers".
_ROLE_LABEL = re.compile(r"\b(?:include[sd]?|organi[sz]ers?|chairs?|speakers?|members?|committee|panel(?:ists)?"
                         r"|hosts?|keynotes?|advisors?|editors?)\s*$", re.I)


def _credits(s: str) -> bool:
    """Whether ``s`` reads as a credit line naming authors."""
    if len(s) >= 400:
        return False
    credit = parse_credit_line(s)
    return bool(credit and credit.authors)


class _LineFacts:
    """The evidence facts of each line, computed once, and the prefix sums of line lengths."""

    def __init__(self, lines: list[Line]):
        self.lines = lines
        self._facts: dict[int, tuple] = {}
        self._credit_lines: dict[int, bool] = {}
        self.chars = [0]
        for line in lines:
            self.chars.append(self.chars[-1] + len(line.stripped))

    def __call__(self, j: int) -> tuple:
        """``(kv key or None, italic, arXiv id, credit word, paper word, plain text)``."""
        got = self._facts.get(j)
        if got is None:
            raw = self.lines[j].stripped[:MAX_LINE_CHARS]
            s = plain(raw)
            kv = parse_key_value(s)
            low = s[:300].lower()
            got = (kv[0] if kv is not None else None, _is_italic_line(raw), bool(find_arxiv_ids(s)),
                   _credit_word(low), _paper_word(low), s)
            self._facts[j] = got
        return got

    def credit_line(self, j: int) -> bool:
        """Whether line ``j`` is a list of names or a credit line."""
        got = self._credit_lines.get(j)
        if got is None:
            s = self(j)[-1]
            got = self._credit_lines[j] = _is_name_list(s) or (len(s) < 400 and parse_credit_line(s) is not None)
        return got


def _evidence(facts: _LineFacts, start: int, stop: int) -> dict[str, float]:
    f = dict.fromkeys(("next_authors", "next_italic", "next_prose_credit", "next_kv_authors", "next_arxiv",
                       "next_credit_word", "next_paper_word"), 0.0)
    for j in range(start, min(stop, start + EVIDENCE_LINES)):
        kv, italic, arxiv, credit_word, paper_word, s = facts(j)
        if kv in ("authors", "institutions"):
            f["next_kv_authors"] = 1.0
        if j < start + 2 and facts.credit_line(j):
            f["next_authors"] = 1.0
        if j < start + 2 and italic:
            f["next_italic"] = 1.0
        if j == start and not f["next_authors"] and len(s) < MAX_LINE_CHARS:
            credit = find_credit(s)  # "Muennighoff and colleagues trained …", "来自X的研究团队…"
            f["next_prose_credit"] = float(bool(credit and (credit.authors or credit.institutions)))
        f["next_arxiv"] = max(f["next_arxiv"], float(arxiv))
        f["next_credit_word"] = max(f["next_credit_word"], float(credit_word))
        f["next_paper_word"] = max(f["next_paper_word"], float(paper_word))
    f["next_body_chars"] = math.log1p(facts.chars[stop] - facts.chars[start]) / 10
    f["next_candidate_gap"] = min(stop - start, 20) / 20
    return f


def has_paper_evidence(c: Candidate) -> bool:
    """Whether a scored candidate has evidence of a paper of its own: names, a credit or an arXiv
    id in its line or right after it."""
    f = c.features
    return any(f.get(k) for k in ("next_authors", "next_italic", "next_kv_authors", "next_arxiv", "has_arxiv",
                                  "names_in_line", "credit_in_line"))


def two_papers(earlier: Candidate, later: Candidate) -> bool:
    """Whether two titles of which one contains the other ("Foo", "Foo: Bar") are two papers: both
    have paper evidence and the later one is marked (a plain line's evidence may be the other's)."""
    return later.style != "plain" and has_paper_evidence(earlier) and has_paper_evidence(later)


def _has_evidence(f: dict[str, float]) -> bool:
    return bool(f["next_authors"] or f["next_italic"] or f["next_kv_authors"] or f["next_arxiv"]
                or f["has_arxiv"] or f["names_in_line"])


#: The opening line of a fenced code block: three or more backticks or tildes (CommonMark 4.5).
_FENCE = re.compile(r"^(`{3,}|~{3,})")


def fenced_lines(lines: list[Line]) -> list[bool]:
    """Per line, whether it is in a fenced code block, its fences included (CommonMark 4.5)."""
    fenced, fence = [], None  # (the marker of the block the line is in)
    for line in lines:
        if fence is None and (m := _FENCE.match(line.stripped)):
            fence = m.group(1)[0] * 3
        elif fence is not None and line.stripped.startswith(fence) and not line.stripped.strip("`~ "):
            fenced.append(True)
            fence = None
            continue
        fenced.append(fence is not None)
    return fenced


def _wrapped_prose(lines: list[Line], i: int) -> bool:
    """Whether ``lines[i]`` is a line of a hard-wrapped paragraph: the line under it (no blank
    line between) or the line itself continues a line of at least
    :data:`MIN_WRAPPED_LINE_CHARS` characters with a lower-case word (:data:`_CONTINUES`)."""
    line = lines[i]
    if i and line.start - lines[i - 1].end <= 2 and len(lines[i - 1].stripped) >= MIN_WRAPPED_LINE_CHARS \
            and _CONTINUES.match(line.stripped):
        return True
    return (i + 1 < len(lines) and lines[i + 1].start - line.end <= 2 and len(line.stripped) >= MIN_WRAPPED_LINE_CHARS
            and _CONTINUES.match(lines[i + 1].stripped) is not None)


def find_candidates(lines: list[Line]) -> list[Candidate]:
    """Every kept line's (``lines``, in order) title candidate, in line order, features set."""
    cands: list[Candidate] = []
    header: list[str] | None = None
    for i, (line, fenced) in enumerate(zip(lines, fenced_lines(lines), strict=True)):
        if _TABLE_ROW.match(line.stripped) and not _is_table_rule(line.stripped):
            if i + 1 < len(lines) and _is_table_rule(lines[i + 1].stripped):
                header = _table_cells(line.stripped)  # a header row names columns, no paper
                continue
        elif not _is_table_rule(line.stripped):
            header = None
        c = candidate_of(line, header)
        if c is not None and fenced and c.style in ("md1", "md2", "md3"):
            continue  # a "# comment" line of a code block is no heading
        if c is not None and ((c.style == "plain" and (_TEX_MATH.search(c.title) or _wrapped_prose(lines, i)))
                              or plain(line.stripped).rstrip(" *_").endswith((":", "："))
                              or (c.style == "table" and len(c.cells) >= 3 and sum(map(bool, c.cells)) == 1)):
            # (a table row of one filled cell names a group of the rows under it: "| [AAAI] |  |  |")
            c.prose = True  # (a line ending in a colon labels what follows: "The Balanced CE Loss:")
        if c is not None and c.style == "reference":
            # a sentence-shaped line is a title only in a reference, under its authors' line
            prev = plain(lines[i - 1].stripped[:MAX_LINE_CHARS]).rstrip(".") if i else ""
            c = Candidate(i, c.title, "plain") if prev and (_is_name_list(prev) or _credits(prev)) else None
        if c is not None:
            c.line = i
            cands.append(c)
    if not cands:
        return cands
    facts = _LineFacts(lines)
    style_count = Counter(c.style for c in cands)
    evidence: list[bool] = []
    # the evidence window ends at the next candidate of its style or not a plain or list line
    stops: list[int] = [len(lines)] * len(cands)
    next_marked, next_of_style = len(lines), {}
    for k in range(len(cands) - 1, -1, -1):
        c = cands[k]
        stops[k] = min(next_marked, next_of_style.get(c.style, len(lines)))
        if _is_name_list(c.title) or _credits(c.title):
            continue  # a line of names is the evidence of the title above it
        next_of_style[c.style] = c.line
        if c.style not in ("plain", "list"):
            next_marked = c.line
    for c, stop in zip(cands, stops, strict=True):
        c.features.update(_line_features(c.title, lines[c.line].stripped))
        c.features.update(_evidence(facts, c.line + 1, stop))
        evidence.append(_has_evidence(c.features))
    with_evidence = Counter(c.style for c, e in zip(cands, evidence, strict=True) if e)
    n = len(lines)
    doc_candidates = math.log1p(len(cands)) / 4
    for c in cands:
        c.features.update(_STYLE_INDICATORS[c.style])
        c.features["siblings"] = math.log1p(style_count[c.style] - 1) / 3
        c.features["sibling_evidence_share"] = with_evidence[c.style] / style_count[c.style]
        c.features["style_share"] = style_count[c.style] / len(cands)
        c.features["doc_candidates"] = doc_candidates
        c.features["position"] = c.line / max(n - 1, 1)
    return cands


#: The ``style_*`` indicator features of a candidate of each style.
_STYLE_INDICATORS = {style: {f"style_{s}": float(style == s) for s in STYLES} for style in STYLES}
