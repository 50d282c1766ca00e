"""Reranker ordering, exclusions, language routing and Platt calibration (fake scorer, no model)."""
from __future__ import annotations

import math

import numpy as np
import pytest

from rag.errors import InputError, ModelLoadError
from rag.config import RerankConfig
from rag.rerank import Calibration, CrossEncoderReranker, check_checkpoint, fit_platt, reranked_candidates
from rag.text import detect_language
from rag.types import Candidate, Chunk, RetrieverHit
from tests.fakes import FakeScorer


def cand(i: int, text: str, score: float) -> Candidate:
    ch = Chunk(f"d{i}:1:0", f"d{i}", "1", 0, text, 0, len(text))
    return Candidate(ch, score, i + 1, (RetrieverHit("bm25", i + 1, score),))


CANDS = [
    cand(0, "the weather in paris is mild in spring", 3.0),
    cand(1, "vitamin d supplementation improves bone density in older women", 2.0),
    cand(2, "stock markets fell sharply on monday", 1.0),
]


def test_detect_language():
    assert detect_language("연차 휴가는 며칠인가요?") == "ko"
    assert detect_language("How many leave days do I get?") == "en"
    assert detect_language("VPN 접속이 안 될 때 어떻게 하나요") == "ko"
    assert detect_language("12345 ?!") == "other"


def test_rerank_moves_relevant_candidate_up_and_reports_everything():
    r = CrossEncoderReranker(FakeScorer(), Calibration(1.0, 0.0, "test", 10), RerankConfig(blend_weight=1.0))
    res = r.rerank("does vitamin d improve bone density", CANDS)
    assert res.applied and res.reason == ""
    assert [c.evidence_id for c in res.candidates][0] == "d1:1:0"
    assert [c.rank for c in res.candidates] == [1, 2, 3]
    top = res.candidates[0]
    assert top.probability == pytest.approx(1 / (1 + math.exp(-top.logit)))
    assert res.calibrated and res.top_probability == max(c.probability for c in res.candidates)
    assert reranked_candidates(res)[0].chunk.evidence_id == "d1:1:0"


def test_blend_weight_zero_keeps_fused_order():
    r = CrossEncoderReranker(FakeScorer(), Calibration(), RerankConfig(blend_weight=0.0))
    res = r.rerank("does vitamin d improve bone density", CANDS)
    assert [c.evidence_id for c in res.candidates] == ["d0:1:0", "d1:1:0", "d2:1:0"]


def test_only_top_n_are_scored_and_the_rest_follow_in_fused_order():
    many = [cand(i, f"passage number {i} about vitamin", 10.0 - i) for i in range(8)]
    scorer = FakeScorer()
    res = CrossEncoderReranker(scorer, Calibration(), RerankConfig(top_n=3)).rerank("vitamin", many)
    assert [len(keys) for _, keys in scorer.calls] == [3]
    assert [k.split("#")[0] for k in scorer.calls[0][1]] == ["d0:1:0", "d1:1:0", "d2:1:0"]
    assert [c.evidence_id for c in res.candidates[3:]] == [f"d{i}:1:0" for i in range(3, 8)]
    assert all(c.logit is None for c in res.candidates[3:])
    scores = [c.score for c in res.candidates]
    assert scores == sorted(scores, reverse=True)


def test_bad_candidates_are_excluded_with_a_reason():
    bad = [cand(0, "   ", 1.0), cand(1, "vitamin d", float("nan")), cand(2, "vitamin d and bones", 0.5),
           cand(3, "vitamin", 0.2)]
    res = CrossEncoderReranker(FakeScorer(nan_for=("d3:1:0",)), Calibration()).rerank("vitamin d", bad)
    reasons = {e.evidence_id: e.reason for e in res.excluded}
    assert reasons == {"d0:1:0": "empty_text", "d1:1:0": "non_finite_fused_score", "d3:1:0": "non_finite_model_score"}
    assert [c.evidence_id for c in res.candidates] == ["d2:1:0"]


