"""Dedup evaluation: score how the pipeline groups paper mentions across sources, scripts and
languages, against a hand-made gold clustering.

The pipeline runs over ``tests/fixtures/dedup/articles``; sections are aligned with the gold
mentions of ``gold.json`` by file and section order; the ``paper_id`` clustering gets pairwise and
B-cubed scores, a sweep of ``dedup.match_threshold`` re-clusters the same vectors, and every wrong
and missed merge is listed. Format, alignment and score definitions: docs/evaluation.md.
"""

from __future__ import annotations

import argparse
import copy
import json
import logging
import re
import sys
import tempfile
import time
import unicodedata
from collections import Counter
from itertools import combinations
from pathlib import Path

import pandas as pd

from evaluation.evaluate import add_baseline_arguments, baseline_step, floor2
from pipeline.config import Config, load_config
from pipeline.dedup import PairScorer, SectionEmbeddings, cluster_sections, embed_sections
from pipeline.embed import Embedder, make_embedder
from pipeline.runner import run
from pipeline.stage import records

REPO = Path(__file__).resolve().parents[1]
#: The evaluation set and its pinned floors (in a source checkout).
DEFAULT_FIXTURES = REPO / "tests" / "fixtures" / "dedup"
DEFAULT_BASELINE = DEFAULT_FIXTURES / "baseline.json"
#: Scores a baseline pins (floors, rounded down to 2 decimals).
FLOOR_KEYS = ("pairwise_precision", "pairwise_f1", "bcubed_f1")
#: ``dedup.match_threshold`` values of the sweep: 0.40, 0.45, ..., 0.90.
SWEEP_THRESHOLDS: tuple[float, ...] = tuple(round(0.40 + 0.05 * i, 2) for i in range(11))
#: Characters of a section's summary shown in the error lists.
SUMMARY_HEAD_CHARS = 80
#: Language tags an article name carries (``NN_<lang>_...``).
LANGS = ("zh-Hans", "zh-Hant", "en")
SCORE_KEYS = ("pairwise_precision", "pairwise_recall", "pairwise_f1",
              "bcubed_precision", "bcubed_recall", "bcubed_f1")

_LANG_IN_NAME = re.compile(r"^\d+_(?P<lang>zh-Hans|zh-Hant|en)_")


# ---------------------------------------------------------------------------------------------
# Metrics
# ---------------------------------------------------------------------------------------------


def _f1(p: float, r: float) -> float:
    return 2 * p * r / (p + r) if p + r else 0.0


def _pairs(n: int) -> int:
    return n * (n - 1) // 2


def score_clusters(gold_labels: list[str], predicted: list[str]) -> dict:
    """Pairwise and B-cubed scores of a predicted clustering against gold labels.

    Args:
        gold_labels: the gold cluster of each mention (any hashable labels, e.g. paper labels).
        predicted: the predicted cluster of each mention (e.g. ``paper_id``), aligned with
            ``gold_labels``. Label values of the two sides are never compared with each other.

    Returns:
        ``pairwise_precision``, ``pairwise_recall``, ``pairwise_f1``, ``bcubed_precision``,
        ``bcubed_recall``, ``bcubed_f1`` (floats in [0, 1]; see docs/evaluation.md for the
        definitions and the empty-set conventions) and the counts ``n_mentions``,
        ``n_gold_clusters``, ``n_predicted_clusters``, ``n_gold_pairs``, ``n_predicted_pairs``,
        ``n_true_pairs``. Time ``O(n)``.

    Raises:
        ValueError: the two lists differ in length.
    """
    if len(gold_labels) != len(predicted):
        raise ValueError(f"{len(gold_labels)} gold labels but {len(predicted)} predicted labels")
    n = len(gold_labels)
    gold_sizes = Counter(gold_labels)
    pred_sizes = Counter(predicted)
    joint = Counter(zip(gold_labels, predicted, strict=True))
    true_pairs = sum(_pairs(c) for c in joint.values())
    gold_pairs = sum(_pairs(c) for c in gold_sizes.values())
    pred_pairs = sum(_pairs(c) for c in pred_sizes.values())
    p = true_pairs / pred_pairs if pred_pairs else 1.0
    r = true_pairs / gold_pairs if gold_pairs else 1.0
    if n:
        # each mention of a (gold, predicted) cell of size c scores c / |P| and c / |G|
        bp = sum(c * c / pred_sizes[pl] for (_, pl), c in joint.items()) / n
        br = sum(c * c / gold_sizes[gl] for (gl, _), c in joint.items()) / n
    else:
        bp = br = 1.0
    return {
        "pairwise_precision": p,
        "pairwise_recall": r,
        "pairwise_f1": _f1(p, r),
        "bcubed_precision": bp,
        "bcubed_recall": br,
        "bcubed_f1": _f1(bp, br),
        "n_mentions": n,
        "n_gold_clusters": len(gold_sizes),
        "n_predicted_clusters": len(pred_sizes),
        "n_gold_pairs": gold_pairs,
        "n_predicted_pairs": pred_pairs,
        "n_true_pairs": true_pairs,
    }


