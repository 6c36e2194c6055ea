"""Local parallelism: the per-document stages and the embedding in a process pool
(:mod:`pipeline.executor`) give the very same tables, and its workers stop with the run."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from pipeline import runner
from pipeline.config import load_config
from pipeline.errors import ConfigError
from pipeline.executor import ProcessPool, given
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


@pytest.fixture(scope="module")
def one_worker(mixed_corpus, tmp_path_factory, use_embedder):
    """The reference the pools are held to: ``(output folder, result)`` of one run of
    ``mixed_corpus`` in one process, made once for the module (its folder is only read)."""
    out = tmp_path_factory.mktemp("one_worker") / "w1"
    return out, run(mixed_corpus, out, load_config(overrides={"run": {"workers": 1}}), embedder=use_embedder,
                    progress=False)


@pytest.mark.slow
def test_two_workers_write_the_same_tables_as_one(mixed_corpus, one_worker, tmp_path, use_embedder, monkeypatch):
    monkeypatch.setattr(runner, "MIN_FILES_PER_WORKER", 1)  # a pool even for this small corpus
    w1, one = one_worker
    two = run(mixed_corpus, tmp_path / "w2", load_config(overrides={"run": {"workers": 2, "batch_size": 3}}),
              embedder=use_embedder, progress=False)
    assert two.counts == one.counts and one.counts["sections"] > 50
    a, b = _tables(w1), _tables(tmp_path / "w2")
    for name in a:
        assert pq.read_table(w1 / f"{name}.parquet").equals(pq.read_table(tmp_path / "w2" / f"{name}.parquet")), name
        assert a[name] == b[name], f"{name}.parquet differs between 1 and 2 workers"
    assert two.files == one.files
    assert set(two.seconds) == set(one.seconds)
    assert two.summary()["failed_files"] == one.summary()["failed_files"] == 1  # binary.txt
    # the pool's results were kept in the state: a rerun reuses every file and changes nothing
    again = run(mixed_corpus, tmp_path / "w2", load_config(overrides={"run": {"workers": 2}}),
                embedder=use_embedder, progress=False)
    assert again.files["processed"] == []
    assert _tables(tmp_path / "w2") == a


@pytest.mark.slow
def test_the_embedding_pool_writes_the_same_tables_as_one_process(mixed_corpus, one_worker, tmp_path, monkeypatch):
    import multiprocessing

    from pipeline import embed

    monkeypatch.setattr(embed, "POOL_MIN_TEXTS", 1)  # the pool even for this corpus's few sections
    children_at_clustering = []
    cluster_all = runner.cluster_all

    def watched(*args, **kwargs):
        children_at_clustering.append(len(multiprocessing.active_children()))
        return cluster_all(*args, **kwargs)

    monkeypatch.setattr(runner, "cluster_all", watched)
    w1, one = one_worker
    two = run(mixed_corpus, tmp_path / "w2", load_config(overrides={"run": {"workers": 2}}), progress=False)
    assert one.manifest["embedder"]["cache_misses"] == two.manifest["embedder"]["cache_misses"] > 50
    assert _tables(w1) == _tables(tmp_path / "w2")
    assert multiprocessing.active_children() == []  # the run stopped its embedding processes
    assert children_at_clustering == [0]  # ... once the sections were embedded, before clustering


@pytest.mark.parametrize(("n_files", "allowed", "expected"), [
    (0, 8, 1), (100, 8, 1), (127, 8, 1), (128, 8, 2), (1000, 8, 8), (1000, 1, 1),
])
def test_pool_size_follows_the_work(n_files, allowed, expected):
    assert runner.pool_workers(n_files, allowed) == expected


def test_pool_batches_spread_the_work():
    assert runner.pool_batch_size(100, 2, 64) == 13  # 8 batches for 2 workers
    assert runner.pool_batch_size(10_000, 2, 64) == 64  # never above run.batch_size
    assert runner.pool_batch_size(1, 4, 64) == 1


def test_workers_setting_is_checked():
    assert load_config().run.workers >= 1
    with pytest.raises(ConfigError, match="run.workers = 0; must be a positive integer"):
        load_config(overrides={"run": {"workers": 0}})
    with pytest.raises(ConfigError, match="run.engine = 'spark'; valid options"):
        load_config(overrides={"run": {"engine": "spark"}})
    with pytest.raises(ConfigError, match="run.ray_address applies to engine 'ray' only"):
        load_config(overrides={"run": {"ray_address": "auto"}})


def _cmdline(pid: int) -> bytes:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:  # gone meanwhile
        return b""


def _children(pid: int) -> set[int]:
    """Pids of the live processes whose parent is ``pid`` (Linux /proc)."""
    found = set()
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == pid and fields[0] != "Z":
            found.add(int(stat.parent.name))
    return found


def _default_sigint() -> None:
    import signal

    signal.signal(signal.SIGINT, signal.SIG_DFL)


def _run_with_a_pool(tmp_path: Path, stderr, own_group: bool = False) -> tuple:
    """Start ``python -m pipeline run`` with 2 workers on enough files for a pool and wait until
    both workers run: ``(process, worker pids, output folder)``. ``own_group``: in a process
    group of its own (as a terminal's foreground job), which a signal can reach as a whole."""
    import subprocess
    import sys
    import time

    corpus = tmp_path / "corpus"
    corpus.mkdir()
    text = (SAMPLE / "c_blog_en.md").read_text(encoding="utf-8")
    for i in range(2 * runner.MIN_FILES_PER_WORKER + 2):  # enough files for a pool of 2
        (corpus / f"f{i:03d}.md").write_text(f"{text}\nCopy {i}.\n", encoding="utf-8")
    out = tmp_path / "out"
    # a terminal's foreground job takes Ctrl-C: SIGINT at its default, whatever this process has
    # (an ignored signal is inherited across exec, and Python then leaves it ignored)
    proc = subprocess.Popen([sys.executable, "-m", "pipeline", "run", str(corpus), "--out", str(out),
                             "--workers", "2", "--quiet"], cwd=Path(__file__).resolve().parents[1],
                            stdout=subprocess.DEVNULL, stderr=stderr, text=True, start_new_session=own_group,
                            preexec_fn=_default_sigint)
    pool: set[int] = set()
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and proc.poll() is None:
        pool = {c for c in _children(proc.pid) if b"spawn_main" in _cmdline(c)}
        if len(pool) == 2:
            break
        time.sleep(0.2)
    time.sleep(1.0)  # let them pass their start-up
    return proc, pool, out


def _ignores_sigint(pid: int, seconds: float = 60.0) -> bool:
    """Whether process ``pid`` ignores SIGINT within ``seconds`` (``SigIgn`` in /proc: the mask
    of ignored signals, SIGINT is bit 2)."""
    import signal
    import time

    deadline = time.monotonic() + seconds
    while True:
        status = Path(f"/proc/{pid}/status").read_text()
        ignored = next(ln for ln in status.splitlines() if ln.startswith("SigIgn:"))
        if int(ignored.split()[1], 16) & (1 << (signal.SIGINT - 1)):
            return True
        if time.monotonic() > deadline:
            return False
        time.sleep(0.2)


def _wait_gone(pool: set[int]) -> list[int]:
    """Wait up to 30 s for the workers ``pool`` to exit; the ones still running."""
    import time

    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and any(b"spawn_main" in _cmdline(c) for c in pool):
        time.sleep(0.2)
    return [c for c in pool if b"spawn_main" in _cmdline(c)]  # a zombie has no cmdline


def _stop_all(proc, pool: set[int]) -> None:
    """A failed test leaves no run and no orphan worker."""
    import os
    import signal

    if proc.poll() is None:
        proc.kill()
    for c in pool:
        if b"spawn_main" in _cmdline(c):
            os.kill(c, signal.SIGKILL)


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="needs Linux /proc (the pdeath signal is Linux)")
def test_workers_stop_when_the_run_is_killed(tmp_path: Path) -> None:
    """A run killed outright (a scheduler's SIGKILL) leaves no worker behind, holding its models."""
    import os
    import signal
    import subprocess

    proc, pool, _ = _run_with_a_pool(tmp_path, subprocess.DEVNULL)
    try:
        assert len(pool) == 2, "the run did not start its 2 workers"
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(timeout=30)
        assert _wait_gone(pool) == []
    finally:
        _stop_all(proc, pool)


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="needs Linux /proc")
def test_a_run_stopped_with_sigterm_cleans_up_and_says_so(tmp_path: Path) -> None:
    """A scheduler's SIGTERM stops a run as Ctrl-C does: exit 143 with a message, the workers
    stopped, no lock and no unfinished run folder left."""
    import os
    import signal
    import subprocess

    from pipeline.cli import EXIT_TERMINATED
    from pipeline.publish import RUNS_DIR

    proc, pool, out = _run_with_a_pool(tmp_path, subprocess.PIPE)
    try:
        assert len(pool) == 2, "the run did not start its 2 workers"
        assert (out / ".lock").exists() and len(list((out / RUNS_DIR).iterdir())) == 1  # a run folder in progress
        os.kill(proc.pid, signal.SIGTERM)
        _, stderr = proc.communicate(timeout=120)
        assert proc.returncode == EXIT_TERMINATED, stderr
        assert "terminated (SIGTERM)" in stderr and "nothing new was published" in stderr
        assert "Traceback" not in stderr
        assert (out / ".lock").read_text() == ""  # released cleanly (a killed run leaves its PID)
        assert list((out / RUNS_DIR).iterdir()) == []  # the unfinished run folder is gone
        assert not (out / "manifest.json").exists()
        assert _wait_gone(pool) == []
    finally:
        _stop_all(proc, pool)


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="needs Linux /proc")
def test_ctrl_c_reaches_the_run_and_not_its_workers(tmp_path: Path) -> None:
    """Ctrl-C at a terminal signals the whole process group. The workers ignore it (one killed in
    the middle of writing its result would leave the pool's pipe half written, and print its own
    traceback); the run stops them and says so once: exit 130, no traceback."""
    import os
    import signal
    import subprocess

    from pipeline.cli import EXIT_INTERRUPTED

    proc, pool, out = _run_with_a_pool(tmp_path, subprocess.PIPE, own_group=True)
    try:
        assert len(pool) == 2, "the run did not start its 2 workers"
        for pid in pool:  # the workers ignore SIGINT once their start-up has run (slow on a loaded machine)
            assert _ignores_sigint(pid), Path(f"/proc/{pid}/status").read_text()
        os.killpg(proc.pid, signal.SIGINT)
        _, stderr = proc.communicate(timeout=120)
        assert proc.returncode == EXIT_INTERRUPTED, stderr
        assert "the run was interrupted; nothing new was published" in stderr
        assert "Traceback" not in stderr and "KeyboardInterrupt" not in stderr, stderr
        assert (out / ".lock").read_text() == ""
        assert _wait_gone(pool) == []
    finally:
        _stop_all(proc, pool)


