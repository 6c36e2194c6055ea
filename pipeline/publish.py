"""Publishing a run's outputs, and the lock that keeps two runs off one output folder.

Layout of an output folder ``OUT``::

    OUT/<table>.parquet, errors.parquet   the published run's tables
    OUT/manifest.json, report.html, README.md
    OUT/.pipeline/runs/<run_id>/          a run being written; after publish, its manifest and ids
    OUT/.pipeline/published.json          the last publish: run id, each file's size and mtime
    OUT/.pipeline/state/                  incremental state (pipeline.state)
    OUT/.pipeline/cache/embeddings.sqlite embedding cache (pipeline.embed_cache)
    OUT/.lock                             the run lock, holding its PID

:func:`publish` writes a journal, renames each file to the top (``manifest.json`` last,
hard-linked), then makes the journal the record; a killed publish is finished by the next run
(:func:`recover`). Older layouts are migrated once (:func:`adopt`). :class:`OutputLock` is a
non-blocking ``fcntl.flock`` on ``OUT/.lock``. Details: docs/architecture.md ("Atomic publish").
``PIPELINE_CRASH_AT`` (:data:`CRASH_POINTS`) makes :func:`crash_point` SIGKILL the process (tests).
"""

from __future__ import annotations

import contextlib
import datetime as dt
import errno
import fcntl
import hashlib
import json
import logging
import os
import shutil
import signal
import uuid
from pathlib import Path

from .errors import PipelineError

log = logging.getLogger(__name__)

#: The pipeline's own folder inside the output folder: run folders, state, cache, publish record.
PIPELINE_DIR = ".pipeline"
#: Folder of run folders (relative to the output folder).
RUNS_DIR = f"{PIPELINE_DIR}/runs"
#: Incremental state and embedding cache (relative to the output folder).
STATE_DIR = f"{PIPELINE_DIR}/state"
CACHE_DIR = f"{PIPELINE_DIR}/cache"
#: What the last publish put at the top, and the journal of a publish under way (JSON).
PUBLISHED = f"{PIPELINE_DIR}/published.json"
PUBLISHING = f"{PIPELINE_DIR}/publishing.json"
#: The lock file.
LOCK_NAME = ".lock"
MANIFEST = "manifest.json"
#: The tables of a run, as published at the top of the output folder.
TABLE_FILES = ("documents.parquet", "sections.parquet", "papers.parquet", "dropped.parquet", "context.parquet",
               "errors.parquet", "paper_ids.parquet", "changes.parquet")
#: Every name a publish puts at the top, in order; the manifest last (a reader seeing it sees all).
PUBLISHED_NAMES = (*TABLE_FILES, "report.html", "README.md", MANIFEST)
#: The older layout (marker ``runs``): run folders, the published run's link, and top-level links
#: for :data:`LEGACY_LINKED_NAMES`.
LEGACY_RUNS_DIR = ".runs"
LEGACY_CURRENT = "current"
LEGACY_LINKED_NAMES = ("documents.parquet", "sections.parquet", "papers.parquet", "dropped.parquet",
                       "context.parquet", "errors.parquet", MANIFEST, "report.html")
#: Older places of the state and the cache, moved into :data:`PIPELINE_DIR` by :func:`adopt`.
LEGACY_FOLDERS = {".state": STATE_DIR, ".cache": CACHE_DIR}
#: Environment variable naming the crash point (tests only).
CRASH_ENV = "PIPELINE_CRASH_AT"
#: Points where :func:`crash_point` can kill the run: after the per-document stages, after the
#: first table written, just before the publish, and mid-publish.
CRASH_POINTS = ("after-documents", "mid-write", "before-swap", "mid-publish")


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
    """``OUT/.pipeline/runs/<run_id>`` (not created)."""
    return Path(out_dir) / RUNS_DIR / run_id


