"""Facts a claim must share with its source: quantities (numbers with their units, dates,
ratios, statute references) and the polarity of predicates (must / may / must not).

Pure functions over text, used by the citation validator and the extractive generator
(through :func:`rag.answer.support.check_support`). ``evidence`` is one text or a tuple of
texts (the blocks a sentence cites; a window never spans two of them). Everything derived
from an evidence text (its quantities, windows, clauses, term weights) is cached per text
with ``functools.lru_cache``, so checking a new claim against blocks seen before costs little;
:func:`clear_caches` empties those caches.

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

Matching (:func:`unsupported_quantities`, :func:`misplaced_quantities`)
    A claim quantity is supported by an evidence quantity of equal value in the same
    dimension after conversion (``2주일`` = ``14일``, ``2만원`` = ``20,000원``, ``10분의 3`` =
    ``30%`` = ``100분의 30``); a bare number on either side (a table cell ``15``, a claim's
    ``2기``) matches the same written number, except dates and references; a dated claim
    matches an evidence date that agrees on every part the claim gives. A number the claim
    computes from the source (15 + 5 = 20) is not stated there, so it is unsupported.
    Where it is stated matters too: each claim clause is aligned with the evidence windows
    (:func:`evidence_windows`: a sentence, two adjacent sentences, a list item with the
    sentence that announces the list, a table row with that sentence and the header) that
    cover most of its content terms, leaving out the quantity's own words, and a quantity
    the evidence states only elsewhere is *misplaced* (``20년 이상: 10일`` where the list
    item for 20년 says ``7일`` and ``10일`` belongs to another paragraph).

Lexical support (:func:`clause_support`)
    Each clause of the claim is scored by the share of its content terms found in its best
    window, and the claim scores as its weakest clause: a claim that adds a fact stated
    elsewhere (or nowhere) scores low even when all its words occur somewhere in the text.

Polarity (:func:`predicate_polarity`, :func:`polarity_mismatch`)
    The polarity of a clause is the sign of its final predicate: the number of negators in
    the predicate chain that ends the clause (``하지 아니한다``, ``할 수 없다``, ``하여서는 아니
    된다``, ``않아도 된다``, ``권리가 없다``, ``금지된다``, ``must not``, ``may not``, ``cannot``,
    ``never``, ``prohibited``) taken modulo two, so a double negative in the predicate itself
    (``하지 아니하면 아니 된다``, ``하지 아니할 수 없다``) is affirmative. Negations elsewhere in the
    clause (modifiers, ``사유 없이``, ``지장이 없으면``) do not count, with one exception: a negated
    condition or concession of the predicate's own verb phrase (``…하지 아니하면``, ``…하지
    아니한 경우에는``, ``…하지 않더라도``, ``unless``, ``even if … not``) counts as one more
    negation, so ``인도하지 아니하면 받을 수 없다`` and ``인도해야 받을 수 있다`` agree, and
    ``이전하지 아니한 경우에는 지급하지 아니한다`` and ``이사하지 않았더라도 지급한다`` do not.
    A bound (``초과할 수 없다``, ``넘지 못한다``, ``may not exceed``) says the same as ``까지``
    and is compared only with another bound.

    Alignment: a clause is compared with the evidence clauses that share its predicate's head
    (``지급``, ``압류``, ``승인``) and cover at least a third of its terms, the closest deciding;
    otherwise with the closest clause of the window its sentence shares the most idf-weighted
    terms with. A flip is reported when the signs differ (and no equally close clause has the
    claim's sign), when the claim uses the opposite of a word there (``유급``/``무급``,
    ``공개``/``비공개``, ``포함``/``제외``), or when the evidence limits a quantity (``1명에게만``,
    ``2분의 1…까지만``) and the claim drops the limit for ``모두``/``전액``/``all``.
"""
from __future__ import annotations

import math
import re
import unicodedata
from collections.abc import Iterator
from dataclasses import dataclass, field
from fractions import Fraction
from functools import lru_cache
from typing import Literal

from rag.text.lang import ZERO_WIDTH
from rag.text.segment import segment
from rag.text.sentences import strip_markers
from rag.text.support import content_terms

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


Evidence = str | tuple[str, ...]  # one text, or the texts of several cited blocks


def _evidence_quantities(evidence: Evidence) -> tuple[Quantity, ...]:
    if isinstance(evidence, str):
        return extract_quantities(evidence)
    return tuple(q for text in evidence for q in extract_quantities(text))


def _ratio_value(q: Quantity) -> Fraction:
    return q.value / 100 if q.kind == "percent" else q.value


