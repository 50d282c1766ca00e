"""generation.fallback through the pipeline: Components builds the extractive fallback once (only
for an LLM backend with on_failure: insufficient_evidence), the generate step passes it to the loop,
and the result and its trace say what answered; the trace carries the prompt's and each request's
hash."""
from __future__ import annotations

import asyncio
import json


from rag.answer import ExtractiveGenerator
from rag.context import messages_sha256
from tests.fakes import ScriptedGenerator

Q = "연차 휴가는 며칠인가요?"
UNKNOWN = json.dumps({"status": "answered", "answer": "연차 휴가는 15일입니다. [S9]",
                      "citations": [{"source_id": "S9", "claim": "연차 휴가는 15일", "quote": "연차 휴가 15일"}]},
                     ensure_ascii=False)
LLM = {"generation.backend": "openai", "generation.model": "fake-model", "generation.base_url": "http://127.0.0.1:9/v1",
       "generation.max_attempts": 2}


def test_components_build_the_fallback_only_where_it_applies(built, derived):
    llm = derived(built, **LLM).components
    fb = llm.fallback_generator
    assert isinstance(fb, ExtractiveGenerator) and fb is llm.fallback_generator  # built once
    assert fb.name == "extractive+model" and fb.scorer is not None  # scored with the embedder, as the default is
    assert fb.config == llm.config.generation and fb.validation == llm.config.validation
    lexical = derived(built, **LLM, **{"generation.extractive_scorer": "lexical"}).components.fallback_generator
    assert lexical.name == "extractive" and lexical.scorer is None
    assert built.components.fallback_generator is None  # the backend is extractive already
    assert derived(built, **LLM, **{"generation.fallback": "none"}).components.fallback_generator is None
    assert derived(built, **LLM, **{"generation.on_failure": "error"}).components.fallback_generator is None


def test_an_llm_that_keeps_failing_is_replaced_by_the_extractive_answer(built, derived):
    llm = ScriptedGenerator(UNKNOWN, "not json", name="openai:fake-model")
    res = derived(built, llm, **LLM).answer(Q)
    assert (res.status, res.reason) == ("answered", "validated_fallback"), res.trace.attempts
    assert [a.generator for a in res.trace.attempts] == ["openai:fake-model"] * 2 + ["extractive+model"]
    assert len(llm.requests) == 2 and res.citations
    reference = built.answer(Q)  # the extractive default over the same prompt gives the same answer
    assert (res.answer, res.citations) == (reference.answer, reference.citations)
    t = res.to_json()["trace"]
    assert [a["generator"] for a in t["attempts"]][-1] == "extractive+model"
    assert t["model_ids"]["generator"] == "openai:fake-model"
    assert t["citation_checks"] and all(c["supported"] for c in t["citation_checks"])  # the fallback's report


def test_fallback_none_abstains_as_before(built, derived):
    res = derived(built, ScriptedGenerator(UNKNOWN), **LLM, **{"generation.fallback": "none"}).answer(Q)
    assert (res.status, res.reason, res.citations) == ("insufficient_evidence", "validation_failed", ())
    assert len(res.trace.attempts) == 2 and res.answer == built.config.generation.abstention_messages["ko"]


def test_the_async_path_falls_back_too(built, derived):
    p = derived(built, ScriptedGenerator(UNKNOWN), **LLM)
    a = asyncio.run(p.aanswer(Q))
    assert (a.status, a.reason) == ("answered", "validated_fallback")
    assert a.trace.attempts[-1].generator == "extractive+model"


def test_the_trace_carries_the_prompt_hash_and_each_request_hash(built, derived):
    llm = ScriptedGenerator(UNKNOWN, name="openai:fake-model")
    p = derived(built, llm, **LLM)
    res = p.answer(Q)
    t = json.loads(res.dumps())["trace"]
    _, rebuilt = p.build_prompt(Q)  # replaying: the same question and corpus rebuild the same prompt
    assert t["manifest"]["prompt_sha256"] == rebuilt.manifest.prompt_sha256 == messages_sha256(rebuilt.messages)
    sent = [messages_sha256(r.messages) for r in llm.requests]
    assert [a["request_sha256"] for a in t["attempts"]][:2] == sent and sent[0] != sent[1]
    assert t["attempts"][2]["request_sha256"] == sent[0]  # the fallback got the prompt without feedback
