"""The runner: duplicates, empty batches, error isolation, stage-chain checks, manifest."""

from __future__ import annotations

import json
import shutil

import pandas as pd
import pytest

from pipeline.config import load_config
from pipeline.documents import _run_isolated
from pipeline.errors import StageInputError
from pipeline.runner import DOCUMENT_STAGES, SECTION_STAGES, run
from pipeline.segment import EXPLODED_COLUMNS
from pipeline.stage import Stage, check_chain

from conftest import SAMPLE, read_outputs


@pytest.fixture
def messy_corpus(tmp_path):
    corpus = tmp_path / "corpus"
    shutil.copytree(SAMPLE, corpus)
    shutil.copy(SAMPLE / "a_report_zh-Hans.txt", corpus / "copy_of_a.txt")
    (corpus / "empty1.txt").write_bytes(b"")
    (corpus / "empty2.txt").write_bytes(b"")
    (corpus / "binary.txt").write_bytes(bytes(range(256)) * 4)
    (corpus / "picture.png").write_bytes(b"\x89PNG\r\n\x1a\n")
    return corpus


def test_a_feed_repeating_an_item_keeps_one_and_marks_the_copy(tmp_path, use_embedder):
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    item = json.dumps({"title": "A feed item", "text": (SAMPLE / "c_blog_en.md").read_text(encoding="utf-8")})
    other = json.dumps({"title": "Another", "text": (SAMPLE / "a_report_zh-Hans.txt").read_text(encoding="utf-8")})
    (corpus / "feed.jsonl").write_text(f"{item}\n{other}\n{item}\n", encoding="utf-8")
    shutil.copy(SAMPLE / "c_blog_en.md", corpus / "single.md")
    run(corpus, tmp_path / "out", load_config(), embedder=use_embedder, progress=False)
    docs = read_outputs(tmp_path / "out")["documents"].set_index("source_path")
    assert docs["doc_id"].is_unique
    assert docs.loc["feed.jsonl#3", "status"] == "duplicate"
    assert docs.loc["feed.jsonl#3", "error"] == "same content as feed.jsonl#1"
    assert docs.loc["feed.jsonl#3", "text"] == docs.loc["feed.jsonl#1", "text"]
    assert docs.loc["feed.jsonl#1", "status"] == docs.loc["feed.jsonl#2", "status"] == docs.loc["single.md", "status"] == "ok"
    assert list(docs.index) == ["feed.jsonl#1", "feed.jsonl#2", "feed.jsonl#3", "single.md"]


def test_messy_corpus_one_document_per_batch(messy_corpus, tmp_path, use_embedder):
    config = load_config(overrides={"run": {"batch_size": 1}})
    result = run(messy_corpus, tmp_path / "out", config, embedder=use_embedder, progress=False)
    out = read_outputs(tmp_path / "out")
    docs = out["documents"].set_index("source_path")
    assert docs["doc_id"].is_unique
    assert docs.loc["copy_of_a.txt", "status"] == "duplicate"
    assert docs.loc["copy_of_a.txt", "error"] == "same content as a_report_zh-Hans.txt"
    assert docs.loc["copy_of_a.txt", "text"] == docs.loc["a_report_zh-Hans.txt", "text"]
    assert docs.loc["empty1.txt", "status"] == docs.loc["empty2.txt", "status"] == "empty"
    assert docs.loc["binary.txt", "status"] == "error"
    assert docs.loc["picture.png", "status"] == "skipped"
    # the good files give the same papers as the plain sample run
    assert len(out["sections"]) == 8 and out["sections"]["section_id"].is_unique
    assert len(out["papers"]) == 7 and out["papers"]["paper_id"].is_unique
    summary = result.summary()
    assert (summary["failed_files"], summary["skipped_files"], summary["duplicate_files"]) == (1, 1, 1)
    manifest = json.loads((tmp_path / "out" / "manifest.json").read_text(encoding="utf-8"))
    assert "picture.png" not in manifest["inputs"]
    assert manifest["row_counts"]["sections"] == 8
    assert set(manifest["seconds"]) == {"ingest", "clean", "segment", "normalize", "extract", "dedup", "write"}
    # the dedup stage in its two parts, which add up to it (to the millisecond, float sums aside)
    parts = manifest["dedup_seconds"]
    assert set(parts) == {"embedding", "clustering"} and all(v >= 0 for v in parts.values())
    assert parts["embedding"] > 0 and parts["clustering"] > 0
    assert abs(parts["embedding"] + parts["clustering"] - manifest["seconds"]["dedup"]) < 1e-9


def test_batch_size_does_not_change_outputs(tmp_path, use_embedder):
    for size in (1, 64):
        config = load_config(overrides={"run": {"batch_size": size}})
        run(SAMPLE, tmp_path / str(size), config, embedder=use_embedder, progress=False)
    a, b = read_outputs(tmp_path / "1"), read_outputs(tmp_path / "64")
    for name in a:
        pd.testing.assert_frame_equal(a[name], b[name])


