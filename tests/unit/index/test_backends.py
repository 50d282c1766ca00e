"""One suite, every index backend (see conftest.py for the targets): the same Pipeline calls give
the same candidates, updates and filters work through the engine, parameters are checked on open,
an interrupted write is completed by a rerun, and a search always sees whole versions."""
from __future__ import annotations

import threading
import time
from dataclasses import replace
from pathlib import Path

import pytest

from rag.config import load_config
from rag.errors import DuplicateDocumentError, IndexBackendError, IndexMismatchError, InputError
from rag.index.loaders import load_documents
from rag.pipeline import Pipeline
from rag.types import Document, SearchFilter
from tests.conftest import DEMO_DOCS, write_config
from tests.unit.index.conftest import needs_bm25

QUESTIONS = ["연차 휴가는 며칠인가요?", "What is the refund policy for travel?", "밀폐공간 작업 전 산소 농도",
             "overtime approval", "퇴직금 계산"]


def pipeline_for(target, tmp_path: Path, **sections) -> Pipeline:
    return Pipeline(load_config(write_config(tmp_path, index=target.index, **sections)))


@pytest.fixture(scope="module")
def reference(tmp_path_factory):
    """The local backend over the demo corpus: what every backend must reproduce."""
    tmp = tmp_path_factory.mktemp("reference")
    p = Pipeline(load_config(write_config(tmp)))
    p.build_index()
    return p


def ids(scored):
    return [s.chunk.evidence_id for s in scored]


def test_same_candidates_as_the_local_backend(target, tmp_path, reference):
    p = pipeline_for(target, tmp_path)
    idx = p.build_index()
    assert len(idx) == len(reference.index) and sorted(idx.documents) == sorted(reference.index.documents)
    for q in QUESTIONS:
        v = p.components.embedder.embed_queries([q])[0]
        got, want = idx.search_dense(v, 20), reference.index.search_dense(v, 20)
        assert ids(got) == ids(want), q  # FLAT is exact; ties ordered by (document, version, ordinal)
        assert [s.score for s in got] == pytest.approx([s.score for s in want], abs=1e-5)
        assert [s.rank for s in got] == list(range(1, len(got) + 1))
    if not target.bm25:
        with pytest.raises(IndexBackendError, match="no BM25.*bm25_weight: 0"):
            p.search(QUESTIONS[0])
        dense_only = Pipeline(p.config.with_overrides({"retrieval.fusion.bm25_weight": 0}))
        v = p.components.embedder.embed_queries([QUESTIONS[0]])[0]
        got = dense_only.search(QUESTIONS[0]).candidates
        assert [c.chunk.evidence_id for c in got] == ids(reference.index.search_dense(v, len(got)))
        assert all([h.retriever for h in c.hits] == ["dense"] for c in got)
        needs_bm25(target)
    for q in QUESTIONS:
        got, want = idx.search_bm25(q, 20), reference.index.search_bm25(q, 20)
        # The engine's BM25 over the same tokens. milvus-lite 3 scores up to ~7 % off the exact
        # formula (it approximates document lengths), so only near-ties may swap.
        local = dict(zip(reference.index.chunks and [c.evidence_id for c in reference.index.chunks],
                         reference.index.bm25.scores(reference.index.analyzer(q))))
        exact = [local[e] for e in ids(got)]
        assert all(a >= b * 0.9 for a, b in zip(exact, exact[1:])), q
        assert [s.score for s in got] == pytest.approx(exact, rel=0.1)
        clear = {s.chunk.evidence_id for s in want if s.score > want[-1].score * 1.1}
        assert clear <= set(ids(got)), q
        assert ids(got)[:1] == ids(want)[:1]
        fused, ref = p.search(q), reference.search(q)
        top, ref_top = [c.chunk.evidence_id for c in fused.candidates[:10]], [c.chunk.evidence_id for c in ref.candidates[:10]]
        assert top[0] == ref_top[0] and len(set(top) & set(ref_top)) >= 8, q
        assert all({h.retriever for h in c.hits} <= {"bm25", "dense"} and c.hits for c in fused.candidates)


