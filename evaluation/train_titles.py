"""Train the title classifier (:mod:`pipeline.title_model`) on annotated articles.

Command line::

    python -m evaluation.train_titles [--real DIR ...] [--fixtures DIR] [--seeds DIR --seeds-gold FILE]
                                    [--out pipeline/data/title_model.json] [--cache FILE]

Training data: every title candidate (:func:`pipeline.candidates.find_candidates`) of every
document the pipeline reads from the given folders, labelled 1 when its text matches a gold
title of its file (:func:`label`), else 0. Sources: real-world batches (folders with a
``gold.json``; the development split only, never ``test/``), the annotated fixtures
(``expected/*.json`` section titles) and the seeds (``tests/gold/seeds.json``).

Validation is across sources, not files (scikit-learn's ``GroupKFold`` with one group per
batch), so the reported precision and recall estimate unseen outlets. The decision threshold is
the one that maximises F1 of the out-of-fold probabilities; the final model is fitted on all the
data. Needs scikit-learn (a test/training dependency, ``pip install -e .[test]``).
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
from pathlib import Path

import numpy as np
import pandas as pd

from evaluation.evaluate import (
    DEFAULT_FIXTURES,
    DEFAULT_SEEDS,
    DEFAULT_SEEDS_GOLD,
    load_annotations,
    title_key,
)
from pipeline.candidates import FEATURES, find_candidates
from pipeline.title_model import MODEL_PATH

REPO = Path(__file__).resolve().parents[1]
DEFAULT_REAL = REPO / "tests" / "fixtures" / "real" / "dev"
#: Trees, depth and learning rate of the ensemble (scikit-learn's defaults but shallower trees,
#: to generalise across outlets from a few thousand candidates).
N_TREES, MAX_DEPTH, LEARNING_RATE, MIN_LEAF = 150, 3, 0.1, 5
#: Shortest folded title matched by containment rather than equality.
MIN_CONTAINED_KEY = 8


def label(cand_title: str, gold_keys: list[str]) -> bool:
    """Whether a candidate's text names a gold title: equal keys (:func:`title_key`), or one
    key inside the other when both are at least :data:`MIN_CONTAINED_KEY` long and the shorter
    is at least 60% of the longer."""
    k = title_key(cand_title)
    if not k:
        return False
    for g in gold_keys:
        if k == g:
            return True
        if min(len(k), len(g)) >= MIN_CONTAINED_KEY and (k in g or g in k) and min(len(k), len(g)) >= 0.6 * max(len(k), len(g)):
            return True
    return False


def _gold_sources(real: list[Path], fixtures: Path | None, seeds: Path | None,
                  seeds_gold: Path | None) -> tuple[dict[str, Path], dict[str, list[str]], dict[str, str]]:
    """Files to read (corpus name -> path), gold title keys per corpus name, group per name."""
    files: dict[str, Path] = {}
    gold: dict[str, list[str]] = {}
    group: dict[str, str] = {}
    for root in real:
        batches = [root] if (root / "gold.json").is_file() else sorted(p.parent for p in root.glob("*/gold.json"))
        for batch in batches:
            entries = json.loads((batch / "gold.json").read_text(encoding="utf-8"))["files"]
            for name, entry in entries.items():
                key = f"{batch.name}__{name}"
                files[key] = batch / name
                gold[key] = [title_key(t) for p in entry["papers"] for t in (p.get("title"), p.get("title_en")) if t]
                group[key] = batch.name
    if fixtures is not None:
        for a in load_annotations(fixtures).values():
            file = a["file"]
            files[f"fixture__{file}"] = fixtures / "articles" / file
            gold.setdefault(f"fixture__{file}", []).extend(title_key(t) for t in a["sections"])
            group[f"fixture__{file}"] = "fixtures"
    if seeds is not None and seeds_gold is not None:
        by_file = json.loads(Path(seeds_gold).read_text(encoding="utf-8"))["sections_by_file"]
        for name, entries in by_file.items():
            files[f"seed__{name}"] = seeds / name
            gold[f"seed__{name}"] = [title_key(t) for e in entries for t in (e.get("title"), e.get("title_zh")) if t]
            group[f"seed__{name}"] = "seeds"
    return files, gold, group


def read_documents(files: dict[str, Path]) -> pd.DataFrame:
    """Run the pipeline over ``files`` (copied under their corpus names) and return one row per
    document: ``name`` (the corpus file name, without a JSONL line), ``text``, ``dropped``."""
    from pipeline.config import load_config
    from pipeline.runner import run

    config = load_config()
    config.run.quiet = True
    with tempfile.TemporaryDirectory(prefix="train-titles-") as tmp:
        corpus = Path(tmp) / "corpus"
        corpus.mkdir()
        for name, path in files.items():
            shutil.copyfile(path, corpus / name)
        result = run(corpus, Path(tmp) / "out", config, progress=False)
        frames = dict(result.frames)
    docs = frames["documents"]
    failed = docs[docs["status"] == "error"]
    records = failed["source_path"].str.contains("#", regex=False)  # a record of a records file that is
    if records.any():  # no document (no title, no text) has no candidate to learn from
        print(f"{int(records.sum())} records that are no document left out, e.g. {failed['error'][records].iat[0]}",
              file=sys.stderr)
        failed = failed[~records]
    if len(failed):
        raise RuntimeError(f"{len(failed)} training documents failed in the pipeline, e.g. "
                           f"{failed['source_path'].iat[0]}: {failed['error'].iat[0]}")
    docs = docs[docs["status"] == "ok"]
    dropped: dict[str, list[dict]] = {}
    for row in frames["dropped"].to_dict("records"):
        dropped.setdefault(row["doc_id"], []).append({"char_start": row["char_start"], "char_end": row["char_end"]})
    return pd.DataFrame({
        "name": [p.split("#")[0] for p in docs["source_path"]],
        "text": list(docs["text"]),
        "dropped": [json.dumps(dropped.get(d, [])) for d in docs["doc_id"]],
    })


def training_rows(docs: pd.DataFrame, gold: dict[str, list[str]], group: dict[str, str]):
    """``(X, y, groups, titles)`` over every candidate of every document."""
    from pipeline.segment import kept_lines

    xs, ys, groups, titles = [], [], [], []
    for name, text, dropped in zip(docs["name"], docs["text"], docs["dropped"], strict=True):
        for c in find_candidates(kept_lines(text, json.loads(dropped))):
            xs.append(c.vector())
            ys.append(label(c.title, gold.get(name, [])))
            groups.append(group.get(name, name))
            titles.append((name, c.title))
    return np.array(xs, dtype=float), np.array(ys, dtype=int), np.array(groups), titles


def _fit(x: np.ndarray, y: np.ndarray):
    from sklearn.ensemble import GradientBoostingClassifier

    return GradientBoostingClassifier(n_estimators=N_TREES, max_depth=MAX_DEPTH, learning_rate=LEARNING_RATE,
                                      min_samples_leaf=MIN_LEAF, random_state=0).fit(x, y)


def cross_validate(x: np.ndarray, y: np.ndarray, groups: np.ndarray, folds: int = 5) -> np.ndarray:
    """Out-of-fold probabilities, folds by group (source)."""
    from sklearn.model_selection import GroupKFold

    proba = np.zeros(len(y))
    for train, test in GroupKFold(n_splits=min(folds, len(set(groups)))).split(x, y, groups):
        proba[test] = _fit(x[train], y[train]).predict_proba(x[test])[:, 1]
    return proba


def best_threshold(y: np.ndarray, proba: np.ndarray) -> tuple[float, float, float, float]:
    """``(threshold, precision, recall, f1)``: the lowest of the thresholds (0.05..0.95, step
    0.025) whose F1 is within 0.01 of the best: the most recall for no real loss of F1 (a missed
    paper is lost, an extra section can still be told by its fields)."""
    rows = []
    for t in np.arange(0.05, 0.96, 0.025):
        pred = proba >= t
        tp = int((pred & (y == 1)).sum())
        p = tp / max(int(pred.sum()), 1)
        r = tp / max(int(y.sum()), 1)
        rows.append((round(float(t), 3), p, r, 2 * p * r / (p + r) if p + r else 0.0))
    top = max(f for *_, f in rows)
    near = [row for row in rows if row[3] >= top - 0.01]
    return near[0]


def export(model, threshold: float, meta: dict) -> dict:
    """The fitted ensemble as the JSON of :class:`pipeline.title_model.TitleModel`."""
    prior = model.init_.class_prior_[1]
    trees = []
    for est in model.estimators_[:, 0]:
        t = est.tree_
        trees.append({"left": t.children_left.tolist(), "right": t.children_right.tolist(),
                      "feature": t.feature.tolist(), "threshold": [round(v, 6) for v in t.threshold.tolist()],
                      "value": [round(v, 6) for v in t.value[:, 0, 0].tolist()]})
    return {"features": list(FEATURES), "learning_rate": model.learning_rate,
            "init_log_odds": float(np.log(prior / (1 - prior))), "threshold": threshold,
            "trained_on": meta, "trees": trees}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m evaluation.train_titles", description=__doc__.split("\n")[0])
    ap.add_argument("--real", type=Path, nargs="*", default=[DEFAULT_REAL])
    ap.add_argument("--fixtures", type=Path, default=DEFAULT_FIXTURES)
    ap.add_argument("--seeds", type=Path, default=DEFAULT_SEEDS)
    ap.add_argument("--seeds-gold", type=Path, default=DEFAULT_SEEDS_GOLD)
    ap.add_argument("--out", type=Path, default=MODEL_PATH)
    ap.add_argument("--cache", type=Path, help="Parquet of the documents read (reused when it exists)")
    args = ap.parse_args(argv)
    if any("test" in p.resolve().parts[-2:] and "real" in p.resolve().parts for p in args.real):
        print("refusing to train on the held-out test split", file=sys.stderr)
        return 2
    real = [p for p in args.real if p.exists()]
    if not args.seeds.is_dir():
        print(f"seeds not found at {args.seeds} (set PIPELINE_SEEDS): training without them", file=sys.stderr)
    files, gold, group = _gold_sources(real, args.fixtures, args.seeds if args.seeds.is_dir() else None,
                                       args.seeds_gold)
    if args.cache and args.cache.is_file():
        docs = pd.read_parquet(args.cache)
    else:
        docs = read_documents(files)
        if args.cache:
            docs.to_parquet(args.cache)
    x, y, groups, _ = training_rows(docs, gold, group)
    proba = cross_validate(x, y, groups)
    threshold, p, r, f = best_threshold(y, proba)
    print(f"{len(y)} candidates, {int(y.sum())} titles, {len(set(groups))} sources; "
          f"cross-source: threshold {threshold}, precision {p:.3f}, recall {r:.3f}, F1 {f:.3f}")
    model = _fit(x, y)
    meta = {"candidates": len(y), "titles": int(y.sum()), "sources": len(set(groups)),
            "cv_precision": round(p, 3), "cv_recall": round(r, 3), "cv_f1": round(f, 3)}
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(export(model, threshold, meta)) + "\n", encoding="utf-8")
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
