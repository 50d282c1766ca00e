"""English sample texts and questions: the fixtures the rag.bench measurements (context, languages) build
their inputs from."""
from __future__ import annotations

# rag.bench.context: the subjects and predicates its seeded English sentences are made of (subject, a
# space, predicate; ``{n}`` a random number).
CONTEXT_SUBJECTS = ("The coolant pump", "The pressure sensor", "The safety valve", "The inference server",
                    "The battery module", "The refund policy", "The inspection checklist", "The backup generator")
CONTEXT_PREDICATES = ("stops automatically above {n} degrees.", "must be recalibrated every {n} months.",
                      "was last revised in {n}.", "requires a lockout before any maintenance work.",
                      "raises an alarm within {n} seconds of a fault.", "tolerates a deviation of {n} percent.")
# rag.bench.context: the English half of the question its prompt builds answer (after the Korean half).
CONTEXT_QUESTION = "What is the pump's safety stop temperature?"
# rag.bench.context: the English words of the text that loads its tokenizer.
CONTEXT_TOKENIZER_WARMUP = "warm up the tokenizer"
# rag.bench.context: its refund guideline, and the English keywords of its safety and refund guidelines.
CONTEXT_REFUND_GUIDELINE = "Quote the refund clause number."
CONTEXT_SAFETY_KEYWORD = "safety"
CONTEXT_REFUND_KEYWORD = "refund"

# rag.bench.languages: English questions about the demo's Korean-only documents (set en->ko; the first is
# also the first question after start-up).
LANGUAGE_QUESTIONS_ON_KOREAN = ("How many days of annual leave do I get?",
                                "What must be measured before entering a confined space?",
                                "How much can I claim for dinner when I work late?",
                                "What is the top speed of a forklift inside the factory?",
                                "How many years are work emails kept?",
                                "Where is the assembly point if a fire breaks out at the Busan plant?")
# rag.bench.languages: English questions about the demo's English documents (set en->en).
LANGUAGE_QUESTIONS = ("What is the per-diem limit for a domestic business trip?",
                      "How often must passwords be changed?",
                      "Who approves expenses over 5,000,000 won?", "How many days per week can I work remotely?",
                      "What is the maximum payload of the HR-7 robot arm?",
                      "How much is the annual training budget per employee?")
# rag.bench.languages: the English question its warm-up asks (model loads).
LANGUAGE_WARMUP_QUESTION = "What is the warm-up question?"
