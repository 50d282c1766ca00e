"""Reranked nDCG@10 / MRR@10 / recall@10 of one cross-encoder at several blend weights, side by side with
fusion alone (``hybrid``), on the queries of one of the reader's splits (docs/reader.md). The scorer caches
every (query, passage) logit, so each extra weight costs only the sort: choose ``rerank.blend_weight`` on
``calib``, report the chosen one on ``eval``.

    rag bench run reader-blend --dataset ../shared/data/korquad1 --config configs/ko.yaml \\
        --model reader --reader-split calib --weights 0 0.25 0.5 0.75 1 --out results/reader/blend_korquad_calib.json
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from rag.bench.harness import repo_path
from rag.bench.measurement import Measurement, Outcome

SHOWN = ("ndcg@10", "mrr@10", "recall@10")


@dataclass(frozen=True)
class Options:
    dataset: str = field(default="", metadata={"help": "a BEIR folder whose reader split is known (korquad1, msmarco)"})
    split: str = field(default="test", metadata={"help": "the BEIR qrels split"})
    config: str = field(default="configs/default.yaml", metadata={"help": "retrieval settings"})
    model: str = field(default="reader", metadata={"help": "the cross-encoder (a bundled name or a folder)"})
    reader_split: Literal["train", "calib", "eval"] = field(default="calib", metadata={"help": "whose queries"})
    weights: tuple[float, ...] = field(default=(0.0, 0.25, 0.5, 0.75, 1.0), metadata={"help": "blend weights"})
    max_length: int = 192
    max_queries: int = field(default=0, metadata={"help": "the first N queries in id order (0: all)"})


def run(o: Options) -> Outcome:
    from rag.config import RerankConfig, load_config
    from rag.evaluation.retrieval import run_queries
    from rag.index.loaders import load_beir
    from rag.pipeline import Pipeline
    from rag.reader.splits import beir_query_filter
    from rag.rerank.cross_encoder import CrossEncoderReranker, CrossEncoderScorer

    cfg = load_config(repo_path(o.config))
    p = Pipeline(cfg)
    ds = load_beir(Path(o.dataset), o.split)
    keep = beir_query_filter(o.dataset, {q: dict(r) for q, r in ds.qrels.items()}, o.reader_split)
    qids = sorted(q for q in ds.qrels if keep(q))[:o.max_queries or None]
    index = p.new_index(ds.corpus)
    qvecs: Any = p.components.embedder.embed_queries([ds.queries[q] for q in qids])  # one row per query
    base = RerankConfig(model=o.model, max_length=o.max_length, quantize=True, languages=("ko", "en"),
                        passage_languages=("ko", "en"))
    scorer = CrossEncoderScorer(base)
    qrels = {q: ds.qrels[q] for q in qids}
    rows: dict[str, dict[str, float]] = {}
    for w in o.weights:
        rr = CrossEncoderReranker(scorer, None, base.model_copy(update={"blend_weight": w}))
        runs = run_queries(index, p.components.embedder, cfg.retrieval, [(q, ds.queries[q]) for q in qids], qvecs,
                           reranker=rr)
        m = runs.mean_metrics(qrels)
        rows.setdefault("hybrid", m["hybrid"])
        rows[f"w={w:g}"] = m["rerank"]
    lines = ["| ranking | " + " | ".join(SHOWN) + " |", "|---" * (len(SHOWN) + 1) + "|"]
    lines += [f"| {name} | " + " | ".join(f"{m[k]:.4f}" for k in SHOWN) + " |" for name, m in rows.items()]
    return Outcome({"dataset": o.dataset, "reader_split": o.reader_split, "queries": len(qids), "model": o.model,
                    "metrics": rows}, "\n".join(lines), cfg.hash)


def requires(o: Options) -> list[str]:
    if not o.dataset:
        return ["--dataset is required (a BEIR folder: ../shared/data/korquad1, an msmarco folder)"]
    return [] if Path(o.dataset).is_dir() else [f"{o.dataset} is missing"]


MEASUREMENT = Measurement(
    name="reader-blend", options=Options, run=run, requires=requires,
    summary="reranked nDCG@10 / MRR@10 of one cross-encoder at several blend weights beside fusion alone, "
            "on one reader split")
