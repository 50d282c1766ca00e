"""One reading of a question: key terms (not the interrogative, the politeness or generic words),
the asked kind, grain and counter, and the parts of a question that asks several things."""
from __future__ import annotations

import pytest

from rag.text import question_analysis as qa
from rag.text.question_analysis import analyze_question


def forms(question: str) -> list[str]:
    return [t.form for t in analyze_question(question).key_terms]


def test_korean_key_terms_are_content_morphemes_without_the_interrogative_or_politeness():
    assert forms("재택근무는 일주일에 며칠까지 할 수 있나요?") == ["재택근무"]
    assert forms("출장 갔다 와서 KTX 요금이랑 호텔비 정산은 며칠 안에 신청해야 하나요?") == [
        "출장", "ktx", "요금", "호텔비", "정산", "신청"]
    # the nouns of one written word are one compound, its particle stripped
    assert forms("아파트 층간소음 기준은 몇 데시벨인가요?") == ["아파트", "층간소음"]
    assert forms("지구은 얼마나 빨리 움직이나?")[0] == "지구"
    assert "비잔티움제국" in forms("비잔티움 제국은 언제 끝났어?")  # matched with whitespace removed


def test_english_key_terms_are_stems_without_the_asked_unit():
    assert forms("How many days a week can I work from home?") == ["work", "home"]
    assert forms("Are expenses of any amount approved automatically?") == ["expens", "amount", "approv", "automat"]


def test_the_asked_kind_grain_and_counter():
    a = analyze_question("출장 정산 신청은 몇 시간 안에 해야 하나요?")
    assert (a.kind, a.grain) == ("deadline", "hours")
    assert analyze_question("육아휴직은 최대 몇 년까지 할 수 있나요?").grain == "years"
    assert analyze_question("기록은 얼마 동안 보관하나요?").grain == ""  # the wording does not say
    assert analyze_question("공무원 재산등록은 몇 급부터 해야 하나요?").counter == "급"
    # a question with no interrogative that ends like a yes/no one is yes/no, whatever nouns it names
    assert analyze_question("저희 부부가 둘 다 공무원인데 가족수당을 각자 받을 수 있나요?").kind == "yesno"
    assert analyze_question("가족수당은 얼마인가요?").kind == "amount"


def test_a_question_of_several_parts():
    a = analyze_question("하루 몇 시간, 일주일에 몇 시간까지 일할 수 있나요?")
    assert [(p.kind, p.grain) for p in a.parts] == [("period", "hours"), ("period", "hours")]
    b = analyze_question("가상자산사업자 신고는 어디에 하고 신고 유효기간은 몇 년인가요?")
    assert [p.kind for p in b.parts] == ["who", "period"]
    assert analyze_question("연차 휴가는 며칠인가요?").parts == ()


def test_coverage_and_the_asked_fact():
    a = analyze_question("설날 명절휴가비는 월봉급액의 몇 %를 주나요?")
    assert a.coverage("명절휴가비는 설날과 추석에 월봉급액의 60퍼센트를 지급한다.") == 1.0
    assert a.coverage("연가보상비는 퇴직일 전일의 월봉급액으로 계산한다.") == pytest.approx(1 / 3)
    assert a.holds_asked_fact("월봉급액의 60퍼센트") and not a.holds_asked_fact("설날과 추석에 지급한다")
    # a compound not found whole counts 0.4 of the share of its pieces found
    b = analyze_question("최우선변제 받는 소액임차인 기준이 얼마예요?")
    assert b.coverage("우선변제를 받을 임차인") == pytest.approx((0.4 * 1.0 + 0.4 * 0.5) / 2)
    hours = analyze_question("하루 몇 시간 일하나요?")
    assert hours.holds_asked_fact("1일 8시간") and not hours.holds_asked_fact("2주일 이내")
    years = analyze_question("최대 몇 년까지 할 수 있나요?")
    assert years.holds_asked_fact("18개월 이내") and not years.holds_asked_fact("연 60일의 범위")
    assert not years.holds_asked_fact("매년 3월 31일까지")  # a date is not a length of time


def test_without_the_morphological_analyzer_words_lose_their_particles(monkeypatch):
    monkeypatch.setattr(qa, "korean_morphemes", lambda text: None)
    analyze_question.cache_clear()
    try:
        assert forms("재택근무는 일주일에 며칠까지 할 수 있나요?")[0] == "재택근무"
        assert "호텔비" in forms("출장 갔다 와서 KTX 요금이랑 호텔비 정산은 며칠 안에 신청해야 하나요?")
    finally:
        analyze_question.cache_clear()


def test_a_long_stay_is_not_a_question_of_period():
    from rag.text.questions import wanted_fact

    assert wanted_fact("같은 곳에 장기간 체재하면 일비는 얼마를 빼고 지급하나요?") == "amount"  # 장기간: an adverb
    assert wanted_fact("기간제 근로자의 수당은 얼마인가요?") == "amount"  # 기간제: a kind of contract
    assert wanted_fact("출산휴가 기간은 얼마나 되나요?") == "period"
