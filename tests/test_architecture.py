"""The shape of the house, kept by a test (docs/architecture.md): the product code's import graph has no
cycle, `core` imports no domain app, and no project import hides inside a function body; and the page says
what the code does: its import table is the graph between apps, every arrow down or sideways, its
rooms table is what is on disk, its signing table names every module that signs or verifies, and the
docs name the files that hold the beat schedule."""

from __future__ import annotations

import ast
import re
from functools import cache
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DOMAIN_APPS = (
    "accounts",
    "assistant",
    "brands",
    "demo",
    "demo_seed",
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


# --- docs/architecture.md says what the code does ------------------------------------------------------------

ARCHITECTURE = ROOT / "docs" / "architecture.md"
CELERY_TASK_MODULES = {f"{app}.tasks" for app in PRODUCT}


def doc_table(heading: str, *, after: str | None = None) -> list[dict[str, str]]:
    """The first Markdown table under `heading` in docs/architecture.md (after the line starting with
    `after`, when given), as one dict per row keyed by the header cells."""
    lines = ARCHITECTURE.read_text().splitlines()
    start = next(i for i, line in enumerate(lines) if line.lstrip("#").strip() == heading and line.startswith("#"))
    if after is not None:
        start = next(i for i in range(start, len(lines)) if lines[i].startswith(after))
    rows: list[list[str]] = []
    for line in lines[start + 1 :]:
        if line.startswith("#"):
            break
        if line.startswith("|"):
            rows.append([cell.strip() for cell in line.strip().strip("|").split("|")])
        elif rows:
            break
    assert rows, f"no table under {heading!r} in docs/architecture.md"
    header, _rule, *body = rows
    return [dict(zip(header, row, strict=True)) for row in body]


def named_apps(cell: str) -> set[str]:
    return {name for name in re.findall(r"`([a-z_]+)`", cell) if name in PRODUCT}


def app_of(module: str) -> str:
    return module.split(".")[0]


def app_imports() -> dict[tuple[str, str], list[str]]:
    """(importing app, imported app) → the module arrows that make it, between the project's apps."""
    arrows: dict[tuple[str, str], list[str]] = {}
    for module, targets in graph().items():
        for target in targets:
            if app_of(module) != app_of(target):
                arrows.setdefault((app_of(module), app_of(target)), []).append(f"{module} -> {target}")
    return arrows


def allowed_imports() -> set[tuple[str, str]]:
    """The import table of docs/architecture.md: (app, app it may import)."""
    table = doc_table("What each app may import")
    assert {next(iter(named_apps(row["App"]))) for row in table} == set(PRODUCT), "one row per app of the project"
    return {(next(iter(named_apps(row["App"]))), target) for row in table for target in named_apps(row["May import"])}


def app_rows() -> dict[str, int]:
    return {next(iter(named_apps(row["App"]))): int(row["Row"]) for row in doc_table("What each app may import")}


def test_every_import_between_apps_is_in_the_architecture_table():
    allowed = allowed_imports()
    actual = app_imports()

    not_allowed = sorted(f"{a} -> {b}: {', '.join(sorted(actual[a, b]))}" for a, b in actual if (a, b) not in allowed)
    assert not_allowed == [], "imports docs/architecture.md does not allow (add a row, or move the code)"
    stale = sorted(f"{a} -> {b}" for a, b in allowed if (a, b) not in actual)
    assert stale == [], "docs/architecture.md allows imports the code no longer makes (remove them from the table)"


def test_no_app_imports_an_app_above_it():
    """A lower app reaches a higher one only through what the higher one registers from its ready()
    (payments.registry, accounts.registry): no import points up, and none is excused."""
    rows = app_rows()
    upward = sorted(f"{a} -> {b}" for a, b in allowed_imports() if rows[b] > rows[a])
    assert upward == []
    assert "Known exceptions (arrows that point up; the test accepts exactly these): none." in ARCHITECTURE.read_text()


def test_no_two_apps_import_each_other():
    edges: dict[str, set[str]] = {app: set() for app in PRODUCT}
    for importer, imported in allowed_imports():
        edges[importer].add(imported)
    assert cycles(edges) == []


def test_the_rooms_table_is_what_is_on_disk():
    table = doc_table("Inside an app")
    wrong = []
    for row in table:
        app = next(iter(named_apps(row.pop("App"))))
        for room, cell in row.items():
            path = ROOT / app / room.strip("`")
            on_disk = path.is_dir() or path.with_suffix(".py").is_file()
            if on_disk != (cell == "yes"):
                wrong.append(f"{app}: {room} is {'there' if on_disk else 'absent'}, the table says {cell!r}")
    assert {next(iter(named_apps(row["App"]))) for row in doc_table("Inside an app")} == set(DOMAIN_APPS)
    assert wrong == []


def signing_calls(tree: ast.AST) -> bool:
    """Whether a module computes an HMAC (`hmac.new`, `hmac.digest`) or signs or verifies with the
    standardwebhooks library (`Webhook(secret).sign(...)` / `.verify(...)`)."""
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)):
            continue
        target, attribute = node.func.value, node.func.attr
        if isinstance(target, ast.Name) and target.id == "hmac" and attribute in ("new", "digest"):
            return True
        if (
            attribute in ("sign", "verify")
            and isinstance(target, ast.Call)
            and isinstance(target.func, ast.Name)
            and target.func.id == "Webhook"
        ):
            return True
    return False


