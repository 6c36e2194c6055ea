"""The run report: one self-contained HTML file, checked in a real headless Chromium.

The run covers the sample corpus plus a file of an unknown type (skipped), an empty file and a
binary file (error), so every section of the report has data; it is the second run over its
output folder, so the report has changes to show. The browser is Debian's ``chromium`` with the
``fonts-noto-cjk`` fonts (``apt-get install -y chromium fonts-noto-cjk``, what ``make browser``
does; override the binary with ``$CHROMIUM``), driven
over the DevTools protocol on a pipe (``--remote-debugging-pipe``: no port, no extra Python
package). Networking is cut (a dead proxy, every host unresolvable) and every request the page
makes is recorded, so a report that needs the network fails. Without Chromium the browser tests
skip, and fail under CI (``$CI`` set).
"""

from __future__ import annotations

import datetime as dt
import fcntl
import json
import os
import queue
import shutil
import subprocess
import tempfile
import threading
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from pipeline.config import load_config
from pipeline.report import REPORT_NAME, SECTION_IDS, render_report, write_report
from pipeline.runner import RunResult, run

from conftest import SAMPLE

#: Sections whose plot must render when the run has data for it.
PLOTTED = ("funnel", "documents", "match-scores", "dropped", "timing")
BROWSER_FLAGS = (
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--no-first-run",
    "--no-default-browser-check", "--disable-extensions", "--disable-sync", "--disable-component-update",
    "--mute-audio", "--hide-scrollbars", "--disable-dev-shm-usage", "--remote-debugging-pipe",
    # no network: every connection goes to a closed local port, and no host name resolves
    "--proxy-server=http://127.0.0.1:9", "--host-resolver-rules=MAP * ~NOTFOUND",
)
#: What the page reports about itself, evaluated in the browser after the load event.
PAGE_PROBE = """(() => {
  const box = el => { const r = el.getBoundingClientRect(); return {w: r.width, h: r.height}; };
  const inked = img => {  // share of the plot's pixels that are not white/transparent
    if (!img.complete || !img.naturalWidth) return 0;
    const c = document.createElement('canvas'); c.width = img.naturalWidth; c.height = img.naturalHeight;
    const g = c.getContext('2d'); g.drawImage(img, 0, 0);
    const d = g.getImageData(0, 0, c.width, c.height).data; let n = 0;
    for (let i = 0; i < d.length; i += 4) if (d[i + 3] > 0 && (d[i] < 240 || d[i + 1] < 240 || d[i + 2] < 240)) n++;
    return n / (d.length / 4);
  };
  return JSON.stringify({
    title: document.title,
    sections: [...document.querySelectorAll('section')].map(s => ({id: s.id, ...box(s),
      heading: (s.querySelector('h2') || {}).textContent,
      plots: [...s.querySelectorAll('img, svg')].map(p => ({tag: p.tagName, ...box(p),
        complete: p.complete !== false, natural: p.naturalWidth || 0, ink: p.tagName === 'IMG' ? inked(p) : 1})),
      tables: s.querySelectorAll('table').length, rows: s.querySelectorAll('tbody tr').length})),
    scripts: document.querySelectorAll('script').length,
    scripts_run: document.querySelectorAll('script:not([type])').length,
    text: document.body.innerText,
    wide: [...document.querySelectorAll('table')].filter(t => t.getBoundingClientRect().right
      > document.documentElement.clientWidth + 1 && t.getClientRects().length).length,
    height: document.documentElement.scrollHeight,
  });
})()"""
#: Resolves when the table of every paper has rendered (its ``data-ready``), or after 10 s.
TABLE_READY = """new Promise(resolve => { const t0 = Date.now(); const poll = () => {
  const table = document.getElementById('papers-table');
  if (!table || table.dataset.ready || Date.now() - t0 > 10000) resolve(table ? table.dataset.ready || 'timeout' : 'none');
  else setTimeout(poll, 10); }; poll(); })"""
#: Types ``%s`` (a JSON string) into the search box, waits for the table to follow, and gives
#: the shown rows' text and the count line.
SEARCH = """new Promise(resolve => { const input = document.getElementById('papers-search');
  input.value = %s; input.dispatchEvent(new Event('input'));
  setTimeout(() => resolve(JSON.stringify({
    rows: [...document.querySelectorAll('#papers-table tbody tr')].map(tr => tr.innerText),
    links: [...document.querySelectorAll('#papers-table tbody a')].map(a => a.href),
    info: document.getElementById('papers-info').textContent})), 600); })"""
#: Whether Chinese renders as glyphs in the page's own font: two different characters drawn on a
#: canvas in the body's font must differ from each other and from a private-use character
#: (which every font leaves as the same empty box, "tofu"); and the width of the text.
CJK_RENDERS = """(() => {
  const font = '32px ' + getComputedStyle(document.body).fontFamily;
  const draw = ch => { const c = document.createElement('canvas'); c.width = 48; c.height = 48;
    const g = c.getContext('2d'); g.font = font; g.fillStyle = '#000'; g.textBaseline = 'top';
    g.fillText(ch, 4, 4); return Array.from(g.getImageData(0, 0, 48, 48).data).join(','); };
  const zhong = draw('\u4e2d'), wen = draw('\u6587'), tofu = draw('\ue000');
  const g = document.createElement('canvas').getContext('2d'); g.font = font;
  return JSON.stringify({distinct: zhong !== wen, not_tofu: zhong !== tofu && wen !== tofu,
    inked: zhong.split(',').some((v, i) => i % 4 === 3 && v !== '0'), font: font,
    width: g.measureText('\u4e2d\u6587').width, tofu_width: g.measureText('\ue000\ue001').width});
})()"""


