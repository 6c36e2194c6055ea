"""A persistent embedding cache, so reruns and incremental runs embed only new text.

One SQLite file keyed by ``(model key, SHA-256 of the exact text)``; the model key is the
embedder's ``model_id`` plus ``max_chars``. Vectors are little-endian float32 with a BLAKE2b
checksum (:func:`entry_checksum`) verified on every read.

The cache heals rather than fails a run: an unsound file is rebuilt beside it and swapped in on
close; a folder in its place is moved aside; a bad checksum is a miss; a failed read or write
turns the cache off. Each case warns (:attr:`EmbeddingCache.warnings`, for the manifest).
:class:`CachedEmbedder` encodes only the misses: vectors bit-identical to the wrapped embedder's.
"""

from __future__ import annotations

import contextlib
import hashlib
import logging
import os
import sqlite3
import time
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np

from .embed import Embedder, checked_texts, submit_encode

log = logging.getLogger(__name__)

#: Texts per ``SELECT … IN (…)``: under SQLite's bound-parameter limit in every build (999 before 3.32).
LOOKUP_CHUNK = 500

#: File layout (``PRAGMA user_version``; 2: a checksum per entry); others are rebuilt.
LAYOUT_VERSION = 2

_SCHEMA = """
CREATE TABLE IF NOT EXISTS embeddings (
    model TEXT NOT NULL,
    text_sha256 TEXT NOT NULL,
    dim INTEGER NOT NULL,
    vector BLOB NOT NULL,
    checksum BLOB NOT NULL,
    PRIMARY KEY (model, text_sha256)
) WITHOUT ROWID
"""

#: Suffix of the file a damaged cache is rebuilt in, beside it, before it is swapped in.
REBUILD_SUFFIX = ".rebuild"


def text_key(text: str) -> str:
    """SHA-256 (hex) of ``text`` encoded as UTF-8 (``surrogatepass``, so any ``str`` hashes)."""
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def entry_checksum(model: str, key: str, vector: bytes) -> bytes:
    """16-byte BLAKE2b of model key, text hash and vector: a flipped byte or misfiled vector fails."""
    digest = hashlib.blake2b(digest_size=16)
    for part in (model.encode("utf-8", "surrogatepass"), key.encode("ascii"), vector):
        digest.update(len(part).to_bytes(8, "little"))
        digest.update(part)
    return digest.digest()

#: Seconds a cache read or write waits for another connection's lock (Python's default is 5).
LOCK_TIMEOUT = 300.0


