"""Experiment reports (markdown + PNG plots) and side-by-side comparison of two runs."""
from __future__ import annotations

import json
import logging
import math
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, Mapping, Sequence

from rag.evaluation.errors import RunDirError, UnknownMetricError
from rag.evaluation.experiments import Experiment, ExperimentResult, RunOutcome, load_run
from rag.evaluation.metrics import metric_direction

logger = logging.getLogger(__name__)

EPS = 1e-12


def _fmt(name: str, v: Any) -> str:
    if v is None or (isinstance(v, float) and not math.isfinite(v)):
        return "–"
    if name.startswith("n_"):
        return str(int(v))
    if name.endswith("_ms"):
        return f"{v:.2f}"
    if abs(v) >= 100:
        return f"{v:.1f}"
    return f"{v:.4f}"


def best_values(rows: Sequence[Mapping[str, Any]], metrics: Sequence[str]) -> dict[str, float]:
    """The best value of each ranked metric over the rows (max or min by its family); metrics
    whose value is the same in every row have no best."""
    out = {}
    for m in metrics:
        d = metric_direction(m)
        vals = [r[m] for r in rows if isinstance(r.get(m), (int, float)) and math.isfinite(r[m])]
        if d == "none" or len(vals) < 2 or max(vals) - min(vals) <= EPS * max(1.0, abs(max(vals))):
            continue  # not ranked, or nothing to choose between
        out[m] = max(vals) if d == "max" else min(vals)
    return out


def markdown_table(labels: Sequence[str], hashes: Sequence[str], rows: Sequence[Mapping[str, Any]],
                   metrics: Sequence[str]) -> str:
    """One row per run; the best value of each ranked metric in bold with a ★ (ties all marked)."""
    best = best_values(rows, metrics)
    arrows = {m: {"max": " ↑", "min": " ↓"}.get(metric_direction(m), "") for m in metrics}
    head = "| run | config | " + " | ".join(f"{m}{arrows[m]}" for m in metrics) + " |"
    sep = "|---|---|" + "---:|" * len(metrics)
    out = [head, sep]
    for label, h, r in zip(labels, hashes, rows):
        cells = []
        for m in metrics:
            v = r.get(m)
            s = _fmt(m, v)
            if m in best and isinstance(v, (int, float)) and abs(v - best[m]) <= EPS * max(1.0, abs(best[m])):
                s = f"**{s}** ★"
            cells.append(s)
        out.append(f"| {label} | `{h}` | " + " | ".join(cells) + " |")
    return "\n".join(out)


@dataclass(frozen=True)
class ReportFiles:
    markdown: Path
    plots: tuple[Path, ...]


def _curves(run_dir: Path) -> dict | None:
    p = run_dir / "curves.json"
    if not p.is_file():
        return None
    return json.loads(p.read_text(encoding="utf-8"))


def write_report(result: ExperimentResult, *, plots: bool | None = None) -> ReportFiles:
    """``REPORT.md`` and PNGs in the experiment folder, over the runs of the current grid."""
    exp: Experiment = result.experiment
    outs: Sequence[RunOutcome] = result.outcomes
    exp_dir = result.exp_dir
    metrics = list(exp.metrics)
    labels = [o.plan.label for o in outs]
    hashes = [o.plan.config_hash for o in outs]
    rows = [dict(o.metrics) for o in outs]
    d = exp.spec.dataset
    envs = []
    for o in outs:
        ep = o.run_dir / "environment.json"
        envs.append(json.loads(ep.read_text(encoding="utf-8")) if ep.is_file() else {})
    commits = sorted({str(e.get("git_commit"))[:10] + ("+dirty" if e.get("git_dirty") else "") for e in envs if e})
    models = sorted({f"{k}={v}" for e in envs for k, v in (e.get("models") or {}).items()})
    lines = [f"# Experiment `{exp.spec.name}`", ""]
    if exp.spec.description:
        lines += [exp.spec.description.strip(), ""]
    limit = f", first {d.max_queries}" if d.max_queries else ""
    lines += [
        f"- dataset: {d.kind} `{exp.dataset_path}`" + (f" split `{d.split}`" if d.split else "") + limit,
        f"- base config: `{exp.base_config_path}`" + (f" with {json.dumps(dict(exp.spec.overrides), ensure_ascii=False)}"
                                                      if exp.spec.overrides else ""),
        f"- runs: {len(outs)} ({sum(o.status == 'computed' for o in outs)} computed now, "
        f"{sum(o.status == 'reused' for o in outs)} reused); folder `{exp_dir}/<config-hash>/`",
        f"- git commit(s): {', '.join(commits) or 'unknown'}; models: {', '.join(models) or 'unknown'}",
        f"- reproduce: `rag experiment {exp.path}`",
        f"- generated {time.strftime('%Y-%m-%d %H:%M:%S %Z')}; ↑/↓ = higher/lower is better, **★** = best of the runs",
        "",
        markdown_table(labels, hashes, rows, metrics),
        "",
    ]
    others = sorted(p.name for p in exp_dir.iterdir() if p.is_dir() and not p.name.startswith(".")
                    and p.name not in set(hashes)) if exp_dir.is_dir() else []
    if others:
        lines += [f"Run folders not in the current grid (not shown): {', '.join(others)}", ""]
    all_metrics = sorted({k for r in rows for k in r} - set(metrics))
    if all_metrics:
        try:
            ranked = [m for m in all_metrics if _known(m)]
        except UnknownMetricError:  # pragma: no cover - every produced metric has a family
            ranked = []
        lines += ["<details><summary>All metrics</summary>", "", markdown_table(labels, hashes, rows, ranked), "",
                  "</details>", ""]
    made: list[Path] = []
    if exp.spec.plots if plots is None else plots:
        made = _plots(exp, outs, exp_dir, metrics)
        if made:
            lines += ["## Plots", ""] + [f"![{p.stem}]({p.name})" for p in made] + [""]
    md = exp_dir / "REPORT.md"
    md.write_text("\n".join(lines), encoding="utf-8")
    return ReportFiles(md, tuple(made))


