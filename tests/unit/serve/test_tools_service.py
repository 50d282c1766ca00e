"""``rag serve`` with a tool registry: answers from live data over HTTP, plain, streamed and as chat."""
from __future__ import annotations

import json

import openai

from tests.unit.serve.conftest import live
from tests.unit.tools.cloud import registry
from tests.fakes import tool_calls
from tests.unit.tools.test_tool_loop import answer

Q = "Redis 클러스터 상태 알려줘"
QUOTE = "- name: prod-redis\n  flavor_ref: m5.large\n  status: active\n  memory_used_mb: 5120"
SENTENCE = "prod-redis 클러스터는 status active, memory_used_mb 5120입니다. [S1]"


def _script(fake_llm) -> None:
    from tests.fakes import Reply

    fake_llm.script(tool_calls(("list_redis_clusters", {"project": "p1"})), Reply("done"),
                    answer(SENTENCE, [("S1", "prod-redis 클러스터는 status active, memory_used_mb 5120이다", QUOTE)]))


def test_answers_chat_and_stream_call_the_servers_tools(tmp_path, fake_llm):
    gen = {"backend": "openai", "model": "fake-model", "base_url": fake_llm.base_url, "max_retries": 0,
           "max_attempts": 1}
    with live(tmp_path, tools=registry(), generation=gen) as (srv, c):
        assert c.get("/readyz").json()["tools"] == 25
        _script(fake_llm)
        body = c.post("/v1/answer", json={"question": Q}).json()
        assert body["status"] == "answered" and body["citations"][0]["document_id"] == "tool:list_redis_clusters"
        assert body["trace"]["tools"]["calls"][0]["status"] == "ok"
        _script(fake_llm)
        events, event = [], ""
        with c.stream("POST", "/v1/answer", json={"question": Q, "stream": True}) as r:
            for line in r.iter_lines():
                if line.startswith("event: "):
                    event = line[7:]
                elif line.startswith("data: "):
                    events.append((event, json.loads(line[6:])))
        assert [e for e, _ in events] == ["tools", "answer", "done"]
        assert events[0][1]["selection"]["selected"] and events[1][1]["status"] == "answered"
        _script(fake_llm)
        out = openai.OpenAI(base_url=srv.url + "/v1", api_key="x", max_retries=0).chat.completions.create(
            model="rag", messages=[{"role": "user", "content": Q}])
        assert out.model_extra["rag"]["citations"][0]["document_id"] == "tool:list_redis_clusters"
        # "tools": false answers from the documents only: the model is never asked to call a tool.
        from tests.fakes import Reply

        fake_llm.script(Reply(json.dumps({"status": "insufficient_evidence", "answer": "", "citations": []})))
        before = len(fake_llm.requests)
        r = c.post("/v1/answer", json={"question": "연차 휴가는 며칠인가요?", "tools": False})
        assert r.status_code == 200 and r.json()["trace"]["tools"] is None
        assert all("tools" not in x["body"] for x in fake_llm.requests[before:])


def test_asking_for_tools_on_a_server_without_them_is_a_clear_error(tmp_path):
    with live(tmp_path) as (_, c):
        r = c.post("/v1/answer", json={"question": Q, "tools": True})
        assert r.status_code == 400 and r.json()["error"]["code"] == "invalid_input"
        assert "no tools" in r.json()["error"]["message"]


def test_the_signed_end_user_reaches_the_tools_and_the_approval(tmp_path, fake_llm):
    """A trusted backend signs the end user; the tool function and the write approval see that principal."""
    from rag.access import Principal
    from rag.serve.principals import sign
    from tests.fakes import Reply

    secret, key = "chatbot-secret-0123456789abcdef0123456789", "backend-key-0123456789abcdef"
    seen: list = []
    approvals: list = []

    def clusters(project: str, principal=None) -> dict:
        seen.append(principal)
        return {"clusters": [{"name": "prod-redis", "flavor_ref": "m5.large", "status": "active"}]}

    def flush(cluster: str, principal=None) -> dict:
        seen.append(principal)
        return {"cluster": cluster, "flushed_keys": 3}

    reg = registry().bind(list_redis_clusters=clusters, flush_redis_cache=flush).with_approval(
        lambda req: approvals.append(req.principal) or req.principal.user == "lee")
    gen = {"backend": "openai", "model": "fake-model", "base_url": fake_llm.base_url, "max_retries": 0,
           "max_attempts": 1}
    env = {"RAG_API_KEYS": f"chatbot:{key}", "RAG_CHATBOT_SECRET": secret}
    serve = {"keys": {"chatbot": {"trusted_backend": True, "secret_env": "RAG_CHATBOT_SECRET"}}}
    abstain = Reply(json.dumps({"status": "insufficient_evidence", "answer": "", "citations": []}))
    with live(tmp_path, keys=env, tools=reg, tools_section={"allow_write": True}, generation=gen,
              serve=serve) as (_, c):
        for user in ("lee", "park"):
            fake_llm.script(tool_calls(("list_redis_clusters", {"project": "p1"}),
                                       ("flush_redis_cache", {"cluster": "prod-redis"})), Reply("done"), abstain)
            body = json.dumps({"question": "Redis 캐시를 비우고 클러스터 상태 알려줘"}).encode()
            headers = {"Authorization": f"Bearer {key}", "Content-Type": "application/json",
                       **sign(secret.encode(), body, {"user": user, "groups": ["ops"]})}
            r = c.post("/v1/answer", content=body, headers=headers)
            assert r.status_code == 200, r.text
            statuses = [x["status"] for x in r.json()["trace"]["tools"]["calls"]]
            assert statuses == (["ok", "ok"] if user == "lee" else ["ok", "not_approved"])
    lee, park = Principal(user="lee", groups=("ops",)), Principal(user="park", groups=("ops",))
    assert seen == [lee, lee, park] and approvals == [lee, park]
