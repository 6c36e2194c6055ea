"""Tests of pipeline.formats and of reading HTML and JSON Lines files through pipeline.ingest.

Real bytes in tmp_path, the real trafilatura and lxml (no mocks, no network).
"""

from __future__ import annotations

import codecs
import hashlib
import json
import re
from pathlib import Path

import lxml.html
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pipeline.config import Config
from pipeline.formats import (
    CHARSET_PRESCAN_BYTES,
    charset_label_to_codec,
    close_unclosed_title,
    extract_html,
    html_to_plain_text,
    parse_jsonl_line,
    sniff_html_charset,
    tidy_markdown,
)
from pipeline.ingest import (
    DOCUMENT_COLUMNS,
    STAGE,
    list_corpus,
    read_document,
    read_documents,
    source_sort_key,
)

# An article page as a Chinese portal serves it: a menu, a sidebar and a footer around the
# <article>, a declared legacy charset, a canonical link and an Open Graph publish time.
ARTICLE_HTML = """<!DOCTYPE html>
<html lang="zh-CN">
<head>
<meta charset="{charset}">
<title>NeurIPS 2024 最佳论文揭晓 - 机器之心</title>
<link rel="canonical" href="https://www.example.com/articles/neurips-2024-best-paper">
{date_markup}
<style>body {{ font-family: sans-serif; }}</style>
<script>var tracker = "登录注册";</script>
</head>
<body>
<nav class="menu"><ul><li><a href="/">首页</a></li><li><a href="/ai">人工智能</a></li><li><a href="/login">登录注册</a></li></ul></nav>
<div class="sidebar">热门推荐：本周最受欢迎的十篇文章</div>
<article>
<h1>NeurIPS 2024 最佳论文揭晓</h1>
{time_markup}
<p>刚刚，NeurIPS 2024 公布了今年的最佳论文奖项。今年共有两篇论文获得最佳论文奖，另有两篇论文获得最佳论文亚军。</p>
<h2>论文 1：视觉自回归建模</h2>
<p>论文地址：<a href="https://arxiv.org/abs/2404.02905">https://arxiv.org/abs/2404.02905</a></p>
<p>代码：<a href="https://github.com/FoundationVision/VAR_v2">https://github.com/FoundationVision/VAR_v2</a>，见参考文献 [1]。</p>
<p>本文提出视觉自回归建模（VAR），这是一种新的生成范式，将图像上的自回归学习重新定义为从粗到细的“下一尺度预测”。</p>
<ul>
<li>作者：Keyu Tian、Yi Jiang、Zehuan Yuan</li>
<li>机构：北京大学、字节跳动</li>
</ul>
<h2>论文 2：随机泰勒导数估计器</h2>
<p>本文介绍了一种高效的<a href="https://openreview.net/forum?id=J2wI2rCG2u">随机泰勒导数估计器</a>，用于高阶微分算子的计算。</p>
</article>
<footer><p>版权所有 2024 机器之心 京ICP备14017335号</p><a href="/about">关于我们</a></footer>
</body>
</html>
"""
OG_DATE = '<meta property="article:published_time" content="2024-12-11T08:30:00+08:00">'
TIME_ELEMENT = '<time datetime="2024-12-09T10:00:00Z">2024年12月9日</time>'
BOILERPLATE = ("首页", "人工智能", "登录注册", "热门推荐", "京ICP备14017335号", "关于我们", "font-family")


def _page(charset: str, date_markup: str = OG_DATE, time_markup: str = "") -> str:
    return ARTICLE_HTML.format(charset=charset, date_markup=date_markup, time_markup=time_markup)


def _write(path: Path, data: bytes) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    return path


def _read(tmp_path: Path, name: str, data: bytes) -> dict:
    return read_document(name, str(_write(tmp_path / name, data)))


# --- HTML pages --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("charset", "codec", "encoding"),
    [("gb2312", "gb2312", "gb18030"), ("GBK", "gbk", "gb18030"), ("utf-8", "utf-8", "utf-8")],
)
def test_html_article_main_content_and_metadata(tmp_path: Path, charset: str, codec: str, encoding: str) -> None:
    html = _page(charset)
    data = html.encode(codec)
    row = _read(tmp_path, "news/page.html", data)

    assert row["status"] == "ok" and row["error"] is None
    assert row["encoding"] == encoding
    assert row["doc_id"] == hashlib.sha256(data).hexdigest()[:16]
    assert (row["n_bytes"], row["n_chars"]) == (len(data), len(row["text"]))
    assert row["title"] == "NeurIPS 2024 最佳论文揭晓 - 机器之心"
    assert row["url"] == "https://www.example.com/articles/neurips-2024-best-paper"
    assert row["published"] == "2024-12-11"
    assert row["notes"] is None
    assert row["raw_text"] == html  # the decoded page, whole

    lines = row["text"].split("\n")
    # headings as Markdown heading lines, the list as list items, paragraphs a blank line apart
    assert "# NeurIPS 2024 最佳论文揭晓" in lines
    assert "## 论文 1：视觉自回归建模" in lines
    assert "## 论文 2：随机泰勒导数估计器" in lines
    assert "- 作者：Keyu Tian、Yi Jiang、Zehuan Yuan" in lines
    assert "- 机构：北京大学、字节跳动" in lines
    assert "\n\n刚刚，NeurIPS 2024 公布了今年的最佳论文奖项。" in row["text"]
    # links: bare URLs stay bare (no "[url](url)"), no Markdown escapes in URLs or brackets
    assert "论文地址：https://arxiv.org/abs/2404.02905" in lines
    assert "代码：https://github.com/FoundationVision/VAR_v2，见参考文献 [1]。" in lines
    assert "[随机泰勒导数估计器](https://openreview.net/forum?id=J2wI2rCG2u)" in row["text"]
    assert "\\" not in row["text"]
    # boilerplate around the article is gone from text, kept in raw_text
    for junk in BOILERPLATE:
        assert junk not in row["text"], junk
        assert junk in row["raw_text"], junk


HANT_PAGE = """<html><head>
<meta http-equiv="Content-Type" content="text/html; charset=big5">
<title>NeurIPS 2024 最佳論文揭曉｜科技新報</title>
</head><body>
<div id="menu"><a href="/">首頁</a> | <a href="/news">新聞</a> | <a href="/login">會員登入</a></div>
<div class="article-body">
<h1>NeurIPS 2024 最佳論文揭曉</h1>
<time datetime="2024-12-09T10:00:00Z">2024年12月9日</time>
<p>剛剛，NeurIPS 2024 公布了今年的最佳論文獎項。今年共有兩篇論文獲得最佳論文獎，另有兩篇論文獲得最佳論文亞軍。</p>
<h2>論文 1：視覺自迴歸建模</h2>
<p>本文提出視覺自迴歸建模，這是一種新的生成範式，將圖像上的自迴歸學習重新定義為從粗到細的下一尺度預測。</p>
<h2>論文 2：隨機泰勒導數估計器</h2>
<p>第二篇獲獎論文介紹了一種高效的隨機泰勒導數估計器，用於計算高階微分算子。</p>
</div>
<div class="footer">本站所有內容版權所有，轉載請註明出處。</div>
</body></html>
"""


def test_html_big5_page_and_time_element(tmp_path: Path) -> None:
    row = _read(tmp_path, "page.HTM", HANT_PAGE.encode("big5"))
    assert (row["status"], row["encoding"]) == ("ok", "big5hkscs")
    assert row["title"] == "NeurIPS 2024 最佳論文揭曉｜科技新報"
    assert row["published"] == "2024-12-09"
    lines = row["text"].split("\n")
    assert "## 論文 1：視覺自迴歸建模" in lines
    assert "## 論文 2：隨機泰勒導數估計器" in lines
    for junk in ("首頁", "會員登入", "轉載請註明出處"):
        assert junk not in row["text"] and junk in row["raw_text"]


