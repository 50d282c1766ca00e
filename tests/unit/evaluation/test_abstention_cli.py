"""`rag calibrate` and `rag eval-abstention` end to end on a tiny labelled set (hashing embedder)."""
from __future__ import annotations

import json

import pytest
import yaml

from rag.cli.main import main
from tests.conftest import write_config

TOPICS = [
    ("How many days of annual leave do employees get?", "Annual leave: employees get 16 days of annual leave."),
    ("When are salaries paid?", "Salaries are paid on the 25th of every month by bank transfer."),
    ("How long must passwords be?", "Passwords must be at least 12 characters long."),
    ("Where is the fire assembly point?", "The fire assembly point is the square in front of the main gate."),
    ("Who approves travel expenses?", "Travel expenses are approved by the team lead within five days."),
    ("How many visitors may one employee invite?", "Each employee may invite up to five visitors per day."),
]
OFF = ["The cafeteria serves lunch from noon.", "Parking permits are renewed quarterly.",
       "The library closes at six in the evening."]


def dataset(tmp_path):
    rows = []
    for i in range(24):
        q, good = TOPICS[i % len(TOPICS)]
        answerable = i % 2 == 0
        texts = ([good] if answerable else []) + OFF
        rows.append({"query_id": f"q{i:02d}", "question": q, "answerable": answerable,
                     "passages": [{"docid": f"q{i:02d}-p{j}", "title": "", "text": t} for j, t in enumerate(texts)]})
    f = tmp_path / "labelled.jsonl"
    f.write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    return f


@pytest.fixture
def cfg(tmp_path):
    return write_config(tmp_path, bm25={"analyzer": "english"}, gate={"fallback_signal": "bm25"})


def test_calibrate_writes_a_loadable_config_and_a_report(tmp_path, cfg, capsys):
    data = dataset(tmp_path)
    out = tmp_path / "config.calibrated.yaml"
    report = tmp_path / "report"
    assert main(["calibrate", "--dataset", str(data), "--config", str(cfg), "--target-precision", "0.9",
                 "--out", str(out), "--report", str(report)]) == 0
    fitted = yaml.safe_load(out.read_text())["gate"]["fallback_threshold"]
    rep = json.loads((report / "calibration.json").read_text())
    assert rep["fitted"]["bm25"]["threshold"] == pytest.approx(fitted)
    assert rep["fitted"]["bm25"]["reached"]["precision"] >= 0.9
    assert set(rep["signals"]) == {"bm25", "dense"} and rep["curves"]["bm25"]
    for png in ("risk_coverage.png", "histograms.png"):
        assert (report / png).read_bytes()[:4] == b"\x89PNG"
    # The calibrated config gates as fitted: eval-abstention on the same data reaches the target.
    res_file = tmp_path / "eval.json"
    assert main(["eval-abstention", "--dataset", str(data), "--config", str(out), "--json", str(res_file),
                 "--compare", str(report / "calibration.json")]) == 0
    res = json.loads(res_file.read_text())
    assert {"n", "auroc", "threshold", "answered_when_answerable", "abstained_when_unanswerable",
            "precision_of_answered"} <= set(res)
    assert res["n"] == 24 and res["signal"] == "bm25" and res["threshold"] == pytest.approx(fitted)
    assert res["precision_of_answered"] >= 0.9 and res["auroc"] > 0.9
    assert res["compare"]["bm25"]["precision_of_answered"] == res["precision_of_answered"]


def test_calibrate_fits_the_language_threshold_the_gate_reads(tmp_path, capsys):
    """With ``gate.language_thresholds.en`` set, English questions are gated by it, so calibrate fits
    and writes that key (not ``gate.threshold``, which the other languages keep)."""
    cfg = write_config(tmp_path, bm25={"analyzer": "english"}, rerank={"enabled": False},
                       gate={"signal": "bm25", "threshold": 123.0, "language_thresholds": {"en": 99.0}})
    out = tmp_path / "config.calibrated.yaml"
    assert main(["calibrate", "--dataset", str(dataset(tmp_path)), "--config", str(cfg), "--target-precision",
                 "0.9", "--out", str(out), "--report", str(tmp_path / "report")]) == 0
    gate = yaml.safe_load(out.read_text())["gate"]
    rep = json.loads((tmp_path / "report" / "calibration.json").read_text())
    assert gate["threshold"] == 123.0 and gate["language_thresholds"]["en"] != 99.0
    assert rep["fitted"]["bm25:en"]["config_key"] == "gate.language_thresholds.en"
    assert rep["fitted"]["bm25:en"]["threshold"] == pytest.approx(gate["language_thresholds"]["en"])
    assert rep["fitted"]["bm25:en"]["reached"]["precision"] >= 0.9


def test_bad_inputs_are_typed_errors(tmp_path, cfg, capsys):
    assert main(["eval-abstention", "--dataset", str(tmp_path / "missing.jsonl"), "--config", str(cfg)]) == 2
    assert "not found" in capsys.readouterr().err
    data = dataset(tmp_path)
    assert main(["calibrate", "--dataset", str(data), "--config", str(cfg), "--target-precision", "1.5",
                 "--out", str(tmp_path / "c.yaml")]) == 2
    assert "target-precision" in capsys.readouterr().err
    assert main(["calibrate", "--dataset", str(data), "--config", str(cfg), "--target-precision", "0.9",
                 "--out", str(tmp_path / "sub" / "c.yaml"), "--report", str(tmp_path / "r")]) == 2
    assert "next to" in capsys.readouterr().err
