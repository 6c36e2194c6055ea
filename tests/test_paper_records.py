"""Paper records (pipeline.paper_records): JSONL records and CSV rows that name one paper each,
run through the real pipeline; and documents.reason for a document that yields no paper.

The English records are the first two lines of a real export (GitHub KouirWu/my-paper-library,
data/papers.jsonl, copied from tests/fixtures/real/dev/h4-kouirwu-paperlib); the Chinese-keyed
record and the CSV rows carry real papers' metadata (NeurIPS 2024 best paper VAR, arXiv
2404.02905; NeurIPS 2024 best paper STDE, arXiv 2412.00088) in layouts written for the test.
"""

from __future__ import annotations

import json
import logging
import shutil
from pathlib import Path

import pandas as pd
import pytest

from pipeline import paper_records
from pipeline.config import load_config
from pipeline.formats import parse_jsonl_line, parse_record
from pipeline.ingest import CSV_FIELD_LIMIT, read_csv
from pipeline.runner import run
from pipeline.segment import segment_documents

FIXTURES = Path(__file__).parent / "fixtures" / "records"


#: Records holding article text and fields: the first two name their paper (a ``paper`` field;
#: a venue and an arXiv id), the third is a news article with an author and a link of its own,
#: the fourth one with a paper's link.
TEXT_AND_FIELDS = (
    {"title": "Lab update", "paper": "Graph Transformers for Traffic Forecasting", "authors": ["Cindy Zhou", "Dan Wu"],
     "venue": "KDD 2025", "text": "We forecast traffic with graph transformers."},
    {"title": "Sparse Attention for Long Sequences", "venue": "ICLR 2025", "arxiv_id": "2501.01234",
     "abstract": "Sparse attention scales to long inputs.", "text": "<p>A <b>longer</b> write-up of the paper.</p>"},
    {"title": "Weekly digest", "author": "Staff Writer", "url": "https://news.example.com/a",
     "text": "Nothing about any paper this week: the lab moved to a new building and held a party."},
    {"title": "Weekly digest", "paper": "https://arxiv.org/abs/2501.01234",
     "text": "Nothing about any paper this week: the lab moved to a new building and held a party."},
)


@pytest.fixture(scope="module")
def tables(tmp_path_factory):
    corpus = tmp_path_factory.mktemp("corpus")
    for name in ("papers_en.jsonl", "papers_zh.jsonl", "awards.csv"):
        shutil.copy(FIXTURES / name, corpus / name)
    (corpus / "no-paper.txt").write_text("今天天气很好，我们去公园散步，然后回家吃饭。\n", encoding="utf-8")
    (corpus / "text_and_fields.jsonl").write_text("\n".join(json.dumps(r) for r in TEXT_AND_FIELDS) + "\n", "utf-8")
    (corpus / "cmt_export.tsv").write_text("PaperTitle\tAuthorNames\n"
                                         "Sparse Codes for Parsing, Revisited\tLee, Ann*; Wu, Bo\n", encoding="utf-8")
    (corpus / "accepted.tsv").write_text("title\tauthors\tvenue\nKernels, Revisited\tCai Wu\tAISTATS 2024\n"
                                         "Sparse Graph Sketches\tDora Lind\tAISTATS 2024\n", "utf-8")
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


def test_a_record_naming_its_paper_beside_its_text_is_that_paper(tables):
    docs, sections = tables
    sec = _one(sections, "text_and_fields.jsonl#1")
    assert sec["title"] == "Graph Transformers for Traffic Forecasting"  # the paper field, not the headline
    assert list(sec["authors"]) == ["Cindy Zhou", "Dan Wu"]
    assert (sec["venue"], sec["year"]) == ("KDD", 2025)
    assert sec["summary"] == "We forecast traffic with graph transformers."  # the text, as the abstract
    assert docs.loc["text_and_fields.jsonl#1", "n_sections"] == 1
    sec = _one(sections, "text_and_fields.jsonl#2")
    assert (sec["title"], sec["venue"], sec["year"], sec["arxiv_id"]) == (
        "Sparse Attention for Long Sequences", "ICLR", 2025, "2501.01234")
    assert sec["summary"] == "Sparse attention scales to long inputs."  # its abstract field wins over the text
    # an author, a link and a headline are an article's own: the record stays an article
    assert docs.loc["text_and_fields.jsonl#3", ["n_sections", "reason"]].tolist() == [0, "no_paper_found"]
    assert docs.loc["text_and_fields.jsonl#3", "title"] == "Weekly digest"
    # a paper field holding a link names no title: the headline is not taken for the paper's
    assert docs.loc["text_and_fields.jsonl#4", ["n_sections", "reason"]].tolist() == [0, "no_paper_found"]


