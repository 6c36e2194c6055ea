"""Credits, awards and venue years stated in prose (issue 4): :func:`pipeline.credits.find_credit`,
:func:`pipeline.credits.parse_credit_line`, :func:`pipeline.nlp.stated_award`,
:func:`pipeline.fields.lead_award`, :func:`pipeline.fields.find_dated_venue_years`, and how
extract and segment use them. Sentences are quoted from the segmentation fixtures (the fixture
number is given) or written as traps."""

from __future__ import annotations

import pytest

from pipeline import nlp
from pipeline.candidates import candidate_of
from pipeline.config import Config
from pipeline.credits import affiliation_line, find_credit, maker_credit, parse_credit_line
from pipeline.extract import extract_fields
from pipeline.fields import (
    find_dated_venue_years,
    lead_award,
    normalize_award,
    split_sentences,
)
from pipeline.names import is_institution, split_names
from pipeline.prose import find_paper_mentions
from pipeline.segment import kept_lines, segment_document


def credit(text):
    c = find_credit(text)
    return None if c is None else (c.authors, c.truncated, c.institutions)


@pytest.mark.parametrize(("text", "expected"), [
    # English (fixtures 07, 09, 19, 20, 23, 03)
    ("Kingma and Ba combined momentum with per-parameter step sizes.", (["Kingma", "Ba"], False, [])),
    ("Bahdanau, Cho and Bengio let the decoder attend to different parts of the source sentence.",
     (["Bahdanau", "Cho", "Bengio"], False, [])),
    ("Szegedy and colleagues showed that tiny perturbations can flip a prediction.", (["Szegedy"], True, [])),
    ("Rafailov and colleagues at Stanford show that the RLHF objective can be optimized.",
     (["Rafailov"], True, ["Stanford"])),
    ('In "Mission: Impossible Language Models", Julie Kallini and colleagues at Stanford University and '
     "other institutions built a family of synthetic languages.", (["Julie Kallini"], True, ["Stanford University"])),
    ('Another winner, "Why are Sensitive Functions Hard for Transformers?" by Michael Hahn and Mark Rofin of '
     "Saarland University, gives a theoretical account.", (["Michael Hahn", "Mark Rofin"], False, ["Saarland University"])),
    ("Ten years on, the word2vec paper by Tomas Mikolov and colleagues was honored.", (["Tomas Mikolov"], True, [])),
    ("Researchers at the University of Toronto show how a single-photon camera can capture scene dynamics.",
     ([], False, ["University of Toronto"])),
    ("A team from the National University of Singapore and Sea AI Lab uses Taylor-mode automatic differentiation.",
     ([], False, ["National University of Singapore", "Sea AI Lab"])),
    ("Meta AI released a promptable segmentation model together with SA-1B.", ([], False, ["Meta AI"])),
    # Chinese (fixtures 05, 08, 12, 14, 17, 18, 21, 22, 26)
    ("上海人工智能实验室、武汉大学与商汤科技的研究者提出 UniAD。", ([], False, ["上海人工智能实验室", "武汉大学", "商汤科技"])),
    ("艾伦人工智能研究所提出的 VisProg 让大语言模型把自然语言指令写成程序。", ([], False, ["艾伦人工智能研究所"])),
    ("来自 Google 与康奈尔大学的研究者针对动态场景的长视频提出新视角合成方法。", ([], False, ["Google", "康奈尔大学"])),
    ("這項来自中国科学技术大学和新加坡国立大学等机构的工作，把知识编辑的参数更新投影到零空间上。",
     ([], False, ["中国科学技术大学", "新加坡国立大学"])),
    ("擴散模型為什麼不只是背下訓練資料？紐約大學與法國高等師範學院等機構的研究者發現。",
     ([], False, ["紐約大學", "法國高等師範學院"])),
    ("阿里巴巴通义千问团队等系统比较了多种门控注意力变体。", ([], False, ["阿里巴巴通义千问团队"])),
    ("在 NeurIPS 2023 公布的获奖名单中，由斯坦福大学 Rylan Schaeffer、Brando Miranda 与 Sanmi Koyejo 共同完成的"
     "《Are Emergent Abilities of Large Language Models a Mirage?》获得杰出论文奖，论文一作为斯坦福大学计算机系博士生 Rylan Schaeffer。",
     (["Rylan Schaeffer", "Brando Miranda", "Sanmi Koyejo"], False, ["斯坦福大学"])),
    ("同期获得杰出论文奖的还有 Google 研究者 Thomas Steinke、Milad Nasr 和 Matthew Jagielski 合作的《Privacy Auditing with One (1) Training Run》。",
     (["Thomas Steinke", "Milad Nasr", "Matthew Jagielski"], False, ["Google"])),
    ("英屬哥倫比亞大學博士生 Yi Ren 與指導教授 Danica J. Sutherland 共同完成的《Learning Dynamics of LLM Finetuning》，獲得傑出論文獎。",
     (["Yi Ren", "Danica J. Sutherland"], False, ["英屬哥倫比亞大學"])),
    ("同屆榮譽提名則包括普林斯頓大學 Jiachen T. Wang 等人的《Data Shapley in One Training Run》，論文一作為 Jiachen T. Wang。",
     (["Jiachen T. Wang"], True, ["普林斯頓大學"])),
    ("此外，Meta 的《SAM 2: Segment Anything in Images and Videos》也獲得榮譽提名。", ([], False, ["Meta"])),
    ("Kingma 與 Welling 在 2013 年提出的重參數化技巧，讓變分推論可以直接用反向傳播訓練。", (["Kingma", "Welling"], False, [])),
    ("Ilya Sutskever、Oriol Vinyals 与 Quoc V. Le 的《Sequence to Sequence Learning with Neural Networks》。",
     (["Ilya Sutskever", "Oriol Vinyals", "Quoc V. Le"], False, [])),
    ("由 Cohere For AI 主導的 Aya 計畫發布了涵蓋 101 種語言的指令微調模型。", ([], False, ["Cohere For AI"])),
    ("慕尼黑大學團隊的《High-Resolution Image Synthesis with Latent Diffusion Models》。", ([], False, ["慕尼黑大學"])),
    # a clause that ends with where the work comes from; a first author right after the role
    ("论文作者来自甲乙大学、丙丁研究院。", ([], False, ["甲乙大学", "丙丁研究院"])),
    ("研究机构来自甲乙大学、Acme AI Lab 等，共同一作Ann Lee、Bo Chen。", (["Ann Lee", "Bo Chen"], True, ["甲乙大学", "Acme AI Lab"])),
    ("甲乙大学研究团队完成，论文共同一作Ann Lee、Bo Chen。", (["Ann Lee", "Bo Chen"], True, ["甲乙大学"])),
    # Latin names right after the role, up to the first word that is not one; a corresponding author
    ("其中一作Ann Lee 目前是甲乙大学的硕士生。", (["Ann Lee"], True, [])),
    ("来自甲乙大学等，三位一作Ann Lee、Bo Chen（陈博）、Cy Diaz皆为甲乙大学学生。", (["Ann Lee", "Bo Chen", "Cy Diaz"], True, ["甲乙大学"])),
    ("论文一作Ann Lee；通讯作者田甲，现任甲乙大学教授。", (["Ann Lee", "田甲"], True, [])),
    # a joint work: the places that made it together, a short-form gloss dropped, an acronym's
    # expansion kept, "<someone>所在的<place>" read as the place
    ("甲乙人工智能实验室(甲乙AI实验室)、丙丁大学及戊己科技联合提出的自动驾驶模型获得最佳论文奖。",
     ([], False, ["甲乙人工智能实验室", "丙丁大学", "戊己科技"])),
    ("3D 视觉迎来巨变。甲乙大学 VGG (Visual Geometry Group) 与 Acme AI 团队联合发布的最新研究 X，提出了新方法。",
     ([], False, ["甲乙大学 VGG (Visual Geometry Group)", "Acme AI"])),
    ("**A Title of a Paper** ，由Acme、苹果与丙丁大学研究人员联合完成。", ([], False, ["Acme", "苹果", "丙丁大学"])),
    ("最佳論文由田某所在的甲乙技術部門與丙丁大學合作發表，論文題目《某某》。", ([], False, ["甲乙技術部門", "丙丁大學"])),
    # a team named by its company is the company, a description before the name dropped
    ("由大陸AI新創企業Acme團隊完成的推理模型研究論文，登上了期刊封面。", ([], False, ["Acme"])),
    ("该论文由 Acme AI 团队完成。", ([], False, ["Acme AI"])),
])
def test_find_credit(text, expected):
    assert credit(text) == expected


