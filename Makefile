# Two commands do all the set-up on a fresh machine (Python >= 3.11 with venv):
#   make run    - create .venv, install, start the dashboard on http://localhost:8501
#   make test   - create .venv with the dev tools, then lint, type-check and run every test
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
PORT ?= 8501

$(VENV)/.run-installed: requirements.txt pyproject.toml
	$(PY) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	$(BIN)/python -m pip install -q -r requirements.txt -e .
	touch $@

$(VENV)/.dev-installed: $(VENV)/.run-installed requirements-dev.txt
	$(BIN)/python -m pip install -q -r requirements-dev.txt
	touch $@

.PHONY: run test lint typecheck bench screenshot clean
run: $(VENV)/.run-installed
	$(BIN)/streamlit run app.py --server.port $(PORT) --server.headless true --browser.gatherUsageStats false

lint: $(VENV)/.dev-installed
	$(BIN)/ruff check calc app.py tests benchmarks

typecheck: $(VENV)/.dev-installed
	$(BIN)/mypy

test: lint typecheck
	$(BIN)/python -m pytest

bench: $(VENV)/.dev-installed
	$(BIN)/python benchmarks/plan_timing.py
	$(BIN)/python benchmarks/sweep_million.py
	$(BIN)/python benchmarks/dashboard_timing.py

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache
