"""Scaling benchmark: the pipeline on generated corpora of several sizes, against anchors.

``python -m bench.run [--sizes 1000,10000,50000] [--seed 0] [--out bench/results.json]``

For each size ``N`` it

1. generates a corpus of ``N`` articles with :func:`bench.generate.generate`;
2. runs ``python -m pipeline run CORPUS --out OUT --quiet -vv --log-format json`` in a
   subprocess (default configuration, ``--workers`` processes, 2 by default) and takes the
   seconds per stage from its ``manifest.json``, the seconds of dedup's steps from its log
   (:func:`dedup_steps`), the wall time, and the child's peak resident set size (its largest
   process's, from ``os.wait4`` in a small parent, :mod:`bench.peak`; in MB = 2**20 bytes);
3. times three *anchors* on the same inputs, in this process, after a warm-up call (dictionary
   and model loading excluded); past :data:`ANCHOR_DOCUMENTS` documents, on a random sample of
   the documents and their sections, scaled to the whole by the work done (``anchor_sample``):

   * ``jieba.lcut`` over the text of every document (``documents.parquet`` ``text``), one core;
     timed before the run too, on the documents of a sample of the files (:func:`jieba_before_run`),
     and the anchor is the mean of the two speeds, so that a drift of the machine's speed
     across the run weighs less;
   * OpenCC conversion alone: the ``opencc`` package's own converter, ``OpenCC("t2s").convert``
     (Traditional to Simplified, the default target), over the text of every section (what the
     normalize stage converts). Not :func:`pipeline.normalize.to_script`, which has its own
     matcher and caches: the anchor is the library, so the ratio shows what the stage adds or
     saves;
   * the default embedder alone, as a run with ``--workers`` processes runs it
     (:func:`pipeline.embed.make_local_embedder`: a :class:`pipeline.embed.PooledEmbedder` of
     that many processes), ``encode`` over :func:`pipeline.dedup.embedding_text` of every
     section (``sections.parquet``);

4. reports each stage's speed as a ratio to its anchor on the same work: ``anchor seconds /
   stage seconds`` (> 1: the stage is faster than the anchor), so the figures compare across
   machines: ingest→extract against ``jieba.lcut``, normalize against OpenCC, dedup and the whole
   pipeline (the sum of the manifest's stage seconds) against the embedder.

A fixed single-core workload (:func:`reference_seconds`) is timed before each pipeline run,
after it and after the anchors; ``drift`` (slowest over fastest) says whether the machine's
speed moved between the pipeline and its anchors, which the timed ratios assume it did not.

Then it counts, with Linux ``perf``, the CPU instructions of the per-document stages and of
``jieba.lcut`` on the same documents of the smallest corpus, each on one core
(:mod:`bench.instructions`, ``--instruction-documents``): ``instructions.jieba_per_stages`` is
the per-core ratio in work, which does not drift with the machine's speed as seconds do.

Across sizes it fits the scaling exponent of total time in ``N`` (least-squares slope of
``log seconds`` against ``log N``) and the peak-RSS ratio of the two largest sizes, then checks
the acceptance figures of :data:`ACCEPTANCE`. Everything goes to ``--out`` (JSON) and a short
table is printed. Corpora, outputs and pipeline logs live in a temporary folder (or ``--work``,
as ``corpus-N``, ``out-N``, ``pipeline-N.log`` and its ``.peak.json``) and are removed at the end unless ``--keep``.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import platform
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from bench.generate import ROOT, generate

DEFAULT_SIZES = (1_000, 10_000, 50_000)
"""Corpus sizes (articles) of the issue's benchmark."""
DEFAULT_OUT = ROOT / "bench" / "results.json"
DOCUMENT_STAGES = ("ingest", "clean", "segment", "normalize", "extract")
"""The per-document and per-section stages: "ingest→extract"."""
ALL_STAGES = (*DOCUMENT_STAGES, "dedup", "write")
MB = 1e6
"""Bytes per MB in throughput figures (MB/s of text)."""
RSS_MB = 2**20
"""Bytes per MB in memory figures."""
PEAK_SCRIPT = Path(__file__).with_name("peak.py")
""":mod:`bench.peak`, run by its path (it needs only the standard library, not this package)."""
ANCHOR_DOCUMENTS = 12_000
"""The anchors run on at most this many documents (and their sections), drawn at random with
the corpus seed; their seconds are scaled to the whole size by the work done (text bytes for
jieba and OpenCC, sections for the embedder). 12k keeps the 1k and 10k sizes whole and saves
about 80 minutes at 50k, where the embedder alone would embed ~590k sections again."""
#: Files of the smallest corpus whose per-core instructions are counted (:func:`count_instructions`;
#: the whole 1k corpus: about 3 minutes on 2 cores).
INSTRUCTION_DOCUMENTS = 1_000
#: Timings of each part of :func:`reference_seconds` (their median is kept).
REFERENCE_REPEATS = 3

ACCEPTANCE: dict[str, dict[str, Any]] = {
    "ingest_to_extract_vs_jieba": {
        "target": 1.0, "op": ">=",
        "what": "ingest→extract speed on --workers processes / jieba.lcut speed on 1 core on the "
                "documents' text (issue: on 2 workers), at the largest size"},
    "pipeline_vs_embedder": {
        "target": 0.6, "op": ">=",
        "what": "whole-pipeline speed / embedder-alone speed on the sections, at the largest size"},
    "time_exponent": {
        "target": 1.15, "op": "<=",
        "what": "slope of log total seconds in log N (issue: between 1k and 50k)"},
    "rss_ratio": {
        "target": 1.5, "op": "<=",
        "what": "peak anonymous resident memory (RssAnon of the largest process) at the largest "
                "size / at the next largest (issue: 50k / 10k)"},
}
"""The issue's acceptance figures: metric name, bound and what it measures."""

