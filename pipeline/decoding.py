"""Decoding: the bytes of a corpus file as text (step 2 of :mod:`pipeline.ingest`).

:func:`decode` tries, first that succeeds wins:

   a. a BOM; ISO-2022 escapes (:func:`_iso2022`); BOM-less UTF-16/32 (:func:`_bomless_utf16_32`);
   b. strict UTF-8;
   c. for HTML, the declared ``<meta>`` charset, strictly: a plausible multi-byte CJK codec
      (:data:`DECLARED_MIN_PLAUSIBILITY`) is taken, others rank first in step d; a declared
      charset that fails is noted;
   d. detection: charset-normalizer's candidates plus GB18030 and Big5-HKSCS, strictly decoded,
      ranked by :func:`plausibility`; the first stands unless another is clearly better.
      GB2312/GBK widen to GB18030, Big5 to Big5-HKSCS. A Japanese or Korean first answer whose
      text reads so (:func:`_japanese`, :func:`_korean`) is taken before ranking. Undeclared
      text may go to :func:`_best_mixed`. Guesses are noted.

An incomplete final character of at most :data:`MAX_PARTIAL_BYTES` bytes becomes U+FFFD, noted;
nothing else is replaced, which would hide a wrong codec or a binary file.
"""

from __future__ import annotations

import codecs
import re
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache

from charset_normalizer import from_bytes

from .errors import BinaryContentError
from .normalize import to_script
from .textutil import data_lines

_BOMS = (
    (codecs.BOM_UTF8, "utf-8-sig"),
    (codecs.BOM_UTF32_LE, "utf-32"),
    (codecs.BOM_UTF32_BE, "utf-32"),
    (codecs.BOM_UTF16_LE, "utf-16"),
    (codecs.BOM_UTF16_BE, "utf-16"),
)
# Narrow answers widen to the superset codec (WHATWG maps gb2312/gbk to gb18030; HKSCS extends Big5).
#: Mostly-UTF-8 bytes: at least this many valid non-ASCII characters...
UTF8_MIN_VALID_NON_ASCII = 20
#: ...and at most this share of invalid sequences relative to them.
UTF8_MAX_BAD_SHARE = 0.1
#: A short file with at most this many invalid sequences is also mostly UTF-8 when valid non-ASCII
#: characters outnumber them UTF8_SHORT_MIN_RATIO times (GBK/Big5 bytes seldom form valid UTF-8).
UTF8_SHORT_MAX_BAD = 3
UTF8_SHORT_MIN_RATIO = 2
#: Chinese codecs always tried on non-UTF-8 bytes, whatever the detector says.
CHINESE_CODECS = ("gb18030", "big5hkscs")
#: Characters of a candidate decoding that :func:`plausibility` looks at.
PLAUSIBILITY_SAMPLE = 4000
#: How many of jieba's most frequent Han characters count as plausible (about the 2013 General
#: Standard Chinese Characters table's first two tiers).
N_FREQUENT_HAN = 5000
#: charset-normalizer's first choice stands unless another decoding is this much more plausible.
PLAUSIBILITY_MARGIN = 0.02
_WIDEN = {"gb2312": "gb18030", "gbk": "gb18030", "big5": "big5hkscs"}
#: Longest incomplete final character replaced rather than failing (3 bytes of a 4-byte sequence).
MAX_PARTIAL_BYTES = 3
# Python's decoder messages when the input ends inside a character.
_PARTIAL_REASONS = ("unexpected end of data", "incomplete multibyte sequence", "truncated data")
#: A declared multi-byte charset that decodes is taken without ranking when at least this
#: plausible: Big5 bytes are nearly always valid GB18030, so strict decoding proves little.
DECLARED_MIN_PLAUSIBILITY = 0.9
# Declared charsets that may skip ranking: multi-byte CJK codecs reject most foreign bytes.
_MULTIBYTE_CODECS = frozenset(("gb18030", "big5hkscs", "big5", "cp950", "shift_jis", "cp932", "euc_jp",
                               "euc_kr", "cp949", "utf-8"))


def _codec_name(codec: str) -> str:
    try:
        return codecs.lookup(codec).name
    except LookupError:
        return codec


@dataclass(frozen=True)
class Decoded:
    """The result of :func:`decode`: ``text`` (line endings as in the file), ``encoding`` (the
    Python codec used) and ``notes``."""

    text: str
    encoding: str
    notes: tuple[str, ...] = ()


