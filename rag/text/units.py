"""Quantities as values: the dimensions (:data:`Kind`), a :class:`Quantity` in the canonical unit of its
dimension, the units and counters texts write and their conversion factors (``2주일`` = 14 days, ``1년``
= 12 months, ``2시간`` = 7,200 seconds), rate denominators (``연``, ``매월``, ``per year``), and when a
claim's quantity states what an evidence quantity states (:func:`same_quantity`). Reading quantities
from text is :mod:`rag.text.quantities`."""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Literal

__all__ = ["ENGLISH_RATE", "ENGLISH_RATE_UNITS", "ENGLISH_REFERENCE_UNITS", "ENGLISH_TIMES", "ENGLISH_UNITS",
           "KOREAN_UNITS", "Kind", "MONEY_PREFIX_UNITS", "NATIVE_COUNTERS", "Quantity", "RATE_PREFIX",
           "RATE_PREFIX_UNITS", "REFERENCE_UNITS", "Unit", "is_rate", "same_quantity", "unit_after"]

Kind = Literal["count", "money", "period", "ratio", "percent", "date", "measure", "reference"]


@dataclass(frozen=True)
class Quantity:
    """One quantity as stated in a text.

    ``value`` is in the canonical ``unit`` of its dimension (``2주일``: 14, ``day``); ``number``
    is the number as written (2). Dates keep their parts in ``value`` as ``yyyymmdd`` (missing
    parts are zero; ``unit`` says which parts exist). ``text`` is the span in the normalised
    text (NFKC, paragraph marks spelt out) at ``start``..``end``."""

    value: Fraction
    unit: str
    kind: Kind
    text: str
    number: Fraction
    start: int = 0
    end: int = 0
    rate: bool = False  # a "per" denominator: 연 60일, 1일에 4시간, per year
    implied: bool = False  # no numeral written: 연/월/매월 (one year / month), list enumerators
    # float copies of value and number: a cheap first test before the exact Fraction comparison
    fvalue: float = field(default=0.0, init=False, repr=False, compare=False)
    fnumber: float = field(default=0.0, init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "fvalue", float(self.value))
        object.__setattr__(self, "fnumber", float(self.number))

    def describe(self) -> str:
        return self.text.strip()


# --------------------------------------------------------------------------- units
@dataclass(frozen=True)
class Unit:
    """A unit as written after a number, with the canonical unit and factor it converts to."""

    pattern: re.Pattern[str]
    unit: str
    kind: Kind
    factor: Fraction
    spaced: bool  # may follow the number after a space


def _u(pattern: str, unit: str, kind: Kind, factor: float | Fraction = 1, spaced: bool = False) -> Unit:
    return Unit(re.compile(pattern), unit, kind, Fraction(factor), spaced)


_NOT_WORD = r"(?![A-Za-z])"