def test_html_without_date_or_canonical(tmp_path: Path) -> None:
    html = _page("utf-8", date_markup="").replace(
        '<link rel="canonical" href="https://www.example.com/articles/neurips-2024-best-paper">', "")
    row = _read(tmp_path, "page.html", html.encode("utf-8"))
    # the footer's "2024" is not a publication date (htmldate's extensive search is off)
    assert (row["published"], row["url"]) == (None, None)
    assert row["title"] == "NeurIPS 2024 最佳论文揭晓 - 机器之心"


def test_html_canonical_wins_over_og_url_and_og_url_is_the_fallback(tmp_path: Path) -> None:
    og = '<meta property="og:url" content="https://m.example.com/a/1">'
    with_both = _page("utf-8", date_markup=og)
    assert _read(tmp_path, "a.html", with_both.encode())["url"] == (
        "https://www.example.com/articles/neurips-2024-best-paper")
    og_only = with_both.replace(
        '<link rel="canonical" href="https://www.example.com/articles/neurips-2024-best-paper">', "")
    assert _read(tmp_path, "b.html", og_only.encode())["url"] == "https://m.example.com/a/1"


def test_html_tiny_page_falls_back_to_body_text(tmp_path: Path) -> None:
    # trafilatura discards footer-only content; the page must not be lost.
    html = ('<html><head><title>仅有页脚</title></head><body><footer><p>论文地址：'
            'https://arxiv.org/abs/2404.02905</p><p>第二行<br>第三行</p></footer>'
            '<script>var x = 1;</script></body></html>')
    row = _read(tmp_path, "tiny.html", html.encode("utf-8"))
    assert row["status"] == "ok"
    assert row["text"] == "论文地址：https://arxiv.org/abs/2404.02905\n\n第二行\n\n第三行"
    assert row["title"] == "仅有页脚"
    # trafilatura in recall mode (needed to keep <h2>/<h3> outside <article>) keeps footer-only
    # content itself; the plain-text fallback renders the same page the same way
    assert row["notes"] is None
    assert row["raw_text"] == html
    assert html_to_plain_text(lxml.html.fromstring(html)) == row["text"]


def test_html_whose_title_is_never_closed_keeps_its_body(tmp_path: Path) -> None:
    # the title's content is raw text to the parser: unclosed, it swallows the rest of the page
    html = ("<html><head><title>页面标题</head><body><article><h1>论文 1：某某模型</h1>"
            "<p>这是正文的第一段，介绍论文的方法。</p></article></body></html>")
    row = _read(tmp_path, "t.html", html.encode("utf-8"))
    assert (row["status"], row["title"]) == ("ok", "页面标题")
    assert row["text"] == "# 论文 1：某某模型\n\n这是正文的第一段，介绍论文的方法。"
    assert row["notes"] == "html: a <title> was not closed before the next tag, so it was closed there"
    assert close_unclosed_title("<title>A</title><p>b</p>") is None
    assert close_unclosed_title("<p>no title</p>") is None
    assert close_unclosed_title("<TITLE lang=zh>A<p>b") == "<TITLE lang=zh>A</title><p>b"


@pytest.mark.parametrize(("html", "closed"), [
    # a later unclosed title, and one after a commented-out pair
    ("<title>A</title><title>B</head><p>x</p>", "<title>A</title><title>B</title></head><p>x</p>"),
    ("<!-- <title>x</title> --><title>R</head><p>x</p>", "<!-- <title>x</title> --><title>R</title></head><p>x</p>"),
    ("<title>R</title><svg><title>icon</svg><p>x</p>", "<title>R</title><svg><title>icon</title></svg><p>x</p>"),
    # not tags, or closed: left alone
    ("<!-- <title> --><title>T</title><p>x</p>", None),
    ("<script>var s = '<title>';</script><title>T</title><p>x</p>", None),
    ("<title>T</title foo><p>x</p>", None),
    ("<titlex>a<p>b</p>", None),
    ("<p>x</p><title>", None),
    ("<title>a < b</title><p>x</p>", None),
    ("<xmp><title>x</xmp><p>x</p>", None),
    ("<textarea><title></textarea><p>x</p>", None),
    ("<title>T</title><plaintext><title>x<p>b", None),
    # a later title's end tag does not close an earlier unclosed one; abrupt comments are empty
    ("<title>P</head><p>B</p><svg><title>i</title></svg>", "<title>P</title></head><p>B</p><svg><title>i</title></svg>"),
    ("<!--><title>T</head><p>B</p><!-- c -->", "<!--><title>T</title></head><p>B</p><!-- c -->"),
])
def test_close_unclosed_title_cases(html: str, closed: str | None) -> None:
    assert close_unclosed_title(html) == closed


def test_close_unclosed_title_is_linear_in_the_page() -> None:
    # every "<title" without ">" once made the start-tag pattern rescan the rest of the page
    # (quadratic: 16 s for these 280 KB); now each failed match stops at the next "<"
    for page in ("<p>x</p>" + "<title " * 40_000, "<p" + " <title" * 40_000, "<!--" * 100_000):
        assert close_unclosed_title(page) is None
    # every unclosed title is closed, however many
    many = "".join(f"<svg><title>i{n}</svg><p>para {n}</p>" for n in range(40))
    assert close_unclosed_title(many) == "".join(f"<svg><title>i{n}</title></svg><p>para {n}</p>" for n in range(40))


DEEP_NOTE = ("html: the page reaches lxml's depth limit (255 levels), so the text is the plain-text rendering "
             "of <body> parsed with lxml's huge_tree")
HUGE_NOTE = ("html: the page reaches lxml's huge_tree depth limit (2047 levels): text nested deeper or after "
             "that point may be missing")


def test_html_nested_deeper_than_lxml_limit_is_not_lost(tmp_path: Path) -> None:
    para = "<p>论文 1：某某模型。这是正文的第一段，介绍论文的方法。</p>"
    html = "<html><body>" + "<div><table><tr><td>" * 200 + para + "</td></tr></table></div>" * 200 + "</body></html>"
    row = _read(tmp_path, "deep.html", html.encode("utf-8"))
    assert (row["status"], row["text"]) == ("ok", "论文 1：某某模型。这是正文的第一段，介绍论文的方法。")
    assert row["notes"] == DEEP_NOTE


def test_html_deep_text_beside_shallow_text(tmp_path: Path) -> None:
    # the shallow text alone once came out, with no note, while the deep paragraph was dropped
    def html(depth: int) -> str:
        return ("<html><body><nav><a>首页</a></nav><p>短的页眉。</p>" + "<div>" * depth
                + "<p>论文 1：深处的正文。</p>" + "</div>" * depth + "</body></html>")

    row = _read(tmp_path, "deep.html", html(1000).encode("utf-8"))
    assert (row["text"], row["notes"]) == ("首页\n\n短的页眉。\n\n论文 1：深处的正文。", DEEP_NOTE)
    # past the deeper limit too the paragraph is out of reach: trafilatura's text, and a note
    row = _read(tmp_path, "deeper.html", html(3000).encode("utf-8"))
    assert (row["text"], row["notes"]) == ("首页\n短的页眉。", HUGE_NOTE)


HUGE_TEXT_NOTE = ("html: a run of text longer than libxml2's limit (10,000,000 bytes) was lost by the default "
                  "parse, so the page was parsed with lxml's huge_tree")


@pytest.mark.parametrize("fragment", [False, True])
def test_html_text_node_over_libxml2_text_limit_is_kept_and_noted(fragment: bool) -> None:
    # libxml2 cuts a text node over 10,000,000 bytes of UTF-8 to nothing without huge_tree: a
    # 12 MB paragraph left a 47-character document with no note (here 7.8 M characters, 10.4 MB)
    para = "Ré " * 2_600_000 + "end of the long paragraph."
    page = f"<p>{para}</p>" if fragment else (
        f"<html><head><title>Huge</title></head><body><h2>A Huge Paper</h2><p>Ann Lee, Bo Wu</p><p>{para}</p>"
        "<p>After the long paragraph.</p></body></html>")
    content = extract_html(page)
    assert "end of the long paragraph." in content.text and len(content.text) >= len(para)
    assert HUGE_TEXT_NOTE in content.notes
    # a page under the limit is parsed once, with no note
    small = extract_html(page.replace(para, para[:100_000]))
    assert not any("libxml2" in n for n in small.notes) and "Ré Ré" in small.text


