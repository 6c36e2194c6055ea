"""Silent wrong outputs a tester found (venue from a submission sentence, a sentence with an
arXiv link taken for a second paper, a page titled only in Chinese giving no paper), each through
the real run (:func:`pipeline.run`, one run over all of them)."""

from __future__ import annotations

import pandas as pd
import pytest

from pipeline.clean import find_dropped
from pipeline.config import Config
from pipeline.paper_records import record_venue
from pipeline.segment import segment_document
from pipeline.venue_status import published_venue_years

from conftest import sections_of_pages

PAPER = "# Robust Optimization for Sparse Graph Learning\n\nAuthors: Alice Wang, Bob Li\n\n{} We study sparse graphs.\n"
NOT_ACCEPTED = {
    "submitted.md": "Submitted to ICLR 2025.",
    "under_review.md": "Under review at NeurIPS 2025.",
    "rejected.md": "Rejected from ICML 2024, now under revision.",
    "zh_submitted.md": "投稿至 ICLR 2025，目前在审稿中。",
}
THANKS_THEN_ACCEPTED = "We thank the ICML 2024 reviewers; this version is accepted at KDD 2025."
PROBES = {name: PAPER.format(line) for name, line in NOT_ACCEPTED.items()}
PROBES["thanks_then_accepted.md"] = PAPER.format(THANKS_THEN_ACCEPTED)
PROBES["accepted.md"] = PAPER.format("Accepted at ICLR 2025.")
PROBES["venue_line_under_review.md"] = PAPER.replace("Bob Li\n", "Bob Li\nVenue: Under review at ICLR 2025\n").format("")
CODECS = "Neural Codecs for Low Bitrate Audio"
LINKED_SENTENCE = (f"# {CODECS}\n\nAuthors: Cat Wu, Dan Ho\n\nAccepted at ICASSP 2025. We compress audio with neural codecs. "
                   "[arXiv](https://arxiv.org/abs/2501.01234)\n\nWe evaluate on speech and music and beat strong baselines.\n")
LINKED_SENTENCE_HTML = (
    f"<html><head><title>Paper</title></head><body><article><h1>{CODECS}</h1><p>Authors: Cat Wu, Dan Ho</p>"
    "<p>Accepted at ICASSP 2025. We compress audio with neural codecs. <a href='https://lab.example.com/codec.pdf'>PDF</a> "
    "<a href='https://arxiv.org/abs/2501.01234'>arXiv</a> <a href='https://github.com/lab/codec'>Code</a></p>"
    "<p>We evaluate on speech and music and beat strong baselines on perceptual metrics.</p></article></body></html>")
PROBES["linked_sentence.md"] = LINKED_SENTENCE
ZH_BODY = "该论文被 ICLR 2025 接收。这篇论文提出了一种新的采样器，减少了函数评估次数。\n\n团队重新设计了求解器，十步即可达到以往百步的质量。\n"
ZH_TITLE = "高效的扩散模型采样方法研究"
ZH_ONLY = {
    "zh_label_line.md": f"论文标题：{ZH_TITLE}\n作者：张三、李四（清华大学）\n\n{ZH_BODY}",
    "zh_label_heading.md": f"# 论文：{ZH_TITLE}\n\n作者：张三、李四（清华大学）\n\n{ZH_BODY}",
    "zh_hant_label_heading.md": "# 論文：高效的擴散模型採樣方法研究\n\n作者：張三、李四（清華大學）\n\n"
                                "該論文被 ICLR 2025 接收。這篇論文提出了一種新的採樣器，減少了函數評估次數。\n",
}
PROBES.update(ZH_ONLY)
PROBES["linked_sentence.html"] = LINKED_SENTENCE_HTML


@pytest.fixture(scope="module")
def run(tmp_path_factory) -> pd.DataFrame:
    """The sections of one run over :data:`PROBES`, with each row's ``source_path``."""
    return sections_of_pages(tmp_path_factory.mktemp("bad_input_fields"), PROBES)


