"""Input formats: what a file of each supported type holds, as text plus document metadata.

Pure functions over ``bytes``/``str`` (file I/O and decoding: :mod:`pipeline.ingest`). No
network: trafilatura and htmldate get an already parsed tree, never a URL.

========================  ====================================================================
suffix                    documents
========================  ====================================================================
``.txt``, ``.md``         one per file; the decoded text
``.html``, ``.htm``       one per file; main content as Markdown (:func:`extract_html`)
``.jsonl``                one per non-blank line (:func:`parse_jsonl_line`)
``.csv``, ``.tsv``        one per row after the header (:func:`parse_record`)
``.yml``, ``.yaml``       one per record (:func:`yaml_records`, :func:`parse_record`)
========================  ====================================================================

A record is an *article* when a text field holds text, else a *paper record* when it has a
title-like field (:mod:`pipeline.paper_records`).
"""

from __future__ import annotations

import codecs
import copy
import dataclasses
import json
import logging
import math
import re
from dataclasses import dataclass, field
from typing import Any

import lxml.html
import markdownify
import trafilatura
from lxml import etree

from . import paper_records
from .config import (  # noqa: F401 (re-exported)
    CSV_SUFFIXES,
    HTML_SUFFIXES,
    JSONL_SUFFIXES,
    RECORD_SUFFIXES,
    SUPPORTED_SUFFIXES,
    TEXT_SUFFIXES,
    YAML_SUFFIXES,
)

log = logging.getLogger(__name__)


#: Bytes of an HTML file the ``<meta charset>`` prescan reads (WHATWG HTML 13.2.3.2).
CHARSET_PRESCAN_BYTES = 1024

# WHATWG Encoding Standard labels (https://encoding.spec.whatwg.org/#names-and-labels) -> the
# Python codec that decodes as the standard's decoder does.
_WHATWG_LABELS = {
    **dict.fromkeys(("chinese", "csgb2312", "csiso58gb231280", "gb2312", "gb_2312", "gb_2312-80", "gbk",
                     "iso-ir-58", "x-gbk", "gb18030"), "gb18030"),
    **dict.fromkeys(("big5", "big5-hkscs", "cn-big5", "csbig5", "x-x-big5"), "big5hkscs"),
    **dict.fromkeys(("ansi_x3.4-1968", "ascii", "cp1252", "cp819", "csisolatin1", "ibm819", "iso-8859-1",
                     "iso-ir-100", "iso8859-1", "iso88591", "iso_8859-1", "iso_8859-1:1987", "l1", "latin1",
                     "us-ascii", "windows-1252", "x-cp1252", "x-user-defined"), "cp1252"),
    **dict.fromkeys(("unicode", "unicode-1-1-utf-8", "unicode11utf8", "unicode20utf8", "utf-8", "utf8",
                     "x-unicode20utf8", "csunicode", "iso-10646-ucs-2", "ucs-2", "unicodefeff", "unicodefffe",
                     "utf-16", "utf-16be", "utf-16le"), "utf-8"),
}
_COMMENT = re.compile(rb"<!--.*?(?:-->|\Z)", re.S)
_META = re.compile(rb"<meta[\s/]([^>]*)>?", re.I)
_ATTR = re.compile(rb"""([^\s=/>]+)\s*(?:=\s*("[^"]*"|'[^']*'|[^\s>]+))?""")
_CHARSET_IN_CONTENT = re.compile(rb"""charset\s*=\s*["']?([^\s"';]+)""", re.I)


def charset_label_to_codec(label: str) -> str | None:
    """The Python codec for an HTML encoding label (``"GB2312"``, ``"big5"``): WHATWG labels
    per ``_WHATWG_LABELS``, else Python's codec lookup; None when unknown."""
    label = label.strip().lower()
    if label in _WHATWG_LABELS:
        return _WHATWG_LABELS[label]
    try:
        return codecs.lookup(label).name
    except LookupError:
        return None


def sniff_html_charset(data: bytes) -> str | None:
    """The codec an HTML file declares in its first :data:`CHARSET_PRESCAN_BYTES` bytes
    (simplified WHATWG prescan, HTML 13.2.3.2): the first ``<meta charset>`` or ``http-equiv``
    content-type with a known label. Returns a Python codec name or None; never raises."""
    head = _COMMENT.sub(b"", data[:CHARSET_PRESCAN_BYTES])
    for meta in _META.finditer(head):
        attrs: dict[bytes, bytes] = {}
        for m in _ATTR.finditer(meta.group(1)):
            attrs.setdefault(m.group(1).lower(), (m.group(2) or b"").strip(b"\"'"))
        label = attrs.get(b"charset")
        if not label and attrs.get(b"http-equiv", b"").lower() == b"content-type":
            found = _CHARSET_IN_CONTENT.search(attrs.get(b"content", b""))
            label = found.group(1) if found else None
        if label:
            codec = charset_label_to_codec(label.decode("ascii", "replace"))
            if codec:
                return codec
    return None


#: trafilatura.extract settings: Markdown keeps headings, list items, links and paragraph breaks.
TRAFILATURA_OPTIONS: dict[str, Any] = {
    "output_format": "markdown",
    "include_formatting": True,
    "include_links": True,
    "include_tables": True,
    "include_comments": False,
    "include_images": False,
    "with_metadata": False,
    "deduplicate": False,
    # precision mode drops <h2>/<h3> outside <article>/<main>; clean drops the furniture recall keeps
    "favor_recall": True,
}
# htmldate from markup only: the extensive search read a footer's "© 2024" as a date.
_EXTENSIVE_DATE_SEARCH = False

