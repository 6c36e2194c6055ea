"""Ingest: find the corpus files, read and decode them, and give each document a stable id.

Order of decoding (first that succeeds wins):

1. a byte-order mark (UTF-8, UTF-16 LE/BE) -> that codec;
2. strict UTF-8;
3. detection by charset-normalizer (``from_bytes(...).best()``), GB2312/GBK widened to
   GB18030 and Big5 to Big5-HKSCS (supersets for the characters articles use); when the
   wider codec cannot decode the bytes (Python's ``big5`` maps a few byte pairs Big5-HKSCS
   lacks), the detected codec is used as is. CP950 is not widened: it maps the euro sign and
   common punctuation (``～``, ``‧``, ``￥``) differently from Big5-HKSCS.

Line endings are normalized to ``\\n`` (CRLF and CR), and a leading BOM character is removed.
All character offsets in later stages point into this decoded, newline-normalized ``text``,
which is kept whole in ``documents.parquet``.

A file that cannot be read or decoded is not an exception for the run: it becomes a document
row with ``status == "error"`` and the message in ``error``.
"""

from __future__ import annotations

import codecs
import hashlib
import logging
from pathlib import Path

import pandas as pd
from charset_normalizer import from_bytes

from .config import Config
from .stage import Stage

log = logging.getLogger(__name__)

#: Columns of the file listing that :func:`ingest_files` reads.
LISTING_COLUMNS = ("source_path", "abs_path")
#: Columns ingest adds (the ``documents`` contract).
DOCUMENT_COLUMNS = (
    "doc_id", "source_path", "content_sha256", "encoding", "n_bytes", "n_chars", "text", "status", "error",
)

_BOMS = (
    (codecs.BOM_UTF8, "utf-8-sig"),
    (codecs.BOM_UTF32_LE, "utf-32"),
    (codecs.BOM_UTF32_BE, "utf-32"),
    (codecs.BOM_UTF16_LE, "utf-16"),
    (codecs.BOM_UTF16_BE, "utf-16"),
)
# Narrow detector answers are widened to the superset codec (WHATWG Encoding Standard maps
# gb2312/gbk labels to the gb18030 decoder; Big5-HKSCS extends Big5).
_WIDEN = {"gb2312": "gb18030", "gbk": "gb18030", "big5": "big5hkscs"}


def list_corpus(corpus: str | Path, extensions: list[str]) -> tuple[pd.DataFrame, pd.DataFrame]:
    """List the files under ``corpus`` recursively, in sorted order of their relative path.

    Hidden files and folders (name starting with ``.``) are ignored.

    Args:
        corpus: the corpus folder.
        extensions: lower-case suffixes to read, e.g. ``[".txt", ".md"]``.

    Returns:
        ``(listing, skipped)``: ``listing`` has columns ``source_path`` (str, POSIX path
        relative to ``corpus``) and ``abs_path`` (str); ``skipped`` has ``source_path`` and
        ``reason`` for files with another suffix.

    Raises:
        FileNotFoundError: ``corpus`` does not exist or is not a folder.
    """
    root = Path(corpus)
    if not root.is_dir():
        raise FileNotFoundError(f"corpus folder {root} does not exist or is not a folder")
    wanted = {e.lower() for e in extensions}
    rows, skipped = [], []
    for path in sorted(root.rglob("*"), key=lambda p: p.relative_to(root).as_posix()):
        rel = path.relative_to(root)
        if any(part.startswith(".") for part in rel.parts) or not path.is_file():
            continue
        if path.suffix.lower() in wanted:
            rows.append({"source_path": rel.as_posix(), "abs_path": str(path)})
        else:
            skipped.append({"source_path": rel.as_posix(), "reason": f"unsupported file type {path.suffix or '(none)'}"})
    return (
        pd.DataFrame(rows, columns=list(LISTING_COLUMNS)),
        pd.DataFrame(skipped, columns=["source_path", "reason"]),
    )


def decode_bytes(data: bytes) -> tuple[str, str]:
    """Decode raw bytes to text by the order in the module docstring.

    Returns:
        ``(text, encoding)`` where ``encoding`` is the Python codec name used.

    Raises:
        UnicodeDecodeError or ValueError: no codec decodes the bytes.
    """
    for bom, codec in _BOMS:
        if data.startswith(bom):
            return data.decode(codec), codec
    try:
        return data.decode("utf-8"), "utf-8"
    except UnicodeDecodeError:
        pass
    best = from_bytes(data).best()
    if best is None:
        raise ValueError("no character encoding decodes these bytes (charset-normalizer found no match)")
    codec = _WIDEN.get(best.encoding.lower(), best.encoding)
    try:
        return data.decode(codec), codec
    except UnicodeDecodeError:  # the wider codec lacks a mapping the detected one has
        return data.decode(best.encoding), best.encoding


def normalize_newlines(text: str) -> str:
    """Turn CRLF and lone CR into LF and drop a leading U+FEFF. Length may shrink."""
    return text.lstrip("\ufeff").replace("\r\n", "\n").replace("\r", "\n")


def read_document(source_path: str, abs_path: str) -> dict:
    """Read one file into a ``documents`` row (see :data:`DOCUMENT_COLUMNS`).

    Never raises for a bad file: read or decode failures give ``status="error"`` with the
    error type and message in ``error``, ``text=""`` and ``encoding=None``.
    ``doc_id`` is the first 16 hex digits of the SHA-256 of the raw bytes, so it is stable
    across runs and machines and the same content under two names gets the same id.
    """
    row = dict.fromkeys(DOCUMENT_COLUMNS)
    row.update(source_path=source_path, text="", n_chars=0, n_bytes=0, status="ok")
    try:
        data = Path(abs_path).read_bytes()
    except OSError as exc:
        row.update(status="error", error=f"{type(exc).__name__}: {exc}")
        row["doc_id"] = hashlib.sha256(source_path.encode()).hexdigest()[:16]
        return row
    digest = hashlib.sha256(data).hexdigest()
    row.update(doc_id=digest[:16], content_sha256=digest, n_bytes=len(data))
    try:
        text, encoding = decode_bytes(data)
    except (UnicodeDecodeError, ValueError, LookupError) as exc:
        row.update(status="error", error=f"could not decode {source_path}: {type(exc).__name__}: {exc}")
        return row
    text = normalize_newlines(text)
    if "\x00" in text:
        row.update(status="error", error=f"{source_path} decodes to text with NUL characters (binary file?)")
        return row
    row.update(text=text, encoding=encoding, n_chars=len(text))
    if not text.strip():
        row.update(status="empty", error=f"{source_path} has no text")
    return row


def ingest_files(batch: pd.DataFrame, config: Config) -> pd.DataFrame:
    """Stage function: a file-listing batch in, a ``documents`` batch out.

    Input columns: ``source_path``, ``abs_path`` (str). Output: one row per file with the
    columns of :data:`DOCUMENT_COLUMNS` (``n_bytes``/``n_chars`` int64, the rest str or None).
    """
    rows = [read_document(sp, ap) for sp, ap in zip(batch["source_path"], batch["abs_path"], strict=True)]
    for row in rows:
        if row["status"] != "ok":
            log.warning("document %s: %s", row["source_path"], row["error"])
    return pd.DataFrame(rows, columns=list(DOCUMENT_COLUMNS))


STAGE = Stage(name="ingest", fn=ingest_files, requires=LISTING_COLUMNS, adds=DOCUMENT_COLUMNS)
