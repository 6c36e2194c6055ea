"""The report's table of every paper: searchable, sortable and paged offline in the page.

The papers travel as one data block: compact JSON (a list per field, sources listed once, titles
word-coded), gzip (``mtime=0``: same tables, same bytes), base64 in a ``<script
type="application/octet-stream">``. A static script unpacks it (``DecompressionStream``) and
renders :data:`PAGE_ROWS` rows at a time; search matches every typed word case-insensitively; a
header click sorts (missing last). Data never becomes markup: the script sets text and ``href``
only, and links only ``http(s)`` URLs.
"""

from __future__ import annotations

import base64
import gzip
import json
import math
from collections import Counter
from typing import Any

import pandas as pd

#: Rows rendered per page of the table.
PAGE_ROWS = 50
#: Authors and sources carried per paper (the rest counted): keeps the page under 5 MB at 100k
#: papers (bench/README.md, the report at scale).
AUTHORS_SHOWN = 1
SOURCES_SHOWN = 1
#: The data block's fields, one list per field. ``paper_id`` is not carried (random hex compresses badly).
FIELDS = ("title", "title_zh", "authors", "venue", "year", "award", "arxiv_id", "n_mentions", "n_sources",
          "docs")
#: Columns of the table: (heading, field sorted on, CSS width).
_HEADINGS = (("title", "title", "28%"), ("authors", "authors", "16%"), ("venue", "venue", "8%"),
             ("year", "year", "5%"), ("award", "award", "10%"), ("arXiv", "arxiv_id", "11%"),
             ("mentions", "n_mentions", "8%"), ("sources", "n_sources", "14%"))

CSS = """
.papers-tools{display:flex;gap:.8rem;align-items:center;flex-wrap:wrap;margin:.5rem 0}
.papers-tools input{flex:1 1 20rem;font:inherit;padding:.3rem .5rem}
table.papers{table-layout:fixed;width:100%}
table.papers td{overflow-wrap:break-word}
table.papers th button{font:inherit;font-weight:bold;background:none;border:0;padding:0;cursor:pointer;text-align:left}
table.papers .zh{display:block;color:#55606e;font-size:.85em}
table.papers ul{margin:0;padding-left:1rem}
"""

