"""Stored heads evaluated with numpy: the gradient-boosted export gives scikit-learn's own predictions."""
from __future__ import annotations

import json

import numpy as np
import pytest

from rag.errors import ModelLoadError
from rag.rerank.heads import TreeHead, export_trees, fit_tree_head, head_from_json


def data(n=600, seed=0):
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(n, 4))
    y = ((x[:, 0] + 0.5 * x[:, 1] ** 2 - x[:, 2] * x[:, 3] + rng.normal(scale=0.5, size=n)) > 0.5).astype(float)
    return x, y


def test_exported_trees_predict_what_scikit_learn_predicts():
    from sklearn.ensemble import HistGradientBoostingClassifier

    x, y = data()
    m = HistGradientBoostingClassifier(max_iter=30, max_leaf_nodes=7, random_state=1).fit(x, y)
    head = export_trees(m, ["a", "b", "c", "d"])
    xt, _ = data(200, seed=1)
    assert np.allclose(head.probability(xt), m.predict_proba(xt)[:, 1], atol=1e-9)


def test_fit_round_trip_and_a_broken_table(tmp_path):
    x, y = data()
    xc, yc = data(300, seed=2)
    head = fit_tree_head(x, y, xc, yc, ["a", "b", "c", "d"], grid=({"max_iter": 20, "max_leaf_nodes": 5},))
    assert head.info["max_iter"] == 20 and head.platt_a > 0
    back = head_from_json(json.loads(json.dumps(head.to_json())))
    assert isinstance(back, TreeHead) and np.allclose(back.probability(xc), head.probability(xc))
    # better than chance on held-out rows
    p = back.probability(xc)
    assert p[yc == 1].mean() > p[yc == 0].mean() + 0.2
    broken = head.to_json() | {"left": head.left[:, :-1].tolist()}
    with pytest.raises(ModelLoadError, match="shape"):
        head_from_json(broken)
    astray = head.to_json()
    astray["right"] = (head.right + head.feature.shape[1]).tolist()
    with pytest.raises(ModelLoadError, match="child index"):
        head_from_json(astray)
    wrong = head.to_json()
    wrong["features"] = ["a"]
    with pytest.raises(ModelLoadError, match="feature"):
        head_from_json(wrong)
