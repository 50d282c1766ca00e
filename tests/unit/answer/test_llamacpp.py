"""LlamaCppGenerator with a fake ``llama_cpp.Llama`` (tests/fakes.py): what it sends, what it
returns, one model per generator, one call at a time, and typed errors. The real model runs in
tests/llm."""
from __future__ import annotations

import asyncio
import json
import re
import sys
from concurrent.futures import ThreadPoolExecutor

import pytest

from rag.answer import (CitationValidator, FORMAT_INSTRUCTION, LlamaCppGenerator, answer_json_schema, generate_answer,
                        make_generator)
from rag.answer.llama_engines import ENGINE_ENV
from rag.answer.llamacpp import grammar_schema
from rag.answer.llm_models import MODELS, MODELS_DIR_ENV
from rag.config import ContextConfig, ValidationConfig, load_config
from rag.context import Evidence, PromptBuilder
from rag.errors import ConfigError, DependencyError, GenerationError, ModelLoadError
from rag.text import TiktokenCounter
from tests.fakes import fake_gguf, fake_llama_module, llamacpp_config

LEAVE = "입사 첫해 직원에게는 연차 휴가 15일이 부여된다. 근속 2년마다 1일씩 추가되며, 연차 휴가의 상한은 25일이다."
VALID = json.dumps({"status": "answered", "answer": "입사 첫해 연차 휴가는 15일입니다 [S1].",
                    "citations": [{"source_id": "S1", "claim": "입사 첫해 연차 휴가는 15일이다",
                                   "quote": "입사 첫해 직원에게는 연차 휴가 15일이 부여된다."}]}, ensure_ascii=False)


@pytest.fixture(scope="module")
def prompt():
    ev = [Evidence("hr:2024:0", "hr-leave", "2024.1", LEAVE, 0, len(LEAVE), 3.0, uri="https://kb.example/hr-leave")]
    return PromptBuilder(TiktokenCounter("cl100k_base"), ContextConfig(context_limit=2048)).build(
        "연차 휴가는 며칠인가요?", ev)


@pytest.fixture
def gguf(tmp_path):
    return fake_gguf(tmp_path)


config = llamacpp_config


def test_answer_through_the_loop_with_the_schema_as_grammar(prompt, gguf, monkeypatch):
    fake = fake_llama_module(monkeypatch, ["not json at all", VALID])
    cfg = config(gguf)
    gen = make_generator(cfg)
    assert isinstance(gen, LlamaCppGenerator) and gen.name == f"llamacpp:{gguf}"
    out = generate_answer(prompt, gen, CitationValidator(ValidationConfig(support_threshold=0.3)), cfg)
    assert (out.status, out.reason, len(out.attempts)) == ("answered", "validated", 2)
    assert out.attempts[0].violations[0].code == "invalid_json"
    assert out.usage.prompt_tokens == 240 and out.usage.completion_tokens == 60
    [llm] = fake.instances  # loaded once for both attempts
    assert llm.kwargs == {"model_path": str(gguf), "n_ctx": 2048, "n_threads": 1, "seed": 7, "verbose": False}
    first = llm.calls[0]
    assert first["messages"] == [*prompt.to_openai(), {"role": "user", "content": FORMAT_INSTRUCTION}]
    assert first["response_format"] == {"type": "json_object", "schema": grammar_schema(answer_json_schema(["S1"]), True)}
    assert (first["temperature"], first["max_tokens"], first["seed"]) == (0.0, 300, 7)
    assert "invalid_json" in llm.calls[1]["messages"][-1]["content"]  # the retry carries the violation


def test_one_call_at_a_time_from_threads_and_async(prompt, gguf, monkeypatch):
    fake = fake_llama_module(monkeypatch, [VALID])
    gen = LlamaCppGenerator(config(gguf))
    from rag.answer import build_request

    req = build_request(prompt, 1, (), "q")
    with ThreadPoolExecutor(4) as pool:
        outs = list(pool.map(gen.generate, [req] * 6))

    async def both():
        return await asyncio.gather(gen.agenerate(req), gen.agenerate(req))

    outs += asyncio.run(both())
    assert all(o.payload is not None and o.model == gen.name for o in outs)
    [llm] = fake.instances
    assert len(llm.calls) == 8 and llm.max_in_flight == 1


def test_a_prompt_over_the_window_is_a_generation_error(prompt, gguf, monkeypatch):
    fake_llama_module(monkeypatch, error=ValueError("Requested tokens (5000) exceed context window of 2048"))
    from rag.answer import build_request

    with pytest.raises(GenerationError, match=r"context_limit.*n_ctx \(2048\)"):
        LlamaCppGenerator(config(gguf)).generate(build_request(prompt, 1, (), "q"))


