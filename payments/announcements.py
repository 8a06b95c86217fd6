"""Outbound events about sellers' money (`earning.available`, `payout.paid`, ...), without payments
importing the app that sends them: webhooks_app registers its publisher here from its AppConfig.ready()
(the same one-way arrangement as payments.registry, see docs/architecture.md#payments)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

Sink = Callable[[str, dict[str, Any], Any], None]  # (event type, data, owner id)

_sinks: list[Sink] = []


def sink_register(sink: Sink) -> None:
    if sink not in _sinks:
        _sinks.append(sink)


def announce(event_type: str, data: dict[str, Any], owner_id) -> None:
    """Call inside the transaction that made the change (the sink writes the event in it)."""
    for sink in _sinks:
        sink(event_type, data, owner_id)
