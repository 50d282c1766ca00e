"""Korean words and patterns of the answer stage: read by the extractive generator (rag.answer.units,
rag.answer.extractive, rag.answer.spans) and the validator's addressing check (rag.answer.addressing)."""
from __future__ import annotations

# Question words and interrogative endings an answer sentence does not repeat, as Hangul bigrams the
# analyzer makes them: rag.answer.units.QUESTION_TERMS (with the English ones) leaves them out of a
# question's terms.
QUESTION_TERMS = frozenset({
    "며칠", "얼마", "언제", "어디", "무엇", "누가", "누구", "어떻", "어떤", "어느", "인가", "가요", "나요",
    "까요", "니까", "는지", "인지", "은가", "는가", "할까", "을까", "습니", "입니", "합니", "되나", "있나",
    "없나", "하나요", "엇인", "디인", "마인", "마나", "마까", "제인", "칠인",
})

# A leading article heading with its title, "제7조 (정근수당) ", "제3조의2(목적)": rag.answer.extractive
# strips it from a unit's answer form (after the markdown heading marks). The extractive generator's own
# copy of the article label (rag.lang.ko.statute's ARTICLE_LABEL_TEXT also allows a space before 의).
ARTICLE_HEADING = r"^\s*제\s*\d+\s*조(?:의\s*\d+)?\s*[(（][^)）]{0,80}[)）]\s*"

# A leading item enumerator "가.", "나 .": rag.answer.extractive strips it (after ①, (1) and 1.).
ITEM_ENUMERATOR = r"[가-하]\s*\."

# A unit that announces a list ("다음 각 호", "다음과 같다"): rag.answer.extractive brings its items
# (before the English alternative).
ANNOUNCES = r"다음\s*각\s*(?:호|목)|다음과\s*같"

# A unit that says the value is set elsewhere (별표 1, a decree, a ministry's rule, a notice):
# the Korean alternatives of rag.answer.extractive.DELEGATION, before the English one.
DELEGATION = (r"별표\s*\d+|(?:대통령령|총리령|부령|법무부령|[가-힣]{1,10}부령|[가-힣]{1,6}규칙|고시|조례)(?:으로|로)\s*"
              r"정한다|정하는\s*바에\s*따른다|(?:이|가)\s*(?:따로\s*)?정한다")

# A definition ("…이란 …을 말한다"): rag.answer.extractive adds no definition after the first unit
# (before the English alternatives).
DEFINES = r"(?:이란|란|라 함은|이라 함은)\s.*(?:말한다|뜻한다)"

# What follows a value in a statute and belongs to it ("2주일 이내", "500만원 이하의 과태료"):
# rag.answer.spans reads a value's span with it.
SPAN_TAIL = (r"^(?:\s*(?:이내|이하|이상|미만|초과|까지|전까지|이후|부터|전|후|간|동안))?"
             r"(?:의\s*(?:과태료|벌금|징역|금고|범위|금액))?")

# A stated limit, the example in the addressing check's message when the question asks for the value
# actually applied (rag.answer.addressing).
ONLY_LIMIT_EXAMPLE = "1억원 이하"
