"""Local parallelism: the per-document stages in a pool of worker processes.

With ``run.workers > 1`` each batch of files goes to a
:class:`concurrent.futures.ProcessPoolExecutor` worker running
:func:`pipeline.documents.process_files` and comes back as plain rows in batch order, so the
tables are the same, byte for byte, whatever the number of workers.

* **Start method**: ``spawn``: ``fork`` after torch, faiss or BLAS thread pools are loaded can
  deadlock a child. A script calling :func:`pipeline.runner.run` with workers must do so under
  ``if __name__ == "__main__":``.
* **Models**: loaded once per worker at start (:func:`warm_models`).
* **Logging**: records travel through a queue to the run's process and its handlers.
* **Embedder**: never loaded here (:class:`pipeline.embed.PooledEmbedder`).

Starting workers costs seconds, so the runner uses at most one worker per
:data:`MIN_FILES_PER_WORKER` files and no pool below two (bench/README.md).
"""

from __future__ import annotations

import collections
import ctypes
import gc
import itertools
import logging
import logging.handlers
import math
import multiprocessing
import os
import signal
import sys
from collections.abc import Callable, Iterator
from concurrent.futures import ProcessPoolExecutor
from typing import Any, TypeVar

from .config import Config
from .memory import GC_THRESHOLD, tune_allocators

log = logging.getLogger(__name__)

#: Start method of the worker processes (see the module docstring for why not ``fork``).
START_METHOD = "spawn"
#: At most one worker per this many files to process: with a start-up of ~8 s (two workers on 2
#: cores) and ~0.13 s per file, two workers break even at about 2 * 8 / 0.13 = 120 files.
MIN_FILES_PER_WORKER = 64
#: With a pool, batches are cut so that each worker gets about this many (an even load when
#: documents differ in size), never larger than ``run.batch_size``.
BATCHES_PER_WORKER = 4

T = TypeVar("T")
R = TypeVar("R")


