"""Evaluation gate: score the pipeline's segmentation and cleaning on annotated fixture articles.

Method: trafilatura's evaluation gate (``tests/eval_gate.py`` with its annotated ``evaldata.json``
and pinned floors): every fixture article carries hand-written expectations, the real pipeline
(:func:`pipeline.runner.run`, default configuration) runs over the fixture folder, the outputs are
scored against the expectations, and the scores are compared with floors pinned in a baseline
file (``tests/eval_baseline.json``). Raising a floor is easy; lowering one needs a stated reason.
As in trafilatura's scorer, expected strings are matched as substrings, deterministically; here
both sides are first NFKC-folded (full-width forms, ideographic space), curly quotes are
straightened and all whitespace is removed, so the score does not depend on how ingest or
HTML extraction spaces or normalizes the text.

Fixture layout (``FIXTURES``, by default ``tests/fixtures/segmentation``)::

    articles/<name>               the exact bytes a scraper saved (.txt, .md, .html, .jsonl, any encoding)
    expected/<name>.json          {"sections": [...], "junk": [...], "content": [...], "notes": "...",
                                   "encoding": "<codec the bytes are stored in>"}

``sections`` are the paper titles in document order (the English title, or the Chinese title
when the article gives none); ``junk`` are exact substrings that must end up in dropped spans,
never in a section; ``content`` are exact substrings of article content that must not be
dropped. A JSON Lines feed is annotated per line: ``{"lines": {"1": {...}, "2": {...}}, "notes":
..., "encoding": ...}``, line numbers from 1, matching the documents ``<name>#<line>``.

Scores (counted per document, summed over documents: micro-averages):

* **section precision / recall**: a section the pipeline found matches an expected title when
  :func:`pipeline.fields.fold_title` of its ``title`` or of its ``title_zh`` (both converted to
  Simplified with :func:`pipeline.normalize.to_script`) equals the expected title's key; each
  expected title is matched at most once, greedily in document order. Precision is 1.0 when
  nothing was found (then recall tells). Sections of a document without annotation count as
  found and unmatched.
* **junk characters in sections**: the summed length of the junk strings found inside any
  section ``text`` of their document.
* **content characters dropped**: the summed length of the content strings found inside any
  dropped span ``text`` of their document.
* informational, not gated: **content characters lost** (content strings found nowhere in the
  document's ``text``, e.g. removed by HTML extraction or a failed decode).

Command line: ``python -m pipeline.evaluate [FIXTURES] [--baseline FILE] [--write-baseline]``
prints a per-fixture table and the totals; with ``--baseline`` it exits 1 when a score falls
below its floor or a count rises above its ceiling.
"""

from __future__ import annotations

import argparse
import codecs
import json
import logging
import math
import sys
import tempfile
import time
import unicodedata
from pathlib import Path

import pandas as pd

