"""Unit tests of :func:`pipeline.clean.find_dropped` on small invented articles.

The fixture articles imitate the two seed formats (a Simplified Chinese award report with
bylines, numbered papers and a reference line; an English blog post) about other papers; the
facts about those papers live here only.
"""

from __future__ import annotations

import pytest

from pipeline.clean import find_dropped
from pipeline.config import Config


def assert_valid_spans(text: str, spans: list[dict]) -> None:
    """Sorted, non-overlapping, non-empty, trimmed spans whose offsets slice ``text`` exactly."""
    for span in spans:
        assert set(span) == {"char_start", "char_end", "reason", "text"}
        a, b = span["char_start"], span["char_end"]
        assert 0 <= a < b <= len(text)
        assert text[a:b] == span["text"]
        assert span["text"] == span["text"].strip()
    starts = [s["char_start"] for s in spans]
    assert starts == sorted(starts)
    for left, right in zip(spans, spans[1:], strict=False):
        assert left["char_end"] <= right["char_start"]


def dropped(text: str) -> list[dict]:
    spans = find_dropped(text, Config())
    assert_valid_spans(text, spans)
    return spans


def reasons(spans: list[dict]) -> list[tuple[str, str]]:
    return [(s["reason"], s["text"]) for s in spans]


# --- fixture articles -------------------------------------------------------------------------

HEADLINE = "ICLR 2025 杰出论文揭晓，三篇论文获奖"
LEAD = "本周，ICLR 2025 公布了杰出论文奖。据大会官方报道，今年共有三篇论文获得杰出论文奖，另有三篇论文获得荣誉提名。"
PAPERS = """杰出论文奖

论文 1：Safety Alignment Should Be Made More Than Just a Few Tokens Deep

机构：普林斯顿大学、Google DeepMind

论文摘要：本文指出，当前大语言模型的安全对齐往往只作用于输出的前几个 token，这种浅层安全对齐使模型容易受到对抗后缀攻击、预填充攻击和微调攻击。作者提出了一种数据增强方法，并设计了约束优化目标，使安全对齐深入到更多的输出位置。

论文 2：Learning Dynamics of LLM Finetuning

机构：英属哥伦比亚大学

论文摘要：本文从学习动态的角度研究大语言模型微调，分析一个训练样本的梯度更新如何影响模型对其他样本的预测。这一框架解释了指令微调后幻觉加剧，以及直接偏好优化中出现的挤压效应等现象。

论文 3：AlphaEdit: Null-Space Constrained Knowledge Editing for Language Models

机构：中国科学技术大学、新加坡国立大学

论文摘要：大语言模型常常出现知识错误或知识过时的问题。本文提出 AlphaEdit，在把参数扰动应用到模型之前，先将其投影到保留知识的零空间上，从而在更新目标知识的同时不破坏模型已有的知识。"""
CLOSING = "颁奖仪式将在新加坡举行的 ICLR 2025 大会上进行，三篇杰出论文的作者将在大会上作口头报告，介绍大语言模型安全对齐、微调学习动态与知识编辑方面的研究。"
REFERENCE = "参考链接：https://iclr.cc/virtual/2025/awards_detail"

#: A news item of another feed (weather), glued onto the end of a scraped page.
WEATHER = (
    "中央气象台今天早晨继续发布暴雨蓝色预警\u3000\u3000预计未来三天，江南、华南等地将有一次强降雨过程，"
    "局地伴有雷暴大风和冰雹。气象部门提醒公众注意防范城乡积涝和山洪地质灾害，出行尽量避开低洼路段。"
)
#: Another glued item (stock market).
STOCKS = (
    "沪深两市今日震荡走高，沪指收涨0.8%，深证成指涨1.2%，两市成交额突破一万亿元。"
    "板块方面，券商、白酒板块领涨，煤炭、钢铁板块小幅回调，北向资金全天净买入超过五十亿元。"
)
WEATHER_2 = (
    "气象专家表示，今年入汛以来南方降水偏多，多条河流出现超警戒水位，"
    "各地应提前转移危险区域群众，加强水库和堤防巡查，确保群众生命财产安全。"
)


def report(*parts: str) -> str:
    return "\n\n".join(parts) + "\n"


# --- bylines and editor credits -----------------------------------------------------------------


def test_chinese_bylines_at_the_top_are_dropped() -> None:
    text = report(HEADLINE, "量子位报道", "新智元编辑部", "作者：李明", LEAD, PAPERS)
    assert reasons(dropped(text)) == [
        ("byline", "量子位报道"),
        ("byline", "新智元编辑部"),
        ("byline", "作者：李明"),
    ]


