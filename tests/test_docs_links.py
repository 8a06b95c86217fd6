"""Every link in README.md and docs/*.md lands: a relative link names a file that exists, and a `#anchor`
names a heading of its page, computed as GitHub computes it. The same holds for the `docs/<page>.md#anchor`
references the code and the tests make in their comments and docstrings."""

from __future__ import annotations

import re
from functools import cache
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
CODE = ("config", "core", "signed_delivery", "accounts", "assistant", "brands", "demo", "payments", "scrapers")
CODE += ("demo_seed", "tasks_market", "teams", "webhooks_app", "scripts", "tests", "bench", "tools")

FENCE = re.compile(r"^(```|~~~).*?^\1[^\n]*$", re.DOTALL | re.MULTILINE)
CODE_SPAN = re.compile(r"(`+)(?!`).+?(?<!`)\1(?!`)", re.DOTALL)
INLINE_LINK = re.compile(r"!?\[(?:[^\[\]]|\[[^\]]*\])*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
REFERENCE_LINK = re.compile(r"^ {0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s.*)?$", re.MULTILINE)
HTML_LINK = re.compile(r"""<a\s[^>]*href=["']([^"']+)["']""", re.IGNORECASE)
HEADING = re.compile(r"^ {0,3}(#{1,6})[ \t]+(.*?)(?:[ \t]+#+)?[ \t]*$", re.MULTILINE)
CODE_REFERENCE = re.compile(r"\b(docs/[a-z_]+\.md|README\.md)#([A-Za-z0-9_-]+)")


def github_slug(heading: str) -> str:
    """GitHub's anchor of a heading: its text as rendered (code spans and link text kept, emphasis and
    HTML dropped), lower-cased, every character but letters, digits, `_`, `-` and spaces dropped, each
    space a `-`."""
    text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", heading)
    text = re.sub(r"<[^>]+>", "", text)
    text = re.sub(r"(\*{1,3}|_{1,3})(\S.*?\S|\S)\1", r"\2", text)
    text = text.replace("`", "").strip().lower()
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


@cache
def anchors(page: Path) -> frozenset[str]:
    """The anchors of a Markdown page's headings; a repeated heading gets `-1`, `-2`, ... as on GitHub."""
    seen: dict[str, int] = {}
    found = set()
    for match in HEADING.finditer(FENCE.sub("", page.read_text())):
        slug = github_slug(match[2])
        found.add(f"{slug}-{seen[slug]}" if slug in seen else slug)
        seen[slug] = seen.get(slug, 0) + 1
    return frozenset(found)


def links(page: Path) -> list[str]:
    """The link targets of a page, outside code blocks and code spans."""
    text = CODE_SPAN.sub("", FENCE.sub("", page.read_text()))
    return [m[1] for pattern in (INLINE_LINK, REFERENCE_LINK, HTML_LINK) for m in pattern.finditer(text)]


def broken(page: Path, target: str) -> str | None:
    """Why `target`, linked from `page`, does not land; None when it does (or is not ours to check)."""
    if re.match(r"^[a-z][a-z0-9+.-]*:", target, re.IGNORECASE) or target.startswith("//"):
        return None  # https:, mailto: ...: another site's business
    path, _, anchor = target.partition("#")
    destination = (page.parent / path).resolve() if path else page
    if not destination.exists():
        return f"{target}: no such file"
    if path and not destination.is_relative_to(ROOT):
        return f"{target}: outside the repository"
    if anchor and destination.suffix == ".md" and anchor not in anchors(destination):
        return f"{target}: no heading with the anchor #{anchor} in {destination.name}"
    if anchor and destination.suffix != ".md" and not re.fullmatch(r"L\d+(-L\d+)?", anchor):
        return f"{target}: an anchor into a file that has no headings"
    return None


@pytest.mark.parametrize("page", PAGES, ids=lambda page: str(page.relative_to(ROOT)))
def test_every_link_lands(page):
    assert [problem for target in links(page) if (problem := broken(page, target))] == []


def test_the_code_and_the_tests_cite_headings_that_exist():
    cited = []
    for package in CODE:
        for path in (ROOT / package).rglob("*.py"):
            if "node_modules" in path.parts:
                continue
            for match in CODE_REFERENCE.finditer(path.read_text()):
                page = ROOT / match[1]
                if not page.exists() or match[2] not in anchors(page):
                    cited.append(f"{path.relative_to(ROOT)}: {match[0]}")
    assert cited == []


def test_the_docs_cite_headings_that_exist_in_plain_text_too():
    """`docs/operations.md#periodic-jobs` written in prose or a code span is a reference a reader follows."""
    cited = []
    for page in PAGES:
        for match in CODE_REFERENCE.finditer(page.read_text()):
            target = ROOT / match[1]
            if not target.exists() or match[2] not in anchors(target):
                cited.append(f"{page.relative_to(ROOT)}: {match[0]}")
    assert cited == []


@pytest.mark.parametrize(
    ("heading", "anchor"),
    [
        ("The production shape: `make serve`", "the-production-shape-make-serve"),
        ("Retries and `Idempotency-Key`", "retries-and-idempotency-key"),
        ("Payments webhook (inbound)", "payments-webhook-inbound"),
        ("The sellers' API", "the-sellers-api"),
        ("A -- B", "a----b"),
        ("**Bold** and [a link](x.md)", "bold-and-a-link"),
        ("`signed_delivery` engine", "signed_delivery-engine"),
    ],
)
def test_anchors_are_computed_as_github_does(heading, anchor):
    assert github_slug(heading) == anchor


def test_a_broken_link_is_found(tmp_path):
    page = tmp_path / "page.md"
    page.write_text("# Title\n\n[ok](#title) [bad](#nope) `[in code](#nope)`\n\n```\n[in a block](#nope)\n```\n")
    assert links(page) == ["#title", "#nope"]
    assert broken(page, "#nope") is not None and broken(page, "#title") is None
