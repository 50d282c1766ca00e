"""Access control on both backends: access metadata reaches every chunk and survives a reload,
both retrievers filter before their top-k, a request filter narrows the principal's scope, a
replace changes who may read, a newer version the caller cannot read is never revealed, and the
configuration switches (default_access, require_principal) hold."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from rag.access import Access, Principal
from rag.config import load_config
from rag.errors import AccessMetadataError, DuplicateDocumentError, PrincipalRequiredError
from rag.index.loaders import load_jsonl_documents
from rag.pipeline import Pipeline
from rag.types import Document, SearchFilter
from tests.conftest import write_config

HR = Principal("kim", ("hr",), "acme")
OPS = Principal("lee", ("ops",), "acme")
OUTSIDER = Principal("park", ("hr",), "beta")  # the right group in the wrong tenant


def corpus() -> list[Document]:
    """Five documents about leave; the restricted ones match the query best."""
    return [
        Document("pub", "연차 휴가는 15일이다. 휴가 신청은 팀장에게 한다.", title="휴가 안내", uri="mem://pub"),
        Document("hr-only", "연차 휴가 연차 휴가 급여 기준표 비밀 canaryhr 휴가 15일", title="인사 비밀",
                 uri="mem://hr", metadata={"access": {"groups": ["hr"], "tenant": "acme"}}),
        Document("kim-only", "연차 휴가 연차 휴가 개인 평가 canarykim", title="김 평가", uri="mem://kim",
                 metadata={"access": {"users": ["kim"]}}),
        Document("acme-all", "연차 휴가 사내 공지 canaryacme", title="사내 공지", uri="mem://acme",
                 metadata={"access": {"tenant": "acme"}}),
        Document("pub2", "출장비는 하루 5만원이다.", title="출장", uri="mem://pub2"),
    ]


def pipeline(backend, tmp_path: Path, **sections) -> Pipeline:
    return Pipeline(load_config(write_config(tmp_path, index=backend.index, **sections)))


def found(p: Pipeline, principal=None, where=None, query="연차 휴가") -> set[str]:
    res = p.search(query, where=where, principal=principal)
    return {c.chunk.document_id for c in res.candidates}


def test_jsonl_access_field_reaches_every_chunk(tmp_path):
    src = tmp_path / "docs.jsonl"
    src.write_text("\n".join(json.dumps(o, ensure_ascii=False) for o in [
        {"id": "a", "text": "하나", "access": {"groups": ["hr", "hr"], "tenant": "acme"}},
        {"id": "b", "text": "둘", "metadata": {"access": {"users": ["kim"]}}},
        {"id": "c", "text": "셋"},
    ]) + "\n", encoding="utf-8")
    docs = {d.id: d for d in load_jsonl_documents(src)}
    assert docs["a"].metadata["access"] == {"groups": ["hr"], "users": [], "tenant": "acme"}
    assert docs["b"].metadata["access"] == {"groups": [], "users": ["kim"]}
    assert "access" not in docs["c"].metadata
    src.write_text(json.dumps({"id": "bad", "text": "x", "access": {"group": ["hr"]}}) + "\n", encoding="utf-8")
    with pytest.raises(AccessMetadataError, match=r"docs.jsonl:1: document 'bad'.*group"):
        load_jsonl_documents(src)


def test_each_principal_sees_what_it_may_read_on_both_legs(backend, tmp_path):
    p = pipeline(backend, tmp_path)
    idx = p.build_index(corpus())
    chunks = idx.chunks() if callable(idx.chunks) else idx.chunks
    assert {c.document_id: c.access for c in chunks}["hr-only"] == Access(("hr",), (), "acme")
    assert idx.documents[("kim-only", "1")].access == Access((), ("kim",))
    assert "pub" in found(p) and found(p) <= {"pub", "pub2"}
    assert found(p, HR) >= {"pub", "hr-only", "kim-only", "acme-all"}
    assert found(p, OPS) & {"hr-only", "kim-only"} == set() and "acme-all" in found(p, OPS)
    assert found(p, OUTSIDER) & {"hr-only", "kim-only", "acme-all"} == set()
    assert found(p, Principal("kim")) & {"kim-only", "hr-only", "acme-all"} == {"kim-only"}
    # both legs filter before their top-k: with k=1 the anonymous caller still gets a public hit
    r = p.components.retriever
    for leg in (r.bm25, r.dense):
        top = leg("연차 휴가 canaryhr", 1)
        assert len(top) == 1 and top[0].chunk.document_id in {"pub", "pub2"}
        assert leg("연차 휴가 canaryhr", 1, principal=HR)[0].chunk.document_id == "hr-only"


def test_a_request_filter_narrows_and_never_widens(backend, tmp_path):
    p = pipeline(backend, tmp_path)
    p.build_index(corpus())
    assert found(p, None, SearchFilter(document_ids=("hr-only", "pub"))) == {"pub"}
    assert found(p, HR, SearchFilter(document_ids=("hr-only",))) == {"hr-only"}
    # a request filter that carries another (wider) scope cannot lift the caller's
    wide = SearchFilter.within(None, p.components.reader_scope(HR))
    assert found(p, None, wide) <= {"pub", "pub2"}


def test_replace_changes_who_may_read(backend, tmp_path):
    p = pipeline(backend, tmp_path)
    p.build_index(corpus())
    assert "pub" in found(p)
    closed = Document("pub", corpus()[0].text, title="휴가 안내", uri="mem://pub",
                      metadata={"access": {"groups": ["hr"]}})
    with pytest.raises(DuplicateDocumentError, match="access metadata"):
        p.add_documents([closed])
    rep = p.replace_documents([closed])
    assert rep.added == ("pub:1",) and rep.removed == ("pub:1",)
    assert "pub" not in found(p) and "pub" in found(p, Principal("x", ("hr",)))
    reopened = pipeline(backend, tmp_path / "again")
    assert "pub" not in found(reopened) and "pub" in found(reopened, Principal("x", ("hr",)))


def test_a_newer_version_the_caller_cannot_read_is_never_revealed(backend, tmp_path):
    p = pipeline(backend, tmp_path)
    text = "연차 휴가는 {n}일이다. 휴가 신청은 팀장에게 한다."
    p.build_index([Document("leave", text.format(n=15), "1", "휴가 규정", "mem://leave/1"),
                   Document("leave", text.format(n=20), "2", "휴가 규정 개정", "mem://leave/2",
                            metadata={"access": {"groups": ["hr"]}})])
    anon = p.answer("연차 휴가는 며칠인가요?")
    blob = anon.dumps()
    assert anon.superseded == () and "leave:2:" not in blob and "mem://leave/2" not in blob and "20일" not in blob
    assert anon.status == "answered" and {c.document_version for c in anon.citations} == {"1"}
    hr = p.answer("연차 휴가는 며칠인가요?", principal=Principal("x", ("hr",)))
    assert {c.document_version for c in hr.citations} == {"2"}
    assert [(v.document_id, v.version, v.current_version) for v in hr.superseded] in ([], [("leave", "1", "2")])


def test_default_private_and_require_principal(backend, tmp_path):
    p = pipeline(backend, tmp_path, security={"default_access": "private"})
    p.build_index(corpus())
    assert found(p) == set() and found(p, HR) == {"hr-only", "kim-only", "acme-all"}
    assert p.answer("연차 휴가는 며칠인가요?").status == "insufficient_evidence"
    strict = Pipeline(p.config.with_overrides({"security.require_principal": True}), embedder=p.components.embedder,
                      index=p.index)
    for call in (lambda: strict.search("연차"), lambda: strict.answer("연차?"), lambda: strict.build_prompt("연차?"),
                 lambda: strict.retrieve("연차?"), lambda: strict.answer("연차?", principal=Principal())):
        with pytest.raises(PrincipalRequiredError):
            call()
    assert strict.search("연차 휴가", principal=HR).candidates


def test_an_index_written_before_access_control_loads_as_public(tmp_path):
    cfg = load_config(write_config(tmp_path))
    p = Pipeline(cfg)
    p.build_index([Document("a", "연차 휴가는 15일이다."), Document("b", "출장비는 5만원이다.")])
    folder = next((tmp_path / "index").glob("v-*"))
    lines = [json.loads(x) for x in (folder / "chunks.jsonl").read_text(encoding="utf-8").splitlines()]
    assert all("access" in o for o in lines)
    (folder / "chunks.jsonl").write_text("".join(json.dumps({k: v for k, v in o.items() if k != "access"}) + "\n"
                                                 for o in lines), encoding="utf-8")
    old = Pipeline(cfg)
    assert old.search("연차 휴가").candidates[0].chunk.document_id == "a"
    assert all(c.access is None for c in old.index.chunks)