def test_updates_and_filters_go_through_the_engine(target, tmp_path):
    p = pipeline_for(target, tmp_path)
    p.build_index()
    n = len(p.index)
    new = Document("backend-note", "연장근로 신청서 제출 기한은 전날 오후 6시까지이다.", "v1", title="신청 기한")
    rep = p.add_documents([new])
    assert rep.added == ("backend-note:v1",) and len(p.index) > n
    assert p.add_documents([new]).unchanged == ("backend-note:v1",)  # same text: skipped
    with pytest.raises(DuplicateDocumentError):
        p.add_documents([replace(new, text="다른 내용")])
    assert p.index.documents[("backend-note", "v1")].text_sha256 == rep_sha(new)
    v2 = replace(new, version="v2", text="연장근로 신청서 제출 기한은 당일 오전 9시까지이다.")
    rep = p.replace_documents([v2])
    assert rep.added == ("backend-note:v2",) and rep.removed == ("backend-note:v1",)
    assert [k for k in p.index.documents if k[0] == "backend-note"] == [("backend-note", "v2")]
    where = SearchFilter(document_ids=("backend-note",))
    vec = p.components.embedder.embed_queries(["연장근로 신청 기한"])[0]
    assert {s.chunk.document_version for s in p.index.search_dense(vec, 10, where)} == {"v2"}
    only_2025 = SearchFilter(versions=("2025.1",))
    assert {s.chunk.document_version for s in p.index.search_dense(vec, 50, only_2025)} == {"2025.1"}
    if target.bm25:
        assert ids(p.index.search_bm25("연장근로 신청서 제출 기한", 10, where))[0].startswith("backend-note:v2:")
        assert {s.chunk.document_version for s in p.index.search_bm25("휴가", 50, only_2025)} == {"2025.1"}
    p.delete_document("backend-note")
    assert len(p.index) == n and not any(k[0] == "backend-note" for k in p.index.documents)
    assert p.index.search_dense(vec, 10, where) == []
    with pytest.raises(InputError, match="not in the index"):
        p.delete_document("backend-note")
    # a fresh process sees the same documents (the engine or the folder kept them)
    again = pipeline_for(target, tmp_path)
    assert sorted(again.index.documents) == sorted(p.index.documents) and len(again.index) == n


def rep_sha(d: Document) -> str:
    from rag.index.updates import text_sha256

    return text_sha256(d.text)


def test_index_parameters_are_checked_on_open(target, tmp_path):
    p = pipeline_for(target, tmp_path)
    p.build_index()
    other_analyzer = pipeline_for(target, tmp_path / "a", bm25={"analyzer": "whitespace"})
    with pytest.raises(IndexMismatchError, match="analyzer"):
        _ = other_analyzer.index
    other_model = pipeline_for(target, tmp_path / "b", embedding={"backend": "hashing", "dim": 64})
    with pytest.raises(IndexMismatchError, match="embedding model"):
        _ = other_model.index
    with pytest.raises(IndexMismatchError, match="refusing to overwrite"):
        other_model.build_index()
    other_model.build_index(force=True)  # --force rebuilds it for the new model
    assert len(other_model.index) == len(p.index)


def test_a_snapshot_keeps_its_version_while_documents_change(target, tmp_path):
    p = pipeline_for(target, tmp_path)
    p.build_index()
    before = p.index.snapshot()
    vec = p.components.embedder.embed_queries(["연차 휴가"])[0]
    seen = ids(before.search_dense(vec, 200))
    p.delete_document("hr-leave-policy")
    assert ids(before.search_dense(vec, 200)) == seen  # pinned: the removal does not show
    assert not any(e.startswith("hr-leave-policy:") for e in ids(p.index.snapshot().search_dense(vec, 200)))
    with pytest.raises(InputError, match="read-only"):
        before.delete("expense-policy")


