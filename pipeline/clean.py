"""Clean: find the spans of a document that are not article content, with a reason each.

Nothing is deleted: clean adds a ``dropped`` column, a list of spans ``{char_start, char_end,
reason, text}`` (offsets into ``documents.text``) that later stages skip and the writer saves to
``dropped.parquet``. Decisions rest on structure, topic fit
(:func:`pipeline.textutil.content_profile`) and the trade's generic vocabulary (zh-Hans, zh-Hant,
English), never on site names; boilerplate is a short standalone line.

Rules, in order: front matter, HTML comments and LLM chatter; line boilerplate; related-article
lists; edge menus; unrelated leading news; bylines; unrelated trailing news (docs/cleaning.md; fit
thresholds' calibration: bench/README.md). Spans are trimmed, sorted and never overlap.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable

import pandas as pd

from .chatter import opens_reply, think_blocks
from .config import Config
from .credits import parse_credit_line
from .fields import find_award_label, find_venue_years, normalize_award, parse_key_value
from .identifiers import find_arxiv_ids, url_kind
from .stage import Stage
from .textutil import (
    HTML_BREAK,
    MD_LINK,
    URL_ONLY,
    Line,
    blocks,
    cjk_count,
    content_profile,
    cosine,
    plain,
    span_coverage,
    split_lines,
    text_units,
    trim_span,
)

#: Units shorter than this (characters, stripped) are not scored for topic fit on their own: too
#: few features for a stable cosine (see ``SHORT_MIN_FEATURES`` for the exception).
MIN_SCORED_CHARS = 30
#: The last paragraph is dropped as glued news by topic fit alone only from this length on, or
#: when cut off mid-sentence: a short closing paragraph often shares few words with its article.
MIN_GLUED_CHARS = 50
#: How many lines (not dropped by the line rules) at the start of a document can hold a byline.
BYLINE_WINDOW = 5
#: Longest share, follow and newsletter prompt (text units); the longest seen is about 26.
PROMPT_MAX_UNITS = 30
#: Longest line in which a call-to-action phrase anywhere (扫码, 点赞, 三连) makes a prompt.
PROMPT_LOOSE_MAX_UNITS = 20
#: Longest copyright / licence footer and caption (text units): a footer may hold two short sentences.
COPYRIGHT_MAX_UNITS = 40
CAPTION_MAX_UNITS = 40
#: Longest repost clause (text units), and the shortest rest of the line kept as a sentence.
REPOST_MAX_UNITS = 40
REPOST_REST_MIN_UNITS = 10
#: A navigation line: at least this many items, each at most ``NAV_ITEM_MAX_UNITS``, at most
#: ``NAV_MAX_UNITS`` in all.
NAV_MIN_ITEMS = 3
NAV_ITEM_MAX_UNITS = 4
NAV_MAX_UNITS = 30
#: A menu run at an edge: at least this many lines of at most ``MENU_LINE_MAX_UNITS``, at least
#: ``MENU_WORD_MIN_SHARE`` of them menu words.
MENU_RUN_MIN_LINES = 3
MENU_LINE_MAX_UNITS = 4
MENU_WORD_MIN_SHARE = 0.5
#: The edges of a document, in non-blank lines: where licence lines are footers and separator lines
#: without a menu word are menus (mid-document they are more likely tables or lists).
EDGE_LINES = 8
#: Longest YAML front matter, in lines (Jekyll/Hugo front matter: a few to a few dozen keys).
FRONT_MATTER_MAX_LINES = 200
#: A line of a YAML block: ``key: value``, a list item, or an indented continuation.
_YAML_LINE = re.compile(r"[\w\-\"']+[ \t]*:(?:[ \t]|$)|[ \t]*-[ \t]|[ \t]+\S")

#: Front-matter keys whose value is the page's headline (Jekyll/Hugo).
_FRONT_MATTER_HEADLINE = re.compile(r"(?m)^(title|subtitle|description|tagline|excerpt|summary)[ \t]*:[ \t]*(.+?)[ \t]*$")


#: Front matter keys that only a paper's metadata has (a blog post's ``author`` is its writer).
_FRONT_MATTER_PAPER_KEY = re.compile(
    r"(?mi)^[ \t]*(?:authors|venue|conference|arxiv(?:_id)?|doi|paper(?:_url)?|pdf)[ \t]*:(?:[ \t]*\S|[ \t]*\n[ \t]*- )")


def front_matter_names_a_paper(dropped: list[dict]) -> bool:
    """Whether the YAML front matter is a paper's metadata (:data:`_FRONT_MATTER_PAPER_KEY`)."""
    block = next((d["text"] for d in dropped if d["reason"] == "front_matter"), "")
    return bool(_FRONT_MATTER_HEADLINE.search(block) and _FRONT_MATTER_PAPER_KEY.search(block))


def front_matter_headline(dropped: list[dict]) -> str:
    """The headline values of the YAML front matter in ``dropped`` (:func:`find_dropped`'s list),
    quotes removed, one a line, ``title`` first (a ``description`` or ``summary`` above it is no
    title); ``""`` when none."""
    block = next((d["text"] for d in dropped if d["reason"] == "front_matter"), "")
    found = sorted(_FRONT_MATTER_HEADLINE.finditer(block), key=lambda m: m.group(1) != "title")
    values = (m.group(2).strip("'\"").strip() for m in found)
    return "\n".join(v for v in values if v)


#: An HTML comment that opens a line and is closed (an unclosed "<!--" is text).
_HTML_COMMENT = re.compile(r"^[ \t]*<!--.*?-->", re.S | re.M)
#: Longest opening sentence of a chat reply, in characters.
CHATTER_MAX_CHARS = 300
#: Items of a bullet-less related list at the end: at most this long, at least
#: ``RELATED_MIN_PLAIN_ITEMS`` of them.
RELATED_ITEM_MAX_UNITS = 40
RELATED_MIN_PLAIN_ITEMS = 2
#: A short unit is clearly off-topic with at least this many distinct topic features and a fit
#: of at most ``SHORT_MAX_FIT``.
SHORT_MIN_FEATURES = 3
SHORT_MAX_FIT = 0.02
#: Most units the unrelated scans look in from either end (a glued item is a few paragraphs).
MAX_GLUED_UNITS = 12
#: Fewest topic features of the reference a unit is judged against.
MIN_REFERENCE_FEATURES = 20
#: A line at least this long without final punctuation, followed in its block by another line,
#: is hard-wrapped prose.
WRAP_MIN_CHARS = 50
#: Longest title (text units): a line this short without sentence punctuation is a heading,
#: never scored on its own.
TITLE_MAX_UNITS = 30
#: Longest award header (characters) protected from the unrelated scans.
AWARD_HEADER_MAX_CHARS = 40

