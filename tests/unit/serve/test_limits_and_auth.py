"""API keys and roles, request limits, the request timeout and the bounded queue (429)."""
from __future__ import annotations

import json
import threading
import time

import httpx
import openai
import pytest

from rag.errors import ConfigError
from rag.serve import ApiKeys
from tests.fakes import Reply
from tests.unit.serve.conftest import ADMIN_KEY, QUERY_KEY, live

Q = "연차 휴가는 며칠인가요?"
KEYS = {"RAG_API_KEYS": f"chatbot:{QUERY_KEY}", "RAG_ADMIN_KEYS": f"ops:{ADMIN_KEY}"}
DOC = {"documents": [{"id": "note", "text": "사내 카페는 오전 8시에 엽니다."}]}


def test_keys_and_roles(tmp_path):
    with live(tmp_path, keys=KEYS) as (srv, c):
        def auth(key):
            return {"Authorization": f"Bearer {key}"}

        no_key = c.post("/v1/answer", json={"question": Q})
        assert no_key.status_code == 401 and no_key.json()["error"]["code"] == "unauthorized"
        assert no_key.headers["www-authenticate"] == "Bearer"
        assert c.post("/v1/answer", json={"question": Q}, headers=auth("wrong-key-0123456789")).status_code == 401
        assert c.post("/v1/answer", json={"question": Q}, headers={"Authorization": QUERY_KEY}).status_code == 401
        assert c.post("/v1/answer", json={"question": Q}, headers=auth(QUERY_KEY)).status_code == 200
        assert c.post("/v1/answer", json={"question": Q}, headers=auth(ADMIN_KEY)).status_code == 200
        forbidden = c.post("/v1/documents", json=DOC, headers=auth(QUERY_KEY))
        assert forbidden.status_code == 403 and forbidden.json()["error"]["code"] == "forbidden"
        assert c.delete("/v1/documents/note", headers=auth(QUERY_KEY)).status_code == 403
        assert c.get("/v1/documents", headers=auth(QUERY_KEY)).status_code == 200  # listing is a query
        assert c.post("/v1/documents", json=DOC, headers=auth(ADMIN_KEY)).status_code == 200
        assert c.get("/healthz").status_code == 200 and c.get("/readyz").status_code == 200  # probes stay open
        # The openai SDK against the facade: a wrong key is its AuthenticationError.
        with pytest.raises(openai.AuthenticationError):
            openai.OpenAI(base_url=srv.url + "/v1", api_key="wrong-key-0123456789", max_retries=0).chat.completions.create(
                model="rag", messages=[{"role": "user", "content": Q}])
        ok = openai.OpenAI(base_url=srv.url + "/v1", api_key=QUERY_KEY, max_retries=0).chat.completions.create(
            model="rag", messages=[{"role": "user", "content": Q}])
        assert ok.model_extra["rag"]["status"] == "answered"


def test_malformed_key_lists_are_config_errors():
    with pytest.raises(ConfigError, match="name:key"):
        ApiKeys.from_env({"RAG_API_KEYS": "justakey0123456789abc"})
    with pytest.raises(ConfigError, match="shorter than 16"):
        ApiKeys.from_env({"RAG_API_KEYS": "bot:short"})
    with pytest.raises(ConfigError, match="twice"):
        ApiKeys.from_env({"RAG_API_KEYS": f"a:{QUERY_KEY}", "RAG_ADMIN_KEYS": f"b:{QUERY_KEY}"})
    assert not ApiKeys.from_env({}).enabled


def test_size_limits(tmp_path):
    with live(tmp_path, serve={"max_request_bytes": 2000, "max_question_chars": 40, "max_history_turns": 2,
                               "max_documents_bytes": 3000}) as (_, c):
        big = c.post("/v1/answer", content=json.dumps({"question": Q, "pad": "x" * 3000}).encode())
        assert big.status_code == 413 and big.json()["error"]["code"] == "payload_too_large"

        def chunked():  # no Content-Length: counted while reading
            yield b'{"question": "'
            for _ in range(10):
                yield b"y" * 500
            yield b'"}'

        streamed = c.post("/v1/answer", content=chunked())
        assert streamed.status_code == 413 and streamed.json()["error"]["code"] == "payload_too_large"
        long_q = c.post("/v1/answer", json={"question": "휴가 " * 30})
        assert long_q.status_code == 413 and long_q.json()["error"]["code"] == "question_too_long"
        turns = [{"role": "user", "content": "a"}, {"role": "assistant", "content": "b"}] * 2
        assert c.post("/v1/answer", json={"question": Q, "history": turns}).status_code == 413
        docs = {"documents": [{"id": "big", "text": "가" * 2000}]}
        assert c.post("/v1/documents", json=docs).status_code == 413
        assert c.post("/v1/answer", json={"question": Q}).status_code == 200


def _llm_sections(fake_llm, **serve):
    return {"generation": {"backend": "openai", "model": "fake-model", "base_url": fake_llm.base_url,
                           "timeout_s": 20.0, "max_retries": 0, "max_attempts": 1},
            "serve": serve}


def test_timeout_is_a_504_with_code_timeout(tmp_path, fake_llm):
    fake_llm.script(Reply("{}", delay_s=4.0), Reply("{}", delay_s=4.0))
    with live(tmp_path, **_llm_sections(fake_llm, request_timeout_s=1.0)) as (_, c):
        t0 = time.monotonic()
        r = c.post("/v1/answer", json={"question": Q})
        assert r.status_code == 504 and r.json()["error"]["code"] == "timeout"
        assert time.monotonic() - t0 < 3.5
        events = c.post("/v1/answer", json={"question": Q, "stream": True}).text
        assert "event: error" in events and '"code": "timeout"' in events and "event: answer" not in events


def test_a_full_queue_answers_429_with_retry_after(tmp_path, fake_llm):
    fake_llm.script(*[Reply("{}", delay_s=2.0) for _ in range(3)])
    with live(tmp_path, **_llm_sections(fake_llm, max_concurrency=1, max_queue=1, retry_after_s=3)) as (srv, c):
        results: list[int] = []

        def slow() -> None:
            with httpx.Client(base_url=srv.url, timeout=30) as cc:
                results.append(cc.post("/v1/answer", json={"question": Q}).status_code)

        first = threading.Thread(target=slow)
        first.start()
        time.sleep(0.5)  # the first holds the only slot (the LLM takes 2 s)
        second = threading.Thread(target=slow)
        second.start()
        time.sleep(0.3)  # the second waits in the queue (size 1)
        third = c.post("/v1/answer", json={"question": Q})
        assert third.status_code == 429 and third.headers["retry-after"] == "3"
        assert third.json()["error"]["code"] == "overloaded"
        first.join()
        second.join()
        assert results == [200, 200]  # the queued one was served, not dropped
        assert 'rag_rejected_total{code="overloaded"} 1.0' in c.get("/metrics").text


def test_cors_is_off_unless_origins_are_listed(served, tmp_path):
    _, c = served
    r = c.post("/v1/search", json={"query": Q}, headers={"Origin": "https://chat.example"})
    assert r.status_code == 200 and "access-control-allow-origin" not in r.headers
    with live(tmp_path, serve={"cors_origins": ["https://chat.example"]}) as (_, cc):
        pre = cc.options("/v1/answer", headers={"Origin": "https://chat.example",
                                                "Access-Control-Request-Method": "POST"})
        assert pre.headers["access-control-allow-origin"] == "https://chat.example"
        other = cc.post("/v1/search", json={"query": Q}, headers={"Origin": "https://evil.example"})
        assert "access-control-allow-origin" not in other.headers
