"""Acceptance on the real seed articles (issue 2): counts, junk, context, fields, fusion."""

from __future__ import annotations

import hashlib

import pyarrow.parquet as pq

from pipeline.config import load_config
from pipeline.runner import run

from conftest import TABLES, load_gold, read_outputs, require_seeds
from gold_checks import all_section_text, assert_coverage, assert_fields_match, sections_by_file

GOLD = load_gold("seeds.json")
SIMPLIFIED, TRADITIONAL = "000_2b21ae29ba820db5.txt", "003_2bae7e6301a58560.txt"


def test_counts(seeds_run):
    docs = seeds_run["documents"]
    assert len(docs) == GOLD["documents"] == 2
    assert set(docs["status"]) == {"ok"}
    assert len(seeds_run["sections"]) == GOLD["sections"] == 21
    assert len(seeds_run["papers"]) == GOLD["papers"] == 15


def test_document_metadata(seeds_run):
    docs = seeds_run["documents"].set_index("source_path")
    assert docs.loc[SIMPLIFIED, "lang"] == "zh-Hans"
    assert docs.loc[TRADITIONAL, "lang"] == "zh-Hant"
    assert docs.loc[SIMPLIFIED, "encoding"] == "utf-8"
    seed = require_seeds()
    for path, row in docs.iterrows():
        raw = (seed / path).read_bytes()
        assert row["content_sha256"] == hashlib.sha256(raw).hexdigest()
        assert row["doc_id"] == row["content_sha256"][:16]
        decoded = raw.decode("utf-8").replace("\r\n", "\n")
        # the decoded text is kept whole; text only has its Unicode spaces normalized
        assert (row["raw_text"] if isinstance(row["raw_text"], str) else row["text"]) == decoded
        assert row["text"] == decoded.replace("\u3000", " ")
        assert row["n_chars"] == len(row["text"])
    # the reference link of the whole article is document metadata, not part of a paper
    assert list(docs.loc[SIMPLIFIED, "urls"]) == GOLD["doc_urls"][SIMPLIFIED]
    assert (docs.loc[SIMPLIFIED, "venue"], docs.loc[SIMPLIFIED, "year"]) == ("ICML", 2025)


def test_shared_papers_fused_one_mention_per_file(seeds_run):
    papers = seeds_run["papers"]
    multi = papers[papers["n_mentions"] > 1]
    assert sorted(multi["arxiv_id"]) == sorted(GOLD["shared_papers_arxiv"])
    assert (multi["n_mentions"] == 2).all()
    assert (multi["doc_ids"].map(len) == 2).all()
    single = papers[papers["n_mentions"] == 1]
    assert len(single) == 9
    # every section belongs to exactly one paper
    ids = [s for lst in papers["section_ids"] for s in lst]
    assert sorted(ids) == sorted(seeds_run["sections"]["section_id"])


def test_unrelated_news_is_dropped_not_in_any_section(seeds_run):
    dropped_text = "\n".join(seeds_run["dropped"]["text"])
    for phrase in GOLD["dropped_must_contain"]:
        assert phrase in dropped_text
    section_text = all_section_text(seeds_run)
    for phrase in GOLD["sections_must_not_contain"]:
        assert phrase not in section_text
    reasons = seeds_run["dropped"].groupby("reason").size().to_dict()
    assert reasons == {"byline": 2, "unrelated_trailing": 1}


def test_dropped_spans_point_into_the_document_text(seeds_run):
    docs = seeds_run["documents"].set_index("doc_id")
    for row in seeds_run["dropped"].itertuples():
        assert docs.loc[row.doc_id, "text"][row.char_start : row.char_end] == row.text
    for row in seeds_run["sections"].itertuples():
        assert docs.loc[row.doc_id, "text"][row.char_start : row.char_end] == row.text


def test_every_character_in_exactly_one_span(seeds_run):
    assert_coverage(seeds_run)


def test_fields_match_gold(seeds_run):
    assert_fields_match(seeds_run, GOLD)


