"""What a run may write to and delete: the output folder's ownership marker, and the refusal of an
output folder that overlaps the corpus.

``OUT/.pipeline-output.json`` (:data:`MARKER`) names a folder as this pipeline's. Before writing,
:func:`check` refuses (:class:`OutputRefused`, exit 2) an output folder that is, lies in or holds
the corpus; an unmarked folder unless empty or of this layout (:func:`foreign_entries`); and a
marked folder with a top-level file the publish record does not vouch for. :func:`claim` writes
the marker; its ``layout`` tells :mod:`pipeline.publish` what to migrate. See
docs/architecture.md ("Output folder ownership").
"""

from __future__ import annotations

import datetime as dt
import json
import os
from pathlib import Path

from . import __version__
from .errors import PipelineError
from .publish import (
    LEGACY_CURRENT,
    LEGACY_LINKED_NAMES,
    LEGACY_RUNS_DIR,
    LOCK_NAME,
    MANIFEST,
    PIPELINE_DIR,
    PUBLISHED,
    PUBLISHED_NAMES,
    is_owned,
)

#: The marker file (JSON: ``layout``, ``created_by``, ``created_at``).
MARKER = ".pipeline-output.json"
#: Marker layouts: ``tables`` (current), and ``runs`` / ``plain`` (older, migrated on the next run).
LAYOUTS = ("tables", "runs", "plain")
#: The pipeline's folders inside an output folder, older layouts' included.
OWN_FOLDERS = (PIPELINE_DIR, LEGACY_RUNS_DIR, ".state", ".cache")
#: The CLI's probe that the folder is writable (left behind when a run is killed right then).
WRITE_PROBE = ".write-test"
#: Keys of the ``manifest.json`` every version of the pipeline has written.
MANIFEST_KEYS = ("pipeline_version", "config_fingerprint")


class OutputRefused(PipelineError):
    """The output folder overlaps the corpus or holds foreign files (the message says what to do)."""


def check(corpus: str | Path, out: str | Path) -> str | None:
    """Refuse an output folder that overlaps the corpus or is not the pipeline's; write nothing.
    Returns the layout it has or will get (:data:`LAYOUTS`), None when ``out`` is no folder yet.
    OutputRefused: see the module docstring."""
    corpus, out = Path(corpus), Path(out)
    real_corpus, real_out = corpus.resolve(), out.resolve()
    if real_out.is_relative_to(real_corpus):
        where = "is the corpus" if real_out == real_corpus else f"is inside the corpus {corpus}"
        raise OutputRefused(f"the output folder {out} {where}: a run would read its own outputs as articles "
                            "and could overwrite articles; choose an output folder outside the corpus")
    if real_corpus.is_relative_to(real_out):
        raise OutputRefused(f"the corpus {corpus} is inside the output folder {out}; choose an output folder "
                            "that does not hold the corpus")
    if is_output_folder(corpus):
        raise OutputRefused(f"the corpus {corpus} is an output folder of this pipeline; give the folder of "
                            "the articles")
    if not out.is_dir():  # new (or not a folder: the caller's mkdir says so)
        return None
    links = _links_inside(out / PIPELINE_DIR)
    if links:
        raise OutputRefused(f"the output folder {out} has symbolic links where the pipeline keeps its own files "
                            f"({', '.join(links)}): a run writes and deletes there, so it would change what they "
                            "point to; remove the links")
    return _layout(out)


def _links_inside(folder: Path, depth: int = 3) -> list[str]:
    """Symbolic links at or under ``folder`` to ``depth`` levels, not followed."""
    if os.path.islink(folder):
        return [str(folder)]
    if depth == 0 or not folder.is_dir():
        return []
    found: list[str] = []
    try:
        entries = sorted(os.scandir(folder), key=lambda e: e.name)
    except OSError:
        return []
    for entry in entries:
        if entry.is_symlink():
            found.append(entry.path)
        elif entry.is_dir(follow_symlinks=False):
            found.extend(_links_inside(Path(entry.path), depth - 1))
    return found


def is_output_folder(folder: str | Path) -> bool:
    """Whether ``folder`` has the marker, a publish record, or an older layout's ``current`` link."""
    folder = Path(folder)
    if os.path.lexists(folder / MARKER) or os.path.isfile(folder / PUBLISHED):
        return True
    try:
        return os.readlink(folder / LEGACY_CURRENT).startswith(f"{LEGACY_RUNS_DIR}/")
    except OSError:
        return False


