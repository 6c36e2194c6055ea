"""The allocator settings of the run's processes (pipeline.memory), each in a fresh interpreter:
they change the whole process."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

_PROBE = r"""
import ctypes, json, sys
import numpy as np

class Info(ctypes.Structure):
    _fields_ = [(n, ctypes.c_size_t) for n in ("arena", "ordblks", "smblks", "hblks", "hblkhd", "usmblks",
                                               "fsmblks", "uordblks", "fordblks", "keepcost")]

libc = ctypes.CDLL("libc.so.6")
libc.mallinfo2.restype = Info
tuned = None
if sys.argv[1] == "tuned":
    from pipeline.memory import tune_allocators
    tuned = tune_allocators()
big = np.ones(20 << 20, np.uint8)  # mapped, and freed: glibc's default threshold rises to 20 MB
del big
before = libc.mallinfo2().hblkhd
block = np.ones(4 << 20, np.uint8)  # 4 MB: from the heap at the risen threshold, mapped when tuned
mapped = libc.mallinfo2().hblkhd - before
import pyarrow as pa
print(json.dumps({"tuned": tuned, "mapped": mapped, "pool": pa.default_memory_pool().backend_name,
                  "array_pool_bytes": (pa.array(range(1000)), pa.system_memory_pool().bytes_allocated())[1]}))
"""


def _probe(mode: str, **env: str) -> dict:
    import os

    clean = {k: v for k, v in os.environ.items() if k not in ("ARROW_DEFAULT_MEMORY_POOL", "MALLOC_MMAP_THRESHOLD_")}
    done = subprocess.run([sys.executable, "-c", _PROBE, mode], capture_output=True, text=True, timeout=120,
                          env={**clean, **env})
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc's mallopt: Linux only")
def test_tuned_process_maps_large_blocks_and_uses_the_system_pool() -> None:
    """Untuned, glibc serves a 4 MB block from its heap once a 20 MB block was freed (its
    threshold rises); tuned, every block from 1 MiB on is mapped (unmapped at its free), and
    Arrow's buffers come from the system allocator."""
    default, tuned = _probe("default"), _probe("tuned")
    assert default["tuned"] is None and default["mapped"] == 0 and default["pool"] != "system"
    assert tuned["tuned"] is True and tuned["mapped"] >= 4 << 20 and tuned["pool"] == "system"
    assert tuned["array_pool_bytes"] >= 8000  # 1,000 int64 values from the system pool


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc's mallopt: Linux only")
def test_tuning_leaves_the_users_own_settings() -> None:
    """A pool or threshold the user chose in the environment stays: Arrow's pool named by
    ARROW_DEFAULT_MEMORY_POOL, glibc's threshold by MALLOC_MMAP_THRESHOLD_ (here 64 MiB: the 4 MB
    block then comes from the heap)."""
    got = _probe("tuned", ARROW_DEFAULT_MEMORY_POOL="jemalloc", MALLOC_MMAP_THRESHOLD_=str(64 << 20))
    assert got["tuned"] is False and got["pool"] == "jemalloc" and got["mapped"] == 0


def test_collect_less_often_sets_the_youngest_threshold_and_restores_all(tmp_path) -> None:
    import gc

    from pipeline import runner
    from pipeline.config import load_config
    from pipeline.embed import make_embedder
    from pipeline.memory import GC_THRESHOLD, collect_less_often

    before = gc.get_threshold()
    try:
        gc.set_threshold(500, 7, 9)
        with collect_less_often():
            assert gc.get_threshold() == (GC_THRESHOLD, 7, 9)
        assert gc.get_threshold() == (500, 7, 9)
        with pytest.raises(KeyError), collect_less_often(1234):
            assert gc.get_threshold() == (1234, 7, 9)
            raise KeyError("x")
        assert gc.get_threshold() == (500, 7, 9)

        # a run collects less often while it runs (seen by its embedder), and gives the setting back
        config = load_config()
        seen = []

        class Probe:
            def __init__(self):
                self._inner = make_embedder(config)
                self.model_id, self.dim = self._inner.model_id, self._inner.dim
                self.batch_size, self.max_chars = self._inner.batch_size, self._inner.max_chars

            def encode(self, texts):
                seen.append(gc.get_threshold())
                return self._inner.encode(texts)

        corpus = tmp_path / "corpus"
        corpus.mkdir()
        sample = Path(__file__).resolve().parents[1] / "corpora" / "sample" / "c_blog_en.md"
        (corpus / "a.md").write_text(sample.read_text(encoding="utf-8"), encoding="utf-8")
        runner.run(corpus, tmp_path / "out", config, embedder=Probe(), progress=False)
        assert seen and set(seen) == {(GC_THRESHOLD, 7, 9)}
        assert gc.get_threshold() == (500, 7, 9)
    finally:
        gc.set_threshold(*before)