def test_html_tag_with_a_flood_of_attributes_is_cut_to_the_first_ones_with_a_note() -> None:
    # libxml2's parse is quadratic in one tag's attributes, in C where the file's time limit
    # cannot stop it: 100,000 attributes on a <div> (1.5 MB) ran 142 s, 200,000 500 s
    import time

    page = ("<html><body><div " + " ".join(f"data-a{i}='{i}'" for i in range(30_000)) + " class='post'>"
            "<h2>Graph Widgets Under Noise</h2><p>Pat Kay, Quin Loe</p><p>We study graphs of widgets.</p></div>"
            "<p title='a > b' " + " ".join(f"x{i}" for i in range(300)) + ">After the div.</p></body></html>")
    started = time.perf_counter()
    content = extract_html(page)
    assert time.perf_counter() - started < 5
    assert "We study graphs of widgets." in content.text and "After the div." in content.text
    assert content.notes == ("html: 2 tag(s) with more than 256 attributes kept their first 256 (libxml2 parses a "
                             "tag's attributes in quadratic time)",)
    # a tag of few attributes, however long (a data URI), is left as it is
    assert extract_html(page.split("<div ")[0] + f"<img src='data:image/png;base64,{'A' * 50_000}'><p>Text.</p>").notes == ()


def test_html_iframe_srcdoc_page_is_read_in_place_of_the_frame_with_a_note() -> None:
    # a browser shows the srcdoc page in the frame; its papers were silently not in the text
    inner = "<h2>Graph Widgets Under Noise</h2><p>Pat Kay, Quin Loe</p><p>We study graphs &amp; widgets.</p>"
    page = (f'<html><body><p>Before the frame.</p><iframe src="x.html"></iframe><iframe srcdoc="{inner.replace("&", "&amp;")}">'
            "</iframe>tail text<p>After the frame.</p></body></html>")
    content = extract_html(page)
    assert "Pat Kay, Quin Loe" in content.text and "We study graphs & widgets." in content.text
    assert content.text.index("Before the frame.") < content.text.index("Pat Kay") < content.text.index("After the frame.")
    assert content.notes == ("html: the page inside 1 <iframe srcdoc> was read in place of the frame",)


def test_html_deep_markup_without_text_keeps_the_main_content(tmp_path: Path) -> None:
    # 300 unclosed <font> tags after the article: the deeper parse renders no more text, so
    # trafilatura's main content stands (no navigation) and no note is added
    html = ("<html><body><nav><a>首页</a> <a>关于</a></nav><article><h1>论文 1：某某模型</h1>"
            "<p>这是正文的第一段，介绍论文的方法和结果，足够长以便被识别为正文内容。</p></article>"
            + "<font>" * 300 + "</body></html>")
    row = _read(tmp_path, "fonts.html", html.encode("utf-8"))
    plain = _read(tmp_path, "plain.html", html.replace("<font>" * 300, "").encode("utf-8"))
    assert row["text"] == plain["text"] and "论文 1：某某模型" in row["text"]
    assert row["notes"] is None


@pytest.mark.parametrize(
    ("html", "status"),
    [("", "empty"), ("  \n ", "empty"), ("<html><head><title>空</title></head><body></body></html>", "empty")],
)
def test_html_without_text_is_empty(tmp_path: Path, html: str, status: str) -> None:
    row = _read(tmp_path, "e.html", html.encode())
    assert row["status"] == status
    assert row["error"] == "e.html has no text"


def test_html_plain_text_in_an_html_file(tmp_path: Path) -> None:
    row = _read(tmp_path, "x.html", "论文地址：https://arxiv.org/abs/2404.02905".encode())
    assert row["status"] == "ok"
    assert row["text"] == "论文地址：https://arxiv.org/abs/2404.02905"


def test_html_that_is_a_url_is_not_fetched(tmp_path: Path) -> None:
    # htmldate downloads a str that looks like a URL; ingest never hands it one.
    url = "http://127.0.0.1:9/never-fetched"
    row = _read(tmp_path, "u.html", url.encode())
    assert (row["status"], row["text"], row["published"]) == ("ok", url, None)


def test_html_binary_is_error_row(tmp_path: Path) -> None:
    row = _read(tmp_path, "x.html", bytes(range(256)) * 4)
    assert row["status"] == "error"
    assert row["error"].startswith("could not decode x.html: BinaryContentError: no character encoding")


def test_html_declared_charset_that_lies_is_overruled(tmp_path: Path) -> None:
    # Declared windows-1252 (or GB2312), served as GBK (or Big5): the declared decoding is
    # strict-valid but implausible, and the note says what happened.
    html = _page("iso-8859-1")
    row = _read(tmp_path, "a.html", html.encode("gbk"))
    assert (row["encoding"], row["raw_text"]) == ("gb18030", html)
    assert row["notes"].startswith("decode: the declared charset cp1252 decodes the bytes, but gb18030")
    hant = "剛剛，NeurIPS 2024 公布了今年的最佳論文獎項。今年共有兩篇論文獲得最佳論文獎，另有兩篇論文獲得最佳論文亞軍。"
    page = f'<html><head><meta charset="gb2312"><title>最佳論文</title></head><body><p>{hant}</p></body></html>'
    row = _read(tmp_path, "b.html", page.encode("big5"))
    assert (row["encoding"], row["text"]) == ("big5hkscs", hant)


def test_html_in_the_stage_with_other_formats(tmp_path: Path) -> None:
    _write(tmp_path / "a.txt", "论文摘要：本文提出视觉自回归建模。".encode())
    _write(tmp_path / "b.html", _page("gb2312").encode("gb2312"))
    _write(tmp_path / "c.pdf", b"%PDF-1.4")
    listing, skipped = list_corpus(tmp_path, Config().ingest.extensions)
    docs = STAGE(listing, Config())
    assert list(docs.columns) == list(DOCUMENT_COLUMNS)
    assert docs["source_path"].tolist() == ["a.txt", "b.html"]
    assert [t if isinstance(t, str) else None for t in docs["title"]] == [None, "NeurIPS 2024 最佳论文揭晓 - 机器之心"]
    assert skipped.to_dict("records") == [{"source_path": "c.pdf", "reason": "unsupported file type .pdf"}]


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.binary(max_size=400) | st.text(max_size=200).map(lambda t: f"<html><body>{t}</p></div>".encode()))
def test_read_html_never_raises(tmp_path: Path, data: bytes) -> None:
    row = _read(tmp_path, "h.html", data)
    assert row["status"] in ("ok", "empty", "error")
    assert row["n_chars"] == len(row["text"])


# --- the declared charset ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("head", "codec"),
    [
        (b'<meta charset="gb2312">', "gb18030"),
        (b"<META CHARSET=GBK>", "gb18030"),
        (b"<meta charset='big5'>", "big5hkscs"),
        (b'<meta http-equiv="Content-Type" content="text/html; charset=Big5-HKSCS">', "big5hkscs"),
        (b'<meta content="text/html;charset=gb18030" http-equiv="content-type"/>', "gb18030"),
        (b'<meta charset="ISO-8859-1">', "cp1252"),  # WHATWG: Latin-1 labels are windows-1252
        (b'<meta charset="utf-16le">', "utf-8"),  # WHATWG: a UTF-16 label in a <meta> means UTF-8
        (b'<meta charset="shift_jis">', "shift_jis"),
        (b'<meta name="viewport" content="width=device-width"><meta charset="gbk">', "gb18030"),
        (b'<!-- <meta charset="big5"> --><meta charset="gb2312">', "gb18030"),
        (b'<meta charset="no-such-charset">', None),
        (b'<meta http-equiv="refresh" content="5; charset=gbk">', None),
        (b"<p>charset=gbk</p>", None),
        (b"", None),
    ],
)
def test_sniff_html_charset(head: bytes, codec: str | None) -> None:
    assert sniff_html_charset(b"<!DOCTYPE html><html><head>" + head + b"</head>") == codec


