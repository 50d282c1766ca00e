"""Quantities, their matching, clause-aligned support and predicate polarity (rag.text.facts)."""
from __future__ import annotations

from fractions import Fraction

import pytest

from rag.text import (
    claim_quantities,
    clause_support,
    evidence_windows,
    extract_quantities,
    misplaced_quantities,
    parse_english_number,
    parse_korean_number,
    polarity_mismatch,
    predicate_polarity,
    same_quantity,
    split_clauses,
    unsupported_quantities,
)


def one(text: str):
    qs = extract_quantities(text)
    assert len(qs) == 1, qs
    return qs[0]


def vu(text: str) -> tuple[Fraction, str, str]:
    q = one(text)
    return q.value, q.unit, q.kind


# --------------------------------------------------------------------------- numerals
@pytest.mark.parametrize("text,value", [
    ("1억6천500만", 165_000_000), ("2만", 20_000), ("1만", 10_000), ("천", 1000), ("오십만", 500_000),
    ("20,000", 20_000), ("3.5", Fraction(7, 2)), ("5천만", 50_000_000), ("1,000만", 10_000_000), ("삼십", 30),
])
def test_parse_korean_number(text, value):
    assert parse_korean_number(text) == value


@pytest.mark.parametrize("text,value", [
    ("two", 2), ("twenty one", 21), ("one hundred and five", 105), ("a thousand", 1000), ("two million", 2_000_000),
])
def test_parse_english_number(text, value):
    assert parse_english_number(text) == value


def test_not_numbers():
    assert parse_korean_number("천재") is None and parse_english_number("many") is None


# --------------------------------------------------------------------------- units and kinds
@pytest.mark.parametrize("text,expected", [
    ("2주일 이내", (14, "day", "period")),
    ("14일", (14, "day", "period")),
    ("3개월", (3, "month", "period")),
    ("1년간", (12, "month", "period")),
    ("15년 동안", (180, "month", "period")),
    ("2시간", (7200, "second", "period")),
    ("30분 이내", (1800, "second", "period")),
    ("10초", (10, "second", "period")),
    ("2만원", (20_000, "KRW", "money")),
    ("20,000원", (20_000, "KRW", "money")),
    ("1억6천500만원", (165_000_000, "KRW", "money")),
    ("1억 5천만 원", (150_000_000, "KRW", "money")),
    ("18%", (18, "percent", "percent")),
    ("18퍼센트", (18, "percent", "percent")),
    ("연 1할", None),  # checked below: a rate and 10 percent
    ("10분의 3", (Fraction(3, 10), "ratio", "ratio")),
    ("2분의 1", (Fraction(1, 2), "ratio", "ratio")),
    ("100분의 25", (Fraction(1, 4), "ratio", "ratio")),
    ("5배", (5, "x", "ratio")),
    ("30ppm", (30, "ppm", "measure")),
    ("30피피엠", (30, "ppm", "measure")),
    ("3회", (1 * 3, "times", "count")),
    ("두 번", (2, "times", "count")),
    ("15명 이내", (15, "person", "count")),
    ("두 사람 모두", (2, "person", "count")),
    ("19세 미만", (19, "age", "count")),
    ("만 나이 19살", (19, "age", "count")),
    ("3층", (3, "floor", "count")),
    ("12킬로미터", (12_000, "m", "measure")),
    ("5 km", (5_000, "m", "measure")),
    ("3kg", (3_000, "g", "measure")),
    ("85제곱미터", (85, "m2", "measure")),
    ("85m²", (85, "m2", "measure")),
    ("하루", (1, "day", "period")),
    ("이틀 안에", (2, "day", "period")),
    ("사흘", (3, "day", "period")),
    ("일주일", (7, "day", "period")),
    ("석 달", (3, "month", "period")),
    ("5 days", (5, "day", "period")),
    ("two weeks", (14, "day", "period")),
    ("within a week", (7, "day", "period")),
    ("twice", (2, "x", "ratio")),
    ("$500", (500, "USD", "money")),
    ("1.5 million won", (1_500_000, "KRW", "money")),
    ("10 percent", (10, "percent", "percent")),
    ("30 minutes", (1800, "second", "period")),
    ("one twentieth", (Fraction(1, 20), "ratio", "ratio")),
    ("5-year", (60, "month", "period")),
])
def test_units(text, expected):
    if expected is not None:
        assert vu(text) == tuple(Fraction(x) if isinstance(x, (int, Fraction)) else x for x in expected)