_CREDIT_WORDS = (
    "报道|報導|報道|编辑部|編輯部|编辑|編輯|记者|記者|撰文|整理|出品|编译|編譯|翻译|翻譯|作者|来源|來源"
)
#: Longest name before a closing credit word (机器之心报道), so a headline ending in 报道 is not a byline.
BYLINE_NAME_MAX_CHARS = 12
_BYLINE_END = re.compile(rf"^[^、，,\d]{{1,{BYLINE_NAME_MAX_CHARS}}}(?:{_CREDIT_WORDS})$")
_BYLINE_START = re.compile(
    rf"^(?:{_CREDIT_WORDS}|文|图|圖|By|Author|Authors|Reported by|Written by|Words|Text"
    r"|Staff [Ww]riter|Staff [Rr]eporter|Contributing [Ww]riter|Contributing [Ee]ditor|Correspondent|Reporter)\s*[：:|丨/／｜]\s*\S"
    r"|^By\s+[A-Z][\w.\-]+(?:\s+[A-Z][\w.\-]+){0,3}(?:\s*[|｜·,]\s*[\w ,]+)?$"
    r"|^(?:Posted|Written|Reported|Edited|Words|Text|Story) by\s+\S"
    r"|^(?:本报讯|本報訊|本刊讯|本刊訊|本台讯|本台訊|本网讯|本網訊)"
    r"|^[（(](?:记者|記者|通讯员|通訊員|特约记者|特約記者)\s*[^）)]{1,20}[）)]$"
)
_EDITOR_CREDIT = re.compile(
    r"^(?:(?:责任编辑|責任編輯|编辑|編輯|校对|校對|审校|審校|审核|審核|Editor)\s*[：:|丨｜]|Edited by\s)\s*\S.{0,30}$"
)
_SENTENCE_PUNCT = re.compile(r"[。！？!?；;，,]")
_SENTENCE_FINAL = re.compile(r"[。！？!?.…~～」』”\"'’）)】\]》>*_]$")
#: Leading decoration before a trade phrase: bullets, arrows, brackets, emoji, Markdown.
_DECOR = re.compile(r"^(?:[^\w©Ⓒ(]|\((?![cC]\)))+")

# Labels that open a list of links to other articles (zh-Hans, zh-Hant, en).
_RELATED_LABEL = re.compile(
    r"^(?:相关文章|相關文章|相关阅读|相關閱讀|相关推荐|相關推薦|推荐阅读|推薦閱讀|延伸阅读|延伸閱讀|"
    r"往期回顾|往期回顧|往期推荐|往期推薦|往期精选|往期精選|往期文章|往期阅读|往期閱讀|"
    r"更多阅读|更多閱讀|更多文章|更多推荐|更多推薦|精彩推荐|精彩推薦|精彩回顾|精彩回顧|热门文章|熱門文章|"
    r"热门推荐|熱門推薦|猜你喜欢|猜你喜歡|近期文章|最新文章|相关列表|相關列表|"
    r"Related(?: (?:posts|articles|stories|reading|content|links|lists|repositories))?|Recommended(?: reading| posts| articles)?|"
    r"Further reading|Read more|Read next|More (?:stories|posts|articles|reading|from us)|Popular posts|"
    r"Recent posts|Latest posts|Most read|See also|You (?:may|might) also like)\s*[：:]?$",
    re.IGNORECASE,
)
_LIST_OR_LINK = re.compile(
    r"^(?:[-*+•·▪●◆◇■□○◎★☆▶►▷→》《]|\d+\s*[.)、．]|[（(]\d+[）)]|!?\[)|https?://|\]\("
)

_REPOST = re.compile(
    r"^(?:(?:文章|本文|内容|內容|原文)(?:来源于|來源於|来自|來自|来源|來源|出自)"
    r"|(?:来源于|來源於|来自|來自)(?=\s*(?:公众号|公眾號|微信|微博|网站|網站|[《「『【“\"]))"
    r"|(?:本文|文章|原文)?(?:经|經)?(?:授权|授權)?(?:转载自|轉載自|转自|轉自|转载于|轉載於|摘自|选自|選自"
    r"|原载于|原載於|首发于|首發於|首发自|首發自|编译自|編譯自)"
    r"|(?:本文|文章)(?:经|經)(?:授权|授權)(?:转载|轉載)"
    r"|(?:文章|内容|內容|原文|图文|圖文)?(?:来源|來源|出处|出處)\s*[：:|丨｜/／]"
    r"|Originally\s+(?:published|posted|appeared)\b"
    r"|(?:This|The)\s+(?:article|post|story|piece|essay|interview|blog\s+post)\s+(?:was\s+|has\s+been\s+)?"
    r"(?:first\s+|originally\s+)?(?:appeared|appears|published|posted|ran)\s+(?:on|in|at)\b"
    r"|(?:Reposted|Republished|Reprinted|Cross-?posted|Syndicated)\s+(?:from|with)\b"
    r"|Via\s*:)",
    re.IGNORECASE,
)
_CLAUSE_END = re.compile(r"[。！？!?；;]|\.(?=\s)|】|\](?!\()")

