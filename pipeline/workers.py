"""Local parallelism: the per-document stages in a pool of worker processes.

The runner (:mod:`pipeline.runner`) cuts the files to process into batches; with
``run.workers > 1`` each batch goes to a :class:`concurrent.futures.ProcessPoolExecutor` worker,
which runs :func:`pipeline.documents.process_files` on it (the same function, with the same per-row
error isolation, that runs in-process with one worker) and sends back plain rows. Results come
back in batch order (``Executor.map``), so the run assembles them exactly as an in-process run
does: the tables are the same, byte for byte, whatever the number of workers.

* **Start method**: ``spawn`` (a fresh interpreter per worker). ``fork`` after torch, faiss or
  BLAS thread pools are loaded can deadlock a child; ``spawn`` is safe on every platform.
* **Models**: each worker loads the jieba dictionary (with the ML user dictionary), the two spaCy
  pipelines, jieba's IDF table and the OpenCC converters once, when it starts
  (:func:`warm_models`, the pool initializer), never per batch.
* **Logging**: a worker's log records travel through a queue to the run's process and are
  handled there by the run's handlers (text or JSON lines on stderr, as configured by the CLI).
* **Embedder**: these workers never load it. Dedup embeds once they are done, on as many
  processes of its own (:class:`pipeline.embed.PooledEmbedder`), and clusters in the run's
  process (dedup is global).
* **Scripts**: as with any ``spawn`` pool, a script that calls :func:`pipeline.runner.run` with
  more than one worker must do so under ``if __name__ == "__main__":`` (each worker imports the
  script's main module); ``python -m pipeline`` and the ``paper-pipeline`` command are.

When the pool pays off: starting two workers on a 2-core machine (interpreter, imports, models,
both at once) costs about 8 s of wall time, and a file of the generated benchmark corpus about
0.13 s through the stages (1k articles: 134 s in-process, 96 s on 2 workers; 100 articles:
12 s in-process, 20 s on 2 workers). So the runner uses at most one worker per
:data:`MIN_FILES_PER_WORKER` files to process, and no pool at all below two such workers (an
incremental run that processes a few changed files stays in-process).
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
    """``(name, load)`` of every model the per-document stages use, in load order: the Chinese
    spaCy pipeline with its jieba tokenizer and user dictionary, the English one, the OpenCC
    converters of the target script and of zh-Hans / zh-Hant, jieba's default dictionary and IDF
    table (keywords) and YAKE. Each loader is cached per process (:mod:`pipeline.nlp`,
    :mod:`pipeline.normalize`): a second call costs nothing, and the stages find them loaded."""
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
    """Load every model of :func:`model_loaders` once in this process (a pool worker).

    Then every object alive (the models: millions of dictionary entries) is moved out of the
    cyclic garbage collector's reach (``gc.freeze``): they live as long as the process, and
    scanning them again at every full collection was about 3% of the stages' CPU time."""
    for _, load in model_loaders(config):
        load()
    gc.collect()  # (the garbage of the loading first: frozen objects are never collected)
    gc.freeze()


class _Relay(logging.Handler):
    """Hands a record that came from a worker to the logger of the same name in this process
    (so the run's handlers, levels and formats apply)."""

    def emit(self, record: logging.LogRecord) -> None:
        logging.getLogger(record.name).handle(record)


#: ``prctl`` option: the signal a process gets when its parent dies (Linux, ``prctl(2)``).
PR_SET_PDEATHSIG = 1