@dataclass(frozen=True)
class _Index:
    """Evidence quantities by value, written number and ratio, so a claim quantity is compared only with
    the few that can be equal to it."""

    by_value: dict[Fraction, list[Quantity]]
    by_number: dict[Fraction, list[Quantity]]
    by_ratio: dict[Fraction, list[Quantity]]
    dates: list[Quantity]

    def stated(self, q: Quantity) -> bool:
        cands = self.by_value.get(q.value, []) + self.by_number.get(q.number, [])
        if q.kind in ("ratio", "percent"):
            cands += self.by_ratio.get(_ratio_value(q), [])
        if q.kind == "date":
            cands += self.dates
        return any(same_quantity(q, e) for e in cands)


def _build_index(quantities: tuple[Quantity, ...]) -> _Index:
    idx = _Index({}, {}, {}, [])
    for e in quantities:
        idx.by_value.setdefault(e.value, []).append(e)
        idx.by_number.setdefault(e.number, []).append(e)
        if e.kind in ("ratio", "percent"):
            idx.by_ratio.setdefault(_ratio_value(e), []).append(e)
        if e.kind == "date":
            idx.dates.append(e)
    return idx


@lru_cache(maxsize=5_000)
def _index(evidence: Evidence) -> _Index:
    return _build_index(_evidence_quantities(evidence))


def unsupported_quantities(claim: str, evidence: Evidence) -> tuple[Quantity, ...]:
    """Claim quantities with no equal quantity anywhere in ``evidence`` (first of each value)."""
    idx = _index(evidence)
    out: list[Quantity] = []
    seen: set[tuple[Fraction, str, bool]] = set()
    for q in claim_quantities(claim):
        if (q.value, q.unit, q.rate) in seen:
            continue
        seen.add((q.value, q.unit, q.rate))
        if not idx.stated(q):
            out.append(q)
    return tuple(out)


# --------------------------------------------------------------------------- clauses and windows
_PAREN = re.compile(r"\([^()]*\)|\[[^\[\]]*\]|<[^<>]*>")
# clause ends: a connective ending before a comma (하며, / 하고, / 하되, / 하나,), 며 before a space, or ';'
_CLAUSE_CUT = re.compile(r"(?<=[며고되나])\s*,\s+|(?<=지만)\s*,?\s+|(?<=는데),\s+|(?<=[며])\s+(?=[^\s])|(?<=[가-힣]이고)\s+(?=[^\s])|;\s*|(?<=[a-z0-9)]),\s+(?=(?:and|but|or|while|whereas|although|though)\s)|\s+(?=(?:but|whereas)\s)")
_ITEM = re.compile(r"^\s*(?:\d{1,3}|[가-하])\s?\\?\.\s")


def _clean(text: str) -> str:
    prev = None
    while prev != text:
        prev, text = text, _PAREN.sub("", text)
    return " ".join(text.replace("**", " ").split())


def _terms(text: str) -> frozenset[str]:
    """``content_terms(text)``, built word by word: content_terms caches each word, and statute text
    repeats its words, so a long evidence text costs far less than one call on the whole of it."""
    words = text.split()
    return frozenset().union(*map(content_terms, words)) if words else frozenset()


def _cut_clauses(sentence: str) -> list[str]:
    """Clauses of one sentence; never cut inside brackets ("(…는 제외하되, …는 포함한다)")."""
    masked = _BRACKETED.sub(lambda m: "_" * len(m.group(0)), sentence) if "(" in sentence or "[" in sentence \
        else sentence
    out, pos = [], 0
    for m in _CLAUSE_CUT.finditer(masked):
        out.append(sentence[pos:m.start()])
        pos = m.end()
    out.append(sentence[pos:])
    return [p for p in (x.strip(" ,") for x in out) if p and re.search(r"[가-힣A-Za-z]", p)]


@lru_cache(maxsize=20_000)
def split_clauses(text: str) -> tuple[str, ...]:
    """Clauses of ``text``: sentences, cut again after connective endings (``…하며,``, ``…하되,``, ``…고,``).
    Amendment notes (``<개정 …>``) are no clause: they state no rule."""
    out: list[str] = []
    text = _NOTE.sub(" ", strip_markers(text) if "[" in text else text)
    for line in text.split("\n"):
        for s in _sentences(line):
            out.extend(_cut_clauses(s))
    return tuple(out)


@dataclass(frozen=True)
class _EvClause:
    text: str
    terms: frozenset[str]
    sign: int | None
    bound: bool
    head: str


@dataclass(frozen=True)
class Window:
    """A span of evidence a claim clause can be aligned with: one sentence, two adjacent sentences of a
    paragraph, a list item with the sentence that introduces it, or a table row with that sentence and
    the table's header."""

    text: str
    terms: frozenset[str]
    main_terms: frozenset[str]  # the terms outside brackets (an exception such as "(서울특별시는 제외한다)")
    clauses: tuple[_EvClause, ...]
    quantities: tuple[Quantity, ...]  # the evidence's quantities that lie in this window


