"""Lists of people and institutions as articles write them (:func:`split_names`,
:func:`split_affiliation`, :func:`is_institution`): separators, conjunctions, footnote marks,
affiliations in brackets, truncation marks. Pure functions of ``str``."""

from __future__ import annotations

import functools
import re

from .textutil import _memoised

# --- Name lists -----------------------------------------------------------------------------------

_OPEN = "(（[【《〈「『"
_CLOSE = ")）]】》〉」』"
_NAME_SEPS = frozenset("、，,;；/／\n⟐•◆◇♦")
#: Separators of a list written with semicolons or list symbols, whose commas belong to the names
#: ("University of California, Berkeley; Cornell University").
_SEMICOLON_SEPS = frozenset("、;；/／\n⟐•◆◇♦")
#: Separators whose presence makes a list's commas part of its names.
_STRONG_SEPS = frozenset(";；⟐•◆◇♦")
_LIST_SYMBOLS = frozenset("⟐•◆◇♦")


def _separates(s: str, i: int) -> bool:
    """Whether the separator ``s[i]`` separates names (not a bullet between letters: "迈克尔•乔丹")."""
    return not (s[i] in _LIST_SYMBOLS and 0 < i < len(s) - 1 and s[i - 1].isalpha() and s[i + 1].isalpha())


_TRUNCATION = re.compile(
    r"(?:[\s,，、;；]*(?:(?<![A-Za-z])et\s*al\.?|(?<![A-Za-z])etc\.?|(?<![A-Za-z])and\s+others|等等|等人|"
    r"等\s*(?:[\d一二三四五六七八九十百]+\s*(?:人|位|名))?(?:机构|機構|单位|單位|高校|团队|團隊|研究者|学者|學者|作者)?"
    r"|…+|\.{3,}))\s*[。.]?\s*$",
    re.I,
)
_INNER_ET_AL = re.compile(r"\s*(?<![A-Za-z])et\s*al\b\.?\s*$", re.I)
_EN_CONJ = re.compile(r"\s+(?:and|&)\s+", re.I)
#: Affiliation footnote marks after a name, before a separator or the end: "Alice Smith*, Bob Jones1,2".
_FOOTNOTE_MARKS = re.compile(r"(?<=[^\W\d_])\s*(?:\d{1,2}(?:\s*,\s*\d{1,2})*|[*†‡§¶]+)(?=\s*(?:[,，、;；]|$))")
#: A Markdown escape of an emphasis or footnote mark (``Cao\\*``).
_MD_MARK_ESCAPE = re.compile(r"\\([*_†])")
#: A truncation marker followed by a bracketed affiliation at the end of a list.
_TRUNCATED_AFFILIATION = re.compile(
    r"\s*(?:(?<![A-Za-z])et\s*al\.?|等人|等)\s*[（(](?P<aff>[^（）()]+)[）)]\s*$", re.I
)
_LEADING_CONJ = re.compile(r"^(?:(?:and|&)\s+|以及|及(?=[\u4e00-\u9fff]))", re.I)
_ZH_CONJ = re.compile(r"以及|与|與|和|及")
_SPACES = re.compile(r"\s+")
_CJK = re.compile(r"[\u3400-\u9fff]")
_CJK_ONLY = re.compile(r"^[\u3400-\u9fff]+$")
# Institution heads: a segment ending in one of these is a complete organisation name.
_ZH_ORG_END = re.compile(
    r"(?:大学|大學|学院|學院|研究院|研究所|研究中心|实验室|實驗室|公司|集团|集團|中心|医院|醫院|院|所|"
    r"基金会|基金會|协会|協會|学会|學會|[)）]|[A-Za-z])$"
)
_EN_ORG_HEADS = frozenset(
    "university institute research laboratory laboratories lab labs college school hospital academy "
    "foundation inc inc. ltd ltd. llc corporation corp corp. company technology ai deepmind".split()
)
_EN_ORG_WORDS = _EN_ORG_HEADS | frozenset(
    "department center centre science sciences engineering computer computing systems group team "
    "division faculty national state electrical mechanical".split()
)
_NAME_PARTICLES = frozenset("van von de der den da di del della la le du dos das bin al el ter".split())
_NAME_TOKEN_STRIP = ".,'’()"