@pytest.mark.parametrize("text", [
    # people named in prose who are not the authors
    "Goodfellow 在采访中说，这个想法来自一次酒吧聊天。",
    "在很多读者心中，Goodfellow 的名字还与教材《深度学习》（Deep Learning）联系在一起，这本书由他与 Yoshua Bengio、Aaron Courville 合著。",
    # organisations that use the work, not the authors' affiliation
    "许多公司，例如 Google 的研究者也在使用这一方法。",
    "该团队与普林斯顿大学的研究者合作完成了实验。",
    "他们和很多人合作完成了这项工作。",
    "这两个团队联合发布了新模型。",
    "論文採用了基於 Anthropic 提出的一個玩具模型架構。",
    # generic subjects and model names
    "研究團隊從大量真實影片中學習場景運動的先驗。",
    "这篇论文提出给大模型输出加水印的方法。",
    "UniSim 把影像、影片、導航與機器人操作等多種資料整合成「動作—觀測」的形式。",
    "VideoPoet 把图像、视频和音频都转换成离散 token。",
    "The authors audit a differentially private training algorithm in a single training run.",
    "DPO replaces the reward model and reinforcement learning loop of RLHF.",
    "ControlNet attaches a trainable copy of a pretrained diffusion model's encoder.",
    "Vision and Language models are trained on paired data.",
    "Guiding a diffusion model with a smaller copy of itself improves image quality.",
    # 来自 that names no origin of the work
    "他的灵感来自于一次旅行，后来写成了论文。",
    "这些数据来自互联网。",
])
def test_find_credit_traps(text):
    assert find_credit(text) is None


