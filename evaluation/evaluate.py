"""Evaluation gate: score the pipeline's segmentation, cleaning and fields on annotated articles.

The real pipeline (:func:`pipeline.runner.run`, default configuration) runs over a fixture folder
(``articles/`` and ``expected/<name>.json``); sections, junk, dropped content and field accuracy are
scored against the annotations and compared with the floors of ``tests/eval_baseline.json`` (the
method of trafilatura's evaluation gate). The fixture format and every score are defined in
docs/evaluation.md.
"""

from __future__ import annotations

import argparse
import codecs
import json
import logging
import math
import os
import re
import sys
import tempfile
import time
import unicodedata
from collections.abc import Callable
from pathlib import Path

import pandas as pd

from pipeline.config import load_config
from pipeline.embed import Embedder
from pipeline.fields import fold_title
from pipeline.normalize import to_script
from pipeline.runner import run

REPO = Path(__file__).resolve().parents[1]
#: The annotated fixtures and the pinned floors (in a source checkout).
DEFAULT_FIXTURES = REPO / "tests" / "fixtures" / "segmentation"
DEFAULT_BASELINE = REPO / "tests" / "eval_baseline.json"
#: Keys of a baseline file: floors of the two rates, ceilings of the two counts.
FLOOR_KEYS = ("section_precision", "section_recall")
CEILING_KEYS = ("max_junk_chars_in_sections", "max_content_chars_dropped")
#: Scores each ceiling bounds.
CEILING_SCORES = {"max_junk_chars_in_sections": "junk_chars_in_sections",
                  "max_content_chars_dropped": "content_chars_dropped"}
#: The seed articles and their gold (``sections_by_file``): ``$PIPELINE_SEEDS`` when set (as for
#: the tests, ``tests/conftest.py``), else the seeds next to the checkout.
DEFAULT_SEEDS = Path(os.environ.get("PIPELINE_SEEDS") or REPO.parent / "shared" / "corpora" / "seeds")
DEFAULT_SEEDS_GOLD = REPO / "tests" / "gold" / "seeds.json"
#: Keys of a baseline file holding per-field floors ({field: floor}) of the fixtures and the seeds.
FIELD_FLOOR_KEYS = ("field_accuracy_fixtures", "field_accuracy_seeds")
#: Keys of an annotation; ``encoding`` names the Python codec of the stored bytes.
ANNOTATION_KEYS = ("sections", "junk", "content", "notes", "fields")
#: Keys of one section's gold fields (docs/evaluation.md).
FIELD_KEYS = ("title", "title_zh", "authors", "authors_truncated", "institutions", "venue", "year", "award",
              "arxiv_id", "arxiv_version", "urls", "url_kinds", "summary_start", "keywords_required")
#: The scored fields, and the output columns each one reads.
FIELD_COLUMNS: dict[str, tuple[str, ...]] = {
    "title": ("title",), "title_zh": ("title_zh",), "authors": ("authors",),
    "authors_truncated": ("authors_truncated",), "institutions": ("institutions",), "venue": ("venue",),
    "year": ("year",), "award": ("award",), "arxiv_id": ("arxiv_id",), "arxiv_version": ("arxiv_version",),
    "urls": ("urls", "url_kinds"), "summary": ("summary",), "keywords": ("keywords",),
}
FIELDS = tuple(FIELD_COLUMNS)
#: Non-whitespace characters of a gold ``summary_start``: enough to pin where the summary starts.
SUMMARY_START_CHARS = 12
#: Most keywords one section's gold may require (only terms an indexer would certainly pick).
MAX_REQUIRED_KEYWORDS = 3
#: Fixture articles are small: bytes per article (per line of a feed), so the gate stays fast.
MIN_ARTICLE_BYTES, MAX_ARTICLE_BYTES = 300, 4096
FEED_SUFFIX = ".jsonl"

_QUOTES = str.maketrans({"\u2018": "'", "\u2019": "'", "\u201c": '"', "\u201d": '"'})


def fold_for_match(s: str) -> str:
    """``s`` NFKC-normalized, curly quotes straightened, all whitespace removed: the form in which
    expected strings are searched in pipeline outputs."""
    return "".join(unicodedata.normalize("NFKC", s).translate(_QUOTES).split())


def title_key(title: object) -> str:
    """The match key of a title: :func:`fold_title` of its Simplified form (``""`` for no title)."""
    if not isinstance(title, str) or not title.strip():
        return ""
    return fold_title(to_script(title, "zh-Hans"))


# ---------------------------------------------------------------------------------------------
# Annotations
# ---------------------------------------------------------------------------------------------


def _article_files(fixtures_dir: Path) -> list[Path]:
    folder = fixtures_dir / "articles"
    return sorted(p for p in folder.iterdir() if p.is_file() and not p.name.startswith("."))


