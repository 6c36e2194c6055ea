"""Stable paper ids (pipeline.identity): the matching rules on hand-made clusters, then real runs:
ten incremental runs over a generated corpus, and the seed articles."""

from __future__ import annotations

import shutil
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from pipeline.config import load_config
from pipeline.dedup import paper_id_for
from pipeline.identity import (
    CHANGE_KINDS,
    HISTORY_FILE,
    MEMBERS_FILE,
    TRACKED_FIELDS,
    Previous,
    assign,
    text_hash,
    title_hash,
)
from pipeline.publish import RUNS_DIR
from pipeline.runner import run

from conftest import require_seeds

R1, R2, NOW = "20260101T000000.000000Z-aaaaaa", "20260102T000000.000000Z-bbbbbb", "20260103T000000.000000Z-cccccc"


def _clusters(*clusters: tuple[str, list[str]], **fields: list) -> pd.DataFrame:
    """Clusters as dedup gives them: content id, section ids, the tracked fields (None unless given)."""
    frame = pd.DataFrame({"paper_id": [c for c, _ in clusters], "section_ids": [s for _, s in clusters]})
    for name in TRACKED_FIELDS:
        frame[name] = fields.get(name, [None] * len(clusters))
    return frame


def _previous(papers: dict[str, tuple[str, list[str]]], history: list[tuple[str, str | None, str, str]] = (),
              fields: dict[str, dict] | None = None) -> Previous:
    """A previous run: ``papers`` id -> (content id, section ids), issued in R1 unless ``history``
    says otherwise (extra rows: redirects, removed ids)."""
    members = pd.DataFrame([(s, p, c) for p, (c, sections) in papers.items() for s in sections],
                           columns=["section_id", "paper_id", "content_id"])
    rows = {p: (p, p, R1, "added") for p in papers} | {r[0]: r for r in history}
    table = pd.DataFrame(list(rows.values()), columns=["paper_id", "current_id", "since_run", "reason"])
    before = pd.DataFrame([{"paper_id": p, **dict.fromkeys(TRACKED_FIELDS), **(fields or {}).get(p, {})}
                           for p in papers])
    return Previous(members, table, before, R2)


def _history(done) -> dict[str, tuple]:
    return {r.paper_id: (r.current_id, r.since_run, r.reason) for r in done.history.itertuples()}


def _changes(done) -> list[tuple]:
    return [(r.change, r.paper_id, r.related_id) for r in done.changes.itertuples() if r.change != "field_changed"]


def test_a_first_run_gives_every_paper_its_content_id() -> None:
    done = assign(_clusters(("p-a", ["d1-000"]), ("p-b", ["d1-001", "d2-000"])), Previous(), NOW)
    assert done.ids == {"p-a": "p-a", "p-b": "p-b"}
    assert _history(done) == {"p-a": ("p-a", NOW, "added"), "p-b": ("p-b", NOW, "added")}
    assert _changes(done) == [("added", "p-a", None), ("added", "p-b", None)]
    assert done.changes["previous_run_id"].isna().all() and (done.changes["run_id"] == NOW).all()
    assert done.counts() == {"added": 2, "removed": 0, "merged": 0, "split": 0, "field_changed": 0}


def test_a_paper_keeps_its_id_when_its_content_id_changes() -> None:
    # the paper gained an arXiv id (new content id) and a mention: its id stays
    previous = _previous({"p-title": ("p-title", ["d1-000"])})
    done = assign(_clusters(("p-arxiv", ["d1-000", "d2-000"])), previous, NOW)
    assert done.ids == {"p-arxiv": "p-title"}
    assert _history(done) == {"p-title": ("p-title", R1, "added")}
    assert _changes(done) == []


