"""English predicate polarity: the rule words, negations, subordinate clauses, bounds, limit words and opposite
word prefixes of a clause. Read by the text stage (rag.text.polarity)."""
from __future__ import annotations

# A subordinate clause up to its comma (if …, unless …, before …) (regex): removed before the main clause's
# negations are counted.
SUBORDINATE = (r"(?i)\b(?:if|unless|when|whenever|where|although|though|even if|even though|except|provided that|"
               r"as long as|in case|before|after|until)\b[^,;]*[,;]")
# A verbal negation (regex): "no association was noted" and "there is no" negate the clause, a "no" inside a
# noun phrase ("with or without", "no more than") does not.
NEGATION = (r"(?i)\b(?:not|never|cannot|prohibited|forbidden|banned|barred)\b|n't\b|"
            r"^\s*no\b(?!\s+(?:more|less|later|earlier)\b)|"
            r"\b(?:is|are|was|were|be|been|has|have|had|there\s+is|there\s+are|shall|may|must)\s+no\b|"
            r"\bno\s+(?:one|person|employee|member|party|individual|tenant|landlord)\b|"
            r"\b(?!(?:with|of|and|or|for|in|at|to|by|from|on|that|whether|than)\b)[a-z]+\s+no\b(?!\s+(?:more|less|later))")
# A negated condition or concession of the same clause (unless …, even if … not) (regex): one more negation.
NEGATED_CONDITION = (r"(?i)\bunless\b|\b(?:if|when|where|even if|even though)\b[^,;]*\b(?:not|never|no)\b"
                     r"[^,;]*[,;]|\b(?:if|when|where|even if|even though)\b[^,;]*n't\b[^,;]*[,;]")
# A predicate word that states a bound (regex, matched at the start of a word; follows the Korean alternative).
BOUND_VERB = r"(?i:^exceed)"
# A bound anywhere in an English main clause (may not exceed) (regex).
BOUND = r"(?i)\bexceed"
# A word that states a rule (must / shall / may / can / required / prohibited …) (regex): English clauses are
# compared only when they have one, as the sign of a descriptive sentence ("was not associated with") is often
# carried by words ("lacking") no grammar of predicates sees.
DEONTIC = (r"(?i)\b(?:must|shall|may|can|cannot|could|should|need|needs|required|requires|require|"
           r"prohibited|forbidden|allowed|permitted|entitled|obliged|obligated|eligible)\b|can't|mustn't")

# A word that says "all" (regex; follows the Korean alternative).
UNIVERSAL = r"(?i:\b(?:all|both|entire|full|whole|any time|always)\b)"
# The word of limit "only" (regex; follows the Korean alternatives).
EXCLUSIVE_ANY = r"(?i:\bonly\b)"

# Prefixes that turn a word into its opposite (paid → unpaid).
ANTONYM_PREFIXES = ("un", "in", "non", "non-", "il", "ir", "im", "dis")