# ---------------------------------------------------------------------------------------------
# Gold
# ---------------------------------------------------------------------------------------------


def load_gold(fixtures_dir: str | Path = DEFAULT_FIXTURES) -> dict:
    """``<fixtures_dir>/gold.json`` as a dict (``papers``, ``files``; docs/evaluation.md).

    Raises:
        FileNotFoundError: no gold file. json.JSONDecodeError: not valid JSON.
    """
    return json.loads((Path(fixtures_dir) / "gold.json").read_text(encoding="utf-8"))


def lang_of(name: str) -> str | None:
    """The language tag an article name carries (``NN_<lang>_...``), or None."""
    m = _LANG_IN_NAME.match(name)
    return m.group("lang") if m else None


def validate_gold(fixtures_dir: str | Path = DEFAULT_FIXTURES) -> list[str]:
    """Problems with the evaluation set (empty list when it is well-formed).

    Checks: ``gold.json`` has exactly the keys ``papers`` and ``files``; every paper has a
    non-empty ``title`` and an ``arxiv_id`` that is null or ``YYMM.NNNNN``-shaped, and no two
    papers share an arXiv id; every file of ``files`` is an article of ``articles/`` and every
    article is in ``files``; every article name carries a language tag of :data:`LANGS`; every
    label used is a paper of ``papers``, every paper is used, and no label appears twice in one
    file (the dedup stage never merges two sections of one document).
    """
    fixtures_dir = Path(fixtures_dir)
    try:
        gold = load_gold(fixtures_dir)
    except (OSError, json.JSONDecodeError) as exc:
        return [f"gold.json cannot be read: {exc}"]
    if not isinstance(gold, dict) or set(gold) != {"papers", "files"}:
        return ["gold.json must be an object with exactly the keys 'papers' and 'files'"]
    papers, files = gold["papers"], gold["files"]
    problems: list[str] = []
    ids: dict[str, str] = {}
    for label, paper in papers.items():
        if not isinstance(paper, dict) or not isinstance(paper.get("title"), str) or not paper["title"].strip():
            problems.append(f"paper {label!r}: needs a non-empty 'title'")
            continue
        arxiv = paper.get("arxiv_id")
        if arxiv is not None and not (isinstance(arxiv, str) and re.fullmatch(r"\d{4}\.\d{4,5}", arxiv)):
            problems.append(f"paper {label!r}: arxiv_id {arxiv!r} is neither null nor an id like 1706.03762")
        elif arxiv is not None and arxiv in ids:
            problems.append(f"papers {ids[arxiv]!r} and {label!r} share the arXiv id {arxiv}")
        elif arxiv is not None:
            ids[arxiv] = label
    folder = fixtures_dir / "articles"
    articles = sorted(p.name for p in folder.iterdir() if p.is_file() and not p.name.startswith(".")) \
        if folder.is_dir() else []
    problems += [f"{name}: listed in gold.json but not in articles/" for name in sorted(set(files) - set(articles))]
    problems += [f"{name}: article without a gold entry" for name in sorted(set(articles) - set(files))]
    problems += [f"{name}: no language tag (NN_<lang>_..., lang in {list(LANGS)})"
                 for name in articles if lang_of(name) is None]
    used: set[str] = set()
    for name, labels in files.items():
        if not isinstance(labels, list) or not labels or not all(isinstance(x, str) for x in labels):
            problems.append(f"{name}: must list the label of each section (a non-empty list of strings)")
            continue
        used.update(labels)
        problems += [f"{name}: unknown paper label {x!r}" for x in labels if x not in papers]
        problems += [f"{name}: label {x!r} appears {c} times" for x, c in Counter(labels).items() if c > 1]
    problems += [f"paper {label!r} is never mentioned" for label in papers if label not in used]
    return problems


