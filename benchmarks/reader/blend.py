"""Reranked nDCG@10 / MRR@10 of one cross-encoder at several blend weights, scored once (the scorer caches
every (query, passage) logit, so each extra weight costs only the sort).

For choosing ``rerank.blend_weight`` on the reader's ``calib`` split and reporting the chosen one on
``eval``, side by side with fusion alone (``hybrid``):

    python benchmarks/reader/blend.py --dataset ../shared/data/korquad1 --config configs/ko.yaml \\
        --model reader --reader-split calib --weights 0,0.25,0.5,0.75,1 --json results/reader/blend_korquad_calib.json
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from rag.config import RerankConfig, load_config
from rag.evaluation.retrieval import run_queries
from rag.index.loaders import load_beir
from rag.pipeline import Pipeline
from rag.reader.splits import beir_query_filter
from rag.rerank.cross_encoder import CrossEncoderReranker, CrossEncoderScorer


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dataset", required=True)
    ap.add_argument("--split", default="test")
    ap.add_argument("--config", required=True)
    ap.add_argument("--model", default="reader")
    ap.add_argument("--reader-split", default="calib", choices=("train", "calib", "eval"))
    ap.add_argument("--weights", default="0,0.25,0.5,0.75,1")
    ap.add_argument("--max-length", type=int, default=192)
    ap.add_argument("--max-queries", type=int, default=None)
    ap.add_argument("--json", default=None)
    a = ap.parse_args(argv)
    cfg = load_config(a.config)
    p = Pipeline(cfg)
    ds = load_beir(Path(a.dataset), a.split)
    keep = beir_query_filter(a.dataset, ds.qrels, a.reader_split)
    qids = sorted(q for q in ds.qrels if keep(q))[: a.max_queries]
    index = p.new_index(ds.corpus)
    qvecs = p.embedder.embed_queries([ds.queries[q] for q in qids])
    base = RerankConfig(model=a.model, max_length=a.max_length, quantize=True, languages=("ko", "en"),
                        passage_languages=("ko", "en"))
    scorer = CrossEncoderScorer(base)
    qrels = {q: ds.qrels[q] for q in qids}
    rows = {}
    for w in [float(x) for x in a.weights.split(",")]:
        rr = CrossEncoderReranker(scorer, None, base.model_copy(update={"blend_weight": w}))
        runs = run_queries(index, p.embedder, cfg.retrieval, [(q, ds.queries[q]) for q in qids], qvecs, reranker=rr)
        m = runs.mean_metrics(qrels)
        rows.setdefault("hybrid", m["hybrid"])
        rows[f"w={w:g}"] = m["rerank"]
        print(f"w={w:g}: " + "  ".join(f"{k} {v:.4f}" for k, v in m["rerank"].items()
                                        if k in ("ndcg@10", "mrr@10", "recall@10")), flush=True)
    print("hybrid: " + "  ".join(f"{k} {v:.4f}" for k, v in rows["hybrid"].items() if k in ("ndcg@10", "mrr@10", "recall@10")))
    if a.json:
        Path(a.json).parent.mkdir(parents=True, exist_ok=True)
        Path(a.json).write_text(json.dumps({"dataset": a.dataset, "reader_split": a.reader_split, "queries": len(qids),
                                            "model": a.model, "command": ["python", *sys.argv], "metrics": rows},
                                           indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
