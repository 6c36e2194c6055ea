"""The output folder as the usual tools read it (issue 43): a recursive glob finds each table once,
every table loads in pandas, polars, DuckDB and Hugging Face ``datasets`` (the empty one too),
the dataset card, ``export``, and the entry point ``pipeline.run``."""

from __future__ import annotations

import glob
import json
import shutil
from pathlib import Path

import datasets
import duckdb
import pandas as pd
import polars as pl
import pyarrow.parquet as pq
import pytest
from click.testing import CliRunner

import pipeline
from pipeline.cli import EXIT_CANNOT_RUN, EXIT_OK, EXIT_USAGE, cli
from pipeline.datadict import TABLES as SCHEMAS
from pipeline.publish import TABLE_FILES

from conftest import SAMPLE

NAMES = [name.removesuffix(".parquet") for name in TABLE_FILES]
#: An article no encoding decodes: one row in errors.parquet.
BINARY = bytes(range(256)) * 4


@pytest.fixture(scope="module")
def twice(tmp_path_factory, use_embedder) -> Path:
    """An output folder after two runs over the sample (history, state and cache all there)."""
    from pipeline.config import load_config
    from pipeline.runner import run

    out = tmp_path_factory.mktemp("layout") / "out"
    for _ in range(2):
        run(SAMPLE, out, load_config(), embedder=use_embedder, progress=False)
    return out


def _rows(path: Path) -> int:
    return pq.ParquetFile(path).metadata.num_rows


@pytest.mark.parametrize("name", NAMES)
def test_a_recursive_glob_reads_each_table_once(twice: Path, name: str) -> None:
    rows = _rows(twice / f"{name}.parquet")
    pattern = f"{twice}/**/{name}.parquet"
    assert duckdb.sql(f"select count(*) from '{pattern}'").fetchall() == [(rows,)]
    assert pl.scan_parquet(pattern).select(pl.len()).collect().item() == rows
    assert glob.glob(pattern, recursive=True) == [f"{twice}/{name}.parquet"]
    assert [p.name for p in twice.rglob(f"{name}.parquet")] == [f"{name}.parquet"]


def test_every_table_loads_in_each_library_the_empty_one_too(twice: Path) -> None:
    datasets.disable_progress_bars()
    rows = {name: _rows(twice / f"{name}.parquet") for name in NAMES}
    # a second run over the same files: no errors and no changes
    assert rows["errors"] == rows["changes"] == 0 and all(rows[n] > 0 for n in NAMES if n not in ("errors", "changes"))
    for name in ("errors", "changes"):
        assert pq.ParquetFile(twice / f"{name}.parquet").metadata.num_row_groups == 0  # schema, no row group
    for name in NAMES:
        path = twice / f"{name}.parquet"
        columns = SCHEMAS[name].names
        assert list(pd.read_parquet(path).columns) == columns and len(pd.read_parquet(path)) == rows[name]
        assert pl.read_parquet(path).columns == columns and pl.read_parquet(path).height == rows[name]
        assert duckdb.sql(f"select * from '{path}'").columns == columns
        # the card's configs: one per table; datasets builds no split from zero rows, so the
        # empty table is read streaming (its schema and no row)
        split = datasets.load_dataset(str(twice), name, split="train", streaming=rows[name] == 0)
        assert list(split.features) == columns, name
        assert sum(1 for _ in split) == rows[name], name
    assert datasets.load_dataset(str(twice), split="train").num_rows == rows["papers"]  # the default config


def test_the_card_lists_every_table_its_rows_and_columns(twice: Path) -> None:
    card = (twice / "README.md").read_text(encoding="utf-8")
    manifest = json.loads((twice / "manifest.json").read_text(encoding="utf-8"))
    header = card.split("---\n")[1]
    assert [line.split(": ")[1] for line in header.splitlines() if line.startswith("- config_name")] == [
        "papers", "documents", "sections", "dropped", "context", "errors", "paper_ids", "changes"]
    for name in NAMES:
        assert f"| `{name}` | {manifest['row_counts'][name]} |" in card
        section = card.split(f"### {name}\n")[1].split("###")[0]
        assert [line.split("`")[1] for line in section.splitlines() if line.startswith("| `")] == SCHEMAS[name].names
    assert manifest["run_id"] in card and f'"match_threshold": {manifest["config"]["dedup"]["match_threshold"]}' in card
    assert str(SAMPLE) not in card  # the corpus by its folder name only


