"""Ingest: find the corpus files, read and decode them, and give each document a stable id.

Order of decoding (first that succeeds wins):

1. a byte-order mark (UTF-8, UTF-16 LE/BE) -> that codec;
2. strict UTF-8;
3. detection: every candidate of charset-normalizer (``from_bytes``) plus GB18030 and
   Big5-HKSCS is decoded strictly, and the most plausible text wins (:func:`plausibility`);
   charset-normalizer's first choice is kept unless another is clearly more plausible. Short
   Chinese byte strings are often misdetected (GB bytes read as Korean CP949, Big5 as GB), and
   a character-frequency check catches that. GB2312/GBK are widened to
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
from collections import Counter
from functools import lru_cache
from pathlib import Path

import jieba
import pandas as pd
from charset_normalizer import from_bytes

from .config import Config
from .normalize import to_script
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
#: Chinese codecs always tried on non-UTF-8 bytes, whatever the detector says.
CHINESE_CODECS = ("gb18030", "big5hkscs")
#: Characters of a candidate decoding that :func:`plausibility` looks at.
PLAUSIBILITY_SAMPLE = 4000
#: How many of jieba's most frequent Han characters count as plausible (about the size of the
#: 3,500-character common list plus the second tier of the 2013 General Standard Chinese
#: Characters table).
N_FREQUENT_HAN = 5000
#: charset-normalizer's first choice stands unless another decoding is this much more plausible.
PLAUSIBILITY_MARGIN = 0.02
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
    candidates: dict[str, str] = {}
    for match in from_bytes(data):
        for codec in (_WIDEN.get(match.encoding.lower(), match.encoding), match.encoding):
            try:
                candidates.setdefault(codec, data.decode(codec))
                break
            except (UnicodeDecodeError, LookupError):  # the wider codec lacks a mapping
                continue
    for codec in CHINESE_CODECS:
        try:
            candidates.setdefault(codec, data.decode(codec))
        except UnicodeDecodeError:
            pass
    if not candidates:
        raise ValueError("no character encoding decodes these bytes (charset-normalizer found no match)")
    scores = {codec: plausibility(text) for codec, text in candidates.items()}
    first = next(iter(candidates))  # charset-normalizer's best, when it had any
    best = max(scores, key=scores.get)
    codec = first if scores[first] >= scores[best] - PLAUSIBILITY_MARGIN else best
    return candidates[codec], codec


@lru_cache(maxsize=1)
def _frequent_han() -> frozenset[str]:
    """The ``N_FREQUENT_HAN`` most frequent Han characters of jieba's dictionary (word counts summed
    per character): a Simplified Chinese character-frequency list shipped with a dependency."""
    counts: Counter = Counter()
    with (Path(jieba.__file__).parent / "dict.txt").open(encoding="utf-8") as fh:
        for line in fh:
            parts = line.split()
            if len(parts) >= 2 and parts[1].isdigit():
                for ch in parts[0]:
                    counts[ch] += int(parts[1])
    return frozenset(ch for ch, _ in counts.most_common(N_FREQUENT_HAN))


def plausibility(text: str) -> float:
    """How plausible ``text`` is as a Chinese or English article: the share of its first
    ``PLAUSIBILITY_SAMPLE`` characters that are printable ASCII or whitespace, Latin-1 letters,
    general or CJK punctuation, full-width forms, or frequent Han characters (Traditional
    characters are mapped to Simplified first). Mis-decoded bytes give rare Han characters,
    Hangul or symbols, and score low. Returns a value in [0, 1] (1.0 for empty text).
    """
    sample = text[:PLAUSIBILITY_SAMPLE]
    if not sample:
        return 1.0
    frequent = _frequent_han()
    simplified = to_script(sample, "zh-Hans")
    good = 0
    for ch in simplified:
        o = ord(ch)
        if (ch.isascii() and (ch.isprintable() or ch.isspace())) or 0xC0 <= o <= 0xFF or ch in frequent:
            good += 1
        elif 0x2000 <= o <= 0x206F or 0x3000 <= o <= 0x303F or 0xFF00 <= o <= 0xFFEF:
            good += 1
    return good / len(simplified)


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
