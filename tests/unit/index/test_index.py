"""The persistent hybrid index: build, search, save/load, updates, atomicity, mismatches."""
from __future__ import annotations

import json
import random

import numpy as np
import pytest

from rag.config import load_config
from rag.errors import (
    DuplicateDocumentError,
    EmptyCorpusError,
    EmptyQueryError,
    IndexCorruptError,
    IndexMismatchError,
    IndexNotFoundError,
    InputError,
)
from rag.models import HashingEmbedder
from rag.index import current_version
from rag.pipeline import Pipeline
from rag.types import Document

from tests.conftest import write_config


def _docs():
    return [
        Document("leave", "연차 휴가는 입사 첫해 15일이다. 근속 2년마다 1일이 추가된다.", "2024.1", "연차 규정", "https://x/leave?v=2024.1"),
        Document("leave", "연차 휴가는 입사 첫해 16일이다. 근속 2년마다 1일이 추가된다.", "2025.1", "연차 규정", "https://x/leave?v=2025.1"),
        Document("pw", "Passwords must be changed every 90 days. Use MFA for remote access.", "1", "IT security", "https://x/pw"),
        Document("expense", "Domestic per diem is 30,000 KRW. The team lead approves expenses up to 1,000,000 KRW.", "1", "Expenses", "https://x/exp"),
        Document("confined", "밀폐공간 진입 전 산소 농도와 황화수소 농도를 측정한다.\f두 번째 쪽: 감시인을 배치한다.", "1", "밀폐공간", "https://x/cs"),
    ]


def _pipe(tmp_path, **sections):
    return Pipeline.from_config(write_config(tmp_path, **sections))


def _eids(result):
    return [c.chunk.evidence_id for c in result.candidates]


def test_build_search_and_provenance(tmp_path):
    p = _pipe(tmp_path)
    idx = p.build_index(_docs())
    assert len(idx.documents) == 5  # both versions of "leave" are kept
    res = p.search("How often must passwords change?")
    top = res.candidates[0]
    assert top.chunk.document_id == "pw"
    assert top.chunk.uri == "https://x/pw"
    assert {h.retriever for h in top.hits} <= {"bm25", "dense"} and top.hits
    assert all(h.rank >= 1 for h in top.hits)
    for c in idx.chunks:  # spans are exact
        doc = next(d for d in _docs() if d.key == (c.document_id, c.document_version))
        assert doc.text[c.start_char:c.end_char] == c.text
    pages = {c.page for c in idx.chunks if c.document_id == "confined"}
    assert pages == {1, 2}
    assert set(res.timings_ms) == {"bm25", "embed_query", "dense", "fusion"}


def test_same_input_any_order_same_index_and_results(tmp_path):
    a = _pipe(tmp_path / "a")
    b = _pipe(tmp_path / "b")
    docs = _docs()
    shuffled = docs[:]
    random.Random(3).shuffle(shuffled)
    ia, ib = a.build_index(docs), b.build_index(shuffled)
    assert [c.evidence_id for c in ia.chunks] == [c.evidence_id for c in ib.chunks]
    for q in ["연차 휴가 며칠", "per diem KRW", "산소 농도"]:
        assert _eids(a.search(q)) == _eids(b.search(q))
        assert [c.score for c in a.search(q).candidates] == [c.score for c in b.search(q).candidates]


def test_save_load_roundtrip_gives_identical_results(tmp_path):
    p = _pipe(tmp_path)
    p.build_index(_docs())
    before = {q: p.search(q) for q in ["연차 휴가", "passwords MFA", "team lead approves"]}
    fresh = Pipeline.from_config(tmp_path / "config.yaml")
    for q, r in before.items():
        r2 = fresh.search(q)
        assert _eids(r2) == _eids(r)
        assert np.allclose([c.score for c in r2.candidates], [c.score for c in r.candidates])
    params = json.loads((current_version(p.index_path) / "params.json").read_text())
    assert params["embedding_model"] == "hashing:char1-3:128"
    assert params["embedding_dim"] == 128
    assert params["index_config_hash"] == p.config.index_hash
    assert params["n_chunks"] == len(fresh.index)


