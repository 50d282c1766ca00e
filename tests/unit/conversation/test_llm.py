"""The LLM resolver (rag.conversation.llm) with a scripted generator."""
from __future__ import annotations

import json

import pytest

from rag.answer.contract import GenerationOutput, GenerationRequest, TokenUsage
from rag.conversation import LLMResolver, rewrite_problem
from rag.errors import GenerationError
from rag.types import Turn

HISTORY = [Turn("user", "연차 휴가는 며칠인가요?"), Turn("assistant", "1년간 80퍼센트 이상 출근하면 15일입니다.")]


class Scripted:
    name = "scripted"

    def __init__(self, reply: str | Exception) -> None:
        self.reply = reply
        self.requests: list[GenerationRequest] = []

    def generate(self, request: GenerationRequest) -> GenerationOutput:
        self.requests.append(request)
        if isinstance(self.reply, Exception):
            raise self.reply
        return GenerationOutput(self.reply, None, None)

    async def agenerate(self, request):  # pragma: no cover - not used
        return self.generate(request)


def test_a_checked_rewrite_replaces_the_follow_up():
    gen = Scripted(json.dumps({"question": "신입사원의 연차 휴가는 며칠인가요?"}, ensure_ascii=False))
    r = LLMResolver(gen).resolve("그럼 신입사원은요?", HISTORY)
    assert r.question == "신입사원의 연차 휴가는 며칠인가요?" and r.method == "llm" and not r.standalone
    req = gen.requests[0]
    assert req.json_schema["required"] == ["question"] and "연차 휴가는 며칠인가요?" in req.messages[1].content


def test_a_standalone_question_never_reaches_the_model():
    gen = Scripted("{}")
    r = LLMResolver(gen).resolve("육아휴직은 자녀 한 명당 최대 몇 년까지 할 수 있나요?", HISTORY)
    assert r.standalone and r.method == "none" and gen.requests == []


def test_a_rewrite_that_brings_its_own_facts_falls_back_to_the_rules():
    gen = Scripted(json.dumps({"question": "신입사원의 연차 휴가는 근로기준법 제60조제2항에 따라 며칠인가요?"},
                              ensure_ascii=False))
    r = LLMResolver(gen).resolve("그럼 신입사원은요?", HISTORY)
    assert r.method == "rules" and r.question.startswith("신입사원은 연차 휴가는 며칠인가요?")
    assert "refused" in r.reason and "article or name not in the conversation: #2, #60, 제60조" in r.reason


def test_a_model_error_or_bad_json_falls_back_to_the_rules():
    for reply in (GenerationError("down"), "not json", json.dumps({"q": 1})):
        r = LLMResolver(Scripted(reply)).resolve("신입사원은요?", HISTORY)
        assert r.method == "rules" and "failed" in r.reason


def test_rewrite_problems():
    assert rewrite_problem("", "q", HISTORY) == "empty rewrite"
    assert rewrite_problem("a\nb", "q", HISTORY) == "not one short line"
    assert rewrite_problem("연차 휴가는 며칠인가요?", "신입사원은요?", HISTORY) == ""


@pytest.mark.parametrize("rewrite", [
    "신입사원의 연차 휴가는 며칠인가요?",
    "입사 첫해 직원이 받는 연차 휴가는 모두 며칠인가요?",  # words of its own, no fact of its own
    "신입사원은 1년간 80퍼센트 이상 출근하면 연차 휴가를 며칠 받나요?",  # numbers the conversation holds
])
def test_a_rewrite_in_words_of_its_own_passes(rewrite):
    assert rewrite_problem(rewrite, "그럼 신입사원은요?", HISTORY) == ""


@pytest.mark.parametrize("rewrite, why", [
    ("신입사원은 연차 휴가가 20일인가요?", "not in the conversation: #20"),
    ("「근로기준법」에 따른 신입사원의 연차 휴가는?", "「근로기준법」"),
    ("제60조에 따른 신입사원의 연차 휴가는?", "제60조"),
    ("서울의 인구는 몇 명인가요?", "about something else"),
    ("What is the capital of France?", "france"),
    ("How do I reset my password?", "about something else"),
    ("신입사원은요?", "it does not stand alone"),  # a small model that hands the follow-up back
    ("그건 며칠인가요?", "it does not stand alone"),
])
def test_a_rewrite_that_brings_a_fact_or_another_topic_is_refused(rewrite, why):
    assert why in rewrite_problem(rewrite, "그럼 신입사원은요?", HISTORY)


def test_an_english_rewrite_may_name_only_what_the_conversation_names():
    h = [Turn("user", "What payload can the HR-7 handle?"), Turn("assistant", "It carries up to 7 kg; see the FAQ.")]
    assert rewrite_problem("What is the own weight of the HR-7 robot arm?", "and its own weight?", h) == ""
    assert "hr9" in rewrite_problem("What is the own weight of the HR9 robot arm?", "and its own weight?", h)


def test_a_rewrite_records_its_cost_and_is_cached_per_conversation():
    gen = Scripted(json.dumps({"question": "신입사원의 연차 휴가는 며칠인가요?"}, ensure_ascii=False))
    gen.generate = lambda req, _g=gen.generate: GenerationOutput(  # type: ignore[method-assign]
        _g(req).raw_text, None, None, usage=TokenUsage(120, 15))
    resolver = LLMResolver(gen, cache_size=2)
    first = resolver.resolve("그럼 신입사원은요?", HISTORY)
    assert (first.prompt_tokens, first.completion_tokens, first.cached) == (120, 15, False) and first.ms > 0
    again = resolver.resolve("그럼 신입사원은요?", HISTORY)
    assert again.question == first.question and again.cached and again.prompt_tokens == 0
    assert len(gen.requests) == 1
    other = [HISTORY[0], Turn("assistant", "15일입니다.")]  # another conversation: asked again
    resolver.resolve("그럼 신입사원은요?", other)
    assert len(gen.requests) == 2
    assert first.to_json()["cost"] == {"prompt_tokens": 120, "completion_tokens": 15, "ms": round(first.ms, 3),
                                       "cached": False}


def test_the_cache_keeps_only_the_newest_and_zero_turns_it_off():
    gen = Scripted(json.dumps({"question": "신입사원의 연차 휴가는 며칠인가요?"}, ensure_ascii=False))
    resolver = LLMResolver(gen, cache_size=1)
    resolver.resolve("그럼 신입사원은요?", HISTORY)
    resolver.resolve("그럼 경력직은요?", HISTORY)
    resolver.resolve("그럼 신입사원은요?", HISTORY)  # pushed out by the second
    assert len(gen.requests) == 3
    off = LLMResolver(gen, cache_size=0)
    off.resolve("그럼 신입사원은요?", HISTORY)
    off.resolve("그럼 신입사원은요?", HISTORY)
    assert len(gen.requests) == 5


def test_a_failed_rewrite_says_what_it_cost_and_falls_back():
    gen = Scripted("not json")
    r = LLMResolver(gen).resolve("그럼 신입사원은요?", HISTORY)
    assert r.method == "rules" and r.ms >= 0 and not r.cached
