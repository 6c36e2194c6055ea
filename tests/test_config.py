"""Tests of pipeline.config: defaults, TOML layering, CLI-style overrides, validation, fingerprint.

Every configuration is built fresh (``Config()`` / ``load_config``) from TOML files written in
tmp_path; nothing module-level is changed.
"""

from __future__ import annotations

import dataclasses
import os
import re
from pathlib import Path

import pytest

from pipeline.config import EMBED_BACKENDS, TARGET_SCRIPTS, Config, apply_overrides, load_config
from pipeline.errors import ConfigError, PipelineError


def _toml(tmp_path: Path, text: str, name: str = "config.toml") -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


# --- defaults ---------------------------------------------------------------------------------


def test_defaults() -> None:
    config = load_config()
    assert config == Config()
    assert config.to_dict() == {
        "ingest": {"extensions": [".txt", ".md", ".html", ".htm", ".jsonl", ".csv", ".tsv", ".yml", ".yaml"]},
        "clean": {"min_topic_fit": 0.06, "byline_max_chars": 40},
        "normalize": {"target_script": "zh-Hans"},
        "extract": {"n_keywords": 8, "summary_max_chars": 400},
        "embed": {"backend": "use", "model": None, "batch_size": None, "device": None},
        "dedup": {"match_threshold": 0.55, "embed_weight": 0.5, "ann_min_sections": 20_000},
        "run": {"batch_size": 64, "quiet": False, "embedding_cache": True, "workers": os.cpu_count() or 1,
                "engine": "local", "ray_address": None, "max_failed": 0.0, "file_timeout": 120.0},
    }
    assert TARGET_SCRIPTS == ("zh-Hans", "zh-Hant", "zh-Hant-TW", "zh-Hant-HK", "zh-Hant-TW-x-phrases", "zh-Hant-HK-x-phrases")
    assert EMBED_BACKENDS == ("use", "sentence-transformers")


def test_defaults_are_not_shared_between_configs() -> None:
    a, b = Config(), Config()
    a.ingest.extensions.append(".rst")
    a.dedup.match_threshold = 0.9
    assert b.ingest.extensions == [".txt", ".md", ".html", ".htm", ".jsonl", ".csv", ".tsv", ".yml", ".yaml"]
    assert b.dedup.match_threshold == 0.55
    assert Config().ingest.extensions == [".txt", ".md", ".html", ".htm", ".jsonl", ".csv", ".tsv", ".yml", ".yaml"]


# --- TOML layering ----------------------------------------------------------------------------


def test_toml_overrides_one_key_and_keeps_the_rest(tmp_path: Path) -> None:
    config = load_config(_toml(tmp_path, '[normalize]\ntarget_script = "zh-Hant"\n'))
    assert config.normalize.target_script == "zh-Hant"
    expected = Config().to_dict()
    expected["normalize"]["target_script"] = "zh-Hant"
    assert config.to_dict() == expected


def test_toml_example_of_the_readme(tmp_path: Path) -> None:
    path = _toml(tmp_path, """
[normalize]
target_script = "zh-Hant"

[embed]
backend = "sentence-transformers"
model = "/models/paraphrase-multilingual-MiniLM-L12-v2"   # name or local path

[dedup]
match_threshold = 0.75

[ingest]
extensions = [".txt", ".md", ".markdown"]
""")
    config = load_config(path)
    assert config.normalize.target_script == "zh-Hant"
    assert (config.embed.backend, config.embed.model) == (
        "sentence-transformers", "/models/paraphrase-multilingual-MiniLM-L12-v2")
    assert config.dedup.match_threshold == 0.75
    assert config.ingest.extensions == [".txt", ".md", ".markdown"]
    assert config.embed.batch_size is None and config.run == Config().run


def test_cli_overrides_beat_file_values(tmp_path: Path) -> None:
    path = _toml(tmp_path, "[dedup]\nmatch_threshold = 0.9\nembed_weight = 0.3\n[run]\nbatch_size = 8\n")
    config = load_config(path, {"dedup": {"match_threshold": 0.7}, "run": {"quiet": True}})
    assert config.dedup.match_threshold == 0.7  # flag beats file
    assert config.dedup.embed_weight == 0.3  # file beats default
    assert config.run.batch_size == 8
    assert config.run.quiet is True


def test_int_for_float_key_is_stored_as_float(tmp_path: Path) -> None:
    one = load_config(_toml(tmp_path, "[dedup]\nmatch_threshold = 1\n"))
    one_point_zero = load_config(_toml(tmp_path, "[dedup]\nmatch_threshold = 1.0\n", "b.toml"))
    assert one.dedup.match_threshold == 1.0 and isinstance(one.dedup.match_threshold, float)
    assert one.fingerprint() == one_point_zero.fingerprint()


