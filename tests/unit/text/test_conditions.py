"""The brackets of a statute read against the numbers a question states (rag.text.conditions)."""
from __future__ import annotations

import pytest

from rag.text.conditions import against_limit, asked_limit, asks_bound, bound_groups, bracket, echoes, given_values, meets
from rag.text.facts import extract_quantities

DAILY = ("같은 곳에 장기간 체재하는 경우의 일비는 15일을 초과한 경우에는 정액의 10분의 1에 상당한 액을, 30일을 초과한 "
         "경우에는 정액의 10분의 2에 상당한 액을, 60일을 초과한 경우에는 정액의 10분의 3에 상당한 금액을 빼고 지급한다.")


def test_a_question_states_its_numbers_with_the_side_it_puts_them_on():
    (g,) = given_values("코인 시세조종으로 50억원 넘게 벌면 징역이 얼마나 되나요?")
    assert g.quantity.text == "50억원" and g.side == 1
    (g,) = given_values("한 지역에 40일째 장기 체류 출장 중인데 일비가 줄어드나요?")
    assert g.quantity.text == "40일" and g.side == 0
    assert given_values("병가는 며칠까지 가능해요?") == ()  # what is asked has no number


def test_bounds_written_next_to_each_other_are_one_range():
    groups = bound_groups("재직기간이 10년 이상 20년 미만인 공무원: 5일")
    assert [[(b.quantity.text, b.op) for b in g.bounds] for g in groups] == [[("10년", "ge"), ("20년", "lt")]]
    groups = bound_groups("육아휴직 4개월째부터 6개월째까지: 200만원")
    assert [[b.op for b in g.bounds] for g in groups] == [["ge", "le"]]
    assert bound_groups("신청 후 2주일 이내에 지급한다.") == ()  # a deadline is not a bound on the case


@pytest.mark.parametrize(("question", "text", "applies"), [
    ("근속 15년 차인데 장기재직휴가는 며칠이에요?", "재직기간이 10년 이상 20년 미만인 공무원: 5일", True),
    ("근속 15년 차인데 장기재직휴가는 며칠이에요?", "재직기간이 20년 이상인 공무원: 10일", False),
    ("같은 시 안에서 3시간 외근하면 출장비는 얼마예요?", "출장 여행시간이 4시간 이상인 공무원에게는 2만원을 지급한다.", False),
    ("코인 시세조종으로 50억원 넘게 벌면 징역이 얼마나 되나요?", "손실액이 50억원 이상인 경우: 무기 또는 5년 이상의 징역", True),
    ("코인 시세조종으로 50억원 넘게 벌면 징역이 얼마나 되나요?", "손실액이 5억원 이상 50억원 미만인 경우: 3년 이상의 유기징역", False),
    ("근속 15년 차인데 장기재직휴가는 며칠이에요?", "출장 여행시간이 4시간 이상인 공무원에게는 2만원을 지급한다.", None),
    ("장기재직휴가는 며칠이에요?", "재직기간이 20년 이상인 공무원: 10일", None),
])
def test_a_bracket_applies_when_the_questions_number_falls_in_it(question, text, applies):
    assert bracket(text, given_values(question)).applies is applies


def test_of_two_brackets_the_number_falls_in_the_tighter_is_the_cases():
    given = given_values("40일째 체류 중인데 일비가 얼마나 깎이죠?")
    groups = bound_groups(DAILY)
    assert [meets(g, given) for g in groups] == [True, True, False]
    assert bracket(DAILY, given).closeness == pytest.approx(0.25)  # |40 - 30| / 40


def test_periods_compare_across_units_and_an_echo_is_the_questions_own_number():
    given = given_values("두 달 넘게 출장이면요?")
    assert meets(bound_groups("30일을 초과한 경우에는")[0], given) is True
    (q,) = extract_quantities("50억원 이상")
    assert echoes(q, given_values("50억원 넘게 벌면?")) and not echoes(q, given)


def test_a_question_may_ask_for_the_bound_itself():
    assert asks_bound("최우선변제 받는 소액임차인 기준이 보증금 얼마 이하예요?")
    assert asks_bound("병가는 며칠까지 가능해요?")
    assert not asks_bound("출장비는 얼마 받나요?")


@pytest.mark.parametrize("question,limit", [
    ("감기몸살로 병가를 내려는데 1년에 최대 며칠까지 쓸 수 있나요?", "max"),
    ("병가는 며칠까지 가능해요?", "max"),
    ("숙박비 상한액은 얼마예요?", "max"),
    ("What is the maximum number of sick days?", "max"),
    ("최소 몇 년 근무해야 하나요?", "min"),
    ("How many years at least?", "min"),
    ("병가는 며칠이에요?", ""),
    ("최소 며칠, 최대 며칠 쉴 수 있나요?", ""),  # both: no one direction
])
def test_a_question_may_ask_for_a_limit_of_one_direction(question, limit):
    assert asked_limit(question) == limit


def test_a_bound_of_the_other_direction_is_against_the_asked_limit():
    text = "병가 일수를 합한 기간이 30일 이상인 경우에는 진단서를 낸다. 연 60일의 범위에서 승인한다. 5년 이하인 경우"
    by = {q.text: q for q in extract_quantities(text)}
    assert against_limit(text, by["30일"], "max") and not against_limit(text, by["30일"], "min")
    assert not against_limit(text, by["60일"], "max") and not against_limit(text, by["60일"], "min")
    assert against_limit(text, by["5년"], "min") and not against_limit(text, by["5년"], "max")
    assert not against_limit(text, by["30일"], "")
    ceiling = "근무명령 시간은 1일에 4시간, 1개월에 57시간을 초과할 수 없다. 10명을 넘을 수 없다. 3회를 초과한 경우"
    by = {q.text: q for q in extract_quantities(ceiling)}
    assert not against_limit(ceiling, by["57시간"], "max") and not against_limit(ceiling, by["10명"], "max")
    assert against_limit(ceiling, by["3회"], "max")  # "초과한 경우": a lower bound on the case