def test_a_merge_keeps_the_oldest_id_and_redirects_the_others() -> None:
    # p-old has one mention, p-new (issued later) two: the oldest wins, not the largest
    previous = _previous({"p-old": ("p-old", ["d1-000"]), "p-new": ("p-new", ["d2-000", "d3-000"])},
                         history=[("p-new", "p-new", R2, "added"), ("p-gone", "p-new", R2, "merged")])
    done = assign(_clusters(("p-new", ["d1-000", "d2-000", "d3-000"])), previous, NOW)
    assert done.ids == {"p-new": "p-old"}
    # the earlier redirect to p-new follows it: no chain to resolve
    assert _history(done) == {"p-old": ("p-old", R1, "added"), "p-new": ("p-old", NOW, "merged"),
                              "p-gone": ("p-old", NOW, "merged")}
    assert _changes(done) == [("merged", "p-new", "p-old")]


def test_a_split_keeps_the_id_on_the_larger_part() -> None:
    previous = _previous({"p-a": ("p-a", ["d1-000", "d2-000", "d3-000"])})
    done = assign(_clusters(("p-a", ["d3-000"]), ("p-x", ["d1-000", "d2-000"])), previous, NOW)
    # the smaller part's content id is the one taken: it gets its first mention's id
    small = paper_id_for(None, None, "d3-000")
    assert done.ids == {"p-x": "p-a", "p-a": small}
    assert _history(done) == {"p-a": ("p-a", R1, "added"), small: (small, NOW, "split")}
    assert _changes(done) == [("split", small, "p-a")]


def test_removed_papers_close_their_redirects_and_may_come_back() -> None:
    previous = _previous({"p-a": ("p-a", ["d1-000"]), "p-b": ("p-b", ["d2-000"])},
                         history=[("p-c", "p-a", R2, "merged"), ("p-z", None, R2, "removed")])
    done = assign(_clusters(("p-b", ["d2-000"]), ("p-z", ["d9-000"])), previous, NOW)
    assert done.ids == {"p-b": "p-b", "p-z": "p-z"}
    assert _history(done) == {"p-a": (None, NOW, "removed"), "p-b": ("p-b", R1, "added"),
                              "p-c": (None, NOW, "removed"), "p-z": ("p-z", NOW, "added")}
    assert _changes(done) == [("added", "p-z", None), ("removed", "p-a", None)]


def test_a_run_without_papers_removes_every_previous_one() -> None:
    previous = _previous({"p-a": ("p-a", ["d1-000"])}, fields={"p-a": {"title": "A"}})
    done = assign(_clusters(), previous, NOW)
    assert done.ids == {} and _history(done) == {"p-a": (None, NOW, "removed")}
    assert _changes(done) == [("removed", "p-a", None)]


def test_an_edited_file_keeps_its_papers_ids_through_their_content_ids() -> None:
    # an edited file has a new doc_id, so new section ids: the paper is found by its content id
    previous = _previous({"p-kept": ("p-arxiv", ["old-000"]), "p-b": ("p-b", ["old-001"])})
    done = assign(_clusters(("p-arxiv", ["new-000"]), ("p-b", ["new-001"]), ("p-c", ["new-002"])), previous, NOW)
    assert done.ids == {"p-arxiv": "p-kept", "p-b": "p-b", "p-c": "p-c"}
    assert _changes(done) == [("added", "p-c", None)]


def test_a_new_paper_never_takes_an_id_in_use() -> None:
    # p-a was kept on another cluster; a new cluster whose content id is p-a gets another id
    previous = _previous({"p-a": ("p-a", ["d1-000"])})
    done = assign(_clusters(("p-a", ["d5-000"]), ("p-x", ["d1-000"])), previous, NOW)
    assert done.ids["p-x"] == "p-a" and done.ids["p-a"] == paper_id_for(None, None, "d5-000")
    assert len(set(done.ids.values())) == 2


def _mentions(**texts: str) -> pd.DataFrame:
    """This run's mentions' hashes: section id -> the mention's text (its title the same)."""
    return pd.DataFrame([(s.replace("_", "-"), text_hash(t), title_hash(t)) for s, t in texts.items()],
                        columns=["section_id", "text_hash", "title_hash"])


