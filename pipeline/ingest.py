"""Ingest: read each corpus file by its format, decode, repair, and give every document a stable id.

Per file (:func:`read_documents`), in this order:

1. **format** by suffix (:mod:`pipeline.formats`): ``.txt``/``.md`` one document each;
   ``.html``/``.htm`` one document, the main content by trafilatura; ``.jsonl`` one per
   non-blank line; ``.csv`` one per row after the header (:func:`read_csv`). A record that names
   a paper and holds no article text is a paper record (:mod:`pipeline.paper_records`). Which
   files are read is :mod:`pipeline.listing`'s.
2. **decoding** (:func:`pipeline.decoding.decode`), noted wherever it is a guess or a repair.
3. **line endings** to ``\n``; a leading BOM character removed; stray NUL characters removed
   with a note (:func:`remove_stray_nuls`; more make the file a binary-content error).
4. **HTML only**: main content extracted (:func:`pipeline.formats.extract_html`).
5. **mojibake repair** (:func:`repair_mojibake`, ``ftfy.fix_encoding`` on flagged lines).
6. **Unicode normalization** (:func:`normalize_unicode`): spaces, zero-width and bidi controls,
   full-width ASCII, Kangxi radicals and compatibility ideographs; never NFKC of the whole text.

Later offsets point into the resulting ``text``. When steps 4-6 change anything, ``raw_text`` keeps
the decoded input and ``notes`` says what was done. A file (or line) that cannot be read, decoded or
parsed becomes a row with ``status == "error"`` and the message in ``error``; such a row, and an
``empty`` one, carries the errors table's stage and error type (:data:`ERROR_FIELDS`, :func:`_fail`).
"""

from __future__ import annotations

import codecs
import csv
import hashlib
import json
import logging
import re
import unicodedata
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import ftfy
import pandas as pd
import yaml
from ftfy.badness import is_bad

from . import formats, paper_records
from .config import Config
from .decoding import Decoded, decode
from .errors import BinaryContentError
from .fields import find_venue_years
from .listing import LISTING_COLUMNS, list_corpus, open_listed  # noqa: F401 - list_corpus: the ingest API
from .stage import Stage

log = logging.getLogger(__name__)

#: ``errors.parquet``'s ``stage`` and ``error_type`` of a ``documents`` row whose status is
#: ``error`` or ``empty`` (:func:`pipeline.run_tables.errors_table`), set where the failure is
#: found (:func:`_fail`, :class:`pipeline.errors.ErrorText`); internal (a ``_`` name: not
#: in the published ``documents``). A read row that did not fail has neither key.
ERROR_FIELDS = ("_error_stage", "_error_type")
#: Columns ingest adds (the ``documents`` contract).
DOCUMENT_COLUMNS = (
    "doc_id", "source_path", "content_sha256", "encoding", "n_bytes", "n_chars", "text", "status", "error",
    "raw_text", "title", "url", "published", "notes", "paper_record", *ERROR_FIELDS,
)


def normalize_newlines(text: str) -> str:
    """Turn CRLF and lone CR into LF and drop a leading U+FEFF. Length may shrink."""
    return text.lstrip("\ufeff").replace("\r\n", "\n").replace("\r", "\n")


# --- text repairs -------------------------------------------------------------------------------

#: Unicode space separators (general category Zs) other than U+0020: NBSP U+00A0, U+1680,
#: U+2000-U+200A, U+202F, U+205F and the ideographic space U+3000. Each becomes one ASCII space.
SPACE_SEPARATORS = "".join(ch for ch in map(chr, range(0x110000)) if unicodedata.category(ch) == "Zs" and ch != " ")
#: Zero-width characters that are removed: ZWSP, ZWNJ, ZWJ, word joiner, and U+FEFF inside text
#: (a leading one is a BOM, dropped by :func:`normalize_newlines`).
ZERO_WIDTH = "\u200b\u200c\u200d\u2060\ufeff"
#: Full-width ASCII digits and letters (U+FF10-U+FF19, U+FF21-U+FF3A, U+FF41-U+FF5A), mapped to
#: ASCII. CJK punctuation (U+3000-U+303F) and the full-width forms Chinese text uses as
#: punctuation stay (:data:`FULLWIDTH_SYMBOLS` names the ones that fold).
FULLWIDTH_ALNUM = "".join(chr(c) for r in ((0xFF10, 0xFF19), (0xFF21, 0xFF3A), (0xFF41, 0xFF5A))
                          for c in range(r[0], r[1] + 1))
#: Full-width ASCII symbols that stand inside technical tokens (``GPT－4``, ``1000％``,
#: ``C＋＋``, ``a＠b``) and are no Chinese punctuation: ``＃＄％＆＊＋－＜＝＞＠＼＾＿｀``, mapped to
#: ASCII as :data:`FULLWIDTH_ALNUM` is. The forms Chinese typography uses as punctuation stay:
#: ``！＂＇（），．／：；？［］｛｝｜～`` (``．`` becomes ``.`` only between two ASCII digits,
#: :data:`_FULLWIDTH_DECIMAL_POINT`: ``3．5`` is a number, ``1．标题`` a list mark).
FULLWIDTH_SYMBOLS = "＃＄％＆＊＋－＜＝＞＠＼＾＿｀"
#: Kangxi radicals (U+2F00-U+2FD5, ``⽅`` for ``方``), each mapped to the unified ideograph its
#: Unicode compatibility decomposition names (``unicodedata.normalize("NFKC", ch)``, applied to
#: these code points only).
KANGXI_RADICALS = "".join(map(chr, range(0x2F00, 0x2FD6)))
#: CJK compatibility ideographs (U+F900-U+FAFF) that have a decomposition, each mapped to its
#: unified ideograph (NFKC of that one code point; ``﨑`` U+FA11 and the other unified ideographs
#: of the block have none and stay).
CJK_COMPATIBILITY = "".join(ch for ch in map(chr, range(0xF900, 0xFB00)) if unicodedata.normalize("NFKC", ch) != ch)
#: Bidirectional formatting characters (Unicode Bidirectional Algorithm, UAX #9: ALM U+061C,
#: LRM/RLM U+200E/U+200F, the embeddings and overrides U+202A-U+202E, the isolates
#: U+2066-U+2069), removed: they are invisible, reorder what a reader sees, and break matching.
BIDI_CONTROLS = "\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069"
_UNICODE_TABLE = {
    **{ord(ch): " " for ch in SPACE_SEPARATORS},
    **{ord(ch): None for ch in ZERO_WIDTH + BIDI_CONTROLS},
    **{ord(ch): chr(ord(ch) - 0xFEE0) for ch in FULLWIDTH_ALNUM + FULLWIDTH_SYMBOLS},
    **{ord(ch): unicodedata.normalize("NFKC", ch) for ch in KANGXI_RADICALS + CJK_COMPATIBILITY},
}
_UNICODE_KINDS = {
    **dict.fromkeys(SPACE_SEPARATORS, "space separators -> ' '"),
    **dict.fromkeys(ZERO_WIDTH, "zero-width characters removed"),
    **dict.fromkeys(BIDI_CONTROLS, "bidi controls removed"),
    **dict.fromkeys(FULLWIDTH_ALNUM, "full-width letters/digits -> ASCII"),
    **dict.fromkeys(FULLWIDTH_SYMBOLS, "full-width symbols -> ASCII"),
    **dict.fromkeys(KANGXI_RADICALS, "Kangxi radicals -> unified ideographs"),
    **dict.fromkeys(CJK_COMPATIBILITY, "CJK compatibility ideographs -> unified ideographs"),
}
_UNICODE_TARGETS = re.compile("[" + re.escape("".join(_UNICODE_KINDS)) + "]")
#: A full-width full stop between two digits (after the digits fold): a decimal point.
_FULLWIDTH_DECIMAL_POINT = re.compile(r"(?<=[0-9])．(?=[0-9])")


