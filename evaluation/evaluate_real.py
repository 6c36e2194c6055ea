"""Real-world evaluation: score the pipeline on collected articles against hand-made gold.

The article files of the selected batches (``gold.json`` each, format in
``tests/fixtures/real/README.md``) are copied into one corpus (``<batch>__<name>``), the pipeline
runs once over it, and sections, fields, junk and dedup are scored per file and in all; with
``--baseline`` a score below its floor exits 1. Matching rules and scores: docs/evaluation.md."""

from __future__ import annotations

import argparse
import json
import logging
import math
import os
import re
import shutil
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

from evaluation.evaluate import (
    add_baseline_arguments,
    baseline_step,
    floor2,
    fold_for_match,
    fold_value,
    title_key,
)
from pipeline.config import load_config
from pipeline.embed import Embedder
from pipeline.fields import AWARDS, normalize_award
from pipeline.normalize import to_script
from pipeline.runner import run

REPO = Path(__file__).resolve().parents[1]
DEFAULT_ROOT = REPO / "tests" / "fixtures" / "real"
DEFAULT_BASELINE = REPO / "tests" / "real_eval_baseline.json"
GOLD_FILE = "gold.json"
SPLITS = ("dev", "test")
#: Separator between the batch and the file name in the merged corpus.
SEP = "__"
#: Containment matching: the shorter folded title must have this many characters, and this share
#: of the longer one's length.
CONTAIN_MIN_CHARS = 12
CONTAIN_MIN_RATIO = 0.8
#: The Jaccard similarity a lenient people/institution set needs.
LENIENT_JACCARD = 0.5
#: The scored fields; ``authors_lenient`` and ``institutions_lenient`` are the Jaccard variants.
FIELDS = ("title", "venue", "year", "award", "authors", "authors_lenient", "institutions",
          "institutions_lenient", "arxiv_id")
#: Floors of a baseline file (plus ``field_accuracy``: {field: floor}); the ceiling of the junk ratio.
FLOOR_KEYS = ("section_precision", "section_recall", "file_recall", "dedup_precision", "dedup_f1")
CEILING_KEY, CEILING_SCORE = "max_junk_ratio", "junk_ratio"

_ARXIV = re.compile(r"(\d{4}\.\d{4,5}|[a-z-]+(?:\.[a-z]{2})?/\d{7})(?:v\d+)?", re.I)


# ---------------------------------------------------------------------------------------------
# Batches and the merged corpus
# ---------------------------------------------------------------------------------------------


def collect_batches(roots: list[Path], split: str = "dev") -> list[tuple[str, Path]]:
    """The batches under ``roots`` as ``(split, folder)``, in order.

    A root with a ``gold.json`` is a batch (its split is its parent's name when that is ``dev`` or
    ``test``, else ``"-"``; ``split`` does not filter it); a root with ``dev/`` or ``test/`` gives
    the batches of ``split`` (``"all"``: both); any other root gives its sub-folders with a
    ``gold.json``. Folders without a ``gold.json`` (being filled) are left out.
    """
    def label(folder: Path) -> str:
        return folder.parent.name if folder.parent.name in SPLITS else "-"

    out: list[tuple[str, Path]] = []
    for root in roots:
        root = Path(root)
        if (root / GOLD_FILE).is_file():
            folders = [root]
        elif any((root / s).is_dir() for s in SPLITS):
            wanted = SPLITS if split == "all" else (split,)
            folders = [p.parent for s in wanted for p in sorted((root / s).glob(f"*/{GOLD_FILE}"))]
        else:
            folders = [p.parent for p in sorted(root.glob(f"*/{GOLD_FILE}"))]
        out += [(label(f), f) for f in folders if (label(f), f) not in out]
    return out


def batch_name(split: str, folder: Path) -> str:
    """The batch's name in the merged corpus and the tables (``<split>.<folder>``, or the folder)."""
    return f"{split}.{folder.name}" if split in SPLITS else folder.name