_FULLWIDTH_ALNUM = {
    cp: cp - 0xFEE0
    for lo, hi in ((0xFF10, 0xFF19), (0xFF21, 0xFF3A), (0xFF41, 0xFF5A))
    for cp in range(lo, hi + 1)
}


def _fold_fullwidth_alnum(s: str) -> str:
    """Full-width ASCII letters and digits to ASCII (as NFKC); other full-width characters kept."""
    return s.translate(_FULLWIDTH_ALNUM)


def _split_top_level(s: str, is_sep) -> list[str]:
    """Split ``s`` at characters for which ``is_sep(i)`` holds, never inside brackets."""
    parts, depth, start = [], 0, 0
    for i, ch in enumerate(s):
        if ch in _OPEN:
            depth += 1
        elif ch in _CLOSE:
            depth = max(0, depth - 1)
        elif depth == 0 and is_sep(i):
            parts.append(s[start:i])
            start = i + 1
    parts.append(s[start:])
    return parts


def _depth_map(s: str) -> list[int]:
    """Bracket depth at each index of ``s``."""
    out, depth = [], 0
    for ch in s:
        if ch in _CLOSE:
            depth = max(0, depth - 1)
        out.append(depth)
        if ch in _OPEN:
            depth += 1
    return out


def _looks_like_person(p: str) -> bool:
    """1-4 capitalised tokens (name particles allowed) and no organisation word."""
    tokens = p.split()
    if not 1 <= len(tokens) <= 4:
        return False
    for tok in tokens:
        low = tok.strip(_NAME_TOKEN_STRIP).casefold()
        if low in _EN_ORG_WORDS:
            return False
        if low in _NAME_PARTICLES:
            continue
        if not (tok[0].isalpha() and tok[0].isupper()):
            return False
    return True


_AFFILIATION_WORD = re.compile(
    r"大学|大學|学院|學院|研究院|研究所|研究中心|实验室|實驗室|公司|集团|集團"
    r"|\b(?:University|Universit[éäà]|Institute|Institut|Laborator(?:y|ies)|Labs?|College|School|Academy"
    r"|Research|Inc\.?|Ltd\.?|LLC|Corporation|Corp\.?|Foundation|Hospital|Centre|Center)\b"
)


#: Bracketed notes after an author's name that are roles, not affiliations.
_AUTHOR_ROLE = re.compile(
    r"corresponding|equal|contribution|first|senior|lead|intern|advisor|editor|et al|co-?first"
    r"|通讯|通訊|共同|一作|二作|第一|导师|導師|实习|實習|学生|學生|博士|硕士|碩士|教授|研究员|研究員",
    re.I,
)


def split_affiliation(author: str) -> tuple[str, str | None]:
    """``(name, affiliation)`` of an author item ``Name (Affiliation)`` whose bracket holds an
    institution word or a short proper name (``OpenAI``, ``斯坦福``) that is no author role
    (:data:`_AUTHOR_ROLE`); otherwise ``(author, None)``."""
    m = re.fullmatch(r"(?P<name>[^（(]+?)\s*[（(](?P<aff>[^（）()]+)[）)]", author.strip())
    if m is None:
        return author, None
    aff = m.group("aff").strip().strip("\"“”").strip()
    if _AFFILIATION_WORD.search(aff):
        return m.group("name").strip(), aff
    if (len(aff.split()) <= 4 and (aff[:1].isupper() or _CJK.match(aff)) and not _AUTHOR_ROLE.search(aff)
            and not aff.isdigit()):
        return m.group("name").strip(), aff
    return author, None


#: Forms of address before a person's name ("Prof. Dr.-Ing. Ann Lee"): no part of it.
_HONORIFIC = re.compile(r"^(?:(?:Dr|Prof|Professors?|Mr|Mrs|Ms|Mx|Sir|Dame)\b\.?(?:-Ing\.)?\s+)+(?=[A-Z])")


