"""Unit tests of :func:`pipeline.clean.find_dropped` on small invented articles.

The fixture articles imitate the two seed formats (a Simplified Chinese award report with
bylines, numbered papers and a reference line; an English blog post) about other papers; the
facts about those papers live here only.
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pipeline.clean import find_dropped, front_matter_headline
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


# --- fixture articles in zh-Hant and English ------------------------------------------------------

HANT_HEADLINE = "NeurIPS 2024 最佳論文揭曉，兩篇論文獲獎"
HANT_LEAD = (
    "NeurIPS 2024 近日公布了最佳論文獎。今年共有兩篇論文獲得最佳論文獎，另有兩篇論文獲得最佳論文亞軍，"
    "獲獎研究涵蓋影像生成與偏微分方程求解。"
)
HANT_PAPERS = """論文 1：Visual Autoregressive Modeling: Scalable Image Generation via Next-Scale Prediction

機構：北京大學、字節跳動

論文摘要：本文提出視覺自迴歸建模，將影像上的自迴歸學習重新定義為由粗到細的下一尺度預測，首次讓自迴歸模型在影像生成上超越擴散模型，並展現出類似大型語言模型的縮放定律。

論文 2：Stochastic Taylor Derivative Estimator: Efficient amortization for arbitrary differential operators

機構：新加坡國立大學

論文摘要：本文提出隨機泰勒導數估計器，借助泰勒模式自動微分並對輸入切向量進行隨機化，高效地攤銷任意微分算子的計算，可以求解百萬維的偏微分方程。"""
HANT_REFERENCE = "參考連結：https://neurips.cc/virtual/2024/awards_detail"

EN_HEADLINE = "# Two CVPR 2024 Best Papers"
EN_LEAD = (
    "CVPR 2024 in Seattle gave its Best Paper award to two papers, on image dynamics and on rich "
    "human feedback for text-to-image generation. Here are our notes on both."
)
EN_PAPERS = """## Generative Image Dynamics

**Authors:** Zhengqi Li, Richard Tucker, Noah Snavely, Aleksander Holynski

The paper models scene motion as spectral volumes and animates a single still image into a looping video, with image-space motion learned from natural videos.

## Rich Human Feedback for Text-to-Image Generation

**Authors:** Youwei Liang, Junfeng He, Gang Li

