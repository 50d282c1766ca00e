"""Metric definitions: retrieval metrics over ranked document ids (graded nDCG with linear gain,
as trec_eval), AUROC, per-stage latency, and the names experiments report with the direction
each is better in (:data:`FAMILIES`).
"""
from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Literal, Mapping, Sequence

from rag.batch.summary import LatencyStats
from rag.evaluation.errors import UnknownMetricError


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


def auroc(scores: Sequence[float], labels: Sequence[bool]) -> float:
    """Probability that a random positive outscores a random negative (ties count half)."""
    import numpy as np

    s = np.asarray(scores, dtype=np.float64)
    y = np.asarray(labels, dtype=bool)
    if y.all() or (~y).all():
        return float("nan")
    order = np.argsort(s, kind="mergesort")
    ranks = np.empty(len(s))
    sorted_s = s[order]
    i = 0
    while i < len(s):
        j = i
        while j + 1 < len(s) and sorted_s[j + 1] == sorted_s[i]:
            j += 1
        ranks[order[i:j + 1]] = (i + j) / 2 + 1
        i = j + 1
    n_pos, n_neg = y.sum(), (~y).sum()
    return float((ranks[y].sum() - n_pos * (n_pos + 1) / 2) / (n_pos * n_neg))


def latency_metrics(values: Sequence[float] | LatencyStats, prefix: str) -> dict[str, float]:
    """``PREFIX.p50_ms``, ``PREFIX.p95_ms`` and ``PREFIX.mean_ms`` of :class:`LatencyStats` (or over
    the finite values), rounded to 4 places; empty when there are none."""
    s = values if isinstance(values, LatencyStats) else LatencyStats.of(values)
    if not s.n:
        return {}
    return {f"{prefix}.p50_ms": round(s.p50, 4), f"{prefix}.p95_ms": round(s.p95, 4),
            f"{prefix}.mean_ms": round(s.mean, 4)}


# --------------------------------------------------------------------------- metric names and directions
@dataclass(frozen=True)
class MetricFamily:
    pattern: str  # full-match regex over metric names
    direction: Literal["max", "min", "none"]  # which value is best ("none": not ranked)
    description: str


_R = r"(bm25|dense|hybrid|rerank|final)"
_STAGE = r"[a-z0-9_]+"
FAMILIES: tuple[MetricFamily, ...] = (
    MetricFamily(rf"retrieval\.{_R}\.(ndcg@10|recall@10|recall@100|mrr@10)", "max",
                 "document-level retrieval quality (final = rerank when it ran, else hybrid)"),
    MetricFamily(r"retrieval\.hit@(1|3|10)", "max", "questions: expected document among the top k candidates"),
    MetricFamily(r"abstention\.(auroc|coverage|precision_of_answered|answered_when_answerable|"
                 r"abstained_when_unanswerable|accuracy)", "max", "the gate against answerable labels"),
    MetricFamily(r"abstention\.signals_auroc\.(probability|bm25|dense|fused)", "max", "AUROC of each gate signal"),
    MetricFamily(r"answers\.answered_rate", "none", "fraction answered"),
    MetricFamily(r"answers\.abstained_rate", "none", "fraction insufficient_evidence"),
    MetricFamily(r"answers\.failed_rate", "min", "fraction failed"),
    MetricFamily(r"answers\.facts_(right_rate|precision_of_answered)", "max",
                 "answers scored by their facts: right / questions with gold facts, right / answered labelled"),
    MetricFamily(r"context\.(evidence_tokens|evidence_budget|blocks|budget_use)\.(mean|p50|p95)", "none",
                 "evidence tokens sent, the evidence budget, blocks, tokens / budget"),
    MetricFamily(r"context\.truncation_rate", "none", "fraction of sent blocks that were cut to fit"),
    MetricFamily(rf"context\.dropped\.{_STAGE}", "none", "candidates not sent, per question, by reason"),
    MetricFamily(r"citations\.(validated_rate|first_attempt_valid_rate|correct_document_rate)", "max",
                 "answers whose citations validated / on the first attempt / cite the expected document"),
    MetricFamily(r"citations\.failure_rate", "min", "attempts rejected by the validator"),
    MetricFamily(rf"citations\.violations\.{_STAGE}", "min", "rejected attempts per attempt, by violation code"),
    MetricFamily(r"citations\.support\.(p10|p50|mean)", "max", "support score of cited claims"),
    MetricFamily(r"citations\.per_answer\.mean", "none", "citations per answered question"),
    MetricFamily(rf"latency\.{_STAGE}\.(p50|p95|mean)_ms", "min", "per-stage latency"),
    MetricFamily(r"tokens\.(prompt|completion)\.mean", "min", "tokens per question"),
    MetricFamily(r"attempts\.mean", "min", "generation attempts per answered/abstained question"),
    MetricFamily(r"n_(queries|questions)", "none", "how many were evaluated"),
)
_COMPILED = tuple((re.compile(f.pattern), f) for f in FAMILIES)


def metric_family(name: str) -> MetricFamily:
    for rx, fam in _COMPILED:
        if rx.fullmatch(name):
            return fam
    raise UnknownMetricError(
        f"unknown metric {name!r}. Metric names look like: retrieval.final.ndcg@10, retrieval.hybrid.recall@100, "
        "abstention.auroc, abstention.coverage, answers.answered_rate, context.budget_use.mean, "
        "context.truncation_rate, citations.validated_rate, citations.violations.<code>, citations.support.p50, "
        "latency.<stage>.p95_ms, tokens.prompt.mean (the full list is rag.evaluation.metrics.FAMILIES)")


def metric_direction(name: str) -> str:
    return metric_family(name).direction