def _layout(out: Path) -> str:
    marker = read_marker(out)
    if marker is not None:
        if marker["layout"] == "runs":
            misplaced = [n for n in (LEGACY_CURRENT, *LEGACY_LINKED_NAMES)
                         if os.path.lexists(out / n) and not (out / n).is_symlink()]
            misplaced += [n for n in PUBLISHED_NAMES if n not in LEGACY_LINKED_NAMES and os.path.lexists(out / n)]
            where = "puts its links"
        else:
            misplaced = [n for n in PUBLISHED_NAMES if os.path.lexists(out / n) and not is_owned(out, n)]
            misplaced = misplaced if marker["layout"] == "tables" else [n for n in misplaced if n not in LEGACY_LINKED_NAMES]
            where = "publishes its outputs (a file it did not write, or one changed since)"
        if misplaced:
            raise OutputRefused(f"the output folder {out} holds {_names(misplaced)} where the pipeline {where}; "
                                "move them elsewhere, or delete them if they are its own outputs copied or edited (the pipeline "
                                "deletes only what it wrote)")
        return marker["layout"]
    foreign = foreign_entries(out)
    if foreign:
        raise OutputRefused(f"the output folder {out} holds files the pipeline did not write: {_names(foreign)}; "
                            "give an empty or new folder, or one an earlier run wrote (the pipeline deletes "
                            "only what it wrote)")
    if os.path.islink(out / LEGACY_CURRENT):
        return "runs"
    if _plain_manifest(out / MANIFEST) and not (out / PUBLISHED).is_file():
        return "plain"
    return "tables"


def _names(names: list[str], most: int = 10) -> str:
    shown = ", ".join(json.dumps(n, ensure_ascii=False) for n in names[:most])
    return shown + (f" and {len(names) - most} more" if len(names) > most else "")


def read_marker(out: str | Path) -> dict | None:
    """The marker's contents, or None; OutputRefused when it is not one this pipeline writes."""
    path = Path(out) / MARKER
    try:
        marker = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return None
    except (OSError, ValueError) as exc:
        raise OutputRefused(f"the output folder marker {path} cannot be read ({exc}); delete it only if the "
                            "folder holds nothing but this pipeline's outputs") from None
    if not isinstance(marker, dict) or marker.get("layout") not in LAYOUTS:
        raise OutputRefused(f"the output folder marker {path} is not one this pipeline writes (layout must be "
                            f"one of {', '.join(LAYOUTS)})")
    return marker


def foreign_entries(out: str | Path) -> list[str]:
    """Names in ``out`` (sorted) not of this pipeline's layout: anything but :data:`OWN_FOLDERS`,
    files the publish record names as published, the lock, the write probe, publish and marker
    temporaries, and older layouts' links, staging folders and plain outputs with
    :data:`MANIFEST_KEYS`."""
    out = Path(out)
    plain_ours = _plain_manifest(out / MANIFEST) and not (out / PUBLISHED).is_file()  # an older version's
    foreign = []
    for entry in sorted(os.scandir(out), key=lambda e: e.name):
        name, path = entry.name, Path(entry.path)
        if entry.is_symlink():
            target = os.readlink(path)
            ours = ((name == LEGACY_CURRENT and target.startswith(f"{LEGACY_RUNS_DIR}/"))
                    or (name in LEGACY_LINKED_NAMES and target == f"{LEGACY_CURRENT}/{name}")
                    or (name.startswith(".") and name.endswith(".tmp")))
        elif entry.is_dir():
            ours = name in OWN_FOLDERS or name.startswith(".staging-")
        else:
            ours = ((name == LOCK_NAME and _is_lock(path)) or (name == WRITE_PROBE and entry.stat().st_size == 0)
                    or (name.startswith((f"{MARKER}.", f".{MANIFEST}.")) and name.endswith(".tmp"))
                    or (name in LEGACY_LINKED_NAMES and plain_ours) or is_owned(out, name))
        if not ours:
            foreign.append(name)
    return foreign


def _is_lock(path: Path) -> bool:
    """An empty lock file or one holding a PID, as :class:`pipeline.publish.OutputLock` leaves it."""
    try:
        text = path.read_bytes()[:64].strip()
    except OSError:
        return False
    return text == b"" or text.isdigit()


def _plain_manifest(path: Path) -> bool:
    """``path`` is a plain ``manifest.json`` with :data:`MANIFEST_KEYS` (an older version's)."""
    if path.is_symlink() or not path.is_file():
        return False
    try:
        manifest = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    return isinstance(manifest, dict) and all(k in manifest for k in MANIFEST_KEYS)


def mark(out: str | Path, layout: str) -> None:
    """Write the marker with ``layout`` (atomically: a temporary file renamed over it)."""
    path = Path(out) / MARKER
    tmp = path.with_name(f"{MARKER}.{os.getpid()}.tmp")
    tmp.write_text(json.dumps({"layout": layout, "created_by": f"pipeline {__version__}",
                               "created_at": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds")}) + "\n",
                   encoding="utf-8")
    os.replace(tmp, path)


def claim(corpus: str | Path, out: str | Path) -> str:
    """:func:`check` again under the lock and write the marker when missing; returns the layout.
    OutputRefused as :func:`check`."""
    layout = check(corpus, out) or "tables"
    if read_marker(out) is None:
        mark(out, layout)
    return layout
