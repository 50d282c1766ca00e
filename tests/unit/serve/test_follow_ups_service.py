"""Follow-up questions through the service: /v1/answer with a history and the OpenAI facade with
earlier messages both resolve the follow-up before retrieval."""
from __future__ import annotations

import openai

HISTORY = [{"role": "user", "content": "연차 휴가는 며칠인가요?"},
           {"role": "assistant", "content": "입사 첫해 직원에게는 연차 휴가 16일이 부여됩니다."}]
FOLLOW = "그럼 신입사원은요?"


def test_v1_answer_resolves_a_follow_up(served):
    _, c = served
    out = c.post("/v1/answer", json={"question": FOLLOW, "history": HISTORY}).json()
    assert out["status"] == "answered" and "16일" in out["answer"]
    assert out["question"] == FOLLOW
    assert out["resolution"]["question"].startswith("신입사원은 연차 휴가는 며칠인가요?")


def test_chat_completions_resolve_the_last_user_message_against_the_earlier_ones(served):
    srv, _ = served
    client = openai.OpenAI(base_url=srv.url + "/v1", api_key="unused-when-auth-is-off", max_retries=0)
    out = client.chat.completions.create(model="rag", messages=[*HISTORY, {"role": "user", "content": FOLLOW}])
    assert out.model_extra["rag"]["status"] == "answered"
    assert "16일" in out.choices[0].message.content