# trafilatura's Markdown escapes CommonMark punctuation ("foo\_bar"); our text is data, so every
# backslash escape of ASCII punctuation is undone outside code spans and fences.
_MD_UNESCAPE = re.compile(r"(?P<code>(?P<ticks>`+).+?(?<!`)(?P=ticks)(?!`))|\\(?P<ch>[!-/:-@\[-`{-~])", re.S)
# "[url](url)" (trafilatura's bare URL) -> the bare URL.
_AUTOLINK = re.compile(r"\[(?P<url>https?://[^\s\]]+)\]\((?P=url)\)")

_BLOCK_TAGS = frozenset((
    "address", "article", "aside", "blockquote", "dd", "details", "div", "dl", "dt", "figcaption", "figure",
    "footer", "form", "h1", "h2", "h3", "h4", "h5", "h6", "header", "hr", "li", "main", "nav", "ol", "p", "pre",
    "section", "summary", "table", "td", "th", "tr", "ul",
))
_INVISIBLE_TAGS = ("script", "style", "noscript", "template", "head", "title")


@dataclass(frozen=True)
class HtmlContent:
    """What :func:`extract_html` found in a page.

    Attributes:
        text: the main content as Markdown (``""`` when the page has no text).
        title: ``<title>`` text (whitespace collapsed), else trafilatura's, else None.
        url: ``<link rel="canonical">`` href, else trafilatura's (``og:url``), else None.
        published: ``YYYY-MM-DD`` (htmldate), or None.
        notes: what happened on the way, for the ``notes`` column.
    """

    text: str
    title: str | None = None
    url: str | None = None
    published: str | None = None
    notes: tuple[str, ...] = field(default_factory=tuple)


def tidy_markdown(text: str) -> str:
    """Remove CommonMark backslash escapes outside code spans and fences; ``[url](url)`` -> url."""
    if "\\" in text:
        text = _MD_UNESCAPE.sub(lambda m: m.group("code") or m.group("ch"), text)
    return _AUTOLINK.sub(r"\g<url>", text) if "](" in text else text


_TABLE_PARTS = frozenset(("table", "thead", "tbody", "tfoot", "tr", "td", "th"))
#: Elements whose presence inside a table's cells marks it as layout, not data.
_LAYOUT_BLOCKS = ("h1", "h2", "h3", "h4", "h5", "h6", "table")
#: Rows from which a table counts as data whatever its cells hold (Readability's ``_isDataTable``).
DATA_TABLE_ROWS = 10


def _unwrap_layout_tables(tree: etree._Element) -> int:
    """Replace layout tables by their cells as ``<div>`` blocks, in place; returns how many.
    The layout/data test follows Mozilla Readability's ``_isDataTable``."""
    layout = []
    for table in tree.iter("table"):
        rows = [tr for tr in table.iter("tr") if next(tr.iterancestors("table"), None) is table]
        if table.get("role") == "presentation" or table.get("datatable") == "0":
            layout.append(table)
            continue
        if any(table.find(f".//{tag}") is not None for tag in ("caption", "th", "thead", "tfoot", "colgroup")):
            continue
        widest = max((len([c for c in tr if c.tag in ("td", "th")]) for tr in rows), default=0)
        nested = any(table.find(f".//{tag}") is not None for tag in _LAYOUT_BLOCKS)
        if len(rows) < DATA_TABLE_ROWS and (nested or len(rows) <= 1 or widest <= 1):
            layout.append(table)
    owned = set(layout)  # (elements, not id()s: lxml's proxies are freed and their addresses reused)
    parts = [el for el in tree.iter(*_TABLE_PARTS)
             if (el if el.tag == "table" else next(el.iterancestors("table"), None)) in owned]
    for el in parts:  # (changed once all are found: a cell's table is its nearest <table>)
        if el.tag in ("td", "th"):  # a cell is a block; the table and its rows go, their content stays
            el.tag = "div"
            for name in ("colspan", "rowspan"):
                el.attrib.pop(name, None)
        else:
            el.drop_tag()  # (trafilatura drops the headings of blocks nested three deep)
    return len(layout)


def _mark_cell_breaks(tree: etree._Element) -> None:
    """Write each ``<br>`` inside a table cell as the text ``<br>``, in place (GitHub Markdown
    tables' convention), so the segmenter sees the cell's line ends."""
    for br in tree.iter("br"):
        if any(a.tag in ("td", "th") for a in br.iterancestors()):
            br.tail = "<br>" + (br.tail or "")


def _collapse(text: str | None) -> str | None:
    text = " ".join((text or "").split())
    return text or None


