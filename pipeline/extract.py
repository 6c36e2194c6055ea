"""Extract: typed fields of each section (title, authors, institutions, venue, year, award,
arXiv id, URLs, summary, keywords).

Sources, in order of trust: metadata lines (:func:`pipeline.fields.parse_key_value`); the
heading; the prose where no metadata line gives the field (a credit line under the title,
:func:`pipeline.credits.parse_credit_line`, else a credit sentence of the first
:data:`CREDIT_PARAGRAPHS`, :func:`pipeline.credits.find_credit`; a stated award); the document
context (award header, ``lead_award_raw``, document venue and year).

Chinese outputs (``title_zh``, ``institutions``, ``summary``, ``keywords``) are in the target
script; ``title`` and ``authors`` keep the script given. Each section is analysed once
(:func:`pipeline.nlp.parse_section`); details in docs/architecture.md (Extract).
"""

from __future__ import annotations

import bisect
import re
from typing import NamedTuple

import pandas as pd

from . import keywords as kw
from . import nlp, paper_records
from .candidates import HTML_BREAK, LEADING_TAGS, cited_parts, unlink
from .config import Config
from .credits import (
    Credit,
    _credit_person,
    affiliation_line,
    congratulated_authors,
    find_credit,
    first_author_tag,
    maker_credit,
    parse_credit_line,
)
from .fields import (
    find_award_label,
    find_venue_slugs,
    find_venue_years,
    fold_title,
    normalize_award,
    parse_key_value,
    venue_from_url,
)
from .front_matter import apply_front_matter, flow_list_items, unquoted
from .heading_titles import _HAS_CJK, _HAS_LATIN, _LIST_MARK, _QUOTED, SHORT_NAME, split_heading_title
from .headings import presenter
from .identifiers import find_arxiv_attributes, find_arxiv_ids, find_urls, url_kind
from .names import is_institution, split_affiliation_items, split_affiliations, split_names, without_honorific
from .normalize import to_target
from .paper_records import record_venue
from .paper_venue import (
    ANY_YEAR,
    SUBMITTED_ONLY,
    accepted_venue,
    dated_mentions,
    nearest_first,
    reference_tail,
    unlisted_venue,
)
from .stage import Stage, records
from .textutil import MD_LINK_GROUP, _memoised, plain
from .venue_status import not_accepted, published_venue_years

EXTRACT_COLUMNS = (
    "title", "title_zh", "authors", "authors_truncated", "institutions", "venue", "year", "award",
    "award_raw", "arxiv_id", "arxiv_version", "urls", "url_kinds", "summary", "summary_norm", "keywords",
)

#: Longest section text, in characters, analysed token by token: a longer one is read from its
#: head for metadata, summary and keywords (URLs and arXiv ids from the whole text).
MAX_ANALYSED_CHARS = 200_000
#: The value of a year metadata line: a year, maybe with a month and day after it.
_YEAR_VALUE = re.compile(r"\s*((?:19|20)\d\d)(?![\d.])")
_SUBHEADING_MAX_CHARS = 20
_SENTENCE_PUNCT = re.compile(r"[。！？!?.；;：:]")
#: A ``VENUE`` entity's value: the venue, then its year when one is adjacent.
_VENUE_VALUE = re.compile(r"(?P<venue>.+?) (?P<year>\d{4})")
#: A lower-case word at a line start continues the sentence before (pipeline.nlp's rule).
_LOWER_WORD = re.compile(r"[a-z][a-z'-]*(?![A-Za-z0-9])")


#: Link groups and emphasis around names in a reading list's credit line.
_LINK_GROUP = re.compile(MD_LINK_GROUP + r"|<[^>]{1,200}>")
_NAME_DOTS = re.compile(r"\s+[·•|]\s+")  # "A · B · C", "A | B"
#: A credit led by "By", with the people's place after "from".
_CREDIT_BY = re.compile(r"[Bb]y\s+(?P<names>.+?)(?:,?\s+from\s+(?P<place>[^,]+))?")
_TRAILING_DATE = re.compile(r"[,，]?\s*\d{4}(?:[.\-/]\d{1,2}){0,2}\s*$")


_LEADING_DASH = re.compile(r"^[—–―]+\s*")
#: An HTML anchor, kept as its text ("<a href=…>Name</a>" in a Markdown page's credit line).
_HTML_ANCHOR = re.compile(r"<a\s[^>]{0,500}>(?P<text>[^<]{0,200})</a\s*>", re.I)
#: Non-breaking spaces that separate names laid out without commas ("A &nbsp;&nbsp; B").
_NAME_GAP = re.compile(r"(?<=[^\s,，、;；\u00a0])(?:[ \t]*\u00a0[ \t]*)+")
#: A template's placeholder for the names ("[Authors] 等", "<author names>"), not a credit.
_NAMES_PLACEHOLDER = re.compile(r"[\[<{【（(]\s*(?:(?:the\s+)?authors?(?:\s+names?)?|names?|作者|作者名单|作者名單|tbd|todo|xxx)\s*"
                                r"[\]>}】）)]\s*(?:等|et\s+al\.?)?", re.I)


def _names_value(value: str) -> str:
    """An authors or institutions value as plain text: links as their text, ``&nbsp;`` gaps as
    commas, a YAML flow list (``[A, "B"]``) as its items, a placeholder ("[Authors]") as ""."""
    if _NAMES_PLACEHOLDER.fullmatch(value.strip()):
        return ""
    if (items := flow_list_items(value)) is not None:  # "[A, "B"]"
        value = ", ".join(items)
    if "<" in value:
        value = _HTML_ANCHOR.sub(lambda m: m.group("text"), value)
    if "](" in value:
        value = unlink(value)
    if "&nbsp;" in value or "\u00a0" in value:
        value = _NAME_GAP.sub(", ", value.replace("&nbsp;", "\u00a0")).replace("\u00a0", " ")
        value = " ".join(value.split())
    return value.strip()