def set_statistics(gold: dict) -> dict:
    """Counts of the evaluation set: ``n_papers``, ``n_files``, ``n_mentions``,
    ``mentions_by_lang`` (by the language tag of the file name), ``mentions_per_paper``
    (label -> count) and ``papers_by_n_mentions`` (count -> number of papers)."""
    per_paper = Counter(label for labels in gold["files"].values() for label in labels)
    by_lang = Counter()
    for name, labels in gold["files"].items():
        by_lang[lang_of(name) or "unknown"] += len(labels)
    return {
        "n_papers": len(gold["papers"]),
        "n_files": len(gold["files"]),
        "n_mentions": sum(per_paper.values()),
        "mentions_by_lang": dict(sorted(by_lang.items())),
        "mentions_per_paper": dict(sorted(per_paper.items())),
        "papers_by_n_mentions": dict(sorted(Counter(per_paper.values()).items())),
    }


# ---------------------------------------------------------------------------------------------
# Alignment and errors
# ---------------------------------------------------------------------------------------------


def align_mentions(gold: dict, documents: pd.DataFrame, sections: pd.DataFrame) -> tuple[list[dict], list[dict], list[str]]:
    """Map the run's sections to gold mentions by file and section order.

    Args:
        gold: the gold dict (:func:`load_gold`).
        documents: the run's documents (``doc_id``, ``source_path``, ``status``).
        sections: the run's sections (``doc_id``, ``ordinal``, ``section_id`` and the extracted
            fields).

    Returns:
        ``(mentions, mismatches, unannotated)``: one dict per gold mention in file-name order,
        then section order (``file``, ``position``, ``lang``, ``gold``, ``section_id`` (None when
        the file's segmentation does not match), ``title``, ``title_zh``, ``summary``,
        ``arxiv_id``, ``paper_id``); one dict per mismatched file (``file``, ``expected``,
        ``found``, ``status``, ``headings``); the files the run produced sections for without
        a gold entry.
    """
    doc_of = {p: (d, s) for p, d, s in zip(documents["source_path"], documents["doc_id"], documents["status"],
                                             strict=True)}
    by_doc: dict[str, list[dict]] = {}
    for row in records(sections.sort_values(["doc_id", "ordinal"], kind="stable")):
        by_doc.setdefault(row["doc_id"], []).append(row)
    mentions: list[dict] = []
    mismatches: list[dict] = []
    for name in sorted(gold["files"]):
        labels = gold["files"][name]
        doc_id, status = doc_of.get(name, (None, "not read"))
        found = by_doc.get(doc_id, []) if doc_id is not None else []
        aligned = len(found) == len(labels)
        if not aligned:
            mismatches.append({"file": name, "expected": len(labels), "found": len(found), "status": status,
                               "headings": [r.get("heading") for r in found]})
        for k, label in enumerate(labels):
            row = found[k] if aligned else {}
            mentions.append({
                "file": name, "position": k, "lang": lang_of(name), "gold": label,
                "section_id": row.get("section_id"), "title": row.get("title"), "title_zh": row.get("title_zh"),
                "summary": row.get("summary"), "arxiv_id": row.get("arxiv_id"), "paper_id": row.get("paper_id"),
            })
    known = {doc_of[n][0] for n in gold["files"] if n in doc_of}
    path_of = {d: p for p, (d, _) in doc_of.items()}
    unannotated = sorted(path_of.get(d, d) for d in by_doc if d not in known)
    return mentions, mismatches, unannotated