def test_the_signing_table_names_every_module_that_signs_or_verifies():
    found = {
        str(path.relative_to(ROOT)) for path in product_modules().values() if signing_calls(ast.parse(path.read_text()))
    }
    listed = {re.search(r"`([^`]+)`", row["Module"])[1] for row in doc_table("Signing and verifying")}
    assert found == listed


def test_the_signing_finder_finds_both_kinds():
    assert signing_calls(ast.parse("hmac.new(key, body, hashlib.sha256)"))
    assert signing_calls(ast.parse("Webhook(secret).verify(body, headers)"))
    assert not signing_calls(ast.parse("hmac.compare_digest(a, b)"))


def test_no_product_module_imports_a_celery_task_module():
    """Services queue tasks by name (core.ops.enqueue); tasks import services, never the reverse."""
    importers = sorted(
        f"{module} -> {target}" for module, targets in graph().items() for target in targets & CELERY_TASK_MODULES
    )
    assert importers == []


def test_every_handlers_module_is_imported_from_its_apps_ready():
    """Inbound event handlers register when their module is imported (`payment_handlers.py` in each app that
    reacts to payments, `payments/dispute_handlers.py`): each is imported from its app's ready()."""
    handlers = [module_name(path) for app in PRODUCT for path in sorted((ROOT / app).glob("*_handlers.py"))]
    assert any(module.endswith(".payment_handlers") for module in handlers), (
        "no app has payment_handlers.py any more: update docs/architecture.md"
    )
    assert "payments.dispute_handlers" in handlers
    assert [module for module in handlers if module not in graph()[f"{app_of(module)}.apps"]] == []


def test_the_beat_schedule_is_where_the_docs_say():
    assigned = set()
    for path in (ROOT / "config" / "settings").glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Assign) and any(
                isinstance(t, ast.Name) and t.id == "CELERY_BEAT_SCHEDULE" for t in node.targets
            ):
                assigned.add(str(path.relative_to(ROOT)))
    assert assigned == {"config/settings/celery.py", "config/settings/local.py"}

    docs = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
    claims = [
        (doc.name, match[1])
        for doc in docs
        for match in re.finditer(r"CELERY_BEAT_SCHEDULE`? (?:in|lives in) `([^`]+)`", doc.read_text())
    ]
    assert claims, "the docs no longer say where the beat schedule is"
    assert [(doc, where) for doc, where in claims if where not in assigned] == []


def test_the_domain_rooms_import_no_model_and_no_database():
    """`domain/` holds pure rules (docs/architecture.md, the rooms): no models, no database."""
    touching = []
    for name, path in product_modules().items():
        if ".domain" not in name:
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Import | ast.ImportFrom):
                modules = [a.name for a in node.names] if isinstance(node, ast.Import) else [node.module or ""]
                touching += [f"{name}: {m}" for m in modules if m.startswith("django.db") or ".models" in f"{m}."]
    assert touching == []


def test_no_product_module_imports_the_alias_kept_for_outside_scripts():
    """core/ratelimit.py re-exports core.http.ratelimit for scripts outside the project; the project itself
    imports the real module (docs/architecture.md#apps)."""
    assert sorted(module for module, targets in graph().items() if "core.ratelimit" in targets) == []


def test_below_the_http_layer_no_module_imports_an_apps_api():
    """Services, selectors, tasks, models, domain rules and providers are called by the API, never the
    reverse (docs/architecture.md, the rooms): what they need of a representation lives beside them
    (`tasks_market.representation`). Only core's own HTTP plumbing (`core.api`) is shared."""
    rooms = (".services", ".selectors", ".tasks", ".models", ".domain", ".providers")
    upward = sorted(
        f"{module} -> {target}"
        for module, targets in graph().items()
        if any(f"{module}.".startswith(f"{app_of(module)}{room}.") for room in rooms)
        for target in targets
        if ".api." in f".{target}." and not target.startswith("core.")
    )
    assert upward == []
