#!/usr/bin/env bash
# `make run`: migrate, make a dev certificate and a demo user, then run the HTTPS server, a Celery
# worker and Celery beat together. Ctrl-C (or any one of them stopping) stops all three.
set -euo pipefail
cd "$(dirname "$0")/.."

PY=.venv/bin/python
HOST=${HOST:-127.0.0.1}
PORT=${PORT:-8443}
export DJANGO_SETTINGS_MODULE=${DJANGO_SETTINGS_MODULE:-config.settings.local}
mkdir -p var

"$PY" manage.py migrate --noinput
"$PY" manage.py collectstatic --noinput --verbosity 0

if [ ! -s var/dev-cert.pem ] || [ ! -s var/dev-key.pem ]; then
  echo "Creating a self-signed development certificate in var/"
  openssl req -x509 -newkey rsa:2048 -nodes -days 825 -subj "/CN=localhost" \
    -addext "subjectAltName=DNS:localhost,IP:127.0.0.1,IP:::1" \
    -keyout var/dev-key.pem -out var/dev-cert.pem 2>/dev/null
fi

echo "------------------------------------------------------------------"
"$PY" manage.py ensure_demo_user
echo "API:     https://$HOST:$PORT/api/v1/   (self-signed: curl -k)"
echo "Docs:    https://$HOST:$PORT/docs      Admin: https://$HOST:$PORT/admin/"
echo "------------------------------------------------------------------"

pids=()
stop() {
  trap - INT TERM EXIT
  for pid in "${pids[@]}"; do kill -TERM "$pid" 2>/dev/null || true; done
  wait || true
}
trap stop INT TERM EXIT

"$PY" -m celery -A config worker --loglevel=INFO --concurrency=2 --without-gossip --without-mingle &
pids+=($!)
"$PY" -m celery -A config beat --loglevel=INFO --schedule=var/celerybeat-schedule &
pids+=($!)
"$PY" manage.py serve_tls --host "$HOST" --port "$PORT" --cert var/dev-cert.pem --key var/dev-key.pem &
pids+=($!)

# Whichever stops first (or Ctrl-C) brings the others down.
wait -n