# Korean units (after the number, no space unless ``spaced``); longest first, with lookaheads that
# keep compounds out (주택 is not weeks, 초과 is not seconds, 배우자 is not a multiplier).
KOREAN_UNITS: tuple[Unit, ...] = (
    _u(r"킬로미터|km" + _NOT_WORD, "m", "measure", 1000, True),
    _u(r"제곱센티미터|cm2" + _NOT_WORD, "m2", "measure", Fraction(1, 10000), True),
    _u(r"센티미터|cm" + _NOT_WORD, "m", "measure", Fraction(1, 100), True),
    _u(r"밀리미터|mm" + _NOT_WORD, "m", "measure", Fraction(1, 1000), True),
    _u(r"세제곱미터|입방미터|m3" + _NOT_WORD, "m3", "measure", 1, True),
    _u(r"제곱미터|평방미터|m2" + _NOT_WORD, "m2", "measure", 1, True),
    _u(r"미터|m" + _NOT_WORD, "m", "measure", 1, True),
    _u(r"킬로그램|kg" + _NOT_WORD, "g", "measure", 1000, True),
    _u(r"밀리그램|mg" + _NOT_WORD, "g", "measure", Fraction(1, 1000), True),
    _u(r"그램|g" + _NOT_WORD, "g", "measure", 1, True),
    _u(r"톤|t" + _NOT_WORD, "g", "measure", 10 ** 6, True),
    _u(r"헥타르|ha" + _NOT_WORD, "m2", "measure", 10000, True),
    _u(r"밀리리터|ml" + _NOT_WORD + r"|mL" + _NOT_WORD, "L", "measure", Fraction(1, 1000), True),
    _u(r"리터|ℓ|L" + _NOT_WORD, "L", "measure", 1, True),
    _u(r"피피엠|ppm" + _NOT_WORD, "ppm", "measure", 1, True),
    _u(r"데시벨|dB" + _NOT_WORD, "dB", "measure", 1, True),
    _u(r"킬로와트|kW" + _NOT_WORD, "W", "measure", 1000, True),
    _u(r"℃|°C|도(?=\s?(?:이상|이하|미만|초과|를|에|의|까지))", "celsius", "measure", 1),
    _u(r"평(?![가균등생일소야온화])", "pyeong", "measure", 1),
    _u(r"주일(?:간)?", "day", "period", 7, True),
    _u(r"주(?:간)?(?![택식년주])", "day", "period", 7),
    _u(r"개월(?:간)?", "month", "period", 1, True),
    _u(r"개년", "month", "period", 12, True),
    _u(r"년(?:간)?(?!도)", "month", "period", 12),
    _u(r"일(?:간)?(?![반자괄련체치용률람종환몰])", "day", "period", 1),
    _u(r"시간", "second", "period", 3600, True),
    _u(r"분(?!의|기|류|할|배|담|당|야|석|리|만|쟁|량)", "second", "period", 60),
    _u(r"초(?!과|등|순|반|안|기|본|고|래|청|월)", "second", "period", 1),
    _u(r"퍼센트|프로(?!그|젝|세|필|토)", "percent", "percent", 1, True),
    _u(r"%", "percent", "percent", 1, True),
    _u(r"원(?!칙|인|본|리|장|회|자|래|문|고|격)", "KRW", "money", 1, True),
    _u(r"달러", "USD", "money", 1, True),
    _u(r"유로", "EUR", "money", 1, True),
    _u(r"엔(?![진터])", "JPY", "money", 1),
    _u(r"배(?![상우정치출당제분달송포열수])", "x", "ratio", 1),
    _u(r"회(?![사계원장기차의관복피])", "times", "count", 1),
    _u(r"번(?![호지째역])", "times", "count", 1),
    _u(r"차례", "times", "count", 1, True),
    _u(r"명(?![령칭단세시예뢰백확])", "person", "count", 1, True),
    _u(r"인(?![상하건정용원출증])", "person", "count", 1),
    _u(r"사람", "person", "count", 1, True),
    _u(r"층", "floor", "count", 1),
    _u(r"박(?![사물람탈해수])", "night", "count", 1),
    _u(r"세(?![대금액율부기])|살", "age", "count", 1),
    _u(r"개(?![월년정선인소])|건(?![강물축설의])|가지", "item", "count", 1),
    _u(r"개소|곳", "place", "count", 1),
    _u(r"시(?=$|[^가-힣]|까지|부터|에|반|경|이후|이전|전|후|정각)", "o'clock", "date", 1),
)
ENGLISH_UNITS: tuple[Unit, ...] = (
    _u(r"(?i:calendar\s+|business\s+|working\s+)?days?\b", "day", "period", 1, True),
    _u(r"(?i:weeks?)\b", "day", "period", 7, True),
    _u(r"(?i:fortnights?)\b", "day", "period", 14, True),
    _u(r"(?i:months?)\b", "month", "period", 1, True),
    _u(r"(?i:years?)\b", "month", "period", 12, True),
    _u(r"(?i:hours?|hrs?)\b", "second", "period", 3600, True),
    _u(r"(?i:minutes?|mins?)\b", "second", "period", 60, True),
    _u(r"(?i:seconds?|secs?)\b", "second", "period", 1, True),
    _u(r"(?i:percent|per\s+cent|pct)\b", "percent", "percent", 1, True),
    _u(r"(?i:times|fold)\b|-fold\b", "x", "ratio", 1, True),
    _u(r"(?i:won|KRW)\b", "KRW", "money", 1, True),
    _u(r"(?i:dollars?|USD)\b", "USD", "money", 1, True),
    _u(r"(?i:euros?|EUR)\b", "EUR", "money", 1, True),
    _u(r"(?i:people|persons?|employees|workers|members)\b", "person", "count", 1, True),
    _u(r"(?i:floors?|stories|storeys)\b", "floor", "count", 1, True),
    _u(r"(?i:kilometers?|kilometres?)\b", "m", "measure", 1000, True),
    _u(r"(?i:meters?|metres?)\b", "m", "measure", 1, True),
    _u(r"(?i:square\s+met(?:er|re)s?)\b", "m2", "measure", 1, True),
    _u(r"(?i:kilograms?)\b", "g", "measure", 1000, True),
    _u(r"(?i:grams?)\b", "g", "measure", 1, True),
    _u(r"(?i:liters?|litres?)\b", "L", "measure", 1, True),
    _u(r"(?i:years?\s+old)\b", "age", "count", 1, True),
)
# a rate: a written one of a period followed by 에/당/마다 or directly by another quantity (하루 4시간)
_RATE_AFTER = re.compile(r"\s?(?:에|당|마다|에는)?\s?(?=\d|한\s|두\s|세\s)|\s?(?:당|마다)")
RATE_PREFIX = re.compile(r"(?<![가-힣A-Za-z])(매년|연간|해마다|매월|매달|월간|달마다|매주|주간|매일|일간|연|월|주)\s?"
                         r"(?=\d|한\s|두\s|하루|이틀|사흘)")
RATE_PREFIX_UNITS = {"매년": ("month", 12), "연간": ("month", 12), "해마다": ("month", 12), "연": ("month", 12),
                     "매월": ("month", 1), "매달": ("month", 1), "월간": ("month", 1), "달마다": ("month", 1),
                     "월": ("month", 1), "매주": ("day", 7), "주간": ("day", 7), "주": ("day", 7), "매일": ("day", 1),
                     "일간": ("day", 1)}
