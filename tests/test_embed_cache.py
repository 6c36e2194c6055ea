"""The persistent embedding cache: same vectors as the backend, only new texts encoded."""

from __future__ import annotations

import json
import shutil
import sqlite3
from pathlib import Path

import numpy as np
import pyarrow.parquet as pq

from pipeline.config import load_config
from pipeline.embed import UniversalSentenceEncoder
from pipeline.embed_cache import CachedEmbedder, EmbeddingCache, text_key
from pipeline.runner import run

from conftest import SAMPLE


class CountingEmbedder:
    """The real USE backend, counting the texts it is asked to encode."""

    def __init__(self, inner: UniversalSentenceEncoder):
        self.inner = inner
        self.model_id = inner.model_id
        self.dim = inner.dim
        self.max_chars = inner.max_chars
        self.encoded: list[str] = []

    def encode(self, texts):
        self.encoded.extend(texts)
        return self.inner.encode(texts)


TEXTS = ["共形预测与贝叶斯求积", "Conformal Prediction as Bayesian Quadrature", "注意力机制", "共形预测与贝叶斯求积"]


def test_cached_vectors_equal_the_backend_and_only_misses_are_encoded(tmp_path: Path, use_embedder) -> None:
    counting = CountingEmbedder(use_embedder)
    cached = CachedEmbedder(counting, EmbeddingCache(tmp_path / "c.sqlite"))
    first = cached.encode(TEXTS)
    assert counting.encoded == TEXTS[:3]  # the repeated text is encoded once
    assert (cached.hits, cached.misses) == (0, 3)
    np.testing.assert_array_equal(first[0], first[3])
    np.testing.assert_allclose(first, use_embedder.encode(TEXTS), atol=1e-6)
    assert first.dtype == np.float32 and first.shape == (4, use_embedder.dim)

    counting.encoded.clear()
    second = cached.encode(["新文本：扩散模型", *TEXTS])
    assert counting.encoded == ["新文本：扩散模型"]
    assert (cached.hits, cached.misses) == (4, 4)
    np.testing.assert_array_equal(second[1:], first)
    np.testing.assert_array_equal(cached.encode(t for t in TEXTS), first)  # an iterator is read once


def test_calls_submitted_before_the_earlier_are_waited_for_are_those_in_turn(tmp_path: Path, use_embedder) -> None:
    """The runner submits a chunk before it waits for the one before (pipeline.dedup.submit_inputs):
    a text the earlier call is still encoding is not encoded again but takes its vector, and the
    vectors, the cache and the counts are those of encoding the calls in turn."""
    calls = [TEXTS[:3], ["新文本：扩散模型", TEXTS[0], TEXTS[2]], [TEXTS[1], "新文本：扩散模型", "第三段"]]
    in_turn = CachedEmbedder(use_embedder, EmbeddingCache(tmp_path / "turn.sqlite"))
    expected = [in_turn.encode(c) for c in calls]
    counting = CountingEmbedder(use_embedder)
    cached = CachedEmbedder(counting, EmbeddingCache(tmp_path / "ahead.sqlite"))
    pending = [cached.submit(c) for c in calls]  # all three started before any is waited for
    assert counting.encoded == [*TEXTS[:3], "新文本：扩散模型", "第三段"]  # each text once
    assert (cached.hits, cached.misses) == (4, 0)  # misses are counted once encoded
    assert len(cached.cache) == 0  # nothing stored until a call is waited for
    for got, want in zip([p() for p in pending], expected, strict=True):
        np.testing.assert_array_equal(got, want)
    assert (cached.hits, cached.misses) == (in_turn.hits, in_turn.misses) == (4, 5)
    assert len(cached.cache) == len(in_turn.cache) == 5 and not cached._pending
    for key in map(text_key, [*TEXTS[:3], "新文本：扩散模型", "第三段"]):
        a, b = in_turn.cache.get(in_turn.model_key, [key]), cached.cache.get(cached.model_key, [key])
        np.testing.assert_array_equal(a[key], b[key])
    # waited for out of order: a later call stores the earlier one's vectors it needs
    again = CachedEmbedder(CountingEmbedder(use_embedder), EmbeddingCache(tmp_path / "order.sqlite"))
    first, second = again.submit(calls[0]), again.submit(calls[1])
    np.testing.assert_array_equal(second(), expected[1])
    np.testing.assert_array_equal(first(), expected[0])
    assert len(again.cache) == 4 and not again._pending