def load_gold(batches: list[tuple[str, Path]]) -> tuple[dict[str, dict], list[str]]:
    """The gold of every file of ``batches``, keyed by its corpus name ``<batch>__<file>``.

    Returns:
        ``({corpus name: {"batch", "split", "file", "path", "language", "shape", "junk" (list or
        None when not annotated), "papers"}}, problems)``; a listed file that is not there is a
        problem and left out.
    """
    files: dict[str, dict] = {}
    problems: list[str] = []
    for split, folder in batches:
        batch = batch_name(split, folder)
        try:
            entries = json.loads((folder / GOLD_FILE).read_text(encoding="utf-8"))["files"]
        except (OSError, ValueError, KeyError, TypeError) as exc:
            problems.append(f"{folder / GOLD_FILE}: unreadable: {exc!r}")
            continue
        for name, entry in entries.items():
            path = folder / name
            if not path.is_file():
                problems.append(f"{batch}/{name}: listed in gold.json but not there")
                continue
            junk = entry.get("junk")
            files[f"{batch}{SEP}{name.replace('/', SEP)}"] = {
                "batch": batch, "split": split, "file": name, "path": path,
                "language": entry.get("language") or "-", "shape": entry.get("shape") or "-",
                "junk": list(junk) if isinstance(junk, list) else None,
                "papers": list(entry.get("papers") or []),
            }
    return files, problems


def build_corpus(gold: dict[str, dict], corpus: Path) -> None:
    """Put every gold file into ``corpus`` under its corpus name (a hard link, else a copy)."""
    corpus.mkdir(parents=True, exist_ok=True)
    for name, g in gold.items():
        target = corpus / name
        try:
            os.link(g["path"], target)
        except OSError:
            shutil.copyfile(g["path"], target)


# ---------------------------------------------------------------------------------------------
# Matching and field comparison
# ---------------------------------------------------------------------------------------------


def norm_arxiv(value: object) -> str | None:
    """An arXiv id without version, lower-cased (None when ``value`` holds none)."""
    if not isinstance(value, str):
        return None
    m = _ARXIV.search(value)
    return m.group(1).lower() if m else None


def gold_keys(paper: dict) -> set[str]:
    """The folded titles a gold paper is matched by (``title`` and ``title_en``)."""
    return {title_key(paper.get("title")), title_key(paper.get("title_en"))} - {""}


def section_keys(section: dict) -> set[str]:
    """The folded titles of an output section (``title`` and ``title_zh``)."""
    return {title_key(section.get("title")), title_key(section.get("title_zh"))} - {""}


def _contains(a: str, b: str) -> bool:
    short, long_ = sorted((a, b), key=len)
    return len(short) >= CONTAIN_MIN_CHARS and short in long_ and len(short) / len(long_) >= CONTAIN_MIN_RATIO


def match_kind(paper: dict, section: dict) -> int | None:
    """How a section matches a gold paper: 0 exact title, 1 arXiv id, 2 containment; None: no match."""
    g, s = gold_keys(paper), section_keys(section)
    if g & s:
        return 0
    arxiv = norm_arxiv(paper.get("arxiv_id"))
    if arxiv is not None and arxiv == norm_arxiv(section.get("arxiv_id")):
        return 1
    if any(_contains(a, b) for a in g for b in s):
        return 2
    return None


def match_sections(papers: list[dict], sections: list[dict]) -> list[int | None]:
    """For each gold paper, the index of the section matched to it, or None.

    Greedy in document order: each section takes the first unmatched gold paper it matches,
    preferring an exact title, then an arXiv id, then containment (:func:`match_kind`); then
    each unmatched untitled gold paper takes the first unmatched untitled section.
    """
    matches: list[int | None] = [None] * len(papers)
    for j, sec in enumerate(sections):
        best = None
        for i, paper in enumerate(papers):
            if matches[i] is not None:
                continue
            kind = match_kind(paper, sec)
            if kind is not None and (best is None or kind < best[0]):
                best = (kind, i)
                if kind == 0:
                    break
        if best is not None:
            matches[best[1]] = j
    used = set(matches)
    for i, paper in enumerate(papers):
        if matches[i] is not None or paper.get("title"):
            continue
        arxiv = norm_arxiv(paper.get("arxiv_id"))
        for j, sec in enumerate(sections):
            if j not in used and not section_keys(sec) and norm_arxiv(sec.get("arxiv_id")) in (None, arxiv):
                matches[i] = j
                used.add(j)
                break
    return matches


