"""Pure text helpers that recognise the typed fields of an article about a research paper.

Functions from ``str`` to plain Python values (no I/O, models or state); offsets are ``str``
indices. arXiv ids and URLs: :mod:`pipeline.identifiers`; names: :mod:`pipeline.names`; credit
lines: :mod:`pipeline.credits`.
"""

from __future__ import annotations

import bisect
import re
import unicodedata
from collections.abc import Iterator

from .identifiers import _url_spans, find_arxiv_ids, find_urls
from .names import _SPACES
from .textutil import _CASE_EXTRA, _memoised

# --- Awards ---------------------------------------------------------------------------------------

#: The award classes (:func:`normalize_award` tests them in the order of ``_AWARD_RULES``).
AWARDS: tuple[str, ...] = (
    "best_paper",
    "best_paper_runner_up",
    "outstanding_paper",
    "outstanding_position_paper",
    "honorable_mention",
    "test_of_time",
    "other",
)

# Most specific first: a best paper's runner-up is not a best paper. ``提名`` is an honourable
# mention, its usual Chinese rendering ("荣誉提名").
_AWARD_RULES: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("best_paper_runner_up", re.compile(r"runners?[\s-]*ups?\b|亚军|亞軍", re.I)),
    ("honorable_mention", re.compile(r"\bhonou?rable[\s-]+mentions?\b|提名", re.I)),
    ("test_of_time", re.compile(r"\btest[\s-]+of[\s-]+time\b|时间检验|時間檢驗|时间考验|時間考驗", re.I)),
    (
        "outstanding_position_paper",
        re.compile(
            r"\b(?:outstanding|best)\s+position\s+papers?\b|\bposition\s+papers?\s+awards?\b"
            r"|(?:杰出|傑出|最佳|优秀|優秀)(?:立场|立場)(?:论文|論文)|(?:立场|立場)(?:论文|論文)(?:奖|獎)",
            re.I,
        ),
    ),
    (
        "outstanding_paper",
        re.compile(
            r"\boutstanding(?:[\s-]+[\w&]+){0,3}?[\s-]+papers?\b|(?:杰出|傑出|优秀|優秀)(?:论文|論文)",
            re.I,
        ),
    ),
    # a best paper of one track by length ("Best Long Paper", "最佳短论文") is a best paper
    ("best_paper", re.compile(r"\bbest\s+(?:(?:long|short|full|regular)\s+)?papers?\b|最佳(?:长|長|短)?(?:论文|論文)", re.I)),
)

# Award-ish words that fit no class: "Award"/"Prize", "Best ... Paper", 奖/獎 except in 奖励,
# 奖金, 获奖 and similar compounds.
_AWARDISH = re.compile(
    r"\b(?:awards?|prizes?)\b|\b(?:best|distinguished)(?:[\s-]+[\w&]+){1,3}?[\s-]+papers?\b"
    r"|(?<![获獲颁頒得嘉])[奖獎](?![励勵金赏賞品学學助])"
    r"|(?:最佳|杰出|傑出|优秀|優秀)[\u4e00-\u9fff]{1,4}?(?:论文|論文)",  # 最佳学生论文 (best student paper)
    re.I,
)

# An award label as written: Chinese phrases, English phrases with their tails.
_ZH_AWARD = (
    r"(?:(?:最佳|杰出|傑出|优秀|優秀)(?:学生|學生|立场|立場|长|長|短)?(?:论文|論文)(?:奖项|獎項|奖|獎)?"
    r"(?:亚军|亞軍|荣誉提名|榮譽提名|提名|候选|候選)?(?:奖|獎)?"
    r"|(?:时间|時間)(?:检验|檢驗|考验|考驗)(?:奖|獎)?"
    r"|(?:荣誉|榮譽)提名(?:奖|獎)?)"
)
_EN_TAIL = (
    r"(?:[\s-]*(?:awards?|prizes?|runners?[\s-]*ups?|honou?rable[\s-]+mentions?|finalists?|candidates?))*"
)
#: (an English label may follow a Chinese character without a space: "两篇Best Paper Runner-up")
_EN_AWARD = (
    r"(?:(?:(?<![A-Za-z])(?:best|outstanding|distinguished)(?:[\s-]+[\w&]+){0,3}?[\s-]+papers?\b"
    r"|(?<![A-Za-z])test[\s-]+of[\s-]+time\b(?:[\s-]+papers?\b)?"
    r"|(?<![A-Za-z])honou?rable[\s-]+mentions?\b"
    r"|(?<![A-Za-z])runners?[\s-]*ups?\b)" + _EN_TAIL + r")"
)
_AWARD_LABEL = re.compile(rf"{_ZH_AWARD}|{_EN_AWARD}", re.I)
_GENERIC_AWARD_LABEL = re.compile(
    r"(?:\b[A-Z][\w'’-]*[ \t]+){1,4}(?:Award|Prize)s?\b|[\u4e00-\u9fff]{2,6}(?:奖|獎)(?![励勵金赏賞品学學助])"
)
_GLOSS = re.compile(r"\s*[（(][^（()）\n]{1,80}[）)]")


#: A label for a paper that was up for an award, not given one ("最佳论文候选", "finalist").
_NOT_AWARDED = re.compile(r"候选|候選|入围|入圍|\bcandidates?\b|\bfinalists?\b|\bshortlist", re.I)


@_memoised()
def normalize_award(raw: str | None) -> str | None:
    """Map an award label in zh-Hans, zh-Hant or English (``"杰出论文奖"``, or a longer line: the
    most specific class wins) to one of :data:`AWARDS`: ``"other"`` for an award-ish label of no
    class (``"Best Student Paper"``), ``None`` for no label, a candidate or a finalist.
    Vocabulary of the NeurIPS, ICML and ICLR announcements and their Chinese coverage.
    """
    if not raw or not raw.strip():
        return None
    text = unicodedata.normalize("NFKC", raw)
    if _NOT_AWARDED.search(text):
        return None
    for award, pattern in _AWARD_RULES:
        if pattern.search(text):
            return award
    if _AWARDISH.search(text):
        return "other"
    return None


