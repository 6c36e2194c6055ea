"""Identifiers in article text: arXiv ids (old and new style, with versions) and URLs with
what they point to (:func:`find_arxiv_ids`, :func:`find_urls`, :func:`url_kind`). Pure
functions of ``str``; offsets are Python ``str`` indices."""

from __future__ import annotations

import re
from collections.abc import Iterator

from .textutil import _CASE_EXTRA, anchored_finditer

# --- arXiv identifiers ----------------------------------------------------------------------------

# Identifier scheme: https://info.arxiv.org/help/arxiv_identifier.html
#   new style (since 0704): YYMM.NNNN (0704-1412) or YYMM.NNNNN (1501 on), optional vN;
#   old style (9108-0703):  archive(.SC)/YYMMNNN, optional vN.
_ARXIV_NEW = r"(?P<yymm>\d{4})\.(?P<num>\d{4,5})"
_ARXIV_OLD = r"(?P<arch>[a-z]+(?:-[a-z]+)?(?:\.[a-z]{2})?)/(?P<oyymm>\d{4})(?P<onum>\d{3})"
# Contexts: arxiv.org pages; aggregator pages keyed by arXiv id (huggingface.co/papers/ID,
# alphaxiv.org/abs/ID, papers.cool/arxiv/ID); the arXiv DOI (10.48550/arXiv.ID); "arXiv: ID".
_ARXIV_CTX = re.compile(
    r"(?:arxiv\.org/(?:abs|pdf|html|format)/|huggingface\.co/papers/|alphaxiv\.org/(?:abs|overview|pdf)/"
    r"|(?<![a-z])arxiv\s*[:：./]?\s*)"
    rf"(?:{_ARXIV_NEW}|{_ARXIV_OLD})(?P<ver>v[1-9]\d*)?(?!\d)",
    re.I,
)
#: An HTML attribute naming an arXiv id (``data-arxiv-id="2505.00972v2"``): markup, not text.
_ARXIV_ATTRIBUTE = re.compile(rf"\barxiv[-_]id\s*=\s*[\"']?(?:{_ARXIV_NEW})(?P<ver>v[1-9]\d*)?(?!\d)", re.I)
_ARXIV_BARE = re.compile(
    rf"(?<![A-Za-z0-9./]){_ARXIV_NEW}(?P<ver>v[1-9]\d*)?(?![A-Za-z0-9]|\.\d)"
)
#: The archives of old-style identifiers (arXiv identifier scheme, "Archive names"): a bare
#: old-style id is read only with one (not ``docs/2401001``).
ARXIV_OLD_ARCHIVES = frozenset(
    "acc-phys adap-org alg-geom ao-sci astro-ph atom-ph bayes-an chao-dyn chem-ph cmp-lg comp-gas "
    "cond-mat cs dg-ga funct-an gr-qc hep-ex hep-lat hep-ph hep-th math math-ph mtrl-th nlin nucl-ex "
    "nucl-th patt-sol physics plasm-ph q-alg q-bio quant-ph solv-int supr-con".split()
)
#: An old-style id standing on its own, not part of a path or word (not ``example.com/math/0309136``).
_ARXIV_OLD_BARE = re.compile(rf"(?<![A-Za-z0-9_./%~-]){_ARXIV_OLD}(?P<ver>v[1-9]\d*)?(?![A-Za-z0-9]|\.\d)", re.I)
#: What every old-style id holds: a slash and seven digits, ASCII or full-width.
_ARXIV_OLD_TAIL = re.compile(r"[/／][0-9０-９]{7}(?![0-9０-９])")


def _valid_new_arxiv(yymm: str, num: str) -> bool:
    """True for a well-formed new-style id (arXiv identifier scheme); no upper bound on the year,
    so output does not depend on today's date."""
    mm = int(yymm[2:])
    if not 1 <= mm <= 12 or yymm < "0704" or int(num) == 0:  # numbers start at 00001
        return False
    return len(num) == (4 if yymm <= "1412" else 5)


def _valid_old_arxiv(yymm: str) -> bool:
    """True for an old-style YYMM: month 01-12 and 9108 <= YYMM <= 0703 (across 2000)."""
    yy, mm = int(yymm[:2]), int(yymm[2:])
    if not 1 <= mm <= 12:
        return False
    return yymm >= "9108" if yy >= 91 else yymm <= "0703"


#: Read-through for identifiers: full-width digits/dot/colon/slash to ASCII; soft hyphen and
#: zero-width characters removed.
_ID_FOLD = {**{0xFF10 + d: str(d) for d in range(10)}, 0xFF0E: ".", 0xFF1A: ":", 0xFF0F: "/",
            0x00AD: None, 0x200B: None, 0x200C: None, 0x200D: None, 0x2060: None, 0xFEFF: None}


#: The characters :data:`_ID_FOLD` removes (they may stand inside a context word: ``ar\u00adXiv``).
_ID_REMOVED = tuple(chr(c) for c, v in _ID_FOLD.items() if v is None)


