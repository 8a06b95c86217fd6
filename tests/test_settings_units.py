"""Durations say their unit. The settings renamed to end in _SECONDS still take their old environment
variables for one release, the new name winning when both are set (docs/operations.md#renamed-settings),
and resolve to the same numbers of the same types as before; no setting read from the environment is named
for a duration without its unit. Each environment is resolved in a process of its own, as a server's."""

from __future__ import annotations

import ast
import re
from pathlib import Path

from tests.support.settings_probe import run_probe

ROOT = Path(__file__).resolve().parent.parent
PRODUCTION = "config.settings.production"  # the profile that reads every one of them (beat's need Redis)

# Old variable: (new variable, its default, of the type its setting had before the rename).
RENAMED = {
    "DATABASE_BUSY_TIMEOUT": ("DATABASE_BUSY_TIMEOUT_SECONDS", 20),
    "DATABASE_CONNECT_TIMEOUT": ("DATABASE_CONNECT_TIMEOUT_SECONDS", 5),
    "SERVE_TLS_HEADER_TIMEOUT": ("SERVE_TLS_HEADER_TIMEOUT_SECONDS", 10.0),
    "SERVE_TLS_BODY_TIMEOUT": ("SERVE_TLS_BODY_TIMEOUT_SECONDS", 30.0),
    "SERVE_TLS_KEEPALIVE_TIMEOUT": ("SERVE_TLS_KEEPALIVE_TIMEOUT_SECONDS", 5.0),
    "HEALTH_CHECK_INTERVAL": ("HEALTH_CHECK_INTERVAL_SECONDS", 1.0),
    "OPENAI_TIMEOUT": ("OPENAI_TIMEOUT_SECONDS", 60.0),
    "SCRAPER_SNAPSHOT_DEADLINE": ("SCRAPER_SNAPSHOT_DEADLINE_SECONDS", 7200),
    "DELIVERY_STUCK_AFTER": ("DELIVERY_STUCK_AFTER_SECONDS", 1800),
    "PASSWORD_RESET_MAIL_INTERVAL": ("PASSWORD_RESET_MAIL_INTERVAL_SECONDS", 60),
    "EMAIL_VERIFICATION_TIMEOUT": ("EMAIL_VERIFICATION_TIMEOUT_SECONDS", 259200),
    "EMAIL_VERIFICATION_MAIL_INTERVAL": ("EMAIL_VERIFICATION_MAIL_INTERVAL_SECONDS", 60),
    "BEAT_MAX_INTERVAL": ("BEAT_MAX_INTERVAL_SECONDS", 5),
    "BEAT_LOCK_TIMEOUT": ("BEAT_LOCK_TIMEOUT_SECONDS", 30),
    "SUPERVISE_STOP_TIMEOUT": ("SUPERVISE_STOP_TIMEOUT_SECONDS", 8.0),
}
# What a variable sets when that is not the setting of its name: Celery's and celery-redbeat's settings, and
# scripts/supervise.py's STOP_TIMEOUT (the supervisor reads no Django settings).
SETS = {
    "BEAT_MAX_INTERVAL_SECONDS": "CELERY_BEAT_MAX_LOOP_INTERVAL",
    "BEAT_LOCK_TIMEOUT_SECONDS": "CELERY_REDBEAT_LOCK_TIMEOUT",
    "SUPERVISE_STOP_TIMEOUT_SECONDS": "STOP_TIMEOUT",
}
# The Django settings the probe reads; the supervisor's STOP_TIMEOUT it reads from the script itself.
DJANGO_SETTINGS = [SETS.get(new, new) for new, _ in RENAMED.values() if new != "SUPERVISE_STOP_TIMEOUT_SECONDS"]
PROBE = """
import django, json, sys
django.setup()
from django.conf import settings
sys.path.insert(0, "scripts")
import supervise
print(json.dumps({**{name: getattr(settings, name) for name in NAMES}, "STOP_TIMEOUT": supervise.STOP_TIMEOUT}))
""".replace("NAMES", repr(DJANGO_SETTINGS))


