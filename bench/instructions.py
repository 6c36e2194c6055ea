"""Per-core work of the per-document stages against ``jieba.lcut``, in CPU instructions.

``python -m bench.instructions CORPUS [--documents N] [--out FILE]``

Wall and CPU seconds on the project's 2-core VMs drift by 20-30% between two runs of the same
code a few minutes apart (bench/README.md, "Instructions"); the number of user-space
instructions a process retires does not. This counts them with Linux ``perf stat -e
instructions:u`` (https://man7.org/linux/man-pages/man1/perf-stat.1.html; children included)
in four child processes, each with ``PYTHONHASHSEED=0``:

* ``stages``: the per-document stages (:func:`pipeline.runner.process_files`, ingest → extract)
  over the first ``N`` listed files of ``CORPUS`` in one process, in batches of the run's
  ``batch_size``, models loaded first as in a pool worker (:func:`pipeline.executor.become_worker`);
* ``jieba``: ``jieba.lcut`` over the decoded text of every document of those files
  (:func:`pipeline.ingest.read_documents`; the anchor of ``bench/run.py``), after a warm-up call;
* ``stages-base`` and ``jieba-base``: the same set-up (imports, models, listing, reading the
  files) without the work, subtracted from the two above.

``jieba / stages`` is then the stages' speed relative to jieba on one core, counted in
instructions. The issue's figure (ingest→extract on W workers against jieba on one core, in
seconds) is at most about W times that: the run's own process and the cores' sharing take the
rest, and instructions per cycle differ between the two workloads (both near 1.0 here).

Exit 2 with a message when ``perf`` is missing or the kernel refuses the counter
(``perf_event_paranoid``, or a VM without a PMU); exit 1 when a child fails or the work does not
count above the set-up (a few tiny or undecodable documents).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

#: The child modes: the work measured, and the set-up subtracted from it.
MODES = ("stages-base", "stages", "jieba-base", "jieba")
#: ``perf stat`` events: user-space instructions retired, and cycles (for instructions per cycle).
EVENTS = "instructions:u,cycles:u"


class PerfUnavailable(RuntimeError):
    """``perf`` is not installed, or the kernel gives no instruction counter to this user."""


class TooLittleWork(ValueError):
    """The work of a mode did not count above its baseline (a corpus of a few tiny documents,
    or none that decodes): the set-up's own variation is tens of millions of instructions."""


def parse_perf_csv(text: str) -> dict[str, int]:
    """The counts of ``perf stat -x,`` output (one ``value,unit,event,...`` line per event;
    comment and empty lines ignored).

    Returns:
        ``{event: count}`` with the ``:u`` modifier dropped (``{"instructions": 1234, ...}``).

    Raises:
        PerfUnavailable: an event was ``<not supported>`` or ``<not counted>``.
    """
    counts: dict[str, int] = {}
    for line in text.splitlines():
        if not line.strip() or line.startswith("#"):
            continue
        fields = line.split(",")
        if len(fields) < 3:
            continue
        value, event = fields[0], fields[2].split(":")[0]
        if not value.isdigit():
            raise PerfUnavailable(f"perf could not count {fields[2]}: {value}")
        counts[event] = int(value)
    return counts


def count(cmd: Sequence[str], env: dict[str, str] | None = None) -> dict[str, int]:
    """Run ``cmd`` under ``perf stat -e`` :data:`EVENTS` (child processes included) and return its
    counts (:func:`parse_perf_csv`) and ``seconds`` (wall, for information).

    Raises:
        PerfUnavailable: no ``perf``, or no counter (the message says why).
        subprocess.CalledProcessError: ``cmd`` failed (its output is in the exception).
    """
    perf = shutil.which("perf")
    if perf is None:
        raise PerfUnavailable("perf is not installed (Debian: linux-perf)")
    with tempfile.NamedTemporaryFile("r", suffix=".csv") as out:
        t0 = time.perf_counter()
        done = subprocess.run([perf, "stat", "-x,", "-e", EVENTS, "-o", out.name, "--", *cmd],
                              env=env, capture_output=True)
        seconds = time.perf_counter() - t0
        text = Path(out.name).read_text()
    if done.returncode != 0 and not text.strip():  # perf itself refused (no counter for this user)
        raise PerfUnavailable(f"perf stat failed (exit {done.returncode}): "
                              f"{done.stderr.decode(errors='replace').strip()[-1000:]}")
    done.check_returncode()
    counts = parse_perf_csv(text)
    if "instructions" not in counts:
        raise PerfUnavailable(f"perf gave no instruction count: {text.strip()!r}")
    return {**counts, "seconds": round(seconds, 3)}


def _listing(corpus: Path, documents: int | None):
    from pipeline.config import Config
    from pipeline.ingest import list_corpus

    config = Config()
    listing, _ = list_corpus(corpus, config.ingest.extensions)
    return config, (listing if documents is None else listing.iloc[:documents]).reset_index(drop=True)


