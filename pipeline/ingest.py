"""Ingest: read each corpus file by its format, decode, repair, and give every document a stable id.

Per file (:func:`read_documents`), in order:

1. **format** by suffix (:mod:`pipeline.formats`; which files: :mod:`pipeline.listing`).
2. **decoding** (:func:`pipeline.decoding.decode`), noted when a guess or a repair.
3. **line endings** to ``\n``; leading BOM removed; stray NULs removed (:func:`remove_stray_nuls`).
4. **HTML only**: main content extracted (:func:`pipeline.formats.extract_html`).
5. **mojibake repair** (:func:`repair_mojibake`).
6. **Unicode normalization** (:func:`normalize_unicode`); never NFKC of the whole text.

Offsets point into the resulting ``text``; when steps 4-6 change it, ``raw_text`` keeps the decoded
input and ``notes`` says what was done. A file or line that cannot be read, decoded or parsed is a
row with ``status == "error"`` and ``error`` set, carrying :data:`ERROR_FIELDS`.
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

#: ``errors.parquet``'s ``stage`` and ``error_type`` of an ``error``/``empty`` ``documents`` row
#: (:func:`pipeline.run_tables.errors_table`); internal, not published. Absent on rows that did not fail.
ERROR_FIELDS = ("_error_stage", "_error_type")
#: Columns ingest adds (the ``documents`` contract).
DOCUMENT_COLUMNS = (
    "doc_id", "source_path", "content_sha256", "encoding", "n_bytes", "n_chars", "text", "status", "error",
    "raw_text", "title", "url", "published", "notes", "paper_record", *ERROR_FIELDS,
)


def normalize_newlines(text: str) -> str:
    """Turn CRLF and lone CR into LF and drop a leading U+FEFF. Length may shrink."""
    return text.lstrip("\ufeff").replace("\r\n", "\n").replace("\r", "\n")


#: Unicode space separators (Zs) other than U+0020; each becomes an ASCII space.
SPACE_SEPARATORS = "".join(ch for ch in map(chr, range(0x110000)) if unicodedata.category(ch) == "Zs" and ch != " ")
#: Zero-width characters removed (U+FEFF inside text; a leading one is a BOM).
ZERO_WIDTH = "\u200b\u200c\u200d\u2060\ufeff"
#: Full-width ASCII digits and letters, mapped to ASCII; CJK punctuation stays.
FULLWIDTH_ALNUM = "".join(chr(c) for r in ((0xFF10, 0xFF19), (0xFF21, 0xFF3A), (0xFF41, 0xFF5A))
                          for c in range(r[0], r[1] + 1))
#: Full-width ASCII symbols that stand inside technical tokens (``GPT－4``, ``C＋＋``), mapped to
#: ASCII; those Chinese typography uses as punctuation (``！（），．：；？``) stay.
FULLWIDTH_SYMBOLS = "＃＄％＆＊＋－＜＝＞＠＼＾＿｀"
#: Kangxi radicals (U+2F00-U+2FD5), each mapped to its NFKC unified ideograph.
KANGXI_RADICALS = "".join(map(chr, range(0x2F00, 0x2FD6)))
#: CJK compatibility ideographs (U+F900-U+FAFF) with a decomposition, mapped to NFKC.
CJK_COMPATIBILITY = "".join(ch for ch in map(chr, range(0xF900, 0xFB00)) if unicodedata.normalize("NFKC", ch) != ch)
#: Bidirectional formatting characters (UAX #9), removed: invisible, and they break matching.
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
#: A full-width full stop between two digits: a decimal point.
_FULLWIDTH_DECIMAL_POINT = re.compile(r"(?<=[0-9])．(?=[0-9])")


def clean_title(title: str | None) -> str | None:
    """A metadata title repaired as the text is (ftfy ``fix_encoding``,
    :func:`normalize_unicode`), control characters removed, whitespace collapsed; None or empty -> None."""
    if title is None:
        return None
    fixed, _ = normalize_unicode(ftfy.fix_encoding(title))
    fixed = " ".join("".join(ch for ch in fixed if ch.isprintable() or ch.isspace()).split())
    return fixed or None


def normalize_unicode(text: str) -> tuple[str, dict[str, int]]:
    """Normalize :data:`SPACE_SEPARATORS` (to space), :data:`ZERO_WIDTH` and :data:`BIDI_CONTROLS`
    (removed), :data:`FULLWIDTH_ALNUM`, :data:`FULLWIDTH_SYMBOLS` (to ASCII), :data:`KANGXI_RADICALS`,
    :data:`CJK_COMPATIBILITY` (to unified ideographs), and ``．`` between digits (to ``.``).

    Returns:
        ``(text, counts)``: counts per kind of change (empty when none). Only removals change the
        length.
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
    """Characters a UTF-8 lead byte becomes in the encodings ftfy undoes, plus C1 controls: lines
    without any skip ftfy's slow check."""
    import ftfy.bad_codecs  # noqa: F401 - registers the "sloppy-" codecs named in CHARMAP_ENCODINGS
    from ftfy.chardata import CHARMAP_ENCODINGS

    leads = {chr(c) for c in range(0x80, 0xA0)}
    for encoding in CHARMAP_ENCODINGS:
        leads |= set(bytes(range(0xC2, 0xF5)).decode(encoding, errors="ignore"))
    return "".join(sorted(leads))


