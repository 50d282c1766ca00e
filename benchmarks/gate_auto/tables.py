"""Helpers for benchmarks/gate_auto/run.sh: the kolaw-dev label fit and the result tables.

    python benchmarks/gate_auto/tables.py strip CALIBRATION.json OUT.json
    python benchmarks/gate_auto/tables.py fit-answers ANSWERS.json QUESTIONS.jsonl CONFIG.yaml OUT.yaml [--target-precision 0.9]
    python benchmarks/gate_auto/tables.py summary RESULTS_DIR

``strip``: a `rag calibrate` report without its risk-coverage curves (the curves stay in the work folder).

``fit-answers``: kolaw-dev has no per-question passages, so `rag calibrate --dataset` cannot read it. The
label-fitted threshold is fitted instead on the gate scores a `rag eval-answers --json` run recorded per
question (``rows[].gate``: the top score, and whether reading the question stopped it, which counts as
below every score), with :func:`rag.evaluation.abstention.calibrate_threshold` at the target precision,
on the Korean questions of the calib half (the 50/50 hash split `rag calibrate --split calib` uses,
named after questions.jsonl). Only ``gate.threshold`` is fitted: the English questions read
``gate.language_thresholds.en-ko`` and there is no unanswerable English question to fit it on.
The config is written with :func:`rag.evaluation.abstention.write_calibrated_config`.

``configured-fit``: the ``--set`` overrides that apply the thresholds --auto fitted for the config's own
signal, when --auto chose another signal (nothing otherwise).

``summary``: markdown tables of every JSON run.sh wrote under RESULTS_DIR.
"""
from __future__ import annotations

import argparse
import json
import math
import re
import sys
from pathlib import Path

SETS = ("nomiracl-ko", "squad2")
VARIANTS = (("shipped", "shipped (configs/default.yaml)"), ("auto", "**--auto (no labels)**"),
            ("auto-configured", "--auto's fit of the configured signal (not chosen)"),
            ("labels", "label-fitted (calib half, p 0.9)"))


def _load(p: Path) -> dict | None:
    return json.loads(p.read_text(encoding="utf-8")) if p.is_file() else None


def _f(v, nd: int = 3) -> str:
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return "-"
    return f"{v:.{nd}f}" if isinstance(v, float) else str(v)


def reachable(curve: list[dict], n: int, n_pos: int, min_abstained: float = 0.85) -> dict | None:
    """On a risk-coverage curve: the threshold with the most answered-of-answerable whose abstained-on-
    unanswerable is still >= ``min_abstained`` (an in-sample check of whether the issue's targets can be met
    by any one threshold of that signal)."""
    best = None
    for p in curve:
        answered = round(p["coverage"] * n)
        tp = round(p["recall"] * n_pos)
        abst = 1 - (answered - tp) / max(1, n - n_pos)
        if abst >= min_abstained and (best is None or p["recall"] > best["answered_when_answerable"]):
            best = {"threshold": round(p["threshold"], 6), "answered_when_answerable": round(p["recall"], 4),
                    "abstained_when_unanswerable": round(abst, 4), "precision_of_answered": round(p["precision"], 4)}
    return best


