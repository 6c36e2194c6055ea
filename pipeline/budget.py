"""A time budget for one unit of work: :func:`time_limit` raises :class:`Timeout` in the
middle of the work once the budget is spent.

The limit is an interval timer (``signal.setitimer(ITIMER_REAL)``) whose ``SIGALRM`` handler
raises :class:`Timeout`. Python runs signal handlers in the main thread between bytecodes, so the
work is interrupted at the next Python-level step: a single long call into C (one regular
expression over megabytes, a parse in libxml2) ends first. The limit applies only in a process's
main thread (the run's process, a pool worker, a Ray actor) and where ``setitimer`` exists
(POSIX); elsewhere :func:`time_limit` does nothing.

In a pool worker (:func:`enable_cpu_backstop`), a call into C that runs on is stopped by the
kernel: :func:`time_limit` also sets the process's CPU-time limit (``RLIMIT_CPU``, setrlimit(2))
:data:`CPU_BACKSTOP_FACTOR` times the budget ahead, and ``SIGXCPU`` ends the process there; the
pool reads a dead worker as such (:func:`pipeline.runner._surviving`), and the file gets a
``WorkerDied`` row.
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

#: CPU seconds a worker may spend past the start of a budget, per second of budget, before the
#: kernel ends it: the wall-time budget holds whatever Python runs; this only stops C code.
CPU_BACKSTOP_FACTOR = 2.0
_cpu_backstop = False


def enable_cpu_backstop() -> None:
    """Make every later :func:`time_limit` of this process also a CPU-time limit that ends the
    process (for pool workers only: the run's own process must never be ended so)."""
    global _cpu_backstop
    _cpu_backstop = resource is not None


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
    """Set the soft ``RLIMIT_CPU`` :data:`CPU_BACKSTOP_FACTOR` times ``seconds`` past the CPU
    time used so far (whole seconds, at most the hard limit); returns the limits to restore."""
    limits = resource.getrlimit(resource.RLIMIT_CPU)
    usage = resource.getrusage(resource.RUSAGE_SELF)
    soft = math.ceil(usage.ru_utime + usage.ru_stime + CPU_BACKSTOP_FACTOR * seconds)
    if limits[1] != resource.RLIM_INFINITY:
        soft = min(soft, limits[1])
    resource.setrlimit(resource.RLIMIT_CPU, (soft, limits[1]))
    return limits
