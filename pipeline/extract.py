"""Extract: typed fields of each section (title, authors, institutions, venue, year, award,
arXiv id, URLs, summary, keywords).

Sources, in order of trust:

1. metadata lines of the section (key-value lines such as ``机构：A、B`` or emoji-keyed lines
   such as ``👥 A, B``; :func:`pipeline.fields.parse_key_value`);
2. the section heading (``论文 N：Title``, or a title line with a decoration suffix);
3. the section's prose, where no metadata line gives the field: a bare credit line under the
   title (``A, B and C, Stanford University``; :func:`pipeline.fields.parse_credit_line`), else
   the credit sentence of the first paragraph (``由…共同完成的《…》``, ``…的研究者``, ``X and
   colleagues at Y``; :func:`pipeline.fields.find_credit`); an award given in that paragraph
   (``获得杰出论文奖``; :func:`pipeline.fields.find_stated_award`);
4. the document context: the award header above the section (its label, and its year: ``## ICLR
   2024 Test of Time``), the award the lead gives every paper when there is no header
   (``lead_award_raw``), the venue and year of the document.

A section whose first line is body text (a narrative section anchored at an inline mention, or a
first line that is a sentence, not a title) has its summary start at that line.

Chinese outputs (``title_zh``, ``institutions``, ``summary``, ``keywords``) are written in the
target script; ``title`` keeps the English title as given; ``authors`` keep the script given.

Token-level work is in :mod:`pipeline.nlp`: one ``spacy.blank("zh")`` pipeline with the jieba
segmenter, a sentence splitter that keeps quotes, 《》 and URLs whole (summaries are cut at its
boundaries), and keywords: jieba TF-IDF with a shipped ML-domain user dictionary for Chinese
sections, YAKE for English ones, over the section's topical lines (metadata naming people,
institutions and links left out).
"""

from __future__ import annotations

import re

import pandas as pd

from . import nlp
from .config import Config
from .fields import (
    find_arxiv_ids,
    find_award_label,
    find_credit,
    find_stated_award,
    find_urls,
    find_venue_years,
    is_institution,
    normalize_award,
    parse_credit_line,
    parse_key_value,
    split_affiliation,
    split_names,
    url_kind,
)
from .headings import BILINGUAL, BOOK_TITLE, ENUMERATION_PREFIX_RE, NUMBERED_PREFIX_RE
from .normalize import to_target
from .stage import Stage, records
from .textutil import plain

EXTRACT_COLUMNS = (
    "title", "title_zh", "authors", "authors_truncated", "institutions", "venue", "year", "award",
    "award_raw", "arxiv_id", "arxiv_version", "urls", "url_kinds", "summary", "summary_norm", "keywords",
)

#: Longest headline decoration, in characters: a label such as 深度解析, 一文读懂, 全文翻译,
#: 论文解读, 精读 or 深度簡介 (2-6 characters in practice; 8 leaves room for 论文深度解读).
MAX_DECORATION_CHARS = 8
_DECORATION_SEP = r"[\s:：|｜丨/／—–\-·•]"
# An English title with a short Chinese-only label after it ("Title 深度解析", "Title | 全文翻译")
# or before it ("一文读懂：Title", "【论文精读】Title", "[深度解读] Title"). The label is recognised
# by its shape (short, Chinese only, set off by a separator or brackets), never by a word list,
# so unseen labels go too; a Chinese *title* is never removed because the other side must be an
# English title (a Latin letter and no Chinese character).
_DECORATION = re.compile(
    rf"^(?P<title>[^\u3400-\u9fff]*[A-Za-z][^\u3400-\u9fff]*?)(?:{_DECORATION_SEP}+|(?=[【\[（(]))"
    rf"[【\[（(]?[\u3400-\u9fff]{{1,{MAX_DECORATION_CHARS}}}[】\]）)]?$"
)
_LEADING_DECORATION = re.compile(
    rf"^(?:[【\[][\u3400-\u9fff]{{1,{MAX_DECORATION_CHARS}}}[】\]]{_DECORATION_SEP}*"
    rf"|[\u3400-\u9fff]{{1,{MAX_DECORATION_CHARS}}}{_DECORATION_SEP}*[:：|｜丨—–]{_DECORATION_SEP}*)"
    r"(?P<title>[^\u3400-\u9fff]*[A-Za-z][^\u3400-\u9fff]*)$"
)
_QUOTED = re.compile(r"[“\"](?P<inner>[^“”\"]+)[”\"]")
_ZH_SENTENCE = re.compile(r"[。，；！？]")
#: Longest Chinese title, in characters; a longer heading text is a sentence, not a title.
MAX_TITLE_ZH_CHARS = 60
_KEY_ONLY = re.compile(r"^(?P<key>[^：:]{1,12}?)\s*[：:]$")
_HAS_CJK = re.compile(r"[\u3400-\u9fff]")
_HAS_LATIN = re.compile(r"[A-Za-z]{2,}")
_SUBHEADING_MAX_CHARS = 20
_SENTENCE_PUNCT = re.compile(r"[。！？!?.；;：:]")
#: Words that never make a keyword (re-exported from :mod:`pipeline.nlp`).
GENERIC_WORDS = nlp.ZH_GENERIC_WORDS


