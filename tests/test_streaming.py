"""Bounded memory: the runner assembles, dedups and writes chunk by chunk (pipeline.runner
ASSEMBLY_CHUNK), the state keeps rows on disk (pipeline.state), tables are written batch by batch
(pipeline.write.TableWriter). Chunking must change nothing in the tables."""

from __future__ import annotations

import json
import random
import shutil
from pathlib import Path

import pyarrow.parquet as pq
import pytest

import pipeline.documents as documents_module
import pipeline.runner as runner_module
from pipeline.config import load_config
from pipeline.progress import Progress
from pipeline.runner import run
from pipeline.state import STATE_DIR, STATE_ROW_GROUP, Entry, StateStore
from pipeline.write import ERRORS_SCHEMA, PAPERS_SCHEMA, TableWriter

from conftest import SAMPLE, TABLES

REPO = Path(__file__).resolve().parents[1]
DEDUP_ARTICLES = REPO / "tests" / "fixtures" / "dedup" / "articles"
ALL_TABLES = (*TABLES, "errors")


@pytest.fixture
def corpus(tmp_path: Path) -> Path:
    """Sample and dedup articles, a byte copy and a syndicated copy (other boilerplate) far from
    their originals in corpus order, a skipped file between them, and a JSON Lines feed."""
    corpus = tmp_path / "corpus"
    shutil.copytree(SAMPLE, corpus)
    for name in sorted(p.name for p in DEDUP_ARTICLES.iterdir())[:8]:
        shutil.copy(DEDUP_ARTICLES / name, corpus / f"d_{name}")
    shutil.copy(SAMPLE / "a_report_zh-Hans.txt", corpus / "z_copy_of_a.txt")
    blog = (SAMPLE / "c_blog_en.md").read_text(encoding="utf-8")
    (corpus / "zz_syndicated_blog.md").write_text("Reposted from a partner site.\n\n" + blog
                                                  + "\n\nFollow us for more.\n", encoding="utf-8")
    (corpus / "m_notes.pdf").write_bytes(b"%PDF-1.4 not read")
    line = json.dumps({"title": "A feed item", "text": blog})
    (corpus / "feed.jsonl").write_text(f"{line}\nnot json\n", encoding="utf-8")
    return corpus


