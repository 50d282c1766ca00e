"""The guarded tool phase: tools declare their effect, write tools are offered only when allowed
and each call waits for the application's approval, the caller's principal reaches the bound
functions, and every round of the tool phase fits the context window."""
from __future__ import annotations

import json
import time

import pytest

from rag.access import Principal
from rag.config import load_config
from rag.pipeline import Pipeline
from rag.tools import ToolError, ToolRegistry, ToolSpec, WriteRequest, from_openapi, load_tools
from tests.conftest import write_config
from tests.fakes import Reply, tool_calls
from tests.unit.tools.cloud import registry

KIM = Principal(user="kim", groups=("ops",), tenant="acme")
FLUSH_Q = "Redis 캐시를 비워줘"
ABSTAIN = Reply(json.dumps({"status": "insufficient_evidence", "answer": "", "citations": []}))


def pipeline(tmp_path, fake_llm, **sections) -> Pipeline:
    gen = {"backend": "openai", "model": "fake-model", "base_url": fake_llm.base_url, "max_retries": 0,
           "max_attempts": 1, "timeout_s": 10.0, **sections.pop("generation", {})}
    p = Pipeline(load_config(write_config(tmp_path, generation=gen, **sections)))
    p.build_index()
    return p


def offered(request: dict) -> list[str]:
    return [t["function"]["name"] for t in request["body"].get("tools", [])]


class Flush:
    """A write tool's function that records who it ran for."""

    def __init__(self) -> None:
        self.ran: list[tuple[str, Principal | None]] = []

    def __call__(self, cluster: str, principal: Principal | None = None) -> dict:
        self.ran.append((cluster, principal))
        return {"cluster": cluster, "flushed_keys": 1200}


# --------------------------------------------------------------------------- effects
def test_effects_come_from_the_file_the_http_method_or_x_rag_effect(tmp_path):
    reg = registry()
    assert reg.get("list_redis_clusters").effect == "read" and reg.get("flush_redis_cache").effect == "write"
    doc = {"openapi": "3.0.0", "paths": {
        "/items": {"get": {"operationId": "items/list"}, "post": {"operationId": "items/create"}},
        "/search": {"post": {"operationId": "items/search", "x-rag-effect": "read"}},
        "/items/{id}": {"delete": {"operationId": "items/delete"}, "head": {"operationId": "items/exists"}}}}
    api = from_openapi(doc)
    assert {s.name: s.effect for s in api} == {"items/create": "write", "items/delete": "write",
                                                "items/exists": "read", "items/list": "read", "items/search": "read"}
    with pytest.raises(ToolError, match="x-rag-effect must be read or write"):
        from_openapi({"openapi": "3.0.0", "paths": {"/a": {"post": {"operationId": "a", "x-rag-effect": "maybe"}}}})
    bad = tmp_path / "tools.yaml"
    bad.write_text("tools:\n  - name: wipe\n    effect: destroy\n", encoding="utf-8")
    with pytest.raises(ToolError, match=r"tools\.yaml: tools\[0\] \(wipe\): 'effect' must be read or write"):
        load_tools(bad)
    undeclared = ToolSpec.make("mystery")
    assert undeclared.effect == "" and undeclared.writes() and not undeclared.writes("read")


def test_write_tools_are_not_offered_unless_allowed(tmp_path, fake_llm):
    p = pipeline(tmp_path, fake_llm)
    flush = Flush()
    reg = registry().bind(flush_redis_cache=flush)
    sel = p.select_tools(FLUSH_Q, reg)
    writes = {s.name for s in reg if s.effect == "write"}
    assert sel.selected and not writes & set(sel.names) and sel.write_tools_off == len(writes)
    # A model that calls the write tool anyway is refused: it was never offered.
    fake_llm.script(tool_calls(("flush_redis_cache", {"cluster": "prod-redis"})), Reply("done"), ABSTAIN)
    res = p.answer(FLUSH_Q, tools=reg)
    [call] = res.trace.tools.phase.calls
    assert call.status == "refused" and "not offered" in call.message and flush.ran == []
    assert not writes & set(offered(fake_llm.requests[0]))


def test_a_tool_that_declares_no_effect_counts_as_a_write(tmp_path, fake_llm):
    spec = ToolSpec.make("list_redis_clusters", "Redis 클러스터 목록과 상태를 조회합니다.", product="Redis",
                         parameters={"type": "object", "properties": {"project": {"type": "string"}}})
    reg = ToolRegistry((spec,), {"list_redis_clusters": lambda project="": {"clusters": []}})
    closed = pipeline(tmp_path / "closed", fake_llm)
    assert closed.select_tools("Redis 클러스터 상태", reg).names == ()
    opened = pipeline(tmp_path / "open", fake_llm, tools={"undeclared_effect": "read"})
    assert opened.select_tools("Redis 클러스터 상태", reg).names == ("list_redis_clusters",)


