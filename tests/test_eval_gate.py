"""Evaluation gate (after trafilatura's ``tests/eval_gate.py``): the pipeline's segmentation and
cleaning of the annotated fixture articles in ``tests/fixtures/segmentation`` must not fall below
the floors pinned in ``tests/eval_baseline.json``.

Raising a floor is easy (``make eval`` shows the scores; ``python -m pipeline.evaluate
--write-baseline`` pins them); lowering one needs a ``--reason``, kept in the baseline file.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pipeline.evaluate import (
    CEILING_KEYS,
    FLOOR_KEYS,
    baseline_from,
    check_baseline,
    evaluate,
    floor2,
    format_failures,
    format_table,
    load_annotations,
    loosened,
    score_document,
    validate_fixtures,
)

from conftest import read_outputs
from gold_checks import assert_coverage

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "segmentation"
BASELINE = Path(__file__).resolve().parent / "eval_baseline.json"


@pytest.fixture(scope="module")
def eval_out(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("eval_out")


@pytest.fixture(scope="module")
def scores(eval_out, use_embedder) -> dict:
    return evaluate(FIXTURES, eval_out, embedder=use_embedder)


def test_every_character_of_every_fixture_in_exactly_one_span(scores, eval_out):
    """The output contract's invariant, on every fixture document (issue 3, item 8)."""
    outputs = read_outputs(eval_out)
    assert (outputs["documents"]["status"] == "ok").sum() >= 29
    assert_coverage(outputs)


def test_scores_not_below_baseline(scores):
    baseline = json.loads(BASELINE.read_text(encoding="utf-8"))
    failures = check_baseline(scores, baseline)
    assert not failures, "\n".join([*failures, "", format_table(scores), "", format_failures(scores)])


def test_every_annotated_document_was_read(scores):
    unread = [(r["document"], r["status"]) for r in scores["documents"] if r["status"] != "ok"]
    assert not unread, unread


def test_baseline_file_is_complete():
    baseline = json.loads(BASELINE.read_text(encoding="utf-8"))
    assert set(baseline) == {*FLOOR_KEYS, *CEILING_KEYS, "reason"}
    assert all(0.0 <= baseline[k] <= 1.0 and baseline[k] == floor2(baseline[k]) for k in FLOOR_KEYS)
    assert all(isinstance(baseline[k], int) and baseline[k] >= 0 for k in CEILING_KEYS)
    assert baseline["reason"].strip()


def test_annotations_are_well_formed():
    problems = validate_fixtures(FIXTURES)
    assert not problems, "\n".join(problems)


def test_fixture_set_covers_the_formats_and_encodings():
    annotations = load_annotations(FIXTURES)
    suffixes = {Path(a["file"]).suffix for a in annotations.values()}
    assert {".txt", ".md", ".html", ".jsonl"} <= suffixes
    encodings = {json.loads((FIXTURES / "expected" / f"{p.name}.json").read_text(encoding="utf-8"))["encoding"]
                 for p in (FIXTURES / "articles").iterdir()}
    assert {"utf-8", "utf-8-sig", "utf-16", "gb18030", "big5"} <= encodings
    assert len({a["file"] for a in annotations.values()}) >= 24
    assert any(not a["sections"] for a in annotations.values())  # an article about no paper


def test_validation_reports_a_missing_substring_and_a_missing_annotation(tmp_path):
    (tmp_path / "articles").mkdir()
    (tmp_path / "expected").mkdir()
    text = "论文 1：Attention Is All You Need\n\n" + "本文提出 Transformer 架构。" * 20 + "\n"
    (tmp_path / "articles" / "a.txt").write_text(text, encoding="utf-8")
    (tmp_path / "articles" / "b.txt").write_text(text + "\n", encoding="utf-8")
    (tmp_path / "expected" / "a.txt.json").write_text(json.dumps({
        "sections": ["Attention Is All You Need"], "junk": ["扫码关注"], "content": ["Transformer 架构"],
        "notes": "test", "encoding": "utf-8"}), encoding="utf-8")
    problems = validate_fixtures(tmp_path)
    assert any("b.txt: article without expected" in p for p in problems)
    assert any("junk string not in the article: '扫码关注'" in p for p in problems)
    assert len(problems) == 2, problems


def test_scorer_matches_by_folded_title_or_simplified_title_zh():
    expected = {"sections": ["Attention Is All You Need", "注意力就是你所需要的一切"],
                "junk": ["扫码关注我们"], "content": ["提出 Transformer"]}
    sections = [
        {"title": "attention is all you need.", "title_zh": None, "text": "正文 扫码 关注我们"},
        {"title": None, "title_zh": "注意力就是你所需要的一切", "text": "正文"},
        {"title": "Attention Is All You Need", "title_zh": None, "text": "同一篇论文又出现一次"},
    ]
    r = score_document(expected, sections, ["本文 提出 Transformer 架构"], "全文")
    assert (r["expected"], r["found"], r["matched"]) == (2, 3, 2)
    assert r["extra"] == ["Attention Is All You Need"]  # each expected title matches once
    assert r["junk_leaked"] == ["扫码关注我们"] and r["junk_chars"] == len("扫码关注我们")
    assert r["content_dropped"] == ["提出 Transformer"] and r["content_lost"] == ["提出 Transformer"]
    traditional = score_document({"sections": ["视觉变换器需要寄存器"], "junk": [], "content": []},
                                 [{"title": None, "title_zh": "視覺變換器需要寄存器", "text": ""}], [], "")
    assert traditional["matched"] == 1


def test_baseline_floors_round_down_and_loosening_is_detected():
    scores = {"section_precision": 0.29, "section_recall": 0.8199, "junk_chars_in_sections": 12,
              "content_chars_dropped": 0}
    pinned = baseline_from(scores, "test")
    assert pinned["section_precision"] == 0.29 and pinned["section_recall"] == 0.81
    assert check_baseline(scores, pinned) == []
    worse = {**scores, "section_recall": 0.5, "junk_chars_in_sections": 13}
    assert len(check_baseline(worse, pinned)) == 2
    assert loosened(pinned, baseline_from(worse, "x")) == ["section_recall", "max_junk_chars_in_sections"]
