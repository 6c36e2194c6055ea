"""Credits: the authors and institutions an article credits a paper to, from a bare credit line
(:func:`parse_credit_line`) or a sentence of prose (:func:`find_credit`), in zh-Hans, zh-Hant and
English.
"""

from __future__ import annotations

import bisect
import re

from .fields import _GLOSS, split_sentences
from .names import (
    _CJK,
    _EN_ORG_WORDS,
    _SPACES,
    _TRUNCATION,
    _ZH_NOT_NAME,
    _ZH_ORG_HEAD,
    _latin_org,
    is_institution,
)
from .textutil import _CASE_EXTRA, YEAR, _memoised

# A Latin person-name token: a capitalised word (accents, apostrophes, hyphenated parts; one inner
# capital after a prefix, as in LeCun) or an initial ("V."); not NVIDIA or DeepMind.
_UP = "A-ZÀ-ÖØ-ÞĀ-Ž"  # Latin-1 and Latin Extended-A capitals (Łukasz, Šimon)
_LOW = "a-zß-öø-ÿā-ž"  # Latin Extended-A mixes cases (Marasović)
_NAME_TOKEN = (
    rf"(?:(?:Mc|Mac|O['’]|D['’]|De|Di|La|Le|Du)?[{_UP}][{_LOW}'’]+(?:[-\u2010\u2011][{_UP}]?[{_LOW}'’]+)*|[{_UP}]\.)"
)
_PARTICLE = r"(?:van|von|de|der|den|da|di|del|della|du|dos|das|bin|ter)"
#: A person: 1-4 name tokens (up to two particles between them: "van der"), ending in a word, not an initial.
_PERSON = rf"{_NAME_TOKEN}(?:\s+(?:{_PARTICLE}\s+){{0,2}}{_NAME_TOKEN}){{0,3}}"
_PERSON_RE = re.compile(rf"{_PERSON}")
#: One Latin word naming a company or a lab: capitalised, maybe with inner capitals (OpenAI).
_BRAND = re.compile(rf"[{_UP}][A-Za-z0-9]*[{_LOW}A-Z0-9]")
_NAMES = rf"{_PERSON}(?:\s*,\s*{_PERSON})*(?:,?\s+(?:and|&)\s+{_PERSON})?"
# An English organisation: capitalised words or acronyms, joined by of/for/the/de inside.
_ORG_WORD = r"(?:[A-Z][\w&'’.-]*)"
_ORG = rf"(?:the\s+)?{_ORG_WORD}(?:\s+(?:(?:of|for|de)\s+(?:the\s+)?)?{_ORG_WORD})*"
_ORGS = rf"{_ORG}(?:(?:\s*,\s*(?:and\s+)?|\s+(?:and|&)\s+){_ORG})*"
_COLLEAGUES = re.compile(
    r"^\s*(?:,?\s*(?:and|&)\s+(?:his\s+|her\s+|their\s+)?(?:colleagues|co-?authors|collaborators|co-?workers)"
    r"|\s+et\s+al\b\.?)",
    re.I,
)
_EN_AFFILIATION = re.compile(rf"^\s*,?\s+(?:at|of|from)\s+(?P<orgs>{_ORGS})")
#: English words that start a sentence but never a name (spaCy's stop list holds "Well"); first token only.
_EN_NON_NAMES = frozenset(
    "a an the this these that those in on at by for from with to of and or but as it its their his her "
    "our we they he she i another other both each every one two three four five recently together "
    "instead however meanwhile also then here there when while after before since although though "
    "researchers authors scientists team".split()
)
#: Verbs that say a sentence-initial subject made the work ("Kingma and Ba combined ..."); any -ed too.
_EN_CREDIT_VERBS = frozenset(
    "propose proposes present presents introduce introduces show shows showed shown find finds found "
    "build builds built develop develops design designs train trains combine combines let lets use uses "
    "study studies prove proves demonstrate demonstrates describe describes release releases argue argues "
    "derive derives analyze analyzes analyse analyses extend extends scale scales measure measures "
    "report reports discover discovers give gives gave make makes made take takes took win wins won "
    "audit audits evaluate evaluates test tests trace traces".split()
)
# Paper-reference words after which "by <names>" credits the paper's authors.
_EN_BY_CUE = re.compile(r"(?:[”\"’)》]|\b(?:paper|papers|work|study|article|preprint|method|model))\s*,?\s*$", re.I)
_EN_TEAM = re.compile(
    rf"\b(?:[Rr]esearchers|[Ss]cientists|[Ee]ngineers|(?:[Aa]|[Tt]he)\s+(?:[A-Z][\w-]*\s+){{0,3}}(?:research\s+)?(?:team|group))"
    rf"\s+(?:at|from|of)\s+(?P<orgs>{_ORGS})"
)

