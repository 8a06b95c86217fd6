"""Every task a service queues by name (core.enqueue) is a task Celery knows: a misspelt name would only
show up as a message no worker takes."""

from __future__ import annotations

import ast
from pathlib import Path

from config.celery_app import app

ROOT = Path(__file__).resolve().parent.parent
NOT_PRODUCT = {"tests", "node_modules", "var", "migrations"}
HELPERS = {"enqueue_after_commit", "enqueue_now"}


def _product_files() -> list[Path]:
    return [
        path
        for path in ROOT.rglob("*.py")
        if not NOT_PRODUCT.intersection(path.relative_to(ROOT).parts)
        and not path.relative_to(ROOT).parts[0].startswith(".")
    ]


def _called_name(call: ast.Call) -> str | None:
    func = call.func
    return func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else None


def queued_task_names(source: str, where: str) -> list[tuple[str, str]]:
    """(task name, where) for each call of the helpers: a string literal, or a module-level constant
    holding one. Anything else is reported as not checkable."""
    tree = ast.parse(source)
    constants = {
        target.id: node.value.value
        for node in tree.body
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str)
        for target in node.targets
        if isinstance(target, ast.Name)
    }
    found = []
    for call in ast.walk(tree):
        if not (isinstance(call, ast.Call) and _called_name(call) in HELPERS and call.args):
            continue
        first = call.args[0]
        if isinstance(first, ast.Constant) and isinstance(first.value, str):
            name = first.value
        elif isinstance(first, ast.Name) and first.id in constants:
            name = constants[first.id]
        else:
            name = f"<not a string literal: {ast.unparse(first)}>"
        found.append((name, f"{where}:{call.lineno}"))
    return found


def test_every_task_queued_by_name_is_registered():
    app.loader.import_default_modules()  # the apps' tasks modules (autodiscover)
    queued = [
        found for path in _product_files() for found in queued_task_names(path.read_text(), str(path.relative_to(ROOT)))
    ]
    assert len(queued) >= 5, queued  # the scan finds the call sites, or it proves nothing

    unknown = [(name, where) for name, where in queued if name not in app.tasks]

    assert unknown == []
