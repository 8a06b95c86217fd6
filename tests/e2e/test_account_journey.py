"""An account's whole life from the outside, on the real `make run` server: register, verify the address with
the token the server's worker mailed (a file under its VAR_DIR/mail/, as `make run` writes mail; no API key
before), log in, change the password (the old session ends), log out (that session ends), reset the
password with the mailed token, the token spent once, then close the account. Only HTTP and the mail files;
run shape only (`make serve` sends real mail).
"""

from __future__ import annotations

import email
import re
import time
import uuid
from email import policy
from pathlib import Path

import pytest

from tests.e2e.harness import PASSWORD, Api, Server

NEW_PASSWORD = "a brand new passphrase 1"
RESET_PASSWORD = "reset passphrase after mail 2"
TOKEN_LINE = re.compile(r"^([A-Za-z0-9_-]+\.[A-Za-z0-9-]+)$", re.MULTILINE)
SENT_TOKEN = re.compile(r'"token": "([^"]+)"')


def wait_for_mail(mail_dir: Path, to: str, subject: str, timeout: float = 20.0) -> str:
    """The body of the first mail to `to` with this subject in the directory, polled until the worker has
    written it."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        for path in sorted(mail_dir.glob("*.eml")) if mail_dir.is_dir() else []:
            message = email.message_from_bytes(path.read_bytes(), policy=policy.default)
            if message["To"] == to and message["Subject"] == subject:
                return message.get_body(preferencelist=("plain",)).get_content()
        time.sleep(0.1)
    raise AssertionError(f"no mail to {to} ({subject!r}) in {mail_dir} after {timeout}s")


def refused(response, status: int) -> None:
    assert response.status_code == status, f"{response.status_code} {response.text}"


@pytest.mark.timeout(120)
@pytest.mark.parametrize("server", ["run"], indirect=True)
def test_an_account_from_registration_to_deletion(server: Server, scenario):
    address = f"journey-{uuid.uuid4().hex[:10]}@example.com"
    api = Api(server, scenario)

    def token(password: str) -> dict:
        answer = api.post("/api/v1/auth/token", json={"email": address, "password": password})
        assert answer.status_code == 200, answer.text
        return answer.json()

    def as_user(access: str) -> dict[str, str]:
        return {"Authorization": f"Bearer {access}"}

    registered = api.post("/api/v1/auth/register", json={"email": address, "password": PASSWORD})
    assert registered.status_code == 201, registered.text
    first = token(PASSWORD)
    me = api.get("/api/v1/auth/me", headers=as_user(first["access"]))
    assert me.status_code == 200 and me.json()["email"] == address, me.text
    assert (me.json()["email_verified"], me.json()["credits"]) == (False, 0), me.text

    # Unverified, no API key; the token mailed to the address verifies it and brings the sign-up credits.
    refused(api.post("/api/v1/auth/api-keys", headers=as_user(first["access"]), json={"name": "ci"}), 403)
    mailed = wait_for_mail(server.var_dir / "mail", address, "Verify your e-mail address")
    verified = api.post(
        "/api/v1/auth/email/verify", headers=as_user(first["access"]), json={"token": SENT_TOKEN.search(mailed)[1]}
    )
    assert verified.status_code == 200 and verified.json()["email_verified"] is True, verified.text
    assert verified.json()["credits"] > 0, verified.text
    key = api.post("/api/v1/auth/api-keys", headers=as_user(first["access"]), json={"name": "ci"})
    assert key.status_code == 201, key.text

    # Changing the password ends every session; the answer is the caller's fresh pair.
    changed = api.post(
        "/api/v1/auth/password/change",
        headers=as_user(first["access"]),
        json={"current_password": PASSWORD, "new_password": NEW_PASSWORD},
    )
    assert changed.status_code == 200, changed.text
    refused(api.post("/api/v1/auth/token/refresh", json={"refresh": first["refresh"]}), 401)
    fresh = changed.json()

    # Logging out revokes that session's refresh token.
    logged_out = api.post("/api/v1/auth/logout", headers=as_user(fresh["access"]), json={"refresh": fresh["refresh"]})
    assert logged_out.status_code == 204, logged_out.text
    refused(api.post("/api/v1/auth/token/refresh", json={"refresh": fresh["refresh"]}), 401)

    # The reset mail is written by the server's worker; the token is in its body.
    asked = api.post("/api/v1/auth/password/reset", json={"email": address})
    assert asked.status_code == 202, asked.text
    body = wait_for_mail(server.var_dir / "mail", address, "Reset your password")
    [reset_token] = set(TOKEN_LINE.findall(body))
    confirm = {"token": reset_token, "new_password": RESET_PASSWORD}
    confirmed = api.post("/api/v1/auth/password/reset/confirm", json=confirm)
    assert confirmed.status_code == 204, confirmed.text
    after_reset = token(RESET_PASSWORD)
    again = api.post("/api/v1/auth/password/reset/confirm", json={**confirm, "new_password": "yet another one 3"})
    refused(again, 422)
    assert again.json()["detail"][0]["loc"] == ["body", "token"], again.text

    # Closing the account: its password no longer logs in.
    closed = api.request(
        "DELETE", "/api/v1/auth/me", headers=as_user(after_reset["access"]), json={"current_password": RESET_PASSWORD}
    )
    assert closed.status_code == 204, closed.text
    refused(api.post("/api/v1/auth/token", json={"email": address, "password": RESET_PASSWORD}), 401)
    api.close()
    scenario.effects.update(mail="verification and reset tokens read", account="deleted")