def test_apply_overrides_returns_the_config_in_place() -> None:
    config = Config()
    assert apply_overrides(config, {"extract": {"n_keywords": 3}}) is config
    assert config.extract.n_keywords == 3


# --- errors -----------------------------------------------------------------------------------


def test_unknown_table_lists_valid_tables(tmp_path: Path) -> None:
    with pytest.raises(ConfigError) as info:
        load_config(_toml(tmp_path, "[dedupe]\nmatch_threshold = 0.8\n"))
    assert str(info.value) == (
        "unknown table [dedupe]; valid tables: "
        "['clean', 'dedup', 'embed', 'extract', 'ingest', 'normalize', 'run']"
    )


def test_top_level_key_is_an_unknown_table(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"unknown table \[quiet\]"):
        load_config(_toml(tmp_path, "quiet = true\n"))


def test_table_name_with_a_value_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"\[run\] must be a table, got int"):
        load_config(_toml(tmp_path, "run = 5\n"))


def test_unknown_key_lists_valid_keys(tmp_path: Path) -> None:
    with pytest.raises(ConfigError) as info:
        load_config(_toml(tmp_path, "[embed]\nmodle = \"x\"\n"))
    message = str(info.value)
    assert message == "unknown key embed.modle; valid keys of [embed]: ['backend', 'batch_size', 'device', 'model']"
    assert isinstance(info.value, PipelineError)


def test_unknown_key_from_overrides() -> None:
    with pytest.raises(ConfigError, match=r"unknown key run\.verbose; valid keys of \[run\]: \['batch_size', 'embedding_cache', 'engine', 'file_timeout', 'max_failed', 'quiet', 'ray_address', 'workers'\]"):
        load_config(None, {"run": {"verbose": True}})


@pytest.mark.parametrize(
    ("toml", "message"),
    [
        ('[dedup]\nmatch_threshold = "high"\n', "dedup.match_threshold = 'high' has type str; expected float"),
        ("[dedup]\nmatch_threshold = true\n", "dedup.match_threshold = True has type bool; expected float"),
        ("[run]\nbatch_size = 1.5\n", "run.batch_size = 1.5 has type float; expected int"),
        ("[run]\nbatch_size = true\n", "run.batch_size = True has type bool; expected int"),
        ("[run]\nquiet = 1\n", "run.quiet = 1 has type int; expected bool"),
        ('[normalize]\ntarget_script = ["zh-Hant"]\n',
         "normalize.target_script = ['zh-Hant'] has type list; expected str"),
        ('[ingest]\nextensions = ".txt"\n', "ingest.extensions = '.txt' has type str; expected list[str]"),
        ('[ingest]\nextensions = [".txt", 1]\n',
         "ingest.extensions = ['.txt', 1] has type list; expected list[str]"),
        ("[embed]\nmodel = 5\n", "embed.model = 5 has type int; expected str | None"),
        ("[embed]\ndevice = false\n", "embed.device = False has type bool; expected str | None"),
    ],
)
def test_wrong_type(tmp_path: Path, toml: str, message: str) -> None:
    with pytest.raises(ConfigError) as info:
        load_config(_toml(tmp_path, toml))
    assert str(info.value) == message


def test_invalid_target_script_lists_options(tmp_path: Path) -> None:
    with pytest.raises(ConfigError) as info:
        load_config(_toml(tmp_path, '[normalize]\ntarget_script = "zh-TW"\n'))
    assert str(info.value) == "normalize.target_script = 'zh-TW'; valid options: ['zh-Hans', 'zh-Hant', 'zh-Hant-TW', 'zh-Hant-HK', 'zh-Hant-TW-x-phrases', 'zh-Hant-HK-x-phrases']"


def test_invalid_backend_lists_options() -> None:
    with pytest.raises(ConfigError) as info:
        load_config(None, {"embed": {"backend": "word2vec"}})
    assert str(info.value) == "embed.backend = 'word2vec'; valid options: ['use', 'sentence-transformers']"


def test_sentence_transformers_needs_a_model() -> None:
    with pytest.raises(ConfigError, match=r"needs embed\.model"):
        load_config(None, {"embed": {"backend": "sentence-transformers"}})
    config = load_config(None, {"embed": {"backend": "sentence-transformers", "model": "/models/x"}})
    assert config.embed.model == "/models/x"


@pytest.mark.parametrize(
    ("overrides", "message"),
    [
        ({"dedup": {"match_threshold": 1.5}}, "dedup.match_threshold = 1.5; must lie in [0, 1]"),
        ({"dedup": {"embed_weight": -0.1}}, "dedup.embed_weight = -0.1; must lie in [0, 1]"),
        ({"clean": {"min_topic_fit": float("nan")}}, "clean.min_topic_fit = nan; must lie in [0, 1]"),
        ({"run": {"batch_size": 0}}, "run.batch_size = 0; must be a positive integer"),
        ({"extract": {"n_keywords": -1}}, "extract.n_keywords = -1; must be a positive integer"),
        ({"ingest": {"extensions": ["txt"]}},
         "ingest.extensions has ['txt']; each must be a suffix with its dot, e.g. '.txt'"),
    ],
)
def test_out_of_range_values(overrides: dict, message: str) -> None:
    with pytest.raises(ConfigError) as info:
        load_config(None, overrides)
    assert str(info.value) == message