def test_hal_is_ten_percent_and_yeon_is_a_rate():
    rate, pct = extract_quantities("연 1할")
    assert (rate.implied, rate.rate, rate.unit, rate.value) == (True, True, "month", 12)
    assert (pct.value, pct.unit) == (10, "percent")


@pytest.mark.parametrize("text,value,unit", [
    ("2024. 6. 28.", 20240628, "date"),
    ("2024.6.28", 20240628, "date"),
    ("2024-06-28", 20240628, "date"),
    ("2024년 6월 28일", 20240628, "date"),
    ("June 28, 2024", 20240628, "date"),
    ("2024년 6월", 20240600, "yearmonth"),
    ("6월 28일까지", 628, "monthday"),
    ("2024년부터", 20240000, "year"),
])
def test_dates(text, value, unit):
    q = one(text)
    assert (q.value, q.unit, q.kind) == (value, unit, "date")


def test_month_is_a_period_after_a_year_count_or_before_a_bound():
    y, m = extract_quantities("1년 6월 이하의 징역")
    assert (y.value, y.unit, m.value, m.unit) == (12, "month", 6, "month")
    assert one("6월 이내").kind == "period" and one("6월에 지급한다").kind == "date"


def test_amendment_notes_are_dates_not_decimals():
    qs = extract_quantities("한다. <개정 2011.2.9, 2017.1.31>")
    assert [(q.value, q.unit) for q in qs] == [(20110209, "date"), (20170131, "date")]


@pytest.mark.parametrize("text,unit,value", [
    ("제16조", "조", 16), ("제8조의2", "조의2", 8), ("제1항", "항", 1), ("제3호", "호", 3), ("제2장", "장", 2),
    ("②", "항", 2), ("Article 8", "조", 8), ("paragraph 2", "항", 2),
])
def test_references(text, unit, value):
    q = one(text)
    assert (q.kind, q.unit, q.value) == ("reference", unit, value)


def test_locator_chain_and_enumerators():
    qs = extract_quantities("제8조의2제2항")
    assert [(q.unit, q.value) for q in qs] == [("조의2", 8), ("항", 2)]
    item = extract_quantities("  1\\. 서울특별시: 1억6천500만원")
    assert (item[0].kind, item[0].unit, item[0].implied) == ("reference", "호", True)
    assert [(q.value, q.unit) for q in claim_quantities("1. 서울특별시는 1억6천500만원")] == [(165_000_000, "KRW")]


@pytest.mark.parametrize("text", [
    "천재지변이나 그 밖의 부득이한 사유",  # 천 inside a word
    "위반을 한 사람",  # a verb, not "one person"
    "제3자에게 대항할 수 있다",  # third party
    "COVID-19 and 5G",  # identifiers
    "3-kinase inhibitors",  # a name
    "one of the primary pathways",  # a number word without a unit
    "once DNA has been replicated",  # the conjunction
    "the third paragraph",  # an ordinal
    "세대주와 주택",  # 세 and 주 inside words
])
def test_not_quantities(text):
    assert extract_quantities(text) == ()


def test_man_as_the_particle_only():
    assert vu("일비의 2분의 1만 지급한다") == (Fraction(1, 2), "ratio", "ratio")
    assert one("1명에게만").value == 1


def test_range_shares_its_unit():
    a, b = extract_quantities("10~20일")
    assert (a.value, a.unit, b.value, b.unit) == (10, "day", 20, "day")


def test_rates():
    day, hours, month, hours2 = extract_quantities("1일에 4시간, 1개월에 57시간")
    assert day.rate and month.rate and not hours.rate
    assert extract_quantities("하루 4시간")[0].rate
    implied = extract_quantities("월 16만원")[0]
    assert (implied.implied, implied.unit, implied.value) == (True, "month", 1)


