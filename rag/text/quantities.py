"""Quantities a text states: numbers with their units, dates, ratios and statute references, read
into :class:`Quantity` values (:func:`extract_quantities`, :func:`claim_quantities`). Pure functions
over text; :func:`rag.text.facts.clear_caches` empties the caches. Numerals are read by
:mod:`rag.text.numerals`; the units, their conversion and when a claim's quantity states what an
evidence quantity states (:func:`same_quantity`) are :mod:`rag.text.units`, and the normal form the
text is read in (:func:`normalize_facts`) is :mod:`rag.text.fact_form` (all re-exported here).

Quantities (:func:`extract_quantities`)
    Arabic numbers (``20,000``, ``3.5``), Korean numerals and composites (``1억6천500만원`` =
    165,000,000 KRW, ``2만원``, ``오십만원``), native counters (``하루``, ``이틀``, ``한 달``, ``두 번``,
    ``두 사람``), English number words (``two weeks``, ``twice``, ``one hundred``), with a unit
    converted to a canonical one inside its dimension: days (``2주일`` = 14 days), months
    (``1년`` = 12 months), seconds (``2시간``), KRW/USD/EUR, percent (``18%``, ``18퍼센트``, ``1할``),
    ratios (``10분의 3`` = 3/10, which equals ``30%``), multipliers (``5배``, ``twice``),
    occurrences (``회``/``번``), persons, items, floors, ages, lengths, masses, areas, volumes
    and ppm. Dates: ``2024. 6. 28.``, ``2024.6.28``, ``2024-06-28``, ``2024년 6월 28일``,
    ``June 28, 2024`` and partial forms (a year, a month of a year, a month and day).

    Rate denominators are quantities too: ``연 60일`` and ``월 16만원`` imply one year / one
    month (``implied``), and ``1일에 4시간`` / ``하루에`` mark a written one as a rate. An
    implied rate in the evidence supports only a rate in the claim, so ``연 2퍼센트`` does not
    support a claim's ``1년 이내``.

Statute references
    ``제16조``, ``제8조의2``, ``제1항`` (and the paragraph marks ``①``…), ``제3호``, ``제2장`` and
    ``Article 8`` are quantities of kind ``reference``; a claim that names an article or
    paragraph the cited text does not contain is therefore a mismatch (the block's locator,
    such as ``제16조제1항``, counts as part of the cited text in the validator). List
    enumerators (``1.`` at the start of a line) are references the evidence offers as items
    (``제1호``) but never ones a claim must match. Amendment notes (``<개정 2011.2.9,
    2017.1.31>``, ``[본조신설 …]``) are read like any text: their dates are dates the evidence
    states, so a claim may repeat them; as nothing in the evidence has to appear in the
    claim, they never make a claim fail.
"""
from __future__ import annotations

import re
from collections.abc import Iterator
from fractions import Fraction
from functools import lru_cache

from rag.lang import HANGUL_SYLLABLES
from rag.lang.en import quantities as en_quantities
from rag.lang.ko import quantities as ko_quantities
from rag.text.fact_form import normalize_facts
from rag.text.numerals import (
    ARABIC_NUMERAL,
    ENGLISH_MAGNITUDES,
    ENGLISH_NUMERAL,
    ENGLISH_ORDINALS,
    HANGUL_NUMERAL,
    NATIVE_DAYS,
    NATIVE_NUMERALS,
    NUMERAL,
    month_number,
    parse_english_number,
    parse_korean_number,
)
from rag.text.sentences import strip_markers
from rag.text.units import (
    ENGLISH_RATE,
    ENGLISH_RATE_UNITS,
    ENGLISH_REFERENCE_UNITS,
    ENGLISH_TIMES,
    ENGLISH_UNITS,
    KOREAN_UNITS,
    MONEY_PREFIX_UNITS,
    NATIVE_COUNTERS,
    RATE_PREFIX,
    RATE_PREFIX_UNITS,
    REFERENCE_UNITS,
    Kind,
    Quantity,
    is_rate,
    same_quantity,
    unit_after,
)

__all__ = ["Kind", "Quantity", "claim_quantities", "extract_quantities", "normalize_facts", "parse_english_number",
           "parse_korean_number", "same_quantity"]