def _decode_partial(data: bytes, codec: str) -> tuple[str, int] | None:
    """``(text, n_partial_bytes)`` when ``codec`` fails only on an incomplete final character
    (made U+FFFD), else None."""
    try:
        data.decode(codec)
        return None
    except UnicodeDecodeError as exc:
        tail = data[exc.start:]
        if (exc.end != len(data) or exc.reason not in _PARTIAL_REASONS or not 0 < len(tail) <= MAX_PARTIAL_BYTES
                or (codec != "utf-16" and codec != "utf-32" and tail[0] in (0x80, 0xFF))):
            return None
        try:
            return data[:exc.start].decode(codec) + "\ufffd", len(tail)
        except UnicodeDecodeError:
            return None
    except LookupError:
        return None


def _partial_note(n: int, codec: str) -> str:
    return f"decode: the last {n} byte(s) are an incomplete {codec} character (truncated file?), replaced by U+FFFD"


def _strict_or_partial(data: bytes, codec: str) -> Decoded | None:
    try:
        return Decoded(data.decode(codec), codec)
    except (UnicodeDecodeError, LookupError):
        partial = _decode_partial(data, codec)
        return Decoded(partial[0], codec, (_partial_note(partial[1], codec),)) if partial else None


def decode(data: bytes, declared: str | None = None, *, markup: bool = False) -> Decoded:
    """Decode raw bytes by the order of the module docstring.

    Args:
        data: the file's bytes.
        declared: a Python codec name the file declares (HTML ``<meta charset>``), or None.
        markup: HTML bytes: candidates scored by :func:`markup_plausibility`.

    Raises:
        UnicodeDecodeError: a BOM whose payload does not decode.
        pipeline.errors.BinaryContentError: no codec decodes the bytes (a ValueError).
    """
    for bom, codec in _BOMS:
        if data.startswith(bom):
            decoded = _strict_or_partial(data, codec)
            if decoded is None:
                data.decode(codec)  # raises the UnicodeDecodeError that says where
            return decoded
    decoded = (_iso2022(data) or _bomless_utf16_32(data) or _strict_or_partial(data, "utf-8")
               or _mostly_utf8(data))
    if decoded is not None:
        return decoded
    notes: tuple[str, ...] = ()
    preferred = None
    score = markup_plausibility if markup else plausibility
    if declared and _codec_name(declared) == "utf-8":  # strict UTF-8 failed above
        notes = (f"decode: the declared charset {declared} does not decode the bytes",)
    elif declared:
        codec = _codec_name(declared)
        decoded = _strict_or_partial(data, codec)
        if decoded is None:
            notes = (f"decode: the declared charset {declared} does not decode the bytes",)
        elif codec in _MULTIBYTE_CODECS and (_japanese(decoded) or _korean(decoded)
                                             or score(decoded.text) >= DECLARED_MIN_PLAUSIBILITY):
            return decoded
        else:
            preferred = decoded
    try:
        detected, answer = _detect(data, preferred, score)
    except BinaryContentError:  # no one codec decodes the whole: lines in different encodings?
        detected, answer = _by_line(data, score), None
        if detected is None:
            raise
    if preferred is None:
        detected = _best_mixed(data, detected, score)
    if preferred is not None and detected.encoding != preferred.encoding:
        notes = (f"decode: the declared charset {declared} decodes the bytes, but {detected.encoding} "
                 "gives clearly more plausible text",)
    if answer is not None and detected.encoding != answer and _normal(answer) in JAPANESE_CODECS | KOREAN_CODECS:
        notes += (f"decode: charset-normalizer reads these bytes as {answer}, but the text is not plainly Japanese "
                  f"or Korean; read as {detected.encoding}, the most plausible reading (a guess)",)
    elif _normal(detected.encoding) in JAPANESE_CODECS | KOREAN_CODECS and not (_japanese(detected) or _korean(detected)):
        notes += (f"decode: read as {detected.encoding}, though the text is not plainly Japanese or Korean (too few "
                  "kana or Hangul to tell; short Chinese bytes read so too): a guess",)
    return Decoded(detected.text, detected.encoding, notes + detected.notes)


