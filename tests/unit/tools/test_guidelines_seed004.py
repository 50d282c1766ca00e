"""Seed 004's guideline cases as tests: guidelines arrive as tool messages, never in the system prompt,
and the system rule "answer only from the retrieved sources" still holds when a guideline pulls the
other way (case A: resource deletion -> console UI first; case B: DB queries -> Query Runner)."""
from __future__ import annotations

import json

import pytest

from rag.config import load_config
from rag.context.prompt import DEFAULT_SYSTEM_PROMPT, GUIDELINE_TOOL
from rag.pipeline import Pipeline
from tests.conftest import write_config
from tests.fakes import Reply
from tests.unit.tools.cloud import registry
from tests.fakes import tool_calls
from tests.unit.tools.test_tool_loop import answer

GUIDE_A = "리소스 생성/삭제/변경 질문에는 콘솔 UI 방법을 먼저 안내하고, CLI 방법이 필요한지 되묻는다."
GUIDE_B = "DB 쿼리 질문에는 사내 도구 Query Runner를 먼저 언급한다."
DOCS = [
    {"id": "vm-delete-guide", "title": "VM 삭제 가이드",
     "text": "VM 삭제 가이드\n콘솔에서 VM 목록을 열고 삭제할 VM을 선택한 뒤 삭제 버튼을 누른다. "
             "삭제한 VM의 디스크는 7일 동안 복구할 수 있다. CLI로 삭제하려면 flava vm delete 명령을 쓴다."},
    {"id": "query-runner", "title": "Query Runner 안내",
     "text": "Query Runner 안내\nQuery Runner는 사내 DB 조회 도구로, 웹 화면에서 읽기 전용 쿼리를 실행한다. "
             "느린 쿼리 분석 탭에서 최근 24시간의 slow query를 볼 수 있다."},
]


@pytest.fixture
def guided(tmp_path, fake_llm):
    corpus = tmp_path / "docs.jsonl"
    corpus.write_text("\n".join(json.dumps(d, ensure_ascii=False) for d in DOCS) + "\n", encoding="utf-8")
    cfg = write_config(
        tmp_path, corpus={"paths": [str(corpus)]},
        context={"guidelines": [{"id": "resource-change", "content": GUIDE_A, "keywords": ["삭제", "생성", "변경"]},
                                {"id": "db-query", "content": GUIDE_B, "keywords": ["쿼리", "query"]}],
                 "guideline_match": "keyword"},  # the LLM match has its own tests below
        gate={"enabled": False},
        generation={"backend": "openai", "model": "fake-model", "base_url": fake_llm.base_url, "max_retries": 0,
                    "max_attempts": 1})
    p = Pipeline(load_config(cfg))
    p.build_index()
    return p


def _roles(request) -> list[str]:
    return [m["role"] for m in request["body"]["messages"]]


def test_case_a_guideline_is_a_tool_message_and_the_system_rule_stays(guided):
    _, prompt = guided.build_prompt("VM 삭제 방법 알려줘")
    msgs = prompt.to_openai()
    assert msgs[0] == {"role": "system", "content": DEFAULT_SYSTEM_PROMPT}
    assert GUIDE_A not in msgs[0]["content"] and "using only the sources" in msgs[0]["content"]
    assert msgs[1]["role"] == "assistant" and msgs[1]["tool_calls"][0]["function"]["name"] == GUIDELINE_TOOL
    assert msgs[2]["role"] == "tool" and GUIDE_A in msgs[2]["content"] and GUIDE_B not in msgs[2]["content"]
    assert prompt.manifest.guidelines == ("resource-change",)


def test_case_a_conflict_an_answer_the_sources_do_not_hold_is_refused(guided, fake_llm):
    """The guideline asks for UI steps first; a model that makes them up (not in the sources) is
    refused: without a fallback the result abstains, with the extractive fallback (the default) the
    answer is the sources' own sentences."""
    made_up = "콘솔 오른쪽 위의 톱니바퀴를 누르고 VM 폐기 메뉴를 고르세요."
    fake_llm.script(answer(f"{made_up} [S1] CLI 방법도 필요하신가요?", [("S1", made_up, made_up)]))
    strict = Pipeline(guided.config.with_overrides({"generation.fallback": "none"}), embedder=guided.components.embedder,
                      index=guided.index)
    res = strict.answer("VM 삭제 방법 알려줘")
    assert res.status == "insufficient_evidence" and res.reason == "validation_failed"
    sent = fake_llm.requests[0]
    assert _roles(sent)[:3] == ["system", "assistant", "tool"] and GUIDE_A in sent["body"]["messages"][2]["content"]
    fake_llm.script(answer(f"{made_up} [S1] CLI 방법도 필요하신가요?", [("S1", made_up, made_up)]))
    res = guided.answer("VM 삭제 방법 알려줘")
    assert (res.status, res.reason) == ("answered", "validated_fallback") and made_up not in res.answer
    assert res.trace.attempts[-1].generator.startswith("extractive")
    assert all(c.document_id == "vm-delete-guide" and c.quote in DOCS[0]["text"] for c in res.citations)


def test_case_a_followed_from_the_sources(guided, fake_llm):
    steps = "콘솔에서 VM 목록을 열고 삭제할 VM을 선택한 뒤 삭제 버튼을 누른다."
    cli = "CLI로 삭제하려면 flava vm delete 명령을 쓴다."
    # UI first, then the CLI offered as a cited sentence: the contract wants a source for every sentence,
    # so a bare follow-up question ("CLI도 필요하세요?") would be a missing_marker violation.
    fake_llm.script(answer("콘솔에서 VM 목록을 열고 삭제할 VM을 선택한 뒤 삭제 버튼을 누르세요. [S1] "
                           "CLI로 삭제하려면 flava vm delete 명령을 씁니다. [S1]",
                           [("S1", steps, steps), ("S1", cli, cli)]))
    res = guided.answer("VM 삭제 방법 알려줘")
    assert res.status == "answered", res.to_json()["trace"]["attempts"]
    assert res.citations[0].document_id == "vm-delete-guide"