def _fails_on_second(batch: pd.DataFrame, config) -> pd.DataFrame:
    if (batch["doc_id"] == "d2").any():
        raise ValueError("cannot handle d2")
    return batch.assign(seen=True)


def test_a_failing_row_is_isolated_and_named():
    stage = Stage(name="probe", fn=_fails_on_second, requires=("doc_id",), adds=("seen",))
    batch = pd.DataFrame({"doc_id": ["d1", "d2", "d3"]})
    out, failures = _run_isolated(stage, batch, load_config(), key="doc_id")
    assert out["doc_id"].tolist() == ["d1", "d3"]
    assert failures == {"d2": "probe: ValueError: cannot handle d2"}


def test_a_stage_failure_in_a_batch_ingest_read_cleanly_is_an_errors_row(tmp_path, monkeypatch):
    """A stage that raises on one document of a batch in which ingest failed nothing: the row
    gets the stage and error type where it failed, through the state's JSON rows."""
    import pipeline.documents as documents
    from pipeline.ingest import list_corpus
    from pipeline.runner import errors_table

    shutil.copy(SAMPLE / "a_report_zh-Hans.txt", tmp_path / "a.txt")
    (tmp_path / "b.txt").write_text("论文摘要：第二篇。", encoding="utf-8")
    clean = DOCUMENT_STAGES[1]

    def fails_on_b(batch: pd.DataFrame, config) -> pd.DataFrame:
        if batch["text"].str.contains("第二篇").any():
            raise LookupError("no such thing")
        return clean.fn(batch, config)

    monkeypatch.setattr(documents, "DOCUMENT_STAGES", (DOCUMENT_STAGES[0], Stage(
        name="clean", fn=fails_on_b, requires=clean.requires, adds=clean.adds), *DOCUMENT_STAGES[2:]))
    listing, _ = list_corpus(tmp_path, [".txt"])
    result = documents.process_files(listing, load_config())
    docs = pd.DataFrame([row for f in result.files for row in f.rows()[0]])
    assert docs["status"].tolist() == ["ok", "error"]
    assert errors_table(docs).to_dict("records") == [
        {"path": "b.txt", "stage": "clean", "error_type": "LookupError", "message": "clean: LookupError: no such thing"}]


def test_stage_chain_is_consistent_and_checked():
    check_chain(DOCUMENT_STAGES, ["source_path", "abs_path"])
    check_chain(SECTION_STAGES, EXPLODED_COLUMNS)
    with pytest.raises(StageInputError, match="requires .*'dropped'.*which no earlier stage adds"):
        check_chain(DOCUMENT_STAGES[::2], ["source_path", "abs_path"])
    with pytest.raises(StageInputError, match="lacks; the batch has"):
        DOCUMENT_STAGES[1](pd.DataFrame({"doc_id": ["x"]}), load_config())


def test_spill_gives_back_what_was_written_and_removes_its_file(tmp_path) -> None:
    """The second pass keeps the fused papers and the summaries it finds in scratch files."""
    import pyarrow as pa

    from pipeline.runner import _SUMMARY_SCHEMA, _Spill

    spill = _Spill(tmp_path / "s.arrow", _SUMMARY_SCHEMA)
    spill.write(pa.table([pa.array([3, 0], pa.int32()), pa.array(["c", None])], schema=_SUMMARY_SCHEMA))
    spill.write(pa.table([pa.array([4], pa.int32()), pa.array(["\u6458\u8981"])], schema=_SUMMARY_SCHEMA).to_batches()[0])
    assert (tmp_path / "s.arrow").stat().st_size > 0
    got = spill.read()
    assert got.schema == _SUMMARY_SCHEMA and got.to_pydict() == {"row": [3, 0, 4], "summary": ["c", None, "\u6458\u8981"]}
    assert got["row"].num_chunks == 2 and list(tmp_path.iterdir()) == []
    empty = _Spill(tmp_path / "e.arrow", _SUMMARY_SCHEMA).read()
    assert empty.num_rows == 0 and empty.schema == _SUMMARY_SCHEMA
    with pytest.raises(pa.ArrowInvalid):  # another schema is refused, not written
        _Spill(tmp_path / "x.arrow", _SUMMARY_SCHEMA).write(pa.table({"row": pa.array([1])}))


