"""English explanations of the gate's decision: read by rag.rerank.evidence_fit.explain, which fills
these templates (str.format) for a question in any language but Korean."""
from __future__ import annotations

# The asked kind of fact, as object and as subject alike; FACT_OBJECT / FACT_SUBJECT for a kind not listed.
KIND_OBJECT = {"deadline": "deadline", "period": "period", "amount": "amount", "ratio": "rate", "count": "number"}
FACT_OBJECT = "fact"
KIND_SUBJECT = KIND_OBJECT
FACT_SUBJECT = FACT_OBJECT

# Why the gate stopped, by reason; the fields: terms and topic (quoted, comma-joined), coverage (a share),
# kind (KIND_OBJECT's word), top and threshold (scores).
KEY_TERMS_MISSING = "the question's key terms {terms} are not in the evidence (coverage {coverage:.0%})"
TOPIC_MISSING = "the question's topic {topic} is not in the evidence"
ASKED_FACT_MISSING = "no evidence states the {kind} the question asks for"
BELOW_THRESHOLD = "the best evidence scores {top:.3f}, below the threshold {threshold:.3f}"
NO_CANDIDATES = "no evidence was found"

# Why the gate answered: the parts (kind: KIND_SUBJECT's word), joined with "; " after ANSWERED_WITH,
# or ANSWERED alone when there is none.
SCORE_PASSED = "score {top:.3f} ≥ threshold {threshold:.3f}"
COVERAGE = "key-term coverage {coverage:.0%}"
ASKED_FACT_FOUND = "the asked {kind} is in the evidence"
ANSWERED_WITH = "answered: "
ANSWERED = "answered"