#: :data:`_ID_REMOVED` and :data:`_CASE_EXTRA` as one character class.
_FOLD_OR_CASE_EXTRA = re.compile("[" + "".join(_ID_REMOVED + _CASE_EXTRA) + "]")


def _may_hold_arxiv_context(text: str) -> bool:
    """False when :data:`_ARXIV_CTX` cannot match ``text.translate(_ID_FOLD)`` (no ``xiv`` nor
    ``huggingface`` in the lower-cased text)."""
    if not text.isascii() and _FOLD_OR_CASE_EXTRA.search(text):
        return True
    low = text.lower()
    return "xiv" in low or "huggingface" in low


#: The characters :data:`_ID_FOLD` maps, as one character class.
_ID_FOLD_CHARS = re.compile("[" + "".join(map(chr, sorted(_ID_FOLD))) + "]")
#: Where a :data:`_ARXIV_CTX` match can start in the lower-cased text: each of its contexts
#: begins with one of these.
_ARXIV_CTX_ANCHORS = ("arxiv", "huggingface.co/papers/", "alphaxiv.org/")


def _arxiv_ctx_matches(text: str) -> Iterator[re.Match[str]]:
    """The matches of ``_ARXIV_CTX.finditer(text)``, tried only at :data:`_ARXIV_CTX_ANCHORS`."""
    return anchored_finditer(_ARXIV_CTX, text, _ARXIV_CTX_ANCHORS)


def find_arxiv_ids(text: str, allow_bare: bool = False) -> list[tuple[str, str | None]]:
    """arXiv ids in ``text`` as ``(id, version)`` pairs in order of first appearance, one per id:
    ``id`` bare (``"2502.13228"``, ``"hep-th/9901001"``), version lower-cased (``"v2"``) or None.

    Read in an :data:`_ARXIV_CTX` context, as a standing old-style id (:data:`_ARXIV_OLD_BARE`),
    or with ``allow_bare`` as a bare new-style id (off by default: such numbers have other
    senses). Validated per https://info.arxiv.org/help/arxiv_identifier.html (malformed ids are
    rejected, never completed); full-width and zero-width characters read through. Never raises.
    """
    if not text:
        return []
    context = allow_bare or _may_hold_arxiv_context(text)
    if not context and "/" not in text and "／" not in text:
        return []
    if not text.isascii() and _ID_FOLD_CHARS.search(text):  # the fold changes only these
        text = text.translate(_ID_FOLD)
    old_style = _ARXIV_OLD_TAIL.search(text) is not None
    if not context and not old_style:
        return []
    found: list[tuple[int, str, str | None]] = []
    taken: list[tuple[int, int]] = []
    for m in _arxiv_ctx_matches(text) if context else ():
        if m.group("yymm"):
            if not _valid_new_arxiv(m.group("yymm"), m.group("num")):
                continue
            ident = f"{m.group('yymm')}.{m.group('num')}"
        else:
            if not _valid_old_arxiv(m.group("oyymm")):
                continue
            ident = f"{m.group('arch')}/{m.group('oyymm')}{m.group('onum')}"
        ver = m.group("ver").lower() if m.group("ver") else None
        found.append((m.start(), ident, ver))
        taken.append(m.span())
    if allow_bare:
        for m in _ARXIV_BARE.finditer(text):
            if any(s <= m.start() < e for s, e in taken):
                continue
            if _valid_new_arxiv(m.group("yymm"), m.group("num")):
                ver = m.group("ver").lower() if m.group("ver") else None
                found.append((m.start(), f"{m.group('yymm')}.{m.group('num')}", ver))
    for m in _ARXIV_OLD_BARE.finditer(text) if old_style else ():
        if any(s <= m.start() < e for s, e in taken):
            continue
        archive = m.group("arch").lower()
        if archive.split(".")[0] in ARXIV_OLD_ARCHIVES and _valid_old_arxiv(m.group("oyymm")):
            ver = m.group("ver").lower() if m.group("ver") else None
            found.append((m.start(), f"{m.group('arch')}/{m.group('oyymm')}{m.group('onum')}", ver))
    found.sort(key=lambda t: t[0])
    out: dict[str, str | None] = {}
    for _, ident, ver in found:
        if out.get(ident) is None:
            out[ident] = ver
    return list(out.items())


#: Lines that only open elements (``<div data-arxiv-id="…">``) at the end of a text: they open
#: what follows it.
_TRAILING_OPENING_TAGS = re.compile(r"(?:\n[ \t]*(?:<[A-Za-z][^<>]*>[ \t]*)+)+\s*$")


def find_arxiv_attributes(text: str) -> list[tuple[str, str | None]]:
    """arXiv ids that HTML attributes name (``data-arxiv-id="2505.00972v2"``), as
    :func:`find_arxiv_ids` gives them; opening tags on the last lines (the next paper's) left out."""
    out: dict[str, str | None] = {}
    if "arxiv" in text.lower():
        text = _TRAILING_OPENING_TAGS.sub("", text)
        for m in _ARXIV_ATTRIBUTE.finditer(text):
            ident = f"{m.group('yymm')}.{m.group('num')}"
            if out.get(ident) is None:
                out[ident] = m.group("ver").lower() if m.group("ver") else None
    return list(out.items())