@_memoised()
def find_award_label(text: str) -> str | None:
    """The first award label in ``text`` as written (``award_raw``), a parenthesised gloss kept
    (``"杰出立场论文奖（Outstanding Position Paper）"``); else a generic ``"<Capitalised words>
    Award/Prize"`` or ``"…奖"`` phrase; else None. Never raises.
    """
    if not text:
        return None
    m = _AWARD_LABEL.search(text)
    if m is None:
        m = _GENERIC_AWARD_LABEL.search(text)
        if m is None:
            return None
    return award_label_at(text, m.start(), m.end())


def award_label_at(text: str, start: int, end: int) -> str:
    """The award label matched at ``text[start:end]``, with a parenthesised gloss right after it
    kept when the gloss names an award too (``"杰出论文奖（Outstanding Paper）"``), stripped."""
    gloss = _GLOSS.match(text, end)
    if gloss and (_AWARD_LABEL.search(gloss.group()) or _AWARDISH.search(gloss.group())):
        end = gloss.end()
    return text[start:end].strip()


# --- Venues ---------------------------------------------------------------------------------------

#: Canonical venue names returned by :func:`find_venue_years`.
VENUES: tuple[str, ...] = (
    "NeurIPS", "ICML", "ICLR", "CVPR", "ICCV", "ECCV", "ACL", "EMNLP", "NAACL",
    "AAAI", "IJCAI", "KDD", "SIGIR", "WWW", "COLT", "UAI", "AISTATS",
    *(_ACRONYM_VENUES := (
        "EACL", "COLING", "TACL", "ICASSP", "INTERSPEECH", "CIKM", "WSDM", "ICDM", "ICSE", "MICCAI",
        "ICRA", "IROS", "CoRL", "WACV", "BMVC", "TPAMI", "TMLR", "JMLR", "SIGGRAPH", "NDSS", "MLSys",
        "SIGMOD", "VLDB", "UIST", "CHI", "ICDE", "TKDE", "TOIS", "ICMR", "ICME", "ECIR", "RecSys",
        "TIFS", "TNNLS", "IJCV", "TCSVT", "TOG", "GRSL", "ISBI", "ACCV",
    )),
    "ACM MM", "S&P", "IEEE VIS", "SIGCSE",
)

