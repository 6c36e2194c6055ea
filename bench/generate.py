"""Synthetic benchmark corpus: realistic articles recombined from the fixture material.

``python -m bench.generate OUT_DIR --n N --seed S`` writes ``N`` articles (documents, as the
pipeline counts them: a JSONL feed holds several) into the empty folder ``OUT_DIR``.

Material
--------
Every piece of text comes from the fixture articles in :data:`DEFAULT_SOURCES`, read as the
pipeline reads them: the per-document stages (ingest, clean, segment) and the per-section
stages (normalize, extract) run over them once (a few seconds), so GB18030, Big5 and UTF-16
files decode as in a real run. From their output the generator keeps

* per section: the English title, the Chinese title, authors, institutions, venue and year, and
  the summary split into sentences (the paper *bodies*);
* the dropped spans by reason (repost sources, bylines, editor credits, navigation, captions,
  share prompts, copyright lines, newsletter prompts, related lists) and the context spans
  (headlines, leads, award headers).

Chinese material is held in both scripts (converted with :func:`pipeline.normalize.to_script`, zh-Hant in the Taiwan standard),
so a zh-Hans and a zh-Hant article can be built from any Chinese fixture. English articles use
the English material only. The few connecting phrases the generator adds itself (heading and
key-value labels, a templated headline and lead) are written once in zh-Hans and English and
converted to zh-Hant the same way.

Papers
------
A *universe* of synthetic papers, :data:`PAPERS_PER_ARTICLE` per article, each a recombination
of the material: a fixture title as is (:data:`ORIGINAL_TITLE_SHARE`) or the head of one title
joined to the tail of another, an optional Chinese title, authors, institutions, an optional
synthetic arXiv id, venue/year, and one body per language built from the sentences of one or two
fixture summaries. Articles draw their papers with a skewed popularity (:data:`POPULARITY_POWER`),
so a few papers are mentioned in hundreds of articles, many in a few and most in one or two, across
languages and scripts: the same paper in several articles is what dedup has to find.

Articles
--------
Each article has a script (zh-Hans, zh-Hant, en), a layout (numbered ``论文 N：`` / ``Paper N:``
headings, Markdown ``###`` headings, key-value blocks before or after the body, narrative
paragraphs), optional award headers splitting its sections, header junk (repost source,
navigation, byline) and footer junk (copyright, share prompt, newsletter, related list), captions
between sections, and a size drawn log-uniformly between :data:`MIN_ARTICLE_BYTES` and
:data:`MAX_ARTICLE_BYTES` of UTF-8 text. It is written as ``.txt``, ``.md``, ``.html`` (a page
with ``<meta charset>``, ``<title>``, canonical link and navigation) or a line of a ``.jsonl``
feed, in UTF-8, UTF-8 with BOM, UTF-16, GB18030 (zh-Hans) or Big5 (zh-Hant), some with CRLF line
ends; :data:`EXACT_DUPLICATE_SHARE` of the text files are byte copies of an earlier one (reposts).
Files go into subfolders of :data:`FILES_PER_DIR`.

Determinism: the output depends only on ``N``, the seed, the fixture files and the pipeline
stages that read them; the same inputs give the same bytes (every random draw comes from
:class:`random.Random` seeded by strings, never from ``hash()`` or set order).
"""

from __future__ import annotations

import argparse
import html
import json
import math
import random
import re
import sys
from collections import Counter
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from functools import lru_cache
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
"""The repository root."""

DEFAULT_SOURCES: tuple[Path, ...] = (
    ROOT / "tests" / "fixtures" / "segmentation" / "articles",
    ROOT / "tests" / "fixtures" / "dedup" / "articles",
    ROOT / "corpora" / "sample",
)
"""Folders whose articles provide the material (read recursively, as the pipeline does)."""

SCRIPTS = ("zh-Hans", "zh-Hant", "en")
SCRIPT_WEIGHTS = (0.45, 0.25, 0.30)
"""Share of articles per script."""

LAYOUTS = ("numbered", "markdown", "kv", "narrative")
LAYOUT_WEIGHTS = (0.30, 0.25, 0.25, 0.20)
"""Share of articles per layout."""

FEED_SHARE = 0.10
"""Share of articles written as a line of a ``.jsonl`` feed."""
HTML_SHARE = 0.15
"""Share of articles written as an ``.html`` page."""
MD_SHARE_NON_MARKDOWN = 0.20
"""Share of the text files of a non-Markdown layout that still get the ``.md`` suffix."""
FEED_ARTICLES = (2, 6)
"""Articles per ``.jsonl`` feed file (inclusive range)."""
CRLF_SHARE = 0.10
"""Share of ``.txt``/``.md`` files with CRLF line ends."""
EXACT_DUPLICATE_SHARE = 0.01
"""Share of ``.txt``/``.md`` files that are byte copies of the previous text file (reposts)."""

