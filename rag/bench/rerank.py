"""Cross-encoder rerank latency on CPU: p50/p95 per query for 10/30/50 candidates, and pairs/s.

Each model (``--models``: ``default`` = the committed MiniLM checkpoint, or checkpoint folders) runs in
fp32 and as a dynamically int8-quantized copy (``rerank.quantize: true``), interleaved in one run so
machine noise hits all of them; no score cache, fresh candidates every query. Passages are SciFact
abstracts when ``<data>/scifact`` is there, else synthetic text. With ``--quality-queries N`` (> 0)
also nDCG@10 of hybrid, hybrid+fp32 and hybrid+int8 on the first N SciFact train queries held out of
reranker training (this indexes SciFact with ``configs/en.yaml``: slow without an embedding cache).
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from rag.bench.harness import data_dir, latency_summary, read_jsonl, repo_path
from rag.bench.measurement import Measurement, Outcome


@dataclass(frozen=True)
class Options:
    repeats: int = field(default=10, metadata={"help": "queries per size"})
    sizes: tuple[int, ...] = (10, 30, 50)
    threads: int = 2
    models: tuple[str, ...] = field(default=("default",), metadata={"help": "'default' or checkpoint folders"})
    max_length: int | None = field(default=None, metadata={"help": "pair length (default: the checkpoint's)"})
    quality_queries: int = 0


def _texts(seed: int) -> list[str]:
    corpus = data_dir() / "scifact" / "corpus.jsonl"
    if corpus.is_file():
        rows = []
        for r in read_jsonl(corpus):
            rows.append(f"{r['title']}\n\n{r['text']}")
            if len(rows) == 2000:
                break
        return rows
    rng = np.random.default_rng(seed)
    words = "cell protein gene patients risk increased study trial effect dose cancer model".split()
    return [" ".join(rng.choice(words, 150)) for _ in range(500)]


def _passages(texts: list[str], n: int, seed: int) -> list:
    from rag.types import Candidate, Chunk

    pick = np.random.default_rng(seed).choice(len(texts), n, replace=False)
    return [Candidate(Chunk(f"p{i}:1:0", f"p{i}", "1", 0, texts[j], 0, len(texts[j])), 1.0 / (i + 1), i + 1, ())
            for i, j in enumerate(pick)]


def _latency(scorer, texts: list[str], o: Options) -> dict:
    from rag.config import RerankConfig
    from rag.rerank import CrossEncoderReranker

    r = CrossEncoderReranker(scorer, config=RerankConfig(top_n=max(o.sizes), languages=("en", "ko")))
    r.rerank("warm up query", _passages(texts, 4, 0))
    out = {}
    for n in o.sizes:
        times = []
        for rep in range(o.repeats):
            cands = _passages(texts, n, 100 + rep)
            t0 = time.perf_counter()
            r.rerank(f"query {rep}: does vitamin d reduce fracture risk in older adults", cands)
            times.append((time.perf_counter() - t0) * 1000)
        s = latency_summary(times, 1)
        out[str(n)] = {**s, "pairs_per_s": round(n / (s["p50"] / 1000), 1)}
    return out


def _quality(scorers: dict, n: int) -> dict:
    from rag.config import RerankConfig, load_config
    from rag.evaluation import dedupe_docs, ndcg_at_k
    from rag.index import load_beir
    from rag.pipeline import Pipeline
    from rag.rerank import CrossEncoderReranker, in_holdout
    from rag.retrieval import HybridRetriever

    ds = load_beir(data_dir() / "scifact", "train")
    pipe = Pipeline(load_config(repo_path("configs/en.yaml")))
    retr = HybridRetriever(pipe.new_index(ds.corpus), pipe.components.embedder, pipe.config.retrieval)
    qids = [q for q in sorted(ds.qrels) if in_holdout(ds.name, q, 40)][:n]
    rerankers = {k: CrossEncoderReranker(s, config=RerankConfig(top_n=30)) for k, s in scorers.items()}
    scores: dict[str, list[float]] = {"hybrid": [], **{k: [] for k in rerankers}}
    for q, fused in zip(qids, retr.search_many([ds.queries[q] for q in qids], candidates=30)):
        ranked = [c.chunk.document_id for c in fused.candidates]
        scores["hybrid"].append(ndcg_at_k(dedupe_docs(ranked), ds.qrels[q], 10))
        for k, r in rerankers.items():
            res = r.rerank(ds.queries[q], fused.candidates)
            docs = [c.candidate.chunk.document_id for c in res.candidates]
            scores[k].append(ndcg_at_k(dedupe_docs(docs), ds.qrels[q], 10))
    return {"queries": len(qids), "ndcg@10": {k: round(float(np.mean(v)), 4) for k, v in scores.items()}}


def run(o: Options) -> Outcome:
    import torch

    from rag.config import RerankConfig
    from rag.rerank import CrossEncoderScorer

    torch.set_num_threads(o.threads)
    texts = _texts(0)
    scorers = {}
    for m in o.models:
        tag = "minilm" if m == "default" else Path(m).name
        model = m if m == "default" else str(Path(m).resolve())
        base = RerankConfig(batch_size=32, max_length=o.max_length)
        scorers[f"{tag}_fp32"] = CrossEncoderScorer(base, model=model, cache_size=0)
        scorers[f"{tag}_int8"] = CrossEncoderScorer(base.model_copy(update={"quantize": True}), model=model, cache_size=0)
    rows: dict[str, dict] = {}
    for _round in range(2):  # interleaved; the second round is reported (the first loads and warms)
        for name, s in scorers.items():
            rows[name] = _latency(s, texts, o)
    out: dict = {"threads": o.threads, "repeats": o.repeats, "max_length": o.max_length, "latency_ms": rows,
                 "passages": "scifact" if (data_dir() / "scifact" / "corpus.jsonl").is_file() else "synthetic",
                 "models": {name: s.model_id for name, s in scorers.items()}}
    table = [f"{'backend':<28}{'cands':>6}{'p50 ms':>9}{'p95 ms':>9}{'pairs/s':>9}"]
    for name, by_n in rows.items():
        table += [f"{name:<28}{n:>6}{r['p50']:>9.1f}{r['p95']:>9.1f}{r['pairs_per_s']:>9.1f}" for n, r in by_n.items()]
    if o.quality_queries > 0:
        for s in scorers.values():
            s.cache_size = 100_000
        out["quality"] = _quality(scorers, o.quality_queries)
        table.append(f"nDCG@10 on {out['quality']['queries']} held-out SciFact queries: {out['quality']['ndcg@10']}")
    return Outcome(out, "\n".join(table))


def _requires(o: Options) -> list[str]:
    from rag.rerank import DEFAULT_RERANKER

    missing = []
    if "default" in o.models and not DEFAULT_RERANKER.is_dir():
        missing.append(f"the committed reranker checkpoint {DEFAULT_RERANKER} is not there")
    missing += [f"checkpoint folder {m} not found" for m in o.models if m != "default" and not Path(m).is_dir()]
    if o.quality_queries > 0 and not (data_dir() / "scifact").is_dir():
        missing.append(f"--quality-queries needs {data_dir() / 'scifact'}")
    return missing


MEASUREMENT = Measurement("rerank", "cross-encoder rerank latency fp32 vs int8 (10/30/50 candidates)", Options, run,
                          _requires)
