"""A tiny statute dataset for the eval-addressing tests (rag.evaluation.addressing and the CLI)."""
from __future__ import annotations

import json
from pathlib import Path

TRAVEL = ("# 여비 규정\n\n##### 제8조 (여비의 정산)\n\n"
          "**①** 출장자는 여행을 마친 날부터 2주일 이내에 운임과 숙박비의 정산을 신청하여야 한다. <개정 2024.1.2>\n\n"
          "**②** 정산을 늦게 신청한 경우에는 그 사유를 적어야 한다.\n\n"
          "##### 제16조 (숙박비)\n\n"
          "**①** 국내 여행의 경우에는 숙박비 상한액의 10분의 3을 넘지 아니하는 범위에서 여비를 추가로 지급할 수 있다.\n\n"
          "**②** 숙박비는 다음 각 호의 구분에 따라 지급한다.\n\n  1\\. 서울특별시: 10만원\n  2\\. 광역시: 8만원\n")
RENT = ("# 임대차법\n\n##### 제4조 (임대차기간)\n\n"
        "**①** 기간을 정하지 아니하거나 2년 미만으로 정한 임대차는 그 기간을 2년으로 본다.\n\n"
        "##### 제7조 (차임 증액)\n\n"
        "**①** 차임 증액청구는 약정한 차임의 20분의 1의 금액을 초과하지 못한다.\n")
CORPUS = [
    {"id": "travel", "version": "1", "title": "여비 규정", "uri": "u:travel-1", "text": "옛 규정. 2주일."},
    {"id": "travel", "version": "2", "title": "여비 규정", "uri": "u:travel-2", "text": TRAVEL},
    {"id": "rent", "version": "1", "title": "임대차법", "uri": "u:rent", "text": RENT},
]
Q_T1 = "출장자는 여행을 마친 날부터 2주일 이내에 운임과 숙박비의 정산을 신청하여야 한다"
Q_T2 = "국내 여행의 경우에는 숙박비 상한액의 10분의 3을 넘지 아니하는 범위에서 여비를 추가로 지급할 수 있다"
Q_T3 = "숙박비는 다음 각 호의 구분에 따라 지급한다.\n\n  1\\. 서울특별시: 10만원"
Q_T4 = "1\\. 서울특별시: 10만원"
Q_R1 = "기간을 정하지 아니하거나 2년 미만으로 정한 임대차는 그 기간을 2년으로 본다"
Q_R3 = "차임 증액청구는 약정한 차임의 20분의 1의 금액을 초과하지 못한다"


def _q(qid: str, question: str, doc: str, article: str, facts: list[str], quote: str = "") -> dict:
    gold = {"doc_id": doc, "article": article, "answer_facts": facts}
    if quote:
        gold["quote"] = quote
    return {"id": qid, "question": question, "answerable": True, "gold": gold}


QUESTIONS = [
    _q("t1", "출장비 정산은 언제까지 신청하나요?", "travel", "제8조제1항", ["2주일"], Q_T1),
    _q("t2", "국내 출장 숙박비는 상한보다 얼마까지 더 받나요?", "travel", "제16조제1항", ["10분의 3"], Q_T2),
    _q("t3", "숙박비는 지역별로 어떻게 주나요?", "travel", "제16조제2항", ["10만원"], Q_T3),
    _q("t4", "서울 숙박비는 얼마인가요?", "travel", "제16조제2항제1호", ["10만원"], Q_T4),
    _q("r1", "전세 계약을 1년으로 하면 기간은 어떻게 되나요?", "rent", "제4조제1항", ["2년"], Q_R1),
    _q("r2", "What is the minimum lease term?", "rent", "제4조제1항", ["2년"], Q_R1),
    _q("r3", "월세는 한 번에 얼마까지 올릴 수 있나요?", "rent", "제7조제1항", ["20분의 1"], Q_R3),
    _q("nq", "차임 증액 한도는?", "rent", "제7조", ["20분의 1"]),  # no quote: skipped
    {"id": "u1", "question": "회사 식당 메뉴는?", "answerable": False, "gold": {"reason": "not in the corpus"}},
]
CLAIMS = [
    {"id": "c1", "doc_id": "travel", "label": "supported", "quote": "여행을 마친 날부터 2주일 이내에",
     "claim": "출장자는 여행을 마친 날부터 2주일 안에 정산을 신청해야 한다."},
    {"id": "c2", "doc_id": "travel", "label": "number_changed", "quote": "여행을 마친 날부터 2주일 이내에",
     "claim": "출장자는 여행을 마친 날부터 3주일 안에 정산을 신청해야 한다."},
    {"id": "c3", "doc_id": "rent", "label": "supported", "quote": Q_R1,
     "claim": "2년 미만으로 정한 임대차는 기간이 2년으로 본다."},
    {"id": "c4", "doc_id": "travel", "label": "supported", "quote": "정산을 늦게 신청한 경우에는 그 사유를 적어야 한다",
     "claim": "정산이 늦으면 사유를 적어야 한다."},  # not in any gold quote
    {"id": "c5", "doc_id": "rent", "label": "supported", "quote": Q_T2,
     "claim": "국내 여행 숙박비는 상한액의 10분의 3까지 더 준다."},  # another document's quote
]


def write_dataset(root: Path, questions: list[dict] = QUESTIONS, claims: list[dict] | None = CLAIMS) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    for name, rows in (("corpus.jsonl", CORPUS), ("questions.jsonl", questions), ("claims.jsonl", claims)):
        if rows is not None:
            (root / name).write_text("".join(json.dumps(o, ensure_ascii=False) + "\n" for o in rows), "utf-8")
    return root
