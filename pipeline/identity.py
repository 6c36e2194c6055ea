"""Paper ids that last across runs, their history (``paper_ids.parquet``) and what changed since
the last run (``changes.parquet``).

Dedup (:func:`pipeline.dedup.cluster_all`) names each cluster by its *content id*
(:func:`pipeline.dedup.paper_id_for`: the arXiv id, else the folded title, else the first
mention), which changes when a paper gains an arXiv id or a better title. The id a user sees is
kept instead: :func:`assign` matches this run's clusters to the previous run's papers through
their mentions (``section_id``), in this order:

1. each previous paper goes to the cluster that holds most of its surviving mentions (a split
   keeps the id on the larger part; ties: the smaller content id);
2. a cluster that several previous papers go to keeps the oldest id (earliest ``since_run``;
   ties: more mentions shared, then the smaller id); the others become redirects (``merged``);
3. a previous paper none of whose mentions is left (its file was edited: new ``doc_id``, new
   ``section_id`` s) goes to a cluster still without an id whose content id is the paper's
   content id at the previous run, or the paper's id itself;
4. any other cluster gets a new id: its content id unless an id of this run or a current id of
   the previous run has it (then that of its first mention, then a numbered one); ``split``
   when it holds mentions of a previous paper, else ``added``. A new id may be one that was
   removed or redirected before: that row of the history then names the paper again;
5. a previous paper still without a cluster is ``removed``.

A fresh output folder has no previous papers: every paper gets its content id, the same ids on
every fresh run over the same corpus.

The ids of the published run live with it (:data:`MEMBERS_FILE`, :data:`HISTORY_FILE` in
``OUT/.pipeline/runs/<run_id>/``, which the publish keeps): written in the same folder as the
tables, they are the previous run's exactly when its tables are the published ones; a run that
never publishes leaves them unread. They are not in ``OUT/.pipeline/state``, a cache that
``--full`` ignores and a damaged file loses: ``--full`` reprocesses every file and keeps the ids.
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
from .publish import RUNS_DIR, published_run_id, run_folder
from .write import CHANGES_SCHEMA, PAPER_IDS_SCHEMA, TableWriter

log = logging.getLogger(__name__)

#: The published run's mentions: ``section_id``, its ``paper_id`` and that paper's content id.
MEMBERS_FILE = "ids-members.parquet"
#: The published run's ``paper_ids`` table, a copy kept in its run folder (the publish moves the
#: table itself to the top of ``OUT``, where a user may replace or delete it).
HISTORY_FILE = "ids-history.parquet"
MEMBERS_SCHEMA = pa.schema([("section_id", pa.string()), ("paper_id", pa.string()), ("content_id", pa.string())])
#: Paper fields compared for ``field_changed`` (``summary`` is left out: it is filled in later
#: from the longest mention, and a longer mention elsewhere changes it without news).
TRACKED_FIELDS = ("title", "title_zh", "arxiv_id", "venue", "year", "award", "authors", "institutions", "urls")
#: ``changes.change`` values, in the order the table lists them.
CHANGE_KINDS = ("added", "removed", "merged", "split", "field_changed")


@dataclass
class Previous:
    """The published run's ids: ``members`` (:data:`MEMBERS_SCHEMA` columns), ``history``
    (:data:`pipeline.write.PAPER_IDS_SCHEMA` columns), ``papers`` (``paper_id`` and the
    :data:`TRACKED_FIELDS`), ``run_id`` (None: no previous run)."""

    members: pd.DataFrame = field(default_factory=lambda: pd.DataFrame(columns=MEMBERS_SCHEMA.names))
    history: pd.DataFrame = field(default_factory=lambda: pd.DataFrame(columns=PAPER_IDS_SCHEMA.names))
    papers: pd.DataFrame = field(default_factory=lambda: pd.DataFrame(columns=["paper_id", *TRACKED_FIELDS]))
    run_id: str | None = None


@dataclass
class Assignment:
    """What :func:`assign` gives: ``ids`` (content id -> stable id, one per cluster),
    ``history`` and ``changes`` (frames of the published tables' columns)."""

    ids: dict[str, str]
    history: pd.DataFrame
    changes: pd.DataFrame

    def counts(self) -> dict[str, int]:
        """Rows of ``changes`` per kind, every kind of :data:`CHANGE_KINDS` named."""
        found = Counter(self.changes["change"])
        return {kind: int(found.get(kind, 0)) for kind in CHANGE_KINDS}


def load_previous(out_dir: Path) -> Previous:
    """The ids of the run published in ``out_dir`` (empty when none).

    A published run without them (one of a version before these ids) gives its published
    ``sections`` and ``papers`` instead: each paper under its id, taken as its content id (what
    those versions published) and as issued by that run, so the ids it published stay. When
    neither can be read (a deleted ``.pipeline``, damaged files), the ids start afresh, with a
    warning. ``papers`` comes from ``OUT/papers.parquet``; unreadable, it is empty (no
    ``field_changed`` rows) with a warning.
    """
    run_id = published_run_id(out_dir)
    if run_id is None:
        return Previous()
    folder = run_folder(out_dir, run_id)
    try:
        papers = pq.read_table(out_dir / "papers.parquet", columns=["paper_id", *TRACKED_FIELDS]).to_pandas()
    except (OSError, KeyError, pa.ArrowException) as exc:
        log.warning("the previous papers table cannot be read (%s); changed fields are not listed", exc)
        papers = Previous().papers
    try:
        if (folder / MEMBERS_FILE).exists() or not (out_dir / "sections.parquet").exists():
            members = pq.read_table(folder / MEMBERS_FILE).to_pandas()
            history = pq.read_table(folder / HISTORY_FILE).to_pandas()
        else:  # published by a version before these ids
            members = pq.read_table(out_dir / "sections.parquet", columns=["section_id", "paper_id"]).to_pandas()
            members = members.dropna().assign(content_id=lambda f: f["paper_id"])
            ids = sorted(set(members["paper_id"]))
            history = pd.DataFrame({"paper_id": ids, "current_id": ids, "since_run": run_id, "reason": "added"})
        _check_ids(members, history)
    except (OSError, KeyError, ValueError, pa.ArrowException) as exc:
        log.warning("the paper ids of run %s cannot be read (%s); paper ids start afresh", run_id, exc)
        return Previous(papers=papers.iloc[:0])
    return Previous(members, history, papers, run_id)


def _check_ids(members: pd.DataFrame, history: pd.DataFrame) -> None:
    """Raise ValueError unless the id files have their columns and no missing id (a file that
    reads as Parquet can still be another file or an edited one)."""
    for name, frame, columns, ids in (("members", members, ("section_id", "paper_id", "content_id"), ("paper_id",)),
                                      ("history", history, ("paper_id", "current_id", "since_run", "reason"),
                                       ("paper_id",))):
        missing = [c for c in columns if c not in frame.columns]
        if missing:
            raise ValueError(f"the {name} file lacks the columns {missing}")
        if any(frame[c].isna().any() for c in ids):
            raise ValueError(f"the {name} file has a row without a paper_id")


def assign(clusters: pd.DataFrame, previous: Previous, run_id: str) -> Assignment:
    """Stable ids for this run's clusters (the rules of the module docstring).

    Args:
        clusters: one row per cluster: ``paper_id`` (its content id, unique), ``section_ids``
            (list), and the :data:`TRACKED_FIELDS`.
        previous: :func:`load_previous`.
        run_id: this run's id (``since_run`` of what changes now).

    Returns:
        the :class:`Assignment`; ``history`` holds one row per id ever issued, ``current_id``
        always a paper of this run or null (``removed``).
    """
    content = clusters["paper_id"].tolist()
    old_key = dict(zip(previous.members["paper_id"].tolist(), previous.members["content_id"].tolist(), strict=True))
    shared = _shared(clusters, previous.members)
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


def _shared(clusters: pd.DataFrame, members: pd.DataFrame) -> pd.DataFrame:
    """Mentions shared by this run's clusters and the previous papers: ``content_id``,
    ``paper_id`` (previous), ``n`` (>= 1), one row per pair that shares any."""
    pairs = [(c, s) for c, ids in zip(clusters["paper_id"].tolist(), clusters["section_ids"].tolist(), strict=True)
             for s in ids]
    mentions = pd.DataFrame(pairs, columns=["content_id", "section_id"], dtype=object)
    joined = mentions.merge(members[["section_id", "paper_id"]].astype(object), on="section_id")
    return joined.groupby(["paper_id", "content_id"]).size().rename("n").reset_index()


def _new_id(content_id: str, first_mention: str, taken: set[str]) -> str:
    """The content id when free, else the id of the first mention
    (:func:`pipeline.dedup.paper_id_for`), else ``p-`` + 16 hex digits of SHA-256 of the content
    id and a counter, the first free one."""
    for candidate in (content_id, paper_id_for(None, None, first_mention)):
        if candidate not in taken:
            return candidate
    n = 1
    while (candidate := "p-" + hashlib.sha256(f"{content_id}#{n}".encode()).hexdigest()[:16]) in taken:
        n += 1
    return candidate


def _history(before: pd.DataFrame, merged: dict[str, str], removed: set[str], issued: dict[str, str | None],
             run_id: str) -> pd.DataFrame:
    """The ``paper_ids`` table after this run: ``before`` with the merged ids redirected, the
    removed ones closed, redirects to either followed (no chains), and the new ids added (a row
    of an id issued again replaced), sorted by ``paper_id``."""
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
    """The ``changes`` table: a row per paper added, removed, merged or split off, and per field
    of a paper kept whose value changed (:data:`TRACKED_FIELDS`, compared with the previous
    papers table; values as :func:`_text`), ordered by :data:`CHANGE_KINDS` then ids."""
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
            if w is n or (type(w) is str and w == n):  # (most values: unchanged text)
                continue
            if _plain(w) != _plain(n) and (w := _text(w)) != (n := _text(n)):
                rows.append(("field_changed", p, None, name, w, n))
    order = {kind: k for k, kind in enumerate(CHANGE_KINDS)}
    rows.sort(key=lambda r: (order[r[0]], r[1], r[3] or ""))
    frame = pd.DataFrame(rows, columns=["change", "paper_id", "related_id", "field", "old_value", "new_value"],
                         dtype=object)
    return frame.assign(run_id=run_id, previous_run_id=previous.run_id)[list(CHANGES_SCHEMA.names)]


def _plain(value: Any) -> Any:
    """A field's value in a form ``==`` compares: a list (or array) as a tuple, None for a
    missing value or an empty list (as :func:`_text` gives them)."""
    if isinstance(value, list | tuple) or hasattr(value, "tolist") and not isinstance(value, int | float | str):
        return tuple(value) or None
    return None if value is None or value != value else value


def _text(value: Any) -> str | None:
    """A field's value as ``changes`` gives it: None when missing or an empty list, a list as a
    JSON array, a number as its digits, a string as is."""
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
               metadata: dict[str, str]) -> tuple[pa.Array, pa.Table, dict[str, int]]:
    """The runner's call, after dedup: give the run's clusters their stable ids, write
    ``paper_ids.parquet`` and ``changes.parquet`` (published tables) and the run's ids
    (:data:`MEMBERS_FILE`, :data:`HISTORY_FILE`) into ``run_dir``.

    Args:
        section_paper_ids: per section, its cluster's content id (Arrow strings).
        papers: the fused papers (``paper_id`` the content id, ``section_ids``, the
            :data:`TRACKED_FIELDS`), any row order.
        run_dir: ``OUT/.pipeline/runs/<run_id>`` (the previous run's ids are read from ``OUT``).
        metadata: the tables' key-value metadata.

    Returns:
        ``(section_paper_ids, papers, counts)``: both with the stable ids, ``papers`` sorted by
        ``paper_id``; ``counts`` :meth:`Assignment.counts`.

    Raises:
        OSError: a file cannot be written into ``run_dir``.
    """
    out_dir = run_dir.parents[len(Path(RUNS_DIR).parts)]
    clusters = papers.select(["paper_id", "section_ids", *TRACKED_FIELDS]).to_pandas()
    done = assign(clusters, load_previous(out_dir), run_dir.name)
    content = pa.array(list(done.ids), pa.string())
    stable = pa.array(list(done.ids.values()), pa.string())
    renamed = stable.take(pc.index_in(papers["paper_id"], value_set=content))
    papers = papers.set_column(papers.schema.get_field_index("paper_id"), "paper_id", renamed)
    papers = papers.take(pc.sort_indices(papers["paper_id"])).combine_chunks()
    section_paper_ids = stable.take(pc.index_in(section_paper_ids, value_set=content))
    lists = papers["section_ids"].combine_chunks()
    parents = pc.list_parent_indices(lists)
    members = pa.table({"section_id": pc.list_flatten(lists), "paper_id": papers["paper_id"].take(parents),
                        "content_id": _content_of(papers["paper_id"], done.ids).take(parents)},
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
