"""Paper ids that last across runs, their history (``paper_ids.parquet``) and what changed since
the last run (``changes.parquet``).

Dedup names each cluster by its content id (:func:`pipeline.dedup.paper_id_for`), which changes
when a paper gains an arXiv id or a better title; :func:`assign` keeps the id a user saw by
matching clusters to the previous run's papers through surviving mentions (same ``section_id``,
same text or folded title). Rules: docs/architecture.md ("Paper ids across runs").
"""

from __future__ import annotations

import hashlib
import json
import logging
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from .dedup import paper_id_for
from .fields import fold_title
from .publish import MANIFEST, RUNS_DIR, published_run_id, run_folder
from .write import CHANGES_SCHEMA, PAPER_IDS_SCHEMA, TableWriter

log = logging.getLogger(__name__)

#: The published run's mentions: ``section_id``, ``paper_id``, content id, :func:`text_hash`,
#: :func:`title_hash` (null in older files).
MEMBERS_FILE = "ids-members.parquet"
#: A copy of the published ``paper_ids`` table in the run folder (a user may change the top one).
HISTORY_FILE = "ids-history.parquet"
MEMBERS_SCHEMA = pa.schema([("section_id", pa.string()), ("paper_id", pa.string()), ("content_id", pa.string()),
                            ("text_hash", pa.string()), ("title_hash", pa.string())])
#: Required members columns (without hashes, mentions match by ``section_id``).
MEMBERS_REQUIRED = ("section_id", "paper_id", "content_id")
#: A mention's hashes (:func:`mention_hashes`).
HASH_COLUMNS = ("text_hash", "title_hash")
#: The sections' columns the hashes are made of.
HASHED_COLUMNS = ("text", "title", "title_zh")
#: Rows per batch when the sections are read for their hashes.
HASH_BATCH = 16384
#: Paper fields compared for ``field_changed`` (not ``summary``: a longer mention elsewhere
#: changes it without news).
TRACKED_FIELDS = ("title", "title_zh", "arxiv_id", "venue", "year", "award", "authors", "institutions", "urls")
#: Tracked fields ordered by the mentions' ids, not the paper: their order is not compared.
_UNORDERED = frozenset({"urls"})
#: ``changes.change`` values, in the order the table lists them.
CHANGE_KINDS = ("added", "removed", "merged", "split", "field_changed")


@dataclass
class Previous:
    """The published run's ids: ``members`` (:data:`MEMBERS_SCHEMA`), ``history``
    (:data:`pipeline.write.PAPER_IDS_SCHEMA`), ``papers`` (``paper_id`` and :data:`TRACKED_FIELDS`),
    ``run_id`` (None: no previous run)."""

    members: pd.DataFrame = field(default_factory=lambda: pd.DataFrame(columns=MEMBERS_SCHEMA.names))
    history: pd.DataFrame = field(default_factory=lambda: pd.DataFrame(columns=PAPER_IDS_SCHEMA.names))
    papers: pd.DataFrame = field(default_factory=lambda: pd.DataFrame(columns=["paper_id", *TRACKED_FIELDS]))
    run_id: str | None = None


@dataclass
class Assignment:
    """:func:`assign`'s result: ``ids`` (content id -> stable id), ``history`` and ``changes`` frames."""

    ids: dict[str, str]
    history: pd.DataFrame
    changes: pd.DataFrame

    def counts(self) -> dict[str, int]:
        """Rows of ``changes`` per kind, every kind of :data:`CHANGE_KINDS` named."""
        found = Counter(self.changes["change"])
        return {kind: int(found.get(kind, 0)) for kind in CHANGE_KINDS}


def text_hash(text: str | None) -> str | None:
    """16 hex digits of SHA-256 of a section's stripped text (None when empty); not folded."""
    text = text.strip() if text else ""
    return hashlib.sha256(text.encode()).hexdigest()[:16] if text else None


