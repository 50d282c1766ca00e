"""The OpenAI-compatible generator and the regeneration loop, driven through the real
``openai`` client against a scripted loopback server (tests/fakes.py).

Every test asserts on the outcome the library produced (status, attempts, violations,
resolved citations, what the server was sent), never on a scripted reply itself.
"""
from __future__ import annotations

import asyncio
import json

import pytest

from rag.answer import (
    AnswerOutcome,
    agenerate_answer,
    generate_answer,
    question_of,
)
from rag.config import ContextConfig, GenerationConfig, ValidationConfig, load_config
from rag.context import Evidence
from rag.errors import (
    AnswerContractError,
    ConfigError,
    GenerationError,
    GenerationServerError,
    GenerationTimeoutError,
    MissingApiKeyError,
)
from rag.answer import (
    FORMAT_INSTRUCTION,
    AnswerPayload,
    ExtractiveGenerator,
    OpenAIGenerator,
    answer_json_schema,
    is_loopback,
    make_generator,
    parse_payload,
)
from rag.context import DEFAULT_SYSTEM_PROMPT, PromptBuilder
from rag.text import TiktokenCounter
from rag.answer import CitationValidator
from tests.fakes import Reply, completion_body

KEY_ENV = "RAG_TEST_LLM_KEY"
Q = "연차 휴가는 며칠인가요?"
LEAVE = "입사 첫해 직원에게는 연차 휴가 15일이 부여된다. 근속 2년마다 1일씩 추가되며, 연차 휴가의 상한은 25일이다."
PUMP = "The pump stops when the coolant exceeds 88 degrees. Inspections are weekly."


@pytest.fixture(scope="module")
def prompt():
    ev = [Evidence("hr:2024:0", "hr-leave", "2024.1", LEAVE, 0, len(LEAVE), 3.0, uri="https://kb.example/hr-leave",
                   title="연차 규정", page=2),
          Evidence("pump:1:4", "pump-manual", "1", PUMP, 100, 100 + len(PUMP), 1.0, uri="https://kb.example/pump")]
    return PromptBuilder(TiktokenCounter("cl100k_base"), ContextConfig(context_limit=2048)).build(Q, ev)


def payload(status="answered", answer=None, citations=None) -> str:
    if answer is None:
        answer = "입사 첫해 직원에게는 연차 휴가 15일이 부여됩니다 [S1]. 연차 휴가의 상한은 25일입니다. [S1]"
    if citations is None:
        citations = [{"source_id": "S1", "claim": "입사 첫해 연차 휴가는 15일이고 상한은 25일이다",
                      "quote": "입사 첫해 직원에게는 연차 휴가 15일이 부여된다."}]
    return json.dumps({"status": status, "answer": answer, "citations": citations}, ensure_ascii=False)


VALID = payload()


def gen_config(server, **kw) -> GenerationConfig:
    base = {"backend": "openai", "model": "fake-model", "base_url": server.base_url, "api_key_env": KEY_ENV,
            "timeout_s": 5.0, "max_retries": 2, "backoff_s": 0.01, "backoff_max_s": 0.05, "max_attempts": 3}
    return GenerationConfig(**{**base, **kw})


def run(prompt, server, **kw) -> AnswerOutcome:
    cfg = gen_config(server, **kw)
    return generate_answer(prompt, OpenAIGenerator(cfg), CitationValidator(ValidationConfig(support_threshold=0.5)),
                           cfg)


@pytest.fixture(autouse=True)
def _no_key(monkeypatch):
    monkeypatch.delenv(KEY_ENV, raising=False)


# --------------------------------------------------------------------------- scripted outcomes
def test_valid_answer_is_validated_and_resolved_from_the_source_map(prompt, fake_llm):
    fake_llm.script(Reply(VALID))
    out = run(prompt, fake_llm)
    assert (out.status, out.reason, len(out.attempts)) == ("answered", "validated", 1)
    assert out.violations == ()
    [c] = out.citations
    block = prompt.source_map["S1"]
    assert (c.evidence_id, c.document_id, c.document_version, c.uri, c.page) == (
        "hr:2024:0", "hr-leave", "2024.1", "https://kb.example/hr-leave", 2)
    assert (c.start_char, c.end_char) == (block.start_char, block.end_char)
    assert out.usage.total_tokens == 70
    # what went over the wire: the prompt verbatim, the format instruction, strict schema, temperature 0
    [req] = fake_llm.requests
    body = req["body"]
    assert req["path"].endswith("/chat/completions")
    assert body["model"] == "fake-model" and body["temperature"] == 0
    assert body["messages"][0] == {"role": "system", "content": DEFAULT_SYSTEM_PROMPT}
    assert body["messages"][:-1] == prompt.to_openai()
    assert body["messages"][-1] == {"role": "user", "content": FORMAT_INSTRUCTION}
    fmt = body["response_format"]
    assert fmt["type"] == "json_schema" and fmt["json_schema"]["strict"] is True
    schema = fmt["json_schema"]["schema"]
    assert schema == answer_json_schema(["S1", "S2"])
    item = schema["properties"]["citations"]["items"]
    assert "$defs" not in json.dumps(schema)
    assert item["properties"]["source_id"]["enum"] == ["S1", "S2"]
    assert item["additionalProperties"] is False and schema["additionalProperties"] is False


