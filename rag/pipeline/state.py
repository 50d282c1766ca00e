"""The request and its state as it passes the steps; what ``retrieve`` and ``astream`` hand out."""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import TYPE_CHECKING, Sequence

from rag.access.model import Principal, ReaderScope
from rag.context.builder import DroppedEvidence, Evidence
from rag.context.prompt import Prompt
from rag.context.sanitize import QuarantinedEvidence
from rag.rerank.cross_encoder import RerankResult
from rag.rerank.gate import GateDecision
from rag.retrieval.versions import SupersededVersion
from rag.types import Candidate, Ordering, SearchFilter, SearchResult, Turn

if TYPE_CHECKING:
    from rag.answer.loop import AnswerOutcome
    from rag.conversation import Resolution
    from rag.result import AnswerResult
    from rag.tools import Selection, ToolEvidence, ToolLoop, ToolPhase, ToolRegistry, ToolTrace


@dataclass(frozen=True)
class Request:
    """What the caller asked: the (checked) question and the options of one request."""

    question: str
    history: Sequence[Turn] = ()
    where: SearchFilter | None = None  # restricts retrieval to some documents and/or versions
    top_k: int | None = None  # how many fused candidates (default ``retrieval.candidates``)
    ordering: Ordering | None = None  # overrides ``context.ordering``
    tools: "ToolRegistry | None" = None  # the tool phase runs only with a registry
    principal: Principal | None = None  # who asks (None: anonymous, reads public documents only)


@dataclass(frozen=True)
class StepRecord:
    """One step that ran, and how long it took."""

    name: str
    ms: float


@dataclass(frozen=True)
class ToolsState:
    """The tool phase so far: the selected tools, the loop, the prompt it starts from, then its
    calls and which results were withheld as suspected injections."""

    selection: "Selection"
    loop: "ToolLoop"
    base: Prompt
    phase: "ToolPhase | None" = None
    live: tuple["ToolEvidence", ...] = ()
    withheld: tuple[DroppedEvidence, ...] = ()
    trace: "ToolTrace | None" = None


@dataclass(frozen=True)
class State:
    """Everything the steps know about one request; each step returns a new one."""

    request: Request
    t0: float  # perf_counter at the start of the request
    scope: ReaderScope | None = None  # what the principal may read (set by ``search``, used by every step after)
    resolution: "Resolution | None" = None  # the follow-up resolved into a standalone question (``resolve``)
    search: SearchResult | None = None  # the fused candidates as retrieved
    eligible: tuple[Candidate, ...] = ()  # after the version policy (then the quarantine)
    superseded: tuple[SupersededVersion, ...] = ()
    quarantined: tuple[QuarantinedEvidence, ...] = ()
    searched: SearchResult | None = None  # ``search`` restricted to the eligible candidates
    rerank: RerankResult | None = None
    candidates: tuple[Candidate, ...] = ()  # the final order (reranked when the reranker applied)
    decision: GateDecision | None = None
    tools: ToolsState | None = None
    prompt: Prompt | None = None
    outcome: "AnswerOutcome | None" = None
    stopped: str = ""  # the name of the step that ended the request early (an abstention)
    records: tuple[StepRecord, ...] = ()

    def with_(self, **changes) -> "State":
        return dataclasses.replace(self, **changes)

    def recorded(self, step: str, ms: float) -> "State":
        return dataclasses.replace(self, records=self.records + (StepRecord(step, ms),))

    def step_ms(self, step: str) -> float | None:
        """How long ``step`` took, or None when it did not run."""
        return next((r.ms for r in self.records if r.name == step), None)

    @property
    def gate_open(self) -> bool:
        """Whether the documents may be answered from (no gate ran: yes, e.g. ``build_prompt``)."""
        return self.decision is None or self.decision.answer

    def set_aside(self) -> list[DroppedEvidence]:
        """What the version policy and the quarantine dropped, as manifest entries."""
        return set_aside_entries(self.superseded, self.quarantined)

    def evidence(self) -> list[Evidence]:
        """Candidates for the context builder, scored by their final (reranked) order."""
        return evidence_of(self.rerank, self.candidates)

    def retrieved(self) -> "Retrieved":
        assert self.searched is not None and self.decision is not None, "retrieval has not run"
        return Retrieved(self.searched, self.rerank, self.candidates, self.decision, self.superseded,
                         self.quarantined)


def set_aside_entries(superseded: Sequence[SupersededVersion],
                      quarantined: Sequence[QuarantinedEvidence]) -> list[DroppedEvidence]:
    """Manifest entries for what the version policy and the quarantine dropped before the context builder."""
    out = [DroppedEvidence(eid, "superseded", f"{v.document_id} {v.version} superseded by {v.current_version}")
           for v in superseded for eid in v.evidence_ids]
    out += [DroppedEvidence(q.evidence_id, "suspected_injection", f"{q.scope}: {', '.join(q.signals)}")
            for q in quarantined]
    return out


@dataclass(frozen=True)
class Retrieved:
    """What :meth:`Pipeline.retrieve` found: the search, the rerank, the final order and the gate decision."""

    search: SearchResult  # candidates after the version policy and the quarantine
    rerank: RerankResult | None
    candidates: tuple[Candidate, ...]
    decision: GateDecision
    superseded: tuple[SupersededVersion, ...] = ()
    quarantined: tuple[QuarantinedEvidence, ...] = ()

    def set_aside(self) -> list[DroppedEvidence]:
        """What the version policy and the quarantine dropped, as manifest entries."""
        return set_aside_entries(self.superseded, self.quarantined)

    def evidence(self) -> list[Evidence]:
        """Candidates for the context builder, scored by their final (reranked) order."""
        return evidence_of(self.rerank, self.candidates)


def evidence_of(rerank: RerankResult | None, candidates: Sequence[Candidate]) -> list[Evidence]:
    """The context builder's input: the reranked order and scores when the reranker applied, else
    the candidates with their fused scores."""
    if rerank is not None and rerank.applied:
        return [Evidence.from_candidate(rc.candidate, rc.score) for rc in rerank.candidates]
    return [Evidence.from_candidate(c) for c in candidates]


@dataclass(frozen=True)
class Searched:
    """:meth:`Pipeline.astream`: the fused candidates (after any ``where`` filter), before rerank."""

    search: SearchResult


@dataclass(frozen=True)
class Gated:
    """:meth:`Pipeline.astream`: rerank done and the gate decided (``retrieved.decision``)."""

    retrieved: Retrieved


@dataclass(frozen=True)
class Answered:
    """:meth:`Pipeline.astream`: the final, validated result (answered or abstained)."""

    result: "AnswerResult"


StageEvent = Searched | Gated | Answered
