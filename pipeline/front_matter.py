"""A paper's metadata in a Markdown file's YAML front matter, as the fields of its section.

Clean drops a static-site file's YAML front matter as a ``front_matter`` span
(:func:`pipeline.clean.find_dropped`), and segment titles a one-paper page by its ``title``
(:func:`pipeline.clean.front_matter_headline`). When the front matter is a paper's metadata
(:func:`pipeline.clean.front_matter_names_a_paper`: a title with authors, a venue, an arXiv id, a
DOI or a paper link), its fields are read as a paper record's are
(:func:`pipeline.paper_records.read_record`) and given to the page's section about that paper
(:func:`attach`), whose extracted fields they then override where they hold a value
(:func:`apply_front_matter`).

The YAML read is the subset front matter uses, read leniently (a malformed block is still a
writer's metadata): ``key: value`` lines, the value quoted or not (a quote that is never closed
is dropped), a flow list ``[a, "b"]`` (a list that is never closed ends with its line), and a
block list (``key:`` then ``- item`` lines; an item that is a mapping gives its ``name``). Other
nested mappings and multi-line scalars are not read.
"""

from __future__ import annotations

import json
import re

import pandas as pd

from . import paper_records
from .clean import front_matter_names_a_paper
from .normalize import to_target

_KEY_LINE = re.compile(r"^(?P<key>[\w\-\"']+)[ \t]*:(?:[ \t]+(?P<value>.*?))?[ \t]*$")
_ITEM_LINE = re.compile(r"^[ \t]*-[ \t]+(?P<item>.*?)[ \t]*$")
_QUOTES = "\"'"
#: Front-matter keys not read as the paper's: the page's own ``author`` (a static site's writer of
#: the post; a paper's are ``authors``) and the text fields (front matter holds no article).
_NOT_PAPER_KEYS = frozenset({"author", *paper_records.TEXT_FIELDS})


def _scalar(value: str) -> str:
    """A YAML scalar as text: surrounding quotes removed, and a leading quote that is never
    closed; a trailing ``# comment`` after an unquoted value removed."""
    value = value.strip()
    if value[:1] in _QUOTES:
        return unquoted(value)
    return re.sub(r"\s+#.*$", "", value)


def unquoted(value: str) -> str:
    """``value`` without the ASCII quotes around it (``"Title"``), or without a leading quote
    that is never closed (``"Title``); else as it is (``"Word" in a title``)."""
    quote = value[:1]
    if quote not in _QUOTES or not quote:
        return value
    if value.count(quote) == 1:
        return value[1:].strip()
    return value[1:-1].strip() if value.count(quote) == 2 and value.endswith(quote) else value


def flow_list_items(value: str) -> list[str] | None:
    """The items of ``value`` when it is a YAML or JSON flow list of names (``[A, B]``,
    ``["A", "B"]``, or ``[A, B`` never closed); None for anything else (a Markdown link
    ``[A](url)``, brackets inside)."""
    value = value.strip()
    if not value.startswith("[") or "[" in value[1:] or "](" in value or "]" in value[:-1]:
        return None
    return _flow_list(value)


def _flow_list(value: str) -> list[str]:
    """The items of a YAML flow list ``[a, "b, c"]``; a list never closed ends with its line."""
    inner = value.strip()[1:]
    inner = inner[:-1] if inner.endswith("]") else inner
    items = re.findall(r"\"[^\"]*\"?|'[^']*'?|[^,]+", inner)
    return [s for item in items if (s := _scalar(item))]


def _item(text: str) -> str | None:
    """A block list item as text: a scalar, or the ``name`` of an item that is a mapping
    (``- name: A`` then ``affiliation: …``); None for another mapping's first key."""
    found = _KEY_LINE.match(text)
    if found is None:
        return _scalar(text)
    name = _scalar(found.group("key")).casefold()
    return _scalar(found.group("value") or "") if name in ("name", "full_name") else None


