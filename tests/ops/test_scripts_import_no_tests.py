"""The on-demand scripts (scripts/) and what they share with the tests (tools/) import no test module: the
tests import them, never the other way round, so a script runs without the test tree's helpers."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def imported_modules(path: Path) -> list[str]:
    found = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            found.append(node.module)
    return found


def test_no_script_nor_tool_imports_a_test_module():
    sources = [*sorted((ROOT / "scripts").glob("*.py")), *sorted((ROOT / "tools").rglob("*.py"))]
    assert len(sources) > 5
    offending = [
        f"{path.relative_to(ROOT)}: {module}"
        for path in sources
        for module in imported_modules(path)
        if module.split(".")[0] == "tests"
    ]
    assert offending == []


def test_the_scripts_that_drive_servers_run_with_the_tests_out_of_reach():
    # `--help` imports everything a run imports; `tests` is made unimportable first.
    for name in ("soak", "multinode"):
        code = (
            "import runpy, sys; sys.modules['tests'] = None; "
            f"sys.argv = ['{name}.py', '--help']; runpy.run_path('scripts/{name}.py', run_name='__main__')"
        )
        result = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120)
        assert result.returncode == 0 and "usage:" in result.stdout, result.stderr
