"""`make run` and `make serve` as units: whatever signal reaches them, every process of the node stops.

scripts/supervise.py runs each node's processes (docs/operations.md, "Processes and signals"). These tests
start the real commands in a session of their own, as a terminal or a service manager would, signal them
from outside and watch every process that carries the node's VAR_DIR in its environment.

One start per case keeps the suite affordable (about 10 s a `make run`, 10 to 15 s a `make serve` here);
the acceptance figure of 5 stops per signal was run by hand (docs/operations.md). A started node also
serves its static files compressed to a client that accepts gzip (Swagger UI's bundle is 1.6 MB raw).
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import time
from pathlib import Path
from urllib.parse import urlsplit

import httpx
import psycopg
import pytest

from tests.e2e.faults_support import _processes_of, wait_until
from tests.e2e.harness import PYTHON, ROOT, Server, _alive, _base_env, _testenv, free_port

# An idle `make run` stops in about 2.5 s (the worker's warm shutdown, config/celery_broker.py), 4 s on a
# busy machine; it took 7 to 8 s before.
RUN_STOP_SECONDS = 6
SERVE_GONE_SECONDS = 35
SWAGGER_BUNDLE = "/static/drf_spectacular_sidecar/swagger-ui-dist/swagger-ui-bundle.js"


def _untracked() -> set[str]:
    out = subprocess.run(
        ["git", "status", "--porcelain", "--untracked-files=all"], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout
    return set(out.splitlines())


def _kill_leftovers(var_dir: Path) -> None:
    for pid in _processes_of(var_dir):
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)


@contextlib.contextmanager
def _started(server: Server):
    try:
        server.start()
        yield server
    finally:
        server.stop(timeout=5)
        _kill_leftovers(server.var_dir)


def _roles(var_dir: Path) -> dict[str, list[int]]:
    """The node's processes by role, from their command lines."""
    roles: dict[str, list[int]] = {"web": [], "worker": [], "beat": []}
    for pid, cmd in _processes_of(var_dir).items():
        if " gunicorn " in cmd or " serve_tls " in cmd:
            roles["web"].append(pid)
        elif " celery " in cmd and " worker " in cmd:
            roles["worker"].append(pid)
        elif " celery " in cmd and " beat " in cmd:
            roles["beat"].append(pid)
    return roles


def _children(pid: int) -> dict[int, str]:
    """The direct children of `pid` and their state letter (Z: a zombie nobody waited for)."""
    found = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == pid:
            found[int(stat.parent.name)] = fields[0]
    return found


def _supervisor(var_dir: Path) -> int:
    [pid] = [pid for pid, cmd in _processes_of(var_dir).items() if "scripts/supervise.py" in cmd]
    return pid


def _assert_static_files_go_out_gzipped(server: Server) -> None:
    with httpx.Client(base_url=server.base_url, verify=False, timeout=30) as client:
        raw = client.get(SWAGGER_BUNDLE, headers={"Accept-Encoding": "identity"})
        gzipped = client.get(SWAGGER_BUNDLE, headers={"Accept-Encoding": "gzip"})
    assert raw.status_code == gzipped.status_code == 200
    assert "Content-Encoding" not in raw.headers and int(raw.headers["Content-Length"]) > 1_000_000
    assert gzipped.headers["Content-Encoding"] == "gzip" and "Accept-Encoding" in gzipped.headers["Vary"]
    # Less than a third on the wire, and the same file once decoded (httpx decodes it).
    assert int(gzipped.headers["Content-Length"]) < int(raw.headers["Content-Length"]) / 3
    assert gzipped.content == raw.content


# --- make run -------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def run_var(tmp_path_factory) -> Path:
    """One VAR_DIR for every `make run` of this module, its database the run's migrated one (scripts/testenv.py:
    these tests stop servers; tests/e2e/test_guide.py and the `run` shape start on an empty VAR_DIR)."""
    var_dir = tmp_path_factory.mktemp("lifecycle-run") / "var"
    var_dir.mkdir()
    _testenv().migrated_sqlite({**_base_env(var_dir), "DJANGO_SETTINGS_MODULE": "config.settings.local"})
    return var_dir