_SHARE = re.compile(
    r"^(?:扫码|掃碼|(?:扫描|掃描|识别|識別)(?:下方|上方|左侧|右侧|文末|左側|右側|下圖|下图)?(?:二维码|二維碼)|扫一扫|掃一掃|长按|長按|识别二维码|識別二維碼|识别图中|識別圖中"
    r"|分享到|分享至|分享给|分享給|一键分享|一鍵分享"
    r"|(?:点击|點擊|点我|點我)(?:上方|下方|蓝字|藍字|关注|關注|右上角|左下角|阅读原文|閱讀原文|这里关注|這裡關注|分享|在看|订阅|訂閱)"
    r"|关注我们|關注我們|关注公众号|關注公眾號|欢迎关注|歡迎關注|欢迎分享|歡迎分享|欢迎转发|歡迎轉發|记得关注|記得關注"
    r"|加个?关注|加個?關注|点赞|點讚|點贊|按讚|点个在看|點個在看"
    r"|(?:喜欢|喜歡|觉得|覺得)(?:这篇|這篇|本篇|本)?(?:文章|本文|内容|內容)"
    r"|Follow\s+us\b|Like\s+us\s+on\b|Share\s+(?:this|on|via|to)\b|Share\s*[:：]|Share$|Tweet\s+this\b"
    r"|Scan\s+(?:the\s+|our\s+)?QR\b|Find\s+us\s+on\b|Connect\s+with\s+us\b|Join\s+us\s+on\b)",
    re.IGNORECASE,
)
#: Call-to-action phrases that are prompts anywhere in a very short line (点赞、在看、分享三连).
_SHARE_ANYWHERE = re.compile(
    r"扫码|掃碼|点赞|點讚|點贊|按讚|点个在看|點個在看|一键三连|一鍵三連|三连|三連|关注公众号|關注公眾號"
    r"|关注我们|關注我們|追踪我们|追蹤我們|\bfollow\s+us\b",
    re.IGNORECASE,
)
#: An invitation to a readers' community (交流群, 知识星球, 加小编微信) in a line of at most
#: ``COMMUNITY_MAX_UNITS``; longer words containing them (群体, 增加) are not invitations.
_COMMUNITY = re.compile(
    r"(?:交流|讨论|討論|粉丝|粉絲)群(?![体體落众眾])|[进進入]群(?:交流|讨论|討論)|知识星球|知識星球"
    r"|(?<![增更参參附施追叠疊外强強])(?:加|添加)(?:小编|小編)?微信")
COMMUNITY_MAX_UNITS = 60
#: A short line that both asks to subscribe and names what (a newsletter, the inbox...).
_NEWSLETTER_ANYWHERE = re.compile(
    r"(?=.*\b(?:subscribe|sign\s+up)\b)(?=.*\b(?:newsletter|inbox|e-?mail|digest|weekly)\b)"
    r"|(?:订阅|訂閱).{0,8}(?:周报|週報|周刊|週刊|电子报|電子報|简报|簡報|邮件|郵件)",
    re.IGNORECASE,
)
# Its parts, for :func:`_newsletter_anywhere` (the lookaheads are quadratic in the line's length).
_SUBSCRIBE_WORD = re.compile(r"\b(?:subscribe|sign\s+up)\b", re.IGNORECASE)
_NEWSLETTER_WORD = re.compile(r"\b(?:newsletter|inbox|e-?mail|digest|weekly)\b", re.IGNORECASE)
_NEWSLETTER_ZH = re.compile(r"(?:订阅|訂閱).{0,8}(?:周报|週報|周刊|週刊|电子报|電子報|简报|簡報|邮件|郵件)", re.IGNORECASE)


def _newsletter_anywhere(s: str) -> bool:
    """Whether :data:`_NEWSLETTER_ANYWHERE` matches ``s``, in linear time."""
    if "\n" in s:
        return _NEWSLETTER_ANYWHERE.search(s) is not None
    return bool(_SUBSCRIBE_WORD.search(s) and _NEWSLETTER_WORD.search(s)) or _NEWSLETTER_ZH.search(s) is not None


_NEWSLETTER = re.compile(
    r"^(?:(?:欢迎|歡迎|立即|马上|馬上|免费|免費|点击|點擊)?(?:订阅|訂閱)"
    r"(?:我们|我們|本|周报|週報|周刊|週刊|日报|日報|电子报|電子報|邮件|郵件|简报|簡報|频道|頻道|newsletter|$)"
    r"|Subscribe(?:\s+(?:to|for|now|today|here|free)\b|\s*[:!.]?$)"
    r"|Sign\s+up\s+(?:for|to|now|today|here)\b|Sign\s+up\s*[:!.]?$"
    r"|Get\s+(?:our|the)\s+(?:\w+\s+){0,2}newsletter|Join\s+(?:our|the)\s+(?:\w+\s+){0,2}(?:newsletter|mailing\s+list)"
    r"|Enter\s+your\s+email|Never\s+miss\s+(?:a|an|the|our)\b|Don['’]t\s+miss\s+(?:a|an|the|our)\b)",
    re.IGNORECASE,
)
_COPYRIGHT = re.compile(
    r"^(?:©|Ⓒ|\([cC]\)\s*\d{4}|Copyright\s*(?:©|\([cC]\)|\d{4})"
    r"|版权所有|版權所有|版权声明|版權聲明|版权归|版權歸|版权说明|版權說明|著作权归|著作權歸|本文版权|本文版權|本文著作权|本文著作權"
    r"|(?:本文|文章)?(?:转载|轉載)(?:请|請|须|須|需)|如需(?:转载|轉載)|(?:未经|未經)(?:授权|授權|许可|許可|允许|允許|同意)"
    r"|(?:请勿|請勿)(?:转载|轉載)"
    r"|(?:本站|本网|本網|本刊|本号|本號|本平台|本报|本報)(?:所有)?(?:内容|內容|文章|作品)?(?:版权|版權|著作权|著作權)"
    r"|(?:本文|文章)(?:仅|僅)代表(?:作者)?(?:个人|個人)?(?:观点|觀點)"
    r"|(?:The\s+)?(?:views|opinions)\s+expressed\b|免责声明|免責聲明|Disclaimer\s*[:：]"
    r"|(?:禁止|严禁|嚴禁|谢绝|謝絕|拒绝|拒絕)(?:转载|轉載)|如有侵权|如有侵權"
    r"|本文(?:系|为|為|係).{0,20}?(?:原创|原創)"
    r"|All\s+rights\s+reserved|Reproduction\s+(?:in\s+whole|without)|No\s+part\s+of\s+this)",
    re.IGNORECASE,
)
_RIGHTS_RESERVED = re.compile(
    r"All\s+rights\s+reserved\W*$|(?:版权|版權)(?:所有|(?:归|歸).{0,12}所有)\W*$"
    r"|(?:禁止|严禁|嚴禁|请勿|請勿)(?:转载|轉載)\W*$|(?:转载|轉載)(?:请|請)(?:注明|註明)\w{0,6}\W*$",
    re.IGNORECASE,
)
_LICENCE = re.compile(
    r"^(?:(?:This|The)\s+(?:work|article|post|page|content|text|blog)\s+is\s+)?"
    r"(?:licensed|released|published|distributed|available)\s+under\b"
    r"|^(?:License|Licence)\s*[：:]|^CC\s+BY\b|^Creative\s+Commons\b"
    r"|^本(?:文|作品|站)(?:采用|採用|遵循|使用|基于|基於).{0,30}(?:许可|許可|协议|協議|授权|授權)"
    r"|^(?:知识共享|知識共享|创作共用|創作共用|創用)|\bCC[\s-]BY\b|Creative\s+Commons",
    re.IGNORECASE,
)
_CAPTION = re.compile(
    r"^(?:(?:图片|圖片|图像|圖像|照片|配图|配圖|题图|題圖|头图|頭圖|封面图?|封面圖|图源|圖源)"
    r"(?:来源|來源|出处|出處|提供|版权|版權|来自|來自)?\s*[：:|丨｜/／]"
    r"|(?:图|圖)\s*[：:／/|｜丨](?!\s*文)"
    r"|(?:图|圖|Figure|Fig\.?|Image|Photo|Picture|Chart)\s*\d+(?:[.\-]\d+)?"
    r"(?:\s+(?:from|of|in)\s+(?:the\s+)?(?:paper|article|original|study))?\s*[：:.、|｜丨—]"
    r"|(?:Image|Photo|Picture|Illustration|Graphic|Video|Cover\s+image|Header\s+image|Top\s+image)s?"
    r"\s*(?:credits?|source|courtesy)?\s*[：:]"
    r"|(?:Image|Photo|Picture)s?\s+(?:credits?|courtesy\s+of|by|via|from)\b"
    r"|(?:Credits?|Courtesy)\s*[：:])",
    re.IGNORECASE,
)
#: A tag or category line of the page (links to other listings, i.e. navigation).
_TAGS = re.compile(
    r"^(?:Tags?|Tagged(?:\s+with)?|Topics|Categories|Category|Filed\s+under|标签|標籤|分类|分類|栏目|欄目|专题|專題)\s*[：:]",
    re.IGNORECASE,
)
_MD_LINK = re.compile("!?" + MD_LINK)
#: A line of images only (Markdown, linked badges, ``<img>``), maybe inside layout tags.
_IMAGES_ONLY = re.compile(
    r"^(?=.*(?:!\[|<img\b))(?:\s*(?:!\[[^\]\n]*\]\([^)\n]*\)|\[!\[[^\]\n]*\]\([^)\n]*\)\]\([^)\n]*\)"
    r"|<(?:img|/?(?:p|div|a|center|br|picture|source|figure)\b)[^>\n]*>))+\s*$", re.I)
