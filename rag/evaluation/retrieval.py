"""Retrieval evaluation on a BEIR-layout dataset: bm25, dense, hybrid (and rerank) side by side.

:func:`run_queries` is the one per-query loop (bm25 → dense → fusion → rerank, each stage
timed); ``rag eval-retrieval`` (:func:`evaluate_retrieval`) and ``beir`` experiments
(:func:`evaluate_beir`) both score its lists.
"""
from __future__ import annotations

import logging
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Mapping, Sequence

from rag.batch.records import model_ids
from rag.config import FusionConfig, RagConfig, RetrievalConfig, digest
from rag.evaluation.metrics import METRICS, dedupe_docs, latency_metrics, mean_metrics
from rag.evaluation.runs import DatasetSpec, Progress, RunCache, RunResult
from rag.index.loaders import load_beir
from rag.pipeline import Pipeline
from rag.retrieval.hybrid import HybridRetriever

logger = logging.getLogger(__name__)

Qrels = Mapping[str, Mapping[str, int]]


# --------------------------------------------------------------------------- the per-query loop
@dataclass(frozen=True)
class QueryRun:
    """One query through the retrieval stages."""

    qid: str
    text: str
    ranked: Mapping[str, list[str]]  # run name -> document ids, best first (chunks deduplicated)
    timings_ms: Mapping[str, float]  # bm25, dense, fusion[, rerank], search (their sum)


@dataclass(frozen=True)
class RetrievalRuns:
    """Every query's ranked lists, by run: ``bm25``, ``dense``, ``hybrid``, each extra fusion, ``rerank``."""

    names: tuple[str, ...]
    queries: tuple[QueryRun, ...]

    @property
    def final(self) -> str:
        """The list a user would get: ``rerank`` when it ran, else ``hybrid``."""
        return "rerank" if "rerank" in self.names else "hybrid"

    def by_name(self) -> dict[str, dict[str, list[str]]]:
        return {n: {r.qid: r.ranked[n] for r in self.queries} for n in self.names}

    def mean_metrics(self, qrels: Qrels) -> dict[str, dict[str, float]]:
        """Each run's mean metrics over the queries in ``qrels``."""
        return {n: mean_metrics(run, qrels) for n, run in self.by_name().items()}

    def stage_timings(self) -> dict[str, list[float]]:
        """Per-query milliseconds of each stage, in stage order."""
        out: dict[str, list[float]] = {}
        for r in self.queries:
            for k, v in r.timings_ms.items():
                out.setdefault(k, []).append(v)
        return out

    def rows(self, qrels: Qrels) -> list[dict]:
        """One ``results.jsonl`` row per query: the final top 10, the relevant documents, every
        run's metrics and the stage timings."""
        return [{"id": r.qid, "query": r.text, "ranked": r.ranked[self.final][:10],
                 "relevant": sorted(d for d, rel in qrels[r.qid].items() if rel > 0),
                 "metrics": {f"{n}.{m}": round(fn(r.ranked[n], qrels[r.qid]), 6) for n in self.names
                             for m, fn in METRICS.items()},
                 "timings_ms": {k: round(v, 3) for k, v in r.timings_ms.items()}}
                for r in self.queries]


