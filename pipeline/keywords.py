"""Topic keywords of a section: jieba TF-IDF for Chinese, YAKE for English (see
:func:`keywords`), with the section's title, credits and marked terms as priors."""

from __future__ import annotations

import bisect
import functools
import math
import re
import string
from collections import Counter
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, NamedTuple

from . import _spacy_without_torch  # noqa: F401 - before spaCy: thinc without torch (see there)

# isort: split
from spacy.lang.zh.stop_words import STOP_WORDS as _SPACY_ZH_STOP_WORDS

from .credits import _find_credit, parse_credit_line
from .fields import find_venue_years
from .identifiers import _url_spans
from .names import _EN_ORG_HEADS, is_institution
from .nlp import _is_english, _jieba_tokenizer, cut_protected, load_user_dict
from .normalize import to_script
from .textutil import _CASE_EXTRA, MD_LINK
from .textutil import HAN as _HAN
from .yake_port import EN_STOP_WORDS, yake_extract

if TYPE_CHECKING:
    from .credits import Credit


# --- Keywords -------------------------------------------------------------------------------------

# TeX math ($...$, $$...$$, \(...\), \[...\]) is notation, not topic: removed before extraction.
_TEX_MATH = re.compile(r"\$\$.+?\$\$|\$[^$\n]+\$|\\\((?:(?!\\[()]).)+?\\\)|\\\[(?:(?!\\[\[\]]).)+?\\\]", re.S)

_NUMBER = re.compile(r"^[\d.,%]+$")
_PUNCT_ONLY = re.compile(r"^[\W_]+$")
# A Latin word in Chinese text (pass@k, GPT-3.5), not glued to a letter or digit before it.
_LATIN_WORD = r"[A-Za-z][A-Za-z0-9]*(?:[-@'][A-Za-z0-9]+|(?<=[0-9])\.[0-9][A-Za-z0-9]*)*"
_LATIN_RUN = re.compile(rf"(?<![A-Za-z0-9.@'-]){_LATIN_WORD}(?:[ \t]+{_LATIN_WORD})*")
#: How deep in the ranking a longer candidate may still replace kept keywords it contains, as a
#: multiple of the number of keywords asked for (see :func:`_dedup`).
REPLACE_WINDOW = 4
#: Longest Latin run in Chinese text read as one term, in words (longer: titles, quotes).
MAX_LATIN_TERM_WORDS = 3
# A Latin gloss in brackets right after Chinese text repeats the Chinese term: not counted again.
_HAN_RUN_AT_END = re.compile(r"[\u4e00-\u9fff]{1,16}$")
_GLOSS_PAREN = re.compile(
    r"(?<=[\u4e00-\u9fff])[（(][^（）()\u4e00-\u9fff\n]*[A-Za-z][^（）()\u4e00-\u9fff\n]*[）)]"
)
# A line end not preceded by sentence or clause punctuation.
_LINE_END = re.compile(r"(?<=[^\s.!?:;,])[ \t]*\n")
_MARKDOWN = re.compile(r"[*_#>`|]+|!?" + MD_LINK)

#: Chinese words jieba's IDF ranks high in a write-up that name no topic (discourse words, the
#: nouns and verbs of every ML write-up); :data:`ZH_STOP_WORDS` are dropped as well.
ZH_GENERIC_WORDS = frozenset(
    # discourse words of paper write-ups
    "本文 该文 本研究 该研究 论文 该论文 本论文 作者 他们 我们 研究 研究者 方法 提出 结果 实验 表明 发现 "
    "进行 通过 以及 这些 这种 一种 其中 此外 同时 然而 因此 "
    # the same in Taiwan usage (written in Simplified characters after conversion)
    "透过 借由 藉由 该篇 本篇 "
    # more discourse words: summaries, claims, hedges
    "此类 该类 这类 诸如 要么 基于 相较 相比 相对 首次 首先 其次 最后 总结 总体 综合 具体 具体而言 进一步 "
    "深入 系统性 全面 显著 明显 有效 高效 重要 关键 核心 主要 广泛 普遍 新颖 创新 突破 贡献 意义 启示 "
    "价值 影响 深远 视角 角度 层面 方面 领域 背景 动机 现象 情况 条件 情境 场景 过程 阶段 问题 挑战 局限 "
    "限制 瓶颈 思路 途径 方向 手段 工具 框架 方案 策略 机制 技术 理论 分析 验证 实证 评估 实验结果 "
    "作者团队 研究成果 研究者们 学界 业界 社群 读者 "
    # verbs and adjectives of write-ups that name no topic
    "提供 解决 达成 忽视 证明 展示 揭示 探讨 探索 采用 引入 构建 建立 包括 涵盖 改进 增强 推动 保证 "
    "完整 现实 真实 标准 步骤 设置 情形 程度 整体 方式 形式 类型 特定 多种 简单 稳定 强大 优异 主动 "
    "互动 回应 识别 估计 解释 观察 调整 成功 实务 带来 面临 面对 导致 意味着 意味著 强烈建议 高质量 "
    "高品质 优势 潜力 "
    # nouns and verbs every ML write-up uses
    "模型 训练 数据 资料 算法 演算法 任务 性能 效能 效果 表现 能力 提升 提高 改善 优化 设计 应用 使用 "
    "利用 实现 生成 学习 系统 结构 架构 参数 指标 基准 基线 样本 输入 输出 规模 人工智慧 "
    "AI".split()
)
#: Chinese stop words: spaCy's list for Chinese (``spacy.lang.zh.stop_words``).
ZH_STOP_WORDS = frozenset(_SPACY_ZH_STOP_WORDS)
#: English words of every ML write-up and award announcement: a keyword of these only
#: (``deep learning``) is dropped; inside a longer one (``diffusion models``) they may stand.
EN_GENERIC_WORDS = frozenset(
    "model models token tokens data ai ml llm llms large language deep learning machine network networks neural "
    "training task tasks performance benchmark benchmarks dataset datasets "
    "year years conference award awards prize outstanding best honorable honourable mention "
    "runner runners up committee time test track main".split()
)