def load_annotations(fixtures_dir: str | Path) -> dict[str, dict]:
    """Expected values per document name (the pipeline's ``source_path``), sorted by name.

    Returns:
        ``{document: {"file": article file name, "sections": [...], "junk": [...],
        "content": [...], "notes": str}}``; a feed gives one entry per annotated line, named
        ``<file>#<line>``.

    Raises:
        FileNotFoundError: an article has no expected file.
    """
    fixtures_dir = Path(fixtures_dir)
    out: dict[str, dict] = {}
    for path in _article_files(fixtures_dir):
        exp_path = fixtures_dir / "expected" / f"{path.name}.json"
        if not exp_path.is_file():
            raise FileNotFoundError(f"article {path} has no expected file {exp_path}")
        annotation = json.loads(exp_path.read_text(encoding="utf-8"))
        per_doc = ({f"{path.name}#{n}": a for n, a in annotation["lines"].items()}
                   if "lines" in annotation else {path.name: annotation})
        for name, a in per_doc.items():
            out[name] = {"file": path.name, **{k: a.get(k, [] if k != "notes" else "") for k in ANNOTATION_KEYS}}
    return dict(sorted(out.items(), key=lambda kv: _natural_key(kv[0])))


def _natural_key(name: str) -> tuple[str, int]:
    base, _, line = name.partition("#")
    return base, int(line) if line.isdigit() else 0


def _decoded_articles(path: Path, annotation: dict) -> tuple[dict[str, str], list[str]]:
    """The text of each document in ``path`` decoded with the codec its annotation declares
    (``{document name: text}``, line endings normalized), and the problems met."""
    codec = annotation.get("encoding")
    try:
        codecs.lookup(codec or "")
    except LookupError:
        return {}, [f"{path.name}: expected file declares no known encoding ({codec!r})"]
    data = path.read_bytes()
    try:
        text = data.decode(codec).lstrip("\ufeff").replace("\r\n", "\n").replace("\r", "\n")
    except UnicodeDecodeError as exc:
        return {}, [f"{path.name}: does not decode as declared {codec}: {exc}"]
    if path.suffix.lower() != FEED_SUFFIX:
        return {path.name: text}, []
    docs, problems = {}, []
    for n, line in enumerate(text.split("\n"), start=1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError as exc:
            problems.append(f"{path.name}#{n}: not JSON: {exc}")
            continue
        if not isinstance(record, dict):
            problems.append(f"{path.name}#{n}: not a JSON object")
            continue
        docs[f"{path.name}#{n}"] = "\n".join(v for v in record.values() if isinstance(v, str))
    return docs, problems


def _gold_title(entry: dict) -> str:
    return entry.get("title") or entry.get("title_zh") or ""


# ---------------------------------------------------------------------------------------------
# Scoring
# ---------------------------------------------------------------------------------------------


def _display_title(section: dict) -> str:
    for key in ("title", "title_zh", "heading"):
        value = section.get(key)
        if isinstance(value, str) and value.strip():
            return value.strip()
    return "(untitled)"


def score_document(expected: dict, sections: list[dict], dropped_texts: list[str], text: str) -> dict:
    """Score one document.

    Args:
        expected: the annotation (``sections``, ``junk``, ``content``).
        sections: the document's sections in order, dicts with ``title``, ``title_zh``, ``text``.
        dropped_texts: the ``text`` of each of the document's dropped spans.
        text: the document's ``text`` (``""`` when it was not read).

    Returns:
        counts (``expected``, ``found``, ``matched``, ``junk_chars``, ``content_chars``,
        ``lost_chars``), the lists behind them (``missed``, ``extra``, ``junk_leaked``,
        ``content_dropped``, ``content_lost``) and ``matches``: for each expected title, the
        index in ``sections`` of the section matched to it, or None.
    """
    want = [title_key(t) for t in expected["sections"]]
    used = [False] * len(want)
    matches: list[int | None] = [None] * len(want)
    extra = []
    for j, sec in enumerate(sections):
        keys = {title_key(sec.get("title")), title_key(sec.get("title_zh"))} - {""}
        hit = next((i for i, k in enumerate(want) if not used[i] and k in keys), None)
        if hit is None:
            extra.append(_display_title(sec))
        else:
            used[hit] = True
            matches[hit] = j
    section_texts = [fold_for_match(s["text"]) for s in sections if isinstance(s.get("text"), str)]
    dropped = [fold_for_match(t) for t in dropped_texts if isinstance(t, str)]
    doc_text = fold_for_match(text or "")
    leaked = [j for j in expected["junk"] if any(fold_for_match(j) in s for s in section_texts)]
    content_dropped = [c for c in expected["content"] if any(fold_for_match(c) in d for d in dropped)]
    lost = [c for c in expected["content"] if fold_for_match(c) not in doc_text]
    return {
        "expected": len(want),
        "found": len(sections),
        "matched": sum(used),
        "missed": [t for t, u in zip(expected["sections"], used, strict=True) if not u],
        "extra": extra,
        "junk_leaked": leaked,
        "junk_chars": sum(len(j) for j in leaked),
        "content_dropped": content_dropped,
        "content_chars": sum(len(c) for c in content_dropped),
        "content_lost": lost,
        "lost_chars": sum(len(c) for c in lost),
        "matches": matches,
    }


# ---------------------------------------------------------------------------------------------
# Field accuracy
# ---------------------------------------------------------------------------------------------


def _absent(value: object) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value))