def test_a_write_call_needs_an_approval_callback(tmp_path, fake_llm):
    p = pipeline(tmp_path, fake_llm, tools={"allow_write": True})
    flush = Flush()
    reg = registry().bind(flush_redis_cache=flush)
    fake_llm.script(tool_calls(("flush_redis_cache", {"cluster": "prod-redis"})), Reply("done"), ABSTAIN)
    res = p.answer(FLUSH_Q, tools=reg, principal=KIM)
    assert "flush_redis_cache" in offered(fake_llm.requests[0])
    [call] = res.trace.tools.phase.calls
    assert call.status == "not_approved" and "approval" in call.message and flush.ran == []
    reply = [m for m in fake_llm.requests[1]["body"]["messages"] if m["role"] == "tool"][-1]["content"]
    assert reply.startswith("error (not_approved)")


@pytest.mark.parametrize("verdict", ["no", "raises", "slow", "truthy"])
def test_a_write_call_runs_only_on_a_clear_yes(tmp_path, fake_llm, verdict):
    p = pipeline(tmp_path, fake_llm, tools={"allow_write": True, "approval_timeout_s": 0.3})
    flush = Flush()

    def approver(req: WriteRequest):
        if verdict == "raises":
            raise RuntimeError("approval service down")
        if verdict == "slow":
            time.sleep(2)
            return True
        return "yes" if verdict == "truthy" else False  # only True approves

    reg = registry().bind(flush_redis_cache=flush).with_approval(approver)
    fake_llm.script(tool_calls(("flush_redis_cache", {"cluster": "prod-redis"})), Reply("done"), ABSTAIN)
    res = p.answer(FLUSH_Q, tools=reg, principal=KIM)
    [call] = res.trace.tools.phase.calls
    assert call.status == "not_approved" and flush.ran == []
    if verdict == "slow":
        assert "no approval within 0.3 s" in call.message


def test_an_approved_write_runs_with_the_callers_principal(tmp_path, fake_llm):
    p = pipeline(tmp_path, fake_llm, tools={"allow_write": True})
    flush = Flush()
    asked: list[WriteRequest] = []

    def approver(req: WriteRequest) -> bool:
        asked.append(req)
        return req.principal is not None and "ops" in req.principal.groups

    reg = registry().bind(flush_redis_cache=flush).with_approval(approver)
    fake_llm.script(tool_calls(("flush_redis_cache", {"cluster": "prod-redis"})), Reply("done"), ABSTAIN)
    res = p.answer(FLUSH_Q, tools=reg, principal=KIM)
    assert [c.status for c in res.trace.tools.phase.calls] == ["ok"]
    assert flush.ran == [("prod-redis", KIM)]
    [req] = asked
    assert (req.tool, json.loads(req.arguments), req.principal) == ("flush_redis_cache", {"cluster": "prod-redis"}, KIM)
    # Another caller (anonymous) is refused by the same callback.
    fake_llm.script(tool_calls(("flush_redis_cache", {"cluster": "prod-redis"})), Reply("done"), ABSTAIN)
    again = p.answer(FLUSH_Q, tools=reg)
    assert [c.status for c in again.trace.tools.phase.calls] == ["not_approved"] and len(flush.ran) == 1


def test_write_calls_with_bad_arguments_never_reach_the_approval(tmp_path, fake_llm):
    p = pipeline(tmp_path, fake_llm, tools={"allow_write": True})
    asked: list[WriteRequest] = []
    reg = registry().bind(flush_redis_cache=Flush()).with_approval(lambda r: asked.append(r) or True)
    fake_llm.script(tool_calls(("flush_redis_cache", {})), Reply("done"), ABSTAIN)
    res = p.answer(FLUSH_Q, tools=reg)
    assert [c.status for c in res.trace.tools.phase.calls] == ["invalid_arguments"] and asked == []


# --------------------------------------------------------------------------- the principal
def test_the_principal_reaches_every_function_that_takes_one(tmp_path, fake_llm):
    p = pipeline(tmp_path, fake_llm)
    seen: list[Principal | None] = []

    def clusters(project: str, principal: Principal | None = None) -> dict:
        seen.append(principal)
        return {"clusters": [{"name": f"{principal.tenant}-redis" if principal else "public-redis",
                              "flavor_ref": "m5.large", "status": "active"}]}

    reg = registry().bind(list_redis_clusters=clusters)
    fake_llm.script(tool_calls(("list_redis_clusters", {"project": "p1"})), Reply("done"), ABSTAIN)
    p.answer("Redis 클러스터 상태 알려줘", tools=reg, principal=KIM)
    assert seen == [KIM]
    # The principal is the server's: a model that passes one is refused, the function never runs.
    fake_llm.script(tool_calls(("list_redis_clusters", {"project": "p1", "principal": {"user": "admin"}})),
                    Reply("done"), ABSTAIN)
    res = p.answer("Redis 클러스터 상태 알려줘", tools=reg, principal=KIM)
    [call] = res.trace.tools.phase.calls
    assert call.status == "invalid_arguments" and "set by the server" in call.message and seen == [KIM]
    # The definition the model sees has no principal argument.
    assert "principal" not in json.dumps(fake_llm.requests[0]["body"]["tools"])


