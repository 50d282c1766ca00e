"""The regeneration loop's fallback: when every attempt of a generator failed validation, the
fallback (here the real extractive generator over the same prompt) answers once; only an answer
of it that validates is returned (reason ``validated_fallback``). Each attempt records the hash of
the messages it was given."""
from __future__ import annotations

import asyncio
import json
import logging

import pytest

from rag.answer import CitationValidator, ExtractiveGenerator, agenerate_answer, build_request, generate_answer
from rag.config import ContextConfig, GenerationConfig, ValidationConfig
from rag.context import Evidence, PromptBuilder, messages_sha256
from rag.errors import AnswerContractError
from rag.text import TiktokenCounter
from tests.fakes import ScriptedGenerator

Q = "연차 휴가는 며칠인가요?"
LEAVE = "입사 첫해 직원에게는 연차 휴가 15일이 부여된다. 근속 2년마다 1일씩 추가되며, 연차 휴가의 상한은 25일이다."
PUMP = "The pump stops when the coolant exceeds 88 degrees. Inspections are weekly."
# Cites a source that is not in the prompt: rejected every time (unknown_source)
UNKNOWN = json.dumps({"status": "answered", "answer": "연차 휴가는 15일입니다. [S9]",
                      "citations": [{"source_id": "S9", "claim": "연차 휴가는 15일", "quote": "연차 휴가 15일"}]},
                     ensure_ascii=False)
ABSTAIN = json.dumps({"status": "insufficient_evidence", "answer": "", "citations": []})
CONFIG = GenerationConfig(max_attempts=2)


@pytest.fixture(scope="module")
def prompt():
    ev = [Evidence("hr:2024:0", "hr-leave", "2024.1", LEAVE, 0, len(LEAVE), 3.0, uri="https://kb.example/hr-leave"),
          Evidence("pump:1:4", "pump-manual", "1", PUMP, 100, 100 + len(PUMP), 1.0, uri="https://kb.example/pump")]
    return PromptBuilder(TiktokenCounter("cl100k_base"), ContextConfig(context_limit=2048)).build(Q, ev)


@pytest.fixture(scope="module")
def validator():
    return CitationValidator(ValidationConfig(support_threshold=0.5))


def test_the_extractive_fallback_answers_when_every_attempt_failed(prompt, validator, caplog):
    llm = ScriptedGenerator("not json", UNKNOWN, name="openai:fake")
    with caplog.at_level(logging.INFO, logger="rag.answer.loop"):
        out = generate_answer(prompt, llm, validator, CONFIG, fallback=ExtractiveGenerator())
    assert (out.status, out.reason) == ("answered", "validated_fallback")
    assert [(a.generator, a.ok) for a in out.attempts] == [("openai:fake", False), ("openai:fake", False),
                                                           ("extractive", True)]
    assert len(llm.requests) == 2  # max_attempts of the model, then the fallback once
    assert out.citations and {c.evidence_id for c in out.citations} == {"hr:2024:0"}
    assert all(c.quote in LEAVE for c in out.citations) and "15일" in out.answer
    assert out.violations == () and out.report is not None and out.report.ok
    assert any("fallback generator extractive validated after 2 rejected attempts" in r.getMessage()
               for r in caplog.records if r.levelno == logging.INFO)


def test_the_fallback_request_carries_no_feedback_and_each_attempt_its_own_hash(prompt, validator):
    llm = ScriptedGenerator(UNKNOWN, name="openai:fake")
    fallback = ScriptedGenerator(ABSTAIN, name="extractive-test")
    out = generate_answer(prompt, llm, validator, CONFIG, fallback=fallback)
    first, retry = llm.requests
    [sent] = fallback.requests
    assert retry.violations and not sent.violations  # the fallback starts afresh
    assert sent.messages == build_request(prompt, 3, (), Q).messages and sent.attempt == 3
    assert [a.request_sha256 for a in out.attempts] == [messages_sha256(r.messages) for r in (first, retry, sent)]
    h1, h2, h3 = (a.request_sha256 for a in out.attempts)
    assert h1 == h3 != h2  # the feedback changes the retry's messages; the fallback got the first attempt's
    assert out.attempts[0].request_sha256 != prompt.manifest.prompt_sha256  # + the format instruction


