"""Tune the reranker's blend weight and fit its Platt calibration on development queries.

Development data = MS MARCO (en) queries that the training run did not use (read from the
mined training groups), never the SciFact held-out queries the README reports on.
Writes ``calibration.json`` beside the model and ``results/tune_reranker.json``.

    python scripts/tune_reranker.py --model rag/_models/reranker-minilm \
        --groups .rag/train/reranker-minilm-listwise/groups.jsonl --queries 400
"""
from __future__ import annotations

import argparse
import json
import random
import sys
import time
from pathlib import Path

import numpy as np


from rag.config import RerankConfig, load_config
from rag.index import load_beir
from rag.evaluation.metrics import dedupe_docs, ndcg_at_k
from rag.pipeline import Pipeline
from rag.rerank import CrossEncoderReranker, CrossEncoderScorer, fit_platt, in_holdout, load_groups
from rag.retrieval import HybridRetriever

WEIGHTS = (0.0, 0.25, 0.4, 0.5, 0.6, 0.75, 1.0)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--model", default="rag/_models/reranker-minilm")
    ap.add_argument("--dataset", default="../shared/data/msmarco/en")
    ap.add_argument("--split", default="test")
    ap.add_argument("--config", default="configs/en.yaml")
    ap.add_argument("--groups", required=True, help="the training run's groups.jsonl (its queries are excluded)")
    ap.add_argument("--queries", type=int, default=400)
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--languages", default="en", help="query languages the model reranks, comma-separated")
    ap.add_argument("--max-length", type=int, default=None, help="pair length in tokens (default: the checkpoint's)")
    ap.add_argument("--quantize", action="store_true", help="int8 dynamic quantization (as rerank.quantize)")
    ap.add_argument("--top-n", type=int, nargs="*", default=[10, 20, 30], help="rerank depths compared at the best weight")
    ap.add_argument("--holdout", type=int, default=0, metavar="PERCENT",
                    help="report mode: the queries a training config with this holdout_percent kept out "
                         "(e.g. SciFact 40), instead of unused ones; with --no-save")
    ap.add_argument("--no-save", action="store_true", help="do not write calibration.json (report only)")
    ap.add_argument("--out", default="results/tune_reranker.json")
    args = ap.parse_args()

    ds = load_beir(args.dataset, args.split)
    used = {g.query_id for g in load_groups(Path(args.groups))}  # MS MARCO en/ko share query ids
    pool = sorted(q for q in ds.qrels if q not in used)
    if args.holdout:
        pool = sorted(q for q in ds.qrels if in_holdout(ds.name, q, args.holdout))
    random.Random(args.seed).shuffle(pool)
    qids = sorted(pool[: args.queries])
    pipe = Pipeline(load_config(args.config).with_overrides({"rerank.model": str(Path(args.model).resolve())}))
    index = pipe.new_index(ds.corpus)
    retr = HybridRetriever(index, pipe.embedder, pipe.config.retrieval)
    scorer = CrossEncoderScorer(RerankConfig(batch_size=32, max_length=args.max_length, quantize=args.quantize),
                                model=str(Path(args.model).resolve()))
    rerankers = {w: CrossEncoderReranker(scorer, config=RerankConfig(top_n=30, blend_weight=w, languages=tuple(args.languages.split(",")))) for w in WEIGHTS}
    searched = retr.search_many([ds.queries[q] for q in qids], candidates=30)
    ndcg = {w: [] for w in WEIGHTS}
    ndcg["hybrid"] = []
    logits, labels = [], []
    t0 = time.perf_counter()
    for i, (q, fused) in enumerate(zip(qids, searched)):
        text = ds.queries[q]
        rels = ds.qrels[q]
        ndcg["hybrid"].append(ndcg_at_k(dedupe_docs([c.chunk.document_id for c in fused.candidates]), rels, 10))
        for w, r in rerankers.items():  # the scorer caches logits, so each extra weight is free
            res = r.rerank(text, fused.candidates)
            ndcg[w].append(ndcg_at_k(dedupe_docs([c.candidate.chunk.document_id for c in res.candidates]), rels, 10))
        for rc in res.candidates:
            if rc.logit is not None:
                logits.append(rc.logit)
                labels.append(int(rels.get(rc.candidate.chunk.document_id, 0) > 0))
        if (i + 1) % 50 == 0:
            print(f"{i + 1}/{len(qids)} queries ({time.perf_counter() - t0:.0f} s)", file=sys.stderr)
    means = {str(k): round(float(np.mean(v)), 4) for k, v in ndcg.items()}
    best = max(WEIGHTS, key=lambda w: (means[str(w)], -abs(w - 0.5)))
    langs = tuple(args.languages.split(","))
    depth: dict[str, dict[int, float]] = {}
    for w in sorted({0.25, 0.5, 1.0, best}):  # logits are cached: reranking a shallower prefix is free
        depth[str(w)] = {}
        for n in args.top_n:
            r = CrossEncoderReranker(scorer, config=RerankConfig(top_n=n, blend_weight=w, languages=langs))
            depth[str(w)][n] = round(float(np.mean([
                ndcg_at_k(dedupe_docs([c.candidate.chunk.document_id for c in r.rerank(ds.queries[q], f.candidates).candidates]),
                          ds.qrels[q], 10) for q, f in zip(qids, searched)])), 4)
    print("nDCG@10 by blend weight and rerank depth (top_n):", depth)
    cal = fit_platt(logits, labels, fitted_on=f"{ds.name} {len(qids)} queries unused in training, hybrid top-30 pairs")
    if not args.no_save:
        cal.save(Path(args.model) / "calibration.json")
    print(f"{'blend weight':>14} {'nDCG@10':>8}")
    for k, v in means.items():
        print(f"{k:>14} {v:>8.4f}")
    print(f"best blend weight: {best}; Platt a={cal.a:.4f} b={cal.b:.4f} on {cal.n} pairs "
          f"({sum(labels)} relevant)")
    out = {"dataset": ds.name, "n_queries": len(qids), "ndcg@10": means, "best_blend_weight": best,
           "ndcg@10_by_top_n": depth, "max_length": scorer.max_length, "quantize": args.quantize,
           "platt": {"a": cal.a, "b": cal.b, "n": cal.n, "positives": int(sum(labels))},
           "model": str(args.model), "config_hash": pipe.config.hash, "embedding_model": pipe.embedder.model_id}
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(out, indent=2) + "\n", encoding="utf-8")
    print(f"wrote {args.out}" + ("" if args.no_save else f" and {Path(args.model) / 'calibration.json'}"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
