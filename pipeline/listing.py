"""Finding the corpus files: what a run may read, and a row for everything it will not.

A run reads only regular files whose real path lies inside the corpus folder. A symbolic link
to a file inside the corpus is read (through its real path); a link that leaves the corpus, a
link to a folder, a broken or looping link, a pipe, socket or device, a hidden entry (a name
starting with ``.``), a file of an unsupported type, a folder that cannot be listed or searched,
and an output folder of this pipeline (:func:`pipeline.outdir.is_output_folder`) each get a
``skipped`` row with the reason instead (:func:`list_corpus`). The file is opened later
without following a link in its last component (:func:`open_listed`), so a file replaced by a
link between listing and reading is not read either.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pandas as pd

from .outdir import is_output_folder
from .textutil import escape_controls

#: Columns of the listing (:func:`list_corpus`), the input of the ingest stage.
LISTING_COLUMNS = ("source_path", "abs_path")


def display_path(path: str) -> str:
    """``path`` as valid UTF-8 text: bytes of a file name that are not UTF-8 (which Python keeps
    as surrogate escapes, PEP 383) are written as ``\\xNN``."""
    return path.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")


def list_corpus(corpus: str | Path, extensions: list[str]) -> tuple[pd.DataFrame, pd.DataFrame]:
    """List the files under ``corpus`` recursively, in sorted order of their relative path.

    Args:
        corpus: the corpus folder.
        extensions: lower-case suffixes to read, e.g. ``[".txt", ".md"]``.

    Returns:
        ``(listing, skipped)``: ``listing`` has columns ``source_path`` (str, POSIX path
        relative to ``corpus``) and ``abs_path`` (str: the path to open; a link's real path);
        ``skipped`` has ``source_path`` and ``reason`` for everything else the module docstring
        names (a hidden or unreadable folder, or an output folder, is one row; its files are not
        listed). File names that are not valid UTF-8 are shown with ``\\xNN`` escapes in
        ``source_path``; ``abs_path`` still opens the file.

    Raises:
        FileNotFoundError: ``corpus`` does not exist or is not a folder.
    """
    root = Path(corpus)
    if not root.is_dir():
        raise FileNotFoundError(f"corpus folder {root} does not exist or is not a folder")
    real_root = os.path.realpath(root)
    wanted = {e.lower() for e in extensions}
    rows, skipped = [], []
    for path, reason in _walk(root):
        shown = display_path(path.relative_to(root).as_posix())
        if reason is None:
            reason, abs_path = _file_reason(path, real_root, wanted)
            if reason is None:
                rows.append({"source_path": shown, "abs_path": abs_path})
                continue
        skipped.append({"source_path": shown, "reason": reason})
    # object columns: a file name that is not valid UTF-8 keeps its surrogate escapes in abs_path
    return (
        pd.DataFrame(rows, columns=list(LISTING_COLUMNS), dtype=object),
        pd.DataFrame(skipped, columns=["source_path", "reason"], dtype=object),
    )


def _error(exc: OSError) -> str:
    return f"{type(exc).__name__}: {exc.strerror or exc}"


def _file_reason(path: Path, real_root: str, wanted: set[str]) -> tuple[str | None, str]:
    """``(None, path to open)`` for a regular file of a wanted type inside the corpus, else
    ``(reason it is skipped, "")``."""
    try:
        st = os.lstat(path)
    except OSError as exc:
        return f"cannot be examined: {_error(exc)}", ""
    abs_path = str(path)
    if stat.S_ISLNK(st.st_mode):
        try:
            abs_path = os.path.realpath(path, strict=True)
            st = os.stat(abs_path)
        except (OSError, RuntimeError):
            return "broken or looping symbolic link", ""
        if stat.S_ISDIR(st.st_mode):
            return "symbolic link to a folder (not followed)", ""
        if os.path.commonpath([real_root, abs_path]) != real_root:
            target = escape_controls(display_path(os.readlink(path)))
            return f"symbolic link to a file outside the corpus (-> {target}), not read", ""
    if not stat.S_ISREG(st.st_mode):
        return "not a regular file (pipe, socket or device)", ""
    if path.suffix.lower() not in wanted:
        return f"unsupported file type {path.suffix or '(none)'}", ""
    return None, abs_path


def _walk(root: Path) -> list[tuple[Path, str | None]]:
    """Every entry under ``root`` that is not a folder, in sorted order of the relative POSIX
    path, links to folders not followed (``os.walk``): ``(path, None)``, or ``(path, reason)``
    for what is skipped as a whole: a hidden entry, a folder that cannot be listed (``os.walk``'s
    ``onerror``; ``Path.rglob`` skips one without a word, and its files would silently count as
    removed on an incremental run) or searched (readable without execute permission: its names
    are listed but none can be opened), and an output folder of this pipeline."""
    found: list[tuple[Path, str | None]] = []

    def unreadable(exc: OSError) -> None:
        found.append((Path(exc.filename), f"folder not readable, its files not listed: {_error(exc)}"))

    for folder, dirnames, filenames in os.walk(root, onerror=unreadable):
        here = Path(folder)
        names = [*dirnames, *filenames]
        if names:
            try:
                os.lstat(here / names[0])
            except PermissionError as exc:
                found.append((here, f"folder not searchable, its files not read: {_error(exc)}"))
                dirnames.clear()
                continue
        kept = []
        for name in dirnames:
            if name.startswith("."):
                found.append((here / name, "hidden folder (name starts with '.'), not read"))
            elif os.path.islink(here / name):  # not followed by os.walk: a row of its own
                found.append((here / name, None))
            elif is_output_folder(here / name):
                found.append((here / name, "an output folder of this pipeline, not read"))
            else:
                kept.append(name)
        dirnames[:] = kept
        for name in filenames:
            found.append((here / name, "hidden file (name starts with '.'), not read" if name.startswith(".") else None))
    return sorted(found, key=lambda item: item[0].relative_to(root).as_posix())


def open_listed(abs_path: str) -> bytes:
    """The bytes of a listed file, opened without following a link in its last component
    (``abs_path`` is already a link's real path) and only when it is a regular file.

    Raises:
        OSError: it cannot be opened, it became a link (``ELOOP``), or it is no longer a regular
            file (``EINVAL``).
    """
    fd = os.open(abs_path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    with os.fdopen(fd, "rb") as fh:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise OSError(22, "no longer a regular file", abs_path)
        return fh.read()
