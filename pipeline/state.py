"""Incremental runs: what earlier runs processed, so the next run redoes only what changed.

The unit of reuse is one input file: an entry holds its ``documents`` rows (spans included) and
``sections`` rows, valid for ``(source_path, SHA-256 of the bytes, state key)``. The state key
(:func:`state_key`) joins the pipeline version, a digest of the package source and the
per-document configuration's fingerprint (dedup runs over all sections every run).

Layout: ``OUT/.pipeline/state/*.parquet``, one row per file, :data:`STATE_SCHEMA` (rows as JSON).
A run appends ``part-<run_id>-<n>.parquet`` files (:meth:`StateStore.keep`);
:meth:`StateStore.maybe_compact` rewrites live entries into one ``state-<run_id>.parquet``. Writes
go through a temporary name; unreadable files are ignored (a cache). Fresh results take the same
JSON round trip as reused ones (:func:`to_plain`), so incremental and full runs agree.
"""

from __future__ import annotations

import hashlib
import json
import logging
import math
import os
import time
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import orjson
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from . import __version__
from .config import Config
from .publish import STATE_DIR as PUBLISHED_STATE_DIR

log = logging.getLogger(__name__)

#: Folder inside the output folder that holds the state (:mod:`pipeline.publish`).
STATE_DIR = PUBLISHED_STATE_DIR
#: Configuration sections the per-document stages read (``embed``, ``dedup``, ``run`` change no entry).
DOCUMENT_CONFIG_SECTIONS = ("ingest", "clean", "normalize", "extract")
#: Compact when more state files than this exist...
MAX_STATE_FILES = 128
#: ...or when dead rows (superseded, removed or other-key entries) exceed this share of live ones.
MAX_DEAD_SHARE = 0.25
#: Entries per Parquet row group of a state file: the unit the runner reads back.
STATE_ROW_GROUP = 64
#: :meth:`StateStore.keep` writes a part this many seconds after its last: a killed run loses at
#: most its last seconds, and few parts accumulate (bench/README.md).
STATE_PART_SECONDS = 5.0
#: ...or once they hold this many bytes of rows (JSON), bounding their memory.
STATE_PART_BYTES = 32 * 2**20
#: The state columns written with Parquet dictionary encoding: those whose values repeat.
STATE_DICTIONARY_COLUMNS = ("state_key", "pipeline_version")
#: Row groups :meth:`StateStore.raw` keeps decoded (least recently used goes first).
CACHED_ROW_GROUPS = 8
#: The columns :meth:`StateStore.load` reads; the rows stay on disk.
KEY_COLUMNS = ("source_path", "content_sha256", "state_key", "n_documents", "n_sections")
#: Bytes read at a time when hashing a file.
HASH_CHUNK = 1 << 20

STATE_SCHEMA = pa.schema([
    ("source_path", pa.string()),      # the file, relative to the corpus (POSIX, display form)
    ("content_sha256", pa.string()),   # SHA-256 (hex) of the file's bytes
    ("state_key", pa.string()),        # :func:`state_key` of the run that made the entry
    ("pipeline_version", pa.string()),
    ("n_documents", pa.int32()),
    ("n_sections", pa.int32()),
    ("documents", pa.binary()),        # JSON list of documents rows (dicts)
    ("sections", pa.binary()),         # JSON list of sections rows (dicts)
])