def test_unknown_source_id_is_rejected_then_regenerated_with_the_violation(prompt, fake_llm):
    bad = payload(answer="연차 휴가는 15일입니다 [S9].",
                  citations=[{"source_id": "S9", "claim": "연차 휴가는 15일", "quote": "연차 휴가 15일"}])
    fake_llm.script(Reply(bad), Reply(VALID))
    out = run(prompt, fake_llm)
    assert (out.status, len(out.attempts)) == ("answered", 2)
    first = out.attempts[0]
    assert {"unknown_source", "unknown_marker"} <= {v.code for v in first.violations}
    assert all(c.source_id == "S1" for c in out.citations)  # S9 never survives
    retry_msgs = fake_llm.requests[1]["body"]["messages"]
    assert "S9" in retry_msgs[-1]["content"] and "unknown_source" in retry_msgs[-1]["content"]
    assert retry_msgs[:-1] == fake_llm.requests[0]["body"]["messages"]  # feedback is appended, nothing else changes


def test_unknown_source_id_every_time_ends_in_insufficient_evidence(prompt, fake_llm):
    bad = payload(citations=[{"source_id": "S9", "claim": "c", "quote": "q"}])
    fake_llm.script(Reply(bad), Reply(bad.replace("q\"", "qq\"")))
    out = run(prompt, fake_llm, max_attempts=2)
    assert (out.status, out.reason, out.answer, out.citations) == ("insufficient_evidence", "validation_failed", "", ())
    assert len(out.attempts) == 2 and all("unknown_source" in {v.code for v in a.violations} for a in out.attempts)


def test_sentence_without_marker_fails_with_on_failure_error(prompt, fake_llm):
    no_marker = payload(answer="입사 첫해 직원에게는 연차 휴가 15일이 부여됩니다 [S1]. 상한은 25일입니다.")
    fake_llm.script(Reply(no_marker), Reply(no_marker.replace("25일입니다", "25일이다")))
    with pytest.raises(AnswerContractError) as ei:
        run(prompt, fake_llm, max_attempts=2, on_failure="error")
    attempts = ei.value.attempts
    assert len(attempts) == 2
    missing = [v for v in attempts[0].violations if v.code == "missing_marker"]
    assert len(missing) == 1 and "25일" in missing[0].sentence
    assert len(fake_llm.requests) == 2


def test_quote_not_in_block_is_rejected(prompt, fake_llm):
    wrong_quote = payload(citations=[{"source_id": "S1", "claim": "입사 첫해 연차 휴가는 15일이고 상한은 25일이다",
                                      "quote": "연차 휴가는 30일이다."}])
    fake_llm.script(Reply(wrong_quote))
    out = run(prompt, fake_llm, max_attempts=1)
    assert (out.status, out.reason) == ("insufficient_evidence", "validation_failed")
    assert [v.code for v in out.violations] == ["quote_not_found"]
    assert out.report.citations[0].quote_found is False


def test_malformed_json_costs_an_attempt_then_succeeds(prompt, fake_llm):
    fake_llm.script(Reply('{"status": "answered", "answer": "연차는 15일 [S1]", "citations": ['), Reply(VALID))
    out = run(prompt, fake_llm)
    assert (out.status, len(out.attempts)) == ("answered", 2)
    assert [v.code for v in out.attempts[0].violations] == ["invalid_json"]
    assert out.attempts[0].status is None


def test_fenced_json_is_repaired_without_an_extra_attempt(prompt, fake_llm):
    fake_llm.script(Reply("Here you go:\n```json\n" + VALID + "\n```"))
    out = run(prompt, fake_llm)
    assert (out.status, len(out.attempts)) == ("answered", 1)


