"""What is indexed, as a principal may see it: ``Pipeline.documents``, ``rag documents`` and
``GET /v1/documents``. A document the caller may not read is in no listing or count, and a newer
version it may not read does not make its own version ``superseded``."""
from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest

from rag.access import Principal
from rag.cli.main import main
from rag.config import load_config
from rag.errors import PrincipalRequiredError
from rag.pipeline import ListedDocument, Pipeline
from rag.types import Document
from tests.conftest import write_config
from tests.unit.access.test_enforcement import corpus

HR = Principal("lee", ("hr",), "acme")
KIM = Principal("kim")
# v1 is public; v2 (newer) only for hr: an anonymous reader must see v1 as current, and never v2
POLICY = [Document("policy", "출장 규정 1판 canarypolicy1", version="1", title="출장 규정"),
          Document("policy", "출장 규정 2판 비밀 canarypolicy2", version="2", title="출장 규정 개정",
                   metadata={"access": {"groups": ["hr"]}})]
SECRETS = ("hr-only", "kim-only", "acme-all", "canary", "인사 비밀", "김 평가", "사내 공지", "출장 규정 개정")


def _jsonl(tmp_path: Path) -> Path:
    src = tmp_path / "docs.jsonl"
    src.write_text("".join(json.dumps({"id": d.id, "text": d.text, "version": d.version, "title": d.title,
                                       "uri": d.uri, "metadata": dict(d.metadata)}, ensure_ascii=False) + "\n"
                           for d in corpus() + POLICY), encoding="utf-8")
    return src


@pytest.fixture(scope="module")
def indexed(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("listing")
    cfg = write_config(tmp, corpus={"paths": [str(_jsonl(tmp))], "format": "jsonl"})
    p = Pipeline(load_config(cfg))
    p.build_index()
    return p, cfg


def _seen(docs) -> dict:
    return {(d.id, d.version): (d.status, d.current_version) for d in docs}


def test_each_principal_lists_only_what_it_may_read(indexed):
    p, _ = indexed
    anon = p.documents()
    assert _seen(anon) == {("policy", "1"): ("current", "1"), ("pub", "1"): ("current", "1"),
                           ("pub2", "1"): ("current", "1")}
    assert [(d.id, d.version) for d in anon] == sorted((d.id, d.version) for d in anon)  # deterministic
    hr = _seen(p.documents(principal=HR))
    assert set(hr) == {("acme-all", "1"), ("hr-only", "1"), ("policy", "1"), ("policy", "2"), ("pub", "1"),
                       ("pub2", "1")}
    assert hr[("policy", "1")] == ("superseded", "2") and hr[("policy", "2")] == ("current", "2")
    kim = _seen(p.documents(principal=KIM))
    assert set(kim) == {("kim-only", "1"), ("policy", "1"), ("pub", "1"), ("pub2", "1")}
    assert kim[("policy", "1")] == ("current", "1")  # hr's newer version changes nothing for kim
    rec = p.documents(principal=HR)[0]
    assert isinstance(rec, ListedDocument) and rec.chunks >= 1
    with pytest.raises(dataclasses.FrozenInstanceError):
        rec.status = "current"  # type: ignore[misc]


def test_require_principal_applies_to_listing(indexed):
    p, _ = indexed
    strict = Pipeline(p.config.with_overrides({"security.require_principal": True}), embedder=p.components.embedder,
                      index=p.index)
    with pytest.raises(PrincipalRequiredError):
        strict.documents()
    assert strict.documents(principal=KIM)


def test_rag_documents(indexed, capsys):
    _, cfg = indexed
    assert main(["documents", "--config", str(cfg)]) == 0
    out = capsys.readouterr().out
    assert "pub  v1  current" in out and "3 documents, 3 versions readable by anonymous" in out
    assert not any(s in out for s in SECRETS)
    assert main(["documents", "--config", str(cfg), "--as", "lee", "--group", "hr", "--tenant", "acme"]) == 0
    out = capsys.readouterr().out
    assert "policy  v1  superseded by 2" in out and "5 documents, 6 versions" in out
    assert main(["documents", "--config", str(cfg), "--as", "kim", "--json", "--current"]) == 0
    got = json.loads(capsys.readouterr().out)
    assert {d["id"] for d in got["documents"]} == {"kim-only", "policy", "pub", "pub2"}
    assert got["principal"]["user"] == "kim" and all(d["status"] == "current" for d in got["documents"])
    assert "canarypolicy2" not in json.dumps(got, ensure_ascii=False) and "hr-only" not in json.dumps(got)


def test_the_service_lists_the_same(tmp_path):
    pytest.importorskip("fastapi")
    from rag.serve.principals import sign
    from tests.unit.serve.conftest import live

    secret = "chatbot-secret-0123456789abcdef0123456789"
    key = "backend-key-0123456789abcdef"
    env = {"RAG_API_KEYS": f"chatbot:{key}", "RAG_CHATBOT_SECRET": secret}
    serve = {"keys": {"chatbot": {"trusted_backend": True, "secret_env": "RAG_CHATBOT_SECRET"}}}
    with live(tmp_path / "srv", keys=env, corpus={"paths": [str(_jsonl(tmp_path))], "format": "jsonl"},
              serve=serve) as (srv, c):
        def listed(who: dict | None) -> list[dict]:
            headers = {"Authorization": f"Bearer {key}"} | (sign(secret.encode(), b"", who) if who else {})
            r = c.get("/v1/documents", headers=headers)
            assert r.status_code == 200, r.text
            if who is None:
                assert not any(s in r.text for s in SECRETS), r.text
            return r.json()["documents"]

        anon = listed(None)
        assert [d for d in anon if d["id"] == "policy"] == [
            {"id": "policy", "version": "1", "title": "출장 규정", "uri": "docs.jsonl#policy", "chunks": 1, "status": "current",
             "current_version": "1", "file": ""}]
        hr = listed({"user": "lee", "groups": ["hr"], "tenant": "acme"})
        assert hr == [d.to_json() for d in srv.service.pipeline.documents(principal=HR)]
        assert {(d["id"], d["status"]) for d in hr if d["id"] == "policy"} == {("policy", "superseded"),
                                                                              ("policy", "current")}
