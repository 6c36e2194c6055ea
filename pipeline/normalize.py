"""Script detection and Simplified/Traditional conversion of Chinese text (the normalize stage).

Method. Both functions rest on the OpenCC project (BYVoid, https://github.com/BYVoid/OpenCC) as
packaged by ``opencc-python-reimplemented`` (module :mod:`opencc`), which ships OpenCC's
dictionaries: ``STCharacters.txt`` / ``STPhrases.txt`` (Simplified to Traditional, used by the
``s2t`` conversion) and ``TSCharacters.txt`` / ``TSPhrases.txt`` (Traditional to Simplified,
``t2s``), plus the regional variant tables ``TWVariants.txt`` / ``HKVariants.txt``.

* :func:`detect_script` classifies each *unique* character once (cached): a Han character that
  ``t2s`` changes and ``s2t`` leaves is Traditional-specific; one that ``s2t`` changes and ``t2s``
  leaves is Simplified-specific, unless OpenCC's own data shows it in standard Traditional text
  (see :data:`SHARED_MIN_KEEP_SHARE`); characters that both or neither conversion change count
  for neither script. The tag follows from the counts (occurrences, in characters) and the
  thresholds below.
* :func:`to_script` converts only runs of Han characters; everything else (Latin, digits,
  URLs, emoji, punctuation, whitespace) passes through unchanged. A run that already reads in
  the target script is left alone, because OpenCC's phrase tables are keyed by source-script
  text and misfire on text already converted (``s2t`` turns Traditional 證明了 into 證明瞭 and
  干擾 into 幹擾). The result is a fixed point, so the conversion is idempotent.

OpenCC's "Traditional" is its own standard (the forms of the 1950s-era character tables), not
Taiwan's: ``s2t`` writes 羣, 爲, 裏, 麪, 喫 where a Taiwan page has 群, 為, 裡, 麵, 吃. The
pipeline compares text across sources only after converting everything to one target, so this
does not matter for dedup; it does mean ``zh-Hant`` output differs from Taiwan usage in places.

OpenCC is not length-preserving in general (a phrase entry may map 2 characters to 3), so this
stage never touches ``text`` or its offsets: it writes a new column ``text_norm``.
"""

from __future__ import annotations

import functools
import re
import unicodedata
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, overload

import opencc
import pandas as pd

from .config import TARGET_SCRIPTS
from .stage import Stage

if TYPE_CHECKING:
    from .config import Config

# --- Thresholds (calibrated on the seed articles in shared/corpora/seeds and short probes) ----

#: A text is ``"mixed"`` only when the minority script holds at least this share of all
#: script-specific characters. Real pages carry stray characters of the other script well below
#: this: the Traditional seed (003) has 3 Simplified-specific characters (杠, 务, 优) against
#: 7,548 Traditional-specific ones (0.04 %; 33, i.e. 0.4 %, before the shared characters below
#: are set aside), and the Simplified seed (000) has no Traditional-specific character against
#: 996 Simplified-specific ones. A page that quotes a whole passage in the other script reaches
#: tens of percent, so 0.25 leaves a wide margin on both sides.
MIXED_MIN_SHARE = 0.25

#: ...and at least this many minority characters (occurrences). In a title or a short sentence
#: (3-10 script-specific characters) one or two stray characters would otherwise reach
#: :data:`MIXED_MIN_SHARE` on their own; below this count the majority script wins and an exact
#: tie is ``"mixed"``.
MIXED_MIN_CHARS = 3

#: A text is Chinese (``zh-*``/``"mixed"``) when Han characters are at least this share of its
#: letters (Han characters + Latin letters + other letters); below it, and with Latin letters the
#: largest group, it is ``"en"``. One Han character carries about as much as one English word
#: (about 5-6 letters), so a share of 0.10 means English outweighs Chinese by more than 1.5 to 1
#: in content: an English sentence naming a lab in Chinese (南京大学, 7 % Han) stays ``"en"``,
#: and every Chinese paragraph of the seed articles (several quote English titles or URLs)
#: stays Chinese; a line that is only an English title with a Chinese label (论文 1：Train for
#: the Worst, ..., 3 % Han) is ``"en"``, which it mostly is.
ZH_MIN_HAN_SHARE = 0.10

