"""Request plumbing below the API layer: middleware, rate limits, Idempotency-Key, CSP, the
error classes services raise and their HTTP answers, access declarations, and the outbound HTTP client's
URL safety (docs/architecture.md#apps)."""
