"""Segmentation of the layouts beyond the seeds: Markdown and enumerated headings, bilingual
headings, metadata blocks before or after the body, and narrative articles."""

from __future__ import annotations

from pathlib import Path

import pytest

from pipeline.clean import find_dropped
from pipeline.config import Config
from pipeline.heading_titles import split_heading_title
from pipeline.headings import DECORATION_ONLY, LEADING_DECORATION
from pipeline.prose import find_paper_mentions
from pipeline.segment import segment_document

VAR = "Visual Autoregressive Modeling: Scalable Image Generation via Next-Scale Prediction"
STDE = "Stochastic Taylor Derivative Estimator: Efficient amortization for arbitrary differential operators"
SEDD = "Discrete Diffusion Modeling by Estimating the Ratios of the Data Distribution"
TSMC = "Probabilistic Inference in Language Models via Twisted Sequential Monte Carlo"


def titles(text: str) -> list[tuple[str | None, str | None]]:
    result = segment_document(text, find_dropped(text, Config()))
    for s in result["sections"]:
        assert text[s["char_start"] : s["char_end"]].strip() == text[s["char_start"] : s["char_end"]]
    return [split_heading_title(s["heading"]) for s in result["sections"]]


def test_narrative_mentions_in_book_title_marks():
    text = (
        "NeurIPS 2024 最佳论文揭晓\n\n本届大会共评出两篇最佳论文。\n\n"
        f"北京大学与字节跳动共同完成的《{VAR}》（视觉自回归建模），论文一作为田柯宇。该工作提出下一尺度预测。\n\n"
        "实验表明，该方法在 ImageNet 上超越了扩散模型。\n\n"
        f"另一篇获奖论文是新加坡国立大学的《{STDE}》，作者提出了随机泰勒导数估计器。\n"
    )
    assert titles(text) == [(VAR, "视觉自回归建模"), (STDE, None)]


def test_book_title_of_a_policy_is_not_a_paper():
    assert find_paper_mentions("9月4日，工业和信息化部印发《电子信息制造业稳增长行动方案》。") == []
    assert find_paper_mentions("他推荐了小说《三体》，称其启发了研究。") == []
    assert [t for _, t in find_paper_mentions("团队的论文《大模型微调的学习动态》获得杰出论文奖。")] == ["《大模型微调的学习动态》"]


def test_metadata_blocks_before_the_body():
    text = (
        "ICLR 2025 杰出论文速览\n\n"
        "论文标题：Learning Dynamics of LLM Finetuning\n作者：Yi Ren, Danica J. Sutherland\n"
        "论文地址：https://arxiv.org/abs/2407.10490\n\n本文研究了大模型微调过程中的学习动态。\n\n"
        "论文标题：Safety Alignment Should Be Made More Than Just a Few Tokens Deep\n作者：Xiangyu Qi 等\n"
        "论文地址：https://arxiv.org/abs/2406.05946\n\n本文指出现有安全对齐只影响前几个 token。\n"
    )
    assert titles(text) == [
        ("Learning Dynamics of LLM Finetuning", None),
        ("Safety Alignment Should Be Made More Than Just a Few Tokens Deep", None),
    ]


def test_metadata_blocks_after_the_body():
    text = (
        "NeurIPS 2024 論文速讀\n\n"
        "這篇論文研究了視覺自回歸建模，將影像生成重新定義為下一尺度預測，效果超越擴散模型。\n\n"
        f"📄 {VAR}\n👥 Tian, Jiang, Yuan\n🔗 arxiv.org/abs/2404.02905\n\n"
        "這篇論文提出用較差版本的自身模型引導擴散模型，改善了無分類器引導的缺點。\n\n"
        "📄 Guiding a Diffusion Model with a Bad Version of Itself\n👥 Karras, Aittala\n🔗 arxiv.org/abs/2406.02507\n"
    )
    result = segment_document(text, [])
    sections = result["sections"]
    assert len(sections) == 2
    assert sections[0]["text"].startswith("這篇論文研究了") and sections[0]["text"].endswith("2404.02905")
    assert sections[1]["text"].startswith("這篇論文提出") and sections[1]["text"].endswith("2406.02507")
    assert [c["kind"] for c in result["context"]] == ["headline"]


def test_translated_digest_items_take_the_original_title_of_papers_only():
    # a daily digest: a translated headline per item, then "原文: <original headline>" and the
    # item's metadata; an item whose original link is an arXiv page is a paper, a news item is not
    item = (
        "### {n}. {zh}\n原文: {en}\n\n- **来源**: {src}\n- **发布时间**: Mon, 27 Apr\n"
        "- **综合评分**: 6.1/10\n- **原文链接**: {url}\n- **内容摘要**: {summary}\n\n---\n\n"
    )
    text = "# AI 新闻日报 - 2026-04-26\n\n---\n\n" + "".join([
        item.format(n=1, zh="某公司发布新模型的三个原因", en="Three reasons why the new model matters",
                    src="Tech Review", url="https://example.com/2026/04/why-it-matters/",
                    summary="周五，某公司发布了新旗舰模型的预览。"),
        item.format(n=2, zh="通过世界行动模型加强策略学习", en="Enhancing Policy Learning with World-Action Models",
                    src="arXiv AI", url="https://arxiv.org/abs/2604.01234",
                    summary="arXiv:2604.01234v1 公告类型：新\n摘要：本文提出了世界行动模型，它联合推理未来的视觉观察和驱动状态转换的动作。与仅通过图像预测训练的传统世界模型不同..."),
        item.format(n=3, zh="多智能体大模型用于贝叶斯优化中的自适应采集",
                    en="Multi-Agent LLMs for Adaptive Acquisition in Bayesian Optimization",
                    src="arXiv Machine Learning", url="https://arxiv.org/abs/2604.05678",
                    summary="arXiv:2604.05678v1 公告类型：新\n摘要：探索与利用的权衡是顺序决策和黑盒优化的核心，但大型语言模型如何推理和管理这种权衡仍然知之甚少..."),
    ])
    sections = segment_document(text, [])["sections"]
    assert [split_heading_title(s["heading"])[0] for s in sections] == [
        "Enhancing Policy Learning with World-Action Models",
        "Multi-Agent LLMs for Adaptive Acquisition in Bayesian Optimization",
    ]
    assert "https://arxiv.org/abs/2604.01234" in sections[0]["text"]


NOTES_BODY = (
    "這篇論文提出了一種新的注意力機制，完全取代了循環神經網路，並在翻譯任務上取得了最佳結果。\n\n"
    "## 動機\n\n循環神經網路難以並行，訓練速度很慢，這是當時序列模型的主要瓶頸。\n\n"
    "## 方法\n\n模型由編碼器和解碼器組成，每層都使用多頭自注意力與前饋網路。\n"
)


def test_chinese_notes_headed_by_an_english_title_are_about_that_paper():
    # a first "# Title" in English over Chinese notes: that paper's section, beside a paper the
    # notes cite with its link
    text = (
        "# Attention Is All You Need\n\n" + NOTES_BODY
        + "\n## 回顧\n\n- [Convolutional Sequence to Sequence Learning](https://arxiv.org/abs/1705.03122)\n"
    )
    assert titles(text) == [("Attention Is All You Need", None), ("Convolutional Sequence to Sequence Learning", None)]
    # the front matter's title (a reading label before it removed) when no line names the paper
    text = '---\ntitle: "論文筆記 - Attention Is All You Need"\ndate: 2019-10-20\n---\n\n' + NOTES_BODY
    assert titles(text) == [("Attention Is All You Need", None)]
    # ... and the page is that one paper's: its headings are its parts, not the end of its section
    (section,) = segment_document(text, find_dropped(text, Config()))["sections"]
    assert section["text"].endswith("每層都使用多頭自注意力與前饋網路。")
    # a Chinese headline is not an English title: the notes name no paper
    assert titles("# 注意力就是你所需要的\n\n" + NOTES_BODY) == []


def test_markdown_headings_with_numbers_and_subheadings():
    text = (
        "# ICML 2024 best papers\n\nSome notes from the conference in Vienna.\n\n"
        f"## 1. {SEDD}\n\n**Authors:** Aaron Lou, Chenlin Meng, Stefano Ermon\n\nBody text.\n\n"
        "### Why It Matters For Practitioners\n\nMore text.\n\n"
        f"## 2. {TSMC}\n\narXiv: 2404.17546\n\nBody.\n"
    )
    assert titles(text) == [(SEDD, None), (TSMC, None)]


def test_enumerated_bilingual_headings_under_an_award_header():
    text = (
        "最佳论文奖\n\n"
        "一、扩散模型为何不记忆（Why Diffusion Models Don't Memorize: The Role of Implicit Dynamical "
        "Regularization in Training）\n\n论文地址：https://arxiv.org/abs/2505.17638\n这篇论文研究了扩散模型的泛化。\n\n"
        "二、门控注意力（Gated Attention for Large Language Models: Non-linearity, Sparsity, and "
        "Attention-Sink-Free）\n\n论文地址：https://arxiv.org/abs/2505.06708\n本文提出门控注意力。\n"
    )
    result = segment_document(text, [])
    assert [split_heading_title(s["heading"])[1] for s in result["sections"]] == ["扩散模型为何不记忆", "门控注意力"]
    assert {s["ctx_award_raw"] for s in result["sections"]} == {"最佳论文奖"}


