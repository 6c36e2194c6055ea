"""One executor for the work a run spreads over processes: the per-document stages, dedup's
embedding and its bulk pair scoring.

An executor runs ``fn(item, context)``, ``context = setup(*args)`` built once per worker process;
``fn`` and ``setup`` are module-level functions (pickled by name).

* :class:`InProcess`: in the run's own process; context built on first use.
* :class:`ProcessPool`: ``workers`` ``spawn`` processes (``fork`` after thread pools are up can
  deadlock a child; scripts need ``if __name__ == "__main__":``). Workers die with the run's
  process, ignore Ctrl-C, relay their logs, and freeze their context (:func:`become_worker`).
* :class:`pipeline.engine_ray.RayActors`: one Ray actor per worker (``--engine ray``).

Every executor has :meth:`Executor.submit`, :meth:`Executor.map` (ordered, bounded window),
:meth:`Executor.close` (waits), :meth:`Executor.terminate` (stops now), and is a context manager
(closed at the block's end, terminated when left by an exception).
"""

from __future__ import annotations

import collections
import ctypes
import gc
import itertools
import logging
import logging.handlers
import multiprocessing
import os
import signal
import sys
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import Future, ProcessPoolExecutor
from typing import Any

from .memory import GC_THRESHOLD

#: Start method of the worker processes (see the module docstring for why not ``fork``).
START_METHOD = "spawn"
#: Items submitted ahead per worker by :meth:`Executor.map`: keeps workers busy, the window small.
IN_FLIGHT_PER_WORKER = 2
#: Seconds between SIGTERM and SIGKILL in :func:`stop_pool` (workers hold no state worth waiting for).
STOP_GRACE_SECONDS = 5.0
#: ``prctl`` option: the signal a process gets when its parent dies (Linux, ``prctl(2)``).
PR_SET_PDEATHSIG = 1


class Executor:
    """Runs ``fn(item, context)`` somewhere (module docstring); ``workers``: processes or actors."""

    workers: int = 1

    def submit(self, fn: Callable[[Any, Any], Any], item: Any) -> Future:
        """Start ``fn(item, context)``; its future. Work runs in the order submitted per worker."""
        raise NotImplementedError

    def start(self, wait: bool = True) -> None:
        """Start every worker now (each builds its context); with ``wait``, until all did."""
        futures = [self.submit(_nothing, None) for _ in range(self.workers)]
        for future in futures if wait else ():
            future.result()

    def map(self, fn: Callable[[Any, Any], Any], items: Iterable[Any]) -> Iterator[Any]:
        """``fn(item, context)`` per item, results in order, at most :data:`IN_FLIGHT_PER_WORKER`
        per worker ahead. Left early, the executor is terminated.

        Raises concurrent.futures.process.BrokenProcessPool: a worker died; whatever ``fn`` raised.
        """
        window: collections.deque = collections.deque()
        items = iter(items)
        try:
            for item in itertools.islice(items, IN_FLIGHT_PER_WORKER * self.workers):
                window.append(self.submit(fn, item))
            while window:
                result = window.popleft().result()
                for item in itertools.islice(items, 1):
                    window.append(self.submit(fn, item))
                yield result
                del result
        finally:
            if window:
                self.terminate()

    def close(self) -> None:
        """Stop the workers after their work under way (idempotent); queued work is cancelled."""

    def terminate(self) -> None:
        """Stop the workers now (idempotent); waiting futures fail."""
        self.close()

    def __enter__(self) -> Executor:
        return self

    def __exit__(self, exc_type: type[BaseException] | None, *rest: object) -> None:
        if exc_type is None:
            self.close()
        else:
            self.terminate()


def _nothing(item: Any, context: Any) -> None:
    """A task that only makes its worker start (:meth:`Executor.start`)."""


def given(value: Any) -> Any:
    """A ``setup`` whose context is its argument (pickled once per worker)."""
    return value


class InProcess(Executor):
    """In the run's own process: ``submit`` runs before returning; ``map`` runs lazily."""

    def __init__(self, setup: Callable[..., Any], *args: Any):
        self.workers = 1
        self._setup, self._args = setup, args
        self._context: Any = None
        self._built = False

    @property
    def context(self) -> Any:
        """``setup(*args)``, built on first use."""
        if not self._built:
            self._context, self._built = self._setup(*self._args), True
        return self._context

    def submit(self, fn: Callable[[Any, Any], Any], item: Any) -> Future:
        future: Future = Future()
        future.set_result(fn(item, self.context))  # an error is raised here
        return future

    def map(self, fn: Callable[[Any, Any], Any], items: Iterable[Any]) -> Iterator[Any]:
        return (fn(item, self.context) for item in items)

    def close(self) -> None:
        """Let go of the context; a later call builds it again."""
        self._context, self._built = None, False


