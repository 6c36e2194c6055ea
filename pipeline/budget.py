"""A time budget for one unit of work: :func:`time_limit` raises :class:`Timeout` in the
middle of the work once the budget is spent.

The limit is an interval timer (``signal.setitimer(ITIMER_REAL)``) whose ``SIGALRM`` handler
raises :class:`Timeout`. Python runs signal handlers in the main thread between bytecodes, so the
work is interrupted at the next Python-level step: a single long call into C (one regular
expression over megabytes) ends first. The limit applies only in a process's main thread (the
run's process, a pool worker, a Ray actor) and where ``setitimer`` exists (POSIX); elsewhere
:func:`time_limit` does nothing.
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager


class Timeout(BaseException):
    """The budget of :func:`time_limit` is spent. A ``BaseException``, like ``KeyboardInterrupt``,
    so that the ``except Exception`` of code that isolates a bad row does not take it for an
    error of that row: it leaves the whole unit of work."""

    def __init__(self, seconds: float):
        super().__init__(f"took more than {seconds:g} s")
        self.seconds = seconds


@contextmanager
def time_limit(seconds: float | None) -> Iterator[None]:
    """Raise :class:`Timeout` inside the ``with`` block once ``seconds`` (wall time) have passed.

    ``None`` or ``0``: no limit. Not nestable (one timer per process); the previous ``SIGALRM``
    handler is restored on exit.
    """
    if not seconds or not hasattr(signal, "setitimer") or threading.current_thread() is not threading.main_thread():
        yield
        return

    def expire(signum: int, frame: object) -> None:
        raise Timeout(seconds)

    previous = signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