def title_hash(title: str | None, title_zh: str | None = None) -> str | None:
    """16 hex digits of SHA-256 of the folded title (:func:`pipeline.fields.fold_title`; else the
    Chinese title), or None."""
    folded = fold_title(title or title_zh or "")
    return hashlib.sha256(folded.encode()).hexdigest()[:16] if folded else None


def mention_hashes(path: str | Path) -> pd.DataFrame:
    """``section_id`` and :data:`HASH_COLUMNS` per section of a sections Parquet file (absent
    :data:`HASHED_COLUMNS` are null).

    Raises OSError, pyarrow.ArrowException: unreadable; KeyError: no ``section_id``.
    """
    file = pq.ParquetFile(path)
    names = set(file.schema_arrow.names)
    if "section_id" not in names:
        raise KeyError("section_id")
    columns = ["section_id", *(c for c in HASHED_COLUMNS if c in names)]
    ids: list[str] = []
    texts: list[str | None] = []
    titles: list[str | None] = []
    for batch in file.iter_batches(batch_size=HASH_BATCH, columns=columns):
        got = {name: batch.column(name).to_pylist() for name in columns}
        none = [None] * batch.num_rows
        ids += got["section_id"]
        texts += [text_hash(t) for t in got.get("text", none)]
        titles += [title_hash(t, z) for t, z in zip(got.get("title", none), got.get("title_zh", none), strict=True)]
    frame = pd.DataFrame({"section_id": ids, "text_hash": texts, "title_hash": titles}, dtype=object)
    return frame.dropna(subset=["section_id"]).drop_duplicates("section_id")


def load_previous(out_dir: Path) -> Previous:
    """The ids of the run published in ``out_dir`` (empty :class:`Previous` when none).

    Each part from its first readable source: members from :data:`MEMBERS_FILE`, else the
    published ``sections.parquet``; history from :data:`HISTORY_FILE`, else ``paper_ids.parquet``,
    else the members; ``papers`` from ``OUT/papers.parquet``. No members: ids start afresh with a
    warning. The history is checked (:func:`_checked_history`).
    """
    out_dir = Path(out_dir)
    run_id = published_run_id(out_dir)
    folder = None if run_id is None else run_folder(out_dir, run_id)
    if run_id is None:  # a plain older layout: its tables only
        if not (out_dir / "sections.parquet").is_file():
            return Previous()
        run_id = _manifest_run_id(out_dir)
    try:
        papers = pq.read_table(out_dir / "papers.parquet", columns=["paper_id", *TRACKED_FIELDS]).to_pandas()
    except (OSError, KeyError, pa.ArrowException) as exc:
        log.warning("the previous papers table cannot be read (%s); changed fields are not listed", exc)
        papers = Previous().papers
    members = _first_readable(run_id, [
        (folder and folder / MEMBERS_FILE, _read_members),
        (out_dir / "sections.parquet", _members_from_sections)])
    history = _first_readable(run_id, [(folder and folder / HISTORY_FILE, _read_history),
                                       (out_dir / "paper_ids.parquet", _read_history)])
    if members is None:
        log.warning("the paper ids of run %s cannot be read; paper ids start afresh%s", run_id,
                    f" ({len(history)} ids of its history kept)" if history is not None and len(history) else "")
        members = Previous().members
        if history is None:
            return Previous(papers=papers.iloc[:0])
    if history is None:
        ids = sorted(set(members["paper_id"]))
        history = pd.DataFrame({"paper_id": ids, "current_id": ids, "since_run": run_id, "reason": "added"},
                               columns=PAPER_IDS_SCHEMA.names, dtype=object)
    return Previous(members, _checked_history(history, members, run_id), papers, run_id)