# --------------------------------------------------------------------------- pattern passes
_HANGUL = f"[{HANGUL_SYLLABLES}]"
_DATE_PATTERNS = (
    re.compile(r"(?<![\d.])(\d{4})\s?\.\s?(\d{1,2})\s?\.\s?(\d{1,2})(?:\s?\.)?(?![\d])"),
    re.compile(r"(?<![\d-])(\d{4})-(\d{1,2})-(\d{1,2})(?![\d-])"),
    re.compile(r"(?<![\d/])(\d{4})/(\d{1,2})/(\d{1,2})(?![\d/])"),
    re.compile(ko_quantities.DATE),
)
_YEAR_MONTH = re.compile(ko_quantities.YEAR_MONTH)
_MONTH_DAY = re.compile(ko_quantities.MONTH_DAY)
_EN_DATE_MDY = re.compile(en_quantities.DATE_MDY)
_EN_DATE_DMY = re.compile(en_quantities.DATE_DMY)
_EN_MONTH_YEAR = re.compile(en_quantities.MONTH_YEAR)
_YEAR_KO = re.compile(ko_quantities.YEAR)
_MONTH_KO = re.compile(ko_quantities.MONTH)
_PERIOD_MONTH_CONTEXT = re.compile(ko_quantities.PERIOD_MONTH_CONTEXT)
_YEAR_COUNT_BEFORE = re.compile(ko_quantities.YEAR_COUNT_BEFORE)

_REFERENCE = re.compile(ko_quantities.REFERENCE)
_APPENDIX = re.compile(ko_quantities.APPENDIX)
_EN_REFERENCE = re.compile(en_quantities.REFERENCE)
_THIRD_PARTY = re.compile(ko_quantities.THIRD_PARTY)
_MONEY_AFTER_ARTICLE = re.compile(ko_quantities.MONEY_AFTER_ARTICLE)
_ENUMERATOR = re.compile(r"(?m)^[ \t]*(\d{1,3})\.(?=\s)")

_RATIO = re.compile(rf"(?<![\d.,])({NUMERAL}|{HANGUL_NUMERAL}|{ko_quantities.RATIO_DENOMINATOR_WORDS})"
                    + ko_quantities.RATIO_OF
                    + rf"({NUMERAL}|{HANGUL_NUMERAL}|{ko_quantities.RATIO_NUMERATOR_WORDS})(?![\d,])")
_EN_FRACTION = re.compile(rf"(?i)\b(half|halves|quarters?|(?:{'|'.join(ENGLISH_ORDINALS)})s?)\b")
_EN_FRACTION_COUNT = re.compile(rf"(?i)\b({ENGLISH_NUMERAL}|a|\d+)[\s-]+$")
_SLASH_RATIO = re.compile(r"(?<![\d/.])(\d{1,3})/(\d{1,3})(?![\d/])")
_HALF_KO = re.compile(ko_quantities.HALF)
_HALL = re.compile(ko_quantities.HALL)
_MONEY_SCALES = {**en_quantities.MONEY_SCALES, **ko_quantities.MONEY_SCALES}
_MONEY_PREFIX = re.compile(rf"(?:\$|US\$|USD\s?|₩|KRW\s?|€|EUR\s?)\s?({ARABIC_NUMERAL})(?:\s?("
                           + en_quantities.MONEY_SCALE + "|" + ko_quantities.MONEY_SCALE + "))?")
_EN_SCALE_AFTER = re.compile(en_quantities.SCALE_AFTER)
_NATIVE_DAY_WORDS = "|".join(NATIVE_DAYS)
_NATIVE_DAY_RE = re.compile(rf"(?<!{_HANGUL})({_NATIVE_DAY_WORDS})"
                            rf"(?=$|[^{HANGUL_SYLLABLES}]|{ko_quantities.PARTICLE_AFTER_DAY})")
_NATIVE_WORDS = "|".join(sorted(NATIVE_NUMERALS, key=len, reverse=True))
_COUNTER_WORDS = "|".join(sorted(NATIVE_COUNTERS, key=len, reverse=True))
_NATIVE_RE = re.compile(rf"(?<!{_HANGUL})({_NATIVE_WORDS})\s?({_COUNTER_WORDS})(?!{_HANGUL})|"
                        rf"(?<!{_HANGUL})({_NATIVE_WORDS})\s?({_COUNTER_WORDS})"
                        rf"(?={ko_quantities.PARTICLE_AFTER_COUNTER})")