def child(mode: str, corpus: Path, documents: int | None) -> dict[str, Any]:
    """The work of one child process (see the module docstring); also run in-process by tests.

    Returns:
        ``{"files", "documents", "text_chars", "sections"}``: what the mode read and made
        (``sections`` only for ``stages``; 0 otherwise).
    """
    config, listing = _listing(corpus, documents)
    out = {"files": len(listing), "documents": 0, "text_chars": 0, "sections": 0}
    if mode.startswith("stages"):
        from pipeline.documents import warm_models
        from pipeline.executor import become_worker
        from pipeline.runner import process_files

        become_worker(warm_models, (config,))
        if mode == "stages":
            size = config.run.batch_size
            for start in range(0, len(listing), size):
                result = process_files(listing.iloc[start : start + size], config)
                out["documents"] += sum(f.n_documents for f in result.files)
                out["sections"] += sum(f.n_sections for f in result.files)
        return out
    import jieba

    from pipeline.ingest import read_documents

    texts = [row["text"] for path, abs_path in zip(listing["source_path"], listing["abs_path"], strict=True)
             for row in read_documents(path, abs_path) if row["text"]]
    jieba.lcut("预热")  # the dictionary, loaded in the baseline too
    out["documents"], out["text_chars"] = len(texts), sum(map(len, texts))
    if mode == "jieba":
        for text in texts:
            jieba.lcut(text)
    return out


def measure(corpus: Path, documents: int | None = None) -> dict[str, Any]:
    """Count the four children on ``corpus`` (its first ``documents`` listed files; all when None).

    Returns:
        ``{"corpus", "files", "documents", "text_chars", "sections", "counts": {mode: {event:
        count, "seconds"}}, "instructions": {"stages", "jieba"} (work minus baseline),
        "jieba_per_stages"}`` (the per-core ratio in instructions; > 1: the stages do less
        work than jieba on the same text).

    Raises:
        PerfUnavailable, subprocess.CalledProcessError: see :func:`count`.
        TooLittleWork: the stages' or jieba's work is not above its baseline.
    """
    env = {**os.environ, "PYTHONHASHSEED": "0", "TOKENIZERS_PARALLELISM": "false"}
    root = str(Path(__file__).resolve().parents[1])
    env["PYTHONPATH"] = root + os.pathsep + env.get("PYTHONPATH", "") if env.get("PYTHONPATH") else root
    counts, info = {}, {}
    for mode in MODES:
        with tempfile.NamedTemporaryFile("r", suffix=".json") as made:
            cmd = [sys.executable, "-m", "bench.instructions", str(corpus), "--child", mode, "--child-out", made.name]
            if documents is not None:
                cmd += ["--documents", str(documents)]
            counts[mode] = count(cmd, env)
            info[mode] = json.loads(Path(made.name).read_text())
    work = {name: counts[name]["instructions"] - counts[f"{name}-base"]["instructions"] for name in ("stages", "jieba")}
    if min(work.values()) <= 0:
        raise TooLittleWork(f"the work ({work}) is not above the set-up's own variation: count more documents")
    return {"corpus": str(corpus), "files": info["stages"]["files"], "documents": info["jieba"]["documents"],
            "text_chars": info["jieba"]["text_chars"], "sections": info["stages"]["sections"],
            "counts": counts, "instructions": work,
            "jieba_per_stages": round(work["jieba"] / work["stages"], 4) if work["stages"] > 0 else None}


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.instructions", description=__doc__.split("\n")[0])
    parser.add_argument("corpus", type=Path, help="corpus folder (e.g. a bench corpus of bench.generate)")
    parser.add_argument("--documents", type=int, default=None, help="only the first N listed files")
    parser.add_argument("--out", type=Path, default=None, help="also write the result as JSON here")
    parser.add_argument("--child", choices=MODES, help=argparse.SUPPRESS)
    parser.add_argument("--child-out", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.documents is not None and args.documents < 1:
        parser.error("--documents must be positive")
    if not args.corpus.is_dir():
        parser.error(f"{args.corpus}: not a folder")
    if args.child and args.child_out is None:
        parser.error("--child needs --child-out")
    if args.out is not None and not args.out.parent.is_dir():
        parser.error(f"--out {args.out}: no folder {args.out.parent}")
    if args.child:
        args.child_out.write_text(json.dumps(child(args.child, args.corpus, args.documents)))
        return 0
    if _listing(args.corpus, 1)[1].empty:
        from pipeline.config import SUPPORTED_SUFFIXES

        parser.error(f"{args.corpus}: no file the pipeline reads ({', '.join(SUPPORTED_SUFFIXES)})")
    try:
        result = measure(args.corpus, args.documents)
    except PerfUnavailable as exc:
        print(f"bench.instructions: {exc}", file=sys.stderr)
        return 2
    except TooLittleWork as exc:
        print(f"bench.instructions: {exc}", file=sys.stderr)
        return 1
    except subprocess.CalledProcessError as exc:
        print(f"bench.instructions: a child failed (exit {exc.returncode}):\n{exc.stderr.decode(errors='replace')[-4000:]}",
              file=sys.stderr)
        return 1
    if args.out is not None:
        args.out.write_text(json.dumps(result, indent=2) + "\n")
    w = result["instructions"]
    print(f"{result['files']} files, {result['documents']} documents, {result['sections']} sections: "
          f"stages {w['stages'] / 1e9:.1f} G instructions, jieba.lcut {w['jieba'] / 1e9:.1f} G; "
          f"jieba/stages per core {result['jieba_per_stages']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
