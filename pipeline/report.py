"""Run report: one self-contained ``report.html`` next to the Parquet tables.

Sections: the run, changes since the previous run (:func:`run_changes`), field completeness
(:func:`completeness`), every paper (:mod:`pipeline.report_table`), a stage funnel, documents per
source and language, top papers, the match-score histogram, dropped spans, unprocessed files and
seconds per stage. Opens offline: inline CSS and script, SVG plots as ``data:`` URIs; every data
value goes through :func:`html.escape`. Regenerate with ``python -m pipeline.report OUT``.
"""

from __future__ import annotations

import argparse
import base64
import datetime as dt
import html
import io
import json
import math
import sys
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import matplotlib
import numpy as np
import pandas as pd
from matplotlib.figure import Figure
from matplotlib.ticker import MaxNLocator

from .report_table import AUTHORS_SHOWN, papers_table
from .report_table import CSS as TABLE_CSS

REPORT_NAME = "report.html"
#: ``id`` of each ``<section>``, in page order.
SECTION_IDS = ("changes", "completeness", "papers", "funnel", "documents", "top-papers", "multi-source",
               "match-scores", "dropped", "errors", "timing")
#: How many papers the "most mentions" table lists.
TOP_PAPERS = 20
#: Papers in several sources shown side by side, and mentions shown of each: keeps a large
#: corpus's report readable and its cost one pass over the sections.
MULTI_SOURCE_PAPERS = 50
MULTI_SOURCE_MENTIONS = 12
#: How many example spans are shown per dropped reason.
DROPPED_EXAMPLES = 3
#: Rows shown of the per-source documents table and of each errors table; the rest is counted.
SOURCE_ROWS = 100
ERROR_ROWS = 200
#: Characters of a summary or dropped span shown before it is cut with an ellipsis.
HEAD_CHARS = 120
#: Per table, the only columns :func:`read_frames` reads back: those :func:`render_report` uses
#: (keep in step). Tables not named (``errors``) are read whole.
REPORT_COLUMNS: dict[str, tuple[str, ...]] = {
    "documents": ("doc_id", "source_path", "url", "lang", "status", "error"),
    "sections": ("section_id", "doc_id", "paper_id", "title", "title_zh", "lang", "summary", "match_score"),
    "papers": ("paper_id", "title", "title_zh", "arxiv_id", "venue", "year", "award", "authors", "n_mentions",
               "n_sources", "conflicts", "doc_ids"),
    "dropped": ("doc_id", "char_start", "char_end", "reason", "text"),
    "context": (),
}
#: Per table, the fields whose completeness (share of rows holding a value) the report gives,
#: over every row of the Parquet files.
COMPLETENESS_FIELDS: dict[str, tuple[str, ...]] = {
    "papers": ("title", "title_zh", "arxiv_id", "authors", "institutions", "venue", "year", "award", "urls",
               "summary"),
    "sections": ("title", "title_zh", "arxiv_id", "authors", "institutions", "venue", "year", "award", "urls",
                 "summary", "keywords"),
    "documents": ("url", "title", "published", "lang"),
}
#: Name of the frame of :func:`completeness` in the frames :func:`read_frames` returns.
COMPLETENESS = "completeness"
#: Per table, text columns read back only as their head (:data:`HEAD_CHARS`; idempotent, so the
#: report is unchanged).
HEAD_COLUMNS: dict[str, tuple[str, ...]] = {"sections": ("summary",), "dropped": ("text",)}
#: Rows converted to Python strings at a time while a :data:`HEAD_COLUMNS` column is cut.
_HEAD_BATCH = 4096
#: Stage order of the timing plot (``pipeline.runner.STAGE_NAMES``, not imported: cycle); others follow.
STAGE_ORDER = ("ingest", "clean", "segment", "normalize", "extract", "dedup", "write")
_BLUE, _GREY, _RED = "#3b6ea8", "#9aa5b1", "#c0392b"

#: Fonts: the platform UI font, then Noto CJK / PingFang / Microsoft YaHei / Source Han Sans;
#: ``lang="zh-Hant"`` tries the TC faces first.
FONT_STACK = ('system-ui,-apple-system,"Segoe UI",Roboto,"Noto Sans","Noto Sans CJK SC","Noto Sans CJK TC",'
              '"PingFang SC","Microsoft YaHei","Source Han Sans SC","Source Han Sans",sans-serif')
_CSS = """
body{font-family:""" + FONT_STACK + """;margin:0 auto;
max-width:1100px;padding:1rem 2rem;color:#1d2733;line-height:1.4}
:lang(zh-Hant){font-family:system-ui,"Noto Sans CJK TC","PingFang TC","Microsoft JhengHei","Source Han Sans TC",
"Noto Sans CJK SC",sans-serif}
.run{font-size:1rem}.columns{display:flex;flex-wrap:wrap;gap:0 2rem}
details{margin:.4rem 0}summary{cursor:pointer;font-weight:600}
table.side{table-layout:fixed;width:100%}table.side td,table.side th{overflow-wrap:anywhere}
h1{font-size:1.6rem;margin-bottom:.2rem}h2{font-size:1.25rem;border-bottom:1px solid #d5dbe1;padding-bottom:.2rem;
margin-top:2rem}h3{font-size:1rem;margin:1.2rem 0 .3rem}
.meta{color:#55606e;font-size:.9rem}.none{color:#55606e;font-style:italic}
table{border-collapse:collapse;margin:.5rem 0;font-size:.88rem}
th,td{border:1px solid #d5dbe1;padding:.25rem .5rem;text-align:left;vertical-align:top}
th{background:#eef2f6}td.num{text-align:right;font-variant-numeric:tabular-nums}
td{overflow-wrap:break-word}
figure{margin:.5rem 0}figure img{max-width:100%;height:auto;display:block}
nav a{margin-right:.8rem}
"""


