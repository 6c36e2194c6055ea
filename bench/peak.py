"""Run a command and report its peak resident set size, measured from a small parent.

``python -m bench.peak RESULT -- CMD [ARG ...]``

Linux carries a process's high-water resident set across ``execve``: when a process is forked
(or vforked, as :mod:`subprocess` does) and then execs, the kernel folds the high-water mark of
the memory it leaves, its parent's copy, into the new program's ``ru_maxrss`` (``exec_mmap`` in
``fs/exec.c``: ``setmax_mm_hiwater_rss``). A child started by a process of 800 MB therefore
reports at least 800 MB, even if it never uses more than 10. The bench's process holds the
anchors' models and tables by the time it starts the larger corpora, so it cannot measure its
pipeline child directly (it reported 876 MB at 10k where the pipeline's largest process had
606 MB; ``bench/README.md``). This module is that small parent: a fresh interpreter of about
10 MB that starts the command, waits for it with :func:`os.wait4` and writes what it measured.

RESULT gets ``{"returncode": int, "peak_rss_kib": int}`` as JSON: the command's exit status
(negative: the signal that ended it, as :attr:`subprocess.Popen.returncode`) and the largest
resident set of the command or any descendant it waited for, in KiB (``ru_maxrss``, Linux's
unit). This process exits 0 once RESULT is written, 2 on a usage error.

SIGTERM to this process kills the command (SIGKILL, as the bench's timeout did before), waits
for it and writes RESULT as usual. SIGINT does nothing here: a Ctrl-C reaches the command from the
terminal itself, which decides how to stop, and this process goes on waiting for it.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

USAGE = "usage: python -m bench.peak RESULT -- CMD [ARG ...]"


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
    # Ctrl-C reaches the command from the terminal; here it does nothing. A handler, not SIG_IGN,
    # which the command would inherit through exec (handlers are reset to the default there).
    signal.signal(signal.SIGINT, lambda signum, frame: None)
    proc = subprocess.Popen(cmd)

    def stop(signum: int, frame: object) -> None:
        proc.kill()

    signal.signal(signal.SIGTERM, stop)
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)  # reaped here; Popen must not wait again
    result.write_text(json.dumps({"returncode": proc.returncode, "peak_rss_kib": usage.ru_maxrss}), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
