"""The docs in docs/ are served at /docs/guide, rendered from the same files a clone reads."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from config.guide import PAGES

DOCS = Path(__file__).resolve().parents[2] / "docs"


@pytest.mark.parametrize("page", list(PAGES))
def test_every_page_is_served(api, page):
    response = api.get(f"/docs/guide/{page}" if page else "/docs/guide")

    assert response.status_code == 200
    assert response["Content-Type"].startswith("text/html")
    assert "X-RateLimit-Limit" not in response  # /docs and what is under it are not rate limited
    html = response.content.decode()
    first_heading = (DOCS / PAGES[page][0]).read_text().splitlines()[0].lstrip("# ")
    assert f">{first_heading}</h1>" in html


def test_links_between_pages_point_at_served_pages(api):
    html = api.get("/docs/guide").content.decode()

    assert 'href="/docs/guide/guide"' in html
    assert ".md" not in "".join(re.findall(r'href="([^"]+)"', html))


def test_anchors_land_on_headings(api):
    decisions = api.get("/docs/guide/decisions").content.decode()
    guide = api.get("/docs/guide/guide").content.decode()

    assert 'href="/docs/guide/guide#retries"' in decisions
    assert '<h2 id="retries">' in guide


def test_unknown_page_is_404(api):
    assert api.get("/docs/guide/nope").status_code == 404


def test_docs_never_send_readers_outside_the_repository():
    """The README and docs/ answer their own questions: nothing points at ../shared or other checkouts."""
    readme = (DOCS.parent / "README.md").read_text()
    for text in [readme, *(path.read_text() for path in DOCS.glob("*.md"))]:
        assert "../shared" not in text
        assert "SPEC.md" not in text and "CONTRACT.md" not in text