def write_report(out_dir: Path, frames: dict[str, pd.DataFrame], manifest: dict[str, Any],
                 previous: Path | None = None) -> Path:
    """Write ``<out_dir>/report.html`` (UTF-8) for one run and return its path.

    Args:
        out_dir: the run's output folder (created if missing).
        frames: the tables by name (``documents``, ``sections``, ``papers``, ``dropped``,
            ``context``, optional ``errors``), e.g. from :func:`read_frames`; a missing table or
            column counts as empty.
        manifest: ``manifest.json`` as a dict; every key optional.
        previous: the previous published run's folder, for the changes; None: a first run.
    """
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    path = out / REPORT_NAME
    path.write_text(render_report(frames, manifest, run_changes(frames.get("changes"), manifest, previous)),
                    encoding="utf-8")
    return path


def render_report(frames: dict[str, pd.DataFrame], manifest: dict[str, Any],
                  changes: dict[str, Any] | None = None) -> str:
    """The report as one HTML document (arguments as :func:`write_report`; ``changes`` from
    :func:`run_changes`)."""
    docs = _frame(frames, "documents")
    sections = _frame(frames, "sections")
    papers = _frame(frames, "papers")
    dropped = _frame(frames, "dropped")
    errors = frames.get("errors")
    threshold = (manifest.get("config") or {}).get("dedup", {}).get("match_threshold")
    given = {str(k): float(v) for k, v in (manifest.get("seconds") or {}).items() if _is_number(v)}
    seconds = {k: given[k] for k in sorted(given, key=lambda k: STAGE_ORDER.index(k) if k in STAGE_ORDER
                                           else len(STAGE_ORDER))}
    filled = frames.get(COMPLETENESS)
    if not isinstance(filled, pd.DataFrame):
        filled = completeness({name: _frame(frames, name) for name in COMPLETENESS_FIELDS})
    body = [
        _header(manifest),
        _changes(changes),
        _completeness(filled),
        _section("papers", f"Every paper ({len(papers)})", papers_table(papers, docs)
                 + "<p class=\"meta\">Type words to keep the papers whose title, Chinese title, "
                   f"{'first author' if AUTHORS_SHOWN == 1 else f'first {AUTHORS_SHOWN} authors'}, venue or arXiv id "
                   "hold them all; click a column to sort by it. "
                   "<code>papers.parquet</code> has every field, <code>paper_id</code> included.</p>"),
        _funnel(docs, sections, papers, dropped),
        _documents(docs),
        _top_papers(papers),
        _multi_source(papers, sections, docs),
        _match_scores(sections, threshold),
        _dropped(dropped, docs),
        _errors(docs, errors),
        _timing(seconds),
    ]
    return ("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
            "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
            f"<title>Run report — {_e(manifest.get('corpus', ''))}</title>\n<style>{_CSS}{TABLE_CSS}</style>\n"
            "</head>\n<body>\n"
            + "\n".join(body) + "\n</body>\n</html>\n")


def _header(manifest: dict[str, Any]) -> str:
    embedder = (manifest.get("embedder") or {}).get("model_id", "")
    facts = [("corpus", manifest.get("corpus", "")), ("pipeline", manifest.get("pipeline_version", "")),
             ("config", manifest.get("config_fingerprint", "")), ("embedder", embedder)]
    meta = " · ".join(f"{_e(k)} <code>{_e(v)}</code>" for k, v in facts if v)
    files = manifest.get("files") or {}
    run = [("run", manifest.get("run_id", "")), ("date", _when(manifest.get("started_at"))),
           ("duration", _duration(manifest)), ("mode", manifest.get("mode", "")),
           ("files", ", ".join(f"{len(files.get(k) or [])} {k}" for k in ("processed", "reused", "removed"))
            if files else "")]
    when = " · ".join(f"{_e(k)} <strong class=\"{_e(k)}\">{_e(v)}</strong>" for k, v in run if v)
    nav = "".join(f'<a href="#{i}">{_e(i.replace("-", " "))}</a>' for i in SECTION_IDS)
    return (f"<header><h1>Run report</h1><p class=\"run\">{when}</p><p class=\"meta\">{meta}</p>"
            f"<nav>{nav}</nav></header>")


def _when(iso: Any) -> str:
    """An ISO 8601 time of the manifest as ``YYYY-MM-DD HH:MM:SS UTC`` (as given when not one)."""
    try:
        moment = dt.datetime.fromisoformat(str(iso))
    except ValueError:
        return _text(iso)
    if moment.tzinfo is not None:
        moment = moment.astimezone(dt.timezone.utc)
    return moment.strftime("%Y-%m-%d %H:%M:%S") + (" UTC" if moment.tzinfo is not None else "")