def html_to_plain_text(tree: etree._Element) -> str:
    """Plain text of a parsed page's ``<body>`` (the whole tree when none): scripts, styles and
    head left out, each block element and ``<br>`` ends a line, lines joined by a blank line.
    The tree is not changed."""
    body = tree.find(".//body")
    root = copy.deepcopy(body if body is not None else tree)
    etree.strip_elements(root, etree.Comment, etree.ProcessingInstruction, *_INVISIBLE_TAGS, with_tail=False)
    for el in root.iter():
        tag = el.tag.lower() if isinstance(el.tag, str) else ""
        if tag in _BLOCK_TAGS:
            el.text = "\n" + (el.text or "")
            el.tail = "\n" + (el.tail or "")
        elif tag == "br":
            el.tail = "\n" + (el.tail or "")
    raw = "".join(root.itertext())
    lines = (" ".join(line.split()) for line in raw.split("\n"))
    return "\n\n".join(line for line in lines if line)


#: Fewest page headings, and the share of them trafilatura may leave out, before its main content
#: counts as having lost the page's structure.
MIN_PAGE_HEADINGS, MAX_LOST_HEADING_SHARE = 3, 0.5
#: Most headings searched in the extracted text.
MAX_CHECKED_HEADINGS = 200


#: Elements around a page's content, not in it (HTML 5.2 sections 4.3.4, 4.3.5, 4.3.8).
_AROUND_CONTENT_TAGS = frozenset({"nav", "aside", "footer"})
_AROUND_CONTENT_ROLES = frozenset({"navigation", "complementary", "contentinfo"})


def _around_content(el: etree._Element) -> bool:
    return el.tag in _AROUND_CONTENT_TAGS or (el.get("role") or "").strip().lower() in _AROUND_CONTENT_ROLES


def _headings(tree: etree._Element) -> list[etree._Element]:
    """The text-holding ``<h1>``-``<h6>`` of the body outside :data:`_AROUND_CONTENT_TAGS`."""
    body = tree.find(".//body")
    return [h for h in (body if body is not None else tree).iter("h1", "h2", "h3", "h4", "h5", "h6")
            if _collapse(h.text_content()) and not any(map(_around_content, h.iterancestors()))]


def _heading_texts(tree: etree._Element) -> list[str]:
    return [_collapse(h.text_content()) for h in _headings(tree)]


_NON_WORD = re.compile(r"\W+")


def _lost_headings(headings: list[str], text: str) -> int:
    """How many ``headings`` ``text`` leaves out when over :data:`MAX_LOST_HEADING_SHARE` of at
    least :data:`MIN_PAGE_HEADINGS`, else 0; over :data:`MAX_CHECKED_HEADINGS`, a scaled sample."""
    if len(headings) < MIN_PAGE_HEADINGS:
        return 0
    step = math.ceil(len(headings) / MAX_CHECKED_HEADINGS)
    checked = headings[::step]
    flat = _NON_WORD.sub("", text)  # (markup, permalink marks and spacing differ between the two)
    lost = round(sum(_NON_WORD.sub("", h) not in flat for h in checked) * len(headings) / len(checked))
    return lost if lost > MAX_LOST_HEADING_SHARE * len(headings) else 0


def headings_markdown(tree: etree._Element) -> str:
    """The headings' nearest common ancestor as Markdown (``markdownify``); scripts, styles and
    images left out."""
    heads = _headings(tree)
    common = list(heads[0].iterancestors())[::-1] if heads else [tree]
    for h in heads[1:]:
        mine = set(h.iterancestors())
        common = [a for a in common if a in mine]
    root = copy.deepcopy(common[-1])
    etree.strip_elements(root, etree.Comment, etree.ProcessingInstruction, *_INVISIBLE_TAGS, with_tail=False)
    md = markdownify.markdownify(lxml.html.tostring(root, encoding="unicode"), heading_style="ATX", bullets="-",
                                 strip=["img"], escape_asterisks=False, escape_underscores=False)
    return _BLANK_LINES.sub("\n\n", md).strip()


_BLANK_LINES = re.compile(r"\n[ \t]*(?:\n[ \t]*)+")


def _first_title(tree: etree._Element) -> str | None:
    for el in tree.iter("title"):
        title = _collapse(el.text_content() if hasattr(el, "text_content") else "".join(el.itertext()))
        if title:
            return title
    return None


def _canonical(tree: etree._Element) -> str | None:
    for el in tree.iter("link"):
        rel = (el.get("rel") or "").lower().split()
        href = (el.get("href") or "").strip()
        if "canonical" in rel and href:
            return href
    return None


#: What :func:`close_unclosed_title` scans for: comments, raw-text elements (skipped: a
#: ``<title>`` there is no tag) and ``<title>`` start tags. A title's content is RCDATA (WHATWG
#: HTML) up to the next ``</title``, so an unclosed title swallows the page.
_TITLE_TOKENS = re.compile(
    r"(?P<skip><!--(?:-?>|.*?(?:-->|\Z))|<plaintext\b.*"
    r"|<(?P<raw>script|style|xmp|textarea|iframe|noembed|noframes|noscript)\b[^<>]*>.*?(?:</(?P=raw)[\s/>]|\Z))"
    r"|(?P<start><title\b[^<>]*>)",
    re.I | re.S)
#: The next tag after a title's text (``<`` before a letter, ``/``, ``!`` or ``?``), and whether
#: it is the title's end tag.
_NEXT_TAG = re.compile(r"<(?:(?P<end>/title(?=[\s/>]))|[A-Za-z/!?])", re.I)


