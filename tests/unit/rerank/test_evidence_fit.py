"""The gate reads the question: after the score passed, the best candidates must hold the asked kind
of fact and enough of the question's key terms, and every decision says why in words."""
from __future__ import annotations

from rag.config import GateConfig
from rag.rerank import Gate
from rag.rerank.evidence_fit import evidence_fit
from rag.types import Candidate, Chunk, RetrieverHit

ORIENTATION = "New hires attend a two-day orientation in their first week."
REMOTE = "Employees may work from home up to two days a week with their team lead's approval."


def cand(i: int, text: str, dense: float, section: str = "") -> Candidate:
    ch = Chunk(f"d{i}:1:0", f"d{i}", "1", 0, text, 0, len(text), locator=section)
    return Candidate(ch, dense, i + 1, (RetrieverHit("bm25", i + 1, 1.0), RetrieverHit("dense", i + 1, dense)))


GATE = Gate(GateConfig(signal="dense", threshold=0.8, fallback_signal="dense", fallback_threshold=0.8,
                       min_coverage=0.25))


def test_a_question_whose_key_terms_no_candidate_holds_is_stopped_with_a_reason_people_can_read():
    q = "How many days a week can I work from home?"
    d = GATE.decide([cand(0, ORIENTATION, 0.9)], question=q)
    assert (d.answer, d.reason) == (False, "key_terms_missing")
    assert d.fit is not None and d.fit.coverage == 0.0 and "home" in d.fit.missing
    assert "home" in d.explanation and "not in the evidence" in d.explanation
    ok = GATE.decide([cand(0, ORIENTATION, 0.9), cand(1, REMOTE, 0.85)], question=q)
    assert ok.answer and ok.reason == "answer" and ok.fit.coverage == 1.0
    assert ok.to_json()["fit"]["coverage"] == 1.0 and ok.explanation.startswith("answered")


def test_a_korean_question_is_explained_in_korean():
    d = GATE.decide([cand(0, "신입사원은 첫 주에 이틀간 오리엔테이션에 참석한다.", 0.9)], question="재택근무는 일주일에 며칠까지 할 수 있나요?")
    assert d.reason == "key_terms_missing"
    assert d.explanation.startswith("질문의 핵심어 '재택근무'") and "근거에 없음" in d.explanation


def test_a_numeric_question_needs_a_candidate_that_states_the_asked_kind():
    q = "확정일자 받을 때 수수료는 얼마 내야 하나요?"
    no_amount = [cand(0, "확정일자는 주택 소재지의 읍ㆍ면사무소에서 부여한다.", 0.9, "제3조의6 (확정일자 부여)")]
    d = GATE.decide(no_amount, question=q)
    assert (d.answer, d.reason) == (False, "asked_fact_missing")
    assert "금액" in d.explanation
    with_amount = no_amount + [cand(1, "확정일자 부여 수수료는 600원으로 한다.", 0.85)]
    assert GATE.decide(with_amount, question=q).answer


def test_a_cross_language_question_is_not_held_to_its_words():
    fit = evidence_fit("How much is the monthly meal allowance?", [cand(0, "정액급식비는 월 16만원으로 한다.", 0.9)], 5)
    assert fit.cross_language and fit.asked_fact is True
    assert GATE.decide([cand(0, "정액급식비는 월 16만원으로 한다.", 0.9)],
                       question="How much is the monthly meal allowance?").answer


def test_without_the_question_or_with_reading_off_the_scores_alone_decide():
    cands = [cand(0, ORIENTATION, 0.9)]
    assert GATE.decide(cands).answer and GATE.decide(cands).fit is None
    off = Gate(GateConfig(signal="dense", threshold=0.8, fallback_signal="dense", fallback_threshold=0.8,
                          read_question=False))
    d = off.decide(cands, question="How many days a week can I work from home?")
    assert d.answer and d.fit is None and d.explanation.startswith("answered")


def test_a_score_below_the_threshold_keeps_its_reason_and_says_it():
    d = GATE.decide([cand(0, REMOTE, 0.5)], question="How many days a week can I work from home?")
    assert (d.answer, d.reason) == (False, "below_threshold")
    assert "below the threshold" in d.explanation