@_memoised()
def credit_text(line: str) -> str:
    """A credit line without its links, emphasis, trailing date, leading dash and final period
    (``*A, B, C.* [[Paper](…)], 2022.12`` -> ``A, B, C``); ``(By A and B from Org)`` -> ``A and B, Org``."""
    # (each pattern runs only when the text holds what it needs: a "<" or "[", a separator, a
    # final digit)
    s = _LIST_MARK.sub("", _SUPERSCRIPT.sub("", line) if "<" in line else line)
    s = (_LINK_GROUP.sub(" ", s) if "[" in s or "<" in s else s).replace("\\*", "")
    if "·" in s or "•" in s or "|" in s:
        s = _NAME_DOTS.sub(", ", s)
    s = s.strip(" ,，")
    if s.rstrip()[-1:].isdigit():
        s = _TRAILING_DATE.sub("", s)
    s = s.strip().strip("*_").strip().rstrip(".。").strip("*_ ")
    s = _LEADING_DASH.sub("", s)  # "— A, B（Org）" under the title
    if s[:1] in "(（" and s[-1:] in ")）" and not re.search(r"[()（）]", s[1:-1]):
        s = s[1:-1].strip().rstrip(".")
    by = _CREDIT_BY.fullmatch(s)
    if by:
        s = by.group("names") + (f", {by.group('place')}" if by.group("place") else "")
    return s or line


#: The text before a line's first 。 or ；, or a sentence end after a closing bracket.
_LEADING_BRACKET = re.compile(r"\s*[（(](?P<inner>[^()（）]{2,150})[)）]")
_FIRST_CLAUSE = re.compile(r"(.+?)(?:[。；]|(?<=[)）])\.\s)")
#: The text before the first spaced dash or bar ("*A, B* – Keywords: … – summary"), looked for
#: in the first MAX_CREDIT_SPAN characters after a title (a credit is shorter).
_FIRST_DASHED = re.compile(r"(.+?)\s+[–—|]\s+")
MAX_CREDIT_SPAN = 500


_SHORT_NAME_LEAD = re.compile(rf"\s*{SHORT_NAME}")


def _after_title(line: str, title: str) -> str:
    """What a line holds after the title ("" when it does not hold it); on a line of HTML-break
    fields (``*Title.* <br> A, B <br> ***ACL 2024***``), the first field after the title's."""
    if "<" in line and HTML_BREAK.search(line):
        fields = [plain(unlink(f)).strip(" .*_") for f in HTML_BREAK.split(_LIST_MARK.sub("", line))]
        key = title.rstrip(" .").casefold() if title else ""
        at = next((k for k, f in enumerate(fields) if key and key in f.casefold()), None)
        if at is not None:
            return next((f for f in fields[at + 1:] if f), "")
    s = plain(unlink(_LIST_MARK.sub("", line)))
    i = s.casefold().find(title.casefold()) if title else -1
    if i < 0:
        return ""
    rest = s[i + len(title):]
    if name := _SHORT_NAME_LEAD.match(rest):  # "Title (MeZO) — A 等"
        rest = rest[name.end():]
    return rest.lstrip(" .*_:：-–—\"”’'」』》")


#: A metadata line naming a preprint server, not a venue ("from: arxiv"; data/venue_names.json).
_PREPRINT_LINE = re.compile(rf"[^:：\n]{{1,20}}[:：]\s*(?:{paper_records.NOT_VENUE_WORDS.pattern})(?:\s+(?:{paper_records.NOT_VENUE_WORDS.pattern}))?\s*", re.I)
#: A preprint server and a year in brackets before a title: "(arXiv 2022)Title", "[arXiv'23]".
_PREPRINT_TAG = re.compile(r"\s*[\[(（【]\s*(?i:arxiv|preprint)\s*['’]?\s*(?P<year>(?:19|20)\d\d)\s*[\])）】]")
#: An unknown venue tag before a title: "[Nature Communications 2024] Title".
_NAMED_TAG = re.compile(r"\s*[\[【(（]\s*(?P<name>[A-Z][\w&.'’-]*(?:\s+[A-Z][\w&.'’-]*){0,4})\s*['’]?\s*"
                        r"(?P<year>(?:19|20)\d\d)\s*[\])）】]")
#: A line that only labels the credit line under it ("### Authors:", "作者：").
_AUTHORS_LABEL = re.compile(r"(?:authors?|作者们?|作者們?)\s*[:：]?", re.I)
#: A BibTeX author field ("author={Wang, Alex and Ge, Yixiao},"): names joined by "and".
_BIBTEX_AUTHOR = re.compile(r"\s*author\s*=\s*[{\"](?P<names>[^{}\"]+)[}\"]\s*,?\s*", re.I)
_BIBTEX_AND = re.compile(r"\s+and\s+")
#: A line that is only a year.
_YEAR_LINE = re.compile(r"\s*((?:19|20)\d\d)\s*")
#: A BibTeX year field ("year={2025},", "year = 2019,").
_BIBTEX_YEAR = re.compile(r"\s*year\s*=\s*[{\"]?((?:19|20)\d\d)[}\"]?\s*,?\s*", re.I)


def _labelled_authors(lines: list[str], i: int) -> list[str] | None:
    """The authors line ``i`` gives as a label over its credit line ("### Authors:" / "*A, B*") or
    as a BibTeX ``author`` field (names as written); None otherwise."""
    if (m := _BIBTEX_AUTHOR.fullmatch(lines[i])) is not None:
        return [n.strip() for n in _BIBTEX_AND.split(m.group("names")) if n.strip()] or None
    if i + 1 < len(lines) and _AUTHORS_LABEL.fullmatch(lines[i]):
        credit = parse_credit_line(credit_text(lines[i + 1]))
        return list(credit.authors) if credit is not None and credit.authors else None
    return None


#: A year right after a title on its line: in brackets, a date after a comma ("，ArXiv，2025-04-08"),
#: or closing the reference after it ("A, B. IEEE, 2021").
_LINE_YEAR = re.compile(
    r"^\s*[（(]\s*((?:19|20)\d\d)\s*[）)]"
    r"|^\s*[,，]\s*(?:[^,，\d\n]{1,40}[,，]\s*)?((?:19|20)\d\d)(?:[-./]\d{1,2}){0,2}\s*$"
    r"|\.\s+[^.,，\n]{2,30}[,，]\s*((?:19|20)\d\d)\.?\s*$", re.I)


#: Longest text before a title on its line that is read as the item's award label.
MAX_LABEL_FIELD_CHARS = 40
#: A superscript after a name: a footnote or affiliation mark ("A<sup>#</sup>", "B<sup>1,2</sup>").
_SUPERSCRIPT = re.compile(r"<sup>[^<]{0,20}</sup>", re.I)


def _before_title(line: str, title: str, tags: bool = False) -> str:
    """What a line holds before the title, without a leading bracketed tag ("(Poster #3): A, B."
    -> "A, B") unless ``tags``; "" when the line does not hold the title."""
    s = plain(unlink(_LIST_MARK.sub("", line)))
    i = s.casefold().find(title.casefold()) if title else -1
    if i <= 0:
        return ""
    return s[:i].strip(" .:：") if tags else LEADING_TAGS.sub("", s[:i]).strip(" .:：")


#: A year alone before a title on its line: "[2023] Title", "2022 - Title".
_LEAD_LINE_YEAR = re.compile(r"[\[【(（]?\s*((?:19|20)\d\d)\s*[\]】)）]?\s*[-–—|,，]?")


def _first_line_is_body(first: str, heading: str) -> bool:
    """Whether a section's first line is body text rather than its heading: the heading is an
    inline mention, or the line is a sentence (:func:`split_heading_title`) or a non-title metadata line."""
    if plain(heading).strip() != first.strip() and fold_title(heading) != fold_title(_LIST_MARK.sub("", first)):
        return True
    if (kv := parse_key_value(first)) is not None:
        return kv[0] != "title"
    return split_heading_title(first) == (None, None)


def _summary(section: nlp.ParsedSection, spans: list[tuple[int, int]], kv_first: bool,
             max_chars: int) -> str | None:
    """The summary parts ``spans`` (character spans in ``section``; the summary value first when
    ``kv_first``, else short non-sentence lines dropped) joined by line breaks, cut at a sentence
    start to at most ``max_chars`` (the first sentence kept whole); None when empty.
    """
    text_of = section.written
    if not kv_first:
        spans = [(a, b) for a, b in spans
                 if b - a > _SUBHEADING_MAX_CHARS or _SENTENCE_PUNCT.search(text_of, a, b)]
    spans = [(a, b) for a, b in spans if b > a]
    text = "\n".join(text_of[a:b] for a, b in spans)
    if not text.strip():
        return None
    if len(text.strip()) <= max_chars:
        return text.strip()
    sent_starts = sorted({a for a, _ in section.sentence_spans()})
    cuts: list[int] = []  # sentence starts, as offsets into text
    pos = 0
    for a, b in spans:
        k = bisect.bisect_left(sent_starts, a)
        while k < len(sent_starts) and sent_starts[k] < b:
            if sent_starts[k] > a:
                cuts.append(pos + sent_starts[k] - a)
            k += 1
        if pos and not _LOWER_WORD.match(text, pos):
            cuts.append(pos)  # a line break ends a sentence unless a lower-case word goes on
        pos += b - a + 1
    out_end = 0
    for cut in sorted(set(cuts)) + [len(text)]:
        if out_end and cut > max_chars:
            break
        out_end = cut
    return text[:out_end].strip()


#: The columns of a sections row that :func:`extract_fields` reads.
_ROW_COLUMNS = ("heading", "text", "lang", "ctx_award_raw", "doc_venue", "doc_year", "lead_award_raw",
                "paper_record", "front_matter")


def _venue_year(entity: nlp.Entity) -> tuple[str, int | None]:
    """``(venue, year)`` of a ``VENUE`` entity (its value is ``"<venue> <year>"`` or ``"<venue>"``)."""
    m = _VENUE_VALUE.fullmatch(entity.value)
    return (m.group("venue"), int(m.group("year"))) if m else (entity.value, None)


#: How many body paragraphs are read for a credit sentence (a gloss or award sentence may come
#: first; from five on, descriptions read as institutions).
CREDIT_PARAGRAPHS = 4
#: How many body paragraphs are read for the authors of a credit that names only places.
AUTHOR_PARAGRAPHS = 8


#: Most words of a heading that is a paper's short name ("Mamba", "OpenAssistant Conversations").
MAX_SHORT_NAME_WORDS = 2


#: Longest first body line read as a dateline or tag line over the credit line.
MAX_DATELINE_CHARS = 40
#: How many first lines of a section are read for the full title of a heading that is a short name.
FULL_TITLE_LINES = 3


def _full_title(name: str, line: str) -> str | None:
    """The quoted title in ``line`` that opens with the short name ``name`` and a colon
    ("「Mamba: Linear-Time …」" for "Mamba"), else None."""
    if not any(q in line for q in "「“\"『"):
        return None
    key = name.casefold()
    for m in _QUOTED.finditer(line):
        inner = m.group("inner").strip()
        if inner.casefold().startswith(key) and inner[len(key):].lstrip()[:1] in (":", "：") and _HAS_LATIN.search(inner[len(key):]):
            return inner
    return None


def extract_fields(row: dict, target_script: str, config: Config) -> dict:
    """Fields of one section.

    Args:
        row: a section with ``heading``, ``text``, ``ctx_award_raw``, ``doc_venue``, ``doc_year``
            (optional: ``lang``, ``lead_award_raw``; ``paper_record`` and ``front_matter``, whose
            fields override the text's: :func:`pipeline.paper_records.apply_record`,
            :func:`pipeline.front_matter.apply_front_matter`).
        target_script: one of :data:`pipeline.config.TARGET_SCRIPTS`.

    Returns:
        dict with the keys of :data:`EXTRACT_COLUMNS`; lists are lists of str, ``year`` an int
        or None, ``award`` one of :data:`pipeline.fields.AWARDS` or None.
    """
    fields = _extract_fields(row, target_script, config)
    paper = row.get("paper_record")
    if isinstance(paper, str):
        return paper_records.apply_record(fields, paper, target_script)
    front = row.get("front_matter")
    return apply_front_matter(fields, front, target_script) if isinstance(front, str) else fields


