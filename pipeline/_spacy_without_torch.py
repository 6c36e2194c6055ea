"""Imported before spaCy: thinc imports torch when installed, though no stage uses it, costing
every process seconds and memory (bench/README.md). thinc is imported with
``sys.modules["torch"] = None`` (https://docs.python.org/3/reference/import.html#the-module-cache),
then the entry is removed. Nothing happens when torch or thinc is already imported; import torch
before ``pipeline`` if thinc's torch layers are needed in the process.
"""

from __future__ import annotations

import sys


def _import_thinc_without_torch() -> None:
    if "torch" in sys.modules or "thinc" in sys.modules:
        return
    sys.modules["torch"] = None  # type: ignore[assignment]
    try:
        import thinc.compat  # noqa: F401
    finally:
        if sys.modules.get("torch", ...) is None:
            del sys.modules["torch"]


_import_thinc_without_torch()
