"""Helpers for tests of the Django admin."""

from __future__ import annotations


def actions_of(response) -> set[str]:
    """The admin actions a change list offers (none: no action form)."""
    form = response.context["action_form"]
    return {name for name, _ in form.fields["action"].choices if name} if form else set()
