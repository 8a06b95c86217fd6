from __future__ import annotations

import fcntl
import tempfile
from contextlib import contextmanager
from pathlib import Path

import pytest
from django.conf import settings
from django.core.cache import cache
from django.db import connection
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


@pytest.fixture(scope="session")
def django_db_setup(request, django_test_environment, django_db_blocker, django_db_modify_db_settings):
    """The test databases, migrated once per run: under pytest-xdist the first worker migrates a template
    database and every worker's database is a copy of it (`CREATE DATABASE ... TEMPLATE`), where each worker
    used to run every migration itself (some 10 s of CPU each, all at once). The last worker to finish drops
    the template. Without xdist, Django's own set-up."""
    from django.test.utils import setup_databases, teardown_databases

    workerinput = getattr(request.config, "workerinput", None)
    with django_db_blocker.unblock():
        if workerinput is None:
            made = setup_databases(verbosity=0, interactive=False)
            yield
            teardown_databases(made, verbosity=0)
            return
        original_name = connection.settings_dict["NAME"]
        worker_db = connection.creation._get_test_db_name()
        run = workerinput["testrunuid"][:12]
        template = f"test_{original_name}_template_{run}"[:63]
        users = Path(tempfile.gettempdir()) / f"pytest-db-template-{run}.users"
        with _template_lock():  # one worker migrates; the others wait for it, then copy one at a time
            if not users.exists():
                connection.settings_dict["TEST"]["NAME"] = template
                connection.creation.create_test_db(verbosity=0, autoclobber=True, serialize=False)
                connection.close()  # PostgreSQL copies no template while a session is connected to it
                users.write_text("0")
            with connection.creation._nodb_cursor() as cursor:
                cursor.execute(f'DROP DATABASE IF EXISTS "{worker_db}"')
                cursor.execute(f'CREATE DATABASE "{worker_db}" TEMPLATE "{template}"')
            users.write_text(str(int(users.read_text()) + 1))
        connection.settings_dict["TEST"]["NAME"] = worker_db
        settings.DATABASES[connection.alias]["NAME"] = connection.settings_dict["NAME"] = worker_db
        yield
        connection.creation.destroy_test_db(original_name, verbosity=0)
        with _template_lock():
            left = int(users.read_text()) - 1
            users.write_text(str(left))
            if left == 0:  # a worker that sets up later makes the template again
                with connection.creation._nodb_cursor() as cursor:
                    cursor.execute(f'DROP DATABASE IF EXISTS "{template}"')
                users.unlink()


@contextmanager
def _template_lock():
    with open(Path(tempfile.gettempdir()) / "pytest-db-template.lock", "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        yield


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