def clean_title(title: str | None) -> str | None:
    """A metadata title as the text is: mojibake repaired (ftfy ``fix_encoding``), Unicode
    spaces, zero-width, bidi, full-width and compatibility characters normalized (:func:`normalize_unicode`), control
    characters removed, whitespace collapsed. None stays None; an empty result becomes None."""
    if title is None:
        return None
    fixed, _ = normalize_unicode(ftfy.fix_encoding(title))
    fixed = " ".join("".join(ch for ch in fixed if ch.isprintable() or ch.isspace()).split())
    return fixed or None


def normalize_unicode(text: str) -> tuple[str, dict[str, int]]:
    """Normalize the characters of :data:`SPACE_SEPARATORS` (to a space), :data:`ZERO_WIDTH` and
    :data:`BIDI_CONTROLS` (removed), :data:`FULLWIDTH_ALNUM` and :data:`FULLWIDTH_SYMBOLS` (to
    ASCII), :data:`KANGXI_RADICALS` and :data:`CJK_COMPATIBILITY` (to unified ideographs), and a
    full-width ``．`` between two digits (to ``.``); nothing else changes (no NFKC of the whole
    text, so ``，：（）《》「」。／｜～``, ``ﬁ``, ``①``, ``½`` and half-width katakana stay).

    Returns:
        ``(text, counts)`` where ``counts`` maps a description of each kind of change to how
        many characters it affected (empty when nothing changed). Removing zero-width and bidi
        characters shortens the text; the other changes keep its length, each
        character replaced by one character.
    """
    found = Counter(_UNICODE_KINDS[ch] for ch in _UNICODE_TARGETS.findall(text))
    if found:
        text = text.translate(_UNICODE_TABLE)
    if "．" in text:
        text, n = _FULLWIDTH_DECIMAL_POINT.subn(".", text)
        if n:
            found["full-width symbols -> ASCII"] += n
    return text, dict(found)


def _mojibake_leads() -> str:
    """Characters that a UTF-8 lead byte (0xC2-0xF4) becomes in the single-byte encodings ftfy
    undoes, plus the C1 controls: a line without any of them is left unchanged by
    ``ftfy.fix_encoding``, so ftfy's (slow) badness check is skipped there."""
    import ftfy.bad_codecs  # noqa: F401 - registers the "sloppy-" codecs named in CHARMAP_ENCODINGS
    from ftfy.chardata import CHARMAP_ENCODINGS

    leads = {chr(c) for c in range(0x80, 0xA0)}
    for encoding in CHARMAP_ENCODINGS:
        leads |= set(bytes(range(0xC2, 0xF5)).decode(encoding, errors="ignore"))
    return "".join(sorted(leads))


_MOJIBAKE_LEAD = re.compile(f"[{re.escape(_mojibake_leads())}]")


def repair_mojibake(text: str) -> tuple[str, int]:
    """Repair UTF-8 that was decoded as windows-1252/Latin-1 (``Donâ€™t`` -> ``Don’t``,
    ``è®ºæ–‡`` -> ``论文``) with ``ftfy.fix_encoding``.

    Only that fixer, not ``ftfy.fix_text`` (which also straightens quotes, changes width and
    more): https://ftfy.readthedocs.io/en/latest/fixes.html. Like ``fix_text``, it works line by
    line, so one line of mojibake is fixed in an otherwise correct document, and only lines that
    ftfy's heuristic ``ftfy.badness.is_bad`` flags are touched (ordinary Chinese, English and
    accented Latin text are not flagged). Line count is kept.

    Returns:
        ``(text, n_lines_repaired)``.
    """
    if text.isascii() or not _MOJIBAKE_LEAD.search(text):
        return text, 0
    lines = text.split("\n")
    repaired = 0
    for i, line in enumerate(lines):
        if _MOJIBAKE_LEAD.search(line) and is_bad(line):
            fixed = ftfy.fix_encoding(line)
            if fixed != line and "\n" not in fixed:
                lines[i] = fixed
                repaired += 1
    return "\n".join(lines), repaired


def prepare_text(text: str) -> tuple[str, list[str]]:
    """Steps 5 and 6 of the module docstring on decoded, newline-normalized text.

    Returns:
        ``(text, notes)``: the repaired and normalized text, and one note per change made.
    """
    notes = []
    text, n_repaired = repair_mojibake(text)
    if n_repaired:
        notes.append(f"ftfy: repaired mojibake on {n_repaired} line(s)")
    text, counts = normalize_unicode(text)
    if counts:
        notes.append("unicode: " + ", ".join(f"{n} {kind}" for kind, n in counts.items()))
    return text, notes