def _known(m: str) -> bool:
    try:
        metric_direction(m)
        return True
    except UnknownMetricError:
        return False


def _plt():
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        from rag.errors import missing_dependency

        raise missing_dependency("matplotlib", "plots", "experiment report plots") from None
    return plt


def _plots(exp: Experiment, outs: Sequence[RunOutcome], exp_dir: Path, metrics: Sequence[str]) -> list[Path]:
    if not outs:
        return []
    plt = _plt()
    made: list[Path] = []
    labels = [o.plan.label for o in outs]
    rows = [dict(o.metrics) for o in outs]
    height = 0.5 + 0.35 * len(outs)

    # the report's ranked, non-latency metrics: one horizontal bar chart each
    ranked = [m for m in metrics if metric_direction(m) != "none" and not m.startswith("latency.")][:6]
    ranked = [m for m in ranked if any(isinstance(r.get(m), (int, float)) for r in rows)]
    if ranked:
        fig, axes = plt.subplots(1, len(ranked), figsize=(3.6 * len(ranked) + 2.2, height + 0.8), squeeze=False,
                                 sharey=True)
        best = best_values(rows, ranked)
        for ax, m in zip(axes[0], ranked):
            vals = [r.get(m) if isinstance(r.get(m), (int, float)) else float("nan") for r in rows]
            colors = ["tab:orange" if m in best and abs(v - best[m]) <= EPS else "tab:blue" for v in vals]
            ax.barh(range(len(vals)), vals, color=colors)
            ax.set_title(m, fontsize=8)
            finite = [v for v in vals if math.isfinite(v)]
            if finite and metric_direction(m) == "max" and min(finite) > 0.2 and max(finite) <= 1:
                ax.set_xlim(max(0.0, min(finite) - 0.1), min(1.0, max(finite) + 0.05))
            ax.tick_params(labelsize=7)
        axes[0][0].set_yticks(range(len(labels)))
        axes[0][0].set_yticklabels(labels, fontsize=7)
        axes[0][0].invert_yaxis()
        fig.tight_layout()
        made.append(_save(fig, exp_dir / "metrics.png", plt))

    # latency per stage: p50 bars with a p95 marker
    stages = sorted({k.split(".")[1] for r in rows for k in r if k.startswith("latency.") and k.endswith(".p50_ms")},
                    key=lambda s: (s in ("search", "total"), s))
    if stages:
        import numpy as np

        fig, ax = plt.subplots(figsize=(min(14.0, 3.0 + 0.9 * len(stages) + 0.08 * len(stages) * len(outs)),
                                        4.0 + 0.18 * ((len(outs) + 2) // 3)))
        w = 0.8 / len(outs)
        x = np.arange(len(stages))
        for i, (lab, r) in enumerate(zip(labels, rows)):
            p50 = [r.get(f"latency.{s}.p50_ms") or 0.0 for s in stages]
            p95 = [r.get(f"latency.{s}.p95_ms") or 0.0 for s in stages]
            ax.bar(x + i * w, p50, w, label=lab)
            ax.scatter(x + i * w, p95, marker="_", color="black", s=60, zorder=3)
        ax.set_xticks(x + w * (len(outs) - 1) / 2)
        ax.set_xticklabels(stages, fontsize=8)
        ax.set_ylabel("ms (bar p50, tick p95)")
        if max((r.get(f"latency.{s}.p95_ms") or 0) for r in rows for s in stages) > 50 * max(
                1e-9, min((r.get(f"latency.{s}.p50_ms") or 1e9) for r in rows for s in stages)):
            ax.set_yscale("log")
        ax.set_title("latency per stage")
        ax.legend(fontsize=6, ncol=3, loc="upper center", bbox_to_anchor=(0.5, -0.1), frameon=False)
        fig.tight_layout()
        made.append(_save(fig, exp_dir / "latency.png", plt))

    curves = [(o, _curves(o.run_dir)) for o in outs]
    curves = [(o, c) for o, c in curves if c]
    if exp.kind == "abstention" and curves:
        made.extend(_abstention_plots(curves, exp_dir, plt))
    if exp.kind == "questions" and curves:
        made.extend(_question_plots(curves, exp_dir, plt))
    return made


def _save(fig, path: Path, plt) -> Path:
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def _abstention_plots(curves, exp_dir: Path, plt) -> list[Path]:
    import numpy as np

    made = []
    fig, ax = plt.subplots(figsize=(8.8, 4.8))
    drawn: dict[str, Any] = {}
    markers = "osD^vP*Xh<>p"
    for i, (o, c) in enumerate(curves):
        key = f"{c.get('scoring')}/{c.get('signal')}"
        if key not in drawn and c.get("risk_coverage"):
            pts = c["risk_coverage"]
            (line,) = ax.plot([p["coverage"] for p in pts], [1 - p["precision"] for p in pts], lw=1.2,
                              label=f"curve: top {c.get('signal')} score")
            drawn[key] = line.get_color()
        op = c.get("operating_point") or {}
        if op.get("coverage") is not None and op.get("risk") is not None:
            ax.scatter([op["coverage"]], [op["risk"]], s=30, zorder=3, color=drawn.get(key, "black"),
                       marker=markers[i % len(markers)], edgecolors="black", linewidths=0.4, label=o.plan.label)
    ax.set_xlabel("coverage (fraction answered)")
    ax.set_ylabel("risk (unanswerable among answered)")
    ax.set_title("risk-coverage; markers = each run's operating point")
    ax.legend(fontsize=6, loc="upper left", bbox_to_anchor=(1.01, 1.0), frameon=False)
    fig.tight_layout()
    made.append(_save(fig, exp_dir / "risk_coverage.png", plt))

    groups: dict[str, list] = {}
    for o, c in curves:
        groups.setdefault(f"{c.get('scoring')}/{c.get('signal')}", []).append((o, c))
    fig, axes = plt.subplots(1, len(groups), figsize=(5.2 * len(groups), 3.8), squeeze=False)
    for ax, (key, members) in zip(axes[0], groups.items()):
        c = members[0][1]
        t = np.asarray([x if x is not None else np.nan for x in c["tops"]], dtype=float)
        y = np.asarray(c["labels"], dtype=bool)
        ok = np.isfinite(t)
        if ok.any():
            bins = np.histogram_bin_edges(t[ok], bins=30)
            ax.hist(t[ok & y], bins=bins, alpha=0.6, label="answerable")
            ax.hist(t[ok & ~y], bins=bins, alpha=0.6, label="unanswerable")
        for thr in sorted({th for _, cc in members for th in cc.get("thresholds", [])}):
            ax.axvline(thr, color="black", ls="--", lw=0.6)
        ax.set_title(f"top {c.get('signal')} score (dashed: thresholds of the runs)", fontsize=8)
        ax.legend(fontsize=7)
    fig.tight_layout()
    made.append(_save(fig, exp_dir / "scores.png", plt))
    return made


def _question_plots(curves, exp_dir: Path, plt) -> list[Path]:
    made = []
    labels = [o.plan.label for o, _ in curves]
    fig, ax = plt.subplots(figsize=(6.4, 0.8 + 0.35 * len(curves)))
    left = [0.0] * len(curves)
    for status, color in (("answered", "tab:green"), ("insufficient_evidence", "tab:gray"), ("failed", "tab:red")):
        vals = [c.get("status", {}).get(status, 0) for _, c in curves]
        ax.barh(range(len(curves)), vals, left=left, color=color, label=status)
        left = [a + b for a, b in zip(left, vals)]
    ax.set_yticks(range(len(curves)))
    ax.set_yticklabels(labels, fontsize=7)
    ax.invert_yaxis()
    ax.set_xlabel("questions")
    ax.legend(fontsize=7, loc="lower right")
    fig.tight_layout()
    made.append(_save(fig, exp_dir / "status.png", plt))
    for key, title, fname in (("support", "support score of cited claims", "support.png"),
                              ("budget_use", "evidence tokens / evidence budget", "budget_use.png")):
        data = [c.get(key) or [] for _, c in curves]
        if not any(data):
            continue
        fig, ax = plt.subplots(figsize=(6.4, 0.8 + 0.35 * len(curves)))
        try:
            ax.boxplot([d or [float("nan")] for d in data], orientation="horizontal")
        except TypeError:  # matplotlib < 3.10
            ax.boxplot([d or [float("nan")] for d in data], vert=False)
        ax.set_yticks(range(1, len(curves) + 1))
        ax.set_yticklabels(labels, fontsize=7)
        ax.invert_yaxis()
        ax.set_title(title, fontsize=9)
        fig.tight_layout()
        made.append(_save(fig, exp_dir / fname, plt))
    return made


# --------------------------------------------------------------------------- compare
@dataclass(frozen=True)
class MetricDelta:
    name: str
    a: float | None
    b: float | None
    delta: float | None  # b - a
    verdict: Literal["better", "worse", "same", "n/a"]  # of B relative to A


@dataclass(frozen=True)
class ConfigDelta:
    key: str
    a: Any
    b: Any


@dataclass(frozen=True)
class Comparison:
    a: str
    b: str
    a_label: str
    b_label: str
    config: tuple[ConfigDelta, ...]
    metrics: tuple[MetricDelta, ...]

    def to_json(self) -> dict:
        return {"a": self.a, "b": self.b, "a_label": self.a_label, "b_label": self.b_label,
                "config": [c.__dict__ for c in self.config], "metrics": [m.__dict__ for m in self.metrics]}

    def table(self) -> str:
        out = [f"A: {self.a} ({self.a_label})", f"B: {self.b} ({self.b_label})", ""]
        if self.config:
            out.append("config differences:")
            for c in self.config:
                out.append(f"  {c.key}: {json.dumps(c.a, ensure_ascii=False)} -> {json.dumps(c.b, ensure_ascii=False)}")
            out.append("")
        w = max([len(m.name) for m in self.metrics] + [6])
        out.append(f"{'metric':<{w}} {'A':>12} {'B':>12} {'B - A':>12}  ")
        for m in self.metrics:
            delta = ("–" if m.delta is None else f"{m.delta:+.2f}" if m.name.endswith("_ms") or abs(m.delta) >= 100
                     else f"{m.delta:+.4f}")
            mark = {"better": "better", "worse": "worse", "same": "", "n/a": ""}[m.verdict]
            out.append(f"{m.name:<{w}} {_fmt(m.name, m.a):>12} {_fmt(m.name, m.b):>12} {delta:>12}  {mark}")
        return "\n".join(out)


def _flatten(d: Any, prefix: str = "") -> dict[str, Any]:
    if isinstance(d, dict):
        out: dict[str, Any] = {}
        for k, v in d.items():
            out.update(_flatten(v, f"{prefix}{k}."))
        return out
    return {prefix[:-1]: d}


def _config_of(run_dir: Path) -> dict:
    import yaml

    p = run_dir / "config.yaml"
    if not p.is_file():
        return {}
    return yaml.safe_load(p.read_text(encoding="utf-8")) or {}


def _resolve_run(path: str | Path) -> Path:
    p = Path(path)
    if p.exists():
        return p
    if p.parent.is_dir():
        matches = [x for x in p.parent.iterdir() if x.name.startswith(p.name)]
        if len(matches) == 1:
            return matches[0]
    return p


def compare_runs(a: str | Path, b: str | Path) -> Comparison:
    """Metric deltas (B − A; better/worse by each metric's direction) and config differences."""
    pa, pb = _resolve_run(a), _resolve_run(b)
    ra, ma = load_run(pa)
    rb, mb = load_run(pb)
    if ra.get("dataset") != rb.get("dataset"):
        logger.warning("the two runs were made on different datasets: %s vs %s", ra.get("dataset"), rb.get("dataset"))
    ca, cb = _flatten(_config_of(pa)), _flatten(_config_of(pb))
    cfg = tuple(ConfigDelta(k, ca.get(k), cb.get(k)) for k in sorted(set(ca) | set(cb)) if ca.get(k) != cb.get(k))
    rows = []
    for name in sorted(set(ma) | set(mb)):
        va, vb = ma.get(name), mb.get(name)
        num = isinstance(va, (int, float)) and isinstance(vb, (int, float))
        delta = (vb - va) if num else None
        direction = metric_direction(name) if _known(name) else "none"
        if not num or direction == "none":
            verdict = "n/a"
        elif abs(delta) <= EPS * max(1.0, abs(va)):
            verdict = "same"
        else:
            verdict = "better" if (delta > 0) == (direction == "max") else "worse"
        rows.append(MetricDelta(name, va, vb, None if delta is None else round(delta, 6), verdict))
    if not rows:
        raise RunDirError(f"{pa} and {pb} have no metrics to compare")
    return Comparison(str(pa), str(pb), ra.get("label", ""), rb.get("label", ""), cfg, tuple(rows))