@dataclass(frozen=True)
class _Piece:
    text: str
    terms: frozenset[str]
    main_terms: frozenset[str]
    clauses: tuple[_EvClause, ...]
    spans: tuple[tuple[int, int], ...]  # offsets into normalize_facts(evidence)

    def __add__(self, other: _Piece) -> _Piece:
        return _Piece(f"{self.text} {other.text}", self.terms | other.terms, self.main_terms | other.main_terms,
                      self.clauses + other.clauses, self.spans + other.spans)


_NOTE = re.compile(r"<\s*(?:개정|신설|삭제|전문개정|본조신설|제목개정|시행일|타법개정)[^<>]*>|"
                   r"\[\s*(?:본조신설|전문개정|제목개정|종전|본조|시행일|타법개정)[^\[\]]*\]")
_BRACKETED = re.compile(r"\([^()]*\)|\[[^\[\]]*\]|「[^「」]*」")
# a sentence end inside evidence: a period after a Hangul syllable or a closing bracket, or after a word
# of English before a capital letter (evidence units only: answers use rag.text.sentences)
_UNIT_END = re.compile(r"(?<=[가-힣)\]][.?!])\s+|(?<=[.?!][\"'”’])\s+|(?<=[a-z0-9%][.?!])\s+(?=[A-Z가-힣\"“(])|"
                       r"(?<=[。！？])\s*")


def _sentence_spans(line: str) -> list[tuple[int, int]]:
    """Sentences of one evidence line as offsets, never cut inside brackets (a definition in parentheses
    may end in '다.')."""
    masked = _BRACKETED.sub(lambda m: m.group(0).replace(".", "\u2024").replace("?", "\u2024"), line)
    cuts, pos = [], 0
    for m in _UNIT_END.finditer(masked):
        cuts.append((pos, m.start()))
        pos = m.end()
    cuts.append((pos, len(line)))
    out = []
    for a, b in cuts:
        seg = line[a:b]
        a2, b2 = a + len(seg) - len(seg.lstrip()), b - (len(seg) - len(seg.rstrip()))
        if b2 > a2:
            out.append((a2, b2))
    return out


def _sentences(line: str) -> list[str]:
    return [line[a:b] for a, b in _sentence_spans(line)]


def _piece(text: str, start: int, end: int) -> _Piece:
    clauses = tuple(_EvClause(c, _terms(c), *_polarity(c))
                    for sentence in _sentences(_clean(text)) for c in _cut_clauses(sentence))
    return _Piece(text, _terms(text), _terms(_outside_brackets(text)), clauses, ((start, end),))


def _outside_brackets(text: str) -> str:
    prev = None
    while prev != text:
        prev, text = text, _PAREN.sub(" ", text)
    return text


_ANNOUNCES = re.compile(r"다음|아래|(?i:following|as follows|below)|:$")
_TABLE_ROW = re.compile(r"[│|┃]")
_WORDCHAR = re.compile(r"[^\W_]")


def _unwrapped(t: str) -> str:
    """``t`` with hard wraps (a newline inside one segment of the shared segmenter, as in
    "일산화탄\n소의") turned into spaces, so a wrapped item or sentence stays one unit; table lines
    keep their newlines. Same length as ``t``."""
    if "\n" not in t:
        return t
    chars = list(t)
    for seg in segment(t):
        for i in range(seg.start, seg.end):
            if chars[i] == "\n":
                before = t.rfind("\n", 0, i) + 1
                after = t.find("\n", i + 1)
                lines = (t[before:i], t[i + 1:after if after >= 0 else len(t)])
                if not any(_TABLE_ROW.search(x) or x.lstrip().startswith(("#", "|")) for x in lines):
                    chars[i] = " "
    return "".join(chars)


def _units(t: str) -> list[tuple[int, str, _Piece]]:
    """(paragraph index, kind, piece) of every sentence, list item (text | item | row) of normalised text."""
    masked = _NOTE.sub(lambda m: " " * len(m.group(0)), _unwrapped(t))
    units: list[tuple[int, str, _Piece]] = []
    pi, pos, blank = 0, 0, False
    for line in masked.split("\n"):
        start, pos = pos, pos + len(line) + 1
        if not line.strip():
            blank = True
            continue
        if blank and units:
            pi += 1
        blank = False
        if not _WORDCHAR.search(line) or line.lstrip().startswith("#"):
            continue  # a table border or a heading
        lead = len(line) - len(line.lstrip())
        if _TABLE_ROW.search(line):
            units.append((pi, "row", _piece(" ".join(_TABLE_ROW.sub(" ", line).split()), start, start + len(line))))
        elif _ITEM.match(line):
            units.append((pi, "item", _piece(line.strip(), start + lead, start + len(line.rstrip()))))
        else:
            units.extend((pi, "text", _piece(line[a:b], start + a, start + b)) for a, b in _sentence_spans(line))
    return units


