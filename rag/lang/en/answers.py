"""English words and patterns of the answer stage: read by the extractive generator (rag.answer.units,
rag.answer.extractive)."""
from __future__ import annotations

# Question words an answer sentence does not repeat: rag.answer.units.QUESTION_TERMS (with the Korean
# ones) leaves them out of a question's terms.
QUESTION_TERMS = frozenset({"many", "much", "often", "long"})

# A unit that announces a list: rag.answer.extractive brings its items (after the Korean alternatives).
ANNOUNCES = r"\bthe following\b"

# A unit that says the value is set in an annex: the English alternative of
# rag.answer.extractive.DELEGATION, after the Korean ones.
DELEGATION = r"as (?:set|specified|determined) in (?:the )?(?:annex|appendix|schedule)"

# A definition: rag.answer.extractive adds no definition after the first unit (after the Korean alternative).
DEFINES = r"\bmeans\b|\bis defined as\b"
