"""The dataset card: ``README.md`` of an output folder, from a run's manifest and
:mod:`pipeline.datadict`: a Hugging Face Hub YAML header with one ``configs:`` entry per table
(``papers`` default), each table's rows and columns, and the run. The corpus is named by its
folder name only (the card travels with exports).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from .datadict import COLUMNS, TABLE_DOCS, type_name
from .datadict import TABLES as SCHEMAS

CARD = "README.md"
#: The config ``datasets.load_dataset(OUT)`` loads when no name is given.
DEFAULT_TABLE = "papers"
#: Tables in the order the card lists them: the default first.
CARD_TABLES = (DEFAULT_TABLE, *(n for n in SCHEMAS if n != DEFAULT_TABLE))


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def render(manifest: dict[str, Any]) -> str:
    """The card's Markdown for a ``manifest.json`` dict (missing keys left out)."""
    counts = manifest.get("row_counts", {})
    corpus = Path(str(manifest.get("corpus", "corpus"))).name or "corpus"
    header = ["---", f"pretty_name: Papers found in {json.dumps(corpus, ensure_ascii=False)}", "configs:"]
    for name in CARD_TABLES:
        header += [f"- config_name: {name}", f"  data_files: {name}.parquet"]
        header += ["  default: true"] if name == DEFAULT_TABLE else []
    header.append("---")
    embedder = manifest.get("embedder", {}).get("model_id", "")
    lines = [
        "", f"# Papers found in {corpus}", "",
        f"Research papers found in the articles of `{corpus}`, deduplicated across articles and languages, "
        f"written by paper-pipeline {manifest.get('pipeline_version', '')} (run `{manifest.get('run_id', '')}`, "
        f"{manifest.get('started_at', '')} to {manifest.get('finished_at', '')}, {manifest.get('mode', '')}).", "",
        "Each table is one Parquet file and one config of this card:", "", "```python",
        "import datasets", f'papers = datasets.load_dataset("path/to/this/folder", "{DEFAULT_TABLE}", split="train")',
        "```", "",
        "A table with no rows loads with `streaming=True` (`datasets` builds no split from zero rows).", "",
        "## Tables", "", "| table | rows | one row is |", "|---|---|---|",
    ]
    lines += [f"| `{n}` | {counts.get(n, '')} | {_cell(TABLE_DOCS[n])} |" for n in CARD_TABLES]
    for name in CARD_TABLES:
        lines += ["", f"### {name}", "", "| column | type | meaning |", "|---|---|---|"]
        lines += [f"| `{f.name}` | {type_name(f.type)} | {_cell(COLUMNS[name][f.name])} |" for f in SCHEMAS[name]]
    lines += ["", "## Run", "", f"Embedder: `{embedder}`. Configuration:", "", "```json",
              json.dumps(manifest.get("config", {}), ensure_ascii=False, indent=2, sort_keys=True), "```", ""]
    return "\n".join(header + lines)


def write_card(folder: str | Path, manifest: dict[str, Any]) -> Path:
    """Write :func:`render` as ``folder/README.md`` (UTF-8); returns its path."""
    path = Path(folder) / CARD
    path.write_text(render(manifest), encoding="utf-8")
    return path