def without_honorific(name: str) -> str:
    """``name`` without a form of address (``"Dr Badrul Sarwar"`` -> ``"Badrul Sarwar"``), unless
    one word would be left."""
    rest = _HONORIFIC.sub("", name, count=1)
    return rest if rest != name and " " in rest.strip() else name


def split_affiliations(authors: list[str]) -> tuple[list[str], list[str]]:
    """``(names, affiliations)`` of author items by :func:`split_affiliation`; affiliations in
    first-seen order, once."""
    names, affiliations = [], []
    for author in authors:
        name, affiliation = split_affiliation(author)
        names.append(name)
        if affiliation is not None and affiliation not in affiliations:
            affiliations.append(affiliation)
    return names, affiliations


def split_affiliation_items(value: str) -> tuple[list[str], list[str]] | None:
    """``(authors, institutions)`` of a list of ``Name, Affiliation`` items separated by ``;`` or
    newlines (``Taco S. Cohen, University of Amsterdam; Mario Geiger, EPFL``); None for any other.

    Each item: a person of two words or more, then an affiliation; over half the affiliations an
    institution, one word or recurring (so ``Last, First`` lists are not read); two items or
    more unless the one is an institution. Institutions in order of first appearance."""
    items = [p.strip() for p in _split_top_level(value, lambda i: value[i] in ";；\n")]
    items = [p for p in items if p]
    pairs = []
    for item in items:
        name, comma, aff = item.partition(",")
        name, aff = name.strip(), aff.strip(" .")
        if not comma or not aff or len(name.split()) < 2 or not _looks_like_person(name):
            return None
        pairs.append((name, aff))
    if not pairs:
        return None
    affs = [a for _, a in pairs]
    if 2 * sum(is_institution(a) or len(a.split()) == 1 or affs.count(a) > 1 for a in affs) <= len(affs):
        return None
    if len(pairs) == 1 and not is_institution(affs[0]):
        return None
    return [n for n, _ in pairs], list(dict.fromkeys(affs))


def _looks_like_org(p: str) -> bool:
    """Ends in an institution head word (University, Institute, Research, Lab, Inc., AI, ...)."""
    tokens = p.split()
    return bool(tokens) and tokens[-1].strip(",").casefold() in _EN_ORG_HEADS


def _split_en_conj(piece: str) -> list[str]:
    """Split an English ``A and B`` / ``A & B`` when every side is a person or organisation name."""
    found = list(_EN_CONJ.finditer(piece))
    depths = _depth_map(piece) if found else []  # (most pieces have no conjunction)
    cuts = [m for m in found if depths[m.start()] == 0]
    if not cuts:
        return [piece]
    sides, start = [], 0
    for m in cuts:
        sides.append(piece[start : m.start()])
        start = m.end()
    sides.append(piece[start:])
    if all(_looks_like_person(s) or _looks_like_org(s) for s in sides):
        return sides
    return [piece]


def _split_zh_conj(piece: str) -> list[str]:
    """Split at 与/和/及/以及 after an institution head or between two 2-4 character CJK names;
    never at a name's first character or in brackets."""
    found = list(_ZH_CONJ.finditer(piece))
    depths = _depth_map(piece) if found else []  # (most pieces have no conjunction)
    out, start = [], 0
    matches = [m for m in found if depths[m.start()] == 0]
    for k, m in enumerate(matches):
        i, j = m.start(), m.end()
        if i <= start or j >= len(piece):
            continue
        latin_next = piece[j:].lstrip()[:1].isascii() and piece[j:].lstrip()[:1].isalpha()
        if not (_CJK.match(piece[j]) or latin_next):
            continue
        left = piece[start:i].strip()
        nxt = matches[k + 1].start() if k + 1 < len(matches) else len(piece)
        right = piece[j:nxt].strip()
        # an institution head, then a name (清华大学和Google DeepMind); Latin + 和 + Latin is no split
        org = bool(_ZH_ORG_END.search(left)) and len(right) >= 2 and not (latin_next and left[-1:].isascii())
        person = (
            2 <= len(left) <= 4 and 2 <= len(right) <= 4 and bool(_CJK_ONLY.match(left + right))
        )
        if org or person:
            out.append(left)
            start = j
    out.append(piece[start:])
    return out


