"""The entailment head's data recipe and the pieces of its trainer that need no model."""
from __future__ import annotations

import json

import numpy as np
import pytest

from rag.reader import nli_data
from rag.reader.errors import ReaderDataError
from rag.reader.nli import fit_temperature, plan_steps, softmax


def _write_sources(root):
    (root / "KorNLI").mkdir(parents=True)
    rows = ["sentence1\tsentence2\tgold_label"]
    for i in range(40):
        for lab in nli_data.LABELS:
            rows.append(f"전제 문장 {i}입니다.\t{lab} 가설 {i}\t{lab}")
    (root / "KorNLI" / "xnli.dev.ko.tsv").write_text("\n".join(rows) + "\n", encoding="utf-8")
    (root / "KorNLI" / "xnli.test.ko.tsv").write_text("\n".join(rows[:7]) + "\n", encoding="utf-8")
    (root / "snli_1.0").mkdir()
    snli = [{"sentence1": "A man sleeps.", "sentence2": "A man is awake.", "gold_label": "contradiction"},
            {"sentence1": "A dog runs.", "sentence2": "An animal moves.", "gold_label": "-"}]
    (root / "snli_1.0" / "snli_1.0_test.jsonl").write_text("".join(json.dumps(r) + "\n" for r in snli), encoding="utf-8")


def test_build_splits_by_source_role_and_premise(tmp_path):
    _write_sources(tmp_path / "src")
    counts = nli_data.build(tmp_path / "src", tmp_path / "pairs.jsonl")
    # a published test file is the eval half; the SNLI pair without a gold label ("-") is left out
    assert counts["xnli-ko-test"] == {"eval": 6}
    assert counts["snli-test"] == {"eval": 1}
    dev = counts["xnli-ko-dev"]
    assert set(dev) <= {"train", "calib"} and sum(dev.values()) == 120 and dev.get("calib", 0) > 0
    pairs = nli_data.load(tmp_path / "pairs.jsonl")
    by_premise: dict[str, set[str]] = {}
    for p in pairs:
        if p.source == "xnli-ko-dev":
            by_premise.setdefault(p.premise, set()).add(p.split)
    assert all(len(s) == 1 for s in by_premise.values())  # every hypothesis of a premise on one side
    assert {p.label_name for p in pairs if p.source == "snli-test"} == {"contradiction"}
    assert len(nli_data.load(tmp_path / "pairs.jsonl", "eval")) == 7


def test_split_rule_is_a_pure_function_of_source_family_and_premise():
    assert nli_data.split_of_premise("xnli-ko-dev", "같은 전제") == nli_data.split_of_premise("xnli-ko-dev", "같은 전제")
    splits = [nli_data.split_of_premise("klue-nli-dev", f"전제 {i}") for i in range(2000)]
    assert 0.11 < splits.count("calib") / len(splits) < 0.19


def test_no_files_and_a_broken_file_are_clear_errors(tmp_path):
    with pytest.raises(ReaderDataError, match="none of the NLI files"):
        nli_data.build(tmp_path, tmp_path / "out.jsonl")
    (tmp_path / "KorNLI").mkdir()
    (tmp_path / "KorNLI" / "xnli.dev.ko.tsv").write_text("premise\thypothesis\nA\tB\n", encoding="utf-8")
    with pytest.raises(ReaderDataError, match="xnli-ko-dev"):
        nli_data.build(tmp_path, tmp_path / "out.jsonl")
    assert not (tmp_path / "out.jsonl").exists()
    with pytest.raises(ReaderDataError, match="rag reader nli build"):
        nli_data.load(tmp_path / "missing.jsonl")


def test_plan_steps_visits_every_pair_once_per_epoch():
    steps = plan_steps(10, 4, 2, seed=1)
    assert [len(s) for s in steps] == [4, 4, 2, 4, 4, 2]
    assert sorted(i for s in steps[:3] for i in s) == list(range(10))
    assert sorted(i for s in steps[3:] for i in s) == list(range(10))
    assert steps == plan_steps(10, 4, 2, seed=1)


def test_fit_temperature_recovers_an_overconfident_model():
    rng = np.random.default_rng(0)
    true = rng.normal(size=(3000, 3)) * 2.0
    labels = np.array([rng.choice(3, p=p) for p in softmax(true)])
    t, loss = fit_temperature(true * 3.0, labels)  # logits three times too sharp
    assert 2.6 <= t <= 3.4
    assert loss <= fit_temperature(true * 3.0, labels)[1] + 1e-12
