"""The abstention gate: answer, or ``insufficient_evidence`` with a reason and the scores.

Runs after reranking and before the context builder; on abstention the generator is never
called. The policy: the top signal must reach ``threshold`` and at least
``min_supporting`` candidates must reach ``support_threshold``. The signal is the
reranker's calibrated probability or the learned answerability model over several signals
(:mod:`rag.rerank.answerability`), or, where the reranker did not run (disabled, or a query
language it does not rerank), the ``fallback_signal`` with its own threshold. The main
signal's threshold can differ by query language (``gate.language_thresholds``): a cosine, say,
sits higher for same-language pairs than for an English question over Korean text.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import Sequence

from rag.config import GateConfig
from rag.rerank.answerability import AnswerabilityModel
from rag.rerank.cross_encoder import RerankResult
from rag.rerank.evidence_fit import EvidenceFit, evidence_fit, explain
from rag.text.lang import detect_language
from rag.types import Candidate

ANSWER = "answer"
NO_CANDIDATES = "no_candidates"
BELOW_THRESHOLD = "below_threshold"
TOO_FEW_SUPPORTING = "too_few_supporting"
NO_VALID_SCORES = "no_valid_scores"
ASKED_FACT_MISSING = "asked_fact_missing"
KEY_TERMS_MISSING = "key_terms_missing"


@dataclass(frozen=True)
class GateDecision:
    answer: bool
    # answer | no_candidates | below_threshold | too_few_supporting | no_valid_scores | gate_disabled |
    # asked_fact_missing | key_terms_missing
    reason: str
    signal: str  # which score decided: probability | dense | bm25 | fused | none
    top_score: float | None
    threshold: float
    supporting: int  # candidates at or above support_threshold
    min_supporting: int
    scores: tuple[float, ...] = ()  # the signal's values, best first (at most 10)
    fit: EvidenceFit | None = None  # the reading of the question against the best candidates
    explanation: str = ""  # why, in the question's language, for people

    @property
    def stopped_by_reading(self) -> bool:
        """The scores passed, reading the question stopped it (``asked_fact_missing``, ``key_terms_missing``)."""
        return self.reason in (ASKED_FACT_MISSING, KEY_TERMS_MISSING)

    def to_json(self) -> dict:
        return {"answer": self.answer, "reason": self.reason, "signal": self.signal, "top_score": self.top_score,
                "threshold": self.threshold, "supporting": self.supporting, "min_supporting": self.min_supporting,
                "scores": list(self.scores), "fit": self.fit.to_json() if self.fit is not None else None,
                "explanation": self.explanation}


def signal_values(signal: str, candidates: Sequence[Candidate], rerank: RerankResult | None = None,
                  answerability: AnswerabilityModel | None = None) -> list[float]:
    """Finite values of one signal over the candidates (missing per-retriever hits are skipped).
    ``answerability`` is one value per question (needs the model)."""
    if signal == "answerability":
        if answerability is None:
            raise ValueError("the answerability signal needs its model (gate.answerability_model)")
        if rerank is None or not rerank.applied or not candidates:
            return []
        vals = [answerability.probability(candidates, rerank)]
        return [float(v) for v in vals if math.isfinite(v)]
    return sorted((v for v, _ in _scored(signal, candidates, rerank)), reverse=True)


def _scored(signal: str, candidates: Sequence[Candidate], rerank: RerankResult | None) -> list[tuple[float, Candidate]]:
    """(finite value, candidate) of a per-candidate signal: ``probability`` (the reranker's), ``fused``,
    or a retriever's hit score (missing hits skipped)."""
    if signal == "probability":
        pairs = [(c.probability, c.candidate) for c in (rerank.candidates if rerank is not None else ())
                 if c.probability is not None]
    elif signal == "fused":
        pairs = [(c.score, c) for c in candidates]
    else:
        pairs = [(h.score, c) for c in candidates if (h := c.hit(signal)) is not None]
    return [(float(v), c) for v, c in pairs if math.isfinite(v)]


def active_signal(config: GateConfig, rerank: RerankResult | None) -> tuple[str, str]:
    """(signal, config key of its threshold) the gate uses: the reranker probability when the
    reranker ran, else the fallback signal (``none`` means answer without a check)."""
    if config.signal in ("probability", "answerability") and (rerank is None or not rerank.applied):
        return config.fallback_signal, "gate.fallback_threshold"
    return config.signal, "gate.threshold"


class Gate:
    def __init__(self, config: GateConfig, answerability: AnswerabilityModel | None = None) -> None:
        if config.signal == "answerability" and answerability is None:
            raise ValueError("gate.signal: answerability needs its model (gate.answerability_model)")
        self.config = config
        self.answerability = answerability

    def decide(self, candidates: Sequence[Candidate], rerank: RerankResult | None = None, *,
               language: str | None = None, question: str | None = None) -> GateDecision:
        """``language``: the query's (``detect_language``); it picks ``gate.language_thresholds``
        for the main signal. Without it the reranker's detected language is used, if it ran.
        ``question``: with it (and ``gate.read_question``) a decision the scores passed is also
        checked against what the question asks (:mod:`rag.rerank.evidence_fit`), and every
        decision carries an explanation for people."""
        d = self._decide_scores(candidates, rerank, language=language)
        if question is None or not self.config.enabled:
            return d
        lang = detect_language(question)
        if not self.config.read_question or not candidates:
            return replace(d, explanation=explain(d.reason, None, lang, top=d.top_score, threshold=d.threshold))
        ordered = [c.candidate for c in rerank.candidates] if rerank is not None and rerank.applied else candidates
        fit = evidence_fit(question, ordered, self.config.read_top)
        reason = d.reason
        if d.answer:
            reason = self._read(fit)
        return replace(d, answer=reason == ANSWER, reason=reason, fit=fit,
                       explanation=explain(reason, fit, lang, top=d.top_score, threshold=d.threshold))

    def read(self, fit: EvidenceFit) -> str:
        """The reason the question's reading gives for a decision the scores passed (``answer`` or why not)."""
        return self._read(fit)

    def _read(self, fit: EvidenceFit) -> str:
        """The reason the question's reading gives for a decision the scores passed."""
        cfg = self.config
        if cfg.require_asked_fact and fit.asked_fact is False:
            return ASKED_FACT_MISSING
        if not fit.cross_language and fit.key_terms and fit.coverage < cfg.min_coverage:
            return KEY_TERMS_MISSING
        return ANSWER

    def _decide_scores(self, candidates: Sequence[Candidate], rerank: RerankResult | None = None, *,
                       language: str | None = None) -> GateDecision:
        cfg = self.config
        if not cfg.enabled:
            return GateDecision(True, "gate_disabled", "none", None, float("-inf"), 0, 0)
        if not candidates:
            return GateDecision(False, NO_CANDIDATES, cfg.signal, None, cfg.threshold, 0, cfg.min_supporting)
        signal, key = self.threshold_key(candidates, rerank, language=language)
        if signal == "none":
            return GateDecision(True, ANSWER, "none", None, float("-inf"), len(candidates), 0)
        if key == "gate.fallback_threshold":
            threshold = support = cfg.fallback_threshold
        else:
            threshold = cfg.threshold if key == "gate.threshold" else cfg.language_thresholds[key.rsplit(".", 1)[1]]
            support = threshold if cfg.support_threshold is None else cfg.support_threshold
        vals = signal_values(signal, candidates, rerank, self.answerability)
        if not vals:
            return GateDecision(False, NO_VALID_SCORES, signal, None, threshold, 0, cfg.min_supporting)
        top = vals[0]
        n_sup = sum(1 for v in vals if v >= support)
        shown = tuple(round(v, 6) for v in vals[:10])
        if top < threshold:
            return GateDecision(False, BELOW_THRESHOLD, signal, top, threshold, n_sup, cfg.min_supporting, shown)
        if n_sup < cfg.min_supporting:
            return GateDecision(False, TOO_FEW_SUPPORTING, signal, top, threshold, n_sup, cfg.min_supporting, shown)
        return GateDecision(True, ANSWER, signal, top, threshold, n_sup, cfg.min_supporting, shown)

    def threshold_key(self, candidates: Sequence[Candidate], rerank: RerankResult | None = None, *,
                      language: str | None = None) -> tuple[str, str]:
        """(signal, config key of its threshold) for this question: ``gate.fallback_threshold`` when
        the reranker-based signal cannot be used, else ``gate.language_thresholds.<pair>`` for the
        pair (query language, language of the candidate with the best value of the signal),
        ``gate.language_thresholds.<language>``, or ``gate.threshold``. ``rag calibrate`` fits per key."""
        signal, key = active_signal(self.config, rerank)
        if language is None and rerank is not None:
            language = rerank.language
        table = self.config.language_thresholds
        if key != "gate.threshold" or not language or not table:
            return signal, key
        if any(k.startswith(language + "-") for k in table):
            text = _best_text(signal, candidates, rerank)
            if text is not None and (pair := f"{language}-{detect_language(text)}") in table:
                return signal, f"gate.language_thresholds.{pair}"
        return signal, f"gate.language_thresholds.{language}" if language in table else key


def _best_text(signal: str, candidates: Sequence[Candidate], rerank: RerankResult | None) -> str | None:
    """The text of the candidate with the highest value of ``signal`` (for ``answerability``, one
    value per question, the reranker's probability picks it); None when none has a value."""
    scored = _scored("probability" if signal == "answerability" else signal, candidates, rerank)
    return max(scored, key=lambda x: x[0])[1].chunk.text if scored else None
