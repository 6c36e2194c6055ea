"""Segment: cut each cleaned document into sections, one per paper, plus document context.

Every kept (not dropped) non-blank line of a document ends up in exactly one of: a section, or
the document's ``context`` (headline, lead, award headers and their intros, reference links).

Layouts recognised (see the seeds in ``../shared/corpora/seeds``):

* **numbered headings** — ``论文 1：Title``, ``論文2: Title``, ``Paper 3: Title``: each starts a
  section; when a document has any, they are its only anchors;
* **title lines** — otherwise, a line that is an English title standing alone (at least
  ``MIN_TITLE_WORDS`` Latin words, mostly Latin letters, optionally a Markdown heading, optionally
  followed by a short Chinese decoration such as a "deep dive" label) starts a section. When
  some title-line sections carry paper evidence (metadata lines, an arXiv id), title lines
  without any are demoted: a headline or sub-heading that merely looks like a title.

A section runs from its anchor to the line before the next anchor, award header or reference
line (a ``参考链接：``-style key-value line, which belongs to the whole article: its URL goes to
``doc_urls``). Award headers (short standalone lines naming an award, e.g. 杰出论文奖 or
"Best Paper") and the text after them up to the next anchor are context; the most recent
award header gives ``ctx_award_raw`` to the sections under it.

Document venue and year (``doc_venue``, ``doc_year``) come from the venue mentions in the
context text: the venue mentioned most often with a year, and its most frequent year.
"""

from __future__ import annotations

import re
from collections import Counter

import pandas as pd

from .config import Config
from .fields import (
    find_arxiv_ids,
    find_award_label,
    find_urls,
    find_venue_years,
    normalize_award,
    parse_key_value,
)
from .normalize import detect_script
from .stage import Stage
from .textutil import Line, latin_words, plain, split_lines, trim_span

#: A standalone English title has at least this many Latin words.
MIN_TITLE_WORDS = 3
#: Share of Latin letters among letters (Latin + CJK) in a title line.
MIN_TITLE_LATIN_SHARE = 0.8
#: Longest award header line, in characters (a header is a label, not a sentence).
MAX_AWARD_HEADER_CHARS = 40
#: Letters an award header may hold besides its label, venue and year (a counter such as 篇).
MAX_AWARD_HEADER_REST = 1

_NUMBERED_HEADING = re.compile(
    r"^(?:论文|論文|Paper|PAPER|paper)\s*(?:\d+|[一二三四五六七八九十]+)\s*[：:.、]\s*(?P<title>\S.*)$"
)
_TITLE_LINE = re.compile(r"^(?P<title>[^\u3400-\u9fff]+?)(?:\s+(?P<deco>[\u3400-\u9fff]{1,8}))?$")
_LIST_ITEM = re.compile(r"^(?:[-*•·▪●]|\(?\d+[.)、]|[（(]\d+[）)])\s*")
_SENTENCE_END = re.compile(r"[。；;，,]$|[。！]")

SECTION_FIELDS = ("ordinal", "char_start", "char_end", "heading", "text", "ctx_award_raw")
#: Columns of the sections batch that :func:`explode_sections` builds.
EXPLODED_COLUMNS = ("section_id", "doc_id", *SECTION_FIELDS, "doc_venue", "doc_year")


def _is_title_line(s: str) -> bool:
    m = _TITLE_LINE.match(s)
    if not m or _LIST_ITEM.match(s) or parse_key_value(s) is not None or "://" in s:
        return False
    title = m.group("title")
    if len(latin_words(title)) < MIN_TITLE_WORDS or title.rstrip().endswith((".", ",", ";", ":")):
        return False
    letters = sum(ch.isalpha() for ch in title)
    latin = sum(ch.isascii() and ch.isalpha() for ch in title)
    return letters > 0 and latin / letters >= MIN_TITLE_LATIN_SHARE and (title[0].isupper() or title[0].isdigit())


def _is_award_header(s: str) -> bool:
    """A line that is only an award label, optionally with a venue and year and a count: what
    is left after removing those holds at most ``MAX_AWARD_HEADER_REST`` letters (so a headline
    such as "<venue> <year> best papers announced" is not a header)."""
    if len(s) > MAX_AWARD_HEADER_CHARS or _SENTENCE_END.search(s) or parse_key_value(s) is not None:
        return False
    label = find_award_label(s)
    if label is None or normalize_award(label) is None:
        return False
    rest = s.replace(label, " ")
    for _, _, start, end in sorted(find_venue_years(rest), key=lambda v: -v[2]):
        rest = rest[:start] + " " + rest[end:]
    return sum(ch.isalpha() for ch in rest) <= MAX_AWARD_HEADER_REST


def _kept_lines(text: str, dropped: list[dict]) -> list[Line]:
    spans = [(d["char_start"], d["char_end"]) for d in dropped]
    out = []
    for line in split_lines(text):
        if line.blank:
            continue
        start, end = trim_span(text, line.start, line.end)
        if any(a <= start and end <= b for a, b in spans):
            continue
        out.append(line)
    return out


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


def _has_evidence(line: Line) -> bool:
    s = plain(line.text)
    return parse_key_value(s) is not None or bool(find_arxiv_ids(s))


def _demote_unsupported_titles(lines: list[Line], kinds: list[str]) -> None:
    """Turn title lines that head no paper into body lines, in place.

    A title line is only a guess at a paper heading (a document headline or an English
    sub-heading looks the same). When some title-line sections of a document carry paper
    evidence (a metadata line or an arXiv id) and others carry none, the ones without are not
    papers: their lines join the section before them, or the document context.
    """
    runs: list[tuple[int, bool]] = []
    for i, kind in enumerate(kinds):
        if kind == "title":
            runs.append((i, False))
        elif kind in ("award_header", "reference"):
            runs.append((-1, False))
        elif runs and runs[-1][0] >= 0 and not runs[-1][1] and _has_evidence(lines[i]):
            runs[-1] = (runs[-1][0], True)
    titled = [(i, ev) for i, ev in runs if i >= 0]
    if any(ev for _, ev in titled):
        for i, ev in titled:
            if not ev:
                kinds[i] = "body"


