# Two commands do everything on a fresh Debian machine: `make run` and `make test`.

PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV := .venv
PY := $(VENV)/bin/python
HOST ?= 127.0.0.1
PORT ?= 8443
PYTEST_ARGS ?=
export PIP_DISABLE_PIP_VERSION_CHECK := 1

.PHONY: run test lint format check clean

## run: the API over HTTPS on $(HOST):$(PORT), plus a Celery worker and beat (embedded defaults)
run: $(VENV)/.deps-run
	HOST=$(HOST) PORT=$(PORT) scripts/run.sh

## test: the whole suite on throw-away PostgreSQL and Redis (installed with apt-get when absent)
test: $(VENV)/.deps-dev
	$(PY) scripts/testenv.py -- $(PY) -m pytest $(PYTEST_ARGS)

## lint: ruff
lint: $(VENV)/.deps-dev
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .

format: $(VENV)/.deps-dev
	$(VENV)/bin/ruff format .
	$(VENV)/bin/ruff check --fix .

$(VENV)/bin/python:
	@if ! $(PYTHON) -m venv --help >/dev/null 2>&1; then \
		echo "installing python3-venv"; apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq python3-venv; fi
	$(PYTHON) -m venv $(VENV)

$(VENV)/.deps-run: requirements.txt | $(VENV)/bin/python
	$(PY) -m pip install -q -r requirements.txt
	touch $@

$(VENV)/.deps-dev: requirements.txt requirements-dev.txt | $(VENV)/bin/python
	$(PY) -m pip install -q -r requirements-dev.txt
	touch $@ $(VENV)/.deps-run

clean:
	rm -rf $(VENV) var .pytest_cache