# --- readers ------------------------------------------------------------------------------------


def _row(source_path: str, data: bytes | None = None) -> dict:
    """A ``documents`` row with the byte-derived columns set and ``status="ok"``."""
    row = dict.fromkeys(c for c in DOCUMENT_COLUMNS if c not in ERROR_FIELDS)
    row.update(source_path=source_path, text="", n_chars=0, n_bytes=0, status="ok")
    if data is not None:
        digest = hashlib.sha256(data).hexdigest()
        row.update(doc_id=digest[:16], content_sha256=digest, n_bytes=len(data))
    return row


def _fail(row: dict, error: str, error_type: str, status: str = "error", **columns: object) -> dict:
    """``row`` with ``status`` (``error`` or ``empty``), the message ``error`` and the errors
    table's stage (``ingest``) and ``error_type`` (:data:`ERROR_FIELDS`); ``columns``: other
    columns to set."""
    row.update(columns, status=status, error=error, _error_stage="ingest", _error_type=error_type)
    return row


def _exception_type(exc: BaseException) -> str:
    """The errors table's ``error_type`` of an exception a reader caught: ``BinaryContent`` for
    :class:`pipeline.errors.BinaryContentError`, else its class name."""
    return "BinaryContent" if isinstance(exc, BinaryContentError) else type(exc).__name__


#: NUL characters of a decoded text are stray bytes of a text file (a truncated write, a
#: scraper's padding, a bad join) and are removed with a note (:func:`remove_stray_nuls`) when
#: they are at most this share of its characters (one NUL alone is always stray)...
MAX_STRAY_NUL_SHARE = 0.01
#: ...or, when the text without them reads as text (:func:`_reads_as_text`), at most this share,
#: or one run that ends the text (padding, whatever its length). More NULs make the file binary:
#: executables, images and databases hold NUL in far more than one byte of twenty.
MAX_NUL_SHARE_IN_TEXT = 0.05
#: Control characters other than NUL and whitespace (tab, newline, carriage return, form feed,
#: vertical tab, escape) that text without its NULs may hold, as a share of its characters: a
#: binary file's bytes read as text give many (about one byte in eight of random bytes).
MAX_CONTROL_SHARE_IN_TEXT = 0.001
_OTHER_CONTROL = re.compile(r"[\x01-\x08\x0e-\x1a\x1c-\x1f\x7f]")


def _reads_as_text(text: str) -> bool:
    """Whether ``text`` (a decoding with its NULs removed) reads as text: it has non-blank
    characters and at most :data:`MAX_CONTROL_SHARE_IN_TEXT` of them are other control
    characters."""
    return bool(text.strip()) and len(_OTHER_CONTROL.findall(text)) <= MAX_CONTROL_SHARE_IN_TEXT * len(text)


def remove_stray_nuls(text: str) -> tuple[str, str | None]:
    """``text`` without its NUL characters and a note saying how many were removed, when they
    are stray by the rule of :data:`MAX_STRAY_NUL_SHARE` and :data:`MAX_NUL_SHARE_IN_TEXT`;
    else ``text`` unchanged (NULs left in, for the caller to reject) and None. No NUL: ``(text,
    None)``."""
    nuls = text.count("\x00")
    if not nuls:
        return text, None
    rest = text.replace("\x00", "")
    padding = "\x00" not in text.rstrip("\x00")
    if nuls > max(1, MAX_STRAY_NUL_SHARE * len(text)) and not (
            (padding or nuls <= MAX_NUL_SHARE_IN_TEXT * len(text)) and _reads_as_text(rest)):
        return text, None
    what = " (padding at the end)" if padding and nuls > 1 else ""
    return rest, f"removed {nuls} NUL character{'s' if nuls > 1 else ''}{what}"


def _finish(row: dict, raw: str, text: str, notes: list[str], label: str) -> dict:
    """Set text, raw_text, n_chars, notes and the empty/NUL statuses of a decoded row."""
    if "\x00" in text:
        return _fail(row, f"{label} decodes to text with NUL characters (binary file?)", "BinaryContent",
                     encoding=None)
    row.update(text=text, n_chars=len(text), raw_text=raw if raw != text else None,
               notes="; ".join(notes) if notes else None)
    if not text.strip():
        _fail(row, f"{label} has no text", "EmptyDocument", status="empty")
    return row


def _read_bytes(source_path: str, abs_path: str) -> tuple[bytes | None, dict | None]:
    """The file's bytes, or an error row when it cannot be read."""
    try:
        return open_listed(abs_path), None
    except OSError as exc:
        return None, _fail(_row(source_path), f"{type(exc).__name__}: {exc}", _exception_type(exc),
                           doc_id=hashlib.sha256(source_path.encode()).hexdigest()[:16])


def read_document(source_path: str, abs_path: str) -> dict:
    """Read one ``.txt``/``.md``/``.html``/``.htm`` file into a ``documents`` row.

    Columns are those of :data:`DOCUMENT_COLUMNS`: ``text`` (str, what all offsets point into),
    ``raw_text`` (str or None: the decoded file before HTML extraction, mojibake repair and
    Unicode normalization, line endings already normalized; None when equal to ``text``),
    ``title``/``url``/``published`` (str or None; HTML only), ``notes`` (str or None, ``"; "``
    between notes), ``encoding`` (Python codec name), ``n_bytes`` (bytes in the file),
    ``n_chars`` (characters of ``text``). ``doc_id`` is the first 16 hex digits of the SHA-256
    of the raw bytes, so it is stable across runs and machines and the same content under two
    names gets the same id. The format is chosen by suffix (HTML for ``.html``/``.htm``, plain
    text otherwise); JSON Lines files go through :func:`read_documents`.

    Never raises for a bad file: read or decode failures give ``status="error"`` with the
    error type and message in ``error``, ``text=""`` and ``encoding=None``; a file without text
    gets ``status="empty"``.
    """
    data, failed = _read_bytes(source_path, abs_path)
    if failed is not None:
        return failed
    row = _row(source_path, data)
    is_html = Path(source_path).suffix.lower() in formats.HTML_SUFFIXES
    try:
        decoded = decode(data, formats.sniff_html_charset(data) if is_html else None, markup=is_html)
    except (UnicodeDecodeError, ValueError, LookupError) as exc:
        return _fail(row, f"could not decode {source_path}: {type(exc).__name__}: {exc}", _exception_type(exc))
    row["encoding"] = decoded.encoding
    raw = normalize_newlines(decoded.text)
    notes = list(decoded.notes)
    raw, nul_note = remove_stray_nuls(raw)
    notes += [nul_note] if nul_note else []
    text = raw
    if is_html and "\x00" not in raw:
        # repair mojibake before extraction: trafilatura drops the C1 and NBSP characters
        # that ftfy needs to see it
        markup, n_repaired = repair_mojibake(raw)
        if n_repaired:
            notes.append(f"ftfy: repaired mojibake on {n_repaired} line(s) of the HTML")
        try:
            page = formats.extract_html(markup)
        except Exception as exc:  # noqa: BLE001 - never raise for one bad page
            return _fail(row, f"could not extract {source_path}: {type(exc).__name__}: {exc}", _exception_type(exc))
        text = normalize_newlines(page.text)
        notes += page.notes
        row.update(title=clean_title(page.title), url=page.url, published=page.published)
    text, repairs = prepare_text(text)
    return _finish(row, raw, text, notes + repairs, source_path)