def test_sniff_html_charset_reads_only_the_prescan_window() -> None:
    padding = b"<!DOCTYPE html><html><head>" + b" " * CHARSET_PRESCAN_BYTES
    assert sniff_html_charset(padding + b'<meta charset="gbk">') is None
    assert sniff_html_charset(b'<meta charset="gbk">' + padding) == "gb18030"


def test_charset_label_to_codec() -> None:
    assert charset_label_to_codec(" GB_2312-80 ") == "gb18030"
    assert charset_label_to_codec("x-x-big5") == "big5hkscs"
    assert charset_label_to_codec("windows-1251") == "cp1251"
    assert charset_label_to_codec("klingon") is None


# --- Markdown clean-up --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("markdown", "text"),
    [
        (r"https://github.com/foo\_bar/baz\_qux", "https://github.com/foo_bar/baz_qux"),
        (r"见 \[1\]，2\*3，\~5，\<tag>", "见 [1]，2*3，~5，<tag>"),
        ("1\\. Visual Autoregressive Modeling\n\\- item\n\\# not a heading", "1. Visual Autoregressive Modeling\n- item\n# not a heading"),
        (r"a literal backslash \\\_ stays", r"a literal backslash \_ stays"),
        (r"code `x\_y` and ```\n\*z\n``` stay verbatim", r"code `x\_y` and ```\n\*z\n``` stay verbatim"),
        ("[https://arxiv.org/abs/2404.02905](https://arxiv.org/abs/2404.02905)", "https://arxiv.org/abs/2404.02905"),
        ("[Paper](https://arxiv.org/abs/2404.02905)", "[Paper](https://arxiv.org/abs/2404.02905)"),
        ("C:\\Users\\论文", "C:\\Users\\论文"),
        ("plain", "plain"),
    ],
)
def test_tidy_markdown(markdown: str, text: str) -> None:
    assert tidy_markdown(markdown) == text


def test_extract_html_escaped_specials_round_trip() -> None:
    html = ("<html><body><article><h2>1. a_b [2] *c*</h2><p>" + "正文内容足够长。" * 10
            + " snake_case [x] 2*3 `y`</p><ol><li>first_one</li><li>second</li></ol></article></body></html>")
    text = extract_html(html).text
    assert text.startswith("## 1. a_b [2] *c*\n\n")
    assert "snake_case [x] 2*3 `y`" in text
    assert "1. first_one\n2. second" in text


@pytest.mark.parametrize(("block", "text"), [
    # malformed HTML that lxml (and a browser) nests so: a heading inside a bold run inside a heading
    ('<h1>Best <b>papers<h2>Deep Residual Learning</h3><p>He et al', "# Best **papers Deep Residual Learning**\n\nHe et al"),
    ("<em>before<h3>inside</h3>after</em>", "*before inside after*"),
    # what trafilatura already separated stays as it was
    ("<h2>Best papers<p>Deep Residual Learning</p></h2>", "## Best papers\n\nDeep Residual Learning"),
])
def test_extract_html_block_inside_inline_does_not_glue_words(block: str, text: str) -> None:
    lead = "<p>" + "Some article text that is long enough to be kept as the page's main content. " * 2 + "</p>"
    assert extract_html(f"<html><body>{lead}{block}</body></html>").text.split("\n\n", 1)[1].strip() == text


# --- JSON Lines ---------------------------------------------------------------------------------


def _jsonl(tmp_path: Path, lines: list[str | bytes], name: str = "feed.jsonl", newline: bytes = b"\n") -> list[dict]:
    data = newline.join(line if isinstance(line, bytes) else line.encode("utf-8") for line in lines) + newline
    return read_documents(name, str(_write(tmp_path / name, data)))


GOOD_1 = json.dumps({"text": "论文 1：视觉自回归建模", "url": "https://a.org/1", "title": "VAR", "date": "2024-12-11"},
                    ensure_ascii=False)
GOOD_2 = json.dumps({"content": "Second article.\r\nIts second line.", "published": "2024-12-12T08:00:00Z"})
GOOD_3 = json.dumps({"body": "<p>HTML in a field gives its text</p>", "article": "not used", "title": 2024})
BAD_JSON = '{"text": "unterminated'
NO_TEXT = json.dumps({"tags": ["a tag"], "url": "https://a.org/5"})
#: A record with a title and no text is a paper record (pipeline.paper_records), not an error.
TITLE_ONLY = json.dumps({"title": "Only A Title", "url": "https://a.org/6"})


def test_jsonl_good_bad_and_blank_lines(tmp_path: Path) -> None:
    rows = _jsonl(tmp_path, [GOOD_1, "", GOOD_2, "   ", BAD_JSON, GOOD_3, NO_TEXT])
    assert [r["source_path"] for r in rows] == [
        "feed.jsonl#1", "feed.jsonl#3", "feed.jsonl#5", "feed.jsonl#6", "feed.jsonl#7"]
    assert [r["status"] for r in rows] == ["ok", "ok", "error", "ok", "error"]
    first, second, bad, third, no_text = rows

    assert (first["text"], first["title"], first["url"], first["published"]) == (
        "论文 1：视觉自回归建模", "VAR", "https://a.org/1", "2024-12-11")
    assert second["text"] == "Second article.\nIts second line."
    assert (second["title"], second["url"], second["published"]) == (None, None, "2024-12-12T08:00:00Z")
    # HTML in the text field goes through the HTML extractor (feeds often carry the page)
    assert third["text"] == "HTML in a field gives its text"
    assert third["raw_text"] == GOOD_3
    assert third["title"] == "2024"

    assert bad["error"] == "feed.jsonl#5: not valid JSON: Unterminated string starting at: column 10"
    assert no_text["error"] == (
        "feed.jsonl#7: no text and no paper title: none of the fields text, content, body, article, title_en, "
        "title, paper_title, name, 论文标题, 論文標題, 标题, 標題, paper, 论文, 論文, title_zh, 中文标题, 中文標題 holds a title "
        "(its keys: tags, url)")
    for row, line in zip(rows, [GOOD_1, GOOD_2, BAD_JSON, GOOD_3, NO_TEXT], strict=True):
        raw = line.encode("utf-8")
        assert row["doc_id"] == hashlib.sha256(raw).hexdigest()[:16]
        assert row["content_sha256"] == hashlib.sha256(raw).hexdigest()
        assert row["n_bytes"] == len(raw)
        assert row["n_chars"] == len(row["text"])
        assert row["raw_text"] == line
        assert row["encoding"] == "utf-8"
    assert (bad["text"], no_text["text"]) == ("", "")
    paper = _jsonl(tmp_path, [TITLE_ONLY], name="titles.jsonl")[0]
    assert (paper["status"], paper["title"], paper["url"]) == ("ok", "Only A Title", "https://a.org/6")
    assert paper["text"] == "Title: Only A Title\nLink: https://a.org/6" and paper["raw_text"] == TITLE_ONLY


def test_jsonl_crlf_bom_and_other_encodings(tmp_path: Path) -> None:
    rows = _jsonl(tmp_path, [codecs.BOM_UTF8 + GOOD_1.encode(), GOOD_2.encode()], newline=b"\r\n")
    assert [r["status"] for r in rows] == ["ok", "ok"]
    assert rows[0]["encoding"] == "utf-8-sig"
    assert rows[0]["doc_id"] == hashlib.sha256(GOOD_1.encode()).hexdigest()[:16]  # BOM and CR not hashed
    gb = _jsonl(tmp_path, [GOOD_1.encode("gb18030"), GOOD_1.replace("1：", "2：").encode("gb18030")], name="gb.jsonl")
    assert [r["text"] for r in gb] == ["论文 1：视觉自回归建模", "论文 2：视觉自回归建模"]
    assert gb[0]["doc_id"] == hashlib.sha256(GOOD_1.encode("gb18030")).hexdigest()[:16]