ENGLISH_RATE = re.compile(r"(?i)\b(?:per|each|every)\s+(year|month|week|day|hour)\b|\b(annually|yearly|monthly|"
                          r"weekly|daily|hourly)\b")
ENGLISH_RATE_UNITS = {"year": ("month", 12), "annually": ("month", 12), "yearly": ("month", 12), "month": ("month", 1),
                      "monthly": ("month", 1), "week": ("day", 7), "weekly": ("day", 7), "day": ("day", 1),
                      "daily": ("day", 1), "hour": ("second", 3600), "hourly": ("second", 3600)}

REFERENCE_UNITS = {"조": "조", "항": "항", "호": "호", "목": "목", "장": "장", "절": "절", "관": "관", "편": "편", "급": "급",
                   "등급": "등급", "종": "종", "차": "차"}
ENGLISH_REFERENCE_UNITS = {"article": "조", "art.": "조", "paragraph": "항", "para.": "항", "subparagraph": "호", "item": "호",
                           "chapter": "장", "section": "절"}
MONEY_PREFIX_UNITS = {"$": "USD", "US$": "USD", "USD": "USD", "₩": "KRW", "KRW": "KRW", "€": "EUR", "EUR": "EUR"}
NATIVE_COUNTERS = {"명": ("person", "count", 1), "사람": ("person", "count", 1), "번": ("times", "count", 1),
                   "차례": ("times", "count", 1), "달": ("month", "period", 1), "해": ("month", "period", 12),
                   "개": ("item", "count", 1), "가지": ("item", "count", 1), "건": ("item", "count", 1),
                   "시간": ("second", "period", 3600), "살": ("age", "count", 1), "배": ("x", "ratio", 1),
                   "곳": ("place", "count", 1), "주": ("day", "period", 7), "층": ("floor", "count", 1)}
ENGLISH_TIMES = {"once": (1, "times", "count"), "twice": (2, "x", "ratio"), "thrice": (3, "x", "ratio"),
                 "double": (2, "x", "ratio"), "triple": (3, "x", "ratio")}


def unit_after(t: str, pos: int, units: tuple[Unit, ...]) -> tuple[Unit, int] | None:
    """The first of ``units`` written at ``pos`` of ``t`` (after one space where it may be), with its end."""
    for u in units:
        m = u.pattern.match(t, pos)
        if m and m.end() > pos:
            return u, m.end()
        if u.spaced and pos < len(t) and t[pos] == " ":
            m = u.pattern.match(t, pos + 1)
            if m and m.end() > pos + 1:
                return u, m.end()
    return None


def is_rate(t: str, end: int, value: Fraction, unit: str) -> bool:
    """A written one of a period that is a rate's denominator (``1일에``, ``하루 4시간``)."""
    return value == 1 and unit in ("day", "month", "second") and bool(_RATE_AFTER.match(t, end))


# --------------------------------------------------------------------------- matching
def _date_parts(q: Quantity) -> tuple[int | None, int | None, int | None]:
    v = int(q.value)
    y, m, d = v // 10000, v // 100 % 100, v % 100
    return {"date": (y, m, d), "yearmonth": (y, m, None), "year": (y, None, None), "monthday": (None, m, d),
            "month-of-year": (None, m, None), "o'clock": (None, None, None)}.get(q.unit, (None, None, None))


def same_quantity(claim: Quantity, evidence: Quantity) -> bool:
    """True when ``evidence`` states what ``claim`` states (the claim side is the stricter one)."""
    if claim.fvalue != evidence.fvalue and claim.fnumber != evidence.fnumber and claim.kind not in (
            "ratio", "percent", "date") and evidence.kind not in ("ratio", "percent", "date"):
        return False  # the common case, decided before the rules below (equal Fractions give equal floats)
    if evidence.implied and evidence.kind != "reference" and not claim.rate:
        return False  # 연 2퍼센트 implies one year only as a rate
    if claim.kind == "reference" or evidence.kind == "reference":
        return claim.kind == evidence.kind and claim.unit == evidence.unit and claim.value == evidence.value
    if claim.unit == "" or evidence.unit == "":
        # a bare number on either side (a table cell, "2 이상") matches the same written number
        return evidence.kind != "date" and claim.kind != "date" and evidence.number == claim.number
    if claim.kind == "date" or evidence.kind == "date":
        if claim.kind != evidence.kind:
            return False
        if "o'clock" in (claim.unit, evidence.unit):
            return claim.unit == evidence.unit and claim.value == evidence.value
        cp, ep = _date_parts(claim), _date_parts(evidence)
        return all(c is None or c == e for c, e in zip(cp, ep))
    if claim.kind in ("ratio", "percent") and evidence.kind in ("ratio", "percent") and "x" not in (
            claim.unit, evidence.unit):
        def frac(q: Quantity) -> Fraction:
            return q.value / 100 if q.kind == "percent" else q.value
        return frac(claim) == frac(evidence)
    return claim.unit == evidence.unit and claim.value == evidence.value
