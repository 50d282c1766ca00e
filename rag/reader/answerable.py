"""The combiner's question-level head: "the question is answerable from its candidates".

The passage head (:mod:`rag.reader.combine`) leans on list-relative features (reciprocal rank, margin,
z-score), which give every candidate list a confident top passage whether or not the question can be
answered, so its maximum probability is a poor answerability signal. This head sees only **raw** features
(:data:`RAW_COLUMNS` of :data:`~rag.reader.features.PASSAGE_FEATURES`; never a rank, margin, z-score or
"best coverage in the list" flag), aggregated per question into :data:`QUESTION_FEATURES`:

- the cross-encoder logit: maximum and mean of the two highest;
- the dense cosine: maximum and mean of the two highest;
- the BM25 score: maximum, divided by the question's key-term count (at least 1);
- key-term coverage: the best over the candidates and that of the best passage;
- the asked fact: whether the question asks a number, and whether the best passage states / lacks the
  asked kind of fact;
- the language pair: question Korean, best passage Korean, the two agree.

(The key-term count itself is left out: in a first fit it carried the largest weight while its train and
calib AUROC within SQuAD 2.0 pointed opposite ways, a source-mix proxy rather than a signal.)

"Best passage" is the candidate of highest cross-encoder logit (the first of equals). The head is a
logistic regression fitted by :func:`rag.reader.combine.fit_head` (C by calib log-loss, Platt on calib) on
the groups of :data:`GATE_SOURCES` — the sources whose unanswerable questions are labelled — of the train
split. :func:`threshold_for_recall` and :func:`answered_precision` give the operating point used in the
evaluation: the threshold that answers a given share of the answerable calib questions, and what it does
on another split.
"""
from __future__ import annotations

import logging
import math
from typing import Sequence

import numpy as np

from rag.reader.features import PASSAGE_FEATURES

logger = logging.getLogger(__name__)

# sources with labelled unanswerable questions: SQuAD 2.0 (no answer), NoMIRACL-ko (non-relevant subset),
# SciFact (NOT_ENOUGH_INFO claims); their answerable questions come with them
GATE_SOURCES = ("squad2", "nomiracl-ko", "scifact")
RAW_COLUMNS = ("ce", "dense", "bm25", "coverage", "numeric_question", "asked_fact", "asked_fact_missing",
               "question_ko", "passage_ko", "same_language", "key_terms")
QUESTION_FEATURES: tuple[str, ...] = (
    "ce_max", "ce_top2_mean", "dense_max", "dense_top2_mean", "bm25_max_per_term", "coverage_max",
    "best_coverage", "numeric_question", "best_asked_fact", "best_asked_fact_missing", "question_ko",
    "best_passage_ko", "best_same_language",
)
# this head's L2 grid: the shared C_GRID's smallest value won on calib in a first fit, so it reaches lower
C_GRID = (0.001, 0.003, 0.01, 0.03, 0.1, 1.0, 10.0)
RECALL_TARGET = 0.7  # the operating point: answer at least this share of the answerable calib questions
_COL = {n: i for i, n in enumerate(PASSAGE_FEATURES)}
_RAW_IDX = np.array([_COL[n] for n in RAW_COLUMNS])


def _top2_mean(v: np.ndarray) -> float:
    top = np.sort(v)[::-1][:2]
    return float(top.mean())


def question_vector(raw: np.ndarray) -> np.ndarray:
    """:data:`QUESTION_FEATURES` of one question from ``raw`` ``[n, len(RAW_COLUMNS)]`` (its candidates'
    raw columns, in :data:`RAW_COLUMNS` order; ``n`` ≥ 1)."""
    r = np.asarray(raw, dtype=np.float64)
    if r.ndim != 2 or r.shape[0] == 0 or r.shape[1] != len(RAW_COLUMNS):
        raise ValueError(f"expected [n >= 1, {len(RAW_COLUMNS)}] raw columns, got {r.shape}")
    c = {n: r[:, i] for i, n in enumerate(RAW_COLUMNS)}
    best = int(np.argmax(c["ce"]))  # the first of equals
    terms = max(float(c["key_terms"][0]), 1.0)
    out = (c["ce"].max(), _top2_mean(c["ce"]), c["dense"].max(), _top2_mean(c["dense"]), c["bm25"].max() / terms,
           c["coverage"].max(), c["coverage"][best], c["numeric_question"][0], c["asked_fact"][best],
           c["asked_fact_missing"][best], c["question_ko"][0], c["passage_ko"][best], c["same_language"][best])
    return np.array(out, dtype=np.float64)


