"""The summary of a batch results file: counts by status and reason, per-stage latency, tokens.

:func:`percentiles` is the one percentile helper of the package (the evaluation reports use it
too): numpy's default linear interpolation.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Iterable, Mapping, Sequence

from rag.batch.records import STATUSES, BatchRecord


def percentiles(values: Sequence[float], qs: Sequence[float]) -> list[float]:
    """The ``q``-th percentile (0-100, linear interpolation) of ``values`` for each ``q`` in ``qs``;
    NaN for each when there are no values."""
    import numpy as np

    a = np.asarray(values, dtype=np.float64)
    if not len(a):
        return [math.nan] * len(qs)
    return [float(np.percentile(a, q)) for q in qs]


@dataclass(frozen=True)
class LatencyStats:
    n: int
    p50: float
    p95: float
    mean: float
    max: float

    @classmethod
    def of(cls, values: Iterable[float | None]) -> "LatencyStats":
        """Over the finite values (``None``, NaN and infinities are left out); NaN when there are none."""
        import numpy as np

        a = np.asarray([v for v in values if v is not None and math.isfinite(v)], dtype=np.float64)
        if not len(a):
            return cls(0, math.nan, math.nan, math.nan, math.nan)
        p50, p95 = percentiles(a, (50, 95))
        return cls(len(a), p50, p95, float(a.mean()), float(a.max()))


@dataclass(frozen=True)
class BatchSummary:
    questions: int  # distinct ids in the output
    answered: int
    insufficient_evidence: int
    failed: int
    reasons: Mapping[str, int]  # status/reason -> count
    latency_ms: Mapping[str, LatencyStats]  # per stage (the answer's timings_ms), plus "wall" (time in flight)
    prompt_tokens: int
    completion_tokens: int
    attempts_mean: float

    def to_json(self) -> dict:
        def num(x: float) -> float | None:
            return None if math.isnan(x) else round(x, 3)

        return {"questions": self.questions, "answered": self.answered,
                "insufficient_evidence": self.insufficient_evidence, "failed": self.failed,
                "reasons": dict(self.reasons),
                "latency_ms": {k: {"n": s.n, "p50": num(s.p50), "p95": num(s.p95), "mean": num(s.mean),
                                   "max": num(s.max)} for k, s in self.latency_ms.items()},
                "tokens": {"prompt": self.prompt_tokens, "completion": self.completion_tokens},
                "attempts_mean": num(self.attempts_mean)}

    def table(self) -> str:
        """A plain-text summary for the terminal."""
        n = max(1, self.questions)
        lines = [f"{'questions':<24}{self.questions:>8}"]
        for label, v in (("answered", self.answered), ("abstained", self.insufficient_evidence),
                         ("failed", self.failed)):
            lines.append(f"{label:<24}{v:>8}  {100 * v / n:5.1f}%")
        if self.reasons:
            lines.append("reasons: " + ", ".join(f"{k} {v}" for k, v in self.reasons.items()))
        lines.append(f"tokens: prompt {self.prompt_tokens}, completion {self.completion_tokens}"
                     + ("" if math.isnan(self.attempts_mean) else f"; attempts/question {self.attempts_mean:.2f}"))
        lines.append("")
        lines.append(f"{'latency (ms)':<24}{'n':>7}{'p50':>11}{'p95':>11}{'max':>11}")
        for stage, s in self.latency_ms.items():
            lines.append(f"{stage:<24}{s.n:>7}{s.p50:>11.1f}{s.p95:>11.1f}{s.max:>11.1f}")
        return "\n".join(lines)


def summarize(records: Iterable[BatchRecord]) -> BatchSummary:
    recs = list(records)
    counts = {s: sum(1 for r in recs if r.status == s) for s in STATUSES}
    reasons: dict[str, int] = {}
    for r in recs:
        key = f"{r.status}:{r.error.type if r.error else r.reason or '-'}"
        reasons[key] = reasons.get(key, 0) + 1
    stages: dict[str, list[float]] = {}
    for r in recs:
        for k, v in r.timings_ms.items():
            stages.setdefault(k, []).append(v)
    lat = {k: LatencyStats.of(stages[k]) for k in stages}  # stage order of first appearance
    lat["wall"] = LatencyStats.of([r.latency_ms for r in recs])
    with_attempts = [r.attempts for r in recs if r.status != "failed" or r.attempts]
    return BatchSummary(
        len(recs), counts["answered"], counts["insufficient_evidence"], counts["failed"], dict(sorted(reasons.items())),
        lat, sum(r.prompt_tokens for r in recs), sum(r.completion_tokens for r in recs),
        sum(with_attempts) / len(with_attempts) if with_attempts else math.nan,
    )
