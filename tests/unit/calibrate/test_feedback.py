"""`rag calibrate --from-batch`: labelled `rag batch` lines read, mapped to what the gate should have done,
re-scored on the current index and fitted with the probes (demo documents, hashing embedder)."""
from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from rag.cli.main import main
from rag.config import load_config
from rag.errors import DatasetError, InputError
from rag.calibrate.auto import auto_calibrate
from rag.calibrate.feedback import (FeedbackFileError, corpus_warnings, normalize_label, read_feedback,
                                     should_answer)
from rag.index import corpus_fingerprint
from rag.pipeline import Pipeline
from tests.conftest import DEMO_QUESTIONS, write_config

QUESTIONS = [json.loads(line) for line in DEMO_QUESTIONS.read_text(encoding="utf-8").splitlines() if line.strip()]


def line(i: int, question: str | None, status: str = "answered", label=None, **extra) -> str:
    d = {"schema": "rag.batch/1", "id": f"q{i:02d}", "index": i, "status": status, "reason": "",
         "question": question, "config_hash": "c", "results_hash": "r", "result": None, **extra}
    if label is not None:
        d["label"] = label
    return json.dumps(d, ensure_ascii=False)


def write_lines(path: Path, lines: list[str]) -> Path:
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


# -- reading ------------------------------------------------------------------------------------------
@pytest.mark.parametrize("raw,canon", [("right", "right"), ("RIGHT", "right"), (" Wrong ", "wrong"),
                                       ("should_abstain", "should_abstain"), ("should-have-abstained", "should_abstain"),
                                       ("Should_Have_Abstained", "should_abstain"), (None, None), ("", None)])
def test_labels_and_their_aliases(raw, canon):
    assert normalize_label(raw) == canon


@pytest.mark.parametrize("status,label,answer", [
    ("answered", "right", True), ("answered", "wrong", False), ("answered", "should_abstain", False),
    ("insufficient_evidence", "should_abstain", False), ("failed", "should_abstain", False),
    ("insufficient_evidence", "wrong", True), ("insufficient_evidence", "right", False)])
def test_what_the_gate_should_have_done(status, label, answer):
    assert should_answer(status, label) is answer


def test_failed_lines_cannot_be_judged_right_or_wrong():
    with pytest.raises(ValueError, match="no answer to judge"):
        should_answer("failed", "right")


def test_read_feedback_keeps_labelled_lines_ignores_the_rest_and_the_last_line_of_an_id_counts(tmp_path):
    resolved = {"question": "follow-up?", "trace": None, "citations": [],
                "resolution": {"asked": "and that?", "question": "How long is annual leave?", "standalone": False}}
    path = write_lines(tmp_path / "r.jsonl", [
        line(1, "a?", label="Right"),
        line(2, "b?"),  # no label: ignored
        json.dumps({"id": "q03", "question": "c?", "status": "answered", "label": None}),  # no schema: fine
        "",
        line(4, "d?", status="insufficient_evidence", label="should-have-abstained"),
        line(5, "and that?", label="wrong", result=resolved),
        line(1, "a?", status="insufficient_evidence", label="wrong"),  # a retry of q01: this line counts
    ])
    fs = read_feedback(path)
    assert [(i.id, i.label, i.should_answer) for i in fs.items] == [
        ("q04", "should_abstain", False), ("q05", "wrong", False), ("q01", "wrong", True)]
    assert fs.items[1].question == "How long is annual leave?" and fs.items[1].asked == "and that?"
    assert (fs.lines, fs.unlabelled, fs.superseded) == (6, 2, 1)
    assert fs.label_counts == {"right": 0, "wrong": 2, "should_abstain": 1}


