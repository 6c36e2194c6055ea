"""Patterns of paper headings shared by segment (which lines start a section) and extract
(which title a heading gives), so that both read a heading the same way.

All patterns work on one line with Markdown markup already removed (:func:`pipeline.textutil.plain`).
"""

from __future__ import annotations

import re

#: ``论文 1：``, ``論文2:``, ``Paper 3.``, ``论文三、``
NUMBERED_PREFIX = r"(?:论文|論文|Paper|PAPER|paper)\s*(?:\d+|[一二三四五六七八九十]+)\s*[：:.、]\s*"
#: ``1.``, ``2、``, ``一、``, ``（一）``, ``(2)``
ENUMERATION_PREFIX = (
    r"(?:\d{1,2}[.、．]|[一二三四五六七八九十]{1,3}[、．.]|[（(](?:\d{1,2}|[一二三四五六七八九十]{1,3})[）)])\s*"
)

NUMBERED_HEADING = re.compile(rf"^{NUMBERED_PREFIX}(?P<title>.*)$")
ENUMERATED_HEADING = re.compile(rf"^{ENUMERATION_PREFIX}(?P<title>\S.*)$")
NUMBERED_PREFIX_RE = re.compile(rf"^{NUMBERED_PREFIX}")
ENUMERATION_PREFIX_RE = re.compile(rf"^{ENUMERATION_PREFIX}")
#: ``《Title》`` with an optional gloss ``（译名）`` after it; the gloss may hold ``(1)``.
BOOK_TITLE = re.compile(r"《(?P<inner>[^《》]+)》\s*(?:[（(](?P<gloss>(?:[^（）()]|\([^()]*\))+)[）)])?")
#: ``A（B）`` / ``A (B)``: a title followed by its translation, either way round.
BILINGUAL = re.compile(r"(?P<a>[^（(]+?)\s*[（(](?P<b>[^）)]+)[）)]\s*")
