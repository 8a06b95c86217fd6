"""Paying sellers, by concern (docs/payouts.md): payout accounts, captures, earnings, payouts,
chargebacks and refunds after release. Each module's provider calls are made with no transaction open
and an idempotency key derived from the row they serve."""