#: A character that ``s2t`` changes still counts as *shared* (valid in both scripts, counted for
#: neither) when STCharacters lists it among its own Traditional forms (one-to-many entries such
#: as 干 -> 幹 乾 干) and STPhrases keeps it unchanged in at least this share of the phrase
#: entries that contain it: 里 (公里) 60 %, 干 (干擾) 15 %, 于 17 %, 后 (皇后) 10 %, 范 17 %,
#: 准 18 %, 游 23 %. Characters OpenCC only keeps in rare words stay Simplified-specific:
#: 种 0.8 %, 万 0.4 %, 价 1.8 %, 叶 1.3 %. The Taiwan / Hong Kong standard forms listed as values
#: of TWVariants / HKVariants (群, 峰, 床, 吃, 台, 温, 户 ...) are shared as well.
SHARED_MIN_KEEP_SHARE = 0.05

#: :func:`to_script` repeats its conversion pass until the text no longer changes, at most this
#: many times. One pass suffices almost always; a second one is needed where an OpenCC phrase
#: entry matched across a word boundary and kept a source character (TSPhrases' surname entry
#: 於單 keeps 於 in 相較於單純; the next pass turns it into 于). No seed text needs a third.
MAX_PASSES = 4

#: Every tag :func:`detect_script` can return.
SCRIPT_TAGS = ("zh-Hans", "zh-Hant", "en", "mixed", "und")

# Han characters: CJK Unified Ideographs and Extension A, the supplementary-plane extensions B-H,
# both compatibility blocks, and U+3007 (〇, ideographic zero, used in years such as 二〇二五).
_HAN = (
    "\u3007\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"
    "\U00020000-\U0002ebef\U0002f800-\U0002fa1f\U00030000-\U000323af"
)
_HAN_RUN_RE = re.compile(f"[{_HAN}]+")
_HAN_CHAR_RE = re.compile(f"[{_HAN}]")

# Character classes (values of _char_class).
_HANS, _HANT, _HAN_SHARED, _LATIN, _OTHER_LETTER, _NON_LETTER = range(6)

_CONVERSION = {"zh-Hans": "t2s", "zh-Hant": "s2t"}
_SOURCE_CLASS = {"zh-Hans": _HANT, "zh-Hant": _HANS}
_TARGET_CLASS = {"zh-Hans": _HANS, "zh-Hant": _HANT}

_DICTIONARY_DIR = Path(opencc.__file__).resolve().parent / "dictionary"


@dataclass(frozen=True)
class ScriptCounts:
    """Character counts behind :func:`detect_script` (occurrences, in characters).

    Attributes:
        hans: Simplified-specific Han characters.
        hant: Traditional-specific Han characters.
        han: all Han characters (specific to one script or not).
        latin: Latin letters, including full-width ones (Ａ-Ｚ, ａ-ｚ) and accented ones.
        other: letters of any other script (kana, Hangul, Cyrillic ...).
    """

    hans: int
    hant: int
    han: int
    latin: int
    other: int

    @property
    def letters(self) -> int:
        """Han characters plus Latin and other letters; digits, punctuation and emoji excluded."""
        return self.han + self.latin + self.other


@functools.cache
def _converter(conversion: str) -> opencc.OpenCC:
    """The OpenCC converter for ``"t2s"`` or ``"s2t"``, built once per process (dictionaries load)."""
    return opencc.OpenCC(conversion)


def _read_table(name: str) -> dict[str, list[str]]:
    """One OpenCC dictionary file as ``{key: [value, ...]}`` (tab between key and values)."""
    table: dict[str, list[str]] = {}
    with open(_DICTIONARY_DIR / name, encoding="utf-8") as f:
        for line in f:
            key, _, values = line.rstrip("\n").partition("\t")
            if key:
                table[key] = values.split(" ")
    return table


@functools.cache
def _shared_characters() -> frozenset[str]:
    """Characters ``s2t`` changes that are nevertheless standard in Traditional text.

    See :data:`SHARED_MIN_KEEP_SHARE` for the rule and its reason.
    """
    st_chars = _read_table("STCharacters.txt")
    own_form = {k for k, values in st_chars.items() if k in values[1:]}
    kept: Counter[str] = Counter()
    seen: Counter[str] = Counter()
    for key, values in _read_table("STPhrases.txt").items():
        value = values[0]
        if len(value) != len(key):
            continue
        for s, t in zip(key, value, strict=True):
            if s in own_form:
                seen[s] += 1
                kept[s] += s == t
    shared = {c for c in own_form if seen[c] and kept[c] / seen[c] >= SHARED_MIN_KEEP_SHARE}
    for table in ("TWVariants.txt", "HKVariants.txt"):
        for values in _read_table(table).values():
            shared.update(v for v in values if len(v) == 1)
    return frozenset(shared)


