"""The gate fitted on labelled questions (``rag calibrate --dataset``): one threshold per signal group.

Each labelled question's own passages are scored (:func:`rag.evaluation.abstention.score_questions`);
for every config key the gate reads (fallback, language, language pair) :func:`calibrate_threshold`
picks the lowest threshold whose answered questions reach the target precision, and
:func:`write_calibrated_config` writes the config with them. The report (``calibration.json``, the
risk-coverage and histogram plots) compares every signal at the same target.
"""
from __future__ import annotations

import json
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

import numpy as np

from rag._io import write_json
from rag.config import load_config
from rag.errors import InputError
from rag.evaluation.abstention import SIGNALS, RiskPoint, ScoredQuestion, risk_coverage, signal_top
from rag.evaluation.metrics import auroc


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
    gate = pipeline.components.gate
    model = gate.answerability
    groups: dict[tuple[str, str], list[ScoredQuestion]] = {}
    for sq in scored:  # one threshold per config key the gate reads (fallback, language, language pair)
        groups.setdefault(gate.threshold_key(sq.candidates, sq.rerank, language=sq.language), []).append(sq)
    updates: dict[str, float] = {}
    fitted = {}
    for (sig, key), qs in sorted(groups.items()):
        if sig == "none":
            continue
        tops = [t if (t := signal_top(sq, sig, model)) is not None else -math.inf for sq in qs]
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
        tops = [signal_top(sq, sig, model) for sq in scored]
        if any(t is None for t in tops):
            continue
        labels = [sq.answerable for sq in scored]
        tau, point = calibrate_threshold(tops, labels, target_precision)
        compare[sig] = {"auroc": round(auroc(tops, labels), 4), "threshold": round(tau, 6),
                        "reached": point.__dict__ if point else None}
        curves[sig] = (tops, labels)
    summary = {"dataset": dataset, "split": split, "n": len(scored), "target_precision": target_precision,
               "fitted": fitted, "signals": compare, "config_hash": pipeline.config.hash,
               "reranker": pipeline.components.reranker.model_id if pipeline.components.reranker is not None else None,
               "embedding_model": pipeline.components.embedder.model_id}
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
