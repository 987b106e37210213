# The two commands a newcomer needs: `make demo` and `make test`.
# Each sets up its own virtual environment on first use.

PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
PORT ?= 8000
# A database number of its own on the real server, for `make test-redis`.
TEST_REDIS_URL ?= redis://127.0.0.1:6379/13
# The languages whos_online/locale/ ships; `make messages` updates them.
LOCALES := de es fr pt_BR ru
# The default run leaves out the suites that start redis-servers or a
# browser; `make test-servers` and `make test-browser` run them (CI does).
FAST := -m "not real_redis and not browser"

.PHONY: help install demo test test-postgres test-mysql test-servers test-spirit test-redis test-matrix test-browser lint messages docs wheel-check bench bench-load bench-streams bench-smoke clean

help:
	@echo "make demo          serve the example project on http://127.0.0.1:$(PORT)"
	@echo "make test          the fast suite on fakeredis: all but the server and browser tests"
	@echo "make test-postgres the fast suite on PostgreSQL, CONN_MAX_AGE 0 then persistent"
	@echo "make test-mysql    the fast suite on MySQL/MariaDB, CONN_MAX_AGE 0 then persistent"
	@echo "make test-servers  the suites that start real redis-servers (Cluster, Sentinel, outage)"
	@echo "make test-redis    the fast suite against a real Redis at $(TEST_REDIS_URL)"
	@echo "make test-matrix   the fast suite on every supported Python and Django (nox)"
	@echo "make test-spirit   docs/third-party.md's recipe in a django-spirit forum (Django 5.2)"
	@echo "make test-browser  the demo in headless Chromium, with axe-core (needs chromium and npm)"
	@echo "make lint          ruff, mypy --strict and the import layers (import-linter)"
	@echo "make messages      update the .po catalogs in whos_online/locale/ and compile the .mo files"
	@echo "make docs          build docs/ as a site in docs/_build/html (warnings are errors)"
	@echo "make wheel-check   build the wheel and sdist, and check what they ship"
	@echo "make bench         measure issue 19's figures beside their floors, write docs/benchmarks/"
	@echo "make bench-load    the example project under gunicorn, 200 visitors, with and without the app"
	@echo "make bench-streams 1,000 live streams on one uvicorn worker against polling tabs"
	@echo "make bench-smoke   the benchmark code at small sizes, report to a scratch folder (CI)"

$(BIN)/.venv-made:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	touch $@

# The demo needs the package and the example project's embedded Redis only.
$(BIN)/.demo-installed: pyproject.toml requirements/demo.txt | $(BIN)/.venv-made
	$(BIN)/python -m pip install --quiet -r requirements/demo.txt -e .
	touch $@

# Everything else: the test tools, lint, and building the wheel.
$(BIN)/.installed: pyproject.toml requirements/lint.txt requirements/test.txt requirements/release.txt \
		requirements/django52.txt requirements/common.txt | $(BIN)/.venv-made
	$(BIN)/python -m pip install --quiet -r requirements/lint.txt -e .
	touch $@

install: $(BIN)/.installed

demo: $(BIN)/.demo-installed
	cd example_project && ../$(BIN)/python manage.py migrate --verbosity 0
	cd example_project && ../$(BIN)/python manage.py create_demo_users
	cd example_project && ../$(BIN)/python manage.py runserver 127.0.0.1:$(PORT)

test: install
	$(BIN)/python -m pytest $(FAST) --cov --cov-report=term --cov-fail-under=100 $(PYTEST_ARGS)

$(BIN)/.postgres-installed: requirements/postgres.txt $(BIN)/.installed
	$(BIN)/python -m pip install --quiet -r requirements/postgres.txt
	touch $@

$(BIN)/.mysql-installed: requirements/mysql.txt $(BIN)/.installed
	$(BIN)/python -m pip install --quiet -r requirements/mysql.txt
	touch $@

# The fast suite on a database server instead of SQLite, twice: with
# CONN_MAX_AGE 0, then with persistent connections (None, and
# CONN_HEALTH_CHECKS). scripts/on_database.py finds the server: the machine's
# own on 127.0.0.1:5432 (postgres) or 127.0.0.1:3306 (root), no password,
# started where it is installed but stopped, else a throwaway one of its own
# (installing Debian's package as root where none is). The tests create and
# drop test_whos_online and touch no other database. About 25 s a run.
test-postgres: $(BIN)/.postgres-installed
	$(BIN)/python scripts/on_database.py postgres -- \
		$(BIN)/python -m pytest $(FAST) -p no:cov $(PYTEST_ARGS)

test-mysql: $(BIN)/.mysql-installed
	$(BIN)/python scripts/on_database.py mysql -- \
		$(BIN)/python -m pytest $(FAST) -p no:cov $(PYTEST_ARGS)

# Real redis-servers started by the tests: Cluster, Sentinel, an outage, skewed
# clocks, many processes at once.
test-servers: install
	$(BIN)/python -m pytest -m real_redis -p no:cov $(PYTEST_ARGS)

test-redis: install
	REDIS_URL=$(TEST_REDIS_URL) $(BIN)/python -m pytest $(FAST) -p no:cov $(PYTEST_ARGS)