@functools.cache
def _char_class(ch: str) -> int:
    """Class of one character (cached per unique character for the life of the process)."""
    if _HAN_CHAR_RE.fullmatch(ch):
        to_hans = _converter("t2s").convert(ch) != ch
        to_hant = _converter("s2t").convert(ch) != ch
        if to_hans and not to_hant:
            return _HANT
        if to_hant and not to_hans and ch not in _shared_characters():
            return _HANS
        return _HAN_SHARED
    if ch.isalpha():
        name = unicodedata.name(ch, "")
        return _LATIN if name.startswith(("LATIN ", "FULLWIDTH LATIN ")) else _OTHER_LETTER
    return _NON_LETTER


def script_counts(text: str) -> ScriptCounts:
    """Count the characters of ``text`` by script (see :class:`ScriptCounts`).

    Each unique character is classified once per process (OpenCC ``t2s``/``s2t`` on the single
    character, then cached), so the cost is one pass over ``text`` plus new characters only.
    """
    totals = [0] * 6
    for ch, n in Counter(text).items():
        totals[_char_class(ch)] += n
    hans, hant = totals[_HANS], totals[_HANT]
    return ScriptCounts(
        hans=hans,
        hant=hant,
        han=hans + hant + totals[_HAN_SHARED],
        latin=totals[_LATIN],
        other=totals[_OTHER_LETTER],
    )


def _script_from_counts(c: ScriptCounts) -> str:
    if c.letters == 0:
        return "und"
    if c.other > c.han and c.other > c.latin:
        return "und"
    if c.han < ZH_MIN_HAN_SHARE * c.letters:
        return "en"
    minority = min(c.hans, c.hant)
    if minority >= MIXED_MIN_CHARS and minority >= MIXED_MIN_SHARE * (c.hans + c.hant):
        return "mixed"
    if c.hant > c.hans:
        return "zh-Hant"
    if c.hans > c.hant or c.hans == 0:
        return "zh-Hans"
    return "mixed"


def detect_script(text: str) -> str:
    """The script of ``text`` as a BCP 47 tag.

    Rules, in order (counts are character occurrences, see :func:`script_counts`):

    1. ``"und"`` when ``text`` has no letters at all (digits, punctuation, emoji, whitespace
       only), or when letters of another script (kana, Hangul, Cyrillic ...) outnumber both the
       Han characters and the Latin letters.
    2. ``"en"`` when Han characters are fewer than :data:`ZH_MIN_HAN_SHARE` of the letters
       (Latin letters then dominate). Any Latin-script text gets this tag; the corpus has
       English only.
    3. ``"mixed"`` when both Chinese scripts are substantial: the minority script has at least
       :data:`MIXED_MIN_CHARS` script-specific characters and at least :data:`MIXED_MIN_SHARE`
       of all script-specific ones, or the two counts tie. ``"mixed"`` is used for the two
       Chinese scripts only; Chinese text with English in it is ``zh-*``.
    4. Otherwise the script with more specific characters: ``"zh-Hant"`` or ``"zh-Hans"``, so a
       few stray characters of the other script do not change the tag.
    5. Chinese text without a single script-specific character (本文提出, 中文) reads the same
       in both scripts; it is tagged ``"zh-Hans"``, the pipeline's default target, for which
       :func:`to_script` leaves it unchanged.

    The method counts Han characters that OpenCC's ``t2s`` would change (Traditional-specific,
    from TSCharacters) and those ``s2t`` would change (Simplified-specific, from STCharacters),
    setting aside characters both change and characters shared by both scripts
    (:data:`SHARED_MIN_KEEP_SHARE`).

    Args:
        text: any string; the empty string gives ``"und"``.

    Returns:
        One of ``"zh-Hans"``, ``"zh-Hant"``, ``"en"``, ``"mixed"``, ``"und"``.
    """
    return _script_from_counts(script_counts(text))


