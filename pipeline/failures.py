"""Acknowledged failures: which failed files a run had seen fail before, and whether the failures
make the exit code 1.

A failed file (a ``documents`` row with status ``error``: a file, or a line or row of a JSONL or
CSV file) is **known** when the previous published run failed on the same path with the same
file bytes (SHA-256 of the whole file; for a file that could not be read at all, both times
unreadable), else **new**. The manifest keeps the list (``failed``: ``path``, ``error_type``,
``file_sha256``, ``known``), which is what the next run compares with.

``run.max_failed`` (``--max-failed``) is how many failed files a run may have and still exit 0: a
count (an integer, default 0), or a fraction of the documents read when below 1 (0.05 = 5 %).
Known and new failures count alike; the summary tells them apart.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pandas as pd

from .ingest import source_sort_key


def failed_files(errors: pd.DataFrame, file_shas: Mapping[str, str | None],
                 previous: Mapping[str, Any] | None) -> list[dict[str, Any]]:
    """The run's failed files, in ``errors`` order.

    Args:
        errors: the ``errors`` table (``path``, ``error_type``, ...); ``EmptyDocument`` rows are
            not failures.
        file_shas: SHA-256 of each listed file's bytes (None when unreadable), by corpus path.
        previous: the previous published run's manifest, or None.

    Returns:
        one dict per failed file: ``path``, ``error_type``, ``file_sha256``, ``known`` (bool).
    """
    before = {(f.get("path"), f.get("file_sha256")) for f in (previous or {}).get("failed") or []
              if isinstance(f, dict)}
    failed = []
    for path, kind in zip(errors["path"], errors["error_type"], strict=True):
        if kind == "EmptyDocument":
            continue
        sha = file_shas.get(source_sort_key(path)[0])
        failed.append({"path": path, "error_type": kind, "file_sha256": sha, "known": (path, sha) in before})
    return failed


def too_many_failed(n_failed: int, n_documents: int, max_failed: float) -> bool:
    """Whether ``n_failed`` failed files exceed ``max_failed``: a count when it is 0 or at least 1,
    else a fraction of ``n_documents`` (the documents read, failed ones included)."""
    limit = max_failed * n_documents if 0 < max_failed < 1 else max_failed
    return n_failed > limit


def too_many_in_run(manifest: Mapping[str, Any], max_failed: float) -> bool:
    """:func:`too_many_failed` for a run's ``manifest`` (its ``status_counts``): the failed files
    against the documents read (every status but ``skipped``)."""
    status = manifest.get("status_counts") or {}
    read = sum(int(n) for s, n in status.items() if s != "skipped")
    return too_many_failed(int(status.get("error", 0)), read, max_failed)