def predicted_labels(mentions: list[dict], cluster_of: dict[str, object]) -> list[str]:
    """The predicted cluster of each mention as a string: ``cluster_of[section_id]``, or a
    singleton ``"unaligned:<file>#<position>"`` for a mention without a section."""
    out = []
    for m in mentions:
        sid = m["section_id"]
        out.append(f"cluster:{cluster_of[sid]}" if sid is not None else f"unaligned:{m['file']}#{m['position']}")
    return out


def clustering_errors(mentions: list[dict], predicted: list[str],
                      pair_info: dict[tuple[str, str], tuple[float, float | None]] | None = None,
                      ) -> tuple[list[dict], list[dict]]:
    """Every wrong merge and every missed merge, as pairs of mentions.

    Args:
        mentions: from :func:`align_mentions`.
        predicted: the predicted cluster of each mention (:func:`predicted_labels`).
        pair_info: ``(cosine, pair score)`` per ``(section_id, section_id)`` pair (either order),
            optional (see :func:`_pair_info`).

    Returns:
        ``(wrong, missed)``: lists of ``{"a": mention, "b": mention, "cosine": float | None,
        "score": float | None}``, ``a`` before ``b`` in mention order. Wrong: same predicted
        cluster, different gold label; missed: same gold label, different predicted clusters.
    """
    wrong, missed = [], []
    for i, j in combinations(range(len(mentions)), 2):
        a, b = mentions[i], mentions[j]
        same_gold, same_pred = a["gold"] == b["gold"], predicted[i] == predicted[j]
        if same_gold == same_pred:
            continue
        info = (None, None)
        if pair_info is not None and a["section_id"] and b["section_id"]:
            key = (a["section_id"], b["section_id"])
            info = pair_info.get(key, pair_info.get(key[::-1], (None, None)))
        (wrong if same_pred else missed).append({"a": a, "b": b, "cosine": info[0], "score": info[1]})
    return wrong, missed


# ---------------------------------------------------------------------------------------------
# Evaluation
# ---------------------------------------------------------------------------------------------


def _with_threshold(config: Config, threshold: float) -> Config:
    out = copy.deepcopy(config)
    out.dedup.match_threshold = threshold
    return out


