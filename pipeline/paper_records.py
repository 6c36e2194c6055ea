"""Paper records: a JSONL record or a CSV row whose fields name one paper.

A paper record has a title-like field (:data:`TITLE_FIELDS`, :data:`TITLE_ZH_FIELDS`) holding a
title (a letter, at most :data:`MAX_TITLE_CHARS`) and no article text in :data:`TEXT_FIELDS`
(unless it names a publication: :data:`PUBLICATION_FIELDS`, :data:`PAPER_TITLE_FIELDS`). Field
names match case-insensitively (:func:`field_key`).

Its document yields one section whose fields come from the record (:func:`apply_record`; mapping
in docs/architecture.md, "Input formats"); ``text`` is the record as lines (:func:`render`); the
fields travel as JSON in the internal ``paper_record`` column.
"""

from __future__ import annotations

import datetime
import html
import json
import math
import re
import unicodedata
from pathlib import Path
from typing import Any, NamedTuple

from .candidates import cited_parts
from .fields import find_venue_years, normalize_award
from .identifiers import find_arxiv_ids, find_urls
from .line_kinds import MAX_TITLE_CHARS as PAGE_MAX_TITLE_CHARS
from .names import split_affiliations
from .venue_status import published_venue_years

#: Fields that hold an article's text, in order of preference.
TEXT_FIELDS = ("text", "content", "body", "article")
#: Fields holding an English (or any) title, in order of preference.
TITLE_FIELDS = ("title_en", "title", "paper_title", "name", "论文标题", "論文標題", "标题", "標題", "paper", "论文", "論文")
#: Title fields whose name also labels a paper's link: a link, arXiv id or DOI is no title there.
LINK_OR_TITLE_FIELDS = frozenset({"paper", "论文", "論文"})
_LINK_VALUE = re.compile(
    r"^\s*(?:\S*://|www\.|arxiv\s*:|doi\s*:|\d{4}\.\d{4,5}(?:v\d+)?\s*$|10\.\d{4,9}/\S+\s*$)", re.I)
#: Fields holding a Chinese title.
TITLE_ZH_FIELDS = ("title_zh", "中文标题", "中文標題")
AUTHOR_FIELDS = ("authors", "author", "author_names", "first_author", "作者", "论文作者", "論文作者")
INSTITUTION_FIELDS = ("institutions", "institution", "affiliations", "affiliation", "机构", "機構", "单位", "單位")
ABSTRACT_FIELDS = ("abstract", "摘要", "论文摘要", "論文摘要", "summary")
URL_FIELDS = ("url", "link", "pdf", "pdf_url", "paper_url", "open_access_url", "链接", "鏈接", "連結",
              "论文链接", "論文連結", "论文地址", "論文地址")
VENUE_FIELDS = ("venue", "conference", "conf", "venue_name", "conference_name", "会议", "會議", "journal_ref", "journal-ref",
                "journal", "booktitle", "publisher")
#: Tag-like fields that may name the venue among other things; only a known venue counts there.
VENUE_HINT_FIELDS = ("categories", "category", "tags", "source", "comments", "comment")
YEAR_FIELDS = ("year", "年份")
AWARD_FIELDS = ("award", "奖项", "獎項")
ARXIV_FIELDS = ("arxiv_id", "arxiv")
#: Every field that says a record is about a paper besides its title.
PAPER_FIELDS = (*AUTHOR_FIELDS, *INSTITUTION_FIELDS, *ABSTRACT_FIELDS, *URL_FIELDS, *VENUE_FIELDS,
                *YEAR_FIELDS, *AWARD_FIELDS, *ARXIV_FIELDS, "doi")
#: Title fields that say they hold a paper's title, read first in a record with article text.
PAPER_TITLE_FIELDS = ("paper_title", "paper", "论文标题", "論文標題", "论文", "論文")
#: Fields naming a publication: with one (or a :data:`PAPER_TITLE_FIELDS` title), a record with
#: article text is a paper record too.
PUBLICATION_FIELDS = ("venue", "conference", "会议", "會議", "booktitle", "journal_ref", "journal-ref",
                      *INSTITUTION_FIELDS, *AWARD_FIELDS, *ARXIV_FIELDS, "doi")