def test_csv_rows_with_a_header(tables):
    docs, sections = tables
    sec = _one(sections, "awards.csv#2")
    assert sec["title"].startswith("Stochastic Taylor Derivative Estimator")
    assert list(sec["authors"]) == ["Zekun Shi", "Zheyuan Hu", "Min Lin", "Kenji Kawaguchi"]
    assert (sec["venue"], sec["year"], sec["arxiv_id"]) == ("NeurIPS", 2024, "2412.00088")
    assert pd.isna(sec["summary"])  # no abstract in the row: none made up from the other fields
    assert docs.loc["awards.csv#2", "raw_text"].startswith('"Stochastic Taylor Derivative Estimator')


def test_tsv_rows_reach_the_tables(tables):
    # each row's documents row and section are kept with the file's rows (the file of
    # "accepted.tsv#2" is "accepted.tsv"); they were dropped, and the run read 0 documents
    docs, sections = tables
    assert docs.loc[["accepted.tsv#2", "accepted.tsv#3"], "status"].tolist() == ["ok", "ok"]
    assert _one(sections, "accepted.tsv#2")["title"] == "Kernels, Revisited"
    assert list(_one(sections, "accepted.tsv#3")["authors"]) == ["Dora Lind"]


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
    fields = paper_records.read_record({"title": "A Title Here", "authors": "A. One; B. Two and C. Three et al."}).fields
    assert fields["authors"] == ["A. One", "B. Two", "C. Three"] and fields["authors_truncated"]
    fields = paper_records.read_record({"paper_title": "T", "作者": ["张三", "李四"], "year": "2023"}).fields
    assert fields["authors"] == ["张三", "李四"] and fields["year"] == 2023
    assert paper_records.read_record({"title": "T", "text": "an article's text"}) == (None, None, ())
    assert paper_records.read_record({"authors": "A"}) == (None, None, ())


def test_a_paper_field_is_the_title_unless_it_holds_the_papers_link():
    fields = paper_records.read_record({"paper": "Octo: An Open-Source Generalist Robot Policy",
                                        "arxiv_id": "2405.12213", "authors": ["Dibya Ghosh"]}).fields
    assert fields["title"] == "Octo: An Open-Source Generalist Robot Policy" and fields["arxiv_id"] == "2405.12213"
    assert paper_records.read_record({"论文": "视觉自回归建模", "作者": "田柯宇"}).fields["title_zh"] == "视觉自回归建模"
    for link in ("https://arxiv.org/abs/2405.12213", "arXiv:2405.12213", "2405.12213",
                 "10.48550/arXiv.2405.12213", "doi:10.1145/3581783.3612345"):
        error = parse_record({"paper": link, "authors": "A"}).error
        assert error.startswith("no text and no paper title") and error.endswith("'paper' holds a link, not a title)")
    # a title that opens with a version-like number is still a title
    assert paper_records.read_record({"paper": "10.5 Million Images: A Benchmark"}).fields["title"] == \
        "10.5 Million Images: A Benchmark"


def test_a_null_text_beside_a_title_is_said():
    record = parse_record({"title": "Attention Is All You Need", "text": None})
    assert record.paper is not None and record.notes == ("field 'text' is null: the record is read as a paper's fields",)


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


# --- structured-record reading: field names, text values, titles, authors, years --------------
# Values from real papers: "Attention Is All You Need" (Vaswani et al., NeurIPS 2017, arXiv
# 1706.03762); "Machine Learning for Combinatorial Optimization" (Bengio, Lodi, Prouvost; arXiv
# 1811.06128, the author string as in tests/fixtures/real/dev/h4-thinklab-ml4co); "Graph Neural Networks for Combinatorial Optimization" survey (Vesselinova,
# Steinert, Perez-Ramirez, Boman; arXiv 2008.12646); "Large Language Models as Optimizers"
# (Yang, Wang, Lu, Liu, Le, Zhou, Chen; arXiv 2309.03409).

ARTICLE = ("NeurIPS 2017 papers worth reading\n\nAttention Is All You Need\n\n"
           "Ashish Vaswani, Noam Shazeer, Niki Parmar\n\nThe Transformer drops recurrence.\n")


@pytest.mark.parametrize("record", [
    {"Title": "NeurIPS 2017 papers worth reading", "Text": ARTICLE},
    {"TITLE": "NeurIPS 2017 papers worth reading", "Content": ARTICLE},
    {"title": "NeurIPS 2017 papers worth reading", " Body ": ARTICLE},
])
def test_text_fields_match_case_insensitively(record):
    got = parse_record(record)
    assert got.paper is None and got.error is None
    assert got.text == ARTICLE and got.title == "NeurIPS 2017 papers worth reading"


def test_a_list_of_strings_in_a_text_field_is_the_article_joined_by_blank_lines():
    got = parse_record({"title": "x", "body": ["Attention Is All You Need", "Ashish Vaswani, Noam Shazeer"]})
    assert got.paper is None and got.error is None
    assert got.text == "Attention Is All You Need\n\nAshish Vaswani, Noam Shazeer"
    assert parse_jsonl_line('{"title": "x", "body": ["a", 2]}').error == "field 'body' is a JSON array, not a string"
    assert parse_record({"title": "x", "Body": {"p": "a"}}).error == "field 'Body' is a JSON object, not a string"