def test_chinese_subheadings_without_evidence_are_not_papers():
    # the sub-headings are the parts of one explainer; the explainer ("作者提出", a paper) is
    # one untitled section
    text = (
        "一篇论文的深度解读\n\n一、研究背景\n\n大模型训练成本高昂，研究者一直在寻找新方法。\n\n"
        "二、核心方法\n\n作者提出了一种新的训练目标。\n\n三、实验结果\n\n在多个基准上取得提升。\n"
    )
    assert titles(text) == [(None, None)]
    # without the voice of a report on one paper, the same page gives no section
    assert titles(text.replace("作者提出了", "可以设计")) == []


def test_page_reporting_one_paper_without_its_title_is_one_untitled_section():
    abstract = ("Recent text-to-image models still make mistakes. In this paper we enrich the feedback "
                "signal by marking implausible regions.\n\nWe collect feedback on 18K images.\n")
    assert titles("CVPR 2024\n\n" + abstract) == [(None, None)]
    # a byline and a word for papers are no report of one
    assert titles("作者：许雅婷\n\n许多论文在反驳阶段扭转了结果。\n") == []
    # a link to the paper's page gives the section its title
    linked = abstract + f"\n- [{SEDD}](https://openreview.net/forum?id=abc)\n"
    assert titles(linked) == [(SEDD, None)]


def test_bold_line_headings():
    text = (
        "Two papers we liked.\n\n"
        f"**{SEDD}**\n\narXiv: 2310.16834\n\nA loss for discrete diffusion.\n\n"
        f"**{TSMC}**\n\narXiv: 2404.17546\n\nSMC for language models.\n"
    )
    assert titles(text) == [(SEDD, None), (TSMC, None)]


def test_sentences_do_not_split_inside_brackets_or_quotes():
    from pipeline.fields import split_sentences

    text = "共同完成的《Are Models a Mirage?》（涌现能力是幻觉吗？）获奖。第二句！Another \"Why Hard?\" here. End"
    parts = split_sentences(text)
    assert "".join(parts) == text
    assert parts == ["共同完成的《Are Models a Mirage?》（涌现能力是幻觉吗？）获奖。", "第二句！",
                     "Another \"Why Hard?\" here.", " End"]


def test_english_narrative_with_quoted_titles_and_a_headline():
    text = (
        "What ACL 2024's best papers say about the limits of language models\n\n"
        "The ACL 2024 best paper awards went to several papers.\n\n"
        "In \"Mission: Impossible Language Models\", Julie Kallini and colleagues built synthetic languages.\n\n"
        "Another winner, \"Why are Sensitive Functions Hard for Transformers?\" by Michael Hahn, gives a theory.\n"
    )
    assert titles(text) == [("Mission: Impossible Language Models", None),
                            ("Why are Sensitive Functions Hard for Transformers?", None)]


def test_two_mentions_in_one_paragraph_are_two_sections():
    text = (
        "NeurIPS 2023 杰出论文揭晓\n\n"
        "斯坦福大学团队共同完成的《Are Emergent Abilities of Large Language Models a Mirage?》"
        "（大语言模型的涌现能力是海市蜃楼吗？）获得杰出论文奖。同期获奖的还有 Google 研究者合作的"
        "《Privacy Auditing with One (1) Training Run》（一次训练完成隐私审计）。该研究只需一次训练。\n"
    )
    result = segment_document(text, [])
    assert [split_heading_title(s["heading"]) for s in result["sections"]] == [
        ("Are Emergent Abilities of Large Language Models a Mirage?", "大语言模型的涌现能力是海市蜃楼吗？"),
        ("Privacy Auditing with One (1) Training Run", "一次训练完成隐私审计"),
    ]
    first, second = result["sections"]
    assert first["char_end"] <= second["char_start"]
    assert text[second["char_start"] :].startswith("同期获奖的还有")


def test_a_heading_naming_venue_and_year_is_not_a_paper():
    text = (
        "Two NeurIPS 2023 runners-up worth your time\n\nNeurIPS 2023 named two runners-up for its paper award.\n\n"
        "Scaling Data-Constrained Language Models\n\nMuennighoff and colleagues trained hundreds of models.\n\n"
        "Direct Preference Optimization: Your Language Model is Secretly a Reward Model\n\nRafailov et al. show...\n"
    )
    assert [t for t, _ in titles(text)] == [
        "Scaling Data-Constrained Language Models",
        "Direct Preference Optimization: Your Language Model is Secretly a Reward Model",
    ]


def test_headings_of_an_article_not_about_papers_are_not_papers():
    recipe = (
        "# Weeknight Dinners\n\n## 1. Lemon Garlic Roast Chicken\n\nRoast for an hour.\n\n"
        "## 2. Spicy Peanut Noodle Bowl\n\nBoil the noodles.\n\n**Frequently Asked Kitchen Questions**\n\nNone yet.\n"
    )
    assert titles(recipe) == []


# --- headings that open with a headline decoration -------------------------------------------

MIRAGE = "Are Emergent Abilities of Large Language Models a Mirage?"
QLORA = "QLoRA: Efficient Finetuning of Quantized LLMs"
DECORATED_LEAD = "NeurIPS 2023 获奖论文速览\n\nNeurIPS 2023 公布了今年的获奖论文，下面逐一介绍。\n\n"
MIRAGE_META = (
    "作者：Rylan Schaeffer, Brando Miranda, Sanmi Koyejo\n\n论文地址：https://arxiv.org/abs/2304.15004\n\n"
    "论文摘要：本文认为大模型的涌现能力可能是评价指标选择带来的假象。\n\n"
)
QLORA_META = (
    "作者：Tim Dettmers, Artidoro Pagnoni, Ari Holtzman, Luke Zettlemoyer\n\n"
    "论文地址：https://arxiv.org/abs/2305.14314\n\n论文摘要：本文提出 QLoRA，在单张显卡上微调 65B 参数模型。\n"
)


def _decorated_doc(first: str, second: str) -> str:
    return f"{DECORATED_LEAD}{first}\n\n{MIRAGE_META}{second}\n\n{QLORA_META}"


@pytest.mark.parametrize(
    ("first", "second"),
    [
        (f"**【深度解析】{MIRAGE}**", f"**【深度解析】{QLORA}**"),  # every paper decorated, bold
        (f"## [论文精读] {MIRAGE}", f"## {QLORA}（深度解读）"),  # before the first, after the second
        (f"## 一文读懂：{MIRAGE}", f"## {QLORA} 深度解析"),
        (f"### {MIRAGE}", f"### 【深度解析】{QLORA}"),  # a later paper: not merged into the one before
        (f"### 深度解析 | {MIRAGE}", f"### {QLORA} | 全文翻译"),
        (f"1. 【深度解析】{MIRAGE}", f"2. 【深度解析】{QLORA}"),
    ],
)
def test_a_heading_that_opens_with_a_decoration_is_a_paper(first: str, second: str) -> None:
    text = _decorated_doc(first, second)
    result = segment_document(text, [])
    sections = result["sections"]
    assert [s["heading"] for s in sections] == [first, second]
    assert [split_heading_title(s["heading"])[0] for s in sections] == [MIRAGE, QLORA]
    assert sections[0]["text"] == f"{first}\n\n{MIRAGE_META}".strip()
    assert sections[1]["text"] == f"{second}\n\n{QLORA_META}".strip()
    assert [(c["kind"], text[c["char_start"] : c["char_end"]]) for c in result["context"]] == [
        ("headline", "NeurIPS 2023 获奖论文速览"),
        ("lead", "NeurIPS 2023 公布了今年的获奖论文，下面逐一介绍。"),
    ]


def test_leading_decoration_takes_only_a_short_chinese_label_before_an_english_title() -> None:
    assert LEADING_DECORATION.match(f"【深度解析】{QLORA}").group("title") == QLORA
    assert LEADING_DECORATION.match(f"[论文精读] {QLORA}").group("title") == QLORA
    assert LEADING_DECORATION.match(f"一文读懂：{QLORA}").group("title") == QLORA
    assert LEADING_DECORATION.match(f"深度解析 | {QLORA}").group("title") == QLORA
    assert LEADING_DECORATION.match(f"論文筆記 - {QLORA}").group("title") == QLORA  # a spaced ASCII dash
    for text in ("【往期回顾】", f"論文筆記-{QLORA}", "【深度解析】基于分数的扩散模型中的泛化理论", "【导读】研究背景",
                 f"这是一段很长的中文导语文字：{QLORA}", f"论文 1：{QLORA}"):
        assert LEADING_DECORATION.match(text) is None, text
    assert DECORATION_ONLY.match("【往期回顾】") and DECORATION_ONLY.match("[导读]")
    assert not DECORATION_ONLY.match("【导读】研究背景")


