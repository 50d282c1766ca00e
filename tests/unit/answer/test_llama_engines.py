"""Which llama.cpp engine runs ``generation.backend: llamacpp`` and the prebuilt xllamacpp adapter,
with fakes (tests/fakes.py): what the generator hands the engine, and its errors as typed errors.
The real engine runs in tests/llm."""
from __future__ import annotations

import json
import sys

import pytest

from rag.answer import CitationValidator, LlamaCppGenerator, answer_json_schema, build_request, generate_answer
from rag.answer.llama_engines import ENGINE_ENV, LLAMA_CPP_PYTHON, XLLAMACPP, choose_engine
from rag.answer.llm_server import main
from rag.answer.llamacpp import grammar_schema
from rag.config import ContextConfig, ValidationConfig
from rag.context import Evidence, PromptBuilder
from rag.errors import DependencyError, GenerationError, InputError, ModelLoadError
from rag.text import TiktokenCounter
from tests.fakes import fake_gguf, fake_llama_module, fake_xllamacpp_module, llamacpp_config

TEXT = "Employees may work remotely up to 2 days per week with manager approval."
VALID = json.dumps({"answer": "You can work remotely up to 2 days per week [S1].", "citations": [
    {"source_id": "S1", "claim": "Remote work is allowed up to 2 days per week",
     "quote": "Employees may work remotely up to 2 days per week with manager approval."}], "status": "answered"})


def completion(content: str, finish: str = "stop") -> dict:
    return {"usage": {"prompt_tokens": 90, "completion_tokens": 25},
            "choices": [{"index": 0, "finish_reason": finish, "message": {"role": "assistant", "content": content}}]}


@pytest.fixture(scope="module")
def prompt():
    ev = [Evidence("hr:2024:0", "remote-work", "2024.1", TEXT, 0, len(TEXT), 3.0, uri="https://kb.example/remote")]
    return PromptBuilder(TiktokenCounter("cl100k_base"), ContextConfig(context_limit=2048)).build(
        "How many days per week can I work remotely?", ev)


@pytest.fixture
def gguf(tmp_path):
    return fake_gguf(tmp_path)


config = llamacpp_config


def test_auto_prefers_an_installed_llama_cpp_python_then_xllamacpp(monkeypatch):
    fake_xllamacpp_module(monkeypatch)
    assert choose_engine() == XLLAMACPP
    fake_llama_module(monkeypatch)  # llama_cpp importable again: installed on purpose, so it wins
    assert choose_engine() == LLAMA_CPP_PYTHON
    monkeypatch.setenv(ENGINE_ENV, XLLAMACPP)
    assert choose_engine() == XLLAMACPP
    assert choose_engine(LLAMA_CPP_PYTHON) == LLAMA_CPP_PYTHON


def test_an_unknown_or_missing_engine_is_a_typed_error(monkeypatch):
    fake_xllamacpp_module(monkeypatch)
    monkeypatch.setenv(ENGINE_ENV, "vllm")
    with pytest.raises(InputError, match=rf"'vllm' \(from {ENGINE_ENV}\).*xllamacpp, llama-cpp-python"):
        choose_engine()
    monkeypatch.setenv(ENGINE_ENV, LLAMA_CPP_PYTHON)  # asked for, not installed
    with pytest.raises(DependencyError, match=r"llama-cpp-python.*rag\[llm-source\]"):
        choose_engine()
    monkeypatch.delenv(ENGINE_ENV)
    monkeypatch.setitem(sys.modules, "xllamacpp", None)
    with pytest.raises(DependencyError, match=r"xllamacpp.*llama-cpp-python.*rag\[llm\]"):
        choose_engine()


def test_the_generator_runs_xllamacpp_with_the_grammar(prompt, gguf, monkeypatch):
    fake = fake_xllamacpp_module(monkeypatch, reply=completion(VALID))
    cfg = config(gguf)
    gen = LlamaCppGenerator(cfg)
    out = generate_answer(prompt, gen, CitationValidator(ValidationConfig(support_threshold=0.3)), cfg)
    assert (out.status, out.reason, len(out.attempts)) == ("answered", "validated", 1), [a.violations for a in out.attempts]
    assert (out.usage.prompt_tokens, out.usage.completion_tokens) == (90, 25)
    [server] = fake.instances
    p = server.params
    assert (p.model.path, p.n_ctx, p.n_parallel, p.cpuparams.n_threads, p.cpuparams_batch.n_threads,
            p.sampling.seed) == (str(gguf), 2048, 1, 1, 1, 7)
    # its always-on loopback listener is locked with a key nobody else has
    assert len(p.api_keys) == 1 and len(p.api_keys[0]) >= 32
    [req] = server.requests
    assert req["response_format"] == {"type": "json_object", "schema": grammar_schema(answer_json_schema(["S1"]), True)}
    assert (req["temperature"], req["max_tokens"], req["seed"]) == (0.0, 300, 7)
    assert req["messages"][0]["role"] == "system"


def test_n_threads_none_leaves_llama_cpp_its_default(prompt, gguf, monkeypatch):
    fake = fake_xllamacpp_module(monkeypatch, reply=completion(VALID))
    LlamaCppGenerator(config(gguf, n_threads=None)).generate(build_request(prompt, 1, (), "q"))
    assert fake.instances[0].params.cpuparams.n_threads == -1


def test_server_errors_are_generation_errors(prompt, gguf, monkeypatch):
    req = build_request(prompt, 1, (), "q")
    fake_xllamacpp_module(monkeypatch, reply={"error": {
        "code": 400, "type": "exceed_context_size_error",
        "message": "request (5000 tokens) exceeds the available context size (2048 tokens)"}})
    with pytest.raises(GenerationError, match=r"5000 tokens.*context_limit.*n_ctx \(2048\)"):
        LlamaCppGenerator(config(gguf)).generate(req)
    fake_xllamacpp_module(monkeypatch, reply={"error": {"code": 400, "type": "invalid_request_error",
                                                        "message": "bad grammar"}})
    with pytest.raises(GenerationError, match=r"xllamacpp rejected the request \(invalid_request_error\): bad grammar"):
        LlamaCppGenerator(config(gguf)).generate(req)


def test_a_file_xllamacpp_cannot_load_is_a_model_load_error(prompt, gguf, monkeypatch):
    fake = fake_xllamacpp_module(monkeypatch, load_error=RuntimeError("Failed to init server"))
    with pytest.raises(ModelLoadError, match=r"\(xllamacpp\) could not load .*Failed to init server.*complete GGUF"):
        LlamaCppGenerator(config(gguf)).generate(build_request(prompt, 1, (), "q"))
    assert fake.instances == []


def test_the_server_command_reports_a_missing_model_or_engine(tmp_path, monkeypatch, capsys):
    fake_xllamacpp_module(monkeypatch)
    assert main(["--model", str(tmp_path / "nope.gguf")]) == 2
    assert "no GGUF file" in capsys.readouterr().err
    monkeypatch.setitem(sys.modules, "xllamacpp", None)
    (tmp_path / "m.gguf").write_bytes(b"GGUF")
    assert main(["--model", str(tmp_path / "m.gguf")]) == 2
    assert "pip install 'rag[llm]'" in capsys.readouterr().err
