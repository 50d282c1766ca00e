"""Principals in the service (docs/security.md, "The service"): API keys that read as a fixed principal
or sign the end user per request; what a signed request sees; every refusal and its status."""
from __future__ import annotations

import json
import logging
import runpy
import time
from pathlib import Path

import pytest

from rag.access import Principal
from rag.config import ServeConfig
from rag.errors import ConfigError
from rag.serve import ApiKeys
from rag.serve.logs import JsonFormatter
from rag.serve.principals import log_tag, sign
from tests.unit.access.test_enforcement import corpus
from tests.unit.serve.conftest import ADMIN_KEY, QUERY_KEY, live

SECRET = "chatbot-secret-0123456789abcdef0123456789"
BACKEND_KEY = "backend-key-0123456789abcdef"
FIXED_KEY = "fixed-key-0123456789abcdef"
ENV = {"RAG_API_KEYS": f"anon:{QUERY_KEY},chatbot:{BACKEND_KEY},reports:{FIXED_KEY}",
       "RAG_ADMIN_KEYS": f"ops:{ADMIN_KEY}", "RAG_CHATBOT_SECRET": SECRET}
KEYS_CONFIG = {"keys": {"chatbot": {"trusted_backend": True, "secret_env": "RAG_CHATBOT_SECRET"},
                        "reports": {"principal": {"user": "kim"}}}}
HR = {"user": "lee", "groups": ["hr"], "tenant": "acme"}  # reads pub, pub2, hr-only, acme-all
Q = "연차 휴가 급여 기준표는 무엇인가요?"
# What must never leave for a caller who may not read the document.
FORBIDDEN = {"kim-only": ("kim-only", "mem://kim", "canarykim", "김 평가"),
             "hr-only": ("hr-only", "mem://hr", "canaryhr", "인사 비밀"),
             "acme-all": ("acme-all", "mem://acme", "canaryacme", "사내 공지")}


def _corpus(tmp_path: Path) -> dict:
    src = tmp_path / "docs.jsonl"
    src.write_text("".join(json.dumps({"id": d.id, "text": d.text, "title": d.title, "uri": d.uri,
                                       "metadata": dict(d.metadata)}, ensure_ascii=False) + "\n"
                           for d in corpus()), encoding="utf-8")
    return {"paths": [str(src)], "format": "jsonl"}


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("principals")
    with live(tmp / "srv", keys=ENV, corpus=_corpus(tmp), serve=KEYS_CONFIG) as pair:
        yield pair