#: Single-byte code pages tried against the detector's single-byte answer for undeclared text:
#: windows-1252 (the WHATWG default), then Latin-1.
WESTERN_CODECS = ("cp1252", "latin-1")
#: Codecs a line of a file in several encodings is decoded with (:func:`_by_line`), after UTF-8.
LINE_CODECS = ("gb18030", "big5hkscs", "cp1252")
#: The least :func:`plausibility` of such a line's decoding.
LINE_MIN_PLAUSIBILITY = 0.9


def _bomless_utf16_32(data: bytes) -> Decoded | None:
    """BOM-less UTF-16/32: NUL-bearing bytes charset-normalizer reads as such, decoded with a
    note; None otherwise."""
    if b"\x00" not in data:
        return None
    best = from_bytes(data).best()
    if best is None or not best.encoding.startswith(("utf_16", "utf_32")):
        return None
    codec = _codec_name(best.encoding)
    try:
        text = data.decode(codec)
    except (UnicodeDecodeError, LookupError):
        return None
    if "\x00" in text:
        return None
    return Decoded(text, codec, (f"decode: no byte-order mark; read as {codec} (charset-normalizer's guess)",))


#: ISO-2022-JP/-JP-2/-KR/-CN designation escapes (RFC 1468, 1554, 1557, 1922).
_ISO2022_ESCAPE = re.compile(rb"\x1b(?:\$[@AB]|\$[()][A-Z]|\([JI])")
#: ISO-2022 codecs tried in order when the detector names none (JP-2 also reads KR/CN designations).
ISO2022_CODECS = ("iso2022_jp_2", "iso2022_jp_ext", "iso2022_kr")


def _iso2022(data: bytes) -> Decoded | None:
    """7-bit bytes with ISO-2022 escapes, decoded by charset-normalizer's ISO-2022 answer, else the
    first of :data:`ISO2022_CODECS` that leaves no escape (noted as a guess); None without escapes."""
    if b"\x1b" not in data or not data.isascii() or not _ISO2022_ESCAPE.search(data):
        return None
    answers = [_codec_name(m.encoding) for m in from_bytes(data) if m.encoding.startswith("iso2022")]
    for codec in dict.fromkeys([*answers, *ISO2022_CODECS]):
        decoded = _strict_or_partial(data, codec)
        if decoded is None or "\x1b" in decoded.text:
            continue
        if codec in answers:
            return decoded
        return Decoded(decoded.text, codec, (*decoded.notes, f"decode: ISO-2022 escape sequences; read as {codec}, "
                                             "a guess (charset-normalizer named no ISO-2022 codec)"))
    return None


def _single_byte(decoded: Decoded, data: bytes) -> bool:
    """Whether ``decoded`` came from a single-byte code page: one character per byte."""
    return not decoded.notes and len(decoded.text) == len(data) and not decoded.encoding.startswith("utf")


def _short_utf8(data: bytes, text: str) -> bool:
    """Whether a short file's valid non-ASCII characters (``text``: its UTF-8 reading with
    replacements) are plausible (:data:`LINE_MIN_PLAUSIBILITY`; short GBK bytes read as UTF-8 give
    Greek, IPA and Armenian letters) and its invalid bytes read as cp1252 less so (a Latin-1 letter
    in UTF-8 text is :func:`_utf8_with_cp1252`'s)."""
    valid = plausibility(_NON_ASCII_VALID.sub("", text))
    mixed = _NON_ASCII_VALID.sub("", data.decode("utf-8", _CP1252_FALLBACK))
    return valid >= LINE_MIN_PLAUSIBILITY and plausibility(mixed) < valid


def _best_mixed(data: bytes, detected: Decoded, score: Callable[[str], float]) -> Decoded:
    """Second thoughts on an undeclared detection: a single-byte answer gives way to an at least as
    plausible :data:`WESTERN_CODECS` reading (always noted as a guess); partly-UTF-8 bytes are also
    tried as :func:`_utf8_with_cp1252` and :func:`_by_line`. The most plausible wins (detector on a
    tie); a line-by-line reading with Korean or Japanese lines always wins."""
    if _single_byte(detected, data):
        first_score = score(detected.text)
        for codec in WESTERN_CODECS:
            other = _strict_or_partial(data, codec)
            if other is not None and other.text != detected.text and score(other.text) >= first_score:
                detected = other
                break
        detected = Decoded(detected.text, detected.encoding, (
            f"decode: no charset declared; read as {detected.encoding}, a guess among single-byte code pages",))
    best, best_score = detected, None
    for option in (_utf8_with_cp1252(data), _by_line(data, score) if _some_lines_utf8(data) else None):
        if option is not None and set(option.encoding.split("+")) & set(REST_CODECS):
            return option  # lines read as Korean or Japanese (stricter tests than plausibility, a Chinese score)
        if option is not None:
            best_score = score(best.text) if best_score is None else best_score
            option_score = score(option.text)
            if option_score > best_score:
                best, best_score = option, option_score
    return best


