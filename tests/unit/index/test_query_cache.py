"""QueryCache: a request's question is embedded once (search, then the extractive scorer), batches are computed
as before, hits are copies, and the oldest question leaves first."""
from __future__ import annotations

import numpy as np

from rag.models.embedders import QueryCache


class Counting:
    def __init__(self) -> None:
        self.calls: list[list[str]] = []

    def __call__(self, texts):
        self.calls.append(list(texts))
        return np.array([[float(len(t)), float(i)] for i, t in enumerate(texts)], dtype=np.float32)


def test_one_question_is_computed_once_and_a_hit_is_a_copy():
    cache, model = QueryCache(size=4), Counting()
    a = cache(["연차 휴가는 며칠인가요?"], model)
    a[0, 0] = -1.0  # a caller writing into its array does not change what the next caller gets
    b = cache(["연차 휴가는 며칠인가요?"], model)
    assert model.calls == [["연차 휴가는 며칠인가요?"]]
    assert b[0, 0] == len("연차 휴가는 며칠인가요?")


def test_batches_are_not_cached_and_the_oldest_question_leaves_first():
    cache, model = QueryCache(size=2), Counting()
    cache(["a", "b"], model)
    cache(["a", "b"], model)
    assert len(model.calls) == 2
    for q in ("q1", "q2", "q3"):
        cache([q], model)
    cache(["q3"], model)
    cache(["q1"], model)  # evicted by q3
    assert [c for c in model.calls[2:]] == [["q1"], ["q2"], ["q3"], ["q1"]]


def test_size_zero_turns_it_off():
    cache, model = QueryCache(size=0), Counting()
    cache(["q"], model)
    cache(["q"], model)
    assert len(model.calls) == 2
