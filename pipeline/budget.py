"""A time budget for one unit of work: :func:`time_limit` raises :class:`Timeout` mid-work once
the budget is spent.

An ``ITIMER_REAL`` interval timer's ``SIGALRM`` handler raises it, at the next Python step (one
long C call ends first); only in a main thread and where ``setitimer`` exists (POSIX), else a
no-op. In pool workers (:func:`enable_cpu_backstop`) it also sets ``RLIMIT_CPU``
(setrlimit(2)) :data:`CPU_BACKSTOP_FACTOR` times the budget ahead, so ``SIGXCPU`` ends a runaway C
call; the file then gets a ``WorkerDied`` row.
"""

from __future__ import annotations

import math
import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager

try:
    import resource
except ImportError:  # pragma: no cover - not POSIX
    resource = None  # type: ignore[assignment]

#: CPU seconds past a budget's start per second of budget before the kernel ends a worker (stops C code only).
CPU_BACKSTOP_FACTOR = 2.0
_cpu_backstop = False


def enable_cpu_backstop() -> None:
    """Make later :func:`time_limit` calls also a process-ending CPU limit (pool workers only)."""
    global _cpu_backstop
    _cpu_backstop = resource is not None


class Timeout(BaseException):
    """The budget is spent. A ``BaseException`` so row-isolating ``except Exception`` lets it through."""

    def __init__(self, seconds: float):
        super().__init__(f"took more than {seconds:g} s")
        self.seconds = seconds


@contextmanager
def time_limit(seconds: float | None) -> Iterator[None]:
    """Raise :class:`Timeout` in the block after ``seconds`` of wall time (None or 0: no limit).
    Not nestable; the previous ``SIGALRM`` handler is restored."""
    if not seconds or not hasattr(signal, "setitimer") or threading.current_thread() is not threading.main_thread():
        yield
        return

    def expire(signum: int, frame: object) -> None:
        raise Timeout(seconds)

    previous = signal.signal(signal.SIGALRM, expire)
    limits = _set_cpu_backstop(seconds) if _cpu_backstop else None
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
        if limits is not None:
            resource.setrlimit(resource.RLIMIT_CPU, limits)


def _set_cpu_backstop(seconds: float) -> tuple[int, int]:
    """Set the soft ``RLIMIT_CPU`` :data:`CPU_BACKSTOP_FACTOR` times ``seconds`` past the CPU time
    used (whole seconds, at most the hard limit); returns the limits to restore."""
    limits = resource.getrlimit(resource.RLIMIT_CPU)
    usage = resource.getrusage(resource.RUSAGE_SELF)
    soft = math.ceil(usage.ru_utime + usage.ru_stime + CPU_BACKSTOP_FACTOR * seconds)
    if limits[1] != resource.RLIM_INFINITY:
        soft = min(soft, limits[1])
    resource.setrlimit(resource.RLIMIT_CPU, (soft, limits[1]))
    return limits