_CHILD_ENV = {"HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "TOKENIZERS_PARALLELISM": "false"}


def scaling_exponent(sizes: Sequence[float], seconds: Sequence[float]) -> float | None:
    """Least-squares slope of ``log seconds`` against ``log size``; None for fewer than two
    distinct sizes or a non-positive value."""
    pairs = [(math.log(n), math.log(s)) for n, s in zip(sizes, seconds, strict=True) if n > 0 and s > 0]
    if len(pairs) < 2 or len({x for x, _ in pairs}) < 2 or len(pairs) < len(sizes):
        return None
    mx = sum(x for x, _ in pairs) / len(pairs)
    my = sum(y for _, y in pairs) / len(pairs)
    return sum((x - mx) * (y - my) for x, y in pairs) / sum((x - mx) ** 2 for x, _ in pairs)


def run_pipeline(corpus: Path, out: Path, log_path: Path, timeout: float | None, workers: int = 2) -> dict[str, Any]:
    """Run the pipeline CLI on ``corpus`` in a child process (:func:`run_measured`).

    Returns:
        ``{"returncode", "wall_seconds", "peak_rss_mb", "timed_out"}`` as :func:`run_measured`.
    """
    # -vv: the pipeline's own DEBUG lines, which mark dedup's steps (dedup_steps); a dozen a run
    cmd = [sys.executable, "-m", "pipeline", "run", str(Path(corpus).resolve()), "--out", str(Path(out).resolve()), "--quiet",
           "--workers", str(workers), "-vv", "--log-format", "json"]
    return run_measured(cmd, log_path, timeout, env={**os.environ, **_CHILD_ENV})


def run_measured(cmd: Sequence[str], log_path: Path, timeout: float | None,
                 env: dict[str, str] | None = None) -> dict[str, Any]:
    """Run ``cmd`` (cwd: the project's root; stdout and stderr to ``log_path``) under
    :mod:`bench.peak` (run by its path), which measures its peak resident set size from a small
    parent: measured from this process, which holds the anchors' models and tables, the figure
    would include this process's own size (Linux carries it into the child through ``execve``;
    see :mod:`bench.peak`). The figure goes through ``log_path`` + ``.peak.json``, which stays.

    Past ``timeout`` seconds (None: no limit), or on a KeyboardInterrupt here (re-raised), the
    command's process group is killed (SIGKILL: the command and what it started in its group,
    such as the pipeline's workers). One call per ``log_path`` at a time: the log and the result
    file are the call's own. A relative ``log_path`` is taken from this process's folder.

    Returns:
        ``{"returncode", "wall_seconds", "peak_rss_mb", "timed_out"}``: the command's exit status
        (negative: the signal that ended it), seconds from start to exit, and the largest resident
        set of the command or any process it started and waited for (``ru_maxrss``, in MB of
        2**20 bytes; at least :mod:`bench.peak`'s own, about 12 MB).

    Raises:
        RuntimeError: :mod:`bench.peak` wrote no result: the command could not be started, the
            result file could not be written, or :mod:`bench.peak` itself was killed (its
            message, if any, is in ``log_path``).
    """
    log_path = Path(log_path).resolve()  # bench.peak runs in the project's root
    result = log_path.with_name(log_path.name + ".peak.json")
    result.unlink(missing_ok=True)
    t0 = time.perf_counter()
    timed_out = False
    with open(log_path, "wb") as log:
        proc = subprocess.Popen([sys.executable, str(PEAK_SCRIPT), str(result), "--", *cmd], cwd=ROOT,
                                env=env, stdout=log, stderr=subprocess.STDOUT)
        try:
            proc.wait(timeout)
        except subprocess.TimeoutExpired:
            proc.terminate()  # bench.peak kills the command's group, then writes its result
            timed_out = True
            proc.wait()
        except KeyboardInterrupt:  # the bench is stopping: so does the command, before its files go
            proc.terminate()
            proc.wait()
            raise
    wall = time.perf_counter() - t0
    if not result.exists():
        raise RuntimeError(f"bench.peak measured nothing (exit {proc.returncode}); see {log_path}")
    measured = json.loads(result.read_text(encoding="utf-8"))
    return {"returncode": measured["returncode"], "wall_seconds": round(wall, 3),
            "peak_rss_mb": round(measured["peak_rss_kib"] * 1024 / RSS_MB, 1),
            "peak_anon_mb": round(measured["peak_anon_kib"] * 1024 / RSS_MB, 1),
            "peak_anon_group_mb": round(measured["peak_anon_group_kib"] * 1024 / RSS_MB, 1), "timed_out": timed_out}


def _timed(fn, items: Sequence) -> float:
    t0 = time.perf_counter()
    fn(items)
    return time.perf_counter() - t0


def time_anchors(doc_texts: Sequence[str], section_texts: Sequence[str], embed_texts: Sequence[str],
                 workers: int = 2) -> dict[str, float]:
    """Seconds of each anchor on its inputs, after a warm-up call (loading excluded): jieba and
    OpenCC on one core; the default embedder as a run with ``workers`` runs it
    (:func:`pipeline.embed.make_local_embedder`: that many processes of one BLAS thread, the
    embedder's best throughput here), so the pipeline's ratio to it shows what the rest costs.

    Returns:
        ``{"jieba_lcut_seconds", "opencc_seconds", "embedder_seconds"}``.
    """
    import opencc

    from pipeline.config import load_config
    from pipeline.embed import make_local_embedder

    lcut = _jieba_lcut()
    t2s = opencc.OpenCC("t2s")
    t2s.convert("預熱")
    embedder = make_local_embedder(load_config(overrides={"run": {"workers": workers}}))
    try:
        embedder.encode(["warm-up"])
        if hasattr(embedder, "start"):
            embedder.start()  # the processes and their models
        return {
            "jieba_lcut_seconds": _timed(lambda xs: [lcut(x) for x in xs], doc_texts),
            "opencc_seconds": _timed(lambda xs: [t2s.convert(x) for x in xs], section_texts),
            "embedder_seconds": _timed(lambda xs: embedder.encode(list(xs)) if xs else None, embed_texts),
        }
    finally:
        if hasattr(embedder, "close"):
            embedder.close()


def _jieba_lcut():
    """``jieba.lcut``, its dictionary loaded and warmed up (loading is not timed)."""
    import jieba

    jieba.setLogLevel(60)
    jieba.initialize()
    jieba.lcut("预热")
    return jieba.lcut


def jieba_before_run(corpus: Path, limit: int | None, seed: int) -> dict[str, Any]:
    """``jieba.lcut`` on one core over the documents of a sample of ``corpus``'s files, timed
    *before* the pipeline runs: :func:`measure_run` averages its speed (MB/s) with the anchor's
    timed after the run, so that a machine whose speed drifts during the run (these VMs: by up
    to 40% within an hour) biases the ratio less than an anchor timed on one side of it.

    The files are :func:`anchor_sample` of the listing (``limit`` files at most, drawn with
    ``seed``; all of them up to ``limit``) and their documents' text is decoded as the pipeline's
    ingest decodes it (:func:`pipeline.ingest.read_documents`: the ``text`` of
    ``documents.parquet``). With a sample, its documents are not the ones the anchors timed
    after the run (a sample of the documents, which are not known before the run): both are
    scaled per MB of text.

    Returns:
        ``{"files", "documents", "text_mb", "seconds"}`` (not rounded: :func:`measure_run`
        rounds them in the results).
    """
    from pipeline import ingest
    from pipeline.config import load_config

    listing, _ = ingest.list_corpus(corpus, load_config().ingest.extensions)
    chosen = anchor_sample(listing["source_path"].tolist(), limit, seed)
    if chosen is not None:
        listing = listing[listing["source_path"].isin(chosen)]
    texts = [row["text"] for path, abs_path in zip(listing["source_path"], listing["abs_path"], strict=True)
             for row in ingest.read_documents(path, abs_path) if isinstance(row["text"], str) and row["text"]]
    lcut = _jieba_lcut()
    return {"files": len(listing), "documents": len(texts),
            "text_mb": sum(len(t.encode("utf-8")) for t in texts) / MB,
            "seconds": _timed(lambda xs: [lcut(x) for x in xs], texts)}


def reference_seconds(repeats: int = REFERENCE_REPEATS) -> dict[str, float]:
    """Seconds of a fixed workload on one core, the median of ``repeats`` timings of each part:
    ``"python"``, interpreter work (a dict count, string joins and a regular expression over
    200,000 generated words: what the per-document stages and the scoring do most), and
    ``"numpy"``, numpy's own single-threaded kernels (sort, ``exp``, reductions over 4M float32;
    no BLAS, whose thread count would vary). The work is the same on every call, so the
    seconds mean nothing alone: a bench times it before each pipeline run, after it, and after
    the anchors, and their ratio (``drift``) says whether the machine's speed moved between the
    pipeline and its anchors (this VM's has moved by 27% within an hour).

    Raises:
        ValueError: ``repeats`` is below 1.
    """
    import re
    import statistics

    import numpy as np

    if repeats < 1:
        raise ValueError(f"{repeats} repeats: at least 1")
    pattern = re.compile(r"w\d*7\b")

    def python_work() -> int:
        words = [f"w{(i * 7919) % 5003}" for i in range(200_000)]
        counts: dict[str, int] = {}
        for w in words:
            counts[w] = counts.get(w, 0) + 1
        return len(pattern.findall(" ".join(words))) + len(counts)

    values = np.random.default_rng(0).standard_normal(1 << 22).astype(np.float32)

    def numpy_work() -> float:
        ordered = np.sort(values)
        return float(np.exp(ordered * np.float32(0.1)).sum() + np.abs(ordered).max())

    out = {}
    for name, work in (("python", python_work), ("numpy", numpy_work)):
        times = []
        for _ in range(repeats):
            t0 = time.perf_counter()
            work()
            times.append(time.perf_counter() - t0)
        out[name] = round(statistics.median(times), 4)
    return out


def drift(references: dict[str, dict[str, float]]) -> dict[str, float | None]:
    """Per part of :func:`reference_seconds`, the slowest timing over the fastest among
    ``references`` (``{when: reference_seconds()}``): 1.0 when the machine kept its speed; a
    ratio timed across a drift of 1.2 may be off by that factor. None for a part with fewer
    than two usable timings (finite and above 0). The timings are single-core: other work on
    the machine slows them too (``reference_load_average`` in the results says whether there
    was any)."""
    parts = {name for timing in references.values() for name in timing}
    out: dict[str, float | None] = {}
    for name in sorted(parts):
        seconds = [t[name] for t in references.values() if _usable(t.get(name))]
        out[name] = round(max(seconds) / min(seconds), 3) if len(seconds) >= 2 else None
    return out


def _usable(seconds: object) -> bool:
    return isinstance(seconds, int | float) and not isinstance(seconds, bool) and math.isfinite(seconds) and seconds > 0


def _ratio(anchor: float, stage: float) -> float | None:
    return round(anchor / stage, 3) if stage > 0 and anchor > 0 else None


def anchor_sample(doc_ids: Sequence[str], limit: int | None, seed: int) -> set[str] | None:
    """The documents the anchors run on: None (all of them) when there are at most ``limit``
    (None: no limit), else ``limit`` ids drawn without replacement by ``random.Random(seed)``.

    Raises:
        ValueError: ``limit`` is below 1.
    """
    import random

    if limit is None or len(doc_ids) <= limit:
        return None
    if limit < 1:
        raise ValueError(f"anchor sample of {limit} documents: needs at least 1")
    return set(random.Random(seed).sample(sorted(doc_ids), limit))


def bench_size(n: int, seed: int, work: Path, timeout: float | None, workers: int = 2,
               anchor_documents: int | None = ANCHOR_DOCUMENTS) -> dict[str, Any]:
    """Generate, run and measure one corpus size; the entry of ``runs`` in the results.

    The anchors run on :func:`anchor_sample` of the documents (``anchor_documents`` at most) and
    the sections of those; ``anchors`` holds their seconds scaled to the whole size by the share
    of the work in the sample (``anchor_sample`` says what was measured). ``reference_seconds``
    holds :func:`reference_seconds` before the run, after it and after the anchors (not when
    the run failed), ``reference_load_average`` the 1-minute load average just before each,
    and ``drift`` their :func:`drift`."""
    corpus, out = work / f"corpus-{n}", work / f"out-{n}"
    t0 = time.perf_counter()
    stats = generate(corpus, n, seed)
    generate_seconds = time.perf_counter() - t0
    jieba_before = jieba_before_run(corpus, anchor_documents, seed)
    references, loads = {"before_run": reference_seconds()}, {"before_run": _load()}
    child = run_pipeline(corpus, out, work / f"pipeline-{n}.log", timeout, workers)
    references["after_run"], loads["after_run"] = reference_seconds(), _load()
    entry: dict[str, Any] = {"n_articles": n, "generate_seconds": round(generate_seconds, 3),
                             "corpus": stats.to_dict(), **child}
    manifest_path = out / "manifest.json"
    if child["timed_out"] or child["returncode"] not in (0, 1) or not manifest_path.exists():
        entry["error"] = (f"pipeline {'timed out' if child['timed_out'] else 'failed'} "
                          f"(exit {child['returncode']}); see {work / f'pipeline-{n}.log'}")
    else:
        measure_run(entry, out, seed, anchor_documents, workers, jieba_before)
        entry["dedup_steps"] = dedup_steps(work / f"pipeline-{n}.log")
        references["after_anchors"], loads["after_anchors"] = reference_seconds(), _load()
    entry["reference_seconds"] = references
    entry["reference_load_average"] = loads  # 1-minute load before each timing: ~1 on an idle machine
    entry["drift"] = drift(references)
    return entry


#: The pipeline's DEBUG lines (``-vv``; :mod:`pipeline.runner`, :mod:`pipeline.dedup`) that end a
#: step of dedup, with the step's name: the step runs from the line before it. Two lines name
#: the k-means of the approximate search (only from ``dedup.ann_min_sections`` sections on),
#: the content vectors' and then the title vectors'; without them ``*_neighbours`` holds the
#: exact search, with them the search after the k-means.
DEDUP_STEP_ENDS: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"embedded; clustering"), "embedding"),
    (re.compile(r"dedup: IVF k-means done"), "kmeans"),
    (re.compile(r"dedup: \d+ sections, \d+ content-neighbour pairs"), "content_neighbours"),
    (re.compile(r"dedup: \d+ title-neighbour pairs"), "title_neighbours"),
    (re.compile(r"dedup: candidate pairs from"), "key_pairs"),
    (re.compile(r"dedup: \d+ candidate pairs at or above"), "scoring"),
    (re.compile(r"dedup: merged into"), "merging"),
    (re.compile(r"dedup: fusing"), "join_scores"),
    (re.compile(r"clustered into \d+ papers"), "fusion"),
)
#: The line that starts the first step (the sections are assembled, embedding starts).
DEDUP_STEPS_START = re.compile(r"assembled \d+ sections; embedding")


