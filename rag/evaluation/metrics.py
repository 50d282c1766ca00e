"""Retrieval metrics over ranked document ids (graded nDCG with linear gain, as trec_eval)."""
from __future__ import annotations

import math
from typing import Mapping, Sequence


def ndcg_at_k(ranked: Sequence[str], rels: Mapping[str, int], k: int) -> float:
    dcg = sum(rels.get(d, 0) / math.log2(i + 2) for i, d in enumerate(ranked[:k]) if rels.get(d, 0) > 0)
    ideal = sorted((r for r in rels.values() if r > 0), reverse=True)[:k]
    idcg = sum(r / math.log2(i + 2) for i, r in enumerate(ideal))
    return dcg / idcg if idcg > 0 else 0.0


def recall_at_k(ranked: Sequence[str], rels: Mapping[str, int], k: int) -> float:
    relevant = {d for d, r in rels.items() if r > 0}
    if not relevant:
        return 0.0
    return len(relevant & set(ranked[:k])) / len(relevant)


def mrr_at_k(ranked: Sequence[str], rels: Mapping[str, int], k: int) -> float:
    for i, d in enumerate(ranked[:k]):
        if rels.get(d, 0) > 0:
            return 1.0 / (i + 1)
    return 0.0


def dedupe_docs(ranked_doc_ids: Sequence[str]) -> list[str]:
    """Chunks -> documents: keep each document at its best (first) rank."""
    seen: set[str] = set()
    out = []
    for d in ranked_doc_ids:
        if d not in seen:
            seen.add(d)
            out.append(d)
    return out


METRICS = {
    "ndcg@10": lambda r, q: ndcg_at_k(r, q, 10),
    "recall@10": lambda r, q: recall_at_k(r, q, 10),
    "recall@100": lambda r, q: recall_at_k(r, q, 100),
    "mrr@10": lambda r, q: mrr_at_k(r, q, 10),
}


def mean_metrics(runs: Mapping[str, Sequence[str]], qrels: Mapping[str, Mapping[str, int]]) -> dict[str, float]:
    """Mean of each metric over the queries in ``qrels`` (a query missing from ``runs`` scores 0)."""
    out = {}
    for name, fn in METRICS.items():
        vals = [fn(runs.get(q, []), rels) for q, rels in sorted(qrels.items())]
        out[name] = round(sum(vals) / len(vals), 6) if vals else 0.0
    return out
