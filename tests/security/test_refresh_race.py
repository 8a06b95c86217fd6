"""Of N concurrent refreshes of one refresh token exactly one succeeds.

Real threads, each with its own database connection, through the API: a stolen refresh token raced
against its owner must not fork into several live ones.
"""

from __future__ import annotations

import threading

import pytest
from django.db import connection

from tests.conftest import HttpsAPIClient
from tests.support.factories import DEFAULT_PASSWORD, UserFactory

CONCURRENT = 6
ROUNDS = 3  # check-then-insert sometimes serialises by luck; three rounds in a row do not


def race(refresh: str) -> list[int]:
    start = threading.Barrier(CONCURRENT)
    statuses: list[int] = []
    lock = threading.Lock()

    def spend():
        try:
            start.wait()
            response = HttpsAPIClient().post("/api/v1/auth/token/refresh", {"refresh": refresh})
            with lock:
                statuses.append(response.status_code)
        finally:
            connection.close()

    threads = [threading.Thread(target=spend) for _ in range(CONCURRENT)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    return sorted(statuses)


@pytest.mark.django_db(transaction=True)
def test_concurrent_refreshes_of_one_token_let_exactly_one_through():
    UserFactory(email="racer@example.com")
    login = {"email": "racer@example.com", "password": DEFAULT_PASSWORD}
    tokens = [HttpsAPIClient().post("/api/v1/auth/token", login).json()["refresh"] for _ in range(ROUNDS)]

    outcomes = [race(refresh) for refresh in tokens]

    assert outcomes == [[200] + [401] * (CONCURRENT - 1)] * ROUNDS
