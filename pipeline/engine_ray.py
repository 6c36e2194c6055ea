"""The Ray Data engine (``--engine ray``): the per-document stages and the embedder on a Ray cluster,
or on a local Ray instance started for the run.

Ray is an optional extra (``pip install 'paper-pipeline[ray]'``), imported only inside this module's
functions; asking for the engine without it raises :class:`pipeline.errors.ConfigError` (exit 2 from
the CLI).

Data flow (Ray Data)::

    corpus listing (files to process)   ray.data.from_items, one block per run.batch_size files
      .map_batches(DocumentStages)      pipeline.documents.process_files in an actor pool, one
                                        actor per CPU; out: one row per file (rows as JSON bytes)
    driver                              assembles in corpus order, state, copies (as locally)
    embedding texts                     ray.data.from_pandas, one block per EMBED_BLOCK_BATCHES
      .map_batches(EmbedActor)          one actor per GPU (num_gpus=1), else one CPU actor
    driver                              dedup, write, publish (as locally)

The driver is the run's process and does what the local engine does, so both engines write the same
tables; the embedding cache stays on the driver. On a cluster every node needs the same version of
the project installed and the corpus at the same absolute path.
"""

from __future__ import annotations

import json
import logging
import math
import os
from collections.abc import Generator, Sequence
from types import ModuleType, TracebackType
from typing import Any

import numpy as np
import pandas as pd

from .config import Config
from .embed import make_embedder
from .errors import ConfigError

log = logging.getLogger(__name__)

#: What a user without Ray is told (the CLI exits 2 with it).
RAY_MISSING = ("engine 'ray' needs Ray, which is not installed: pip install 'paper-pipeline[ray]' "
               "(or 'ray[data]>=2.40'), or use the local engine (--engine local --workers N)")
#: Texts per embedding block = this many of the embedder's encode batches (``batch_size``). A
#: block boundary is always a batch boundary, so every text is encoded with the same neighbours
#: as in one local ``encode`` call: the vectors are the same, bit for bit.
EMBED_BLOCK_BATCHES = 4
#: Level of Ray's own loggers on the driver (``ray``, ``ray.data``): their INFO and WARNING lines
#: would clutter stderr, which the CLI keeps for the run's log (Ray's C++ core still writes there).
RAY_LOG_LEVEL = logging.ERROR
#: Columns of the rows :class:`DocumentStages` sends back, one row per listed file.
RESULT_COLUMNS = ("source_path", "documents", "sections", "n_documents", "n_sections", "content_hashes", "failed",
                  "seconds", "n_files")


def import_ray() -> ModuleType:
    """``ray`` with ``ray.data`` loaded.

    Raises:
        ConfigError: Ray is not installed (:data:`RAY_MISSING`).
    """
    try:
        import ray
        import ray.data  # noqa: F401 - the Data library ships in the ray[data] extra
    except ImportError as exc:
        raise ConfigError(RAY_MISSING) from exc
    return ray


class DocumentStages:
    """Ray Data callable class: the per-document stages on one batch of the corpus listing,
    built once per actor (:func:`pipeline.workers.warm_models`).

    Each call returns one row per listed file, columns :data:`RESULT_COLUMNS`: the fields of its
    :class:`pipeline.documents.FileResult` (rows as JSON bytes, so text that is not valid UTF-8
    survives Arrow; ``content_hashes`` as JSON), ``failed``, and ``seconds`` (JSON) and
    ``n_files`` on the batch's first row only.
    """

    def __init__(self, config: Config):
        from .workers import warm_models

        self.config = config
        warm_models(config)

    def __call__(self, batch: pd.DataFrame) -> pd.DataFrame:
        from .runner import process_files

        result = process_files(batch[["source_path", "abs_path"]].reset_index(drop=True), self.config)
        rows = []
        for k, file in enumerate(result.files):
            rows.append({"source_path": file.source_path, "documents": file.documents, "sections": file.sections,
                         "n_documents": file.n_documents, "n_sections": file.n_sections,
                         "content_hashes": json.dumps(file.content_hashes),
                         "failed": file.source_path in result.failed_files,
                         "seconds": json.dumps(result.seconds if k == 0 else {}),
                         "n_files": result.n_files if k == 0 else 0})
        return pd.DataFrame(rows, columns=list(RESULT_COLUMNS))


def batch_result(frame: pd.DataFrame) -> Any:
    """A :class:`pipeline.documents.BatchResult` from rows of :class:`DocumentStages`."""
    from .documents import FileResult
    from .runner import DOCUMENT_STAGE_NAMES, BatchResult

    seconds = dict.fromkeys(DOCUMENT_STAGE_NAMES, 0.0)
    files, failed = [], set()
    for row in frame.itertuples(index=False):
        files.append(FileResult(row.source_path, row.documents, row.sections, int(row.n_documents),
                                int(row.n_sections), tuple(json.loads(row.content_hashes))))
        if row.failed:
            failed.add(row.source_path)
        for name, secs in json.loads(row.seconds).items():
            seconds[name] += secs
    return BatchResult(files=files, failed_files=failed, seconds=seconds, n_files=int(frame["n_files"].sum()))


