"""``rag calibrate --auto``: fit the gate to the configured corpus from probe questions, no labels.

1. read the indexed chunks (:func:`probe_sources`) and build probes (:mod:`rag.calibrate.probes`);
2. answer each probe's retrieval with the configured pipeline (:func:`score_probes`); an answerable
   probe counts only when its source document is among the first ``gate.read_top`` candidates;
3. per signal (``dense``, ``bm25``, and ``probability`` where the reranker ran), the *read score*
   of each probe: the signal's top value, or below every value when reading the question stops it;
4. choose the signal with the best worst-group AUROC, never switching to BM25 or the reranker's probability
   (:data:`PROBE_FAVOURED`: probes written from the passages' words favour a lexical score and a cross-encoder
   reading them) (one group per threshold key the gate reads:
   ``gate.threshold``, ``gate.language_thresholds.<lang>``, ``gate.fallback_threshold``), fit each
   group's threshold at the target precision held ``standard_errors`` below the probes' measured
   precision (:func:`confident_threshold`), and record the corpus fingerprint in ``gate.fitted_on``.

With ``feedback`` (a labelled ``rag batch`` results file, :mod:`rag.calibrate.feedback`), each labelled
question is re-scored the same way and enters its group with its label (the gate should answer / abstain),
counting ``feedback_weight`` times; the report gives the thresholds with and without the labels.
"""
from __future__ import annotations

import logging
import math
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Callable, Mapping, Sequence

from rag._io import write_json
from rag.errors import InputError
from rag.evaluation.abstention import risk_coverage
from rag.calibrate.feedback import DEFAULT_WEIGHT, KIND, FeedbackSet, corpus_warnings
from rag.evaluation.metrics import auroc
from rag.calibrate.probes import Probe, ProbeSource, make_probes

logger = logging.getLogger(__name__)
SIGNALS = ("dense", "bm25", "probability")
MIN_PER_CLASS = 5  # a group with fewer probes of either class keeps its threshold
SWITCH_MARGIN = 0.02  # worst-group AUROC another signal must gain to replace the configured one
# --auto never closes the gate: a threshold fitted on probes alone that would answer fewer of the answerable probes
# than this is lowered, in the config it writes, to the one that answers this share, with a warning (the target
# precision is not held there); a fit with labelled questions (--from-batch) keeps what the labels say
MIN_ANSWERED = 0.5
# The probes are a small sample (some 80 a class): the fit holds the target precision this many standard errors
# below what the answered probes measure (Wilson's lower bound), so a few probes either side of the line do not
# place it. docs/results/gate-auto.md (2026-12-05, later) has the fits with 0 and 1.
STANDARD_ERRORS = 1.0
# Signals the probes measure too kindly to switch to: a probe is written from its passage's own words, so a
# lexical score, and a cross-encoder reading the same words, separate probes better than they separate real
# questions (SQuAD 2.0: BM25's probe AUROC 0.870 against the cosine's 0.782, on the real questions 0.566
# against 0.638; NoMIRACL-ko 0.551 against 0.799; the MiniLM reranker's probability 0.861 on SQuAD 2.0's
# probes, 0.592 on its questions). Fitted and reported; chosen only when it is the configured signal.
PROBE_FAVOURED = ("bm25", "probability")


@dataclass(frozen=True)
class ScoredProbe:
    probe: Probe
    found: bool  # answerable: its source document among the first read_top candidates
    stopped_by_reading: bool
    tops: tuple[tuple[str, float], ...]  # (signal, top value) for the signals that have one
    keys: tuple[tuple[str, str], ...]  # (signal, threshold config key)
    weight: int = 1  # how many probes it counts as (a labelled question: feedback_weight)
    stopped_after_gate: bool = False  # a labelled question a later stage stopped in the batch (no threshold decides it)

    def top(self, signal: str) -> float | None:
        return dict(self.tops).get(signal)

    def key(self, signal: str) -> str | None:
        return dict(self.keys).get(signal)

    def read_score(self, signal: str) -> float:
        t = self.top(signal)
        return -math.inf if self.stopped_by_reading or self.stopped_after_gate or t is None else t