class EmbeddingCache:
    """Embedding vectors on disk, keyed by (model key, text hash), each checksummed; ``path``'s
    folder is created when missing.

    Never raises for a damaged or unwritable cache: it is rebuilt, or off (:attr:`enabled` False,
    every lookup a miss). A folder at ``path`` is moved to ``<name>.moved-aside-<time>``.

    Attributes:
        path: the cache file.
        enabled: whether lookups and stores reach the file.
        warnings: one message per problem (also logged).
    """

    def __init__(self, path: str | Path):
        self.path = Path(path)
        self.warnings: list[str] = []
        self._rebuild: Path | None = None  # the file the cache is rebuilt in, swapped in by close
        self._db: sqlite3.Connection | None = None
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            if _not_a_file(self.path):  # not ours to delete: moved aside, and the cache starts empty
                aside = self.path.with_name(f"{self.path.name}.moved-aside-{time.strftime('%Y%m%dT%H%M%S')}")
                os.rename(self.path, aside)
                self._warn(f"embedding cache {self.path} is not a regular file: moved aside to {aside.name}; "
                           "the cache starts empty")
            problem = self._open()
            if problem is not None:
                self._warn(f"embedding cache {self.path} is {problem}: treated as empty, rebuilt beside it "
                           f"({self.path.name}{REBUILD_SUFFIX}) and swapped in at the end of the run")
                self._start_rebuild()
        except (OSError, sqlite3.Error) as exc:
            self._turn_off(exc)

    @property
    def enabled(self) -> bool:
        return self._db is not None

    def _connect(self, path: Path) -> sqlite3.Connection:
        # another reader may hold the lock a while: wait rather than fail the run
        return sqlite3.connect(path, timeout=LOCK_TIMEOUT)

    def _open(self) -> str | None:
        """Open :attr:`path`; returns what is wrong with it (nothing open then), or None."""
        db = self._connect(self.path)
        try:
            problem = _layout_problem(db)
        except sqlite3.DatabaseError as exc:  # not a database, or damaged: SQLite says which
            problem = f"not a sound SQLite database ({exc})"
        if problem is not None:
            db.close()
            return problem
        db.execute(_SCHEMA)
        db.execute(f"PRAGMA user_version = {LAYOUT_VERSION}")
        db.commit()
        self._db = db
        return None

    def _start_rebuild(self) -> None:
        self._rebuild = self.path.with_name(self.path.name + REBUILD_SUFFIX)
        _remove_database(self._rebuild)  # a leftover of a run that stopped before its swap
        db = self._connect(self._rebuild)
        db.execute(_SCHEMA)
        db.execute(f"PRAGMA user_version = {LAYOUT_VERSION}")
        db.commit()
        self._db = db

    def _warn(self, message: str) -> None:
        log.warning("%s", message)
        self.warnings.append(message)

    def _turn_off(self, exc: BaseException) -> None:
        """After a failed read or write: warn, close, run on without the cache (the file untouched)."""
        self._warn(f"embedding cache {self.path} cannot be used ({type(exc).__name__}: {exc}): "
                   "this run goes on without it")
        if self._db is not None:
            with contextlib.suppress(sqlite3.Error):
                self._db.close()
            self._db = None
        if self._rebuild is not None:
            with contextlib.suppress(OSError):
                _remove_database(self._rebuild)
            self._rebuild = None

    def get(self, model: str, keys: Sequence[str]) -> dict[str, np.ndarray]:
        """``{key: float32 (dim,)}`` for stored ``keys`` under ``model``; misses and bad checksums absent."""
        found: dict[str, np.ndarray] = {}
        if self._db is None:
            return found
        unique = list(dict.fromkeys(keys))
        damaged = 0
        try:
            for start in range(0, len(unique), LOOKUP_CHUNK):
                chunk = unique[start : start + LOOKUP_CHUNK]
                marks = ",".join("?" * len(chunk))
                rows = self._db.execute(
                    f"SELECT text_sha256, dim, vector, checksum FROM embeddings WHERE model = ? AND text_sha256 IN ({marks})",
                    [model, *chunk],
                ).fetchall()
                for key, dim, blob, checksum in rows:
                    if checksum == entry_checksum(model, key, blob) and len(blob) == 4 * dim:
                        found[key] = np.frombuffer(blob, dtype="<f4")
                    else:
                        damaged += 1
        except (OSError, sqlite3.Error) as exc:
            self._turn_off(exc)
            return {}
        if damaged:
            self._warn(f"embedding cache {self.path}: {damaged} entr{'y' if damaged == 1 else 'ies'} failed "
                       "the checksum (damaged): encoded again and replaced")
        return found

    def put(self, model: str, items: dict[str, np.ndarray]) -> None:
        """Store ``{key: vector}`` under ``model`` (one transaction; an existing entry is replaced)."""
        if self._db is None:
            return
        rows = []
        for key, v in items.items():
            blob = np.asarray(v, dtype="<f4").tobytes()
            rows.append((model, key, int(v.shape[0]), blob, entry_checksum(model, key, blob)))
        try:
            with self._db:
                self._db.executemany("INSERT OR REPLACE INTO embeddings VALUES (?, ?, ?, ?, ?)", rows)
        except (OSError, sqlite3.Error) as exc:
            self._turn_off(exc)

    def __len__(self) -> int:
        if self._db is None:
            return 0
        return int(self._db.execute("SELECT count(*) FROM embeddings").fetchone()[0])

    def close(self) -> None:
        """Close the database connection; a rebuilt cache replaces the damaged file."""
        if self._db is None:
            return
        try:
            self._db.close()
        except sqlite3.Error as exc:
            self._db = None
            self._turn_off(exc)
            return
        self._db = None
        if self._rebuild is None:
            return
        try:
            for suffix in ("-journal", "-wal", "-shm"):  # the damaged file's, never to be applied to the new one
                Path(f"{self.path}{suffix}").unlink(missing_ok=True)
            os.replace(self._rebuild, self.path)
        except OSError as exc:
            self._turn_off(exc)
        self._rebuild = None


def _layout_problem(db: sqlite3.Connection) -> str | None:
    """What keeps ``db`` from being the cache as is, or None; sqlite3.DatabaseError when damaged."""
    check = db.execute("PRAGMA quick_check").fetchall()
    if check != [("ok",)]:
        return "damaged (SQLite quick_check: " + "; ".join(str(row[0]) for row in check[:3]) + ")"
    version = db.execute("PRAGMA user_version").fetchone()[0]
    tables = {row[0] for row in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    if not tables or (version == LAYOUT_VERSION and tables == {"embeddings"}):
        return None
    return f"of another layout (version {version}, tables {sorted(tables)})"


def _not_a_file(path: Path) -> bool:
    """Something is at ``path`` (a broken link included) that is not a regular file or a link to one."""
    return (path.exists() or path.is_symlink()) and not path.is_file()


def _remove_database(path: Path) -> None:
    """Delete an SQLite file this module wrote and its journal files."""
    for suffix in ("", "-journal", "-wal", "-shm"):
        Path(f"{path}{suffix}").unlink(missing_ok=True)


class CachedEmbedder:
    """An :class:`pipeline.embed.Embedder` that reads and fills an :class:`EmbeddingCache`.

    Attributes:
        model_id, dim: those of ``embedder``.
        max_chars: ``embedder``'s input cut (None when none).
        hits: texts found so far (repeats counted); misses: distinct texts encoded so far.
        cache_warnings: :attr:`EmbeddingCache.warnings`.
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
        self.cache_warnings = cache.warnings

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        """``float32 (len(texts), dim)``; only misses reach the backend, each once. TypeError for a
        ``str`` or non-string items."""
        return self.submit(texts)()

    def submit(self, texts: Sequence[str]) -> Callable[[], np.ndarray]:
        """Look ``texts`` up and start encoding the misses; the returned function waits, stores and
        returns what :meth:`encode` would. Texts pending in an earlier call take its vector, so
        results equal calling :meth:`encode` in turn; wait in call order. TypeError as :meth:`encode`."""
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
    """One :meth:`CachedEmbedder.submit` call's misses: :meth:`vectors` waits once, stores, gives ``{key: vector}``."""

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