def _die_with_parent() -> None:
    """Have the kernel stop this worker (SIGTERM) when the run's process dies, however it dies:
    a run killed by a scheduler's timeout (SIGTERM, SIGKILL) or out of memory would otherwise leave
    its workers running, each holding its models (~700 MB), forever. Linux ``prctl(2)``
    ``PR_SET_PDEATHSIG``; elsewhere nothing."""
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
    """Have this worker ignore SIGINT. Ctrl-C at a terminal reaches every process of the run's
    process group: a worker that died of it in the middle of writing a result would leave half a
    message behind (see :func:`stop_pool`) and print its own traceback. The run's process
    handles it and stops its workers."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)


#: Seconds a pool process has to end after SIGTERM before :func:`stop_pool` sends SIGKILL
#: (a worker holds no state worth a longer wait: the run's process writes every output).
STOP_GRACE_SECONDS = 5.0


def stop_pool(pool: ProcessPoolExecutor) -> None:
    """Kill the processes of ``pool`` now (SIGTERM, then SIGKILL after :data:`STOP_GRACE_SECONDS`)
    and wait until the executor's own threads have ended; its futures not done fail with
    ``BrokenProcessPool`` or are cancelled. For work that is no longer wanted: a stopped or
    failed run. Idempotent.

    ``ProcessPoolExecutor`` is not made to have its processes killed: a process killed while it
    writes a result leaves half a message in the result pipe, and the executor's manager thread
    then waits in ``recv`` for the rest forever, so ``shutdown(wait=True)`` never returns, and
    neither does the interpreter's exit, which joins that thread (seen here in 1 of 8 stops in
    the middle of a piece, and in a CI run). This process holds the pipe's writing end too, so
    no end-of-file comes. So once the processes are dead this closes its own ends: the result
    pipe's writing end (the manager sees end-of-file, marks the pool broken, fails the futures
    with ``BrokenProcessPool`` and cleans up) and, if the manager has not ended within
    :data:`STOP_GRACE_SECONDS`, the call pipe's reading end (so that the queue's feeder thread,
    writing work no process reads, gets ``EPIPE``; CPython closes it itself once it finds the
    pool broken since cpython gh-94777, so not at once: two threads must not close it). Uses the
    executor's private ``_processes``, ``_result_queue``, ``_call_queue`` and
    ``_executor_manager_thread``, taken before ``shutdown`` drops them (CPython 3.10-3.13); a
    missing one is skipped.
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
    """Pool initializer: stop with the run's process (:func:`_die_with_parent`), leave Ctrl-C to
    it (:func:`_ignore_interrupts`), give freed
    memory back as the run's process does (:func:`pipeline.memory.tune_allocators`), send this
    worker's log records to it at the run's levels (``level`` for the root logger,
    ``pipeline_level`` for ``pipeline``'s own: the CLI's ``-vv`` sets only that one to DEBUG),
    load the models, collect garbage less often (:data:`pipeline.memory.GC_THRESHOLD`)."""
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
    # a worker allocates mostly short-lived, acyclic objects (strings, tuples, lists of a
    # section): collect the youngest generation every GC_THRESHOLD allocations, not
    # every 700 (Python's default), which cuts the collector's time by more than half
    gc.set_threshold(GC_THRESHOLD, *gc.get_threshold()[1:])


#: Batches submitted ahead per worker process (:func:`map_in_pool`): enough to keep every worker
#: busy while the runner stores a result, few enough that waiting results stay a small window.
IN_FLIGHT_PER_WORKER = 2


def map_in_pool(fn: Callable[[T, Config], R], items: Iterator[T], config: Config, workers: int) -> Iterator[R]:
    """``fn(item, config)`` for every item, in ``workers`` spawned processes, results in order.

    Args:
        fn: a module-level (picklable) function.
        items: the work, e.g. batches of the corpus listing (pickled to the workers).
        config: passed to the initializer (:func:`warm_models`) and to every call.
        workers: processes to start (>= 1).

    Yields:
        each result as soon as it and every earlier one are done (``Executor.map`` order).
        Left early (an error, Ctrl-C, or the consumer closes it), the pool is stopped at once
        (:func:`stop_pool`), not after its running batches: a worker that Ctrl-C reached before
        it could ignore it (during its start-up) dies, and the pool's manager thread may then
        die too (cpython gh-107219, fixed in 3.12), leaving the other worker to be waited for
        forever at exit.

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
            # a bounded window of submitted work: a result is dropped once yielded, and at most
            # IN_FLIGHT_PER_WORKER batches per worker wait, so memory does not grow with the corpus
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