def test_credit_line():
    c = parse_credit_line("Lvmin Zhang, Anyi Rao and Maneesh Agrawala, Stanford University")
    assert (c.authors, c.truncated, c.institutions) == (
        ["Lvmin Zhang", "Anyi Rao", "Maneesh Agrawala"], False, ["Stanford University"])
    c = parse_credit_line("Diederik P. Kingma and Max Welling, University of Amsterdam. arXiv: 1312.6114")
    assert (c.authors, c.institutions) == (["Diederik P. Kingma", "Max Welling"], ["University of Amsterdam"])
    c = parse_credit_line("Tom B. Brown, Benjamin Mann, Nick Ryder, Melanie Subbiah and 27 other authors, OpenAI")
    assert (c.authors[-1], c.truncated, c.institutions) == ("Melanie Subbiah", True, ["OpenAI"])
    c = parse_credit_line("Angelina Wang et al., Stanford University")
    assert (c.authors, c.truncated, c.institutions) == (["Angelina Wang"], True, ["Stanford University"])
    c = parse_credit_line("Mei Lin, Kai Sun, Wei Zhang, & Ann Lee")  # a serial comma before "&"
    assert (c.authors, c.institutions) == (["Mei Lin", "Kai Sun", "Wei Zhang", "Ann Lee"], [])
    for line in ("Vision Transformers Need Registers, Meta AI", "Attention Is All You Need",
                 "ControlNet attaches a trainable copy of the encoder.", "Home | News | About"):
        assert parse_credit_line(line) is None


def test_credit_line_bare_initials_accented_names_capitals_and_long_lists():
    c = parse_credit_line("Anna Kowalska, Piotr J Nowak, Oskar Lindqvist")
    assert (c.authors, c.institutions) == (["Anna Kowalska", "Piotr J Nowak", "Oskar Lindqvist"], [])
    c = parse_credit_line("Jana Novaković, Łukasz Wiśniewski and Tomáš Dvořák")
    assert c.authors == ["Jana Novaković", "Łukasz Wiśniewski", "Tomáš Dvořák"]
    c = parse_credit_line("Mei Lin, WEI ZHANG, Kai Sun, Acme Research")
    assert (c.authors, c.institutions) == (["Mei Lin", "WEI ZHANG", "Kai Sun"], ["Acme Research"])
    names = [f"Person{chr(97 + k)} Surname{chr(97 + k)}" for k in range(20)]  # 20 names, over 200 characters
    c = parse_credit_line(", ".join(names[:-1]) + " and " + names[-1])
    assert c.authors == names
    # a capitals-only item with no person after it is no author
    assert parse_credit_line("Mei Lin, Kai Sun, NEW DATASET").institutions == ["NEW DATASET"]
    for line in ("Towards A Better Model, Acme Lab", "A Study Of Things And More Things"):
        assert parse_credit_line(line) is None


def test_credit_line_with_bracketed_affiliations_and_chinese_others():
    c = parse_credit_line("Ann Lee, Bo Chen, Cy Diaz（Acme Lab / Big University）")
    assert (c.authors, c.truncated, c.institutions) == (["Ann Lee", "Bo Chen", "Cy Diaz"], False,
                                                        ["Acme Lab", "Big University"])
    c = parse_credit_line("Ann Lee, Bo Chen 等 30+ 位共同作者")
    assert (c.authors, c.truncated, c.institutions) == (["Ann Lee", "Bo Chen"], True, [])
    c = parse_credit_line("Ann Lee 等（Big University）")
    assert (c.authors, c.truncated, c.institutions) == (["Ann Lee"], True, ["Big University"])
    for line in ("Deep Learning (Second Edition)", "Sparse Coding For Parsing (ACL 2023)", "等（清华大学）"):
        assert parse_credit_line(line) is None
    # a note in brackets is no affiliation
    c = parse_credit_line("Ann Lee, Bo Chen (Second Edition)")
    assert (c.authors, c.institutions) == (["Ann Lee", "Bo Chen"], [])
    assert parse_credit_line("Ann Lee, Bo Chen（2013 年發表）").institutions == []


def test_chinese_names_with_their_institutions_or_deng_are_a_credit_line():
    c = parse_credit_line("田甲, 李乙（北京大学 / 某某科技）")
    assert (c.authors, c.truncated, c.institutions) == (["田甲", "李乙"], False, ["北京大学", "某某科技"])
    c = parse_credit_line("田甲, 李乙 等 30+ 位共同作者")
    assert (c.authors, c.truncated) == (["田甲", "李乙"], True)
    # short words in a list, with no institution and no 等, are not people
    assert parse_credit_line("图像、视频（综述）") is None and parse_credit_line("图像、视频、文本") is None


def test_credit_after_the_title_on_its_line_before_a_description():
    row = {"heading": "Sparse Codes for Incremental Parsing",
           "text": "1. **Sparse Codes for Incremental Parsing** — Ann Lee, Bo Chen（Acme Lab）。提出一種新的表示方法。",
           "ctx_award_raw": None, "lead_award_raw": None, "doc_venue": None, "doc_year": None, "lang": "zh-Hant"}
    out = extract_fields(row, "zh-Hant", Config())
    assert (out["authors"], out["institutions"]) == (["Ann Lee", "Bo Chen"], ["Acme Lab"])


