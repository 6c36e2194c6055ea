"""Local parallelism: the per-document stages in a process pool give the very same tables."""

from __future__ import annotations

import shutil
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from pipeline import workers
from pipeline.config import load_config
from pipeline.errors import ConfigError
from pipeline.runner import run

from conftest import SAMPLE, TABLES

ARTICLES = Path(__file__).resolve().parent / "fixtures" / "segmentation" / "articles"


@pytest.fixture(scope="module")
def mixed_corpus(tmp_path_factory) -> Path:
    """corpora/sample and the segmentation fixture articles (every format and encoding) in one
    folder, plus a byte-identical copy, an empty and a binary file."""
    corpus = tmp_path_factory.mktemp("mixed") / "corpus"
    shutil.copytree(SAMPLE, corpus / "sample")
    shutil.copytree(ARTICLES, corpus / "articles")
    shutil.copy(SAMPLE / "c_blog_en.md", corpus / "zz_copy.md")
    (corpus / "empty.txt").write_bytes(b"")
    (corpus / "binary.txt").write_bytes(bytes(range(256)) * 4)
    return corpus


def _tables(out: Path) -> dict[str, bytes]:
    return {name: (out / f"{name}.parquet").read_bytes() for name in (*TABLES, "errors")}


def test_two_workers_write_the_same_tables_as_one(mixed_corpus, tmp_path, use_embedder, monkeypatch):
    monkeypatch.setattr(workers, "MIN_FILES_PER_WORKER", 1)  # a pool even for this small corpus
    one = run(mixed_corpus, tmp_path / "w1", load_config(overrides={"run": {"workers": 1}}),
              embedder=use_embedder, progress=False)
    two = run(mixed_corpus, tmp_path / "w2", load_config(overrides={"run": {"workers": 2, "batch_size": 3}}),
              embedder=use_embedder, progress=False)
    assert two.counts == one.counts and one.counts["sections"] > 50
    a, b = _tables(tmp_path / "w1"), _tables(tmp_path / "w2")
    for name in a:
        assert pq.read_table(tmp_path / "w1" / f"{name}.parquet").equals(pq.read_table(tmp_path / "w2" / f"{name}.parquet")), name
        assert a[name] == b[name], f"{name}.parquet differs between 1 and 2 workers"
    assert two.files == one.files
    assert set(two.seconds) == set(one.seconds)
    assert two.summary()["failed_files"] == one.summary()["failed_files"] == 1  # binary.txt
    # the pool's results were kept in the state: a rerun reuses every file and changes nothing
    again = run(mixed_corpus, tmp_path / "w2", load_config(overrides={"run": {"workers": 2}}),
                embedder=use_embedder, progress=False)
    assert again.files["processed"] == []
    assert _tables(tmp_path / "w2") == a


@pytest.mark.parametrize(("n_files", "allowed", "expected"), [
    (0, 8, 1), (100, 8, 1), (127, 8, 1), (128, 8, 2), (1000, 8, 8), (1000, 1, 1),
])
def test_pool_size_follows_the_work(n_files, allowed, expected):
    assert workers.pool_workers(n_files, allowed) == expected


def test_pool_batches_spread_the_work():
    assert workers.pool_batch_size(100, 2, 64) == 13  # 8 batches for 2 workers
    assert workers.pool_batch_size(10_000, 2, 64) == 64  # never above run.batch_size
    assert workers.pool_batch_size(1, 4, 64) == 1


def test_workers_setting_is_checked():
    assert load_config().run.workers >= 1
    with pytest.raises(ConfigError, match="run.workers = 0; must be a positive integer"):
        load_config(overrides={"run": {"workers": 0}})
    with pytest.raises(ConfigError, match="run.engine = 'spark'; valid options"):
        load_config(overrides={"run": {"engine": "spark"}})
    with pytest.raises(ConfigError, match="run.ray_address applies to engine 'ray' only"):
        load_config(overrides={"run": {"ray_address": "auto"}})