TEXT_ENCODINGS: dict[str, tuple[tuple[str, float], ...]] = {
    "zh-Hans": (("utf-8", 0.70), ("gb18030", 0.15), ("utf-8-sig", 0.05), ("utf-16", 0.10)),
    "zh-Hant": (("utf-8", 0.65), ("big5", 0.25), ("utf-16", 0.10)),
    "en": (("utf-8", 0.90), ("utf-8-sig", 0.05), ("utf-16", 0.05)),
}
"""Encodings of ``.txt``/``.md`` files per script, with their shares (UTF-16 is written with a BOM)."""
HTML_ENCODINGS: dict[str, tuple[tuple[str, float], ...]] = {
    "zh-Hans": (("utf-8", 0.80), ("gb18030", 0.20)),
    "zh-Hant": (("utf-8", 0.80), ("big5", 0.20)),
    "en": (("utf-8", 1.0),),
}
"""Encodings of ``.html`` pages per script (declared in ``<meta charset>``)."""

MIN_ARTICLE_BYTES = 2_000
MAX_ARTICLE_BYTES = 20_000
"""Range of the target article size, in bytes of UTF-8 text (drawn log-uniformly)."""
MAX_SECTIONS = 30
"""Most paper sections in one article."""
PAPERS_PER_ARTICLE = 5.0
"""Size of the paper universe per article; with about 12 mentions per article (the mean size is
about 8 KB) a paper is mentioned about 2.5 times on average."""
POPULARITY_POWER = 2.0
"""Paper ``i`` of ``U`` is drawn as ``int(U * u ** POPULARITY_POWER)`` for uniform ``u``: a
density falling as ``i ** (1/POPULARITY_POWER - 1)``, a few very popular papers and a long tail."""
ORIGINAL_TITLE_SHARE = 0.3
"""Share of synthetic papers that keep a fixture title unchanged."""
TITLE_ZH_SHARE = 0.25
"""Share of synthetic papers with a Chinese title."""
ARXIV_SHARE = 0.6
"""Share of synthetic papers with a (synthetic) arXiv id."""
AWARD_HEADER_SHARE = 0.6
"""Share of heading/key-value articles whose sections sit under award headers."""
CAPTION_SHARE = 0.10
"""Chance of a caption line after a section."""
FILES_PER_DIR = 1000
"""Articles per subfolder of the output folder."""
ZH_HANT_TARGET = "zh-Hant-TW"
"""OpenCC target of the zh-Hant material: Taiwan standard characters (為, 裡, 群), as Big5 pages
write them (OpenCC's standard 爲, 裏, 羣 are not in Big5)."""

_JUNK_REASONS = ("repost_source", "byline", "editor_credit", "navigation", "caption", "share_prompt",
                 "copyright", "newsletter", "related_list")
_CONTEXT_KINDS = ("headline", "lead", "award_header")
_HAN = re.compile(r"[\u3400-\u9fff]")
_ZH_SENTENCE = re.compile(r"(?<=[。！？])")
_EN_SENTENCE = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9\"“(])")
_MD_DECOR = re.compile(r"^(?:#{1,6}\s+|\*\*|__)|(?:\*\*|__)[：:]?$")

#: Connecting phrases the generator writes itself, in zh-Hans (converted for zh-Hant) and English.
_TEMPLATES: dict[str, dict[str, str]] = {
    "zh": {
        "numbered": "论文 {i}：{title}",
        "numbered_nospace": "论文{i}：{title}",
        "authors": "作者：{v}",
        "institutions": "机构：{v}",
        "link": "论文链接：{v}",
        "summary": "论文摘要：{v}",
        "kv_title": "论文标题：{v}",
        "narrative": "《{title}》{zh}是 {venue} {year} 的获奖论文之一。",
        "narrative_next": "再来看《{title}》{zh}。",
        "zh_paren": "（{v}）",
        "headline": "{venue} {year} 获奖论文盘点",
        "lead": "{venue} {year} 日前公布了获奖论文名单，以下逐篇介绍。",
        "sep": "、",
    },
    "en": {
        "numbered": "Paper {i}: {title}",
        "numbered_nospace": "Paper {i}: {title}",
        "authors": "Authors: {v}",
        "institutions": "Affiliations: {v}",
        "link": "Paper: {v}",
        "summary": "{v}",
        "kv_title": "Title: {v}",
        "narrative": "The paper “{title}” was among the award winners at {venue} {year}.",
        "narrative_next": "Next comes “{title}”.",
        "zh_paren": " ({v})",
        "headline": "{venue} {year} award-winning papers at a glance",
        "lead": "{venue} {year} has announced its paper awards. Here is a short tour of the winners.",
        "sep": ", ",
    },
}