def _nlp():
    """The shared Chinese spaCy pipeline (:func:`pipeline.nlp.zh_nlp`: jieba segmenter, the
    paper-aware sentence splitter, the entity patterns), built once per process."""
    return nlp.zh_nlp()


def split_heading_title(heading: str) -> tuple[str | None, str | None]:
    """``(title, title_zh)`` from a section heading.

    Removes Markdown/bold markup, a numbered-heading prefix (``论文 N：``), an enumeration
    prefix (``1.``, ``一、``, ``（一）``), a metadata key (``论文标题：``), book-title marks
    (``《…》``) and a trailing Chinese decoration after an English title (a short CJK-only run such
    as a "deep dive" label). A heading ``中文（English）`` or ``English（中文）`` gives both titles;
    a Chinese-only heading gives only ``title_zh``.
    """
    h = plain(heading)
    kv = parse_key_value(h)
    if kv is not None and kv[0] == "title":
        h = kv[1]
    h = ENUMERATION_PREFIX_RE.sub("", NUMBERED_PREFIX_RE.sub("", h.strip())).strip()
    quoted = _QUOTED.fullmatch(h)
    if quoted:
        h = quoted.group("inner").strip()
    book = BOOK_TITLE.fullmatch(h)
    if book:
        inner, gloss = book.group("inner").strip(), (book.group("gloss") or "").strip()
        if gloss and _HAS_CJK.search(gloss) and not _HAS_CJK.search(inner):
            return inner, gloss
        if gloss and _HAS_CJK.search(inner) and not _HAS_CJK.search(gloss) and _HAS_LATIN.search(gloss):
            return gloss, inner
        h = inner
    if not h:
        return None, None
    m = BILINGUAL.fullmatch(h)
    if m:
        a, b = m.group("a").strip(), m.group("b").strip()
        if _HAS_CJK.search(a) and not _HAS_CJK.search(b) and _HAS_LATIN.search(b):
            return b, a
        if _HAS_CJK.search(b) and not _HAS_CJK.search(a) and _HAS_LATIN.search(a):
            return a, b
    m = _DECORATION.match(h) or _LEADING_DECORATION.match(h)
    if m:
        return m.group("title").strip(" \t:：|｜丨—–-"), None
    if not _HAS_CJK.search(h):
        return h, None
    if _ZH_SENTENCE.search(h) or len(h) > MAX_TITLE_ZH_CHARS:
        return None, None  # a sentence (the first line of a body), not a title
    if not _HAS_LATIN.search(h):
        return None, h
    return h, None


def _first_line_is_body(first: str, heading: str) -> bool:
    """Whether a section's first line is body text rather than its heading: the section was
    anchored at an inline mention (its heading is the mention, not the line), or the line reads
    as a sentence, not a title (see :func:`split_heading_title`) and is no metadata line."""
    if plain(heading).strip() != first.strip():
        return True
    return parse_key_value(first) is None and split_heading_title(first) == (None, None)


def _summary(body_lines: list[str], kv_summary: str | None, max_chars: int) -> str | None:
    """The abstract when a summary key is given, else the first body paragraphs, cut at a sentence
    boundary at most ``max_chars`` characters long (the first sentence is kept whole)."""
    if kv_summary:
        # the summary key's own line and the body paragraphs after it
        parts = [kv_summary, *body_lines]
    else:
        parts = [ln for ln in body_lines if len(ln) > _SUBHEADING_MAX_CHARS or _SENTENCE_PUNCT.search(ln)]
    text = "\n".join(p for p in parts if p).strip()
    if not text:
        return None
    if len(text) <= max_chars:
        return text
    doc = _nlp()(text[: max_chars * 2])
    out = ""
    for sent in doc.sents:
        if out and len(out) + len(sent.text_with_ws) > max_chars:
            break
        out += sent.text_with_ws
    return out.strip()