@lru_cache(maxsize=5_000)
def evidence_windows(text: str) -> tuple[Window, ...]:
    """Windows of an evidence text (cached per text): each sentence, each pair of adjacent sentences of a
    paragraph, each list item with the sentence that introduces it, and each table row with that sentence
    and the table's header row. Heading lines (``# …``), HTML tags and amendment notes are left out."""
    t = normalize_facts(text)
    units = _units(t)
    out: list[_Piece] = []
    lead: _Piece | None = None
    header: _Piece | None = None
    lead_pi, intro = -1, False  # the lead is the paragraph's sentence that announces the list (다음 각 호)
    for k, (pi, kind, u) in enumerate(units):
        if kind == "item":
            out.append(lead + u if lead else u)
        elif kind == "row":
            if header is None:
                header = u
                out.append(lead + u if lead else u)
            else:
                out.append((lead + header + u) if lead else header + u)
        else:
            announces = bool(_ANNOUNCES.search(u.text))
            if pi != lead_pi or announces or not intro:
                lead, intro = u, announces
            lead_pi, header = pi, None
            out.append(u)
            if k + 1 < len(units) and units[k + 1][0] == pi and units[k + 1][1] == "text":
                out.append(u + units[k + 1][2])
    if not out and t.strip():
        out.append(_piece(t.strip(), 0, len(t)))
    quantities = extract_quantities(text)
    seen: dict[str, Window] = {}
    for p in out:
        if p.text not in seen:
            inside = tuple(q for q in quantities if any(a <= q.start < b for a, b in p.spans))
            seen[p.text] = Window(p.text, p.terms, p.main_terms, p.clauses, inside)
    return tuple(seen.values())


def coverage(terms: frozenset[str], window_terms: frozenset[str]) -> float:
    return len(terms & window_terms) / len(terms) if terms else 0.0


def _score(clause_terms: frozenset[str], w: Window) -> float:
    return (len(clause_terms & w.terms) + len(clause_terms & w.main_terms)) / (2 * len(clause_terms)) \
        if clause_terms else 0.0


def _aligned(clause_terms: frozenset[str], windows: tuple[Window, ...], margin: float) -> tuple[float, list[Window]]:
    """The windows that cover the clause best: by all their terms, half-credited for terms that occur only
    in brackets (a window that names a place only to exclude it is a worse match)."""
    if not clause_terms or not windows:
        return 0.0, []
    n = len(clause_terms)
    shared = [len(clause_terms & w.terms) for w in windows]
    top = max(range(len(windows)), key=shared.__getitem__)

    def score(k: int) -> float:
        return (shared[k] + len(clause_terms & windows[k].main_terms)) / (2 * n)

    best = score(top)
    # a window scores at most shared/n, so only those can reach best - margin
    scores = [(score(k), w) for k, w in enumerate(windows) if shared[k] / n >= best - margin]
    best = max(s for s, _ in scores)
    return best, [w for s, w in scores if s >= best - margin and s > 0]


def _windows(evidence: Evidence) -> tuple[Window, ...]:
    if isinstance(evidence, str):
        return evidence_windows(evidence)
    return tuple(w for text in evidence for w in evidence_windows(text))


def clause_support(claim: str, evidence: Evidence) -> float:
    """Clause-aligned lexical support (0..1): each clause of the claim is scored by the share of its
    content terms found in the one evidence window (a sentence, two adjacent sentences, or a list item
    with its lead) that covers most of them, and the claim scores as its weakest clause. A claim that
    joins a fact of the evidence with a fact the evidence states nowhere in one place scores low even
    when every word occurs somewhere in the evidence."""
    windows = _windows(evidence)
    scores = [max((coverage(terms, w.terms) for w in windows), default=0.0)
              for terms in (_terms(c) for c in split_clauses(claim)) if terms]
    return min(scores) if scores else 0.0


ALIGN_MARGIN = 0.02  # windows this close to the best one also count as aligned
ALIGN_FALLBACK_MARGIN = 0.05  # see misplaced_quantities


@lru_cache(maxsize=5_000)
def _clause_quantities(claim: str) -> tuple[tuple[str, tuple[Quantity, ...]], ...]:
    """Each clause of the claim with its quantities, taken from the claim's own (cached) extraction when
    normalisation kept the claim's offsets, else extracted clause by clause."""
    clauses = split_clauses(claim)
    qs = claim_quantities(claim)
    if len(clauses) == 1:
        return ((clauses[0], qs),)
    if normalize_facts(claim) != claim:
        return tuple((c, claim_quantities(c)) for c in clauses)
    out, pos = [], 0
    for c in clauses:
        start = claim.find(c, pos)
        if start < 0:
            return tuple((c, claim_quantities(c)) for c in clauses)
        end = pos = start + len(c)
        out.append((c, tuple(q for q in qs if start <= q.start and q.end <= end)))
    return tuple(out)


