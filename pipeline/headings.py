"""Paper-heading patterns shared by segment and extract, so both read a heading the same way.
All work on one line with Markdown removed (:func:`pipeline.textutil.plain`).
"""

from __future__ import annotations

import re

from .fields import find_award_label, find_venue_years

#: ``论文 1：``, ``論文2:``, ``Paper 3.``, ``论文三、``
NUMBERED_PREFIX = r"(?:论文|論文|Paper|PAPER|paper)\s*(?:\d+|[一二三四五六七八九十]+)\s*[：:.、]\s*"
#: The number of a list item: up to 99999, but not a year ("2024. Title" is a dated line).
LIST_NUMBER = r"(?:\d{1,3}|(?!19\d\d(?!\d)|20\d\d(?!\d))\d{4,5})"
#: ``1.``, ``2、``, ``一、``, ``（一）``, ``(2)``, ``[2]``, ``【2】``
ENUMERATION_PREFIX = (
    r"(?:\d{1,3}[.、．]|[一二三四五六七八九十]{1,3}[、．.]|[（(](?:\d{1,2}|[一二三四五六七八九十]{1,3})[）)]"
    r"|[\[［【]\d{1,3}[\]］】])\s*"
)

NUMBERED_HEADING = re.compile(rf"^{NUMBERED_PREFIX}(?P<title>.*)$")
ENUMERATED_HEADING = re.compile(rf"^{ENUMERATION_PREFIX}(?P<title>\S.*)$")
NUMBERED_PREFIX_RE = re.compile(rf"^{NUMBERED_PREFIX}")
ENUMERATION_PREFIX_RE = re.compile(rf"^{ENUMERATION_PREFIX}")
#: ``《Title》`` with an optional gloss ``（译名）`` after it; the gloss may hold ``(1)``.
BOOK_TITLE = re.compile(r"《(?P<inner>[^《》]+)》\s*(?:[（(](?P<gloss>(?:[^（）()]|\([^()]*\))+)[）)])?")
#: ``A（B）`` / ``A (B)``: a title followed by its translation, either way round.
BILINGUAL = re.compile(r"(?P<a>[^（(]+?)\s*[（(](?P<b>[^）)]+)[）)]\s*")

#: Longest headline decoration (论文速递, 一文读懂; 2-6 characters seen, 8 allows 论文深度解读).
MAX_DECORATION_CHARS = 8
#: What sets a decoration off from the title next to it.
DECORATION_SEP = r"[\s:：|｜丨/／—–\-·•]"
#: A headline decoration before an English title (``【论文精读】Title``, ``论文速递 | Title``),
#: recognised by shape (short, Chinese only, bracketed or separated), never by a word list.
LEADING_DECORATION = re.compile(
    rf"^(?:[【\[][\u3400-\u9fff]{{1,{MAX_DECORATION_CHARS}}}[】\]]{DECORATION_SEP}*"
    rf"|[\u3400-\u9fff]{{1,{MAX_DECORATION_CHARS}}}{DECORATION_SEP}*(?:[:：|｜丨—–]|(?<=\s)-(?=\s)){DECORATION_SEP}*)"
    r"(?P<title>[^\u3400-\u9fff]*[A-Za-z][^\u3400-\u9fff]*)$"
)
#: A decoration standing alone (``【导读】``): a section label, never a paper.
DECORATION_ONLY = re.compile(rf"^[【\[][\u3400-\u9fff]{{1,{MAX_DECORATION_CHARS}}}[】\]]$")
#: A heading opening with a bracketed label (``【背景】研究动机``): an explainer's part.
BRACKET_LABEL = re.compile(rf"^[【\[][\u3400-\u9fff]{{1,{MAX_DECORATION_CHARS}}}[】\]]")


#: Most letters besides the venue's name in a venue-edition label ("CVPR 2024 Oral：").
MAX_VENUE_LABEL_REST = 6


