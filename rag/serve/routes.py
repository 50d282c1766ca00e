"""The routes of ``rag serve``: each a thin mapping of one typed request body onto :class:`Service`
and the library (docs/service.md documents each one). The service comes from ``app.state``; bodies
are read and validated by :mod:`rag.serve.bodies`."""
from fastapi import APIRouter, Depends, Request
from fastapi.responses import JSONResponse, Response
from pydantic import ValidationError

from rag.config import RagConfig
from rag.errors import InputError, QuestionTooLongError
from rag.serve.answering import answer_events, answer_once, bounded, result_json, version_header
from rag.access import Principal as Reader
from rag.serve.bodies import DocumentsBody, JsonBody, read_as, validation_message
from rag.serve.errors import ServiceError, from_library
from rag.serve.openai_compat import completion, question_and_history, stream_chunks
from rag.serve.principals import require
from rag.serve.schemas import AnswerRequest, ChatRequest, ContextRequest, DocumentsRequest, SearchRequest
from rag.serve.service import Service
from rag.serve.sse import sse_response

router = APIRouter()


async def service(request: Request) -> Service:
    """The app's :class:`Service` (a dependency)."""
    return request.app.state.service


def asker(request: Request, svc: Service) -> Reader | None:
    """The principal the request reads as (set while its body was read); refused when
    ``security.require_principal`` is set and it is anonymous."""
    reader = getattr(request.state, "reader", None)
    try:
        require(reader, svc.config.security)
    except ServiceError as exc:
        svc.metrics.rejected.labels(exc.code).inc()
        raise
    return reader


def check_question(question: str, history_turns: int, config: RagConfig) -> None:
    """The question limit of every entry point (``limits.max_question_chars``) and the history limit of
    ``serve`` (413), before the request waits for a slot."""
    try:
        config.limits.check_question(question)
    except QuestionTooLongError as exc:
        raise from_library(exc) from None
    s = config.serve
    if history_turns > s.max_history_turns:
        raise ServiceError("payload_too_large", f"{history_turns} history turns; the limit is {s.max_history_turns}")


# -- operations ------------------------------------------------------------------------------
@router.get("/healthz")
async def healthz():
    return {"status": "ok"}


@router.get("/readyz")
async def readyz(svc: Service = Depends(service)):
    st = svc.status()
    return JSONResponse(st, status_code=200 if st["ready"] else 503)


@router.get("/metrics")
async def metrics(svc: Service = Depends(service)):
    body, ctype = svc.metrics.render()
    return Response(body, media_type=ctype)


def checked_filters(svc: Service, req: AnswerRequest) -> None:
    """A bad filter as a 400 before a stream starts (once it has, errors go in-band)."""
    try:
        req.where(svc.config.retrieval.filter_fields)
    except InputError as exc:
        raise from_library(exc) from None


# -- questions -------------------------------------------------------------------------------
@router.post("/v1/answer")
async def answer(request: Request, req: AnswerRequest = Depends(JsonBody(AnswerRequest)),
                 svc: Service = Depends(service)):
    s = svc.settings
    who = asker(request, svc)
    check_question(req.question, len(req.history), svc.config)
    with_trace = s.trace if req.trace is None else req.trace
    if req.stream:
        svc.require_ready()  # a real 503 before the stream starts
        checked_filters(svc, req)  # and a real 400 for a bad filter
        return await sse_response(svc, answer_events(svc, req, with_trace, who))
    served = await bounded(svc, answer_once(svc, req, who))
    return JSONResponse(result_json(served, with_trace), headers=version_header(served))


@router.post("/v1/search")
async def search(request: Request, req: SearchRequest = Depends(JsonBody(SearchRequest)),
                 svc: Service = Depends(service)):
    who = asker(request, svc)
    check_question(req.query, 0, svc.config)

    async def work():
        p = svc.pinned()
        where = req.filters.to_filter(p.config.retrieval.filter_fields) if req.filters else None
        res = await svc.run(p.search, req.query, req.top, where, principal=who)
        return {"query": res.query, "config_hash": p.config.hash, "index_version": p.index.version_name,
                "timings_ms": {k: round(v, 3) for k, v in res.timings_ms.items()},
                "candidates": [c.to_json() for c in res.candidates[:req.top]]}

    return await bounded(svc, work())


@router.post("/v1/context")
async def context(request: Request, req: ContextRequest = Depends(JsonBody(ContextRequest)),
                  svc: Service = Depends(service)):
    who = asker(request, svc)
    check_question(req.question, len(req.history), svc.config)

    async def work():
        p = svc.pinned()
        where = req.where(p.config.retrieval.filter_fields)
        _, prompt = await svc.run(p.build_prompt, req.question, req.turns(), where=where, top_k=req.top_k,
                                  ordering=req.ordering, principal=who)
        out = {"question": req.question, "config_hash": p.config.hash, "index_version": p.index.version_name,
               "manifest": prompt.manifest.to_json()}
        if req.show_prompt:
            out["messages"] = prompt.to_openai()
        return out

    return await bounded(svc, work())


@router.post("/v1/chat/completions")
async def chat(request: Request, req: ChatRequest = Depends(JsonBody(ChatRequest)), svc: Service = Depends(service)):
    s = svc.settings
    who = asker(request, svc)
    question, history = question_and_history(req)
    check_question(question, len(history), svc.config)
    ext = req.rag
    try:
        ask = AnswerRequest(question=question, history=history, filters=ext.filters() if ext is not None else None,
                            previous_citations=ext.previous_citations if ext is not None else ())
    except ValidationError as exc:  # previous citations without an assistant message
        raise ServiceError("invalid_request", validation_message(exc.errors())) from None
    if req.stream:
        svc.require_ready()
        checked_filters(svc, ask)
        return await sse_response(svc, stream_chunks(lambda: answer_once(svc, ask, who), s.model_name),
                                  openai=True)
    served = await bounded(svc, answer_once(svc, ask, who))
    return JSONResponse(completion(served, s.model_name), headers=version_header(served))


# -- documents -------------------------------------------------------------------------------
@router.get("/v1/documents")
async def list_documents(request: Request, svc: Service = Depends(service)):
    read_as(request, b"")  # a GET: the signature covers an empty body
    who = asker(request, svc)
    svc.require_ready()
    p = svc.pipeline.pinned()
    docs = p.documents(principal=who)  # only the documents the caller may read (rag.pipeline.listing)
    return {"index_version": p.index.version_name, "documents": [d.to_json() for d in docs]}


@router.post("/v1/documents")
async def add_documents(req: DocumentsRequest = Depends(DocumentsBody()), svc: Service = Depends(service)):
    docs = [d.to_document() for d in req.documents]
    try:
        change = await svc.add(docs, replace=req.mode == "replace")
    except Exception as exc:
        raise from_library(exc) from None
    return change.to_json()


@router.delete("/v1/documents/{doc_id}")
async def delete_document(request: Request, doc_id: str, version: str | None = None,
                          svc: Service = Depends(service)):
    read_as(request, b"")  # principal headers are checked (and refused from a key that may not send them)
    svc.require_ready()
    if not svc.has_document(doc_id, version):
        what = f"document {doc_id!r}" + (f" version {version!r}" if version else "")
        raise ServiceError("not_found", f"{what} is not in the index")
    try:
        change = await svc.delete(doc_id, version)
    except InputError as exc:  # deleted by another request meanwhile
        raise ServiceError("not_found", str(exc)) from None
    return change.to_json()
