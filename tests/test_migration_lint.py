"""Safe deploys: no migration breaks the code still running during a rolling deploy (django-migration-linter).

During a rolling deploy the release step migrates while nodes of the previous release still serve, so a
migration must be backward compatible: add before use, drop only after no running code reads it
(docs/operations.md#migrations-in-a-rolling-deploy). The linter reads each migration's SQL (`sqlmigrate`)
and flags what old code cannot survive: a dropped or renamed column or table, a NOT NULL column without a
default, and the like, as its `lintmigrations` command does.

Initial migrations create tables nobody reads yet and are not linted. BASELINE lists the migrations,
already applied everywhere, that the linter flags and that are tolerated (each says why); a new one that
is flagged fails this test, and the way out is the expand/contract order, or a reviewed
`migration_linter.IgnoreMigration()` operation in it when the old code provably never touches it.
"""

from __future__ import annotations

import contextlib
import io
import sys
import textwrap
from pathlib import Path

import pytest
from django.apps import apps
from django_migration_linter import MigrationLinter

ROOT = Path(__file__).resolve().parents[1]
# The project's own apps (Django's and third parties' migrations are theirs to keep compatible).
PROJECT_APPS = sorted(config.label for config in apps.get_app_configs() if Path(config.path).resolve().parent == ROOT)

# (app, migration): why it is tolerated although the linter flags it. Each adds a NOT NULL column with a
# Python-side default (Django sets it on existing rows, then drops the database default), so code of the
# release before, inserting without the column, would fail during a rolling deploy. All three shipped
# before the multi-node shape existed, with deploys that stopped every node; a new one uses `db_default`.
BASELINE: dict[tuple[str, str], str] = {
    ("brands", "0002_trackedgroupmember_display_name"): "shipped with a stop-the-world deploy",
    ("tasks_market", "0002_payment_mismatch"): "shipped with a stop-the-world deploy",
    ("teams", "0002_team_checkout_url"): "shipped with a stop-the-world deploy",
}


def lint(**options) -> tuple[MigrationLinter, str]:
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        linter = MigrationLinter(no_cache=True, ignore_initial_migrations=True, **options)
        linter.lint_all_migrations()
        linter.print_summary()
    return linter, out.getvalue()


@pytest.mark.django_db
def test_no_migration_is_backward_incompatible():
    ignore = [name for _, name in BASELINE]
    linter, output = lint(include_apps=PROJECT_APPS, ignore_name=ignore)
    print(output)
    assert linter.nb_total > 0
    assert not linter.has_errors, output


@pytest.mark.django_db
def test_the_linter_flags_a_dropped_column(tmp_path, settings):
    """A migration dropping a column (the contract step done too early) is flagged."""
    package = tmp_path / "lint_probe_migrations"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "0001_initial.py").write_text(
        textwrap.dedent(
            """
            from django.db import migrations, models

            class Migration(migrations.Migration):
                initial = True
                dependencies = []
                operations = [
                    migrations.CreateModel(
                        name="Probe",
                        fields=[
                            ("id", models.BigAutoField(primary_key=True)),
                            ("name", models.CharField(max_length=20)),
                        ],
                    ),
                ]
            """
        )
    )
    (package / "0002_drop_name.py").write_text(
        textwrap.dedent(
            """
            from django.db import migrations

            class Migration(migrations.Migration):
                dependencies = [("demo", "0001_initial")]
                operations = [migrations.RemoveField(model_name="probe", name="name")]
            """
        )
    )
    sys.path.insert(0, str(tmp_path))
    try:
        settings.MIGRATION_MODULES = {"demo": "lint_probe_migrations"}
        linter, output = lint(include_apps=["demo"])
    finally:
        sys.path.remove(str(tmp_path))
        sys.modules.pop("lint_probe_migrations", None)
    assert linter.nb_erroneous == 1, output
    assert "(demo, 0002_drop_name)... ERR" in output and "dropping column" in output.lower(), output