def probe_sources(pipeline, principal=None) -> list[ProbeSource]:
    """Every chunk of the current version of each document ``principal`` may read."""
    from rag.access import can_read

    index = pipeline.index
    latest: dict[str, str] = {}
    for (doc_id, version), rec in sorted(index.documents.items()):
        if rec.access is not None and not can_read(principal, rec.access):
            continue
        latest[doc_id] = version  # version order: the index's own (sorted keys, last wins)
    out = []
    for doc_id, version in sorted(latest.items()):
        for i, text in enumerate(index.document_texts(doc_id, version)):
            out.append(ProbeSource(f"{doc_id}:{version}:{i}", doc_id, text))
    return out


def score_probes(pipeline, probes: Sequence[Probe], principal=None,
                 progress: Callable[[str, int, int], None] | None = None, stage: str = "probes") -> list[ScoredProbe]:
    from rag.rerank.gate import Gate, signal_values

    cfg = pipeline.config.gate
    gates = {s: Gate(cfg.model_copy(update={"signal": s})) for s in SIGNALS}
    out = []
    for i, p in enumerate(probes):
        r = pipeline.retrieve(p.question, principal=principal)
        ordered = [c.candidate for c in r.rerank.candidates] if r.rerank is not None and r.rerank.applied else r.candidates
        found = True  # an unanswerable probe, or a labelled question (a person judged it)
        if p.answerable and p.kind != KIND:
            found = any(c.chunk.document_id == p.document_id for c in ordered[:cfg.read_top])
        d = gates["dense"].decide(r.candidates, r.rerank, question=p.question)
        stopped = d.fit is not None and gates["dense"].read(d.fit) != "answer"
        tops, keys = [], []
        for s, g in gates.items():  # under each candidate signal, the value and key the gate would read
            sig, key = g.threshold_key(r.candidates, r.rerank)
            vals = signal_values(sig, r.candidates, r.rerank) if sig != "none" else []
            if vals:
                tops.append((s, vals[0]))
                keys.append((s, key))
        out.append(ScoredProbe(p, found, stopped, tuple(tops), tuple(keys)))
        if progress:
            progress(stage, i + 1, len(probes))
    return out


@dataclass(frozen=True)
class GroupFit:
    key: str
    n_answerable: int
    n_unanswerable: int
    auroc: float | None
    threshold: float | None  # None: too few probes, the configured threshold stays
    coverage_of_answerable: float | None
    abstained_on_unanswerable: float | None
    n_labelled_answerable: int = 0  # of n_answerable: labelled questions (each counted once here)
    n_labelled_unanswerable: int = 0
    standard_errors_held: float | None = None  # the margin the threshold holds the target with (held_threshold)
    warning: str | None = None  # the fit would have (nearly) closed the gate: what was kept instead

    def to_json(self) -> dict:
        return dict(self.__dict__)


def fit_signal(scored: Sequence[ScoredProbe], signal: str, target_precision: float,
               standard_errors: float = STANDARD_ERRORS, margins: Mapping[str, float] | None = None, *,
               floor: bool = False) -> list[GroupFit]:
    """Each threshold key's fit (:func:`held_threshold`); ``margins``: the margin a key's probes alone held,
    kept when labelled questions join them, so labels move the threshold rather than the margin. ``floor``:
    never a closed gate (:func:`answering_threshold`), for the fit that is written to the config."""
    groups: dict[str, list[ScoredProbe]] = {}
    for sp in scored:
        if sp.probe.answerable and not sp.found:
            continue
        k = sp.key(signal)
        if k is not None:
            groups.setdefault(k, []).append(sp)
    fits = []
    for key, items in sorted(groups.items()):
        labels = [sp.probe.answerable for sp in items]
        vals = [sp.read_score(signal) for sp in items]
        npos, nneg = sum(labels), len(labels) - sum(labels)  # questions, each once (MIN_PER_CLASS counts these)
        lab_pos = sum(1 for sp in items if sp.probe.kind == KIND and sp.probe.answerable)
        lab_neg = sum(1 for sp in items if sp.probe.kind == KIND and not sp.probe.answerable)
        w_vals = [v for sp, v in zip(items, vals) for _ in range(sp.weight)]  # AUROC and threshold: weighted
        w_labels = [y for sp, y in zip(items, labels) for _ in range(sp.weight)]
        a = auroc(w_vals, w_labels) if npos and nneg else math.nan
        if npos < MIN_PER_CLASS or nneg < MIN_PER_CLASS:
            fits.append(GroupFit(key, npos, nneg, None if math.isnan(a) else round(a, 4), None, None, None,
                                 lab_pos, lab_neg))
            continue
        tau, held = held_threshold(vals, labels, [sp.weight for sp in items], target_precision,
                                   (margins or {}).get(key, standard_errors))
        warning = None
        if floor:
            tau, warning = answering_threshold(tau, vals, labels, key, target_precision)
        ans = [v >= tau for v in vals]
        cov = sum(x for x, y in zip(ans, labels) if y) / npos
        abst = sum(not x for x, y in zip(ans, labels) if not y) / nneg
        fits.append(GroupFit(key, npos, nneg, round(a, 4), round(float(tau), 6), round(cov, 4), round(abst, 4),
                             lab_pos, lab_neg, held, warning))
    return fits