_MOJIBAKE_LEAD = re.compile(f"[{re.escape(_mojibake_leads())}]")


def repair_mojibake(text: str) -> tuple[str, int]:
    """Repair UTF-8 decoded as windows-1252/Latin-1 (``Donâ€™t`` -> ``Don’t``) with
    ``ftfy.fix_encoding`` only (https://ftfy.readthedocs.io/en/latest/fixes.html), line by line,
    on lines ``ftfy.badness.is_bad`` flags. Returns ``(text, n_lines_repaired)``; line count kept."""
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
    """Steps 5 and 6 of the module docstring: ``(text, notes)``, one note per change."""
    notes = []
    text, n_repaired = repair_mojibake(text)
    if n_repaired:
        notes.append(f"ftfy: repaired mojibake on {n_repaired} line(s)")
    text, counts = normalize_unicode(text)
    if counts:
        notes.append("unicode: " + ", ".join(f"{n} {kind}" for kind, n in counts.items()))
    return text, notes


def _row(source_path: str, data: bytes | None = None) -> dict:
    """A ``documents`` row with the byte-derived columns set and ``status="ok"``."""
    row = dict.fromkeys(c for c in DOCUMENT_COLUMNS if c not in ERROR_FIELDS)
    row.update(source_path=source_path, text="", n_chars=0, n_bytes=0, status="ok")
    if data is not None:
        digest = hashlib.sha256(data).hexdigest()
        row.update(doc_id=digest[:16], content_sha256=digest, n_bytes=len(data))
    return row


def _fail(row: dict, error: str, error_type: str, status: str = "error", **columns: object) -> dict:
    """``row`` failed: ``status``, ``error`` and :data:`ERROR_FIELDS` (stage ``ingest``), plus ``columns``."""
    row.update(columns, status=status, error=error, _error_stage="ingest", _error_type=error_type)
    return row


def _exception_type(exc: BaseException) -> str:
    """``error_type`` of a caught exception: ``BinaryContent`` or the class name."""
    return "BinaryContent" if isinstance(exc, BinaryContentError) else type(exc).__name__


#: NULs up to this share of a text's characters are stray (one NUL always is) and removed with a note...
MAX_STRAY_NUL_SHARE = 0.01
#: ...or up to this share, or one trailing run, when the rest reads as text (:func:`_reads_as_text`).
#: Binary files hold far more.
MAX_NUL_SHARE_IN_TEXT = 0.05
#: Most control characters (not NUL or whitespace) text may hold, as a share of its characters.
MAX_CONTROL_SHARE_IN_TEXT = 0.001
_OTHER_CONTROL = re.compile(r"[\x01-\x08\x0e-\x1a\x1c-\x1f\x7f]")


