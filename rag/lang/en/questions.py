"""English question words: the kinds of fact they ask (read by rag.text.questions) and the words and
patterns a question's reading sets apart from its subject (read by rag.text.question_analysis)."""
from __future__ import annotations

# The English alternatives of each kind's rule in rag.text.questions (wanted_fact), put after the Korean
# ones (rag.lang.ko.questions.FACT_QUESTIONS); matched case-insensitively.
FACT_QUESTIONS = {
    "deadline": r"by when|deadline|within how (?:many|long)|how (?:soon|quickly)",
    "ratio": r"\bpercent(?:age)?\b|\bratio\b|\brate\b|what (?:share|fraction|proportion)|"
             r"how many times (?:more|higher|larger)",
    "period": r"how long|how many (?:days|weeks|months|years|hours|minutes)|for how long",
    "count": r"how old|what age|how many (?:times|people|persons|members|rooms|items)?|how often",
    "amount": r"how much|\b(?:fee|cost|price|amount)\b|per[- ]diem|\blimit\b",
    "who": r"\bwho\b|\bwhom\b|which (?:body|office|team|person)",
    "condition": r"in what case|under what|\bwhen\b|what (?:conditions|circumstances)|in which case",
}

# How an English yes/no question opens (can I, must I, is it, do I have to): the English part of
# rag.text.questions.YES_NO, after the Korean ending.
YES_NO_OPENING = r"^\s*(?:can|could|may|must|should|is|are|do|does|did|will|shall|have)\b"

# Interrogatives and the asked unit that follows how many (a part of the question's form, not its subject):
# rag.text.question_analysis leaves these spans out of the key terms and cuts a question into parts at them.
ASKED = (r"\bhow\s+(?:many|much|long|often|soon|old)(?:\s+(?:hours?|minutes?|days?|weeks?|months?|years?|times?|"
         r"people|persons|members))?(?:\s+(?:a|per|each|every)\s+(?:day|week|month|year))?\b"
         r"|\bwhat\s+(?:percentage|percent|rate|share|fraction|age)\b|\bwhen\b|"
         r"\bwho(?:m)?\b|\bwhere\b|\bwhich\s+(?:body|office|team|person)\b")

# The asked grain of a duration (rag.text.question_analysis): hours, years, days and months.
HOURS_ASKED = r"how\s+many\s+(?:hours?|minutes?)"
YEARS_ASKED = r"how\s+many\s+years?"
DAYS_ASKED = r"how\s+many\s+(?:days?|weeks?|months?)"

# An interrogative that asks for a place or body: a part asking it is a ``who`` part (rag.text.question_analysis).
PLACE_ASKED = r"\bwhere\b"

# Stems (rag.text.analyzers.EnglishAnalyzer, stemmed) of words a question uses that say nothing about its
# subject: never a key term (rag.text.question_analysis).
GENERIC_STEMS = frozenset({
    "mani", "much", "long", "often", "soon", "old", "get", "need", "allow", "take", "use", "make", "give", "tell",
    "know", "want", "like", "per", "also", "pleas", "ani", "any", "daili", "weekli", "monthli", "annual", "maximum",
    "minimum", "exact", "actual", "long", "abl", "requir",
})