The paper collects rich human feedback on generated images, trains a model to predict it, and uses the predictions to improve text-to-image generation."""
EN_REFERENCE = "Source: https://cvpr.thecvf.com/Conferences/2024/News/Awards"

#: The three scripts' articles: (headline, lead, papers, reference).
ARTICLES = {
    "zh-Hans": (HEADLINE, LEAD, PAPERS, REFERENCE),
    "zh-Hant": (HANT_HEADLINE, HANT_LEAD, HANT_PAPERS, HANT_REFERENCE),
    "en": (EN_HEADLINE, EN_LEAD, EN_PAPERS, EN_REFERENCE),
}


def with_junk(script: str, top: tuple[str, ...] = (), after_headline: tuple[str, ...] = (),
              middle: tuple[str, ...] = (), bottom: tuple[str, ...] = ()) -> str:
    """The script's article with junk paragraphs at the top, after the headline, between the
    lead and the papers, and after the reference line."""
    headline, lead, papers, reference = ARTICLES[script]
    return report(*top, headline, *after_headline, lead, *middle, papers, reference, *bottom)


def expect(text: str, *junk: tuple[str, str]) -> None:
    """The dropped spans of ``text`` are exactly ``junk`` (reason, text), each found once, in order."""
    spans = dropped(text)
    assert reasons(spans) == list(junk)
    for span, (_, piece) in zip(spans, junk, strict=True):
        assert text.count(piece) == 1
        assert span["char_start"] == text.index(piece)
        assert span["char_end"] == text.index(piece) + len(piece)


def test_fixture_articles_are_clean() -> None:
    for script in ARTICLES:
        assert dropped(with_junk(script)) == [], script


# --- repost and source lines ------------------------------------------------------------------------

@pytest.mark.parametrize(
    ("script", "top", "bottom"),
    [
        ("zh-Hans", "文章来源于公众号「深度学习前沿」", "本文转载自机器之心，已获授权。"),
        ("zh-Hans", "来源：公众号 AI科技评论", "原文首发于知乎专栏"),
        ("zh-Hant", "本文轉載自「數位時代」", "轉載自：科技新報"),
        ("zh-Hant", "來源：公眾號「人工智慧學堂」", "本文經授權轉載，原文刊於作者部落格。"),
        ("en", "Originally published at example.com on March 3, 2025.", "This article first appeared on The Gradient."),
        ("en", "Reposted from the authors' lab blog", "This post was originally published on Medium."),
    ],
)
def test_repost_source_lines_are_dropped(script: str, top: str, bottom: str) -> None:
    text = with_junk(script, after_headline=(top,), bottom=(bottom,))
    expect(text, ("repost_source", top), ("repost_source", bottom))


@pytest.mark.parametrize(
    ("prefix", "body"),
    [
        ("本文转载自公众号「深度学习前沿」。", "今年共有三篇论文获得杰出论文奖，另有三篇论文获得荣誉提名。"),
        ("【本文轉載自數位時代】", "今年共有兩篇論文獲得最佳論文獎，另有兩篇論文獲得最佳論文亞軍。"),
        ("Originally published at example.com.", "Two papers won the award this year, on image dynamics and on human feedback."),
    ],
)
def test_repost_prefix_is_dropped_and_the_sentence_after_it_kept(prefix: str, body: str) -> None:
    text = report(HEADLINE, prefix + " " + body if prefix.endswith(".") else prefix + body, LEAD, PAPERS)
    expect(text, ("repost_source", prefix))


def test_sentences_opening_like_a_source_are_kept() -> None:
    # 来自 / 來自 open ordinary sentences; a Source: line with a link is the article's reference
    text = report(
        HEADLINE, LEAD,
        "来自斯坦福大学的研究者提出了一种新的对齐方法，在多个安全基准上取得了显著提升。",
        "來自產業界的研究者也提交了多篇論文，其中一篇獲得榮譽提名。",
        "Sources close to the programme committee said the decision was unanimous this year.",
        PAPERS, EN_REFERENCE,
    )
    assert dropped(text) == []


# --- bylines and editor credits keep working next to the new kinds -----------------------------------

def test_byline_after_a_repost_line_and_editor_credit_at_the_end() -> None:
    text = report("来源：公众号 AI科技评论", HEADLINE, "作者：李明", LEAD, PAPERS, "責任編輯：王芳")
    expect(text, ("repost_source", "来源：公众号 AI科技评论"), ("byline", "作者：李明"), ("editor_credit", "責任編輯：王芳"))


# --- share and follow prompts ---------------------------------------------------------------------------

@pytest.mark.parametrize(
    ("script", "top", "bottom"),
    [
        ("zh-Hans", "点击上方蓝字关注我们", "扫码关注我们，获取更多前沿论文解读"),
        ("zh-Hans", "▲ 长按识别二维码，关注公众号", "分享到：微信 微博 QQ空间"),
        ("zh-Hant", "點擊上方藍字關注我們", "長按識別二維碼，關注我們"),
        ("zh-Hant", "👉 點擊關注，不錯過每一篇論文解讀", "分享至：Facebook｜LINE"),
        ("en", "Follow us on X and LinkedIn for more paper notes.", "Share this article"),
        ("en", "**Share:** Twitter · Facebook · LinkedIn", "Scan the QR code to follow our channel"),
    ],
)
def test_share_prompts_are_dropped(script: str, top: str, bottom: str) -> None:
    text = with_junk(script, top=(top,), bottom=(bottom,))
    expect(text, ("share_prompt", top), ("share_prompt", bottom))


def test_sentences_about_sharing_and_following_are_kept() -> None:
    text = report(
        HEADLINE, LEAD,
        "作者在博客中分享了训练细节，并公开了全部评测代码。",
        "分享到社交媒体上的模型输出被研究者收集起来，构成了一个包含十万条样本的数据集，用于分析模型在真实使用中的安全问题。",
        "研究團隊也在社群平台上分享了訓練細節與評測程式碼，引發廣泛討論。",
        "關注我們這個領域的讀者或許還記得，去年的最佳論文同樣來自大型語言模型安全方向，而今年的獲獎論文延續了這一趨勢。",
        "We share the authors' view that shallow alignment is the main weakness of current chat models.",
        "Share of compute spent on alignment grew to a tenth of the training budget in their experiments.",
        PAPERS, REFERENCE,
    )
    assert dropped(text) == []


def test_follow_us_inside_a_wrapped_english_paragraph_is_kept() -> None:
    paragraph = (
        "The authors close with an invitation that readers of the paper are welcome to\n"
        "follow us on the project page, where the code, the data and the evaluation scripts\n"
        "are all released under a permissive licence for research use."
    )
    text = report(EN_HEADLINE, EN_LEAD, EN_PAPERS, paragraph)
    assert dropped(text) == []


# --- copyright and licence footers ------------------------------------------------------------------------

@pytest.mark.parametrize(
    ("script", "footer"),
    [
        ("zh-Hans", ("本文为机器之心原创，转载请联系本公众号获得授权。", "版权所有 © 2025 保留所有权利")),
        ("zh-Hans", ("未经授权禁止转载", "如有侵权，请联系删除")),
        ("zh-Hant", ("版權所有，轉載請聯繫作者", "未經授權，禁止轉載")),
        ("en", ("© 2025 Example Media. All rights reserved.", "Licensed under CC BY 4.0")),
        ("en", ("Copyright 2025 The Reading Group", "This work is licensed under a Creative Commons Attribution 4.0 License.")),
    ],
)
def test_copyright_footers_are_dropped(script: str, footer: tuple[str, str]) -> None:
    text = with_junk(script, bottom=footer)
    expect(text, *(("copyright", line) for line in footer))


def test_sentences_about_copyright_and_licences_are_kept() -> None:
    text = report(
        HEADLINE, LEAD,
        "他们主张建立健全的国际版权体系，并实施集体许可制度，以确保数据训练的公平补偿。",
        "版权所有者能否要求从训练数据中删除其作品，是该论文讨论的核心问题之一，作者为此设计了一种高效的机器遗忘算法并给出了理论保证。",
        "研究團隊指出，版權問題將是生成模型商業化的最大障礙之一。",
        "Copyright holders can opt out of the training data, the authors note, at a small cost in accuracy.",
        "The code is licensed under CC BY 4.0 and the model weights under Apache 2.0.",
        PAPERS, REFERENCE,
    )
    assert dropped(text) == []


def test_licence_line_among_a_papers_metadata_is_kept() -> None:
    # a licence line is a footer only near the end; after a paper's heading it describes the paper
    papers = PAPERS.replace("机构：普林斯顿大学、Google DeepMind", "机构：普林斯顿大学、Google DeepMind\n\nLicense: CC BY 4.0")
    text = report(HEADLINE, LEAD, papers, CLOSING, REFERENCE, "相关论文将在大会期间统一公开。", WEATHER_2)
    assert not any("License" in s["text"] for s in dropped(text))


# --- newsletter prompts -------------------------------------------------------------------------------------

@pytest.mark.parametrize(
    ("script", "prompt"),
    [
        ("zh-Hans", "订阅我们的周报，第一时间获取顶会论文解读"),
        ("zh-Hans", "欢迎订阅本刊电子报"),
        ("zh-Hant", "訂閱電子報"),
        ("zh-Hant", "立即訂閱我們的週報，掌握最新 AI 研究"),
        ("en", "Subscribe to our newsletter"),
        ("en", "Sign up for The Weekly Paper Digest →"),
    ],
)
def test_newsletter_prompts_are_dropped(script: str, prompt: str) -> None:
    text = with_junk(script, bottom=(prompt,))
    expect(text, ("newsletter", prompt))


def test_sentences_about_subscriptions_are_kept() -> None:
    text = report(
        HEADLINE, LEAD,
        "订阅制的模型服务正在改变研究者获取算力的方式，论文也讨论了这一趋势。",
        "訂閱制服務的興起讓更多研究者能以較低成本使用大型模型。",
        "Subscribers to the arXiv listing saw the paper a week before the awards were announced.",
        "Sign-up rates for the workshop doubled after the award was announced, the organisers said.",
        PAPERS, REFERENCE,
    )
    assert dropped(text) == []


# --- navigation and menus ---------------------------------------------------------------------------------

@pytest.mark.parametrize(
    ("script", "menu"),
    [
        ("zh-Hans", "首页 | 新闻 | 科技 | 关于我们"),
        ("zh-Hans", "首页 > 人工智能 > 正文"),
        ("zh-Hant", "首頁｜新聞｜科技｜關於我們"),
        ("zh-Hant", "首頁 > 新聞 > 人工智慧"),
        ("en", "Home > News > AI"),
        ("en", "Home | Blog | Topics | About"),
        ("en", "Home\tNews\tResearch\tContact"),
    ],
)
def test_navigation_lines_are_dropped(script: str, menu: str) -> None:
    text = with_junk(script, top=(menu,))
    expect(text, ("navigation", menu))


def test_menu_runs_at_the_top_and_bottom_are_dropped() -> None:
    top = "Home\nNews\nResearch\nAbout"
    bottom = "关于我们\n\n联系我们\n\n隐私政策\n\n用户协议"
    text = report(top, EN_HEADLINE, EN_LEAD, EN_PAPERS, EN_REFERENCE, bottom)
    expect(text, ("navigation", top), ("navigation", bottom))


def test_lists_and_tables_with_separators_are_not_menus() -> None:
    papers = EN_PAPERS.replace(
        "**Authors:** Youwei Liang, Junfeng He, Gang Li",
        "Youwei Liang · Junfeng He · Gang Li",
    )
    table = "| 模型 | 参数量 | 准确率 |\n|---|---|---|\n| VAR | 2B | 高 |"
    # (nine paragraphs on each side, so that the lines stand in the middle, away from the edges)
    text = report(EN_HEADLINE, *[EN_LEAD] * 8, papers, "模型 | 数据 | 结果", table, *[EN_LEAD] * 9)
    # the three-name line without a menu word, a pipe line of content words in the middle of
    # the article and the table rows all stay
    assert dropped(text) == []


def test_pipe_line_without_menu_words_is_a_menu_only_at_an_edge() -> None:
    tags = "Diffusion | Video | Generation"
    expect(report(tags, EN_HEADLINE, EN_LEAD, EN_PAPERS, EN_REFERENCE), ("navigation", tags))
    middle = report(EN_HEADLINE, *[EN_LEAD] * 8, tags, EN_PAPERS, EN_REFERENCE, *[EN_LEAD] * 8)
    assert dropped(middle) == []


def test_three_short_lines_in_the_middle_are_not_a_menu() -> None:
    text = report(HEADLINE, LEAD, "首页\n新闻\n科技", PAPERS, REFERENCE)
    # a menu run counts only at the very top or bottom
    assert dropped(text) == []


# --- related-article lists ----------------------------------------------------------------------------------

@pytest.mark.parametrize(
    ("script", "related"),
    [
        ("zh-Hans", "往期回顾\n\n▶ ICML 2024 十篇最佳论文一览\n\n▶ NeurIPS 2024 最佳论文出炉"),
        ("zh-Hans", "—— 更多阅读 ——\n1、ICML 2024 十篇最佳论文一览\n2、NeurIPS 2024 最佳论文出炉"),
        ("zh-Hant", "【往期推薦】\n\n《ICML 2024 十篇最佳論文一覽》\n\n《NeurIPS 2024 最佳論文出爐》"),
        ("en", "Further reading:\n\n* [Notes on the ICLR 2025 orals](https://blog.example.com/iclr)\n\n* [The NeurIPS 2024 best papers](https://blog.example.com/neurips)"),
    ],
)
def test_related_lists_are_dropped_with_their_label(script: str, related: str) -> None:
    text = with_junk(script, bottom=(related,))
    expect(text, ("related_list", related))


def test_related_list_of_plain_titles_at_the_end_is_dropped() -> None:
    related = "往期推荐\n\nICML 2024 十篇最佳论文一览\n\nNeurIPS 2024 最佳论文出炉，北大与字节跳动合作论文获奖"
    text = report(HEADLINE, LEAD, PAPERS, REFERENCE, related, "版权所有，转载请联系授权")
    expect(text, ("related_list", related), ("copyright", "版权所有，转载请联系授权"))


# --- captions --------------------------------------------------------------------------------------------

@pytest.mark.parametrize(
    ("script", "caption"),
    [
        ("zh-Hans", "图1：模型架构示意图"),
        ("zh-Hans", "图片来源：论文截图"),
        ("zh-Hans", "图：来自论文原文"),
        ("zh-Hant", "圖 2｜實驗結果比較"),
        ("zh-Hant", "圖／取自論文"),
        ("en", "Figure 1: Overview of the method."),
        ("en", "Image credit: the authors"),
        ("en", "Photo: Jane Doe"),
        ("en", "![Overview of the method](https://example.com/fig1.png)"),
    ],
)
def test_caption_between_a_paper_heading_and_its_body_is_dropped_alone(script: str, caption: str) -> None:
    headline, lead, papers, reference = ARTICLES[script]
    # the caption stands right after the first paper's heading; the metadata and body stay
    first_heading = papers.split("\n\n", 1)[0]
    papers = papers.replace(first_heading, first_heading + "\n\n" + caption, 1)
    text = report(headline, lead, papers, reference)
    expect(text, ("caption", caption))


def test_sentences_about_figures_are_kept() -> None:
    text = report(
        HEADLINE, LEAD,
        "图 1 展示了模型在三个基准上的表现，可以看到 AlphaEdit 的编辑成功率明显更高。",
        "如图1所示，知识编辑前后模型在无关问题上的回答几乎没有变化。",
        "圖表顯示，模型規模越大，損失下降得越快。",
        "Figure 1 shows the architecture: an encoder, a motion model and a renderer.",
        "Photographs taken by the authors serve as the test set of the paper.",
        PAPERS, REFERENCE,
    )
    assert dropped(text) == []


# --- unrelated news before the article --------------------------------------------------------------------

NEWS_HANT = (
    "台北股市今日開高走高，加權指數終場上漲一百五十點，成交量明顯放大。"
    "電子類股表現強勢，金融股則小幅回檔，外資全天買超逾百億元。"
)
NEWS_EN_TITLE = "City Council Approves Road Budget"
NEWS_EN = (
    "The city council voted on Tuesday to approve a new budget for road repairs, adding two hundred "
    "kilometres of resurfaced streets and new bicycle lanes downtown before the winter."
)


@pytest.mark.parametrize(
    ("script", "glued"),
    [
        ("zh-Hans", WEATHER),
        ("zh-Hans", STOCKS + "\n\n" + WEATHER_2),
        ("zh-Hant", NEWS_HANT),
        ("en", NEWS_EN_TITLE + "\n\n" + NEWS_EN),
    ],
)
def test_unrelated_news_before_the_headline_is_dropped(script: str, glued: str) -> None:
    text = with_junk(script, top=(glued,))
    expect(text, ("unrelated_leading", glued))


def test_short_unrelated_item_before_the_headline_is_dropped() -> None:
    glued = "沪指今日收涨0.8%，两市成交额突破一万亿元。"
    text = report(glued, HEADLINE, "量子位报道", LEAD, PAPERS)
    expect(text, ("unrelated_leading", glued), ("byline", "量子位报道"))


def test_unrelated_leading_news_after_a_menu_line() -> None:
    text = report("首页 | 新闻 | 科技", WEATHER, HEADLINE, LEAD, PAPERS)
    expect(text, ("navigation", "首页 | 新闻 | 科技"), ("unrelated_leading", WEATHER))


def test_headline_and_lead_are_never_leading_junk() -> None:
    # an opening paragraph of venue background fits the papers poorly, but no headline follows
    # it: it is the article's own lead, not a glued item
    background = (
        "NeurIPS（神经信息处理系统大会）是人工智能领域的顶级学术会议之一。"
        "第三十八届大会于十二月在加拿大温哥华举行，吸引了来自世界各地的上万名参会者。"
    )
    for text in (
        report(background, LEAD, PAPERS, REFERENCE),
        report(HEADLINE, background, LEAD, PAPERS, REFERENCE),
        report("重磅！刚刚公布", "机器之心报道", LEAD, PAPERS),
    ):
        assert [s["reason"] for s in dropped(text)] in ([], ["byline"])


def test_paper_heading_first_is_never_leading_junk() -> None:
    text = report(
        "论文 1：Safety Alignment Should Be Made More Than Just a Few Tokens Deep",
        "机构：普林斯顿大学、Google DeepMind",
        "论文摘要：本文指出，当前大语言模型的安全对齐往往只作用于输出的前几个 token。",
        WEATHER,
    )
    assert reasons(dropped(text)) == [("unrelated_trailing", WEATHER)]


# --- unrelated news after the article: short and cut-off items, English titles ------------------------------

def test_short_cut_off_news_at_the_end_is_dropped() -> None:
    glued = "秋粮收获进度过半  眼下正值秋收关键时节，各地"
    text = report(HEADLINE, LEAD, PAPERS, REFERENCE) + "\n" + glued
    expect(text, ("unrelated_trailing", glued))


def test_short_cut_off_english_news_at_the_end_is_dropped() -> None:
    glued = "The mayor said the council would meet again in"
    text = report(EN_HEADLINE, EN_LEAD, EN_PAPERS) + "\n" + glued
    expect(text, ("unrelated_trailing", glued))


def test_glued_english_news_with_its_own_title_is_one_span() -> None:
    glued = NEWS_EN_TITLE + "\n\n" + NEWS_EN
    text = report(EN_HEADLINE, EN_LEAD, EN_PAPERS, glued)
    expect(text, ("unrelated_trailing", glued))


def test_glued_zh_hant_news_at_the_end_is_dropped() -> None:
    text = with_junk("zh-Hant", bottom=(NEWS_HANT,))
    expect(text, ("unrelated_trailing", NEWS_HANT))


def test_short_last_lines_of_a_real_article_are_kept() -> None:
    # a truncated page that ends on a section heading, a short closing sentence, a short title
    for ending in ("對 AI 領域的深遠影響", "本文深入研究了这两种竞争效应。", "Generative Image Dynamics"):
        text = report(HEADLINE, LEAD, PAPERS, ending)
        assert dropped(text) == [], ending


# --- everything at once ---------------------------------------------------------------------------------------

def test_every_kind_in_one_page() -> None:
    junk_top = ("首页 | 新闻 | 科技 | 关于我们", "点击上方蓝字关注我们", WEATHER)
    text = report(
        *junk_top, HEADLINE, "机器之心报道", "文章来源于公众号「深度学习前沿」", LEAD,
        PAPERS.replace("机构：英属哥伦比亚大学", "图2：学习动态示意图\n\n机构：英属哥伦比亚大学"),
        "责任编辑：王芳", REFERENCE,
        "往期回顾\n▶ ICML 2024 十篇最佳论文一览\n▶ NeurIPS 2024 最佳论文出炉",
        "订阅我们的周报", "扫码关注我们", "版权所有，未经授权禁止转载", STOCKS,
    )
    assert [s["reason"] for s in dropped(text)] == [
        "navigation", "share_prompt", "unrelated_leading", "byline", "repost_source", "caption",
        "editor_credit", "related_list", "newsletter", "share_prompt", "copyright", "unrelated_trailing",
    ]


# --- more forms seen in scraped pages ----------------------------------------------------------------------

@pytest.mark.parametrize(
    "byline",
    ["編譯／黃以婷", "記者林家豪／綜合報導", "本报讯（记者 张伟）", "AI前沿速递 报道", "Staff writer: Daniel Okafor",
     "*Written by Marcus Lee · 6 min read*"],
)
def test_more_byline_forms(byline: str) -> None:
    text = report(HEADLINE, byline, LEAD, PAPERS)
    expect(text, ("byline", byline))


@pytest.mark.parametrize("headline", ["# ICLR 2024 傑出論文、榮譽提名與時間檢驗獎整理", "ICML 2025 获奖论文整理"])
def test_headline_ending_in_a_credit_word_is_not_a_byline(headline: str) -> None:
    assert dropped(report(headline, LEAD, PAPERS)) == []


@pytest.mark.parametrize(
    ("reason", "line"),
    [
        ("share_prompt", "喜欢本文请点赞、在看、分享三连！"),
        ("share_prompt", "欢迎扫码关注「三维视觉前沿」"),
        ("share_prompt", "扫描下方二维码，加入读者交流群"),
        ("share_prompt", "喜歡這篇文章嗎？追蹤我們的粉絲專頁，每週獲得研究生活小技巧。"),
        ("newsletter", "More from our newsletter: subscribe at weekly.example.org"),
        ("copyright", "本站內容版權所有，未經同意請勿轉載。"),
        ("copyright", "本文仅代表作者观点，版权归原作者所有。"),
        ("copyright", "（本文转载请联系本报授权）"),
        ("copyright", "本週報採用 CC BY-NC 4.0 授權，轉載請註明出處。"),
        ("copyright", "The views expressed here are the author's own."),
        ("navigation", "Tags: ICML, test of time, deep learning"),
        ("navigation", "標籤：擴散模型、影像生成"),
        ("navigation", "[Home](/) · [Archive](/archive) · [About](/about)"),
    ],
)
def test_more_footer_forms(reason: str, line: str) -> None:
    text = report(HEADLINE, LEAD, PAPERS, REFERENCE, line)
    expect(text, (reason, line))


def test_short_lines_with_prompt_words_inside_sentences_are_kept() -> None:
    text = report(
        HEADLINE, LEAD,
        "现在看来，这一方法的代价主要在于训练时间。",
        "关键词：安全对齐、知识编辑",
        "The newsletter of the ACL covered the paper last week.",
        PAPERS, REFERENCE,
    )
    assert dropped(text) == []


# --- structure keeps the article's own paragraphs -----------------------------------------------------------

def test_body_of_the_last_markdown_section_is_kept_even_off_topic() -> None:
    # the last paper's paragraph shares no words with the text before it, but it stands right
    # under its own heading: it is the body of that section, not a glued item
    text = report(
        "# NeurIPS 2025 最佳论文揭晓", LEAD, "## 时间检验奖",
        "### Faster R-CNN: Towards Real-Time Object Detection with Region Proposal Networks",
        "2015 年提出的 Faster R-CNN 用区域建议网络取代了手工设计的候选框生成，让两阶段目标检测首次接近实时，此后多年一直是检测任务的基础框架。",
    )
    assert dropped(text) == []


def test_last_paragraph_before_the_page_footer_is_kept() -> None:
    closing = "Together, the two papers make the case that a model's inductive biases matter as much as its size."
    text = report(EN_HEADLINE, EN_LEAD, EN_PAPERS, closing, "Share this article", "© 2025 Example Media. All rights reserved.")
    expect(text, ("share_prompt", "Share this article"), ("copyright", "© 2025 Example Media. All rights reserved."))


def test_poorly_fitting_lead_under_a_headline_is_kept() -> None:
    # the lead fits the papers poorly, and an award header follows it; the headline above it
    # shares the venue with the rest, so the article begins there and nothing is leading junk
    text = report(
        "NeurIPS 2023 names its outstanding papers", "By Priya Raman",
        "The awards committee announced its choices on Monday, and the conference took place in New Orleans in December.",
        "Outstanding Paper", EN_PAPERS.replace("## ", "Paper 1: ", 1),
    )
    expect(text, ("byline", "By Priya Raman"))


# --- invariants -------------------------------------------------------------------------------------------

#: Lines of every kind above, for the property test to shuffle into pages.
_ALL_LINES = sorted({
    line for part in (HEADLINE, LEAD, PAPERS, CLOSING, REFERENCE, WEATHER, STOCKS, HANT_HEADLINE, HANT_LEAD,
                      HANT_PAPERS, EN_HEADLINE, EN_LEAD, EN_PAPERS, EN_REFERENCE, NEWS_HANT, NEWS_EN)
    for line in part.split("\n")
} | {
    "首页 | 新闻 | 科技 | 关于我们", "Home > News > AI", "扫码关注我们", "Share this article", "版权所有，转载请联系授权",
    "© 2025 Example Media. All rights reserved.", "Subscribe to our newsletter", "訂閱電子報", "图1：模型架构示意图",
    "Image credit: the authors", "往期回顾", "▶ ICML 2024 十篇最佳论文一览", "本文转载自机器之心，已获授权。",
    "Originally published at example.com.", "机器之心报道", "By Jane Doe", "责任编辑：王芳", "Home", "News", "About",
    "| 模型 | 参数量 |", "|---|---|", "---", "",
})


@settings(max_examples=300, deadline=None)
@given(
    st.lists(st.sampled_from(_ALL_LINES), max_size=30),
    st.sampled_from(["\n", "\n\n"]),
    st.sampled_from(["", "\n", "  ", "\u3000\u3000"]),
)
def test_spans_are_valid_on_any_page(lines: list[str], sep: str, tail: str) -> None:
    # sorted, non-overlapping, trimmed spans that slice the text exactly, whatever the page
    text = sep.join(lines) + tail
    spans = dropped(text)
    known = {"front_matter", "repost_source", "byline", "editor_credit", "share_prompt", "copyright", "navigation",
             "newsletter", "related_list", "caption", "unrelated_leading", "unrelated_trailing"}
    assert {s["reason"] for s in spans} <= known


def test_a_short_complete_closing_paragraph_of_a_short_article_is_kept() -> None:
    text = (
        "“我们将继续加大投入”——某公司发布2024年财报\n\n"
        "“今年是公司发展的关键一年，”董事长在发布会上说。“我们将继续加大研发投入。”\n\n"
        "“营收增长超出预期”，财务总监表示，全年营收同比增长15%。\n\n"
        "“人工智能是未来的方向”，CTO在会上透露，公司正在研发新一代大模型。\n\n"
        "《财经周刊》评论称，公司前景乐观。《经济日报》也发表文章予以报道。\n"
    )
    assert find_dropped(text, Config()) == []


@settings(max_examples=400, deadline=None)
@given(st.lists(st.sampled_from(
    ["subscribe", "Subscribe", "SUBSCRIBE", "sign up", "Sign  Up", "sign\nup", "unsubscribe", "newsletter",
     "Inbox", "email", "e-mail", "E-Mail", "digest", "weekly", "weeklyx", "订阅", "訂閱", "周报", "郵件", "电子报",
     "本周", " ", "\n", ",", "x", "_", "。", "ſubscribe", "our"]), max_size=10).map("".join))
def test_newsletter_anywhere_finds_what_the_pattern_finds(s: str) -> None:
    from pipeline.clean import _NEWSLETTER_ANYWHERE, _newsletter_anywhere

    assert _newsletter_anywhere(s) == (_NEWSLETTER_ANYWHERE.search(s) is not None)


_PROFILE_PIECES = ["论文", "提出", "模型", "papers", "Model", "the", "studies", "don't", "x-ray", "ab", " ",
                   "\n", "\u3000", "，", "。", "-", "'", "2024", "Ω", "ies"]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(_PROFILE_PIECES), max_size=16).map("".join), st.data())
def test_content_profile_adds_up_at_kept_whitespace(text: str, data) -> None:
    # _drop_unrelated_head subtracts a unit's profile from the rest's at such a split instead of
    # recounting the rest: the split must cut no topic feature, also with dropped spans around it
    from collections import Counter

    from pipeline.clean import _kept_text, _splits_at_space
    from pipeline.textutil import content_profile

    pos = data.draw(st.integers(0, len(text)))
    a = data.draw(st.integers(0, pos))
    b = data.draw(st.integers(pos, len(text)))
    starts = data.draw(st.lists(st.integers(0, len(text)), max_size=3))
    dropped = [{"char_start": s, "char_end": min(len(text), s + data.draw(st.integers(1, 4)))} for s in starts]
    if _splits_at_space(text, pos, dropped):
        whole = content_profile(_kept_text(text, a, b, dropped))
        parts = content_profile(_kept_text(text, a, pos, dropped)) + content_profile(_kept_text(text, pos, b, dropped))
        assert whole == parts and +Counter(whole) == whole


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(["往期推荐", "▼", " ", "】", "【", ")", "）", "]", "_", "x", "²", "Ⅻ", "：", "…", "5", "ab"]),
                max_size=10).map("".join))
def test_core_cuts_the_trailing_run_the_pattern_cuts(s: str) -> None:
    import re

    from pipeline.clean import _core, _undecorated

    assert _core(s) == re.sub(r"[^\w)）\]]+$", "", _undecorated(s)).strip()


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(["论文", "paper", "x-ray", "it's", "3.5", " ", "，", "'", "-", ".", "a", "9"]),
                max_size=20).map("".join), st.integers(0, 60))
def test_a_prefix_holds_no_more_units_than_its_line(s: str, k: int) -> None:
    # _line_kind rules out long lines by the units of their head
    from pipeline.textutil import text_units

    assert text_units(s[:k]) <= text_units(s)


def test_yaml_front_matter_is_dropped() -> None:
    front = "---\ntitle: 'Sparse Codes for Parsing, Best Paper'\ndate: 2024-07-02\ntags: [nlp]\n---"
    text = front + "\n\nPaper: Lee et al., Sparse Codes for Parsing.\n\nThis paper won the award.\n"
    spans = dropped(text)
    assert_valid_spans(text, spans)
    assert reasons(spans) == [("front_matter", front)]
    # a rule line that opens no front matter (no closing line) drops nothing
    assert dropped("---\nSome article text that starts with a rule.\n\nMore text.\n") == []


def test_front_matter_headline_reads_the_title_and_description() -> None:
    front = "---\nlayout: page\ntitle: 'NIPS 2017 Itinerary'\ndescription: Notes\ndate: 2017-12-11\n---"
    assert front_matter_headline(dropped(front + "\n\nText.\n")) == "NIPS 2017 Itinerary\nNotes"
    assert front_matter_headline(dropped("No front matter.\n")) == ""
    excerpt = "---\ntitle: Best Paper Awards\nexcerpt: \"ACL 2024 Best Paper Awards.\"\n---"
    assert front_matter_headline(dropped(excerpt + "\n\nText.\n")) == "Best Paper Awards\nACL 2024 Best Paper Awards."


def test_a_table_of_papers_after_a_short_lead_is_not_glued_news() -> None:
    # h1-zezhishao-dailyarxiv: a project's lead, then a table of arXiv papers with their abstracts
    path = (Path(__file__).parent / "fixtures" / "real" / "dev" / "h1-zezhishao-dailyarxiv"
            / "daily-papers-2025-04-25-time-series.md")
    assert [d["reason"] for d in dropped(path.read_text(encoding="utf-8"))] == []


def test_a_horizontal_rule_is_no_front_matter() -> None:
    # a page that opens with a rule: the text between the rules is the article, not YAML
    text = "---\n## Sparse Codes for Parsing\nAnn Lee, Bo Chen\nhttps://arxiv.org/abs/2401.00001\n---\n\nMore.\n"
    assert [d["reason"] for d in dropped(text)] == []


def test_many_dropped_lines_cost_linear_time() -> None:
    # 20,000 navigation lines: the coverage test is a bisection, not a scan of every span
    text = "本文介绍 NeurIPS 2024 的一篇论文。\n\n" + "".join(f"首页 | 新闻 | 科技 {i}\n\n" for i in range(20000))
    spans = dropped(text)
    assert len(spans) == 20000 and {d["reason"] for d in spans} == {"navigation"}


def test_html_comments_in_markdown_are_dropped() -> None:
    text = ("# Publications\n\n<!-- 1. *Old Entry Not Shown.* <br> Ann Lee\n<br> -->\n\n"
            "1. *Sparse Codes for Widget Parsing.* <br> Bo Chen\n\nAn unclosed note <!-- to the end")
    dropped = find_dropped(text, Config())
    comments = [d["text"] for d in dropped if d["reason"] == "html_comment"]
    assert comments == ["<!-- 1. *Old Entry Not Shown.* <br> Ann Lee\n<br> -->"]  # an unclosed one is text
    prose = "Start a comment with <!-- and the browser hides it.\n\n# Sparse Codes for Widget Parsing\n"
    assert not [d for d in find_dropped(prose, Config()) if d["reason"] == "html_comment"]


def test_llm_chatter_is_dropped_with_its_reason() -> None:
    """A reasoning model's <think> block and the opening sentence of a chat reply pasted into an
    article are llm_chatter; the rest of that line and an article's own "Of course, …" stay."""
    text = ("<think>\nThe user wants a translation. Let me translate it.\n</think>\n"
            "Here is the translation of the article:\n\n"
            "# NeurIPS 2024 Best Paper\n\n"
            "您說得對，關於 NeurIPS 時間考驗獎還有更多值得探討的內容！該獎項已設立多年。\n\n"
            "Alright, let's delve even deeper into the award! Here are the earlier winners.\n\n"
            "Of course, the model has limits that the authors discuss at length.\n")
    chatter = [d["text"] for d in find_dropped(text, Config()) if d["reason"] == "llm_chatter"]
    assert chatter == [
        "<think>\nThe user wants a translation. Let me translate it.\n</think>",
        "Here is the translation of the article:",
        "您說得對，關於 NeurIPS 時間考驗獎還有更多值得探討的內容！",
        "Alright, let's delve even deeper into the award!",
    ]