#: The target of a linked image: a Markdown badge's outer link, or an HTML anchor's href.
_IMAGE_LINK_TARGET = re.compile(r"\)\]\(\s*<?([^)\s>]+)|<a\b[^>\n]*?\bhref\s*=\s*[\"']?([^\"'\s>]+)", re.I)
_PAPER_LINK_KINDS = frozenset({"arxiv", "pdf", "doi", "openreview", "code", "project"})
#: Separators of menu items; the second group also joins names, so needs a menu word.
_NAV_SEP = re.compile(r"(?<!\s)\s*(?:[|｜丨>›»\t]|\s/\s)\s*")
_NAV_SEP_WEAK = re.compile(r"(?<!\s)\s*[·•/／]\s*")
_TABLE_DELIM = re.compile(r"^\|?\s*:?-{3,}:?\s*(?:\|\s*:?-{3,}:?\s*)*\|?$")
#: Generic menu words of news and blog sites (not any site's own sections).
_MENU_WORDS = frozenset(
    """首页 首頁 主页 主頁 新闻 新聞 资讯 資訊 快讯 快訊 科技 财经 財經 娱乐 娛樂 体育 體育 汽车 汽車 专题 專題
    专栏 專欄 博客 论坛 論壇 社区 社區 关于 關於 关于我们 關於我們 联系我们 聯絡我們 聯繫我們 加入我们 加入我們
    招聘 人才招聘 广告 廣告 广告合作 廣告合作 商务合作 商務合作 投稿 登录 登錄 登入 注册 註冊 搜索 搜尋 更多
    下载 下載 app 客户端 客戶端 订阅 訂閱 帮助 幫助 隐私政策 隱私政策 用户协议 用戶協議 网站地图 網站地圖 返回顶部
    回到頂部 返回首页 返回首頁 正文 分类 分類 标签 標籤 归档 歸檔 热门 熱門 最新 推荐 推薦
    home news about contact blog topics archive archives tags categories search menu login register
    subscribe newsletter careers jobs events podcast podcasts privacy terms cookies advertise help faq
    sitemap rss more latest""".split()
) | frozenset(
    ("about us", "contact us", "log in", "sign in", "sign up", "privacy policy", "terms of use",
     "terms of service", "cookie policy", "back to top", "our team")
)
_MD_HEADING_LINE = re.compile(r"^#{1,6}\s+\S")
_BOLD_LINE = re.compile(r"^(?:\*\*|__)[^*_].*(?:\*\*|__)$")
#: Reasons of the page's own furniture around an article (a glued item is pasted after it).
_PAGE_FURNITURE = frozenset(
    {"share_prompt", "copyright", "newsletter", "related_list", "navigation", "repost_source", "caption"}
)
_HOME_WORDS = frozenset({"首页", "首頁", "主页", "主頁", "home"})
_RULE_CHARS = set("-—=*_·•~")
_LATIN_TITLE = re.compile(r"^[A-Z0-9][^\u3400-\u9fff]*$")
#: A feed item's gap between title and body (two ideographic spaces, maybe made ASCII) before CJK.
_FEED_GAP = re.compile(r"\S[\u3000 ]{2,}[\u3400-\u9fff]")
#: A paragraph indent before CJK text (possessive: a non-indent run is not retried, linear).
_CJK_INDENT = re.compile(r"^(?=[\u3000\t]|[\u3000 ]{2})[\u3000 \t]++[\u3400-\u9fff]")


#: An author credit's label (``Authors:``, ``Author |``, ``作者：``).
_AUTHOR_LABEL = re.compile(r"^(?P<label>Authors?|作者)\s*[：:|丨/／｜]\s*\S", re.I)
#: A line setting a paper's title off: a bold line, or a Markdown heading of level 2+.
_PAPER_TITLE_SHAPE = re.compile(r"^(?:(?:\*\*|__)[^*_].*(?:\*\*|__)[：:]?|#{2,6}\s+\S.*)$")


