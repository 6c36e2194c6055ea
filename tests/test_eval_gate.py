"""Evaluation gate (after trafilatura's ``tests/eval_gate.py``): the pipeline's segmentation and
cleaning of the annotated fixture articles in ``tests/fixtures/segmentation``, and the accuracy of
the extracted fields on those fixtures and on the seed articles, must not fall below the floors
pinned in ``tests/eval_baseline.json``.

Raising a floor is easy (``make eval`` shows the scores; ``python -m evaluation.evaluate
--write-baseline`` pins them); lowering one needs a ``--reason``, kept in the baseline file.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from evaluation.evaluate import (
    CEILING_KEYS,
    FIELD_FLOOR_KEYS,
    FIELD_KEYS,
    FIELDS,
    FLOOR_KEYS,
    baseline_from,
    check_baseline,
    evaluate,
    evaluate_seeds,
    floor2,
    format_failures,
    format_field_errors,
    format_field_table,
    format_table,
    load_annotations,
    loosened,
    score_document,
    score_fields,
)
from evaluation.gold import check_field_gold, validate_fixtures, validate_seed_gold

from conftest import GOLD, read_outputs, require_seeds
from gold_checks import assert_coverage

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "segmentation"
BASELINE = Path(__file__).resolve().parent / "eval_baseline.json"
SEEDS_GOLD = GOLD / "seeds.json"


@pytest.fixture(scope="module")
def eval_out(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("eval_out")


@pytest.fixture(scope="module")
def scores(eval_out, use_embedder) -> dict:
    return evaluate(FIXTURES, eval_out, embedder=use_embedder)


@pytest.fixture(scope="module")
def seed_scores(use_embedder) -> dict:
    return evaluate_seeds(require_seeds(), SEEDS_GOLD, embedder=use_embedder)


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


def test_seed_field_scores_not_below_baseline(scores, seed_scores):
    baseline = json.loads(BASELINE.read_text(encoding="utf-8"))
    both = {**scores, "seeds": seed_scores}
    failures = check_baseline(both, baseline)
    assert not failures, "\n".join([*failures, "", format_field_table(both), "", format_field_errors(both)])


def test_every_gold_section_is_scored_on_every_field(scores, seed_scores):
    """All 83 fixture and 21 seed gold sections are found by title, and every field's output
    column exists (a missing column would score 0 and be listed)."""
    for result, n in ((scores, 83), (seed_scores, 21)):
        assert result["n_field_sections"] == n
        assert result["field_unmatched"] == []
        assert set(result["field_accuracy"]) == set(FIELDS)
        assert all(0.0 <= v <= 1.0 for v in result["field_accuracy"].values())
        assert result["missing_field_columns"] == []
    # the fields every layout already gets right, on the fixtures and on the seeds
    for field in ("title", "title_zh", "venue", "arxiv_id", "arxiv_version", "urls"):
        assert scores["field_accuracy"][field] == 1.0, field
        assert seed_scores["field_accuracy"][field] == 1.0, field
    # each wrong value names the section and shows gold and output
    wrong = scores["field_wrong"]
    assert len(wrong) == sum(83 - scores["field_correct"][f] for f in FIELDS)
    assert all(set(w) == {"document", "title", "field", "gold", "got"} for w in wrong)
    table = format_field_table({**scores, "seeds": seed_scores})
    assert all(f in table for f in FIELDS) and "(83/83)" in table and "(21/21)" in table


def test_baseline_file_is_complete():
    baseline = json.loads(BASELINE.read_text(encoding="utf-8"))
    assert set(baseline) == {*FLOOR_KEYS, *CEILING_KEYS, *FIELD_FLOOR_KEYS, "reason"}
    assert all(0.0 <= baseline[k] <= 1.0 and baseline[k] == floor2(baseline[k]) for k in FLOOR_KEYS)
    assert all(isinstance(baseline[k], int) and baseline[k] >= 0 for k in CEILING_KEYS)
    for key in FIELD_FLOOR_KEYS:
        assert set(baseline[key]) == set(FIELDS), key
        assert all(0.0 <= v <= 1.0 and v == floor2(v) for v in baseline[key].values()), key
    assert baseline["reason"].strip()


def test_annotations_are_well_formed():
    problems = validate_fixtures(FIXTURES)
    assert not problems, "\n".join(problems)


def test_seed_gold_is_well_formed():
    problems = validate_seed_gold(require_seeds(), SEEDS_GOLD)
    assert not problems, "\n".join(problems)
    by_file = json.loads(SEEDS_GOLD.read_text(encoding="utf-8"))["sections_by_file"]
    assert sum(len(v) for v in by_file.values()) == 21
    assert all(set(e) == set(FIELD_KEYS) for v in by_file.values() for e in v)


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
        "fields": [_gold("Attention Is All You Need", summary_start="本文提出Transf", keywords_required=["架构"])],
        "notes": "test", "encoding": "utf-8"}), encoding="utf-8")
    problems = validate_fixtures(tmp_path)
    assert any("b.txt: article without expected" in p for p in problems)
    assert any("junk string not in the article: '扫码关注'" in p for p in problems)
    assert len(problems) == 2, problems


def _gold(title: str | None, **fields) -> dict:
    """Gold fields of one section: nothing given but the title, plus ``fields``."""
    return {"title": title, "title_zh": None, "authors": [], "authors_truncated": False, "institutions": [],
            "venue": None, "year": None, "award": None, "arxiv_id": None, "arxiv_version": None, "urls": [],
            "url_kinds": [], "summary_start": "x", "keywords_required": ["x"], **fields}


def test_field_gold_validation_names_each_problem():
    text = "论文 1：Attention Is All You Need\n本文提出 Transformer 架构，https://arxiv.org/abs/1706.03762。"
    good = _gold("Attention Is All You Need", venue="NeurIPS", year=2017, award="best_paper", arxiv_id="1706.03762",
                 urls=["https://arxiv.org/abs/1706.03762"], url_kinds=["arxiv"], summary_start="本文提出Transf",
                 keywords_required=["transformer"])
    assert check_field_gold("a", [good], ["Attention Is All You Need"], text) == []
    assert "one object per section" in check_field_gold("a", [], ["Attention Is All You Need"])[0]
    bad = {**good, "award": "best", "arxiv_id": "1706.03762v2", "url_kinds": [], "summary_start": "本文 提出",
           "keywords_required": []}
    problems = check_field_gold("a", [bad], ["Attention Is All You Need"])
    assert len(problems) == 5, problems
    missing = {k: v for k, v in good.items() if k != "summary_start"}
    assert "missing ['summary_start']" in check_field_gold("a", [missing], ["Attention Is All You Need"])[0]
    absent = {**good, "summary_start": "注意力机制", "keywords_required": ["扩散模型"],
              "urls": ["https://example.org/x"], "url_kinds": ["other"]}
    problems = check_field_gold("a", [absent], ["Attention Is All You Need"], text)
    assert [p.split(": ")[-1] for p in problems] == [
        "'summary_start' '注意力机制' is not in the article",
        "keyword '扩散模型' is not in the article (zh-Hans)",
        "URL 'https://example.org/x' is not in the article"]
    assert "neither 'title' nor 'title_zh'" in check_field_gold("a", [good], ["Another Title"])[0]


def test_field_scoring_rules():
    gold = [
        _gold("Attention Is All You Need", title_zh="视觉变换器需要寄存器", authors=["Ashish Vaswani", "Noam Shazeer"],
              authors_truncated=True, institutions=["谷歌大脑"], venue="NeurIPS", year=2017, award="other",
              arxiv_id="1706.03762", urls=["https://arxiv.org/abs/1706.03762", "https://github.com/t/t2t"],
              url_kinds=["arxiv", "code"], summary_start="本文提出Transf", keywords_required=["Transformer"]),
        _gold("Missed Paper"),
    ]
    got = {"title": " attention  is all you need ", "title_zh": "视觉变换器需要寄存器", "authors": ["noam shazeer", "Ashish Vaswani"],
           "authors_truncated": True, "institutions": ["谷歌大脑"], "venue": "NeurIPS", "year": 2017.0, "award": "other",
           "arxiv_id": "1706.03762", "arxiv_version": None,
           "urls": ["https://github.com/t/t2t", "https://arxiv.org/abs/1706.03762"], "url_kinds": ["code", "arxiv"],
           "summary": "本文 提出 Transformer 架构。", "keywords": ["transformer", "注意力"]}
    columns = set(got)
    r = score_fields("d", ["Attention Is All You Need", "Missed Paper"], gold, [got, None], columns)
    assert r["n"] == 2 and r["correct"] == dict.fromkeys(FIELDS, 1) and r["wrong"] == []
    assert r["unmatched"] == [{"document": "d", "title": "Missed Paper"}]
    # a Traditional title_zh matches its Simplified gold; a wrong kind, a summary that starts elsewhere,
    # a missing required keyword and a wrong set of names are each one wrong value
    worse = {**got, "title_zh": "視覺變換器需要寄存器", "url_kinds": ["code", "pdf"], "summary": "我们提出 Transformer。",
             "keywords": ["注意力"], "authors": ["Ashish Vaswani"], "year": None}
    r = score_fields("d", ["Attention Is All You Need"], gold[:1], [worse], columns)
    assert sorted(w["field"] for w in r["wrong"]) == ["authors", "keywords", "summary", "urls", "year"]
    urls = next(w for w in r["wrong"] if w["field"] == "urls")
    assert urls["gold"] == [["https://arxiv.org/abs/1706.03762", "arxiv"], ["https://github.com/t/t2t", "code"]]
    assert urls["got"] == [["https://github.com/t/t2t", "code"], ["https://arxiv.org/abs/1706.03762", "pdf"]]
    # an output column that does not exist: its field is wrong everywhere, and not listed value by value
    r = score_fields("d", ["Attention Is All You Need"], gold[:1], [got], columns - {"url_kinds"})
    assert r["correct"]["urls"] == 0 and r["correct"]["title"] == 1 and r["wrong"] == []


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
    fields = dict.fromkeys(FIELDS, 1.0) | {"keywords": 0.1899}
    scores = {"section_precision": 0.29, "section_recall": 0.8199, "junk_chars_in_sections": 12,
              "content_chars_dropped": 0, "field_accuracy": fields, "seeds": {"field_accuracy": fields}}
    pinned = baseline_from(scores, "test")
    assert pinned["section_precision"] == 0.29 and pinned["section_recall"] == 0.81
    assert pinned["field_accuracy_fixtures"]["keywords"] == 0.18 and pinned["field_accuracy_seeds"]["title"] == 1.0
    assert check_baseline(scores, pinned) == []
    worse = {**scores, "section_recall": 0.5, "junk_chars_in_sections": 13,
             "seeds": {"field_accuracy": {**fields, "award": 0.9}}}
    assert len(check_baseline(worse, pinned)) == 3
    assert loosened(pinned, baseline_from(worse, "x")) == [
        "section_recall", "max_junk_chars_in_sections", "field_accuracy_seeds.award"]
    # without a seed run the seed floors are not checked, and a new baseline keeps the old ones
    no_seeds = {k: v for k, v in worse.items() if k != "seeds"}
    assert len(check_baseline(no_seeds, pinned)) == 2
    assert baseline_from(no_seeds, "x", pinned)["field_accuracy_seeds"] == pinned["field_accuracy_seeds"]
    # a fixture field below its floor, or not scored at all, is a regression
    assert check_baseline({**scores, "field_accuracy": {**fields, "title": 0.5}}, pinned) == [
        "field_accuracy_fixtures.title 0.5000 is below its floor 1.0"]
    unscored = {k: v for k, v in fields.items() if k != "urls"}
    assert check_baseline({**scores, "field_accuracy": unscored}, pinned) == [
        "field_accuracy_fixtures.urls: not scored (floor 1.0)"]


def test_a_required_keyword_is_covered_by_an_equal_or_longer_keyword() -> None:
    from evaluation.evaluate import _term_in

    assert _term_in("视频分割", "视频分割")
    assert _term_in("视频分割", "视频分割模型")
    assert not _term_in("视频分割", "视频")
    assert _term_in("emergent", "emergent abilities")
    assert _term_in("differentially private", "differentially private training")
    assert not _term_in("gan", "organ")
    assert not _term_in("private", "privately")


def test_the_seeds_of_make_eval_come_from_pipeline_seeds_as_the_tests_do(tmp_path: Path) -> None:
    import os
    import subprocess
    import sys

    code = "from evaluation.evaluate import DEFAULT_SEEDS; print(DEFAULT_SEEDS)"
    repo = Path(__file__).resolve().parents[1]  # evaluation/ is imported from the repository root
    env = {**os.environ, "PIPELINE_SEEDS": str(tmp_path / "seeds")}
    shown = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True,
                           cwd=repo)
    assert shown.stdout.strip() == str(tmp_path / "seeds")
    env.pop("PIPELINE_SEEDS")
    shown = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True,
                           cwd=repo)
    assert Path(shown.stdout.strip()) == Path(__file__).resolve().parents[1].parent / "shared" / "corpora" / "seeds"


def test_make_eval_stops_when_pipeline_seeds_names_no_folder(tmp_path: Path) -> None:
    import os
    import subprocess
    import sys

    env = {**os.environ, "PIPELINE_SEEDS": str(tmp_path / "no-such-seeds")}
    done = subprocess.run([sys.executable, "-m", "evaluation.evaluate", "tests/fixtures/segmentation",
                           "--baseline", "tests/eval_baseline.json"], env=env, capture_output=True, text=True,
                          cwd=Path(__file__).resolve().parents[1])
    assert done.returncode == 2
    assert f"{tmp_path / 'no-such-seeds'} is not a folder" in done.stderr