def test_invitations_to_a_readers_group_are_share_prompts() -> None:
    text = ("# CVPR 2025 最佳论文\n\n论文提出了一种新的三维重建方法，速度很快。\n\n"
            ">>点击进入→具身智能之心技术交流群\n\n"
            "更多干货,欢迎加入国内首个具身智能全栈学习社区具身智能之心知识星球(戳我)这里包含所有你想要的。\n\n"
            "读者论文交流群,请加小编微信号:abc123。等你。\n\n进群交流请备注：论文\n")
    prompts = [d["text"] for d in find_dropped(text, Config()) if d["reason"] == "share_prompt"]
    assert prompts == [">>点击进入→具身智能之心技术交流群",
                       "更多干货,欢迎加入国内首个具身智能全栈学习社区具身智能之心知识星球(戳我)这里包含所有你想要的。",
                       "读者论文交流群,请加小编微信号:abc123。等你。", "进群交流请备注：论文"]


def test_lines_of_images_only_are_captions() -> None:
    badge = "[![sync-badge](https://hackmd.io/abc/badge)](https://hackmd.io/abc)"
    img = '<p align="center"><img src="https://example.org/fig1.png" width="600"></p>'
    text = f"# Notes on a paper\n\n{badge}\n\nThe paper proposes a method.\n\n{img}\n\n![](fig2.png) ![](fig3.png)\n\n<a href=\"https://x.org\">the code</a>\n"
    captions = [d["text"] for d in find_dropped(text, Config()) if d["reason"] == "caption"]
    assert captions == [badge, img, "![](fig2.png) ![](fig3.png)"]


