#!/usr/bin/env bash
# `make run`'s static files (scripts/run.sh): collected once into $VAR_DIR/static, and again only when
# their sources or the requirements change. The stamp is a hash of every static file's path, size and
# time, and of requirements.txt; a matching stamp skips collectstatic (a few seconds at every start).
# Prints one line when it collects, nothing when it skips. Uses PY, VAR_DIR and DJANGO_SETTINGS_MODULE.
set -euo pipefail
cd "$(dirname "$0")/.."

PY=${PY:-.venv/bin/python}
export VAR_DIR=${VAR_DIR:-$PWD/var}
export DJANGO_SETTINGS_MODULE=${DJANGO_SETTINGS_MODULE:-config.settings.local}

static_stamp=$( { find . -path ./.venv -prune -o -path ./var -prune -o -path ./node_modules -prune \
  -o -path '*/static/*' -type f -printf '%p %s %T@\n'; cat requirements.txt; } | sort | sha256sum | cut -d' ' -f1)
if [ "$(cat "$VAR_DIR/static/.stamp" 2>/dev/null)" != "$static_stamp" ]; then
  echo "make run: collecting static files (once; again only when they change)"
  "$PY" manage.py collectstatic --noinput --clear --verbosity 0
  echo "$static_stamp" > "$VAR_DIR/static/.stamp"
fi