def _reads_as_text(text: str) -> bool:
    """Whether ``text`` has non-blank characters and at most :data:`MAX_CONTROL_SHARE_IN_TEXT` controls."""
    return bool(text.strip()) and len(_OTHER_CONTROL.findall(text)) <= MAX_CONTROL_SHARE_IN_TEXT * len(text)


def remove_stray_nuls(text: str) -> tuple[str, str | None]:
    """``(text without NULs, note)`` when the NULs are stray (:data:`MAX_STRAY_NUL_SHARE`,
    :data:`MAX_NUL_SHARE_IN_TEXT`), else ``(text, None)`` with the NULs left for the caller to reject."""
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
    """Read one ``.txt``/``.md``/``.html``/``.htm`` file into a ``documents`` row
    (:data:`DOCUMENT_COLUMNS`).

    ``raw_text`` is the decoded file before steps 4-6 (None when equal to ``text``); ``notes`` are
    joined by ``"; "``; ``doc_id`` is the first 16 hex digits of the SHA-256 of the bytes (stable;
    same content, same id). Never raises: failures give ``status="error"``, ``text=""``,
    ``encoding=None``; no text gives ``status="empty"``.
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
        # before extraction: trafilatura drops the C1 and NBSP characters ftfy needs
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
    """``(line number, line bytes, line text)`` of every line, terminators left out. Line bytes are
    the file's own for ASCII-compatible codecs, else the line's UTF-8; only an incomplete final
    character is replaced (noted)."""
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
    """Read a JSON Lines file: one ``documents`` row per non-blank line
    (:func:`pipeline.formats.parse_jsonl_line`).

    ``source_path`` is ``"<path>#<N>"`` (1-based); ids and ``n_bytes`` from the line's bytes;
    ``raw_text`` is the line. A bad line is an error row naming ``path#N``; an unreadable file one
    error row; no non-blank line one ``empty`` row. Never raises.
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
    """``row`` for a CSV/YAML record (``label``: ``path#N``): an error row when rejected, else its
    text, metadata and paper fields, ``notes`` first."""
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
    """Read a YAML file (all documents, safe loader): one ``documents`` row per record of
    :func:`pipeline.formats.yaml_records`, read by :func:`pipeline.formats.parse_record`.

    ``source_path`` is ``"<path>#<N>"``; ``raw_text`` and the id bytes are the record as JSON. A
    mapping with no title, text or citation field and no title-shaped value
    (:func:`pipeline.paper_records.guessed_title`), and a name without paper fields
    (:func:`_names_a_paper`), are ``empty`` rows; a record naming no paper otherwise an error row.
    Keys a mapping gives twice are noted on every row. Unreadable or invalid YAML: one error row;
    no records: one ``empty`` row. Never raises.
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
        if not any(paper_records.field_key(k) in _NAMING_FIELDS for k in obj) and paper_records.guessed_title(obj) is None:
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


#: Paper fields a YAML record needs besides its title; without any, a list of named mappings is
#: navigation or workflow steps.
_PAPER_EVIDENCE = ("authors", "institutions", "abstract", "urls", "venue", "year", "award_raw", "arxiv_id")


#: Fields (casefolded) of which a YAML mapping names one at least to be read as a record.
_NAMING_FIELDS = frozenset(paper_records.field_key(f) for f in (
    *paper_records.TEXT_FIELDS, *paper_records.TITLE_FIELDS, *paper_records.TITLE_ZH_FIELDS, *paper_records.CITATION_FIELDS))


#: A DOI in any field of a record ("id: doi:10.1145/3539618.3591874"): a publication's identifier.
_DOI = re.compile(r"\b10\.\d{4,9}/\S+")


def _names_a_paper(fields: dict) -> bool:
    """Whether the paper fields of a YAML record hold more than a title (:data:`_PAPER_EVIDENCE`)."""
    return any(fields.get(key) for key in _PAPER_EVIDENCE)


#: Per-cell limit for :func:`read_csv` (the csv default is 131,072 characters).
CSV_FIELD_LIMIT = 10 * 1024 * 1024
#: Delimiters sniffed in the header line (comma when unclear).
CSV_DELIMITERS = ",;\t|"
#: Suffixes whose delimiter is a tab, not sniffed.
TAB_SUFFIXES = (".tsv",)
#: Every field name a record is read by (casefolded).
_KNOWN_FIELDS = frozenset(paper_records.field_key(f) for f in (
    *paper_records.TEXT_FIELDS, *paper_records.TITLE_FIELDS, *paper_records.TITLE_ZH_FIELDS,
    *paper_records.PAPER_FIELDS, *paper_records.PUBLICATION_FIELDS, *paper_records.VENUE_HINT_FIELDS,
    *(f for names in formats.JSONL_META_FIELDS.values() for f in names)))
#: A cell that reads as a field name: one word starting with a letter.
_FIELD_NAME = re.compile(r"[^\W\d_][\w-]{0,39}")
_YEAR_CELL = re.compile(r"\d{4}(?:\.0+)?")
#: A cell that is a URL, ``www.`` address or DOI.
_LINK_CELL = re.compile(r"(?:[a-z][a-z0-9+.-]*://|www\.|10\.\d{4,9}/)\S", re.I)


@dataclass(frozen=True)
class _CsvRecord:
    """One CSV record: number (header is 1), text as in the file, cells or the csv module's error."""

    n: int
    raw: str
    cells: list[str]
    error: str | None = None


