"""Where a paper appeared, read off the lines by its title (helpers of :mod:`pipeline.extract`):
dated venue mentions, the mention nearest the title, a reference's tail, unlisted venue lines,
and news of acceptance. Every function takes a line or a few, never a whole document.
"""
from __future__ import annotations

import re

from . import paper_records
from .fields import find_venue_years
from .textutil import MD_LINK_GROUP

#: A year anywhere in a value, not part of a longer number or a version ("2019." ends a sentence).
ANY_YEAR = re.compile(r"(?<![\d.])((?:19|20)\d\d)(?!\d|\.\d)")
#: A reference's tail after an English title: ". In [Proceedings of] <venue and year>.".
CITATION_TAIL = re.compile(r"\.\s+In\s+[^.]{2,80}\.?\s*$")


#: A year and a meeting word right before a venue's written-out name or the name its bracketed
#: acronym follows ("the 2022 Annual Conference of the ...").
_EDITION_BEFORE = re.compile(
    r"\b((?:19|20)\d\d)\s+(?:[A-Z][a-z]+\s+){0,2}(?:Conference|Meeting|Symposium|Workshop)\s+(?:of|on)\s+(?:the\s+)?"
    r"(?:[A-Z][^()\n]{0,90}\(\s*)?$")
#: Characters before a venue mention searched for :data:`_EDITION_BEFORE`.
EDITION_LOOKBACK = 150


def dated_mentions(mentions: list[tuple[str, int | None, int, int]], text: str) -> list[tuple[str, int | None, int, int]]:
    """The ``find_venue_years`` mentions of ``text`` with a year, their own or an edition year
    before the venue's full name; undated ones dropped."""
    out = []
    for venue, year, start, end in mentions:
        if year is None and (m := _EDITION_BEFORE.search(text[max(0, start - EDITION_LOOKBACK):start])):
            year = int(m.group(1))
        if year is not None:
            out.append((venue, year, start, end))
    return out


#: What a venue line holds besides the name: links, years, a publisher, conference/journal words.
_VENUE_LINE_NOISE = re.compile(
    MD_LINK_GROUP + r"|(?<![\d.])(?:19|20)\d\d(?!\d)\s*年?"
    r"|会议|會議|期刊|论文|論文|\b(?:conference|proceedings|journal)\b", re.I)
#: A publisher before a venue's name ("IEEE S&P").
_VENUE_PUBLISHER = re.compile(r"^(?:IEEE|ACM|USENIX)(?:\s+|$)")
#: Longest venue name (characters) read off a venue line the venue list does not know.
MAX_UNLISTED_VENUE_CHARS = 30


def unlisted_venue(value: str) -> str | None:
    """The venue of a metadata line the venue list does not know ("IEEE S&P 2019" -> "S&P"): a
    full name (``data/venue_names.json``), else the line without noise; None when nothing short is
    left, or only a preprint server."""
    name = " ".join(_VENUE_LINE_NOISE.sub(" ", value).split()).strip(" ,，.;；:：()（）[]")
    if not name or not any(c.isalpha() for c in name):
        return None
    full = paper_records.record_venue(name)[0]
    if full is not None and full != name:
        return full  # a full name the venue list spells out
    name = _VENUE_PUBLISHER.sub("", name)
    if not name or len(name) > MAX_UNLISTED_VENUE_CHARS:  # (a publisher alone names no venue)
        return None
    return paper_records.record_venue(name)[0]


#: A venue a lab's news says accepted the paper: "已被 <venue> 录用/接收/收录".
_ZH_ACCEPTED = re.compile(r"被\s*(?P<venue>[^，。；！!？?]{2,80}?)\s*(?:正式)?(?:录用|錄用|接收|收录|收錄|接受)")
#: A description before the venue's name ("CCF-A类期刊", "中科院一区TOP期刊").
_VENUE_DESCRIPTION = re.compile(r"^.*?(?:期刊|会议|會議|大会|大會)\s*(?=[A-Z])")
#: A venue's acronym in brackets, maybe with a two-digit edition ("（ChinaMM26）", "(TIFS)").
_BRACKET_ACRONYM = re.compile(r"[（(](?P<name>[A-Za-z][A-Za-z&-]{1,15}?)(?:['’]?\d{2})?[)）]")


def accepted_venue(text: str) -> tuple[str, int | None] | None:
    """``(venue, year)`` a "已被 … 录用" clause names: a listed venue, else the bracketed acronym,
    else the name after a description; None without such a clause."""
    m = _ZH_ACCEPTED.search(text)
    if m is None:
        return None
    span = m.group("venue")
    dated = ANY_YEAR.search(span)
    year = int(dated.group(1)) if dated else None
    listed = find_venue_years(span)
    if listed:
        return listed[0][0], listed[0][1] or year
    if acronym := _BRACKET_ACRONYM.search(span):
        return acronym.group("name"), year
    name = unlisted_venue(_VENUE_DESCRIPTION.sub("", span))
    return (name, year) if name else None


#: Words that make a venue mention a submission rather than a publication.
SUBMITTED_ONLY = re.compile(r"\bunder\s+review\b|投稿中|在审|在審", re.I)


def reference_tail(heading: str) -> list[tuple[str, int | None, int, int]]:
    """The first venue mention and the one year of a reference's tail on a heading ("Title. In
    EMNLP W-NUT Workshop 2019." -> EMNLP 2019); [] without a tail or with two years."""
    tail = CITATION_TAIL.search(heading) if " In " in heading else None
    if tail is None:
        return []
    venues = find_venue_years(tail.group(0))
    years = set(ANY_YEAR.findall(tail.group(0)))
    if not venues or len(years) != 1:
        return []
    return [(venues[0][0], int(years.pop()), tail.start(), tail.end())]


def nearest_first(mentions: list[tuple[str, int | None, int, int]], text: str,
                   title: str | None) -> list[tuple[str, int | None, int, int]]:
    """``text``'s venue mentions, the one nearest the title's first occurrence after the heading
    first; in text order when the title does not occur there or only one is given."""
    if len(mentions) < 2 or not title:
        return mentions
    head_end = text.find("\n")
    at = text.casefold().find(title.casefold(), head_end + 1) if head_end >= 0 else -1
    if at < 0:
        return mentions
    return sorted(mentions, key=lambda t: min(abs(t[2] - at), abs(t[3] - at)))
