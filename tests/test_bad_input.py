"""Hand-made bad and odd input: the layouts and bytes a tester fed the pipeline, each through the
real segmenter and extractor (:func:`pipeline.segment.segment_document`) or the real run
(:func:`pipeline.run`), asserting what comes out."""

from __future__ import annotations

import os
import random
from pathlib import Path

import pandas as pd
import pytest

import pipeline
from pipeline.clean import find_dropped
from pipeline.config import Config
from pipeline.extract import split_heading_title
from pipeline.segment import segment_document


def titles(text: str) -> list[str | None]:
    """The paper title of each section the segmenter cuts ``text`` into."""
    result = segment_document(text, find_dropped(text, Config()))
    return [split_heading_title(s["heading"])[0] for s in result["sections"]]


def test_random_bytes_are_a_binary_content_error_row_and_the_run_leaves_the_environment_alone(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE"):
        monkeypatch.delenv(name, raising=False)  # the caller sets neither
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    (corpus / "random.txt").write_bytes(random.Random(7).randbytes(4000))
    (corpus / "a.md").write_text(
        "- [Denoising Diffusion Probabilistic Models](https://arxiv.org/abs/2006.11239), NeurIPS 2020\n",
        encoding="utf-8")
    before = dict(os.environ)
    result = pipeline.run(corpus, tmp_path / "out", {"run": {"workers": 1}})
    assert dict(os.environ) == before  # nothing added (HF_HUB_OFFLINE ...), nothing changed
    assert result.exit_code == 1 and result.failed_files == 1
    errors = pd.read_parquet(result.tables["errors"])
    assert errors.to_dict("records") == [{
        "path": "random.txt", "stage": "ingest", "error_type": "BinaryContent",
        "message": "could not decode random.txt: BinaryContentError: no character encoding decodes these bytes "
                   "(binary content, not text)"}]
    papers = pd.read_parquet(result.tables["papers"])
    assert papers["title"].tolist() == ["Denoising Diffusion Probabilistic Models"]