def strip(src: Path, out: Path) -> None:
    d = json.loads(src.read_text(encoding="utf-8"))
    curves = d.pop("curves", None) or {}
    fitted = next(iter(d.get("fitted", {}).values()), None)
    if fitted and fitted.get("reached"):
        r = fitted["reached"]  # recall / coverage * n gives the answerable count
        n = d["n"]
        n_pos = round(r["recall"] and (r["coverage"] * n * r["precision"]) / r["recall"])
        d["targets_reachable_in_sample"] = {
            sig: reachable(c, n, n_pos) for sig, c in sorted(curves.items())}
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(d, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")


def _half(qid: str, name: str = "questions.jsonl") -> str:
    from rag.rerank.train import in_holdout

    return "eval" if in_holdout(name, qid, 50) else "calib"


def _read_score(row: dict) -> float:
    g = row.get("gate") or {}
    s = g.get("score")
    return -math.inf if s is None or g.get("stopped_by_reading") else float(s)


def fit_answers(answers: Path, questions: Path, config: Path, out: Path, target: float) -> dict:
    from rag.evaluation.abstention import calibrate_threshold, write_calibrated_config
    from rag.evaluation.metrics import auroc
    from rag.lang import detect_language

    text = {}
    with questions.open(encoding="utf-8") as f:
        for line in f:
            if line.strip():
                o = json.loads(line)
                text[str(o["id"])] = o["question"]
    rows = [r for r in json.loads(answers.read_text(encoding="utf-8"))["rows"]
            if _half(r["id"], questions.name) == "calib" and detect_language(text[r["id"]]) == "ko"]
    scores = [_read_score(r) for r in rows]
    labels = [bool(r["answerable"]) for r in rows]
    finite = [s for s in scores if math.isfinite(s)]
    lo = min(finite) - 1 if finite else 0.0
    tau, point = calibrate_threshold([s if math.isfinite(s) else lo for s in scores], labels, target)
    fit = {"config_key": "gate.threshold", "threshold": round(float(tau), 6), "n": len(rows),
           "n_answerable": sum(labels), "n_unanswerable": len(labels) - sum(labels), "target_precision": target,
           "auroc_calib": round(auroc(scores, labels), 4), "reached": point.__dict__ if point else None,
           "fitted_from": str(answers), "split": "calib (Korean questions)"}
    write_calibrated_config(config, out, {"gate.threshold": fit["threshold"]})
    return fit


def configured_fit(auto_report: Path, config: Path) -> list[str]:
    """``--set`` overrides with the thresholds --auto fitted for the config's own signal, when it chose another
    one (so the signal choice and the threshold fit can be scored apart); none when it kept the signal."""
    import yaml

    d = json.loads(auto_report.read_text(encoding="utf-8"))
    configured = (yaml.safe_load(config.read_text(encoding="utf-8")).get("gate") or {}).get("signal", "probability")
    if d["signal"] == configured:
        return []
    return [f"--set={g['key']}={g['threshold']}" for g in d["groups"].get(configured, []) if g["threshold"] is not None]


def _answer_rates(rows: list[dict]) -> dict:
    ans = [r for r in rows if r["answerable"]]
    una = [r for r in rows if not r["answerable"]]
    answered = [r for r in rows if r["status"] != "insufficient_evidence"]
    share = lambda a, b: a / b if b else None  # noqa: E731
    return {"n": len(rows), "n_answerable": len(ans), "n_unanswerable": len(una),
            "abstained_when_unanswerable": share(sum(r["status"] == "insufficient_evidence" for r in una), len(una)),
            "answered_when_answerable": share(sum(r["status"] != "insufficient_evidence" for r in ans), len(ans)),
            "precision_of_answered": share(sum(r["answerable"] for r in answered), len(answered)),
            "correct_among_answered": share(sum(bool(r.get("correct")) for r in answered if r["answerable"]),
                                            len(answered)),
            "accuracy_answerable": share(sum(bool(r.get("correct")) for r in ans), len(ans))}


def _gate_auroc(rows: list[dict]) -> float | None:
    from rag.evaluation.metrics import auroc

    a = auroc([_read_score(r) for r in rows], [bool(r["answerable"]) for r in rows])
    return None if math.isnan(a) else round(a, 4)


def _abstention_table(res: Path, name: str) -> list[str]:
    out = [f"### {name}", "",
           "| thresholds | signal | threshold | n | abstained on unanswerable | answered of answerable | "
           "precision of answered | AUROC (gate signal) | AUROC dense / bm25 / read_dense |",
           "|---|---|---|---|---|---|---|---|---|"]
    for key, label in VARIANTS:
        d = _load(res / name / f"eval-{key}.json")
        if d is None:
            if key != "auto-configured":
                out.append(f"| {label} | not run | | | | | | | |")
            continue
        s = d.get("signals_auroc") or {}
        thr = d["threshold"]
        thr = ", ".join(f"{k} {_f(v, 4)}" for k, v in thr.items()) if isinstance(thr, dict) else _f(thr, 4)
        out.append(f"| {label} | {d['signal']} | {thr} | {d['n']} | {_f(d['abstained_when_unanswerable'])} | "
                   f"{_f(d['answered_when_answerable'])} | {_f(d['precision_of_answered'])} | {_f(d['auroc'])} | "
                   f"{_f(s.get('dense'))} / {_f(s.get('bm25'))} / {_f(s.get('read_dense'))} |")
    cal = _load(res / name / "calibrate-labels.json") or {}
    reach = cal.get("targets_reachable_in_sample") or {}
    if reach:
        out += ["", f"Calib half, in sample ({cal['n']} questions): the most answered of answerable any one threshold "
                "gives while abstaining on >= 0.85 of unanswerable: " + "; ".join(
                    f"{sig} {_f(r['answered_when_answerable'])} (threshold {r['threshold']}, abstained "
                    f"{_f(r['abstained_when_unanswerable'])}, precision {_f(r['precision_of_answered'])})"
                    for sig, r in reach.items() if r) + "."]
    return out


def _auto_row(name: str) -> str:
    d = _load(Path(f"results/calibrate-auto-{name}/auto_calibration.json"))
    if d is None:
        return f"| {name} | not run | | | | |"
    worst = {s: min([g["auroc"] for g in gs if g["auroc"] is not None] or [float("nan")])
             for s, gs in d["groups"].items()}
    held = {g["key"]: g.get("standard_errors_held") for g in d["groups"].get(d["signal"], [])}
    fitted = ", ".join(f"{k.rsplit('.', 1)[-1]} {v}" + (f" ({held[k]} SE)" if held.get(k) is not None else "")
                       for k, v in d["config_updates"].items() if k.startswith("gate.") and isinstance(v, float))
    n_un = sum(1 for p in d["probes"] if not p["answerable"])
    return (f"| {name} | {d['chunks']} | {d['answerable_found']} / {d['answerable_not_found']}, {n_un} | {d['signal']} | "
            f"{' / '.join(_f(worst.get(s)) for s in ('dense', 'bm25', 'probability'))} | {fitted or 'none'} |")


def _kolaw_table(res: Path) -> list[str]:
    out = ["### kolaw-dev (rag eval-answers)", "",
           "| thresholds | questions | threshold (ko) | abstained on unanswerable | answered of answerable | "
           "precision of answered | correct among answered | accuracy (answerable) | AUROC (gate read score) |",
           "|---|---|---|---|---|---|---|---|---|"]
    fit = _load(res / "kolaw-dev" / "label-fit.json")
    for key, label in VARIANTS:
        d = _load(res / "kolaw-dev" / f"answers-{key}.json")
        if d is None and key == "auto-configured":
            continue
        if d is None:
            out.append(f"| {label} | not run | | | | | | | |")
            continue
        thr = _threshold_of(res / "kolaw-dev" / f"kolaw-dev.{key}.yaml")
        halves = [("eval half", [r for r in d["rows"] if _half(r["id"]) == "eval"])]
        if key != "labels":
            halves.insert(0, ("all 60", d["rows"]))
        for part, rows in halves:
            m = _answer_rates(rows)
            out.append(f"| {label} | {part} ({m['n_answerable']}+{m['n_unanswerable']}) | {thr} | "
                       f"{_f(m['abstained_when_unanswerable'])} | {_f(m['answered_when_answerable'])} | "
                       f"{_f(m['precision_of_answered'])} | {_f(m['correct_among_answered'])} | "
                       f"{_f(m['accuracy_answerable'])} | {_f(_gate_auroc(rows))} |")
    fb = _load(res / "kolaw-dev" / "eval-half-feedback.json")
    if fb is not None:
        rows = fb["rows"]
        m = _answer_rates(rows)
        out.append(f"| --from-batch (calib half labelled, probes + labels) | eval half ({m['n_answerable']}+"
                   f"{m['n_unanswerable']}) | {_threshold_of(res / 'kolaw-dev' / 'kolaw-dev.feedback.yaml')} | "
                   f"{_f(m['abstained_when_unanswerable'])} | {_f(m['answered_when_answerable'])} | "
                   f"{_f(m['precision_of_answered'])} | {_f(m['correct_among_answered'])} | "
                   f"{_f(m['accuracy_answerable'])} | {_f(_gate_auroc(rows))} |")
    if fit:
        out += ["", f"Label fit: {fit['n']} Korean calib-half questions ({fit['n_answerable']}+{fit['n_unanswerable']}), "
                f"AUROC {fit['auroc_calib']}, threshold {fit['threshold']}."]
    return out


def _demo_table(res: Path) -> list[str]:
    out = ["### demo corpus (rag demo)", "", "| thresholds | thresholds (ko, en) | result |", "|---|---|---|"]
    for key, label in (("shipped", "shipped (configs/default.yaml)"), ("auto", "**--auto (no labels)**")):
        log = res / "demo" / f"demo-{key}.log"
        if not log.is_file():
            continue
        text = log.read_text(encoding="utf-8")
        result = "; ".join(m.group(0) for m in re.finditer(r"^(?:answered with|gate AUROC).*$", text, re.M))
        cfg = res / "demo" / "demo.auto.yaml" if key == "auto" else Path("configs/default.yaml")
        en = re.search(r"^\s*en:\s*([0-9.]+)", cfg.read_text(encoding="utf-8"), re.M) if cfg.is_file() else None
        out.append(f"| {label} | {_threshold_of(cfg)}, {en.group(1) if en else '-'} | {result} |")
    return out


def _threshold_of(cfg: Path) -> str:
    if not cfg.is_file():
        return "-"
    m = re.search(r"^\s*threshold:\s*([0-9.]+)", cfg.read_text(encoding="utf-8"), re.M)
    return m.group(1) if m else "-"


def _time_row(path: Path) -> tuple[str, str]:
    if not path.is_file():
        return "-", "-"
    t = path.read_text(encoding="utf-8")
    wall = re.search(r"Elapsed \(wall clock\) time \(h:mm:ss or m:ss\): (\S+)", t)
    rss = re.search(r"Maximum resident set size \(kbytes\): (\d+)", t)
    secs = "-"
    if wall:
        parts = [float(x) for x in wall.group(1).split(":")]
        secs = f"{sum(v * 60 ** i for i, v in enumerate(reversed(parts))):.1f} s"
    return secs, (f"{int(rss.group(1)) / 1024 ** 2:.2f} GB" if rss else "-")


def summary(res: Path) -> str:
    lines = ["## Probes and the fit", "",
             "| corpus | chunks | probes (answerable found / not found, unanswerable) | signal chosen | "
             "worst-group AUROC dense / bm25 / probability | fitted thresholds |", "|---|---|---|---|---|---|"]
    lines += [_auto_row(n) for n in (*SETS, "kolaw-dev", "demo", "nomiracl-ko-1k")]
    for name in SETS:
        lines += [""] + _abstention_table(res, name)
    lines += [""] + _kolaw_table(res)
    lines += [""] + _demo_table(res)
    lines += ["", "## Time and memory", "", "| corpus | step | wall | peak RSS |", "|---|---|---|---|"]
    for name in (*SETS, "kolaw-dev", "demo", "nomiracl-ko-1k"):
        for step in ("index", "auto"):
            wall, rss = _time_row(res / name / f"{step}.time")
            if wall != "-":
                lines.append(f"| {name} | {step} | {wall} | {rss} |")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    s = sub.add_parser("strip")
    s.add_argument("src", type=Path)
    s.add_argument("out", type=Path)
    f = sub.add_parser("fit-answers")
    f.add_argument("answers", type=Path)
    f.add_argument("questions", type=Path)
    f.add_argument("config", type=Path)
    f.add_argument("out", type=Path)
    f.add_argument("--target-precision", type=float, default=0.9)
    f.add_argument("--json", type=Path, default=None, help="write the fit here")
    c = sub.add_parser("configured-fit")
    c.add_argument("auto_report", type=Path)
    c.add_argument("config", type=Path)
    m = sub.add_parser("summary")
    m.add_argument("results", type=Path)
    a = ap.parse_args(argv)
    if a.cmd == "strip":
        strip(a.src, a.out)
    elif a.cmd == "fit-answers":
        fit = fit_answers(a.answers, a.questions, a.config, a.out, a.target_precision)
        if a.json:
            a.json.parent.mkdir(parents=True, exist_ok=True)
            a.json.write_text(json.dumps(fit, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
        print(json.dumps(fit, ensure_ascii=False))
    elif a.cmd == "configured-fit":
        print(" ".join(configured_fit(a.auto_report, a.config)))
    else:
        print(summary(a.results), end="")
    return 0


if __name__ == "__main__":
    sys.exit(main())