def test_truncation_is_recorded_per_candidate():
    long = cand(0, "vitamin " * 100, 1.0)
    res = CrossEncoderReranker(FakeScorer(max_length=64), Calibration()).rerank("vitamin d", [long, CANDS[2]])
    by_id = {c.evidence_id: c for c in res.candidates}
    assert by_id["d0:1:0"].truncated and by_id["d0:1:0"].input_tokens > 64
    assert not by_id["d2:1:0"].truncated


def test_language_routing_and_empty_input():
    scorer = FakeScorer()
    r = CrossEncoderReranker(scorer, Calibration(), RerankConfig(languages=("en",)))
    res = r.rerank("연차 휴가는 며칠인가요?", CANDS)
    assert not res.applied and "ko" in res.reason and scorer.calls == []
    assert [c.evidence_id for c in res.candidates] == [c.chunk.evidence_id for c in CANDS]
    assert all(c.probability is None for c in res.candidates)
    empty = r.rerank("vitamin", [])
    assert not empty.applied and empty.reason == "no_candidates" and empty.candidates == ()
    with pytest.raises(InputError):
        r.rerank("   ", CANDS)


def test_fit_platt_recovers_known_parameters():
    rng = np.random.default_rng(0)
    x = rng.normal(0, 2, 20000)
    y = rng.random(20000) < 1 / (1 + np.exp(-(1.5 * x - 0.7)))
    cal = fit_platt(x, y.astype(int), "synthetic")
    assert cal.a == pytest.approx(1.5, abs=0.08) and cal.b == pytest.approx(-0.7, abs=0.08)
    assert cal.calibrated and cal.n == 20000
    # Probabilities are monotone in the score and within (0, 1), even for extreme scores.
    ps = [cal.probability(s) for s in (-1e6, -3, 0, 3, 1e6)]
    assert ps == sorted(ps) and 0 <= ps[0] and ps[-1] <= 1


@pytest.mark.parametrize("scores,labels", [([0.1, 0.2], [1, 1]), ([0.1, float("nan")], [0, 1]), ([], []), ([1.0], [1, 0])])
def test_fit_platt_rejects_bad_input(scores, labels):
    with pytest.raises(InputError):
        fit_platt(scores, labels)


def test_calibration_round_trip_and_corrupt_file(tmp_path):
    c = Calibration(2.0, -1.0, "dev", 5)
    c.save(tmp_path / "calibration.json")
    assert Calibration.load(tmp_path / "calibration.json") == c
    (tmp_path / "bad.json").write_text("{not json")
    with pytest.raises(ModelLoadError, match="not a valid calibration"):
        Calibration.load(tmp_path / "bad.json")


def _folder(tmp_path, files: dict[str, str]):
    tmp_path.mkdir(exist_ok=True)
    for name, body in files.items():
        (tmp_path / name).write_text(body)
    return tmp_path


def test_check_checkpoint_explains_what_is_wrong(tmp_path):
    with pytest.raises(ModelLoadError, match="not found"):
        check_checkpoint(tmp_path / "nope")
    with pytest.raises(ModelLoadError, match="no config.json"):
        check_checkpoint(_folder(tmp_path / "a", {"vocab.txt": "x"}))
    with pytest.raises(ModelLoadError, match="no model weights"):
        check_checkpoint(_folder(tmp_path / "b", {"config.json": "{}", "vocab.txt": "x"}))
    with pytest.raises(ModelLoadError, match="no tokenizer"):
        check_checkpoint(_folder(tmp_path / "c", {"config.json": "{}", "model.safetensors": ""}))
    bi = '{"architectures": ["BertModel"]}'
    with pytest.raises(ModelLoadError, match="not a reranker"):
        check_checkpoint(_folder(tmp_path / "d", {"config.json": bi, "model.safetensors": "", "vocab.txt": "x"}))
    two = '{"architectures": ["BertForSequenceClassification"], "id2label": {"0": "a", "1": "b"}}'
    with pytest.raises(ModelLoadError, match="labels=2"):
        check_checkpoint(_folder(tmp_path / "e", {"config.json": two, "model.safetensors": "", "vocab.txt": "x"}))
    ok = '{"architectures": ["BertForSequenceClassification"], "id2label": {"0": "LABEL_0"}}'
    assert check_checkpoint(_folder(tmp_path / "f", {"config.json": ok, "model.safetensors": "", "vocab.txt": "x"}))


