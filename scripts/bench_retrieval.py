"""Retrieval benchmark: index build time, query latency p50/p95 and peak memory.

Synthetic Zipf-distributed text (one chunk per document) and random unit vectors stand
in for real data, so the numbers measure the index code, not a model. Query embedding
is excluded (queries get random vectors). Each size runs in its own subprocess so peak
RSS is per size. Prints a table and writes JSON.

    python scripts/bench_retrieval.py [--sizes 10000 100000] [--queries 200] [--out results/bench_retrieval.json]
"""
from __future__ import annotations

import argparse
import json
import platform
import resource
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]


class RandomEmbedder:
    """Seeded random unit vectors: stands in for a model so only index code is timed."""

    model_id = "bench:random-unit"

    def __init__(self, dim: int = 384, seed: int = 0) -> None:
        self.dim = dim
        self.rng = np.random.default_rng(seed)

    def _vecs(self, n: int) -> np.ndarray:
        v = self.rng.standard_normal((n, self.dim)).astype(np.float32)
        return v / np.linalg.norm(v, axis=1, keepdims=True)

    def embed_passages(self, texts):
        return self._vecs(len(texts))

    def embed_queries(self, texts):
        return self._vecs(len(texts))


def synthetic_docs(n: int, seed: int = 0):
    from rag.types import Document

    rng = np.random.default_rng(seed)
    vocab = np.array([f"w{i:05d}" for i in range(50_000)])
    ranks = np.arange(1, len(vocab) + 1)
    p = 1.0 / ranks**1.07
    p /= p.sum()
    lengths = rng.integers(40, 90, size=n)
    words = rng.choice(len(vocab), size=int(lengths.sum()), p=p)
    docs, pos = [], 0
    for i, ln in enumerate(lengths):
        docs.append(Document(f"doc{i:07d}", " ".join(vocab[words[pos:pos + ln]]), "1", "", ""))
        pos += ln
    queries = []
    for _ in range(1000):
        d = docs[int(rng.integers(n))].text.split()
        k = int(rng.integers(3, 7))
        queries.append(" ".join(rng.choice(d, size=k, replace=False)))
    return docs, queries