def test_add_replace_delete_without_rebuild_and_persisted(tmp_path):
    p = _pipe(tmp_path)
    p.build_index(_docs()[:3])
    n0 = len(p.index)
    rep = p.add_documents([_docs()[3]])
    assert rep.added == ("expense:1",) and rep.chunks_embedded >= 1
    assert any(c.chunk.document_id == "expense" for c in p.search("per diem").candidates)
    # adding the same document again is a no-op, with different text it is refused
    assert p.add_documents([_docs()[3]]).unchanged == ("expense:1",)
    with pytest.raises(DuplicateDocumentError):
        p.add_documents([Document("expense", "changed text", "1")])
    assert len(p.index) == n0 + 1  # nothing lost by the refused call
    # replace: a new version becomes the only version of that id
    new_pw = Document("pw", "Passwords must be changed every 60 days.", "2", "IT security", "https://x/pw2")
    rep = p.replace_documents([new_pw])
    assert rep.removed == ("pw:1",) and rep.added == ("pw:2",)
    reloaded = Pipeline.from_config(tmp_path / "config.yaml")
    versions = {c.chunk.document_version for c in reloaded.search("passwords changed").candidates if c.chunk.document_id == "pw"}
    assert versions == {"2"}
    # delete one version of leave, then an unknown id
    p.delete_document("leave", "2024.1")
    assert ("leave", "2024.1") not in Pipeline.from_config(tmp_path / "config.yaml").index.documents
    with pytest.raises(InputError, match="not in the index"):
        p.delete_document("nope")
    # incremental result equals a fresh build of the same documents
    expected = {(d.id, d.version) for d in [_docs()[1], new_pw, _docs()[3]]}
    assert set(p.index.documents) == expected
    fresh2 = _pipe(tmp_path / "fresh2")
    fresh2.build_index([_docs()[1], new_pw, _docs()[3]])
    for q in ["연차 휴가", "passwords", "per diem"]:
        assert _eids(p.search(q)) == _eids(fresh2.search(q))
        assert np.allclose([c.score for c in p.search(q).candidates], [c.score for c in fresh2.search(q).candidates])


def test_reindex_unchanged_embeds_nothing(tmp_path):
    p = _pipe(tmp_path)
    p.build_index(_docs())
    first = p.components.embedder.misses
    assert first > 0
    q = Pipeline.from_config(tmp_path / "config.yaml")
    q.build_index(_docs())
    assert q.components.embedder.misses == 0 and q.components.embedder.hits == first


def test_crash_during_save_leaves_previous_index_loadable(tmp_path, monkeypatch):
    p = _pipe(tmp_path)
    p.build_index(_docs()[:3])
    before = _eids(p.search("passwords"))
    import rag.index.store as index_mod

    def boom(*a, **k):
        raise OSError("disk full (simulated)")

    monkeypatch.setattr(index_mod.np, "save", boom)
    with pytest.raises(OSError):
        p.add_documents([_docs()[3]])
    monkeypatch.undo()
    again = Pipeline.from_config(tmp_path / "config.yaml")
    assert _eids(again.search("passwords")) == before
    assert ("expense", "1") not in again.index.documents
    # the half-written folder is cleaned by the next successful save
    again.add_documents([_docs()[3]])
    assert not list(p.index_path.glob(".tmp-*"))
    assert len([d for d in p.index_path.iterdir() if d.name.startswith("v-")]) <= 2


def test_other_model_is_refused_and_not_overwritten(tmp_path):
    p = _pipe(tmp_path)
    p.build_index(_docs())
    cfg = load_config(tmp_path / "config.yaml").with_overrides({"embedding.dim": 64})
    other = Pipeline(cfg)
    with pytest.raises(IndexMismatchError, match="hashing:char1-3:128"):
        other.search("passwords")
    with pytest.raises(IndexMismatchError, match="--force"):
        other.build_index(_docs())
    assert Pipeline.from_config(tmp_path / "config.yaml").search("passwords").candidates  # still intact
    other.build_index(_docs(), force=True)
    assert other.search("passwords").candidates


def test_other_analyzer_is_refused(tmp_path):
    p = _pipe(tmp_path)
    p.build_index(_docs())
    other = Pipeline(load_config(tmp_path / "config.yaml").with_overrides({"bm25.analyzer": "english"}))
    with pytest.raises(IndexMismatchError, match="analyzer"):
        other.index


def test_missing_and_corrupt_index(tmp_path):
    p = _pipe(tmp_path)
    with pytest.raises(IndexNotFoundError, match="rag index"):
        p.search("x")
    p.index_path.mkdir(parents=True)
    (p.index_path / "junk.txt").write_text("x")
    with pytest.raises(IndexCorruptError, match="CURRENT"):
        Pipeline.from_config(tmp_path / "config.yaml").search("x")
    (p.index_path / "CURRENT").write_text("v-000009\n")
    with pytest.raises(IndexCorruptError, match="does not exist"):
        Pipeline.from_config(tmp_path / "config.yaml").search("x")


