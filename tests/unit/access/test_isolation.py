"""security.isolate: tenant: a caller's BM25 scores are computed with its tenant's own statistics,
so documents of another tenant change nothing a caller sees (with isolate: none they do: the side
channel docs/security.md describes)."""
from __future__ import annotations

import numpy as np
import pytest

from rag.access import Principal
from rag.config import load_config
from rag.errors import ConfigError
from rag.pipeline import Pipeline
from rag.types import Document
from tests.conftest import write_config

A = Principal("kim", (), "acme")


def docs(with_beta: bool) -> list[Document]:
    shared = [Document("shared", "연차 휴가 규정 공통 안내 휴가 신청")]
    acme = [Document("acme-1", "연차 휴가 acme 사내 규정", metadata={"access": {"tenant": "acme"}}),
            Document("acme-2", "출장비 acme 규정", metadata={"access": {"tenant": "acme"}})]
    # beta talks about 휴가 a lot: with global statistics, 휴가 becomes a common (low-idf) word
    beta = [Document(f"beta-{i}", "휴가 휴가 휴가 beta 공지", metadata={"access": {"tenant": "beta"}}) for i in range(8)]
    return shared + acme + (beta if with_beta else [])


def bm25(tmp_path, isolate: str, with_beta: bool, principal=A) -> dict[str, float]:
    p = Pipeline(load_config(write_config(tmp_path, security={"isolate": isolate})))
    p.build_index(docs(with_beta))
    return {c.chunk.document_id: c.score for c in p.components.retriever.bm25("연차 휴가", 10, principal=principal)}


def test_another_tenant_changes_nothing_under_isolation(tmp_path):
    alone = bm25(tmp_path / "a", "tenant", with_beta=False)
    full = bm25(tmp_path / "b", "tenant", with_beta=True)
    assert set(full) == set(alone) == {"shared", "acme-1"}
    assert np.allclose([full[k] for k in sorted(full)], [alone[k] for k in sorted(alone)])


def test_without_isolation_the_scores_count_the_other_tenant(tmp_path):
    alone = bm25(tmp_path / "a", "none", with_beta=False)
    full = bm25(tmp_path / "b", "none", with_beta=True)
    assert set(full) == set(alone)  # the same documents: access control holds either way
    assert not np.allclose([full[k] for k in sorted(full)], [alone[k] for k in sorted(alone)])


def test_a_caller_without_a_tenant_is_scored_on_the_shared_documents(tmp_path):
    anon = bm25(tmp_path / "a", "tenant", with_beta=True, principal=None)
    only_shared = Pipeline(load_config(write_config(tmp_path / "b", security={"isolate": "tenant"})))
    only_shared.build_index(docs(False)[:1])
    ref = {c.chunk.document_id: c.score for c in only_shared.components.retriever.bm25("연차 휴가", 10)}
    assert set(anon) == {"shared"} and np.isclose(anon["shared"], ref["shared"])


def test_milvus_refuses_tenant_isolation(tmp_path):
    pytest.importorskip("pymilvus")
    p = Pipeline(load_config(write_config(tmp_path, security={"isolate": "tenant"},
                                          index={"backend": "milvus", "milvus": {"uri": str(tmp_path / "m.db")}})))
    with pytest.raises(ConfigError, match="isolate: tenant is not available on the milvus backend"):
        p.index