def close_unclosed_title(html: str) -> str | None:
    """``html`` with ``</title>`` put before the next tag after each unclosed ``<title>``, or None
    when every title is closed. Titles inside comments and raw-text elements are ignored; no parsing."""
    cuts = []
    for m in _TITLE_TOKENS.finditer(html):
        if m.group("start"):
            tag = _NEXT_TAG.search(html, m.end())
            if tag is not None and not tag.group("end"):
                cuts.append(tag.start())
    if not cuts:
        return None
    parts, last = [], 0
    for at in cuts:
        parts += [html[last:at], "</title>"]
        last = at
    return "".join(parts) + html[last:]


#: libxml2's HTML parser depth limit, default and with ``huge_tree`` (lxml 6.1 / libxml2 2.14):
#: what lies deeper is not in the tree.
LXML_MAX_DEPTH = 255
LXML_HUGE_MAX_DEPTH = 2047


def _reaches(tree: etree._Element, depth: int) -> bool:
    """Whether an element of ``tree`` has ``depth`` ancestors or more (one XPath, linear)."""
    return bool(tree.xpath("boolean(" + "/*" * (depth + 1) + ")"))


def _parse_deeper(html: str) -> etree._Element | None:
    """The page parsed with ``huge_tree`` (depth limit :data:`LXML_HUGE_MAX_DEPTH`), or None
    when lxml cannot parse it."""
    try:
        return lxml.html.document_fromstring(html, parser=lxml.html.HTMLParser(huge_tree=True))
    except Exception as exc:  # noqa: BLE001 - lxml on hostile input: the caller keeps what it has
        log.debug("lxml could not parse the page with huge_tree: %s", exc)
        return None


#: A page's document parts: a page with none of them is a fragment.
_HAS_BODY = re.compile(r"<(?:body|head|title)[\s>]", re.I)
_WHITESPACE_RUN = re.compile(r"\s+")


#: libxml2's longest text node without ``huge_tree`` (``XML_MAX_TEXT_LENGTH``, UTF-8 bytes): a
#: longer one is silently dropped.
LXML_MAX_TEXT_BYTES = 10_000_000
#: trafilatura's parser options (``trafilatura.utils.HTML_PARSER``), with ``huge_tree``.
_HUGE_TEXT_PARSER = lxml.html.HTMLParser(collect_ids=False, default_doctype=False, encoding="utf-8",
                                         remove_comments=True, remove_pis=True, huge_tree=True)
_HUGE_TEXT_NOTE = (f"html: a run of text longer than libxml2's limit ({LXML_MAX_TEXT_BYTES:,} bytes) was lost by "
                   "the default parse, so the page was parsed with lxml's huge_tree")


def _may_hold_huge_text(html: str) -> bool:
    """Whether ``html``'s UTF-8 length is over :data:`LXML_MAX_TEXT_BYTES`."""
    return len(html) > LXML_MAX_TEXT_BYTES // 4 and len(html.encode("utf-8", "surrogatepass")) > LXML_MAX_TEXT_BYTES


def _text_chars(tree: etree._Element) -> int:
    return sum(map(len, tree.itertext()))


def _load_html(html: str) -> tuple[etree._Element | None, str | None]:
    """``(tree, note)``: trafilatura's parse (None when lxml cannot parse) after
    :func:`_with_huge_text`."""
    try:
        tree = trafilatura.load_html(html)
    except Exception as exc:  # noqa: BLE001 - lxml on hostile input: keep the page as text
        log.debug("lxml could not parse the page: %s", exc)
        return None, None
    return (tree, None) if tree is None else _with_huge_text(html, tree, lxml.html.fromstring)


def _with_huge_text(html: str, tree: etree._Element, parse: Any) -> tuple[etree._Element, str | None]:
    """``(tree, note)``: ``tree``, or the page parsed again by ``parse`` with
    :data:`_HUGE_TEXT_PARSER` when that holds more text (note :data:`_HUGE_TEXT_NOTE`)."""
    if not _may_hold_huge_text(html):
        return tree, None
    try:
        huge = parse(html.encode("utf-8", "surrogatepass"), parser=_HUGE_TEXT_PARSER)
    except Exception as exc:  # noqa: BLE001 - lxml on hostile input: the caller keeps what it has
        log.debug("lxml could not parse the page with huge_tree: %s", exc)
        return tree, None
    return (huge, _HUGE_TEXT_NOTE) if _text_chars(huge) > _text_chars(tree) else (tree, None)


def _collapse_whitespace(tree: etree._Element) -> None:
    """Collapse whitespace runs to one space in place, outside ``<pre>``/``<textarea>``, as CSS
    ``white-space: normal`` renders: trafilatura keeps source line breaks inside paragraphs."""
    # a set of elements, not id()s: lxml proxies are freed and their addresses reused
    kept = {el for block in tree.iter("pre", "textarea") for el in block.iter()}
    for el in tree.iter():
        if el in kept:
            continue
        if el.text and "\n" in el.text:
            el.text = _WHITESPACE_RUN.sub(" ", el.text)
            if el.tag in _BLOCK_TAGS:
                el.text = el.text.lstrip()
        if el.tail and "\n" in el.tail:
            el.tail = _WHITESPACE_RUN.sub(" ", el.tail)


#: Inline (phrasing) elements; a block inside one is malformed HTML.
_INLINE_TAGS = ("a", "b", "strong", "i", "em", "u", "s", "span", "font", "small", "big", "mark", "code", "sub", "sup")


