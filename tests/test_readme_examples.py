"""What analysts read: the README's Outputs examples run, and the data dictionary is complete and current.

The ```python and ```sql blocks of README's "## Outputs" section run against a real run over
corpora/sample (``outputs/sample`` in the text is replaced by that run's folder): each Python
block's last expression and each SQL query must give rows. ``docs/data-dictionary.md`` must equal
what ``python -m pipeline.datadict`` generates, and every schema column and Parquet metadata key
must have a description in ``pipeline/datadict.py``.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import duckdb
import pandas as pd
import pytest

from pipeline import datadict
from pipeline.write import TABLES as SCHEMAS

from conftest import REPO

README = REPO / "README.md"
EXAMPLE_DIR = "outputs/sample"


def outputs_section() -> str:
    """The text of README's "## Outputs" section, up to the next "## " heading."""
    text = README.read_text(encoding="utf-8")
    match = re.search(r"^## Outputs\n(.*?)(?=^## |\Z)", text, flags=re.M | re.S)
    assert match, "README.md has no '## Outputs' section"
    return match.group(1)


def code_blocks(language: str) -> list[str]:
    """The fenced ``language`` blocks of the Outputs section, in order."""
    return re.findall(rf"^```{language}\n(.*?)^```", outputs_section(), flags=re.M | re.S)


def _with_run(code: str, out_dir: Path) -> str:
    assert EXAMPLE_DIR in code, f"the example does not read {EXAMPLE_DIR!r}:\n{code}"
    return code.replace(EXAMPLE_DIR, out_dir.as_posix())


def test_outputs_section_has_python_and_sql_examples() -> None:
    assert code_blocks("python"), "README Outputs has no ```python example"
    sql = code_blocks("sql")
    assert any("JOIN" in q.upper() and "papers" in q and "sections" in q for q in sql), "no papers-sections join"
    assert any("GROUP BY" in q.upper() and "venue" in q and "award" in q for q in sql), "no count per venue and award"


@pytest.mark.parametrize("index", range(len(code_blocks("python"))))
def test_readme_python_example_runs_and_returns_rows(sample_run, index: int) -> None:
    code = _with_run(code_blocks("python")[index], sample_run["_dir"])
    tree = ast.parse(code)
    assert tree.body and isinstance(tree.body[-1], ast.Expr), "the example must end with an expression (or its print) to show"
    value = tree.body.pop().value
    if isinstance(value, ast.Call) and isinstance(value.func, ast.Name) and value.func.id == "print":
        value = value.args[0]  # "print(frame)": the frame it shows
    last = ast.Expression(value)
    namespace: dict = {}
    exec(compile(tree, f"README python block {index}", "exec"), namespace)  # noqa: S102 - our own README
    result = eval(compile(last, f"README python block {index}", "eval"), namespace)  # noqa: S307
    assert isinstance(result, pd.DataFrame | pd.Series), type(result)
    assert len(result) > 0, f"README python block {index} returned no rows"


@pytest.mark.parametrize("index", range(len(code_blocks("sql"))))
def test_readme_sql_example_runs_and_returns_rows(sample_run, index: int) -> None:
    query = _with_run(code_blocks("sql")[index], sample_run["_dir"])
    with duckdb.connect() as con:
        rows = con.sql(query).fetchall()
    assert rows, f"README sql block {index} returned no rows"


def test_every_schema_column_has_a_description() -> None:
    assert datadict.undocumented() == {}, (
        "describe these columns in pipeline/datadict.py COLUMNS, then run `python -m pipeline.datadict`")
    stale = {name: [c for c in cols if name not in datadict.TABLES or c not in datadict.TABLES[name].names]
             for name, cols in datadict.COLUMNS.items()}
    assert not any(stale.values()), f"COLUMNS in pipeline/datadict.py describes columns no schema has: {stale}"
    assert set(datadict.TABLE_DOCS) == set(SCHEMAS) | {"errors", "paper_ids", "changes"}


def test_every_parquet_metadata_key_has_a_description(sample_run) -> None:
    for name in SCHEMAS:
        keys = datadict.metadata_keys(sample_run["_dir"] / f"{name}.parquet")
        assert keys, name
        missing = [k for k in keys if k not in datadict.FILE_METADATA]
        assert not missing, f"describe Parquet metadata keys {missing} in pipeline/datadict.py FILE_METADATA"


def test_render_refuses_an_undocumented_column(monkeypatch) -> None:
    monkeypatch.setitem(datadict.COLUMNS, "papers", {k: v for k, v in datadict.COLUMNS["papers"].items()
                                                     if k != "n_sources"})
    with pytest.raises(KeyError, match="n_sources"):
        datadict.render({})


def test_data_dictionary_is_current(sample_run) -> None:
    frames = {name: sample_run[name] for name in SCHEMAS}
    frames |= {name: pd.read_parquet(sample_run["_dir"] / f"{name}.parquet") for name in ("paper_ids", "changes")}
    expected = datadict.render(frames, datadict.metadata_keys(sample_run["_dir"] / "documents.parquet"))
    committed = datadict.DICTIONARY_PATH.read_text(encoding="utf-8") if datadict.DICTIONARY_PATH.exists() else ""
    assert committed == expected, "docs/data-dictionary.md is stale: run `.venv/bin/python -m pipeline.datadict`"
    for name, schema in SCHEMAS.items():
        for column in schema.names:
            assert f"| `{column}` |" in committed, (name, column)
