"""Calibration of reranker scores into probabilities (Platt scaling), saved beside a checkpoint
as ``calibration.json``."""
from __future__ import annotations

import json
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

import numpy as np

from rag.errors import InputError, ModelLoadError

@dataclass(frozen=True)
class Calibration:
    """Platt scaling: ``p = sigmoid(a * score + b)``."""

    a: float = 1.0
    b: float = 0.0
    fitted_on: str = "uncalibrated"
    n: int = 0

    def probability(self, score: float) -> float:
        z = self.a * score + self.b
        return 1.0 / (1.0 + math.exp(-z)) if z >= 0 else math.exp(z) / (1.0 + math.exp(z))

    @property
    def calibrated(self) -> bool:
        return self.n > 0

    def save(self, path: Path) -> None:
        path.write_text(json.dumps({"method": "platt", "a": self.a, "b": self.b, "fitted_on": self.fitted_on,
                                    "n": self.n}, indent=2) + "\n", encoding="utf-8")

    @classmethod
    def load(cls, path: Path) -> "Calibration":
        try:
            d = json.loads(path.read_text(encoding="utf-8"))
            return cls(float(d["a"]), float(d["b"]), str(d.get("fitted_on", "")), int(d.get("n", 0)))
        except (OSError, ValueError, KeyError, TypeError) as exc:
            raise ModelLoadError(f"{path}: not a valid calibration file ({exc}); refit it with "
                                 "scripts/tune_reranker.py (at commit efa571a, docs/benchmarks.md) or delete it") from None


def fit_platt(scores: Sequence[float], labels: Sequence[int], fitted_on: str = "", iters: int = 100) -> Calibration:
    """Logistic regression of the label on one score (Newton's method, Platt's smoothed targets)."""
    x = np.asarray(scores, dtype=np.float64)
    y = np.asarray(labels, dtype=np.float64)
    if x.shape != y.shape or x.size == 0:
        raise InputError("fit_platt needs as many labels as scores, and at least one of each")
    if not np.all(np.isfinite(x)):
        raise InputError("fit_platt: scores contain NaN or infinite values; drop them first")
    n_pos, n_neg = float(y.sum()), float(len(y) - y.sum())
    if n_pos == 0 or n_neg == 0:
        raise InputError(f"fit_platt needs both classes, got {int(n_pos)} positives and {int(n_neg)} negatives")
    t = np.where(y > 0, (n_pos + 1) / (n_pos + 2), 1 / (n_neg + 2))

    def loss(a: float, b: float) -> float:
        z = a * x + b  # cross-entropy against the smoothed targets, computed stably
        return float(np.sum(np.logaddexp(0, z) - t * z))

    a, b = 0.0, math.log((n_pos + 1) / (n_neg + 1))
    cur = loss(a, b)
    for _ in range(iters):
        p = 0.5 * (1 + np.tanh(0.5 * (a * x + b)))
        w = np.maximum(p * (1 - p), 1e-12)
        g = np.array([np.sum((p - t) * x), np.sum(p - t)])
        h = np.array([[np.sum(w * x * x), np.sum(w * x)], [np.sum(w * x), np.sum(w)]]) + 1e-9 * np.eye(2)
        step = np.linalg.solve(h, g)
        # Damped Newton: halve the step until the loss goes down (near-separable data overshoots).
        lr = 1.0
        while lr > 1e-8 and loss(a - lr * step[0], b - lr * step[1]) > cur:
            lr *= 0.5
        if lr <= 1e-8:
            break
        a, b = a - lr * step[0], b - lr * step[1]
        new = loss(a, b)
        if cur - new < 1e-10 * max(1.0, abs(cur)):
            break
        cur = new
    return Calibration(float(a), float(b), fitted_on, int(len(x)))