def test_the_pipeline_answers_the_same_on_every_backend(target, tmp_path, reference):
    needs_bm25(target)
    p = pipeline_for(target, tmp_path)
    p.build_index()
    for q in QUESTIONS[:3]:
        a, b = p.answer(q), reference.answer(q)
        assert (a.status, a.answer) == (b.status, b.answer)
        assert [c.evidence_id for c in a.citations] == [c.evidence_id for c in b.citations]


def test_an_interrupted_write_is_completed_by_a_rerun(target, tmp_path, monkeypatch):
    if not target.milvus:
        pytest.skip("local: a save is atomic (tests/unit/index/test_index.py)")
    from rag.index.milvus import collections as milvus_mod

    p = pipeline_for(target, tmp_path)
    docs = load_documents(DEMO_DOCS)
    idx = p.milvus_index().create()
    idx.sync(docs[:10])
    n10 = len(idx)
    real = milvus_mod._state_body
    calls = {"n": 0}

    def dies_before_publishing(view):
        calls["n"] += 1
        raise IndexBackendError("simulated: the process died before publishing")

    monkeypatch.setattr(milvus_mod, "_state_body", dies_before_publishing)
    with pytest.raises(IndexBackendError, match="simulated"):
        idx.sync(docs)
    monkeypatch.setattr(milvus_mod, "_state_body", real)
    fresh = pipeline_for(target, tmp_path).index
    assert len(fresh) == n10 and len(fresh.documents) == 10  # the unpublished rows are invisible
    rep = fresh.sync(docs)  # the rerun: cleans up, then completes
    assert len(rep.unchanged) == 10 and len(fresh.documents) == len(docs)
    every = [c.evidence_id for c in fresh.chunks]
    assert len(every) == len(set(every)) == len(fresh)  # nothing duplicated
    local = Pipeline(load_config(write_config(tmp_path / "local"))).new_index(docs)
    assert every == [c.evidence_id for c in local.chunks]  # nothing lost


def test_migrate_there_and_back_without_embedding(target, tmp_path, reference):
    if not target.milvus:
        pytest.skip("migrating local to local is a copy of a folder")
    from rag.index.migrate import migrate

    dst = pipeline_for(target, tmp_path / "dst")
    calls = []
    real = dst.components.embedder.embed_passages
    dst.components.embedder.embed_passages = lambda texts, **kw: calls.append(len(texts)) or real(texts, **kw)
    rep = migrate(reference, dst, batch_documents=7)
    assert calls == [] and rep.copied == len(reference.index.documents) and rep.chunks == len(reference.index)
    assert migrate(reference, dst).copied == 0  # a rerun finds everything there
    back = Pipeline(load_config(write_config(tmp_path / "back")))
    rep = migrate(dst, back)
    assert rep.copied == len(reference.index.documents)
    assert [c.evidence_id for c in back.index.chunks] == [c.evidence_id for c in reference.index.chunks]
    v = reference.components.embedder.embed_queries(["연차 휴가"])[0]
    assert ids(back.index.search_dense(v, 10)) == ids(reference.index.search_dense(v, 10))
    section = {**target.index, "milvus": {**target.index["milvus"], "collection": target.index["milvus"]["collection"] + "_x"}}
    other = Pipeline(load_config(write_config(tmp_path / "other", index=section,
                                              chunking={"max_tokens": 120, "overlap_tokens": 20})))
    try:
        with pytest.raises(IndexMismatchError, match="without embedding or chunking again"):
            migrate(reference, other)
    finally:
        other.milvus_index().drop()