# Chinese frames. A credited span runs from the start of its clause to the frame's marker.
_ZH_CLAUSE_END = "，,；;：:。！？!?（(）)《》「」“”"
_ZH_CLAUSE_END_RE = re.compile("[" + re.escape(_ZH_CLAUSE_END) + "]")
#: Words after which a credited span starts inside its clause ("同届荣誉提名则包括<X>等人的《…》").
_ZH_INTRODUCER = re.compile(r"包括|包含|还有|還有|则有|則有|来自|來自|以及|由|是|为|為|有")
_ZH_ROLE = re.compile(
    r"(?:指导教授|指導教授|助理教授|副教授|教授|博士后|博士後|博士生|博士|硕士生|碩士生|本科生|学生|學生|研究员|研究員"
    r"|研究人员|研究人員|研究者|研究科学家|研究科學家|科学家|科學家|工程师|工程師|学者|學者|讲师|講師|一作|作者|成员|成員)$"
)
_ZH_CONNECTIVE = re.compile(r"^(?:此外|另外|同时|同時|而|其中|同期|同屆|同届|最后|最後|另一篇|另一项|另一項)")
# (marker, kind): "credit" spans name people (and affiliations), "org" institutions, "subject"
# a sentence's subject (accepted only when names).
_ZH_FRAMES: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"等人"), "credit_truncated"),
    (re.compile(r"(?:等(?:机构|機構|单位|單位|高校))?的(?:研究者|研究人员|研究人員|研究团队|研究團隊|团队|團隊"
                r"|学者|學者|科学家|科學家|研究小组|研究小組)"), "org"),
    (re.compile(r"\s*(?:共同|合作)?(?:合作|完成|撰写|撰寫|提出|发表|發表|合著|主导|主導|开发|開發|研发|研發|领衔|領銜)(?:了)?的?(?=《)"
                r"|\s*(?:在|于|於)\s*(?:19|20)\d\d\s*年\s*(?:提出|发表|發表|完成)"), "credit"),
    (re.compile(r"的?(?:研究者|研究人员|研究人員|研究团队|研究團隊|团队|團隊|学者|學者)"
                r"(?=\s*(?:共同|合作)?(?:完成|提出|撰写|撰寫|发表|發表))"), "org"),
    (re.compile(r"等(?:机构|機構|单位|單位|高校)(?:的|联合|聯合|合作)"), "org"),  # "X、Y等机构的论文"
    (re.compile(r"\s*的(?=《)"), "credit"),
    (re.compile(r"\s*(?:凭借|憑藉|凭|憑)(?=《)"), "credit"),  # "X团队凭《…》斩获…"
    (re.compile(r"\s*(?:共同|联合|聯合|合作)*(?:提出|完成|撰写|撰寫|发表|發表|合著|主导|主導|开发|開發|研发|研發|领衔|領銜)"), "by"),
    (re.compile(r"\s*(?:等(?![人机機单單高])|提出|发布|發布|推出|开源|開源|把|将|將|用|利用|构建|構建|训练|訓練|设计|設計)"),
     "subject"),
)
#: Per frame of :data:`_ZH_FRAMES`, what every match of it holds (a cheap search first: most
#: frames open with ``\s*`` and are tried at every position), or None.
_ZH_FRAME_NEEDLES: tuple[re.Pattern[str] | None, ...] = (
    None,
    re.compile(r"的"),
    re.compile(r"《|年"),
    re.compile(r"研究|团队|團隊|学者|學者"),
    re.compile(r"等"),
    re.compile(r"的《"),
    re.compile(r"《"),
    re.compile(r"提出|完成|撰写|撰寫|发表|發表|合著|主导|主導|开发|開發|研发|研發|领衔|領銜"),
    None,
)
#: The verbs of a release, after which a one-word subject is the company that made the work.
_ZH_RELEASE = re.compile(r"发布|發布|推出|开源|開源")
_ZH_FROM = re.compile(
    r"(?:来自|來自)\s*(?P<x>[^，,。；;：:！？!?《》]+?)\s*(?:等(?:机构|機構|单位|單位|高校))?的"
)
#: A clause ending with the places the work comes from ("作者来自X、Y。").
_ZH_FROM_CLAUSE = re.compile(
    r"(?:^|(?<=[，,。；;]))\s*(?:[^，,。；;]{0,6}?(?:作者|作者们|作者們|研究|论文|論文|团队|團隊|机构|機構|工作|成果))?"
    r"\s*(?:均|都|分别|分別)?\s*(?:来自|來自)\s*(?P<x>[^，,。；;：:！？!?《》「」“”()（）]+?)"
    r"\s*(?:等(?:机构|機構|单位|單位|高校)?)?\s*(?=[，,。；;！!]|$)"
)
#: The Latin name a team is called by, ending the words before 团队 ("Meta AI").
_TEAM_BRAND = re.compile(r"(?:^|(?<=[\u3400-\u9fff]))[A-Z][A-Za-z0-9&.'’-]*(?:\s+[A-Z][A-Za-z0-9&.'’-]*)*$")
#: A Chinese word for a company, ending a description before its name ("新创企业", "科技公司").
_ZH_COMPANY_NOUN = re.compile(r"(?:企业|企業|公司|新创|新創|初创|初創|创企|創企|巨头|巨頭|厂商|廠商)$")
_ZH_ITEM_SEP = re.compile(r"\s*(?:[、，,;；/]|以及|及|与|與|和|\s(?:and|&)\s)\s*")
#: "联合" between the places of a joint work ("阿里云联合上海交通大学、Solidigm 共同发表").
_ZH_JOINED_BY = re.compile(r"\s*(?:联合|聯合)\s*")
#: A joint work: "<X>与<Y>团队联合发布", "由<X>、<Y>与<Z>合作發表".
_ZH_JOINT = re.compile(
    r"(?:的?(?:研究团队|研究團隊|团队|團隊|研究人员|研究人員|研究者|学者|學者))?\s*(?:共同(?:联合|聯合|合作)?|联合|聯合|合作)"
    r"(?:提出|完成|发布|發布|发表|發表|研发|研發|开发|開發|推出|打造)"
)
_ZH_JOINT_CLAUSE_END = re.compile("[" + re.escape("，,；;：:。！？!?《》「」“”") + "]")
#: "<someone>所在的<place>": the place a person works in ("田某某所在的字节…部门").
_ZH_MEMBER_OF = re.compile(r"^[^，,、]{1,10}?(?:所在的|所在|所屬的|所属的)")
#: Most places a joint credit names (a longer list is a description, not a credit).
MAX_JOINT_PLACES = 6


def _person_name(s: str) -> bool:
    """A Latin person name: 1-4 name tokens, no final initial, no organisation or function word."""
    s = s.strip()
    if not _PERSON_RE.fullmatch(s) or s.endswith("."):
        return False
    tokens = s.split()
    if tokens[0].casefold() in _EN_NON_NAMES:
        return False
    return not any(t.strip(".").casefold() in _EN_ORG_WORDS for t in tokens)




def _lone_name(s: str) -> bool:
    """One capitalised Latin word (``Meta``, ``Google``; also a bare surname)."""
    return bool(re.fullmatch(rf"[{_UP}][{_LOW}]+", s.strip()))


class Credit:
    """Authors and institutions credited by a sentence."""

    __slots__ = ("authors", "truncated", "institutions")

    def __init__(self, authors: list[str] | None = None, truncated: bool = False,
                 institutions: list[str] | None = None) -> None:
        self.authors = authors or []
        self.truncated = truncated
        self.institutions = institutions or []

    def __bool__(self) -> bool:
        return bool(self.authors or self.institutions)

    def __repr__(self) -> str:
        return f"Credit({self.authors!r}, {self.truncated!r}, {self.institutions!r})"


