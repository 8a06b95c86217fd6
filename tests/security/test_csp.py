"""Each kind of page answers with its own Content-Security-Policy (see docs/decisions.md#content-security-policy):
the HTML pages allow what they load and nothing else, JSON answers load nothing. The browser side (every
page renders with no violation) is tests/ops/test_browser.py and tests/ops/test_checkout_browser.py."""

from __future__ import annotations

import re

import pytest

pytestmark = pytest.mark.django_db

LOCKED = {"default-src 'none'", "base-uri 'none'", "frame-ancestors 'none'"}


def policy_of(response) -> set[str]:
    header = response.headers.get("Content-Security-Policy")
    assert header, f"no Content-Security-Policy on {response.request['PATH_INFO']}"
    return {part.strip() for part in header.split(";")}


def nonce_of(policy: set[str], directive: str) -> str:
    [value] = [p for p in policy if p.startswith(directive + " ")]
    return re.search(r"'nonce-([^']+)'", value).group(1)


def test_swagger_ui_runs_its_bundles_and_its_inline_script_by_nonce(api):
    response = api.get("/docs")
    policy = policy_of(response)
    nonce = nonce_of(policy, "script-src")
    assert policy >= LOCKED
    assert f"script-src 'self' 'nonce-{nonce}'" in policy and f"style-src 'self' 'nonce-{nonce}'" in policy
    assert "connect-src 'self'" in policy and "'unsafe-inline'" not in str(policy)
    html = response.content.decode()
    assert html.count(f'nonce="{nonce}"') == 2  # the start-up <script> and the <style>


def test_redoc_may_start_its_worker_from_a_blob_and_inject_styles(api):
    policy = policy_of(api.get("/redoc"))
    assert policy >= LOCKED
    assert {"script-src 'self'", "worker-src blob:", "connect-src 'self'", "style-src 'self' 'unsafe-inline'"} <= policy


def test_the_guide_runs_no_script_and_styles_by_nonce(api):
    response = api.get("/docs/guide")
    assert response.status_code == 200
    policy = policy_of(response)
    assert policy >= LOCKED and "form-action 'none'" in policy
    assert not any(p.startswith("script-src") for p in policy)  # default-src 'none' forbids every script
    assert f'<style nonce="{nonce_of(policy, "style-src")}">' in response.content.decode()


def test_the_checkout_page_posts_to_itself_and_runs_no_script(api):
    response = api.get("/checkout/" + "x" * 40)  # the checkout view's own "no such session" page
    assert response.status_code == 404
    policy = policy_of(response)
    assert policy >= LOCKED and "form-action 'self'" in policy
    assert not any(p.startswith("script-src") for p in policy)
    assert f'<style nonce="{nonce_of(policy, "style-src")}">' in response.content.decode()


def test_the_admin_loads_its_own_static_files_only(api):
    response = api.get("/admin/login/")
    assert response.status_code == 200
    policy = policy_of(response)
    assert {"script-src 'self'", "style-src 'self'", "form-action 'self'", "frame-ancestors 'none'"} <= policy
    assert "'unsafe-inline'" not in str(policy) and "'nonce-" not in str(policy)


@pytest.mark.parametrize("path", ["/api/v1/auth/me", "/health", "/openapi.json", "/api/v1/no-such-route"])
def test_json_answers_load_nothing(api, path):
    policy = policy_of(api.get(path))
    assert policy == LOCKED | {"form-action 'none'"}


def test_the_other_security_headers_stay(api):
    response = api.get("/docs")
    assert response["X-Frame-Options"] == "DENY"
    assert response["X-Content-Type-Options"] == "nosniff"
    assert "Strict-Transport-Security" in response
