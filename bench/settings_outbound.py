"""`bench/announcements.py --shape serve`: the production settings, except that outbound calls may reach the
benchmark's own agent endpoint on 127.0.0.1 (production refuses private addresses; nothing else differs)."""

from __future__ import annotations

from config.settings.production import *  # noqa: F403

OUTBOUND_ALLOW_PRIVATE_URLS = True
