"""The steps of the request path, one function per stage, and their order (:data:`STEPS`).

Each step reads the request state and the components and returns a new state; none builds a
component itself (they come from :class:`rag.pipeline.components.Components`). A step that ends
the request early sets ``stopped``: the gate when it closes (and no tool phase may still bring
evidence), the tool phase when neither the documents nor the tools gave any. The generator runs
only in the last step, so it is never called after a closed gate, and nothing it wrote leaves
the pipeline before the validator passed it (``generate_answer`` returns only validated answers).

Adding a stage is one function here and one entry in :data:`STEPS` (docs/architecture.md).
"""
from __future__ import annotations

import asyncio
import dataclasses
import logging

from rag.answer.loop import agenerate_answer, generate_answer
from rag.context.builder import DroppedEvidence
from rag.context.sanitize import injection_signals, quarantine
from rag.context.screen import is_trusted
from rag.pipeline.components import Components
from rag.pipeline.runner import Step
from rag.pipeline.state import State, ToolsState
from rag.rerank.cross_encoder import reranked_candidates
from rag.retrieval.versions import filter_versions
from rag.lang import detect_language
from rag.types import SearchResult

logger = logging.getLogger(__name__)


def resolve(s: State, c: Components) -> State:
    """A follow-up resolved into a question that stands alone (``conversation.resolve``): every later
    step (retrieval, the gate, the prompt, the generator, the validator) runs on it; the result
    keeps the question as asked and says what it became."""
    r = s.request
    resolver = c.resolver if r.history else None
    if resolver is None:
        return s
    res = resolver.resolve(r.question, r.history)
    if res.changed:
        logger.info("conversation: follow-up resolved by %s (%s)", res.method, res.reason)
    return s.with_(resolution=res, request=dataclasses.replace(r, question=res.question))


async def aresolve(s: State, c: Components) -> State:
    return await asyncio.to_thread(resolve, s, c)


def search(s: State, c: Components) -> State:
    """The principal's scope, then BM25 + dense top-k within it (and within the request's ``where``),
    fused. A search the caller hands in is cut to what the principal may read."""
    r = s.request
    scope = c.reader_scope(r.principal)
    if s.search is not None:
        return s.with_(scope=scope, search=c.readable(s.search, scope))
    earlier = c.earlier_evidence(r.history) if _is_followup(s) else None
    if earlier:
        logger.info("conversation: the follow-up's search adds what the previous answer cited (%d id(s), %d "
                    "article(s))", len(earlier.evidence_ids), len(earlier.articles))
    return s.with_(scope=scope, search=c.retriever.search(r.question, r.top_k, r.where, principal=r.principal,
                                                          earlier=earlier or None))


def _is_followup(s: State) -> bool:
    """The question leaned on the earlier turns (the resolver found it does not stand alone)."""
    return s.resolution is not None and not s.resolution.standalone


def versions(s: State, c: Components) -> State:
    """Set aside other versions than the policy allows (``retrieval.versions``), deciding among the
    versions the principal may read (a newer one it may not read is never revealed); a ``where``
    that names versions replaces the policy."""
    where = s.request.where
    if where is not None and where.versions:  # the caller chose the versions: no policy on top
        return s.with_(eligible=tuple(s.search.candidates), superseded=())
    eligible, superseded = filter_versions(s.search.candidates, c.allowed_versions(s.scope))
    return s.with_(eligible=eligible, superseded=superseded)


def quarantine_step(s: State, c: Components) -> State:
    """Withhold evidence that carries an injection attempt (``security.quarantine``), except from
    documents an operator trusts (``security.trusted_documents``, manifest ``trusted: true``)."""
    security = c.config.security
    records = c.index.documents

    def trusted(doc_id: str, version: str) -> bool:
        rec = records.get((doc_id, version))
        return is_trusted(doc_id, rec.meta if rec is not None else None, security.trusted_documents)

    eligible, quarantined = quarantine(s.eligible, security.quarantine, c.document_texts, trusted)
    searched = s.search
    if s.superseded or quarantined:
        logger.info("set aside: %d superseded version(s), %d quarantined candidate(s)", len(s.superseded),
                    len(quarantined))
        searched = SearchResult(searched.query, eligible, searched.timings_ms)
    return s.with_(eligible=eligible, quarantined=quarantined, searched=searched, candidates=searched.candidates)


def rerank(s: State, c: Components) -> State:
    """Cross-encoder rerank of the eligible candidates (when ``rerank.enabled``)."""
    reranker = c.reranker
    if reranker is None:
        return s
    rr = reranker.rerank(s.request.question, s.searched.candidates)
    return s.with_(rerank=rr, candidates=reranked_candidates(rr) if rr.applied else s.candidates)


def gate(s: State, c: Components) -> State:
    """Decide whether the evidence is good enough to answer; a closed gate ends the request unless
    a tool phase may still bring live data."""
    rr = s.rerank
    language = rr.language if rr is not None else detect_language(s.request.question)
    res = s.resolution
    followup = res.asked if res is not None and res.changed else None
    decision = c.gate.decide(s.searched.candidates, rr, language=language, question=s.request.question,
                             followup=followup)
    stopped = "gate" if not decision.answer and s.request.tools is None else ""
    return s.with_(decision=decision, stopped=stopped)


