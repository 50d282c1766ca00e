"""Bounded load test of ``rag serve`` on loopback: throughput, latency percentiles, errors, memory.

Starts ``rag serve`` (one worker) on 127.0.0.1 over a private copy of the index, runs ``--clients``
threads that ask the demo questions through ``POST /v1/answer`` for ``--duration`` seconds, and
samples the server's resident memory every second. ``--writes`` also adds and deletes a document
every ``--write-every`` seconds through the documents API while the clients run. Prints a table and
writes the JSON to ``--out``.

    python scripts/load_serve.py --config configs/default.yaml --clients 8 --duration 120
    python scripts/load_serve.py --config configs/default.yaml --clients 8 --duration 120 --writes
"""
from __future__ import annotations

import argparse
import datetime
import json
import os
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parents[1]


def percentile(xs: list[float], q: float) -> float:
    if not xs:
        return float("nan")
    xs = sorted(xs)
    i = min(len(xs) - 1, max(0, int(round(q / 100 * (len(xs) - 1)))))
    return xs[i]


def rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--config", default="configs/default.yaml")
    ap.add_argument("--clients", type=int, default=8)
    ap.add_argument("--duration", type=float, default=120.0, help="seconds of load (bounded)")
    ap.add_argument("--warmup", type=float, default=10.0, help="seconds of load before measuring")
    ap.add_argument("--writes", action="store_true", help="add and delete documents while the clients run")
    ap.add_argument("--write-every", type=float, default=3.0)
    ap.add_argument("--questions", default=str(ROOT / "data/demo/questions.jsonl"))
    ap.add_argument("--out", default="results/load_serve.json")
    args = ap.parse_args()
    if args.duration > 900 or args.clients > 64:
        ap.error("bounded load only: --duration <= 900 s and --clients <= 64")

    questions = [json.loads(x)["question"] for x in Path(args.questions).read_text(encoding="utf-8").splitlines() if x.strip()]
    work = Path(tempfile.mkdtemp(prefix="rag-load-"))
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    env = {**os.environ, "RAG_API_KEYS": "", "RAG_ADMIN_KEYS": ""}
    cmd = [sys.executable, "-m", "rag.cli", "serve", "--config", args.config, "--port", str(port), "--build-index",
           "--set", f"index.path={work / 'index'}", "--set", "serve.max_queue=64", "--set", "serve.request_timeout_s=120"]
    log = open(work / "server.log", "w")
    proc = subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT)
    try:
        t_start = time.monotonic()
        while True:
            if proc.poll() is not None:
                print((work / "server.log").read_text()[-3000:], file=sys.stderr)
                return 1
            try:
                if httpx.get(url + "/readyz", timeout=2).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            if time.monotonic() - t_start > 600:
                raise SystemExit("the server did not become ready in 10 minutes")
            time.sleep(0.5)
        startup_s = time.monotonic() - t_start
        print(f"server ready in {startup_s:.1f} s at {url} (pid {proc.pid}); {args.clients} clients, "
              f"{args.warmup:.0f} s warm-up + {args.duration:.0f} s{' with document writes' if args.writes else ''}",
              file=sys.stderr)

        lat: list[float] = []
        codes: dict[str, int] = {}
        statuses: dict[str, int] = {}
        lock = threading.Lock()
        measuring = threading.Event()
        stop = threading.Event()

        def client(k: int) -> None:
            with httpx.Client(base_url=url, timeout=180) as c:
                i = k
                while not stop.is_set():
                    q = questions[i % len(questions)]
                    i += args.clients
                    t0 = time.perf_counter()
                    try:
                        r = c.post("/v1/answer", json={"question": q, "trace": False})
                        code = str(r.status_code)
                        status = r.json().get("status", r.json().get("error", {}).get("code")) if r.content else ""
                    except httpx.HTTPError as exc:
                        code, status = type(exc).__name__, ""
                    dt = time.perf_counter() - t0
                    if measuring.is_set() and not stop.is_set():
                        with lock:
                            lat.append(dt)
                            codes[code] = codes.get(code, 0) + 1
                            statuses[status] = statuses.get(status, 0) + 1

        writes: list[tuple[str, int, float]] = []

        def writer() -> None:
            with httpx.Client(base_url=url, timeout=180) as c:
                n = 0
                while not stop.is_set():
                    doc = {"id": f"load-{n}", "title": "부하 시험 문서",
                           "text": f"부하 시험 문서 {n}: 회의실 {n % 7 + 1}번은 오전 {n % 5 + 8}시에 엽니다."}
                    t0 = time.perf_counter()
                    r = c.post("/v1/documents", json={"documents": [doc]})
                    writes.append(("add", r.status_code, time.perf_counter() - t0))
                    if n:
                        t0 = time.perf_counter()
                        r = c.delete(f"/v1/documents/load-{n - 1}")
                        writes.append(("delete", r.status_code, time.perf_counter() - t0))
                    n += 1
                    stop.wait(args.write_every)

        rss: list[tuple[float, float]] = []
        threads = [threading.Thread(target=client, args=(k,), daemon=True) for k in range(args.clients)]
        if args.writes:
            threads.append(threading.Thread(target=writer, daemon=True))
        for t in threads:
            t.start()
        time.sleep(args.warmup)
        measuring.set()
        t0 = time.monotonic()
        while time.monotonic() - t0 < args.duration:
            rss.append((time.monotonic() - t0, rss_mb(proc.pid)))
            time.sleep(1.0)
        elapsed = time.monotonic() - t0
        stop.set()
        for t in threads:
            t.join(timeout=200)
        metrics = httpx.get(url + "/metrics", timeout=10).text
    finally:
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
            try:
                proc.wait(timeout=60)
            except subprocess.TimeoutExpired:
                proc.kill()
        log.close()

    third = max(1, len(rss) // 3)
    rss_first = statistics.median(x for _, x in rss[:third])
    rss_last = statistics.median(x for _, x in rss[-third:])
    errors = {k: v for k, v in codes.items() if k not in ("200", "429")}
    out = {
        "date": datetime.date.today().isoformat(), "config": args.config, "clients": args.clients,
        "duration_s": round(elapsed, 1), "writes": args.writes, "startup_s": round(startup_s, 1),
        "requests": len(lat), "throughput_rps": round(len(lat) / elapsed, 3),
        "latency_s": {"p50": round(percentile(lat, 50), 3), "p95": round(percentile(lat, 95), 3),
                      "p99": round(percentile(lat, 99), 3), "max": round(max(lat), 3) if lat else None},
        "http_codes": codes, "answer_status": statuses, "errors": sum(errors.values()),
        "rss_mb": {"first_third_median": round(rss_first, 1), "last_third_median": round(rss_last, 1),
                   "max": round(max(x for _, x in rss), 1), "growth": round(rss_last - rss_first, 1)},
        "document_writes": {op: {"n": sum(1 for o, _, _ in writes if o == op),
                                 "non_200": sum(1 for o, c, _ in writes if o == op and c != 200),
                                 "p50_s": round(percentile([d for o, _, d in writes if o == op], 50), 3)}
                            for op in ("add", "delete")} if args.writes else None,
        "server_metrics_rejected": [x for x in metrics.splitlines() if x.startswith("rag_rejected_total")],
    }
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(out, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    print("| clients | writes | requests | req/s | p50 s | p95 s | p99 s | errors | 429 | RSS first→last MB |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    print(f"| {args.clients} | {'yes' if args.writes else 'no'} | {out['requests']} | {out['throughput_rps']} | "
          f"{out['latency_s']['p50']} | {out['latency_s']['p95']} | {out['latency_s']['p99']} | {out['errors']} | "
          f"{codes.get('429', 0)} | {rss_first:.0f} → {rss_last:.0f} |")
    if args.writes:
        print(f"document writes: {json.dumps(out['document_writes'])}")
    print(f"written {args.out}")
    return 0 if out["errors"] == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
