"""The manifest's ``prompt_sha256``: the sha256 of the exact messages as built (role and content,
in order, as canonical JSON), so an incident's prompt can be rebuilt and checked byte for byte."""
from __future__ import annotations

import hashlib
import json

from rag.config import ContextConfig
from rag.context import Evidence, Guideline, GuidelineSelector, Message, PromptBuilder, messages_sha256
from rag.text import WhitespaceCounter
from rag.types import Turn

Q = "연차 휴가는 며칠인가요?"
LEAVE = "입사 첫해 직원에게는 연차 휴가 15일이 부여된다. 근속 2년마다 1일씩 추가된다."
PUMP = "The pump stops when the coolant exceeds 88 degrees. Inspections are weekly."


def corpus(leave: str = LEAVE) -> list[Evidence]:
    return [Evidence("hr:1:0", "hr-leave", "1", leave, 0, len(leave), 2.0, uri="https://kb.example/hr"),
            Evidence("pump:1:0", "pump-manual", "1", PUMP, 0, len(PUMP), 1.0, uri="https://kb.example/pump")]


def builder(**kw) -> PromptBuilder:
    return PromptBuilder(WhitespaceCounter(), ContextConfig(context_limit=2048), **kw)


def recomputed(messages) -> str:
    """The documented recipe, written out independently of the library."""
    canonical = json.dumps([[m.role, m.content] for m in messages], ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


def test_the_hash_is_the_sha256_of_the_messages_sent():
    p = builder().build(Q, corpus(), [Turn("user", "안녕하세요"), Turn("assistant", "무엇을 도와드릴까요?")])
    h = p.manifest.prompt_sha256
    assert len(h) == 64 and set(h) <= set("0123456789abcdef")
    assert h == recomputed(p.messages) == messages_sha256(p.messages)
    assert p.manifest.to_json()["prompt_sha256"] == h
    # the Korean text is hashed as UTF-8, not as \\u escapes
    escaped = json.dumps([[m.role, m.content] for m in p.messages], separators=(",", ":"))
    assert h != hashlib.sha256(escaped.encode()).hexdigest()


def test_same_question_and_corpus_give_the_same_hash_in_any_input_order():
    a = builder().build(Q, corpus())
    b = builder().build(Q, list(reversed(corpus())))
    assert a.messages == b.messages and a.manifest.prompt_sha256 == b.manifest.prompt_sha256


def test_a_different_source_text_question_or_history_changes_the_hash():
    base = builder().build(Q, corpus()).manifest.prompt_sha256
    edited = builder().build(Q, corpus(LEAVE.replace("15일", "16일"))).manifest.prompt_sha256
    other_q = builder().build("연차 휴가의 상한은?", corpus()).manifest.prompt_sha256
    with_history = builder().build(Q, corpus(), [Turn("user", "안녕하세요")]).manifest.prompt_sha256
    assert len({base, edited, other_q, with_history}) == 4


def test_a_selected_guideline_is_part_of_the_hash():
    sel = GuidelineSelector([Guideline("leave", "휴가 질문에는 근거 조항을 먼저 밝힌다.", ("휴가",))])
    guided = builder(selector=sel).build(Q, corpus())
    assert guided.manifest.guidelines == ("leave",)
    assert guided.manifest.prompt_sha256 == recomputed(guided.messages)
    assert guided.manifest.prompt_sha256 != builder().build(Q, corpus()).manifest.prompt_sha256


def test_role_and_order_count():
    a, b = Message("user", "x"), Message("assistant", "x")
    assert messages_sha256([a]) != messages_sha256([b])
    assert messages_sha256([a, b]) != messages_sha256([b, a])
    assert messages_sha256([a]) == hashlib.sha256(b'[["user","x"]]').hexdigest()
