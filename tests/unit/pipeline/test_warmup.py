"""Pipeline.warmup: what it loads, the seconds per part it returns, and that it asks as nobody and
never asks an LLM."""
from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from rag.errors import PrincipalRequiredError
from rag.pipeline import Warmup
from rag.pipeline.components import Components
from rag.pipeline.warmup import questions
from rag.rerank.cross_encoder import CrossEncoderScorer
from tests.fakes import RecordingGenerator


def test_warmup_returns_the_seconds_each_part_took_and_answers_end_to_end(built, derived):
    gen = RecordingGenerator(inner=built.components.generator)
    w = derived(built, generator=gen).warmup()
    assert isinstance(w, Warmup)
    with pytest.raises(dataclasses.FrozenInstanceError):
        w.answer_s = 0.0
    assert list(w.parts()) == ["index", "embedder", "components", "generator", "answer"]  # reranker off: no part
    assert w.reranker_s is None and all(s >= 0 for s in w.parts().values())
    assert w.total_s == pytest.approx(sum(w.parts().values()))
    assert w.languages == ("ko",) and w.generated  # the demo corpus is Korean; extractive: answered
    assert [r.question for r in gen.requests][:1] == [questions()["ko"]]  # through the generator
    assert w.to_json()["seconds"].keys() == w.parts().keys()


def test_the_reranker_loads_and_each_of_its_languages_is_asked(built, derived, monkeypatch):
    scored: list[str] = []

    def score(self, query, keys, texts):
        scored.append(query)
        return np.zeros(len(texts)), [8] * len(texts)

    monkeypatch.setattr(CrossEncoderScorer, "score", score)
    w = derived(built, rerank={"enabled": True, "languages": ["en"]}).warmup()
    assert w.languages == ("ko", "en") and w.reranker_s is not None
    assert "reranker" in w.parts()
    assert scored[0] == questions()["ko"]  # the model itself, loaded and run once
    assert questions()["en"] in scored[1:]  # then the English question reranked end to end


def test_an_llm_backend_is_not_asked(built, derived):
    gen = RecordingGenerator(fail_if_called=True)
    w = derived(built, generator=gen, generation={"backend": "openai", "model": "m",
                                                  "base_url": "http://127.0.0.1:9/v1"}).warmup()
    assert not w.generated and gen.requests == [] and "answer" in w.parts()


def test_warmup_asks_as_nobody_even_when_a_principal_is_required(built, derived, monkeypatch):
    seen = []
    original = Components.reader_scope
    monkeypatch.setattr(Components, "reader_scope", lambda self, p: seen.append(p) or original(self, p))
    p = derived(built, security={"require_principal": True})
    p.warmup()
    assert seen and all(x is None for x in seen)
    with pytest.raises(PrincipalRequiredError):  # a user's question still needs one
        p.answer("연차 휴가는 며칠인가요?")
