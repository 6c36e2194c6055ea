"""The benchmark corpus generator and a tiny benchmark run (bench/)."""

from __future__ import annotations

import functools
import hashlib
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from bench import generate as gen
from bench import instructions, peak
from bench.run import (
    ACCEPTANCE,
    ALL_STAGES,
    anchor_sample,
    cpu_model,
    dedup_steps,
    drift,
    jieba_before_run,
    main,
    reference_seconds,
    run_measured,
    scaling_exponent,
)
from pipeline import ingest
from pipeline.config import load_config
from pipeline.normalize import to_script

N = 300
"""Articles in the test corpus: enough for every script, layout, format and encoding to occur."""
_HAN = re.compile(r"[\u3400-\u9fff]")


def _digest(folder: Path) -> dict[str, str]:
    return {p.relative_to(folder).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(folder.rglob("*")) if p.is_file()}


@pytest.fixture(scope="module")
def corpus(tmp_path_factory) -> tuple[Path, gen.CorpusStats]:
    out = tmp_path_factory.mktemp("bench") / "c1"
    return out, gen.generate(out, N, seed=1)


def test_same_seed_same_bytes_other_seed_other_bytes(corpus, tmp_path):
    folder, _ = corpus
    gen.generate(tmp_path / "again", N, seed=1)
    gen.generate(tmp_path / "other", N, seed=2)
    assert _digest(tmp_path / "again") == _digest(folder)
    assert _digest(tmp_path / "other") != _digest(folder)


def test_counts_formats_encodings_scripts(corpus):
    folder, stats = corpus
    assert stats.n_articles == N
    assert sum(stats.by_format.values()) == N and sum(stats.by_encoding.values()) == N
    assert set(stats.by_format) == {"txt", "md", "html", "jsonl"}
    assert {"utf-8", "utf-8-sig", "utf-16", "gb18030", "big5"} <= set(stats.by_encoding)
    assert {"zh-Hans", "zh-Hant", "en"} <= set(stats.by_script)
    assert {"numbered", "markdown", "kv", "narrative"} <= set(stats.by_layout)
    assert stats.n_papers < stats.n_mentions  # papers recur across articles
    files = [p for p in folder.rglob("*") if p.is_file()]
    assert len(files) == stats.n_files
    feed_lines = sum(len(p.read_bytes().splitlines()) for p in files if p.suffix == ".jsonl")
    assert len(files) - sum(p.suffix == ".jsonl" for p in files) + feed_lines == N


def _decode(path: Path) -> str:
    codec = re.search(r"_(utf-8-sig|utf-8|utf-16|gb18030|big5hkscs|big5)\.\w+$", path.name).group(1)
    return path.read_bytes().decode(codec)


def test_files_are_in_their_encoding_script_and_size(corpus):
    folder, _ = corpus
    checked = 0
    for path in sorted(folder.rglob("*_*_*_*.*")):
        text = _decode(path)
        script = path.name.split("_")[1]
        if script == "en":
            assert not _HAN.search(text), path.name
        else:
            assert _HAN.search(text), path.name
            simplified = to_script(text, "zh-Hans")
            assert (simplified == text) == (script == "zh-Hans"), path.name
        if path.suffix in (".txt", ".md"):
            assert gen.MIN_ARTICLE_BYTES * 0.75 <= len(text.encode("utf-8")) <= gen.MAX_ARTICLE_BYTES * 1.6, path.name
        raw = path.read_bytes()
        if "_utf-16." in path.name:
            assert raw[:2] in (b"\xff\xfe", b"\xfe\xff")
        if "_utf-8-sig." in path.name:
            assert raw.startswith(b"\xef\xbb\xbf")
        checked += 1
    assert checked > N // 2


def test_pipeline_reads_every_article(corpus):
    folder, _ = corpus
    config = load_config()
    listing, skipped = ingest.list_corpus(folder, config.ingest.extensions)
    docs = ingest.STAGE(listing, config)
    assert len(skipped) == 0
    assert len(docs) == N
    assert set(docs["status"]) == {"ok"}


def test_refuses_a_non_empty_folder(tmp_path):
    (tmp_path / "x.txt").write_text("x")
    with pytest.raises(ValueError):
        gen.generate(tmp_path, 1)


def test_scaling_exponent():
    assert scaling_exponent([1, 10, 100], [2, 20, 200]) == pytest.approx(1.0)
    assert scaling_exponent([1_000, 10_000], [1, 100]) == pytest.approx(2.0)
    assert scaling_exponent([1_000], [5]) is None


