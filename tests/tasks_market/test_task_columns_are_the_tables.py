"""TASK_COLUMNS, the columns a task's representation reads and the lists fetch with `.values()` (and the kept
pages of the open list hold), are columns of the task table: each entry the `attname` of a concrete field
(`poster_id`, not the relation `poster`), and each a column the database itself has."""

from __future__ import annotations

import pytest
from django.db import connection

from tasks_market.api.serializers.tasks import TASK_COLUMNS
from tasks_market.models import Task


def test_each_entry_is_once_in_the_list():
    assert TASK_COLUMNS
    assert len(set(TASK_COLUMNS)) == len(TASK_COLUMNS)


def test_each_entry_is_a_concrete_field_of_the_model_by_its_column_name():
    fields = {field.attname: field for field in Task._meta.concrete_fields}
    assert not [column for column in TASK_COLUMNS if column not in fields], sorted(fields)
    # The name `.values()` returns is the column's own name (no `db_column` elsewhere).
    assert [fields[column].column for column in TASK_COLUMNS] == list(TASK_COLUMNS)


@pytest.mark.django_db
def test_each_entry_is_a_column_of_the_table_in_the_database():
    assert Task._meta.db_table == "tasks_market_task"
    with connection.cursor() as cursor:
        description = connection.introspection.get_table_description(cursor, "tasks_market_task")
    columns = {column.name for column in description}
    assert not [column for column in TASK_COLUMNS if column not in columns], sorted(columns)