def _separate_nested_blocks(tree: etree._Element) -> None:
    """Put a space where text touches a block element nested in an inline one, in place, as a
    browser breaks the line there (trafilatura glued the words)."""
    # a dict of elements in document order, not id()s: lxml proxies are freed and addresses reused
    nested = dict.fromkeys(block for inline in tree.iter(*_INLINE_TAGS) for block in inline.iter(*_BLOCK_TAGS))
    for block in nested:
        before = block.getprevious()
        if before is not None and not (before.tail or "")[-1:].isspace():
            before.tail = (before.tail or "") + " "
        elif before is None and (parent := block.getparent()) is not None and parent.text and not parent.text[-1].isspace():
            parent.text += " "
        if block.tail and not block.tail[0].isspace():
            block.tail = " " + block.tail
        elif not block.tail and block.getnext() is not None:
            block.tail = " "


#: Most attributes one start tag keeps (:func:`cap_attributes`): libxml2's parse is quadratic in
#: a tag's attributes, in C that no time limit interrupts. Real tags have dozens.
MAX_TAG_ATTRIBUTES = 256
#: A start tag: its name and the rest up to ``>`` (possessive: linear). Tags shorter than
#: ``2 * MAX_TAG_ATTRIBUTES`` characters are skipped.
_START_TAG = re.compile(r"""<([A-Za-z][^\s/<>]*+)((?:[^<>"']++|"[^"]*+"|'[^']*+')*+)>""")
_CAPPED_NOTE = ("html: {cut} tag(s) with more than {most} attributes kept their first {most} (libxml2 parses a "
                "tag's attributes in quadratic time)")
_TAG_ATTRIBUTE = re.compile(r"""[^\s=/<>]+(?:\s*=\s*(?:"[^"]*"|'[^']*'|[^\s>]+))?""")


def cap_attributes(html: str) -> tuple[str, int]:
    """``(html, n)``: each start tag cut to its first :data:`MAX_TAG_ATTRIBUTES` attributes, and
    how many tags were cut. Text is untouched."""
    cut = 0

    def keep_first(m: re.Match[str]) -> str:
        nonlocal cut
        if len(m.group(2)) < 2 * MAX_TAG_ATTRIBUTES:
            return m.group(0)
        attributes = _TAG_ATTRIBUTE.findall(m.group(2))
        if len(attributes) <= MAX_TAG_ATTRIBUTES:
            return m.group(0)
        cut += 1
        return f"<{m.group(1)} {' '.join(attributes[:MAX_TAG_ATTRIBUTES])}>"

    return _START_TAG.sub(keep_first, html), cut


def _inline_srcdoc(tree: etree._Element) -> int:
    """Replace each ``<iframe srcdoc>`` by a ``<div>`` holding that page's body, in place (HTML
    5.2 section 4.7.5); returns how many. Unparseable ``srcdoc`` is left."""
    count = 0
    for frame in list(tree.iter("iframe")):
        doc = (frame.get("srcdoc") or "").strip()
        if not doc or frame.getparent() is None:
            continue
        try:
            inner = lxml.html.document_fromstring(doc)
        except Exception as exc:  # noqa: BLE001 - lxml on hostile input: keep the frame as it is
            log.debug("lxml could not parse an iframe's srcdoc: %s", exc)
            continue
        body = inner.find(".//body")
        div = lxml.html.Element("div")
        div.text = (body if body is not None else inner).text
        div.extend(list(body if body is not None else inner))
        div.tail = frame.tail
        frame.getparent().replace(frame, div)
        count += 1
    return count


def _note_text(exc: BaseException) -> str:
    """An exception's message for a note, ``"; "`` made ``", "``."""
    return str(exc).replace("; ", ", ")