class Chromium:
    """A headless Chromium driven over the DevTools protocol on fds 3/4 (NUL-terminated JSON)."""

    def __init__(self, binary: str, user_data_dir: Path, log_path: Path) -> None:
        to_child_r, self._to_child = os.pipe()
        self._from_child, from_child_w = os.pipe()
        # the child's ends move to fds >= 10 first, so that none is 3 or 4 when bash places them
        to_child_r, from_child_w = (_high_fd(to_child_r), _high_fd(from_child_w))
        self.log_path = log_path
        self._log = log_path.open("wb")
        # bash (dash takes one-digit fds only) moves the pipe ends to the fd numbers Chromium expects, then execs it
        script = f'exec "$0" "$@" 3<&{to_child_r} 4>&{from_child_w} {to_child_r}<&- {from_child_w}>&-'
        self.proc = subprocess.Popen(
            ["bash", "-c", script, binary, *BROWSER_FLAGS, f"--user-data-dir={user_data_dir}", "about:blank"],
            pass_fds=(to_child_r, from_child_w), stdin=subprocess.DEVNULL, stdout=self._log, stderr=self._log)
        os.close(to_child_r)
        os.close(from_child_w)
        self._messages: queue.Queue[dict[str, Any] | None] = queue.Queue()
        self._next_id = 0
        self.events: list[dict[str, Any]] = []
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        buffer = b""
        with os.fdopen(self._from_child, "rb", buffering=0) as pipe:
            while chunk := pipe.read(1 << 16):
                buffer += chunk
                *messages, buffer = buffer.split(b"\0")
                for message in messages:
                    self._messages.put(json.loads(message))
        self._messages.put(None)  # the browser closed the pipe

    def _next(self, timeout: float) -> dict[str, Any]:
        try:
            message = self._messages.get(timeout=timeout)
        except queue.Empty:
            raise AssertionError(f"Chromium did not answer within {timeout} s; log: {self.log_path}") from None
        if message is None:
            raise AssertionError(f"Chromium closed the DevTools pipe; log: {self.log_path}")
        return message

    def call(self, method: str, params: dict[str, Any] | None = None, session: str | None = None,
             timeout: float = 60) -> dict[str, Any]:
        """Send one command and return its ``result``; events that arrive meanwhile go to :attr:`events`."""
        self._next_id += 1
        message: dict[str, Any] = {"id": self._next_id, "method": method, "params": params or {}}
        if session:
            message["sessionId"] = session
        os.write(self._to_child, json.dumps(message).encode() + b"\0")
        while True:
            reply = self._next(timeout)
            if reply.get("id") != self._next_id:
                self.events.append(reply)
                continue
            if "error" in reply:
                raise AssertionError(f"DevTools {method} failed: {reply['error']}")
            return reply.get("result", {})

    def wait_event(self, method: str, session: str, timeout: float = 60) -> dict[str, Any]:
        """The first event named ``method`` of ``session`` not yet waited for."""
        while True:
            for i, event in enumerate(self.events):
                if event.get("method") == method and event.get("sessionId") == session:
                    return self.events.pop(i)
            self.events.append(self._next(timeout))

    def open(self, url: str, screenshot: Path | None = None,
             actions: tuple[str, ...] = ()) -> tuple[dict[str, Any], list[str]]:
        """Load ``url`` in a new tab, wait for the table of every paper (:data:`TABLE_READY`);
        return what :data:`PAGE_PROBE` finds (plus ``ready``, the table's state, ``actions``,
        the value of each of ``actions`` evaluated in turn, promises awaited, and ``errors``, the
        page's uncaught exceptions) and every URL requested."""
        target = self.call("Target.createTarget", {"url": "about:blank"})["targetId"]
        session = self.call("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
        for domain in ("Page", "Network", "Runtime"):
            self.call(f"{domain}.enable", session=session)
        self.call("Emulation.setDeviceMetricsOverride",
                  {"width": 1200, "height": 900, "deviceScaleFactor": 1, "mobile": False}, session)
        self.call("Page.navigate", {"url": url}, session)
        self.wait_event("Page.loadEventFired", session)
        ready = self.evaluate(TABLE_READY, session)
        value = self.call("Runtime.evaluate", {"expression": PAGE_PROBE, "returnByValue": True}, session)
        assert "exceptionDetails" not in value, value["exceptionDetails"]
        done = [self.evaluate(action, session) for action in actions]
        if screenshot is not None:
            import base64

            shot = self.call("Page.captureScreenshot", {"format": "png", "captureBeyondViewport": True}, session)
            screenshot.write_bytes(base64.b64decode(shot["data"]))
        requested = [e["params"]["request"]["url"] for e in self.events
                     if e.get("method") == "Network.requestWillBeSent" and e.get("sessionId") == session]
        errors = [e["params"]["exceptionDetails"] for e in self.events
                  if e.get("method") == "Runtime.exceptionThrown" and e.get("sessionId") == session]
        self.events = [e for e in self.events if e.get("sessionId") != session]
        self.call("Target.closeTarget", {"targetId": target})
        return json.loads(value["result"]["value"]) | {"ready": ready, "actions": done, "errors": errors}, requested

    def evaluate(self, expression: str, session: str) -> Any:
        """The value of ``expression`` in the page (a promise awaited); an exception fails."""
        value = self.call("Runtime.evaluate", {"expression": expression, "returnByValue": True,
                                               "awaitPromise": True}, session)
        assert "exceptionDetails" not in value, value["exceptionDetails"]
        return value["result"].get("value")

    def close(self) -> None:
        try:
            self.call("Browser.close", timeout=10)
        except AssertionError:
            pass
        try:
            self.proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        os.close(self._to_child)
        self._log.close()


def _high_fd(fd: int) -> int:
    """A copy of ``fd`` numbered 10 or more (the original is closed)."""
    high = fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, 10)
    os.close(fd)
    return high