def _duration(manifest: dict[str, Any]) -> str:
    """The run's wall time (``1 h 02 min 03 s``, ``3.4 s``; "" unknown): the larger of
    ``finished_at - started_at`` and the sum of ``seconds``."""
    given = [float(v) for v in (manifest.get("seconds") or {}).values() if _is_number(v)]
    try:
        wall = (dt.datetime.fromisoformat(manifest["finished_at"])
                - dt.datetime.fromisoformat(manifest["started_at"])).total_seconds()
    except (KeyError, TypeError, ValueError):
        wall = None
    if wall is None and not given:
        return ""
    total = max(wall or 0.0, sum(given))
    if total < 60:
        return f"{total:.1f} s"
    minutes, secs = divmod(round(total), 60)
    hours, minutes = divmod(minutes, 60)
    return (f"{hours} h {minutes:02d} min " if hours else f"{minutes} min ") + f"{secs:02d} s"


def run_changes(changes: pd.DataFrame | None, manifest: dict[str, Any], previous: Path | None) -> dict[str, Any] | None:
    """What changed since the previous published run, for the "changes" section.

    Args:
        changes: this run's ``changes`` table (``change``, ``paper_id``, ``field``), or None.
        manifest: this run's manifest (``files``, ``row_counts``, ``changes``).
        previous: the previous run's folder; None for a first run.

    Returns:
        None without a previous run; else ``previous_run``, ``counts`` (per table ``(before,
        now)``), ``files``, ``papers`` (per kind of change, or None) and ``fields`` (per field,
        the papers whose value changed).
    """
    if previous is None:
        return None
    try:
        before = json.loads((previous / "manifest.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        before = {}
    table = changes if isinstance(changes, pd.DataFrame) else pd.DataFrame(columns=["change", "paper_id", "field"])
    kinds = manifest.get("changes")
    if kinds is None and isinstance(changes, pd.DataFrame):
        kinds = {k: int((table["change"] == k).sum()) for k in ("added", "removed", "merged", "split")}
        kinds["field_changed"] = int((table["change"] == "field_changed").sum())
    fields = table[table["change"] == "field_changed"].groupby("field")["paper_id"].nunique()
    now_counts, old_counts = manifest.get("row_counts") or {}, before.get("row_counts") or {}
    files = manifest.get("files") or {}
    return {
        "previous_run": {"run_id": before.get("run_id", previous.name), "finished_at": before.get("finished_at")},
        "counts": {t: (old_counts.get(t), now_counts.get(t)) for t in ("documents", "sections", "papers")
                   if t in now_counts or t in old_counts},
        "files": {k: len(files.get(k) or []) for k in ("processed", "reused", "removed")},
        "papers": kinds,
        "fields": {str(k): int(v) for k, v in fields.items()},
    }


def _changes(changes: dict[str, Any] | None) -> str:
    title = "Changes since the last run"
    if changes is None:
        return _section("changes", title, _none("no earlier run to compare with (a first run, or none given)"))
    prev = changes["previous_run"]
    files = changes["files"]
    parts = [f"<p>Compared with run <code>{_e(prev['run_id'])}</code>"
             + (f" of {_e(_when(prev['finished_at']))}" if prev.get("finished_at") else "") + ". Files: "
             + ", ".join(f"<strong>{files[k]}</strong> {k}" for k in ("processed", "reused", "removed")) + ".</p>"]
    papers = changes.get("papers")
    if papers is None:
        parts.append(_none("this run lists no changes (changes.parquet)"))
    else:
        fields = changes.get("fields") or {}
        parts.append(f"<p>Papers: <strong class=\"added\">{papers.get('added', 0)} added</strong>, "
                     f"<strong class=\"removed\">{papers.get('removed', 0)} removed</strong>, "
                     f"{papers.get('merged', 0)} merged into another, {papers.get('split', 0)} split off another; "
                     f"{papers.get('field_changed', 0)} field values changed"
                     + (" (" + ", ".join(f"{_e(k)} of {n}" for k, n in fields.items()) + ")" if fields else "")
                     + ". Every change is a row of <code>changes.parquet</code>; <code>paper_ids.parquet</code> "
                       "resolves an earlier run's <code>paper_id</code>.</p>")
    rows = [[table, _int(old), _int(now), _signed(old, now)] for table, (old, now) in changes["counts"].items()]
    if rows:
        parts.append(_table(["table", "previous run", "this run", "change"], rows, numeric={1, 2, 3}))
    return _section("changes", title, "".join(parts))


def _signed(old: Any, now: Any) -> str:
    return f"{now - old:+d}" if isinstance(old, int) and isinstance(now, int) else ""


def completeness(frames: dict[str, pd.DataFrame]) -> pd.DataFrame:
    """Columns ``table``, ``field``, ``rows``, ``filled`` (not missing, empty text or empty list)
    for each :data:`COMPLETENESS_FIELDS` field present in ``frames``."""
    rows = []
    for name, fields in COMPLETENESS_FIELDS.items():
        df = frames.get(name)
        if not isinstance(df, pd.DataFrame):
            continue
        for field in fields:
            if field in df.columns:
                rows.append((name, field, len(df), sum(_filled(v) for v in df[field].tolist())))
    return pd.DataFrame(rows, columns=list(_COMPLETENESS_COLUMNS))


_COMPLETENESS_COLUMNS = ("table", "field", "rows", "filled")


def _filled(value: Any) -> bool:
    if isinstance(value, str):
        return value != ""
    if value is None or isinstance(value, float | np.floating) and math.isnan(value):
        return False
    if hasattr(value, "__len__"):
        return len(value) > 0
    return not _missing(value)


def _completeness(filled: pd.DataFrame) -> str:
    title = "Field completeness"
    if not len(filled):
        return _section("completeness", title, _none("no table to measure"))
    parts = []
    for name, group in filled.groupby("table", sort=False):
        n = int(group["rows"].iloc[0])
        rows = [[field, int(k), f"{100 * k / n:.1f} %" if n else ""] for field, k in zip(group["field"], group["filled"],
                                                                                          strict=True)]
        parts.append(f"<h3>{_e(name)} ({n} rows)</h3>"
                     + _table(["field", f"{name} with it", "share"], rows, numeric={1, 2}))
    return _section("completeness", title, '<div class="columns">' + "".join(f"<div>{p}</div>" for p in parts)
                    + "</div><p class=\"meta\">A field counts where it holds a value: not missing, not an empty "
                      "text, not an empty list.</p>")


def _funnel(docs: pd.DataFrame, sections: pd.DataFrame, papers: pd.DataFrame, dropped: pd.DataFrame) -> str:
    status = _col(docs, "status")
    steps = [("files", len(docs)), ("documents ok", int((status == "ok").sum())), ("sections", len(sections)),
             ("papers", len(papers)), ("dropped spans", len(dropped))]
    fig, ax = _figure(6.5, 2.4)
    labels = [s for s, _ in steps][::-1]
    values = [n for _, n in steps][::-1]
    bars = ax.barh(labels, values, color=[_GREY] + [_BLUE] * 4)
    ax.bar_label(bars, padding=3)
    ax.set_xlabel("rows")
    ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    ax.margins(x=0.12)
    rows = [[name, n] for name, n in steps]
    return _section("funnel", "Counts per stage",
                    _plot(fig, "Funnel: files, documents ok, sections, papers; dropped spans")
                    + _table(["stage", "count"], rows)
                    + "<p class=\"meta\">files: every file listed (a JSONL line counts as one); dropped spans: "
                      "junk removed by clean.</p>")


def _documents(docs: pd.DataFrame) -> str:
    if not len(docs):
        return _section("documents", "Documents per source and language", _none("no documents"))
    frame = pd.DataFrame({"source": [_source(p, u) for p, u in zip(_col(docs, "source_path"), _col(docs, "url"),
                                                                    strict=True)],
                          "lang": [_text(v) or "(none)" for v in _col(docs, "lang")],
                          "status": [_text(v) or "(none)" for v in _col(docs, "status")]})
    by_lang = pd.crosstab(frame["lang"], frame["status"])
    fig, ax = _figure(6.5, 0.5 + 0.35 * len(by_lang))
    left = [0] * len(by_lang)
    for i, status in enumerate(by_lang.columns):
        color = _BLUE if status == "ok" else [_GREY, _RED, "#e0a030", "#7a5ea8"][i % 4]
        ax.barh([str(x) for x in by_lang.index], by_lang[status], left=left, label=str(status), color=color)
        left = [a + b for a, b in zip(left, by_lang[status], strict=True)]
    ax.set_xlabel("documents")
    ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1), fontsize=8, frameon=False)
    by_source = pd.crosstab(frame["source"], frame["lang"])
    totals = by_source.sum(axis=1).sort_values(ascending=False, kind="stable")
    shown = by_source.loc[totals.index[:SOURCE_ROWS]]
    rows = [[src, *[int(v) for v in shown.loc[src]], int(shown.loc[src].sum())] for src in shown.index]
    more = (f"<p class=\"meta\">The {SOURCE_ROWS} sources with the most documents are shown; "
            f"{len(by_source) - SOURCE_ROWS} more sources hold {int(totals.iloc[SOURCE_ROWS:].sum())} documents "
            "(<code>documents.parquet</code> has them all).</p>" if len(by_source) > SOURCE_ROWS else "")
    return _section("documents", "Documents per source and language",
                    _plot(fig, "Documents per language, stacked by status")
                    + _table(["source", *[str(c) for c in by_source.columns], "total"], rows) + more
                    + "<p class=\"meta\">source: the site (host of the document's URL) when the document has "
                      "one, else the corpus sub-folder of the file, else <code>(corpus root)</code>.</p>")


