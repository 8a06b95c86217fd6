"""Metrics, traces and error reports, each off unless configured (docs/operations.md#metrics-and-traces)."""

from __future__ import annotations

from config.settings.env import env

# Prometheus (core.metrics): on when PROMETHEUS_MULTIPROC_DIR is set, as scripts/serve.sh does per role when
# METRICS_PORT is set. The exporters listen on METRICS_HOST: METRICS_PORT (web) and METRICS_WORKER_PORT
# (worker), ports the load balancer never forwards.
METRICS_ENABLED = bool(env.str("PROMETHEUS_MULTIPROC_DIR", default=""))
METRICS_MIDDLEWARE = ["core.metrics.MetricsMiddleware"] if METRICS_ENABLED else []

# OpenTelemetry (core.observability): traces over OTLP http/protobuf when the endpoint is set.
OTEL_EXPORTER_OTLP_ENDPOINT = env.str("OTEL_EXPORTER_OTLP_ENDPOINT", default="")
OTEL_SERVICE_NAME = env.str("OTEL_SERVICE_NAME", default="brandmarket")

# Sentry (core.observability): unhandled errors of views and tasks when the DSN is set.
SENTRY_DSN = env.str("SENTRY_DSN", default="")
SENTRY_ENVIRONMENT = env.str("SENTRY_ENVIRONMENT", default="production")
