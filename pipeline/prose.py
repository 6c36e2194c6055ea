"""Papers named in prose, and pages about one paper: the narrative layout of the segmenter
(:func:`find_paper_mentions`: titles quoted or title-cased in sentences that speak of a paper) and
the evidence that a page with no title anchor reports one paper (:func:`_about_one_paper`)."""

from __future__ import annotations

import re

from .candidates import (
    _GENERIC_LINK,
    _HAN,
    _SENTENCE_PUNCT,
    ABOUT_PAPERS,
)
from .credits import names_only
from .fields import (
    find_award_label,
    find_venue_years,
    fold_title,
    parse_key_value,
    split_sentences,
)
from .identifiers import find_arxiv_ids
from .line_kinds import (
    MIN_TITLE_WORDS,
    _english_title,
    _heading_level,
    _names_context,
    _names_venue_year,
    _venue_heading,
)
from .names import is_institution
from .textutil import Line, plain

_MENTION = re.compile(
    r"《(?P<book>[^《》\n]{2,200})》(?:\s*[（(](?:[^（）()\n]|\([^()\n]*\))+[）)])?"
    r"|[“\"](?:\*\*|__)?(?P<quoted>[A-Z][^“”\"\n*]{8,250})(?:\*\*|__)?\s*[”\"]"
    r"|‘(?P<squoted>[A-Z][^‘\n]{8,250}?)’(?![A-Za-z])"
    r"|[「『](?P<corner>[^「」『』\n]{2,200})[」』]"
)


#: An unquoted English title in prose: capitalised words and title function words ("Beyond
#: Accuracy: Behavioral Testing of NLP Models with CheckList"); :func:`_title_case_spans`.
_CAP_WORD = r"(?:[A-Z0-9][\w'’-]*\w|[A-Z])"


_TITLE_FUNCTION_WORDS = (r"(?:a|an|the|of|for|and|or|in|on|with|to|via|from|at|as|into|over|under|without"
                         r"|through|towards?|beyond|is|are|not|vs\.?)")


_TITLE_CASE_SPAN = re.compile(rf"(?<![\w'’-])(?:{_CAP_WORD}['’]s\s+)*(?P<title>{_CAP_WORD}:?(?:\s+(?:{_TITLE_FUNCTION_WORDS}\s+)*{_CAP_WORD}:?)+)")


#: The owner in the possessive that may open a title-case span ("ICML 2014's ").
_VENUE_POSSESSIVE = re.compile(r"^(?:\S+\s+){0,3}?\S+['’]s\s+")


#: Fewest words, and capitalised words, of an unquoted title in prose.
MIN_PROSE_TITLE_WORDS = 4


MIN_PROSE_TITLE_CAPS = 3


#: Shortest Chinese title quoted in 《…》 or 「…」 (which also name journals and quote speech: 《自然》).
MIN_ZH_MENTION_CHARS = 8


#: A gloss in brackets closing a mention ("自然（Nature）"): no part of its length.
_GLOSS_AFTER = re.compile(r"\s*[（(][^（）()]*[)）]\s*$")


_OPENERS = frozenset("（(《「『“【[")


_CLOSERS = frozenset("）)》」』”】]")


# Words that mark a sentence as talking about a paper (zh-Hans, zh-Hant, en).
_PAPER_CUE = re.compile(
    r"论文|論文|paper|arXiv|作者|一作|第一作者|通讯作者|通訊作者|提出|获奖|獲獎|最佳|杰出|傑出|研究团队|研究團隊"
    r"|award|prize|winners?\b|authors?\b|co-?authors?\b|colleagues|researchers|et al\b"
    r"|submission|accepted\s+(?:at|by|to|in|for)\b|publication|preprint|录用|錄用|接收|收录|收錄",
    re.IGNORECASE,
)


#: A quotation of speech: a closing quote then a verb of saying, or the verb then the quote.
_SPEECH = re.compile(
    r"[”\"]\s*,?\s*(?:says|said|adds|added|notes|noted|explains|explained|recalls|recalled)\b"
    r"|\b(?:says|said|adds|added|noted|explained)\s*[,:]\s*[“\"]"
)


