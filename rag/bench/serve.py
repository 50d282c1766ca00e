"""Bounded load test of ``rag serve`` on loopback: throughput, latency percentiles, errors, memory.

Starts ``rag serve`` (one worker) on 127.0.0.1 at a free port over a private copy of the index (built
at start-up), runs ``--clients`` threads asking the demo questions through ``POST /v1/answer`` for
``--duration`` seconds after ``--warmup`` seconds, samples the server's resident memory every second,
and stops the server (SIGTERM, then SIGKILL). ``--writes`` also adds and deletes a document every
``--write-every`` seconds through the documents API while the clients run. Bounded: at most 900 s
and 64 clients; the server must be ready within ``--ready-timeout`` seconds.
"""
from __future__ import annotations

import json
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

from rag.bench.errors import BenchOptionError, MeasurementError
from rag.bench.harness import ROOT, free_port, percentiles, repo_path, rss_mb
from rag.bench.measurement import Measurement, Outcome
from rag.lang.ko import samples as ko_samples

MAX_DURATION_S = 900
MAX_CLIENTS = 64


@dataclass(frozen=True)
class Options:
    config: str = "configs/default.yaml"
    clients: int = 8
    duration: float = field(default=120.0, metadata={"help": "seconds of measured load"})
    warmup: float = field(default=10.0, metadata={"help": "seconds of load before measuring"})
    writes: bool = field(default=False, metadata={"help": "add and delete documents while the clients run"})
    write_every: float = 3.0
    questions: str = "data/demo/questions.jsonl"
    ready_timeout: float = 600.0


def _q(xs: list[float], q: float) -> float | None:
    return round(percentiles(xs, (q,))[0], 3) if xs else None


class _Load:
    """The client and writer threads and what they saw."""

    def __init__(self, url: str, questions: list[str], o: Options) -> None:
        self.url, self.questions, self.o = url, questions, o
        self.lat: list[float] = []
        self.codes: dict[str, int] = {}
        self.statuses: dict[str, int] = {}
        self.writes: list[tuple[str, int, float]] = []
        self.lock = threading.Lock()
        self.measuring = threading.Event()
        self.stop = threading.Event()

    def client(self, k: int) -> None:
        import httpx

        with httpx.Client(base_url=self.url, timeout=180) as c:
            i = k
            while not self.stop.is_set():
                q = self.questions[i % len(self.questions)]
                i += self.o.clients
                t0 = time.perf_counter()
                try:
                    r = c.post("/v1/answer", json={"question": q, "trace": False})
                    code = str(r.status_code)
                    body = r.json() if r.content else {}
                    status = body.get("status", body.get("error", {}).get("code", ""))
                except (httpx.HTTPError, ValueError) as exc:
                    code, status = type(exc).__name__, ""
                dt = time.perf_counter() - t0
                if self.measuring.is_set() and not self.stop.is_set():
                    with self.lock:
                        self.lat.append(dt)
                        self.codes[code] = self.codes.get(code, 0) + 1
                        self.statuses[status] = self.statuses.get(status, 0) + 1

    def writer(self) -> None:
        import httpx

        with httpx.Client(base_url=self.url, timeout=180) as c:
            n = 0
            while not self.stop.is_set():
                doc = {"id": f"load-{n}", "title": ko_samples.LOAD_DOCUMENT_TITLE,
                       "text": ko_samples.LOAD_DOCUMENT_TEXT.format(n=n, room=n % 7 + 1, hour=n % 5 + 8)}
                t0 = time.perf_counter()
                r = c.post("/v1/documents", json={"documents": [doc]})
                self.writes.append(("add", r.status_code, time.perf_counter() - t0))
                if n:
                    t0 = time.perf_counter()
                    r = c.delete(f"/v1/documents/load-{n - 1}")
                    self.writes.append(("delete", r.status_code, time.perf_counter() - t0))
                n += 1
                self.stop.wait(self.o.write_every)


def _wait_ready(proc: subprocess.Popen, url: str, timeout: float, log: Path) -> float:
    import httpx

    t0 = time.monotonic()
    while True:
        if proc.poll() is not None:
            raise MeasurementError(f"rag serve exited with {proc.returncode}: {log.read_text()[-1500:]}")
        try:
            if httpx.get(url + "/readyz", timeout=2).status_code == 200:
                return time.monotonic() - t0
        except httpx.TransportError:
            pass
        if time.monotonic() - t0 > timeout:
            raise MeasurementError(f"rag serve was not ready within {timeout:.0f} s: {log.read_text()[-1500:]}")
        time.sleep(0.5)


def _stop(proc: subprocess.Popen) -> None:
    if proc.poll() is None:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=30)


