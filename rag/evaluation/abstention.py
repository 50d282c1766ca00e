"""Abstention evaluation and threshold calibration on labelled question sets.

Datasets (:func:`rag.evaluation.datasets.load_labelled`): NoMIRACL-style JSONL or SQuAD 2.0
JSON, each question with its own passages. Those passages are scored by every signal (the
reranker's calibrated probability, BM25 over the dataset's passages, dense cosine); the
gate is applied and its rates are reported. ``calibrate_threshold`` picks the lowest
threshold whose answered set reaches a target precision.
"""
from __future__ import annotations

import json
import logging
import math
import time
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Callable, Sequence

import numpy as np

from rag._io import write_json
from rag.batch.records import model_ids
from rag.config import RagConfig, digest, load_config
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


def calibrate_threshold(scores: Sequence[float], labels: Sequence[bool], target_precision: float) -> tuple[float, RiskPoint | None]:
    """The lowest threshold (most coverage) whose answered set has precision >= target.

    Returns the threshold and its point; when no threshold reaches the target, the
    threshold above every score (abstain always) and ``None``."""
    if not 0 < target_precision <= 1:
        raise InputError(f"target precision must be in (0, 1], got {target_precision}")
    best = None
    for p in risk_coverage(scores, labels):
        if p.precision >= target_precision:
            best = p
    if best is None:
        return float(np.nextafter(max(scores), math.inf)), None
    return best.threshold, best


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
    analyzer = pipeline.analyzer()
    bm = BM25Index(pipeline.config.bm25)
    bm.set_documents([bm.encode(analyzer(uniq[d]), grow=True) for d in ids])
    emb = pipeline.embedder
    pvec = emb.embed_passages([uniq[d] for d in ids])
    qvec = emb.embed_queries([q.question for q in items])
    reranker = pipeline.reranker
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


def _top(sq: ScoredQuestion, signal: str, answerability=None) -> float | None:
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
        put(sig, [(t, sq.answerable) for sq in scored if (t := _top(sq, sig, answerability)) is not None])
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

    gate = pipeline.gate
    decisions = [gate.decide(sq.candidates, sq.rerank, language=sq.language, question=sq.question or None)
                 for sq in scored]
    labels = [sq.answerable for sq in scored]
    tops = [d.top_score if d.top_score is not None else -math.inf for d in decisions]
    used = sorted({(d.signal, d.threshold) for d in decisions})
    rates = gate_rates(tops, [d.answer for d in decisions], labels, used[0][1] if len(used) == 1 else math.nan)
    out = rates.to_json()
    if len(used) != 1:
        out["threshold"] = {s: t for s, t in used}
    reranker = pipeline.reranker
    out.update({
        "signal": used[0][0] if len(used) == 1 else [s for s, _ in used],
        "signals_auroc": signal_aurocs(scored, gate.answerability, decisions, gate.config.signal),
        "reasons": dict(sorted(Counter(d.reason for d in decisions).items())),
        "languages": dict(sorted(Counter(sq.language for sq in scored).items())),
        "reranker": reranker.model_id if reranker is not None else None,
        "reranked_questions": sum(1 for sq in scored if sq.rerank is not None and sq.rerank.applied),
        "embedding_model": pipeline.embedder.model_id,
        "config_hash": pipeline.config.hash,
    })
    if compare:
        out["compare"] = {}
        for sig, tau in sorted(compare.items()):
            if sig not in SIGNALS:
                raise InputError(f"unknown signal {sig!r} to compare; use one of {SIGNALS}")
            tops = [_top(sq, sig, gate.answerability) for sq in scored]
            if any(t is None for t in tops):
                continue
            out["compare"][sig] = gate_rates(tops, [t >= tau for t in tops], labels, tau).to_json()
    return out


def thresholds_from_report(path: str | Path) -> dict[str, float]:
    """Per-signal thresholds from a ``calibration.json`` written by :func:`calibrate`."""
    try:
        d = json.loads(Path(path).read_text(encoding="utf-8"))
        return {sig: float(v["threshold"]) for sig, v in d["signals"].items()}
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise InputError(f"{path}: not a calibration report written by `rag calibrate` ({exc})") from None


@dataclass(frozen=True)
class CalibrationReport:
    config_updates: dict[str, float]
    summary: dict


