"""A persistent embedding cache, so reruns and incremental runs embed only new text.

Vectors are stored in one SQLite file (Python's :mod:`sqlite3`; SQLite commits are atomic and
durable, so a run killed mid-write leaves the cache as it was before the last commit), keyed by
``(model key, SHA-256 of the exact text handed to the model)``. The model key is the embedder's
``model_id`` plus its input cut (``max_chars``), because the same model on a longer cut gives a
different vector. Vectors are stored as raw little-endian ``float32`` bytes of length ``4 * dim``.

:class:`CachedEmbedder` wraps any :class:`pipeline.embed.Embedder`: it looks every text up,
encodes only the misses (in one call, in input order) and stores them. Results are identical to
the wrapped embedder's, bit for bit, since the stored bytes are the vectors it returned.
"""

from __future__ import annotations

import hashlib
import sqlite3
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np

from .embed import Embedder, checked_texts, submit_encode

__all__ = ["CachedEmbedder", "EmbeddingCache"]

#: Texts per ``SELECT … IN (…)`` lookup; SQLite's default limit on bound parameters is 32,766
#: (999 before 3.32), so 500 keeps every build safe.
LOOKUP_CHUNK = 500

_SCHEMA = """
CREATE TABLE IF NOT EXISTS embeddings (
    model TEXT NOT NULL,
    text_sha256 TEXT NOT NULL,
    dim INTEGER NOT NULL,
    vector BLOB NOT NULL,
    PRIMARY KEY (model, text_sha256)
) WITHOUT ROWID
"""


def text_key(text: str) -> str:
    """SHA-256 (hex) of ``text`` encoded as UTF-8 (``surrogatepass``, so any ``str`` hashes)."""
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()

#: Seconds a read or write of the cache waits for another connection's lock before it fails
#: (``sqlite3.connect(timeout=...)``; Python's default is 5).
LOCK_TIMEOUT = 300.0


class EmbeddingCache:
    """Embedding vectors on disk, keyed by (model key, text hash).

    Args:
        path: the SQLite file; its folder is created when missing.

    Raises:
        sqlite3.DatabaseError: ``path`` exists but is not an SQLite database (e.g. a truncated
            or foreign file); delete it and the next run rebuilds it.
        sqlite3.OperationalError: (from :meth:`get`, :meth:`put`) another process held the
            file's lock for more than :data:`LOCK_TIMEOUT` seconds.
    """

    def __init__(self, path: str | Path):
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        # another process reading the file (an analyst's query, a backup) holds its lock for a
        # while: wait for it rather than fail the run (sqlite3's default wait is 5 s)
        self._db = sqlite3.connect(self.path, timeout=LOCK_TIMEOUT)
        self._db.execute(_SCHEMA)
        self._db.commit()

    def get(self, model: str, keys: Sequence[str]) -> dict[str, np.ndarray]:
        """Stored vectors for ``keys`` (text hashes) under ``model``: ``{key: float32 (dim,)}``.

        Keys not in the cache are absent from the result.
        """
        found: dict[str, np.ndarray] = {}
        unique = list(dict.fromkeys(keys))
        for start in range(0, len(unique), LOOKUP_CHUNK):
            chunk = unique[start : start + LOOKUP_CHUNK]
            marks = ",".join("?" * len(chunk))
            rows = self._db.execute(
                f"SELECT text_sha256, dim, vector FROM embeddings WHERE model = ? AND text_sha256 IN ({marks})",
                [model, *chunk],
            )
            for key, dim, blob in rows:
                vector = np.frombuffer(blob, dtype="<f4")
                if vector.shape == (dim,):
                    found[key] = vector
        return found

    def put(self, model: str, items: dict[str, np.ndarray]) -> None:
        """Store ``{key: vector}`` under ``model`` (one transaction; an existing entry is replaced)."""
        rows = [(model, key, int(v.shape[0]), np.asarray(v, dtype="<f4").tobytes()) for key, v in items.items()]
        with self._db:
            self._db.executemany("INSERT OR REPLACE INTO embeddings VALUES (?, ?, ?, ?)", rows)

    def __len__(self) -> int:
        return int(self._db.execute("SELECT count(*) FROM embeddings").fetchone()[0])

    def close(self) -> None:
        """Close the database connection."""
        self._db.close()


