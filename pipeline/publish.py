"""Publishing a run's outputs atomically, and the lock that keeps two runs off one output folder.

Layout of an output folder ``OUT``::

    OUT/.runs/<run_id>/          one complete run: <table>.parquet, errors.parquet,
                                 manifest.json, report.html (when pipeline.report exists)
    OUT/current -> .runs/<run_id>            the published run (a relative symbolic link)
    OUT/<name>  -> current/<name>            for each of LINKED_NAMES the run has
    OUT/.state/                  incremental state (pipeline.state)
    OUT/.cache/embeddings.sqlite embedding cache (pipeline.embed_cache)
    OUT/.lock                    the run lock; holds the PID of the run holding it

Publish protocol (:func:`publish`): a run writes ``.runs/<run_id>/`` completely and flushes it
to disk, then makes a temporary symbolic link to it and renames it over ``current`` (POSIX
``rename`` is atomic: a reader sees the old run or the new one, never a mix or nothing). The
top-level names are links through ``current``, created once, so ``OUT/papers.parquet`` keeps
working and always points into the published run. Each top-level link is resolved when it is
opened, so a reader that opens several tables while a run publishes may get two runs; a reader
that needs one consistent snapshot resolves ``OUT/current`` once
(``os.path.realpath("OUT/current")``) and reads every table under that folder. The published run
and the one before it are kept; older runs, and folders of runs that never published (killed),
are deleted after each publish, so a snapshot stays readable for at least one more run.

An output folder written by an older version (plain files at the top level) is migrated on
the first publish when its marker says so (``migrate``, :mod:`pipeline.outdir`): its files are
hard-linked into ``.runs/legacy-<mtime>/`` (kept as the previous run) and replaced by the links.
Otherwise a plain file where a link goes is not the pipeline's: it is left alone, with a warning.

Lock (:class:`OutputLock`): ``fcntl.flock`` on ``OUT/.lock``, taken without waiting. The kernel
drops the lock when its process dies, however it dies, so a killed run never blocks the next
one; the PID written into the file tells who holds it (for the error message) and, when a run
takes a free lock that still names another PID, that the previous run was killed before it
released it: the run says so on stderr (``cleared a stale lock``) and goes on.

Crash tests: when the environment variable ``PIPELINE_CRASH_AT`` names one of
:data:`CRASH_POINTS`, :func:`crash_point` kills the process there with SIGKILL (test use only).
"""

from __future__ import annotations

import contextlib
import datetime as dt
import errno
import fcntl
import logging
import os
import shutil
import signal
import uuid
from pathlib import Path

from .errors import PipelineError

log = logging.getLogger(__name__)

#: Folder of run folders, inside the output folder.
RUNS_DIR = ".runs"
#: The link to the published run.
CURRENT = "current"
#: The lock file.
LOCK_NAME = ".lock"
#: Files of a run that get a top-level link ``OUT/<name> -> current/<name>`` (when the run has
#: them): the tables, the errors table, the manifest and the report.
LINKED_NAMES = ("documents.parquet", "sections.parquet", "papers.parquet", "dropped.parquet", "context.parquet",
                "errors.parquet", "manifest.json", "report.html")
#: Runs kept after a publish: the published one and the one before it.
KEEP_RUNS = 2
#: Environment variable naming the crash point (tests only).
CRASH_ENV = "PIPELINE_CRASH_AT"
#: Named points where :func:`crash_point` can kill the run: after the per-document stages (state
#: written, nothing published), after the first table of the run folder is written, and with the
#: run folder complete just before the ``current`` link is swapped.
CRASH_POINTS = ("after-documents", "mid-write", "before-swap")


class OutputLocked(PipelineError):
    """Another run holds the output folder's lock (the message names its PID and the lock file)."""


def crash_point(name: str) -> None:
    """Kill this process with SIGKILL when ``$PIPELINE_CRASH_AT == name`` (crash tests only)."""
    if os.environ.get(CRASH_ENV) == name:
        log.warning("%s=%s: killing the run here", CRASH_ENV, name)
        os.kill(os.getpid(), signal.SIGKILL)


