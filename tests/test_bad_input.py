"""Hand-made bad and odd input: the layouts and bytes a tester fed the pipeline, each through the
real segmenter (:func:`pipeline.segment.segment_document`) and the real run (:func:`pipeline.run`,
one run over all of them), asserting what comes out."""

from __future__ import annotations

import os
import random

import pandas as pd
import pytest

import pipeline
from pipeline.candidates import is_list_heading
from pipeline.clean import find_dropped
from pipeline.config import Config
from pipeline.heading_titles import split_heading_title
from pipeline.segment import segment_document

OFFLINE = ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE")
PUBLICATIONS = (
    "# Publications\n\n"
    "- Alice Smith, Bob Jones. [Learning to Rank with Graphs](https://arxiv.org/abs/2201.00011)\n"
    "- Carol White, Dan Brown. [Sparse Attention for Long Documents](https://arxiv.org/abs/2105.00022)\n"
    "- Eve Black, Frank Green. [Contrastive Pretraining of Speech Encoders](https://arxiv.org/abs/2003.00033)\n"
)
ZH_LIST_HEADING = (
    "## 獲獎論文\n\n"
    "- 张三, 李四. [Learning to Rank with Graphs](https://arxiv.org/abs/2201.00011)\n"
    "- 王五, 赵六. [Sparse Attention for Long Documents](https://arxiv.org/abs/2105.00022)\n"
)
PAPER_LABEL = (
    "# Weekly picks\n\n"
    "- **Paper:** [Efficient Transformers: A Survey](https://arxiv.org/abs/2009.06732)\n"
    "- **Paper:** [Longformer: The Long-Document Transformer](https://arxiv.org/abs/2004.05150)\n"
)
TABLE = (
    "# Award papers 2023\n\n"
    "| Paper | Authors | Venue |\n|---|---|---|\n"
    "| Segment Anything | Alexander Kirillov | ICCV 2023 |\n"
    "| Visual Instruction Tuning | Haotian Liu | NeurIPS 2023 |\n"
    "| DreamFusion: Text-to-3D using 2D Diffusion | Ben Poole | ICLR 2023 |\n"
)
MAMBA = "Mamba: Linear-Time Sequence Modeling with Selective State Spaces"
CYRILLIC = (
    "# Paper digest\n\n"
    f"1. **{MAMBA}** — Albert Gu, Tri Dao. arXiv:2312.00752\n"
    "2. **ГПТ для русского языка: Обзор** — Иван Петров. ACL 2023\n"
)
JAPANESE = (
    "# Paper digest\n\n"
    f"- **{MAMBA}** — Albert Gu, Tri Dao\n"
    "- **トランスフォーマーによる画像認識の新手法** — 山田太郎, 佐藤花子\n"
)
ZH_GUILLEMETS = "# 论文推荐\n\n1. 《深度残差学习》 CVPR 2016 何恺明\n2. 《注意力就是一切》 NeurIPS 2017\n"
PAPER_CREDIT = ("# Sparse Attention for Long Sequences\n\nAuthors: Alice Wang and Bob Li\n\n"
                "We propose sparse attention for long inputs. Accepted at ICML 2025.\n")
BOLD_PAPER_CREDIT = ("# Lab news\n\n**Sparse Mixture Routing for Vision**\n\nAuthor: Carol Zhang\n\n"
                     "We route tokens to experts. Accepted at CVPR 2025.\n")
PROBES = {"publications.md": PUBLICATIONS, "paper_label.md": PAPER_LABEL, "table.md": TABLE,
          "cyrillic.md": CYRILLIC, "zh_list.md": ZH_GUILLEMETS, "paper_credit.md": PAPER_CREDIT,
          "bold_paper_credit.md": BOLD_PAPER_CREDIT}


def titles(text: str) -> list[tuple[str | None, str | None]]:
    """``(title, title_zh)`` of each section the segmenter cuts ``text`` into."""
    result = segment_document(text, find_dropped(text, Config()))
    return [split_heading_title(s["heading"]) for s in result["sections"]]