def test_simplified_report_context(seeds_run):
    sections = sections_by_file(seeds_run)[SIMPLIFIED]
    assert [s["award"] for s in sections] == ["outstanding_paper"] * 6 + ["outstanding_position_paper"] * 2
    assert all((s["venue"], s["year"]) == ("ICML", 2025) for s in sections)
    assert sum(isinstance(s["arxiv_id"], str) for s in sections) == 4


def test_titles_without_decorations(seeds_run):
    for title in seeds_run["sections"]["title"]:
        for suffix in ("深度簡介", "深度解析", "深度解說", "深度简介"):
            assert suffix not in title
        assert title == title.strip()


def test_institutions_are_separate_items_without_trailing_deng(seeds_run):
    institutions = [i for lst in seeds_run["sections"]["institutions"] for i in lst]
    assert {"斯坦福大学", "微软", "佐治亚理工学院"} <= set(institutions)
    assert not any(i.endswith("等") for i in institutions)


def test_collabllm_fused_from_both_sources(seeds_run):
    papers = seeds_run["papers"].set_index("arxiv_id")
    paper = papers.loc["2502.00640"]
    traditional = sections_by_file(seeds_run)[TRADITIONAL]
    digest_authors = next(s["authors"] for s in traditional if s["arxiv_id"] == "2502.00640")
    assert list(paper["authors"]) == list(digest_authors)
    assert len(paper["authors"]) == 10
    assert list(paper["institutions"]) == ["斯坦福大学", "微软", "佐治亚理工学院"]
    assert "https://wuyxin.github.io/collabllm/" in list(paper["urls"])
    assert "https://arxiv.org/abs/2502.00640" in list(paper["urls"])
    assert paper["venue"] == "ICML" and paper["year"] == 2025 and paper["award"] == "outstanding_paper"


def test_scripts_and_normalized_text(seeds_run):
    sections = seeds_run["sections"]
    docs = seeds_run["documents"].set_index("doc_id")["source_path"]
    langs = {docs[d]: set(g["lang"]) for d, g in sections.groupby("doc_id")}
    assert langs == {SIMPLIFIED: {"zh-Hans"}, TRADITIONAL: {"zh-Hant"}}
    traditional = sections[sections["lang"] == "zh-Hant"]
    # original kept, normalized text in Simplified
    assert traditional["text"].str.contains("論文資訊").all()
    assert traditional["text_norm"].str.contains("论文资讯").all()
    assert not traditional["text_norm"].str.contains("論文").any()
    simplified = sections[sections["lang"] == "zh-Hans"]
    assert (simplified["text"] == simplified["text_norm"]).all()


def test_summaries_and_keywords(seeds_run):
    for row in seeds_run["sections"].itertuples():
        assert isinstance(row.summary, str) and len(row.summary) >= 40, row.section_id
        assert len(row.summary) <= load_config().extract.summary_max_chars
        assert 1 <= len(row.keywords) <= load_config().extract.n_keywords
        assert "本文" not in list(row.keywords)


def test_rerun_gives_identical_parquet_content(seeds_run, tmp_path, use_embedder):
    run(require_seeds(), tmp_path, load_config(), embedder=use_embedder, progress=False)
    again = read_outputs(tmp_path)
    for name in TABLES:
        first = pq.read_table(seeds_run["_dir"] / f"{name}.parquet")
        second = pq.read_table(tmp_path / f"{name}.parquet")
        assert first.equals(second), name
        assert first.schema.metadata == second.schema.metadata
    assert again["papers"]["paper_id"].tolist() == seeds_run["papers"]["paper_id"].tolist()


def test_target_script_traditional(tmp_path, use_embedder):
    config = load_config(overrides={"normalize": {"target_script": "zh-Hant"}})
    run(require_seeds(), tmp_path, config, embedder=use_embedder, progress=False)
    out = read_outputs(tmp_path)
    sections = out["sections"]
    simplified = sections[sections["lang"] == "zh-Hans"]
    assert simplified["text_norm"].str.contains("論文摘要").all()
    institutions = {i for lst in sections["institutions"] for i in lst}
    assert {"斯坦福大學", "微軟"} <= institutions
    assert len(out["papers"]) == 15