def dedup_steps(log_path: Path) -> dict[str, float]:
    """Seconds of each step of dedup, from the times of the pipeline's DEBUG lines in a
    ``--log-format json -vv`` log (:data:`DEDUP_STEP_ENDS`; millisecond times, so the figures are
    good to about a millisecond): ``{"embedding", "content_kmeans", "content_neighbours",
    "title_kmeans", "title_neighbours", "key_pairs", "scoring", "merging", "join_scores",
    "fusion"}``, those whose lines are in the log. ``"embedding"`` is the manifest's
    ``dedup_seconds["embedding"]`` again, and the others add up to its ``"clustering"`` (``"fusion"``
    includes the copy candidates and the papers' spill to disk after it). ``{}`` for a log without the lines (another format or level, a run
    without sections, a missing file). Lines that are not JSON records, and records with a time
    before the last step's end, are skipped; a time without an offset is taken as UTC."""
    import datetime as dt

    try:
        lines = Path(log_path).read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        return {}
    steps: dict[str, float] = {}
    last: dt.datetime | None = None
    kmeans = 0
    for line in lines:
        try:
            record = json.loads(line)
            message, when = record["message"], dt.datetime.fromisoformat(record["time"])
        except (ValueError, TypeError, KeyError, RecursionError):  # (a deeply nested line)
            continue
        if not isinstance(message, str):
            continue
        if when.tzinfo is None:  # the pipeline writes UTC with its offset; a time without one is taken as UTC
            when = when.replace(tzinfo=dt.timezone.utc)
        if DEDUP_STEPS_START.match(message):
            steps, last, kmeans = {}, when, 0  # (a second run in one log: its own steps)
            continue
        if last is None or when < last:  # (a time before the last step's end: an edited log, skipped)
            continue
        for pattern, name in DEDUP_STEP_ENDS:
            if pattern.match(message):
                if name == "kmeans":
                    name, kmeans = ("content_kmeans", "title_kmeans")[min(kmeans, 1)], kmeans + 1
                steps[name] = round(steps.get(name, 0.0) + (when - last).total_seconds(), 3)
                last = when
                break
    return steps


