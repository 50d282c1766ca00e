"""The extractive generator reading with the reader: the reranker model's calibrated probability per
sentence, read against its own floor and address bar (not the cosine's)."""
from __future__ import annotations

import numpy as np
import pytest

from rag.answer.extractive import ExtractiveGenerator
from rag.config import GenerationConfig, RagConfig, ValidationConfig
from rag.errors import ConfigError
from rag.pipeline.components import reader_scorer
from rag.rerank.calibration import Calibration


class _Scorer:
    def __init__(self):
        self.calls = []

    def score(self, query, keys, texts):
        self.calls.append((query, tuple(keys)))
        return np.array([2.0 if "15일" in t else -2.0 for t in texts]), [len(t) for t in texts]


class _Reranker:
    def __init__(self):
        self.scorer = _Scorer()
        self.calibration = Calibration(a=1.0, b=-1.0, fitted_on="test", n=10)


def test_reader_scorer_gives_calibrated_probabilities():
    rr = _Reranker()
    score = reader_scorer(rr)
    got = score("연차휴가는 며칠?", ["15일의 유급휴가를 준다.", "3일 전까지 신청한다."])
    assert got == pytest.approx([1 / (1 + np.exp(-1.0)), 1 / (1 + np.exp(3.0))])
    assert rr.scorer.calls[0][1][0].startswith("sentence\x1f")  # cached apart from passages with the same text
    assert score("q", []) == []


def test_reader_floor_and_bar_are_the_readers_own():
    g = ExtractiveGenerator(GenerationConfig(extractive_scorer="reader"), lambda q, s: [0.5] * len(s),
                            validation=ValidationConfig(address_min_reader=0.2, address_min_cosine=0.87))
    assert g._address_bar() == 0.2
    g2 = ExtractiveGenerator(GenerationConfig(), lambda q, s: [0.5] * len(s),
                             validation=ValidationConfig(address_min_cosine=0.87))
    assert g2._address_bar() == 0.87


def test_reader_scorer_needs_the_reranker(tmp_path):
    from rag.pipeline import Pipeline

    cfg = RagConfig.model_validate({"rerank": {"enabled": False}, "generation": {"extractive_scorer": "reader"},
                                    "index": {"path": str(tmp_path / "ix")}})
    with pytest.raises(ConfigError, match="rerank.enabled"):
        Pipeline(cfg).components._extractive_scorer()


def test_the_validator_reads_addressing_with_the_reader(monkeypatch):
    import json

    from rag.answer import validation

    seen = []
    real = validation.run_checks
    monkeypatch.setattr(validation, "run_checks", lambda inp: seen.append(inp) or real(inp))

    def reader(q, a):
        return 0.05

    payload = json.dumps({"status": "answered", "answer": "근로자는 휴가를 신청할 수 있다.", "citations": []})
    validation.CitationValidator(ValidationConfig(address_model="reader", address_min_reader=0.3),
                                 reader=reader).validate(payload, {}, question="연차휴가는 며칠인가?")
    assert seen[-1].similarity is reader and seen[-1].address_bar == 0.3
    validation.CitationValidator(ValidationConfig(address_model="embedding"), reader=reader).validate(
        payload, {}, question="연차휴가는 며칠인가?")
    # no embedder: coverage only (the configured cosine bar is passed, with nothing to read it against)
    assert seen[-1].similarity is None and seen[-1].address_bar == ValidationConfig().address_min_cosine
