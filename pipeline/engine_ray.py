"""The Ray engine (``--engine ray``): the per-document stages and the embedder on Ray actors
(:class:`RayActors`, the Ray backend of :mod:`pipeline.executor`), on a Ray cluster or on a local
Ray instance started for the run.

Ray is an optional extra (``pip install 'paper-pipeline[ray]'``), imported only inside this module's
functions; asking for the engine without it raises :class:`pipeline.errors.ConfigError` (exit 2 from
the CLI).

The driver is the run's process and does what the local engine does with the results, which come
back in order, so both engines write the same tables; the embedding cache stays on the driver. The
stages run on one actor per CPU (at most one per batch), the embedder on one actor per GPU, else
one per CPU of ``run.workers``. On a cluster every node needs the same version of the project
installed and the corpus at the same absolute path.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable
from concurrent.futures import Future
from types import ModuleType, TracebackType
from typing import Any

from .config import Config
from .embed import PooledEmbedder, warm_embedder
from .errors import ConfigError
from .executor import Executor, become_worker

#: What a user without Ray is told (the CLI exits 2 with it).
RAY_MISSING = ("engine 'ray' needs Ray, which is not installed: pip install 'paper-pipeline[ray]' "
               "(or 'ray>=2.40'), or use the local engine (--engine local --workers N)")
#: Level of Ray's own logger on the driver (``ray``): its INFO and WARNING lines would clutter
#: stderr, which the CLI keeps for the run's log (Ray's C++ core still writes there).
RAY_LOG_LEVEL = logging.ERROR


def import_ray() -> ModuleType:
    """``ray``.

    Raises:
        ConfigError: Ray is not installed (:data:`RAY_MISSING`).
    """
    try:
        import ray
    except ImportError as exc:
        raise ConfigError(RAY_MISSING) from exc
    return ray


class _Actor:
    """A Ray actor's state: its context (:func:`pipeline.executor.become_worker`)."""

    def __init__(self, setup: Callable[..., Any], args: tuple):
        self.context = become_worker(setup, args)

    def run(self, fn: Callable[[Any, Any], Any], item: Any) -> Any:
        return fn(item, self.context)


class RayActors(Executor):
    """An :class:`pipeline.executor.Executor` of ``workers`` Ray actors, each built with
    ``resources`` (``ray.remote`` options; default one CPU) on first need; work is dealt to them in
    turn, and each runs its work in order. :meth:`close` and :meth:`terminate` kill the actors.

    Raises:
        ConfigError: (on first use) Ray is not installed.
    """

    def __init__(self, workers: int, setup: Callable[..., Any], *args: Any, resources: dict | None = None):
        self.workers = workers
        self._setup, self._args = setup, args
        self._resources = resources or {"num_cpus": 1}
        self._actors: list[Any] = []
        self._turn = 0

    def submit(self, fn: Callable[[Any, Any], Any], item: Any) -> Future:
        if not self._actors:
            actor = import_ray().remote(**self._resources)(_Actor)
            self._actors = [actor.remote(self._setup, self._args) for _ in range(self.workers)]
        self._turn += 1
        return self._actors[self._turn % self.workers].run.remote(fn, item).future()

    def close(self) -> None:
        actors, self._actors = self._actors, []
        for actor in actors:
            import_ray().kill(actor)


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
        logging.getLogger("ray").setLevel(RAY_LOG_LEVEL)  # also when the instance was already running
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        if self._started:
            import_ray().shutdown()

    def executor(self, limit: int, setup: Callable[..., Any], *args: Any) -> RayActors:
        """:class:`RayActors` for the per-document stages: one per CPU of the cluster, at most ``limit``."""
        cpus = max(1, int(import_ray().cluster_resources().get("CPU", 1)))
        return RayActors(max(1, min(cpus, limit)), setup, *args)

    def embedder(self, config: Config) -> PooledEmbedder:
        """The embedder dedup uses: every call on :class:`RayActors`, one per GPU (``num_gpus=1``:
        sentence-transformers picks it), else one per CPU of ``config.run.workers`` (one BLAS thread
        each, as locally: the same vectors)."""
        gpus = int(import_ray().cluster_resources().get("GPU", 0))
        workers = gpus or config.run.workers
        actors = RayActors(workers, warm_embedder, config, resources={"num_gpus": 1} if gpus else {"num_cpus": 1})
        return PooledEmbedder(config, workers, min_texts=0, executor=actors)