# One nox session per supported Python and Django pair (noxfile.py). nox looks
# for python3.10 ... python3.13 on PATH; pyenv's shims answer only for the
# versions selected, so the run selects every installed one.
PYENV_ALL = $(shell command -v pyenv >/dev/null && echo PYENV_VERSION=$$(pyenv version-name):$$(pyenv versions --bare | paste -sd: -))

test-matrix: install
	$(BIN)/python -m pip install --quiet -r requirements/nox.txt
	$(PYENV_ALL) $(BIN)/nox $(NOX_ARGS)

# django-spirit supports Django 5.2 only, so it is not in the matrix: its
# own settings module installs it as its project template does.
test-spirit: install
	$(BIN)/python -m pip install --quiet -r requirements/spirit.txt
	$(BIN)/python -m pytest --ds=tests.settings_spirit -p no:cov tests/test_spirit.py $(PYTEST_ARGS)

# axe-core, which the browser test loads into the pages it checks; the
# version is pinned in package.json and package-lock.json.
node_modules/axe-core/axe.min.js: package.json package-lock.json
	npm ci --no-audit --no-fund --loglevel=error
	touch $@

# Serves the example project (under runserver, uvicorn and gunicorn), and a
# small admin site in each of four admin themes (tests/themed_admin/), and
# drives Debian's Chromium through Playwright; checks the pages with axe-core
# and leaves screenshots in .screenshots/.
# REQUIRE_BROWSER makes a missing Chromium, Playwright or axe-core an error,
# not a skip.
test-browser: install node_modules/axe-core/axe.min.js
	$(BIN)/python -m pip install --quiet -r requirements/browser.txt
	REQUIRE_BROWSER=1 $(BIN)/python -m pytest -m browser -p no:cov tests/test_browser.py tests/test_browser_live.py tests/test_admin_themes.py $(PYTEST_ARGS)

lint: install
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy whos_online tests
	$(BIN)/lint-imports --no-cache

# Extracts every marked string of the templates and the Python code into
# whos_online/locale/<lang>/LC_MESSAGES/django.po, then compiles them. Both
# the .po and the .mo files are committed, so installing the app needs no
# gettext. Line numbers are left out to keep the diffs to real changes.
messages: install
	command -v msgfmt >/dev/null || (apt-get update -qq && apt-get install -y -qq gettext >/dev/null)
	cd whos_online && ../$(BIN)/django-admin makemessages $(LOCALES:%=--locale=%) --add-location=file --no-obsolete
	cd whos_online && ../$(BIN)/django-admin compilemessages $(LOCALES:%=--locale=%)

$(BIN)/.docs-installed: requirements/docs.txt $(BIN)/.installed
	$(BIN)/python -m pip install --quiet -r requirements/docs.txt
	touch $@

# The site Read the Docs publishes (.readthedocs.yaml), built the same way:
# a warning, a broken link or an unresolved reference fails the build.
docs: $(BIN)/.docs-installed
	$(BIN)/sphinx-build -W --keep-going -n -b html docs docs/_build/html

# build makes the sdist, then the wheel from it: a wheel that has everything
# shows the sdist does too.
wheel-check: install
	rm -rf dist
	$(BIN)/python -m build --outdir dist . >/dev/null
	$(BIN)/twine check --strict dist/*
	$(BIN)/python scripts/check_wheel.py dist/*.whl dist/*.tar.gz

$(BIN)/.bench-installed: requirements/bench.txt $(BIN)/.installed
	$(BIN)/python -m pip install --quiet -r requirements/bench.txt
	touch $@

# A redis-server of its own on a free loopback port; about 13 minutes, some 5
# of them valgrind counting the pages (valgrind, if installed, counts
# instructions: apt-get install valgrind).
bench: $(BIN)/.bench-installed
	$(BIN)/python benchmarks/run.py $(BENCH_ARGS)

# Issue 28's load run: gunicorn serving the example project with and without
# the app, and the peer, to 200 visitors a page a second each, alternated in
# rounds; a redis-server of its own; writes docs/benchmarks/load.md. About 15
# minutes (less when the site keeps up).
bench-load: $(BIN)/.bench-installed
	$(BIN)/python benchmarks/load.py $(BENCH_LOAD_ARGS)

# Issue 36's live run: N open streams on one uvicorn worker (1,000 by
# default; BENCH_STREAMS_ARGS="--streams 1000,10000"), the worker's memory a
# stream, its CPU a join and the delay to the clients, against N tabs
# polling every 30 s; a redis-server of its own; writes
# docs/benchmarks/streams.md. About 2 minutes at 1,000.
bench-streams: $(BIN)/.bench-installed
	$(BIN)/python benchmarks/streams.py $(BENCH_STREAMS_ARGS)

# Keeps the benchmark code working, in about two minutes (the load run's
# part, 20 visitors for a few seconds, about 25 s; the streams', 50 streams,
# about 20 s); its figures mean nothing.
bench-smoke: $(BIN)/.bench-installed
	out=$$(mktemp -d) && $(BIN)/python benchmarks/run.py --quick --out $$out \
		&& $(BIN)/python benchmarks/load.py --quick --out $$out \
		&& $(BIN)/python benchmarks/streams.py --quick --out $$out && rm -rf $$out

clean:
	rm -rf $(VENV) .nox dist build .coverage docs/_build node_modules .screenshots
