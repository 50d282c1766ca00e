"""Fusion of ranked lists from several retrievers into one candidate list.

- ``rrf``: reciprocal rank fusion, score = sum over lists of w / (k + rank).
- ``weighted``: each list's scores are normalized, then combined as sum of w * norm.
  ``zscore`` (default) centres each list on its own mean and divides by its standard
  deviation, so a list whose top hit barely beats the rest contributes little spread;
  a document missing from a list gets that list's lowest normalized value.
  ``minmax`` maps each list onto [0, 1] but divides by max(range, |max| / 2) so a
  flat weak list is not stretched into a perfect 1.0 top hit.

Ordering is deterministic: fused score desc, then ``evidence_id`` asc.
"""
from __future__ import annotations

import math
from typing import Mapping, Sequence

import numpy as np

from rag.config import FusionConfig
from rag.types import Candidate, Chunk, RetrieverHit, ScoredChunk


def _normalize(scores: np.ndarray, how: str) -> np.ndarray:
    if scores.size == 0:
        return scores
    if how == "zscore":
        sd = float(scores.std())
        return (scores - scores.mean()) / sd if sd > 1e-12 else np.zeros_like(scores)
    if how == "minmax":
        lo, hi = float(scores.min()), float(scores.max())
        # Never stretch a list whose spread is small relative to its magnitude.
        span = max(hi - lo, 0.5 * abs(hi), 1e-9)
        return (scores - lo) / span
    raise ValueError(f"unknown normalization {how!r}; use zscore or minmax")


def fuse(
    lists: Mapping[str, Sequence[ScoredChunk]],
    *,
    method: str | None = None,
    k: float | None = None,
    weights: Mapping[str, float] | None = None,
    normalization: str | None = None,
    limit: int | None = None,
) -> list[Candidate]:
    """Fuse named ranked lists (each sorted best first) into candidates.

    ``method``, ``k`` and ``normalization`` left at None take the ``retrieval.fusion`` defaults."""
    method = FusionConfig.default("method") if method is None else method
    k = FusionConfig.default("k") if k is None else k
    normalization = FusionConfig.default("normalization") if normalization is None else normalization
    if method not in ("rrf", "weighted"):
        raise ValueError(f"unknown fusion method {method!r}; use rrf or weighted")
    weights = dict(weights or {})
    chunks: dict[str, Chunk] = {}
    hits: dict[str, list[RetrieverHit]] = {}
    for name in sorted(lists):
        for it in lists[name]:
            eid = it.chunk.evidence_id
            chunks.setdefault(eid, it.chunk)
            hits.setdefault(eid, []).append(RetrieverHit(name, it.rank, float(it.score)))
    fused = dict.fromkeys(chunks, 0.0)
    for name in sorted(lists):
        items = lists[name]
        w = float(weights.get(name, 1.0))
        if method == "rrf":
            for it in items:
                fused[it.chunk.evidence_id] += w / (k + it.rank)
            continue
        if not items:
            continue
        norm = _normalize(np.array([it.score for it in items], dtype=np.float64), normalization)
        by_id = {it.chunk.evidence_id: float(v) for it, v in zip(items, norm)}
        floor = float(norm.min())
        for eid in fused:
            fused[eid] += w * by_id.get(eid, floor)
    ordered = sorted(fused, key=lambda e: (-_finite(fused[e]), e))
    if limit is not None:
        ordered = ordered[:limit]
    return [
        Candidate(chunk=chunks[e], score=fused[e], rank=i + 1, hits=tuple(sorted(hits[e], key=lambda h: h.retriever)))
        for i, e in enumerate(ordered)
    ]


def _finite(x: float) -> float:
    return x if math.isfinite(x) else -math.inf
