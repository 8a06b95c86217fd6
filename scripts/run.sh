#!/usr/bin/env bash
# `make run`: migrate, make a dev certificate and a demo user, then run the HTTPS server, a Celery
# worker and Celery beat together under scripts/supervise.py: a crashed worker or beat is restarted;
# Ctrl-C, SIGTERM or a closed terminal stops all three.
set -euo pipefail
cd "$(dirname "$0")/.."

PY=.venv/bin/python
HOST=${HOST:-127.0.0.1}
PORT=${PORT:-8443}
export DJANGO_SETTINGS_MODULE=${DJANGO_SETTINGS_MODULE:-config.settings.local}
# Everything this server writes goes under VAR_DIR (default var/ in the checkout).
export VAR_DIR=${VAR_DIR:-$PWD/var}
# The local payment provider sends its signed events to this very server.
export PAYMENTS_LOCAL_WEBHOOK_URL=${PAYMENTS_LOCAL_WEBHOOK_URL:-https://$HOST:$PORT/api/v1/webhooks/payments}
# ... and links its checkout pages (/checkout/{session}) from it.
export PUBLIC_BASE_URL=${PUBLIC_BASE_URL:-https://$HOST:$PORT}
mkdir -p "$VAR_DIR"
# Commands run beside this server (`make info`, payments_simulate) find it here (config/settings/local.py).
echo "$PUBLIC_BASE_URL" > "$VAR_DIR/origin"
step() { echo "make run: $*"; }

# One process migrates, makes the demo user (a fresh API key) and the demo agent, and renders the banner
# (demo/management/commands/prepare_run.py); it also generates $VAR_DIR/secrets.env (if missing) before the
# processes below import settings together.
banner=$("$PY" manage.py prepare_run)

# Static files are collected once, and again only when their sources or the requirements change.
PY="$PY" scripts/static_once.sh

if [ ! -s "$VAR_DIR/dev-cert.pem" ] || [ ! -s "$VAR_DIR/dev-key.pem" ]; then
  step "creating a self-signed development certificate in $VAR_DIR"
  openssl req -x509 -newkey rsa:2048 -nodes -days 825 -subj "/CN=localhost" \
    -addext "subjectAltName=DNS:localhost,IP:127.0.0.1,IP:::1" \
    -keyout "$VAR_DIR/dev-key.pem" -out "$VAR_DIR/dev-cert.pem" 2>/dev/null
fi

# The banner comes last, once web, worker and beat are ready (after their start-up output); `make info`
# prints it again. The worker and beat write $VAR_DIR/ready/<role> when ready (demo/signals.py). Routine
# periodic work logs at DEBUG (core/ops/routine_logs.py), so the banner stays on screen. Its printer is a
# background job of this shell: the supervisor this shell execs below inherits it and reaps it once done.
rm -rf "$VAR_DIR/ready"
supervisor=$$
(
  for _ in $(seq 600); do  # at most 5 minutes; then the banner comes anyway
    kill -0 "$supervisor" 2>/dev/null || exit 0
    if [ -e "$VAR_DIR/ready/worker" ] && [ -e "$VAR_DIR/ready/beat" ] &&
      curl -skf -o /dev/null --max-time 2 "https://$HOST:$PORT/health"; then
      break
    fi
    sleep 0.5
  done
  printf '%s\n' "$banner"
) &
step "starting web, worker and beat"

# scripts/supervise.py runs the three as one unit: a crashed worker or beat is restarted, Ctrl-C, SIGTERM
# or a closed terminal stops all of them (docs/operations.md, "Processes and signals").
export SHUTDOWN_DRAIN_SECONDS=${SHUTDOWN_DRAIN_SECONDS:-0}
# Commands are strings split like a shell would (shlex): paths are quoted with printf %q.
# Four worker processes: a saved-search match waits on the agents' endpoints most of its 50 ms, and two fell
# behind at 20 task creates a second (docs/decisions.md#embedded-broker).
exec "$PY" scripts/supervise.py \
  worker:restart "$PY -m celery -A config worker --loglevel=INFO --concurrency=4 --without-gossip --without-mingle" \
  beat:restart "$PY -m celery -A config beat --loglevel=INFO --schedule=$(printf %q "$VAR_DIR/celerybeat-schedule")" \
  web:required "$PY manage.py serve_tls --host $HOST --port $PORT --cert $(printf %q "$VAR_DIR/dev-cert.pem") --key $(printf %q "$VAR_DIR/dev-key.pem")"
