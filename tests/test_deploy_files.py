"""The container files (Dockerfile, compose.yaml) say what the tests run natively (docs/operations.md#containers).

No container runtime runs here, so this checks what can be checked: compose.yaml parses and has the
production shape's services; every application service runs the Dockerfile's image with scripts/serve.sh
(or scripts/release.sh) and the environment scripts/multinode.py gives its native nodes; HAProxy runs
docs/haproxy.cfg, whose servers are the web services; the Dockerfile copies files that exist, installs
requirements.txt and starts scripts/serve.sh.
"""

from __future__ import annotations

import json
import re
import shlex
from pathlib import Path

import yaml

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
    from django.conf import settings

    local_apps = {app.split(".")[0] for app in settings.INSTALLED_APPS if (ROOT / app.split(".")[0]).is_dir()}
    assert local_apps <= copied, local_apps - copied