def parse_front_matter(block: str) -> dict[str, str | list[str]]:
    """The keys of a YAML front matter block (its ``---`` fences included or not) in the
    subset of the module docstring: key (as written) -> text or list of texts; later keys of the
    same name are left out."""
    out: dict[str, str | list[str]] = {}
    key = None
    for line in block.split("\n"):
        if line.strip() in ("---", "..."):
            continue
        if key is not None and (item := _ITEM_LINE.match(line)):
            value = out.setdefault(key, [])
            if isinstance(value, list) and (text := _item(item.group("item"))):
                value.append(text)
            continue
        if key is not None and line[:1] in (" ", "\t"):
            continue  # the rest of a list item that is a mapping
        found = _KEY_LINE.match(line)
        key = None
        if found is None:
            continue
        name, value = _scalar(found.group("key")), found.group("value") or ""
        if name in out:
            continue
        if not value:
            key = name  # a block list may follow
        elif value.startswith("["):
            out[name] = _flow_list(value)
        else:
            out[name] = _scalar(value)
    return out


def front_matter_fields(dropped: list[dict]) -> str | None:
    """The paper fields (:func:`pipeline.paper_records.read_record`, as the JSON of
    :func:`pipeline.paper_records.dumps`) of a document's front matter that is a paper's
    metadata (its ``author``, the post's writer, left out); None when the document has no such
    front matter or it gives no title."""
    if not front_matter_names_a_paper(dropped):
        return None
    block = next(d["text"] for d in dropped if d["reason"] == "front_matter")
    obj = {k: v for k, v in parse_front_matter(block).items() if k.strip().casefold() not in _NOT_PAPER_KEYS}
    reading = paper_records.read_record(obj)
    return paper_records.dumps(reading.fields) if reading.fields is not None else None


def _folded(text: object) -> str:
    return " ".join(str(text).split()).casefold() if isinstance(text, str) else ""


def attach(sections: pd.DataFrame, documents: pd.DataFrame) -> pd.DataFrame:
    """``sections`` (changed in place: :func:`pipeline.segment.explode_sections` made it) with a
    ``front_matter`` column: the front matter's paper fields (:func:`front_matter_fields`) on the
    section about that paper (a document's one section, else those whose heading holds the front
    matter's title), None elsewhere."""
    fields: dict[object, str] = {}
    if "dropped" in documents:
        for doc_id, dropped in zip(documents["doc_id"], documents["dropped"], strict=True):
            if isinstance(dropped, list) and dropped and (found := front_matter_fields(dropped)) is not None:
                fields[doc_id] = found
    if not fields or not len(sections):
        sections["front_matter"] = None
        return sections
    per_doc = sections["doc_id"].value_counts()
    values = []
    for doc_id, heading in zip(sections["doc_id"], sections["heading"], strict=True):
        found = fields.get(doc_id)
        if found is not None and per_doc[doc_id] > 1:
            record = json.loads(found)
            titles = [t for t in (_folded(record["title"]), _folded(record["title_zh"])) if t]
            found = found if any(t in _folded(heading) for t in titles) else None
        values.append(found)
    sections["front_matter"] = values
    return sections


def apply_front_matter(extracted: dict, fields_json: str, target_script: str) -> dict:
    """``extracted`` (a section's fields) with what its page's front matter gives in their place:
    authors (and their truncation), institutions, venue and year, award, arXiv id; its links
    first among the URLs; its titles when the section has neither."""
    from .fields import normalize_award
    from .identifiers import url_kind

    rec = json.loads(fields_json)
    out = dict(extracted)
    if not out["title"] and not out["title_zh"]:
        out["title"], out["title_zh"] = rec["title"], to_target(rec["title_zh"], target_script)
    if rec["authors"]:
        out["authors"], out["authors_truncated"] = list(rec["authors"]), bool(rec["authors_truncated"])
    if rec["institutions"]:
        out["institutions"] = to_target(list(rec["institutions"]), target_script)
    if rec["venue"]:
        out["venue"], out["year"] = rec["venue"], rec["year"] or (out["year"] if out["venue"] == rec["venue"] else None)
    elif rec["year"]:
        out["year"] = rec["year"]
    if rec["award_raw"]:
        out["award_raw"], out["award"] = rec["award_raw"], normalize_award(rec["award_raw"])
    if rec["arxiv_id"]:
        out["arxiv_id"], out["arxiv_version"] = rec["arxiv_id"], rec["arxiv_version"]
    if rec["urls"]:
        kinds = dict(zip(extracted["urls"], extracted["url_kinds"], strict=True))
        out["urls"] = list(rec["urls"]) + [u for u in extracted["urls"] if u not in rec["urls"]]
        out["url_kinds"] = [kinds.get(u) or url_kind(u, "paper_url") for u in out["urls"]]
    return out
