# Phasing: `make run` brings up the demo, `make test` runs the whole suite.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
CELERY := $(VENV)/bin/celery
HOST ?= 127.0.0.1
PORT ?= 8000

.PHONY: run test install install-dev browser-deps lint bench backtest check-deploy clean mutants

$(VENV)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet .
	touch $@

$(VENV)/.installed-dev: $(VENV)/.installed pyproject.toml
	$(PY) -m pip install --quiet ".[dev]"
	touch $@

install: $(VENV)/.installed
install-dev: $(VENV)/.installed-dev

# The demo on the embedded default (SQLite, filesystem broker) unless DATABASE_URL /
# REDIS_URL say otherwise: the Procfile's web server, worker and beat under honcho
# (scripts/procfile-run), which Ctrl-C or SIGTERM stops together, exiting 0.
run: export DEBUG ?= 1
# The demo shows the four-eyes rule: releasing to 100% waits for a second archive admin.
run: export PHASING_SIGN_OFF_REQUIRED ?= 1
# The address the demo serves on, which links in its emails point at (PHASING_SITE_URL).
run: export HOST := $(HOST)
run: export PORT := $(PORT)
run: install
	$(PY) manage.py migrate --noinput
	$(PY) manage.py demo_accounts
	@echo "Phasing on http://$(HOST):$(PORT)/ (Ctrl-C stops everything); an empty database is seeded with a demo week while it runs"
	@PATH="$(CURDIR)/$(VENV)/bin:$$PATH" GUNICORN_BIND=$(HOST):$(PORT) GUNICORN_WORKERS=2 \
	  CELERY_POOL=threads LOG_FORMAT=plain PHASING_DEMO_SEED=1 $(PY) scripts/procfile-run

browser-deps:
	@scripts/browser-deps

# The whole suite on the configured database and broker (PostgreSQL and Redis in CI), then
# the tests marked `embedded` again on the embedded default: SQLite, an in-memory broker.
TEST_WORKERS ?= 2
test: install-dev browser-deps
	$(PY) -m pytest -n $(TEST_WORKERS)
	env -u DATABASE_URL -u REDIS_URL -u CELERY_BROKER_URL $(PY) -m pytest -m embedded -p no:cacheprovider

# Style, the layering contracts (packages never imports overview, ...), types, migrations.
lint: install-dev
	$(PY) -m ruff format --check .
	$(PY) -m ruff check .
	$(VENV)/bin/lint-imports
	$(PY) -m mypy .
	$(PY) manage.py makemigrations --check --dry-run

check-deploy: install
	DEBUG=0 SECRET_KEY=check-deploy-$$(head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n') \
	  ALLOWED_HOSTS=phasing.example.org REDIS_URL=redis://127.0.0.1:6379/0 \
	  $(PY) manage.py check --deploy --fail-level WARNING

bench: install-dev
	$(PY) -m bench $(BENCH_ARGS)

# The judges against the project's own scenario set (bench/scenarios.py, seeded): both side
# by side in the tidy world and in the realistic one (docs/backtest.md), then the
# sequential judge with uptake estimated twice too fast and twice too slow. Lines and summaries under bench/results/; the tables on the terminal.
BACKTEST_UPDATES ?= 300
BACKTEST_HOURS ?= 120
BACKTEST_SEED ?= 1
BACKTEST_OUT := bench/results/backtest
backtest: install
	mkdir -p var
	$(PY) -m bench.scenarios --updates $(BACKTEST_UPDATES) --hours $(BACKTEST_HOURS) \
	  --seed $(BACKTEST_SEED) > var/backtest-scenarios.json
	$(PY) manage.py phasing_backtest --scenarios var/backtest-scenarios.json \
	  --seed $(BACKTEST_SEED) --output $(BACKTEST_OUT)-lines.jsonl \
	  --summary $(BACKTEST_OUT)-summary.json --plot $(BACKTEST_OUT)-catches.png
	$(PY) manage.py phasing_backtest --scenarios var/backtest-scenarios.json --world realistic \
	  --seed $(BACKTEST_SEED) --output $(BACKTEST_OUT)-realistic-lines.jsonl \
	  --summary $(BACKTEST_OUT)-realistic-summary.json \
	  --plot $(BACKTEST_OUT)-realistic-catches.png
	for factor in 0.5 2; do \
	  $(PY) manage.py phasing_backtest --scenarios var/backtest-scenarios.json --judge sequential \
	    --seed $(BACKTEST_SEED) --uptake-estimate-factor $$factor \
	    --output $(BACKTEST_OUT)-uptake-x$$factor-lines.jsonl \
	    --summary $(BACKTEST_OUT)-uptake-x$$factor-summary.json || exit 1; \
	done

clean:
	rm -rf var staticfiles test-artifacts .pytest_cache mutants

# Mutation testing (mutmut, not part of CI) of the rules: the regression rules, the policy
# arithmetic and the controller's decision function, each mutant against the tests that
# pin them. Prints the survivors; `mutmut show NAME` shows one. Slow: tens of minutes.
MUTANTS ?= "overview.judges.ubuntu.*" "packages.domain.policy.*" "overview.controller.rule.*"
mutants: install-dev
	rm -rf mutants
	$(VENV)/bin/mutmut run $(MUTANTS)
	$(VENV)/bin/mutmut results | grep -v ': not checked$$' || true