def fold_value(value: object) -> str | None:
    """A string field for comparison: NFKC, casefolded, whitespace collapsed; None for no value
    (null, NaN, empty)."""
    if _absent(value) or not isinstance(value, str):
        return None
    folded = " ".join(unicodedata.normalize("NFKC", value).casefold().split())
    return folded or None


def _as_list(value: object) -> list:
    """A list column's value as a list (a null is an empty list)."""
    if _absent(value):
        return []
    if isinstance(value, str):
        return [value]
    try:
        return list(value)
    except TypeError:
        return [value]


def _term_in(term: str, keyword: str) -> bool:
    """Whether a required term is covered by a keyword: equal, or inside it (a Chinese term as
    a substring, 视频分割 in 视频分割模型; a Latin term as whole words, "emergent" in "emergent
    abilities" but "gan" not in "organ")."""
    if term == keyword:
        return True
    if re.search(r"[\u3400-\u9fff]", term):
        return term in keyword
    return re.search(rf"(?<![a-z0-9]){re.escape(term)}(?![a-z0-9])", keyword) is not None


def _folded_set(value: object) -> frozenset[str]:
    return frozenset(f for f in (fold_value(v) for v in _as_list(value)) if f is not None)


def _url_pairs(urls: object, kinds: object) -> frozenset[tuple[str | None, str | None]]:
    u, k = _as_list(urls), _as_list(kinds)
    n = max(len(u), len(k))
    u, k = u + [None] * (n - len(u)), k + [None] * (n - len(k))
    return frozenset((fold_value(a), fold_value(b)) for a, b in zip(u, k, strict=True))


def _title_zh(value: object) -> str | None:
    folded = fold_value(value)
    return None if folded is None else fold_value(to_script(folded, "zh-Hans"))


def _year(value: object) -> int | None:
    if _absent(value):
        return None
    try:
        return int(value)
    except (TypeError, ValueError):
        return None


def _truncated(value: object) -> bool | None:
    return None if _absent(value) else bool(value)


def _summary_head(value: object) -> str | None:
    return None if _absent(value) or not isinstance(value, str) else fold_for_match(value)


def field_value(field: str, section: dict) -> object:
    """The value of ``field`` in an output ``section``, in the form it is compared and shown in
    (``urls``: the list of (url, kind) pairs; ``summary``: its first 40 characters)."""
    if field == "urls":
        u, k = _as_list(section.get("urls")), _as_list(section.get("url_kinds"))
        return [list(pair) for pair in zip(u, k + [None] * (len(u) - len(k)), strict=False)]
    value = section.get(field)
    if field in ("authors", "institutions", "keywords"):
        return [str(v) for v in _as_list(value)]
    if field == "year":
        return _year(value)
    if field == "authors_truncated":
        return _truncated(value)
    if field == "summary":
        return None if _absent(value) else str(value)[:40]
    return None if _absent(value) else value


def gold_value(field: str, gold: dict) -> object:
    """The gold of ``field`` as shown in reports (``urls``: (url, kind) pairs)."""
    if field == "urls":
        return [list(pair) for pair in zip(gold["urls"], gold["url_kinds"], strict=True)]
    if field == "summary":
        return gold["summary_start"]
    if field == "keywords":
        return gold["keywords_required"]
    return gold[field]


def field_correct(field: str, gold: dict, section: dict) -> bool:
    """Whether the output ``section`` gets ``field`` right against the ``gold`` fields (the
    comparison rules are in docs/evaluation.md)."""
    got = section.get(field)
    if field in ("title", "venue", "award", "arxiv_id", "arxiv_version"):
        return fold_value(gold[field]) == fold_value(got)
    if field == "title_zh":
        return _title_zh(gold[field]) == _title_zh(got)
    if field == "year":
        return gold["year"] == _year(got)
    if field == "authors_truncated":
        return gold["authors_truncated"] == _truncated(got)
    if field in ("authors", "institutions"):
        return _folded_set(gold[field]) == _folded_set(got)
    if field == "urls":
        return _url_pairs(gold["urls"], gold["url_kinds"]) == _url_pairs(got, section.get("url_kinds"))
    if field == "summary":
        head = _summary_head(got)
        return head is not None and head.startswith(fold_for_match(gold["summary_start"]))
    if field == "keywords":
        got_keywords = _folded_set(got)
        return all(any(_term_in(term, k) for k in got_keywords) for term in _folded_set(gold["keywords_required"]))
    raise KeyError(f"unknown field {field!r}; fields: {list(FIELDS)}")