def extract_html(html: str) -> HtmlContent:
    """The main content and metadata of one decoded HTML page.

    ``trafilatura.extract`` with :data:`TRAFILATURA_OPTIONS`, then :func:`tidy_markdown`.
    Fallbacks, each noted: nothing extracted -> :func:`html_to_plain_text`; lxml's depth limit
    reached -> :func:`_parse_deeper`; too many attributes -> :func:`cap_attributes`; a huge text
    node -> :func:`_with_huge_text`; an unclosed ``<title>`` -> :func:`close_unclosed_title`;
    unloadable -> lxml's plain text; unparseable -> kept as is. Date: htmldate, markup only.

    Returns an :class:`HtmlContent`. Never raises for a bad page: failures become notes.
    """
    notes: list[str] = []
    if not html.strip():
        return HtmlContent(text="")
    html, cut = cap_attributes(html)
    notes += [_CAPPED_NOTE.format(cut=cut, most=MAX_TAG_ATTRIBUTES)] if cut else []
    closed = close_unclosed_title(html)
    if closed is not None:
        html = closed
        notes.append("html: a <title> was not closed before the next tag, so it was closed there")
    tree, huge_note = _load_html(html)
    if not isinstance(tree, lxml.html.HtmlElement) and not _HAS_BODY.search(html):
        tree, huge_note = _load_html(f"<html><body>{html}</body></html>")  # a fragment: trafilatura wants a document
    if huge_note:
        notes.append(huge_note)
    # only a parsed tree goes on: htmldate downloads a str that looks like a URL
    if not isinstance(tree, lxml.html.HtmlElement):
        # trafilatura gives up on a one-element page: lxml's plain text reads it
        try:
            tree = lxml.html.document_fromstring(html)
        except Exception as exc:  # noqa: BLE001 - lxml on hostile input: keep the page as text
            log.debug("lxml could not parse the page: %s", exc)
            return HtmlContent(text=html.strip(), notes=("html: not parseable as HTML, so the text is the file as is",))
        tree, huge_note = _with_huge_text(html, tree, lxml.html.document_fromstring)
        return HtmlContent(text=html_to_plain_text(tree), title=_first_title(tree), url=_canonical(tree),
                           notes=(*notes, *([huge_note] if huge_note else []), "html: trafilatura found no main "
                                  "content, so the text is the plain-text rendering of <body>"))
    title, url = _first_title(tree), _canonical(tree)
    # past the depth limit the tree lacks what lay deeper; a deeper parse's body text wins when longer
    deep = _parse_deeper(html) if _reaches(tree, LXML_MAX_DEPTH) else None
    deep_text = html_to_plain_text(deep) if deep is not None else None
    if deep_text is not None and deep_text != html_to_plain_text(tree):
        notes.append(f"html: the page reaches lxml's depth limit ({LXML_MAX_DEPTH} levels), so the text is "
                     "the plain-text rendering of <body> parsed with lxml's huge_tree")
        text = deep_text
    else:
        failed = False
        for section in tree.iter("section"):
            # trafilatura drops a <section> among paragraphs; as a <div> it is read
            section.tag = "div"
        if framed := _inline_srcdoc(tree):
            notes.append(f"html: the page inside {framed} <iframe srcdoc> was read in place of the frame")
        _unwrap_layout_tables(tree)
        _mark_cell_breaks(tree)
        _collapse_whitespace(tree)
        _separate_nested_blocks(tree)
        headings = _heading_texts(tree)
        try:
            text = trafilatura.extract(tree, **TRAFILATURA_OPTIONS)
        except Exception as exc:  # noqa: BLE001 - a trafilatura bug must not lose the page
            notes.append(f"html: trafilatura failed ({type(exc).__name__}: {_note_text(exc)})")
            text, failed = None, True
        text = tidy_markdown(text.strip()) if text else ""
        if text and (lost := _lost_headings(headings, text)):
            text = headings_markdown(tree)
            notes.append(f"html: trafilatura's main content left out {lost} of the page's {len(headings)} headings, "
                         "so the text is the Markdown rendering of the element that holds them")
        if not text:
            text = html_to_plain_text(tree)
            notes.append("html: text is the plain-text rendering of <body>" if failed
                         else "html: trafilatura found no main content, so the text is the plain-text rendering of <body>")
    if deep is not None and _reaches(deep, LXML_HUGE_MAX_DEPTH):
        notes.append(f"html: the page reaches lxml's huge_tree depth limit ({LXML_HUGE_MAX_DEPTH} levels): "
                     "text nested deeper or after that point may be missing")
    published = None
    try:
        meta = trafilatura.extract_metadata(tree, extensive=_EXTENSIVE_DATE_SEARCH)
        published = meta.date or None
        title = title or _collapse(meta.title)
        url = url or _collapse(meta.url)
    except Exception as exc:  # noqa: BLE001 - metadata is optional; the text is what matters
        notes.append(f"html: metadata extraction failed ({type(exc).__name__}: {_note_text(exc)})")
    return HtmlContent(text=text, title=title, url=url, published=published, notes=tuple(notes))


#: Fields that hold a record's text, in order of preference (case-insensitive).
JSONL_TEXT_FIELDS = paper_records.TEXT_FIELDS
#: Fields for the metadata columns, in order of preference (case-insensitive).
JSONL_META_FIELDS = {"title": ("title",), "url": ("url",), "published": ("published", "date")}


@dataclass(frozen=True)
class JsonlRecord:
    """One parsed JSON Lines record.

    Attributes:
        text: the record's text, or None when ``error`` is set.
        title, url, published: metadata as strings (numbers written out, arrays and objects as
            JSON; booleans and non-finite numbers left out), or None.
        error: why the line is not a document.
        error_type: ``InvalidJSON`` or ``InvalidRecord`` when ``error`` is set.
        paper: a paper record's fields as JSON; None for an article.
        notes: one per metadata field that was not a JSON string.
    """

    text: str | None = None
    title: str | None = None
    url: str | None = None
    published: str | None = None
    error: str | None = None
    notes: tuple[str, ...] = ()
    paper: str | None = None
    error_type: str | None = None


def _invalid(error: str, notes: tuple[str, ...] = ()) -> JsonlRecord:
    """A record that is neither an article nor a paper record (``InvalidRecord``)."""
    return JsonlRecord(error=error, notes=notes, error_type="InvalidRecord")


def _meta_value(value: Any) -> str | None:
    if value is None or isinstance(value, bool):
        return None
    if isinstance(value, str):
        return value.strip() or None
    if isinstance(value, float) and not math.isfinite(value):  # NaN, Infinity, 1e400: no value
        return None
    if isinstance(value, int | float):
        return str(value)
    return json.dumps(value, ensure_ascii=False, sort_keys=True)