def test_export_writes_the_tables_and_card_only(twice: Path, tmp_path: Path) -> None:
    dest = tmp_path / "export"
    result = CliRunner().invoke(cli, ["export", str(twice), str(dest)], catch_exceptions=False)
    assert result.exit_code == EXIT_OK, result.output
    assert sorted(p.name for p in dest.iterdir()) == sorted([*TABLE_FILES, "README.md"])
    for name in [*TABLE_FILES, "README.md"]:
        assert (dest / name).read_bytes() == (twice / name).read_bytes(), name
    assert datasets.load_dataset(str(dest), "papers", split="train").num_rows == _rows(twice / "papers.parquet")

    again = CliRunner().invoke(cli, ["export", str(twice), str(dest)], catch_exceptions=False)
    assert again.exit_code == EXIT_USAGE and f"{dest} exists and is not an empty folder" in again.stderr
    inside = CliRunner().invoke(cli, ["export", str(twice), str(twice / "x")], catch_exceptions=False)
    assert inside.exit_code == EXIT_USAGE and "overlap" in inside.stderr
    (tmp_path / "empty").mkdir()
    nothing = CliRunner().invoke(cli, ["export", str(tmp_path / "empty"), str(tmp_path / "e2")], catch_exceptions=False)
    assert nothing.exit_code == EXIT_CANNOT_RUN and "no run has been published" in nothing.stderr
    assert not (tmp_path / "e2").exists()


def test_the_entry_point_returns_the_exit_code_counts_and_paths(tmp_path: Path) -> None:
    corpus = tmp_path / "corpus"
    shutil.copytree(SAMPLE, corpus)
    (corpus / "bad.txt").write_bytes(BINARY)
    out = tmp_path / "out"
    config = {"run": {"workers": 1}}
    result = pipeline.run(corpus, out, config)
    manifest = json.loads((out / "manifest.json").read_text(encoding="utf-8"))
    assert result.exit_code == 1 and result.failed_files == 1  # no failure acknowledged by default
    assert result.run_id == manifest["run_id"] and result.counts == manifest["row_counts"]
    assert result.files == {"processed": 4, "reused": 0, "removed": 0}
    assert result.tables == {name: out / f"{name}.parquet" for name in NAMES}
    assert result.report == out / "report.html" and result.card == out / "README.md"
    assert _rows(result.tables["errors"]) == 1 and result.report.is_file()

    again = pipeline.run(corpus, out, {"run": {"workers": 1, "max_failed": 1}})
    assert again.exit_code == 0 and again.files == {"processed": 0, "reused": 4, "removed": 0}


def test_a_report_rewritten_by_the_pipeline_stays_its_own_once_recorded(twice: Path, tmp_path: Path) -> None:
    from pipeline import report
    from pipeline.outdir import OutputRefused, check
    from pipeline.publish import record_rewrite

    out = tmp_path / "out"
    shutil.copytree(twice, out)  # copy2: sizes and times kept, so the record still matches
    assert check(SAMPLE, out) == "tables"
    assert report.main([str(out)]) == 0  # rewrites report.html and records the rewrite
    assert check(SAMPLE, out) == "tables"
    (out / "report.html").write_text("<p>edited by hand</p>", encoding="utf-8")  # not the pipeline's
    with pytest.raises(OutputRefused, match='holds "report.html" where the pipeline publishes'):
        check(SAMPLE, out)
    assert report.main([str(out)]) == 2  # a hand edit is never overwritten
    assert (out / "report.html").read_text(encoding="utf-8") == "<p>edited by hand</p>"
    record_rewrite(out, "report.html")
    assert check(SAMPLE, out) == "tables"
