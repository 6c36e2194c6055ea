"""Progress per phase (pipeline.progress): the JSON-log records a bar writes, and the thread that
keeps a waiting phase's records coming."""

from __future__ import annotations

import logging
import time

import pytest

from pipeline import progress
from pipeline.progress import Progress, progress_mode


def _records(caplog) -> list[dict]:
    return [r.data for r in caplog.records if r.name == "pipeline.progress"]


def test_a_phase_writes_a_record_when_it_starts_while_it_waits_and_when_it_ends(caplog, monkeypatch) -> None:
    monkeypatch.setattr(progress, "LOG_INTERVAL_S", 0.05)
    caplog.set_level(logging.INFO, logger="pipeline.progress")
    with Progress("log") as bars:
        bar = bars.bar("documents", 4, "file")
        time.sleep(0.4)  # no update: the thread still writes records, the elapsed time grows
        waiting = _records(caplog)
        bar.update(4)
        bar.close()
    records = _records(caplog)
    assert len(waiting) >= 4 and {r["n"] for r in waiting} == {0}
    elapsed = [r["elapsed_s"] for r in waiting]
    assert elapsed == sorted(elapsed) and elapsed[-1] >= 0.2
    assert all(r["phase"] == "documents" and r["total"] == 4 and r["unit"] == "file" for r in records)
    assert records[-1]["n"] == 4 and records[-1]["eta_s"] == 0 and records[-1]["rate"] > 0
    count = len(records)
    time.sleep(0.15)
    assert len(_records(caplog)) == count  # closed: no more records


def test_a_phase_without_a_count_has_no_rate_and_a_note_shows(caplog) -> None:
    caplog.set_level(logging.INFO, logger="pipeline.progress")
    with Progress("log") as bars, bars.bar("clustering", None, "step") as bar:
        bar.set_postfix_str("k-means")
    records = _records(caplog)
    assert records[0] == {"event": "progress", "phase": "clustering", "n": 0, "total": None, "unit": "step",
                          "elapsed_s": 0, "rate": None, "eta_s": None}
    assert records[-1]["note"] == "k-means" and records[-1]["rate"] is None


def test_a_phase_of_steps_advances_by_their_shares_and_names_the_next(caplog, monkeypatch) -> None:
    monkeypatch.setattr(progress, "LOG_INTERVAL_S", 0.001)  # a record at every update 10 ms apart
    caplog.set_level(logging.INFO, logger="pipeline.progress")
    with Progress("log") as bars:
        with bars.steps("clustering", {"search": 60, "merge": 30, "fusion": 10}) as done:
            time.sleep(0.01)
            done("search")
            time.sleep(0.01)
            done("merge")  # fusion ends with the block
            time.sleep(0.01)
        with pytest.raises(ValueError, match="no step 'sort'"), bars.steps("clustering", {"a": 100}) as done:
            done("sort")
        with pytest.raises(ValueError, match="sum to 90"), bars.steps("clustering", {"a": 90}):
            pass
    records = _records(caplog)
    records = records[:[r["n"] for r in records].index(100) + 1]  # the first bar's (the next ones are refused)
    assert records[0] | {"elapsed_s": 0} == {"event": "progress", "phase": "clustering", "n": 0, "total": 100,
                                             "unit": "%", "elapsed_s": 0, "rate": None, "eta_s": None}
    assert list(dict.fromkeys((r["n"], r.get("note")) for r in records)) == [
        (0, None), (0, "search"), (60, "merge"), (90, "fusion"), (100, None)]  # with the step running
    assert records[-1]["n"] == 100 and records[-1]["eta_s"] == 0 and "note" not in records[-1]


def test_off_writes_nothing_and_starts_no_thread(caplog) -> None:
    caplog.set_level(logging.INFO, logger="pipeline.progress")
    with Progress("off") as bars:
        bar = bars.bar("writing", 10, "row")
        bar.update(10)
        bar.close()
        assert bars._ticker is None
    assert _records(caplog) == []


@pytest.mark.parametrize(("given", "quiet", "mode"), [
    (None, False, "auto"), (True, False, "bars"), (False, False, "off"), ("log", False, "log"),
    (None, True, "off"), ("log", True, "off"), (True, True, "off"),
])
def test_progress_mode(given, quiet, mode) -> None:
    assert progress_mode(given, quiet) == mode


def test_unknown_modes_are_refused() -> None:
    with pytest.raises(ValueError, match="one of"):
        progress_mode("loud", False)
    with pytest.raises(ValueError, match="one of"):
        Progress("loud")
