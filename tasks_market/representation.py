"""A task as the API shows it, in its lists and its detail, and as announcements to agents carry it
(`task.matched`): one representation, from the columns the lists read (TASK_COLUMNS)."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any
from uuid import UUID

from django.utils import timezone


def _datetime(value: datetime | None) -> str | None:
    """As DRF's DateTimeField renders it (ISO 8601, UTC as `Z`)."""
    if value is None:
        return None
    if value.tzinfo is UTC:  # as the database connection returns them (UTC): no conversion to make
        return value.isoformat()[:-6] + "Z"
    text = timezone.localtime(value, UTC).isoformat()
    return text[:-6] + "Z" if text.endswith("+00:00") else text


def _uuid(value: UUID | None) -> str | None:
    return None if value is None else str(value)


def task_item(row: Mapping[str, Any], viewer_id: Any) -> dict[str, Any]:
    """A task as the API shows it, from its TASK_COLUMNS: the one representation of a task.

    Written out rather than left to DRF's field-by-field machinery because the open-tasks list is
    the hottest read of the marketplace; TaskSerializer below documents the same
    shape for the schema and renders single tasks through this function, and a test pins the two.
    """
    return {
        "id": str(row["id"]),
        "title": row["title"],
        "description": row["description"],
        "budget_amount": f"{row['budget_amount']:.2f}",
        "budget_currency": row["budget_currency"],
        "deadline": _datetime(row["deadline"]),
        "category": row["category"],
        "requirements": [str(item) for item in row["requirements"]],
        "status": row["status"],
        "remixed_from": _uuid(row["remixed_from_id"]),
        "selected_bid_id": _uuid(row["selected_bid_id"]),
        "is_mine": viewer_id is not None and row["poster_id"] == viewer_id,
        "created_at": _datetime(row["created_at"]),
        "updated_at": _datetime(row["updated_at"]),
        "cancelled_at": _datetime(row["cancelled_at"]),
        "completed_at": _datetime(row["completed_at"]),
    }
