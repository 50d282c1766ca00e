"""Faults of the Milvus backend: an unreachable server, a wrong token, a missing token variable, a
collection built with another model, a server killed in the middle of an ingest (the rerun
completes it with nothing duplicated or lost), and a writer killed while its publish was still on
its way to the server."""
from __future__ import annotations

import socket
import subprocess
import sys
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


def test_a_dead_writers_late_publish_is_not_undone_by_the_next_writer(tmp_path, lite_server, monkeypatch):
    """A writer is killed right after sending its publish, and the server applies that publish a
    second later, after the next writer took the lease over. The next writer waits
    ``settle_s`` before reading the state, so it writes on top of the dead writer's generation
    instead of cleaning it away as unpublished: both writes are there afterwards, each chunk once.
    (With ``settle_s: 0`` the dead writer's documents are deleted after readers saw them.)"""
    from rag.index.milvus import collections as cols_mod
    from rag.index.milvus import writer as writer_mod

    docs = load_documents(DEMO_DOCS)[:8]
    first = milvus_pipeline(tmp_path / "a", uri=lite_server.uri, collection="late", settle_s=2).milvus_index()
    first.create().add(docs[:4])
    second = milvus_pipeline(tmp_path / "b", uri=lite_server.uri, collection="late", settle_s=2).milvus_index().open()
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    real_publish, landed = cols_mod.Collections.publish, threading.Event()

    def arrives_late(self, view, what):  # the client died; the server applies its request 1 s later
        def land():
            real_publish(self, view, what)
            landed.set()
        threading.Timer(1.0, land).start()

    def killed_holding_the_lease(cols, me, failed):
        cols.meta_put("lease", {"owner": f"{socket.gethostname()}:{dead.pid}:0:0", "expires": time.time() + 120})

    with monkeypatch.context() as m:
        m.setattr(cols_mod.Collections, "publish", arrives_late)
        m.setattr(writer_mod, "_release", killed_holding_the_lease)
        first.add(docs[4:6])
    second.add(docs[6:8])
    assert landed.wait(30)
    after = milvus_pipeline(tmp_path / "c", uri=lite_server.uri, collection="late").index
    assert sorted(after.documents) == sorted(d.key for d in docs)
    every = [c.evidence_id for c in after.chunks]
    assert len(every) == len(set(every)) == len(after) == sum(r.n_chunks for r in after.documents.values())
    assert after.generation == 3
    after.drop()


def test_after_a_failed_write_the_next_writer_waits_for_its_requests(tmp_path, lite_server, monkeypatch, caplog):
    """A write that failed on an engine call releases the lease marked with the time it failed (its
    requests may still land); the next writer waits out the rest of ``settle_s`` and says so, and
    its own clean release clears the mark."""
    import json
    import logging

    from rag.index.milvus import collections as cols_mod

    docs = load_documents(DEMO_DOCS)[:4]
    idx = milvus_pipeline(tmp_path, uri=lite_server.uri, collection="failed", settle_s=1).milvus_index()
    idx.create().add(docs[:2])

    def fails(view):
        raise IndexBackendError("simulated: the publish timed out")

    with monkeypatch.context() as m:
        m.setattr(cols_mod, "_state_body", fails)
        with pytest.raises(IndexBackendError, match="simulated"):
            idx.add(docs[2:])
    held = json.loads(idx.store.meta_get("lease")["body"])
    assert held["owner"] == "" and held["failed_at"] <= time.time()
    with caplog.at_level(logging.INFO, logger="rag.index.milvus.writer"):
        idx.add(docs[2:])
    assert "the previous write failed" in caplog.text and "settle_s" in caplog.text
    assert "failed_at" not in json.loads(idx.store.meta_get("lease")["body"])
    assert sorted(idx.documents) == sorted(d.key for d in docs)
    idx.drop()