def evaluate_dedup(fixtures_dir: str | Path = DEFAULT_FIXTURES, embedder: Embedder | None = None,
                   out_dir: str | Path | None = None,
                   thresholds: tuple[float, ...] = SWEEP_THRESHOLDS) -> dict:
    """Run the pipeline on ``<fixtures_dir>/articles`` and score its dedup against ``gold.json``.

    Args:
        fixtures_dir: folder with ``articles/`` and ``gold.json`` (docs/evaluation.md).
        embedder: a loaded embedder to share (tests pass theirs); ``None`` = built from the
            default configuration (:func:`pipeline.embed.make_embedder`). The run and the sweep
            use the same one.
        out_dir: where the run writes its outputs; ``None`` = a temporary folder, removed after.
        thresholds: the ``dedup.match_threshold`` values of the sweep.

    Returns:
        the keys of :func:`score_clusters` for the run's ``paper_id`` clustering, plus
        ``threshold`` (the configured one), ``statistics`` (:func:`set_statistics`),
        ``mismatches`` and ``unannotated`` (:func:`align_mentions`), ``mentions`` (with
        ``predicted``), ``sweep`` (one dict per threshold: ``threshold``, the score keys,
        ``n_predicted_clusters``), ``sweep_reproduces_run`` (bool), ``wrong_merges`` and
        ``missed_merges`` (:func:`clustering_errors`), ``embedder`` (model id), ``seconds`` (the
        run).

    Raises:
        FileNotFoundError: no ``gold.json`` or no ``articles/``.
        pipeline.errors.ConfigError: the embedder cannot be built.
    """
    fixtures_dir = Path(fixtures_dir)
    gold = load_gold(fixtures_dir)
    config = load_config()
    config.run.quiet = True
    embedder = embedder or make_embedder(config)
    with tempfile.TemporaryDirectory(prefix="eval-dedup-") as tmp:
        t0 = time.perf_counter()
        result = run(fixtures_dir / "articles", Path(out_dir) if out_dir is not None else Path(tmp), config,
                     embedder=embedder, progress=False)
        seconds = time.perf_counter() - t0
        documents, sections = result.frames["documents"], result.frames["sections"]  # read while they exist
    mentions, mismatches, unannotated = align_mentions(gold, documents, sections)
    gold_labels = [m["gold"] for m in mentions]
    predicted = predicted_labels(mentions, dict(zip(sections["section_id"], sections["paper_id"], strict=True)))
    scores = score_clusters(gold_labels, predicted)

    # the sweep: the dedup stage's own inputs (rows in section_id order), re-clustered
    ordered = sections.sort_values("section_id", kind="stable").reset_index(drop=True)
    emb = embed_sections(ordered, embedder)
    pair_info = _pair_info(ordered, emb, config, [m["section_id"] for m in mentions if m["section_id"] is not None])
    sweep = []
    reproduces = None
    for t in thresholds:
        labels, _ = cluster_sections(ordered, emb, _with_threshold(config, t))
        pred_t = predicted_labels(mentions, dict(zip(ordered["section_id"], labels, strict=True)))
        s = score_clusters(gold_labels, pred_t)
        sweep.append({"threshold": t, **{k: s[k] for k in SCORE_KEYS}, "n_predicted_clusters": s["n_predicted_clusters"]})
        if abs(t - config.dedup.match_threshold) < 1e-9:
            reproduces = _same_partition(labels, ordered["paper_id"].tolist())
    if reproduces is None:
        labels, _ = cluster_sections(ordered, emb, config)
        reproduces = _same_partition(labels, ordered["paper_id"].tolist())
    wrong, missed = clustering_errors(mentions, predicted, pair_info)
    for m, p in zip(mentions, predicted, strict=True):
        m["predicted"] = p
    return {
        **scores,
        "threshold": config.dedup.match_threshold,
        "statistics": set_statistics(gold),
        "mismatches": mismatches,
        "unannotated": unannotated,
        "mentions": mentions,
        "sweep": sweep,
        "sweep_reproduces_run": reproduces,
        "wrong_merges": wrong,
        "missed_merges": missed,
        "embedder": getattr(embedder, "model_id", type(embedder).__name__),
        "seconds": seconds,
    }


def _pair_info(ordered: pd.DataFrame, emb: SectionEmbeddings, config: Config,
               section_ids: list[str]) -> dict[tuple[str, str], tuple[float, float | None]]:
    """``(content cosine, pair score)`` for every pair of ``section_ids`` (rows of
    ``ordered``/``emb``); the pair score is the one the dedup stage clusters on
    (:class:`pipeline.dedup.PairScorer`; cannot-links as ``-inf``)."""
    row_of = {sid: i for i, sid in enumerate(ordered["section_id"])}
    scorer = PairScorer(ordered, emb, config.dedup.embed_weight)
    out = {}
    for a, b in combinations(section_ids, 2):
        i, j = row_of[a], row_of[b]
        out[(a, b)] = (float(emb.content[i] @ emb.content[j]), float(scorer.score(i, j)))
    return out