def test_schema_mismatch_is_a_schema_violation(prompt, fake_llm):
    extra = json.dumps({"status": "answered", "answer": "x [S1]", "citations": [], "url": "https://x"})
    fake_llm.script(Reply(extra))
    out = run(prompt, fake_llm, max_attempts=1)
    assert out.status == "insufficient_evidence" and [v.code for v in out.violations] == ["schema"]


def test_http_500_then_success_is_retried_inside_one_attempt(prompt, fake_llm):
    fake_llm.script(Reply(status=500), Reply(VALID))
    out = run(prompt, fake_llm)
    assert (out.status, len(out.attempts)) == ("answered", 1)
    assert out.attempts[0].transport_retries == 1
    assert len(fake_llm.requests) == 2


def test_429_every_time_raises_a_server_error_after_the_retries(prompt, fake_llm):
    fake_llm.script(*[Reply(status=429)] * 3)
    with pytest.raises(GenerationServerError, match="3 tries"):
        run(prompt, fake_llm, max_retries=2)
    assert len(fake_llm.requests) == 3


def test_timeout_raises_a_typed_error_after_the_retries(prompt, fake_llm):
    fake_llm.script(Reply(VALID, delay_s=1.5), Reply(VALID, delay_s=1.5))
    with pytest.raises(GenerationTimeoutError, match="timeout_s=0.2"):
        run(prompt, fake_llm, timeout_s=0.2, max_retries=1)
    assert len(fake_llm.requests) == 2


def test_client_error_is_not_retried_and_suggests_json_object(prompt, fake_llm):
    fake_llm.script(Reply(status=400, body='{"error": {"message": "response_format json_schema not supported"}}'))
    with pytest.raises(GenerationError, match="try json_object") as ei:
        run(prompt, fake_llm)
    assert type(ei.value) is GenerationError and len(fake_llm.requests) == 1
    # llama-cpp-python answers an unknown response_format with a 500: retried, then the same hint
    body = '{"error": {"message": "response_format.type: Input should be text or json_object"}}'
    fake_llm.script(Reply(status=500, body=body), Reply(status=500, body=body))
    with pytest.raises(GenerationServerError, match="json_object_schema"):
        run(prompt, fake_llm, max_retries=1)


def test_reply_cut_at_the_token_limit_is_reported_as_such(prompt, fake_llm):
    cut = completion_body(VALID[:60]).replace('"finish_reason": "stop"', '"finish_reason": "length"')
    fake_llm.script(Reply(body=cut), Reply(VALID))
    out = run(prompt, fake_llm)
    assert (out.status, len(out.attempts)) == ("answered", 2)
    assert out.attempts[0].finish_reason == "length"
    assert "cut off at the token limit" in out.attempts[0].violations[0].message
    assert "cut off at the token limit" in fake_llm.requests[1]["body"]["messages"][-1]["content"]


def test_json_object_modes(prompt, fake_llm):
    fake_llm.script(Reply(VALID), Reply(VALID))
    assert run(prompt, fake_llm, structured="json_object").status == "answered"
    assert run(prompt, fake_llm, structured="json_object_schema").status == "answered"
    assert fake_llm.requests[0]["body"]["response_format"] == {"type": "json_object"}
    assert fake_llm.requests[1]["body"]["response_format"] == {"type": "json_object",
                                                               "schema": answer_json_schema(["S1", "S2"])}


def test_model_abstention_is_a_valid_outcome_and_abstention_with_citations_is_not(prompt, fake_llm):
    fake_llm.script(Reply(payload("insufficient_evidence", "", [])))
    out = run(prompt, fake_llm)
    assert (out.status, out.reason, out.citations) == ("insufficient_evidence", "model_abstained", ())
    # an abstention may carry only a configured abstention text, never an assertion
    fake_llm.script(Reply(payload("insufficient_evidence", "연차 휴가는 60일입니다.", [])))
    out = run(prompt, fake_llm, max_attempts=1)
    assert out.reason == "validation_failed" and [v.code for v in out.violations] == ["status_contract"]
    fake_llm.script(Reply(payload("insufficient_evidence", "자료에 없습니다.", [])))
    cfg = gen_config(fake_llm)
    out = generate_answer(prompt, OpenAIGenerator(cfg), CitationValidator(abstention_texts=["자료에 없습니다."]), cfg)
    assert out.reason == "model_abstained"
    fake_llm.script(Reply(payload("insufficient_evidence")))
    out = run(prompt, fake_llm, max_attempts=1)
    assert out.reason == "validation_failed" and "status_contract" in {v.code for v in out.violations}


def test_repeated_rejected_reply_stops_early(prompt, fake_llm):
    bad = payload(answer="연차는 15일입니다.")
    fake_llm.script(Reply(bad), Reply(bad), Reply(bad))
    out = run(prompt, fake_llm, max_attempts=3)
    assert out.reason == "validation_failed" and len(out.attempts) == 2


