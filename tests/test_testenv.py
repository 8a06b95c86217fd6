"""scripts/testenv.py's install step: one apt-get run before the tests, and on-demand installs that wait.

A fresh machine failed the suite when two test workers ran apt-get at once (dpkg's lock). `make test` now
runs `testenv.py --install` before pytest starts; these tests hold what that rests on: every package a test
or script may ask apt-get for is in the one list, and two installers never overlap.
"""

from __future__ import annotations

import ast
import importlib.util
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
_spec = importlib.util.spec_from_file_location("testenv", ROOT / "scripts" / "testenv.py")
testenv = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(testenv)


def _apt_install_arguments(path: Path) -> set[str]:
    """The string literals passed to apt_install(...) anywhere in a module."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Call) and getattr(node.func, "attr", getattr(node.func, "id", None)) == "apt_install":
            found |= {arg.value for arg in node.args if isinstance(arg, ast.Constant)}
    return found


def test_every_package_installed_on_demand_is_in_the_one_install_step():
    on_demand = set()
    for path in [*ROOT.joinpath("scripts").glob("*.py"), *ROOT.joinpath("tests").rglob("*.py")]:
        on_demand |= _apt_install_arguments(path)
    assert {"postgresql", "redis-server", "haproxy", "prometheus"} <= on_demand
    assert on_demand <= set(testenv.SYSTEM_PACKAGES.values())


def test_no_test_runs_apt_get_itself():
    """Installs go through testenv (the lock, dpkg's lock wait), never a bare apt-get in a test."""
    offenders = [
        str(path.relative_to(ROOT))
        for path in ROOT.joinpath("tests").rglob("*.py")
        if path.name != "test_testenv.py" and re.search(r"[\"']apt-get[\"']", path.read_text())
    ]
    assert offenders == []


def test_make_test_installs_before_pytest_starts():
    makefile = (ROOT / "Makefile").read_text()
    for target in ("test", "test-fast"):
        prerequisites = re.search(rf"^{target}:(.*)$", makefile, re.MULTILINE).group(1).split()
        assert "system-deps" in prerequisites, target
    assert re.search(r"^system-deps:\n\t@?\$\(PYTHON\) scripts/testenv.py --install$", makefile, re.MULTILINE)


def test_the_install_step_finds_what_is_installed():
    """On this machine `make test` ran the step: nothing is missing, and the step is a no-op that says so."""
    assert testenv.missing_packages() == []
    result = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "testenv.py"), "--install"], capture_output=True, text=True, timeout=60
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "system packages present" in result.stdout and "apt-get" not in result.stdout


HOLDER = """
import importlib.util, sys, time
spec = importlib.util.spec_from_file_location("testenv", sys.argv[1])
testenv = importlib.util.module_from_spec(spec); spec.loader.exec_module(testenv)
with testenv.install_lock():
    print(f"in {time.time()}", flush=True)
    time.sleep(float(sys.argv[2]))
    print(f"out {time.time()}", flush=True)
"""


def test_two_installers_never_overlap():
    """The second holder of the install lock starts only after the first let it go."""
    script = str(ROOT / "scripts" / "testenv.py")
    first = subprocess.Popen([sys.executable, "-c", HOLDER, script, "1.0"], stdout=subprocess.PIPE, text=True)
    assert first.stdout.readline().startswith("in ")
    second = subprocess.Popen([sys.executable, "-c", HOLDER, script, "0"], stdout=subprocess.PIPE, text=True)
    first_out, _ = first.communicate(timeout=30)
    second_out, _ = second.communicate(timeout=30)
    released = float(first_out.split()[-1])
    entered = float(second_out.split()[1])
    assert entered >= released, (released, entered)


@pytest.fixture
def tmp_dir():
    """A directory of its own for testenv.py's servers, which PostgreSQL's own user can reach (pytest's is
    private to root)."""
    path = Path(tempfile.mkdtemp(prefix="testenv-sigterm-"))
    path.chmod(0o755)
    yield path
    shutil.rmtree(path, ignore_errors=True)


def test_sigterm_stops_the_command_and_removes_the_servers(tmp_dir):
    """A CI timeout's SIGTERM used to end testenv.py at once, leaving its PostgreSQL and Redis running (and their
    directories) for the rest of the machine's life."""
    tmp_path = tmp_dir
    probe = (
        "import os, sys, time; print(os.environ['DATABASE_URL'], os.environ['REDIS_URL'], flush=True); time.sleep(60)"
    )
    process = subprocess.Popen(
        [sys.executable, str(ROOT / "scripts" / "testenv.py"), "--", sys.executable, "-c", probe],
        stdout=subprocess.PIPE,
        text=True,
        env={**_without_urls(), "TMPDIR": str(tmp_path)},
    )
    urls = ""
    while not urls.startswith("postgres"):
        urls = process.stdout.readline()
        assert urls or process.poll() is None, "testenv.py ended before its command started"
    database_url, redis_url = urls.split()
    server_dirs = sorted(path.name for path in tmp_path.iterdir())
    assert any(name.startswith("testenv-pg-") for name in server_dirs), server_dirs

    process.terminate()
    assert process.wait(60) != 0

    assert not any(tmp_path.iterdir()), sorted(path.name for path in tmp_path.iterdir())
    for url in (database_url, redis_url):
        port = int(url.rsplit(":", 1)[1].split("/")[0])
        with pytest.raises(OSError), socket.create_connection(("127.0.0.1", port), timeout=2):
            pass


def _without_urls() -> dict[str, str]:
    return {name: value for name, value in os.environ.items() if name not in ("DATABASE_URL", "REDIS_URL")}
