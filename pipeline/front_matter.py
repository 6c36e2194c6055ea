"""A paper's metadata in a Markdown file's YAML front matter, as the fields of its section.

Clean drops the front matter as a ``front_matter`` span; when it is a paper's metadata
(:func:`pipeline.clean.front_matter_names_a_paper`), its fields are read as a paper record's
(:func:`pipeline.paper_records.read_record`), attached to the page's section about that paper
(:func:`attach`) and override its extracted fields where they hold a value
(:func:`apply_front_matter`).

The YAML subset read, leniently: ``key: value`` lines (quoted or not; an unclosed quote dropped),
flow lists ``[a, "b"]`` (unclosed: ends with its line), block lists (``- item``; a mapping item
gives its ``name``). Other nested mappings and multi-line scalars are not read.
"""

from __future__ import annotations

import json
import re

import pandas as pd
import yaml

from . import paper_records
from .clean import front_matter_names_a_paper
from .formats import YAML_VALUES_PER_CHAR, json_safe
from .normalize import to_target

_KEY_LINE = re.compile(r"^(?P<key>[\w\-\"']+)[ \t]*:(?:[ \t]+(?P<value>.*?))?[ \t]*$")
_ITEM_LINE = re.compile(r"^[ \t]*-[ \t]+(?P<item>.*?)[ \t]*$")
_QUOTES = "\"'"
#: Keys not read as the paper's: the post's own ``author`` (a paper's are ``authors``) and text fields.
_NOT_PAPER_KEYS = frozenset({"author", *paper_records.TEXT_FIELDS})


def _scalar(value: str) -> str:
    """A YAML scalar as text: quotes (and an unclosed leading one) and an unquoted value's trailing
    ``# comment`` removed."""
    value = value.strip()
    if value[:1] in _QUOTES:
        return unquoted(value)
    return re.sub(r"\s+#.*$", "", value)


def unquoted(value: str) -> str:
    """``value`` without surrounding ASCII quotes, or an unclosed leading one; else as is."""
    quote = value[:1]
    if quote not in _QUOTES or not quote:
        return value
    if value.count(quote) == 1:
        return value[1:].strip()
    return value[1:-1].strip() if value.count(quote) == 2 and value.endswith(quote) else value


def flow_list_items(value: str) -> list[str] | None:
    """The items of a flow list of names (``[A, B]``, ``["A", "B"]``, unclosed ``[A, B``); None
    for anything else (a Markdown link, nested brackets)."""
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
    """A block list item: a scalar, or a mapping item's ``name``; None for another mapping key."""
    found = _KEY_LINE.match(text)
    if found is None:
        return _scalar(text)
    name = _scalar(found.group("key")).casefold()
    return _scalar(found.group("value") or "") if name in ("name", "full_name") else None


def parse_front_matter(block: str) -> dict[str, str | list[str]]:
    """A front matter block's keys (fences optional) in the module docstring's subset: key as
    written -> text or list of texts; repeated keys keep the first."""
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


def _front_matter_object(block: str) -> dict:
    """A front matter block read by PyYAML (every scalar a string), a nested mapping that names a
    paper (a review template's ``cite: {title, authors, venue}``) merged over its top level (its
    strings and lists only); the lenient :func:`parse_front_matter` when it is no valid YAML
    mapping (an unquoted colon in a title is common); only its top-level strings when its aliases
    expand to more than ``YAML_VALUES_PER_CHAR`` values per character (a "billion laughs" block)."""
    body = "\n".join(line for line in block.split("\n") if line.strip() not in ("---", "..."))
    try:
        obj = yaml.load(body, Loader=_YAML_LOADER)
    except (yaml.YAMLError, ValueError, RecursionError):
        obj = None
    if not isinstance(obj, dict):
        return parse_front_matter(block)
    try:  # (aliases nested in aliases expand exponentially: the YAML reader's budget)
        obj = json_safe(obj, [YAML_VALUES_PER_CHAR * len(body)])
    except (ValueError, RecursionError):
        return {str(k): v for k, v in obj.items() if isinstance(v, str)}
    for value in list(obj.values()):
        if isinstance(value, dict) and any(paper_records.field_key(str(k)) in _PAPER_NAMING for k in value):
            obj.update({str(k): v for k, v in value.items() if isinstance(v, (str, list)) and v})
    return obj


#: Fields a nested front matter mapping holds when it describes the paper.
_PAPER_NAMING = frozenset(paper_records.TITLE_FIELDS + paper_records.AUTHOR_FIELDS)
#: PyYAML's loader that keeps every scalar a string ("arxiv: 2401.10010" is no float; dates stay text).
_YAML_LOADER = getattr(yaml, "CBaseLoader", yaml.BaseLoader)


def front_matter_fields(dropped: list[dict]) -> str | None:
    """The paper fields (JSON of :func:`pipeline.paper_records.dumps`) of a document's paper
    front matter (``author`` left out); None when none or without a title."""
    if not front_matter_names_a_paper(dropped):
        return None
    block = next(d["text"] for d in dropped if d["reason"] == "front_matter")
    obj = {k: v for k, v in _front_matter_object(block).items() if k.strip().casefold() not in _NOT_PAPER_KEYS}
    reading = paper_records.read_record(obj)
    return paper_records.dumps(reading.fields) if reading.fields is not None else None


def _folded(text: object) -> str:
    return " ".join(str(text).split()).casefold() if isinstance(text, str) else ""


def attach(sections: pd.DataFrame, documents: pd.DataFrame) -> pd.DataFrame:
    """``sections`` (changed in place) with a ``front_matter`` column: the paper fields on the
    section about that paper (a document's only section, else those whose heading holds its
    title), None elsewhere."""
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
    """``extracted`` with the front matter's authors, institutions, venue and year, award and arXiv
    id in their place; its links first among the URLs; its titles when the section has none."""
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