def resolve(**environment: str) -> dict:
    """What each variable of RENAMED sets under `environment`, the others (old and new) unset."""
    unset = {name: "" for old, (new, _) in RENAMED.items() for name in (old, new)}
    return run_probe(PROBE, PRODUCTION, DJANGO_SECRET_KEY="units-probe-" + "x" * 40, **{**unset, **environment})


def assert_resolved(seen: dict, expected: dict[str, int | float]) -> None:
    """`expected` by new variable: its setting holds that number, an int or a float as expected."""
    for new, value in expected.items():
        got = seen[SETS.get(new, new)]
        assert got == value and type(got) is type(value), (new, got, value)


def test_unset_they_keep_their_defaults_and_types():
    assert_resolved(resolve(), dict(RENAMED.values()))


def test_each_old_name_still_sets_its_new_setting():
    # A value per variable, none a default, so that each is seen to land where it should and nowhere else.
    values = {old: type(default)(100 + index) for index, (old, (_, default)) in enumerate(RENAMED.items())}

    seen = resolve(**{old: str(value) for old, value in values.items()})

    assert_resolved(seen, {RENAMED[old][0]: value for old, value in values.items()})


def test_the_new_name_wins_over_the_old():
    both = {name: value for old, (new, _) in RENAMED.items() for name, value in ((old, "3"), (new, "4"))}

    seen = resolve(**both)

    assert_resolved(seen, {new: type(default)(4) for new, default in RENAMED.values()})


def test_the_operations_guide_lists_the_renamed_variables():
    guide = (ROOT / "docs" / "operations.md").read_text()
    section = guide.split("### Renamed settings", 1)[1].split("\n#", 1)[0]

    listed = dict(re.findall(r"^\| `([A-Z0-9_]+)` \| `([A-Z0-9_]+)`", section, re.MULTILINE))

    assert listed == {old: new for old, (new, _) in RENAMED.items()}


# A name that ends so holds a duration, and must say its unit (..._SECONDS, _MINUTES, _HOURS, _DAYS).
UNITLESS = re.compile(r"(TIMEOUT|INTERVAL|DEADLINE|AFTER|WINDOW|TTL|DELAY)$")
# Spelled by the libraries that read them: Django's, Celery's and celery-redbeat's.
NOT_OURS = {"PASSWORD_RESET_TIMEOUT", "EMAIL_TIMEOUT", "CELERY_BEAT_MAX_LOOP_INTERVAL", "CELERY_REDBEAT_LOCK_TIMEOUT"}


def environment_reads(node: ast.AST) -> list[str]:
    """The variables env.int, env.float and env_renamed calls under `node` read (env_renamed's new name)."""
    found = []
    for call in ast.walk(node):
        if not isinstance(call, ast.Call) or not call.args or not isinstance(call.args[0], ast.Constant):
            continue
        func = call.func
        if (isinstance(func, ast.Name) and func.id == "env_renamed") or (
            isinstance(func, ast.Attribute)
            and isinstance(func.value, ast.Name)
            and func.value.id == "env"
            and func.attr in ("int", "float")
        ):
            found.append(call.args[0].value)
    return found


def test_no_setting_read_from_the_environment_is_a_duration_without_its_unit():
    names: dict[str, str] = {}  # setting or variable: the file that has it
    for path in sorted((ROOT / "config" / "settings").glob("*.py")):
        tree = ast.parse(path.read_text())
        for variable in environment_reads(tree):
            names[variable] = path.name
        for node in ast.walk(tree):
            if isinstance(node, ast.Assign | ast.AnnAssign) and environment_reads(node.value):
                for target in node.targets if isinstance(node, ast.Assign) else [node.target]:
                    if isinstance(target, ast.Name):
                        names[target.id] = path.name

    assert set(names) >= {"DELIVERY_STUCK_AFTER_SECONDS", "BEAT_LOCK_TIMEOUT_SECONDS", "REVIEW_WINDOW_HOURS"}
    assert set(names) >= NOT_OURS, "an exception whose setting is gone: drop it from NOT_OURS"
    unitless = {name: where for name, where in names.items() if UNITLESS.search(name) and name not in NOT_OURS}
    assert unitless == {}
