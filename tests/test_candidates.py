"""Title candidates, the title classifier and its training helpers, on lines and files of the
real-world corpus (tests/fixtures/real)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from evaluation.train_titles import best_threshold, label
from evaluation.train_titles import main as train_main
from pipeline import title_model
from pipeline.candidates import FEATURES, candidate_of, find_candidates
from pipeline.segment import kept_lines, segment_document
from pipeline.textutil import Line

REAL = Path(__file__).parent / "fixtures" / "real"


def _line(s: str) -> Line:
    return Line(0, len(s), s)


@pytest.mark.parametrize(
    ("line", "style", "title"),
    [
        # reading lists (h1-jaealways, h1-atfortes, h8-fyj), verbatim lines
        ("- [ ] **[ZELDA: A Comprehensive Benchmark for Supervised Entity Disambiguation]"
         "(https://aclanthology.org/2023.eacl-main.151/).** Marcel Milich and Alan Akbik.",
         "bold_lead", "ZELDA: A Comprehensive Benchmark for Supervised Entity Disambiguation"),
        ("- [ ]  Incorporating Worker Perspectives into MTurk Annotation Practices for NLP*Olivia Huang, "
         "Eve Fleisig and Dan Klein*",
         "list", "Incorporating Worker Perspectives into MTurk Annotation Practices for NLP"),
        ("1. **Reasoning with Language Model Prompting: A Survey.** `ACL 2023`",
         "bold_lead", "Reasoning with Language Model Prompting: A Survey"),
        ("* Continuous Speech Separation with Conformer [[note]](./Single-channel%20Speech%20Separation/"
         "Continuous%20Speech%20Separation%20with%20Conformer%20阅读笔记.md)",
         "list", "Continuous Speech Separation with Conformer"),
        ("#### [Adaptive Procedural Task Generation for Hard-Exploration Problems]"
         "(https://arxiv.org/pdf/2007.00350.pdf)",
         "md3", "Adaptive Procedural Task Generation for Hard-Exploration Problems"),
        # a bold title that opens the line is its title, not a list item led by "*"
        ("**Genie: Generative Interactive Environments**, Jake Bruce, Michael Dennis (ICML 2024)",
         "bold_lead", "Genie: Generative Interactive Environments"),
        # an arXiv digest's HTML table cell (h8-shiyibihua)
        ('  <td><a href="./papers/251220907v1-panogrounder.html">PanoGrounder: Bridging 2D and 3D with '
         "Panoramic Scene Representations for VLM-based 3D Visual Grounding</a></td>",
         "link_lead", "PanoGrounder: Bridging 2D and 3D with Panoramic Scene Representations for VLM-based "
                      "3D Visual Grounding"),
        # a reading list's bare item: the title, then its address (h15-aelnouby)
        ("+ Wasserstein Dependency Measure for Representation Learning https://arxiv.org/pdf/1903.11780.pdf",
         "list", "Wasserstein Dependency Measure for Representation Learning"),
        # a title in emphasis, then its authors, with U+2010 hyphens or one author (h25-apbc2018)
        ("* __*Computing the Diameter of the Space of Maximum Parsimony Reconciliations in the Duplication-"
         "Transfer-Loss Model*__, Jordan Haack, Eli Zupke, Andrew Ramirez, Yi\u2010Chieh Wu and Ran Libeskind\u2010Hadas",
         "list", "Computing the Diameter of the Space of Maximum Parsimony Reconciliations in the Duplication-"
                 "Transfer-Loss Model"),
        ("* __*Comparisons of gene coexpression network modules in breast cancer and ovarian cancer*__, Shuqin Zhang",
         "list", "Comparisons of gene coexpression network modules in breast cancer and ovarian cancer"),
        # a running number of three digits before a heading's title (h16-timothywangdev)
        ("### 502. Neural Diffusion Models", "md3", "Neural Diffusion Models"),
    ],
)
def test_the_candidate_of_a_real_line(line: str, style: str, title: str) -> None:
    c = candidate_of(_line(line))
    assert c is not None and (c.style, c.title) == (style, title)


def test_a_table_header_names_the_title_column_and_is_no_candidate() -> None:
    text = (REAL / "dev" / "h1-zezhishao-dailyarxiv" / "daily-papers-2025-04-25-time-series.md").read_text(
        encoding="utf-8")
    cands = find_candidates(kept_lines(text, []))
    tables = [c for c in cands if c.style == "table"]
    assert [c.title for c in tables][:2] == [
        "Online model learning with data-assimilated reservoir computers",
        "A Time Series Dataset of NIR Spectra and RGB and NIR-HSI Images of the Barley Germination Process",
    ]
    assert all(c.title != "Title" for c in cands)
    assert tables[0].header[:2] == ["**Title**", "**Date**"]


def test_doc_venue_from_links_outside_the_sections_only() -> None:
    items = ("- [Sparse Coding for Parsing](https://papers.nips.cc/paper/2012/file/abc-Paper.pdf)\n"
             "  *Ann Lee, Bo Chen*\n"
             "- [Dense Maps From Sparse Views](https://arxiv.org/abs/2101.00001)\n  *Cy Diaz, Di Evans*\n"
             "- [Learning to Rank Sparse Codes](https://arxiv.org/abs/2101.00002)\n  *Ed Fox, Flo Gray*\n")
    # one paper's own proceedings link is that paper's venue, not the list's
    assert segment_document("# My reading list\n\n" + items, [])["doc_venue"] is None
    # the list's lead links the venue's proceedings: the list is that venue's
    lead = "# Reading list\n\nFrom [the proceedings](https://papers.nips.cc/paper_files/paper/2012).\n\n"
    assert segment_document(lead + items, [])["doc_venue"] == "NeurIPS"


def test_a_title_cell_with_one_link_among_words_is_the_link() -> None:
    text = ("| 日期 | 标题 | 时长 |\n| -- | -- | -- |\n"
            "| 10/14/21 | 重读经典之一：[Deep Sparse Coding](https://example.org/a.pdf) | 19:59 |\n"
            "| 10/06/21 | [PDF](https://example.org/b.pdf) 怎样读一篇长论文 | 06:39 |\n")
    tables = [c.title for c in find_candidates(kept_lines(text, [])) if c.style == "table"]
    assert tables == ["Deep Sparse Coding", "PDF 怎样读一篇长论文"]


def test_a_metadata_block_after_an_award_header_starts_its_paper() -> None:
    # the lead above the award header is the article's, not the paper's body
    text = ("近日，某大会公布了今年的获奖论文，共有八篇论文获奖，其中四篇来自国内的研究机构和高校团队。\n"
            "最佳论文\n"
            "本届最佳论文来自一个大学的研究团队。\n"
            "- 题目:Sparse Coding for Incremental Parsing\n- 作者:Ann Lee, Bo Chen\n"
            "链接:https://example.org/p.pdf\n"
            "该研究提出了一种表示。\n")
    sections = segment_document(text, [])["sections"]
    assert [s["heading"] for s in sections] == ["Sparse Coding for Incremental Parsing"]
    assert sections[0]["text"].startswith("本届最佳论文来自")


def test_features_of_a_credit_line_and_its_title() -> None:
    lines = kept_lines("- [ ] Privacy Auditing with One (1) Training Run\n"
                       "    Thomas Steinke · Milad Nasr · Matthew Jagielski\n", [])
    title, names = find_candidates(lines)
    assert title.features["next_authors"] == 1.0  # names between spaced middle dots are a credit line
    assert set(FEATURES) <= set(title.features)  # every input of the classifier is set
    lines = kept_lines("Scaling Data-Constrained Language Models\n\n*Niklas Muennighoff, Alexander Rush and "
                       "Boaz Barak*\n", [])
    title, names = find_candidates(lines)
    assert title.features["next_authors"] == 1.0 and title.features["next_italic"] == 1.0
    assert names.features["self_credit"] == 1.0


@pytest.mark.parametrize("line", [
    "# A Study" + " " * 2000 + "of Things",
    "|" + "---|" * 3000 + "x|",
    "- [Figure](data:image/png;base64," + "A" * 40000 + ' "Figure 1")',
])
def test_pathological_lines_give_no_candidate(line: str) -> None:
    assert candidate_of(_line(line)) is None


def test_a_real_reading_list_is_one_section_per_paper_with_venue_from_its_links() -> None:
    text = (REAL / "dev" / "h1-jaealways-nlp-awards" / "eacl2023-awards.md").read_text(encoding="utf-8")
    result = segment_document(text, [])
    gold = json.loads((REAL / "dev" / "h1-jaealways-nlp-awards" / "gold.json").read_text(encoding="utf-8"))
    want = [p["title"] for p in gold["files"]["eacl2023-awards.md"]["papers"]]
    got = [s["heading"] for s in result["sections"]]
    assert len(got) == len(want) == 13
    assert got[0] == ("COMPS: Conceptual Minimal Pair Sentences for testing Robust Property Knowledge and its "
                      "Inheritance in Pre-trained Language Models")
    assert (result["doc_venue"], result["doc_year"]) == ("EACL", 2023)


def test_text_not_about_papers_gives_no_section() -> None:
    text = ("City Council Approves New Downtown Park Plan\n\nThe council voted on Tuesday to approve the plan.\n\n"
            "Residents Weigh In On The Decision\n\nMany residents said they liked it.\n")
    assert segment_document(text, [])["sections"] == []


def test_a_page_about_one_linked_paper_is_one_untitled_section() -> None:
    # h3-zhhant-repos: a timeline entry about GPT-3 whose only paper link is its arXiv page
    text = (REAL / "dev" / "h3-zhhant-repos" / "sjenwork-timeline-gpt3-2020.md").read_text(encoding="utf-8")
    sections = segment_document(text, [])["sections"]
    assert len(sections) == 1 and sections[0]["heading"] == ""
    assert "https://arxiv.org/abs/2005.14165" in sections[0]["text"]


def test_a_news_item_on_a_venue_edition_is_one_untitled_section() -> None:
    # a report of one paper that never writes its title: it speaks of a paper and names NeurIPS 2024
    text = ("實習生論文獲獎引發討論\n\n這篇論文獲得 NeurIPS 2024 最佳論文獎，團隊隨後回應了外界的質疑。\n\n"
            "事件的始末仍在調查中。\n")
    sections = segment_document(text, [])["sections"]
    assert len(sections) == 1 and sections[0]["heading"] == ""
    # advice naming venues without an edition, or news of a conference edition with no award,
    # reports no paper
    advice = "投稿頂會的建議\n\n每年到了 ICLR、NeurIPS 的截稿季，許多論文都在趕工。\n"
    assert segment_document(advice, [])["sections"] == []
    news = ("Record crowds expected\n\nAbout 16,000 researchers are expected to attend NeurIPS 2024 in "
            "Vancouver, after a record number of paper submissions.\n")
    assert segment_document(news, [])["sections"] == []


@pytest.mark.parametrize("line", ["February 27, 2025", "2025-02-27", "2025年2月27日", "Dec. 1, 2023 10:22",
                                  "cs.AI", "cs.CL; cs.LG", "**May 2024**"])
def test_a_dateline_or_subject_class_is_no_candidate(line: str) -> None:
    assert candidate_of(_line(line)) is None


@pytest.mark.parametrize("line", ["*   10:40 Track on Algorithms", "* 8:00pm  Salesforce Party at the harbour",
                                  '*  14:30 start of "Engineering and Reverse-Engineering Intelligence"'])
def test_a_programme_slot_is_no_candidate(line: str) -> None:
    # a conference itinerary's time slots are talks, tracks and parties, not papers
    assert candidate_of(_line(line)) is None


def test_the_stored_model_scores_in_zero_one() -> None:
    model = title_model.load()
    cands = find_candidates(kept_lines("## Attention Is All You Need\n\nAshish Vaswani, Noam Shazeer and Niki "
                                       "Parmar\n\narXiv: 1706.03762\n", []))
    p = model.scores(cands)
    assert p.shape == (len(cands),) and ((0.0 <= p) & (p <= 1.0)).all()
    assert cands[0].title == "Attention Is All You Need" and p[0] >= model.threshold


def test_a_damaged_model_is_refused_with_its_path(tmp_path: Path) -> None:
    spec = json.loads(title_model.MODEL_PATH.read_text(encoding="utf-8"))
    spec["trees"][0]["left"][0] = 0  # a cycle: prediction would never end
    bad = tmp_path / "model.json"
    bad.write_text(json.dumps(spec), encoding="utf-8")
    with pytest.raises(ValueError, match=r"model\.json is not usable: a tree is malformed"):
        title_model.load(str(bad))
    bad.write_text("{", encoding="utf-8")
    with pytest.raises(ValueError, match="is not usable"):
        title_model.load(str(bad))


def test_labels_and_threshold() -> None:
    from evaluation.evaluate import title_key

    gold = [title_key("Attention Is All You Need"), title_key("视觉自回归建模")]
    assert label("## Attention is all you need", gold)
    assert label("視覺自回歸建模", gold)  # matched in Simplified
    assert not label("Attention", gold)  # too short to be contained
    y = np.array([1, 1, 0, 0, 1, 0])
    proba = np.array([0.9, 0.8, 0.3, 0.1, 0.6, 0.7])
    t, p, r, f = best_threshold(y, proba)
    assert (p, r) == (0.75, 1.0) and t <= 0.6


def test_training_refuses_the_test_split() -> None:
    assert train_main(["--real", str(REAL / "test"), "--out", "/dev/null"]) == 2


def test_a_short_line_naming_a_venue_and_year_is_no_paper() -> None:
    text = ("# Papers from our lab at ICML 2024\n\n"
            "**Genie: Generative Interactive Environments**, Jake Bruce, Michael Dennis\n\n"
            "**Stealing Part of a Production Language Model**, Nicholas Carlini, Daniel Paleka\n\n"
            "**ICML 2023**\n\n"
            "**Learning-Rate-Free Learning by D-Adaptation**, Aaron Defazio, Konstantin Mishchenko\n")
    sections = segment_document(text, [])["sections"]
    assert [s["heading"] for s in sections] == [
        "Genie: Generative Interactive Environments", "Stealing Part of a Production Language Model",
        "Learning-Rate-Free Learning by D-Adaptation"]
    assert [s["ctx_year"] for s in sections] == [2024, 2024, 2023]
    # a title that opens with its venue tag is still a title (h7-pages-zhhans: a list of related work)
    text = (REAL / "dev" / "h7-pages-zhhans" / "juejin-cvpr2023-uniad-notes.txt").read_text(encoding="utf-8")
    headings = [s["heading"] for s in segment_document(text, [])["sections"]]
    assert "(CVPR 2019)End-to-end interpretable neural motion planner" in headings
    assert "(CVPR 2022) Learning from all vehicles" in headings


def test_an_empty_model_file_says_it_holds_no_model(tmp_path: Path) -> None:
    bad = tmp_path / "model.json"
    bad.write_text("{}", encoding="utf-8")
    with pytest.raises(ValueError, match="holds no model"):
        title_model.load(str(bad))


def test_sections_under_the_lead_take_the_venue_edition_it_names() -> None:
    # h3-lzwjava: the lead names NeurIPS 2024; later headings name other editions
    text = (REAL / "dev" / "h3-lzwjava" / "lzwjava-neurips-test-of-time-en.md").read_text(encoding="utf-8")
    from pipeline.clean import find_dropped
    from pipeline.config import Config

    sections = segment_document(text, find_dropped(text, Config()))["sections"]
    first = next(s for s in sections if "Generative Adversarial Nets" in s["heading"])
    later = next(s for s in sections if "Distributed Representations" in s["heading"])
    assert (first["ctx_venue"], first["ctx_year"]) == ("NeurIPS", 2024)
    assert (later["ctx_venue"], later["ctx_year"]) == ("NeurIPS", 2023)


def test_a_venue_line_above_a_paper_heads_the_papers_below_it() -> None:
    text = ("读过的论文，按会议整理：\n\n"
            "- ICCV2015\n- **Sparse Codes for Intrinsic Images**\n  *Ann Lee, Bo Chen*\n"
            "- ICCV2017\n- **Dense Shading From Sparse Views**\n  *Cy Diaz, Di Evans*\n"
            "- CVPR2018\n- **Learning Reflectance in the Wild**\n  *Ed Fox, Flo Gray*\n")
    sections = segment_document(text, [])["sections"]
    assert [(s["heading"], s["ctx_venue"], s["ctx_year"]) for s in sections] == [
        ("- **Sparse Codes for Intrinsic Images**", "ICCV", 2015), ("- **Dense Shading From Sparse Views**", "ICCV", 2017),
        ("- **Learning Reflectance in the Wild**", "CVPR", 2018)]


def test_a_thematic_break_after_a_table_keeps_its_last_row() -> None:
    text = ("| 年份 | 論文名稱 |\n|---|---|\n| 2022 | Sparse Codes for Intrinsic Images |\n"
            "| 2023 | Dense Shading From Sparse Views |\n\n---\n\nMore notes.\n")
    titles = [c.title for c in find_candidates(kept_lines(text, [])) if c.style == "table"]
    assert titles == ["Sparse Codes for Intrinsic Images", "Dense Shading From Sparse Views"]


@pytest.mark.parametrize(("title", "names"), [
    ("Organizers include: Julia Park, Phil Moreau, Ray Olsen", True), ("Workshop Chairs: Ann Lee and Bo Chen", True),
    ("Learned Optimizers: Why They Are Hard, and What They Can Do Now", False),
    ("Sparse Codes: Learning Dense Maps from Sparse Views", False),
])
def test_a_label_followed_by_people_is_no_title(title: str, names: bool) -> None:
    from pipeline.candidates import labelled_names

    assert labelled_names(title) is names


def test_list_item_that_opens_with_its_authors_is_titled_by_the_rest() -> None:
    def title(text: str) -> str:
        return candidate_of(_line(text)).title

    assert title("* (Poster \\#03): Ann Lee, Bo Chen. [Sparse Codes for Widget Parsing](https://openreview.net/forum?id=a)") \
        == "Sparse Codes for Widget Parsing"
    assert title("* Ann Lee. [Sparse Codes](https://openreview.net/forum?id=a)") == "Sparse Codes"
    assert title("- J. Smith, A. Lee. Learning to Parse Sparse Widgets") == "Learning to Parse Sparse Widgets"
    # a title first, then its authors; a leading phrase that is no name list stays
    assert title("- Attention Is All You Need. Ann Lee, Bo Chen.") == "Attention Is All You Need"
    assert title("- Deep Learning. Sparse Codes for Widget Parsing") == "Deep Learning. Sparse Codes for Widget Parsing"


def test_list_item_that_opens_with_its_award_label_and_ends_with_link_names() -> None:
    def title(text: str) -> str:
        return candidate_of(_line(text)).title

    assert title("- 2024 best paper, Sparse Codes for Widget Parsing, [arXiv](https://arxiv.org/abs/2406.20083)") \
        == "Sparse Codes for Widget Parsing"
    assert title("- 2022 best system paper, **Widget Untangling**, [arXiv](https://arxiv.org/abs/2207.07813) / "
                 "[Website](https://example.org/w)") == "Widget Untangling"
    assert title("- 2023 SIGGRAPH Asia best paper, Fluid Widgets on Neural Maps, [Github](https://github.com/a/b)") \
        == "Fluid Widgets on Neural Maps"
    # a first field that is no award label stays
    assert title("- Attention, Perception, and Memory in Widgets, a survey") == \
        "Attention, Perception, and Memory in Widgets, a survey"


def test_list_item_title_without_a_venue_tail_and_no_placeholder_titles() -> None:
    assert candidate_of(_line(
        "- Ann Lee, Bo Chen. [Learning to Rank Widgets](https://arxiv.org/abs/2201.00011). ICML 2022.")).title \
        == "Learning to Rank Widgets"
    assert candidate_of(_line("- Sparse Codes for Widgets, Part Two. Acme Lecture Notes.")).title \
        == "Sparse Codes for Widgets, Part Two. Acme Lecture Notes."  # no venue edition: kept
    # a placeholder or a link's name is no title
    assert candidate_of(_line("- 2021 best student paper, [arXiv](https://arxiv.org/abs/2101.00001)")) is None
    assert candidate_of(_line("## None")) is None


def test_a_link_label_before_its_address_is_no_title() -> None:
    # "论文/Paper: http://…" under a bold title names the link, not a paper
    assert candidate_of(_line("- 论文/Paper: http://arxiv.org/pdf/2207.04675")) is None


def test_a_credit_set_as_a_heading_is_evidence_not_a_title() -> None:
    assert candidate_of(_line("#### Authors: Victor Letzelter, Mathieu Fontaine, Slim Essid")) is None
    lines = kept_lines("## Resilient Multiple Choice Learning: A learned scoring scheme\n"
                       "#### Authors: Victor Letzelter, Mathieu Fontaine, Slim Essid\n", [])
    (title,) = find_candidates(lines)
    assert title.style == "md2" and title.features["next_kv_authors"] == 1.0


def test_a_wrapped_line_of_names_between_middle_dots_is_a_credit_not_a_title() -> None:
    # the second line of a hard-wrapped author list: its first name is cut, the rest are names
    lines = kept_lines("Scaling Data-Constrained Language Models\n\n"
                       "Tazi · Aleksandra Piktus · Sampo Pyysalo · Thomas Wolf · Colin Raffel\n", [])
    title, names = find_candidates(lines)
    assert names.features["self_credit"] == 1.0 and title.features["self_credit"] == 0.0


def test_a_table_of_contents_entry_is_no_candidate() -> None:
    assert candidate_of(_line("- [Attention Is All You Need](#attention-is-all-you-need)")) is None
    assert candidate_of(_line('<a href="#pillar-one" class="badge">Pillar one: Robot Control (1)</a>')) is None
    assert candidate_of(_line("- [Attention Is All You Need](https://arxiv.org/abs/1706.03762)")).style == "link_lead"


@pytest.mark.parametrize("line", ["Paper: [arXiv:2309.07906](https://arxiv.org/abs/2309.07906)",
                                  "- [2309.07906](https://arxiv.org/abs/2309.07906)",
                                  "- [doi: 10.1145/3592433](https://doi.org/10.1145/3592433)"])
def test_a_link_named_by_an_identifier_only_is_no_title(line: str) -> None:
    assert candidate_of(_line(line)) is None


def test_a_table_cell_linking_an_identifier_or_a_pdf_is_not_the_title_cell() -> None:
    """A one-column report table whose cell holds "**Title** – *Authors* – … – **[arXiv 2502.16487](…)**":
    the link names the link, the bold run is the title (layout of an LLM-written ACL 2025 report)."""
    from pipeline.candidates import _title_cell

    cell = ("**All That Glitters is Not Novel: Plagiarism in AI-Generated Research** – *Tarun Gupta, Danish Pruthi* – "
            "Keywords: plagiarism – **[arXiv 2502.16487](https://arxiv.org/abs/2502.16487)**")
    assert _title_cell(["**2**", cell]) == "All That Glitters is Not Novel: Plagiarism in AI-Generated Research"
    assert _title_cell(["**3**", cell.replace("[arXiv 2502.16487]", "[ACL Anthology PDF]")]) == (
        "All That Glitters is Not Novel: Plagiarism in AI-Generated Research")


def test_news_items_naming_a_paper_code_span_tags_and_colon_labels() -> None:
    def title(text: str) -> str | None:
        c = candidate_of(_line(text))
        return c.title if c is not None else None

    assert title("- Best paper award at [ISPA](https://x.org) for the paper [Repeated Skewed Joins at Massive Scale]"
                 "(https://y.org) by Ann Lee, Bo Chen, and Cy Wu") == "Repeated Skewed Joins at Massive Scale"
    assert title('- The paper "Scalable Block Reporting for Widgets", by Ann Lee et al., was awarded the Best Paper') \
        == "Scalable Block Reporting for Widgets"
    assert title("- `Knowledge-Based Systems (KBS)` Image paragraph captioning with topic clustering") \
        == "Image paragraph captioning with topic clustering"


def test_a_line_ending_in_a_colon_is_scored_but_never_an_anchor() -> None:
    from pipeline.candidates import find_candidates
    from pipeline.textutil import split_lines

    text = "# Focal Loss for Dense Object Detection\n\n- The Balanced Cross Entropy Loss:\n\n**Results:**\n"
    lines = [ln for ln in split_lines(text) if not ln.blank]
    assert [(c.title, c.prose) for c in find_candidates(lines)] == [
        ("Focal Loss for Dense Object Detection", False), ("The Balanced Cross Entropy Loss", True), ("Results", True)]


@pytest.mark.parametrize(("reference", "title"), [
    ("Ann Lee, Bo Chen, and Cy Wu. 2025. What Can Educators Learn From the Failures of Top-Down Pedagogy? In "
     "Proceedings of the 56th ACM Technical Symposium", "What Can Educators Learn From the Failures of Top-Down Pedagogy?"),
    ("Ann Lee and Bo Chen. 2025. Contextual Factors in Computing Activities in U.S. Schools. In Proceedings of the "
     "56th ACM Technical Symposium", "Contextual Factors in Computing Activities in U.S. Schools"),
])
def test_acm_reference_format_titles(reference: str, title: str) -> None:
    from pipeline.candidates import citation_title

    assert citation_title(reference) == title


def test_a_list_items_run_of_spaces_costs_linear_time() -> None:
    """The trailing-note and notes-link patterns start at a whitespace run's first character: a
    list item with a run of 20,000 spaces took seconds (each start in the run scanned the rest),
    and a note after a venue tail still leaves the title."""
    import time

    from pipeline.candidates import _title_part

    def seconds(spaces: int) -> float:
        body = "Sparse Codes for Widget Parsing" + " " * spaces + "end [summary](notes/x.md)"
        start = time.thread_time()
        _title_part(body)
        return time.thread_time() - start

    small, large = min(seconds(10_000) for _ in range(2)), min(seconds(40_000) for _ in range(2))
    assert large / small < 8.0, (small, large)  # 4 times longer; quadratic: 16 times
    assert _title_part("Sparse Codes for Widget Parsing. IJCAI 2022  [a note on it]") == "Sparse Codes for Widget Parsing"
    assert _title_part("Sparse Codes for Widget Parsing [summary](notes/x.md)") == "Sparse Codes for Widget Parsing"


def test_a_link_whose_destination_is_in_angle_brackets_is_unlinked() -> None:
    """CommonMark's "[text](<destination with spaces>)", as HTML-to-Markdown writes a link with
    spaces in its URL: its text is the title."""
    from pipeline.candidates import unlink

    assert unlink("[Memory-Augmented Tree Search](<http://example.org/s?q=Memory Augmented&x=y>) | A") == \
        "Memory-Augmented Tree Search | A"


def test_a_references_run_of_dots_before_its_title_costs_linear_time() -> None:
    """The year closing a reference's authors is sought from a run's first character only: a
    citation field with 40,000 dots before its quoted title took seconds (each start in the run
    scanned the rest), and the year is still cut from the authors."""
    import time

    from pipeline.candidates import cited_parts

    def seconds(dots: int) -> float:
        reference = "A" + "." * dots + 'x. "Sparse Codes for Widget Parsing." Journal'
        start = time.thread_time()
        cited_parts(reference)
        return time.thread_time() - start

    small, large = min(seconds(10_000) for _ in range(2)), min(seconds(40_000) for _ in range(2))
    assert large / small < 8.0, (small, large)  # 4 times longer; quadratic: 16 times
    assert cited_parts("Doe, Jane, and Kim Lee. (2021). Sparse Codes for Widget Parsing. Journal of Widgets") == (
        "Sparse Codes for Widget Parsing", "Doe, Jane, and Kim Lee", ". Journal of Widgets", 2021)
    assert cited_parts('Doe, Jane. 2025. "Sparse Codes for Widget Parsing." Journal')[1] == "Doe, Jane"


@pytest.mark.parametrize(("item", "title"), [
    ("Sparse Codes for Widget Parsing (2021). Code and slides available online.", None),
    ("Sparse Codes for Widget Parsing. 2021. Best paper award. In addition a spotlight.", None),
    ("Doe, J., & Lee, K. (2021). Sparse codes for widget parsing. Journal of Widgets, 3(2), 1-10.",
     "Sparse codes for widget parsing"),
    ("Jane Doe. 2025. Sparse Codes for Widget Parsing. In Proceedings of the ACM Conference.",
     "Sparse Codes for Widget Parsing"),
])
def test_a_year_after_a_title_is_no_reference(item: str, title: str | None) -> None:
    """APA's "(YEAR)." and ACM's ". YEAR." follow the authors: a list item "Title (2021). Note."
    is no reference, and its note is never its title."""
    from pipeline.candidates import citation_title
    from pipeline.textutil import Line

    assert citation_title(item) == title
    line = "- " + item
    cand = candidate_of(Line(0, len(line), line))
    assert cand is not None and cand.title.startswith(title or "Sparse Codes for Widget Parsing")


def test_a_long_word_before_an_apa_year_costs_linear_time() -> None:
    """The APA author pattern starts at a word's first character: a 40,000-letter word before
    "(2021)." is scanned once, not once per letter."""
    import time

    from pipeline.candidates import citation_title

    def seconds(letters: int) -> float:
        reference = "Doe" * (letters // 3) + " (2021). Sparse codes for widget parsing. Journal"
        start = time.thread_time()
        citation_title(reference)
        return time.thread_time() - start

    small, large = min(seconds(10_000) for _ in range(2)), min(seconds(40_000) for _ in range(2))
    assert large / small < 8.0, (small, large)  # 4 times longer; quadratic: 16 times
    assert citation_title("Doe, Jane (2021). Sparse codes for widget parsing. Journal") == "Sparse codes for widget parsing"
