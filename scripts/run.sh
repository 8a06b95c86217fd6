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
# Generate $VAR_DIR/secrets.env (if missing) once, before the processes below import settings together.
"$PY" -c 'import django; django.setup()'

"$PY" manage.py migrate --noinput
"$PY" manage.py collectstatic --noinput --verbosity 0

if [ ! -s "$VAR_DIR/dev-cert.pem" ] || [ ! -s "$VAR_DIR/dev-key.pem" ]; then
  echo "Creating a self-signed development certificate in $VAR_DIR"
  openssl req -x509 -newkey rsa:2048 -nodes -days 825 -subj "/CN=localhost" \
    -addext "subjectAltName=DNS:localhost,IP:127.0.0.1,IP:::1" \
    -keyout "$VAR_DIR/dev-key.pem" -out "$VAR_DIR/dev-cert.pem" 2>/dev/null
fi

echo "------------------------------------------------------------------"
# Settings generated $VAR_DIR/secrets.env (0600) on first use: secret key, webhook secret, demo password.
echo "Secrets: $VAR_DIR/secrets.env (generated on first run, kept; the environment overrides each)"
echo "Payments webhook secret: $("$PY" -c 'import django; django.setup(); from django.conf import settings; print(",".join(settings.PAYMENTS_WEBHOOK_SECRET))')"
"$PY" manage.py ensure_demo_user
echo "API:     https://$HOST:$PORT/api/v1/   (self-signed: curl -k)"
echo "Docs:    https://$HOST:$PORT/docs      Admin: https://$HOST:$PORT/admin/"
echo "------------------------------------------------------------------"

# scripts/supervise.py runs the three as one unit: a crashed worker or beat is restarted, Ctrl-C, SIGTERM
# or a closed terminal stops all of them (docs/operations.md, "Processes and signals").
export SHUTDOWN_DRAIN_SECONDS=${SHUTDOWN_DRAIN_SECONDS:-0}
# Commands are strings split like a shell would (shlex): paths are quoted with printf %q.
exec "$PY" scripts/supervise.py \
  worker:restart "$PY -m celery -A config worker --loglevel=INFO --concurrency=2 --without-gossip --without-mingle" \
  beat:restart "$PY -m celery -A config beat --loglevel=INFO --schedule=$(printf %q "$VAR_DIR/celerybeat-schedule")" \
  web:required "$PY manage.py serve_tls --host $HOST --port $PORT --cert $(printf %q "$VAR_DIR/dev-cert.pem") --key $(printf %q "$VAR_DIR/dev-key.pem")"