def test_bad_input(tmp_path):
    p = _pipe(tmp_path)
    with pytest.raises(EmptyCorpusError):
        p.build_index([])
    with pytest.raises(EmptyCorpusError):
        p.build_index([Document("a", "   "), Document("b", "")])
    with pytest.raises(DuplicateDocumentError, match="'a'"):
        p.build_index([Document("a", "one"), Document("a", "two")])
    p.build_index(_docs())
    for q in ["", "   \n\t"]:
        with pytest.raises(EmptyQueryError):
            p.search(q)
    with pytest.raises(InputError):
        p.search(None)  # type: ignore[arg-type]


@pytest.mark.parametrize("kind", ["hnsw", "flat_fp16"])
def test_approximate_dense_options_match_exact_ranking(tmp_path, kind):
    flat = _pipe(tmp_path / "f")
    other = _pipe(tmp_path / "o", dense={"index": kind})
    flat.build_index(_docs())
    other.build_index(_docs())
    for q in ["passwords", "연차 휴가", "산소 농도 측정"]:
        a, b = flat.components.retriever.dense(q), other.components.retriever.dense(q)
        assert [h.chunk.evidence_id for h in a] == [h.chunk.evidence_id for h in b]
        assert np.allclose([h.score for h in a], [h.score for h in b], atol=2e-3)
    again = Pipeline.from_config(tmp_path / "o" / "config.yaml")
    assert again.components.retriever.dense("passwords")[0].chunk.evidence_id == flat.components.retriever.dense("passwords")[0].chunk.evidence_id


def test_hashing_embedder_is_normalized_and_deterministic():
    e = HashingEmbedder(64)
    v = e.embed_passages(["hello world", "안녕하세요"])
    assert v.shape == (2, 64) and np.allclose(np.linalg.norm(v, axis=1), 1.0, atol=1e-6)
    assert np.array_equal(v, e.embed_passages(["hello world", "안녕하세요"]))
    assert e.embed_queries([]).shape == (0, 64)


def test_searches_in_other_threads_see_a_consistent_index_during_updates(tmp_path):
    import threading

    p = _pipe(tmp_path)
    p.build_index(_docs())
    idx = p.index
    errors: list[BaseException] = []
    stop = threading.Event()

    def reader():
        while not stop.is_set():
            try:
                for q in ["passwords MFA", "연차 휴가", "per diem KRW", "brand new topic words"]:
                    res = p.search(q)
                    for c in res.candidates:  # every hit is a chunk of an indexed document version
                        assert c.chunk.text and c.chunk.evidence_id.startswith(c.chunk.document_id + ":")
            except BaseException as exc:  # noqa: BLE001 - collected and re-raised below
                errors.append(exc)
                return

    threads = [threading.Thread(target=reader) for _ in range(3)]
    for t in threads:
        t.start()
    try:
        for i in range(15):
            idx.add([Document(f"new{i}", f"brand new topic words number {i} with fresh vocabulary zq{i}x", "1")])
            if i % 3 == 2:
                idx.delete(f"new{i - 1}")
            idx.replace([Document("pw", f"Passwords must be changed every {60 + i} days.", f"r{i}")])
    finally:
        stop.set()
        for t in threads:
            t.join()
    assert not errors, errors[0]
    assert ("pw", "r14") in idx.documents and ("pw", "1") not in idx.documents
    assert len(idx.chunks) == len(idx.bm25) == idx.embeddings.shape[0]


def test_search_many_equals_search_one_by_one(tmp_path):
    p = _pipe(tmp_path)
    p.build_index(_docs())
    qs = ["How often must passwords change?", "연차 휴가는 며칠인가요?", "per diem"]
    many = p.components.retriever.search_many(qs, candidates=4)
    assert [r.query for r in many] == qs
    for q, r in zip(qs, many):
        one = p.search(q, candidates=4)
        assert [(c.chunk.evidence_id, c.score) for c in r.candidates] == [(c.chunk.evidence_id, c.score) for c in one.candidates]
    assert p.components.retriever.search_many([]) == []
    with pytest.raises(EmptyQueryError):
        p.components.retriever.search_many(["ok", "  "])
