"""``rag bench check``: run the commands of an expected-results file and compare, one line per entry.

The file (``benchmarks/expected.yaml``) is a list of entries::

    - id: context-builder-warm-blocks          # unique
      command: rag bench run context --builds 100
      metric: result.modes.builder_warm.blocks   # dotted path into the result JSON (list items by number)
      value: 8                                   # expected value (a number, or true/false/a string: exact)
      tolerance: {abs: 0}                        # abs and/or rel (a fraction of |value|); omitted = exact
      direction: both                            # both | lower_is_better | higher_is_better
      max_minutes: 2                             # the command's time limit
      source: results/bench_context.json         # where the value came from

``direction: lower_is_better`` makes the value a ceiling (observed <= value + tolerance passes, however
much lower); ``higher_is_better`` a floor. Entries sharing a command run it once. An entry prints
``OK``, ``FAIL`` (off by more than the tolerance, or the run failed) or ``SKIP`` (its inputs are
missing, or its ``max_minutes`` is over ``--max-minutes``); the check fails when any entry fails.
In the spirit of pyserini's reproduction matrices.
"""
from __future__ import annotations

import dataclasses
import json
import logging
import math
import os
import shlex
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Literal, Mapping, Sequence, TextIO

from rag.bench.errors import BenchError, BenchOptionError, ExpectedFileError, MeasurementError
from rag.bench.harness import ROOT
from rag.bench.registry import Measurement, get, measurements, missing_inputs, parse_options

log = logging.getLogger(__name__)

EXPECTED = ROOT / "benchmarks" / "expected.yaml"
DIRECTIONS = ("both", "lower_is_better", "higher_is_better")
KEYS = {"id", "command", "metric", "value", "tolerance", "direction", "max_minutes", "source", "note"}
Status = Literal["OK", "FAIL", "SKIP"]


@dataclass(frozen=True)
class Tolerance:
    abs: float = 0.0
    rel: float = 0.0

    def allowed(self, expected: float) -> float:
        """The largest allowed distance from ``expected``: the larger of ``abs`` and ``rel * |expected|``."""
        return max(self.abs, self.rel * abs(expected))

    def text(self) -> str:
        parts = ([f"±{self.abs:g}"] if self.abs else []) + ([f"±{self.rel:.0%}"] if self.rel else [])
        return " or ".join(parts) or "exact"


@dataclass(frozen=True)
class Expectation:
    id: str
    command: tuple[str, ...]
    metric: str
    value: Any
    tolerance: Tolerance
    direction: str
    max_minutes: float
    source: str
    line: int

    @property
    def measurement(self) -> str:
        return self.command[3]

    @property
    def argv(self) -> tuple[str, ...]:
        """The measurement's own options (after ``rag bench run NAME``)."""
        return self.command[4:]


@dataclass(frozen=True)
class Verdict:
    id: str
    status: Status
    detail: str
    observed: Any = None
    seconds: float | None = None

    def line(self) -> str:
        took = f"  [{self.seconds:.0f} s]" if self.seconds is not None else ""
        return f"{self.status:<5}{self.id:<40} {self.detail}{took}"


# --------------------------------------------------------------------------- the file
def _bad(path: Path, line: int | None, entry: str | None, msg: str) -> ExpectedFileError:
    where = f"{path}" + (f", line {line}" if line else "") + (f" (entry {entry})" if entry else "")
    return ExpectedFileError(f"{where}: {msg}")


def _number(x: Any) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool)


def load_expected(path: str | Path = EXPECTED, known: Mapping[str, Measurement] | None = None) -> list[Expectation]:
    """The entries of an expected-results file, each checked (command parses, names a known
    measurement, value and tolerance are of the right kind); :class:`ExpectedFileError` naming the
    line and entry of the first bad one."""
    import yaml

    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8")
    except OSError as exc:
        raise _bad(p, None, None, f"cannot read the expected-results file ({exc})") from None
    try:
        root = yaml.compose(text, Loader=yaml.SafeLoader)
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        raise _bad(p, mark.line + 1 if mark else None, None, f"not valid YAML ({exc})") from None
    if not isinstance(data, list) or root is None:
        raise _bad(p, 1, None, "expected a YAML list of entries (- id: ..., command: ..., metric: ..., value: ...)")
    known = measurements() if known is None else known
    out: list[Expectation] = []
    seen: set[str] = set()
    for node, raw in zip(root.value, data):
        line = node.start_mark.line + 1
        out.append(_entry(p, line, raw, known, seen))
    return out


