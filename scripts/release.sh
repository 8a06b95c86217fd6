#!/usr/bin/env bash
# `make release`: once per deploy, before the new code serves: the deploy check, migrations and static
# files (docs/operations.md, "Releases and roles"). `make serve` runs it itself on a single host.
set -euo pipefail
cd "$(dirname "$0")/.."

PY=.venv/bin/python
: "${DATABASE_URL:?DATABASE_URL must point at PostgreSQL}"
: "${REDIS_URL:?REDIS_URL must point at Redis}"
: "${DJANGO_SECRET_KEY:?DJANGO_SECRET_KEY must be set (50 random characters)}"
export DJANGO_SETTINGS_MODULE=${DJANGO_SETTINGS_MODULE:-config.settings.production}
export VAR_DIR=${VAR_DIR:-$PWD/var}
mkdir -p "$VAR_DIR"

echo "release: check --deploy, migrate, collectstatic"
"$PY" manage.py check --deploy --fail-level WARNING
"$PY" manage.py migrate --noinput
"$PY" manage.py collectstatic --noinput --verbosity 0
