"""The HTTP app of ``rag serve`` (FastAPI). Every route is a thin mapping onto :class:`Service` and the
library; docs/service.md documents each one."""

import asyncio
import contextlib
import json
import logging
import os
import time
import uuid
from typing import AsyncIterator

from pydantic import BaseModel, ValidationError

from rag.config import RagConfig, load_config
from rag.errors import InputError
from rag.serve import openai_compat
from rag.serve.errors import ServiceError, from_library
from rag.serve.logs import request_id
from rag.serve.schemas import AnswerRequest, ChatRequest, ContextRequest, DocumentsRequest, SearchRequest
from rag.serve.service import Served, Service

logger = logging.getLogger(__name__)

CONFIG_ENV = "RAG_SERVE_CONFIG"  # how `rag serve --workers N` hands the config to each worker process
OVERRIDES_ENV = "RAG_SERVE_OVERRIDES"  # JSON object of dotted config overrides (--set, --host...)
ADMIN_ROUTES = ("/v1/documents",)
OPEN_ROUTES = ("/healthz", "/readyz", "/metrics")


def app_from_env():
    """The app factory each uvicorn worker process calls (``rag serve --workers N``)."""
    cfg = load_config(os.environ[CONFIG_ENV])
    overrides = json.loads(os.environ.get(OVERRIDES_ENV) or "{}")
    return create_app(cfg.with_overrides(overrides) if overrides else cfg)


