"""Abstention evaluation on labelled question sets.

Datasets (:func:`rag.evaluation.datasets.load_labelled`): NoMIRACL-style JSONL or SQuAD 2.0
JSON, each question with its own passages. Those passages are scored by every signal (the
reranker's calibrated probability, BM25 over the dataset's passages, dense cosine); the
gate is applied and its rates are reported, with the risk-coverage curve. Fitting the gate on
the same scores is :mod:`rag.calibrate` (``rag calibrate``).
"""
from __future__ import annotations

import logging
import math
import time
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Callable, Sequence

import numpy as np

from rag.batch.records import model_ids
from rag.config import RagConfig, digest
from rag.errors import InputError
from rag.evaluation.datasets import LabelledQuestion, load_labelled
from rag.evaluation.metrics import auroc
from rag.evaluation.runs import DatasetSpec, Progress, RunCache, RunResult
from rag.types import Candidate, Chunk, RetrieverHit

logger = logging.getLogger(__name__)


def passage_candidates(q: LabelledQuestion, extra_hits: dict[str, list[RetrieverHit]] | None = None) -> tuple[Candidate, ...]:
    """The question's own passages as candidates (fused score 0: the reranker orders them)."""
    out = []
    for i, ps in enumerate(q.passages):
        text = f"{ps.title}\n\n{ps.text}" if ps.title else ps.text
        ch = Chunk(evidence_id=f"{ps.docid}:1:0", document_id=ps.docid, document_version="1", ordinal=0,
                   text=text, start_char=0, end_char=len(text), title=ps.title)
        hits = tuple((extra_hits or {}).get(ps.docid, ()))
        out.append(Candidate(ch, 0.0, i + 1, hits))
    return tuple(out)


@dataclass(frozen=True)
class RiskPoint:
    threshold: float
    coverage: float  # fraction of questions answered
    precision: float  # answerable among answered
    recall: float  # answered among answerable


def risk_coverage(scores: Sequence[float], labels: Sequence[bool]) -> list[RiskPoint]:
    s = np.asarray(scores, dtype=np.float64)
    y = np.asarray(labels, dtype=bool)
    pts = []
    for t in sorted(set(s.tolist()), reverse=True):
        ans = s >= t
        n = int(ans.sum())
        pts.append(RiskPoint(float(t), n / len(s), float(y[ans].sum() / n) if n else 1.0, float(y[ans].sum() / max(1, y.sum()))))
    return pts


@dataclass(frozen=True)
class GateRates:
    n: int
    auroc: float
    threshold: float
    answered_when_answerable: float
    abstained_when_unanswerable: float
    precision_of_answered: float

    def to_json(self) -> dict:
        return {k: (None if isinstance(v, float) and math.isnan(v) else v) for k, v in self.__dict__.items()}


def gate_rates(top: Sequence[float], answered: Sequence[bool], labels: Sequence[bool], threshold: float) -> GateRates:
    y = np.asarray(labels, dtype=bool)
    a = np.asarray(answered, dtype=bool)
    return GateRates(
        n=len(y), auroc=round(auroc(top, y), 4), threshold=threshold,
        answered_when_answerable=round(float(a[y].mean()) if y.any() else float("nan"), 4),
        abstained_when_unanswerable=round(float((~a[~y]).mean()) if (~y).any() else float("nan"), 4),
        precision_of_answered=round(float(y[a].mean()) if a.any() else float("nan"), 4),
    )


@dataclass(frozen=True)
class ScoredQuestion:
    qid: str
    answerable: bool
    language: str
    candidates: tuple[Candidate, ...]
    rerank: object | None  # RerankResult
    question: str = ""  # the text: the gate reads it (rag.rerank.evidence_fit)