def _jsonl_lines(data: bytes, decoded: Decoded) -> list[tuple[int, bytes, str]]:
    """``(line number, line bytes, line text)`` of every line, terminators left out.

    For codecs that write a newline as the byte 0x0A and never use that byte inside another
    character (UTF-8, GB18030, Big5, ...) the line bytes are the file's own bytes; for others
    (UTF-16/32) they are the line's UTF-8 encoding. The whole file decoded strictly (but for an
    incomplete final character, noted on the file), so the per-line decode replaces nothing
    else.
    """
    codec = "utf-8" if decoded.encoding == "utf-8-sig" else decoded.encoding
    try:
        ascii_newline = "\n".encode(codec) == b"\n"  # UTF-16/32 give two or four bytes (and a BOM)
    except (LookupError, UnicodeError):
        ascii_newline = False
    if not ascii_newline:
        lines = (line.removesuffix("\r") for line in decoded.text.lstrip("\ufeff").split("\n"))
        return [(i, line.encode("utf-8"), line) for i, line in enumerate(lines, 1)]
    body = data[len(codecs.BOM_UTF8):] if decoded.encoding == "utf-8-sig" else data
    out = []
    for i, raw in enumerate(body.split(b"\n"), 1):
        raw = raw[:-1] if raw.endswith(b"\r") else raw
        out.append((i, raw, raw.decode(codec, errors="replace")))
    return out


def read_jsonl(source_path: str, abs_path: str) -> list[dict]:
    """Read a JSON Lines file: one ``documents`` row per non-blank line.

    Each line is parsed by :func:`pipeline.formats.parse_jsonl_line`. ``source_path`` is
    ``"<path>#<N>"`` (N = 1-based line number); ``doc_id``/``content_sha256``/``n_bytes`` come
    from the line's bytes (see :func:`_jsonl_lines`); ``raw_text`` is the line; ``title``,
    ``url``, ``published`` come from the record; the text is repaired and normalized as a file's
    is. A line that is not valid JSON, not an object or has no text field becomes a row with
    ``status="error"`` and a message naming ``path#N``; the other lines go on. A file that
    cannot be read or decoded is one error row for the file, a file with no non-blank line one
    ``empty`` row.

    Never raises for a bad file or line.
    """
    data, failed = _read_bytes(source_path, abs_path)
    if failed is not None:
        return [failed]
    try:
        decoded = decode(data)
    except (UnicodeDecodeError, ValueError, LookupError) as exc:
        return [_fail(_row(source_path, data), f"could not decode {source_path}: {type(exc).__name__}: {exc}",
                      _exception_type(exc))]
    rows = []
    lines = _jsonl_lines(data, decoded)
    last = max((n for n, _, line in lines if line.strip()), default=0)  # (a final newline leaves a blank line)
    for n, line_bytes, line in lines:
        if not line.strip():
            continue
        label = f"{source_path}#{n}"
        row = _row(label, line_bytes)
        row.update(encoding=decoded.encoding, raw_text=line)
        notes = list(decoded.notes) if n == last else []  # the file's notes: on its last record
        record = formats.parse_jsonl_line(line)
        if record.error:
            rows.append(_fail(row, f"{label}: {record.error}", record.error_type or "InvalidRecord",
                              notes="; ".join(notes) or None))
            continue
        row.update(title=clean_title(record.title), url=record.url, published=record.published,
                   paper_record=record.paper)
        notes += record.notes
        body = record.text
        if record.paper is None and _LOOKS_LIKE_HTML.search(body):  # feeds often carry the article's HTML
            page = formats.extract_html(body)
            body = page.text
            notes += ["jsonl: the text field is HTML, so the text is its main content", *page.notes]
            if row["title"] is None:
                row["title"] = clean_title(page.title)
        text, repairs = prepare_text(normalize_newlines(body))
        rows.append(_finish(row, line, text, notes + repairs, label))
    if not rows:
        rows.append(_fail(_row(source_path, data), f"{source_path} has no text", "EmptyDocument", status="empty",
                          encoding=decoded.encoding))
    return rows


def _record_row(row: dict, record: formats.JsonlRecord, raw: str, notes: list[str], label: str) -> dict:
    """``row`` of a record of a CSV or YAML file (``label``: ``path#N``): an error row naming it
    when :func:`pipeline.formats.parse_record` rejected it, else its text, title, URL, date and
    paper fields, ``notes`` before the record's own."""
    if record.error:
        return _fail(row, f"{label}: {record.error}", record.error_type or "InvalidRecord")
    row.update(title=clean_title(record.title), url=record.url, published=record.published, paper_record=record.paper)
    text, repairs = prepare_text(normalize_newlines(record.text))
    return _finish(row, raw, text, [*notes, *record.notes, *repairs], label)


class _YamlLoader(getattr(yaml, "CSafeLoader", yaml.SafeLoader)):  # type: ignore[misc]
    """PyYAML's safe loader (on libyaml when PyYAML was built with it) that lists in ``repeated``
    the keys a mapping gives twice: PyYAML keeps the last value without a word."""

    def __init__(self, stream: str) -> None:
        super().__init__(stream)
        self.repeated: list[str] = []

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict:
        keys = [k.value for k, _ in node.value if isinstance(k, yaml.ScalarNode) and k.tag != "tag:yaml.org,2002:merge"]
        self.repeated += [k for k, n in Counter(keys).items() if n > 1]
        return super().construct_mapping(node, deep)