def _sleep(seconds: float, config) -> float:
    """A batch that takes ``seconds`` (module level: the spawned workers import it)."""
    import time

    time.sleep(seconds)
    return seconds


def test_a_pool_left_early_stops_its_workers_at_once() -> None:
    # a run stopped (Ctrl-C, an error) does not wait for the batches its workers are on
    import time

    results = ProcessPool(2, given, load_config()).map(_sleep, iter([0.0, 60.0, 60.0, 60.0]))
    assert next(results) == 0.0
    pool = {c for c in _children(os.getpid()) if b"spawn_main" in _cmdline(c)}
    assert len(pool) == 2
    started = time.perf_counter()
    results.close()
    assert time.perf_counter() - started < 20
    assert _wait_gone(pool) == []


def test_workers_log_the_pipelines_debug_lines_at_the_runs_levels(caplog):
    # -vv sets only the "pipeline" logger to DEBUG (root stays at INFO, so that other libraries'
    # DEBUG lines stay out): the workers take both levels, and their DEBUG lines reach this process
    import logging

    caplog.set_level(logging.INFO)
    caplog.set_level(logging.DEBUG, logger="pipeline")
    probe = logging.getLogger("pipeline.probe")  # a Logger pickles by name: the worker logs with its own
    with ProcessPool(1, given, load_config()) as pool:
        assert list(pool.map(probe.debug, iter(["from a worker %s"]))) == [None]
    lines = [r for r in caplog.records if r.name == "pipeline.probe"]
    assert [(r.levelno, r.getMessage().startswith("from a worker ")) for r in lines] == [(logging.DEBUG, True)]
    assert lines[0].process != os.getpid()


