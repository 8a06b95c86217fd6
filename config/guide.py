"""The project's own documentation (docs/*.md), served as HTML at /docs/guide beside Swagger UI, and the
landing page at `/`.

The Markdown files in docs/ are the source: a clone of the repository reads them as they are, and the
running service renders the same files, so the two cannot drift. Pages are rendered once per process;
the guide's commands name the server they run against (`BASE=...`), which the served copy replaces by
this server's own origin (PUBLIC_BASE_URL).
"""

from __future__ import annotations

import re
from functools import cache

from django.conf import settings
from django.http import Http404, HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import render
from django.utils.html import escape
from django.utils.safestring import mark_safe
from markdown_it import MarkdownIt

# URL name → (file in docs/, title). /docs/guide opens on the guide itself; "index" lists the documents.
PAGES = {
    "": ("guide.md", "API guide"),
    "guide": ("guide.md", "API guide"),
    "index": ("README.md", "Documentation"),
    "tour": ("tour.md", "A five-minute tour"),
    "decisions": ("decisions.md", "Decisions"),
    "operations": ("operations.md", "Operations"),
    "architecture": ("architecture.md", "Architecture"),
    "payouts": ("payouts.md", "Paying sellers"),
}
_FILE_TO_PAGE = {filename: page for page, (filename, _title) in PAGES.items()}  # guide.md → "guide"
# How the guide's commands name the server (docs/guide.md, "Getting started"); served, the real origin.
GUIDE_ORIGINS = ("https://127.0.0.1:${PORT:-8443}", "https://127.0.0.1:8443")
# Links between the Markdown files ("guide.md#retries") become links between the served pages.
_MD_LINK = re.compile(r'href="(?P<file>[a-z_]+\.md)(?P<anchor>#[^"]*)?"')


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")


@cache
def render_page(page: str) -> str:
    filename, _title = PAGES[page]
    source = (settings.BASE_DIR / "docs" / filename).read_text(encoding="utf-8")
    md = MarkdownIt("commonmark", {"html": False}).enable("table")
    tokens = md.parse(source)
    # Headings get ids (GitHub's style) so that "guide.md#retries" lands on its section.
    for index, token in enumerate(tokens):
        if token.type == "heading_open":
            token.attrSet("id", _slug(tokens[index + 1].content))
    html = md.renderer.render(tokens, md.options, {})

    def relink(match: re.Match) -> str:
        target = _FILE_TO_PAGE.get(match["file"])
        if target is None:
            return match[0]
        return f'href="/docs/guide{"/" + target if target else ""}{match["anchor"] or ""}"'

    return _MD_LINK.sub(relink, html)


def with_origin(html: str, origin: str) -> str:
    """The rendered page with the guide's placeholder origin replaced by `origin` (HTML-escaped)."""
    for placeholder in GUIDE_ORIGINS:
        html = html.replace(placeholder, escape(origin))
    return html


def guide_page(request: HttpRequest, page: str = "") -> HttpResponse:
    if page not in PAGES:
        raise Http404("No such page.")
    context = {
        "title": PAGES[page][1],
        "body": mark_safe(with_origin(render_page(page), settings.PUBLIC_BASE_URL)),  # noqa: S308  (our Markdown)
        "pages": [(name, title) for name, (_file, title) in PAGES.items() if name],
        "current": page or "guide",
    }
    return render(request, "docs/guide.html", context)


def landing_page(request: HttpRequest) -> HttpResponse:
    """`/` (the admin's "View site"): where the docs, the guide, the admin and the local demo are."""
    return render(
        request,
        "landing.html",
        {
            "origin": settings.PUBLIC_BASE_URL,
            "demo_agent": settings.DEMO_AGENT_ENABLED,
            "demo_inbox": settings.DEMO_INBOX_ENABLED,
        },
    )


def api_root(request: HttpRequest) -> JsonResponse:
    """`/api/v1/`: not an operation, a signpost to the documents that describe the operations."""
    return JsonResponse(
        {
            "name": "Brand Marketing and Task Platform API",
            "version": "v1",
            "openapi": "/openapi.json",
            "docs": "/docs",
            "redoc": "/redoc",
            "guide": "/docs/guide",
            "health": "/health",
        }
    )