def test_jsonl_utf16_lines_hash_their_utf8_bytes(tmp_path: Path) -> None:
    data = codecs.BOM_UTF16_LE + f"{GOOD_1}\r\n\r\n{NO_TEXT}\r\n".encode("utf-16-le")
    rows = read_documents("u16.jsonl", str(_write(tmp_path / "u16.jsonl", data)))
    assert [(r["source_path"], r["status"], r["encoding"]) for r in rows] == [
        ("u16.jsonl#1", "ok", "utf-16"), ("u16.jsonl#3", "error", "utf-16")]
    assert rows[0]["doc_id"] == hashlib.sha256(GOOD_1.encode("utf-8")).hexdigest()[:16]
    assert rows[0]["text"] == "论文 1：视觉自回归建模"


def test_jsonl_truncated_last_line(tmp_path: Path) -> None:
    data = (GOOD_1 + "\n" + '{"text": "论文').encode("utf-8")[:-1]  # cut inside 文
    rows = read_documents("cut.jsonl", str(_write(tmp_path / "cut.jsonl", data)))
    assert [(r["status"], r["notes"]) for r in rows] == [
        ("ok", None),
        ("error", "decode: the last 2 byte(s) are an incomplete utf-8 character (truncated file?), "
                  "replaced by U+FFFD"),
    ]
    assert rows[1]["error"].startswith("cut.jsonl#2: not valid JSON: Unterminated string")


def test_jsonl_line_errors(tmp_path: Path) -> None:
    rows = _jsonl(tmp_path, ["[1, 2]", '"text"', '{"text": null, "body": 5}', '{"text": "  "}', '{"text": "a\\u0000b"}'])
    assert [(r["status"], r["error"]) for r in rows] == [
        ("error", "feed.jsonl#1: a JSON array, not an object"),
        ("error", "feed.jsonl#2: a JSON string, not an object"),
        ("error", "feed.jsonl#3: field 'body' is a JSON number, not a string"),
        ("empty", "feed.jsonl#4 has no text"),
        ("ok", None),
    ]
    # a JSON \u0000 escape is no binary content: the NUL is removed, with a note
    assert (rows[4]["text"], rows[4]["notes"]) == ("ab", "jsonl: removed 1 NUL character (\\u0000 escapes)")


def test_jsonl_nul_escapes_in_a_paper_record_are_removed(tmp_path: Path) -> None:
    line = json.dumps({"paper": "Title With \u0000 NUL", "authors": "Ann Lee, Bo Wu", "venue": "ICML 2025",
                       "abstract": "x\u0000" * 30})
    (row,) = _jsonl(tmp_path, [line])
    assert (row["status"], row["title"]) == ("ok", "Title With NUL")
    assert "\x00" not in row["text"] and "\x00" not in row["paper_record"]
    assert json.loads(row["paper_record"])["title"] == "Title With NUL"
    assert row["notes"].endswith("jsonl: removed 31 NUL characters (\\u0000 escapes)")


@pytest.mark.parametrize(("data", "status"), [(b"", "empty"), (b"\n\n  \n", "empty"), (bytes(range(256)) * 4, "error")])
def test_jsonl_whole_file_rows(tmp_path: Path, data: bytes, status: str) -> None:
    rows = read_documents("f.jsonl", str(_write(tmp_path / "f.jsonl", data)))
    assert len(rows) == 1
    assert (rows[0]["source_path"], rows[0]["status"]) == ("f.jsonl", status)
    assert rows[0]["doc_id"] == hashlib.sha256(data).hexdigest()[:16]


def test_jsonl_in_the_stage_keeps_line_order(tmp_path: Path) -> None:
    lines = [json.dumps({"text": f"第 {i} 篇"}, ensure_ascii=False) for i in range(1, 13)]
    _write(tmp_path / "a.jsonl", ("\n".join(lines) + "\n").encode())
    _write(tmp_path / "b.txt", "正文".encode())
    listing, _ = list_corpus(tmp_path, Config().ingest.extensions)
    docs = STAGE(listing, Config())
    assert docs["source_path"].tolist() == [f"a.jsonl#{i}" for i in range(1, 13)] + ["b.txt"]
    assert sorted(docs["source_path"], key=source_sort_key) == docs["source_path"].tolist()


def test_source_sort_key_of_rows_of_every_many_record_format() -> None:
    assert source_sort_key("dir/a.b.tsv#10") == ("dir/a.b.tsv", 10)
    assert source_sort_key("LIST.TSV#2") == ("LIST.TSV", 2)
    assert source_sort_key("t.csv#3") == ("t.csv", 3)
    assert source_sort_key("f.jsonl#4") == ("f.jsonl", 4)
    assert source_sort_key("awards.yml#12") == ("awards.yml", 12)
    assert source_sort_key("notes#tsv#3") == ("notes#tsv#3", 0)  # no such suffix: a whole file
    assert source_sort_key("page.md") == ("page.md", 0)


def test_parse_jsonl_line() -> None:
    assert parse_jsonl_line('{"article": "x", "date": 20241211}').published == "20241211"
    assert parse_jsonl_line('{"text": "x", "published": "", "date": "2024"}').published is None
    assert parse_jsonl_line('{"text": "x", "title": {"zh": "标题"}}').title == '{"zh": "标题"}'
    assert parse_jsonl_line("[" * 100_000).error == "not valid JSON: nested too deeply"


def test_jsonl_metadata_that_is_not_a_string_is_noted(tmp_path: Path) -> None:
    record = parse_jsonl_line('{"text": "x", "title": ["A", "B"], "url": 42, "date": true}')
    assert (record.title, record.url, record.published) == ('["A", "B"]', "42", None)
    assert record.notes == (
        "jsonl: field 'title' is a JSON array, not a string: title is the value written out",
        "jsonl: field 'url' is a JSON number, not a string: url is the value written out",
        "jsonl: field 'date' is a JSON boolean, not a string: published left out",
    )
    # Python's json reads NaN, Infinity and 1e400 (inf): no value to keep
    odd = parse_jsonl_line('{"text": "x", "title": 1e400, "published": NaN}')
    assert (odd.title, odd.published) == (None, None)
    assert odd.notes == ("jsonl: field 'title' is a JSON number, not a string: title left out",
                         "jsonl: field 'published' is a JSON number, not a string: published left out")
    assert parse_jsonl_line('{"text": "x", "title": "T", "url": "https://a.org"}').notes == ()
    rows = _jsonl(tmp_path, ['{"text": "正文", "url": 7}', '{"text": "正文二", "url": "https://a.org/2"}'])
    assert [(r["url"], r["notes"]) for r in rows] == [
        ("7", "jsonl: field 'url' is a JSON number, not a string: url is the value written out"),
        ("https://a.org/2", None)]


# --- through the whole pipeline ----------------------------------------------------------------


def test_html_and_jsonl_through_the_pipeline(tmp_path: Path, use_embedder) -> None:
    import pandas as pd

    from pipeline.config import load_config
    from pipeline.runner import run

    corpus = tmp_path / "corpus"
    _write(corpus / "page.html", _page("gb2312").encode("gb2312"))
    lines = [json.dumps({"text": f"第 {i} 篇：NeurIPS 2024 最佳论文奖。", "url": f"https://a.org/{i}"},
                        ensure_ascii=False) for i in range(1, 12)]
    _write(corpus / "feed.jsonl", ("\n".join([*lines[:4], BAD_JSON, *lines[4:]]) + "\n").encode())
    _write(corpus / "notes.pdf", b"%PDF-1.4")
    run(corpus, tmp_path / "out", load_config(), embedder=use_embedder, progress=False)

    docs = pd.read_parquet(tmp_path / "out" / "documents.parquet")
    assert docs["source_path"].tolist() == (
        [f"feed.jsonl#{i}" for i in range(1, 13)] + ["notes.pdf", "page.html"])
    by_path = docs.set_index("source_path")
    assert by_path.loc["feed.jsonl#5", "status"] == "error"
    assert by_path.loc["feed.jsonl#5", "error"].startswith("feed.jsonl#5: not valid JSON")
    assert by_path.loc["feed.jsonl#12", "url"] == "https://a.org/11"
    page = by_path.loc["page.html"]
    assert (page["status"], page["encoding"], page["published"]) == ("ok", "gb18030", "2024-12-11")
    assert page["title"] == "NeurIPS 2024 最佳论文揭晓 - 机器之心"
    assert page["raw_text"].startswith("<!DOCTYPE html>") and "## 论文 1：视觉自回归建模" in page["text"]
    assert by_path.loc["notes.pdf", "status"] == "skipped"
    assert pd.isna(by_path.loc["notes.pdf", "title"])