def _utf8_with_cp1252(data: bytes) -> Decoded | None:
    """UTF-8 with a few non-UTF-8 bytes read as cp1252, noted; None when invalid sequences
    outnumber valid non-ASCII characters."""
    text = data.decode("utf-8", "replace")
    bad = text.count("\ufffd") - data.count(b"\xef\xbf\xbd")
    good = len(text) - len(text.encode("ascii", "ignore")) - bad
    if bad <= 0 or good < bad:
        return None
    return Decoded(data.decode("utf-8", _CP1252_FALLBACK), "utf-8+cp1252",
                   (f"decode: UTF-8 with {bad} byte sequence(s) that are not UTF-8, read as cp1252",))


def _cp1252_bytes(exc: UnicodeError) -> tuple[str, int]:
    """Codec error handler: non-UTF-8 bytes read as cp1252 (Latin-1 where cp1252 maps nothing)."""
    if not isinstance(exc, UnicodeDecodeError):
        raise exc
    raw = exc.object[exc.start:exc.end]
    return "".join(bytes([b]).decode("cp1252", "ignore") or chr(b) for b in raw), exc.end


_CP1252_FALLBACK = "pipeline.ingest.cp1252_fallback"
codecs.register_error(_CP1252_FALLBACK, _cp1252_bytes)


def _some_lines_utf8(data: bytes) -> bool:
    """Whether some non-ASCII lines of ``data`` are strict UTF-8 and others are not."""
    valid = invalid = False
    for line in data.splitlines():
        if line.isascii():
            continue
        try:
            line.decode("utf-8")
            valid = True
        except UnicodeDecodeError:
            invalid = True
        if valid and invalid:
            return True
    return False


#: Legacy codecs tried, in order, on all non-UTF-8 lines together for Korean or Japanese text.
REST_CODECS = ("cp949", "cp932", "euc_jp")


def _rest_codec(lines: list[bytes]) -> str | None:
    """The first of :data:`REST_CODECS` that reads the non-UTF-8 lines, joined, as Korean or
    Japanese (one line alone cannot tell); None when none does."""
    rest = b"".join(ln for ln in lines if not ln.isascii() and _strict_or_partial(ln, "utf-8") is None)
    for codec in REST_CODECS:
        decoded = _strict_or_partial(rest, codec)
        if decoded is not None and (_korean(decoded) or _japanese(decoded)):
            return codec
    return None


def _by_line(data: bytes, score: Callable[[str], float]) -> Decoded | None:
    """Mixed-encoding bytes decoded line by line: ASCII or UTF-8, else :func:`_rest_codec`, else
    the most plausible of :data:`LINE_CODECS`. Encoding: the codecs joined by ``+``, noted. None
    when one codec served all lines, or a line reaches no :data:`LINE_MIN_PLAUSIBILITY`."""
    parts, used = [], Counter()
    lines = data.splitlines(keepends=True)
    rest_codec = _rest_codec(lines)
    for line in lines:
        if line.isascii():
            parts.append(line.decode("ascii"))
            continue
        decoded = _strict_or_partial(line, "utf-8")
        if decoded is None and rest_codec is not None:
            decoded = _strict_or_partial(line, rest_codec)
        if decoded is None:
            scored = [(score(d.text), d) for c in LINE_CODECS if (d := _strict_or_partial(line, c)) is not None]
            best = max(scored, key=lambda pair: pair[0], default=None)  # (the first on a tie)
            if best is None or best[0] < LINE_MIN_PLAUSIBILITY:
                return None
            decoded = best[1]
        parts.append(decoded.text)
        used[decoded.encoding] += 1
    if len(used) < 2:
        return None
    counts = ", ".join(f"{n} as {codec}" for codec, n in used.items())
    return Decoded("".join(parts), "+".join(used), (f"decode: lines in different encodings, decoded line by line ({counts})",))


#: What is not a valid non-ASCII character of a decoding with replacements: ASCII and U+FFFD.
_NON_ASCII_VALID = re.compile("[\x00-\x7f\ufffd]+")