def _copy_credit(credit: Credit | None) -> Credit | None:
    """A fresh copy of a memoised credit (its lists are the caller's to change)."""
    return None if credit is None else Credit(list(credit.authors), credit.truncated, list(credit.institutions))


def _add(items: list[str], value: str) -> None:
    value = _SPACES.sub(" ", value).strip(" .。")
    if value and value not in items:
        items.append(value)


def _zh_org(s: str, strict: bool) -> str | None:
    """``s`` as an institution, or None: a name ending in an institution head word; unless
    ``strict``, any short name that is not a description."""
    s = s.strip()
    if not s or _ZH_NOT_NAME.search(s):
        return None
    if _CJK.search(s):
        if len(s) > 24:
            return None
        if _ZH_ORG_HEAD.search(s):
            m = re.match(r"^(?P<name>.+?)(?:研究团队|研究團隊|团队|團隊|课题组|課題組|小组|小組)$", s)
            if m and (len(m.group("name")) < 2 or _ZH_NOT_NAME.search(m.group("name"))):
                return None  # "研究团队"
            if m and _ZH_ORG_HEAD.search(m.group("name")):
                return m.group("name")  # "慕尼黑大学团队"
            if m and (brand := _company_name(m.group("name"), alone=True)):
                return brand  # "DeepSeek團隊"
            return s
        if brand := _company_name(s, alone=False):
            return brand  # "大陆AI新创企业DeepSeek"
        return None if strict or len(s) > 12 else s
    if _latin_org(s) or (not strict and len(s.split()) <= 6 and s[:1].isupper()):
        return s
    return None


def _company_name(s: str, alone: bool) -> str | None:
    """The Latin company name that ends ``s`` after a Chinese word for a company
    (``大陆AI新创企业DeepSeek``), or, when ``alone``, after nothing; else None."""
    brand = _TEAM_BRAND.search(s.rstrip())
    if brand is None:
        return None
    before = s[: brand.start()].strip()
    return brand.group(0).strip() if (alone and not before) or _ZH_COMPANY_NOUN.search(before) else None


def _zh_items(span: str) -> list[str]:
    return [p.strip() for p in _ZH_ITEM_SEP.split(span) if p and p.strip()]


def _zh_span_credit(span: str, kind: str, lone_is_org: bool) -> Credit | None:
    """The credit of a Chinese span, or None when any item of it is not a name."""
    span = span.strip()
    intro = list(_ZH_INTRODUCER.finditer(span))
    if intro:
        span = span[intro[-1].end():].strip()
    span = _ZH_CONNECTIVE.sub("", span).strip()
    if not span:
        return None
    truncated = False
    m = _TRUNCATION.search(span)
    if m and m.start() > 0:
        span, truncated = span[: m.start()].strip(), True
    items = _zh_items(span)
    if not items:
        return None
    credit = Credit(truncated=truncated)
    has_org = any(_ZH_ORG_HEAD.search(item) for item in items)
    if kind == "org":
        for item in items:
            org = _zh_org(item, strict=False)
            if org is None:
                return None
            _add(credit.institutions, org)
        return credit
    persons_only = all(_person_name(i) for i in items)
    for item in items:
        m = re.fullmatch(rf"(?P<pre>.*?)\s*(?P<name>{_PERSON})", item)
        if m and _person_name(m.group("name")) and (m.group("pre") == "" or not m.group("pre")[-1:].isalpha()
                                                    or _CJK.match(m.group("pre")[-1])):
            pre = m.group("pre").strip().removesuffix("的").strip()  # "加州大学伯克利分校的 Jonathan Ho"
            pre = _ZH_ROLE.sub("", _ZH_ROLE.sub("", pre).strip()).strip()
            name = m.group("name")
            if pre:
                org = _zh_org(pre, strict=not re.fullmatch(r"[A-Za-z][\w&.' -]*", pre))
                if org is None:
                    return None
                _add(credit.institutions, org)
            if pre == "" and _lone_name(name) and lone_is_org and len(items) == 1 and not truncated:
                _add(credit.institutions, name)  # "Meta 的《…》": a company, not a bare surname
            elif kind == "subject" and not persons_only:
                return None
            else:
                _add(credit.authors, name)
            continue
        bare = (_CJK.search(item) and not _ZH_ORG_HEAD.search(item) and re.fullmatch(r"[\u3400-\u9fff]{2,4}", item)
                and not _ZH_NOT_NAME.search(item) and not re.search(r"[者们們团團组組室所院校司员員家方]", item))
        if bare and kind in ("credit_truncated", "by") and not has_org:
            _add(credit.authors, item)  # a Chinese name (何恺明等人)
            continue
        # beside an institution a bare word is one too ("由英伟达和阿尔托大学共同完成")
        org = _zh_org(item, strict=not (bare and has_org and kind in ("credit", "by")))
        if org is None:
            return None
        _add(credit.institutions, org)
    if kind == "subject" and credit.authors and len(credit.authors) < 2 and not truncated:
        return None  # a lone surname as a subject ("Goodfellow 提出…") may be anything
    return credit if credit else None


#: Longest clause (characters) read as the subject of a Chinese credit: longer runs are prose
#: (and bound the work on unpunctuated text).
MAX_CREDIT_SPAN_CHARS = 300


def _expansion_kept(m: re.Match[str]) -> str:
    """A bracketed gloss removed, unless it spells out the acronym before it ("VGG (Visual Geometry Group)")."""
    before = re.search(r"\b([A-Z]{2,6})\s*$", m.string[: m.start()])
    words = re.findall(r"[A-Za-z]+", m.group())
    if before and len(words) == len(before.group(1)) and all(
            w[0].upper() == c for w, c in zip(words, before.group(1), strict=True)):
        return m.group()
    return ""


