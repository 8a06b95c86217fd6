"""Traces (OpenTelemetry over OTLP) and errors (Sentry), each on only when configured.

- OTEL_EXPORTER_OTLP_ENDPOINT set: Django, Celery, psycopg and httpx are instrumented and spans are exported
  over OTLP http/protobuf (the SDK reads the standard OTEL_* variables: OTEL_SERVICE_NAME, headers, sampler).
  A request that queues a task carries its trace through the broker (Celery's message headers), so the web
  process's server span and the worker's task span share one trace id.
- SENTRY_DSN set: sentry-sdk with its Django and Celery integrations reports unhandled errors.

Unset, neither library is even imported: the cost is one settings lookup at start-up
(docs/operations.md#metrics-and-traces has the measurement). Called from CoreConfig.ready(), in every
process (web, worker, beat, manage.py), before the WSGI handler loads its middleware.
"""

from __future__ import annotations

import logging

from django.conf import settings

logger = logging.getLogger(__name__)

_started: set[str] = set()


def setup() -> None:
    if settings.OTEL_EXPORTER_OTLP_ENDPOINT and "otel" not in _started:
        _started.add("otel")
        _setup_tracing()
    if settings.SENTRY_DSN and "sentry" not in _started:
        _started.add("sentry")
        _setup_sentry()


def _setup_tracing() -> None:
    from opentelemetry import trace
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
    from opentelemetry.instrumentation.celery import CeleryInstrumentor
    from opentelemetry.instrumentation.django import DjangoInstrumentor
    from opentelemetry.instrumentation.httpx import HTTPXClientInstrumentor
    from opentelemetry.instrumentation.psycopg import PsycopgInstrumentor
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import BatchSpanProcessor

    # The batch processor's thread is started again after a fork (gunicorn's workers, Celery's prefork
    # children): the SDK registers that with os.register_at_fork.
    provider = TracerProvider(resource=Resource.create({"service.name": settings.OTEL_SERVICE_NAME}))
    provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter()))
    trace.set_tracer_provider(provider)
    DjangoInstrumentor().instrument()
    CeleryInstrumentor().instrument()
    PsycopgInstrumentor().instrument(enable_commenter=False)
    HTTPXClientInstrumentor().instrument()
    logger.info("OpenTelemetry traces go to %s", settings.OTEL_EXPORTER_OTLP_ENDPOINT)


def _setup_sentry() -> None:
    from sentry_sdk import init as sentry_init
    from sentry_sdk.integrations.celery import CeleryIntegration
    from sentry_sdk.integrations.django import DjangoIntegration

    sentry_init(
        dsn=settings.SENTRY_DSN,
        environment=settings.SENTRY_ENVIRONMENT,
        integrations=[DjangoIntegration(), CeleryIntegration()],
        traces_sample_rate=0.0,  # traces are OpenTelemetry's job
        send_default_pii=False,  # no user e-mails, cookies or bodies leave the service
    )
    logger.info("Sentry reports errors")