def _credits_a_paper(previous: str, line: str) -> bool:
    """Whether ``line`` credits a paper's authors rather than the page's: a plural author label,
    or following (``previous``, raw) a :data:`_PAPER_TITLE_SHAPE` line."""
    found = _AUTHOR_LABEL.match(line)
    if found is None:
        return False
    return found.group("label").casefold() == "authors" or bool(_PAPER_TITLE_SHAPE.match(previous))


def _is_byline(raw: str, line: str, max_chars: int) -> bool:
    if len(line) > max_chars or _SENTENCE_PUNCT.search(line) or _MD_HEADING_LINE.match(raw.strip()):
        return False
    return bool(_BYLINE_END.search(line) or _BYLINE_START.search(line))


def _undecorated(s: str) -> str:
    """``s`` without leading decoration (bullets, arrows, brackets, emoji) before a phrase."""
    return _DECOR.sub("", s).strip()


def _core(s: str) -> str:
    """``s`` without decoration on either side (``▼ 往期推荐 ▼``, ``【往期回顾】``)."""
    u = _undecorated(s)
    end = len(u)
    while end and not (u[end - 1].isalnum() or u[end - 1] in "_)）]"):
        end -= 1
    return u[:end].strip()


def _is_menu_word(item: str) -> bool:
    return _core(item).casefold() in _MENU_WORDS


def _is_nav_line(s: str, at_edge: bool) -> bool:
    """A line of short menu items joined by separators: at an edge, or anywhere with a menu word."""
    if s.startswith("|") and s.endswith("|") or _SENTENCE_PUNCT.search(s):
        return False
    s = _MD_LINK.sub(r"\1", re.sub(r"^>\s*", "", s))
    for sep, weak in ((_NAV_SEP, False), (_NAV_SEP_WEAK, True)):
        items = sep.split(s)
        while items and not items[0].strip():
            items.pop(0)
        while items and not items[-1].strip():
            items.pop()
        if len(items) < 2:
            continue
        if any(not x.strip() or not re.search(r"[^\W\d_]", x) or text_units(x) > NAV_ITEM_MAX_UNITS for x in items):
            continue
        if text_units(s) > NAV_MAX_UNITS:
            return False
        menu = sum(_is_menu_word(x) for x in items)
        breadcrumb = not weak and re.search(r"[>›»]", s) and _core(items[0]).casefold() in _HOME_WORDS
        if len(items) >= NAV_MIN_ITEMS and (menu or (at_edge and not weak)) or breadcrumb:
            return True
    return False


def _repost_end(s: str) -> int | None:
    """Length of the repost clause that opens ``s``, or None."""
    body = _undecorated(s)
    if not _REPOST.match(body):
        return None
    m = _CLAUSE_END.search(s, len(s) - len(body))
    if m is None or not s[m.end():].strip():
        return len(s) if text_units(s) <= REPOST_MAX_UNITS else None
    rest = s[m.end():]
    if text_units(rest) < REPOST_REST_MIN_UNITS:
        return len(s) if text_units(s) <= REPOST_MAX_UNITS else None
    return m.end() if text_units(s[: m.end()]) <= REPOST_MAX_UNITS else None


#: The longest line any single-line kind can be, in units (checked first: patterns scan the line).
LINE_KIND_MAX_UNITS = max(CAPTION_MAX_UNITS, PROMPT_MAX_UNITS, COPYRIGHT_MAX_UNITS, NAV_MAX_UNITS, COMMUNITY_MAX_UNITS)


#: Characters of a line's head counted first by :func:`_line_kind` to rule out long lines.
LINE_KIND_HEAD_CHARS = 256


def _chatter_end(s: str) -> int | None:
    """Length of the chat reply's sentence opening ``s`` (:func:`pipeline.chatter.opens_reply`), or None."""
    body = s.strip() if s[:1].isalnum() else _undecorated(s)  # (a word character is no decoration)
    if not opens_reply(body):
        return None
    m = _CLAUSE_END.search(s, len(s) - len(body), len(s) - len(body) + CHATTER_MAX_CHARS + 1)
    if m is not None:
        return m.end()
    return len(s) if len(body) <= CHATTER_MAX_CHARS else None  # a long line is no reply's opening


def _links_a_paper(s: str) -> bool:
    """Whether a line of images links one to a paper's page, PDF, DOI or code (an arXiv badge)."""
    return any(url_kind(m.group(1) or m.group(2)) in _PAPER_LINK_KINDS for m in _IMAGE_LINK_TARGET.finditer(s))


def _line_kind(s: str, in_header: bool, in_footer: bool) -> str | None:
    """The boilerplate kind of one standalone line (``s`` is :func:`plain`), or ``None``."""
    if s[:1] in "!<[" and _IMAGES_ONLY.match(s) and not _links_a_paper(s):
        return "caption"
    if len(s) > LINE_KIND_HEAD_CHARS and text_units(s[:LINE_KIND_HEAD_CHARS]) > LINE_KIND_MAX_UNITS:
        return None
    units = text_units(s)
    if units > LINE_KIND_MAX_UNITS:  # every kind below is a short line; long ones are prose
        return None
    body = _undecorated(s)
    if _CAPTION.match(body) and units <= CAPTION_MAX_UNITS:  # (a line of images: above)
        return "caption"
    if (_SHARE.match(body) and units <= PROMPT_MAX_UNITS) or (
        _SHARE_ANYWHERE.search(body) and units <= PROMPT_LOOSE_MAX_UNITS
    ) or (units <= COMMUNITY_MAX_UNITS and _COMMUNITY.search(body)):
        return "share_prompt"
    if (_NEWSLETTER.match(body) and units <= PROMPT_MAX_UNITS) or (
        units <= PROMPT_LOOSE_MAX_UNITS and _newsletter_anywhere(body)
    ):
        return "newsletter"
    if units <= COPYRIGHT_MAX_UNITS and (
        _COPYRIGHT.match(body) or _COPYRIGHT.match(s) or _RIGHTS_RESERVED.search(s)
        or (in_footer and _LICENCE.search(body))
    ):
        return "copyright"
    if _TAGS.match(body) and units <= PROMPT_MAX_UNITS or _is_nav_line(s, at_edge=in_header or in_footer):
        return "navigation"
    return None