@pytest.mark.parametrize(
    ("line", "text", "error"),
    [
        ('{"text": "lone \\ud800 surrogate"}', "lone \ufffd surrogate", None),
        ('{"text": "pair \\ud83d\\ude00 ok"}', "pair \U0001F600 ok", None),
        ('{"text": "x", "n": ' + "9" * 5000 + "}", None, "not valid JSON: Exceeds the limit"),
    ],
)
def test_jsonl_lines_that_python_parses_but_arrow_cannot_hold(line: str, text: str | None, error: str | None) -> None:
    record = parse_jsonl_line(line)
    assert record.text == text
    assert (record.error or "").startswith(error or "")


def test_html_headings_outside_article_or_main_are_kept(tmp_path: Path) -> None:
    body = "".join(
        f"<h2>{title}</h2><p>arXiv: {arxiv}</p><p>{'This paper studies attention models in depth. ' * 4}</p>"
        for title, arxiv in (("Attention Is All You Need", "1706.03762"),
                             ("BERT: Pre-training of Deep Bidirectional Transformers", "1810.04805"))
    )
    html = f"<html><head><title>Two classics</title></head><body><div>{body}</div></body></html>"
    row = _read(tmp_path, "plain_div.html", html.encode("utf-8"))
    assert "## Attention Is All You Need" in row["text"]
    assert "## BERT: Pre-training of Deep Bidirectional Transformers" in row["text"]


def test_jsonl_text_that_is_html_gives_its_main_content(tmp_path: Path) -> None:
    html = ("<html><body><nav>Home | News | About</nav><article><h2>Attention Is All You Need</h2>"
            "<p>arXiv: 1706.03762</p><p>" + "The transformer replaces recurrence with attention. " * 4
            + "</p></article><footer>© 2025 Example Media. All rights reserved.</footer></body></html>")
    path = tmp_path / "feed.jsonl"
    path.write_text(json.dumps({"text": html, "url": "https://example.org/a"}) + "\n", encoding="utf-8")
    rows = read_documents("feed.jsonl", str(path))
    assert len(rows) == 1
    row = rows[0]
    assert row["status"] == "ok"
    assert "## Attention Is All You Need" in row["text"]
    assert "<p>" not in row["text"] and "Home | News" not in row["text"]
    assert row["notes"].startswith("jsonl: the text field is HTML, so the text is its main content")


def test_html_mojibake_is_repaired_before_extraction(tmp_path: Path) -> None:
    sentence = "本文介绍了一篇关于大语言模型推理的论文。" * 4
    garbled = sentence.encode("utf-8").decode("latin-1")  # UTF-8 read as Latin-1, saved as UTF-8
    html = f"<html><head><title>t</title></head><body><article><p>{garbled}</p></article></body></html>"
    row = _read(tmp_path, "moji.html", html.encode("utf-8"))
    assert row["text"] == sentence
    assert "ftfy: repaired mojibake on 1 line(s) of the HTML" in row["notes"]


def test_a_jsonl_record_whose_text_is_null_says_so() -> None:
    from pipeline.formats import parse_jsonl_line

    assert parse_jsonl_line('{"id": "x", "text": null}').error == "no text: field 'text' is null"
    assert parse_jsonl_line('{"id": "x", "title": "N", "text": null}').paper is not None  # a paper record


@pytest.mark.parametrize(("html", "note"), [
    ("<title>only a title", "html: trafilatura found no main content, so the text is the plain-text rendering of <body>"),
    ("<html><head><title>空</title></head><body></body></html>",
     "html: trafilatura found no main content, so the text is the plain-text rendering of <body>"),
])
def test_html_fallback_notes_hold_no_separator(html: str, note: str) -> None:
    # a row's notes are joined by "; " (pipeline.datadict): no note may contain it
    assert extract_html(html).notes == (note,)
    assert "; " not in note
    assert "<" not in extract_html(html).text


@pytest.mark.parametrize(("html", "text"), [
    ("<p>Researchers proposed a new method for sparse coding.</p>", "Researchers proposed a new method for sparse coding."),
    ("<script>var t = 'Sparse Coding for Parsing';</script>", ""),
])
def test_a_page_of_one_element_is_read_as_text_without_its_markup(html: str, text: str) -> None:
    # trafilatura loads no tree for these: lxml's parse, rendered as plain text (scripts left out)
    assert extract_html(html).text == text


def test_a_page_fragment_keeps_its_markup_and_a_wrapped_line_stays_one_line() -> None:
    """A page saved without ``<html>``/``<body>`` (a site's content ``<div>``) is read by
    trafilatura as a document, its list and bold kept; a line break in the source inside
    a paragraph is a space, as a browser renders it."""
    items = "".join(
        f"<li>\n  <b>\n    Paper Title Number {k}\n  </b>\n  <p>Ana Lima, Bo Chen,\n    Carla Diaz, Dan Wu</p>\n</li>"
        for k in range(4))
    text = extract_html(f"\n<div class='text'>\n<h1>Best Paper Awards</h1>\n<ul>{items}</ul>\n</div>\n").text
    assert re.search(r"^-\s+\*\*Paper Title Number 2\*\* Ana Lima, Bo Chen, Carla Diaz, Dan Wu$", text, re.M)


def test_a_pre_block_keeps_its_line_breaks_and_a_paragraph_beside_it_is_collapsed() -> None:
    """Whitespace is collapsed outside ``<pre>`` only: a code block's lines and indentation stay,
    a paragraph's source line break after it is a space (the elements are told apart by
    identity, not by the id() of lxml's short-lived proxies, which the next proxy may reuse)."""
    body = ("<h2>Code listing</h2><p>" + "Some paragraph text long enough to be kept as content. " * 3
            + "</p><pre>line one\n    indented two\nline three</pre><p>More text here\nwrapped across lines.</p>")
    for page in (f"<div>{body}</div>", f"<html><body><article>{body}</article></body></html>"):
        text = extract_html(page).text
        assert "line one\n    indented two\nline three" in text
        assert "More text here wrapped across lines." in text or "More text" not in text


def test_html_table_cell_line_breaks_stay_line_breaks() -> None:
    """A ``<br>`` inside a table cell is written ``<br>`` (GitHub Markdown's line break in a
    cell), so a cell's entries do not run together; elsewhere it stays a line end."""
    rows = "".join(
        f"<tr><td>Paper {k}</td><td>Ana Lima, Google<br/>Bo Chen, EPFL</td></tr>" for k in range(3)
    )
    page = (f"<html><body><article><h1>Results</h1><p>{'Body text of the page. ' * 20}</p>"
            f"<table><tr><th>Title</th><th>Authors</th></tr>{rows}</table></article></body></html>")
    text = extract_html(page).text
    assert "| Paper 0 | Ana Lima, Google <br>Bo Chen, EPFL |" in text


