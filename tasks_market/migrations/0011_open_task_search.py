"""The open-task search (docs/decisions.md#task-search): the indexes of its filters and orders, its text index
per engine, and a kept count of the open tasks per category.

- PostgreSQL: a `search_document` column (tsvector: title A, description B, requirements C, English stemming)
  that a row trigger fills on every insert and every change of those three columns, whatever the writer sets
  (a bulk copy of rows included), and a GIN index of it over the open tasks. It is not in the model: only
  the search reads it (tasks_market.selectors.task_search), and a stored document costs a query no
  `to_tsvector` per row it looks at, where an index over the expression would have.
- SQLite (`make run`'s embedded default): an FTS5 table over the same three columns with the Porter stemmer,
  its content read from the task table and kept by triggers. Altering the task table on SQLite rebuilds it
  and drops these triggers with it: a migration that does must install them again.
- `tasks.open.<category>`: kept counts (core.db.counters) by triggers in the writer's transaction, as
  `tasks.open` is, summed over the categories a search names. No version: the pages are kept under the
  stamp of `tasks.open`, which moves with every write of an open row.

The SQL is literal: a migration does not import the app's code.
"""

from django.core.exceptions import ImproperlyConfigured
from django.db import migrations, models

def _document(row: str) -> str:
    return (
        f"setweight(to_tsvector('english'::regconfig, {row}title), 'A') || "
        f"setweight(to_tsvector('english'::regconfig, {row}description), 'B') || "
        f"setweight(to_tsvector('english'::regconfig, {row}requirements::text), 'C')"
    )


SEED_CATEGORY_COUNTS = (
    "INSERT INTO core_counter (name, shard, value) "
    "SELECT 'tasks.open.' || category, 0, count(*) FROM tasks_market_task WHERE status = 'open' GROUP BY category"
)
UNSEED_CATEGORY_COUNTS = "DELETE FROM core_counter WHERE name LIKE 'tasks.open.%'"

PG_CATEGORY_TRIGGERS = ("insert", "update", "delete")

POSTGRESQL_FORWARD = [
    "ALTER TABLE tasks_market_task ADD COLUMN search_document tsvector",
    f"""
CREATE OR REPLACE FUNCTION tasks_market_task_search_document() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    NEW.search_document := {_document("NEW.")};
    RETURN NEW;
END $$""",
    (
        "CREATE TRIGGER tasks_market_task_search_document BEFORE INSERT OR UPDATE OF title, description, "
        "requirements, search_document ON tasks_market_task FOR EACH ROW "
        "EXECUTE FUNCTION tasks_market_task_search_document()"
    ),
    f"UPDATE tasks_market_task SET search_document = {_document('')}",  # noqa: S608
    "CREATE INDEX task_open_text ON tasks_market_task USING gin (search_document) WHERE status = 'open'",
    """
CREATE OR REPLACE FUNCTION core_counter_add(counter text, delta bigint) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
    IF delta <> 0 THEN
        INSERT INTO core_counter (name, shard, value) VALUES (counter, pg_backend_pid() % 16, delta)
        ON CONFLICT (name, shard) DO UPDATE SET value = core_counter.value + EXCLUDED.value;
    END IF;
END $$""",
    SEED_CATEGORY_COUNTS,
    """
CREATE OR REPLACE FUNCTION core_counter_tasks_open_category() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'INSERT' THEN
        PERFORM core_counter_add('tasks.open.' || r.category, count(*))
        FROM new_rows r WHERE r.status = 'open' GROUP BY r.category;
    ELSIF TG_OP = 'DELETE' THEN
        PERFORM core_counter_add('tasks.open.' || r.category, -count(*))
        FROM old_rows r WHERE r.status = 'open' GROUP BY r.category;
    ELSE
        PERFORM core_counter_add('tasks.open.' || moved.category, sum(moved.delta)::bigint)
        FROM (
            SELECT r.category, 1 AS delta FROM new_rows r WHERE r.status = 'open'
            UNION ALL
            SELECT r.category, -1 AS delta FROM old_rows r WHERE r.status = 'open'
        ) moved
        GROUP BY moved.category;
    END IF;
    RETURN NULL;
END $$""",
    (
        "CREATE TRIGGER core_counter_tasks_open_category_insert AFTER INSERT ON tasks_market_task "
        "REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION core_counter_tasks_open_category()"
    ),
    (
        "CREATE TRIGGER core_counter_tasks_open_category_update AFTER UPDATE ON tasks_market_task "
        "REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT "
        "EXECUTE FUNCTION core_counter_tasks_open_category()"
    ),
    (
        "CREATE TRIGGER core_counter_tasks_open_category_delete AFTER DELETE ON tasks_market_task "
        "REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION core_counter_tasks_open_category()"
    ),
]

POSTGRESQL_BACKWARD = [
    *(
        f"DROP TRIGGER IF EXISTS core_counter_tasks_open_category_{op} ON tasks_market_task"
        for op in PG_CATEGORY_TRIGGERS
    ),
    "DROP FUNCTION IF EXISTS core_counter_tasks_open_category()",
    UNSEED_CATEGORY_COUNTS,
    "DROP INDEX IF EXISTS task_open_text",
    "DROP TRIGGER IF EXISTS tasks_market_task_search_document ON tasks_market_task",
    "DROP FUNCTION IF EXISTS tasks_market_task_search_document()",
    "ALTER TABLE tasks_market_task DROP COLUMN IF EXISTS search_document",
]


