"""Checks of a run's outputs against a gold file, shared by the seed and sample tests."""

from __future__ import annotations

import pandas as pd


def sections_by_file(outputs: dict) -> dict[str, list[dict]]:
    """Sections of each source file, in document order, as plain dicts."""
    docs = outputs["documents"].set_index("doc_id")["source_path"]
    sections = outputs["sections"].sort_values(["doc_id", "ordinal"])
    result: dict[str, list[dict]] = {}
    for row in sections.to_dict("records"):
        result.setdefault(docs[row["doc_id"]], []).append(row)
    return result


def assert_fields_match(outputs: dict, gold: dict) -> None:
    """Every gold section's fields equal the extracted ones, file by file, in order."""
    got = sections_by_file(outputs)
    assert sorted(got) == sorted(gold["sections_by_file"])
    for path, expected in gold["sections_by_file"].items():
        actual = got[path]
        assert [s["title"] for s in actual] == [e["title"] for e in expected], path
        for a, e in zip(actual, expected, strict=True):
            where = f"{path}: {e['title']}"
            arxiv = a["arxiv_id"] if isinstance(a["arxiv_id"], str) else None
            assert arxiv == e["arxiv_id"], where
            assert a["venue"] == e["venue"], where
            assert int(a["year"]) == e["year"], where
            assert a["award"] == e["award"], where
            assert list(a["authors"]) == e["authors"], where
            assert list(a["institutions"]) == e["institutions"], where


def assert_coverage(outputs: dict) -> None:
    """Every non-whitespace character of every document lies in exactly one section, dropped
    span or context span."""
    docs = outputs["documents"]
    for doc in docs[docs["status"] == "ok"].itertuples():
        owner = [0] * len(doc.text)
        spans = []
        for name in ("sections", "dropped", "context"):
            frame = outputs[name]
            frame = frame[frame["doc_id"] == doc.doc_id]
            spans += [(name, int(a), int(b)) for a, b in zip(frame["char_start"], frame["char_end"], strict=True)]
        dropped = [(a, b) for n, a, b in spans if n == "dropped"]
        for name, a, b in spans:
            for i in range(a, b):
                # a section's range may contain a dropped span: those characters belong to it
                if name == "sections" and any(x <= i < y for x, y in dropped):
                    continue
                owner[i] += 1
        bad = [i for i, ch in enumerate(doc.text) if not ch.isspace() and owner[i] != 1]
        assert not bad, (doc.source_path, [(i, doc.text[i], owner[i]) for i in bad[:10]])


def all_section_text(outputs: dict) -> str:
    """Text and normalized text of every section, joined."""
    s: pd.DataFrame = outputs["sections"]
    return "\n".join(s["text"].tolist() + s["text_norm"].tolist())