_ALLOCATE = "import sys; x = bytearray({mb} * 2**20); [x.__setitem__(i, 1) for i in range(0, len(x), 4096)]; sys.exit({code})"
"""A child that makes ``mb`` MiB resident (every page written) and exits with ``code``."""


def test_peak_rss_is_the_childs_not_this_processs(tmp_path):
    # this process is made large first: measured from here, Linux would carry its 400 MB into the
    # child's ru_maxrss through execve (the bench reported 876 MB for a 606 MB pipeline so)
    ballast = bytearray(400 * 2**20)
    for i in range(0, len(ballast), 4096):
        ballast[i] = 1
    small = run_measured([sys.executable, "-c", _ALLOCATE.format(mb=0, code=0)], tmp_path / "small.log", None)
    large = run_measured([sys.executable, "-c", _ALLOCATE.format(mb=200, code=3)], tmp_path / "large.log", None)
    del ballast
    assert small["returncode"] == 0 and small["timed_out"] is False
    assert 0 < small["peak_rss_mb"] < 100  # an interpreter alone: about 10 MB
    assert large["returncode"] == 3  # the command's status, not bench.peak's
    assert 200 <= large["peak_rss_mb"] < 300


_MAP_FILE = ("import mmap, sys, time; f = open(sys.argv[1], 'rb'); m = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ); "
             "[m[i] for i in range(0, len(m), 4096)]; x = bytearray(60 * 2**20); "
             "[x.__setitem__(i, 1) for i in range(0, len(x), 4096)]; time.sleep(0.5)")
"""A child that reads a mapped file (clean file pages) and makes 60 MiB of its own memory resident."""


def test_peak_anon_counts_the_childs_own_memory_not_its_mapped_file(tmp_path):
    data = tmp_path / "data.bin"
    with open(data, "wb") as f:
        f.write(b"\1" * (200 * 2**20))
    got = run_measured([sys.executable, "-c", _MAP_FILE, str(data)], tmp_path / "map.log", None)
    assert got["returncode"] == 0
    assert got["peak_rss_mb"] >= 250  # ru_maxrss counts the mapped file's pages
    assert 60 <= got["peak_anon_mb"] < 120  # RssAnon does not: the 60 MiB and the interpreter
    assert got["peak_anon_group_mb"] >= got["peak_anon_mb"]


def test_peak_counts_the_commands_children_and_stops_it_at_the_timeout(tmp_path):
    nested = f"import subprocess, sys; sys.exit(subprocess.call([sys.executable, '-c', {_ALLOCATE.format(mb=150, code=0)!r}]))"
    got = run_measured([sys.executable, "-c", nested], tmp_path / "nested.log", None)
    assert got["returncode"] == 0 and 150 <= got["peak_rss_mb"] < 250
    slow = run_measured([sys.executable, "-c", "import time; time.sleep(60)"], tmp_path / "slow.log", 1.0)
    assert slow["timed_out"] is True and slow["returncode"] == -9 and slow["wall_seconds"] < 30
    assert json.loads((tmp_path / "slow.log.peak.json").read_text(encoding="utf-8"))["returncode"] == -9


def test_a_timeout_kills_what_the_command_started_too(tmp_path):
    pid_file = tmp_path / "grandchild.pid"
    got = run_measured(["sh", "-c", f"sleep 333 & echo $! > '{pid_file}'; wait"], tmp_path / "group.log", 2.0)
    assert got["timed_out"] is True and got["returncode"] == -9
    grandchild = int(pid_file.read_text())
    for _ in range(100):  # killed with its group; init reaps it
        if not Path(f"/proc/{grandchild}").exists() or Path(f"/proc/{grandchild}/stat").read_text().split()[2] == "Z":
            break
        time.sleep(0.05)
    else:
        os.kill(grandchild, 9)
        pytest.fail(f"the command's child {grandchild} outlived the timeout")


def test_a_sigterm_as_the_command_ends_still_gives_the_result(tmp_path, monkeypatch):
    # a timeout that fires just as the command exits reaches bench.peak while it writes
    dumps = peak.json.dumps

    def late_term(*args, **kwargs):
        os.kill(os.getpid(), signal.SIGTERM)
        return dumps(*args, **kwargs)

    monkeypatch.setattr(peak.json, "dumps", late_term)
    assert peak.main([str(tmp_path / "r.json"), "--", sys.executable, "-c", "pass"]) == 0
    assert json.loads((tmp_path / "r.json").read_text(encoding="utf-8"))["returncode"] == 0


