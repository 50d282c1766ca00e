"""Tune fusion on a development set: BM25 and dense lists are computed once, then every
fusion setting in the grid is scored on the same lists. Prints a table, writes JSON.

    python scripts/tune_fusion.py --dataset ../shared/data/scifact --split train --config configs/en.yaml
    python scripts/tune_fusion.py --dataset ../shared/data/msmarco/ko --split test --config configs/ko.yaml --max-queries 1500

Tune only on training/development data; report test splits once with the chosen setting.
"""
from __future__ import annotations

import argparse
import json
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def grid():
    from rag.config import FusionConfig

    out = {}
    for k in (5, 10, 20, 40, 60, 100):
        out[f"rrf k={k}"] = FusionConfig(method="rrf", k=k)
    for w in (0.5, 0.6, 0.7, 0.8):
        out[f"rrf k=60 w_bm25={w}"] = FusionConfig(method="rrf", k=60, bm25_weight=w, dense_weight=1 - w)
    for norm in ("zscore", "minmax"):
        for w in (0.3, 0.4, 0.5, 0.6, 0.7, 0.8):
            out[f"weighted {norm} w_bm25={w}"] = FusionConfig(method="weighted", normalization=norm,
                                                              bm25_weight=w, dense_weight=round(1 - w, 2))
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--dataset", required=True)
    ap.add_argument("--split", required=True)
    ap.add_argument("--config", required=True)
    ap.add_argument("--max-queries", type=int, default=None)
    ap.add_argument("--out", default=None)
    a = ap.parse_args()
    from rag.evaluation.retrieval import evaluate_retrieval
    from rag.pipeline import Pipeline

    p = Pipeline.from_config(a.config)
    res = evaluate_retrieval(p, a.dataset, a.split, max_queries=a.max_queries, fusions=grid())
    rows = sorted(res.metrics.items(), key=lambda kv: -kv[1]["ndcg@10"])
    print(f"{res.dataset}/{res.split}: {res.n_queries} queries, {res.embedding_model}, {res.analyzer}")
    print(f"{'setting':<32}{'ndcg@10':>10}{'recall@100':>12}{'mrr@10':>10}")
    for name, m in rows:
        print(f"{name:<32}{m['ndcg@10']:>10.4f}{m['recall@100']:>12.4f}{m['mrr@10']:>10.4f}")
    out = Path(a.out or ROOT / "results" / f"tune_fusion_{res.dataset}_{a.split}.json")
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(res.to_json(), indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