@dataclass(frozen=True)
class Material:
    """Text pieces recombined into articles, each Chinese piece in both scripts.

    Attributes:
        titles: English paper titles.
        titles_zh: Chinese titles, per script (``"zh-Hans"``/``"zh-Hant"``), parallel lists.
        authors: author names.
        institutions: per script; English articles get the Latin-script names only.
        venues: ``(venue, year)`` pairs.
        bodies: per script, sentence lists (one per fixture summary); the zh-Hans and zh-Hant
            lists are parallel (item ``k`` is one summary in both scripts).
        junk: per script and dropped-span reason, the dropped texts.
        context: per script and context kind (headline, lead, award_header), the texts.
        fingerprint: SHA-256 prefix of all the above, to tell whether two corpora share material.
    """

    titles: tuple[str, ...]
    titles_zh: dict[str, tuple[str, ...]]
    authors: tuple[str, ...]
    institutions: dict[str, tuple[str, ...]]
    venues: tuple[tuple[str, int], ...]
    bodies: dict[str, tuple[tuple[str, ...], ...]]
    junk: dict[str, dict[str, tuple[str, ...]]]
    context: dict[str, dict[str, tuple[str, ...]]]
    fingerprint: str = ""


@dataclass
class CorpusStats:
    """What :func:`generate` wrote.

    Attributes:
        n_articles: articles (documents) written, feed lines included.
        n_files: files written.
        n_bytes: bytes on disk.
        n_text_bytes: UTF-8 bytes of the articles' text (before encoding and HTML markup).
        n_mentions: paper sections written.
        n_papers: distinct synthetic papers mentioned.
        n_exact_duplicates: files that are byte copies of an earlier file.
        by_script, by_layout, by_format, by_encoding: articles per value (a feed's articles
            count under ``jsonl`` and ``utf-8``).
        material_fingerprint: :attr:`Material.fingerprint`.
    """

    n_articles: int = 0
    n_files: int = 0
    n_bytes: int = 0
    n_text_bytes: int = 0
    n_mentions: int = 0
    n_papers: int = 0
    n_exact_duplicates: int = 0
    by_script: dict[str, int] = field(default_factory=dict)
    by_layout: dict[str, int] = field(default_factory=dict)
    by_format: dict[str, int] = field(default_factory=dict)
    by_encoding: dict[str, int] = field(default_factory=dict)
    material_fingerprint: str = ""

    def to_dict(self) -> dict:
        """The stats as plain JSON-ready values."""
        return asdict(self)


# ----------------------------------------------------------------------------------- material

def _group(text: str) -> str:
    """``"zh"`` when ``text`` holds a Han character, else ``"en"``."""
    return "zh" if _HAN.search(text) else "en"


def _sentences(text: str) -> tuple[str, ...]:
    parts = _ZH_SENTENCE.split(text) if _HAN.search(text) else _EN_SENTENCE.split(text)
    return tuple(p.strip() for p in parts if p.strip())


def _both_scripts(text: str) -> dict[str, str]:
    from pipeline.normalize import to_script

    return {"zh-Hans": to_script(text, "zh-Hans"), "zh-Hant": to_script(text, ZH_HANT_TARGET)}


def _unique(items) -> tuple:
    """``items`` without repeats, in first-seen order."""
    return tuple(dict.fromkeys(items))


def _read_fixtures(sources: Sequence[Path]):
    """Run the per-document and per-section stages over ``sources``; return (documents, sections)."""
    import pandas as pd

    from pipeline import clean, extract, ingest, normalize, segment
    from pipeline.config import load_config

    config = load_config()
    docs_out, sections_out = [], []
    for folder in sources:
        listing, _ = ingest.list_corpus(folder, config.ingest.extensions)
        if not len(listing):
            continue
        docs = ingest.STAGE(listing, config)
        docs = docs[docs["status"] == "ok"].reset_index(drop=True)
        for stage in (clean.STAGE, segment.STAGE):
            docs = stage(docs, config)
        sections = segment.explode_sections(docs)
        for stage in (normalize.STAGE, extract.STAGE):
            sections = stage(sections, config)
        docs_out.append(docs)
        sections_out.append(sections)
    return pd.concat(docs_out, ignore_index=True), pd.concat(sections_out, ignore_index=True)