def create_app(config: RagConfig, service: Service | None = None, tools=None):
    """The FastAPI app serving ``config``. Models and the index load at start-up, on the compute
    thread; until then ``/readyz`` answers 503 and question routes ``not_ready``. ``tools``: a
    :class:`rag.tools.ToolRegistry` with its functions bound, for answers from live data."""
    from fastapi import FastAPI, Request
    from fastapi.exceptions import RequestValidationError
    from fastapi.responses import JSONResponse, Response, StreamingResponse
    from starlette.exceptions import HTTPException as StarletteHTTPException

    svc = service or Service(config, tools=tools)
    s = svc.settings

    @contextlib.asynccontextmanager
    async def lifespan(app):
        loop = asyncio.get_running_loop()
        # The pipeline's own asyncio.to_thread calls (Pipeline.astream) go to the compute thread too.
        loop.set_default_executor(svc.compute)
        starting = loop.run_in_executor(svc.compute, svc.start)
        starting.add_done_callback(lambda f: f.exception())  # logged by Service.start; keep serving /healthz
        try:
            yield
        finally:
            svc.close()

    app = FastAPI(title="rag", version=_version(), lifespan=lifespan, docs_url=None, redoc_url=None,
                  openapi_url="/openapi.json")
    app.state.service = svc
    if s.cors_origins:
        from fastapi.middleware.cors import CORSMiddleware

        app.add_middleware(CORSMiddleware, allow_origins=list(s.cors_origins), allow_methods=["GET", "POST", "DELETE"],
                           allow_headers=["Authorization", "Content-Type", "X-Request-ID"])

    @app.middleware("http")
    async def frame(request: Request, call_next):
        rid = _request_id(request.headers.get("x-request-id"))
        token = request_id.set(rid)
        t0 = time.perf_counter()
        status = 500
        try:
            path = request.url.path
            if path not in OPEN_ROUTES:
                need = "admin" if path.startswith(ADMIN_ROUTES) and request.method != "GET" else "query"
                try:
                    svc.keys.check(request.headers.get("authorization"), need)
                except ServiceError as exc:
                    svc.metrics.rejected.labels(exc.code).inc()
                    response = _error_response(exc, rid)
                    status = response.status_code
                    return response
            response = await call_next(request)
            status = response.status_code
            response.headers["X-Request-ID"] = rid
            return response
        finally:
            elapsed = time.perf_counter() - t0
            route = request.scope.get("route")
            endpoint = getattr(route, "path", "unmatched")
            svc.metrics.requests.labels(endpoint, str(status)).inc()
            svc.metrics.latency.labels(endpoint).observe(elapsed)
            logger.info("request", extra={"method": request.method, "path": request.url.path, "status": status,
                                          "duration_ms": round(elapsed * 1e3, 2), "request_id": rid})
            request_id.reset(token)

    @app.exception_handler(ServiceError)
    async def _service_error(request: Request, exc: ServiceError):
        return _error_response(exc, request_id.get())

    @app.exception_handler(StarletteHTTPException)
    async def _http_error(request: Request, exc: StarletteHTTPException):
        code = {404: "not_found", 405: "method_not_allowed", 413: "payload_too_large"}.get(exc.status_code, "invalid_request")
        return _error_response(ServiceError(code, str(exc.detail)), request_id.get())

    @app.exception_handler(RequestValidationError)
    async def _validation_error(request: Request, exc: RequestValidationError):
        return _error_response(ServiceError("invalid_request", _validation_message(exc.errors())), request_id.get())

    @app.exception_handler(Exception)
    async def _unexpected(request: Request, exc: Exception):
        logger.exception("unhandled error")
        return _error_response(from_library(exc), request_id.get())

    # -- operations ------------------------------------------------------------------
    @app.get("/healthz")
    async def healthz():
        return {"status": "ok"}

    @app.get("/readyz")
    async def readyz():
        st = svc.status()
        return JSONResponse(st, status_code=200 if st["ready"] else 503)

    @app.get("/metrics")
    async def metrics():
        body, ctype = svc.metrics.render()
        return Response(body, media_type=ctype)

    # -- questions -------------------------------------------------------------------
    @app.post("/v1/answer")
    async def answer(request: Request):
        req = _parse(AnswerRequest, await _body(request, s.max_request_bytes))
        _check_question(req.question, len(req.history), s)
        with_trace = s.trace if req.trace is None else req.trace
        if req.stream:
            svc.require_ready()  # a real 503 before the stream starts
            return await _sse(svc, request, _answer_events(svc, req, with_trace), StreamingResponse)
        served = await _bounded(svc, _answer_once(svc, req))
        return JSONResponse(_result_json(served, with_trace), headers=_version_header(served))

    @app.post("/v1/search")
    async def search(request: Request):
        req = _parse(SearchRequest, await _body(request, s.max_request_bytes))
        _check_question(req.query, 0, s)

        async def work():
            p = svc.pinned()
            res = await svc.run(p.search, req.query, req.top, req.filters.to_filter() if req.filters else None)
            return {"query": res.query, "config_hash": p.config.hash, "index_version": p.index.version_name,
                    "timings_ms": {k: round(v, 3) for k, v in res.timings_ms.items()},
                    "candidates": [c.to_json() for c in res.candidates[:req.top]]}

        return await _bounded(svc, work())

    @app.post("/v1/context")
    async def context(request: Request):
        req = _parse(ContextRequest, await _body(request, s.max_request_bytes))
        _check_question(req.question, len(req.history), s)

        async def work():
            p = svc.pinned()
            _, prompt = await svc.run(p.build_prompt, req.question, req.turns(), where=req.where(), top_k=req.top_k,
                                      ordering=req.ordering)
            out = {"question": req.question, "config_hash": p.config.hash, "index_version": p.index.version_name,
                   "manifest": prompt.manifest.to_json()}
            if req.show_prompt:
                out["messages"] = prompt.to_openai()
            return out

        return await _bounded(svc, work())

    @app.post("/v1/chat/completions")
    async def chat(request: Request):
        req = _parse(ChatRequest, await _body(request, s.max_request_bytes))
        question, history = openai_compat.question_and_history(req)
        _check_question(question, len(history), s)
        ask = AnswerRequest(question=question, history=history, filters=req.rag)
        if req.stream:
            svc.require_ready()
            return await _sse(svc, request, openai_compat.stream_chunks(lambda: _answer_once(svc, ask), s.model_name),
                              StreamingResponse, openai=True)
        served = await _bounded(svc, _answer_once(svc, ask))
        return JSONResponse(openai_compat.completion(served, s.model_name), headers=_version_header(served))

    # -- documents -------------------------------------------------------------------
    @app.get("/v1/documents")
    async def list_documents():
        svc.require_ready()
        idx = svc.pipeline.pinned().index
        docs = [{"id": r.id, "version": r.version, "title": r.title, "uri": r.uri, "chunks": r.n_chunks}
                for _, r in sorted(idx.documents.items())]
        return {"index_version": idx.version_name, "documents": docs}

    @app.post("/v1/documents")
    async def add_documents(request: Request):
        body = await _body(request, s.max_documents_bytes)
        ctype = request.headers.get("content-type", "application/json").split(";")[0].strip().lower()
        if ctype in ("application/x-ndjson", "application/jsonl", "application/x-jsonlines"):
            mode = request.query_params.get("mode", "add")
            req = _parse(DocumentsRequest, {"documents": _jsonl_objects(body), "mode": mode})
        elif ctype in ("application/json", ""):
            req = _parse(DocumentsRequest, body)
            mode = request.query_params.get("mode")
            if mode is not None:  # ?mode= applies to a JSON body too; a body that says otherwise is refused
                if "mode" in req.model_fields_set and req.mode != mode:
                    raise ServiceError("invalid_request", f"the body says mode {req.mode!r} and the URL says "
                                                          f"mode={mode!r}; give one")
                req = _parse(DocumentsRequest, {"documents": [d.model_dump() for d in req.documents], "mode": mode})
        else:
            raise ServiceError("unsupported_media_type", f"content type {ctype!r}: send application/json "
                                                          "({\"documents\": [...]}) or application/x-ndjson")
        docs = [d.to_document() for d in req.documents]
        try:
            change = await svc.add(docs, replace=req.mode == "replace")
        except Exception as exc:
            raise from_library(exc) from None
        return change.to_json()

    @app.delete("/v1/documents/{doc_id}")
    async def delete_document(doc_id: str, version: str | None = None):
        svc.require_ready()
        if not svc.has_document(doc_id, version):
            what = f"document {doc_id!r}" + (f" version {version!r}" if version else "")
            raise ServiceError("not_found", f"{what} is not in the index")
        try:
            change = await svc.delete(doc_id, version)
        except InputError as exc:  # deleted by another request meanwhile
            raise ServiceError("not_found", str(exc)) from None
        return change.to_json()

    return app


