"""How one question runs in ``rag serve``: admission and the request timeout (:func:`bounded`), one
answer with or without tools (:func:`answer_once`), its JSON, and the events of ``stream: true``."""
from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator, Coroutine
from typing import Any, TypeVar

from rag.access import Principal as Reader
from rag.errors import InputError
from rag.serve.errors import ServiceError, from_library
from rag.serve.schemas import AnswerRequest
from rag.serve.service import Served, Service

logger = logging.getLogger(__name__)
T = TypeVar("T")


async def bounded(svc: Service, work: Coroutine[Any, Any, T]) -> T:
    """Admission and the request timeout (queue time included) around one coroutine."""
    async def admitted():
        async with svc.slot():
            return await work

    try:
        return await asyncio.wait_for(admitted(), svc.settings.request_timeout_s)
    except asyncio.TimeoutError:
        svc.metrics.rejected.labels("timeout").inc()
        raise ServiceError("timeout", f"the request took longer than {svc.settings.request_timeout_s:g} s") from None
    except ServiceError:
        raise
    except Exception as exc:
        if not isinstance(exc, (InputError,)):
            logger.exception("request failed")
        raise from_library(exc) from None
    finally:
        work.close()  # never started when admission refused it: no "never awaited" warning


def use_tools(svc: Service, req: AnswerRequest) -> bool:
    """Whether this answer calls the server's tools (``tools: true`` on a server without tools is refused)."""
    if req.tools and svc.tools is None:
        raise ServiceError("invalid_input", "this server has no tools; leave out \"tools\" or set it to false")
    return svc.tools is not None and req.tools is not False


async def answer_once(svc: Service, req: AnswerRequest, who: Reader | None = None) -> Served:
    """The validated answer on the pinned pipeline for ``who`` (None: anonymous), counted in the metrics."""
    p = svc.pinned()
    tools = svc.tools if use_tools(svc, req) else None
    where = req.where(p.config.retrieval.filter_fields)
    result = await p.aanswer(req.question, req.turns(), where=where, top_k=req.top_k, ordering=req.ordering,
                             tools=tools, principal=who)
    svc.metrics.observe_answer(result)
    return Served(result, p.index.version_name)


def version_header(served: Served) -> dict[str, str]:
    return {"X-Rag-Index-Version": served.index_version} if served.index_version else {}


def result_json(served: Served, with_trace: bool) -> dict:
    """The body of a non-streamed ``/v1/answer``."""
    out = served.result.to_json()
    if not with_trace:
        out["trace"] = None
    out["index_version"] = served.index_version
    return out


async def answer_events(svc: Service, req: AnswerRequest, with_trace: bool,
                        who: Reader | None = None) -> AsyncIterator[tuple[str, dict]]:
    """(event, data) for ``stream: true``: retrieval, gate, then answer (validated) and done."""
    from rag.pipeline import Answered, Gated, Searched

    if use_tools(svc, req):  # the tool phase is one step: its selection and calls, then the answer
        served = await answer_once(svc, req, who)
        out = served.result.to_json()
        trace = out.pop("trace")
        yield "tools", (trace or {}).get("tools") or {}
        out["index_version"] = served.index_version
        yield "answer", out
        yield "done", {"trace": trace if with_trace else None}
        return
    p = svc.pinned()
    where = req.where(p.config.retrieval.filter_fields)
    async for ev in p.astream(req.question, req.turns(), where=where, top_k=req.top_k, ordering=req.ordering,
                              principal=who):
        if isinstance(ev, Searched):
            yield "retrieval", {"index_version": p.index.version_name,
                                "timings_ms": {k: round(v, 3) for k, v in ev.search.timings_ms.items()},
                                "candidates": [{"rank": c.rank, "evidence_id": c.chunk.evidence_id,
                                                "document_id": c.chunk.document_id, "score": round(c.score, 6)}
                                               for c in ev.search.candidates[:10]]}
        elif isinstance(ev, Gated):
            r = ev.retrieved
            yield "gate", {"decision": r.decision.to_json(), "rerank_applied": bool(r.rerank and r.rerank.applied)}
        elif isinstance(ev, Answered):
            svc.metrics.observe_answer(ev.result)
            out = ev.result.to_json()
            trace = out.pop("trace")
            out["index_version"] = p.index.version_name
            yield "answer", out
            yield "done", {"trace": trace if with_trace else None}

