"""Tests of pipeline.normalize with the real OpenCC dictionaries (no mocks).

Expected conversions are what ``opencc-python-reimplemented`` really returns; where OpenCC's
choice differs from common Taiwan usage, or where plain OpenCC misfires, a comment says so.
"""

from __future__ import annotations

import os
from pathlib import Path

import pandas as pd
import pytest
from opencc import OpenCC

from pipeline.config import Config
from pipeline.errors import StageInputError
from pipeline.normalize import STAGE, detect_script, normalize_sections, script_counts, to_script, to_target

SEEDS_DIR = Path(__file__).resolve().parents[2] / "shared" / "corpora" / "seeds"


def _read_seed(prefix: str) -> str:
    """The seed article whose file name starts with ``prefix`` (skip, or fail under CI, if absent)."""
    paths = sorted(SEEDS_DIR.glob(f"{prefix}_*.txt")) if SEEDS_DIR.is_dir() else []
    if not paths:
        message = f"seed article {prefix}_*.txt not found in {SEEDS_DIR}"
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)
    return paths[0].read_text(encoding="utf-8")


@pytest.fixture(scope="module")
def hans_seed() -> str:
    """Seed 000: a Simplified Chinese report (机器之心) on the ICML 2025 awards."""
    return _read_seed("000")


@pytest.fixture(scope="module")
def hant_seed() -> str:
    """Seed 003: a Traditional Chinese (Taiwan usage) digest of NeurIPS/ICML 2025 papers."""
    return _read_seed("003")


def _char_diffs(a: str, b: str) -> list[tuple[str, str]]:
    assert len(a) == len(b)
    return [(x, y) for x, y in zip(a, b, strict=True) if x != y]


# --- detect_script ---------------------------------------------------------------------------


def test_detect_script_on_seeds(hans_seed: str, hant_seed: str) -> None:
    assert detect_script(hans_seed) == "zh-Hans"
    assert detect_script(hant_seed) == "zh-Hant"


def test_seeds_carry_few_stray_characters(hans_seed: str, hant_seed: str) -> None:
    # The numbers quoted for MIXED_MIN_SHARE: real Traditional text holds a few Simplified forms.
    hant = script_counts(hant_seed)
    assert hant.hans == 3 and hant.hant == 7548
    hans = script_counts(hans_seed)
    assert hans.hant == 0 and hans.hans == 996


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("本文提出了一种新的方法", "zh-Hans"),
        ("本文提出了一種新的方法", "zh-Hant"),
        ("We propose a new estimator for score matching with missing data.", "en"),
        ("12345 !!", "und"),
        ("", "und"),
        ("📄 🔗 2025-07-14", "und"),
        ("ひらがなだけ", "und"),
        # No script-specific character at all: the documented default.
        ("中文", "zh-Hans"),
        # 台, 里 are shared by both scripts (HKVariants, STPhrases' 公里); 灣 decides.
        ("台灣的公里", "zh-Hant"),
        # Few Han characters among many Latin letters (7 % < ZH_MIN_HAN_SHARE).
        ("The award went to 南京大学 researchers for their work on diffusion models.", "en"),
        # A Chinese label with a URL and an English title stays Chinese (12 % Han).
        ("論文連結：https://arxiv.org/abs/2502.13228v2 📄 Score Matching", "zh-Hant"),
        # Both Chinese scripts substantially present (6 specific characters each).
        ("这个模型的训练数据。這個模型的訓練數據。", "mixed"),
    ],
)
def test_detect_script_short_strings(text: str, expected: str) -> None:
    assert detect_script(text) == expected


def test_traditional_paragraph_with_stray_simplified_characters() -> None:
    # A sentence of seed 003 with two characters replaced by their Simplified forms (学, 动).
    text = "過去數年，規模化深度学習模型的效果顯著提升，推动業界與學術界持續擴增模型大小。"
    counts = script_counts(text)
    assert counts.hans == 2
    assert detect_script(text) == "zh-Hant"


def test_simplified_paragraph_with_stray_traditional_character() -> None:
    text = "近年来，掩码扩散模型逐渐崭露頭角。与自回归模型相比，在训练时通过牺牲复杂性来换取推理时的灵活性。"
    assert script_counts(text).hant == 1
    assert detect_script(text) == "zh-Hans"


