"""Login guessing is throttled per account and per client (IPv6 per /64), on the API and
the admin, without telling which accounts exist."""

from __future__ import annotations

import pytest

from accounts.throttle import LOGIN_ACCOUNT, LOGIN_CLIENT
from core.http.ratelimit import client_key
from core.models import RateLimitOverride
from tests.support.factories import DEFAULT_PASSWORD, UserFactory
from tests.support.ratelimit import login_window, one_window

pytestmark = pytest.mark.django_db

TOKEN = "/api/v1/auth/token"


def login(api, email: str, password: str = "wrong-password", ip: str = "198.51.100.7"):
    return api.post(TOKEN, {"email": email, "password": password}, REMOTE_ADDR=ip)


def assert_throttled(response):
    assert response.status_code == 429
    assert response.json() == {"detail": "Rate limit exceeded. Try again later.", "code": "rate_limited"}
    assert 1 <= int(response["Retry-After"]) <= LOGIN_ACCOUNT.period


def test_an_account_is_locked_after_its_failures_even_from_many_clients_and_the_right_password_too(api):
    UserFactory(email="victim@example.com")
    with one_window(login_window(LOGIN_ACCOUNT)):
        for n in range(LOGIN_ACCOUNT.limit):
            assert login(api, "victim@example.com", ip=f"198.51.100.{n + 1}").status_code == 401

        assert_throttled(login(api, " Victim@Example.com ", ip="203.0.113.200"))
        # Over the cap the password is not checked: a right guess cannot be told from a wrong one.
        assert_throttled(login(api, "victim@example.com", DEFAULT_PASSWORD, ip="203.0.113.201"))


def test_unknown_and_known_accounts_are_answered_alike(api):
    UserFactory(email="known@example.com")
    answers = {}
    with one_window(login_window(LOGIN_ACCOUNT)):
        for email in ("known@example.com", "nobody@example.com"):
            responses = [login(api, email, ip=f"192.0.2.{n}") for n in range(LOGIN_ACCOUNT.limit + 1)]
            answers[email] = [(r.status_code, r.json()["code"]) for r in responses]

    assert answers["known@example.com"] == answers["nobody@example.com"]
    assert answers["known@example.com"][-1] == (429, "rate_limited")


def test_a_client_is_throttled_across_accounts_and_an_ipv6_client_per_64(api):
    with one_window(login_window(LOGIN_CLIENT)):
        for n in range(LOGIN_CLIENT.limit):
            # A fresh address inside the same /64 for every guess, and a fresh account each time.
            assert login(api, f"user{n}@example.com", ip=f"2001:db8:1:2::{n + 1:x}").status_code == 401

        assert_throttled(login(api, "another@example.com", ip="2001:db8:1:2:ffff::1"))
    assert login(api, "another@example.com", ip="2001:db8:1:3::1").status_code == 401  # another /64


def test_a_successful_login_does_not_use_up_the_allowance(api):
    UserFactory(email="regular@example.com")
    with one_window(login_window(LOGIN_ACCOUNT)):  # else a new window could give the allowance back
        for _ in range(LOGIN_ACCOUNT.limit + 5):
            assert login(api, "regular@example.com", DEFAULT_PASSWORD).status_code == 200


def test_the_path_buckets_count_an_ipv6_client_per_64():
    assert client_key("2001:db8:1:2:aaaa::1") == client_key("2001:db8:1:2:bbbb::2") == "2001:db8:1:2::/64"
    assert client_key("::ffff:198.51.100.7") == "198.51.100.7"


def test_the_admin_login_is_throttled_per_account(api):
    UserFactory(email="admin-victim@example.com", is_staff=True)
    client = api  # a form post, as a browser sends it
    form = {"username": "admin-victim@example.com", "password": "wrong-password", "next": "/admin/"}
    with one_window(login_window(LOGIN_ACCOUNT)):
        for n in range(LOGIN_ACCOUNT.limit):
            response = client.post("/admin/login/", form, format="multipart", REMOTE_ADDR=f"198.51.100.{n + 1}")
            assert response.status_code == 200  # the form again, with its error
            assert b"Please enter the correct" in response.content

        assert_throttled(client.post("/admin/login/", form, format="multipart", REMOTE_ADDR="203.0.113.9"))


def test_registering_taken_addresses_costs_the_client_guesses(api):
    UserFactory(email="taken@example.com")
    # Staff lift the client's registration bucket (10 an hour), so what refuses below is the guess count.
    RateLimitOverride.objects.create(network="198.51.100.50", rule="auth_register", limit=LOGIN_CLIENT.limit + 10)
    body = {"email": "taken@example.com", "password": "a-long-password-1"}
    with one_window(login_window(LOGIN_CLIENT)):
        for _ in range(LOGIN_CLIENT.limit):
            assert api.post("/api/v1/auth/register", body, REMOTE_ADDR="198.51.100.50").status_code == 409

        assert_throttled(api.post("/api/v1/auth/register", body, REMOTE_ADDR="198.51.100.50"))