def chromium_binary() -> str:
    """Path of the Chromium binary; skips (fails under CI) when there is none."""
    binary = os.environ.get("CHROMIUM") or shutil.which("chromium") or shutil.which("chromium-browser")
    if binary and Path(binary).exists():
        return binary
    message = ("Chromium is not installed: the report's browser test needs Debian's `chromium` "
               "(`apt-get install -y chromium fonts-noto-cjk`, as root; `make test` installs them) or $CHROMIUM "
               "set to a binary")
    if os.environ.get("CI"):
        pytest.fail(message + " (CI is set: the browser test must run)")
    pytest.skip(message)


@pytest.fixture(scope="module")
def browser(tmp_path_factory) -> Chromium:
    binary = chromium_binary()
    profile = Path(tempfile.mkdtemp(prefix="chromium-profile-"))  # fresh profile, removed afterwards
    chromium = Chromium(binary, profile, tmp_path_factory.mktemp("chromium") / "chromium.log")
    yield chromium
    chromium.close()
    shutil.rmtree(profile, ignore_errors=True)


#: A short article of the first run only (removed before the second): two papers of its own.
GONE_ARTICLE = """机器之心报道
今年的会议公布了两篇最佳论文。
论文 1：Scaling Sparse Attention for Long Documents
论文地址：https://arxiv.org/abs/2401.01234
论文摘要：本文提出一种稀疏注意力方法，在长文档上显著降低计算开销，同时保持模型质量。
论文 2：Robust Graph Neural Networks under Label Noise
论文地址：https://arxiv.org/abs/2402.05678
论文摘要：本文研究标签噪声下的图神经网络，提出一种鲁棒的训练目标，在多个基准上取得更好结果。
"""
#: The sample file added by the second run.
ADDED = "c_blog_en.md"


@pytest.fixture(scope="module")
def report_run(tmp_path_factory, use_embedder) -> tuple[RunResult, dict[str, Any]]:
    """A real run over the sample corpus plus a skipped, an empty and a failing file: the second
    run over the folder, after a first one without :data:`ADDED` and with ``gone.txt``. The
    manifest holds ``_previous_paper_ids``, the first run's paper ids (for the changes)."""
    corpus = tmp_path_factory.mktemp("report_corpus")
    for path in Path(SAMPLE).iterdir():
        if path.is_file() and path.name != ADDED:
            shutil.copy(path, corpus / path.name)
    (corpus / "slides.pdf").write_bytes(b"%PDF-1.4 not read")
    (corpus / "empty.txt").write_text("", encoding="utf-8")
    (corpus / "binary.txt").write_bytes(bytes(range(256)) * 8)
    (corpus / "gone.txt").write_text(GONE_ARTICLE, encoding="utf-8")
    out = tmp_path_factory.mktemp("report_out")
    run(corpus, out, load_config(), embedder=use_embedder, progress=False)
    before = set(pd.read_parquet(out / "papers.parquet", columns=["paper_id"])["paper_id"])
    (corpus / "gone.txt").unlink()
    shutil.copy(Path(SAMPLE) / ADDED, corpus / ADDED)
    result = run(corpus, out, load_config(), embedder=use_embedder, progress=False)
    manifest = json.loads((out / "manifest.json").read_text(encoding="utf-8"))
    return result, manifest | {"_previous_paper_ids": sorted(before)}


def _check_page(page: dict[str, Any], requested: list[str], plotted: tuple[str, ...]) -> None:
    offline = [u for u in requested if not u.startswith(("file:", "data:"))]
    assert not offline, f"the report requested network resources: {offline}"
    assert (page["scripts"], page["scripts_run"]) == (2, 1)  # the papers' data block and the table's code
    assert page["ready"] == "yes" and page["errors"] == [], (page["ready"], page["errors"])
    assert page["wide"] == 0, "a table runs past the right edge of the page"
    sections = {s["id"]: s for s in page["sections"]}
    assert list(sections) == list(SECTION_IDS)
    for sid, section in sections.items():
        assert section["w"] > 0 and section["h"] > 0, f"section {sid} does not render: {section}"
        assert section["heading"], sid
    for sid in plotted:
        plots = sections[sid]["plots"]
        assert plots, f"section {sid} has no plot"
        for plot in plots:
            assert plot["complete"] and plot["natural"] > 0, f"plot of {sid} did not decode: {plot}"
            assert plot["w"] > 100 and plot["h"] > 50, f"plot of {sid} is not visible: {plot}"
            assert plot["ink"] > 0.01, f"plot of {sid} is blank: {plot}"