def test_english_byline_is_dropped() -> None:
    text = (
        "# Two CVPR 2024 Best Papers\n\n"
        "By Jane Doe\n\n"
        "CVPR 2024 in Seattle gave its Best Paper award to two papers, on image dynamics and on "
        "rich human feedback for text-to-image generation.\n"
    )
    assert reasons(dropped(text)) == [("byline", "By Jane Doe")]


def test_body_sentence_mentioning_baodao_is_kept() -> None:
    # 报道 inside a sentence of the lead (within the first lines) is content, not a byline
    text = report(HEADLINE, "机器之心报道", LEAD, "据路透社报道，三篇获奖论文的代码均已开源。", PAPERS)
    spans = dropped(text)
    assert reasons(spans) == [("byline", "机器之心报道")]
    assert not any("据路透社报道" in s["text"] for s in spans)
    assert not any("据大会官方报道" in s["text"] for s in spans)


@pytest.mark.parametrize("position", ["top", "middle", "end"])
def test_responsible_editor_credit_is_dropped_anywhere(position: str) -> None:
    credit = "责任编辑：王芳"
    parts = {
        "top": [HEADLINE, credit, LEAD, PAPERS, REFERENCE],
        "middle": [HEADLINE, LEAD, credit, PAPERS, REFERENCE],
        "end": [HEADLINE, LEAD, PAPERS, credit, REFERENCE],
    }[position]
    text = report(*parts)
    spans = dropped(text)
    assert reasons(spans) == [("editor_credit", credit)]
    assert spans[0]["char_start"] == text.index(credit)


def test_body_sentence_starting_with_bianji_is_not_an_editor_credit() -> None:
    # 编辑距离 (edit distance) / 编辑模型 (editing a model) open ordinary sentences of a paper
    # write-up; only a credit line (编辑：name) is an editor credit.
    text = report(
        HEADLINE, LEAD, PAPERS,
        "编辑距离常被用作衡量模型输出差异的指标。",
        "编辑模型中的知识仍然是一个开放问题。",
        REFERENCE,
    )
    assert dropped(text) == []


def test_author_metadata_line_of_a_paper_is_not_a_byline() -> None:
    # A short page that starts with its paper: 作者：... is the paper's author list, not the
    # page's byline, even though it stands among the first lines.
    text = report(
        "论文 1：Safety Alignment Should Be Made More Than Just a Few Tokens Deep",
        "作者：漆翔宇、Ashwinee Panda、吕凯风",
        "机构：普林斯顿大学、Google DeepMind",
        "论文摘要：本文指出，当前大语言模型的安全对齐往往只作用于输出的前几个 token，使模型容易受到越狱攻击。",
    )
    assert dropped(text) == []


# --- unrelated trailing news --------------------------------------------------------------------


def test_unrelated_news_glued_after_the_reference_line_is_one_span() -> None:
    article = report(HEADLINE, "量子位报道", LEAD, PAPERS, REFERENCE)
    text = article + "\n" + WEATHER
    spans = dropped(text)
    trailing = [s for s in spans if s["reason"] == "unrelated_trailing"]
    assert len(trailing) == 1
    assert trailing[0]["text"] == WEATHER
    assert trailing[0]["char_start"] == len(article) + 1
    assert trailing[0]["char_end"] == len(text)
    # the reference line is the article's own and is kept
    assert not any(REFERENCE in s["text"] for s in spans)


def test_unrelated_news_glued_after_the_last_paper_is_one_span() -> None:
    article = report(HEADLINE, LEAD, PAPERS)
    text = article + "\n" + STOCKS + "\n"
    spans = dropped(text)
    assert reasons(spans) == [("unrelated_trailing", STOCKS)]
    assert spans[0]["char_start"] == text.index(STOCKS)


def test_unrelated_news_of_two_paragraphs_is_one_span() -> None:
    glued = WEATHER + "\n\n" + WEATHER_2
    article = report(HEADLINE, LEAD, PAPERS, REFERENCE)
    text = article + "\n" + glued + "\n"
    spans = dropped(text)
    assert reasons(spans) == [("unrelated_trailing", glued)]
    assert spans[0]["char_start"] == len(article) + 1