def answering_threshold(tau: float, values: Sequence[float], labels: Sequence[bool], key: str,
                        target_precision: float, min_answered: float = MIN_ANSWERED) -> tuple[float, str | None]:
    """``tau``, or, when it would answer fewer than ``min_answered`` of the answerable probes (a gate that
    answers almost nothing is a closed gate), the highest threshold that answers that share, with a warning."""
    pos = sorted((v for v, y in zip(values, labels) if y and math.isfinite(v)), reverse=True)
    if not pos:
        return tau, None
    answered = sum(v >= tau for v in pos) / len(pos)
    if answered >= min_answered:
        return tau, None
    keep = pos[max(0, math.ceil(min_answered * len(pos)) - 1)]
    msg = (f"{key}: the threshold {tau:.4g} that holds precision {target_precision} on the probes answers only "
           f"{answered:.0%} of the answerable ones; kept {keep:.4g}, which answers {min_answered:.0%} (precision below "
           "the target there): the signal separates this corpus's probes poorly - label questions "
           "(--from-batch) or check the corpus")
    logger.warning("calibrate --auto: %s", msg)
    return keep, msg


def held_threshold(values: Sequence[float], labels: Sequence[bool], weights: Sequence[int], target_precision: float,
                   standard_errors: float = STANDARD_ERRORS) -> tuple[float, float]:
    """(threshold, margin): :func:`confident_threshold` with the largest margin, in steps of 0.1 standard
    errors from ``standard_errors`` down to none, at which some threshold holds the target (few or weak
    probes: a smaller margin rather than a closed gate); (inf, 0.0) when not even the probes' own precision
    reaches it."""
    steps = int(round(standard_errors * 10))
    for k in range(steps, -1, -1):
        tau = confident_threshold(values, labels, weights, target_precision, k / 10)
        if math.isfinite(tau):
            return tau, k / 10
    return math.inf, 0.0


def wilson_lower(precision: float, n: int, z: float) -> float:
    """Wilson's lower bound, ``z`` standard errors down, of a share ``precision`` measured on ``n`` items."""
    if n <= 0:
        return 0.0
    if z <= 0:
        return precision
    z2 = z * z
    centre = precision + z2 / (2 * n)
    spread = z * math.sqrt(precision * (1 - precision) / n + z2 / (4 * n * n))
    return (centre - spread) / (1 + z2 / n)


