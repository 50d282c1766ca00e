"""Quantities a text states: numbers with their units, dates, ratios and statute references, read
into :class:`Quantity` values (:func:`extract_quantities`, :func:`claim_quantities`), and when a claim's
quantity states what an evidence quantity states (:func:`same_quantity`). Pure functions over text;
:func:`rag.text.facts.clear_caches` empties the caches.

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
import unicodedata
from collections.abc import Iterator
from dataclasses import dataclass, field
from fractions import Fraction
from functools import lru_cache
from typing import Literal

from rag.text.lang import ZERO_WIDTH
from rag.text.sentences import strip_markers

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


# --------------------------------------------------------------------------- normalisation
_CIRCLED = {**{chr(0x2460 + i): i + 1 for i in range(20)}, **{chr(0x3251 + i): 21 + i for i in range(15)},
            **{chr(0x32B1 + i): 36 + i for i in range(15)}}
_CIRCLED_RE = re.compile("[" + "".join(_CIRCLED) + "]")


_HTML_TAG = re.compile(r"</?[A-Za-z][^<>]*>")


@lru_cache(maxsize=20_000)
def normalize_facts(text: str) -> str:
    """The form quantities are read from: paragraph marks ``①`` become ``제1항``, NFKC, zero-width
    characters removed, markdown escapes of list enumerators (``1\\.``) dropped."""
    text = _CIRCLED_RE.sub(lambda m: f" 제{_CIRCLED[m.group(0)]}항 ", text)
    text = text.replace("m²", "m2").replace("m³", "m3").replace("㎡", "m2")
    text = unicodedata.normalize("NFKC", text).translate(ZERO_WIDTH)
    return _HTML_TAG.sub(" ", text).replace("\\.", ".").replace("\\", "")


# --------------------------------------------------------------------------- numerals
_AR = r"\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?"
_KDIGIT = {"일": 1, "이": 2, "삼": 3, "사": 4, "오": 5, "육": 6, "칠": 7, "팔": 8, "구": 9}
_SMALL = {"십": 10, "백": 100, "천": 1000}
_BIG = {"만": 10 ** 4, "억": 10 ** 8, "조": 10 ** 12}
# an Arabic number, optionally with Korean magnitudes: 20,000 / 3.5 / 2만 / 1억6천500만 / 1억 5천만
# 만 is a magnitude before a number, a unit or a comparison (2만원, 1만 명, 3만 이상), and the particle
# "only" otherwise (2분의 1만 지급한다)
_MAN = r"만(?=\s?(?:\d|[원명개건배회주호천억여톤]|달러|유로|엔|가구|세대|이상|이하|미만|초과|[A-Za-z$]))"
_MAG = rf"(?:[십백천억]|{_MAN})"
_NUM = rf"(?:{_AR})(?:\s?{_MAG}+(?:\s?(?:{_AR}))?)*(?:조(?=\s?\d|\s?[억만원]))?"
_HANGUL_NUM = r"[일이삼사오육칠팔구]?(?:[십백천][일이삼사오육칠팔구]?)+[만억]?|[일이삼사오육칠팔구십백천]+[만억]"


def parse_korean_number(text: str) -> Fraction | None:
    """The value of an Arabic, Korean or mixed numeral (``1억6천500만`` → 165000000); None if it is not one."""
    tokens = re.findall(rf"{_AR}|[일이삼사오육칠팔구십백천만억조]", text.replace(" ", ""))
    if not tokens or "".join(tokens) != text.replace(" ", ""):
        return None
    total, group = Fraction(0), Fraction(0)
    cur: Fraction | None = None
    for tok in tokens:
        if tok[0].isdigit():
            cur = Fraction(tok.replace(",", ""))
        elif tok in _KDIGIT:
            cur = Fraction(_KDIGIT[tok])
        elif tok in _SMALL:
            group += (cur if cur is not None else 1) * _SMALL[tok]
            cur = None
        else:
            group += cur or 0
            total += (group if group else 1) * _BIG[tok]
            group, cur = Fraction(0), None
    return total + group + (cur or 0)


_EN_SMALL = {w: i for i, w in enumerate(
    "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen "
    "seventeen eighteen nineteen".split())}
_EN_TENS = {w: 10 * (i + 2) for i, w in enumerate("twenty thirty forty fifty sixty seventy eighty ninety".split())}
_EN_MAG = {"hundred": 100, "thousand": 1000, "million": 10 ** 6, "billion": 10 ** 9}
_EN_WORD = "|".join(sorted([*_EN_SMALL, *_EN_TENS, *_EN_MAG], key=len, reverse=True))
_EN_NUM = rf"(?:(?:{_EN_WORD})(?:[\s-]+(?:and\s+)?(?:{_EN_WORD}))*|a\s+(?:hundred|thousand|million|billion)" \
          rf"(?:[\s-]+(?:and\s+)?(?:{_EN_WORD}))*)"


def parse_english_number(text: str) -> Fraction | None:
    """``two hundred and five`` → 205, ``a thousand`` → 1000, ``1.5 million`` → 1500000."""
    words = re.split(r"[\s-]+", text.lower().replace(",", ""))
    total, cur, seen = Fraction(0), Fraction(0), False
    for w in words:
        if w in ("and", "a", ""):
            continue
        if re.fullmatch(r"\d+(?:\.\d+)?", w):
            cur += Fraction(w)
        elif w in _EN_SMALL:
            cur += _EN_SMALL[w]
        elif w in _EN_TENS:
            cur += _EN_TENS[w]
        elif w == "hundred":
            cur = (cur or 1) * 100
        elif w in _EN_MAG:
            total += (cur or 1) * _EN_MAG[w]
            cur = Fraction(0)
        else:
            return None
        seen = True
    return total + cur if seen else None


# --------------------------------------------------------------------------- units
@dataclass(frozen=True)
class _Unit:
    pattern: re.Pattern[str]
    unit: str
    kind: Kind
    factor: Fraction
    spaced: bool  # may follow the number after a space


def _u(pattern: str, unit: str, kind: Kind, factor: float | Fraction = 1, spaced: bool = False) -> _Unit:
    return _Unit(re.compile(pattern), unit, kind, Fraction(factor), spaced)


_NOT_WORD = r"(?![A-Za-z])"
# Korean units (after the number, no space unless ``spaced``); longest first, with lookaheads that
# keep compounds out (주택 is not weeks, 초과 is not seconds, 배우자 is not a multiplier).
_KO_UNITS: tuple[_Unit, ...] = (
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
_EN_UNITS: tuple[_Unit, ...] = (
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
_RATE_PREFIX = re.compile(r"(?<![가-힣A-Za-z])(매년|연간|해마다|매월|매달|월간|달마다|매주|주간|매일|일간|연|월|주)\s?"
                          r"(?=\d|한\s|두\s|하루|이틀|사흘)")
_RATE_PREFIX_UNIT = {"매년": ("month", 12), "연간": ("month", 12), "해마다": ("month", 12), "연": ("month", 12),
                     "매월": ("month", 1), "매달": ("month", 1), "월간": ("month", 1), "달마다": ("month", 1),
                     "월": ("month", 1), "매주": ("day", 7), "주간": ("day", 7), "주": ("day", 7), "매일": ("day", 1),
                     "일간": ("day", 1)}
_EN_RATE = re.compile(r"(?i)\b(?:per|each|every)\s+(year|month|week|day|hour)\b|\b(annually|yearly|monthly|"
                      r"weekly|daily|hourly)\b")
_EN_RATE_UNIT = {"year": ("month", 12), "annually": ("month", 12), "yearly": ("month", 12), "month": ("month", 1),
                 "monthly": ("month", 1), "week": ("day", 7), "weekly": ("day", 7), "day": ("day", 1),
                 "daily": ("day", 1), "hour": ("second", 3600), "hourly": ("second", 3600)}

# --------------------------------------------------------------------------- pattern passes
_MONTHS = {m: i + 1 for i, m in enumerate(
    "january february march april may june july august september october november december".split())}
_MON = r"(?i:jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|sep(?:t(?:ember)?)?|" \
       r"oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)"
_DATE_PATTERNS = (
    re.compile(r"(?<![\d.])(\d{4})\s?\.\s?(\d{1,2})\s?\.\s?(\d{1,2})(?:\s?\.)?(?![\d])"),
    re.compile(r"(?<![\d-])(\d{4})-(\d{1,2})-(\d{1,2})(?![\d-])"),
    re.compile(r"(?<![\d/])(\d{4})/(\d{1,2})/(\d{1,2})(?![\d/])"),
    re.compile(r"(?<!\d)(\d{4})\s?년\s?(\d{1,2})\s?월\s?(\d{1,2})\s?일"),
)
_YEAR_MONTH = re.compile(r"(?<!\d)(\d{4})\s?년\s?(\d{1,2})\s?월(?!\s?\d)")
_MONTH_DAY = re.compile(r"(?<![\d.])(\d{1,2})\s?월\s?(\d{1,2})\s?일")
_EN_DATE_MDY = re.compile(rf"\b({_MON})\.?\s+(\d{{1,2}})(?:st|nd|rd|th)?,?\s+(\d{{4}})\b")
_EN_DATE_DMY = re.compile(rf"\b(\d{{1,2}})(?:st|nd|rd|th)?\s+({_MON})\.?,?\s+(\d{{4}})\b")
_EN_MONTH_YEAR = re.compile(rf"\b({_MON})\.?\s+(\d{{4}})\b")
_YEAR_KO = re.compile(r"(?<![\d.])(1[89]\d\d|20\d\d)\s?년(?:도)?(?!\s?(?:간|동안|이상|이내|이하|미만|초과|의\s?범위|까지의\s?기간))")
_MONTH_KO = re.compile(r"(?<![\d.])(\d{1,2})\s?월(?!\s?\d)(?![가-힣]*간)")
_PERIOD_MONTH_CONTEXT = re.compile(r"\s?(?:간|동안|이내|이하|이상|미만|초과|의\s?범위|마다)")

_REF_UNITS = {"조": "조", "항": "항", "호": "호", "목": "목", "장": "장", "절": "절", "관": "관", "편": "편", "급": "급",
              "등급": "등급", "종": "종", "차": "차"}
# 제N조 … and the ordinal labels 제N급 / 제N등급 / 제N종 / 제N차 (a grade or class name, not a count); 별표 N
# and 별지 N name an appended table or form.
_REFERENCE = re.compile(r"(?:(?<![가-힣])|(?<=[조항호목장절관편]))제\s?(\d+)\s?(조|항|호|목|장|절|관|편|등급|급|종|차)"
                        r"(?:\s?의\s?(\d+))?|"
                        r"(?<![가-힣\d.,])(\d+)(조|항|호)(?![가-힣])(?:의(\d+))?")
_APPENDIX = re.compile(r"(별표|별지|부표|서식)\s?(?:제\s?)?(\d+)(?:\s?의\s?(\d+))?")
_EN_REFERENCE = re.compile(r"(?i)\b(article|art\.|paragraph|para\.|subparagraph|item|chapter|section)\s*"
                           r"(\d+)(?:-(\d+))?")
_EN_REF_UNIT = {"article": "조", "art.": "조", "paragraph": "항", "para.": "항", "subparagraph": "호", "item": "호",
                "chapter": "장", "section": "절"}
_THIRD_PARTY = re.compile(r"제\s?(?:3|삼)\s?자(?![가-힣]*(?:명|인))")
_ENUMERATOR = re.compile(r"(?m)^[ \t]*(\d{1,3})\.(?=\s)")

_RATIO = re.compile(rf"(?<![\d.,])({_NUM}|{_HANGUL_NUM}|[일이삼사오육칠팔구십백천]+)\s?분\s?의\s?"
                    rf"({_NUM}|{_HANGUL_NUM}|[일이삼사오육칠팔구십]+)(?![\d,])")
_EN_ORDINAL = {w: i for i, w in enumerate(
    "_ _ _ third fourth fifth sixth seventh eighth ninth tenth eleventh twelfth thirteenth fourteenth fifteenth "
    "sixteenth seventeenth eighteenth nineteenth twentieth".split()) if w != "_"}
_EN_ORDINAL.update({"thirtieth": 30, "fortieth": 40, "fiftieth": 50, "hundredth": 100, "thousandth": 1000})
_EN_FRACTION = re.compile(rf"(?i)\b(half|halves|quarters?|(?:{'|'.join(_EN_ORDINAL)})s?)\b")
_EN_FRACTION_COUNT = re.compile(rf"(?i)\b({_EN_NUM}|a|\d+)[\s-]+$")
_SLASH_RATIO = re.compile(r"(?<![\d/.])(\d{1,3})/(\d{1,3})(?![\d/])")
_HALF_KO = re.compile(r"(?<![가-힣])절반")
_HALL = re.compile(r"(?<![\d.])(\d+)\s?할(?:\s?(\d)\s?푼)?(?:\s?(\d)\s?리)?(?![가-힣])|(?<![\d.])(\d)\s?푼(?![가-힣])")
_MONEY_PREFIX = re.compile(rf"(?:\$|US\$|USD\s?|₩|KRW\s?|€|EUR\s?)\s?({_AR})(?:\s?(thousand|million|billion|"
                           r"[만억]))?")
_MONEY_PREFIX_UNIT = {"$": "USD", "US$": "USD", "USD": "USD", "₩": "KRW", "KRW": "KRW", "€": "EUR", "EUR": "EUR"}
_NATIVE_DAYS = {"일주일": 7, "하루": 1, "이틀": 2, "사흘": 3, "나흘": 4, "닷새": 5, "엿새": 6, "이레": 7, "여드레": 8, "아흐레": 9,
                "열흘": 10, "보름": 15}
_NATIVE_DAY_RE = re.compile(r"(?<![가-힣])(" + "|".join(_NATIVE_DAYS) + r")(?=$|[^가-힣]|[에간동도만은을이의부까씩로])")
_NATIVE = {"한": 1, "하나": 1, "두": 2, "둘": 2, "세": 3, "셋": 3, "석": 3, "네": 4, "넷": 4, "넉": 4, "다섯": 5,
           "여섯": 6, "일곱": 7, "여덟": 8, "아홉": 9, "열": 10, "열한": 11, "열두": 12, "스무": 20, "스물": 20,
           "서른": 30, "마흔": 40, "쉰": 50}
_NATIVE_COUNTERS = {"명": ("person", "count", 1), "사람": ("person", "count", 1), "번": ("times", "count", 1),
                    "차례": ("times", "count", 1), "달": ("month", "period", 1), "해": ("month", "period", 12),
                    "개": ("item", "count", 1), "가지": ("item", "count", 1), "건": ("item", "count", 1),
                    "시간": ("second", "period", 3600), "살": ("age", "count", 1), "배": ("x", "ratio", 1),
                    "곳": ("place", "count", 1), "주": ("day", "period", 7), "층": ("floor", "count", 1)}
_NATIVE_RE = re.compile(r"(?<![가-힣])(" + "|".join(sorted(_NATIVE, key=len, reverse=True)) + r")\s?("
                        + "|".join(sorted(_NATIVE_COUNTERS, key=len, reverse=True)) + r")(?![가-힣])|(?<![가-힣])("
                        + "|".join(sorted(_NATIVE, key=len, reverse=True)) + r")\s?("
                        + "|".join(sorted(_NATIVE_COUNTERS, key=len, reverse=True))
                        + r")(?=[에간동도만은을이의부까씩로과와])")
# "once" only as a count ("once a year"), not as the conjunction ("once DNA has been replicated")
_EN_TIMES = re.compile(r"(?i)\b(once(?=\s+(?:a|an|per|every|each|daily|weekly|monthly|yearly|annually|only)\b)|twice|"
                       r"thrice|double|triple)\b")
_EN_TIMES_VALUE = {"once": (1, "times", "count"), "twice": (2, "x", "ratio"), "thrice": (3, "x", "ratio"),
                   "double": (2, "x", "ratio"), "triple": (3, "x", "ratio")}
_EN_A_UNIT = re.compile(r"(?i)(?<![\w$])(a|an|one)\s+(day|week|fortnight|month|year|hour|minute)\b(?!\s*(?:or|and)\b)")
_NUMBER = re.compile(rf"(?<![\d.,A-Za-z])(?:{_NUM})(?![\d])")
_HANGUL_NUMBER = re.compile(rf"(?<![가-힣])({_HANGUL_NUM})(?=\s?(?:원|명|일|년|개월|배|회|퍼센트|시간|분|초|세|살|층|주일))")
_EN_NUMBER = re.compile(rf"(?i)\b{_EN_NUM}\b")
_IDENTIFIER_AFTER = re.compile(r"[A-Za-z]")
_RANGE_NEXT = re.compile(rf"\s?(?:~|∼|-|–|—|내지|에서|부터|또는|이나|,)\s?(?=(?:{_AR}))")


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


def _month_number(name: str) -> int:
    name = name.lower().rstrip(".")
    return next(v for k, v in _MONTHS.items() if k.startswith(name[:3]))


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
                mo, d, y = _month_number(m.group(1)), int(m.group(2)), int(m.group(3))
            else:
                d, mo, y = int(m.group(1)), _month_number(m.group(2)), int(m.group(3))
            if _valid_date(y, mo, d) and spans.free(m.start(), m.end()):
                spans.take(m.start(), m.end())
                out.append(_q(Fraction(y * 10000 + mo * 100 + d), "date", "date", t, m.start(), m.end()))
    for m in _scan(_YEAR_MONTH, t, spans):
        y, mo = int(m.group(1)), int(m.group(2))
        if _valid_date(y, mo, 1) and spans.free(m.start(), m.end()):
            spans.take(m.start(), m.end())
            out.append(_q(Fraction(y * 10000 + mo * 100), "yearmonth", "date", t, m.start(), m.end()))
    for m in _EN_MONTH_YEAR.finditer(t) if latin else ():
        y, mo = int(m.group(2)), _month_number(m.group(1))
        if m.group(1).lower() != "may" and spans.free(m.start(), m.end()) and _valid_date(y, mo, 1):
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


def _references(t: str, spans: _Spans, out: list[Quantity], latin: bool) -> None:
    for m in _THIRD_PARTY.finditer(t):
        spans.take(m.start(), m.end())  # 제3자 / 제삼자: a legal term (third party), not a number
    for m in _APPENDIX.finditer(t):  # 별표 2의4: an appended table, not a count
        if spans.free(m.start(), m.end()):
            spans.take(m.start(), m.end())
            out.append(_q(Fraction(int(m.group(2))), m.group(1) + (f"의{int(m.group(3))}" if m.group(3) else ""),
                          "reference", t, m.start(), m.end()))
    for m in _scan(_REFERENCE, t, spans):
        if not spans.free(m.start(), m.end()):
            continue
        num, unit, sub = (m.group(1), m.group(2), m.group(3)) if m.group(1) else (m.group(4), m.group(5), m.group(6))
        if unit == "조" and re.match(r"\s?(?:\d|원|억|만)", t[m.end():m.end() + 2]):
            continue  # 16조원: money, read later
        spans.take(m.start(), m.end())
        out.append(_q(Fraction(int(num)), _REF_UNITS[unit] + (f"의{int(sub)}" if sub else ""), "reference", t,
                      m.start(), m.end()))
    for m in _EN_REFERENCE.finditer(t) if latin else ():
        if spans.free(m.start(), m.end()):
            spans.take(m.start(), m.end())
            unit = _EN_REF_UNIT[m.group(1).lower()]
            out.append(_q(Fraction(int(m.group(2))), unit + (f"의{int(m.group(3))}" if m.group(3) else ""),
                          "reference", t, m.start(), m.end()))
    for m in _scan(_ENUMERATOR, t, spans):
        if spans.free(m.start(1), m.end()):
            spans.take(m.start(1), m.end())
            out.append(_q(Fraction(int(m.group(1))), "호", "reference", t, m.start(1), m.end(), implied=True))


def _ratios(t: str, spans: _Spans, out: list[Quantity], latin: bool) -> None:
    for m in _RATIO.finditer(t) if "분의" in t or "분 의" in t else ():
        den, num = parse_korean_number(m.group(1)), parse_korean_number(m.group(2))
        if den and num is not None and spans.free(m.start(), m.end()):
            spans.take(m.start(), m.end())
            out.append(_q(num / den, "ratio", "ratio", t, m.start(), m.end()))
    for m in _scan(_HALL, t, spans) if "할" in t or "푼" in t else ():
        if not spans.free(m.start(), m.end()):
            continue
        if m.group(4):
            value = Fraction(int(m.group(4)))
        else:
            value = Fraction(int(m.group(1)) * 10) + int(m.group(2) or 0) + Fraction(int(m.group(3) or 0), 10)
        spans.take(m.start(), m.end())
        out.append(_q(value, "percent", "percent", t, m.start(), m.end()))
    for m in _HALF_KO.finditer(t) if "절반" in t else ():
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
            base = Fraction(1, _EN_ORDINAL[word.rstrip("s")] if word.rstrip("s") in _EN_ORDINAL else _EN_ORDINAL[word])
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


def _unit_after(t: str, pos: int, units: tuple[_Unit, ...]) -> tuple[_Unit, int] | None:
    for u in units:
        m = u.pattern.match(t, pos)
        if m and m.end() > pos:
            return u, m.end()
        if u.spaced and pos < len(t) and t[pos] == " ":
            m = u.pattern.match(t, pos + 1)
            if m and m.end() > pos + 1:
                return u, m.end()
    return None


def _is_rate(t: str, end: int, value: Fraction, unit: str) -> bool:
    return value == 1 and unit in ("day", "month", "second") and bool(_RATE_AFTER.match(t, end))


def _period_month(t: str, start: int, end: int) -> bool:
    """``6월`` is six months (not June) after a year count (``1년 6월``) or before 간/이내/이하…"""
    if _PERIOD_MONTH_CONTEXT.match(t, end):
        return True
    return bool(re.search(r"\d\s?년\s?$", t[max(0, start - 6):start]))


def _numbers(t: str, spans: _Spans, out: list[Quantity], latin: bool) -> None:
    for m in _scan(_MONEY_PREFIX, t, spans) if latin else ():
        if not spans.free(m.start(), m.end()):
            continue
        sym = re.match(r"US\$|\$|USD|₩|KRW|€|EUR", m.group(0))
        value = Fraction(m.group(1).replace(",", ""))
        scale = m.group(2)
        if scale:
            value *= {"thousand": 1000, "million": 10 ** 6, "billion": 10 ** 9, "만": 10 ** 4, "억": 10 ** 8}[scale]
        spans.take(m.start(), m.end())
        out.append(_q(value, _MONEY_PREFIX_UNIT[sym.group(0) if sym else "$"], "money", t, m.start(), m.end()))
    found: list[tuple[int, int, Fraction, bool]] = []  # start, end, value, english scale
    for m in _scan(_NUMBER, t, spans):
        if spans.free(m.start(), m.end()):
            v = parse_korean_number(m.group(0))
            end = m.end()
            mm = re.match(r"\s(thousand|million|billion)\b", t[end:])
            if v is not None and mm:
                v *= _EN_MAG[mm.group(1)]
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
    pending: list[tuple[int, int, Fraction]] = []  # numbers of a range or list waiting for the unit that follows
    for start, end, v, english in found:
        if not spans.free(start, end):
            continue
        if not english and start > 0 and (t[start - 1].isascii() and t[start - 1].isalpha()
                                          or re.search(r"[A-Za-z]-$", t[max(0, start - 2):start])):
            spans.take(start, end)
            continue  # part of an identifier: COVID-19, A4, B2B
        hit = _unit_after(t, end, _KO_UNITS + _EN_UNITS)
        if hit is None and t[end:end + 1] == "-":
            hit = _unit_after(t, end + 1, _EN_UNITS)  # 5-year, 10-day, 3-fold
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
        if text_unit.startswith("년") and not text_unit.startswith("년간") and 1800 <= v <= 2100 and v.denominator == 1:
            unit, kind, factor = "year", "date", Fraction(10000)
        for ps, pe, pv in pending:  # 10~20일, 3, 5, 7일: the unit belongs to each number of the run
            out.append(_q(pv * factor, unit, kind, t, ps, pe, pv))
        pending.clear()
        spans.take(start, uend)
        rate = _is_rate(t, uend, v, unit)
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
    for m in _NATIVE_DAY_RE.finditer(t) if any(w in t for w in _NATIVE_DAYS) else ():
        if spans.free(m.start(), m.end()):
            v = Fraction(_NATIVE_DAYS[m.group(1)])
            spans.take(m.start(), m.end())
            out.append(_q(v, "day", "period", t, m.start(), m.end(), v, rate=_is_rate(t, m.end(), v, "day")))
    for m in _NATIVE_RE.finditer(t):
        word, counter = (m.group(1), m.group(2)) if m.group(1) else (m.group(3), m.group(4))
        if not spans.free(m.start(), m.end()):
            continue
        if word == "한" and counter == "사람" and re.search(r"[을를]\s$", t[max(0, m.start() - 2):m.start()]):
            continue  # 위반을 한 사람: a verb, not "one person"
        unit, kind, factor = _NATIVE_COUNTERS[counter]
        v = Fraction(_NATIVE[word])
        spans.take(m.start(), m.end())
        out.append(_q(v * factor, unit, kind, t, m.start(), m.end(), v, rate=_is_rate(t, m.end(), v, unit)))
    for m in _EN_TIMES.finditer(t) if latin else ():
        if spans.free(m.start(), m.end()):
            v, unit, kind = _EN_TIMES_VALUE[m.group(1).lower()]
            spans.take(m.start(), m.end())
            out.append(_q(Fraction(v), unit, kind, t, m.start(), m.end()))
    for m in _EN_A_UNIT.finditer(t) if latin else ():
        if spans.free(m.start(), m.end()):
            u = _unit_after(t, m.start(2), _EN_UNITS)
            if u is None:
                continue
            spans.take(m.start(), m.end())
            rate = m.group(1).lower() != "one" and m.start() > 0 and bool(re.search(r"\d\s*\S*\s*$", t[:m.start()]))
            out.append(_q(u[0].factor, u[0].unit, u[0].kind, t, m.start(), m.end(), Fraction(1), rate=rate))


def _rates(t: str, spans: _Spans, out: list[Quantity], latin: bool) -> None:
    native = any(w in t for w in ("한 ", "두 ", "세 ", "하루", "이틀", "사흘"))
    for m in _RATE_PREFIX.finditer(t) if native else _scan(_RATE_PREFIX, t, spans):
        if spans.free(m.start(1), m.end(1)):
            unit, factor = _RATE_PREFIX_UNIT[m.group(1)]
            spans.take(m.start(1), m.end(1))
            out.append(_q(Fraction(factor), unit, "period", t, m.start(1), m.end(1), Fraction(1), rate=True,
                          implied=True))
    for m in _EN_RATE.finditer(t) if latin else ():
        if spans.free(m.start(), m.end()):
            unit, factor = _EN_RATE_UNIT[(m.group(1) or m.group(2)).lower()]
            spans.take(m.start(), m.end())
            out.append(_q(Fraction(factor), unit, "period", t, m.start(), m.end(), Fraction(1), rate=True,
                          implied=True))


_HAS_DIGIT = re.compile(r"\d")
_HAS_LATIN = re.compile(r"[A-Za-z$€₩]")
_HAS_HANGUL_MAGNITUDE = re.compile(r"[십백천만억]")


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
    if "제" in t or digits or latin:
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


def claim_quantities(text: str) -> tuple[Quantity, ...]:
    """The quantities a claim asserts: every quantity but the list enumerators it may start with."""
    return tuple(q for q in extract_quantities(strip_markers(text)) if not (q.kind == "reference" and q.implied))