def test_credit_in_brackets_after_the_title_with_places_after_deng():
    """"**Title**（A 等，Org1 / Org2）——description": the bracket right after the title holds
    the credit, and the places follow 等 after a comma."""
    c = parse_credit_line("Ann Lee 等，UW / AI2")
    assert (c.authors, c.truncated, c.institutions) == (["Ann Lee"], True, ["UW", "AI2"])
    c = parse_credit_line("田甲、李乙等，某某大学")
    assert (c.authors, c.truncated, c.institutions) == (["田甲", "李乙"], True, ["某某大学"])
    assert parse_credit_line("Ann Lee 等, 2023") is None  # a year is no place
    row = {"heading": "Sparse Codes for Incremental Parsing",
           "text": "- **Sparse Codes for Incremental Parsing**（Ann Lee 等，UW / AI2）——用一個新框架測試模型。",
           "ctx_award_raw": None, "lead_award_raw": None, "doc_venue": None, "doc_year": None, "lang": "zh-Hant"}
    out = extract_fields(row, "zh-Hant", Config())
    assert (out["authors"], out["authors_truncated"], out["institutions"]) == (["Ann Lee"], True, ["UW", "AI2"])


def test_split_names_et_al_before_affiliation():
    assert split_names("Angelina Wang et al., Stanford University") == (["Angelina Wang", "Stanford University"], True)
    assert split_names("Ashish Vaswani 等八人") == (["Ashish Vaswani"], True)
    assert split_names("Mei Lin\\*, Kai Sun\\*, Ann Lee") == (["Mei Lin", "Kai Sun", "Ann Lee"], False)
    assert is_institution("Stanford University") and is_institution("斯坦福大学")
    assert not is_institution("Angelina Wang")


def _stated_award(paragraph: str) -> str | None:
    found = nlp.stated_award(nlp.parse_section(paragraph, "zh-Hans"), 0, len(paragraph))
    return found.value if found else None


def test_awards_in_prose_and_lead():
    assert normalize_award("最佳學生論文") == "other"
    assert normalize_award("Best Student Paper") == "other"
    assert normalize_award("two runners-up") == "best_paper_runner_up"
    assert _stated_award("同屆榮譽提名則包括普林斯頓大學 Jiachen T. Wang 等人的《X》。") == "honorable_mention"
    assert _stated_award("该论文获得杰出论文奖。") == "outstanding_paper"
    assert _stated_award("该方法的效果超过了去年的最佳论文。") is None  # a mention, no award verb
    assert normalize_award(lead_award(
        "Two NeurIPS 2023 runners-up worth your time\n"
        "NeurIPS 2023 named two runners-up for its outstanding main track paper award.")) == "best_paper_runner_up"
    assert normalize_award(lead_award("The ACL 2024 best paper awards went to several papers.")) == "best_paper"
    assert lead_award("ICML 2023 杰出论文与时间检验奖一览") is None  # two awards: none for all papers
    assert lead_award("ICLR 2025 三篇獲獎論文") is None


def test_dated_venue_years_and_sentences():
    assert find_dated_venue_years("2024 年 12 月，NeurIPS 把时间检验奖颁给了两篇 2014 年的论文。") == [("NeurIPS", 2024)]
    assert find_dated_venue_years("In December 2024, NeurIPS honored two papers.") == [("NeurIPS", 2024)]
    assert find_dated_venue_years("NeurIPS 把奖颁给了两篇 2014 年的论文。") == []  # a bare year is a paper's
    assert split_sentences("由 Quoc V. Le 完成。Szegedy et al. showed it. Done.") == [
        "由 Quoc V. Le 完成。", "Szegedy et al. showed it.", " Done."]


def test_narrative_cuts_at_sentence_and_clause():
    para = ("2024 年 12 月，NeurIPS 把时间检验奖颁给了两篇论文：Ian Goodfellow 等人的《Generative Adversarial Nets》"
            "（生成对抗网络），以及 Ilya Sutskever、Oriol Vinyals 与 Quoc V. Le 的《Sequence to Sequence Learning with "
            "Neural Networks》。同屆榮譽提名則包括普林斯頓大學 Jiachen T. Wang 等人的《Data Shapley in One Training Run》。")
    offsets = [off for off, _ in find_paper_mentions(para)]
    assert para[offsets[0]:].startswith("2024 年 12 月")
    assert para[offsets[1]:].startswith("Ilya Sutskever")
    assert para[offsets[2]:].startswith("同屆榮譽提名")


