# The two README commands:  `make demo`  and  `make test`.
PY ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: install demo test test-fast bench measure clean

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PY) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	# CPU torch first, or pip pulls a multi-GB CUDA build for sentence-transformers.
	$(BIN)/python -m pip install -q torch==2.13.0
	$(BIN)/python -m pip install -q -e '.[all,dev]'
	touch $(STAMP)

install: $(STAMP)

## Index the bundled demo corpus and run its questions, fully offline.
demo: $(STAMP)
	$(BIN)/rag demo --config configs/default.yaml

## All test tiers (unit, then model-backed and data-backed tiers).
test: $(STAMP)
	$(BIN)/python -m pytest -q -p no:cacheprovider

test-fast: $(STAMP)
	$(BIN)/python -m pytest -q -p no:cacheprovider -m "not models and not data"

bench: $(STAMP)
	$(BIN)/python scripts/bench_retrieval.py

measure: $(STAMP)
	PATH=$(BIN):$$PATH scripts/measure_retrieval.sh

clean:
	rm -rf .rag build *.egg-info
