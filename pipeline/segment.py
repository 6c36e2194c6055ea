"""Segment: cut each cleaned document into sections, one per paper, plus document context.

Every kept (not dropped) non-blank line of a document ends up in exactly one of: a section, or
the document's ``context`` (headline, lead, award headers and their intros, reference links).

Section starts (:func:`choose_anchors`): title candidates (:mod:`pipeline.candidates`) scored by
:mod:`pipeline.title_model`, with rules on top; else mentions in prose; else a one-paper page.
A section runs to the next anchor, award header, reference line or a non-paper heading above
the anchor's level. Award headers and their intros are context (``ctx_award_raw``); the nearest
venue heading gives ``ctx_venue``/``ctx_year``. ``doc_venue``/``doc_year`` come from the
context's venue mentions, else its proceedings links; ``lead_award_raw`` from an award the lead
gives all papers. The method: ``docs/segmentation.md``.
"""

from __future__ import annotations

import bisect
import logging
import re
from collections import Counter
from collections.abc import Sequence
from contextvars import ContextVar

import pandas as pd

from . import paper_records, title_model
from .candidates import (
    ABOUT_PAPERS,
    ITEM_STYLES,
    LEADING_TAGS,
    Candidate,
    fenced_lines,
    find_candidates,
    has_paper_evidence,
    labelled_names,
    title_is_part,
    titled_row,
    two_papers,
    venue_beside_title,
)
from .clean import front_matter_headline, front_matter_names_a_paper
from .config import Config
from .credits import names_only
from .fields import (
    find_dated_venue_years,
    find_venue_years,
    fold_title,
    lead_award,
    names_original_title,
    parse_key_value,
    venue_from_url,
)
from .heading_titles import reading_label, split_heading_title
from .headings import (
    ENUMERATED_HEADING,
)
from .identifiers import find_urls
from .layouts import (
    _HEADING_STYLES,
    CONFIDENT_TITLE_SCORE,
    ONE_PAPER_AWARD_LINES,
    _award_lists,
    _entries_with_notes,
    _explainer_parts,
    _metadata_anchors,
    _next_anchor,
    _next_text_line,
    _numbered_siblings,
    _sibling_blocks,
    _sibling_headings,
)
from .line_kinds import (
    _BOLD_LINE,
    _LIST_ITEM,
    MAX_AWARD_HEADER_CHARS,
    MAX_HEADER_QUALIFIER_CHARS,
    _described_award_header,
    _english_title,
    _heading_level,
    _is_award_header,
    _names_context,
    _venue_heading,
    kept_lines,
    labels_a_value,
)
from .normalize import detect_script
from .overlong_lines import overlong_line_notes
from .prose import (
    _PAPER_CUE,
    _about_one_paper,
    _narrative,
    _quoted_title,
    _restated_headline,
    _untitled_blocks,
    find_announced_papers,
)
from .stage import Stage
from .textutil import Line, plain, trim_span
from .venue_status import published_venue_years

log = logging.getLogger(__name__)
#: The document being segmented, for DEBUG lines (None when a caller segments bare text).
_DOCUMENT: ContextVar[str | None] = ContextVar("segment_document", default=None)


_MD_HEADING = re.compile(r"^#{1,6}\s+\S")
_HAN = re.compile(r"[\u3400-\u9fff]")
#: A metadata title line whose label names a paper: "论文标题：", "# 論文：", "Paper title:".
_PAPER_TITLE_LABEL = re.compile(r"^[#\s*_]*(?:论文|論文|paper)[^:：\n]{0,6}[:：]", re.I)
#: A lead about papers that were up for an award, not given one.
_NOT_AWARDED = re.compile(r"候选|候選|入围|入圍|提名名单|candidates?\b|finalists?\b|shortlist|nominat|missed the|none of", re.I)

#: Keys of a section dict; ``ctx_venue``/``ctx_year`` are the venue and year of the nearest
#: heading above the section that names one (None when none does).
SECTION_FIELDS = ("ordinal", "char_start", "char_end", "heading", "text", "ctx_award_raw", "lead_award_raw",
                  "ctx_venue", "ctx_year")