def test_a_last_entry_with_its_credit_line_is_no_unrelated_tail():
    from pipeline.clean import _is_protected

    assert _is_protected("Prta: A System to Support the Analysis of Propaganda Techniques in the News",
                         "Giovanni Da San Martino, Shaden Shaar, Yifan Zhang and Preslav Nakov")
    # a title over prose is no entry
    assert not _is_protected("Prta: A System to Support the Analysis of Propaganda Techniques in the News",
                             "The system was shown at the demo session.")


def test_a_related_lists_section_of_an_awesome_list_is_dropped():
    from pipeline.clean import find_dropped
    from pipeline.config import Config

    text = ("# Key NLP papers\n\n- [Attention Is All You Need](https://arxiv.org/abs/1706.03762)\n\n## 相關列表\n\n"
            "- [awesome-machine-learning](https://github.com/josephmisiti/awesome-machine-learning)\n"
            "- [awesome-llm](https://github.com/Hannibal046/Awesome-LLM)\n")
    spans = [(d["reason"], text[d["char_start"]:d["char_end"]]) for d in find_dropped(text, Config())]
    assert any(reason == "related_list" and "awesome-llm" in kept for reason, kept in spans)
    assert not any("Attention Is All You Need" in kept for _, kept in spans)


def test_think_blocks_nest_and_take_linear_time() -> None:
    """A <think> block ends at the closing tag that balances it; an opener never closed is text,
    and many of them cost one pass (the lazy pattern rescanned the rest of the text at each)."""
    nested = ("# A Paper on Sparse Codes\n\nThe method is simple.\n\n"
              "<think>outer <think>inner</think> still thinking</think>\n\nIt works on three benchmarks.\n")
    chatter = [d["text"] for d in find_dropped(nested, Config()) if d["reason"] == "llm_chatter"]
    assert chatter == ["<think>outer <think>inner</think> still thinking</think>"]
    def unclosed(n: int) -> str:
        return "# A Paper on Sparse Codes\n\n" + "<think> a step of reasoning.\n" * n

    # at these sizes the lazy pattern's rescans outweigh the rest of find_dropped tenfold (ratio 4)
    small, large = (_best_seconds(find_dropped, unclosed(5_000), repeats=3),
                    _best_seconds(find_dropped, unclosed(10_000), repeats=3))
    assert large / small < 3.0, (small, large)  # quadratic: 4 times
    assert not [d for d in find_dropped(unclosed(10_000), Config()) if d["reason"] == "llm_chatter"]