def measure_run(entry: dict[str, Any], out: Path, seed: int,
                anchor_documents: int | None = ANCHOR_DOCUMENTS, workers: int = 2,
                jieba_before: dict[str, Any] | None = None) -> dict[str, Any]:
    """Add the stage seconds, rows, throughputs, anchors and ratios of a finished run to ``entry``
    (the part of :func:`bench_size` after the pipeline ran; ``entry["corpus"]`` holds the
    generator's stats).

    Args:
        out: the run's output folder, or a folder holding a run's files (``manifest.json``,
            ``documents.parquet``, ``sections.parquet``, ``papers.parquet``).
        jieba_before: :func:`jieba_before_run` of the corpus, timed before the run: the jieba
            anchor is then the mean of its speed and the speed timed here (``anchor_sample``
            keeps both); None: the speed timed here alone.

    Returns:
        ``entry``, updated.
    """
    import pandas as pd

    from pipeline.dedup import embedding_text

    manifest_path = out / "manifest.json"
    manifest = json.loads(manifest_path.read_text(encoding="utf-8"))
    seconds = {k: float(v) for k, v in manifest["seconds"].items()}
    # dedup's two parts (runs since the manifest has them): embedding against its anchor alone
    dedup_parts = {k: float(v) for k, v in (manifest.get("dedup_seconds") or {}).items()}
    docs = pd.read_parquet(out / "documents.parquet", columns=["doc_id", "text", "status"])
    sections = pd.read_parquet(out / "sections.parquet")
    doc_texts = [t for t in docs["text"] if isinstance(t, str) and t]
    section_texts = [t for t in sections["text"] if isinstance(t, str)]
    text_mb = sum(len(t.encode("utf-8")) for t in doc_texts) / MB
    section_mb = sum(len(t.encode("utf-8")) for t in section_texts) / MB
    n_sections = len(sections)
    chosen = anchor_sample(docs["doc_id"].tolist(), anchor_documents, seed)
    docs_in, sections_in = docs, sections
    if chosen is not None:
        docs_in, sections_in = docs[docs["doc_id"].isin(chosen)], sections[sections["doc_id"].isin(chosen)]
        if not len(sections_in) or not any(isinstance(t, str) and t for t in docs_in["text"]):
            # a sample without text or sections measures nothing: time the whole size instead
            chosen, docs_in, sections_in = None, docs, sections
    del sections
    sample_doc_texts = [t for t in docs_in["text"] if isinstance(t, str) and t]
    sample_section_texts = [t for t in sections_in["text"] if isinstance(t, str)]
    embed_texts = [embedding_text({k: (v if not _missing(v) else None) for k, v in row.items()})
                   for row in sections_in.to_dict("records")]
    load_before = _load()
    measured = time_anchors(sample_doc_texts, sample_section_texts, embed_texts, workers)
    load_after = _load()
    sample_text_mb = sum(len(t.encode("utf-8")) for t in sample_doc_texts) / MB
    sample_section_mb = sum(len(t.encode("utf-8")) for t in sample_section_texts) / MB
    # seconds on the whole size, at the throughput measured on the sample
    jieba_seconds = measured["jieba_lcut_seconds"] * _share(text_mb, sample_text_mb)
    jieba_drift = None
    before_seconds = 0.0
    if jieba_before is not None and jieba_before["seconds"] > 0 and jieba_before["text_mb"] > 0:
        before_seconds = jieba_before["seconds"] * _share(text_mb, jieba_before["text_mb"])
    if before_seconds > 0 and jieba_seconds > 0:
        # the mean of the two speeds (MB/s), before and after the run, as seconds on the whole text
        jieba_drift = round(max(before_seconds, jieba_seconds) / min(before_seconds, jieba_seconds), 3)
        jieba_seconds = 2 / (1 / before_seconds + 1 / jieba_seconds)
    anchors = {
        "jieba_lcut_seconds": jieba_seconds,
        "opencc_seconds": measured["opencc_seconds"] * _share(section_mb, sample_section_mb),
        "embedder_seconds": measured["embedder_seconds"] * _share(n_sections, len(embed_texts)),
    }
    entry["anchor_sample"] = {
        "documents": len(docs_in), "of_documents": len(docs), "sections": len(embed_texts),
        "of_sections": n_sections, "text_mb": round(sample_text_mb, 3),
        "section_text_mb": round(sample_section_mb, 3), "whole": chosen is None,
        "measured_seconds": {k: round(v, 3) for k, v in measured.items()},
        # jieba.lcut timed before the run too (jieba_before_run), and the slower of its two
        # speeds over the faster: the machine's drift across the run, as jieba sees it
        "jieba_before_run": {k: round(v, 3) if isinstance(v, float) else v for k, v in jieba_before.items()}
        if jieba_before is not None else None,
        "jieba_drift": jieba_drift,
        # the 1-minute load average before and after: about 1 (this process) on an idle machine;
        # more means other work shared the cores and the anchors were timed slow
        "load_average": [load_before, load_after],
    }
    total = sum(seconds.get(s, 0.0) for s in ALL_STAGES)
    ingest_extract = sum(seconds.get(s, 0.0) for s in DOCUMENT_STAGES)
    entry.update({
        "seconds": {s: round(seconds.get(s, 0.0), 3) for s in ALL_STAGES},
        "dedup_seconds": {k: round(v, 3) for k, v in dedup_parts.items()},
        "total_seconds": round(total, 3),
        "ingest_to_extract_seconds": round(ingest_extract, 3),
        "rows": {"documents": len(docs), "documents_ok": int((docs["status"] == "ok").sum()),
                 "sections": n_sections,
                 "papers": int(pd.read_parquet(out / "papers.parquet", columns=["paper_id"]).shape[0])},
        "input_mb": round(entry["corpus"]["n_bytes"] / MB, 3),
        "text_mb": round(text_mb, 3),
        "section_text_mb": round(section_mb, 3),
        "throughput": {
            "pipeline_text_mb_per_s": round(text_mb / total, 4) if total else None,
            "pipeline_sections_per_s": round(n_sections / total, 2) if total else None,
            "ingest_to_extract_text_mb_per_s": round(text_mb / ingest_extract, 4) if ingest_extract else None,
            "stage_text_mb_per_s": {s: round(text_mb / seconds[s], 4) for s in ALL_STAGES if seconds.get(s)},
            "stage_sections_per_s": {s: round(n_sections / seconds[s], 2) for s in ALL_STAGES if seconds.get(s)},
            "jieba_lcut_text_mb_per_s": round(text_mb / anchors["jieba_lcut_seconds"], 4),
            "opencc_section_mb_per_s": round(section_mb / anchors["opencc_seconds"], 4)
            if anchors["opencc_seconds"] else None,
            "embedder_sections_per_s": round(n_sections / anchors["embedder_seconds"], 2)
            if anchors["embedder_seconds"] else None,
        },
        "anchors": {k: round(v, 3) for k, v in anchors.items()},
        "ratios": {
            "ingest_to_extract_vs_jieba": _ratio(anchors["jieba_lcut_seconds"], ingest_extract),
            "normalize_vs_opencc": _ratio(anchors["opencc_seconds"], seconds.get("normalize", 0.0)),
            "dedup_vs_embedder": _ratio(anchors["embedder_seconds"], seconds.get("dedup", 0.0)),
            "embedding_vs_embedder": _ratio(anchors["embedder_seconds"], dedup_parts.get("embedding", 0.0)),
            "pipeline_vs_embedder": _ratio(anchors["embedder_seconds"], total),
        },
    })
    return entry


