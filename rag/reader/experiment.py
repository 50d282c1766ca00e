"""Train the reader combiner on cached features and measure it on the eval split (``rag reader
train-combiner`` / ``rag reader eval``); the report is a dict and a markdown page."""
from __future__ import annotations

import datetime as _dt
import json
import logging
import math
import platform
import statistics
import time
from pathlib import Path
from typing import Mapping, Sequence

import numpy as np

from rag.reader.answerable import fit_answerable
from rag.reader.combine import INTERACTIONS, Combiner, fit_head
from rag.reader.evaluate import (GATE_SCORERS, SCORERS, answerability_table, gate_table, passage_reliability,
                                 ranking_table, score, sentence_table)
from rag.reader.featstore import Chunk, read_features
from rag.reader.features import PASSAGE_FEATURES, SENTENCE_FEATURES, Signals

logger = logging.getLogger(__name__)

NOT_HELD_OUT = ("msmarco",)  # the cross-encoder was trained on MS MARCO ko/en queries with no holdout


def _passage_xy(c: Chunk) -> tuple[np.ndarray, np.ndarray]:
    keep = c.p_label >= 0
    return c.p_x[keep], c.p_label[keep]


def _counts(c: Chunk) -> dict:
    src, n = np.unique(c.g_source, return_counts=True)
    return {"groups": c.groups, "passages": int(c.p_x.shape[0]), "passages_labelled": int(np.sum(c.p_label >= 0)),
            "passages_answers": int(np.sum(c.p_label == 1)), "sentences": int(c.s_x.shape[0]),
            "sentences_holding": int(np.sum(c.s_label == 1)),
            "groups_by_source": {str(s): int(k) for s, k in zip(src, n)}}


Limits = Mapping[str, Mapping[str, int]]


def train_combiner(features: Path, out: Path, command: Sequence[str] = (), limits: Limits | None = None) -> Combiner:
    """Fit the three heads on the cached train features, pick and calibrate on calib, save
    ``out/combiner.json``; ``limits``: groups per (split, source) read from the cache (default all)."""
    t0 = time.perf_counter()
    lim = limits or {}
    train, calib = read_features(features, "train", lim.get("train")), read_features(features, "calib", lim.get("calib"))
    xt, yt = _passage_xy(train)
    xc, yc = _passage_xy(calib)
    passage = fit_head(xt, yt, xc, yc, PASSAGE_FEATURES, INTERACTIONS["passage"])
    sentence = fit_head(train.s_x, train.s_label, calib.s_x, calib.s_label, SENTENCE_FEATURES,
                        INTERACTIONS["sentence"])
    answerable = fit_answerable(train.p_x, train.p_group, train.g_source, train.g_answerable, calib.p_x,
                                calib.p_group, calib.g_source, calib.g_answerable)
    import sklearn

    meta = {"trained": _dt.date.today().isoformat(), "command": list(command),
            "train": _counts(train), "calib": _counts(calib), "seconds": round(time.perf_counter() - t0, 2),
            "scikit_learn": sklearn.__version__, "python": platform.python_version(),
            "features_params": json.loads((features / "params.json").read_text(encoding="utf-8"))}
    comb = Combiner(passage, sentence, meta, answerable)
    path = comb.save(out)
    logger.info("saved %s in %.1fs", path, meta["seconds"])
    return comb


def evaluate(features: Path, combiner: Combiner, split: str = "eval", limits: Limits | None = None) -> dict:
    """Every table of results/reader.md on ``split``; the gate's thresholds are set on calib."""
    lim = limits or {}
    sc = score(read_features(features, split, lim.get(split)), combiner)
    rel, ece, n = passage_reliability(sc, exclude=NOT_HELD_OUT)
    calib = score(read_features(features, "calib", lim.get("calib")), combiner)
    return {"split": split, "counts": _counts(sc.chunk), "ranking": ranking_table(sc), "sentence": sentence_table(sc),
            "answerability": answerability_table(sc), "reliability": rel, "ece": ece, "reliability_rows": n,
            "gate": gate_table(sc, calib, combiner)}


def cost(combiner: Combiner, features_out: Path, signals: "Signals", candidates: int = 30,
         questions: int = 12) -> dict:
    """Milliseconds per ``candidates`` passages, p50 over ``questions`` KorQuAD eval questions, one run:
    the cross-encoder alone (today's path), and the combination's extra work on top of it when retrieval
    already gives dense and BM25 scores (key terms, facts, vectors, the heads), plus the query embedding,
    and the sentence head over the top passage (sentence cross-encoder and dense)."""
    from rag.reader.featstore import select_groups
    from rag.reader.features import passage_vectors, sentence_vectors

    groups = select_groups(features_out, "eval", "korquad1", questions + 8)
    pool = [e.passage for g in groups for e in g.examples]
    sig = signals
    sig.cross_encoder("warm up", ["warm up"])
    sig.dense("warm up", ["warm up"])
    t_ce, t_extra, t_query, t_sent = [], [], [], []
    rng = np.random.default_rng(43)
    for g in groups[:questions]:
        q = g.examples[0].question
        own = [e.passage for e in g.examples]
        others = [p for p in pool if p not in own]
        texts = own + [others[i] for i in rng.choice(len(others), candidates - len(own), replace=False)]
        t = time.perf_counter()
        ce = sig.cross_encoder(q, texts)
        t_ce.append((time.perf_counter() - t) * 1e3)
        dense = rng.normal(0.8, 0.03, len(texts))  # from retrieval at run time: not timed
        bm25 = rng.normal(10, 3, len(texts))
        t = time.perf_counter()
        sig.dense(q, ["x"])
        t_query.append((time.perf_counter() - t) * 1e3)
        t = time.perf_counter()
        px = passage_vectors(q, texts, ce, dense, bm25)
        p = combiner.passage.probability(px)
        t_extra.append((time.perf_counter() - t) * 1e3)
        top = int(np.argmax(p))
        from rag.text.sentences import split_sentences

        t = time.perf_counter()
        sents = [s.text for s in split_sentences(texts[top])] or [texts[top]]
        sx = sentence_vectors(q, sents, sig.cross_encoder(q, sents), sig.dense(q, sents), px[top])
        combiner.sentence.probability(sx)
        t_sent.append((time.perf_counter() - t) * 1e3)
        sig.forget_vectors()
    med = statistics.median
    return {"candidates": candidates, "questions": questions, "ce_ms_p50": med(t_ce),
            "combination_extra_ms_p50": med(t_extra), "query_embedding_ms_p50": med(t_query),
            "sentence_head_top_passage_ms_p50": med(t_sent)}