def test_report_renders_in_a_headless_browser(report_run, browser: Chromium, tmp_path: Path) -> None:
    """The report the run wrote (of its second run): the run's date, the changes since the first
    run, the completeness table, a search through the search box, and Chinese as glyphs."""
    result, manifest = report_run
    path = result.out_dir / REPORT_NAME
    assert path.stat().st_size > 0
    papers = result.frames["papers"]
    word = "autoregressive"  # a word of the title of the sample's paper found in two documents
    expected = [t for t in papers["title"].fillna("") if word in t.lower()]
    title = expected[0]
    page, requested = browser.open(path.resolve().as_uri(), screenshot=tmp_path / "report.png",
                                   actions=(SEARCH % json.dumps(word), CJK_RENDERS, SEARCH % json.dumps("")))
    _check_page(page, requested, PLOTTED)
    text = page["text"]
    # the run's date, duration and files, as the manifest has them
    started = dt.datetime.fromisoformat(manifest["started_at"]).astimezone(dt.timezone.utc)
    assert f"date {started:%Y-%m-%d %H:%M:%S} UTC" in text
    files = {k: len(manifest["files"][k]) for k in ("processed", "reused", "removed")}
    assert manifest["files"]["removed"] == ["gone.txt"] and ADDED in manifest["files"]["processed"]
    assert f"files {files['processed']} processed, {files['reused']} reused, 1 removed" in text
    # the changes since the first run, as changes.parquet lists them; new ids are papers added or
    # split off, ids gone were removed or merged
    before, now = set(manifest["_previous_paper_ids"]), set(papers["paper_id"])
    kinds = pd.read_parquet(result.out_dir / "changes.parquet")["change"].value_counts().to_dict()
    n = {k: kinds.get(k, 0) for k in ("added", "removed", "merged", "split", "field_changed")}
    assert n == manifest["changes"]
    assert len(now - before) == n["added"] + n["split"] and len(before - now) == n["removed"] + n["merged"]
    assert n["added"] > 0 and n["removed"] >= 2  # the blog's papers came, gone.txt's two went
    assert (f"Papers: {n['added']} added, {n['removed']} removed, {n['merged']} merged into another, "
            f"{n['split']} split off another; {n['field_changed']} field values changed") in text
    changes = _section_text(text, "Changes since the last run", "Field completeness")
    assert f"papers\t{len(before)}\t{len(now)}\t{len(now) - len(before):+d}" in changes
    # completeness: the share of papers with an arXiv id, authors, a venue, as counted here
    completeness = _section_text(text, "Field completeness", "Every paper")
    for field in ("arxiv_id", "authors", "venue", "year", "award", "institutions"):
        filled = sum(bool(len(v)) if isinstance(v, list) else (v is not None and v == v and v != "")
                     for v in papers[field])
        assert f"{field}\t{filled}\t{100 * filled / len(papers):.1f} %" in completeness, field
    # the table of every paper: all of them over the pages, then the search keeps the matching ones
    assert f"{len(papers)} of {len(papers)} papers, page 1 of 1" in text
    found, cjk, cleared = page["actions"]
    found = json.loads(found)
    assert len(found["rows"]) == len(expected) >= 1 and any(title in row for row in found["rows"])
    assert found["info"].startswith(f"{len(expected)} of {len(papers)} papers")
    arxiv = papers.loc[papers["title"] == title, "arxiv_id"].dropna()
    assert {f"https://arxiv.org/abs/{a}" for a in arxiv} <= set(found["links"])
    assert json.loads(cleared)["info"].startswith(f"{len(papers)} of {len(papers)} papers")
    # Chinese renders as glyphs, not as boxes (needs a CJK font: `make browser` installs fonts-noto-cjk)
    cjk = json.loads(cjk)
    assert cjk["inked"] and cjk["distinct"] and cjk["not_tofu"], f"Chinese renders as boxes: {cjk}"
    assert "Noto Sans CJK SC" in cjk["font"]
    assert any("\u4e00" <= ch <= "\u9fff" for ch in text)  # the page holds Chinese text to render
    sections = {s["id"]: s for s in page["sections"]}
    text = page["text"]
    for name in ("slides.pdf", "binary.txt", "empty.txt", "skipped", "error"):  # the files not processed
        assert name in text, name
    assert "Visual Autoregressive Modeling" in text  # (a mention's title, as the section has it)
    assert sections["multi-source"]["tables"] >= 1 and sections["top-papers"]["rows"] == len(result.frames["papers"])
    assert page["height"] < 20_000, "the page is too long to read"
    for reason in set(result.frames["dropped"]["reason"]):
        assert reason in text
    assert f"dedup match threshold: {load_config().dedup.match_threshold}" in text
    assert (tmp_path / "report.png").stat().st_size > 10_000


def _section_text(text: str, start: str, end: str) -> str:
    """The page text from heading ``start`` up to heading ``end``."""
    return text.split(start, 1)[1].split(end, 1)[0]


def test_report_of_parquet_read_back_renders(sample_run, browser: Chromium, tmp_path: Path) -> None:
    out = sample_run["_dir"]
    manifest = json.loads((out / "manifest.json").read_text(encoding="utf-8"))
    frames = {k: v for k, v in sample_run.items() if k != "_dir"}
    path = write_report(tmp_path, frames, manifest)
    page, requested = browser.open(path.resolve().as_uri())
    _check_page(page, requested, PLOTTED)


