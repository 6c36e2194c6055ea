"""Checks of the gold annotations: the fixtures' annotation files (:func:`validate_fixtures`) and
the seeds' field gold (:func:`validate_seed_gold`, :func:`check_field_gold`): shapes, types,
and that each gold value stands in its article."""

from __future__ import annotations

import json
import re
from pathlib import Path

from evaluation.evaluate import (
    ANNOTATION_KEYS,
    FIELD_KEYS,
    MAX_ARTICLE_BYTES,
    MAX_REQUIRED_KEYWORDS,
    MIN_ARTICLE_BYTES,
    SUMMARY_START_CHARS,
    _article_files,
    _decoded_articles,
    _gold_title,
    fold_for_match,
    title_key,
)
from pipeline.fields import AWARDS, VENUES
from pipeline.identifiers import URL_KINDS
from pipeline.normalize import to_script


def _check_annotation(name: str, a: object) -> list[str]:
    if not isinstance(a, dict):
        return [f"{name}: annotation is not an object"]
    problems = []
    unknown = set(a) - {*ANNOTATION_KEYS, "encoding"}
    if unknown:
        problems.append(f"{name}: unknown keys {sorted(unknown)} (known: {[*ANNOTATION_KEYS, 'encoding']})")
    for key in ANNOTATION_KEYS[:3]:
        values = a.get(key)
        if not isinstance(values, list) or not all(isinstance(v, str) and v.strip() for v in values):
            problems.append(f"{name}: {key!r} must be a list of non-empty strings")
        elif len(set(values)) != len(values):
            problems.append(f"{name}: {key!r} lists a string twice")
    if not isinstance(a.get("notes"), str) or not a["notes"].strip():
        problems.append(f"{name}: 'notes' must say what the fixture covers")
    return problems


def validate_fixtures(fixtures_dir: str | Path) -> list[str]:
    """Problems with the fixture annotations (empty list when they are well-formed).

    Checks: every article has an expected file and every expected file an article; each
    expected file is valid JSON with the known keys; the article decodes strictly with the
    declared encoding; every section title, junk string and content string occurs in the
    decoded text of its document; no junk string contains or is contained in a content string;
    a feed's ``lines`` are exactly its non-blank line numbers; each article (each feed line) is
    ``MIN_ARTICLE_BYTES``..``MAX_ARTICLE_BYTES`` bytes; ``fields`` holds one well-formed gold
    object per section (:func:`check_field_gold`).
    """
    fixtures_dir = Path(fixtures_dir)
    if not (fixtures_dir / "articles").is_dir() or not (fixtures_dir / "expected").is_dir():
        return [f"{fixtures_dir} must hold the folders articles/ and expected/"]
    problems: list[str] = []
    articles = {p.name: p for p in _article_files(fixtures_dir)}
    expected = {p.name[: -len(".json")]: p for p in sorted((fixtures_dir / "expected").glob("*.json"))}
    problems += [f"{name}: article without expected/{name}.json" for name in sorted(set(articles) - set(expected))]
    problems += [f"expected/{name}.json: no article {name}" for name in sorted(set(expected) - set(articles))]
    for name in sorted(set(articles) & set(expected)):
        try:
            annotation = json.loads(expected[name].read_text(encoding="utf-8"))
        except (json.JSONDecodeError, UnicodeDecodeError) as exc:
            problems.append(f"expected/{name}.json: not valid JSON: {exc}")
            continue
        texts, found = _decoded_articles(articles[name], annotation if isinstance(annotation, dict) else {})
        problems += found
        if not texts:
            continue
        if "lines" in annotation:
            per_doc = annotation["lines"] if isinstance(annotation["lines"], dict) else {}
            per_doc = {f"{name}#{n}": a for n, a in per_doc.items()}
            if set(per_doc) != set(texts):
                problems.append(f"{name}: annotated lines {sorted(per_doc)} are not the feed's lines {sorted(texts)}")
            if not isinstance(annotation.get("notes"), str) or not annotation["notes"].strip():
                problems.append(f"{name}: 'notes' must say what the fixture covers")
        else:
            per_doc = {name: {k: v for k, v in annotation.items() if k != "encoding"}}
        for doc, a in per_doc.items():
            bad = _check_annotation(doc, a)
            problems += bad
            if bad or doc not in texts:
                continue
            text = texts[doc]
            size = len(text.encode("utf-8")) if doc != name else articles[name].stat().st_size
            if not MIN_ARTICLE_BYTES <= size <= MAX_ARTICLE_BYTES:
                problems.append(f"{doc}: {size} bytes, outside {MIN_ARTICLE_BYTES}..{MAX_ARTICLE_BYTES}")
            for key in ("sections", "junk", "content"):
                problems += [f"{doc}: {key} string not in the article: {s!r}" for s in a[key] if s not in text]
            problems += [f"{doc}: junk {j!r} overlaps content {c!r}"
                         for j in a["junk"] for c in a["content"] if j in c or c in j]
            problems += check_field_gold(doc, a.get("fields"), a["sections"], text)
    return problems


_ARXIV_ID = re.compile(r"\d{4}\.\d{4,5}|[a-z]+(?:-[a-z]+)?(?:\.[A-Z]{2})?/\d{7}")
_ARXIV_VERSION = re.compile(r"v[1-9]\d*")


def _is_text(value: object) -> bool:
    return isinstance(value, str) and bool(value.strip())


def _is_text_list(value: object) -> bool:
    return isinstance(value, list) and all(_is_text(v) for v in value)


