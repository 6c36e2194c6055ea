"""Paper records (pipeline.paper_records): JSONL records and CSV rows that name one paper each,
run through the real pipeline; and documents.reason for a document that yields no paper.

The English records are the first two lines of a real export (GitHub KouirWu/my-paper-library,
data/papers.jsonl, copied from tests/fixtures/real/dev/h4-kouirwu-paperlib); the Chinese-keyed
record and the CSV rows carry real papers' metadata (NeurIPS 2024 best paper VAR, arXiv
2404.02905; NeurIPS 2024 best paper STDE, arXiv 2412.00088) in layouts written for the test.
"""

from __future__ import annotations

import logging
import shutil
from pathlib import Path

import pandas as pd
import pytest

from pipeline import paper_records
from pipeline.config import load_config
from pipeline.formats import parse_record
from pipeline.runner import run
from pipeline.segment import segment_documents

FIXTURES = Path(__file__).parent / "fixtures" / "records"


@pytest.fixture(scope="module")
def tables(tmp_path_factory):
    corpus = tmp_path_factory.mktemp("corpus")
    for name in ("papers_en.jsonl", "papers_zh.jsonl", "awards.csv"):
        shutil.copy(FIXTURES / name, corpus / name)
    (corpus / "no-paper.txt").write_text("今天天气很好，我们去公园散步，然后回家吃饭。\n", encoding="utf-8")
    out = tmp_path_factory.mktemp("out")
    config = load_config()
    config.run.quiet = True
    config.run.workers = 1
    run(corpus, out, config, progress=False)
    docs = pd.read_parquet(out / "documents.parquet").set_index("source_path")
    sections = pd.read_parquet(out / "sections.parquet").merge(
        docs.reset_index()[["doc_id", "source_path"]], on="doc_id")
    return docs, sections


def _one(sections, path):
    rows = sections[sections["source_path"] == path]
    assert len(rows) == 1, rows[["source_path", "title"]]
    return rows.iloc[0]


def test_english_jsonl_records_are_one_section_each_with_the_records_fields(tables):
    docs, sections = tables
    sec = _one(sections, "papers_en.jsonl#1")
    assert sec["title"] == "Self-Supervised RGB-T Tracking with Modality-Interactive Tokens"
    assert list(sec["authors"]) == ["Yong Zhou", "Hancheng Zhu", "Kunyang Sun"]
    assert sec["year"] == 2024 + 1 and sec["arxiv_id"] == "2505.03507"
    assert "https://arxiv.org/pdf/2505.03507v1" in list(sec["urls"])
    assert sec["summary"].startswith("Self-supervised RGB-T tracking approaches")
    assert len(sec["keywords"]) > 0
    doc = docs.loc["papers_en.jsonl#1"]
    assert doc["raw_text"].startswith('{"title": "Self-Supervised RGB-T Tracking')  # the record as in the file
    assert doc["n_sections"] == 1 and pd.isna(doc["reason"])
    assert _one(sections, "papers_en.jsonl#2")["title"].startswith("MambaVT")


def test_chinese_keys_give_title_zh_authors_venue_award(tables):
    _, sections = tables
    sec = _one(sections, "papers_zh.jsonl#1")
    assert sec["title"] == "Visual Autoregressive Modeling: Scalable Image Generation via Next-Scale Prediction"
    assert sec["title_zh"] == "视觉自回归建模：基于下一尺度预测的可扩展图像生成"
    assert list(sec["authors"]) == ["Keyu Tian", "Yi Jiang", "Zehuan Yuan", "Bingyue Peng", "Liwei Wang"]
    assert (sec["venue"], sec["year"], sec["award"]) == ("NeurIPS", 2024, "best_paper")
    assert sec["arxiv_id"] == "2404.02905"
    assert sec["summary"].startswith("我们提出视觉自回归建模")


def test_an_article_record_is_still_segmented_as_an_article(tables):
    docs, sections = tables
    rows = sections[sections["source_path"] == "papers_zh.jsonl#2"]
    assert len(rows) == 2
    assert rows["title"].tolist()[1].startswith("Stochastic Taylor Derivative Estimator")
    assert docs.loc["papers_zh.jsonl#2", "title"] == "NeurIPS 2024 最佳论文揭晓"


def test_csv_rows_with_a_header(tables):
    docs, sections = tables
    sec = _one(sections, "awards.csv#2")
    assert sec["title"].startswith("Stochastic Taylor Derivative Estimator")
    assert list(sec["authors"]) == ["Zekun Shi", "Zheyuan Hu", "Min Lin", "Kenji Kawaguchi"]
    assert (sec["venue"], sec["year"], sec["arxiv_id"]) == ("NeurIPS", 2024, "2412.00088")
    assert pd.isna(sec["summary"])  # no abstract in the row: none made up from the other fields
    assert docs.loc["awards.csv#2", "raw_text"].startswith('"Stochastic Taylor Derivative Estimator')


def test_a_csv_row_without_a_title_is_an_error_row(tables):
    docs, sections = tables
    doc = docs.loc["awards.csv#3"]
    assert doc["status"] == "error" and "no paper title" in doc["error"]
    assert (sections["source_path"] == "awards.csv#3").sum() == 0


def test_a_document_without_a_paper_says_why(tables):
    docs, _ = tables
    assert docs.loc["no-paper.txt", ["status", "n_sections", "reason"]].tolist() == ["ok", 0, "no_paper_found"]
    assert docs.loc[docs["status"] != "ok", "reason"].isna().all()
    assert docs.loc[docs["n_sections"] > 0, "reason"].isna().all()


def test_read_record_splits_author_strings_and_keeps_lists():
    fields = paper_records.read_record({"title": "A Title Here", "authors": "A. One; B. Two and C. Three et al."})
    assert fields["authors"] == ["A. One", "B. Two", "C. Three"] and fields["authors_truncated"]
    fields = paper_records.read_record({"paper_title": "T", "作者": ["张三", "李四"], "year": "2023"})
    assert fields["authors"] == ["张三", "李四"] and fields["year"] == 2023
    assert paper_records.read_record({"title": "T", "text": "an article's text"}) is None
    assert paper_records.read_record({"authors": "A"}) is None


def test_a_record_with_neither_text_nor_title_is_rejected():
    assert parse_record({"authors": "A", "year": 2024}).error.startswith("no text and no paper title")


def test_rejected_title_lines_are_logged_at_debug(caplog):
    text = ("How to bake bread at home\n\nFirst Step Of The Recipe\n\nMix flour and water.\n\n"
            "Second Step Of The Recipe\n\nBake it for an hour.\n")
    batch = pd.DataFrame({"doc_id": ["d1"], "text": [text], "dropped": [[]], "status": ["ok"]})
    with caplog.at_level(logging.DEBUG, logger="pipeline.segment"):
        out = segment_documents(batch, load_config())
    assert out["sections"].iat[0] == []
    lines = [r.getMessage() for r in caplog.records if "rejected as a paper title" in r.getMessage()]
    assert any(line.startswith("document d1: heading 'First Step Of The Recipe'") for line in lines), lines
