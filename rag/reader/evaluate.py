"""Side-by-side measures of the reader's scorers on cached features (:mod:`rag.reader.featstore`).

- passage ranking over each question's candidate set (gold + given + mined): MRR@10 and nDCG@10 (binary
  gains, ``answers`` = 1) for BM25, dense, the cross-encoder and the combination, per source and language
  pair; groups without an ``answers`` passage (unanswerable, or NoMIRACL's unknown) are left out;
- sentence accuracy: the top sentence of the top passage holds the answer (0 when the top passage does not
  answer), over the groups whose answer sentences are known;
- answerability AUROC (SQuAD 2.0, NoMIRACL-ko): the best passage's score per question against
  ``answerable``;
- reliability of the calibrated passage probability: 10 equal-width bins;
- the question-level gate (:func:`gate_table`): per source, AUROC of the raw cross-encoder maximum, the
  passage head's maximum probability and the ``answerable`` head, and each one's precision of the answered
  questions at the threshold that answers :data:`~rag.reader.answerable.RECALL_TARGET` of the answerable
  calib questions.

Ties are broken by passage id, so every number is deterministic.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from rag.reader.combine import Combiner
from rag.reader.featstore import Chunk
from rag.reader.features import PASSAGE_FEATURES, SENTENCE_FEATURES

SCORERS = ("bm25", "dense", "ce", "combination")


@dataclass(frozen=True)
class Scored:
    """Per-passage and per-sentence scores of every scorer over one chunk of features."""

    chunk: Chunk
    passage: dict[str, np.ndarray]
    probability: np.ndarray  # the combination's calibrated passage probability
    sentence: dict[str, np.ndarray]  # "ce" (sentence cross-encoder logit), "combination"


def score(chunk: Chunk, combiner: Combiner) -> Scored:
    px = chunk.p_x
    col = {n: i for i, n in enumerate(PASSAGE_FEATURES)}
    passage = {"bm25": px[:, col["bm25"]], "dense": px[:, col["dense"]], "ce": px[:, col["ce"]],
               "combination": combiner.passage.logit(px)}
    scol = SENTENCE_FEATURES.index("s_ce")
    sentence = {"ce": chunk.s_x[:, scol], "combination": combiner.sentence.logit(chunk.s_x)}
    return Scored(chunk, passage, combiner.passage.probability(px), sentence)


def _groups(chunk: Chunk) -> list[np.ndarray]:
    order = np.argsort(chunk.p_group, kind="stable")
    bounds = np.flatnonzero(np.diff(chunk.p_group[order])) + 1
    rows = np.split(order, bounds) if len(order) else []
    out: list[np.ndarray] = [np.zeros(0, np.int64)] * chunk.groups
    for r in rows:
        out[int(chunk.p_group[r[0]])] = r
    return out


def _ranked(rows: np.ndarray, s: np.ndarray, ids: np.ndarray) -> np.ndarray:
    """``rows`` best first: score descending, then passage id."""
    return rows[np.lexsort((ids[rows], -s[rows]))]


def _mrr_ndcg(labels: np.ndarray, k: int = 10) -> tuple[float, float]:
    top = labels[:k]
    hits = np.flatnonzero(top > 0)
    mrr = 1.0 / (hits[0] + 1) if len(hits) else 0.0
    dcg = float(np.sum((top > 0) / np.log2(np.arange(2, len(top) + 2))))
    n_pos = int(np.sum(labels > 0))
    ideal = float(np.sum(1.0 / np.log2(np.arange(2, min(n_pos, k) + 2))))
    return mrr, (dcg / ideal if ideal > 0 else 0.0)


def auroc(y: np.ndarray, s: np.ndarray) -> float:
    """Area under the ROC curve (ties count half); nan when a class is empty."""
    y = np.asarray(y, dtype=bool)
    s = np.asarray(s, dtype=np.float64)
    pos, neg = s[y], s[~y]
    if not len(pos) or not len(neg):
        return float("nan")
    allv = np.concatenate([pos, neg])
    order = allv.argsort(kind="mergesort")
    ranks = np.empty(len(allv))
    sorted_v = allv[order]
    i = 0
    while i < len(sorted_v):  # average ranks of ties
        j = i
        while j + 1 < len(sorted_v) and sorted_v[j + 1] == sorted_v[i]:
            j += 1
        ranks[order[i:j + 1]] = (i + j) / 2 + 1
        i = j + 1
    return float((ranks[:len(pos)].sum() - len(pos) * (len(pos) + 1) / 2) / (len(pos) * len(neg)))


def ranking_table(sc: Scored) -> list[dict]:
    """One row per (source, pair) and scorer: questions, MRR@10, nDCG@10."""
    c = sc.chunk
    cells: dict[tuple[str, str], dict[str, list[tuple[float, float]]]] = {}
    for g, rows in enumerate(_groups(c)):
        lab = c.p_label[rows]
        if not np.any(lab == 1):
            continue
        cell = cells.setdefault((str(c.g_source[g]), str(c.g_pair[g])), {s: [] for s in SCORERS})
        for s in SCORERS:
            r = _ranked(rows, sc.passage[s], c.p_id)
            cell[s].append(_mrr_ndcg(np.maximum(c.p_label[r], 0)))
    out = []
    for (src, pair), d in sorted(cells.items()):
        row = {"source": src, "pair": pair, "questions": len(d["ce"])}
        for s in SCORERS:
            v = np.array(d[s])
            row[f"{s}_mrr10"], row[f"{s}_ndcg10"] = float(v[:, 0].mean()), float(v[:, 1].mean())
        out.append(row)
    return out


def sentence_table(sc: Scored) -> list[dict]:
    """Per (source, pair): top sentence of the top passage holds the answer, for ce and the combination."""
    c = sc.chunk
    by_row: dict[int, np.ndarray] = {}
    for i, r in enumerate(c.s_row):
        by_row.setdefault(int(r), []).append(i)  # type: ignore[arg-type]
    cells: dict[tuple[str, str], dict[str, list[float]]] = {}
    for g, rows in enumerate(_groups(c)):
        if not any(int(r) in by_row for r in rows):
            continue  # no known answer sentence in this group
        cell = cells.setdefault((str(c.g_source[g]), str(c.g_pair[g])), {"ce": [], "combination": []})
        for s in ("ce", "combination"):
            top = int(_ranked(rows, sc.passage[s], c.p_id)[0])
            sents = by_row.get(top)
            if c.p_label[top] != 1 or not sents:
                cell[s].append(0.0)
                continue
            idx = np.array(sents)
            best = idx[np.lexsort((c.s_index[idx], -sc.sentence[s][idx]))[0]]
            cell[s].append(float(c.s_label[best] == 1))
    return [{"source": src, "pair": pair, "questions": len(d["ce"]), "ce_accuracy": float(np.mean(d["ce"])),
             "combination_accuracy": float(np.mean(d["combination"]))} for (src, pair), d in sorted(cells.items())]


def answerability_table(sc: Scored, sources: tuple[str, ...] = ("squad2", "nomiracl-ko")) -> list[dict]:
    c = sc.chunk
    groups = _groups(c)
    out = []
    for src in sources:
        gs = [g for g in range(c.groups) if c.g_source[g] == src and len(groups[g])]
        if not gs:
            continue
        y = c.g_answerable[gs]
        row = {"source": src, "questions": len(gs), "answerable": int(y.sum())}
        for s in ("bm25", "dense", "ce"):
            row[f"{s}_auroc"] = auroc(y, np.array([sc.passage[s][groups[g]].max() for g in gs]))
        row["combination_auroc"] = auroc(y, np.array([sc.probability[groups[g]].max() for g in gs]))
        out.append(row)
    return out


def reliability(p: np.ndarray, y: np.ndarray, bins: int = 10) -> tuple[list[dict], float]:
    """Equal-width bins of ``p``: count, mean probability, observed rate; and the expected calibration error."""
    p, y = np.asarray(p, dtype=np.float64), np.asarray(y, dtype=np.float64)
    edges = np.linspace(0, 1, bins + 1)
    which = np.clip(np.digitize(p, edges[1:-1]), 0, bins - 1)
    rows, ece = [], 0.0
    for b in range(bins):
        m = which == b
        n = int(m.sum())
        mean_p = float(p[m].mean()) if n else math.nan
        rate = float(y[m].mean()) if n else math.nan
        if n:
            ece += n / len(p) * abs(mean_p - rate)
        rows.append({"bin": f"{edges[b]:.1f}-{edges[b + 1]:.1f}", "n": n, "mean_probability": mean_p,
                     "observed": rate})
    return rows, float(ece)


def passage_reliability(sc: Scored, exclude: tuple[str, ...] = ("msmarco",)) -> tuple[list[dict], float, int]:
    c = sc.chunk
    keep = (c.p_label >= 0) & ~np.isin(c.g_source[c.p_group], list(exclude))
    rows, ece = reliability(sc.probability[keep], c.p_label[keep])
    return rows, ece, int(keep.sum())


GATE_SCORERS = ("ce_max", "passage_max", "answerable")


def gate_scores(sc: Scored, combiner: Combiner) -> tuple[np.ndarray, np.ndarray, np.ndarray, dict[str, np.ndarray]]:
    """Groups of the gate sources (indices), their source, ``answerable`` and each :data:`GATE_SCORERS` score
    (``answerable`` only when the combiner has that head)."""
    from rag.reader.answerable import gate_groups, question_matrix

    c = sc.chunk
    gs = gate_groups(c.g_source, c.p_group)
    groups = _groups(c)
    out = {"ce_max": np.array([sc.passage["ce"][groups[g]].max() for g in gs]),
           "passage_max": np.array([sc.probability[groups[g]].max() for g in gs])}
    if combiner.answerable is not None:
        out["answerable"] = combiner.answerable.probability(question_matrix(c.p_x, c.p_group, gs))
    return gs, c.g_source[gs], c.g_answerable[gs].astype(bool), out


def gate_table(eval_sc: Scored, calib_sc: Scored, combiner: Combiner) -> dict:
    """Thresholds on calib (pooled over the gate sources), AUROC and precision / recall on ``eval_sc``, per
    source and pooled."""
    from rag.reader.answerable import RECALL_TARGET, answered_precision, threshold_for_recall

    _, _, yc, cal = gate_scores(calib_sc, combiner)
    _, src, y, ev = gate_scores(eval_sc, combiner)
    thresholds = {k: threshold_for_recall(v, yc) for k, v in cal.items()}
    calib_at = {k: answered_precision(cal[k], yc, t) for k, t in thresholds.items()}
    rows = []
    for name in (*sorted(set(src.tolist())), "all"):
        m = np.ones(len(src), bool) if name == "all" else src == name
        row: dict = {"source": name, "questions": int(m.sum()), "answerable": int(y[m].sum())}
        for k, v in ev.items():
            row[f"{k}_auroc"] = auroc(y[m], v[m])
            at = answered_precision(v[m], y[m], thresholds[k])
            row[f"{k}_answered"], row[f"{k}_recall"], row[f"{k}_precision"] = at["answered"], at["recall"], at["precision"]
        rows.append(row)
    return {"recall_target": RECALL_TARGET, "thresholds": thresholds, "calib": calib_at, "rows": rows}