def test_a_tool_may_not_declare_the_principal_as_an_argument():
    spec = ToolSpec.make("whoami", parameters={"type": "object", "properties": {"principal": {"type": "string"}}},
                         effect="read")
    with pytest.raises(ToolError, match="'principal', which the server passes"):
        ToolRegistry((spec,), {"whoami": lambda principal=None: {}})
    ToolRegistry((spec,), {"whoami": lambda **kw: {}})  # a function that does not take it: an ordinary argument


def test_a_copy_per_request_reuses_the_tool_index(tmp_path, fake_llm):
    p = pipeline(tmp_path, fake_llm)
    reg = registry()
    first = p.components.tool_selector(reg)
    assert p.components.tool_selector(reg.with_approval(lambda r: True)) is first
    assert p.components.tool_selector(reg.bind(list_vms=lambda project: {})) is first


# --------------------------------------------------------------------------- the window
def _request_tokens(counter, body: dict, overhead: int) -> int:
    """What one tool-phase request costs, counted as the loop counts it."""
    n = 0
    for m in body["messages"]:
        n += counter.count(m.get("content") or "") + overhead
        for tc in m.get("tool_calls") or []:
            n += counter.count(tc["function"]["name"]) + counter.count(tc["function"]["arguments"]) + overhead
    tools = body.get("tools") or []
    if tools:
        n += counter.count(json.dumps(tools, ensure_ascii=False)) + overhead * len(tools)
    return n


def test_every_round_of_the_tool_phase_fits_the_window(tmp_path, fake_llm):
    """At the limit: documents, definitions, two large results and a third call that finds no room.
    Every request the model gets is within context_limit - output_reserve - safety_margin, the
    results are trimmed to the room left, and the phase stops when nothing more fits."""
    limit, reserve, margin = 2600, 300, 64
    p = pipeline(tmp_path, fake_llm, context={"context_limit": limit, "output_reserve": reserve,
                                              "safety_margin": margin},
                 generation={"max_tokens": reserve}, tools={"max_result_tokens": 1200, "phase_reserve": 400,
                                                            "min_score": 0.0, "max_calls": 6})
    fake_llm.script(tool_calls(("list_alerts", {"project": "p"})), tool_calls(("list_alerts", {"project": "q"})),
                    tool_calls(("list_alerts", {"project": "r"})), Reply("done"), ABSTAIN)
    res = p.answer("Alerts 알람 목록 보여줘", tools=registry())
    phase = res.trace.tools.phase
    window = limit - reserve - margin
    assert phase.window == window
    counter, overhead = p.components.prompt_builder.counter, p.config.context.message_overhead
    rounds = [r["body"] for r in fake_llm.requests if r["body"].get("tools")]
    assert len(rounds) == phase.rounds >= 2
    costs = [_request_tokens(counter, b, overhead) for b in rounds]
    assert max(costs) == phase.peak_tokens <= window, costs
    assert all(b.get("max_tokens") == reserve for b in rounds)
    # The first result alone (1200 tokens of alerts) would not have fitted the room it got.
    statuses = [c.status for c in phase.calls]
    assert statuses[0] == "ok" and "no_room" in statuses and phase.stopped == "window_full", (statuses, phase.stopped)
    first_reply = [m for m in rounds[1]["messages"] if m["role"] == "tool"][-1]["content"]
    assert "# Trimmed" in first_reply and counter.count(first_reply) < 1200
    # The scripted model reuses call ids across rounds: each result is still its own evidence block.
    ids = [e.evidence.evidence_id for e in phase.evidence]
    assert ids == ["tool:list_alerts:call_1", "tool:list_alerts:call_1.2"]
    # The documents left room for the phase: the tools term of the base prompt's budget.
    assert phase.definition_tokens > 0
    # The answer's own prompt is budgeted afresh, without the tool reserve.
    assert res.trace.manifest is None or res.trace.manifest.budget.tools == 0


# --------------------------------------------------------------------------- a product named in passing
def test_a_product_named_in_passing_does_not_shut_out_the_subject(tmp_path, fake_llm):
    """"VM" is a product; the question is about the slow queries of the database the VM uses. The
    head of the ranking (tools.keep_top) stays whatever product is named; with keep_top 0 the
    named product decides alone, as before."""
    q = "VM에서 쓰는 데이터베이스의 느린 쿼리 기록 조회해줘"
    p = pipeline(tmp_path / "kept", fake_llm)
    sel = p.select_tools(q, registry())
    assert sel.analysis.products_named == ("VM",)
    assert "get_database_slow_queries" in sel.names and any(registry().get(n).product == "VM" for n in sel.names)
    alone = pipeline(tmp_path / "alone", fake_llm, tools={"keep_top": 0}).select_tools(q, registry())
    assert {registry().get(n).product for n in alone.names} == {"VM"}
