"""The version policy (retrieval.versions): natural version order, latest / as_of / all, and the
superseded list through the whole pipeline (demo: hr-leave-policy 2024.1 vs 2025.1)."""
from __future__ import annotations

import datetime

import pytest

from rag.config import ConfigError, RetrievalConfig, VersionsAsOf, load_config
from rag.index.version_order import version_key
from rag.retrieval.versions import VersionInfo, allowed_versions, effective_date, filter_versions, parse_date
from rag.types import Candidate, Chunk


def info(doc: str, version: str, **meta) -> VersionInfo:
    return VersionInfo(doc, version, effective_date(version, meta))


def cand(doc: str, version: str, n: int = 0) -> Candidate:
    ch = Chunk(f"{doc}:{version}:{n}", doc, version, n, "text", 0, 4)
    return Candidate(ch, 1.0 - n / 10, n + 1, ())


def test_versions_compare_naturally():
    assert sorted(["9", "10", "2"], key=version_key) == ["2", "9", "10"]
    assert version_key("2026-01-02") > version_key("2023-01-01")
    assert version_key("2025.1") > version_key("2024.1")
    assert version_key("v10") > version_key("v9")


def test_latest_keeps_one_version_per_document():
    infos = [info("law", "2023-01-01"), info("law", "2026-01-02"), info("hr", "2024.1"), info("hr", "2025.1"),
             info("solo", "1")]
    assert allowed_versions(infos, "latest") == {"hr": "2025.1", "law": "2026-01-02", "solo": "1"}
    assert allowed_versions(infos, "all") is None


def test_as_of_picks_the_version_in_force_on_that_date():
    infos = [info("law", "2023-01-01"), info("law", "2026-01-02"),
             info("hr", "2024.1", effective_date="2024-01-01"), info("hr", "2025.1", effective_date="2025-01-01")]
    got = allowed_versions(infos, VersionsAsOf(as_of="2025-06-30"))
    assert got == {"hr": "2025.1", "law": "2023-01-01"}
    early = allowed_versions(infos, VersionsAsOf(as_of="2022-01-01"))
    assert early == {"hr": None, "law": None}  # nothing was in force yet
    # undated versions: the latest, since there is nothing to compare the date with
    assert allowed_versions([info("x", "a"), info("x", "b")], VersionsAsOf(as_of="2020-01-01")) == {"x": "b"}


def test_dates_parse_in_common_forms():
    assert parse_date("2024.6.28") == parse_date("2024-06-28") == parse_date("2024/06/28") == datetime.date(2024, 6, 28)
    assert parse_date("2024.1") is None and parse_date("v2") is None and parse_date("2024-13-40") is None
    assert effective_date("2", {"valid_from": "2020-02-02"}) == datetime.date(2020, 2, 2)


def test_filter_versions_reports_what_it_set_aside():
    cands = [cand("hr", "2024.1", 0), cand("hr", "2025.1", 1), cand("hr", "2024.1", 2), cand("new", "1", 3)]
    kept, superseded = filter_versions(cands, {"hr": "2025.1"})
    assert [c.chunk.evidence_id for c in kept] == ["hr:2025.1:1", "new:1:3"]  # unknown documents stay
    assert len(superseded) == 1
    s = superseded[0]
    assert (s.document_id, s.version, s.current_version, s.evidence_ids) == (
        "hr", "2024.1", "2025.1", ("hr:2024.1:0", "hr:2024.1:2"))
    assert s.to_json()["current_version"] == "2025.1"
    assert filter_versions(cands, None) == (tuple(cands), ())


def test_config_accepts_latest_all_and_as_of_and_rejects_bad_dates(tmp_path):
    assert RetrievalConfig().versions == "latest"
    assert RetrievalConfig(versions="all").versions == "all"
    assert RetrievalConfig(versions={"as_of": "2025-01-01"}).versions.as_of == "2025-01-01"
    with pytest.raises(ConfigError, match="as_of"):
        RetrievalConfig(versions={"as_of": "next tuesday"})
    with pytest.raises(ConfigError):
        RetrievalConfig(versions="newest")