def _stamp(path: Path, with_digest: bool = True) -> list:
    """``[size, mtime_ns, sha256 hex]`` of a file (``with_digest=False``: the first two): the
    digest recognises copies that do not keep times."""
    st = os.lstat(path)
    if not with_digest:
        return [st.st_size, st.st_mtime_ns]
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return [st.st_size, st.st_mtime_ns, digest.hexdigest()]


def _same_file(recorded, path: Path, stamp: list) -> bool:
    """Whether ``path`` (``stamp``: its stamp without digest) is the file ``recorded`` describes:
    same size and mtime, or same size and content."""
    if not isinstance(recorded, list) or len(recorded) < 2:
        return False
    if recorded[:2] == stamp:
        return True
    return len(recorded) > 2 and recorded[0] == stamp[0] and _stamp(path)[2] == recorded[2]


def _read_json(path: Path) -> dict | None:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return None
    except (OSError, ValueError) as exc:
        log.warning("cannot read %s (%s); taken as absent", path, exc)
        return None
    return data if isinstance(data, dict) else None


def _write_json(path: Path, data: dict) -> None:
    """Write ``data`` to ``path`` atomically and durably (a temporary file renamed over it)."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    with open(tmp, "w", encoding="utf-8") as fh:
        fh.write(json.dumps(data, sort_keys=True) + "\n")
        fh.flush()
        os.fsync(fh.fileno())
    os.replace(tmp, path)
    _fsync(path.parent)


def published_record(out_dir: str | Path) -> dict | None:
    """``.pipeline/published.json`` (``run_id``, ``files``: name -> :func:`_stamp`), or None."""
    return _read_json(Path(out_dir) / PUBLISHED)


def published_run_id(out_dir: str | Path) -> str | None:
    """The id of the published run (the record's, else an older layout's ``current`` link), or None."""
    record = published_record(out_dir)
    if record is not None:
        return record.get("run_id")
    with contextlib.suppress(OSError):
        return os.path.basename(os.readlink(Path(out_dir) / LEGACY_CURRENT))
    return None


def is_owned(out_dir: str | Path, name: str) -> bool:
    """Whether ``OUT/<name>`` is a plain file the pipeline published, unchanged since (:func:`_same_file`)."""
    path = Path(out_dir) / name
    if path.is_symlink() or not path.is_file():
        return False
    out = Path(out_dir)
    stamp = _stamp(path, with_digest=False)
    return any(_same_file(((_read_json(p) or {}).get("files") or {}).get(name), path, stamp)
               for p in (out / PUBLISHED, out / PUBLISHING))


def record_rewrite(out_dir: str | Path, name: str) -> None:
    """Record that the pipeline rewrote the published ``OUT/<name>`` (``python -m pipeline.report``),
    so the next run still owns it. ValueError unless ``name`` is in :data:`PUBLISHED_NAMES`."""
    if name not in PUBLISHED_NAMES:
        raise ValueError(f"{name!r} is not a published name; one of {', '.join(PUBLISHED_NAMES)}")
    out = Path(out_dir)
    record = published_record(out)
    if record is not None and (out / name).is_file():
        record.setdefault("files", {})[name] = _stamp(out / name)
        _write_json(out / PUBLISHED, record)


def _fsync(path: Path) -> None:
    """fsync the file or folder at ``path``."""
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def flush_folder(folder: Path) -> None:
    """fsync every file in ``folder`` and the folder (durable across a power cut)."""
    for path in folder.iterdir():
        if path.is_file() and not path.is_symlink():
            _fsync(path)
    _fsync(folder)


def adopt(out_dir: str | Path, layout: str) -> None:
    """Move an older layout's state and cache into ``.pipeline`` (caller holds the lock); idempotent."""
    out = Path(out_dir)
    (out / PIPELINE_DIR).mkdir(exist_ok=True)
    if layout == "tables":
        return
    for old, new in LEGACY_FOLDERS.items():
        if (out / old).is_dir() and not (out / old).is_symlink():
            if os.path.lexists(out / new):
                log.warning("left %s alone: %s exists already", out / old, out / new)
            else:
                os.replace(out / old, out / new)
                log.info("moved %s to %s", out / old, out / new)