_WORD_SEPARATORS = re.compile(r"[\s-]+")


@functools.lru_cache(maxsize=65536)
def _is_generic_latin(term: str) -> bool:
    """True when every word of ``term`` is a stop word or a generic word (cached per term)."""
    words = _WORD_SEPARATORS.split(term.lower())
    return all(w in EN_STOP_WORDS or w in EN_GENERIC_WORDS for w in words if w)


def _strip_noise(text: str) -> str:
    """``text`` without TeX math, URLs and Markdown markup (each replaced by a space)."""
    text = _TEX_MATH.sub(" ", text)
    spans = _url_spans(text)
    if spans:
        parts, pos = [], 0
        for s, e, _ in spans:
            parts += [text[pos:s], " "]
            pos = e
        text = "".join([*parts, text[pos:]])
    return _MARKDOWN.sub(lambda m: f" {m.group(1) or ''} ", text)


def _blank(m: re.Match[str], keep: int | None = None) -> str:
    """The match as spaces of the same length (keeping group ``keep`` as written)."""
    if keep is None or m.group(keep) is None:
        return " " * len(m.group())
    return " " * (m.start(keep) - m.start()) + m.group(keep) + " " * (m.end() - m.end(keep))


def _mask_noise(text: str) -> str:
    """:func:`_strip_noise` keeping every offset (removals become spaces; a link keeps its text)."""
    text = _TEX_MATH.sub(_blank, text)
    for s, e, _ in _url_spans(text):
        text = text[:s] + " " * (e - s) + text[e:]
    return _MARKDOWN.sub(lambda m: _blank(m, 1), text)


@functools.lru_cache(maxsize=16384)
def _whole_word(term: str) -> re.Pattern[str]:
    """``term`` as a case-insensitive whole-word pattern (no ASCII letter or digit on either
    side), cached here rather than in :mod:`re`'s 512-entry cache."""
    return re.compile(rf"(?<![A-Za-z0-9]){re.escape(term)}(?![A-Za-z0-9])", re.I)


#: Non-ASCII characters a case-insensitive pattern of ASCII letters matches (İ, ı, ſ, K).
_IGNORECASE_EXTRA = _CASE_EXTRA
_IGNORECASE_EXTRA_RE = re.compile(f"[{''.join(_IGNORECASE_EXTRA)}]")
_ASCII_ALNUM = frozenset(string.ascii_letters + string.digits)


def _flat_lower(text: str) -> str | None:
    """``text.lower()`` when it keeps the length and ``text`` holds none of
    :data:`_IGNORECASE_EXTRA` (then a lower-cased search equals the pattern's), else ``None``."""
    low = text.lower()
    return low if len(low) == len(text) and _IGNORECASE_EXTRA_RE.search(text) is None else None


def _whole_word_spans(term: str, text: str, flat_lower: str | None = None) -> Iterator[tuple[int, int]]:
    """``(start, end)`` of the matches of :func:`_whole_word` ``(term)`` in ``text``, in order;
    ``flat_lower``: :func:`_flat_lower` of ``text`` if known."""
    low = flat_lower if flat_lower is not None else _flat_lower(text)
    if not term.isascii() or low is None or not term:
        for m in _whole_word(term).finditer(text):
            yield m.span()
        return
    key, k, n = term.lower(), len(term), len(text)
    i = low.find(key)
    while i >= 0:
        if (i == 0 or text[i - 1] not in _ASCII_ALNUM) and (i + k == n or text[i + k] not in _ASCII_ALNUM):
            yield i, i + k
            i = low.find(key, i + k)
        else:
            i = low.find(key, i + 1)


#: What may stand between a sentence end and the word a sentence opens with (see :func:`_cased`).
_LEAD_CHARS = frozenset(" \t\"'“‘(（*#>-•·")


_ASCII_LETTER = re.compile(r"[A-Za-z]")


