"""``rag bench`` on the command line: list, run (one fast real measurement), check, typed errors."""
from __future__ import annotations

import json
from pathlib import Path

from rag.cli.main import main

ROOT = Path(__file__).resolve().parents[3]
DEMO = ROOT / "data" / "demo" / "documents.jsonl"


def test_list_names_every_measurement_and_recipe(capsys):
    assert main(["bench", "list"]) == 0
    out = capsys.readouterr().out
    for name in ("context", "retrieval", "serve", "support", "msmarco-abstention"):
        assert name in out


def test_run_writes_a_stamped_result(tmp_path, capsys):
    out = tmp_path / "r.json"
    assert main(["bench", "run", "injection", "--corpora", str(DEMO), "--out", str(out)]) == 0
    rec = json.loads(out.read_text(encoding="utf-8"))
    assert rec["measurement"] == "injection" and rec["command"][:4] == ["rag", "bench", "run", "injection"]
    assert rec["result"]["corpora"]["demo"]["documents"] == 35 and rec["result"]["corpora"]["demo"]["flagged"] == 1
    assert "demo" in capsys.readouterr().out


def test_errors_exit_2(tmp_path, capsys):
    assert main(["bench", "run", "nope"]) == 2
    assert main(["bench", "run", "injection", "--corpora", str(tmp_path / "absent.jsonl")]) == 2
    bad = tmp_path / "expected.yaml"
    bad.write_text("- id: a\n  command: rag bench run nope\n  metric: m\n  value: 1\n  max_minutes: 1\n")
    assert main(["bench", "check", "--expected", str(bad)]) == 2
    assert main(["bench"]) == 2
    err = capsys.readouterr().err
    assert "no measurement 'nope'" in err and "absent.jsonl is missing" in err and "line 1 (entry a)" in err


def test_check_exit_code_and_lines(tmp_path, capsys):
    exp = tmp_path / "expected.yaml"
    exp.write_text(f"- id: demo-flagged\n  command: rag bench run injection --corpora {DEMO}\n  metric: result.flagged_total\n"
                   f"  value: 1\n  max_minutes: 2\n  source: docs/retrieval.md\n"
                   f"- id: demo-slow\n  command: rag bench run injection --corpora {DEMO} --show 1\n"
                   f"  metric: result.flagged_total\n  value: 1\n  max_minutes: 30\n")
    assert main(["bench", "--check", "--expected", str(exp), "--max-minutes", "10"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith("OK   demo-flagged") and out[1].startswith("SKIP demo-slow")
    exp.write_text(exp.read_text().replace("value: 1\n  max_minutes: 2", "value: 2\n  max_minutes: 2"))
    assert main(["bench", "check", "--expected", str(exp), "--only", "demo-flagged"]) == 1
    assert capsys.readouterr().out.startswith("FAIL demo-flagged")