from .config import load_config
from .embed import Embedder
from .fields import fold_title
from .normalize import to_script
from .runner import run

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
#: Keys of an annotation; ``encoding`` names the Python codec of the stored bytes.
ANNOTATION_KEYS = ("sections", "junk", "content", "notes")
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
    ``MIN_ARTICLE_BYTES``..``MAX_ARTICLE_BYTES`` bytes.
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
    return problems


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
        ``lost_chars``) and the lists behind them (``missed``, ``extra``, ``junk_leaked``,
        ``content_dropped``, ``content_lost``).
    """
    want = [title_key(t) for t in expected["sections"]]
    used = [False] * len(want)
    extra = []
    for sec in sections:
        keys = {title_key(sec.get("title")), title_key(sec.get("title_zh"))} - {""}
        hit = next((i for i, k in enumerate(want) if not used[i] and k in keys), None)
        if hit is None:
            extra.append(_display_title(sec))
        else:
            used[hit] = True
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
        fixtures_dir: folder with ``articles/`` and ``expected/`` (see the module docstring).
        out_dir: where the run writes its outputs; ``None`` = a temporary folder, removed after.
        embedder: a loaded embedder to share (tests pass theirs); ``None`` = built from the config.

    Returns:
        ``section_precision``, ``section_recall``, ``section_f1``, ``n_expected``, ``n_found``,
        ``n_matched``, ``junk_chars_in_sections``, ``content_chars_dropped``,
        ``content_chars_lost``, ``seconds`` (the run) and ``documents``: one dict per document
        (``document``, ``file``, ``status``, plus the keys of :func:`score_document`), annotated
        documents first in name order, then any document the run produced without annotation.
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
    frames = result.frames
    docs: pd.DataFrame = frames["documents"]
    by_path = {row.source_path: row for row in docs.itertuples(index=False)}
    sections: dict[str, list[dict]] = {}
    for row in frames["sections"].sort_values(["doc_id", "ordinal"]).to_dict("records"):
        sections.setdefault(row["doc_id"], []).append(row)
    dropped: dict[str, list[str]] = {}
    for doc_id, text in zip(frames["dropped"]["doc_id"], frames["dropped"]["text"], strict=True):
        dropped.setdefault(doc_id, []).append(text)

    rows = []
    for name, expected in annotations.items():
        doc = by_path.get(name)
        if doc is not None:
            status, doc_id, text = doc.status, doc.doc_id, doc.text if isinstance(doc.text, str) else ""
        else:  # a feed line the run did not produce: the feed was skipped, or read as one document
            whole = by_path.get(expected["file"])
            status = f"no document (file: {whole.status})" if whole is not None else "no document"
            doc_id, text = None, ""
        scored = score_document(expected, sections.get(doc_id, []), dropped.get(doc_id, []), text)
        rows.append({"document": name, "file": expected["file"], "status": status, **scored})
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
        "documents": rows,
    }


# ---------------------------------------------------------------------------------------------
# Baseline
# ---------------------------------------------------------------------------------------------


def check_baseline(scores: dict, baseline: dict) -> list[str]:
    """Regressions of ``scores`` against ``baseline`` (empty list when none).

    Raises:
        KeyError: the baseline lacks one of :data:`FLOOR_KEYS` / :data:`CEILING_KEYS`.
    """
    failures = []
    for key in FLOOR_KEYS:
        if scores[key] < baseline[key]:
            failures.append(f"{key} {scores[key]:.4f} is below its floor {baseline[key]}")
    for key, score_key in CEILING_SCORES.items():
        if scores[score_key] > baseline[key]:
            failures.append(f"{score_key} {scores[score_key]} is above its ceiling {key} = {baseline[key]}")
    return failures


def floor2(x: float) -> float:
    """``x`` rounded down to 2 decimals (guarding against 0.29 * 100 = 28.999...)."""
    return math.floor(round(x * 100, 6)) / 100


def baseline_from(scores: dict, reason: str) -> dict:
    """A baseline pinned at ``scores``: floors rounded down to 2 decimals, ceilings at the counts."""
    return {
        **{key: floor2(scores[key]) for key in FLOOR_KEYS},
        **{key: int(scores[score_key]) for key, score_key in CEILING_SCORES.items()},
        "reason": reason,
    }


def loosened(old: dict, new: dict) -> list[str]:
    """The keys on which ``new`` is laxer than ``old`` (a lower floor or a higher ceiling)."""
    out = [k for k in FLOOR_KEYS if k in old and new[k] < old[k]]
    return out + [k for k in CEILING_KEYS if k in old and new[k] > old[k]]


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


def main(argv: list[str] | None = None) -> int:
    """``python -m pipeline.evaluate``: print the table; exit 1 on a regression against --baseline,
    2 on a usage error (bad fixtures, a baseline that would loosen without --reason)."""
    parser = argparse.ArgumentParser(prog="python -m pipeline.evaluate", description=__doc__.split("\n")[0])
    parser.add_argument("fixtures", nargs="?", type=Path, default=DEFAULT_FIXTURES,
                        help="folder with articles/ and expected/ (default: tests/fixtures/segmentation)")
    parser.add_argument("--baseline", type=Path, default=None, help="compare with the floors in this JSON file")
    parser.add_argument("--write-baseline", action="store_true",
                        help="pin the baseline file (--baseline, default tests/eval_baseline.json) at the current scores")
    parser.add_argument("--reason", default=None,
                        help="why the baseline changes (required when --write-baseline lowers a floor or raises a ceiling)")
    parser.add_argument("--out", type=Path, default=None, help="keep the run's outputs in this folder")
    parser.add_argument("--details", action="store_true", help="also list every miss, extra, leak and drop")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s", stream=sys.stderr)

    problems = validate_fixtures(args.fixtures)
    if problems:
        print("Fixture annotations are not well-formed:\n  " + "\n  ".join(problems), file=sys.stderr)
        return 2
    scores = evaluate(args.fixtures, args.out)
    print(format_table(scores))
    if args.details:
        print()
        print(format_failures(scores))

    baseline_path = args.baseline or (DEFAULT_BASELINE if args.write_baseline else None)
    if args.write_baseline:
        old = json.loads(baseline_path.read_text(encoding="utf-8")) if baseline_path.is_file() else {}
        reason = args.reason or "Pinned at the scores of the current pipeline (floors rounded down to 2 decimals)."
        new = baseline_from(scores, reason)
        laxer = loosened(old, new)
        if laxer and not args.reason:
            print(f"\nNot written: the new baseline loosens {laxer}; give --reason.", file=sys.stderr)
            return 2
        baseline_path.write_text(json.dumps(new, ensure_ascii=False, indent=2) + "\n", encoding="utf-8")
        print(f"\nBaseline written to {baseline_path}: {json.dumps(new, ensure_ascii=False)}")
        return 0
    if baseline_path is not None:
        baseline = json.loads(baseline_path.read_text(encoding="utf-8"))
        failures = check_baseline(scores, baseline)
        print(f"\nBaseline {baseline_path}: " + ("REGRESSION\n  " + "\n  ".join(failures) if failures else "ok"))
        if failures:
            print()
            print(format_failures(scores))
            return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
