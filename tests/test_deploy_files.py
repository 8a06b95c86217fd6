"""The container files (Dockerfile, compose.yaml) say what the tests run natively (docs/operations.md#containers).

No container runtime runs here, so this checks what can be checked: compose.yaml parses and has the
production shape's services; every application service runs the Dockerfile's image with scripts/serve.sh
(or scripts/release.sh) and the environment scripts/multinode.py gives its native nodes; HAProxy runs
docs/haproxy.cfg, whose servers are the web services; the Dockerfile copies files that exist, installs
requirements.txt and starts scripts/serve.sh. HAProxy's config is valid (as the native cluster runs it) and
replays a request to the other node only when that is safe (docs/decisions.md#retries-and-idempotency-key).
"""

from __future__ import annotations

import json
import re
import shlex
import subprocess
from pathlib import Path

import yaml
from django.conf import settings

from assistant.providers.openai_http import BACKOFF_CAP
from tools.multinode import proxy_config
from tools.nodes import testenv

ROOT = Path(__file__).resolve().parents[1]
COMPOSE = yaml.safe_load((ROOT / "compose.yaml").read_text())
SERVICES = COMPOSE["services"]
ROLES = {"web1": "web", "web2": "web", "worker1": "worker", "worker2": "worker", "beat1": "beat", "beat2": "beat"}
APP = [*ROLES, "release"]
# What scripts/multinode.py sets on every native node, apart from the test-only beat timings.
NATIVE_ENV = {
    "DJANGO_SETTINGS_MODULE",
    "DATABASE_URL",
    "REDIS_URL",
    "DJANGO_SECRET_KEY",
    "SERVE_BEHIND_PROXY",
    "TRUSTED_PROXIES",
    "DJANGO_ALLOWED_HOSTS",
    "SERVE_RELEASE",
}


def dockerfile() -> list[tuple[str, str]]:
    """(instruction, arguments) pairs, continuation lines joined, comments dropped."""
    text = re.sub(r"\\\n", " ", (ROOT / "Dockerfile").read_text())
    lines = [line.strip() for line in text.splitlines() if line.strip() and not line.strip().startswith("#")]
    return [(line.split(None, 1)[0].upper(), line.split(None, 1)[1]) for line in lines]


def test_compose_has_the_production_shape():
    assert set(SERVICES) == {"postgres", "redis", "haproxy", *APP}
    images = {SERVICES[name]["image"] for name in APP}
    assert len(images) == 1, images  # one image for every role
    assert all(SERVICES[name]["build"] == "." for name in APP)
    assert SERVICES["postgres"]["image"].startswith("postgres:")
    assert SERVICES["redis"]["image"].startswith("redis:")
    assert SERVICES["haproxy"]["image"].startswith("haproxy:")


def test_app_services_run_serve_sh_with_the_native_nodes_environment():
    native = (ROOT / "scripts" / "multinode.py").read_text()
    for key in NATIVE_ENV:
        assert f"{key}=" in native, key  # the native cluster sets it too
    for name, role in ROLES.items():
        service = SERVICES[name]
        env = service["environment"]
        assert service["command"] == ["scripts/serve.sh"], name
        assert env["SERVE_ROLES"] == role, name
        assert set(env) >= NATIVE_ENV, (name, NATIVE_ENV - set(env))
        assert env["DJANGO_SETTINGS_MODULE"] == "config.settings.production"
        assert env["SERVE_BEHIND_PROXY"] == "1" and env["SERVE_RELEASE"] == "0"
        assert env["REDIS_URL"].startswith("redis://")  # redbeat and the broker need it
        assert service["depends_on"]["release"]["condition"] == "service_completed_successfully"
    assert SERVICES["release"]["command"] == ["scripts/release.sh"]
    for name in [*ROLES, "release"]:  # the providers' settings from ./.env, when an operator writes one
        assert SERVICES[name]["env_file"] == [{"path": ".env", "required": False}], name
    names = [SERVICES[name]["environment"]["CELERY_NODE_NAME"] for name in ROLES if ROLES[name] == "worker"]
    assert len(set(names)) == len(names) == 2
    for command in ("scripts/serve.sh", "scripts/release.sh"):
        assert (ROOT / command).exists()


def test_the_nodes_trust_haproxy_which_runs_docs_haproxy_cfg():
    proxy = SERVICES["haproxy"]
    address = proxy["networks"]["backend"]["ipv4_address"]
    for name in ROLES:
        assert SERVICES[name]["environment"]["TRUSTED_PROXIES"] == f"{address}/32"
    mounts = {volume.split(":")[0]: volume.split(":")[1] for volume in proxy["volumes"]}
    assert mounts["./docs/haproxy.cfg"] == "/usr/local/etc/haproxy/haproxy.cfg"
    config = (ROOT / "docs" / "haproxy.cfg").read_text()
    servers = dict(re.findall(r"^\s*server (\S+) (\S+)", config, re.MULTILINE))
    assert servers == {name: f"{name}:8000" for name, role in ROLES.items() if role == "web"}
    assert "option forwardfor" in config and "X-Forwarded-Proto https" in config
    assert "GET /health" in config