def _cased(term: str, text: str, flat_lower: str | None = None) -> str:
    """The case a keyword is returned in: lower when ``text`` writes it so somewhere; else that of
    its first occurrence not at a sentence start (``ResNet``); seen only at sentence starts, a
    phrase is lower-cased, a single word kept. ``flat_lower``: :func:`_flat_lower` of ``text``.
    """
    if _ASCII_LETTER.search(term) is None:
        return term
    low = term.lower()
    surface = None
    for a, b in _whole_word_spans(term, text, flat_lower):
        group = text[a:b]
        if group == low and low != group.upper():
            return low
        if surface is None:
            # the character before the match, skipping spaces, quotes, brackets and bullets
            j = a - 1
            while j >= 0 and text[j] in _LEAD_CHARS:
                j -= 1
            if j >= 0 and text[j] not in ".!?。！？\n":
                surface = group
    if surface is None:  # only at sentence starts
        return low if " " in term and term[1:] == term[1:].lower() else term
    return surface


_NO_BIGRAMS: frozenset[tuple[str, str]] = frozenset()


@functools.lru_cache(maxsize=16384)
def _dedup_facts(cand: str) -> tuple[str, bool, bool, bool, frozenset[tuple[str, str]], int]:
    """What :func:`_dedup` reads of one candidate: ``(lower case, has Han, ASCII, flat, bigrams
    of its lower-cased words, length)``."""
    low = cand.lower()
    asc = cand.isascii() and cand != ""
    han = not asc and _HAN.search(cand) is not None
    words = low.split()
    return (low, han, asc, len(low) == len(cand) and (asc or _IGNORECASE_EXTRA_RE.search(cand) is None),
            frozenset(zip(words, words[1:], strict=False)) if len(words) > 1 else _NO_BIGRAMS, len(cand))


def _dedup(ranked: list[str], n: int, cjk: bool) -> list[str]:
    """The first ``n`` of ``ranked`` without repeats: a candidate inside a kept keyword is skipped;
    one among the first ``REPLACE_WINDOW * n`` containing kept keywords replaces them (扩散模型
    replaces 扩散). Containment: substring for Han (``cjk``), whole-word for Latin; a Latin phrase
    sharing a bigram with a kept one is skipped too."""

    window = ranked[: REPLACE_WINDOW * n]
    # cheap tests first: a whole-word match in a flat text implies a lower-cased substring
    info: dict[str, tuple[str, bool, bool, bool, frozenset[tuple[str, str]], bool, int]] = {}
    for cand in window:
        if cand in info:
            continue
        low, han, asc, flat, bigrams, length = _dedup_facts(cand)
        info[cand] = (low, cjk and han, asc, flat, bigrams, han, length)

    kept: list[str] = []
    # (keyword, lower case, Han substring test, ASCII, flat, length) of each kept keyword
    kept_info: list[tuple[str, str, bool, bool, bool, int]] = []
    # a candidate without a newline is inside a kept keyword exactly when it is inside this
    joined = ""
    grams: frozenset[tuple[str, str]] = _NO_BIGRAMS  # the kept keywords' bigrams together
    for cand in window:
        low, s_cand, a_cand, f_cand, g_cand, h_cand, n_cand = info[cand]
        if s_cand and "\n" not in cand:
            skip = cand in joined
        else:
            skip = False
            for k, lk, _, _, fk, nk in kept_info:  # a candidate inside a kept keyword is skipped
                if nk < n_cand:
                    continue
                if s_cand:
                    skip = cand in k
                else:
                    skip = ((not (a_cand and fk) or low in lk)
                            and next(_whole_word_spans(cand, k, lk if fk else None), None) is not None)
                if skip:
                    break
        if not skip and not h_cand and g_cand:
            # a shifted window over a kept phrase (private training algorithm)
            skip = not g_cand.isdisjoint(grams)
        if skip:
            continue
        inner = []  # kept keywords inside the candidate
        flat = low if f_cand else None
        for i, (k, lk, sk, ak, _, nk) in enumerate(kept_info):
            if nk > n_cand:
                continue
            if sk:
                if k in cand:
                    inner.append(i)
            elif ((not (ak and f_cand) or lk in low)
                  and next(_whole_word_spans(k, cand, flat), None) is not None):
                inner.append(i)
        if inner:
            kept[inner[0]] = cand
            kept = [k for i, k in enumerate(kept) if i not in inner[1:]]
            kept_info = [(k, *info[k][:4], info[k][6]) for k in kept]
            joined = "\n".join(kept)
            grams = _NO_BIGRAMS.union(*(info[k][4] for k in kept))
        elif len(kept) < n:
            kept.append(cand)
            kept_info.append((cand, low, s_cand, a_cand, f_cand, n_cand))
            joined = "\n".join(kept)
            grams = grams | g_cand if g_cand else grams
    return kept[:n]


# --- Topic priors: the title, credited people and institutions, marked terms ----------------------