def run_queries(index, embedder, config: RetrievalConfig, queries: Sequence[tuple[str, str]], qvecs: Sequence[Any], *,
                reranker=None, fusions: Mapping[str, FusionConfig] | None = None,
                progress: Progress | None = None, stage: str = "query") -> RetrievalRuns:
    """bm25, dense and fused lists (``max(100, candidates)`` deep) for each ``(qid, text)``, with
    ``qvecs`` its query vector; also each extra fusion of ``fusions`` over the same bm25/dense
    lists, and ``rerank`` (the reranker over the fused candidates) when a reranker is given.
    ``progress(stage, done, total)`` after each query."""
    depth = max(100, config.candidates)
    retr = HybridRetriever(index, embedder, config)
    extra = {name: HybridRetriever(index, embedder, config.model_copy(update={"fusion": fcfg}))
             for name, fcfg in (fusions or {}).items()}
    names = ("bm25", "dense", "hybrid", *extra) + (("rerank",) if reranker is not None else ())
    out = []
    for i, (q, text) in enumerate(queries):
        vec = qvecs[i]
        t0 = time.perf_counter()
        bm = index.search_bm25(text, max(config.bm25_top_k, depth))
        t1 = time.perf_counter()
        dn = index.search_dense(vec, max(config.dense_top_k, depth))
        t2 = time.perf_counter()
        fused = retr.fuse(text, bm, dn, candidates=depth * 4)
        t3 = time.perf_counter()
        timing = {"bm25": (t1 - t0) * 1e3, "dense": (t2 - t1) * 1e3, "fusion": (t3 - t2) * 1e3}
        ranked = {"bm25": dedupe_docs([h.chunk.document_id for h in bm]),
                  "dense": dedupe_docs([h.chunk.document_id for h in dn]),
                  "hybrid": dedupe_docs([c.chunk.document_id for c in fused.candidates])}
        for name, alt in extra.items():
            ranked[name] = dedupe_docs([c.chunk.document_id for c in alt.fuse(text, bm, dn, candidates=depth * 4).candidates])
        if reranker is not None:
            t4 = time.perf_counter()
            rr = reranker.rerank(text, fused.candidates)
            timing["rerank"] = (time.perf_counter() - t4) * 1e3
            ranked["rerank"] = dedupe_docs([c.candidate.chunk.document_id for c in rr.candidates])
        timing["search"] = sum(timing.values())
        out.append(QueryRun(q, text, ranked, timing))
        if progress:
            progress(stage, i + 1, len(queries))
    return RetrievalRuns(names, tuple(out))


# --------------------------------------------------------------------------- rag eval-retrieval
@dataclass(frozen=True)
class RetrievalEval:
    dataset: str
    split: str
    n_queries: int
    metrics: Mapping[str, Mapping[str, float]]
    config_hash: str
    embedding_model: str
    analyzer: str
    seconds: Mapping[str, float] = field(default_factory=dict)

    def to_json(self) -> dict:
        return {
            "dataset": self.dataset,
            "split": self.split,
            "n_queries": self.n_queries,
            "metrics": {k: dict(v) for k, v in self.metrics.items()},
            "config_hash": self.config_hash,
            "embedding_model": self.embedding_model,
            "analyzer": self.analyzer,
            "seconds": dict(self.seconds),
        }


def evaluate_retrieval(
    pipeline: Pipeline,
    dataset_dir: str | Path,
    split: str,
    *,
    max_queries: int | None = None,
    progress: Callable[[str, int, int], None] | None = None,
    fusions: Mapping[str, FusionConfig] | None = None,
    rerank: bool = True,
    query_filter: Callable[[str], bool] | None = None,
) -> RetrievalEval:
    """Index the dataset's corpus in memory and score bm25, dense and hybrid.

    ``fusions`` optionally maps extra names to :class:`FusionConfig` objects that are
    evaluated over the same bm25/dense lists (used to tune fusion without recomputing).
    With ``rerank`` and ``rerank.enabled`` in the config, a ``rerank`` entry reorders the
    hybrid candidates with the reranker. ``query_filter`` keeps only the query ids it accepts.
    """
    ds = load_beir(dataset_dir, split)
    t0 = time.perf_counter()
    embed_prog = (lambda n: progress("embed", n, 0)) if progress else None
    index = pipeline.new_index(ds.corpus, embed_prog)
    t_index = time.perf_counter() - t0
    qids = sorted(q for q in ds.qrels if query_filter is None or query_filter(q))
    if max_queries:
        qids = qids[:max_queries]
    # Embed queries in one batch (much faster than one by one).
    qvecs = pipeline.components.embedder.embed_queries([ds.queries[q] for q in qids])
    reranker = pipeline.components.reranker if rerank else None  # loads the model (not timed as querying)
    t1 = time.perf_counter()
    runs = run_queries(index, pipeline.components.embedder, pipeline.config.retrieval,
                       [(q, ds.queries[q]) for q in qids], qvecs, reranker=reranker, fusions=fusions, progress=progress)
    t_query = time.perf_counter() - t1
    return RetrievalEval(
        dataset=ds.name,
        split=split,
        n_queries=len(qids),
        metrics=runs.mean_metrics({q: ds.qrels[q] for q in qids}),
        config_hash=pipeline.config.hash,
        embedding_model=pipeline.components.embedder.model_id,
        analyzer=index.analyzer.name,
        seconds={"index": round(t_index, 2), "queries": round(t_query, 2)},
    )


