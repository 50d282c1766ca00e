"""A service request that names no principal (no keys, or a key without one in ``serve.keys``) is
anonymous: restricted documents are not listed, searched, cited or put in a context. Principals:
test_principals.py."""
from __future__ import annotations

import json

from tests.unit.access.test_enforcement import corpus
from tests.unit.serve.conftest import live

RESTRICTED = ("hr-only", "kim-only", "acme-all", "mem://hr", "mem://kim", "mem://acme", "canary", "인사 비밀")


def test_service_requests_read_public_documents_only(tmp_path):
    src = tmp_path / "docs.jsonl"
    src.write_text("".join(json.dumps({"id": d.id, "text": d.text, "title": d.title, "uri": d.uri,
                                       "metadata": dict(d.metadata)}, ensure_ascii=False) + "\n"
                           for d in corpus()), encoding="utf-8")
    with live(tmp_path / "srv", corpus={"paths": [str(src)], "format": "jsonl"}) as (_, c):
        listed = {d["id"] for d in c.get("/v1/documents").json()["documents"]}
        assert listed == {"pub", "pub2"}
        search = c.post("/v1/search", json={"query": "연차 휴가 급여 기준표", "top": 10})
        assert search.status_code == 200 and search.json()["candidates"]
        answer = c.post("/v1/answer", json={"question": "연차 휴가 급여 기준표는 무엇인가요?", "trace": True})
        context = c.post("/v1/context", json={"question": "연차 휴가 급여 기준표는 무엇인가요?"})
        for r in (search, answer, context):
            assert r.status_code == 200, r.text
            assert not any(s in r.text for s in RESTRICTED), r.text[:300]