def _load() -> float | None:
    """The 1-minute load average (None where the platform has none)."""
    try:
        return round(os.getloadavg()[0], 2)
    except OSError:
        return None


def _share(whole: float, sample: float) -> float:
    """How many times the sample's work the whole is (1.0 for an empty sample)."""
    return whole / sample if sample > 0 else 1.0


def _missing(value) -> bool:
    try:
        return value is None or (not isinstance(value, list | str) and bool(value != value))
    except (TypeError, ValueError):  # arrays
        return False


def summarize(runs: list[dict[str, Any]]) -> dict[str, Any]:
    """Scaling fits and acceptance checks over the completed runs."""
    done = [r for r in runs if "error" not in r]
    sizes = [r["n_articles"] for r in done]
    scaling: dict[str, Any] = {
        "sizes": sizes,
        "time_exponent": _round(scaling_exponent(sizes, [r["total_seconds"] for r in done])),
        "stage_exponents": {s: _round(scaling_exponent(sizes, [r["seconds"][s] for r in done])) for s in ALL_STAGES},
        "rss_ratio": None, "rss_sizes": None,
    }
    if len(done) >= 2:
        a, b = sorted(done, key=lambda r: r["n_articles"])[-2:]
        # anonymous memory, not ru_maxrss: the clean file pages of a memory map are reclaimable
        scaling["rss_ratio"] = round(b["peak_anon_mb"] / a["peak_anon_mb"], 3) if a.get("peak_anon_mb") else None
        scaling["maxrss_ratio"] = round(b["peak_rss_mb"] / a["peak_rss_mb"], 3)
        scaling["rss_sizes"] = [a["n_articles"], b["n_articles"]]
    largest = max(done, key=lambda r: r["n_articles"]) if done else None
    measured = {
        "ingest_to_extract_vs_jieba": largest["ratios"]["ingest_to_extract_vs_jieba"] if largest else None,
        "pipeline_vs_embedder": largest["ratios"]["pipeline_vs_embedder"] if largest else None,
        "time_exponent": scaling["time_exponent"],
        "rss_ratio": scaling["rss_ratio"],
    }
    acceptance = {}
    for name, spec in ACCEPTANCE.items():
        value = measured[name]
        ok = None if value is None else (value >= spec["target"] if spec["op"] == ">=" else value <= spec["target"])
        acceptance[name] = {**spec, "measured": value, "pass": ok,
                            "at_sizes": scaling["rss_sizes"] if name == "rss_ratio" else
                            (sizes if name == "time_exponent" else ([largest["n_articles"]] if largest else []))}
    return {"scaling": scaling, "acceptance": acceptance}


