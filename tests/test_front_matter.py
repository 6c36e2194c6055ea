"""A paper's metadata in a Markdown file's YAML front matter: read leniently
(:func:`pipeline.front_matter.parse_front_matter`) and given to the paper's section, through the
real run (:func:`pipeline.run`)."""

from __future__ import annotations

import json
import time

import pandas as pd
import pytest

from pipeline.front_matter import flow_list_items, parse_front_matter, unquoted

from conftest import sections_of_pages

FLOW = (
    "---\n"
    'title: "Diffusion Policies for Dexterous Manipulation"\n'
    "authors: [Grace Liu, Henry Ma]\n"
    "venue: CoRL 2024\n"
    "tags: [robotics, diffusion]\n"
    "date: 2024-11-02\n"
    "---\n\n"
    "The paper proposes a diffusion-based policy for dexterous hands. Key idea: denoise action chunks "
    "conditioned on point clouds. Results beat prior baselines on 12 tasks.\n"
)
BLOCK = (
    "---\n"
    "layout: post\n"
    "title: Sparse Mixture Routing for Vision Transformers\n"
    "authors:\n"
    "  - Alice Wang\n"
    "  - 'Bob Li'\n"
    "conference: ICML 2025\n"
    "arxiv: 2401.10010\n"
    "---\n\n"
    "## Reading notes\n\n"
    "We read the paper on routing tokens to experts. The router is trained with a load-balancing loss.\n\n"
    "## My thoughts\n\n"
    "Strong results; the ablations on the number of experts are convincing.\n"
)
#: A front matter that clean does not read (a line that is no YAML): its lines stay in the text.
MALFORMED = (
    "---\n"
    'title: "Unclosed quote: A Study of Things\n'
    "authors: [Grace Liu, Henry Ma\n"
    ": : :\n"
    "---\n"
    "The paper proposes a method for robustness. Accepted at ICML 2025.\n"
)
#: A blog post's front matter (its writer, no paper key): no paper fields from it.
BLOG = (
    "---\n"
    "title: My week in review\n"
    "author: Carol Zhang\n"
    "---\n\n"
    "# Token Merging for Efficient Transformers\n\n"
    "Authors: Dan Wu, Eve Xu\n\n"
    "We merge similar tokens to speed up vision transformers. Accepted at ICLR 2023.\n"
)
#: A post's writer beside a paper's metadata: the writer is not the paper's author.
WRITER = (
    "---\n"
    "title: Graph Transformers for Traffic Forecasting\n"
    "author: Frank Yu\n"
    "venue: KDD 2025\n"
    "---\n\n"
    "My notes on the paper: it forecasts traffic with graph transformers over road sensors, and beats "
    "recurrent baselines on two city datasets.\n"
)
PAGES = {"flow.md": FLOW, "block.md": BLOCK, "malformed.md": MALFORMED, "blog.md": BLOG, "writer.md": WRITER}


def test_parse_front_matter_reads_scalars_flow_and_block_lists() -> None:
    assert parse_front_matter(FLOW) == {
        "title": "Diffusion Policies for Dexterous Manipulation", "authors": ["Grace Liu", "Henry Ma"],
        "venue": "CoRL 2024", "tags": ["robotics", "diffusion"], "date": "2024-11-02"}
    assert parse_front_matter(BLOCK)["authors"] == ["Alice Wang", "Bob Li"]
    assert parse_front_matter(BLOCK)["arxiv"] == "2401.10010"  # text, not the number 2401.1001


def test_parse_front_matter_reads_the_names_of_a_block_list_of_mappings() -> None:
    block = "---\nauthors:\n  - name: Grace Liu\n    affiliation: MIT\n  - name: \"Henry Ma\"\ntitle: X\n---\n"
    assert parse_front_matter(block) == {"authors": ["Grace Liu", "Henry Ma"], "title": "X"}


def test_parse_front_matter_reads_unclosed_quotes_and_lists() -> None:
    assert parse_front_matter(MALFORMED) == {"title": "Unclosed quote: A Study of Things",
                                             "authors": ["Grace Liu", "Henry Ma"]}