def _load_yaml(text: str) -> tuple[list[Any], list[str]]:
    """Every document of a YAML text and the keys some mapping of it gives twice."""
    loader = _YamlLoader(text)
    try:
        docs = []
        while loader.check_data():
            docs.append(loader.get_data())
        return docs, loader.repeated
    finally:
        loader.dispose()


def read_yaml(source_path: str, abs_path: str) -> list[dict]:
    """Read a YAML file (every document of it, PyYAML's safe loader): one ``documents`` row
    per record of :func:`pipeline.formats.yaml_records`, each read by
    :func:`pipeline.formats.parse_record` as a JSONL record is.

    ``source_path`` is ``"<path>#<N>"``, N the record's number in the file (1-based);
    ``raw_text`` and the bytes behind ``doc_id``/``content_sha256``/``n_bytes`` are the record as
    JSON (keys in file order). A record that names no paper and holds no text is an error row;
    one with a name and no other field of a paper (:func:`_names_a_paper`: a site's navigation
    link, a workflow's step) an ``empty`` row.
    A file that cannot be read, decoded or parsed as YAML is one error row; a file with no list
    of records (a configuration file, a single mapping) one ``empty`` row. Never raises.
    """
    data, failed = _read_bytes(source_path, abs_path)
    if failed is not None:
        return [failed]
    try:
        decoded = decode(data)
        text = decoded.text.lstrip("\ufeff")
        budget = [formats.YAML_VALUES_PER_CHAR * len(text)]  # shared by the file's documents
        docs, repeated = _load_yaml(text)
        records = [r for doc in docs for r in formats.yaml_records(doc, budget)]
    except (UnicodeDecodeError, ValueError, LookupError, RecursionError, yaml.YAMLError) as exc:
        detail = " ".join(str(exc).split())
        return [_fail(_row(source_path, data), f"could not read {source_path} as YAML: {type(exc).__name__}: {detail}",
                      "InvalidYAML" if isinstance(exc, yaml.YAMLError) else _exception_type(exc))]
    rows = []
    for n, obj in enumerate(records, 1):
        label, raw = f"{source_path}#{n}", json.dumps(obj, ensure_ascii=False)
        row = _row(label, raw.encode())
        row.update(encoding=decoded.encoding, raw_text=raw)
        if not any(paper_records.field_key(k) in _NAMING_FIELDS for k in obj):
            keys = ", ".join(map(repr, list(obj)[:10]))
            rows.append(_fail(row, f"{label}: a mapping with no title or text field (its keys: {keys}): not a paper, "
                                   "a site's or a tool's settings", "EmptyDocument", status="empty",
                              encoding=decoded.encoding))
            continue
        record = formats.parse_record(obj)
        if (not record.error and record.paper is not None and not _names_a_paper(json.loads(record.paper))
                and not any(isinstance(v, str) and _DOI.search(v) for v in obj.values())):
            rows.append(_fail(row, f"{label}: a name ({record.title!r}) and no field of a paper (authors, venue, "
                                   "year, award, abstract, a link): a site's or a tool's settings", "EmptyDocument",
                              status="empty", encoding=decoded.encoding))
            continue
        notes = list(decoded.notes)
        if repeated:
            notes.append(f"yaml: a mapping of this file names {', '.join(map(repr, dict.fromkeys(repeated)))} "
                         "more than once: the last value is read")
        rows.append(_record_row(row, record, raw, notes, label))
    if not rows:
        rows.append(_fail(_row(source_path, data), f"{source_path} holds no list of records (mappings): it has no text",
                          "EmptyDocument", status="empty", encoding=decoded.encoding))
    return rows


#: Paper fields (:func:`pipeline.paper_records.read_record`) of which a YAML record has one at
#: least besides its title: a list of named mappings without any is a site's navigation or a
#: workflow's steps ("- name: Run tests / run: pytest").
_PAPER_EVIDENCE = ("authors", "institutions", "abstract", "urls", "venue", "year", "award_raw", "arxiv_id")


#: Fields (casefolded) of which a YAML mapping names one at least to be read as a record.
_NAMING_FIELDS = frozenset(paper_records.field_key(f) for f in (
    *paper_records.TEXT_FIELDS, *paper_records.TITLE_FIELDS, *paper_records.TITLE_ZH_FIELDS))


#: A DOI in any field of a record ("id: doi:10.1145/3539618.3591874"): a publication's identifier.
_DOI = re.compile(r"\b10\.\d{4,9}/\S+")


def _names_a_paper(fields: dict) -> bool:
    """Whether the paper fields of a YAML record hold more than a title (:data:`_PAPER_EVIDENCE`)."""
    return any(fields.get(key) for key in _PAPER_EVIDENCE)


#: The csv module's limit on one cell (its default is 131,072 characters), raised for
#: :func:`read_csv` so that a long abstract or article cell does not fail the file.
CSV_FIELD_LIMIT = 10 * 1024 * 1024
#: The delimiters :func:`read_csv` sniffs for in the header line (comma when none is clear).
CSV_DELIMITERS = ",;\t|"
#: Suffixes of files whose delimiter is a tab by their format, not sniffed: a header of one
#: column, or one whose cells hold commas ("authors, affiliations"), sniffs as a comma.
TAB_SUFFIXES = (".tsv",)
#: Every field name a record is read by (casefolded), for :func:`_missing_header`.
_KNOWN_FIELDS = frozenset(paper_records.field_key(f) for f in (
    *paper_records.TEXT_FIELDS, *paper_records.TITLE_FIELDS, *paper_records.TITLE_ZH_FIELDS,
    *paper_records.PAPER_FIELDS, *paper_records.PUBLICATION_FIELDS, *paper_records.VENUE_HINT_FIELDS,
    *(f for names in formats.JSONL_META_FIELDS.values() for f in names)))
