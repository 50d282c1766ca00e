"""Korean question words: the kinds of fact they ask (read by rag.text.questions) and the words and
patterns a question's reading sets apart from its subject (read by rag.text.question_analysis)."""
from __future__ import annotations

# The Korean alternatives of each kind's rule in rag.text.questions (wanted_fact); that module puts the
# English ones (rag.lang.en.questions.FACT_QUESTIONS) after them and checks the kinds in its own order.
FACT_QUESTIONS = {
    "deadline": r"언제\s*까지|며칠\s*(?:이내|안에|내에|전까지|전에)|"
                r"몇\s*(?:일|주|개월|달|년|시간)\s*(?:이내|안에|내에|전까지|전에)|기한|마감",
    "ratio": r"몇\s*(?:퍼센트|%|프로)|비율|몇\s*분의|몇\s*배|지급률|요율",
    "period": r"며칠|몇\s*(?:일|주|주일|개월|달|년|시간|분)(?:간|동안)?|(?<![장단])기간(?!제)|"
              r"얼마\s*(?:동안|나\s*오래|간)|얼마나\s*(?:오래|걸)",
    "count": r"몇\s*(?:번|회|명|차례|개|건|곳|층|살|세)|나이|횟수|인원",
    "amount": r"얼마|금액|몇\s*(?:원|만\s*원)|비용|수당",
    "who": r"누가|누구|어느\s*(?:기관|부서|사람|곳)|어떤\s*(?:기관|사람|부서)",
    "condition": r"어떤\s*경우|어느\s*경우|무슨\s*경우|조건|요건|언제(?!\s*까지)",
}

# How a Korean yes/no question ends (할 수 있나요, 해야 하나요, 되나요): the Korean part of
# rag.text.questions.YES_NO, before the English opening.
YES_NO_ENDING = r"(?:수\s*있|해야\s*하|하여야\s*하|되|가능한|필요한|맞)(?:나요|습니까|는지|을까요|나|니)\s*\??\s*$"

# Interrogatives and the asked unit that follows 몇 (a part of the question's form, not its subject):
# rag.text.question_analysis leaves these spans out of the key terms and cuts a question into parts at them.
ASKED = (r"몇\s*(?:퍼센트|%|프로|분의\s*몇|분의|배|시간|분|일|주일|주|개월|달|년|번|회|명|차례|개|건|곳|층|살|세|원|"
         r"만\s*원|등급|[가-힣]+)?"
         r"|며칠|얼마(?:나)?|언제|누가|누구|어디|어느\s*[가-힣]+|무슨\s*[가-힣]+|어떤\s*경우|어떻게")

# The asked grain of a duration (rag.text.question_analysis): hours, years, days and months.
HOURS_ASKED = r"몇\s*(?:시간|분)"
YEARS_ASKED = r"몇\s*년"
DAYS_ASKED = r"며칠|몇\s*(?:일|주일|주|개월|달)"

# 몇 + a counter the quantity kinds do not cover (몇 급, 몇 호봉, 몇 층, 몇 데시벨); group 1 is the counter the
# answer's number must carry (rag.text.question_analysis).
COUNTER_ASKED = (r"몇\s*(급|호봉|등급|층|데시벨|킬로그램|킬로미터|미터|평|제곱미터|학년|차)"
                 r"(?=부터|까지|이상|이하|이|은|는|을|를|에|인|의|짜리|[^가-힣]|$)")

# An interrogative that asks for a place or body (어디): a part asking it is a ``who`` part
# (rag.text.question_analysis).
PLACE_ASKED = "어디"

# Words a Korean question uses that say nothing about its subject: never a key term
# (rag.text.question_analysis).
GENERIC_WORDS = frozenset({
    "며칠", "얼마", "얼마나", "몇", "무엇", "뭐", "언제", "어디", "누구", "누가", "어떤", "어떻게", "어느", "무슨",
    "왜", "경우", "때", "것", "수", "등", "정도", "관련", "대하", "알", "궁금", "있", "없", "되", "하", "이", "그",
    "저", "좀", "제", "저희", "우리", "안", "내", "이내", "까지", "본인", "자신", "당사자", "만약", "만일",
    "최대", "최소", "이상", "이하", "기준", "하루", "일주일", "주당", "한달", "매일", "매주", "매월", "매년", "연간",
    "월간", "동안", "기간", "가능", "해당", "받", "주", "나오", "가", "오", "알려주", "말", "건가", "인가", "르",
})

# A particle at the end of a word, stripped to get a key term when no morpheme analyzer is installed
# (rag.text.question_analysis).
PARTICLE_ENDING = (r"(?:에서는|에게는|으로는|이라도|에서|에게|으로|까지|부터|이나|에는|에도|이랑|랑|하고|"
                   r"은|는|이|가|을|를|의|에|도|와|과|로|만)$")

# The topic particle: a noun directly followed by it is the question's topic (rag.text.question_analysis).
TOPIC_PARTICLE = "(?:은|는)"

# 하다 / 되다 after a noun (근무하다, 지정되다): the noun says what was done, not what the question is about
# (a regex character class; rag.text.question_analysis).
VERB_MAKER = "[하한할함해했되된될됨돼됐]"

# One-syllable suffixes that make another noun of a stem: 이용자 and 이용권 do not speak of 이용료
# (rag.text.question_analysis.stem_found).
NOUN_SUFFIXES = frozenset("자료비금세권액율률표증처")