def test_searches_see_whole_versions_while_documents_change(target, tmp_path):
    """8 threads search while pairs of documents are added, replaced (both in one update) and
    deleted: a search finds both of a pair's version or neither, and never fails."""
    overrides = {"index.milvus.purge_delay_s": 0.3} if target.milvus else {}
    p = pipeline_for(target, tmp_path)
    p.build_index()
    p = Pipeline(p.config.with_overrides(overrides)) if overrides else p
    marker = "쌍둥이문서표지"
    errors, broken, searches = [], [], []
    stop = threading.Event()

    def pair(i: int, version: str) -> list[Document]:
        return [Document(f"pair-{i}-{side}", f"{marker} {marker} 번호 {i} {side} {version}", version) for side in "ab"]

    def reader() -> None:
        vec = p.components.embedder.embed_queries([marker])[0]
        while not stop.is_set():
            try:
                view = p.index.snapshot()
                hits = view.search_bm25(marker, 60) if target.bm25 else view.search_dense(vec, 60)
                found = {(s.chunk.document_id, s.chunk.document_version) for s in hits
                         if s.chunk.document_id.startswith("pair-")}
                for doc_id, version in found:
                    twin = doc_id[:-1] + ("b" if doc_id.endswith("a") else "a")
                    if (twin, version) not in found:
                        broken.append(sorted(found))
                searches.append(len(found))
            except Exception as exc:  # noqa: BLE001 — every failure is a test failure
                errors.append(repr(exc))

    threads = [threading.Thread(target=reader) for _ in range(8)]
    for t in threads:
        t.start()
    try:
        writer = p.index
        for i in range(5):
            writer.add(pair(i, "v1") + [Document(f"single-{i}", f"{marker} 혼자 {i}", "v1")])  # one update
            writer.replace(pair(i, "v2"))  # both old versions out, both new ones in, at once
            writer.delete(f"single-{i}")
            time.sleep(0.05)
        done, deadline = len(searches), time.monotonic() + 60
        while len(searches) < done + 8 and time.monotonic() < deadline and not errors:
            time.sleep(0.05)  # every reader gets to search the final version too, however slow the machine
    finally:
        stop.set()
        for t in threads:
            t.join(60)
    assert errors == []
    assert len(searches) >= 8 and max(searches) >= 2
    assert broken == []
    assert sorted(k for k in p.index.documents if k[0].startswith(("pair-", "single-"))) == \
        sorted((f"pair-{i}-{s}", "v2") for i in range(5) for s in "ab")


def test_a_second_reader_follows_the_writer(target, tmp_path):
    """Another process's index (here another Pipeline) sees each published update on its next
    snapshot, with the same documents as the writer: added, replaced and deleted ones."""
    if not target.milvus:
        pytest.skip("local: another process loads the saved folder (rag serve polls CURRENT, tests/unit/serve)")
    writer = pipeline_for(target, tmp_path)
    writer.build_index()
    reader = pipeline_for(target, tmp_path)
    assert sorted(reader.index.documents) == sorted(writer.index.documents)
    writer.add_documents([Document("follow-me", "첫 번째 판", "1")])
    writer.replace_documents([Document("follow-me", "두 번째 판", "2"), Document("expense-policy", "바뀐 경비 규정",
                                                                            "2099.1")])
    writer.delete_document("overtime-policy")
    view = reader.index.snapshot()
    assert dict(view.documents) == dict(writer.index.documents)
    assert len(view) == len(writer.index)
    assert ("follow-me", "2") in view.documents and ("follow-me", "1") not in view.documents
    assert not any(k[0] == "overtime-policy" for k in view.documents)


def test_reading_more_rows_than_one_page(target, tmp_path, monkeypatch):
    """Opening reads every document record; past one query's page the query iterator takes over."""
    if not target.milvus:
        pytest.skip("local: the records are a file")
    from rag.index.milvus import collections as milvus_mod

    p = pipeline_for(target, tmp_path)
    p.build_index()
    monkeypatch.setattr(milvus_mod, "PAGE", 4)
    again = pipeline_for(target, tmp_path)
    assert dict(again.index.documents) == dict(p.index.documents) and len(again.index.documents) == 35
    assert [c.evidence_id for c in again.index.chunks] == [c.evidence_id for c in p.index.chunks]
