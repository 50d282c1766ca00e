"""The combiner's question-level answerable head: aggregates from raw features only, the fit, the JSON
artifact (format 2, format 1 still loads), monotone calibration, and the operating-point measures."""
from __future__ import annotations

import json

import numpy as np
import pytest

from rag.reader.answerable import (GATE_SOURCES, QUESTION_FEATURES, RAW_COLUMNS, answered_precision, fit_answerable,
                                   gate_groups, question_matrix, question_vector, raw_columns, threshold_for_recall)
from rag.reader.combine import Combiner, Head
from rag.reader.evaluate import auroc
from rag.reader.features import PASSAGE_FEATURES, SENTENCE_FEATURES

COL = {n: i for i, n in enumerate(PASSAGE_FEATURES)}


def _px(rng: np.random.Generator, n: int) -> np.ndarray:
    return rng.normal(size=(n, len(PASSAGE_FEATURES)))


def test_raw_columns_hold_nothing_list_relative():
    relative = {n for n in PASSAGE_FEATURES if n.endswith(("_rrank", "_margin", "_z")) or n == "coverage_rank1"}
    assert relative and not relative & set(RAW_COLUMNS)
    assert set(RAW_COLUMNS) <= set(PASSAGE_FEATURES) and len(QUESTION_FEATURES) == len(set(QUESTION_FEATURES))


def test_aggregates_depend_on_raw_features_only():
    rng = np.random.default_rng(1)
    px = _px(rng, 9)
    base = question_vector(raw_columns(px))
    scrambled = px.copy()
    for n in PASSAGE_FEATURES:
        if n not in RAW_COLUMNS:
            scrambled[:, COL[n]] = rng.normal(size=9) * 100  # ranks, margins, z-scores, lengths: anything
    assert np.array_equal(question_vector(raw_columns(scrambled)), base)
    # and the raw columns do move it
    moved = px.copy()
    moved[:, COL["ce"]] += 5.0
    assert not np.array_equal(question_vector(raw_columns(moved)), base)


def test_question_vector_values():
    px = np.zeros((3, len(PASSAGE_FEATURES)))
    px[:, COL["ce"]] = [1.0, 4.0, 2.0]
    px[:, COL["dense"]] = [0.9, 0.7, 0.8]
    px[:, COL["bm25"]] = [6.0, 3.0, 0.0]
    px[:, COL["key_terms"]] = 3.0
    px[:, COL["coverage"]] = [1.0, 0.5, 0.0]
    px[:, COL["asked_fact"]] = [1, 0, 0]
    px[:, COL["asked_fact_missing"]] = [0, 1, 1]
    px[:, COL["passage_ko"]] = [0, 1, 0]
    v = dict(zip(QUESTION_FEATURES, question_vector(raw_columns(px))))
    assert v["ce_max"] == 4.0 and v["ce_top2_mean"] == 3.0
    assert v["dense_max"] == 0.9 and v["dense_top2_mean"] == pytest.approx(0.85)
    assert v["bm25_max_per_term"] == 2.0 and v["coverage_max"] == 1.0
    # the best passage is the cross-encoder's top one (row 1)
    assert v["best_coverage"] == 0.5 and v["best_asked_fact"] == 0 and v["best_asked_fact_missing"] == 1
    assert v["best_passage_ko"] == 1
    # candidate order does not matter
    assert np.array_equal(question_vector(raw_columns(px[[2, 0, 1]])), question_vector(raw_columns(px)))
    with pytest.raises(ValueError):
        question_vector(np.zeros((0, len(RAW_COLUMNS))))


def _synthetic(rng: np.random.Generator, groups: int):
    """Groups of 5 candidates whose best raw cross-encoder score tracks answerability; ranks are noise."""
    y = rng.random(groups) < 0.5
    src = np.array([GATE_SOURCES[g % 3] for g in range(groups)] + ["korquad1"] * 4)
    px, grp = [], []
    for g in range(len(src)):
        x = _px(rng, 5)
        x[:, COL["ce"]] += (2.0 if (g >= groups or y[g]) else 0.0)
        px.append(x)
        grp += [g] * 5
    return np.vstack(px), np.array(grp), src, np.concatenate([y, np.ones(4, bool)])


