"""``rag bench check``: the expected-results file, tolerances both ways, OK / FAIL / SKIP lines."""
from __future__ import annotations

import io
from dataclasses import dataclass

import pytest

from rag.bench.check import EXPECTED, Expectation, Tolerance, check, judge, load_expected, metric_value
from rag.bench.errors import BenchOptionError, ExpectedFileError, MeasurementError
from rag.bench.registry import Measurement, Outcome


@dataclass(frozen=True)
class _Opts:
    n: int = 3
    data: str = ""


KNOWN = {"fake": Measurement("fake", "fake", _Opts, lambda o: Outcome({}),
                             lambda o: [f"{o.data} is missing"] if o.data == "absent" else [])}

GOOD = """\
- id: fake-latency
  command: rag bench run fake --n 5
  metric: result.modes.warm.p50
  value: 2.0
  tolerance: {rel: 0.5}
  direction: lower_is_better
  max_minutes: 1
  source: results/fake.json
- id: fake-count
  command: rag bench run fake --n 5
  metric: result.rows.0.count
  value: 8
  max_minutes: 1
- id: fake-quality
  command: [rag, bench, run, fake]
  metric: result.auroc
  value: 0.81
  tolerance: {abs: 0.002}
  max_minutes: 1
- id: fake-no-data
  command: rag bench run fake --data absent
  metric: result.auroc
  value: 0.5
  max_minutes: 1
- id: fake-slow
  command: rag bench run fake --n 99
  metric: result.auroc
  value: 0.5
  max_minutes: 30
"""


def _file(tmp_path, text):
    p = tmp_path / "expected.yaml"
    p.write_text(text, encoding="utf-8")
    return p


def _entry(value, tol=Tolerance(), direction="both"):
    return Expectation("e", ("rag", "bench", "run", "fake"), "result.x", value, tol, direction, 1.0, "", 1)


def test_tolerance_absolute_and_relative_both_ways():
    assert judge(_entry(0.81, Tolerance(abs=0.002)), 0.8115)[0] == "OK"
    assert judge(_entry(0.81, Tolerance(abs=0.002)), 0.8085)[0] == "OK"
    assert judge(_entry(0.81, Tolerance(abs=0.002)), 0.813)[0] == "FAIL"
    assert judge(_entry(0.81, Tolerance(abs=0.002)), 0.807)[0] == "FAIL"
    assert judge(_entry(10.0, Tolerance(rel=0.1)), 10.9)[0] == "OK"
    assert judge(_entry(10.0, Tolerance(rel=0.1)), 8.9)[0] == "FAIL"
    assert judge(_entry(8, Tolerance()), 8)[0] == "OK" and judge(_entry(8), 9)[0] == "FAIL"
    assert Tolerance(abs=1, rel=0.5).allowed(10) == 5 and Tolerance(abs=6, rel=0.5).allowed(10) == 6


def test_direction_makes_a_ceiling_or_a_floor():
    ceiling = _entry(2.0, Tolerance(rel=0.5), "lower_is_better")
    assert judge(ceiling, 0.1)[0] == "OK" and judge(ceiling, 3.0)[0] == "OK" and judge(ceiling, 3.1)[0] == "FAIL"
    floor = _entry(18.0, Tolerance(rel=0.5), "higher_is_better")
    assert judge(floor, 100.0)[0] == "OK" and judge(floor, 9.0)[0] == "OK" and judge(floor, 8.9)[0] == "FAIL"


def test_non_numeric_values_are_exact_and_nan_fails():
    assert judge(_entry(True), True)[0] == "OK" and judge(_entry(True), False)[0] == "FAIL"
    assert judge(_entry(1.0, Tolerance(abs=1)), float("nan"))[0] == "FAIL"
    assert judge(_entry(1.0, Tolerance(abs=1)), "fast")[0] == "FAIL"


def test_metric_paths_walk_mappings_and_lists():
    rec = {"result": {"rows": [{"count": 8}], "a": {"b": 1}}}
    assert metric_value(rec, "result.rows.0.count") == 8 and metric_value(rec, "result.a.b") == 1
    with pytest.raises(KeyError, match="no 'c'"):
        metric_value(rec, "result.a.c")