def _zh_joint_credit(sentence: str) -> Credit | None:
    """The places of a joint work (:data:`_ZH_JOINT`): at least two, each an institution, else
    None; the span opens its sentence or clause, follows a connective or starts after 由."""
    for hit in _ZH_JOINT.finditer(sentence):
        ends = [m.end() for m in _ZH_JOINT_CLAUSE_END.finditer(sentence, 0, hit.start())]
        start = ends[-1] if ends else 0
        span = sentence[start : hit.start()]
        by = span.rfind("由")
        if by >= 0:
            span = span[by + 1 :]
        elif start > 0 and not _ZH_CONNECTIVE.match(sentence[:start].strip()):
            continue
        span = _ZH_CONNECTIVE.sub("", _GLOSS.sub(_expansion_kept, span)).strip()
        items = [i for part in _ZH_JOINED_BY.split(span) for i in _zh_items(part)]  # "A联合B、C共同发表"
        if not 2 <= len(items) <= MAX_JOINT_PLACES or not any(_ZH_ORG_HEAD.search(i) or _latin_org(i) for i in items):
            continue
        items = [_ZH_ROLE.sub("", _ZH_MEMBER_OF.sub("", i)).strip() for i in items]
        places = [_zh_org(_GLOSS.sub("", i), strict=False) for i in items]
        if all(places):
            credit = Credit()
            for item, place in zip(items, places, strict=True):
                _add(credit.institutions, item if place == _GLOSS.sub("", item).strip() else place)
            return credit
    return None


def _zh_sentence_credit(sentence: str) -> Credit | None:
    credit = _zh_frame_credit(sentence)
    if credit is None and ("联合" in sentence or "聯合" in sentence or "合作" in sentence):
        credit = _zh_joint_credit(sentence)
    return credit


def _zh_frame_credit(sentence: str) -> Credit | None:
    m = _ZH_FROM.search(sentence)
    hits: list[tuple[int, int, str, str]] = []
    if m:
        hits.append((m.start(), 0, "org", m.group("x")))
    elif ("来自" in sentence or "來自" in sentence) and (m := _ZH_FROM_CLAUSE.search(sentence)):
        hits.append((m.start(), 0, "org", m.group("x")))
    ends: list[int] | None = None  # where the sentence's clauses end (computed at the first hit)
    for rank, ((pattern, kind), needle) in enumerate(zip(_ZH_FRAMES, _ZH_FRAME_NEEDLES, strict=True), start=1):
        for hit in pattern.finditer(sentence) if needle is None or needle.search(sentence) else ():
            if hit.start() == 0:
                continue
            if ends is None:
                ends = [m.start() for m in _ZH_CLAUSE_END_RE.finditer(sentence)]
            k = bisect.bisect_left(ends, hit.start())
            clause_start = (ends[k - 1] if k else -1) + 1  # after the last clause end before the hit
            if hit.start() - clause_start > MAX_CREDIT_SPAN_CHARS:
                continue  # no list of names or institutions runs that long without a comma
            span = sentence[clause_start : hit.start()]
            if kind == "by":
                by = span.rfind("由")
                if by < 0:
                    continue
                span = span[by + 1 :]
            if kind in ("subject", "org") and clause_start > 0 and not _ZH_CONNECTIVE.match(
                    sentence[: clause_start].strip()):
                continue  # a subject opens its sentence (after a connective such as 此外，)
            if kind == "subject" and _ZH_RELEASE.fullmatch(hit.group().strip()) and _BRAND.fullmatch(span.strip()):
                kind = "release"  # "OpenAI發布GPT-3": a company releases, one word with inner capitals
            hits.append((hit.start(), rank, kind, span))
    for _, _, kind, span in sorted(hits):
        if kind == "release":
            return Credit(institutions=[span.strip()])
        truncated = kind == "credit_truncated"
        credit = _zh_span_credit(span, "credit" if truncated else kind,
                                 lone_is_org=kind in ("credit", "subject") and not truncated)
        if credit is not None:
            credit.truncated = credit.truncated or truncated
            return credit
    return None


_EN_LIST_SEP = re.compile(r"\s*,\s*(?:and\s+)?|\s+(?:and|&)\s+")
_LEADING_THE = re.compile(r"^the\s+")
_COMMA_SEP = re.compile(r"\s*,\s*")
# The English frames of _en_sentence_credit, compiled once (the _NAMES pattern is long).
_EN_NAMES_ET_AL = re.compile(
    rf"(?P<names>{_NAMES})(?=\s*,?\s*(?:and|&)\s+(?:his\s+|her\s+|their\s+)?"
    rf"(?:colleagues|co-?authors|collaborators|co-?workers)\b|\s+et\s+al\b)"
)
#: What the lookahead of _EN_NAMES_ET_AL needs somewhere (a cheap test first).
_EN_ET_AL_CUE = re.compile(r"(?:colleagues|co-?authors|collaborators|co-?workers)\b|\s+et\s+al\b")
_EN_BY_NAMES = re.compile(rf"\bby\s+(?P<names>{_NAMES})")
_EN_SUBJECT_VERB = re.compile(rf"(?P<subj>{_NAMES}|{_ORG})\s+(?P<verb>[a-z]+)\b")


#: A sentence naming the paper's lead author: "The paper's lead author is Tian Keyu".
_EN_ROLE_IS = re.compile(rf"\b(?:lead|first|corresponding|senior)\s+author\s+(?:is|was)\s+(?P<name>{_PERSON})")


def _en_orgs(text: str) -> list[str]:
    out: list[str] = []
    for part in _EN_LIST_SEP.split(text):
        part = _LEADING_THE.sub("", part.strip())
        if part:
            _add(out, part)
    return out


def _en_names(text: str) -> list[str] | None:
    names = [p.strip() for p in _EN_LIST_SEP.split(text) if p.strip()]
    return names if names and all(_person_name(n) for n in names) else None