def misplaced_quantities(claim: str, evidence: Evidence) -> tuple[Quantity, ...]:
    """Claim quantities that the evidence states, but not in the windows aligned with the claim's
    clause (``20년 이상: 10일`` against a list whose ``20년 이상`` item says ``7일`` while ``10일``
    occurs in another paragraph). Quantities absent from the evidence are not listed here."""
    windows = _windows(evidence)
    idx = _index(evidence)
    out: list[Quantity] = []
    for clause, clause_qs in _clause_quantities(claim):
        qs = [q for q in clause_qs if q.kind not in ("reference", "date")]  # dates are specific enough
        if not qs:
            continue
        terms = _terms(clause)
        for q in qs:
            if not idx.stated(q):
                continue  # not stated at all: unsupported_quantities reports it
            # align without the quantity's own words, so that "16일" does not pull towards the row saying 16
            reduced = terms - _terms(q.text)
            best, near = _aligned(reduced, windows, ALIGN_MARGIN)
            if any(same_quantity(q, e) for w in near for e in w.quantities):
                continue
            # ...unless those words are all that tells two windows apart ("4개월째부터" / "7개월째부터"): the
            # quantity is also in place when every window that matches the clause best with them holds it and
            # is nearly as good without them
            _, tops = _aligned(terms, windows, 0.0)
            if not tops or not all(any(same_quantity(q, e) for e in w.quantities)
                                   and _score(reduced, w) >= best - ALIGN_FALLBACK_MARGIN for w in tops):
                out.append(q)
    return tuple(out)


# --------------------------------------------------------------------------- polarity
_KO_PRED_END = re.compile(r"(?:다|며|고|되|나|함|음|됨|요|임|지|것|금지|불가|가능|니|라|야|면서)$")
_AUX = re.compile(r"^(?:아니|않|못|없|있|되|된|됨|하|한|함|해|말|안$|수$|것|필요|니|금지|불가)")
_NEG_WORD = re.compile(r"^(?:아니|않|못|없|말(?:아|고|라)|안$|금지|불가)|지(?:않|못|아니|말)|수없|서는안|서는아니")
_EN_SUB = re.compile(r"(?i)\b(?:if|unless|when|whenever|where|although|though|even if|even though|except|provided that|"
                     r"as long as|in case|before|after|until)\b[^,;]*[,;]")
# verbal negation only: "no association was noted" and "there is no" negate the clause, a "no" inside a noun
# phrase ("with or without", "no more than") does not
_EN_NEG = re.compile(r"(?i)\b(?:not|never|cannot|prohibited|forbidden|banned|barred)\b|n't\b|"
                     r"^\s*no\b(?!\s+(?:more|less|later|earlier)\b)|"
                     r"\b(?:is|are|was|were|be|been|has|have|had|there\s+is|there\s+are|shall|may|must)\s+no\b|"
                     r"\bno\s+(?:one|person|employee|member|party|individual|tenant|landlord)\b|"
                     r"\b(?!(?:with|of|and|or|for|in|at|to|by|from|on|that|whether|than)\b)[a-z]+\s+no\b(?!\s+(?:more|less|later))")
# A negated condition or concession of the same clause (…하지 아니하면, …하지 아니한 경우에는, …하지 않더라도,
# unless …, even if … not): it turns the sense of the final predicate around ("if not moved, not paid" says
# "paid only if moved"; "even if not moved, paid" says the opposite), so it counts as one more negation.
_KO_NEG_CONDITION = re.compile(r"지\s?(?:아니하|않으|않)면|지\s?(?:아니한|않은|아니하는|않는|못한|못하는)\s?(?:경우|때)|"
                               r"지\s?(?:아니하|않|못하)(?:았|였)?(?:더라도|어도|아도|여도)")
_EN_NEG_CONDITION = re.compile(r"(?i)\bunless\b|\b(?:if|when|where|even if|even though)\b[^,;]*\b(?:not|never|no)\b"
                               r"[^,;]*[,;]|\b(?:if|when|where|even if|even though)\b[^,;]*n't\b[^,;]*[,;]")


_BOUND_VERB = re.compile(r"^(?:초과|넘|상회|초월)|(?i:^exceed)")


_HEAD_ENDINGS = re.compile(
    r"(?:하여서는|해서는|어서는|아서는|하여야|해야|하여도|해도|하지|할|한다|하며|하고|하되|하여|함|된다|되지|될|되며|되고|되어|됨|"
    r"받지|받을|받는다|받아야|받으며|시키지|시킬|시킨다|이다|이며|이고|으로|로|에게|에|을|를|이|가|은|는|의|도|만)$")


