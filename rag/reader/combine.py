"""The reader's learned combination: logistic heads over :mod:`rag.reader.features`, stored as JSON.

Heads fitted on the TRAIN split only and calibrated on the CALIB split:

- ``passage``: the candidate passage answers the question (``answers`` 1, ``no_answer`` 0; ``unknown``
  left out);
- ``sentence``: a sentence of an answering passage holds the answer span (1) or not (0);
- ``answerable`` (format 2): the question is answerable from its candidates, from per-question aggregates of
  raw features (:mod:`rag.reader.answerable`).

Each head is an L2-regularised logistic regression (scikit-learn, ``lbfgs``, fixed seed) on standardised
features plus a few products (:data:`INTERACTIONS`: the ranked signals times the same-language flag, so a
cross-language pair can lean on the cross-encoder rather than BM25). The regularisation strength is
picked by log-loss on the calib split among :data:`C_GRID`; a gradient-boosted tree model
(``HistGradientBoostingClassifier``) is fitted the same way for comparison and its calib log-loss recorded
(:func:`fit_head` ``compare_gbm``), but only the logistic head is stored: it needs no tree evaluator.
The calibrated probability is Platt scaling of the head's logit, fitted on calib.

The artifact (``rag/_models/reader-combiner/combiner.json``) holds, per head, the feature names, the
products, the standardisation, the coefficients and the calibration map; :class:`Combiner` loads and
evaluates it with numpy alone (no pickle, no scikit-learn at inference).
"""
from __future__ import annotations

import json
import logging
import math
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Sequence

import numpy as np

from rag._io import write_json
from rag.errors import ModelLoadError, missing_dependency

logger = logging.getLogger(__name__)

FORMAT = "rag-reader-combiner/2"
READABLE = ("rag-reader-combiner/1", FORMAT)  # /1: no ``answerable`` head
MODEL_DIR = Path(__file__).resolve().parents[1] / "_models" / "reader-combiner"
SEED = 43
C_GRID = (0.01, 0.1, 1.0, 10.0)
INTERACTIONS = {
    "passage": (("ce", "same_language"), ("dense", "same_language"), ("bm25_z", "same_language"),
                ("ce_z", "coverage"), ("asked_fact_missing", "ce_z")),
    "sentence": (("s_ce", "same_language"), ("s_ce_z", "p_ce_z"), ("s_asked_fact_missing", "s_ce_z")),
}


def _sigmoid(z: np.ndarray) -> np.ndarray:
    return 0.5 * (1.0 + np.tanh(0.5 * np.asarray(z, dtype=np.float64)))


def expand(x: np.ndarray, names: Sequence[str], products: Sequence[tuple[str, str]]) -> np.ndarray:
    """``x`` with one column per product of two named columns appended."""
    x = np.asarray(x, dtype=np.float64)
    idx = {n: i for i, n in enumerate(names)}
    extra = [x[:, idx[a]] * x[:, idx[b]] for a, b in products]
    return np.hstack([x, np.stack(extra, axis=1)]) if extra else x


