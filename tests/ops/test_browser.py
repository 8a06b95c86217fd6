"""The staff console in a real browser: Debian's Chromium, driven by Playwright, against the live TLS server.

Logs a staff user into /admin/, opens the teams, bids and snapshots lists, filters each, runs an admin
action on teams and on snapshots, and loads /docs until Swagger UI has rendered the operations. No
request may leave for a host other than the loopback server. Playwright's own browser download is never
used: `make test` installs Debian's chromium.
"""

from __future__ import annotations

import shutil
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
    seed()  # the ORM runs before Playwright starts its event loop in this thread
    requested: list[str] = []
    seen: dict[str, list[str]] = {}

    with serve_app_over_tls(tmp_path) as base, sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
        context = browser.new_context(ignore_https_errors=True, viewport={"width": 1280, "height": 900})
        context.on("request", lambda request: requested.append(request.url))
        page = context.new_page()

        page.goto(f"{base}/admin/login/?next=/admin/")
        page.fill("#id_username", "console@example.com")
        page.fill("#id_password", PASSWORD)
        page.locator("input[type=submit]").click()
        page.wait_for_load_state()
        assert urlsplit(page.url).path == "/admin/", page.content()[:2000]
        assert page.locator("#site-name").is_visible()

        page.goto(f"{base}/admin/teams/team/")
        seen["teams"] = rows(page)
        filter_by(page, "status", "active")
        seen["active teams"] = rows(page)
        seen["unsubscribe"] = [run_action(page, "unsubscribe")]
        page.screenshot(path=str(tmp_path / "admin-teams.png"), full_page=True)

        page.goto(f"{base}/admin/tasks_market/bid/")
        seen["bids"] = rows(page)
        filter_by(page, "status", "pending")
        seen["pending bids"] = rows(page)

        page.goto(f"{base}/admin/scrapers/snapshot/")
        seen["snapshots"] = rows(page)
        filter_by(page, "status", "running")
        seen["running snapshots"] = rows(page)
        seen["refresh"] = [run_action(page, "refresh_from_provider")]

        page.goto(f"{base}/docs")
        page.wait_for_selector(".opblock", timeout=60_000)
        operations = page.locator(".opblock").count()
        page.screenshot(path=str(tmp_path / "docs.png"))
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

    outside = sorted({url for url in requested if urlsplit(url).hostname not in ("127.0.0.1", None)})
    assert not outside, f"the browser asked hosts other than the server: {outside}"
    assert (tmp_path / "admin-teams.png").stat().st_size > 10_000