def _head(word: str) -> str:
    """The stem of the word that carries a predicate (``압류하지`` → ``압류``, ``권리가`` → ``권리``, ``뺀다`` and
    ``빼지`` → ``빼``); '' when it is not specific (fewer than two syllables)."""
    runs = re.findall(r"[가-힣]+", word)
    if not runs:
        return ""
    stem = _HEAD_ENDINGS.sub("", runs[-1])
    if stem == runs[-1] and len(stem) > 1 and stem[-1] in "다지고며면게도":
        stem = stem[:-1]  # a bare verb form: 뺀다 / 빼지 / 뺄
        code = ord(stem[-1]) - 0xAC00
        if 0 <= code < 11172 and code % 28 in (4, 8):  # final ㄴ/ㄹ of a contracted ending: 뺀 → 빼
            stem = stem[:-1] + chr(ord(stem[-1]) - code % 28)
    return stem if len(stem) >= 2 else ""


# English clauses are compared only when they state a rule (must / shall / may / can / required / prohibited …):
# the sign of a descriptive sentence ("was not associated with") is often carried by words ("lacking")
# no grammar of predicates sees.
_EN_DEONTIC = re.compile(r"(?i)\b(?:must|shall|may|can|cannot|could|should|need|needs|required|requires|require|"
                         r"prohibited|forbidden|allowed|permitted|entitled|obliged|obligated|eligible)\b|can't|mustn't")


def _polarity(clause: str) -> tuple[int | None, bool, str]:
    """(sign, bound, head): the sign of the final predicate, whether that predicate is a bound
    (``초과할 수 없다``, ``넘지 못한다``, ``may not exceed``, which says the same as ``까지``/``이하``), and the
    stem of the predicate's head word (Korean only)."""
    text = _clean(strip_markers(clause)).rstrip(" .。!?\"'”’)]:;,")
    if not text:
        return None, False, ""
    if not re.search(r"[가-힣]", text):
        if not _EN_DEONTIC.search(text):
            return None, False, ""
        main = _EN_SUB.sub(" ", text) if _EN_SUB.sub(" ", text).strip() else text
        bound = bool(re.search(r"(?i)\bexceed", main))
        # English predicates rarely stack negations: any verbal negation makes the clause negative
        negs = (1 if _EN_NEG.search(main) else 0) + (1 if _EN_NEG_CONDITION.search(text) else 0)
        return (-1 if negs % 2 else 1), bound, ""
    words = text.split()
    last = re.sub(r"[^가-힣]+$", "", words[-1])
    if not last or not _KO_PRED_END.search(last):
        return None, False, ""
    tail = [last]
    i = len(words) - 2
    while i >= 0 and len(tail) < 6 and _AUX.match(tail[0]):
        tail.insert(0, words[i])
        i -= 1
    negs = sum(1 for w in tail if _NEG_WORD.search(w))
    negs += 1 if _KO_NEG_CONDITION.search(" ".join(words[:i + 1])) else 0  # …하지 아니하거나 …하지 아니하면: one
    return (-1 if negs % 2 else 1), any(_BOUND_VERB.match(w) for w in tail), _head(tail[0])


def predicate_polarity(clause: str) -> int | None:
    """+1 affirmative, -1 negative, None when the clause ends in no predicate (a noun phrase)."""
    return _polarity(clause)[0]


_EXCLUSIVE = re.compile(r"[^,.;]{0,16}?(?:까지만|에게만|에만|만을|만이|만\s|만$|에\s?한하여|에\s?한한다|에\s?한정)")
_UNIVERSAL = re.compile(r"(?<![가-힣])(?:모두|전액|전부|모든|누구나|언제나|언제든지)|(?i:\b(?:all|both|entire|full|"
                        r"whole|any time|always)\b)")


def _scope_flip(claim: str, evidence: str) -> str | None:
    """The evidence limits a quantity (``1명에게만``, ``2분의 1…까지만``) and the claim drops the limit and
    says ``모두``/``전액``/``all`` instead: the quantity of the claim's statement is flipped."""
    if _EXCLUSIVE_ANY.search(claim) or not _UNIVERSAL.search(claim) or _UNIVERSAL.search(evidence):
        return None
    t = normalize_facts(evidence)
    for q in extract_quantities(evidence):
        if q.kind != "reference" and _EXCLUSIVE.match(t, q.end):
            return q.text
    return None


_EXCLUSIVE_ANY = re.compile(r"(?:까지만|에게만|에만|만을|만이)|에\s?한하여|에\s?한한다|에\s?한정|(?i:\bonly\b)")


_KO_STEM_SUFFIXES = tuple(sorted({
    "으로", "에서", "에게", "이다", "이며", "이고", "한다", "된다", "하며", "하고", "하여", "해야", "은", "는", "이", "가", "을", "를",
    "의", "에", "도", "와", "과", "로", "만", "다"}, key=len, reverse=True))
_ANTONYM_PREFIXES = ("불", "비", "미", "무")
_ANTONYM_PAIRS = (("허용", "금지"), ("포함", "제외"), ("유리", "불리"), ("유급", "무급"), ("가능", "불가"),
                  ("의무", "임의"), ("가산", "감액"))
_EN_ANTONYM_PREFIXES = ("un", "in", "non", "non-", "il", "ir", "im", "dis")


