"""The extractive default: units from the shared segmenter, the question's fact kind, the
delegation and section rules, markup-free answers with verbatim quotes, and the validator's own
support check. Lexical scores only (no model), so every case is exact."""
from __future__ import annotations

import pytest

from rag.answer import CitationValidator, ExtractiveGenerator
from rag.answer.extractive import clean_unit
from rag.config import ContextConfig, GenerationConfig
from rag.context import ContextBuilder, Evidence
from rag.text.questions import wanted_fact
from rag.text.tokens import WhitespaceCounter

GEN = ExtractiveGenerator(GenerationConfig(extractive_scorer="lexical"))


def bundle(*blocks: tuple[str, str, str]):
    """(document id, section heading, text) blocks, ranked in the given order."""
    ev = [Evidence(f"{doc}:1:{i}", doc, "1", text, 0, len(text), 10.0 - i, title="규정", section=section)
          for i, (doc, section, text) in enumerate(blocks)]
    return ContextBuilder(WhitespaceCounter(), ContextConfig(min_block_tokens=1)).build(ev, 4000)


def answer(question: str, b):
    pay = GEN.compose(question, b)
    report = CitationValidator().validate(pay, b.source_map)
    assert report.ok, report.violations  # whatever it proposes, the validator accepts
    return pay


@pytest.mark.parametrize("question,kind", [
    ("출장비 정산은 며칠 안에 신청해야 하나요?", "deadline"), ("병가는 1년에 며칠까지 쓸 수 있나요?", "period"),
    ("정액급식비는 얼마인가요?", "amount"), ("명절휴가비는 월봉급액의 몇 %인가요?", "ratio"),
    ("계약갱신요구권은 몇 번 쓸 수 있나요?", "count"), ("공무원연금은 몇 살부터 받나요?", "count"),
    ("중개보수는 누가 부담하나요?", "who"), ("어떤 경우에 우선 지급하나요?", "condition"),
    ("야근을 시킬 수 있나요?", "yesno"), ("What is the maximum payload of the arm?", "other"),
    ("How many days per week can I work remotely?", "period"), ("Who approves expenses?", "who"),
])
def test_the_kind_of_fact_a_question_asks_for(question, kind):
    assert wanted_fact(question) == kind


def test_markup_notes_and_headings_never_reach_the_answer_but_the_quote_is_verbatim():
    text = ("##### 제18조 (정액급식비)\n\n**①** 공무원에게는 예산의 범위에서 월 16만원의 정액급식비를 보수지급일에 "
            "지급한다. <개정 2023. 12. 29.>\n\n  1\\. 정액급식비는 출근일수에 비례하지 않는다.")
    pay = answer("정액급식비는 매달 얼마인가요?", bundle(("pay", "제18조 (정액급식비)", text)))
    assert pay.status == "answered"
    short, sentence = pay.answer.splitlines()
    assert short == "16만원 [S1]"  # the asked value first, as the source writes it
    assert sentence.startswith("공무원에게는 예산의 범위에서 월 16만원의 정액급식비를")
    assert "**" not in pay.answer and "개정" not in pay.answer and "#####" not in pay.answer
    assert all(c.quote in text for c in pay.citations)
    assert clean_unit("  2\\. **①** 제7조 (목적) 일비는 <신설 2024. 6. 28.> 2만원으로 한다.") == "일비는 2만원으로 한다."


def test_a_numeric_question_needs_a_quantity_of_its_kind():
    b = bundle(("pay", "제18조의3 (명절휴가비)", "명절휴가비는 설날과 추석에 지급한다. 명절휴가비는 월봉급액의 60퍼센트로 한다."))
    pay = answer("명절휴가비는 월봉급액의 몇 퍼센트인가요?", b)
    assert pay.status == "answered" and "60퍼센트" in pay.answer and "설날과 추석에" not in pay.answer
    no_number = bundle(("pay", "제18조의3 (명절휴가비)", "명절휴가비는 설날과 추석에 재직 중인 공무원에게 지급한다."))
    assert answer("명절휴가비는 월봉급액의 몇 퍼센트인가요?", no_number).status == "insufficient_evidence"


def test_a_value_delegated_to_an_appended_table_is_not_answered():
    b = bundle(("pay", "제7조의2 (성과상여금)", "성과상여금의 지급등급별 지급액은 별표 2의4에 따른다. "
                "성과상여금은 연 1회 지급한다."))
    assert answer("성과상여금 S등급은 지급기준액의 몇 퍼센트인가요?", b).status == "insufficient_evidence"


def test_a_unit_of_the_wrong_article_is_not_quoted():
    """The question names 정근수당; only 연가보상비's article states a percentage: no answer."""
    b = bundle(("pay", "제18조의5 (연가보상비)", "연가보상비는 퇴직일 전일 현재의 월봉급액의 86퍼센트로 계산한다."),
               ("pay2", "제7조 (정근수당)", "정근수당은 근무연수에 따라 매년 1월과 7월에 지급한다."))
    assert answer("근무연수 10년이면 정근수당은 월봉급액의 몇 퍼센트인가요?", b).status == "insufficient_evidence"
    # the same evidence answers the question its article is about
    pay = answer("퇴직하면 연가보상비는 월봉급액의 몇 퍼센트로 계산하나요?", b)
    assert pay.status == "answered" and "86퍼센트" in pay.answer


def test_a_list_item_is_read_with_its_lead_sentence():
    text = ("법 제8조에 따라 우선변제를 받을 임차인은 보증금이 다음 각 호의 구분에 의한 금액 이하인 임차인으로 한다.\n"
            "  1\\. 서울특별시: 1억6천500만원\n  2\\. 그 밖의 지역: 7천500만원")
    pay = answer("서울에서 우선변제를 받을 임차인의 보증금 기준은 얼마 이하인가요?", bundle(("law", "제11조 (임차인의 범위)", text)))
    assert pay.status == "answered" and "1억6천500만원" in pay.answer


def test_nothing_on_topic_abstains_with_an_empty_answer():
    b = bundle(("cafe", "식당", "사내 식당은 지하 1층에 있으며 점심은 11시 30분부터 제공한다."))
    pay = answer("양자컴퓨터 오류정정에는 큐비트가 몇 개 필요한가요?", b)
    assert (pay.status, pay.answer, pay.citations) == ("insufficient_evidence", "", ())


def test_a_unit_that_announces_a_list_brings_its_items():
    text = ("관리기관은 가상자산사업자가 다음 각 호의 어느 하나에 해당하게 된 경우에는 예치금을 이용자에게 우선하여 지급하여야 한다.\n"
            "  1\\. 신고가 말소된 경우\n  2\\. 해산ㆍ합병의 결의를 한 경우\n  3\\. 파산선고를 받은 경우\n"
            "예치금은 관리기관이 보관한다.")
    pay = answer("거래소가 파산하면 예치금은 어떤 경우에 우선 지급되나요?", bundle(("law", "제6조 (예치금의 보호)", text)))
    assert pay.status == "answered"
    for item in ("신고가 말소된 경우", "해산ㆍ합병의 결의를 한 경우", "파산선고를 받은 경우"):
        assert item in pay.answer
    assert len(pay.citations) == 4 and all(c.quote in text for c in pay.citations)