#: Shortest Chinese prose line that a hard wrap may have cut (WeChat exports wrap near 80 columns).
MIN_WRAPPED_CHARS = 15
MIN_WRAPPED_CJK = 4
_ENDS_LATIN = re.compile(r"[A-Za-z0-9]$")
_STARTS_LATIN = re.compile(r"[A-Za-z0-9][A-Za-z0-9.'’-]*(?![.、)）])")


def _unwrap_latin(lines: list[str]) -> list[str]:
    """``lines`` with Chinese prose lines that a hard wrap cut inside a Latin phrase joined again
    ("…Jiahuan Li、Yiqing" / "Cao。"): a non-metadata line of at least :data:`MIN_WRAPPED_CHARS`
    (:data:`MIN_WRAPPED_CJK` Chinese) ending in a Latin letter or digit, the next starting with one."""
    out: list[str] = []
    for ln in lines:
        # (the first line is the heading: prose only after a title, "**Title** ，X完成，…")
        prev = out[-1] if len(out) > 1 or (out and "，" in out[0]) else ""
        if (len(prev) >= MIN_WRAPPED_CHARS and _ENDS_LATIN.search(prev) and _STARTS_LATIN.match(ln)
                and len(_HAS_CJK.findall(prev)) >= MIN_WRAPPED_CJK and parse_key_value(prev) is None):
            out[-1] = prev + " " + ln
        else:
            out.append(ln)
    return out


def _title_line_credit(line: str, title: str) -> Credit | None:
    """The credit on the title's own line: after the title ("**[Title](url).** A, B and C."), in
    brackets or the first clause after it, before it, congratulated by lab news, or a Chinese
    sentence after it; None when the line credits nobody."""
    after = _after_title(line, title)
    credit = parse_credit_line(credit_text(after))
    bracket = _LEADING_BRACKET.match(after)  # "**Title**（A 等，UW / AI2）——…"
    if credit is None and bracket:
        credit = parse_credit_line(bracket.group(1)) or first_author_tag(bracket.group(1))
    clause = _FIRST_CLAUSE.match(after)
    if credit is None and clause:
        credit = parse_credit_line(credit_text(clause.group(1)))
    dashed = _FIRST_DASHED.match(after[:MAX_CREDIT_SPAN])
    if credit is None and dashed:
        credit = parse_credit_line(credit_text(dashed.group(1)))
    before = _before_title(line, title)
    if credit is None and before:  # "A, B. [Title](url)": the credit opens the line
        credit = parse_credit_line(credit_text(before)) or maker_credit(before)
    if credit is None and (named := congratulated_authors(after)):
        credit = Credit(named)  # lab news: "…被 ACM MM 录用，恭喜A、B！"
    if credit is None and _HAS_CJK.search(after):
        # a sentence after the title on its line: "**Title** ，X研究团队完成，论文共同一作A、B。"
        credit = find_credit(after.lstrip(" ，,、:：—-"))
    return credit


def _before_third_line(mentions: list[tuple[str, int | None, int, int]], near: str,
                       n_lines: int) -> list[tuple[str, int | None, int, int]]:
    """:func:`find_venue_years` of ``near`` (a heading and up to three lines) without its third
    line, from ``near``'s ``mentions``."""
    if n_lines < 3:
        return mentions
    cut = near.rfind("\n")
    if any(start < cut < end for _, _, start, end in mentions):
        return find_venue_years(near[:cut])
    return [m for m in mentions if m[3] <= cut]


def _venue_by_title(row: dict, lines: list[str], title: str | None,
                    year: int | None) -> tuple[str | None, int | None, bool, bool]:
    """``(venue, year, preprint, other_venue)`` from the lines by a section's title: a dated venue
    tag nearest the title ("**Title.** `ACL 2023`"), else an undated venue there, else a preprint
    server, else the venue lab news says accepted it. ``year``: the one found so far;
    ``preprint``/``other_venue``: the document's venue (and year) is not the paper's."""
    venue, preprint, other_venue = None, False, False
    near = "\n".join([row["heading"], *lines[: min(len(lines), 3)]])
    mentions = find_venue_years(near)
    # a dated venue the paper was only sent to is not its venue ("Submitted to ICLR 2025")
    dated = dated_mentions(published_venue_years(near), near) or reference_tail(row["heading"])
    tags = [t[:2] for t in nearest_first(dated, near, title)] or find_venue_slugs(near)
    undated = [] if tags else [t for t in _before_third_line(mentions, near, len(lines)) if t[1] is None]
    if tags:
        venue, year = tags[0]
    elif undated and not SUBMITTED_ONLY.search(near):
        # an undated venue on the paper's line ("paper: <url>, neurips"), dated by the document only if the same
        venue = nearest_first(undated, near, title)[0][0]
        other_venue = row.get("doc_venue") != venue
    elif any(_PREPRINT_LINE.fullmatch(_LIST_MARK.sub("", ln)) for ln in lines[:3]):
        preprint = True  # "from: arxiv"
    elif tag := _opening_tag(_PREPRINT_TAG, row["heading"], lines if title else []):
        preprint, year = True, int(tag.group("year"))  # "(arXiv 2022)Title", "- [arXiv 2019] Title"
    elif tag := _opening_tag(_NAMED_TAG, row["heading"], lines if title else []):
        # "[Nature Communications 2024] Title": a journal's name; "[IEEE 2024]" only a year
        venue, year = unlisted_venue(tag.group("name")), int(tag.group("year"))
    if venue is None and lines and title and "被" in lines[0]:
        # lab news on the title's line: "论文《…》已被 IEEE TIFS / 2026年中国多媒体大会（ChinaMM26）录用"
        accepted = accepted_venue(_after_title(lines[0], title))
        if accepted is not None:
            venue, year = accepted[0], year or accepted[1]
    return venue, year, preprint, other_venue


