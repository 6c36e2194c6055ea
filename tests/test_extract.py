"""Unit tests of :mod:`pipeline.extract` on fixture section rows in both seed layouts.

Rows are what the segment stage hands on (``heading``, ``text``, ``ctx_award_raw``,
``doc_venue``, ``doc_year``). jieba, spaCy and OpenCC run for real.
"""

from __future__ import annotations

import re

import pytest

from pipeline.config import Config
from pipeline.extract import EXTRACT_COLUMNS, credit_text, extract_fields
from pipeline.heading_titles import split_heading_title
from pipeline.keywords import ZH_GENERIC_WORDS as GENERIC_WORDS
from pipeline.normalize import detect_script, to_script

# --- split_heading_title ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("heading", "expected"),
    [
        ("论文 1：Learning Dynamics of LLM Finetuning", ("Learning Dynamics of LLM Finetuning", None)),
        ("論文2: Generative Image Dynamics", ("Generative Image Dynamics", None)),
        ("Paper 3: Rich Human Feedback for Text-to-Image Generation",
         ("Rich Human Feedback for Text-to-Image Generation", None)),
        ("Guiding a Diffusion Model with a Bad Version of Itself 深度解析",
         ("Guiding a Diffusion Model with a Bad Version of Itself", None)),
        ("Learning Dynamics of LLM Finetuning 深度簡介", ("Learning Dynamics of LLM Finetuning", None)),
        ("视觉自回归建模（Visual Autoregressive Modeling: Scalable Image Generation via Next-Scale Prediction）",
         ("Visual Autoregressive Modeling: Scalable Image Generation via Next-Scale Prediction", "视觉自回归建模")),
        ("Generative Image Dynamics（生成式图像动力学）", ("Generative Image Dynamics", "生成式图像动力学")),
        ("论文 2：生成式圖像動力學（Generative Image Dynamics）", ("Generative Image Dynamics", "生成式圖像動力學")),
        ("视觉自回归建模：通过下一尺度预测实现可扩展的图像生成",
         (None, "视觉自回归建模：通过下一尺度预测实现可扩展的图像生成")),
        ("论文 3：", (None, None)),
        # headline decorations go by shape (short Chinese-only label set off from an English
        # title), whatever the label says: before or after, with separators or brackets
        ("一文读懂：Flow Matching on General Geometries", ("Flow Matching on General Geometries", None)),
        ("【论文精读】Flow Matching on General Geometries", ("Flow Matching on General Geometries", None)),
        ("[深度解读] Flow Matching on General Geometries", ("Flow Matching on General Geometries", None)),
        ("Flow Matching on General Geometries | 全文翻译", ("Flow Matching on General Geometries", None)),
        ("Flow Matching on General Geometries —— 新作速览", ("Flow Matching on General Geometries", None)),
        ("【深度解析】基于分数的生成模型", (None, "基于分数的生成模型")),  # a Chinese title loses a bracketed label
        # a reference's tail naming a venue is not part of the title; other sentences stay
        ("Sparse Codes for Parsing. In AAAI 2019.", ("Sparse Codes for Parsing", None)),
        ("Sparse Codes for Parsing. In EMNLP W-NUT Workshop 2019.", ("Sparse Codes for Parsing", None)),
        ("Learning to Fly. In the Dark.", ("Learning to Fly. In the Dark", None)),
        # what closes a heading or a title line without being the title's: an attribute block, a
        # permalink, a custom element, a short name, a venue edition, a final full stop
        ("## ICLR2025 Morris: contextual document embeddings {#iclr2025-morris-contextual}",
         ("contextual document embeddings", None)),
        ("NeurIPS 2024 Lee et al.: Sparse Codes for Parsing", ("Sparse Codes for Parsing", None)),
        ("Meta Pseudo Labels[¶](#meta-pseudo-labels)", ("Meta Pseudo Labels", None)),
        ("Meta Pseudo Labels ¶", ("Meta Pseudo Labels", None)),
        ('_"On Defining Neural Averaging."_ <d-cite key="lee2025on"></d-cite>', ("On Defining Neural Averaging", None)),
        ("Deep Residual Learning for Image Recognition (ResNet)", ("Deep Residual Learning for Image Recognition", None)),
        ("Mastering the Game of Go without Human Knowledge (AlphaGo Zero)",
         ("Mastering the Game of Go without Human Knowledge", None)),
        ("Low-Cost Multi-Touch Sensing through Frustrated Total Internal Reflection (UIST 2005)",
         ("Low-Cost Multi-Touch Sensing through Frustrated Total Internal Reflection", None)),
        ("Vision Transformer (ViT)", ("Vision Transformer (ViT)", None)),  # too short a title to lose it
        # a thesis catalogue's title and its translation (DSpace: "題名: 中文;English")
        ("題名: 以臺灣臺語為例的低資源語言學習;Low-Resource Language Learning: A Case Study",
         ("Low-Resource Language Learning: A Case Study", "以臺灣臺語為例的低資源語言學習")),
        ("Sparse Codes for Parsing Trees (2019)", ("Sparse Codes for Parsing Trees (2019)", None)),
        ("Contrastive Learning, et al.", ("Contrastive Learning, et al.", None)),
        # a blog's own label glued to a title it links to ("…導讀": a guide to the paper)
        ("[Reflexion: 帶有語言強化學習的語言代理導讀](2025/reflexion_guide.md)",
         (None, "Reflexion: 帶有語言強化學習的語言代理")),
        ("遞迴式摘要功能使大型語言模型具備長期對話記憶導讀", (None, "遞迴式摘要功能使大型語言模型具備長期對話記憶")),
        ("AlexNet 论文逐段精读", ("AlexNet", None)),
        ("深度学习笔记", (None, "深度学习笔记")),  # too short a title to lose its last word
        # a Chinese title with a method's name in it is a Chinese title
        ("Memento: 無需微調 LLM 即可微調 LLM 代理", (None, "Memento: 無需微調 LLM 即可微調 LLM 代理")),
        # HTML markup around a title is not the title's
        ("Backpack Language Models<br/>", ("Backpack Language Models", None)),
        ('<div style="font-weight: bold">Contrastive Dynamic Graph for Sequential Recommendation</div>',
         ("Contrastive Dynamic Graph for Sequential Recommendation", None)),
        ("Main Title: Gumbel Reranking: Differentiable End-to-End Reranker Optimization",
         ("Gumbel Reranking: Differentiable End-to-End Reranker Optimization", None)),
        # a talk list's line: the title, then its speaker and places after full-width commas
        ("- Towards Grand Unification of Object Tracking，严彬，大连理工大学",
         ("Towards Grand Unification of Object Tracking", None)),
        ("- Learning Ego 3D Representation as Ray Tracing，卢嘉晨", ("Learning Ego 3D Representation as Ray Tracing", None)),
        # a reading list's tag in backticks, and who made the work, before the title
        ("`REVIEW`[Vision Language Action Models in Robotic Manipulation: A Systematic Review](https://x.org/a)",
         ("Vision Language Action Models in Robotic Manipulation: A Systematic Review", None)),
        ("- Facebook 提出的 DeiT (Data-efficient image Transformer)", ("DeiT (Data-efficient image Transformer)", None)),
        # a Chinese title may be a question; a question mark inside a heading still makes it a sentence
        ("大型推理模型能自我訓練嗎？", (None, "大型推理模型能自我訓練嗎？")),
        # a reader's note in lenticular brackets after an English title
        ("Beyond Thumbs Up/Down: Untangling Challenges of Fine-Grained Feedback 【Multi reward】",
         ("Beyond Thumbs Up/Down: Untangling Challenges of Fine-Grained Feedback", None)),
        ("为什么有效？因为它简单。", (None, None)),
        ("- 微軟提出的 Swin Transformer", ("Swin Transformer", None)),
    ],
)
def test_split_heading_title(heading: str, expected: tuple[str | None, str | None]) -> None:
    assert split_heading_title(heading) == expected