def _top_papers(papers: pd.DataFrame) -> str:
    if not len(papers):
        return _section("top-papers", "Papers with the most mentions", _none("no papers"))
    top = papers.assign(_n=_counts(_col(papers, "n_mentions")),
                        _s=_counts(_col(papers, "n_sources")))
    top = top.sort_values(["_n", "_s"], ascending=False, kind="stable").head(TOP_PAPERS)
    rows = [[r.get("title"), r.get("title_zh"), r.get("venue"), _int(r.get("year")), r.get("award"),
             _int(r["_n"]), _int(r["_s"]), r.get("paper_id")] for _, r in top.iterrows()]
    return _section("top-papers", f"Papers with the most mentions (top {min(TOP_PAPERS, len(papers))} "
                                  f"of {len(papers)})",
                    _table(["title", "title_zh", "venue", "year", "award", "mentions", "sources", "paper_id"], rows,
                           numeric={5, 6}))


def _multi_source(papers: pd.DataFrame, sections: pd.DataFrame, docs: pd.DataFrame) -> str:
    title = "Papers found in several sources"
    if not len(papers):
        return _section("multi-source", title, _none("no papers"))
    multi, shown = _multi_source_papers(papers)
    if not len(multi):
        return _section("multi-source", title, _none("no paper is mentioned in more than one source"))
    rows_of, count_of = _first_mentions(shown, _col(sections, "paper_id"))
    source_of = dict(zip(_col(docs, "doc_id"), _col(docs, "source_path"), strict=True))
    parts = [f"<p>{len(multi)} paper(s)"
             + (f"; the {len(shown)} found in the most sources are shown" if len(shown) < len(multi) else "")
             + f". Each row is one mention (one section), at most {MULTI_SOURCE_MENTIONS} per paper; click a "
               "paper to show its mentions.</p>"]
    for _, paper in shown.iterrows():
        key = paper.get("paper_id") if _present_id(paper.get("paper_id")) else None  # None: no key
        mentions = sections.iloc[rows_of.get(key, [])]
        total = max(int(paper["_n"]), count_of.get(key, 0))
        columns = [[_text(v) for v in _col(mentions, "section_id")],
                   [_text(v) for v in _col(mentions, "title")],
                   [_text(v) for v in _col(mentions, "title_zh")],
                   [_text(v) for v in _col(mentions, "lang")],
                   [_text(source_of.get(d, d)) for d in _col(mentions, "doc_id")],
                   [_head(v) for v in _col(mentions, "summary")],
                   [_score(v) for v in _col(mentions, "match_score")]]
        conflicts = ", ".join(_text(c) for c in _list(paper.get("conflicts")))
        first = len(parts) == 1  # (after the line above): the first paper's mentions are open
        parts.append(f"<details{' open' if first else ''}><summary>"
                     f"{_e(paper.get('title') or paper.get('title_zh') or paper.get('paper_id'))} "
                     f"<span class=\"meta\">({_e(paper.get('paper_id'))}; {int(paper['_s'])} sources, "
                     f"{total} mentions" + (f", the first {len(mentions)} shown" if len(mentions) < total else "")
                     + (f"; conflicts: {_e(conflicts)}" if conflicts else "") + ")</span></summary>"
                     + _table(["section_id", "title", "title_zh", "lang", "source", "summary head", "match_score"],
                              list(zip(*columns, strict=True)), numeric={6}, cls="side", widths=_SIDE_WIDTHS)
                     + "</details>")
    return _section("multi-source", title, "".join(parts))