def _entry(p: Path, line: int, raw: Any, known: Mapping[str, Measurement], seen: set[str]) -> Expectation:
    if not isinstance(raw, dict):
        raise _bad(p, line, None, f"an entry must be a mapping, got {raw!r}")
    eid = raw.get("id")
    if not isinstance(eid, str) or not eid:
        raise _bad(p, line, None, "every entry needs an id (a non-empty string)")
    if eid in seen:
        raise _bad(p, line, eid, "duplicate id")
    seen.add(eid)
    unknown = sorted(set(raw) - KEYS)
    if unknown:
        raise _bad(p, line, eid, f"unknown key(s) {unknown}; allowed: {sorted(KEYS)}")
    for key in ("command", "metric", "value", "max_minutes"):
        if key not in raw:
            raise _bad(p, line, eid, f"missing {key!r}")
    cmd = raw["command"]
    argv = tuple(shlex.split(cmd) if isinstance(cmd, str) else [str(x) for x in cmd])
    if len(argv) < 4 or argv[:3] != ("rag", "bench", "run"):
        raise _bad(p, line, eid, f"command must start with 'rag bench run NAME', got {cmd!r}")
    try:
        m = get(argv[3], known)
        _, out = parse_options(m, argv[4:])
    except BenchError as exc:
        raise _bad(p, line, eid, str(exc)) from None
    if out is not None:
        raise _bad(p, line, eid, "the command must not give --out (the check writes its own)")
    if not isinstance(raw["metric"], str) or not raw["metric"]:
        raise _bad(p, line, eid, "metric must be a dotted path such as result.modes.warm.p50_ms")
    value = raw["value"]
    if not (_number(value) or isinstance(value, (bool, str))):
        raise _bad(p, line, eid, f"value must be a number, true/false or a string, got {value!r}")
    tol = raw.get("tolerance") or {}
    if not isinstance(tol, dict) or set(tol) - {"abs", "rel"} or not all(_number(v) and v >= 0 for v in tol.values()):
        raise _bad(p, line, eid, f"tolerance must be {{abs: X}} and/or {{rel: F}} with X, F >= 0, got {tol!r}")
    if tol and not _number(value):
        raise _bad(p, line, eid, "a tolerance needs a numeric value")
    direction = raw.get("direction", "both")
    if direction not in DIRECTIONS:
        raise _bad(p, line, eid, f"direction must be one of {DIRECTIONS}, got {direction!r}")
    if direction != "both" and not _number(value):
        raise _bad(p, line, eid, "a direction needs a numeric value")
    mm = raw["max_minutes"]
    if not _number(mm) or mm <= 0:
        raise _bad(p, line, eid, f"max_minutes must be a positive number, got {mm!r}")
    return Expectation(eid, argv, raw["metric"], value, Tolerance(float(tol.get("abs", 0)), float(tol.get("rel", 0))),
                       direction, float(mm), str(raw.get("source", "")), line)


# --------------------------------------------------------------------------- judging
def metric_value(record: Mapping[str, Any], path: str) -> Any:
    """The value at a dotted path (``result.modes.warm.p50_ms``; list items by number); KeyError if absent."""
    cur: Any = record
    for part in path.split("."):
        if isinstance(cur, Mapping) and part in cur:
            cur = cur[part]
        elif isinstance(cur, (list, tuple)) and part.lstrip("-").isdigit() and -len(cur) <= int(part) < len(cur):
            cur = cur[int(part)]
        else:
            raise KeyError(f"{path}: no {part!r} (have {sorted(cur) if isinstance(cur, Mapping) else type(cur).__name__})")
    return cur


def judge(e: Expectation, observed: Any) -> tuple[Status, str]:
    """OK or FAIL for one observed value, with a line saying why."""
    if not _number(e.value):
        ok = observed == e.value
        return ("OK" if ok else "FAIL"), f"{observed!r} (expected {e.value!r})"
    if not _number(observed) or math.isnan(observed):
        return "FAIL", f"{observed!r} is not a number (expected {e.value!r})"
    allowed = e.tolerance.allowed(e.value)
    diff = observed - e.value
    if e.direction == "lower_is_better":
        ok, how = diff <= allowed + 1e-12, f"at most {e.value + allowed:g}"
    elif e.direction == "higher_is_better":
        ok, how = -diff <= allowed + 1e-12, f"at least {e.value - allowed:g}"
    else:
        ok, how = abs(diff) <= allowed + 1e-12, e.tolerance.text()
    return ("OK" if ok else "FAIL"), f"{observed:g} (expected {e.value:g}, {how})"


