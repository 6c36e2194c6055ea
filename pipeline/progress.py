"""Progress of a run: one tqdm bar per phase, on a terminal or as JSON log records.

Phases in order: ``models``, ``documents``, ``embedding``, ``clustering`` (percent,
:data:`pipeline.dedup.CLUSTERING_STEPS`) and ``writing``. Modes (:class:`Progress`): ``"off"``,
``"auto"`` (bars on a terminal only), ``"bars"``, ``"log"`` (:class:`LoggedBar` records
``{"event": "progress", "phase", "n", "total", "unit", "elapsed_s", "rate", "eta_s"}`` at start,
every :data:`LOG_INTERVAL_S` and at end, whatever the logger's level).
"""

from __future__ import annotations

import io
import logging
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from tqdm import tqdm as std_tqdm
from tqdm.auto import tqdm

log = logging.getLogger(__name__)

PROGRESS_MODES = ("off", "auto", "bars", "log")
#: Seconds between a phase's progress records in JSON logs (tqdm's ``mininterval``).
LOG_INTERVAL_S = 5.0
#: Seconds between redraws of the open bars (elapsed time moves while counts wait).
TICK_S = 1.0


class LoggedBar(std_tqdm):
    """A tqdm bar writing its state as a log record (``extra={"data": ...}``) instead of a line."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("mininterval", LOG_INTERVAL_S)
        super().__init__(*args, file=io.StringIO(), **kwargs)

    def display(self, msg: str | None = None, pos: int | None = None) -> bool:
        d = self.format_dict
        total = d["total"]
        rate = d["rate"] if d["rate"] is not None else (d["n"] / d["elapsed"] if d["elapsed"] else None)
        rate = None if total is None else rate  # (a phase without a count has no rate)
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
    """Makes each phase's bar and redraws open bars from its own thread (every :data:`TICK_S`;
    records every :data:`LOG_INTERVAL_S`), so waiting phases still show time. Close it (or use as
    a context manager). ValueError for a ``mode`` not in :data:`PROGRESS_MODES`."""

    def __init__(self, mode: str) -> None:
        if mode not in PROGRESS_MODES:
            raise ValueError(f"progress mode {mode!r}; one of {PROGRESS_MODES}")
        self.mode = mode
        self._open: list[tqdm] = []
        self._stop = threading.Event()
        self._ticker: threading.Thread | None = None

    def bar(self, phase: str, total: int | None, unit: str) -> tqdm:
        """A started bar for ``phase`` of ``total`` ``unit`` (None: elapsed time only); close it at
        the phase's end."""
        desc = f"{phase:<10}"
        if self.mode == "log":
            bar = LoggedBar(total=total, desc=desc, unit=unit, leave=True)
        else:
            disable = {"off": True, "auto": None, "bars": False}[self.mode]
            bar = tqdm(total=total, desc=desc, unit=unit, leave=True, disable=disable, dynamic_ncols=True,
                       bar_format=None if total is not None else "{desc}: {elapsed} elapsed{postfix}")
        if not bar.disable:
            self._open.append(bar)
            if self._ticker is None:
                self._ticker = threading.Thread(target=self._tick, name="progress", daemon=True)
                self._ticker.start()
        return bar

    @contextmanager
    def steps(self, phase: str, shares: dict[str, int]) -> Iterator[Callable[[str], None]]:
        """A percent bar for ``phase`` over named steps (``shares``: step -> integer share, summing
        to 100, in run order). Yields ``done(step)`` to call as each step ends; the bar is filled
        and closed when the block ends.

        Raises ValueError: shares not summing to 100; ``done`` of an unknown step.
        """
        if sum(shares.values()) != 100:
            raise ValueError(f"the shares of {phase}'s steps sum to {sum(shares.values())}, not 100")
        names = list(shares)
        with self.bar(phase, 100, "%") as bar:
            bar.set_postfix_str(names[0])

            def done(step: str) -> None:
                if step not in shares:
                    raise ValueError(f"{phase} has no step {step!r}; its steps: {names}")
                following = names[names.index(step) + 1:]
                bar.set_postfix_str(following[0] if following else "", refresh=False)
                bar.update(shares[step])

            yield done
            bar.set_postfix_str("", refresh=False)
            bar.update(bar.total - bar.n)

    def _tick(self) -> None:
        interval = LOG_INTERVAL_S if self.mode == "log" else TICK_S
        while not self._stop.wait(interval):
            self._open = [bar for bar in self._open if not bar.disable]  # a closed bar is disabled
            for bar in self._open:
                bar.refresh()

    def close(self) -> None:
        """Stop redrawing (the bars themselves are closed by their phases)."""
        self._stop.set()
        if self._ticker is not None:
            self._ticker.join()

    def __enter__(self) -> Progress:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def progress_mode(progress: bool | str | None, quiet: bool) -> str:
    """``"off"`` when quiet or ``progress`` is False, else ``progress`` when a mode, ``"bars"`` for
    True, ``"auto"`` for None. ValueError for an unknown mode string."""
    if isinstance(progress, str):
        if progress not in PROGRESS_MODES:
            raise ValueError(f"progress {progress!r}; one of {PROGRESS_MODES}, True, False or None")
        return "off" if quiet else progress
    return "off" if quiet or progress is False else ("bars" if progress else "auto")