def _run_server(var_dir: Path) -> Server:
    env = _base_env(var_dir)
    return Server("run", free_port(), env, var_dir, var_dir.parent / "server.log")


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM, signal.SIGHUP], ids=lambda s: s.name)
def test_make_run_stops_within_6_s_on_a_signal_to_its_group(run_var, sig):
    before = _untracked()
    with _started(_run_server(run_var)) as server:
        roles = _roles(run_var)
        assert all(roles.values()), roles
        pid = server.process.pid
        # run.sh's banner printer, a background job of the shell that became the supervisor, is reaped once
        # it printed: the supervisor's children are the three roles' processes, none of them a zombie.
        supervisor, role_pids = _supervisor(run_var), {p for pids in roles.values() for p in pids}

        def only_the_roles_left() -> bool:
            children = _children(supervisor)
            return len(children) == 3 and set(children) <= role_pids and "Z" not in children.values()

        wait_until(only_the_roles_left, "the supervisor's children to be the three roles, no zombie", 30, 0.2)
        _assert_static_files_go_out_gzipped(server)

        started = time.monotonic()
        os.killpg(pid, sig)
        wait_until(lambda: not _processes_of(run_var), f"every process of make run to stop after {sig.name}", 15, 0.05)
        took = time.monotonic() - started
        print(f"make run stopped {took:.1f} s after {sig.name} to its group")  # shown with -s: the by-hand repeats

        log = server.log_text()
        assert took < RUN_STOP_SECONDS, log[-3000:]
        assert server.process.wait(timeout=5) is not None
        assert f"stopping ({sig.name})" in log and "supervise: stopped" in log
        assert "SIGKILL" not in log and "SIGQUIT" not in log  # no escalation was needed
        # A clean stop: each process stopped on the supervisor's SIGTERM; none "exited with status -15".
        assert all(f"supervise: {role} stopped after " in log for role in roles), log[-3000:]
        assert "exited with status" not in log, log[-3000:]
    # Everything the node wrote is under VAR_DIR: nothing new in the checkout (e.g. kombu's control/ folder).
    assert _untracked() - before == set()


# --- make serve -----------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def backing():
    """A PostgreSQL and a Redis for this module's `make serve` nodes."""
    testenv = _testenv()
    with testenv.postgres() as database_url, testenv.redis() as redis_url:
        yield testenv, database_url, redis_url


def _createdb(testenv, database_url: str, name: str) -> str:
    url = urlsplit(database_url)
    subprocess.run(
        [f"{testenv.postgres_bindir()}/createdb", "-h", "127.0.0.1", "-p", str(url.port), "-U", "postgres", name],
        check=True,
        capture_output=True,
    )
    return url._replace(path=f"/{name}").geturl()


@pytest.fixture(scope="module")
def serve_db(backing, tmp_path_factory) -> str:
    """The stop tests' database, migrated once per run (scripts/testenv.py): their release step has nothing to apply."""
    testenv, database_url, redis_url = backing
    url = _createdb(testenv, database_url, "lifecycle")
    testenv.migrated_postgres(url, _serve_env(tmp_path_factory.mktemp("lifecycle-migrate"), url, redis_url))
    return url


def _serve_server(tmp_path: Path, database_url: str, redis_url: str, **env: str) -> Server:
    var_dir = tmp_path / "var"
    var_dir.mkdir()
    return Server(
        "serve", free_port(), _serve_env(var_dir, database_url, redis_url, **env), var_dir, tmp_path / "server.log"
    )


def _serve_env(var_dir: Path, database_url: str, redis_url: str, **env: str) -> dict[str, str]:
    server_env = _base_env(var_dir)
    server_env.update(
        DATABASE_URL=database_url,
        REDIS_URL=redis_url,
        DJANGO_SECRET_KEY="lifecycle-" + "x" * 50,
        # The local payment provider in production settings, on purpose (docs/operations.md#payments-in-production).
        PAYMENTS_ALLOW_LOCAL_PROVIDER_IN_PRODUCTION="true",
        IMAGES_ALLOW_LOCAL_PROVIDER_IN_PRODUCTION="true",
        PUBLISHING_ALLOW_LOCAL_PROVIDER_IN_PRODUCTION="true",
        SOCIAL_OAUTH_ALLOW_LOCAL_PROVIDER_IN_PRODUCTION="true",
        SEO_ALLOW_LOCAL_PROVIDER_IN_PRODUCTION="true",
        WEB_CONCURRENCY="2",
        GUNICORN_THREADS="2",
        CELERY_CONCURRENCY="1",
        **env,
    )
    return server_env


@pytest.mark.parametrize(
    ("target", "sig"),
    [("pid", signal.SIGTERM), ("group", signal.SIGTERM), ("pid", signal.SIGKILL), ("group", signal.SIGKILL)],
    ids=["TERM-pid", "TERM-group", "KILL-pid", "KILL-group"],
)
def test_make_serve_stops_as_one_unit(tmp_path, backing, serve_db, target, sig):
    _, _, redis_url = backing
    server = _serve_server(tmp_path, serve_db, redis_url, SHUTDOWN_DRAIN_SECONDS="2")
    with _started(server):
        roles = _roles(server.var_dir)
        assert all(roles.values()), roles
        pid = server.process.pid

        (os.kill if target == "pid" else os.killpg)(pid, sig)

        if sig == signal.SIGTERM:
            with httpx.Client(base_url=server.base_url, verify=False, timeout=5) as client:
                # Draining: readiness fails at once while the node still serves (liveness, the API).
                wait_until(lambda: client.get("/health").status_code == 503, "readiness to fail", 5, 0.05)
                assert client.get("/health", params={"probe": "live"}).status_code == 200
                assert client.get("/openapi.json").status_code == 200
            server.process.wait(timeout=SERVE_GONE_SECONDS)
            # make (the entry point) exits only after every process of the node has.
            assert _processes_of(server.var_dir) == {}, server.log_tail()
            assert "supervise: stopped" in server.log_text()
        else:
            wait_until(lambda: not _processes_of(server.var_dir), "no process of the node left", SERVE_GONE_SECONDS)


