"""Whether a venue mention says where a paper appeared or only where it was sent ("Submitted to
ICLR 2025", "投稿至 ICLR 2025", "the ICML 2024 reviewers").

The nearest cue before the mention in its sentence decides (submission, or acceptance such as
"accepted at", "录用"); with none before, the first after. Sentences end at ``. ! ? ;`` before a
space, ``。！？；`` or a line break.
"""
from __future__ import annotations

import re

from .fields import find_venue_years

#: Words that put a venue mention in a submission, a review or a rejection.
_NOT_ACCEPTED = re.compile(
    r"\b(?:submitted|submission|submitting|under\s+review|in\s+review|rejected|rejection|reviewers?)\b"
    r"|投稿|审稿|審稿|在审|在審|被拒|拒稿|拒绝|拒絕", re.I)
#: Words that put a venue mention in an acceptance or a publication.
_ACCEPTED = re.compile(
    r"\b(?:accepted|acceptance|published|appears?|appeared|appearing|presented|oral|spotlight)\b"
    r"|录用|錄用|接收|收录|收錄|发表|發表|中稿", re.I)
#: Longest reach of a cue from its mention, in characters (a sentence rarely runs longer).
MAX_SENTENCE_CHARS = 400
#: The end of a sentence or clause that a mention's cue does not reach across.
_SENTENCE_END = re.compile(r"[.!?;](?=\s)|[。！？；\n]")


def not_accepted(text: str, start: int, end: int) -> bool:
    """Whether ``text[start:end]`` is named as a submission, review or rejection by its sentence."""
    before = text[max(0, start - MAX_SENTENCE_CHARS):start]  # (bounded: a page of many mentions stays linear)
    ends = list(_SENTENCE_END.finditer(before))
    head = before[ends[-1].end():] if ends else before
    cues = [(m.start(), m.re is _NOT_ACCEPTED) for p in (_NOT_ACCEPTED, _ACCEPTED) for m in p.finditer(head)]
    if cues:
        return max(cues)[1]
    stop = _SENTENCE_END.search(text, end, end + MAX_SENTENCE_CHARS)
    tail = text[end: stop.start() if stop else end + MAX_SENTENCE_CHARS]
    cues = [(m.start(), m.re is _NOT_ACCEPTED) for p in (_NOT_ACCEPTED, _ACCEPTED) for m in p.finditer(tail)]
    return min(cues)[1] if cues else False


def published_venue_years(text: str) -> list[tuple[str, int | None, int, int]]:
    """:func:`pipeline.fields.find_venue_years` of ``text`` without :func:`not_accepted` mentions."""
    found = find_venue_years(text)
    if not found or not (_NOT_ACCEPTED.search(text)):
        return found
    return [m for m in found if not not_accepted(text, m[2], m[3])]
