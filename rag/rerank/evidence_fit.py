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
from rag.lang import detect_language
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
    cross = bool(top) and detect_language(top[0].chunk.text) not in (asked.language, "other")
    dense = sorted((h.score for c in candidates if (h := c.hit("dense")) is not None and math.isfinite(h.score)),
                   reverse=True)
    _, dense_id = best_hit(candidates, "dense")
    _, bm25_id = best_hit(candidates, "bm25")
    margin = dense[0] - dense[1] if len(dense) >= 2 else None
    agree = dense_id == bm25_id if dense_id is not None and bm25_id is not None else None
    own = analyze_question(followup).silent_nouns(texts) if followup is not None else ()
    return EvidenceFit(coverage, missing, asked_fact, cross, len(asked.key_terms), asked.kind, margin, agree,
                       asked.silent_topics(texts), own)


# the asked kind in Korean, with its object and its subject particle
_KIND_KO = {"deadline": ("기한을", "기한이"), "period": ("기간을", "기간이"), "amount": ("금액을", "금액이"),
            "ratio": ("비율을", "비율이"), "count": ("수를", "수가")}
_KIND_EN = {"deadline": "deadline", "period": "period", "amount": "amount", "ratio": "rate", "count": "number"}


def explain(reason: str, fit: EvidenceFit | None, language: str, *, top: float | None = None,
            threshold: float | None = None) -> str:
    """Why the gate answered or stopped, in the question's language (Korean, else English)."""
    ko = language == "ko"
    terms = ", ".join(f"'{t}'" for t in (fit.missing[:3] if fit else ()))
    if reason == "key_terms_missing" and fit is not None:
        return (f"질문의 핵심어 {terms}가 근거에 없음 (핵심어 포함률 {fit.coverage:.0%})" if ko else
                f"the question's key terms {terms} are not in the evidence (coverage {fit.coverage:.0%})")
    if reason == "topic_missing" and fit is not None:
        topic = ", ".join(f"'{t}'" for t in (fit.topic_missing or fit.followup_missing)[:3])
        return (f"질문의 주제어 {topic}가 근거에 없음" if ko else
                f"the question's topic {topic} is not in the evidence")
    if reason == "asked_fact_missing" and fit is not None:
        return (f"질문이 묻는 {_KIND_KO.get(fit.kind, ('사실을', ''))[0]} 밝힌 근거가 없음" if ko else
                f"no evidence states the {_KIND_EN.get(fit.kind, 'fact')} the question asks for")
    if reason in ("below_threshold", "too_few_supporting") and top is not None and threshold is not None:
        return (f"가장 관련 있는 근거의 점수 {top:.3f}가 기준 {threshold:.3f}보다 낮음" if ko else
                f"the best evidence scores {top:.3f}, below the threshold {threshold:.3f}")
    if reason == "no_candidates":
        return "검색된 근거가 없음" if ko else "no evidence was found"
    if reason == "answer":
        parts = []
        if top is not None and threshold is not None:
            parts.append(f"점수 {top:.3f} ≥ 기준 {threshold:.3f}" if ko else f"score {top:.3f} ≥ threshold {threshold:.3f}")
        if fit is not None and fit.key_terms and not fit.cross_language:
            parts.append(f"핵심어 포함률 {fit.coverage:.0%}" if ko else f"key-term coverage {fit.coverage:.0%}")
        if fit is not None and fit.asked_fact:
            parts.append(f"묻는 {_KIND_KO.get(fit.kind, ('', '사실이'))[1]} 근거에 있음" if ko else
                         f"the asked {_KIND_EN.get(fit.kind, 'fact')} is in the evidence")
        return ("답변함: " if ko else "answered: ") + "; ".join(parts) if parts else ("답변함" if ko else "answered")
    return reason