def calibrate(pipeline, scored: Sequence[ScoredQuestion], target_precision: float, report_dir: Path, *,
              dataset: str = "", split: str = "all") -> CalibrationReport:
    """Fit the threshold the gate uses (per signal group) for ``target_precision``; save JSON + PNGs."""
    if not scored:
        raise InputError("no questions to calibrate on")
    gate = pipeline.gate
    model = gate.answerability
    groups: dict[tuple[str, str], list[ScoredQuestion]] = {}
    for sq in scored:  # one threshold per config key the gate reads (fallback, language, language pair)
        groups.setdefault(gate.threshold_key(sq.candidates, sq.rerank, language=sq.language), []).append(sq)
    updates: dict[str, float] = {}
    fitted = {}
    for (sig, key), qs in sorted(groups.items()):
        if sig == "none":
            continue
        tops = [t if (t := _top(sq, sig, model)) is not None else -math.inf for sq in qs]
        labels = [sq.answerable for sq in qs]
        tau, point = calibrate_threshold(tops, labels, target_precision)
        updates[key] = round(tau, 6)
        fitted[sig if key in ("gate.threshold", "gate.fallback_threshold") else f"{sig}:{key.rsplit('.', 1)[1]}"] = {
            "config_key": key, "threshold": round(tau, 6), "n": len(qs),
                       "reached": point.__dict__ if point else None, "auroc": round(auroc(tops, labels), 4)}
    # Every available signal, for comparison (each with its own threshold at the same target).
    compare = {}
    curves = {}
    for sig in SIGNALS:
        tops = [_top(sq, sig, model) for sq in scored]
        if any(t is None for t in tops):
            continue
        labels = [sq.answerable for sq in scored]
        tau, point = calibrate_threshold(tops, labels, target_precision)
        compare[sig] = {"auroc": round(auroc(tops, labels), 4), "threshold": round(tau, 6),
                        "reached": point.__dict__ if point else None}
        curves[sig] = (tops, labels)
    summary = {"dataset": dataset, "split": split, "n": len(scored), "target_precision": target_precision,
               "fitted": fitted, "signals": compare, "config_hash": pipeline.config.hash,
               "reranker": pipeline.reranker.model_id if pipeline.reranker is not None else None,
               "embedding_model": pipeline.embedder.model_id}
    report_dir.mkdir(parents=True, exist_ok=True)
    full = dict(summary, curves={s: [p.__dict__ for p in risk_coverage(*curves[s])] for s in curves})
    write_json(report_dir / "calibration.json", full, atomic=False)
    _plots(curves, fitted, report_dir, target_precision)
    return CalibrationReport(updates, summary)


def _plots(curves: dict, fitted: dict, report_dir: Path, target: float) -> None:
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        from rag.errors import missing_dependency

        raise missing_dependency("matplotlib", "plots", "rag calibrate's PNG plots") from None
    fig, ax = plt.subplots(figsize=(6, 4.5))
    for sig, (tops, labels) in curves.items():
        pts = risk_coverage(tops, labels)
        ax.plot([p.coverage for p in pts], [1 - p.precision for p in pts], label=f"{sig} (AUROC {auroc(tops, labels):.3f})")
    ax.axhline(1 - target, color="grey", ls="--", lw=0.8, label=f"target risk {1 - target:.2f}")
    ax.set_xlabel("coverage (fraction answered)")
    ax.set_ylabel("risk (unanswerable among answered)")
    ax.set_title("risk-coverage")
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(report_dir / "risk_coverage.png", dpi=110)
    plt.close(fig)
    fig, axes = plt.subplots(1, len(curves), figsize=(4.2 * len(curves), 3.6), squeeze=False)
    for ax, (sig, (tops, labels)) in zip(axes[0], curves.items()):
        t = np.asarray(tops, dtype=float)
        y = np.asarray(labels, dtype=bool)
        bins = np.histogram_bin_edges(t, bins=30)
        ax.hist(t[y], bins=bins, alpha=0.6, label="answerable")
        ax.hist(t[~y], bins=bins, alpha=0.6, label="unanswerable")
        if sig in fitted:
            ax.axvline(fitted[sig]["threshold"], color="black", ls="--", lw=0.8, label="threshold")
        ax.set_title(sig)
        ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(report_dir / "histograms.png", dpi=110)
    plt.close(fig)


def write_calibrated_config(src: Path, out: Path, updates: dict[str, float]) -> None:
    """Copy the YAML config with the fitted thresholds set (paths stay valid: same folder or absolute)."""
    import yaml

    data = yaml.safe_load(src.read_text(encoding="utf-8")) or {}
    for dotted, value in updates.items():
        node = data
        *parents, leaf = dotted.split(".")
        for part in parents:
            node = node.setdefault(part, {})
        node[leaf] = value
    if out.resolve().parent != src.resolve().parent:
        raise InputError(f"write the calibrated config next to {src} (relative paths in it are resolved from there)")
    header = f"# Calibrated by `rag calibrate` from {src.name}: {', '.join(f'{k}={v}' for k, v in updates.items())}\n"
    tmp = out.with_suffix(".tmp")
    tmp.write_text(header + yaml.safe_dump(data, sort_keys=False, allow_unicode=True), encoding="utf-8")
    load_config(tmp)  # never write a config that does not load
    tmp.replace(out)


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
    gate = p.gate
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
