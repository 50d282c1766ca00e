"""``serve.follow``: the service keeps a folder of files in sync with the index it serves, and an
answer cites the file it came from."""
from __future__ import annotations

import time

from tests.unit.serve.conftest import live


def _wait_for(cond, timeout=60.0):
    t0 = time.monotonic()
    while time.monotonic() - t0 < timeout:
        if cond():
            return True
        time.sleep(0.2)
    return False


def test_the_service_follows_a_folder(tmp_path):
    folder = tmp_path / "handbook"
    folder.mkdir()
    (folder / "remote.md").write_text("# 재택근무\n\n재택근무는 주 2일까지 신청할 수 있다.\n", encoding="utf-8")
    with live(tmp_path / "svc", serve={"follow": [str(folder)], "follow_interval_s": 0.3}) as (srv, client):
        assert _wait_for(lambda: any(k[0] == "remote" for k in srv.service.pipeline.index.documents))
        body = client.post("/v1/search", json={"query": "재택근무 주 2일"}).json()
        assert any(c["evidence_id"].startswith("remote:") for c in body["candidates"])
        (folder / "remote.md").write_text("# 재택근무\n\n재택근무는 주 3일까지 신청할 수 있다.\n", encoding="utf-8")
        (folder / "old.txt").write_text("출장비는 실비로 지급한다.\n", encoding="utf-8")
        assert _wait_for(lambda: any(k[0] == "old" for k in srv.service.pipeline.index.documents))
        assert _wait_for(lambda: "3일" in "".join(srv.service.pipeline.index.document_texts(
            *next(k for k in srv.service.pipeline.index.documents if k[0] == "remote"))))
        (folder / "old.txt").unlink()
        assert _wait_for(lambda: not any(k[0] == "old" for k in srv.service.pipeline.index.documents))
        followed = client.get("/readyz").json()["followed"]
        assert list(followed) == [str(folder)] and "failed 0" in followed[str(folder)]