def test_a_worker_that_dies_leaves_the_run_going_one_file_at_a_time(tmp_path: Path) -> None:
    """A worker killed (out of memory, a crash in native code) breaks the pool: the batches left
    run one file at a time on a fresh pool and give the same results as a healthy run; a file whose
    worker dies when alone is an error row WorkerDied (probe3: the run exited 3, nothing published)."""
    import signal

    from pipeline.documents import died_file, process_files
    from pipeline.listing import list_corpus

    config = load_config()
    listed, _ = list_corpus(SAMPLE, config.ingest.extensions)
    batches = [listed.iloc[i : i + 2].reset_index(drop=True) for i in range(0, min(len(listed), 4), 2)]
    pool = ProcessPool(2, given, config)
    pool.start()
    for process in pool.processes:
        os.kill(process.pid, signal.SIGKILL)
    got = list(runner._surviving(pool, batches, config))
    paths = [f.source_path for r in got for f in r.files]
    assert paths == [p for b in batches for p in b["source_path"]]  # every file, in order, one a result
    assert all(r.n_files == 1 for r in got)
    expected = [process_files(b, config) for b in batches]
    assert [f.documents for r in got for f in r.files] == [f.documents for r in expected for f in r.files]
    died = died_file(batches[0].iloc[:1], config).files[0]
    assert died.n_documents == 1 and b'"status":"error"' in died.documents and b"WorkerDied:" in died.documents