def test_bounds_are_inclusive() -> None:
    config = load_config(None, {"dedup": {"match_threshold": 0.0, "embed_weight": 1.0}, "run": {"batch_size": 1}})
    assert (config.dedup.match_threshold, config.dedup.embed_weight, config.run.batch_size) == (0.0, 1.0, 1)


def test_missing_file(tmp_path: Path) -> None:
    path = tmp_path / "nope.toml"
    with pytest.raises(ConfigError) as info:
        load_config(path)
    assert str(info.value) == f"configuration file {path} does not exist"


def test_invalid_toml(tmp_path: Path) -> None:
    path = _toml(tmp_path, "[dedup\nmatch_threshold = 0.8\n")
    with pytest.raises(ConfigError, match=r"is not valid TOML"):
        load_config(path)


def test_file_not_utf8(tmp_path: Path) -> None:
    path = tmp_path / "gbk.toml"
    path.write_bytes('[normalize]\ntarget_script = "简体"\n'.encode("gbk"))
    with pytest.raises(ConfigError, match=r"is not valid TOML"):
        load_config(path)


def test_folder_instead_of_file(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"cannot be read: \[Errno 21\] Is a directory"):
        load_config(tmp_path)


# --- fingerprint ------------------------------------------------------------------------------


def test_fingerprint_shape_and_stability() -> None:
    fp = Config().fingerprint()
    assert len(fp) == 16 and int(fp, 16) >= 0
    assert Config().fingerprint() == fp == load_config().fingerprint()


@pytest.mark.parametrize(
    "overrides",
    [
        {"normalize": {"target_script": "zh-Hant"}},
        {"dedup": {"match_threshold": 0.61}},
        {"embed": {"backend": "sentence-transformers", "model": "/models/x"}},
        {"extract": {"n_keywords": 5}},
        {"ingest": {"extensions": [".txt"]}},
        {"clean": {"min_topic_fit": 0.1}},
    ],
)
def test_fingerprint_changes_with_meaning(overrides: dict) -> None:
    assert load_config(None, overrides).fingerprint() != Config().fingerprint()


@pytest.mark.parametrize("overrides", [{"run": {"quiet": True}}, {"run": {"batch_size": 3}}])
def test_fingerprint_ignores_run_settings(overrides: dict) -> None:
    config = load_config(None, overrides)
    assert config != Config()
    assert config.fingerprint() == Config().fingerprint()


def test_to_dict_is_plain_data() -> None:
    config = Config()
    data = config.to_dict()
    data["ingest"]["extensions"].append(".rst")
    assert config.ingest.extensions == [".txt", ".md", ".html", ".htm", ".jsonl", ".csv", ".tsv", ".yml", ".yaml"]
    assert [f.name for f in dataclasses.fields(config)] == list(data)


@pytest.mark.parametrize(
    ("overrides", "message"),
    [
        ({"ingest": {"extensions": []}}, "ingest.extensions is empty"),
        ({"ingest": {"extensions": ["."]}}, "each must be a suffix with its dot"),
        ({"extract": {"summary_max_chars": 10**7}}, "at most 100000"),
        ({"embed": {"device": "cuda:7"}}, "apply to the 'sentence-transformers' backend only"),
        ({"embed": {"model": "some/model"}}, "apply to the 'sentence-transformers' backend only"),
    ],
)
def test_settings_that_would_do_nothing_or_break_are_refused(overrides, message) -> None:
    with pytest.raises(ConfigError, match=re.escape(message)):
        load_config(overrides=overrides)


@pytest.mark.parametrize("value", [-1, -0.5, float("nan")])
def test_a_negative_file_timeout_is_refused(value) -> None:
    with pytest.raises(ConfigError, match=r"run\.file_timeout = .*; must be 0 \(no limit\) or more seconds"):
        load_config(None, {"run": {"file_timeout": value}})
    assert load_config(None, {"run": {"file_timeout": 0}}).run.file_timeout == 0.0


@pytest.mark.parametrize("line", ["max_failed = nan", "max_failed = inf", "file_timeout = inf", "file_timeout = nan"])
def test_a_count_or_time_that_is_not_a_finite_number_is_a_configuration_error(tmp_path: Path, line: str) -> None:
    # (nan compares false to every bound: it passed the range checks and crashed the run at its end)
    with pytest.raises(ConfigError, match=line.split(" = ")[0]):
        load_config(_toml(tmp_path, f"[run]\n{line}\n"))
