"""`rag serve` on the Milvus backend (milvus-lite in a file): answers, document updates through
the engine, and whole versions for queries running while documents change."""
from __future__ import annotations

import threading

import httpx
import pytest

from tests.unit.serve.conftest import live

pytest.importorskip("milvus_lite", reason="milvus-lite is not installed (pip install 'rag[milvus]')")


def test_the_service_answers_and_updates_on_milvus(tmp_path):
    index = {"backend": "milvus", "milvus": {"uri": str(tmp_path / "rag.db"), "purge_delay_s": 0.2}}
    with live(tmp_path, index=index) as (srv, c):
        ready = c.get("/readyz").json()
        assert ready["index_version"].startswith("gen-") and ready["documents"] == 35
        a = c.post("/v1/answer", json={"question": "How often must passwords be changed?"}).json()
        assert a["status"] == "answered" and a["citations"]
        errors: list[str] = []
        stop = threading.Event()

        def reader() -> None:
            with httpx.Client(base_url=srv.url, timeout=60) as rc:
                while not stop.is_set():
                    r = rc.post("/v1/search", json={"query": "zzpairword", "top": 10})
                    if r.status_code != 200:
                        errors.append(f"HTTP {r.status_code}: {r.text}")
                        continue
                    found = {(x["document_id"], x["version"]) for x in r.json()["candidates"]
                             if x["document_id"].startswith("pair")}
                    for doc, version in found:
                        twin = doc[:-1] + ("b" if doc.endswith("a") else "a")
                        if (twin, version) not in found:
                            errors.append(f"half a version: {sorted(found)} at {r.json()['index_version']}")

        threads = [threading.Thread(target=reader) for _ in range(4)]
        for t in threads:
            t.start()
        try:
            for i in range(4):
                docs = [{"id": f"pair{i}-{s}", "text": f"zzpairword 문서 {i} {s}"} for s in "ab"]
                assert c.post("/v1/documents", json={"documents": docs}).status_code == 200
                v2 = [{**d, "version": "2"} for d in docs]
                r = c.post("/v1/documents?mode=replace", json={"documents": v2})
                assert r.status_code == 200 and len(r.json()["removed"]) == 2, r.text
        finally:
            stop.set()
            for t in threads:
                t.join()
        assert errors == []
        listed = {(d["id"], d["version"]) for d in c.get("/v1/documents").json()["documents"]}
        assert {(f"pair{i}-{s}", "2") for i in range(4) for s in "ab"} <= listed
        gone = c.delete("/v1/documents/pair0-a")
        assert gone.status_code == 200 and gone.json()["removed"] == ["pair0-a:2"]
        assert gone.json()["index_version"].startswith("gen-")
        assert c.delete("/v1/documents/pair0-a").status_code == 404