_CONTEXT_FIELDS = ("ctx_venue", "ctx_year")
#: Columns of the sections batch that :func:`explode_sections` builds (``doc_venue``/``doc_year``
#: are the section's heading context when it has one, else the document's).
EXPLODED_COLUMNS = ("section_id", "doc_id", *(f for f in SECTION_FIELDS if f not in _CONTEXT_FIELDS),
                    "doc_venue", "doc_year", "paper_record")


def _drop_restated_mentions(lines: list[Line], anchors: dict[int, Candidate | str | None]) -> None:
    """Drop (in place) the anchor of a prose line naming a paper ("一篇是**Title**，…") that a later
    line gives as its heading; a title-only line with paper evidence keeps it ("Foo: Bar" above "Foo")."""
    titles: dict[int, str] = {}
    for at, anchor in anchors.items():
        title = anchor.title if isinstance(anchor, Candidate) else anchor
        if title:
            titles[at] = fold_title(title)
    # heading titles: their last line, and their lengths by first MIN_RESTATED_CHARS characters
    last: dict[str, int] = {}
    sizes: dict[str, set[int]] = {}
    for at, key in titles.items():
        if (len(key) >= MIN_RESTATED_CHARS and len(lines[at].stripped) <= 2 * len(key) + 40
                and fold_title(plain(lines[at].stripped)) == key):
            last[key] = max(at, last.get(key, -1))
            sizes.setdefault(key[:MIN_RESTATED_CHARS], set()).add(len(key))
    if not last:
        return
    for at, key in list(titles.items()):
        anchor = anchors[at]
        if isinstance(anchor, Candidate) and has_paper_evidence(anchor) and fold_title(plain(lines[at].stripped)) == key:
            continue
        # a shorter heading title inside this one, on a later line
        if any(last.get(key[i : i + size], -1) > at
               for i in range(len(key) - MIN_RESTATED_CHARS + 1)
               for size in sizes.get(key[i : i + MIN_RESTATED_CHARS], ()) if i + size <= len(key) and size < len(key)):
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


def _classify(lines: list[Line]) -> list[str]:
    """A kind per kept line: ``reference`` (``参考链接：``), ``award_header``, ``kv_title``, ``kv``,
    ``award_lead`` (:func:`_is_award_lead`) or ``body``."""
    kinds = []
    for i, line in enumerate(lines):
        s = plain(line.text)
        kv = parse_key_value(s)
        if kv is not None and kv[0] == "reference_url" or (
                kv is None and s.endswith((":", "：")) and (
                    (label := parse_key_value(s + " -")) is not None and label[0] == "reference_url"
                    or _heads_link_list(s, lines, i))):
            # a reference line, or the label of a list of links under it ("[1]https://…")
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
    _demote_original_titles(lines, kinds)
    return kinds


#: Metadata keys that make a block a paper's: credits, a venue, a paper's links.
_PAPER_KEYS = frozenset({"authors", "institutions", "venue", "award", "paper_url", "code_url", "project_url"})
#: How many lines after an original-title line (:func:`pipeline.fields.names_original_title`)
#: are searched for the rest of its metadata (a digest item: source, date, scores, then links).
ORIGINAL_BLOCK_LINES = 8


def _demote_original_titles(lines: list[Line], kinds: list[str]) -> None:
    """Make body of each ``原文：<title>`` line with no paper metadata (:data:`_PAPER_KEYS`) after
    it, up to the next title line or heading: a translated news item's headline."""
    for i, kind in enumerate(kinds):
        if kind == "kv_title" and names_original_title(plain(lines[i].text)) and not _paper_metadata_after(lines, kinds, i):
            kinds[i] = "body"


