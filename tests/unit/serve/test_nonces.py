"""The nonce of a signed request (X-Rag-Nonce): signed, remembered for the request's window in a bounded
store, so a request sent again unchanged is refused (401 ``replayed``), in one process and across
the workers of one server."""
from __future__ import annotations

import time

import pytest

from rag.config import ServeConfig
from rag.serve.auth import KeyHolder
from rag.serve.errors import ServiceError
from rag.serve.nonces import MemoryNonces, SqliteNonces, nonce_store
from rag.serve.principals import NONCE_HEADER, request_reader, sign, signature

SECRET = b"s" * 32
BACKEND = KeyHolder("chatbot", "query", trusted=True, secret=SECRET)
WHO = {"user": "lee", "groups": ["hr"]}


@pytest.fixture(params=["memory", "sqlite"])
def store(request, tmp_path):
    def make(capacity: int):
        return MemoryNonces(capacity) if request.param == "memory" else SqliteNonces(str(tmp_path / "n.db"), capacity)
    return make


def test_a_nonce_is_new_once_then_replayed_until_its_window_closes(store):
    s = store(10)
    assert s.claim("k", "n1", expires=100.0, now=50.0) == "new"
    assert s.claim("k", "n1", expires=100.0, now=60.0) == "replayed"
    assert s.claim("other-key", "n1", expires=100.0, now=60.0) == "new"  # nonces are per key
    assert s.claim("k", "n1", expires=100.0, now=100.0) == "replayed"  # still inside the window at its end
    assert s.claim("k", "n2", expires=200.0, now=100.5) == "new"  # and expired after it: purged
    assert len(s) == 1


def test_the_store_is_bounded_and_never_lets_a_replay_through(store):
    s = store(3)
    for i in range(3):
        assert s.claim("k", f"n{i}", expires=100.0 + i, now=0.0) == "new"
    assert s.claim("k", "n3", expires=103.0, now=0.0) == "new"  # full: n0 (expires 100) is forgotten
    assert len(s) == 3
    # n0 could now be accepted again; instead everything signed as early as it is refused
    assert s.claim("k", "n0", expires=100.0, now=1.0) == "forgotten"
    assert s.claim("k", "fresh", expires=100.0, now=1.0) == "forgotten"
    assert s.claim("k", "n3", expires=103.0, now=1.0) == "replayed"
    assert s.claim("k", "n9", expires=104.0, now=1.0) == "new"  # a request signed later is fine
    assert len(s) == 3


def test_workers_share_one_sqlite_store(tmp_path):
    path = str(tmp_path / "nonces.sqlite3")
    one, two = nonce_store(100, path), nonce_store(100, path)  # two worker processes, as rag serve --workers 2
    assert isinstance(one, SqliteNonces) and isinstance(nonce_store(100), MemoryNonces)
    assert one.claim("k", "abc", 100.0, 0.0) == "new"
    assert two.claim("k", "abc", 100.0, 1.0) == "replayed"


def _headers(body: bytes, **kw) -> dict[str, str]:
    return {k.lower(): v for k, v in sign(SECRET, body, WHO, **kw).items()}


def test_resolve_refuses_a_replay_with_a_typed_error():
    nonces = MemoryNonces(100)
    h = _headers(b"{}")
    assert request_reader(BACKEND, h, b"{}", ServeConfig(), nonces=nonces).user == "lee"
    with pytest.raises(ServiceError) as e:
        request_reader(BACKEND, h, b"{}", ServeConfig(), nonces=nonces)
    assert (e.value.code, e.value.status) == ("replayed", 401)
    assert e.value.body("r1")["error"]["code"] == "replayed"
    assert request_reader(BACKEND, _headers(b"{}"), b"{}", ServeConfig(), nonces=nonces).user == "lee"


def test_a_request_signed_without_a_nonce(monkeypatch):
    ts = str(int(time.time()))
    h = _headers(b"{}")
    del h[NONCE_HEADER.lower()]
    h["x-rag-timestamp"] = ts
    h["x-rag-signature"] = signature(SECRET, ts, h["x-rag-principal"], b"{}")  # the form before nonces
    with pytest.raises(ServiceError) as e:
        request_reader(BACKEND, h, b"{}", ServeConfig(), nonces=MemoryNonces(10))
    assert e.value.code == "unauthorized" and "X-Rag-Nonce" in e.value.message
    assert "principal_require_nonce" in e.value.message
    legacy = ServeConfig(principal_require_nonce=False)  # old clients, knowingly unprotected from replays
    assert request_reader(BACKEND, h, b"{}", legacy, nonces=MemoryNonces(10)).user == "lee"


def test_the_nonce_is_signed():
    h = _headers(b"{}")
    h[NONCE_HEADER.lower()] = "x" * 24
    with pytest.raises(ServiceError) as e:
        request_reader(BACKEND, h, b"{}", ServeConfig(), nonces=MemoryNonces(10))
    assert e.value.code == "unauthorized"


def test_a_stale_request_is_refused_before_its_nonce_is_kept():
    nonces = MemoryNonces(10)
    with pytest.raises(ServiceError) as e:
        request_reader(BACKEND, _headers(b"{}", now=time.time() - 1000), b"{}", ServeConfig(), nonces=nonces)
    assert e.value.code == "unauthorized" and len(nonces) == 0


def test_a_replay_to_another_worker_is_refused(tmp_path):
    """``rag serve --workers 2``: the same signed request, sent on fresh connections (whichever
    worker takes each), is answered once."""
    import json
    import os
    import signal

    import httpx

    from rag.config import load_config
    from rag.pipeline import Pipeline
    from tests.conftest import write_config
    from tests.unit.serve.test_cli_serve import _start

    secret, key = "chatbot-secret-0123456789abcdef0123456789", "backend-key-0123456789abcdef"
    cfg_path = write_config(tmp_path, serve={"keys": {"chatbot": {"trusted_backend": True,
                                                                  "secret_env": "RAG_CHATBOT_SECRET"}}})
    Pipeline(load_config(cfg_path)).build_index()
    env = {"RAG_API_KEYS": f"chatbot:{key}", "RAG_ADMIN_KEYS": "", "RAG_CHATBOT_SECRET": secret}
    proc, url = _start(cfg_path, "--workers", "2", env=env)
    try:
        body = json.dumps({"query": "연차 휴가"}).encode()
        headers = {"Authorization": f"Bearer {key}", "Content-Type": "application/json",
                   **sign(secret.encode(), body, WHO)}
        codes = [httpx.post(url + "/v1/search", content=body, headers=headers, timeout=30).status_code
                 for _ in range(8)]
        assert sorted(codes) == [200] + [401] * 7, codes
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=30)
    assert os.environ.get("RAG_SERVE_NONCES") is None  # set only in the server's own process
