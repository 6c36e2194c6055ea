"""Shared fixtures: the seed corpus, one loaded embedder, and pipeline runs over the corpora."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pandas as pd
import pytest

from pipeline.config import load_config
from pipeline.embed import UniversalSentenceEncoder
from pipeline.runner import run

REPO = Path(__file__).resolve().parents[1]
#: The real seed articles: ``shared/corpora/seeds`` beside the checkout, or $PIPELINE_SEEDS.
SEEDS = Path(os.environ.get("PIPELINE_SEEDS") or REPO.parent / "shared" / "corpora" / "seeds")
SAMPLE = REPO / "corpora" / "sample"
GOLD = Path(__file__).resolve().parent / "gold"
TABLES = ("documents", "sections", "papers", "dropped", "context")


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Tests marked ``slow`` run first, in their collected order: under ``pytest -n auto --dist
    worksteal`` the other workers then take the short tests around them, and no long test starts
    last and runs alone at the end."""
    items.sort(key=lambda item: item.get_closest_marker("slow") is None)


def require_seeds() -> Path:
    """The seed folder; under CI a missing folder fails the test, elsewhere it skips."""
    if not SEEDS.is_dir():
        if os.environ.get("CI"):
            pytest.fail(f"seed corpus {SEEDS} is missing (CI is set: the seeds must be there)")
        pytest.skip(f"seed corpus {SEEDS} is not here (set PIPELINE_SEEDS to the seeds folder to run this test)")
    return SEEDS


def load_gold(name: str) -> dict:
    """A gold file of tests/gold as a dict."""
    return json.loads((GOLD / name).read_text(encoding="utf-8"))


def sections_of_pages(root: Path, pages: dict[str, str]) -> pd.DataFrame:
    """The sections of one run (:func:`pipeline.run`, one worker) over ``pages`` (file name ->
    text) written to ``root/corpus``, with each row's ``source_path``."""
    import pipeline

    corpus = root / "corpus"
    corpus.mkdir()
    for name, text in pages.items():
        (corpus / name).write_text(text, encoding="utf-8")
    result = pipeline.run(corpus, root / "out", {"run": {"workers": 1}})
    documents = pd.read_parquet(result.tables["documents"])
    return pd.read_parquet(result.tables["sections"]).merge(documents[["doc_id", "source_path"]], on="doc_id")


def read_outputs(out_dir: Path) -> dict[str, pd.DataFrame]:
    """The Parquet tables of a run as DataFrames."""
    return {name: pd.read_parquet(out_dir / f"{name}.parquet") for name in TABLES}


@pytest.fixture(scope="session")
def use_embedder() -> UniversalSentenceEncoder:
    """The default offline embedder, loaded once for the whole test session."""
    return UniversalSentenceEncoder()


@pytest.fixture(scope="session")
def seeds_run(tmp_path_factory, use_embedder) -> dict[str, pd.DataFrame]:
    """The pipeline's outputs on the real seed articles (default configuration)."""
    seeds = require_seeds()
    out = tmp_path_factory.mktemp("seeds_out")
    run(seeds, out, load_config(), embedder=use_embedder, progress=False)
    return read_outputs(out) | {"_dir": out}


@pytest.fixture(scope="session")
def sample_run(tmp_path_factory, use_embedder) -> dict[str, pd.DataFrame]:
    """The pipeline's outputs on the sample corpus shipped in corpora/sample."""
    out = tmp_path_factory.mktemp("sample_out")
    run(SAMPLE, out, load_config(), embedder=use_embedder, progress=False)
    return read_outputs(out) | {"_dir": out}