def test_empty_run_report_renders(browser: Chromium, tmp_path: Path, use_embedder) -> None:
    """A corpus with no readable article: no sections, papers, scores or dropped spans."""
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    out = tmp_path / "out"
    result = run(corpus, out, load_config(), embedder=use_embedder, progress=False)
    manifest = json.loads((out / "manifest.json").read_text(encoding="utf-8"))
    path = write_report(out, result.frames, manifest)
    page, requested = browser.open(path.resolve().as_uri())
    _check_page(page, requested, ("funnel", "timing"))
    assert "no papers" in page["text"] and "no dropped spans" in page["text"]
    assert "no earlier run to compare with" in page["text"] and "0 of 0 papers" in page["text"]


def test_report_needs_no_tables_at_all(tmp_path: Path) -> None:
    path = write_report(tmp_path, {}, {})
    page = path.read_text(encoding="utf-8")
    for sid in SECTION_IDS:
        assert f'<section id="{sid}">' in page


def test_report_escapes_text_and_shows_an_errors_table(report_run) -> None:
    result, manifest = report_run
    frames = dict(result.frames)
    papers = frames["papers"].copy()
    papers.loc[0, "title"] = '<script>alert("x")</script> & <b>'
    frames["papers"] = papers
    frames["errors"] = pd.DataFrame({"stage": ["extract"], "message": ["<img src=x onerror=alert(1)>"]})
    page = render_report(frames, manifest)
    # the page's only scripts are the table's data block (base64) and its code, which holds no data
    assert page.count("<script") == 2 and page.count("<script>") == 1
    assert "<script>alert" not in page and "<img src=x" not in page
    from pipeline.report_table import _SCRIPT

    assert page.split("<script>")[1].split("</script>")[0] == _SCRIPT
    assert "&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt; &amp; &lt;b&gt;" in page
    assert "&lt;img src=x onerror=alert(1)&gt;" in page and "Errors table" in page
    assert "http://" not in page.split("<body>")[0] and "https://" not in page.split("<body>")[0]


def test_multi_source_shows_the_papers_in_most_sources_and_their_first_mentions() -> None:
    from pipeline import report

    n_papers = report.MULTI_SOURCE_PAPERS + 30
    papers = pd.DataFrame({
        "paper_id": [f"p{k:03d}" for k in range(n_papers)],
        "title": [f"Paper {k}" for k in range(n_papers)],
        "n_sources": [2 + (k % 7) for k in range(n_papers)],  # 2..8 sources
        "n_mentions": [20 if k == 6 else 2 + (k % 7) for k in range(n_papers)],
    })
    rows = [{"section_id": f"{pid}-s{m:02d}", "paper_id": pid, "doc_id": f"d{m}", "title": f"mention {m} of {pid}"}
            for pid, n in zip(papers["paper_id"], papers["n_mentions"], strict=True) for m in range(n)]
    sections = pd.DataFrame(rows)
    docs = pd.DataFrame({"doc_id": [f"d{m}" for m in range(20)], "source_path": [f"site{m}/a.txt" for m in range(20)]})
    html_text = report._multi_source(papers, sections, docs)
    assert html_text.count("<table") == report.MULTI_SOURCE_PAPERS
    assert f"{n_papers} paper(s); the {report.MULTI_SOURCE_PAPERS} found in the most sources are shown" in html_text
    # the most sources first (8, then 7, ...), ties by mentions: p006 (8 sources, 20 mentions) leads
    assert html_text.index("(p006;") < html_text.index("(p013;") < html_text.index("(p005;")
    assert "p001;" not in html_text  # 3 sources: below the cut of the 50 in the most sources
    # at most MULTI_SOURCE_MENTIONS columns per paper, the first in section order
    assert "8 sources, 20 mentions, the first 12 shown" in html_text
    assert "p006-s11" in html_text and "p006-s12" not in html_text
    assert "site3/a.txt" in html_text


def test_multi_source_ignores_missing_ids_and_counts_mentions_without_n_mentions() -> None:
    from pipeline import report

    papers = pd.DataFrame({"paper_id": ["p1", None], "title": ["Known", "Unknown"], "n_sources": [3, 2]})
    sections = pd.DataFrame({"section_id": [f"s{k:02d}" for k in range(22)],
                             "paper_id": ["p1"] * 20 + [None, None], "doc_id": [f"d{k}" for k in range(22)]})
    html_text = report._multi_source(papers, sections, pd.DataFrame({"doc_id": [], "source_path": []}))
    assert "3 sources, 20 mentions, the first 12 shown" in html_text  # counted, no n_mentions column
    assert "s20" not in html_text and "s21" not in html_text  # a missing id matches nothing
    assert html_text.count("<table") == 2


def test_long_errors_and_source_tables_are_cut_and_counted() -> None:
    from pipeline import report

    n = report.ERROR_ROWS + 5
    docs = pd.DataFrame({"doc_id": [f"d{i}" for i in range(n)], "source_path": [f"s{i % 150:03d}/f{i}.txt" for i in range(n)],
                         "url": [None] * n, "lang": ["en"] * n, "status": ["error"] * n,
                         "error": [f"failed {i}" for i in range(n)]})
    errors = pd.DataFrame({"path": docs["source_path"], "stage": ["ingest"] * n, "message": docs["error"]})
    page = render_report({"documents": docs, "errors": errors}, {})
    errors_part = page.split('<section id="errors">')[1]
    assert f"failed {report.ERROR_ROWS - 1}<" in errors_part and f"failed {report.ERROR_ROWS}<" not in errors_part
    assert errors_part.count(f"The first {report.ERROR_ROWS} of {n} rows are shown") == 2
    sources_part = page.split('<section id="documents">')[1].split("</section>")[0]
    assert sources_part.count("<tr>") == report.SOURCE_ROWS + 1  # the header and the shown sources
    # 150 sources: s000..s054 hold 2 documents each (205 = 150 + 55), then 1 each, ties in name order
    assert sources_part.index(">s054<") < sources_part.index(">s055<") < sources_part.index(">s099<")
    assert ">s100<" not in sources_part
    assert f"The {report.SOURCE_ROWS} sources with the most documents are shown; 50 more sources hold 50 documents" in sources_part


