"""One engine for every signed outbound delivery: outbound webhooks and agent dispatch use it.

It claims a delivery, signs the message per Standard Webhooks, sends it with a total deadline, records
the attempt, backs off on a schedule and sweeps up lost work (see docs/architecture.md#signed-delivery-engine).
A library, not a Django app: it has no concrete models and imports no domain app.
"""