def test_a_label_alone_or_before_a_chinese_subheading_is_not_a_paper() -> None:
    text = (
        "# ICML 2025 杰出论文一览\n\n## 【导读】\n\nICML 2025 于 7 月在温哥华举行，今年共评出杰出论文奖 6 篇。\n\n"
        f"## 【深度解析】{MIRAGE}\n\n{MIRAGE_META}"
        "## 【背景】为什么涌现能力值得怀疑\n\n以往工作用准确率等不连续指标衡量大模型。\n\n"
        "### 【方法】换用连续指标\n\n作者换用连续指标重新评估。\n\n"
        f"## 【深度解析】{QLORA}\n\n{QLORA_META}\n"
        "## 【深度解析】基于分数的扩散模型中的泛化理论\n\n- 作者：王五、赵六\n- 论文：arxiv.org/abs/2502.13228v2\n"
    )
    result = segment_document(text, [])
    sections = result["sections"]
    assert [s["heading"] for s in sections] == [
        f"## 【深度解析】{MIRAGE}", f"## 【深度解析】{QLORA}", "## 【深度解析】基于分数的扩散模型中的泛化理论",
    ]
    # the explainer's labelled sub-headings stay inside their paper's section
    assert "## 【背景】为什么涌现能力值得怀疑" in sections[0]["text"]
    assert sections[0]["text"].endswith("作者换用连续指标重新评估。")
    # the label alone is part of the lead
    assert [(c["kind"], text[c["char_start"] : c["char_end"]]) for c in result["context"]] == [
        ("headline", "# ICML 2025 杰出论文一览"),
        ("lead", "## 【导读】"),
        ("lead", "ICML 2025 于 7 月在温哥华举行，今年共评出杰出论文奖 6 篇。"),
    ]


def test_labels_alone_after_the_papers_are_not_papers() -> None:
    text = (
        "NeurIPS 2023 论文速览\n\n"
        f"## {MIRAGE}\n\n{MIRAGE_META}## {QLORA}\n\n{QLORA_META}\n## 【往期回顾】\n\n上期我们介绍了 ICLR 的获奖论文。\n"
    )
    sections = segment_document(text, [])["sections"]
    assert [split_heading_title(s["heading"]) for s in sections] == [(MIRAGE, None), (QLORA, None)]


def test_an_explainer_that_never_writes_its_papers_title_is_one_section():
    """A page on one paper that names it by no heading is one section when it speaks of the
    paper's authors or work, or links one PDF; conference news with the word "papers" is none."""
    en = ("Notes on a new model\n\nThe model reads a few photos.\n\n"
          "In this work the authors train a transformer on 3D data.\n\nIt is fast.\n")
    pdf = "https://example.org/data/MODEL_CVPR25.pdf\n模型只看一堆照片。\n\n方法对比\n\n1.传统方法\n\n先收集照片。\n"
    news = "Conference news\n\nThe conference received 10,000 papers this year.\n\nRegistration opens in May.\n"
    # links to several PDFs are a list of papers, not one paper's page
    pdfs = ("Our lab had a good year. Here are the papers we published:\n\n"
            + "".join(f"- https://lab.example.org/pubs/{n}.pdf\n" for n in ("sparse", "graphs", "rl"))
            + "\nCongratulations to all students!\n")
    assert [len(segment_document(t, [])["sections"]) for t in (en, pdf, news, pdfs)] == [1, 1, 0, 0]


def test_reading_list_takes_the_one_venue_edition_its_proceedings_links_name():
    from pipeline.segment import segment_document

    items = [("Meta-Learning with Warped Gradient Descent", "https://iclr.cc/virtual_2020/poster_a.html"),
             ("Your Classifier Is Secretly an Energy Based Model", "https://iclr.cc/virtual_2020/poster_b.html"),
             ("On Mutual Information Maximization for Representation Learning", "https://arxiv.org/pdf/1907.13625.pdf"),
             ("Unbiased Contrastive Divergence Estimation", "https://openreview.net/pdf?id=r1eyceSYPr"),
             ("Deformable Kernels for Receptive Fields", "https://openreview.net/pdf?id=SkxSv6VFvS")]
    text = "".join(f"+ {t} {u}\n" for t, u in items)
    result = segment_document(text, find_dropped(text, Config()))
    assert len(result["sections"]) == 5
    assert (result["doc_venue"], result["doc_year"]) == ("ICLR", 2020)
    # one paper's proceedings link names that paper's venue only
    one = text.replace("https://iclr.cc/virtual_2020/poster_b.html", "https://github.com/x/y")
    assert segment_document(one, find_dropped(one, Config()))["doc_venue"] is None


def test_award_lead_sentence_heads_the_papers_after_it():
    from pipeline.segment import segment_document

    text = (
        "NeurIPS 2024 最佳论文出炉\n\n一共有两篇论文获得最佳论文奖:\n\n"
        "由北京大学完成的《Visual Autoregressive Modeling: Scalable Image Generation via Next-Scale Prediction》,论文一作为田柯宇。\n\n"
        "此外,还有一篇论文获得了最佳论文亚军(Best Paper Runner-up):\n\n"
        "由英伟达完成的《Guiding a Diffusion Model with a Bad Version of Itself》,论文一作为 Tero Karras。\n"
    )
    sections = segment_document(text, find_dropped(text, Config()))["sections"]
    assert [s["ctx_award_raw"] for s in sections] == ["一共有两篇论文获得最佳论文奖:",
                                                       "此外,还有一篇论文获得了最佳论文亚军(Best Paper Runner-up):"]
    # the runner-up sentence is no part of the paper above it
    assert "亚军" not in sections[0]["text"]


def test_linked_entries_with_note_lines_are_the_papers_not_their_notes():
    entries = [("Multi2WOZ: A Robust Multilingual Dataset and Conversational Pretraining for Task-Oriented Dialog",
                "use multilingual model as pre-trained starting point"),
               ("Learning Dialogue Representations from Consecutive Utterances", None),
               ("Fast and Light-Weight Answer Text Retrieval in Dialogue Systems",
                "Comparison of the small retrieval models that can be used in production"),
               ("Lightweight Transformers for Conversational AI", "Description of the pre-training procedure"),
               ("Database Search Results Disambiguation for Task-Oriented Dialog Systems",
                "How process multiple returned results from Database"),
               ("KETOD: Knowledge-Enriched Task-Oriented Dialogue", "Based on knowledge generate chit-chat text in TOD")]
    text = "### Notes from the conference\n"
    for n, (title, note) in enumerate(entries):
        text += f"[{title}](https://aclanthology.org/2022.naacl-main.{n + 10}/)\n"
        if note:
            text += f"- {note}\n"
    assert [t for t, _ in titles(text)] == [t for t, _ in entries]


def test_parts_per_venue_take_their_heading_venue_not_the_documents():
    from pipeline.segment import segment_document

    text = (
        "# CoRL\n- 2024 best paper, PoliFormer: Scaling On-Policy RL with Transformers Results in Masterful Navigators, "
        "[arXiv](https://arxiv.org/abs/2406.20083)\n\n"
        "# RSS\n- 2023 best paper, Time Optimal Ergodic Search for Robot Exploration, "
        "[arXiv](https://arxiv.org/abs/2301.00001)\n\n"
        "# ICRA\n- 2024 best paper, Goal Masked Diffusion Policies for Unified Navigation, "
        "[arXiv](https://arxiv.org/abs/2310.07896)\n\n"
        "# Graphics\n- 2024 SIGGRAPH Best Paper, Repulsive Shells for Thin Surface Modeling, "
        "[arXiv](https://arxiv.org/abs/2401.00002)\n"
    )
    sections = segment_document(text, find_dropped(text, Config()))["sections"]
    assert [s["ctx_venue"] for s in sections] == ["CoRL", "RSS", "ICRA", ""]
    # topic headings beside one venue headline are no venue parts
    topics = "# CVPR 2023 papers\n\n# Backbone\n- [Stitchable Neural Networks for Model Deployment](https://arxiv.org/abs/2302.06586)\n"
    topics += "- [Hard Patches Mining for Masked Image Modeling](https://arxiv.org/abs/2304.05919)\n"
    assert {s["ctx_venue"] for s in segment_document(topics, find_dropped(topics, Config()))["sections"]} == {None}


def test_award_header_with_a_track_after_a_dash():
    from pipeline.line_kinds import _is_award_header

    assert _is_award_header("Honorable Mention Papers – Main Conference")
    assert _is_award_header("Honorable Mention Paper – Theme")
    assert not _is_award_header("Outstanding Paper – a great new model for everyone")
    assert not _is_award_header("Honorable Mention: how we chose the papers this year.")


def test_untitled_metadata_blocks_are_one_section_each():
    from pipeline.segment import segment_document

    text = (
        "Here are the results.\n"
        "Author: Liwei Jiang, Yuanjun Chai, Margaret Lee\n"
        "paper: https://arxiv.org/abs/2510.22954, neurips submission\n"
        "Code: https://github.com/liweijiang/artificial-hivemind\n"
        "what was done? The authors introduce a dataset of open-ended questions.\n\n"
        "Author: Zihan Qiu, Zekun Wang, Bo Zheng\n"
        "paper: https://arxiv.org/abs/2505.06708, neurips submission\n"
        "what was done? The authors introduce gated attention.\n"
    )
    sections = segment_document(text, find_dropped(text, Config()))["sections"]
    assert [s["heading"] for s in sections] == ["", ""]
    assert "2510.22954" in sections[0]["text"] and "2505.06708" in sections[1]["text"]
    # one block is the page's one paper (an arXiv link), not a list of blocks
    one = text.split("\n\n")[0]
    assert len(segment_document(one, find_dropped(one, Config()))["sections"]) == 1


