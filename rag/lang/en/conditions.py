"""English words of a question asking for a bound or a limit, and of a text parting two values.
Read by rag.text.conditions (each after its Korean counterpart in rag.lang.ko.conditions)."""
from __future__ import annotations

# A question that asks for the value actually applied ("exactly how much"); matched case-insensitively.
ASKS_ACTUAL = r"\bactual(?:ly)?\b|\bexact(?:ly)?\b"

# A question that names a limit ("the actual maximum"); matched case-insensitively.
NAMES_LIMIT = r"\b(?:limit|cap|maximum|minimum|at most|at least)\b"

# A question that asks for a maximum ("at most", "up to") or a minimum ("at least"); matched case-insensitively.
ASKS_MAX = r"\b(?:maximum|at most|up to|the longest|the most)\b"
ASKS_MIN = r"\b(?:minimum|at least|the shortest|the least)\b"

# The conjunctions that part two values written near each other (rag.text.conditions.adjacent).
CONJUNCTIONS = r"\band\b|\bor\b"