@pytest.mark.parametrize("line", [
    '{"title": "12345", "authors": "Ashish Vaswani"}',
    '{"title": "3.14", "authors": "Ashish Vaswani"}',
    '{"title": "nan", "authors": "Ashish Vaswani"}',
    '{"title": 12345, "authors": "Ashish Vaswani"}',
    '{"title": NaN, "authors": "Ashish Vaswani"}',
])
def test_a_title_without_a_letter_is_no_paper(line):
    got = parse_jsonl_line(line)
    assert got.paper is None and got.error is not None and "title" in got.error


def test_a_title_over_1000_characters_is_an_error_saying_so():
    got = parse_record({"title": "Attention " * 101, "authors": "Ashish Vaswani"})
    assert got.paper is None and "1,009 characters, more than 1,000" in got.error
    assert parse_record({"title": "注意力就是你所需要的一切"}).paper is not None  # Han letters are letters


@pytest.mark.parametrize("field", ["title", "title_zh"])
def test_a_title_longer_than_a_page_title_may_be_is_kept_with_a_note(tmp_path, field):
    # a page's title is at most 300 characters, a record's 1,000: a 400-character title cell
    # became a paper title with no word
    title = "Attention Is All You Need " * 16 if field == "title" else "注意力就是你所需要的一切" * 30
    got = parse_record({field: title.strip(), "authors": "Ashish Vaswani"})
    assert json.loads(got.paper)[field] == title.strip()
    assert f"its title of {len(title.strip()):,} characters is longer than a title on a page may be (300)" in got.notes[0]
    rows = _read_csv(tmp_path, "long.csv", f"{field},authors\n{title.strip()},Ashish Vaswani\nKernels,Bo Wu\n")
    assert [r["status"] for r in rows] == ["ok", "ok"]
    assert "longer than a title on a page" in rows[0]["notes"] and not rows[1]["notes"]
    assert not parse_record({"title": "Attention Is All You Need", "authors": "Ashish Vaswani"}).notes


def test_authors_are_strings_nested_lists_flattened_objects_named_others_dropped_with_a_note():
    got = parse_record({"title": "Attention Is All You Need",
                        "authors": [["Ashish Vaswani", "Noam Shazeer"], {"name": "Niki Parmar"},
                                    {"full_name": "Jakob Uszkoreit"}, None, 5, {"affiliation": "Google"}]})
    fields = json.loads(got.paper)
    assert fields["authors"] == ["Ashish Vaswani", "Noam Shazeer", "Niki Parmar", "Jakob Uszkoreit"]
    assert len(got.notes) == 1 and "3 item(s) that are no names left out" in got.notes[0]
    assert ";" not in got.notes[0]  # "; " separates a row's notes


def test_author_names_lose_markdown_escapes_and_footnote_marks():
    fields = paper_records.read_record({"title": "Large Language Models as Optimizers",
                                        "authors": [r"Chengrun Yang\*", "Xuezhi Wang†", "Yifeng Lu¹"]}).fields
    assert fields["authors"] == ["Chengrun Yang", "Xuezhi Wang", "Yifeng Lu"]
    fields = paper_records.read_record({"title": "Large Language Models as Optimizers",
                                        "authors": r"Chengrun Yang\*, Xuezhi Wang\*, Quoc V. Le"}).fields
    assert fields["authors"] == ["Chengrun Yang", "Xuezhi Wang", "Quoc V. Le"]


def test_bibtex_author_strings_keep_last_first_per_author():
    fields = paper_records.read_record({
        "title": "Graph Neural Networks for Combinatorial Optimization",
        "author": "Vesselinova, Natalia and Steinert, Rebecca and Perez-Ramirez, Daniel F. and Boman, Magnus"}).fields
    assert fields["authors"] == ["Vesselinova, Natalia", "Steinert, Rebecca", "Perez-Ramirez, Daniel F.", "Boman, Magnus"]
    fields = paper_records.read_record({"title": "Machine Learning for Combinatorial Optimization",
                                        "author": "Bengio, Yoshua and Lodi, Andrea and Prouvost, Antoine."}).fields
    assert fields["authors"] == ["Bengio, Yoshua", "Lodi, Andrea", "Prouvost, Antoine"]  # the list's closing period cut
    fields = paper_records.read_record({"title": "Graph Neural Networks for Combinatorial Optimization",
                                        "author": "Vesselinova, Natalia and Steinert, Rebecca and others"}).fields
    assert fields["authors"] == ["Vesselinova, Natalia", "Steinert, Rebecca"] and fields["authors_truncated"]
    fields = paper_records.read_record({"title": "Attention Is All You Need",
                                        "authors": "Ashish Vaswani, Noam Shazeer and Niki Parmar"}).fields
    assert fields["authors"] == ["Ashish Vaswani", "Noam Shazeer", "Niki Parmar"]