def code_digest() -> str:
    """SHA-256 (16 hex) of the package's source and data (``pipeline/**``), read afresh each call."""
    root = Path(__file__).resolve().parent
    digest = hashlib.sha256()
    for path in sorted(p for p in root.rglob("*") if p.is_file() and p.suffix in (".py", ".txt", ".json", ".toml")):
        if "__pycache__" in path.parts:
            continue
        digest.update(path.relative_to(root).as_posix().encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()[:16]


def documents_fingerprint(config: Config) -> str:
    """SHA-256 (hex, 16 chars) of the configuration sections the per-document stages read."""
    settings = config.to_dict()
    meaning = {k: settings[k] for k in DOCUMENT_CONFIG_SECTIONS}
    return hashlib.sha256(json.dumps(meaning, sort_keys=True).encode()).hexdigest()[:16]


def state_key(config: Config) -> str:
    """``"<pipeline version>+<code digest>:<documents fingerprint>"``; other keys are not reused."""
    return f"{__version__}+{code_digest()}:{documents_fingerprint(config)}"


def file_sha256(path: str | Path) -> str | None:
    """SHA-256 (hex) of a file's bytes, or None when it cannot be read (ingest reports why)."""
    digest = hashlib.sha256()
    try:
        with open(path, "rb") as fh:
            while chunk := fh.read(HASH_CHUNK):
                digest.update(chunk)
    except OSError:
        return None
    return digest.hexdigest()


def to_plain(value: Any) -> Any:
    """``value`` as plain JSON-able Python: None, NaN, infinities, ``pd.NA``, ``NaT`` -> None;
    numpy scalars -> Python; integral floats -> int; arrays, tuples -> lists; dict keys -> str.

    Raises TypeError: a value JSON cannot hold.
    """
    if value is None or isinstance(value, bool | str):
        return value
    if isinstance(value, np.generic):
        value = value.item()
        if value is None or isinstance(value, bool | str):
            return value
    if isinstance(value, int):
        return value
    if isinstance(value, float):
        if not math.isfinite(value):
            return None
        return int(value) if value.is_integer() and abs(value) < 2**53 else value
    if isinstance(value, dict):
        return {str(k): to_plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple | np.ndarray):
        return [to_plain(v) for v in value]
    if value is pd.NA or value is pd.NaT:
        return None
    raise TypeError(f"cannot keep a {type(value).__name__} in the incremental state: {value!r}")


def _plain_column(values: list[Any]) -> list[Any]:
    """:func:`to_plain` of each value of one column (None, str, int, bool skip the call)."""
    return [v if v is None or type(v) in _PLAIN_TYPES else to_plain(v) for v in values]


_PLAIN_TYPES = frozenset((str, int, bool))


def frame_records(frame: pd.DataFrame) -> list[dict[str, Any]]:
    """Rows of ``frame`` as dicts of :func:`to_plain` values (column order kept)."""
    columns = list(frame.columns)
    if not columns:
        return [{} for _ in range(len(frame))]
    values = [_plain_column(frame.iloc[:, k].tolist()) for k in range(len(columns))]
    return [dict(zip(columns, row, strict=True)) for row in zip(*values, strict=True)]


def _dumps(rows: list[dict[str, Any]]) -> bytes:
    """JSON bytes of an entry's rows (orjson; what it refuses is written by ``json`` after a leading
    space, which :func:`_loads` recognises). TypeError for a value JSON cannot hold."""
    try:
        return orjson.dumps(rows)
    except orjson.JSONEncodeError:
        return b" " + json.dumps(rows, ensure_ascii=False, allow_nan=True).encode("utf-8", "surrogatepass")


def _loads(data: bytes) -> list[dict[str, Any]]:
    """The rows of :func:`_dumps` bytes."""
    if data[:1] == b" ":
        return json.loads(data.decode("utf-8", "surrogatepass"))
    return orjson.loads(data)


def _read_group(path: Path, group: int) -> tuple[list[bytes], list[bytes]]:
    """``(documents, sections)`` bytes of one row group, page checksums verified."""
    table = pq.ParquetFile(path, page_checksum_verification=True).read_row_group(group, columns=["documents", "sections"])
    return table.column("documents").to_pylist(), table.column("sections").to_pylist()


@dataclass
class Entry:
    """What the per-document stages made of one file.

    Attributes:
        source_path: relative to the corpus.
        content_sha256: SHA-256 (hex) of its bytes.
        documents, sections: JSON bytes of its rows, or None once on disk (:attr:`location`).
        n_documents, n_sections: row counts.
        location: ``(state file, row group, row)`` once written or loaded, else None.
    """

    source_path: str
    content_sha256: str
    documents: bytes | None
    sections: bytes | None
    n_documents: int
    n_sections: int
    location: tuple[Path, int, int] | None = None

    @classmethod
    def from_rows(cls, source_path: str, content_sha256: str, documents: list[dict], sections: list[dict]) -> Entry:
        """An entry from plain rows (:func:`frame_records`)."""
        return cls(source_path, content_sha256, _dumps(documents), _dumps(sections), len(documents), len(sections))

    def rows(self) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
        """``(documents rows, sections rows)``, freshly decoded, from the state file when not held.
        OSError / pyarrow.ArrowException when the file is missing or damaged."""
        if self.documents is not None and self.sections is not None:
            return _loads(self.documents), _loads(self.sections)
        if self.location is None:
            raise ValueError(f"entry of {self.source_path} has neither rows nor a location")
        path, group, row = self.location
        documents, sections = _read_group(path, group)
        return _loads(documents[row]), _loads(sections[row])


class StateStore:
    """The entries in ``OUT/.pipeline/state`` for one state ``key`` (others are dead); ``run_id``
    names new parts; ``folder`` is created on the first write."""

    def __init__(self, folder: str | Path, key: str, run_id: str):
        """NotADirectoryError: ``folder`` exists and is not a folder."""
        self.folder = Path(folder)
        if self.folder.exists() and not self.folder.is_dir():
            raise NotADirectoryError(f"{self.folder} is not a folder: the incremental state is kept there; "
                                     "move that file away")
        self.key = key
        self.run_id = run_id
        self._parts = 0
        self._gathered: list[Entry] = []  # fresh entries not written yet (:meth:`keep`)
        self._gathered_bytes = 0
        self._last_part = time.monotonic()  # when keep() last wrote a part
        self.n_rows_on_disk = 0
        self.written: list[Path] = []
        self._groups: dict[tuple[Path, int], tuple[list[bytes], list[bytes]]] = {}

    def _files(self) -> list[Path]:
        """The state's Parquet files (any other entry of the folder is left alone)."""
        return sorted(p for p in self.folder.glob("*.parquet") if p.is_file()) if self.folder.is_dir() else []

    def load(self) -> dict[tuple[str, str], Entry]:
        """Every readable entry under this key, by ``(source_path, content_sha256)``; key columns
        only; unreadable files skipped with a warning."""
        entries: dict[tuple[str, str], Entry] = {}
        self.n_rows_on_disk = 0
        for path in self._files():
            try:
                pf = pq.ParquetFile(path, page_checksum_verification=True)
                if "state_key" not in pf.schema_arrow.names:
                    self.n_rows_on_disk += pf.metadata.num_rows
                    continue
                table = pf.read(columns=list(KEY_COLUMNS))
            except Exception as exc:  # noqa: BLE001 - a damaged cache file costs time, not the run
                log.warning("ignoring unreadable state file %s: %s: %s", path, type(exc).__name__, exc)
                continue
            self.n_rows_on_disk += table.num_rows
            places = [(g, r) for g in range(pf.metadata.num_row_groups) for r in range(pf.metadata.row_group(g).num_rows)]
            for (group, row), r in zip(places, table.to_pylist(), strict=True):
                if r["state_key"] == self.key:
                    entries[(r["source_path"], r["content_sha256"])] = Entry(
                        r["source_path"], r["content_sha256"], None, None, r["n_documents"], r["n_sections"],
                        location=(path, group, row))
        return entries

    def drop_cached_rows(self) -> None:
        """Forget the cached row groups (up to :data:`CACHED_ROW_GROUPS`)."""
        self._groups.clear()

    def _group(self, path: Path, group: int) -> tuple[list[bytes], list[bytes]]:
        """One row group's bytes (small LRU: entries are read in write order)."""
        key = (path, group)
        if key in self._groups:
            self._groups[key] = self._groups.pop(key)
            return self._groups[key]
        value = _read_group(path, group)
        self._groups[key] = value
        while len(self._groups) > CACHED_ROW_GROUPS:
            self._groups.pop(next(iter(self._groups)))
        return value

    def raw(self, entry: Entry) -> tuple[bytes, bytes]:
        """``(documents JSON, sections JSON)`` of an entry, from memory or its file (OSError /
        pyarrow.ArrowException when missing or damaged)."""
        if entry.documents is not None and entry.sections is not None:
            return entry.documents, entry.sections
        if entry.location is None:
            raise ValueError(f"entry of {entry.source_path} has neither rows nor a location")
        path, group, row = entry.location
        documents, sections = self._group(path, group)
        return documents[row], sections[row]

    def read_rows(self, entry: Entry) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
        """``(documents rows, sections rows)`` of an entry, freshly decoded (see :meth:`raw`)."""
        documents, sections = self.raw(entry)
        return _loads(documents), _loads(sections)

    def _write(self, name: str, entries: Iterable[Entry]) -> Path:
        """Write ``entries`` to ``name`` (:data:`STATE_ROW_GROUP` per row group, via a temporary
        name); each entry then points at its row and holds no bytes."""
        self.folder.mkdir(parents=True, exist_ok=True)
        path = self.folder / name
        tmp = self.folder / f".{name}.tmp"
        written: list[tuple[Entry, int, int]] = []
        # page checksums (CRC-32, Parquet spec): a flipped bit is an error, not other text
        with pq.ParquetWriter(tmp, STATE_SCHEMA, compression="zstd", write_page_checksum=True,
                              use_dictionary=list(STATE_DICTIONARY_COLUMNS)) as writer:
            chunk: list[Entry] = []

            groups = 0

            def flush() -> None:
                nonlocal groups
                rows, kept = [], []
                for e in chunk:
                    try:
                        documents, sections = self.raw(e)
                    except Exception as exc:  # noqa: BLE001 - a damaged entry is left out: only a cache
                        log.warning("state entry of %s is unreadable (%s: %s); left out, the file will be "
                                    "processed again", e.source_path, type(exc).__name__, exc)
                        e.location = None  # its old file goes: the runner reprocesses it
                        continue
                    kept.append(e)
                    rows.append({"source_path": e.source_path, "content_sha256": e.content_sha256,
                                 "state_key": self.key, "pipeline_version": __version__,
                                 "n_documents": e.n_documents, "n_sections": e.n_sections,
                                 "documents": documents, "sections": sections})
                chunk.clear()
                if not rows:
                    return
                writer.write_table(pa.Table.from_pylist(rows, schema=STATE_SCHEMA), row_group_size=STATE_ROW_GROUP)
                written.extend((e, groups, i) for i, e in enumerate(kept))
                groups += 1

            for entry in entries:
                chunk.append(entry)
                if len(chunk) == STATE_ROW_GROUP:
                    flush()
            if chunk:
                flush()
        os.replace(tmp, path)
        self._groups.clear()  # a file of the same name may have been replaced
        for entry, group, row in written:
            entry.documents = entry.sections = None
            entry.location = (path, group, row)
        self.written.append(path)
        return path

    def keep(self, entries: list[Entry]) -> Path | None:
        """Gather fresh ``entries``; write them as a part after :data:`STATE_PART_SECONDS` or
        :data:`STATE_PART_BYTES`. Returns the part written now, or None. Call :meth:`flush` at the end."""
        if entries:
            self._gathered += entries
            self._gathered_bytes += sum(len(e.documents or b"") + len(e.sections or b"") for e in entries)
        if self._gathered and (self._gathered_bytes >= STATE_PART_BYTES
                               or time.monotonic() - self._last_part >= STATE_PART_SECONDS):
            return self.flush()
        return None

    def flush(self) -> Path | None:
        """Write the gathered entries as a part (None when none); they stay gathered until it is in place."""
        path = self.append(self._gathered)
        self._gathered, self._gathered_bytes, self._last_part = [], 0, time.monotonic()
        return path

    def append(self, entries: list[Entry]) -> Path | None:
        """Write ``entries`` as a new part file now (nothing when empty); returns its path."""
        if not entries:
            return None
        self._parts += 1
        return self._write(f"part-{self.run_id}-{self._parts:05d}.parquet", entries)

    def compact(self, live: Iterable[Entry]) -> Path:
        """Rewrite the state as one file holding exactly ``live``; delete every other file."""
        keep = self._write(f"state-{self.run_id}.parquet", live)
        for path in self._files():
            if path != keep:
                path.unlink(missing_ok=True)
        for tmp in self.folder.glob(".*.tmp"):  # left by a killed run
            tmp.unlink(missing_ok=True)
        return keep

    def maybe_compact(self, live: list[Entry], force: bool = False) -> bool:
        """:meth:`compact` when forced, over :data:`MAX_STATE_FILES` files, or dead rows over
        :data:`MAX_DEAD_SHARE` of live ones; returns whether it did."""
        files = self._files()
        dead = self.n_rows_on_disk + self._rows_written() - len(live)
        if force or len(files) > MAX_STATE_FILES or dead > MAX_DEAD_SHARE * max(len(live), 1):
            self.compact(live)
            return True
        return False

    def _rows_written(self) -> int:
        return sum(pq.ParquetFile(p).metadata.num_rows for p in self.written if p.exists())
