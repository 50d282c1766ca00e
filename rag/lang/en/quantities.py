"""English quantities: month names and dates, statute references, scale words and counts in words (twice,
a day). Read by the text stage (rag.text.quantities)."""
from __future__ import annotations

# A month's name or its abbreviation (regex).
MONTH_NAME = r"(?i:jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|sep(?:t(?:ember)?)?|" \
             r"oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)"
# Dates (regex): June 28, 2024; 28 June 2024; June 2024.
DATE_MDY = rf"\b({MONTH_NAME})\.?\s+(\d{{1,2}})(?:st|nd|rd|th)?,?\s+(\d{{4}})\b"
DATE_DMY = rf"\b(\d{{1,2}})(?:st|nd|rd|th)?\s+({MONTH_NAME})\.?,?\s+(\d{{4}})\b"
MONTH_YEAR = rf"\b({MONTH_NAME})\.?\s+(\d{{4}})\b"
# The month name that is also a verb ("may 2024 …"): never read as a month of a year.
MONTH_ALSO_A_VERB = "may"

# A statute reference (regex): Article 8, para. 2, Section 3-1.
REFERENCE = r"(?i)\b(article|art\.|paragraph|para\.|subparagraph|item|chapter|section)\s*(\d+)(?:-(\d+))?"

# The scale words after a currency-prefixed amount ($5 million) (regex alternatives, before the Korean ones),
# and their values.
MONEY_SCALE = r"thousand|million|billion"
MONEY_SCALES = {"thousand": 1000, "million": 10 ** 6, "billion": 10 ** 9}
# A scale word right after a number (5 million) (regex, matched after it).
SCALE_AFTER = r"\s(thousand|million|billion)\b"

# A count in a word (regex): "once" only as a count ("once a year"), not as the conjunction ("once DNA has been
# replicated").
TIMES = (r"(?i)\b(once(?=\s+(?:a|an|per|every|each|daily|weekly|monthly|yearly|annually|only)\b)|twice|"
         r"thrice|double|triple)\b")
# One unit of time in words (a day, one week) (regex); after a number ("2 hours a day") "a" makes it a rate,
# ONE never does.
A_UNIT = r"(?i)(?<![\w$])(a|an|one)\s+(day|week|fortnight|month|year|hour|minute)\b(?!\s*(?:or|and)\b)"
ONE = "one"