def test_bibtex_pairs_with_commas_between_and_a_lone_pair_with_an_initial():
    read = paper_records._split_names
    assert read("Kim, Lee and Park, Jo, and Cho, Ann B.") == (["Kim, Lee", "Park, Jo", "Cho, Ann B."], False)
    assert read("Kim, Lee, Park, Jo, and Cho, Ann.") == (["Kim, Lee", "Park, Jo", "Cho, Ann"], False)
    assert read("Kim, Lee A.") == (["Kim, Lee A."], False)
    assert read("Kim, Park") == (["Kim", "Park"], False)  # no initial: two surnames, not one pair
    assert read("Lee Kim, Jo Park and Ann Cho") == (["Lee Kim", "Jo Park", "Ann Cho"], False)


@pytest.mark.parametrize(("fields", "expected"), [
    ({"venue": "arXiv"}, (None, None)),
    ({"venue": "OpenReview技术报告"}, (None, None)),
    ({"venue": "Tech report"}, (None, None)),
    ({"venue": "Conference on Robot Learning, PMLR 229"}, ("CoRL", None)),
    ({"venue": "Robotics: Science and Systems XX"}, ("RSS", None)),
    ({"venue": "Transactions of the Association for Computational Linguistics"}, ("TACL", None)),
    ({"venue": "Pattern Recognition Letters"}, ("Pattern Recognition Letters", None)),
    ({"venue": "ICML 2023"}, ("ICML", 2023)),
    ({"publisher": "Journal of Made-Up Results"}, ("Journal of Made-Up Results", None)),
    ({"journal": "Computer Vision and Image Understanding"}, ("CVIU", None)),
    ({"categories": ["cs.LG", "ICLR 2022 Poster"]}, ("ICLR", 2022)),
    ({"source": "cvpr"}, ("CVPR", None)),
    ({"comments": "Accepted to EMNLP 2021"}, ("EMNLP", 2021)),
    ({"comments": "Submitted to NeurIPS 2021"}, (None, None)),
    ({"categories": ["cs.CL"]}, (None, None)),
])
def test_record_venue_fields(fields, expected):
    read = paper_records.read_record({"title": "A Study of Things", **fields}).fields
    assert (read["venue"], read["year"]) == expected


@pytest.mark.parametrize(("year", "expected"), [
    ("2024.0", 2024), (2024.0, 2024), ("2017", 2017), ("1066", None), ("2999", None), ("2024.5", None)])
def test_years(year, expected):
    reading = paper_records.read_record({"title": "Attention Is All You Need", "year": year})
    assert reading.fields["year"] == expected
    assert bool(reading.notes) == (expected is None)


# --- CSV files ------------------------------------------------------------------------------------

def _read_csv(tmp_path, name, text):
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return read_csv(name, str(path))


def test_csv_with_title_and_text_headers_is_an_article(tmp_path):
    rows = _read_csv(tmp_path, "posts.csv", f'Title,Text\nNeurIPS 2017 papers worth reading,"{ARTICLE}"\n')
    assert len(rows) == 1 and rows[0]["status"] == "ok"
    assert rows[0]["paper_record"] is None and rows[0]["text"] == ARTICLE
    assert rows[0]["title"] == "NeurIPS 2017 papers worth reading"


def test_csv_a_cell_over_the_csv_default_limit_is_read(tmp_path):
    abstract = "The dominant sequence transduction models are based on recurrent networks. " * 2000  # 150,000 chars
    rows = _read_csv(tmp_path, "long.csv", f"title,abstract\nAttention Is All You Need,{abstract}\n"
                                           "Large Language Models as Optimizers,short\n")
    assert [r["status"] for r in rows] == ["ok", "ok"]
    assert json.loads(rows[0]["paper_record"])["abstract"] == abstract.strip()
    assert rows[1]["title"] == "Large Language Models as Optimizers"


def test_csv_a_cell_over_the_raised_limit_is_one_error_row(tmp_path):
    huge = "x" * (CSV_FIELD_LIMIT + 10)
    rows = _read_csv(tmp_path, "huge.csv", f"title,abstract\nAttention Is All You Need,{huge}\n"
                                           "Large Language Models as Optimizers,short\n")
    assert rows[0]["status"] == "error" and "field larger than field limit" in rows[0]["error"]
    assert rows[0]["source_path"] == "huge.csv#2"
    assert (rows[-1]["status"], rows[-1]["title"]) == ("ok", "Large Language Models as Optimizers")


