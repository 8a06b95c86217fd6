"""The shape of the house, kept by a test (docs/architecture.md): the product code's import graph has no
cycle, `core` imports no domain app, and no project import hides inside a function body."""

from __future__ import annotations

import ast
from functools import cache
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DOMAIN_APPS = (
    "accounts",
    "assistant",
    "brands",
    "demo",
    "payments",
    "scrapers",
    "tasks_market",
    "teams",
    "webhooks_app",
)
PRODUCT = ("config", "core", "signed_delivery", *DOMAIN_APPS)
# AppConfig.ready() is where Django wants registrations (signals, payment-event handlers, checks) to run.
READY_HOOKS = {"ready"}
OUTSIDE_THE_PRODUCT = ("bench", "tests", "tools")


def module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


@cache
def product_modules() -> dict[str, Path]:
    modules = {}
    for package in PRODUCT:
        for path in (ROOT / package).rglob("*.py"):
            if "migrations" not in path.parts:
                modules[module_name(path)] = path
    return modules


def owner(name: str) -> str | None:
    """The product module an imported name lives in (`a.b.c` may be module `a.b` plus attribute `c`)."""
    modules = product_modules()
    while name and name not in modules:
        name = name.rpartition(".")[0]
    return name or None


def imported_names(node: ast.Import | ast.ImportFrom, package: str) -> list[str]:
    if isinstance(node, ast.Import):
        return [alias.name for alias in node.names]
    base = node.module or ""
    if node.level:
        parts = package.split(".")[: len(package.split(".")) - node.level + 1]
        base = ".".join([*parts, base] if base else parts)
    return [base, *(f"{base}.{alias.name}" for alias in node.names)]


@cache
def graph() -> dict[str, set[str]]:
    edges: dict[str, set[str]] = {}
    for name, path in product_modules().items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        targets = set()
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Import | ast.ImportFrom):
                targets.update(owner(target) for target in imported_names(node, package))
        edges[name] = {target for target in targets if target and target != name}
    return edges


def cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for start in edges:
        if start in index:
            continue
        work = [(start, iter(sorted(edges[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(edges[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def test_the_product_import_graph_has_no_cycle():
    assert cycles(graph()) == []


def test_the_cycle_finder_finds_a_cycle():
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


def test_core_and_the_delivery_library_import_no_app_above_them():
    upward = sorted(
        f"{module} -> {target}"
        for module, targets in graph().items()
        if module.split(".")[0] in ("core", "signed_delivery")
        for target in targets
        if target.split(".")[0] not in ("core", "signed_delivery")
    )
    assert upward == []


def test_the_product_imports_no_benchmark_nor_test_code():
    outside = []
    for name, path in product_modules().items():
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Import):
                modules = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0:
                modules = [node.module or ""]
            else:
                continue
            outside += [f"{name}: {module}" for module in modules if module.split(".")[0] in OUTSIDE_THE_PRODUCT]
    assert outside == []


def test_no_project_import_hides_in_a_function_body():
    hidden = []
    for name, path in product_modules().items():
        for function in ast.walk(ast.parse(path.read_text())):
            if not isinstance(function, ast.FunctionDef | ast.AsyncFunctionDef) or function.name in READY_HOOKS:
                continue
            for node in ast.walk(function):
                if isinstance(node, ast.Import | ast.ImportFrom) and node.level == 0:
                    modules = [alias.name for alias in node.names] if isinstance(node, ast.Import) else [node.module]
                    hidden += [f"{name}:{node.lineno} {m}" for m in modules if m and m.split(".")[0] in PRODUCT]
    assert hidden == []