def confident_threshold(values: Sequence[float], labels: Sequence[bool], weights: Sequence[int],
                        target_precision: float, standard_errors: float = STANDARD_ERRORS) -> float:
    """The lowest threshold whose answered items (``value >= threshold``) reach ``target_precision``
    ``standard_errors`` below their measured precision (:func:`wilson_lower`; 49 of 54 answered right is 0.907,
    one standard error lower 0.860). Precision weighs each item by its weight (a labelled question counts as
    several probes), the standard error counts each item once. A value of -inf (the reading stops it) is
    never answered. Above every value (inf) when no threshold reaches the target; with 0 standard errors the
    lowest threshold whose answered items reach it (:func:`rag.calibrate.labelled.calibrate_threshold`)."""
    order = sorted(range(len(values)), key=lambda i: -values[i])
    best = math.inf
    right = total = 0.0
    n = 0
    for j, i in enumerate(order):
        v = values[i]
        if not math.isfinite(v):
            break
        right += weights[i] * bool(labels[i])
        total += weights[i]
        n += 1
        if j + 1 < len(order) and values[order[j + 1]] == v:
            continue  # a threshold answers every item of its value
        if wilson_lower(right / total, n, standard_errors) >= target_precision:
            best = v
    return best


@dataclass(frozen=True)
class AutoReport:
    signal: str
    updates: dict[str, object]
    summary: dict


def worst_auroc(groups: Sequence[GroupFit]) -> float | None:
    """The lowest AUROC among the groups that got a threshold (None: none did). A group with too few probes to
    fit keeps its configured threshold, and its AUROC over a handful of probes says nothing of the signal."""
    vals = [g.auroc for g in groups if g.threshold is not None and g.auroc is not None]
    return min(vals) if vals else None


def choose(scored: Sequence[ScoredProbe], target_precision: float, configured: str,
           standard_errors: float = STANDARD_ERRORS,
           margins: Mapping[str, Mapping[str, float]] | None = None) -> tuple[str, dict[str, list[GroupFit]]]:
    """The signal whose worst fitted group has the highest AUROC; the configured one unless another beats it
    by ``SWITCH_MARGIN`` with every group it reads fitted, and never a :data:`PROBE_FAVOURED` one it is not.
    ``margins``: per signal, the margin each key's probes alone held (:func:`fit_signal`)."""
    fits = {s: fit_signal(scored, s, target_precision, standard_errors, (margins or {}).get(s)) for s in SIGNALS}

    def worst(s: str) -> float:
        w = worst_auroc(fits[s])
        return -1.0 if w is None else w

    def complete(s: str) -> bool:  # every group the signal reads got a threshold
        return all(g.threshold is not None for g in fits[s] if g.n_answerable + g.n_unanswerable >= 2 * MIN_PER_CLASS)

    eligible = [s for s in SIGNALS if s == configured or s not in PROBE_FAVOURED]
    best = max(eligible, key=lambda s: (worst(s), s == configured))
    if configured in fits and (best == configured or worst(best) < worst(configured) + SWITCH_MARGIN
                               or not complete(best)):
        return configured, fits  # another signal must be clearly better to replace the configured one
    return best, fits


def _updates(signal: str, fits: Sequence[GroupFit], configured: str) -> dict[str, object]:
    updates: dict[str, object] = {"gate.signal": signal}
    if signal != configured:
        updates["gate.language_thresholds"] = {}  # thresholds of another signal do not carry over
    fitted = {g.key: g.threshold for g in fits if g.threshold is not None and math.isfinite(g.threshold)}
    updates.update(fitted)
    main = [v for k, v in fitted.items() if k != "gate.fallback_threshold"]
    if signal != configured and main and "gate.threshold" not in fitted:
        # the configured gate.threshold is on the old signal's scale (a cosine read as a BM25 score opens the
        # gate for every language no probe fitted): the strictest threshold fitted on the new signal
        updates["gate.threshold"] = max(main)
    return updates


def _configured(config, key: str):
    node = config
    for part in key.split("."):
        node = node.get(part) if isinstance(node, dict) else getattr(node, part, None)
    return dict(node) if isinstance(node, dict) else node


def _why(signal: str, fits: dict[str, list[GroupFit]], what: str) -> str:
    def shown(w: float | None) -> str:
        return "no group fitted" if w is None else f"{w:.3f}"
    return (f"{signal}: the best worst-group AUROC on the {what} "
            + ", ".join(f"{s} {shown(worst_auroc(f))}" for s, f in fits.items()))


