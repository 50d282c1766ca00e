"""English words and patterns of follow-up questions: read by the deterministic resolver
(rag.conversation.rules) to tell a follow-up from a question that stands alone and to complete it."""
from __future__ import annotations

# Openers that continue the previous question (what about, and, what if …); compiled IGNORECASE.
CONNECTIVE = (r"^(?:and\s+what\s+about|what\s+about|how\s+about|and\s+if|what\s+if|and\s+for|same\s+for|"
              r"and|but|so|then|also|or)\b[\s,]*")
# Pronouns that point back in a short question; compiled IGNORECASE.
PRONOUN = r"\b(?:it|that|this|those|these|they|them|there|its|their)\b"

# A name a rewrite may not bring in unless the conversation holds it: a capitalized word or code after
# the first word (Busan, LGPL, HR-7, SEV1); rag.conversation.llm.rewrite_problem. Each part of a hyphenated
# one is checked on its own.
NAME = r"(?<=\s)[A-Z][A-Za-z0-9]+(?:-[A-Za-z0-9]+)*"

# Words the analyzer keeps that carry no topic (compared lower-cased): rag.conversation.rules.own_terms.
NOT_TOPIC = frozenset({"about", "must", "should", "can", "could", "would", "will", "what", "which", "when", "how",
                       "then", "also", "there", "does"})