def test_scattered_puts_each_value_at_its_row() -> None:
    """The second pass puts each paper's summary back at its row from the reread batches."""
    import pyarrow as pa

    from pipeline.runner import _scattered

    got = _scattered(5, [pa.array([3, 0], pa.int32()), pa.array([4], pa.int32())],
                     [pa.array(["c", "a"]), pa.array([None], pa.string())])
    assert got.type == pa.string() and got.to_pylist() == ["a", None, None, "c", None]
    assert _scattered(2, [], []).to_pylist() == [None, None]
    assert _scattered(0, [], []).to_pylist() == []
    with pytest.raises(IndexError):
        _scattered(2, [pa.array([2], pa.int32())], [pa.array(["x"])])
    with pytest.raises(IndexError):  # not the last row, as numpy would read -1
        _scattered(2, [pa.array([-1], pa.int32())], [pa.array(["x"])])
    with pytest.raises(IndexError):
        _scattered(2, [pa.array([None], pa.int32())], [pa.array(["x"])])


def test_fill_columns_takes_lists_or_arrow_arrays_and_checks_them_first(tmp_path) -> None:
    """The second pass replaces columns of a scratch table batch by batch."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from pipeline.runner import _fill_columns

    schema = pa.schema([("id", pa.string()), ("paper_id", pa.string()), ("match_score", pa.float32())])
    pq.write_table(pa.table({"id": ["a", "b", "c"], "paper_id": [None] * 3, "match_score": [None] * 3}, schema=schema),
                   tmp_path / "in.parquet")
    seen = []
    for n, ids in enumerate((["p1", "p2", "p1"], pa.array(["p1", "p2", "p1"]))):
        out = tmp_path / f"out{n}.parquet"
        got = _fill_columns(tmp_path / "in.parquet", out, schema, {}, {
            "paper_id": (ids, pa.string()), "match_score": (pa.array([0.5, None, 0.25], pa.float32()), pa.float32())},
            visit=lambda t: seen.append(t.num_rows), batch_rows=2)
        assert got == 3 and pq.read_table(out).to_pydict() == {
            "id": ["a", "b", "c"], "paper_id": ["p1", "p2", "p1"], "match_score": [0.5, None, 0.25]}
    assert seen == [2, 1, 2, 1]
    with pytest.raises(ValueError, match="2 values of paper_id for 3 rows of in.parquet"):
        _fill_columns(tmp_path / "in.parquet", tmp_path / "short.parquet", schema, {}, {"paper_id": (pa.array(["a", "b"]), pa.string())}, batch_rows=2)
    with pytest.raises(TypeError, match="paper_id values are int64, not string"):
        _fill_columns(tmp_path / "in.parquet", tmp_path / "int.parquet", schema, {}, {"paper_id": (pa.array([1, 2, 3]), pa.string())}, batch_rows=2)
    assert not (tmp_path / "short.parquet").exists() and not (tmp_path / "int.parquet").exists()


def test_an_error_message_with_a_lone_surrogate_is_kept_as_its_escape(tmp_path, caplog) -> None:
    """A stage error that quotes undecodable input (a lone surrogate) becomes an error row whose
    message UTF-8, and so the errors table, can hold, instead of stopping the run at the write."""
    import logging

    import pyarrow.parquet as pq

    # the batch's traceback quotes the surrogate: kept out of pytest's captured log, which
    # pytest-xdist sends between processes as UTF-8 (the pipeline's own log handlers escape it)
    caplog.set_level(logging.CRITICAL, logger="pipeline.documents")

    from pipeline.runner import errors_table
    from pipeline.write import ERRORS_SCHEMA, TableWriter

    def fussy(batch: pd.DataFrame, config) -> pd.DataFrame:
        bad = [t for t in batch["text"] if "\udcff" in t]
        if bad:
            raise ValueError(f"cannot read {bad[0]!s}")
        return batch.assign(dropped=[[] for _ in range(len(batch))])

    stage = Stage(name="clean", fn=fussy, requires=("text",), adds=("dropped",))
    # (the stages hold their strings as Python objects, which can hold a surrogate; Arrow cannot)
    with pd.option_context("mode.string_storage", "python"):
        batch = pd.DataFrame({"doc_id": ["a", "b"], "source_path": ["a.txt", "b.txt"],
                              "text": ["fine", "x\udcffy"], "status": ["ok", "ok"], "error": [None, None]})
        out, failures = _run_isolated(stage, batch, load_config(None), key="doc_id")
    assert out["doc_id"].tolist() == ["a"]
    assert failures == {"b": "clean: ValueError: cannot read x\\udcffy"}
    docs = batch.assign(status=["ok", "error"], error=[None, failures["b"]])
    writer = TableWriter(tmp_path / "errors.parquet", ERRORS_SCHEMA, {})
    writer.write(errors_table(docs))
    writer.close()
    assert pq.read_table(tmp_path / "errors.parquet").to_pylist() == [
        {"path": "b.txt", "stage": "clean", "error_type": "ValueError", "message": "clean: ValueError: cannot read x\\udcffy"}]