def _continues_prose(prev: Line | None, line: Line) -> bool:
    """Whether ``line`` continues the sentence of the previous line in its block (hard wrap)."""
    if prev is None or prev.blank:
        return False
    p = prev.stripped
    return len(p) >= WRAP_MIN_CHARS and not _SENTENCE_FINAL.search(p) and not cjk_count(p) > len(p) // 2


def _is_award_header(s: str) -> bool:
    if len(s) > AWARD_HEADER_MAX_CHARS or re.search(r"[。！？!?]", s):
        return False
    label = find_award_label(s)
    return label is not None and normalize_award(label) is not None


def _is_protected(s: str, next_s: str | None) -> bool:
    """A line the unrelated scans never drop and stop at (docs/cleaning.md, "Protected lines")."""
    if parse_key_value(s) is not None or URL_ONLY.match(s) or set(s) <= _RULE_CHARS:
        return True
    if (s.startswith("|") and s.count("|") >= 3) or ("arxiv" in s.lower() and find_arxiv_ids(s)):
        return True
    if _is_award_header(s):
        return True
    if "<" in s and len(parts := HTML_BREAK.split(s, maxsplit=1)) == 2:  # "**Title**<br>_A, B_": one line
        return _is_protected(plain(parts[0]), plain(parts[1]))
    # a paper's title over its metadata or credit line: an entry of the article's list
    return bool(
        next_s is not None and _LATIN_TITLE.match(s)
        and len(s.split()) >= 3 and not _SENTENCE_FINAL.search(s.rstrip("*_"))
        and (parse_key_value(next_s) is not None or parse_credit_line(next_s) is not None)
    )


def find_dropped(text: str, config: Config) -> list[dict]:
    """All non-content spans of one document: ``{"char_start", "char_end", "reason", "text"}``
    dicts, sorted, non-overlapping, offsets into ``text`` trimmed of whitespace."""
    lines = split_lines(text)
    dropped: list[dict] = []

    def add(start: int, end: int, reason: str) -> None:
        start, end = trim_span(text, start, end)
        if end > start:
            dropped.append({"char_start": start, "char_end": end, "reason": reason, "text": text[start:end]})

    # 0. YAML front matter of a static-site Markdown file
    if lines and lines[0].text.strip() == "---":
        close = next((ln for ln in lines[1:FRONT_MATTER_MAX_LINES] if ln.text.strip() == "---"), None)
        inside = lines[1 : lines.index(close)] if close is not None else []
        if close is not None and all(ln.blank or _YAML_LINE.match(ln.text) for ln in inside):
            add(lines[0].start, close.end, "front_matter")

    # 0b. HTML comments in a Markdown or text file: not shown when rendered
    if "<!--" in text:
        for m in _HTML_COMMENT.finditer(text):
            add(m.start(), m.end(), "html_comment")

    # 0c. a reasoning model's thinking, pasted with its answer
    if "think>" in text:
        for start, end in think_blocks(text):
            add(start, end, "llm_chatter")

    covered = span_coverage((d["char_start"], d["char_end"]) for d in dropped)
    nonblank = [ln for ln in lines if not ln.blank and not covered(*trim_span(text, ln.start, ln.end))]
    n = len(nonblank)
    prev_in_block: dict[int, Line | None] = {}
    previous: Line | None = None
    for line in lines:
        prev_in_block[line.start] = previous
        previous = None if line.blank else line

    # 1. line boilerplate (and editor credits, which stand anywhere)
    done = _drop_line_boilerplate(nonblank, prev_in_block, config, add)  # indices into nonblank dropped whole

    # 2. related-article lists
    i = 0
    while i < n:
        j = _related_list_end(nonblank, i, done)
        if j is not None:
            add(nonblank[i].start, nonblank[j].end, "related_list")
            done.update(range(i, j + 1))
            i = j + 1
        else:
            i += 1

    # 3. menus at the very top and bottom
    for run in _edge_menu_runs(nonblank, done):
        add(nonblank[run[0]].start, nonblank[run[-1]].end, "navigation")
        done.update(run)

    # 4. unrelated news glued before the article
    _drop_unrelated_head(text, _units(text, lines, dropped), dropped, config.clean.min_topic_fit, add)

    # 5. bylines, among the first lines left, before the first paper heading or paper credit
    seen = 0
    covered = span_coverage((d["char_start"], d["char_end"]) for d in dropped)  # (the bylines this loop adds are in `done`)
    for i, line in enumerate(nonblank):
        if i in done or covered(*trim_span(text, line.start, line.end)):
            continue
        s = plain(line.text)
        kv = parse_key_value(s)
        if ((kv is not None and kv[0] == "title") or seen >= BYLINE_WINDOW
                or _credits_a_paper(nonblank[i - 1].stripped if i else "", s)):
            break
        seen += 1
        if _is_byline(line.text, s, config.clean.byline_max_chars):
            add(line.start, line.end, "byline")
            done.add(i)

    # 6. unrelated news glued after the article
    _drop_unrelated_tail(text, _units(text, lines, dropped), dropped, config.clean.min_topic_fit, add)
    return _resolve_overlaps(dropped)


def _drop_line_boilerplate(nonblank: list[Line], prev_in_block: dict[int, Line | None], config: Config,
                           add: Callable[[int, int, str], None]) -> set[int]:
    """Rule 1: boilerplate lines and editor credits to ``add``; returns indices of lines dropped whole."""
    done: set[int] = set()
    n = len(nonblank)
    for i, line in enumerate(nonblank):
        s = plain(line.text)
        if _continues_prose(prev_in_block[line.start], line):
            continue
        offset = line.text.index(line.stripped[0]) if line.stripped else 0
        cut = _chatter_end(line.stripped)
        if cut is not None:
            add(line.start + offset, line.start + offset + cut, "llm_chatter")
            if cut >= len(line.stripped):
                done.add(i)
            continue
        cut = _repost_end(line.stripped)
        if cut is not None and parse_key_value(s) is None:
            add(line.start + offset, line.start + offset + cut, "repost_source")
            if cut >= len(line.stripped):
                done.add(i)
            continue
        if _EDITOR_CREDIT.match(s) and len(s) <= config.clean.byline_max_chars + 8:
            add(line.start, line.end, "editor_credit")
            done.add(i)
            continue
        if parse_key_value(s) is not None:
            continue
        neighbours = [nonblank[j].stripped for j in (i - 1, i + 1) if 0 <= j < n]
        if any(_TABLE_DELIM.match(x) for x in neighbours):
            continue
        kind = _line_kind(s, in_header=i < EDGE_LINES, in_footer=i >= n - EDGE_LINES)
        if kind is not None:
            add(line.start, line.end, kind)
            done.add(i)
    return done