def _present(value) -> bool:
    return isinstance(value, str) and bool(value.strip())


@lru_cache(maxsize=4)
def load_material(sources: tuple[Path, ...] = DEFAULT_SOURCES) -> Material:
    """Read the fixture articles in ``sources`` through the pipeline and collect the material.

    Raises:
        ValueError: the sources give no English or no Chinese paper body.
    """
    import hashlib

    docs, sections = _read_fixtures(sources)
    titles, authors = [], []
    titles_zh: list[dict[str, str]] = []
    inst_latin, inst_zh = [], []
    venues: list[tuple[str, int]] = []
    bodies_en, bodies_zh = [], []
    for row in sections.to_dict("records"):
        title, title_zh = row.get("title"), row.get("title_zh")
        if _present(title) and not _HAN.search(title):
            titles.append(title.strip())
        if _present(title_zh):
            titles_zh.append(title_zh.strip())
        authors.extend(a for a in (row.get("authors") if row.get("authors") is not None else ()) if " " in a)
        for inst in row.get("institutions") if row.get("institutions") is not None else ():
            (inst_zh if _HAN.search(inst) else inst_latin).append(inst)
        if _present(row.get("venue")) and row.get("year") is not None and not (row["year"] != row["year"]):
            venues.append((row["venue"], int(row["year"])))
        summary = row.get("summary")
        if _present(summary):
            sentences = _sentences(summary.strip())
            if sentences:
                (bodies_zh if _group(summary) == "zh" else bodies_en).append(sentences)
    if not bodies_en or not bodies_zh or len(titles) < 2:
        raise ValueError(f"the fixture sources {[str(s) for s in sources]} give too little material")

    junk: dict[str, dict[str, list[str]]] = {s: {r: [] for r in _JUNK_REASONS} for s in SCRIPTS}
    context: dict[str, dict[str, list[str]]] = {s: {k: [] for k in _CONTEXT_KINDS} for s in SCRIPTS}

    def add(target: dict[str, dict[str, list[str]]], key: str, text: str) -> None:
        text = text.strip()
        if not text:
            return
        if _group(text) == "en":
            target["en"][key].append(text)
        else:
            for script, converted in _both_scripts(text).items():
                target[script][key].append(converted)

    for doc in docs.to_dict("records"):
        for span in doc["dropped"]:
            if span["reason"] in _JUNK_REASONS:
                add(junk, span["reason"], span["text"])
        for span in doc["context"]:
            text = doc["text"][span["char_start"]:span["char_end"]]
            if span["kind"] in ("headline", "award_header"):
                text = _MD_DECOR.sub("", text.strip()).strip()
            elif span["kind"] == "lead" and not re.search(r"[。.!?！？]$", text.strip()):
                continue  # a heading-like line filed as lead; only whole sentences make a lead
            if span["kind"] in _CONTEXT_KINDS:
                add(context, span["kind"], text)

    zh_bodies = [tuple(_both_scripts(s) for s in body) for body in _unique(bodies_zh)]
    zh_titles = [_both_scripts(t) for t in _unique(titles_zh)]
    zh_insts = [_both_scripts(t) for t in _unique(inst_zh)]
    latin_insts = _unique(inst_latin)
    material = Material(
        titles=_unique(titles),
        titles_zh={s: tuple(t[s] for t in zh_titles) for s in ("zh-Hans", "zh-Hant")},
        authors=_unique(authors),
        institutions={"en": latin_insts,
                      **{s: (*latin_insts, *(t[s] for t in zh_insts)) for s in ("zh-Hans", "zh-Hant")}},
        venues=_unique(venues) or (("NeurIPS", 2024),),
        bodies={"en": _unique(bodies_en),
                **{s: tuple(tuple(sent[s] for sent in body) for body in zh_bodies) for s in ("zh-Hans", "zh-Hant")}},
        junk={s: {k: _unique(v) for k, v in d.items()} for s, d in junk.items()},
        context={s: {k: _unique(v) for k, v in d.items()} for s, d in context.items()},
    )
    digest = hashlib.sha256(json.dumps(asdict(material), ensure_ascii=False, sort_keys=True).encode()).hexdigest()
    return Material(**{**material.__dict__, "fingerprint": digest[:16]})