def test_deeply_indented_lines_take_linear_time_and_a_cjk_indent_still_parts_paragraphs() -> None:
    """The CJK-indent test of each line tried every split of a run of spaces before text that is
    not CJK: a list nested 1,000 levels deep (1 MB) took 13 s in find_dropped, 2,000 (4 MB) 122 s."""
    import re

    from pipeline.clean import _CJK_INDENT

    def nested(levels: int) -> str:
        return "## Sparse Codes for Widget Parsing\n\nAnn Lee, Bo Chen\n\n" + "".join(
            "  " * i + "- item\n" for i in range(levels))

    small, large = _best_seconds(find_dropped, nested(400)), _best_seconds(find_dropped, nested(800))
    assert large / small < 6.0, (small, large)  # text 4 times longer; the old pattern: about 8 times
    old = re.compile(r"^(?:[\u3000\t]|[\u3000 ]{2,})[\u3000 \t]*[\u3400-\u9fff]")
    for line in ["\u3000\u3000本文", "  本文", " 本文", "\t本文", " \t本文", "\u3000 \t本文", "    - item", "本文", "   ", ""]:
        assert bool(_CJK_INDENT.match(line)) == bool(old.match(line)), line


def _best_seconds(fn, text: str, repeats: int = 2) -> float:
    """The fastest of ``repeats`` timed calls of ``fn(text, Config())`` in this thread's CPU time
    (a ratio of two such times says how the cost grows; wall time, or the process's CPU time with
    pytest-xdist's threads in it, would say how busy the machine is)."""
    times = []
    for _ in range(repeats):
        start = time.thread_time()
        fn(text, Config())
        times.append(time.thread_time() - start)
    return min(times)