#: Factor on the score of a candidate the section's title names (:func:`_in_title`).
TITLE_BOOST = 4.0
#: Factor on the score of a Chinese term in quotation marks (the terms a paper coins).
QUOTED_BOOST = 2.0
#: Fewest occurrences of two adjacent Chinese words for their compound to be a candidate
#: (视频 + 分割 -> 视频分割).
MIN_COMPOUND_COUNT = 2

#: A Latin token that names a method, system or dataset: RLHF, ResNet, GPT-2.
_NAME_LIKE = re.compile(
    r"(?:[A-Z][A-Z0-9]+s?|[A-Za-z]*[a-z][A-Z][A-Za-z0-9]*|[A-Za-z]+[0-9][A-Za-z0-9]*)"
    r"(?:-[A-Za-z0-9]+|(?<=[0-9])\.[0-9][A-Za-z0-9]*)*"
)
_TITLE_WORD = re.compile(r"[A-Za-z0-9]+(?:['’-][A-Za-z0-9]+)*")
# A paper title quoted in the text: 《…》, 〈…〉, “…” or "…" holding a Latin letter.
_QUOTED_TITLE = re.compile(r"[《〈“\"]([^《》〈〉“”\"\n]{0,200}?[A-Za-z][^《》〈〉“”\"\n]{0,200}?)[》〉”\"]")
# A Chinese term in quotation marks: 2-8 Han characters (2-6 are kept, see :func:`_quoted_terms`).
_QUOTED_TERM = re.compile(r"[「『“\"‘]([\u4e00-\u9fff]{2,8})[」』”\"’]")
#: Characters of function words: a quoted text holding one is a phrase or clause, not a term.
_FUNCTION_CHARS = re.compile(r"[的了是在和与及或但而且就都也把被让从对向为着过吗呢吧之其所个]")
#: Degree adverbs cut from the start of a quoted term.
_DEGREE_ADVERBS = frozenset("最更较很")
_SENTENCE_SPLIT = re.compile(r"(?<=[。！？；!?;])|(?<=\.)\s+")
#: A character after which :data:`_SENTENCE_SPLIT` may cut.
_SENTENCE_SPLIT_MARK = re.compile(r"[。！？；!?;.]")


class _Topic(NamedTuple):
    """A section's title prior and credited names: ``titles`` (stemmed casefolded word tuples),
    ``han_title`` (a Han first title line or ``""``), ``initials`` (of each title's words, with and
    without stop words), ``names`` and ``name_words`` (casefolded) of the credited."""

    titles: tuple[tuple[str, ...], ...]
    han_title: str
    initials: tuple[str, ...]
    names: frozenset[str]
    name_words: frozenset[str]


def _stem(word: str) -> str:
    w = word.casefold()
    return w[:-1] if len(w) > 3 and w.endswith("s") and not w.endswith("ss") else w


_SENTENCE_END = re.compile(r"[。！？.!?；;]$")


def _topic(text: str, line_credit: dict[str, Credit | None] | None = None) -> _Topic:
    """The :class:`_Topic` of a section text. Title lines: the first line when heading-like, other
    Latin lines of 2+ words without final punctuation, quoted Latin texts. Names: credit lines
    and credit sentences. ``line_credit`` receives (and reuses) each line's
    :func:`~pipeline.credits.parse_credit_line`.
    """
    lines = [ln.strip() for ln in text.split("\n") if ln.strip()]
    line_credit = {} if line_credit is None else line_credit
    for ln in lines:
        if ln not in line_credit:
            line_credit[ln] = parse_credit_line(ln)
    titles: list[str] = []
    han_title = ""
    for k, ln in enumerate(lines):
        if len(ln) > 200 or _SENTENCE_END.search(ln) or line_credit[ln] is not None:
            continue
        if k == 0 or (not _HAN.search(ln) and len(_TITLE_WORD.findall(ln)) >= 2):
            titles.append(ln)
            han_title = ln if k == 0 and _HAN.search(ln) else han_title
    titles += [m.group(1) for m in _QUOTED_TITLE.finditer(text)]
    tuples, initials = [], []
    for t in titles:
        words = _TITLE_WORD.findall(t)
        if not words:
            continue
        tuples.append(tuple(_stem(w) for w in words))
        content = [w for w in words if w.lower() not in EN_STOP_WORDS]
        # (without stop words: the same acronyms again when the title has none)
        for ws in (words, content) if len(content) != len(words) else (words,):
            initials.append("".join(w[0].upper() for w in ws))
    names, name_words = set(), set()
    for ln in lines:
        credits = [line_credit[ln], _find_credit(ln)]
        # a line without a mark before its last character is one sentence, credited already
        if _SENTENCE_SPLIT_MARK.search(ln, 0, len(ln) - 1):
            credits += [_find_credit(s) for s in _SENTENCE_SPLIT.split(ln) if s != ln and s.strip()]
        for c in credits:
            if c is None:
                continue
            for a in c.authors:
                names.add(a.casefold())
                name_words.update(w.casefold().strip(".") for w in a.split() if len(w.strip(".")) >= 2)
            # an institution without a head word is often a misreading (来自语言建模的证据)
            names.update(i.casefold() for i in c.institutions if is_institution(i))
    return _Topic(tuple(tuples), han_title, tuple(initials), frozenset(names), frozenset(name_words))


