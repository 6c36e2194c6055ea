"""Paper records: a JSONL record or a CSV row whose fields name one paper.

Contract
--------
A *paper record* is a JSON object (a ``.jsonl`` line) or a CSV row (a dict of its header's
names to its cells) that

* has a title-like field (:data:`TITLE_FIELDS`, :data:`TITLE_ZH_FIELDS`) holding a non-blank
  value, and
* has no article text: none of the text fields (``text``, ``content``, ``body``, ``article``,
  :data:`pipeline.formats.JSONL_TEXT_FIELDS`) holds a non-blank string. A record with article
  text is an article, read as before (its title is document metadata, its text segmented).

A paper record is ONE mention of ONE paper: its document yields exactly one section, whose
fields are read from the record, not guessed from prose (:func:`apply_record`):

==================  =====================================================================
column              from the record
==================  =====================================================================
``title``           the first of ``title_en``, ``title``, ``paper_title``, ``name``,
                    ``论文标题``/``論文標題``, ``标题``/``標題`` whose value has no Chinese character,
                    as given (whitespace collapsed)
``title_zh``        ``title_zh`` (or ``中文标题``/``中文標題``), else the first title-like value
                    that is Chinese; in the target script
``authors``         ``authors``/``author``/``作者``: a JSON list as given (an object item gives
                    its ``name``), a string split on ``, `` ``;`` `` and `` ``、`` ``，``;
                    a trailing ``et al.``/``等`` is cut and sets ``authors_truncated``
``institutions``    ``institutions``/``affiliations``/``机构``/``單位``…, split as authors
``venue``, ``year`` ``venue``/``conference``/``会议``: the canonical venue when one is named
                    (``NeurIPS``), else the value as given; ``year`` from ``year``/``年份``,
                    else the venue's year
``award``           ``award``/``奖项`` (``award_raw`` as given, ``award`` its enum)
``arxiv_id``        ``arxiv_id``/``arxiv`` (a bare id is fine), else an arXiv DOI in ``doi``,
                    else an arXiv link among the URLs
``urls``            ``url``/``link``/``pdf``/``pdf_url``/``paper_url``/``open_access_url``/
                    ``链接``/``论文链接``… first, then any other URL of the section text
``summary``         ``abstract``/``摘要``/``summary`` (cut as other summaries are); none without
==================  =====================================================================

The document's ``text`` is the record written as readable lines (:func:`render`: ``Title:``,
``标题：``, ``Authors:``, ``Affiliations:``, ``Venue:``, ``Award:``, ``arXiv:``, ``Link:``,
``Abstract:``), so keywords, the summary and the embedding read as for any section; its
``raw_text`` is the record as it is in the file. The fields travel from ingest to extract as
JSON in the internal ``paper_record`` column (documents, then sections; never written to the
output tables).
"""

from __future__ import annotations

import json
import re
from typing import Any

from .fields import find_arxiv_ids, find_urls, find_venue_years, normalize_award

#: Fields holding an English (or any) title, in order of preference.
TITLE_FIELDS = ("title_en", "title", "paper_title", "name", "论文标题", "論文標題", "标题", "標題")
#: Fields holding a Chinese title.
TITLE_ZH_FIELDS = ("title_zh", "中文标题", "中文標題")
AUTHOR_FIELDS = ("authors", "author", "作者", "论文作者", "論文作者")
INSTITUTION_FIELDS = ("institutions", "institution", "affiliations", "affiliation", "机构", "機構", "单位", "單位")
ABSTRACT_FIELDS = ("abstract", "摘要", "论文摘要", "論文摘要", "summary")
URL_FIELDS = ("url", "link", "pdf", "pdf_url", "paper_url", "open_access_url", "链接", "鏈接", "連結",
              "论文链接", "論文連結", "论文地址", "論文地址")
VENUE_FIELDS = ("venue", "conference", "会议", "會議")
YEAR_FIELDS = ("year", "年份")
AWARD_FIELDS = ("award", "奖项", "獎項")
ARXIV_FIELDS = ("arxiv_id", "arxiv")
#: Every field that says a record is about a paper besides its title.
PAPER_FIELDS = (*AUTHOR_FIELDS, *INSTITUTION_FIELDS, *ABSTRACT_FIELDS, *URL_FIELDS, *VENUE_FIELDS,
                *YEAR_FIELDS, *AWARD_FIELDS, *ARXIV_FIELDS, "doi")