def test_chat_phrases_and_group_words_inside_longer_words_are_text() -> None:
    """A chat phrase ending in a Latin word matches whole words only, and 群体 (a population),
    增加微信… are no invitation to a readers' group."""
    text = ("# 交流群体中的信息传播：基于图神经网络的建模\n\n李四，北京大学\n\n"
            "本文提出一种建模交流群体中信息传播的方法。\n\n论文讨论群体决策中的偏差问题\n\n"
            "该方法显著增加微信小程序场景下的推荐点击率。\n\n"
            "Great questions remain about how these results transfer.\n\n"
            "Great question! The paper answers it in section 3.\n")
    dropped = find_dropped(text, Config())
    assert [(d["reason"], d["text"]) for d in dropped] == [("llm_chatter", "Great question!")]


def test_a_line_of_images_linking_the_paper_is_kept() -> None:
    """A badge or an image linked to the paper's arXiv page, PDF or code holds the paper's
    identifier and links: no caption (the section lost its arXiv id)."""
    arxiv = ("[![arXiv](https://img.shields.io/badge/arXiv-2304.02643-b31b1b.svg)](https://arxiv.org/abs/2304.02643)"
             " [![License](https://img.shields.io/badge/License-Apache-blue.svg)](LICENSE)")
    pdf = '<a href="https://example.org/sparse-codes.pdf"><img src="thumb.png"></a>'
    social = '<a href="https://twitter.com/someone"><img src="follow.png"></a>'
    text = f"# Sparse Codes for Widget Parsing\n\nAnn Lee, MIT\n\n{arxiv}\n\n{pdf}\n\n{social}\n\nWe propose sparse codes.\n"
    captions = [d["text"] for d in find_dropped(text, Config()) if d["reason"] == "caption"]
    assert captions == [social]


