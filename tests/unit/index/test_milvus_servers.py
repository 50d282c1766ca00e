"""The test servers of tests/milvus_servers.py: they start on 127.0.0.1, keep their data across a
crash and a restart on the same port, refuse a wrong token (Milvus 2.3.5), and leave nothing
listening once stopped."""
from __future__ import annotations

import importlib.util
import socket

import pytest

pytest.importorskip("pymilvus", reason="pymilvus is not installed (pip install 'rag[milvus]')")

from tests.milvus_servers import MILVUS_TOKEN, start_lite_server, start_milvus235  # noqa: E402


def _listening(port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.settimeout(1)
        return s.connect_ex(("127.0.0.1", port)) == 0


def _make_collection(client, name: str, n: int = 16):
    import numpy as np
    from pymilvus import DataType

    schema = client.create_schema(auto_id=False)
    schema.add_field("pk", DataType.VARCHAR, is_primary=True, max_length=32)
    schema.add_field("vec", DataType.FLOAT_VECTOR, dim=8)
    index = client.prepare_index_params()
    index.add_index("vec", index_type="FLAT", metric_type="IP")
    client.create_collection(name, schema=schema, index_params=index, consistency_level="Strong")
    vecs = np.random.default_rng(7).standard_normal((n, 8)).astype("float32")
    vecs /= np.linalg.norm(vecs, axis=1, keepdims=True)
    client.insert(name, [{"pk": f"p{i}", "vec": v.tolist()} for i, v in enumerate(vecs)])
    return vecs


def _top(client, name: str, vec) -> str:
    hits = client.search(name, [vec.tolist()], limit=3, search_params={"metric_type": "IP"}, timeout=10)
    return hits[0][0]["pk"] if "pk" in hits[0][0] else hits[0][0]["id"]


def test_lite_server_persists_across_kill_and_restart(tmp_path):
    pytest.importorskip("milvus_lite", reason="milvus-lite is not installed (pip install 'rag[milvus]')")
    srv = start_lite_server(tmp_path / "lite")
    try:
        assert srv.uri == f"http://127.0.0.1:{srv.port}" and srv.kind == "lite-server" and srv.running
        client = srv.client()
        vecs = _make_collection(client, "smoke")
        assert _top(client, "smoke", vecs[5]) == "p5"
        client.close()

        port, pid = srv.port, srv.pid
        srv.kill()  # a crash: no flush, no close
        assert not srv.running and not _listening(port)
        srv.restart()
        assert srv.port == port and srv.pid != pid and srv.running

        client = srv.client()
        assert client.list_collections() == ["smoke"]
        # milvus-lite 3.2.2 comes back with every collection released (Milvus proper reloads them)
        assert client.get_load_state("smoke")["state"].name == "NotLoad"
        client.load_collection("smoke")
        assert len(client.query("smoke", filter='pk != ""', output_fields=["pk"], limit=100)) == 16
        assert _top(client, "smoke", vecs[11]) == "p11"
        client.close()
    finally:
        srv.stop()
    assert not srv.running and not _listening(srv.port)
    assert (tmp_path / "lite" / "server.log").read_text().count("=== start") == 2


@pytest.mark.skipif(importlib.util.find_spec("milvus") is None,
                    reason="the Milvus 2.3.5 test server is not installed (pip install 'rag[dev]': milvus==2.3.5)")
def test_milvus235_requires_the_root_token(tmp_path):
    import grpc
    from pymilvus.exceptions import MilvusException

    srv = start_milvus235(tmp_path / "m")
    try:
        assert srv.kind == "milvus-2.3.5" and srv.auth and srv.token == MILVUS_TOKEN
        assert srv.uri == f"http://127.0.0.1:{srv.port}"
        for bad in ("root:wrong", ""):
            with pytest.raises(MilvusException) as err:
                srv.client(token=bad, timeout=5)
            # pymilvus reports "Fail connecting ... (code=2)" for a refused token as for a dead server;
            # only the gRPC cause tells them apart.
            assert err.value.__cause__.code() == grpc.StatusCode.UNAUTHENTICATED
        client = srv.client()
        assert client.list_collections() == []
        client.close()
    finally:
        srv.stop()
    assert not srv.running and not _listening(srv.port)
