"""A real local LLM (Qwen2.5-Coder-0.5B-Instruct Q4_K_M) through the validator and the regeneration
loop, on prompts built from the demo corpus, by both paths: in-process (``backend: llamacpp``,
the schema compiled to a grammar) and llama.cpp's OpenAI-compatible server (``backend: openai``,
``structured: json_object_schema``), with whichever engine tests/llm/conftest.py chose (the
prebuilt xllamacpp unless llama-cpp-python is installed).

The model is small: it often fails validation. These tests assert the contract, not wisdom: the
outcome is either an answer whose every citation validated and resolves to a block of the prompt,
or insufficient_evidence without citations (or, with on_failure=error, a typed
AnswerContractError carrying every attempt). Never an answer with unverified citations. And the
output is schema-constrained: every reply that was not cut at max_tokens parses.

Each call takes seconds on 2 cores (a rambling retry up to max_tokens, tens of seconds), so the
tests are few and reuse prompts (llama.cpp keeps the evaluated prefix of the previous prompt).
"""
from __future__ import annotations

import json
import re

import pytest

from rag.answer import (AnswerOutcome, CitationValidator, LlamaCppGenerator, OpenAIGenerator, answer_json_schema,
                        generate_answer, parse_payload)
from rag.answer.llamacpp import grammar_schema
from rag.errors import AnswerContractError
from rag.pipeline import Pipeline
from rag.text import answer_sentences, marker_ids, quote_found
from tests.conftest import write_config
from tests.llm.conftest import N_CTX, THREADS

pytestmark = pytest.mark.llm

QUESTIONS = ("How many days per week can I work remotely?", "How often must passwords be changed?")


@pytest.fixture(scope="module")
def pipeline(gguf, tmp_path_factory):
    cfg = write_config(
        tmp_path_factory.mktemp("llm"),
        # counted with cl100k (Qwen's tokenizer gives fewer tokens on this corpus), well inside n_ctx
        context={"tokenizer": "cl100k_base", "context_limit": 1400, "output_reserve": 256, "max_blocks": 3,
                 "max_blocks_per_document": 2},
        generation={"backend": "llamacpp", "model_path": str(gguf), "n_ctx": N_CTX, "n_threads": THREADS,
                    "max_tokens": 256, "max_attempts": 2, "on_failure": "insufficient_evidence"},
        gate={"fallback_threshold": -1.0},  # hashing embedder: let every question reach the model
    )
    p = Pipeline.from_config(cfg)
    p.build_index()
    return p


def server_config(pipeline, base_url: str, **kw):
    return pipeline.config.generation.model_copy(update={
        "backend": "openai", "model": "qwen2.5-0.5b", "base_url": base_url, "api_key_env": "RAG_LLM_TEST_NO_KEY",
        "structured": "json_object_schema", "timeout_s": 180, "max_retries": 1, **kw})


def check_contract(out: AnswerOutcome, prompt, max_attempts: int) -> None:
    assert 1 <= len(out.attempts) <= max_attempts
    assert out.usage.prompt_tokens > 0  # the real model reports usage
    if out.status == "answered":
        assert out.reason == "validated" and out.report is not None and out.report.ok
        assert out.citations, "an answer without citations must never validate"
        blocks = prompt.source_map
        for c in out.citations:
            block = blocks[c.source_id]
            assert (c.evidence_id, c.document_id, c.uri) == (block.evidence_id, block.document_id, block.uri)
            assert quote_found(c.quote, block.text)
        for s in answer_sentences(out.answer):
            assert set(marker_ids(s.text)) and set(marker_ids(s.text)) <= set(blocks)
    else:
        assert out.status == "insufficient_evidence" and out.citations == ()
        assert out.reason in ("model_abstained", "validation_failed")
        if out.reason == "validation_failed":
            assert all(a.violations for a in out.attempts)


def check_schema(out: AnswerOutcome) -> None:
    """Schema-constrained output: every reply the model finished is a payload; only a reply cut at
    max_tokens may be incomplete JSON."""
    for a in out.attempts:
        assert parse_payload(a.raw_text).payload is not None or a.finish_reason == "length", a.raw_text


def check_grammar(out: AnswerOutcome, prompt) -> None:
    """The engine enforced the in-process grammar (``grammar_schema`` with markers): status written last,
    and the answer, claims and quotes of every finished reply match its patterns (which read the raw
    JSON text of each string)."""
    g = grammar_schema(answer_json_schema(sorted(prompt.source_map)), True)
    answer = re.compile(g["properties"]["answer"]["pattern"])
    plain = re.compile(g["properties"]["citations"]["items"]["properties"]["quote"]["pattern"])

    def raw(text: str) -> str:
        return json.dumps(text, ensure_ascii=False)[1:-1]

    for a in out.attempts:
        payload = parse_payload(a.raw_text).payload
        if payload is None:
            continue
        assert list(json.loads(a.raw_text))[-1] == "status", a.raw_text
        assert answer.fullmatch(raw(payload.answer)), a.raw_text
        assert all(plain.fullmatch(raw(c.claim)) and plain.fullmatch(raw(c.quote)) for c in payload.citations), a.raw_text


# --------------------------------------------------------------------------- in-process (llamacpp)
def test_whole_pipeline_answer_in_process(pipeline):
    """Pipeline.answer: retrieve, gate, context, the in-process model, validation and regeneration;
    the result honours the contract and carries the trace."""
    res = pipeline.answer(QUESTIONS[1])
    t = res.trace
    assert t.gate.answer and t.attempts and t.prompt_tokens > 0
    assert {"generation", "validation", "context", "total"} <= set(t.timings_ms)
    if res.status == "answered":
        blocks = {b["source_id"]: b for b in t.manifest.blocks}
        assert res.citations and all(blocks[c.source_id]["evidence_id"] == c.evidence_id for c in res.citations)
        assert "http" not in res.answer
    else:
        assert res.citations == () and res.reason in ("model_abstained", "validation_failed")


def test_in_process_answer_honours_the_contract_and_the_schema(pipeline):
    question = QUESTIONS[0]
    _, prompt = pipeline.build_prompt(question)
    assert prompt.bundle.blocks
    gen = pipeline.components.generator
    assert isinstance(gen, LlamaCppGenerator)
    cfg = pipeline.config.generation
    out = generate_answer(prompt, gen, CitationValidator(pipeline.config.validation), cfg, question=question)
    check_contract(out, prompt, cfg.max_attempts)
    check_schema(out)
    check_grammar(out, prompt)
    assert all(a.generator == gen.name and a.usage.completion_tokens > 0 for a in out.attempts)


# --------------------------------------------------------------------------- OpenAI-compatible server
def test_server_answer_honours_the_contract_and_the_schema(pipeline, llama_server):
    q = QUESTIONS[0]
    _, prompt = pipeline.build_prompt(q)
    cfg = server_config(pipeline, llama_server)
    out = generate_answer(prompt, OpenAIGenerator(cfg), CitationValidator(pipeline.config.validation), cfg, question=q)
    check_contract(out, prompt, cfg.max_attempts)
    check_schema(out)


def test_server_on_failure_error_raises_typed_error_or_answers(pipeline, llama_server):
    q = QUESTIONS[0]
    _, prompt = pipeline.build_prompt(q)
    cfg = server_config(pipeline, llama_server, on_failure="error", max_attempts=1)
    try:
        out = generate_answer(prompt, OpenAIGenerator(cfg), CitationValidator(pipeline.config.validation), cfg)
    except AnswerContractError as exc:
        assert len(exc.attempts) == 1 and exc.attempts[0].violations
    else:
        check_contract(out, prompt, 1)