def _csv_delimiter(header_line: str) -> str:
    """``csv.Sniffer`` over :data:`CSV_DELIMITERS` on the header line; comma when unsure."""
    try:
        return csv.Sniffer().sniff(header_line, delimiters=CSV_DELIMITERS).delimiter
    except csv.Error:
        return ","


def _csv_records(text: str, delimiter: str | None = None) -> list[_CsvRecord]:
    """Every record of a newline-normalized CSV text, header first (records may span lines).
    Delimiter ``delimiter`` or sniffed (:func:`_csv_delimiter`). An unreadable record keeps its
    ``error`` and reading goes on; an unclosed quote makes its first line an error record and
    reading resumes at the next line."""
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
    """Append the records of ``lines[start:]`` to ``out``; returns None at the end, or the line to
    resume at after a quote never closed (that record then its first line, with an ``error``)."""
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
    """How many continuation lines of a record read on their own as a row of ``n_columns`` (2+)
    cells, the first not blank."""
    if n_columns < 2 or "\n" not in raw:
        return 0
    count = 0
    for line in raw.split("\n")[1:]:
        if line.count(delimiter) >= n_columns - 1:
            cells = next(csv.reader([line], delimiter=delimiter), [])
            count += len(cells) == n_columns and bool(cells[0].strip())
    return count


def _missing_header(cells: list[str]) -> str | None:
    """Why a CSV's first record is data rather than a header, or None when it is a header. Data:
    a cell that is a 4-digit year, a link, a venue (:func:`pipeline.fields.find_venue_years`) or
    over 100 characters; header: a known field name, or every non-empty cell a :data:`_FIELD_NAME`."""
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
    """A note for a header with no known field name (it may be a paper's row), else None."""
    if _known_fields(cells):
        return None
    shown = ", ".join(repr(c.strip()) for c in cells if c.strip())
    return (f"csv: the header row names no known field ({shown}): if it is a paper's row, the file has no "
            "header and that row is not read")


def _header_columns(header: list[str]) -> tuple[dict[str, list[int]], str | None]:
    """``(name -> column indices, note)``: names case-insensitive, first spelling kept; the note
    names repeated fields (None when none)."""
    columns: dict[str, list[int]] = {}
    spelled: dict[str, str] = {}
    for i, name in enumerate(h.strip() for h in header):
        if name:
            columns.setdefault(spelled.setdefault(name.casefold(), name), []).append(i)
    twice = [name for name, idx in columns.items() if len(idx) > 1]
    note = (f"csv: the header names {', '.join(map(repr, twice))} more than once: the first non-empty "
            "cell of each is read") if twice else None
    return columns, note


