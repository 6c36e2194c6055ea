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
#: Longest Chinese-only heading text that can be a paper title, in characters.
MAX_ZH_TITLE_CHARS = 40
#: Letters an award header may hold besides its label, venue and year (a counter such as 篇).
MAX_AWARD_HEADER_REST = 1

_NUMBERED_HEADING = re.compile(
    r"^(?:论文|論文|Paper|PAPER|paper)\s*(?:\d+|[一二三四五六七八九十]+)\s*[：:.、]\s*(?P<title>\S.*)$"
)
_MD_HEADING = re.compile(r"^#{1,6}\s+\S")
_BOLD_LINE = re.compile(r"^(?:\*\*|__)(?P<inner>[^*_].*?)(?:\*\*|__)[：:]?$")
_ENUMERATED = re.compile(
    r"^(?:\d{1,2}[.、．]|[一二三四五六七八九十]{1,3}[、．.]|[（(](?:\d{1,2}|[一二三四五六七八九十]{1,3})[）)])\s*(?P<title>\S.*)$"
)
_BOOK_TITLE = re.compile(r"《(?P<inner>[^《》]+)》(?:\s*[（(][^（）()]*[）)])?")
_BILINGUAL_TITLE = re.compile(r"(?P<a>[^（(]+?)\s*[（(](?P<b>[^）)]+)[）)]")
_BOOK_MENTION = re.compile(r"《(?P<inner>[^《》\n]{2,200})》(?:\s*[（(][^（）()\n]{1,120}[）)])?")
_SENTENCE_SPLIT = re.compile(r"(?<=[。！？!?])")
_HAN = re.compile(r"[\u3400-\u9fff]")
_SENTENCE_PUNCT = re.compile(r"[。，；！？,;!?]")
# Words that mark a sentence as talking about a paper (zh-Hans, zh-Hant, en).
_PAPER_CUE = re.compile(
    r"论文|論文|paper|arXiv|作者|一作|第一作者|通讯作者|通訊作者|提出|获奖|獲獎|最佳|杰出|傑出|研究团队|研究團隊",
    re.IGNORECASE,
)
# Words that mark a 《》 as a policy, a book, a film or a news item rather than a paper.
_NOT_PAPER_CUE = re.compile(r"印发|印發|出版社|小说|小說|电影|電影|报道称|報導稱|方案|通知|条例|條例|新闻|新聞|一书|一書")
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
    kv = parse_key_value(s)
    return (kv is not None and kv[0] != "reference_url") or bool(find_arxiv_ids(s))


def _heading_text(s: str) -> str | None:
    """The text of a heading-marked line (Markdown heading, whole-line bold, enumerated
    heading ``1.`` ``一、`` ``（一）`` ``(1)``), or None for an unmarked line."""
    raw = s.strip()
    if _MD_HEADING.match(raw):
        inner = plain(raw)
    elif m := _BOLD_LINE.match(raw):
        inner = m.group("inner").strip()
    elif m := _ENUMERATED.match(plain(raw)):
        return m.group("title").strip()
    else:
        return None
    m = _ENUMERATED.match(inner)  # "## 1. Title", "**一、Title**"
    return m.group("title").strip() if m else inner


def _english_title(t: str) -> bool:
    """Whether ``t`` reads as an English paper title (see :func:`_is_title_line`), also inside a
    bilingual form ``中文（English）`` / ``English（中文）`` or book-title marks ``《English》``."""
    t = t.strip()
    m = _BOOK_TITLE.fullmatch(t)
    if m:
        t = m.group("inner")
    m = _BILINGUAL_TITLE.fullmatch(t)
    if m:
        return any(_is_title_line(part.strip()) for part in (m.group("a"), m.group("b")))
    return _is_title_line(t)


def _chinese_title(t: str) -> bool:
    """A short Chinese heading text with no sentence punctuation (a candidate paper title)."""
    t = t.strip().strip("《》")
    return 0 < len(t) <= MAX_ZH_TITLE_CHARS and bool(_HAN.search(t)) and not _SENTENCE_PUNCT.search(t)


def _classify(lines: list[Line]) -> list[str]:
    """A kind per kept line: ``numbered``, ``reference``, ``award_header``, ``kv_title`` (a
    metadata title line), ``kv`` (another metadata line), ``heading`` (a marked heading whose text
    is an English or bilingual title), ``title`` (an English title alone on a line),
    ``zh_heading`` (a marked heading with a short Chinese text) or ``body``."""
    kinds = []
    for line in lines:
        s = plain(line.text)
        kv = parse_key_value(s)
        marked = _heading_text(line.text)
        if _NUMBERED_HEADING.match(s):
            kinds.append("numbered")
        elif kv is not None and kv[0] == "reference_url":
            kinds.append("reference")
        elif _is_award_header(s) or (marked is not None and _is_award_header(marked)):
            kinds.append("award_header")
        elif kv is not None:
            kinds.append("kv_title" if kv[0] == "title" else "kv")
        elif marked is not None and _english_title(marked):
            kinds.append("heading")
        elif _english_title(s):
            kinds.append("title")
        elif marked is not None and _chinese_title(marked):
            kinds.append("zh_heading")
        else:
            kinds.append("body")
    return kinds