_OBJECT_PARTICLE_BEFORE = re.compile(ko_quantities.OBJECT_PARTICLE_BEFORE)
_EN_TIMES = re.compile(en_quantities.TIMES)
_EN_A_UNIT = re.compile(en_quantities.A_UNIT)
_NUMBER = re.compile(rf"(?<![\d.,A-Za-z])(?:{NUMERAL})(?![\d])")
_HANGUL_NUMBER = re.compile(rf"(?<!{_HANGUL})({HANGUL_NUMERAL})(?=\s?{ko_quantities.NUMBER_UNITS})")
_EN_NUMBER = re.compile(rf"(?i)\b{ENGLISH_NUMERAL}\b")
_IDENTIFIER_AFTER = re.compile(r"[A-Za-z]")
_RANGE_NEXT = re.compile(rf"\s?(?:~|∼|-|–|—|{ko_quantities.RANGE_WORDS}|,)\s?(?=(?:{ARABIC_NUMERAL}))")


class _Spans:
    """Masked regions of the text, so a later pass never re-reads what an earlier one consumed."""

    def __init__(self, t: str) -> None:
        self.mask = bytearray(len(t))
        # the parts of the text around digits, where every numeric pattern is looked for (a regex run over
        # these alone costs a fraction of one over the whole text)
        self.regions: list[tuple[int, int]] = []
        for m in _DIGITS.finditer(t):
            a, b = max(0, m.start() - 12), min(len(t), m.end() + 40)
            if self.regions and a <= self.regions[-1][1]:
                self.regions[-1] = (self.regions[-1][0], b)
            else:
                self.regions.append((a, b))

    def free(self, a: int, b: int) -> bool:
        return self.mask.find(1, a, b) < 0

    def take(self, a: int, b: int) -> None:
        self.mask[a:b] = b"\x01" * (b - a)


_DIGITS = re.compile(r"\d+")


def _scan(pattern: re.Pattern[str], t: str, spans: _Spans) -> Iterator[re.Match[str]]:
    """``pattern.finditer`` over the regions around digits only (lookbehinds still see the whole text)."""
    for a, b in spans.regions:
        yield from pattern.finditer(t, a, b)


def _q(value: Fraction, unit: str, kind: Kind, t: str, a: int, b: int, number: Fraction | None = None, *,
       rate: bool = False, implied: bool = False) -> Quantity:
    return Quantity(value, unit, kind, t[a:b], value if number is None else number, a, b, rate, implied)


def _valid_date(y: int, m: int, d: int) -> bool:
    return 1 <= m <= 12 and 1 <= d <= 31 and 1000 <= y <= 2999


def _dates(t: str, spans: _Spans, out: list[Quantity], latin: bool) -> None:
    for pat in _DATE_PATTERNS:
        for m in _scan(pat, t, spans):
            y, mo, d = int(m.group(1)), int(m.group(2)), int(m.group(3))
            if _valid_date(y, mo, d) and spans.free(m.start(), m.end()):
                spans.take(m.start(), m.end())
                out.append(_q(Fraction(y * 10000 + mo * 100 + d), "date", "date", t, m.start(), m.end()))
    for pat, order in ((_EN_DATE_MDY, "mdy"), (_EN_DATE_DMY, "dmy")) if latin else ():
        for m in pat.finditer(t):
            if order == "mdy":
                mo, d, y = month_number(m.group(1)), int(m.group(2)), int(m.group(3))
            else:
                d, mo, y = int(m.group(1)), month_number(m.group(2)), int(m.group(3))
            if _valid_date(y, mo, d) and spans.free(m.start(), m.end()):
                spans.take(m.start(), m.end())
                out.append(_q(Fraction(y * 10000 + mo * 100 + d), "date", "date", t, m.start(), m.end()))
    for m in _scan(_YEAR_MONTH, t, spans):
        y, mo = int(m.group(1)), int(m.group(2))
        if _valid_date(y, mo, 1) and spans.free(m.start(), m.end()):
            spans.take(m.start(), m.end())
            out.append(_q(Fraction(y * 10000 + mo * 100), "yearmonth", "date", t, m.start(), m.end()))
    for m in _EN_MONTH_YEAR.finditer(t) if latin else ():
        y, mo = int(m.group(2)), month_number(m.group(1))
        if m.group(1).lower() != en_quantities.MONTH_ALSO_A_VERB and spans.free(m.start(), m.end()) \
                and _valid_date(y, mo, 1):
            spans.take(m.start(), m.end())
            out.append(_q(Fraction(y * 10000 + mo * 100), "yearmonth", "date", t, m.start(), m.end()))
    for m in _scan(_MONTH_DAY, t, spans):
        mo, d = int(m.group(1)), int(m.group(2))
        if _valid_date(2000, mo, d) and spans.free(m.start(), m.end()):
            spans.take(m.start(), m.end())
            out.append(_q(Fraction(mo * 100 + d), "monthday", "date", t, m.start(), m.end()))
    for m in _scan(_YEAR_KO, t, spans):
        if spans.free(m.start(), m.end()):
            spans.take(m.start(), m.end())
            out.append(_q(Fraction(int(m.group(1)) * 10000), "year", "date", t, m.start(), m.end()))


