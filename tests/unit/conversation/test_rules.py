"""The deterministic follow-up resolver (rag.conversation.rules)."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from rag.conversation import RulesResolver, dependence
from rag.conversation.rules import changed_values, elliptical
from rag.types import Turn

DEMO = Path(__file__).resolve().parents[3] / "data" / "demo" / "questions.jsonl"
LEAVE = [Turn("user", "연차 휴가는 며칠인가요?"),
         Turn("assistant", "「근로기준법」 제60조에 따라 1년간 80퍼센트 이상 출근한 근로자에게 15일의 유급휴가를 줍니다.")]
VACATION = [Turn("user", "How many vacation days do new employees get?"), Turn("assistant", "15 days in the first year.")]
STANDALONE = [
    "육아휴직은 자녀 한 명당 최대 몇 년까지 할 수 있나요?",
    "가족수당은 부양가족 몇 명까지 나오나요? 아이가 다섯이면요?",
    "출산한 지 6개월 된 직원에게 밤 10시까지 야근을 시킬 수 있나요?",
    "재계약할 때 집주인이 보증금이나 월세를 얼마까지 올릴 수 있나요?",
    "How often must passwords be changed?",
    "Who approves expenses over 5,000,000 won?",
    "If a civil servant dies during a domestic business trip, how much travel allowance may be paid?",
]


def _demo_questions() -> list[str]:
    return [json.loads(line)["question"] for line in DEMO.read_text(encoding="utf-8").splitlines() if line.strip()]


@pytest.mark.parametrize("question", STANDALONE + _demo_questions())
def test_a_question_that_stands_alone_is_never_changed(question):
    for history in (LEAVE, VACATION, ()):
        r = RulesResolver().resolve(question, history)
        assert r.question == question and r.standalone and r.method == "none"


@pytest.mark.parametrize("question, expected", [
    ("그럼 신입사원은요?", "신입사원은 연차 휴가는 며칠인가요?"),
    ("신입사원은요?", "신입사원은 연차 휴가는 며칠인가요?"),
    ("만약 30일이면요?", "30일이면 연차 휴가는 며칠인가요?"),
    ("시행령에는요?", "시행령에는 연차 휴가는 며칠인가요?"),
])
def test_an_ellipsis_is_completed_by_the_previous_question_its_own_words_first(question, expected):
    r = RulesResolver().resolve(question, LEAVE)
    assert not r.standalone and r.method == "rules"
    assert r.question.startswith(expected)
    assert r.carried[0] == "연차 휴가는 며칠인가요?"


def test_a_question_that_refers_back_gets_the_topic_terms_it_lacks_and_the_cited_law():
    r = RulesResolver().resolve("그건 언제까지 써야 하나요?", LEAVE)
    assert r.question == "그건 언제까지 써야 하나요? 연차 휴가 근로기준법"
    assert r.carried == ("연차", "휴가", "근로기준법") and "그건" in r.reason


def test_english_follow_ups_carry_words_as_written():
    r = RulesResolver()
    assert r.resolve("What about part-timers?", VACATION).question == (
        "part-timers How many vacation days do new employees get?")
    assert r.resolve("Can they carry it over?", VACATION).question == (
        "Can they carry it over? vacation days new employees")


def test_earlier_follow_ups_are_resolved_first():
    history = [*LEAVE, Turn("user", "신입사원은요?"), Turn("assistant", "1개월 개근 시 1일입니다.")]
    r = RulesResolver().resolve("그건 언제까지 써야 하나요?", history)
    assert r.question.startswith("그건 언제까지 써야 하나요? 신입사원")
    assert "연차" in r.question


def test_no_earlier_user_turn_means_nothing_to_carry():
    r = RulesResolver().resolve("그건 며칠이에요?", [Turn("assistant", "안녕하세요")])
    assert r.question == "그건 며칠이에요?" and r.standalone and r.reason == "no earlier question"


@pytest.mark.parametrize("question", ["그건 며칠이에요?", "거기서는 얼마예요?", "그 경우 누가 승인하나요?", "And contractors?",
                                      "Is it paid?", "그럼 병가는요?"])
def test_dependence_names_why(question):
    assert dependence(question)


def test_resolution_json_names_what_was_asked_and_used():
    r = RulesResolver().resolve("신입사원은요?", LEAVE)
    j = r.to_json()
    assert j["asked"] == "신입사원은요?" and j["question"] == r.question and j["method"] == "rules"
    assert j["carried"] == list(r.carried) and j["standalone"] is False


@pytest.mark.parametrize("question", [
    "그 수당을 거짓으로 타면 어떻게 돼요?", "시행령에서는 어떻게 정하고 있어요?", "그렇게 걸리면 징계는 어느 정도 받아요?",
    "반대로 세입자 쪽은 언제까지 알려야 해요?", "남편도 육아휴직하면 그쪽은 얼마 받아요?", "부모님은 몇 살 이상이어야 거기 들어가요?",
    "그럼 서울 출장이면 1박 상한이 얼마예요?",
])
def test_follow_ups_that_point_back_mid_sentence_or_name_an_unnamed_decree(question):
    assert dependence(question)


def test_that_noun_pointing_inside_the_question_is_not_a_reference_back():
    q = "가상자산 이용자 예치금을 맡은 관리기관은 그 예치금을 어떤 방법으로 운용할 수 있나요?"
    assert dependence(q) == "" and RulesResolver().resolve(q, LEAVE).question == q


SERVICE = [Turn("user", "근속 15년 차 공무원인데 장기재직휴가는 며칠 받을 수 있나요?"), Turn("assistant", "10일입니다.")]
RENT = [Turn("user", "재계약할 때 집주인이 보증금이나 월세를 얼마까지 올릴 수 있나요?"),
        Turn("assistant", "「주택임대차보호법」 제7조에 따라 20분의 1의 금액을 초과하지 못합니다.")]


def test_a_changed_condition_replaces_the_earlier_value_of_its_unit():
    r = RulesResolver().resolve("만약 25년 근무했으면요?", SERVICE)
    assert r.question == "25년 근무했으면 근속 25년 차 공무원인데 장기재직휴가는 며칠 받을 수 있나요?"
    assert "15년" not in r.question


@pytest.mark.parametrize("core, previous, expected", [
    ("30일이면", "연차 휴가는 며칠인가요?", "연차 휴가는 며칠인가요?"),  # nothing to replace
    ("10만 원이면", "월세 3만원이면 얼마", "월세 10만 원이면 얼마"),  # the unit written with or without a space
    ("10만 원이면", "보증금 5만원 월세 3만 원이면", "보증금 5만원 월세 3만 원이면"),  # two: which one changed is unknown
    ("6개월이면", "3년 근무하고 2개월 쉬면", "3년 근무하고 6개월 쉬면"),  # 개월 is not 년
])
def test_changed_values_only_where_the_unit_is_unambiguous(core, previous, expected):
    assert changed_values(core, previous) == expected


def test_a_decree_asked_about_without_its_law_gets_the_law_named_before_joined_to_it():
    r = RulesResolver().resolve("시행령에서는 어떻게 정하고 있어요?", RENT)
    assert r.question.endswith("주택임대차보호법 시행령") and r.carried[-1] == "주택임대차보호법 시행령"
    asked_in_question = [Turn("user", "주택임대차보호법상 확정일자 받을 때 돈을 내야 하나요?"), Turn("assistant", "네.")]
    assert RulesResolver().resolve("시행령에는 면제되는 사람도 있어요?", asked_in_question).question.endswith(
        "주택임대차보호법 시행령")


@pytest.mark.parametrize("question, own_ending", [
    ("필수실무관으로 지정되면 거기에 더 붙는 게 있어요?", "있어요?"),
    ("그럼 막기 전에 저한테 미리 알려줘야 하는 거 아니에요?", "아니에요?"),
    ("시행령에는 면제되는 사람도 있어요?", "있어요?"),
])
def test_a_yes_no_follow_up_with_a_predicate_of_its_own_keeps_its_ask(question, own_ending):
    """It gets the earlier topic, never the earlier question's ask (며칠: a number of days), which
    would make a number the answer to a yes-or-no question."""
    r = RulesResolver().resolve(question, LEAVE)
    assert not r.standalone and own_ending in r.question
    assert "며칠" not in r.question and "연차" in r.carried and "휴가" in r.carried
    assert not elliptical(question)


@pytest.mark.parametrize("question", ["그럼 신입사원은요?", "만약 30일이면요?", "그럼 퇴근은 몇 시예요?", "그럼 상가도 똑같이 2년이에요?",
                                      "What about part-timers?"])
def test_an_ellipsis_or_a_question_without_a_predicate_of_its_own_takes_the_earlier_ask(question):
    assert elliptical(question)
    assert "며칠" in RulesResolver().resolve(question, LEAVE).question
