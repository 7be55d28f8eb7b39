# The two commands of the README: `make run` and `make test`. Each creates the venv
# and installs what it needs, so both work on a fresh machine: `make run` what the
# server needs (memroute, its Qdrant and PostgreSQL clients), `make test` and `make lint` add the
# test extras (pytest, ruff, mypy, Playwright …) on top.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
# pip speaks only when something fails: `PIP_FLAGS= make run` shows everything it says.
PIP_FLAGS ?= --quiet --quiet
PIP := $(BIN)/python -m pip $(PIP_FLAGS)
# A stamp per pyproject.toml content: editing the dependencies reinstalls.
PROJECT := $(shell cksum < pyproject.toml | cut -d' ' -f1)
RUN_STAMP := $(VENV)/.installed-run-$(PROJECT)
TEST_STAMP := $(VENV)/.installed-test-$(PROJECT)
PYTEST_ARGS ?=
# `make test` runs the suite on parallel workers (pytest-xdist), handing out whole test
# files (those with a slow test first), so a module's server or browser lives on one
# worker. PYTEST_WORKERS=0: one process.
PYTEST_WORKERS ?= 4

.PHONY: run test lint bench venv venv-test clean

$(RUN_STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(PIP) install -e '.[qdrant,postgres]'
	rm -f $(VENV)/.installed-run-*
	touch $(RUN_STAMP)

$(TEST_STAMP): $(RUN_STAMP)
	$(PIP) install -e '.[test,qdrant,postgres]'
	rm -f $(VENV)/.installed-test-*
	touch $(TEST_STAMP)

venv: $(RUN_STAMP)

# The venv with the test extras too (what `make test` and `make lint` install first).
venv-test: $(TEST_STAMP)

# Starts the gateway and management API on 127.0.0.1:20128 (MEMROUTE_HOST/MEMROUTE_PORT).
run: $(RUN_STAMP)
	$(BIN)/memroute serve

# Bytecode caches on, whatever the environment says: pytest keeps the test modules it
# rewrote, and every `memroute serve` a test starts reuses the compiled package.
test: $(TEST_STAMP)
	PYTHONDONTWRITEBYTECODE= $(BIN)/python -m pytest -n $(PYTEST_WORKERS) --dist loadfile --no-loadscope-reorder $(PYTEST_ARGS)

lint: $(TEST_STAMP)
	$(BIN)/ruff check memroute tests bench
	$(BIN)/ruff format --check memroute tests bench
	$(BIN)/mypy
	$(BIN)/lint-imports --no-cache

bench: $(RUN_STAMP)
	$(BIN)/python -m bench.run_all

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache
