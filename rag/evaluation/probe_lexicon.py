"""Everyday nouns that unanswerable probe questions ask about (:mod:`rag.evaluation.probes`).

A near miss a user really asks is a nearby topic the documents never mention (a parking fee in a
leave policy, a pet in a tenancy law). These lists hold such topics from work, housing, public
services, school, health, shopping and travel; a probe uses only the ones absent from the corpus
(checked per corpus), so the same list serves any domain. Written for this project.
"""
from __future__ import annotations

KOREAN: tuple[str, ...] = (
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

ENGLISH: tuple[str, ...] = (
    "parking", "commuter shuttle", "pet", "cafeteria", "daycare", "gym membership", "company loan", "corporate card",
    "business cards", "dress code", "smoking area", "parcel delivery", "wifi password", "laptop", "monitor", "mileage",
    "fuel allowance", "mobile phone", "team dinner", "wedding gift", "sports club", "flu vaccination", "language course",
    "company housing", "dormitory", "bicycle storage", "charging station", "security badge", "visitor pass",
    "printer", "meeting room", "software licence", "cloud storage", "video call", "uniform", "safety shoes",
    "coffee machine", "snacks", "taxi fare", "flight ticket", "hotel voucher", "gift card", "coupon", "refund",
    "exchange", "shipping fee", "lost property", "library", "swimming pool", "campsite", "playground", "pharmacy",
    "emergency room", "dentist", "glasses", "hearing aid", "wheelchair", "stroller", "car seat", "electric scooter",
    "drone", "fishing", "hiking trail", "golf course", "ski resort", "yoga", "school lunch", "school uniform",
    "tuition", "graduation", "student loan", "rent", "maintenance fee", "recycling", "food waste", "elevator",
    "internet bill", "electricity bill", "gas bill", "water bill", "subscription", "water purifier",
    "air conditioning", "heating", "street light", "bus stop", "subway", "toll road", "speed camera",
    "towing", "car wash", "tyres", "dashcam", "vehicle inspection", "driving licence renewal", "passport", "visa",
    "duty free", "currency exchange", "overseas transfer",
)