def _sub_number(sub: str | None) -> str:
    """What a reference's sub-number adds to its unit (``의2`` of ``제8조의2``); '' when it has none."""
    return f"{ko_quantities.SUB_NUMBER}{int(sub)}" if sub else ""


def _references(t: str, spans: _Spans, out: list[Quantity], latin: bool) -> None:
    for m in _THIRD_PARTY.finditer(t):
        spans.take(m.start(), m.end())  # 제3자 / 제삼자: a legal term (third party), not a number
    for m in _APPENDIX.finditer(t):  # 별표 2의4: an appended table, not a count
        if spans.free(m.start(), m.end()):
            spans.take(m.start(), m.end())
            out.append(_q(Fraction(int(m.group(2))), m.group(1) + _sub_number(m.group(3)),
                          "reference", t, m.start(), m.end()))
    for m in _scan(_REFERENCE, t, spans):
        if not spans.free(m.start(), m.end()):
            continue
        num, unit, sub = (m.group(1), m.group(2), m.group(3)) if m.group(1) else (m.group(4), m.group(5), m.group(6))
        if unit == ko_quantities.ARTICLE_UNIT and _MONEY_AFTER_ARTICLE.match(t[m.end():m.end() + 2]):
            continue  # 16조원: money, read later
        spans.take(m.start(), m.end())
        out.append(_q(Fraction(int(num)), REFERENCE_UNITS[unit] + _sub_number(sub), "reference", t,
                      m.start(), m.end()))
    for m in _EN_REFERENCE.finditer(t) if latin else ():
        if spans.free(m.start(), m.end()):
            spans.take(m.start(), m.end())
            unit = ENGLISH_REFERENCE_UNITS[m.group(1).lower()]
            out.append(_q(Fraction(int(m.group(2))), unit + _sub_number(m.group(3)),
                          "reference", t, m.start(), m.end()))
    for m in _scan(_ENUMERATOR, t, spans):
        if spans.free(m.start(1), m.end()):
            spans.take(m.start(1), m.end())
            out.append(_q(Fraction(int(m.group(1))), ko_quantities.ITEM_UNIT, "reference", t, m.start(1), m.end(),
                          implied=True))