def test_a_pool_submission_gives_what_encode_gives(use_embedder) -> None:
    """PooledEmbedder.submit queues a call's pieces behind the earlier ones' (two processes here):
    the vectors of encode, whatever the order they are waited for in."""
    from pipeline.embed import PooledEmbedder

    texts = [f"{t} #{k}" for k in range(700) for t in TEXTS[:2]]
    with PooledEmbedder(load_config(), workers=2, min_texts=1) as pooled:
        a, b = pooled.submit(texts[:900]), pooled.submit(texts[900:])
        np.testing.assert_array_equal(b(), use_embedder.encode(texts[900:]))
        np.testing.assert_array_equal(a(), use_embedder.encode(texts[:900]))
        np.testing.assert_array_equal(pooled.submit(texts[:5])(), use_embedder.encode(texts[:5]))


def test_the_cache_persists_and_separates_models(tmp_path: Path, use_embedder) -> None:
    path = tmp_path / "c.sqlite"
    CachedEmbedder(use_embedder, EmbeddingCache(path)).encode(TEXTS)
    reopened = EmbeddingCache(path)
    assert len(reopened) == 3
    model_key = CachedEmbedder(use_embedder, reopened).model_key
    assert set(reopened.get(model_key, [text_key(t) for t in TEXTS])) == {text_key(t) for t in TEXTS}
    assert reopened.get("another-model|max_chars=512", [text_key(TEXTS[0])]) == {}


def test_a_corrupt_cache_file_is_empty_with_a_warning_and_rebuilt(tmp_path: Path) -> None:
    path = tmp_path / "c.sqlite"
    path.write_bytes(b"this is not a database" * 100)
    cache = EmbeddingCache(path)
    assert cache.enabled and len(cache) == 0
    assert cache.warnings == [f"embedding cache {path} is not a sound SQLite database (file is not a database): "
                              "treated as empty, rebuilt beside it (c.sqlite.rebuild) and swapped in at the end "
                              "of the run"]
    cache.put("m", {"k": np.arange(4, dtype=np.float32)})
    assert path.read_bytes() == b"this is not a database" * 100  # untouched until the swap
    cache.close()
    assert sqlite3.connect(path).execute("SELECT count(*) FROM embeddings").fetchone() == (1,)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["c.sqlite"]


def test_a_rerun_embeds_nothing_new_and_gives_the_same_tables(tmp_path: Path, use_embedder) -> None:
    corpus = tmp_path / "corpus"
    shutil.copytree(SAMPLE, corpus)
    out = tmp_path / "out"
    config = load_config()
    run(corpus, out, config, embedder=use_embedder, progress=False)
    first = json.loads((out / "manifest.json").read_text())["embedder"]
    assert first["cache_hits"] == 0 and first["cache_misses"] > 0
    # changes.parquet is what changed since the run before: every paper added on the first run,
    # nothing on the second; every other table is the same, byte for byte
    tables = {p.name: p.read_bytes() for p in out.glob("*.parquet") if p.name != "changes.parquet"}
    run(corpus, out, config, embedder=use_embedder, progress=False)
    second = json.loads((out / "manifest.json").read_text())["embedder"]
    assert second["cache_misses"] == 0 and second["cache_hits"] >= first["cache_misses"]
    assert {p.name: p.read_bytes() for p in out.glob("*.parquet") if p.name != "changes.parquet"} == tables
    assert pq.read_metadata(out / "changes.parquet").num_rows == 0


def test_a_write_waits_for_another_process_lock_past_sqlite_default(tmp_path: Path) -> None:
    """Another connection (an analyst's query, a backup) holding the file's lock for longer than
    sqlite3's default 5 s wait: the cache waits for it instead of failing the run."""
    import threading

    cache = EmbeddingCache(tmp_path / "e.sqlite")
    other = sqlite3.connect(tmp_path / "e.sqlite", check_same_thread=False)
    other.execute("BEGIN EXCLUSIVE")
    release = threading.Timer(6.0, other.rollback)
    release.start()
    vector = np.arange(4, dtype=np.float32)
    cache.put("m", {"k": vector})  # waits about 6 s
    release.join()
    assert np.array_equal(cache.get("m", ["k"])["k"], vector)
    cache.close()
    other.close()