#: A cell that reads as a field name: one word (letters, digits, ``_``, ``-``) starting with a letter.
_FIELD_NAME = re.compile(r"[^\W\d_][\w-]{0,39}")
_YEAR_CELL = re.compile(r"\d{4}(?:\.0+)?")
#: A cell that is a link: a URL, a ``www.`` address or a DOI (no field name looks so).
_LINK_CELL = re.compile(r"(?:[a-z][a-z0-9+.-]*://|www\.|10\.\d{4,9}/)\S", re.I)


@dataclass(frozen=True)
class _CsvRecord:
    """One record of a CSV text: its number (the header is 1), its text as in the file, and its
    cells, or the csv module's error for a record it could not read."""

    n: int
    raw: str
    cells: list[str]
    error: str | None = None


def _csv_delimiter(header_line: str) -> str:
    """The delimiter of a CSV file, sniffed from its header line (``csv.Sniffer`` over
    :data:`CSV_DELIMITERS`), or a comma when the sniffer cannot tell."""
    try:
        return csv.Sniffer().sniff(header_line, delimiters=CSV_DELIMITERS).delimiter
    except csv.Error:
        return ","


def _csv_records(text: str, delimiter: str | None = None) -> list[_CsvRecord]:
    """Every record of a newline-normalized CSV text, the header first (a quoted cell may span
    lines, so a record may be several lines; lines end at ``\n`` only, so a U+2028 in a cell
    stays in its cell). The delimiter is ``delimiter``, or when None sniffed from the first line
    with a character other than a delimiter or white space (:func:`_csv_delimiter`).
    A record the csv module cannot read (a cell over :data:`CSV_FIELD_LIMIT`) is kept with its
    ``error``, and reading goes on after it. A quote that is never closed would make the rest of
    the file one cell: that record is its first line, with an ``error``, and reading goes on at
    the next line."""
    lines = [line + "\n" for line in text.split("\n")]
    lines[-1] = lines[-1][:-1]
    if not lines[-1]:
        lines.pop()
    if csv.field_size_limit() < CSV_FIELD_LIMIT:  # process-wide; only ever raised
        csv.field_size_limit(CSV_FIELD_LIMIT)
    if delimiter is None:
        blank = CSV_DELIMITERS + " \r\n"
        delimiter = _csv_delimiter(next((line for line in lines if line.strip(blank)), ""))
    out: list[_CsvRecord] = []
    start: int | None = 0
    while start is not None:
        start = _read_csv_lines(lines, start, delimiter, out)
    return out


def _read_csv_lines(lines: list[str], start: int, delimiter: str, out: list[_CsvRecord]) -> int | None:
    """Append the records of ``lines[start:]`` to ``out``; returns None at the end, or, when the
    last record opened a quote that is never closed (it ran to the end of the file, spanning
    lines, with an odd number of ``"``), the line after its first, where reading goes on (the
    record is then its first line, with an ``error``)."""
    reader = csv.reader(lines[start:], delimiter=delimiter)
    consumed = 0
    while True:
        try:
            cells, error = next(reader), None
        except StopIteration:
            break
        except csv.Error as exc:
            cells, error = [], f"not valid CSV: {exc}"
            if reader.line_num == consumed:  # nothing read: stop rather than loop
                break
        raw = "".join(lines[start + consumed:start + reader.line_num])
        first, consumed = start + consumed, reader.line_num
        if error is None and start + consumed == len(lines) and consumed - (first - start) > 1 and raw.count('"') % 2:
            swallowed = len(lines) - first - 1
            out.append(_CsvRecord(len(out) + 1, lines[first].rstrip("\n"), [],
                                  f"not valid CSV: a quote opened in this row is never closed (it would read the "
                                  f"{swallowed} line(s) after it as one cell); those lines are read as rows"))
            return first + 1
        out.append(_CsvRecord(len(out) + 1, raw.rstrip("\n"), cells, error))
    return None


def _rows_inside_cell(raw: str, n_columns: int, delimiter: str) -> int:
    """How many lines after the first of a record (a quoted cell spanning lines) read on their
    own as a whole row: ``n_columns`` (2 or more) cells, the first not blank. A prose line with
    commas may pass too; a quote left open across rows makes one per row."""
    if n_columns < 2 or "\n" not in raw:
        return 0
    count = 0
    for line in raw.split("\n")[1:]:
        if line.count(delimiter) >= n_columns - 1:
            cells = next(csv.reader([line], delimiter=delimiter), [])
            count += len(cells) == n_columns and bool(cells[0].strip())
    return count


def _missing_header(cells: list[str]) -> str | None:
    """Why the first record of a CSV file is data rather than a header, or None when it reads
    as a header. Data: a cell that is a 4-digit year, a link (:data:`_LINK_CELL`), a venue as a
    whole (:func:`pipeline.fields.find_venue_years`: "CVPR", "NeurIPS 2024") or over 100
    characters; else a header when a cell is a known field name (:data:`_KNOWN_FIELDS`, as
    :func:`pipeline.paper_records.field_key` reads it), or when every non-empty cell is one word
    starting with a letter (:data:`_FIELD_NAME`: field names of another export, noted by
    :func:`_doubtful_header`); else data (a paper's row: "Title of the Paper,Ann Lee,CVPR")."""
    cells = [c.strip() for c in cells]
    for cell in cells:
        if _YEAR_CELL.fullmatch(cell):
            return f"its cell {cell!r} is a year"
        if _LINK_CELL.match(cell):
            return f"its cell {cell[:80]!r} is a link"
        if (venues := find_venue_years(cell)) and venues[0][2] == 0 and venues[0][3] == len(cell):
            return f"its cell {cell!r} is a venue"
        if len(cell) > 100:
            return f"it has a cell of {len(cell):,} characters"
    if _known_fields(cells):
        return None
    words = [c for c in cells if c]
    if not words or not all(_FIELD_NAME.fullmatch(c) for c in words):
        return "no cell is a known field name, and not every cell is one word"
    return None


def _known_fields(cells: list[str]) -> list[str]:
    """The cells that are a known field name (:data:`_KNOWN_FIELDS`)."""
    return [c for c in cells if c.strip() and paper_records.field_key(c) in _KNOWN_FIELDS]