@pytest.mark.parametrize(("value", "expected"), [
    ("[A, B]", ["A", "B"]), ('["A", \'B\']', ["A", "B"]), ("[A, B", ["A", "B"]),
    ("[A](https://a.example.com), B", None), ("A, B", None), ("[A] [B]", None)])
def test_flow_list_items(value: str, expected: list[str] | None) -> None:
    assert flow_list_items(value) == expected


@pytest.mark.parametrize(("value", "expected"), [
    ('"A Title"', "A Title"), ('"A Title', "A Title"), ('"Quoted" Words in a Title', '"Quoted" Words in a Title'),
    ("A Title", "A Title")])
def test_unquoted(value: str, expected: str) -> None:
    assert unquoted(value) == expected


@pytest.fixture(scope="module")
def sections(tmp_path_factory) -> pd.DataFrame:
    return sections_of_pages(tmp_path_factory.mktemp("front_matter"), PAGES)


def _one(sections: pd.DataFrame, name: str) -> pd.Series:
    rows = sections[sections["source_path"] == name]
    assert len(rows) == 1, rows[["source_path", "title"]]
    return rows.iloc[0]


def test_a_papers_front_matter_gives_its_authors_and_venue(sections: pd.DataFrame) -> None:
    sec = _one(sections, "flow.md")
    assert sec["title"] == "Diffusion Policies for Dexterous Manipulation"
    assert list(sec["authors"]) == ["Grace Liu", "Henry Ma"]
    assert (sec["venue"], sec["year"]) == ("CoRL", 2024)


def test_a_block_list_and_an_arxiv_id_of_the_front_matter_reach_the_section(sections: pd.DataFrame) -> None:
    sec = _one(sections, "block.md")
    assert sec["title"] == "Sparse Mixture Routing for Vision Transformers"
    assert list(sec["authors"]) == ["Alice Wang", "Bob Li"]
    assert (sec["venue"], sec["year"], sec["arxiv_id"]) == ("ICML", 2025, "2401.10010")


def test_a_front_matter_clean_does_not_read_leaves_no_yaml_marks_in_the_fields(sections: pd.DataFrame) -> None:
    sec = _one(sections, "malformed.md")
    assert sec["title"] == "Unclosed quote: A Study of Things"
    assert list(sec["authors"]) == ["Grace Liu", "Henry Ma"]


def test_a_blog_posts_front_matter_gives_no_paper_fields(sections: pd.DataFrame) -> None:
    sec = _one(sections, "blog.md")
    assert sec["title"] == "Token Merging for Efficient Transformers"
    assert list(sec["authors"]) == ["Dan Wu", "Eve Xu"]
    assert (sec["venue"], sec["year"]) == ("ICLR", 2023)


def test_a_posts_writer_in_a_papers_front_matter_is_not_its_author(sections: pd.DataFrame) -> None:
    sec = _one(sections, "writer.md")
    assert sec["title"] == "Graph Transformers for Traffic Forecasting"
    assert (sec["venue"], sec["year"]) == ("KDD", 2025)
    assert list(sec["authors"]) == []