@lru_cache(maxsize=1)
def _templates() -> dict[str, dict[str, str]]:
    """The connecting phrases per article script (zh-Hant converted from zh-Hans)."""
    from pipeline.normalize import to_script

    zh = _TEMPLATES["zh"]
    return {"zh-Hans": dict(zh), "zh-Hant": {k: to_script(v, ZH_HANT_TARGET) for k, v in zh.items()},
            "en": dict(_TEMPLATES["en"])}


# ------------------------------------------------------------------------------------- papers

@dataclass(frozen=True)
class Paper:
    """One synthetic paper: its identity and one body per script (indices into the material)."""

    index: int
    title: str
    title_zh: int | None
    authors: tuple[str, ...]
    institutions: dict[str, tuple[str, ...]]
    arxiv_id: str | None
    venue: str
    year: int
    body_zh: tuple[int, ...]
    body_en: tuple[int, ...]


def _recombine_title(r: random.Random, titles: Sequence[str]) -> str:
    """The head of one fixture title joined to the tail of another."""
    a, b = r.sample(list(titles), 2)
    if ":" in a and ":" in b:
        return f"{a.split(':', 1)[0].strip()}: {b.split(':', 1)[1].strip()}"
    wa, wb = a.split(), b.split()
    i = r.randint(1, max(1, len(wa) - 1))
    j = r.randint(1, max(1, len(wb) - 1))
    return " ".join(wa[:i] + wb[j:])


def make_paper(material: Material, seed: int, index: int) -> Paper:
    """Synthetic paper ``index`` of the universe for ``seed`` (a pure function of its arguments)."""
    r = random.Random(f"{seed}:paper:{index}")
    title = r.choice(material.titles) if r.random() < ORIGINAL_TITLE_SHARE else _recombine_title(r, material.titles)
    n_zh_titles = len(material.titles_zh["zh-Hans"])
    title_zh = r.randrange(n_zh_titles) if n_zh_titles and r.random() < TITLE_ZH_SHARE else None
    authors = tuple(r.sample(material.authors, min(len(material.authors), r.randint(0, 6))))
    insts = {s: tuple(r.sample(material.institutions[s], min(len(material.institutions[s]), r.randint(0, 3))))
             if material.institutions[s] else () for s in SCRIPTS}
    arxiv = f"{r.randint(17, 25):02d}{r.randint(1, 12):02d}.{r.randint(1, 99999):05d}" if r.random() < ARXIV_SHARE else None
    venue, year = r.choice(material.venues)
    n_zh, n_en = len(material.bodies["zh-Hans"]), len(material.bodies["en"])
    body_zh = tuple(r.randrange(n_zh) for _ in range(r.randint(1, 2)))
    body_en = tuple(r.randrange(n_en) for _ in range(r.randint(1, 2)))
    return Paper(index, title, title_zh, authors, insts, arxiv, venue, year, body_zh, body_en)


# ------------------------------------------------------------------------------------ articles

Block = tuple[str, str]
"""``(tag, text)``: tag ``nav``, ``h1`` (headline), ``h2`` (award header), ``h3`` (section
heading), ``p`` (paragraph; ``\\n`` inside joins key-value lines), ``junk`` (junk paragraph)."""


@dataclass
class Article:
    """One generated article before it is written."""

    script: str
    layout: str
    blocks: list[Block]
    headline: str
    venue: str
    year: int
    papers: list[int]


def _weighted(r: random.Random, options: Sequence, weights: Sequence[float]):
    return r.choices(options, weights=weights, k=1)[0]


def _pick(r: random.Random, items: Sequence[str], fallback: str | None = None) -> str | None:
    return r.choice(items) if items else fallback


def _body(material: Material, script: str, paper: Paper, r: random.Random, extra: int) -> str:
    """A paper's body in ``script``: its own sentences (a prefix of at least all but two) plus
    ``extra`` fixture summaries appended (a longer explainer)."""
    bodies = material.bodies[script]
    own = paper.body_en if script == "en" else paper.body_zh
    sentences = [s for k in own for s in bodies[k]]
    sentences = sentences[: r.randint(max(1, len(sentences) - 2), len(sentences))]
    for _ in range(extra):
        sentences.extend(bodies[r.randrange(len(bodies))])
    return ("" if script != "en" else " ").join(sentences)