def run(o: Options) -> Outcome:
    import httpx

    if not 0 < o.duration <= MAX_DURATION_S or not 0 < o.clients <= MAX_CLIENTS or o.warmup < 0:
        raise BenchOptionError(f"bounded load only: 0 < --duration <= {MAX_DURATION_S} s, 0 < --clients <= "
                               f"{MAX_CLIENTS}, --warmup >= 0 (got {o.duration}, {o.clients}, {o.warmup})")
    questions = [json.loads(x)["question"] for x in repo_path(o.questions).read_text(encoding="utf-8").splitlines()
                 if x.strip()]
    with tempfile.TemporaryDirectory(prefix="rag-load-") as tmp:
        work = Path(tmp)
        port = free_port()
        url = f"http://127.0.0.1:{port}"
        env = {**os.environ, "RAG_API_KEYS": "", "RAG_ADMIN_KEYS": ""}
        cmd = [sys.executable, "-m", "rag.cli", "serve", "--config", str(repo_path(o.config)), "--host", "127.0.0.1",
               "--port", str(port), "--build-index", "--set", f"index.path={work / 'index'}",
               "--set", "serve.max_queue=64", "--set", "serve.request_timeout_s=120"]
        log = work / "server.log"
        with open(log, "w") as fh:
            proc = subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=fh, stderr=subprocess.STDOUT)
            try:
                startup_s = _wait_ready(proc, url, o.ready_timeout, log)
                load = _Load(url, questions, o)
                threads = [threading.Thread(target=load.client, args=(k,), daemon=True) for k in range(o.clients)]
                if o.writes:
                    threads.append(threading.Thread(target=load.writer, daemon=True))
                for t in threads:
                    t.start()
                time.sleep(o.warmup)
                load.measuring.set()
                rss: list[float] = []
                t0 = time.monotonic()
                while time.monotonic() - t0 < o.duration:
                    rss.append(rss_mb(proc.pid))
                    time.sleep(1.0)
                elapsed = time.monotonic() - t0
                load.stop.set()
                for t in threads:
                    t.join(timeout=200)
                metrics = httpx.get(url + "/metrics", timeout=10).text
            finally:
                _stop(proc)
    return _outcome(o, load, rss, elapsed, startup_s, metrics)


def _outcome(o: Options, load: _Load, rss: list[float], elapsed: float, startup_s: float, metrics: str) -> Outcome:
    third = max(1, len(rss) // 3)
    first, last = statistics.median(rss[:third]), statistics.median(rss[-third:])
    errors = sum(v for k, v in load.codes.items() if k not in ("200", "429"))
    writes = None
    if o.writes:
        writes = {op: {"n": sum(1 for w, _, _ in load.writes if w == op),
                       "non_200": sum(1 for w, c, _ in load.writes if w == op and c != 200),
                       "p50_s": _q([d for w, _, d in load.writes if w == op], 50)} for op in ("add", "delete")}
    out = {"config": o.config, "clients": o.clients, "duration_s": round(elapsed, 1), "writes": o.writes,
           "startup_s": round(startup_s, 1), "requests": len(load.lat),
           "throughput_rps": round(len(load.lat) / elapsed, 3),
           "latency_s": {"p50": _q(load.lat, 50), "p95": _q(load.lat, 95), "p99": _q(load.lat, 99),
                         "max": round(max(load.lat), 3) if load.lat else None},
           "http_codes": load.codes, "answer_status": load.statuses, "errors": errors,
           "rejected_429": load.codes.get("429", 0),
           "rss_mb": {"first_third_median": round(first, 1), "last_third_median": round(last, 1),
                      "max": round(max(rss), 1), "growth": round(last - first, 1)},
           "document_writes": writes,
           "server_metrics_rejected": [x for x in metrics.splitlines() if x.startswith("rag_rejected_total")]}
    lat = out["latency_s"]
    table = "\n".join([
        "| clients | writes | requests | req/s | p50 s | p95 s | p99 s | errors | 429 | RSS first→last MB |",
        "|---|---|---|---|---|---|---|---|---|---|",
        f"| {o.clients} | {'yes' if o.writes else 'no'} | {out['requests']} | {out['throughput_rps']} | {lat['p50']} | "
        f"{lat['p95']} | {lat['p99']} | {errors} | {out['rejected_429']} | {first:.0f} → {last:.0f} |"]
        + ([f"document writes: {json.dumps(writes)}"] if writes else []))
    return Outcome(out, table)


MEASUREMENT = Measurement("serve", "bounded load test of rag serve on 127.0.0.1 (throughput, latency, errors, RSS)",
                          Options, run)