class ProcessPool(Executor):
    """``workers`` spawned processes (a ``ProcessPoolExecutor``), started on first need. Use from one
    thread: the processes die with the thread that started them. ValueError for ``workers`` < 1."""

    def __init__(self, workers: int, setup: Callable[..., Any], *args: Any):
        if workers < 1:
            raise ValueError(f"workers = {workers!r}; must be a positive integer")
        self.workers = workers
        self._setup, self._args = setup, args
        self._pool: ProcessPoolExecutor | None = None
        self._listener: logging.handlers.QueueListener | None = None

    def _started(self) -> ProcessPoolExecutor:
        if self._pool is None:
            ctx = multiprocessing.get_context(START_METHOD)
            queue = ctx.Queue()
            self._listener = logging.handlers.QueueListener(queue, _Relay())
            self._listener.start()
            levels = (logging.getLogger().getEffectiveLevel(), logging.getLogger("pipeline").level)
            self._pool = ProcessPoolExecutor(self.workers, mp_context=ctx, initializer=_init_process,
                                             initargs=(self._setup, self._args, queue, *levels))
            for _ in range(self.workers):  # every process starts now (else one per submit while none is idle)
                self._pool.submit(_call, _nothing, None)
        return self._pool

    @property
    def processes(self) -> list[multiprocessing.process.BaseProcess]:
        """The live pool's processes (none before the first :meth:`submit`)."""
        return list((getattr(self._pool, "_processes", None) or {}).values())

    def submit(self, fn: Callable[[Any, Any], Any], item: Any) -> Future:
        return self._started().submit(_call, fn, item)

    def close(self) -> None:
        pool, self._pool = self._pool, None
        if pool is not None:
            pool.shutdown(wait=True, cancel_futures=True)
        self._stop_logs()

    def terminate(self) -> None:
        pool, self._pool = self._pool, None
        if pool is not None:
            stop_pool(pool)
        self._stop_logs()

    def _stop_logs(self) -> None:
        listener, self._listener = self._listener, None
        if listener is not None:
            listener.stop()
            listener.queue.close()
            listener.queue.join_thread()


_CONTEXT: Any = None  # in a worker: its setup(*args)


def become_worker(setup: Callable[..., Any], args: tuple) -> Any:
    """``setup(*args)`` in a worker, then ``gc.freeze`` and :data:`pipeline.memory.GC_THRESHOLD`
    (a worker makes mostly short-lived, acyclic objects)."""
    context = setup(*args)
    gc.collect()  # frozen objects are never collected
    gc.freeze()
    gc.set_threshold(GC_THRESHOLD, *gc.get_threshold()[1:])
    return context


def _init_process(setup: Callable[..., Any], args: tuple, log_queue: Any, level: int,
                  pipeline_level: int = logging.NOTSET) -> None:
    """Pool initializer: :func:`_die_with_parent`, SIGINT ignored, logs relayed at ``level`` /
    ``pipeline_level``, then :func:`become_worker`."""
    global _CONTEXT
    _die_with_parent()
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    root = logging.getLogger()
    for handler in list(root.handlers):
        root.removeHandler(handler)
    root.addHandler(logging.handlers.QueueHandler(log_queue))
    root.setLevel(level)
    logging.getLogger("pipeline").setLevel(pipeline_level)
    _CONTEXT = become_worker(setup, args)


def _call(fn: Callable[[Any, Any], Any], item: Any) -> Any:
    return fn(item, _CONTEXT)


def _die_with_parent() -> None:
    """SIGTERM this worker when the run's process dies (Linux ``PR_SET_PDEATHSIG``; else nothing)."""
    if not sys.platform.startswith("linux"):
        return
    try:
        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGTERM, 0, 0, 0)
    except (OSError, AttributeError):  # no libc prctl: the pool still shuts down on a normal exit
        return
    parent = multiprocessing.parent_process()
    if parent is not None and os.getppid() != parent.pid:  # it died before the call
        os._exit(1)


class _Relay(logging.Handler):
    """Hands a worker's record to the same-named logger here (the run's handlers apply)."""

    def emit(self, record: logging.LogRecord) -> None:
        logging.getLogger(record.name).handle(record)


def stop_pool(pool: ProcessPoolExecutor) -> None:
    """Kill ``pool``'s processes now (SIGTERM, SIGKILL after :data:`STOP_GRACE_SECONDS`) and wait
    for its threads; pending futures fail or are cancelled. Idempotent.

    A process killed mid-result leaves the manager thread waiting forever, so the result pipe's
    writer (and, if needed, the call pipe's reader) is closed. Uses CPython 3.10-3.13 private
    attributes of the executor; missing ones are skipped.
    """
    processes = list((getattr(pool, "_processes", None) or {}).values())
    # shutdown() lets go of these: take them first
    result_writer = getattr(getattr(pool, "_result_queue", None), "_writer", None)
    call_reader = getattr(getattr(pool, "_call_queue", None), "_reader", None)
    manager = getattr(pool, "_executor_manager_thread", None)
    for process in processes:
        process.terminate()
    pool.shutdown(wait=False, cancel_futures=True)
    for process in processes:
        process.join(STOP_GRACE_SECONDS)
        if process.is_alive():
            process.kill()
            process.join()
    if result_writer is not None:
        result_writer.close()
    if manager is not None:
        manager.join(STOP_GRACE_SECONDS)
        if manager.is_alive() and call_reader is not None:  # only then: the manager may close it too
            call_reader.close()
        manager.join()
