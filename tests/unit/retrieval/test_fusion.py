"""Fusion: RRF and weighted (zscore / minmax), hand-computed."""
from __future__ import annotations

import itertools
import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rag.retrieval import fuse
from rag.types import Chunk, ScoredChunk


def _chunk(eid: str) -> Chunk:
    doc, ver, n = eid.split(":")
    return Chunk(evidence_id=eid, document_id=doc, document_version=ver, ordinal=int(n), text=f"text of {eid}", start_char=0, end_char=10)


def _ranked(*pairs: tuple[str, float]) -> list[ScoredChunk]:
    """(evidence_id, score) pairs, best first -> ScoredChunks with 1-based ranks."""
    return [ScoredChunk(_chunk(e), s, r) for r, (e, s) in enumerate(pairs, 1)]


A, B, C, D = "a:1:0", "b:1:0", "c:1:0", "d:1:0"


def _lists():
    return {
        "bm25": _ranked((A, 12.5), (B, 7.0), (C, 3.25)),
        "dense": _ranked((B, 0.91), (D, 0.80)),
    }


# -- RRF -----------------------------------------------------------------------
def test_rrf_hand_computed_with_weights():
    out = fuse(_lists(), method="rrf", k=60, weights={"bm25": 1.0, "dense": 2.0})
    expected = {A: 1 / 61, B: 1 / 62 + 2 / 61, C: 1 / 63, D: 2 / 62}
    assert [c.chunk.evidence_id for c in out] == [B, D, A, C]
    for c in out:
        assert c.score == pytest.approx(expected[c.chunk.evidence_id], rel=1e-12)
    assert [c.rank for c in out] == [1, 2, 3, 4]
    assert out[0].score == pytest.approx(0.0489159175, abs=1e-9)  # 1/62 + 2/61


def test_rrf_default_weights_and_k():
    out = fuse(_lists())
    scores = {c.chunk.evidence_id: c.score for c in out}
    assert scores == pytest.approx({A: 1 / 61, B: 1 / 62 + 1 / 61, C: 1 / 63, D: 1 / 62}, rel=1e-12)
    out_k1 = fuse(_lists(), k=1)
    assert {c.chunk.evidence_id: c.score for c in out_k1} == pytest.approx(
        {A: 1 / 2, B: 1 / 3 + 1 / 2, C: 1 / 4, D: 1 / 3}, rel=1e-12
    )


def test_candidates_keep_per_retriever_rank_and_score():
    out = {c.chunk.evidence_id: c for c in fuse(_lists())}
    b = out[B]
    assert [h.retriever for h in b.hits] == ["bm25", "dense"]
    assert (b.hit("bm25").rank, b.hit("bm25").score) == (2, 7.0)
    assert (b.hit("dense").rank, b.hit("dense").score) == (1, pytest.approx(0.91))
    # a document in only one list is present, with only that list's hit
    d = out[D]
    assert d.hit("bm25") is None
    assert (d.hit("dense").rank, d.hit("dense").score) == (2, pytest.approx(0.80))
    assert len(d.hits) == 1
    assert out[C].chunk == _chunk(C)


def test_ties_break_by_evidence_id_ascending():
    x, y = "doc:1:9", "doc:1:10"  # string order: "doc:1:10" < "doc:1:9"
    lists = {"p": _ranked((x, 5.0), (y, 4.0)), "q": _ranked((y, 0.9), (x, 0.8))}
    out = fuse(lists)
    assert out[0].score == out[1].score
    assert [c.chunk.evidence_id for c in out] == ["doc:1:10", "doc:1:9"]


def test_result_does_not_depend_on_dict_insertion_order():
    lists = {
        "bm25": _ranked((A, 3.0), (B, 2.0), (C, 1.0)),
        "dense": _ranked((C, 0.9), (A, 0.5)),
        "sparse": _ranked((D, 9.0), (B, 1.0), (A, 0.1)),
    }
    w = {"bm25": 0.7, "dense": 1.3, "sparse": 0.4}
    for method, norm in [("rrf", "zscore"), ("weighted", "zscore"), ("weighted", "minmax")]:
        results = [
            fuse(dict(perm), method=method, normalization=norm, weights=w)
            for perm in itertools.permutations(lists.items())
        ]
        assert all(r == results[0] for r in results), method


def test_limit():
    full = fuse(_lists())
    assert fuse(_lists(), limit=2) == full[:2]
    assert fuse(_lists(), limit=0) == []
    assert fuse(_lists(), limit=100) == full


def test_empty_inputs():
    assert fuse({}) == []
    assert fuse({"bm25": [], "dense": []}) == []
    assert fuse({"bm25": []}, method="weighted") == []