def raw_columns(p_x: np.ndarray) -> np.ndarray:
    """The :data:`RAW_COLUMNS` of passage vectors ``[n, len(PASSAGE_FEATURES)]`` (nothing list-relative)."""
    return np.asarray(p_x, dtype=np.float64)[:, _RAW_IDX]


def question_matrix(p_x: np.ndarray, p_group: np.ndarray, groups: Sequence[int]) -> np.ndarray:
    """``[len(groups), len(QUESTION_FEATURES)]``: one row per group index (each must have candidates)."""
    raw = raw_columns(p_x)
    order = np.argsort(p_group, kind="stable")
    g_sorted = p_group[order]
    rows = []
    for g in groups:
        lo, hi = np.searchsorted(g_sorted, g, "left"), np.searchsorted(g_sorted, g, "right")
        if hi == lo:
            raise ValueError(f"group {g} has no candidates")
        rows.append(question_vector(raw[order[lo:hi]]))
    return np.vstack(rows) if rows else np.zeros((0, len(QUESTION_FEATURES)))


def gate_groups(g_source: np.ndarray, p_group: np.ndarray, sources: Sequence[str] = GATE_SOURCES) -> np.ndarray:
    """Indices of the groups of ``sources`` that have candidates, in order."""
    has = np.zeros(len(g_source), dtype=bool)
    has[np.unique(p_group)] = True
    return np.flatnonzero(np.isin(g_source, list(sources)) & has)


def threshold_for_recall(p: np.ndarray, y: np.ndarray, recall: float = RECALL_TARGET) -> float:
    """The highest threshold ``t`` with ``mean(p[y] >= t) >= recall`` (answer when ``p >= t``)."""
    pos = np.sort(np.asarray(p, dtype=np.float64)[np.asarray(y, dtype=bool)])[::-1]
    if not len(pos):
        raise ValueError("no answerable questions to set a threshold on")
    k = max(1, math.ceil(recall * len(pos) - 1e-9))
    return float(pos[k - 1])


def answered_precision(p: np.ndarray, y: np.ndarray, threshold: float) -> dict:
    """At ``p >= threshold``: questions, answered, recall of the answerable, precision of the answered."""
    p, y = np.asarray(p, dtype=np.float64), np.asarray(y, dtype=bool)
    ans = p >= threshold
    return {"questions": int(len(y)), "answerable": int(y.sum()), "answered": int(ans.sum()),
            "recall": float(ans[y].mean()) if y.any() else math.nan,
            "precision": float(y[ans].mean()) if ans.any() else math.nan}


def fit_answerable(train_px: np.ndarray, train_group: np.ndarray, train_source: np.ndarray, train_y: np.ndarray,
                   calib_px: np.ndarray, calib_group: np.ndarray, calib_source: np.ndarray, calib_y: np.ndarray):
    """The question-level head (train: fit; calib: C, Platt and the :data:`RECALL_TARGET` threshold)."""
    from rag.reader.combine import Head, fit_head

    gt, gc = gate_groups(train_source, train_group), gate_groups(calib_source, calib_group)
    xt, xc = question_matrix(train_px, train_group, gt), question_matrix(calib_px, calib_group, gc)
    yt, yc = train_y[gt].astype(int), calib_y[gc].astype(int)
    head = fit_head(xt, yt, xc, yc, QUESTION_FEATURES, (), c_grid=C_GRID)
    t = threshold_for_recall(head.probability(xc), yc)
    src_t, n_t = np.unique(train_source[gt], return_counts=True)
    info = {**head.info, "sources": list(GATE_SOURCES),
            "train_questions_by_source": {str(s): int(n) for s, n in zip(src_t, n_t)},
            "train_answerable_by_source": {str(s): int(yt[train_source[gt] == s].sum()) for s in src_t},
            "recall_target": RECALL_TARGET, "threshold": t,
            "calib_at_threshold": answered_precision(head.probability(xc), yc, t)}
    logger.info("answerable head: %d train questions, threshold %.4f for recall %.2f on calib", len(yt), t,
                RECALL_TARGET)
    return Head(head.features, head.products, head.mean, head.scale, head.coef, head.intercept, head.platt_a,
                head.platt_b, info)
