"""The result and its trace, assembled from the final request state and its step records."""
from __future__ import annotations

import dataclasses
import time
from collections.abc import Sequence

from rag.pipeline.components import Components
from rag.pipeline.freshness import source_warnings
from rag.pipeline.state import State
from rag.result import AnswerResult, AnswerTrace, CandidateTrace
from rag.lang import OTHER, detect_language, profile


# Said after an answer, in the question's language, when every source it quotes is in the other one.
# (rag.lang profiles: ``sources_note``, keyed by the sources' language)


def source_language_note(question: str, quotes: Sequence[str]) -> str:
    """The note for an answer to ``question`` quoting ``quotes`` ("" when the question's language
    is among the quotes' or a language pair has no note). Added by the server after validation,
    like the abstention message: it cites nothing and claims nothing about the content."""
    langs = {detect_language(x) for x in quotes} - {OTHER}
    if len(langs) != 1:
        return ""
    asked = profile(detect_language(question))
    return asked.sources_note.get(langs.pop(), "") if asked is not None else ""


def timings(s: State) -> dict[str, float]:
    """Per-stage milliseconds: the retrievers' own (bm25, embed_query, dense, fusion), then the
    rerank, the prompt (``context``), generation and validation, and the total so far (:func:`finished` adds
    ``result`` and ``unnamed`` and the final total; the trace's ``steps`` has every step of the request)."""
    out = dict(s.searched.timings_ms)
    rr = s.rerank
    if rr is not None:
        out["rerank"] = rr.timings_ms.get("rerank_total", 0.0)
    if s.prompt is not None:
        out["context"] = s.step_ms("prompt") or 0.0
    attempts = s.outcome.attempts if s.outcome is not None else ()
    if attempts:
        out["generation"] = sum(a.generation_s for a in attempts) * 1e3
        out["validation"] = sum(a.validation_s for a in attempts) * 1e3
    out["total"] = (time.perf_counter() - s.t0) * 1e3
    return out


def answer_trace(s: State, c: Components) -> AnswerTrace:
    rr, outcome = s.rerank, s.outcome
    by_id = {rc.evidence_id: rc for rc in rr.candidates} if rr is not None else {}
    cands = tuple(CandidateTrace(x.chunk.evidence_id, i + 1, float(x.score),
                                 rc.probability if (rc := by_id.get(x.chunk.evidence_id)) else None,
                                 rc.truncated if rc else False)
                  for i, x in enumerate(s.candidates[:10]))
    attempts = outcome.attempts if outcome is not None else ()
    model_ids = {"embedding": c.embedder.model_id}
    if rr is not None:
        model_ids["reranker"] = rr.model_id
    if outcome is not None:
        model_ids["generator"] = attempts[0].generator if attempts else type(c.generator).__name__
    return AnswerTrace(
        timings(s), s.decision, bool(rr and rr.applied), rr.reason if rr is not None else "disabled", cands,
        tuple((e.evidence_id, e.reason) for e in (rr.excluded if rr else ())),
        s.prompt.manifest if s.prompt is not None else None, attempts,
        sum(a.usage.prompt_tokens for a in attempts), sum(a.usage.completion_tokens for a in attempts),
        c.config.hash, model_ids,
        outcome.report.citations if outcome is not None and outcome.report is not None else (),
        s.quarantined, s.tools.trace if s.tools is not None else None,
        tuple((r.name, r.ms) for r in s.records), s.resolution)


def result(s: State, c: Components) -> AnswerResult:
    """The answer (validated) or the abstention, with the configured message in the question's language; its
    trace names every millisecond of the request (:func:`finished`)."""
    t = time.perf_counter()
    return finished(_assemble(s, c), s, t)


def finished(r: AnswerResult, s: State, t_result: float) -> AnswerResult:
    """``r`` with its trace completed once the result is assembled: ``result`` (the assembly since ``t_result``)
    is a step and a timing, ``total`` runs to now, and ``unnamed`` is the part of the total no step recorded
    (the runner between steps; about nothing when every step is named)."""
    if r.trace is None:
        return r
    now = time.perf_counter()
    result_ms = (now - t_result) * 1e3
    steps = r.trace.steps + (("result", result_ms),)
    total = (now - s.t0) * 1e3
    timing = {**r.trace.timings_ms, "result": result_ms, "total": total,
              "unnamed": max(0.0, total - sum(ms for _, ms in steps))}
    return dataclasses.replace(r, trace=dataclasses.replace(r.trace, timings_ms=timing, steps=steps))


def _assemble(s: State, c: Components) -> AnswerResult:
    q = s.resolution.asked if s.resolution is not None else s.request.question
    trace = answer_trace(s, c)
    abstain = c.config.generation.abstention_message(detect_language(q))
    outcome = s.outcome
    if outcome is None:
        return AnswerResult(q, "insufficient_evidence", abstain, (), s.decision.reason, trace, s.superseded,
                            s.resolution)
    answer = outcome.answer if outcome.status == "answered" else abstain
    note = source_language_note(q, [c.quote for c in outcome.citations]) if outcome.status == "answered" else ""
    if note:
        answer = f"{answer}\n{note}"
    warnings = source_warnings(outcome.citations, c.index.documents) if outcome.status == "answered" else ()
    return AnswerResult(q, outcome.status, answer, outcome.citations, outcome.reason, trace, s.superseded,
                        s.resolution, warnings)
