"""Clean: find the spans of a document that are not article content, with a reason each.

Nothing is deleted from the document: clean adds a ``dropped`` column, a list of spans
``{char_start, char_end, reason, text}`` (offsets into ``documents.text``), which later stages
skip and the writer saves to ``dropped.parquet``.

Rules, in order:

1. **Bylines and editor credits** (reason ``byline`` / ``editor_credit``). A byline is a short
   line (at most ``clean.byline_max_chars`` characters, no sentence punctuation) among the
   first lines of the document that starts or ends with a generic credit word of news
   writing (报道, 编辑部, 记者, 作者, By, ...). An editor credit (责任编辑：..., Editor: ...) is
   dropped wherever it stands. The word lists are the trade's vocabulary, not any site's.
2. **Related-article lists** (reason ``related_list``): a line that is only a label such as
   相关文章 / 推荐阅读 / 往期回顾 / "Related posts", followed by list items or links; the label
   and the whole list are dropped.
3. **Unrelated trailing news** (reason ``unrelated_trailing``). Scraped pages often glue the
   next item of the feed onto the end of an article. Blocks (paragraphs) are scored from the
   end by their topic fit: the cosine between the block's topic profile (CJK character
   bigrams + Latin words, :func:`pipeline.textutil.topic_profile`) and the profile of the
   document *before* it. A block whose fit is below ``clean.min_topic_fit`` is dropped and the
   scan goes on to the block before; the scan stops at the first block that fits, at a
   metadata or link line (structure that belongs to the article), or at a block too short to
   score (``MIN_SCORED_CHARS``).

Calibration (seeds, ``tests/test_clean.py``): paragraphs of the articles fit their document at
0.09–0.29; the glued news item of seed 000 fits at 0.02. The default threshold 0.06 sits
between, nearer the news so that a short, unusual closing paragraph of a real article is kept.
"""

from __future__ import annotations

import re

import pandas as pd

from .config import Config
from .fields import parse_key_value
from .stage import Stage
from .textutil import URL_ONLY, Line, blocks, cosine, plain, split_lines, topic_profile, trim_span

#: Blocks shorter than this (characters, stripped) are never scored for topic fit: too few
#: features for a stable cosine, and short lines at the end are usually links or sign-offs.
MIN_SCORED_CHARS = 30
#: How many non-blank lines at the start of a document can hold a byline.
BYLINE_WINDOW = 5

_CREDIT_WORDS = (
    "报道|報導|報道|编辑部|編輯部|编辑|編輯|记者|記者|撰文|整理|出品|编译|編譯|翻译|翻譯|作者|来源|來源"
)
_BYLINE_END = re.compile(rf"(?:{_CREDIT_WORDS})$")
_BYLINE_START = re.compile(
    rf"^(?:{_CREDIT_WORDS}|文|图|圖|By|Author|Authors|Reported by|Written by)\s*[：:|丨/｜]\s*\S"
    r"|^By\s+[A-Z][\w.\-]+(?:\s+[A-Z][\w.\-]+){0,3}$"
    r"|^(?:Posted|Written|Reported|Edited) by\s+\S"
)
_EDITOR_CREDIT = re.compile(
    r"^(?:(?:责任编辑|責任編輯|编辑|編輯|校对|校對|审校|審校|审核|審核|Editor)\s*[：:|丨｜]|Edited by\s)\s*\S.{0,30}$"
)
_SENTENCE_PUNCT = re.compile(r"[。！？!?；;，,]")
# Labels that open a list of links to other articles (the trade's words, in zh-Hans, zh-Hant, en).
_RELATED_LABEL = re.compile(
    r"^(?:相关文章|相關文章|相关阅读|相關閱讀|推荐阅读|推薦閱讀|延伸阅读|延伸閱讀|往期回顾|往期回顧|往期推荐|往期推薦|"
    r"热门文章|熱門文章|猜你喜欢|猜你喜歡|Related (?:posts|articles|stories|reading)|Recommended(?: reading| posts)?|"
    r"Read more|More (?:stories|posts|from us)|You (?:may|might) also like)\s*[：:]?$",
    re.IGNORECASE,
)
_LIST_OR_LINK = re.compile(r"^(?:[-*+•·▪●]|\d+[.)、]|\[)|https?://|\]\(")


def _is_byline(line: str, max_chars: int) -> bool:
    if len(line) > max_chars or _SENTENCE_PUNCT.search(line):
        return False
    return bool(_BYLINE_END.search(line) or _BYLINE_START.search(line))