def _venues(run: pd.DataFrame, name: str) -> list[tuple]:
    rows = run[run["source_path"] == name].sort_values("ordinal")
    return [(r.title, None if pd.isna(r.venue) else r.venue, None if pd.isna(r.year) else int(r.year))
            for r in rows.itertuples()]


def _arxiv(run: pd.DataFrame, name: str) -> list:
    return run[run["source_path"] == name].sort_values("ordinal")["arxiv_id"].tolist()


@pytest.mark.parametrize("name", [*sorted(NOT_ACCEPTED), "venue_line_under_review.md"])
def test_a_venue_the_paper_was_only_submitted_to_is_not_its_venue(run: pd.DataFrame, name: str) -> None:
    assert _venues(run, name) == [("Robust Optimization for Sparse Graph Learning", None, None)]


def test_an_accepting_venue_wins_over_the_one_whose_reviewers_are_thanked(run: pd.DataFrame) -> None:
    assert _venues(run, "thanks_then_accepted.md") == [("Robust Optimization for Sparse Graph Learning", "KDD", 2025)]
    assert _venues(run, "accepted.md") == [("Robust Optimization for Sparse Graph Learning", "ICLR", 2025)]


@pytest.mark.parametrize(("text", "expected"), [
    ("Submitted to ICLR 2025.", []),
    ("Under review at NeurIPS 2025, code soon.", []),
    ("投稿至 ICLR 2025，目前在审稿中。", []),
    (THANKS_THEN_ACCEPTED, [("KDD", 2025)]),
    ("Accepted at ICML 2025. We thank the reviewers.", [("ICML", 2025)]),
    ("Our ICLR 2025 paper was accepted after a rejection from NeurIPS 2024.", [("ICLR", 2025)]),
    ("论文已被 CVPR 2025 录用。", [("CVPR", 2025)]),
])
def test_published_venue_years_leave_out_submissions(text: str, expected: list[tuple]) -> None:
    assert [(v, y) for v, y, _, _ in published_venue_years(text)] == expected


def test_a_record_venue_field_naming_a_submission_gives_no_venue() -> None:
    assert record_venue("Submitted to ICLR 2025") == (None, None)
    assert record_venue("Under review at NeurIPS 2025") == (None, None)
    assert record_venue("NeurIPS 2025") == ("NeurIPS", 2025)


def test_a_sentence_ending_in_kind_links_is_evidence_for_the_paper_above() -> None:
    result = segment_document(LINKED_SENTENCE, find_dropped(LINKED_SENTENCE, Config()))
    assert [s["heading"] for s in result["sections"]] == [f"# {CODECS}"]
    # the same line without the sentence is still a title with its links
    linked_title = f"{CODECS} [arXiv](https://arxiv.org/abs/2501.01234) [Code](https://github.com/lab/codec)"
    page = f"# Reading list\n\n{linked_title}\n\nAuthors: Cat Wu, Dan Ho\n"
    assert [s["heading"] for s in segment_document(page, find_dropped(page, Config()))["sections"]] == [linked_title]


@pytest.mark.parametrize("name", ["linked_sentence.md", "linked_sentence.html"])
def test_a_one_paper_page_with_a_linked_sentence_is_one_paper_with_its_id(run: pd.DataFrame, name: str) -> None:
    assert _venues(run, name) == [(CODECS, "ICASSP", 2025)]
    assert _arxiv(run, name) == ["2501.01234"]


@pytest.mark.parametrize("name", sorted(ZH_ONLY))
def test_a_page_titled_only_in_chinese_under_a_paper_label_is_a_paper(run: pd.DataFrame, name: str) -> None:
    rows = run[run["source_path"] == name]
    assert [(r.title_zh, r.venue, int(r.year)) for r in rows.itertuples()] == [(ZH_TITLE, "ICLR", 2025)]
    assert pd.isna(rows.iloc[0]["title"]) and len(rows.iloc[0]["authors"]) == 2


def test_a_title_label_that_names_no_paper_is_no_paper_on_its_own() -> None:
    page = f"标题：如何入门深度学习\n作者：小明\n\n{ZH_BODY}"
    assert segment_document(page, find_dropped(page, Config()))["sections"] == []
