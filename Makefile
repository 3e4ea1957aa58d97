# One command sets up a fresh machine and runs everything: `make test`.
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

.PHONY: install test test-fast lint format demo docs clean

# PyTorch's package index to take torch from first, e.g. its CPU builds
# (make install TORCH_INDEX=https://download.pytorch.org/whl/cpu): on Linux
# the default wheel pulls in the CUDA libraries. Empty: the usual indexes.
TORCH_INDEX ?=

$(STAMP): pyproject.toml requirements/constraints-dev.txt
	$(PYTHON) -m venv $(VENV)
	$(if $(TORCH_INDEX),$(PY) -m pip install --quiet -c requirements/constraints-dev.txt torch --index-url $(TORCH_INDEX))
	$(PY) -m pip install --quiet -c requirements/constraints-dev.txt -e ".[dev,torch,plot,dask,nlp,bench,docs]"
	# crowd-kit: a test-only oracle of sklearn_hcal.aggregation. Its declared
	# dependencies (pyarrow, transformers, ...) are not needed by its
	# aggregation code: install it without them, with exactly the light
	# packages it imports (versions pinned in the constraints file).
	$(PY) -m pip install --quiet --no-deps -c requirements/constraints-dev.txt crowd-kit attrs nltk regex click
	touch $(STAMP)

install: $(STAMP)

lint: $(STAMP)
	$(PY) -m ruff check .
	$(PY) -m ruff format --check .

test: lint
	$(PY) -m pytest

# Everything but the tests marked slow (networks trained, docs built, the demo).
test-fast: $(STAMP)
	$(PY) -m pytest -m "not slow"

demo: $(STAMP)
	$(VENV)/bin/hcal demo --out hcal-demo

# Builds the HTML docs (executing the gallery) with warnings as errors. The
# gallery reads ChaosNLI from HCAL_DATA: without it (and offline) the build
# stops at once with one line saying so.
docs: $(STAMP)
	@$(PY) docs/_gallery_data.py
	$(PY) -m sphinx -E -W --keep-going -b html docs docs/_build/html

format: $(STAMP)
	$(PY) -m ruff format .
	$(PY) -m ruff check --fix .

clean:
	rm -rf $(VENV) build *.egg-info .pytest_cache