@pytest.fixture(scope="module")
def probe_run(tmp_path_factory) -> dict:
    """One :func:`pipeline.run` over the probes and a file of random bytes, called by a caller
    that sets neither offline variable: the result, ``os.environ`` before and after the call, and
    the sections table with each row's ``source_path``."""
    root = tmp_path_factory.mktemp("bad_input")
    corpus = root / "corpus"
    corpus.mkdir()
    for name, text in PROBES.items():
        (corpus / name).write_text(text, encoding="utf-8")
    (corpus / "random.txt").write_bytes(random.Random(7).randbytes(4000))
    saved = {name: os.environ.pop(name, None) for name in OFFLINE}
    try:
        before = dict(os.environ)
        result = pipeline.run(corpus, root / "out", {"run": {"workers": 1}})
        after = dict(os.environ)
    finally:
        os.environ.update({name: value for name, value in saved.items() if value is not None})
    documents = pd.read_parquet(result.tables["documents"])
    sections = pd.read_parquet(result.tables["sections"]).merge(documents[["doc_id", "source_path"]], on="doc_id")
    return {"result": result, "before": before, "after": after, "sections": sections, "documents": documents}


def _found(run: dict, name: str) -> list[tuple]:
    rows = run["sections"][run["sections"]["source_path"] == name].sort_values("ordinal")
    return [tuple(None if pd.isna(v) else v for v in (r.title, r.title_zh, r.venue)) + (None if pd.isna(r.year) else int(r.year),)
            for r in rows.itertuples()]


def test_the_run_restores_the_callers_environment(probe_run: dict) -> None:
    assert probe_run["after"] == probe_run["before"]  # no HF_HUB_OFFLINE left behind, nothing changed
    assert not set(OFFLINE) & set(probe_run["after"])


def test_random_bytes_are_a_binary_content_error_row(probe_run: dict) -> None:
    result = probe_run["result"]
    assert result.exit_code == 1 and result.failed_files == 1
    errors = pd.read_parquet(result.tables["errors"])
    assert errors.to_dict("records") == [{
        "path": "random.txt", "stage": "ingest", "error_type": "BinaryContent",
        "message": "could not decode random.txt: BinaryContentError: no character encoding decodes these bytes "
                   "(binary content, not text)"}]


@pytest.mark.parametrize("heading", ["Publications", "ICML 2024 Accepted Papers (12)", "📚 Selected publications:",
                                     "论文列表", "2024年获奖论文", "獲獎論文（3篇）", "Award papers 2023"])
def test_generic_list_headings_are_recognised(heading: str) -> None:
    assert is_list_heading(heading)


@pytest.mark.parametrize("title", ["Papers with Code", "Paper digest", "Learning to Rank with Graphs", "深度残差学习"])
def test_titles_and_other_headings_are_not_list_headings(title: str) -> None:
    assert not is_list_heading(title)


def test_a_generic_list_heading_contains_papers_and_is_none(probe_run: dict) -> None:
    expected = ["Learning to Rank with Graphs", "Sparse Attention for Long Documents",
                "Contrastive Pretraining of Speech Encoders"]
    assert [t for t, _ in titles(PUBLICATIONS)] == expected
    assert [t for t, _ in titles(ZH_LIST_HEADING)] == expected[:2]
    assert [row[0] for row in _found(probe_run, "publications.md")] == expected
    assert "Publications" not in pd.read_parquet(probe_run["result"].tables["papers"])["title"].tolist()


def test_items_of_a_paper_label_and_a_linked_title_are_papers(probe_run: dict) -> None:
    expected = ["Efficient Transformers: A Survey", "Longformer: The Long-Document Transformer"]
    assert [t for t, _ in titles(PAPER_LABEL)] == expected
    docs = probe_run["documents"].set_index("source_path")
    assert docs.loc["paper_label.md", "n_sections"] == 2 and pd.isna(docs.loc["paper_label.md", "reason"])
    # the same items numbered, each with its authors' metadata line under it
    numbered = "".join(f"{k}. **Paper:** [{t}](https://arxiv.org/abs/2009.0673{k})\n   **Authors:** Ann Lee, Bo Chen\n"
                       for k, t in enumerate(expected + ["Generative Adversarial Networks"], 1))
    assert [t for t, _ in titles("# Reading list\n\n" + numbered)] == expected + ["Generative Adversarial Networks"]
    # a link's name after a label of the paper's address is no title
    assert titles("# Picks\n\n## Gated Attention for Large Language Models\n\n论文地址：[点击查看论文](https://arxiv.org/abs/2505.06708)\n") \
        == [("Gated Attention for Large Language Models", None)]


