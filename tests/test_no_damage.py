"""No damage (issue 41): real articles already in a target's standard come back unchanged.

Simplified articles of the real-world corpus (``tests/fixtures/real``, gold ``"language":
"zh-Hans"``) and the Simplified seeds go to ``zh-Hans`` unchanged. Traditional (Taiwan) articles
and seeds go to ``zh-Hant-TW`` changing only stray Simplified-only characters (characters
:func:`pipeline.normalize.script_counts` counts as Simplified-specific): every changed stretch
of the output starts from such characters alone."""

from __future__ import annotations

import json
from pathlib import Path

from cydifflib import SequenceMatcher  # difflib's algorithm in Cython: the same opcodes, faster

from pipeline.decoding import decode
from pipeline.normalize import detect_script, script_counts, to_script

from conftest import require_seeds

REAL = Path(__file__).parent / "fixtures" / "real"


def _real_articles(language: str) -> list[tuple[str, str]]:
    articles = []
    for gold in sorted(REAL.glob("*/*/gold.json")):
        for name, entry in json.loads(gold.read_text(encoding="utf-8"))["files"].items():
            if entry["language"] == language:
                path = gold.parent / name
                text = decode(path.read_bytes(), markup=path.suffix in (".html", ".htm")).text
                articles.append((f"{gold.parent.parent.name}/{gold.parent.name}/{name}", text))
    return articles


def _seed_articles(script: str) -> list[tuple[str, str]]:
    out = []
    for path in sorted(require_seeds().iterdir()):
        if path.is_file():
            text = decode(path.read_bytes()).text
            if detect_script(text) == script:
                out.append((path.name, text))
    return out


def _damage(text: str, target: str) -> list[tuple[str, str]]:
    """Changed stretches ``(before, after)`` whose source holds no Simplified-only character: a
    stretch with one is Simplified text ("丰满" in a Simplified spam line of a Traditional page),
    whose shared characters convert with it."""
    out = to_script(text, target)
    if out == text:
        return []
    matcher = SequenceMatcher(None, text, out, autojunk=False)
    return [
        (text[i1:i2], out[j1:j2]) for op, i1, i2, j1, j2 in matcher.get_opcodes()
        if op != "equal" and (i1 == i2 or all(script_counts(ch).hans == 0 for ch in text[i1:i2]))
    ]


def test_simplified_real_articles_and_seeds_unchanged_under_zh_hans() -> None:
    articles = _real_articles("zh-Hans") + _seed_articles("zh-Hans")
    assert len(articles) >= 10
    changed = {name: to_script(text, "zh-Hans") != text for name, text in articles}
    assert not any(changed.values()), [name for name, c in changed.items() if c]


def test_traditional_real_articles_and_seeds_change_only_simplified_characters_under_zh_hant_tw() -> None:
    articles = _real_articles("zh-Hant") + _seed_articles("zh-Hant")
    assert len(articles) >= 3
    damage = {name: d for name, text in articles if (d := _damage(text, "zh-Hant-TW"))}
    # The changes left are upstream's Taiwan standard, not damage by its own definition:
    # TWVariants writes 梁 for 樑 and 汙 for 污, and OpenCC's testcases.json expects t2tw to turn
    # 剛構式橋樑 into 剛構式橋梁; a correction entry (桥梁/橋樑) takes t2tw below the 97 %
    # conformance floor.
    assert damage == {"003_2bae7e6301a58560.txt": [("樑", "梁")],
                      "dev/h24-hsiehchenwei-archaeology-zhhant/ATTRIBUTION.md": [("污", "汙")]}