# -- weighted: zscore ------------------------------------------------------------------
def test_weighted_zscore_hand_computed_with_missing_rule():
    lists = {
        "a": _ranked((A, 3.0), (B, 2.0), (C, 1.0)),  # mean 2, sd sqrt(2/3): z = +-sqrt(1.5), 0
        "b": _ranked((D, 10.0), (A, 6.0)),  # mean 8, sd 2: z = +1, -1
    }
    out = fuse(lists, method="weighted", normalization="zscore", weights={"a": 1.0, "b": 0.5})
    z = math.sqrt(1.5)
    expected = {
        A: z + 0.5 * -1,
        B: 0.0 + 0.5 * -1,  # missing from "b": gets b's lowest normalized value (-1)
        C: -z + 0.5 * -1,
        D: -z + 0.5 * 1,  # missing from "a": gets a's lowest normalized value (-sqrt(1.5))
    }
    assert [c.chunk.evidence_id for c in out] == [A, B, D, C]
    for c in out:
        assert c.score == pytest.approx(expected[c.chunk.evidence_id], abs=1e-12)
    assert out[2].hit("a") is None  # a filled-in value is not a hit


def test_weighted_zscore_is_the_default_normalization():
    lists = _lists()
    assert fuse(lists, method="weighted") == fuse(lists, method="weighted", normalization="zscore")


def test_weighted_zscore_constant_list_contributes_nothing():
    lists = {"flat": _ranked((A, 0.5), (B, 0.5)), "real": _ranked((B, 2.0), (A, 1.0))}
    out = fuse(lists, method="weighted")
    assert [c.chunk.evidence_id for c in out] == [B, A]
    assert [c.score for c in out] == pytest.approx([1.0, -1.0])


# -- weighted: minmax ------------------------------------------------------------------
def test_minmax_flat_weak_list_is_not_stretched_to_one():
    flat = {"weak": _ranked((A, 0.30), (B, 0.29), (C, 0.28))}
    out = fuse(flat, method="weighted", normalization="minmax")
    assert [c.chunk.evidence_id for c in out] == [A, B, C]
    assert out[0].score < 0.5
    # span = max(0.30 - 0.28, 0.30 / 2) = 0.15
    assert [c.score for c in out] == pytest.approx([0.02 / 0.15, 0.01 / 0.15, 0.0], abs=1e-9)


def test_minmax_wide_list_spans_zero_to_one():
    out = fuse({"s": _ranked((A, 10.0), (B, 4.0), (C, 0.0))}, method="weighted", normalization="minmax")
    assert [c.score for c in out] == pytest.approx([1.0, 0.4, 0.0])


def test_minmax_strong_list_outweighs_flat_weak_list():
    lists = {
        "weak": _ranked((C, 0.30), (A, 0.29), (B, 0.28)),
        "strong": _ranked((A, 10.0), (B, 4.0), (C, 0.0)),
    }
    out = fuse(lists, method="weighted", normalization="minmax")
    assert [c.chunk.evidence_id for c in out] == [A, B, C]
    assert out[0].score == pytest.approx(1.0 + 0.01 / 0.15)


def test_minmax_missing_gets_list_minimum():
    lists = {"x": _ranked((A, 4.0), (B, 2.0)), "y": _ranked((C, 1.0), (A, 0.0))}
    out = {c.chunk.evidence_id: c.score for c in fuse(lists, method="weighted", normalization="minmax")}
    # x: span max(2, 2) -> A 1, B 0 (C missing -> 0); y: span max(1, .5) -> C 1, A 0 (B missing -> 0)
    assert out == pytest.approx({A: 1.0, B: 0.0, C: 1.0})


# -- errors ----------------------------------------------------------------------------
@pytest.mark.parametrize("method", ["borda", "", "RRF"])
def test_unknown_method_raises(method):
    with pytest.raises(ValueError, match="unknown fusion method"):
        fuse(_lists(), method=method)


def test_unknown_normalization_raises():
    with pytest.raises(ValueError, match="unknown normalization"):
        fuse(_lists(), method="weighted", normalization="softmax")


# -- properties -------------------------------------------------------------------------
_eids = [f"d{i}:1:0" for i in range(8)]


@st.composite
def ranked_lists(draw):
    out = {}
    for name in draw(st.lists(st.sampled_from(["bm25", "dense", "x"]), unique=True, max_size=3)):
        ids = draw(st.lists(st.sampled_from(_eids), unique=True, max_size=6))
        scores = sorted(draw(st.lists(st.floats(-10, 10), min_size=len(ids), max_size=len(ids))), reverse=True)
        out[name] = _ranked(*zip(ids, scores))
    return out


@settings(max_examples=150, deadline=None)
@given(lists=ranked_lists(), method=st.sampled_from(["rrf", "weighted"]), norm=st.sampled_from(["zscore", "minmax"]))
def test_fusion_properties(lists, method, norm):
    out = fuse(lists, method=method, normalization=norm)
    ids = [c.chunk.evidence_id for c in out]
    assert sorted(ids) == sorted({it.chunk.evidence_id for items in lists.values() for it in items})
    assert [c.rank for c in out] == list(range(1, len(out) + 1))
    for a, b in zip(out, out[1:]):
        assert (a.score > b.score) or (a.score == b.score and a.chunk.evidence_id < b.chunk.evidence_id)
    for c in out:
        for name, items in lists.items():
            src = next((it for it in items if it.chunk.evidence_id == c.chunk.evidence_id), None)
            h = c.hit(name)
            assert (h is None) == (src is None)
            if src is not None:
                assert (h.rank, h.score) == (src.rank, src.score)
    if method == "rrf":
        for c in out:
            assert c.score == pytest.approx(sum(1 / (60 + h.rank) for h in c.hits), rel=1e-12)
