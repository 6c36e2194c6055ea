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

RESULT gets ``{"returncode": int, "peak_rss_kib": int}`` as JSON: the command's exit status
(negative: the signal that ended it, as :attr:`subprocess.Popen.returncode`) and the largest
resident set of the command or any descendant it waited for, in KiB (``ru_maxrss``, Linux's
unit). This process exits 0 once RESULT is written, 2 on a usage error, 1 with a traceback when
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
from collections.abc import Sequence
from pathlib import Path

USAGE = "usage: python bench/peak.py RESULT -- CMD [ARG ...]"


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
        _, status, usage = os.wait4(proc.pid, 0)
        state["group"] = None
        proc.returncode = os.waitstatus_to_exitcode(status)  # reaped here; Popen must not wait again
        # written with the handlers still in place: a late SIGTERM (a timeout as the command
        # ends) must not end this process before its result
        result.write_text(json.dumps({"returncode": proc.returncode, "peak_rss_kib": usage.ru_maxrss}),
                          encoding="utf-8")
    finally:
        signal.signal(signal.SIGTERM, previous[0])
        signal.signal(signal.SIGINT, previous[1])
    return 0


def _signal_group(group: int, signum: int) -> None:
    """Send ``signum`` to process group ``group``; a group with no process left is not an error."""
    try:
        os.killpg(group, signum)
    except ProcessLookupError:
        pass


if __name__ == "__main__":
    sys.exit(main())