def _is_structural(block: list[Line]) -> bool:
    """A block that is article structure: a metadata key-value line, a URL, a rule line."""
    for line in block:
        s = line.stripped
        if parse_key_value(s) is not None or URL_ONLY.match(s) or set(s) <= set("-—=*_·•"):
            return True
    return False


def find_dropped(text: str, config: Config) -> list[dict]:
    """All non-content spans of one document, sorted by ``char_start``, non-overlapping.

    Returns:
        list of ``{"char_start": int, "char_end": int, "reason": str, "text": str}``; offsets
        are character offsets into ``text``, trimmed of surrounding whitespace.
    """
    lines = split_lines(text)
    dropped: list[dict] = []

    def add(start: int, end: int, reason: str) -> None:
        start, end = trim_span(text, start, end)
        if end > start:
            dropped.append({"char_start": start, "char_end": end, "reason": reason, "text": text[start:end]})

    nonblank = [ln for ln in lines if not ln.blank]
    related_until = -1
    byline_zone = True  # bylines stand before the article's first paper heading
    for i, line in enumerate(nonblank):
        if i <= related_until:
            continue
        s = plain(line.text)
        if _RELATED_LABEL.match(s):
            j = i
            while j + 1 < len(nonblank) and _LIST_OR_LINK.search(nonblank[j + 1].stripped):
                j += 1
            if j > i:
                add(line.start, nonblank[j].end, "related_list")
                related_until = j
                continue
        kv = parse_key_value(s)
        if kv is not None and kv[0] == "title":
            byline_zone = False
        if _EDITOR_CREDIT.match(s) and len(s) <= config.clean.byline_max_chars + 8:
            add(line.start, line.end, "editor_credit")
        elif byline_zone and i < BYLINE_WINDOW and _is_byline(s, config.clean.byline_max_chars):
            add(line.start, line.end, "byline")

    _drop_unrelated_tail(text, lines, dropped, config.clean.min_topic_fit, add)
    return _resolve_overlaps(dropped)


def _covered(start: int, end: int, spans: list[dict]) -> bool:
    """Whether ``[start, end)`` lies wholly inside one of ``spans``."""
    return any(d["char_start"] <= start and end <= d["char_end"] for d in spans)


def _drop_unrelated_tail(text: str, lines: list[Line], dropped: list[dict], min_fit: float, add) -> None:
    """Score blocks from the end by topic fit and drop the unrelated run at the end as one span.

    Blocks already dropped (a related-article list, say) are passed over; lines already dropped
    inside a block are left out of its score.
    """
    paragraphs = blocks(lines)
    tail_start = tail_end = None
    for k in range(len(paragraphs) - 1, 0, -1):
        block = paragraphs[k]
        start, end = trim_span(text, block[0].start, block[-1].end)
        if _covered(start, end, dropped):
            continue
        kept = [ln for ln in block if not _covered(*trim_span(text, ln.start, ln.end), dropped)]
        body = "\n".join(ln.text for ln in kept)
        if _is_structural(kept) or len(body.strip()) < MIN_SCORED_CHARS:
            break
        if cosine(topic_profile(body), topic_profile(text[:start])) >= min_fit:
            break
        tail_start, tail_end = start, tail_end or end
    if tail_start is not None:
        add(tail_start, tail_end, "unrelated_trailing")


def _resolve_overlaps(spans: list[dict]) -> list[dict]:
    """Sort spans; drop a span that lies inside a larger one (the larger one explains it, e.g. an
    editor credit at the end of glued news); clip a partial overlap so spans never share a
    character."""
    spans = sorted(spans, key=lambda d: (d["char_start"], -d["char_end"]))
    out: list[dict] = []
    for span in spans:
        if out and span["char_end"] <= out[-1]["char_end"]:
            continue
        if out and span["char_start"] < out[-1]["char_end"]:
            cut = out[-1]["char_end"]
            offset = cut - span["char_start"]
            span = {**span, "char_start": cut, "text": span["text"][offset:]}
        out.append(span)
    return out


def clean_documents(batch: pd.DataFrame, config: Config) -> pd.DataFrame:
    """Stage function: add ``dropped`` (list of span dicts, see :func:`find_dropped`) per document.

    Documents whose ``status`` is not ``"ok"`` get an empty list.
    """
    out = batch.copy()
    out["dropped"] = [
        find_dropped(text, config) if status == "ok" else []
        for text, status in zip(batch["text"], batch["status"], strict=True)
    ]
    return out


STAGE = Stage(name="clean", fn=clean_documents, requires=("doc_id", "text", "status"), adds=("dropped",))