def test_report_command_reads_the_tables_without_their_texts(report_run, tmp_path: Path) -> None:
    from pipeline import report

    result, _ = report_run
    out = tmp_path / "copy"
    shutil.copytree(result.run_dir, out)
    frames = report.read_frames(out, ["documents", "sections"])
    assert "text" not in frames["documents"] and "text_norm" not in frames["sections"]
    assert "title" in frames["sections"] and len(frames["sections"]) == len(result.frames["sections"])
    (out / "report.html").unlink()
    assert report.main([str(out)]) == 0 and (out / "report.html").exists()
    (out / "papers.parquet").unlink()
    assert report.main([str(out)]) == 2



def test_read_back_report_of_a_shown_paper_without_title_renders_as_the_tables(report_run, tmp_path: Path) -> None:
    """A paper found in several sources whose English title is missing (a Chinese-only paper)
    renders from the read-back frames as from the whole tables (break-it: Arrow-backed strings
    read a missing title as ``pd.NA``, which ``or`` refuses)."""
    import pyarrow as pa
    import pyarrow.compute as pc
    import pyarrow.parquet as pq

    from pipeline import report
    from pipeline.write import TABLES

    result, manifest = report_run
    out = tmp_path / "copy"
    shutil.copytree(result.run_dir, out)
    papers = pq.read_table(out / "papers.parquet")
    multi = pc.greater(papers["n_sources"], 1)
    assert pc.any(multi).as_py()
    papers = papers.set_column(papers.schema.get_field_index("title"), "title",
                               pc.if_else(multi, pa.scalar(None, pa.string()), papers["title"]))
    pq.write_table(papers, out / "papers.parquet")
    errors = pd.read_parquet(out / "errors.parquet")
    full = {name: pd.read_parquet(out / f"{name}.parquet") for name in TABLES}
    page = render_report(report.read_frames(out, TABLES) | {"errors": errors}, manifest)
    assert page == render_report(full | {"errors": errors}, manifest)
    assert 'id="multi-source"' in page


def test_report_reads_back_only_the_columns_it_shows_and_renders_the_same(report_run) -> None:
    """:func:`read_frames` leaves out what the report does not show (list columns such as
    ``keywords`` or ``authors``, long texts), and the report of the real run is unchanged."""
    from pipeline import report
    from pipeline.write import TABLES

    result, manifest = report_run
    full = {name: pd.read_parquet(result.run_dir / f"{name}.parquet") for name in TABLES}
    errors = pd.read_parquet(result.run_dir / "errors.parquet")
    frames = report.read_frames(result.run_dir, TABLES)
    for name in TABLES:
        wanted = [c for c in full[name].columns if c in report.REPORT_COLUMNS[name]]
        assert list(frames[name].columns) == wanted, name
        assert len(frames[name]) == len(full[name]) > 0, name
    unused = {"sections": {"keywords", "authors", "institutions", "urls", "text", "text_norm", "summary_norm"},
              "papers": {"institutions", "urls", "section_ids", "summary"},
              "documents": {"text", "raw_text", "urls", "title", "n_chars"}}
    for name, columns in unused.items():
        assert columns <= set(full[name].columns) and not columns & set(frames[name].columns), name
    assert frames["context"].columns.empty
    # the completeness is counted from the files, over every row, as from the whole tables
    assert frames[report.COMPLETENESS].equals(report.completeness(full))
    papers = frames[report.COMPLETENESS].set_index(["table", "field"]).loc["papers"]
    assert papers.loc["summary", "rows"] == len(full["papers"]) and "summary" not in frames["papers"]
    # the texts shown as a head are read back as that head, exactly
    assert frames["dropped"]["text"].fillna("").tolist() == [report._head(v) for v in full["dropped"]["text"].fillna("")]
    # the sections' shown columns are read only at the rows the report shows (the first mentions
    # of the papers found in several sources); paper_id and match_score at every row
    _, shown = report._multi_source_papers(frames["papers"])
    rows = sorted(r for found in report._first_mentions(shown, full["sections"]["paper_id"])[0].values() for r in found)
    assert 0 < len(rows) < len(full["sections"])
    sections = frames["sections"]
    assert sections["paper_id"].tolist() == full["sections"]["paper_id"].tolist()
    assert sections["match_score"].equals(full["sections"]["match_score"].astype(sections["match_score"].dtype))
    assert sections["summary"].iloc[rows].fillna("").tolist() == [report._head(v) for v in full["sections"]["summary"].iloc[rows].fillna("")]
    assert sections["title"].iloc[rows].tolist() == full["sections"]["title"].iloc[rows].tolist()
    others = sections.drop(index=rows)
    assert others[["section_id", "doc_id", "title", "summary"]].isna().all().all()
    # without the papers (nothing says which rows are shown) every row is read
    alone = report.read_frames(result.run_dir, ["sections"])["sections"]
    assert alone["title"].fillna("").tolist() == full["sections"]["title"].fillna("").tolist()
    assert any(len(report._head(v)) > report.HEAD_CHARS for v in full["dropped"]["text"])  # some were cut

    page = render_report(frames | {"errors": errors}, manifest)
    assert page == render_report(full | {"errors": errors}, manifest)
    funnel = page.split('<section id="funnel">')[1].split("</section>")[0]
    for stage, n in (("files", 6), ("documents ok", 3), ("sections", len(full["sections"])),
                     ("papers", len(full["papers"])), ("dropped spans", len(full["dropped"]))):
        assert f"<td>{stage}</td><td>{n}</td>" in funnel, stage
    assert "Files not processed (empty: 1, error: 1, skipped: 1)" in page
    multi = page.split('<section id="multi-source">')[1].split("</section>")[0]
    assert "Visual Autoregressive Modeling" in multi and "2 sources" in multi
    first = full["dropped"].iloc[0]
    assert f"<td>{report._e(report._head(first['text']))}</td>" in page.split('<section id="dropped">')[1]


