"""Korean units, counters and rate words: how a Korean text writes a quantity's unit, as rows and patterns
that rag.text.units compiles and rag.text.quantities reads quantities with."""
from __future__ import annotations

from fractions import Fraction

_NOT_WORD = r"(?![A-Za-z])"  # a unit symbol (km, L) ends where no Latin letter follows

# The units a Korean text writes after a number, with the SI symbols it writes among them, as rows of
# (pattern, canonical unit, kind, factor to the canonical unit, may follow the number after a space).
# rag.text.units compiles them into KOREAN_UNITS, tried in this order: longest first, with lookaheads
# that keep compounds out (주택 is not weeks, 초과 is not seconds, 배우자 is not a multiplier).
UNITS: tuple[tuple[str, str, str, int | Fraction, bool], ...] = (
    (r"킬로미터|km" + _NOT_WORD, "m", "measure", 1000, True),
    (r"제곱센티미터|cm2" + _NOT_WORD, "m2", "measure", Fraction(1, 10000), True),
    (r"센티미터|cm" + _NOT_WORD, "m", "measure", Fraction(1, 100), True),
    (r"밀리미터|mm" + _NOT_WORD, "m", "measure", Fraction(1, 1000), True),
    (r"세제곱미터|입방미터|m3" + _NOT_WORD, "m3", "measure", 1, True),
    (r"제곱미터|평방미터|m2" + _NOT_WORD, "m2", "measure", 1, True),
    (r"미터|m" + _NOT_WORD, "m", "measure", 1, True),
    (r"킬로그램|kg" + _NOT_WORD, "g", "measure", 1000, True),
    (r"밀리그램|mg" + _NOT_WORD, "g", "measure", Fraction(1, 1000), True),
    (r"그램|g" + _NOT_WORD, "g", "measure", 1, True),
    (r"톤|t" + _NOT_WORD, "g", "measure", 10 ** 6, True),
    (r"헥타르|ha" + _NOT_WORD, "m2", "measure", 10000, True),
    (r"밀리리터|ml" + _NOT_WORD + r"|mL" + _NOT_WORD, "L", "measure", Fraction(1, 1000), True),
    (r"리터|ℓ|L" + _NOT_WORD, "L", "measure", 1, True),
    (r"피피엠|ppm" + _NOT_WORD, "ppm", "measure", 1, True),
    (r"데시벨|dB" + _NOT_WORD, "dB", "measure", 1, True),
    (r"킬로와트|kW" + _NOT_WORD, "W", "measure", 1000, True),
    (r"℃|°C|도(?=\s?(?:이상|이하|미만|초과|를|에|의|까지))", "celsius", "measure", 1, False),
    (r"평(?![가균등생일소야온화])", "pyeong", "measure", 1, False),
    (r"주일(?:간)?", "day", "period", 7, True),
    (r"주(?:간)?(?![택식년주])", "day", "period", 7, False),
    (r"개월(?:간)?", "month", "period", 1, True),
    (r"개년", "month", "period", 12, True),
    (r"년(?:간)?(?!도)", "month", "period", 12, False),
    (r"일(?:간)?(?![반자괄련체치용률람종환몰])", "day", "period", 1, False),
    (r"시간", "second", "period", 3600, True),
    (r"분(?!의|기|류|할|배|담|당|야|석|리|만|쟁|량)", "second", "period", 60, False),
    (r"초(?!과|등|순|반|안|기|본|고|래|청|월)", "second", "period", 1, False),
    (r"퍼센트|프로(?!그|젝|세|필|토)", "percent", "percent", 1, True),
    (r"%", "percent", "percent", 1, True),
    (r"원(?!칙|인|본|리|장|회|자|래|문|고|격)", "KRW", "money", 1, True),
    (r"달러", "USD", "money", 1, True),
    (r"유로", "EUR", "money", 1, True),
    (r"엔(?![진터])", "JPY", "money", 1, False),
    (r"배(?![상우정치출당제분달송포열수])", "x", "ratio", 1, False),
    (r"회(?![사계원장기차의관복피])", "times", "count", 1, False),
    (r"번(?![호지째역])", "times", "count", 1, False),
    (r"차례", "times", "count", 1, True),
    (r"명(?![령칭단세시예뢰백확])", "person", "count", 1, True),
    (r"인(?![상하건정용원출증])", "person", "count", 1, False),
    (r"사람", "person", "count", 1, True),
    (r"층", "floor", "count", 1, False),
    (r"박(?![사물람탈해수])", "night", "count", 1, False),
    (r"세(?![대금액율부기])|살", "age", "count", 1, False),
    (r"개(?![월년정선인소])|건(?![강물축설의])|가지", "item", "count", 1, False),
    (r"개소|곳", "place", "count", 1, False),
    (r"시(?=$|[^가-힣]|까지|부터|에|반|경|이후|이전|전|후|정각)", "o'clock", "date", 1, False),
)

# What makes a written one of a period a rate's denominator: 에/당/마다 after it, or another quantity
# right after it (1일에 4시간, 하루 4시간). rag.text.units.is_rate matches it where the period ends.
RATE_AFTER = r"\s?(?:에|당|마다|에는)?\s?(?=\d|한\s|두\s|세\s)|\s?(?:당|마다)"

# A rate word written before a quantity with no numeral of its own (연 60일, 매월 2회), group 1 the word;
# rag.text.units compiles it into RATE_PREFIX.
RATE_PREFIX = (r"(?<![가-힣A-Za-z])(매년|연간|해마다|매월|매달|월간|달마다|매주|주간|매일|일간|연|월|주)\s?"
               r"(?=\d|한\s|두\s|하루|이틀|사흘)")
# Each RATE_PREFIX word's period as (canonical unit, value): read by rag.text.quantities.
RATE_PREFIX_UNITS = {"매년": ("month", 12), "연간": ("month", 12), "해마다": ("month", 12), "연": ("month", 12),
                     "매월": ("month", 1), "매달": ("month", 1), "월간": ("month", 1), "달마다": ("month", 1),
                     "월": ("month", 1), "매주": ("day", 7), "주간": ("day", 7), "주": ("day", 7), "매일": ("day", 1),
                     "일간": ("day", 1)}

# The reference units of a statute or form (제3조, 2항, 1급), each its own canonical unit: read by
# rag.text.quantities. The first five are also what English references map onto (rag.lang.en.units).
ARTICLE, PARAGRAPH, SUBPARAGRAPH, CHAPTER, SECTION = "조", "항", "호", "장", "절"
REFERENCE_UNITS = {u: u for u in (ARTICLE, PARAGRAPH, SUBPARAGRAPH, "목", CHAPTER, SECTION, "관", "편", "급", "등급",
                                  "종", "차")}

# The counters native Korean numerals take (두 명, 세 번, 한 달), each as (canonical unit, kind, factor):
# read by rag.text.quantities.
NATIVE_COUNTERS = {"명": ("person", "count", 1), "사람": ("person", "count", 1), "번": ("times", "count", 1),
                   "차례": ("times", "count", 1), "달": ("month", "period", 1), "해": ("month", "period", 12),
                   "개": ("item", "count", 1), "가지": ("item", "count", 1), "건": ("item", "count", 1),
                   "시간": ("second", "period", 3600), "살": ("age", "count", 1), "배": ("x", "ratio", 1),
                   "곳": ("place", "count", 1), "주": ("day", "period", 7), "층": ("floor", "count", 1)}
