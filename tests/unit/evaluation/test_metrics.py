"""Metrics: hand-computed values and agreement with ir_measures (trec_eval)."""
from __future__ import annotations

import math
import random

import pytest

from rag.evaluation.metrics import METRICS, dedupe_docs, mean_metrics, mrr_at_k, ndcg_at_k, recall_at_k

L3 = math.log2(3)


# -- nDCG ----------------------------------------------------------------------
def test_ndcg_graded_hand_computed():
    rels = {"a": 2, "b": 1, "c": 0}
    # ranks: x (0), b (1), a (2): DCG = 1/log2(3) + 2/log2(4); IDCG = 2 + 1/log2(3)
    assert ndcg_at_k(["x", "b", "a"], rels, 10) == pytest.approx((1 / L3 + 1.0) / (2 + 1 / L3))
    assert ndcg_at_k(["x", "b", "a"], rels, 10) == pytest.approx(0.6199062333, abs=1e-9)


def test_ndcg_perfect_and_empty():
    rels = {"a": 3, "b": 2, "c": 1}
    assert ndcg_at_k(["a", "b", "c", "z"], rels, 10) == pytest.approx(1.0)
    assert ndcg_at_k([], rels, 10) == 0.0
    assert ndcg_at_k(["z", "y"], rels, 10) == 0.0
    assert ndcg_at_k(["a"], {"a": 0}, 10) == 0.0  # no relevant documents at all
    assert ndcg_at_k(["a"], {}, 10) == 0.0


def test_ndcg_cutoff_ignores_documents_below_k():
    rels = {"a": 1, "b": 3}
    ranked = ["a"] + [f"n{i}" for i in range(9)] + ["b"]  # b at rank 11
    # DCG@10 = 1; IDCG@10 = 3 + 1/log2(3)
    assert ndcg_at_k(ranked, rels, 10) == pytest.approx(1 / (3 + 1 / L3))
    # ideal is also cut at k: with k=1 only the best grade counts
    assert ndcg_at_k(["a", "b"], rels, 1) == pytest.approx(1 / 3)


def test_ndcg_uses_linear_gain():
    # grades 3 and 1 in swapped order: gain = grade (trec_eval), not 2**grade - 1
    rels = {"a": 3, "b": 1}
    got = ndcg_at_k(["b", "a"], rels, 10)
    assert got == pytest.approx((1 + 3 / L3) / (3 + 1 / L3))
    assert got != pytest.approx((1 + 7 / L3) / (7 + 1 / L3))


# -- recall ------------------------------------------------------------------------
def test_recall_hand_computed():
    rels = {"a": 1, "b": 2, "c": 1, "d": 0}
    ranked = ["a", "x", "d", "b", "y"]
    assert recall_at_k(ranked, rels, 1) == pytest.approx(1 / 3)
    assert recall_at_k(ranked, rels, 3) == pytest.approx(1 / 3)  # d is judged non-relevant
    assert recall_at_k(ranked, rels, 4) == pytest.approx(2 / 3)
    assert recall_at_k(ranked, rels, 100) == pytest.approx(2 / 3)
    assert recall_at_k(ranked + ["c"], rels, 100) == pytest.approx(1.0)
    assert recall_at_k(ranked, {"d": 0}, 10) == 0.0
    assert recall_at_k([], rels, 10) == 0.0


# -- MRR ---------------------------------------------------------------------------
def test_mrr_hand_computed():
    rels = {"a": 1, "b": 2}
    assert mrr_at_k(["a", "b"], rels, 10) == 1.0
    assert mrr_at_k(["x", "y", "b", "a"], rels, 10) == pytest.approx(1 / 3)
    assert mrr_at_k(["x", "d"], {"d": 0}, 10) == 0.0  # grade 0 is not relevant
    ranked = [f"n{i}" for i in range(10)] + ["a"]  # first relevant at rank 11
    assert mrr_at_k(ranked, rels, 10) == 0.0
    assert mrr_at_k(ranked, rels, 11) == pytest.approx(1 / 11)


# -- helpers -------------------------------------------------------------------------
def test_dedupe_docs_keeps_first_rank():
    assert dedupe_docs(["d1", "d2", "d1", "d3", "d2"]) == ["d1", "d2", "d3"]
    assert dedupe_docs([]) == []