# --------------------------------------------------------------------------- matching
@pytest.mark.parametrize("claim,evidence", [
    ("2주일 안에 신청한다", "14일 이내에 신청하여야 한다"),
    ("14일 안에", "2주일 이내에"),
    ("2만원을 지급한다", "20,000원을 지급한다"),
    ("10분의 3", "30퍼센트"),
    ("30%", "100분의 30"),
    ("5%", "20분의 1"),
    ("one twentieth", "20분의 1"),
    ("1년", "12개월"),
    ("하루 4시간", "1일에 4시간"),
    ("한 달 57시간", "1개월에 57시간"),
    ("한 해에 6일", "연간 6일"),
    ("주 40시간", "1주간 40시간"),
    ("두 번", "2회"),
    ("1억 6천 500만 원", "1억6천500만원"),
    ("Article 8", "제8조"),
    ("2024년", "2024. 6. 28."),
    ("6월 28일", "2024. 6. 28."),
    ("15일이다", "│1년 이상 3년 미만   │15        │"),  # a bare number in a table cell
    ("2기분", "2기(期)의 차임액"),
])
def test_equal_after_conversion(claim, evidence):
    assert unsupported_quantities(claim, evidence) == ()


@pytest.mark.parametrize("claim,evidence,missing", [
    ("3주일 안에", "2주일 이내에", "3주일"),
    ("15일과 5일을 합쳐 20일이다", "15일 이내, 그 후 5일 이내", "20일"),  # arithmetic is not stated
    ("50퍼센트", "60퍼센트", "50퍼센트"),
    ("10분의 1", "20분의 1", "10분의 1"),
    ("1억5천만원", "1억6천500만원", "1억5천만원"),
    ("증액 후 1년 이내", "연 2퍼센트를 말한다", "1년"),  # 연 implies a year only as a rate
    ("제18조에 따라", "제16조에 따라", "제18조"),
    ("14일", "2주", None),  # equal: no missing
    ("3 days", "2일", "3 days"),
    ("2024. 6. 29.", "2024. 6. 28.", "2024. 6. 29."),
])
def test_unsupported(claim, evidence, missing):
    got = [q.text for q in unsupported_quantities(claim, evidence)]
    assert got == ([missing] if missing else [])


def test_unitless_claim_number_matches_same_written_number_but_not_dates_or_references():
    assert unsupported_quantities("15", "15일") == ()
    assert [q.text for q in unsupported_quantities("16", "제16조")] == ["16"]
    assert [q.text for q in unsupported_quantities("2024", "2024. 6. 28.")] == ["2024"]


def test_same_quantity_keeps_dimensions_apart():
    day, month = one("30일"), one("1개월")
    assert not same_quantity(day, month) and not same_quantity(one("5배"), one("5회"))
    assert same_quantity(one("10분의 3"), one("30%"))


ARTICLE_20 = """##### 제20조 (특별휴가)

**⑨** 재해를 입은 공무원은 5일(대규모 재난의 경우에는 10일) 이내의 재해구호휴가를 받을 수 있다.

**⑱** 행정기관의 장은 10년 이상 재직한 공무원에 대하여 다음 각 호의 구분에 따라 장기재직휴가를 각 1회 주어야 한다. 이 경우 재직기간의 산정은 제15조제2항에 따른다.

  1\\. 재직기간이 10년 이상 20년 미만인 공무원: 5일
  2\\. 재직기간이 20년 이상인 공무원: 7일
"""


def test_misplaced_quantity_is_one_stated_only_elsewhere():
    claim = "재직기간이 20년 이상인 공무원의 장기재직휴가는 10일이다."
    assert unsupported_quantities(claim, ARTICLE_20) == ()  # 10일 occurs in the article...
    assert [q.text for q in misplaced_quantities(claim, ARTICLE_20)] == ["10일"]  # ...but not for this
    assert misplaced_quantities("재직기간이 20년 이상인 공무원의 장기재직휴가는 7일이다.", ARTICLE_20) == ()


def test_windows_join_items_and_table_rows_with_their_lead():
    texts = [w.text for w in evidence_windows(ARTICLE_20)]
    assert any("행정기관의 장은 10년 이상" in t and t.endswith("2. 재직기간이 20년 이상인 공무원: 7일") for t in texts)
    table = "공무원의 연가 일수는 다음과 같다.\n\n│재직기간 │연가 일수 │\n\n│1년 이상 3년 미만 │15 │\n\n│3년 이상 4년 미만 │16 │"
    rows = [w.text for w in evidence_windows(table)]
    assert "공무원의 연가 일수는 다음과 같다. 재직기간 연가 일수 1년 이상 3년 미만 15" in rows
    assert misplaced_quantities("재직기간이 1년 이상 3년 미만이면 연가 일수는 16일이다.", table)
    assert not misplaced_quantities("재직기간이 1년 이상 3년 미만이면 연가 일수는 15일이다.", table)


