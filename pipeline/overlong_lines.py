"""Notes on the lines of a document too long for segment to read as a paper's title.

Segment skips such a line silently (:func:`pipeline.candidates.candidate_of`); these notes go to
the document's ``notes`` (:func:`pipeline.segment.segment_documents`), so that a paper it names
is not lost without a word: a Markdown heading longer than :data:`MAX_TITLE_CHARS`, a table row
longer than :data:`MAX_ROW_CHARS` (a huge title cell).
"""

from __future__ import annotations

import re

from .candidates import MAX_ROW_CHARS
from .line_kinds import MAX_TITLE_CHARS
from .textutil import plain

#: A Markdown heading line (ATX: 1-6 ``#``), its text in group 1.
_MARKDOWN_HEADING = re.compile(r"^ {0,3}#{1,6}[ \t]+(.+?)[ \t#]*$", re.M)
#: A table row line (its first character a ``|``), the row in group 1; longer rows only, so that
#: the common short rows never leave the regex engine.
_LONG_TABLE_ROW = re.compile(rf"^[ \t]*(\|[^\r\n]{{{MAX_ROW_CHARS},}})", re.M)


def overlong_line_notes(text: str) -> list[str]:
    """A note per Markdown heading of ``text`` longer than :data:`MAX_TITLE_CHARS` characters
    (never a paper's title) and per table row longer than :data:`MAX_ROW_CHARS` (read for no
    title, as junk), in text order; each names the length, the limit and the line's start."""
    notes: list[tuple[int, str]] = []
    for m in _MARKDOWN_HEADING.finditer(text):
        heading = plain(m.group(1)).strip()
        if len(heading) > MAX_TITLE_CHARS:
            notes.append((m.start(), f"segment: a heading of {len(heading):,} characters (a title has at most "
                                     f"{MAX_TITLE_CHARS}) starts no section: {heading[:60]!r}..."))
    for m in _LONG_TABLE_ROW.finditer(text):
        row = m.group(1).rstrip()
        if len(row) > MAX_ROW_CHARS:
            start = plain(row[:200].strip("| \t")).strip()
            notes.append((m.start(), f"segment: a table row of {len(row):,} characters (a row has at most "
                                     f"{MAX_ROW_CHARS:,}) starts no section: {start[:60]!r}..."))
    return [note for _, note in sorted(notes)]
