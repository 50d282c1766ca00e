"""Milvus: a document's access tenant is a field of every chunk row (with
``index.milvus.tenant_partitions`` the collection's partition key), and a search scoped to one
tenant names its tenants in the filter expression, so the incarnation lists leave every other
tenant out (and, with partitions, the engine reads only those tenants' partitions)."""
from __future__ import annotations

import pytest

from rag.access import Principal, ReaderScope
from rag.config import load_config
from rag.index.layout import DocumentRecord
from rag.index.milvus.records import View, reader_tenants, view_filter
from rag.pipeline import Pipeline
from rag.types import Document, SearchFilter
from tests.conftest import write_config

ACME = Principal("kim", ("hr",), "acme")


def corpus() -> list[Document]:
    beta = [Document(f"beta-{i}", f"연차 휴가 beta 공지 canarybeta{i}", metadata={"access": {"tenant": "beta"}})
            for i in range(3)]
    return [Document("shared", "연차 휴가 규정 공통 안내"),
            Document("acme-all", "연차 휴가 acme 사내 공지", metadata={"access": {"tenant": "acme"}}),
            Document("acme-hr", "연차 휴가 acme 인사 기준", metadata={"access": {"groups": ["hr"], "tenant": "acme"}}),
            Document("acme-ops", "연차 휴가 acme 운영", metadata={"access": {"groups": ["ops"], "tenant": "acme"}}),
            Document("any-hr", "연차 휴가 인사 공통", metadata={"access": {"groups": ["hr"]}})] + beta


def record(doc_id: str, access: str | None) -> DocumentRecord:
    return DocumentRecord(doc_id, "1", "", "", "0" * 64, 1, access or "{}")


def test_reader_tenants():
    scope = lambda p: ReaderScope(p)  # noqa: E731
    assert reader_tenants(SearchFilter(readers=(scope(ACME),))) == ("", "acme")
    assert reader_tenants(SearchFilter(readers=(scope(None),))) == ("",)
    assert reader_tenants(SearchFilter(readers=(scope(Principal("u")),))) == ("",)
    two = SearchFilter(readers=(scope(ACME), scope(Principal("x", (), "beta"))))
    assert reader_tenants(two) == ("",)  # a row must be readable by both: only untenanted ones can be


def test_view_filter_names_the_tenants_and_lists_only_theirs():
    docs = {("a", "1"): record("a", '{"access": {"tenant": "acme", "groups": ["ops"]}}'),
            ("b", "1"): record("b", '{"access": {"tenant": "beta"}}'),
            ("c", "1"): record("c", None),
            ("d", "1"): record("d", '{"access": {"tenant": "acme"}}')}
    view = View(3, 4, (), docs, {k: f"1:{k[0]}:1" for k in docs})
    where = SearchFilter(readers=(ReaderScope(ACME),))
    expr = view_filter(view, where, restricted=True, tenant_key=True)
    assert 'tenant in ["", "acme"]' in expr
    assert "1:b:1" not in expr  # beta's incarnation: the tenant clause keeps it out, no list names it
    assert 'not (inc in ["1:a:1"])' in expr  # acme's ops document, which kim may not read
    old = view_filter(view, where, restricted=True, tenant_key=False)  # an index made before the key
    assert old == 'gen <= 3 and inc in ["1:c:1", "1:d:1"]'  # no tenant clause: the readable ones listed


@pytest.mark.parametrize("partitions", [False, True])
def test_milvus_searches_only_the_callers_tenant(tmp_path, monkeypatch, partitions):
    pytest.importorskip("milvus_lite", reason="milvus-lite is not installed (pip install 'rag[milvus]')")
    cfg = load_config(write_config(tmp_path, index={"backend": "milvus", "milvus": {
        "uri": str(tmp_path / "m.db"), "collection": "tk", "tenant_partitions": partitions}}))
    p = Pipeline(cfg)
    p.build_index(corpus())
    index = p.index
    fields = {f["name"]: f for f in index.engine.client.describe_collection(index.collection)["fields"]}
    assert bool(fields["tenant"].get("is_partition_key")) is partitions
    sent: list[str] = []
    real = index.engine.client.search

    def spy(*args, **kwargs):
        sent.append(kwargs.get("filter", ""))
        return real(*args, **kwargs)

    monkeypatch.setattr(index.engine.client, "search", spy)
    res = p.search("연차 휴가", principal=ACME)
    assert {c.chunk.document_id for c in res.candidates} == {"shared", "acme-all", "acme-hr", "any-hr"}
    assert sent and all('tenant in ["", "acme"]' in f for f in sent)
    assert not any("beta" in f for f in sent)  # no beta incarnation is listed: its partitions are not read
    sent.clear()
    anon = p.search("연차 휴가")
    assert {c.chunk.document_id for c in anon.candidates} == {"shared"}
    assert sent and all('tenant in [""]' in f for f in sent)
    beta = p.search("연차 휴가", principal=Principal("lee", (), "beta"))
    assert {c.chunk.document_id for c in beta.candidates} == {"shared"} | {f"beta-{i}" for i in range(3)}


def test_without_partitions_bm25_ranks_as_the_local_backend(tmp_path):
    """The engine keeps BM25 statistics per partition: with the tenant as partition key a tenant's
    scores would be computed on other statistics than the untenanted documents' (docs/milvus.md);
    without it, a scoped BM25 search ranks as on the local backend."""
    pytest.importorskip("milvus_lite", reason="milvus-lite is not installed (pip install 'rag[milvus]')")
    ranked = {}
    for name, index in (("local", {}), ("milvus", {"index": {"backend": "milvus", "milvus": {
            "uri": str(tmp_path / "m.db"), "collection": "tk"}}})):
        p = Pipeline(load_config(write_config(tmp_path / name, **index)))
        p.build_index(corpus())
        ranked[name] = [h.chunk.document_id for h in p.components.retriever.bm25("연차 휴가 acme 인사", 10, principal=ACME)]
    assert ranked["milvus"] == ranked["local"] and ranked["local"][0] == "acme-hr"