def test_a_table_that_lays_a_page_out_is_read_as_its_blocks_and_a_data_table_stays_a_table() -> None:
    """A table whose cells hold a heading or another table (an old conference page's layout) is
    unwrapped: each paper is its own paragraph, not one cell of a Markdown row holding them all.
    A table with header cells is data and stays a Markdown table."""
    paper = ('<div><p><span>{title}</span><br>Ann Lee (CMU)<br>Bo Chen (ETH Zurich)<br>'
             '<span>Thursday, Oral session 3B</span></p></div>')
    page = ('<html><body><table width="100%"><tr><td colspan="3"><h2>Awards of the Year</h2></td></tr>'
            '<tr><td colspan="3"><h3>Honorable Mentions</h3>'
            + paper.format(title="Hierarchical Descent for Deformation Estimation")
            + paper.format(title="Piecewise Rigid Scene Flow Estimation")
            + '</td></tr></table></body></html>')
    text = extract_html(page).text
    assert "|" not in text
    assert "\n\nHierarchical Descent for Deformation Estimation\n" in "\n\n" + text
    assert "\n\nPiecewise Rigid Scene Flow Estimation\n" in text
    def body(topic: str) -> str:
        return f"<p>{f'This paper proposes a method for {topic} and evaluates it on many benchmarks. ' * 4}</p>"

    headed = ("<html><body><table><tr><td><h2>Denoising Diffusion Probabilistic Models</h2>" + body("diffusion")
              + "</td></tr><tr><td><h2>Neural Radiance Fields for View Synthesis</h2>" + body("view synthesis")
              + "</td></tr></table></body></html>")
    assert "## Denoising Diffusion Probabilistic Models\n" in extract_html(headed).text  # a cell's heading stays one
    assert "## Neural Radiance Fields for View Synthesis\n" in extract_html(headed).text
    data = ("<html><body><article><p>" + "Body text of the page. " * 20 + "</p><table><tr><th>Title</th>"
            "<th>Venue</th></tr><tr><td>Sparse Codes</td><td>ICML 2024</td></tr></table></article></body></html>")
    assert "| Sparse Codes | ICML 2024 |" in extract_html(data).text


def test_a_section_among_paragraphs_is_read_like_them() -> None:
    # WeChat article bodies wrap lines in <section>; trafilatura dropped them whatever they held
    page = ('<html><head><meta charset="utf-8"><title>T</title></head><body><div id="js_content">'
            "<p>论文标题：Efficient Sampling for Diffusion Models</p><p>该论文被 ICLR 2025 接收。</p>"
            "<section><span>作者：张三、李四</span></section>"
            "<section><span>论文链接：https://arxiv.org/abs/2502.12345</span></section>"
            "<p>扩散模型被广泛用于图像生成，但推理需要数百步迭代。团队重新设计了求解器，将函数评估次数降低了一个数量级。</p>"
            "<p>实验表明，十步即可达到以往百步的质量。</p></div></body></html>")
    text = extract_html(page).text
    assert "作者：张三、李四" in text and "论文链接：https://arxiv.org/abs/2502.12345" in text


def test_a_byte_order_mark_opening_a_later_jsonl_line_is_skipped_with_a_note() -> None:
    # two feeds joined with `cat`: the second file's BOM now opens a line in the middle
    record = parse_jsonl_line('\ufeff{"title": "Sparse Codes", "text": "We study sparse codes for parsing."}')
    assert (record.error, record.title, record.text) == (None, "Sparse Codes", "We study sparse codes for parsing.")
    assert record.notes == ("jsonl: a byte-order mark opened the line (files joined?)",)


def test_a_key_given_twice_in_a_jsonl_object_keeps_its_last_value_with_a_note() -> None:
    # json keeps the last of two "title"s: the first title was gone with no word
    record = parse_jsonl_line('{"title": "Graph Widgets Under Noise", "title": "Sparse Codes for Widget Parsing", '
                              '"authors": "Pat Kay", "extra": {"a": 1, "a": 2}}')
    assert record.error is None and json.loads(record.paper)["title"] == "Sparse Codes for Widget Parsing"
    assert record.notes == ("jsonl: an object names 'a', 'title' more than once: the last value is read",)
    assert parse_jsonl_line('{"title": "Sparse Codes for Widget Parsing", "a": {"title": 1}}').notes == ()


REAL_DEV = Path(__file__).parent / "fixtures" / "real" / "dev"


def test_a_page_whose_headings_trafilatura_drops_is_rendered_from_the_element_holding_them() -> None:
    """A card layout (each paper's ``<h3>`` in a block classed ``…-header``, which trafilatura
    drops as boilerplate) kept 1 of 24 headings in trafilatura's main content: the element
    holding the headings is rendered as Markdown instead, with a note (real page:
    h22-grandai-weekly)."""
    page = extract_html((REAL_DEV / "h22-grandai-weekly" / "landmark-papers-llms-2017-2021.html").read_text(encoding="utf-8"))
    assert "### Attention Is All You Need" in page.text
    assert "### BERT: Pre-training of Deep Bidirectional Transformers for Language Understanding" in page.text
    assert page.notes == ("html: trafilatura's main content left out 23 of the page's 24 headings, so the text "
                          "is the Markdown rendering of the element that holds them",)


def test_headings_of_a_menu_a_sidebar_and_a_footer_do_not_make_the_page_lose_its_structure() -> None:
    """A blog post with two headings beside a menu, sidebar widgets ("Recent Posts", "Archives")
    and a footer, each with headings trafilatura rightly leaves out: the main content stands, so
    no menu or footer text comes into the page's text."""
    widgets = "".join(f"<section><h3>{name}</h3><ul><li><a href='/{k}'>Item {k}</a></li></ul></section>"
                      for k, name in enumerate(["Recent Posts", "Categories", "Archives", "Subscribe"]))
    page = ("<html><head><title>Reading notes</title></head><body>"
            "<header><nav><h4>Research</h4><a href='/r'>NLP</a><h4>About us</h4><a href='/a'>Team</a></nav></header>"
            "<main><article><h1>Reading notes: Sparse Codes for Widgets</h1>"
            f"<p>{'We read the paper on sparse codes for widgets by Ana Lima and Bo Chen. ' * 4}</p>"
            f"<h2>Background</h2><p>{'Earlier widgets used dense codes and trained slowly. ' * 4}</p></article></main>"
            f"<aside class='sidebar'>{widgets}</aside>"
            "<footer><h4>Contact</h4><p>mail@example.com</p><h4>Legal</h4><p>Privacy policy.</p></footer></body></html>")
    result = extract_html(page)
    assert result.notes == ()
    assert "## Background" in result.text
    assert "Recent Posts" not in result.text and "Privacy policy" not in result.text


# --- YAML record files -----------------------------------------------------------------------------

AWARDS_YAML = """\
- venue: NeurIPS
  year: 2023
  date: 2023-12-10
  awards:
  - award: Outstanding Main Track Paper
    title: Privacy Auditing with One (1) Training Run
    author: Thomas Steinke, Milad Nasr, Matthew Jagielski
    link: https://arxiv.org/abs/2305.08846
  - award: Test of Time
    title: 'Distributed Representations of Words and Phrases and their
      Compositionality'
    author: Tomas Mikolov, Ilya Sutskever
- venue: CoRL
  year: 2023
  awards:
  - award: Best Paper
    title: Robots That Ask For Help
    authors:
    - {name: Allen Z. Ren, affiliation: Princeton University}
"""


def test_a_yaml_list_of_award_records_is_a_paper_each_with_the_venue_and_year_of_its_group(tmp_path: Path) -> None:
    (tmp_path / "awards.yml").write_text(AWARDS_YAML, encoding="utf-8")
    (tmp_path / "_config.yaml").write_text("title: My lab\ntheme: minima\nplugins: [jekyll-feed]\n")
    (tmp_path / "broken.yml").write_text("papers: [a\n")
    listing, _ = list_corpus(tmp_path, Config().ingest.extensions)
    docs = STAGE(listing, Config()).set_index("source_path")
    assert docs.index.tolist() == ["_config.yaml", "awards.yml#1", "awards.yml#2", "awards.yml#3", "broken.yml"]
    assert docs.loc["_config.yaml", "status"] == "empty"
    assert docs.loc["_config.yaml", "error"] == "_config.yaml holds no list of records (mappings): it has no text"
    assert docs.loc["broken.yml", "status"] == "error"
    assert docs.loc["broken.yml", "error"].startswith("could not read broken.yml as YAML: ParserError:")
    papers = {p: json.loads(docs.loc[p, "paper_record"]) for p in ("awards.yml#1", "awards.yml#2", "awards.yml#3")}
    first, second, third = papers.values()
    assert (first["title"], first["venue"], first["year"], first["award_raw"]) == (
        "Privacy Auditing with One (1) Training Run", "NeurIPS", 2023, "Outstanding Main Track Paper")
    assert first["authors"] == ["Thomas Steinke", "Milad Nasr", "Matthew Jagielski"]
    assert (second["title"], second["year"]) == (
        "Distributed Representations of Words and Phrases and their Compositionality", 2023)
    assert (third["title"], third["venue"], third["authors"]) == ("Robots That Ask For Help", "CoRL", ["Allen Z. Ren"])
    assert docs.loc["awards.yml#1", "status"] == "ok" and docs.loc["awards.yml#1", "title"] == first["title"]