def bearer(key: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {key}"}


def post(c, path: str, payload: dict, key: str = BACKEND_KEY, principal: dict | None = HR, now: float | None = None,
         secret: str = SECRET, sent: bytes | None = None):
    """POST ``payload`` signed for ``principal`` (None: no principal headers); ``sent``: other bytes on the wire."""
    body = json.dumps(payload, ensure_ascii=False).encode()
    headers = {**bearer(key), "Content-Type": "application/json"}
    if principal is not None:
        headers |= sign(secret.encode(), body, principal, now)
    return c.post(path, content=body if sent is None else sent, headers=headers)


def listed(c, key: str, principal: dict | None = None) -> set[str]:
    headers = bearer(key) | (sign(SECRET.encode(), b"", principal) if principal else {})
    r = c.get("/v1/documents", headers=headers)
    assert r.status_code == 200, r.text
    return {d["id"] for d in r.json()["documents"]}


def assert_clean(text: str, *forbidden: str) -> None:
    for doc in forbidden:
        for s in FORBIDDEN[doc]:
            assert s not in text, f"{s!r} of {doc} leaked: {text[:300]}"


def test_a_signed_request_reads_as_its_end_user(server):
    _, c = server
    search = post(c, "/v1/search", {"query": "연차 휴가 급여 기준표 사내 공지", "top": 10})
    assert search.status_code == 200, search.text
    assert {x["chunk"]["document_id"] if "chunk" in x else x["document_id"] for x in search.json()["candidates"]} \
        >= {"hr-only", "acme-all"}
    answer = post(c, "/v1/answer", {"question": Q, "trace": True})
    assert answer.status_code == 200 and "hr-only" in answer.text
    stream = post(c, "/v1/answer", {"question": Q, "stream": True})
    assert stream.status_code == 200 and "event: answer" in stream.text and "hr-only" in stream.text
    context = post(c, "/v1/context", {"question": Q, "show_prompt": True})
    assert context.status_code == 200 and "canaryhr" in context.text
    chat = post(c, "/v1/chat/completions", {"model": "rag", "messages": [{"role": "user", "content": Q}]})
    assert chat.status_code == 200 and chat.json()["rag"]["citations"]
    assert any(x["document_id"] == "hr-only" for x in chat.json()["rag"]["citations"])
    chat_stream = post(c, "/v1/chat/completions", {"model": "rag", "stream": True,
                                                   "messages": [{"role": "user", "content": Q}]})
    assert chat_stream.status_code == 200 and "[DONE]" in chat_stream.text
    for r in (search, answer, stream, context, chat, chat_stream):
        assert_clean(r.text, "kim-only")
    assert listed(c, BACKEND_KEY, HR) == {"pub", "pub2", "hr-only", "acme-all"}
    assert listed(c, BACKEND_KEY, {"user": "kim"}) == {"pub", "pub2", "kim-only"}


def test_keys_without_a_signed_principal(server):
    _, c = server
    assert listed(c, BACKEND_KEY) == {"pub", "pub2"}  # a trusted backend without the headers: anonymous
    assert listed(c, QUERY_KEY) == {"pub", "pub2"}  # a key with no principal: anonymous, as before
    assert listed(c, ADMIN_KEY) == {"pub", "pub2"}
    assert listed(c, FIXED_KEY) == {"pub", "pub2", "kim-only"}  # serve.keys.reports.principal: kim
    fixed = post(c, "/v1/answer", {"question": "연차 휴가 개인 평가", "trace": True}, key=FIXED_KEY, principal=None)
    assert fixed.status_code == 200 and "kim-only" in fixed.text
    assert_clean(fixed.text, "hr-only", "acme-all")
    anon = post(c, "/v1/answer", {"question": Q, "trace": True}, key=QUERY_KEY, principal=None)
    assert anon.status_code == 200
    assert_clean(anon.text, "hr-only", "acme-all", "kim-only")


def test_the_openai_sdk_with_a_fixed_principal_key(server):
    import openai

    srv, _ = server
    for key, allowed in ((FIXED_KEY, "kim-only"), (QUERY_KEY, None)):
        out = openai.OpenAI(base_url=srv.url + "/v1", api_key=key, max_retries=0).chat.completions.create(
            model="rag", messages=[{"role": "user", "content": "연차 휴가 개인 평가는?"}])
        text = out.model_dump_json()
        cited = {x["document_id"] for x in out.model_extra["rag"]["citations"]}
        assert (allowed in cited) if allowed else not cited & set(FORBIDDEN), cited
        assert_clean(text, "hr-only", "acme-all", *(() if allowed else ("kim-only",)))


@pytest.mark.parametrize("case", ["bad_signature", "wrong_secret", "stale", "future", "tampered_body",
                                  "missing_signature", "malformed_principal", "unknown_key_in_principal",
                                  "missing_nonce", "tampered_nonce", "malformed_nonce"])
def test_refused_signed_principals(server, case):
    _, c = server
    payload = {"question": Q}
    body = json.dumps(payload, ensure_ascii=False).encode()
    headers = {**bearer(BACKEND_KEY), "Content-Type": "application/json"} | sign(SECRET.encode(), body, HR)
    sent = body
    if case == "bad_signature":
        headers["X-Rag-Signature"] = ("0" if headers["X-Rag-Signature"][0] != "0" else "1") + headers["X-Rag-Signature"][1:]
    elif case == "wrong_secret":
        headers |= sign(b"another-secret-0123456789abcdef0123", body, HR)
    elif case == "stale":
        headers |= sign(SECRET.encode(), body, HR, now=time.time() - 301)
    elif case == "future":
        headers |= sign(SECRET.encode(), body, HR, now=time.time() + 120)
    elif case == "tampered_body":
        sent = json.dumps({"question": "연차 휴가 개인 평가"}, ensure_ascii=False).encode()
    elif case == "missing_signature":
        del headers["X-Rag-Signature"]
    elif case == "malformed_principal":  # signed correctly, but not base64url JSON
        ts = str(int(time.time()))
        from rag.serve.principals import signature

        nonce = "n" * 24
        headers |= {"X-Rag-Principal": "not-json!", "X-Rag-Timestamp": ts, "X-Rag-Nonce": nonce,
                    "X-Rag-Signature": signature(SECRET.encode(), ts, "not-json!", body, nonce)}
    elif case == "unknown_key_in_principal":
        headers |= sign(SECRET.encode(), body, {**HR, "role": "admin"})
    elif case == "missing_nonce":  # signed as before nonces: refused unless serve.principal_require_nonce is off
        from rag.serve.principals import signature

        del headers["X-Rag-Nonce"]
        ts, who = headers["X-Rag-Timestamp"], headers["X-Rag-Principal"]
        headers["X-Rag-Signature"] = signature(SECRET.encode(), ts, who, body)
    elif case == "tampered_nonce":
        headers["X-Rag-Nonce"] = "another-nonce-0123456789"
    elif case == "malformed_nonce":
        headers["X-Rag-Nonce"] = "short"
    r = c.post("/v1/answer", content=sent, headers=headers)
    assert r.status_code == 401, r.text
    assert r.json()["error"]["code"] == "unauthorized"
    assert SECRET not in r.text and "canary" not in r.text


def test_a_signed_request_sent_again_is_refused(server):
    _, c = server
    body = json.dumps({"question": Q, "trace": False}, ensure_ascii=False).encode()
    headers = {**bearer(BACKEND_KEY), "Content-Type": "application/json"} | sign(SECRET.encode(), body, HR)
    assert c.post("/v1/answer", content=body, headers=headers).status_code == 200
    again = c.post("/v1/answer", content=body, headers=headers)
    assert again.status_code == 401, again.text
    err = again.json()["error"]
    assert err["code"] == "replayed" and "X-Rag-Nonce" in err["message"] and "sign every request anew" in err["message"]
    assert_clean(again.text, "hr-only", "acme-all", "kim-only")
    get = bearer(BACKEND_KEY) | sign(SECRET.encode(), b"", HR)  # a GET too
    assert c.get("/v1/documents", headers=get).status_code == 200
    assert c.get("/v1/documents", headers=get).json()["error"]["code"] == "replayed"
    # the same body and user signed anew (a new nonce) is a new request
    assert c.post("/v1/answer", content=body, headers=headers | sign(SECRET.encode(), body, HR)).status_code == 200
    assert 'rag_rejected_total{code="replayed"}' in c.get("/metrics").text


def test_principal_headers_from_a_key_that_may_not_send_them(server):
    _, c = server
    for key in (QUERY_KEY, FIXED_KEY, ADMIN_KEY):
        r = post(c, "/v1/search", {"query": "연차 휴가"}, key=key, principal=HR)
        assert r.status_code == 403 and r.json()["error"]["code"] == "forbidden", r.text
        assert_clean(r.text, "hr-only", "acme-all", "kim-only")
    r = c.get("/v1/documents", headers=bearer(FIXED_KEY) | sign(SECRET.encode(), b"", HR))
    assert r.status_code == 403
    r = c.delete("/v1/documents/pub", headers=bearer(ADMIN_KEY) | sign(SECRET.encode(), b"", HR))
    assert r.status_code == 403 and listed(c, QUERY_KEY) == {"pub", "pub2"}  # refused, nothing deleted


def test_the_access_log_names_no_groups_or_user(server, caplog):
    _, c = server
    fmt = JsonFormatter()
    with caplog.at_level(logging.INFO):
        assert post(c, "/v1/answer", {"question": Q}, principal={"user": "lee-secret-id", "groups": ["grp-x"],
                                                                 "tenant": "acme"}).status_code == 200
        assert post(c, "/v1/answer", {"question": Q}, principal={"user": "lee-secret-id"},
                    secret="another-secret-0123456789abcdef0123").status_code == 401
    lines = [fmt.format(r) for r in caplog.records if r.levelno >= logging.INFO]
    access = [json.loads(line) for line in lines if '"message": "request"' in line]
    assert access and access[0]["key"] == "chatbot"
    assert access[0]["principal"] == log_tag(Principal("lee-secret-id"))
    for line in lines:
        assert "lee-secret-id" not in line and "grp-x" not in line and "canary" not in line, line
        assert SECRET not in line


def test_the_example_backend_signs_what_the_server_checks(server):
    srv, _ = server
    example = runpy.run_path(str(Path(__file__).resolve().parents[3] / "examples" / "signed_backend.py"))
    reply = example["call"](srv.url, BACKEND_KEY, SECRET, "/v1/answer", {"question": Q, "trace": True},
                            "lee", ["hr"], "acme")
    assert reply["status"] == "answered" and any(x["document_id"] == "hr-only" for x in reply["citations"])
    assert "canarykim" not in json.dumps(reply, ensure_ascii=False)
    docs = example["call"](srv.url, BACKEND_KEY, SECRET, "/v1/documents", None, "kim", [], None)
    assert {d["id"] for d in docs["documents"]} == {"pub", "pub2", "kim-only"}


def test_require_principal(tmp_path):
    with live(tmp_path / "srv", keys=ENV, corpus=_corpus(tmp_path), serve=KEYS_CONFIG,
              security={"require_principal": True}) as (_, c):
        for key in (BACKEND_KEY, QUERY_KEY):  # a trusted backend without the headers; a key with no principal
            r = post(c, "/v1/answer", {"question": Q}, key=key, principal=None)
            assert r.status_code == 401 and r.json()["error"]["code"] == "principal_required", r.text
            assert c.get("/v1/documents", headers=bearer(key)).status_code == 401
        signed = post(c, "/v1/answer", {"question": Q, "trace": True})
        assert signed.status_code == 200 and "hr-only" in signed.text
        assert post(c, "/v1/search", {"query": "연차"}, key=FIXED_KEY, principal=None).status_code == 200
        assert post(c, "/v1/answer", {"question": Q}, principal={"user": None, "groups": []}).status_code == 401
        assert listed(c, FIXED_KEY) == {"pub", "pub2", "kim-only"}
        assert 'rag_rejected_total{code="principal_required"}' in c.get("/metrics").text
        # document changes are an admin's, not a reader's: they are not refused for want of a principal
        assert c.post("/v1/documents", json={"documents": [{"id": "n", "text": "사내 카페"}]},
                      headers=bearer(ADMIN_KEY)).status_code == 200


def test_key_configuration_errors():
    env = {"RAG_API_KEYS": f"chatbot:{BACKEND_KEY}"}
    with pytest.raises(ConfigError, match="no key of that name"):
        ApiKeys.from_env(env, ServeConfig(keys={"other": {"principal": {"user": "kim"}}}))
    with pytest.raises(ConfigError, match="RAG_CHATBOT_SECRET"):
        ApiKeys.from_env(env, ServeConfig(keys={"chatbot": {"trusted_backend": True, "secret_env": "RAG_CHATBOT_SECRET"}}))
    with pytest.raises(ConfigError, match="at least 32"):
        ApiKeys.from_env(env | {"S": "short"}, ServeConfig(keys={"chatbot": {"trusted_backend": True, "secret_env": "S"}}))
    for bad in ({"trusted_backend": True}, {"principal": {"user": "kim"}, "trusted_backend": True, "secret_env": "S"},
                {}, {"principal": {"user": "kim"}, "secret_env": "S"}, {"principal": {"groups": "hr"}}):
        with pytest.raises(ConfigError):
            ServeConfig(keys={"chatbot": bad})
    keys = ApiKeys.from_env(env | {"S": SECRET}, ServeConfig(keys={"chatbot": {"trusted_backend": True, "secret_env": "S"}}))
    assert keys.keys[0][1].trusted and SECRET not in repr(keys)
    assert ApiKeys.from_env(env, ServeConfig()).keys[0][1].reader is None  # unlisted: anonymous, as before


@pytest.mark.parametrize("field, value", [("X-Rag-Timestamp", "١٧٠٠٠٠٠٠٠٠"), ("X-Rag-Principal", "é" * 10)])
def test_non_ascii_headers_are_refused_not_a_server_error(field, value):
    from rag.config import ServeConfig
    from rag.serve.auth import KeyHolder
    from rag.serve.errors import ServiceError
    from rag.serve.principals import request_reader, sign

    secret = b"s" * 32
    headers = {k.lower(): v for k, v in sign(secret, b"{}", {"user": "u"}).items()}
    headers[field.lower()] = value
    with pytest.raises(ServiceError) as e:
        request_reader(KeyHolder("chatbot", "query", trusted=True, secret=secret), headers, b"{}", ServeConfig())
    assert e.value.code == "unauthorized"
