"""Facts about a web page read from its HTML: title, description, logo, colours, social links, headings.

Stdlib only (html.parser), tolerant of broken markup: whatever can be read is returned, nothing
raises. Used by the free scrape-website tool and by the scrapers.

Logo, in order of preference: `og:logo`, the first <img> whose src/alt/class/id mentions "logo",
`apple-touch-icon`, a `rel=icon` link, `og:image`. Colours are hex (`#rrggbb`, lower case) taken
from `<meta name="theme-color">`, `<style>` blocks and `style` attributes, most frequent first
(ties: first seen first), at most 8. Social links are the first profile link per platform (share
and intent links are skipped); platforms: facebook, instagram, x (twitter.com or x.com), linkedin,
youtube, tiktok, pinterest.
"""

from __future__ import annotations

import contextlib
import re
from collections import Counter
from html.parser import HTMLParser
from typing import Any
from urllib.parse import urljoin, urlsplit

MAX_COLORS = 8
MAX_HEADINGS = 30
MAX_TEXT = 300

SOCIAL_HOSTS = {
    "facebook.com": "facebook",
    "fb.com": "facebook",
    "instagram.com": "instagram",
    "twitter.com": "x",
    "x.com": "x",
    "linkedin.com": "linkedin",
    "youtube.com": "youtube",
    "youtu.be": "youtube",
    "tiktok.com": "tiktok",
    "pinterest.com": "pinterest",
    "pin.it": "pinterest",
}
# Paths that share the current page rather than point at the brand's profile.
_SHARE_PATHS = re.compile(r"^/(sharer|share|intent|dialog|pin/create|shareArticle)\b", re.IGNORECASE)

_HEX = re.compile(r"#([0-9a-fA-F]{8}|[0-9a-fA-F]{6}|[0-9a-fA-F]{4}|[0-9a-fA-F]{3})(?![0-9a-zA-Z_-])")
_RGB = re.compile(r"rgba?\(\s*(\d{1,3})\s*[, ]\s*(\d{1,3})\s*[, ]\s*(\d{1,3})\s*(?:[,/][^)]*)?\)", re.IGNORECASE)
_CSS_BLOCK = re.compile(r"\{([^{}]*)\}")
_HEADINGS = {"h1": 1, "h2": 2, "h3": 3}


def extract_page_facts(html: str, base_url: str) -> dict[str, Any]:
    parser = _FactsParser()
    # html.parser can still trip on pathological markup (e.g. bad marked sections): keep what was read.
    with contextlib.suppress(Exception):
        parser.feed(html)
        parser.close()
    parser.finish()
    base = urljoin(base_url, parser.base_href) if parser.base_href else base_url
    return {
        "title": _clean(parser.title) or _clean(parser.meta.get("og:title", "")) or None,
        "description": _clean(parser.meta.get("description", ""))
        or _clean(parser.meta.get("og:description", ""))
        or None,
        "logo": _absolute(base, _pick_logo(parser)),
        "colors": _rank_colors(parser),
        "social_links": _social_links(base, parser.links),
        "headings": parser.headings[:MAX_HEADINGS],
    }