def test_nested_yaml_aliases_are_read_once_not_exponentially() -> None:
    """A "billion laughs" of aliased lists of mappings: each list is read once (20 levels of two
    aliases each would be a million visits)."""
    import yaml

    levels = "abcdefghijklmnopqrstu"
    bomb = "a: &a [{title: A paper on things, authors: Ann Lee and Bo Wu}]\n" + "".join(
        f"{c}: &{c} [{{k: *{p}, j: *{p}}}]\n" for p, c in zip(levels, levels[1:], strict=False))
    from pipeline.formats import yaml_records

    assert [r["title"] for r in yaml_records(yaml.safe_load(bomb))] == ["A paper on things"]


def test_aliases_of_aliases_in_a_records_field_are_an_error_row_not_an_exponential_expansion(tmp_path: Path) -> None:
    """A "billion laughs" inside one record's field (a list of scalars, which the reader does not
    skip as it skips a list of records reached again): 5 levels of 10 aliases are 100,000 values
    from a 300-character file; 9 levels took 400 s and 19 GB before a run timed the file out."""
    levels = "abcdef"
    bomb = "a: &a [x, x, x, x, x, x, x, x, x, x]\n" + "".join(
        f"{c}: &{c} [{', '.join([f'*{p}'] * 10)}]\n" for p, c in zip(levels, levels[1:], strict=False))
    path = tmp_path / "laughs.yml"
    path.write_text(bomb + "papers:\n  - title: A paper on things\n    abstract: What it found.\n    data: *f\n")
    (row,) = read_documents("laughs.yml", str(path))
    assert (row["source_path"], row["status"], row["_error_type"]) == ("laughs.yml", "error", "ValueError")
    assert row["error"].startswith("could not read laughs.yml as YAML: ValueError: its aliases expand to more values")
    # an alias used a few times is read as written out
    path.write_text("common: &who Ann Lee and Bo Wu\npapers:\n" + "".join(
        f"  - {{title: Paper number {k}, authors: *who}}\n" for k in range(3)))
    assert [r["status"] for r in read_documents("few.yml", str(path))] == ["ok"] * 3


def test_a_yaml_list_of_named_settings_is_no_paper(tmp_path: Path) -> None:
    """A site's navigation ("- title: Home / url: /") and a workflow's steps ("- name: Run tests /
    run: pytest") are lists of named mappings: each is an ``empty`` row that says why, not a paper
    called "Home"; a name with any field of a paper (here an inherited venue) is still one."""
    path = tmp_path / "site.yml"
    path.write_text("title: My lab\nnavigation:\n  - title: Home\n    url: /\n  - title: Publications\n"
                    "    url: /publications/\nsteps:\n  - name: Run tests\n    run: pytest -q\n")
    rows = read_documents("site.yml", str(path))
    assert [(r["source_path"], r["status"], r["_error_type"]) for r in rows] == [
        ("site.yml#1", "empty", "EmptyDocument"), ("site.yml#2", "empty", "EmptyDocument"),
        ("site.yml#3", "empty", "EmptyDocument")]
    assert rows[0]["error"] == ("site.yml#1: a name ('Home') and no field of a paper (authors, venue, year, award, "
                                "abstract, a link): a site's or a tool's settings")
    path.write_text("venue: ICML\npapers:\n  - title: A Paper On Things\n")
    (row,) = read_documents("papers.yml", str(path))
    assert (row["status"], row["title"]) == ("ok", "A Paper On Things")


def test_a_yaml_key_given_twice_keeps_its_last_value_with_a_note(tmp_path: Path) -> None:
    path = tmp_path / "p.yml"
    path.write_text("- title: A Paper On Things\n  title: Another Paper\n  authors: Ann Lee\n"
                    "- {title: Third Paper, year: 2024}\n")
    rows = read_documents("p.yml", str(path))
    note = "yaml: a mapping of this file names 'title' more than once: the last value is read"
    assert [(r["status"], r["title"], r["notes"]) for r in rows] == [
        ("ok", "Another Paper", note), ("ok", "Third Paper", note)]
    # a merge key (<<) is no repeat
    path.write_text("- &base {venue: ICML}\n- {<<: *base, title: Third Paper, year: 2024}\n")
    assert [(r["status"], r["title"], r["notes"]) for r in read_documents("q.yml", str(path))][1] == (
        "ok", "Third Paper", None)


def test_a_yaml_mapping_with_no_title_or_text_field_is_an_empty_row_that_says_why(tmp_path: Path) -> None:
    """Social links or a theme's colours in a list ("- {icon: github, url: …}") are no paper and no
    failure: an ``empty`` row, so that a site's data folder does not fail the run."""
    path = tmp_path / "social.yml"
    path.write_text("- {icon: github, url: 'https://github.com/lab'}\n- {Paper Title: A Paper On Things, year: 2024}\n")
    rows = read_documents("social.yml", str(path))
    assert [(r["status"], r.get("_error_type"), r["title"]) for r in rows] == [
        ("empty", "EmptyDocument", None), ("ok", None, "A Paper On Things")]
    assert rows[0]["error"] == ("social.yml#1: a mapping with no title or text field (its keys: 'icon', 'url'): "
                                "not a paper, a site's or a tool's settings")


def test_yaml_records_grouped_by_year_with_private_keys_and_doi_ids(tmp_path: Path) -> None:
    """A site's publication data: papers grouped under a year ("- title: '2025' / items: [...]":
    a title without a letter labels a group), a generator's private keys ("_title",
    "_first_author"), a DOI as the only other field, and venues under "conf"."""
    path = tmp_path / "pubs.yml"
    path.write_text("- title: '2025'\n  items:\n    - title: A Paper On Sparse Widgets\n      authors: Ann Lee and Bo Wu\n"
                    "      conf: IEEE International Conference on Robotics and Automation (ICRA)\n"
                    "- id: doi:10.1145/3539618.3591874\n  _title: Understanding User Immersion in Short Videos\n"
                    "- id: doi:10.1145/3547333\n")
    rows = read_documents("pubs.yml", str(path))
    assert [(r["status"], r["title"]) for r in rows] == [
        ("ok", "A Paper On Sparse Widgets"), ("ok", "Understanding User Immersion in Short Videos"), ("empty", None)]
    first = json.loads(rows[0]["paper_record"])
    assert (first["authors"], first["venue"]) == (["Ann Lee", "Bo Wu"], "ICRA")


def test_yaml_binary_and_set_values_are_their_text_and_sorted_members(tmp_path: Path) -> None:
    """A ``!!binary`` title is the text it encodes and a ``!!set`` of authors its members in a
    fixed order; they were written as Python's ``b'…'`` and ``{…}`` (a set's order varying by run)."""
    path = tmp_path / "typed.yaml"
    path.write_text("- title: !!binary U3BhcnNlIENvZGVzIGZvciBXaWRnZXQgUGFyc2luZw==\n"
                    "  authors: !!set {Bo Chen, Ann Lee}\n")
    (row,) = read_documents("typed.yaml", str(path))
    assert (row["status"], row["title"]) == ("ok", "Sparse Codes for Widget Parsing")
    assert json.loads(row["raw_text"])["authors"] == ["Ann Lee", "Bo Chen"]