def _mostly_utf8(data: bytes) -> Decoded | None:
    """UTF-8 with a few invalid bytes, replaced by U+FFFD and noted, when valid non-ASCII characters
    outnumber them by :data:`UTF8_MIN_VALID_NON_ASCII` / :data:`UTF8_MAX_BAD_SHARE`, or in a short
    file by :data:`UTF8_SHORT_MAX_BAD` / :data:`UTF8_SHORT_MIN_RATIO` where :func:`_short_utf8`
    (else one bad byte sends the file to a single-byte code page)."""
    text = data.decode("utf-8", "replace")
    bad = text.count("\ufffd") - data.count(b"\xef\xbf\xbd")
    if bad <= 0:
        return None
    good = len(text) - len(text.encode("ascii", "ignore")) - bad  # non-ASCII characters, counted in C
    long_ok = good >= UTF8_MIN_VALID_NON_ASCII and bad <= good * UTF8_MAX_BAD_SHARE
    if not (long_ok or (bad <= UTF8_SHORT_MAX_BAD and good >= bad * UTF8_SHORT_MIN_RATIO and _short_utf8(data, text))):
        return None
    return Decoded(text, "utf-8", (f"decode: {bad} byte sequence(s) not valid UTF-8, replaced by U+FFFD",))


def _detect(data: bytes, preferred: Decoded | None,
            score: Callable[[str], float] | None = None) -> tuple[Decoded, str | None]:
    """Step d: ``(decoding, charset-normalizer's first answer that decodes or None)``.

    Raises pipeline.errors.BinaryContentError: no candidate decodes the bytes.
    """
    candidates: dict[str, Decoded] = {}
    if preferred is not None:
        candidates[preferred.encoding] = preferred
    detected: list[str] = []  # charset-normalizer's answers that decode the bytes, in its order
    for match in from_bytes(data):
        for codec in (_WIDEN.get(match.encoding.lower(), match.encoding), match.encoding):
            try:
                candidates.setdefault(codec, Decoded(data.decode(codec), codec))
                detected.append(codec)
                break
            except (UnicodeDecodeError, LookupError):  # the wider codec lacks a mapping
                continue
    for codec in CHINESE_CODECS:
        if codec not in candidates:
            decoded = _strict_or_partial(data, codec)
            if decoded is not None:
                candidates[codec] = decoded
    if not candidates:
        raise BinaryContentError("no character encoding decodes these bytes (binary content, not text)")
    score = score or plausibility
    first = next(iter(candidates))  # the declared charset, else charset-normalizer's best
    answer = detected[0] if detected else None
    if answer is not None and (_japanese(candidates[answer]) or _korean(candidates[answer])):
        return candidates[answer], answer
    first_score = score(candidates[first].text)
    if first_score >= 1.0 - PLAUSIBILITY_MARGIN:
        # scores lie in [0, 1]: when none can beat the first by the margin, the rest are not scored
        return candidates[first], answer
    scores = {codec: first_score if codec == first else score(d.text) for codec, d in candidates.items()}
    best = max(scores, key=scores.get)
    return candidates[first if scores[first] >= scores[best] - PLAUSIBILITY_MARGIN else best], answer


#: Japanese codecs charset-normalizer may answer with.
JAPANESE_CODECS = frozenset({"euc_jp", "euc_jis_2004", "euc_jisx0213", "shift_jis", "shift_jis_2004",
                             "shift_jisx0213", "cp932", "iso2022_jp", "iso2022_jp_2"})
#: Kana among the non-ASCII characters of a decoding from which it is Japanese text.
MIN_KANA_SHARE = 0.2
_KANA = re.compile(r"[\u3040-\u30ff]")


#: Korean codecs :func:`_korean` trusts (not Johab, which reads Chinese bytes as Hangul).
KOREAN_CODECS = frozenset({"euc_kr", "cp949", "iso2022_kr"})
#: Hangul syllables among the non-ASCII letters of a decoding from which it is Korean text.
MIN_HANGUL_SHARE = 0.9
#: Fewest Hangul syllables, longest mean run and least share of space-followed runs of Korean text:
#: Korean spaces its 2-5 syllable words, Chinese bytes read as Korean give long unspaced runs.
MIN_HANGUL = 12
MAX_MEAN_HANGUL_RUN = 5.0
MIN_SPACED_RUN_SHARE = 0.5
#: How many characters of a decoding :func:`_korean` looks at.
SCRIPT_SAMPLE = 20_000
_HANGUL_RUN = re.compile(r"[\uac00-\ud7a3]+(?P<spaced>\s|$)?")