def _runs(kinds: list[str], anchors: set[int]) -> list[tuple[int, list[int]]]:
    """Each anchor with the indices of the lines of its section (up to the next anchor, award
    header or reference line)."""
    runs: list[tuple[int, list[int]]] = []
    for i, kind in enumerate(kinds):
        if i in anchors:
            runs.append((i, []))
        elif kind in ("award_header", "reference"):
            runs.append((-1, []))
        elif runs:
            runs[-1][1].append(i)
    return [r for r in runs if r[0] >= 0]


def choose_anchors(lines: list[Line], kinds: list[str]) -> dict[int, str | None]:
    """The lines that start a section, mapped to a heading override (None: the line itself).

    Layouts, tried in order (the first that finds any paper wins):

    1. numbered paper headings (``论文 N：``): the only anchors when present;
    2. marked headings (Markdown, bold, ``1.``/``一、``/``（一）``) and English title lines. When
       some of their sections carry paper evidence (a metadata line, an arXiv id), those without
       are demoted (a headline or a sub-heading that merely looks like a title); a heading with a
       Chinese-only text is a paper only with evidence of its own;
    3. metadata blocks that open with a title line (``论文标题：``, ``Title:``, ``📄``), the body
       after them (metadata before the body);
    4. narrative articles: paragraphs that name a paper inline in book-title marks
       (``《Title》``) in a sentence with a paper cue word (:func:`find_paper_mention`); the
       section heading is the mention.
    """
    if "numbered" in kinds:
        return {i: None for i, k in enumerate(kinds) if k == "numbered"}
    candidates = {i for i, k in enumerate(kinds) if k in ("heading", "title", "zh_heading")}
    evidence = {i: any(_has_evidence(lines[j]) for j in members) for i, members in _runs(kinds, candidates)}
    if any(evidence.values()):
        anchors = {i for i in candidates if evidence.get(i)}
    else:
        anchors = {i for i in candidates if kinds[i] != "zh_heading"}
    if anchors:
        return dict.fromkeys(sorted(anchors))
    metadata = _metadata_anchors(lines, kinds)
    if metadata:
        return metadata
    narrative: dict[int, str | None] = {}
    for i, line in enumerate(lines):
        if kinds[i] == "body":
            mention = find_paper_mention(line.text)
            if mention:
                narrative[i] = mention
    return narrative


def _metadata_anchors(lines: list[Line], kinds: list[str]) -> dict[int, str | None]:
    """Anchors of articles whose papers are marked only by metadata blocks with a title line.

    When more body text follows the last block than precedes the first one (after the
    headline), metadata comes *before* each body: a section starts at each block. Otherwise
    metadata comes *after* each body: a section runs from the line after the previous block (for
    the first, the line after the headline) to the end of its block.
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
        return sum(len(lines[k].stripped) for k in indices if kinds[k] == "body")

    if body_chars(range(blocks[-1][1] + 1, len(kinds))) > body_chars(range(first, blocks[0][0])):
        return dict.fromkeys(start for start, _ in blocks)
    starts = [first] + [end + 1 for _, end in blocks[:-1]]
    return {i: None for i in starts if i < len(kinds) and kinds[i] not in ("award_header", "reference")}


def find_paper_mention(paragraph: str) -> str | None:
    """The first inline paper mention of a paragraph: a ``《...》`` title (with the ``（...）`` gloss
    that follows it, if any) in a sentence that also holds a paper cue word, or whose inner text
    is an English title. A 《》 that names a policy, a book, a film or a news item (a sentence
    with such a cue and no English title) is not a mention.
    """
    for sentence in _SENTENCE_SPLIT.split(paragraph):
        for m in _BOOK_MENTION.finditer(sentence):
            english = _english_title(m.group("inner"))
            if not english and (not _PAPER_CUE.search(sentence) or _NOT_PAPER_CUE.search(sentence)):
                continue
            return m.group(0).strip()
    return None


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
    kinds = _classify(lines)
    anchors = choose_anchors(lines, kinds)

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
                "heading": heading or current[0].stripped,
                "text": _cut(text, start, end, dropped),
                "ctx_award_raw": award_raw,
            })
        current = None

    def add_context(line: Line, kind: str) -> None:
        start, end = trim_span(text, line.start, line.end)
        context.append({"char_start": start, "char_end": end, "kind": kind})

    heading = None
    for i, (line, kind) in enumerate(zip(lines, kinds, strict=True)):
        if i in anchors:
            close()
            current = [line]
            heading = anchors[i]
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
