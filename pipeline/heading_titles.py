"""The ``title`` and ``title_zh`` a section heading gives (:func:`split_heading_title`)."""

from __future__ import annotations

import functools
import re

from .candidates import GLUED_YEAR, unlink
from .fields import PLACEHOLDER_VALUE, find_venue_years, parse_key_value
from .headings import (
    BILINGUAL,
    BOOK_TITLE,
    BRACKET_LABEL,
    DECORATION_SEP,
    ENUMERATION_PREFIX_RE,
    LEADING_DECORATION,
    LIST_NUMBER,
    MAX_DECORATION_CHARS,
    NUMBERED_PREFIX_RE,
    without_venue_label,
)
from .paper_venue import CITATION_TAIL
from .textutil import _memoised, data_lines, latin_words, plain

# An English title with a short Chinese-only label after it ("Title | 全文翻译"), told by its shape.
_DECORATION = re.compile(
    rf"^(?P<title>[^\u3400-\u9fff]*[A-Za-z][^\u3400-\u9fff]*?)(?:{DECORATION_SEP}+|(?=[【\[（(]))"
    rf"[【\[（(]?[\u3400-\u9fff]{{1,{MAX_DECORATION_CHARS}}}[】\]）)]?$"
)


_QUOTED = re.compile(r"[“\"‘「『](?P<inner>[^“”\"「」『』]+)[”\"’」』]")


_ZH_SENTENCE = re.compile(r"[。，；！？]")


#: Longest Chinese title, in characters; a longer heading text is a sentence, not a title.
MAX_TITLE_ZH_CHARS = 60


_HAS_CJK = re.compile(r"[\u3400-\u9fff]")


_HAS_LATIN = re.compile(r"[A-Za-z]{2,}")


_LATIN_LETTERS = re.compile(r"[A-Za-z]")


#: Fewest characters of title that must stay before a reading label for it to be removed.
MIN_TITLE_BEFORE_LABEL = 6


@functools.cache
def reading_label() -> re.Pattern[str]:
    """A reading label (``pipeline/data/reading_labels.txt``) that ends a heading, longest first."""
    words = sorted(set(data_lines("reading_labels.txt")), key=len, reverse=True)
    return re.compile(rf"(?<=.{{{MIN_TITLE_BEFORE_LABEL}}})\s*(?:{'|'.join(map(re.escape, words))})\s*$", re.S)