def _en_sentence_credit(sentence: str) -> Credit | None:
    s = sentence.strip()
    # "<names> and colleagues [at <org>]", "<names> et al."
    for m in _EN_NAMES_ET_AL.finditer(s) if _EN_ET_AL_CUE.search(s) else ():
        names = _en_names(m.group("names"))
        if names is None:
            # drop leading words that are not names ("Recently, Smith and colleagues")
            parts = _COMMA_SEP.split(m.group("names"))
            while parts and _en_names(", ".join(parts)) is None:
                parts = parts[1:]
            names = _en_names(", ".join(parts)) if parts else None
        if not names:
            continue
        rest = s[m.end():]
        tail = _COLLEAGUES.match(rest)
        credit = Credit(names, True)
        aff = _EN_AFFILIATION.match(rest[tail.end():] if tail else rest)
        if aff:
            credit.institutions = _en_orgs(aff.group("orgs"))
        return credit
    # "<paper> by <names> [of <org>]"
    for m in _EN_BY_NAMES.finditer(s) if "by" in s else ():
        if not _EN_BY_CUE.search(s[: m.start()]):
            continue
        names = _en_names(m.group("names"))
        if not names:
            continue
        credit = Credit(names)
        aff = _EN_AFFILIATION.match(s[m.end():])
        if aff:
            credit.institutions = _en_orgs(aff.group("orgs"))
        return credit
    # "The paper's lead author is <name>"
    if "author" in s and (m := _EN_ROLE_IS.search(s)) and _person_name(m.group("name")):
        return Credit([m.group("name")], True)
    # "Researchers at <org>", "A team from <org>"
    m = _EN_TEAM.search(s)
    if m:
        return Credit(institutions=_en_orgs(m.group("orgs")))
    # a sentence-initial subject and a credit verb: "Kingma and Ba combined", "Meta AI released"
    m = _EN_SUBJECT_VERB.match(s)
    if m:
        verb = m.group("verb")
        if verb in _EN_CREDIT_VERBS or (verb.endswith("ed") and len(verb) > 4):
            names = _en_names(m.group("subj"))
            if names and len(names) >= 2:
                return Credit(names)
            if _latin_org(m.group("subj")):
                return Credit(institutions=[m.group("subj")])
    return None


def find_credit(paragraph: str) -> Credit | None:
    """The :class:`Credit` of the first sentence of a paragraph (zh-Hans, zh-Hant or English) that
    states one, or None: ``authors`` in the script given, ``truncated`` for "et al." / ``等人``,
    ``institutions`` as written.

    Frames: Chinese markers (``_ZH_FRAMES``, ``_ZH_JOINT``), each span read from its clause start;
    English ones (``and colleagues``, ``by <names>``, ``Researchers at <orgs>``, a subject before a
    credit verb). A span with any item that is not a name credits nobody: a wrong author is
    worse than none.
    """
    return _find_credit(paragraph)


_EN_CREDIT_CUE = re.compile(r"\b(?:colleagues|et al|by|Researchers|team|author)\b")


@_memoised(copy=_copy_credit)
def _sentence_credit(sentence: str) -> Credit | None:
    """The credit one sentence states (see :func:`find_credit`)."""
    if _CJK.search(sentence):
        credit = _zh_sentence_credit(sentence)
        if credit is None and _EN_CREDIT_CUE.search(sentence):
            credit = _en_sentence_credit(sentence)
        return credit
    return _en_sentence_credit(sentence)


def _find_credit(paragraph: str) -> Credit | None:
    """:func:`find_credit` (memoised by paragraph and sentence; each caller gets its own copy)."""
    if not paragraph:
        return None
    return _paragraph_credit(paragraph)


#: The first and corresponding author(s) a Chinese write-up names: "论文一作为 X", "共同一作Wei
#: Fan、Haoran Li", "X 和 Y为共同一作".
_LATIN_NAME = r"[A-Z][A-Za-z.'’-]*(?:[ \t]+[A-Z][A-Za-z.'’-]*){0,3}(?:\s*[（(][^（()）]{1,12}[)）])?"
_ZH_FIRST_AUTHOR = re.compile(
    r"(?:第一作者|共同一作|一作|通讯作者|通訊作者)\s*(?:(?:为|為|是)\s*(?P<after>[^，,。；;！？!?（(]{2,60})"
    rf"|(?P<latin>{_LATIN_NAME}(?:\s*(?:、|和|与|與|,|，|\s(?:and|&)\s)\s*{_LATIN_NAME})*)"
    r"|(?P<zh>[\u3400-\u9fff]{2,4})(?=[，,。；;（(\s]|$))"
    r"|(?P<before>[^，,。；;！？!?：:]{2,60}?)\s*(?:[（(][^（()）]{1,20}[)）])?\s*(?:为|為|是)\s*(?:共同一作|共同第一作者|第一作者)"
)
#: A Chinese name serving as first or corresponding author ("、梁文鋒擔任通訊作者").
_ZH_SERVES_AS_AUTHOR = re.compile(
    r"(?:(?<=[、，,；;。\s])|^)(?P<name>[\u3400-\u9fff]{2,3})\s*(?:担任|擔任)\s*(?:论文|論文)?的?"
    r"(?:通讯作者|通訊作者|第一作者|共同第一作者|共同一作|一作)")
_ZH_FIRST_AUTHOR_SEP = re.compile(r"\s*(?:和|与|與|、|,|，|\s(?:and|&)\s)\s*")


def _first_authors(paragraph: str) -> list[str]:
    """The first and corresponding author(s) a paragraph names (:data:`_ZH_FIRST_AUTHOR`), in order,
    glosses removed; a mention with any item that is not a name gives none."""
    found: list[str] = []
    roles = ("一作" in paragraph or "第一作者" in paragraph or "通讯作者" in paragraph or "通訊作者" in paragraph)
    for m in _ZH_SERVES_AS_AUTHOR.finditer(paragraph) if roles and ("担任" in paragraph or "擔任" in paragraph) else ():
        name = m.group("name")
        if not _ZH_NOT_NAME.search(name) and not _ZH_ORG_HEAD.search(name) and name not in found:
            found.append(name)
    for m in _ZH_FIRST_AUTHOR.finditer(paragraph) if roles else ():
        span = _GLOSS.sub("", m.group("after") or m.group("latin") or m.group("zh") or m.group("before")).strip()
        intro = list(_ZH_INTRODUCER.finditer(span)) if m.group("before") else []
        span = span[intro[-1].end():].strip() if intro else span
        names = [n.strip() for n in _ZH_FIRST_AUTHOR_SEP.split(span) if n.strip()]
        if names and all(_person_name(n) or (re.fullmatch(r"[\u3400-\u9fff]{2,4}", n) and not _ZH_NOT_NAME.search(n)
                                             and not _ZH_ORG_HEAD.search(n)) for n in names):
            found.extend(n for n in names if n not in found)
    return found