# Words that mark a 《》 as a policy, a book, a film or a news item rather than a paper.
_NOT_PAPER_CUE = re.compile(r"印发|印發|出版社|小说|小說|电影|電影|报道称|報導稱|方案|通知|条例|條例|新闻|新聞|一书|一書")


#: A sentence announcing papers of a venue ("3 篇论文被 CVPR 接收：…"); the links after its colon name them.
_ACCEPTED = re.compile(r"\b(?:accepted|published|presented|appear(?:s|ing)?)\b|接收|录用|錄用|入选|入選|中稿", re.I)
_LINK_TEXT = re.compile(r"\[(?P<md>[^\[\]\n]{2,120})\]\([^()\s]+\)|<a\s[^>]{0,500}>(?P<html>[^<]{2,120})</a\s*>", re.I)


def _announced_links(sentence: str) -> list[tuple[int, str]]:
    """``(offset, name)`` of the linked names (two or more, none a link's kind) after the colon of
    a sentence announcing accepted papers, else :func:`_announced_link`; empty otherwise."""
    colon = min((i for i in (sentence.find(":"), sentence.find("：")) if i >= 0), default=-1)
    if colon < 0 or not _ACCEPTED.search(sentence, 0, colon) or not _PAPER_CUE.search(sentence, 0, colon):
        return _announced_link(sentence)
    links = [(m.start(), (m.group("md") or m.group("html")).strip(" `*_")) for m in _LINK_TEXT.finditer(sentence, colon)]
    if len(links) < 2 or any(len(name) < 2 or _GENERIC_LINK.fullmatch(name) for _, name in links):
        return []
    return links


#: Fewest words (Latin) or characters (Han) of the one linked title of an announcement.
MIN_ANNOUNCED_WORDS = 3
MIN_ANNOUNCED_HAN = 6