def _in_title(term: str, topic: _Topic) -> bool:
    """Whether a title line holds Latin ``term``'s words in order (one word only when name-like;
    never a whole line), or ``term`` is an acronym of 2-6 consecutive title words."""
    words, acronym, name_like = _title_probe(term)
    if not words:
        return False
    if acronym:
        short = term.rstrip("s")
        # an acronym of 2-6 consecutive title words: a substring of a title's initials
        if 2 <= len(short) <= 6 and any(short in caps for caps in topic.initials):
            return True
    if len(words) == 1 and not name_like:
        return False  # a plain title word (Towards, Sparsity) is no term by itself
    k = len(words)
    return any(t[i : i + k] == words and len(t) > k for t in topic.titles for i in range(len(t) - k + 1))


@functools.lru_cache(maxsize=65536)
def _title_probe(term: str) -> tuple[tuple[str, ...], bool, bool]:
    """What :func:`_in_title` reads of ``term``: ``(stemmed words or (), acronym-like, name-like)``."""
    words = tuple(_stem(w) for w in _TITLE_WORD.findall(term))
    if not words or _HAN.search(term):
        return (), False, False
    single = len(words) == 1
    return words, single and re.fullmatch(r"[A-Z]{2,6}s?", term) is not None, single and _name_like(term)


def _credited(term: str, topic: _Topic) -> bool:
    """Whether ``term`` names a credited person or institution (the full name or a name's
    words) or any institution (:func:`pipeline.names.is_institution`)."""
    low, institution, words = _credit_probe(term)
    if low in topic.names or institution:
        return True
    return bool(words) and topic.name_words.issuperset(words)


@functools.lru_cache(maxsize=65536)
def _credit_probe(term: str) -> tuple[str, bool, tuple[str, ...]]:
    """What :func:`_credited` reads of ``term``: ``(casefolded, institution, words without dots)``."""
    low = term.casefold()
    return low, is_institution(term), tuple(w.strip(".") for w in low.split())


@functools.lru_cache(maxsize=65536)
def _name_like(term: str) -> bool:
    """Whether ``term`` is one :data:`_NAME_LIKE` token that is neither a venue nor generic."""
    return (_NAME_LIKE.fullmatch(term) is not None and not _is_generic_latin(term)
            and not find_venue_years(term))


def _words(work: str, tokens: Sequence[tuple[int, int]]) -> list[str]:
    """The words of ``tokens`` over ``work`` as jieba's ``cut`` would yield them, ``""`` for
    whitespace (blanked characters split a token)."""
    out: list[str] = []
    add = out.append
    last = math.inf  # no gap before the first token
    for s, e in tokens:
        if s > last:
            add("")
        piece = work[s:e]
        if piece.isalnum():  # the common case: no whitespace
            add(piece)
            last = e
            continue
        parts = piece.split()
        if len(parts) == 1 and len(parts[0]) == len(piece):  # no whitespace either
            add(piece)
        elif not parts:
            add("")
        else:
            if piece[0].isspace():
                add("")
            for k, part in enumerate(parts):
                if k:
                    add("")
                add(part)
            if piece[-1].isspace():
                add("")
        last = e
    return out


def _word_before(tokens: Sequence[tuple[int, int]] | None, text: str, start: int, end: int) -> str:
    """The last jieba word of ``text[start:end]``: the token of ``tokens`` (offsets into
    ``text``) ending at ``end`` inside the span, else jieba's cut of the span."""
    if tokens is not None:
        k = bisect.bisect_left(tokens, (end, end)) - 1
        while k >= 0 and tokens[k][1] > end:
            k -= 1
        if k >= 0 and tokens[k][1] == end and tokens[k][0] >= start:
            return text[tokens[k][0] : end]
    return _jieba_tokenizer().lcut(text[start:end])[-1]


def _cut_span(tokens: Sequence[tuple[int, int]] | None, text: str, start: int, end: int) -> list[str]:
    """jieba's words of ``text[start:end]``: the tokens tiling the span exactly when ``tokens``
    has them, else jieba's cut of the span."""
    if tokens is not None:
        k = bisect.bisect_left(tokens, (start, start))
        words, pos = [], start
        while k < len(tokens) and tokens[k][0] == pos and tokens[k][1] <= end:
            words.append(text[tokens[k][0] : tokens[k][1]])
            pos = tokens[k][1]
            k += 1
        if pos == end:
            return words
    return _jieba_tokenizer().lcut(text[start:end])


