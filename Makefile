# sparkgate developer commands (GNU make). Needs Python >= 3.10, Java 17 or 21
# and access to PyPI; everything else goes into .venv at the repository root.

.DEFAULT_GOAL := help
.DELETE_ON_ERROR:

# The first Python >= 3.10 on PATH; override with `make PYTHON=/path/to/python3.x ...`.
ifeq ($(origin PYTHON),undefined)
PYTHON := $(shell for p in python3 python3.14 python3.13 python3.12 python3.11 python3.10; do \
	command -v $$p >/dev/null 2>&1 && \
	$$p -c 'import sys; sys.exit(sys.version_info < (3, 10))' 2>/dev/null && \
	{ echo $$p; exit 0; }; done; echo python3)
endif

VENV := .venv
BIN := $(VENV)/bin
PIP := $(BIN)/python -m pip -q --disable-pip-version-check
# Stamps record what was installed from which pyproject.toml; newer pyproject => reinstall.
RUN_STAMP := $(VENV)/.sparkgate-run.stamp
DEV_STAMP := $(VENV)/.sparkgate-dev.stamp
PYTEST_ARGS ?=
# pytest-xdist workers for make test / test-fast: 0 (the default) runs the suite in
# this process; auto = one per core, at most four (tests/conftest.py). A test module
# stays on one worker (--dist loadfile), so its module fixtures start once. On two
# cores two workers gain little and load-sensitive tests (Spark progress, streaming
# stop logs) have failed under them, so it is opt-in.
PYTEST_WORKERS ?= 0
XDIST = -n $(PYTEST_WORKERS) --dist loadfile
ARGS ?=

.PHONY: help run test test-unit test-fast test-cluster lint layers typecheck pytest check-java venv dev-venv \
	clean distclean

help:
	@echo "make run        install sparkgate into $(VENV), check Java, start the gateway (foreground)"
	@echo "make test       ruff, mypy, import layers, then the whole pytest suite (every tier)"
	@echo "make test-unit  the unit tier only: no JVM, in seconds (pytest -m unit)"
	@echo "make test-fast  unit and service tiers: no gateway processes, no third-party clients"
	@echo "make test-cluster  the end-to-end tests on a Spark standalone cluster (master + 2 workers)"
	@echo "make lint       ruff check src tests"
	@echo "make layers     import-linter layer contracts"
	@echo "make typecheck  mypy --strict on src/"
	@echo "make bench      benchmark suite, about 25 min (ARGS=--quick: about 5 min; see BENCHMARKS.md)"
	@echo "make bench-quick  the benchmark's quick mode (same as make bench ARGS=--quick)"
	@echo "make cluster    a Spark standalone cluster (a master, two workers) on 127.0.0.1:7077"
	@echo "make kafka      a single-node Kafka broker on 127.0.0.1:9092, to try the Kafka connectors"
	@echo "make soak       30-minute soak of one gateway under mixed clients (see BENCHMARKS.md)"
	@echo "make soak-quick the soak's quick mode, about 3 min (+ start-up and drain)"
	@echo "make clean      remove build artefacts and caches (keeps $(VENV) and data)"
	@echo "make distclean  clean, and remove $(VENV)"

$(BIN)/python:
	@command -v $(PYTHON) >/dev/null 2>&1 || { \
		echo "error: '$(PYTHON)' not found; install Python 3.10+ or pass PYTHON=/path/to/python3" >&2; \
		exit 1; }
	@$(PYTHON) -c 'import sys; sys.exit(sys.version_info < (3, 10))' || { \
		echo "error: sparkgate needs Python >= 3.10, but $(PYTHON) is" \
			"$$($(PYTHON) -c 'import platform; print(platform.python_version())')." \
			"Pass PYTHON=/path/to/python3.10+" >&2; \
		exit 1; }
	@echo "Creating $(VENV) with $(PYTHON)"
	@$(PYTHON) -m venv $(VENV) || { \
		echo "error: could not create $(VENV); on Debian/Ubuntu: sudo apt install python3-venv" >&2; \
		rm -rf $(VENV); exit 1; }
	@$(PIP) install --upgrade pip

$(RUN_STAMP): pyproject.toml | $(BIN)/python
	@echo "Installing sparkgate into $(VENV)"
	@$(PIP) install -e .
	@touch $@

$(DEV_STAMP): pyproject.toml | $(BIN)/python
	@echo "Installing sparkgate with dev extras into $(VENV)"
	@$(PIP) install -e '.[dev]'
	@touch $@ $(RUN_STAMP)

venv: $(RUN_STAMP)
dev-venv: $(DEV_STAMP)

check-java: $(RUN_STAMP)
	@$(BIN)/python -m sparkgate.service.spark.java

