"""`make run` collects static files once (scripts/static_once.sh, called by scripts/run.sh): a second start
with the same sources and requirements skips collectstatic; a stamp that no longer matches collects again.
The real script in a fresh VAR_DIR, with no server started."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from tests.e2e.harness import INHERITED_NOT, ROOT

COLLECTING = "collecting static files"


def static_once(var_dir: Path) -> str:
    env = {k: v for k, v in os.environ.items() if k not in INHERITED_NOT}
    env.update(VAR_DIR=str(var_dir), DJANGO_SETTINGS_MODULE="config.settings.local")
    result = subprocess.run(
        [str(ROOT / "scripts" / "static_once.sh")], cwd=ROOT, env=env, capture_output=True, text=True, timeout=240
    )
    assert result.returncode == 0, result.stdout + result.stderr
    return result.stdout


def test_the_second_start_skips_collectstatic_until_the_stamp_changes(tmp_path):
    static = tmp_path / "static"

    first = static_once(tmp_path)
    assert COLLECTING in first
    assert (static / ".stamp").read_text().strip() and (static / "admin").is_dir()
    marker = static / "left-by-the-test"  # collectstatic --clear would remove it
    marker.write_text("x")

    second = static_once(tmp_path)

    assert COLLECTING not in second and marker.exists()

    (static / ".stamp").write_text("a stamp of other sources\n")  # as a changed file or requirement makes it
    third = static_once(tmp_path)

    assert COLLECTING in third and not marker.exists()