class EmbedActor:
    """Ray Data callable class: the configured embedder, loaded once per actor
    (:func:`pipeline.embed.make_embedder`; on a GPU actor sentence-transformers picks the GPU).

    A call takes a block of ``i`` (position) and ``text`` and returns ``i`` and ``vector``
    (float32, unit norm, the embedder's dimension).
    """

    def __init__(self, config: Config):
        self.embedder = make_embedder(config)

    def __call__(self, batch: pd.DataFrame) -> pd.DataFrame:
        vectors = np.asarray(self.embedder.encode(batch["text"].tolist()), dtype=np.float32)
        return pd.DataFrame({"i": batch["i"].to_numpy(), "vector": list(vectors)})


class RayEmbedder:
    """An :class:`pipeline.embed.Embedder` whose :meth:`encode` runs on Ray actors
    (:class:`EmbedActor`): one per GPU, else one per CPU of ``config.run.workers`` (one BLAS
    thread each, as locally: the same vectors). ``model_id``, ``dim`` and the batch size come from
    the embedder built on the driver."""

    def __init__(self, config: Config):
        local = make_embedder(config)
        self.config = config
        self.model_id: str = local.model_id
        self.dim: int = local.dim
        self.max_chars: int | None = getattr(local, "max_chars", None)  # the embedding cache's key, as locally
        self.block = int(getattr(local, "batch_size", 64)) * EMBED_BLOCK_BATCHES

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        """Embed ``texts`` on the actor pool.

        Returns:
            float32 ``(len(texts), dim)``, rows in the order of ``texts``, equal to what the
            embedder gives for the same list in one process.
        """
        if isinstance(texts, str):
            raise TypeError("encode takes a sequence of strings, not a str")
        texts = list(texts)
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        ray = import_ray()
        gpus = int(ray.cluster_resources().get("GPU", 0))
        blocks = [pd.DataFrame({"i": np.arange(a, min(a + self.block, len(texts))), "text": texts[a:a + self.block]})
                  for a in range(0, len(texts), self.block)]
        resources = {"num_gpus": 1} if gpus else {"num_cpus": 1}
        ds = ray.data.from_pandas(blocks).map_batches(
            EmbedActor, fn_constructor_args=(self.config,), batch_size=None, batch_format="pandas",
            compute=ray.data.ActorPoolStrategy(size=max(1, min(gpus or self.config.run.workers, len(blocks)))),
            **resources)
        out = pd.concat(list(ds.iter_batches(batch_format="pandas", batch_size=None)), ignore_index=True)
        out = out.sort_values("i", kind="stable")
        if out["i"].tolist() != list(range(len(texts))):
            raise RuntimeError(f"the embedding actors returned {len(out)} rows for {len(texts)} texts")
        return np.stack([np.asarray(v, dtype=np.float32) for v in out["vector"]])

    def __repr__(self) -> str:
        return f"RayEmbedder(model_id={self.model_id!r})"


class RayEngine:
    """The engine for one run: connects to Ray on enter, shuts down on exit what it started.

    With ``config.run.ray_address`` (or ``RAY_ADDRESS`` in the environment) it joins that
    cluster; otherwise it starts a local instance with ``config.run.workers`` CPUs, no dashboard
    and no worker logs on the driver's stderr (nothing on the network). When Ray is already
    initialized in the process (a notebook, the tests), that instance is used and left running.

    Raises:
        ConfigError: Ray is not installed.
    """

    def __init__(self, config: Config):
        self.config = config
        self._started = False

    def __enter__(self) -> RayEngine:
        ray = import_ray()
        if not ray.is_initialized():
            address = self.config.run.ray_address or os.environ.get("RAY_ADDRESS")
            if address:
                ray.init(address=address, log_to_driver=False, logging_level=RAY_LOG_LEVEL)
            else:
                ray.init(num_cpus=self.config.run.workers, include_dashboard=False, log_to_driver=False,
                         logging_level=RAY_LOG_LEVEL)
            self._started = True
        for name in ("ray", "ray.data"):  # also when the instance was already running
            logging.getLogger(name).setLevel(RAY_LOG_LEVEL)
        context = ray.data.DataContext.get_current()
        context.enable_progress_bars = False  # the runner shows its own
        context.print_on_execution_start = False
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        if self._started:
            import_ray().shutdown()

    def document_results(self, todo: pd.DataFrame, config: Config) -> Generator[Any, None, None]:
        """The per-document stages on ``todo`` (rows of the corpus listing) as Ray Data
        ``map_batches`` over an actor pool, one actor per CPU of the cluster (at most one per
        batch).

        Yields:
            a :class:`pipeline.documents.BatchResult` per batch, in the order Ray finishes them.
        """
        if not len(todo):
            return
        ray = import_ray()
        n_blocks = math.ceil(len(todo) / config.run.batch_size)
        cpus = max(1, int(ray.cluster_resources().get("CPU", 1)))
        items = todo[["source_path", "abs_path"]].to_dict("records")
        ds = ray.data.from_items(items, override_num_blocks=n_blocks).map_batches(
            DocumentStages, fn_constructor_args=(config,), batch_size=config.run.batch_size, batch_format="pandas",
            compute=ray.data.ActorPoolStrategy(size=min(cpus, n_blocks)), num_cpus=1)
        for frame in ds.iter_batches(batch_format="pandas", batch_size=None):
            if len(frame):
                yield batch_result(frame)

    def embedder(self, config: Config) -> RayEmbedder:
        """The embedder dedup uses: a :class:`RayEmbedder`."""
        return RayEmbedder(config)