def test_every_bad_line_is_named_in_one_error(tmp_path):
    path = write_lines(tmp_path / "bad.jsonl", [
        line(1, "fine?", label="right"),
        "{not json",
        line(3, "x?", label="maybe"),
        line(4, "", label="wrong"),
        line(5, "y?", status="failed", label="right"),
        json.dumps({"schema": "other/1", "question": "z?", "label": "right"}),
        "[1, 2]",
        line(8, None),  # unlabelled: its missing question does not matter
    ])
    with pytest.raises(FeedbackFileError) as exc:
        read_feedback(path)
    assert isinstance(exc.value, DatasetError) and isinstance(exc.value, InputError)
    assert [n for n, _ in exc.value.problems] == [2, 3, 4, 5, 6, 7]
    msg = str(exc.value)
    for n in (2, 3, 4, 5, 6, 7):
        assert f"{path}:{n}:" in msg
    assert "unknown label 'maybe'" in msg and "needs its question" in msg and "should-have-abstained" in msg
    assert "nothing was fitted or written" in msg


def test_a_file_without_any_label_is_an_error(tmp_path):
    with pytest.raises(InputError, match="carries a label"):
        read_feedback(write_lines(tmp_path / "r.jsonl", [line(1, "a?"), line(2, "b?")]))
    with pytest.raises(InputError, match="no such file"):
        read_feedback(tmp_path / "missing.jsonl")


def test_corpus_warnings_name_documents_the_index_does_not_hold(tmp_path):
    res = {"citations": [{"document_id": "gone", "document_version": "1"}],
           "trace": {"candidates": [{"evidence_id": "kept:2024:3"}, {"evidence_id": "gone:1:0"}]}}
    fs = read_feedback(write_lines(tmp_path / "r.jsonl", [line(1, "a?", label="right", result=res)]))
    assert fs.documents == {("gone", "1"), ("kept", "2024")}
    assert corpus_warnings(fs, {("kept", "2024"): None}, "fp") != []
    assert "gone@1" in corpus_warnings(fs, {("kept", "2024"): None}, "fp")[0]
    assert corpus_warnings(fs, {("kept", "2024"): None, ("gone", "1"): None}, "fp") == []
    fs2 = read_feedback(write_lines(tmp_path / "r2.jsonl", [line(1, "a?", label="right", corpus_fingerprint="old")]))
    assert "records corpus old" in corpus_warnings(fs2, {}, "new")[0]


# -- fitting --------------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def demo(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("feedback")
    cfg = write_config(tmp, gate={"signal": "dense", "threshold": 0.0})
    assert main(["index", "--config", str(cfg)]) == 0
    return cfg, Pipeline(load_config(cfg))


def _dense_threshold(groups: dict) -> float:
    (g,) = [g for g in groups["dense"] if g["key"] == "gate.threshold"]
    assert g["threshold"] is not None, g
    return g["threshold"]


@pytest.mark.parametrize("status,label,direction", [("answered", "should_abstain", "up"),
                                                    ("insufficient_evidence", "wrong", "down")])
def test_labels_move_the_threshold_the_way_they_say(demo, tmp_path, status, label, direction):
    cfg, pipeline = demo
    batch = write_lines(tmp_path / "r.jsonl", [line(i, q["question"], status, label) for i, q in enumerate(QUESTIONS)])
    rep = auto_calibrate(pipeline, 0.9, tmp_path / "report", per_language=20, feedback=read_feedback(batch))
    fb = rep.summary["feedback"]
    before, after = _dense_threshold(fb["groups_without_labels"]), _dense_threshold(rep.summary["groups"])
    assert (after > before) if direction == "up" else (after < before), (before, after)
    (g,) = [g for g in fb["groups"]["dense"] if g["key"] == "gate.threshold"]
    n = len(QUESTIONS)
    assert (g["labelled_answerable"], g["labelled_unanswerable"]) == ((0, n) if direction == "up" else (n, 0))
    assert g["probes_answerable"] > 0 and g["probes_unanswerable"] > 0
    saved = json.loads((tmp_path / "report" / "auto_calibration.json").read_text())
    assert len(saved["labelled"]) == n and all(x["label"] == label for x in saved["labelled"])
    assert all(p["kind"] != "labelled" for p in saved["probes"])
    # deterministic: the same labels give the same fit
    again = auto_calibrate(pipeline, 0.9, tmp_path / "report2", per_language=20, feedback=read_feedback(batch))
    assert again.updates == rep.updates


def _trace(gate_reason: str) -> dict:
    return {"citations": [], "trace": {"gate": {"reason": gate_reason}}}


