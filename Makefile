# Two commands do everything on a fresh Debian machine: `make run` and `make test`.

PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV := .venv
PY := $(VENV)/bin/python
HOST ?= 127.0.0.1
PORT ?= 8443
PYTEST_ARGS ?=
SPECTRAL := tools/openapi-lint/node_modules/.bin/spectral
export PIP_DISABLE_PIP_VERSION_CHECK := 1
# Python keeps the bytecode of what it imports (__pycache__/, ignored by git). A machine that sets
# PYTHONDONTWRITEBYTECODE would have every process compile the project again: each of `make run`'s processes,
# each test worker and subprocess, pytest rewriting every test module in every worker at every run.
unexport PYTHONDONTWRITEBYTECODE
PY_PACKAGES := $(filter-out var/ docs/ templates/,$(sort $(dir $(wildcard */*.py))))

.PHONY: run info serve release bench profile test test-fast bytecode system-deps lint format check clean

## run: the API over HTTPS on $(HOST):$(PORT), plus a Celery worker and beat (embedded defaults).
## `exec`: the recipe's shell becomes scripts/supervise.py, so make's SIGTERM reaches it and make waits for it.
run: $(VENV)/.deps-run
	exec env HOST=$(HOST) PORT=$(PORT) scripts/run.sh

## info: the banner `make run` printed last (links, demo user and password, secrets), again; it finds the
## server on PORT when given, else the last `make run` of this checkout (var/origin).
info: $(VENV)/.deps-run
	@env DJANGO_SETTINGS_MODULE=config.settings.local $(if $(filter command line environment,$(origin PORT)),PORT=$(PORT)) \
		$(PY) manage.py demo_info

## serve: the production shape: gunicorn (threaded, one worker per core), Celery workers and one beat, with
## config.settings.production on the PostgreSQL and Redis of DATABASE_URL / REDIS_URL (required, with
## DJANGO_SECRET_KEY). TLS with TLS_CERT/TLS_KEY or a self-signed certificate in var/; SERVE_BEHIND_PROXY=1
## for plain HTTP behind a TLS-terminating proxy listed in TRUSTED_PROXIES. SERVE_ROLES=web,worker,beat
## (default all) picks this node's roles; the release step runs first on a single host or with SERVE_RELEASE=1.
serve: $(VENV)/.deps-run
	exec env HOST=$(HOST) PORT=$(PORT) scripts/serve.sh

## release: once per deploy, before the new code serves: check --deploy, migrate, collectstatic
release: $(VENV)/.deps-run
	scripts/release.sh

## bench: on demand (never part of `make test`): the production server under wrk on throw-away
## PostgreSQL and Redis; prints one table and writes it to bench/RESULTS.md. BENCH_ARGS="--scale 4 --duration 10"
BENCH_ARGS ?=
bench: $(VENV)/.deps-run
	@command -v wrk >/dev/null 2>&1 || { echo "installing wrk"; apt-get update -qq && \
		DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends wrk </dev/null; }
	$(PY) scripts/testenv.py -- $(PY) bench/run.py $(BENCH_ARGS)

## profile: where one request's time goes: the benchmark's requests in process, through the WSGI handler, on
## throw-away PostgreSQL and Redis (bench/profile.py). PROFILE_ARGS="--path c --pyinstrument"
PROFILE_ARGS ?=
profile: $(VENV)/.deps-dev
	$(PY) scripts/testenv.py -- $(PY) bench/profile.py $(PROFILE_ARGS)

## test: the whole suite on throw-away PostgreSQL and Redis, in TEST_WORKERS pytest-xdist workers, each with its
## own test database and Redis database. Every Debian package the suite uses is installed first, in one apt-get
## run (system-deps), so no test installs anything while another holds dpkg's lock. The tests on one
## `make run` / `make serve` server share a worker (--dist loadgroup, tests/e2e/conftest.py). More workers
## than cores: a serial run keeps a third of one core busy, the rest is waiting on servers and subprocesses.
TEST_WORKERS ?= 4
test: $(VENV)/.deps-dev system-deps $(SPECTRAL) bytecode
	$(PY) scripts/testenv.py -- $(PY) -m pytest -n $(TEST_WORKERS) --dist loadgroup $(PYTEST_ARGS)

## test-fast: the inner loop: everything but the outside-in tests (e2e: real `make run` / `make serve`
## servers) and the live fuzzing; `make test` stays the whole suite, the one CI runs.
test-fast: $(VENV)/.deps-dev system-deps $(SPECTRAL) bytecode
	$(PY) scripts/testenv.py -- $(PY) -m pytest -n $(TEST_WORKERS) --dist loadgroup -m "not e2e and not fuzz" $(PYTEST_ARGS)

# bytecode: the project's packages compiled once, before the test workers start (each would compile them at once).
bytecode: $(VENV)/bin/python
	@$(PY) -m compileall -q -j 0 -x node_modules $(PY_PACKAGES) manage.py >/dev/null

## system-deps: the Debian packages the suite uses (scripts/testenv.py SYSTEM_PACKAGES: PostgreSQL, Redis,
## HAProxy, Prometheus, Chromium and its driver, Node.js and npm), the missing ones in one apt-get run.
system-deps:
	@$(PYTHON) scripts/testenv.py --install

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

# install: the pinned requirements file $(1), installed by uv (pinned in UV_VERSION, itself installed by pip):
# the same packages and versions as pip would install, in seconds where pip takes about 40 s of CPU. uv reads
# PyPI only; where it cannot (no network, a package only in the machine's own pip indexes), pip installs the
# same file with the machine's pip configuration. Neither compiles: compileall does it on every core.
# No progress bars, which a log file or a CI page would turn into noise.
UV_VERSION := 0.13.9
define install
if $(PY) -m pip install --quiet --progress-bar off "uv==$(UV_VERSION)" && \
	$(VENV)/bin/uv pip install --python $(PY) --no-progress -r $(1); then :; else \
	echo "make: uv could not install $(1); pip installs it"; \
	$(PY) -m pip install --progress-bar off --no-compile -r $(1); fi
endef
$(VENV)/.deps-run: requirements.txt | $(VENV)/bin/python
	@echo "make: installing the Python packages of requirements.txt into $(VENV)"
	@$(call install,requirements.txt)
	$(PY) -m compileall -q -j 0 $(VENV)/lib >/dev/null
	touch $@

$(VENV)/.deps-dev: requirements.txt requirements-dev.txt | $(VENV)/bin/python
	@echo "make: installing the Python packages of requirements-dev.txt into $(VENV)"
	@$(call install,requirements-dev.txt)
	$(PY) -m compileall -q -j 0 $(VENV)/lib >/dev/null
	touch $@ $(VENV)/.deps-run

# Spectral lints the served /openapi.json with its `spectral:oas` ruleset (tests/test_openapi_lint.py); pinned by
# tools/openapi-lint/package-lock.json. Node.js and npm come from Debian (system-deps).
$(SPECTRAL): tools/openapi-lint/package.json tools/openapi-lint/package-lock.json | system-deps
	cd tools/openapi-lint && npm ci --no-audit --no-fund --loglevel=error
	touch $@

clean:
	rm -rf $(VENV) var .pytest_cache tools/openapi-lint/node_modules