def _opening_tag(tag: re.Pattern[str], heading: str, lines: list[str]) -> re.Match[str] | None:
    """``tag`` opening the section's heading, else its first line (a list item keeps the tag
    that its title, the heading, lost)."""
    for text in (heading, *lines[:1]):
        if m := tag.match(plain(_LIST_MARK.sub("", text)).lstrip("# ")):
            return m
    return None


class _Lines(NamedTuple):
    """A section's non-empty lines (unwrapped, at most :data:`MAX_ANALYSED_CHARS`), their join
    ``raw`` and start offsets, the parsed section and each metadata line's key end (index -> offset)."""

    lines: list[str]
    raw: str
    line_start: list[int]
    section: nlp.ParsedSection
    key_end: dict[int, int]


class _Metadata(NamedTuple):
    """A section's metadata values by key and their spans in ``raw``, body line indexes, the
    summary start among them, a ``summary`` value's span, and labelled or BibTeX authors."""

    kv: dict[str, list[str]]
    kv_spans: dict[str, list[tuple[int, int]]]
    body: list[int]
    summary_from: int | None
    kv_summary_span: tuple[int, int] | None
    labelled: list[str] | None


def _read_lines(row: dict, lang: str) -> tuple[_Lines, _Metadata]:
    """The section's lines (:class:`_Lines`) and its metadata (:class:`_Metadata`)."""
    lines = _unwrap_latin([plain(ln) for ln in row["text"].split("\n") if ln.strip()])
    raw = "\n".join(lines)
    if len(raw) > MAX_ANALYSED_CHARS:  # its head (whole lines when they are short)
        cut = raw.rfind("\n", 0, MAX_ANALYSED_CHARS)
        lines = raw[: cut if cut > MAX_ANALYSED_CHARS // 2 else MAX_ANALYSED_CHARS].split("\n")
        raw = "\n".join(lines)
    section = nlp.parse_section(raw, lang)
    line_start = [0]
    for ln in lines:
        line_start.append(line_start[-1] + len(ln) + 1)
    ents = section.entities
    key_end: dict[int, int] = {}  # line index -> end of its last KEY entity
    for e in ents:
        if e.label == "KEY":
            i = bisect.bisect_right(line_start, e.start) - 1
            key_end[i] = e.end

    kv: dict[str, list[str]] = {}
    kv_spans: dict[str, list[tuple[int, int]]] = {}  # key -> spans of its values (after the key)
    body: list[int] = []  # line indices
    summary_from: int | None = None
    kv_summary_span: tuple[int, int] | None = None
    first = 0 if lines and _first_line_is_body(lines[0], row["heading"]) else 1
    labelled: list[str] | None = None  # authors under an "Authors:" label or in a BibTeX field
    skip = -1
    for i in range(first, len(lines)):
        ln = lines[i]
        parsed = parse_key_value(ln) if i in key_end else None
        if i == skip:
            continue
        if parsed is None and labelled is None and (labelled := _labelled_authors(lines, i)) is not None:
            skip = i + 1 if not _BIBTEX_AUTHOR.fullmatch(ln) else -1
            continue
        if parsed is None:
            if i in key_end and any(e.value == "summary" for e in ents
                                    if e.label == "KEY" and line_start[i] <= e.start < line_start[i + 1]):
                summary_from = len(body) if summary_from is None else summary_from  # "摘要：" alone
            elif re.fullmatch(r"[-—=*_·•\s]+", ln) or not (len(ln) > 6 or _SENTENCE_PUNCT.search(ln)):
                # a rule line, or a short block label ("paper info")
                continue
            else:
                body.append(i)
            continue
        key, value = parsed
        kv.setdefault(key, []).append(value)
        at = raw.find(value, key_end[i], line_start[i + 1]) if value else -1
        span = (at, at + len(value)) if at >= 0 else (key_end[i], line_start[i] + len(ln))
        kv_spans.setdefault(key, []).append(span)
        if key == "summary" and summary_from is None:
            summary_from = len(body)
            kv_summary_span = span if kv_summary_span is None else kv_summary_span

    return (_Lines(lines, raw, line_start, section, key_end),
            _Metadata(kv, kv_spans, body, summary_from, kv_summary_span, labelled))


def _titles(row: dict, lines: list[str], kv: dict[str, list[str]]) -> tuple[str | None, str | None]:
    """``(title, title_zh)``: the metadata title, else the heading's, a short name's full title
    quoted in the first lines."""
    title, title_zh = split_heading_title(row["heading"])
    title = unquoted(title) if title else title  # 'title: "A Title'
    if kv.get("title"):
        kv_title, kv_title_zh = split_heading_title(unquoted(" ".join(kv["title"][0].split())))
        title = kv_title or title
        title_zh = kv_title_zh or title_zh
    elif title and len(title.split()) <= MAX_SHORT_NAME_WORDS and lines:
        # the full title quoted in the first lines (under a project's name, a links line may come first)
        title = next(filter(None, (_full_title(title, ln) for ln in lines[:FULL_TITLE_LINES])), None) or title

    return title, title_zh


def _metadata_credit(kv: dict[str, list[str]]) -> tuple[list[str], bool, list[str]]:
    """``(authors, truncated, institutions)`` of the authors and institutions metadata lines."""
    authors, truncated = [], False
    institutions: list[str] = []
    for value in kv.get("institutions", [])[:1]:
        institutions, _ = split_names(_names_value(value))
    for value in kv.get("authors", [])[:1]:
        value = _names_value(value)
        # "Authors: A, B and colleagues at DeepMind": people, then their affiliation
        line_credit = parse_credit_line(value)
        paired = split_affiliation_items(value)
        if paired is not None:  # "A, Google; B, EPFL": one person and affiliation an item
            authors, found = paired
            institutions = institutions or found
        elif line_credit is not None:
            authors, truncated = list(line_credit.authors), line_credit.truncated
            institutions = institutions or list(line_credit.institutions)
        else:
            authors, truncated = split_names(value)
    authors, affiliations = split_affiliations(authors)  # "Name (University)": an institution
    institutions += [a for a in affiliations if a not in institutions]
    for author in list(authors):  # "Authors: A et al., Stanford University": an affiliation item
        if is_institution(author):
            authors.remove(author)
            if author not in institutions:
                institutions.append(author)

    return authors, truncated, institutions


def _prose_credit(row: dict, lines: list[str], meta: _Metadata, title: str | None,
                  title_zh: str | None) -> tuple[Credit | None, list[int], int | None]:
    """The credit stated in prose, with the body lines and summary start left once its line is
    taken out: ``(credit, body, summary_from)``."""
    kv, body, summary_from = meta.kv, meta.body, meta.summary_from
    # a bare credit line under the title, else the first paragraphs (metadata keeps priority)
    credit = parse_credit_line(credit_text(lines[body[0]])) if body and summary_from != 0 else None
    if (credit is None and len(body) > 1 and summary_from not in (0, 1) and len(lines[body[0]]) <= MAX_DATELINE_CHARS
            and not _SENTENCE_PUNCT.search(lines[body[0]])):
        # a short dateline or tag line first ("CVPR 2024 11 Jun 2024"), the credit line under it
        credit = parse_credit_line(credit_text(lines[body[1]]))
        body = body[1:] if credit is not None else body  # the dateline is neither credit nor summary
    if credit is not None:
        body = body[1:]
        summary_from = summary_from - 1 if summary_from else summary_from
    elif (len(body) > 1 and body[0] <= 1 and summary_from not in (0, 1)
          and fold_title(_LIST_MARK.sub("", lines[body[0]])).startswith(fold_title(row["heading"])[:20] or "\0")):
        # the first body line opens with the title and holds more ("**Title.** `ACL 2023`"):
        # the credit line may come right under it
        credit = parse_credit_line(credit_text(lines[body[1]]))
        if credit is not None and credit.authors:
            body = body[:1] + body[2:]
            summary_from = summary_from - 1 if summary_from else summary_from

    else:
        credit = find_credit(lines[body[0]] if body else (kv.get("summary") or [""])[0])
        for i in body[1:CREDIT_PARAGRAPHS] if credit is None else ():
            # a gloss or a sentence on the award may come first ("（逆向透镜：…）" / "这篇来自X的论文…")
            if (credit := find_credit(lines[i])) is not None:
                break
        if credit is not None and not credit.authors and _HAS_CJK.search(row["heading"] + lines[body[0]] if body else ""):
            # a Chinese write-up may name the places first and an author later ("通讯作者郭嘉丰，现为…")
            for i in body[1:AUTHOR_PARAGRAPHS]:
                if (named := find_credit(lines[i])) is not None and named.authors:
                    credit.authors, credit.truncated = named.authors, True
                    break
    if credit is not None and credit.authors and not credit.institutions and body:
        credit.institutions = affiliation_line(lines[body[0]])  # "Univ. A; Lab B; Univ. C" under the names
    if credit is None and lines and (title or title_zh):
        named = title or title_zh
        # the title's own line: the first, else one of the next two
        credit = _title_line_credit(next((ln for ln in lines[:3] if named in ln), lines[0]), named)
    return credit, body, summary_from


def _venue_year_award(row: dict, text: _Lines, meta: _Metadata, body: list[int], title: str | None,
                      title_zh: str | None, urls: list[str]) -> tuple[str | None, int | None, str | None]:
    """``(venue, year, award_raw)``: venue and year from metadata, the award header, year lines,
    the paper's lines and links, the document; the award from metadata, the title's line, the
    header, a stated award or the lead."""
    lines, raw, line_start, section = text.lines, text.raw, text.line_start, text.section
    ents, kv, kv_spans = section.entities, meta.kv, meta.kv_spans
    # the award and venue lines' entities: the first venue, the first known award label
    award_spans = kv_spans.get("award", []) + kv_spans.get("venue", [])
    award_ents = [e for a, b in award_spans for e in ents if a <= e.start and e.end <= b]
    venue, year = None, None
    # venue lines but those naming only a venue the paper was sent to ("Venue: Under review at ICLR 2025")
    venue_lines = [v for v in kv.get("venue", []) if not find_venue_years(v) or published_venue_years(v)]
    preprint = False  # the paper's own metadata line names a preprint server, not a venue
    other_venue = False  # the paper's own line names a venue other than the document's
    for e in award_ents:
        if e.label == "VENUE" and not not_accepted(raw, e.start, e.end):  # not "Venue: Under review at ICLR"
            venue, year = _venue_year(e)
            break
    labels = [e for e in award_ents if e.label == "AWARD"]
    label = next((e for e in labels if nlp.is_specific_award(e)), labels[0] if labels else None)
    stated = nlp.stated_award(section, line_start[body[0]], line_start[body[0]] + len(lines[body[0]])) if body else None
    if year is None and row.get("ctx_award_raw"):  # the award header above: "## ICLR 2024 Test of Time"
        for v, y, _, _ in find_venue_years(row["ctx_award_raw"]):
            if y is not None:
                venue, year = venue or v, y
                break
    if year is None:  # a year metadata line or table column ("年份: 2022")
        year = next((int(m.group(1)) for v in kv.get("year", []) if (m := _YEAR_VALUE.match(v))), None)
    if year is None and len(lines) > 1 and (alone := _YEAR_LINE.fullmatch(plain(lines[0]))) and (title or title_zh or "\0") in lines[1]:
        year = int(alone.group(1))  # a year alone right above the title's line: a table's year cell ("| **2018** | Title |")
    if year is None and "year" in raw and "=" in raw:  # a BibTeX entry's year field ("year={2025},")
        year = next((int(m.group(1)) for ln in lines if (m := _BIBTEX_YEAR.fullmatch(ln))), None)
    if year is None:  # a venue line the venue list does not know still dates it ("會議/期刊：IEEE S&P 2019")
        year = next((int(m.group(1)) for v in venue_lines[:1] if (m := ANY_YEAR.search(v))), None)
    if venue is None and venue_lines:  # ... and names it
        venue = unlisted_venue(venue_lines[0])
    if venue is None:  # the paper's own lines: a venue tag, its venue line, a preprint tag, lab news
        venue, year, preprint, other_venue = _venue_by_title(row, lines, title or title_zh, year)
    if venue is None:  # a proceedings address of the paper names its venue and year
        named = next(filter(None, map(venue_from_url, urls)), None)
        if named is not None:
            venue, year = named
    # the award label and year that open the title's line ("- 2022 best student paper, Title, …")
    opening = _before_title(lines[0], title or title_zh) if lines and (title or title_zh) else ""
    item_label = find_award_label(opening) if opening and len(opening) <= MAX_LABEL_FIELD_CHARS else None
    # ... and the fields after the title on its line ("**Title**, _CCL Best Paper Award_, 2023")
    trailing = _after_title(lines[0], title or title_zh) if lines and (title or title_zh) else ""
    trailing_label = find_award_label(trailing) if trailing and len(trailing) <= 2 * MAX_LABEL_FIELD_CHARS else None
    if trailing_label is not None and normalize_award(trailing_label) is None:
        trailing_label = None  # "这项工作也获奖了": an award, but not which one
    if venue is None and year is None and lines and (title or title_zh):
        # a year on the title's line, with no venue: "[Title](url)（2013）", "2024 best paper, Title"
        dated = _LINE_YEAR.search(trailing)
        year = int(next(y for y in dated.groups() if y)) if dated else None
        if year is None and item_label and (lead_year := re.match(r"\s*((?:19|20)\d\d)\b", opening)):
            year = int(lead_year.group(1))
        if year is None and (lead := _LEAD_LINE_YEAR.fullmatch(_before_title(lines[0], title or title_zh, tags=True))):
            year = int(lead.group(1))
    if not preprint and not (venue is None and year and row.get("doc_year") and year != row.get("doc_year")):
        # (a paper of another year than the document's venue edition is not of that edition)
        venue = venue or row.get("doc_venue")
        year = year or (None if other_venue else row.get("doc_year"))
    award_raw = (
        (label.text if label else None)
        or item_label
        or trailing_label
        or row.get("ctx_award_raw")
        or (stated.text if stated else None)
        or row.get("lead_award_raw")
    )
    return venue, year, award_raw


#: Initials alone, an APA author's given names ("A.", "J. R.").
_INITIALS = re.compile(r"(?:[A-Z]\.?\s?){1,3}")
#: The numbers that close a journal's name in a reference ("Nature 521.7553 (2015): 436-444").
_VOLUME_TAIL = re.compile(r"(?<![\s,.])[\s,.]*(?:\d|\(|Ieee\b|IEEE,).*$", re.S)


def _reference_fields(line: str, title: str) -> tuple[list[str], bool, str | None, int | None] | None:
    """``(authors, truncated, venue, year)`` of a formatted reference whose title
    (:func:`pipeline.candidates.citation_title`) is ``title``; None for any other line. The
    authors are those before the title (the first inverted, "LeCun, Yann", as MLA writes it; APA
    lists are inverted pairs), the year the first one after them, the venue the words after the
    title before its volume and pages, when the venue list or its full names know them."""
    if (parts := cited_parts(line)) is None or parts[0] != title:
        return None
    _, before, after, year = parts
    items, truncated = split_names(before)
    if len(items) >= 2 and len(items) % 2 == 0 and all(_INITIALS.fullmatch(i) for i in items[1::2]):
        items = [f"{last}, {given}" for last, given in zip(items[::2], items[1::2], strict=True)]
    elif (len(items) >= 2 and " " not in items[0] and not _HAN_CHAR.search(items[0])
          and before.startswith(first := f"{items[0]}, {items[1]}")):  # MLA's "LeCun, Yann"; not "张三, 李四"
        items = [first + ("." if before[len(first):len(first) + 1] == "." else ""), *items[2:]]
    after = re.sub(r"^[\s.\"”]*(?:\[[A-Z/]{1,5}\](?://|\.)?)?\s*", "", after)
    named = _VOLUME_TAIL.sub("", re.sub(r"^(?:19|20)\d\d\s+", "", after)).strip(" .,")  # "[C]//2009 IEEE conference …"
    venue = record_venue(named)[0] if named else None
    return items, truncated, venue if venue and len(venue) <= MAX_REFERENCE_VENUE_CHARS else None, year


_HAN_CHAR = re.compile(r"[\u3400-\u9fff]")
#: Longest venue name (characters) read off a reference (a longer one is a proceedings' title).
MAX_REFERENCE_VENUE_CHARS = 40


def _extract_fields(row: dict, target_script: str, config: Config) -> dict:
    lang = row.get("lang") or "und"
    text, meta = _read_lines(row, lang)
    lines, raw, line_start, section, key_end = text
    kv, kv_spans, _, _, kv_summary_span, labelled = meta
    title, title_zh = _titles(row, lines, kv)
    authors, truncated, institutions = _metadata_credit(kv)
    credit, body, summary_from = _prose_credit(row, lines, meta, title, title_zh)
    if labelled and not kv.get("authors"):
        authors, truncated = labelled, False
    elif credit is not None:
        if not kv.get("authors") and credit.authors:
            authors, truncated = list(credit.authors), credit.truncated
        if not kv.get("institutions") and not institutions:
            institutions = list(credit.institutions)
    if not authors and (named := presenter(plain(row["heading"]))):  # "## ICLR2025 Hu: Title"
        authors = [named]

    urls = find_urls(row["text"])
    venue, year, award_raw = _venue_year_award(row, text, meta, body, title, title_zh, urls)
    award = normalize_award(award_raw) if award_raw else None
    link_text = " ".join(kv.get("paper_url", []))
    ids = find_arxiv_ids(link_text, allow_bare=True) or find_arxiv_ids(row["text"]) or find_arxiv_attributes(row["text"])
    arxiv_id, arxiv_version = ids[0] if ids else (None, None)

    summary_lines = body[summary_from:] if summary_from is not None else body
    spans = [(line_start[i], line_start[i] + len(lines[i])) for i in summary_lines]
    if kv_summary_span is not None and kv["summary"][0]:
        spans = [kv_summary_span, *spans]
    summary = _summary(section, spans, kv_summary_span is not None and bool(kv["summary"][0]),
                       config.extract.summary_max_chars)

    url_keys: dict[str, str] = {}
    for key in ("project_url", "code_url", "paper_url"):
        for value in kv.get(key, []):
            for url in find_urls(value):
                url_keys.setdefault(url, key)
    url_kinds = [url_kind(u, url_keys.get(u)) for u in urls]

    # the topic: every line but metadata naming people, places and links
    topic: list[tuple[int, int]] = []
    for i, ln in enumerate(lines):
        parsed = parse_key_value(ln) if i in key_end else None
        if parsed is None:
            topic.append((line_start[i], line_start[i] + len(ln)))
        elif parsed[0] in ("title", "summary"):
            at = raw.find(parsed[1], key_end[i], line_start[i + 1]) if parsed[1] else -1
            topic.append((at, at + len(parsed[1])) if at >= 0 else (key_end[i], line_start[i] + len(ln)))
    # in zh-Hans for a Chinese section; an English section's text goes to YAKE, which reads no tokens
    topic_text, topic_tokens = section.topic(topic)
    keywords = kw.keywords(topic_text, lang, config.extract.n_keywords, topic_tokens)
    if lines and title and (cited := _reference_fields(plain(_LIST_MARK.sub("", lines[0])), title)) is not None:
        # a formatted reference: its authors, venue and year where the section gave none
        if not authors:
            authors, truncated = cited[0], cited[1]
        if cited[3] and year != cited[3]:  # its own year outranks the document's edition
            venue, year = cited[2], cited[3]
        else:
            venue, year = venue or cited[2], year or cited[3]

    return {
        "title": title,
        "title_zh": to_target(title_zh, target_script),
        "authors": [without_honorific(a) for a in authors],
        "authors_truncated": truncated,
        "institutions": to_target(institutions, target_script),
        "venue": venue,
        "year": int(year) if year else None,
        "award": award,
        "award_raw": award_raw,
        "arxiv_id": arxiv_id,
        "arxiv_version": arxiv_version,
        "urls": urls,
        "url_kinds": url_kinds,
        "summary": summary,
        "summary_norm": to_target(summary, target_script),
        "keywords": to_target(keywords, target_script),
    }


#: Fewest sections of a document, and of them sections credited to two people or more, for a
#: lone name where the others' credits stand to be read as its section's author.
MIN_LISTED_SECTIONS = 3
MIN_CREDITED_SIBLINGS = 2
#: Most name tokens of a lone author.
MAX_LONE_NAME_TOKENS = 4


def _lone_author(row: dict, title: str | None) -> str | None:
    """One person named before the title on its line ("(Poster #01): A. [Title](…)"), after it,
    or alone on the next line; None otherwise."""
    lines = [ln for ln in str(row.get("text") or "").splitlines() if ln.strip()][:2]
    places = [_before_title(lines[0], title), _after_title(lines[0], title)] if lines and title else []
    places += lines[1:2]
    for place in places:
        name = credit_text(place).strip(" .,;:") if place else ""
        if (name and len(name.split()) <= MAX_LONE_NAME_TOKENS and not re.search(r"\d", name)
                and _credit_person(name) and find_award_label(name) is None):
            return name
    return None


def _credit_lone_authors(doc_ids: list, inputs: list[dict], rows: list[dict]) -> None:
    """In a document of at least :data:`MIN_LISTED_SECTIONS` sections, half and two or more with
    authors, give a section without any its lone person (:func:`_lone_author`); ``rows`` in place.
    (Elsewhere a credit needs two people: one name reads like a short title.)"""
    by_doc: dict[object, list[int]] = {}
    for k, doc in enumerate(doc_ids):
        by_doc.setdefault(doc, []).append(k)
    for ks in by_doc.values():
        credited = sum(len(rows[k]["authors"] or ()) >= 2 for k in ks)
        if len(ks) < MIN_LISTED_SECTIONS or credited < MIN_CREDITED_SIBLINGS or 2 * credited < len(ks):
            continue
        for k in ks:
            if not rows[k]["authors"] and (name := _lone_author(inputs[k], rows[k]["title"] or rows[k]["title_zh"])):
                rows[k]["authors"] = [name]


def extract_sections(batch: pd.DataFrame, config: Config) -> pd.DataFrame:
    """Stage function: add the :data:`EXTRACT_COLUMNS` to a sections batch.

    Input columns: ``heading``, ``text``, ``ctx_award_raw``, ``doc_venue``, ``doc_year``.
    """
    target = config.normalize.target_script
    # only the columns extract_fields reads are converted to Python objects
    read = batch[[c for c in _ROW_COLUMNS if c in batch.columns]]
    inputs = list(records(read))
    rows = [extract_fields(r, target, config) for r in inputs]
    if "doc_id" in batch.columns:
        _credit_lone_authors(list(batch["doc_id"]), inputs, rows)
    out = batch.copy()
    for col in EXTRACT_COLUMNS:
        out[col] = [r[col] for r in rows]
    return out


STAGE = Stage(
    name="extract",
    fn=extract_sections,
    requires=("heading", "text", "ctx_award_raw", "doc_venue", "doc_year"),
    adds=EXTRACT_COLUMNS,
)
