"""Korean words and patterns for probe questions: the question templates, the everyday topics of
near misses, and how a sentence's noun terms are read (read by :mod:`rag.calibrate.probes`)."""
from __future__ import annotations

from rag.lang.script import HANGUL_SYLLABLES

# Everyday nouns that unanswerable probe questions ask about: nearby topics a user really asks that
# documents rarely mention (work, housing, public services, school, health, shopping, travel); a probe
# uses only the ones absent from the corpus. Read by rag.calibrate.probes.
EVERYDAY_TOPICS: tuple[str, ...] = (
    "주차장", "재택근무", "통근버스", "반려동물", "구내식당", "직장어린이집", "사내헬스장", "사내대출", "법인카드", "명함",
    "복장규정", "흡연실", "택배", "와이파이", "노트북", "모니터", "출장비", "주유비", "휴대폰", "회식비",
    "경조사비", "동호회", "독감예방접종", "자격증수당", "어학연수", "사택", "기숙사", "셔틀버스", "자전거보관소", "전기차충전",
    "보안카드", "방문증", "사원증", "우편물", "복사기", "프린터", "회의실예약", "소프트웨어", "클라우드", "비밀번호",
    "사내메신저", "화상회의", "유니폼", "안전화", "생수", "커피머신", "간식", "야식비", "택시비", "항공권",
    "마일리지", "숙박권", "상품권", "포인트", "쿠폰", "환불", "교환", "배송비", "반품", "분실물",
    "주민센터", "도서관", "수영장", "체육관", "캠핑장", "놀이터", "경로당", "보건소", "약국", "응급실",
    "한의원", "치과", "안경", "보청기", "휠체어", "유모차", "카시트", "전동킥보드", "드론", "낚시",
    "등산로", "골프장", "스키장", "요가", "급식", "도시락", "우유급식", "교복", "학원비", "과외",
    "수학능력시험", "기말고사", "졸업식", "입학식", "학자금대출", "월세", "관리비", "분리수거", "음식물쓰레기", "엘리베이터",
    "택배함", "인터넷요금", "전기요금", "가스요금", "수도요금", "통신비", "구독료", "정수기", "에어컨", "난방비",
    "층간흡연", "방음벽", "가로등", "버스정류장", "지하철", "고속도로통행료", "과속카메라", "음주측정", "견인", "세차",
    "타이어", "내비게이션", "블랙박스", "자동차검사", "운전면허갱신", "여권", "비자", "면세점", "환전", "해외송금",
)

# Question templates by (fact kind, grain): {t} the terms, {T} the terms with their topic particle.
# Read by rag.calibrate.probes.phrase.
QUESTION_TEMPLATES: dict[tuple[str, str], tuple[str, ...]] = {
    ("period", "days"): ("{t} 기간은 며칠인가요?", "{T} 며칠 동안인가요?"),
    ("period", "years"): ("{t} 기간은 몇 년인가요?", "{T} 몇 년 동안인가요?"),
    ("period", "hours"): ("{t} 시간은 몇 시간인가요?", "{T} 하루 몇 시간인가요?"),
    ("amount", ""): ("{t} 금액은 얼마인가요?", "{T} 얼마나 되나요?"),
    ("ratio", ""): ("{t} 비율은 몇 퍼센트인가요?", "{T} 몇 퍼센트인가요?"),
    ("count", ""): ("{t} 인원은 몇 명인가요?", "{T} 몇 명까지인가요?"),
    ("other", ""): ("{T} 어떻게 되나요?", "{t}에 대해 알려주세요.", "{t} 기준이 뭔가요?"),
}

# The topic particle after a final consonant and after a vowel (rag.calibrate.probes.topic).
TOPIC_PARTICLE_AFTER_CONSONANT = "은"
TOPIC_PARTICLE_AFTER_VOWEL = "는"
# Digits whose Korean reading ends in a consonant: 영/일/삼/육/칠/팔 (rag.calibrate.probes.topic).
DIGITS_ENDING_IN_CONSONANT = "013678"

# Nouns that say how, not what (a question about them would not name a topic); rag.calibrate.probes
# drops a sentence term that is one of them.
FUNCTIONAL_NOUNS: frozenset[str] = frozenset("""
미만 이상 이하 초과 경우 해당 관련 다음 각호 이내 이후 이전 규정 사항 사람 일체 대신 포함 제외 적용
기간 범위 내용 방법 사유 필요 가능 사실 부분 전부 일부 이전 당시 현재 최근 동안 때문 이외 외의 정도 기준 조항 본문 단서 전단 후단
같은 다른 해당하는 각각 별도 일반 상당 이하의 전항 동항 동조 본조 신설 개정 삭제 시행 부칙""".split())

# kiwipiepy tags of the morphemes a noun term runs over (nouns and noun affixes), of the nouns a term
# must hold one of, and of a determiner that may start a term (rag.calibrate.probes).
NOUN_RUN_TAGS = ("NNG", "NNP", "XSN", "XPN")
NOUN_TAGS = ("NNG", "NNP")
DETERMINER_TAG = "MM"
# A run ending in this suffix is an adjective-like word (합리적), not a term (rag.calibrate.probes).
ADJECTIVAL_SUFFIX = "적"
# A sentence term: two to ten Hangul syllables (rag.calibrate.probes).
TERM = f"[{HANGUL_SYLLABLES}]{{2,10}}"