def _zh_candidates(text: str, topic: _Topic | None = None,
                   tokens: Sequence[tuple[int, int]] | None = None) -> Counter[str]:
    """Candidate terms of Chinese text with their counts: Latin runs (:func:`_latin_term`), jieba
    words :func:`_zh_word_verdict` counts, and :func:`_add_compounds`'s terms; Latin glosses left
    out unless the title names them; with ``topic``, credited names dropped. ``tokens``: sorted
    jieba ``(start, end)`` spans over ``text``, or None to cut here.
    """
    tok = _jieba_tokenizer()
    counts: Counter[str] = Counter()

    def add_latin(run: str) -> None:
        term = _latin_term(run)
        if term is not None and not (topic and _credited(term, topic)):
            counts[term] = counts.get(term, 0) + 1

    aliases: list[tuple[str, str]] = []  # (Chinese term, the acronym its gloss gives)
    if topic is not None:
        for m in _GLOSS_PAREN.finditer(text):
            items = [item.strip() for item in re.split(r"[,，;；、]", m.group()[1:-1])]
            for item in items:
                if _in_title(item, topic):
                    add_latin(item)
            # the Han run just before the gloss, searched in 16 characters only (not quadratic)
            window = max(0, m.start() - 16)
            before = _HAN_RUN_AT_END.search(text, window, m.start())
            term = _word_before(tokens, text, before.start(), m.start()) if before else ""
            if len(term) >= 3 and tok.FREQ.get(term) and term not in ZH_GENERIC_WORDS:
                aliases += [(term, item) for item in items if re.fullmatch(r"[A-Z]{2,6}s?", item)]
    # glosses and Latin runs become blanks of their length (offsets hold, no join across them)
    text = _GLOSS_PAREN.sub(lambda m: "\n" + " " * (len(m.group()) - 1), text)
    pieces, pos = [], 0
    for m in _LATIN_RUN.finditer(text):
        pieces.append(text[pos : m.start()])
        pieces.append("\n" + " " * (m.end() - m.start() - 1))
        pos = m.end()
        add_latin(m.group())
    pieces.append(text[pos:])
    work = "".join(pieces)

    # each distinct word judged once (_zh_raw_verdict, then the text's credited names)
    raws = cut_protected(tok, work) if tokens is None else _words(work, tokens)
    plain: dict[str, str] = {}  # raw word -> stripped, for the plain words (Han at both ends)
    opens: set[str] = set()  # raw plain words that may open a compound
    # _credited(w, topic), inlined
    names = topic.names if topic is not None else frozenset()
    name_words = topic.name_words if topic is not None else frozenset()
    count_of = counts.get  # (a Counter's own += calls __missing__ for every new word)
    for raw, c in Counter(raws).items():
        w, is_plain, may_open, counted, probe = _zh_raw_verdict(raw)
        if counted:
            if topic is not None:
                low, institution, words = probe
                if low in names or institution or (words and name_words.issuperset(words)):
                    counted = False
            if counted:
                counts[w] = count_of(w, 0) + c
        if is_plain:
            plain[raw] = w
            if may_open:
                opens.add(raw)
    _add_compounds(counts, raws, plain, opens, text, tokens, aliases)
    return counts

def _add_compounds(counts: Counter[str], raws: list[str], plain: dict[str, str], opens: set[str], text: str,
                   tokens: Sequence[tuple[int, int]] | None, aliases: list[tuple[str, str]]) -> None:
    """Add to ``counts`` (in place) the compounds, quoted terms, split dictionary terms and
    glossed acronyms of :func:`_zh_candidates`; ``raws`` are the words in order, ``plain`` and
    ``opens`` the plain words and those that may open a compound."""
    tok = _jieba_tokenizer()
    # two adjacent plain words, the first not generic: a compound candidate
    pairs = Counter([plain[a] + plain[b] for a, b in zip(raws, raws[1:], strict=False)
                     if a in opens and b in plain])
    for pair, c in pairs.items():
        if c >= MIN_COMPOUND_COUNT and pair not in counts:
            counts[pair] = c
    for term in _quoted_terms(text, tokens):
        counts[term] = max(counts[term], text.count(term))
    # a dictionary term made of two candidates the text uses on their own counts the rarer part
    for term in [t for t in counts if len(t) >= 4 and _HAN.fullmatch(t[0]) and tok.FREQ.get(t)]:
        parts = [min(counts[term[:i]], counts[term[i:]]) for i in range(2, len(term) - 1)
                 if counts.get(term[:i], 0) >= MIN_COMPOUND_COUNT and counts.get(term[i:], 0) >= MIN_COMPOUND_COUNT]
        counts[term] += max(parts, default=0)
    for term, acronym in set(aliases):  # 大语言模型（LLMs）: the term counts the acronym's uses too
        if counts[term] and counts[acronym]:
            counts[term] += counts[acronym]



@functools.lru_cache(maxsize=65536)
def _latin_term(run: str) -> str | None:
    """The candidate term of a Latin run of Chinese text (stop words dropped when one word is
    left), or None when too long, too short or generic."""
    words = run.split()
    if len(words) > MAX_LATIN_TERM_WORDS:
        return None
    if any(w.lower() in EN_STOP_WORDS for w in words):
        words = [w for w in words if w.lower() not in EN_STOP_WORDS]
        if len(words) != 1:
            return None  # a phrase with function words: no term
    term = " ".join(words)
    if len(term) >= 2 and term not in ZH_GENERIC_WORDS and not _is_generic_latin(term):
        return term
    return None