_A = r"(?<![A-Za-z0-9.])"  # ASCII word start (CJK neighbours and "Workshop@NeurIPS" are fine), not inside a host name
_Z = r"(?![A-Za-z]|\.[a-z])"  # ASCII word end; digits may follow ("ICML2025"); not "neurips.cc"
# Aliases per venue: acronyms (case-sensitive but NeurIPS/NIPS), English and Chinese full names.
_VENUE_ALIASES: dict[str, tuple[str, ...]] = {
    "NeurIPS": (
        _A + r"(?i:neurips|nips)" + _Z,
        r"(?i:neural\s+information\s+processing\s+systems)",
        r"神[经經](?:信息|資訊)[处處]理系[统統](?:大会|大會|会议|會議|年会|年會)",
    ),
    "ICML": (
        _A + r"ICML" + _Z,
        r"(?i:international\s+conference\s+on\s+machine\s+learning)",
        r"[国國][际際][机機]器[学學][习習](?:大会|大會|会议|會議)",
    ),
    "ICLR": (
        _A + r"ICLR" + _Z,
        r"(?i:international\s+conference\s+on\s+learning\s+representations?)",
        r"[国國][际際](?:[学學][习習][表][征徵示]|[表][征徵示][学學][习習])(?:大会|大會|会议|會議)",
    ),
    "CVPR": (
        _A + r"CVPR" + _Z,
        r"(?i:(?:conference\s+on\s+)?computer\s+vision\s+and\s+pattern\s+recognition)",
        r"(?:[计計][算][机機]|[电電][脑腦])[视視][觉覺](?:与|與|和)[模][式][识識][别別](?:大会|大會|会议|會議)",
    ),
    "ICCV": (
        _A + r"ICCV" + _Z,
        r"(?i:international\s+conference\s+on\s+computer\s+vision)",
        r"[国國][际際](?:[计計][算][机機]|[电電][脑腦])[视視][觉覺](?:大会|大會|会议|會議)",
    ),
    "ECCV": (
        _A + r"ECCV" + _Z,
        r"(?i:european\s+conference\s+on\s+computer\s+vision)",
        r"[欧歐][洲](?:[国國][际際])?(?:[计計][算][机機]|[电電][脑腦])[视視][觉覺](?:[国國][际際])?(?:大会|大會|会议|會議)",
    ),
    "NAACL": (
        _A + r"NAACL" + _Z,
        r"(?i:north\s+american\s+chapter\s+of\s+the\s+association\s+for\s+computational\s+linguistics)",
    ),
    "ACL": (
        _A + r"ACL" + _Z,
        r"(?i:association\s+for\s+computational\s+linguistics)",
        r"[计計][算][语語][言][学學](?:协会|協會|学会|學會)",
    ),
    "EMNLP": (
        _A + r"EMNLP" + _Z,
        r"(?i:empirical\s+methods\s+in\s+natural\s+language\s+processing)",
    ),
    "AAAI": (_A + r"AAAI" + _Z,),
    "IJCAI": (
        _A + r"IJCAI" + _Z,
        r"(?i:international\s+joint\s+conference\s+on\s+artificial\s+intelligence)",
        r"[国國][际際]人工智能[联聯][合](?:大会|大會|会议|會議)",
    ),
    "KDD": (
        _A + r"(?:SIG)?KDD" + _Z,
        r"(?i:knowledge\s+discovery\s+and\s+data\s+mining)",
    ),
    "SIGIR": (_A + r"SIGIR" + _Z,),
    "WWW": (
        r"(?<![A-Za-z0-9./])WWW(?![A-Za-z0-9]|\.[A-Za-z0-9])",
        r"(?i:the\s+web\s+conference|thewebconf)",
    ),
    "COLT": (
        _A + r"COLT" + _Z,
        r"(?i:conference\s+on\s+learning\s+theory)",
    ),
    "UAI": (
        _A + r"UAI" + _Z,
        r"(?i:(?:conference\s+on\s+)?uncertainty\s+in\s+artificial\s+intelligence)",
    ),
    "AISTATS": (
        _A + r"AISTATS" + _Z,
        r"(?i:artificial\s+intelligence\s+and\s+statistics)",
    ),
    # venues known by their acronym alone (a mixed-case one also in capitals: "CORL 2019")
    **{name: (_A + (f"(?:{re.escape(name)}|{re.escape(name.upper())})" if name != name.upper() else re.escape(name)) + _Z,)
       for name in _ACRONYM_VENUES},
    "ACM MM": (
        _A + r"ACM[ \t]?MM" + _Z,
        r"(?i:ACM\s+(?:International\s+Conference\s+on\s+)?Multimedia)",
    ),
    # (a bare "S&P" is a stock index; a bare "VIS" only before a year; EuroS&P is another venue)
    "S&P": (_A + r"IEEE[ \t]S&P" + _Z, r"(?i:(?<!european\s)symposium\s+on\s+security\s+and\s+privacy)"),
    "IEEE VIS": (_A + r"IEEE[ \t]VIS" + _Z, _A + r"VIS(?=[ \t]?(?:19|20)\d\d\b)", r"(?i:IEEE\s+visualization\s+conference)"),
    "SIGCSE": (_A + r"SIGCSE" + _Z,),
}
_VENUE_GROUPS = {f"v{i}": name for i, name in enumerate(_VENUE_ALIASES)}
_VENUE_ALT = "|".join(
    f"(?P<v{i}>{'|'.join(aliases)})" for i, aliases in enumerate(_VENUE_ALIASES.values())
)
_YEAR4 = r"(?:19[89]\d|20\d\d)"
_VENUE = re.compile(
    rf"(?:(?<![\d.])(?P<yb>{_YEAR4})\s*(?:年\s*)?)?"
    rf"(?:{_VENUE_ALT})"
    # the year after the name, maybe after the acronym in brackets, a comma or "Workshop":
    # "国际学习表征会议（ICLR）2024"
    rf"(?:(?:\s*[(（][A-Z][A-Za-z]{{1,9}}[)）]|\s+[Ww]orkshops?)?\s*[-–,，]?\s*(?P<ya>{_YEAR4})(?!\d)"
    rf"|(?:\s*['’‘`]\s*|[-–])(?P<y2>\d\d)(?![\d.])"
    # two digits right after an acronym, as a word of their own: "ICML24:", "CVPR23"
    rf"|(?<=[A-Z])(?P<yg>\d\d)(?![\w.]))?"
)


#: Where a venue mention can start: the first word(s) of every alias (an over-approximation,
#: a lookahead); :func:`_venue_matches` runs :data:`_VENUE` only there and at a year before.
_VENUE_HINT = re.compile(
    r"(?=(?i:neurips|nips|neural\s|international\s|conference\s|computer\s|european\s|north\s"
    r"|association\s|empirical\s|knowledge\s|the\s+web\s|thewebconf|artificial\s|uncertainty\s|symposium\s)"
    r"|ICML|ICLR|CVPR|ICCV|ECCV|NAACL|ACL|EMNLP|AAAI|IJCAI|SIGKDD|KDD|SIGIR|WWW|COLT|UAI|AISTATS|IEEE|VIS|SIGCSE"
    r"|神[经經]|[国國][际際]|[计計]算|[电電][脑腦]|[欧歐]洲|ACM|" + "|".join(map(re.escape, {*_ACRONYM_VENUES, *(v.upper() for v in _ACRONYM_VENUES)})) + ")"
)
_YEAR4_AT = re.compile(_YEAR4)


#: The literal starts of :data:`_VENUE_HINT` (``the web`` is found from ``web``).
_HINT_WORDS = ("neurips", "nips", "neural", "international", "conference", "computer", "european",
               "north", "association", "empirical", "knowledge", "thewebconf", "artificial", "uncertainty",
               "symposium")
_HINT_ACRONYMS = ("ICML", "ICLR", "CVPR", "ICCV", "ECCV", "NAACL", "ACL", "EMNLP", "AAAI", "IJCAI",
                  "SIGKDD", "KDD", "SIGIR", "WWW", "COLT", "UAI", "AISTATS", "ACM", "IEEE", "VIS", "SIGCSE",
                  *_ACRONYM_VENUES,
                  *(v.upper() for v in _ACRONYM_VENUES if v != v.upper()))
_HINT_HAN = tuple(a + b for a, b in (
    *[(x, y) for x in "神" for y in "经經"], *[(x, y) for x in "国國" for y in "际際"],
    *[(x, y) for x in "计計" for y in "算"], *[(x, y) for x in "电電" for y in "脑腦"],
    *[(x, y) for x in "欧歐" for y in "洲"],
))



def _by_first_character(words: tuple[str, ...]) -> dict[str, tuple[str, ...]]:
    """``words`` grouped by their first character."""
    groups: dict[str, list[str]] = {}
    for w in words:
        groups.setdefault(w[0], []).append(w)
    return {first: tuple(ws) for first, ws in groups.items()}