def test_lead_naming_two_venue_editions_gives_the_papers_the_documents_venue():
    from pipeline.segment import segment_document

    text = (
        "NeurIPS 2025 Best Papers in Comics\n\nlast week NeurIPS 2025 Best Paper Awards announced,\n\n"
        "as i did with ICML 2025 Excellent Papers I ran my review system on the papers.\n\n"
        "Author: Liwei Jiang, Yuanjun Chai, Margaret Lee\npaper: https://arxiv.org/abs/2510.22954\n\n"
        "what was done? A dataset.\n\n"
        "Author: Zihan Qiu, Zekun Wang, Bo Zheng\npaper: https://arxiv.org/abs/2505.06708\n\nwhat was done? A gate.\n"
    )
    result = segment_document(text, find_dropped(text, Config()))
    assert [s["ctx_venue"] for s in result["sections"]] == [None, None]
    assert result["doc_venue"] == "NeurIPS"


def test_award_headers_between_list_items_do_not_end_their_run():
    text = (
        "**Entropic Paper Award**: Paper with a big surprise (I really can't believe it!)\n\n"
        "* Arno Blaas, Xavier Suau. [Challenges of Adversarial Image Augmentations](https://openreview.net/forum?id=Zu)\n\n"
        "**Didactic Paper Award**: Paper that does a great job at explaining the problem.\n\n"
        "* Cian Eastwood, Ian Mason. [Unit-level surprise in neural networks](https://openreview.net/forum?id=N5)\n\n"
        "**Best Poster Award**: Poster with exceptional research quality and aesthetic appeal.\n\n"
        "* Wouter Kool, Chris J. Maddison, Andriy Mnih. [Unbiased Gradient Estimation with Balanced Assignments "
        "for Mixtures of Experts](https://openreview.net/forum?id=Hv)\n\n"
        "**Most Innovative Poster Award**: Just check it out :)\n\n"
        "* Benjamin Bloem-Reddy, Ann Other. [Beauty in Machine Learning: Fluency and Leaps](https://openreview.net/forum?id=t_)\n"
    )
    assert [t for t, _ in titles(text)] == ["Challenges of Adversarial Image Augmentations", "Unit-level surprise in neural networks",
                                            "Unbiased Gradient Estimation with Balanced Assignments for Mixtures of Experts",
                                            "Beauty in Machine Learning: Fluency and Leaps"]


def test_sub_headings_of_a_one_paper_explainer_are_its_parts():
    from pathlib import Path

    # a real reading note: the paper's title, then its modules as bold leads and sub-headings
    path = Path(__file__).parent / "fixtures/real/dev/h15-ntust-sims-blog/ntust-hdr-eccv2022-review.md"
    text = path.read_text(encoding="utf-8")
    assert [t for t, _ in titles(text)] == ["3D Interacting Hand Pose Estimation by Hand De-occlusion and Removal"]


def test_a_journal_in_book_title_marks_with_its_english_gloss_is_no_paper():
    from pipeline.prose import find_paper_mentions

    assert find_paper_mentions("梁文鋒擔任通訊作者的研究論文，近日榮登國際權威期刊《自然（Nature）》封面。") == []
    mention = "北京大学完成的论文《视觉自回归建模：可扩展的图像生成（VAR）》获奖。"
    assert [m for _, m in find_paper_mentions(mention)] == ["《视觉自回归建模：可扩展的图像生成（VAR）》"]


def test_a_one_paper_page_gives_its_paper_the_award_its_opening_names():
    from pipeline.segment import segment_document

    text = ("This repository is a reference implementation of Learning Dynamics of LLM Finetuning "
            "(ICLR 2025 Oral, Outstanding Paper Award).\n\nIn this paper we study how training examples influence "
            "each other during finetuning.\n")
    sections = segment_document(text, find_dropped(text, Config()))["sections"]
    assert len(sections) == 1 and sections[0]["lead_award_raw"] == "Outstanding Paper Award"
    nominated = text.replace("Outstanding Paper Award", "Outstanding Paper Award finalist")
    assert segment_document(nominated, find_dropped(nominated, Config()))["sections"][0]["lead_award_raw"] is None


def test_a_heading_laid_out_like_its_kept_siblings_is_a_title():
    from pathlib import Path

    # a real accepted-papers list: "## N. Title" then "**Track:**", "**Authors:**", ... lines
    path = Path(__file__).parent / "fixtures/real/dev/h4-euisuk-vlm-paper-search/2025-aaai-formatted.md"
    found = [t for t, _ in titles(path.read_text(encoding="utf-8"))]
    assert "Adversarial Fairness Network" in found and "Track" not in found


def test_a_sibling_heading_with_one_more_labelled_line_is_a_title_too():
    from pathlib import Path

    # a real reading log: "### 501. Title" / "**arXiv**: TBD | **ICML 2024**" where its kept
    # siblings write "**ICML 2024**" alone, then "**Key Points**:"
    path = Path(__file__).parent / "fixtures/real/dev/h16-timothywangdev-ai-research/batch-012-icml-2024-diffusion-rl.md"
    found = [t for t, _ in titles(path.read_text(encoding="utf-8"))]
    assert "Diffusion Model-Augmented Behavioral Cloning" in found and "Neural Diffusion Models" in found
    assert "Key Points" not in found


def test_a_one_paper_page_takes_the_venue_edition_its_opening_names():
    from pipeline.segment import segment_document

    text = ('[NeurIPS 2024 Best Paper Award][GPT beats diffusion] Official impl. of "Visual Autoregressive Modeling: '
            'Scalable Image Generation via Next-Scale Prediction"\n\nIn this paper we propose next-scale prediction.\n')
    result = segment_document(text, find_dropped(text, Config()))
    assert len(result["sections"]) == 1
    assert (result["doc_venue"], result["doc_year"]) == ("NeurIPS", 2024)


def test_a_bare_reference_label_ends_the_last_paper_unless_the_page_has_one():
    from pipeline.segment import segment_document

    papers = ("## Sparse Codes for Widget Parsing\n\n来自甲乙大学的研究。\n\n"
              "## Dense Codes for Widget Parsing\n\n来自丙丁大学的研究。\n\n")
    refs = "参考链接：  \n[1]https://arxiv.org/abs/1312.6114  \n[2]https://x.com/a/status/1\n"
    result = segment_document(papers + refs, find_dropped(papers + refs, Config()))
    assert len(result["sections"]) == 2 and "1312.6114" not in result["sections"][-1]["text"]
    # a real one-paper page: its references list under "**參考資料：**" holds the paper's link
    from pathlib import Path

    one = (Path(__file__).parent / "fixtures/real/dev/h3-zhhant-repos/sjenwork-timeline-gpt3-2020.md").read_text(encoding="utf-8")
    result = segment_document(one, find_dropped(one, Config()))
    assert len(result["sections"]) == 1 and "2005.14165" in result["sections"][0]["text"]


def test_a_label_over_a_list_of_bare_links_is_no_part_of_the_last_paper():
    from pipeline.segment import segment_document

    text = ("## 两篇最佳论文\n\n**1、《Sparse Codes for Widget Parsing》**\n\n本文由甲乙大学完成。\n\n"
            "**2、《Dense Codes for Widget Parsing》**\n\n本文由丙丁大学完成。\n\n"
            "最佳论文链接（按文章顺序）：\n[1]https://arxiv.org/pdf/2404.02905\n[2]https://arxiv.org/abs/2412.00088\n")
    sections = segment_document(text, find_dropped(text, Config()))["sections"]
    assert len(sections) == 2 and "2404.02905" not in sections[-1]["text"]



def test_a_venue_heading_with_two_digits_and_a_journal_issue_line_give_the_year():
    from pipeline.segment import segment_document

    text = ("#### CVPR 24\n\nRLHF:\n\n\tSparse Codes for Widget Parsing with Hierarchical Priors\n\n"
            "\tDense Codes for Widget Parsing with Learned Attention\n\n\tNeural Widget Sorting at Scale with Few Labels\n")
    sections = segment_document(text, find_dropped(text, Config()))["sections"]
    assert sections and {(s["ctx_venue"], s["ctx_year"]) for s in sections} == {("CVPR", 2024)}
    # a real journal contents page: "ACM Transactions on Graphics (TOG): Vol. 43, No. 4. 2024"
    from pathlib import Path

    page = (Path(__file__).parent / "fixtures/real/dev/h16-pages-siggraph/siggraph-tog-43-4-vector-graphics.txt").read_text(encoding="utf-8")
    result = segment_document(page, find_dropped(page, Config()))
    assert (result["doc_venue"], result["doc_year"]) == ("TOG", 2024)


def test_a_paper_named_in_the_lead_and_later_under_its_own_heading_is_one_section():
    from pathlib import Path

    # a real roundup: "一篇是**Rich Human Feedback …**，…" in the lead, then "## 最佳论文" /
    # "**Rich Human Feedback …**" with the paper's own text
    path = Path(__file__).parent / "fixtures/real/dev/h16-weixin-topic-reader/qbitai-cvpr2024-best-papers.md"
    text = path.read_text(encoding="utf-8")
    sections = segment_document(text, find_dropped(text, Config()))["sections"]
    rich = [s for s in sections if "Rich Human Feedback" in s["heading"]]
    assert len(rich) == 1 and rich[0]["ctx_award_raw"] == "## 最佳论文"