def test_read_frames_reads_whole_tables_and_cuts_heads_group_by_group(tmp_path: Path) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    from pipeline import report

    long = "  A\u3000long\n\n span " + "word " * 40 + "\xa0end  "
    texts = [None, "", "short  text", long, "x" * report.HEAD_CHARS, "y" * (report.HEAD_CHARS + 1),
             "z" * (report.HEAD_CHARS - 1) + " tail"] * 3
    pq.write_table(pa.table({"doc_id": [f"d{i}" for i in range(len(texts))], "reason": ["junk"] * len(texts),
                             "text": pa.array(texts, pa.string()), "extra": list(range(len(texts)))}),
                   tmp_path / "dropped.parquet", row_group_size=4)
    pq.write_table(pa.table({"paper_id": ["p1"], "doc_ids": [["d1", "d2"]], "authors": [["A"]]}),
                   tmp_path / "papers.parquet")
    (tmp_path / "empty").mkdir()
    empty_schema = pa.schema({"paper_id": pa.string(), "n_sources": pa.int32(), "doc_ids": pa.list_(pa.string())})
    pq.ParquetWriter(tmp_path / "empty" / "papers.parquet", empty_schema).close()  # no row group at all
    pq.write_table(pa.table({"path": ["a.txt"], "message": ["bad"], "extra": [1]}), tmp_path / "errors.parquet")
    pq.write_table(pa.table({"doc_id": ["d1", "d2", "d3"], "kind": ["x", "y", "z"]}), tmp_path / "context.parquet")

    frames = report.read_frames(tmp_path, ["dropped", "papers", "errors", "context"])
    dropped = frames["dropped"]
    assert list(dropped.columns) == ["doc_id", "reason", "text"]
    heads = [None if t is None else report._head(t) for t in texts]
    assert [None if pd.isna(v) else v for v in dropped["text"]] == heads
    assert heads[3].startswith("A long span word") and heads[3].endswith("…")  # whitespace collapsed, cut
    assert heads[5] == "y" * report.HEAD_CHARS + "…" and heads[4] == "x" * report.HEAD_CHARS
    assert all(report._head(h) == h for h in heads if h is not None)  # so the report shows the same
    assert list(frames["papers"].columns) == ["paper_id", "doc_ids", "authors"]  # in the file's order
    filled = frames[report.COMPLETENESS]
    assert filled.values.tolist() == [["papers", "authors", 1, 1]]  # the only completeness field papers.parquet has
    assert list(frames["errors"].columns) == ["path", "message", "extra"]  # not in REPORT_COLUMNS: whole
    assert frames["context"].shape == (3, 0)
    empty = report.read_frames(tmp_path / "empty", ["papers"])["papers"]
    assert list(empty.columns) == ["paper_id", "n_sources", "doc_ids"] and len(empty) == 0


def test_counts_that_are_not_finite_numbers_do_not_break_the_report() -> None:
    """A papers table edited by hand (inf, text, missing counts) still renders."""
    papers = pd.DataFrame({"paper_id": ["p1", "p2", "p3"], "title": ["Inf", "Two", "Text"],
                           "n_mentions": [float("inf"), 2, "many"], "n_sources": [float("inf"), 2, None],
                           "year": [float("inf"), 2024, None]})
    sections = pd.DataFrame({"section_id": ["s1", "s2"], "paper_id": ["p2", "p2"], "doc_id": ["d1", "d2"]})
    page = render_report({"papers": papers, "sections": sections}, {})
    top = page.split('<section id="top-papers">')[1].split("</section>")[0]
    assert top.index(">Two<") < top.index(">Inf<")  # inf counts 0, as a missing count
    assert "<td>inf</td>" in top and "<td>2024</td>" in top
    assert "1 paper(s)" in page.split('<section id="multi-source">')[1]


def test_a_url_that_urlsplit_refuses_counts_as_no_url() -> None:
    """``http://[oops`` (an invalid IPv6 host) made ``urlsplit`` raise, and the whole report was
    lost for one document's URL."""
    from pipeline import report

    assert report._source("blog/a.jsonl#3", "http://[oops") == "blog"
    assert report._source("a.jsonl#3", "http://[oops") == "(corpus root)"
    assert report._source("blog/a.jsonl#3", "https://example.org/x") == "example.org"