def run_one(n: int, n_queries: int, rank_bm25_queries: int) -> dict:
    from rag.text import make_analyzer
    from rag.index import Chunker
    from rag.config import BM25Config, ChunkingConfig, FusionConfig, RagConfig, RetrievalConfig
    from rag.index import HybridIndex
    from rag.retrieval import HybridRetriever
    from rag.text import TiktokenCounter

    docs, queries = synthetic_docs(n)
    analyzer = make_analyzer("english", stem=False, stopwords=False)
    chunker = Chunker(ChunkingConfig(max_tokens=512, overlap_tokens=0), TiktokenCounter())  # one chunk per document
    emb = RandomEmbedder()
    out: dict = {"chunks": n}

    t0 = time.perf_counter()
    bench = RagConfig(name="bench")
    idx = HybridIndex(bench, chunker, analyzer, emb)
    idx.add(docs)
    out["build_s_total"] = time.perf_counter() - t0
    assert len(idx) == n, (len(idx), n)
    terms = idx.bm25.doc_ids
    t0 = time.perf_counter()
    idx.bm25.set_documents(terms)
    out["build_s_bm25s_fit"] = time.perf_counter() - t0

    # The shipped fusion (weighted z-score), not the cheaper RRF.
    cfg = RetrievalConfig(bm25_top_k=100, dense_top_k=100, candidates=30,
                          fusion=FusionConfig(method="weighted", bm25_weight=0.4, dense_weight=0.6))
    retr = HybridRetriever(idx, emb, cfg)
    qv = emb.embed_queries(queries)
    def timed(dense_name: str) -> dict[str, list[float]]:
        out_lat: dict[str, list[float]] = {"bm25 (bm25s)": [], f"dense ({dense_name})": [],
                                           f"hybrid (bm25s+{dense_name}+fusion)": []}
        for i, q in enumerate(queries[:n_queries]):
            t = time.perf_counter(); bm = idx.search_bm25(q, 100); t1 = time.perf_counter()
            dn = idx.search_dense(qv[i], 100); t2 = time.perf_counter()
            retr.fuse(q, bm, dn); t3 = time.perf_counter()
            for name, v in zip(out_lat, ((t1 - t), (t2 - t1), (t3 - t))):
                out_lat[name].append(v * 1e3)
        return out_lat

    lat = timed("flat")

    # Incremental updates on the full index (flat): one new document, then its deletion.
    from rag.types import Document

    extra = Document("zz-new-doc", docs[0].text + " fresh words", "1")
    t0 = time.perf_counter()
    idx.add([extra])
    out["update_s_add_one_doc"] = time.perf_counter() - t0
    t0 = time.perf_counter()
    idx.delete("zz-new-doc")
    out["update_s_delete_one_doc"] = time.perf_counter() - t0

    # Exhaustive fp16 scan, then HNSW, on the same vectors
    idx.config = bench.with_overrides({"dense.index": "flat_fp16"})
    idx._build_faiss()
    fp16 = timed("flat_fp16")
    lat["bm25 (bm25s, fp16 pass)"] = fp16.pop("bm25 (bm25s)")
    lat.update(fp16)
    idx.config = bench.with_overrides({"dense.index": "hnsw"})
    t0 = time.perf_counter()
    idx._build_faiss()
    out["build_s_hnsw"] = time.perf_counter() - t0
    hnsw = timed("hnsw")
    lat["bm25 (bm25s, second pass)"] = hnsw.pop("bm25 (bm25s)")
    lat.update(hnsw)

    # The reference backend, same data, same run (fewer queries: it is slow).
    from rag.index.bm25 import BM25Index

    ref = BM25Index(BM25Config(backend="rank_bm25", k1=idx.bm25.k1, b=idx.bm25.b))
    ref.vocab = idx.bm25.vocab
    t0 = time.perf_counter()
    ref.set_documents(terms)
    out["build_s_rank_bm25_fit"] = time.perf_counter() - t0
    lat["bm25 (rank-bm25)"] = []
    agree = True
    for q in queries[:rank_bm25_queries]:
        t = time.perf_counter(); r = ref.top_k(analyzer(q), 100); t1 = time.perf_counter()
        lat["bm25 (rank-bm25)"].append((t1 - t) * 1e3)
        s = idx.bm25.top_k(analyzer(q), 100)
        agree &= bool(np.allclose(r[1], s[1], rtol=1e-4))
    out["rank_bm25_matches_bm25s_top100"] = agree
    from rag.batch import percentiles

    out["latency_ms"] = {k: dict(zip(("p50", "p95"), percentiles(v, (50, 95))), n=len(v)) for k, v in lat.items()}
    out["peak_rss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000])
    ap.add_argument("--queries", type=int, default=200)
    ap.add_argument("--rank-bm25-queries", type=int, default=20)
    ap.add_argument("--out", default=str(ROOT / "results" / "bench_retrieval.json"))
    ap.add_argument("--child", type=int, default=None, help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.child:
        print(json.dumps(run_one(a.child, a.queries, a.rank_bm25_queries)))
        return
    rows = []
    for n in a.sizes:
        print(f"running {n} chunks ...", file=sys.stderr, flush=True)
        res = subprocess.run([sys.executable, __file__, "--child", str(n), "--queries", str(a.queries),
                              "--rank-bm25-queries", str(a.rank_bm25_queries)], capture_output=True, text=True)
        if res.returncode != 0:
            sys.exit(f"benchmark for {n} chunks failed:\n{res.stderr[-3000:]}")
        rows.append(json.loads(res.stdout.strip().splitlines()[-1]))
    machine = {"platform": platform.platform(), "python": platform.python_version(), "cpus": __import__("os").cpu_count()}
    print(f"\nmachine: {machine['platform']}, {machine['cpus']} CPUs, Python {machine['python']}")
    print(f"{'chunks':>8} {'method':<26} {'p50 ms':>9} {'p95 ms':>9}")
    for r in rows:
        for k, v in r["latency_ms"].items():
            print(f"{r['chunks']:>8} {k:<26} {v['p50']:>9.2f} {v['p95']:>9.2f}")
    print(f"\n{'chunks':>8} {'build total s':>14} {'bm25s fit s':>12} {'rank-bm25 fit s':>16} {'hnsw s':>8} "
          f"{'add 1 doc s':>12} {'delete 1 s':>11} {'peak RSS MB':>12}")
    for r in rows:
        print(f"{r['chunks']:>8} {r['build_s_total']:>14.1f} {r['build_s_bm25s_fit']:>12.2f} "
              f"{r['build_s_rank_bm25_fit']:>16.2f} {r['build_s_hnsw']:>8.1f} {r['update_s_add_one_doc']:>12.2f} "
              f"{r['update_s_delete_one_doc']:>11.2f} {r['peak_rss_mb']:>12.0f}")
    Path(a.out).parent.mkdir(parents=True, exist_ok=True)
    Path(a.out).write_text(json.dumps({"machine": machine, "runs": rows}, indent=2) + "\n")
    print(f"\nwrote {a.out}")


if __name__ == "__main__":
    main()
