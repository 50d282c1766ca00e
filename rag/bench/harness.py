"""What every measurement shares: timing with warm-ups and repeats, percentiles, memory, a free
loopback port, where the data lives, and the JSON result file stamped with date, machine, git
commit, config hash and command line.

Nothing here knows a measurement; :mod:`rag.bench.registry` runs them through these helpers.
"""
from __future__ import annotations

import datetime
import logging
import os
import platform
import resource
import socket
import statistics
import time
from pathlib import Path
from typing import Callable, Iterable, Iterator, Sequence, TypeVar

from rag import _io
from rag.batch import git_state, percentiles
from rag.config import digest

log = logging.getLogger(__name__)

T = TypeVar("T")

ROOT = Path(__file__).resolve().parents[2]
DATA_ENV = "RAG_DATA_DIR"

__all__ = ["ROOT", "DATA_ENV", "data_dir", "repo_path", "read_jsonl", "percentiles", "latency_summary",
           "time_calls", "peak_rss_mb", "rss_mb", "free_port", "machine", "stamp", "write_result"]


# --------------------------------------------------------------------------- places
def data_dir() -> Path:
    """``$RAG_DATA_DIR``, else ``../shared/data`` next to the checkout (the datasets are not in git)."""
    env = os.environ.get(DATA_ENV)
    return Path(env) if env else ROOT.parent / "shared" / "data"


def repo_path(rel: str | Path) -> Path:
    """A path of the checkout (``configs/default.yaml``, ``data/demo/...``); absolute paths pass through."""
    p = Path(rel)
    return p if p.is_absolute() else ROOT / p


def read_jsonl(path: str | Path) -> Iterator[dict]:
    """The objects of a JSON Lines file (:func:`rag._io.read_jsonl` without the line numbers)."""
    return (obj for _, obj in _io.read_jsonl(Path(path)))


# --------------------------------------------------------------------------- timing
def latency_summary(values_ms: Sequence[float], digits: int = 3) -> dict[str, float | int]:
    """``{"n", "p50", "p95", "mean", "max"}`` of latencies in milliseconds (NaN-free input)."""
    if not values_ms:
        return {"n": 0, "p50": float("nan"), "p95": float("nan"), "mean": float("nan"), "max": float("nan")}
    p50, p95 = percentiles(values_ms, (50, 95))
    return {"n": len(values_ms), "p50": round(p50, digits), "p95": round(p95, digits),
            "mean": round(statistics.fmean(values_ms), digits), "max": round(max(values_ms), digits)}


def time_calls(fn: Callable[[T], object], inputs: Iterable[T], warmups: Sequence[T] = ()) -> list[float]:
    """Milliseconds of ``fn(x)`` for each ``x`` of ``inputs``, after calling it untimed on each of
    ``warmups`` (model loads, first-call caches). Repeats are simply repeated inputs."""
    for x in warmups:
        fn(x)
    out = []
    for x in inputs:
        t0 = time.perf_counter()
        fn(x)
        out.append((time.perf_counter() - t0) * 1000)
    return out


# --------------------------------------------------------------------------- memory, ports
def peak_rss_mb() -> float:
    """Peak resident memory of this process so far, in MB."""
    return round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)


def rss_mb(pid: int) -> float:
    """Current resident memory of process ``pid`` in MB (Linux ``/proc``); NaN when unreadable."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return float("nan")


def free_port(host: str = "127.0.0.1") -> int:
    """A TCP port free on ``host`` right now (the OS picks it; loopback by default)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind((host, 0))
        return int(s.getsockname()[1])


# --------------------------------------------------------------------------- stamping
def _memory_gb() -> float | None:
    try:
        return round(os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30, 1)
    except (ValueError, OSError, AttributeError):
        return None


def machine() -> dict[str, object]:
    """Where a result was measured: platform, Python, CPU count, memory, processor, load average and
    the thread settings that change timings."""
    try:
        load = [round(x, 2) for x in os.getloadavg()]
    except OSError:
        load = None
    return {"platform": platform.platform(), "python": platform.python_version(), "cpus": os.cpu_count(),
            "memory_gb": _memory_gb(), "processor": platform.processor() or platform.machine(),
            "load_avg": load,
            "env": {k: os.environ[k] for k in ("OMP_NUM_THREADS", "OMP_WAIT_POLICY") if k in os.environ}}


def stamp(measurement: str, options: dict, argv: Sequence[str], config_hash: str | None) -> dict[str, object]:
    """The header of a result file. ``config_hash`` is the hash of the :class:`rag.config.RagConfig`
    the measurement ran with (None when it used none); ``options_hash`` identifies its options."""
    commit, dirty = git_state(ROOT)
    return {"measurement": measurement,
            "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
            "machine": machine(), "git_commit": commit, "git_dirty": dirty,
            "config_hash": config_hash, "options_hash": digest(options), "options": options,
            "command": list(argv)}


def write_result(path: str | Path, record: dict) -> Path:
    """Write a result record as indented UTF-8 JSON, atomically (parent folders created); returns the path."""
    p = Path(path)
    _io.write_json(p, record, default=str)
    log.info("wrote %s", p)
    return p
