"""Progress of a run: one tqdm bar per phase, on a terminal or as JSON log records.

The phases, in run order (:data:`PHASES`): ``models`` (the per-document stages' models, loaded
before the first batch when the stages run in this process), ``documents`` (every corpus file
through ingest ... extract and the assembly; reused and skipped files count when assembled),
``embedding`` (sections embedded), ``clustering`` (dedup's clustering and fusion: no count, the
elapsed time moves) and ``writing`` (rows of the sections, documents and papers tables written).

Modes (:class:`Progress`): ``"off"``; ``"auto"``, tqdm bars on stderr shown only on a terminal
(tqdm's ``disable=None``); ``"bars"``, always shown; ``"log"``, a :class:`LoggedBar` per phase, which writes a log record
``{"event": "progress", "phase", "n", "total", "unit", "elapsed_s", "rate", "eta_s"}`` (and
``note``, what the bar shows after its count, such as the model loading) when the
phase starts, at most every :data:`LOG_INTERVAL_S` seconds while it moves, and when it ends.
The records go to the ``pipeline.progress`` logger's handlers whatever its level (as the run's
summary record does), so ``--log-format json`` shows them without ``-v``.
"""

from __future__ import annotations

import contextlib
import io
import logging
import threading
from collections.abc import Iterator
from typing import Any

from tqdm import tqdm as std_tqdm
from tqdm.auto import tqdm

log = logging.getLogger(__name__)

PROGRESS_MODES = ("off", "auto", "bars", "log")
PHASES = ("models", "documents", "embedding", "clustering", "writing")
#: Seconds between two progress records of a phase in the JSON logs (tqdm's ``mininterval``):
#: a 10-minute phase gives about 120 records, a short one its start and end only.
LOG_INTERVAL_S = 5.0
#: Seconds between two redraws of a bar without a count (``clustering``) on a terminal.
TICK_S = 1.0


class LoggedBar(std_tqdm):
    """A tqdm bar that writes its state as a log record (``extra={"data": ...}``, see the module
    docstring) instead of drawing a line; tqdm decides when (start, every ``mininterval``, close)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("mininterval", LOG_INTERVAL_S)
        super().__init__(*args, file=io.StringIO(), **kwargs)

    def display(self, msg: str | None = None, pos: int | None = None) -> bool:
        d = self.format_dict
        rate = d["rate"] if d["rate"] is not None else (d["n"] / d["elapsed"] if d["elapsed"] else None)
        total = d["total"]
        eta = (total - d["n"]) / rate if total is not None and rate else None
        data = {"event": "progress", "phase": self.desc.strip(), "n": int(d["n"]), "total": total,
                "unit": d["unit"], "elapsed_s": round(d["elapsed"], 3),
                "rate": round(rate, 3) if rate is not None else None,
                "eta_s": round(eta, 1) if eta is not None else None}
        if d.get("postfix"):
            data["note"] = d["postfix"].lstrip(", ")
        log.handle(log.makeRecord(log.name, logging.INFO, __file__, 0, "%s %s/%s %s", (
            data["phase"], data["n"], total if total is not None else "?", data["unit"]), None,
            extra={"data": data}))
        return True


class Progress:
    """Makes the bar of each phase of a run.

    Args:
        mode: one of :data:`PROGRESS_MODES`.

    Raises:
        ValueError: an unknown mode.
    """

    def __init__(self, mode: str) -> None:
        if mode not in PROGRESS_MODES:
            raise ValueError(f"progress mode {mode!r}; one of {PROGRESS_MODES}")
        self.mode = mode

    def bar(self, phase: str, total: int | None, unit: str) -> tqdm:
        """A started bar for ``phase`` (one of :data:`PHASES`) of ``total`` ``unit`` (None: no
        count, no ETA: the bar shows the elapsed time). Close it when the phase ends (or use it
        as a context manager)."""
        desc = f"{phase:<10}"
        if self.mode == "log":
            return LoggedBar(total=total, desc=desc, unit=unit, leave=True)
        disable = {"off": True, "auto": None, "bars": False}[self.mode]
        return tqdm(total=total, desc=desc, unit=unit, leave=True, disable=disable, dynamic_ncols=True,
                    bar_format=None if total is not None else "{desc}: {elapsed} elapsed{postfix}")

    @contextlib.contextmanager
    def ticking(self, phase: str, unit: str = "step") -> Iterator[tqdm]:
        """A bar without a count for ``phase``, redrawn every :data:`TICK_S` (a log record every
        :data:`LOG_INTERVAL_S`) while the block runs, so that its elapsed time moves during a
        long call that reports nothing; closed at the end of the block."""
        bar = self.bar(phase, None, unit)
        stop = threading.Event()

        def tick() -> None:
            interval = LOG_INTERVAL_S if self.mode == "log" else TICK_S
            while not stop.wait(interval):
                bar.refresh()

        ticker = threading.Thread(target=tick, daemon=True) if not bar.disable else None
        if ticker is not None:
            ticker.start()
        try:
            yield bar
        finally:
            stop.set()
            if ticker is not None:
                ticker.join()
            bar.close()


def progress_mode(progress: bool | str | None, quiet: bool) -> str:
    """The :class:`Progress` mode of a run: ``"off"`` when quiet or ``progress`` is False, else
    ``progress`` when it is a mode, ``"bars"`` for True and ``"auto"`` for None.

    Raises:
        ValueError: a string that is not one of :data:`PROGRESS_MODES`.
    """
    if isinstance(progress, str):
        if progress not in PROGRESS_MODES:
            raise ValueError(f"progress {progress!r}; one of {PROGRESS_MODES}, True, False or None")
        return "off" if quiet else progress
    return "off" if quiet or progress is False else ("bars" if progress else "auto")
