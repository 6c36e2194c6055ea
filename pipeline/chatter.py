"""Chat-assistant text pasted into articles: a reasoning model's ``<think>`` blocks
(:func:`think_blocks`) and the openings of a chat reply (:func:`opens_reply`, the phrases of
:data:`CHATTER_FILE`). :mod:`pipeline.clean` drops what they find as ``llm_chatter``."""

from __future__ import annotations

import functools
import re
import unicodedata

from .textutil import data_lines

#: Openings of a chat assistant's reply, one per line (``pipeline/data``).
CHATTER_FILE = "llm_chatter.txt"

#: A reasoning model's thinking tags; a block runs to its balancing closing tag (else the last one).
_THINK_TAG = re.compile(r"<(/?)think>", re.I)
_THINK_LINE_OPENER = re.compile(r"^[ \t]*(<think>)", re.I | re.M)


@functools.cache
def _phrases() -> tuple[str, ...]:
    """The phrases of :data:`CHATTER_FILE`, NFKC-normalised and case-folded."""
    return tuple(unicodedata.normalize("NFKC", ln).casefold() for ln in data_lines(CHATTER_FILE))


@functools.cache
def _initials() -> frozenset[str]:
    return frozenset(p[0] for p in _phrases())


def _glued_word(phrase: str, after: str) -> bool:
    """Whether ``after`` continues the phrase's last Latin word ("Great question" / "questions")."""
    return bool(after) and phrase[-1].isascii() and phrase[-1].isalnum() and after.isalnum()


def opens_reply(body: str) -> bool:
    """Whether ``body`` (without leading decoration) opens with a :data:`CHATTER_FILE` phrase
    (NFKC, case-folded), a Latin last word ending whole."""
    if unicodedata.normalize("NFKC", body[:1]).casefold() not in _initials():
        return False  # (most lines: one character looked at)
    head = unicodedata.normalize("NFKC", body[:40]).casefold()
    return head.startswith(_phrases()) and any(
        head.startswith(p) and not _glued_word(p, head[len(p):len(p) + 1]) for p in _phrases())


def think_blocks(text: str) -> list[tuple[int, int]]:
    """``(start, end)`` of each ``<think>…</think>`` block: from an opening tag at a line start to
    its balancing closing tag, or to the last closing tag when the text ends first; unclosed or
    unopened tags are text. Linear."""
    blocks: list[tuple[int, int]] = []
    line_openers = {m.start(1) for m in _THINK_LINE_OPENER.finditer(text)}
    start, depth, last_close = -1, 0, -1
    for m in _THINK_TAG.finditer(text):
        if not m.group(1):
            if depth == 0:
                if m.start() not in line_openers:
                    continue
                start = m.start()
            depth += 1
        elif depth:
            depth -= 1
            last_close = m.end()
            if depth == 0:
                blocks.append((start, last_close))
    if depth and last_close > start:
        blocks.append((start, last_close))
    return blocks