_HINT_WORDS_BY_FIRST = _by_first_character(_HINT_WORDS)
_HINT_ACRONYM = re.compile("|".join(map(re.escape, _HINT_ACRONYMS)))
_HINT_HAN_BY_FIRST = _by_first_character(_HINT_HAN)


def _venue_hints(text: str) -> list[int]:
    """Sorted start positions of :data:`_VENUE_HINT` in ``text``, or a superset of them."""
    low = text.lower()
    if len(low) != len(text) or (not text.isascii() and any(c in text for c in _CASE_EXTRA)):
        return [m.start() for m in _VENUE_HINT.finditer(text)]
    found: set[int] = set()
    # the words and Chinese starts whose first character the text holds (a Chinese start is not
    # ASCII)
    for groups, hay in ((_HINT_WORDS_BY_FIRST, low), (_HINT_HAN_BY_FIRST if not text.isascii() else {}, text)):
        for w in (w for first, ws in groups.items() if first in hay for w in ws):
            i = hay.find(w)
            while i >= 0:
                found.add(i)
                i = hay.find(w, i + 1)
    # the acronyms (case-sensitive; one holds a capital letter), by one pattern searched again
    # from each start found + 1: every position where one starts, overlapping ones too ("ACL"
    # inside "NAACL")
    m = _HINT_ACRONYM.search(text) if low != text else None
    while m is not None:
        found.add(m.start())
        m = _HINT_ACRONYM.search(text, m.start() + 1)
    i = low.find("web")
    while i >= 0:  # "the web conference": the hint is at "the"
        j = i
        while j > 0 and low[j - 1].isspace():
            j -= 1
        if j < i and low.startswith("the", j - 3):
            found.add(j - 3)
        i = low.find("web", i + 1)
    return sorted(found)


def _venue_matches(text: str) -> Iterator[re.Match[str]]:
    """The matches of ``_VENUE.finditer(text)``, each tried only at a :data:`_VENUE_HINT` position
    and, first, at a four-digit year (and 年) right before it."""
    pos, n = 0, len(text)
    for h in _venue_hints(text):
        if h < pos:
            continue
        j = h
        while j > pos and text[j - 1].isspace():
            j -= 1
        if j > pos and text[j - 1] == "年":
            j -= 1
            while j > pos and text[j - 1].isspace():
                j -= 1
        m = None
        if j - 4 >= pos and _YEAR4_AT.fullmatch(text, j - 4, j):
            m = _VENUE.match(text, j - 4)
        if m is None:
            m = _VENUE.match(text, h)
        if m is not None:
            yield m
            pos = m.end()
            if pos >= n:
                return


def _two_digit_year(yy: str) -> int:
    """``'25'`` -> 2025, ``'99'`` -> 1999 (pivot at 70; the oldest listed venue dates from 1980s)."""
    n = int(yy)
    return 2000 + n if n < 70 else 1900 + n


@_memoised(copy=list)
def find_venue_years(text: str) -> list[tuple[str, int | None, int, int]]:
    """Every venue mention in ``text``: ``(venue, year, char_start, char_end)`` in order, ``venue``
    one of :data:`VENUES`, ``year`` an int when adjacent (``ICML 2025``, ``ICML'25``, ``ICML24``,
    ``2025 年 ICML``; two digits pivot at 70) else None; the span includes the year. Acronyms are
    case-sensitive ASCII tokens (not ``ACL`` in ``ACLU``), full names in English or Chinese map to
    their acronym; mentions inside URLs are skipped. Never raises.
    """
    if not text:
        return []
    url_spans: list[tuple[int, int]] | None = None  # found at the first mention
    out: list[tuple[str, int | None, int, int]] = []
    for m in _venue_matches(text):
        if url_spans is None:
            url_spans = sorted((s, e) for s, e, _ in _url_spans(text))
            url_starts = [s for s, _ in url_spans]
        start, end = m.span()
        # URL spans do not overlap: only the last one starting before the mention's end can hold it
        k = bisect.bisect_left(url_starts, end) - 1
        if k >= 0 and (url_spans[k][0] <= start < url_spans[k][1] or url_spans[k][0] < end <= url_spans[k][1]):
            continue
        venue = _VENUE_GROUPS[next(g for g in _VENUE_GROUPS if m.group(g) is not None)]
        year: int | None = None
        if m.group("ya"):
            year = int(m.group("ya"))
        elif m.group("y2") or m.group("yg"):
            year = _two_digit_year(m.group("y2") or m.group("yg"))
        elif m.group("yb"):
            year = int(m.group("yb"))
        out.append((venue, year, start, end))
    return out


# Proceedings and conference sites whose addresses name a venue and year (ACL Anthology ids:
# https://aclanthology.org/info/ids/; CVF open-access paths; the sites' yearly folders).
_ANTHOLOGY_VENUES = {"acl": "ACL", "findings-acl": "ACL", "emnlp": "EMNLP", "findings-emnlp": "EMNLP",
                     "naacl": "NAACL", "findings-naacl": "NAACL", "eacl": "EACL", "findings-eacl": "EACL",
                     "coling": "COLING", "tacl": "TACL"}