def test_check_prints_ok_fail_skip_and_runs_a_command_once(tmp_path):
    entries = load_expected(_file(tmp_path, GOOD), KNOWN)
    assert [e.id for e in entries] == ["fake-latency", "fake-count", "fake-quality", "fake-no-data", "fake-slow"]
    assert entries[0].line == 1 and entries[1].line == 9 and entries[0].argv == ("--n", "5")
    calls = []

    def runner(e, timeout_s):
        calls.append((e.command, timeout_s))
        return {"result": {"modes": {"warm": {"p50": 2.9}}, "rows": [{"count": 9}], "auroc": 0.811}}

    out = io.StringIO()
    verdicts = check(entries, max_minutes=10, runner=runner, known=KNOWN, stream=out)
    assert [v.status for v in verdicts] == ["OK", "FAIL", "OK", "SKIP", "SKIP"]
    assert calls == [(("rag", "bench", "run", "fake", "--n", "5"), 60.0), (("rag", "bench", "run", "fake"), 60.0)]
    lines = out.getvalue().splitlines()
    assert lines[0].startswith("OK   fake-latency") and "at most 3" in lines[0]
    assert lines[1].startswith("FAIL fake-count") and "9 (expected 8, exact)" in lines[1]
    assert lines[3].startswith("SKIP fake-no-data") and "absent is missing" in lines[3]
    assert lines[4].startswith("SKIP fake-slow") and "--max-minutes 10" in lines[4]
    assert lines[-1] == "2 OK, 1 FAIL, 2 SKIP of 5"


def test_a_failed_run_and_a_missing_metric_are_fail_lines(tmp_path):
    entries = load_expected(_file(tmp_path, GOOD), KNOWN)

    def runner(e, timeout_s):
        if e.argv:
            raise MeasurementError("ran past max_minutes (1 min); stopped")
        return {"result": {}}

    out = io.StringIO()
    verdicts = check(entries, only=["fake-latency", "fake-quality"], runner=runner, known=KNOWN, stream=out)
    assert [(v.id, v.status) for v in verdicts] == [("fake-latency", "FAIL"), ("fake-quality", "FAIL")]
    assert "ran past max_minutes" in verdicts[0].detail and "metric not in the result" in verdicts[1].detail
    with pytest.raises(BenchOptionError, match="no entry"):
        check(entries, only=["nope"], runner=runner, known=KNOWN, stream=out)


@pytest.mark.parametrize("text, needle", [
    ("- id: a\n  command: rag bench run fake\n  metric: m\n  value: 1\n", "line 1 (entry a): missing 'max_minutes'"),
    ("- id: a\n  command: rag bench run fake\n  metric: m\n  value: 1\n  max_minutes: 1\n"
     "- id: b\n  command: rag bench run nope\n  metric: m\n  value: 1\n  max_minutes: 1\n", "line 6 (entry b): no measurement 'nope'"),
    ("- id: a\n  command: rag bench run fake --n many\n  metric: m\n  value: 1\n  max_minutes: 1\n", "(entry a): rag bench run fake: argument --n"),
    ("- id: a\n  command: rag index\n  metric: m\n  value: 1\n  max_minutes: 1\n", "must start with 'rag bench run NAME'"),
    ("- id: a\n  command: rag bench run fake\n  metric: m\n  value: 1\n  tolerance: {pct: 3}\n  max_minutes: 1\n", "tolerance must be"),
    ("- id: a\n  command: rag bench run fake\n  metric: m\n  value: 1\n  direction: up\n  max_minutes: 1\n", "direction must be"),
    ("- id: a\n  command: rag bench run fake\n  metric: m\n  value: 1\n  max_minutes: 1\n  colour: red\n", "unknown key"),
    ("- id: a\n  command: rag bench run fake --out x.json\n  metric: m\n  value: 1\n  max_minutes: 1\n", "must not give --out"),
    ("- id: a\n  command: rag bench run fake\n  metric: m\n  value: 1\n  max_minutes: 1\n"
     "- id: a\n  command: rag bench run fake\n  metric: m\n  value: 1\n  max_minutes: 1\n", "line 6 (entry a): duplicate id"),
    ("- command: rag bench run fake\n", "line 1: every entry needs an id"),
    ("id: a\n", "expected a YAML list"),
    ("- id: a\n  command: [unclosed\n", "not valid YAML"),
])
def test_a_bad_expected_file_is_a_typed_error_naming_line_and_entry(tmp_path, text, needle):
    with pytest.raises(ExpectedFileError) as err:
        load_expected(_file(tmp_path, text), KNOWN)
    assert needle in str(err.value) and "expected.yaml" in str(err.value)


def test_the_shipped_expected_file_parses():
    entries = load_expected(EXPECTED)
    assert entries and all(e.source for e in entries)
    assert len({e.id for e in entries}) == len(entries)