def test_fit_platt_stays_finite_on_separable_data():
    rng = np.random.default_rng(0)
    x = np.r_[rng.normal(5, 1, 300), rng.normal(-5, 1, 8700)]
    y = np.r_[np.ones(300), np.zeros(8700)].astype(int)
    cal = fit_platt(x, y)
    assert math.isfinite(cal.a) and math.isfinite(cal.b) and 0 < cal.a < 100
    assert cal.probability(5.0) > 0.9 and cal.probability(-5.0) < 0.01


def test_negative_documents_keep_fused_order_once_each_without_the_relevant():
    from rag.rerank import negative_documents

    cands = [cand(3, "a", 4.0), cand(1, "b", 3.0), cand(3, "c", 2.0), cand(2, "d", 1.0), cand(0, "e", 0.5)]
    assert negative_documents(cands, {"d1"}) == ["d3", "d2", "d0"]
    assert negative_documents(cands, {"d0", "d1", "d2", "d3"}) == []


KO = [cand(3, "연차 유급휴가는 1년간 80퍼센트 이상 출근한 근로자에게 15일을 준다", 2.5),
      cand(4, "밀폐공간에 들어가기 전에 산소 농도를 측정한다", 1.5)]


def test_passages_the_model_cannot_read_keep_their_fused_positions():
    """An English-only model scores only the English passages; the Korean ones stay where fusion put them."""
    mixed = [CANDS[0], KO[0], CANDS[1], KO[1], CANDS[2]]  # fused order: en, ko, en, ko, en
    scorer = FakeScorer()
    res = CrossEncoderReranker(scorer, Calibration(), RerankConfig(blend_weight=1.0)).rerank(
        "does vitamin d improve bone density", mixed)
    assert res.applied
    assert [k.split("#")[0] for k in scorer.calls[0][1]] == ["d0:1:0", "d1:1:0", "d2:1:0"]
    ids = [c.evidence_id for c in res.candidates]
    assert ids[1] == "d3:1:0" and ids[3] == "d4:1:0"  # the Korean passages did not move
    assert ids[0] == "d1:1:0"  # the relevant English passage moved up among the English positions
    assert [c.rank for c in res.candidates] == [1, 2, 3, 4, 5]
    unread = [c for c in res.candidates if c.evidence_id.startswith(("d3", "d4"))]
    assert all(c.logit is None and c.probability is None for c in unread)
    scores = [c.score for c in res.candidates]
    assert scores == sorted(scores, reverse=True)


def test_no_passage_the_model_reads_passes_the_fused_order_through():
    scorer = FakeScorer()
    res = CrossEncoderReranker(scorer, Calibration()).rerank("how many leave days", KO)
    assert not res.applied and "passage language" in res.reason and scorer.calls == []
    assert [c.evidence_id for c in res.candidates] == ["d3:1:0", "d4:1:0"]


def test_a_multilingual_model_reads_the_passage_languages_it_is_given():
    scorer = FakeScorer()
    cfg = RerankConfig(languages=("en", "ko"), passage_languages=("en", "ko"))
    res = CrossEncoderReranker(scorer, Calibration(), cfg).rerank("how many leave days", [*KO, CANDS[1]])
    assert res.applied and len(scorer.calls[0][1]) == 3
