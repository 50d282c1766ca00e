"""Numbers as texts write them: Arabic numerals (``20,000``, ``3.5``), Korean numerals and composites
(``1억6천500만`` = 165,000,000, ``오십만``), native Korean numerals and day counts (``두``, ``이틀``), English
number words (``two hundred and five``), ordinals (``third``) and month names. The patterns here are
regular-expression sources :mod:`rag.text.quantities` builds its patterns from; the parsers give a
numeral's exact value."""
from __future__ import annotations

import re
from fractions import Fraction

__all__ = ["ARABIC_NUMERAL", "ENGLISH_MAGNITUDES", "ENGLISH_NUMERAL", "ENGLISH_ORDINALS", "HANGUL_NUMERAL",
           "NATIVE_DAYS", "NATIVE_NUMERALS", "NUMERAL", "month_number", "parse_english_number",
           "parse_korean_number"]

# --------------------------------------------------------------------------- Korean
ARABIC_NUMERAL = r"\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?"
_KDIGIT = {"일": 1, "이": 2, "삼": 3, "사": 4, "오": 5, "육": 6, "칠": 7, "팔": 8, "구": 9}
_SMALL = {"십": 10, "백": 100, "천": 1000}
_BIG = {"만": 10 ** 4, "억": 10 ** 8, "조": 10 ** 12}
# an Arabic number, optionally with Korean magnitudes: 20,000 / 3.5 / 2만 / 1억6천500만 / 1억 5천만
# 만 is a magnitude before a number, a unit or a comparison (2만원, 1만 명, 3만 이상), and the particle
# "only" otherwise (2분의 1만 지급한다)
_MAN = r"만(?=\s?(?:\d|[원명개건배회주호천억여톤]|달러|유로|엔|가구|세대|이상|이하|미만|초과|[A-Za-z$]))"
_MAG = rf"(?:[십백천억]|{_MAN})"
NUMERAL = rf"(?:{ARABIC_NUMERAL})(?:\s?{_MAG}+(?:\s?(?:{ARABIC_NUMERAL}))?)*(?:조(?=\s?\d|\s?[억만원]))?"
HANGUL_NUMERAL = r"[일이삼사오육칠팔구]?(?:[십백천][일이삼사오육칠팔구]?)+[만억]?|[일이삼사오육칠팔구십백천]+[만억]"


def parse_korean_number(text: str) -> Fraction | None:
    """The value of an Arabic, Korean or mixed numeral (``1억6천500만`` → 165000000); None if it is not one."""
    tokens = re.findall(rf"{ARABIC_NUMERAL}|[일이삼사오육칠팔구십백천만억조]", text.replace(" ", ""))
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


NATIVE_DAYS = {"일주일": 7, "하루": 1, "이틀": 2, "사흘": 3, "나흘": 4, "닷새": 5, "엿새": 6, "이레": 7, "여드레": 8, "아흐레": 9,
               "열흘": 10, "보름": 15}
NATIVE_NUMERALS = {"한": 1, "하나": 1, "두": 2, "둘": 2, "세": 3, "셋": 3, "석": 3, "네": 4, "넷": 4, "넉": 4, "다섯": 5,
                   "여섯": 6, "일곱": 7, "여덟": 8, "아홉": 9, "열": 10, "열한": 11, "열두": 12, "스무": 20, "스물": 20,
                   "서른": 30, "마흔": 40, "쉰": 50}

# --------------------------------------------------------------------------- English
_EN_SMALL = {w: i for i, w in enumerate(
    "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen "
    "seventeen eighteen nineteen".split())}
_EN_TENS = {w: 10 * (i + 2) for i, w in enumerate("twenty thirty forty fifty sixty seventy eighty ninety".split())}
ENGLISH_MAGNITUDES = {"hundred": 100, "thousand": 1000, "million": 10 ** 6, "billion": 10 ** 9}
_EN_WORD = "|".join(sorted([*_EN_SMALL, *_EN_TENS, *ENGLISH_MAGNITUDES], key=len, reverse=True))
ENGLISH_NUMERAL = rf"(?:(?:{_EN_WORD})(?:[\s-]+(?:and\s+)?(?:{_EN_WORD}))*|a\s+(?:hundred|thousand|million|billion)" \
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
        elif w in ENGLISH_MAGNITUDES:
            total += (cur or 1) * ENGLISH_MAGNITUDES[w]
            cur = Fraction(0)
        else:
            return None
        seen = True
    return total + cur if seen else None


ENGLISH_ORDINALS = {w: i for i, w in enumerate(
    "_ _ _ third fourth fifth sixth seventh eighth ninth tenth eleventh twelfth thirteenth fourteenth fifteenth "
    "sixteenth seventeenth eighteenth nineteenth twentieth".split()) if w != "_"}
ENGLISH_ORDINALS.update({"thirtieth": 30, "fortieth": 40, "fiftieth": 50, "hundredth": 100, "thousandth": 1000})

_MONTHS = {m: i + 1 for i, m in enumerate(
    "january february march april may june july august september october november december".split())}


def month_number(name: str) -> int:
    """The number of an English month name or its abbreviation (``Sept.`` → 9)."""
    name = name.lower().rstrip(".")
    return next(v for k, v in _MONTHS.items() if k.startswith(name[:3]))