def _same_partition(a: list, b: list) -> bool:
    """Whether two labelings group the same items together (label values may differ)."""
    return len(set(a)) == len(set(b)) == len(set(zip(a, b, strict=True)))


# ---------------------------------------------------------------------------------------------
# Baseline
# ---------------------------------------------------------------------------------------------


def check_baseline(scores: dict, baseline: dict) -> list[str]:
    """The scores of :data:`FLOOR_KEYS` below their floor in ``baseline`` (empty list when none).

    Raises:
        KeyError: the baseline lacks one of :data:`FLOOR_KEYS`.
    """
    return [f"{k} {scores[k]:.4f} is below its floor {baseline[k]}" for k in FLOOR_KEYS if scores[k] < baseline[k]]


def baseline_from(scores: dict, reason: str) -> dict:
    """A baseline pinned at ``scores``: each of :data:`FLOOR_KEYS` rounded down to 2 decimals."""
    return {**{k: floor2(scores[k]) for k in FLOOR_KEYS}, "reason": reason}


# ---------------------------------------------------------------------------------------------
# Report
# ---------------------------------------------------------------------------------------------


def _width(s: str) -> int:
    """Display width in a terminal: East Asian wide and full-width characters take two cells."""
    return sum(2 if unicodedata.east_asian_width(ch) in "WF" else 1 for ch in s)


def _fit(s: str, width: int) -> str:
    """``s`` cut (with ``…``) or padded with spaces to exactly ``width`` display cells."""
    if _width(s) > width:
        out, w = "", 0
        for ch in s:
            if w + _width(ch) > width - 1:
                break
            out += ch
            w += _width(ch)
        s = out + "…"
    return s + " " * (width - _width(s))


def format_scores(result: dict) -> str:
    """The set's size, the run's pairwise and B-cubed scores, and segmentation mismatches."""
    st = result["statistics"]
    langs = ", ".join(f"{k} {v}" for k, v in st["mentions_by_lang"].items())
    lines = [
        f"Dedup evaluation: {st['n_papers']} papers, {st['n_mentions']} mentions ({langs}) in {st['n_files']} "
        f"articles; embedder {result['embedder']}; match_threshold {result['threshold']:.2f}; run {result['seconds']:.1f} s",
        f"{'':<10} {'precision':>9} {'recall':>7} {'F1':>7}",
        f"{'pairwise':<10} {result['pairwise_precision']:>9.4f} {result['pairwise_recall']:>7.4f} {result['pairwise_f1']:>7.4f}"
        f"   ({result['n_true_pairs']} true of {result['n_predicted_pairs']} predicted pairs, {result['n_gold_pairs']} gold pairs)",
        f"{'B-cubed':<10} {result['bcubed_precision']:>9.4f} {result['bcubed_recall']:>7.4f} {result['bcubed_f1']:>7.4f}"
        f"   ({result['n_predicted_clusters']} predicted clusters, {result['n_gold_clusters']} gold papers)",
    ]
    if result["mismatches"]:
        lines.append("Segmentation mismatches (mentions scored as singletons):")
        lines += [f"  {m['file']}: expected {m['expected']} sections, found {m['found']} [{m['status']}]"
                  for m in result["mismatches"]]
    if result["unannotated"]:
        lines.append("Documents without a gold entry (ignored): " + ", ".join(result["unannotated"]))
    return "\n".join(lines)


