"""Atomic publish (pipeline.publish): run folders, the ``current`` link, retention, migration of
an older layout, the run lock, and crash safety of real runs killed with SIGKILL."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pyarrow.parquet as pq
import pytest
from click.testing import CliRunner

from pipeline.cli import EXIT_CANNOT_RUN, EXIT_OK, cli
from pipeline.config import load_config
from pipeline.publish import CRASH_ENV, CRASH_POINTS, CURRENT, LINKED_NAMES, RUNS_DIR, OutputLock, current_run
from pipeline.runner import run

from conftest import SAMPLE, TABLES

REPO = Path(__file__).resolve().parents[1]
ALL_TABLES = (*TABLES, "errors")


def _published(out: Path) -> dict[str, bytes]:
    """Every top-level output, read through its link, plus where ``current`` points."""
    files = {name: (out / name).read_bytes() for name in LINKED_NAMES if (out / name).exists()}
    return files | {CURRENT: os.readlink(out / CURRENT).encode()}


def _assert_readable(out: Path) -> None:
    for name in ALL_TABLES:
        pd.read_parquet(out / f"{name}.parquet")
    json.loads((out / "manifest.json").read_text(encoding="utf-8"))


def _same_tables(a: Path, b: Path) -> bool:
    return all(pq.read_table(a / f"{n}.parquet").equals(pq.read_table(b / f"{n}.parquet")) for n in ALL_TABLES)


def test_outputs_are_links_into_the_current_run_and_two_runs_are_kept(tmp_path: Path, use_embedder) -> None:
    out = tmp_path / "out"
    ids = [run(SAMPLE, out, load_config(), embedder=use_embedder, progress=False).run_dir.name for _ in range(3)]
    assert len(set(ids)) == 3 and ids == sorted(ids)
    assert sorted(p.name for p in (out / RUNS_DIR).iterdir()) == ids[1:]
    assert os.readlink(out / CURRENT) == f"{RUNS_DIR}/{ids[-1]}"
    assert current_run(out) == out / RUNS_DIR / ids[-1]
    for name in LINKED_NAMES:
        if (out / RUNS_DIR / ids[-1] / name).exists():
            assert os.readlink(out / name) == f"{CURRENT}/{name}", name
    for name in ALL_TABLES:
        table = pq.read_table(out / f"{name}.parquet")
        assert table.schema.metadata[b"schema_version"] == b"3"
    assert json.loads((out / "manifest.json").read_text(encoding="utf-8"))["run_id"] == ids[-1]
    assert not list(out.glob(".*.tmp")) and (out / ".lock").read_text() == ""  # released cleanly


def test_an_older_versions_plain_outputs_are_migrated(tmp_path: Path, use_embedder) -> None:
    out = tmp_path / "out"
    run(SAMPLE, out, load_config(), embedder=use_embedder, progress=False)
    # make it look like an older version's folder: plain files, no current, a staging leftover
    plain = {name: (out / name).read_bytes() for name in LINKED_NAMES if (out / name).exists()}
    for name in [*LINKED_NAMES, CURRENT]:
        (out / name).unlink(missing_ok=True)
    shutil.rmtree(out / RUNS_DIR)
    for name, data in plain.items():
        (out / name).write_bytes(data)
    (out / ".staging-abc").mkdir()

    second = run(SAMPLE, out, load_config(), embedder=use_embedder, progress=False)
    assert second.files["removed"] == []  # read the older manifest
    assert all((out / name).is_symlink() for name in plain)
    legacy = [p for p in (out / RUNS_DIR).iterdir() if p.name.startswith("legacy-")]
    assert len(legacy) == 1 and (legacy[0] / "papers.parquet").read_bytes() == plain["papers.parquet"]
    assert not (out / ".staging-abc").exists()
    for name in ALL_TABLES:
        assert pq.read_table(out / f"{name}.parquet").equals(pq.read_table(legacy[0] / f"{name}.parquet"))


def test_a_held_lock_exits_3_and_a_stale_one_is_cleared(tmp_path: Path) -> None:
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    out = tmp_path / "out"
    out.mkdir()
    with OutputLock(out):
        result = CliRunner().invoke(cli, ["run", str(corpus), "--out", str(out), "--quiet"], catch_exceptions=False)
    assert result.exit_code == EXIT_CANNOT_RUN == 3
    assert result.stderr == (f"error: could not run: another run (pid {os.getpid()}) is writing {out}: the lock "
                             f"{out / '.lock'} is held; wait for it to finish\n")

    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    (out / ".lock").write_text(f"{dead.pid}\n")
    result = CliRunner().invoke(cli, ["run", str(corpus), "--out", str(out), "--quiet"], catch_exceptions=False)
    assert result.exit_code == EXIT_OK
    assert f"cleared a stale lock on {out} left by pid {dead.pid}" in result.stderr
    assert (out / ".lock").read_text() == ""


@pytest.mark.parametrize("point", CRASH_POINTS)
def test_a_run_killed_at_any_point_leaves_the_published_run_intact(point: str, tmp_path: Path, use_embedder,
                                                                    caplog) -> None:
    corpus = tmp_path / "corpus"
    shutil.copytree(SAMPLE, corpus)
    out = tmp_path / "out"
    run(corpus, out, load_config(), embedder=use_embedder, progress=False)
    before = _published(out)
    (corpus / "new.md").write_bytes((SAMPLE / "c_blog_en.md").read_bytes() + b"\nOne more line.\n")

    env = {**os.environ, CRASH_ENV: point, "HF_HUB_OFFLINE": "1", "TOKENIZERS_PARALLELISM": "false"}
    proc = subprocess.run([sys.executable, "-m", "pipeline", "run", str(corpus), "--out", str(out), "--quiet"],
                          cwd=REPO, env=env, capture_output=True, text=True, check=False, timeout=300)
    assert proc.returncode == -signal.SIGKILL, proc.stderr
    assert f"{CRASH_ENV}={point}: killing the run here" in proc.stderr
    assert _published(out) == before  # byte for byte, through the links
    _assert_readable(out)

    # the next run completes, reuses what the killed run kept, and clears its lock and leftovers
    result = run(corpus, out, load_config(), embedder=use_embedder, progress=False)
    assert "cleared a stale lock" in caplog.text
    assert result.files["processed"] == [] and "new.md" in result.files["reused"]
    assert len(list((out / RUNS_DIR).iterdir())) == 2
    shutil.copytree(out / ".cache", tmp_path / "fresh" / ".cache")
    run(corpus, tmp_path / "fresh", load_config(), embedder=use_embedder, progress=False)
    assert _same_tables(out, tmp_path / "fresh")