#: Column widths of a paper's mentions table (section id, title, title_zh, lang, source, summary, score).
_SIDE_WIDTHS = ("11%", "19%", "13%", "6%", "13%", "29%", "9%")


def _multi_source_papers(papers: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame]:
    """``(multi, shown)``: papers in several sources, and the :data:`MULTI_SOURCE_PAPERS` shown
    (counts in ``_s`` and ``_n``)."""
    if "n_sources" in papers:
        n_sources = _counts(papers["n_sources"])
    else:
        n_sources = pd.Series([len(_list(v)) for v in _col(papers, "doc_ids")], index=papers.index)
    multi = papers[n_sources > 1]
    n_mentions = _counts(_col(multi, "n_mentions"))
    shown = multi.assign(_s=n_sources[multi.index], _n=n_mentions.to_numpy()).sort_values(
        ["_s", "_n"], ascending=False, kind="stable").head(MULTI_SOURCE_PAPERS)
    return multi, shown


def _first_mentions(shown: pd.DataFrame, paper_ids: Iterable[Any]) -> tuple[dict[Any, list[int]], dict[Any, int]]:
    """``(rows_of, count_of)``: per shown paper, the rows of its first :data:`MULTI_SOURCE_MENTIONS`
    mentions in ``paper_ids`` and its mention count; one pass."""
    rows_of: dict[Any, list[int]] = {pid: [] for pid in _col(shown, "paper_id") if _present_id(pid)}
    count_of = dict.fromkeys(rows_of, 0)
    for k, pid in enumerate(paper_ids):
        found = rows_of.get(pid) if _present_id(pid) else None
        if found is not None:
            count_of[pid] += 1
            if len(found) < MULTI_SOURCE_MENTIONS:
                found.append(k)
    return rows_of, count_of


def _match_scores(sections: pd.DataFrame, threshold: float | None) -> str:
    title = "Match scores"
    scores = pd.to_numeric(_col(sections, "match_score"), errors="coerce").dropna()
    caption = (f"dedup match threshold: <code>{_e(threshold)}</code>" if threshold is not None
               else "no match threshold in the manifest")
    if not len(scores):
        return _section("match-scores", title,
                        _none("no section has a match score (no paper has more than one mention)")
                        + f"<p class=\"meta\">{caption}</p>")
    fig, ax = _figure(6.5, 2.8)
    ax.hist(scores, bins=[i / 20 for i in range(21)], color=_BLUE, edgecolor="white")
    if _is_number(threshold):
        ax.axvline(float(threshold), color=_RED, linestyle="--", linewidth=1.5, label=f"threshold {threshold}")
        ax.legend(loc="upper left", fontsize=8)
    ax.set_xlim(0, 1)
    ax.set_xlabel("sections.match_score")
    ax.set_ylabel("sections")
    ax.yaxis.set_major_locator(MaxNLocator(integer=True))
    stats = [[len(scores), f"{scores.min():.3f}", f"{scores.median():.3f}", f"{scores.max():.3f}",
              int((scores < float(threshold)).sum()) if _is_number(threshold) else ""]]
    return _section("match-scores", title,
                    _plot(fig, "Histogram of section match scores with the threshold marked")
                    + _table(["sections scored", "min", "median", "max", "below threshold"], stats,
                             numeric={0, 1, 2, 3, 4})
                    + f"<p class=\"meta\">{caption}; sections alone in their paper have no score.</p>")


