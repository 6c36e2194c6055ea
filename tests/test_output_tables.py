"""The Parquet tables read the same through pandas, pyarrow and DuckDB, and list columns hold
lists of strings (an empty list, never null).

The run covers the sample corpus plus a failed document (binary content) and a document without
any paper, so error rows and empty lists are in the tables too.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import duckdb
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest

from pipeline.config import load_config
from pipeline.runner import run
from pipeline.write import TABLES as SCHEMAS

from conftest import SAMPLE, TABLES


@pytest.fixture(scope="module")
def out_dir(tmp_path_factory, use_embedder) -> Path:
    corpus = tmp_path_factory.mktemp("tables_corpus")
    for path in Path(SAMPLE).iterdir():
        if path.is_file():
            shutil.copy(path, corpus / path.name)
    (corpus / "binary.txt").write_bytes(bytes(range(256)) * 8)
    (corpus / "no_paper.txt").write_text("今天天气很好，我们去公园散步。\n\n晚上回家吃饭。\n", encoding="utf-8")
    out = tmp_path_factory.mktemp("tables_out")
    run(corpus, out, load_config(), embedder=use_embedder, progress=False)
    return out


def _list_columns(schema: pa.Schema) -> list[str]:
    return [f.name for f in schema if pa.types.is_list(f.type)]


def test_the_run_has_error_rows_and_empty_lists(out_dir: Path) -> None:
    docs = pq.read_table(out_dir / "documents.parquet").to_pandas()
    assert (docs["status"] == "error").sum() == 1
    assert docs.loc[docs["status"] == "error", "source_path"].tolist() == ["binary.txt"]
    sections = pq.read_table(out_dir / "sections.parquet")
    assert any(len(v) == 0 for v in sections.column("authors").to_pylist())


@pytest.mark.parametrize("name", TABLES)
def test_list_columns_are_lists_of_strings_never_null(out_dir: Path, name: str) -> None:
    table = pq.read_table(out_dir / f"{name}.parquet")
    assert table.schema.remove_metadata() == SCHEMAS[name]
    for column in _list_columns(table.schema):
        assert table.schema.field(column).type == pa.list_(pa.string()), column
        assert pc.sum(pc.is_null(table.column(column))).as_py() in (0, None), (name, column)
        for value in table.column(column).to_pylist():
            assert isinstance(value, list) and all(isinstance(x, str) and x for x in value), (name, column, value)
    frame = pd.read_parquet(out_dir / f"{name}.parquet")
    for column in _list_columns(table.schema):
        for value in frame[column]:
            assert value is not None and all(isinstance(x, str) for x in value), (name, column, value)


@pytest.mark.parametrize("name", TABLES)
def test_pandas_pyarrow_and_duckdb_read_the_same_values(out_dir: Path, name: str) -> None:
    path = out_dir / f"{name}.parquet"
    arrow_rows = pq.read_table(path).to_pylist()
    frame = pd.read_parquet(path)
    assert list(frame.columns) == SCHEMAS[name].names
    pandas_rows = [
        {k: (list(v) if hasattr(v, "tolist") and not isinstance(v, str) else (None if v is pd.NA or (isinstance(v, float) and v != v) else v))
         for k, v in row.items()}
        for row in frame.to_dict("records")
    ]
    with duckdb.connect() as con:
        cursor = con.execute(f"SELECT * FROM read_parquet('{path.as_posix()}')")
        columns = [d[0] for d in cursor.description]
        duck_rows = [dict(zip(columns, values, strict=True)) for values in cursor.fetchall()]
    assert columns == SCHEMAS[name].names
    assert len(arrow_rows) == len(pandas_rows) == len(duck_rows)
    for a, p, d in zip(arrow_rows, pandas_rows, duck_rows, strict=True):
        assert a == d
        assert a == {k: (type(a[k])(v) if v is not None and a[k] is not None and not isinstance(v, list) else v)
                     for k, v in p.items()}


def test_duckdb_joins_papers_to_sections(out_dir: Path) -> None:
    with duckdb.connect() as con:
        rows = con.execute(
            f"""
            SELECT p.paper_id, count(*) AS n, any_value(p.n_mentions) AS n_mentions
            FROM read_parquet('{(out_dir / 'papers.parquet').as_posix()}') p
            JOIN read_parquet('{(out_dir / 'sections.parquet').as_posix()}') s USING (paper_id)
            GROUP BY p.paper_id
            """
        ).fetchall()
        n_papers = con.execute(
            f"SELECT count(*) FROM read_parquet('{(out_dir / 'papers.parquet').as_posix()}')"
        ).fetchone()[0]
    assert len(rows) == n_papers > 0
    assert all(n == n_mentions for _, n, n_mentions in rows)


def test_truncated_embedding_text_is_recorded_in_sections(out_dir: Path) -> None:
    from pipeline.dedup import embedding_chars_cut

    table = pq.read_table(out_dir / "sections.parquet")
    assert table.schema.field("embedding_chars_cut").type == pa.int32()
    want = [embedding_chars_cut(r) for r in table.to_pylist()]
    sections = table.to_pandas()
    assert sections["embedding_chars_cut"].tolist() == want
    # the sample's summaries run past the head the embedding takes: some sections say so
    assert (sections["embedding_chars_cut"] > 0).any() and (sections["embedding_chars_cut"] >= 0).all()
    long = sections["summary_norm"].fillna("").str.len() > 200
    assert (sections.loc[long, "embedding_chars_cut"] > 0).all()