def score_questions(pipeline, items: Sequence[LabelledQuestion],
                    progress: Callable[[str, int, int], None] | None = None) -> list[ScoredQuestion]:
    """Score every question's own passages with BM25, dense cosine and (if enabled) the reranker."""
    from rag.index.bm25 import BM25Index
    from rag.lang import detect_language

    # BM25 statistics over all passages of the evaluated questions (a realistic idf).
    uniq: dict[str, str] = {}
    for q in items:
        for ps in q.passages:
            uniq.setdefault(ps.docid, f"{ps.title}\n\n{ps.text}" if ps.title else ps.text)
    ids = sorted(uniq)
    pos = {d: i for i, d in enumerate(ids)}
    analyzer = pipeline.components.analyzer()
    bm = BM25Index(pipeline.config.bm25)
    bm.set_documents([bm.encode(analyzer(uniq[d]), grow=True) for d in ids])
    emb = pipeline.components.embedder
    pvec = emb.embed_passages([uniq[d] for d in ids])
    qvec = emb.embed_queries([q.question for q in items])
    reranker = pipeline.components.reranker
    out = []
    for i, q in enumerate(items):
        bscores = bm.scores(analyzer(q.question))
        hits = {}
        for ps in q.passages:
            j = pos[ps.docid]
            hits[ps.docid] = [RetrieverHit("bm25", 0, float(bscores[j])),
                              RetrieverHit("dense", 0, float(np.dot(qvec[i], pvec[j])))]
        # in the order retrieval would give them (the dense cosine), so the gate reads the best first
        cands = passage_candidates(q, hits)
        cands = tuple(replace(c, rank=k + 1) for k, c in enumerate(sorted(
            cands, key=lambda c: (-(c.hit("dense").score if c.hit("dense") else -math.inf), c.rank))))
        rr = reranker.rerank(q.question, cands) if reranker is not None else None
        out.append(ScoredQuestion(q.qid, q.answerable, detect_language(q.question), cands, rr, q.question))
        if progress:
            progress("score", i + 1, len(items))
    return out


# --------------------------------------------------------------------------- gate evaluation
SIGNALS = ("probability", "answerability", "bm25", "dense")


def signal_top(sq: ScoredQuestion, signal: str, answerability=None) -> float | None:
    from rag.rerank.gate import signal_values

    if signal in ("probability", "answerability") and (sq.rerank is None or not sq.rerank.applied):
        return None
    if signal == "answerability" and answerability is None:
        return None
    vals = signal_values(signal, sq.candidates, sq.rerank, answerability)
    return vals[0] if vals else None


def signal_aurocs(scored: Sequence[ScoredQuestion], answerability=None, decisions=None,
                  gate_signal: str = "") -> dict[str, float | None]:
    """AUROC of each score signal's top value; with the gate's ``decisions`` (one per question, made
    with the question; ``gate_signal``: its ``gate.signal``) also of the question's reading: ``key_term_coverage``
    (:class:`rag.rerank.evidence_fit.EvidenceFit` ``coverage``) and ``read_<signal>``: the gate's own
    signal, moved below every value when the reading stopped the question
    (:attr:`rag.evaluation.answer_scoring.GateReading.read_score`)."""
    from rag.evaluation.answer_scoring import GateReading

    out: dict[str, float | None] = {}

    def put(name: str, pairs: list[tuple[float, bool]]) -> None:
        if len(pairs) == len(scored) and pairs:
            a = auroc([t for t, _ in pairs], [y for _, y in pairs])
            out[name] = None if math.isnan(a) else round(a, 4)

    for sig in SIGNALS:
        put(sig, [(t, sq.answerable) for sq in scored if (t := signal_top(sq, sig, answerability)) is not None])
    if decisions is not None and all(d.fit is not None for d in decisions):
        put("key_term_coverage", [(d.fit.coverage, sq.answerable) for d, sq in zip(decisions, scored)])
        reads = [GateReading(d.top_score if d.top_score is not None else -math.inf, d.fit.coverage,
                             d.stopped_by_reading) for d in decisions]
        put(f"read_{gate_signal}", [(r.read_score, sq.answerable) for r, sq in zip(reads, scored)])
    return out