def test_serve_roles_web_starts_no_worker_nor_beat_and_migrates_nothing(tmp_path, backing):
    testenv, database_url, redis_url = backing
    empty = _createdb(testenv, database_url, "lifecycle_web_only")
    with _started(_serve_server(tmp_path, empty, redis_url, SERVE_ROLES="web")) as server:
        roles = _roles(server.var_dir)
        assert roles["web"] and not roles["worker"] and not roles["beat"], roles
        log = server.log_text()
        assert "Roles:   web" in log and "DB:      up to 4 PostgreSQL connections" in log
        assert "release:" not in log and "Applying " not in log
        _assert_static_files_go_out_gzipped(server)  # a web node collects its own (compressed) static files
        with psycopg.connect(empty, connect_timeout=5) as conn:
            assert conn.execute("SELECT to_regclass('django_migrations')").fetchone()[0] is None


# --- scripts/supervise.py on its own (seconds, no server) --------------------------------------------------


def _supervise(tmp_path: Path, *children: str, **env: str) -> subprocess.Popen:
    log = (tmp_path / "supervise.log").open("wb")
    full_env = {**os.environ, "VAR_DIR": str(tmp_path), "SUPERVISE_STOP_TIMEOUT_SECONDS": "1", **env}
    return subprocess.Popen(
        [PYTHON, str(ROOT / "scripts" / "supervise.py"), *children],
        env=full_env,
        stdout=log,
        stderr=subprocess.STDOUT,
        stdin=subprocess.DEVNULL,
        start_new_session=True,
    )


def test_supervise_restarts_a_crashed_child_with_a_back_off(tmp_path):
    process = _supervise(tmp_path, "worker:restart", "sh -c 'exit 3'", "web:required", "sleep 30")
    try:
        log = tmp_path / "supervise.log"
        wait_until(lambda: log.read_text().count("worker started") >= 3, "two restarts of the worker", 10, 0.05)
        text = log.read_text()
        assert "worker exited with status 3" in text
        assert "worker will be restarted in 1 s" in text and "worker will be restarted in 2 s" in text
        os.kill(process.pid, signal.SIGTERM)
        assert process.wait(timeout=5) == 0
        text = log.read_text()
        assert "web stopped after " in text and "web exited" not in text  # it stopped because it was told to
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)


def test_supervise_reaps_what_the_shell_that_execd_it_left_running(tmp_path):
    # run.sh's shape: a background job (the banner printer), then `exec` the supervisor, which inherits it.
    shell = f"(sleep 0.3; echo printed) & exec {PYTHON} {ROOT / 'scripts' / 'supervise.py'} web:required 'sleep 30'"
    log = (tmp_path / "supervise.log").open("wb")
    process = subprocess.Popen(
        ["bash", "-c", shell],
        env={**os.environ, "VAR_DIR": str(tmp_path)},
        stdout=log,
        stderr=subprocess.STDOUT,
        stdin=subprocess.DEVNULL,
        start_new_session=True,
    )
    try:
        text = tmp_path / "supervise.log"
        wait_until(
            lambda: "printed" in text.read_text() and "web started" in text.read_text(), "the job to end", 5, 0.05
        )
        # The job exited; the supervisor waits for it: its one child left is `web`, and nothing is a zombie.
        wait_until(lambda: list(_children(process.pid).values()) == ["S"], "only the web child to be left", 5, 0.05)
        os.kill(process.pid, signal.SIGTERM)
        assert process.wait(timeout=5) == 0
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)


def test_supervise_escalates_a_stop_that_stalls_and_says_so(tmp_path):
    stubborn = "sh -c 'trap \"\" TERM QUIT; while :; do sleep 0.1; done'"
    process = _supervise(tmp_path, "worker:restart", stubborn, "web:required", "sleep 30")
    try:
        log = tmp_path / "supervise.log"
        wait_until(lambda: "web started" in log.read_text(), "the children to start", 5, 0.05)
        started = time.monotonic()
        os.kill(process.pid, signal.SIGTERM)
        assert process.wait(timeout=15) == 1  # not a clean stop
        assert time.monotonic() - started < 8
        text = log.read_text()
        assert "still running after 1 s: SIGQUIT" in text and "SIGKILL to its process group" in text
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)


def test_a_killed_supervisor_takes_its_children_with_it(tmp_path):
    process = _supervise(tmp_path, "web:required", f"sleep 3{os.getpid() % 1000}")
    log = tmp_path / "supervise.log"
    wait_until(lambda: "web started (pid" in log.read_text(), "the child to start", 5, 0.05)
    child = int(log.read_text().split("web started (pid ", 1)[1].split(")", 1)[0])
    os.kill(process.pid, signal.SIGKILL)
    process.wait(timeout=5)
    wait_until(lambda: not _alive(child), "the child to stop with its parent (PR_SET_PDEATHSIG)", 5, 0.05)