@_memoised()
def split_heading_title(heading: str) -> tuple[str | None, str | None]:
    """``(title, title_zh)`` from a section heading without its markup, numbering, metadata key,
    quotation marks, labels, decorations and a reference's venue tail (``Title. In AAAI 2019.``);
    ``中文（English）`` gives both, a Chinese-only heading only ``title_zh``; (None, None) for none.
    """
    h = plain(unlink(_LIST_MARK.sub("", heading.strip())))
    if "<" in h:  # "Title<br/>"
        h = plain(_HTML_TAG.sub(" ", h))
    if "`" in h[:22] and (tag := _CODE_TAG.match(h)) and h[tag.end():].strip():
        h = h[tag.end():].strip()  # "`REVIEW`Title"
    if (maker := _LEADING_MAKER.fullmatch(h)) and len(latin_words(maker.group("title"))) >= 1:
        h = maker.group("title").strip()  # "Facebook 提出的 DeiT"
    if _HAS_CJK.search(h) and (label := reading_label().search(h)):  # "BERT | 论文笔记"
        h = h[: label.start()].rstrip(" \t:：|｜丨—–-")
    h = _LEADING_TAG.sub("", h) if _LEADING_TAG.match(h) and len(_LEADING_TAG.sub("", h)) >= 8 else h
    h = without_venue_label(h)
    if h.endswith((")", "）", "]")) and (tag := _TRAILING_LINK_TAG.search(h)) and tag.start() >= 3:
        h = h[: tag.start()]
    if h.endswith("】") and (note := _TRAILING_NOTE.search(h)) and len(latin_words(h[: note.start()])) >= MIN_GLUED_TITLE_WORDS:
        h = h[: note.start()]  # "Title 【Multi reward】"
    kv = parse_key_value(h)
    if kv is not None and kv[0] == "title":
        h = plain(kv[1])
        if PLACEHOLDER_VALUE.fullmatch(h.strip()):
            return None, None  # "Title: None"
    h = ENUMERATION_PREFIX_RE.sub("", NUMBERED_PREFIX_RE.sub("", h.strip())).strip()
    if (glued := GLUED_YEAR.match(h)) and len(h) - glued.end() >= 8:
        h = h[glued.end():]  # "2011-KinectFusion: …"
    quoted = _QUOTED.fullmatch(h)
    if quoted:
        h = quoted.group("inner").strip()
    if "." in h[-2:]:  # (the pattern's period ends the text or precedes its final newline)
        h = _FINAL_PERIOD.sub("", h)
    book = BOOK_TITLE.fullmatch(h)
    if book:
        inner, gloss = book.group("inner").strip(), (book.group("gloss") or "").strip()
        if gloss and _HAS_CJK.search(gloss) and not _HAS_CJK.search(inner):
            return inner, gloss
        if gloss and _HAS_CJK.search(inner) and not _HAS_CJK.search(gloss) and _HAS_LATIN.search(gloss):
            return gloss, inner
        h = inner
    if not h:
        return None, None
    m = (("(" in h or "（" in h) and BILINGUAL.fullmatch(h)) or ((";" in h or "；" in h) and _BILINGUAL_SEMICOLON.fullmatch(h))
    if m:
        a, b = m.group("a").strip(), m.group("b").strip()
        if _HAS_CJK.search(a) and not _HAS_CJK.search(b) and _HAS_LATIN.search(b):
            return b, a
        if _HAS_CJK.search(b) and not _HAS_CJK.search(a) and _HAS_LATIN.search(a):
            return a, b
    cjk = _HAS_CJK.search(h)
    # cheap tests first (the patterns backtrack on long lines)
    m = None
    if cjk:
        if cjk.start() >= len(h) - MAX_DECORATION_CHARS - 1 and not _NAME_COLON.match(h):
            m = _DECORATION.match(h)
        if m is None and (cjk.start() == 0 or h[0] in "【["):
            m = LEADING_DECORATION.match(h)
    if m is None and cjk and cjk.start() <= 4:
        m = _GLUED_LABEL.match(h)
        if m is not None and len(latin_words(m.group("title"))) < MIN_GLUED_TITLE_WORDS:
            m = None
    if m:
        return m.group("title").strip(" \t:：|｜丨—–-"), None
    if not _HAS_CJK.search(h):
        if h.endswith((")", "）")) and (name := _SHORT_NAME_TAIL.search(h)) and len(latin_words(h[: name.start()])) >= 3:
            h = h[: name.start()]  # "Deep Residual Learning for Image Recognition (ResNet)"
        tail = CITATION_TAIL.search(h)
        if tail and tail.start() > 0 and find_venue_years(tail.group(0)):
            h = h[: tail.start()]  # "Title. In AAAI 2019."
        return h, None
    if (credited := _TITLE_THEN_CREDIT.fullmatch(h)) and len(latin_words(credited.group("title"))) >= MIN_GLUED_TITLE_WORDS:
        return credited.group("title"), None  # "Title，张三，某大学"
    if _ZH_SENTENCE.search(h[:-1] if h.endswith("？") else h) or len(h) > MAX_TITLE_ZH_CHARS:
        return None, None  # a sentence (the first line of a body), not a title
    if not _HAS_LATIN.search(h):
        label = BRACKET_LABEL.match(h)
        if label and h[label.end():].strip(" \t:：|｜丨—–-"):
            return None, h[label.end():].strip(" \t:：|｜丨—–-")
        return None, h
    if len(_HAS_CJK.findall(h)) * 2 >= len(_LATIN_LETTERS.findall(h)):
        return None, h  # "Memento: 無需微調 LLM 即可微調 LLM 代理": a Chinese title with names in it
    return h, None


#: An English title, then a Chinese credit after a full-width comma: a name (2-4 characters),
#: maybe its places after another comma ("Title，张三，某大学/某公司").
_TITLE_THEN_CREDIT = re.compile(r"(?P<title>[A-Za-z0-9][^\u3400-\u9fff，]*?)\s*，\s*[\u3400-\u9fff]{2,4}(?:\s*，.*)?")


#: A note in lenticular brackets closing a heading ("【Multi reward】").
_TRAILING_NOTE = re.compile(r"\s*【[^【】\n]{1,30}】\s*$")