def tools_select(s: State, c: Components) -> State:
    """The tool phase, 1: select the tools for the question and the prompt the model starts from
    (a no-op without a tool registry)."""
    r = s.request
    if r.tools is None:
        return s
    selection = c.tool_selector(r.tools).select(r.question, None)
    loop = c.tool_loop(r.tools)
    docs = s.evidence() if s.gate_open else []
    # The documents leave room for what the tool phase adds: the definitions and the calls' results.
    reserve = loop.definition_tokens(selection) + c.config.tools.phase_reserve if loop.offered(selection) else 0
    base = c.prompt_builder.build(r.question, docs, r.history, set_aside=s.set_aside(), tools_reserve=reserve,
                                  tools=selected_tools(r.tools, selection))
    return s.with_(tools=ToolsState(selection, loop, base))


def tools_call(s: State, c: Components) -> State:
    """The tool phase, 2: the model calls the selected tools (waits on the model and the tools)."""
    t = s.tools
    if t is None:
        return s
    phase = t.loop.run(t.base.messages, t.selection, s.request.principal)
    return s.with_(tools=dataclasses.replace(t, phase=phase))


async def atools_call(s: State, c: Components) -> State:
    from rag.tools import TOOL_PHASE_THREADS

    t = s.tools
    if t is None:
        return s
    phase = await asyncio.get_running_loop().run_in_executor(TOOL_PHASE_THREADS, t.loop.run, t.base.messages,
                                                             t.selection, s.request.principal)
    return s.with_(tools=dataclasses.replace(t, phase=phase))


def tools_screen(s: State, c: Components) -> State:
    """The tool phase, 3: withhold tool results that carry an injection; end the request when
    neither the documents (closed gate) nor the tools gave evidence."""
    from rag.tools import ToolTrace, evidence_ids

    t = s.tools
    if t is None:
        return s
    # Results the loop withheld before the model read them, then (the evidence keeps more of a
    # result than the model may have read) any evidence block that carries an injection.
    withheld = [DroppedEvidence(eid, "suspected_injection", f"tool result: {r.message}")
                for r, eid in zip(t.phase.calls, evidence_ids(t.phase.calls)) if r.status == "withheld"]
    live = []
    for te in t.phase.evidence:
        signals = injection_signals(te.evidence.text) if c.config.security.quarantine != "off" else ()
        if signals:
            withheld.append(DroppedEvidence(te.evidence.evidence_id, "suspected_injection",
                                            "tool result: " + ", ".join(sorted({x.kind for x in signals}))))
        else:
            live.append(te)
    trace = ToolTrace(t.selection, t.phase, tuple(d.evidence_id for d in withheld))
    t = dataclasses.replace(t, live=tuple(live), withheld=tuple(withheld), trace=trace)
    return s.with_(tools=t, stopped="" if s.gate_open or live else "tools")


def prompt(s: State, c: Components) -> State:
    """The budgeted prompt: the documents' evidence (when the gate is open) and any live tool data."""
    r = s.request
    docs = s.evidence() if s.gate_open else []
    set_aside = s.set_aside()
    tools: tuple[tuple[str, str], ...] = ()
    if s.tools is not None:
        docs = [*docs, *(te.evidence for te in s.tools.live)]
        set_aside = set_aside + list(s.tools.withheld)
        tools = selected_tools(r.tools, s.tools.selection)
    return s.with_(prompt=c.builder_for(r.ordering).build(r.question, docs, r.history, set_aside=set_aside,
                                                          tools=tools))


def selected_tools(registry, selection) -> tuple[tuple[str, str], ...]:
    """(name, description) of the selected tools, as the guideline match reads them."""
    return tuple((n, registry.get(n).description) for n in selection.names)


def generate(s: State, c: Components) -> State:
    """Generate and validate with bounded regeneration (then the fallback generator, when every
    attempt failed); only a validated answer comes out."""
    out = generate_answer(s.prompt, c.generator, c.validator, c.config.generation, question=s.request.question,
                          fallback=c.fallback_generator)
    return s.with_(outcome=out)


async def agenerate(s: State, c: Components) -> State:
    out = await agenerate_answer(s.prompt, c.generator, c.validator, c.config.generation,
                                 question=s.request.question, fallback=c.fallback_generator)
    return s.with_(outcome=out)


# The request path, in order. ``retrieve`` runs search → gate, ``build_prompt`` resolve → search →
# quarantine and prompt, ``answer`` / ``aanswer`` / ``astream`` all of them.
STEPS: tuple[Step, ...] = (
    Step("resolve", "io", resolve, aresolve),
    Step("search", "cpu", search),
    Step("versions", "cpu", versions),
    Step("quarantine", "cpu", quarantine_step),
    Step("rerank", "cpu", rerank),
    Step("gate", "cpu", gate),
    Step("tools_select", "cpu", tools_select),
    Step("tools_call", "io", tools_call, atools_call),
    Step("tools_screen", "cpu", tools_screen),
    Step("prompt", "cpu", prompt),
    Step("generate", "io", generate, agenerate),
)