@dataclass(frozen=True)
class Head:
    """One stored logistic head: logit = coef · ((expand(x) - mean) / scale) + intercept;
    probability = sigmoid(platt_a · logit + platt_b)."""

    features: tuple[str, ...]
    products: tuple[tuple[str, str], ...]
    mean: tuple[float, ...]
    scale: tuple[float, ...]
    coef: tuple[float, ...]
    intercept: float
    platt_a: float = 1.0
    platt_b: float = 0.0
    info: dict = field(default_factory=dict, compare=False)

    def logit(self, x: np.ndarray) -> np.ndarray:
        x = np.asarray(x, dtype=np.float64)
        if x.ndim != 2 or x.shape[1] != len(self.features):
            raise ValueError(f"expected [n, {len(self.features)}] features ({', '.join(self.features[:3])} …), "
                             f"got {x.shape}")
        z = (expand(x, self.features, self.products) - np.asarray(self.mean)) / np.asarray(self.scale)
        return z @ np.asarray(self.coef) + self.intercept

    def uncalibrated(self, x: np.ndarray) -> np.ndarray:
        return _sigmoid(self.logit(x))

    def probability(self, x: np.ndarray) -> np.ndarray:
        return _sigmoid(self.platt_a * self.logit(x) + self.platt_b)

    def to_json(self) -> dict:
        return {"features": list(self.features), "products": [list(p) for p in self.products],
                "mean": list(self.mean), "scale": list(self.scale), "coef": list(self.coef),
                "intercept": self.intercept, "calibration": {"method": "platt", "a": self.platt_a, "b": self.platt_b},
                "info": self.info}

    @classmethod
    def from_json(cls, d: dict) -> "Head":
        cal = d.get("calibration") or {}
        if cal.get("method", "platt") != "platt":
            raise ModelLoadError(f"unknown calibration method {cal.get('method')!r} (platt expected)")
        head = cls(tuple(d["features"]), tuple((a, b) for a, b in d["products"]), tuple(map(float, d["mean"])),
                   tuple(map(float, d["scale"])), tuple(map(float, d["coef"])), float(d["intercept"]),
                   float(cal.get("a", 1.0)), float(cal.get("b", 0.0)), dict(d.get("info") or {}))
        width = len(head.features) + len(head.products)
        if not (len(head.mean) == len(head.scale) == len(head.coef) == width):
            raise ModelLoadError(f"head sizes disagree: {len(head.mean)}, {len(head.scale)}, {len(head.coef)} != {width}")
        return head


