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

from rag.lang.en import questions as en_questions
from rag.lang.ko import questions as ko_questions

FactKind = Literal["deadline", "period", "amount", "ratio", "count", "who", "condition", "yesno", "other"]
OTHER_FACT: FactKind = "other"  # what wanted_fact says when no rule matches (a fact kind, not a language)

# Quantity kinds (rag.text.facts.Quantity.kind) that can answer each numeric question kind.
QUANTITY_KINDS: dict[str, frozenset[str]] = {
    "deadline": frozenset({"period", "date"}),
    "period": frozenset({"period", "date"}),
    "amount": frozenset({"money", "ratio", "percent", "measure"}),  # "얼마" also asks for 10분의 3, 5배, 30 km/h
    "ratio": frozenset({"ratio", "percent"}),
    "count": frozenset({"count"}),
}

# The kinds, in the order their rules are checked (yes/no last): each rule is the kind's Korean alternatives,
# then its English ones.
_KINDS = ("deadline", "ratio", "period", "count", "amount", "who", "condition")
_YES_NO = f"{ko_questions.YES_NO_ENDING}|{en_questions.YES_NO_OPENING}"
_PATTERNS = {k: f"{ko_questions.FACT_QUESTIONS[k]}|{en_questions.FACT_QUESTIONS[k]}" for k in _KINDS}
_PATTERNS["yesno"] = _YES_NO
_RULES: tuple[tuple[str, re.Pattern[str]], ...] = tuple((k, re.compile(p, re.IGNORECASE)) for k, p in _PATTERNS.items())
YES_NO = dict(_RULES)["yesno"]  # how a yes/no question ends (할 수 있나요, 해야 하나요; can I, must I)


@lru_cache(maxsize=4096)
def wanted_fact(question: str) -> FactKind:
    """The kind of fact the question asks for (see the module docstring)."""
    q = unicodedata.normalize("NFKC", question).strip()
    for kind, pat in _RULES:
        if pat.search(q):
            return kind  # type: ignore[return-value]
    return OTHER_FACT