@functools.lru_cache(maxsize=65536)
def _zh_word_verdict(w: str) -> tuple[bool, bool, bool, bool]:
    """``(han, plain, opens, counted)`` of one stripped jieba word: Han at both ends; a plain
    dictionary word; plain and not generic (may open a compound); a candidate (2+ characters,
    not generic, stop word, number or punctuation; Han only when in the dictionary)."""
    tok = _jieba_tokenizer()
    han = bool(w) and _HAN.fullmatch(w[0]) is not None and _HAN.fullmatch(w[-1]) is not None
    plain = han and (len(w) >= 2 and w not in ZH_STOP_WORDS and w not in _user_terms()
                     and not _NUMBER.match(w) and bool(tok.FREQ.get(w)))
    counted = not (len(w) < 2 or w in ZH_GENERIC_WORDS or w in ZH_STOP_WORDS or _is_generic_latin(w)
                   or _NUMBER.match(w) or _PUNCT_ONLY.match(w)
                   or (_HAN.search(w) and not tok.FREQ.get(w)))
    return han, plain, plain and w not in ZH_GENERIC_WORDS, counted


@functools.lru_cache(maxsize=65536)
def _zh_raw_verdict(raw: str) -> tuple[str, bool, bool, bool, tuple[str, bool, tuple[str, ...]] | None]:
    """``(stripped, plain, opens, counted, probe)`` of a word as cut: :func:`_zh_word_verdict`
    of its stripped form and, if counted, its :func:`_credit_probe`; cached."""
    w = raw.strip()
    _, plain, opens, counted = _zh_word_verdict(w)
    return w, plain, opens, counted, _credit_probe(w) if counted else None


@functools.cache
def _user_terms() -> frozenset[str]:
    """The words of :func:`load_user_dict`."""
    return frozenset(w for w, _, _ in load_user_dict())


def _quoted_terms(text: str, tokens: Sequence[tuple[int, int]] | None = None) -> set[str]:
    """Chinese terms in quotation marks: 2-6 Han characters of dictionary words, no function
    character, not generic or an institution. ``tokens`` as for :func:`_zh_candidates`."""
    tok = _jieba_tokenizer()
    out = set()
    for m in _QUOTED_TERM.finditer(text):
        start = m.start(1)
        term = m.group(1)
        if term[0] in _DEGREE_ADVERBS:  # 「最弱势群体」 -> 弱势群体
            term, start = term[1:], start + 1
        if (not 2 <= len(term) <= 6 or term in ZH_GENERIC_WORDS or _FUNCTION_CHARS.search(term)
                or not all(tok.FREQ.get(p) for p in _cut_span(tokens, text, start, m.end(1)))):
            continue
        if is_institution(term):
            continue
        out.add(term)
    return out


def idf_table() -> tuple[dict[str, float], float]:
    """jieba's default IDF table (word -> IDF) and its median, as ``jieba.analyse.extract_tags``
    uses them (read at each call; ``jieba.analyse`` imported at first call)."""
    import jieba.analyse

    tfidf = jieba.analyse.default_tfidf
    return tfidf.idf_freq, tfidf.median_idf


def _zh_keywords(text: str, n: int, tokens: Sequence[tuple[int, int]] | None = None) -> list[str]:
    """jieba-style TF-IDF keywords of Chinese text (:func:`keywords`)."""
    simplified = to_script(text, "zh-Hans")
    if tokens is not None and len(simplified) != len(text):
        tokens = None  # the conversion moved the offsets: cut the text here
    simplified = _mask_noise(simplified)
    topic = _topic(simplified)
    counts = _zh_candidates(simplified, topic, tokens)
    if not counts:
        return []
    idf, median = idf_table()
    total = sum(counts.values())
    first = {w: simplified.find(w) % (len(simplified) + 1) for w in counts}  # not found: last
    quoted = _quoted_terms(simplified, tokens)
    scores = {}
    han_title = topic.han_title
    for w, c in counts.items():
        s = c / total * idf.get(w, median)
        # _in_title is False for a term with a Han character
        if (c >= 2 and w in han_title) if _HAN.search(w) else _in_title(w, topic):
            s *= TITLE_BOOST
        if w in quoted:
            s *= QUOTED_BOOST
        scores[w] = s
    # case and plural variants of one Latin term pool their scores under the form seen first
    keys = {w.casefold() for w in scores}
    merged: dict[str, float] = {}
    canon: dict[str, str] = {}
    for w in sorted(scores, key=lambda w: first[w]):
        key = w.casefold()
        if len(key) > 3 and key.endswith("s") and key[:-1] in keys:
            key = key[:-1]
        canon.setdefault(key, w)
        merged[canon[key]] = merged.get(canon[key], 0.0) + scores[w]
    ranked = sorted(merged, key=lambda w: (-merged[w], first[w]))
    kept = _dedup(ranked, n, cjk=True)
    # once for all Latin keywords
    flat = _flat_lower(simplified) if any(_ASCII_LETTER.search(w) for w in kept) else None
    return [_cased(w, simplified, flat) for w in kept]