def score_fields(document: str, titles: list[str], gold: list[dict], matched: list[dict | None],
                 columns: set[str] | frozenset[str]) -> dict:
    """Field accuracy counts of one document.

    Args:
        document: the document name, for the error list.
        titles: the expected section titles.
        gold: the gold fields, one per title.
        matched: the output section matched to each title, or None when the run missed it.
        columns: the columns of the sections table (a field whose column is missing is wrong).

    Returns:
        ``n`` (gold sections), ``correct`` ({field: count}), ``wrong`` (one dict per wrong
        value of a found section with a present column: ``document``, ``title``, ``field``,
        ``gold``, ``got``) and ``unmatched`` (``document``, ``title`` of each missed section).
    """
    present = {f: all(c in columns for c in cols) for f, cols in FIELD_COLUMNS.items()}
    correct = dict.fromkeys(FIELDS, 0)
    wrong, unmatched = [], []
    for title, g, sec in zip(titles, gold, matched, strict=True):
        if sec is None:
            unmatched.append({"document": document, "title": title})
            continue
        for field in FIELDS:
            if not present[field]:
                continue
            if field_correct(field, g, sec):
                correct[field] += 1
            else:
                wrong.append({"document": document, "title": title, "field": field,
                              "gold": gold_value(field, g), "got": field_value(field, sec)})
    return {"n": len(titles), "correct": correct, "wrong": wrong, "unmatched": unmatched}


def field_totals(per_document: list[dict], columns: set[str] | frozenset[str]) -> dict:
    """Sum :func:`score_fields` results: ``field_accuracy`` and ``field_correct`` per field of
    :data:`FIELDS` (accuracy 1.0 when there is no gold section), ``n_field_sections``,
    ``field_wrong``, ``field_unmatched`` and ``missing_field_columns`` (the output columns a
    field needs that the run did not produce)."""
    n = sum(d["n"] for d in per_document)
    correct = {f: sum(d["correct"][f] for d in per_document) for f in FIELDS}
    return {
        "field_accuracy": {f: correct[f] / n if n else 1.0 for f in FIELDS},
        "field_correct": correct,
        "n_field_sections": n,
        "field_wrong": [w for d in per_document for w in d["wrong"]],
        "field_unmatched": [u for d in per_document for u in d["unmatched"]],
        "missing_field_columns": sorted({c for cols in FIELD_COLUMNS.values() for c in cols if c not in columns}),
    }


def _rates(matched: int, found: int, expected: int) -> tuple[float, float, float]:
    precision = matched / found if found else 1.0
    recall = matched / expected if expected else 1.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    return precision, recall, f1