def test_missing_llama_cpp_names_the_extra(prompt, gguf, monkeypatch):
    monkeypatch.setitem(sys.modules, "llama_cpp", None)  # import llama_cpp raises ImportError
    monkeypatch.setitem(sys.modules, "xllamacpp", None)  # and so does the prebuilt engine's
    monkeypatch.delenv(ENGINE_ENV, raising=False)
    from rag.answer import build_request

    with pytest.raises(DependencyError, match=r"llama-cpp-python.*rag\[llm\]"):
        LlamaCppGenerator(config(gguf)).generate(build_request(prompt, 1, (), "q"))


def test_missing_gguf_names_the_install_command(prompt, tmp_path, monkeypatch):
    fake_llama_module(monkeypatch)
    monkeypatch.setenv(MODELS_DIR_ENV, str(tmp_path / "empty"))
    from rag.answer import build_request

    req = build_request(prompt, 1, (), "q")
    with pytest.raises(ModelLoadError, match=r"rag models install-llm qwen2\.5-0\.5b"):
        LlamaCppGenerator(config("qwen2.5-0.5b")).generate(req)
    with pytest.raises(ModelLoadError, match="no GGUF file"):
        LlamaCppGenerator(config(tmp_path / "nope.gguf")).generate(req)


def test_model_names_and_relative_paths_resolve(prompt, tmp_path, monkeypatch):
    fake = fake_llama_module(monkeypatch, [VALID])
    monkeypatch.setenv(MODELS_DIR_ENV, str(tmp_path))
    installed = tmp_path / MODELS["qwen2.5-0.5b"].filename
    installed.write_bytes(b"GGUF")
    (tmp_path / "cfgdir").mkdir()
    (tmp_path / "cfgdir" / "local.gguf").write_bytes(b"GGUF")
    from rag.answer import build_request

    req = build_request(prompt, 1, (), "q")
    LlamaCppGenerator(config("qwen2.5-0.5b")).generate(req)
    make_generator(config("local.gguf"), base_dir=tmp_path / "cfgdir").generate(req)
    assert [i.kwargs["model_path"] for i in fake.instances] == [str(installed), str(tmp_path / "cfgdir" / "local.gguf")]


def test_a_bad_file_is_a_model_load_error(prompt, gguf, monkeypatch):
    fake = fake_llama_module(monkeypatch)

    def broken(**kwargs):
        raise ValueError("Failed to load model from file")

    monkeypatch.setattr(sys.modules["llama_cpp"], "Llama", broken)
    from rag.answer import build_request

    with pytest.raises(ModelLoadError, match="complete GGUF"):
        LlamaCppGenerator(config(gguf)).generate(build_request(prompt, 1, (), "q"))
    assert fake.instances == []


def test_config_keys_and_the_window_check():
    c = load_config("configs/local-llm.yaml")
    g = c.generation
    assert (g.backend, g.model_path) == ("llamacpp", "qwen2.5-1.5b")
    assert c.context.context_limit <= g.n_ctx and g.max_tokens == c.context.output_reserve
    with pytest.raises(ConfigError, match=r"context_limit \(8192\) exceeds generation\.n_ctx \(4096\)"):
        load_config().with_overrides({"generation.backend": "llamacpp"})
    with pytest.raises(ConfigError, match="n_threads"):
        c.with_overrides({"generation.n_threads": 0})


def test_grammar_schema_writes_status_last_and_forces_markers():
    plain = answer_json_schema(["S1", "S2"])
    g = grammar_schema(plain, True)
    assert list(g["properties"]) == g["required"] == ["answer", "citations", "status"]
    assert g["properties"]["status"] == plain["properties"]["status"]
    item = g["properties"]["citations"]["items"]
    assert item["properties"]["source_id"] == {"type": "string", "enum": ["S1", "S2"]}
    answer = re.compile(g["properties"]["answer"]["pattern"])
    # the patterns read raw JSON text (as llama.cpp's grammar does): \" is an escaped quote
    for ok in ("", "Up to 2 days per week [S1].", "최대 2.5일입니다. [S2] 승인이 필요합니다 [S1].",
               r'One fixed \"anchor day\" [S1].'):
        assert answer.fullmatch(ok), ok
    for bad in ("Up to 2 days per week.", "Two days [S1]. Unmarked.", "Cites [S3].", "Two [S1][S2].",
                "Two [S1] [S2]", 'Says "two" [S1].', "Line\nbreak [S1].", r"Tab\tescape [S1]."):
        assert not answer.fullmatch(bad), bad
    quote = re.compile(item["properties"]["quote"]["pattern"])
    assert quote.fullmatch(r'Teams may set one fixed \"anchor day\" when everyone is in the office.')
    assert not quote.fullmatch("up to 2 days [S1]") and not quote.fullmatch("two\nlines")
    free = grammar_schema(plain, False)
    assert "pattern" not in json.dumps(free) and list(free["properties"])[-1] == "status"
    llama_grammar = pytest.importorskip("llama_cpp.llama_grammar")  # the real converter accepts it
    assert "root" in llama_grammar.json_schema_to_gbnf(json.dumps(g))