def _ratios(t: str, spans: _Spans, out: list[Quantity], latin: bool) -> None:
    for m in _RATIO.finditer(t) if any(w in t for w in ko_quantities.RATIO_MARKERS) else ():
        den, num = parse_korean_number(m.group(1)), parse_korean_number(m.group(2))
        if den and num is not None and spans.free(m.start(), m.end()):
            spans.take(m.start(), m.end())
            out.append(_q(num / den, "ratio", "ratio", t, m.start(), m.end()))
    for m in _scan(_HALL, t, spans) if any(w in t for w in ko_quantities.HALL_MARKERS) else ():
        if not spans.free(m.start(), m.end()):
            continue
        if m.group(4):
            value = Fraction(int(m.group(4)))
        else:
            value = Fraction(int(m.group(1)) * 10) + int(m.group(2) or 0) + Fraction(int(m.group(3) or 0), 10)
        spans.take(m.start(), m.end())
        out.append(_q(value, "percent", "percent", t, m.start(), m.end()))
    for m in _HALF_KO.finditer(t) if ko_quantities.HALF_WORD in t else ():
        if spans.free(m.start(), m.end()):
            spans.take(m.start(), m.end())
            out.append(_q(Fraction(1, 2), "ratio", "ratio", t, m.start(), m.end()))
    for m in _EN_FRACTION.finditer(t) if latin else ():
        before = _EN_FRACTION_COUNT.search(t[max(0, m.start() - 40):m.start()])
        start = m.start() - (len(before.group(0)) if before else 0)
        if not spans.free(start, m.end()):
            continue
        word = m.group(1).lower()
        lead = before.group(1).lower() if before else ""
        if word in ("half", "halves"):
            base = Fraction(1, 2)
        elif word.startswith("quarter"):
            base = Fraction(1, 4)
        elif lead:
            base = Fraction(1, ENGLISH_ORDINALS[word.rstrip("s")] if word.rstrip("s") in ENGLISH_ORDINALS else ENGLISH_ORDINALS[word])
        else:
            continue  # "the third paragraph": an ordinal, not a ratio
        count = Fraction(1) if lead in ("", "a") else (parse_english_number(lead) if not lead.isdigit() else Fraction(lead))
        if count is None:
            continue
        spans.take(start, m.end())
        out.append(_q(base * count, "ratio", "ratio", t, start, m.end()))
    for m in _SLASH_RATIO.finditer(t) if "/" in t else ():
        a, b = int(m.group(1)), int(m.group(2))
        if b and a < b and spans.free(m.start(), m.end()):
            spans.take(m.start(), m.end())
            out.append(_q(Fraction(a, b), "ratio", "ratio", t, m.start(), m.end()))


def _period_month(t: str, start: int, end: int) -> bool:
    """``6월`` is six months (not June) after a year count (``1년 6월``) or before 간/이내/이하…"""
    if _PERIOD_MONTH_CONTEXT.match(t, end):
        return True
    return bool(_YEAR_COUNT_BEFORE.search(t[max(0, start - 6):start]))


def _numbers(t: str, spans: _Spans, out: list[Quantity], latin: bool) -> None:
    """Money written with a symbol first ($5, ₩10,000), then every other number with the unit after it
    (or none: a count), a run of numbers sharing the unit that ends it (10~20일)."""
    _money_prefixed(t, spans, out, latin)
    _attach_units(t, spans, out, _number_spans(t, spans, latin))


def _money_prefixed(t: str, spans: _Spans, out: list[Quantity], latin: bool) -> None:
    """$5, US$ 2.5 million, ₩10,000, EUR 3: the symbol before the number names the currency."""
    for m in _scan(_MONEY_PREFIX, t, spans) if latin else ():
        if not spans.free(m.start(), m.end()):
            continue
        sym = re.match(r"US\$|\$|USD|₩|KRW|€|EUR", m.group(0))
        value = Fraction(m.group(1).replace(",", ""))
        scale = m.group(2)
        if scale:
            value *= _MONEY_SCALES[scale]
        spans.take(m.start(), m.end())
        out.append(_q(value, MONEY_PREFIX_UNITS[sym.group(0) if sym else "$"], "money", t, m.start(), m.end()))


def _number_spans(t: str, spans: _Spans, latin: bool) -> list[tuple[int, int, Fraction, bool]]:
    """(start, end, value, an English number word) of every number still free: digits with Korean
    or English magnitudes (3만, 2.5 million), Hangul numerals, English number words; in text order."""
    found: list[tuple[int, int, Fraction, bool]] = []  # start, end, value, english scale
    for m in _scan(_NUMBER, t, spans):
        if spans.free(m.start(), m.end()):
            v = parse_korean_number(m.group(0))
            end = m.end()
            mm = _EN_SCALE_AFTER.match(t[end:])
            if v is not None and mm:
                v *= ENGLISH_MAGNITUDES[mm.group(1)]
                end += mm.end()
            if v is not None:
                found.append((m.start(), end, v, False))
    for m in _HANGUL_NUMBER.finditer(t) if _HAS_HANGUL_MAGNITUDE.search(t) else ():
        v = parse_korean_number(m.group(1))
        if v is not None and spans.free(m.start(), m.end()):
            found.append((m.start(), m.end(), v, False))
    for m in _EN_NUMBER.finditer(t) if latin else ():
        v = parse_english_number(m.group(0))
        if v is not None and spans.free(m.start(), m.end()):
            found.append((m.start(), m.end(), v, True))
    found.sort()
    return found