_OLD_ANTHOLOGY = {"P": "ACL", "D": "EMNLP", "N": "NAACL", "E": "EACL", "C": "COLING", "Q": "TACL"}
_VENUE_URLS: tuple[tuple[re.Pattern[str], str | None], ...] = (
    (re.compile(r"aclanthology\.org/(?P<year>(?:19|20)\d\d)\.(?P<key>[a-z-]+?)(?:-(?:main|long|short|demo|srw|industry|tutorials))?\.\d", re.I), None),
    (re.compile(r"aclanthology\.org/(?P<old>[PDNECQ])(?P<yy>\d\d)-\d{4}", re.I), None),
    (re.compile(r"(?:blog\.)?(?:neurips|nips)\.cc/(?:virtual[/_]|Conferences/)?(?P<year>(?:19|20)\d\d)\b", re.I), "NeurIPS"),
    (re.compile(r"(?:proceedings|papers)\.(?:neurips|nips)\.cc/paper(?:_files/paper)?/(?P<year>(?:19|20)\d\d)\b", re.I), "NeurIPS"),
    (re.compile(r"openaccess\.thecvf\.com/content[/_]?(?P<cvf>CVPR|ICCV|ECCV|WACV)_?(?P<year>(?:19|20)\d\d)", re.I), None),
    (re.compile(r"\b(?P<cvf>cvpr|iccv|eccv|wacv)\.thecvf\.com/(?:virtual/|Conferences/)?(?P<year>(?:19|20)\d\d)\b", re.I), None),
    (re.compile(r"\bicml\.cc/(?:virtual[/_]|Conferences/)?(?P<year>(?:19|20)\d\d)\b", re.I), "ICML"),
    (re.compile(r"\biclr\.cc/(?:virtual[/_]|Conferences/)?(?P<year>(?:19|20)\d\d)\b", re.I), "ICLR"),
    (re.compile(r"\bijcai\.org/proceedings/(?P<year>(?:19|20)\d\d)\b", re.I), "IJCAI"),
    (re.compile(r"\becva\.net/papers/eccv_(?P<year>(?:19|20)\d\d)\b", re.I), "ECCV"),
    (re.compile(r"\b(?P<year>(?:19|20)\d\d)\.(?P<site>acl|emnlp|naacl|eacl|aclweb|coling)\.org\b|\b(?:acl|emnlp|naacl|eacl)(?P<year2>(?:19|20)\d\d)\.org\b", re.I), None),
)

#: A venue and year as one word of an address's path (``.../neurips_2019.pdf``); not ``WWW``.
_SLUG_NAME = r"(?<![a-z0-9])(?P<slug>nips|" + "|".join(v.lower() for v in VENUES if v != "WWW") + r")[_-]?"
_VENUE_SLUG = re.compile(_SLUG_NAME + r"(?P<year>(?:19|20)\d\d)(?!\d)", re.I)
_SLUG_VENUES = {v.lower(): v for v in VENUES} | {"nips": "NeurIPS"}
#: :data:`_VENUE_SLUG` in two steps, for :func:`find_venue_slugs`: a year, then the acronym before.
_SLUG_YEAR = re.compile(r"(?:19|20)\d\d(?!\d)")
_SLUG_BEFORE_YEAR = re.compile(_SLUG_NAME + r"\Z", re.I)
_MAX_SLUG_CHARS = max(map(len, _SLUG_VENUES)) + 1
#: Code hosts, whose path words are an account's or a project's names (``github.com/acl2023/``).
_CODE_HOST = re.compile(r"(?:www\.)?(?:github\.com|gitlab\.com|huggingface\.co|gitee\.com)/", re.I)


def find_venue_slugs(text: str) -> list[tuple[str, int]]:
    """``(venue, year)`` of every venue glued to its year as one word of any case outside the
    text's URLs (``[neurips_2019]``)."""
    bare = _URL_TEXT.sub(" ", text) if "://" in text else text
    out = []
    for year in _SLUG_YEAR.finditer(bare):
        m = _SLUG_BEFORE_YEAR.search(bare, max(0, year.start() - _MAX_SLUG_CHARS), year.start())
        if m is not None:
            out.append((_SLUG_VENUES[m.group("slug").lower()], int(year.group())))
    return out


_URL_TEXT = re.compile(r"\S+://\S+")


def venue_from_url(url: str) -> tuple[str, int] | None:
    """The venue and year a proceedings or conference address names (``aclanthology.org/2023.eacl-main.46``
    -> EACL 2023), or a path word (``.../d_icml_2019_talks/``) off code hosts; else None."""
    for pattern, venue in _VENUE_URLS:
        m = pattern.search(url)
        if m is None:
            continue
        g = m.groupdict()
        if g.get("old"):
            return _OLD_ANTHOLOGY[g["old"].upper()], _two_digit_year(g["yy"])
        if g.get("cvf"):
            return g["cvf"].upper(), int(g["year"])
        if g.get("key"):
            name = _ANTHOLOGY_VENUES.get(g["key"].lower())
            return (name, int(g["year"])) if name else None
        if "site" in g and (g.get("site") or g.get("year2")):
            site = (g.get("site") or re.match(r"[a-z]+", m.group(0), re.I).group(0)).lower()
            name = "ACL" if site == "aclweb" else _ANTHOLOGY_VENUES.get(site)
            return (name, int(g.get("year") or g["year2"])) if name else None
        return venue, int(g["year"])
    host_start = url.find("//") + 2 if "//" in url else 0
    host_end = url.find("/", host_start)
    code_host = _CODE_HOST.match(url, host_start)
    m = _VENUE_SLUG.search(url, host_end) if host_end >= 0 and code_host is None else None
    return (_SLUG_VENUES[m.group("slug").lower()], int(m.group("year"))) if m else None


# --- Metadata lines -------------------------------------------------------------------------------

#: Canonical keys returned by :func:`parse_key_value`.
KEYS: tuple[str, ...] = (
    "title", "authors", "institutions", "award", "venue", "year",
    "paper_url", "project_url", "code_url", "reference_url", "summary",
)

