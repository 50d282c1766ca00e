"""The unit head's training questions, rows and measures (rag.evaluation.unit_training)."""
from __future__ import annotations

import numpy as np

from rag.answer.extractive import ExtractiveGenerator
from rag.answer.unit_head import UNIT_FEATURES, UnitHead
from rag.config import GenerationConfig
from rag.evaluation.unit_training import Rows, _question, bundle_of, measure, question_rows
from rag.reader.examples import ReaderExample
from rag.rerank.heads import Head
from rag.text.sentences import split_sentences

GOLD = "서울은 대한민국의 수도이며 가장 큰 도시이다. 서울의 인구는 약 940만 명으로 집계되었다. 한강이 도시의 가운데를 흐른다."
NEG = "부산은 항구 도시이며 인구는 330만 명이라는 기록이 있다. 해운대는 유명한 해변으로 알려져 있다."


def _ex(pid, text, label, answer=None, answerable=True):
    spans = tuple((s.start, s.end) for s in split_sentences(text))
    return ReaderExample(f"korquad1:ko-ko:q1:{pid}", "korquad1", "dev", "train", "q1", "q1", "ko", "ko",
                         "서울의 인구는 몇 명인가?", ("940만 명",) if answerable else (), answerable, pid, pid.split("#")[0],
                         text, "gold" if label == "answers" else "bm25", label, spans,
                         answer if label == "answers" else None, rank=None if label == "answers" else 1)


def test_a_question_becomes_a_bundle_with_the_answer_window_and_negatives():
    q = _question([_ex("서울#0", GOLD, "answers", (1,))] + [_ex(f"부산#{i}", NEG, "no_answer") for i in range(6)], 4)
    assert q is not None and len(q.texts) == 5 and q.answerable
    assert sum("940만 명" in t for t in q.texts) == 1 and set(q.titles) == {"서울", "부산"}
    assert q == _question([_ex("서울#0", GOLD, "answers", (1,))] + [_ex(f"부산#{i}", NEG, "no_answer") for i in range(6)], 4)
    none = _question([_ex(f"부산#{i}", NEG, "no_answer", answerable=False) for i in range(6)], 4)
    assert none is not None and not none.answerable and len(none.texts) == 5
    assert _question([_ex("부산#0", NEG, "no_answer")], 4) is None  # answerable, but no answering passage here


def test_rows_label_the_unit_that_holds_the_answer():
    q = _question([_ex("서울#0", GOLD, "answers", (1,))] + [_ex(f"부산#{i}", NEG, "no_answer") for i in range(4)], 4)
    gen = ExtractiveGenerator(GenerationConfig(), None)
    x, y, rules = question_rows(gen, q)
    units = gen.units(bundle_of(q.texts, q.titles))
    assert x.shape == (len(units), len(UNIT_FEATURES)) and len(rules) == len(units)
    assert y.sum() == 1 and "940만 명" in units[int(np.argmax(y))].text


def test_measure_counts_unanswerable_answers_as_wrong():
    # two questions: the first answerable (its unit 1 holds the answer), the second not
    x = np.zeros((4, len(UNIT_FEATURES)))
    x[:, UNIT_FEATURES.index("coverage")] = [0.1, 0.9, 0.8, 0.2]
    rows = Rows(x, np.array([0.0, 1.0, 0.0, 0.0]), np.array([0.5, 0.1, 0.3, 0.2]), np.array([0, 0, 1, 1]),
                ("squad2", "squad2"), np.array([True, False]))
    n = len(UNIT_FEATURES)
    head = UnitHead(Head(UNIT_FEATURES, (), (0.0,) * n, (1.0,) * n,
                         tuple(5.0 if f == "coverage" else 0.0 for f in UNIT_FEATURES), -2.5), "embedding")
    rep = measure(rows, head, floors=(0.5,))["squad2"]
    assert rep["head_top1"] == 1.0 and rep["rules_top1"] == 0.0
    # at floor 0.5 both questions are answered (coverage 0.9 and 0.8): one right, one an unanswerable answered
    assert rep["head_floors"][0] == {"floor": 0.5, "answered_of_answerable": 1.0, "precision": 0.5}
    assert rep["head_answerable_auroc"] == 1.0


def test_reliability_bins_hold_every_question_once():
    from rag.evaluation.unit_training import reliability

    prob = np.array([0.05, 0.15, 0.18, 0.95, 1.0])
    right = np.array([False, False, True, True, True])
    table = reliability(prob, right)
    assert [b["bin"] for b in table] == ["0.0-0.1", "0.1-0.2", "0.9-1.0"]
    assert sum(b["questions"] for b in table) == 5
    assert table[1] == {"bin": "0.1-0.2", "questions": 2, "mean_probability": 0.165, "right": 0.5}


def test_rows_are_cached_per_chunk_and_keyed_by_the_generator_settings(tmp_path, monkeypatch):
    from rag.evaluation import unit_training as ut

    q = _question([_ex("서울#0", GOLD, "answers", (1,))] + [_ex(f"부산#{i}", NEG, "no_answer") for i in range(4)], 4)
    gen = ExtractiveGenerator(GenerationConfig(), None)
    first = ut.build_rows(gen, [q], tmp_path)
    assert len(list(tmp_path.glob("*.npz"))) == 1 and first.y.sum() == 1

    def no_compute(*_):
        raise AssertionError("a cached chunk was computed again")

    monkeypatch.setattr(ut, "question_rows", no_compute)
    again = ut.build_rows(gen, [q], tmp_path)
    assert np.array_equal(again.x, first.x) and np.array_equal(again.y, first.y)
    monkeypatch.undo()
    other = ExtractiveGenerator(GenerationConfig(extractive_context_weight=0.1), None)
    ut.build_rows(other, [q], tmp_path)
    assert len(list(tmp_path.glob("*.npz"))) == 2  # other settings: computed afresh, the first chunk kept