@_memoised(copy=lambda r: (list(r[0]), r[1]))
def split_names(value: str) -> tuple[list[str], bool]:
    """Split an author or institution list (``"斯坦福大学、微软"``, ``"Snell and Griffiths"``) into
    ``(names, truncated)``: names in order, whitespace collapsed, full-width letters and digits
    folded, footnote marks removed; ``truncated`` when a final ``等``/``et al.``/``and others``/
    ellipsis was removed.

    Splits, never inside brackets: at ``、 ， , ; / `` list symbols and newlines (not at commas in
    a semicolon list); at 与/和/及 between CJK names (:func:`_split_zh_conj`); at ``and``/``&``
    only when every side is a person or an institution (not ``Electrical and Computer Engineering``).
    """
    if not value:
        return [], False
    s = value.strip().strip("\u3000").rstrip("。")
    s = _FOOTNOTE_MARKS.sub("", _MD_MARK_ESCAPE.sub(r"\1", s))
    truncated = False
    tail = _TRUNCATED_AFFILIATION.search(s)
    if tail and tail.start() > 0:  # "A, B et al.（OpenAI）"
        s, truncated = s[: tail.start()] + f" ({tail.group('aff').strip()})", True
    m = _TRUNCATION.search(s)
    if m and m.start() > 0:
        s, truncated = s[: m.start()], True
    names: list[str] = []
    strong = any(c in _STRONG_SEPS and _separates(s, i) for i, c in enumerate(s))
    seps = _SEMICOLON_SEPS if strong else _NAME_SEPS
    pieces = _split_top_level(s, lambda i: s[i] in seps and _separates(s, i)) if any(c in s for c in seps) else [s]
    for piece in pieces:
        piece = _LEADING_CONJ.sub("", piece.strip(" \t\u3000"))
        cut = _INNER_ET_AL.search(piece)
        if cut and cut.start() > 0:  # "A et al., Stanford University"
            piece, truncated = piece[: cut.start()], True
        for en in _split_en_conj(piece):
            for name in _split_zh_conj(en.strip()):
                name = _fold_fullwidth_alnum(_SPACES.sub(" ", name).strip(" .。"))
                if name and not _EN_CONJ.fullmatch(f" {name} "):
                    names.append(name)
    return names, truncated


# --- Institutions ---------------------------------------------------------------------------------

_ZH_ORG_HEAD = re.compile(
    r"(?:大学|大學|分校|学院|學院|研究院|研究所|研究中心|实验室|實驗室|公司|集团|集團|中心|医院|醫院|科学院|科學院"
    r"|基金会|基金會|团队|團隊|课题组|課題組|小组|小組)$"
)


#: Words that make a Chinese span a description rather than a name (pronouns, generic nouns).
_ZH_NOT_NAME = re.compile(
    r"^(?:这|這|该|該|此|其|本|他|她|它|我|你|那|各|某|多|一|两|兩|几|幾|许多|許多|例如|比如|诸如|諸如|像是)"
    r"|^(?:作者|论文|論文|研究|文章|工作|方法|研究者|研究人员|研究人員)$"
)


def _latin_org(s: str) -> bool:
    """An English organisation named by its head word (University, Institute, Lab, AI, ...) or
    written ``University of X`` / ``Institute for X``."""
    tokens = s.split()
    if not tokens:
        return False
    return _looks_like_org(s) or tokens[0].casefold() in ("university", "institute", "université", "universität")


@functools.lru_cache(maxsize=65536)
def is_institution(item: str) -> bool:
    """Whether an author-list item names an institution (``Stanford University``): an institution
    word or head word in English or Chinese."""
    s = item.strip()
    if not s:
        return False
    if _CJK.search(s):
        return bool(_ZH_ORG_HEAD.search(s)) and not _ZH_NOT_NAME.search(s)
    return bool(_AFFILIATION_WORD.search(s)) or _latin_org(s)
