"""English number words, ordinals and month names; read by rag.text.numerals (ENGLISH_NUMERAL,
parse_english_number, month_number) and rag.text.quantities."""
from __future__ import annotations

# Number words and their values: rag.text.numerals.parse_english_number reads them. HUNDRED multiplies
# the number before it (two hundred); the other magnitudes close the group before it (two hundred thousand).
SMALL_NUMBERS = {w: i for i, w in enumerate(
    "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen "
    "seventeen eighteen nineteen".split())}
TENS = {w: 10 * (i + 2) for i, w in enumerate("twenty thirty forty fifty sixty seventy eighty ninety".split())}
MAGNITUDES = {"hundred": 100, "thousand": 1000, "million": 10 ** 6, "billion": 10 ** 9}
HUNDRED = "hundred"
# Words a number word may have between its parts or before it (two hundred and five, a thousand):
# parse_english_number skips them.
FILLERS = ("and", "a")

_WORD = "|".join(sorted([*SMALL_NUMBERS, *TENS, *MAGNITUDES], key=len, reverse=True))
# A number in words (two hundred and five, a thousand): rag.text.numerals.ENGLISH_NUMERAL.
NUMERAL = rf"(?:(?:{_WORD})(?:[\s-]+(?:and\s+)?(?:{_WORD}))*|a\s+(?:hundred|thousand|million|billion)" \
          rf"(?:[\s-]+(?:and\s+)?(?:{_WORD}))*)"

# Ordinal words from third and their values (a third, two fifths): read by rag.text.quantities.
ORDINALS = {w: i for i, w in enumerate(
    "_ _ _ third fourth fifth sixth seventh eighth ninth tenth eleventh twelfth thirteenth fourteenth fifteenth "
    "sixteenth seventeenth eighteenth nineteenth twentieth".split()) if w != "_"}
ORDINALS.update({"thirtieth": 30, "fortieth": 40, "fiftieth": 50, "hundredth": 100, "thousandth": 1000})

# Month names and their numbers: rag.text.numerals.month_number matches a name or abbreviation on them.
MONTHS = {m: i + 1 for i, m in enumerate(
    "january february march april may june july august september october november december".split())}