def _convert_pass(text: str, target: str) -> str:
    """One conversion pass over the Han runs of ``text`` (see :func:`to_script`)."""
    convert = _converter(_CONVERSION[target]).convert
    source, goal = _SOURCE_CLASS[target], _TARGET_CLASS[target]
    neutral_decision: list[bool] = []  # computed on the first neutral run only

    def replace(match: re.Match[str]) -> str:
        run = match.group()
        classes = {_char_class(ch) for ch in run}
        if source in classes:
            return convert(run)
        if goal in classes:
            return run
        if not neutral_decision:
            neutral_decision.append(detect_script(text) != target)
        return convert(run) if neutral_decision[0] else run

    return _HAN_RUN_RE.sub(replace, text)


def to_script(text: str, target: str) -> str:
    """Convert the Chinese in ``text`` to ``target`` script with OpenCC (``t2s`` or ``s2t``).

    Only runs of Han characters are handed to OpenCC; Latin text, URLs, digits, emoji,
    whitespace and punctuation (CJK punctuation included) pass through unchanged. This loses
    nothing: every key of OpenCC's character and phrase dictionaries is made of Han characters
    (〇 included; the 5 STPhrases keys with a full-width ``．`` never match, because OpenCC
    splits its input at that character first), so no entry can span a non-Han character.

    Each run is converted when it has a character specific to the source script; it is left
    alone when it has characters specific to the target script only (OpenCC's phrase tables
    misfire on text already converted, e.g. ``s2t`` makes 證明瞭 of Traditional 證明了 and
    幹擾 of 干擾); a run specific to neither script (皇后, 以后, 了解) is converted unless the
    whole ``text`` is already in the target script by :func:`detect_script`. The pass repeats
    until nothing changes (at most :data:`MAX_PASSES`), so ``to_script(to_script(x, t), t) ==
    to_script(x, t)``.

    The result can differ in length from ``text`` (OpenCC phrase entries are not all
    length-preserving); offsets into ``text`` do not apply to it.

    Args:
        text: any string.
        target: ``"zh-Hans"`` (OpenCC ``t2s``) or ``"zh-Hant"`` (OpenCC ``s2t``: OpenCC's
            Traditional standard, e.g. 羣, 爲, 裏, not Taiwan's 群, 為, 裡).

    Returns:
        The converted string.

    Raises:
        ValueError: ``target`` is not one of ``"zh-Hans"``, ``"zh-Hant"``.
    """
    if target not in _CONVERSION:
        raise ValueError(f"target script {target!r} is not supported; valid options: {list(TARGET_SCRIPTS)}")
    out = text
    for _ in range(MAX_PASSES):
        converted = _convert_pass(out, target)
        if converted == out:
            break
        out = converted
    return out


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
    """Put a Chinese field in the ``target`` script; the kind of ``value`` is kept.

    Used by later stages for extracted fields (titles, keywords, summaries).

    Args:
        value: a ``str``, a ``list`` or ``tuple`` of ``str``, or ``None``.
        target: ``"zh-Hans"`` or ``"zh-Hant"``.

    Returns:
        ``to_script(value, target)`` for a string, a new list (tuple) with every item converted,
        or ``None`` for ``None``.

    Raises:
        TypeError: ``value`` (or one of its items) is of another type.
        ValueError: ``target`` is not a supported script.
    """
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
        batch: sections batch, one row per section, with column ``text`` (str).
        config: the run configuration; ``config.normalize.target_script`` (``"zh-Hans"`` or
            ``"zh-Hant"``) is the target.

    Returns:
        A copy of ``batch`` (same index and row order, ``text`` untouched) with two added
        object-dtype columns of ``str``:

        * ``lang``: :func:`detect_script` of ``text`` (``"zh-Hans"``, ``"zh-Hant"``, ``"en"``,
          ``"mixed"`` or ``"und"``);
        * ``text_norm``: :func:`to_script` of ``text`` to the target script. Its length in
          characters may differ from ``text``; offsets refer to ``text`` only.

    Raises:
        TypeError: a ``text`` value is not a ``str`` (the message names its row index).
        ValueError: the target script is not supported.
    """
    target = config.normalize.target_script
    texts = batch["text"]
    for index, value in texts.items():
        if not isinstance(value, str):
            raise TypeError(
                f"stage 'normalize': row {index!r} has text of type {type(value).__name__}; expected str"
            )
    out = batch.copy()
    out["lang"] = pd.Series([detect_script(t) for t in texts], index=batch.index, dtype=object)
    out["text_norm"] = pd.Series([to_script(t, target) for t in texts], index=batch.index, dtype=object)
    return out


STAGE = Stage(name="normalize", fn=normalize_sections, requires=("text",), adds=("lang", "text_norm"))