def test_csv_of_one_author_a_row_is_one_record_a_paper(tmp_path):
    """Consecutive rows that differ only in their author columns are one paper (an export of one
    author a row); a row that differs elsewhere (another year) is a paper of its own."""
    text = ("title,author,affiliation,author_order,year,venue\n"
            "Attention Is All You Need,Ashish Vaswani,Google Brain,1,2017,NeurIPS\n"
            "Attention Is All You Need,Noam Shazeer,Google Brain,2,2017,NeurIPS\n"
            "Attention Is All You Need,Niki Parmar,Google Research,3,2017,NeurIPS\n"
            "Deep Residual Learning for Image Recognition,Kaiming He,Microsoft Research,1,2016,CVPR\n"
            "Deep Residual Learning for Image Recognition,Xiangyu Zhang,Microsoft Research,2,2016,CVPR\n"
            "Deep Residual Learning for Image Recognition,Shaoqing Ren,Microsoft Research,3,2017,CVPR\n")
    rows = _read_csv(tmp_path, "authors.csv", text)
    assert [r["source_path"] for r in rows] == ["authors.csv#2", "authors.csv#5", "authors.csv#7"]
    fields = [json.loads(r["paper_record"]) for r in rows]
    assert fields[0]["authors"] == ["Ashish Vaswani", "Noam Shazeer", "Niki Parmar"]
    assert fields[0]["institutions"] == ["Google Brain", "Google Research"]
    assert [f["authors"] for f in fields[1:]] == [["Kaiming He", "Xiangyu Zhang"], ["Shaoqing Ren"]]
    assert rows[0]["notes"] == ("csv: rows 2-4 differ only in their author: one paper, read as one record "
                                "with the authors in row order")
    assert rows[0]["raw_text"].count("\n") == 2 and rows[2]["notes"] is None


def test_csv_of_one_author_a_row_keeps_a_paper_whole_across_a_blank_line_and_an_empty_author(tmp_path):
    text = ("title,author,year\nAttention Is All You Need,Ashish Vaswani,2017\n\n"
            "Attention Is All You Need,,2017\nAttention Is All You Need,Noam Shazeer,2017\n")
    rows = _read_csv(tmp_path, "gaps.csv", text)
    assert len(rows) == 1 and json.loads(rows[0]["paper_record"])["authors"] == ["Ashish Vaswani", "Noam Shazeer"]


def test_csv_short_lines_after_a_quote_never_closed_are_no_papers(tmp_path):
    """The lines after a quote that is never closed are most likely its cell's text: a short one
    is an error row, not a paper titled by a sentence; a whole row there is still read."""
    text = ('title,year\nGood Paper One,2023\n"Broken, quote,2024\nGood Paper Two,2024\n'
            "本周一，会议公布了最佳论文奖项。\n")
    rows = _read_csv(tmp_path, "open.csv", text)
    assert [(r["source_path"], r["status"]) for r in rows] == [
        ("open.csv#2", "ok"), ("open.csv#3", "error"), ("open.csv#4", "ok"), ("open.csv#5", "error")]
    assert rows[3]["error"] == ("open.csv#5: 1 cell(s) after the quote of row 3 that is never closed: "
                                "likely text of that cell, not read as a row")


def test_csv_rows_that_differ_in_a_papers_rank_are_papers_of_their_own(tmp_path):
    """A 'rank' or 'position' column ranks papers, not authors: rows differing there stay apart."""
    text = "rank,title,author,year\n1,TBD,Ann Lee,2024\n2,TBD,Bo Chen,2024\n3,TBD,Cy Dee,2024\n"
    assert len(_read_csv(tmp_path, "ranked.csv", text)) == 3


def test_csv_of_one_author_a_row_starts_a_paper_where_the_author_order_restarts(tmp_path):
    """Two papers of one title, venue and year, one after the other: the author order going
    back to 1 starts the second (they were read as one paper of four authors)."""
    text = ("title,author,author_order,venue,year\n"
            "Introduction,Alice Smith,1,Workshop,2020\nIntroduction,Bob Jones,2,Workshop,2020\n"
            "Introduction,Carol White,1,Workshop,2020\nIntroduction,Dan Brown,2,Workshop,2020\n")
    rows = _read_csv(tmp_path, "authors.csv", text)
    assert [r["source_path"] for r in rows] == ["authors.csv#2", "authors.csv#4"]
    assert [json.loads(r["paper_record"])["authors"] for r in rows] == [["Alice Smith", "Bob Jones"],
                                                                       ["Carol White", "Dan Brown"]]


@pytest.mark.parametrize("sep", [";", "\t", "|"])
def test_csv_delimiter_is_sniffed_from_the_header(tmp_path, sep):
    text = sep.join(["title", "authors", "year"]) + "\n" + sep.join(
        ["Attention Is All You Need", "Ashish Vaswani, Noam Shazeer", "2017"]) + "\n"
    rows = _read_csv(tmp_path, "semi.csv", text)
    assert len(rows) == 1 and rows[0]["title"] == "Attention Is All You Need"
    fields = json.loads(rows[0]["paper_record"])
    assert fields["authors"] == ["Ashish Vaswani", "Noam Shazeer"] and fields["year"] == 2017


