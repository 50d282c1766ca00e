"""Data tier: small checks on the real evaluation sets (skipped where ../shared/data is absent)."""
from __future__ import annotations

import pytest

from rag.config import load_config
from rag.evaluation.retrieval import evaluate_retrieval
from rag.pipeline import Pipeline

from tests.conftest import ROOT

pytestmark = pytest.mark.data


def test_korquad_bm25_bigrams_beat_whitespace(shared_data, tmp_path):
    base = load_config(ROOT / "configs" / "ko.yaml").with_overrides(
        {"embedding.backend": "hashing", "embedding.cache_dir": str(tmp_path)})
    scores = {}
    for analyzer in ("korean_bigram", "whitespace"):
        p = Pipeline(base.with_overrides({"bm25.analyzer": analyzer}))
        res = evaluate_retrieval(p, shared_data / "korquad1", "test", max_queries=400)
        scores[analyzer] = res.metrics["bm25"]["ndcg@10"]
    # Full test split, measured: 0.952 (bigram) vs 0.821 (whitespace).
    assert scores["korean_bigram"] > 0.9
    assert scores["korean_bigram"] > scores["whitespace"] + 0.05