_SCRIPT = r"""
(async () => {
  const root = document.getElementById('papers-table');
  const input = document.getElementById('papers-search');
  const info = document.getElementById('papers-info');
  const body = root.querySelector('tbody');
  const [prev, next] = root.parentElement.querySelectorAll('.papers-tools button');
  let data;
  try {
    const packed = atob(document.getElementById('papers-data').textContent.trim());
    const bytes = new Uint8Array(packed.length);
    for (let i = 0; i < packed.length; i++) bytes[i] = packed.charCodeAt(i);
    const stream = new Blob([bytes]).stream().pipeThrough(new DecompressionStream('gzip'));
    data = JSON.parse(await new Response(stream).text());
    performance.mark('papers-unpacked');
  } catch (err) {
    info.textContent = 'This browser could not unpack the table (' + err + '); papers.parquet has every paper.';
    root.dataset.ready = 'error';
    return;
  }
  const C = Object.fromEntries(data.fields.map((name, i) => [name, data.columns[i]]));
  C.title = C.title.map(ids => ids.map(k => data.words[k]).join(' '));
  const n = C.title.length, docs = data.docs, pageRows = data.page_rows;
  const all = () => Array.from({length: n}, (_, i) => i);
  let view = all(), page = 0, sortField = null, sortDir = 1, keys = null;
  const empty = v => v === null || v === '';
  const cell = (tr, cls) => { const td = tr.insertCell(); if (cls) td.className = cls; return td; };
  const span = (parent, text, cls) => { const s = document.createElement('span'); s.textContent = text;
    if (cls) s.className = cls; parent.appendChild(s); return s; };
  const link = (parent, url, text) => {
    if (!/^https?:\/\//i.test(url)) { span(parent, text); return; }
    const a = document.createElement('a'); a.href = url; a.textContent = text; a.title = url; parent.appendChild(a);
  };
  const site = url => { try { const u = new URL(url); return u.host + (u.pathname.length > 1 ? '/…' : ''); }
    catch (err) { return url; } };
  function render() {
    const pages = Math.max(1, Math.ceil(view.length / pageRows));
    page = Math.min(page, pages - 1);
    const fragment = document.createDocumentFragment();
    for (const i of view.slice(page * pageRows, (page + 1) * pageRows)) {
      const tr = document.createElement('tr');
      const title = cell(tr);
      span(title, C.title[i] || C.title_zh[i] || '(no title)');
      if (C.title[i] && C.title_zh[i]) span(title, C.title_zh[i], 'zh').lang = 'zh';
      cell(tr).textContent = C.authors[i];
      cell(tr).textContent = C.venue[i];
      cell(tr, 'num').textContent = C.year[i] === null ? '' : C.year[i];
      cell(tr).textContent = C.award[i];
      const arxiv = cell(tr);
      if (C.arxiv_id[i]) link(arxiv, 'https://arxiv.org/abs/' + encodeURI(C.arxiv_id[i]), C.arxiv_id[i]);
      cell(tr, 'num').textContent = C.n_mentions[i];
      const sources = cell(tr), list = document.createElement('ul');
      for (const d of C.docs[i]) {
        const li = document.createElement('li'); link(li, docs[d], site(docs[d])); list.appendChild(li);
      }
      const more = C.n_sources[i] - C.docs[i].length;
      if (more > 0) {
        const li = document.createElement('li'); li.textContent = '+' + more + ' more'; list.appendChild(li);
      }
      span(sources, C.n_sources[i] + ' source(s)');
      sources.appendChild(list);
      fragment.appendChild(tr);
    }
    body.replaceChildren(fragment);
    info.textContent = view.length + ' of ' + n + ' papers' + (view.length ? ', page ' + (page + 1) + ' of ' + pages : '');
    prev.disabled = page === 0;
    next.disabled = page >= pages - 1;
  }
  function apply() {
    const words = input.value.toLowerCase().split(/\s+/).filter(Boolean);
    let found = all();
    if (words.length) {
      keys = keys || found.map(i => [C.title[i], C.title_zh[i], C.authors[i], C.venue[i], C.arxiv_id[i]]
        .join('\u0001').toLowerCase());
      found = found.filter(i => words.every(w => keys[i].includes(w)));
    }
    if (sortField !== null) {
      const column = C[sortField];
      found.sort((a, b) => {
        const x = column[a], y = column[b];
        if (empty(x) || empty(y)) return (empty(x) - empty(y)) || a - b;
        return (x < y ? -sortDir : x > y ? sortDir : 0) || a - b;
      });
    }
    view = found;
    page = 0;
    render();
  }
  let timer = null;
  input.addEventListener('input', () => { clearTimeout(timer); timer = setTimeout(apply, 120); });
  root.querySelectorAll('th button').forEach(button => button.addEventListener('click', () => {
    const field = button.dataset.field;
    sortDir = sortField === field ? -sortDir : (field.startsWith('n_') || field === 'year' ? -1 : 1);
    sortField = field;
    root.querySelectorAll('th').forEach(th => th.removeAttribute('aria-sort'));
    button.parentElement.setAttribute('aria-sort', sortDir > 0 ? 'ascending' : 'descending');
    apply();
  }));
  prev.addEventListener('click', () => { page -= 1; render(); });
  next.addEventListener('click', () => { page += 1; render(); });
  render();
  performance.mark('papers-rendered');
  root.dataset.ready = 'yes';
})();
"""