@pytest.mark.parametrize("header", ["title", "title\tauthors, affiliations\tyear"])
def test_a_tsv_is_split_at_tabs_whatever_its_header_sniffs_as(tmp_path, header):
    # a header of one column, or with a comma in a cell, sniffed as a comma: the rows' titles
    # were cut at their commas or the file had "no header"
    extra = "" if "\t" not in header else "\tAda Li (MIT)\t2021"
    rows = _read_csv(tmp_path, "list.tsv", f"{header}\nLearning to Rank, Revisited{extra}\nKernels{extra}\n")
    assert [(r["status"], r["title"]) for r in rows] == [("ok", "Learning to Rank, Revisited"), ("ok", "Kernels")]


def test_csv_delimiter_is_sniffed_past_leading_blank_lines(tmp_path):
    rows = _read_csv(tmp_path, "semi.csv", "\n;;\ntitle;authors\nAttention Is All You Need;Ashish Vaswani, Noam Shazeer\n")
    assert len(rows) == 1 and rows[0]["title"] == "Attention Is All You Need"
    assert json.loads(rows[0]["paper_record"])["authors"] == ["Ashish Vaswani", "Noam Shazeer"]


@pytest.mark.parametrize("first", [
    "Attention Is All You Need,Ashish Vaswani,NeurIPS,2017",
    "Large Language Models as Optimizers,Chengrun Yang and Xuezhi Wang",
    "x," + "Optimization is ubiquitous. " * 5,
])
def test_csv_without_a_header_row_is_one_error_row(tmp_path, first):
    rows = _read_csv(tmp_path, "noheader.csv", first + "\nGraph Neural Networks for Combinatorial Optimization,"
                                                      "Natalia Vesselinova,2020,\n")
    assert len(rows) == 1 and rows[0]["status"] == "error" and rows[0]["source_path"] == "noheader.csv"
    assert "header row is missing" in rows[0]["error"] and "no field names" in rows[0]["error"]


@pytest.mark.parametrize(("first", "why"), [
    # a one-word cell read as a field name made the first paper the header: every other row was
    # an error listing its cells as "keys", and a file of one row was "empty"
    ("Deep Residual Learning for Image Recognition,Kaiming He,CVPR", "its cell 'CVPR' is a venue"),
    ("Kernels,NeurIPS 2024", "its cell 'NeurIPS 2024' is a venue"),
    ("Residual Networks,https://arxiv.org/abs/1512.03385", "is a link"),
    ("Deep Residual Learning for Image Recognition,Kaiming He,Oral", "no cell is a known field name"),
])
@pytest.mark.parametrize("more", ["", "Attention Is All You Need,Ashish Vaswani,NeurIPS\n"])
def test_csv_whose_first_row_is_a_paper_with_a_one_word_cell_has_no_header(tmp_path, first, why, more):
    rows = _read_csv(tmp_path, "noheader.csv", f"{first}\n{more}")
    assert [(r["status"], r["source_path"]) for r in rows] == [("error", "noheader.csv")]
    assert "header row is missing" in rows[0]["error"] and why in rows[0]["error"]


def test_csv_header_of_unknown_one_word_names_is_read_with_a_note(tmp_path):
    rows = _read_csv(tmp_path, "other.csv", "Kernels,Oral\nTransformers,Poster\n")
    assert [r["source_path"] for r in rows] == ["other.csv#2"]
    assert "the header row names no known field ('Kernels', 'Oral')" in rows[0]["notes"]
    # a header with a known field name, in any spelling, gets no such note
    rows = _read_csv(tmp_path, "known.csv", "PaperTitle,Session,Oral\nAttention Is All You Need,S1,yes\n")
    assert rows[0]["title"] == "Attention Is All You Need" and not rows[0]["notes"]


def test_csv_duplicate_header_names_take_the_first_non_empty_cell_and_note_it(tmp_path):
    rows = _read_csv(tmp_path, "dup.csv", "title,Title,authors\n,Attention Is All You Need,Ashish Vaswani\n"
                                          "Large Language Models as Optimizers,LLMs as Optimizers,Chengrun Yang\n")
    assert [r["title"] for r in rows] == ["Attention Is All You Need", "Large Language Models as Optimizers"]
    assert all("the header names 'title' more than once" in r["notes"] for r in rows)


def test_csv_junk_titles_and_spreadsheet_years(tmp_path):
    rows = _read_csv(tmp_path, "junk.csv", "title,authors,year\n12345,A B,2017\n3.14,A B,2017\nnan,A B,2017\n"
                                           "Attention Is All You Need,Ashish Vaswani,2017.0\n")
    assert [r["status"] for r in rows] == ["error", "error", "error", "ok"]
    assert json.loads(rows[3]["paper_record"])["year"] == 2017