#: Clicks the column header of ``%s`` (a JSON string: the field) ``%d`` times, then the "next"
#: button once, and gives the shown rows' cells and the count line.
SORT_AND_PAGE = """new Promise(resolve => {
  const button = document.querySelector('#papers-table th button[data-field=' + %s + ']');
  for (let k = 0; k < %d; k++) button.click();
  setTimeout(() => {
    const first = [...document.querySelectorAll('#papers-table tbody tr')].map(tr => [...tr.cells].map(td => td.innerText));
    document.querySelectorAll('.papers-tools button')[1].click();
    const second = [...document.querySelectorAll('#papers-table tbody tr')].map(tr => [...tr.cells].map(td => td.innerText));
    resolve(JSON.stringify({first, second, info: document.getElementById('papers-info').textContent}));
  }, 100); })"""


def test_word_coded_titles_come_back_as_they_were() -> None:
    from pipeline.report_table import papers_data, word_coded

    texts = ["Graph neural networks", "", "  two  spaces ", "graph Graph", "neural"]
    words, codes = word_coded(texts)
    assert [" ".join(words[k] for k in c) for c in codes] == texts
    assert words[:3] == ["", "Graph", "neural"]  # the most frequent first (ties: the first seen)
    assert codes[1] == [] and codes[4] == [2]
    data = papers_data(pd.DataFrame({"title": ["Graph neural networks", None], "authors": [["A", "B"], None],
                                     "doc_ids": [["d1", "d2"], []]}),
                       pd.DataFrame({"doc_id": ["d1", "d2"], "url": ["https://x.example.org/1", None],
                                     "source_path": ["a.txt", "b.txt"]}))
    columns = dict(zip(data["fields"], data["columns"], strict=True))
    assert [" ".join(data["words"][k] for k in c) for c in columns["title"]] == ["Graph neural networks", ""]
    assert columns["authors"] == ["A +1", ""] and columns["docs"] == [[0], []] and columns["n_sources"] == [2, 0]
    assert data["docs"] == ["https://x.example.org/1"]


def test_table_of_every_paper_pages_sorts_and_searches_many_papers(browser: Chromium, tmp_path: Path) -> None:
    """3,000 papers: 50 rows in the page at a time, a click sorts by a column (missing values
    last), "next" shows the next 50, and the search finds the two papers with a word (titles
    with runs of spaces come back as they were); each shows its first author and its first source."""
    from pipeline.report_table import PAGE_ROWS

    n = 3000
    papers = pd.DataFrame({
        "paper_id": [f"p{k:05d}" for k in range(n)],
        "title": [f"Paper number {k} on topic {k % 17}" + ("  zyzzyva " if k in (1234, 1235) else "") for k in range(n)],
        "year": [None if k % 10 == 0 else 2000 + k % 25 for k in range(n)],
        "arxiv_id": [f"2401.{k:05d}" for k in range(n)],
        "authors": [[f"Author {k}", f"Second {k}", "Third", "Fourth"] for k in range(n)],
        "doc_ids": [["d-local"] if k == 1235 else [f"d{k % 40}", f"d{(k + 1) % 40}", "d-local"] for k in range(n)],
        "n_sources": [1 if k == 1235 else 3 for k in range(n)], "n_mentions": [3] * n,
    })
    docs = pd.DataFrame({"doc_id": [f"d{k}" for k in range(40)] + ["d-local"],
                         "url": [f"https://site{k}.example.org/post/{k}" for k in range(40)] + [None],
                         "source_path": [f"s{k}.txt" for k in range(40)] + ["local/notes.md"], "status": "ok"})
    path = write_report(tmp_path, {"papers": papers, "documents": docs}, {})
    page, requested = browser.open(path.resolve().as_uri(), actions=(
        SORT_AND_PAGE % (json.dumps("year"), 1), SEARCH % json.dumps("ZYZZYVA"),
        "document.querySelector('#papers-table tbody td span').textContent"))
    assert [u for u in requested if not u.startswith(("file:", "data:"))] == []
    assert page["ready"] == "yes" and page["errors"] == [] and page["wide"] == 0
    assert f"{n} of {n} papers, page 1 of {n // PAGE_ROWS}" in page["text"]
    sorted_page, found = (json.loads(a) for a in page["actions"][:2])
    years = [int(row[3]) for row in sorted_page["first"] + sorted_page["second"]]
    assert len(sorted_page["first"]) == len(sorted_page["second"]) == PAGE_ROWS
    assert years == sorted(years, reverse=True) and years[0] == 2024  # the newest first, then "next"
    assert sorted_page["info"] == f"{n} of {n} papers, page 2 of {n // PAGE_ROWS}"
    assert len(found["rows"]) == 2
    local, row = found["rows"]  # still sorted by year, the newest first
    assert page["actions"][2] == "Paper number 1235 on topic 11  zyzzyva "  # the title as it was, spaces too
    assert "Author 1234 +3" in row and "Second 1234" not in row  # the first AUTHORS_SHOWN, then a count
    assert "3 source(s)" in row and "+2 more" in row and "local/notes.md" not in row
    assert found["links"] == ["https://arxiv.org/abs/2401.01235", "https://arxiv.org/abs/2401.01234",
                              "https://site34.example.org/post/34"]  # a source without a URL is named, not linked
    assert "local/notes.md" in local and "1 source(s)" in local and "more" not in local
    assert found["info"] == f"2 of {n} papers, page 1 of 1"