def _doubtful_header(cells: list[str]) -> str | None:
    """A note for a header that :func:`_missing_header` accepts though no cell is a known field
    name (its rows then name no paper): it may be a paper's row; None for any other header."""
    if _known_fields(cells):
        return None
    shown = ", ".join(repr(c.strip()) for c in cells if c.strip())
    return (f"csv: the header row names no known field ({shown}): if it is a paper's row, the file has no "
            "header and that row is not read")


def _header_columns(header: list[str]) -> tuple[dict[str, list[int]], str | None]:
    """The header's field names (stripped, first spelling of each name as matched
    case-insensitively) to their column indices, and a note naming the fields the header names
    more than once (None when none)."""
    columns: dict[str, list[int]] = {}
    spelled: dict[str, str] = {}
    for i, name in enumerate(h.strip() for h in header):
        if name:
            columns.setdefault(spelled.setdefault(name.casefold(), name), []).append(i)
    twice = [name for name, idx in columns.items() if len(idx) > 1]
    note = (f"csv: the header names {', '.join(map(repr, twice))} more than once: the first non-empty "
            "cell of each is read") if twice else None
    return columns, note


#: Columns that may change from row to row of one paper in an export of one author a row:
#: the author's name, affiliation and place in the list (matched case-insensitively).
PER_AUTHOR_COLUMNS = frozenset({
    *paper_records.AUTHOR_FIELDS, *paper_records.INSTITUTION_FIELDS, "author_order", "author_position",
    "author_rank", "email", "orcid", "author_id", "author_email", "作者顺序", "作者順序"})

#: Per-author columns that give the author's place in the paper's author list.
ORDER_COLUMNS = frozenset({"author_order", "author_position", "author_rank",
                           "作者顺序", "作者順序"})


def _one_author_a_row(records: list[_CsvRecord], columns: dict[str, list[int]], width: int) -> list[list[_CsvRecord]]:
    """The data records grouped into papers: consecutive records that differ only in the
    :data:`PER_AUTHOR_COLUMNS`, with a title cell (an author cell may be empty; blank lines
    between them are skipped), are one paper's rows in an
    export of one author a row (a spreadsheet of a paper's authors); any other record is a group
    of its own. Where a column gives the author's place in the list (:data:`ORDER_COLUMNS`), a
    place that is not after the previous row's (1, 2, then 1 again) starts the next paper."""
    author_cols = [i for name, idx in columns.items() if name.casefold() in PER_AUTHOR_COLUMNS for i in idx]
    order_cols = [i for name, idx in columns.items() if name.casefold() in ORDER_COLUMNS for i in idx]
    names = [i for name, idx in columns.items() if name.casefold() in paper_records.AUTHOR_FIELDS for i in idx]
    titles = [i for name, idx in columns.items()
              if name.casefold() in (*paper_records.TITLE_FIELDS, *paper_records.TITLE_ZH_FIELDS) for i in idx]
    groups: list[list[_CsvRecord]] = []
    key_of_last, order_of_last = None, None
    for rec in records:
        if not rec.error and not rec.raw.strip():
            continue  # a blank line (read_csv skips it) does not part a paper's rows
        cells = rec.cells + [""] * (width - len(rec.cells))
        usable = (names and titles and not rec.error and len(rec.cells) <= width
                  and any(cells[i].strip() for i in titles))
        key = tuple(c.strip() for i, c in enumerate(cells) if i not in author_cols) if usable else None
        order = next((int(c) for i in order_cols if (c := cells[i].strip()).isdigit()), None)
        restart = order is not None and order_of_last is not None and order <= order_of_last
        if key is not None and key == key_of_last and not restart:
            groups[-1].append(rec)
        else:
            groups.append([rec])
        key_of_last, order_of_last = key, order
    return groups


def _merged_record(group: list[_CsvRecord], columns: dict[str, list[int]], width: int) -> _CsvRecord:
    """One record of a paper's rows (:func:`_one_author_a_row`): each per-author column's
    distinct non-empty cells in row order, joined by ``"; "``; the other cells those of the
    first row; the rows' text as in the file."""
    if len(group) == 1:
        return group[0]
    rows = [rec.cells + [""] * (width - len(rec.cells)) for rec in group]
    cells = list(rows[0])
    for name, idx in columns.items():
        if name.casefold() in PER_AUTHOR_COLUMNS:
            for i in idx:
                cells[i] = "; ".join(dict.fromkeys(c for r in rows if (c := r[i].strip())))
    return _CsvRecord(group[0].n, "\n".join(rec.raw for rec in group), cells)