def _field_gold_problems(f: dict, title: str, text: str | None) -> list[str]:
    """Problems with one section's gold fields (``f`` has exactly :data:`FIELD_KEYS`)."""
    p = []
    for key in ("title", "title_zh", "venue", "award", "arxiv_id", "arxiv_version"):
        if f[key] is not None and not _is_text(f[key]):
            p.append(f"{key!r} must be a non-empty string or null")
    if not p and title_key(title) not in {title_key(f["title"]), title_key(f["title_zh"])}:
        p.append("the section's title is neither 'title' nor 'title_zh'")
    for key in ("authors", "institutions", "urls", "url_kinds", "keywords_required"):
        if not _is_text_list(f[key]):
            p.append(f"{key!r} must be a list of non-empty strings")
    if not isinstance(f["authors_truncated"], bool):
        p.append("'authors_truncated' must be true or false")
    if f["venue"] not in (None, *VENUES):
        p.append(f"'venue' {f['venue']!r} is not one of {list(VENUES)}")
    year = f["year"]
    if year is not None and (not isinstance(year, int) or isinstance(year, bool) or not 1950 <= year <= 2100):
        p.append(f"'year' {year!r} must be a year (int) or null")
    if f["award"] not in (None, *AWARDS):
        p.append(f"'award' {f['award']!r} is not one of {list(AWARDS)}")
    if _is_text(f["arxiv_id"]) and not _ARXIV_ID.fullmatch(f["arxiv_id"]):
        p.append(f"'arxiv_id' {f['arxiv_id']!r} is not an arXiv id without version")
    if _is_text(f["arxiv_version"]) and not _ARXIV_VERSION.fullmatch(f["arxiv_version"]):
        p.append(f"'arxiv_version' {f['arxiv_version']!r} is not like 'v2'")
    if _is_text_list(f["urls"]) and _is_text_list(f["url_kinds"]):
        if len(f["urls"]) != len(f["url_kinds"]):
            p.append("'url_kinds' must have one kind per URL")
        if len(set(f["urls"])) != len(f["urls"]):
            p.append("'urls' lists a URL twice")
        p += [f"'url_kinds' {k!r} is not one of {list(URL_KINDS)}" for k in f["url_kinds"] if k not in URL_KINDS]
    start = f["summary_start"]
    if not _is_text(start) or len("".join(start.split())) != len(start) or not 1 <= len(start) <= SUMMARY_START_CHARS:
        p.append(f"'summary_start' must be 1..{SUMMARY_START_CHARS} characters without whitespace")
    if _is_text_list(f["keywords_required"]) and not 1 <= len(f["keywords_required"]) <= MAX_REQUIRED_KEYWORDS:
        p.append(f"'keywords_required' must hold 1..{MAX_REQUIRED_KEYWORDS} terms")
    if text is None or p:
        return p
    folded, simplified = fold_for_match(text), to_script(text, "zh-Hans").casefold()
    if fold_for_match(start) not in folded:
        p.append(f"'summary_start' {start!r} is not in the article")
    p += [f"keyword {k!r} is not in the article (zh-Hans)" for k in f["keywords_required"]
          if k.casefold() not in simplified]
    p += [f"URL {u!r} is not in the article" for u in f["urls"]
          if fold_for_match(u.split("://", 1)[-1]) not in folded]
    return p


def check_field_gold(name: str, fields: object, titles: list[str], text: str | None = None) -> list[str]:
    """Problems with the gold ``fields`` of one document (empty list when well-formed).

    Args:
        name: the document, for the messages.
        fields: the gold, one object per title.
        titles: the document's expected section titles.
        text: the document's decoded text; when given, each ``summary_start``, required keyword
            (in zh-Hans) and URL must occur in it.
    """
    if not isinstance(fields, list) or len(fields) != len(titles):
        return [f"{name}: 'fields' must be a list with one object per section ({len(titles)})"]
    problems = []
    for i, (title, f) in enumerate(zip(titles, fields, strict=True)):
        where = f"{name}: fields[{i}] ({title})"
        if not isinstance(f, dict):
            problems.append(f"{where}: not an object")
        elif set(f) != set(FIELD_KEYS):
            problems.append(f"{where}: keys must be {list(FIELD_KEYS)}; missing {sorted(set(FIELD_KEYS) - set(f))}, "
                            f"unknown {sorted(set(f) - set(FIELD_KEYS))}")
        else:
            problems += [f"{where}: {problem}" for problem in _field_gold_problems(f, title, text)]
    return problems


def validate_seed_gold(seeds_dir: str | Path, gold_path: str | Path) -> list[str]:
    """Problems with the seed gold (empty list when well-formed): every file of
    ``sections_by_file`` is a UTF-8 article of ``seeds_dir`` and every section has well-formed
    fields (:func:`check_field_gold`) that occur in its article."""
    seeds_dir, gold_path = Path(seeds_dir), Path(gold_path)
    try:
        by_file = json.loads(gold_path.read_text(encoding="utf-8"))["sections_by_file"]
    except (OSError, json.JSONDecodeError, KeyError, TypeError) as exc:
        return [f"{gold_path}: no readable 'sections_by_file': {exc!r}"]
    problems = []
    for name, entries in by_file.items():
        path = seeds_dir / name
        if not path.is_file():
            problems.append(f"{gold_path.name}: {name} is not in {seeds_dir}")
            continue
        if not isinstance(entries, list) or not all(isinstance(e, dict) for e in entries):
            problems.append(f"{gold_path.name}: {name}: sections must be a list of objects")
            continue
        text = path.read_bytes().decode("utf-8", errors="replace").replace("\r\n", "\n")
        problems += check_field_gold(f"{gold_path.name}: {name}", entries, [_gold_title(e) for e in entries], text)
    return problems
