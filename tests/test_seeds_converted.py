"""Dedup on the seeds stays perfect when one seed file is converted to the other script and saved
in a legacy encoding before the run (issue 5 acceptance).

Gold clustering: two sections are the same paper exactly when their gold titles fold to the same
key (tests/gold/seeds.json lists every section's title; the seeds' 15 papers have distinct titles).
"""

from __future__ import annotations

import codecs
from pathlib import Path

import pytest

from evaluation.evaluate_dedup import score_clusters
from pipeline.config import load_config
from pipeline.fields import fold_title
from pipeline.normalize import to_script
from pipeline.runner import run

from conftest import load_gold, require_seeds

GOLD = load_gold("seeds.json")
SIMPLIFIED, TRADITIONAL = "000_2b21ae29ba820db5.txt", "003_2bae7e6301a58560.txt"

# (file converted, target script, encoding of the written file)
VARIANTS = [
    (TRADITIONAL, "zh-Hans", "gb18030"),
    (SIMPLIFIED, "zh-Hant-TW", "big5"),
    (SIMPLIFIED, "zh-Hant", "utf-16"),
    (TRADITIONAL, "zh-Hans", "utf-8"),
]

#: Supersets that decode the same bytes identically (Big5-HKSCS extends Big5; a BOM-marked
#: UTF-16 file reads as utf-16 either way).
ACCEPTED_READINGS = {("big5", "big5hkscs"), ("utf-16", "utf-16-le")}


@pytest.mark.parametrize(("converted", "target", "encoding"), VARIANTS)
def test_seed_dedup_is_exact_after_script_and_encoding_conversion(tmp_path: Path, use_embedder, converted: str,
                                                                   target: str, encoding: str) -> None:
    seeds = require_seeds()
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    for name in (SIMPLIFIED, TRADITIONAL):
        text = (seeds / name).read_text(encoding="utf-8")
        if name == converted:
            (corpus / name).write_bytes(to_script(text, target).encode(encoding))
        else:
            (corpus / name).write_text(text, encoding="utf-8")
    result = run(corpus, tmp_path / "out", load_config(), embedder=use_embedder, progress=False)
    docs = result.frames["documents"].set_index("source_path")
    assert set(docs["status"]) == {"ok"}
    read_as = codecs.lookup(docs.loc[converted, "encoding"]).name
    assert read_as == codecs.lookup(encoding).name or (encoding, read_as) in ACCEPTED_READINGS, read_as

    sections = result.frames["sections"]
    path_of = dict(zip(result.frames["documents"]["doc_id"], result.frames["documents"]["source_path"], strict=True))
    gold_labels, predicted = [], []
    for name in (SIMPLIFIED, TRADITIONAL):
        got = sections[sections["doc_id"].map(path_of) == name].sort_values("ordinal")
        expected = GOLD["sections_by_file"][name]
        assert [fold_title(t) for t in got["title"]] == [fold_title(e["title"]) for e in expected], name
        gold_labels += [fold_title(e["title"]) for e in expected]
        predicted += got["paper_id"].tolist()
    scores = score_clusters(gold_labels, predicted)
    assert (scores["pairwise_precision"], scores["pairwise_recall"]) == (1.0, 1.0)
    assert len(result.frames["papers"]) == GOLD["papers"] == 15
