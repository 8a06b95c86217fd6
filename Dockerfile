# The production image: one image for every role (web, worker, beat, release), as docs/operations.md,
# "Containers" says. Built from the same requirements.txt and started by the same scripts/serve.sh as
# `make serve`; SERVE_ROLES picks the role. Not built or run by the test suite (no container runtime on
# the test machine); tests/test_deploy_files.py checks that what it names exists and matches the tests.
FROM python:3.11-slim-bookworm

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    DJANGO_SETTINGS_MODULE=config.settings.production \
    VAR_DIR=/app/var \
    HOST=0.0.0.0 \
    PORT=8000 \
    SERVE_BEHIND_PROXY=1

WORKDIR /app
# scripts/serve.sh and scripts/release.sh run .venv/bin/python, as on a host.
COPY requirements.txt ./
RUN python -m venv .venv && .venv/bin/pip install --no-cache-dir -r requirements.txt

COPY manage.py pyproject.toml ./
COPY config ./config
COPY core ./core
COPY accounts ./accounts
COPY assistant ./assistant
COPY brands ./brands
COPY demo ./demo
COPY demo_seed ./demo_seed
COPY payments ./payments
COPY scrapers ./scrapers
COPY signed_delivery ./signed_delivery
COPY tasks_market ./tasks_market
COPY teams ./teams
COPY webhooks_app ./webhooks_app
COPY templates ./templates
COPY scripts ./scripts

RUN useradd --system --home-dir /app app && mkdir -p /app/var && chown app /app/var
USER app
EXPOSE 8000
# SERVE_ROLES=web | worker | beat; the release step is `scripts/release.sh`, once per deploy (compose.yaml).
CMD ["scripts/serve.sh"]