def new_run_id(now: dt.datetime | None = None) -> str:
    """A run id that sorts by start time: ``YYYYMMDDTHHMMSS.ffffffZ-<6 hex>`` (UTC)."""
    now = now or dt.datetime.now(dt.timezone.utc)
    return now.strftime("%Y%m%dT%H%M%S.%fZ") + "-" + uuid.uuid4().hex[:6]


def _read_pid(fd: int) -> int | None:
    os.lseek(fd, 0, os.SEEK_SET)
    text = os.read(fd, 64).decode("ascii", "replace").strip()
    return int(text) if text.isdigit() else None


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # exists, owned by someone else
        return True
    return True


class OutputLock:
    """Exclusive lock on an output folder for the length of a ``with`` block.

    Args:
        out_dir: the output folder (must exist).

    Raises (on enter):
        OutputLocked: another process holds the lock.
        OSError: the lock file cannot be created or locked.
    """

    def __init__(self, out_dir: str | Path):
        self.path = Path(out_dir) / LOCK_NAME
        self._fd: int | None = None
        #: PID named by a lock file that was free when taken (a killed run), else None.
        self.stale_pid: int | None = None

    def __enter__(self) -> OutputLock:
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as exc:
            holder = _read_pid(fd)
            os.close(fd)
            if exc.errno in (errno.EWOULDBLOCK, errno.EAGAIN, errno.EACCES):
                who = f"pid {holder}" if holder else "another process"
                raise OutputLocked(f"another run ({who}) is writing {self.path.parent}: the lock {self.path} "
                                   "is held; wait for it to finish") from None
            raise
        previous = _read_pid(fd)
        if previous is not None and previous != os.getpid():
            self.stale_pid = previous
            state = "still running but not holding it" if _pid_alive(previous) else "no longer running"
            log.warning("cleared a stale lock on %s left by pid %d (%s; killed before it finished?)",
                        self.path.parent, previous, state)
        os.ftruncate(fd, 0)
        os.lseek(fd, 0, os.SEEK_SET)
        os.write(fd, f"{os.getpid()}\n".encode())
        os.fsync(fd)
        self._fd = fd
        return self

    def __exit__(self, *exc_info: object) -> None:
        if self._fd is None:
            return
        with contextlib.suppress(OSError):
            os.ftruncate(self._fd, 0)  # an empty file: released cleanly
        fcntl.flock(self._fd, fcntl.LOCK_UN)
        os.close(self._fd)
        self._fd = None


def lock_holder(out_dir: str | Path) -> int | None:
    """The PID the lock file names when that process is alive (a run is probably going on), else None."""
    path = Path(out_dir) / LOCK_NAME
    try:
        text = path.read_text(encoding="ascii", errors="replace").strip()
    except OSError:
        return None
    return int(text) if text.isdigit() and _pid_alive(int(text)) else None


def run_folder(out_dir: str | Path, run_id: str) -> Path:
    """``OUT/.runs/<run_id>`` (not created)."""
    return Path(out_dir) / RUNS_DIR / run_id


def current_run(out_dir: str | Path) -> Path | None:
    """The published run's folder (``OUT/current`` resolved), or None when nothing is published
    through ``current`` (an empty or older-version folder)."""
    link = Path(out_dir) / CURRENT
    if not link.is_symlink():
        return None
    target = Path(out_dir) / os.readlink(link)
    return target if target.is_dir() else None


