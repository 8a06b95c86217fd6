from __future__ import annotations

from pathlib import Path

import pytest
from django.core.cache import cache
from django.test import Client
from rest_framework.test import APIClient
from rest_framework_simplejwt.tokens import RefreshToken
from xdist.scheduler import LoadGroupScheduling

from accounts.services import api_key_create
from tests.support.factories import UserFactory
from tests.support.reporting import ScenarioLines
from tests.support.servers import serve_app_over_tls


class HttpsAPIClient(APIClient):
    """The API refuses plain HTTP, so test requests arrive over HTTPS unless a test says otherwise."""

    def generic(self, method, path, data="", content_type="application/octet-stream", secure=True, **extra):
        return super().generic(method, path, data, content_type, secure=secure, **extra)


# Tests that take minutes each (the fuzzers, the outside-in and operations tests with real processes) run
# first: under pytest-xdist the short tests then fill the workers' time around them, instead of one worker
# finishing a long test alone at the end.
_LONG_FIRST = ("fuzz", "e2e")
_LONG_DIRS = ("ops",)


def _long_rank(item) -> int:
    if item.get_closest_marker("fuzz"):  # the longest of all (minutes of schemathesis each)
        return 0
    if any(item.get_closest_marker(name) for name in _LONG_FIRST):
        return 1
    return 1 if Path(str(item.path)).parent.name in _LONG_DIRS else 2


def pytest_collection_modifyitems(config, items):
    items.sort(key=_long_rank)  # stable: the order within each rank is kept


class _ServerShapeScheduling(LoadGroupScheduling):
    """`--dist loadgroup`, with the tests on one `make run` / `make serve` server as one group (one worker, so
    each shape is started once per group; the live fuzzer has a `make run` of its own). The group is read from the node
    id: pytest-xdist 3.8 marks xdist_group by rewriting `item._nodeid`, which pytest 9 no longer reads."""

    def _split_scope(self, nodeid: str) -> str:
        if nodeid.startswith("tests/e2e/test_schemathesis.py"):
            # The live fuzzer alone is minutes of one `make run`: on a server of its own (its own worker), the
            # other `make run` tests do not queue behind it.
            return "e2e-run-fuzz"
        if nodeid.startswith("tests/e2e/") and nodeid.endswith(("[run]", "[serve]", "[multinode]")):
            return "e2e-" + nodeid.rsplit("[", 1)[1].rstrip("]")
        if nodeid.startswith("tests/e2e/test_faults.py"):
            return "e2e-faults"  # two outages on one production stack, one after the other
        if nodeid.startswith(("tests/ops/test_metrics.py", "tests/ops/test_tracing.py")):
            return "ops-observed-node"  # one `make serve` node (tests/ops/observed_node.py) watched by both
        return super()._split_scope(nodeid)


def pytest_xdist_make_scheduler(config, log):
    if config.getvalue("dist") == "loadgroup":
        return _ServerShapeScheduling(config, log)
    return None


_SCENARIOS = ScenarioLines()


def pytest_runtest_logreport(report):
    _SCENARIOS.collect(report)


def pytest_terminal_summary(terminalreporter):
    _SCENARIOS.write(terminalreporter)


@pytest.fixture(autouse=True)
def _clean_cache():
    """Rate-limit counters and cached overrides must not leak from one test into the next."""
    cache.clear()
    yield


@pytest.fixture
def api() -> HttpsAPIClient:
    return HttpsAPIClient()


def jwt_for(user) -> str:
    return str(RefreshToken.for_user(user).access_token)


def client_with_token(token: str) -> HttpsAPIClient:
    client = HttpsAPIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {token}")
    return client


@pytest.fixture
def alice(db):
    return UserFactory(email="alice@example.com")


@pytest.fixture
def bob(db):
    return UserFactory(email="bob@example.com")


@pytest.fixture
def staff(db):
    """A superuser: every staff permission (docs/decisions.md#staff-permissions), and a party to no task."""
    return UserFactory(email="staff@example.com", is_staff=True, is_superuser=True)


@pytest.fixture
def admin_client(staff) -> Client:
    """The suite's staff user, logged in to the Django admin (pytest-django's own fixture makes its own user)."""
    client = Client()
    client.force_login(staff)
    return client


@pytest.fixture
def alice_api(alice) -> HttpsAPIClient:
    """Alice with a JWT."""
    return client_with_token(jwt_for(alice))


@pytest.fixture
def bob_api(bob) -> HttpsAPIClient:
    return client_with_token(jwt_for(bob))


@pytest.fixture
def staff_api(staff) -> HttpsAPIClient:
    return client_with_token(jwt_for(staff))


@pytest.fixture
def alice_key_api(alice) -> HttpsAPIClient:
    """Alice with an API key."""
    return client_with_token(api_key_create(user=alice, name="tests").raw)


@pytest.fixture
def tls_server(tmp_path):
    """This app served over real TLS on a free loopback port (for the fuzzer and outbound loops)."""
    with serve_app_over_tls(tmp_path) as base_url:
        yield base_url