_STEM = re.compile(r"([가-힣]{2,}?)(?:" + "|".join(_KO_STEM_SUFFIXES) + r")(?![가-힣])|([가-힣]+)|([A-Za-z][A-Za-z-]+)")


@lru_cache(maxsize=20_000)
def _stems(text: str) -> frozenset[str]:
    """Words with their longest ending or particle stripped (Korean; a stem keeps two syllables), or
    lowercased (English)."""
    return frozenset(m.group(1) or m.group(2) or m.group(3).lower() for m in _STEM.finditer(text))


@lru_cache(maxsize=20_000)
def _antonym_forms(claim: str) -> dict[str, str]:
    """The opposite forms of the claim's words (``공개`` → ``비공개``, ``불공개``…; ``유급`` → ``무급``;
    ``unpaid`` → ``paid``), each mapped to the claim's word."""
    forms: dict[str, str] = {}
    for w in _stems(claim):
        korean = "가" <= w[0] <= "힣"
        prefixes = _ANTONYM_PREFIXES if korean else _EN_ANTONYM_PREFIXES
        min_rest = 2 if korean else 4
        for p in prefixes:
            if w.startswith(p) and len(w) - len(p) >= min_rest:
                forms.setdefault(w[len(p):], w)
            if len(w) >= min_rest:
                forms.setdefault(p + w, w)
        if korean and w.startswith("유") and len(w) >= 2:
            forms.setdefault("무" + w[1:], w)
    return forms


def _antonym(claim: str, evidence: str) -> tuple[str, str] | None:
    c, e = _stems(claim), _stems(evidence)
    for a, b in _ANTONYM_PAIRS:
        for x, y in ((a, b), (b, a)):
            if x not in claim or y not in evidence or x in evidence:
                continue  # a substring test first: the pairs rarely occur at all
            if any(w.startswith(x) for w in c - e) and any(w.startswith(y) for w in e - c):
                return x, y
    forms = _antonym_forms(claim)
    for form in sorted(forms.keys() & e):
        word = forms[form]
        if word not in e and form not in c:
            return word, form
    return None


POLARITY_MIN_ALIGN = 0.34  # a claim clause whose best evidence clause covers less is not compared
POLARITY_MIN_ALIGN_EN = 0.5  # English clauses: whole stemmed words, and long clauses of mixed content


@dataclass(frozen=True)
class _Aligned:
    """Evidence windows with their clauses, and the idf of each term over the windows."""

    windows: tuple[tuple[frozenset[str], tuple[_EvClause, ...]], ...]
    weight: dict[str, float]
    clauses: tuple[_EvClause, ...]  # every clause once
    stems: frozenset[str]  # every word of the evidence, as _stems gives it
    text: str  # the evidence texts, joined


@lru_cache(maxsize=5_000)
def _document_frequency(text: str) -> tuple[int, dict[str, int]]:
    """(number of windows, in how many windows each term occurs) of one evidence text."""
    df: dict[str, int] = {}
    windows = evidence_windows(text)
    for w in windows:
        for t in w.terms:
            df[t] = df.get(t, 0) + 1
    return len(windows), df


@lru_cache(maxsize=5_000)
def _aligned_evidence(evidence: Evidence) -> _Aligned:
    windows = _windows(evidence)
    texts = (evidence,) if isinstance(evidence, str) else evidence
    n, df = 0, {}
    for text in texts:  # merged per text: each text's counts are cached
        k, d = _document_frequency(text)
        n += k
        if not df:
            df = dict(d)
        else:
            for t, c in d.items():
                df[t] = df.get(t, 0) + c
    every = tuple({c.text: c for w in windows for c in w.clauses}.values())
    return _Aligned(tuple((w.terms, w.clauses) for w in windows), {t: math.log(1 + n / d) for t, d in df.items()},
                    every, frozenset().union(*map(_stems, texts)), "\n".join(texts))


def _weighted(terms: frozenset[str], other: frozenset[str], weight: dict[str, float], total: float) -> float:
    return sum(weight[t] for t in terms & other) / total if total else 0.0


@lru_cache(maxsize=5_000)
def _claim_sentences(claim: str) -> list[tuple[frozenset[str], tuple[str, ...]]]:
    out = []
    for line in _NOTE.sub(" ", strip_markers(claim)).split("\n"):
        for s in _sentences(line):
            clauses = split_clauses(s)
            if clauses:
                out.append((_terms(s), clauses))
    return out


def polarity_mismatch(claim: str, evidence: Evidence) -> str | None:
    """A short reason when a clause of ``claim`` flips the obligation, permission or prohibition of the
    evidence clause it restates; None otherwise.

    Alignment has two steps: each claim sentence is matched with the evidence window (sentence, sentence
    pair, or list item with its lead) whose idf-weighted content terms it shares most; each clause of the
    claim sentence is then matched with the clause of that window that covers most of its terms."""
    ev = _aligned_evidence(evidence)
    if not ev.windows:
        return None
    for sent_terms, clauses in _claim_sentences(claim):
        top = _TopWindows(ev, sent_terms)
        for cl in clauses:
            reason = _clause_flip(cl, top, ev)
            if reason:
                return reason
    return None


