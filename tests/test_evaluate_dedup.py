"""Dedup evaluation (issue 5, items 6 and 7): the metrics on hand-computed cases, the evaluation
set in ``tests/fixtures/dedup`` (gold consistency, size, languages), and one real run of the
pipeline over it that must not fall below the floors pinned in ``tests/fixtures/dedup/baseline.json``.
"""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

import evaluation.evaluate_dedup as evaluate_dedup_module
from evaluation.evaluate import floor2
from evaluation.evaluate_dedup import (
    FLOOR_KEYS,
    LANGS,
    SWEEP_THRESHOLDS,
    align_mentions,
    baseline_from,
    check_baseline,
    clustering_errors,
    evaluate_dedup,
    format_errors,
    format_scores,
    format_sweep,
    load_gold,
    main,
    predicted_labels,
    score_clusters,
    set_statistics,
    validate_gold,
)

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "dedup"
BASELINE = FIXTURES / "baseline.json"


# --- metrics ----------------------------------------------------------------------------------


def test_scores_of_a_split_and_a_merge_computed_by_hand():
    # gold {1,2,3} {4,5}; predicted {1,2} {3,4,5}
    s = score_clusters(["a", "a", "a", "b", "b"], ["1", "1", "2", "2", "2"])
    # pairs: gold 3 + 1 = 4, predicted 1 + 3 = 4, true (1,2) and (4,5) = 2
    assert (s["n_gold_pairs"], s["n_predicted_pairs"], s["n_true_pairs"]) == (4, 4, 2)
    assert s["pairwise_precision"] == pytest.approx(0.5)
    assert s["pairwise_recall"] == pytest.approx(0.5)
    assert s["pairwise_f1"] == pytest.approx(0.5)
    # B-cubed precision per mention: 2/2, 2/2, 1/3, 2/3, 2/3 -> 11/15; recall: 2/3, 2/3, 1/3, 2/2, 2/2 -> 11/15
    assert s["bcubed_precision"] == pytest.approx(11 / 15)
    assert s["bcubed_recall"] == pytest.approx(11 / 15)
    assert s["bcubed_f1"] == pytest.approx(11 / 15)
    assert (s["n_mentions"], s["n_gold_clusters"], s["n_predicted_clusters"]) == (5, 2, 2)


def test_scores_when_everything_is_merged():
    s = score_clusters(["a", "b", "c", "c"], ["x", "x", "x", "x"])
    assert s["pairwise_precision"] == pytest.approx(1 / 6)  # 1 true pair of 6
    assert s["pairwise_recall"] == 1.0
    assert s["pairwise_f1"] == pytest.approx(2 * (1 / 6) / (1 / 6 + 1))
    # B-cubed precision: 1/4, 1/4, 2/4, 2/4 -> 0.375; recall 1 for every mention
    assert s["bcubed_precision"] == pytest.approx(0.375)
    assert s["bcubed_recall"] == 1.0
    assert s["bcubed_f1"] == pytest.approx(2 * 0.375 / 1.375)


def test_scores_when_nothing_is_merged_and_when_all_is_right():
    s = score_clusters(["a", "a", "a"], ["1", "2", "3"])
    assert s["pairwise_precision"] == 1.0 and s["pairwise_recall"] == 0.0 and s["pairwise_f1"] == 0.0
    assert s["bcubed_precision"] == 1.0 and s["bcubed_recall"] == pytest.approx(1 / 3)
    assert s["bcubed_f1"] == pytest.approx(0.5)
    # label values of the two sides are never compared: "b" here is not the gold "b"
    perfect = score_clusters(["a", "b", "b"], ["b", "a", "a"])
    assert all(perfect[k] == 1.0 for k in ("pairwise_precision", "pairwise_recall", "pairwise_f1",
                                           "bcubed_precision", "bcubed_recall", "bcubed_f1"))
    empty = score_clusters([], [])
    assert empty["pairwise_f1"] == 1.0 and empty["bcubed_f1"] == 1.0 and empty["n_mentions"] == 0
    with pytest.raises(ValueError, match="2 gold labels but 1 predicted"):
        score_clusters(["a", "a"], ["1"])