#: A short tag in backticks before a title ("`REVIEW`", its opening backtick maybe trimmed).
_CODE_TAG = re.compile(r"`?[^`\s]{1,20}`\s*")


#: A heading naming who made the work, then its English title: "微軟提出的 Swin Transformer".
_LEADING_MAKER = re.compile(
    r"(?P<maker>[^，,。：:\s][^，,。：:]{0,19}?)\s*(?:联合|聯合|共同)?(?:提出|推出|发布|發布|开发|開發|开源|開源)的\s*"
    r"(?P<title>[A-Za-z0-9][^\u3400-\u9fff]*)")


#: An HTML element's tag in a heading, custom elements (``<d-cite key="…">``, HTML 5.2 4.13) too.
_HTML_TAG = re.compile(
    r"</?(?:br|div|span|p|b|strong|em|i|u|font|h[1-6]|li|td|th|center|[a-z][a-z0-9]*-[\w-]*)\b[^<>]{0,200}>", re.I
)


#: A short name in brackets after an English title ("(AlphaGo Zero)"): one to three words with a
#: capital or digit, not only numbers (written to match in linear time).
SHORT_NAME = (r"[(（](?![\d\s.\-/]+[)）])(?:[^\WA-Z0-9]|[.+\-])*[A-Z0-9][\w.+\-]*"
              r"(?:\s+(?:[^\WA-Z0-9]|[.+\-])*[A-Z0-9][\w.+\-]*){0,2}[)）]")
_SHORT_NAME_TAIL = re.compile(rf"\s*{SHORT_NAME}$")


#: ``中文;English``: a catalogue's title and its translation ("題名: 透過…;Enhancing …").
_BILINGUAL_SEMICOLON = re.compile(r"(?P<a>[^;；]+?)\s*[;；]\s*(?P<b>[^;；]+)")


#: The full stop closing a title as a sentence ("Title.", '"Title."'), not an abbreviation's
#: ("… et al.", "… etc.") or an initial's ("… U.S.").
_FINAL_PERIOD = re.compile(r"(?<![.\s])(?<!\bal)(?<!\betc)(?<!\bvs)(?<!\b[A-Z])\.$")


#: A short Chinese label glued to the English title after it, maybe after a year and before
#: a bracketed tag: ``經典Title``, ``2020經典(arXiv:2006.11239)Title``.
_GLUED_LABEL = re.compile(
    rf"^(?:(?:19|20)\d\d)?[\u3400-\u9fff]{{1,{MAX_DECORATION_CHARS}}}\s*(?:[(（\[][^()（）\[\]\n]{{1,40}}[)）\]])?\s*"
    r"(?P<title>[A-Z0-9][^\u3400-\u9fff]*)$"
)


#: A one-word English name and a colon opening a heading ("Ttrl：測試時強化學習"): no decoration follows.
_NAME_COLON = re.compile(r"[A-Za-z][\w.\-]*\s*[:：]\s*[\u3400-\u9fff]")


#: Fewest Latin words of an English title after a glued label.
MIN_GLUED_TITLE_WORDS = 3


#: A tag before a title: a venue or a date in brackets (``(CVPR 2019)``, ``[ICML 2019]``,
#: ``【2024】``), or a bare date (``202212 ``, ``2023.05 ``).
_LEADING_TAG = re.compile(r"^\s*(?:[\[【(（][^\]】)）\n]{0,30}\d{2,4}[^\]】)）\n]{0,10}[\]】)）]|(?:19|20)\d{2}[.\-/]?\d{0,2}(?=\s)"
                          r"|(?:19|20)\d{2}\s*[\[(（][^\]】)）\n]{1,20}[\]】)）])\s*")


#: Link words glued to the end of a title ("Title(arXiv)", "Title [[note]]()", "Title (PDF)").
_TRAILING_LINK_TAG = re.compile(
    r"(?:\s*(?:\[\[?|[(（])\s*(?i:arxiv|pdf|paper|code|link|project|github|notes?|blog|video|slides)\s*(?:\]\]?|[)）])"
    r"(?:\(\S*\))?)+\s*$")


#: A list item's marker, maybe with a task-list box (``- [ ]``, ``1.``, ``•``).
_LIST_MARK = re.compile(rf"^\s*(?:[-*+•·▪●]\s+|{LIST_NUMBER}(?:[.)]\s+|[、．]\s*))(?:\[[ xX]\]\s*)?")