# --------------------------------------------------------------------------- clauses and lexical support
def test_split_clauses():
    assert split_clauses("월봉급액의 60퍼센트를 지급하되, 징계처분을 받은 공무원에게는 지급하지 아니한다. [S1]") == (
        "월봉급액의 60퍼센트를 지급하되", "징계처분을 받은 공무원에게는 지급하지 아니한다.")
    assert split_clauses("40시간으로 하며, 토요일은 휴무한다.") == ("40시간으로 하며", "토요일은 휴무한다.")


def test_clause_support_scores_the_weakest_clause_against_one_window():
    ev = "가상자산사업자는 거래기록을 15년간 보존하여야 한다.\n\n보존 방법은 대통령령으로 정한다."
    assert clause_support("가상자산사업자는 거래기록을 15년간 보존해야 한다.", ev) > 0.8
    joined = "가상자산사업자는 거래기록을 15년간 보존하고, 이용자명부에 이용자의 주소와 성명을 기재해야 한다."
    assert clause_support(joined, ev) < 0.3
    assert clause_support("", ev) == 0.0


# --------------------------------------------------------------------------- polarity
@pytest.mark.parametrize("clause,sign", [
    ("운임을 지급하지 않는다.", -1),
    ("운임을 지급한다.", 1),
    ("정산을 신청하여야 한다", 1),
    ("정산을 신청해야 한다", 1),
    ("승인하지 않아도 된다", -1),
    ("거절하지 못한다", -1),
    ("거절할 수 있다", 1),
    ("거절할 수 없다", -1),
    ("차단하여서는 아니 된다", -1),
    ("압류가 금지된다", -1),
    ("변제받을 권리가 있다", 1),
    ("변제받을 권리가 없다", -1),
    ("정당한 사유 없이 거절하지 못한다", -1),  # 없이 is not the predicate
    ("특별한 지장이 없으면 승인하여야 한다", 1),  # a condition with 없으면 does not count
    ("신고하지 아니하면 아니 된다", 1),  # double negative in the predicate
    ("지급하지 아니할 수 없다", 1),
    ("지급하지 아니할 수 있다", -1),
    ("인도하지 아니하면 보증금을 받을 수 없다", 1),  # = 인도해야 받을 수 있다
    ("인도해야 보증금을 받을 수 있다", 1),
    ("이전하지 아니한 경우에는 이전비를 지급하지 아니한다", 1),
    ("이사하지 않았더라도 이전비는 지급한다", -1),
    ("The landlord may not refuse.", -1),
    ("The landlord may refuse.", 1),
    ("A certificate is not required.", -1),
    ("No person shall enter the tank.", -1),
    ("Employees must change passwords.", 1),
    ("15일을 초과한 경우에는 정액의 10분의 1에 상당한 액을", None),  # no predicate
    ("CHEK2 is not associated with breast cancer.", None),  # English description, not a rule
])
def test_predicate_polarity(clause, sign):
    assert predicate_polarity(clause) == sign


ARTICLE_15 = "공용의 차량ㆍ선박 또는 항공기 등을 이용하여 여행하는 경우에는 운임을 지급하지 않는다. <개정 2021.11.30>"
LEAVE = ("**③** 여성공무원은 생리기간 중 휴식을 위하여 매월 1일의 여성보건휴가를 사용할 수 있다. 이 경우 여성보건휴가는 무급으로 한다.\n\n"
         "**④** 임신 중인 여성공무원은 1일 2시간의 범위에서 모성보호시간을 사용할 수 있다.")
RENEWAL = "**①** 임대인은 임차인이 계약갱신을 요구할 경우 정당한 사유 없이 거절하지 못한다."
SHARE = "**④** 부부가 공무원인 경우에는 그 중 1명에게만 수당을 지급한다."
DEPOSIT = ("**②** 임차인의 보증금 중 일정액이 주택가액의 2분의 1을 초과하는 경우에는 주택가액의 2분의 1에 해당하는 금액까지만 "
           "우선변제권이 있다.")


