"""The recipe over the real shared data, a small fixed sample of each source (skipped when absent)."""
from __future__ import annotations

from pathlib import Path

import pytest

from rag.reader.data import Recipe, build, iter_examples
from rag.reader.inputs import Locations

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.data
def test_a_sample_of_every_source(shared_data, tmp_path):
    loc = Locations(shared_data, ROOT / "data" / "cache")
    m = build(Recipe(limit=40, negatives=3), loc, tmp_path / "reader").manifest
    sources = {c["source"] for c in m["counts"]}
    assert sources == {"korquad1", "squad2", "msmarco", "nomiracl-ko", "scifact"}
    held = 0
    for ex in iter_examples(tmp_path / "reader"):
        if ex.answer_sentences and ex.source in ("korquad1", "squad2"):
            assert any(a in " ".join(ex.sentence_text(i) for i in ex.answer_sentences) for a in ex.answers)
            held += 1
    assert held >= 40
    assert m["passages_named_by_train_and_eval_questions"]["korquad1"] == {"gold": 0, "given": 0}