def test_async_loop_through_the_async_client(prompt, fake_llm):
    fake_llm.script(Reply(status=503), Reply("not json"), Reply(VALID))
    cfg = gen_config(fake_llm)
    coro = agenerate_answer(prompt, OpenAIGenerator(cfg), CitationValidator(), cfg)
    out = asyncio.run(coro)
    assert (out.status, len(out.attempts)) == ("answered", 2)
    assert out.attempts[0].transport_retries == 1 and out.attempts[0].violations[0].code == "invalid_json"


def test_api_key_is_read_from_the_named_env_var(prompt, fake_llm, monkeypatch):
    monkeypatch.setenv(KEY_ENV, "sk-test-123")
    fake_llm.script(Reply(VALID))
    run(prompt, fake_llm)
    assert fake_llm.requests[0]["authorization"] == "Bearer sk-test-123"


# --------------------------------------------------------------------------- configuration
def test_missing_key_for_a_remote_server_is_a_clear_error():
    cfg = GenerationConfig(backend="openai", base_url="https://llm.example.com/v1", api_key_env=KEY_ENV)
    with pytest.raises(MissingApiKeyError, match=KEY_ENV):
        OpenAIGenerator(cfg).client  # noqa: B018 - creating the client reads the key
    with pytest.raises(MissingApiKeyError, match="OpenAI API"):
        OpenAIGenerator(GenerationConfig(backend="openai", api_key_env=KEY_ENV)).client  # noqa: B018


@pytest.mark.parametrize("url,expected", [("http://127.0.0.1:8080/v1", True), ("http://localhost:1/v1", True),
                                          ("http://[::1]:9/v1", True), ("https://api.openai.com/v1", False),
                                          ("http://10.0.0.5/v1", False), (None, False)])
def test_is_loopback(url, expected):
    assert is_loopback(url) is expected


def test_config_defaults_and_validation(tmp_path):
    c = load_config()
    assert c.generation.backend == "extractive" and c.generation.temperature == 0
    assert c.validation.require_quotes is True
    assert isinstance(make_generator(c.generation), ExtractiveGenerator)
    assert isinstance(make_generator(c.generation.model_copy(update={"backend": "openai"})), OpenAIGenerator)
    for bad in ({"generation": {"max_attempts": 0}}, {"generation": {"on_failure": "shrug"}},
                {"validation": {"support_threshold": 1.5}}, {"generation": {"api_key": "sk-inline"}}):
        with pytest.raises(ConfigError):
            c.with_overrides({f"{k}.{kk}": vv for k, v in bad.items() for kk, vv in v.items()})
    for name in ("default", "en", "ko"):
        assert load_config(f"configs/{name}.yaml").generation.max_attempts >= 1


def test_parse_payload_errors_say_what_is_wrong():
    assert parse_payload("").error.startswith("empty")
    assert parse_payload("{nope").error.startswith("not valid JSON")
    r = parse_payload('{"status": "maybe", "answer": "", "citations": []}')
    assert r.payload is None and "status" in r.error
    r = parse_payload('{"status": "answered", "answer": "a", '
                      '"citations": [{"source_id": 1, "claim": "c", "quote": ""}]}')
    assert r.payload is None and "source_id" in r.error  # strict: no int -> str coercion
    ok = parse_payload(VALID)
    assert isinstance(ok.payload, AnswerPayload) and not ok.repaired


def test_question_of_reads_the_prompt(prompt):
    assert question_of(prompt) == Q


def test_extractive_generator_cites_exact_sentences(prompt):
    out = generate_answer(prompt, ExtractiveGenerator(), CitationValidator(), GenerationConfig())
    assert (out.status, out.reason, len(out.attempts)) == ("answered", "validated", 1)
    assert {c.evidence_id for c in out.citations} == {"hr:2024:0"}
    assert all(c.quote in LEAVE for c in out.citations)


def test_extractive_generator_abstains_when_nothing_matches(prompt):
    calls = []

    def scorer(question, sentences):
        calls.append(len(sentences))
        return [0.01] * len(sentences)

    cfg = GenerationConfig(extractive_model_weight=1.0)  # the model's score is the whole score
    out = generate_answer(prompt, ExtractiveGenerator(cfg, scorer=scorer), CitationValidator(), cfg)
    assert (out.status, out.reason, out.citations) == ("insufficient_evidence", "model_abstained", ())
    assert calls == [4]  # the model saw every candidate unit of both blocks (fewer than model_candidates)