def _sqlite_add(category: str, delta: int) -> str:
    return (
        f"INSERT INTO core_counter (name, shard, value) VALUES ('tasks.open.' || {category}, 0, {delta}) "
        "ON CONFLICT (name, shard) DO UPDATE SET value = value + excluded.value;"
    )


SQLITE_TEXT_COLUMNS = "title, description, requirements"
SQLITE_TRIGGERS = (
    "tasks_market_task_text_insert",
    "tasks_market_task_text_delete",
    "tasks_market_task_text_update",
    "core_counter_tasks_open_category_insert",
    "core_counter_tasks_open_category_delete",
    "core_counter_tasks_open_category_out",
    "core_counter_tasks_open_category_in",
)

SQLITE_FORWARD = [
    (
        f"CREATE VIRTUAL TABLE tasks_market_task_text USING fts5({SQLITE_TEXT_COLUMNS}, "
        "content='tasks_market_task', content_rowid='rowid', tokenize='porter unicode61')"
    ),
    "INSERT INTO tasks_market_task_text (tasks_market_task_text) VALUES ('rebuild')",
    (
        "CREATE TRIGGER tasks_market_task_text_insert AFTER INSERT ON tasks_market_task BEGIN "
        f"INSERT INTO tasks_market_task_text (rowid, {SQLITE_TEXT_COLUMNS}) "
        "VALUES (NEW.rowid, NEW.title, NEW.description, NEW.requirements); END"
    ),
    (
        "CREATE TRIGGER tasks_market_task_text_delete AFTER DELETE ON tasks_market_task BEGIN "
        f"INSERT INTO tasks_market_task_text (tasks_market_task_text, rowid, {SQLITE_TEXT_COLUMNS}) "
        "VALUES ('delete', OLD.rowid, OLD.title, OLD.description, OLD.requirements); END"
    ),
    (
        "CREATE TRIGGER tasks_market_task_text_update AFTER UPDATE OF title, description, requirements "
        "ON tasks_market_task BEGIN "
        f"INSERT INTO tasks_market_task_text (tasks_market_task_text, rowid, {SQLITE_TEXT_COLUMNS}) "
        "VALUES ('delete', OLD.rowid, OLD.title, OLD.description, OLD.requirements); "
        f"INSERT INTO tasks_market_task_text (rowid, {SQLITE_TEXT_COLUMNS}) "
        "VALUES (NEW.rowid, NEW.title, NEW.description, NEW.requirements); END"
    ),
    SEED_CATEGORY_COUNTS,
    (
        "CREATE TRIGGER core_counter_tasks_open_category_insert AFTER INSERT ON tasks_market_task "
        f"WHEN NEW.status = 'open' BEGIN {_sqlite_add('NEW.category', 1)} END"
    ),
    (
        "CREATE TRIGGER core_counter_tasks_open_category_delete AFTER DELETE ON tasks_market_task "
        f"WHEN OLD.status = 'open' BEGIN {_sqlite_add('OLD.category', -1)} END"
    ),
    (
        "CREATE TRIGGER core_counter_tasks_open_category_out AFTER UPDATE ON tasks_market_task "
        "WHEN OLD.status = 'open' AND NOT (NEW.status = 'open' AND NEW.category = OLD.category) "
        f"BEGIN {_sqlite_add('OLD.category', -1)} END"
    ),
    (
        "CREATE TRIGGER core_counter_tasks_open_category_in AFTER UPDATE ON tasks_market_task "
        "WHEN NEW.status = 'open' AND NOT (OLD.status = 'open' AND NEW.category = OLD.category) "
        f"BEGIN {_sqlite_add('NEW.category', 1)} END"
    ),
]

SQLITE_BACKWARD = [
    *(f"DROP TRIGGER IF EXISTS {trigger}" for trigger in SQLITE_TRIGGERS),
    "DROP TABLE IF EXISTS tasks_market_task_text",
    UNSEED_CATEGORY_COUNTS,
]

FORWARD = {"postgresql": POSTGRESQL_FORWARD, "sqlite": SQLITE_FORWARD}
BACKWARD = {"postgresql": POSTGRESQL_BACKWARD, "sqlite": SQLITE_BACKWARD}


def _execute(statements, schema_editor):
    vendor = schema_editor.connection.vendor
    if vendor not in statements:  # the two supported engines
        raise ImproperlyConfigured(f"the task search needs PostgreSQL or SQLite, not {vendor}")
    for statement in statements[vendor]:
        schema_editor.execute(statement, params=None)  # literal SQL: its % is SQL's, not a placeholder


def forwards(apps, schema_editor):
    _execute(FORWARD, schema_editor)


def backwards(apps, schema_editor):
    _execute(BACKWARD, schema_editor)


class Migration(migrations.Migration):
    dependencies = [
        ("tasks_market", "0010_payment_moves_to_payments"),
    ]

    operations = [
        migrations.AddIndex(
            model_name="task",
            index=models.Index(
                condition=models.Q(("status", "open")),
                fields=["category", "budget_amount"],
                name="task_open_category_budget",
            ),
        ),
        migrations.AddIndex(
            model_name="task",
            index=models.Index(
                condition=models.Q(("status", "open")),
                fields=["-budget_amount", "-created_at", "-id"],
                name="task_open_by_budget",
            ),
        ),
        migrations.AddIndex(
            model_name="task",
            index=models.Index(
                condition=models.Q(("status", "open")),
                fields=["deadline", "-created_at", "-id"],
                name="task_open_by_deadline",
            ),
        ),
        migrations.RunPython(forwards, backwards),
    ]