def test_a_long_bracketed_tail_or_a_long_run_of_heading_marks_is_read_in_linear_time() -> None:
    """A heading ending in brackets of three long words of capitals and digits (a hash, a key), or
    a line of thousands of permalink marks, was minutes of regex backtracking (time polynomial in
    the words' length, quadratic in the line's): each now takes well under a second."""
    import time

    from pipeline.textutil import plain

    words = " ".join(["0x" + "A1" * 45] * 3)
    started = time.perf_counter()
    assert split_heading_title(f"## Deep Learning for Hashes ({words} zz)")[0].startswith("Deep Learning for Hashes (")
    assert plain("## Meta Pseudo Labels" + " ¶" * 20000) == "Meta Pseudo Labels" + " ¶" * (20000 - 300)
    assert plain("# Title" + " " * 40000 + "}") == "Title" + " " * 40000 + "}"
    assert time.perf_counter() - started < 1.0

# --- fixture rows -----------------------------------------------------------------------------------

VAR_TEXT = """论文 1：Visual Autoregressive Modeling: Scalable Image Generation via Next-Scale Prediction

作者：田柯宇、蒋毅、袁泽寰、彭冰跃、王立威等

機構：北京大學、字節跳動

论文地址：https://arxiv.org/abs/2404.02905v2。

论文摘要：本文提出视觉自回归建模（VAR），将图像上的自回归学习重新定义为从粗到细的“下一尺度预测”。VAR 首次使类 GPT 的自回归模型在图像生成上超越扩散 Transformer。

在 ImageNet 256×256 基准上，VAR 将 FID 从 18.65 降至 1.73，推理速度提升约 20 倍。

本文还观察到 VAR 呈现出与大语言模型类似的幂律缩放规律，并在图像修复、外扩和编辑等下游任务上展示了零样本泛化能力。"""

VAR_ROW = {
    "heading": VAR_TEXT.split("\n", 1)[0],
    "text": VAR_TEXT,
    "ctx_award_raw": "最佳论文奖",
    "doc_venue": "NeurIPS",
    "doc_year": 2024,
}

GUIDING_TEXT = """Guiding a Diffusion Model with a Bad Version of Itself 深度解析

在影像生成領域，無分類器引導（classifier-free guidance）長期以來是提升擴散模型樣本品質的標準做法。Karras 等人提出「自引導（autoguidance）」，以模型本身較小、訓練較短的版本取代無條件模型來引導生成。

實驗顯示，自引導在 ImageNet-512 上取得 1.25 的 FID，並且同樣適用於無條件擴散模型。

---

論文資訊
📄 Guiding a Diffusion Model with a Bad Version of Itself
👥 Karras, Aittala, Kynkäänniemi, Lehtinen, Aila, Laine
🏛 輝達研究院、阿爾托大學
🏆 NeurIPS 2024 · Best Paper Runner-Up
🔗 arxiv.org/abs/2406.02507"""

GUIDING_ROW = {
    "heading": "Guiding a Diffusion Model with a Bad Version of Itself 深度解析",
    "text": GUIDING_TEXT,
    "ctx_award_raw": None,
    # the digest's context names another venue and year: the 🏆 line must win
    "doc_venue": "ICML",
    "doc_year": 2025,
}

PRISM_TEXT = """Paper 3: The PRISM Alignment Dataset: What Participatory, Representative and Individualised Human Feedback Reveals

Authors: Hannah Rose Kirk, Alexander Whitefield, Paul Röttger et al.

Affiliations: University of Oxford, Meta AI

Abstract: Human feedback is central to the alignment of Large Language Models. PRISM maps the sociodemographics and stated preferences of 1,500 diverse participants from 75 countries to their contextual preferences and fine-grained feedback in 8,011 live conversations with 21 LLMs."""

PRISM_ROW = {
    "heading": PRISM_TEXT.split("\n", 1)[0],
    "text": PRISM_TEXT,
    "ctx_award_raw": "Best Paper Award",
    "doc_venue": "NeurIPS",
    "doc_year": 2024,
}


def fields(row: dict, target: str = "zh-Hans", config: Config | None = None) -> dict:
    out = extract_fields(row, target, config or Config())
    assert set(out) == set(EXTRACT_COLUMNS)
    return out


# --- numbered layout ------------------------------------------------------------------------------


def test_numbered_section_fields() -> None:
    out = fields(VAR_ROW)
    assert out["title"] == "Visual Autoregressive Modeling: Scalable Image Generation via Next-Scale Prediction"
    assert out["title_zh"] is None
    assert out["authors"] == ["田柯宇", "蒋毅", "袁泽寰", "彭冰跃", "王立威"]
    assert out["authors_truncated"] is True
    assert (out["venue"], out["year"]) == ("NeurIPS", 2024)
    assert (out["award"], out["award_raw"]) == ("best_paper", "最佳论文奖")
    assert (out["arxiv_id"], out["arxiv_version"]) == ("2404.02905", "v2")
    assert out["urls"] == ["https://arxiv.org/abs/2404.02905v2"]  # no trailing 。
    assert out["url_kinds"] == ["arxiv"]


def test_url_kinds_are_aligned_with_urls_and_read_the_key_of_their_line() -> None:
    text = VAR_TEXT + "\n项目主页：https://var-model.example.org/ 。\n代码：https://example.org/var-code，\n另见 https://doi.org/10.1000/xyz123"
    out = fields(dict(VAR_ROW, text=text))
    assert out["urls"] == [
        "https://arxiv.org/abs/2404.02905v2",
        "https://var-model.example.org/",
        "https://example.org/var-code",
        "https://doi.org/10.1000/xyz123",
    ]
    assert out["url_kinds"] == ["arxiv", "project", "code", "doi"]


def test_traditional_institutions_in_the_target_script() -> None:
    assert fields(VAR_ROW, "zh-Hans")["institutions"] == ["北京大学", "字节跳动"]
    assert fields(VAR_ROW, "zh-Hant")["institutions"] == ["北京大學", "字節跳動"]


def test_arxiv_id_without_version_and_version_v2() -> None:
    row = dict(VAR_ROW, text=VAR_TEXT.replace("https://arxiv.org/abs/2404.02905v2。", "arxiv.org/abs/2502.13228v2"))
    out = fields(row)
    assert (out["arxiv_id"], out["arxiv_version"]) == ("2502.13228", "v2")
    assert out["urls"] == ["https://arxiv.org/abs/2502.13228v2"]


def test_summary_from_the_abstract_paragraphs() -> None:
    out = fields(VAR_ROW)
    summary = out["summary"]
    assert summary.startswith("本文提出视觉自回归建模（VAR）")
    assert "论文摘要" not in summary
    assert "北京大学" not in summary and "arxiv" not in summary
    assert summary.endswith("展示了零样本泛化能力。")
    assert len(summary) <= Config().extract.summary_max_chars


def test_summary_when_the_abstract_label_stands_on_its_own_line() -> None:
    text = VAR_TEXT.replace("论文摘要：本文提出", "论文摘要：\n\n本文提出")
    out = fields(dict(VAR_ROW, text=text))
    assert out["summary"].startswith("本文提出视觉自回归建模（VAR）")