def _related_list_end(nonblank: list[Line], i: int, done: set[int]) -> int | None:
    """Index of the last line of the related-article list whose label is ``nonblank[i]``."""
    if i in done or not _RELATED_LABEL.match(_core(plain(nonblank[i].text))):
        return None
    j = i
    while j + 1 < len(nonblank) and _LIST_OR_LINK.search(_strip_md(nonblank[j + 1].stripped)):
        j += 1
    if j > i:
        return j
    # plain title lines running to the end of the document (or to other dropped lines)
    k = i
    while (
        k + 1 < len(nonblank) and k + 1 not in done
        and text_units(nonblank[k + 1].stripped) <= RELATED_ITEM_MAX_UNITS
        and parse_key_value(plain(nonblank[k + 1].text)) is None
    ):
        k += 1
    tail_done = all(m in done for m in range(k + 1, len(nonblank)))
    return k if k - i >= RELATED_MIN_PLAIN_ITEMS and tail_done else None


def _strip_md(s: str) -> str:
    return re.sub(r"^(?:\*\*|__)", "", s)


def _edge_menu_runs(nonblank: list[Line], done: set[int]) -> list[list[int]]:
    """Runs of very short menu lines at the very top and very bottom (rule 3)."""

    def is_short(i: int) -> bool:
        s = plain(nonblank[i].text)
        return (
            0 < text_units(s) <= MENU_LINE_MAX_UNITS and not _SENTENCE_PUNCT.search(s)
            and parse_key_value(s) is None and not _is_award_header(s)
        )

    runs = []
    for order in (range(len(nonblank)), range(len(nonblank) - 1, -1, -1)):
        run: list[int] = []
        for i in order:
            if i in done and not run:
                continue
            if i in done or not is_short(i):
                break
            run.append(i)
        menu = sum(_is_menu_word(nonblank[i].stripped) for i in run)
        if len(run) >= MENU_RUN_MIN_LINES and menu >= MENU_WORD_MIN_SHARE * len(run):
            runs.append(sorted(run))
    if len(runs) == 2 and set(runs[0]) & set(runs[1]):
        runs = runs[:1]
    return runs


# --- topic-fit scans ------------------------------------------------------------------------------


def _units(text: str, lines: list[Line], dropped: list[dict]) -> list[list[Line]]:
    """Paragraph units for topic scoring, without dropped lines: blocks split after a CJK line
    ending a sentence and before an indented line (scraped Chinese has one paragraph per line)."""
    out: list[list[Line]] = []
    covered = span_coverage((d["char_start"], d["char_end"]) for d in dropped)
    for block in blocks(lines):
        current: list[Line] = []
        for line in block:
            if covered(*trim_span(text, line.start, line.end)):
                if current:
                    out.append(current)
                    current = []
                continue
            prev = current[-1].stripped if current else ""
            indented = bool(_CJK_INDENT.match(line.text))
            ends_cjk_sentence = bool(prev) and cjk_count(prev) > len(prev) // 2 and bool(_SENTENCE_FINAL.search(prev))
            if current and (indented or ends_cjk_sentence):
                out.append(current)
                current = []
            current.append(line)
        if current:
            out.append(current)
    return out


def _kept_text(text: str, start: int, end: int, dropped: list[dict]) -> str:
    """``text[start:end]`` without the dropped spans in it."""
    pieces, pos = [], start
    for d in sorted(dropped, key=lambda d: d["char_start"]):
        a, b = d["char_start"], d["char_end"]
        if b <= pos or a >= end:
            continue
        pieces.append(text[pos:a])
        pos = max(pos, b)
    if pos < end:
        pieces.append(text[pos:end])
    return "".join(pieces)


def _splits_at_space(text: str, pos: int, dropped: list[dict]) -> bool:
    """Whether the kept text splits at ``pos`` between whole topic features (a kept whitespace at or
    before ``pos``), so ``content_profile`` of ``[a, b)`` is the sum of ``[a, pos)`` and ``[pos, b)``."""
    for i in (pos, pos - 1):
        if 0 <= i < len(text) and text[i].isspace() and not any(
                d["char_start"] <= i < d["char_end"] for d in dropped):
            return True
    return False


def _is_heading(raw: str) -> bool:
    """A section heading by markup: a Markdown heading, a line wholly in bold, or a numbered
    paper heading (``论文 N：``, ``Paper N:``)."""
    s = raw.strip()
    if _MD_HEADING_LINE.match(s) or _BOLD_LINE.match(s):
        return True
    kv = parse_key_value(plain(s))
    return kv is not None and kv[0] == "title"


def _unit_text(text: str, unit: list[Line]) -> str:
    start, end = trim_span(text, unit[0].start, unit[-1].end)
    return text[start:end]


def _unit_protected(unit: list[Line], next_line: Line | None) -> bool:
    for k, line in enumerate(unit):
        nxt = unit[k + 1] if k + 1 < len(unit) else next_line
        if _is_protected(plain(line.text), plain(nxt.text) if nxt is not None else None):
            return True
    return False


def _is_short(body: str) -> bool:
    """Under ``MIN_SCORED_CHARS``, or a title (one line of at most ``TITLE_MAX_UNITS``, no
    sentence punctuation but ``?``/``!``)."""
    if len(body) < MIN_SCORED_CHARS:
        return True
    core = body.rstrip("?!？！*_ ")
    return (
        "\n" not in core and text_units(core) <= TITLE_MAX_UNITS
        and not _SENTENCE_PUNCT.search(core) and not re.search(r"\.(?:\s|$)", core)
    )


def _cut_off(body: str) -> bool:
    """Whether ``body`` has begun sentences and does not end with final punctuation."""
    if _SENTENCE_FINAL.search(body):
        return False
    if _SENTENCE_PUNCT.search(body) or _FEED_GAP.search(body):
        return True
    words = re.findall(r"[A-Za-z]+", body)
    return len(words) >= 4 and words[-1].islower() and sum(w[0].isupper() for w in words) < len(words) / 2


def _fits(body: str, reference) -> bool:
    """Whether a short unit has enough features and is *not* clearly off-topic against
    ``reference`` (a profile)."""
    profile = content_profile(body)
    return len(profile) >= SHORT_MIN_FEATURES and cosine(profile, reference) > SHORT_MAX_FIT