def format_sweep(result: dict) -> str:
    """The threshold sweep as a table; the configured threshold is marked with ``*``."""
    head = f"{'threshold':>9} {'pair P':>7} {'pair R':>7} {'pair F1':>7} {'B3 P':>7} {'B3 R':>7} {'B3 F1':>7} {'clusters':>8}"
    lines = ["Threshold sweep (re-clustered with pipeline.dedup.cluster_sections)", head, "-" * len(head)]
    for r in result["sweep"]:
        mark = "*" if abs(r["threshold"] - result["threshold"]) < 1e-9 else " "
        lines.append(f"{r['threshold']:>8.2f}{mark} {r['pairwise_precision']:>7.4f} {r['pairwise_recall']:>7.4f} "
                     f"{r['pairwise_f1']:>7.4f} {r['bcubed_precision']:>7.4f} {r['bcubed_recall']:>7.4f} "
                     f"{r['bcubed_f1']:>7.4f} {r['n_predicted_clusters']:>8}")
    if not result["sweep_reproduces_run"]:
        lines.append("note: re-clustering at the configured threshold does not reproduce the run's partition")
    return "\n".join(lines)


def _side(m: dict) -> list[str]:
    summary = (m.get("summary") or "").replace("\n", " ")
    return [
        f"{m['file']} #{m['position'] + 1} [{m['gold']}]",
        f"title:    {m.get('title') or '-'}",
        f"title_zh: {m.get('title_zh') or '-'}",
        f"summary:  {summary[:SUMMARY_HEAD_CHARS] or '-'}" if m.get("section_id") else "(not aligned: segmentation mismatch)",
    ]


def format_errors(result: dict, column: int = 70) -> str:
    """Every wrong and missed merge with both mentions side by side (columns of ``column``
    display cells)."""
    out = []
    for key, name in (("wrong_merges", "Wrong merges (same predicted paper, different gold papers)"),
                      ("missed_merges", "Missed merges (same gold paper, different predicted papers)")):
        pairs = result[key]
        out.append(f"{name}: {len(pairs)}")
        for n, e in enumerate(pairs, start=1):
            cos = f"cosine {e['cosine']:.3f}" if e["cosine"] is not None else "cosine -"
            score = f"pair score {e['score']:.3f}" if e.get("score") is not None else "pair score -"
            out.append(f"  {n}. {e['a']['gold']} / {e['b']['gold']}  ({score}, {cos})")
            for left, right in zip(_side(e["a"]), _side(e["b"]), strict=True):
                out.append(f"     {_fit(left, column)} | {_fit(right, column)}")
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    """``python -m evaluation.evaluate_dedup``: print scores, sweep and errors; exit 1 when a score
    falls below its floor in ``--baseline``, 2 on a malformed evaluation set or a baseline that
    would be lowered without ``--reason``."""
    parser = argparse.ArgumentParser(prog="python -m evaluation.evaluate_dedup", description=__doc__.split("\n")[0])
    parser.add_argument("fixtures", nargs="?", type=Path, default=DEFAULT_FIXTURES,
                        help="folder with articles/ and gold.json (default: tests/fixtures/dedup)")
    add_baseline_arguments(parser, "<fixtures>/baseline.json")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s", stream=sys.stderr)

    problems = validate_gold(args.fixtures)
    if problems:
        print("Evaluation set is not well-formed:\n  " + "\n  ".join(problems), file=sys.stderr)
        return 2
    result = evaluate_dedup(args.fixtures, out_dir=args.out)
    print(format_scores(result))
    print()
    print(format_sweep(result))
    print()
    print(format_errors(result))

    baseline_path = args.baseline or (args.fixtures / "baseline.json" if args.write_baseline else None)
    return baseline_step(baseline_path, args.write_baseline, args.reason,
                         "Pinned at the scores of the current pipeline (floors rounded down to 2 decimals).",
                         lambda reason, old: baseline_from(result, reason),
                         lambda old, new: [k for k in FLOOR_KEYS if k in old and new[k] < old[k]],
                         lambda baseline: check_baseline(result, baseline))

if __name__ == "__main__":
    sys.exit(main())