def test_summary_cut_at_a_sentence_boundary() -> None:
    config = Config()
    config.extract.summary_max_chars = 120
    full = fields(VAR_ROW)["summary"]
    assert len(full) > 120
    cut = fields(VAR_ROW, config=config)["summary"]
    assert 0 < len(cut) <= 120
    assert full.startswith(cut)
    assert cut.endswith("。")
    # the longest run of whole sentences that fits
    assert cut == (
        "本文提出视觉自回归建模（VAR），将图像上的自回归学习重新定义为从粗到细的“下一尺度预测”。"
        "VAR 首次使类 GPT 的自回归模型在图像生成上超越扩散 Transformer。"
    )


def test_keywords_are_topical_and_in_the_target_script() -> None:
    for target in ("zh-Hans", "zh-Hant"):
        keywords = fields(VAR_ROW, target)["keywords"]
        assert isinstance(keywords, list) and keywords
        assert len(keywords) <= Config().extract.n_keywords
        assert all(isinstance(k, str) and k.strip() == k and k for k in keywords)
        assert not set(keywords) & GENERIC_WORDS
        assert "本文" not in keywords
        assert "VAR" in keywords
        chinese = "".join(k for k in keywords if detect_script(k) != "en")
        assert detect_script(chinese) == target
        assert all(to_script(k, target) == k for k in keywords)
    # the abstract counts for keywords too (a section with only an abstract had none), which
    # puts "scaling" (缩放) above "power law" (幂律) for this section
    assert "缩放" in fields(VAR_ROW, "zh-Hans")["keywords"]
    assert "縮放" in fields(VAR_ROW, "zh-Hant")["keywords"]


def test_keywords_are_not_numbers() -> None:
    keywords = fields(VAR_ROW)["keywords"]
    numeric = [k for k in keywords if k.replace(".", "", 1).replace(",", "").isdigit()]
    assert numeric == []


def test_english_authors_truncated_by_et_al_and_institutions_split() -> None:
    out = fields(PRISM_ROW)
    assert out["title"] == (
        "The PRISM Alignment Dataset: What Participatory, Representative and Individualised Human Feedback Reveals"
    )
    assert out["authors"] == ["Hannah Rose Kirk", "Alexander Whitefield", "Paul Röttger"]
    assert out["authors_truncated"] is True
    assert out["institutions"] == ["University of Oxford", "Meta AI"]
    assert (out["award"], out["award_raw"]) == ("best_paper", "Best Paper Award")
    assert (out["venue"], out["year"]) == ("NeurIPS", 2024)
    assert out["arxiv_id"] is None and out["arxiv_version"] is None
    assert out["urls"] == []
    assert out["summary"].startswith("Human feedback is central to the alignment of Large Language Models.")


def test_no_award_without_award_line_or_context() -> None:
    out = fields(dict(VAR_ROW, ctx_award_raw=None, doc_venue=None, doc_year=None))
    assert out["award"] is None and out["award_raw"] is None
    assert out["venue"] is None and out["year"] is None


# --- title-line layout ------------------------------------------------------------------------------


def test_title_line_section_fields() -> None:
    out = fields(GUIDING_ROW)
    assert out["title"] == "Guiding a Diffusion Model with a Bad Version of Itself"
    assert out["title_zh"] is None
    assert out["authors"] == ["Karras", "Aittala", "Kynkäänniemi", "Lehtinen", "Aila", "Laine"]
    assert out["authors_truncated"] is False
    # the 🏆 line beats the document context (ICML 2025)
    assert (out["venue"], out["year"]) == ("NeurIPS", 2024)
    assert (out["award"], out["award_raw"]) == ("best_paper_runner_up", "Best Paper Runner-Up")
    assert (out["arxiv_id"], out["arxiv_version"]) == ("2406.02507", None)
    assert out["urls"] == ["https://arxiv.org/abs/2406.02507"]


def test_award_line_beats_the_award_header_context() -> None:
    out = fields(dict(GUIDING_ROW, ctx_award_raw="杰出论文奖"))
    assert (out["award"], out["award_raw"]) == ("best_paper_runner_up", "Best Paper Runner-Up")


def test_title_line_institutions_in_the_target_script() -> None:
    assert fields(GUIDING_ROW, "zh-Hans")["institutions"] == ["辉达研究院", "阿尔托大学"]
    assert fields(GUIDING_ROW, "zh-Hant")["institutions"] == ["輝達研究院", "阿爾托大學"]


def test_title_line_summary_is_the_explainer_in_its_script_and_in_the_target_script() -> None:
    out = fields(GUIDING_ROW, "zh-Hans")
    original, hans = out["summary"], out["summary_norm"]
    assert original.startswith("在影像生成領域，無分類器引導（classifier-free guidance）")
    assert detect_script(original) == "zh-Hant"
    assert hans.startswith("在影像生成领域，无分类器引导（classifier-free guidance）")
    assert "📄" not in hans and "論文資訊" not in hans and "论文资讯" not in hans and "---" not in hans
    assert detect_script(hans) == "zh-Hans"
    out = fields(GUIDING_ROW, "zh-Hant")
    assert out["summary"] == original
    assert out["summary_norm"] == original


def test_title_line_keywords() -> None:
    for target in ("zh-Hans", "zh-Hant"):
        keywords = fields(GUIDING_ROW, target)["keywords"]
        assert keywords and all(isinstance(k, str) and k for k in keywords)
        assert not set(keywords) & GENERIC_WORDS
        assert all(to_script(k, target) == k for k in keywords)
    assert "引导" in fields(GUIDING_ROW, "zh-Hans")["keywords"]
    assert "引導" in fields(GUIDING_ROW, "zh-Hant")["keywords"]


def test_bilingual_heading_gives_title_zh_in_the_target_script() -> None:
    text = GUIDING_TEXT.replace(
        "Guiding a Diffusion Model with a Bad Version of Itself 深度解析",
        "以自身的較差版本引導擴散模型（Guiding a Diffusion Model with a Bad Version of Itself）",
        1,
    )
    row = dict(GUIDING_ROW, heading=text.split("\n", 1)[0], text=text)
    out = fields(row, "zh-Hans")
    assert out["title"] == "Guiding a Diffusion Model with a Bad Version of Itself"
    assert out["title_zh"] == "以自身的较差版本引导扩散模型"
    assert fields(row, "zh-Hant")["title_zh"] == "以自身的較差版本引導擴散模型"


def test_keywords_of_an_abstract_only_section_and_of_english_text() -> None:
    zh = {"heading": "论文 1：Not All Tokens Are What You Need for Pretraining",
          "text": "论文 1：Not All Tokens Are What You Need for Pretraining\n\n"
                  "论文摘要：以往的语言模型预训练对所有 token 统一施加下一 token 预测损失。本文发现语料中的 token "
                  "并非同等重要，并提出选择性语言建模，用参考模型为 token 打分，只在高分 token 上训练。",
          "ctx_award_raw": None, "doc_venue": None, "doc_year": None, "lang": "zh-Hans"}
    assert {"语言模型", "预训练", "语言建模"} <= set(fields(zh)["keywords"])  # whole domain terms
    en = {"heading": "## Learning Dynamics of LLM Finetuning",
          "text": "## Learning Dynamics of LLM Finetuning\n\nThis paper studies how finetuning changes a model. "
                  "The authors show that the squeezing effect explains why models repeat phrases after "
                  "preference tuning, and the study proposes a simple fix for the squeezing effect.",
          "ctx_award_raw": None, "doc_venue": None, "doc_year": None, "lang": "en"}
    keywords = fields(en)["keywords"]
    assert {"squeezing effect", "preference tuning"} <= set(keywords)  # YAKE phrases, not single words
    assert not {"paper", "the", "how", "study", "studies", "authors"} & {k.casefold() for k in keywords}
    assert len({k.casefold() for k in keywords}) == len(keywords)


