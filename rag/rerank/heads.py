"""Stored logistic heads over named features, evaluated with numpy alone (no pickle, no scikit-learn at
inference), and what fits them.

A :class:`Head` is an L2-regularised logistic regression on standardised features plus products of named
pairs, with Platt scaling of its logit; :func:`fit_head` picks the regularisation strength by log-loss on a
calibration split and fits the Platt map there (scikit-learn, imported only to fit). :func:`ranked_block`
turns one score list into the list-relative features (reciprocal rank, margin, z-score) the heads read.

Shared by the reader's combination (:mod:`rag.reader.combine`) and the extractive generator's learned unit
head (:mod:`rag.answer.unit_head`): both sit above this stage.
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

from rag.errors import ModelLoadError, missing_dependency

logger = logging.getLogger(__name__)

SEED = 43
C_GRID = (0.01, 0.1, 1.0, 10.0)


def ranked_block(scores: np.ndarray) -> np.ndarray:
    """``[n, 4]``: value, reciprocal rank (1 for the best; ties by position), margin over the best
    other entry (positive only for a strict best) and z-score within ``scores``."""
    s = np.asarray(scores, dtype=np.float64).reshape(-1)
    n = s.shape[0]
    out = np.zeros((n, 4), dtype=np.float64)
    if n == 0:
        return out
    order = np.lexsort((np.arange(n), -s))
    rank = np.empty(n, dtype=np.float64)
    rank[order] = np.arange(1, n + 1)
    if n == 1:
        margin = np.zeros(1)
    else:
        top2 = s[order[:2]]
        best_other = np.where(np.arange(n) == order[0], top2[1], top2[0])
        margin = s - best_other
    sd = float(s.std())
    z = (s - s.mean()) / sd if sd > 1e-12 else np.zeros(n)
    out[:, 0], out[:, 1], out[:, 2], out[:, 3] = s, 1.0 / rank, margin, z
    return out


def rows_of(x: np.ndarray, features: Sequence[str]) -> np.ndarray:
    """``x`` as a float ``[n, len(features)]`` array, or a ``ValueError`` naming the expected width."""
    x = np.asarray(x, dtype=np.float64)
    if x.ndim != 2 or x.shape[1] != len(features):
        raise ValueError(f"expected [n, {len(features)}] features ({', '.join(features[:3])} …), got {x.shape}")
    return x


def read_artifact(path: Path | str | None, default_dir: Path, filename: str, what: str, hint: str) -> tuple[Path, dict]:
    """``(file, parsed JSON)`` of a stored head: ``path`` (a folder holding ``filename``, or the file; None:
    ``default_dir``); a :class:`ModelLoadError` naming ``what`` and ``hint`` (how to make one) when unreadable."""
    p = Path(path) if path is not None else default_dir
    if p.is_dir():
        p = p / filename
    try:
        return p, json.loads(p.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise ModelLoadError(f"{p}: cannot read {what} ({exc}); {hint}") from None


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
        x = rows_of(x, self.features)
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


@dataclass(frozen=True)
class TreeHead:
    """A stored gradient-boosted tree head (scikit-learn's ``HistGradientBoostingClassifier``, exported):
    logit = baseline + the sum over trees of the leaf each row reaches; probability = sigmoid(platt_a ·
    logit + platt_b). Every tree is a flat node table (feature, threshold, left, right, leaf value; a row
    goes left when its value is <= the threshold), all trees padded to one width so that one vectorised
    walk evaluates them together."""

    features: tuple[str, ...]
    baseline: float
    feature: np.ndarray = field(repr=False)     # [trees, nodes] int; -1 at a leaf
    threshold: np.ndarray = field(repr=False)   # [trees, nodes]
    left: np.ndarray = field(repr=False)        # [trees, nodes] int
    right: np.ndarray = field(repr=False)       # [trees, nodes] int
    value: np.ndarray = field(repr=False)       # [trees, nodes]
    platt_a: float = 1.0
    platt_b: float = 0.0
    info: dict = field(default_factory=dict, compare=False)

    def logit(self, x: np.ndarray) -> np.ndarray:
        x = rows_of(x, self.features)
        trees = self.feature.shape[0]
        node = np.zeros((trees, x.shape[0]), dtype=np.int64)
        rows = np.arange(trees)[:, None]
        for _ in range(self.feature.shape[1]):
            f = self.feature[rows, node]
            inner = f >= 0
            if not inner.any():
                break
            go_left = x[np.arange(x.shape[0])[None, :], np.maximum(f, 0)] <= self.threshold[rows, node]
            node = np.where(inner, np.where(go_left, self.left[rows, node], self.right[rows, node]), node)
        return self.baseline + self.value[rows, node].sum(axis=0)

    def probability(self, x: np.ndarray) -> np.ndarray:
        return _sigmoid(self.platt_a * self.logit(x) + self.platt_b)

    def to_json(self) -> dict:
        return {"model": "trees", "features": list(self.features), "baseline": self.baseline,
                "feature": self.feature.tolist(), "threshold": self.threshold.tolist(), "left": self.left.tolist(),
                "right": self.right.tolist(), "value": self.value.tolist(),
                "calibration": {"method": "platt", "a": self.platt_a, "b": self.platt_b}, "info": self.info}

    @classmethod
    def from_json(cls, d: dict) -> "TreeHead":
        cal = d.get("calibration") or {}
        try:
            arrays = [np.asarray(d[k], dtype=t) for k, t in (("feature", np.int64), ("threshold", np.float64),
                                                              ("left", np.int64), ("right", np.int64),
                                                              ("value", np.float64))]
        except (KeyError, ValueError, TypeError) as exc:
            raise ModelLoadError(f"not a tree head ({exc!r})") from None
        if len({a.shape for a in arrays}) != 1 or arrays[0].ndim != 2:
            raise ModelLoadError(f"tree head tables disagree in shape: {[a.shape for a in arrays]}")
        feature, _, left, right, _ = arrays
        n = feature.shape[1]
        if ((feature < -1) | (feature >= len(d["features"]))).any():
            raise ModelLoadError("tree head: a split on a feature it does not have")
        if any(((a < 0) | (a >= n)).any() for a in (left, right)):
            raise ModelLoadError("tree head: a child index outside its tree's node table")
        return cls(tuple(d["features"]), float(d["baseline"]), *arrays, float(cal.get("a", 1.0)),
                   float(cal.get("b", 0.0)), dict(d.get("info") or {}))


def head_from_json(d: dict) -> "Head | TreeHead":
    """A stored head of either kind (``model: trees`` for :class:`TreeHead`)."""
    return TreeHead.from_json(d) if d.get("model") == "trees" else Head.from_json(d)


def export_trees(model: object, names: Sequence[str]) -> TreeHead:
    """A fitted ``HistGradientBoostingClassifier`` (binary, numeric features, no categorical splits) as a
    :class:`TreeHead` (uncalibrated: Platt 1, 0)."""
    tables = []
    for (pred,) in model._predictors:  # type: ignore[attr-defined]
        nodes = pred.nodes
        leaf = nodes["is_leaf"].astype(bool)
        if nodes["is_categorical"].any():
            raise ValueError("categorical splits cannot be exported")
        tables.append((np.where(leaf, -1, nodes["feature_idx"]).astype(np.int64), nodes["num_threshold"].astype(np.float64),
                       nodes["left"].astype(np.int64), nodes["right"].astype(np.int64), nodes["value"].astype(np.float64)))
    width = max(len(t[0]) for t in tables)

    def pad(a: np.ndarray, fill: float) -> np.ndarray:
        return np.concatenate([a, np.full(width - len(a), fill, dtype=a.dtype)])

    cols = [np.stack([pad(t[i], -1 if i == 0 else 0) for t in tables]) for i in range(5)]
    baseline = float(np.ravel(model._baseline_prediction)[0])  # type: ignore[attr-defined]
    return TreeHead(tuple(names), baseline, *cols)


def fit_tree_head(x_train: np.ndarray, y_train: np.ndarray, x_calib: np.ndarray, y_calib: np.ndarray,
                  names: Sequence[str], grid: Sequence[dict] = ({"max_iter": 200, "max_leaf_nodes": 15},
                                                                {"max_iter": 300, "max_leaf_nodes": 31})) -> TreeHead:
    """The gradient-boosted head of lowest calib log-loss among ``grid`` (learning rate 0.05, L2 1.0, at least
    40 rows a leaf, fixed seed), exported and Platt-calibrated on calib."""
    try:
        from sklearn.ensemble import HistGradientBoostingClassifier
    except ImportError:
        raise missing_dependency("scikit-learn", "models", "training a tree head") from None
    t0 = time.perf_counter()
    tried, best = {}, None
    for params in grid:
        m = HistGradientBoostingClassifier(learning_rate=0.05, l2_regularization=1.0, min_samples_leaf=40,
                                           early_stopping=False, random_state=SEED, **params).fit(x_train, y_train)
        loss = log_loss(y_calib, m.predict_proba(x_calib)[:, 1])
        tried[f"{params['max_iter']}x{params['max_leaf_nodes']}"] = round(loss, 5)
        if best is None or loss < best[0] - 1e-12:
            best = (loss, params, m)
    assert best is not None
    loss, params, m = best
    head = export_trees(m, names)
    a, b = fit_platt(head.logit(x_calib), y_calib)
    info = {"model": "trees", **params, "learning_rate": 0.05, "l2_regularization": 1.0, "min_samples_leaf": 40,
            "calib_log_loss_by_grid": tried, "calib_log_loss": round(loss, 5),
            "calib_log_loss_after_platt": round(log_loss(y_calib, _sigmoid(a * head.logit(x_calib) + b)), 5),
            "train_rows": int(len(y_train)), "train_positive": int(np.sum(y_train)), "calib_rows": int(len(y_calib)),
            "fit_seconds": round(time.perf_counter() - t0, 2)}
    return TreeHead(head.features, head.baseline, head.feature, head.threshold, head.left, head.right, head.value,
                    a, b, info)