@pytest.mark.parametrize(("first", "second"), [
    ("Sparse Mixtures of Widgets", "Sparse Mixtures of Widgets: Scaling Up Widget Models"),
    ("Sparse Mixtures of Widgets: Scaling Up Widget Models", "Sparse Mixtures of Widgets"),
])
def test_two_papers_whose_titles_contain_one_another_are_two_sections(first, second):
    # each under its own heading with its own credit: the later (or the earlier) was lost with
    # its text merged into the other's section, and no note
    page = (f"# Best Papers\n\n## Graph Learning Under Noise\n\nPat Kay, Quin Loe\n\nWe study graphs.\n\n"
            f"## {first}\n\nRay Moe, Sue Noe\n\nText about the first.\n\n"
            f"## {second}\n\nTom Oh, Uma Pi\n\nText about the second.\n")
    sections = segment_document(page, find_dropped(page, Config()))["sections"]
    assert [s["heading"] for s in sections] == ["## Graph Learning Under Noise", f"## {first}", f"## {second}"]
    assert "Tom Oh" in sections[2]["text"] and "Tom Oh" not in sections[1]["text"]
    # a title restated right under its heading, the credit below both, is one paper
    restated = page.replace(f"## {first}\n\nRay Moe", f"## {first}\n\n**{second}**\n\nRay Moe")
    restated = restated.replace(f"\n\n## {second}\n\nTom Oh, Uma Pi\n\nText about the second.", "")
    sections = segment_document(restated, find_dropped(restated, Config()))["sections"]
    assert [s["heading"] for s in sections] == ["## Graph Learning Under Noise", f"## {first}"]


def test_papers_named_in_the_lead_of_a_page_of_thousands_of_headings_are_sections_only_under_them():
    """segment._drop_restated_mentions on a generated roundup: two of 3,000 bold headings are
    named first in lead lines ("一篇是**Title**"); every heading is one section under the award
    header, and the lead lines anchor none (each title looks up its substrings of the headings'
    lengths instead of being tested against every heading)."""
    import random

    words = "deep neural learning graph attention transformer model robust efficient scalable vision".split()
    rng = random.Random(7)
    titles = [f"{' '.join(rng.choices(words, k=6)).title()} Q{i}" for i in range(3000)]
    text = "\n\n".join([
        "# CVPR 2024 最佳论文新鲜出炉", "CVPR 2024**最佳论文奖** 新鲜出炉！",
        f"一篇是**{titles[0]}**\n，受大模型中的技术启发，团队改进了模型。",
        f"另一篇**{titles[1500]}**\n更偏理论一些，提出了一种方法。",
        "## 最佳论文", *(f"**{t}**\n\nAlice Smith, Bob Jones" for t in titles)])
    sections = segment_document(text, [])["sections"]
    assert [s["heading"] for s in sections] == [f"**{t}**" for t in titles]
    assert {s["ctx_award_raw"] for s in sections} == {"## 最佳论文"}


def test_an_item_of_a_numbered_run_of_kept_titles_is_a_title_too():
    from pathlib import Path

    # a real roundup: "**1、An image speaks a thousand words, but can everyone listen? …**"
    # scores low alone, but "**2、…**" to "**5、…**" are kept titles
    path = Path(__file__).parent / "fixtures/real/dev/h16-weixin-topic-reader/qbitai-emnlp2024-best-papers.md"
    found = [t for t, _ in titles(path.read_text(encoding="utf-8"))]
    assert any(t and t.startswith("An image speaks a thousand words") for t in found)
    assert not any(t and "报名" in t for t in found)


def test_bold_titles_in_quotes_outweigh_one_unmarked_line_kept_as_a_title():
    from pathlib import Path

    from pipeline.prose import find_paper_mentions

    assert find_paper_mentions("论文题为“**Sparse Codes for Widget Parsing with Priors** ”，是甲乙团队的工作。") == [
        (0, "“**Sparse Codes for Widget Parsing with Priors** ”")]
    # a real roundup whose papers are all named in quotes inside its prose; one sentence of it
    # ("作者采用了Geoffrey Hinton、… 2012年提出的**AlexNet**") scores as a title alone
    path = Path(__file__).parent / "fixtures/real/dev/h16-weixin-topic-reader/qbitai-icml2024-test-of-time-best-papers.md"
    found = [t for t, _ in titles(path.read_text(encoding="utf-8"))]
    assert "DeCAF: A Deep Convolutional Activation Feature for Generic Visual Recognition" in found
    assert not any(t and "AlexNet" in t for t in found)


def test_a_heading_right_above_a_list_of_papers_names_a_group_not_a_paper():
    from pathlib import Path

    # a real awesome list: "#### RAG and LLM" / "[2024] [Title](arxiv)" …
    path = Path(__file__).parent / "fixtures/real/dev/h16-evan-wyl-robotlearning/llm.md"
    found = [t for t, _ in titles(path.read_text(encoding="utf-8"))]
    assert "RAG and LLM" not in found and "LLM-Based Agent" not in found
    assert "KnowAgent: Knowledge-Augmented Planning for LLM-Based Agents" in found


@pytest.mark.parametrize(("paragraph", "names"), [
    ('Seven papers accepted at <a href="https://neurips.cc/">NeurIPS 2024</a>: '
     '<a href="https://arxiv.org/abs/2407.10964">`FUNGI`</a>, <a href="https://arxiv.org/abs/2312.06386">`ManiPose`</a>'
     ' and <a href="https://diffcut-segmentation.github.io/">`DiffCut`</a>.', ["FUNGI", "ManiPose", "DiffCut"]),
    ("我们有2篇论文被 CVPR 2025 接收：[PerReg](https://a.example/perreg)、[FUTURIST](https://a.example/futurist)。",
     ["PerReg", "FUTURIST"]),
    # links that name a link's kind, or a sentence that announces nothing, name no paper
    ("Our paper was accepted at NeurIPS: [code](https://a.example/c), [project page](https://a.example/p).", []),
    ("Useful links: [PyTorch](https://pytorch.org), [JAX](https://jax.dev).", []),
])
def test_linked_names_after_an_announcement_of_accepted_papers_are_papers(paragraph: str, names: list[str]) -> None:
    mentions = find_paper_mentions(paragraph)
    assert [name for _, name in mentions] == names
    if names:  # each section starts at its link: the announcement (venue, year) is the sections' context
        assert mentions[0][0] == paragraph.index("<a href=\"https://arxiv" if "<a" in paragraph else "[PerReg]")