def test_an_abstention_made_after_the_gate_is_read_as_such(tmp_path):
    fs = read_feedback(write_lines(tmp_path / "r.jsonl", [
        line(1, "a?", "insufficient_evidence", "right", result=_trace("answer")),  # the model declined
        line(2, "b?", "insufficient_evidence", "right", result=_trace("below_threshold")),  # the gate stopped it
        line(3, "c?", "answered", "wrong", result=_trace("answer")),
        line(4, "d?", "insufficient_evidence", "wrong", result=None)]))
    assert [i.stopped_after_gate for i in fs.items] == [True, False, False, False]


def test_a_right_abstention_a_later_stage_made_does_not_raise_the_threshold(demo, tmp_path):
    cfg, pipeline = demo
    reports = {}
    for gate_reason in ("below_threshold", "answer"):
        batch = write_lines(tmp_path / f"{gate_reason}.jsonl", [
            line(i, q["question"], "insufficient_evidence", "right", result=_trace(gate_reason))
            for i, q in enumerate(QUESTIONS)])
        reports[gate_reason] = auto_calibrate(pipeline, 0.9, tmp_path / gate_reason, per_language=20,
                                              feedback=read_feedback(batch)).summary
    gated, later = reports["below_threshold"], reports["answer"]
    before = _dense_threshold(gated["feedback"]["groups_without_labels"])
    assert _dense_threshold(gated["groups"]) > before  # abstentions the gate made: negatives at their scores
    assert _dense_threshold(later["groups"]) <= before  # a later stage's: below every value, no threshold needed
    saved = json.loads((tmp_path / "answer" / "auto_calibration.json").read_text())
    assert all(x["stopped_after_gate"] for x in saved["labelled"])


def test_cli_from_batch_writes_the_config_and_the_report(demo, tmp_path, capsys):
    cfg, pipeline = demo
    docs = sorted(pipeline.index.documents)
    cited = {"citations": [{"document_id": docs[0][0], "document_version": docs[0][1]}], "trace": None}
    lines = [line(i, q["question"], "answered", "should-have-abstained" if i % 2 else "right", result=cited)
             for i, q in enumerate(QUESTIONS)]
    batch = write_lines(tmp_path / "results.jsonl", lines + [line(99, "unlabelled?")])
    out = cfg.with_name("config.fb.yaml")
    report = tmp_path / "report"
    assert main(["calibrate", "--auto", "--from-batch", str(batch), "--config", str(cfg), "--out", str(out),
                 "--report", str(report), "--probes", "20", "--feedback-weight", "3"]) == 0
    gate = yaml.safe_load(out.read_text())["gate"]
    assert gate["fitted_on"] == corpus_fingerprint(pipeline.index.documents)
    fb = json.loads((report / "auto_calibration.json").read_text())["feedback"]
    assert fb["batch_file"] == str(batch) and fb["weight"] == 3
    assert fb["labels"] == {"right": 14, "wrong": 0, "should_abstain": 14} and fb["ignored_unlabelled"] == 1
    assert fb["corpus_warnings"] == [] and fb["other_config"] == ["r"]  # "r": not this config's results_hash
    assert {"thresholds_with_labels", "thresholds_without_labels", "changed"} <= fb.keys()
    assert '"feedback"' in capsys.readouterr().out


def test_cli_from_batch_with_bad_lines_writes_nothing(demo, tmp_path, capsys):
    cfg, _ = demo
    batch = write_lines(tmp_path / "results.jsonl", [line(1, "a?", label="right"), line(2, "b?", label="nope")])
    out = cfg.with_name("config.bad.yaml")
    assert main(["calibrate", "--from-batch", str(batch), "--config", str(cfg), "--out", str(out),
                 "--report", str(tmp_path / "report")]) == 2
    err = capsys.readouterr().err
    assert f"{batch}:2: unknown label 'nope'" in err and "right, wrong, should_abstain" in err
    assert not out.exists() and not (tmp_path / "report").exists()
    assert main(["calibrate", "--auto", "--feedback-weight", "2", "--config", str(cfg), "--out", str(out)]) == 2
    assert "add --from-batch" in capsys.readouterr().err