@_memoised(copy=_copy_credit)
def _paragraph_credit(paragraph: str) -> Credit | None:
    """:func:`find_credit`; with no person named, the paragraph's first author(s) ("论文一作为 X"),
    truncated."""
    credit = None
    for sentence in split_sentences(paragraph):
        credit = _sentence_credit(sentence)
        if credit:
            break
    if credit is None or not credit.authors:
        first = _first_authors(paragraph)
        if first:
            credit = credit or Credit()
            credit.authors, credit.truncated = first, True
    return credit or None


#: Longest credit line, in characters, of a few names; a list of many names may run
#: :data:`_CREDIT_LINE_CHARS_PER_NAME` characters a name.
_CREDIT_LINE_MAX_CHARS = 200
_CREDIT_LINE_CHARS_PER_NAME = 40
#: A bare capital initial inside a name (``Christopher D Manning``); ``A`` and ``I`` are words too.
_BARE_INITIAL = re.compile(rf"(?<=\s)(?![AI]\s)([{_UP}])(?=\s+[{_UP}])")
#: A name in capitals or inner capitals (``YU HUANG``); a person only between people of a credit line.
_LOOSE_NAME = re.compile(rf"[{_UP}][{_UP}{_LOW}'’-]*(?:\s+[{_UP}][{_UP}{_LOW}'’.-]*){{1,3}}")


#: A name written in lower case ("alexander rudnicky"): two or three letter-only words.
_LOWER_NAME = re.compile(rf"[{_LOW}][{_LOW}'’-]+(?:\s+[{_LOW}][{_LOW}'’-]+){{1,2}}")
#: Words that make a lower-case run a phrase rather than a name.
_LOWER_NOT_NAME = frozenset({"and", "the", "of", "for", "in", "on", "at", "with", "et", "al", "others", "from", "by"})


def _lower_name(item: str) -> bool:
    """Whether ``item`` may be a person's name written in lower case; it counts only between two
    people of a credit line (see :func:`parse_credit_line`)."""
    return bool(_LOWER_NAME.fullmatch(item)) and not any(w in _LOWER_NOT_NAME for w in item.split())


def _split_stopped(item: str) -> list[str]:
    """``item`` split at a ". " between two full names ("Andrew Gibiansky. Sercan Arik"), else
    ``[item]``; a name with an initial ("Christopher D. Manning") stays whole."""
    left, sep, right = item.partition(". ")
    if sep and len(left.split()) >= 2 and len(left.split()[-1]) > 1 and _person_name(left) \
            and len(right.split()) >= 2 and _person_name(right):
        return [left, right]
    return [item]


def _credit_person(item: str) -> bool:
    """A person of a credit line: a Latin person name (:func:`_person_name`) of two tokens or
    more, a bare initial inside it read as one with a period."""
    return len(item.split()) >= 2 and _person_name(_BARE_INITIAL.sub(r"\1.", item))


_INITIAL = re.compile(r"\b[A-Z]\.(?:\s|$)")
_NAME_LIST_SEP = re.compile(r"\s*(?:,|\band\b|&)\s*")


def names_only(span: str) -> bool:
    """Whether ``span`` is only people joined by commas or "and" ("Kingma and Jimmy Ba"): persons
    or lone surnames, a full name beside a surname or with an initial; not "Align and Translate"."""
    if " and " not in span and "," not in span and "&" not in span:
        return False
    parts = _NAME_LIST_SEP.split(span.strip().rstrip("."))
    if len(parts) < 2 or not all(p and (_credit_person(p) or _lone_name(p)) for p in parts):
        return False
    # two-word title phrases joined by "and" have neither
    full = [p for p in parts if len(p.split()) >= 2]
    return bool(full) and (len(full) < len(parts) or any(_INITIAL.search(p) for p in full))


#: The affiliations of a whole credit line in brackets at its end, ``/`` or ``、`` between them.
_TRAILING_PLACES = re.compile(r"\s*[（(](?P<places>[^()（）]{1,150})[)）]\s*$")
#: Chinese personal names (2-3 characters) separated by commas or 、.
_ZH_NAME_LIST = re.compile(r"[\u3400-\u9fff]{2,3}(?:\s*[,，、]\s*[\u3400-\u9fff]{2,3})*")
#: Brackets after names that hold a note, not an affiliation: a year, an edition, a version.
_NOT_PLACES = re.compile(r"\d{4}|\b(?:edition|version|ed\.|vol\.|tracks?|oral|spotlight|poster)\b|赛道|賽道", re.I)
#: A Chinese "and others" after Latin names: 等, 等人, 等 30+ 位共同作者.
_ZH_OTHERS = re.compile(r"\s*等(?:人|\s*\d+\s*\+?\s*(?:位|名)?\s*(?:共同)?作者)?\s*$")
#: "and others" then the affiliations after a comma: "A 等，UW / AI2", "A 等人, 清华大学".
_ZH_OTHERS_PLACES = re.compile(r"\s*等人?\s*[，,]\s*(?P<places>[^,，()（）]{1,120})$")
#: Chinese names, then their places after a comma ("田甲，某大学", "田甲、李乙，某大学/某公司").
_ZH_NAMES_PLACES = re.compile(
    r"(?P<names>[\u3400-\u9fff]{2,3}(?:\s*[、,]\s*[\u3400-\u9fff]{2,3})*)\s*[，,]\s*(?P<places>[^,，()（）]{2,120})")
_PLACE_SEPS = re.compile(r"\s*[/／、;；,，]\s*")
#: A university named with its campus after a comma ("University of California, Berkeley").
_CAMPUS_OF = re.compile(r"(?:University|Univ\.) of [A-Z][a-z]+(?: [A-Z][a-z]+)?")


#: "and others" closing a list of affiliations: 等, 等机构, "etc.", "et al.".
_PLACES_OTHERS = re.compile(r"\s*(?:等(?:机构|機構|单位|單位|高校)?|\betc\.?|\bet\s+al\.?)\s*$")