def evaluate_abstention(pipeline, scored: Sequence[ScoredQuestion], compare: dict[str, float] | None = None) -> dict:
    """Apply the configured gate to every question; the issue's JSON plus per-signal AUROC.

    ``compare`` maps other signals to thresholds (e.g. fitted by :func:`calibrate` on another
    split): each is applied as a one-number gate and its rates are reported under ``compare``."""
    from collections import Counter

    gate = pipeline.components.gate
    decisions = [gate.decide(sq.candidates, sq.rerank, language=sq.language, question=sq.question or None)
                 for sq in scored]
    labels = [sq.answerable for sq in scored]
    tops = [d.top_score if d.top_score is not None else -math.inf for d in decisions]
    used = sorted({(d.signal, d.threshold) for d in decisions})
    rates = gate_rates(tops, [d.answer for d in decisions], labels, used[0][1] if len(used) == 1 else math.nan)
    out = rates.to_json()
    if len(used) != 1:
        out["threshold"] = {s: t for s, t in used}
    reranker = pipeline.components.reranker
    out.update({
        "signal": used[0][0] if len(used) == 1 else [s for s, _ in used],
        "signals_auroc": signal_aurocs(scored, gate.answerability, decisions, gate.config.signal),
        "reasons": dict(sorted(Counter(d.reason for d in decisions).items())),
        "languages": dict(sorted(Counter(sq.language for sq in scored).items())),
        "reranker": reranker.model_id if reranker is not None else None,
        "reranked_questions": sum(1 for sq in scored if sq.rerank is not None and sq.rerank.applied),
        "embedding_model": pipeline.components.embedder.model_id,
        "config_hash": pipeline.config.hash,
    })
    if compare:
        out["compare"] = {}
        for sig, tau in sorted(compare.items()):
            if sig not in SIGNALS:
                raise InputError(f"unknown signal {sig!r} to compare; use one of {SIGNALS}")
            tops = [signal_top(sq, sig, gate.answerability) for sq in scored]
            if any(t is None for t in tops):
                continue
            out["compare"][sig] = gate_rates(tops, [t >= tau for t in tops], labels, tau).to_json()
    return out


# --------------------------------------------------------------------------- abstention experiments
def _round(x: float | None, nd: int = 6) -> float | None:
    if x is None or (isinstance(x, float) and not math.isfinite(x)):
        return None
    return round(float(x), nd)


def _scoring_key(cfg: RagConfig) -> str:
    d = cfg.model_dump(mode="json")
    return digest({k: d[k] for k in ("bm25", "embedding", "rerank")})


def evaluate_abstention_run(dataset: DatasetSpec, path: Path, cfg: RagConfig, cache: RunCache,
                            progress: Progress | None = None) -> RunResult:
    """An ``abstention`` experiment's run: the configured gate over each labelled question's own passages."""
    items = cache.data.get("labelled")
    if items is None:
        items = cache.data["labelled"] = load_labelled(path, dataset.split or "all", dataset.max_queries)
    p = cache.pipeline(cfg)
    scored = cache.scored.get(_scoring_key(cfg), lambda: score_questions(p, items, progress))
    gate = p.components.gate
    t = time.perf_counter()
    decisions = [gate.decide(sq.candidates, sq.rerank, language=sq.language, question=sq.question or None)
                 for sq in scored]
    gate_ms = (time.perf_counter() - t) * 1e3 / max(1, len(scored))
    ev = evaluate_abstention(p, scored)
    labels = [sq.answerable for sq in scored]
    answered = [dc.answer for dc in decisions]
    n = len(scored)
    metrics: dict[str, float | None] = {
        "n_questions": float(n),
        "abstention.auroc": _round(ev.get("auroc")),
        "abstention.coverage": _round(sum(answered) / n if n else None),
        "abstention.precision_of_answered": _round(ev.get("precision_of_answered")),
        "abstention.answered_when_answerable": _round(ev.get("answered_when_answerable")),
        "abstention.abstained_when_unanswerable": _round(ev.get("abstained_when_unanswerable")),
        "abstention.accuracy": _round(sum(a == y for a, y in zip(answered, labels)) / n if n else None),
        "latency.gate.mean_ms": _round(gate_ms, 4),
    }
    for sig, v in (ev.get("signals_auroc") or {}).items():
        metrics[f"abstention.signals_auroc.{sig}"] = _round(v)
    rows = tuple({"id": sq.qid, "answerable": sq.answerable, "language": sq.language, "decision": dc.to_json()}
                 for sq, dc in zip(scored, decisions))
    tops = [dc.top_score if dc.top_score is not None else -math.inf for dc in decisions]
    signals = sorted({dc.signal for dc in decisions})
    finite = [(t_, y) for t_, y in zip(tops, labels) if math.isfinite(t_)]
    curve = [pt.__dict__ for pt in risk_coverage([t_ for t_, _ in finite], [y for _, y in finite])] if finite else []
    thresholds = sorted({dc.threshold for dc in decisions if math.isfinite(dc.threshold)})
    curves = {"signal": "/".join(signals), "scoring": _scoring_key(cfg), "tops": [_round(t_) for t_ in tops],
              "labels": labels, "risk_coverage": curve, "thresholds": thresholds,
              "operating_point": {"coverage": metrics["abstention.coverage"],
                                  "risk": _round(1 - ev["precision_of_answered"]) if ev.get("precision_of_answered") is not None else None}}
    return RunResult(metrics, rows, curves, model_ids(p))
