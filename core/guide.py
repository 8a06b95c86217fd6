"""The project's own documentation (docs/*.md), served as HTML at /docs/guide beside Swagger UI.

The Markdown files in docs/ are the source: a clone of the repository reads them as they are, and the
running service renders the same files, so the two cannot drift. Pages are rendered once per process.
"""

from __future__ import annotations

import re
from functools import cache

from django.conf import settings
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import render
from django.utils.safestring import mark_safe
from markdown_it import MarkdownIt

# URL name → (file in docs/, title). "" is the index.
PAGES = {
    "": ("README.md", "Documentation"),
    "guide": ("guide.md", "API guide"),
    "decisions": ("decisions.md", "Decisions"),
    "operations": ("operations.md", "Operations"),
    "architecture": ("architecture.md", "Architecture"),
    "payouts": ("payouts.md", "Paying sellers"),
}
_FILE_TO_PAGE = {filename: page for page, (filename, _title) in PAGES.items()}
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


def guide_page(request: HttpRequest, page: str = "") -> HttpResponse:
    if page not in PAGES:
        raise Http404("No such page.")
    context = {
        "title": PAGES[page][1],
        "body": mark_safe(render_page(page)),  # noqa: S308  (our own Markdown, raw HTML disabled)
        "pages": [(name, title) for name, (_file, title) in PAGES.items()],
        "current": page,
    }
    return render(request, "docs/guide.html", context)
