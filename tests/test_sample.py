"""The sample corpus shipped in corpora/sample against its gold file."""

from __future__ import annotations

from conftest import load_gold
from gold_checks import all_section_text, assert_coverage, assert_fields_match

GOLD = load_gold("sample.json")


def test_counts(sample_run):
    assert (sample_run["documents"]["status"] == "ok").sum() == GOLD["documents"]
    assert len(sample_run["sections"]) == GOLD["sections"]
    assert len(sample_run["papers"]) == GOLD["papers"]


def test_fields_match_gold(sample_run):
    assert_fields_match(sample_run, GOLD)


def test_shared_paper_is_one_record(sample_run):
    papers = sample_run["papers"]
    docs = sample_run["documents"].set_index("source_path")["doc_id"]
    for group in GOLD["shared_papers"]:
        want = sorted(docs[path] for path, _ in group)
        matches = papers[papers["doc_ids"].map(lambda ids, want=want: sorted(ids) == want)]
        assert len(matches) == 1


def test_junk_dropped(sample_run):
    dropped = "\n".join(sample_run["dropped"]["text"])
    for phrase in GOLD["dropped_must_contain"]:
        assert phrase in dropped
    text = all_section_text(sample_run)
    for phrase in GOLD["sections_must_not_contain"]:
        assert phrase not in text
    assert {"byline", "unrelated_trailing", "related_list"} <= set(sample_run["dropped"]["reason"])


def test_coverage(sample_run):
    assert_coverage(sample_run)
