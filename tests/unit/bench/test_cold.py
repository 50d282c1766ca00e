"""rag bench run cold: a fresh `rag ask` process per question, timed from outside (one run each here;
the numbers are in results/bench/cold.json)."""
from __future__ import annotations

from rag.bench import cold
from rag.bench.registry import measurements


def test_each_language_is_asked_in_fresh_processes_that_answer_alike():
    assert measurements()["cold"] is cold.MEASUREMENT
    out = cold.run(cold.Options(runs=2))
    langs = out.metrics["languages"]
    assert set(langs) == {"ko", "en"}
    for r in langs.values():
        assert r["runs"] == 2 and 0 < r["min_s"] <= r["median_s"] <= r["max_s"] and r["same_answer"]
    assert "median" in out.table