_KEY_ALIASES: dict[str, tuple[str, ...]] = {
    "title": (
        "论文标题", "論文標題", "标题", "標題", "论文题目", "論文題目", "题目", "題目",
        "论文名称", "論文名稱", "论文名", "論文名", "题名", "題名",
        "title", "paper title", "main title", "paper name",
        "原文", "原文标题", "原文標題", "原标题", "原標題", "英文标题", "英文標題", "英文题目", "英文題目",
        "原题", "原題", "original title",
    ),
    "authors": ("作者", "论文作者", "論文作者", "论文作者群", "論文作者群", "作者群", "authors", "author"),
    "institutions": (
        "机构", "機構", "单位", "單位", "作者单位", "作者單位", "作者机构", "作者機構", "研究机构", "研究機構",
        "所属机构", "所屬機構",
        "affiliations", "affiliation", "institutions", "institution", "institute", "organization", "organisation",
    ),
    "award": ("奖项", "獎項", "获奖", "獲獎", "获奖情况", "獲獎情況", "所获奖项", "所獲獎項", "award", "awards"),
    "venue": ("会议", "會議", "发表会议", "發表會議", "发表于", "發表於", "收录", "收錄", "期刊", "会议/期刊", "會議/期刊",
              "发表会议/期刊", "發表會議/期刊", "venue", "conference",
              "publisher", "published in", "publication", "proceedings", "journal"),
    "year": ("年份", "年度", "发表年份", "發表年份", "发表时间", "發表時間", "year", "publication year",
             "日期", "出版日期", "出版年", "发表日期", "發表日期", "date"),
    "paper_url": (
        "论文地址", "論文地址", "论文链接", "論文鏈接", "論文連結", "链接", "鏈接", "連結",
        "arxiv", "paper", "link", "pdf", "paper link", "paper url", "论文", "論文",
    ),
    "project_url": (
        "论文主页", "論文主頁", "项目主页", "項目主頁", "项目地址", "項目地址", "主页", "主頁",
        "project page", "project", "homepage", "website",
    ),
    "code_url": ("代码", "代碼", "程式碼", "代码地址", "代碼地址", "代码链接", "代碼鏈接", "code", "github"),
    "reference_url": (
        "参考链接", "參考鏈接", "參考連結", "参考资料", "參考資料", "原文链接", "原文鏈接", "原文連結",
        "reference", "references", "source",
    ),
    "summary": ("论文摘要", "論文摘要", "摘要", "abstract", "tl;dr", "tldr", "summary"),
}
_KEY_TABLE: dict[str, str] = {
    alias.replace(" ", ""): key for key, aliases in _KEY_ALIASES.items() for alias in aliases
}
#: Keys whose value decides between a title and a paper link ("论文：<title>" vs "Paper: <url>").
GENERIC_PAPER_KEYS = frozenset({"paper", "论文", "論文"})
#: Keys naming "the original" of a translated item: its title, or with a link a paper_url (arXiv)
#: or a reference.
ORIGINAL_KEYS = frozenset({"原文", "原文标题", "原文標題", "原标题", "原標題", "英文标题", "英文標題",
                           "英文题目", "英文題目", "原题", "原題", "original title"})
_ORIGINAL_LINK_KEYS = frozenset({"原文链接", "原文鏈接", "原文連結"})
_NUMBERED_KEY = re.compile(r"^(?:论文|論文|paper)(?:\d+|[一二三四五六七八九十]+)$")
_EMOJI_KEYS: dict[str, str] = {
    "📄": "title",
    "📃": "title",
    "👥": "authors",
    "👤": "authors",
    "🏆": "award",
    "🔗": "paper_url",
    "🏛": "institutions",
    "🏫": "institutions",
}
_BULLET = re.compile(r"^(?:[\s\-*•·●▪◦>#+]|\d{1,3}[.)、．](?=\s))*")
_KEY_LINE = re.compile(r"^(?P<key>[^\s：:][^：:\n]{0,23}?)\s*[：:]\s*(?P<value>.*)$", re.S)
_KEY_DECOR = re.compile(r"[*_【】\[\]]|[（(][^（()）]*[）)]")
_MAX_KEY_CHARS = 12


def _lookup_key(raw_key: str) -> str | None:
    k = _KEY_DECOR.sub("", raw_key).strip().casefold()
    k = _SPACES.sub("", k).lstrip("-*+•·▪●").lstrip()
    k = re.sub(r"^[^\w\u3400-\u9fff]+", "", k)  # an emoji or symbol before the key ("📑 Publisher")
    if not k or len(k) > _MAX_KEY_CHARS:
        return None
    if _NUMBERED_KEY.match(k):
        return "title"
    return _KEY_TABLE.get(k)


def _has_link(value: str) -> bool:
    return bool(find_urls(value) or find_arxiv_ids(value, allow_bare=True))


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip(" "))


#: A line that starts a block of its own: a list item, "#", ">" or a table row.
_OWN_BLOCK = re.compile(r"[-*+•]\s|\d{1,3}[.)]\s|[#>|]")


def continues_value(key_line: str, line: str) -> bool:
    """Whether ``line`` continues the value of ``key_line`` (an indented or "- " ``key: value``
    line) as YAML folds a plain scalar (YAML 1.2, 7.3.3): indented deeper, no block of its own
    (:data:`_OWN_BLOCK`), no ``key: value`` line."""
    stripped = key_line.lstrip(" ")
    item = stripped.startswith("- ")
    if not (item or _indent(key_line)) or _indent(line) <= _indent(key_line) + 2 * item:
        return False
    if not line.strip() or _OWN_BLOCK.match(line.lstrip(" ")):
        return False
    parsed = parse_key_value(key_line)
    return parsed is not None and bool(parsed[1]) and parse_key_value(line) is None