def evaluate(fixtures_dir: str | Path = DEFAULT_FIXTURES, out_dir: str | Path | None = None,
             embedder: Embedder | None = None) -> dict:
    """Run the pipeline (default configuration) on ``<fixtures_dir>/articles`` and score it.

    Args:
        fixtures_dir: folder with ``articles/`` and ``expected/`` (docs/evaluation.md).
        out_dir: where the run writes its outputs; ``None`` = a temporary folder, removed after.
        embedder: a loaded embedder to share (tests pass theirs); ``None`` = built from the config.

    Returns:
        ``section_precision``, ``section_recall``, ``section_f1``, ``n_expected``, ``n_found``,
        ``n_matched``, ``junk_chars_in_sections``, ``content_chars_dropped``,
        ``content_chars_lost``, ``seconds`` (the run), the keys of :func:`field_totals` (field
        accuracy on the annotated sections) and ``documents``: one dict per document
        (``document``, ``file``, ``status``, plus the keys of :func:`score_document`), annotated
        documents first in name order, then any document the run produced without annotation.

    Raises:
        ValueError: an annotation's ``fields`` do not pair with its ``sections``.
    """
    fixtures_dir = Path(fixtures_dir)
    annotations = load_annotations(fixtures_dir)
    config = load_config()
    config.run.quiet = True
    with tempfile.TemporaryDirectory(prefix="eval-") as tmp:
        t0 = time.perf_counter()
        result = run(fixtures_dir / "articles", Path(out_dir) if out_dir is not None else Path(tmp), config,
                     embedder=embedder, progress=False)
        seconds = time.perf_counter() - t0
        frames = dict(result.frames)  # read while the output folder exists
    docs: pd.DataFrame = frames["documents"]
    by_path = {row.source_path: row for row in docs.itertuples(index=False)}
    sections: dict[str, list[dict]] = {}
    for row in frames["sections"].sort_values(["doc_id", "ordinal"]).to_dict("records"):
        sections.setdefault(row["doc_id"], []).append(row)
    dropped: dict[str, list[str]] = {}
    for doc_id, text in zip(frames["dropped"]["doc_id"], frames["dropped"]["text"], strict=True):
        dropped.setdefault(doc_id, []).append(text)

    columns = frozenset(frames["sections"].columns)
    rows, field_rows = [], []
    for name, expected in annotations.items():
        doc = by_path.get(name)
        if doc is not None:
            status, doc_id, text = doc.status, doc.doc_id, doc.text if isinstance(doc.text, str) else ""
        else:  # a feed line the run did not produce: the feed was skipped, or read as one document
            whole = by_path.get(expected["file"])
            status = f"no document (file: {whole.status})" if whole is not None else "no document"
            doc_id, text = None, ""
        found = sections.get(doc_id, [])
        scored = score_document(expected, found, dropped.get(doc_id, []), text)
        rows.append({"document": name, "file": expected["file"], "status": status, **scored})
        if len(expected["fields"]) != len(expected["sections"]):
            raise ValueError(f"{name}: 'fields' has {len(expected['fields'])} entries for "
                             f"{len(expected['sections'])} sections")
        matched = [None if j is None else found[j] for j in scored["matches"]]
        field_rows.append(score_fields(name, expected["sections"], expected["fields"], matched, columns))
    no_annotation = {"sections": [], "junk": [], "content": []}
    for path, doc in by_path.items():
        if path not in annotations and (doc.status == "ok" or sections.get(doc.doc_id)):
            scored = score_document(no_annotation, sections.get(doc.doc_id, []), [], "")
            rows.append({"document": path, "file": path.split("#")[0], "status": f"{doc.status} (no annotation)",
                         **scored})

    n_expected = sum(r["expected"] for r in rows)
    n_found = sum(r["found"] for r in rows)
    n_matched = sum(r["matched"] for r in rows)
    precision, recall, f1 = _rates(n_matched, n_found, n_expected)
    return {
        "section_precision": precision,
        "section_recall": recall,
        "section_f1": f1,
        "n_expected": n_expected,
        "n_found": n_found,
        "n_matched": n_matched,
        "junk_chars_in_sections": sum(r["junk_chars"] for r in rows),
        "content_chars_dropped": sum(r["content_chars"] for r in rows),
        "content_chars_lost": sum(r["lost_chars"] for r in rows),
        "seconds": seconds,
        **field_totals(field_rows, columns),
        "documents": rows,
    }


def evaluate_seeds(seeds_dir: str | Path = DEFAULT_SEEDS, gold_path: str | Path = DEFAULT_SEEDS_GOLD,
                   out_dir: str | Path | None = None, embedder: Embedder | None = None) -> dict:
    """Run the pipeline (default configuration) on the seed articles and score the extracted
    fields against ``gold_path`` (``sections_by_file``), matching sections by title as
    :func:`score_document` does.

    Returns:
        the keys of :func:`field_totals`, ``n_expected`` / ``n_found`` / ``n_matched`` (sections
        of the gold files) and ``seconds`` (the run).
    """
    by_file = json.loads(Path(gold_path).read_text(encoding="utf-8"))["sections_by_file"]
    config = load_config()
    config.run.quiet = True
    with tempfile.TemporaryDirectory(prefix="eval-seeds-") as tmp:
        t0 = time.perf_counter()
        result = run(Path(seeds_dir), Path(out_dir) if out_dir is not None else Path(tmp), config,
                     embedder=embedder, progress=False)
        seconds = time.perf_counter() - t0
        frames = dict(result.frames)  # read while the output folder exists
    doc_ids = dict(zip(frames["documents"]["source_path"], frames["documents"]["doc_id"], strict=True))
    sections: dict[str, list[dict]] = {}
    for row in frames["sections"].sort_values(["doc_id", "ordinal"]).to_dict("records"):
        sections.setdefault(row["doc_id"], []).append(row)
    columns = frozenset(frames["sections"].columns)
    field_rows, n_found, n_matched = [], 0, 0
    for name, entries in by_file.items():
        titles = [_gold_title(e) for e in entries]
        found = sections.get(doc_ids.get(name), [])
        scored = score_document({"sections": titles, "junk": [], "content": []}, found, [], "")
        n_found += len(found)
        n_matched += scored["matched"]
        matched = [None if j is None else found[j] for j in scored["matches"]]
        field_rows.append(score_fields(name, titles, entries, matched, columns))
    return {
        "n_expected": sum(len(e) for e in by_file.values()),
        "n_found": n_found,
        "n_matched": n_matched,
        "seconds": seconds,
        **field_totals(field_rows, columns),
    }


