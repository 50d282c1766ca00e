"""Retrieval evaluation on a BEIR-layout dataset: bm25, dense and hybrid side by side."""
from __future__ import annotations

import logging
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Mapping

from rag.index.loaders import load_beir
from rag.evaluation.metrics import dedupe_docs, mean_metrics
from rag.pipeline import Pipeline

logger = logging.getLogger(__name__)


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
    fusions: Mapping[str, object] | None = None,
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
    from rag.retrieval.hybrid import HybridRetriever

    cfg = pipeline.config.retrieval
    retr = HybridRetriever(index, pipeline.embedder, cfg)
    qids = sorted(q for q in ds.qrels if query_filter is None or query_filter(q))
    if max_queries:
        qids = qids[:max_queries]
    # Embed queries in one batch (much faster than one by one).
    qvecs = pipeline.embedder.embed_queries([ds.queries[q] for q in qids])
    depth = max(100, cfg.candidates)
    runs: dict[str, dict[str, list[str]]] = {"bm25": {}, "dense": {}, "hybrid": {}}
    extra = {name: HybridRetriever(index, pipeline.embedder, cfg.model_copy(update={"fusion": fcfg}))
             for name, fcfg in (fusions or {}).items()}
    for name in extra:
        runs[name] = {}
    reranker = pipeline.reranker if rerank else None
    if reranker is not None:
        runs["rerank"] = {}
    t1 = time.perf_counter()
    for i, q in enumerate(qids):
        text = ds.queries[q]
        bm = index.search_bm25(text, max(cfg.bm25_top_k, depth))
        dn = index.search_dense(qvecs[i], max(cfg.dense_top_k, depth))
        runs["bm25"][q] = dedupe_docs([h.chunk.document_id for h in bm])
        runs["dense"][q] = dedupe_docs([h.chunk.document_id for h in dn])
        fused = retr.fuse(text, bm, dn, candidates=depth * 4)
        runs["hybrid"][q] = dedupe_docs([c.chunk.document_id for c in fused.candidates])
        if reranker is not None:
            rr = reranker.rerank(text, fused.candidates)
            runs["rerank"][q] = dedupe_docs([c.candidate.chunk.document_id for c in rr.candidates])
        for name, alt in extra.items():
            runs[name][q] = dedupe_docs([c.chunk.document_id for c in alt.fuse(text, bm, dn, candidates=depth * 4).candidates])
        if progress:
            progress("query", i + 1, len(qids))
    t_query = time.perf_counter() - t1
    qrels = {q: ds.qrels[q] for q in qids}
    metrics = {name: mean_metrics(run, qrels) for name, run in runs.items()}
    return RetrievalEval(
        dataset=ds.name,
        split=split,
        n_queries=len(qids),
        metrics=metrics,
        config_hash=pipeline.config.hash,
        embedding_model=pipeline.embedder.model_id,
        analyzer=index.analyzer.name,
        seconds={"index": round(t_index, 2), "queries": round(t_query, 2)},
    )
