"""Publishing (pipeline.publish): plain files at the top renamed per file with the manifest
last, run history under .pipeline, a publish finished after a kill, retention, migration of the
older layouts, the run lock, and crash safety of real runs killed with SIGKILL."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from click.testing import CliRunner

from pipeline.cli import EXIT_CANNOT_RUN, EXIT_OK, cli
from pipeline.config import load_config
from pipeline.identity import HISTORY_FILE, MEMBERS_FILE
from pipeline.outdir import MARKER
from pipeline.publish import (
    CACHE_DIR,
    CRASH_ENV,
    CRASH_POINTS,
    LEGACY_CURRENT,
    LEGACY_LINKED_NAMES,
    LEGACY_RUNS_DIR,
    PIPELINE_DIR,
    PUBLISHED_NAMES,
    RUNS_DIR,
    STATE_DIR,
    OutputLock,
    published_run_id,
)
from pipeline.runner import run

from conftest import SAMPLE, TABLES

REPO = Path(__file__).resolve().parents[1]
ALL_TABLES = (*TABLES, "errors")


def _published(out: Path) -> dict[str, bytes]:
    """Every top-level output's bytes, plus the published run's id."""
    files = {name: (out / name).read_bytes() for name in PUBLISHED_NAMES if (out / name).exists()}
    return files | {"run_id": str(published_run_id(out)).encode()}


def _assert_readable(out: Path) -> None:
    for name in ALL_TABLES:
        pd.read_parquet(out / f"{name}.parquet")
    json.loads((out / "manifest.json").read_text(encoding="utf-8"))


def _same_tables(a: Path, b: Path) -> bool:
    return all(pq.read_table(a / f"{n}.parquet").equals(pq.read_table(b / f"{n}.parquet")) for n in ALL_TABLES)


def test_outputs_are_plain_files_and_the_history_keeps_two_runs(tmp_path: Path, use_embedder) -> None:
    out = tmp_path / "out"
    ids = [run(SAMPLE, out, load_config(), embedder=use_embedder, progress=False).run_id for _ in range(3)]
    assert len(set(ids)) == 3 and ids == sorted(ids)
    assert sorted(p.name for p in (out / RUNS_DIR).iterdir()) == ids[1:]
    for run_id in ids[1:]:  # the history keeps each run's manifest and paper ids (pipeline.identity), no table
        assert sorted(p.name for p in (out / RUNS_DIR / run_id).iterdir()) == sorted(
            [HISTORY_FILE, MEMBERS_FILE, "manifest.json"])
    assert published_run_id(out) == ids[-1]
    for name in PUBLISHED_NAMES:
        assert (out / name).is_file() and not (out / name).is_symlink(), name
    assert (out / "manifest.json").samefile(out / RUNS_DIR / ids[-1] / "manifest.json")
    for name in ALL_TABLES:
        table = pq.read_table(out / f"{name}.parquet")
        assert table.schema.metadata[b"schema_version"] == b"3"
    assert json.loads((out / "manifest.json").read_text(encoding="utf-8"))["run_id"] == ids[-1]
    assert sorted(p.name for p in out.iterdir()) == sorted([*PUBLISHED_NAMES, PIPELINE_DIR, MARKER, ".lock"])
    assert not list(out.glob(".*.tmp")) and (out / ".lock").read_text() == ""  # released cleanly


def _as_plain_older_version(out: Path) -> dict[str, bytes]:
    """Turn a run's folder into what the version before run folders wrote: plain files, the
    state and cache at the top, a staging leftover, no marker. Returns the plain files."""
    plain = {name: (out / name).read_bytes() for name in LEGACY_LINKED_NAMES}
    for name in [*PUBLISHED_NAMES, MARKER]:
        (out / name).unlink(missing_ok=True)
    for name, data in plain.items():
        (out / name).write_bytes(data)
    os.replace(out / STATE_DIR, out / ".state")
    os.replace(out / CACHE_DIR, out / ".cache")
    shutil.rmtree(out / PIPELINE_DIR)
    (out / ".staging-abc").mkdir()
    return plain


def _as_runs_layout(out: Path, run_id: str) -> dict[str, bytes]:
    """Turn a run's folder into the layout before issue 43 (marker ``runs``): ``.runs/<id>``,
    ``current`` and top-level links, ``.state`` and ``.cache``. Returns the published files."""
    files = {name: (out / name).read_bytes() for name in LEGACY_LINKED_NAMES}
    (out / LEGACY_RUNS_DIR / run_id).mkdir(parents=True)
    for name in PUBLISHED_NAMES:
        if name in files:
            os.replace(out / name, out / LEGACY_RUNS_DIR / run_id / name)
            (out / name).symlink_to(f"{LEGACY_CURRENT}/{name}")
        else:
            (out / name).unlink()
    (out / LEGACY_CURRENT).symlink_to(f"{LEGACY_RUNS_DIR}/{run_id}")
    os.replace(out / STATE_DIR, out / ".state")
    os.replace(out / CACHE_DIR, out / ".cache")
    shutil.rmtree(out / PIPELINE_DIR)
    (out / MARKER).write_text(json.dumps({"layout": "runs"}), encoding="utf-8")
    return files


@pytest.mark.parametrize("older", ["plain", "runs"])
def test_an_older_layout_is_migrated_and_its_state_reused(older: str, tmp_path: Path, use_embedder) -> None:
    out = tmp_path / "out"
    first = run(SAMPLE, out, load_config(), embedder=use_embedder, progress=False)
    before = _as_plain_older_version(out) if older == "plain" else _as_runs_layout(out, first.run_id)

    second = run(SAMPLE, out, load_config(), embedder=use_embedder, progress=False)
    assert second.files["removed"] == [] and second.files["processed"] == []  # its manifest and state were read
    assert json.loads((out / MARKER).read_text(encoding="utf-8"))["layout"] == "tables"
    assert sorted(p.name for p in out.iterdir()) == sorted([*PUBLISHED_NAMES, PIPELINE_DIR, MARKER, ".lock"])
    assert [p.name for p in (out / RUNS_DIR).iterdir()] == [second.run_id]
    for name in ALL_TABLES:
        assert pq.read_table(out / f"{name}.parquet").equals(pq.read_table(pa.BufferReader(before[f"{name}.parquet"])))


def test_an_output_folder_copied_without_its_times_is_still_the_pipelines(tmp_path: Path, use_embedder) -> None:
    """A restore or copy that does not keep mtimes (``cp -r``), or a ``touch``, keeps the content:
    the next run still takes the published files as its own; a file whose content changed (same
    size) is refused."""
    from pipeline.outdir import OutputRefused

    out, restored = tmp_path / "out", tmp_path / "restored"
    run(SAMPLE, out, load_config(), embedder=use_embedder, progress=False)
    shutil.copytree(out, restored, copy_function=shutil.copyfile)  # contents only, new mtimes
    assert run(SAMPLE, restored, load_config(), embedder=use_embedder, progress=False).run_id
    os.utime(restored / "papers.parquet", None)  # touched
    assert run(SAMPLE, restored, load_config(), embedder=use_embedder, progress=False).run_id
    report = (restored / "report.html").read_bytes()
    (restored / "report.html").write_bytes(report.replace(b"<", b">", 1))  # edited, same size
    with pytest.raises(OutputRefused, match="report.html"):
        run(SAMPLE, restored, load_config(), embedder=use_embedder, progress=False)


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


@pytest.mark.slow
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
    if point == "mid-publish":  # one table renamed, the manifest last: still the old one
        after = _published(out)
        changed = sorted(n for n in before if after.get(n) != before[n])
        assert changed == ["documents.parquet"], changed
    else:
        assert _published(out) == before  # byte for byte
    _assert_readable(out)

    # the next run completes, reuses what the killed run kept, and clears its lock and leftovers
    result = run(corpus, out, load_config(), embedder=use_embedder, progress=False)
    assert "cleared a stale lock" in caplog.text
    assert ("finishing the publish of run" in caplog.text) is (point == "mid-publish")
    assert result.files["processed"] == [] and "new.md" in result.files["reused"]
    assert len(list((out / RUNS_DIR).iterdir())) == 2
    assert sorted(p.name for p in out.iterdir()) == sorted([*PUBLISHED_NAMES, PIPELINE_DIR, MARKER, ".lock"])
    shutil.copytree(out / CACHE_DIR, tmp_path / "fresh" / CACHE_DIR)
    run(corpus, tmp_path / "fresh", load_config(), embedder=use_embedder, progress=False)
    assert _same_tables(out, tmp_path / "fresh")
