"""The end result of :meth:`rag.pipeline.Pipeline.answer` and its trace."""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import TYPE_CHECKING, Literal, Mapping

from rag.rerank.gate import GateDecision
from rag.types import Turn

if TYPE_CHECKING:  # the types the trace records; none is needed to build or read one
    from rag.answer.loop import AttemptRecord
    from rag.answer.report import CitationCheck, ResolvedCitation
    from rag.context.prompt import PromptManifest
    from rag.context.sanitize import QuarantinedEvidence
    from rag.conversation.model import Resolution
    from rag.retrieval.versions import SupersededVersion
    from rag.tools.loop import ToolTrace

Status = Literal["answered", "insufficient_evidence"]
SourceWarningCode = Literal["source_changed", "source_missing"]


@dataclass(frozen=True)
class SourceWarning:
    """A cited document whose source file is no longer what was indexed (``rag.pipeline.freshness``):
    ``source_changed`` (other bytes on disk now) or ``source_missing`` (deleted or moved). The answer
    still quotes the indexed text; ``file`` is the path relative to its folder, as the citation shows it."""

    code: SourceWarningCode
    document_id: str
    document_version: str
    file: str
    message: str

    def to_json(self) -> dict:
        return {"code": self.code, "document_id": self.document_id, "document_version": self.document_version,
                "file": self.file, "message": self.message}


@dataclass(frozen=True)
class CandidateTrace:
    """One candidate as the gate saw it (after reranking when it ran)."""

    evidence_id: str
    rank: int
    fused_score: float
    probability: float | None
    truncated: bool = False


@dataclass(frozen=True)
class AnswerTrace:
    timings_ms: Mapping[str, float]  # per stage: bm25, embed_query, dense, fusion, rerank, context, generation, validation, result, total, unnamed
    gate: GateDecision
    rerank_applied: bool
    rerank_reason: str
    candidates: tuple[CandidateTrace, ...]
    excluded: tuple[tuple[str, str], ...]  # (evidence_id, reason) the reranker left out
    manifest: PromptManifest | None  # blocks, budget, drops; None when the gate abstained
    attempts: tuple[AttemptRecord, ...]  # status, violations, usage, seconds, request hash
    prompt_tokens: int
    completion_tokens: int
    config_hash: str
    model_ids: Mapping[str, str]
    checks: tuple[CitationCheck, ...] = ()  # per-citation support of the last attempt
    quarantined: tuple[QuarantinedEvidence, ...] = ()  # withheld as suspected_injection
    tools: ToolTrace | None = None  # tool selection and calls (Pipeline.answer(tools=...))
    steps: tuple[tuple[str, float], ...] = ()  # (step name, ms): start, each step of the request path that ran, result
    resolution: Resolution | None = None  # the follow-up resolved (None: no history)

    def __post_init__(self) -> None:
        object.__setattr__(self, "timings_ms", MappingProxyType(dict(self.timings_ms)))
        object.__setattr__(self, "model_ids", MappingProxyType(dict(self.model_ids)))

    @property
    def total_tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens

    def to_json(self) -> dict:
        return {
            "timings_ms": {k: round(v, 3) for k, v in self.timings_ms.items()},
            "gate": self.gate.to_json(),
            "rerank": {"applied": self.rerank_applied, "reason": self.rerank_reason,
                       "excluded": [{"evidence_id": e, "reason": r} for e, r in self.excluded]},
            "candidates": [c.__dict__ for c in self.candidates],
            "manifest": self.manifest.to_json() if self.manifest is not None else None,
            "attempts": [_attempt_json(a) for a in self.attempts],
            "usage": {"prompt_tokens": self.prompt_tokens, "completion_tokens": self.completion_tokens,
                      "total_tokens": self.total_tokens},
            "config_hash": self.config_hash,
            "model_ids": dict(self.model_ids),
            "citation_checks": [{"source_id": c.source_id, "known": c.known, "quote_found": c.quote_found,
                                 "support": round(c.support, 4), "supported": c.supported} for c in self.checks],
            "quarantined": [q.to_json() for q in self.quarantined],
            "tools": self.tools.to_json() if self.tools is not None else None,
            "steps": [{"name": name, "ms": round(ms, 3)} for name, ms in self.steps],
            "resolution": self.resolution.to_json() if self.resolution is not None else None,
        }


def _attempt_json(a) -> dict:
    return {"attempt": a.attempt, "generator": a.generator, "status": a.status,
            "violations": [{"code": v.code, "message": v.message, "source_id": v.source_id} for v in a.violations],
            "usage": {"prompt_tokens": a.usage.prompt_tokens, "completion_tokens": a.usage.completion_tokens},
            "generation_s": round(a.generation_s, 4), "validation_s": round(a.validation_s, 4),
            "transport_retries": a.transport_retries, "finish_reason": a.finish_reason,
            "request_sha256": a.request_sha256}


@dataclass(frozen=True)
class AnswerResult:
    """``answered`` carries validated citations resolved from the source map and a ``reason``
    (``validated``, or ``validated_fallback`` when the fallback generator answered after every
    attempt of the configured one failed validation); ``insufficient_evidence`` carries none, a
    ``reason`` (gate reasons, ``no_context``, ``model_abstained``, ``validation_failed``) and, as
    ``answer``, the configured abstention message in the question's language
    (``generation.abstention_messages``). ``superseded`` lists retrieved versions that the version
    policy set aside (the rule changed since), answered or not."""

    question: str
    status: Status
    answer: str
    citations: tuple[ResolvedCitation, ...] = ()
    reason: str = ""
    trace: AnswerTrace | None = field(default=None, compare=False)
    superseded: tuple[SupersededVersion, ...] = ()
    # what a follow-up was resolved to and why (``question`` stays as asked); None when the question
    # came without history or resolution is off
    resolution: Resolution | None = None
    # cited documents whose source file changed or disappeared since it was indexed (answered only)
    warnings: tuple[SourceWarning, ...] = ()

    def to_json(self) -> dict:
        return {
            "question": self.question,
            "resolution": self.resolution.to_json() if self.resolution is not None else None,
            "status": self.status,
            "answer": self.answer,
            "citations": [{**c.__dict__, "where": c.where} for c in self.citations],
            "reason": self.reason,
            "superseded": [v.to_json() for v in self.superseded],
            "warnings": [w.to_json() for w in self.warnings],
            "trace": self.trace.to_json() if self.trace is not None else None,
        }

    def as_turn(self) -> Turn:
        """This answer as the history's assistant turn of the next question, carrying its citations
        (a follow-up's search adds what they cite: ``conversation.earlier_evidence``)."""
        return Turn("assistant", self.answer, tuple(dict.fromkeys(c.evidence_id for c in self.citations)))

    def dumps(self) -> str:
        return json.dumps(self.to_json(), ensure_ascii=False)