def _section(material: Material, t: dict[str, str], script: str, layout: str, paper: Paper, number: int,
             first: bool, r: random.Random, extra: int) -> list[Block]:
    """The blocks of one paper section in ``layout``."""
    zh = material.titles_zh["zh-Hant" if script == "zh-Hant" else "zh-Hans"]
    title_zh = zh[paper.title_zh] if paper.title_zh is not None and script != "en" else None
    body = _body(material, script, paper, r, extra)
    kv = []
    if paper.authors and r.random() < 0.6:
        kv.append(t["authors"].format(v=t["sep"].join(paper.authors)))
    if paper.institutions[script] and r.random() < 0.6:
        kv.append(t["institutions"].format(v=t["sep"].join(paper.institutions[script])))
    link = f"https://arxiv.org/abs/{paper.arxiv_id}" if paper.arxiv_id and r.random() < 0.7 else None
    if layout == "numbered":
        key = "numbered_nospace" if r.random() < 0.2 else "numbered"
        shown = paper.title + (t["zh_paren"].format(v=title_zh) if title_zh and r.random() < 0.5 else "")
        blocks: list[Block] = [("h3", t[key].format(i=number, title=shown))]
        if kv:
            blocks.append(("p", "\n".join(kv)))
        blocks.append(("p", t["summary"].format(v=body) if r.random() < 0.5 else body))
        if link:
            blocks.append(("p", t["link"].format(v=link)))
        return blocks
    if layout == "markdown":
        blocks = [("h3", paper.title)]
        if title_zh:
            blocks.append(("p", title_zh))
        if kv:
            blocks.append(("p", "\n".join(kv)))
        blocks.append(("p", body))
        if link:
            blocks.append(("p", t["link"].format(v=link)))
        return blocks
    if layout == "kv":
        if r.random() < 0.3:  # emoji block
            lines = [f"📄 {paper.title}"]
            if paper.authors:
                lines.append(f"👥 {t['sep'].join(paper.authors)}")
            if paper.institutions[script]:
                lines.append(f"🏛 {t['sep'].join(paper.institutions[script])}")
            if paper.arxiv_id:
                lines.append(f"🔗 https://arxiv.org/abs/{paper.arxiv_id}")
        else:
            lines = [t["kv_title"].format(v=paper.title), *kv, *([t["link"].format(v=link)] if link else [])]
        meta, text = ("p", "\n".join(lines)), ("p", body)
        return [meta, text] if r.random() < 0.7 else [text, meta]
    zh_paren = t["zh_paren"].format(v=title_zh) if title_zh else ""
    key = "narrative" if first or r.random() < 0.3 else "narrative_next"
    intro = t[key].format(title=paper.title, zh=zh_paren, venue=paper.venue, year=paper.year)
    return [("p", intro + ("" if script != "en" else " ") + body)]


def _utf8_len(blocks: Sequence[Block]) -> int:
    return sum(len(text.encode("utf-8")) + 2 for _, text in blocks)