def test_glued_news_ending_in_its_own_editor_credit_gives_no_overlapping_spans() -> None:
    # the glued item carries its own 责任编辑 line in the same paragraph: the news and the
    # credit are dropped, each character once
    article = report(HEADLINE, LEAD, PAPERS, REFERENCE)
    glued = WEATHER + "\n责任编辑：赵强"
    text = article + "\n" + glued + "\n"
    spans = dropped(text)  # asserts non-overlapping
    start = len(article) + 1
    covered = {i for s in spans for i in range(s["char_start"], s["char_end"])}
    assert {i for i in range(start, start + len(glued)) if not text[i].isspace()} <= covered
    first = next(s for s in spans if s["char_start"] <= start < s["char_end"])
    assert first["reason"] == "unrelated_trailing"


def test_on_topic_last_paragraph_is_kept() -> None:
    text = report(HEADLINE, LEAD, PAPERS, CLOSING)
    assert dropped(text) == []


def test_final_reference_line_is_never_dropped() -> None:
    text = report(HEADLINE, LEAD, PAPERS, REFERENCE)
    assert dropped(text) == []
    # also without a trailing newline, and after an on-topic closing paragraph
    text = report(HEADLINE, LEAD, PAPERS, CLOSING, REFERENCE).rstrip("\n")
    assert dropped(text) == []


def test_short_article_without_glued_news_drops_nothing() -> None:
    text = report(HEADLINE, LEAD)
    assert dropped(text) == []


# --- related-article lists ----------------------------------------------------------------------


def test_chinese_related_list_is_dropped_with_its_label() -> None:
    related = (
        "相关文章：\n"
        "1. NeurIPS 2024 最佳论文出炉，北大与字节跳动合作论文获奖\n"
        "2. ICML 2024 十篇最佳论文一览\n"
        "3. CVPR 2024 最佳论文：生成式图像动力学"
    )
    text = report(HEADLINE, LEAD, PAPERS, REFERENCE, related)
    spans = dropped(text)
    assert reasons(spans) == [("related_list", related)]
    assert spans[0]["char_start"] == text.index("相关文章")


def test_english_related_posts_list_is_dropped_with_its_label() -> None:
    related = (
        "## Related posts\n\n"
        "- [Reading notes: the ICLR 2025 outstanding papers](/posts/iclr-2025/)\n"
        "- [What we learned from the NeurIPS 2024 orals](/posts/neurips-2024-orals/)"
    )
    text = (
        "# Two CVPR 2024 Best Papers\n\n"
        "CVPR 2024 gave its Best Paper award to two papers. Here are our notes on both.\n\n"
        "## Generative Image Dynamics\n\n"
        "**Authors:** Zhengqi Li, Richard Tucker, Noah Snavely, Aleksander Holynski\n\n"
        "The paper models scene motion as spectral volumes and animates a single still image.\n\n"
        + related
        + "\n"
    )
    spans = dropped(text)
    assert reasons(spans) == [("related_list", related)]


def test_related_list_of_off_topic_links_after_a_blank_line_is_one_span() -> None:
    # the label stands apart from its list, whose items are about other things: still one
    # related_list span, not an overlapping unrelated_trailing span for the list as well
    related = (
        "## Related posts\n\n"
        "- [Our favourite hiking trails around Seattle](https://blog.example.com/hiking)\n"
        "- [Baking sourdough bread at home](https://blog.example.com/bread)"
    )
    text = (
        "# Two CVPR 2024 Best Papers\n\n"
        "CVPR 2024 gave its Best Paper award to two papers. Here are our notes on both.\n\n"
        "## Generative Image Dynamics\n\n"
        "**Authors:** Zhengqi Li, Richard Tucker, Noah Snavely, Aleksander Holynski\n\n"
        "The paper models scene motion as spectral volumes and animates a single still image.\n\n"
        + related
        + "\n"
    )
    assert reasons(dropped(text)) == [("related_list", related)]


def test_related_label_without_list_is_kept() -> None:
    # a label line with nothing list-like after it is not a related-article list
    text = report(HEADLINE, LEAD, "推荐阅读", CLOSING)
    assert dropped(text) == []


# --- span invariants on a page with every kind of junk --------------------------------------------


def test_spans_sorted_non_overlapping_and_exact_on_a_busy_page() -> None:
    related = "相关文章\n- ICML 2024 十篇最佳论文一览\n- NeurIPS 2024 最佳论文出炉"
    text = report(
        HEADLINE, "机器之心报道", "机器之心编辑部", LEAD, PAPERS, "责任编辑：王芳", REFERENCE, related, WEATHER,
    )
    spans = dropped(text)
    assert [s["reason"] for s in spans] == [
        "byline", "byline", "editor_credit", "related_list", "unrelated_trailing",
    ]
    assert spans[-1]["text"] == WEATHER
