"""Layouts of a list of papers that tell which lines are its entries, for the segmenter's choice of
anchors (:mod:`pipeline.segment`, :func:`choose_anchors`)."""

from __future__ import annotations

import bisect
import re
from collections import Counter

from .candidates import (
    Candidate,
    has_paper_evidence,
    html_to_markdown,
)
from .fields import (
    parse_key_value,
)
from .headings import LIST_NUMBER
from .line_kinds import (
    _BOLD_LINE,
    MAX_AWARD_HEADER_CHARS,
    _heading_level,
    _venue_heading,
)
from .textutil import Line, plain

#: Title score at which a kept title is evidence enough that a document is about one paper.
CONFIDENT_TITLE_SCORE = 0.8


#: Candidate styles of Markdown headings.
_HEADING_STYLES = frozenset({"md1", "md2", "md3"})

#: Opening lines of a one-paper page that may give its paper's award (and venue edition).
ONE_PAPER_AWARD_LINES = 5


#: Highest score of a sub-heading read as a part of the explainer above it (:func:`_explainer_parts`).
MAX_PART_SCORE = 0.6


#: Lines above the heading of a one-paper explainer (a date, a tag line).
MAX_EXPLAINER_HEAD_LINE = 2


def _explainer_parts(lines: list[Line], cands: list[Candidate], scores, chosen: dict[int, Candidate]) -> None:
    """Drop a one-paper explainer's sub-headings from ``chosen``: when the first kept title is a
    confident top heading and every other is a deeper heading or bold lead scoring below
    :data:`MAX_PART_SCORE` without paper evidence of its own."""
    if len(chosen) < 2:
        return
    first = min(chosen)
    head = chosen[first]
    if first > MAX_EXPLAINER_HEAD_LINE or head.style not in ("md1", "md2"):
        return
    score = {c.line: p for c, p in zip(cands, scores, strict=True) if c.line in chosen}
    if score[first] < CONFIDENT_TITLE_SCORE:
        return
    top = _heading_level(lines[first].stripped)
    rest = [at for at in chosen if at != first]
    for at in rest:
        c = chosen[at]
        level = _heading_level(lines[at].stripped)
        deeper = c.style in ("bold_lead", "bold_line") or (c.style in _HEADING_STYLES and level > top)
        if not deeper or score[at] >= MAX_PART_SCORE or has_paper_evidence(c):
            return
    for at in rest:
        del chosen[at]


#: Lines after a heading whose labels make its layout signature (see :func:`_sibling_headings`).
SIGNATURE_LINES = 3


_LINE_LABEL = re.compile(r"^[^:：]{1,24}(?=[:：])")


def _signature(lines: list[Line], at: int) -> tuple[str, ...]:
    """The labels ("Track", "Authors", "作者") of the lines right after a heading."""
    labels = []
    for line in lines[at + 1 : at + 1 + SIGNATURE_LINES]:
        if _heading_level(line.stripped) and not _BOLD_LINE.match(line.stripped):
            break
        m = _LINE_LABEL.match(plain(line.stripped).strip())
        labels.append(m.group(0).strip().casefold() if m else "")
    return tuple(labels) if any(labels) else ()


def _sibling_headings(lines: list[Line], cands: list[Candidate], eligible: list[bool],
                      chosen: dict[int, Candidate]) -> None:
    """Headings of one level laid out alike: when at least two and half of a level's headings are
    kept titles, another heading there whose following labels match most kept ones' is a title
    too (an extra label does not set it apart). Updates ``chosen`` in place."""
    for style in _HEADING_STYLES:
        same = [k for k, c in enumerate(cands) if c.style == style]
        kept = [k for k in same if cands[k].line in chosen]
        if len(kept) < 2 or 2 * len(kept) < len(same) or len(kept) == len(same):
            continue
        common = Counter(_signature(lines, cands[k].line) for k in kept).most_common(1)[0]
        if not common[0] or 2 * common[1] < len(kept):
            continue
        for k in same:
            if cands[k].line not in chosen and eligible[k] and _same_layout(_signature(lines, cands[k].line), common[0]):
                chosen[cands[k].line] = cands[k]


#: Fewest kept titles of one block layout for its other blocks to be titles (:func:`_sibling_blocks`).
MIN_SIBLING_BLOCKS = 3
#: Candidate styles of a marked paragraph line (not a list item, table row, heading or key).
_BLOCK_STYLES = frozenset({"bold_line", "bold_lead", "link_lead", "quoted", "book"})