def test_case_b_query_runner_with_tools(guided, fake_llm):
    """With tools, the guideline reaches the tool phase as a tool message too; the answer cites the
    Query Runner document and the tool result."""
    fake_llm.script(tool_calls(("get_database_slow_queries", {"instance": "orders-db", "hours": 24})), Reply("done"))
    q = "orders-db 느린 쿼리 어떻게 확인해요?"
    reg = registry().bind(get_database_slow_queries=lambda instance, hours=24: {
        "instance": instance, "slow_queries": [{"sql": "SELECT id FROM orders WHERE status = 1", "seconds": 12.4}]})
    line = "Query Runner는 사내 DB 조회 도구로, 웹 화면에서 읽기 전용 쿼리를 실행한다."
    slow = "SELECT id FROM orders WHERE status = 1 쿼리가 12.4초(seconds: 12.4) 걸렸습니다."
    fake_llm.script(answer(f"{line} [S2] {slow} [S1]",
                           [("S2", line, line), ("S1", slow, "sql: SELECT id FROM orders WHERE status = 1\n  seconds: 12.4")]))
    res = guided.answer_with_tools(q, reg)
    first = fake_llm.requests[0]["body"]
    assert first["tools"] and any(m["role"] == "tool" and GUIDE_B in m["content"] for m in first["messages"])
    assert res.trace.manifest.guidelines == ("db-query",)
    assert res.status == "answered", res.to_json()["trace"]["attempts"]
    assert {c.document_id for c in res.citations} == {"query-runner", "tool:get_database_slow_queries"}


# --------------------------------------------------------------------------- matched by the LLM
CONDITION_A = "사용자가 리소스를 만들거나 지우거나 바꾸는 방법을 묻는 질문"
CONDITION_B = "DB에 쿼리를 실행하거나 느린 쿼리를 찾는 방법을 묻는 질문"


@pytest.fixture
def judged(guided):
    """The same corpus and guidelines, matched by the LLM (``auto`` with an LLM backend)."""
    cfg = guided.config.with_overrides({"context.guideline_match": "auto", "context.guidelines": [
        {"id": "resource-change", "content": GUIDE_A, "keywords": ["삭제", "생성", "변경"], "condition": CONDITION_A},
        {"id": "db-query", "content": GUIDE_B, "keywords": ["쿼리", "query"], "condition": CONDITION_B}]})
    return Pipeline(cfg, embedder=guided.components.embedder, index=guided.index)


def test_the_llm_decides_where_a_keyword_would_misfire(judged, fake_llm):
    """"삭제" is a keyword of the resource-change guideline, but this question asks how long a
    deleted disk can be restored: the model says no guideline applies, and none is sent."""
    fake_llm.script(Reply(json.dumps({"ids": []})))
    q = "삭제한 VM의 디스크는 며칠 동안 복구할 수 있나요?"
    _, prompt = judged.build_prompt(q)
    assert prompt.manifest.guidelines == () and _roles({"body": {"messages": prompt.to_openai()}})[1] == "user"
    [asked] = fake_llm.requests
    text = json.dumps(asked["body"]["messages"], ensure_ascii=False)
    assert q in text and CONDITION_A in text and CONDITION_B in text and GUIDE_A not in text
    fake_llm.script(Reply(json.dumps({"ids": ["resource-change", "no-such-id"]})))
    _, prompt = judged.build_prompt("VM 지우는 방법 알려줘")  # no keyword matches; the model says it applies
    assert prompt.manifest.guidelines == ("resource-change",)


def test_the_llm_reads_the_selected_tools_and_is_asked_once_per_request(judged, fake_llm):
    reg = registry().bind(get_database_slow_queries=lambda instance, hours=24: {
        "instance": instance, "slow_queries": [{"sql": "SELECT 1", "seconds": 12.4}]})
    fake_llm.script(Reply(json.dumps({"ids": ["db-query"]})), Reply("done"),
                    Reply(json.dumps({"status": "insufficient_evidence", "answer": "", "citations": []})))
    res = judged.answer("orders-db가 왜 느린지 알려줘", tools=reg)
    judge = fake_llm.requests[0]["body"]
    assert "tools" not in judge and "get_database_slow_queries" in json.dumps(judge["messages"])
    assert res.trace.manifest.guidelines == ("db-query",)
    guided_rounds = [r for r in fake_llm.requests[1:] if any(m["role"] == "tool" and GUIDE_B in (m["content"] or "")
                                                             for m in r["body"]["messages"])]
    assert len(fake_llm.requests) == 3 and len(guided_rounds) == 2  # the tool phase and the answer, one judgement


def test_an_unreadable_judgement_falls_back_to_the_keywords(judged, fake_llm, caplog):
    fake_llm.script(Reply("I think resource-change applies"))
    _, prompt = judged.build_prompt("VM 삭제 방법 알려줘")
    assert prompt.manifest.guidelines == ("resource-change",)
    assert "the LLM match failed" in caplog.text


def test_llm_matching_needs_an_llm(tmp_path):
    from rag.errors import ConfigError

    with pytest.raises(ConfigError, match="guideline_match: llm needs an LLM"):
        load_config(write_config(tmp_path, context={"guideline_match": "llm"}))