def test_dockerfile_copies_what_exists_and_starts_serve_sh():
    instructions = dockerfile()
    copies = [shlex.split(args) for op, args in instructions if op == "COPY"]
    assert copies
    for args in copies:
        for source in [a for a in args if not a.startswith("--")][:-1]:
            assert (ROOT / source).exists(), source
    runs = " ".join(args for op, args in instructions if op == "RUN")
    assert "-r requirements.txt" in runs and ".venv" in runs  # serve.sh runs .venv/bin/python
    cmd = [args for op, args in instructions if op == "CMD"]
    assert [json.loads(c) for c in cmd] == [["scripts/serve.sh"]]
    env = " ".join(args for op, args in instructions if op == "ENV")
    assert "SERVE_BEHIND_PROXY=1" in env and "PORT=8000" in env
    # Every top-level Python package the project's settings install is copied into the image.
    copied = {args[-1].rstrip("/").removeprefix("./") for args in copies}
    local_apps = {app.split(".")[0] for app in settings.INSTALLED_APPS if (ROOT / app.split(".")[0]).is_dir()}
    assert local_apps <= copied, local_apps - copied


HAPROXY_CFG = (ROOT / "docs" / "haproxy.cfg").read_text()


def haproxy_section(name: str) -> list[str]:
    """The directives of one section (`defaults`, `backend web`), comments dropped."""
    lines, inside = [], False
    for raw in HAPROXY_CFG.splitlines():
        line = raw.split("#", 1)[0].rstrip()
        if line and not line[0].isspace():
            inside = line == name
        elif inside and line.strip():
            lines.append(line.strip())
    return lines


def l7_retries_allowed(method: str, headers: dict[str, str]) -> bool:
    """Whether the backend's `http-request disable-l7-retry` leaves this request's L7 retries on, read from
    the config: its ACLs (`method ...`, `req.hdr(...) -m found`) and its condition (ACLs ANDed, `!` negates)."""
    backend = haproxy_section("backend web")
    acls = {}
    for line in backend:
        if line.startswith("acl "):
            _, name, fetch, *args = line.split()
            if fetch == "method":
                acls[name] = method in args
            elif match := re.fullmatch(r"req\.hdr\(([^)]+)\)", fetch):
                assert args == ["-m", "found"], line
                acls[name] = match[1].lower() in {key.lower() for key in headers}
            else:
                raise AssertionError(f"an ACL this test cannot read: {line}")
    for line in backend:
        if line.startswith("http-request disable-l7-retry"):
            condition = line.removeprefix("http-request disable-l7-retry").split()
            assert condition[0] == "if", line
            terms = [acls[term.lstrip("!")] != term.startswith("!") for term in condition[1:]]
            if all(terms):
                return False
    return True


def test_haproxy_replays_only_requests_that_are_safe_to_replay():
    defaults = haproxy_section("defaults")
    retry_on = next(line.split()[1:] for line in defaults if line.startswith("retry-on "))
    # A connection never made sent nothing: always retried, to the other node if need be.
    assert "conn-failure" in retry_on and "option redispatch" in defaults
    assert set(retry_on) <= {"conn-failure", "empty-response", "response-timeout"}, retry_on
    # The others may follow a request a node applied before it died or went silent: only when replaying it
    # is harmless, i.e. an idempotent method or an Idempotency-Key, which the API answers from its store.
    key = {"Idempotency-Key": "0b6f7c1e-5a7e-4a0e-9a57-4f8f3f1a2b3c"}
    for method in ("GET", "HEAD", "OPTIONS", "PUT", "DELETE"):
        assert l7_retries_allowed(method, {}), method
    for method in ("POST", "PATCH"):
        assert not l7_retries_allowed(method, {}), method
        assert l7_retries_allowed(method, key), method
        assert not l7_retries_allowed(method, {"X-Idempotency": "x"}), method


def test_haproxy_waits_for_the_longest_provider_call_a_request_makes():
    # An image or an assistant reply calls the OpenAI-compatible API inside the request: every attempt up to
    # OPENAI_TIMEOUT_SECONDS, OPENAI_MAX_RETRIES more after the first, each after a wait of at most BACKOFF_CAP.
    longest = (
        settings.OPENAI_TIMEOUT_SECONDS * (settings.OPENAI_MAX_RETRIES + 1) + BACKOFF_CAP * settings.OPENAI_MAX_RETRIES
    )
    timeout = next(line.split()[2] for line in haproxy_section("defaults") if line.startswith("timeout server "))
    assert timeout.endswith("s"), timeout
    assert int(timeout.removesuffix("s")) > max(longest, 30), (timeout, longest)  # 30: gunicorn's worker timeout


def test_haproxy_accepts_the_config(tmp_path):
    # As scripts/multinode.py runs it: local addresses, no TLS (the certificate is the deployment's).
    webs = [name for name, role in ROLES.items() if role == "web"]
    config = tmp_path / "haproxy.cfg"
    config.write_text(
        proxy_config(
            HAPROXY_CFG,
            bind="127.0.0.1:8443",  # -c only parses: nothing listens
            servers={name: f"127.0.0.{n + 2}:8000" for n, name in enumerate(webs)},
            stats_socket=tmp_path / "haproxy.sock",
        )
    )
    check = subprocess.run([testenv.haproxy_binary(), "-c", "-f", str(config)], capture_output=True, text=True)
    assert check.returncode == 0, check.stdout + check.stderr
    assert "Configuration file is valid" in check.stdout + check.stderr
