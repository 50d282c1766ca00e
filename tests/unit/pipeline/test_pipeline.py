"""Pipeline.answer end to end (hashing embedder, no reranker model): the gate, the extractive
default, the async twin, and a hostile corpus through the real openai client."""
from __future__ import annotations

import asyncio
import json
import re

import pytest

from rag.config import load_config
from rag.pipeline import Pipeline
from rag.context import DEFAULT_SYSTEM_PROMPT
from tests.conftest import write_config
from tests.fakes import RecordingGenerator, Reply


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("answer")
    p = Pipeline(load_config(write_config(tmp, gate={"fallback_threshold": -1.0})))
    p.build_index()
    return tmp, p


def derived(p: Pipeline, generator=None, **overrides) -> Pipeline:
    return Pipeline(p.config.with_overrides(overrides), embedder=p.components.embedder, index=p.index, generator=generator)


def test_gate_abstention_never_calls_the_generator(built):
    _, p = built
    rec = RecordingGenerator(fail_if_called=True)
    q = derived(p, rec, **{"gate.fallback_threshold": 1.5})  # cosine never reaches 1.5
    res = q.answer("연차 휴가는 며칠인가요?")
    assert res.status == "insufficient_evidence" and res.reason == "below_threshold"
    assert res.citations == () and rec.requests == []
    assert res.answer == p.config.generation.abstention_messages["ko"]  # the user reads the configured message
    g = res.trace.gate
    assert not g.answer and g.signal == "dense" and g.top_score < 1.5 and g.scores
    assert res.trace.manifest is None and res.trace.attempts == ()
    assert json.loads(res.dumps())["trace"]["gate"]["reason"] == "below_threshold"
    too_few = derived(p, rec, **{"gate.fallback_threshold": -1.0, "gate.min_supporting": 99})
    assert too_few.answer("연차 휴가는 며칠인가요?").reason == "too_few_supporting" and rec.requests == []


def test_extractive_default_answers_with_server_resolved_citations(built):
    _, p = built
    res = p.answer("연차 휴가는 며칠인가요?")
    assert res.status == "answered" and res.reason == "validated", res.trace.attempts
    blocks = {b["source_id"]: b for b in res.trace.manifest.blocks}
    docs = {(d.id, d.version): d for d in p.load_corpus()}
    for c in res.citations:
        assert c.source_id in blocks and blocks[c.source_id]["evidence_id"] == c.evidence_id
        doc = docs[(c.document_id, c.document_version)]
        assert c.uri == doc.uri and c.quote in doc.text[c.start_char:c.end_char]
    for sentence in filter(None, res.answer.split("\n")):
        assert re.search(r"\[S\d+\]", sentence)
    assert {"bm25", "dense", "fusion", "context", "generation", "validation", "total"} <= set(res.trace.timings_ms)
    assert res.trace.model_ids["embedding"].startswith("hashing")
    checks = res.trace.to_json()["citation_checks"]  # per-citation support, not just pass/fail
    assert len(checks) == len(res.citations) and all(c["quote_found"] and c["supported"] for c in checks)
    assert all(c["support"] >= p.config.validation.support_threshold for c in checks)


def test_aanswer_gives_the_same_result(built):
    _, p = built
    a = p.answer("How often must passwords be changed?")
    b = asyncio.run(p.aanswer("How often must passwords be changed?"))
    assert (a.status, a.answer, a.citations, a.reason) == (b.status, b.answer, b.citations, b.reason)