def test_affiliations_written_after_authors_become_institutions() -> None:
    row = {"heading": "## Learning Dynamics of LLM Finetuning",
           "text": "## Learning Dynamics of LLM Finetuning\n\n"
                   "Authors: Yi Ren (University of British Columbia), Danica J. Sutherland (University of British Columbia)\n\n"
                   "arXiv: 2407.10490\n\nA study of how finetuning changes models.",
           "ctx_award_raw": None, "doc_venue": None, "doc_year": None}
    out = fields(row)
    assert out["authors"] == ["Yi Ren", "Danica J. Sutherland"]
    assert out["institutions"] == ["University of British Columbia"]


def test_a_runaway_section_is_analysed_from_its_head_and_keeps_its_links() -> None:
    from pipeline.extract import MAX_ANALYSED_CHARS

    body = "扩散模型的训练动态决定了泛化与记忆之间的转变。" * (1_100_000 // 23)
    assert len(body) > 5 * MAX_ANALYSED_CHARS
    text = ("论文 1：Why Diffusion Models Don't Memorize\n作者：张三、李四\n" + body
            + "\n论文链接：https://arxiv.org/abs/2505.17638")
    assert len(text) > 1_000_000  # beyond spaCy's default max_length
    out = fields({"heading": text.split("\n", 1)[0], "text": text, "ctx_award_raw": None, "doc_venue": None,
                  "doc_year": None, "lang": "zh-Hans"})
    assert out["title"] == "Why Diffusion Models Don't Memorize"
    assert out["authors"] == ["张三", "李四"]
    assert out["arxiv_id"] == "2505.17638" and out["urls"] == ["https://arxiv.org/abs/2505.17638"]
    assert out["summary"].startswith("扩散模型的训练动态")


@pytest.mark.parametrize(("line", "expected"), [
    ("(Mei Lin and Kai Sun)", "Mei Lin and Kai Sun"),
    ("(By Mei Lin, Kai Sun and Ann Lee)", "Mei Lin, Kai Sun and Ann Lee"),
    ("By Mei Lin and Kai Sun from Acme Labs", "Mei Lin and Kai Sun, Acme Labs"),
    ("*Mei Lin, Kai Sun.* [[Paper](https://example.org/p)], 2022.12", "Mei Lin, Kai Sun"),
    ("Byron Lee and Ann Sun", "Byron Lee and Ann Sun"),
])
def test_credit_text_unwraps_brackets_and_by(line, expected):
    assert credit_text(line) == expected


def test_credit_line_under_a_repeat_of_the_heading_title():
    text = ("##### [A Study of Small Things]\n"
            "- A Study of Small Things [[pdf]](https://example.org/small.pdf)\n"
            "- *Mei Lin, Kai Sun*\n"
            "- `2020-01-02`\n")
    out = fields({"heading": "##### [A Study of Small Things]", "text": text, "ctx_award_raw": None,
                  "doc_venue": None, "doc_year": None, "lang": "en"})
    assert out["authors"] == ["Mei Lin", "Kai Sun"]


@pytest.mark.parametrize(("heading", "titles"), [
    ("‘Sparse Codes for Parsing’", ("Sparse Codes for Parsing", None)),
    ("「以少量標註學習語意分割的方法」", (None, "以少量標註學習語意分割的方法")),
    ("‘Don’t Stop Sparse Coding’", ("Don’t Stop Sparse Coding", None)),
])
def test_quotation_marks_around_a_heading_are_not_part_of_its_title(heading: str, titles: tuple) -> None:
    assert split_heading_title(heading) == titles


def test_a_year_column_or_metadata_line_gives_the_year() -> None:
    row = {"heading": "Sparse Codes for Parsing", "text": "年份: 2022\n論文名稱: Sparse Codes for Parsing\n出處: arXiv 2201.00001",
           "ctx_award_raw": None, "lead_award_raw": None, "doc_venue": None, "doc_year": None, "lang": "zh-Hant"}
    assert extract_fields(row, "zh-Hant", Config())["year"] == 2022
    row = dict(row, text="Sparse Codes for Parsing\n\nYear: 2019-05-02\n\nWe parse with sparse codes.", lang="en")
    assert extract_fields(row, "zh-Hans", Config())["year"] == 2019


@pytest.mark.parametrize(("line", "year"), [
    ("- [Sparse Codes for Widget Parsing](https://arxiv.org/abs/1301.3781)（2013）", 2013),
    ("[Sparse Codes for Widget Parsing](https://arxiv.org/abs/2504.05812)，ArXiv，2025-04-08", 2025),
    ("- Sparse Codes for Widget Parsing (2001)", 2001),
    ("- Sparse Codes for Widget Parsing, with 2013 results", None),
    ("[2023] [Sparse Codes for Widget Parsing](https://arxiv.org/abs/2308.10901)", 2023),
    ("- (2019) Sparse Codes for Widget Parsing", 2019),
    ("- 2016 - Sparse Codes for Widget Parsing", 2016),
    ("- [CVPR] 2016 remarks on Sparse Codes for Widget Parsing", None),
])
def test_a_year_or_date_on_the_title_line_without_a_venue(line: str, year: int | None) -> None:
    row = {"heading": "Sparse Codes for Widget Parsing", "text": line, "ctx_award_raw": None,
           "lead_award_raw": None, "doc_venue": None, "doc_year": None, "lang": "en"}
    assert extract_fields(row, "zh-Hans", Config())["year"] == year


@pytest.mark.parametrize(("line", "award_raw", "award", "year"), [
    ("* [**Sparse Codes for Widget Parsing**](https://arxiv.org/abs/2212.09512), _**CCL Best Paper Award**_, **2023**",
     "Best Paper Award", "best_paper", 2023),
    ("* **Sparse Codes for Widget Parsing**, _**NLPCC Outstanding Paper Award**_, **2019**",
     "Outstanding Paper Award", "outstanding_paper", 2019),
    # an award without its kind after the title leaves the heading's
    ("* **Sparse Codes for Widget Parsing**，这项工作也获奖了", "Paper Awards", "other", None),
])
def test_the_award_and_year_after_the_title_on_its_line(line: str, award_raw: str, award: str, year: int | None) -> None:
    row = {"heading": "Sparse Codes for Widget Parsing", "text": line, "ctx_award_raw": "Paper Awards",
           "lead_award_raw": None, "doc_venue": None, "doc_year": None, "lang": "en"}
    out = extract_fields(row, "zh-Hans", Config())
    assert (out["award_raw"], out["award"], out["year"]) == (award_raw, award, year)


def test_award_label_and_year_that_open_the_title_line() -> None:
    text = "- 2022 best student paper, **Widget Untangling**, [arXiv](https://arxiv.org/abs/2207.07813)"
    row = {"heading": "Widget Untangling", "text": text, "ctx_award_raw": "# Awards", "lead_award_raw": None,
           "doc_venue": None, "doc_year": None, "lang": "en"}
    out = extract_fields(row, "zh-Hans", Config())
    assert (out["award_raw"], out["award"], out["year"]) == ("best student paper", "other", 2022)


# --- credits in the forms of reading notes and lab news -------------------------------------------


def _section(heading: str, text: str, lang: str = "en") -> dict:
    return fields({"heading": heading, "text": text, "ctx_award_raw": None, "doc_venue": None,
                   "doc_year": None, "lang": lang})


def test_authors_after_a_quoted_title_and_a_dash() -> None:
    line = '*  "One-Sided Unsupervised Domain Mapping" - Sagie Benaim, Lior Wolf'
    out = _section("One-Sided Unsupervised Domain Mapping", line)
    assert out["authors"] == ["Sagie Benaim", "Lior Wolf"]


def test_authors_under_an_authors_label() -> None:
    text = ("## Action Transformer: A Self-Attention Model for Pose-Based Action Recognition\n"
            "### Authors:\n*Vittorio Mazzia, Simone Angarano, Francesco Salvetti*\n\n"
            "The model classifies short pose sequences with a small transformer encoder.")
    out = _section("Action Transformer: A Self-Attention Model for Pose-Based Action Recognition", text)
    assert out["authors"] == ["Vittorio Mazzia", "Simone Angarano", "Francesco Salvetti"]
    assert "Vittorio" not in out["summary"]


def test_authors_from_a_bibtex_entry() -> None:
    text = ("## Position-guided Text Prompt for Vision-Language Pre-training\n```\n@article{wang2022ptp,\n"
            "  title={Position-guided Text Prompt for Vision Language Pre-training},\n"
            "  author={Wang, Alex Jinpeng and Zhou, Pan and Shou, Mike Zheng},\n  year={2022}\n}\n```")
    out = _section("Position-guided Text Prompt for Vision-Language Pre-training", text)
    assert out["authors"] == ["Wang, Alex Jinpeng", "Zhou, Pan", "Shou, Mike Zheng"]


def test_authors_congratulated_in_lab_news() -> None:
    line = ('* **2026-06-06** 我们的论文《基于上下文扩图的遥感指代分割》已被 2026年中国多媒体大会录用。'
            '恭喜[金炬光（本科生）](author/金炬光/)、[曾国琳（本科生）](author/曾国琳/)！')
    out = _section("基于上下文扩图的遥感指代分割", line, "zh-Hans")
    assert out["authors"] == ["金炬光", "曾国琳"]
    # a team congratulated on a prize names no authors
    out = _section("基于上下文扩图的遥感指代分割", line.split("恭喜")[0] + "恭喜我们团队获得最佳论文奖！", "zh-Hans")
    assert out["authors"] == []


def test_venue_tag_glued_to_its_year_and_a_preprint_line_keeps_the_document_venue_out() -> None:
    text = "### All in One\n- from: cvpr2023\n- paper: https://arxiv.org/abs/2203.07303\n<br>Notes on the model."
    row = {"heading": "All in One", "text": text, "ctx_award_raw": None, "doc_venue": "ICCV",
           "doc_year": 2023, "lang": "en"}
    out = fields(row)
    assert (out["venue"], out["year"]) == ("CVPR", 2023)
    out = fields({**row, "text": text.replace("cvpr2023", "arxiv")})
    assert (out["venue"], out["year"]) == (None, None)
    out = fields({**row, "text": text.replace("- from: cvpr2023\n", "")})
    assert (out["venue"], out["year"]) == ("ICCV", 2023)


def test_heading_title_without_a_glued_chinese_label():
    from pipeline.heading_titles import split_heading_title

    assert split_heading_title("經典Learning Transferable Visual Models From Natural Language Supervision") == (
        "Learning Transferable Visual Models From Natural Language Supervision", None)
    assert split_heading_title("2020經典(arXiv:2006.11239)Denoising Diffusion Probabilistic Models") == (
        "Denoising Diffusion Probabilistic Models", None)
    # a Chinese title with an English word in it stays whole
    assert split_heading_title("精读BERT") == (None, "精读BERT")


def test_lone_author_in_a_credited_paper_list():
    import pandas as pd

    from pipeline.config import Config
    from pipeline.extract import extract_sections

    papers = [("Beyond Accuracy: Behavioral Testing of NLP Models with CheckList", "Marco Tulio Ribeiro, Tongshuang Wu and Sameer Singh"),
              ("Climbing towards NLU: On Meaning, Form, and Understanding in the Age of Data", "Emily M. Bender and Alexander Koller"),
              ("How Can We Accelerate Progress Towards Human-like Linguistic Generalization?", "Tal Linzen"),
              ("Torch-Struct: Deep Structured Prediction Library", "Alexander Rush")]
    batch = pd.DataFrame([{"doc_id": "d1", "heading": t, "text": f"{t}\n{credit}", "ctx_award_raw": None,
                           "doc_venue": "ACL", "doc_year": 2020} for t, credit in papers])
    out = extract_sections(batch, Config())
    assert [list(a) for a in out["authors"]] == [["Marco Tulio Ribeiro", "Tongshuang Wu", "Sameer Singh"],
                                                  ["Emily M. Bender", "Alexander Koller"], ["Tal Linzen"], ["Alexander Rush"]]
    # alone, a capitalised pair of words under a title is no credit
    alone = extract_sections(batch.iloc[2:3], Config())
    assert list(alone["authors"].iloc[0]) == []


def test_heading_title_without_glued_link_words_or_a_dated_tag():
    from pipeline.heading_titles import split_heading_title

    assert split_heading_title("Action Transformer: A Self-Attention Model for Pose-Based Action Recognition(arXiv)") == (
        "Action Transformer: A Self-Attention Model for Pose-Based Action Recognition", None)
    assert split_heading_title("TasNet [[note]]()") == ("TasNet", None)
    assert split_heading_title("2024(2402)World Model on Million-Length Video And Language") == (
        "World Model on Million-Length Video And Language", None)
    assert split_heading_title("GPT-4 Technical Report (2023)") == ("GPT-4 Technical Report (2023)", None)


def test_heading_title_a_name_and_colon_before_chinese_is_one_chinese_title():
    from pipeline.heading_titles import split_heading_title

    assert split_heading_title("Ttrl：測試時強化學習") == (None, "Ttrl：測試時強化學習")
    assert split_heading_title("CoALA: 語言代理認知架構") == (None, "CoALA: 語言代理認知架構")
    # a decoration after a title of several words is still one; a reading label leaves no separator
    assert split_heading_title("Attention Is All You Need 论文解读") == ("Attention Is All You Need", None)
    assert split_heading_title("BERT | 论文笔记") == ("BERT", None)


def test_a_preprint_tag_before_the_title_gives_its_year_and_no_venue():
    from pipeline.config import Config
    from pipeline.extract import extract_fields

    row = {"heading": "(arXiv 2022)BEVerse: Unified Perception and Prediction in Birds-Eye-View",
           "text": "(arXiv 2022)BEVerse: Unified Perception and Prediction in Birds-Eye-View\n\n一个统一的感知与预测框架。",
           "ctx_award_raw": None, "doc_venue": "CVPR", "doc_year": 2023, "lead_award_raw": None, "lang": None}
    out = extract_fields(row, "zh-Hans", Config())
    assert (out["venue"], out["year"]) == (None, 2022)


def test_a_short_name_heading_takes_the_full_title_its_line_quotes():
    from pipeline.extract import _full_title

    line = "Mamba（場外最大焦點）：Albert Gu 和 Tri Dao 的「Mamba: Linear-Time Sequence Modeling with Selective State Spaces」以 arXiv 預印本發布"
    assert _full_title("Mamba", line) == "Mamba: Linear-Time Sequence Modeling with Selective State Spaces"
    assert _full_title("Mamba", "Mamba 的「選擇性」機制") is None


def test_authors_linked_with_html_anchors_and_laid_out_with_nbsp() -> None:
    text = ('## No Train, all Gain: Self-Supervised Gradients Improve Deep Frozen Representations\n'
            '### Authors: <a href="https://walter.ashita.nl/">Walter Simoncini</a>  &nbsp;&nbsp; '
            '<a href="https://gidariss.github.io/&hl=en">Spyros Gidaris</a>  &nbsp;&nbsp;  '
            '<a href="https://abursuc.github.io/">Andrei Bursuc</a>\n')
    out = _section("No Train, all Gain: Self-Supervised Gradients Improve Deep Frozen Representations", text)
    assert out["authors"] == ["Walter Simoncini", "Spyros Gidaris", "Andrei Bursuc"]


def test_a_template_placeholder_is_no_author() -> None:
    text = "### 2. Schema-Gated Agentic AI\n\n**作者**: [Authors] 等  \n**链接**: [arXiv:2603.06561](https://arxiv.org/abs/2603.06561)\n"
    assert _section("2. Schema-Gated Agentic AI", text, "zh-Hans")["authors"] == []


@pytest.mark.parametrize(("heading", "title"), [
    ("ACL2025: Language Models Resist Alignment: Evidence From Data Compression",
     "Language Models Resist Alignment: Evidence From Data Compression"),
    ("CVPR 2024 Oral: Generative Image Dynamics", "Generative Image Dynamics"),
    ("Generative Image Dynamics, CVPR2024 Best Paper Award", "Generative Image Dynamics"),
    ("Deep Residual Learning for Image Recognition - CVPR 2016", "Deep Residual Learning for Image Recognition"),
    ("BERT, GPT and T5: a comparison", "BERT, GPT and T5: a comparison"),
    ("DeepSeek-R1: Incentivizing Reasoning Capability in LLMs", "DeepSeek-R1: Incentivizing Reasoning Capability in LLMs"),
    ("CVPR 2024 Best Paper: Generative Image Dynamics", "Generative Image Dynamics"),
    ("1000. Learning Sparse Models for Task 1000", "Learning Sparse Models for Task 1000"),
    ("NeurIPS 2023 in review: what the year taught us", "NeurIPS 2023 in review: what the year taught us"),
])
def test_a_venue_edition_label_before_the_title_is_not_the_title(heading: str, title: str) -> None:
    assert split_heading_title(heading)[0] == title

def test_year_from_a_venue_line_the_venue_list_does_not_know() -> None:
    """A venue metadata line names and dates the paper even when its venue is outside the list."""
    row = {"heading": "DEEPSEC: A Uniform Platform for Security Analysis of Deep Learning Model",
           "text": "# 論文資訊\n- 作者：Xiang Ling, Shouling Ji, Ting Wang\n"
                   "- 研究機構：Zhejiang University, UIUC, Lehigh University\n- 會議/期刊：IEEE S&P 2019\n",
           "lang": "zh-Hant"}
    out = extract_fields(row, "zh-Hant", Config())
    assert out["year"] == 2019
    assert out["venue"] == "S&P"  # the line's name without its publisher and year
    assert out["institutions"] == ["Zhejiang University", "UIUC", "Lehigh University"]


@pytest.mark.parametrize(
    ("heading", "text", "venue", "year"),
    [
        # two dated venue mentions by the title: the one nearest the title is the paper's edition
        ("Adam: A Method for Stochastic Optimization",
         "The 2025 ICLR test of time award winners were Diederik Kingma and Jimmy Ba, for their 2015 ICLR "
         "paper Adam: A Method for Stochastic Optimization (arXiv).", "ICLR", 2015),
        # the edition year before the venue's written-out name, its acronym in brackets after it
        ("Probing Linguistic Information for Logical Inference in Pre-trained Language Models",
         "This is in addition to their paper, “Probing Linguistic Information for Logical Inference in "
         "Pre-trained Language Models,” which was presented at the 2022 Conference of the Association for "
         "the Advancement of AI (AAAI), another top-tier conference.", "AAAI", 2022),
        ("Curriculum: A Broad-Coverage Benchmark for Linguistic Phenomena in Natural Language Understanding",
         "Their most recent paper, “Curriculum: A Broad-Coverage Benchmark for Linguistic Phenomena in Natural "
         "Language Understanding,” was accepted at the main track of the 2022 Annual Conference of the North "
         "American Chapter of the Association for Computational Linguistics (NAACL).", "NAACL", 2022),
    ],
)
def test_venue_and_year_by_the_title_in_prose(heading: str, text: str, venue: str, year: int) -> None:
    out = extract_fields({"heading": heading, "text": text, "lang": "en"}, "zh-Hans", Config())
    assert (out["venue"], out["year"]) == (venue, year)


def test_venue_and_year_from_a_reference_tail_that_sets_them_apart() -> None:
    """"Title. In EMNLP W-NUT Workshop 2019.": the tail's venue and its one year."""
    heading = "2. Exploiting BERT for End-to-End Aspect-based Sentiment Analysis. In EMNLP W-NUT Workshop 2019."
    out = extract_fields({"heading": heading, "text": heading + "\n这篇文章用 BERT 做端到端的方面级情感分析。",
                          "lang": "zh-Hans"}, "zh-Hans", Config())
    assert out["title"] == "Exploiting BERT for End-to-End Aspect-based Sentiment Analysis"
    assert (out["venue"], out["year"]) == ("EMNLP", 2019)


@pytest.mark.parametrize(
    ("line", "venue", "year"),
    [
        ("* 我们的论文“Forgotten Horizons in Concept Erasure”已被CCF-A类期刊IEEE Transactions on Information "
         "Forensics & Security (TIFS)录用！", "TIFS", None),
        ("* 我们的论文《基于上下文扩图的小样本遥感指代分割》已被 2026年中国多媒体大会（ChinaMM26）录用。恭喜张三！",
         "ChinaMM", 2026),
        ("* 我们的论文“Heterogeneous Knowledge Distillation for Remote Sensing Object Detection”已被中科院一区TOP期刊"
         "Pattern Recognition录用。", "Pattern Recognition", None),
        ("* 我们的论文“Boosting Large Vision-Language Models for Remote Sensing Visual Question Answering”已被IEEE "
         "Geoscience and Remote Sensing Letters期刊录用。", "GRSL", None),
    ],
)
def test_venue_a_lab_news_line_says_accepted_the_paper(line: str, venue: str, year: int | None) -> None:
    """"论文…已被 <venue> 录用" on the title's line: the listed venue, the acronym in brackets, a
    venue written in full, or the name after a description."""
    heading = re.search(r"[“《](.+?)[”》]", line).group(1)  # the section is titled by the quoted title
    out = extract_fields({"heading": heading, "text": line, "lang": "zh-Hans"}, "zh-Hans", Config())
    assert (out["venue"], out["year"]) == (venue, year)


def test_undated_venue_on_the_papers_own_line_beats_the_documents() -> None:
    """A paper's own line names its venue without a year: that venue, and not the year the
    document gives another venue."""
    row = {"heading": "Gated Attention for Large Language Models: Non-linearity, Sparsity, and Attention-Sink-Free",
           "text": "Gated Attention for Large Language Models: Non-linearity, Sparsity, and Attention-Sink-Free\n"
                   "paper: https://arxiv.org/abs/2505.06708, neurips submission\n",
           "lang": "en", "doc_venue": "ICML", "doc_year": 2025}
    out = extract_fields(row, "zh-Hans", Config())
    assert (out["venue"], out["year"]) == ("NeurIPS", None)


def test_year_after_a_title_and_one_word_on_its_line() -> None:
    """"[Title](url)，部落格，2025-05-27": a date after one short word on the title's line."""
    line = "[偽獎勵：重新思考 RLVR 的訓練信號](https://github.com/x/y)，部落格，2025-05-27"
    out = extract_fields({"heading": "偽獎勵：重新思考 RLVR 的訓練信號", "text": line, "lang": "zh-Hant"},
                         "zh-Hant", Config())
    assert out["year"] == 2025


def test_year_from_a_bibtex_entry() -> None:
    """A BibTeX entry in the section dates the paper when nothing else does."""
    text = ("虛假獎勵：重新思考 RLVR 中的訓練訊號\n這裡是我們論文的連結。\n@misc{shao2025spurious,\n"
            "      title={Spurious Rewards: Rethinking Training Signals in RLVR},\n      year={2025},\n}")
    out = extract_fields({"heading": "虛假獎勵：重新思考 RLVR 中的訓練訊號", "text": text, "lang": "zh-Hant"},
                         "zh-Hant", Config())
    assert out["year"] == 2025


def test_full_title_quoted_a_few_lines_under_a_short_name() -> None:
    """A project's README titled by the short name quotes the full title after a links line."""
    text = ("SinGAN\n[專案](https://x.io/s) | [Arxiv](https://arxiv.org/pdf/1905.01164.pdf)\n"
            '### 論文官方 pytorch 實現："SinGAN: Learning a Generative Model from a Single Natural Image"\n')
    out = extract_fields({"heading": "SinGAN", "text": text, "lang": "zh-Hant"}, "zh-Hant", Config())
    assert out["title"] == "SinGAN: Learning a Generative Model from a Single Natural Image"


def test_credit_line_under_a_dateline_and_affiliations_under_it() -> None:
    """A short dateline may come before the credit line, and a line of affiliations set off by
    semicolons under it gives the institutions."""
    text = ("CVPR 2024 11 Jun 2024\n"
            "Youwei Liang, Junfeng He, Gang Li, Peizhao Li\n"
            "University of California, San Diego; Google Research; University of Cambridge\n"
            "Recent Text-to-Image generation models have made significant progress.")
    out = extract_fields({"heading": "Rich Human Feedback for Text-to-Image Generation", "text": text, "lang": "en"},
                         "zh-Hans", Config())
    assert out["authors"] == ["Youwei Liang", "Junfeng He", "Gang Li", "Peizhao Li"]
    assert out["institutions"] == ["University of California, San Diego", "Google Research", "University of Cambridge"]


def test_authors_linked_with_a_comma_and_nbsp_between_them() -> None:
    text = ('## Scaling Sparse Experts\nAuthors: <a href="https://alice.example.com">Alice Wang</a>,&nbsp;'
            '<a href="https://bob.example.com">Bob Li</a>&nbsp;&nbsp;<a href="https://carol.example.com">Carol Zhang</a>\n')
    assert _section("Scaling Sparse Experts", text)["authors"] == ["Alice Wang", "Bob Li", "Carol Zhang"]


def test_a_table_rows_date_and_institute_columns_give_its_year_and_institution() -> None:
    """An awesome list's milestone table ("| Date | keywords | Institute | Paper |", real:
    h22-hannibal-awesome-llm): the row's Date is its paper's year, its Institute an institution."""
    from pathlib import Path

    from pipeline.clean import find_dropped
    from pipeline.segment import segment_document

    path = Path(__file__).parent / "fixtures/real/dev/h22-hannibal-awesome-llm/awesome-llm-milestones-to-dpo.md"
    text = path.read_text(encoding="utf-8")
    sections = segment_document(text, find_dropped(text, Config()))["sections"]
    out = {o["title"]: (o["year"], o["institutions"]) for o in (_section(s["heading"], s["text"]) for s in sections)}
    assert out["Attention Is All You Need"] == (2017, ["Google"])
    assert out["Megatron-LM: Training Multi-Billion Parameter Language Models Using Model Parallelism"] == (2019, ["NVIDIA"])


def test_a_presenter_named_in_a_venue_label_is_the_papers_author() -> None:
    """Conference notes head each poster "ICLR2025 Hu: title" (real notes: h21-jemoka-iclr25-posters):
    the name between the venue edition and the colon is who presented it, its only credit; a
    track word there ("Oral", "Best Paper") is no name."""
    out = _section("## ICLR2025 Hu: belief state transformer {#iclr2025-hu-belief-state-transformer}",
                   "Predict the next token and the previous token with two heads.")
    assert (out["title"], out["authors"]) == ("belief state transformer", ["Hu"])
    out = _section("## CVPR 2024 Oral: Rich Human Feedback for Text-to-Image Generation", "A reward model for images.")
    assert (out["title"], out["authors"]) == ("Rich Human Feedback for Text-to-Image Generation", [])


def test_an_award_header_closing_with_an_empty_anchor_is_an_award_header() -> None:
    """"## 1. Test of Time Award <a id="tot"></a>" (an awesome list's section with its anchor):
    the anchor is no text of the heading."""
    from pipeline.textutil import plain

    assert plain('## 1. Test of Time Award <a id="tot"></a>') == "1. Test of Time Award"
    assert plain("## Results <a name='res'></a>") == "Results"


@pytest.mark.parametrize("label", ["CVPR2024 Honorable Mention", "ICML 2024 Test of Time", "NeurIPS 2024 Runner Up",
                                   "ICCV 2023 Marr Prize", "ACL 2024 Outstanding", "CVPR 2024 Keynote",
                                   "ICLR 2025 Invited Talk", "NeurIPS 2024 Tutorial"])
def test_an_award_or_a_session_in_a_venue_label_is_no_presenter(label: str) -> None:
    """An award ("Honorable Mention", "Test of Time") or a session ("Keynote") between the venue
    edition and the colon is no person: they gave their papers the authors "Honorable Mention",
    "Time", "Runner Up"."""
    out = _section(f"## {label}: Generative Image Dynamics for Video Synthesis", "A paper about animating pictures.")
    assert (out["title"], out["authors"]) == ("Generative Image Dynamics for Video Synthesis", [])


@pytest.mark.parametrize("line", ["日期: 2023", "日期：2026-01-16", "Date: 2023-10-03"])
def test_a_date_metadata_line_dates_a_record_that_names_no_venue(line: str) -> None:
    """A thesis record: 題名 / 作者 / 日期, no venue anywhere: its date gives the year."""
    text = f"題名: 基於自監督學習之生成語言模型序列文本知識更新\n作者: 宋浩茹\n{line}\n摘要: 本研究提出新的任務。"
    row = {"heading": text.split("\n", 1)[0], "text": text, "ctx_award_raw": None, "doc_venue": None, "doc_year": None}
    assert fields(row, "zh-Hant")["year"] == int(line.split(":")[-1].split("：")[-1].strip()[:4])


def test_credit_between_dashes_on_the_title_line_of_a_table_row() -> None:
    """A one-column table row read as "#: 1 / Summary: **Title** – *A, B* – Keywords: … – summary":
    the names between the first two dashes of the title's line are its authors."""
    text = ("#: 1\nOne-Sentence Summary: Sparse Widgets for Dense Retrieval – *Ann Lee, Bo Chen Wu* – "
            "Keywords: retrieval, sparsity – *The paper shows that sparse widgets help.*")
    out = extract_fields({"heading": "Sparse Widgets for Dense Retrieval", "text": text, "lang": "en"}, "zh-Hans", Config())
    assert out["authors"] == ["Ann Lee", "Bo Chen Wu"]
    # a description between the dashes is no credit
    text = text.replace("*Ann Lee, Bo Chen Wu*", "A new method for sparse retrieval")
    out = extract_fields({"heading": "Sparse Widgets for Dense Retrieval", "text": text, "lang": "en"}, "zh-Hans", Config())
    assert out["authors"] == []


def test_a_venue_tag_the_venue_list_does_not_know_names_the_venue_and_year() -> None:
    """"### [Nature Communications 2024] Title": a journal in the tag is the venue; a publisher
    alone ("[IEEE 2024]") dates the paper and names no venue."""
    for tag, venue in (("Nature Communications 2024", "Nature Communications"), ("IEEE 2024", None)):
        text = f"### [{tag}] Spike-based dynamic computing with asynchronous chips\n_Man Yao, Ole Richter_\n"
        out = extract_fields({"heading": f"[{tag}] Spike-based dynamic computing with asynchronous chips",
                              "text": text, "lang": "en"}, "zh-Hans", Config())
        assert (out["venue"], out["year"]) == (venue, 2024)


def test_the_documents_venue_is_not_given_to_a_paper_of_another_year() -> None:
    row = {"heading": "KinectFusion: Real-Time Dense Surface Mapping and Tracking",
           "text": "1. 2011-KinectFusion: Real-Time Dense Surface Mapping and Tracking", "lang": "en",
           "doc_venue": "CVPR", "doc_year": 2015}
    out = extract_fields(row, "zh-Hans", Config())
    assert (out["venue"], out["year"]) == (None, 2011)
    out = extract_fields({**row, "text": "1. KinectFusion: Real-Time Dense Surface Mapping and Tracking"}, "zh-Hans", Config())
    assert (out["venue"], out["year"]) == ("CVPR", 2015)


def test_first_author_and_venue_in_a_bracket_after_a_linked_title() -> None:
    """A reading list's "[Title](url) (First Author, VENUE YEAR, [note](…))": that author, the list
    truncated; a bracket of words that are no name gives none."""
    def fields(after: str) -> dict:
        line = f"- [A Primer in Widgetology: What We Know About Widgets](https://arxiv.org/pdf/2002.12327.pdf) {after}"
        return extract_fields({"heading": "A Primer in Widgetology: What We Know About Widgets", "text": line,
                               "lang": "en"}, "zh-Hans", Config())
    out = fields("(Anna Rogers, TACL 2020, [note](https://example.org/n))")
    assert (out["authors"], out["authors_truncated"], out["year"]) == (["Anna Rogers"], True, 2020)
    assert fields("(Peter F. Brown, CL 1992)")["authors"] == ["Peter F. Brown"]
    assert fields("(Stanford University, 2020)")["authors"] == []


@pytest.mark.parametrize(("line", "title", "authors", "venue", "year"), [
    ('1. LeCun, Yann, Yoshua Bengio, and Geoffrey Hinton. "Deep learning." Nature 521.7553 (2015): 436-444. [pdf]',
     "Deep learning", ["LeCun, Yann", "Yoshua Bengio", "Geoffrey Hinton"], "Nature", 2015),
    ('2. Szegedy, Christian, et al. "Going deeper with convolutions." Proceedings of the IEEE Conference on '
     "Computer Vision and Pattern Recognition. 2015.", "Going deeper with convolutions", ["Szegedy, Christian"], "CVPR", 2015),
    ("3. Deng J, Dong W, Socher R, et al. Imagenet: A large-scale hierarchical image database[C]//2009 IEEE conference "
     "on computer vision and pattern recognition. Ieee, 2009: 248-255.",
     "Imagenet: A large-scale hierarchical image database", ["Deng J", "Dong W", "Socher R"], "CVPR", 2009),
    ("4. Vaswani, A., Shazeer, N., & Parmar, N. (2017). Attention is all you need. Advances in NeurIPS.",
     "Attention is all you need", ["Vaswani, A", "Shazeer, N", "Parmar, N"], "NeurIPS", 2017),
])
def test_formatted_references_mla_gbt_apa(line: str, title: str, authors: list[str], venue: str, year: int) -> None:
    """A reading list written as references (MLA, GB/T 7714, APA): the title, then the authors
    before it, the venue and the year after it."""
    from pipeline.candidates import citation_title

    assert citation_title(line.split(". ", 1)[1]) == title
    out = extract_fields({"heading": title, "text": line, "lang": "en"}, "zh-Hans", Config())  # (the segmenter's heading)
    assert (out["title"], out["authors"], out["venue"], out["year"]) == (title, authors, venue, year)


def test_a_preprint_tag_opening_a_list_item_dates_the_paper() -> None:
    """"- [arXiv 2019] Title": the item's title (the section's heading) lost the tag; its line keeps it."""
    out = extract_fields({"heading": "Widget Transformers for Sparse Parsing",
                          "text": "- [arXiv 2019] Widget Transformers for Sparse Parsing", "lang": "en",
                          "doc_venue": "ACL", "doc_year": 2023}, "zh-Hans", Config())
    assert (out["venue"], out["year"]) == (None, 2019)


def test_a_references_tail_of_commas_costs_linear_time() -> None:
    """The volume-tail pattern starts where a run of spaces, commas and periods starts: a
    reference whose tail is 40,000 commas took seconds (each start in the run scanned the rest)."""
    import time

    from pipeline.extract import _reference_fields

    def seconds(n: int) -> float:
        line = "Lee, A. (2020). Sparse codes for widget parsing. " + ", " * n
        start = time.thread_time()
        _reference_fields(line, "Sparse codes for widget parsing")
        return time.thread_time() - start

    small, large = min(seconds(10_000) for _ in range(2)), min(seconds(40_000) for _ in range(2))
    assert large / small < 8.0, (small, large)  # 4 times longer; quadratic: 16 times
    line = "Lee, A., & Chen, B. (2020). Sparse codes for widget parsing. Journal of Machine Learning Research, 3(2), 1-9."
    assert _reference_fields(line, "Sparse codes for widget parsing") == (["Lee, A", "Chen, B"], False, "JMLR", 2020)


def test_a_gbt_reference_with_one_author_or_han_authors_gives_its_title_and_authors() -> None:
    """GB/T 7714 references by one author ("He K. Title[C]//CVPR. 2016.", "张三. 标题[J]. …") kept
    the author in the title and gave no fields, and two Han names were joined as MLA's inverted
    first author ("张三, 李四")."""
    from pipeline.candidates import citation_title
    from pipeline.extract import _reference_fields

    cases = [
        ("He K. Deep residual learning for image recognition[C]//CVPR. 2016.",
         "Deep residual learning for image recognition", (["He K"], False, "CVPR", 2016)),
        ("张三. 稀疏编码在部件解析中的应用研究[J]. 计算机学报, 2020, 43(2): 1-9.",
         "稀疏编码在部件解析中的应用研究", (["张三"], False, "计算机学报", 2020)),
        ("张三, 李四. 稀疏编码在部件解析中的应用研究[J]. 计算机学报, 2020.",
         "稀疏编码在部件解析中的应用研究", (["张三", "李四"], False, "计算机学报", 2020)),
        ('LeCun, Yann. "Deep learning for widget parsing." Nature, 2015.',
         "Deep learning for widget parsing", (["LeCun, Yann"], False, "Nature", 2015)),
    ]
    for line, title, fields in cases:
        assert citation_title(line) == title
        assert _reference_fields(line, title) == fields
    assert citation_title("Deep Learning. Sparse codes for widgets[J]. J, 2020") == "Deep Learning. Sparse codes for widgets"


def test_a_year_alone_above_the_titles_line_dates_the_paper() -> None:
    """A header-less table row read as one cell a line ("| **2018** | [Title](…) | A, Univ |")."""
    text = "2018\n[Memory-Augmented Widget Search](https://example.org/p)\nChenjun Xiao, University of Alberta"
    out = extract_fields({"heading": "Memory-Augmented Widget Search", "text": text, "lang": "en"}, "zh-Hans", Config())
    assert out["year"] == 2018
    text = "2018 and beyond\n[Memory-Augmented Widget Search](https://example.org/p)"
    assert extract_fields({"heading": "Memory-Augmented Widget Search", "text": text, "lang": "en"},
                          "zh-Hans", Config())["year"] is None


def test_a_references_own_year_outranks_the_documents_venue_edition() -> None:
    line = "- Jane Doe and Kim Lee. 2025. Sparse Codes for Widget Parsing. In Proceedings of the ACM Conference on Widgets."
    row = {"heading": "Sparse Codes for Widget Parsing", "text": line, "lang": "en", "doc_venue": "CVPR", "doc_year": 2016}
    out = extract_fields(row, "zh-Hans", Config())
    assert (out["venue"], out["year"], out["authors"]) == (None, 2025, ["Jane Doe", "Kim Lee"])
