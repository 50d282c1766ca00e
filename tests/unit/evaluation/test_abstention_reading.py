"""rag eval-abstention reports the question's reading beside the score signals, from the gate's own
decisions (no second reading)."""
from __future__ import annotations

from rag.config import load_config
from rag.evaluation.abstention import evaluate_abstention, score_questions
from rag.evaluation.datasets import load_labelled
from rag.pipeline import Pipeline
from tests.conftest import ROOT, write_config


def test_the_reading_is_reported_from_the_gates_decisions(tmp_path, monkeypatch):
    p = Pipeline(load_config(write_config(tmp_path, gate={"fallback_signal": "bm25", "fallback_threshold": 0.5})))
    scored = score_questions(p, load_labelled(ROOT / "tests" / "fixtures" / "tiny_abstention.jsonl"))
    calls = []
    real = p.components.gate.decide
    monkeypatch.setattr(p.components.gate, "decide", lambda *a, **k: calls.append(1) or real(*a, **k))
    out = evaluate_abstention(p, scored)
    assert len(calls) == len(scored)  # one decision per question, read once
    aurocs = out["signals_auroc"]
    assert {"key_term_coverage", f"read_{p.config.gate.signal}"} <= set(aurocs)
    assert sum(out["reasons"].get(r, 0) for r in ("asked_fact_missing", "key_terms_missing")) > 0
    off = Pipeline(load_config(write_config(tmp_path / "off", gate={"fallback_signal": "bm25",
                                                                   "fallback_threshold": 0.5,
                                                                   "read_question": False})))
    assert "key_term_coverage" not in evaluate_abstention(off, scored)["signals_auroc"]