def papers_table(papers: pd.DataFrame, docs: pd.DataFrame) -> str:
    """The HTML of the table of every paper (search box, table, data block, script). ``papers``:
    the papers table (each column optional); ``docs``: ``doc_id``, ``url``, ``source_path``."""
    packed = base64.b64encode(gzip.compress(json.dumps(papers_data(papers, docs), ensure_ascii=False,
                                                       separators=(",", ":")).encode("utf-8"),
                                            compresslevel=9, mtime=0)).decode("ascii")
    cols = "".join(f'<col style="width:{width}">' for _, _, width in _HEADINGS)
    head = "".join(f'<th scope="col"><button type="button" data-field="{field}">{label}</button></th>'
                   for label, field, _ in _HEADINGS)
    return ('<div class="papers-tools"><input id="papers-search" type="search" '
            'placeholder="Search titles, authors, venues, arXiv ids…" aria-label="Search the papers">'
            '<button type="button">previous</button><button type="button">next</button>'
            '<span id="papers-info" class="meta">unpacking the table…</span></div>'
            f'<table id="papers-table" class="papers"><colgroup>{cols}</colgroup><thead><tr>{head}</tr></thead>'
            '<tbody></tbody></table>'
            f'<script type="application/octet-stream" id="papers-data">{packed}</script>'
            f"<script>{_SCRIPT}</script>")


def papers_data(papers: pd.DataFrame, docs: pd.DataFrame) -> dict[str, Any]:
    """The data block: ``fields``; ``columns`` (per field, values in table order; missing texts
    ``""``, a missing year null; ``title`` word codes; ``authors`` the first :data:`AUTHORS_SHOWN`
    then "+N"; ``docs`` indices of the first :data:`SOURCES_SHOWN` sources); ``docs`` (each
    source's URL, else its path); ``words``; ``page_rows``."""
    doc_ids = _column(docs, "doc_id")
    source_of = {d: _str(u) or _str(p) for d, u, p in zip(doc_ids, _column(docs, "url"), _column(docs, "source_path"),
                                                          strict=True)}
    index: dict[Any, int] = {}
    listed: list[str] = []
    rows = []
    columns = {name: _column(papers, name) for name in ("title", "title_zh", "authors", "venue", "year", "award",
                                                        "arxiv_id", "n_mentions", "n_sources", "doc_ids")}
    for k in range(len(papers)):
        authors = _items(columns["authors"][k])
        shown = ", ".join(authors[:AUTHORS_SHOWN]) + (f" +{len(authors) - AUTHORS_SHOWN}"
                                                       if len(authors) > AUTHORS_SHOWN else "")
        sources = _items(columns["doc_ids"][k])
        refs = []
        for d in sources[:SOURCES_SHOWN]:
            if d not in index:
                index[d] = len(listed)
                listed.append(source_of.get(d, d))
            refs.append(index[d])
        rows.append([_str(columns["title"][k]), _str(columns["title_zh"][k]), shown, _str(columns["venue"][k]),
                     _number(columns["year"][k]), _str(columns["award"][k]), _str(columns["arxiv_id"][k]),
                     _number(columns["n_mentions"][k]) or 0, _number(columns["n_sources"][k]) or len(sources),
                     refs])
    columns_out = [list(c) for c in zip(*rows, strict=True)] if rows else [[] for _ in FIELDS]
    words, columns_out[FIELDS.index("title")] = word_coded(columns_out[FIELDS.index("title")])
    return {"fields": list(FIELDS), "columns": columns_out, "docs": listed, "words": words, "page_rows": PAGE_ROWS}


def word_coded(texts: list[str]) -> tuple[list[str], list[list[int]]]:
    """``(words, codes)``: distinct words split on single spaces, most frequent first, and per
    text its word indices (``" ".join(words[k] for k in codes[i]) == texts[i]``)."""
    split = [text.split(" ") if text else [] for text in texts]
    counts = Counter(word for words in split for word in words)
    words = [word for word, _ in counts.most_common()]
    index = {word: k for k, word in enumerate(words)}
    return words, [[index[word] for word in text_words] for text_words in split]


def _column(df: pd.DataFrame, name: str) -> list[Any]:
    return df[name].tolist() if name in df.columns else [None] * len(df)


def _str(value: Any) -> str:
    return value if isinstance(value, str) else ""


def _number(value: Any) -> int | None:
    """An integral count or year; None when missing or not a finite number."""
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        return None
    return int(value)


def _items(value: Any) -> list[str]:
    """A list column's value as a list of strings (missing: empty)."""
    if value is None or isinstance(value, str | float):
        return []
    return [v for v in value if isinstance(v, str)]