class CachedEmbedder:
    """An :class:`pipeline.embed.Embedder` that reads and fills an :class:`EmbeddingCache`.

    Args:
        embedder: the backend that encodes cache misses.
        cache: where vectors are kept.

    Attributes:
        model_id, dim: those of ``embedder``.
        max_chars: the input cut of ``embedder`` (None when it has none).
        hits: texts found in the cache so far (count, repeats included).
        misses: distinct texts encoded by ``embedder`` so far (count).
    """

    def __init__(self, embedder: Embedder, cache: EmbeddingCache):
        self.embedder = embedder
        self.cache = cache
        self.model_id = embedder.model_id
        self.dim = embedder.dim
        self.max_chars = getattr(embedder, "max_chars", None)
        self.model_key = f"{embedder.model_id}|max_chars={self.max_chars}"
        self.hits = 0
        self.misses = 0
        self._pending: dict[str, _Encoding] = {}  # text key -> the submitted call encoding it

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        """Embed ``texts``: float32 array of shape ``(len(texts), dim)``, rows as the backend gives
        them (L2-normalized). Only texts not in the cache reach the backend, each once.

        Raises:
            TypeError: ``texts`` is a single ``str`` or holds a non-string.
        """
        return self.submit(texts)()

    def submit(self, texts: Sequence[str]) -> Callable[[], np.ndarray]:
        """Look ``texts`` up and start encoding the misses (:func:`pipeline.embed.submit_encode`
        of the backend); the returned function waits for them, stores them and returns what
        :meth:`encode` returns. Calls submitted before earlier ones are waited for see the
        cache as if those had finished: a text that an earlier call is still encoding is not
        encoded again but takes that call's vector (the one the cache would then hold), so the
        vectors, the cache and :attr:`hits` / :attr:`misses` are those of calling :meth:`encode`
        in turn (:attr:`misses` counts a call's misses once they are encoded). Wait for the
        functions in the order of the calls (an earlier call's vectors are stored when its
        function runs, or a later one's that needs them). One difference: when the backend
        fails on an earlier call, a later call that shares texts with it fails with the same
        error (in turn, it would encode them itself); the runner stops at the first error anyway.

        Raises:
            TypeError: ``texts`` is a single ``str`` or holds a non-string.
        """
        texts = checked_texts(texts)
        keys = [text_key(t) for t in texts]
        found = self.cache.get(self.model_key, keys)
        earlier = {key: self._pending[key] for key in keys if key not in found and key in self._pending}
        self.hits += sum(1 for k in keys if k in found or k in earlier)
        missing: dict[str, str] = {}
        for key, text in zip(keys, texts, strict=True):
            if key not in found and key not in earlier:
                missing.setdefault(key, text)
        job = _Encoding(self, list(missing), submit_encode(self.embedder, list(missing.values())) if missing else None)
        for key in missing:
            self._pending[key] = job

        def result() -> np.ndarray:
            found.update(job.vectors())
            for key, other in earlier.items():
                found[key] = other.vectors()[key]
            out = np.zeros((len(keys), self.dim), dtype=np.float32)
            for row, key in enumerate(keys):
                out[row] = found[key]
            return out

        return result

    def __repr__(self) -> str:
        return f"CachedEmbedder({self.embedder!r}, cache={str(self.cache.path)!r})"


class _Encoding:
    """The misses of one :meth:`CachedEmbedder.submit` call while the backend encodes them:
    :meth:`vectors` waits for them once, stores them in the cache and gives ``{key: vector}``."""

    def __init__(self, owner: CachedEmbedder, keys: list[str], result: Callable[[], np.ndarray] | None):
        self._owner, self._keys, self._result = owner, keys, result
        self._vectors: dict[str, np.ndarray] | None = None if keys else {}

    def vectors(self) -> dict[str, np.ndarray]:
        if self._vectors is None:
            owner = self._owner
            try:
                new = dict(zip(self._keys, np.asarray(self._result(), dtype=np.float32), strict=True))
                owner.cache.put(owner.model_key, new)
                owner.misses += len(new)  # counted once encoded, as encode in turn counts them
                self._vectors, self._result = new, None
            finally:  # stored, or failed: either way a later call no longer waits on this one
                for key in self._keys:
                    if owner._pending.get(key) is self:
                        del owner._pending[key]
        return self._vectors