def test_a_segmentation_mismatch_makes_singletons_and_errors_pair_up():
    gold = {"papers": {"p": {"title": "P", "arxiv_id": None}, "q": {"title": "Q", "arxiv_id": None}},
            "files": {"01_en_a.txt": ["p", "q"], "02_en_b.txt": ["p"], "03_en_c.txt": ["q"]}}
    documents = pd.DataFrame({"doc_id": ["d1", "d2", "d3"], "source_path": ["01_en_a.txt", "02_en_b.txt", "03_en_c.txt"],
                              "status": ["ok", "ok", "ok"]})
    sections = pd.DataFrame({
        "section_id": ["d1-000", "d1-001", "d2-000", "d2-001", "d3-000"],
        "doc_id": ["d1", "d1", "d2", "d2", "d3"], "ordinal": [0, 1, 0, 1, 0],
        "heading": ["P", "Q", "P", "extra", "Q"], "title": ["P", "Q", "P", None, "Q"], "title_zh": [None] * 5,
        "summary": [None] * 5, "arxiv_id": [None] * 5, "paper_id": ["x", "y", "x", "z", "x"],
    })
    mentions, mismatches, unannotated = align_mentions(gold, documents, sections)
    assert [(m["file"], m["gold"], m["section_id"]) for m in mentions] == [
        ("01_en_a.txt", "p", "d1-000"), ("01_en_a.txt", "q", "d1-001"), ("02_en_b.txt", "p", None),
        ("03_en_c.txt", "q", "d3-000")]
    assert mismatches == [{"file": "02_en_b.txt", "expected": 1, "found": 2, "status": "ok", "headings": ["P", "extra"]}]
    assert unannotated == []
    predicted = predicted_labels(mentions, dict(zip(sections["section_id"], sections["paper_id"], strict=True)))
    assert predicted == ["cluster:x", "cluster:y", "unaligned:02_en_b.txt#0", "cluster:x"]
    wrong, missed = clustering_errors(mentions, predicted)
    assert [(w["a"]["gold"], w["b"]["gold"]) for w in wrong] == [("p", "q")]  # d1-000 with d3-000
    assert [(m["a"]["section_id"], m["b"]["section_id"]) for m in missed] == [("d1-000", None), ("d1-001", "d3-000")]
    s = score_clusters([m["gold"] for m in mentions], predicted)
    assert len(wrong) == s["n_predicted_pairs"] - s["n_true_pairs"]
    assert len(missed) == s["n_gold_pairs"] - s["n_true_pairs"]


# --- the evaluation set -----------------------------------------------------------------------


def test_gold_file_is_consistent():
    problems = validate_gold(FIXTURES)
    assert not problems, "\n".join(problems)


def test_set_is_large_and_covers_the_three_languages():
    gold = load_gold(FIXTURES)
    st = set_statistics(gold)
    assert st["n_papers"] >= 25 and st["n_mentions"] >= 60
    assert set(st["mentions_by_lang"]) == set(LANGS)
    assert all(n >= 15 for n in st["mentions_by_lang"].values()), st["mentions_by_lang"]
    assert sum(1 for n in st["mentions_per_paper"].values() if n >= 2) >= 20
    # a paper mentioned in one language only tests nothing across languages: most are not
    langs_of = {}
    for name, labels in gold["files"].items():
        for label in labels:
            langs_of.setdefault(label, set()).add(name.split("_")[1])
    assert sum(1 for v in langs_of.values() if len(v) >= 2) >= 20


def test_set_holds_a_gb18030_and_a_big5_article():
    """The article named ``..._<codec>.txt`` is stored in that codec (not UTF-8) and decodes to
    text in its script ("论文" in Simplified, "論文" in Traditional)."""
    for codec, word in (("gb18030", "论文"), ("big5", "論文")):
        paths = list((FIXTURES / "articles").glob(f"*_{codec}.txt"))
        assert len(paths) == 1, (codec, paths)
        data = paths[0].read_bytes()
        with pytest.raises(UnicodeDecodeError):
            data.decode("utf-8")
        assert word in data.decode(codec)


def test_validation_reports_unknown_labels_missing_articles_and_repeats(tmp_path):
    (tmp_path / "articles").mkdir()
    (tmp_path / "articles" / "01_en_a.txt").write_text("x", encoding="utf-8")
    (tmp_path / "articles" / "notag.txt").write_text("x", encoding="utf-8")
    gold = {"papers": {"p": {"title": "P", "arxiv_id": "1706.03762"}, "q": {"title": "Q", "arxiv_id": "1706.03762"},
                       "r": {"title": "R", "arxiv_id": "arXiv 1"}},
            "files": {"01_en_a.txt": ["p", "p", "zz"], "02_en_gone.txt": ["q"]}}
    (tmp_path / "gold.json").write_text(json.dumps(gold), encoding="utf-8")
    problems = validate_gold(tmp_path)
    expected = ["share the arXiv id 1706.03762", "'arXiv 1' is neither null", "02_en_gone.txt: listed in gold.json",
                "notag.txt: article without a gold entry", "notag.txt: no language tag", "unknown paper label 'zz'",
                "label 'p' appears 2 times", "paper 'r' is never mentioned"]
    for text in expected:
        assert any(text in p for p in problems), (text, problems)
    assert len(problems) == len(expected), problems