def test_a_section_id_naming_another_text_carries_no_id() -> None:
    # another segmentation of d1: the mention of p-a is now d1-001, that of p-b d1-002, d1-000 a new paper's
    previous = _previous({"p-a": ("p-a", ["d1-000"]), "p-b": ("p-b", ["d1-001"])})
    previous.members = previous.members.assign(text_hash=[text_hash("A"), text_hash("B")],
                                               title_hash=[title_hash("A"), title_hash("B")])
    now = _mentions(d1_000="New", d1_001="A", d1_002="B")
    clusters = _clusters(("c-new", ["d1-000"]), ("c-a", ["d1-001"]), ("c-b", ["d1-002"]))
    done = assign(clusters, previous, NOW, now)
    assert done.ids == {"c-new": "c-new", "c-a": "p-a", "c-b": "p-b"}
    assert _changes(done) == [("added", "c-new", None)]
    # without the hashes (a members file of an earlier version), the section ids decide, as before
    unhashed = _previous({"p-a": ("p-a", ["d1-000"]), "p-b": ("p-b", ["d1-001"])})
    assert assign(clusters, unhashed, NOW, now).ids == {"c-new": "p-a", "c-a": "p-b", "c-b": "c-b"}
    # the same section id with its text changed but its title kept (a boundary moved) still carries it
    moved = _mentions(d1_000="A").assign(text_hash=[text_hash("A and a line more")])
    assert assign(_clusters(("c-a", ["d1-000"])), previous, NOW, moved).ids == {"c-a": "p-a"}


def test_field_changes_name_the_field_and_both_values() -> None:
    previous = _previous({"p-a": ("p-a", ["d1-000"])},
                         fields={"p-a": {"title": "Old", "authors": ["X"], "year": 2023}})
    done = assign(_clusters(("p-a", ["d1-000"]), title=["New"], authors=[["X", "Y"]], year=[2024]), previous, NOW)
    changed = done.changes[done.changes["change"] == "field_changed"]
    assert changed[["paper_id", "field", "old_value", "new_value"]].values.tolist() == [
        ["p-a", "authors", '["X"]', '["X", "Y"]'], ["p-a", "title", "Old", "New"], ["p-a", "year", "2023", "2024"]]
    assert (changed["previous_run_id"] == R2).all()



def test_the_same_links_in_another_order_are_no_change() -> None:
    # papers.urls follows the mentions' ids (content hashes): an edit to one file can reorder them
    previous = _previous({"p-a": ("p-a", ["d1-000"])}, fields={"p-a": {"urls": ["https://a.org/1", "https://b.org/2"]}})
    swapped = assign(_clusters(("p-a", ["d1-000"]), urls=[["https://b.org/2", "https://a.org/1"]]), previous, NOW)
    assert swapped.changes[swapped.changes["change"] == "field_changed"].empty
    grown = assign(_clusters(("p-a", ["d1-000"]), urls=[["https://b.org/2", "https://c.org/3"]]), previous, NOW)
    assert grown.changes[grown.changes["change"] == "field_changed"]["field"].tolist() == ["urls"]


# --- real runs ---------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def generated(tmp_path_factory) -> Path:
    """A generated corpus of 40 articles (``bench.generate``)."""
    from bench.generate import generate

    folder = tmp_path_factory.mktemp("generated")
    generate(folder, 40, seed=0)
    return next(p for p in folder.iterdir() if p.is_dir())


def _read(out: Path, name: str, columns: list[str] | None = None) -> pd.DataFrame:
    return pq.read_table(out / f"{name}.parquet", columns=columns).to_pandas()