# --------------------------------------------------------------------------- running
Runner = Callable[[Expectation, float], Mapping[str, Any]]


def subprocess_runner(e: Expectation, timeout_s: float) -> dict[str, Any]:
    """Run the entry's command as ``python -m rag.cli bench run ...`` in its own process group (so its
    peak memory is its own and a timeout stops everything it started); the record it wrote."""
    with tempfile.TemporaryDirectory(prefix="rag-bench-") as tmp:
        out = Path(tmp) / "result.json"
        cmd = [sys.executable, "-m", "rag.cli", *e.command[1:], "--out", str(out)]
        proc = subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                start_new_session=True)
        try:
            _, err = proc.communicate(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.communicate()
            raise MeasurementError(f"ran past max_minutes ({timeout_s / 60:g} min); stopped") from None
        if proc.returncode != 0 or not out.is_file():
            tail = " | ".join(err.strip().splitlines()[-3:])
            raise MeasurementError(f"exit {proc.returncode}: {tail}")
        return json.loads(out.read_text(encoding="utf-8"))


def check(expected: Sequence[Expectation], *, max_minutes: float | None = None, only: Sequence[str] = (),
          runner: Runner = subprocess_runner, known: Mapping[str, Measurement] | None = None,
          stream: TextIO | None = None) -> list[Verdict]:
    """Judge every entry (``only``: just these ids), printing each line as it is decided."""
    known = measurements() if known is None else known
    stream = sys.stdout if stream is None else stream
    wanted = [e for e in expected if not only or e.id in only]
    missing_ids = sorted(set(only) - {e.id for e in expected})
    if missing_ids:
        raise BenchOptionError(f"--only: no entry {missing_ids}; ids: {[e.id for e in expected]}")
    records: dict[tuple[str, ...], tuple[Mapping[str, Any] | None, str, float | None]] = {}
    verdicts: list[Verdict] = []
    for e in wanted:
        limit = max(x.max_minutes for x in wanted if x.command == e.command)
        ran = e.command in records
        if max_minutes is not None and limit > max_minutes:
            v = Verdict(e.id, "SKIP", f"max_minutes {limit:g} > --max-minutes {max_minutes:g}")
        else:
            v = _verdict(e, limit, records, runner, known)
        verdicts.append(v)
        print((v if not ran else dataclasses.replace(v, seconds=None)).line(), file=stream, flush=True)
    counts = {s: sum(v.status == s for v in verdicts) for s in ("OK", "FAIL", "SKIP")}
    print(f"{counts['OK']} OK, {counts['FAIL']} FAIL, {counts['SKIP']} SKIP of {len(verdicts)}", file=stream)
    return verdicts


def _verdict(e: Expectation, limit: float, records: dict, runner: Runner, known: Mapping[str, Measurement]) -> Verdict:
    if e.command not in records:
        m = get(e.measurement, known)
        options, _ = parse_options(m, e.argv)
        missing = missing_inputs(m, options)
        if missing:
            records[e.command] = (None, "SKIP " + "; ".join(missing), None)
        else:
            t0 = time.perf_counter()
            try:
                records[e.command] = (runner(e, limit * 60), "", round(time.perf_counter() - t0, 1))
            except BenchError as exc:
                records[e.command] = (None, f"FAIL {exc}", round(time.perf_counter() - t0, 1))
    record, why, seconds = records[e.command]
    if record is None:
        status, _, reason = why.partition(" ")
        return Verdict(e.id, status, reason, seconds=seconds)  # type: ignore[arg-type]
    try:
        observed = metric_value(record, e.metric)
    except KeyError as exc:
        return Verdict(e.id, "FAIL", f"metric not in the result: {exc.args[0]}", seconds=seconds)
    status, detail = judge(e, observed)
    return Verdict(e.id, status, detail, observed, seconds)


__all__ = ["EXPECTED", "Expectation", "Runner", "Tolerance", "Verdict", "check", "judge", "load_expected",
           "metric_value", "subprocess_runner"]