def _fsync_dir(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def flush_folder(folder: Path) -> None:
    """fsync every file in ``folder`` and the folder itself (the run survives a power cut once
    published, not only a killed process)."""
    for path in folder.iterdir():
        if path.is_file() and not path.is_symlink():
            fd = os.open(path, os.O_RDONLY)
            try:
                os.fsync(fd)
            finally:
                os.close(fd)
    _fsync_dir(folder)


def _swap_link(link: Path, target: str, tag: str) -> None:
    """Point ``link`` at ``target`` (relative) atomically: a temporary link renamed over it."""
    tmp = link.parent / f".{link.name}.{tag}.tmp"
    with contextlib.suppress(FileNotFoundError):
        tmp.unlink()
    os.symlink(target, tmp)
    os.replace(tmp, link)


def _migrate_legacy(out: Path) -> str | None:
    """Hard-link an older version's top-level outputs into ``.runs/legacy-<mtime>/``.

    Returns:
        that run id, or None when ``out`` holds no plain output files.
    """
    plain = [out / n for n in LINKED_NAMES if (out / n).is_file() and not (out / n).is_symlink()]
    if not plain:
        return None
    mtime = max(p.stat().st_mtime for p in plain)
    run_id = "legacy-" + dt.datetime.fromtimestamp(mtime, dt.timezone.utc).strftime("%Y%m%dT%H%M%SZ")
    folder = run_folder(out, run_id)
    folder.mkdir(parents=True, exist_ok=True)
    for path in plain:
        dest = folder / path.name
        if not dest.exists():
            try:
                os.link(path, dest)
            except OSError:  # no hard links here: copy
                shutil.copy2(path, dest)
    log.info("migrated the outputs of an older version in %s to %s", out, folder)
    return run_id


def publish(out_dir: str | Path, run_id: str, migrate: bool = False) -> Path:
    """Make ``OUT/.runs/<run_id>`` the published run (see the module docstring).

    Steps: with ``migrate``, move plain top-level files of an older version into a run folder;
    swap ``current``; create or fix the top-level links (removing those the new run lacks); delete
    runs other than this one and the previously published one, and leftovers of killed runs.

    Returns:
        the published run folder.

    Raises:
        FileNotFoundError: the run folder does not exist.
        OSError: the links cannot be made (e.g. a file system without symbolic links).
    """
    out = Path(out_dir)
    folder = run_folder(out, run_id)
    if not folder.is_dir():
        raise FileNotFoundError(f"run folder {folder} does not exist")
    if os.path.lexists(out / CURRENT) and not (out / CURRENT).is_symlink():
        raise FileExistsError(f"{out / CURRENT} is not a link the pipeline made; not replaced")
    previous = current_run(out)
    previous_id = previous.name if previous is not None else (_migrate_legacy(out) if migrate else None)
    _swap_link(out / CURRENT, f"{RUNS_DIR}/{run_id}", run_id)
    _fsync_dir(out)
    for name in LINKED_NAMES:
        link, target = out / name, f"{CURRENT}/{name}"
        if os.path.lexists(link) and not link.is_symlink() and not migrate:
            log.warning("left %s alone: not written by the pipeline (no link to %s made)", link, target)
        elif (folder / name).is_file():
            if not (link.is_symlink() and os.readlink(link) == target):
                _swap_link(link, target, run_id)
        elif link.is_symlink() or link.is_file():  # the run has none: no stale or dangling name
            link.unlink()
    _fsync_dir(out)
    prune(out, keep={run_id, previous_id} - {None}, staging=migrate)
    return folder


def prune(out_dir: str | Path, keep: set[str], staging: bool = False) -> list[str]:
    """Delete run folders not in ``keep``, temporary links and (``staging``: when migrating an
    older version's folder) its staging folders.

    Returns:
        the run ids deleted.
    """
    out = Path(out_dir)
    deleted = []
    runs = out / RUNS_DIR
    for folder in sorted(runs.iterdir()) if runs.is_dir() else []:
        if folder.name not in keep:
            shutil.rmtree(folder, ignore_errors=True)
            deleted.append(folder.name)
    for tmp in out.glob(".*.tmp"):
        if tmp.is_symlink():
            tmp.unlink(missing_ok=True)
    for folder in out.glob(".staging-*") if staging else []:  # the runner of older versions staged here
        shutil.rmtree(folder, ignore_errors=True)
    return deleted