@pytest.mark.slow
def test_ten_incremental_runs_every_id_ever_issued_resolves(generated: Path, tmp_path: Path, use_embedder) -> None:
    """Files added, changed and deleted over ten runs, and a stricter dedup threshold for two of
    them (splits, then merges): every paper id a run published resolves through ``paper_ids``
    to a paper of the last run or is marked removed, and a paper with a mention left resolves to
    the paper that holds most of them."""
    pool = sorted(p for p in generated.iterdir() if p.suffix != ".jsonl")
    corpus, out = tmp_path / "corpus", tmp_path / "out"
    corpus.mkdir()
    for path in pool[:10]:
        shutil.copy(path, corpus / path.name)
    config, strict = load_config(), load_config(overrides={"dedup": {"match_threshold": 0.97}})
    issued: set[str] = set()
    before: pd.DataFrame | None = None
    before_docs: pd.Series | None = None
    seen_changes: dict[str, int] = dict.fromkeys(CHANGE_KINDS, 0)
    for step in range(10):
        touched = set()
        if step:
            shutil.copy(pool[9 + step], corpus / pool[9 + step].name)  # one new file a run
            if step % 3 == 1:  # a file changed: a paragraph of it dropped
                path = sorted(corpus.iterdir())[step]
                touched.add(path.name)
                text = path.read_bytes()
                path.write_bytes(text[: len(text) * 2 // 3])
            if step % 3 == 2:
                sorted(corpus.iterdir())[step].unlink()
        result = run(corpus, out, strict if step in (4, 5) else config, embedder=use_embedder, progress=False)
        sections = _read(out, "sections", ["section_id", "doc_id", "paper_id"])
        papers = _read(out, "papers", ["paper_id"])
        history = _read(out, "paper_ids")
        changes = _read(out, "changes")
        docs = _read(out, "documents", ["doc_id", "source_path"]).set_index("source_path")["doc_id"]
        issued |= set(papers["paper_id"])
        # every id ever published: in the history once, naming a paper of this run or removed
        assert history["paper_id"].is_unique and issued <= set(history["paper_id"])
        current = set(papers["paper_id"])
        assert set(history.loc[history["current_id"] == history["paper_id"], "paper_id"]) == current
        gone = history["current_id"].isna()
        assert (history.loc[gone, "reason"] == "removed").all()
        assert set(history.loc[~gone, "current_id"]) <= current
        assert set(sections["paper_id"]) == current
        resolve = {p: None if pd.isna(c) else c for p, c in zip(history["paper_id"], history["current_id"],
                                                                 strict=True)}
        assert result.manifest["changes"] == {k: int((changes["change"] == k).sum()) for k in CHANGE_KINDS}
        if before is not None and before_docs is not None:
            # a paper with a mention still here resolves to the paper holding most of them
            both = before.merge(sections, on="section_id", suffixes=("_then", "_now"))
            assert len(both) > 0
            for then, now in both.groupby("paper_id_then")["paper_id_now"]:
                held = now.value_counts()
                assert resolve[then] in held.index and held[resolve[then]] == held.max(), (step, then, held)
            # the changes tell what happened to the previous run's ids
            old = set(before["paper_id"])
            listed = changes.groupby("change")["paper_id"].apply(set).to_dict()
            assert listed.get("removed", set()) == {p for p in old if resolve[p] is None}
            assert listed.get("merged", set()) == {p for p in old if resolve[p] not in (None, p)}
            assert listed.get("added", set()) | listed.get("split", set()) == current - old
            # unchanged files keep their documents' and sections' ids
            kept = [p for p in before_docs.index if p in docs.index and p not in touched]
            assert len(kept) >= 8 and docs[kept].tolist() == before_docs[kept].tolist()
            assert (set(before.loc[before["doc_id"].isin(docs[kept]), "section_id"])
                    == set(sections.loc[sections["doc_id"].isin(docs[kept]), "section_id"]))
        for kind in CHANGE_KINDS:
            seen_changes[kind] += int((changes["change"] == kind).sum())
        before = sections
        before_docs = docs
    # the runs did add, remove, split and merge papers, and change fields
    assert all(seen_changes[k] > 0 for k in CHANGE_KINDS), seen_changes


def test_adding_the_second_seed_article_changes_none_of_the_first_ones_ids(tmp_path: Path, use_embedder) -> None:
    first, second = sorted(p for p in require_seeds().iterdir() if p.is_file())[:2]
    corpus, out = tmp_path / "corpus", tmp_path / "out"
    corpus.mkdir()
    shutil.copy(first, corpus / first.name)
    run(corpus, out, load_config(), embedder=use_embedder, progress=False)
    before = _read(out, "sections", ["section_id", "paper_id"])
    shutil.copy(second, corpus / second.name)
    result = run(corpus, out, load_config(), embedder=use_embedder, progress=False)
    now = _read(out, "sections", ["section_id", "paper_id"]).set_index("section_id")["paper_id"]
    assert len(before) >= 8 and now[before["section_id"]].tolist() == before["paper_id"].tolist()
    assert result.manifest["changes"]["removed"] == result.manifest["changes"]["merged"] == 0
    # papers of the first article gained an arXiv id from the second: their content ids changed,
    # their ids did not
    changes = _read(out, "changes")
    gained = changes[(changes["change"] == "field_changed") & (changes["field"] == "arxiv_id")]
    assert set(gained["paper_id"]) <= set(before["paper_id"]) and len(gained) >= 1
    papers = _read(out, "papers", ["paper_id", "arxiv_id", "title", "section_ids"]).set_index("paper_id")
    assert any(paper_id_for(papers.loc[p, "arxiv_id"], papers.loc[p, "title"], papers.loc[p, "section_ids"][0]) != p
               for p in gained["paper_id"])


def test_a_folder_published_before_these_ids_keeps_its_ids(tmp_path: Path, use_embedder) -> None:
    first, second = sorted(p for p in require_seeds().iterdir() if p.is_file())[:2]
    corpus, out = tmp_path / "corpus", tmp_path / "out"
    corpus.mkdir()
    shutil.copy(first, corpus / first.name)
    old = run(corpus, out, load_config(), embedder=use_embedder, progress=False)
    before = _read(out, "sections", ["section_id", "paper_id"])
    for name in (MEMBERS_FILE, HISTORY_FILE):  # as a version before these ids left its run
        (out / RUNS_DIR / old.run_id / name).unlink()
    shutil.copy(second, corpus / second.name)
    now = run(corpus, out, load_config(), embedder=use_embedder, progress=False)
    sections = _read(out, "sections", ["section_id", "paper_id"]).set_index("section_id")["paper_id"]
    assert sections[before["section_id"]].tolist() == before["paper_id"].tolist()
    history = _read(out, "paper_ids").set_index("paper_id")
    assert (history.loc[before["paper_id"], "since_run"] == old.run_id).all()
    assert now.manifest["changes"]["removed"] == 0 and now.manifest["changes"]["field_changed"] > 0
    # (damaged ids files: test_ids_read_afresh_keep_the_history_and_damaged_members_are_read_from_the_sections)


def test_a_json_line_or_csv_row_keeps_its_doc_id_when_other_lines_change(tmp_path: Path) -> None:
    """``doc_id`` is a hash of the line's (a CSV row: the header's and the row's) bytes: editing,
    adding or deleting other lines, even above it, leaves it as it was."""
    from pipeline.ingest import read_documents

    lines = [f'{{"title": "Paper {k}", "text": "Article {k} about a paper."}}' for k in range(4)]
    rows = ["title,text", *(f"Paper {k},Article {k} about a paper." for k in range(4))]
    feed, table = tmp_path / "feed.jsonl", tmp_path / "table.csv"
    feed.write_text("\n".join(lines) + "\n", encoding="utf-8")
    table.write_text("\n".join(rows) + "\n", encoding="utf-8")
    before = {p: {r["title"]: r["doc_id"] for r in read_documents(p.name, str(p))} for p in (feed, table)}
    # a line added on top, one edited, one deleted
    feed.write_text("\n".join(['{"title": "New", "text": "A new article."}', lines[0],
                               lines[1].replace("Article", "An article"), lines[3]]) + "\n", encoding="utf-8")
    table.write_text("\n".join([rows[0], "New,A new article.", rows[1], rows[2].replace("Article", "An article"),
                                rows[4]]) + "\n", encoding="utf-8")
    for path in (feed, table):
        now = {r["title"]: (r["doc_id"], r["source_path"]) for r in read_documents(path.name, str(path))}
        assert now["Paper 0"][0] == before[path]["Paper 0"] and now["Paper 3"][0] == before[path]["Paper 3"]
        assert now["Paper 1"][0] != before[path]["Paper 1"] and "Paper 2" not in now  # edited, deleted
        assert now["Paper 0"][1] == f"{path.name}#{2 if path == feed else 3}"  # its line number moved


# --- segmentation shifts, damaged or inconsistent ids, older layouts (tiny corpora) --------------

PAPERS = [("Scaling Sparse Attention for Long Documents", "2401.01234", "本文提出一种稀疏注意力方法，在长文档上显著降低计算开销。"),
          ("Robust Graph Neural Networks under Label Noise", "2402.05678", "本文研究标签噪声下的图神经网络，提出一种鲁棒的训练目标。"),
          ("Sparse Mixture of Experts for Speech Recognition", "2403.01111", "本文提出一种稀疏专家混合模型，用于语音识别。"),
          ("Contrastive Pretraining for Tabular Data", "2404.02222", "本文提出表格数据的对比预训练方法，在多个基准上取得更好结果。")]


def _article(papers: list[tuple[str, str, str]]) -> str:
    """A news item listing ``papers`` (title, arXiv id, abstract), one section each."""
    parts = ["机器之心报道\n\n今年的会议公布了几篇最佳论文。\n"]
    for k, (title, arxiv, abstract) in enumerate(papers, 1):
        parts.append(f"论文 {k}：{title}\n\n论文地址：https://arxiv.org/abs/{arxiv}\n\n论文摘要：{abstract}\n")
    return "\n".join(parts)


@pytest.fixture
def tiny(tmp_path: Path) -> tuple[Path, Path]:
    """A corpus of two articles, a.txt (the first three PAPERS) and b.txt (the fourth), and an OUT."""
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    (corpus / "a.txt").write_text(_article(PAPERS[:3]), encoding="utf-8")
    (corpus / "b.txt").write_text(_article(PAPERS[3:]), encoding="utf-8")
    return corpus, tmp_path / "out"


def _ids_by_title(out: Path) -> dict[str, str]:
    papers = _read(out, "papers", ["paper_id", "title"])
    return dict(zip(papers["title"], papers["paper_id"], strict=True))


def _plain_row(history: pd.DataFrame, paper_id: str) -> list:
    """A ``paper_ids`` row (indexed by ``paper_id``), None for a null."""
    return [None if pd.isna(v) else v for v in history.loc[paper_id].tolist()]


def test_papers_keep_their_ids_when_the_sections_of_a_file_shift(tiny, use_embedder) -> None:
    """A section id is a document's id and an ordinal: when another segmentation (another version
    of the segmenter, another setting) numbered a.txt's papers one further, the previous run's
    section ids name other papers' mentions. Each paper keeps its own id, found by its text."""
    corpus, out = tiny
    first = run(corpus, out, load_config(), embedder=use_embedder, progress=False)
    before = _ids_by_title(out)
    assert len(before) == 4
    members_path = out / RUNS_DIR / first.run_id / MEMBERS_FILE
    members = pq.read_table(members_path).to_pandas()
    assert members["text_hash"].notna().all() and members["title_hash"].notna().all()
    # as that segmentation left them: the mention of a.txt's paper k was its section k+1 (mod 3)
    in_a = members["section_id"].str.startswith(members.loc[0, "section_id"][:16])
    ordered = sorted(members.loc[in_a, "section_id"])
    members.loc[in_a, "section_id"] = [ordered[(ordered.index(s) + 1) % 3] for s in members.loc[in_a, "section_id"]]
    pq.write_table(pa.Table.from_pandas(members, preserve_index=False), members_path)
    second = run(corpus, out, load_config(), embedder=use_embedder, progress=False)
    assert _ids_by_title(out) == before
    assert second.manifest["changes"] == dict.fromkeys(CHANGE_KINDS, 0)
    history = _read(out, "paper_ids")
    assert sorted(history["paper_id"]) == sorted(before.values()) and (history["since_run"] == first.run_id).all()


def test_history_rows_naming_no_paper_are_marked_removed_with_a_warning(tiny, use_embedder, caplog) -> None:
    corpus, out = tiny
    first = run(corpus, out, load_config(), embedder=use_embedder, progress=False)
    path = out / RUNS_DIR / first.run_id / HISTORY_FILE
    history = pq.read_table(path).to_pandas()
    kept = history.iloc[0]["paper_id"]
    extra = pd.DataFrame([("p-redirected", "p-nowhere", first.run_id, "merged"),  # names an id that is no paper
                          (kept, kept, first.run_id, "added")],  # a second row of an id
                         columns=history.columns)
    pq.write_table(pa.Table.from_pandas(pd.concat([history, extra]), preserve_index=False), path)
    run(corpus, out, load_config(), embedder=use_embedder, progress=False)
    assert ("disagrees with its papers: 1 repeated row(s) of an id dropped; 1 row(s) naming ids that are no paper "
            "(p-nowhere) marked removed") in caplog.text
    now = _read(out, "paper_ids").set_index("paper_id")
    assert now.index.is_unique and len(now) == len(history) + 1
    assert _plain_row(now, "p-redirected") == [None, first.run_id, "removed"]
    assert set(now["current_id"].dropna()) == set(_ids_by_title(out).values())


def test_ids_read_afresh_keep_the_history_and_damaged_members_are_read_from_the_sections(
        tiny, use_embedder, caplog) -> None:
    corpus, out = tiny
    first = run(corpus, out, load_config(), embedder=use_embedder, progress=False)
    ids = _ids_by_title(out)
    (corpus / "b.txt").unlink()  # its paper is removed: a row of the history names no paper now
    second = run(corpus, out, load_config(), embedder=use_embedder, progress=False)
    gone = ids[PAPERS[3][0]]
    assert second.manifest["changes"]["removed"] == 1
    # damaged members: read from the published sections, with a warning; nothing changes
    (out / RUNS_DIR / second.run_id / MEMBERS_FILE).write_bytes(b"PAR1 not parquet")
    third = run(corpus, out, load_config(), embedder=use_embedder, progress=False)
    assert "ids-members.parquet cannot be read" in caplog.text and "reading sections.parquet instead" in caplog.text
    assert third.manifest["changes"] == dict.fromkeys(CHANGE_KINDS, 0) and _ids_by_title(out) == {
        t: ids[t] for t, _, _ in PAPERS[:3]}
    # no members anywhere (damaged, the published sections deleted): the ids start afresh, and the
    # history stays: the removed id is still listed, the others are found again by their ids
    caplog.clear()
    pq.write_table(pa.table({"a": [1, 2]}), out / RUNS_DIR / third.run_id / MEMBERS_FILE)
    (out / "sections.parquet").unlink()
    run(corpus, out, load_config(), embedder=use_embedder, progress=False)
    assert "lacks the columns" in caplog.text and "paper ids start afresh (4 ids of its history kept)" in caplog.text
    history = _read(out, "paper_ids").set_index("paper_id")
    assert _plain_row(history, gone) == [None, second.run_id, "removed"]
    assert (history.loc[[ids[t] for t, _, _ in PAPERS[:3]], "since_run"] == first.run_id).all()
    assert _read(out, "changes").empty


def test_a_plain_older_layout_keeps_its_ids(tiny, use_embedder) -> None:
    """An output folder of the version before run folders (plain files at the top, no publish
    record) keeps the ids it published: its sections give the papers, its manifest the run."""
    import test_publish

    corpus, out = tiny
    first = run(corpus, out, load_config(), embedder=use_embedder, progress=False)
    ids = _ids_by_title(out)
    test_publish._as_plain_older_version(out)
    (corpus / "c.txt").write_text(_article([("Efficient Retrieval with Learned Indexes", "2405.03333",
                                             "本文提出用学习索引加速检索，在大规模语料上降低延迟。")]), encoding="utf-8")
    second = run(corpus, out, load_config(), embedder=use_embedder, progress=False)
    assert {t: p for t, p in _ids_by_title(out).items() if t in ids} == ids
    assert second.manifest["changes"] == {**dict.fromkeys(CHANGE_KINDS, 0), "added": 1}
    changes = _read(out, "changes")
    assert (changes["previous_run_id"] == first.run_id).all()
    history = _read(out, "paper_ids").set_index("paper_id")
    assert (history.loc[list(ids.values()), "since_run"] == first.run_id).all()