def test_hostile_corpus_through_the_whole_pipeline(built, fake_llm):
    """The demo corpus holds vendor-faq-injected: instructions, a fake </source>, a fake
    <source id="S9">, a fake [S3] and a URL. None of it may reach the system message, forge a
    block, or put a model-written URL into the result."""
    _, p = built
    q = derived(p, **{"generation.backend": "openai", "generation.base_url": fake_llm.base_url,
                      "generation.model": "fake", "generation.max_attempts": 2, "generation.max_retries": 0,
                      "retrieval.candidates": 30, "security.quarantine": "off"})
    question = "When will suppliers be paid and where do invoices go?"
    got = q.retrieve(question)
    prompt = q.components.prompt_builder.build(question, got.evidence())
    injected = [b for b in prompt.bundle.blocks if b.document_id == "vendor-faq-injected"]
    assert injected, "the injected document must be among the sources for this test to mean anything"
    sid = injected[0].source_id
    sentence = next(s for s in re.split(r"(?<=[.?!])\s+", injected[0].text) if "days" in s or "invoice" in s)
    hostile = {"status": "answered", "answer": f"Payment is due soon, see http://evil.example/steal [{sid}].",
               "citations": [{"source_id": sid, "claim": "payment terms", "quote": sentence}]}
    good = {"status": "answered", "answer": f"{sentence} [{sid}]",
            "citations": [{"source_id": sid, "claim": sentence, "quote": sentence}]}
    fake_llm.script(Reply(json.dumps(hostile)), Reply(json.dumps(good)))
    res = q.answer(question)
    assert len(fake_llm.requests) == 2
    for req in fake_llm.requests:
        msgs = req["body"]["messages"]
        assert msgs[0] == {"role": "system", "content": DEFAULT_SYSTEM_PROMPT}
        assert sum(m["role"] == "system" for m in msgs) == 1
        user = next(m["content"] for m in msgs if m["role"] == "user" and "<source id=" in m["content"])
        n = len(prompt.bundle.blocks)
        assert user.count("<source id=") == n and user.count("</source>") == n
        assert '<source id="S9">' not in user and "[S3]" not in injected[0].text
    first = res.trace.attempts[0]
    assert "url_in_answer" in {v.code for v in first.violations}
    assert res.status == "answered" and "http" not in res.answer
    for c in res.citations:
        assert c.uri == "https://intranet.hanbit.example/procurement/vendor-faq"
        assert "evil" not in c.uri


class _Scripted:
    """A generator that returns fixed raw replies, one per attempt (the last one repeats)."""

    name = "scripted"

    def __init__(self, *raw: str) -> None:
        self.raw = list(raw)
        self.calls = 0

    def generate(self, request):
        from rag.answer.contract import GenerationOutput, parse_payload

        text = self.raw[min(self.calls, len(self.raw) - 1)]
        self.calls += 1
        return GenerationOutput(text, parse_payload(text).payload, None)

    async def agenerate(self, request):
        return self.generate(request)


def test_every_abstention_path_returns_the_configured_message(built):
    """Gate (above), no context, the validator's give-up and the model's own abstention all return
    the same user-facing message in the question's language; never the model's assertion."""
    _, p = built
    ko, en = (p.config.generation.abstention_messages[k] for k in ("ko", "en"))
    # no context: the budget never has min_block_tokens left, so no block is built and the generator is never called
    empty = derived(p, RecordingGenerator(fail_if_called=True),
                    **{"context.min_block_tokens": 8000})  # more than the whole evidence budget
    res = empty.answer("연차 휴가는 며칠인가요?")
    assert (res.status, res.reason, res.answer, res.citations) == ("insufficient_evidence", "no_context", ko, ())
    # the validator gives up after max_attempts invalid replies
    bad = derived(p, _Scripted("not json", '{"status": "answered", "answer": "x", "citations": []}'),
                  **{"generation.max_attempts": 2})
    res = bad.answer("How many days of annual leave do I get?")
    assert (res.status, res.reason, res.answer) == ("insufficient_evidence", "validation_failed", en)
    assert len(res.trace.attempts) == 2
    # a model abstention that smuggles an assertion is rejected, then a clean one is accepted
    sneaky = derived(p, _Scripted('{"status": "insufficient_evidence", "answer": "연차 휴가는 60일입니다.", "citations": []}',
                                  '{"status": "insufficient_evidence", "answer": "", "citations": []}'),
                     **{"generation.max_attempts": 2})
    res = sneaky.answer("연차 휴가는 며칠인가요?")
    assert res.trace.attempts[0].violations and res.trace.attempts[0].violations[0].code == "status_contract"
    assert (res.status, res.reason, res.answer) == ("insufficient_evidence", "model_abstained", ko)
    assert "60일" not in res.answer
