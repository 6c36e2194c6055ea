"""A second process that scores candidate pairs beside the run's process during clustering.

Three clustering steps are bulk pair scoring whose values do not depend on batching
(:meth:`pipeline.dedup.PairScorer.scores`): the candidate pairs, the merge loop's averages and
the join scores. :class:`ScoreHelper` scores the first half of each call's pairs in a second
process while this one scores the other half: the same floats, using two cores.

* **Start method**: ``spawn`` (:data:`pipeline.executor.START_METHOD`): faiss's OpenMP and BLAS
  threads are up by then, which a ``fork`` may deadlock.
* **What it gets**: the scorer, pickled once (memory-mapped vectors as their paths,
  :func:`pipeline.vectors.portable`), started before the neighbour searches.
* **Failures**: a helper that cannot start, dies or errs is dropped with a warning and its half
  is scored here: the same results.
"""

from __future__ import annotations

import logging
import multiprocessing
import signal
import traceback
from multiprocessing.connection import Connection
from typing import Any

import numpy as np

from .executor import START_METHOD

log = logging.getLogger(__name__)

#: Pairs below which a call is scored here alone (sending costs more than it saves).
MIN_SHARED_PAIRS = 4096
#: Seconds to wait for a helper to stop when closed before it is killed.
STOP_TIMEOUT = 10.0


def _serve(conn: Connection, scorer: Any) -> None:
    """The helper's loop: ``(i, j, exact_from)`` in, ``("ok", scores)`` or ``("error", text)``
    out, until ``None`` or the other end closes. A Ctrl-C reaches the whole process group: the
    helper ignores it, and the run's process, which decides how to stop, closes it."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    while True:
        try:
            request = conn.recv()
        except (EOFError, OSError):
            return
        if request is None:
            return
        i, j, exact_from = request
        try:
            reply = ("ok", scorer.scores(i, j, exact_from=exact_from))
        except Exception:  # reported to the run's process, which scores the pairs itself
            reply = ("error", traceback.format_exc())
        try:
            conn.send(reply)
        except (BrokenPipeError, OSError):
            return


class ScoreHelper:
    """:meth:`pipeline.dedup.PairScorer.scores` of one scorer, shared with a second process.

    Args:
        scorer: the :class:`pipeline.dedup.PairScorer` (picklable: its memory-mapped vectors
            go as their paths, :func:`pipeline.vectors.portable`).

    The process is started at once (:data:`pipeline.executor.START_METHOD`); if that fails, a
    warning is logged and every call is scored in this process. Close it after use
    (:meth:`close`, or a ``with`` block).
    """

    def __init__(self, scorer: Any):
        self.scorer = scorer
        self._conn: Connection | None = None
        self._process: multiprocessing.process.BaseProcess | None = None
        try:
            ctx = multiprocessing.get_context(START_METHOD)
            here, there = ctx.Pipe()
            process = ctx.Process(target=_serve, args=(there, scorer), name="score-helper", daemon=True)
            try:
                process.start()
            finally:
                there.close()
        except Exception as exc:  # no second process (a pickling error, no resources): one core
            log.warning("dedup: no helper process for pair scores, scoring on one core (%s)", exc)
            return
        self._conn, self._process = here, process

    @property
    def alive(self) -> bool:
        """Whether calls are shared with the helper (it started and has not failed)."""
        return self._conn is not None

    def scores(self, i: np.ndarray, j: np.ndarray, exact_from: float | None = None) -> np.ndarray:
        """``scorer.scores(i, j, exact_from=exact_from)``, the same float64 ``(len(i),)``, the
        first half of the pairs scored by the helper while this process scores the rest (all
        of them here below :data:`MIN_SHARED_PAIRS` pairs or without a helper)."""
        i, j = np.asarray(i, dtype=np.int64), np.asarray(j, dtype=np.int64)
        if self._conn is None or len(i) < MIN_SHARED_PAIRS:
            return self.scorer.scores(i, j, exact_from=exact_from)
        half = len(i) // 2
        try:
            self._conn.send((i[:half], j[:half], exact_from))
        except (BrokenPipeError, EOFError, OSError) as exc:
            self._drop(f"it could not be sent pairs ({exc})")
            return self.scorer.scores(i, j, exact_from=exact_from)
        try:
            rest = self.scorer.scores(i[half:], j[half:], exact_from=exact_from)
        except BaseException:  # the helper's reply would be read as the next call's: it goes
            self.close()
            raise
        try:
            status, value = self._conn.recv()
        except (EOFError, OSError) as exc:
            self._drop(f"it stopped ({str(exc) or type(exc).__name__})")
            status, value = "error", None
        if status != "ok":
            if value is not None:
                self._drop(f"it failed:\n{value}")
            value = self.scorer.scores(i[:half], j[:half], exact_from=exact_from)
        return np.concatenate([value, rest])

    def _drop(self, why: str) -> None:
        log.warning("dedup: the pair-score helper is dropped, scoring on one core: %s", why)
        self.close()

    def close(self) -> None:
        """Stop the helper (idempotent): asked to stop, then killed after
        :data:`STOP_TIMEOUT` seconds."""
        conn, process = self._conn, self._process
        self._conn = self._process = None
        if conn is not None:
            try:
                conn.send(None)
            except (BrokenPipeError, OSError):
                pass
            conn.close()
        if process is not None:
            process.join(STOP_TIMEOUT)
            if process.is_alive():
                process.kill()
                process.join()
            process.close()

    def __enter__(self) -> ScoreHelper:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