def _dropped(dropped: pd.DataFrame, docs: pd.DataFrame) -> str:
    title = "Dropped spans by reason"
    if not len(dropped):
        return _section("dropped", title, _none("no dropped spans"))
    source_of = dict(zip(_col(docs, "doc_id"), _col(docs, "source_path"), strict=True))
    frame = dropped.assign(_reason=[_text(v) or "(none)" for v in _col(dropped, "reason")],
                           _chars=(pd.to_numeric(_col(dropped, "char_end"), errors="coerce")
                                   - pd.to_numeric(_col(dropped, "char_start"), errors="coerce")).fillna(0))
    counts = frame.groupby("_reason").agg(spans=("_reason", "size"), chars=("_chars", "sum"))
    counts = counts.sort_values(["spans", "chars"], ascending=False, kind="stable")
    fig, ax = _figure(6.5, 0.5 + 0.3 * len(counts))
    bars = ax.barh([str(r) for r in counts.index][::-1], list(counts["spans"])[::-1], color=_BLUE)
    ax.bar_label(bars, padding=3)
    ax.margins(x=0.12)
    ax.set_xlabel("spans")
    ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    rows = [[reason, int(r["spans"]), int(r["chars"])] for reason, r in counts.iterrows()]
    examples = []
    for reason in counts.index:
        group = frame[frame["_reason"] == reason].head(DROPPED_EXAMPLES)
        ex_rows = [[_text(source_of.get(r.get("doc_id"), r.get("doc_id"))), _int(r.get("char_start")),
                    _head(r.get("text"))] for _, r in group.iterrows()]
        examples.append(f"<h3>{_e(reason)}</h3>" + _table(["source", "char_start", "text"], ex_rows, numeric={1}))
    return _section("dropped", title, _plot(fig, "Dropped spans per reason")
                    + _table(["reason", "spans", "characters"], rows, numeric={1, 2})
                    + f"<p class=\"meta\">Up to {DROPPED_EXAMPLES} examples per reason:</p>" + "".join(examples))


def _errors(docs: pd.DataFrame, errors: pd.DataFrame | None) -> str:
    status = _col(docs, "status")
    bad = docs[status.isin(["error", "skipped", "empty", "duplicate"])] if len(docs) else docs
    parts = []
    if len(bad):
        rows = [[r.get("status"), r.get("source_path"), r.get("error")] for _, r in bad.head(ERROR_ROWS).iterrows()]
        counts = ", ".join(f"{_e(k)}: {int(v)}" for k, v in bad["status"].value_counts().sort_index().items())
        parts.append(f"<p>Files not processed ({counts}):</p>" + _table(["status", "source_path", "error / reason"],
                                                                        rows) + _more(len(bad), "documents.parquet"))
    else:
        parts.append(_none("every file was processed (no error, skipped, empty or duplicate file)"))
    if errors is not None and len(errors):
        rows = [[r[c] for c in errors.columns] for _, r in errors.head(ERROR_ROWS).iterrows()]
        parts.append("<h3>Errors table</h3>" + _table([str(c) for c in errors.columns], rows)
                     + _more(len(errors), "errors.parquet"))
    return _section("errors", "Errors and skipped files", "".join(parts))


def _more(n_rows: int, table: str) -> str:
    """The line under a table cut to :data:`ERROR_ROWS` rows ("" when it was not cut)."""
    if n_rows <= ERROR_ROWS:
        return ""
    return (f"<p class=\"meta\">The first {ERROR_ROWS} of {n_rows} rows are shown; <code>{_e(table)}</code> "
            "has them all.</p>")


def _timing(seconds: dict[str, float]) -> str:
    if not seconds:
        return _section("timing", "Time per stage", _none("no timings in the manifest"))
    fig, ax = _figure(6.5, 0.5 + 0.3 * len(seconds))
    names = list(seconds)[::-1]
    bars = ax.barh(names, [seconds[n] for n in names], color=_BLUE)
    ax.bar_label(bars, labels=[f"{seconds[n]:.2f} s" for n in names], padding=3)
    ax.margins(x=0.18)
    ax.set_xlabel("seconds")
    total = sum(seconds.values())
    rows = [[name, f"{s:.3f}", f"{100 * s / total:.0f} %" if total else ""] for name, s in seconds.items()]
    rows.append(["total", f"{total:.3f}", ""])
    return _section("timing", "Time per stage", _plot(fig, "Seconds per stage")
                    + _table(["stage", "seconds", "share"], rows, numeric={1, 2}))


def _frame(frames: dict[str, pd.DataFrame], name: str) -> pd.DataFrame:
    df = frames.get(name)
    return df.reset_index(drop=True) if isinstance(df, pd.DataFrame) else pd.DataFrame()


def _present_id(value: Any) -> bool:
    """Whether ``value`` is an id to look up (a string; not None, NaN or a list)."""
    return isinstance(value, str)


def _col(df: pd.DataFrame, name: str) -> pd.Series:
    """Column ``name`` of ``df``, or a column of ``None`` when it lacks one."""
    return df[name] if name in df.columns else pd.Series([None] * len(df), index=df.index, dtype=object)


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


def _missing(value: Any) -> bool:
    if value is None:
        return True
    try:
        return bool(pd.isna(value))
    except (TypeError, ValueError):  # list-like values
        return False


def _list(value: Any) -> list[Any]:
    if value is None or isinstance(value, str | float):
        return []
    return list(value)


