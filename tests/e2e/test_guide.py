"""docs/guide.md runs as written: its shell blocks, in order, with bash against the real `make run` server
on a port that is not the default (the session's shared server), every command stopping the run on an
error (`curl --fail-with-body`, `set -euo pipefail`). They cover every area, the marketplace with the demo
agent `make run` ships (bid, payment by `payments_simulate` with the API's payment id, dispatch, a result
from the local model, approval) and webhooks arriving, signature verified, in the local inbox.

And the start-up banner (docs/guide.md#the-local-demo): printed last, after the worker's and beat's
start-up output, repeated by `manage.py demo_info` (`make info`), every link in it answering.
"""

from __future__ import annotations

import re
import subprocess
import time
from pathlib import Path

import httpx
import pytest

from tests.e2e.harness import ROOT

GUIDE = ROOT / "docs" / "guide.md"
SHELL_BLOCK = re.compile(r"^```sh\n(.*?)^```", re.DOTALL | re.MULTILINE)


def guide_script(path: Path = GUIDE) -> tuple[str, int, int]:
    """The guide's shell blocks as one bash script, each announced on stderr; (script, blocks, commands)."""
    blocks = SHELL_BLOCK.findall(path.read_text())
    parts = ["set -euo pipefail"]
    commands = 0
    for number, block in enumerate(blocks, 1):
        parts += [f'echo "=== guide block {number}" >&2', block]
        commands += sum(1 for line in block.splitlines() if line.strip() and not line.lstrip().startswith("#"))
    return "\n".join(parts), len(blocks), commands


@pytest.mark.timeout(600)
@pytest.mark.parametrize("server", ["run"], indirect=True)
def test_the_guide_runs_as_written(server, scenario):
    script, blocks, commands = guide_script()
    assert server.port != 8443 and blocks >= 12
    started = time.monotonic()

    result = subprocess.run(
        ["bash", "-c", script],
        cwd=ROOT,
        env={**server.env, "PORT": str(server.port)},  # what a reader's shell has: the port it chose
        capture_output=True,
        text=True,
        timeout=300,
    )

    elapsed = time.monotonic() - started
    scenario.effects.update(blocks=blocks, commands=commands, seconds=round(elapsed))
    output = (result.stdout + result.stderr)[-6000:]
    assert result.returncode == 0, f"the guide stopped (exit {result.returncode}):\n{output}"
    assert f"=== guide block {blocks}" in result.stderr
    # The marketplace's last step printed the inbox's event types, every one's signature verified.
    assert "'delivery.approved'" in result.stdout and "'task.created'" in result.stdout


@pytest.mark.parametrize("server", ["run"], indirect=True)
def test_the_banner_comes_last_and_every_link_in_it_answers(server, scenario):
    log = server.log_text()
    banner_at = log.rindex("Demo user: ")
    assert log.rindex(" ready.") < banner_at  # the worker's "celery@... ready."
    assert log.index("beat: Starting") < banner_at
    assert f"API:      {server.base_url}/api/v1/" in log[banner_at - 2000 :]

    # `make info`: the same lines, the server found from its var/ (no PORT given).
    info = subprocess.run(
        ["make", "-s", "info"], cwd=ROOT, env=server.env, capture_output=True, text=True, timeout=120, check=True
    ).stdout
    assert f"Server:   {server.base_url} " in info

    links = sorted(set(re.findall(r"https://[^\s<>]+", info)))
    assert f"{server.base_url}/api/v1/" in links and f"{server.base_url}/" in links
    with httpx.Client(verify=False, timeout=30) as client:
        statuses = {link: client.get(link).status_code for link in links}
    scenario.effects.update(links=len(links))
    assert all(status in (200, 302) for status in statuses.values()), statuses
