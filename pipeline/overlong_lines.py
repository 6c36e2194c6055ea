"""Notes on lines too long for segment to read as a paper's title, which it skips silently
(:func:`pipeline.candidates.candidate_of`): headings over :data:`MAX_TITLE_CHARS`, table rows over
:data:`MAX_ROW_CHARS`, and rows whose title cell is over :data:`MAX_TITLE_CHARS`. They go to the
document's ``notes`` so no paper is lost without a word.
"""

from __future__ import annotations

import re

from .candidates import _TABLE_ROW, MAX_ROW_CHARS, _is_table_rule, _table_cells, title_header_cell
from .line_kinds import MAX_TITLE_CHARS
from .textutil import plain

#: A Markdown heading line (ATX: 1-6 ``#``), its text in group 1.
_MARKDOWN_HEADING = re.compile(r"^ {0,3}#{1,6}[ \t]+(.+?)[ \t#]*$", re.M)
#: A table row line over :data:`MAX_ROW_CHARS` (short rows never leave the regex engine).
_LONG_TABLE_ROW = re.compile(rf"^[ \t]*(\|[^\r\n]{{{MAX_ROW_CHARS},}})", re.M)
#: A table row line longer than a title may be, so that its title cell may be longer.
_ROW_OVER_TITLE = re.compile(rf"^[ \t]*\|[^\r\n]{{{MAX_TITLE_CHARS},}}", re.M)


def _long_title_cell_notes(text: str) -> list[tuple[int, str]]:
    """``(offset, note)`` per row of at most :data:`MAX_ROW_CHARS` whose title-header cell
    (:func:`pipeline.candidates.title_header_cell`) is over :data:`MAX_TITLE_CHARS`."""
    if not _ROW_OVER_TITLE.search(text):
        return []
    notes: list[tuple[int, str]] = []
    lines = [(m.start(), m.group().strip()) for m in re.finditer(r"[^\n]+", text)]
    header: list[str] | None = None
    for i, (at, line) in enumerate(lines):
        if not _TABLE_ROW.match(line) or _is_table_rule(line):
            header = header if _is_table_rule(line) or not line else None
            continue
        if i + 1 < len(lines) and _is_table_rule(lines[i + 1][1]):
            header = _table_cells(line)
        elif header and MAX_TITLE_CHARS < len(line) <= MAX_ROW_CHARS:
            title = title_header_cell(_table_cells(line), header)
            if title is not None and len(title) > MAX_TITLE_CHARS:
                notes.append((at, f"segment: a table row's title cell of {len(title):,} characters (a title has "
                                  f"at most {MAX_TITLE_CHARS}) starts no section: {title[:60]!r}..."))
    return notes


#: Most notes listed per document; one more note counts the rest.
MAX_LINE_NOTES = 20


def overlong_line_notes(text: str) -> list[str]:
    """One note per overlong heading, row or title cell, in text order (length, limit, line start);
    past :data:`MAX_LINE_NOTES`, one note counts the rest."""
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
    notes += _long_title_cell_notes(text)
    listed = [note for _, note in sorted(notes)[:MAX_LINE_NOTES]]
    if len(notes) > MAX_LINE_NOTES:
        listed.append(f"segment: {len(notes) - MAX_LINE_NOTES:,} more headings or table rows too long to be a "
                      "title start no section (not listed)")
    return listed
