"""The staff console in a real browser: Debian's Chromium, driven by Playwright, against the live TLS server.

Logs a staff user into /admin/, opens the teams, bids and snapshots lists, filters each, runs an admin
action on teams and on snapshots, and loads /docs until Swagger UI has rendered every operation of the
schema, /redoc until ReDoc has listed and laid out every one (each timed from navigation, and bounded by
RENDER_BOUND_SECONDS), and the guide until its headings show. Each of those pages carries its
Content-Security-Policy and the browser reports no violation of it. No request may leave for a host other
than the loopback server. Playwright's own browser download is never
used: `make test` installs Debian's chromium.
"""

from __future__ import annotations

import shutil
import time
from pathlib import Path
from urllib.parse import urlsplit

import pytest

from accounts.models import User
from scrapers.models import SnapshotStatus
from teams.models import Team, TeamStatus
from teams.services import team_hire
from tests.scrapers.factories import SnapshotFactory
from tests.support.factories import UserFactory
from tests.support.servers import serve_app_over_tls
from tests.tasks_market.factories import BidFactory

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
PASSWORD = "staff-password-123"

# Chromium fires `securitypolicyviolation` for every blocked load, inline code or worker; the page
# repeats each on the console, where Playwright hears it (next to Chromium's own "Refused to ..." line).
_REPORT_VIOLATIONS = """
document.addEventListener("securitypolicyviolation", (e) =>
  console.error(`CSP violation: ${e.violatedDirective} blocked ${e.blockedURI} at ${e.sourceFile}:${e.lineNumber}`));
"""


# ReDoc's menu footer always shows Redocly's logo from their CDN (no option turns it off). The docs use
# no outside host, so the policy blocks it by design and ReDoc drops the image (its onError): the one
# violation expected, and only this exact image (see docs/decisions.md#content-security-policy).
BLOCKED_BY_DESIGN = "https://cdn.redoc.ly/redoc/logo-mini.svg"


class PolicyWatch:
    """Every CSP violation any page of a browser context reports, and a check of each page's header."""

    def __init__(self, context):
        self.violations: list[str] = []
        self.blocked_by_design: list[str] = []
        context.add_init_script(_REPORT_VIOLATIONS)
        context.on("console", self._console)

    def _console(self, message) -> None:
        text = message.text
        if BLOCKED_BY_DESIGN in text and "img-src" in text:
            self.blocked_by_design.append(text)
        elif "CSP violation" in text or "Content Security Policy" in text:
            self.violations.append(f"{message.page.url if message.page else '?'}: {text}")

    @staticmethod
    def policy(response) -> str:
        """The page's enforced policy (a page without one fails here)."""
        assert response is not None
        policy = response.headers.get("content-security-policy")
        assert policy, f"{response.url} has no Content-Security-Policy header"
        return policy


# From navigation until every operation is on the page. Measured on the 2-core test machine under the
# suite's load: see RENDER_MEASURED; the bound leaves room for a slower, busier run.
RENDER_MEASURED = "docs 1.7-3.1 s, redoc 3.3-6.3 s (all 94 operations, three runs)"
RENDER_BOUND_SECONDS = 20
RENDER_TIMEOUT_MS = 120_000
_ALL_RENDERED = "([selector, n]) => document.querySelectorAll(selector).length >= n"


def _descriptions() -> list[str]:
    """The description of every operation of the document the pages render."""
    from django.test import Client

    schema = Client().get("/openapi.json", secure=True).json()
    methods = {"get", "post", "put", "patch", "delete"}
    return [op.get("description", "") for item in schema["paths"].values() for m, op in item.items() if m in methods]


def seed():
    staff = User.objects.create_user("console@example.com", PASSWORD, is_staff=True, is_superuser=True)
    for name in ("Alpha", "Beta"):
        team_hire(owner=UserFactory(), team_type="content", display_name=f"{name} content team", tier="starter")
    Team.objects.filter(display_name="Beta content team").update(status=TeamStatus.PAUSED)
    BidFactory(status="pending")
    BidFactory(status="pending")
    BidFactory(status="withdrawn")
    SnapshotFactory()
    SnapshotFactory(status=SnapshotStatus.FAILED)
    return staff


def rows(page) -> list[str]:
    return [row.inner_text() for row in page.locator("#result_list tbody tr").all()]


def filter_by(page, field: str, value: str) -> None:
    page.locator(f'#changelist-filter a[href*="{field}__exact={value}"]').first.click()
    page.wait_for_load_state()
    assert f"{field}__exact={value}" in page.url


def run_action(page, action: str) -> str:
    page.locator("#result_list tbody input.action-select").first.check()
    page.select_option("select[name=action]", action)
    page.locator("button[name=index]").click()
    page.wait_for_load_state()
    return page.locator("ul.messagelist").inner_text()