def _labelled(pipeline, feedback: FeedbackSet, weight: int, principal, progress) -> list[ScoredProbe]:
    from rag.lang import detect_language

    probes = [Probe(f"feedback:{it.line}", it.question, it.should_answer, KIND, detect_language(it.question),
                    source=f"{it.label} ({it.status or 'no status'}), {feedback.path.name}:{it.line}")
              for it in feedback.items]
    scored = score_probes(pipeline, probes, principal, progress, "labelled")
    return [replace(sp, weight=weight, stopped_after_gate=it.stopped_after_gate) for it, sp in zip(feedback.items, scored)]


def _feedback_summary(feedback: FeedbackSet, weight: int, pipeline, fingerprint: str, without: dict[str, object],
                      with_: dict[str, object], signal_without: str, signal: str,
                      fits: dict[str, list[GroupFit]], labelled: Sequence[ScoredProbe]) -> dict:
    warnings = corpus_warnings(feedback, pipeline.index.documents, fingerprint)
    for w in warnings:
        logger.warning("--from-batch %s: %s", feedback.path, w)
    here = pipeline.config.results_hash
    keys = sorted(set(without) | set(with_))
    kept = {k: _configured(pipeline.config, k) for k in keys}  # a key a fit leaves out keeps the configured value
    changed = {k: {"without_labels": without.get(k, kept[k]), "with_labels": with_.get(k, kept[k])} for k in keys
               if without.get(k, kept[k]) != with_.get(k, kept[k])}
    groups = {s: [{"key": g.key, "probes_answerable": g.n_answerable - g.n_labelled_answerable,
                   "probes_unanswerable": g.n_unanswerable - g.n_labelled_unanswerable,
                   "labelled_answerable": g.n_labelled_answerable, "labelled_unanswerable": g.n_labelled_unanswerable}
                  for g in f] for s, f in fits.items()}
    return dict(feedback.summary(), weight=weight, corpus_warnings=warnings,
                other_config=[h for h in feedback.results_hashes if h != here], groups=groups,
                not_scored=sum(1 for sp in labelled if sp.key(signal) is None),  # no value of the chosen signal
                signal_without_labels=signal_without, thresholds_without_labels=without, thresholds_with_labels=with_,
                changed=changed)