@_memoised()
def parse_key_value(line: str) -> tuple[str, str] | None:
    """``(key, value)`` of a metadata line (leading bullets, ``>``, ``#`` ignored), ``key`` one of
    :data:`KEYS` and ``value`` the non-empty stripped rest; None for any other line. Never raises.

    Forms: an emoji key (``👥 A, B``; :data:`_EMOJI_KEYS`); ``key：value`` with ``key`` an alias of
    ``_KEY_ALIASES`` (decoration and a parenthesised gloss dropped, case- and space-insensitive);
    ``Paper N: <title>``; the bare key ``论文``/``Paper``: paper_url when the value holds a link
    or a placeholder, else title. A ``paper_url`` value may be a bare arXiv id.
    """
    if not line:
        return None
    s = _BULLET.sub("", line.strip()).strip()
    if not s:
        return None
    emoji_key = _EMOJI_KEYS.get(s[0])
    if emoji_key is not None:
        rest = s[1:].lstrip("\ufe0f").strip()
        inner = parse_key_value(rest) if rest and rest[0] not in _EMOJI_KEYS else None
        if inner is not None:
            return inner
        return (emoji_key, rest) if rest else None
    m = _KEY_LINE.match(s)
    if m is None:
        return None
    key = _lookup_key(m.group("key"))
    value = m.group("value").strip()
    if value.endswith(">"):  # "Authors: A, B <br>"
        value = _TRAILING_BREAKS.sub("", value)
    if key is None or not value:
        return None
    if " | " in value:  # "**Authors:** A, B | **Date:** 2026-03-26"
        head, _, rest = value.partition(" | ")
        value = head.strip() if head.strip() and _KEY_LINE.match(rest.strip()) and parse_key_value(rest) else value
    bare_key = _KEY_DECOR.sub("", m.group("key")).strip().casefold()
    if bare_key in GENERIC_PAPER_KEYS:
        key = "paper_url" if _has_link(value) or PLACEHOLDER_VALUE.fullmatch(value) else "title"
    elif bare_key in ORIGINAL_KEYS:
        key = "title" if not _has_link(value) else "paper_url" if find_arxiv_ids(value) else "reference_url"
    elif bare_key in _ORIGINAL_LINK_KEYS and find_arxiv_ids(value):
        key = "paper_url"
    return key, value


def names_original_title(line: str) -> bool:
    """Whether ``line`` is a title line keyed by :data:`ORIGINAL_KEYS` (``原文：<title>``)."""
    kv = parse_key_value(line)
    if kv is None or kv[0] != "title":
        return False
    m = _KEY_LINE.match(_BULLET.sub("", line.strip()).strip())
    return m is not None and _KEY_DECOR.sub("", m.group("key")).strip().casefold() in ORIGINAL_KEYS


#: HTML line breaks closing a metadata value.
_TRAILING_BREAKS = re.compile(r"(?:\s*<br\s*/?>)+$", re.I)
#: A value that stands for a missing one ("Paper: None", "Code: N/A", "论文：暂无").
PLACEHOLDER_VALUE = re.compile(r"(?i:none|null|n/?a|tbd|tba|coming soon|-+|—+)|暂无|暫無|无|無|待定|待补充|待補充")


# --- Titles ---------------------------------------------------------------------------------------

# British -> American spelling, whole-word suffix rules only (applied after casefolding).
_SPELLING_RULES: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"\b([a-z]{2,})isation(s?)\b"), r"\1ization\2"),
    (re.compile(r"\b([a-z]{3,})is(e|ed|es|er|ers|ing)\b"), r"\1iz\2"),
    (re.compile(r"\b([a-z]{2,})ys(e|ed|es|ing)\b"), r"\1yz\2"),
    (re.compile(r"\b([a-z]+el)l(ing|ed|er|ers)\b"), r"\1\2"),
    (re.compile(r"\b(behavi|neighb|col|fav|lab|hum)our(s|ed|ing|al|ally|ite|ites)?\b"), r"\1or\2"),
    (re.compile(r"\bcentre(s?)\b"), r"center\1"),
)
#: What every match of a :data:`_SPELLING_RULES` pattern contains.
_SPELLING_CUE = re.compile(r"isation|is(?:e|ing)|ys(?:e|ing)|ell(?:ing|ed|er)|our|centre")


#: What :func:`fold_title` removes from case-folded ASCII.
_ASCII_NOT_LETTER_OR_DIGIT = re.compile(r"[^a-z0-9]+")


@_memoised()
def fold_title(title: str) -> str:
    """The exact-match dedup key of a title: NFKC (UAX #15), ``str.casefold``, British spellings
    folded (``_SPELLING_RULES``), every character but letters, digits and combining marks removed.
    Accents and Chinese script are kept; ``""`` for an empty title. Never raises.
    """
    words = fold_title_words(title)
    if words.isascii():
        return _ASCII_NOT_LETTER_OR_DIGIT.sub("", words)
    # runs of non-word characters are dropped but for their combining marks
    return _NOT_WORD_RUN.sub(_marks_of, words)


#: A run of characters that are not letters or digits (``\W`` and ``_``), marks included.
_NOT_WORD_RUN = re.compile(r"[\W_]+")


def _marks_of(m: re.Match[str]) -> str:
    """The combining marks (Unicode category M) of a :data:`_NOT_WORD_RUN` match."""
    return "".join(ch for ch in m.group() if unicodedata.category(ch)[0] == "M")


def fold_title_words(title: str) -> str:
    """``title`` NFKC-normalised, case-folded and with British spellings folded to American, as
    in :func:`fold_title`, but with spaces and punctuation kept (for word-level comparison).
    Returns ``""`` for an empty title. Never raises."""
    if not title:
        return ""
    s = unicodedata.normalize("NFKC", title).casefold()
    if _SPELLING_CUE.search(s):
        for pattern, repl in _SPELLING_RULES:
            s = pattern.sub(repl, s)
    return s