def count_instructions(corpus: Path, documents: int) -> dict[str, Any]:
    """The per-core work of the per-document stages against ``jieba.lcut`` in CPU instructions
    (:func:`bench.instructions.measure` on the first ``documents`` files of ``corpus``): a figure
    that does not drift with the machine's speed, beside the timed ratios that do.

    Returns:
        :func:`bench.instructions.measure`'s dict, or ``{"error": why}`` when perf cannot count
        here or a child failed (the timed results still stand).
    """
    from bench import instructions

    try:
        return instructions.measure(corpus, documents)
    except (instructions.PerfUnavailable, instructions.TooLittleWork) as exc:
        return {"error": str(exc)}
    except subprocess.CalledProcessError as exc:
        return {"error": f"a child failed (exit {exc.returncode}): {exc.stderr.decode(errors='replace')[-2000:]}"}


def cpu_model(cpuinfo: Path = Path("/proc/cpuinfo")) -> dict[str, str] | None:
    """The first CPU's ``model name``, ``vendor_id``, ``cpu family``, ``model`` and ``stepping``
    as Linux's ``/proc/cpuinfo`` gives them (those of its first block that it has, with a value),
    or None where that file cannot be read or its first block has none of them (ARM, RISC-V;
    on POWER a later block's ``model`` is the machine's, so later blocks are never read). The
    ratios move with the CPU, not only with its speed: the same code gave ingest→extract /
    jieba 1.13 on one of these VMs and 0.635 on an AMD EPYC of family 26 (Zen 5), where jieba
    ran 3.2× faster and the per-document stages 1.8×.
    """
    wanted = ("model name", "vendor_id", "cpu family", "model", "stepping")
    out: dict[str, str] = {}
    try:
        with cpuinfo.open(encoding="utf-8", errors="replace") as lines:
            started = False
            for line in lines:
                if not line.strip():
                    if started:
                        break  # the first processor's block only
                    continue
                started = True
                key, sep, value = line.partition(":")
                key, value = key.strip(), value.strip()
                if sep and value and key in wanted and key not in out:
                    out[key] = value
    except OSError:
        return None
    return out or None