# --------------------------------------------------------------------------- beir experiments
EMBED_SAMPLE = 50  # queries embedded one at a time to measure the embed_query stage


def evaluate_beir(dataset: DatasetSpec, path: Path, cfg: RagConfig, cache: RunCache,
                  progress: Progress | None = None) -> RunResult:
    """Retrieval metrics and per-stage latency per query; the same lists as :func:`evaluate_retrieval`."""
    ds = cache.data.get("beir")
    if ds is None:
        ds = cache.data["beir"] = load_beir(path, dataset.split or "test")
    p = cache.pipeline(cfg)
    index = cache.indexes.get(cfg.index_hash, lambda: p.new_index(ds.corpus))
    qids = sorted(ds.qrels)
    if dataset.max_queries:
        qids = qids[:dataset.max_queries]
    qvecs, embed_sample_ms, embed_batched_ms = _query_vectors(p, cfg, [ds.queries[q] for q in qids], cache)
    runs = run_queries(index, p.components.embedder, cfg.retrieval, [(q, ds.queries[q]) for q in qids], qvecs,
                       reranker=p.components.reranker if dataset.rerank else None, progress=progress, stage="queries")
    qrels = {q: ds.qrels[q] for q in qids}
    metrics: dict[str, float | None] = {"n_queries": float(len(qids))}
    for n, means in runs.mean_metrics(qrels).items():
        for m, v in means.items():
            metrics[f"retrieval.{n}.{m}"] = v
    for m in METRICS:
        metrics[f"retrieval.final.{m}"] = metrics[f"retrieval.{runs.final}.{m}"]
    for k, v in runs.stage_timings().items():
        metrics.update(latency_metrics(v, f"latency.{k}"))
    metrics.update(latency_metrics(embed_sample_ms, "latency.embed_query"))
    metrics["latency.embed_query_batched.mean_ms"] = round(embed_batched_ms, 4)
    return RunResult(metrics, tuple(runs.rows(qrels)), None, model_ids(p))


def _query_vectors(p, cfg: RagConfig, texts: list[str], cache: RunCache):
    """Query vectors embedded in one batch (as :func:`evaluate_retrieval` does), shared by every run
    with the same embedding settings, plus the one-at-a-time latency of the first EMBED_SAMPLE queries."""
    e = cfg.model_dump(mode="json")["embedding"]
    key = "qvec:" + digest({"embedding": {k: v for k, v in e.items() if k not in ("batch_size", "threads", "cache_dir")},
                            "texts": texts})
    if key not in cache.data:
        t = time.perf_counter()
        vecs = p.components.embedder.embed_queries(texts)
        batched = (time.perf_counter() - t) * 1e3 / max(1, len(texts))
        sample = []
        for text in texts[:EMBED_SAMPLE]:
            t = time.perf_counter()
            p.components.embedder.embed_queries([text])
            sample.append((time.perf_counter() - t) * 1e3)
        cache.data[key] = (vecs, sample, batched)
    return cache.data[key]