def _attach_units(t: str, spans: _Spans, out: list[Quantity], found: list[tuple[int, int, Fraction, bool]]) -> None:
    """Each number with the unit after it; identifiers (COVID-19, 5G, 3-kinase) taken and skipped, an
    English number word without a unit skipped, a year read as a date, a run of numbers waiting for
    the unit that ends it."""
    pending: list[tuple[int, int, Fraction]] = []  # numbers of a range or list waiting for the unit that follows
    for start, end, v, english in found:
        if not spans.free(start, end):
            continue
        if not english and start > 0 and (t[start - 1].isascii() and t[start - 1].isalpha()
                                          or re.search(r"[A-Za-z]-$", t[max(0, start - 2):start])):
            spans.take(start, end)
            continue  # part of an identifier: COVID-19, A4, B2B
        hit = unit_after(t, end, KOREAN_UNITS + ENGLISH_UNITS)
        if hit is None and t[end:end + 1] == "-":
            hit = unit_after(t, end + 1, ENGLISH_UNITS)  # 5-year, 10-day, 3-fold
            if hit is None and _IDENTIFIER_AFTER.match(t[end + 1:end + 2]) and not english:
                spans.take(start, end)
                continue  # 3-kinase, 1-phosphate: a name
        if hit is None and end < len(t) and _IDENTIFIER_AFTER.match(t[end]) and not english:
            spans.take(start, end)
            continue  # 5G, 3D
        if hit is None and english:
            continue  # "one of the", "the two groups": a number word without a unit is not a quantity
        if hit is None:
            nxt = _RANGE_NEXT.match(t, end)
            if nxt and not english:
                pending.append((start, end, v))
                continue
            for ps, pe, pv in pending:
                out.append(_q(pv, "", "count", t, ps, pe))
            pending.clear()
            spans.take(start, end)
            out.append(_q(v, "", "count", t, start, end))
            continue
        u, uend = hit
        unit, kind, factor = u.unit, u.kind, u.factor
        text_unit = t[end:uend].strip()
        years = text_unit.startswith(ko_quantities.YEAR_UNIT) and not text_unit.startswith(ko_quantities.YEARS_DURATION)
        if years and 1800 <= v <= 2100 and v.denominator == 1:
            unit, kind, factor = "year", "date", Fraction(10000)
        for ps, pe, pv in pending:  # 10~20일, 3, 5, 7일: the unit belongs to each number of the run
            out.append(_q(pv * factor, unit, kind, t, ps, pe, pv))
        pending.clear()
        spans.take(start, uend)
        rate = is_rate(t, uend, v, unit)
        out.append(_q(v * factor, unit, kind, t, start, uend, v, rate=rate))
    for ps, pe, pv in pending:
        out.append(_q(pv, "", "count", t, ps, pe))


def _months(t: str, spans: _Spans, out: list[Quantity]) -> None:
    for m in _scan(_MONTH_KO, t, spans):
        if not spans.free(m.start(), m.end()):
            continue
        mo = int(m.group(1))
        spans.take(m.start(), m.end())
        if _period_month(t, m.start(), m.end()):
            out.append(_q(Fraction(mo), "month", "period", t, m.start(), m.end(), Fraction(mo)))
        elif 1 <= mo <= 12:
            out.append(_q(Fraction(mo * 100), "month-of-year", "date", t, m.start(), m.end(), Fraction(mo)))


