"""How well the best candidates fit what the question asks: the gate's reading of the question.

The retrieval scores say the candidates are *near* the question; these say whether they hold what
it asks (:func:`rag.text.question_analysis.analyze_question` reads the question once):

- ``coverage``: the best weighted share of the question's key terms found in one of the top
  ``read_top`` candidates (its text with its locator and headings);
- ``missing``: the key terms none of those candidates holds, heaviest first;
- ``asked_fact``: whether one of them states the asked kind of fact (a period for 며칠, an amount
  for 얼마; ``None`` when the question is not numeric), for every numeric part of a several-part
  question;
- ``topic_missing``: the question's topic terms (the nouns it marks with 은/는:
  :attr:`~rag.text.question_analysis.QuestionAnalysis.topics`) when none of those candidates holds
  any of them, not even by its head or a stem (:func:`~rag.text.question_analysis.stem_found`): the
  evidence does not speak of what the question is about (a follow-up completed by the question
  before it carries that question's topic too: one topic spoken of is enough);
- ``followup_missing``: for a follow-up (``followup``: the question as asked, before the earlier
  turns completed it), its own nouns when none of them is spoken of: the evidence may speak only
  of what was asked before (``남편 쪽은요?`` after a question on 출산휴가, read against a passage on
  출산휴가 that never names a 남편); the gate stops on it only with ``gate.require_followup_terms``
  (a user's own word for what the corpus names otherwise, ``신입사원`` for ``입사 첫해 직원``, is
  silent too);
- ``cross_language``: the question's language is not the best candidate's (the lexical readings
  then say nothing, and the gate does not use them);
- ``dense_margin`` and ``agree``: the gap between the two best dense cosines, and whether the
  dense and BM25 retrievers' best candidates are the same (reported, for calibration).

:func:`explain` says in the question's language, in words a user can read, why the gate answered
or stopped ("질문의 핵심어 '재택근무'가 근거에 없음").
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Sequence

from rag.rerank.answerability import best_hit
from rag.lang import OTHER, detect_language
from rag.lang.en import evidence as en_evidence
from rag.lang.ko import KOREAN
from rag.lang.ko import evidence as ko_evidence
from rag.text.question_analysis import QuestionAnalysis, analyze_question, holds_fact, states_counter
from rag.types import Candidate


@dataclass(frozen=True)
class EvidenceFit:
    coverage: float
    missing: tuple[str, ...]
    asked_fact: bool | None
    cross_language: bool
    key_terms: int
    kind: str
    dense_margin: float | None = None
    agree: bool | None = None
    topic_missing: tuple[str, ...] = ()
    followup_missing: tuple[str, ...] = ()

    def to_json(self) -> dict:
        return {"coverage": round(self.coverage, 4), "missing": list(self.missing), "asked_fact": self.asked_fact,
                "cross_language": self.cross_language, "key_terms": self.key_terms, "kind": self.kind,
                "dense_margin": None if self.dense_margin is None else round(self.dense_margin, 6),
                "agree": self.agree, "topic_missing": list(self.topic_missing),
                "followup_missing": list(self.followup_missing)}


def _readable(c: Candidate) -> str:
    ch = c.chunk
    return " ".join(x for x in (ch.text, ch.locator, ch.title, *ch.heading_path) if x)


def evidence_fit(question: str | QuestionAnalysis, candidates: Sequence[Candidate], read_top: int,
                 followup: str | None = None) -> EvidenceFit:
    """The fit of the first ``read_top`` candidates (in their final order) to ``question``;
    ``followup``: a follow-up as asked, when ``question`` is its completed form."""
    asked = question if isinstance(question, QuestionAnalysis) else analyze_question(question)
    top = list(candidates[:read_top])
    texts = [_readable(c) for c in top]
    coverage = max((asked.coverage(t) for t in texts), default=0.0) if asked.key_terms else 1.0
    joined = " ".join(texts)
    missing = tuple(t.form for t in asked.missing(joined))
    kinds = asked.asked_numbers
    asked_fact = all(any(holds_fact(p.kind, p.grain, c.chunk.text) for c in top) for p in kinds) if kinds else None
    if asked.counter:
        asked_fact = (asked_fact is not False) and any(states_counter(asked.counter, c.chunk.text) for c in top)
    cross = bool(top) and detect_language(top[0].chunk.text) not in (asked.language, OTHER)
    dense = sorted((h.score for c in candidates if (h := c.hit("dense")) is not None and math.isfinite(h.score)),
                   reverse=True)
    _, dense_id = best_hit(candidates, "dense")
    _, bm25_id = best_hit(candidates, "bm25")
    margin = dense[0] - dense[1] if len(dense) >= 2 else None
    agree = dense_id == bm25_id if dense_id is not None and bm25_id is not None else None
    own = analyze_question(followup).silent_nouns(texts) if followup is not None else ()
    return EvidenceFit(coverage, missing, asked_fact, cross, len(asked.key_terms), asked.kind, margin, agree,
                       asked.silent_topics(texts), own)


def explain(reason: str, fit: EvidenceFit | None, language: str, *, top: float | None = None,
            threshold: float | None = None) -> str:
    """Why the gate answered or stopped, in the question's language (Korean, else English)."""
    say = ko_evidence if language == KOREAN.code else en_evidence
    terms = ", ".join(f"'{t}'" for t in (fit.missing[:3] if fit else ()))
    if reason == "key_terms_missing" and fit is not None:
        return say.KEY_TERMS_MISSING.format(terms=terms, coverage=fit.coverage)
    if reason == "topic_missing" and fit is not None:
        topic = ", ".join(f"'{t}'" for t in (fit.topic_missing or fit.followup_missing)[:3])
        return say.TOPIC_MISSING.format(topic=topic)
    if reason == "asked_fact_missing" and fit is not None:
        return say.ASKED_FACT_MISSING.format(kind=say.KIND_OBJECT.get(fit.kind, say.FACT_OBJECT))
    if reason in ("below_threshold", "too_few_supporting") and top is not None and threshold is not None:
        return say.BELOW_THRESHOLD.format(top=top, threshold=threshold)
    if reason == "no_candidates":
        return say.NO_CANDIDATES
    if reason == "answer":
        parts = []
        if top is not None and threshold is not None:
            parts.append(say.SCORE_PASSED.format(top=top, threshold=threshold))
        if fit is not None and fit.key_terms and not fit.cross_language:
            parts.append(say.COVERAGE.format(coverage=fit.coverage))
        if fit is not None and fit.asked_fact:
            parts.append(say.ASKED_FACT_FOUND.format(kind=say.KIND_SUBJECT.get(fit.kind, say.FACT_SUBJECT)))
        return say.ANSWERED_WITH + "; ".join(parts) if parts else say.ANSWERED
    return reason
