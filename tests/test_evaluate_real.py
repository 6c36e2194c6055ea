"""The real-world scorer (evaluation.evaluate_real): its matching, field, junk and dedup rules on
values taken from the gold of shared/corpora/real-pages, and one run over those 12 pages."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from evaluation.evaluate_real import (
    FIELDS,
    FLOOR_KEYS,
    baseline_from,
    check_baseline,
    collect_batches,
    evaluate_real,
    field_correct,
    gold_award,
    gold_clusters,
    jaccard,
    junk_hits,
    junk_ratio,
    match_sections,
    pairwise,
    section_chars,
)

REPO = Path(__file__).resolve().parents[1]
REAL_PAGES = Path(os.environ.get("PIPELINE_REAL_PAGES") or REPO.parent / "shared" / "corpora" / "real-pages")

# gold entries of real-pages/gold.json (files 01, 05, 08, 11, 12), as annotated
VAR = {"title": "Visual Autoregressive Modeling: Scalable Image Generation via Next-Scale Prediction",
       "title_en": "Visual Autoregressive Modeling: Scalable Image Generation via Next-Scale Prediction",
       "arxiv_id": None, "venue": "NeurIPS", "year": 2024, "award": "Best Paper",
       "authors": ["田柯宇"], "institutions": ["北京大学", "字节跳动"]}
VAR_HANT = {"title": "視覺自回歸建模:基於下一尺度預測的可擴展影像生成",
            "title_en": "Visual Autoregressive Modeling: Scalable Image Generation via Next-Scale Prediction",
            "arxiv_id": None, "venue": "NeurIPS", "year": 2024, "award": "Best Paper",
            "authors": ["田柯宇"], "institutions": ["北京大學", "字節跳動"]}
GATED = {"title": None,
         "title_en": "Gated Attention for Large Language Models: Non-linearity, Sparsity, and Attention-Sink-Free",
         "arxiv_id": "2505.06708", "venue": "NeurIPS", "year": 2025, "award": None,
         "authors": ["Zihan Qiu", "Zekun Wang"], "institutions": ["Queen Team"]}
SAFETY_11 = {"title": "Safety Alignment Should be Made More Than Just a Few Tokens Deep",
             "title_en": "Safety Alignment Should be Made More Than Just a Few Tokens Deep",
             "arxiv_id": None, "venue": "ICLR", "year": 2025, "award": "Outstanding Paper",
             "authors": ["Xiangyu Qi", "Ashwinee Panda"], "institutions": ["普林斯顿大学", "Google DeepMind"]}
SAFETY_12 = {"title": "Safety Alignment Should Be Made More Than Just a Few Tokens Deep",
             "title_en": "Safety Alignment Should be Made More Than Just a Few Tokens Deep",
             "arxiv_id": "2406.05946", "venue": "ICLR", "year": 2025, "award": "Outstanding Paper",
             "authors": [], "institutions": ["Princeton", "Google DeepMind"]}
TOKENS = {"title": "Not All Tokens Are What You Need for Pretraining",
          "title_en": "Not All Tokens Are What You Need for Pretraining",
          "arxiv_id": None, "venue": "NeurIPS", "year": 2024, "award": "Best Paper Runner-Up",
          "authors": ["Zhenghao Lin", "Zhibin Gou"], "institutions": ["厦门大学", "清华大学", "微软"]}


def test_match_exact_script_arxiv_and_containment():
    sections = [
        {"title": None, "title_zh": "视觉自回归建模:基于下一尺度预测的可扩展影像生成"},  # zh-Hans of file 05's title
        {"title": "GPT 超越扩散、视觉生成 Scaling Law 时刻!北大 & 字节提出 VAR 范式", "title_zh": None},  # a cross-reference
        {"title": "Gated Attention", "arxiv_id": "2505.06708v2"},
        {"title": "Safety Alignment Should be Made More Than Just a Few Tokens"},  # 59 of 64 folded chars
    ]
    assert match_sections([VAR_HANT, GATED, SAFETY_11], sections) == [0, 2, 3]
    # below the length ratio: the mojibake heading of file 07 glued to its title
    glued = {"title": "Four Best Papers (incl. one in Datasets & Benchmarks)Artificial Hivemind: "
                      "The Open-Ended Homogeneity of Language Models (and Beyond)"}
    hivemind = {"title": "Artificial Hivemind: The Open-Ended Homogeneity of Language Models (and Beyond)",
                "title_en": "Artificial Hivemind: The Open-Ended Homogeneity of Language Models (and Beyond)",
                "arxiv_id": None}
    assert match_sections([hivemind], [glued]) == [None]


def test_each_gold_paper_matched_once_in_document_order():
    twice = [{"title": VAR["title"]}, {"title": VAR["title"]}]
    assert match_sections([VAR], twice) == [0]
    # files 11 and 12 write the same title: the first unmatched gold paper takes the section
    assert match_sections([SAFETY_11, SAFETY_12], [{"title": SAFETY_12["title"]}]) == [0, None]


def test_an_untitled_gold_paper_matches_an_untitled_section():
    untitled = {"title": None, "title_en": "Attention Is All You Need", "arxiv_id": None}
    sections = [{"title": VAR["title"]}, {"title": None, "title_zh": None}]
    assert match_sections([VAR, untitled], sections) == [0, 1]
    # a titled section is not taken, nor a section whose arXiv id names another paper
    assert match_sections([untitled], [{"title": "Something Else Entirely"}]) == [None]
    linked = {**untitled, "arxiv_id": "1706.03762"}
    assert match_sections([linked], [{"title": None, "arxiv_id": "2404.02905"}]) == [None]
    assert match_sections([linked], [{"title": None, "arxiv_id": "1706.03762v7"}]) == [0]


def test_field_comparison():
    section = {"title": "Visual Autoregressive Modeling: Scalable Image Generation via Next-Scale Prediction",
               "title_zh": None, "venue": "NeurIPS", "year": 2024, "award": "best_paper",
               "authors": ["田柯宇"], "institutions": ["北京大學", "字節跳動"], "arxiv_id": None}
    assert all(field_correct(f, VAR, section) for f in FIELDS)  # institutions compared in zh-Hans
    assert gold_award("Best Paper Runner-Up") == "best_paper_runner_up"
    assert gold_award("test_of_time") == "test_of_time" and gold_award(None) is None
    partial = {**section, "title": TOKENS["title"], "award": None, "authors": ["Zhenghao Lin"],
               "institutions": ["厦门大学", "清华大学"]}
    assert field_correct("title", TOKENS, partial)
    assert not field_correct("award", TOKENS, partial)
    assert not field_correct("authors", TOKENS, partial) and field_correct("authors_lenient", TOKENS, partial)
    assert not field_correct("institutions", TOKENS, partial) and field_correct("institutions_lenient", TOKENS, partial)
    # a text that never writes the title wants none
    unwritten = {**TOKENS, "title": None}
    assert field_correct("title", unwritten, {"title": None, "title_zh": None})
    assert not field_correct("title", unwritten, {"title": "Some Other Words", "title_zh": None})
    # a null gold wants nothing: file 08's paper has no award, file 12's no authors
    assert field_correct("award", GATED, {"award": None}) and not field_correct("award", GATED, {"award": "other"})
    assert field_correct("authors", SAFETY_12, {"authors": []})
    assert field_correct("arxiv_id", SAFETY_12, {"arxiv_id": "2406.05946v1"})
    assert jaccard(frozenset(), frozenset()) == 1.0


def test_junk_hits_and_ratio():
    # file 01: the repost prefix glued to the headline, and the cross-referenced 机器之心 article
    junk = ["文章来源于互联网:", "GPT 超越扩散、视觉生成 Scaling Law 时刻!北大 & 字节提出 VAR 范式"]
    texts = ["文章来源于互联网: NeurIPS 2024 最佳论文揭晓", "Visual Autoregressive Modeling (视觉自回归建模)"]
    chars, hit = junk_hits(junk, texts)
    assert (chars, hit) == (len("文章来源于互联网:"), 1)
    total = section_chars(texts)
    assert 0 < junk_ratio(chars, total) < 1 and junk_ratio(0, 0) == 0.0


def test_pairwise_dedup():
    # files 11 and 12 mention the same paper (one by title_en, one with an arXiv id); 01 another one
    clusters = gold_clusters([SAFETY_11, SAFETY_12, TOKENS, {**SAFETY_12, "title_en": None}])
    assert clusters[0] == clusters[1] == clusters[3] != clusters[2]
    right = pairwise(clusters[:3], ["p-a", "p-a", "p-b"])
    assert (right["dedup_precision"], right["dedup_recall"], right["dedup_f1"]) == (1.0, 1.0, 1.0)
    split = pairwise(clusters[:3], ["p-a", "p-c", "p-b"])
    assert (split["dedup_precision"], split["dedup_recall"]) == (1.0, 0.0)
    merged = pairwise(clusters[:3], ["p-a", "p-a", "p-a"])
    assert merged["dedup_precision"] == pytest.approx(1 / 3) and merged["dedup_recall"] == 1.0


def test_baseline_floors_and_ceiling():
    scores = {**dict.fromkeys(FLOOR_KEYS, 0.4567), "junk_ratio": 0.01234,
              "field_accuracy": dict.fromkeys(FIELDS, 0.5)}
    baseline = baseline_from(scores, "test")
    assert baseline["section_recall"] == 0.45 and baseline["max_junk_ratio"] == 0.0124
    assert check_baseline(scores, baseline) == []
    worse = {**scores, "junk_ratio": 0.02, "field_accuracy": {**scores["field_accuracy"], "award": 0.1}}
    assert len(check_baseline(worse, baseline)) == 2


@pytest.fixture(scope="module")
def real_pages() -> Path:
    if not (REAL_PAGES / "gold.json").is_file():
        if os.environ.get("CI"):
            pytest.fail(f"{REAL_PAGES} is missing (CI is set: it must be there)")
        pytest.skip(f"{REAL_PAGES} is not here (set PIPELINE_REAL_PAGES to run this test)")
    return REAL_PAGES


def test_end_to_end_on_real_pages(real_pages, use_embedder, tmp_path):
    batches = collect_batches([real_pages])
    assert batches == [("-", real_pages)]
    scores = evaluate_real(batches, embedder=use_embedder)
    assert len(scores["files"]) == 12 == len(json.loads((real_pages / "gold.json").read_text())["files"])
    assert scores["n_gold"] == sum(r["gold"] for r in scores["files"]) == 25
    rates = [scores[k] for k in (*FLOOR_KEYS, "section_f1", "dedup_recall", "junk_ratio")]
    rates += list(scores["field_accuracy"].values())
    assert all(0.0 <= r <= 1.0 for r in rates)
    assert scores["n_matched"] > 0 and scores["problems"] == []


def test_the_real_corpus_gold_checks_out() -> None:
    # every verbatim string in its file, no file twice, no source in both splits
    proc = subprocess.run([sys.executable, str(Path(__file__).parent / "fixtures" / "real" / "check_gold.py")],
                          capture_output=True, text=True, check=False)
    assert proc.returncode == 0, proc.stdout[-2000:]
    assert proc.stdout.rstrip().endswith(" 0 problems")
