#!/usr/bin/env bash
# `make serve`: the production shape on one machine. PostgreSQL and Redis come from the environment
# (DATABASE_URL, REDIS_URL, DJANGO_SECRET_KEY are required), settings are config.settings.production.
# Migrates, collects static files, checks the deployment, then runs gunicorn (gthread workers, see
# config/gunicorn.py), Celery workers and exactly one Celery beat. Ctrl-C (or any of them stopping)
# stops all of them.
#
# TLS: by default gunicorn terminates it with TLS_CERT/TLS_KEY, or with a self-signed certificate made
# in var/ (like `make run`). Behind a TLS-terminating proxy set SERVE_BEHIND_PROXY=1: gunicorn then
# speaks plain HTTP on $HOST:$PORT and only requests forwarded by TRUSTED_PROXIES (with
# X-Forwarded-Proto: https) are served; anything else gets 403 https_required.
set -euo pipefail
cd "$(dirname "$0")/.."

PY=.venv/bin/python
: "${DATABASE_URL:?DATABASE_URL must point at PostgreSQL}"
: "${REDIS_URL:?REDIS_URL must point at Redis}"
: "${DJANGO_SECRET_KEY:?DJANGO_SECRET_KEY must be set (50 random characters)}"
export DJANGO_SETTINGS_MODULE=${DJANGO_SETTINGS_MODULE:-config.settings.production}
export HOST=${HOST:-127.0.0.1} PORT=${PORT:-8443}
export GUNICORN_BIND=${GUNICORN_BIND:-$HOST:$PORT}
export VAR_DIR=${VAR_DIR:-$PWD/var}
CELERY_CONCURRENCY=${CELERY_CONCURRENCY:-$(nproc)}
mkdir -p "$VAR_DIR"

"$PY" manage.py check --deploy --fail-level WARNING
"$PY" manage.py migrate --noinput
"$PY" manage.py collectstatic --noinput --verbosity 0

scheme=https
if [ "${SERVE_BEHIND_PROXY:-0}" = "1" ]; then
  scheme=http
  unset TLS_CERT TLS_KEY
  [ -n "${TRUSTED_PROXIES:-}" ] || echo "warning: SERVE_BEHIND_PROXY=1 without TRUSTED_PROXIES: every request gets 403" >&2
else
  if [ -z "${TLS_CERT:-}" ] || [ -z "${TLS_KEY:-}" ]; then
    if [ ! -s "$VAR_DIR/dev-cert.pem" ] || [ ! -s "$VAR_DIR/dev-key.pem" ]; then
      echo "Creating a self-signed certificate in $VAR_DIR (set TLS_CERT/TLS_KEY to use your own)"
      openssl req -x509 -newkey rsa:2048 -nodes -days 825 -subj "/CN=localhost" \
        -addext "subjectAltName=DNS:localhost,IP:127.0.0.1,IP:::1" \
        -keyout "$VAR_DIR/dev-key.pem" -out "$VAR_DIR/dev-cert.pem" 2>/dev/null
    fi
    export TLS_CERT="$VAR_DIR/dev-cert.pem" TLS_KEY="$VAR_DIR/dev-key.pem"
  fi
fi
echo "------------------------------------------------------------------"
echo "API:     $scheme://$GUNICORN_BIND/api/v1/   Docs: /docs   Admin: /admin/"
echo "Web:     gunicorn, ${WEB_CONCURRENCY:-$((2 * $(nproc)))} workers x ${GUNICORN_THREADS:-8} threads"
echo "Celery:  worker (concurrency $CELERY_CONCURRENCY) and one beat"
echo "------------------------------------------------------------------"

pids=()
stop() {
  trap - INT TERM EXIT
  for pid in "${pids[@]}"; do kill -TERM "$pid" 2>/dev/null || true; done
  wait || true
}
trap stop INT TERM EXIT

# Each runs in its own session: Ctrl-C reaches only this script, which stops each of them exactly once
# (a gthread worker that gets the terminal's SIGINT and then its master's SIGTERM can hang in shutdown).
setsid "$PY" -m gunicorn -c config/gunicorn.py config.wsgi:application &
pids+=($!)
# --quiet: no banner, so that every line is one JSON log record (LOG_FORMAT is json in production).
setsid "$PY" -m celery -A config --quiet worker --loglevel=INFO --concurrency="$CELERY_CONCURRENCY" --without-gossip --without-mingle &
pids+=($!)
# Exactly one beat for the whole deployment: it only sends the periodic messages; workers run them.
setsid "$PY" -m celery -A config --quiet beat --loglevel=INFO --schedule="$VAR_DIR/celerybeat-schedule-production" &
pids+=($!)

# Whichever stops first (or Ctrl-C) brings the others down.
wait -n