def _split_places(text: str) -> list[str]:
    """The affiliations of a credit's bracket, split at ``/ 、 ; ,``, a campus kept with its university."""
    places: list[str] = []
    text = _PLACES_OTHERS.sub("", text)  # "Maryland / UBC 等"
    for part in filter(None, (p.strip() for p in _PLACE_SEPS.split(text))):
        if places and _CAMPUS_OF.fullmatch(places[-1]) and re.fullmatch(r"[A-Z][a-z]+(?: [A-Z][a-z]+)?", part):
            places[-1] = f"{places[-1]}, {part}"
        else:
            places.append(part)
    return places


#: Affiliation and role marks after a name: superscript digits, *, †, ‡, §, ¶, ✉.
_MARK_CHAR = re.compile("[¹²³⁰⁴⁵⁶⁷⁸⁹*†‡§¶✉]")
_NAME_MARKS = re.compile(r"(?<=[^\s,;，、\d])[¹²³⁰⁴⁵⁶⁷⁸⁹*†‡§¶✉]+(?=[\s,;，、)）]|$)")
_MARK_LIST_COMMA = re.compile(r"(?<=[¹²³⁰⁴⁵⁶⁷⁸⁹])[,，](?=[¹²³⁰⁴⁵⁶⁷⁸⁹])")
#: A place's name: capitalised words (an acronym, a company) or Chinese, no sentence.
_PLACE_NAME = re.compile(r"(?:[A-Z][\w&'’.\-]*(?:\s+(?:of|for|and|the|de|[A-Z][\w&'’.\-]*))*|[\u3400-\u9fff][\u3400-\u9fff\w ]{0,30})")
#: A person's place in brackets right after the name ("Keyu Tian (Peking University)").
_INLINE_PLACE = re.compile(r"\s*[（(](?P<place>[^()（）]{2,80})[)）]")


def _inline_places(s: str) -> tuple[str, list[str]] | None:
    """``(names, places)`` of "A (Peking University), B (ByteDance)"; None with fewer than two
    brackets or when a bracket is a note ("(equal contribution)")."""
    found = list(_INLINE_PLACE.finditer(s))
    if len(found) < 2:
        return None
    places: list[str] = []
    for m in found:
        parts = _split_places(m.group("place"))
        if _NOT_PLACES.search(m.group("place")) or not all(map(_PLACE_NAME.fullmatch, parts)):
            return None
        for part in parts:
            _add(places, part)
    return (_INLINE_PLACE.sub("", s), places) if any(map(is_institution, places)) else None


#: The longest list of places after the names (:func:`_places_after_names`) looked at: a longer
#: tail is prose (and the bound keeps long lines linear).
MAX_PLACES_TAIL_CHARS = 2_000


def _places_after_names(s: str) -> tuple[str, list[str]] | None:
    """``(names, places)`` of "A, B, C. Peking University, ByteDance": the people, a period after a
    surname, then only institutions (at most :data:`MAX_PLACES_TAIL_CHARS`); None otherwise."""
    for m in reversed(list(re.finditer(r"(?<=[a-z\u00e0-\u024f])\.\s+", s))):
        if len(s) - m.end() > MAX_PLACES_TAIL_CHARS:
            break  # the tails only grow from here
        head, tail = s[: m.start()], s[m.end():].strip().rstrip(".")
        first, *more = _PLACE_SEPS.split(tail, maxsplit=1)
        if more and first.strip() and not _PLACE_NAME.fullmatch(first.strip()):
            continue  # the first place is none (a sentence): the rest of the line is not split
        parts = _split_places(tail)
        if parts and all(map(_PLACE_NAME.fullmatch, parts)) and any(map(is_institution, parts)):
            return head, parts
    return None


_LINE_IDS = re.compile(r"[.;,]?\s*(?:arXiv\s*[:：]?\s*\S+|https?://\S+)", re.I)
_OTHERS = re.compile(
    r",?\s+(?:and|&)\s+(?:(?:his|her|their)\s+)?(?:colleagues|co-?authors|collaborators|others"
    r"|\d+\s+other\s+(?:authors|co-?authors))\b(?:\s+(?:at|of|from)\b)?|,?\s+et\s+al\b\.?",
    re.I,
)


#: The end of a sentence or a Chinese character: a line that is no Latin credit line.
_SENTENCE_OR_HAN = re.compile(r"[.。!?！？:：;；]$|[\u3400-\u9fff]")
#: The words :data:`_OTHERS` needs one of (besides "&"): searched first, a cheap test.
_OTHERS_WORD = re.compile(r"and|et", re.I)


def _may_hold_line_id(s: str) -> bool:
    """False when :data:`_LINE_IDS` cannot match ``s`` (no ``arxiv`` nor ``http``)."""
    if any(c in s for c in _CASE_EXTRA):
        return True
    low = s.lower()
    return "arxiv" in low or "http" in low