#: Longest title a record may give (longer: an error); over ``PAGE_MAX_TITLE_CHARS`` it is kept
#: with a note.
MAX_TITLE_CHARS = 1000
#: The earliest year a record's ``year`` may hold; the latest is next year.
MIN_YEAR = 1950

_HAN = re.compile(r"[\u3400-\u9fff]")
_TAG = re.compile(r"<[^<>]*>")


def _load_venue_names() -> tuple[list[tuple[str, str]], re.Pattern[str]]:
    """``data/venue_names.json``: ``(full name casefolded, short name)`` longest first, and a
    pattern of the words naming no venue."""
    data = json.loads((Path(__file__).resolve().parent / "data" / "venue_names.json").read_text("utf-8"))
    names = sorted(((full.casefold(), short) for short, fulls in data["full_names"].items() for full in fulls),
                   key=lambda p: -len(p[0]))
    words = sorted(data["not_venues"], key=len, reverse=True)
    return names, re.compile("|".join(re.escape(w) for w in words), re.I)


_VENUE_FULL_NAMES, NOT_VENUE_WORDS = _load_venue_names()
#: A venue hint that speaks of a submission, not a publication.
_SUBMITTED = re.compile(r"submitted|submission|under\s+review|投稿|在审|在審", re.I)
#: Separators of names in one string: ", ", ";", " and ", "、", "，" (and "&").
_NAME_SEP = re.compile(r"\s*(?:,\s+|;|；|\s+and\s+|\s+&\s+|、|，)\s*")
_TRUNCATED = re.compile(r"(?:,?\s*et\s+al\.?|\s+and\s+others|\s*等(?:人)?)$", re.I)
#: BibTeX author lists split on " and ", conference exports on ";" (parts "Last, First").
_BIBTEX_AND = re.compile(r",?\s+and\s+|\s*[;；]\s*")
#: Given names that end in an initial (``Kate A.``).
_GIVEN_INITIAL = re.compile(r"(?:^|\s)[A-Z]\.$")
_CLOSING_PERIOD = re.compile(r"(?<=[^\W\d_]{2})\.\s*$")
#: A year as written, spreadsheet exports' "2024.0" included.
_YEAR = re.compile(r"^(\d{4})(?:\.0+)?$")
#: Spreadsheet and dataframe placeholders for an empty cell.
_PLACEHOLDERS = frozenset(("nan", "none", "null", "n/a"))
#: A Markdown backslash escape of ASCII punctuation (``Jones\*``).
_MD_ESCAPE = re.compile(r"\\([!-/:-@\[-`{-~])")
#: Footnote marks before or after a name (``*``, ``†``, superscript digits, ``✉``).
_FOOTNOTE_MARKS = re.compile(r"^[\s*†‡§¶#✉⋆∗⁰¹²³⁴-⁹]+|[\s*†‡§¶#✉⋆∗⁰¹²³⁴-⁹]+$")


class Reading(NamedTuple):
    """:func:`read_record`'s result: ``fields`` (None for no paper record or a rejected one),
    ``error`` (why rejected), ``notes`` (what was left out, for ``notes``)."""

    fields: dict | None
    error: str | None = None
    notes: tuple[str, ...] = ()


def _text(value: Any) -> str | None:
    """A value as one line of text (numbers written out); None when blank, absent, non-finite or
    a placeholder (``nan``, ``null``, ``N/A``)."""
    if value is None or isinstance(value, bool):
        return None
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, int | float):
        return str(int(value)) if isinstance(value, float) and value.is_integer() else str(value)
    if isinstance(value, str):
        text = " ".join(value.split())
        return text if text and text.casefold() not in _PLACEHOLDERS else None
    return None


def values(obj: dict, key: str) -> list[tuple[str, Any]]:
    """``(key as written, value)`` of every non-null field named ``key`` (:func:`field_key`), in order."""
    want = field_key(key)
    return [(str(k), v) for k, v in obj.items() if v is not None and field_key(str(k)) == want]


_KEY_SEPARATORS = re.compile(r"[\s\-.]+")
#: Invisible format characters (Unicode Cf) left in headers by spreadsheets and web copies.
_KEY_FORMAT_CHARS = re.compile("[\u00ad\u200b-\u200f\u202a-\u202e\u2060-\u2064\ufeff]")


#: A name of camel-case words of three letters or more ("PaperTitle", "authorNames"; not "arXiv").
_CAMEL_CASE = re.compile(r"[A-Za-z][a-z]{2,}(?:[A-Z][a-z]{2,})+")


