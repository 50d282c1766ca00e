"""The learned answerability model (features, logistic fit, file) and the gate's answerability signal."""
from __future__ import annotations

import json
import math
import random

import numpy as np
import pytest

from rag.config import GateConfig
from rag.errors import ModelLoadError
from rag.evaluation import auroc
from rag.rerank import Calibration, CrossEncoderReranker, Gate
from rag.rerank import answerability as A
from tests.fakes import FakeScorer
from tests.unit.rerank.test_gate import CANDS, cand


def reranked(query: str, cands=CANDS):
    return CrossEncoderReranker(FakeScorer(), Calibration(1.0, -2.0, "t", 1)).rerank(query, cands)


def test_features_read_the_rerank_and_the_retrievers():
    rr = reranked("vitamin d bone density")
    f = A.features(CANDS, rr)
    logits = sorted((c.logit for c in rr.candidates), reverse=True)
    assert f["top_logit"] == logits[0] and f["margin"] == logits[0] - logits[1]
    assert f["top_dense"] == 0.8 and f["top_bm25"] == pytest.approx(math.log1p(1.0))
    assert f["agree_dense"] == 1.0  # the reranker's first (d0) is also dense's best
    # d2 has the best BM25 score but not the best logit: disagreement
    cands = [cand(0, "vitamin d improves bone density", 0.8, bm25=1.0), cand(2, "stock markets", 0.1, bm25=9.0)]
    assert A.features(cands, reranked("vitamin d bone density", cands))["agree_bm25"] == 0.0


def test_features_without_a_rerank_are_missing_not_zero():
    f = A.features(CANDS, None)
    assert math.isnan(f["top_logit"]) and math.isnan(f["margin"]) and math.isnan(f["agree_dense"])
    assert f["top_dense"] == 0.8


def _toy(n: int, seed: int):
    rng = random.Random(seed)
    rows, labels = [], []
    for _ in range(n):
        y = rng.random() < 0.5
        rows.append({"top_logit": rng.gauss(2.0 if y else 0.0, 1.0), "top_dense": rng.gauss(0.85 if y else 0.8, 0.03),
                     "margin": rng.gauss(0, 1)})
        labels.append(y)
    return rows, labels


def test_fit_separates_and_is_deterministic():
    rows, labels = _toy(400, 1)
    m = A.fit(rows, labels, ("top_logit", "top_dense", "margin"))
    m2 = A.fit(rows, labels, ("top_logit", "top_dense", "margin"))
    assert m == m2
    test_rows, test_labels = _toy(400, 2)
    assert auroc(m.probabilities(test_rows).tolist(), test_labels) > 0.85
    assert m.coef[0] > 0 and m.coef[1] > 0 and abs(m.coef[2]) < m.coef[0]  # the noise feature weighs least
    p = m.probabilities(test_rows)
    assert np.all((p > 0) & (p < 1))


def test_a_missing_feature_contributes_nothing():
    rows, labels = _toy(200, 3)
    m = A.fit(rows, labels, ("top_logit", "top_dense"))
    with_mean = m.probabilities([{"top_logit": 1.0, "top_dense": m.mean[1]}])[0]
    missing = m.probabilities([{"top_logit": 1.0, "top_dense": float("nan")}])[0]
    assert missing == pytest.approx(with_mean)


def test_fit_rejects_one_class_and_unknown_features():
    rows, _ = _toy(10, 4)
    with pytest.raises(ValueError, match="both"):
        A.fit(rows, [True] * 10, ("top_logit",))
    with pytest.raises(ValueError, match="unknown features"):
        A.fit(rows, [True, False] * 5, ("top_logit", "colour"))


def test_save_load_roundtrip_and_bad_files(tmp_path):
    rows, labels = _toy(100, 5)
    m = A.fit(rows, labels, ("top_logit",), reranker="x")
    A.save(m, tmp_path / A.FILENAME)
    assert A.load(tmp_path / A.FILENAME) == m
    with pytest.raises(ModelLoadError, match="not found"):
        A.load(tmp_path / "missing.json")
    (tmp_path / "bad.json").write_text(json.dumps({"features": ["top_logit"], "mean": [0], "scale": [1], "coef": []}))
    with pytest.raises(ModelLoadError):
        A.load(tmp_path / "bad.json")


def test_gate_with_the_answerability_signal():
    rows, labels = _toy(300, 6)
    m = A.fit(rows, labels, ("top_logit", "top_dense"))
    rr = reranked("vitamin d bone density")
    p = m.probability(CANDS, rr)
    yes = Gate(GateConfig(signal="answerability", threshold=p - 1e-6), m).decide(CANDS, rr)
    no = Gate(GateConfig(signal="answerability", threshold=p + 1e-6), m).decide(CANDS, rr)
    assert yes.answer and yes.signal == "answerability" and yes.top_score == pytest.approx(p)
    assert not no.answer and no.reason == "below_threshold"
    # The reranker did not run: the fallback signal decides, as with the probability signal.
    fb = Gate(GateConfig(signal="answerability", threshold=0.99, fallback_signal="dense", fallback_threshold=0.5),
              m).decide(CANDS, None)
    assert fb.answer and fb.signal == "dense"
    with pytest.raises(ValueError, match="answerability"):
        Gate(GateConfig(signal="answerability"))
