"""Writes of the task marketplace, one module per entity. Every state change is a service function
that checks the current state and applies the change atomically (docs/decisions.md#states)."""