def test_baseline_file_is_complete_and_floors_round_down():
    baseline = json.loads(BASELINE.read_text(encoding="utf-8"))
    assert set(baseline) == {*FLOOR_KEYS, "reason"} and baseline["reason"].strip()
    assert all(0.0 <= baseline[k] <= 1.0 and baseline[k] == floor2(baseline[k]) for k in FLOOR_KEYS)
    scores = {"pairwise_precision": 0.8649, "pairwise_f1": 0.8533, "bcubed_f1": 0.9496}
    pinned = baseline_from(scores, "test")
    assert pinned == {"pairwise_precision": 0.86, "pairwise_f1": 0.85, "bcubed_f1": 0.94, "reason": "test"}
    assert check_baseline(scores, pinned) == []
    assert check_baseline({**scores, "bcubed_f1": 0.9}, pinned) == ["bcubed_f1 0.9000 is below its floor 0.94"]


# --- one real run -----------------------------------------------------------------------------


@pytest.fixture(scope="module")
def dedup_out(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("dedup_eval_out")


@pytest.fixture(scope="module")
def result(dedup_out, use_embedder) -> dict:
    return evaluate_dedup(FIXTURES, embedder=use_embedder, out_dir=dedup_out)


def test_scores_not_below_baseline(result):
    failures = check_baseline(result, json.loads(BASELINE.read_text(encoding="utf-8")))
    assert not failures, "\n".join([*failures, "", format_scores(result), "", format_sweep(result), "",
                                     format_errors(result)])


def test_every_article_is_segmented_as_the_gold_says(result, dedup_out):
    assert result["mismatches"] == [] and result["unannotated"] == []
    assert all(m["section_id"] is not None for m in result["mentions"])
    docs = pd.read_parquet(dedup_out / "documents.parquet")
    assert (docs["status"] == "ok").all()
    assert dict(zip(docs["source_path"], docs["lang"], strict=True)) == {
        p: p.split("_")[1] for p in docs["source_path"]}  # the language tag of each name is right


def test_sweep_covers_the_thresholds_and_reproduces_the_run(result):
    assert [r["threshold"] for r in result["sweep"]] == list(SWEEP_THRESHOLDS)
    assert SWEEP_THRESHOLDS[0] == 0.40 and SWEEP_THRESHOLDS[-1] == 0.90 and len(SWEEP_THRESHOLDS) == 11
    assert result["sweep_reproduces_run"]
    at_run = next(r for r in result["sweep"] if r["threshold"] == pytest.approx(result["threshold"]))
    assert at_run["pairwise_f1"] == pytest.approx(result["pairwise_f1"])
    assert at_run["bcubed_f1"] == pytest.approx(result["bcubed_f1"])
    assert result["sweep"][0]["n_predicted_clusters"] <= result["sweep"][-1]["n_predicted_clusters"]


def test_error_lists_account_for_every_wrong_and_missing_pair(result):
    assert len(result["wrong_merges"]) == result["n_predicted_pairs"] - result["n_true_pairs"]
    assert len(result["missed_merges"]) == result["n_gold_pairs"] - result["n_true_pairs"]
    report = format_errors(result)
    for e in result["wrong_merges"] + result["missed_merges"]:
        assert e["a"]["file"] in report and e["b"]["file"] in report
        assert e["cosine"] is not None


def test_command_line_exit_codes(result, monkeypatch, tmp_path, capsys):
    monkeypatch.setattr(evaluate_dedup_module, "evaluate_dedup", lambda *a, **k: result)
    assert main([str(FIXTURES), "--baseline", str(BASELINE)]) == 0
    high = tmp_path / "high.json"
    high.write_text(json.dumps({k: 1.0 for k in FLOOR_KEYS} | {"reason": "test"}), encoding="utf-8")
    worse = {**result, "pairwise_f1": 0.5, "bcubed_f1": 0.5}  # a run below the 1.0 floors
    monkeypatch.setattr(evaluate_dedup_module, "evaluate_dedup", lambda *a, **k: worse)
    assert main([str(FIXTURES), "--baseline", str(high)]) == 1
    out = capsys.readouterr().out
    assert "REGRESSION" in out and "Threshold sweep" in out and "Missed merges" in out