def field_key(name: str) -> str:
    """A field name as matched: NFKC, Cf characters removed, camel case parted, case-folded,
    stripped of spaces and underscores around it ("_title"), spaces, hyphens and dots as ``_``
    (``PaperTitle`` -> ``paper_title``)."""
    name = _KEY_FORMAT_CHARS.sub("", unicodedata.normalize("NFKC", name)).strip().strip("_") or name
    if _CAMEL_CASE.fullmatch(name):
        name = re.sub(r"(?<=[a-z])(?=[A-Z])", "_", name)
    return _KEY_SEPARATORS.sub("_", name.casefold())


def article_text(value: Any) -> str | None:
    """A string as is, a list of strings joined by blank lines (blanks left out); else None."""
    if isinstance(value, str):
        return value
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return "\n\n".join(v.strip() for v in value if v.strip())
    return None


def text_field(obj: dict) -> tuple[str, Any] | None:
    """``(key as written, value)`` of the first :data:`TEXT_FIELDS` field holding non-blank text,
    else the first holding blank text; None when none holds a value."""
    found = [kv for key in TEXT_FIELDS for kv in values(obj, key)]
    for key, value in found:
        text = article_text(value)
        if text is None or text.strip():
            return key, value
    return found[0] if found else None


def _first(obj: dict, keys: tuple[str, ...]) -> str | None:
    for key in keys:
        for _, value in values(obj, key):
            if text := _text(value):
                return text
    return None


def clean_name(name: str) -> str | None:
    """A name without Markdown escapes and surrounding footnote marks, whitespace collapsed; None
    when no letter is left (or a placeholder)."""
    name = _FOOTNOTE_MARKS.sub("", _MD_ESCAPE.sub(r"\1", name))
    name = " ".join(name.split())
    return name if any(c.isalpha() for c in name) and name.casefold() not in _PLACEHOLDERS else None


def _split_names(text: str) -> tuple[list[str], bool]:
    """``(names, truncated)`` from one string: a trailing ``et al.``/``等`` is cut and sets
    ``truncated``; BibTeX-style ``Last, First`` lists (:func:`_last_first_pairs`) give one name per
    pair; anything else splits on :data:`_NAME_SEP` outside brackets."""
    truncated = bool(_TRUNCATED.search(text))
    text = _TRUNCATED.sub("", text)
    pairs = _last_first_pairs(text)
    if pairs is None:
        return [n for p in _split_outside_brackets(text) if (n := clean_name(p))], truncated
    pairs[-1] = _CLOSING_PERIOD.sub("", pairs[-1])  # "Prouvost, Antoine." -> the list's period; an initial's stays
    return [n for p in pairs if (n := clean_name(p))], truncated


def _split_outside_brackets(text: str) -> list[str]:
    """``text`` split on :data:`_NAME_SEP` outside brackets (keeps "A (Univ. X, HK)" whole); with
    an unclosed bracket, on every separator."""
    if "(" not in text and "（" not in text:
        return _NAME_SEP.split(text)
    parts, start, depth, at = [], 0, 0, 0
    for m in _NAME_SEP.finditer(text):
        depth += sum(text.count(o, at, m.start()) for o in "(（") - sum(text.count(c, at, m.start()) for c in ")）")
        depth, at = max(depth, 0), m.start()
        if depth == 0:
            parts.append(text[start:m.start()])
            start = m.end()
    depth += sum(text.count(o, at) for o in "(（") - sum(text.count(c, at) for c in ")）")
    return _NAME_SEP.split(text) if depth > 0 else [*parts, text[start:]]


def _last_first_pairs(text: str) -> list[str] | None:
    """``Last, First`` names of a BibTeX-style list (see :func:`_split_names`), else None."""
    parts = _BIBTEX_AND.split(text.strip())
    pieces = [[q.strip() for q in p.strip().rstrip(",").split(",")] for p in parts]
    if len(parts) < 2:
        if len(pieces[0]) != 2 or not _GIVEN_INITIAL.search(pieces[0][1]):
            return None
    out = []
    for ps in pieces:
        if len(ps) % 2 or any(not q for q in ps):
            return None
        for last, first in zip(ps[::2], ps[1::2], strict=True):
            if len(last.split()) > 2:
                return None
            out.append(f"{last}, {first}")
    return out