class _FactsParser(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.title = ""
        self.base_href: str | None = None
        self.meta: dict[str, str] = {}
        self.icons: dict[str, str] = {}  # "apple-touch-icon" | "icon" -> href (first wins)
        self.logo_img: str | None = None
        self.links: list[str] = []
        self.css: list[str] = []  # declaration text from style attributes and <style> blocks
        self.theme_colors: list[str] = []
        self.headings: list[dict[str, Any]] = []
        self._in_title = False
        self._in_style = False
        self._style: list[str] = []
        self._heading: tuple[int, list[str]] | None = None

    # Tags ----------------------------------------------------------------------------------------

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = {k.lower(): (v or "") for k, v in attrs}
        if a.get("style"):
            self.css.append(a["style"])
        if tag == "title":
            self._in_title = not self.title
        elif tag == "style":
            self._in_style = True
        elif tag == "base" and a.get("href") and self.base_href is None:
            self.base_href = a["href"].strip()
        elif tag == "meta":
            self._meta(a)
        elif tag == "link":
            self._link(a)
        elif tag == "img":
            self._img(a)
        elif tag == "a" and a.get("href"):
            self.links.append(a["href"].strip())
        elif tag in _HEADINGS:
            self._close_heading()  # an unclosed heading ends where the next begins
            self._heading = (_HEADINGS[tag], [])

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.handle_starttag(tag, attrs)
        if tag in _HEADINGS or tag in {"title", "style"}:
            self.handle_endtag(tag)

    def handle_endtag(self, tag: str) -> None:
        if tag == "title":
            self._in_title = False
        elif tag == "style":
            self._end_style()
        elif tag in _HEADINGS or tag in {"body", "html"}:
            self._close_heading()

    def handle_data(self, data: str) -> None:
        if self._in_style:
            self._style.append(data)
        elif self._in_title:
            self.title += data
        if self._heading is not None:
            self._heading[1].append(data)

    def finish(self) -> None:
        """Settle what an unclosed <style> or heading left open."""
        if self._in_style and self.rawdata:  # Python 3.11 drops an unclosed <style>'s text on close()
            self._style.append(self.rawdata)
        self._end_style()
        self._close_heading()

    # Helpers -------------------------------------------------------------------------------------

    def _meta(self, a: dict[str, str]) -> None:
        key = (a.get("property") or a.get("name") or a.get("itemprop") or "").strip().lower()
        content = a.get("content", "").strip()
        if not key or not content:
            return
        if key == "theme-color":
            self.theme_colors.append(content)
        self.meta.setdefault(key, content)

    def _link(self, a: dict[str, str]) -> None:
        rels = set(a.get("rel", "").lower().split())
        href = a.get("href", "").strip()
        if not href:
            return
        if "apple-touch-icon" in rels or "apple-touch-icon-precomposed" in rels:
            self.icons.setdefault("apple-touch-icon", href)
        elif "icon" in rels:
            self.icons.setdefault("icon", href)

    def _img(self, a: dict[str, str]) -> None:
        src = a.get("src", "").strip()
        if self.logo_img is None and src:
            haystack = " ".join(a.get(k, "") for k in ("src", "alt", "class", "id")).lower()
            if "logo" in haystack:
                self.logo_img = src

    def _end_style(self) -> None:
        if self._style:
            self.css.extend(_CSS_BLOCK.findall("".join(self._style)))
        self._style = []
        self._in_style = False

    def _close_heading(self) -> None:
        if self._heading is None:
            return
        level, parts = self._heading
        self._heading = None
        text = _clean("".join(parts))
        if text and len(self.headings) < MAX_HEADINGS:
            self.headings.append({"level": level, "text": text})


def _clean(text: str) -> str:
    return " ".join(text.split())[:MAX_TEXT]


def _absolute(base: str, href: str | None) -> str | None:
    if not href or href.startswith(("data:", "javascript:")):
        return None
    url = urljoin(base, href)
    return url if urlsplit(url).scheme in {"http", "https"} else None


def _pick_logo(parser: _FactsParser) -> str | None:
    return (
        parser.meta.get("og:logo")
        or parser.logo_img
        or parser.icons.get("apple-touch-icon")
        or parser.icons.get("icon")
        or parser.meta.get("og:image")
    )


def _normalise_hex(digits: str) -> str:
    digits = digits.lower()
    if len(digits) in (3, 4):
        digits = "".join(c * 2 for c in digits[:3])
    return "#" + digits[:6]


def _colors_in(text: str) -> list[str]:
    found: list[tuple[int, str]] = [(m.start(), _normalise_hex(m.group(1))) for m in _HEX.finditer(text)]
    for m in _RGB.finditer(text):
        r, g, b = (int(x) for x in m.groups())
        if max(r, g, b) <= 255:
            found.append((m.start(), f"#{r:02x}{g:02x}{b:02x}"))
    return [color for _, color in sorted(found)]


def _rank_colors(parser: _FactsParser) -> list[str]:
    seen: list[str] = []
    for text in [*parser.theme_colors, *parser.css]:
        seen.extend(_colors_in(text))
    counts = Counter(seen)
    first = {color: index for index, color in reversed(list(enumerate(seen)))}
    return sorted(counts, key=lambda c: (-counts[c], first[c]))[:MAX_COLORS]


def _social_links(base: str, hrefs: list[str]) -> dict[str, str]:
    found: dict[str, str] = {}
    for href in hrefs:
        url = _absolute(base, href)
        if url is None:
            continue
        parts = urlsplit(url)
        host = (parts.hostname or "").lower().removeprefix("www.").removeprefix("m.")
        platform = SOCIAL_HOSTS.get(host) or SOCIAL_HOSTS.get(".".join(host.split(".")[-2:]))
        if platform is None or platform in found:
            continue
        if parts.path in ("", "/") or _SHARE_PATHS.match(parts.path):
            continue
        found[platform] = url
    return found
