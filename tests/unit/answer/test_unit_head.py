"""The learned unit head: its feature vector over the generator's own signals, its stored form, and the
generator reading it (rag.answer.unit_head)."""
from __future__ import annotations

import json

import numpy as np
import pytest

from rag.answer.extractive import ExtractiveGenerator
from rag.answer.unit_head import PRODUCTS, UNIT_FEATURES, UnitHead, unit_head_for, unit_vectors
from rag.answer.units import rule_scores, unit_signals
from rag.config import GenerationConfig
from rag.context.builder import ContextBlock, ContextBundle
from rag.errors import ConfigError, ModelLoadError
from rag.rerank.heads import Head
from rag.text.question_analysis import analyze_question

ARTICLE = ("제60조(연차 유급휴가) ① 사용자는 1년간 80퍼센트 이상 출근한 근로자에게 15일의 유급휴가를 주어야 한다. "
           "② 근로자는 휴가를 사용하려면 3일 전까지 신청하여야 한다.")
OTHER = "제41조(근로자 명부) ① 사용자는 각 사업장별로 근로자 명부를 작성하고 근로자의 성명과 이력을 적어야 한다."
QUESTION = "연차 유급휴가는 며칠인가요?"


def bundle(*texts: str, sections: tuple[str, ...] = ()) -> ContextBundle:
    secs = sections or tuple("" for _ in texts)
    blocks = tuple(ContextBlock(f"S{i + 1}", f"e{i}", f"d{i}", "1", t, 0, len(t), False, 0, 0.0, i + 1, section=s)
                   for i, (t, s) in enumerate(zip(texts, secs)))
    return ContextBundle(blocks, (), "", 0, 0, 0, 0)


def fake_scorer(question, sentences):
    return [0.9 if "15일" in s else 0.85 for s in sentences]


def head_on(feature: str, weight: float = 4.0, bias: float = -2.0) -> UnitHead:
    """A head that reads one standardised feature only (and no products)."""
    n = len(UNIT_FEATURES)
    coef = [weight if f == feature else 0.0 for f in UNIT_FEATURES]
    return UnitHead(Head(UNIT_FEATURES, (), (0.0,) * n, (1.0,) * n, tuple(coef), bias), "embedding")


def test_vectors_have_one_row_per_unit_and_read_the_rules():
    gen = ExtractiveGenerator(GenerationConfig(), fake_scorer)
    b = bundle(ARTICLE, OTHER, sections=("제60조(연차 유급휴가)", "제41조(근로자 명부)"))
    units = gen.units(b)
    asked = analyze_question(QUESTION)
    sig = unit_signals(asked, b, units, gen.config, gen.scorer)
    x = unit_vectors(asked, b, units, sig)
    assert x.shape == (len(units), len(UNIT_FEATURES)) and np.isfinite(x).all()
    col = {f: x[:, i] for i, f in enumerate(UNIT_FEATURES)}
    days = next(i for i, u in enumerate(units) if "15일" in u.text)
    hours = next(i for i, u in enumerate(units) if "명부를" in u.text)
    assert col["holds"][days] == 1.0 and col["holds"][hours] == 0.0  # 며칠: a number of days, not a register
    assert col["fit_full"][days] == 1.0 and col["fit"][hours] < 1.0
    assert col["section_terms"][days] > col["section_terms"][hours]  # the heading names 연차 유급휴가
    assert col["model_rrank"][days] == 1.0 and col["model"][days] == pytest.approx(0.9)
    assert set(col["model_scored"]) <= {0.0, 1.0} and col["numeric"].min() == 1.0
    # the rule score is the same numbers, weighed by hand
    assert len(rule_scores(sig, 0.5)) == len(units)


def test_the_generator_ranks_by_the_head_and_uses_the_learned_floor():
    b = bundle(ARTICLE, OTHER)
    cfg = GenerationConfig(extractive_ranker="learned", extractive_learned_floor=0.5)
    gen = ExtractiveGenerator(cfg, fake_scorer, head=head_on("holds"))
    ranked = gen.score(QUESTION, b, gen.units(b))
    assert "15일" in ranked[0].text and 0 < ranked[0].score < 1 and ranked[-1].score < ranked[0].score
    assert gen.min_score == 0.5 and gen.name == "extractive+model+learned"
    out = gen.compose(QUESTION, b)
    assert out.status == "answered" and "15일" in out.answer
    # a head that scores every unit below the floor abstains
    low = ExtractiveGenerator(cfg.model_copy(update={"extractive_learned_floor": 0.99}), fake_scorer,
                              head=head_on("holds", weight=0.1, bias=-5.0))
    assert low.compose(QUESTION, b).status == "insufficient_evidence"


def test_round_trip_and_load_errors(tmp_path):
    h = head_on("coverage")
    h = UnitHead(Head(UNIT_FEATURES, PRODUCTS, *(tuple([0.0] * (len(UNIT_FEATURES) + len(PRODUCTS))),) * 1,
                      (1.0,) * (len(UNIT_FEATURES) + len(PRODUCTS)), (0.5,) * (len(UNIT_FEATURES) + len(PRODUCTS)),
                      -1.0, 1.2, 0.1), "embedding", {"trained_on": {"train": {"questions": 3}}})
    (tmp_path / "unit_head.json").write_text(json.dumps(h.to_json()), encoding="utf-8")
    back = UnitHead.load(tmp_path)
    assert back == h and back.meta["trained_on"]["train"]["questions"] == 3
    bad = h.to_json() | {"format": "rag-unit-head/0"}
    (tmp_path / "bad.json").write_text(json.dumps(bad), encoding="utf-8")
    with pytest.raises(ModelLoadError, match="format"):
        UnitHead.load(tmp_path / "bad.json")
    other = h.to_json()
    other["head"] = dict(other["head"], features=list(UNIT_FEATURES[:-1]))
    (tmp_path / "other.json").write_text(json.dumps(other), encoding="utf-8")
    with pytest.raises(ModelLoadError):
        UnitHead.load(tmp_path / "other.json")
    with pytest.raises(ModelLoadError, match="train-units"):
        UnitHead.load(tmp_path / "missing.json")


def test_unit_head_for_reads_the_config(tmp_path):
    assert unit_head_for(GenerationConfig()) is None
    h = head_on("coverage")
    (tmp_path / "h.json").write_text(json.dumps(h.to_json()), encoding="utf-8")
    cfg = GenerationConfig(extractive_ranker="learned", extractive_unit_head="h.json")
    assert unit_head_for(cfg, tmp_path) == h
    with pytest.raises(ConfigError, match="extractive_scorer"):
        unit_head_for(cfg.model_copy(update={"extractive_scorer": "reader"}), tmp_path)


def test_the_bundled_head_loads_and_was_fitted_with_the_shipped_scorer():
    h = UnitHead.load()
    assert h.scorer == "embedding" and h.head.features == UNIT_FEATURES
    assert h.meta["trained_on"]["train"]["questions"] >= 1000  # thousands of labelled questions, not dozens