def _text(value: Any) -> str:
    """A cell value as display text: lists joined with ', ', missing values empty."""
    if isinstance(value, str):
        return value
    if not isinstance(value, str | bytes) and hasattr(value, "__iter__"):
        return ", ".join(_text(v) for v in value)
    if _missing(value):
        return ""
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def _counts(values: pd.Series) -> pd.Series:
    """``values`` as float counts: what is not a finite number (missing, text, inf) counts 0."""
    numbers = pd.to_numeric(values, errors="coerce")
    return numbers.where(np.isfinite(numbers), 0.0)


def _int(value: Any) -> str:
    """An integral count or year as text; "" when missing, as given when not a finite number."""
    if _missing(value):
        return ""
    return str(int(value)) if _is_number(value) or isinstance(value, np.integer) else str(value)


def _score(value: Any) -> str:
    return "" if _missing(value) else f"{float(value):.3f}"


def _head(value: Any) -> str:
    """Whitespace collapsed, cut after :data:`HEAD_CHARS` with an ellipsis; idempotent
    (:func:`read_frames` relies on it)."""
    text = " ".join(_text(value).split())
    return text if len(text) <= HEAD_CHARS else text[:HEAD_CHARS].rstrip() + "…"


def _e(value: Any) -> str:
    return html.escape(_text(value), quote=True)


def _source(source_path: Any, url: Any) -> str:
    """A document's source: its URL's host, else its corpus sub-folder, else ``(corpus root)``; a URL
    ``urlsplit`` refuses counts as none."""
    try:
        host = urlsplit(url).hostname if isinstance(url, str) else None
    except ValueError:
        host = None
    if host:
        return host
    parts = _text(source_path).split("#", 1)[0].split("/")
    return parts[0] if len(parts) > 1 else "(corpus root)"


def _none(message: str) -> str:
    return f"<p class=\"none\">{_e(message)}</p>"


def _section(section_id: str, title: str, content: str) -> str:
    return f"<section id=\"{section_id}\">\n<h2>{_e(title)}</h2>\n{content}\n</section>"


def _table(header: Sequence[str], rows: Iterable[Sequence[Any]], numeric: set[int] | frozenset[int] = frozenset(),
           cls: str = "", widths: Sequence[str] = ()) -> str:
    """An HTML table (values escaped); ``numeric``: right-aligned column indices; ``widths``: CSS widths."""
    head = "".join(f"<th>{_e(h)}</th>" for h in header)
    body = "".join("<tr>" + "".join(f"<td class=\"num\">{_e(v)}</td>" if i in numeric else f"<td>{_e(v)}</td>"
                                    for i, v in enumerate(row)) + "</tr>" for row in rows)
    cols = "<colgroup>" + "".join(f'<col style="width:{w}">' for w in widths) + "</colgroup>" if widths else ""
    attr = f" class=\"{cls}\"" if cls else ""
    return f"<table{attr}>{cols}<thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def _figure(width: float, height: float) -> tuple[Figure, Any]:
    """A matplotlib figure (no pyplot, so no GUI backend) and its one axes; size in inches."""
    fig = Figure(figsize=(width, max(height, 1.2)), dpi=96, layout="constrained")
    ax = fig.subplots()
    ax.spines[["top", "right"]].set_visible(False)
    return fig, ax


def _plot(fig: Figure, alt: str) -> str:
    """``fig`` as an ``<img>`` holding its SVG as a ``data:`` URI (text drawn as paths, stable ids)."""
    buf = io.StringIO()
    with matplotlib.rc_context({"svg.fonttype": "path", "svg.hashsalt": "paper-pipeline-report"}):
        fig.savefig(buf, format="svg", metadata={"Date": None})
    data = base64.b64encode(buf.getvalue().encode("utf-8")).decode("ascii")
    return f"<figure><img alt=\"{_e(alt)}\" src=\"data:image/svg+xml;base64,{data}\"></figure>"


def read_frames(folder: Path, names: Iterable[str]) -> dict[str, pd.DataFrame]:
    """The tables ``folder/<name>.parquet`` read back for :func:`write_report`.

    Returns:
        per name, every row with the :data:`REPORT_COLUMNS` it has (all for tables not named), and
        under :data:`COMPLETENESS` the :func:`completeness` over every row. With ``papers``, the
        sections' other columns are read only at the shown rows; :data:`HEAD_COLUMNS` hold heads;
        ``context`` has rows but no column.

    Raises FileNotFoundError: a table is missing.
    """
    import pyarrow as pa
    import pyarrow.parquet as pq

    frames = {}
    filled: list[tuple[str, str, int, int]] = []
    names = list(names)
    for path in (folder / f"{name}.parquet" for name in names):
        if not path.exists():
            raise FileNotFoundError(f"no such table: {path}")
    # with the papers, the sections come last (their shown rows only)
    for name in sorted(names, key=lambda n: n == "sections" and "papers" in names):
        path = folder / f"{name}.parquet"
        present = pq.read_schema(path).names
        wanted = REPORT_COLUMNS.get(name)
        columns = [c for c in present if wanted is None or c in wanted]
        heads = HEAD_COLUMNS.get(name, ())
        with pq.ParquetFile(path) as file:
            filled.extend(_file_completeness(name, file))
            if name == "sections" and "papers" in frames:
                table = _shown_sections(file, columns, frames["papers"], heads)
            elif columns and file.num_row_groups:  # group by group: no whole text column at once
                table = pa.concat_tables([_with_heads(file.read_row_group(g, columns=columns), heads)
                                          for g in range(file.num_row_groups)])
            else:  # no column (the row count only) or no row
                table = _with_heads(file.read(columns=columns), heads)
        frames[name] = table.to_pandas()
    order = {(t, f): k for k, (t, fields) in enumerate(COMPLETENESS_FIELDS.items()) for f in fields}
    filled.sort(key=lambda row: order[row[0], row[1]])  # as :func:`completeness` gives them
    frames[COMPLETENESS] = pd.DataFrame(filled, columns=list(_COMPLETENESS_COLUMNS))
    return frames