def _native(t: str, spans: _Spans, out: list[Quantity], latin: bool) -> None:
    for m in _NATIVE_DAY_RE.finditer(t) if any(w in t for w in NATIVE_DAYS) else ():
        if spans.free(m.start(), m.end()):
            v = Fraction(NATIVE_DAYS[m.group(1)])
            spans.take(m.start(), m.end())
            out.append(_q(v, "day", "period", t, m.start(), m.end(), v, rate=is_rate(t, m.end(), v, "day")))
    for m in _NATIVE_RE.finditer(t):
        word, counter = (m.group(1), m.group(2)) if m.group(1) else (m.group(3), m.group(4))
        if not spans.free(m.start(), m.end()):
            continue
        if (word, counter) == ko_quantities.VERB_NOT_COUNT and \
                _OBJECT_PARTICLE_BEFORE.search(t[max(0, m.start() - 2):m.start()]):
            continue  # 위반을 한 사람: a verb, not "one person"
        unit, kind, factor = NATIVE_COUNTERS[counter]
        v = Fraction(NATIVE_NUMERALS[word])
        spans.take(m.start(), m.end())
        out.append(_q(v * factor, unit, kind, t, m.start(), m.end(), v, rate=is_rate(t, m.end(), v, unit)))
    for m in _EN_TIMES.finditer(t) if latin else ():
        if spans.free(m.start(), m.end()):
            v, unit, kind = ENGLISH_TIMES[m.group(1).lower()]
            spans.take(m.start(), m.end())
            out.append(_q(Fraction(v), unit, kind, t, m.start(), m.end()))
    for m in _EN_A_UNIT.finditer(t) if latin else ():
        if spans.free(m.start(), m.end()):
            u = unit_after(t, m.start(2), ENGLISH_UNITS)
            if u is None:
                continue
            spans.take(m.start(), m.end())
            rate = m.group(1).lower() != en_quantities.ONE and m.start() > 0 \
                and bool(re.search(r"\d\s*\S*\s*$", t[:m.start()]))
            out.append(_q(u[0].factor, u[0].unit, u[0].kind, t, m.start(), m.end(), Fraction(1), rate=rate))


def _rates(t: str, spans: _Spans, out: list[Quantity], latin: bool) -> None:
    native = any(w in t for w in ko_quantities.NATIVE_RATE_HINTS)
    for m in RATE_PREFIX.finditer(t) if native else _scan(RATE_PREFIX, t, spans):
        if spans.free(m.start(1), m.end(1)):
            unit, factor = RATE_PREFIX_UNITS[m.group(1)]
            spans.take(m.start(1), m.end(1))
            out.append(_q(Fraction(factor), unit, "period", t, m.start(1), m.end(1), Fraction(1), rate=True,
                          implied=True))
    for m in ENGLISH_RATE.finditer(t) if latin else ():
        if spans.free(m.start(), m.end()):
            unit, factor = ENGLISH_RATE_UNITS[(m.group(1) or m.group(2)).lower()]
            spans.take(m.start(), m.end())
            out.append(_q(Fraction(factor), unit, "period", t, m.start(), m.end(), Fraction(1), rate=True,
                          implied=True))


_HAS_DIGIT = re.compile(r"\d")
_HAS_LATIN = re.compile(r"[A-Za-z$€₩]")
_HAS_HANGUL_MAGNITUDE = re.compile(ko_quantities.MAGNITUDE)


@lru_cache(maxsize=20_000)
def extract_quantities(text: str) -> tuple[Quantity, ...]:
    """Every quantity in ``text``, in order of appearance (offsets into :func:`normalize_facts` of it)."""
    t = normalize_facts(text)
    spans = _Spans(t)
    out: list[Quantity] = []
    digits = _HAS_DIGIT.search(t) is not None
    latin = _HAS_LATIN.search(t) is not None
    if digits:
        _dates(t, spans, out, latin)
    if ko_quantities.REFERENCE_PREFIX in t or digits or latin:
        _references(t, spans, out, latin)
    _ratios(t, spans, out, latin)
    _rates(t, spans, out, latin)
    _native(t, spans, out, latin)
    if digits:
        _months(t, spans, out)
    if digits or latin or _HAS_HANGUL_MAGNITUDE.search(t):
        _numbers(t, spans, out, latin)
    out.sort(key=lambda q: (q.start, q.end))
    return tuple(out)


def claim_quantities(text: str) -> tuple[Quantity, ...]:
    """The quantities a claim asserts: every quantity but the list enumerators it may start with."""
    return tuple(q for q in extract_quantities(strip_markers(text)) if not (q.kind == "reference" and q.implied))
