"""Numbers as texts write them: Arabic numerals (``20,000``, ``3.5``), Korean numerals and composites
(``1억6천500만`` = 165,000,000, ``오십만``), native Korean numerals and day counts (``두``, ``이틀``), English
number words (``two hundred and five``), ordinals (``third``) and month names. The patterns here are
regular-expression sources :mod:`rag.text.quantities` builds its patterns from; the parsers give a
numeral's exact value."""
from __future__ import annotations

import re
from fractions import Fraction

from rag.lang.en import numerals as en_numerals
from rag.lang.ko import numerals as ko_numerals

__all__ = ["ARABIC_NUMERAL", "ENGLISH_MAGNITUDES", "ENGLISH_NUMERAL", "ENGLISH_ORDINALS", "HANGUL_NUMERAL",
           "NATIVE_DAYS", "NATIVE_NUMERALS", "NUMERAL", "month_number", "parse_english_number",
           "parse_korean_number"]

# --------------------------------------------------------------------------- Korean
ARABIC_NUMERAL = r"\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?"
_KDIGIT = ko_numerals.DIGITS
_SMALL = ko_numerals.SMALL_MAGNITUDES
_BIG = ko_numerals.BIG_MAGNITUDES
# an Arabic number, optionally with Korean magnitudes: 20,000 / 3.5 / 2만 / 1억6천500만 / 1억 5천만
NUMERAL = rf"(?:{ARABIC_NUMERAL})(?:\s?{ko_numerals.MAGNITUDE}+(?:\s?(?:{ARABIC_NUMERAL}))?)*" \
          rf"(?:{ko_numerals.TRILLION})?"
HANGUL_NUMERAL = ko_numerals.NUMERAL


def parse_korean_number(text: str) -> Fraction | None:
    """The value of an Arabic, Korean or mixed numeral (``1억6천500만`` → 165000000); None if it is not one."""
    tokens = re.findall(rf"{ARABIC_NUMERAL}|{ko_numerals.NUMERAL_LETTER}", text.replace(" ", ""))
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


NATIVE_DAYS = ko_numerals.NATIVE_DAYS
NATIVE_NUMERALS = ko_numerals.NATIVE_NUMERALS

# --------------------------------------------------------------------------- English
_EN_SMALL = en_numerals.SMALL_NUMBERS
_EN_TENS = en_numerals.TENS
ENGLISH_MAGNITUDES = en_numerals.MAGNITUDES
ENGLISH_NUMERAL = en_numerals.NUMERAL


def parse_english_number(text: str) -> Fraction | None:
    """``two hundred and five`` → 205, ``a thousand`` → 1000, ``1.5 million`` → 1500000."""
    words = re.split(r"[\s-]+", text.lower().replace(",", ""))
    total, cur, seen = Fraction(0), Fraction(0), False
    for w in words:
        if not w or w in en_numerals.FILLERS:
            continue
        if re.fullmatch(r"\d+(?:\.\d+)?", w):
            cur += Fraction(w)
        elif w in _EN_SMALL:
            cur += _EN_SMALL[w]
        elif w in _EN_TENS:
            cur += _EN_TENS[w]
        elif w == en_numerals.HUNDRED:
            cur = (cur or 1) * 100
        elif w in ENGLISH_MAGNITUDES:
            total += (cur or 1) * ENGLISH_MAGNITUDES[w]
            cur = Fraction(0)
        else:
            return None
        seen = True
    return total + cur if seen else None


ENGLISH_ORDINALS = en_numerals.ORDINALS
_MONTHS = en_numerals.MONTHS


def month_number(name: str) -> int:
    """The number of an English month name or its abbreviation (``Sept.`` → 9)."""
    name = name.lower().rstrip(".")
    return next(v for k, v in _MONTHS.items() if k.startswith(name[:3]))
