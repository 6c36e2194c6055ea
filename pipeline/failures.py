"""Acknowledged failures: which failed files failed before, and whether failures make the exit code 1.

A failed file (a ``documents`` row with status ``error``) is **known** when the previous published
run failed on the same path with the same bytes (SHA-256; or unreadable both times), else
**new**; the manifest's ``failed`` list (``path``, ``error_type``, ``file_sha256``, ``known``) is
compared next run. ``run.max_failed`` is a count, or below 1 a fraction of the documents read;
known and new failures count alike.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pandas as pd

from .ingest import source_sort_key


def failed_files(errors: pd.DataFrame, file_shas: Mapping[str, str | None],
                 previous: Mapping[str, Any] | None) -> list[dict[str, Any]]:
    """The run's failed files, in ``errors`` order (``EmptyDocument`` rows are not failures).

    Args:
        file_shas: SHA-256 of each listed file (None when unreadable), by corpus path.
        previous: the previous published run's manifest, or None.

    Returns a dict per failed file: ``path``, ``error_type``, ``file_sha256``, ``known`` (bool).
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
    """Whether ``n_failed`` exceeds ``max_failed``: a count when 0 or at least 1, else a fraction of
    ``n_documents``."""
    limit = max_failed * n_documents if 0 < max_failed < 1 else max_failed
    return n_failed > limit


def too_many_in_run(manifest: Mapping[str, Any], max_failed: float) -> bool:
    """:func:`too_many_failed` from a manifest's ``status_counts`` (documents read: all but ``skipped``)."""
    status = manifest.get("status_counts") or {}
    read = sum(int(n) for s, n in status.items() if s != "skipped")
    return too_many_failed(int(status.get("error", 0)), read, max_failed)
