"""Abstention evaluation and threshold calibration on labelled question sets.

Datasets: NoMIRACL-style JSONL (``question``, ``passages`` of ``docid``/``title``/``text``,
``answerable``) or SQuAD 2.0 JSON (each question with its own paragraph; ``is_impossible``
marks unanswerable ones). Each question's own passages are scored by every signal (the
reranker's calibrated probability, BM25 over the dataset's passages, dense cosine); the
gate is applied and its rates are reported. ``calibrate_threshold`` picks the lowest
threshold whose answered set reaches a target precision.
"""
from __future__ import annotations

import json
import logging
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Sequence

import numpy as np

from rag._io import read_jsonl
from rag.errors import DatasetError, InputError
from rag.rerank.train import in_holdout
from rag.types import Candidate, Chunk, RetrieverHit

logger = logging.getLogger(__name__)

SPLITS = ("all", "calib", "eval")  # calib/eval: a fixed 50/50 split of the questions by hash


@dataclass(frozen=True)
class Passage:
    docid: str
    title: str
    text: str


@dataclass(frozen=True)
class LabelledQuestion:
    qid: str
    question: str
    passages: tuple[Passage, ...]
    answerable: bool


def _select(items: list[LabelledQuestion], split: str, name: str, max_questions: int | None) -> list[LabelledQuestion]:
    if split not in SPLITS:
        raise InputError(f"split must be one of {SPLITS}, got {split!r}")
    if split != "all":
        items = [q for q in items if in_holdout(name, q.qid, 50) == (split == "eval")]
    items.sort(key=lambda q: q.qid)
    return items[:max_questions] if max_questions else items


def load_labelled(path: str | Path, split: str = "all", max_questions: int | None = None) -> list[LabelledQuestion]:
    p = Path(path)
    if not p.is_file():
        raise DatasetError(f"dataset file not found: {p}")
    items: list[LabelledQuestion] = []
    if p.suffix == ".json":
        try:
            data = json.loads(p.read_text(encoding="utf-8"))["data"]
        except (ValueError, KeyError, TypeError) as exc:
            raise DatasetError(f"{p}: not SQuAD 2.0 JSON (expected {{'data': [...]}}): {exc}") from None
        for art in data:
            for pi, para in enumerate(art.get("paragraphs", [])):
                passage = Passage(f"{art.get('title', '')}#{pi}", str(art.get("title", "")).replace("_", " "), para["context"])
                for qa in para.get("qas", []):
                    if "is_impossible" not in qa:
                        raise DatasetError(f"{p}: question {qa.get('id')} has no 'is_impossible' (SQuAD 1.1 is not labelled)")
                    items.append(LabelledQuestion(str(qa["id"]), qa["question"], (passage,), not qa["is_impossible"]))
    else:
        try:
            rows = list(read_jsonl(p, DatasetError))
        except DatasetError as exc:
            raise DatasetError(f"{exc}; expected question, passages[docid,title,text], answerable") from None
        for lineno, o in rows:
            try:
                passages = tuple(Passage(str(x["docid"]), str(x.get("title") or ""), str(x.get("text") or ""))
                                 for x in o["passages"])
                ans = o["answerable"]
                if not isinstance(ans, bool):
                    raise TypeError(f"'answerable' must be true/false, got {ans!r}")
                items.append(LabelledQuestion(str(o.get("query_id") or o.get("id") or lineno), str(o["question"]),
                                              passages, ans))
            except (ValueError, KeyError, TypeError) as exc:
                raise DatasetError(f"{p}:{lineno}: expected question, passages[docid,title,text], answerable ({exc})") from None
    if not items:
        raise DatasetError(f"{p}: no labelled questions")
    return _select(items, split, p.name, max_questions)


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


def auroc(scores: Sequence[float], labels: Sequence[bool]) -> float:
    """Probability that a random positive outscores a random negative (ties count half)."""
    s = np.asarray(scores, dtype=np.float64)
    y = np.asarray(labels, dtype=bool)
    if y.all() or (~y).all():
        return float("nan")
    order = np.argsort(s, kind="mergesort")
    ranks = np.empty(len(s))
    sorted_s = s[order]
    i = 0
    while i < len(s):
        j = i
        while j + 1 < len(s) and sorted_s[j + 1] == sorted_s[i]:
            j += 1
        ranks[order[i:j + 1]] = (i + j) / 2 + 1
        i = j + 1
    n_pos, n_neg = y.sum(), (~y).sum()
    return float((ranks[y].sum() - n_pos * (n_pos + 1) / 2) / (n_pos * n_neg))


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