@dataclass(frozen=True)
class Combiner:
    """The heads of one artifact; ``answerable`` (the question-level head of :mod:`rag.reader.answerable`)
    is ``None`` in a format-1 artifact."""

    passage: Head
    sentence: Head
    meta: dict = field(default_factory=dict, compare=False)
    answerable: Head | None = None

    def to_json(self) -> dict:
        heads = {"passage": self.passage.to_json(), "sentence": self.sentence.to_json()}
        if self.answerable is not None:
            heads["answerable"] = self.answerable.to_json()
        return {"format": FORMAT, **heads, **self.meta}

    def save(self, folder: Path) -> Path:
        folder.mkdir(parents=True, exist_ok=True)
        path = folder / "combiner.json"
        write_json(path, self.to_json())
        return path

    @classmethod
    def load(cls, path: Path | None = None) -> "Combiner":
        """From ``combiner.json`` (a folder holding it, or the file; default the committed one)."""
        p = Path(path) if path is not None else MODEL_DIR
        if p.is_dir():
            p = p / "combiner.json"
        try:
            d = json.loads(p.read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise ModelLoadError(f"{p}: cannot read the reader combiner ({exc}); train one with "
                                 "`rag reader train-combiner`") from None
        if d.get("format") not in READABLE:
            raise ModelLoadError(f"{p}: format {d.get('format')!r}, expected one of {', '.join(READABLE)}")
        meta = {k: v for k, v in d.items() if k not in ("format", "passage", "sentence", "answerable")}
        ans = Head.from_json(d["answerable"]) if d.get("answerable") is not None else None
        return cls(Head.from_json(d["passage"]), Head.from_json(d["sentence"]), meta, ans)


def log_loss(y: np.ndarray, p: np.ndarray) -> float:
    p = np.clip(np.asarray(p, dtype=np.float64), 1e-7, 1 - 1e-7)
    y = np.asarray(y, dtype=np.float64)
    return float(-np.mean(y * np.log(p) + (1 - y) * np.log(1 - p)))


def fit_platt(logit: np.ndarray, y: np.ndarray) -> tuple[float, float]:
    """Platt's (a, b) for ``sigmoid(a * logit + b)`` by Newton's method on the log-loss (a kept > 0)."""
    z = np.asarray(logit, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64)
    a, b = 1.0, 0.0
    loss = log_loss(y, _sigmoid(a * z + b))
    for _ in range(100):  # Newton's method with step halving (plain Newton can overshoot)
        p = _sigmoid(a * z + b)
        g = np.array([np.sum((p - y) * z), np.sum(p - y)])
        w = p * (1 - p) + 1e-9
        h = np.array([[np.sum(w * z * z), np.sum(w * z)], [np.sum(w * z), np.sum(w)]]) + 1e-6 * np.eye(2)
        step = np.linalg.solve(h, g)
        t = 1.0
        while t > 1e-6:
            na, nb = a - t * step[0], b - t * step[1]
            new = log_loss(y, _sigmoid(na * z + nb))
            if new <= loss + 1e-15:
                break
            t /= 2
        else:
            break
        a, b, done = na, nb, loss - new < 1e-12
        loss = new
        if done:
            break
    if not (math.isfinite(a) and a > 0):
        logger.warning("Platt slope %.4g is not positive: calibration left as identity", a)
        return 1.0, 0.0
    return float(a), float(b)


def fit_head(x_train: np.ndarray, y_train: np.ndarray, x_calib: np.ndarray, y_calib: np.ndarray,
             names: Sequence[str], products: Sequence[tuple[str, str]], compare_gbm: bool = True,
             c_grid: Sequence[float] = C_GRID) -> Head:
    """The logistic head with the C of lowest calib log-loss, Platt-calibrated on calib (module docstring)."""
    try:
        from sklearn.linear_model import LogisticRegression
    except ImportError:
        raise missing_dependency("scikit-learn", "models", "training the reader combiner") from None
    xt = expand(x_train, names, products)
    xc = expand(x_calib, names, products)
    mean = xt.mean(axis=0)
    scale = xt.std(axis=0)
    scale[scale < 1e-9] = 1.0
    zt, zc = (xt - mean) / scale, (xc - mean) / scale
    t0 = time.perf_counter()
    tried = {}
    best = None
    for c in c_grid:
        m = LogisticRegression(C=c, max_iter=2000, random_state=SEED).fit(zt, y_train)
        loss = log_loss(y_calib, m.predict_proba(zc)[:, 1])
        tried[str(c)] = round(loss, 5)
        if best is None or loss < best[0] - 1e-12:
            best = (loss, c, m)
    assert best is not None
    loss, c, m = best
    info: dict = {"model": "logistic", "C": c, "calib_log_loss_by_C": tried, "train_rows": int(len(y_train)),
                  "train_positive": int(np.sum(y_train)), "calib_rows": int(len(y_calib)),
                  "calib_positive": int(np.sum(y_calib))}
    if compare_gbm:
        from sklearn.ensemble import HistGradientBoostingClassifier

        g = HistGradientBoostingClassifier(max_iter=200, learning_rate=0.05, max_leaf_nodes=15, l2_regularization=1.0,
                                           random_state=SEED).fit(x_train, y_train)
        info["gbm_calib_log_loss"] = round(log_loss(y_calib, g.predict_proba(x_calib)[:, 1]), 5)
    head = Head(tuple(names), tuple(tuple(p) for p in products), tuple(map(float, mean)), tuple(map(float, scale)),
                tuple(map(float, m.coef_[0])), float(m.intercept_[0]))
    a, b = fit_platt(head.logit(x_calib), y_calib)
    cal_loss = log_loss(y_calib, _sigmoid(a * head.logit(x_calib) + b))
    info.update({"calib_log_loss": round(loss, 5), "calib_log_loss_after_platt": round(cal_loss, 5),
                 "fit_seconds": round(time.perf_counter() - t0, 2)})
    logger.info("head fitted: C=%s calib log-loss %.4f (%.4f after Platt)", c, loss, cal_loss)
    return Head(head.features, head.products, head.mean, head.scale, head.coef, head.intercept, a, b, info)