def test_a_fallback_that_abstains_leaves_validation_failed(prompt, validator):
    llm = ScriptedGenerator(UNKNOWN, name="openai:fake")
    # nothing about parking in the sources: the real extractive generator abstains
    out = generate_answer(prompt, llm, validator, CONFIG, question="회사 주차장은 어디에 있나요?",
                          fallback=ExtractiveGenerator())
    assert (out.status, out.reason, out.citations, out.answer) == ("insufficient_evidence", "validation_failed", (), "")
    assert [a.generator for a in out.attempts] == ["openai:fake", "openai:fake", "extractive"]
    assert out.attempts[-1].status == "insufficient_evidence" and out.attempts[-1].ok
    # what failed is still reported: the model's last rejected attempt
    assert "unknown_source" in {v.code for v in out.violations} and out.report is not None and not out.report.ok


def test_a_fallback_that_fails_validation_leaves_validation_failed(prompt, validator):
    llm = ScriptedGenerator("not json", name="openai:fake")
    out = generate_answer(prompt, llm, validator, CONFIG, fallback=ScriptedGenerator(UNKNOWN, name="extractive-bad"))
    assert (out.status, out.reason) == ("insufficient_evidence", "validation_failed")
    assert "unknown_source" in {v.code for v in out.attempts[-1].violations}
    assert [v.code for v in out.violations] == ["invalid_json"]  # the model's last attempt


def test_a_valid_model_abstention_is_not_a_failure(prompt, validator):
    no = ScriptedGenerator(name="extractive", fail_if_called=True)
    out = generate_answer(prompt, ScriptedGenerator(UNKNOWN, ABSTAIN, name="openai:fake"), validator, CONFIG,
                          fallback=no)
    assert (out.status, out.reason) == ("insufficient_evidence", "model_abstained") and len(out.attempts) == 2
    ok = generate_answer(prompt, ExtractiveGenerator(), validator, CONFIG, fallback=no)
    assert ok.reason == "validated" and len(ok.attempts) == 1


def test_on_failure_error_raises_without_asking_the_fallback(prompt, validator):
    no = ScriptedGenerator(name="extractive", fail_if_called=True)
    with pytest.raises(AnswerContractError) as exc:
        generate_answer(prompt, ScriptedGenerator(UNKNOWN), validator, CONFIG.model_copy(update={"on_failure": "error"}),
                        fallback=no)
    assert len(exc.value.attempts) == 2


def test_a_repeated_rejected_reply_stops_early_and_falls_back(prompt, validator):
    llm = ScriptedGenerator(UNKNOWN, name="openai:fake")
    out = generate_answer(prompt, llm, validator, GenerationConfig(max_attempts=5), fallback=ExtractiveGenerator())
    assert out.reason == "validated_fallback" and len(llm.requests) == 2 and len(out.attempts) == 3


def test_without_a_fallback_nothing_changes(prompt, validator):
    out = generate_answer(prompt, ScriptedGenerator(UNKNOWN), validator, CONFIG)
    assert (out.status, out.reason, len(out.attempts)) == ("insufficient_evidence", "validation_failed", 2)


def test_the_async_loop_falls_back_the_same_way(prompt, validator):
    sync = generate_answer(prompt, ScriptedGenerator(UNKNOWN), validator, CONFIG, fallback=ExtractiveGenerator())
    coro = agenerate_answer(prompt, ScriptedGenerator(UNKNOWN), validator, CONFIG, fallback=ExtractiveGenerator())
    out = asyncio.run(coro)
    assert (out.status, out.reason, out.answer, out.citations) == (sync.status, sync.reason, sync.answer,
                                                                  sync.citations)
    assert [a.request_sha256 for a in out.attempts] == [a.request_sha256 for a in sync.attempts]