def _sibling_blocks(cands: list[Candidate], eligible: list[bool], chosen: dict[int, Candidate]) -> None:
    """Paragraph blocks laid out alike (a marked line with a marked line of one style under it):
    when at least :data:`MIN_SIBLING_BLOCKS` and half of one layout's blocks between its first and
    last kept one are kept titles, the other eligible ones are titles too (``chosen`` in place)."""
    at_line = {c.line: c for c in cands}
    layouts: dict[tuple[str, str], list[int]] = {}
    for k, c in enumerate(cands):
        below = at_line.get(c.line + 1)
        if below is not None and c.style in _BLOCK_STYLES:
            layouts.setdefault((c.style, below.style), []).append(k)
    for members in layouts.values():
        kept = [cands[k].line for k in members if cands[k].line in chosen]
        if len(kept) < MIN_SIBLING_BLOCKS:
            continue
        inside = [k for k in members if kept[0] <= cands[k].line <= kept[-1]]
        if 2 * len(kept) >= len(inside):
            chosen.update({cands[k].line: cands[k] for k in inside if eligible[k]})


def _same_layout(signature: tuple[str, ...], common: tuple[str, ...]) -> bool:
    """Whether a heading's :func:`_signature` has every common label in its place."""
    return len(signature) == len(common) and all(a == b for a, b in zip(signature, common, strict=True) if b)


#: A running number that opens a marked line ("**1、Title**", "## 2. Title").
_RUNNING_NUMBER = re.compile(rf"^(?:#{{1,6}}\s+|\*\*|__)?\s*(?:({LIST_NUMBER})\s*[.、．]|(?:论文|論文|[Pp]aper|PAPER)\s*(\d{{1,5}})\s*[：:.、])")


#: Fewest items of a numbered run for its unkept items to follow the kept ones.
MIN_NUMBERED_RUN = 3


def _numbered_siblings(lines: list[Line], cands: list[Candidate], eligible: list[bool],
                       chosen: dict[int, Candidate]) -> None:
    """Items of one style numbered 1, 2, 3, …: when at least two and half of a run of
    :data:`MIN_NUMBERED_RUN` or more are kept titles, or one of a run of numbered paper headings,
    the others are titles too (``chosen`` in place)."""
    runs: dict[str, list[list[int]]] = {}
    for k, c in enumerate(cands):
        if c.style == "plain" or c.style == "table":
            continue
        m = _RUNNING_NUMBER.match(lines[c.line].stripped)
        if m is None:
            continue
        n, style_runs = int(m.group(1) or m.group(2)), runs.setdefault(c.style, [])
        if style_runs and n == _number_of(lines, cands[style_runs[-1][-1]]) + 1:
            style_runs[-1].append(k)
        else:
            style_runs.append([k])
    for run in (r for style_runs in runs.values() for r in style_runs if len(r) >= MIN_NUMBERED_RUN):
        kept = sum(cands[k].line in chosen for k in run)
        # a run numbering papers ("论文 1：") says what its items are: one kept item is enough
        if kept >= 2 and 2 * kept >= len(run) or (kept and cands[run[0]].style == "numbered"):
            chosen.update({cands[k].line: cands[k] for k in run if eligible[k]})


def _number_of(lines: list[Line], cand: Candidate) -> int:
    m = _RUNNING_NUMBER.match(lines[cand.line].stripped)
    return int(m.group(1) or m.group(2)) if m else -1


#: Fewest entries, and notes, of a list whose entries each may carry a note line.
MIN_NOTED_ENTRIES = 3


MIN_NOTES = 2


def _entries_with_notes(cands: list[Candidate], scores, eligible: list[bool], items: list[int],
                        chosen: dict[int, Candidate]) -> None:
    """Entries of a list that may each carry a note line of another style: in a stretch of
    ``items`` of two styles where every note follows an entry and at least half the entries have
    one, the higher-scoring style is the entries'. When at least two and half of them are kept,
    every entry is a title and no note is (``chosen`` in place)."""

    def settle(stretch: list[int], entry: str | None, note: str | None) -> None:
        if entry is None or note is None or entry == "plain":
            return
        entries = [k for k in stretch if cands[k].style == entry]
        notes = [k for k in stretch if cands[k].style == note]
        if len(entries) < MIN_NOTED_ENTRIES or len(notes) < MIN_NOTES or 2 * len(notes) < len(entries):
            return
        if sum(scores[k] for k in entries) / len(entries) <= sum(scores[k] for k in notes) / len(notes):
            return
        kept = sum(cands[k].line in chosen for k in entries)
        if kept < 2 or 2 * kept < len(entries):
            return
        chosen.update({cands[k].line: cands[k] for k in entries if eligible[k]})
        for k in notes:
            chosen.pop(cands[k].line, None)

    stretch: list[int] = []
    entry = note = None
    for k in items:
        style, prev = cands[k].style, cands[stretch[-1]].style if stretch else None
        if style == "plain" and cands[k].line not in chosen:
            continue  # a line of prose (a note without list markup)
        if stretch and (style == entry or (prev == entry and style == (note := note or style))):
            stretch.append(k)
            continue
        settle(stretch, entry, note)
        stretch, entry, note = [k], style, None
    settle(stretch, entry, note)