def _normal(codec: str) -> str:
    return codec.lower().replace("-", "_")


def _korean(decoded: Decoded) -> bool:
    """Whether a Korean codec's decoding reads as Korean (:data:`MIN_HANGUL`,
    :data:`MIN_HANGUL_SHARE`, :data:`MAX_MEAN_HANGUL_RUN`, :data:`MIN_SPACED_RUN_SHARE`):
    :func:`plausibility` is a Chinese score and cannot judge it."""
    if _normal(decoded.encoding) not in KOREAN_CODECS:
        return False
    runs = list(_HANGUL_RUN.finditer(decoded.text, 0, SCRIPT_SAMPLE))
    n_hangul = sum(len(m.group(0).rstrip()) for m in runs)
    spaced = sum(m.group("spaced") is not None for m in runs)
    if n_hangul < MIN_HANGUL or n_hangul > MAX_MEAN_HANGUL_RUN * len(runs) or spaced < MIN_SPACED_RUN_SHARE * len(runs):
        return False
    letters = sum(ch.isalpha() for ch in "".join(_NON_ASCII.findall(decoded.text, 0, SCRIPT_SAMPLE)))
    return n_hangul >= MIN_HANGUL_SHARE * letters


def _japanese(decoded: Decoded) -> bool:
    """Whether a Japanese codec's decoding reads as Japanese: kana make :data:`MIN_KANA_SHARE` of
    its non-ASCII characters (Chinese decoded so has none)."""
    if _normal(decoded.encoding) not in JAPANESE_CODECS:
        return False
    sample = "".join(_NON_ASCII.findall(decoded.text, 0, PLAUSIBILITY_SAMPLE))
    return bool(sample) and len(_KANA.findall(sample)) >= MIN_KANA_SHARE * len(sample)


#: :func:`_frequent_han`'s file in ``pipeline/data`` (``#`` comments, then characters).
FREQUENT_HAN_FILE = "frequent_han.txt"


@lru_cache(maxsize=1)
def _frequent_han() -> frozenset[str]:
    """The ``N_FREQUENT_HAN`` most frequent Han characters of jieba's dictionary (word counts summed
    per character), from :data:`FREQUENT_HAN_FILE` (tests/test_ingest.py checks it against jieba)."""
    return frozenset("".join(data_lines(FREQUENT_HAN_FILE)))


def plausibility(text: str) -> float:
    """Share of the first ``PLAUSIBILITY_SAMPLE`` characters that are printable ASCII, whitespace,
    Latin-1 letters, punctuation, full-width forms or frequent Han (Traditional mapped to
    Simplified first), in [0, 1] (1.0 when empty): mis-decoded bytes score low."""
    sample = text[:PLAUSIBILITY_SAMPLE]
    if not sample:
        return 1.0
    simplified = to_script(sample, "zh-Hans")
    # the plausible characters are deleted in C; what is left is the implausible rest
    good = len(simplified) - len(simplified.translate(_plausible_deleted()))
    return good / len(simplified)


@lru_cache(maxsize=1)
def _plausible_deleted() -> dict[int, None]:
    """A ``str.translate`` table deleting what :func:`plausibility` counts as plausible."""
    ascii_ok = [c for c in range(0x80) if chr(c).isprintable() or chr(c).isspace()]
    ranges = (range(0xC0, 0x100), range(0x2000, 0x2070), range(0x3000, 0x3040), range(0xFF00, 0xFFF0))
    return dict.fromkeys([*ascii_ok, *(c for r in ranges for c in r), *map(ord, _frequent_han())])


_NON_ASCII = re.compile(r"[^\x00-\x7f]+")
#: How far into a page :func:`markup_plausibility` looks for non-ASCII characters.
MARKUP_SCAN_CHARS = 200_000


def markup_plausibility(text: str) -> float:
    """:func:`plausibility` of the non-ASCII characters in the first :data:`MARKUP_SCAN_CHARS`
    (ASCII markup reads the same in every candidate); 1.0 when none."""
    return plausibility("".join(_NON_ASCII.findall(text, 0, MARKUP_SCAN_CHARS)))
