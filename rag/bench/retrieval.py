"""Retrieval index latency: build time, BM25 / dense / hybrid query latency, one-document updates.

Synthetic Zipf-distributed text (one chunk per document) and seeded random unit vectors stand in for
real data, so the numbers measure the index code, not a model (query embedding is excluded). The
index is built once per dense index kind (``flat``, ``flat_fp16``, ``hnsw``) from the same documents
and vectors; hybrid is BM25 top-100 + dense top-100 + the shipped weighted z-score fusion. Adding
and deleting one document is timed on the flat index. Peak RSS is the run's (``peak_rss_mb``).
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field

import numpy as np

from rag.bench.harness import latency_summary
from rag.bench.measurement import Measurement, Outcome

DENSE_KINDS = ("flat", "flat_fp16", "hnsw")


@dataclass(frozen=True)
class Options:
    chunks: int = field(default=10_000, metadata={"help": "documents (one chunk each)"})
    queries: int = 200
    dense: tuple[str, ...] = field(default=DENSE_KINDS, metadata={"help": "dense index kinds to time"})
    seed: int = 0


class RandomEmbedder:
    """Seeded random unit vectors: stands in for a model so only index code is timed."""

    model_id = "bench:random-unit"

    def __init__(self, dim: int = 384, seed: int = 0) -> None:
        self.dim = dim
        self.rng = np.random.default_rng(seed)

    def vectors(self, n: int) -> np.ndarray:
        v = self.rng.standard_normal((n, self.dim)).astype(np.float32)
        return v / np.linalg.norm(v, axis=1, keepdims=True)

    def embed_passages(self, texts, progress=None) -> np.ndarray:
        return self.vectors(len(texts))

    def embed_queries(self, texts) -> np.ndarray:
        return self.vectors(len(texts))


def synthetic_docs(n: int, seed: int = 0, n_queries: int = 1000):
    """``n`` documents of 40-90 Zipf-distributed words and ``n_queries`` queries of 3-6 words each
    drawn from one document."""
    from rag.types import Document

    rng = np.random.default_rng(seed)
    vocab = np.array([f"w{i:05d}" for i in range(50_000)])
    p = 1.0 / np.arange(1, len(vocab) + 1) ** 1.07
    p /= p.sum()
    lengths = rng.integers(40, 90, size=n)
    words = rng.choice(len(vocab), size=int(lengths.sum()), p=p)
    docs, pos = [], 0
    for i, ln in enumerate(lengths):
        docs.append(Document(f"doc{i:07d}", " ".join(vocab[words[pos:pos + ln]]), "1", "", ""))
        pos += ln
    queries = []
    for _ in range(n_queries):
        d = docs[int(rng.integers(n))].text.split()
        queries.append(" ".join(rng.choice(d, size=int(rng.integers(3, 7)), replace=False)))
    return docs, queries


def synthetic_config(**overrides):
    """The bench config: english analyzer without stemming or stopwords (synthetic words), one chunk
    per document, the shipped weighted fusion, no embedding cache."""
    from rag.config import RagConfig

    return RagConfig(name="bench").with_overrides({
        "bm25.analyzer": "english", "bm25.stem": False, "bm25.stopwords": False, "embedding.cache_dir": None,
        "chunking.max_tokens": 512, "chunking.overlap_tokens": 0, "retrieval.bm25_top_k": 100,
        "retrieval.dense_top_k": 100, "retrieval.candidates": 30, "retrieval.fusion.method": "weighted",
        "retrieval.fusion.bm25_weight": 0.4, "retrieval.fusion.dense_weight": 0.6, **overrides})


def _build(cfg, docs, seed: int):
    from rag.index import Chunker, build_index
    from rag.text import make_analyzer

    b = cfg.bm25
    t0 = time.perf_counter()
    idx = build_index(docs, cfg, Chunker(cfg.chunking), make_analyzer(b.analyzer, stem=b.stem, stopwords=b.stopwords),
                      RandomEmbedder(seed=seed))
    return idx, time.perf_counter() - t0


def _latency(idx, cfg, queries: list[str], qv: np.ndarray) -> dict:
    from rag.retrieval import HybridRetriever

    retr = HybridRetriever(idx, idx.embedder, cfg.retrieval)
    lat: dict[str, list[float]] = {"bm25": [], "dense": [], "hybrid": []}
    for i, q in enumerate(queries):
        t = time.perf_counter()
        bm = idx.search_bm25(q, 100)
        t1 = time.perf_counter()
        dn = idx.search_dense(qv[i], 100)
        t2 = time.perf_counter()
        retr.fuse(q, bm, dn)
        t3 = time.perf_counter()
        for name, v in zip(lat, (t1 - t, t2 - t1, t3 - t)):
            lat[name].append(v * 1e3)
    return {k: latency_summary(v) for k, v in lat.items()}


def run(o: Options) -> Outcome:
    from rag.types import Document

    bad = sorted(set(o.dense) - set(DENSE_KINDS))
    if bad:
        from rag.bench.errors import BenchOptionError

        raise BenchOptionError(f"--dense: unknown kind(s) {bad}; choose from {DENSE_KINDS}")
    docs, queries = synthetic_docs(o.chunks, o.seed)
    queries = queries[:o.queries]
    qv = RandomEmbedder(seed=o.seed + 1).vectors(len(queries))
    out: dict = {"chunks": o.chunks, "queries": len(queries), "dense": {}}
    for kind in o.dense:
        cfg = synthetic_config(**{"dense.index": kind})
        idx, build_s = _build(cfg, docs, o.seed)
        if len(idx) != o.chunks:
            from rag.bench.errors import MeasurementError

            raise MeasurementError(f"expected {o.chunks} chunks, the index has {len(idx)}")
        _latency(idx, cfg, queries[:5], qv[:5])  # warm-up: first FAISS call
        out["dense"][kind] = {"build_s": round(build_s, 3), "latency_ms": _latency(idx, cfg, queries, qv)}
        if kind == o.dense[0]:
            extra = Document("zz-new-doc", docs[0].text + " fresh words", "1")
            t0 = time.perf_counter()
            idx.add([extra])
            add_s = time.perf_counter() - t0
            t0 = time.perf_counter()
            idx.delete("zz-new-doc")
            out["update_s"] = {"index": kind, "add_one_doc": round(add_s, 3),
                               "delete_one_doc": round(time.perf_counter() - t0, 3)}
        del idx
    table = [f"{o.chunks} chunks, {len(queries)} queries (p50 / p95 ms)",
             f"{'dense index':<12}{'build s':>9}{'bm25':>16}{'dense':>16}{'hybrid':>16}"]
    for kind, r in out["dense"].items():
        lat = r["latency_ms"]
        table.append(f"{kind:<12}{r['build_s']:>9.2f}" + "".join(f"{lat[s]['p50']:>8.2f}/{lat[s]['p95']:<7.2f}"
                                                              for s in ("bm25", "dense", "hybrid")))
    if "update_s" in out:
        u = out["update_s"]
        table.append(f"add one document {u['add_one_doc']:.2f} s, delete one {u['delete_one_doc']:.2f} s ({u['index']})")
    return Outcome(out, "\n".join(table), synthetic_config().hash)


MEASUREMENT = Measurement("retrieval", "index build, BM25/dense/hybrid latency and updates on synthetic text",
                          Options, run)