# -- helpers -------------------------------------------------------------------------------
def _version() -> str:
    from rag import __version__

    return __version__


def _request_id(given: str | None) -> str:
    if given and len(given) <= 128 and given.isprintable() and " " not in given:
        return given
    return uuid.uuid4().hex


def _error_response(exc: ServiceError, rid: str):
    from fastapi.responses import JSONResponse

    return JSONResponse(exc.body(rid), status_code=exc.status, headers={**exc.headers, "X-Request-ID": rid})


async def _body(request, limit: int) -> bytes:
    """The request body, refused with 413 past ``limit`` bytes (checked before and while reading)."""
    declared = request.headers.get("content-length")
    if declared is not None and declared.isdigit() and int(declared) > limit:
        raise ServiceError("payload_too_large", f"the body is {declared} bytes; the limit is {limit}")
    chunks, size = [], 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > limit:
            raise ServiceError("payload_too_large", f"the body is over the limit of {limit} bytes")
        chunks.append(chunk)
    return b"".join(chunks)


def _parse(model: type[BaseModel], body: bytes | dict):
    """``body`` (JSON bytes, or an already decoded object) validated as ``model``, or a 422."""
    if isinstance(body, bytes) and not body.strip():
        raise ServiceError("invalid_request", "the request body is empty; send a JSON object")
    try:
        return model.model_validate(body) if isinstance(body, dict) else model.model_validate_json(body)
    except ValidationError as exc:
        raise ServiceError("invalid_request", _validation_message(exc.errors())) from None


def _validation_message(errors) -> str:
    parts = []
    for e in list(errors)[:5]:
        loc = ".".join(str(x) for x in e.get("loc", ()) if x != "body") or "<body>"
        msg = "unknown field" if e.get("type") == "extra_forbidden" else e.get("msg", "invalid")
        parts.append(f"{loc}: {msg}")
    return "invalid request: " + "; ".join(parts)


def _jsonl_objects(body: bytes) -> list:
    out = []
    for i, line in enumerate(body.decode("utf-8", "replace").splitlines(), 1):
        if not line.strip():
            continue
        try:
            out.append(json.loads(line))
        except ValueError as exc:
            raise ServiceError("invalid_request", f"line {i}: not JSON ({exc.msg})") from None
    if not out:
        raise ServiceError("invalid_request", "no documents in the body")
    return out


def _check_question(question: str, history_turns: int, s) -> None:
    if len(question) > s.max_question_chars:
        raise ServiceError("question_too_long", f"the question has {len(question)} characters; "
                                                f"the limit is {s.max_question_chars}")
    if history_turns > s.max_history_turns:
        raise ServiceError("payload_too_large", f"{history_turns} history turns; the limit is {s.max_history_turns}")


