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

from rag.lang.en import units as en_units
from rag.lang.ko import units as ko_units

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


# The units texts write after a number, tried in order (rag.text.quantities tries the Korean ones, which
# include the SI symbols, before the English ones); the words and patterns are the languages' (rag.lang).
KOREAN_UNITS: tuple[Unit, ...] = tuple(_u(*row) for row in ko_units.UNITS)
ENGLISH_UNITS: tuple[Unit, ...] = tuple(_u(*row) for row in en_units.UNITS)
# a rate: a written one of a period followed by a rate particle or directly by another quantity (is_rate)
_RATE_AFTER = re.compile(ko_units.RATE_AFTER)
# rate words before a quantity (매월 2회, per year), and the period each stands for
RATE_PREFIX = re.compile(ko_units.RATE_PREFIX)
RATE_PREFIX_UNITS = ko_units.RATE_PREFIX_UNITS
ENGLISH_RATE = re.compile(en_units.RATE)
ENGLISH_RATE_UNITS = en_units.RATE_UNITS

# references (제3조, Article 3), currency symbols before a number, native-numeral counters, multiplier words
REFERENCE_UNITS = ko_units.REFERENCE_UNITS
ENGLISH_REFERENCE_UNITS = en_units.REFERENCE_UNITS
MONEY_PREFIX_UNITS = {"$": "USD", "US$": "USD", "USD": "USD", "₩": "KRW", "KRW": "KRW", "€": "EUR", "EUR": "EUR"}
NATIVE_COUNTERS = ko_units.NATIVE_COUNTERS
ENGLISH_TIMES = en_units.TIMES


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
