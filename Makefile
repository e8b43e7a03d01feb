# Two entry points for a fresh machine: `make demo` and `make test`.
# Both create .venv and install everything they need (torch 2.13.0 CPU build included).
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

.PHONY: demo test lint typecheck pytest bench fidelity clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --disable-pip-version-check torch==2.13.0
	$(PY) -m pip install --quiet --disable-pip-version-check -e '.[dev]'
	touch $(STAMP)

demo: $(STAMP)
	$(VENV)/bin/bottleneck-lsp profile examples/train.py --steps 30

lint: $(STAMP)
	$(VENV)/bin/ruff format --check server tests benchmarks
	$(VENV)/bin/ruff check server tests benchmarks

typecheck: $(STAMP)
	$(VENV)/bin/mypy

pytest: $(STAMP)
	$(PY) -m pytest -q

test: lint typecheck pytest

fidelity: $(STAMP)
	$(PY) tests/fidelity/checker.py

bench: $(STAMP)
	$(PY) benchmarks/engine.py
	$(PY) benchmarks/lsp_latency.py

clean:
	rm -rf $(VENV) build *.egg-info server/*.egg-info