def test_a_relative_log_path_is_this_processs(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    got = run_measured([sys.executable, "-c", "raise SystemExit(4)"], Path("rel.log"), None)
    assert got["returncode"] == 4 and (tmp_path / "rel.log.peak.json").exists()


def test_peak_runs_by_path_without_the_package_on_the_path(tmp_path):
    # PYTHONSAFEPATH leaves the working folder off sys.path: bench.peak is run as a file
    got = run_measured([sys.executable, "-c", "pass"], tmp_path / "safe.log", None,
                       env={**os.environ, "PYTHONSAFEPATH": "1"})
    assert got["returncode"] == 0 and 0 < got["peak_rss_mb"] < 100


def test_peak_usage_errors_and_a_missing_command(tmp_path, capsys):
    assert peak.main([str(tmp_path / "r.json"), "true"]) == 2
    assert "usage" in capsys.readouterr().err
    with pytest.raises(OSError):
        peak.main([str(tmp_path / "r.json"), "--", str(tmp_path / "no-such-program")])
    with pytest.raises(RuntimeError, match="measured nothing"):
        run_measured([str(tmp_path / "no-such-program")], tmp_path / "missing.log", None)
    assert "no-such-program" in (tmp_path / "missing.log").read_text(encoding="utf-8")


@pytest.mark.slow
def test_tiny_bench_run_writes_results(tmp_path, capsys):
    out = tmp_path / "results.json"
    assert main(["--sizes", "4", "--out", str(out), "--work", str(tmp_path / "work"), "--timeout", "120",
                 "--anchor-documents", "2", "--instruction-documents", "4"]) == 0
    results = json.loads(out.read_text(encoding="utf-8"))
    assert {"machine", "seed", "workers", "units", "runs", "scaling", "acceptance"} <= set(results)
    assert results["machine"]["cpu"] == cpu_model()
    (run,) = results["runs"]
    assert run["n_articles"] == 4 and run["returncode"] == 0
    assert set(run["seconds"]) == set(ALL_STAGES)
    assert run["total_seconds"] > 0 and run["peak_rss_mb"] > 50
    assert run["rows"]["sections"] > 0 and run["text_mb"] > 0
    assert all(v > 0 for v in run["anchors"].values())
    # the anchors ran on 2 of the 4 documents and their sections, scaled to the whole by the work
    sample = run["anchor_sample"]
    assert (sample["documents"], sample["of_documents"], sample["whole"]) == (2, run["rows"]["documents"], False)
    assert 0 < sample["sections"] < sample["of_sections"] == run["rows"]["sections"]
    assert 0 < sample["text_mb"] < run["text_mb"]
    # the anchors are the sample's seconds scaled to the whole by the work; every figure in the
    # file is rounded (seconds to 1 ms, MB to 0.001), so the check is the interval those roundings allow
    def scaled_within(got: float, measured: float, whole: float, part: float, part_step: float) -> bool:
        r = 5e-4  # half a rounding step of the seconds and of the MB figures
        lo = max(0.0, measured - r) * max(0.0, whole - part_step / 2) / (part + part_step / 2) - r
        hi = (measured + r) * (whole + part_step / 2) / (part - part_step / 2) + r
        return lo <= got <= hi

    measured = sample["measured_seconds"]
    assert scaled_within(run["anchors"]["embedder_seconds"], measured["embedder_seconds"],
                         sample["of_sections"], sample["sections"], 0)
    assert sample["text_mb"] > 1e-3  # the MB figures' rounding is small against the sample
    # jieba was timed before the run too, on the documents of 2 files: the anchor is the mean of
    # the two speeds, so it lies between the two timings (each scaled to the whole text)
    before = sample["jieba_before_run"]
    assert before["files"] == 2 and before["documents"] >= 2 and before["text_mb"] > 1e-3 and before["seconds"] > 0
    scaled = sorted([measured["jieba_lcut_seconds"] * run["text_mb"] / sample["text_mb"],
                     before["seconds"] * run["text_mb"] / before["text_mb"]])
    assert scaled[0] * 0.9 <= run["anchors"]["jieba_lcut_seconds"] <= scaled[1] * 1.1
    assert sample["jieba_drift"] == pytest.approx(scaled[1] / scaled[0], rel=0.2)
    assert results["anchor_documents"] == 2
    assert results["commit"] and len(results["commit"].removesuffix("-dirty")) >= 7
    # the reference workload around the run and the anchors, and its drift
    assert set(run["reference_seconds"]) == {"before_run", "after_run", "after_anchors"}
    for timing in run["reference_seconds"].values():
        assert set(timing) == {"python", "numpy"} and all(v > 0 for v in timing.values())
    assert run["drift"] == drift(run["reference_seconds"]) and all(v >= 1.0 for v in run["drift"].values())
    assert set(run["reference_load_average"]) == set(run["reference_seconds"])
    assert len(sample["load_average"]) == 2 and all(x >= 0 for x in sample["load_average"])
    for name in ("ingest_to_extract_vs_jieba", "normalize_vs_opencc", "dedup_vs_embedder", "pipeline_vs_embedder",
                 "embedding_vs_embedder"):
        assert run["ratios"][name] > 0
    # dedup's two parts from the run's manifest; its embedding part is what the embedder anchor times
    parts = run["dedup_seconds"]
    assert set(parts) == {"embedding", "clustering"}
    assert abs(sum(parts.values()) - run["seconds"]["dedup"]) < 1e-9
    # the ratio is of the unrounded seconds: within the rounding of the two reported figures
    anchor, part = run["anchors"]["embedder_seconds"], parts["embedding"]
    assert (anchor - 5e-4) / (part + 5e-4) - 5e-4 <= run["ratios"]["embedding_vs_embedder"] <= (
        (anchor + 5e-4) / (part - 5e-4) + 5e-4)
    # dedup's steps from the run's log: they split the manifest's two parts (to the log's milliseconds)
    steps = run["dedup_steps"]
    assert {"embedding", "content_neighbours", "key_pairs", "scoring", "merging", "join_scores", "fusion"} <= set(steps)
    assert "content_kmeans" not in steps  # a tiny run searches exactly
    assert abs(steps["embedding"] - parts["embedding"]) < 0.05
    assert abs(sum(v for k, v in steps.items() if k != "embedding") - parts["clustering"]) < 0.05
    assert all(v >= 0 for v in steps.values())
    assert run["throughput"]["pipeline_sections_per_s"] > 0
    assert results["scaling"]["time_exponent"] is None  # one size: no slope
    assert set(results["acceptance"]) == set(ACCEPTANCE)
    assert not (tmp_path / "work").exists() or not any((tmp_path / "work").iterdir())
    printed = capsys.readouterr().out
    assert "ingest_to_extract_vs_jieba" in printed
    per_core = results["instructions"]
    refusal = _perf_refusal()
    if refusal is not None:  # a VM without a counter (seen here): the timed results stand, and say why
        assert set(per_core) == {"error"} and refusal in per_core["error"]
        assert f"instructions: {per_core['error']}" in printed
        return
    # the per-core instructions on the 4 files: work counted above the set-up, for both
    assert per_core["files"] == 4 and per_core["documents"] >= 4 and per_core["sections"] > 0
    assert per_core["instructions"]["stages"] > 0 and per_core["instructions"]["jieba"] > 0
    assert per_core["jieba_per_stages"] == pytest.approx(
        per_core["instructions"]["jieba"] / per_core["instructions"]["stages"], rel=1e-3)
    for mode in instructions.MODES:
        assert per_core["counts"][mode]["instructions"] > 0 and per_core["counts"][mode]["cycles"] > 0
    assert f"jieba.lcut / per-document stages, one core = {per_core['jieba_per_stages']:.3g}" in printed


def test_dedup_steps_are_the_seconds_between_the_lines_that_end_them(tmp_path):
    def line(second: float, message: str, logger: str = "pipeline.dedup") -> str:
        return json.dumps({"time": f"2026-12-02T10:00:{second:06.3f}+00:00", "level": "DEBUG",
                           "logger": logger, "message": message})

    log = tmp_path / "pipeline.log"
    log.write_text("\n".join([
        "peak: not a record",
        line(0.5, "dedup: 3 sections, 9 content-neighbour pairs"),  # before the start: not a step
        line(1.0, "assembled 600 sections; embedding", "pipeline.runner"),
        line(4.25, "embedded; clustering", "pipeline.runner"),
        line(5.0, "dedup: IVF k-means done (24 lists over 600 rows)"),
        line(7.0, "dedup: 600 sections, 6000 content-neighbour pairs"),
        line(7.5, "a line of another logger, no step"),
        line(8.0, "dedup: IVF k-means done (24 lists over 600 rows)"),
        line(9.0, "dedup: 580 title-neighbour pairs"),
        line(9.125, "dedup: candidate pairs from 4 sources"),
        line(11.0, "dedup: 900 candidate pairs at or above the threshold"),
        line(12.0, "dedup: merged into 50 clusters of two or more"),
        line(12.5, "dedup: fusing 600 sections"),
        line(14.0, "clustered into 120 papers; writing", "pipeline.runner"),
        '{"message": "summary without a time"}',
    ]) + "\n", encoding="utf-8")
    assert dedup_steps(log) == {
        "embedding": 3.25, "content_kmeans": 0.75, "content_neighbours": 2.0, "title_kmeans": 1.0,
        "title_neighbours": 1.0, "key_pairs": 0.125, "scoring": 1.875, "merging": 1.0,
        "join_scores": 0.5, "fusion": 1.5}
    assert dedup_steps(tmp_path / "missing.log") == {}
    (tmp_path / "text.log").write_text("DEBUG pipeline.runner: assembled 3 sections; embedding\n")
    assert dedup_steps(tmp_path / "text.log") == {}
    # edited logs: a time without an offset (UTC), a time going back (skipped), a nested line
    (tmp_path / "edited.log").write_text("\n".join([
        line(1.0, "assembled 600 sections; embedding").replace("+00:00", ""),
        "[" * 100_000,
        line(0.5, "embedded; clustering"),
        line(4.25, "embedded; clustering"),
    ]) + "\n", encoding="utf-8")
    assert dedup_steps(tmp_path / "edited.log") == {"embedding": 3.25}


def test_drift_is_slowest_over_fastest_per_part():
    references = {"before_run": {"python": 0.5, "numpy": 0.2}, "after_run": {"python": 0.6, "numpy": 0.2},
                  "after_anchors": {"python": 0.4, "numpy": 0.25}}
    assert drift(references) == {"numpy": 1.25, "python": 1.5}
    assert drift({}) == {}
    # fewer than two usable timings (finite, above 0) say nothing: None, not a steady 1.0
    assert drift({"before_run": {"python": 0.5}}) == {"python": None}
    assert drift({"a": {"python": 0.5, "numpy": 0.2}, "b": {"python": 0.25}}) == {"numpy": None, "python": 2.0}
    bad = {"a": {"python": 0.0}, "b": {"python": float("nan")}, "c": {"python": -1.0}, "d": {"python": None},
           "e": {"python": float("inf")}, "f": {"python": True}}
    assert drift(bad) == {"python": None}
    assert drift({**bad, "g": {"python": 0.3}, "h": {"python": 0.6}}) == {"python": 2.0}


def test_commit_is_heads_and_ignores_the_results_a_run_writes():
    import subprocess

    from bench.run import ROOT, _commit

    head = subprocess.run(["git", "rev-parse", "--short=12", "HEAD"], cwd=ROOT, capture_output=True, text=True,
                          check=True).stdout.strip()
    dirty = subprocess.run(["git", "status", "--porcelain", "--", ".", ":(exclude)bench/results*.json"], cwd=ROOT,
                           capture_output=True, text=True, check=True).stdout.strip()
    assert _commit() == head + ("-dirty" if dirty else "")


def test_cpu_model_is_the_first_processors_fields(tmp_path):
    info = tmp_path / "cpuinfo"
    info.write_text("processor\t: 0\nvendor_id\t: AuthenticAMD\ncpu family\t: 26\nmodel\t\t: 2\n"
                    "model name\t: AMD EPYC\nflags\t\t: fpu avx2\n\n"
                    "processor\t: 1\nvendor_id\t: Other\nmodel name\t: Another\n\n", encoding="utf-8")
    assert cpu_model(info) == {"vendor_id": "AuthenticAMD", "cpu family": "26", "model": "2",
                               "model name": "AMD EPYC"}
    info.write_text("\n\nprocessor : 0\nmodel name : Some CPU: rev 2\n", encoding="utf-8")
    assert cpu_model(info) == {"model name": "Some CPU: rev 2"}  # leading blank lines, a colon in the value
    info.write_text("processor : 0\nBogoMIPS : 50.00\n", encoding="utf-8")  # none of the fields (ARM)
    assert cpu_model(info) is None
    # none in the first block: a later block's fields are not the first CPU's (POWER's last
    # block has the machine's "model"); an empty value is no value
    info.write_text("processor : 0\ncpu : POWER9\nmodel name :\n\nprocessor : 1\nmodel name : Second\n\n"
                    "timebase : 512000000\nmodel : IBM,9009-42A\n", encoding="utf-8")
    assert cpu_model(info) is None
    info.write_bytes(b"model name : Caf\xe9 CPU\r\nmodel : 7\r\n")  # not UTF-8, CRLF
    assert cpu_model(info) == {"model name": "Caf\ufffd CPU", "model": "7"}
    assert cpu_model(tmp_path) is None  # a folder
    assert cpu_model(tmp_path / "missing") is None


def test_reference_workload_times_both_parts():
    timing = reference_seconds(repeats=1)
    assert set(timing) == {"python", "numpy"} and all(0 < v < 60 for v in timing.values())
    with pytest.raises(ValueError, match="at least 1"):
        reference_seconds(repeats=0)


def test_anchor_sample_is_all_up_to_the_limit_then_a_seeded_draw():
    ids = [f"d{k}" for k in range(10)]
    assert anchor_sample(ids, None, 0) is None and anchor_sample(ids, 10, 0) is None
    drawn = anchor_sample(ids, 4, 0)
    assert len(drawn) == 4 and drawn <= set(ids)
    assert anchor_sample(list(reversed(ids)), 4, 0) == drawn  # the order of the ids does not matter
    assert anchor_sample(ids, 4, 1) != drawn or anchor_sample(ids, 4, 2) != drawn
    with pytest.raises(ValueError, match="at least 1"):
        anchor_sample(ids, 0, 0)


def test_a_sample_without_sections_times_the_whole_run(tmp_path):
    import pandas as pd

    from bench.run import measure_run

    out = tmp_path / "out"
    out.mkdir()
    (out / "manifest.json").write_text(json.dumps({"seconds": {s: 1.0 for s in ALL_STAGES}}), encoding="utf-8")
    long = "深度學習的論文與獎項。" * 2000  # long enough to time in milliseconds
    pd.DataFrame({"doc_id": ["a", "b", "c"], "text": [long, "", long],
                  "status": ["ok", "duplicate", "ok"]}).to_parquet(out / "documents.parquet")
    pd.DataFrame({"section_id": ["a-0", "c-0"], "doc_id": ["a", "c"], "text": [long, long],
                  "title": ["One", "Three"], "title_zh": [None, None], "summary_norm": [None, None]}
                 ).to_parquet(out / "sections.parquet")
    pd.DataFrame({"paper_id": ["p1", "p2"]}).to_parquet(out / "papers.parquet")
    # a sample of one document: "b" has no text and no section; whichever is drawn, nothing is 0.
    # Seeds 0, 1 and 5 draw b, a and c; one embedder process (the pool's anchor is timed by
    # test_tiny_bench_run_writes_results), as the sampling is what is checked here
    assert [anchor_sample(["a", "b", "c"], 1, seed) for seed in (0, 1, 5)] == [{"b"}, {"a"}, {"c"}]
    for seed in (0, 1, 5):
        entry = measure_run({"n_articles": 3, "corpus": {"n_bytes": 30}}, out, seed, anchor_documents=1,
                            workers=1)
        sample = entry["anchor_sample"]
        assert sample["sections"] >= 1 and sample["text_mb"] > 0
        assert all(v > 0 for v in entry["anchors"].values())
        # a manifest from before dedup_seconds: no parts, no embedding ratio
        assert entry["dedup_seconds"] == {} and entry["ratios"]["embedding_vs_embedder"] is None


def test_the_jieba_anchor_is_the_mean_speed_before_and_after_the_run(tmp_path):
    import pandas as pd

    from bench.run import measure_run

    out = tmp_path / "out"
    out.mkdir()
    (out / "manifest.json").write_text(json.dumps({"seconds": {s: 1.0 for s in ALL_STAGES}}), encoding="utf-8")
    long = "深度學習的論文與獎項。" * 2000  # long enough to time in tens of milliseconds
    pd.DataFrame({"doc_id": ["a", "b"], "text": [long, long], "status": ["ok", "ok"]}).to_parquet(out / "documents.parquet")
    pd.DataFrame({"section_id": ["a-0", "b-0"], "doc_id": ["a", "b"], "text": [long, long], "title": ["One", "Two"],
                  "title_zh": [None, None], "summary_norm": [None, None]}).to_parquet(out / "sections.parquet")
    pd.DataFrame({"paper_id": ["p1"]}).to_parquet(out / "papers.parquet")
    before = {"files": 1, "documents": 1, "text_mb": 1.0, "seconds": 2.0}  # 0.5 MB/s before the run
    entry = measure_run({"n_articles": 2, "corpus": {"n_bytes": 30}}, out, 0, anchor_documents=None,
                        jieba_before=before, workers=1)
    sample = entry["anchor_sample"]
    after = sample["measured_seconds"]["jieba_lcut_seconds"]  # the whole text, timed now
    pre = 2.0 * entry["text_mb"] / 1.0  # the same text at 0.5 MB/s
    assert sample["jieba_before_run"] == before
    assert entry["anchors"]["jieba_lcut_seconds"] == pytest.approx(2 / (1 / pre + 1 / after), rel=1e-2)
    assert sample["jieba_drift"] == pytest.approx(max(pre, after) / min(pre, after), rel=1e-2)
    # a run without text (nothing to scale the timing before it to): the timing after it alone
    (out / "empty").mkdir()
    for name in ("manifest.json", "sections.parquet", "papers.parquet"):
        shutil.copy(out / name, out / "empty" / name)
    pd.DataFrame({"doc_id": ["a"], "text": [""], "status": ["empty"]}).to_parquet(out / "empty" / "documents.parquet")
    empty = measure_run({"n_articles": 1, "corpus": {"n_bytes": 1}}, out / "empty", 0, anchor_documents=None,
                        jieba_before=before, workers=1)
    assert empty["anchor_sample"]["jieba_drift"] is None
    # without a timing before the run: the one after it, as before
    alone = measure_run({"n_articles": 2, "corpus": {"n_bytes": 30}}, out, 0, anchor_documents=None, workers=1)
    assert alone["anchor_sample"]["jieba_before_run"] is None and alone["anchor_sample"]["jieba_drift"] is None
    assert alone["anchors"]["jieba_lcut_seconds"] == pytest.approx(
        alone["anchor_sample"]["measured_seconds"]["jieba_lcut_seconds"], abs=1e-3)


def test_jieba_before_the_run_times_the_documents_of_a_sample_of_files(tmp_path):
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    (corpus / "a.txt").write_text("深度学习模型在图像识别任务上取得了很好的效果。" * 20, encoding="utf-8")
    (corpus / "b.jsonl").write_text(json.dumps({"title": "T", "text": "图像识别的新方法。" * 30}, ensure_ascii=False)
                                    + "\n" + json.dumps({"title": "U", "text": "Large language models."}) + "\n",
                                    encoding="utf-8")
    (corpus / "c.md").write_text("# A title\n\nSome English text about diffusion models.\n", encoding="big5")
    (corpus / "skip.pdf").write_bytes(b"%PDF")
    listing = ingest.list_corpus(corpus, load_config().ingest.extensions)[0]
    texts = {p: [d["text"] for d in ingest.read_documents(p, a)]
             for p, a in zip(listing["source_path"], listing["abs_path"], strict=True)}
    whole = jieba_before_run(corpus, None, 0)
    assert (whole["files"], whole["documents"]) == (3, 4) and whole["seconds"] > 0
    assert whole["text_mb"] == sum(len(t.encode("utf-8")) for ts in texts.values() for t in ts) / 1e6
    assert jieba_before_run(corpus, 3, 0)["documents"] == 4  # up to the limit: every file
    one = jieba_before_run(corpus, 1, 5)
    assert one["files"] == 1 and one["documents"] in (1, 2)
    (path,) = anchor_sample(list(texts), 1, 5)  # the file the seed draws, decoded as ingest decodes it
    assert one["text_mb"] == sum(len(t.encode("utf-8")) for t in texts[path]) / 1e6


# --- bench.instructions: the per-core work in CPU instructions --------------------------------


def test_perf_csv_counts_and_refusals():
    text = ("# started on Tue Dec  1 04:20:00 2026\n\n"
            "30625269710,,instructions:u,40294771278,100.00,1.06,insn per cycle\n"
            "30557768144,,cycles:u,40294771278,100.00,,\n")
    assert instructions.parse_perf_csv(text) == {"instructions": 30625269710, "cycles": 30557768144}
    with pytest.raises(instructions.PerfUnavailable, match="could not count instructions:u: <not supported>"):
        instructions.parse_perf_csv("<not supported>,,instructions:u,0,100.00,,\n")


@functools.cache
def _perf_refusal() -> str | None:
    """What ``perf`` itself says when it cannot count user-space instructions here (some VMs
    expose no hardware counter: ``<not supported>``), as a part of the message that
    :class:`instructions.PerfUnavailable` then carries; None when it counts. Asked of ``perf``
    directly, not through :func:`instructions.count`, so a broken ``count`` cannot pass for a
    machine without a counter."""
    perf = shutil.which("perf")
    if perf is None:
        return "perf is not installed"
    done = subprocess.run([perf, "stat", "-x,", "-e", "instructions:u", "--", "true"], capture_output=True,
                          text=True, check=False)
    for marker in ("<not supported>", "<not counted>"):
        if marker in done.stderr:
            return marker
    return f"exit {done.returncode}" if done.returncode != 0 else None


def test_perf_counts_the_work_of_a_child():
    # the instructions of a child that sums three million integers exceed those of one that does
    # nothing by at least a few per integer (CPython: tens), and two runs agree closely
    refusal = _perf_refusal()
    if refusal is not None:  # no counter here: every count says so, the same way
        with pytest.raises(instructions.PerfUnavailable, match=re.escape(refusal)):
            instructions.count([sys.executable, "-c", "sum(range(3_000_000))"])
        return
    idle = instructions.count([sys.executable, "-c", "pass"])["instructions"]
    busy = [instructions.count([sys.executable, "-c", "sum(range(3_000_000))"])["instructions"] for _ in range(2)]
    assert all(b - idle > 3 * 3_000_000 for b in busy)
    assert busy[0] == pytest.approx(busy[1], rel=0.05)


def test_instruction_children_do_their_work_and_only_the_set_up(corpus):
    folder, _ = corpus
    stages, base = instructions.child("stages", folder, 3), instructions.child("stages-base", folder, 3)
    assert stages["files"] == base["files"] == 3
    assert stages["documents"] >= 3 and stages["sections"] > 0
    assert base["sections"] == base["documents"] == 0
    jieba_work, jieba_base = instructions.child("jieba", folder, 3), instructions.child("jieba-base", folder, 3)
    # both read the same documents; only the work mode segments them
    assert jieba_work == jieba_base
    assert jieba_work["documents"] >= 3 and jieba_work["text_chars"] > 1000


def test_instructions_refuses_a_folder_without_documents(tmp_path, capsys):
    (tmp_path / "image.png").write_bytes(b"\x89PNG")
    with pytest.raises(SystemExit) as stop:
        instructions.main([str(tmp_path)])
    assert stop.value.code == 2
    assert "no file the pipeline reads (.txt, .md, .html, .htm, .jsonl, .csv, .tsv, .yml, .yaml)" in capsys.readouterr().err


def test_instructions_says_when_perf_refuses(tmp_path, monkeypatch, capsys):
    # a perf that the kernel refuses prints why and exits 255 without counting
    fake = tmp_path / "bin" / "perf"
    fake.parent.mkdir()
    fake.write_text("#!/bin/sh\necho 'Access to performance monitoring and observability operations is limited.' >&2\n"
                    "exit 255\n")
    fake.chmod(0o755)
    monkeypatch.setenv("PATH", f"{fake.parent}:{os.environ['PATH']}")
    with pytest.raises(instructions.PerfUnavailable, match="exit 255.*performance monitoring"):
        instructions.count([sys.executable, "-c", "pass"])
    (tmp_path / "c").mkdir()
    (tmp_path / "c" / "a.txt").write_text("正文", encoding="utf-8")
    assert instructions.main([str(tmp_path / "c")]) == 2
    assert "perf stat failed (exit 255)" in capsys.readouterr().err


def test_ann_recall_is_one_when_every_list_is_scanned_and_less_with_few(tmp_path, capsys):
    from bench.ann_recall import ann_recall, cache_vectors, main
    from pipeline.dedup import candidates as dedup
    from pipeline.embed_cache import EmbeddingCache

    rng = np.random.default_rng(0)
    x = rng.normal(size=(3000, 32)).astype(np.float32)
    x /= np.linalg.norm(x, axis=1, keepdims=True)
    before = dedup.IVF_LISTS_PER_SQRT, dedup.IVF_NPROBE, dedup.IVF_TRAIN_PER_LIST
    # 1 list per sqrt(n): 54 lists, all 54 probed: the exact search; 2 of 109: far from it
    every, few = ann_recall(x, [(1, 54, 64), (2, 2, 64)], n_queries=300)
    assert (every["nlist"], every["recall"], every["by_score"]) == (54, 1.0, 1.0)
    assert few["nlist"] == 109 and 0.05 < few["recall"] < 0.9 and few["by_score"] == few["recall"]
    assert (dedup.IVF_LISTS_PER_SQRT, dedup.IVF_NPROBE, dedup.IVF_TRAIN_PER_LIST) == before
    with pytest.raises(ValueError, match="more than k"):
        ann_recall(x[:10], [(2, 16, 64)])

    cache = EmbeddingCache(tmp_path / "embeddings.sqlite")
    cache.put("m", {"b" * 64: x[0], "a" * 64: x[1]})
    cache.close()
    assert np.array_equal(cache_vectors(tmp_path / "embeddings.sqlite"), x[[1, 0]])  # text-hash order
    with pytest.raises(SystemExit):
        main([str(tmp_path / "embeddings.sqlite"), "2,0,64"])
    with pytest.raises(SystemExit):
        main([str(tmp_path / "embeddings.sqlite"), "2,257,64"])
    # not a cache, or too few vectors: one line and exit 1, no traceback
    (tmp_path / "text.sqlite").write_text("not a database")
    assert main([str(tmp_path / "text.sqlite"), "2,16,64"]) == 1
    assert main([str(tmp_path / "embeddings.sqlite"), "2,16,64"]) == 1
    assert main([str(tmp_path / "missing.sqlite"), "2,16,64"]) == 1
    err = capsys.readouterr().err
    assert "file is not a database" in err and "more than k = 10" in err and "Traceback" not in err