_HAN = re.compile(r"[\u3400-\u9fff]")
#: Separators of names in one string: ", ", ";", " and ", "、", "，" (and "&").
_NAME_SEP = re.compile(r"\s*(?:,\s+|;|；|\s+and\s+|\s+&\s+|、|，)\s*")
_TRUNCATED = re.compile(r"(?:,?\s*et\s+al\.?|\s*等(?:人)?)$", re.I)
_YEAR = re.compile(r"^(?:19|20)\d\d$")


def _text(value: Any) -> str | None:
    """A field's value as one line of text (numbers written out), or None when blank/absent."""
    if value is None or isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        return str(int(value)) if isinstance(value, float) and value.is_integer() else str(value)
    if isinstance(value, str):
        return " ".join(value.split()) or None
    return None


def _first(obj: dict, keys: tuple[str, ...]) -> str | None:
    folded = {str(k).strip().casefold(): v for k, v in obj.items()}
    for key in keys:
        value = _text(folded.get(key.casefold()))
        if value:
            return value
    return None


def _names(obj: dict, keys: tuple[str, ...]) -> tuple[list[str], bool]:
    """A list of names from the first of ``keys`` present: a JSON list as given, a string split
    on :data:`_NAME_SEP`; ``(names, truncated)``."""
    folded = {str(k).strip().casefold(): v for k, v in obj.items()}
    for key in keys:
        value = folded.get(key.casefold())
        if isinstance(value, list):
            names = [_text(v.get("name") if isinstance(v, dict) else v) for v in value]
            names = [n for n in names if n]
            if names:
                return names, False
        elif (text := _text(value)) is not None:
            truncated = bool(_TRUNCATED.search(text))
            text = _TRUNCATED.sub("", text)
            return [n.strip() for n in _NAME_SEP.split(text) if n.strip()], truncated
    return [], False


def _has_article_text(obj: dict) -> bool:
    from .formats import JSONL_TEXT_FIELDS  # formats imports this module

    return any(isinstance(obj.get(k), str) and obj[k].strip() for k in JSONL_TEXT_FIELDS)


def read_record(obj: dict) -> dict | None:
    """The paper fields of a record (see the module docstring), or None when it is no paper
    record (no title-like field, or article text).

    Returns:
        a dict with ``title``, ``title_zh``, ``authors`` (list), ``authors_truncated``,
        ``institutions`` (list), ``abstract``, ``urls`` (list), ``venue``, ``year`` (int),
        ``award_raw``, ``arxiv_id``; absent values are None (lists empty). Never raises.
    """
    if _has_article_text(obj):
        return None
    titles = [t for k in TITLE_FIELDS if (t := _first(obj, (k,)))]
    title_zh = _first(obj, TITLE_ZH_FIELDS)
    title = next((t for t in titles if not _HAN.search(t)), None)
    if title_zh is None:
        title_zh = next((t for t in titles if _HAN.search(t)), None)
    if title is None and title_zh is None:
        return None
    authors, truncated = _names(obj, AUTHOR_FIELDS)
    institutions, _ = _names(obj, INSTITUTION_FIELDS)
    urls: list[str] = []
    folded = {str(k).strip().casefold(): v for k, v in obj.items()}
    for key in URL_FIELDS:
        value = folded.get(key.casefold())
        for item in value if isinstance(value, list) else [value]:
            for url in find_urls(_text(item) or ""):
                if url not in urls:
                    urls.append(url)
    venue_raw = _first(obj, VENUE_FIELDS)
    venue, venue_year = venue_raw, None
    if venue_raw:
        found = find_venue_years(venue_raw)
        if found:
            venue, venue_year = found[0][0], found[0][1]
    year_raw = _first(obj, YEAR_FIELDS)
    year = int(year_raw) if year_raw and _YEAR.match(year_raw) else venue_year
    arxiv = find_arxiv_ids(_first(obj, ARXIV_FIELDS) or "", allow_bare=True)
    arxiv = arxiv or find_arxiv_ids(_first(obj, ("doi",)) or "") or find_arxiv_ids(" ".join(urls))
    return {
        "title": title,
        "title_zh": title_zh,
        "authors": authors,
        "authors_truncated": truncated,
        "institutions": institutions,
        "abstract": _first(obj, ABSTRACT_FIELDS),
        "urls": urls,
        "venue": venue,
        "year": year,
        "award_raw": _first(obj, AWARD_FIELDS),
        "arxiv_id": arxiv[0][0] if arxiv else None,
        "arxiv_version": arxiv[0][1] if arxiv else None,
    }