def _paper_metadata_after(lines: list[Line], kinds: list[str], i: int) -> bool:
    for j in range(i + 1, min(len(kinds), i + 1 + ORIGINAL_BLOCK_LINES)):
        if kinds[j] == "kv_title" or _heading_level(lines[j].stripped):
            return False
        kv = parse_key_value(plain(lines[j].text)) if kinds[j] == "kv" else None
        if kv is not None and kv[0] in _PAPER_KEYS:
            return True
    return False


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
    """A short sentence ending in a colon that gives one award (:func:`pipeline.fields.lead_award`)
    to the papers after it ("此外，还有两篇论文获得了最佳论文亚军："), with no quoted title or nominees."""
    if not s.endswith((":", "：")) or len(s) > MAX_AWARD_LEAD_CHARS or any(ch in s for ch in "《》“”\"「」"):
        return False
    return lead_award(s) is not None and not _NOT_AWARDED.search(s)


#: Fewest anchors of a list for a heading right above one of them to be a group's name.
MIN_GROUPED_ITEMS = 3


#: Times a document marks one text alike before a value (":"/"：") for it to be a label, not a
#: title (a title is written at most twice before a colon: in a lead and as its heading).
MIN_LABEL_REPEATS = 3


def choose_anchors(lines: list[Line], kinds: list[str]) -> dict[int, Candidate | str]:
    """The lines that start a section, mapped to their title candidate: those the title
    classifier scores at its threshold or above, then the rules below; when every anchor is a
    metadata title line, :func:`_metadata_anchors` places the sections."""
    cands = find_candidates(lines)
    if not cands:
        return {}
    model = title_model.load()
    scores = model.scores(cands)
    # never a title: award headers, reference lines, names ("Organizers include: A, B"), venue
    # headings, and a text marked alike in many blocks (a label: "**Session**: …")
    repeated = Counter((c.style, c.title.casefold()) for c in cands if labels_a_value(lines[c.line].text, c.title))
    eligible = [kinds[c.line] not in ("award_header", "reference") and not c.prose and not c.features.get("self_credit")
                and not labelled_names(c.title) and not names_only(c.title)
                and not (c.features.get("venue_year") and _venue_heading(LEADING_TAGS.sub("", c.title) or c.title))
                and repeated[c.style, c.title.casefold()] < MIN_LABEL_REPEATS
                for c in cands]
    chosen = {c.line: c for c, p, ok in zip(cands, scores, eligible, strict=True) if ok and p >= model.threshold}
    # a title line whose label names a paper ("论文标题：X") with paper evidence is a title
    # whatever its score (the classifier scores Chinese-only titles low)
    chosen.update({c.line: c for c, ok in zip(cands, eligible, strict=True)
                   if ok and kinds[c.line] == "kv_title" and _PAPER_TITLE_LABEL.match(plain(lines[c.line].stripped))
                   and has_paper_evidence(c)})
    # two or more items of one list that name a venue edition beside their titles ("1. 《Title》
    # CVPR 2016 Author") or end in a reading label ("[Title導讀](…)") are a paper list
    beside = [c for c, ok in zip(cands, eligible, strict=True)
              if ok and (venue_beside_title(c, lines[c.line].stripped)
                         or (c.style in ITEM_STYLES and _HAN.search(c.title) and reading_label().search(c.title)))]
    chosen.update({c.line: c for c in beside if sum(b.style == c.style for b in beside) >= 2})
    items = _sibling_runs(cands, kinds, eligible, chosen)
    _entries_with_notes(cands, scores, eligible, items, chosen)
    _sibling_headings(lines, cands, eligible, chosen)
    _sibling_blocks(cands, eligible, chosen)
    _numbered_siblings(lines, cands, eligible, chosen)
    _award_lists(cands, kinds, eligible, chosen)
    # two or more rows of a table with a title column are papers, unless one begins an anchored title
    rows = [c for c, ok in zip(cands, eligible, strict=True) if ok and c.style == "table" and titled_row(c)]
    row_lines = {r.line for r in rows}
    named = [c.title.casefold() for c in chosen.values() if c.line not in row_lines]
    if len(rows) >= 2 and not _begins_any(rows, named):
        chosen.update({c.line: c for c in rows})
    if log.isEnabledFor(logging.DEBUG):
        for c, p in zip(cands, scores, strict=True):
            if c.line not in chosen and (c.style != "plain" or p >= model.threshold / 4):
                log.debug("document %s: heading %r rejected as a paper title: score %.2f < %.2f",
                          _DOCUMENT.get(), c.title[:120], p, model.threshold)
    _explainer_parts(lines, cands, scores, chosen)
    # an anchor of unique markup without paper evidence, among anchors that share one, is a
    # headline or a trailer ("Next week: …")
    styles = Counter(c.style for c in chosen.values())
    if len(chosen) >= 3 and max(styles.values()) >= 2:
        for line in [at for at, c in chosen.items() if styles[c.style] == 1 and not has_paper_evidence(c)]:
            del chosen[line]
    # a heading right above a list's anchor, when most anchors are that list's, names a group
    # ("#### RAG and LLM"); a lone plain line right under a heading is its credit or links line
    if len(chosen) >= MIN_GROUPED_ITEMS:
        order = sorted(chosen)
        for at in [at for at, c in chosen.items() if c.style in _HEADING_STYLES]:
            under = chosen.get(_next_text_line(lines, at))
            if under is not None and under.style == "plain":
                after = _next_anchor(chosen, order, under.line)
                if after is None or after.style in _HEADING_STYLES:
                    del chosen[under.line]
                    continue
            below = chosen.get(at + 1)
            if (below is not None and below.style not in _HEADING_STYLES
                    and 2 * styles[below.style] >= len(chosen) and styles[below.style] >= MIN_GROUPED_ITEMS):
                del chosen[at]
    _lines_under_titled_headings(cands, scores, chosen)
    _restated_titles(cands, chosen)
    # a document that never speaks of papers and has no paper evidence is not about papers
    confident = any(p >= CONFIDENT_TITLE_SCORE for c, p in zip(cands, scores, strict=True) if c.line in chosen)
    if (chosen and not confident and not any(ABOUT_PAPERS.search(line.text) for line in lines)
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


def _lines_under_titled_headings(cands: list[Candidate], scores: Sequence[float],
                                 chosen: dict[int, Candidate]) -> None:
    """Drop from ``chosen`` the plain-line anchors under a digest's headings (three or more of one
    style at :data:`CONFIDENT_TITLE_SCORE`): a summary line of that paper's entry."""
    score = {c.line: p for c, p in zip(cands, scores, strict=True)}
    titled = Counter(c.style for at, c in chosen.items()
                     if c.style in _HEADING_STYLES and score.get(at, 0.0) >= CONFIDENT_TITLE_SCORE)
    if not titled or max(titled.values()) < MIN_GROUPED_ITEMS:
        return
    style = titled.most_common(1)[0][0]
    first = min(at for at, c in chosen.items() if c.style == style and score.get(at, 0.0) >= CONFIDENT_TITLE_SCORE)
    under = False
    for at in sorted(chosen):
        c = chosen[at]
        if c.style in _HEADING_STYLES or c.style != "plain":
            under = c.style == style and score.get(at, 0.0) >= CONFIDENT_TITLE_SCORE
        elif under and at > first:
            del chosen[at]


def _begins_any(rows: list[Candidate], named: list[str]) -> bool:
    """Whether some row's casefolded title begins one of ``named`` (casefolded titles); one
    binary search per row."""
    named = sorted(named)
    for row in rows:
        key = row.title.casefold()
        at = bisect.bisect_left(named, key)
        if at < len(named) and named[at].startswith(key):
            return True
    return False


def _sibling_runs(cands: list[Candidate], kinds: list[str], eligible: list[bool],
                  chosen: dict[int, Candidate]) -> list[int]:
    """In a run of candidates of one style (a heading or award header between items does not end
    it), when at least two and half are in ``chosen``, add the other eligible items. Returns the
    indexes into ``cands`` of the run items."""
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
    return items


def _restated_titles(cands: list[Candidate], chosen: dict[int, Candidate]) -> None:
    """Fix ``chosen`` (in place) where a title is written twice: a metadata title repeating a line
    above moves the anchor up to that line; a title repeated in a row starts one section unless
    both are papers (:func:`pipeline.candidates.two_papers`)."""
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
        head = chosen[line].title[:8].casefold()
        earlier = [c for c in cands if floor < c.line < line and head in c.title.casefold() and key in key_of(c)]
        if earlier:
            chosen[earlier[-1].line] = earlier[-1]
    previous, last = None, None
    for line in sorted(chosen):
        key = key_of(chosen[line])
        if previous is not None and key and (key == previous or (len(key) >= 8 and (key in previous or previous in key))):
            if key == previous or not two_papers(chosen[last], chosen[line]):
                del chosen[line]
                continue
        previous, last = key, line


def first_line_end(text: str) -> int:
    """The offset where the first non-blank line of ``text`` ends."""
    start = len(text) - len(text.lstrip())
    end = text.find("\n", start)
    return len(text) if end < 0 else end


#: A heading that is only a year ("## 2017", "### 2019年"); it dates the papers under it when the
#: year is one a record's year may be (:func:`pipeline.paper_records.plausible_year`).
_YEAR_HEADING = re.compile(r"((?:19|20)\d\d)\s*年?")
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
    names a venue, that venue (and year) is the context of the sections under it; when it is only
    a year, that year under the venue of the heading above it (None: the document's)."""
    level = level or 7
    sibling = venue_ctx.get(level)
    for k in [k for k in venue_ctx if k >= level]:
        del venue_ctx[k]
    found = find_venue_years(plain(raw))
    only_year = None if found else _YEAR_HEADING.fullmatch(plain(raw).strip(" \t*_#:："))
    if only_year and paper_records.plausible_year(int(only_year.group(1))):
        outer = venue_ctx[max(venue_ctx)] if venue_ctx else (None, None)
        venue_ctx[level] = (outer[0], int(only_year.group(1)))  # "## 2017": the year of the papers below
    elif found:
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


#: Table columns that date a row ("| Date | … | Paper |"): in a table of papers, each paper's date.
_DATE_COLUMNS = frozenset({"date", "日期"})


def _row_text(cand: Candidate) -> str:
    """A table row's section text: one line per cell, ``Header: cell`` when the table names its
    columns (Date reads as ``Year:``); a multi-line cell under an author or institution column
    becomes one ``;``-separated list."""
    out = []
    for k, cell in enumerate(cand.cells):
        text = _cell_text(cell)
        name = plain(cand.header[k]).strip() if k < len(cand.header) else ""
        name = "Year" if name.casefold() in _DATE_COLUMNS else name
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


def segment_document(text: str, dropped: list[dict], title: str | None = None) -> dict:
    """Sections and context of one document.

    Args:
        text: the decoded document text.
        dropped: spans from :func:`pipeline.clean.find_dropped`.
        title: the page's own title, or None; read as the headline when the text lacks it.

    Returns:
        dict with ``sections`` (list of dicts with the keys of :data:`SECTION_FIELDS`; offsets
        are characters into ``text``, ``text`` is the section's slice without dropped spans),
        ``context`` (list of ``{char_start, char_end, kind}``, kind in ``headline``, ``lead``,
        ``award_header``, ``award_intro``, ``reference``, ``trailer``), ``doc_venue`` (str or
        None), ``doc_year`` (int or None), ``doc_urls`` (list of str).
    """
    lines = kept_lines(text, dropped)
    body_text = _unwrapped(text, lines)
    lines, kinds, anchors = _layout(lines, _classify(lines), dropped)
    sections, context, doc_urls, award_headers = _walk(text, body_text, lines, kinds, anchors, dropped)
    if not lines and front_matter_names_a_paper(dropped):
        # a page that is only a paper's front matter (a conference site's page per paper): one
        # section over it, its fields read from the front matter (pipeline.front_matter)
        span = next(d for d in dropped if d["reason"] == "front_matter")
        sections = [{"ordinal": 0, "char_start": span["char_start"], "char_end": span["char_end"],
                     "heading": front_matter_headline(dropped).split("\n")[0], "text": "",
                     "ctx_award_raw": None, "lead_award_raw": None, "ctx_venue": None, "ctx_year": None}]
    headline = title.strip() if title and title.strip() not in text else front_matter_headline(dropped)
    doc_venue, doc_year = _document_venue(text, sections, context, headline)
    _lead_awards(text, sections, context, headline, award_headers)
    return {"sections": sections, "context": context, "doc_venue": doc_venue, "doc_year": doc_year,
            "doc_urls": doc_urls}


def _layout(lines: list[Line], kinds: list[str],
            dropped: list[dict]) -> tuple[list[Line], list[str], dict[int, Candidate | str | None]]:
    """The document's anchors (:func:`choose_anchors`, else the fallbacks below), with the lines and
    line kinds they index (the narrative layout splits lines at mentions)."""
    anchors: dict[int, Candidate | str | None] = dict(choose_anchors(lines, kinds))
    headline = _restated_headline(lines)
    if headline is not None:
        # an explainer of the paper its first line names: its sub-headings are parts, not papers
        anchors = {0: headline}
    if anchors and all(isinstance(c, Candidate) and c.style in _HEADING_STYLES for c in anchors.values()):
        # headings over sentences announcing papers ("Three papers accepted at CVPR 2025: [A](…),
        # [B](…)"): the links are the papers
        split_lines_, split_kinds, announced = _narrative(lines, kinds, find_announced_papers)
        if len(announced) >= 2:
            lines, kinds, anchors = split_lines_, split_kinds, dict(announced)
    if not anchors or (len(anchors) == 1 and all(isinstance(c, Candidate) and c.style == "plain" for c in anchors.values())):
        # (one unmarked title is weak evidence against two or more papers named in prose)
        split_lines_, split_kinds, narrative = _narrative(lines, kinds)
        if not anchors or len(narrative) >= 2:
            lines, kinds, anchors = split_lines_, split_kinds, dict(narrative)
    if not anchors:
        anchors = dict.fromkeys(_untitled_blocks(lines, kinds), "")
    if (subject := _subject_title(lines, dropped)) is not None:
        # Chinese notes headed by an English title get that paper's section from the top;
        # Chinese subheadings taken for titles are its parts
        keys = {fold_title(a.title if isinstance(a, Candidate) else a or "") for a in anchors.values()}
        if fold_title(subject) not in keys:
            if all(not _LATIN_TITLE.search(a.title if isinstance(a, Candidate) else a or "") for a in anchors.values()):
                anchors = {}
            anchors[0] = subject
            anchors = dict(sorted(anchors.items()))
    if not anchors and lines and (_about_one_paper("\n".join(line.text for line in lines))
                                  or front_matter_names_a_paper(dropped)):
        # a page about one paper without a title heading: one section, titled by a quoted
        # English title, else its front matter's title, else untitled
        anchors = {0: _quoted_title(lines) or front_matter_headline(dropped).split("\n")[0]}
    if len(anchors) >= 2:
        _drop_restated_mentions(lines, anchors)
    if len(anchors) <= 1 and "reference" in kinds:
        # under one paper a bare reference label ("參考資料：") does not end its section
        kinds = ["body" if k == "reference" and parse_key_value(plain(line.text)) is None else k
                 for line, k in zip(lines, kinds, strict=True)]

    return lines, kinds, anchors


#: Least share of Chinese characters among a document's letters for it to be Chinese notes.
MIN_HAN_SHARE = 0.25
_LATIN_TITLE = re.compile(r"[A-Za-z]{2,}")
_LATIN_LETTER = re.compile(r"[A-Za-z]")


def _subject_title(lines: list[Line], dropped: list[dict]) -> str | None:
    """The English title heading a Chinese document (a first ``# `` line, else its front matter's
    title; a reading label such as "論文筆記 - " removed), or None."""
    first = lines[0].stripped if lines else ""
    heading = first[2:].strip() if first.startswith("# ") else None
    for text in (heading, front_matter_headline(dropped).split("\n")[0]):
        if not text:
            continue
        title = split_heading_title(text)[0]
        if title and not _HAN.search(title) and _english_title(title):
            body = "\n".join(line.text for line in lines)
            han = len(_HAN.findall(body))
            return title if han >= MIN_HAN_SHARE * (han + len(_LATIN_LETTER.findall(body))) else None
    return None


def _walk(text: str, body_text: str, lines: list[Line], kinds: list[str], anchors: dict[int, Candidate | str | None],
          dropped: list[dict]) -> tuple[list[dict], list[dict], list[str], bool]:
    """Sections and context from the anchors, line by line: ``(sections, context, doc_urls,
    award_headers)`` (see :func:`segment_document`; ``award_headers``: an award header seen)."""
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
    one_page = list(anchors) == [0] and not isinstance(anchors[0], Candidate)  # a page on one paper: headings are its parts

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
            # a venue edition named right above is the sections' context, until a heading
            dated = [(v, y) for v, y, _, _ in find_venue_years(line.stripped) if y is not None]
            if dated:
                # a lead naming two venues above the first paper gives none
                lead_ctx = (None, None) if not sections and lead_ctx[0] not in (None, dated[0][0]) else dated[0]

    for i, (line, kind, fenced) in enumerate(zip(lines, kinds, fenced_lines(lines), strict=True)):
        level = 0 if fenced else _heading_level(line.stripped)  # ("## 2017" in a code block heads nothing)
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
            # a short venue line right above a paper ("• ICCV2015") heads the papers below
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
        elif level and not one_page and (not current or not _heading_level(current[0].stripped)
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

    return sections, context, doc_urls, award_headers


def _document_venue(text: str, sections: list[dict], context: list[dict], headline: str) -> tuple[str | None, int | None]:
    """The document's venue and year (None each when unknown): the most named in its headline and
    context, else the proceedings it links to; the year from the same or the fallbacks below."""
    venue_counts: Counter = Counter()
    year_counts: Counter = Counter()
    first_section = sections[0]["char_start"] if sections else len(text)
    # a venue named between or after the sections counts only when its line speaks of papers
    spans = [text[span["char_start"] : span["char_end"]] for span in context]
    spans = [t for span, t in zip(context, spans, strict=True)
             if span["char_start"] < first_section or span["kind"] in ("award_header", "award_intro", "reference")
             or _PAPER_CUE.search(t)]
    for span_text in [headline] + spans:
        found = published_venue_years(span_text)
        listed = len({venue for venue, year, _, _ in found if not year}) >= 2  # "三大顶会：CVPR、ECCV、ICCV"
        for venue, year, _, _ in found:
            if listed and not year:
                continue  # a list of undated venues names none of them the document's
            venue_counts[venue] += 2 if year else 1
            if year:
                year_counts[(venue, year)] += 1
        for venue, year in find_dated_venue_years(span_text):
            venue_counts[venue] += 1  # the undated mention counted 1 above; dated, it counts 2
            year_counts[(venue, year)] += 1
    urls = find_urls(text) if "://" in text else []
    linked = Counter(filter(None, map(venue_from_url, urls)))
    # links outside the sections, and the venue at least half of the sections link to
    context_linked: Counter = Counter()
    if linked:
        section_urls = [set(find_urls(sec["text"])) for sec in sections]
        in_sections = set().union(*section_urls)
        context_linked.update(filter(None, (venue_from_url(u) for u in urls if u not in in_sections)))
        # (sorted: a tie in most_common goes to the first counted)
        per_section = Counter(v for urls in section_urls for v in sorted(set(filter(None, map(venue_from_url, urls)))))
        context_linked.update({v: n for v, n in per_section.items() if 2 * n >= len(sections)})
        if not context_linked and len(per_section) == 1 and min(per_section.values()) >= 2:
            # the one venue edition every section's proceedings link names, from two papers or more
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
        # the first year the sections' prose gives the venue ("2024 年 12 月，NeurIPS 把…")
        for sec in sections:
            found = [y for v, y, _, _ in find_venue_years(sec["text"]) if v == doc_venue and y]
            found += [y for v, y in find_dated_venue_years(sec["text"]) if v == doc_venue]
            if found:
                years = [(1, found[0])]
                break
    if doc_venue is not None and not years:
        # a journal issue line above the papers ("… (TOG): Vol. 43, No. 4. 2024")
        for span_text in [headline] + [t for span, t in zip(context, (text[c["char_start"] : c["char_end"]] for c in context), strict=True)
                                       if span["char_start"] < first_section]:
            end_year = _LINE_END_YEAR.search(span_text) if span_text else None
            if end_year and any(v == doc_venue for v, _, _, _ in find_venue_years(span_text)):
                years = [(1, int(end_year.group(1)))]
                break
    doc_year = max(years)[1] if years else None
    if doc_venue is None and len(sections) == 1 and sections[0]["char_start"] <= first_line_end(text):
        # a one-paper page names its venue edition in its opening lines
        opening = "\n".join([ln for ln in sections[0]["text"].splitlines() if ln.strip()][:ONE_PAPER_AWARD_LINES])
        dated = [(v, y) for v, y, _, _ in published_venue_years(opening) if y is not None]
        if dated:
            doc_venue, doc_year = dated[0]

    return doc_venue, doc_year


def _lead_awards(text: str, sections: list[dict], context: list[dict], headline: str, award_headers: bool) -> None:
    """Set ``lead_award_raw`` of the sections (in place) from the award that the headline and
    lead give all papers, or that a one-paper page states in its opening lines."""
    if not award_headers:
        lead = "\n".join([headline] + [text[span["char_start"] : span["char_end"]] for span in context
                                        if span["kind"] in ("headline", "lead")])
        label = lead_award(lead) if not _NOT_AWARDED.search(lead) else None  # nominated, shortlisted
        # a lead that names some of the papers gives the award to those only
        if label is not None and sections:
            lead_key = fold_title(lead)
            named = [sec for sec in sections if len(k := fold_title(sec["heading"] or "")) >= 8 and k in lead_key]
            for sec in named or sections:
                sec["lead_award_raw"] = label
    if len(sections) == 1 and not sections[0]["lead_award_raw"] and not sections[0]["ctx_award_raw"]:
        # a one-paper page says its award in its opening lines ("(ICLR 2025 Oral, Outstanding Paper Award)")
        opening = "\n".join([ln for ln in sections[0]["text"].splitlines() if ln.strip()][:ONE_PAPER_AWARD_LINES])
        if not _NOT_AWARDED.search(opening):
            sections[0]["lead_award_raw"] = lead_award(opening)


def segment_documents(batch: pd.DataFrame, config: Config) -> pd.DataFrame:
    """Stage function: add ``sections``, ``context``, ``doc_venue``, ``doc_year``, ``doc_urls`` and
    the document's script ``lang`` (:func:`pipeline.normalize.detect_script` over its whole text),
    and a note per heading or table row too long to be a title to ``notes`` when the batch has
    that column (:func:`pipeline.overlong_lines.overlong_line_notes`).

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
        out["notes"] = [_with_notes(n, overlong_line_notes(t) if s == "ok" and not isinstance(p, str) else [])
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
            # the nearest venue or year heading's, else the document's
            ctx_venue, ctx_year = sec.get("ctx_venue"), sec.get("ctx_year")
            venue = (ctx_venue or None) if ctx_venue is not None else doc.doc_venue
            year = ctx_year if ctx_venue is not None or ctx_year is not None else doc.doc_year
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
