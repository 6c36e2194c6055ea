"""Table-driven tests of :mod:`pipeline.fields`.

Lines quoted from the two seed articles (a Simplified Chinese ICML 2025 award report and a
Traditional Chinese NeurIPS/ICML 2025 digest) are marked "seed".
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pipeline import identifiers
from pipeline.fields import (
    AWARDS,
    KEYS,
    VENUES,
    find_award_label,
    find_venue_years,
    fold_title,
    normalize_award,
    parse_key_value,
    venue_from_url,
)
from pipeline.identifiers import URL_KINDS, find_arxiv_ids, find_urls, url_kind
from pipeline.names import split_names, without_honorific

# --- seed passages -----------------------------------------------------------------------------

SEED_ZH_HANT_BLOCK = """---

論文資訊
📄 Superposition Yields Robust Neural Scaling
👥 Liu, Liu, Gore
🏆 NeurIPS 2025 · Best Paper Runner-Up
🔗 arxiv.org/abs/2505.10465
"""

SEED_ZH_HANS_SECTION = """论文 5：Conformal Prediction as Bayesian Quadrature

论文地址：https://arxiv.org/abs/2502.13228

机构：普林斯顿大学

论文摘要： 基于机器学习的预测系统在高风险场景中的应用日益广泛。
"""


# --- awards ------------------------------------------------------------------------------------


def test_awards_enum() -> None:
    assert AWARDS == (
        "best_paper",
        "best_paper_runner_up",
        "outstanding_paper",
        "outstanding_position_paper",
        "honorable_mention",
        "test_of_time",
        "other",
    )


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        # English
        ("Best Paper", "best_paper"),
        ("Best Paper Award", "best_paper"),
        ("best papers", "best_paper"),
        ("Best Paper Runner-Up", "best_paper_runner_up"),
        ("Runner-up", "best_paper_runner_up"),
        ("runner up", "best_paper_runner_up"),
        ("Outstanding Paper", "outstanding_paper"),
        ("Outstanding Paper Award", "outstanding_paper"),
        ("Outstanding Main Track Paper", "outstanding_paper"),
        ("Outstanding Position Paper", "outstanding_position_paper"),
        ("Honorable Mention", "honorable_mention"),
        ("Honourable Mention", "honorable_mention"),
        ("Best Paper Honorable Mention", "honorable_mention"),
        ("Test of Time", "test_of_time"),
        ("Test of Time Award", "test_of_time"),
        ("Test-of-Time Paper Award", "test_of_time"),
        # zh-Hans
        ("最佳论文", "best_paper"),
        ("最佳论文奖", "best_paper"),
        ("最佳论文亚军", "best_paper_runner_up"),
        ("最佳论文提名", "honorable_mention"),
        ("杰出论文奖", "outstanding_paper"),
        ("杰出立场论文奖", "outstanding_position_paper"),
        ("荣誉提名", "honorable_mention"),
        ("时间检验奖", "test_of_time"),
        # zh-Hant
        ("最佳論文", "best_paper"),
        ("最佳論文獎", "best_paper"),
        ("最佳論文亞軍", "best_paper_runner_up"),
        ("傑出論文獎", "outstanding_paper"),
        ("傑出立場論文獎", "outstanding_position_paper"),
        ("榮譽提名", "honorable_mention"),
        ("時間檢驗獎", "test_of_time"),
        # seed lines
        ("杰出立场论文奖（Outstanding Position Paper）", "outstanding_position_paper"),
        ("杰出论文奖", "outstanding_paper"),
        ("🏆 NeurIPS 2025 · Best Paper Runner-Up", "best_paper_runner_up"),
        ("🏆 NeurIPS 2025 · Best Paper", "best_paper"),
        ("🏆 ICML 2025 · Outstanding Paper", "outstanding_paper"),
        ("本周一，ICML 2025 公布了最佳论文奖项。", "best_paper"),
        # a best paper of a track by length
        ("Best Long Paper Awards", "best_paper"),
        ("Best Short Paper", "best_paper"),
        ("最佳长论文", "best_paper"),
        ("最佳短論文獎", "best_paper"),
        # award-ish labels that fit no class
        ("Best Student Paper", "other"),
        ("Best Demo Paper", "other"),
        ("最佳学生论文奖", "other"),
        ("ACM Turing Award", "other"),
        ("Early Career Prize", "other"),
        ("创新奖", "other"),
        # no award label
        (None, None),
        ("", None),
        ("   ", None),
        ("ICML 2025", None),
        ("研究背景與動機", None),
        ("获奖论文", None),  # "award-winning papers" is not a label
        ("大语言模型通常使用下一轮奖励进行训练", None),  # 奖励 = reward
        ("position paper track", None),
        ("rewards", None),
    ],
)
def test_normalize_award(raw: str | None, expected: str | None) -> None:
    assert normalize_award(raw) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("🏆 NeurIPS 2025 · Best Paper Runner-Up", "Best Paper Runner-Up"),  # seed
        ("🏆 ICML 2025 · Outstanding Paper", "Outstanding Paper"),  # seed
        ("🏆 NeurIPS 2025 · Best Paper", "Best Paper"),  # seed
        (  # seed
            "杰出立场论文奖（Outstanding Position Paper）",
            "杰出立场论文奖（Outstanding Position Paper）",
        ),
        ("杰出论文奖", "杰出论文奖"),  # seed
        ("本周一，ICML 2025 公布了最佳论文奖项。", "最佳论文奖项"),  # seed
        ("NeurIPS 2025 最佳論文亞軍《Superposition Yields Robust Neural Scaling》", "最佳論文亞軍"),  # seed
        ("榮獲最佳論文獎，主要針對", "最佳論文獎"),  # seed
        ("ICML 2025 · Test of Time Award", "Test of Time Award"),
        ("获得了时间检验奖。", "时间检验奖"),
        ("Best Paper Award (ICML 2024)", "Best Paper Award"),  # a non-award gloss is not kept
        ("won the ACM Turing Award in 2018", "ACM Turing Award"),
        ("两篇Best Paper Runner-up", "Best Paper Runner-up"),  # English right after a Chinese word
        ("ICML 2025", None),
        ("", None),
    ],
)
def test_find_award_label(text: str, expected: str | None) -> None:
    assert find_award_label(text) == expected


# --- venues ------------------------------------------------------------------------------------


def test_venues_list() -> None:
    assert VENUES[:17] == (
        "NeurIPS", "ICML", "ICLR", "CVPR", "ICCV", "ECCV", "ACL", "EMNLP", "NAACL",
        "AAAI", "IJCAI", "KDD", "SIGIR", "WWW", "COLT", "UAI", "AISTATS",
    )
    assert {"EACL", "COLING", "ICASSP", "INTERSPEECH", "CIKM", "ICSE", "CoRL", "TPAMI", "TMLR"} <= set(VENUES)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Published at ICSE 2024 and presented at ICASSP 2023", [("ICSE", 2024), ("ICASSP", 2023)]),
        ("`EACL 2023` best long paper", [("EACL", 2023)]),
        ("CoRL 2022 (Oral)", [("CoRL", 2022)]),
        ("the icse workshop", []),  # acronyms are case-sensitive
    ],
)
def test_acronym_venues_with_years(text: str, expected: list) -> None:
    assert [(v, y) for v, y, _, _ in find_venue_years(text)] == expected


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        ("https://aclanthology.org/2023.eacl-main.213/", ("EACL", 2023)),
        ("https://aclanthology.org/2022.findings-acl.3.pdf", ("ACL", 2022)),
        ("https://aclanthology.org/P19-1001", ("ACL", 2019)),
        ("https://openaccess.thecvf.com/content/CVPR2023/html/Hu_Planning.html", ("CVPR", 2023)),
        ("https://cvpr.thecvf.com/virtual/2024/poster/29250", ("CVPR", 2024)),
        ("https://iccv.thecvf.com/Conferences/2025", ("ICCV", 2025)),
        ("https://cvpr.thecvf.com/", None),
        ("https://openaccess.thecvf.com/content_ICCV_2017/papers/x.pdf", ("ICCV", 2017)),
        ("https://blog.neurips.cc/2023/12/11/announcing-the-neurips-2023-paper-awards/", ("NeurIPS", 2023)),
        ("https://papers.nips.cc/paper/2012/file/c399862d3b9d6b76c8436e924a68c45b-Paper.pdf", ("NeurIPS", 2012)),
        ("https://2021.emnlp.org/blog/2021-10-29-best-paper-awards", ("EMNLP", 2021)),
        ("https://arxiv.org/abs/2212.09597", None),
        ("https://github.com/acl2023/tools", None),
        ("https://github.com/amusi/CVPR2023-Papers-with-Code", None),
        ("https://iclr.cc/virtual_2020/poster_rkeiQlBFPB.html", ("ICLR", 2020)),
        ("https://david-abel.github.io/notes/neurips_2019.pdf", ("NeurIPS", 2019)),
        ("https://www.reddit.com/r/MachineLearning/comments/dyjf03/d_icml_2019_talks/", ("ICML", 2019)),
        ("https://www.cv-foundation.org/openaccess/content_cvpr_2016/papers/He.pdf", ("CVPR", 2016)),
        ("https://example.org/cvpr20230/x", None),
    ],
)
def test_venue_from_url(url: str, expected: tuple | None) -> None:
    assert venue_from_url(url) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("ICML 2025", [("ICML", 2025, 0, 9)]),
        ("ICML2025", [("ICML", 2025, 0, 8)]),
        ("ICML'25", [("ICML", 2025, 0, 7)]),
        ("ICML ’25", [("ICML", 2025, 0, 8)]),
        ("NIPS'99", [("NeurIPS", 1999, 0, 7)]),
        ("NeurIPS 2025", [("NeurIPS", 2025, 0, 12)]),
        ("NIPS 2017", [("NeurIPS", 2017, 0, 9)]),
        ("EMNLP-2023", [("EMNLP", 2023, 0, 10)]),
        ("2025 年 ICML 上", [("ICML", 2025, 0, 11)]),
        ("2025年ICML", [("ICML", 2025, 0, 9)]),
        ("ICML 2025 · Outstanding Paper", [("ICML", 2025, 0, 9)]),  # seed
        ("🏆 NeurIPS 2025 · Best Paper Runner-Up", [("NeurIPS", 2025, 2, 14)]),  # seed
        ("在ICML 2025發表", [("ICML", 2025, 1, 10)]),
        ("本周一，ICML 2025 公布了最佳论文奖项。", [("ICML", 2025, 4, 13)]),  # seed
        ("与 NeurIPS、ICLR 并列", [("NeurIPS", None, 2, 9), ("ICLR", None, 10, 14)]),  # seed
        ("NeurIPS/ICML/ICLR", [("NeurIPS", None, 0, 7), ("ICML", None, 8, 12), ("ICLR", None, 13, 17)]),
        ("NAACL 2024 and ACL 2023", [("NAACL", 2024, 0, 10), ("ACL", 2023, 15, 23)]),
        ("ACL2024", [("ACL", 2024, 0, 7)]),
        ("SIGKDD 2023", [("KDD", 2023, 0, 11)]),
        ("KDD'24", [("KDD", 2024, 0, 6)]),
        ("AISTATS 2024, UAI 2023, COLT 2022", [("AISTATS", 2024, 0, 12), ("UAI", 2023, 14, 22),
                                              ("COLT", 2022, 24, 33)]),
        ("CVPR 2024 ICCV 2023 ECCV 2024", [("CVPR", 2024, 0, 9), ("ICCV", 2023, 10, 19),
                                          ("ECCV", 2024, 20, 29)]),
        ("AAAI-25 IJCAI 2024 SIGIR 2023", [("AAAI", 2025, 0, 7), ("IJCAI", 2024, 8, 18),
                                          ("SIGIR", 2023, 19, 29)]),
        # two digits glued to an acronym, only as a word of their own
        ("ICML24:", [("ICML", 2024, 0, 6)]),
        ("NeurIPS23 orals", [("NeurIPS", 2023, 0, 9)]),
        ("ICML240 ICML24v2", [("ICML", None, 0, 4), ("ICML", None, 8, 12)]),
        # word boundaries
        ("ACLU and ORACLE", []),
        ("the ACL anthology", [("ACL", None, 4, 7)]),
        ("see www.example.com", []),
        ("WWW 2024", [("WWW", 2024, 0, 8)]),
        ("The Web Conference 2023", [("WWW", 2023, 0, 23)]),
        ("neurips.cc/virtual", []),
        ("https://neurips.cc/x NeurIPS", [("NeurIPS", None, 21, 28)]),
        ("https://icml.cc/virtual/2025/awards_detail", []),  # seed reference link
        # full names
        ("国际机器学习会议 ICML（International Conference on Machine Learning）",  # seed
         [("ICML", None, 0, 8), ("ICML", None, 9, 13), ("ICML", None, 14, 58)]),
        ("國際機器學習會議", [("ICML", None, 0, 8)]),
        ("国际学习表征会议", [("ICLR", None, 0, 8)]),
        ("國際表徵學習大會 2024", [("ICLR", 2024, 0, 13)]),
        ("神经信息处理系统大会", [("NeurIPS", None, 0, 10)]),
        ("神經信息處理系統大會 2024", [("NeurIPS", 2024, 0, 15)]),
        ("Conference on Neural Information Processing Systems",
         [("NeurIPS", None, 14, 51)]),
        ("", []),
    ],
)
def test_find_venue_years(text: str, expected: list) -> None:
    assert find_venue_years(text) == expected


def test_find_venue_years_spans_cover_mention() -> None:
    text = "今年的 NeurIPS 2025 最佳論文亞軍"
    [(venue, year, start, end)] = find_venue_years(text)
    assert (venue, year, text[start:end]) == ("NeurIPS", 2025, "NeurIPS 2025")


def test_find_venue_years_seed_digest_counts() -> None:
    hits = find_venue_years(SEED_ZH_HANT_BLOCK)
    assert [(v, y) for v, y, _, _ in hits] == [("NeurIPS", 2025)]


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("NeurIPS", "NeurIPS"),
        ("nips", "NeurIPS"),
        ("NIPS 2017", "NeurIPS"),
        ("icml", "ICML"),
        ("acl", "ACL"),
        ("ICML 2025 · Outstanding Paper", "ICML"),
        ("國際機器學習會議", "ICML"),
        ("neural information processing systems", "NeurIPS"),
        ("The Web Conference", "WWW"),
        ("Nature", None),
        ("", None),
        (None, None),
    ],
)
def test_venue_names_and_aliases(raw: str | None, expected: str | None) -> None:
    hits = [h for c in dict.fromkeys((raw or "", (raw or "").upper())) for h in find_venue_years(c)]
    assert (hits[0][0] if hits else None) == expected


# --- arXiv -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("论文地址：https://arxiv.org/abs/2502.13228", [("2502.13228", None)]),  # seed
        ("🔗 arxiv.org/abs/2505.10465", [("2505.10465", None)]),  # seed, no scheme
        ("arXiv:2502.13228", [("2502.13228", None)]),
        ("arXiv：2502.13228", [("2502.13228", None)]),
        ("arXiv 1412.6980", [("1412.6980", None)]),
        ("ARXIV:2502.13228V2", [("2502.13228", "v2")]),
        ("arxiv.org/abs/2502.13228v2", [("2502.13228", "v2")]),
        ("https://arxiv.org/pdf/2505.17638v1.pdf", [("2505.17638", "v1")]),
        ("https://arxiv.org/html/2505.17638v3", [("2505.17638", "v3")]),
        ("https://export.arxiv.org/abs/2505.17638", [("2505.17638", None)]),
        # old style: with arXiv context, or in prose with an arXiv archive name
        ("arxiv.org/abs/cs/0112017", [("cs/0112017", None)]),
        ("arXiv:hep-th/9901001v3", [("hep-th/9901001", "v3")]),
        ("arXiv:math.GT/0309136", [("math.GT/0309136", None)]),
        ("cs/0112017", [("cs/0112017", None)]),
        ("docs/0112017", []),
        ("arXiv:cs/0713001", []),  # month 13
        ("arXiv:cs/0801001", []),  # old style ended in 0703
        # validation: rejected, never guessed
        ("arXiv:2502.1322", []),  # truncated: 1501 on needs 5 digits
        ("https://arxiv.org/abs/2502.1322", []),
        ("arXiv:1412.69801", []),  # 0704-1412 have 4 digits
        ("arXiv:1501.0001", []),
        ("arXiv:2513.12345", []),  # month 13
        ("arXiv:2500.12345", []),  # month 00
        ("arXiv:0703.1234", []),  # before the new scheme
        # no upper bound on the year: a date-dependent check would change outputs over time
        ("arXiv:9912.12345", [("9912.12345", None)]),
        ("arXiv:2502.132289", []),
        # bare ids need allow_bare
        ("2502.13228", []),
        ("see 2502.13228 for details", []),
        # order of appearance, de-duplicated by id, version from the first mention giving one
        (
            "arXiv:2502.13228 and https://arxiv.org/abs/2504.13959 and arxiv.org/abs/2502.13228v3",
            [("2502.13228", "v3"), ("2504.13959", None)],
        ),
        ("", []),
    ],
)
def test_find_arxiv_ids(text: str, expected: list) -> None:
    assert find_arxiv_ids(text) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("2502.13228", [("2502.13228", None)]),
        ("编号2502.13228v2。", [("2502.13228", "v2")]),
        ("2502.1322", []),
        ("version 3.14159 of pi", []),
        ("12502.13228", []),
        ("arXiv:2502.13228, then 2504.13959.", [("2502.13228", None), ("2504.13959", None)]),
        ("2504.13959 before arXiv:2502.13228", [("2504.13959", None), ("2502.13228", None)]),
        # old style: bare only with an arXiv archive name (the value of a paper-link key)
        ("cs/0112017", [("cs/0112017", None)]),
        ("hep-th/9901001v2", [("hep-th/9901001", "v2")]),
        ("math.GT/0309136", [("math.GT/0309136", None)]),
        ("docs/0112017", []),
        ("cs/0713017", []),  # month 13
        ("cs/0801001", []),  # old style ended with 0703
    ],
)
def test_find_arxiv_ids_bare(text: str, expected: list) -> None:
    assert find_arxiv_ids(text, allow_bare=True) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("弦论的经典论文 hep-th/9901001 提出了……", [("hep-th/9901001", None)]),
        ("Perelman's math.DG/0211159v1 and math.GT/0309136.", [("math.DG/0211159", "v1"), ("math.GT/0309136", None)]),
        ("見cs/0112017（2001年）", [("cs/0112017", None)]),
        ("- quant-ph/9508027: Shor's algorithm", [("quant-ph/9508027", None)]),
        ("| astro-ph/9805201 | Riess et al. |", [("astro-ph/9805201", None)]),
        ("hep-th／９９０１００１", [("hep-th/9901001", None)]),  # full-width slash and digits
        # an id in prose and in a link: one id
        ("hep-th/9901001 (https://arxiv.org/abs/hep-th/9901001v2)", [("hep-th/9901001", "v2")]),
    ],
)
def test_old_style_arxiv_id_in_prose(text: str, expected: list) -> None:
    assert find_arxiv_ids(text) == expected


@pytest.mark.parametrize(
    "text",
    [
        "https://example.com/math/0309136",  # a path segment of a URL that is not arXiv's
        "see docs/cs/0112017/readme",
        "/srv/data/hep-th/9901001.tar",
        "Efficiency_Gains/6470495/1/file",  # a figshare path (real text)
        "https://udn.com/news/story/7333/9014778",  # a news story id (real text)
        "https://dl.acm.org/doi/10.1145/3313831.3376",  # a DOI (real text)
        "math/0713001 math/0801001 cs/9001001",  # months 13, after 0703, before 9108
        "docs/0112017 notes/9901001 2023/0101001",  # not an arXiv archive
        "cs/01120171 cs/0112017.5 xcs/0112017",  # glued to more digits or letters
    ],
)
def test_old_style_arxiv_ids_in_paths_are_no_ids(text: str) -> None:
    assert find_arxiv_ids(text) == []


def test_no_new_arxiv_ids_in_real_text_with_many_slashes() -> None:
    # The real-world articles, their sources and the seeds: URLs, paths, dates, DOIs and
    # byline separators by the thousand, and the 7-digit path segments an old-style id ends in
    # (news story ids, DOIs, a figshare path). None is an old-style id (read by hand), so the
    # ids found are the new-style ids of arXiv contexts, as before prose ids were read.
    from pathlib import Path

    from conftest import require_seeds

    root = Path(__file__).resolve().parent / "fixtures" / "real"
    paths = sorted(p for p in root.rglob("*") if p.is_file() and p.suffix in (".txt", ".md", ".html", ".jsonl", ".csv"))
    paths += sorted(p for p in require_seeds().rglob("*") if p.is_file())
    texts = [p.read_text(encoding="utf-8", errors="replace") for p in paths]
    assert len(texts) > 100
    assert sum(t.count("/") for t in texts) > 5000
    assert sum(len(identifiers._ARXIV_OLD_TAIL.findall(t)) for t in texts) >= 10
    n_ids = 0
    for path, text in zip(paths, texts, strict=True):
        ids = find_arxiv_ids(text)
        assert [i for i, _ in ids if "/" in i] == [], path
        assert ids == _scan_arxiv(text), path
        n_ids += len(ids)
    assert n_ids > 50


# --- URLs --------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("论文地址：https://arxiv.org/abs/2502.13228", ["https://arxiv.org/abs/2502.13228"]),  # seed
        ("论文主页：https://wuyxin.github.io/collabllm/", ["https://wuyxin.github.io/collabllm/"]),  # seed
        ("🔗 arxiv.org/abs/2505.10465", ["https://arxiv.org/abs/2505.10465"]),  # seed
        ("见 https://arxiv.org/abs/2502.13228。本文", ["https://arxiv.org/abs/2502.13228"]),
        ("https://arxiv.org/abs/2502.13228，以及", ["https://arxiv.org/abs/2502.13228"]),
        ("（https://example.com/a）", ["https://example.com/a"]),
        ("「https://example.com/a」", ["https://example.com/a"]),
        ("see (https://example.com/a).", ["https://example.com/a"]),
        ("https://en.wikipedia.org/wiki/Foo_(bar), ok", ["https://en.wikipedia.org/wiki/Foo_(bar)"]),
        ("[x](https://x.org/a)", ["https://x.org/a"]),
        ("https://x.org/a?b=1&c=2!", ["https://x.org/a?b=1&c=2"]),
        ("http://x.org/a;", ["http://x.org/a"]),
        ("github.com/foo/bar，代码", ["https://github.com/foo/bar"]),
        ("www.example.com.", ["https://www.example.com"]),
        ("https://arxiv.org/pdf/2505.17638v1.pdf", ["https://arxiv.org/pdf/2505.17638v1.pdf"]),
        ("https://a.com/x and https://a.com/x again", ["https://a.com/x"]),
        ("https://b.com https://a.com https://b.com", ["https://b.com", "https://a.com"]),
        ("http://", []),
        ("no links here, e.g. example.com", []),
        ("", []),
    ],
)
def test_find_urls(text: str, expected: list[str]) -> None:
    assert find_urls(text) == expected


@pytest.mark.parametrize(
    ("url", "key", "expected"),
    [
        ("https://arxiv.org/abs/2502.13228", None, "arxiv"),
        ("https://arxiv.org/pdf/2505.17638v1.pdf", None, "arxiv"),
        ("https://wuyxin.github.io/collabllm/", None, "project"),  # seed
        ("https://github.com/a/b", None, "code"),
        ("https://gitlab.com/a/b", None, "code"),
        ("https://huggingface.co/spaces/a/b", None, "code"),
        ("https://doi.org/10.1145/1234", None, "doi"),
        ("https://dx.doi.org/10.1145/1234", None, "doi"),
        ("https://openreview.net/forum?id=abc", None, "openreview"),
        ("https://example.org/paper.pdf", None, "pdf"),
        ("https://icml.cc/virtual/2025/awards_detail", None, "other"),  # seed
        ("https://example.org/", "project_url", "project"),
        ("https://example.org/", "code_url", "code"),
        ("https://github.com/a/b", "project_url", "code"),
        ("www.example.org", None, "other"),
    ],
)
def test_url_kind(url: str, key: str | None, expected: str) -> None:
    assert url_kind(url, key) == expected
    assert expected in URL_KINDS


# --- name lists --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        # seed
        ("斯坦福大学、微软、佐治亚理工学院", (["斯坦福大学", "微软", "佐治亚理工学院"], False)),
        ("Google Research、卡内基梅隆大学", (["Google Research", "卡内基梅隆大学"], False)),
        ("普林斯顿大学", (["普林斯顿大学"], False)),
        ("布里斯托大学、南京大学", (["布里斯托大学", "南京大学"], False)),
        ("韩国蔚山科学技术院（UNIST）", (["韩国蔚山科学技术院（UNIST）"], False)),
        ("犹他大学、艾伦人工智能研究所等", (["犹他大学", "艾伦人工智能研究所"], True)),
        ("Liu, Liu, Gore", (["Liu", "Liu", "Gore"], False)),
        ("Fischer Abaigar, Kern, Perdomo", (["Fischer Abaigar", "Kern", "Perdomo"], False)),
        ("Bonnaire, Urfin, Biroli, Mézard", (["Bonnaire", "Urfin", "Biroli", "Mézard"], False)),
        # truncation markers
        ("Liu et al.", (["Liu"], True)),
        ("Liu, Chen, et al.", (["Liu", "Chen"], True)),
        ("Smith etc.", (["Smith"], True)),
        ("张三、李四等人", (["张三", "李四"], True)),
        ("清华大学、北京大学等机构。", (["清华大学", "北京大学"], True)),
        # separators
        ("A; B；C / D", (["A", "B", "C", "D"], False)),
        ("清华大学，北京大学", (["清华大学", "北京大学"], False)),
        (" 、 ", ([], False)),
        ("", ([], False)),
        # brackets are never split
        ("清华大学（北京, 中国）、北大", (["清华大学（北京, 中国）", "北大"], False)),
        # CJK conjunctions
        ("北京大学与清华大学", (["北京大学", "清华大学"], False)),
        ("斯坦福大学和微软", (["斯坦福大学", "微软"], False)),
        ("复旦大学及上海人工智能实验室", (["复旦大学", "上海人工智能实验室"], False)),
        ("北京大學與清華大學", (["北京大學", "清華大學"], False)),
        ("张三和李四", (["张三", "李四"], False)),
        ("张三、和田一郎", (["张三", "和田一郎"], False)),  # 和 starts a name
        ("王和平、李四", (["王和平", "李四"], False)),  # 和 inside a name
        ("计算机科学与技术学院", (["计算机科学与技术学院"], False)),
        ("北京邮电大学网络与交换技术国家重点实验室", (["北京邮电大学网络与交换技术国家重点实验室"], False)),
        # English conjunctions
        ("Snell and Griffiths", (["Snell", "Griffiths"], False)),
        ("Alice Wang and Bob Li and others", (["Alice Wang", "Bob Li"], True)),
        ("张三 1,2，李四 3", (["张三", "李四"], False)),  # affiliation footnote numbers
        ("Alice Smith*, Bob Jones†, Carol Wu‡", (["Alice Smith", "Bob Jones", "Carol Wu"], False)),
        ("Jonathan Ho 等 3 人", (["Jonathan Ho"], True)),
        ("Tom B. Brown et al.（OpenAI）", (["Tom B. Brown (OpenAI)"], True)),  # extract splits the affiliation
        ("韩国蔚山科学技术院（UNIST）和Google DeepMind", (["韩国蔚山科学技术院（UNIST）", "Google DeepMind"], False)),
        ("Google DeepMind和清华大学", (["Google DeepMind", "清华大学"], False)),
        ("Smith和Jones", (["Smith和Jones"], False)),  # Latin on both sides: not a Chinese list
        ("Snell & Griffiths", (["Snell", "Griffiths"], False)),
        ("A. Smith, B. Jones, and C. Lee", (["A. Smith", "B. Jones", "C. Lee"], False)),
        ("Stanford University and Microsoft Research",
         (["Stanford University", "Microsoft Research"], False)),
        ("Department of Electrical and Computer Engineering",
         (["Department of Electrical and Computer Engineering"], False)),
        ("University of Science and Technology of China",
         (["University of Science and Technology of China"], False)),
        ("Texas A&M University", (["Texas A&M University"], False)),
        # full-width letters and digits fold; brackets keep their width
        ("Ｇｏｏｇｌｅ　Ｒｅｓｅａｒｃｈ，ＭＩＴ", (["Google Research", "MIT"], False)),
        ("实验室Ａ（ＵＮＩＳＴ）", (["实验室A（UNIST）"], False)),
    ],
)
def test_split_names(value: str, expected: tuple[list[str], bool]) -> None:
    assert split_names(value) == expected


# --- metadata lines ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        # seed, emoji keys
        ("📄 Superposition Yields Robust Neural Scaling",
         ("title", "Superposition Yields Robust Neural Scaling")),
        ("👥 Liu, Liu, Gore", ("authors", "Liu, Liu, Gore")),
        ("👥 Fischer Abaigar, Kern, Perdomo", ("authors", "Fischer Abaigar, Kern, Perdomo")),
        ("🏆 NeurIPS 2025 · Best Paper Runner-Up", ("award", "NeurIPS 2025 · Best Paper Runner-Up")),
        ("🔗 arxiv.org/abs/2505.10465", ("paper_url", "arxiv.org/abs/2505.10465")),
        (
            "📄 Artificial Hivemind: The Open-Ended Homogeneity of Language Models (and Beyond)",
            ("title", "Artificial Hivemind: The Open-Ended Homogeneity of Language Models (and Beyond)"),
        ),
        ("🏛️ MIT", ("institutions", "MIT")),
        ("🏫 清华大学", ("institutions", "清华大学")),
        ("🔗 Code: https://github.com/a/b", ("code_url", "https://github.com/a/b")),
        # seed, key-value lines
        ("机构：斯坦福大学、微软、佐治亚理工学院", ("institutions", "斯坦福大学、微软、佐治亚理工学院")),
        ("机构：犹他大学、艾伦人工智能研究所等", ("institutions", "犹他大学、艾伦人工智能研究所等")),
        ("论文地址：https://arxiv.org/abs/2502.13228", ("paper_url", "https://arxiv.org/abs/2502.13228")),
        ("论文主页：https://wuyxin.github.io/collabllm/", ("project_url", "https://wuyxin.github.io/collabllm/")),
        ("参考链接：https://icml.cc/virtual/2025/awards_detail",
         ("reference_url", "https://icml.cc/virtual/2025/awards_detail")),
        ("论文摘要： 近年来，掩码扩散模型逐渐崭露头角。", ("summary", "近年来，掩码扩散模型逐渐崭露头角。")),
        ("论文 2：The Value of Prediction in Identifying the Worst-Off",
         ("title", "The Value of Prediction in Identifying the Worst-Off")),
        # other key spellings
        ("論文標題：某標題", ("title", "某標題")),
        ("Title: X", ("title", "X")),
        ("Paper title: X", ("title", "X")),
        ("作者：张三、李四", ("authors", "张三、李四")),
        ("- **Authors**: A, B", ("authors", "A, B")),
        ("作者（Authors）：张三", ("authors", "张三")),
        ("單位：台大", ("institutions", "台大")),
        ("論文名稱: Going Deeper with Convolutions", ("title", "Going Deeper with Convolutions")),
        ("论文名称：深度残差学习", ("title", "深度残差学习")),
        ("Paper name: Wide Residual Networks", ("title", "Wide Residual Networks")),
        ("Affiliations: MIT", ("institutions", "MIT")),
        ("獎項：最佳論文", ("award", "最佳論文")),
        ("Award: Best Paper", ("award", "Best Paper")),
        ("Venue: ICML 2025", ("venue", "ICML 2025")),
        ("- 會議/期刊：IEEE S&P 2019", ("venue", "IEEE S&P 2019")),
        ("- 研究機構：The University of Maryland", ("institutions", "The University of Maryland")),
        ("- 論文作者群：Kun Ren, Dennis Li, Daniel J. Abadi", ("authors", "Kun Ren, Dennis Li, Daniel J. Abadi")),
        ("論文連結：https://x.org/a", ("paper_url", "https://x.org/a")),
        ("arXiv: 2502.13228", ("paper_url", "2502.13228")),
        ("PDF: https://x.org/p.pdf", ("paper_url", "https://x.org/p.pdf")),
        ("Paper: https://x.org/p.pdf", ("paper_url", "https://x.org/p.pdf")),
        ("Paper: Attention Is All You Need", ("title", "Attention Is All You Need")),
        ("- Paper: None", ("paper_url", "None")),  # a missing link, not a paper called "None"
        ("论文：暂无", ("paper_url", "暂无")),
        ("Paper: None of the Above", ("title", "None of the Above")),
        ("項目主頁：https://x.github.io", ("project_url", "https://x.github.io")),
        ("Project page: https://x.github.io", ("project_url", "https://x.github.io")),
        ("程式碼：https://github.com/x/y", ("code_url", "https://github.com/x/y")),
        ("* Code: https://github.com/a/b", ("code_url", "https://github.com/a/b")),
        ("GitHub: https://github.com/x", ("code_url", "https://github.com/x")),
        ("原文連結：https://x.org", ("reference_url", "https://x.org")),
        # the original of a translated item: its title, or a link to it (a paper's when arXiv)
        ("原文: Learning to Plan with World Models", ("title", "Learning to Plan with World Models")),
        ("英文标题：Learning to Plan with World Models", ("title", "Learning to Plan with World Models")),
        ("原文：https://x.org/news", ("reference_url", "https://x.org/news")),
        ("- **原文链接**: https://arxiv.org/abs/2501.01234", ("paper_url", "https://arxiv.org/abs/2501.01234")),
        ("原文链接：https://x.org/post", ("reference_url", "https://x.org/post")),
        ("References: https://x.org", ("reference_url", "https://x.org")),
        ("TL;DR: short", ("summary", "short")),
        ("Abstract: We study", ("summary", "We study")),
        # not metadata lines
        ("ICML 大会在 2024 年首次设置了 Position Paper 赛道：与传统 research paper 不同", None),  # seed prose
        ("本文将深入解析：一些内容", None),
        ("以下是要点：", None),
        ("https://example.com", None),
        ("作者：", None),
        ("Note: something", None),
        ("論文資訊", None),  # seed label line
        ("杰出立场论文奖（Outstanding Position Paper）", None),  # seed award header
        ("", None),
    ],
)
def test_parse_key_value(line: str, expected: tuple[str, str] | None) -> None:
    result = parse_key_value(line)
    assert result == expected
    if result is not None:
        assert result[0] in KEYS


def test_seed_digest_block_round_trip() -> None:
    """The seed digest block yields every field with the helpers chained as extract does."""
    kv = dict(p for ln in SEED_ZH_HANT_BLOCK.splitlines() if (p := parse_key_value(ln)))
    assert kv["title"] == "Superposition Yields Robust Neural Scaling"
    assert split_names(kv["authors"]) == (["Liu", "Liu", "Gore"], False)
    assert find_award_label(kv["award"]) == "Best Paper Runner-Up"
    assert normalize_award(find_award_label(kv["award"])) == "best_paper_runner_up"
    assert [(v, y) for v, y, _, _ in find_venue_years(kv["award"])] == [("NeurIPS", 2025)]
    assert find_arxiv_ids(kv["paper_url"]) == [("2505.10465", None)]
    assert find_urls(kv["paper_url"]) == ["https://arxiv.org/abs/2505.10465"]


def test_seed_report_section() -> None:
    kv = dict(p for ln in SEED_ZH_HANS_SECTION.splitlines() if (p := parse_key_value(ln)))
    assert kv == {
        "title": "Conformal Prediction as Bayesian Quadrature",
        "paper_url": "https://arxiv.org/abs/2502.13228",
        "institutions": "普林斯顿大学",
        "summary": "基于机器学习的预测系统在高风险场景中的应用日益广泛。",
    }
    assert find_arxiv_ids(SEED_ZH_HANS_SECTION) == [("2502.13228", None)]


# --- titles ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("a", "b"),
    [
        (
            "Roll the dice & look before you leap: Going beyond the creative limits of next-token prediction",
            "Roll the Dice & Look Before You Leap: Going Beyond the Creative Limits of Next-Token Prediction",
        ),  # seed, both spellings
        (
            "Roll the dice & look before you leap: Going beyond…",
            "Roll the Dice & Look Before You Leap: Going Beyond…",
        ),
        ("Going beyond…", "going beyond..."),
        ("Visual Autoregressive Modeling", "Visual AutoRegressive Modelling"),
        ("Optimisation of Neural Networks", "optimization of neural-networks"),
        ("Optimising Neural Networks", "Optimizing Neural Networks"),
        ("Analysing Behaviour", "Analyzing Behavior"),
        ("Labelled Data", "Labeled Data"),
        ("ＧＰＴ－４：技术报告", "GPT-4 技术报告"),
        ("Straße", "STRASSE"),
    ],
)
def test_fold_title_equal(a: str, b: str) -> None:
    assert fold_title(a) == fold_title(b)


@pytest.mark.parametrize(
    ("title", "expected"),
    [
        ("Conformal Prediction as Bayesian Quadrature", "conformalpredictionasbayesianquadrature"),
        ("Why Diffusion Models Don't Memorize", "whydiffusionmodelsdontmemorize"),
        ("Noise and Rise", "noiseandrise"),  # short stems are not respelled
        ("Mézard", "mézard"),  # accents are kept
        ("", ""),
    ],
)
def test_fold_title_value(title: str, expected: str) -> None:
    assert fold_title(title) == expected


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("Score Matching with Missing Data", "Score Matching with Missing Labels"),
        ("GPT-4", "GPT-3"),
    ],
)
def test_fold_title_distinct(a: str, b: str) -> None:
    assert fold_title(a) != fold_title(b)


def test_fold_title_keeps_the_letters_digits_and_marks_of_ascii_as_of_any_text() -> None:
    """The ASCII fast path keeps what the Unicode rule keeps (categories L, N, M of the folded
    text): every ASCII character alone, and random ASCII titles, against the rule itself."""
    import random
    import unicodedata

    from pipeline.fields import fold_title_words

    def by_category(title: str) -> str:
        return "".join(ch for ch in fold_title_words(title) if unicodedata.category(ch)[0] in "LNM")

    ascii_chars = [chr(c) for c in range(128)]
    assert [c for c in ascii_chars if fold_title(c)] == list("0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz")
    rng = random.Random(0)
    titles = ["".join(rng.choice(ascii_chars) for _ in range(rng.randrange(40))) for _ in range(5000)]
    titles += ["Optimising Behaviour-Models (v2)!", "Centres of Labelling\tData", "A\x00B\x7fC"]
    assert [fold_title(t) for t in titles] == [by_category(t) for t in titles]
    assert fold_title("Optimising Behaviour-Models (v2)!") == "optimizingbehaviormodelsv2"


def test_arxiv_ids_read_through_full_width_and_invisible_characters():
    assert find_arxiv_ids("arXiv：２５０２．１３２２８") == [("2502.13228", None)]
    assert find_arxiv_ids("arxiv.org/abs/2502.\u00ad13228") == [("2502.13228", None)]
    assert find_arxiv_ids("arXiv:2502.\u200b13228v2") == [("2502.13228", "v2")]


@pytest.mark.parametrize(
    ("author", "expected"),
    [
        ("Danica J. Sutherland (University of British Columbia)", ("Danica J. Sutherland", "University of British Columbia")),
        ("田柯宇（北京大学）", ("田柯宇", "北京大学")),
        ("Kim (KAIST)", ("Kim", "KAIST")),  # a short proper name
        ("Volodymyr Mnih (DeepMind)", ("Volodymyr Mnih", "DeepMind")),
        ("张三（通讯作者）", ("张三（通讯作者）", None)),  # a role, not an affiliation
        ("Alice Wang (equal contribution)", ("Alice Wang (equal contribution)", None)),
        ("Bob Li (2)", ("Bob Li (2)", None)),
        ("John Smith", ("John Smith", None)),
    ],
)
def test_split_affiliation(author, expected):
    from pipeline.names import split_affiliation

    assert split_affiliation(author) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("https://huggingface.co/papers/1512.03385", [("1512.03385", None)]),
        ("https://doi.org/10.48550/arXiv.1703.06870", [("1703.06870", None)]),
        ("https://www.alphaxiv.org/abs/2001.08361", [("2001.08361", None)]),
        ("https://papers.cool/arxiv/2304.02643", [("2304.02643", None)]),
        ("arXiv:2502.00000", []),  # arXiv numbers start at 00001
        ("see arxiv.org for more", []),
    ],
)
def test_arxiv_ids_on_aggregator_pages_and_the_arxiv_doi(text, expected):
    assert find_arxiv_ids(text) == expected


def test_venue_years_after_a_bracketed_acronym_or_a_comma():
    assert find_venue_years("International Conference on Machine Learning (ICML) 2021") == [("ICML", 2021, 0, 56)]
    assert find_venue_years("国际学习表征会议（ICLR）2024") == [("ICLR", 2024, 0, 18)]
    assert find_venue_years("NIPS, 2014") == [("NeurIPS", 2014, 0, 10)]
    assert find_venue_years("ICML（2025）") == [("ICML", None, 0, 4)]


def test_award_key_aliases():
    assert parse_key_value("獲獎：最佳論文榮譽提名") == ("award", "最佳論文榮譽提名")
    assert parse_key_value("获奖情况：杰出论文奖") == ("award", "杰出论文奖")


def test_a_hugging_face_paper_page_is_not_code():
    assert url_kind("https://huggingface.co/papers/1512.03385") == "other"
    assert url_kind("https://huggingface.co/openai/whisper-large") == "code"


def test_venue_scan_at_hints_matches_a_full_scan() -> None:
    from pipeline import fields

    texts = [
        "ICML 2024、NeurIPS'23、2025 年 ICLR、2019  CVPR、ICLR2025 and the Web Conference (WWW) 2021",
        "International Conference on Machine Learning (ICML) 2021; 国际机器学习会议（ICLR）2024；NIPS, 2014",
        "ORACLE ACLU NAACL-2019 SIGKDD KDD'99 neurips.cc/Conferences/2024 www.example.com AAAI-25 x2024 ICML",
        "Conference on Computer Vision and Pattern Recognition 2023, conference on computer vision",
    ]
    for text in texts:
        assert [m.span() for m in fields._venue_matches(text)] == [m.span() for m in fields._VENUE.finditer(text)]


def test_venue_mentions_inside_many_urls_are_skipped_one_by_one() -> None:
    from pipeline.fields import find_venue_years

    text = "NeurIPS 2023 (see https://neurips.cc/virtual/NeurIPS) " * 500 + "ICML 2024"
    found = find_venue_years(text)
    assert [(v, y) for v, y, _, _ in found] == [("NeurIPS", 2023)] * 500 + [("ICML", 2024)]
    assert all(text[s:e] in ("NeurIPS 2023", "ICML 2024") for _, _, s, e in found)


def test_memoised_results_are_the_callers_to_change() -> None:
    from pipeline.credits import find_credit, parse_credit_line
    from pipeline.names import split_names

    for _ in range(2):
        venues = find_venue_years("ICLR 2024 and NeurIPS 2023")
        venues.append(("x", None, 0, 0))
        names, _ = split_names("斯坦福大学、微软")
        names.append("x")
        for c in (find_credit("Kingma and Ba combined momentum with per-parameter step sizes."),
                  parse_credit_line("Lvmin Zhang, Anyi Rao and Maneesh Agrawala, Stanford University")):
            c.authors.append("x")
            c.institutions.append("x")
            c.truncated = not c.truncated
    assert find_venue_years("ICLR 2024 and NeurIPS 2023") == [("ICLR", 2024, 0, 9), ("NeurIPS", 2023, 14, 26)]
    assert split_names("斯坦福大学、微软") == (["斯坦福大学", "微软"], False)
    c = find_credit("Kingma and Ba combined momentum with per-parameter step sizes.")
    assert (c.authors, c.truncated, c.institutions) == (["Kingma", "Ba"], False, [])
    c = parse_credit_line("Lvmin Zhang, Anyi Rao and Maneesh Agrawala, Stanford University")
    assert (c.authors, c.institutions) == (["Lvmin Zhang", "Anyi Rao", "Maneesh Agrawala"], ["Stanford University"])


_ID_TEXTS = [
    "", "see arXiv:2502.13228v2", "ARXIV 2502.13228", "ar\u00adXiv: 2502.13228", "huggingface.co/papers/2502.13228",
    "HuggingFace.co/Papers/2502.13228", "alphaxiv.org/abs/2502.13228", "AlphaXiv.org/overview/2502.13228",
    "arxiv.org/abs/hep-th/9901001", "\u0130arxiv 2502.13228", "ar\u0131xiv 2502.13228", "arX\u0131v: 2502.13228",
    "论文：https://arxiv.org/pdf/2502.13228v1.pdf", "２５０２．１３２２８ arXiv：２５０２．１３２２８", "2502.13228 only",
    "a\u200brxiv:2502.13228", "arxiv\ufeff2502.13228", "no id here 1234.5678", "Xiv 2502.13228", "ArXiv.org/html/2502.13228",
    "hep-th/9901001 in prose", "hep-th／９９０１００１", "path/to/hep-th/9901001", "cs/0112017 and arXiv:cs/0112017v2",
]


@pytest.mark.parametrize("text", _ID_TEXTS)
def test_arxiv_context_precheck_misses_no_context(text: str) -> None:

    if not identifiers._may_hold_arxiv_context(text):
        assert not identifiers._ARXIV_CTX.search(text.translate(identifiers._ID_FOLD))
    assert identifiers.find_arxiv_ids(text) == [(i, v) for i, v in _scan_arxiv(text)]


def _scan_arxiv(text: str) -> list[tuple[str, str | None]]:
    """find_arxiv_ids(text) without the prechecks: the context scan and the scan for old-style
    ids in prose over the folded text."""

    text = text.translate(identifiers._ID_FOLD)
    found: list[tuple[int, str, str | None]] = []
    taken: list[tuple[int, int]] = []
    for m in identifiers._ARXIV_CTX.finditer(text):
        if m.group("yymm"):
            if not identifiers._valid_new_arxiv(m.group("yymm"), m.group("num")):
                continue
            ident = f"{m.group('yymm')}.{m.group('num')}"
        else:
            if not identifiers._valid_old_arxiv(m.group("oyymm")):
                continue
            ident = f"{m.group('arch')}/{m.group('oyymm')}{m.group('onum')}"
        found.append((m.start(), ident, m.group("ver").lower() if m.group("ver") else None))
        taken.append(m.span())
    for m in identifiers._ARXIV_OLD_BARE.finditer(text):
        if (not any(s <= m.start() < e for s, e in taken) and identifiers._valid_old_arxiv(m.group("oyymm"))
                and m.group("arch").lower().split(".")[0] in identifiers.ARXIV_OLD_ARCHIVES):
            ident = f"{m.group('arch')}/{m.group('oyymm')}{m.group('onum')}"
            found.append((m.start(), ident, m.group("ver").lower() if m.group("ver") else None))
    out: dict[str, str | None] = {}
    for _, ident, ver in sorted(found, key=lambda t: t[0]):
        if out.get(ident) is None:
            out[ident] = ver
    return list(out.items())


@pytest.mark.parametrize("line", [
    "Lvmin Zhang and Anyi Rao, Stanford University. arXiv: 1312.6114", "A and B, ARXIV:1312.6114",
    "A and B, https://x.org/a", "A and B, HTTPS://x.org/a", "A and B, \u0130arxiv 1", "A and B, httpſ://x.org",
    "Diederik P. Kingma and Max Welling, University of Amsterdam", "",
])
def test_credit_line_id_precheck_misses_no_id(line: str) -> None:
    from pipeline import credits

    if not credits._may_hold_line_id(line):
        assert not credits._LINE_IDS.search(line)


@pytest.mark.parametrize("sentence", [
    "Szegedy and colleagues showed that tiny perturbations can flip a prediction.",
    "Smith et al. found it.", "Smith et al found it.", "Smith and his co-authors at MIT found it.",
    "Smith & coworkers found it.", "the paper by Smith and Jones of MIT", "Colleagues of Smith found it.",
    "Smith and Colleagues found it.", "Smith and colleaguesX found it.",
])
def test_english_credit_frames_read_as_the_full_patterns(sentence: str) -> None:
    # the cheap cues gate the _NAMES scans: without a cue the full pattern finds nothing
    from pipeline import credits

    if not credits._EN_ET_AL_CUE.search(sentence):
        assert not credits._EN_NAMES_ET_AL.search(sentence)
    if "by" not in sentence:
        assert not credits._EN_BY_NAMES.search(sentence)


_URL_PIECES = ["https://", "http://", "HTTP://", "www.", "WWW.", "github.com/", "arxiv.org", "doi.org/", "x", "a.b",
               "/", " ", "。", "中文", "(", ")", "@", "-", ".", "ftp://", "huggingface.co/", "ſ", "\u0130"]


@settings(max_examples=400, deadline=None)
@given(st.lists(st.sampled_from(_URL_PIECES), max_size=12).map("".join))
def test_url_matches_are_the_patterns_matches(text: str) -> None:

    assert [m.span() for m in identifiers._url_matches(text)] == [m.span() for m in identifiers._URL.finditer(text)]


_ARXIV_PIECES = ["arXiv", "ARXIV", "arxiv", "xarxiv", "alphaxiv.org/", "AlphaXiv.org/abs/", "arxiv.org/abs/",
                 "huggingface.co/papers/", "HuggingFace.co/Papers/", "2502.13228", "1412.1234", "hep-th/9901001",
                 "v2", ":", "：", " ", "/", ".", "中文", "ı", "\u212a", "\u0130", "\u00ad", "２５０２．１３２２８"]


@settings(max_examples=400, deadline=None)
@given(st.lists(st.sampled_from(_ARXIV_PIECES), max_size=10).map("".join))
def test_arxiv_context_matches_are_the_patterns_matches(text: str) -> None:
    # the anchored scan (tried only where a context word starts) finds what finditer finds

    assert ([m.group() for m in identifiers._arxiv_ctx_matches(text)]
            == [m.group() for m in identifiers._ARXIV_CTX.finditer(text)])


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(_ARXIV_PIECES), max_size=10).map("".join))
def test_arxiv_fold_is_skipped_only_when_it_changes_nothing(text: str) -> None:

    if not identifiers._ID_FOLD_CHARS.search(text):
        assert text.translate(identifiers._ID_FOLD) == text


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        # one person and affiliation an item, as conference pages list award papers
        ("Ana Lima, Google; Bo Chen, EPFL; Carl Dahl, Google",
         (["Ana Lima", "Bo Chen", "Carl Dahl"], ["Google", "EPFL"])),
        ("Ana Lima, University of California, Berkeley; Bo Chen, Google Brain; Carl Dahl, Google Brain",
         (["Ana Lima", "Bo Chen", "Carl Dahl"], ["University of California, Berkeley", "Google Brain"])),
        ("Ana Lima, Stanford University", (["Ana Lima"], ["Stanford University"])),
        # two people a line, and Last, First names, are lists of people
        ("Ana Lima, Bo Chen; Carl Dahl, Dora Eck", None),
        ("Lima, Ana; Chen, Bo", None),
        ("Ana Lima, Bo Chen", None),
        ("Ana Lima; Bo Chen", None),
    ],
)
def test_split_affiliation_items(value, expected):
    from pipeline.names import split_affiliation_items

    assert split_affiliation_items(value) == expected


def test_key_value_drops_a_trailing_html_line_break():
    from pipeline.fields import parse_key_value

    assert parse_key_value("* 論文作者: Ashish Vaswani, Illia Polosukhin <br>") == (
        "authors", "Ashish Vaswani, Illia Polosukhin")
    assert parse_key_value("Authors: A. Author<br/><BR>") == ("authors", "A. Author")


def test_more_venue_acronyms_are_named():
    from pipeline.fields import find_venue_years

    assert [(v, y) for v, y, _, _ in find_venue_years("***ICDE 2026, CCF-A***")] == [("ICDE", 2026)]
    assert [(v, y) for v, y, _, _ in find_venue_years("accepted by ACM MM 2026")] == [("ACM MM", 2026)]
    assert [(v, y) for v, y, _, _ in find_venue_years("ACM Multimedia 2024")] == [("ACM MM", 2024)]
    assert find_venue_years("an RSS feed of MM news") == []


def test_a_mixed_case_venue_acronym_in_capitals():
    from pipeline.fields import find_venue_years

    assert [(v, y) for v, y, _, _ in find_venue_years("(CORL 2019)Learning by cheating")] == [("CoRL", 2019)]
    assert [(v, y) for v, y, _, _ in find_venue_years("MLSYS 2023")] == [("MLSys", 2023)]
    assert find_venue_years("the corl of it") == []


def test_a_workshop_at_a_venue_edition_names_the_venue_and_year():
    from pipeline.fields import find_venue_years

    assert [(v, y) for v, y, _, _ in find_venue_years("`ICBINB NeurIPS Workshop 2023`")] == [("NeurIPS", 2023)]


def test_an_arxiv_id_named_by_an_html_attribute_is_read_apart_from_text() -> None:
    from pipeline.identifiers import find_arxiv_attributes

    row = '<td><button class="favorite-btn" data-arxiv-id="2505.00972v2" data-paper-url="./p.html">☆</button></td>'
    assert find_arxiv_attributes(row) == [("2505.00972", "v2")]
    assert find_arxiv_ids(row) == []  # markup is no evidence in text
    assert find_arxiv_attributes("A paper, 2505.00972 downloads") == []


def test_an_arxiv_attribute_that_opens_the_next_paper_is_not_this_ones() -> None:
    from pipeline.identifiers import find_arxiv_attributes

    # a <div data-arxiv-id> wraps each paper; a section ends where the next paper's div opens
    section = '**Tokenizer-Free Language Modeling**\n\nWe propose.\n\n</div>\n\n<div data-arxiv-id="2402.11111">\n'
    assert find_arxiv_attributes(section) == []
    assert find_arxiv_attributes('<div data-arxiv-id="2401.12345v2">\n**Title**\n</div>\n') == [("2401.12345", "v2")]


@pytest.mark.parametrize(("name", "expected"), [
    ("Dr Badrul Sarwar", "Badrul Sarwar"), ("Professors George Karypis", "George Karypis"),
    ("Prof. Ann Lee", "Ann Lee"), ("Sir Tim Berners-Lee", "Tim Berners-Lee"),
    ("Drew Houston", "Drew Houston"), ("Dr. Who", "Dr. Who"), ("张三", "张三"),
    ("Prof. Dr. Hans Müller", "Hans Müller"), ("Prof. Dr.-Ing. Hans Müller", "Hans Müller"), ("Prof. Dr. Who", "Prof. Dr. Who"),
])
def test_a_form_of_address_is_no_part_of_an_authors_name(name: str, expected: str) -> None:
    assert without_honorific(name) == expected


@pytest.mark.parametrize(("text", "found"), [
    ("## IEEE S&P", [("S&P", None)]),
    ("IEEE Symposium on Security and Privacy 2023", [("S&P", 2023)]),
    ("The Best Papers Committee for VIS 2026 Full papers", [("IEEE VIS", 2026)]),
    ("IEEE VIS 2024 best paper", [("IEEE VIS", 2024)]),
    ("SIGCSE 2025 Best Paper", [("SIGCSE", 2025)]),
    ("the S&P 500 index rose", []),
    ("IEEE European Symposium on Security and Privacy 2022", []),
    ("visual features (VIS) and text", []),
])
def test_security_visualization_and_education_venues_are_named(text: str, found: list) -> None:
    from pipeline.fields import find_venue_years

    assert [(v, y) for v, y, _, _ in find_venue_years(text)] == found


def test_a_metadata_line_holding_two_fields_parted_by_a_bar_gives_the_first_its_own_value() -> None:
    from pipeline.fields import parse_key_value

    assert parse_key_value("**Authors:** Ann Lee, Bo Chen | **Date:** 2026-03-26")[1].strip("* ") == "Ann Lee, Bo Chen"
    assert parse_key_value("Authors: Ann Lee | Venue: ICML 2024") == ("authors", "Ann Lee")
    # a bar inside a value that is not followed by another field stays in it
    assert parse_key_value("Title: Widgets | A Study of Sparse Things") == ("title", "Widgets | A Study of Sparse Things")
