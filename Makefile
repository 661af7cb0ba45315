# The two commands a newcomer needs: `make demo` and `make test`. Both create .venv themselves.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
SHARED ?= ../shared/data

.PHONY: demo test lint venv clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

$(VENV)/.core: $(BIN)/python pyproject.toml
	$(BIN)/pip install --quiet -e .
	touch $@

# The [sonar] extra (torch, fairseq2, sonar-space) in ONE pip call: see docs/similarity.md.
# fairseq2n needs the system's libsndfile.so.1: apt-get it when absent and running as root.
$(VENV)/.test: $(BIN)/python pyproject.toml
	@ldconfig -p 2>/dev/null | grep -q 'libsndfile\.so\.1' || [ "$$(id -u)" != 0 ] || \
	  (export DEBIAN_FRONTEND=noninteractive; apt-get install -y -qq libsndfile1 || \
	   (apt-get update -qq && apt-get install -y -qq libsndfile1))
	@ldconfig -p 2>/dev/null | grep -q 'libsndfile\.so\.1' || \
	  echo "warning: libsndfile1 missing (SONAR tests will fail): sudo apt-get install libsndfile1"
	$(BIN)/pip install --quiet -e ".[test,sonar]"
	touch $@

venv: $(VENV)/.core

demo: $(VENV)/.core
	$(BIN)/werest demo

test: $(VENV)/.test
	$(BIN)/ruff check src tests experiments
	$(BIN)/python -m pytest

lint: $(VENV)/.test
	$(BIN)/ruff check src tests experiments
	$(BIN)/ruff format --check src tests experiments

clean:
	rm -rf $(VENV) .pytest_cache .ruff_cache