@pytest.mark.timeout(300)
@pytest.mark.django_db(transaction=True)
def test_staff_console_in_chromium(tmp_path):
    from playwright.sync_api import sync_playwright

    assert Path(CHROMIUM).exists(), "Debian's chromium is missing: `make test` installs it (apt-get install chromium)"
    staff = seed()  # the ORM runs before Playwright starts its event loop in this thread
    descriptions = _descriptions()
    expected = len(descriptions)
    render_seconds: dict[str, float] = {}
    requested: list[str] = []
    seen: dict[str, list[str]] = {}

    with serve_app_over_tls(tmp_path) as base, sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
        context = browser.new_context(ignore_https_errors=True, viewport={"width": 1280, "height": 900})
        context.on("request", lambda request: requested.append(request.url))
        watch = PolicyWatch(context)
        page = context.new_page()
        policies: dict[str, str] = {}

        policies["admin login"] = watch.policy(page.goto(f"{base}/admin/login/?next=/admin/"))
        page.fill("#id_username", "console@example.com")
        page.fill("#id_password", PASSWORD)
        page.locator("input[type=submit]").click()
        page.wait_for_load_state()
        assert urlsplit(page.url).path == "/admin/", page.content()[:2000]
        assert page.locator("#site-name").is_visible()
        policies["admin"] = watch.policy(page.goto(f"{base}/admin/"))
        assert page.locator("#content-main").is_visible()

        page.goto(f"{base}/admin/teams/team/")
        seen["teams"] = rows(page)
        filter_by(page, "status", "active")
        seen["active teams"] = rows(page)
        seen["unsubscribe"] = [run_action(page, "unsubscribe")]
        page.screenshot(path=str(tmp_path / "admin-teams.png"), full_page=True)

        # A change form (its widgets and their scripts) under the same policy.
        policies["admin change form"] = watch.policy(page.goto(f"{base}/admin/accounts/user/{staff.pk}/change/"))
        assert page.locator("#content-main form").is_visible()

        page.goto(f"{base}/admin/tasks_market/bid/")
        seen["bids"] = rows(page)
        filter_by(page, "status", "pending")
        seen["pending bids"] = rows(page)

        page.goto(f"{base}/admin/scrapers/snapshot/")
        seen["snapshots"] = rows(page)
        filter_by(page, "status", "running")
        seen["running snapshots"] = rows(page)
        seen["refresh"] = [run_action(page, "refresh_from_provider")]

        started = time.monotonic()
        policies["docs"] = watch.policy(page.goto(f"{base}/docs"))
        page.wait_for_function(_ALL_RENDERED, arg=[".opblock", expected], timeout=RENDER_TIMEOUT_MS)
        render_seconds["docs"] = time.monotonic() - started
        operations = page.locator(".opblock").count()
        page.screenshot(path=str(tmp_path / "docs.png"))

        policies["guide"] = watch.policy(page.goto(f"{base}/docs/guide"))
        guide_headings = page.locator("main h1, main h2").count()

        # ReDoc in a context of its own: its one outside request (BLOCKED_BY_DESIGN) is refused by the
        # policy before it leaves, and is checked to be the only one.
        redoc_context = browser.new_context(ignore_https_errors=True, viewport={"width": 1280, "height": 900})
        redoc_requested: list[str] = []
        redoc_context.on("request", lambda request: redoc_requested.append(request.url))
        redoc_watch = PolicyWatch(redoc_context)
        redoc = redoc_context.new_page()
        started = time.monotonic()
        policies["redoc"] = redoc_watch.policy(redoc.goto(f"{base}/redoc"))
        # Every operation both in the menu and as its section of the page.
        redoc.wait_for_function(
            _ALL_RENDERED, arg=["[data-item-id*='operation/']", expected], timeout=RENDER_TIMEOUT_MS
        )
        redoc.wait_for_function(
            _ALL_RENDERED, arg=["[data-section-id*='operation/']", expected], timeout=RENDER_TIMEOUT_MS
        )
        render_seconds["redoc"] = time.monotonic() - started
        redoc_operations = redoc.locator("[data-item-id*='operation/']").count()
        redoc_text = redoc.locator("body").inner_text()
        redoc.screenshot(path=str(tmp_path / "redoc.png"))
        browser.close()

    assert len(seen["teams"]) == 2
    assert len(seen["active teams"]) == 1 and "Alpha content team" in seen["active teams"][0]
    assert "Unsubscribed 1 team(s)." in seen["unsubscribe"][0]
    assert Team.objects.get(display_name="Alpha content team").status == TeamStatus.CANCELLING
    assert len(seen["bids"]) == 3 and len(seen["pending bids"]) == 2
    assert all("Pending" in row for row in seen["pending bids"])
    assert len(seen["snapshots"]) == 2 and len(seen["running snapshots"]) == 1
    assert "Asked the provider about 1 running snapshot(s)." in seen["refresh"][0]
    assert operations > 50, f"Swagger UI rendered only {operations} operations"
    assert redoc_operations > 50, f"ReDoc listed only {redoc_operations} operations"
    print(f"rendered all {expected} operations: " + ", ".join(f"{k} {v:.1f} s" for k, v in render_seconds.items()))
    assert all(descriptions) and len(set(descriptions)) == len(descriptions), "an operation repeats a description"
    assert "Subclasses set" not in redoc_text, "a base class's docstring is shown as a description"
    for name, seconds in render_seconds.items():
        assert seconds < RENDER_BOUND_SECONDS, f"{name} took {seconds:.1f} s to render every operation"
    assert guide_headings >= 1, "the guide rendered no headings"
    assert set(policies) == {"admin login", "admin", "admin change form", "docs", "redoc", "guide"}
    assert watch.violations == [], "\n".join(watch.violations)
    assert redoc_watch.violations == [], "\n".join(redoc_watch.violations)
    assert {url for url in redoc_requested if urlsplit(url).hostname not in ("127.0.0.1", None)} <= {BLOCKED_BY_DESIGN}

    outside = sorted({url for url in requested if urlsplit(url).hostname not in ("127.0.0.1", None)})
    assert not outside, f"the browser asked hosts other than the server: {outside}"
    assert (tmp_path / "admin-teams.png").stat().st_size > 10_000
