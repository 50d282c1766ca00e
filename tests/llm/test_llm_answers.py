"""A real local LLM (SmolLM2-135M via llama.cpp) through the openai client, the validator and
the regeneration loop, on prompts built from the demo corpus.

The model is tiny: it often fails validation. These tests assert the contract, not wisdom:
the outcome is either an answer whose every citation validated and resolves to a block of
the prompt, or insufficient_evidence without citations (or, with on_failure=error, a typed
AnswerContractError carrying every attempt). Never an answer with unverified citations.
"""
from __future__ import annotations

import pytest

from rag.answer import AnswerOutcome, generate_answer
from rag.errors import AnswerContractError
from rag.answer import OpenAIGenerator, parse_payload
from rag.pipeline import Pipeline
from rag.text import answer_sentences, marker_ids, quote_found
from rag.answer import CitationValidator
from tests.conftest import write_config

pytestmark = pytest.mark.llm

QUESTIONS = ("How many days per week can I work remotely?", "How often must passwords be changed?")


@pytest.fixture(scope="module")
def pipeline(llama_server, tmp_path_factory):
    cfg = write_config(
        tmp_path_factory.mktemp("llm"),
        # SmolLM2's tokenizer is not cl100k: keep the window well inside its 2048-token n_ctx.
        context={"context_limit": 1300, "output_reserve": 300, "max_blocks": 3, "max_blocks_per_document": 2},
        generation={"backend": "openai", "model": "smollm2-135m", "base_url": llama_server,
                    "api_key_env": "RAG_LLM_TEST_NO_KEY", "structured": "json_object_schema", "max_tokens": 300,
                    "timeout_s": 120, "max_retries": 1, "max_attempts": 2, "on_failure": "insufficient_evidence"},
        gate={"fallback_threshold": -1.0},  # hashing embedder: let every question reach the model
    )
    p = Pipeline.from_config(cfg)
    p.build_index()
    return p


def check_contract(out: AnswerOutcome, prompt, max_attempts: int) -> None:
    assert 1 <= len(out.attempts) <= max_attempts
    assert out.usage.prompt_tokens > 0  # the real server reports usage
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


@pytest.mark.parametrize("question", QUESTIONS)
def test_local_llm_answer_honours_the_contract(pipeline, question):
    _, prompt = pipeline.build_prompt(question)
    assert prompt.bundle.blocks
    gen = OpenAIGenerator(pipeline.config.generation)
    out = generate_answer(prompt, gen, CitationValidator(pipeline.config.validation), pipeline.config.generation,
                          question=question)
    check_contract(out, prompt, pipeline.config.generation.max_attempts)
    # schema-constrained output: every reply the server finished is a payload; only a reply cut
    # at max_tokens may be incomplete JSON
    for a in out.attempts:
        assert parse_payload(a.raw_text).payload is not None or a.finish_reason == "length", a.raw_text


def test_local_llm_on_failure_error_raises_typed_error_or_answers(pipeline):
    q = QUESTIONS[0]
    _, prompt = pipeline.build_prompt(q)
    cfg = pipeline.config.generation.model_copy(update={"on_failure": "error", "max_attempts": 1})
    try:
        out = generate_answer(prompt, OpenAIGenerator(cfg), CitationValidator(pipeline.config.validation), cfg)
    except AnswerContractError as exc:
        assert len(exc.attempts) == 1 and exc.attempts[0].violations
    else:
        check_contract(out, prompt, 1)


def test_whole_pipeline_answer_through_the_local_llm(pipeline):
    """Pipeline.answer: retrieve, gate, context, the real server with schema-constrained output,
    validation and regeneration; the result honours the contract and carries the trace."""
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