def _clearly_off_topic(body: str, fit: float) -> bool:
    return len(content_profile(body)) >= SHORT_MIN_FEATURES and fit <= SHORT_MAX_FIT


#: How far into a leading unit a venue edition is looked for (a lead names it early).
MAX_VENUE_LEAD_CHARS = 300


def _drop_unrelated_head(
    text: str, units: list[list[Line]], dropped: list[dict], min_fit: float, add: Callable
) -> None:
    """Rule 4: score units from the start against the kept text after them; drop the run only when
    the article visibly starts right after it."""
    head_end = None
    start_at = len(units)  # index of the first unit after the dropped run
    pending: list[int] = []
    known: tuple[int, Counter] | None = None  # (pos, profile of the kept text from pos to the end)
    for k, unit in enumerate(units[:MAX_GLUED_UNITS]):
        start, end = trim_span(text, unit[0].start, unit[-1].end)
        nxt = units[k + 1][0] if k + 1 < len(units) else None
        if _unit_protected(unit, nxt):
            start_at = pending[0] if pending else k
            break
        body = "\n".join(ln.text for ln in unit).strip()
        if any(year for _, year, _, _ in find_venue_years(body[:MAX_VENUE_LEAD_CHARS])):
            # a unit naming a venue edition is the article's context: the article starts here
            start_at = pending[0] if pending else k
            break
        if known is not None and known[0] <= end and _splits_at_space(text, end, dropped):
            # subtract the unit's profile from the rest, in place, instead of recounting
            rest = known[1]
            for feature, count in content_profile(_kept_text(text, known[0], end, dropped)).items():
                left = rest[feature] - count
                if left > 0:
                    rest[feature] = left
                else:
                    rest.pop(feature, None)
        else:
            rest = content_profile(_kept_text(text, end, len(text), dropped))
        known = (end, rest)
        if len(rest) < MIN_REFERENCE_FEATURES:
            break
        fit = cosine(content_profile(body), rest)
        if _is_short(body):
            sentence = bool(re.search(r"[。；;]|\.(?:\s|$)", body) or _FEED_GAP.search(body))
            if sentence and _clearly_off_topic(body, fit):
                head_end, pending = end, []
            else:
                pending.append(k)
            continue
        if fit >= min_fit:
            start_at = pending[0] if pending else k
            break
        # the short units above go with this unit unless one fits the rest (the article's headline)
        headline = next((j for j in pending if _fits(_unit_text(text, units[j]), rest)), None)
        if headline is not None:
            start_at = headline
            break
        head_end, pending = end, []
    if head_end is None or start_at >= len(units):
        return
    first = units[start_at]
    gap_dropped = any(head_end <= d["char_start"] < first[0].start for d in dropped)
    body = "\n".join(ln.text for ln in first).strip()
    if gap_dropped or _is_short(body) or _unit_protected(first, None):
        add(units[0][0].start, head_end, "unrelated_leading")


def _drop_unrelated_tail(
    text: str, units: list[list[Line]], dropped: list[dict], min_fit: float, add: Callable
) -> None:
    """Rule 6: score units from the end against the kept text before them; drop the run as one span."""
    tail_start = tail_end = None
    last = True
    for k in range(len(units) - 1, max(0, len(units) - 1 - MAX_GLUED_UNITS), -1):
        unit = units[k]
        start, end = trim_span(text, unit[0].start, unit[-1].end)
        nxt = units[k + 1][0] if k + 1 < len(units) else None
        if _unit_protected(unit, nxt):
            break
        next_start = units[k + 1][0].start if k + 1 < len(units) else len(text)
        if any(end <= d["char_start"] < next_start and d["reason"] in _PAGE_FURNITURE for d in dropped):
            break  # the page's own footer follows: this is still the article
        if _is_heading(units[k - 1][-1].text):
            break  # the body of the article's last section
        body = "\n".join(ln.text for ln in unit).strip()
        # the reference ends before the short units right above (a glued item's own title)
        j = k
        while j > 1 and _is_short(_unit_text(text, units[j - 1])) and not _unit_protected(units[j - 1], unit[0]):
            j -= 1
        before = content_profile(_kept_text(text, 0, units[j][0].start, dropped))
        if len(before) < MIN_REFERENCE_FEATURES:
            break
        profile = content_profile(body)
        fit = cosine(profile, before)
        if _is_short(body):
            cut_off = last and _cut_off(body)
            joins = tail_start is not None and fit < min_fit and cosine(
                profile, content_profile(text[tail_start:tail_end])
            ) > fit
            if not ((cut_off and _clearly_off_topic(body, fit)) or joins):
                break
        elif fit >= min_fit:
            break
        elif tail_start is None and len(body) < MIN_GLUED_CHARS and not _cut_off(body):
            break  # a short, complete closing paragraph: too little text to call it another article
        tail_start, tail_end = start, tail_end or end
        last = False
    if tail_start is not None:
        add(tail_start, tail_end, "unrelated_trailing")


def _resolve_overlaps(spans: list[dict]) -> list[dict]:
    """Sort spans; drop spans inside larger ones; clip partial overlaps so no character is shared."""
    spans = sorted(spans, key=lambda d: (d["char_start"], -d["char_end"]))
    out: list[dict] = []
    for span in spans:
        if out and span["char_end"] <= out[-1]["char_end"]:
            continue
        if out and span["char_start"] < out[-1]["char_end"]:
            cut = out[-1]["char_end"]
            rest = span["text"][cut - span["char_start"]:]
            cut += len(rest) - len(rest.lstrip())
            span = {**span, "char_start": cut, "text": rest.lstrip()}
            if not span["text"]:
                continue
        out.append(span)
    return out


def clean_documents(batch: pd.DataFrame, config: Config) -> pd.DataFrame:
    """Stage function: add ``dropped`` (:func:`find_dropped`'s list) per document; empty for
    non-``ok`` documents and paper records."""
    out = batch.copy()
    papers = batch["paper_record"] if "paper_record" in batch else [None] * len(batch)
    out["dropped"] = [
        find_dropped(text, config) if status == "ok" and not isinstance(paper, str) else []
        for text, status, paper in zip(batch["text"], batch["status"], papers, strict=True)
    ]
    return out


STAGE = Stage(name="clean", fn=clean_documents, requires=("doc_id", "text", "status"), adds=("dropped",))
