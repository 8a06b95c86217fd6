"""The counts payments keeps (core.db.counters; docs/decisions.md#lists).

`earnings.owner.<owner>` counts each seller's earnings and `payouts.owner.<owner>` each seller's payouts, for
the `total` of their earnings and payouts lists (`GET /api/v1/payouts/earnings`, `GET /api/v1/payouts`):
grouped counts kept by the triggers of migration 0011, every row counted (both lists show every status;
money rows are never deleted, so a count only grows)."""

from __future__ import annotations

from core.db import counters
from payments.models import Earning, Payout

OWNER_EARNINGS = "earnings.owner"
OWNER_PAYOUTS = "payouts.owner"


def owner_earnings(owner_id) -> str:
    return counters.key_name(OWNER_EARNINGS, owner_id)


def owner_payouts(owner_id) -> str:
    return counters.key_name(OWNER_PAYOUTS, owner_id)


counters.register_grouped(OWNER_EARNINGS, lambda: Earning.objects.all(), by=("owner_id",))
counters.register_grouped(OWNER_PAYOUTS, lambda: Payout.objects.all(), by=("owner_id",))
