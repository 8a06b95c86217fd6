"""Signal receivers of the local demo, connected by DemoConfig.ready() in the local profile only."""

from __future__ import annotations

from collections.abc import Callable

from django.conf import settings


def mark_ready(role: str) -> Callable[..., None]:
    """A receiver that writes $VAR_DIR/ready/<role> (scripts/run.sh waits for these to print its banner)."""

    def receiver(*args, **kwargs) -> None:
        ready = settings.VAR_DIR / "ready"
        ready.mkdir(parents=True, exist_ok=True)
        (ready / role).write_text("ready\n")

    return receiver