def segment_document(text: str, dropped: list[dict]) -> dict:
    """Sections and context of one document.

    Args:
        text: the decoded document text.
        dropped: spans from :func:`pipeline.clean.find_dropped`.

    Returns:
        dict with ``sections`` (list of dicts with the keys of :data:`SECTION_FIELDS`; offsets
        are characters into ``text``, ``text`` is the section's slice without dropped spans),
        ``context`` (list of ``{char_start, char_end, kind}``, kind in ``headline``, ``lead``,
        ``award_header``, ``award_intro``, ``reference``, ``trailer``), ``doc_venue`` (str or
        None), ``doc_year`` (int or None), ``doc_urls`` (list of str).
    """
    lines = _kept_lines(text, dropped)
    kinds = []
    for line in lines:
        s = plain(line.text)
        kv = parse_key_value(s)
        if _NUMBERED_HEADING.match(s):
            kinds.append("numbered")
        elif kv is not None and kv[0] == "reference_url":
            kinds.append("reference")
        elif _is_award_header(s):
            kinds.append("award_header")
        elif _is_title_line(s):
            kinds.append("title")
        else:
            kinds.append("body")
    anchor_kind = "numbered" if "numbered" in kinds else "title"
    if anchor_kind == "title":
        _demote_unsupported_titles(lines, kinds)

    sections: list[dict] = []
    context: list[dict] = []
    doc_urls: list[str] = []
    current: list[Line] | None = None
    award_raw: str | None = None
    state = "lead"  # what non-section lines are, before the first anchor / after a header

    def close() -> None:
        nonlocal current
        if current:
            start, end = trim_span(text, current[0].start, current[-1].end)
            sections.append({
                "ordinal": len(sections),
                "char_start": start,
                "char_end": end,
                "heading": current[0].stripped,
                "text": _cut(text, start, end, dropped),
                "ctx_award_raw": award_raw,
            })
        current = None

    def add_context(line: Line, kind: str) -> None:
        start, end = trim_span(text, line.start, line.end)
        context.append({"char_start": start, "char_end": end, "kind": kind})

    for line, kind in zip(lines, kinds, strict=True):
        if kind == anchor_kind:
            close()
            current = [line]
        elif kind == "award_header":
            close()
            award_raw = line.stripped
            add_context(line, "award_header")
            state = "award_intro"
        elif kind == "reference":
            close()
            add_context(line, "reference")
            doc_urls.extend(u for u in find_urls(line.stripped) if u not in doc_urls)
            state = "trailer"
        elif current is not None:
            current.append(line)
        else:
            add_context(line, "headline" if not context and state == "lead" and not sections else state)
    close()

    venue_counts: Counter = Counter()
    year_counts: Counter = Counter()
    for span in context:
        for venue, year, _, _ in find_venue_years(text[span["char_start"] : span["char_end"]]):
            venue_counts[venue] += 2 if year else 1
            if year:
                year_counts[(venue, year)] += 1
    doc_venue = venue_counts.most_common(1)[0][0] if venue_counts else None
    years = [(n, y) for (v, y), n in year_counts.items() if v == doc_venue]
    doc_year = max(years)[1] if years else None
    return {"sections": sections, "context": context, "doc_venue": doc_venue, "doc_year": doc_year,
            "doc_urls": doc_urls}


def segment_documents(batch: pd.DataFrame, config: Config) -> pd.DataFrame:
    """Stage function: add ``sections``, ``context``, ``doc_venue``, ``doc_year``, ``doc_urls`` and
    the document's script ``lang`` (:func:`pipeline.normalize.detect_script` over its whole text).

    Input columns: ``text`` (str), ``dropped`` (list of span dicts), ``status`` (str).
    Documents whose status is not ``"ok"`` get no sections and no context.
    """
    results = [
        segment_document(text, dropped) if status == "ok"
        else {"sections": [], "context": [], "doc_venue": None, "doc_year": None, "doc_urls": []}
        for text, dropped, status in zip(batch["text"], batch["dropped"], batch["status"], strict=True)
    ]
    out = batch.copy()
    for key in ("sections", "context", "doc_venue", "doc_year", "doc_urls"):
        out[key] = [r[key] for r in results]
    out["lang"] = [detect_script(t) if s == "ok" else None for t, s in zip(batch["text"], batch["status"], strict=True)]
    return out


def explode_sections(documents: pd.DataFrame) -> pd.DataFrame:
    """One row per section: ``section_id``, ``doc_id``, the :data:`SECTION_FIELDS`, ``doc_venue``,
    ``doc_year``.

    ``section_id`` is ``"<doc_id>-<ordinal, 3 digits>"``, stable because ``doc_id`` is a content
    hash and ordinals follow document order.
    """
    rows = []
    for doc in documents.itertuples(index=False):
        for sec in doc.sections:
            rows.append({
                "section_id": f"{doc.doc_id}-{sec['ordinal']:03d}",
                "doc_id": doc.doc_id,
                **sec,
                "doc_venue": doc.doc_venue,
                "doc_year": doc.doc_year,
            })
    return pd.DataFrame(rows, columns=list(EXPLODED_COLUMNS))


STAGE = Stage(
    name="segment",
    fn=segment_documents,
    requires=("doc_id", "text", "dropped", "status"),
    adds=("sections", "context", "doc_venue", "doc_year", "doc_urls", "lang"),
)
