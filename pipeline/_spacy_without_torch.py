"""Imported before spaCy, by :mod:`pipeline.nlp`: spaCy's machine-learning library, thinc, imports
torch at its own import when torch is installed (``thinc.compat``: ``try: import torch``), and
no stage uses it: the pipelines are ``spacy.blank`` ones with rule-based components. torch is
installed for the sentence-transformers embedder only, and importing it costs every process
seconds and memory (bench/README.md).

So thinc is imported here with ``torch`` hidden: ``sys.modules["torch"] = None`` makes
``import torch`` raise ``ModuleNotFoundError`` (the import system's documented behaviour for a
``None`` entry, https://docs.python.org/3/reference/import.html#the-module-cache), thinc records
that it has no torch, and the entry is removed again, so a later ``import torch`` (the
sentence-transformers backend) imports it as usual. When torch or thinc is already imported,
nothing is done. The effects outside this package: in the same process, thinc's torch layers
(e.g. ``spacy-transformers`` pipelines) then find no torch; and another thread that imports
torch during those milliseconds gets ``ModuleNotFoundError``. Import torch before ``pipeline``
to avoid both.
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