def gold_award(value: object) -> str | None:
    """A gold award as a class of :data:`pipeline.fields.AWARDS` (a display string is mapped)."""
    if not isinstance(value, str) or not value.strip():
        return None
    return value if value in AWARDS else normalize_award(value)


def _people(value: object) -> frozenset[str]:
    if value is None or isinstance(value, float):
        return frozenset()
    items = [value] if isinstance(value, str) else list(value)
    return frozenset(f for f in (fold_value(to_script(str(v), "zh-Hans")) for v in items) if f)


def jaccard(a: frozenset[str], b: frozenset[str]) -> float:
    """|a & b| / |a | b|; 1.0 when both are empty."""
    return len(a & b) / len(a | b) if a | b else 1.0


def _year(value: object) -> int | None:
    try:
        return None if value is None or (isinstance(value, float) and math.isnan(value)) else int(value)
    except (TypeError, ValueError):
        return None


def field_correct(field: str, paper: dict, section: dict) -> bool:
    """Whether ``section`` gets ``field`` of the gold ``paper`` right (rules: docs/evaluation.md)."""
    if field == "title":  # a text that never writes the title wants none
        return bool(gold_keys(paper) & section_keys(section)) or (not paper.get("title") and not section_keys(section))
    if field == "venue":
        return fold_value(paper.get("venue")) == fold_value(section.get("venue"))
    if field == "year":
        return _year(paper.get("year")) == _year(section.get("year"))
    if field == "award":
        return gold_award(paper.get("award")) == fold_value(section.get("award"))
    if field == "arxiv_id":
        return norm_arxiv(paper.get("arxiv_id")) == norm_arxiv(section.get("arxiv_id"))
    base, _, lenient = field.partition("_")
    if base in ("authors", "institutions"):
        gold, got = _people(paper.get(base)), _people(section.get(base))
        return jaccard(gold, got) >= LENIENT_JACCARD if lenient else gold == got
    raise KeyError(f"unknown field {field!r}; fields: {list(FIELDS)}")


def field_value(field: str, section: dict) -> object:
    """A section's value of ``field`` as shown in reports."""
    base = field.partition("_lenient")[0]
    if base == "title":
        return section.get("title") or section.get("title_zh")
    value = section.get(base)
    if base in ("authors", "institutions"):
        return sorted(_people(value))
    if base == "year":
        return _year(value)
    return None if value is None or isinstance(value, float) else value


# ---------------------------------------------------------------------------------------------
# Junk and dedup
# ---------------------------------------------------------------------------------------------


def junk_hits(junk: list[str], section_texts: list[str]) -> tuple[int, int]:
    """``(characters, strings)`` of ``junk`` found in the sections: each junk string counts the
    folded characters of its lines that occur inside a section text, and is hit when any does."""
    texts = [fold_for_match(t) for t in section_texts if isinstance(t, str)]
    chars = hit = 0
    for j in junk:
        lines = [fold_for_match(line) for line in str(j).splitlines()]
        found = sum(len(line) for line in lines if line and any(line in t for t in texts))
        chars += found
        hit += found > 0
    return chars, hit


def section_chars(section_texts: list[str]) -> int:
    """The folded (whitespace-free) characters of the section texts."""
    return sum(len(fold_for_match(t)) for t in section_texts if isinstance(t, str))


def junk_ratio(junk_chars: int, total_chars: int) -> float:
    """Junk characters in sections per section character (0.0 when there are none)."""
    return junk_chars / total_chars if total_chars else 0.0


