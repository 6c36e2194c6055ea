"""Imported before spaCy (by :mod:`pipeline.nlp`, :mod:`pipeline.keywords`,
:mod:`pipeline.yake_port`): thinc imports torch at its own import when torch is installed
(``thinc.compat``), though no stage uses it (spaCy's English tokenizer and stop-word lists only);
importing torch costs every process seconds and memory (bench/README.md).

So thinc is imported with ``sys.modules["torch"] = None`` (``import torch`` then raises
``ModuleNotFoundError``: https://docs.python.org/3/reference/import.html#the-module-cache), and
the entry is removed again so a later ``import torch`` works. Nothing is done when torch or
thinc is already imported. Side effects: thinc's torch layers find no torch in this process, and
another thread importing torch meanwhile fails; import torch before ``pipeline`` to avoid both.
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
