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


PENSION = "공무원연금 가입자인 연구직공무원의 연구업무수당은 월급의 7.8퍼센트로 한다."


def test_a_question_whose_topic_no_candidate_speaks_of_is_stopped():
    q = "공무원연금 기여금은 월급에서 몇 퍼센트를 떼가요?"  # 기여금 is marked as the topic
    d = GATE.decide([cand(0, PENSION, 0.9, "제5조 (연구업무수당)")], question=q)
    assert (d.answer, d.reason) == (False, "topic_missing")
    assert d.fit.topic_missing == ("기여금",) and d.stopped_by_reading
    assert d.explanation == "질문의 주제어 '기여금'가 근거에 없음"
    ok = GATE.decide([cand(0, "공무원의 기여금은 기준소득월액의 1천분의 90으로 한다.", 0.9)], question=q)
    assert ok.answer and ok.fit.topic_missing == ()
    off = Gate(GateConfig(signal="dense", threshold=0.8, fallback_signal="dense", fallback_threshold=0.8,
                          min_coverage=0.25, require_topic=False))
    assert off.decide([cand(0, PENSION, 0.9, "제5조 (연구업무수당)")], question=q).answer


def test_a_topic_is_found_by_its_pieces_or_stem_and_only_nouns_marked_with_the_topic_particle_count():
    # 출장비 is not written in the statute, its stem 출장 is: the evidence speaks of it
    trip = [cand(0, "근무지 내 출장의 경우 4시간 미만인 공무원에게는 1만원을 지급한다.", 0.9)]
    assert GATE.decide(trip, question="3시간 외근 출장을 다녀오면 출장비는 얼마 받나요?").answer
    # 호텔비 is no topic here (marked with 가, not 은/는): a paraphrase the key-term coverage judges
    stay = [cand(0, "숙박비 상한액의 10분의 3을 넘지 아니하는 범위에서 추가로 지급할 수 있다.", 0.9)]
    fit = evidence_fit("출장지 호텔비가 숙박비 상한보다 비싸면 얼마까지 더 받나요?", stay, 5)
    assert fit.topic_missing == ()


def test_a_compound_topic_is_found_by_its_head_not_by_a_modifier():
    # Korean compounds are right-headed: 임차인 speaks of 소액임차인, 육아 (in 육아시간) does not of 육아휴직
    tenant = [cand(0, "임차인은 보증금 중 5천만원을 다른 담보물권자보다 우선하여 변제받을 권리가 있다.", 0.9)]
    assert GATE.decide(tenant, question="소액임차인은 보증금을 얼마까지 먼저 돌려받나요?").answer
    care = [cand(0, "공무원은 자녀가 36개월 이하인 경우 육아시간을 사용할 수 있다.", 0.9)]
    d = GATE.decide(care, question="공무원 육아휴직은 자녀 한 명당 최대 몇 년까지 할 수 있나요?")
    assert (d.answer, d.reason) == (False, "topic_missing") and d.fit.topic_missing == ("육아휴직",)
    leave = [cand(0, "공무원은 자녀 1명에 대하여 3년 이내의 휴직을 할 수 있다.", 0.9)]
    assert GATE.decide(leave, question="공무원 육아휴직은 자녀 한 명당 최대 몇 년까지 할 수 있나요?").answer


def test_a_stem_made_into_another_noun_does_not_speak_of_the_topic():
    # 이용료 is not in the statute; 이용 is, but only as 이용자 (another noun of the stem)
    deposit = [cand(0, "예치금은 이용자별 예치금 총액의 100분의 100 이상으로 한다.", 0.9)]
    d = GATE.decide(deposit, question="거래소에 넣어둔 예치금에 대한 이용료는 연 몇 퍼센트를 줘야 하나요?")
    assert (d.answer, d.reason) == (False, "topic_missing") and d.fit.topic_missing == ("이용료",)
    fee = [cand(0, "예치금 이용료는 연 100분의 1 이상으로 한다.", 0.9)]
    assert GATE.decide(fee, question="거래소에 넣어둔 예치금에 대한 이용료는 연 몇 퍼센트를 줘야 하나요?").answer
    # the stem followed by a particle or the end of the text still speaks of it
    trip = [cand(0, "근무지 내 출장을 하는 공무원에게는 1만원을 지급한다.", 0.9)]
    assert GATE.decide(trip, question="3시간 외근 출장을 다녀오면 출장비는 얼마 받나요?").answer


MATERNITY = "임신 중인 공무원은 출산 전과 출산 후를 통하여 90일의 출산휴가를 사용할 수 있다."


STRICT = Gate(GateConfig(signal="dense", threshold=0.8, fallback_signal="dense", fallback_threshold=0.8,
                         min_coverage=0.25, require_followup_terms=True))


def test_a_follow_up_whose_own_words_the_evidence_never_speaks_of_is_stopped_when_asked_to():
    """The completed question carries the earlier topic (출산휴가), so its own reading passes; the
    follow-up as asked (남편) is what the evidence must speak of too (``require_followup_terms``;
    off by default, where it is only reported)."""
    completed = "남편 쪽은 출산휴가는 며칠인가요?"
    evidence = [cand(0, MATERNITY, 0.9)]
    assert STRICT.decide(evidence, question=completed).reason == "answer"  # without the follow-up: answered
    d = STRICT.decide(evidence, question=completed, followup="남편 쪽은요?")
    assert (d.answer, d.reason) == (False, "topic_missing") and d.fit.followup_missing == ("남편",)
    assert "'남편'" in d.explanation and d.to_json()["fit"]["followup_missing"] == ["남편"]
    default = GATE.decide(evidence, question=completed, followup="남편 쪽은요?")
    assert default.answer and default.fit.followup_missing == ("남편",)
    spouse = [cand(0, MATERNITY, 0.9), cand(1, "남편인 공무원은 배우자가 출산하면 20일의 출산휴가를 받는다.", 0.88)]
    assert STRICT.decide(spouse, question=completed, followup="남편 쪽은요?").answer


def test_a_follow_up_with_no_noun_of_its_own_or_only_a_verb_noun_is_read_as_before():
    completed = "만약 25년 근무했으면 근속 25년 차 공무원인데 장기재직휴가는 며칠인가요?"
    evidence = [cand(0, "재직기간이 20년 이상인 공무원에게는 20일의 장기재직휴가를 준다.", 0.9)]
    for followup in ("만약 25년 근무했으면요?", "만약 70일째면요?", "그럼요?"):
        d = STRICT.decide(evidence, question=completed, followup=followup)
        assert d.answer and d.fit.followup_missing == (), followup


def test_a_verb_noun_is_one_the_question_writes_joined_to_hada_not_one_before_another_word():
    from rag.text.question_analysis import analyze_question

    assert analyze_question("만약 25년 근무했으면요?").silent_nouns([MATERNITY]) == ()
    assert analyze_question("남편 한 명만 쓰면요?").silent_nouns([MATERNITY]) == ("남편",)