def pool_workers(n_files: int, workers: int) -> int:
    """Workers worth starting for ``n_files`` files with ``workers`` allowed.

    Returns:
        ``min(workers, n_files // MIN_FILES_PER_WORKER)``, at least 1; 1 means in-process.
    """
    return max(1, min(workers, n_files // MIN_FILES_PER_WORKER))


def pool_batch_size(n_files: int, workers: int, batch_size: int) -> int:
    """Documents per batch for a pool of ``workers``: about :data:`BATCHES_PER_WORKER` batches
    per worker, at most ``batch_size`` (the batch split never changes the outputs)."""
    return max(1, min(batch_size, math.ceil(n_files / (workers * BATCHES_PER_WORKER))))


def model_loaders(config: Config) -> list[tuple[str, Callable[[], Any]]]:
    """``(name, load)`` of every model the per-document stages use, in load order; each loader is
    cached per process, so the stages find them loaded."""
    from . import keywords as kw
    from . import nlp, normalize

    def opencc() -> None:
        for script in dict.fromkeys((config.normalize.target_script, "zh-Hans", "zh-Hant")):
            normalize.to_script("机器学习模型與資料", script)

    def keywords() -> None:
        kw.keywords("深度学习模型在图像识别任务上取得了很好的效果。", "zh-Hans", config.extract.n_keywords)
        kw.keywords("Large language models learn in context from a few examples.", "en",
                     config.extract.n_keywords)

    return [("spaCy zh", nlp.zh_nlp), ("spaCy en", nlp.en_nlp), ("OpenCC", opencc),
            ("jieba IDF", kw.idf_table), ("keywords", keywords)]


def warm_models(config: Config) -> None:
    """Load every model of :func:`model_loaders`, then ``gc.freeze`` every live object: the
    models live as long as the process and need no scanning."""
    for _, load in model_loaders(config):
        load()
    gc.collect()  # frozen objects are never collected
    gc.freeze()


class _Relay(logging.Handler):
    """Hands a record that came from a worker to the logger of the same name in this process
    (so the run's handlers, levels and formats apply)."""

    def emit(self, record: logging.LogRecord) -> None:
        logging.getLogger(record.name).handle(record)


#: ``prctl`` option: the signal a process gets when its parent dies (Linux, ``prctl(2)``).
PR_SET_PDEATHSIG = 1


def _die_with_parent() -> None:
    """Have the kernel send this worker SIGTERM when the run's process dies, however it dies
    (Linux ``prctl(2)`` ``PR_SET_PDEATHSIG``; elsewhere nothing)."""
    if not sys.platform.startswith("linux"):
        return
    try:
        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGTERM, 0, 0, 0)
    except (OSError, AttributeError):  # no libc prctl: the pool still shuts down on a normal exit
        return
    parent = multiprocessing.parent_process()
    if parent is not None and os.getppid() != parent.pid:  # it died before the call
        os._exit(1)


def _ignore_interrupts() -> None:
    """Ignore SIGINT in this worker: Ctrl-C reaches the whole process group, and a worker dying
    mid-result would leave half a message (:func:`stop_pool`); the run's process stops it."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)


#: Seconds a pool process has to end after SIGTERM before :func:`stop_pool` sends SIGKILL
#: (a worker holds no state worth a longer wait: the run's process writes every output).
STOP_GRACE_SECONDS = 5.0


def stop_pool(pool: ProcessPoolExecutor) -> None:
    """Kill the processes of ``pool`` now (SIGTERM, then SIGKILL after
    :data:`STOP_GRACE_SECONDS`) and wait for the executor's threads; pending futures fail with
    ``BrokenProcessPool`` or are cancelled. Idempotent.

    A process killed mid-result leaves half a message in the result pipe and the manager thread
    would wait forever, so once the processes are dead this closes the result pipe's writing end
    and, if the manager is still alive after :data:`STOP_GRACE_SECONDS`, the call pipe's reading
    end. Uses the executor's private ``_processes``, ``_result_queue``, ``_call_queue`` and
    ``_executor_manager_thread`` (CPython 3.10-3.13); a missing one is skipped.
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


def _init_worker(config: Config, log_queue: Any, level: int, pipeline_level: int = logging.NOTSET) -> None:
    """Pool initializer: :func:`_die_with_parent`, :func:`_ignore_interrupts`,
    :func:`pipeline.memory.tune_allocators`, log records to the run's process at the run's levels
    (``level`` root, ``pipeline_level`` ``pipeline``), models loaded, garbage collected less often
    (:data:`pipeline.memory.GC_THRESHOLD`)."""
    _die_with_parent()
    _ignore_interrupts()
    tune_allocators()
    root = logging.getLogger()
    for handler in list(root.handlers):
        root.removeHandler(handler)
    root.addHandler(logging.handlers.QueueHandler(log_queue))
    root.setLevel(level)
    logging.getLogger("pipeline").setLevel(pipeline_level)
    warm_models(config)
    # a worker allocates mostly short-lived, acyclic objects: Python's default (700) collects
    # far more often than needed
    gc.set_threshold(GC_THRESHOLD, *gc.get_threshold()[1:])


#: Batches submitted ahead per worker process (:func:`map_in_pool`): enough to keep every worker
#: busy while the runner stores a result, few enough that waiting results stay a small window.
IN_FLIGHT_PER_WORKER = 2


def map_in_pool(fn: Callable[[T, Config], R], items: Iterator[T], config: Config, workers: int) -> Iterator[R]:
    """``fn(item, config)`` for every item, in ``workers`` spawned processes, results in order.

    Args:
        fn: a module-level (picklable) function.
        items: the work (pickled to the workers).
        config: passed to the initializer (:func:`warm_models`) and to every call.
        workers: processes to start (>= 1).

    Yields:
        each result once it and every earlier one are done. Left early (an error, Ctrl-C, the
        consumer closing it), the pool is stopped at once (:func:`stop_pool`).

    Raises:
        concurrent.futures.process.BrokenProcessPool: a worker died (killed, out of memory);
        whatever ``fn`` raised (the stages isolate row errors themselves, so this is a bug).
    """
    ctx = multiprocessing.get_context(START_METHOD)
    log_queue = ctx.Queue()
    listener = logging.handlers.QueueListener(log_queue, _Relay())
    listener.start()
    levels = (logging.getLogger().getEffectiveLevel(), logging.getLogger("pipeline").level)
    try:
        with ProcessPoolExecutor(max_workers=workers, mp_context=ctx, initializer=_init_worker,
                                 initargs=(config, log_queue, *levels)) as pool:
            # a bounded window of submitted work, so memory does not grow with the corpus
            futures: collections.deque = collections.deque()
            items = iter(items)
            try:
                for item in itertools.islice(items, IN_FLIGHT_PER_WORKER * workers):
                    futures.append(pool.submit(fn, item, config))
                while futures:
                    result = futures.popleft().result()
                    for item in itertools.islice(items, 1):
                        futures.append(pool.submit(fn, item, config))
                    yield result
                    del result
            finally:  # stopped early (an error, Ctrl-C, or the consumer left): the work is not wanted
                if futures:
                    stop_pool(pool)
    finally:
        listener.stop()
        log_queue.close()
        log_queue.join_thread()