def publish(out_dir: str | Path, run_id: str, migrate: bool = False) -> Path:
    """Publish ``OUT/.pipeline/runs/<run_id>``: journal, rename each file to the top (manifest
    last), journal made the record, other run folders but the previous one deleted. Returns the
    output folder.

    Args:
        migrate: an older layout (:func:`adopt`): also replace its links and leftover files.

    Raises:
        FileNotFoundError: the run folder does not exist.
        OSError: a file cannot be renamed or written.
    """
    out = Path(out_dir)
    folder = run_folder(out, run_id)
    if not folder.is_dir():
        raise FileNotFoundError(f"run folder {folder} does not exist")
    previous = published_run_id(out)
    journal = {"run_id": run_id, "migrate": migrate,
               "files": {n: _stamp(folder / n) for n in PUBLISHED_NAMES if (folder / n).is_file()}}
    _write_json(out / PUBLISHING, journal)
    _finish(out, journal)
    prune(out, keep={run_id, previous} - {None}, legacy=migrate)
    return out


def recover(out_dir: str | Path) -> str | None:
    """Finish a publish a killed run left (its journal exists); caller holds the lock. Returns
    that run's id, or None."""
    out = Path(out_dir)
    journal = _read_json(out / PUBLISHING)
    if journal is None or not isinstance(journal.get("run_id"), str):
        return None
    log.warning("finishing the publish of run %s, which was stopped midway", journal["run_id"])
    _finish(out, journal)
    return journal["run_id"]


def _finish(out: Path, journal: dict) -> None:
    """Rename the journal's files to the top (skipping those there), remove published names the
    run lacks, make the journal the record."""
    folder = run_folder(out, journal["run_id"])
    files, migrate = journal["files"], bool(journal.get("migrate"))
    for name in PUBLISHED_NAMES:
        src, dest = folder / name, out / name
        if name in files:
            if name == MANIFEST and src.is_file():  # hard-linked: the run folder keeps it as history
                tmp = out / f".{name}.{journal['run_id']}.tmp"
                with contextlib.suppress(FileNotFoundError):
                    tmp.unlink()
                os.link(src, tmp)
                os.replace(tmp, dest)
            elif src.is_file():
                os.replace(src, dest)
                crash_point("mid-publish")
        elif is_owned(out, name) or (migrate and (dest.is_symlink() or dest.is_file())):
            dest.unlink()  # the run has none: no stale file of an earlier run
    _fsync(out)
    record = {"run_id": journal["run_id"], "files": files}
    _write_json(out / PUBLISHED, record)
    (out / PUBLISHING).unlink()
    if migrate:
        if (out / LEGACY_CURRENT).is_symlink():
            (out / LEGACY_CURRENT).unlink()
        shutil.rmtree(out / LEGACY_RUNS_DIR, ignore_errors=True)
    _fsync(out / PIPELINE_DIR)


def prune(out_dir: str | Path, keep: set[str], legacy: bool = False) -> list[str]:
    """Delete run folders not in ``keep`` and publish temporaries (``legacy``: an older version's
    staging folders too); returns the run ids deleted."""
    out = Path(out_dir)
    deleted = []
    runs = out / RUNS_DIR
    for folder in sorted(runs.iterdir()) if runs.is_dir() else []:
        if folder.name not in keep:
            shutil.rmtree(folder, ignore_errors=True)
            deleted.append(folder.name)
    for tmp in out.glob(".*.tmp"):  # an older version's temporary links, this one's manifest link
        if tmp.is_symlink() or (tmp.name.startswith(f".{MANIFEST}.") and tmp.is_file()):
            tmp.unlink(missing_ok=True)
    for tmp in (out / PIPELINE_DIR).glob(".*.json.*.tmp"):  # the record's and the journal's
        tmp.unlink(missing_ok=True)
    for folder in out.glob(".staging-*") if legacy else []:  # the runner of older versions staged here
        shutil.rmtree(folder, ignore_errors=True)
    return deleted
