# The two commands of the README: `make run` and `make test`. Each creates .venv
# and installs what it needs, so both work on a fresh machine.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed-$(shell cat pyproject.toml | cksum | cut -d' ' -f1)
PYTEST_ARGS ?=
# `make test` runs the suite on parallel workers (pytest-xdist), handing out whole test
# files, so a module's server or browser lives on one worker. PYTEST_WORKERS=0: one process.
PYTEST_WORKERS ?= 3

.PHONY: run test lint bench venv clean

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[test,qdrant]'
	rm -f $(VENV)/.installed-*
	touch $(STAMP)

venv: $(STAMP)

# Starts the gateway and management API on 127.0.0.1:20128 (MEMROUTE_HOST/MEMROUTE_PORT).
run: $(STAMP)
	$(BIN)/memroute serve

# Bytecode caches on, whatever the environment says: pytest keeps the test modules it
# rewrote, and every `memroute serve` a test starts reuses the compiled package.
test: $(STAMP)
	PYTHONDONTWRITEBYTECODE= $(BIN)/python -m pytest -n $(PYTEST_WORKERS) --dist loadfile $(PYTEST_ARGS)

lint: $(STAMP)
	$(BIN)/ruff check memroute tests bench
	$(BIN)/ruff format --check memroute tests bench
	$(BIN)/mypy
	$(BIN)/lint-imports --no-cache

bench: $(STAMP)
	$(BIN)/python -m bench.run_all

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache
