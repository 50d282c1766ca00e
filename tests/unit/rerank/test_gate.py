"""The abstention gate's policy and the abstention metrics (AUROC, threshold calibration)."""
from __future__ import annotations

import itertools
import json
import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rag.calibrate import calibrate_threshold
from rag.evaluation import auroc, gate_rates, load_labelled, risk_coverage
from rag.config import GateConfig
from rag.errors import DatasetError, InputError
from rag.rerank import Gate
from rag.rerank import Calibration, CrossEncoderReranker
from rag.types import Candidate, Chunk, RetrieverHit
from tests.fakes import FakeScorer


def cand(i: int, text: str, dense: float, bm25: float = 1.0) -> Candidate:
    ch = Chunk(f"d{i}:1:0", f"d{i}", "1", 0, text, 0, len(text))
    return Candidate(ch, dense, i + 1, (RetrieverHit("bm25", i + 1, bm25), RetrieverHit("dense", i + 1, dense)))


CANDS = [cand(0, "vitamin d improves bone density", 0.8), cand(1, "vitamin c and colds", 0.6),
         cand(2, "stock markets", 0.1)]


def reranked(query="vitamin d bone density", cands=CANDS):
    # Calibration(a=1, b=-2): the fake logit counts matching words, so p(top) = sigmoid(4 - 2) ~ 0.88.
    return CrossEncoderReranker(FakeScorer(), Calibration(1.0, -2.0, "t", 1)).rerank(query, cands)


def test_answer_when_top_probability_reaches_threshold():
    rr = reranked()
    d = Gate(GateConfig(threshold=0.8)).decide(CANDS, rr)
    assert d.answer and d.reason == "answer" and d.signal == "probability"
    assert d.top_score == pytest.approx(rr.top_probability) and d.scores[0] == pytest.approx(d.top_score, abs=1e-6)


def test_below_threshold_and_too_few_supporting():
    rr = reranked()
    d = Gate(GateConfig(threshold=0.95)).decide(CANDS, rr)
    assert not d.answer and d.reason == "below_threshold" and d.top_score < 0.95
    d2 = Gate(GateConfig(threshold=0.5, min_supporting=2, support_threshold=0.7)).decide(CANDS, rr)
    assert not d2.answer and d2.reason == "too_few_supporting" and d2.supporting == 1


def test_fallback_signal_when_reranker_did_not_run():
    rr = reranked("연차 휴가는 며칠인가요?")  # Korean: the English reranker passes it through
    assert not rr.applied
    g = Gate(GateConfig(threshold=0.9, fallback_signal="dense", fallback_threshold=0.7))
    d = g.decide(CANDS, rr)
    assert d.answer and d.signal == "dense" and d.top_score == pytest.approx(0.8) and d.threshold == 0.7
    assert not g.decide(CANDS[1:], None).answer
    assert Gate(GateConfig(fallback_signal="none")).decide(CANDS, None).answer


def test_language_thresholds_pick_the_main_signals_threshold_by_query_language():
    cfg = GateConfig(signal="dense", threshold=0.9, language_thresholds={"en": 0.7}, fallback_threshold=0.1)
    g = Gate(cfg)
    en = g.decide(CANDS, None, language="en")
    assert en.answer and en.threshold == 0.7 and en.top_score == pytest.approx(0.8)
    ko = g.decide(CANDS, None, language="ko")  # not listed: gate.threshold
    assert not ko.answer and ko.reason == "below_threshold" and ko.threshold == 0.9
    assert not g.decide(CANDS, None).answer  # no language known: gate.threshold
    rr = reranked()  # the reranker's detected language (en) is used when none is passed
    assert rr.language == "en" and g.decide(CANDS, rr).threshold == 0.7
    # The fallback path keeps its own threshold whatever the language.
    fb = Gate(GateConfig(threshold=0.99, language_thresholds={"ko": 0.99}, fallback_threshold=0.7))
    d = fb.decide(CANDS, reranked("연차 휴가는 며칠인가요?"), language="ko")
    assert d.signal == "dense" and d.threshold == 0.7 and d.answer


def test_language_pair_thresholds_follow_the_best_candidates_language():
    ko_top = [cand(0, "연차 휴가는 15일이다", 0.82), cand(1, "annual leave is 15 days", 0.7)]
    cfg = GateConfig(signal="dense", threshold=0.9, language_thresholds={"en": 0.85, "en-ko": 0.8})
    g = Gate(cfg)
    d = g.decide(ko_top, None, language="en")  # English question, best candidate Korean: the pair
    assert d.answer and d.threshold == 0.8
    en_top = [cand(0, "annual leave is 15 days", 0.82), cand(1, "연차 휴가는 15일이다", 0.7)]
    d = g.decide(en_top, None, language="en")  # best candidate English: no en-en pair, the query language
    assert not d.answer and d.threshold == 0.85
    assert g.decide(ko_top, None, language="ko").threshold == 0.9  # no ko entry at all