def _commit() -> str | None:
    """The project's git commit (12 hex digits of ``HEAD``), with ``-dirty`` when a file other
    than the bench's own results (``bench/results*.json``, which a run writes) is changed or
    untracked and not ignored; None outside a git checkout of the project or without git."""
    def git(*args: str) -> str | None:
        try:
            done = subprocess.run(["git", *args], cwd=ROOT, capture_output=True, text=True, timeout=30)
        except (OSError, subprocess.SubprocessError):
            return None
        return done.stdout.strip() if done.returncode == 0 else None

    top = git("rev-parse", "--show-toplevel")
    if top is None or Path(top).resolve() != ROOT.resolve():  # not this project's own checkout
        return None
    head = git("rev-parse", "--short=12", "HEAD")
    if not head:
        return None
    changed = git("status", "--porcelain", "--", ".", ":(exclude)bench/results*.json")
    return head + ("-dirty" if changed is None or changed else "")


def _round(x: float | None) -> float | None:
    return None if x is None else round(x, 3)


def format_table(results: dict[str, Any]) -> str:
    """The short printed report: one row per size, then the acceptance figures."""
    head = (f"{'N':>7} {'MB':>7} {'sect':>7} " + " ".join(f"{s[:7]:>7}" for s in ALL_STAGES)
            + f" {'total':>8} {'MB/s':>6} {'sec/s':>7} {'RSS MB':>7} {'anon MB':>7} {'x jieba':>7} {'x occ':>7} {'x emb':>6} {'pipe/emb':>8}")
    lines = [head]
    for r in results["runs"]:
        if "error" in r:
            lines.append(f"{r['n_articles']:>7} {r['error']}")
            continue
        ratios = r["ratios"]
        lines.append(
            f"{r['n_articles']:>7} {r['text_mb']:>7.1f} {r['rows']['sections']:>7} "
            + " ".join(f"{r['seconds'][s]:>7.1f}" for s in ALL_STAGES)
            + f" {r['total_seconds']:>8.1f} {r['throughput']['pipeline_text_mb_per_s']:>6.3f}"
            f" {r['throughput']['pipeline_sections_per_s']:>7.1f} {r['peak_rss_mb']:>7.0f} {r.get('peak_anon_mb', 0):>7.0f}"
            f" {_fmt(ratios['ingest_to_extract_vs_jieba']):>7} {_fmt(ratios['normalize_vs_opencc']):>7}"
            f" {_fmt(ratios['dedup_vs_embedder']):>6} {_fmt(ratios['pipeline_vs_embedder']):>8}")
    lines.append("")
    for r in results["runs"]:
        if r.get("drift"):
            jieba = (r.get("anchor_sample") or {}).get("jieba_drift")
            lines.append(f"drift at {r['n_articles']}: " + ", ".join(
                f"{name} x{_fmt(value)}" for name, value in r["drift"].items())
                + " (reference workload: slowest / fastest of its timings around the run)"
                + (f"; jieba.lcut x{_fmt(jieba)} (before / after the run)" if jieba is not None else ""))
    for r in results["runs"]:
        if r.get("dedup_steps"):
            lines.append(f"dedup steps at {r['n_articles']} (s): " + ", ".join(
                f"{name} {value:.1f}" for name, value in r["dedup_steps"].items()))
    for name, a in results["acceptance"].items():
        verdict = {True: "PASS", False: "FAIL", None: "n/a"}[a["pass"]]
        lines.append(f"{verdict:>4}  {name} = {_fmt(a['measured'])} (target {a['op']} {a['target']}; "
                     f"sizes {a['at_sizes']})")
    per_core = results.get("instructions")
    if per_core is not None:
        lines.append("instructions: " + (per_core["error"] if "error" in per_core else
                     f"jieba.lcut / per-document stages, one core = {_fmt(per_core['jieba_per_stages'])} "
                     f"({per_core['files']} files; {results['workers']} workers at full use: "
                     f"{_fmt(per_core['jieba_per_stages'] * results['workers']) if per_core['jieba_per_stages'] else '-'})"))
    return "\n".join(lines)


