"""The Ray engine (``--engine ray``): the per-document stages and the embedder on Ray actors
(:class:`RayActors`), on a cluster or a local instance started for the run.

Ray is an optional extra imported only inside functions; without it the engine raises
:class:`pipeline.errors.ConfigError`. Results come back in order to the driver, so both engines
write the same tables; the embedding cache stays on the driver. On a cluster every node needs the
same project version and the corpus at the same absolute path.
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
#: Level of Ray's own logger on the driver: its INFO and WARNING lines would clutter the run's stderr.
RAY_LOG_LEVEL = logging.ERROR


def import_ray() -> ModuleType:
    """``ray``; ConfigError (:data:`RAY_MISSING`) when not installed."""
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
    """``workers`` Ray actors built with ``resources`` (``ray.remote`` options; default one CPU) on
    first need; work dealt in turn, run in order per actor. ConfigError without Ray."""

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
    """Connects to Ray on enter, shuts down on exit what it started: ``config.run.ray_address`` (or
    ``RAY_ADDRESS``), else a local instance of ``config.run.workers`` CPUs with no dashboard; an
    already initialized Ray is used and left running. ConfigError without Ray."""

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
        """Dedup's embedder on :class:`RayActors`: one per GPU, else one per CPU of
        ``config.run.workers`` (one BLAS thread each: the same vectors)."""
        gpus = int(import_ray().cluster_resources().get("GPU", 0))
        workers = gpus or config.run.workers
        actors = RayActors(workers, warm_embedder, config, resources={"num_gpus": 1} if gpus else {"num_cpus": 1})
        return PooledEmbedder(config, workers, min_texts=0, executor=actors)