def test_csv_record_notes_reach_the_row(tmp_path):
    rows = _read_csv(tmp_path, "years.csv", "title,year\nAttention Is All You Need,1066\n")
    assert "year '1066'" in rows[0]["notes"] and json.loads(rows[0]["paper_record"])["year"] is None


def test_csv_a_row_of_empty_cells_is_an_error_row_and_a_blank_line_is_skipped(tmp_path):
    rows = _read_csv(tmp_path, "rows.csv", "title,authors\nSparse Codes for Widgets,Ann Lee\n,\n\nDense Widgets,Bo Chen\n")
    assert [(r["source_path"], r["status"]) for r in rows] == [
        ("rows.csv#2", "ok"), ("rows.csv#3", "error"), ("rows.csv#5", "ok")]
    assert "no text and no paper title" in rows[1]["error"]


def test_csv_a_row_with_too_few_cells_is_read_and_its_note_names_the_row(tmp_path):
    corpus, out = tmp_path / "corpus", tmp_path / "out"
    corpus.mkdir()
    (corpus / "short.csv").write_text("title,authors,venue,year\nSparse Codes for Widgets,Ann Lee,ICML,2023\n"
                                      "Dense Widgets,Bo Chen\n", encoding="utf-8")
    config = load_config()
    config.run.workers = 1
    run(corpus, out, config, progress=False)
    docs = pd.read_parquet(out / "documents.parquet").set_index("source_path")
    assert pd.isna(docs.loc["short.csv#2", "notes"])
    assert docs.loc["short.csv#3", "status"] == "ok"
    assert docs.loc["short.csv#3", "notes"] == "csv: row 3 has 2 cell(s) but the header names 4: 'venue', 'year' read as empty"
    papers = pd.read_parquet(out / "papers.parquet")
    assert sorted(papers["title"]) == ["Dense Widgets", "Sparse Codes for Widgets"]


def test_a_conference_export_header_and_bracketed_affiliations() -> None:
    """A conference tool's CSV header ("Paper Title", "Author Names") names the record's fields
    as "paper_title" and "authors" do; "Name (Affiliation)*; …" gives the people and their
    institutions, a comma inside the brackets is the affiliation's (layout of CVPR 2019's oral
    list export)."""
    reading = paper_records.read_record({
        "Paper ID": "5",
        "Paper Title": "Finding Task-Relevant Features for Few-Shot Learning by Category Traversal",
        "Author Names": "Hongyang Li (The Chinese University of Hong Kong)*; David Eigen (Clarifai Inc.); "
                        "Xiaogang Wang (Chinese University of Hong Kong, Hong Kong)",
    })
    paper = reading.fields
    assert paper["title"] == "Finding Task-Relevant Features for Few-Shot Learning by Category Traversal"
    assert paper["authors"] == ["Hongyang Li", "David Eigen", "Xiaogang Wang"]
    assert paper["institutions"] == ["The Chinese University of Hong Kong", "Clarifai Inc.",
                                     "Chinese University of Hong Kong, Hong Kong"]
    assert paper_records.field_key(" Paper-Title ") == "paper_title"


def test_a_venue_tag_with_an_underscore_gives_venue_and_year() -> None:
    # an export's Conference column ("ICML_2024", layout of a public paper collection's CSV)
    assert paper_records.record_venue("ICML_2024") == ("ICML", 2024)


def test_a_header_with_invisible_or_full_width_characters_names_its_field() -> None:
    """A header copied from a web page or a spreadsheet keeps a byte-order mark, a zero-width
    space or full-width letters; the field is still the one its visible name says."""
    assert paper_records.field_key("\ufeffPaper\u00a0Title ") == "paper_title"
    assert paper_records.field_key("\u200bAuthor Names") == "author_names"
    assert paper_records.field_key("Ｖｅｎｕｅ") == "venue"
    reading = paper_records.read_record({"\u200bTitle": "Sparse Codes for Widgets", "Ｖｅｎｕｅ": "CVPR 2016",
                                         "Au\u00adthors\u200e": "Ana Lima; Bo Chen"})
    assert reading.fields["title"] == "Sparse Codes for Widgets"
    assert reading.fields["venue"] == "CVPR"
    assert reading.fields["authors"] == ["Ana Lima", "Bo Chen"]


def test_an_unclosed_bracket_in_an_author_cell_does_not_join_the_names_after_it() -> None:
    """"Name (Affiliation; Name (Affiliation)": the first bracket is never closed, so brackets
    are no guide and every separator splits (the names after it were one author); a closing
    bracket with none open is ignored."""
    reading = paper_records.read_record({"title": "Sparse Codes for Widgets",
                                         "authors": "Ana Lima (Univ. X; Bo Chen (EPFL); Carla Diaz"})
    assert reading.fields["authors"] == ["Ana Lima (Univ. X", "Bo Chen", "Carla Diaz"]
    reading = paper_records.read_record({"title": "Sparse Codes for Widgets",
                                         "authors": "Ana Lima (Google)); Bo Chen (Univ. X, Hong Kong); Carla Diaz"})
    assert reading.fields["authors"] == ["Ana Lima (Google))", "Bo Chen", "Carla Diaz"]
    assert reading.fields["institutions"] == ["Univ. X, Hong Kong"]


