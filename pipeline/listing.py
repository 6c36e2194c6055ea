"""Finding the corpus files: what a run may read, and a row for everything it will not.

Only regular files whose real path lies inside the corpus are read (a link to one is read by its
real path). Links leaving the corpus or to folders, broken links, special files, hidden entries,
unsupported types, unlistable or unsearchable folders and output folders of this pipeline get a
``skipped`` row instead (:func:`list_corpus`). :func:`open_listed` does not follow a link in the
last component, so a file swapped for a link after listing is not read either.
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
    """``path`` as valid UTF-8: non-UTF-8 name bytes (PEP 383 surrogates) written as ``\\xNN``."""
    return path.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")


def list_corpus(corpus: str | Path, extensions: list[str]) -> tuple[pd.DataFrame, pd.DataFrame]:
    """List the files under ``corpus`` recursively, sorted by relative path.

    Args:
        extensions: lower-case suffixes to read, e.g. ``[".txt", ".md"]``.

    Returns:
        ``(listing, skipped)``: ``listing`` has ``source_path`` (POSIX, relative, non-UTF-8 bytes as
        ``\\xNN``) and ``abs_path`` (the path to open); ``skipped`` has ``source_path`` and
        ``reason`` (a skipped folder is one row).

    Raises FileNotFoundError: ``corpus`` does not exist or is not a folder.
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
    # object columns: abs_path keeps surrogate escapes
    return (
        pd.DataFrame(rows, columns=list(LISTING_COLUMNS), dtype=object),
        pd.DataFrame(skipped, columns=["source_path", "reason"], dtype=object),
    )


def _error(exc: OSError) -> str:
    return f"{type(exc).__name__}: {exc.strerror or exc}"


def _file_reason(path: Path, real_root: str, wanted: set[str]) -> tuple[str | None, str]:
    """``(None, path to open)`` for a wanted regular file inside the corpus, else ``(reason, "")``."""
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
    """Every non-folder entry under ``root``, sorted by relative path, folder links not followed:
    ``(path, None)``, or ``(path, reason)`` for what is skipped whole (hidden entries, folders that
    cannot be listed or searched, output folders). ``os.walk``'s ``onerror`` reports unlistable
    folders, which ``rglob`` would skip silently."""
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
    """The bytes of a listed regular file, opened without following a last-component link.
    OSError when unopenable, a link (``ELOOP``) or no longer a regular file (``EINVAL``)."""
    fd = os.open(abs_path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    with os.fdopen(fd, "rb") as fh:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise OSError(22, "no longer a regular file", abs_path)
        return fh.read()
