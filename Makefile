# One command each (README): `make repro` sets up and runs the pipeline offline,
# `make test` sets up and runs the tests. Both create .venv on first use.
PYTHON ?= python3.11
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed-$(shell cat pyproject.toml constraints.txt | sha256sum | cut -c1-12)

.PHONY: setup repro test test-all lint bench clean-venv constraints

setup: $(STAMP)

$(STAMP): pyproject.toml constraints.txt setup.py passnet_common/canonical/_cmerkle.pyx passnet_common/canonical/_cform.pyx
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet -c constraints.txt torch==2.14.1 torchvision==0.29.1
	$(BIN)/pip install --quiet -c constraints.txt -e '.[dev]'
	rm -f $(VENV)/.installed-*
	touch $(STAMP)

repro: $(STAMP)
	PATH=$(CURDIR)/$(BIN):$$PATH $(BIN)/dvc repro

test: $(STAMP)
	$(BIN)/python -m pytest -m "not slow" -q

lint: $(STAMP)
	$(BIN)/ruff check .

test-all: $(STAMP)
	$(BIN)/python -m pytest -q

bench: $(STAMP)
	$(BIN)/python -m benchmarks.run_all

clean-venv:
	rm -rf $(VENV)

# after a deliberate upgrade in .venv: record its exact versions (then rebuild and commit dvc.lock)
constraints: $(STAMP)
	{ sed -n '1,2p' constraints.txt; $(BIN)/pip freeze --exclude-editable | grep -v '^-e'; } > constraints.txt.tmp
	mv constraints.txt.tmp constraints.txt