def _list_names(key: str, items: list) -> tuple[list[str], list[str]]:
    """``(names, notes)`` from a JSON list: one nesting level flattened, strings and objects'
    ``name``/``full_name``/``author`` taken; anything else dropped with a note."""
    flat = [sub for item in items for sub in (item if isinstance(item, list) else [item])]
    names, dropped = [], []
    for item in flat:
        value = item
        if isinstance(item, dict):
            folded = {str(k).strip().casefold(): v for k, v in item.items()}
            value = next((v for k in ("name", "full_name", "author") if isinstance(v := folded.get(k), str)), None)
        if isinstance(value, str) and not value.strip():
            continue
        name = clean_name(value) if isinstance(value, str) else None
        if name:
            names.append(name)
        else:
            dropped.append(item)
    notes = []
    if dropped:
        shown = ", ".join(json.dumps(d, ensure_ascii=False)[:60] for d in dropped[:5])
        notes.append(f"paper record: field {key!r}: {len(dropped)} item(s) that are no names left out ({shown})")
    return names, notes


def _names(obj: dict, keys: tuple[str, ...]) -> tuple[list[str], bool, list[str]]:
    """``(names, truncated, notes)`` from the first of ``keys`` holding any (list or string)."""
    notes: list[str] = []
    for key in keys:
        for written, value in values(obj, key):
            if isinstance(value, list):
                names, dropped = _list_names(written, value)
                notes += dropped
                if names:
                    return names, False, notes
            elif (text := _text(value)) is not None:
                names, truncated = _split_names(text)
                if names:
                    return names, truncated, notes
    return [], False, notes


def plausible_year(year: int) -> bool:
    """Whether ``year`` may be a paper's: :data:`MIN_YEAR` .. next year."""
    return MIN_YEAR <= year <= datetime.date.today().year + 1


def _year(text: str | None) -> int | None:
    """A year written ``2024`` or ``2024.0`` within :data:`MIN_YEAR` .. next year, else None."""
    found = _YEAR.match(text or "")
    year = int(found.group(1)) if found else None
    return year if year is not None and plausible_year(year) else None


def record_venue(raw: str | None) -> tuple[str | None, int | None]:
    """``(venue, year)`` of a venue field: a full name mapped to its short name
    (``data/venue_names.json``), else the first :data:`pipeline.fields.VENUES` venue named, else
    the value; ``(None, None)`` for preprint servers and report kinds. Year as written by the venue."""
    if not raw:
        return None, None
    raw = raw.replace("_", " ")  # "ICML_2024": a tag's words
    if "://" in raw:  # a link in the venue field ("venue: https://arxiv.org/pdf/…") names no venue
        raw = " ".join(u for u in raw.split() if "://" not in u)
    if not any(c.isalpha() for c in NOT_VENUE_WORDS.sub("", raw)):
        return None, None
    found = find_venue_years(raw)
    if found and not published_venue_years(raw):
        return None, None  # "Submitted to ICLR 2025": a venue the paper was only sent to
    year = _year(str(found[0][1])) if found and found[0][1] else None
    folded = " ".join(raw.split()).casefold()
    for full, short in _VENUE_FULL_NAMES:
        if folded.startswith(full) and not folded[len(full):len(full) + 1].isalpha():
            return short, year
    if found:
        return found[0][0], year
    return raw, None


def _hinted_venue(obj: dict) -> tuple[str | None, int | None]:
    """The first known venue and year in a :data:`VENUE_HINT_FIELDS` field; submissions give none."""
    for key in VENUE_HINT_FIELDS:
        for _, value in values(obj, key):
            for item in value if isinstance(value, list) else [value]:
                text = _text(item)
                if not text or _SUBMITTED.search(text):
                    continue
                found = find_venue_years(text) or find_venue_years(text.upper())
                if found:
                    return found[0][0], _year(str(found[0][1])) if found[0][1] else None
    return None, None


def _article_body(obj: dict) -> tuple[bool, str | None]:
    """``(has article text, text)``: ``(True, None)`` for a text field holding no text (an error)."""
    found = text_field(obj)
    if found is None:
        return False, None
    text = article_text(found[1])
    return text is None or bool(text.strip()), text


def _names_a_publication(obj: dict) -> bool:
    """Whether a :data:`PAPER_TITLE_FIELDS` field holds a title (not a link) or a
    :data:`PUBLICATION_FIELDS` field a value."""
    if any(_text(v) for key in PUBLICATION_FIELDS for _, v in values(obj, key)):
        return True
    return any((text := _text(v)) and not (key in LINK_OR_TITLE_FIELDS and _LINK_VALUE.match(text))
               for key in PAPER_TITLE_FIELDS for _, v in values(obj, key))


def _titles(obj: dict, keys: tuple[str, ...]) -> tuple[list[str], list[tuple[str, str]], str | None]:
    """``(titles, junk, error)`` of ``keys``: titles have a letter; ``junk`` the ``(key, value)``
    without; ``error`` names a value over :data:`MAX_TITLE_CHARS`."""
    titles, junk = [], []
    for key in keys:
        for written, value in values(obj, key):
            text = _text(value)
            if text is None:
                continue
            if key in LINK_OR_TITLE_FIELDS and _LINK_VALUE.match(text):
                continue
            if not any(c.isalpha() for c in text):
                junk.append((written, text))
            elif len(text) > MAX_TITLE_CHARS:
                return [], [], (f"field {written!r} holds a title of {len(text):,} characters, "
                                f"more than {MAX_TITLE_CHARS:,}: no paper title")
            else:
                titles.append(text)
    return titles, junk, None


#: Fields that are no title whatever they hold (a record's own id, a picture's file, a date).
_NOT_TITLE_KEYS = frozenset({"id", "key", "slug", "image", "img", "src", "file", "path", "date", "type", "tags",
                             "category", "categories", "layout", "bibtex", "description", "note", "notes",
                             "comment", "remarks", "news"})


def guessed_title(obj: dict) -> str | None:
    """The title of a record that names its paper under a key no list knows (a site's
    ``alt``/``caption``): the one string value of three words or more, without a link, that is
    no list of names, in a record with an author or venue field; None otherwise."""
    keys = {field_key(str(k)) for k in obj}
    if not keys & {*AUTHOR_FIELDS, *VENUE_FIELDS}:
        return None
    known = {*AUTHOR_FIELDS, *VENUE_FIELDS, *URL_FIELDS, *YEAR_FIELDS, *AWARD_FIELDS, *ARXIV_FIELDS,
             *INSTITUTION_FIELDS, *ABSTRACT_FIELDS, *VENUE_HINT_FIELDS, "doi", *_NOT_TITLE_KEYS}
    found = [v.strip() for k, v in obj.items() if field_key(str(k)) not in known and isinstance(v, str)
             and len(v.split()) >= 3 and "://" not in v and len(v) <= MAX_TITLE_CHARS and not field_key(str(k)).endswith("link")
             and not v.rstrip().endswith((".", "!", "。", "！"))]  # (a sentence is no title)
    return found[0] if len(found) == 1 else None


#: Fields holding a paper's formatted reference.
CITATION_FIELDS = ("citation", "reference", "cite", "bibliography")


def _cited(obj: dict) -> tuple[str, str, str | None] | None:
    """``(title, authors, year)`` of the first formatted reference field
    (:func:`pipeline.candidates.cited_parts`), HTML removed; None without one."""
    for key in CITATION_FIELDS:
        for _, value in values(obj, key):
            text = _text(value)
            cite = " ".join(html.unescape(_TAG.sub(" ", text)).split()) if text else ""
            if cite and (parts := cited_parts(cite)) is not None:
                title, authors, _, year = parts
                return title, authors, str(year) if year else None
    return None


