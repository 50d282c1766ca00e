"""A small learned answerability model: several retrieval and reranking signals -> P(answerable).

One signal alone did not transfer between data sets (the English reranker's probability separated
answerable from unanswerable questions at AUROC 0.815 on MS MARCO-style data and 0.49 on held-out
NoMIRACL-style data). This model combines per-question features that every pipeline run already
has, with a standardised logistic regression (numpy, L2-regularised, fit by Newton's method):

================  =====================================================================
``top_logit``     the reranker's highest raw logit
``margin``        highest minus second-highest reranker logit
``top_dense``     the highest dense cosine among the candidates
``top_bm25``      ``log1p`` of the highest BM25 score among the candidates
``agree_dense``   1 when the reranker's first candidate is also the dense retriever's best
``agree_bm25``    1 when it is also BM25's best
================  =====================================================================

A feature a question lacks (no BM25 hit, the reranker did not run) takes the model's training
mean, i.e. contributes nothing. The fitted model is a JSON file (``answerability.json``) stored
beside the reranker whose logits it reads; its threshold lives in the config (``gate.threshold``
with ``gate.signal: answerability``). How it was fitted and validated (leave one data set out):
``scripts/fit_answerability.py`` at commit efa571a and docs/results/models.md.
"""
from __future__ import annotations

import json
import math
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Sequence

import numpy as np

from rag.errors import ModelLoadError

if TYPE_CHECKING:
    from rag.rerank.cross_encoder import RerankResult
    from rag.types import Candidate

FEATURES = ("top_logit", "margin", "top_dense", "top_bm25", "agree_dense", "agree_bm25")
FILENAME = "answerability.json"


def best_hit(candidates: Sequence["Candidate"], retriever: str) -> tuple[float, str | None]:
    """(the highest finite score of ``retriever`` among the candidates, that candidate's evidence
    id); (-inf, None) when none has a hit of it."""
    best, who = -math.inf, None
    for c in candidates:
        h = c.hit(retriever)
        if h is not None and math.isfinite(h.score) and h.score > best:
            best, who = float(h.score), c.chunk.evidence_id
    return best, who


def features(candidates: Sequence["Candidate"], rerank: "RerankResult | None") -> dict[str, float]:
    """The named features of one question (NaN where a signal is missing)."""
    nan = float("nan")
    logits = sorted(((float(c.logit), c.evidence_id) for c in (rerank.candidates if rerank and rerank.applied else ())
                     if c.logit is not None and math.isfinite(c.logit)), reverse=True)
    dense, dense_id = best_hit(candidates, "dense")
    bm25, bm25_id = best_hit(candidates, "bm25")
    top_id = logits[0][1] if logits else None
    return {
        "top_logit": logits[0][0] if logits else nan,
        "margin": logits[0][0] - logits[1][0] if len(logits) > 1 else nan,
        "top_dense": dense if dense_id else nan,
        "top_bm25": math.log1p(max(bm25, 0.0)) if bm25_id else nan,
        "agree_dense": float(top_id == dense_id) if top_id and dense_id else nan,
        "agree_bm25": float(top_id == bm25_id) if top_id and bm25_id else nan,
    }


@dataclass(frozen=True)
class AnswerabilityModel:
    features: tuple[str, ...]
    mean: tuple[float, ...]
    scale: tuple[float, ...]
    coef: tuple[float, ...]
    intercept: float
    reranker: str = ""  # model id of the reranker whose logits it was fitted on
    note: str = ""

    def matrix(self, rows: Sequence[dict[str, float]]) -> np.ndarray:
        x = np.array([[r.get(f, math.nan) for f in self.features] for r in rows], dtype=np.float64).reshape(-1, len(self.features))
        mean = np.asarray(self.mean)
        x = np.where(np.isfinite(x), x, mean)  # a missing feature contributes nothing
        return (x - mean) / np.asarray(self.scale)

    def probabilities(self, rows: Sequence[dict[str, float]]) -> np.ndarray:
        z = self.matrix(rows) @ np.asarray(self.coef) + self.intercept
        return 1.0 / (1.0 + np.exp(-z))

    def probability(self, candidates: Sequence["Candidate"], rerank: "RerankResult | None") -> float:
        return float(self.probabilities([features(candidates, rerank)])[0])

    def to_json(self) -> dict:
        return {"features": list(self.features), "mean": list(self.mean), "scale": list(self.scale),
                "coef": list(self.coef), "intercept": self.intercept, "reranker": self.reranker, "note": self.note}


def fit(rows: Sequence[dict[str, float]], labels: Sequence[bool], names: Sequence[str] = FEATURES,
        l2: float = 1.0, reranker: str = "", note: str = "") -> AnswerabilityModel:
    """Standardised L2-regularised logistic regression (Newton's method; deterministic)."""
    names = tuple(names)
    unknown = [n for n in names if n not in FEATURES]
    if unknown:
        raise ValueError(f"unknown features {unknown}; use some of {FEATURES}")
    x = np.array([[r.get(f, math.nan) for f in names] for r in rows], dtype=np.float64).reshape(-1, len(names))
    y = np.asarray(labels, dtype=np.float64)
    if len(y) == 0 or y.min() == y.max():
        raise ValueError("fitting needs both answerable and unanswerable questions")
    mean = np.array([np.nanmean(col) if np.isfinite(col).any() else 0.0 for col in x.T])
    x = np.where(np.isfinite(x), x, mean)
    scale = x.std(axis=0)
    scale = np.where(scale > 1e-9, scale, 1.0)
    xs = np.hstack([(x - mean) / scale, np.ones((len(y), 1))])
    w = np.zeros(xs.shape[1])
    reg = np.full(xs.shape[1], l2)
    reg[-1] = 0.0  # the intercept is not penalised
    for _ in range(50):
        p = 1.0 / (1.0 + np.exp(-(xs @ w)))
        grad = xs.T @ (p - y) + reg * w
        hess = (xs * (p * (1 - p))[:, None]).T @ xs + np.diag(reg) + 1e-9 * np.eye(len(w))
        step = np.linalg.solve(hess, grad)
        w -= step
        if np.abs(step).max() < 1e-10:
            break
    return AnswerabilityModel(names, tuple(float(v) for v in mean), tuple(float(v) for v in scale),
                              tuple(float(v) for v in w[:-1]), float(w[-1]), reranker, note)


def save(model: AnswerabilityModel, path: Path) -> None:
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(model.to_json(), indent=2) + "\n", encoding="utf-8")
    tmp.replace(path)


def load(path: Path) -> AnswerabilityModel:
    try:
        d = json.loads(path.read_text(encoding="utf-8"))
        m = AnswerabilityModel(tuple(d["features"]), tuple(map(float, d["mean"])), tuple(map(float, d["scale"])),
                               tuple(map(float, d["coef"])), float(d["intercept"]), str(d.get("reranker", "")),
                               str(d.get("note", "")))
    except FileNotFoundError:
        raise ModelLoadError(f"answerability model not found: {path}; fit one with scripts/fit_answerability.py "
                             "at commit efa571a (docs/benchmarks.md) or set gate.signal to probability") from None
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise ModelLoadError(f"{path}: not an answerability model ({exc})") from None
    if not m.features or any(f not in FEATURES for f in m.features) or \
            not len(m.features) == len(m.mean) == len(m.scale) == len(m.coef):
        raise ModelLoadError(f"{path}: malformed answerability model (features {m.features})")
    return m
