"""The tables ``rag bench run gate-auto`` prints: the probes and the fit per corpus, each set's variants
scored with the labels, and the time and memory of each step."""
from __future__ import annotations

from typing import Any, Mapping

LABELS = {"shipped": "shipped", "auto": "**--auto (no labels)**", "labels": "label-fitted (calib half)",
          "auto-configured": "--auto's fit of the configured signal (not chosen)",
          "feedback": "--auto --from-batch (calib half labelled)"}


def _f(v: Any, nd: int = 3) -> str:
    if v is None:
        return "-"
    return f"{v:.{nd}f}" if isinstance(v, float) else str(v)


def _thr(t: Mapping[str, Any]) -> str:
    return ", ".join(f"{k} {_f(v, 4)}" for k, v in t.items() if v is not None) or "-"


def _fit_rows(results: Mapping[str, Any]) -> list[str]:
    out = ["| corpus | chunks | probes (answerable found / not found, unanswerable) | signal chosen | "
           "worst-group AUROC dense / bm25 / probability | fitted thresholds |", "|---|---|---|---|---|---|"]
    for name, res in results.items():
        a = res.get("auto")
        if not a:
            continue
        worst = a["worst_group_auroc"]
        fitted = ", ".join(f"{k.rsplit('.', 1)[-1]} {v['threshold']}"
                           + (f" ({v['standard_errors_held']} SE)" if v["standard_errors_held"] is not None else "")
                           for k, v in a["fitted"].items()) or "none"
        out.append(f"| {name} | {a['chunks']} | {a['answerable_found']} / {a['answerable_not_found']}, "
                   f"{a['unanswerable']} | {a['signal']} | "
                   f"{' / '.join(_f(worst.get(s)) for s in ('dense', 'bm25', 'probability'))} | {fitted} |")
    return out


def _answers_rows(name: str, res: Mapping[str, Any]) -> list[str]:
    out = [f"### {name} (rag eval-answers)", "",
           "| thresholds | questions | thresholds | abstained on unanswerable | answered of answerable | "
           "precision of answered | correct among answered | accuracy (answerable) | gate AUROC |",
           "|---|---|---|---|---|---|---|---|---|"]
    for v, d in res["variants"].items():
        for part in ("all", "eval_half"):
            m = d.get(part)
            if m is None:
                continue
            out.append(f"| {LABELS.get(v, v)} | {part.replace('_', ' ')} ({m['n_answerable']}+{m['n_unanswerable']}) | "
                       f"{_thr(d['thresholds'])} | {_f(m['abstained_when_unanswerable'])} | "
                       f"{_f(m['answered_when_answerable'])} | {_f(m['precision_of_answered'])} | "
                       f"{_f(m['correct_among_answered'])} | {_f(m['accuracy_answerable'])} | {_f(m['gate_auroc'])} |")
    fit = res.get("label_fit")
    if fit:
        out += ["", f"Label fit: {fit['n']} {fit['split']} ({fit['n_answerable']}+{fit['n_unanswerable']}), "
                f"AUROC {fit['auroc_calib']}, threshold {fit['threshold']}."]
    if res.get("labels"):
        out += ["", "Batch lines labelled: " + "; ".join(f"{k} {n}" for k, n in res["labels"].items()) + "."]
    return out


def _abstention_rows(name: str, res: Mapping[str, Any]) -> list[str]:
    out = [f"### {name} (rag eval-abstention, eval half)", "",
           "| thresholds | signal | threshold | n | abstained on unanswerable | answered of answerable | "
           "precision of answered | AUROC (gate signal) | AUROC dense / bm25 / read_dense |",
           "|---|---|---|---|---|---|---|---|---|"]
    for v, d in res["variants"].items():
        s = d.get("signals_auroc") or {}
        t = d["threshold"]
        t = ", ".join(f"{k} {_f(x, 4)}" for k, x in t.items()) if isinstance(t, dict) else _f(t, 4)
        out.append(f"| {LABELS.get(v, v)} | {d['signal']} | {t} | {d['n']} | {_f(d['abstained_when_unanswerable'])} | "
                   f"{_f(d['answered_when_answerable'])} | {_f(d['precision_of_answered'])} | {_f(d['auroc'])} | "
                   f"{_f(s.get('dense'))} / {_f(s.get('bm25'))} / {_f(s.get('read_dense'))} |")
    reach = res["labels_fit"].get("targets_reachable_in_sample") or {}
    if reach:
        out += ["", f"Calib half, in sample ({res['labels_fit']['n']} questions), the most answered of answerable one "
                "threshold gives while abstaining on >= 0.85 of unanswerable: " + "; ".join(
                    f"{sig} {_f(x['answered_when_answerable'])} (threshold {x['threshold']}, precision "
                    f"{_f(x['precision_of_answered'])})" for sig, x in reach.items() if x) + "."]
    return out


def _demo_rows(res: Mapping[str, Any]) -> list[str]:
    out = ["### demo (rag demo)", "", "| thresholds | thresholds | answered with the expected document | abstained | "
           "checks |", "|---|---|---|---|---|"]
    for v, d in res["variants"].items():
        out.append(f"| {LABELS.get(v, v)} | {_thr(d['thresholds'])} | {d['answered_expected']}/{d['answerable']} | "
                   f"{d['abstained']}/{d['unanswerable']} | {d['checks_passed']}/{d['checks']} |")
    return out


def table(results: Mapping[str, Any]) -> str:
    lines = ["## Probes and the fit", ""] + _fit_rows(results)
    for name, res in results.items():
        if name in ("kolaw-dev", "kolaw-feedback"):
            lines += [""] + _answers_rows(name, res)
        elif name == "demo":
            lines += [""] + _demo_rows(res)
        elif "labels_fit" in res:
            lines += [""] + _abstention_rows(name, res)
    lines += ["", "## Time and memory", "", "| set | step | wall s | peak RSS GB |", "|---|---|---|---|"]
    for name, res in results.items():
        for step, s in (res.get("steps") or {}).items():
            lines.append(f"| {name} | {step} | {s['seconds']} | {s['peak_rss_gb']} |")
    return "\n".join(lines)