def score_questions(pipeline, items: Sequence[LabelledQuestion],
                    progress: Callable[[str, int, int], None] | None = None) -> list[ScoredQuestion]:
    """Score every question's own passages with BM25, dense cosine and (if enabled) the reranker."""
    from rag.index.bm25 import BM25Index
    from rag.text.lang import detect_language

    # BM25 statistics over all passages of the evaluated questions (a realistic idf).
    uniq: dict[str, str] = {}
    for q in items:
        for ps in q.passages:
            uniq.setdefault(ps.docid, f"{ps.title}\n\n{ps.text}" if ps.title else ps.text)
    ids = sorted(uniq)
    pos = {d: i for i, d in enumerate(ids)}
    analyzer = pipeline.analyzer()
    bm = BM25Index(pipeline.config.bm25.backend, pipeline.config.bm25.k1, pipeline.config.bm25.b)
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
        cands = passage_candidates(q, hits)
        rr = reranker.rerank(q.question, cands) if reranker is not None else None
        out.append(ScoredQuestion(q.qid, q.answerable, detect_language(q.question), cands, rr))
        if progress:
            progress("score", i + 1, len(items))
    return out


# --------------------------------------------------------------------------- gate evaluation
SIGNALS = ("probability", "bm25", "dense")


def _top(sq: ScoredQuestion, signal: str) -> float | None:
    from rag.rerank.gate import signal_values

    if signal == "probability" and (sq.rerank is None or not sq.rerank.applied):
        return None
    vals = signal_values(signal, sq.candidates, sq.rerank)
    return vals[0] if vals else None


def signal_aurocs(scored: Sequence[ScoredQuestion]) -> dict[str, float | None]:
    out: dict[str, float | None] = {}
    for sig in SIGNALS:
        pairs = [(t, sq.answerable) for sq in scored if (t := _top(sq, sig)) is not None]
        if len(pairs) == len(scored) and pairs:
            a = auroc([t for t, _ in pairs], [y for _, y in pairs])
            out[sig] = None if math.isnan(a) else round(a, 4)
    return out


def evaluate_abstention(pipeline, scored: Sequence[ScoredQuestion], compare: dict[str, float] | None = None) -> dict:
    """Apply the configured gate to every question; the issue's JSON plus per-signal AUROC.

    ``compare`` maps other signals to thresholds (e.g. fitted by :func:`calibrate` on another
    split): each is applied as a one-number gate and its rates are reported under ``compare``."""
    from collections import Counter

    gate = pipeline.gate
    decisions = [gate.decide(sq.candidates, sq.rerank) for sq in scored]
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
        "signals_auroc": signal_aurocs(scored),
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
            tops = [_top(sq, sig) for sq in scored]
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
    from rag.rerank.gate import active_signal

    gate = pipeline.config.gate
    groups: dict[tuple[str, str], list[ScoredQuestion]] = {}
    for sq in scored:
        groups.setdefault(active_signal(gate, sq.rerank), []).append(sq)
    updates: dict[str, float] = {}
    fitted = {}
    for (sig, key), qs in sorted(groups.items()):
        if sig == "none":
            continue
        tops = [t if (t := _top(sq, sig)) is not None else -math.inf for sq in qs]
        labels = [sq.answerable for sq in qs]
        tau, point = calibrate_threshold(tops, labels, target_precision)
        updates[key] = round(tau, 6)
        fitted[sig] = {"config_key": key, "threshold": round(tau, 6), "n": len(qs),
                       "reached": point.__dict__ if point else None, "auroc": round(auroc(tops, labels), 4)}
    # Every available signal, for comparison (each with its own threshold at the same target).
    compare = {}
    curves = {}
    for sig in SIGNALS:
        tops = [_top(sq, sig) for sq in scored]
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
    (report_dir / "calibration.json").write_text(json.dumps(full, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
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

    from rag.config import load_config

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