#: Words that mark a clause fragment by spelling: an adverb after the first word, a past tense
#: at the end (-ly nouns exempt).
_ADVERB = re.compile(r"^[a-z]{3,}ly$")
_PAST = re.compile(r"^[a-z]{2,}[^e]ed$")
_LY_NOUNS = frozenset("family anomaly assembly supply monopoly italy july reply butterfly".split())


@functools.lru_cache(maxsize=65536)
def _en_phrase_ok(phrase: str) -> bool:
    """Whether a YAKE phrase can be a keyword: no stop word, not all generic, no number or
    punctuation only, no organisation head last, no adverb or final past participle."""
    words = phrase.split()
    low = [w.lower() for w in words]
    if len(phrase) < 2 or _NUMBER.match(phrase.replace(" ", "")) or _PUNCT_ONLY.match(phrase):
        return False
    if any(w in EN_STOP_WORDS for w in low) or _is_generic_latin(phrase):
        return False
    if any(_ADVERB.match(w) and w not in _LY_NOUNS for w in (low[1:] or low)) or _PAST.match(low[-1]):
        return False
    return low[-1] not in _EN_ORG_HEADS


# A Latin word not glued to a letter, digit, dot, @, apostrophe or hyphen before it.
_LATIN_TOKEN = re.compile(rf"(?<![A-Za-z0-9.@'-]){_LATIN_WORD}")

#: Most name-like tokens (:func:`_name_like`) put ahead of the YAKE phrases, as a fraction of
#: the number of keywords asked for.
EN_NAME_SHARE = 0.5


#: A run without a space too long to be a word, removed before YAKE (segtok's tokenizer is
#: quadratic in a run of ``[`` or ``'``).
_LONG_RUN = re.compile(r"\S{200,}")


def _en_keywords(text: str, n: int) -> list[str]:
    """YAKE keywords of English text (:func:`keywords`)."""
    stripped = _LONG_RUN.sub(" ", _strip_noise(text))
    line_credit: dict[str, Credit | None] = {}
    topic = _topic(stripped, line_credit)
    # credit lines dropped; a line without final punctuation ends a sentence
    lines = [ln for ln in stripped.split("\n")
             if (line_credit[k] if (k := ln.strip()) in line_credit else parse_credit_line(k)) is None]
    clean = _LINE_END.sub(".\n", "\n".join(lines))
    if not clean.strip():
        return []
    # name-like tokens name the paper's methods, systems and data: first, those in the title first
    names: Counter[str] = Counter()
    first: dict[str, int] = {}
    for m in _LATIN_TOKEN.finditer(clean):
        w = m.group()
        if _name_like(w) and not _credited(w, topic):
            names[w] += 1
            first.setdefault(w, m.start())
    lead = sorted(names, key=lambda w: (not _in_title(w, topic), -names[w], first[w]))
    lead = lead[: max(1, int(EN_NAME_SHARE * n))]
    ranked: list[str] = []
    seen: set[str] = set()
    for phrase, _score in yake_extract(clean, max(30, 6 * n)):
        key = phrase.casefold()
        words = phrase.split()
        if key in seen or not _en_phrase_ok(phrase) or _credited(phrase, topic):
            continue
        if len(words) > 1 and any(w in lead for w in words):
            continue  # a clause around a name that is kept by itself
        seen.add(key)
        ranked.append(phrase)
    flat = _flat_lower(clean)
    return [_cased(k, clean, flat) for k in _dedup(lead + ranked, n, cjk=False)]


def keywords(text: str, lang: str, n: int, tokens: Sequence[tuple[int, int]] | None = None) -> list[str]:
    """At most ``n`` distinct topic keywords of a section text, best first (``[]`` for an empty
    text or ``n <= 0``); Chinese ones in zh-Hans.

    ``lang``: BCP 47; ``en`` selects YAKE, ``zh-*``/``mixed`` jieba (:func:`pipeline.nlp._is_english`).
    ``tokens``: sorted jieba ``(start, end)`` spans of ``text``
    (:meth:`pipeline.nlp.ParsedSection.topic`), or None to cut here; ignored for English.

    Chinese: TF-IDF as ``jieba.analyse.extract_tags`` (jieba README) with its IDF table, the
    median for unknown terms; chosen over TextRank on the seeds' hand-picked keywords. English:
    YAKE (Campos et al., Information Sciences 509, 2020) as ``yake`` 0.7 computes it
    (:func:`pipeline.yake_port.yake_extract`), name-like tokens (:data:`EN_NAME_SHARE`) first.
    """
    if n <= 0 or not text or not text.strip():
        return []
    if _is_english(lang, text):
        return _en_keywords(text, n)
    return _zh_keywords(text, n, tokens)