def test_a_think_tag_inside_a_sentence_is_text() -> None:
    text = ("# Reasoning models explained\n\nThe model first writes <think>, then reasons for a while, and "
            "finally closes with </think> before answering.\n\n<think>\nLet me summarise.\n</think>\nWe propose a probe.\n")
    chatter = [d["text"] for d in find_dropped(text, Config()) if d["reason"] == "llm_chatter"]
    assert chatter == ["<think>\nLet me summarise.\n</think>"]
    def one_line(n: int) -> str:
        return "# A Paper\n\nText. " + "It writes <think> here. " * n + "\n</think>\n"

    assert not [d for d in find_dropped(one_line(40_000), Config()) if d["reason"] == "llm_chatter"]
    small, large = _best_seconds(find_dropped, one_line(20_000)), _best_seconds(find_dropped, one_line(40_000))
    assert large / small < 3.0, (small, large)


def test_prose_that_opens_like_a_chat_reply_is_kept() -> None:
    """Only a reply's own openings are chatter: an article's "You're right that …", "Here is a
    summary of …", 当然可以说 stay, and so does a long line with no sentence end."""
    for line in ("You're right that scaling laws look different for sparse models.",
                 "Of course, here the router is trained jointly with the experts.",
                 "Here is a summary of the key findings: one, two and three.",
                 "Let me know if you find a counterexample;", "当然可以说，这篇论文是一个突破。",
                 "让我们更深入地看一下它的方法部分。", "好的，以下几点值得注意：",
                 "Alright, let's " + "go on " * 100):
        text = f"# A paper\n\nIntro text here.\n\n{line}\n\nMore body text follows here.\n"
        assert not [d for d in find_dropped(text, Config()) if d["reason"] == "llm_chatter"], line


