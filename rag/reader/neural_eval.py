"""The neural reader measured on the reader data's held-back groups (``rag reader eval-model``).

Groups of the ``eval`` split (or ``calib``) are drawn as for training (:mod:`rag.reader.groups`) and each
(question, text) pair scored by one or more cross-encoders side by side. Reported per source / kind /
language pair: MRR of the positive among the group's candidates (passages: 1 + 7 windows; sentences: the
answer sentence among 7 others, half from its own passage), accuracy at 1, and per source the AUROC of a
group's best score for "the question has an answer here" (positive groups vs the all-negative groups of
unanswerable questions). ``fit_calibration`` fits Platt scaling of the raw logit on the calib split's pairs.
"""
from __future__ import annotations

import logging
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Mapping, Sequence

import numpy as np

from rag.reader.groups import ReaderGroup, draw_groups

logger = logging.getLogger(__name__)

Scorer = Callable[[Sequence[tuple[str, str]]], np.ndarray]


@dataclass(frozen=True)
class GroupScores:
    group: ReaderGroup
    scores: tuple[float, ...]


@dataclass(frozen=True)
class KeyReport:
    key: str                  # source/kind/pair
    groups: int
    mrr: float | None         # None for all-negative groups
    acc_at_1: float | None
    mean_max: float           # mean of the best score (raw logit)


def score_groups(groups: Sequence[ReaderGroup], scorer: Scorer, progress: Callable[[int, int], None] | None = None,
                 chunk: int = 64) -> list[GroupScores]:
    out: list[GroupScores] = []
    for s in range(0, len(groups), chunk):
        part = groups[s:s + chunk]
        pairs = [(g.question, t) for g in part for t in g.texts]
        flat = np.asarray(scorer(pairs), dtype=np.float64)
        i = 0
        for g in part:
            out.append(GroupScores(g, tuple(float(x) for x in flat[i:i + len(g.texts)])))
            i += len(g.texts)
        if progress:
            progress(len(out), len(groups))
    return out


def auroc(pos: Sequence[float], neg: Sequence[float]) -> float | None:
    """Probability that a random positive outscores a random negative (ties count half)."""
    if not pos or not neg:
        return None
    p, n = np.asarray(pos), np.asarray(neg)
    wins = (p[:, None] > n[None, :]).sum() + 0.5 * (p[:, None] == n[None, :]).sum()
    return float(wins / (len(p) * len(n)))


def key_reports(scored: Sequence[GroupScores]) -> list[KeyReport]:
    by: dict[str, list[GroupScores]] = {}
    for s in scored:
        by.setdefault(s.group.quota_key, []).append(s)
    out = []
    for k in sorted(by):
        rows = by[k]
        ranks = [1 + sum(x > r.scores[0] for x in r.scores[1:]) for r in rows if r.group.has_positive]
        out.append(KeyReport(k, len(rows), float(np.mean([1 / r for r in ranks])) if ranks else None,
                             float(np.mean([r == 1 for r in ranks])) if ranks else None,
                             float(np.mean([max(r.scores) for r in rows]))))
    return out


def answerable_auroc(scored: Sequence[GroupScores]) -> dict[str, float | None]:
    """Per source with all-negative groups: AUROC of the best passage score, answerable vs not."""
    out: dict[str, float | None] = {}
    for src in sorted({s.group.source for s in scored if s.group.kind == "none"}):
        pos = [max(s.scores) for s in scored if s.group.source == src and s.group.kind in ("passage", "maybe")]
        neg = [max(s.scores) for s in scored if s.group.source == src and s.group.kind == "none"]
        out[src] = auroc(pos, neg)
    return out


def eval_groups(data: Path, per_key: int, split: str = "eval", seed: int = 13) -> list[ReaderGroup]:
    """``per_key`` groups of every source / kind / language pair of ``split`` (the same draw as training's)."""
    return draw_groups(data, per_key, seed=seed, split=split)


def pair_scorer(model: str, max_length: int = 192, quantize: bool = True) -> Scorer:
    """``pairs -> raw logits`` of a bundled cross-encoder (``reader``, ``e5-ko-en``, ``minilm``) or a model
    folder, loaded as the pipeline loads its reranker."""
    from rag.config import RerankConfig
    from rag.rerank import CrossEncoderScorer

    ce = CrossEncoderScorer(RerankConfig(model=model, max_length=max_length, quantize=quantize))._load()
    return lambda pairs: ce.predict(list(pairs), batch_size=32, show_progress_bar=False)


def fit_calibration(scored: Sequence[GroupScores], fitted_on: str):
    """Platt scaling of the raw logit on every pair (positive = the group's first text when it has one)."""
    from rag.rerank.calibration import fit_platt

    xs = [x for s in scored for x in s.scores]
    ys = [int(s.group.has_positive and i == 0) for s in scored for i in range(len(s.scores))]
    return fit_platt(xs, ys, fitted_on)


def table(reports: Mapping[str, Sequence[KeyReport]]) -> str:
    """A markdown table: one row per key, MRR / acc@1 per model side by side."""
    names = list(reports)
    keys = sorted({r.key for rs in reports.values() for r in rs})
    head = "| key | groups | " + " | ".join(f"{n} MRR | {n} acc@1" for n in names) + " |"
    lines = [head, "|" + "---|" * (2 + 2 * len(names))]
    for k in keys:
        cells = []
        n = 0
        for name in names:
            r = next((x for x in reports[name] if x.key == k), None)
            n = r.groups if r else n
            cells += [f"{r.mrr:.3f}" if r and r.mrr is not None else "–",
                      f"{r.acc_at_1:.3f}" if r and r.acc_at_1 is not None else "–"]
        lines.append(f"| {k} | {n} | " + " | ".join(cells) + " |")
    return "\n".join(lines)