@_memoised(copy=_copy_credit)
def parse_credit_line(line: str) -> Credit | None:
    """The :class:`Credit` of a bare credit line (``Tom B. Brown, Benjamin Mann and 27 other
    authors, OpenAI``), or None for a sentence, other Chinese text or a line with no person.

    People first (two name tokens or more each; two people unless ``et al.`` or the like sets
    ``truncated``), then capitalised affiliations, or affiliations in brackets (``A, B（AI2 /
    Cornell）``) or after a Chinese "and others" (``A 等，UW / AI2``); with an institution among
    those the names may be Chinese. A trailing arXiv id or URL is ignored. At most
    :data:`_CREDIT_LINE_MAX_CHARS` characters, or :data:`_CREDIT_LINE_CHARS_PER_NAME` a name.
    """
    s = line.strip()
    if _may_hold_line_id(s):
        s = _LINE_IDS.sub("", s).strip()
    if _MARK_CHAR.search(s):  # "Keyu Tian¹, Yi Jiang²,³, Liwei Wang*"
        s = _NAME_MARKS.sub("", _MARK_LIST_COMMA.sub("", s))
    places: list[str] = []
    if ("(" in s or "（" in s) and (inline := _inline_places(s)) is not None:
        s, places = inline  # "A (Peking University), B (ByteDance)"
    elif ". " in s and (tail := _places_after_names(s)) is not None:
        s, places = tail  # "A, B, C. Peking University, ByteDance"
    if not places and s.rstrip().endswith((")", "）")) and (m := _TRAILING_PLACES.search(s)) and m.start() > 0:  # "A, B（AI2 / Cornell）"; "A, B（2013 年發表）" a note
        if not _NOT_PLACES.search(m.group("places")):
            places = _split_places(m.group("places"))
        s = s[: m.start()].rstrip()
    if (not places and "等" in s and (m := _ZH_OTHERS_PLACES.search(s)) and m.start() > 0
            and not _NOT_PLACES.search(m.group("places"))):
        places = _split_places(m.group("places"))
        s = s[: m.start()] + " 等"
    if not places and (m := _ZH_NAMES_PLACES.fullmatch(s)) and not _NOT_PLACES.search(m.group("places")):
        found = _split_places(m.group("places"))  # "田甲，某大学/某公司"
        if any(map(is_institution, found)):
            s, places = m.group("names"), found
    credit = Credit()
    if "等" in s and (m := _ZH_OTHERS.search(s)):  # "A, B 等", "A, B 等 30+ 位共同作者"
        credit.truncated = True
        s = s[: m.start()].rstrip()
    if s and (credit.truncated or any(map(is_institution, places))) and (zh := _ZH_NAME_LIST.fullmatch(s)):
        # Chinese names with 等 or an institution among their places (else "图像、视频（综述）" reads the same)
        credit.authors = [n.strip() for n in re.split(r"[,，、]", zh.group(0)) if n.strip()]
        credit.institutions = places
        return credit
    if not s or _SENTENCE_OR_HAN.search(s):
        return None
    others = _OTHERS.search(s) if "&" in s or _OTHERS_WORD.search(s) else None
    if others:
        credit.truncated = True
        s = s[: others.start()] + "," + s[others.end():]
    items = [p.strip() for p in re.split(r"\s*[,;；]\s*(?:(?:and|&)\s+)?|\s+(?:and|&|·)\s+", s) if p.strip()]
    if ". " in s:  # "A Gibiansky. S Arik, …"
        items = [part for item in items for part in _split_stopped(item)]
    if len(s) > max(_CREDIT_LINE_MAX_CHARS, _CREDIT_LINE_CHARS_PER_NAME * len(items)):
        return None
    people = [_credit_person(item) for item in items]
    last_person = max((k for k, p in enumerate(people) if p), default=-1)
    for k, item in enumerate(items):
        if not credit.institutions and (people[k] or (
                k < last_person and (_LOOSE_NAME.fullmatch(item) or _lower_name(item)) and not _latin_org(item)
                and not any(t.strip(".").casefold() in _EN_ORG_WORDS for t in item.split()))):
            _add(credit.authors, item)
        elif _latin_org(item) or (credit.authors and re.fullmatch(r"[A-Z][\w&'’.-]*(?:\s+[\w&'’.-]+){0,5}", item)):
            _add(credit.institutions, item)
        else:
            return None
    if len(credit.authors) < 2 and not credit.truncated:
        return None  # one "name" alone may be a title ("Vision Transformers Need Registers")
    for place in places:
        _add(credit.institutions, place)
    return credit





def first_author_tag(text: str) -> Credit | None:
    """The first author in a reading list's bracket after a title, "(First Author, VENUE YEAR,
    …)": that author, the list truncated; None when the first item is no person's name or no
    year follows it."""
    first, sep, rest = text.partition(",")
    first = first.strip()
    if sep and YEAR.search(rest) and len(first.split()) >= 2 and _person_name(first) and not is_institution(first):
        return Credit([first], truncated=True)
    return None




def affiliation_line(line: str) -> list[str]:
    """The institutions of a line listing only affiliations set off by semicolons ("UC San Diego;
    Google Research"), in order; [] for any other line or fewer than two items."""
    if ";" not in line and "；" not in line:
        return []
    items = [p.strip(" .") for p in re.split(r"\s*[;；]\s*", line.strip()) if p.strip(" .")]
    if len(items) < 2 or not all(is_institution(p) or _latin_org(p) for p in items):
        return []
    return items


#: Who made a work, before its name: "Facebook 提出的", "上海AI实验室联合发布的".
_MAKER_CLAUSE = re.compile(
    r"(?P<maker>[^，,。：:\s][^，,。：:]{0,19}?)\s*(?:联合|聯合|共同)?(?:提出|推出|发布|發布|开发|開發|开源|開源)的")


def maker_credit(text: str) -> Credit | None:
    """The maker a heading names before a work's name ("Facebook 提出的 DeiT" -> institution
    ``Facebook``): a brand word, an institution, or two people or more; else None."""
    m = _MAKER_CLAUSE.fullmatch(text.strip())
    if m is None:
        return None
    maker = m.group("maker").strip()
    if _BRAND.fullmatch(maker) or (not _CJK.search(maker) and _latin_org(maker)):
        return Credit(institutions=[maker])
    if _CJK.search(maker) and (org := _zh_org(maker, strict=True)) is not None:
        return Credit(institutions=[org])
    names = _en_names(maker)
    return Credit(names) if names and len(names) >= 2 else None


#: Lab news crediting a paper's authors by congratulating them ("…被 CVPR 录用，恭喜张三、李四！").
_ZH_CONGRATULATED = re.compile(r"(?:恭喜|祝贺|祝賀)\s*(?P<names>[^！!。；;]{2,80})")
#: A short note in brackets after a name ("金炬光（本科生）").
_NAME_NOTE = re.compile(r"\s*[（(][^()（）]{1,8}[)）]")
_ZH_PERSON = re.compile(r"[\u3400-\u9fff]{2,4}")


def congratulated_authors(text: str) -> list[str]:
    """The people a lab-news line congratulates, in order: ``恭喜张三（本科生）、李四！`` -> ``["张三",
    "李四"]``; ``[]`` unless every item is a Chinese name of 2-4 characters."""
    m = _ZH_CONGRATULATED.search(text)
    if m is None:
        return []
    items = [_NAME_NOTE.sub("", p).strip() for p in _ZH_ITEM_SEP.split(m.group("names").strip(" ，,"))]
    items = [p for p in items if p]
    return items if items and all(_ZH_PERSON.fullmatch(p) for p in items) else []
