"""The one configuration object: shipped defaults, optional TOML overrides, then CLI flags.

A user file overrides only the keys it sets (trafilatura's ``settings.cfg`` layering); unknown
tables or keys are errors (as spaCy's ``extra="forbid"``), so a typo never falls back silently.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import sys
import typing
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

from .errors import ConfigError

TEXT_SUFFIXES = (".txt", ".md")
HTML_SUFFIXES = (".html", ".htm")
JSONL_SUFFIXES = (".jsonl",)
CSV_SUFFIXES = (".csv", ".tsv")
YAML_SUFFIXES = (".yml", ".yaml")
#: Suffixes of files of many records, a document each (``feed.jsonl#3``).
RECORD_SUFFIXES = (*JSONL_SUFFIXES, *CSV_SUFFIXES, *YAML_SUFFIXES)
#: Every suffix ingest knows how to read (lower case, with the dot).
SUPPORTED_SUFFIXES = (*TEXT_SUFFIXES, *HTML_SUFFIXES, *RECORD_SUFFIXES)
#: Scripts ``text_norm`` and Chinese fields can be written in (BCP 47): Simplified, Traditional
#: (OpenCC standard), Taiwan / Hong Kong (``s2tw`` / ``s2hk``), with regional vocabulary
#: ``-x-phrases`` (``s2twp`` / ``s2hkp``). See :func:`pipeline.normalize.to_script`.
TARGET_SCRIPTS = ("zh-Hans", "zh-Hant", "zh-Hant-TW", "zh-Hant-HK", "zh-Hant-TW-x-phrases", "zh-Hant-HK-x-phrases")
#: Longest summary a user may ask for, in characters (spaCy refuses texts over 1,000,000).
MAX_SUMMARY_CHARS = 100_000
EMBED_BACKENDS = ("use", "sentence-transformers")
#: Where the per-document stages run (``run.engine``): this machine, or Ray actors.
ENGINES = ("local", "ray")


@dataclass
class IngestConfig:
    """Which files ingest reads: ``extensions``, lower-case suffixes (others skipped; unknown ones
    read as plain text, :mod:`pipeline.formats`)."""

    extensions: list[str] = field(default_factory=lambda: list(SUPPORTED_SUFFIXES))


@dataclass
class CleanConfig:
    """Clean thresholds (:mod:`pipeline.clean`).

    Attributes:
        min_topic_fit: a trailing block whose topic fit (cosine of bigram profiles, 0..1) is
            below this is dropped as unrelated.
        byline_max_chars: the longest line that can be a byline.
    """

    min_topic_fit: float = 0.06
    byline_max_chars: int = 40


@dataclass
class NormalizeConfig:
    """``target_script``: BCP 47 tag that ``text_norm`` and Chinese fields are written in."""

    target_script: str = "zh-Hans"


@dataclass
class ExtractConfig:
    """``n_keywords``: keywords kept per section; ``summary_max_chars``: longest summary, cut at a
    sentence boundary."""

    n_keywords: int = 8
    summary_max_chars: int = 400


@dataclass
class EmbedConfig:
    """Sentence-embedding backend used by dedup.

    Attributes:
        backend: ``"use"`` (offline default) or ``"sentence-transformers"``.
        model: model name or local path for sentence-transformers.
        batch_size: texts per encode call; None: automatic (:mod:`pipeline.embed`).
        device: torch device for sentence-transformers (None: GPU when present).
    """

    backend: str = "use"
    model: str | None = None
    batch_size: int | None = None
    device: str | None = None


@dataclass
class DedupConfig:
    """Dedup scoring and clustering.

    Attributes:
        match_threshold: lowest average-linkage score at which two clusters merge (0..1).
        embed_weight: weight of the embedding cosine in the score; the rest is title similarity.
        ann_min_sections: rows from which nearest neighbours come from an approximate faiss
            index instead of an exact search.
    """

    match_threshold: float = 0.55
    embed_weight: float = 0.5
    ann_min_sections: int = 20_000


def default_workers() -> int:
    """Worker processes by default: every core (``os.cpu_count()``; 1 when unknown)."""
    return os.cpu_count() or 1


@dataclass
class RunConfig:
    """How the runner behaves; changes nothing a run writes, so outside :meth:`Config.fingerprint`.

    Attributes:
        batch_size: documents per batch through the per-document stages.
        quiet: no progress bars or summary.
        embedding_cache: keep embeddings in ``<out>/.pipeline/cache/embeddings.sqlite``.
        workers: processes for the per-document stages and USE embedding; 1 = in-process;
            default every core. With ``engine = "ray"`` locally: the CPUs Ray may use.
        engine: ``"local"`` (:mod:`pipeline.executor`) or ``"ray"`` (:mod:`pipeline.engine_ray`).
        ray_address: an existing Ray cluster's address; None: ``RAY_ADDRESS``, else a local one.
        max_failed: failed files a run may have and exit 0: a count, or below 1 a fraction of
            the documents (:mod:`pipeline.failures`).
        file_timeout: wall seconds per file (per 4 MiB for larger files) before it becomes a
            ``Timeout`` error row (:mod:`pipeline.budget`); 0 = no limit. The default is about ten
            times what 4 MiB of real Markdown takes (bench/README.md).
    """

    batch_size: int = 64
    quiet: bool = False
    embedding_cache: bool = True
    workers: int = field(default_factory=default_workers)
    engine: str = "local"
    ray_address: str | None = None
    max_failed: float = 0.0
    file_timeout: float = 120.0


@dataclass
class Config:
    """All settings of one run. Build with :func:`load_config`; pass it down whole."""

    ingest: IngestConfig = field(default_factory=IngestConfig)
    clean: CleanConfig = field(default_factory=CleanConfig)
    normalize: NormalizeConfig = field(default_factory=NormalizeConfig)
    extract: ExtractConfig = field(default_factory=ExtractConfig)
    embed: EmbedConfig = field(default_factory=EmbedConfig)
    dedup: DedupConfig = field(default_factory=DedupConfig)
    run: RunConfig = field(default_factory=RunConfig)

    def validate(self) -> None:
        """Check choices and ranges; ConfigError names the key and the valid options."""
        if not self.ingest.extensions:
            raise ConfigError("ingest.extensions is empty: no file would be read")
        bad_extensions = [e for e in self.ingest.extensions if not e.startswith(".") or len(e) < 2]
        if bad_extensions:
            raise ConfigError(f"ingest.extensions has {bad_extensions}; each must be a suffix with its dot, e.g. '.txt'")
        if self.normalize.target_script not in TARGET_SCRIPTS:
            raise ConfigError(
                f"normalize.target_script = {self.normalize.target_script!r}; "
                f"valid options: {list(TARGET_SCRIPTS)}"
            )
        if self.embed.backend not in EMBED_BACKENDS:
            raise ConfigError(f"embed.backend = {self.embed.backend!r}; valid options: {list(EMBED_BACKENDS)}")
        if self.extract.summary_max_chars > MAX_SUMMARY_CHARS:
            raise ConfigError(
                f"extract.summary_max_chars = {self.extract.summary_max_chars}; at most {MAX_SUMMARY_CHARS}"
            )
        if self.embed.backend != "sentence-transformers" and (self.embed.model or self.embed.device):
            raise ConfigError(
                f"embed.model / embed.device apply to the 'sentence-transformers' backend only; "
                f"embed.backend is {self.embed.backend!r}"
            )
        if self.run.engine not in ENGINES:
            raise ConfigError(f"run.engine = {self.run.engine!r}; valid options: {list(ENGINES)}")
        if self.run.ray_address is not None and self.run.engine != "ray":
            raise ConfigError(f"run.ray_address applies to engine 'ray' only; run.engine is {self.run.engine!r}")
        if not self.run.max_failed >= 0 or (self.run.max_failed >= 1 and not float(self.run.max_failed).is_integer()):
            raise ConfigError(f"run.max_failed = {self.run.max_failed!r}; must be a count (0, 1, 2, ...) or a "
                              "fraction of the documents below 1 (e.g. 0.05)")
        if not 0 <= self.run.file_timeout < float("inf"):
            raise ConfigError(f"run.file_timeout = {self.run.file_timeout!r}; must be 0 (no limit) or more seconds")
        if self.embed.backend == "sentence-transformers" and not self.embed.model:
            raise ConfigError("embed.backend = 'sentence-transformers' needs embed.model (a name or a local path)")
        for key, value in (
            ("dedup.match_threshold", self.dedup.match_threshold),
            ("dedup.embed_weight", self.dedup.embed_weight),
            ("clean.min_topic_fit", self.clean.min_topic_fit),
        ):
            if not 0.0 <= value <= 1.0:
                raise ConfigError(f"{key} = {value!r}; must lie in [0, 1]")
        for key, value in (
            ("run.batch_size", self.run.batch_size),
            ("run.workers", self.run.workers),
            ("embed.batch_size", 1 if self.embed.batch_size is None else self.embed.batch_size),
            ("extract.n_keywords", self.extract.n_keywords),
            ("extract.summary_max_chars", self.extract.summary_max_chars),
            ("clean.byline_max_chars", self.clean.byline_max_chars),
            ("dedup.ann_min_sections", self.dedup.ann_min_sections),
        ):
            if not isinstance(value, int) or value < 1:
                raise ConfigError(f"{key} = {value!r}; must be a positive integer")

    def to_dict(self) -> dict[str, Any]:
        """The configuration as plain nested dicts (for the manifest and fingerprints)."""
        return dataclasses.asdict(self)

    def fingerprint(self) -> str:
        """SHA-256 (hex, 16 chars) of the settings that change output meaning (not ``run``)."""
        meaning = {k: v for k, v in self.to_dict().items() if k != "run"}
        return hashlib.sha256(json.dumps(meaning, sort_keys=True).encode()).hexdigest()[:16]


def _apply(section_obj: Any, section_name: str, values: dict[str, Any]) -> None:
    valid = {f.name: f for f in dataclasses.fields(section_obj)}
    hints = typing.get_type_hints(type(section_obj))
    for key, value in values.items():
        if key not in valid:
            raise ConfigError(f"unknown key {section_name}.{key}; valid keys of [{section_name}]: {sorted(valid)}")
        hint = hints[key]
        if not _type_ok(hint, value):
            expected = hint.__name__ if isinstance(hint, type) else str(hint)
            raise ConfigError(
                f"{section_name}.{key} = {value!r} has type {type(value).__name__}; expected {expected}"
            )
        if hint is float:  # 1 and 1.0 mean the same threshold: same value, same fingerprint
            value = float(value)
        setattr(section_obj, key, value)


def _type_ok(hint: Any, value: Any) -> bool:
    """Whether ``value`` fits the field annotation ``hint`` (``str | None``, ``list[str]``, ...)."""
    if typing.get_args(hint) and typing.get_origin(hint) is list:
        return isinstance(value, list) and all(_type_ok(typing.get_args(hint)[0], v) for v in value)
    if typing.get_args(hint):  # a union such as ``str | None``
        return any(_type_ok(arg, value) for arg in typing.get_args(hint))
    if hint is float:
        return isinstance(value, int | float) and not isinstance(value, bool)
    if hint is int:
        return isinstance(value, int) and not isinstance(value, bool)
    return isinstance(value, hint)  # bool, str, NoneType


def apply_overrides(config: Config, overrides: dict[str, dict[str, Any]]) -> Config:
    """Apply ``{section: {key: value}}`` overrides in place and return ``config``; ConfigError for
    an unknown section or key or a wrongly typed value."""
    tables = {f.name for f in dataclasses.fields(config)}
    for section_name, values in overrides.items():
        if section_name not in tables:
            raise ConfigError(f"unknown table [{section_name}]; valid tables: {sorted(tables)}")
        if not isinstance(values, dict):
            raise ConfigError(f"[{section_name}] must be a table, got {type(values).__name__}")
        _apply(getattr(config, section_name), section_name, values)
    return config


def load_config(path: str | Path | None = None, overrides: dict[str, dict[str, Any]] | None = None) -> Config:
    """Defaults, then the TOML file at ``path``, then ``overrides`` (CLI flags).

    Raises ConfigError: missing file, invalid TOML, unknown key or bad value.
    """
    config = Config()
    if path is not None:
        p = Path(path)
        try:
            data = tomllib.loads(p.read_text(encoding="utf-8"))
        except FileNotFoundError as exc:
            raise ConfigError(f"configuration file {p} does not exist") from exc
        except OSError as exc:  # a folder, no permission, ...
            raise ConfigError(f"configuration file {p} cannot be read: {exc}") from exc
        except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
            raise ConfigError(f"configuration file {p} is not valid TOML: {exc}") from exc
        apply_overrides(config, data)
    if overrides:
        apply_overrides(config, overrides)
    config.validate()
    return config