def parse_jsonl_line(line: str) -> JsonlRecord:
    """Parse one line (no terminator) of a ``.jsonl`` file (https://jsonlines.org/) by
    :func:`parse_record`.

    Returns:
        a :class:`JsonlRecord`, ``error`` set when invalid (the caller adds ``path#line``). NULs
        and a leading BOM are removed, a repeated key keeps its last value, each noted. Never raises.
    """
    bom = line.startswith("\ufeff")  # files joined with `cat`: a later file's byte-order mark
    repeated: list[str] = []
    try:
        obj = _no_lone_surrogates(json.loads(line[1:] if bom else line, object_pairs_hook=_noting_repeats(repeated)))
        obj, nuls = _without_nuls(obj)
    except (json.JSONDecodeError, RecursionError, ValueError) as exc:
        if isinstance(exc, json.JSONDecodeError):
            detail = f"{exc.msg}: column {exc.colno}"
        elif isinstance(exc, RecursionError):
            detail = "nested too deeply"
        else:  # e.g. an integer longer than Python's int-conversion limit
            detail = str(exc)
        return JsonlRecord(error=f"not valid JSON: {detail}", error_type="InvalidJSON")
    if not isinstance(obj, dict):
        return _invalid(f"a JSON {_json_type(obj)}, not an object")
    record = parse_record(obj)
    if nuls:
        note = f"jsonl: removed {nuls} NUL character{'s' if nuls > 1 else ''} (\\u0000 escapes)"
        record = dataclasses.replace(record, notes=(*record.notes, note))
    if bom:
        record = dataclasses.replace(record, notes=(*record.notes, "jsonl: a byte-order mark opened the line (files joined?)"))
    if repeated:
        note = (f"jsonl: an object names {', '.join(map(repr, dict.fromkeys(repeated)))} more than once: "
                "the last value is read")
        record = dataclasses.replace(record, notes=(*record.notes, note))
    return record


#: Fields a YAML record does not inherit from its enclosing mapping: its own title and text.
_NOT_INHERITED = frozenset((*paper_records.TITLE_FIELDS, *paper_records.TITLE_ZH_FIELDS, *JSONL_TEXT_FIELDS))


#: Values a YAML text of n characters may expand to, per character: only nested aliases
#: ("billion laughs") exceed it.
YAML_VALUES_PER_CHAR = 10
#: A letter of any script (a group label such as "2025" has none).
_LETTER = re.compile(r"[^\W\d_]")


def yaml_records(node: Any, budget: list[float] | None = None) -> list[dict]:
    """The records of a YAML document (``safe_load``): every mapping in a list, or in a list held
    by such a mapping, each with the missing scalar fields of the mappings above it (not title
    or text). No list: ``[]``. Non-JSON values written as text; aliased nodes read once.

    ``budget``: ``[n]``, values the records may still hold, decremented in place (one budget per
    file); None: no limit. Raises ValueError beyond it, RecursionError for a self-holding node."""
    out: list[dict] = []
    _yaml_records(node, {}, False, set(), out, [math.inf] if budget is None else budget)
    return out


def _yaml_records(node: Any, inherited: dict, in_list: bool, seen: set[int], out: list[dict],
                  budget: list[float]) -> None:
    if not isinstance(node, (list, dict)) or id(node) in seen:
        return
    seen.add(id(node))
    if isinstance(node, list):
        for item in node:
            if isinstance(item, dict):
                _yaml_records(item, inherited, True, seen, out, budget)
        return
    scalars = {str(k): json_safe(v, budget) for k, v in node.items() if not isinstance(v, (list, dict))}
    if not in_list:  # a mapping that holds lists of records ("papers: [...]")
        for v in node.values():
            _yaml_records(v, {**inherited, **scalars}, False, seen, out, budget)
        return
    parent = {k: v for k, v in inherited.items() if k.casefold() not in _NOT_INHERITED}
    nested = [v for v in node.values() if isinstance(v, list) and v and all(isinstance(x, dict) for x in v)]
    if nested and not any(paper_records.field_key(str(k)) in _NOT_INHERITED and isinstance(v, str) and _LETTER.search(v)
                          for k, v in node.items()):
        # a mapping without title or text that groups records ("- title: '2025' / items: [...]");
        # one with a title is a record
        for v in nested:
            _yaml_records(v, {**parent, **scalars}, False, seen, out, budget)
        return
    own = {str(k): json_safe(v, budget) for k, v in node.items()}
    out.append({**{k: v for k, v in parent.items() if k not in own}, **own})


def json_safe(value: Any, budget: list[float]) -> Any:
    """``value`` with dates, timestamps and bytes (as UTF-8) written as text, a set as a sorted list;
    ValueError when ``budget`` runs out."""
    budget[0] -= 1
    if budget[0] < 0:
        raise ValueError("its aliases expand to more values than the text could hold without them "
                         "(aliases nested in aliases)")
    if isinstance(value, dict):
        return {str(k): json_safe(v, budget) for k, v in value.items()}
    if isinstance(value, list):
        return [json_safe(v, budget) for v in value]
    if isinstance(value, (set, frozenset)):  # "!!set {a, b}": its members in a fixed order
        return [json_safe(v, budget) for v in sorted(value, key=str)]
    if isinstance(value, bytes):  # "!!binary": the text it encodes, not "b'…'"
        return value.decode("utf-8", "replace")
    return value if value is None or isinstance(value, (str, int, float, bool)) else str(value)