def gold_clusters(papers: list[dict]) -> list[int]:
    """A cluster id per gold paper: linked when they share a folded ``title_en`` or an arXiv id."""
    parent = list(range(len(papers)))

    def find(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    first: dict[tuple[str, str], int] = {}
    for i, p in enumerate(papers):
        for key in (("t", title_key(p.get("title_en"))), ("a", norm_arxiv(p.get("arxiv_id")) or "")):
            if not key[1]:
                continue
            if key in first:
                parent[find(i)] = find(first[key])
            else:
                first[key] = i
    return [find(i) for i in range(len(papers))]


def pairwise(gold: list[int], predicted: list[object]) -> dict:
    """Pairwise precision, recall and F1 of ``predicted`` ids (None: a singleton) against
    ``gold`` cluster ids, over all pairs of mentions (1.0 when there is no pair of a kind)."""
    tp = gold_pairs = pred_pairs = 0
    n = len(gold)
    for i in range(n):
        for j in range(i + 1, n):
            g = gold[i] == gold[j]
            p = predicted[i] is not None and predicted[i] == predicted[j]
            gold_pairs += g
            pred_pairs += p
            tp += g and p
    precision = tp / pred_pairs if pred_pairs else 1.0
    recall = tp / gold_pairs if gold_pairs else 1.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    return {"dedup_precision": precision, "dedup_recall": recall, "dedup_f1": f1,
            "dedup_true_pairs": tp, "dedup_gold_pairs": gold_pairs, "dedup_predicted_pairs": pred_pairs}


# ---------------------------------------------------------------------------------------------
# Scoring
# ---------------------------------------------------------------------------------------------


def _display(section: dict) -> str:
    for key in ("title", "title_zh", "heading"):
        value = section.get(key)
        if isinstance(value, str) and value.strip():
            return value.strip()
    return "(untitled)"


def _gold_display(paper: dict) -> str:
    return paper.get("title") or paper.get("title_en") or paper.get("arxiv_id") or "(no title)"


def score_file(gold: dict, sections: list[dict]) -> dict:
    """Score one gold file against its sections (in document order).

    Returns:
        counts (``gold``, ``found``, ``matched``, ``junk_chars``, ``junk_hit``, ``junk_strings``,
        ``section_chars``), ``correct`` ({field: count}), ``matches`` (per gold paper the
        section index or None), ``missed`` and ``extra`` (titles) and ``wrong`` (field errors).
    """
    papers = gold["papers"]
    matches = match_sections(papers, sections)
    correct = dict.fromkeys(FIELDS, 0)
    wrong = []
    for paper, j in zip(papers, matches, strict=True):
        if j is None:
            continue
        for field in FIELDS:
            if field_correct(field, paper, sections[j]):
                correct[field] += 1
            elif not field.endswith("_lenient"):
                base = field.partition("_lenient")[0]
                want = gold_award(paper.get("award")) if base == "award" else paper.get(base)
                if base == "title":
                    want = [paper.get("title"), paper.get("title_en")]
                wrong.append({"title": _gold_display(paper), "field": field, "gold": want,
                              "got": field_value(field, sections[j])})
    texts = [s.get("text") for s in sections]
    annotated = gold["junk"] is not None
    junk_chars, junk_hit = junk_hits(gold["junk"] or [], texts)
    used = {j for j in matches if j is not None}
    return {
        "gold": len(papers), "found": len(sections), "matched": len(used),
        "correct": correct, "matches": matches,
        "missed": [_gold_display(p) for p, j in zip(papers, matches, strict=True) if j is None],
        "extra": [_display(s) for j, s in enumerate(sections) if j not in used],
        "wrong": wrong,
        "junk_annotated": annotated, "junk_strings": len(gold["junk"] or []),
        "junk_chars": junk_chars, "junk_hit": junk_hit,
        "section_chars": section_chars(texts) if annotated else 0,
    }


def _rate(num: int, den: int) -> float:
    return num / den if den else 1.0


def aggregate(rows: list[dict]) -> dict:
    """Micro scores over per-file ``rows`` (:func:`score_file` results)."""
    n_gold = sum(r["gold"] for r in rows)
    n_found = sum(r["found"] for r in rows)
    n_matched = sum(r["matched"] for r in rows)
    with_gold = [r for r in rows if r["gold"]]
    junk_chars = sum(r["junk_chars"] for r in rows)
    chars = sum(r["section_chars"] for r in rows)
    precision, recall = _rate(n_matched, n_found), _rate(n_matched, n_gold)
    return {
        "n_files": len(rows), "n_gold": n_gold, "n_found": n_found, "n_matched": n_matched,
        "section_precision": precision, "section_recall": recall,
        "section_f1": 2 * precision * recall / (precision + recall) if precision + recall else 0.0,
        "file_recall": (sum(r["matched"] / r["gold"] for r in with_gold) / len(with_gold)) if with_gold else 1.0,
        "files_nothing_found": [r["name"] for r in with_gold if r["found"] == 0],
        "files_nothing_matched": [r["name"] for r in with_gold if r["matched"] == 0],
        "field_correct": {f: sum(r["correct"][f] for r in rows) for f in FIELDS},
        "field_accuracy": {f: _rate(sum(r["correct"][f] for r in rows), n_gold) for f in FIELDS},
        "junk_chars": junk_chars, "junk_section_chars": chars, "junk_ratio": junk_ratio(junk_chars, chars),
        "junk_strings": sum(r["junk_strings"] for r in rows), "junk_strings_hit": sum(r["junk_hit"] for r in rows),
    }


def evaluate_real(batches: list[tuple[str, Path]], out_dir: str | Path | None = None,
                  embedder: Embedder | None = None) -> dict:
    """Run the pipeline once over the files of ``batches`` and score it (docs/evaluation.md).

    Returns:
        the keys of :func:`aggregate` (overall), the dedup scores of :func:`pairwise`,
        ``gold_papers_multi_file``, ``seconds``, ``problems`` (gold that could not be used),
        ``files`` (one row per gold file: ``name``, ``batch``, ``split``, ``file``,
        ``language``, ``shape``, ``status`` plus :func:`score_file`'s keys) and ``groups``
        (``{"split"|"language"|"shape"|"batch": {value: aggregate}}``).
    """
    gold, problems = load_gold(batches)
    config = load_config()
    config.run.quiet = True
    with tempfile.TemporaryDirectory(prefix="eval-real-") as tmp:
        corpus = Path(tmp) / "corpus"
        build_corpus(gold, corpus)
        t0 = time.perf_counter()
        result = run(corpus, Path(out_dir) if out_dir is not None else Path(tmp) / "out", config,
                     embedder=embedder, progress=False)
        seconds = time.perf_counter() - t0
        frames = dict(result.frames)  # read while the output folder exists
    docs = frames["documents"]
    file_of_doc: dict[str, str] = {}
    status: dict[str, set[str]] = defaultdict(set)
    for doc_id, path, st in zip(docs["doc_id"], docs["source_path"], docs["status"], strict=True):
        name = str(path).split("#", 1)[0]
        file_of_doc[doc_id] = name
        status[name].add(str(st))
    sections: dict[str, list[dict]] = defaultdict(list)
    table = frames["sections"]
    by_path = sorted(zip(docs["source_path"], docs["doc_id"], strict=True), key=lambda pd_: _natural(pd_[0]))
    order = {doc_id: i for i, (_, doc_id) in enumerate(by_path)}
    for row in sorted(table.to_dict("records"), key=lambda r: (order.get(r["doc_id"], 0), r["ordinal"])):
        sections[file_of_doc.get(row["doc_id"], "")].append(row)

    rows, mentions = [], []
    for name, g in gold.items():
        found = sections.get(name, [])
        scored = score_file(g, found)
        rows.append({"name": name, "batch": g["batch"], "split": g["split"], "file": g["file"],
                     "language": g["language"], "shape": g["shape"],
                     "status": ",".join(sorted(status.get(name, {"no document"}))), **scored})
        for paper, j in zip(g["papers"], scored["matches"], strict=True):
            pid = None if j is None else found[j].get("paper_id")
            mentions.append((name, paper, j is not None, pid if isinstance(pid, str) and pid else None))
    clusters = gold_clusters([paper for _, paper, _, _ in mentions])
    files_of: dict[int, set[str]] = defaultdict(set)
    for (name, _, _, _), c in zip(mentions, clusters, strict=True):
        files_of[c].add(name)
    matched = [(c, pid) for (_, _, hit, pid), c in zip(mentions, clusters, strict=True) if hit]
    dedup = pairwise([c for c, _ in matched], [pid for _, pid in matched])
    # the dedup errors: gold papers whose found mentions got several paper_ids (split), and
    # paper_ids shared by several gold papers (merged)
    by_cluster: dict[int, list[tuple[str, str, str | None]]] = defaultdict(list)
    by_pid: dict[str, set[int]] = defaultdict(set)
    for (name, paper, hit, pid), c in zip(mentions, clusters, strict=True):
        if hit:
            by_cluster[c].append((name, _gold_display(paper), pid))
            if pid:
                by_pid[pid].add(c)
    dedup_errors = [{"kind": "split", "mentions": ms} for ms in by_cluster.values()
                    if len({pid for _, _, pid in ms}) > 1]
    dedup_errors += [{"kind": "merged", "mentions": [m for c in sorted(cs) for m in by_cluster[c] if m[2] == pid]}
                     for pid, cs in by_pid.items() if len(cs) > 1]
    groups = {key: {value: aggregate([r for r in rows if r[key] == value])
                    for value in sorted({r[key] for r in rows})}
              for key in ("split", "language", "shape", "batch")}
    return {**aggregate(rows), **dedup, "dedup_mentions": len(matched),
            "gold_papers_multi_file": sum(len(f) >= 2 for f in files_of.values()),
            "seconds": seconds, "problems": problems, "files": rows, "groups": groups,
            "dedup_errors": dedup_errors}


def _natural(name: str) -> tuple[str, int]:
    base, _, line = str(name).partition("#")
    return base, int(line) if line.isdigit() else 0


# ---------------------------------------------------------------------------------------------
# Baseline
# ---------------------------------------------------------------------------------------------


def ceil4(x: float) -> float:
    """``x`` rounded up to 4 decimals."""
    return math.ceil(round(x * 10000, 6)) / 10000


def baseline_from(scores: dict, reason: str) -> dict:
    """A baseline pinned at ``scores``: floors rounded down to 2 decimals, the junk ratio's
    ceiling rounded up to 4."""
    return {
        **{key: floor2(scores[key]) for key in FLOOR_KEYS},
        CEILING_KEY: ceil4(scores[CEILING_SCORE]),
        "field_accuracy": {f: floor2(v) for f, v in scores["field_accuracy"].items()},
        "reason": reason,
    }


def check_baseline(scores: dict, baseline: dict) -> list[str]:
    """Regressions of ``scores`` against ``baseline`` (empty list when none); keys the baseline
    does not have are not checked."""
    failures = [f"{key} {scores[key]:.4f} is below its floor {baseline[key]}"
                for key in FLOOR_KEYS if key in baseline and scores[key] < baseline[key]]
    if CEILING_KEY in baseline and scores[CEILING_SCORE] > baseline[CEILING_KEY]:
        failures.append(f"{CEILING_SCORE} {scores[CEILING_SCORE]:.4f} is above its ceiling {baseline[CEILING_KEY]}")
    for field, floor in baseline.get("field_accuracy", {}).items():
        got = scores["field_accuracy"].get(field)
        if got is None:
            failures.append(f"field_accuracy.{field}: not scored (floor {floor})")
        elif got < floor:
            failures.append(f"field_accuracy.{field} {got:.4f} is below its floor {floor}")
    return failures


def loosened(old: dict, new: dict) -> list[str]:
    """The keys on which ``new`` is laxer than ``old``."""
    out = [k for k in FLOOR_KEYS if k in old and new[k] < old[k]]
    if CEILING_KEY in old and new[CEILING_KEY] > old[CEILING_KEY]:
        out.append(CEILING_KEY)
    before, after = old.get("field_accuracy", {}), new.get("field_accuracy", {})
    return out + [f"field_accuracy.{f}" for f, v in before.items() if f not in after or after[f] < v]


# ---------------------------------------------------------------------------------------------
# Report
# ---------------------------------------------------------------------------------------------

_SHORT = {"title": "title", "venue": "venue", "year": "year", "award": "award", "authors": "auth",
          "authors_lenient": "auth~", "institutions": "inst", "institutions_lenient": "inst~", "arxiv_id": "arxiv"}


def _cut(s: str, width: int) -> str:
    return s if len(s) <= width else s[: width - 1] + "…"


def format_table(scores: dict) -> str:
    """Per file: language, shape, gold, found and matched sections, recall, junk hits, status;
    then the totals."""
    w = 58
    head = f"{'file':<{w}} {'lang':<7} {'shape':<14} {'gold':>4} {'found':>5} {'match':>5} {'rec':>5} {'junk':>7}  status"
    lines = [head, "-" * len(head)]
    for r in scores["files"]:
        rec = f"{r['matched'] / r['gold']:.2f}" if r["gold"] else "-"
        junk = f"{r['junk_hit']}/{r['junk_strings']}" if r["junk_annotated"] else "-"
        lines.append(f"{_cut(r['name'], w):<{w}} {_cut(r['language'], 7):<7} {_cut(r['shape'], 14):<14} "
                     f"{r['gold']:>4} {r['found']:>5} {r['matched']:>5} {rec:>5} {junk:>7}  {r['status']}")
    lines.append("-" * len(head))
    lines.append(f"{'total':<{w}} {'':<7} {'':<14} {scores['n_gold']:>4} {scores['n_found']:>5} "
                 f"{scores['n_matched']:>5} {scores['section_recall']:>5.2f} "
                 f"{scores['junk_strings_hit']}/{scores['junk_strings']:<5}")
    return "\n".join(lines)


def format_summary(scores: dict) -> str:
    """The overall scores in a few lines."""
    acc = scores["field_accuracy"]
    lines = [
        f"sections: precision {scores['section_precision']:.4f}  recall {scores['section_recall']:.4f}  "
        f"F1 {scores['section_f1']:.4f}  file recall {scores['file_recall']:.4f}  "
        f"({scores['n_matched']} matched / {scores['n_found']} found / {scores['n_gold']} gold, {scores['n_files']} files)",
        "fields:   " + "  ".join(f"{_SHORT[f]} {acc[f]:.3f}" for f in FIELDS),
        f"junk:     {scores['junk_chars']} of {scores['junk_section_chars']} section chars "
        f"(ratio {scores['junk_ratio']:.4f}); {scores['junk_strings_hit']} of {scores['junk_strings']} junk strings hit",
        f"dedup:    pairwise precision {scores['dedup_precision']:.4f}  recall {scores['dedup_recall']:.4f}  "
        f"F1 {scores['dedup_f1']:.4f}  ({scores['dedup_true_pairs']} right / {scores['dedup_predicted_pairs']} "
        f"predicted / {scores['dedup_gold_pairs']} gold pairs over {scores['dedup_mentions']} matched mentions; "
        f"{scores['gold_papers_multi_file']} gold papers in >= 2 files)",
        f"files with gold papers and no section: {len(scores['files_nothing_found'])}; "
        f"with no match: {len(scores['files_nothing_matched'])}  |  run {scores['seconds']:.1f} s",
    ]
    return "\n".join(lines)


def format_groups(scores: dict) -> str:
    """Section and field scores per split, language, shape and batch."""
    lines = []
    for key, groups in scores["groups"].items():
        head = (f"{'by ' + key:<32} {'files':>5} {'gold':>4} {'found':>5} {'P':>5} {'R':>5} {'fileR':>5}  "
                + " ".join(f"{_SHORT[f]:>6}" for f in FIELDS))
        lines += [head, "-" * len(head)]
        for value, g in groups.items():
            lines.append(f"{_cut(value, 32):<32} {g['n_files']:>5} {g['n_gold']:>4} {g['n_found']:>5} "
                         f"{g['section_precision']:>5.2f} {g['section_recall']:>5.2f} {g['file_recall']:>5.2f}  "
                         + " ".join(f"{g['field_accuracy'][f]:>6.2f}" for f in FIELDS))
        lines.append("")
    return "\n".join(lines).rstrip()


def _show(value: object) -> str:
    return json.dumps(value, ensure_ascii=False, default=str)


def format_errors(scores: dict) -> str:
    """Per file: the gold papers not found, the found sections matching no gold paper, the wrong
    field values of matched papers."""
    lines = []
    for r in scores["files"]:
        items = [f"    missed: {t}" for t in r["missed"]]
        items += [f"    extra:  {t}" for t in r["extra"]]
        items += [f"    wrong {w['field']}: {w['title'][:60]}: gold {_show(w['gold'])} got {_show(w['got'])}"
                  for w in r["wrong"]]
        if items:
            lines += [f"  {r['name']} [{r['status']}]", *items]
    out = "Per-file errors\n" + ("\n".join(lines) if lines else "  none")
    dedup = []
    for e in scores.get("dedup_errors", []):
        dedup.append(f"  {e['kind']}:")
        dedup += [f"    {pid or '-'}  {name}: {title[:70]}" for name, title, pid in e["mentions"]]
    return out + "\n\nDedup errors (gold papers split over paper_ids, paper_ids merging gold papers)\n" + (
        "\n".join(dedup) if dedup else "  none")


def main(argv: list[str] | None = None) -> int:
    """``python -m evaluation.evaluate_real``: print the tables; exit 1 on a regression against
    --baseline, 2 on a usage error (no batch found, a baseline that would loosen without --reason)."""
    parser = argparse.ArgumentParser(prog="python -m evaluation.evaluate_real", description=__doc__.split("\n")[0])
    parser.add_argument("roots", nargs="*", type=Path,
                        help="batch folders, folders of batches or corpus roots (default: tests/fixtures/real)")
    parser.add_argument("--split", choices=(*SPLITS, "all"), default="dev",
                        help="which split of a corpus root to score (default: dev)")
    add_baseline_arguments(parser, "tests/real_eval_baseline.json")
    parser.add_argument("--json", type=Path, default=None, help="write every score to this JSON file")
    parser.add_argument("--verbose", action="store_true",
                        help="also print the breakdown per split, language, shape and batch, and every miss, "
                             "extra section and wrong field")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s", stream=sys.stderr)

    roots = args.roots or [DEFAULT_ROOT]
    batches = collect_batches(roots, args.split)
    if not batches:
        print(f"No batch with a {GOLD_FILE} under {[str(r) for r in roots]} (split {args.split}).", file=sys.stderr)
        return 2
    scores = evaluate_real(batches, args.out)
    for problem in scores["problems"]:
        print(f"warning: {problem}", file=sys.stderr)
    print(format_table(scores))
    print()
    print(format_summary(scores))
    if args.verbose:
        print()
        print(format_groups(scores))
        print()
        print(format_errors(scores))
    if args.json is not None:
        args.json.write_text(json.dumps(scores, ensure_ascii=False, indent=2, default=str) + "\n",
                             encoding="utf-8")

    baseline_path = args.baseline or (DEFAULT_BASELINE if args.write_baseline else None)
    return baseline_step(baseline_path, args.write_baseline, args.reason,
                         f"Pinned at the scores of the current pipeline on split {args.split} "
                         "(floors rounded down to 2 decimals, the junk ratio's ceiling up to 4).",
                         lambda reason, old: baseline_from(scores, reason), loosened,
                         lambda baseline: check_baseline(scores, baseline),
                         None if args.verbose else lambda: print(f"\n{format_errors(scores)}"))

if __name__ == "__main__":
    sys.exit(main())