async def _bounded(svc: Service, work):
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


def _use_tools(svc: Service, req: AnswerRequest) -> bool:
    if req.tools and svc.tools is None:
        raise ServiceError("invalid_input", "this server has no tools; leave out \"tools\" or set it to false")
    return svc.tools is not None and req.tools is not False


async def _answer_once(svc: Service, req: AnswerRequest) -> Served:
    p = svc.pinned()
    if _use_tools(svc, req):
        result = await p.aanswer_with_tools(req.question, svc.tools, req.turns(), where=req.where(),
                                            top_k=req.top_k, ordering=req.ordering)
    else:
        result = await p.aanswer(req.question, req.turns(), where=req.where(), top_k=req.top_k,
                                 ordering=req.ordering)
    svc.metrics.observe_answer(result)
    return Served(result, p.index.version_name)


def _version_header(served: Served) -> dict[str, str]:
    return {"X-Rag-Index-Version": served.index_version} if served.index_version else {}


def _result_json(served: Served, with_trace: bool) -> dict:
    out = served.result.to_json()
    if not with_trace:
        out["trace"] = None
    out["index_version"] = served.index_version
    return out


async def _answer_events(svc: Service, req: AnswerRequest, with_trace: bool) -> AsyncIterator[tuple[str, dict]]:
    """(event, data) for ``stream: true``: retrieval, gate, then answer (validated) and done."""
    from rag.pipeline import Answered, Gated, Searched

    if _use_tools(svc, req):  # the tool phase is one step: its selection and calls, then the answer
        served = await _answer_once(svc, req)
        out = served.result.to_json()
        trace = out.pop("trace")
        yield "tools", (trace or {}).get("tools") or {}
        out["index_version"] = served.index_version
        yield "answer", out
        yield "done", {"trace": trace if with_trace else None}
        return
    p = svc.pinned()
    async for ev in p.astream(req.question, req.turns(), where=req.where(), top_k=req.top_k, ordering=req.ordering):
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


async def _sse(svc: Service, request, events, response_cls, openai: bool = False):
    """A server-sent-events response. The admission slot is taken before the response starts (so a
    full queue is a real 429) and released when the stream ends; the timeout covers the stream."""
    gate = contextlib.AsyncExitStack()
    try:
        await asyncio.wait_for(gate.enter_async_context(svc.slot()), svc.settings.request_timeout_s)
    except asyncio.TimeoutError:
        raise ServiceError("timeout", "timed out waiting for a free slot") from None
    deadline = time.monotonic() + svc.settings.request_timeout_s

    async def body():
        it = events.__aiter__()
        try:
            while True:
                left = deadline - time.monotonic()
                try:
                    event, data = await asyncio.wait_for(it.__anext__(), max(left, 0.001))
                except StopAsyncIteration:
                    break
                yield _sse_frame(event, data)
        except asyncio.TimeoutError:
            svc.metrics.rejected.labels("timeout").inc()
            yield _sse_error(ServiceError("timeout", "the request took longer than "
                                                     f"{svc.settings.request_timeout_s:g} s"), openai)
        except Exception as exc:  # headers are sent: report in-band, with the same codes as the JSON errors
            err = from_library(exc)
            if err.code == "internal":
                logger.exception("stream failed")
            yield _sse_error(err, openai)

    class _Stream(response_cls):
        async def __call__(self, scope, receive, send):
            try:
                await super().__call__(scope, receive, send)
            finally:
                await gate.aclose()

    return _Stream(body(), media_type="text/event-stream",
                   headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"})


def _sse_error(err: ServiceError, openai: bool) -> bytes:
    """An error after the stream started: ``event: error`` (rag's stream) or a data line with an
    ``error`` object (the OpenAI stream, which its SDK raises as an APIError)."""
    body = err.body(request_id.get())
    return _sse_frame("", body) if openai else _sse_frame("error", body["error"])


def _sse_frame(event: str, data) -> bytes:
    if event == "":  # the OpenAI stream: bare data lines
        payload = data if isinstance(data, str) else json.dumps(data, ensure_ascii=False)
        return f"data: {payload}\n\n".encode()
    return f"event: {event}\ndata: {json.dumps(data, ensure_ascii=False)}\n\n".encode()


__all__ = ["create_app", "app_from_env"]