_LABEL_COLON = re.compile(r"[:：]\s*")
#: A presenter's name after a venue edition in a label ("ICLR2025 Morris: Title").
_PRESENTER = re.compile(r"\s+[A-Z][\w'’\-]*(?:\s+[A-Z][\w'’\-]*){0,2}(?:\s+et\s+al\.?)?$")


#: What separates a title from a trailing label ("Title, CVPR2024 Best Paper Award").
_TAIL_SEPARATOR = re.compile(r"\s*(?:[,，|｜]|\s[-–—]\s)\s*")


def venue_label(label: str) -> bool:
    """Whether ``label`` only names a venue edition, track and award: a dated venue and at most
    :data:`MAX_VENUE_LABEL_REST` other letters without the award label."""
    found = [(start, end) for _, year, start, end in find_venue_years(label) if year]
    if not found:
        return False
    rest = "".join(ch for k, ch in enumerate(label) if not any(a <= k < b for a, b in found))
    if award := find_award_label(rest):
        rest = rest.replace(award, " ")
    return sum(ch.isalpha() for ch in rest) <= MAX_VENUE_LABEL_REST


#: A bracketed remark closing a title ("Title (UIST 2005)").
_BRACKET_TAIL = re.compile(r"\s*[(（\[【](?P<inner>[^()（）\[\]【】\n]{2,40})[)）\]】]\s*$")
#: A presentation format in brackets after a title ("Title (Oral)", "Title [Spotlight]").
_TRACK_TAIL = re.compile(r"\s*[(（\[【](?:oral|spotlight|poster|highlight)(?:\s+(?:paper|presentation))?[)）\]】]\s*$", re.I)


def _leading_label(h: str) -> tuple[int, re.Match[str] | None] | None:
    """``(title start, presenter match or None)`` when ``h`` opens with a venue-edition label and
    at least 8 characters follow; else None."""
    m = _LABEL_COLON.search(h, 0, 40)
    if m is None or len(h) - m.end() < 8:
        return None
    label = h[: m.start()]
    found = _PRESENTER.search(label)
    if found is not None and not venue_label(label[: found.start()]):
        found = None
    return (m.end(), found) if found is not None or venue_label(label) else None


def presenter(h: str) -> str | None:
    """The presenter a venue label names before a title ("ICLR2025 Morris: Title" -> "Morris"), else None."""
    found = _leading_label(h)
    if found is None or found[1] is None:
        return None
    name = _ET_AL.sub("", found[1].group(0)).strip()
    if {w.casefold() for w in name.split()} & _TRACK_WORDS or find_award_label(h[: found[0]]) is not None:
        return None  # "CVPR2024 Honorable Mention: Title", "ICML 2024 Test of Time: Title": an award
    return name


_ET_AL = re.compile(r"\s+et\s+al\.?$")
#: Words of a track, a presentation format or an award, which a venue label may hold besides a name.
_TRACK_WORDS = frozenset({"oral", "orals", "poster", "posters", "spotlight", "highlight", "workshop", "track", "main",
                          "findings", "demo", "paper", "papers", "best", "award", "accepted", "session",
                          "outstanding", "honorable", "keynote", "tutorial", "invited", "talk", "panel", "recap",
                          "highlights"})


def without_venue_label(h: str) -> str:
    """``h`` without a leading venue-edition label (maybe with a presenter) or a trailing one after
    a separator or in brackets; unchanged when under 8 characters would be left."""
    if h.rstrip().endswith((")", "）", "]", "】")) and (track := _TRACK_TAIL.search(h)) is not None and track.start() >= 8:
        h = h[: track.start()]
    if (label := _leading_label(h)) is not None:
        return h[label[0]:]
    if h.endswith((")", "）", "]", "】")) and (b := _BRACKET_TAIL.search(h)) and b.start() >= 8 and venue_label(b.group("inner")):
        return h[: b.start()]  # "Title (UIST 2005)"
    tails = [t for t in _TAIL_SEPARATOR.finditer(h, max(8, len(h) - 60))]
    if tails and venue_label(h[tails[-1].end():]):
        return h[: tails[-1].start()]
    return h
