"""The reader's hash split: pinned, stable, disjoint, about the stated shares."""
from __future__ import annotations

import subprocess
import sys

from rag.reader.splits import BOUNDS, SPLITS, bucket, fractions, split_of


def test_pinned_values_never_change():
    # If one of these moves, every stored split moves with it: eval questions would leak into training.
    assert [bucket("korquad1", k) for k in ("서울#0", "서울#1", "대구#1")] == [8933, 1977, 6272]
    assert [split_of("korquad1", k) for k in ("서울#0", "서울#1", "대구#1", "대전#1")] == ["eval", "train", "calib", "eval"]
    assert [split_of("msmarco", q) for q in ("1", "2", "3")] == ["eval", "calib", "train"]
    assert [split_of("squad2", k) for k in ("Oxygen#0", "Oxygen#1", "Victoria#0")] == ["train", "eval", "calib"]


def test_the_split_is_the_same_in_another_process():
    """No salted ``hash()``: a fresh interpreter (another PYTHONHASHSEED) gives the same splits."""
    keys = [f"q{i}" for i in range(50)]
    here = [split_of("squad2", k) for k in keys]
    code = ("from rag.reader.splits import split_of; "
            f"print(','.join(split_of('squad2', k) for k in {keys!r}))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                         env={"PYTHONHASHSEED": "12345", "PATH": ""}).stdout.strip()
    assert out.split(",") == here


def test_each_key_has_exactly_one_split_and_shares_are_near_the_rule():
    keys = [f"question-{i}" for i in range(20_000)]
    got = {s: 0 for s in SPLITS}
    for k in keys:
        s = split_of("korquad1", k)
        assert s in SPLITS
        got[s] += 1
    assert sum(got.values()) == len(keys)  # a partition: disjoint and covering
    for s, share in fractions().items():
        assert abs(got[s] / len(keys) - share) < 0.015
    assert fractions()["eval"] >= 0.25
    assert BOUNDS[-1] == 10_000


def test_the_source_is_part_of_the_key():
    keys = [str(i) for i in range(2000)]
    same = sum(split_of("msmarco", k) == split_of("squad2", k) for k in keys)
    assert same < len(keys)  # two datasets' "question 7" are split independently
