"""What a run may write to and delete: the output folder's ownership marker, and the refusal of
an output folder that overlaps the corpus.

A run deletes or replaces only what the pipeline created, and only in a folder it knows as its
own: ``OUT/.pipeline-output.json`` (:data:`MARKER`) names a folder as an output folder of this
pipeline. Before a run writes anything (:func:`check`):

- an output folder that is the corpus, lies inside it, or holds it, and a corpus that is itself
  an output folder, are refused (:class:`OutputRefused`; the CLI exits 2): a run would read its
  own outputs as articles or publish over the articles;
- a folder without the marker is used only when it is empty or everything in it has the shape of
  this pipeline's layout (:func:`foreign_entries`): the current layout's links, run folders,
  state, cache and lock, or an older version's plain output files next to a ``manifest.json``
  this pipeline wrote. Anything else is refused, naming what is there;
- in a marked folder the pipeline leaves other files alone, but a plain file or folder where it
  puts one of its links (``report.html``, ``current`` ...) is refused, naming it.

:func:`claim` writes the marker (under the run's lock). Its ``layout`` is ``"plain"`` for an
older version's folder, which tells :func:`pipeline.publish.publish` to migrate the plain files
into a run folder once (:func:`mark` then records ``"runs"``); no other folder is ever migrated.
"""

from __future__ import annotations

import datetime as dt
import json
import os
from pathlib import Path

from . import __version__
from .errors import PipelineError
from .publish import CURRENT, LINKED_NAMES, LOCK_NAME, RUNS_DIR

#: The marker file naming a folder as this pipeline's output folder (JSON: ``layout``, ``created_by``,
#: ``created_at``).
MARKER = ".pipeline-output.json"
#: Layouts a marker names: ``runs`` (``OUT/current`` and links, :mod:`pipeline.publish`) and
#: ``plain`` (an older version's plain files, to be migrated on the next publish).
LAYOUTS = ("runs", "plain")
#: Folders of the pipeline inside an output folder: run folders, the state, the embedding cache.
OWN_FOLDERS = (RUNS_DIR, ".state", ".cache")
#: The CLI's probe that the folder is writable (left behind when a run is killed right then).
WRITE_PROBE = ".write-test"
#: Keys of the ``manifest.json`` every version of the pipeline has written.
MANIFEST_KEYS = ("pipeline_version", "config_fingerprint")


class OutputRefused(PipelineError):
    """The output folder cannot be used: it overlaps the corpus, or holds files the pipeline did
    not write (the message names them and what to do)."""


def check(corpus: str | Path, out: str | Path) -> str | None:
    """Refuse an output folder that overlaps the corpus or is not the pipeline's; write nothing.

    Returns:
        the layout the folder has or will be given (:data:`LAYOUTS`); None when ``out`` is not
        a folder (yet).

    Raises:
        OutputRefused: see the module docstring.
    """
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
    return _layout(out)


def is_output_folder(folder: str | Path) -> bool:
    """Whether ``folder`` is an output folder of this pipeline: it has the marker, or (written
    before the marker) a ``current`` link into its run folders."""
    folder = Path(folder)
    if os.path.lexists(folder / MARKER):
        return True
    try:
        return os.readlink(folder / CURRENT).startswith(f"{RUNS_DIR}/")
    except OSError:
        return False


def _layout(out: Path) -> str:
    marker = read_marker(out)
    if marker is not None:
        misplaced = [n for n in (CURRENT, *LINKED_NAMES) if os.path.lexists(out / n) and not (out / n).is_symlink()]
        if misplaced and marker["layout"] == "runs":
            raise OutputRefused(f"the output folder {out} holds {_names(misplaced)} where the pipeline puts "
                                "its links, not written by it; move them elsewhere (the pipeline deletes only "
                                "what it wrote)")
        return marker["layout"]
    foreign = foreign_entries(out)
    if foreign:
        raise OutputRefused(f"the output folder {out} holds files the pipeline did not write: {_names(foreign)}; "
                            "give an empty or new folder, or one an earlier run wrote (the pipeline deletes "
                            "only what it wrote)")
    return "plain" if (out / "manifest.json").is_file() and not (out / "manifest.json").is_symlink() else "runs"


def _names(names: list[str], most: int = 10) -> str:
    shown = ", ".join(json.dumps(n, ensure_ascii=False) for n in names[:most])
    return shown + (f" and {len(names) - most} more" if len(names) > most else "")


def read_marker(out: str | Path) -> dict | None:
    """The marker's contents, or None when ``out`` has none.

    Raises:
        OutputRefused: the marker exists but is not a marker this pipeline writes.
    """
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
    """Names in ``out`` (sorted) that are not of this pipeline's layout: anything but the
    ``current`` link into the run folders, the top-level links through it, :data:`OWN_FOLDERS`,
    the lock, the write probe, temporary links (``.<name>.<tag>.tmp``) and markers, older
    versions' ``.staging-*`` folders, and an older version's plain output files when its ``manifest.json``
    has :data:`MANIFEST_KEYS`."""
    out = Path(out)
    plain_ours = _plain_manifest(out / "manifest.json")
    foreign = []
    for entry in sorted(os.scandir(out), key=lambda e: e.name):
        name, path = entry.name, Path(entry.path)
        if entry.is_symlink():
            target = os.readlink(path)
            ours = ((name == CURRENT and target.startswith(f"{RUNS_DIR}/"))
                    or (name in LINKED_NAMES and target == f"{CURRENT}/{name}")
                    or (name.startswith(".") and name.endswith(".tmp")))
        elif entry.is_dir():
            ours = name in OWN_FOLDERS or name.startswith(".staging-")
        else:
            ours = ((name == LOCK_NAME and _is_lock(path)) or (name == WRITE_PROBE and entry.stat().st_size == 0)
                    or (name.startswith(f"{MARKER}.") and name.endswith(".tmp")) or (name in LINKED_NAMES and plain_ours))
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
    """:func:`check` again (the caller holds the run's lock) and write the marker when ``out`` has
    none. Returns the layout (:data:`LAYOUTS`).

    Raises:
        OutputRefused: as :func:`check`.
    """
    layout = check(corpus, out) or "runs"
    if read_marker(out) is None:
        mark(out, layout)
    return layout