def _file_completeness(name: str, file: Any) -> list[tuple[str, str, int, int]]:
    """:func:`completeness` rows of table ``name`` from its ``ParquetFile``, a column and row group at a time."""
    import pyarrow as pa
    import pyarrow.compute as pc

    rows = []
    n = file.metadata.num_rows
    for field in COMPLETENESS_FIELDS.get(name, ()):
        if field not in file.schema_arrow.names:
            continue
        count = 0
        for g in range(file.num_row_groups):
            values = file.read_row_group(g, columns=[field])[field]
            if pa.types.is_list(values.type):
                present = pc.greater(pc.list_value_length(values), 0)
            elif pa.types.is_string(values.type) or pa.types.is_large_string(values.type):
                present = pc.greater(pc.utf8_length(values), 0)
            else:
                present = pc.is_valid(values)
            count += pc.sum(pc.fill_null(present, False)).as_py() or 0
        rows.append((name, field, n, int(count)))
    return rows


#: The sections' columns :func:`read_frames` reads for every row (the rest only for the rows shown).
_EVERY_SECTION = ("paper_id", "match_score")


def _shown_sections(file: Any, columns: list[str], papers: pd.DataFrame, heads: Iterable[str]) -> Any:
    """The sections (``pyarrow.Table`` of ``columns``): :data:`_EVERY_SECTION` whole, the rest only at
    the rows shown (null elsewhere), a row group at a time."""
    import pyarrow as pa

    whole = [c for c in columns if c in _EVERY_SECTION]
    table = file.read(columns=whole)
    _, shown = _multi_source_papers(papers)
    ids = table["paper_id"].to_pylist() if "paper_id" in whole else [None] * file.metadata.num_rows
    rows = np.array(sorted(r for found in _first_mentions(shown, ids)[0].values() for r in found), np.int64)
    del ids
    n, parts, start = file.metadata.num_rows, [], 0
    others = [c for c in columns if c not in whole]
    for g in range(file.num_row_groups):
        stop = start + file.metadata.row_group(g).num_rows
        here = rows[(rows >= start) & (rows < stop)] - start
        if len(here) and others:
            parts.append(_with_heads(file.read_row_group(g, columns=others).take(pa.array(here)), heads))
        start = stop
    slot = np.full(n, -1, np.int64)
    slot[rows] = np.arange(len(rows))
    found = pa.concat_tables(parts) if parts else None
    out = {}
    for c in columns:
        if c in whole:
            out[c] = table[c]
        elif found is not None:
            out[c] = found[c].take(pa.array(slot, mask=slot < 0))
        else:
            out[c] = pa.nulls(n, file.schema_arrow.field(c).type)
    return pa.table(out)


def _with_heads(table: Any, heads: Iterable[str]) -> Any:
    """``table`` (``pyarrow.Table``) with each of its ``heads`` columns cut by :func:`_heads`."""
    for column in heads:
        if column in table.column_names:
            table = table.set_column(table.column_names.index(column), column, _heads(table[column]))
    return table


def _heads(column: Any) -> Any:
    """A text column's :func:`_head` values, nulls kept, :data:`_HEAD_BATCH` rows at a time."""
    import pyarrow as pa

    return pa.chunked_array(
        [pa.array([None if v is None else _head(v) for v in column.slice(start, _HEAD_BATCH).to_pylist()],
                  type=pa.string()) for start in range(0, len(column), _HEAD_BATCH)], type=pa.string())


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m pipeline.report OUT``: (re)write ``OUT/report.html`` from OUT's tables and manifest.

    Returns:
        0 on success; 2 when OUT lacks ``manifest.json`` or a table, or its ``report.html`` was
        edited since publishing (never overwritten).
    """
    parser = argparse.ArgumentParser(prog="python -m pipeline.report", description=main.__doc__)
    parser.add_argument("out", type=Path, help="output folder of a run")
    parser.add_argument("--previous", type=Path, default=None,
                        help="folder of the run before it, for the changes since then (default: none)")
    args = parser.parse_args(argv)
    from .write import TABLES

    try:
        manifest = json.loads((args.out / "manifest.json").read_text(encoding="utf-8"))
        frames = read_frames(args.out, [*TABLES, *(["changes"] if (args.out / "changes.parquet").exists() else [])])
        if (args.out / "errors.parquet").exists():
            frames["errors"] = pd.read_parquet(args.out / "errors.parquet")
    except FileNotFoundError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    from .publish import is_owned, published_record, record_rewrite

    if (args.out / "report.html").exists() and published_record(args.out) is not None \
            and not is_owned(args.out, "report.html"):
        print(f"error: {args.out / 'report.html'} was changed since the pipeline wrote it; move it away "
              "to write a new report", file=sys.stderr)
        return 2
    print(write_report(args.out, frames, manifest, args.previous))

    record_rewrite(args.out, "report.html")  # the next run still knows the file as its own
    return 0


if __name__ == "__main__":
    sys.exit(main())
