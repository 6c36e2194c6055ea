"""Incremental runs (pipeline.state): unchanged files are reused, new and changed ones processed,
deleted ones disappear, and the tables equal those of a full rebuild over the same files."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pyarrow.parquet as pq
import pytest

import pipeline.state as state_module
from pipeline.config import load_config
from pipeline.publish import CACHE_DIR
from pipeline.runner import run
from pipeline.state import STATE_DIR, Entry, StateStore, to_plain

from conftest import SAMPLE, TABLES

REPO = Path(__file__).resolve().parents[1]
DEDUP_ARTICLES = REPO / "tests" / "fixtures" / "dedup" / "articles"
ALL_TABLES = (*TABLES, "errors")
#: Dedup fixture articles that share papers (transformer, resnet, ddpm, ldm, flow matching).
ARTICLES = ("01_zh-Hans_numbered_foundations.txt", "02_en_md-h3_diffusion-explainer.md",
            "03_zh-Hant_kv-before-body_diffusion_big5.txt", "05_en_narrative_three-classics.txt",
            "10_zh-Hant_md-h3_classics.md", "16_zh-Hant_narrative_diffusion-history.txt")


def _assert_same_tables(a: Path, b: Path) -> None:
    for name in ALL_TABLES:
        first, second = pq.read_table(a / f"{name}.parquet"), pq.read_table(b / f"{name}.parquet")
        assert first.schema.metadata == second.schema.metadata, name
        assert first.equals(second), name


@pytest.fixture
def corpus(tmp_path: Path) -> Path:
    """The sample, six dedup fixture articles, a byte copy, and a JSON Lines feed with a
    repeated line and a bad line."""
    corpus = tmp_path / "corpus"
    shutil.copytree(SAMPLE, corpus)
    (corpus / "dedup").mkdir()
    for name in ARTICLES:
        shutil.copy(DEDUP_ARTICLES / name, corpus / "dedup" / name)
    shutil.copy(SAMPLE / "a_report_zh-Hans.txt", corpus / "z_copy_of_a.txt")
    line = json.dumps({"title": "A feed item", "text": (SAMPLE / "c_blog_en.md").read_text(encoding="utf-8")})
    (corpus / "feed.jsonl").write_text(f"{line}\n{line}\nnot json\n", encoding="utf-8")
    return corpus


def test_incremental_run_equals_full_rebuild(corpus: Path, tmp_path: Path, use_embedder) -> None:
    out = tmp_path / "out"
    config = load_config()
    first = run(corpus, out, config, embedder=use_embedder, progress=False)
    n_files = len(first.files["processed"])
    assert first.files["reused"] == [] and first.files["removed"] == []
    docs1 = first.frames["documents"].set_index("source_path")
    assert docs1.loc["z_copy_of_a.txt", "status"] == "duplicate"
    assert docs1.loc["feed.jsonl#2", "status"] == "duplicate"
    papers1 = first.frames["papers"].set_index("paper_id")

    # delete two files (one the original of a byte copy), change one, add one
    deleted = ["a_report_zh-Hans.txt", "dedup/05_en_narrative_three-classics.txt"]
    for name in deleted:
        (corpus / name).unlink()
    changed = corpus / "b_digest_zh-Hant.txt"
    changed.write_text(changed.read_text(encoding="utf-8") + "\n本文完。\n", encoding="utf-8")
    added = corpus / "dedup" / "21_en_md-h3_diffusion-explainer-again.md"
    added.write_text((DEDUP_ARTICLES / "02_en_md-h3_diffusion-explainer.md").read_text(encoding="utf-8")
                     + "\nRead more next week.\n", encoding="utf-8")

    second = run(corpus, out, config, embedder=use_embedder, progress=False)
    assert second.files["processed"] == ["b_digest_zh-Hant.txt", "dedup/21_en_md-h3_diffusion-explainer-again.md"]
    assert second.files["removed"] == sorted(deleted)
    assert len(second.files["reused"]) == n_files - 2 - 1
    manifest = json.loads((out / "manifest.json").read_text(encoding="utf-8"))
    assert manifest["files"] == second.files and manifest["mode"] == "incremental"

    rebuilt = tmp_path / "rebuilt"
    shutil.copytree(out / CACHE_DIR, rebuilt / CACHE_DIR)  # embeddings are keyed by text: only saves time
    run(corpus, rebuilt, config, embedder=use_embedder, progress=False)
    _assert_same_tables(out, rebuilt)
    full = run(corpus, out, config, embedder=use_embedder, progress=False, full=True)
    assert full.files["reused"] == [] and full.manifest["mode"] == "full"
    _assert_same_tables(out, rebuilt)

    # the copy whose original went is now the original; its sections came from the state
    docs2 = second.frames["documents"].set_index("source_path")
    assert docs2.loc["z_copy_of_a.txt", "status"] == "ok" and docs2.loc["z_copy_of_a.txt", "n_sections"] > 0
    # the new file's mentions joined papers the first run knew, under the same ids
    papers2 = second.frames["papers"].set_index("paper_id")
    new_doc = docs2.loc["dedup/21_en_md-h3_diffusion-explainer-again.md", "doc_id"]
    joined = [pid for pid, doc_ids in papers2["doc_ids"].items() if new_doc in doc_ids and pid in papers1.index]
    assert joined
    assert all(papers2.loc[pid, "n_mentions"] > papers1.loc[pid, "n_mentions"] for pid in joined)
    # papers only the deleted narrative mentioned are gone
    gone_doc = docs1.loc["dedup/05_en_narrative_three-classics.txt", "doc_id"]
    only_there = [pid for pid, doc_ids in papers1["doc_ids"].items() if list(doc_ids) == [gone_doc]]
    assert not set(only_there) & set(papers2.index)


def test_a_dedup_setting_reuses_every_file_and_a_document_setting_reprocesses(tmp_path: Path,
                                                                             use_embedder) -> None:
    out = tmp_path / "out"
    run(SAMPLE, out, load_config(), embedder=use_embedder, progress=False)
    stricter = load_config(overrides={"dedup": {"match_threshold": 0.9}})
    result = run(SAMPLE, out, stricter, embedder=use_embedder, progress=False)
    assert result.files["processed"] == [] and len(result.files["reused"]) == 3
    shutil.copytree(out / CACHE_DIR, tmp_path / "fresh" / CACHE_DIR)
    run(SAMPLE, tmp_path / "fresh", stricter, embedder=use_embedder, progress=False)
    _assert_same_tables(out, tmp_path / "fresh")

    hant = load_config(overrides={"normalize": {"target_script": "zh-Hant"}})
    result = run(SAMPLE, out, hant, embedder=use_embedder, progress=False)
    assert result.files["reused"] == [] and len(result.files["processed"]) == 3


def test_a_new_pipeline_version_reprocesses_everything(tmp_path: Path, use_embedder, monkeypatch) -> None:
    out = tmp_path / "out"
    run(SAMPLE, out, load_config(), embedder=use_embedder, progress=False)
    monkeypatch.setattr(state_module, "__version__", "999.0")
    result = run(SAMPLE, out, load_config(), embedder=use_embedder, progress=False)
    assert result.files["reused"] == []
    # the entries of the old version were dropped from the state
    assert len(list((out / STATE_DIR).glob("*.parquet"))) == 1


def test_a_damaged_state_file_only_costs_time(tmp_path: Path, use_embedder, caplog) -> None:
    out = tmp_path / "out"
    run(SAMPLE, out, load_config(), embedder=use_embedder, progress=False)
    for path in (out / STATE_DIR).glob("*.parquet"):
        path.write_bytes(b"PAR1 this is not parquet")
    result = run(SAMPLE, out, load_config(), embedder=use_embedder, progress=False)
    assert len(result.files["processed"]) == 3
    assert "ignoring unreadable state file" in caplog.text
    assert len(run(SAMPLE, out, load_config(), embedder=use_embedder, progress=False).files["reused"]) == 3


def test_state_parts_of_a_killed_run_are_read_and_compacted(tmp_path: Path) -> None:
    folder = tmp_path / STATE_DIR
    writer = StateStore(folder, "k1", "run-a")
    writer.append([Entry.from_rows("a.txt", "aa", [{"doc_id": "1", "year": 2024}], [])])
    writer.append([Entry.from_rows("b.txt", "bb", [{"doc_id": "2"}], [{"section_id": "2-001", "authors": ["X"]}])])
    StateStore(folder, "k2", "run-b").append([Entry.from_rows("c.txt", "cc", [], [])])
    reader = StateStore(folder, "k1", "run-c")
    entries = reader.load()
    assert set(entries) == {("a.txt", "aa"), ("b.txt", "bb")}
    assert entries[("b.txt", "bb")].rows() == ([{"doc_id": "2"}], [{"section_id": "2-001", "authors": ["X"]}])
    assert reader.maybe_compact([entries[("a.txt", "aa")]])  # 2 dead rows of 1 live: compact
    assert [p.name for p in folder.glob("*.parquet")] == ["state-run-c.parquet"]
    assert set(StateStore(folder, "k1", "run-d").load()) == {("a.txt", "aa")}


def test_to_plain_gives_batch_independent_values() -> None:
    import numpy as np
    import pandas as pd

    assert to_plain(np.float64(2024.0)) == 2024 and isinstance(to_plain(np.float64(2024.0)), int)
    assert to_plain(float("nan")) is None and to_plain(pd.NA) is None and to_plain(None) is None
    assert to_plain(np.array(["a", "b"])) == ["a", "b"]
    assert to_plain({"k": (1, np.int32(2), 0.5, np.bool_(True))}) == {"k": [1, 2, 0.5, True]}
    assert to_plain(float("inf")) is None and to_plain([np.float32("-inf"), 1.5]) == [None, 1.5]
    with pytest.raises(TypeError, match="cannot keep a object"):
        to_plain(object())


@pytest.mark.parametrize(("rows", "by_json"), [
    ([{"doc_id": "1", "text": "深度学习 · naïve", "year": 2025, "score": 0.1 + 0.2, "spans": [[0, 3, "byline"]],
      "status": None, "ok": True}], False),
    ([{"text": "lone \ud800 surrogate"}], True),  # strict JSON (orjson) cannot hold it
    ([{"n": 2**64 + 1}], True),  # beyond 64 bits: orjson would read it back as a float
    ([], False),
])
def test_state_rows_come_back_as_they_were_written(rows, by_json: bool) -> None:
    entry = Entry.from_rows("a.txt", "sha", rows, rows)
    assert entry.documents.startswith(b" ") is by_json
    documents, sections = entry.rows()
    assert documents == rows and sections == rows
    assert [type(v) for r in documents for v in r.values()] == [type(v) for r in rows for v in r.values()]


def test_state_rows_refuse_what_json_cannot_hold() -> None:
    with pytest.raises(TypeError, match="not JSON serializable"):
        Entry.from_rows("a.txt", "sha", [{"when": object()}], [])


def test_the_first_run_into_an_empty_folder_is_a_full_one(tmp_path, use_embedder) -> None:
    import json

    from pipeline.config import load_config
    from pipeline.runner import run

    from conftest import SAMPLE

    config = load_config()
    config.run.workers = 1
    out = tmp_path / "out"
    run(SAMPLE, out, config, embedder=use_embedder, progress=False)
    assert json.loads((out / "manifest.json").read_text(encoding="utf-8"))["mode"] == "full"
    run(SAMPLE, out, config, embedder=use_embedder, progress=False)
    assert json.loads((out / "manifest.json").read_text(encoding="utf-8"))["mode"] == "incremental"


def test_a_state_path_that_is_a_file_stops_the_run_before_any_work(tmp_path: Path) -> None:
    (tmp_path / STATE_DIR).parent.mkdir()
    (tmp_path / STATE_DIR).write_bytes(b"not a folder")
    with pytest.raises(NotADirectoryError, match="is not a folder: the incremental state is kept there"):
        StateStore(tmp_path / STATE_DIR, "k1", "run-a")


def test_foreign_entries_in_the_state_folder_are_left_alone(tmp_path: Path) -> None:
    folder = tmp_path / STATE_DIR
    (folder / "x.parquet").mkdir(parents=True)  # a folder named like a state file
    store = StateStore(folder, "k1", "run-a")
    store.append([Entry.from_rows("a.txt", "aa", [{"doc_id": "1"}], [])])
    entries = store.load()
    assert set(entries) == {("a.txt", "aa")}
    store.compact(entries.values())  # what --full does: rewrite the state, delete the old files
    assert (folder / "x.parquet").is_dir()
    assert [p.name for p in folder.glob("state-*.parquet")] == ["state-run-a.parquet"]
    assert set(StateStore(folder, "k1", "run-b").load()) == {("a.txt", "aa")}


def test_keep_writes_a_part_when_results_come_5_s_after_the_last_one_or_fill_it(tmp_path: Path,
                                                                              monkeypatch) -> None:
    folder = tmp_path / STATE_DIR
    now = [100.0]
    monkeypatch.setattr(state_module, "time", type("Clock", (), {"monotonic": staticmethod(lambda: now[0])}))
    monkeypatch.setattr(state_module, "STATE_PART_SECONDS", 5.0)
    monkeypatch.setattr(state_module, "STATE_PART_BYTES", 10_000)
    entries = [Entry.from_rows(f"{i}.txt", f"h{i}", [{"doc_id": str(i)}], []) for i in range(8)]
    store = StateStore(folder, "k1", "run-a")  # made at t = 100

    def on_disk() -> set[tuple[str, str]]:
        return set(StateStore(folder, "k1", "run-x").load())

    assert store.keep(entries[:2]) is None
    now[0] += 4.9
    assert store.keep(entries[2:3]) is None and on_disk() == set()  # gathered, not written yet
    now[0] += 0.1  # 5 s after the store was made: the part is written with the new ones
    part = store.keep(entries[3:4])
    assert part is not None and part.name == "part-run-a-00001.parquet"
    assert on_disk() == {(f"{i}.txt", f"h{i}") for i in range(4)}
    assert entries[0].documents is None and entries[0].location == (part, 0, 0)  # read from disk now

    now[0] += 1.0
    assert store.keep(entries[4:5]) is None  # 1 s after the last part
    monkeypatch.setattr(state_module, "STATE_PART_BYTES", len(entries[5].documents) + len(entries[5].sections))
    assert store.keep(entries[5:6]) is not None  # enough bytes (the bound is the gathered ones' sum)
    assert on_disk() == {(f"{i}.txt", f"h{i}") for i in range(6)}
    monkeypatch.setattr(state_module, "STATE_PART_BYTES", 10_000)
    # slow batches: one that comes 5 s or more after the last part is written at once, not held
    # until the next one (which may come much later, or never when the run is killed)
    now[0] += 12.0
    assert store.keep(entries[6:7]) is not None and ("6.txt", "h6") in on_disk()
    assert store.keep([]) is None and store.flush() is None  # nothing gathered, nothing written

    # a write that fails or is interrupted keeps the entries gathered for the next try
    real_write = StateStore._write

    def interrupted(self, name, entries):
        raise KeyboardInterrupt

    monkeypatch.setattr(StateStore, "_write", interrupted)
    now[0] += 6.0
    with pytest.raises(KeyboardInterrupt):
        store.keep(entries[7:])
    monkeypatch.setattr(StateStore, "_write", real_write)
    assert ("7.txt", "h7") not in on_disk()
    assert store.flush() is not None and ("7.txt", "h7") in on_disk()


def test_a_run_of_many_batches_leaves_one_part_and_no_compaction(tmp_path: Path, use_embedder,
                                                                 monkeypatch) -> None:
    # one part per batch of files made 10 parts here, more than MAX_STATE_FILES (8 then): the end
    # of the run rewrote them all into one file
    monkeypatch.setattr(state_module, "STATE_PART_SECONDS", 3600.0)
    compactions = []
    monkeypatch.setattr(StateStore, "compact", lambda self, live: compactions.append(len(list(live))))
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    for i in range(20):
        (corpus / f"{i:02d}.md").write_text(f"# Paper {i}: Learning to count to {i}\n\n"
                                            f"We count to {i} with a {i}-layer network.\n", encoding="utf-8")
    config = load_config(overrides={"run": {"workers": 1, "batch_size": 2}})
    out = tmp_path / "out"
    result = run(corpus, out, config, embedder=use_embedder, progress=False)
    assert len(result.files["processed"]) == 20
    assert [p.name.split("-")[0] for p in (out / STATE_DIR).glob("*.parquet")] == ["part"] and compactions == []
    again = run(corpus, out, config, embedder=use_embedder, progress=False)
    assert again.files["processed"] == [] and len(again.files["reused"]) == 20


def test_an_interrupted_run_keeps_the_results_it_gathered(tmp_path: Path, use_embedder, monkeypatch) -> None:
    import pipeline.runner as runner_module

    monkeypatch.setattr(state_module, "STATE_PART_SECONDS", 3600.0)  # nothing written before the end
    real, calls = runner_module.process_files, []

    def stopped_at_the_third_batch(batch, config):
        calls.append(len(batch))
        if len(calls) == 3:
            raise KeyboardInterrupt
        return real(batch, config)

    monkeypatch.setattr(runner_module, "process_files", stopped_at_the_third_batch)
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    for i in range(6):
        (corpus / f"{i:02d}.md").write_text(f"# Paper {i}: Counting to {i}\n\nWe count to {i}.\n", encoding="utf-8")
    config = load_config(overrides={"run": {"workers": 1, "batch_size": 2}})
    out = tmp_path / "out"
    with pytest.raises(KeyboardInterrupt):
        run(corpus, out, config, embedder=use_embedder, progress=False)
    monkeypatch.setattr(runner_module, "process_files", real)
    result = run(corpus, out, config, embedder=use_embedder, progress=False)
    assert result.files["reused"] == ["00.md", "01.md", "02.md", "03.md"]
    assert result.files["processed"] == ["04.md", "05.md"]
