"""English units, rate words and multipliers: how an English text writes a quantity's unit, as rows and
patterns that rag.text.units compiles and rag.text.quantities reads quantities with."""
from __future__ import annotations

from rag.lang.ko.units import ARTICLE, CHAPTER, PARAGRAPH, SECTION, SUBPARAGRAPH

# The units an English text writes after a number, as rows of (pattern, canonical unit, kind, factor to the
# canonical unit, may follow the number after a space). rag.text.units compiles them into ENGLISH_UNITS,
# tried in this order after the Korean ones (rag.lang.ko.units.UNITS).
UNITS: tuple[tuple[str, str, str, int, bool], ...] = (
    (r"(?i:calendar\s+|business\s+|working\s+)?days?\b", "day", "period", 1, True),
    (r"(?i:weeks?)\b", "day", "period", 7, True),
    (r"(?i:fortnights?)\b", "day", "period", 14, True),
    (r"(?i:months?)\b", "month", "period", 1, True),
    (r"(?i:years?)\b", "month", "period", 12, True),
    (r"(?i:hours?|hrs?)\b", "second", "period", 3600, True),
    (r"(?i:minutes?|mins?)\b", "second", "period", 60, True),
    (r"(?i:seconds?|secs?)\b", "second", "period", 1, True),
    (r"(?i:percent|per\s+cent|pct)\b", "percent", "percent", 1, True),
    (r"(?i:times|fold)\b|-fold\b", "x", "ratio", 1, True),
    (r"(?i:won|KRW)\b", "KRW", "money", 1, True),
    (r"(?i:dollars?|USD)\b", "USD", "money", 1, True),
    (r"(?i:euros?|EUR)\b", "EUR", "money", 1, True),
    (r"(?i:people|persons?|employees|workers|members)\b", "person", "count", 1, True),
    (r"(?i:floors?|stories|storeys)\b", "floor", "count", 1, True),
    (r"(?i:kilometers?|kilometres?)\b", "m", "measure", 1000, True),
    (r"(?i:meters?|metres?)\b", "m", "measure", 1, True),
    (r"(?i:square\s+met(?:er|re)s?)\b", "m2", "measure", 1, True),
    (r"(?i:kilograms?)\b", "g", "measure", 1000, True),
    (r"(?i:grams?)\b", "g", "measure", 1, True),
    (r"(?i:liters?|litres?)\b", "L", "measure", 1, True),
    (r"(?i:years?\s+old)\b", "age", "count", 1, True),
)

# A rate: per/each/every and a period (group 1), or a period's adverb (group 2, annually);
# rag.text.units compiles it into ENGLISH_RATE.
RATE = (r"(?i)\b(?:per|each|every)\s+(year|month|week|day|hour)\b|\b(annually|yearly|monthly|"
        r"weekly|daily|hourly)\b")
# Each RATE word's period as (canonical unit, value): read by rag.text.quantities (lower-cased key).
RATE_UNITS = {"year": ("month", 12), "annually": ("month", 12), "yearly": ("month", 12), "month": ("month", 1),
              "monthly": ("month", 1), "week": ("day", 7), "weekly": ("day", 7), "day": ("day", 1),
              "daily": ("day", 1), "hour": ("second", 3600), "hourly": ("second", 3600)}

# English reference words and the Korean reference unit each stands for (Article 3 states what 제3조
# states): read by rag.text.quantities (lower-cased key).
REFERENCE_UNITS = {"article": ARTICLE, "art.": ARTICLE, "paragraph": PARAGRAPH, "para.": PARAGRAPH,
                   "subparagraph": SUBPARAGRAPH, "item": SUBPARAGRAPH, "chapter": CHAPTER, "section": SECTION}

# Multiplier words with no numeral (twice, double), as (value, canonical unit, kind): read by
# rag.text.quantities (lower-cased key).
TIMES = {"once": (1, "times", "count"), "twice": (2, "x", "ratio"), "thrice": (3, "x", "ratio"),
         "double": (2, "x", "ratio"), "triple": (3, "x", "ratio")}
