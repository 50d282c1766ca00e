"""POST /v1/documents and DELETE /v1/documents/{id}: applied while queries run, nothing lost."""
from __future__ import annotations

import json
import threading

from rag.config import load_config
from rag.pipeline import Pipeline

PARKING = {"id": "parking", "version": "1", "title": "주차 안내",
           "text": "사내 주차장은 오전 7시에 엽니다. 방문객 주차는 2시간까지 무료입니다."}


def _on_disk(cfg) -> set[tuple[str, str]]:
    return set(Pipeline(load_config(cfg.base_dir + "/config.yaml")).index.documents)


def test_add_replace_delete_round_trip(writable):
    srv, c = writable
    r = c.post("/v1/documents", json={"documents": [PARKING]})
    assert r.status_code == 200, r.text
    assert r.json()["added"] == ["parking:1"] and r.json()["index_version"] == "v-000002"
    assert ("parking", "1") in _on_disk(srv.cfg)  # saved, not only in memory
    hit = c.post("/v1/search", json={"query": "주차장 오전", "top": 3}).json()
    assert hit["candidates"][0]["document_id"] == "parking" and hit["index_version"] == "v-000002"
    # The same text again is unchanged; other text under the same version is a conflict.
    again = c.post("/v1/documents", json={"documents": [PARKING]}).json()
    assert again["unchanged"] == ["parking:1"] and again["index_version"] == "v-000002"
    clash = c.post("/v1/documents", json={"documents": [{**PARKING, "text": "다른 내용"}]})
    assert clash.status_code == 409 and clash.json()["error"]["code"] == "conflict"
    assert ("parking", "1") in _on_disk(srv.cfg)
    # JSONL with mode=replace: version 2 becomes the only version.
    line = json.dumps({**PARKING, "version": "2", "text": "사내 주차장은 오전 6시에 엽니다."}, ensure_ascii=False)
    rep = c.post("/v1/documents?mode=replace", content=line.encode(), headers={"Content-Type": "application/x-ndjson"})
    assert rep.status_code == 200 and rep.json()["removed"] == ["parking:1"] and rep.json()["added"] == ["parking:2"]
    listed = {(d["id"], d["version"]) for d in c.get("/v1/documents").json()["documents"]}
    assert ("parking", "2") in listed and ("parking", "1") not in listed
    # Delete one version, then the id is gone; deleting again is a 404.
    gone = c.delete("/v1/documents/parking", params={"version": "2"})
    assert gone.status_code == 200 and gone.json()["removed"] == ["parking:2"]
    assert not any(k[0] == "parking" for k in _on_disk(srv.cfg))
    missing = c.delete("/v1/documents/parking")
    assert missing.status_code == 404 and missing.json()["error"]["code"] == "not_found"


def test_bad_documents_are_refused_and_change_nothing(writable):
    srv, c = writable
    before = _on_disk(srv.cfg)
    cases = [
        (c.post("/v1/documents", json={"documents": [{"id": "x"}]}), 422, "invalid_request"),
        (c.post("/v1/documents", json={"documents": []}), 422, "invalid_request"),
        (c.post("/v1/documents", json={"documents": [PARKING], "mode": "merge"}), 422, "invalid_request"),
        (c.post("/v1/documents", content=b"id,text\nx,y", headers={"Content-Type": "text/csv"}), 415,
         "unsupported_media_type"),
        (c.post("/v1/documents", content=b'{"id": "a", "text": "b"}\nnot json',
                headers={"Content-Type": "application/x-ndjson"}), 422, "invalid_request"),
        (c.post("/v1/documents", json={"documents": [PARKING, {**PARKING, "text": "다른 내용"}]}), 409, "conflict"),
    ]
    for r, status, code in cases:
        assert r.status_code == status, r.text
        assert r.json()["error"]["code"] == code
    assert _on_disk(srv.cfg) == before
    assert c.get("/readyz").json()["index_version"] == "v-000001"


def test_queries_see_whole_versions_while_documents_change(writable):
    """Documents are added in pairs sharing a unique word: a search must find both or neither."""
    srv, c = writable
    errors: list[str] = []
    stop = threading.Event()

    def reader() -> None:
        import httpx

        with httpx.Client(base_url=srv.url, timeout=60) as rc:
            while not stop.is_set():
                for i in range(6):
                    r = rc.post("/v1/search", json={"query": f"zzword{i}", "top": 10,
                                                    "filters": {"document_ids": [f"pair{i}-a", f"pair{i}-b"]}})
                    if r.status_code != 200:
                        errors.append(f"HTTP {r.status_code}: {r.text}")
                        continue
                    found = {x["document_id"] for x in r.json()["candidates"]}
                    if len(found) == 1:
                        errors.append(f"half a version: {found} at {r.json()['index_version']}")

    threads = [threading.Thread(target=reader) for _ in range(4)]
    for t in threads:
        t.start()
    try:
        for i in range(6):
            docs = [{"id": f"pair{i}-{s}", "text": f"zzword{i} 문서 {s} 내용입니다."} for s in "ab"]
            assert c.post("/v1/documents", json={"documents": docs}).status_code == 200
            if i % 2:
                assert c.post("/v1/documents?mode=replace", headers={"Content-Type": "application/x-ndjson"},
                              content="\n".join(json.dumps({**d, "version": "2"}) for d in docs).encode()
                              ).status_code == 200
    finally:
        stop.set()
        for t in threads:
            t.join()
    assert errors == []
    assert {(f"pair{i}-{s}") for i in range(6) for s in "ab"} <= {k[0] for k in _on_disk(srv.cfg)}


def test_mode_in_the_url_applies_to_a_json_body(writable):
    srv, c = writable
    doc = {"id": "parking", "text": "사내 주차장은 오전 7시에 엽니다."}
    assert c.post("/v1/documents", json={"documents": [doc]}).status_code == 200
    r = c.post("/v1/documents?mode=replace", json={"documents": [{**doc, "version": "2"}]})
    assert r.status_code == 200 and r.json()["removed"] == ["parking:1"], r.text
    clash = c.post("/v1/documents?mode=add", json={"documents": [doc], "mode": "replace"})
    assert clash.status_code == 422 and "give one" in clash.json()["error"]["message"]