def _f(x: float) -> str:
    return "—" if x is None or (isinstance(x, float) and math.isnan(x)) else f"{x:.3f}"


def markdown(report: dict) -> str:
    lines = []
    flag = lambda src: " ⚠" if src in NOT_HELD_OUT else ""  # noqa: E731
    lines += ["### Passage ranking over each question's candidates (MRR@10 / nDCG@10)", "",
              "| source | pair | questions | " + " | ".join(SCORERS) + " |", "|---|---|---|" + "---|" * len(SCORERS)]
    for r in report["ranking"]:
        cells = " | ".join(f"{_f(r[f'{s}_mrr10'])} / {_f(r[f'{s}_ndcg10'])}" for s in SCORERS)
        lines.append(f"| {r['source']}{flag(r['source'])} | {r['pair']} | {r['questions']} | {cells} |")
    lines += ["", "### Sentence accuracy (top sentence of the top passage holds the answer)", "",
              "| source | pair | questions | cross-encoder sentence score | combination |", "|---|---|---|---|---|"]
    for r in report["sentence"]:
        lines.append(f"| {r['source']} | {r['pair']} | {r['questions']} | {_f(r['ce_accuracy'])} | "
                     f"{_f(r['combination_accuracy'])} |")
    lines += ["", "### Answerability AUROC (the best candidate's score per question)", "",
              "| source | questions | answerable | BM25 | dense | cross-encoder | combination (max probability) |",
              "|---|---|---|---|---|---|---|"]
    for r in report["answerability"]:
        lines.append(f"| {r['source']} | {r['questions']} | {r['answerable']} | {_f(r['bm25_auroc'])} | "
                     f"{_f(r['dense_auroc'])} | {_f(r['ce_auroc'])} | {_f(r['combination_auroc'])} |")
    lines += ["", f"### Reliability of the calibrated passage probability ({report['reliability_rows']} labelled "
              f"eval passages, MS MARCO left out; ECE {report['ece']:.3f})", "",
              "| bin | passages | mean probability | observed answers rate |", "|---|---|---|---|"]
    for r in report["reliability"]:
        lines.append(f"| {r['bin']} | {r['n']} | {_f(r['mean_probability'])} | {_f(r['observed'])} |")
    if "gate" in report:
        lines += _gate_markdown(report["gate"])
    if "cost" in report:
        c = report["cost"]
        lines += ["", f"### Cost per {c['candidates']} candidates (ms, p50 of {c['questions']} KorQuAD eval questions, "
                  "one run)", "", "| step | ms p50 |", "|---|---|",
                  f"| cross-encoder alone (today's path, int8, 192 tokens) | {c['ce_ms_p50']:.1f} |",
                  f"| combination's extra features + passage head (dense/BM25 scores from retrieval) | "
                  f"{c['combination_extra_ms_p50']:.1f} |",
                  f"| query embedding, if the dense score is not at hand | {c['query_embedding_ms_p50']:.1f} |",
                  f"| sentence head over the top passage (sentence cross-encoder + dense + head) | "
                  f"{c['sentence_head_top_passage_ms_p50']:.1f} |"]
    return "\n".join(lines) + "\n"


_GATE_NAMES = {"ce_max": "cross-encoder max", "passage_max": "passage head max probability",
               "answerable": "answerable head"}


def _gate_markdown(gate: dict) -> list[str]:
    names = [k for k in GATE_SCORERS if k in gate["thresholds"]]
    lines = ["", "### Question-level answerability (gate sources; thresholds set on calib, pooled)", "",
             "| source | questions | answerable | " + " | ".join(f"{_GATE_NAMES[k]} AUROC" for k in names) + " |",
             "|---|---|---|" + "---|" * len(names)]
    for r in gate["rows"]:
        lines.append(f"| {r['source']} | {r['questions']} | {r['answerable']} | "
                     + " | ".join(_f(r[f"{k}_auroc"]) for k in names) + " |")
    lines += ["", f"Answered when the score reaches the threshold that answers ≥ {gate['recall_target']:.0%} of the "
              "answerable calib questions: answered / recall of answerable / precision of answered.", "",
              "| source | " + " | ".join(f"{_GATE_NAMES[k]} (t = {gate['thresholds'][k]:.4g})" for k in names) + " |",
              "|---|" + "---|" * len(names)]
    calib = " | ".join(f"{gate['calib'][k]['answered']} / {_f(gate['calib'][k]['recall'])} / "
                       f"{_f(gate['calib'][k]['precision'])}" for k in names)
    lines.append(f"| calib (all) | {calib} |")
    for r in gate["rows"]:
        lines.append(f"| {r['source']} | " + " | ".join(
            f"{r[f'{k}_answered']} / {_f(r[f'{k}_recall'])} / {_f(r[f'{k}_precision'])}" for k in names) + " |")
    return lines
