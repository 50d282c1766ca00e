"""POST /v1/chat/completions with the unchanged openai SDK (non-streaming and streaming)."""
from __future__ import annotations

import openai

Q = "연차 휴가는 며칠인가요?"


def _client(srv) -> openai.OpenAI:
    return openai.OpenAI(base_url=srv.url + "/v1", api_key="unused-when-auth-is-off", max_retries=0)


def test_completion_carries_the_answer_markers_and_citations(served):
    srv, c = served
    plain = c.post("/v1/answer", json={"question": Q}).json()
    out = _client(srv).chat.completions.create(model="rag", messages=[
        {"role": "system", "content": "ignored: the server's rules apply"},
        {"role": "user", "content": Q}])
    msg = out.choices[0].message
    assert msg.role == "assistant" and out.choices[0].finish_reason == "stop"
    assert msg.content == plain["answer"] and "[S" in msg.content
    rag = out.model_extra["rag"]
    assert rag["status"] == "answered" and rag["abstained"] is False
    assert rag["citations"] == plain["citations"]
    assert {f"[{x['source_id']}]" for x in rag["citations"]} <= {m for m in msg.content.split() if m.startswith("[S")}


def test_history_comes_from_earlier_messages(served):
    srv, _ = served
    out = _client(srv).chat.completions.create(model="rag", messages=[
        {"role": "user", "content": "휴가 규정을 알려줘"},
        {"role": "assistant", "content": "어떤 휴가요?"},
        {"role": "user", "content": [{"type": "text", "text": Q}]}])
    assert out.model_extra["rag"]["status"] == "answered"


def test_abstention_is_a_normal_message_with_a_reason(served):
    srv, _ = served
    out = _client(srv).chat.completions.create(
        model="rag", messages=[{"role": "user", "content": Q}],
        extra_body={"rag": {"document_ids": ["no-such-document"]}})
    rag = out.model_extra["rag"]
    assert rag["status"] == "insufficient_evidence" and rag["abstained"] is True and rag["reason"]
    assert rag["citations"] == []
    assert out.choices[0].message.content == srv.cfg.generation.abstention_message("ko")


def test_streaming_gives_the_same_validated_answer(served):
    srv, _ = served
    whole = _client(srv).chat.completions.create(model="rag", messages=[{"role": "user", "content": Q}])
    chunks = list(_client(srv).chat.completions.create(model="rag", messages=[{"role": "user", "content": Q}],
                                                        stream=True))
    text = "".join(ch.choices[0].delta.content or "" for ch in chunks)
    assert text == whole.choices[0].message.content
    assert len(chunks) > 3  # role, pieces of the answer, the final chunk
    assert chunks[-1].choices[0].finish_reason == "stop"
    assert chunks[-1].model_extra["rag"]["citations"] == whole.model_extra["rag"]["citations"]


def test_a_conversation_must_end_with_a_user_message(served):
    _, c = served
    r = c.post("/v1/chat/completions", json={"model": "rag", "messages": [{"role": "assistant", "content": "hi"}]})
    assert r.status_code == 422 and r.json()["error"]["code"] == "invalid_request"


def test_the_client_example_runs_against_the_server(served):
    import subprocess
    import sys
    from pathlib import Path

    srv, _ = served
    root = Path(__file__).resolve().parents[3]
    out = subprocess.run([sys.executable, str(root / "examples" / "serve_client.py"), srv.url], capture_output=True,
                         text=True, timeout=120, cwd=root)
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith("answered ") and "event: retrieval" in out.stdout and "streamed:" in out.stdout
    assert "chat: answered" in out.stdout
