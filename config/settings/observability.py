"""Metrics, traces and error reports, each off unless configured (docs/operations.md#metrics-and-traces), and
how often readiness is checked."""

from __future__ import annotations

from config.settings.env import env, env_renamed

# Prometheus (core.ops.metrics): on when PROMETHEUS_MULTIPROC_DIR is set, as scripts/serve.sh does per role when
# METRICS_PORT is set. The exporters listen on METRICS_HOST: METRICS_PORT (web) and METRICS_WORKER_PORT
# (worker), ports the load balancer never forwards. Loopback by default; on any other address they need
# METRICS_TOKEN, a bearer token every scrape must send (`check --deploy` and the exporter refuse otherwise).
METRICS_ENABLED = bool(env.str("PROMETHEUS_MULTIPROC_DIR", default=""))
METRICS_MIDDLEWARE = ["core.ops.metrics.MetricsMiddleware"] if METRICS_ENABLED else []
METRICS_HOST = env.str("METRICS_HOST", default="127.0.0.1")
METRICS_TOKEN = env.str("METRICS_TOKEN", default="")

# Readiness (`GET /health`, core.ops.health): each process runs the checks at most once per this many seconds
# and answers its last result in between, so a flood of probes costs no cache writes or broker connections.
# 0 checks on every probe.
HEALTH_CHECK_INTERVAL_SECONDS = env_renamed("HEALTH_CHECK_INTERVAL_SECONDS", "HEALTH_CHECK_INTERVAL", float, 1.0)

# OpenTelemetry (core.ops.observability): traces over OTLP http/protobuf when the endpoint is set.
OTEL_EXPORTER_OTLP_ENDPOINT = env.str("OTEL_EXPORTER_OTLP_ENDPOINT", default="")
OTEL_SERVICE_NAME = env.str("OTEL_SERVICE_NAME", default="brandmarket")

# Sentry (core.ops.observability): unhandled errors of views and tasks when the DSN is set.
SENTRY_DSN = env.str("SENTRY_DSN", default="")
SENTRY_ENVIRONMENT = env.str("SENTRY_ENVIRONMENT", default="production")