def _noting_repeats(repeated: list[str]) -> Any:
    """A ``json.loads`` ``object_pairs_hook``: last value wins, repeated keys appended to ``repeated``."""
    def pairs(items: list[tuple[str, Any]]) -> dict[str, Any]:
        obj: dict[str, Any] = {}
        for key, value in items:
            if key in obj:
                repeated.append(key)
            obj[key] = value
        return obj
    return pairs


def _meta_field(obj: dict, keys: tuple[str, ...]) -> tuple[str, Any] | None:
    """``(key as written, value)`` of the first of ``keys`` (case-insensitive) holding a value."""
    return next((kv for key in keys for kv in paper_records.values(obj, key)), None)


def parse_record(obj: dict) -> JsonlRecord:
    """One record (a JSON object, or a CSV row as header -> cell) as a document; field names
    match case-insensitively.

    * **article**: text from the first of :data:`JSONL_TEXT_FIELDS` holding text (a list of
      strings joined by blank lines; other non-strings are errors); ``title``, ``url``,
      ``published`` (or ``date``) optional;
    * **paper record** (:func:`pipeline.paper_records.read_record`): text is its fields as lines
      (:func:`pipeline.paper_records.render`), ``paper`` the fields as JSON, ``title`` English
      else Chinese, ``url`` its first link.

    Returns a :class:`JsonlRecord`, ``error`` set when neither or the title is rejected. Never raises.
    """
    reading = paper_records.read_record(obj)
    if reading.error:
        return _invalid(reading.error, reading.notes)
    fields = reading.fields
    if fields is not None:
        published = _meta_field(obj, JSONL_META_FIELDS["published"])
        nulls = [f"field {str(k)!r} is null: the record is read as a paper's fields" for k, v in obj.items()
                 if v is None and str(k).strip().casefold() in JSONL_TEXT_FIELDS]
        return JsonlRecord(text=paper_records.render(fields), title=fields["title"] or fields["title_zh"],
                           url=fields["urls"][0] if fields["urls"] else None,
                           published=_meta_value(published[1]) if published else None,
                           paper=paper_records.dumps(fields), notes=(*reading.notes, *nulls))
    found = paper_records.text_field(obj)
    if found is None:
        nulls = [str(k) for k, v in obj.items() if str(k).strip().casefold() in JSONL_TEXT_FIELDS]
        if nulls:
            return _invalid(f"no text: field {nulls[0]!r} is null")
        keys = ", ".join(sorted(map(str, obj))[:10]) or "none"
        links = [str(k) for k, v in obj.items() if str(k).strip().casefold() in paper_records.LINK_OR_TITLE_FIELDS
                 and isinstance(v, str) and v.strip()]
        because = f"; {links[0]!r} holds a link, not a title" if links else ""
        return _invalid(f"no text and no paper title: none of the fields "
                        f"{', '.join(JSONL_TEXT_FIELDS + paper_records.TITLE_FIELDS + paper_records.TITLE_ZH_FIELDS)} "
                        f"holds a title (its keys: {keys}{because})")
    key, value = found
    text = paper_records.article_text(value)
    if text is None:
        return _invalid(f"field {key!r} is a JSON {_json_type(value)}, not a string")
    meta: dict[str, str | None] = {}
    notes: list[str] = []
    if isinstance(value, list):
        notes.append(f"jsonl: field {key!r} is a JSON array of strings: the text is its items apart by blank lines")
    for col, keys in JSONL_META_FIELDS.items():
        source = _meta_field(obj, keys)  # the first present key
        meta[col] = _meta_value(source[1]) if source is not None else None
        if source is not None and not isinstance(source[1], str):
            kept = f"{col} is the value written out" if meta[col] is not None else f"{col} left out"
            notes.append(f"jsonl: field {source[0]!r} is a JSON {_json_type(source[1])}, not a string: {kept}")
    return JsonlRecord(text=text, notes=tuple(notes), **meta)


def _no_lone_surrogates(value: Any) -> Any:
    """``value`` with lone surrogates in every string (keys too) made U+FFFD."""
    if isinstance(value, str):
        return value.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
    if isinstance(value, dict):
        return {_no_lone_surrogates(k): _no_lone_surrogates(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_no_lone_surrogates(v) for v in value]
    return value


def _without_nuls(value: Any) -> tuple[Any, int]:
    """``(value, n)``: NULs removed from every string (keys too), and how many (as
    :func:`pipeline.ingest.remove_stray_nuls` does for text files)."""
    if isinstance(value, str):
        return (value.replace("\x00", ""), value.count("\x00")) if "\x00" in value else (value, 0)
    if isinstance(value, dict):
        items = [(_without_nuls(k), _without_nuls(v)) for k, v in value.items()]
        return {k: v for (k, _), (v, _) in items}, sum(nk + nv for (_, nk), (_, nv) in items)
    if isinstance(value, list):
        items = [_without_nuls(v) for v in value]
        return [v for v, _ in items], sum(n for _, n in items)
    return value, 0


def _json_type(value: Any) -> str:
    return {dict: "object", list: "array", str: "string", bool: "boolean", type(None): "null"}.get(
        type(value), "number")