def test_language_thresholds_reject_unknown_languages():
    from rag.errors import ConfigError

    with pytest.raises(ConfigError, match="language_thresholds"):
        GateConfig(language_thresholds={"english": 0.5})
    with pytest.raises(ConfigError, match="language_thresholds"):
        GateConfig(language_thresholds={"en-fr": 0.5})


def test_no_candidates_and_invalid_scores():
    assert Gate(GateConfig()).decide([], None).reason == "no_candidates"
    nan = [cand(0, "x", float("nan"))]
    d = Gate(GateConfig(signal="dense", threshold=0.5)).decide(nan, None)
    assert not d.answer and d.reason == "no_valid_scores"
    assert Gate(GateConfig(enabled=False)).decide([], None).answer


def brute_auroc(s, y):
    pos = [a for a, lab in zip(s, y) if lab]
    neg = [a for a, lab in zip(s, y) if not lab]
    return sum((p > n) + 0.5 * (p == n) for p, n in itertools.product(pos, neg)) / (len(pos) * len(neg))


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 5), st.booleans()), min_size=2, max_size=40))
def test_auroc_matches_pairwise_definition(pairs):
    s = [float(a) for a, _ in pairs]
    y = [b for _, b in pairs]
    if all(y) or not any(y):
        assert math.isnan(auroc(s, y))
    else:
        assert auroc(s, y) == pytest.approx(brute_auroc(s, y))


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 20), st.booleans()), min_size=1, max_size=40), st.sampled_from([0.5, 0.8, 1.0]))
def test_calibrated_threshold_is_the_widest_that_reaches_the_target(pairs, target):
    s = [float(a) for a, _ in pairs]
    y = [b for _, b in pairs]
    tau, point = calibrate_threshold(s, y, target)
    answered = [lab for a, lab in zip(s, y) if a >= tau]
    if point is None:
        assert answered == []
        assert all(p.precision < target for p in risk_coverage(s, y))
    else:
        assert sum(answered) / len(answered) >= target and point.coverage == len(answered) / len(s)
        lower = [p for p in risk_coverage(s, y) if p.threshold < tau]
        assert all(p.precision < target for p in lower)


def test_gate_rates():
    r = gate_rates([0.9, 0.8, 0.2, 0.1], [True, True, False, False], [True, True, True, False], 0.5)
    assert r.answered_when_answerable == pytest.approx(2 / 3, abs=1e-4)
    assert r.abstained_when_unanswerable == 1.0 and r.precision_of_answered == 1.0 and r.n == 4


def test_calibrate_threshold_rejects_bad_target():
    with pytest.raises(InputError):
        calibrate_threshold([1.0], [True], 1.5)


def test_load_labelled_both_layouts_and_splits(tmp_path):
    rows = [{"query_id": f"q{i}", "question": f"question {i}", "answerable": i % 2 == 0,
             "passages": [{"docid": f"p{i}", "title": "T", "text": "body"}]} for i in range(40)]
    f = tmp_path / "n.jsonl"
    f.write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    all_ = load_labelled(f)
    calib, ev = load_labelled(f, "calib"), load_labelled(f, "eval")
    assert len(all_) == 40 and len(calib) + len(ev) == 40 and calib and ev
    assert not {q.qid for q in calib} & {q.qid for q in ev}
    squad = {"data": [{"title": "Normandy", "paragraphs": [{"context": "Normandy is in France.", "qas": [
        {"id": "a", "question": "Where is Normandy?", "is_impossible": False},
        {"id": "b", "question": "Who ate Normandy?", "is_impossible": True}]}]}]}
    g = tmp_path / "s.json"
    g.write_text(json.dumps(squad))
    qs = load_labelled(g)
    assert [(q.qid, q.answerable, q.passages[0].text) for q in qs] == [
        ("a", True, "Normandy is in France."), ("b", False, "Normandy is in France.")]


@pytest.mark.parametrize("body,match", [
    ('{"question": "q", "answerable": true}', "passages"),
    ('{"question": "q", "answerable": "yes", "passages": []}', "answerable"),
    ("not json", "expected question"),
])
def test_load_labelled_bad_rows(tmp_path, body, match):
    f = tmp_path / "bad.jsonl"
    f.write_text(body + "\n")
    with pytest.raises(DatasetError, match=match):
        load_labelled(f)
    with pytest.raises(DatasetError, match="not found"):
        load_labelled(tmp_path / "missing.jsonl")