run: $(RUN_STAMP) check-java
	$(BIN)/sparkgate gateway start-foreground $(ARGS)

lint: $(DEV_STAMP)
	$(BIN)/ruff check src tests

layers: $(DEV_STAMP)
	$(BIN)/lint-imports

typecheck: $(DEV_STAMP)
	$(BIN)/mypy

pytest: $(DEV_STAMP)
	$(BIN)/pytest --timeout=300 $(PYTEST_ARGS)

# Explicit order, failing fast: cheap static checks before the slow suite.
test: $(DEV_STAMP)
	$(BIN)/ruff check src tests
	$(BIN)/mypy
	$(BIN)/lint-imports
	$(BIN)/pytest --timeout=300 $(XDIST) $(PYTEST_ARGS)

# Test tiers are pytest markers (pyproject.toml, set in tests/conftest.py):
# unit (no JVM), service (shared Spark session), e2e (real gateway process),
# clients (real third-party clients), defaults (tests/defaults).
test-unit: $(DEV_STAMP)
	$(BIN)/pytest -m unit $(PYTEST_ARGS)

test-fast: $(DEV_STAMP)
	$(BIN)/pytest --timeout=300 $(XDIST) -m "not e2e and not clients and not defaults" $(PYTEST_ARGS)

# The end-to-end tests with every test gateway on a Spark standalone cluster (a master
# and two workers on loopback, started by tests/conftest.py from pyspark's classes):
# REST, HiveServer2 and its clients, the SQL client, streaming, CTAS, materialized
# tables, restarts, two gateways behind a proxy, a PostgreSQL metastore.
CLUSTER_TESTS := tests/e2e/test_materialized_e2e.py tests/e2e/test_table_as_select_e2e.py \
	tests/e2e/test_restart.py tests/e2e/test_two_gateways.py tests/e2e/test_postgres_metastore.py \
	tests/e2e/test_engine_health.py tests/e2e/test_flink_client.py tests/e2e/test_flink_jdbc_driver.py \
	tests/e2e/test_secure_deployment.py tests/hiveserver2/test_clients.py tests/client/test_repl.py

test-cluster: $(DEV_STAMP) check-java
	SPARKGATE_TEST_CLUSTER=standalone $(BIN)/pytest --timeout=900 $(CLUSTER_TESTS) $(PYTEST_ARGS)

# Benchmark-only client packages (PyHive, thrift, psutil) go into the same venv.
BENCH_STAMP := $(VENV)/.sparkgate-bench.stamp

.PHONY: cluster
# A Spark standalone cluster from the pyspark package, in the foreground until Ctrl-C;
# then: make run ARGS=-Dspark.master=spark://127.0.0.1:7077 (ARGS here: --workers 3 ...).
cluster: $(RUN_STAMP) check-java
	$(BIN)/python -m sparkgate.server.cluster $(ARGS)

.PHONY: kafka
# Kafka's own broker from Maven Central (resolved once), in the foreground until Ctrl-C;
# tables name it with 'properties.bootstrap.servers' = '127.0.0.1:9092' (ARGS: --port ...).
kafka: $(RUN_STAMP) check-java
	$(BIN)/python -m sparkgate.server.broker $(ARGS)

.PHONY: bench bench-quick

$(BENCH_STAMP): bench/requirements.txt $(RUN_STAMP)
	@echo "Installing the benchmark's client packages into $(VENV)"
	@$(PIP) install -r bench/requirements.txt
	@touch $@

# Writes bench/results/latest.json and the results section of BENCHMARKS.md.
bench: $(BENCH_STAMP) check-java
	$(BIN)/python -m bench $(ARGS)

bench-quick: $(BENCH_STAMP) check-java
	$(BIN)/python -m bench --quick $(ARGS)

# Soak: one gateway with default options under mixed clients (REST JSON/Arrow,
# HiveServer2, a streaming job, expiring sessions, host statements, a 50 M-row
# SELECT); exits non-zero on a lost result, an unexpected error (a 5xx other than
# the engine-restart 503) or a host statement that ran. Writes
# bench/results/soak.json (soak-quick.json for the quick mode). ARGS as for bench.
.PHONY: soak soak-quick

soak: $(BENCH_STAMP) check-java
	$(BIN)/python -m bench.soak --duration 30m $(ARGS)

soak-quick: $(BENCH_STAMP) check-java
	$(BIN)/python -m bench.soak --quick $(ARGS)

# Never touches the data directory (sql-gateway.data-dir, ~/.sparkgate by default).
clean:
	rm -rf build dist src/*.egg-info .mypy_cache .ruff_cache .pytest_cache .import_linter_cache
	find src tests -name __pycache__ -type d -prune -exec rm -rf {} +

distclean: clean
	rm -rf $(VENV)