# ---------------------------------------------------------------------------------------------
# Baseline
# ---------------------------------------------------------------------------------------------


def check_baseline(scores: dict, baseline: dict) -> list[str]:
    """Regressions of ``scores`` (:func:`evaluate`'s result, optionally with ``"seeds"``) against
    ``baseline`` (empty list when none); without ``"seeds"`` the seed floors are not checked.

    Raises:
        KeyError: the baseline lacks one of :data:`FLOOR_KEYS` / :data:`CEILING_KEYS` /
            :data:`FIELD_FLOOR_KEYS`.
    """
    failures = []
    for key in FLOOR_KEYS:
        if scores[key] < baseline[key]:
            failures.append(f"{key} {scores[key]:.4f} is below its floor {baseline[key]}")
    for key, score_key in CEILING_SCORES.items():
        if scores[score_key] > baseline[key]:
            failures.append(f"{score_key} {scores[score_key]} is above its ceiling {key} = {baseline[key]}")
    groups = {"field_accuracy_fixtures": scores.get("field_accuracy"),
              "field_accuracy_seeds": (scores.get("seeds") or {}).get("field_accuracy")}
    for key in FIELD_FLOOR_KEYS:
        floors, accuracy = baseline[key], groups[key]
        if accuracy is None and key == "field_accuracy_seeds":
            continue
        for field, floor in floors.items():
            got = (accuracy or {}).get(field)
            if got is None:
                failures.append(f"{key}.{field}: not scored (floor {floor})")
            elif got < floor:
                failures.append(f"{key}.{field} {got:.4f} is below its floor {floor}")
    return failures


def floor2(x: float) -> float:
    """``x`` rounded down to 2 decimals (guarding against 0.29 * 100 = 28.999...)."""
    return math.floor(round(x * 100, 6)) / 100


def baseline_from(scores: dict, reason: str, old: dict | None = None) -> dict:
    """A baseline pinned at ``scores``: floors rounded down to 2 decimals, ceilings at the counts.

    The seed field floors come from ``scores["seeds"]``; without it, from ``old`` (the previous
    baseline), else empty.
    """
    seeds = scores.get("seeds")
    return {
        **{key: floor2(scores[key]) for key in FLOOR_KEYS},
        **{key: int(scores[score_key]) for key, score_key in CEILING_SCORES.items()},
        "field_accuracy_fixtures": {f: floor2(v) for f, v in scores["field_accuracy"].items()},
        "field_accuracy_seeds": ({f: floor2(v) for f, v in seeds["field_accuracy"].items()} if seeds
                                 else dict((old or {}).get("field_accuracy_seeds", {}))),
        "reason": reason,
    }


def loosened(old: dict, new: dict) -> list[str]:
    """The keys on which ``new`` is laxer than ``old`` (a lower floor or a higher ceiling; a
    per-field floor lowered or dropped, named ``<group>.<field>``)."""
    out = [k for k in FLOOR_KEYS if k in old and new[k] < old[k]]
    out += [k for k in CEILING_KEYS if k in old and new[k] > old[k]]
    for key in FIELD_FLOOR_KEYS:
        before, after = old.get(key, {}), new.get(key, {})
        out += [f"{key}.{f}" for f, v in before.items() if f not in after or after[f] < v]
    return out


# ---------------------------------------------------------------------------------------------
# Report
# ---------------------------------------------------------------------------------------------

_NAME_WIDTH = 52


def format_table(scores: dict) -> str:
    """Per document: expected, found and matched sections, junk characters leaked into sections,
    content characters dropped and lost; then the totals and rates."""
    head = f"{'fixture':<{_NAME_WIDTH}} {'exp':>4} {'found':>5} {'match':>5} {'junk':>5} {'drop':>5} {'lost':>5}  status"
    lines = [head, "-" * len(head)]
    for r in scores["documents"]:
        name = r["document"] if len(r["document"]) <= _NAME_WIDTH else r["document"][: _NAME_WIDTH - 1] + "…"
        lines.append(f"{name:<{_NAME_WIDTH}} {r['expected']:>4} {r['found']:>5} {r['matched']:>5} "
                     f"{r['junk_chars']:>5} {r['content_chars']:>5} {r['lost_chars']:>5}  {r['status']}")
    lines.append("-" * len(head))
    lines.append(f"{'total':<{_NAME_WIDTH}} {scores['n_expected']:>4} {scores['n_found']:>5} {scores['n_matched']:>5} "
                 f"{scores['junk_chars_in_sections']:>5} {scores['content_chars_dropped']:>5} "
                 f"{scores['content_chars_lost']:>5}")
    lines.append(f"section precision {scores['section_precision']:.4f}  recall {scores['section_recall']:.4f}  "
                 f"F1 {scores['section_f1']:.4f}  |  junk chars in sections {scores['junk_chars_in_sections']}  "
                 f"content chars dropped {scores['content_chars_dropped']}  (lost {scores['content_chars_lost']})  "
                 f"|  run {scores['seconds']:.1f} s")
    return "\n".join(lines)