def test_shared_characters_count_for_neither_script() -> None:
    # 干 (干擾), 里 (公里), 后 (皇后) are standard in Traditional text too; 种 is Simplified only.
    assert script_counts("干里后").hans == 0
    assert script_counts("种").hans == 1
    assert script_counts("種").hant == 1


# --- to_script -------------------------------------------------------------------------------


def test_to_script_passes_non_han_text_through() -> None:
    # t2s is character-level: 連結 becomes 连结 (Mainland usage would say 链接; OpenCC's
    # t2s has no such vocabulary conversion, only tw2sp would).
    text = "論文連結：https://arxiv.org/abs/2502.13228v2 📄 Score Matching"
    assert to_script(text, "zh-Hans") == "论文连结：https://arxiv.org/abs/2502.13228v2 📄 Score Matching"
    text = "论文链接：https://arxiv.org/abs/2502.13228v2 📄 Score Matching 2025，ＧＰＴ－４"
    assert (
        to_script(text, "zh-Hant")
        == "論文鏈接：https://arxiv.org/abs/2502.13228v2 📄 Score Matching 2025，ＧＰＴ－４"
    )


def test_to_script_without_han_is_identity() -> None:
    text = "Score Matching with Missing Data — arXiv:2506.00557 ✓ 🏆 café"
    assert to_script(text, "zh-Hans") == text
    assert to_script(text, "zh-Hant") == text
    assert to_script("", "zh-Hant") == ""


@pytest.mark.parametrize("target", ["zh-Hans", "zh-Hant"])
def test_to_script_is_idempotent_on_seeds(hans_seed: str, hant_seed: str, target: str) -> None:
    for seed in (hans_seed, hant_seed):
        once = to_script(seed, target)
        assert to_script(once, target) == once


def test_simplified_seed_unchanged_by_zh_hans(hans_seed: str) -> None:
    assert to_script(hans_seed, "zh-Hans") == hans_seed


def test_traditional_seed_changes_only_stray_characters_under_zh_hant(hant_seed: str) -> None:
    # Only the three stray Simplified characters of the seed are converted.
    assert _char_diffs(hant_seed, to_script(hant_seed, "zh-Hant")) == [
        ("杠", "槓"),
        ("务", "務"),
        ("优", "優"),
    ]


def test_plain_opencc_s2t_misfires_on_traditional_text(hant_seed: str) -> None:
    # Why to_script leaves runs that are already Traditional alone: plain s2t on seed 003
    # changes 60 characters. Most are OpenCC-standard variants of Taiwan forms (分布 -> 分佈
    # 27x, 群 -> 羣 18x, 平台 -> 平臺), some are wrong. The phrase table is keyed by Simplified
    # text: in 證明了 only its entry 明了 -> 明瞭 matches (the guard entry 证明了 -> 證明了 is
    # keyed in Simplified), and in 干擾 no entry matches (only 干扰 -> 干擾 exists), so the
    # character table's first choice, 干 -> 幹, applies.
    s2t = OpenCC("s2t")
    diffs = _char_diffs(hant_seed, s2t.convert(hant_seed))
    assert len(diffs) == 60
    assert ("布", "佈") in diffs and ("群", "羣") in diffs
    assert s2t.convert("證明了") == "證明瞭"  # wrong: 了 is the aspect particle here
    assert s2t.convert("干擾") == "幹擾"  # wrong: 干擾 is the Traditional word
    assert to_script("證明了", "zh-Hant") == "證明了"
    assert to_script("干擾", "zh-Hant") == "干擾"


