"""Size and opening time of ``report.html`` for a large run, from synthetic tables.

``python -m bench.report_scale --papers 104000 --documents 50000`` builds a papers table and a
documents table of that many rows (titles, Chinese titles, authors, venues, arXiv ids and source
URLs drawn from vocabularies with a fixed seed: the 50k-article bench corpus gave 104,251 papers,
``bench/results-50k-26526e4.json``), renders the report (:func:`pipeline.report.render_report`), writes it to a
temporary folder and opens it in headless Chromium (the driver of ``tests/test_report.py``).
Prints one JSON object: the file's size in bytes and MB, the seconds to render it in Python, and
in the browser the milliseconds from the start of navigation to the load event, to the papers
unpacked and to their table rendered, and what a search through the search box for the rarest
word of one title finds (the count line, and whether that title is among the rows shown).
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd

WORDS = ("learning", "neural", "networks", "language", "models", "large", "diffusion", "graph", "attention",
         "efficient", "scalable", "robust", "transformer", "reinforcement", "policy", "optimization", "vision",
         "image", "generation", "retrieval", "augmented", "sparse", "mixture", "experts", "training", "inference",
         "self-supervised", "contrastive", "representation", "multimodal", "reasoning", "chain", "thought",
         "benchmark", "evaluation", "alignment", "preference", "feedback", "human", "agents", "planning",
         "video", "3D", "scene", "reconstruction", "point", "cloud", "segmentation", "detection", "tracking",
         "speech", "recognition", "translation", "federated", "privacy", "differential", "causal", "discovery",
         "bayesian", "uncertainty", "calibration", "kernel", "methods", "stochastic", "gradient", "descent",
         "convergence", "theory", "bounds", "generalization", "adversarial", "examples", "certified", "defense")
GLUE = ("for", "with", "via", "of", "in", "and", "towards", "beyond", "under", "from")
SURNAMES = ("Wang", "Li", "Zhang", "Liu", "Chen", "Yang", "Huang", "Zhao", "Wu", "Zhou", "Smith", "Johnson",
            "Brown", "Garcia", "Miller", "Davis", "Kim", "Lee", "Park", "Nguyen", "Müller", "Schmidt", "Rossi",
            "Dubois", "Tanaka", "Suzuki", "Singh", "Kumar", "Cohen", "Levy")
GIVEN = ("Wei", "Jing", "Yu", "Hao", "Xin", "Lei", "Ming", "Anna", "John", "Maria", "David", "Sarah", "Ali",
         "Kenji", "Priya", "Noam", "Elena", "Lucas", "Sofia", "Omar", "Chen", "Yi", "Jun", "Tao", "Rui")
ZH = ("大型", "语言", "模型", "扩散", "图神经网络", "注意力", "高效", "可扩展", "鲁棒", "强化学习", "视觉", "生成",
      "检索", "增强", "稀疏", "专家", "训练", "推理", "对比", "表示", "多模态", "思维链", "评测", "对齐")
VENUES = ("NeurIPS", "ICML", "ICLR", "CVPR", "ICCV", "ECCV", "ACL", "EMNLP", "NAACL", "AAAI", "IJCAI", "KDD")
AWARDS = ("best_paper", "best_paper_runner_up", "outstanding_paper", "best_student_paper", "oral", "honorable_mention",
          "test_of_time", "best_demo", "spotlight", None)
HOSTS = ("www.jiqizhixin.com", "www.qbitai.com", "blog.example.org", "news.example.com", "zhuanlan.zhihu.com")


def synthetic_tables(n_papers: int, n_documents: int, seed: int = 0) -> tuple[pd.DataFrame, pd.DataFrame]:
    """``(papers, documents)``: synthetic tables with the report's columns (see the module doc)."""
    rng = np.random.default_rng(seed)
    doc_ids = [f"{k:016x}" for k in rng.choice(2**60, n_documents, replace=False)]
    has_url = rng.random(n_documents) < 0.6
    documents = pd.DataFrame({
        "doc_id": doc_ids,
        "source_path": [f"site{k % 40}/{2020 + k % 6}/article-{k}.txt" for k in range(n_documents)],
        "url": [f"https://{HOSTS[k % len(HOSTS)]}/articles/{k}.html" if u else None
                for k, u in zip(range(n_documents), has_url, strict=True)],
        "lang": rng.choice(["en", "zh-Hans", "zh-Hant"], n_documents),
        "status": "ok",
    })
    # a vocabulary of the field's words then 40,000 made-up ones, drawn with a Zipf law (exponent
    # 1.15): 1,080 real English paper titles (the gold files of the test and evaluation corpora)
    # have 3,186 distinct words and compress 2.9x with gzip; 1,080 of these titles have ~3,400 and
    # 3.0x, and the vocabulary keeps growing with the count of titles (~52,000 words at 104,000)
    # as a real one does, where a small vocabulary would flatter a word-coded title column
    syllables = [c + v for c in "bcdfghklmnprstvwz" for v in "aeiou"] + ["tion", "ing", "al", "er", "ic"]
    vocabulary = list(WORDS) + ["".join(rng.choice(syllables, int(rng.integers(2, 5)))) for _ in range(40_000)]
    # per paper, the shares of a 1k bench run's papers table: a Chinese title 8%, venue 99%, year 98%,
    # award ~90%, arXiv id ~70%, 0-6 authors, source documents ~4 on average (half of them 1 or 2)
    papers = []
    for _ in range(n_papers):
        words = [vocabulary[i] for i in (rng.zipf(1.15, rng.integers(5, 12)) - 1) % len(vocabulary)]
        words.insert(int(rng.integers(1, len(words))), GLUE[int(rng.integers(len(GLUE)))])
        title = " ".join(words).capitalize()
        n_docs = int(min(rng.zipf(2.0), 200))
        papers.append({
            "paper_id": f"p-{int(rng.integers(2**60)):015x}",
            "title": title,
            "title_zh": "".join(rng.choice(ZH, rng.integers(4, 9))) if rng.random() < 0.08 else None,
            "arxiv_id": f"{rng.integers(1501, 2513)}.{rng.integers(0, 99999):05d}" if rng.random() < 0.7 else None,
            "venue": VENUES[int(rng.integers(len(VENUES)))] if rng.random() < 0.99 else None,
            "year": int(rng.integers(2015, 2026)) if rng.random() < 0.98 else None,
            "award": AWARDS[int(rng.integers(len(AWARDS)))],
            "authors": [f"{GIVEN[int(rng.integers(len(GIVEN)))]} {SURNAMES[int(rng.integers(len(SURNAMES)))]}"
                        for _ in range(int(rng.integers(0, 7)))],
            "doc_ids": [doc_ids[int(i)] for i in rng.integers(0, n_documents, n_docs)],
            "n_mentions": n_docs + int(rng.integers(0, 2)),
            "n_sources": n_docs,
        })
    return pd.DataFrame(papers), documents


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.report_scale", description=__doc__)
    parser.add_argument("--papers", type=int, default=104_000)
    parser.add_argument("--documents", type=int, default=50_000)
    args = parser.parse_args(argv)
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
    from test_report import SEARCH, Chromium, chromium_binary  # the tests' browser driver

    from pipeline.report import render_report

    papers, documents = synthetic_tables(args.papers, args.documents)
    t0 = time.perf_counter()
    page = render_report({"papers": papers, "documents": documents}, {"corpus": "synthetic"})
    render_s = time.perf_counter() - t0
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "report.html"
        path.write_text(page, encoding="utf-8")
        browser = Chromium(chromium_binary(), Path(tmp) / "profile", Path(tmp) / "chromium.log")
        try:
            timing = ("JSON.stringify({load: performance.timing.loadEventEnd - performance.timing.navigationStart, "
                      "unpacked: performance.getEntriesByName('papers-unpacked')[0].startTime, "
                      "rendered: performance.getEntriesByName('papers-rendered')[0].startTime})")
            title = papers["title"].iloc[len(papers) // 2]
            lowered = papers["title"].str.lower()
            word = min(title.split(), key=lambda w: lowered.str.contains(w.lower(), regex=False).sum())  # its rarest
            search = f"(() => {{ return {SEARCH % json.dumps(word)}" \
                     f".then(r => JSON.stringify({{info: JSON.parse(r).info, found: JSON.parse(r).rows" \
                     f".some(row => row.includes({json.dumps(title)}))}})); }})()"
            opened, _ = browser.open(path.as_uri(), actions=(timing, search))
        finally:
            browser.close()
    times, found = json.loads(opened["actions"][0]), json.loads(opened["actions"][1])
    print(json.dumps({"papers": len(papers), "documents": len(documents), "bytes": len(page.encode("utf-8")),
                      "mb": round(len(page.encode("utf-8")) / 1e6, 2), "render_s": round(render_s, 2),
                      "load_ms": times["load"], "table_unpacked_ms": round(times["unpacked"]),
                      "table_rendered_ms": round(times["rendered"]),
                      "search": word, "search_info": found["info"], "search_found_title": found["found"],
                      "table_state": opened["ready"], "errors": opened["errors"]}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