def test_extract_narrative_section_uses_its_first_sentence():
    text = ("新闻标题：NeurIPS 时间检验奖\n\n"
            "2024 年 12 月，NeurIPS 把时间检验奖颁给了两篇 2014 年的论文：Ian Goodfellow 等人的《Generative Adversarial Nets》"
            "（生成对抗网络），以及 Ilya Sutskever、Oriol Vinyals 与 Quoc V. Le 的《Sequence to Sequence Learning with "
            "Neural Networks》（基于神经网络的序列到序列学习）。\n")
    doc = segment_document(text, [])
    secs = doc["sections"]
    assert len(secs) == 2 and doc["doc_year"] == 2024
    rows = [dict(s, doc_venue=doc["doc_venue"], doc_year=doc["doc_year"], lang="zh-Hans") for s in secs]
    out = [extract_fields(r, "zh-Hans", Config()) for r in rows]
    assert out[0]["summary"].startswith("2024 年 12 月")
    assert (out[0]["authors"], out[0]["authors_truncated"]) == (["Ian Goodfellow"], True)
    assert out[1]["summary"].startswith("Ilya Sutskever")
    assert out[1]["authors"] == ["Ilya Sutskever", "Oriol Vinyals", "Quoc V. Le"]
    assert [o["award"] for o in out] == ["test_of_time", "test_of_time"]


def test_extract_header_year_and_metadata_priority():
    row = {"heading": "### Auto-Encoding Variational Bayes",
           "text": "### Auto-Encoding Variational Bayes\n\nKingma and Welling introduced the reparameterization trick.",
           "ctx_award_raw": "## ICLR 2024 Test of Time", "lead_award_raw": None,
           "doc_venue": "ICLR", "doc_year": 2025, "lang": "en"}
    out = extract_fields(row, "zh-Hans", Config())
    assert (out["year"], out["award"], out["authors"]) == (2024, "test_of_time", ["Kingma", "Welling"])
    assert out["summary"].startswith("Kingma and Welling")
    # a metadata line wins over the prose credit
    row = dict(row, text="### Auto-Encoding Variational Bayes\n\nAuthors: Diederik P. Kingma, Max Welling\n\n"
                         "Kingma and Welling introduced the reparameterization trick.")
    assert extract_fields(row, "zh-Hans", Config())["authors"] == ["Diederik P. Kingma", "Max Welling"]


