#!/usr/bin/env bash
# `make serve`: the production shape of one node. PostgreSQL and Redis come from the environment
# (DATABASE_URL, REDIS_URL, DJANGO_SECRET_KEY are required), settings are config.settings.production.
# SERVE_ROLES (web, worker, beat, or a comma list; default all three) says what this node runs: gunicorn
# (threaded workers, see config/gunicorn.py), a Celery worker, a Celery beat (celery-redbeat: any number of
# beat nodes, one schedules at a time; docs/operations.md#beat-failover).
# The release step (scripts/release.sh: deploy check, migrate, collectstatic) runs first when
# SERVE_RELEASE=1, or by default when the node runs all three roles (a single host); a web node without
# it still collects its own static files. Then scripts/supervise.py runs the roles as one unit
# (docs/operations.md, "Processes and signals"): SIGTERM, SIGINT or SIGHUP drain and stop all of them.
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
SERVE_ROLES=${SERVE_ROLES:-web,worker,beat}
mkdir -p "$VAR_DIR"

has_role() { [[ ",$SERVE_ROLES," == *",$1,"* ]]; }
for role in ${SERVE_ROLES//,/ }; do
  case "$role" in web | worker | beat) ;; *) echo "SERVE_ROLES: unknown role '$role' (web, worker, beat)" >&2; exit 2 ;; esac
done
all_roles=0
if has_role web && has_role worker && has_role beat; then all_roles=1; fi
if [ "${SERVE_RELEASE:-$all_roles}" = "1" ]; then
  scripts/release.sh
elif has_role web; then
  "$PY" manage.py collectstatic --noinput --verbosity 0  # static files are per host
fi

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
# Metrics (docs/operations.md#metrics-and-traces): with METRICS_PORT set, the web role's exporter listens on
# METRICS_HOST:METRICS_PORT and the worker's on METRICS_WORKER_PORT (default METRICS_PORT + 1); each role's
# processes share a multiprocess directory of their own, emptied at each start. METRICS_HOST is loopback
# unless set, whatever HOST is; any other address needs METRICS_TOKEN (the exporters refuse to start without).
web_env="" worker_env=""
if [ -n "${METRICS_PORT:-}" ]; then
  export METRICS_HOST=${METRICS_HOST:-127.0.0.1} METRICS_WORKER_PORT=${METRICS_WORKER_PORT:-$((METRICS_PORT + 1))}
  rm -rf "$VAR_DIR/metrics" && mkdir -p "$VAR_DIR/metrics/web" "$VAR_DIR/metrics/worker"
  web_env="env PROMETHEUS_MULTIPROC_DIR=$(printf %q "$VAR_DIR/metrics/web") "
  worker_env="env PROMETHEUS_MULTIPROC_DIR=$(printf %q "$VAR_DIR/metrics/worker") "
fi
web_workers=${WEB_CONCURRENCY:-$(nproc)}
web_threads=${GUNICORN_THREADS:-16}
connections=0 children=()
echo "------------------------------------------------------------------"
echo "Roles:   $SERVE_ROLES"
if has_role web; then
  echo "API:     $scheme://$GUNICORN_BIND/api/v1/   Docs: /docs   Admin: /admin/"
  echo "Web:     gunicorn, $web_workers workers x $web_threads threads"
  [ -z "$web_env" ] || echo "Metrics: http://$METRICS_HOST:$METRICS_PORT/metrics (not public)"
  connections=$((connections + web_workers * web_threads))
  children+=(web:required "$web_env$PY -m gunicorn -c config/gunicorn.py config.wsgi:application")
fi
if has_role worker; then
  echo "Celery:  worker, concurrency $CELERY_CONCURRENCY"
  [ -z "$worker_env" ] || echo "Metrics: http://$METRICS_HOST:$METRICS_WORKER_PORT/metrics (worker, not public)"
  connections=$((connections + CELERY_CONCURRENCY))
  # --quiet: no banner, so that every line is one JSON log record (LOG_FORMAT is json in production).
  # CELERY_NODE_NAME tells apart several worker nodes on one host (the default is celery@<host name>).
  children+=(worker:restart "$worker_env$PY -m celery -A config --quiet worker --loglevel=INFO --concurrency=$CELERY_CONCURRENCY --without-gossip --without-mingle --hostname=$(printf %q "${CELERY_NODE_NAME:-celery@%h}")")
fi
if has_role beat; then
  # Beat only sends the periodic messages; workers run them. Several beat nodes may run: the one holding
  # the Redis lock schedules, the others wait to take over (config/settings/celery.py).
  echo "Celery:  beat (redbeat: one of the deployment's beats schedules at a time)"
  connections=$((connections + 1))
  children+=(beat:restart "$PY -m celery -A config --quiet beat --loglevel=INFO --schedule=$(printf %q "$VAR_DIR/celerybeat-schedule-production")")
fi
# Each thread and process keeps its own PostgreSQL connection (CONN_MAX_AGE); docs/operations.md says
# what max_connections a deployment needs.
echo "DB:      up to $connections PostgreSQL connections from this node"
echo "------------------------------------------------------------------"

# Readiness fails for SHUTDOWN_DRAIN_SECONDS after SIGTERM while the web server still serves, so that a
# proxy polling /health every second takes the node out before it stops accepting connections.
export SHUTDOWN_DRAIN_SECONDS=${SHUTDOWN_DRAIN_SECONDS:-5}
# gunicorn's graceful timeout (30 s) plus a margin before the supervisor escalates.
# (SUPERVISE_STOP_TIMEOUT is its name until this release: docs/operations.md#renamed-settings.)
export SUPERVISE_STOP_TIMEOUT_SECONDS=${SUPERVISE_STOP_TIMEOUT_SECONDS:-${SUPERVISE_STOP_TIMEOUT:-35}}
exec "$PY" scripts/supervise.py "${children[@]}"