def make_article(material: Material, seed: int, index: int, r: random.Random, n_papers: int) -> Article:
    """Article ``index``: script, layout, header, paper sections and footer."""
    t_all = _templates()
    script = _weighted(r, SCRIPTS, SCRIPT_WEIGHTS)
    layout = _weighted(r, LAYOUTS, LAYOUT_WEIGHTS)
    t, junk, ctx = t_all[script], material.junk[script], material.context[script]
    venue, year = r.choice(material.venues)
    header: list[Block] = []
    if r.random() < 0.3 and junk["repost_source"]:
        header.append(("junk", r.choice(junk["repost_source"])))
    if r.random() < 0.15 and junk["navigation"]:
        header.append(("nav", r.choice(junk["navigation"])))
    headline = (_pick(r, ctx["headline"]) if r.random() < 0.5 else None) or t["headline"].format(venue=venue, year=year)
    header.append(("h1", headline))
    if r.random() < 0.5 and junk["byline"]:
        header.append(("junk", r.choice(junk["byline"])))
    if r.random() < 0.1 and junk["editor_credit"]:
        header.append(("junk", r.choice(junk["editor_credit"])))
    leads = [t["lead"].format(venue=venue, year=year), *r.sample(ctx["lead"], min(2, len(ctx["lead"])))]
    header.extend(("p", lead) for lead in r.sample(leads, r.randint(1, 2)))

    footer: list[Block] = []
    for reason, share in (("copyright", 0.4), ("share_prompt", 0.4), ("newsletter", 0.2), ("related_list", 0.3)):
        if r.random() < share and junk[reason]:
            footer.append(("junk", r.choice(junk[reason])))
    r.shuffle(footer)

    awards: list[str] = []
    if layout != "narrative" and r.random() < AWARD_HEADER_SHARE and ctx["award_header"]:
        awards = r.sample(ctx["award_header"], min(len(ctx["award_header"]), r.randint(1, 3)))
    target = int(math.exp(r.uniform(math.log(MIN_ARTICLE_BYTES), math.log(MAX_ARTICLE_BYTES))))
    extra_max = 0 if target < 6_000 else (1 if target < 12_000 else 2)
    per_award = r.randint(2, 5)

    body: list[Block] = []
    size = _utf8_len(header) + _utf8_len(footer)
    chosen: list[int] = []
    number = 0
    draws = 0
    while len(chosen) < MAX_SECTIONS and (size < target or not chosen) and draws < 4 * MAX_SECTIONS:
        draws += 1
        idx = int(n_papers * r.random() ** POPULARITY_POWER)
        if idx in chosen:  # a paper appears once per article
            continue
        if awards and len(chosen) % per_award == 0 and len(chosen) // per_award < len(awards):
            body.append(("h2", awards[len(chosen) // per_award]))
            number = 0
        number += 1
        paper = make_paper(material, seed, idx)
        blocks = _section(material, t, script, layout, paper, number, not chosen, r, r.randint(0, extra_max))
        if r.random() < CAPTION_SHARE and junk["caption"]:
            blocks.append(("junk", r.choice(junk["caption"])))
        body.extend(blocks)
        size += _utf8_len(blocks)
        chosen.append(idx)
    return Article(script, layout, header + body + footer, headline, venue, year, chosen)


# ------------------------------------------------------------------------------------ writing

def render_text(article: Article, markdown: bool, with_headline: bool = True) -> str:
    """The article as plain text or Markdown (headings marked only in the Markdown layout)."""
    marks = {"h1": "# ", "h2": "## ", "h3": "### "} if markdown else {}
    lines = []
    for tag, text in article.blocks:
        if tag == "h1" and not with_headline:
            continue
        prefix = marks.get(tag, "") if (tag != "h3" or article.layout == "markdown") else ""
        lines.append(prefix + text)
    return "\n\n".join(lines) + "\n"


def render_html(article: Article, charset: str, url: str, published: str) -> str:
    """The article as an HTML page with head metadata, navigation outside ``<article>``."""
    esc = html.escape
    nav = [f"<nav>{esc(text)}</nav>" for tag, text in article.blocks if tag == "nav"]
    body = []
    for tag, text in article.blocks:
        if tag == "nav":
            continue
        inner = "<br>\n".join(esc(line) for line in text.split("\n"))
        body.append(f"<{tag}>{inner}</{tag}>" if tag in ("h1", "h2", "h3") else f"<p>{inner}</p>")
    lang = {"zh-Hans": "zh-CN", "zh-Hant": "zh-TW", "en": "en"}[article.script]
    return (f'<!DOCTYPE html>\n<html lang="{lang}">\n<head>\n<meta charset="{charset}">\n'
            f"<title>{esc(article.headline)}</title>\n"
            f'<link rel="canonical" href="{esc(url)}">\n'
            f'<meta property="article:published_time" content="{published}">\n</head>\n<body>\n'
            + "\n".join(nav) + "\n<article>\n" + "\n".join(body) + "\n</article>\n</body>\n</html>\n")


def _encode(text: str, encoding: str) -> tuple[bytes, str]:
    """``text`` in ``encoding``; Big5 falls back to Big5-HKSCS, then UTF-8, for characters it lacks.

    Returns:
        ``(bytes, encoding actually used)``.
    """
    for codec in (encoding, "big5hkscs", "utf-8") if encoding == "big5" else (encoding,):
        try:
            return text.encode(codec), codec
        except UnicodeEncodeError:
            continue
    raise AssertionError("unreachable: UTF-8 encodes every string")


def generate(out_dir: str | Path, n: int, seed: int = 0, sources: Sequence[Path] = DEFAULT_SOURCES) -> CorpusStats:
    """Write ``n`` articles into ``out_dir`` (created; must be empty) and return what was written.

    Raises:
        ValueError: ``n`` < 1, or ``out_dir`` exists and is not empty.
    """
    if n < 1:
        raise ValueError(f"n = {n}; must be at least 1")
    out = Path(out_dir)
    if out.exists() and any(out.iterdir()):
        raise ValueError(f"{out} is not empty; the generator writes into an empty folder")
    out.mkdir(parents=True, exist_ok=True)
    material = load_material(tuple(Path(s) for s in sources))
    r = random.Random(f"{seed}:articles")
    n_papers = max(1, int(n * PAPERS_PER_ARTICLE))
    stats = CorpusStats(material_fingerprint=material.fingerprint)
    counts: dict[str, Counter] = {k: Counter() for k in ("script", "layout", "format", "encoding")}
    papers: set[int] = set()
    feed: list[dict] = []
    feed_name = ""
    feed_first = feed_size = 0
    previous_text: tuple[bytes, str, str] | None = None

    def write(name: str, data: bytes, index: int) -> None:
        folder = out / f"{index // FILES_PER_DIR:03d}"
        folder.mkdir(exist_ok=True)
        (folder / name).write_bytes(data)
        stats.n_files += 1
        stats.n_bytes += len(data)

    def flush_feed() -> None:
        nonlocal feed, feed_name
        if feed:
            lines = "".join(json.dumps(rec, ensure_ascii=False) + "\n" for rec in feed)
            write(feed_name, lines.encode("utf-8"), feed_first)
        feed, feed_name = [], ""

    for i in range(n):
        url = f"https://news.example.com/{seed}/articles/{i:06d}"
        published = f"{r.randint(2023, 2025)}-{r.randint(1, 12):02d}-{r.randint(1, 28):02d}"
        if previous_text is not None and r.random() < EXACT_DUPLICATE_SHARE:
            data, ext, used = previous_text
            write(f"{i:06d}_repost.{ext}", data, i)
            stats.n_articles += 1
            stats.n_exact_duplicates += 1
            counts["script"]["repost"] += 1  # its text is the earlier file's
            counts["layout"]["repost"] += 1
            counts["format"][ext] += 1
            counts["encoding"][used] += 1
            continue
        article = make_article(material, seed, i, r, n_papers)
        papers.update(article.papers)
        stats.n_mentions += len(article.papers)
        stats.n_articles += 1
        counts["script"][article.script] += 1
        counts["layout"][article.layout] += 1
        kind = r.random()
        if kind < FEED_SHARE:
            text = render_text(article, markdown=article.layout == "markdown", with_headline=False)
            if not feed:
                feed_name, feed_first, feed_size = f"{i:06d}_feed.jsonl", i, r.randint(*FEED_ARTICLES)
            feed.append({"title": article.headline, "url": url, "published": published, "text": text})
            counts["format"]["jsonl"] += 1
            counts["encoding"]["utf-8"] += 1
            stats.n_text_bytes += len(text.encode("utf-8"))
            if len(feed) >= feed_size:
                flush_feed()
            continue
        if kind < FEED_SHARE + HTML_SHARE:
            options = HTML_ENCODINGS[article.script]
            encoding = _weighted(r, [e for e, _ in options], [w for _, w in options])
            text = render_html(article, encoding, url, published)
            data, used = _encode(text, encoding)
            if used != encoding:  # the declared charset must match the bytes
                data, used = _encode(render_html(article, used, url, published), used)
            write(f"{i:06d}_{article.script}_{article.layout}_{used}.html", data, i)
            counts["format"]["html"] += 1
            counts["encoding"][used] += 1
            stats.n_text_bytes += len(render_text(article, markdown=False).encode("utf-8"))
            continue
        ext = "md" if article.layout == "markdown" or r.random() < MD_SHARE_NON_MARKDOWN else "txt"
        text = render_text(article, markdown=ext == "md")
        stats.n_text_bytes += len(text.encode("utf-8"))
        if r.random() < CRLF_SHARE:
            text = text.replace("\n", "\r\n")
        options = TEXT_ENCODINGS[article.script]
        encoding = _weighted(r, [e for e, _ in options], [w for _, w in options])
        data, used = _encode(text, encoding)
        write(f"{i:06d}_{article.script}_{article.layout}_{used}.{ext}", data, i)
        previous_text = (data, ext, used)
        counts["format"][ext] += 1
        counts["encoding"][used] += 1
    flush_feed()
    stats.n_papers = len(papers)
    stats.by_script, stats.by_layout, stats.by_format, stats.by_encoding = (
        dict(sorted(counts[k].items())) for k in ("script", "layout", "format", "encoding"))
    return stats


def main(argv: Sequence[str] | None = None) -> int:
    """Command line: ``python -m bench.generate OUT_DIR --n N --seed S``; prints the stats as JSON."""
    parser = argparse.ArgumentParser(prog="python -m bench.generate", description=__doc__.split("\n\n")[0])
    parser.add_argument("out_dir", type=Path, help="empty (or missing) folder to write into")
    parser.add_argument("--n", type=int, default=1000, help="articles to write (default 1000)")
    parser.add_argument("--seed", type=int, default=0, help="random seed (default 0)")
    args = parser.parse_args(argv)
    try:
        stats = generate(args.out_dir, args.n, args.seed)
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print(json.dumps(stats.to_dict(), ensure_ascii=False, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