def _first_readable(run_id: str, sources: list[tuple[Path | None, Any]]) -> pd.DataFrame | None:
    """The first readable ``(path, reader)`` source's frame, or None; unreadable ones warned about."""
    for k, (path, read) in enumerate(sources):
        if not path or not path.is_file():
            continue
        try:
            return read(path)
        except (OSError, KeyError, ValueError, pa.ArrowException) as exc:
            rest = [p.name for p, _ in sources[k + 1:] if p and p.is_file()]
            log.warning("the paper ids of run %s: %s cannot be read (%s)%s", run_id, path.name, exc,
                        f"; reading {rest[0]} instead" if rest else "")
    return None


def _manifest_run_id(out_dir: Path) -> str:
    """An older layout's run id: the manifest's, else from ``started_at``, else the earliest."""
    try:
        manifest = json.loads((out_dir / MANIFEST).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        manifest = {}
    manifest = manifest if isinstance(manifest, dict) else {}
    if isinstance(manifest.get("run_id"), str) and manifest["run_id"]:
        return manifest["run_id"]
    started = "".join(ch for ch in str(manifest.get("started_at") or "")[:19] if ch.isdigit())
    return f"{started[:8]}T{started[8:]}.000000Z-older" if len(started) == 14 else "00000000T000000.000000Z-older"


def _read_members(path: Path) -> pd.DataFrame:
    """A :data:`MEMBERS_FILE`, hash columns null when absent.

    Raises:
        ValueError: a :data:`MEMBERS_REQUIRED` column missing, or a row lacks ``section_id`` or ``paper_id``.
    """
    members = pq.read_table(path).to_pandas()
    missing = [c for c in MEMBERS_REQUIRED if c not in members.columns]
    if missing:
        raise ValueError(f"the members file lacks the columns {missing}")
    if members[["section_id", "paper_id"]].isna().any(axis=None):
        raise ValueError("the members file has a row without a section_id or paper_id")
    for name in HASH_COLUMNS:
        if name not in members.columns:
            members[name] = None
    return members[list(MEMBERS_SCHEMA.names)].astype(object)


def _members_from_sections(path: Path) -> pd.DataFrame:
    """Members of a published ``sections.parquet`` (``paper_id`` taken as content id), with hashes."""
    members = pq.read_table(path, columns=["section_id", "paper_id"]).to_pandas().dropna().astype(object)
    members = members.assign(content_id=lambda f: f["paper_id"])
    return members.merge(mention_hashes(path), on="section_id", how="left")[list(MEMBERS_SCHEMA.names)].astype(object)


def _read_history(path: Path) -> pd.DataFrame:
    """A ``paper_ids`` table; ValueError when it lacks a :data:`pipeline.write.PAPER_IDS_SCHEMA` column."""
    history = pq.read_table(path).to_pandas()
    missing = [c for c in PAPER_IDS_SCHEMA.names if c not in history.columns]
    if missing:
        raise ValueError(f"the history file lacks the columns {missing}")
    return history[list(PAPER_IDS_SCHEMA.names)].astype(object).where(history.notna(), None)


def _checked_history(history: pd.DataFrame, members: pd.DataFrame, run_id: str) -> pd.DataFrame:
    """``history`` made to agree with the previous papers, each fix warned: rows without
    ``paper_id`` and repeats dropped; a ``current_id`` that is no paper ``removed`` in ``run_id``;
    a paper without a row gets one, ``added`` in ``run_id``."""
    history = history[list(PAPER_IDS_SCHEMA.names)].astype(object).where(history.notna(), None)
    fixes = []
    if history["paper_id"].isna().any():
        fixes.append(f"{int(history['paper_id'].isna().sum())} row(s) without a paper_id dropped")
        history = history[history["paper_id"].notna()]
    if history["paper_id"].duplicated().any():
        fixes.append(f"{int(history['paper_id'].duplicated().sum())} repeated row(s) of an id dropped")
        history = history.drop_duplicates("paper_id")
    if len(members):
        current = set(members["paper_id"])
    else:
        current = set(history.loc[history["paper_id"] == history["current_id"], "paper_id"])
    dangling = history["current_id"].notna() & ~history["current_id"].isin(current)
    if dangling.any():
        named = sorted(set(history.loc[dangling, "current_id"]))
        fixes.append(f"{int(dangling.sum())} row(s) naming ids that are no paper ({', '.join(named[:5])}"
                     f"{', ...' if len(named) > 5 else ''}) marked removed")
        history.loc[dangling, ["current_id", "since_run", "reason"]] = [None, run_id, "removed"]
    own = history["paper_id"].isin(current) & (history["current_id"] != history["paper_id"])
    if own.any():
        fixes.append(f"{int(own.sum())} row(s) of a paper naming another id made to name the paper")
        history.loc[own, "current_id"] = history.loc[own, "paper_id"]
    lacking = sorted(current - set(history["paper_id"]))
    if lacking:
        fixes.append(f"{len(lacking)} paper(s) without a row given one")
        history = pd.concat([history, pd.DataFrame({"paper_id": lacking, "current_id": lacking, "since_run": run_id,
                                                    "reason": "added"}, dtype=object)], ignore_index=True)
    if fixes:
        log.warning("the paper ids history of run %s disagrees with its papers: %s", run_id, "; ".join(fixes))
    return history.sort_values("paper_id").reset_index(drop=True)


def assign(clusters: pd.DataFrame, previous: Previous, run_id: str, mentions: pd.DataFrame | None = None
           ) -> Assignment:
    """Stable ids for this run's clusters (docs/architecture.md, "Paper ids across runs").

    Args:
        clusters: per cluster ``paper_id`` (content id, unique), ``section_ids``, :data:`TRACKED_FIELDS`.
        previous: :func:`load_previous`.
        run_id: this run's id.
        mentions: ``section_id`` and :data:`HASH_COLUMNS` (:func:`mention_hashes`); None or null
            hashes: match by ``section_id`` alone.

    Returns:
        the :class:`Assignment`; ``history`` has one row per id ever issued, ``current_id`` a
        paper of this run or null.
    """
    content = clusters["paper_id"].tolist()
    old_key = dict(zip(previous.members["paper_id"].tolist(), previous.members["content_id"].tolist(), strict=True))
    for paper_id, current_id in zip(previous.history["paper_id"].tolist(), previous.history["current_id"].tolist(),
                                    strict=True):
        if paper_id == current_id:  # a paper whose mentions are unknown (ids read afresh): found by its id
            old_key.setdefault(paper_id, paper_id)
    shared = _shared(clusters, previous.members, mentions)
    # 1. each previous paper to the cluster holding most of its mentions
    home = shared.sort_values(["paper_id", "n", "content_id"], ascending=[True, False, True]).drop_duplicates("paper_id")
    # 2. the oldest of the previous papers a cluster draws keeps its id
    since = dict(zip(previous.history["paper_id"].tolist(), previous.history["since_run"].tolist(), strict=True))
    home = home.assign(since=home["paper_id"].map(since).fillna(""))
    home = home.sort_values(["content_id", "since", "n", "paper_id"], ascending=[True, True, False, True])
    ids: dict[str, str] = {}  # content id -> stable id
    merged: dict[str, str] = {}  # previous id -> the content id of the cluster it merged into
    for content_id, paper_id in zip(home["content_id"].tolist(), home["paper_id"].tolist(), strict=True):
        if content_id in ids:
            merged[paper_id] = content_id
        else:
            ids[content_id] = paper_id
    # 3. previous papers with no mention left, found by their content id or their id
    unplaced = set(old_key) - set(home["paper_id"])
    by_key = {p: p for p in sorted(unplaced)} | {old_key[p]: p for p in sorted(unplaced)}  # the content id first
    for content_id in content:
        paper_id = by_key.get(content_id)
        if content_id not in ids and paper_id in unplaced:
            ids[content_id] = paper_id
            unplaced.discard(paper_id)
    merged = {p: ids[c] for p, c in merged.items()}
    # 4. new ids; a split part names the previous paper it shares most mentions with
    most = shared.sort_values(["content_id", "n", "paper_id"], ascending=[True, False, True])
    most = most.drop_duplicates("content_id")
    split_from = {c: merged.get(p, p) for c, p in zip(most["content_id"].tolist(), most["paper_id"].tolist(),
                                                       strict=True)}
    first_mention = {c: sections[0] for c, sections in zip(content, clusters["section_ids"].tolist(), strict=True)}
    taken = set(ids.values()) | set(old_key)
    issued: dict[str, str | None] = {}  # new id -> the id it split from (None: added)
    for content_id in content:
        if content_id not in ids:
            ids[content_id] = _new_id(content_id, first_mention[content_id], taken)
            taken.add(ids[content_id])
            issued[ids[content_id]] = split_from.get(content_id)
    history = _history(previous.history, merged, unplaced, issued, run_id)
    changes = _changes(clusters.assign(paper_id=[ids[c] for c in content]), previous, merged, unplaced, issued,
                       run_id)
    return Assignment(ids, history, changes)


def _shared(clusters: pd.DataFrame, members: pd.DataFrame, mentions: pd.DataFrame | None = None) -> pd.DataFrame:
    """``content_id``, previous ``paper_id``, ``n`` (>= 1) per pair sharing mentions: by
    ``section_id`` with unchanged text or title (or unknown hash); a previous paper sharing none
    so shares its mentions whose text hash an unshared mention has (``section_id`` order)."""
    pairs = [(c, s) for c, ids in zip(clusters["paper_id"].tolist(), clusters["section_ids"].tolist(), strict=True)
             for s in ids]
    now = pd.DataFrame(pairs, columns=["content_id", "section_id"], dtype=object)
    hashes = mentions if mentions is not None else pd.DataFrame(columns=["section_id", *HASH_COLUMNS])
    now = now.merge(hashes[["section_id", *HASH_COLUMNS]].drop_duplicates("section_id").astype(object),
                    on="section_id", how="left")
    was = members.reindex(columns=["section_id", "paper_id", *HASH_COLUMNS]).astype(object)
    was = was.where(was.notna(), None).reset_index(drop=True).rename_axis("member").reset_index()
    joined = now.merge(was, on="section_id", suffixes=("", "_was"))
    text_now, text_was = joined["text_hash"], joined["text_hash_was"]
    title_now, title_was = joined["title_hash"], joined["title_hash_was"]
    same = (text_now.isna() | text_was.isna() | (text_now == text_was)
            | (title_now.notna() & (title_now == title_was)))
    kept = joined[same.astype(bool)]
    # previous papers with no mention kept: their texts, found again elsewhere
    left = was[~was["paper_id"].isin(set(kept["paper_id"])) & was["text_hash"].notna()]
    free = now[~now["section_id"].isin(set(kept["section_id"])) & now["text_hash"].notna()]
    found = pd.DataFrame(columns=["content_id", "paper_id"])
    if len(left) and len(free):
        left = left.sort_values(["text_hash", "section_id", "member"])
        free = free.sort_values(["text_hash", "section_id"])
        found = (free.assign(k=free.groupby("text_hash").cumcount())
                 .merge(left.assign(k=left.groupby("text_hash").cumcount()), on=["text_hash", "k"]))
    both = pd.concat([kept[["content_id", "paper_id"]], found[["content_id", "paper_id"]]], ignore_index=True)
    return both.astype(object).groupby(["paper_id", "content_id"]).size().rename("n").reset_index()


def _new_id(content_id: str, first_mention: str, taken: set[str]) -> str:
    """The content id when free, else the first mention's id, else the first free ``p-`` + 16 hex
    of SHA-256 of content id and a counter."""
    for candidate in (content_id, paper_id_for(None, None, first_mention)):
        if candidate not in taken:
            return candidate
    n = 1
    while (candidate := "p-" + hashlib.sha256(f"{content_id}#{n}".encode()).hexdigest()[:16]) in taken:
        n += 1
    return candidate


def _history(before: pd.DataFrame, merged: dict[str, str], removed: set[str], issued: dict[str, str | None],
             run_id: str) -> pd.DataFrame:
    """The ``paper_ids`` table after this run, by ``paper_id``: merges redirected, removals closed,
    redirects followed (no chains), new ids added."""
    rows = {r["paper_id"]: r for r in before[list(PAPER_IDS_SCHEMA.names)].astype(object)
            .where(before.notna(), None).to_dict("records")}
    for paper_id, row in rows.items():
        target = row["current_id"]
        if paper_id in merged or target in merged:
            rows[paper_id] = dict(row, current_id=merged.get(paper_id) or merged[target], since_run=run_id,
                                  reason="merged")
        elif target is not None and (paper_id in removed or target in removed):
            rows[paper_id] = dict(row, current_id=None, since_run=run_id, reason="removed")
    for paper_id, parent in issued.items():
        rows[paper_id] = {"paper_id": paper_id, "current_id": paper_id, "since_run": run_id,
                          "reason": "added" if parent is None else "split"}
    return pd.DataFrame([rows[k] for k in sorted(rows)], columns=list(PAPER_IDS_SCHEMA.names), dtype=object)


def _changes(papers: pd.DataFrame, previous: Previous, merged: dict[str, str], removed: set[str],
             issued: dict[str, str | None], run_id: str) -> pd.DataFrame:
    """The ``changes`` table: per paper added, removed, merged or split off, and per changed
    :data:`TRACKED_FIELDS` value, ordered by :data:`CHANGE_KINDS` then ids."""
    rows: list[tuple[str, str, str | None, str | None, str | None, str | None]] = []
    rows += [("added", p, None, None, None, None) for p, parent in issued.items() if parent is None]
    rows += [("removed", p, None, None, None, None) for p in removed]
    rows += [("merged", p, into, None, None, None) for p, into in merged.items()]
    rows += [("split", p, parent, None, None, None) for p, parent in issued.items() if parent is not None]
    kept = papers[~papers["paper_id"].isin(list(issued))][["paper_id", *TRACKED_FIELDS]].astype(object)
    both = kept.merge(previous.papers[["paper_id", *TRACKED_FIELDS]].astype(object), on="paper_id",
                      suffixes=("", "_was"))
    paper_ids = both["paper_id"].tolist()
    for name in TRACKED_FIELDS:
        for p, w, n in zip(paper_ids, both[f"{name}_was"].tolist(), both[name].tolist(), strict=True):
            if w is n or (type(w) is str and w == n):  # the common case
                continue
            if name in _UNORDERED and _plain(w) and _plain(n) and sorted(_plain(w)) == sorted(_plain(n)):
                continue  # the same links in another mention order: no change
            if _plain(w) != _plain(n) and (w := _text(w)) != (n := _text(n)):
                rows.append(("field_changed", p, None, name, w, n))
    order = {kind: k for k, kind in enumerate(CHANGE_KINDS)}
    rows.sort(key=lambda r: (order[r[0]], r[1], r[3] or ""))
    frame = pd.DataFrame(rows, columns=["change", "paper_id", "related_id", "field", "old_value", "new_value"],
                         dtype=object)
    return frame.assign(run_id=run_id, previous_run_id=previous.run_id)[list(CHANGES_SCHEMA.names)]


def _plain(value: Any) -> Any:
    """A field's value as ``==`` compares it: sequences as tuples, missing or empty as None."""
    if isinstance(value, list | tuple) or hasattr(value, "tolist") and not isinstance(value, int | float | str):
        return tuple(value) or None
    return None if value is None or value != value else value


def _text(value: Any) -> str | None:
    """A field's value for ``changes``: None when missing or empty, lists as JSON, integral floats as digits."""
    if value is None or (isinstance(value, float) and value != value):
        return None
    if hasattr(value, "tolist"):
        value = value.tolist()
    if isinstance(value, list | tuple):
        return json.dumps(list(value), ensure_ascii=False) if len(value) else None
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def stable_ids(section_paper_ids: pa.Array, papers: pa.Table, run_dir: Path,
               metadata: dict[str, str], sections: Path | None = None) -> tuple[pa.Array, pa.Table, dict[str, int]]:
    """After dedup: give clusters stable ids, write ``paper_ids.parquet`` and ``changes.parquet``
    and the run's :data:`MEMBERS_FILE` and :data:`HISTORY_FILE` into ``run_dir``.

    Args:
        section_paper_ids: per section, its cluster's content id (Arrow strings).
        papers: fused papers (``paper_id`` the content id, ``section_ids``, :data:`TRACKED_FIELDS`).
        run_dir: ``OUT/.pipeline/runs/<run_id>`` (previous ids read from ``OUT``).
        metadata: the tables' key-value metadata.
        sections: this run's sections Parquet file, for hashes; None: match by ``section_id``.

    Returns ``(section_paper_ids, papers, counts)`` with stable ids, ``papers`` sorted by ``paper_id``.

    Raises OSError: a file cannot be written or ``sections`` read.
    """
    out_dir = run_dir.parents[len(Path(RUNS_DIR).parts)]
    clusters = papers.select(["paper_id", "section_ids", *TRACKED_FIELDS]).to_pandas()
    mentions = None if sections is None else mention_hashes(sections)
    done = assign(clusters, load_previous(out_dir), run_dir.name, mentions)
    content = pa.array(list(done.ids), pa.string())
    stable = pa.array(list(done.ids.values()), pa.string())
    renamed = stable.take(pc.index_in(papers["paper_id"], value_set=content))
    papers = papers.set_column(papers.schema.get_field_index("paper_id"), "paper_id", renamed)
    papers = papers.take(pc.sort_indices(papers["paper_id"])).combine_chunks()
    section_paper_ids = stable.take(pc.index_in(section_paper_ids, value_set=content))
    lists = papers["section_ids"].combine_chunks()
    parents = pc.list_parent_indices(lists)
    flat = pc.list_flatten(lists)
    if mentions is None:
        hashes = {name: pa.nulls(len(flat), pa.string()) for name in HASH_COLUMNS}
    else:
        at = pc.index_in(flat, value_set=pa.array(mentions["section_id"].tolist(), pa.string()))
        hashes = {name: pa.array(mentions[name].tolist(), pa.string()).take(at) for name in HASH_COLUMNS}
    members = pa.table({"section_id": flat, "paper_id": papers["paper_id"].take(parents),
                        "content_id": _content_of(papers["paper_id"], done.ids).take(parents), **hashes},
                       schema=MEMBERS_SCHEMA)
    pq.write_table(members, run_dir / MEMBERS_FILE, compression="zstd")
    for name, frame, schema in (("paper_ids", done.history, PAPER_IDS_SCHEMA), ("changes", done.changes, CHANGES_SCHEMA)):
        writer = TableWriter(run_dir / f"{name}.parquet", schema, metadata)
        writer.write(frame)
        writer.close()
    pq.write_table(pa.Table.from_pandas(done.history, schema=PAPER_IDS_SCHEMA, preserve_index=False),
                   run_dir / HISTORY_FILE, compression="zstd")
    if isinstance(section_paper_ids, pa.ChunkedArray):
        section_paper_ids = section_paper_ids.combine_chunks()
    return section_paper_ids, papers, done.counts()


def _content_of(paper_ids: pa.ChunkedArray | pa.Array, ids: dict[str, str]) -> pa.Array:
    """Per stable id of ``paper_ids``, the content id it was given for (inverse of ``ids``)."""
    back = {v: k for k, v in ids.items()}
    return pa.array([back[p] for p in paper_ids.to_pylist()], pa.string())