def render(fields: dict) -> str:
    """The record as readable lines, one per field present (title, Chinese title, authors,
    affiliations, venue and year, award, arXiv id, links, abstract last)."""
    venue = " ".join(str(v) for v in (fields["venue"], fields["year"]) if v)
    lines = [
        f"Title: {fields['title']}" if fields["title"] else None,
        f"标题：{fields['title_zh']}" if fields["title_zh"] else None,
        "Authors: " + ", ".join(fields["authors"]) + (" et al." if fields["authors_truncated"] else "")
        if fields["authors"] else None,
        "Affiliations: " + "; ".join(fields["institutions"]) if fields["institutions"] else None,
        (f"Venue: {venue}" if fields["venue"] else f"Year: {venue}") if venue else None,
        f"Award: {fields['award_raw']}" if fields["award_raw"] else None,
        f"arXiv: {fields['arxiv_id']}" if fields["arxiv_id"] else None,
        *(f"Link: {u}" for u in fields["urls"]),
        f"Abstract: {fields['abstract']}" if fields["abstract"] else None,
    ]
    return "\n".join(line for line in lines if line)


def dumps(fields: dict) -> str:
    """The fields as the JSON of the ``paper_record`` column."""
    return json.dumps(fields, ensure_ascii=False, sort_keys=True)


def record_section(text: str, fields_json: str) -> dict:
    """What :func:`pipeline.segment.segment_document` returns, for a paper record's document:
    one section over the whole text (heading: the title), no context."""
    from .textutil import trim_span

    fields = json.loads(fields_json)
    start, end = trim_span(text, 0, len(text))
    section = {"ordinal": 0, "char_start": start, "char_end": end,
               "heading": fields["title"] or fields["title_zh"], "text": text[start:end],
               "ctx_award_raw": None, "lead_award_raw": None}
    return {"sections": [section] if end > start else [], "context": [], "doc_venue": fields["venue"],
            "doc_year": fields["year"], "doc_urls": []}


def apply_record(extracted: dict, fields_json: str, target_script: str) -> dict:
    """``extracted`` (the fields :func:`pipeline.extract.extract_fields` read from the section's
    text) with every field the record gives replaced by the record's value; the summary is the
    abstract's (None without one); keywords, URL kinds and other URLs stay as extracted."""
    from .fields import url_kind
    from .normalize import to_target

    rec = json.loads(fields_json)
    out = dict(extracted)
    out["title"] = rec["title"]
    out["title_zh"] = to_target(rec["title_zh"], target_script)
    out["authors"] = list(rec["authors"])
    out["authors_truncated"] = bool(rec["authors_truncated"])
    out["institutions"] = to_target(list(rec["institutions"]), target_script)
    out["venue"], out["year"] = rec["venue"], rec["year"]
    out["award_raw"] = rec["award_raw"]
    out["award"] = normalize_award(rec["award_raw"]) if rec["award_raw"] else None
    if rec["arxiv_id"]:
        out["arxiv_id"], out["arxiv_version"] = rec["arxiv_id"], rec["arxiv_version"]
    if rec["urls"]:
        kinds = dict(zip(extracted["urls"], extracted["url_kinds"], strict=True))
        urls = list(rec["urls"]) + [u for u in extracted["urls"] if u not in rec["urls"]]
        out["urls"] = urls
        out["url_kinds"] = [kinds.get(u) or url_kind(u, "paper_url") for u in urls]
    if not rec["abstract"]:
        out["summary"], out["summary_norm"] = None, None
    return out
