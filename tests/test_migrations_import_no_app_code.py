"""A migration does not import the project's code: replayed on a fresh database next year, it must do what it
did when it shipped, not what today's code would do. What it needs (trigger SQL, a helper function) is
frozen in it as text; Django's own modules are fine.

Read as source (ast), never imported: a migration importing app code fails here by name, with its line.
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

# The project's packages: these by name, and every top-level package or app directory found in the tree
# (so a new app is covered without editing this list), and the top-level modules (manage.py).
NAMED = {
    "config",
    "core",
    "signed_delivery",
    "accounts",
    "assistant",
    "brands",
    "demo",
    "payments",
    "scrapers",
    "tasks_market",
    "teams",
    "webhooks_app",
}


def project_packages() -> set[str]:
    found = {
        path.name
        for path in ROOT.iterdir()
        if path.is_dir()
        and not path.name.startswith(".")
        and ((path / "apps.py").is_file() or (path / "__init__.py").is_file())
    }
    modules = {path.stem for path in ROOT.glob("*.py")}
    return NAMED | found | modules


def migration_files() -> list[Path]:
    return sorted(
        path
        for path in ROOT.glob("*/migrations/*.py")
        if not path.relative_to(ROOT).parts[0].startswith(".")  # .venv and the like: not ours
    )


def _top(dotted: str) -> str:
    return dotted.split(".", 1)[0]


def app_imports(path: Path, packages: set[str], root: Path = ROOT) -> list[str]:
    """Every import in the file (at any depth: module level, in a function) that reaches project code."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), filename=str(path))):
        where = f"{path.relative_to(root)}:{getattr(node, 'lineno', '?')}"
        if isinstance(node, ast.Import):
            found += [f"{where}: import {alias.name}" for alias in node.names if _top(alias.name) in packages]
        elif isinstance(node, ast.ImportFrom):
            names = ", ".join(alias.name for alias in node.names)
            source = "." * node.level + (node.module or "")
            # A relative import resolves inside the app's own package.
            if node.level or _top(node.module or "") in packages:
                found.append(f"{where}: from {source} import {names}")
        elif isinstance(node, ast.Call):
            # importlib.import_module("core.x") / __import__("core.x"): the same import, spelled as a call.
            func = node.func
            called = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", None)
            first = node.args[0] if node.args else None
            if (
                called in ("import_module", "__import__")
                and isinstance(first, ast.Constant)
                and isinstance(first.value, str)
                and _top(first.value) in packages
            ):
                found.append(f"{where}: {called}({first.value!r})")
    return sorted(found, key=lambda line: int(line.split(":")[1]))


def test_the_project_packages_and_migrations_are_found():
    packages = project_packages()
    assert {"core", "tasks_market", "accounts", "config"} <= packages
    apps_with_migrations = {
        path.name for path in ROOT.iterdir() if (path / "apps.py").is_file() and (path / "migrations").is_dir()
    }
    assert apps_with_migrations
    assert apps_with_migrations <= {path.relative_to(ROOT).parts[0] for path in migration_files()}


def test_no_migration_imports_application_code():
    packages = project_packages()
    offending = [line for path in migration_files() for line in app_imports(path, packages)]
    assert not offending, "migrations importing the project's code (freeze what they need in them):\n" + "\n".join(
        offending
    )


def test_the_check_sees_every_way_to_import(tmp_path):
    migration = tmp_path / "0001_x.py"
    migration.write_text(
        "import uuid\nimport core.models\nfrom django.db import migrations\nfrom core.db.counters import installer\n"
        "from . import helpers\n\ndef run(apps, schema_editor):\n    from tasks_market import counters\n"
        "    importlib.import_module('payments.models')\n"
    )
    assert app_imports(migration, {"core", "tasks_market", "payments"}, root=tmp_path) == [
        "0001_x.py:2: import core.models",
        "0001_x.py:4: from core.db.counters import installer",
        "0001_x.py:5: from . import helpers",
        "0001_x.py:8: from tasks_market import counters",
        "0001_x.py:9: import_module('payments.models')",
    ]