def read_record(obj: dict) -> Reading:
    """The paper fields of a record (docs/architecture.md, "Input formats"). Never raises.

    Returns:
        a :class:`Reading`; ``fields`` has ``title``, ``title_zh``, ``authors`` (list),
        ``authors_truncated``, ``institutions`` (list), ``abstract``, ``urls`` (list), ``venue``,
        ``year`` (int), ``award_raw``, ``arxiv_id``, ``arxiv_version`` (None or empty when absent).
        None for an article or no title; ``error`` set when no title has a letter or one is too
        long. An article naming a publication is read too, its text the abstract when it has none.
    """
    has_text, body = _article_body(obj)
    if has_text and (body is None or not _names_a_publication(obj)):
        return Reading(None)
    title_keys = (*PAPER_TITLE_FIELDS, *(k for k in TITLE_FIELDS if k not in PAPER_TITLE_FIELDS)) if has_text \
        else TITLE_FIELDS
    titles, junk, error = _titles(obj, title_keys)
    zh_titles, zh_junk, zh_error = _titles(obj, TITLE_ZH_FIELDS)
    if error or zh_error:
        return Reading(None, error or zh_error)
    cited = None if titles or zh_titles else _cited(obj)
    if cited is not None:  # a reference-formatted field holds the title: {"citation": "A. 2025. Title. In …"}
        titles = [cited[0]]
        obj = {**obj, "authors": obj.get("authors") or cited[1], "year": obj.get("year") or cited[2]}
    elif not titles and not zh_titles and (guessed := guessed_title(obj)) is not None:
        titles = [guessed]
    title = next((t for t in titles if not _HAN.search(t)), None)
    title_zh = next(iter(zh_titles), None) or next((t for t in titles if _HAN.search(t)), None)
    if title is None and title_zh is None:
        junk += zh_junk
        if junk:
            return Reading(None, f"no paper title: field {junk[0][0]!r} holds {junk[0][1]!r}, which has no letter")
        return Reading(None)
    authors, truncated, notes = _names(obj, AUTHOR_FIELDS)
    notes += [f"paper record: its title of {len(t):,} characters is longer than a title on a page may be "
              f"({PAGE_MAX_TITLE_CHARS}): kept, though it may hold more than the title"
              for t in (title, title_zh) if t and len(t) > PAGE_MAX_TITLE_CHARS]
    institutions, _, more = _names(obj, INSTITUTION_FIELDS)
    notes += more
    authors, affiliations = split_affiliations(authors)  # "Name (University)*": an institution
    institutions = institutions or affiliations
    urls: list[str] = []
    for key in URL_FIELDS:
        for _, value in values(obj, key):
            for item in value if isinstance(value, list) else [value]:
                for url in find_urls(_text(item) or ""):
                    if url not in urls:
                        urls.append(url)
    venue, venue_year = record_venue(_first(obj, VENUE_FIELDS))
    if venue is None:
        venue, venue_year = _hinted_venue(obj)
    year_raw = _first(obj, YEAR_FIELDS)
    year = _year(year_raw)
    if year_raw and year is None:
        notes.append(f"paper record: year {year_raw!r} is no year from {MIN_YEAR} to next year: left out")
    year = year or venue_year
    arxiv = find_arxiv_ids(_first(obj, ARXIV_FIELDS) or "", allow_bare=True)
    arxiv = arxiv or find_arxiv_ids(_first(obj, ("doi",)) or "") or find_arxiv_ids(" ".join(urls))
    abstract = _first(obj, ABSTRACT_FIELDS)
    if has_text:
        notes.append("paper record: the record names its paper beside its text, so it is read as the paper's "
                     "fields" + ("" if abstract else ", the text as its abstract"))
        abstract = abstract or _text(html.unescape(_TAG.sub(" ", body)))  # a feed's text may be HTML
    return Reading({
        "title": title,
        "title_zh": title_zh,
        "authors": authors,
        "authors_truncated": truncated,
        "institutions": institutions,
        "abstract": abstract,
        "urls": urls,
        "venue": venue,
        "year": year,
        "award_raw": _first(obj, AWARD_FIELDS),
        "arxiv_id": arxiv[0][0] if arxiv else None,
        "arxiv_version": arxiv[0][1] if arxiv else None,
    }, None, tuple(notes))


def render(fields: dict) -> str:
    """The record as readable lines, one per field present, abstract last."""
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
    """A paper record's :func:`pipeline.segment.segment_document` result: one section over the
    text, heading the title, no context."""
    from .textutil import trim_span

    fields = json.loads(fields_json)
    start, end = trim_span(text, 0, len(text))
    section = {"ordinal": 0, "char_start": start, "char_end": end,
               "heading": fields["title"] or fields["title_zh"], "text": text[start:end],
               "ctx_award_raw": None, "lead_award_raw": None}
    return {"sections": [section] if end > start else [], "context": [], "doc_venue": fields["venue"],
            "doc_year": fields["year"], "doc_urls": []}


def apply_record(extracted: dict, fields_json: str, target_script: str) -> dict:
    """``extracted`` with every field the record gives replaced; summary the abstract (or None);
    keywords and other URLs stay as extracted."""
    from .identifiers import url_kind
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