def test_mean_metrics_averages_over_qrels_and_missing_query_scores_zero():
    qrels = {"q1": {"a": 1}, "q2": {"b": 1}}
    runs = {"q1": ["a"], "q3": ["b"]}  # q2 has no run; q3 is not judged and is ignored
    m = mean_metrics(runs, qrels)
    assert set(m) == set(METRICS) == {"ndcg@10", "recall@10", "recall@100", "mrr@10"}
    assert m == {"ndcg@10": 0.5, "recall@10": 0.5, "recall@100": 0.5, "mrr@10": 0.5}
    assert mean_metrics(runs, {}) == {k: 0.0 for k in METRICS}


def test_mean_metrics_rounds_to_six_places():
    m = mean_metrics({"q": ["x", "x2", "a"]}, {"q": {"a": 1}})
    assert m["mrr@10"] == 0.333333
    assert m["ndcg@10"] == round(1 / 2, 6)  # 1/log2(4)


# -- agreement with ir_measures (pytrec_eval / trec_eval) -----------------------------------
def _random_fixture(seed: int = 1234, n_queries: int = 20, pool: int = 150):
    rng = random.Random(seed)
    docs = [f"D{i:03d}" for i in range(pool)]
    qrels, runs = {}, {}
    for q in range(n_queries):
        qid = f"q{q:02d}"
        judged = rng.sample(docs, rng.randint(2, 12))
        grades = {d: rng.choice([0, 1, 1, 2, 3]) for d in judged}
        grades[judged[0]] = rng.choice([1, 2, 3])  # at least one relevant document
        qrels[qid] = grades
        # runs of varied depth (some beyond 100) that contain some judged docs
        ranked = rng.sample(docs, rng.randint(1, pool))
        runs[qid] = ranked
    return qrels, runs


def test_agrees_with_ir_measures():
    ir_measures = pytest.importorskip("ir_measures")
    from ir_measures import RR, R, nDCG

    qrels, runs = _random_fixture()
    # ir_measures needs scores: strictly descending by rank, no ties (trec_eval breaks ties by docno)
    run_scores = {q: {d: float(len(r) - i) for i, d in enumerate(r)} for q, r in runs.items()}
    measures = {nDCG @ 10: lambda r, q: ndcg_at_k(r, q, 10), R @ 100: lambda r, q: recall_at_k(r, q, 100), RR @ 10: lambda r, q: mrr_at_k(r, q, 10)}
    assert str(RR @ 10) == "RR@10" and str(R @ 100) == "R@100" and str(nDCG @ 10) == "nDCG@10"

    got = {(m.query_id, m.measure): m.value for m in ir_measures.iter_calc(list(measures), qrels, run_scores)}
    assert len(got) == 3 * len(qrels)
    nonzero = 0
    for qid in qrels:
        for measure, ours in measures.items():
            mine = ours(runs[qid], qrels[qid])
            assert mine == pytest.approx(got[(qid, measure)], abs=1e-6), (qid, str(measure))
            nonzero += mine > 0
    assert nonzero >= 20  # the fixture exercises non-trivial values
    # aggregate means agree too (mean_metrics rounds to 6 places)
    agg = ir_measures.calc_aggregate(list(measures), qrels, run_scores)
    ours = mean_metrics(runs, qrels)
    assert ours["ndcg@10"] == pytest.approx(agg[nDCG @ 10], abs=1e-6)
    assert ours["recall@100"] == pytest.approx(agg[R @ 100], abs=1e-6)
    assert ours["mrr@10"] == pytest.approx(agg[RR @ 10], abs=1e-6)


def test_agrees_with_ir_measures_on_hand_example():
    ir_measures = pytest.importorskip("ir_measures")
    from ir_measures import RR, R, nDCG

    qrels = {"q": {"a": 2, "b": 1, "c": 0}}
    run = {"q": {"x": 3.0, "b": 2.0, "a": 1.0}}
    agg = ir_measures.calc_aggregate([nDCG @ 10, R @ 100, RR @ 10], qrels, run)
    assert agg[nDCG @ 10] == pytest.approx(ndcg_at_k(["x", "b", "a"], qrels["q"], 10), abs=1e-9)
    assert agg[R @ 100] == pytest.approx(recall_at_k(["x", "b", "a"], qrels["q"], 100)) == 1.0
    assert agg[RR @ 10] == pytest.approx(mrr_at_k(["x", "b", "a"], qrels["q"], 10)) == 0.5
