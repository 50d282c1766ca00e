"""Loading a model draws no "Loading weights" bar into a command's output (issue 42), and the
caller's own progress-bar setting is back afterwards."""
from __future__ import annotations

import pytest

from rag.models.quiet import quiet_model_loading

hf_logging = pytest.importorskip("transformers.utils.logging")


def _draw_loading_bar() -> None:
    """What ``from_pretrained`` does while it reads a checkpoint (transformers' own tqdm)."""
    for _ in hf_logging.tqdm(range(3), desc="Loading weights"):
        pass


def test_no_loading_bar_inside_and_the_setting_is_back_after(capfd):
    was_on = hf_logging.is_progress_bar_enabled()
    before = getattr(hf_logging, "_tqdm_hook", None)
    with quiet_model_loading():
        with quiet_model_loading():  # nested loads share one silence
            _draw_loading_bar()
        _draw_loading_bar()
    assert "Loading weights" not in capfd.readouterr().err
    assert hf_logging.is_progress_bar_enabled() == was_on
    assert getattr(hf_logging, "_tqdm_hook", None) is before
    if was_on:  # the user's bars are theirs again
        _draw_loading_bar()
        assert "Loading weights" in capfd.readouterr().err


def test_a_failed_load_restores_the_setting_too():
    before = getattr(hf_logging, "_tqdm_hook", None)
    was_on = hf_logging.is_progress_bar_enabled()
    with pytest.raises(RuntimeError):
        with quiet_model_loading():
            raise RuntimeError("bad checkpoint")
    assert getattr(hf_logging, "_tqdm_hook", None) is before
    assert hf_logging.is_progress_bar_enabled() == was_on


def test_the_cross_encoder_loads_quietly(monkeypatch, capfd):
    """The reranker's loader (rag.rerank.hf_cross_encoder) reads a plain checkpoint inside the silence:
    stand-ins for transformers' loaders that draw the bar as they do leave stderr clean (and nothing is
    fetched: the stand-ins answer for the unknown name)."""
    from types import SimpleNamespace

    transformers = pytest.importorskip("transformers")
    from rag.config import RerankConfig
    from rag.rerank.cross_encoder import CrossEncoderScorer

    class Drawn:
        config = SimpleNamespace(max_position_embeddings=32)
        model_max_length = 32

        def eval(self) -> "Drawn":
            return self

    def drawing(*args, **kwargs) -> Drawn:
        _draw_loading_bar()
        return Drawn()

    monkeypatch.setattr(transformers.AutoTokenizer, "from_pretrained", drawing)
    monkeypatch.setattr(transformers.AutoModelForSequenceClassification, "from_pretrained", drawing)
    scorer = CrossEncoderScorer(RerankConfig(quantize=False), model="some-hub-name")
    scorer._load()
    assert isinstance(scorer._ce.model, Drawn) and scorer.max_length == 32
    assert "Loading weights" not in capfd.readouterr().err


def test_the_sentence_transformers_embedder_loads_quietly(monkeypatch, capfd):
    st = pytest.importorskip("sentence_transformers")
    from rag.models.embedders import SentenceTransformerEmbedder

    class DrawingSentenceTransformer:
        def __init__(self, *args, **kwargs) -> None:
            _draw_loading_bar()

    monkeypatch.setattr(st, "SentenceTransformer", DrawingSentenceTransformer)
    assert isinstance(SentenceTransformerEmbedder(model="/some/folder").model, DrawingSentenceTransformer)
    assert "Loading weights" not in capfd.readouterr().err