# --- Sentences ------------------------------------------------------------------------------------

_SENT_OPENERS = frozenset("（(《「『“【[")
_SENT_CLOSERS = frozenset("）)》」』”】]")
#: Words that end in a full stop without ending the sentence ("et al."); an initial neither.
_NON_FINAL_ABBREVIATIONS = frozenset("al e.g i.e vs etc dr prof mr ms mrs fig figs no eq sec ch vol".split())


_SENT_MARKS = re.compile("[" + re.escape("".join(sorted(_SENT_OPENERS | _SENT_CLOSERS))) + '"。！？!?.]')


_ABBREVIATION_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz.")


def _ends_abbreviation(text: str, dot: int) -> bool:
    """Whether the ``.`` at ``dot`` closes an initial (``V.``) or an abbreviation (``et al.``)."""
    # the word before the dot: ASCII letters and dots after whitespace or an opening bracket
    j = dot
    while j > 0 and text[j - 1] in _ABBREVIATION_CHARS:
        j -= 1
    if j == dot or text[j] == "." or (j > 0 and not (text[j - 1].isspace() or text[j - 1] in "(（")):
        return False
    word = text[j:dot]
    return (len(word) == 1 and word.isupper()) or word.casefold() in _NON_FINAL_ABBREVIATIONS


def split_sentences(paragraph: str) -> list[str]:
    """Sentences of a paragraph, cut after 。！？!? (and after ``.`` before a space), but never
    inside brackets, book-title marks or quotation marks, nor after an initial (``Quoc V. Le``)
    or an abbreviation such as ``et al.``; the pieces join back to the input."""
    out, start, depth, in_ascii_quote = [], 0, 0, False
    for hit in _SENT_MARKS.finditer(paragraph):  # only the characters that matter below
        i, ch = hit.start(), hit.group()
        if ch in _SENT_OPENERS:
            depth += 1
        elif ch in _SENT_CLOSERS:
            depth = max(0, depth - 1)
        elif ch == '"':
            in_ascii_quote = not in_ascii_quote
        elif depth == 0 and not in_ascii_quote and (
            ch in "。！？!?"
            or (ch == "." and paragraph[i + 1 : i + 2] == " " and not _ends_abbreviation(paragraph, i))
        ):
            out.append(paragraph[start : i + 1])
            start = i + 1
    if start < len(paragraph):
        out.append(paragraph[start:])
    return out


# --- Awards stated in prose -----------------------------------------------------------------------

#: Words that say a paper receives an award ("获得杰出论文奖", "won the best paper award").
_AWARD_CUE = re.compile(
    r"获得|獲得|荣获|榮獲|获颁|獲頒|摘得|入选|入選|包括|还有|還有|颁给|頒給|授予|"
    r"\b(?:won|wins|winners?|awarded|receives?|received|went\s+to|goes\s+to|honou?red)\b",
    re.I,
)


#: Award classes that qualify another class named in the same sentence ("runners-up for the
#: outstanding paper award" is a runner-up).
_MODIFIER_AWARDS = frozenset({"best_paper_runner_up", "honorable_mention"})


def lead_award(text: str) -> str | None:
    """The one award label a headline and lead give all papers ("The ACL 2024 best paper awards
    went to ..."), or None when they name more than one class; a runner-up or honourable mention
    beside the award it qualifies counts as the qualifier.
    """
    found: dict[str, str] = {}
    for sentence in (s for line in (text or "").splitlines() for s in split_sentences(line)):
        labels = [m.group() for m in _AWARD_LABEL.finditer(sentence)]
        classes = {normalize_award(label): label for label in labels if normalize_award(label)}
        if len(classes) > 1:
            modifiers = set(classes) & _MODIFIER_AWARDS
            if len(modifiers) != 1 or not set(classes) - modifiers <= {"best_paper", "outstanding_paper"}:
                return None
            cls = modifiers.pop()
            classes = {cls: classes[cls]}
        for cls, label in classes.items():
            found.setdefault(cls, label)
    return next(iter(found.values())) if len(found) == 1 else None


# --- Venue years stated as dates ------------------------------------------------------------------

#: English month names and their abbreviations (a regex alternation).
MONTHS = (
    r"January|February|March|April|May|June|July|August|September|October|November|December"
    r"|Jan\.?|Feb\.?|Mar\.?|Apr\.?|Jun\.?|Jul\.?|Aug\.?|Sept?\.?|Oct\.?|Nov\.?|Dec\.?"
)
#: A date with a month: 2024 年 12 月, 2024年12月, December 2024, Dec. 2024, 2024-12.
_DATED_YEAR = re.compile(
    rf"(?<!\d)(?P<y1>{_YEAR4})\s*年\s*(?:\d{{1,2}}|[一二三四五六七八九十]{{1,3}})\s*月"
    rf"|\b(?:{MONTHS})\s+(?:\d{{1,2}},?\s+)?(?P<y2>{_YEAR4})\b"
    rf"|(?<![\d.])(?P<y3>{_YEAR4})-(?:0[1-9]|1[0-2])(?![\d])"
)


def find_dated_venue_years(text: str) -> list[tuple[str, int]]:
    """``(venue, year)`` for each venue named without a year in a sentence holding exactly one
    date with a month (``2024 年 12 月，NeurIPS 把…``); a bare year is usually a paper's, not read.
    """
    out: list[tuple[str, int]] = []
    for line in (text or "").splitlines():
        for sentence in split_sentences(line):
            dates = {int(next(g for g in m.groups() if g)) for m in _DATED_YEAR.finditer(sentence)}
            if len(dates) != 1:
                continue
            year = dates.pop()
            for venue, y, _, _ in find_venue_years(sentence):
                if y is None:
                    out.append((venue, year))
    return out