@pytest.mark.parametrize("claim,evidence", [
    ("공용 항공기를 이용해 여행한 경우에도 운임을 지급한다.", ARTICLE_15),
    ("여성공무원은 매월 1일의 여성보건휴가를 쓸 수 있고, 이 휴가는 유급이다.", LEAVE),
    ("임대인은 정당한 사유 없이 계약갱신 요구를 거절할 수 있다.", RENEWAL),
    ("부부가 모두 공무원이면 두 사람 모두에게 수당을 지급한다.", SHARE),
    ("보증금 중 일정액이 주택가액의 2분의 1을 넘더라도 그 전액에 우선변제권이 있다.", DEPOSIT),
    ("The tenant may not give notice of termination at any time.", "The tenant may give notice of termination at any time."),
])
def test_polarity_flips(claim, evidence):
    assert polarity_mismatch(claim, evidence) is not None


@pytest.mark.parametrize("claim,evidence", [
    ("공용 항공기를 이용해 여행하면 운임을 지급하지 않는다.", ARTICLE_15),
    ("여성공무원은 매월 1일의 여성보건휴가를 쓸 수 있고, 이 휴가는 무급이다.", LEAVE),
    ("임대인은 정당한 사유 없이 계약갱신 요구를 거절할 수 없다.", RENEWAL),
    ("부부가 공무원이면 그 중 1명에게만 수당을 지급한다.", SHARE),
    ("하루 4시간, 한 달 57시간까지다.", "근무명령 시간은 1일에 4시간, 1개월에 57시간을 초과할 수 없다."),  # a bound
    ("임차인은 양수인에게 인도해야 보증금을 받을 수 있다.", "임차인은 임차주택을 양수인에게 인도하지 아니하면 보증금을 받을 수 없다."),
    ("완전히 다른 이야기다.", ARTICLE_15),  # not aligned: nothing to compare
])
def test_no_polarity_flip(claim, evidence):
    assert polarity_mismatch(claim, evidence) is None


def test_amendment_notes_in_a_claim_are_no_clause():
    ev = "**①** 공용의 차량을 이용하여 여행하는 경우에는 운임을 지급하지 않는다. <개정 2021.11.30>"
    claim = "공용의 차량을 이용하여 여행하는 경우에는 운임을 지급하지 않는다. <개정 2021.11.30>"
    assert split_clauses(claim) == ("공용의 차량을 이용하여 여행하는 경우에는 운임을 지급하지 않는다.",)
    assert clause_support(claim, ev) == 1.0 and unsupported_quantities(claim, ev) == ()
    assert misplaced_quantities(claim, ev) == () and polarity_mismatch(claim, ev) is None


def test_verbatim_sentences_of_a_statute_pass_every_check():
    text = ARTICLE_20 + "\n" + LEAVE + "\n\n" + DEPOSIT
    for line in text.split("\n"):
        if line.strip() and not line.startswith("#"):
            assert clause_support(line, text) == 1.0, line
            assert unsupported_quantities(line, text) == () and misplaced_quantities(line, text) == (), line
            assert polarity_mismatch(line, text) is None, line


def test_a_number_that_alone_tells_two_items_apart_is_in_place():
    ev = ("**①** 수당은 다음 각 호의 구분에 따라 지급한다.\n\n  1\\. 육아휴직 4개월째부터 6개월째까지: 200만원\n"
          "  2\\. 육아휴직 7개월째부터 12개월째까지: 160만원")
    assert misplaced_quantities("육아휴직 4개월째부터 6개월째까지는 200만원을 지급한다.", ev) == ()
    assert [q.text for q in misplaced_quantities("육아휴직 4개월째부터 6개월째까지는 160만원을 지급한다.", ev)] == ["160만원"]


def test_evidence_may_be_several_texts():
    a, b = "출장자는 2주일 이내에 정산을 신청하여야 한다.", "숙박비는 1박에 7만원을 넘지 아니하는 범위에서 지급한다."
    claim = "출장자는 2주일 안에 정산을 신청해야 하고, 숙박비는 1박에 7만원 범위에서 받는다."
    assert unsupported_quantities(claim, (a, b)) == () and misplaced_quantities(claim, (a, b)) == ()
    assert [q.text for q in unsupported_quantities(claim, a)] == ["1박", "7만원"]
    assert clause_support(claim, (a, b)) > 0.6 and polarity_mismatch(claim, (a, b)) is None
