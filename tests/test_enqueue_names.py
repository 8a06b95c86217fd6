"""Every task a service queues by name (core.ops.enqueue) is a task Celery knows: a misspelt name would only
show up as a message no worker takes."""

from __future__ import annotations

import ast
from pathlib import Path

from config.celery_app import app

ROOT = Path(__file__).resolve().parent.parent
NOT_PRODUCT = {"tests", "node_modules", "var", "migrations"}
HELPERS = {"enqueue_after_commit", "enqueue_now"}


def _product_modules() -> dict[str, ast.Module]:
    modules = {}
    for path in ROOT.rglob("*.py"):
        parts = path.relative_to(ROOT).with_suffix("").parts
        if NOT_PRODUCT.intersection(parts) or parts[0].startswith("."):
            continue
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        modules[name] = ast.parse(path.read_text())
    return modules


def _string_constants(tree: ast.Module) -> dict[str, str]:
    """Module-level `NAME = "..."`."""
    return {
        target.id: node.value.value
        for node in tree.body
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str)
        for target in node.targets
        if isinstance(target, ast.Name)
    }


def _called_name(call: ast.Call) -> str | None:
    func = call.func
    return func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else None


def queued_task_names(modules: dict[str, ast.Module]) -> list[tuple[str, str]]:
    """(task name, where) for each call of the helpers: a string literal, or a module-level constant
    holding one (defined in the module or imported from another). Anything else is not checkable."""
    constants = {name: _string_constants(tree) for name, tree in modules.items()}
    found = []
    for module, tree in modules.items():
        if module == "core.ops.enqueue":  # the helpers themselves, passing the name on
            continue
        known = dict(constants[module])
        for node in tree.body:
            if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module in constants:
                for alias in node.names:
                    if alias.name in constants[node.module]:
                        known[alias.asname or alias.name] = constants[node.module][alias.name]
        for call in ast.walk(tree):
            if not (isinstance(call, ast.Call) and _called_name(call) in HELPERS and call.args):
                continue
            first = call.args[0]
            if isinstance(first, ast.Constant) and isinstance(first.value, str):
                name = first.value
            elif isinstance(first, ast.Name) and first.id in known:
                name = known[first.id]
            else:
                name = f"<not a string literal: {ast.unparse(first)}>"
            found.append((name, f"{module}:{call.lineno}"))
    return found


def test_every_task_queued_by_name_is_registered():
    app.loader.import_default_modules()  # the apps' tasks modules (autodiscover)
    queued = queued_task_names(_product_modules())
    assert len(queued) >= 5, queued  # the scan finds the call sites, or it proves nothing

    unknown = [(name, where) for name, where in queued if name not in app.tasks]

    assert unknown == []