def test_chunked_assembly_writes_the_same_tables(corpus: Path, tmp_path: Path, use_embedder,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    config = load_config()
    whole = run(corpus, tmp_path / "whole", config, embedder=use_embedder, progress=False)
    monkeypatch.setattr(runner_module, "ASSEMBLY_CHUNK", 2)
    monkeypatch.setattr(runner_module, "REREAD_BATCH", 3)
    monkeypatch.setattr(runner_module, "DOCUMENT_REREAD_BATCH", 2)
    monkeypatch.setattr(runner_module, "PAPER_BATCH", 4)
    monkeypatch.setattr(runner_module, "PAPER_SPILL_FILES", 1000)
    chunked = run(corpus, tmp_path / "chunked", config, embedder=use_embedder, progress=False)
    for name in ALL_TABLES:
        a = pq.read_table(whole.run_dir / f"{name}.parquet")
        b = pq.read_table(chunked.run_dir / f"{name}.parquet")
        assert a.schema.metadata == b.schema.metadata, name
        assert a.equals(b), name
    assert pq.ParquetFile(chunked.run_dir / "sections.parquet").metadata.num_row_groups > 1
    n_papers = pq.ParquetFile(chunked.run_dir / "papers.parquet").metadata.num_rows
    assert pq.ParquetFile(chunked.run_dir / "papers.parquet").metadata.num_row_groups == -(-n_papers // 4) > 5
    assert whole.stats == chunked.stats and chunked.stats["papers_multi_document"] > 0
    assert not (chunked.run_dir / runner_module.SCRATCH_DIR).exists()

    docs = chunked.frames["documents"].set_index("source_path")
    assert list(chunked.frames["documents"]["source_path"]) == sorted(docs.index, key=lambda p: (p.split("#")[0], p))
    assert docs.loc["m_notes.pdf", "status"] == "skipped"
    assert docs.loc["z_copy_of_a.txt", "status"] == "duplicate"
    assert docs.loc["z_copy_of_a.txt", "dup_of"] == docs.loc["a_report_zh-Hans.txt", "doc_id"]
    # the syndicated copy: its own sections, the same papers, dup_of the original
    assert docs.loc["zz_syndicated_blog.md", "status"] == "ok"
    assert docs.loc["zz_syndicated_blog.md", "dup_of"] == docs.loc["c_blog_en.md", "doc_id"]
    assert docs.loc["zz_syndicated_blog.md", "n_sections"] == docs.loc["c_blog_en.md", "n_sections"] > 0
    papers = chunked.frames["papers"]
    sections = chunked.frames["sections"]
    # every paper's summary is the longest summary_norm among its mentions
    summaries = dict(zip(sections["section_id"], sections["summary_norm"], strict=True))
    for ids, summary in zip(papers["section_ids"], papers["summary"], strict=True):
        longest = max((summaries[s] for s in ids if summaries[s]), key=len, default=None)
        assert summary == longest
    assert chunked.summary()["sections"] == len(sections) and chunked.summary()["papers"] == len(papers)
    assert chunked.summary()["skipped_files"] == 1 and chunked.summary()["duplicate_files"] == 1


def test_assembly_starts_before_the_last_file_is_processed(corpus: Path, tmp_path: Path, use_embedder,
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    """The runner assembles a chunk as soon as its files are done, while later files are still
    to process (with a pool, the two overlap), and the tables are the same."""
    config = load_config()
    whole = run(corpus, tmp_path / "whole", config, embedder=use_embedder, progress=False)
    events: list[tuple[str, int]] = []
    process_files, file_rows = runner_module.process_files, runner_module._file_rows

    def logged_process(batch, config):
        events.append(("process", len(batch)))
        return process_files(batch, config)

    def logged_rows(path, *args):
        events.append(("assemble", 1))
        return file_rows(path, *args)

    monkeypatch.setattr(runner_module, "process_files", logged_process)
    monkeypatch.setattr(runner_module, "_file_rows", logged_rows)
    monkeypatch.setattr(runner_module, "ASSEMBLY_CHUNK", 3)
    config.run.batch_size = 2
    result = run(corpus, tmp_path / "interleaved", config, embedder=use_embedder, progress=False)
    kinds = [kind for kind, _ in events]
    processed = sum(n for kind, n in events if kind == "process")
    assert processed == len(result.files["processed"]) == kinds.count("assemble") > 6
    # the first chunk (3 files: 2 batches of 2) is assembled before the third batch is processed
    assert kinds[:6] == ["process", "process", "assemble", "assemble", "assemble", "process"]
    assert kinds[-1] == "assemble"
    for name in ALL_TABLES:
        assert pq.read_table(whole.run_dir / f"{name}.parquet").equals(
            pq.read_table(result.run_dir / f"{name}.parquet")), name


def test_a_run_that_fails_midway_leaves_no_run_folder_and_keeps_its_work(corpus: Path, tmp_path: Path, use_embedder,
                                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    from pipeline.publish import RUNS_DIR

    file_rows, calls = runner_module._file_rows, []

    def failing(*args):
        calls.append(args[0])
        if len(calls) == 4:
            raise RuntimeError("disk on fire")
        return file_rows(*args)

    monkeypatch.setattr(runner_module, "_file_rows", failing)
    monkeypatch.setattr(runner_module, "ASSEMBLY_CHUNK", 2)
    out = tmp_path / "out"
    with pytest.raises(RuntimeError, match="disk on fire"):
        run(corpus, out, load_config(), embedder=use_embedder, progress=False)
    assert not list((out / RUNS_DIR).iterdir())  # the unfinished run folder went
    monkeypatch.setattr(runner_module, "_file_rows", file_rows)
    again = run(corpus, out, load_config(), embedder=use_embedder, progress=False)
    assert set(calls[:3]) <= set(again.files["reused"])  # what the failed run processed was kept


def test_document_feed_takes_results_as_the_assembly_needs_them(tmp_path: Path) -> None:
    from pipeline.documents import FileResult
    from pipeline.runner import BatchResult, _DocumentFeed

    def result(names: list[str], secs: float) -> BatchResult:
        files = [FileResult.from_rows(n, [{"doc_id": n, "content_sha256": "sha-" + n}], []) for n in names]
        return BatchResult(files=files, failed_files=set(), seconds={"ingest": secs, "clean": 0.0, "segment": 0.0,
                                                                     "normalize": 0.0, "extract": 3 * secs},
                           n_files=len(names))

    pulled: list[int] = []

    def results():
        for k, names in enumerate([["a", "b"], ["c"], ["d"]]):
            pulled.append(k)
            yield result(names, 1.0)

    store = StateStore(tmp_path / ".state", "k", "run")
    shas = {"a": "sha-a", "b": "sha-b", "c": "sha-c", "d": None}  # d: not hashed, used once, not kept
    feed = _DocumentFeed(results(), False, shas, {}, store, Progress("off").bar("documents", 4, "file"))
    feed.until(["a"])
    assert pulled == [0] and feed.has("b") and not feed.has("c") and feed.finished is None
    feed.until(["a", "b"])  # already in: takes nothing more
    assert pulled == [0]
    feed.until(["d"])
    assert pulled == [0, 1, 2] and set(feed.entries) == {"a", "b", "c"}
    # every result waits for the assembly in memory (not read back from the state file); d is
    # not in the state at all, the others are gathered for the state's next part (written once
    # STATE_PART_SECONDS pass or the results end: their entries then hold no bytes)
    assert set(feed.pending) == {"a", "b", "c", "d"} and feed.entries["c"].documents is not None
    assert not list((tmp_path / ".state").glob("*.parquet"))
    assert json.loads(feed.pending["c"][0]) == [{"doc_id": "c", "content_sha256": "sha-c"}]
    assert feed.finished is None  # the source is not known to be done until asked once more
    feed.finish()
    assert feed.finished is not None and not feed.in_phase()
    assert feed.entries["c"].documents is None and feed.entries["c"].location is not None  # on disk now
    assert feed.stage_seconds() == {"ingest": 3.0, "clean": 0.0, "segment": 0.0, "normalize": 0.0, "extract": 9.0}
    assert store.read_rows(feed.entries["c"]) == ([{"doc_id": "c", "content_sha256": "sha-c"}], [])

    parallel = _DocumentFeed(iter([result(["a"], 1.0)]), True, shas, {}, store, Progress("off").bar("documents", 1, "file"))
    assert parallel.in_phase()
    parallel.finish()
    wall = parallel.finished - parallel.started
    shares = parallel.stage_seconds()
    assert shares["extract"] == pytest.approx(3 * shares["ingest"]) and sum(shares.values()) == pytest.approx(wall)


def test_state_entries_keep_their_rows_on_disk(tmp_path: Path) -> None:
    store = StateStore(tmp_path / ".state", "k", "run-a")
    entries = [Entry.from_rows(f"f{i:03d}.txt", f"sha{i}", [{"doc_id": str(i), "text": "x" * i}],
                               [{"section_id": f"{i}-001"}] if i % 2 else []) for i in range(2 * STATE_ROW_GROUP + 3)]
    path = store.append(entries)
    assert all(e.documents is None and e.sections is None and e.location[0] == path for e in entries)
    assert pq.ParquetFile(path).metadata.num_row_groups == 3
    assert [e.location[1:] for e in entries[STATE_ROW_GROUP - 1 : STATE_ROW_GROUP + 1]] == [(0, STATE_ROW_GROUP - 1), (1, 0)]
    loaded = StateStore(tmp_path / ".state", "k", "run-b").load()
    assert len(loaded) == len(entries)
    entry = loaded[("f129.txt", "sha129")]
    assert entry.documents is None and (entry.n_documents, entry.n_sections) == (1, 1)
    assert store.read_rows(entry) == ([{"doc_id": "129", "text": "x" * 129}], [{"section_id": "129-001"}])
    assert entry.rows() == store.read_rows(entry)
    assert len(store._groups) == 1  # the group read waits for the next entries; dropped once all are read
    store.drop_cached_rows()
    assert not store._groups and store.read_rows(entry)[1] == [{"section_id": "129-001"}]
    # compaction rewrites the rows it only knows by location, and the entries follow them
    reader = StateStore(tmp_path / ".state", "k", "run-c")
    live = list(reader.load().values())[::2]
    kept = reader.compact(live)
    assert sorted(p.name for p in (tmp_path / ".state").glob("*.parquet")) == [kept.name]
    assert all(e.location[0] == kept for e in live)
    assert reader.read_rows(live[-1])[0] == [{"doc_id": "130", "text": "x" * 130}]


def test_table_writer_writes_batches_and_empty_tables(tmp_path: Path) -> None:
    import pandas as pd

    empty = TableWriter(tmp_path / "errors.parquet", ERRORS_SCHEMA, {"pipeline_version": "t"})
    empty.write(pd.DataFrame(columns=ERRORS_SCHEMA.names))
    assert empty.close() == 0
    table = pq.read_table(tmp_path / "errors.parquet")
    assert table.num_rows == 0 and table.schema.names == ERRORS_SCHEMA.names
    assert table.schema.metadata[b"schema_version"] == b"3" and table.schema.metadata[b"pipeline_version"] == b"t"

    writer = TableWriter(tmp_path / "papers.parquet", PAPERS_SCHEMA, {})
    row = {n: None for n in PAPERS_SCHEMA.names} | {"paper_id": "p-1", "authors": ["A"], "year": 2025}
    writer.write(pd.DataFrame([row]))
    writer.write(pd.DataFrame([row | {"paper_id": "p-2", "authors": []}]))
    assert writer.close() == 2
    read = pq.read_table(tmp_path / "papers.parquet").to_pylist()
    assert [(r["paper_id"], r["authors"], r["year"]) for r in read] == [("p-1", ["A"], 2025), ("p-2", [], 2025)]


def test_to_table_reads_every_missing_marker_as_null_and_refuses_a_truncated_value() -> None:
    import numpy as np
    import pandas as pd
    import pyarrow as pa

    from pipeline.write import to_table

    schema = pa.schema([("s", pa.string()), ("n", pa.int16()), ("f", pa.float32()), ("b", pa.bool_()),
                        ("l", pa.list_(pa.string()))])
    frame = pd.DataFrame({"s": pd.Series(["a", None, np.nan, pd.NA], dtype=object),
                          "n": [2024.0, np.nan, 3.0, 1.0],  # a float column of whole numbers, as pandas makes it
                          "f": pd.Series([0.5, None, np.nan, pd.NA], dtype=object),
                          "b": pd.Series([True, None, np.nan, False], dtype=object),
                          "l": pd.Series([["x"], None, np.nan, np.array(["y", "z"], dtype=object)], dtype=object)})
    table = to_table(frame, schema, {"k": "v"})
    assert table.to_pydict() == {"s": ["a", None, None, None], "n": [2024, None, 3, 1], "f": [0.5, None, None, None],
                                 "b": [True, None, None, False], "l": [["x"], None, None, ["y", "z"]]}
    assert table.schema.metadata == {b"schema_version": b"3", b"k": b"v"}
    with pytest.raises(pa.ArrowInvalid):  # 2.5 does not fit an integer column: never silently 2
        to_table(frame.assign(n=[2.5, 1.0, 1.0, 1.0]), schema, {})
    # an all-NaN float column (pandas' reindex of a missing column) is nulls, even as lists
    assert to_table(frame.assign(l=np.nan, n=np.nan), schema, {}).to_pydict()["l"] == [None] * 4
    for wrong in ({"n": [True, False, True, False]}, {"b": [0.5, 2.0, -1.0, 0.0]}):  # no silent cast
        with pytest.raises((pa.ArrowInvalid, pa.ArrowTypeError)):
            to_table(frame.assign(**wrong), schema, {})


def test_damaged_state_rows_are_processed_again(corpus: Path, tmp_path: Path, use_embedder) -> None:
    """A state file whose key columns read fine but whose rows do not (flipped bytes in the
    data pages) costs a reprocessing, never the run: the state is only a cache."""
    config = load_config()
    out = tmp_path / "out"
    first = run(corpus, out, config, embedder=use_embedder, progress=False)
    tables = {name: pq.read_table(first.run_dir / f"{name}.parquet") for name in ALL_TABLES}
    state_files = sorted((out / STATE_DIR).glob("*.parquet"))
    assert state_files
    for path in state_files:
        data = bytearray(path.read_bytes())
        for k in range(len(data) // 3, len(data) // 3 + 2000, 97):
            data[k] ^= 0xFF
        path.write_bytes(bytes(data))
    second = run(corpus, out, config, embedder=use_embedder, progress=False)
    for name in ALL_TABLES:
        assert pq.read_table(second.run_dir / f"{name}.parquet").equals(tables[name]), name
    # the state was rewritten: a third run reuses every file and reads it without error
    third = run(corpus, out, config, embedder=use_embedder, progress=False)
    assert third.files["processed"] == [] and len(third.files["reused"]) == len(first.files["processed"])
    for name in ALL_TABLES:
        assert pq.read_table(third.run_dir / f"{name}.parquet").equals(tables[name]), name


def test_state_pages_carry_checksums(tmp_path: Path) -> None:
    """One flipped bit in an entry's data is an error on reading (page CRC), never other text."""
    store = StateStore(tmp_path / ".state", "k", "run-a")
    rng = random.Random(0)  # incompressible text: zstd keeps it as literals, where a flip survives decompression
    text = "".join(chr(rng.randint(0x4E00, 0x9FFF)) for _ in range(3000))
    entry = Entry.from_rows("a.txt", "sha", [{"doc_id": "1", "text": text}], [])
    path = store.append([entry])
    data = bytearray(path.read_bytes())
    meta = pq.ParquetFile(path).metadata.row_group(0).column(6)  # the documents column
    start = meta.dictionary_page_offset or meta.data_page_offset
    flipped = 0
    for k in range(start + 30, start + meta.total_compressed_size, 97):
        broken = bytearray(data)
        broken[k] ^= 0x01
        path.write_bytes(bytes(broken))
        reader = StateStore(tmp_path / ".state", "k", "run-b")
        loaded = reader.load()
        if ("a.txt", "sha") not in loaded:
            continue
        try:
            rows = reader.read_rows(loaded[("a.txt", "sha")])
        except Exception:  # noqa: BLE001 - any read error is what we want
            flipped += 1
            continue
        assert rows[0][0]["text"] == text  # read at all: then never different
    assert flipped > 0


def test_state_rows_are_written_without_a_dictionary(tmp_path: Path) -> None:
    """The rows' JSON columns are plain-encoded (no dictionary is tried on bytes that never
    repeat); the state key and version, which repeat in every row, keep theirs."""
    store = StateStore(tmp_path / ".state", "k", "run-a")
    entries = [Entry.from_rows(f"f{i}.txt", f"sha{i}", [{"doc_id": str(i), "text": "x" * i}], []) for i in range(5)]
    path = store.append(entries)
    group = pq.ParquetFile(path).metadata.row_group(0)
    names = [group.column(k).path_in_schema for k in range(group.num_columns)]
    dictionary = {name: group.column(k).dictionary_page_offset is not None for k, name in enumerate(names)}
    assert dictionary == {"source_path": False, "content_sha256": False, "state_key": True,
                          "pipeline_version": True, "n_documents": False, "n_sections": False,
                          "documents": False, "sections": False}
    loaded = StateStore(tmp_path / ".state", "k", "run-b").load()
    assert store.read_rows(loaded[("f4.txt", "sha4")]) == ([{"doc_id": "4", "text": "xxxx"}], [])


def test_document_stages_give_the_same_rows_with_either_string_storage(corpus: Path, monkeypatch) -> None:
    """The per-document stages keep their strings as Python objects (DOCUMENT_STRING_STORAGE):
    the rows they give are byte for byte those of pandas' default Arrow storage."""
    from pipeline.ingest import list_corpus

    config = load_config(None)
    listing, _ = list_corpus(corpus, config.ingest.extensions)
    assert documents_module.DOCUMENT_STRING_STORAGE == "python"
    objects = documents_module.process_files(listing, config)
    monkeypatch.setattr(documents_module, "DOCUMENT_STRING_STORAGE", "pyarrow")
    arrow = documents_module.process_files(listing, config)
    assert [f.source_path for f in objects.files] == [f.source_path for f in arrow.files] == listing["source_path"].tolist()
    assert sum(f.n_sections for f in objects.files) > 20
    assert [(f.documents, f.sections) for f in objects.files] == [(f.documents, f.sections) for f in arrow.files]
    assert objects.failed_files == arrow.failed_files == set()