def test_superseded_leave_policy_is_never_answered(tmp_path):
    """Demo q06: the 2024.1 leave policy said 5 days; 2025.1 says 10. Only 2025.1 may be cited, and
    the result says that an older version was set aside."""
    from rag.pipeline import Pipeline
    from tests.conftest import write_config

    p = Pipeline(load_config(write_config(tmp_path, gate={"fallback_threshold": -1.0},
                                          retrieval={"candidates": 30})))
    p.build_index()
    res = p.answer("사용하지 못한 연차는 며칠까지 다음 해로 이월할 수 있나요?")
    assert all(c.document_version == "2025.1" for c in res.citations if c.document_id == "hr-leave-policy")
    assert [(s.document_id, s.version, s.current_version) for s in res.superseded] == [
        ("hr-leave-policy", "2024.1", "2025.1")]
    assert res.to_json()["superseded"][0]["version"] == "2024.1"
    old_ids = set(res.superseded[0].evidence_ids)
    assert old_ids and all(d["reason"] == "superseded" for d in res.trace.manifest.to_json()["dropped"]
                           if d["evidence_id"] in old_ids)
    assert old_ids <= {d["evidence_id"] for d in res.trace.manifest.to_json()["dropped"]}
    assert "5일" not in res.answer
    every = Pipeline(p.config.with_overrides({"retrieval.versions": "all"}), embedder=p.components.embedder, index=p.index)
    assert every.answer("사용하지 못한 연차는 며칠까지 다음 해로 이월할 수 있나요?").superseded == ()


def test_a_newer_version_added_to_a_live_index_takes_over(tmp_path):
    """The policy follows index updates: after adding 2026.1, answers come from it and 2025.1 is
    listed as superseded."""
    from rag.pipeline import Pipeline
    from rag.types import Document
    from tests.conftest import write_config

    p = Pipeline(load_config(write_config(tmp_path, gate={"fallback_threshold": -1.0},
                                          retrieval={"candidates": 30})))
    p.build_index()
    q = "사용하지 못한 연차는 며칠까지 다음 해로 이월할 수 있나요?"
    assert {c.document_version for c in p.answer(q).citations if c.document_id == "hr-leave-policy"} <= {"2025.1"}
    text = "사용하지 못한 연차는 최대 12일까지 다음 해로 이월할 수 있으며, 이월된 연차는 다음 해 9월 30일까지 사용해야 한다."
    p.add_documents([Document("hr-leave-policy", text, "2026.1", "연차 휴가 규정 (2026년판)")])
    res = p.answer(q)
    assert {c.document_version for c in res.citations if c.document_id == "hr-leave-policy"} <= {"2026.1"}
    assert ("hr-leave-policy", "2025.1", "2026.1") in {(s.document_id, s.version, s.current_version)
                                                       for s in res.superseded}


def test_the_version_policy_cache_follows_the_documents_and_a_copy_keeps_its_own():
    """VersionPolicy recomputes when the index's records are another mapping; a copy (a pinned view's,
    Components.with_index) starts from the same cache, and recomputing it leaves the original's alone."""
    import copy
    from types import SimpleNamespace

    from rag.access import ReaderScope
    from rag.retrieval.versions import VersionPolicy

    def records(*versions: str) -> dict:
        return {("law", v): SimpleNamespace(id="law", version=v, meta={}, access=None) for v in versions}

    scope = ReaderScope(None, "public")
    policy = VersionPolicy(RetrievalConfig())
    old, new = records("2024-01-01"), records("2024-01-01", "2025-01-01")
    assert policy.allowed(old, scope) == {"law": "2024-01-01"}
    view = copy.copy(policy)
    assert view.allowed(new, scope) == {"law": "2025-01-01"}
    assert policy._state is not None and policy._state[0] is old  # the original still caches the old records
    assert policy.allowed(old, scope) == {"law": "2024-01-01"} and view.allowed(new, scope) == {"law": "2025-01-01"}