def test_to_script_equals_opencc_on_han_runs(hans_seed: str, hant_seed: str) -> None:
    # Converting Han runs only loses nothing against OpenCC on the whole text.
    assert to_script(hans_seed, "zh-Hant") == OpenCC("s2t").convert(hans_seed)
    # t2s needs a second pass on seed 003: TSPhrases' surname entry 於單 matches across the
    # word boundary in 相較於單純 and keeps 於; to_script repeats until nothing changes.
    t2s = OpenCC("t2s")
    assert t2s.convert("相較於單純") == "相较於单纯"
    assert to_script("相較於單純", "zh-Hans") == "相较于单纯"
    assert to_script(hant_seed, "zh-Hans") == t2s.convert(t2s.convert(hant_seed))


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("头发", "頭髮"),
        ("理发", "理髮"),
        ("发明", "發明"),
        ("皇后", "皇后"),
        ("以后", "以後"),
        ("干净", "乾淨"),
        ("干部", "幹部"),
        ("若干", "若干"),
        # OpenCC's standard picks 瞭解; Taiwan writes 了解 as well (both accepted there).
        ("了解", "瞭解"),
        # Wrong, and from Simplified input: STPhrases' 明了 -> 明瞭 fires where 了 is the aspect
        # particle; OpenCC guards 证明了 and 说明了 with their own entries, not 阐明了.
        ("阐明了", "闡明瞭"),
        ("证明了", "證明了"),
        # OpenCC-standard forms, not Taiwan's: 喫 (Taiwan 吃), 麪 (Taiwan 麵), 爲 (Taiwan 為).
        ("吃饭", "喫飯"),
        ("面条", "麪條"),
        ("因为", "因爲"),
    ],
)
def test_s2t_one_to_many_characters_in_context(text: str, expected: str) -> None:
    assert to_script(text, "zh-Hant") == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [("乾淨", "干净"), ("乾隆", "乾隆"), ("著作", "著作"), ("頭髮", "头发"), ("後來", "后来")],
)
def test_t2s_in_context(text: str, expected: str) -> None:
    assert to_script(text, "zh-Hans") == expected


def test_to_script_rejects_unknown_target() -> None:
    with pytest.raises(ValueError, match="zh-Hans"):
        to_script("中文", "zh-TW")


# --- to_target -------------------------------------------------------------------------------


def test_to_target_keeps_the_kind_of_value() -> None:
    assert to_target(None, "zh-Hans") is None
    assert to_target("擴散模型", "zh-Hans") == "扩散模型"
    assert to_target(["擴散模型", "score matching"], "zh-Hans") == ["扩散模型", "score matching"]
    assert to_target(("擴散", "模型"), "zh-Hans") == ("扩散", "模型")
    assert to_target([], "zh-Hant") == []
    with pytest.raises(TypeError):
        to_target(3, "zh-Hans")  # type: ignore[call-overload]
    with pytest.raises(TypeError):
        to_target(["ok", None], "zh-Hans")  # type: ignore[list-item]


# --- the stage -------------------------------------------------------------------------------


def _sections() -> pd.DataFrame:
    return pd.DataFrame(
        {
            "doc_id": ["a", "b", "c", "d"],
            "text": [
                "本文提出了一种新的扩散模型训练方法。",
                "本文提出了一種新的擴散模型訓練方法。",
                "We propose a new training method for diffusion models.",
                "🔗 2502.13228",
            ],
        },
        index=[10, 11, 12, 13],
    )


def test_stage_adds_lang_and_text_norm_and_keeps_text() -> None:
    batch = _sections()
    original = batch.copy()
    out = STAGE(batch, Config())
    pd.testing.assert_frame_equal(batch, original)  # input not mutated
    assert list(out.columns) == ["doc_id", "text", "lang", "text_norm"]
    assert list(out.index) == [10, 11, 12, 13]
    pd.testing.assert_series_equal(out["text"], original["text"])
    assert out["lang"].tolist() == ["zh-Hans", "zh-Hant", "en", "und"]
    assert out["text_norm"].tolist() == [
        "本文提出了一种新的扩散模型训练方法。",
        "本文提出了一种新的扩散模型训练方法。",
        "We propose a new training method for diffusion models.",
        "🔗 2502.13228",
    ]


def test_stage_follows_configured_target() -> None:
    config = Config()
    config.normalize.target_script = "zh-Hant"
    out = normalize_sections(_sections(), config)
    assert out["text_norm"].tolist()[:2] == ["本文提出了一種新的擴散模型訓練方法。"] * 2


def test_stage_on_empty_batch() -> None:
    out = STAGE(pd.DataFrame({"text": pd.Series([], dtype=object)}), Config())
    assert list(out.columns) == ["text", "lang", "text_norm"] and len(out) == 0


def test_stage_errors() -> None:
    with pytest.raises(StageInputError, match="text"):
        STAGE(pd.DataFrame({"body": ["中文"]}), Config())
    with pytest.raises(TypeError, match="row 1"):
        STAGE(pd.DataFrame({"text": ["中文", None]}), Config())
