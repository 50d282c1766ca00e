"""Faults of the Milvus backend: an unreachable server, a wrong token, a missing token variable, a
collection built with another model, and a server killed in the middle of an ingest (the rerun
completes it with nothing duplicated or lost)."""
from __future__ import annotations

import threading
import time

import pytest

from rag.config import load_config
from rag.errors import IndexBackendError, IndexMismatchError, IndexNotFoundError
from rag.index.loaders import load_documents
from rag.pipeline import Pipeline
from tests.conftest import DEMO_DOCS, write_config

pytest.importorskip("pymilvus", reason="pymilvus is not installed (pip install 'rag[milvus]')")


def milvus_pipeline(tmp_path, **milvus) -> Pipeline:
    section = {"collection": "faults", "timeout_s": 5, **milvus}
    return Pipeline(load_config(write_config(tmp_path, index={"backend": "milvus", "milvus": section})))


def test_an_unreachable_server_names_the_uri(tmp_path):
    from tests.milvus_servers import free_port

    uri = f"http://127.0.0.1:{free_port()}"
    p = milvus_pipeline(tmp_path, uri=uri, timeout_s=2)
    t0 = time.monotonic()
    with pytest.raises(IndexBackendError, match=uri.replace(".", r"\.")) as err:
        _ = p.index
    assert "running and reachable" in str(err.value) or "token" in str(err.value)
    assert time.monotonic() - t0 < 30


def test_a_missing_token_variable_is_named(tmp_path, monkeypatch):
    monkeypatch.delenv("RAG_TEST_NO_SUCH_TOKEN", raising=False)
    p = milvus_pipeline(tmp_path, uri="http://127.0.0.1:1", token_env="RAG_TEST_NO_SUCH_TOKEN")
    with pytest.raises(IndexBackendError, match="RAG_TEST_NO_SUCH_TOKEN"):
        _ = p.index


def test_a_wrong_token_is_refused_with_the_uri(tmp_path, milvus235, monkeypatch):
    monkeypatch.setenv("RAG_TEST_BAD_TOKEN", "root:not-the-password")
    p = milvus_pipeline(tmp_path, uri=milvus235.uri, token_env="RAG_TEST_BAD_TOKEN")
    with pytest.raises(IndexBackendError, match="refused the (credentials|token)") as err:
        _ = p.index
    assert milvus235.uri in str(err.value)


def test_no_index_and_another_model_are_typed(tmp_path):
    pytest.importorskip("milvus_lite")
    uri = str(tmp_path / "m.db")
    with pytest.raises(IndexNotFoundError, match="rag index"):
        _ = milvus_pipeline(tmp_path / "a", uri=uri).index
    milvus_pipeline(tmp_path / "a", uri=uri).build_index(load_documents(DEMO_DOCS)[:3])
    other = Pipeline(load_config(write_config(tmp_path / "b", index={"backend": "milvus", "milvus": {
        "uri": uri, "collection": "faults"}}, embedding={"backend": "hashing", "dim": 32})))
    with pytest.raises(IndexMismatchError, match="embedding model") as err:
        _ = other.index
    assert uri in str(err.value) and "--force" in str(err.value)


def test_a_server_killed_mid_ingest_then_a_rerun_completes_it(tmp_path, lite_server):
    """The served milvus-lite is killed (SIGKILL) while `build_index` is writing; the ingest fails
    with a typed error naming the URI; after a restart a rerun completes it, and the index holds
    every chunk exactly once."""
    docs = load_documents(DEMO_DOCS)
    p = milvus_pipeline(tmp_path, uri=lite_server.uri, collection="killed", batch_documents=3)
    published = []
    killer_armed = threading.Event()

    def progress(n: int) -> None:  # called once per batch, after embedding, before its rows are written
        published.append(n)
        if len(published) == 4:
            killer_armed.set()
            lite_server.kill()

    try:
        with pytest.raises(IndexBackendError) as err:
            p.build_index(docs, progress=progress)
        assert killer_armed.is_set()
        assert lite_server.uri in str(err.value) and "rerun" in str(err.value)
    finally:
        lite_server.restart()
    again = milvus_pipeline(tmp_path, uri=lite_server.uri, collection="killed", batch_documents=3)
    before = len(again.index.documents)
    assert 0 < before < len(docs)  # the batches published before the kill survived
    rep = again.build_index(docs)
    assert len(rep.documents) == len(docs)
    every = [c.evidence_id for c in rep.chunks]
    assert len(every) == len(set(every)) == len(rep)
    local = Pipeline(load_config(write_config(tmp_path / "local"))).new_index(docs)
    assert every == [c.evidence_id for c in local.chunks]
    again.milvus_index().drop()