def _announced_link(sentence: str) -> list[tuple[int, str]]:
    """The one title-shaped linked name of a sentence announcing one accepted paper ("Our paper
    [Title](…) was accepted at ICLR 2025"), as ``[(offset, name)]``; else empty."""
    if not _ACCEPTED.search(sentence) or not _PAPER_CUE.search(sentence):
        return []
    links = [(m.start(), (m.group("md") or m.group("html")).strip(" `*_")) for m in _LINK_TEXT.finditer(sentence)]
    if len(links) != 1:
        return []
    name = links[0][1]
    if _GENERIC_LINK.fullmatch(name) or (len(name.split()) < MIN_ANNOUNCED_WORDS
                                         and len(_HAN.findall(name)) < MIN_ANNOUNCED_HAN):
        return []
    if any(end - start >= len(name) // 2 for _, _, start, end in find_venue_years(name)):
        return []  # "accepted at [ICLR 2025](…)": the link names the venue
    return links


def find_announced_papers(paragraph: str) -> list[tuple[int, str]]:
    """The linked names of the sentences of ``paragraph`` that announce accepted papers
    (:func:`_announced_links`), as :func:`find_paper_mentions` gives mentions."""
    if not _ACCEPTED.search(paragraph):
        return []
    found, pos = [], 0
    for sentence in split_sentences(paragraph):
        found += [(pos + at, name) for at, name in _announced_links(sentence)]
        pos += len(sentence)
    return found


def find_paper_mentions(paragraph: str) -> list[tuple[int, str]]:
    """Inline paper mentions of a paragraph, in order, as ``(offset, mention)``.

    A mention is a title in ``《…》``, ``「…」``/``『…』`` or English quotation marks, in a sentence
    with a paper cue (:data:`_PAPER_CUE`) or, for 《》 and 「」, an English title; a Chinese one
    has :data:`MIN_ZH_MENTION_CHARS` characters and no not-paper cue; never a venue edition nor a
    quote in a paragraph quoting speech. ``offset``: where the paper's section starts, its
    sentence, or after an earlier mention the clause introducing this one (:func:`_clause_start`).
    """
    has_marks = any(ch in paragraph for ch in '《“"‘「『')
    if not has_marks and not _PAPER_CUE.search(paragraph):
        return []
    found: list[tuple[int, str]] = []
    pos = 0
    speech: bool | None = None  # whether the paragraph quotes speech (looked for once)
    # (an announcement needs an acceptance word in its sentence, so in its paragraph: looked for once)
    accepted = _ACCEPTED.search(paragraph) is not None
    for sentence in split_sentences(paragraph):
        cue: bool | None = None  # looked for at the sentence's first mention only
        not_paper: bool | None = None  # likewise
        previous_end: int | None = None
        if accepted and (announced := _announced_links(sentence)):  # "Two papers accepted at CVPR 2025: [A](…) and [B](…)"
            found += [(pos + at, name) for at, name in announced]  # (the announcement is context)
            pos += len(sentence)
            continue
        marked = list(_MENTION.finditer(sentence)) if has_marks else []
        if not marked and _PAPER_CUE.search(sentence) and not _HAN.search(sentence):
            for at, title, end in _title_case_spans(sentence):  # an English title written without quotes
                start = 0 if previous_end is None else _clause_start(sentence, at, previous_end)
                found.append((pos + start, title))
                previous_end = end
        for m in marked:
            in_quotes = m.group("quoted") or m.group("squoted")
            inner = m.group("book") or m.group("corner") or in_quotes.rstrip(",.;:，。；：")  # “Title,” in prose
            english = _english_title(inner)
            if _venue_heading(inner):
                continue  # “NeurIPS 2025 Best Paper Award” names an award, not a paper
            if cue is None:
                cue = bool(_PAPER_CUE.search(sentence))
            if not_paper is None and (m.group("book") or m.group("corner")):
                not_paper = bool(_NOT_PAPER_CUE.search(sentence))
            if in_quotes and speech is None:
                speech = bool(_SPEECH.search(paragraph))
            if in_quotes and speech:
                continue  # ("…," says Mori)
            if m.group("book"):  # 《自然》, 《自然（Nature）》 name a journal: a Chinese title is longer
                ok = english or (cue and len(_GLOSS_AFTER.sub("", inner)) >= MIN_ZH_MENTION_CHARS and not not_paper)
            elif m.group("corner"):  # 「…」 also quotes speech: a title is long and has no clauses
                ok = english or (cue and len(inner) >= MIN_ZH_MENTION_CHARS and not _SENTENCE_PUNCT.search(inner)
                                 and not not_paper)
            else:
                ok = english and cue
            if ok:
                start = 0 if previous_end is None else _clause_start(sentence, m.start(), previous_end)
                found.append((pos + start, m.group(0).strip()))
                previous_end = m.end()
        pos += len(sentence)
    return found


#: Words joining a clause to the one before; a section starts after them ("…，以及 A 的《…》").
_CLAUSE_CONNECTIVE = re.compile(r"^(?:以及|及|和|与|與|还有|還有|另有|并且|並且|而|and\s+|as\s+well\s+as\s+|while\s+)", re.I)


_CLAUSE_SEPARATORS = frozenset("，,；;：:")


def _clause_start(sentence: str, mention: int, floor: int) -> int:
    """Where the clause introducing a mention starts: after the last ，；： outside brackets between
    ``floor`` (the previous mention's end) and the mention, and a joining word; else the mention."""
    depth, cut = 0, None
    for i in range(floor, mention):
        ch = sentence[i]
        if ch in _OPENERS:
            depth += 1
        elif ch in _CLOSERS:
            depth = max(0, depth - 1)
        elif depth == 0 and ch in _CLAUSE_SEPARATORS:
            cut = i + 1
    if cut is None:
        return mention
    while cut < mention and sentence[cut].isspace():
        cut += 1
    m = _CLAUSE_CONNECTIVE.match(sentence[cut:mention])
    if m:
        cut += m.end()
        while cut < mention and sentence[cut].isspace():
            cut += 1
    return cut


def _title_case_spans(sentence: str) -> list[tuple[int, str, int]]:
    """Unquoted English titles in a sentence, as ``(start, title, end)``: :data:`_TITLE_CASE_SPAN`
    spans of :data:`MIN_PROSE_TITLE_WORDS` words (:data:`MIN_PROSE_TITLE_CAPS` capitalised), no
    award label, venue, institution or names, with a paper cue in the rest of the sentence; a
    venue's possessive before it left out ("ICML 2014's DeCAF: …")."""
    found = []
    for m in _TITLE_CASE_SPAN.finditer(sentence):
        start, span = m.start("title"), m.group("title").rstrip(":")
        owner = _VENUE_POSSESSIVE.match(span)
        if owner and find_venue_years(owner.group(0)):
            start, span = start + owner.end(), span[owner.end():]
        words = span.split()
        rest = sentence[:start] + " " + sentence[m.end("title"):]
        if (len(words) < MIN_PROSE_TITLE_WORDS or sum(w[0].isupper() or w[0].isdigit() for w in words) < MIN_PROSE_TITLE_CAPS
                or not _english_title(span) or find_award_label(span) or find_venue_years(span) or is_institution(span)
                or names_only(span) or not _PAPER_CUE.search(rest)):
            continue
        found.append((start, span, m.end("title")))
    return found


def _narrative(lines: list[Line], kinds: list[str],
               finder=find_paper_mentions) -> tuple[list[Line], list[str], dict[int, str | None]]:
    """Split body lines at inline paper mentions (``finder``); each piece starting at a mention
    anchors a section headed by it (a paper mentioned again opens none)."""
    out_lines: list[Line] = []
    out_kinds: list[str] = []
    anchors: dict[int, str | None] = {}
    seen: set[str] = set()
    for line, kind in zip(lines, kinds, strict=True):
        mentions = finder(line.text) if kind == "body" else []
        mentions = [(off, m) for off, m in mentions if not (fold_title(m) in seen or seen.add(fold_title(m)))]
        cuts = sorted({off for off, _ in mentions if off > 0})
        bounds = [0, *cuts, len(line.text)]
        first_at: dict[int, str] = {}
        for off, mention in mentions:
            first_at.setdefault(off, mention)
        for a, b in zip(bounds, bounds[1:], strict=False):
            piece = Line(line.start + a, line.start + b, line.text[a:b])
            if piece.blank:
                continue
            if a in first_at:
                anchors[len(out_lines)] = first_at[a]
            out_lines.append(piece)
            out_kinds.append(kind)
    return out_lines, out_kinds, anchors


#: Words by which an explainer names the one paper it is about ("the ICLR 2024 paper <title>").
_ONE_PAPER_CUE = re.compile(r"\bpaper\b|论文|論文|\bpreprint\b", re.I)


#: Lines after the headline in which an explainer names the paper it is about.
RESTATED_HEADLINE_LINES = 4


def _restated_headline(lines: list[Line]) -> str | None:
    """The first line of a page when it is an English title that a sentence of the next
    :data:`RESTATED_HEADLINE_LINES` lines restates as the one paper (:data:`_ONE_PAPER_CUE`); else None."""
    if len(lines) < 2 or _heading_level(lines[0].stripped) > 1:
        return None
    head = plain(lines[0].stripped).strip()
    key = fold_title(head)
    if len(head.split()) < MIN_TITLE_WORDS or not _english_title(head) or _names_context(head):
        return None
    for line in lines[1 : 1 + RESTATED_HEADLINE_LINES]:
        for sentence in split_sentences(plain(line.stripped)):
            folded = fold_title(sentence)
            if key in folded and len(folded) > len(key) + 10 and _ONE_PAPER_CUE.search(sentence):
                return head
    return None


#: A Markdown link to a paper's page or file: its text may be the paper's title.
_PAPER_LINK = re.compile(
    r"\[(?P<text>[^\[\]\n]{8,300})\]\((?P<url>https?://(?:arxiv\.org/(?:abs|pdf)/|openreview\.net/(?:forum|pdf)"
    r"|aclanthology\.org/|\S+?\.pdf\b)[^)\s]*)\)", re.I)


def _quoted_title(lines: list[Line]) -> str | None:
    """The first quoted English title of a one-paper page, else the first English link text to a
    paper's page or file (``[Title](https://openreview.net/forum?id=…)``); else None."""
    for line in lines:
        for m in _MENTION.finditer(line.text) if any(ch in line.text for ch in '《“"‘「『') else ():
            inner = m.group("book") or m.group("corner") or (m.group("quoted") or m.group("squoted")).rstrip(",.;:，。；：")
            if _english_title(inner) and not _venue_heading(inner):
                return inner
    for line in lines:
        for m in _PAPER_LINK.finditer(line.text) if "](" in line.text else ():
            inner = m.group("text").strip()
            if _english_title(inner) and not _venue_heading(inner):
                return inner
    return None


def _untitled_blocks(lines: list[Line], kinds: list[str]) -> list[int]:
    """The first lines of metadata blocks with authors and a paper link but no title, when a page
    holds two or more (each opens an untitled section); else empty."""
    starts: list[int] = []
    i = 0
    while i < len(kinds):
        if kinds[i] != "kv":
            i += 1
            continue
        j = i
        while j < len(kinds) and kinds[j] == "kv":
            j += 1
        keys = {kv[0] for line in lines[i:j] if (kv := parse_key_value(plain(line.text))) is not None}
        if {"authors", "paper_url"} <= keys:
            starts.append(i)
        i = j
    return starts if len(starts) >= 2 else []


#: Evidence that a page reports one piece of research, each kind counted once (see
#: :func:`_one_paper_evidence`): strong kinds weigh 2, weak ones 1.
_PAPER_FILE_LINK = re.compile(r"https?://\S+?\.pdf\b|openreview\.net/(?:forum|pdf)\?id=[\w-]*", re.I)


_ABSTRACT_VOICE = re.compile(
    r"\b(?:in\s+this\s+(?:paper|work)|we\s+(?:propose|introduce|present))\b"
    r"|(?:本文|我们|我們|作者|团队|團隊|研究者|研究人员|研究人員)(?:首次|还|還|進一步|进一步)?提出", re.I)


_AUTHOR_ROLE = re.compile(r"第一作者|通[讯訊]作者|共同一作|\b(?:corresponding|first|lead)\s+author\b", re.I)


_WEAK_PAPER_WORD = re.compile(r"论文|論文|\bpaper\b", re.I)


#: The evidence weight at which a page with no title anchor is about one paper.
ONE_PAPER_EVIDENCE = 2


def _one_paper_evidence(text: str) -> int:
    """How strongly a page reads as a report of one paper: the one paper file it links, an
    abstract's voice ("本文提出") and an author's role (通讯作者) weigh 2 each; a paper word 1."""
    one_file = len({m.group(0) for m in _PAPER_FILE_LINK.finditer(text)}) == 1
    score = 2 * (one_file + sum(bool(p.search(text)) for p in (_ABSTRACT_VOICE, _AUTHOR_ROLE)))
    return score + bool(_WEAK_PAPER_WORD.search(text))


def _about_one_paper(text: str) -> bool:
    """Whether a document with no title anchor reports a paper: it links exactly one arXiv paper;
    or, linking none, has :data:`ONE_PAPER_EVIDENCE` (:func:`_one_paper_evidence`), or speaks of
    papers and has a sentence giving an award of a venue edition ("won the NeurIPS 2024 best paper award")."""
    arxiv = {a for a, _ in find_arxiv_ids(text)}
    if len(arxiv) == 1:
        return True
    if not arxiv and _one_paper_evidence(text) >= ONE_PAPER_EVIDENCE:
        return True
    if arxiv or not ABOUT_PAPERS.search(text) or not find_award_label(text):
        return False
    return any(find_award_label(sentence) and _names_venue_year(sentence)
               for paragraph in text.split("\n") for sentence in split_sentences(paragraph))