def format_failures(scores: dict) -> str:
    """Per document, what went wrong: missed and extra sections, leaked junk, dropped and lost content."""
    labels = (("missed", "missed section"), ("extra", "extra section"), ("junk_leaked", "junk in a section"),
              ("content_dropped", "content dropped"), ("content_lost", "content lost"))
    lines = []
    for r in scores["documents"]:
        items = [f"    {label}: {value}" for key, label in labels for value in r[key]]
        if items:
            lines += [f"  {r['document']} [{r['status']}]", *items]
    return "Per-fixture failures\n" + ("\n".join(lines) if lines else "  none")


def _accuracy_cell(result: dict | None, field: str) -> str:
    if result is None:
        return "not run"
    missing = [c for c in FIELD_COLUMNS[field] if c in result["missing_field_columns"]]
    if missing:
        return f"missing ({', '.join(missing)})"
    n = result["n_field_sections"]
    return f"{result['field_accuracy'][field]:.4f} ({result['field_correct'][field]}/{n})"


def format_field_table(scores: dict) -> str:
    """Accuracy of each field on the fixtures and on the seeds (``scores["seeds"]``, when run)."""
    seeds = scores.get("seeds")
    head = f"{'field':<18} {'fixtures':<22} {'seeds':<22}"
    lines = [head, "-" * len(head)]
    lines += [f"{f:<18} {_accuracy_cell(scores, f):<22} {_accuracy_cell(seeds, f):<22}" for f in FIELDS]
    lines.append("-" * len(head))
    seeds_found = f"{seeds['n_matched']}/{seeds['n_expected']}" if seeds else "not run"
    lines.append(f"gold sections found: fixtures {scores['n_matched']}/{scores['n_expected']}, seeds {seeds_found}"
                 "  (a gold section not found is wrong in every field)")
    return "\n".join(lines)


def _show(value: object) -> str:
    return json.dumps(value, ensure_ascii=False)


def format_field_errors(scores: dict) -> str:
    """Every wrong field value (gold vs got, with the section title), fixtures then seeds; the
    gold sections not found; the output columns missing."""
    lines = []
    for label, result in (("fixtures", scores), ("seeds", scores.get("seeds"))):
        if result is None:
            continue
        lines.append(f"  {label}:")
        if result["missing_field_columns"]:
            lines.append(f"    output columns missing (their fields score 0): {result['missing_field_columns']}")
        lines += [f"    {u['document']}: {u['title']}: section not found (every field wrong)"
                  for u in result["field_unmatched"]]
        lines += [f"    {w['document']}: {w['title']}: {w['field']}: gold {_show(w['gold'])} got {_show(w['got'])}"
                  for w in result["field_wrong"]]
        if len(lines) == 1 or lines[-1] == f"  {label}:":
            lines.append("    none")
    return "Wrong field values\n" + "\n".join(lines)


def write_baseline(path: Path, new: dict, laxer: list[str], reason_given: bool) -> int:
    """Write a baseline file unless it loosens floors without a reason (shared by both gates).

    Args:
        path: the baseline JSON file.
        new: the baseline to write.
        laxer: the floors ``new`` lowers or drops compared with the file's current content.
        reason_given: whether ``--reason`` was given.

    Returns:
        0 when written; 2 (nothing written, message on stderr) when ``laxer`` is non-empty and no
        reason was given.
    """
    if laxer and not reason_given:
        print(f"\nNot written: the new baseline loosens {laxer}; give --reason.", file=sys.stderr)
        return 2
    path.write_text(json.dumps(new, ensure_ascii=False, indent=2) + "\n", encoding="utf-8")
    print(f"\nBaseline written to {path}: {json.dumps(new, ensure_ascii=False)}")
    return 0


def add_baseline_arguments(parser: argparse.ArgumentParser, default: str) -> None:
    """The gates' shared options: ``--baseline``, ``--write-baseline`` (to ``default`` unless
    ``--baseline`` names a file), ``--reason`` and ``--out``."""
    parser.add_argument("--baseline", type=Path, default=None, help="compare with the floors in this JSON file")
    parser.add_argument("--write-baseline", action="store_true",
                        help=f"pin the baseline file (--baseline, default {default}) at the current scores")
    parser.add_argument("--reason", default=None,
                        help="why the baseline changes (required when --write-baseline loosens a floor or ceiling)")
    parser.add_argument("--out", type=Path, default=None, help="keep the run's outputs in this folder")


def baseline_step(path: Path | None, write: bool, reason: str | None, default_reason: str,
                  make: Callable[[str, dict], dict], laxer: Callable[[dict, dict], list[str]],
                  check: Callable[[dict], list[str]], on_regression: Callable[[], None] | None = None) -> int:
    """The ``--baseline`` / ``--write-baseline`` step of a gate's ``main`` (shared by the three gates).

    With ``write``: ``make(reason, old baseline)`` is written to ``path`` by :func:`write_baseline`
    (``laxer(old, new)`` the floors it loosens). Else, with a ``path``: ``check(baseline)`` lists
    the regressions, printed with the verdict; ``on_regression`` runs when there are some.

    Returns:
        the exit code: 0, 1 on a regression, 2 when a loosening baseline lacks a reason.
    """
    if write:
        old = json.loads(path.read_text(encoding="utf-8")) if path.is_file() else {}
        new = make(reason or default_reason, old)
        return write_baseline(path, new, laxer(old, new), bool(reason))
    if path is not None:
        failures = check(json.loads(path.read_text(encoding="utf-8")))
        print(f"\nBaseline {path}: " + ("REGRESSION\n  " + "\n  ".join(failures) if failures else "ok"))
        if failures:
            if on_regression is not None:
                on_regression()
            return 1
    return 0


def main(argv: list[str] | None = None) -> int:
    """``python -m evaluation.evaluate``: print the table; exit 1 on a regression against --baseline,
    2 on a usage error (bad fixtures, a baseline that would loosen without --reason)."""
    parser = argparse.ArgumentParser(prog="python -m evaluation.evaluate", description=__doc__.split("\n")[0])
    parser.add_argument("fixtures", nargs="?", type=Path, default=DEFAULT_FIXTURES,
                        help="folder with articles/ and expected/ (default: tests/fixtures/segmentation)")
    add_baseline_arguments(parser, "tests/eval_baseline.json")
    parser.add_argument("--details", action="store_true", help="also list every miss, extra, leak and drop")
    parser.add_argument("--seeds", type=Path, default=None,
                        help="also score the fields on the seed articles in this folder "
                             "(default: $PIPELINE_SEEDS, else ../shared/corpora/seeds next to the repository, when present)")
    parser.add_argument("--seeds-gold", type=Path, default=DEFAULT_SEEDS_GOLD,
                        help="gold of the seeds (default: tests/gold/seeds.json)")
    args = parser.parse_args(argv)
    from evaluation.gold import validate_fixtures, validate_seed_gold  # (gold reads this module's constants)

    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s", stream=sys.stderr)

    # a folder named by $PIPELINE_SEEDS must be there, as one named by --seeds (a typo would skip the floors)
    named = args.seeds is not None or bool(os.environ.get("PIPELINE_SEEDS"))
    seeds_dir = args.seeds if args.seeds is not None else (DEFAULT_SEEDS if named or DEFAULT_SEEDS.is_dir() else None)
    problems = validate_fixtures(args.fixtures)
    if seeds_dir is not None:
        problems += (validate_seed_gold(seeds_dir, args.seeds_gold) if seeds_dir.is_dir()
                     else [f"--seeds {seeds_dir} is not a folder"])
    if problems:
        print("Fixture annotations are not well-formed:\n  " + "\n  ".join(problems), file=sys.stderr)
        return 2
    scores = evaluate(args.fixtures, args.out)
    if seeds_dir is not None:
        scores["seeds"] = evaluate_seeds(seeds_dir, args.seeds_gold)
    print(format_table(scores))
    print()
    print(format_field_table(scores))
    if seeds_dir is None:
        print(f"(seeds not scored: {DEFAULT_SEEDS} is not here; their floors are not checked)")
    print()
    print(format_field_errors(scores))
    if args.details:
        print()
        print(format_failures(scores))

    baseline_path = args.baseline or (DEFAULT_BASELINE if args.write_baseline else None)
    return baseline_step(baseline_path, args.write_baseline, args.reason,
                         "Pinned at the scores of the current pipeline (floors rounded down to 2 decimals).",
                         lambda reason, old: baseline_from(scores, reason, old), loosened,
                         lambda baseline: check_baseline(scores, baseline),
                         lambda: print(f"\n{format_failures(scores)}"))

if __name__ == "__main__":
    sys.exit(main())