def test_each_row_of_a_paper_table_is_a_paper(probe_run: dict) -> None:
    assert _found(probe_run, "table.md") == [
        ("Segment Anything", None, "ICCV", 2023),
        ("Visual Instruction Tuning", None, "NeurIPS", 2023),
        ("DreamFusion: Text-to-3D using 2D Diffusion", None, "ICLR", 2023),
    ]


def test_items_in_cyrillic_or_japanese_are_items_of_their_own(probe_run: dict) -> None:
    assert _found(probe_run, "cyrillic.md") == [(MAMBA, None, None, None), ("ГПТ для русского языка: Обзор", None, "ACL", 2023)]
    assert len(titles(JAPANESE)) == 2
    assert titles(JAPANESE)[0] == (MAMBA, None)


def test_a_numbered_list_of_titles_in_book_title_marks_with_venue_and_author(probe_run: dict) -> None:
    assert titles(ZH_GUILLEMETS) == [(None, "深度残差学习"), (None, "注意力就是一切")]
    assert _found(probe_run, "zh_list.md") == [(None, "深度残差学习", "CVPR", 2016), (None, "注意力就是一切", "NeurIPS", 2017)]


DATED_NEWS = (
    "## 2026\n"
    "* **2026-07-10** 我们的论文\"Sparse Attention for Long Documents\"被 CVPR 2026 录用，恭喜张三！\n"
    "   <br/><br/>\n"
    "* **2026-06-06** 我们的论文\"Contrastive Pretraining of Speech Encoders\"被 ICML 2026 录用。\n"
    "   <br/><br/>\n"
    "* **2026-05-19** 刘老师获教学成果奖！\n"
)


def test_the_date_leading_a_news_item_is_no_title_beside_a_venue() -> None:
    # items that name a venue edition are a paper list only when their leading span is a title:
    # a date ("**2026-07-10**") is not, and the paper the item quotes is found instead
    found = [t for t, _ in titles(DATED_NEWS)]
    assert "Sparse Attention for Long Documents" in " ".join(filter(None, found))
    assert not any(t and t.startswith("2026-") for t in found)


def test_a_paper_credit_under_its_title_is_no_byline_and_gives_the_authors(probe_run: dict) -> None:
    # "Authors:" (plural) under a title, and "Author:" under a bold title, credit the paper, not the page
    assert find_dropped(PAPER_CREDIT, Config()) == [] and find_dropped(BOLD_PAPER_CREDIT, Config()) == []
    sections = probe_run["sections"].set_index("source_path")
    assert sections.loc["paper_credit.md", "title"] == "Sparse Attention for Long Sequences"
    assert list(sections.loc["paper_credit.md", "authors"]) == ["Alice Wang", "Bob Li"]
    assert sections.loc["bold_paper_credit.md", "title"] == "Sparse Mixture Routing for Vision"
    assert list(sections.loc["bold_paper_credit.md", "authors"]) == ["Carol Zhang"]


@pytest.mark.parametrize("headline", ["# NeurIPS 2024 Best Papers Announced", "NeurIPS 2024 Best Papers Announced"])
def test_an_author_line_under_a_pages_headline_is_still_its_byline(headline: str) -> None:
    text = f"{headline}\n\nAuthor: Jane Doe\n\nNeurIPS 2024 gave its Best Paper award to two papers.\n"
    assert [(d["reason"], d["text"]) for d in find_dropped(text, Config())] == [("byline", "Author: Jane Doe")]
