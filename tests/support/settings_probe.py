"""Run a few lines of Python under another settings profile (production, say), in a process of its own, and
read back the JSON object its last line prints. The test profile's own variables are left out, so a profile
resolves as it would on a server."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
# config.settings.test sets these for itself; another profile must not inherit them.
DEV_ONLY = {"OUTBOUND_ALLOW_PRIVATE_URLS", "DJANGO_DEBUG", "PUBLIC_BASE_URL", "PAYMENTS_LOCAL_WEBHOOK_URL", "PORT"}


def run_probe(code: str, settings_module: str, **environment: str) -> dict:
    """`environment` adds variables; a value of "" removes one."""
    env = {name: value for name, value in os.environ.items() if name not in DEV_ONLY}
    env.update(DJANGO_SETTINGS_MODULE=settings_module, **environment)
    env = {name: value for name, value in env.items() if value}
    result = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True, timeout=120
    )
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout.strip().splitlines()[-1])