def test_chinese_credit_subject_is_a_short_clause() -> None:
    from pipeline.credits import MAX_CREDIT_SPAN_CHARS

    credit_sentence = "上海人工智能实验室、武汉大学与商汤科技的研究者提出 UniAD。"
    assert credit(credit_sentence) == ([], False, ["上海人工智能实验室", "武汉大学", "商汤科技"])
    # the same subject at the end of a clause longer than the cap is prose, not a credit
    prose = "我们在多个数据集上取得了最好的结果" * (MAX_CREDIT_SPAN_CHARS // 10) + credit_sentence
    assert credit(prose) is None
    assert credit("我们在多个数据集上取得了最好的结果。" + credit_sentence) == credit(credit_sentence)


def test_credit_separators_particles_and_campus_places():
    # spaced middle dots between names (OpenReview's author lists); two particles in a name
    c = parse_credit_line("Ann Lee · Bo Chen · Maria van der Berg")
    assert (c.authors, c.institutions) == (["Ann Lee", "Bo Chen", "Maria van der Berg"], [])
    # a full-width semicolon between the people and their institution
    c = parse_credit_line("Ann Lee, Bo Chen；Acme Research")
    assert (c.authors, c.institutions) == (["Ann Lee", "Bo Chen"], ["Acme Research"])
    # commas between the places in brackets, a university's campus kept with it
    c = parse_credit_line("Ann Lee, Bo Chen（Princeton, Acme University of Technology）")
    assert c.institutions == ["Princeton", "Acme University of Technology"]
    c = parse_credit_line("Ann Lee, Bo Chen（University of California, Berkeley / Google）")
    assert c.institutions == ["University of California, Berkeley", "Google"]


def test_split_names_of_a_semicolon_list_keeps_commas_inside_names():
    assert split_names("University of California, Berkeley;") == (["University of California, Berkeley"], False)
    assert split_names("Center for AI, Law, and Policy; Big University; Acme") == (
        ["Center for AI, Law, and Policy", "Big University", "Acme"], False)
    assert split_names("Ann Lee; Bo Chen; Cy Diaz;") == (["Ann Lee", "Bo Chen", "Cy Diaz"], False)


def test_credit_line_led_by_a_dash_under_the_title():
    row = {"heading": "Sparse Codes for Incremental Parsing",
           "text": "1. **Sparse Codes for Incremental Parsing**\n   — Ann Lee, Bo Chen, Cy Diaz（某某大學 / Acme Lab）\n"
                   "提出一種新的表示方法。",
           "ctx_award_raw": None, "lead_award_raw": None, "doc_venue": None, "doc_year": None, "lang": "zh-Hant"}
    out = extract_fields(row, "zh-Hant", Config())
    assert (out["authors"], out["institutions"]) == (["Ann Lee", "Bo Chen", "Cy Diaz"], ["某某大學", "Acme Lab"])


def test_chinese_press_credits_with_researchers_and_first_author():
    """"由X、Y研究者共同完成的《…》，论文一作为 Z": the institutions, then the first author
    (truncated: only the first is named); a bare word beside an institution is one too."""
    c = find_credit("一是由甲乙大学、Acme AI Lab 研究者共同完成的《Sparse Codes for Parsing》（稀疏编码），论文一作为 Ann Lee。")
    assert (c.authors, c.truncated, c.institutions) == (["Ann Lee"], True, ["甲乙大学", "Acme AI Lab"])
    c = find_credit("由甲乙科技和甲乙大学共同完成的《Sparse Codes for Parsing》，论文一作为 Ann Lee。")
    assert (c.authors, c.institutions) == (["Ann Lee"], ["甲乙科技", "甲乙大学"])
    c = find_credit("由甲乙大学研究者共同完成的《Sparse Codes》， Ann Lee 和 Bo Chen(陈博)为共同一作。")
    assert (c.authors, c.truncated, c.institutions) == (["Ann Lee", "Bo Chen"], True, ["甲乙大学"])
    c = find_credit("该工作由甲乙大学研究者完成，论文一作为田甲(曾在某公司实习)。")
    assert (c.authors, c.institutions) == (["田甲"], ["甲乙大学"])
    # people stay people
    assert find_credit("该论文由何甲、张乙等人提出。").authors == ["何甲", "张乙"]


def test_credit_that_opens_the_line_before_the_title():
    row = {"heading": "Sparse Codes for Widget Parsing",
           "text": "* (Poster \\#03): Ann Lee, Bo Chen. [Sparse Codes for Widget Parsing](https://openreview.net/forum?id=a)",
           "ctx_award_raw": None, "lead_award_raw": None, "doc_venue": None, "doc_year": None, "lang": "en"}
    assert extract_fields(row, "zh-Hans", Config())["authors"] == ["Ann Lee", "Bo Chen"]


def test_list_item_with_fields_set_off_by_html_breaks():
    text = ('1. <a id="pub-x"></a>*Sparse Codes for Widget Parsing.*  <br> Ann Lee, **Bo Chen<sup>#</sup>**, '
            'Cy Diaz<br> ***SIGMOD 2026, CCF-A***. ')
    lines = kept_lines(text, [])
    cand = candidate_of(lines[0])
    assert cand.title == "Sparse Codes for Widget Parsing."
    row = {"heading": cand.title, "text": text, "ctx_award_raw": None, "lead_award_raw": None,
           "doc_venue": None, "doc_year": None, "lang": "en"}
    out = extract_fields(row, "zh-Hans", Config())
    assert (out["authors"], out["venue"], out["year"]) == (["Ann Lee", "Bo Chen", "Cy Diaz"], "SIGMOD", 2026)


def test_credit_line_places_drop_their_others_and_track_notes():
    from pipeline.credits import parse_credit_line

    credit = parse_credit_line("Sander Schulhoff, Jeremy Pinto, Chenglei Si 等（Maryland / UBC 等）")
    assert credit.authors == ["Sander Schulhoff", "Jeremy Pinto", "Chenglei Si"]
    assert credit.institutions == ["Maryland", "UBC"]
    # a track in the brackets is a note, not an affiliation
    credit = parse_credit_line("Liwei Jiang, Yuanjun Chai, Margaret Li 等（D&B Track）")
    assert credit.authors == ["Liwei Jiang", "Yuanjun Chai", "Margaret Li"] and credit.institutions == []


def test_names_only_tells_people_from_a_title_joined_by_and():
    from pipeline.credits import names_only

    assert names_only("Kingma and Jimmy Ba")
    assert names_only("Tenenbaum and Roger P. Levy")
    assert not names_only("Pattern Recognition and Machine Learning")
    assert not names_only("Learning to Align and Translate")
    assert not names_only("Vision and Language")


def test_credit_line_with_affiliation_marks_and_places_per_person():
    from pipeline.credits import parse_credit_line

    credit = parse_credit_line("Keyu Tian¹, Yi Jiang²,³, Zehuan Yuan*, Liwei Wang¹†")
    assert credit.authors == ["Keyu Tian", "Yi Jiang", "Zehuan Yuan", "Liwei Wang"]
    credit = parse_credit_line("Keyu Tian (Peking University), Yi Jiang (ByteDance), Liwei Wang (Peking University)")
    assert credit.authors == ["Keyu Tian", "Yi Jiang", "Liwei Wang"]
    assert credit.institutions == ["Peking University", "ByteDance"]
    credit = parse_credit_line("Keyu Tian, Yi Jiang, Liwei Wang. Peking University, ByteDance")
    assert credit.authors == ["Keyu Tian", "Yi Jiang", "Liwei Wang"]
    assert credit.institutions == ["Peking University", "ByteDance"]
    # a note in brackets is no place
    assert parse_credit_line("Keyu Tian (equal contribution), Yi Jiang (equal contribution)") is None or \
        parse_credit_line("Keyu Tian (equal contribution), Yi Jiang (equal contribution)").institutions == []


def test_zh_credit_by_institutions_that_jointly_completed_the_work():
    from pipeline.credits import find_credit

    credit = find_credit("该论文由上海人工智能实验室、武汉大学及商汤科技联合完成。")
    assert credit.institutions == ["上海人工智能实验室", "武汉大学", "商汤科技"]
    credit = find_credit("本文由華東師范大學和小紅書聯合完成。")
    assert credit.institutions == ["華東師范大學", "小紅書"]


def test_credit_in_a_later_paragraph_and_after_the_title_on_its_line():
    """A translated title may come between the heading and the credit sentence; a credit may
    follow the title on its line."""
    row = {"heading": "Sparse Codes for Widget Parsing",
           "text": "**1、Sparse Codes for Widget Parsing**\n（稀疏编码用于部件解析）\n这篇来自甲乙大学、Acme AI Lab 的论文研究了部件解析。",
           "ctx_award_raw": None, "lead_award_raw": None, "doc_venue": None, "doc_year": None, "lang": "zh-Hans"}
    assert extract_fields(row, "zh-Hans", Config())["institutions"] == ["甲乙大学", "Acme AI Lab"]
    row = dict(row, text="**Sparse Codes for Widget Parsing** ，甲乙大学研究团队完成，论文共同一作Ann Lee、Bo Chen。\n论文研究了部件解析。")
    out = extract_fields(row, "zh-Hans", Config())
    assert (out["authors"], out["institutions"]) == (["Ann Lee", "Bo Chen"], ["甲乙大学"])


def test_a_title_wrapped_inside_bold_or_book_title_marks_is_one_line():
    text = ("前言。\n\n**1、Sparse Codes for Widget Parsing: A Study of Hard\nWrapped Titles**  \n（稀疏编码）\n\n"
            "**2、《Dense Codes for Widget Parsing: Another Study of Hard\nWrapped Titles》**  \n正文。")
    lines = kept_lines(text, [])
    assert [ln.stripped for ln in lines][1] == "**1、Sparse Codes for Widget Parsing: A Study of Hard Wrapped Titles**"
    assert lines[1].end - lines[1].start == len(lines[1].text)  # offsets are the document's
    assert "《Dense Codes for Widget Parsing: Another Study of Hard Wrapped Titles》" in lines[3].stripped
    # a list item or a heading under an unclosed mark is no continuation
    assert len(kept_lines("**Note\n- item**", [])) == 2


def test_chinese_prose_wrapped_inside_a_latin_name_is_read_whole():
    row = {"heading": "Sparse Codes for Widget Parsing",
           "text": ("**Sparse Codes for Widget Parsing**\n研究机构来自甲乙大学、Acme\nDeepLab、丙丁大学。汇集多个来源的数据。\n\n"
                    "作者: Ann Lee, Bo Chen\ncs.AI"),
           "ctx_award_raw": None, "lead_award_raw": None, "doc_venue": None, "doc_year": None, "lang": "zh-Hans"}
    out = extract_fields(row, "zh-Hans", Config())
    assert out["institutions"] == ["甲乙大学", "Acme DeepLab", "丙丁大学"]
    assert out["authors"] == ["Ann Lee", "Bo Chen"]  # a metadata line is no wrapped prose


def test_authors_a_few_paragraphs_after_a_credit_that_names_only_places():
    row = {"heading": "Sparse Codes for Widget Parsing",
           "text": ("**2、Sparse Codes for Widget Parsing**\n（稀疏编码）\n这篇来自甲乙大学、丙丁大学 的论文，介绍了一种编码器。\n"
                    "研究通过整合现有数据集，构建了语料库。\n该团队超半数都是华人，其中一作Ann Lee 目前是甲乙大学的硕士生。"),
           "ctx_award_raw": None, "lead_award_raw": None, "doc_venue": None, "doc_year": None, "lang": "zh-Hans"}
    out = extract_fields(row, "zh-Hans", Config())
    assert (out["authors"], out["institutions"]) == (["Ann Lee"], ["甲乙大学", "丙丁大学"])



def test_parse_credit_line_chinese_name_then_places() -> None:
    """"Name，Place/Place": a Chinese name and its places after a comma, when one place is an
    institution; a comma between two plain words is no credit."""
    c = parse_credit_line("蔡中昂，上海人工智能实验室/新加坡南洋理工大学/商汤科技")
    assert c is not None
    assert c.authors == ["蔡中昂"]
    assert c.institutions == ["上海人工智能实验室", "新加坡南洋理工大学", "商汤科技"]
    assert parse_credit_line("图像，视频") is None


def test_parse_credit_line_lower_case_name_between_people() -> None:
    """A name kept in lower case by a submission system counts between two people; a lower-case
    phrase does not make a credit line."""
    c = parse_credit_line("Ta-Chung Chi, Ting-Han Fan, alexander rudnicky and Peter Ramadge")
    assert c is not None
    assert c.authors == ["Ta-Chung Chi", "Ting-Han Fan", "alexander rudnicky", "Peter Ramadge"]
    assert parse_credit_line("deep learning and computer vision, Stanford University") is None


@pytest.mark.parametrize(
    ("text", "institutions"),
    [
        ("Facebook 提出的", ["Facebook"]),
        ("OpenAI 推出的", ["OpenAI"]),
        ("上海人工智能实验室发布的", ["上海人工智能实验室"]),
    ],
)
def test_maker_credit(text: str, institutions: list[str]) -> None:
    c = maker_credit(text)
    assert c is not None and c.institutions == institutions and c.authors == []


@pytest.mark.parametrize("text", ["何恺明提出的", "微軟提出的", "这篇论文提出的", "Facebook"])
def test_maker_credit_none(text: str) -> None:
    """A lone Chinese word may be a person or a company; a description or no maker clause is none."""
    assert maker_credit(text) is None


def test_find_credit_release_by_a_company_word() -> None:
    """A one-word subject with inner capitals before a release verb is the company that made the
    work; before 提出 it may be a model's name and credits nobody."""
    c = find_credit("OpenAI發布GPT-3，參數量達1750億。")
    assert c is not None and c.institutions == ["OpenAI"] and c.authors == []
    assert find_credit("ResNet提出了残差学习。") is None


def test_parse_credit_line_full_stop_typed_for_a_comma() -> None:
    """A full stop between two full names is a list separator; one after an initial is not."""
    c = parse_credit_line("Andrew Gibiansky. Sercan Arik, Gregory Diamos and Yanqi Zhou")
    assert c is not None and c.authors == ["Andrew Gibiansky", "Sercan Arik", "Gregory Diamos", "Yanqi Zhou"]
    c = parse_credit_line("Christopher D. Manning, Andrew Ng and Christopher Potts")
    assert c is not None and c.authors == ["Christopher D. Manning", "Andrew Ng", "Christopher Potts"]


def test_find_credit_names_the_lead_author() -> None:
    """News naming the paper's lead author: that person, the list truncated."""
    c = find_credit("The paper’s lead author is Tian Keyu, who bears the same surname as the ex-intern.")
    assert c is not None and c.authors == ["Tian Keyu"] and c.truncated


@pytest.mark.parametrize(
    ("sentence", "institutions"),
    [
        ("阿里巴巴通义千问团队凭《Attention Gating Makes Better Foundation Models》斩获最佳论文荣誉，"
         "成为唯一来自中国的团队。", ["阿里巴巴通义千问团队"]),
        ("The Tongyi Qianwen team from Alibaba won the Best Paper Award.", ["Alibaba"]),
    ],
)
def test_find_credit_team_that_won_with_the_work(sentence: str, institutions: list[str]) -> None:
    c = find_credit(sentence)
    assert c is not None and c.institutions == institutions and c.authors == []


def test_affiliation_line() -> None:
    assert affiliation_line("University of California, San Diego; Google Research; Brandeis University") == [
        "University of California, San Diego", "Google Research", "Brandeis University"]
    assert affiliation_line("Recent models; such as Imagen; have made progress") == []
    assert affiliation_line("Stanford University") == []


def test_find_credit_name_serving_as_corresponding_author() -> None:
    """"、X擔任通訊作者的…": the Chinese name right before the role is an author."""
    c = find_credit("由DeepSeek團隊研發、梁文鋒擔任通訊作者的DeepSeek-R1推理模型研究論文，近日登上期刊封面。")
    assert c is not None and c.authors == ["梁文鋒"] and c.truncated


def test_split_names_at_list_symbols_keeps_commas_inside_names():
    # an awesome list's affiliation line (real list: h19-awesome3dgs-papers)
    assert split_names("National Key Lab of General AI, China ⟐ Peking University ⟐ University of North Carolina") == (
        ["National Key Lab of General AI, China", "Peking University", "University of North Carolina"], False)
    assert split_names("University of Utah • Zhejiang University • UCLA") == (
        ["University of Utah", "Zhejiang University", "UCLA"], False)


def test_a_bullet_glued_inside_a_transliterated_name_is_no_list_symbol() -> None:
    """"迈克尔•乔丹" writes a transliterated name's middle dot with a bullet: no separator there,
    and the list's commas still split; a spaced bullet between names still separates them."""
    assert split_names("迈克尔•乔丹, 张三, 李四") == (["迈克尔•乔丹", "张三", "李四"], False)
    assert split_names("约翰•霍普金斯大学；麻省理工学院") == (["约翰•霍普金斯大学", "麻省理工学院"], False)


def test_a_line_of_many_sentences_is_no_credit_and_takes_linear_time():
    # a 200,000-character line of sentences (a scraped page without line breaks) took 36 s:
    # each period's tail was split and matched whole
    import time
    line = ("Deep Residual Learning for Image Recognition by Kaiming He. " * 3400)[:200_000]
    start = time.perf_counter()
    parse_credit_line(line)
    assert time.perf_counter() - start < 5
    credit = parse_credit_line("Keyu Tian, Yi Jiang. " + ", ".join(["Peking University"] * 60))
    assert credit is not None and credit.authors == ["Keyu Tian", "Yi Jiang"]


@pytest.mark.parametrize(("sentence", "places"), [
    ("浙江大学、腾讯等机构的论文获得了杰出论文奖。", ["浙江大学", "腾讯"]),
    ("阿里云（Alibaba Cloud）联合上海交通大学（SJTU）、Solidigm 共同发表的论文获得最佳论文奖。", ["阿里云", "上海交通大学", "Solidigm"]),
])
def test_zh_places_before_deng_jigou_and_around_lianhe(sentence: str, places: list[str]) -> None:
    from pipeline.credits import find_credit

    credit = find_credit(sentence)
    assert (credit.authors, credit.institutions) == ([], places)