def _fmt(x: float | None) -> str:
    return "-" if x is None else f"{x:.3g}"


def main(argv: Sequence[str] | None = None) -> int:
    """Command line; returns the exit code (0 when every size ran, 1 when one failed or timed out)."""
    parser = argparse.ArgumentParser(prog="python -m bench.run", description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default=",".join(map(str, DEFAULT_SIZES)),
                        help="comma-separated corpus sizes in articles (default 1000,10000,50000)")
    parser.add_argument("--seed", type=int, default=0, help="corpus seed (default 0)")
    parser.add_argument("--workers", type=int, default=2,
                        help="pipeline --workers for the runs (default 2, as the issue's figures)")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help="results JSON (default bench/results.json)")
    parser.add_argument("--work", type=Path, default=None, help="folder for corpora and outputs (default: a temp folder)")
    parser.add_argument("--keep", action="store_true", help="keep the corpora and outputs")
    parser.add_argument("--timeout", type=float, default=None,
                        help="seconds one pipeline run may take before it is killed (default: none)")
    parser.add_argument("--anchor-documents", type=int, default=ANCHOR_DOCUMENTS,
                        help=f"time the anchors on at most this many documents, drawn with the seed, "
                             f"and scale to the whole size (default {ANCHOR_DOCUMENTS}; 0: all)")
    parser.add_argument("--instruction-documents", type=int, default=INSTRUCTION_DOCUMENTS,
                        help="count the per-core instructions of the per-document stages and of jieba.lcut "
                             f"(bench.instructions) on this many files of the smallest corpus (default "
                             f"{INSTRUCTION_DOCUMENTS}; 0: skip)")
    args = parser.parse_args(argv)
    if args.instruction_documents < 0:
        parser.error("--instruction-documents must be 0 (skip) or positive")
    if args.anchor_documents < 0:
        parser.error("--anchor-documents must be 0 (all) or positive")
    try:
        sizes = sorted({int(s) for s in args.sizes.split(",") if s.strip()})
    except ValueError:
        parser.error(f"--sizes {args.sizes!r}: expected comma-separated integers")
    if not sizes or min(sizes) < 1:
        parser.error("--sizes needs at least one positive size")
    temporary = args.work is None
    work = Path(tempfile.mkdtemp(prefix="bench-")) if temporary else args.work.resolve()
    work.mkdir(parents=True, exist_ok=True)
    runs = []
    commit = _commit()  # the code that runs, before anything changes during the hours it takes
    machine = {"platform": platform.platform(), "python": platform.python_version(),
               "cpu_count": os.cpu_count(), "processor": platform.processor() or platform.machine(),
               "cpu": cpu_model()}  # read first too: nothing after the runs may lose them
    try:
        for n in sizes:
            print(f"[bench] N={n} ...", file=sys.stderr, flush=True)
            runs.append(bench_size(n, args.seed, work, args.timeout, args.workers,
                                   args.anchor_documents or None))
        if args.instruction_documents:
            print("[bench] instructions ...", file=sys.stderr, flush=True)
            per_core = count_instructions(work / f"corpus-{sizes[0]}", args.instruction_documents)
    finally:
        if not args.keep:  # only what this run created
            if temporary:
                shutil.rmtree(work, ignore_errors=True)
            for n in sizes:
                for path in (work / f"corpus-{n}", work / f"out-{n}"):
                    shutil.rmtree(path, ignore_errors=True)
                (work / f"pipeline-{n}.log").unlink(missing_ok=True)
                (work / f"pipeline-{n}.log.peak.json").unlink(missing_ok=True)
    results = {
        "created": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
        "commit": commit,
        "machine": machine,
        "seed": args.seed,
        "workers": args.workers,
        "anchor_documents": args.anchor_documents or None,
        "units": {"seconds": "s", "text_mb": "1e6 bytes of UTF-8 text", "peak_rss_mb": "2**20 bytes",
                  "ratios": "anchor seconds / stage seconds on the same inputs (>1: stage faster)"},
        "runs": runs,
        **summarize(runs),
    }
    if args.instruction_documents:
        results["instructions"] = per_core
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(results, ensure_ascii=False, indent=2) + "\n", encoding="utf-8")
    print(format_table(results))
    print(f"\nwrote {args.out}")
    return 0 if all("error" not in r for r in runs) else 1


if __name__ == "__main__":
    sys.exit(main())