def test_fit_uses_gate_sources_learns_and_is_deterministic():
    pytest.importorskip("sklearn")
    rng = np.random.default_rng(7)
    train, calib, ev = _synthetic(rng, 240), _synthetic(rng, 120), _synthetic(rng, 150)
    a, b = fit_answerable(*train, *calib), fit_answerable(*train, *calib)
    assert a == b and a.features == QUESTION_FEATURES and a.platt_a > 0
    assert a.info["train_rows"] == 240  # the korquad1 groups (no unanswerable labelled) are left out
    assert set(a.info["train_questions_by_source"]) == set(GATE_SOURCES)
    gs = gate_groups(ev[2], ev[1])
    p = a.probability(question_matrix(ev[0], ev[1], gs))
    assert auroc(ev[3][gs], p) > 0.75
    assert a.info["calib_at_threshold"]["recall"] >= 0.7


def test_calibration_is_monotone_in_the_logit():
    head = Head(QUESTION_FEATURES, (), tuple([0.0] * len(QUESTION_FEATURES)), tuple([1.0] * len(QUESTION_FEATURES)),
                tuple([1.0] + [0.0] * (len(QUESTION_FEATURES) - 1)), 0.0, 0.8, -0.3)
    x = np.zeros((101, len(QUESTION_FEATURES)))
    x[:, 0] = np.linspace(-10, 10, 101)
    assert np.all(np.diff(head.probability(x)) > 0)


def test_threshold_and_precision():
    p = np.array([0.9, 0.8, 0.7, 0.6, 0.5, 0.4, 0.3, 0.2])
    y = np.array([1, 0, 1, 1, 0, 1, 0, 0], bool)
    t = threshold_for_recall(p, y, 0.7)  # 4 answerable: answer at least 3 of them
    assert t == 0.6
    r = answered_precision(p, y, t)
    assert r == {"questions": 8, "answerable": 4, "answered": 4, "recall": 0.75, "precision": 0.75}
    assert threshold_for_recall(p, y, 1.0) == 0.4
    with pytest.raises(ValueError):
        threshold_for_recall(p, np.zeros(8, bool))


def _heads():
    n = len(PASSAGE_FEATURES)
    head = Head(tuple(PASSAGE_FEATURES), (), tuple([0.0] * n), tuple([1.0] * n), tuple([0.1] * n), 0.0)
    shead = Head(tuple(SENTENCE_FEATURES), (), tuple([0.0] * 17), tuple([1.0] * 17), tuple([0.1] * 17), 0.0)
    k = len(QUESTION_FEATURES)
    ahead = Head(QUESTION_FEATURES, (), tuple([0.5] * k), tuple([2.0] * k), tuple(np.linspace(-1, 1, k)), 0.2, 1.3,
                 -0.1, {"threshold": 0.6, "sources": list(GATE_SOURCES)})
    return head, shead, ahead


def test_round_trip_with_the_answerable_head_and_format_1_still_loads(tmp_path):
    head, shead, ahead = _heads()
    comb = Combiner(head, shead, {"trained": "2026-12-06"}, ahead)
    path = comb.save(tmp_path / "v2")
    d = json.loads(path.read_text(encoding="utf-8"))
    assert d["format"] == "rag-reader-combiner/2" and "answerable" in d and "answerable" not in Combiner.load(path).meta
    back = Combiner.load(path)
    assert back == comb and back.answerable.info["threshold"] == 0.6
    x = np.random.default_rng(0).normal(size=(4, len(QUESTION_FEATURES)))
    assert np.array_equal(back.answerable.probability(x), comb.answerable.probability(x))
    old = {k: v for k, v in d.items() if k != "answerable"}
    old["format"] = "rag-reader-combiner/1"
    (tmp_path / "v1").mkdir()
    (tmp_path / "v1" / "combiner.json").write_text(json.dumps(old), encoding="utf-8")
    v1 = Combiner.load(tmp_path / "v1")
    assert v1.answerable is None and v1.passage == head


def test_committed_artifact_has_the_answerable_head():
    comb = Combiner.load()
    assert comb.answerable is not None and comb.answerable.features == QUESTION_FEATURES
    assert comb.answerable.platt_a > 0 and 0 < comb.answerable.info["threshold"] < 1
    assert set(comb.answerable.info["train_questions_by_source"]) <= set(GATE_SOURCES)