def test_nested_citation_front_matter_and_a_page_of_front_matter_alone(tmp_path) -> None:
    """A review template's ``cite:`` mapping (title, authors, a link for a venue) names the
    paper; a conference site's page per paper is its front matter alone (authors as a block list
    of ``- author: "Name (Institution)"``): one section each, fields from the front matter."""
    review = ('---\nlayout: review\ntitle:  "Matching Networks for One Shot Learning"\nauthor: Faezeh Amjadi\n'
              "pdf:    https://arxiv.org/pdf/1606.04080.pdf\ncite:\n"
              '  authors: "Oriol Vinyals, Charles Blundell, Timothy Lillicrap"\n'
              '  title:   "Matching Networks for One Shot Learning"\n  venue:   " https://arxiv.org/pdf/1606.04080.pdf"\n'
              "---\n\n### Description\n\nThis paper proposes a solution for small data sets which suffer from overfitting.\n")
    page = ('---\nlayout: default_paper\nid: 6\ntitle: "Attention Distillation for Learning Video Representations"\n'
            'authors:\n  - author: "Miao Liu (Georgia Institute of Technology)"\n'
            '  - author: "Yin Li (University of Wisconsin-Madison)"\npaper: "papers/0006.pdf"\n'
            'abstract: "We address the challenging problem of learning motion representations."\n---\n')
    sections = sections_of_pages(tmp_path, {"review.md": review, "paper_0006.md": page}).set_index("source_path")
    assert sections.loc["review.md", "title"] == "Matching Networks for One Shot Learning"
    assert list(sections.loc["review.md", "authors"]) == ["Oriol Vinyals", "Charles Blundell", "Timothy Lillicrap"]
    assert sections.loc["review.md", "arxiv_id"] == "1606.04080" and pd.isna(sections.loc["review.md", "venue"])
    assert sections.loc["paper_0006.md", "title"] == "Attention Distillation for Learning Video Representations"
    assert list(sections.loc["paper_0006.md", "authors"]) == ["Miao Liu", "Yin Li"]
    assert list(sections.loc["paper_0006.md", "institutions"]) == ["Georgia Institute of Technology",
                                                                   "University of Wisconsin-Madison"]


def test_a_front_matter_of_nested_aliases_keeps_its_strings_and_is_read_at_once() -> None:
    """A "billion laughs" block (10**11 authors by aliases of aliases) is not walked: its
    top-level strings are read, its lists left out."""
    from pipeline.front_matter import front_matter_fields

    def block(levels: int) -> str:
        lines = ["---", "title: Sparse Codes for Widget Parsing", "venue: NeurIPS 2023",
                 'a0: &a0 ["x","x","x","x","x","x","x","x","x","x"]']
        lines += [f"a{i}: &a{i} [" + ",".join([f"*a{i - 1}"] * 10) + "]" for i in range(1, levels + 1)]
        return "\n".join([*lines, f"authors: *a{levels}", "---"])

    start = time.thread_time()
    fields = json.loads(front_matter_fields([{"reason": "front_matter", "text": block(10)}]))
    assert time.thread_time() - start < 1.0  # walking the aliases took hours
    assert (fields["title"], fields["venue"], fields["year"], fields["authors"]) == (
        "Sparse Codes for Widget Parsing", "NeurIPS", 2023, [])


def test_a_page_of_front_matter_alone_is_titled_by_its_title_not_a_description_above_it(tmp_path) -> None:
    """A ``description:`` or ``summary:`` line above ``title:`` headed the page's one section and
    became the paper's title ("We study widgets")."""
    pages = {"desc.md": "---\ndescription: Our paper at NeurIPS on widgets and more\n"
                        "title: Sparse Codes for Widget Parsing\nauthors: Ann Lee, Bo Chen\n---\n",
             "summ.md": '---\nlayout: paper\nsummary: "We study widgets."\n'
                        'title: "Attention Distillation for Widget Parsing"\nauthors:\n  - Ann Lee\n---\n'}
    sections = sections_of_pages(tmp_path, pages).set_index("source_path")
    assert sections.loc["desc.md", "title"] == "Sparse Codes for Widget Parsing"
    assert list(sections.loc["desc.md", "authors"]) == ["Ann Lee", "Bo Chen"]
    assert sections.loc["summ.md", "title"] == "Attention Distillation for Widget Parsing"
    assert list(sections.loc["summ.md", "authors"]) == ["Ann Lee"]


def test_a_nested_mapping_merges_only_its_strings_and_lists() -> None:
    from pipeline.front_matter import _front_matter_object

    block = "---\ntitle: Sparse Widgets\nauthors: Ann Lee\ncite:\n  title: Sparse Widgets for Parsing\n  authors:\n    x: y\n---"
    assert {k: v for k, v in _front_matter_object(block).items() if k != "cite"} == {
        "title": "Sparse Widgets for Parsing", "authors": "Ann Lee"}
