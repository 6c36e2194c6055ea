"""Safe by default (issue 42): what a run may read, what it may delete, clean logs, and
acknowledged failures. Each test is one of the issue's probes, on a corpus of a file or two.

Probes that need file permissions (an unsearchable folder) run the pipeline in a child process
without the capabilities that let root ignore them (``capsh``, as in tests/test_ingest.py).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest
from click.testing import CliRunner, Result

from pipeline.cli import EXIT_FAILED_FILES, EXIT_OK, EXIT_USAGE, OFFLINE_VARIABLES, cli
from pipeline.config import load_config
from pipeline.failures import too_many_failed
from pipeline.ingest import list_corpus, read_documents
from pipeline.outdir import MARKER, OutputRefused, check, foreign_entries
from pipeline.runner import run

REPO = Path(__file__).resolve().parents[1]
ARTICLE = """机器之心报道

论文 1：Scaling Sparse Attention for Long Documents

论文地址：https://arxiv.org/abs/2401.01234

论文摘要：本文提出一种稀疏注意力方法，在长文档上显著降低计算开销，同时保持模型质量。
"""
SECRET = "TOP SECRET outside the corpus 口令"
BINARY = bytes(range(256)) * 4  # no encoding decodes it: an error row


def _corpus(root: Path, files: dict[str, bytes]) -> Path:
    for name, data in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_bytes(data)
    return root


def _invoke(*args: str | Path) -> Result:
    return CliRunner().invoke(cli, ["run", *map(str, args)], catch_exceptions=False)


def _tree(folder: Path) -> dict[str, bytes | str]:
    """Every entry under ``folder``: a file's bytes, a link's target."""
    out: dict[str, bytes | str] = {}
    for path in sorted(folder.rglob("*")):
        rel = path.relative_to(folder).as_posix()
        out[rel] = os.readlink(path) if path.is_symlink() else path.read_bytes() if path.is_file() else "<dir>"
    return out


# --- 1. confinement -----------------------------------------------------------------------------


def test_links_that_leave_the_corpus_are_skipped_and_never_read(tmp_path: Path, use_embedder) -> None:
    (tmp_path / "outside").mkdir()
    (tmp_path / "outside" / "secret.txt").write_text(SECRET, encoding="utf-8")
    corpus = _corpus(tmp_path / "corpus", {"a.txt": ARTICLE.encode(), "sub/b.txt": ARTICLE.encode() + b"\n2\n",
                                           ".hidden.txt": SECRET.encode(), "notes.pdf": b"%PDF-1.4"})
    (corpus / "abs.txt").symlink_to(tmp_path / "outside" / "secret.txt")
    (corpus / "rel.txt").symlink_to("../outside/secret.txt")
    (corpus / "inside.txt").symlink_to("sub/b.txt")

    out = tmp_path / "out"
    result = run(corpus, out, load_config(), embedder=use_embedder, progress=False)

    docs = pd.read_parquet(out / "documents.parquet").set_index("source_path")
    assert docs.loc["abs.txt", "status"] == docs.loc["rel.txt", "status"] == "skipped"
    assert docs.loc["abs.txt", "error"] == (f"symbolic link to a file outside the corpus "
                                            f"(-> {tmp_path / 'outside' / 'secret.txt'}), not read")
    assert docs.loc["rel.txt", "error"] == ("symbolic link to a file outside the corpus "
                                            "(-> ../outside/secret.txt), not read")
    assert docs.loc[".hidden.txt", "error"] == "hidden file (name starts with '.'), not read"
    assert docs.loc["notes.pdf", "error"] == "unsupported file type .pdf"
    # a link inside the corpus is read: the same bytes as its target, which is thus a copy of it
    assert docs.loc["inside.txt", "status"] == "ok" and docs.loc["sub/b.txt", "status"] == "duplicate"
    assert docs.loc["inside.txt", "text"] == ARTICLE + "\n2\n"
    assert result.summary()["skipped_files"] == 4
    for name in ("documents.parquet", "sections.parquet", "report.html", "manifest.json"):
        assert b"TOP SECRET" not in (out / name).read_bytes(), name


def test_a_file_swapped_for_a_link_after_listing_is_not_read(tmp_path: Path) -> None:
    (tmp_path / "secret.txt").write_text(SECRET, encoding="utf-8")
    corpus = _corpus(tmp_path / "corpus", {"a.txt": ARTICLE.encode()})
    listing, _ = list_corpus(corpus, [".txt"])
    (corpus / "a.txt").unlink()
    (corpus / "a.txt").symlink_to(tmp_path / "secret.txt")
    [row] = read_documents(listing["source_path"][0], listing["abs_path"][0])
    assert row["status"] == "error" and row["error"].startswith("OSError: [Errno 40]")  # ELOOP: O_NOFOLLOW
    assert SECRET not in (row["text"] or "")


@pytest.mark.parametrize("where", ["same", "out-inside-corpus", "corpus-inside-out"])
def test_an_output_folder_overlapping_the_corpus_is_refused_before_anything_is_written(tmp_path: Path,
                                                                                       where: str) -> None:
    if where == "corpus-inside-out":
        out = tmp_path / "out"
        corpus = _corpus(out / "corpus", {"report.html": b"<p>an article</p>"})
    else:
        corpus = _corpus(tmp_path / "corpus", {"report.html": b"<p>an article</p>"})
        out = corpus if where == "same" else corpus / "out"
    before = _tree(tmp_path)

    result = _invoke(corpus, "--out", out, "--quiet")

    assert result.exit_code == EXIT_USAGE == 2
    message = {"same": f"error: the output folder {out} is the corpus",
               "out-inside-corpus": f"error: the output folder {out} is inside the corpus {corpus}",
               "corpus-inside-out": f"error: the corpus {corpus} is inside the output folder {out}"}[where]
    assert result.stderr.startswith(message), result.stderr
    assert _tree(tmp_path) == before  # not even a lock or an empty folder


def test_an_output_folder_inside_a_corpus_is_not_read_and_one_as_the_corpus_is_refused(tmp_path: Path) -> None:
    corpus = _corpus(tmp_path / "corpus", {"a.txt": b"x", "old_out/report.txt": b"x", f"old_out/{MARKER}": b"{}"})
    listing, skipped = list_corpus(corpus, [".txt"])
    assert listing["source_path"].tolist() == ["a.txt"]
    assert skipped.to_dict("records") == [{"source_path": "old_out", "reason": "an output folder of this pipeline, not read"}]
    with pytest.raises(OutputRefused, match="is an output folder of this pipeline"):
        check(corpus / "old_out", tmp_path / "new_out")
    # one the version before the marker wrote: known by its current link into .runs
    (corpus / "older_out" / ".runs" / "r1").mkdir(parents=True)
    (corpus / "older_out" / ".runs" / "r1" / "report.html").write_text("<p>a report</p>", encoding="utf-8")
    (corpus / "older_out" / "current").symlink_to(".runs/r1")
    (corpus / "older_out" / "report.html").symlink_to("current/report.html")
    listing, skipped = list_corpus(corpus, [".txt", ".html"])
    assert listing["source_path"].tolist() == ["a.txt"]
    assert skipped["source_path"].tolist() == ["old_out", "older_out"]


# --- 2. ownership -------------------------------------------------------------------------------


def test_a_folder_with_files_the_pipeline_did_not_write_is_refused_and_left_as_it_was(tmp_path: Path) -> None:
    corpus = _corpus(tmp_path / "corpus", {"a.txt": ARTICLE.encode()})
    out = _corpus(tmp_path / "out", {"report.html": b"<p>my own report</p>", "manifest.json": b'{"mine": 1}'})
    before = _tree(out)
    for _ in range(3):  # an older version deleted them on the third run
        result = _invoke(corpus, "--out", out, "--quiet")
        assert result.exit_code == EXIT_USAGE
        assert result.stderr.startswith(f'error: the output folder {out} holds files the pipeline did not write: '
                                        '"manifest.json", "report.html"; ')
    assert _tree(out) == before  # no lock, no marker, nothing moved


def test_a_marked_output_folder_keeps_a_users_files_over_runs(tmp_path: Path, use_embedder) -> None:
    corpus = _corpus(tmp_path / "corpus", {"a.txt": ARTICLE.encode()})
    out = tmp_path / "out"
    run(corpus, out, load_config(), embedder=use_embedder, progress=False)
    assert json.loads((out / MARKER).read_text(encoding="utf-8"))["layout"] == "tables"
    (out / "notes.txt").write_text("mine", encoding="utf-8")
    for _ in range(3):
        run(corpus, out, load_config(), embedder=use_embedder, progress=False)
    assert (out / "notes.txt").read_text(encoding="utf-8") == "mine"
    # a file where the pipeline publishes one, not the one it published: refused, not replaced
    (out / "report.html").unlink()
    (out / "report.html").write_text("mine too", encoding="utf-8")
    with open(out / "README.md", "a", encoding="utf-8") as fh:  # the card, edited by hand
        fh.write("my notes\n")
    with pytest.raises(OutputRefused, match=r'holds "report.html", "README.md" where the pipeline publishes'):
        run(corpus, out, load_config(), embedder=use_embedder, progress=False)
    assert (out / "report.html").read_text(encoding="utf-8") == "mine too"
    assert (out / "README.md").read_text(encoding="utf-8").endswith("my notes\n")


def test_an_output_folder_of_the_previous_version_without_a_marker_is_adopted(tmp_path: Path, use_embedder) -> None:
    corpus = _corpus(tmp_path / "corpus", {"a.txt": ARTICLE.encode()})
    out = tmp_path / "out"
    first = run(corpus, out, load_config(), embedder=use_embedder, progress=False)
    (out / MARKER).unlink()  # as the version before the marker left it
    second = run(corpus, out, load_config(), embedder=use_embedder, progress=False)
    assert second.files["reused"] == ["a.txt"]  # its state was taken as the pipeline's own
    assert json.loads((out / MARKER).read_text(encoding="utf-8"))["layout"] == "tables"
    assert sorted(p.name for p in (out / ".pipeline" / "runs").iterdir()) == sorted([first.run_id, second.run_id])
    (out / MARKER).unlink()
    assert foreign_entries(out) == []  # the publish record names every top-level file
    with open(out / "papers.parquet", "ab") as fh:  # changed since it was published: not the pipeline's
        fh.write(b"x")
    assert foreign_entries(out) == ["papers.parquet"]


def test_what_a_killed_run_leaves_is_the_pipelines_and_anything_else_is_named(tmp_path: Path) -> None:
    out = tmp_path / "out"
    for folder in (".pipeline", ".runs", ".state", ".cache", ".staging-abc"):
        (out / folder).mkdir(parents=True)
    (out / ".lock").write_text("12345\n", encoding="ascii")
    (out / ".write-test").write_bytes(b"")
    (out / f"{MARKER}.7.tmp").write_text("{}", encoding="utf-8")
    (out / "current").symlink_to(".runs/20250101T000000.000000Z-abcdef")
    (out / "papers.parquet").symlink_to("current/papers.parquet")
    (out / ".current.x.tmp").symlink_to(".runs/20250102T000000.000000Z-abcdef")
    assert foreign_entries(out) == []
    (out / "notes.txt").write_text("mine", encoding="utf-8")
    (out / "report.html").symlink_to("/etc/passwd")
    (out / ".lock").write_text("not a pid", encoding="ascii")
    assert foreign_entries(out) == [".lock", "notes.txt", "report.html"]


# --- 4. an unsearchable folder ------------------------------------------------------------------


def _unprivileged(command: list[str]) -> list[str]:
    """``command`` as a child process that file permissions bind: as root, without the
    capabilities that override them (capsh, part of libcap)."""
    if os.geteuid() != 0:
        return command
    capsh = shutil.which("capsh") or "/usr/sbin/capsh"
    return [capsh, "--drop=cap_dac_override,cap_dac_read_search", "--", "-c", 'exec "$0" "$@"', *command]


@pytest.mark.slow
def test_an_unsearchable_folder_is_a_skipped_row_not_an_aborted_run(tmp_path: Path) -> None:
    corpus = _corpus(tmp_path / "corpus", {"a.txt": ARTICLE.encode(), "locked/b.txt": ARTICLE.encode() + b"\n2\n"})
    out = tmp_path / "out"
    os.chmod(corpus / "locked", 0o444)  # readable, not searchable
    env = {**os.environ, "PYTHONPATH": str(REPO), "TOKENIZERS_PARALLELISM": "false"}
    try:
        proc = subprocess.run(_unprivileged([sys.executable, "-m", "pipeline", "run", str(corpus), "--out", str(out),
                                             "--quiet", "--workers", "1"]),
                              cwd=REPO, env=env, capture_output=True, text=True, timeout=300, check=False)
    finally:
        os.chmod(corpus / "locked", 0o755)
    assert proc.returncode == EXIT_OK, proc.stderr
    docs = pd.read_parquet(out / "documents.parquet")
    assert docs[["source_path", "status"]].values.tolist() == [["a.txt", "ok"], ["locked", "skipped"]]
    assert docs["error"].iloc[1] == "folder not searchable, its files not read: PermissionError: Permission denied"


# --- 6. clean logs ------------------------------------------------------------------------------

FORGED = "bad\nINFO pipeline: forged line\x1b[31m\u202e.txt"


def test_control_characters_in_names_are_escaped_in_text_logs_and_the_summary(tmp_path: Path) -> None:
    corpus = _corpus(tmp_path / "corpus", {"a.txt": ARTICLE.encode(), FORGED: BINARY})
    result = _invoke(corpus, "--out", tmp_path / "out")
    assert result.exit_code == EXIT_FAILED_FILES
    escaped = "bad\\nINFO pipeline: forged line\\x1b[31m\\u202e.txt"
    for stream in (result.stderr, result.stdout):
        assert "\x1b" not in stream and "\u202e" not in stream
        assert not any(line.startswith("INFO pipeline: forged") for line in stream.splitlines())
    assert f"WARNING pipeline.ingest: document {escaped}: could not decode {escaped}" in result.stderr
    assert f"    new    {escaped}  BinaryContent" in result.stdout.splitlines()


def test_control_characters_in_names_are_escaped_in_json_logs(tmp_path: Path) -> None:
    corpus = _corpus(tmp_path / "corpus", {"a.txt": ARTICLE.encode(), FORGED: BINARY})
    result = _invoke(corpus, "--out", tmp_path / "out", "--log-format", "json")
    assert result.exit_code == EXIT_FAILED_FILES
    assert "\x1b" not in result.stderr and "\u202e" not in result.stderr
    records = [json.loads(line) for line in result.stderr.splitlines()]  # one object per line, none forged
    assert any(r["message"].startswith(f"document {FORGED}: ") for r in records)  # the name, decoded, intact
    assert records[-1]["failed"] == [{"path": FORGED, "error_type": "BinaryContent", "known": False}]


def test_the_cli_sets_the_model_hubs_offline_unless_downloads_are_allowed(tmp_path: Path,
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    for name in OFFLINE_VARIABLES:
        monkeypatch.delenv(name, raising=False)  # restored after the test
    missing = tmp_path / "missing"
    assert _invoke(missing, "--out", tmp_path / "out").exit_code == EXIT_USAGE
    assert [os.environ.get(name) for name in OFFLINE_VARIABLES] == ["1", "1"]
    assert _invoke(missing, "--out", tmp_path / "out", "--allow-downloads").exit_code == EXIT_USAGE
    assert [os.environ.get(name) for name in OFFLINE_VARIABLES] == ["0", "0"]


# --- 7. acknowledged failures -------------------------------------------------------------------


def test_max_failed_decides_the_exit_code_and_known_failures_are_told_from_new(tmp_path: Path) -> None:
    corpus = _corpus(tmp_path / "corpus", {"a.txt": ARTICLE.encode(), "bad.txt": BINARY})
    out = tmp_path / "out"

    first = _invoke(corpus, "--out", out, "--log-format", "json")
    assert first.exit_code == EXIT_FAILED_FILES  # default: no failed file acknowledged
    summary = json.loads(first.stderr.splitlines()[-1])
    assert (summary["failed_files"], summary["failed_new"], summary["failed_known"]) == (1, 1, 0)

    second = _invoke(corpus, "--out", out, "--max-failed", "1")
    assert second.exit_code == EXIT_OK
    assert "  failed files                             1  (0 new, 1 known)" in second.stdout.splitlines()
    assert "    known  bad.txt  BinaryContent" in second.stdout.splitlines()
    status = CliRunner().invoke(cli, ["status", str(out)], catch_exceptions=False)
    assert "  failed files       1 (0 new, 1 known)" in status.stdout
    assert "    known  bad.txt  [ingest] BinaryContent: could not decode bad.txt: BinaryContentError" in status.stdout

    (corpus / "bad.txt").write_bytes(BINARY * 2)  # other bytes: a new failure; 1 of 2 documents
    third = _invoke(corpus, "--out", out, "--max-failed", "0.4", "--log-format", "json")
    assert third.exit_code == EXIT_FAILED_FILES
    assert json.loads(third.stderr.splitlines()[-1])["failed"] == [
        {"path": "bad.txt", "error_type": "BinaryContent", "known": False}]

    bad_value = _invoke(corpus, "--out", out, "--max-failed", "1.5")
    assert bad_value.exit_code == EXIT_USAGE and "run.max_failed = 1.5" in bad_value.stderr


@pytest.mark.parametrize(("n_failed", "n_documents", "max_failed", "too_many"), [
    (0, 10, 0, False), (1, 10, 0, True), (3, 10, 3, False), (4, 10, 3, True),
    (1, 20, 0.05, False), (2, 20, 0.05, True), (1, 1, 0.99, True),
])
def test_max_failed_is_a_count_or_a_fraction_of_the_documents(n_failed: int, n_documents: int, max_failed: float,
                                                              too_many: bool) -> None:
    assert too_many_failed(n_failed, n_documents, max_failed) is too_many


def test_links_where_the_pipeline_keeps_its_files_are_refused(tmp_path: Path) -> None:
    """A link inside OUT/.pipeline (the cache file, the runs folder) would make a run write or
    prune what it points to, outside OUT: the folder is refused, the target untouched."""
    from pipeline.outdir import OutputRefused, check

    corpus, out, elsewhere = tmp_path / "corpus", tmp_path / "out", tmp_path / "elsewhere"
    for folder in (corpus, out / ".pipeline" / "cache", elsewhere):
        folder.mkdir(parents=True)
    (elsewhere / "user.sqlite").write_bytes(b"a user's database")
    (out / ".pipeline" / "cache" / "embeddings.sqlite").symlink_to(elsewhere / "user.sqlite")
    with pytest.raises(OutputRefused, match=r"symbolic links .*embeddings\.sqlite"):
        check(corpus, out)
    (out / ".pipeline" / "cache" / "embeddings.sqlite").unlink()
    (out / ".pipeline" / "runs").symlink_to(elsewhere, target_is_directory=True)
    with pytest.raises(OutputRefused, match=r"symbolic links .*\.pipeline/runs"):
        check(corpus, out)
    assert (elsewhere / "user.sqlite").read_bytes() == b"a user's database"
