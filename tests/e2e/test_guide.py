"""docs/guide.md runs as written: its shell blocks, in order, with bash against the real `make run` server
on a port that is not the default (the session's shared server), every command stopping the run on an
error (`curl --fail-with-body`, `set -euo pipefail`). They cover every area, the marketplace with the demo
agent `make run` ships (bid, payment by `payments_simulate` with the API's payment id, dispatch, a result
from the local model, approval), webhooks arriving in the local inbox, one of them verified by the guide
itself with the subscription's secret it kept, and the seller's side: the demo agent's earning paid out
(`manage.py payouts_run`), its payout `paid`.

And the start-up banner (docs/guide.md#the-local-demo): printed last, after the worker's and beat's
start-up output, repeated by `manage.py demo_info` (`make info`), every link in it answering.
"""

from __future__ import annotations

import json
import re
import subprocess
import time
from pathlib import Path

import httpx
import pytest

from tests.e2e.harness import ROOT

GUIDE = ROOT / "docs" / "guide.md"
TOUR = ROOT / "docs" / "tour.md"
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
    # The reader verified the approval's signature with the secret the subscription's answer showed once.
    assert "signature verified: delivery.approved" in result.stdout
    # The seller's money arrived: the demo agent bid 90 % of the 40.00 budget, less the 10 % fee.
    assert re.search(r"^paid 32\.40 usd$", result.stdout, re.MULTILINE), output


@pytest.mark.timeout(300)
@pytest.mark.parametrize("server", ["run"], indirect=True)
def test_the_tour_runs_as_written(server):
    """docs/tour.md's commands, the README's first pointer, run as a newcomer pastes them."""
    script, blocks, _commands = guide_script(TOUR)
    assert blocks >= 3

    result = subprocess.run(
        ["bash", "-c", script],
        cwd=ROOT,
        env={**server.env, "PORT": str(server.port)},
        capture_output=True,
        text=True,
        timeout=240,
    )

    output = (result.stdout + result.stderr)[-6000:]
    assert result.returncode == 0, f"the tour stopped (exit {result.returncode}):\n{output}"
    assert f"=== guide block {blocks}" in result.stderr


def guide_function(name: str, path: Path = GUIDE) -> str:
    """The definition of a shell function one of the guide's blocks defines (`name() { ...; }`)."""
    [definition] = re.findall(rf"^{name}\(\) \{{.*?; \}}$", path.read_text(), re.DOTALL | re.MULTILINE)
    return definition


def test_the_guides_webhook_check_refuses_a_wrong_signature():
    """`verify_webhook` (the guide's webhooks section) passes a delivery signed with the kept secret, also
    beside another secret's signature (a rotation), and fails on a wrong secret or a changed body."""
    from signed_delivery.signing import new_secret, sign_headers

    function = guide_function("verify_webhook")
    kept, other = new_secret(), new_secret()
    body = json.dumps({"type": "delivery.approved", "timestamp": "2030-01-01T00:00:00Z", "data": {"auto": False}})

    def check(secret: str, signers: list[str], sent: str = body) -> subprocess.CompletedProcess:
        delivery = {"headers": sign_headers(signers, "msg_1", int(time.time()), body), "body": sent}
        return subprocess.run(
            ["bash", "-c", f'set -euo pipefail\n{function}\nverify_webhook "$1"', "guide", secret],
            input=json.dumps(delivery),
            capture_output=True,
            text=True,
            timeout=30,
        )

    assert check(kept, [kept]).stdout == "signature verified: delivery.approved\n"
    assert check(kept, [other, kept]).returncode == 0
    refused = [check(other, [kept]), check(kept, [kept], sent=body.replace("false", "true"))]
    assert all(r.returncode == 1 and "does not match" in r.stderr and not r.stdout for r in refused), refused


@pytest.mark.parametrize("server", ["run"], indirect=True)
def test_the_guide_and_the_landing_page_name_the_demo_agents_categories(server):
    """What the demo agent bids on, as registered by `make run`, in the guide's and the landing page's words."""
    categories = server.query("from demo.services import demo_agent\nresult = demo_agent().capabilities")

    [in_guide] = re.findall(r"`demo-copywriter`.*?bids on open tasks in the (.*?) categories", GUIDE.read_text(), re.S)
    assert re.findall(r"`(\w+)`", in_guide) == categories
    landing = httpx.get(f"{server.base_url}/", verify=False, timeout=30).text
    [on_landing] = re.findall(r"<code>demo-copywriter</code> bids on open (.*?) tasks", landing)
    assert re.split(r", | and ", on_landing) == categories


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