@pytest.mark.parametrize("n", [100, 3000])
def test_every_item_of_a_long_run_of_numbered_paper_headings_is_a_paper(n: int) -> None:
    # the classifier's score drifts with the position along a long uniform list; the numbering
    # says what every item is
    text = "# 论文合集\n\n" + "\n".join(f"论文 {i}：Scaling Study Number {i}" for i in range(1, n + 1))
    out = segment_document(text, [])
    assert [s["heading"] for s in out["sections"]][:: n // 4] == [
        f"论文 {i}：Scaling Study Number {i}" for i in range(1, n + 1, n // 4)]
    assert len(out["sections"]) == n


def test_announced_papers_under_headings_are_the_papers_and_the_headings_their_context() -> None:
    # the headings are no paper (nor do they take the first link's arXiv id)
    text = ("# Lab News\n\n## January 2025\n\nTwo papers accepted at ICLR 2025: [Alpha Beta Gamma Model]"
            "(https://arxiv.org/abs/2501.00001) and [Delta Epsilon Method](https://arxiv.org/abs/2501.00002).\n\n"
            "## February 2025\n\nThree papers accepted at CVPR 2025: [Zeta Eta](https://arxiv.org/abs/2502.00001), "
            "[Theta Iota](https://arxiv.org/abs/2502.00002) and [Kappa Lambda](https://arxiv.org/abs/2502.00003).\n")
    out = segment_document(text, find_dropped(text, Config()))
    assert [(s["heading"], s["ctx_venue"], s["ctx_year"]) for s in out["sections"]] == [
        ("Alpha Beta Gamma Model", "ICLR", 2025), ("Delta Epsilon Method", "ICLR", 2025),
        ("Zeta Eta", "CVPR", 2025), ("Theta Iota", "CVPR", 2025), ("Kappa Lambda", "CVPR", 2025)]


def test_news_sentences_that_each_announce_one_linked_paper_are_the_papers() -> None:
    text = ("# Lab News\n\n"
            "Our paper [Scaling Sparse Attention for Long Video](https://arxiv.org/abs/2501.01234) was accepted "
            "at ICLR 2025.\n\n"
            "我们的论文[面向长视频理解的稀疏注意力扩展](https://arxiv.org/abs/2502.04567)被 ICML 2025 录用。\n\n"
            "Our paper was accepted at [NeurIPS 2025](https://neurips.cc/).\n\n"
            "We welcome two new PhD students.\n")
    out = segment_document(text, find_dropped(text, Config()))
    assert [s["heading"] for s in out["sections"]] == [
        "Scaling Sparse Attention for Long Video", "面向长视频理解的稀疏注意力扩展"]


def test_a_long_numbered_list_past_999_keeps_every_item_and_strips_every_number() -> None:
    text = "# Accepted papers\n\n" + "\n".join(f"{i}. Learning Method Number {i} for Graphs" for i in range(1, 1201))
    out = segment_document(text, [])
    assert len(out["sections"]) == 1200
    assert split_heading_title(out["sections"][1099]["heading"])[0] == "Learning Method Number 1100 for Graphs"


def test_a_heading_that_opens_with_a_venue_label_is_the_papers_title() -> None:
    text = ("# CVPR 2024 Best Paper: Generative Image Dynamics\n\n"
            "Authors: Zhengqi Li, Richard Tucker, Noah Snavely, Aleksander Holynski\n\n"
            "The paper models an image-space prior on scene motion.\n")
    (sec,) = segment_document(text, find_dropped(text, Config()))["sections"]
    assert split_heading_title(sec["heading"])[0] == "Generative Image Dynamics"


@pytest.mark.parametrize("marker", ["[2]", "【2】", "2.", "(2)"])
def test_a_headings_item_number_is_no_part_of_its_title(marker: str) -> None:
    text = "".join(f"#### {marker.replace('2', str(k))} Hybrid Mesh Avatars for Rendering Number {k}\n\n"
                   f"- Authors: Ann Lee, Bo Chen\n- arXiv: [arXiv:2404.1902{k}](https://arxiv.org/abs/2404.1902{k})\n\n"
                   for k in (1, 2, 3))
    out = segment_document(text, find_dropped(text, Config()))
    assert [split_heading_title(s["heading"])[0] for s in out["sections"]] == [
        f"Hybrid Mesh Avatars for Rendering Number {k}" for k in (1, 2, 3)]


def test_a_list_under_an_award_header_is_all_papers_once_two_of_its_items_are() -> None:
    from pathlib import Path

    # a real conference note: lists of tutorials and of topic numbers around the award's list
    # keep a whole-document run from deciding; the award header says what its own list holds
    path = Path(__file__).parent / "fixtures/real/dev/h20-levintsky-icml22/ICML22.md"
    text = path.read_text(encoding="utf-8")
    listed = text.split("## Outstanding Paper Award\n", 1)[1].split("\n\n", 1)[0].splitlines()
    found = {t for t, _ in titles(text)}
    assert len(listed) == 9 and {item.removeprefix("- ") for item in listed} <= found


def test_comment_lines_of_a_code_block_are_no_headings() -> None:
    text = ("# Token Merging for Efficient Vision Transformers\n\n"
            "Official code for our CVPR 2025 paper by Mo Ni and Pat Qu.\n\n## Installation\n\n"
            "```bash\n# Create the Conda Environment\nconda create -n tome python=3.10\n"
            "# Install Pytorch With Cuda Support\npip install torch\n```\n\n## Usage\n\n"
            "~~~python\n# Load The Pretrained Vision Transformer\nmodel = load('vit_b')\n~~~\n")
    out = segment_document(text, find_dropped(text, Config()))
    assert [split_heading_title(s["heading"])[0] for s in out["sections"]] == [
        "Token Merging for Efficient Vision Transformers"]


@pytest.mark.parametrize("tail", [" (Oral)", " [Spotlight]", "（Poster）", " (oral presentation)"])
def test_a_presentation_format_after_a_title_is_no_part_of_it(tail: str) -> None:
    text = f"## Learning Sparse Graph Structure from Noisy Data{tail}\n\nAuthors: Ivy Qi, Kay Sun\n\nWe learn graphs.\n"
    (sec,) = segment_document(text, find_dropped(text, Config()))["sections"]
    assert split_heading_title(sec["heading"])[0] == "Learning Sparse Graph Structure from Noisy Data"


def test_a_venue_tag_opening_a_list_item_is_its_context_not_its_title() -> None:
    text = ("# Awesome Efficient LLM\n\n## 2025\n\n"
            "- **[ICML 2025]** Scaling Laws for Sparse Mixture-of-Experts. [[paper](https://arxiv.org/abs/2501.10001)] "
            "[[code](https://github.com/a/moe)]\n"
            "- **[CVPR 2025]** Token Merging for Efficient Transformers. [[paper](https://arxiv.org/abs/2501.10002)]\n"
            "- `NeurIPS 2024` [Learning Sparse Graph Structure from Noisy Data](https://arxiv.org/abs/2410.11111)\n")
    found = [split_heading_title(s["heading"])[0].rstrip(".") for s in segment_document(text, find_dropped(text, Config()))["sections"]]
    assert found == ["Scaling Laws for Sparse Mixture-of-Experts", "Token Merging for Efficient Transformers",
                     "Learning Sparse Graph Structure from Noisy Data"]


def test_html_headings_in_a_markdown_file_anchor_and_the_line_under_them_is_their_credit() -> None:
    """A site's Markdown page written as HTML cards ("<h3>Title</h3>", then the institutions and
    a "Paper Link" on the next lines): each ``<h3>`` is a paper, and neither the institutions nor
    the link's name is one (real page: h22-grandai-weekly)."""
    path = Path(__file__).parent / "fixtures/real/dev/h22-grandai-weekly/week16-research-highlights.md"
    text = path.read_text(encoding="utf-8")
    sections = segment_document(text, find_dropped(text, Config()))["sections"]
    found = [split_heading_title(s["heading"])[0] for s in sections]
    assert "GUI-R1: Reinforcement Learning Framework for GUI Agents" in found
    assert "SocioVerse: Large-Scale Social Simulation with LLM Agents" in found
    assert not any(t and ("Paper Link" in t or t.startswith(("Anonymous", "Fudan University"))) for t in found)


def test_headings_that_name_a_venue_edition_beside_their_titles_are_papers() -> None:
    """Conference notes: "## ICLR2025 Hu: belief state transformer {#…}", a heading per poster,
    lower-case titles the classifier scores low; two or more headings naming a venue edition
    beside their titles are a paper list, as list items that do are (real notes:
    h21-jemoka-iclr25-posters)."""
    path = Path(__file__).parent / "fixtures/real/dev/h21-jemoka-iclr25-posters/KBhiclr2025_thursday_morning_posters.md"
    found = [t for t, _ in titles(path.read_text(encoding="utf-8"))]
    assert found[:3] == ["belief state transformer", "diversity of thoughts", "data selection via optimal control"]
    assert len(found) == 9


def test_list_items_that_end_in_a_reading_label_are_papers() -> None:
    """A blog's index of its guides: "- [Title導讀](2025/x_guide.md) - summary", Chinese or
    mixed titles the classifier scores low; two or more items ending in a reading label
    (data/reading_labels.txt) are a paper list (real index: h15-woodycatliu-guides)."""
    path = Path(__file__).parent / "fixtures/real/dev/h15-woodycatliu-guides/woodycatliu-guides-index-zhhant.md"
    found = titles(path.read_text(encoding="utf-8"))
    assert len(found) == 15
    assert found[:2] == [(None, "Provence: RAG 系統的高效上下文剪枝技術"),
                         (None, "AgentGym-RL: 透過多輪強化學習訓練 LLM 代理以實現長期決策")]


def test_a_year_heading_dates_the_papers_under_it() -> None:
    """A timeline of landmark papers under "## 2017", "## 2018" headings (real page:
    h22-grandai-weekly): each paper's year is its heading's."""
    path = Path(__file__).parent / "fixtures/real/dev/h22-grandai-weekly/landmark-papers-llms-2017-2021.html"
    from pipeline.formats import extract_html

    text = extract_html(path.read_text(encoding="utf-8")).text
    sections = segment_document(text, find_dropped(text, Config()))["sections"]
    years = {split_heading_title(s["heading"])[0]: s["ctx_year"] for s in sections}
    assert years["Attention Is All You Need"] == 2017
    assert years["Improving Language Understanding by Generative Pre-Training"] == 2018
    assert years["Language Models are Few-Shot Learners"] == 2020


def test_a_year_heading_outside_the_years_a_paper_may_have_dates_nothing() -> None:
    """"## 2099" (a typo, a roadmap) is no year of the papers under it: years are checked as a
    record's are (1950 .. next year); "## 2019" in the same page still dates its papers."""
    items = "\n".join(f"- Sparse Codes for Widgets Part {k}. Ana Lima, Bo Chen." for k in range(3))
    more = "\n".join(f"- Dense Gadgets for Learning Part {k}. Carla Diaz, Dan Wu." for k in range(3))
    text = f"# Landmark papers\n\n## 2099\n\n{items}\n\n## 2019\n\n{more}\n"
    sections = segment_document(text, find_dropped(text, Config()))["sections"]
    years = {s["heading"].split(".")[0].lstrip("- "): s.get("ctx_year") for s in sections}
    assert years["Sparse Codes for Widgets Part 1"] is None
    assert years["Dense Gadgets for Learning Part 1"] == 2019


def test_a_heading_inside_a_fenced_code_block_sets_no_context() -> None:
    """A tutorial's code block showing a Markdown page ("## 2017" inside ```) is code, not the
    document's headings: it dates nothing below it."""
    items = "\n".join(f"- Sparse Codes for Widgets Part {k}. Ana Lima, Bo Chen." for k in range(3))
    text = f"# Tutorial\n\nThe page looks like this:\n\n```markdown\n## 2017\n```\n\n{items}\n"
    sections = segment_document(text, find_dropped(text, Config()))["sections"]
    assert len(sections) == 3
    assert {s.get("ctx_year") for s in sections} == {None}


def test_a_line_listing_venues_names_none_of_them_the_documents() -> None:
    """"CV三大顶会：CVPR、ECCV、ICCV" opening a pre-conference note (real note:
    h17-liuzengyun-2022summer) lists venues; it gave every talk below the venue CVPR."""
    path = Path(__file__).parent / "fixtures/real/dev/h17-liuzengyun-2022summer/eccv2022-china-preconference-note.md"
    text = path.read_text(encoding="utf-8")
    result = segment_document(text, find_dropped(text, Config()))
    assert (result["doc_venue"], result["doc_year"]) == (None, None)
    assert len(result["sections"]) >= 6


def test_rows_of_a_table_with_a_paper_column_are_papers_unless_they_summarise_papers_above() -> None:
    """A reading list's table "| # | 论文 | Notebook |" with short Chinese titles the classifier
    scores low (layout of a Chinese translation of a reading list, fresh set 12): every row is a
    paper. A summary table of the papers already headed above ("| KLong | …" after "### 1. KLong:
    Training …") adds none (layout of h18-amysheng-daily-papers)."""
    table = ("## 论文列表\n\n| # | 论文 | Notebook | 核心概念 |\n| - | --- | --- | --- |\n"
             "| 1 | 复杂性动力学第一定律 (The First Law of Complexodynamics) | ✅`01.ipynb` | 熵、复杂性增长 |\n"
             "| 2 | RNN 的惊人有效性 | ✅`02.ipynb` | 字符级模型 |\n"
             "| 3 | 理解 LSTM 网络 | ✅`03.ipynb` | 门控、长期记忆 |\n")
    assert len(titles(table)) == 3
    path = Path(__file__).parent / "fixtures/real/dev/h18-amysheng-daily-papers/daily-paper-2026-02-20.md"
    assert len(titles(path.read_text(encoding="utf-8"))) == 6


def test_a_titled_table_is_a_summary_when_a_row_begins_a_title_anchored_above_in_linear_time():
    """segment._begins_any: a row's title beginning a title anchored outside the table (the
    summary's short name, "KLong" for "KLong: ..."); a binary search per row, so a page of
    thousands of headings above thousands of rows takes milliseconds (probe4: every pair was tried,
    16 million startswith calls for 4,000 of each)."""
    import time
    from types import SimpleNamespace

    from pipeline.segment import _begins_any

    def rows(*titles):
        return [SimpleNamespace(title=t) for t in titles]

    named = ["klong: training long-horizon agents", "attention is all you need"]
    assert _begins_any(rows("Other Paper", "KLong"), named)
    assert _begins_any(rows("Attention Is All You Need"), named)
    assert not _begins_any(rows("KLongest", "Attention Is All You Need Too"), named)
    assert not _begins_any(rows("KLong"), [])
    many = rows(*(f"Row Title {i:05d}" for i in range(20000)))
    heads = [f"heading title {i:05d}" for i in range(20000)]
    started = time.thread_time()  # this thread's CPU time: other work on the machine does not count
    assert not _begins_any(many, heads)
    assert time.thread_time() - started < 1.0


def test_bold_title_blocks_laid_out_alike_are_all_papers() -> None:
    """A digest of fifteen blocks "**Title**" / "**@reader 推荐**" / tag / blurb (h25-paperweekly):
    the classifier keeps nine titles; the six short ones between them share the layout and are
    papers too; the promotion footer's bold lines after the last kept title are not."""
    path = (Path(__file__).parent / "fixtures" / "real" / "dev" / "h25-paperweekly-csdn-zhhans"
            / "paperdaily-72-fifteen-papers.md")
    text = path.read_text(encoding="utf-8")
    result = segment_document(text, find_dropped(text, Config()))
    headings = [s["heading"].strip("*") for s in result["sections"]]
    assert len(headings) == 15
    assert {"Spiking Deep Residual Network", "Hierarchical Neural Story Generation",
            "Global Encoding for Abstractive Summarization"} <= set(headings)
    assert not any("推荐" in h or "好礼" in h for h in headings)


def test_records_of_a_yaml_list_with_folded_values_are_one_paper_each_with_their_award() -> None:
    """A YAML list of award records (h18-clemense, papers.yml.txt) whose long author lists fold
    onto deeper-indented lines: the folds are no titles, each "- award:" item is one section, and
    the award written before the title is the paper's."""
    from pipeline.extract import extract_fields

    path = Path(__file__).parent / "fixtures" / "real" / "dev" / "h18-clemense-ai-bestpapers" / "papers.yml.txt"
    text = path.read_text(encoding="utf-8")
    sections = segment_document(text, find_dropped(text, Config()))["sections"]
    assert len(sections) == 9
    assert all(s["heading"].lstrip().startswith("- award:") for s in sections)
    rows = {(f := extract_fields({**s, "doc_venue": None, "doc_year": None}, "zh-Hans", Config()))["title"]: f
            for s in sections}
    climsim = rows["ClimSim: A large multi-scale dataset for hybrid physics-ML climate emulation"]
    assert climsim["award"] == "best_paper"
    assert (climsim["authors"][0], climsim["authors"][-1], len(climsim["authors"])) == (
        "Sungduk Yu", "Mike Pritchard", 56)
    assert rows["Direct Preference Optimization: Your Language Model is Secretly a Reward Model"]["award"] == \
        "best_paper_runner_up"


@pytest.mark.parametrize(("first", "second", "joined"), [
    ('2021: "On the Merits of Using Angled Fiber Tips in Office-based Laser', 'Surgery of the Vocal Folds" by Ann,', True),
    ("获奖论文《基于注意力的跨模态", "检索方法》由张三完成", True),
    ("The paper “Learning to Rank Without", "Labels” won the award.", True),
    ('He said "yes" and left the room', "quietly after the talk.", False),
    ('A 3.5" drive holds the data and', '"quoted" words follow here.', False),
    ('Use a 12" board for the frame', 'and a 3" screw for the hinge.', False),
    ("Run at 5'30\" per mile", "then at 6'10\" per mile.", False),
    ('The paper "Scaling GPT-4', 'Models in 2024" won the award.', True),
])
def test_a_quotation_a_hard_wrap_split_is_one_line(first: str, second: str, joined: bool) -> None:
    """A title quoted in prose that a hard wrap split over two lines is one line: its halves
    were taken for two titles; balanced quotes on each line join nothing, nor do inch marks
    (one on each of two lines read as a quotation split over them)."""
    from pipeline.segment import kept_lines

    text = f"{first}\n{second}\n"
    lines = kept_lines(text, [])
    assert len(lines) == (1 if joined else 2)
    if joined:
        assert lines[0].text == f"{first} {second}"


def test_a_label_marked_alike_in_every_block_is_no_title() -> None:
    """An awards page (h24-ieeevis) whose blocks are "**Title**" / "by A, B" / "**Session**: …":
    "Session", marked alike in 25 blocks, is each block's label, not a paper between two others."""
    path = Path(__file__).parent / "fixtures" / "real" / "dev" / "h24-ieeevis-awards" / "best-paper-awards.md"
    text = path.read_text(encoding="utf-8")
    headings = [s["heading"] for s in segment_document(text, find_dropped(text, Config()))["sections"]]
    assert not any("Session" in h for h in headings)
    assert '**"They Aren\'t Built For Me": An Exploratory Study of Strategies for Measurement of Graphical ' \
           'Primitives in Tactile Graphics**<br />' in headings


def test_a_long_folded_value_is_joined_in_linear_time() -> None:
    """A "- key: value" item followed by thousands of deeper-indented lines (a list item's
    indented body) is one line, joined in time linear in its lines: each line rebuilt and rescanned
    the whole joined line, 16,000 lines took 8 s."""
    import time

    from pipeline.segment import kept_lines

    def folded(n: int) -> str:
        return "- author: Ann Lee\n" + "".join(f"    and more words of the value number {i}\n" for i in range(n))

    def seconds(n: int) -> float:
        times = []
        for _ in range(2):
            start = time.thread_time()
            kept_lines(folded(n), [])
            times.append(time.thread_time() - start)
        return min(times)

    (line,) = kept_lines(folded(3), [])
    assert line.text == ("- author: Ann Lee     and more words of the value number 0     and more words of the value "
                         "number 1     and more words of the value number 2")
    small, large = seconds(4_000), seconds(16_000)
    assert large / small < 8.0, (small, large)  # quadratic: 16 times


@pytest.mark.parametrize("nested", ["* A nested star item", "+ A nested plus item", "3. A nested numbered item",
                                    "> A quoted note", "| a | table row |"])
def test_a_nested_markdown_block_under_a_key_item_is_no_folded_value(nested: str) -> None:
    """A Markdown list item "- Authors: …" with a nested list, a quotation or a table indented
    under it: each nested line is a line of its own, not a fold of the authors' value; a plain
    deeper-indented line still is one."""
    from pipeline.segment import kept_lines

    text = f"- Authors: Ann Lee, Bo Wu\n    {nested}\n"
    assert [line.text for line in kept_lines(text, [])] == ["- Authors: Ann Lee, Bo Wu", f"    {nested}"]
    assert [line.text for line in kept_lines("- Authors: Ann Lee, Bo Wu\n    Carl Diaz\n", [])] == [
        "- Authors: Ann Lee, Bo Wu     Carl Diaz"]


def test_a_title_written_three_times_alone_on_its_line_is_no_label() -> None:
    """A digest that names a paper in bold three times (its heading, then twice more alone on a
    line) keeps the paper: only a text marked alike before a colon ("**Session**: …") in three
    blocks or more is a label. The rule took the paper for a label and its section was lost."""
    body = ("This paper proposes a method that improves accuracy on standard benchmarks by a wide "
            "margin, with fewer parameters and less training time than prior work.")
    titles = ["Sparse Mixture Models for Long Context Reasoning", "Diffusion Policies Learn Robot Grasping",
              "Graph Transformers at Scale"]
    text = "# Digest\n\n" + "".join(f"**{t}**\n\nAuthors: Ann Lee, Bo Wu\n\n{body}\n\n" for t in titles)
    text += f"**{titles[0]}** was also discussed on a podcast.\n\n**{titles[0]}**\n\n**{titles[0]}**\n"
    headings = [s["heading"] for s in segment_document(text, find_dropped(text, Config()))["sections"]]
    assert set(headings) == {f"**{t}**" for t in titles}


def test_nothing_in_a_fenced_code_block_is_joined() -> None:
    """A YAML example or a quoted string in a code block stays as written, one line a line (its
    folds and open quotes were joined, and a block became a paper "Not A Paper In Code …")."""
    from pipeline.segment import kept_lines

    text = ('Setup:\n\n```yaml\n- title: Not A Paper In Code\n    folded value\nmsg = "open\nclose"\n```\n\n'
            '- title: A Real Record\n    folded value\n')
    assert [ln.stripped for ln in kept_lines(text, [])] == [
        "Setup:", "```yaml", "- title: Not A Paper In Code", "folded value", 'msg = "open', 'close"', "```",
        "- title: A Real Record     folded value"]


def test_headings_with_a_venue_tag_before_and_link_groups_after_the_title() -> None:
    """A reading list of "### [VENUE YEAR] Title [[PDF]](url)" headings, each with an italic
    credit line: one section per heading, the title without the tag and the links."""
    text = ("# Reading list\n\n## Spiking networks\n\n"
            "### [NeurIPS 2022] Online training through time for spiking neural networks [[PDF]](https://arxiv.org/abs/2210.04195)\n"
            "_Mingqing Xiao, Qingyan Meng, Zhouchen Lin_\n\n"
            "### [Nature Communications 2024] Spike-based dynamic computing with asynchronous chips [[PDF]](https://example.org/a) [code]\n"
            "_Man Yao, Ole Richter, Guoqi Li_\n")
    assert titles(text) == [("Online training through time for spiking neural networks", None),
                            ("Spike-based dynamic computing with asynchronous chips", None)]


def test_list_items_with_a_venue_and_a_bracketed_note_after_the_title() -> None:
    """"- Title. VENUE YEAR [note]": the venue and the note are no part of the title, with or
    without a space after the period."""
    text = ("### POI\n\n"
            "- Modeling Spatio-temporal Neighbourhood for Personalized Recommendation. IJCAI 2022 [融入知识图谱和时域信息]\n\n"
            "- Next Point-of-Interest Recommendation with Inferring Future Preferences.IJCAI 2022 [考虑用户未来偏好]\n\n"
            "- Enhancing Sequential Recommendation with Graph Contrastive Learning. IJCAI 2022\n")
    assert titles(text) == [("Modeling Spatio-temporal Neighbourhood for Personalized Recommendation", None),
                            ("Next Point-of-Interest Recommendation with Inferring Future Preferences", None),
                            ("Enhancing Sequential Recommendation with Graph Contrastive Learning", None)]


def test_a_digest_entrys_summary_and_abstract_toggle_stay_in_its_section() -> None:
    """A weekly digest: "## Title", a one-line summary quote, a credit, a link and a collapsed
    "<details><summary>Abstract</summary>" per paper: one section per heading."""
    entry = ("## {t}\n\n![](https://img.shields.io/badge/decoding-F08080) ![](https://img.shields.io/badge/LLM-FF8C00)\n\n> 针对{zh}问题，提出一种新方法，提升效率与质量\n\n**Authors:** Ann Lee, Bo Chen | **Date:** 2026-03-26\n\n"
             "**Link:** [http://arxiv.org/abs/2603.2{n}702v1](http://arxiv.org/abs/2603.2{n}702v1)\n\n"
             "<details><summary>Abstract</summary>\n\nWe study {t} and show that it helps a lot.\n\n</details>\n\n---\n\n")
    papers = ["Sparse Widgets for Fast Decoding of Diffusion Models", "Green Adaptive Inference for Accessible Agents",
              "Group-Shared Low-Rank Approximation for Quantized Models", "Head Sensitivity Scores for Sparse Attention",
              "Online Rollout Pruning for Faster Reinforcement Learning", "Rank Consistent Token Reduction for Agents",
              "Mixture of Experts Routing via Reinforcement Learning", "A Data-Driven Framework for Pipeline Training",
              "Variable Length Token Scheduling for Medical Volumes", "Layer-Wise Sensitivity Aware Quantization"]
    text = "# 2026-03-27\n\n---\n\n" + "".join(entry.format(t=t, zh="推理速度" * (k + 1), n=k) for k, t in enumerate(papers))
    assert titles(text) == [(t, None) for t in papers]


def test_reference_items_with_a_glued_year_and_a_full_width_colon() -> None:
    """"1. 2011-Title: …" and "1. CVPR2015-Title：Subtitle": the glued year (and venue) is no part
    of the title, and a full-width colon between Latin words is the title's own colon."""
    text = ("## 基于深度相机的重建\n\n1. 2011-KinectFusion: Real-Time Dense Surface Mapping and Tracking\n\n"
            "2. CVPR2015-DynamicFusion：Reconstruction and Tracking of Non-rigid Scenes in Real-Time\n\n"
            "3. 2015-ElasticFusion：Dense SLAM without A Pose Graph\n")
    assert [t for t, _ in titles(text)] == ["KinectFusion: Real-Time Dense Surface Mapping and Tracking",
                                            "DynamicFusion：Reconstruction and Tracking of Non-rigid Scenes in Real-Time",
                                            "ElasticFusion：Dense SLAM without A Pose Graph"]


def test_lines_of_a_hard_wrapped_paragraph_and_tex_math_are_no_titles() -> None:
    """A paper page whose abstract is hard-wrapped at 80 columns (real: h15-guangtou-ai-info), and
    formula lines: the wrapped lines (a line continued by a lower-case word under it) and TeX
    math anchor no section; the page stays one paper under its heading."""
    page = Path(__file__).parent / "fixtures/real/dev/h15-guangtou-ai-info/guangtou-uwm-summary.md"
    text = page.read_text(encoding="utf-8")
    title = "Unified World Models: Coupling Video and Action Diffusion for Pretraining on Large Robotic Datasets"
    assert titles(text) == [(title, None)]
    math = "\n\n$$P=\\sqrt{\\frac{X}{S}}A^{\\top}\\left(A\\frac{X}{S}A^{\\top}\\right)^{-1}$$\n"
    assert titles(text + math) == [(title, None)]


def test_list_items_lose_a_link_to_their_notes_and_a_glued_short_name() -> None:
    text = ("## NLU\n\n- [2019 ACL] COMET: Commonsense Transformers for Knowledge Graph Construction [summary](/paper/COMET.md)\n"
            "- [2018 ICLR] Universal Transformers(UT) [summary](/paper/UT.md)\n"
            "- [2017 ACL] Generating Natural Answers by Copying and Retrieving [notes](/paper/GNA.md)\n")
    assert [t for t, _ in titles(text)] == ["COMET: Commonsense Transformers for Knowledge Graph Construction",
                                            "Universal Transformers",
                                            "Generating Natural Answers by Copying and Retrieving"]


def test_a_quoted_title_in_a_sentence_saying_a_submission_was_accepted() -> None:
    sentence = ('Our demo/poster submission "Accelerating Patient Cohort Screening for Clinical Trials using Language '
                'Model Prompting" has been accepted by the 9th IEEE/ACM International Conference on Connected Health.')
    assert [m for _, m in find_paper_mentions(sentence)] == [
        '"Accelerating Patient Cohort Screening for Clinical Trials using Language Model Prompting"']
    # a quotation in a sentence with no word about a paper is no mention
    assert find_paper_mentions('The motto "Accelerating Patient Cohort Screening for Everyone" hangs in the hall.') == []


def test_a_table_row_of_one_filled_cell_is_a_group_label_not_a_paper() -> None:
    rows = "".join(f"|  **{2019 - k}** | [{t}](https://example.org/{k}) | Ann Lee, University of Alberta |\n"
                   for k, t in enumerate(["How to Combine Tree-Search Methods in Widget Learning",
                                          "Memory-Augmented Monte Carlo Widget Search",
                                          "Bidirectional Widget Search That Is Guaranteed to Meet"]))
    text = "# Best Paper Awards\n\n| [AAAI (Artificial Intelligence)] |  |  |\n" + rows
    assert [t for t, _ in titles(text)] == ["How to Combine Tree-Search Methods in Widget Learning",
                                            "Memory-Augmented Monte Carlo Widget Search",
                                            "Bidirectional Widget Search That Is Guaranteed to Meet"]