def extract_fields(row: dict, target_script: str, config: Config) -> dict:
    """Fields of one section.

    Args:
        row: a section with ``heading``, ``text``, ``ctx_award_raw``, ``doc_venue``,
            ``doc_year``.
        target_script: one of :data:`pipeline.config.TARGET_SCRIPTS`.

    Returns:
        dict with the keys of :data:`EXTRACT_COLUMNS`; lists are lists of str, ``year`` an int
        or None, ``award`` one of :data:`pipeline.fields.AWARDS` or None.
    """
    lines = [plain(ln) for ln in row["text"].split("\n") if ln.strip()]
    kv: dict[str, list[str]] = {}
    body: list[str] = []
    summary_from: int | None = None
    first = 0 if lines and _first_line_is_body(lines[0], row["heading"]) else 1
    for ln in lines[first:]:
        parsed = parse_key_value(ln)
        if parsed is None:
            label = _KEY_ONLY.match(ln)
            if label and parse_key_value(f"{label.group('key')}：x") == ("summary", "x"):
                summary_from = len(body) if summary_from is None else summary_from
            elif re.fullmatch(r"[-—=*_·•\s]+", ln) or not (len(ln) > 6 or _SENTENCE_PUNCT.search(ln)):
                # a rule line, or a short label that names a block (e.g. "paper info"): not body
                continue
            else:
                body.append(ln)
            continue
        key, value = parsed
        kv.setdefault(key, []).append(value)
        if key == "summary" and summary_from is None:
            summary_from = len(body)

    title, title_zh = split_heading_title(row["heading"])
    if kv.get("title"):
        kv_title, kv_title_zh = split_heading_title(kv["title"][0])
        title = kv_title or title
        title_zh = kv_title_zh or title_zh

    authors, truncated = [], False
    institutions: list[str] = []
    for value in kv.get("institutions", [])[:1]:
        institutions, _ = split_names(value)
    for value in kv.get("authors", [])[:1]:
        # "Authors: A, B and colleagues at DeepMind": people, then their affiliation
        line_credit = parse_credit_line(value)
        if line_credit is not None:
            authors, truncated = list(line_credit.authors), line_credit.truncated
            institutions = institutions or list(line_credit.institutions)
        else:
            authors, truncated = split_names(value)
    for k, author in enumerate(list(authors)):  # "Name (University)": the affiliation is an institution
        name, affiliation = split_affiliation(author)
        if affiliation is not None:
            authors[k] = name
            if affiliation not in institutions:
                institutions.append(affiliation)
    for author in list(authors):  # "Authors: A et al., Stanford University": an affiliation item
        if is_institution(author):
            authors.remove(author)
            if author not in institutions:
                institutions.append(author)

    # credits stated in prose: a bare credit line under the title, else the first paragraph;
    # metadata lines keep priority, field by field
    credit = parse_credit_line(body[0]) if body and summary_from != 0 else None
    if credit is not None:
        body = body[1:]
        summary_from = summary_from - 1 if summary_from else summary_from
    else:
        credit = find_credit(body[0] if body else (kv.get("summary") or [""])[0])
    if credit is not None:
        if not kv.get("authors") and credit.authors:
            authors, truncated = list(credit.authors), credit.truncated
        if not kv.get("institutions") and not institutions:
            institutions = list(credit.institutions)

    award_line = " ".join(kv.get("award", []) + kv.get("venue", []))
    venue, year = None, None
    for v, y, _, _ in find_venue_years(award_line):
        venue, year = v, y
        break
    if year is None and row.get("ctx_award_raw"):  # the award header above: "## ICLR 2024 Test of Time"
        for v, y, _, _ in find_venue_years(row["ctx_award_raw"]):
            if y is not None:
                venue, year = venue or v, y
                break
    venue = venue or row.get("doc_venue")
    year = year or row.get("doc_year")
    award_raw = (
        (find_award_label(award_line) if award_line else None)
        or row.get("ctx_award_raw")
        or (find_stated_award(body[0]) if body else None)
        or row.get("lead_award_raw")
    )
    award = normalize_award(award_raw) if award_raw else None

    link_text = " ".join(kv.get("paper_url", []))
    ids = find_arxiv_ids(link_text, allow_bare=True) or find_arxiv_ids(row["text"])
    arxiv_id, arxiv_version = ids[0] if ids else (None, None)

    summary_lines = body[summary_from:] if summary_from is not None else body
    kv_summary = kv["summary"][0] if kv.get("summary") else None
    summary = _summary(summary_lines, kv_summary, config.extract.summary_max_chars)

    urls = find_urls(row["text"])
    url_keys: dict[str, str] = {}
    for key in ("project_url", "code_url", "paper_url"):
        for value in kv.get(key, []):
            for url in find_urls(value):
                url_keys.setdefault(url, key)
    url_kinds = [url_kind(u, url_keys.get(u)) for u in urls]

    # the topic: every line but the metadata that names people, places and links
    topic_lines = []
    for ln in row["text"].split("\n"):
        parsed = parse_key_value(plain(ln))
        if parsed is None or parsed[0] in ("title", "summary"):
            topic_lines.append(ln if parsed is None else parsed[1])
    keywords = nlp.keywords("\n".join(topic_lines), row.get("lang") or "und", config.extract.n_keywords)

    return {
        "title": title,
        "title_zh": to_target(title_zh, target_script),
        "authors": authors,
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


def extract_sections(batch: pd.DataFrame, config: Config) -> pd.DataFrame:
    """Stage function: add the :data:`EXTRACT_COLUMNS` to a sections batch.

    Input columns: ``heading``, ``text``, ``ctx_award_raw``, ``doc_venue``, ``doc_year``.
    """
    target = config.normalize.target_script
    rows = [extract_fields(r, target, config) for r in records(batch)]
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
