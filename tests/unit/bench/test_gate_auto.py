"""The gate-auto measurement's pieces (rag.bench.gate_auto_parts, gate_auto_table) on small literal inputs:
pooling reads passages only and keeps the first text of a docid, the swapped config points at the new
corpus / index / cache, the halves follow the fixed hash split, a batch line gets the label a person
would write, the rates and the in-sample reach are computed from the rows, and a failing step says so."""
from __future__ import annotations

import json
import logging
import math
from pathlib import Path

import pytest
import yaml

from rag.bench import gate_auto_parts as parts
from rag.bench.gate_auto import Options, _requires, _Run
from rag.bench.gate_auto import run as run_gate_auto
from rag.bench.gate_auto_table import table
from rag.bench.registry import measurements
from rag.calibrate.auto import GroupFit


def _jsonl(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    return path


def test_pooling_squad_reads_paragraphs_with_the_ids_eval_abstention_gives(tmp_path):
    squad = tmp_path / "dev.json"
    squad.write_text(json.dumps({"data": [{"title": "Normans_history", "paragraphs": [
        {"context": "first paragraph", "qas": [{"id": "q1", "question": "who?", "is_impossible": True}]},
        {"context": "second paragraph", "qas": []}]}]}), encoding="utf-8")
    out = tmp_path / "corpus.jsonl"
    assert parts.write_pooled_corpus(squad, out) == 2
    rows = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    assert rows == [{"id": "Normans_history#0", "title": "Normans history", "text": "first paragraph"},
                    {"id": "Normans_history#1", "title": "Normans history", "text": "second paragraph"}]
    assert "who?" not in out.read_text(encoding="utf-8")  # questions (and their labels) are not pooled


def test_pooling_nomiracl_keeps_the_first_text_of_a_docid_sorted_and_limited(tmp_path, caplog):
    data = _jsonl(tmp_path / "ko.test.jsonl", [
        {"query_id": "1", "query": "q", "passages": [{"docid": "d2", "title": "B", "text": "two"},
                                                     {"docid": "d1", "title": "A", "text": "one"}]},
        {"query_id": "2", "query": "q", "passages": [{"docid": "d2", "title": "B", "text": "another two"},
                                                     {"docid": "d3", "title": None, "text": "three"}]}])
    with caplog.at_level(logging.WARNING):
        docs = parts.pooled_passages(data)
    assert docs["d2"].text == "two" and docs["d3"].title == ""
    assert "1 repeated docids" in caplog.text
    out = tmp_path / "corpus.jsonl"
    assert parts.write_pooled_corpus(data, out, limit=2) == 2
    assert [json.loads(x)["id"] for x in out.read_text(encoding="utf-8").splitlines()] == ["d1", "d2"]


def test_the_swapped_config_points_at_the_new_corpus_index_and_cache(tmp_path):
    base = tmp_path / "base.yaml"
    base.write_text(yaml.safe_dump({"corpus": {"paths": ["docs.jsonl"], "format": "jsonl"},
                                    "gate": {"threshold": 0.87, "language_thresholds": {"en": 0.86}}}),
                    encoding="utf-8")
    out = tmp_path / "w" / "kolaw.yaml"
    parts.write_swapped_config(base, out, index=tmp_path / "idx", cache=tmp_path / "c")
    d = yaml.safe_load(out.read_text(encoding="utf-8"))
    assert d["name"] == "kolaw" and d["corpus"]["paths"] == [str((tmp_path / "docs.jsonl").resolve())]
    assert d["index"]["path"] == str((tmp_path / "idx").resolve())
    assert d["embedding"]["cache_dir"] == str((tmp_path / "c").resolve())
    parts.write_swapped_config(base, out, index=tmp_path / "idx", cache=tmp_path / "c", corpus=tmp_path / "p.jsonl")
    assert yaml.safe_load(out.read_text(encoding="utf-8"))["corpus"]["paths"] == [str((tmp_path / "p.jsonl").resolve())]
    assert parts.threshold_of(out) == 0.87 and parts.threshold_of(out, "en") == 0.86
    assert parts.threshold_of(out, "xx") is None


def test_the_halves_follow_the_fixed_hash_split(tmp_path):
    q = _jsonl(tmp_path / "questions.jsonl", [{"id": f"q{i}", "question": "?"} for i in range(40)])
    counts = parts.split_halves(q, tmp_path / "halves")
    assert counts["calib"] + counts["eval"] == 40 and 0 < counts["eval"] < 40
    for name in ("calib", "eval"):
        ids = [json.loads(x)["id"] for x in (tmp_path / "halves" / f"{name}.jsonl").read_text().splitlines()]
        assert len(ids) == counts[name] and all(parts.half(i) == name for i in ids)


@pytest.mark.parametrize("answerable, answered, correct, label", [
    (True, True, True, "right"), (True, True, False, "wrong"), (True, False, False, "wrong"),
    (False, True, False, "wrong"), (False, False, False, "right")])
def test_a_batch_line_gets_the_label_a_person_would_write(answerable, answered, correct, label):
    assert parts.label_of(answerable, answered, correct) == label


def test_rates_and_the_read_score():
    rows = [{"answerable": True, "status": "answered", "correct": True, "gate": {"score": 0.9}},
            {"answerable": True, "status": "answered", "correct": False, "gate": {"score": 0.8}},
            {"answerable": True, "status": "insufficient_evidence", "gate": {"score": 0.95, "stopped_by_reading": True}},
            {"answerable": False, "status": "insufficient_evidence", "gate": {"score": 0.7}},
            {"answerable": False, "status": "answered", "gate": {"score": 0.85}}]
    m = parts.answer_rates(rows)
    assert (m["n_answerable"], m["n_unanswerable"]) == (3, 2)
    assert m["answered_when_answerable"] == round(2 / 3, 4) and m["abstained_when_unanswerable"] == 0.5
    assert m["precision_of_answered"] == round(2 / 3, 4) and m["correct_among_answered"] == round(1 / 3, 4)
    assert m["accuracy_answerable"] == round(1 / 3, 4)
    assert parts.read_score(rows[2]) == -math.inf and parts.read_score({"gate": None}) == -math.inf
    # scores 0.9, 0.8, -inf (answerable) vs 0.7, 0.85: 3 of 6 pairs ordered right
    assert m["gate_auroc"] == 0.5
    assert parts.answer_rates([])["precision_of_answered"] is None


def test_reach_on_a_curve_and_the_labels_fit_summary():
    # 10 questions, 5 answerable
    curve = [{"threshold": 0.9, "coverage": 0.2, "recall": 0.4, "precision": 1.0},
             {"threshold": 0.8, "coverage": 0.5, "recall": 0.8, "precision": 0.8},
             {"threshold": 0.7, "coverage": 0.8, "recall": 1.0, "precision": 0.625}]
    # abstained on unanswerable: 1.0 at 0.9, 0.8 at 0.8, 0.4 at 0.7
    assert parts.reachable(curve, 10, 5) == {"threshold": 0.9, "answered_when_answerable": 0.4,
                                             "abstained_when_unanswerable": 1.0, "precision_of_answered": 1.0}
    assert parts.reachable(curve, 10, 5, min_abstained=0.8)["threshold"] == 0.8
    assert parts.reachable(curve, 10, 5, min_abstained=0.99)["threshold"] == 0.9
    assert parts.reachable(curve, 10, 5, min_abstained=1.01) is None
    report = {"n": 10, "curves": {"dense": curve},
              "fitted": {"gate.threshold": {"reached": {"recall": 0.4, "coverage": 0.2, "precision": 1.0}}}}
    s = parts.labels_fit_summary(report)
    assert "curves" not in s and s["targets_reachable_in_sample"]["dense"]["threshold"] == 0.9


def _auto_report(signal: str = "dense") -> dict:
    return {"chunks": 832, "answerable_found": 80, "answerable_not_found": 0, "signal": signal,
            "probes": [{"answerable": True}, {"answerable": False}, {"answerable": False}],
            "groups": {"dense": [GroupFit("gate.threshold", 80, 80, 0.9, 0.866, 0.6, 0.95,
                                          standard_errors_held=1.0).to_json(),
                                 # too few probes to fit: kept its threshold, its AUROC is no reading of the signal
                                 GroupFit("gate.language_thresholds.en", 2, 1, 0.0, None, None, None).to_json()],
                       "bm25": [GroupFit("gate.bm25_threshold", 1, 1, None, None, None, None).to_json()]},
            "config_updates": {"gate.threshold": 0.866, "gate.signal": "dense"}}


def test_auto_summary_and_the_configured_fit():
    a = parts.auto_summary(_auto_report())
    assert a["unanswerable"] == 2 and a["worst_group_auroc"] == {"bm25": None, "dense": 0.9}
    assert a["fitted"] == {"gate.threshold": {"threshold": 0.866, "standard_errors_held": 1.0}}
    assert parts.configured_fit(_auto_report(), "dense") == []
    assert parts.configured_fit(_auto_report("bm25"), "dense") == ["--set=gate.threshold=0.866"]


def test_the_table_shows_each_set_and_step():
    rates = parts.answer_rates([{"answerable": True, "status": "answered", "correct": True, "gate": {"score": 0.9}},
                                {"answerable": False, "status": "insufficient_evidence", "gate": {"score": 0.5}}])
    results = {"kolaw-dev": {"auto": parts.auto_summary(_auto_report()),
                             "variants": {"auto": {"thresholds": {"threshold": 0.8667, "en": None},
                                                   "all": rates, "eval_half": rates}},
                             "steps": {"index": {"command": "index --config", "seconds": 12.5, "peak_rss_gb": 1.1}}},
               "demo": {"variants": {"shipped": {"thresholds": {"threshold": 0.8757, "en": 0.866},
                                                 "answered_expected": 21, "answerable": 23, "abstained": 4,
                                                 "unanswerable": 4, "checks_passed": 3, "checks": 3}}}}
    text = table(results)
    assert "| kolaw-dev | 832 | 80 / 0, 2 | dense |" in text and "threshold 0.8667" in text
    assert "| shipped | threshold 0.8757, en 0.8660 | 21/23 | 4/4 | 3/3 |" in text
    assert "| kolaw-dev | index | 12.5 | 1.1 |" in text


def test_the_measurement_is_registered_refuses_unknown_sets_and_names_missing_data(tmp_path):
    assert "gate-auto" in measurements()
    with pytest.raises(ValueError, match="unknown"):
        run_gate_auto(Options(sets=("kolaw-dev", "nope"), data=str(tmp_path)))
    missing = _requires(Options(sets=("kolaw-dev", "squad2", "demo"), data=str(tmp_path)))
    assert len(missing) == 2 and "kolaw-dev" in missing[0] and "squad2" in missing[1]


def test_a_failing_step_says_which_command_and_shows_its_output(tmp_path):
    r = _Run(Options(data=str(tmp_path)), tmp_path)
    with pytest.raises(RuntimeError, match="exited 2"):
        r.rag("x", "bad", "calibrate", "--no-such-flag")
    assert (tmp_path / "x" / "bad.log").is_file() and "x" not in r.steps