def test_a_tsv_export_is_read_as_records_split_at_tabs(tmp_path):
    rows = _read_csv(tmp_path, "accepted.tsv", "title\tauthors\tvenue\n"
                     "Deep Learning, Fast and Slow\tAda Li, Bo Chen\tAISTATS\n"
                     "Kernels, Revisited\tCai Wu\tAISTATS\n")
    assert [r["source_path"] for r in rows] == ["accepted.tsv#2", "accepted.tsv#3"]
    assert [r["title"] for r in rows] == ["Deep Learning, Fast and Slow", "Kernels, Revisited"]
    assert json.loads(rows[0]["paper_record"])["authors"] == ["Ada Li", "Bo Chen"]


def test_a_tsv_export_with_camel_case_headers_is_one_paper_a_row(tables):
    # a conference system's export: tab-separated, "PaperTitle" and "AuthorNames" as headers
    docs, sections = tables
    sec = _one(sections, "cmt_export.tsv#2")
    assert sec["title"] == "Sparse Codes for Parsing, Revisited"
    assert list(sec["authors"]) == ["Lee, Ann", "Wu, Bo"]  # "Last, First" names parted at ";"
    assert docs.loc["cmt_export.tsv#2", "status"] == "ok"


@pytest.mark.parametrize(("name", "key"), [("PaperTitle", "paper_title"), ("authorNames", "author_names"),
                                           ("arXiv", "arxiv"), ("ArXiv", "arxiv"), ("Paper Title", "paper_title")])
def test_field_keys_part_camel_case_words_only(name, key):
    assert paper_records.field_key(name) == key



@pytest.mark.parametrize("header", ["VenueName", "ConferenceName", "venue name"])
def test_an_export_names_its_venue_column_as_a_camel_case_or_spaced_name(tmp_path, header):
    # "VenueName" beside "PaperTitle"/"AuthorNames" (a conference system's export) is the venue,
    # not a field dropped without a word
    rows = _read_csv(tmp_path, "export.csv", f"PaperTitle,AuthorNames,{header}\n"
                     "Sparse Codes for Parsing,Ann Lee,ICML 2024\n")
    record = json.loads(rows[0]["paper_record"])
    assert (record["venue"], record["year"]) == ("ICML", 2024)


def test_a_record_whose_only_title_is_in_a_formatted_reference_field(tmp_path):
    """An awards page's data: each record a year, a type and an ACM-format ``citation`` (HTML
    inside): the title, authors and year come from the reference."""
    path = tmp_path / "best.yml"
    path.write_text('- year: 2025\n  type: Research\n  citation: "Yolanda A. Rankin and Nyshia Baker. 2025. Sister '
                    'Circles: An Intersectional Method in Computing Education. In <i>Proceedings of the 56th ACM '
                    'Technical Symposium (<a href=\\"/x\\">SIGCSETS 2025</a>)</i>. ACM, 966–972."\n', encoding="utf-8")
    from pipeline.ingest import read_documents

    (row,) = read_documents("best.yml", str(path))
    record = json.loads(row["paper_record"])
    assert (row["status"], record["title"], record["authors"], record["year"]) == (
        "ok", "Sister Circles: An Intersectional Method in Computing Education", ["Yolanda A. Rankin", "Nyshia Baker"], 2025)


def test_a_record_naming_its_paper_under_a_key_no_list_knows(tmp_path):
    """A site's publication data keeps titles under an image's ``alt``: the one title-shaped
    string of a record with authors is its title; a sentence (a news item's description) is not."""
    path = tmp_path / "pubs.yml"
    path.write_text('- title: "2025"\n  images:\n    - alt: "Widget Dataset: A Maritime Object Detection Dataset"\n'
                    '      authors: "Ann Lee, Bo Chen, and Cy Wu"\n      conf: "IEEE International Conference on Robotics '
                    'and Automation (ICRA)"\n      conf_link: "https://example.org/icra"\n'
                    '- description: "Two papers (Widgets and Gadgets) accepted at ICRA 2025!"\n  authors: "Ann and Bo"\n',
                    encoding="utf-8")
    from pipeline.ingest import read_documents

    rows = read_documents("pubs.yml", str(path))
    assert [(r["status"], r["title"]) for r in rows] == [
        ("ok", "Widget Dataset: A Maritime Object Detection Dataset"), ("empty", None)]
    assert json.loads(rows[0]["paper_record"])["venue"] == "ICRA"