def test_a_disclaimer_is_a_legal_notice_not_a_paper() -> None:
    """免责声明 / "Disclaimer:" lines are the page's legal notice ("本文提出的观点仅代表作者本人" is
    no report of a paper)."""
    from pipeline.segment import segment_document

    text = "# 大模型新闻\n\n某公司今天发布了新的大模型产品，引发关注。\n\n免责声明：本文提出的观点仅代表作者本人，不代表本站立场。\n"
    dropped = find_dropped(text, Config())
    assert [(d["reason"], d["text"]) for d in dropped] == [("copyright", "免责声明：本文提出的观点仅代表作者本人，不代表本站立场。")]
    assert segment_document(text, dropped)["sections"] == []
    english = "Disclaimer: the views in this post are the author's own."
    assert [d["reason"] for d in find_dropped(f"# News\n\nSome text here.\n\n{english}\n", Config())] == ["copyright"]


def test_a_lead_naming_a_venue_edition_is_not_unrelated() -> None:
    # the lead is the papers' venue context, however few words it shares with the rest
    text = ("Our paper was accepted at ICML 2025.\n\n# Scaling Sparse Autoencoders to Frontier Models\n\n"
            "Authors: Alice Wang, Bob Li\n\nWe train sparse autoencoders on the residual stream of a large language "
            "model and find millions of interpretable features. The method scales to the largest open models and "
            "the features are causally relevant for downstream behaviour, as ablation studies show.\n")
    assert [d["reason"] for d in find_dropped(text, Config())] == []


def test_entries_written_title_break_credit_on_one_line_are_never_unrelated_news() -> None:
    """An accepted-papers page writes each entry "**Title**<br>_A, B and C_" on one line; the
    entries' topics drift apart, but a title with its credit is an entry of the article's list,
    not news glued after it (real page: h19-acl2023-site, which lost 6 of its 8 papers)."""
    path = Path(__file__).parent / "fixtures/real/dev/h19-acl2023-site/industry-track-first8.md"
    text = path.read_text(encoding="utf-8")
    assert [d["reason"] for d in find_dropped(text, Config())] == ["front_matter"]


def test_a_long_run_of_spaces_in_a_line_costs_linear_time() -> None:
    """A menu separator's pattern starts at a whitespace run's first character: a line with a
    run of 20,000 spaces and no separator took seconds (each start in the run scanned the rest)."""
    def line(spaces: int) -> str:
        return "# Widgets\n\nSparse Codes for Widget Parsing" + " " * spaces + "end of the line\n\nWe study widgets.\n"

    small, large = _best_seconds(find_dropped, line(10_000)), _best_seconds(find_dropped, line(40_000))
    assert large / small < 8.0, (small, large)  # 4 times longer; quadratic: 16 times
    from pipeline.clean import _is_nav_line
    assert _is_nav_line("Home | News  |  About", at_edge=True)
    assert not _is_nav_line("Sparse Codes for Widget Parsing" + " " * 100 + "end", at_edge=True)