def auto_calibrate(pipeline, target_precision: float, report_dir: Path, *, per_language: int = 80, seed: int = 0,
                   principal=None, progress=None, feedback: FeedbackSet | None = None,
                   feedback_weight: int = DEFAULT_WEIGHT, standard_errors: float = STANDARD_ERRORS) -> AutoReport:
    """Fit the gate on probe questions (and, with ``feedback`` from :func:`rag.calibrate.feedback.read_feedback`,
    on a batch's labelled questions, each counting ``feedback_weight`` probes); write the report to ``report_dir``."""
    from rag.index import corpus_fingerprint

    if feedback is not None and feedback_weight < 1:
        raise InputError(f"the weight of a labelled question must be >= 1, got {feedback_weight}")
    if not 0 <= standard_errors <= 5:
        raise InputError(f"standard errors must be in [0, 5], got {standard_errors}")
    sources = probe_sources(pipeline, principal)
    if not sources:
        raise InputError("the index holds no readable chunks: run `rag index` first (or check --as)")
    probes = make_probes(sources, per_language, seed)
    if not any(p.answerable for p in probes):
        raise InputError("no probe question could be built from this corpus (no sentence with two content terms)")
    scored = score_probes(pipeline, probes, principal, progress)
    labelled = _labelled(pipeline, feedback, feedback_weight, principal, progress) if feedback is not None else []
    configured = pipeline.config.gate.signal
    signal0, fits0 = choose(scored, target_precision, configured, standard_errors)
    if labelled:
        held = {s: {g.key: g.standard_errors_held for g in f if g.standard_errors_held is not None}
                for s, f in fits0.items()}
        signal, fits = choose(scored + labelled, target_precision, configured, standard_errors, held)
    else:
        signal, fits = signal0, fits0
    chosen = fits[signal]
    if not labelled:  # probes alone: never write a closed gate
        chosen = fit_signal(scored, signal, target_precision, standard_errors, floor=True)
    fingerprint = corpus_fingerprint(pipeline.index.documents)
    updates = dict(_updates(signal, chosen, configured), **{"gate.fitted_on": fingerprint})
    examples = {k: [sp.probe.question for sp in scored if sp.probe.kind == k][:8]
                for k in ("answerable", "absent_fact", "absent_term", "absent_topic")}
    summary = {
        "corpus_fingerprint": fingerprint, "chunks": len(sources), "probes": len(probes),
        "answerable_found": sum(1 for sp in scored if sp.probe.answerable and sp.found),
        "answerable_not_found": sum(1 for sp in scored if sp.probe.answerable and not sp.found),
        "target_precision": target_precision, "standard_errors": standard_errors, "signal": signal,
        "why": _why(signal, fits, "probes and labelled questions" if labelled else "probes"),
        "groups": {s: [g.to_json() for g in f] for s, f in fits.items()},
        "examples": examples, "config_updates": updates,
        "warnings": [g.warning for g in chosen if g.warning],
        "written": [g.to_json() for g in chosen],  # the chosen signal's groups as written (after the floor)
    }
    if feedback is not None:
        without = _updates(signal0, fits0[signal0], configured)
        summary["feedback"] = _feedback_summary(feedback, feedback_weight, pipeline, fingerprint, without,
                                                _updates(signal, chosen, configured), signal0, signal, fits,
                                                labelled)
        summary["feedback"]["groups_without_labels"] = {s: [g.to_json() for g in f] for s, f in fits0.items()}
    report_dir.mkdir(parents=True, exist_ok=True)
    rows = [dict(sp.probe.to_json(), found=sp.found, stopped_by_reading=sp.stopped_by_reading,
                 tops=dict(sp.tops), keys=dict(sp.keys)) for sp in scored]
    extra = {}
    if feedback is not None:
        extra["labelled"] = [dict(it.to_json(), stopped_by_reading=sp.stopped_by_reading, tops=dict(sp.tops),
                                  keys=dict(sp.keys)) for it, sp in zip(feedback.items, labelled)]
    write_json(report_dir / "auto_calibration.json", dict(summary, probes=rows, **extra), atomic=False)
    _plot(scored + labelled, signal, chosen, report_dir)
    return AutoReport(signal, updates, summary)


def _plot(scored: Sequence[ScoredProbe], signal: str, fits: Sequence[GroupFit], report_dir: Path) -> None:
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        logger.warning("matplotlib is not installed: no plots in %s (pip install 'rag[plots]')", report_dir)
        return
    groups = [g for g in fits if g.threshold is not None]
    if not groups:
        return
    fig, axes = plt.subplots(1, 2 * len(groups), figsize=(8.4 * len(groups), 3.6), squeeze=False)
    for j, g in enumerate(groups):
        items = [sp for sp in scored if sp.key(signal) == g.key and (sp.found or not sp.probe.answerable)]
        vals = [sp.read_score(signal) for sp in items]
        labels = [sp.probe.answerable for sp in items]
        finite = [v for v in vals if math.isfinite(v)]
        lo = min(finite) if finite else 0.0
        vals = [v if math.isfinite(v) else lo for v in vals]
        pts = risk_coverage(vals, labels)
        ax = axes[0][2 * j]
        ax.plot([p.coverage for p in pts], [1 - p.precision for p in pts])
        ax.set_xlabel("coverage")
        ax.set_ylabel("risk")
        ax.set_title(f"{g.key} (AUROC {g.auroc})", fontsize=8)
        ax = axes[0][2 * j + 1]
        ax.hist([v for v, y in zip(vals, labels) if y], bins=25, alpha=0.6, label="answerable probes")
        ax.hist([v for v, y in zip(vals, labels) if not y], bins=25, alpha=0.6, label="unanswerable probes")
        ax.axvline(g.threshold, color="black", ls="--", lw=0.8)
        ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(report_dir / "auto_risk_coverage.png", dpi=100)
    plt.close(fig)


__all__ = ["AutoReport", "GroupFit", "ScoredProbe", "auto_calibrate", "choose", "fit_signal", "probe_sources",
           "score_probes"]
