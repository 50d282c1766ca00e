"""Korean explanations of the gate's decision: read by rag.rerank.evidence_fit.explain, which fills
these templates (str.format) for a Korean question."""
from __future__ import annotations

# The asked kind of fact as the object of a verb (기한을 …): "질문이 묻는 기한을 밝힌 근거가 없음";
# FACT_OBJECT for a kind not listed.
KIND_OBJECT = {"deadline": "기한을", "period": "기간을", "amount": "금액을", "ratio": "비율을", "count": "수를"}
FACT_OBJECT = "사실을"
# The asked kind of fact as a subject (기한이 …): "묻는 기한이 근거에 있음"; FACT_SUBJECT for a kind not listed.
KIND_SUBJECT = {"deadline": "기한이", "period": "기간이", "amount": "금액이", "ratio": "비율이", "count": "수가"}
FACT_SUBJECT = "사실이"

# Why the gate stopped, by reason; the fields: terms and topic (quoted, comma-joined), coverage (a share),
# kind (KIND_OBJECT's word), top and threshold (scores).
KEY_TERMS_MISSING = "질문의 핵심어 {terms}가 근거에 없음 (핵심어 포함률 {coverage:.0%})"
TOPIC_MISSING = "질문의 주제어 {topic}가 근거에 없음"
ASKED_FACT_MISSING = "질문이 묻는 {kind} 밝힌 근거가 없음"
BELOW_THRESHOLD = "가장 관련 있는 근거의 점수 {top:.3f}가 기준 {threshold:.3f}보다 낮음"
NO_CANDIDATES = "검색된 근거가 없음"

# Why the gate answered: the parts (kind: KIND_SUBJECT's word), joined with "; " after ANSWERED_WITH,
# or ANSWERED alone when there is none.
SCORE_PASSED = "점수 {top:.3f} ≥ 기준 {threshold:.3f}"
COVERAGE = "핵심어 포함률 {coverage:.0%}"
ASKED_FACT_FOUND = "묻는 {kind} 근거에 있음"
ANSWERED_WITH = "답변함: "
ANSWERED = "답변함"
