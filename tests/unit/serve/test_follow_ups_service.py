"""Follow-up questions through the service: /v1/answer with a history and the OpenAI facade with
earlier messages both resolve the follow-up before retrieval."""
from __future__ import annotations

import openai
import pytest

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


def _evidence_id(c, query: str) -> str:
    return c.post("/v1/search", json={"query": query, "top": 1}).json()["candidates"][0]["evidence_id"]


def test_the_previous_answers_citations_reach_a_follow_ups_search(served):
    _, c = served
    eid = _evidence_id(c, "지게차 운전 자격")
    cited = [{**HISTORY[0]}, {**HISTORY[1], "citations": [{"evidence_id": eid, "quote": "ignored"}]}]
    for body in ({"question": FOLLOW, "history": cited, "trace": True},
                 {"question": FOLLOW, "history": HISTORY, "previous_citations": [eid], "trace": True}):
        out = c.post("/v1/answer", json=body).json()
        assert "earlier" in out["trace"]["timings_ms"], out
        assert eid in [x["evidence_id"] for x in out["trace"]["candidates"]]


def test_previous_citations_without_an_assistant_turn_are_a_422(served):
    _, c = served
    r = c.post("/v1/answer", json={"question": FOLLOW, "previous_citations": ["x:1:0"]})
    assert r.status_code == 422 and "assistant turn" in r.text
    r = c.post("/v1/answer", json={"question": FOLLOW, "history": [{**HISTORY[0], "citations": ["x:1:0"]}]})
    assert r.status_code == 422 and "only an assistant turn" in r.text


def test_the_openai_facade_shows_the_resolution_and_takes_previous_citations(served):
    srv, c = served
    eid = _evidence_id(c, "지게차 운전 자격")
    client = openai.OpenAI(base_url=srv.url + "/v1", api_key="unused-when-auth-is-off", max_retries=0)
    out = client.chat.completions.create(model="rag", messages=[*HISTORY, {"role": "user", "content": FOLLOW}],
                                         extra_body={"rag": {"previous_citations": [eid]}})
    res = out.model_extra["rag"]["resolution"]
    assert res["asked"] == FOLLOW and res["method"] == "rules" and not res["standalone"]
    assert res["question"].startswith("신입사원은 연차 휴가는 며칠인가요?")
    alone = client.chat.completions.create(model="rag", messages=[{"role": "user", "content": HISTORY[0]["content"]}])
    assert alone.model_extra["rag"]["resolution"] is None
    with pytest.raises(openai.UnprocessableEntityError, match="assistant turn"):
        client.chat.completions.create(model="rag", messages=[{"role": "user", "content": FOLLOW}],
                                       extra_body={"rag": {"previous_citations": [eid]}})
