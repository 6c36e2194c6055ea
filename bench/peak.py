"""Run a command and report its peak resident set size, measured from a small parent.

``python bench/peak.py RESULT -- CMD [ARG ...]`` (standard library only, so it runs by path)

Linux carries a high-water resident set across ``execve``: when a process is forked (or
vforked, as :mod:`subprocess` does) and the child execs, the kernel folds the high-water mark of
the memory the child leaves into the new program's ``ru_maxrss`` (``exec_mmap`` in
``fs/exec.c``: ``setmax_mm_hiwater_rss``). After a vfork that memory is the parent's own, so the
child reports at least the parent's peak so far; after a fork it is the child's copy, at least
the parent's size at the fork. A child started by a process that reached 800 MB therefore
reports about 800 MB even if it never uses more than 10. The bench's process holds the anchors'
models and tables by the time it starts the larger corpora, so it cannot measure its pipeline
child directly (it reported 876 MB at 10k where the pipeline's largest process had 606 MB;
``bench/README.md``). This module is that small parent: a fresh interpreter of about 12 MB
(the floor of every figure) that starts the command, waits for it with :func:`os.wait4` and
writes what it measured.

RESULT gets ``{"returncode": int, "peak_rss_kib": int, "peak_anon_kib": int,
"peak_anon_group_kib": int}`` as JSON: the command's exit status (negative: the signal that ended
it, as :attr:`subprocess.Popen.returncode`), the largest resident set of the command or any
descendant it waited for, in KiB (``ru_maxrss``, Linux's unit), and the anonymous resident
memory (``RssAnon`` of ``/proc/PID/status``, sampled every :data:`SAMPLE_SECONDS`) of the
largest process of the command's group and of the whole group at its largest. ``ru_maxrss``
counts the clean file pages a process maps (scratch files read through a memory map), which the
kernel reclaims when memory runs short; ``RssAnon`` counts only the memory that cannot be
dropped without swap: what runs a machine out of memory. This process exits 0 once RESULT is written, 2 on a usage error, 1 with a traceback when
the command cannot be started or RESULT cannot be written (after the command ran).

The command runs in a process group of its own, so that signals reach all of it:

* SIGTERM to this process kills the command's whole group (SIGKILL: the command and whatever it
  started and has not left the group, e.g. the pipeline's workers), waits for the command and
  writes RESULT as usual; one that arrives while the command is being started kills it as soon
  as it has started.
* SIGINT (a Ctrl-C in the terminal, which reaches this process's group) is passed on to the
  command's group, which decides how to stop; this process goes on waiting for it.
* A SIGINT while the command is being started is passed on once it has started.
* Other signals (SIGHUP, SIGKILL) end this process without a RESULT, and the command goes on; so
  does SIGTERM in this interpreter's own start-up (tens of ms, before the handlers exist), when
  no command has started yet.

What the command leaves running when it exits by itself (children it did not wait for), and
processes that left its group (``setsid``), are not stopped, and their memory is not counted.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

USAGE = "usage: python bench/peak.py RESULT -- CMD [ARG ...]"
#: Seconds between two samples of the group's anonymous memory.
SAMPLE_SECONDS = 0.05


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command of ``argv`` (``RESULT -- CMD ...``), write RESULT; see the module's doc.

    Returns:
        0 once RESULT is written; 2 (with :data:`USAGE` on stderr) when ``argv`` is malformed.

    Raises:
        OSError: the command cannot be started (not found, not executable), or RESULT cannot be
            written.
    """
    args = list(sys.argv[1:] if argv is None else argv)
    if len(args) < 3 or args[1] != "--":
        print(USAGE, file=sys.stderr)
        return 2
    result, cmd = Path(args[0]), args[2:]
    # The handlers only act on the command's group while the command is running (started and
    # not yet reaped): a reaped pid, or a group id, may be reused by an unrelated process.
    state = {"group": None, "killed": False, "interrupted": False}

    def on_term(signum: int, frame: object) -> None:
        state["killed"] = True
        if state["group"] is not None:
            _signal_group(state["group"], signal.SIGKILL)

    def on_int(signum: int, frame: object) -> None:
        state["interrupted"] = True
        if state["group"] is not None:
            _signal_group(state["group"], signal.SIGINT)

    # handlers, not SIG_IGN: the command would inherit an ignored signal through exec, while
    # handlers are reset to the default there
    previous = signal.signal(signal.SIGTERM, on_term), signal.signal(signal.SIGINT, on_int)
    try:
        proc = subprocess.Popen(cmd, start_new_session=True)
        state["group"] = proc.pid
        if state["killed"]:  # SIGTERM came while the command was being started
            _signal_group(proc.pid, signal.SIGKILL)
        elif state["interrupted"]:  # and so did SIGINT
            _signal_group(proc.pid, signal.SIGINT)
        status, usage, anon, anon_group = _wait_sampling(proc.pid)
        state["group"] = None
        proc.returncode = os.waitstatus_to_exitcode(status)  # reaped here; Popen must not wait again
        # written with the handlers still in place: a late SIGTERM (a timeout as the command
        # ends) must not end this process before its result
        result.write_text(json.dumps({"returncode": proc.returncode, "peak_rss_kib": usage.ru_maxrss,
                                      "peak_anon_kib": anon, "peak_anon_group_kib": anon_group}),
                          encoding="utf-8")
    finally:
        signal.signal(signal.SIGTERM, previous[0])
        signal.signal(signal.SIGINT, previous[1])
    return 0


def _wait_sampling(pid: int) -> tuple[int, Any, int, int]:
    """Wait for ``pid`` (a group leader) while sampling its group's ``RssAnon``.

    Returns:
        ``(status, rusage, largest, group)``: :func:`os.wait4`'s status and usage, the largest
        ``RssAnon`` of one process of the group and of the group's sum, in KiB (0 where
        ``/proc`` has no such field).
    """
    largest = group = 0
    while True:
        waited, status, usage = os.wait4(pid, os.WNOHANG)
        if waited:
            return status, usage, largest, group
        sizes = [_anon_kib(p) for p in _group_members(pid)]
        if sizes:
            largest, group = max(largest, max(sizes)), max(group, sum(sizes))
        time.sleep(SAMPLE_SECONDS)


def _group_members(group: int) -> list[int]:
    """The processes of process group ``group`` (from ``/proc/PID/stat``, field 5)."""
    out = []
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as f:
                fields = f.read().rsplit(b")", 1)[1].split()
        except OSError:  # gone meanwhile
            continue
        if int(fields[2]) == group:
            out.append(int(name))
    return out


def _anon_kib(pid: int) -> int:
    """``RssAnon`` of ``pid`` in KiB (0 when gone or not reported)."""
    try:
        with open(f"/proc/{pid}/status", encoding="ascii", errors="replace") as f:
            for line in f:
                if line.startswith("RssAnon:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0


def _signal_group(group: int, signum: int) -> None:
    """Send ``signum`` to process group ``group``; a group with no process left is not an error."""
    try:
        os.killpg(group, signum)
    except ProcessLookupError:
        pass


if __name__ == "__main__":
    sys.exit(main())