def _metadata_anchors(lines: list[Line], kinds: list[str]) -> dict[int, str | None]:
    """Anchors of articles whose papers are marked only by metadata blocks with a title line.

    When more body text follows the last block than precedes the first, each block opens its
    section; otherwise a section runs from after the previous block to the end of its block,
    headed by the block's title.

    Returns ``{start line: heading}``; None: the start line is the heading.
    """
    is_meta = [k in ("kv", "kv_title") for k in kinds]
    blocks: list[tuple[int, int]] = []
    i = 0
    while i < len(kinds):
        if is_meta[i]:
            j = i
            while j + 1 < len(kinds) and is_meta[j + 1]:
                j += 1
            if "kv_title" in kinds[i : j + 1]:
                blocks.append((i, j))
            i = j + 1
        else:
            i += 1
    if not blocks:
        return {}
    first = 1 if len(lines) > 1 and len(lines[0].stripped) <= MAX_AWARD_HEADER_CHARS else 0

    def body_chars(indices: range) -> int:
        return sum(len(lines[k].stripped) for k in indices if kinds[k] == "body" and not _heading_level(lines[k].stripped))

    # the body before the first block is its paper's unless an award header, heading or venue line intervenes
    lead_end = max((k + 1 for k in range(first, blocks[0][0])
                    if kinds[k] == "award_header" or _heading_level(lines[k].stripped) or _venue_heading(lines[k].stripped)),
                   default=first)
    if body_chars(range(blocks[-1][1] + 1, len(kinds))) > body_chars(range(lead_end, blocks[0][0])):
        return dict.fromkeys(start for start, _ in blocks)
    starts = [lead_end] + [end + 1 for _, end in blocks[:-1]]
    titles = [next(plain(lines[k].stripped) for k in range(a, b + 1) if kinds[k] == "kv_title") for a, b in blocks]
    return {i: _kv_title(t) for i, t in zip(starts, titles, strict=True)
            if i < len(kinds) and kinds[i] not in ("award_header", "reference")}


def _kv_title(line: str) -> str | None:
    """The value of a ``Title: …`` metadata line."""
    kv = parse_key_value(line)
    return kv[1] if kv is not None else None


#: Fewest items, and kept titles among them, of a list under an award header for all to be titles.
MIN_AWARD_LIST_ITEMS = 3


MIN_AWARD_LIST_KEPT = 2


def _award_lists(cands: list[Candidate], kinds: list[str], eligible: list[bool],
                 chosen: dict[int, Candidate]) -> None:
    """The list under an award header (items of one style until the next heading or header): with
    :data:`MIN_AWARD_LIST_ITEMS` items and :data:`MIN_AWARD_LIST_KEPT` kept titles, all are titles
    (``chosen`` in place)."""
    k = 0
    while k < len(cands):
        if kinds[cands[k].line] != "award_header":
            k += 1
            continue
        group = []
        k += 1
        while (k < len(cands) and kinds[cands[k].line] != "award_header" and cands[k].style not in _HEADING_STYLES
               and (not group or cands[k].style == cands[group[0]].style)):
            group.append(k)
            k += 1
        if (len(group) >= MIN_AWARD_LIST_ITEMS and cands[group[0]].style != "plain"
                and sum(cands[j].line in chosen for j in group) >= MIN_AWARD_LIST_KEPT):
            chosen.update({cands[j].line: cands[j] for j in group if eligible[j]})


def _next_anchor(chosen: dict[int, Candidate], order: list[int], line: int) -> Candidate | None:
    """The first anchor of ``chosen`` after ``line``; ``order``: sorted lines holding every key."""
    for k in range(bisect.bisect_right(order, line), len(order)):
        if order[k] in chosen:
            return chosen[order[k]]
    return None


def _next_text_line(lines: list[Line], at: int) -> int:
    """The first line after ``at`` with text besides HTML tags; ``-1`` when none within 3 lines."""
    for j in range(at + 1, min(at + 4, len(lines))):
        if html_to_markdown(lines[j].stripped).strip():
            return j
    return -1
