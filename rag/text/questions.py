"""What kind of fact a question asks for (Korean and English), from its wording alone.

``wanted_fact(question)`` returns one of:

- ``deadline``: 언제까지 / 며칠 이내 / 기한 / by when / deadline / within how many days
- ``period``: 며칠 / 몇 년 / 몇 개월 / 기간 / 얼마 동안 / how long / how many days|weeks|months|years
- ``amount``: 얼마 / 금액 / 몇 원 / how much / what is the fee|amount|cost|limit in money
- ``ratio``: 몇 퍼센트 / 비율 / 몇 분의 몇 / 몇 배 / what percentage|rate|share
- ``count``: 몇 번 / 몇 회 / 몇 명 / 몇 살 / 횟수 / how many times|people / how often / how old
- ``who``: 누가 / 누구 / 어느 기관 / who / whom / which body
- ``condition``: 어떤 경우 / 조건 / 요건 / 언제 (without 까지) / in what case / under what conditions / when
- ``yesno``: 할 수 있나요 / 해야 하나요 / 되나요 / can I / must I / is it / do I have to
- ``other``: anything else (what / how / why ...)

The numeric kinds say which quantities an answer sentence must contain
(:data:`QUANTITY_KINDS`, in the vocabulary of :mod:`rag.text.facts`). The rules are checked in
the order above, so "몇 년간 보존해야 하나요" is a ``period`` question, not a yes/no one.
"""
from __future__ import annotations

import re
import unicodedata
from functools import lru_cache
from typing import Literal

FactKind = Literal["deadline", "period", "amount", "ratio", "count", "who", "condition", "yesno", "other"]

# Quantity kinds (rag.text.facts.Quantity.kind) that can answer each numeric question kind.
QUANTITY_KINDS: dict[str, frozenset[str]] = {
    "deadline": frozenset({"period", "date"}),
    "period": frozenset({"period", "date"}),
    "amount": frozenset({"money", "ratio", "percent", "measure"}),  # "얼마" also asks for 10분의 3, 5배, 30 km/h
    "ratio": frozenset({"ratio", "percent"}),
    "count": frozenset({"count"}),
}

_YES_NO = (r"(?:수\s*있|해야\s*하|하여야\s*하|되|가능한|필요한|맞)(?:나요|습니까|는지|을까요|나|니)\s*\??\s*$|"
           r"^\s*(?:can|could|may|must|should|is|are|do|does|did|will|shall|have)\b")
_RULES: tuple[tuple[str, re.Pattern[str]], ...] = tuple((k, re.compile(p, re.IGNORECASE)) for k, p in (
    ("deadline", r"언제\s*까지|며칠\s*(?:이내|안에|내에|전까지|전에)|몇\s*(?:일|주|개월|달|년|시간)\s*(?:이내|안에|내에|전까지|전에)|"
                 r"기한|마감|by when|deadline|within how (?:many|long)|how (?:soon|quickly)"),
    ("ratio", r"몇\s*(?:퍼센트|%|프로)|비율|몇\s*분의|몇\s*배|지급률|요율|\bpercent(?:age)?\b|\bratio\b|\brate\b|"
              r"what (?:share|fraction|proportion)|how many times (?:more|higher|larger)"),
    ("period", r"며칠|몇\s*(?:일|주|주일|개월|달|년|시간|분)(?:간|동안)?|(?<![장단])기간(?!제)|얼마\s*(?:동안|나\s*오래|간)|얼마나\s*(?:오래|걸)|"
               r"how long|how many (?:days|weeks|months|years|hours|minutes)|for how long"),
    ("count", r"몇\s*(?:번|회|명|차례|개|건|곳|층|살|세)|나이|횟수|인원|how old|what age|how many (?:times|people|persons|members|rooms|items)?|"
              r"how often"),
    ("amount", r"얼마|금액|몇\s*(?:원|만\s*원)|비용|수당|how much|\b(?:fee|cost|price|amount)\b|per[- ]diem|\blimit\b"),
    ("who", r"누가|누구|어느\s*(?:기관|부서|사람|곳)|어떤\s*(?:기관|사람|부서)|\bwho\b|\bwhom\b|which (?:body|office|team|person)"),
    ("condition", r"어떤\s*경우|어느\s*경우|무슨\s*경우|조건|요건|언제(?!\s*까지)|in what case|under what|\bwhen\b|"
                  r"what (?:conditions|circumstances)|in which case"),
    ("yesno", _YES_NO),
))
YES_NO = dict(_RULES)["yesno"]  # how a yes/no question ends (할 수 있나요, 해야 하나요; can I, must I)


@lru_cache(maxsize=4096)
def wanted_fact(question: str) -> FactKind:
    """The kind of fact the question asks for (see the module docstring)."""
    q = unicodedata.normalize("NFKC", question).strip()
    for kind, pat in _RULES:
        if pat.search(q):
            return kind  # type: ignore[return-value]
    return "other"