#: Columns that may vary between rows of one paper in a one-author-a-row export (case-insensitive).
PER_AUTHOR_COLUMNS = frozenset({
    *paper_records.AUTHOR_FIELDS, *paper_records.INSTITUTION_FIELDS, "author_order", "author_position",
    "author_rank", "email", "orcid", "author_id", "author_email", "作者顺序", "作者順序"})

#: Per-author columns giving the author's place in the list.
ORDER_COLUMNS = frozenset({"author_order", "author_position", "author_rank",
                           "作者顺序", "作者順序"})


def _one_author_a_row(records: list[_CsvRecord], columns: dict[str, list[int]], width: int) -> list[list[_CsvRecord]]:
    """Data records grouped into papers: consecutive records with a title differing only in
    :data:`PER_AUTHOR_COLUMNS` are one paper; an :data:`ORDER_COLUMNS` place that does not
    increase starts the next. Other records are groups of one."""
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
    """One record of a paper's rows: per-author columns' distinct cells joined by ``"; "``, others
    from the first row."""
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
    """Read a CSV file: one ``documents`` row per data row (:func:`pipeline.formats.parse_record`).

    The first non-blank record is the header; delimiter sniffed (tab for :data:`TAB_SUFFIXES`).
    Repeated fields take the first non-empty cell; one-author-a-row rows merge
    (:func:`_one_author_a_row`); each noted. ``source_path`` is ``"<path>#<N>"`` (spreadsheet row,
    header = 1); ids from the header line and the row. Error rows: no paper and no text, more
    cells than the header, all empty, unreadable. Short rows are padded (noted). Unreadable file
    or a data first record: one error row; no data rows: one ``empty`` row. Never raises.
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
            # a short line after an unclosed quote is most likely that cell's text
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


#: A JSONL text field that holds HTML markup (block-level tags).
_LOOKS_LIKE_HTML = re.compile(r"<(?:html|body|article|div|p|h[1-6]|section|main|ul|ol|table)\b[^>]*>", re.I)
#: A ``source_path`` naming one line or row of a records file (``feed.jsonl#3``).
_RECORD_PATH = re.compile(rf"^(?P<path>.*(?:{'|'.join(map(re.escape, formats.RECORD_SUFFIXES))}))"
                          r"#(?P<line>\d+)$", re.I)


def source_sort_key(source_path: str) -> tuple[str, int]:
    """``(path, line)`` so that ``feed.jsonl#2`` sorts before ``#10``; ``(source_path, 0)`` for a file."""
    m = _RECORD_PATH.match(source_path)
    return (m.group("path"), int(m.group("line"))) if m else (source_path, 0)


def read_documents(source_path: str, abs_path: str) -> list[dict]:
    """All ``documents`` rows of one file, by suffix (:func:`read_jsonl`, :func:`read_csv`,
    :func:`read_yaml`, else :func:`read_document`). Never raises."""
    if Path(source_path).suffix.lower() in formats.JSONL_SUFFIXES:
        return read_jsonl(source_path, abs_path)
    if Path(source_path).suffix.lower() in formats.CSV_SUFFIXES:
        return read_csv(source_path, abs_path)
    if Path(source_path).suffix.lower() in formats.YAML_SUFFIXES:
        return read_yaml(source_path, abs_path)
    return [read_document(source_path, abs_path)]


def ingest_files(batch: pd.DataFrame, config: Config) -> pd.DataFrame:
    """Stage function: listing batch (``source_path``, ``abs_path``) -> ``documents`` batch, one
    row per document in listing order, :data:`DOCUMENT_COLUMNS`."""
    rows = [row for sp, ap in zip(batch["source_path"], batch["abs_path"], strict=True)
            for row in read_documents(sp, ap)]
    for row in rows:
        if row["status"] != "ok":
            log.warning("document %s: %s", row["source_path"], row["error"])
    # None (not NaN) so a later stage's failure can set them
    return pd.DataFrame([{**dict.fromkeys(ERROR_FIELDS), **row} for row in rows], columns=list(DOCUMENT_COLUMNS))


STAGE = Stage(name="ingest", fn=ingest_files, requires=LISTING_COLUMNS, adds=DOCUMENT_COLUMNS)