@pytest.mark.slow
def test_a_stop_in_the_one_file_at_a_time_fallback_does_not_wait_for_the_file(tmp_path: Path) -> None:
    """Ctrl-C or SIGTERM (raised in the main thread) while the fallback's one-process pool runs a
    long file stops that pool at once, as the first pool is stopped (probe4: a SIGTERM waited
    130 s for a 12 MB file to finish)."""
    import random
    import signal
    import time

    from pipeline.listing import list_corpus

    rng = random.Random(2)
    words = "deep neural learning graph attention transformer model robust efficient scalable".split()
    parts = [f"## {' '.join(rng.choices(words, k=7)).title()}\n\nAuthor{i} et al., NeurIPS 2020. "
             + " ".join(rng.choices(words, k=40)) + "\n" for i in range(12000)]
    (tmp_path / "big.md").write_text("# Big list\n\n" + "\n".join(parts), encoding="utf-8")
    config = load_config()
    listed, _ = list_corpus(tmp_path, config.ingest.extensions)
    pool = ProcessPool(1, given, config)
    pool.start()
    for process in pool.processes:
        os.kill(process.pid, signal.SIGKILL)

    def stop(signum, frame):
        raise KeyboardInterrupt

    previous = signal.signal(signal.SIGALRM, stop)
    results = runner._surviving(pool, [listed], config)
    started = time.perf_counter()
    signal.alarm(15)  # the fresh pool loads its models, then is well inside the file
    try:
        with pytest.raises(KeyboardInterrupt):
            list(results)
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)
    assert time.perf_counter() - started < 25