class _TopWindows:
    """The clauses of the windows a claim sentence matches best (idf-weighted), computed when first asked."""

    def __init__(self, ev: _Aligned, sent_terms: frozenset[str]) -> None:
        self.ev, self.sent_terms = ev, sent_terms
        self._clauses: list[_EvClause] | None = None

    def clauses(self) -> list[_EvClause]:
        if self._clauses is None:
            weight = self.ev.weight
            known = self.sent_terms & weight.keys()  # terms the evidence has at all
            total = sum(weight[t] for t in known) + (len(self.sent_terms) - len(known))
            scored = [(_weighted(known, wt, weight, total), k) for k, (wt, _) in enumerate(self.ev.windows)]
            best = max((s for s, _ in scored), default=0.0)
            self._clauses = [c for s, k in scored if best > 0 and s >= best - 1e-9 for c in self.ev.windows[k][1]]
        return self._clauses


def _clause_flip(cl: str, top: _TopWindows, ev: _Aligned) -> str | None:
    every = ev.clauses
    terms = _terms(cl)
    if not terms:
        return None
    scope = not _EXCLUSIVE_ANY.search(cl) and bool(_UNIVERSAL.search(cl))  # could drop a limit (see _scope_flip)
    words = _clean(cl)  # compared as the evidence clauses are: without what stands in brackets
    min_align = POLARITY_MIN_ALIGN if re.search(r"[가-힣]", cl) else POLARITY_MIN_ALIGN_EN
    sign, bound, head = _polarity(cl)
    if sign is not None and head:
        # clauses with the same predicate (지급/압류/승인…) decide the sign when there are any close enough
        same = [(coverage(terms, c.terms), c) for c in every if c.head == head and c.sign is not None
                and c.bound == bound]
        same = [(s, c) for s, c in same if s >= min_align]
        if same:
            best_same = max(s for s, _ in same)
            near_same = [c for s, c in same if s >= best_same - 1e-9]
            for s, c in same:
                limited = _scope_flip(cl, c.text) if scope and s >= best_same - 0.1 else None
                if limited is not None:
                    return (f"the source limits this to {limited!r} only, the claim drops the limit: "
                            f"{_short(c.text)!r}")
            if all(c.sign != sign for c in near_same):
                said = "negative" if sign < 0 else "affirmative"
                return (f"the claim is {said} ({_short(cl, 60)!r}) but the source says the opposite: "
                        f"{_short(near_same[0].text)!r}")
            sign = None  # same polarity as the clause with the same predicate: only words are compared below
    antonyms = bool(_antonym_forms(words).keys() & ev.stems) or any(
        (x in words and y in ev.text) or (y in words and x in ev.text) for x, y in _ANTONYM_PAIRS)
    if sign is None and not antonyms and not scope:
        return None  # nothing left that could differ
    # Korean: the clauses of the window the claim sentence matches (a short clause such as "이 휴가는
    # 유급이다" is placed by its sentence); English: the clause that covers the claim clause best anywhere
    pool = top.clauses() if min_align == POLARITY_MIN_ALIGN else list(every)
    cands = [(coverage(terms, c.terms), c) for c in pool]
    if not cands:
        return None
    best = max(s for s, _ in cands)
    if best < min_align:
        return None
    near = [c for s, c in cands if s >= best - 1e-9]
    for c in near if antonyms else ():
        anti = _antonym(words, c.text)
        if anti is not None:
            return f"the claim says {anti[0]!r} where the source says {anti[1]!r}: {_short(c.text)!r}"
    for c in near if scope else ():
        limited = _scope_flip(cl, c.text)
        if limited is not None:
            return f"the source limits this to {limited!r} only, the claim drops the limit: {_short(c.text)!r}"
    if sign is None:
        return None
    comparable = [c for c in near if c.sign is not None and c.bound == bound]
    if not comparable or any(c.sign == sign for c in comparable):
        return None  # nothing to compare, or an equally close clause of the same polarity
    said = "negative" if sign < 0 else "affirmative"
    return (f"the claim is {said} ({_short(cl, 60)!r}) but the source says the opposite: "
            f"{_short(comparable[0].text)!r}")


def _short(text: str, n: int = 90) -> str:
    t = " ".join(text.split())
    return t if len(t) <= n else t[:n - 1] + "…"


def clear_caches() -> None:
    """Empty this module's per-text caches (benchmarks measure cold validation with it)."""
    for fn in (normalize_facts, extract_quantities, split_clauses, evidence_windows, _stems, _aligned_evidence,
               _claim_sentences, _index, _document_frequency, _antonym_forms, _clause_quantities):
        fn.cache_clear()