# --- URLs -----------------------------------------------------------------------------------------

#: Values of :func:`url_kind`.
URL_KINDS: tuple[str, ...] = ("arxiv", "pdf", "project", "code", "doi", "openreview", "other")

# URL characters are the RFC 3986 set (https://www.rfc-editor.org/rfc/rfc3986#section-2): a URL
# ends at whitespace, a CJK character or full-width punctuation.
_URL_CHARS = r"[A-Za-z0-9\-._~:/?#\[\]@!$&'()*+,;=%]"
_SCHEMELESS_HOSTS = r"(?:arxiv\.org|github\.com|gitlab\.com|huggingface\.co|openreview\.net|doi\.org)"
_URL = re.compile(
    rf"(?P<scheme>https?://){_URL_CHARS}+"
    rf"|(?<![A-Za-z0-9\-._~/@])(?:www\.[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)+|{_SCHEMELESS_HOSTS}(?=/))"
    rf"{_URL_CHARS}*",
    re.I,
)
_SCHEMELESS_HOST_NAMES = ("arxiv.org", "github.com", "gitlab.com", "huggingface.co", "openreview.net", "doi.org")
_URL_TRAILING = set(".,;:!?'\"*>)]}") | set("。，；：！？）」》】、』〉")
_URL_PAIRS = {")": "(", "]": "[", "}": "{"}


def _strip_url_tail(url: str) -> str:
    """Drop trailing punctuation; a closing bracket stays when its opening one is in the URL."""
    while url and url[-1] in _URL_TRAILING:
        ch = url[-1]
        if ch in _URL_PAIRS and url.count(_URL_PAIRS[ch]) >= url.count(ch):
            break
        url = url[:-1]
    return url


def _url_matches(text: str) -> Iterator[re.Match[str]]:
    """The matches of ``_URL.finditer(text)``, tried only at ``http``, ``www.`` or a scheme-less host."""
    return anchored_finditer(_URL, text, ("http", "www.", *_SCHEMELESS_HOST_NAMES))


def _url_spans(text: str) -> list[tuple[int, int, str]]:
    """``(start, end, url)`` of every URL in ``text`` (not de-duplicated; see find_urls)."""
    out = []
    for m in _url_matches(text):
        raw = _strip_url_tail(m.group())
        if not raw or raw.lower().rstrip("/") in ("http:", "https:"):
            continue
        url = raw if m.group("scheme") else "https://" + raw
        out.append((m.start(), m.start() + len(raw), url))
    return out


def find_urls(text: str) -> list[str]:
    """Every URL in ``text``, de-duplicated, in order of first appearance: ``http(s)://`` URLs as
    written, scheme-less ``www.…`` and known hosts (``arxiv.org/…``) with ``https://`` prepended;
    trailing punctuation stripped, a balanced closing bracket kept (``…/Foo_(bar)``). Never raises.
    """
    if not text:
        return []
    seen: dict[str, None] = {}
    for _, _, url in _url_spans(text):
        seen.setdefault(url, None)
    return list(seen)


_HOST = re.compile(r"^(?:[a-z][a-z0-9+.-]*://)?(?P<host>[^/?#:]+)(?::\d+)?(?P<path>[^?#]*)", re.I)
_CODE_HOSTS = ("github.com", "gitlab.com", "huggingface.co", "bitbucket.org", "gitee.com", "codeberg.org")
_PROJECT_HOST_SUFFIXES = (".github.io", ".gitlab.io")
_KEY_KINDS = {"project_url": "project", "code_url": "code"}


def _host_is(host: str, domain: str) -> bool:
    return host == domain or host.endswith("." + domain)


def url_kind(url: str, key: str | None = None) -> str:
    """What a URL (with or without scheme) points to, one of :data:`URL_KINDS`, by host (doi,
    arxiv, openreview, ``*.github.io`` project, code hosts), then a ``.pdf`` path, then ``key``
    (the :func:`parse_key_value` key it was found under: ``project_url``, ``code_url``); else
    ``"other"``. Never raises.
    """
    m = _HOST.match(url.strip())
    host = (m.group("host") if m else "").lower()
    if host.startswith("www."):
        host = host[4:]
    path = (m.group("path") if m else "").lower()
    if _host_is(host, "doi.org"):
        return "doi"
    if _host_is(host, "arxiv.org"):
        return "arxiv"
    if _host_is(host, "openreview.net"):
        return "openreview"
    if host.endswith(_PROJECT_HOST_SUFFIXES):
        return "project"
    if _host_is(host, "huggingface.co") and path.startswith("/papers/"):
        return "other"  # a paper's discussion page, not code
    if any(_host_is(host, h) for h in _CODE_HOSTS):
        return "code"
    if path.endswith(".pdf"):
        return "pdf"
    if key in _KEY_KINDS:
        return _KEY_KINDS[key]
    return "other"