def read_csv(source_path: str, abs_path: str) -> list[dict]:
    """Read a CSV file: one ``documents`` row per data row, each read by
    :func:`pipeline.formats.parse_record` as a dict of header names to cells.

    The first non-blank record is the header; the delimiter is sniffed from it (comma, semicolon,
    tab or ``|``; comma when unclear), except in a file of :data:`TAB_SUFFIXES`: a tab. A field
    named more than once takes the first non-empty cell among its columns (noted). A cell may hold up to :data:`CSV_FIELD_LIMIT` characters. Consecutive
    rows that differ only in :data:`PER_AUTHOR_COLUMNS` (one author a row) are one record, the
    authors in row order (noted); an author order that starts again starts the next paper.

    ``source_path`` is ``"<path>#<N>"``, N the row's spreadsheet number (header = 1; a record of
    several rows: its first); ``raw_text`` the row as in the file; ``doc_id``/``content_sha256``/
    ``n_bytes`` come from the UTF-8 bytes of the header line and the row. A row that names no paper
    and holds no text, has more cells than the header, is all empty cells, or that the csv module
    cannot read is an error row; a row with fewer cells is read with the rest empty (noted). A file
    that cannot be read or decoded, or whose first record is data (:func:`_missing_header`), is one
    error row; a file without data rows one ``empty`` row. Blank lines are skipped. Never raises.
    """
    data, failed = _read_bytes(source_path, abs_path)
    if failed is not None:
        return [failed]
    try:
        decoded = decode(data)
        tabs = Path(source_path).suffix.lower() in TAB_SUFFIXES
        records = _csv_records(normalize_newlines(decoded.text), "\t" if tabs else None)
    except (UnicodeDecodeError, ValueError, LookupError, csv.Error) as exc:
        return [_fail(_row(source_path, data), f"could not read {source_path}: {type(exc).__name__}: {exc}",
                      _exception_type(exc))]
    while records and not records[0].error and not any(c.strip() for c in records[0].cells):
        records.pop(0)
    problem = None
    if records:
        problem = records[0].error or _missing_header(records[0].cells)
        problem = problem and f"row {records[0].n} holds data, not field names ({problem})"
    if problem:
        return [_fail(_row(source_path, data), f"{source_path}: the header row is missing (no header: no field names "
                      f"to read): {problem}", "Error", encoding=decoded.encoding)]
    rows = []
    header = records[0].cells if records else []
    header_raw = records[0].raw if records else ""
    delimiter = "\t" if tabs else _csv_delimiter(header_raw)
    columns, header_note = _header_columns(header)
    doubt = _doubtful_header(header)
    header_note = "; ".join(n for n in (doubt, header_note) if n) or None
    open_quote: int | None = None  # the row whose quote is never closed (the lines after it may be its text)
    for group in _one_author_a_row(records[1:], columns, len(header)):
        rec = _merged_record(group, columns, len(header))
        if not rec.error and not rec.raw.strip():
            continue  # a blank line; a row of empty cells (",,") is an error row below
        label = f"{source_path}#{rec.n}"
        notes = [*decoded.notes, *([header_note] if header_note else [])]
        if len(group) > 1:
            notes.append(f"csv: rows {group[0].n}-{group[-1].n} differ only in their author: one paper, "
                         "read as one record with the authors in row order")
        swallowed = _rows_inside_cell(rec.raw, len(header), delimiter) if len(group) == 1 else 0
        if swallowed:
            notes.append(f"csv: a quoted cell of this row spans lines of which {swallowed} read as rows of their "
                         "own (an unclosed quote?): they are read as part of the cell")
        row = _row(label, f"{header_raw}\n{rec.raw}".encode())
        row.update(encoding=decoded.encoding, raw_text=rec.raw, notes="; ".join(notes) or None)
        if open_quote is not None and not rec.error and len(rec.cells) < len(header):
            # a short line after a quote never closed is most likely text of that quoted cell
            rec = _CsvRecord(rec.n, rec.raw, rec.cells, f"{len(rec.cells)} cell(s) after the quote of row "
                             f"{open_quote} that is never closed: likely text of that cell, not read as a row")
        if rec.error or len(rec.cells) > len(header):
            error = rec.error or f"{len(rec.cells)} cells but the header names {len(header)}"
            rows.append(_fail(row, f"{label}: {error}", "InvalidRecord"))
            if rec.error and "is never closed" in rec.error and open_quote is None:
                open_quote = rec.n
            continue
        cells = rec.cells
        if len(cells) < len(header):
            short = [h.strip() or f"column {i + 1}" for i, h in enumerate(header[len(cells):], start=len(cells))]
            notes.append(f"csv: row {rec.n} has {len(cells)} cell(s) but the header names {len(header)}: "
                         f"{', '.join(map(repr, short))} read as empty")
            row.update(notes="; ".join(notes))
        record = formats.parse_record({
            name: next((cells[i] for i in idx if i < len(cells) and cells[i].strip()), cells[idx[0]])
            for name, idx in columns.items() if idx[0] < len(cells)})
        rows.append(_record_row(row, record, rec.raw, notes, label))
    if not rows:
        rows.append(_fail(_row(source_path, data), f"{source_path} has no data rows: it has no text", "EmptyDocument",
                          status="empty", encoding=decoded.encoding))
    return rows


#: A JSONL text field that holds HTML markup: block-level tags, not a stray "<" in prose.
_LOOKS_LIKE_HTML = re.compile(r"<(?:html|body|article|div|p|h[1-6]|section|main|ul|ol|table)\b[^>]*>", re.I)
#: A ``source_path`` naming one line or row of a records file (``feed.jsonl#3``, ``table.tsv#2``).
_RECORD_PATH = re.compile(rf"^(?P<path>.*(?:{'|'.join(map(re.escape, formats.RECORD_SUFFIXES))}))"
                          r"#(?P<line>\d+)$", re.I)


def source_sort_key(source_path: str) -> tuple[str, int]:
    """Sort key of a ``source_path``: ``(path, line)`` so that ``feed.jsonl#2`` precedes
    ``feed.jsonl#10`` (and ``table.csv#2`` ``table.csv#10``); ``(source_path, 0)`` for a whole
    file."""
    m = _RECORD_PATH.match(source_path)
    return (m.group("path"), int(m.group("line"))) if m else (source_path, 0)


def read_documents(source_path: str, abs_path: str) -> list[dict]:
    """All ``documents`` rows of one file: :func:`read_jsonl` for ``.jsonl``, :func:`read_csv` for
    ``.csv`` and ``.tsv``, :func:`read_yaml` for ``.yml`` and ``.yaml``, else the one row of
    :func:`read_document`. Never raises for a bad file."""
    if Path(source_path).suffix.lower() in formats.JSONL_SUFFIXES:
        return read_jsonl(source_path, abs_path)
    if Path(source_path).suffix.lower() in formats.CSV_SUFFIXES:
        return read_csv(source_path, abs_path)
    if Path(source_path).suffix.lower() in formats.YAML_SUFFIXES:
        return read_yaml(source_path, abs_path)
    return [read_document(source_path, abs_path)]


def ingest_files(batch: pd.DataFrame, config: Config) -> pd.DataFrame:
    """Stage function: a file-listing batch in, a ``documents`` batch out.

    Input columns: ``source_path``, ``abs_path`` (str). Output: one row per document (one per
    file, one per non-blank line of a ``.jsonl`` file), in listing order, with the columns of
    :data:`DOCUMENT_COLUMNS` (``n_bytes``/``n_chars`` int64, the rest str or None).
    """
    rows = [row for sp, ap in zip(batch["source_path"], batch["abs_path"], strict=True)
            for row in read_documents(sp, ap)]
    for row in rows:
        if row["status"] != "ok":
            log.warning("document %s: %s", row["source_path"], row["error"])
    # None (not NaN) where a row has no error fields, so a later stage's failure can set them
    return pd.DataFrame([{**dict.fromkeys(ERROR_FIELDS), **row} for row in rows], columns=list(DOCUMENT_COLUMNS))


STAGE = Stage(name="ingest", fn=ingest_files, requires=LISTING_COLUMNS, adds=DOCUMENT_COLUMNS)
