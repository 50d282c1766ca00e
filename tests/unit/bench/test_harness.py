"""The measurement harness: percentiles, timing, stamping, free ports, options."""
from __future__ import annotations

import json
import math
import socket
from dataclasses import dataclass, field
from typing import Literal

import pytest

from rag.bench import harness
from rag.bench.errors import BenchOptionError, MissingDataError, UnknownMeasurementError
from rag.bench.registry import Measurement, Outcome, get, measurements, parse_options, run_measurement


def test_percentiles_interpolate_and_summary_has_its_fields():
    assert harness.percentiles([1, 2, 3, 4, 5], (50, 95)) == [3.0, 4.8]
    s = harness.latency_summary([10.0, 20.0, 30.0, 40.0])
    assert s == {"n": 4, "p50": 25.0, "p95": 38.5, "mean": 25.0, "max": 40.0}
    empty = harness.latency_summary([])
    assert empty["n"] == 0 and math.isnan(empty["p50"])


def test_percentiles_are_the_batch_ones():
    from rag.batch import percentiles

    assert harness.percentiles is percentiles


def test_time_calls_runs_warmups_untimed_then_each_input():
    seen = []
    ms = harness.time_calls(seen.append, [1, 2, 3], warmups=[0])
    assert seen == [0, 1, 2, 3] and len(ms) == 3 and all(x >= 0 for x in ms)


def test_free_port_binds_on_loopback():
    port = harness.free_port()
    assert 1024 <= port <= 65535
    with socket.socket() as s:
        s.bind(("127.0.0.1", port))  # still free: nobody kept it
        assert s.getsockname() == ("127.0.0.1", port)


def test_rss_of_this_process_and_peak():
    import os

    assert harness.rss_mb(os.getpid()) > 1
    assert harness.peak_rss_mb() >= harness.rss_mb(os.getpid()) * 0.5
    assert math.isnan(harness.rss_mb(2**30))


def test_stamp_has_date_machine_commit_hashes_and_command():
    rec = harness.stamp("demo", {"n": 3}, ["rag", "bench", "run", "demo", "--n", "3"], "abc123")
    assert set(rec) >= {"measurement", "date", "machine", "git_commit", "git_dirty", "config_hash", "options_hash",
                        "options", "command"}
    assert rec["config_hash"] == "abc123" and rec["command"][-1] == "3"
    assert set(rec["machine"]) >= {"platform", "python", "cpus", "memory_gb", "processor"}
    assert rec["machine"]["cpus"] >= 1 and rec["date"][:2] == "20"
    assert rec["options_hash"] == harness.stamp("x", {"n": 3}, [], None)["options_hash"]
    assert rec["options_hash"] != harness.stamp("x", {"n": 4}, [], None)["options_hash"]


def test_write_result_writes_utf8_json(tmp_path):
    p = harness.write_result(tmp_path / "sub" / "r.json", {"a": "한국어", "b": 1.5})
    assert json.loads(p.read_text(encoding="utf-8")) == {"a": "한국어", "b": 1.5}
    assert not list(p.parent.glob("*.tmp"))


@dataclass(frozen=True)
class _Opts:
    n: int = 3
    rate: float = 0.5
    mode: Literal["a", "b"] = "a"
    flag: bool = False
    sizes: tuple[int, ...] = (1, 2)
    label: str = field(default="x", metadata={"help": "a label"})
    limit: int | None = None


def _fake(requires=lambda o: ()):
    return Measurement("fake", "a fake measurement", _Opts,
                       lambda o: Outcome({"n": o.n, "sizes": list(o.sizes), "flag": o.flag}, "table", "cfg1"), requires)


def test_options_are_typed_from_the_dataclass():
    m = _fake()
    o, out = parse_options(m, ["--n", "7", "--rate", "0.25", "--mode", "b", "--flag", "--sizes", "3", "4", "5",
                               "--limit", "9", "--out", "r.json"])
    assert o == _Opts(7, 0.25, "b", True, (3, 4, 5), "x", 9) and out == "r.json"
    assert parse_options(m, []) == (_Opts(), None)


@pytest.mark.parametrize("argv", [["--n", "many"], ["--mode", "c"], ["--nope", "1"], ["extra"]])
def test_bad_options_raise_a_typed_error(argv):
    with pytest.raises(BenchOptionError):
        parse_options(_fake(), argv)


def test_run_measurement_stamps_and_writes(tmp_path):
    out = tmp_path / "r.json"
    record, outcome = run_measurement(_fake(), ["--n", "5", "--out", str(out)])
    assert record["result"] == {"n": 5, "sizes": [1, 2], "flag": False} and outcome.table == "table"
    assert record["config_hash"] == "cfg1" and record["options"]["n"] == 5 and record["seconds"] >= 0
    assert record["command"] == ["rag", "bench", "run", "fake", "--n", "5", "--out", str(out)]
    assert json.loads(out.read_text())["result"]["n"] == 5


def test_missing_inputs_raise_missing_data():
    with pytest.raises(MissingDataError, match="no such corpus"):
        run_measurement(_fake(lambda o: ["no such corpus"]), [])


def test_registry_knows_the_measurements_and_their_options_parse():
    known = measurements()
    assert {"context", "validation", "retrieval", "e2e", "rerank", "embedders", "serve", "support", "injection",
            "tools", "milvus_equivalence"} <= set(known)
    for m in known.values():
        parse_options(m, [])  # every default is a valid option set
    with pytest.raises(UnknownMeasurementError, match="known: "):
        get("nope")
