"""The HTTP app of ``rag serve`` (FastAPI): wiring only. The routes are in :mod:`rag.serve.routes`
(docs/service.md documents each one), their request bodies in :mod:`rag.serve.bodies`; this module
adds the service, start-up and shut-down, keys, request ids, metrics, logs and the error bodies."""

import asyncio
import contextlib
import json
import logging
import os
import time
import uuid

from rag.config import RagConfig, load_config
from rag.serve.errors import ServiceError, from_library
from rag.serve.logs import request_id
from rag.serve.nonces import NONCES_ENV, nonce_store
from rag.serve.principals import log_tag
from rag.serve.service import Service

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
    thread, then a warm-up question runs (:meth:`Service.start`); until then ``/readyz`` answers 503
    (``status: warming_up`` during the warm-up) and question routes ``not_ready``. ``tools``: a
    :class:`rag.tools.ToolRegistry` with its functions bound, for answers from live data."""
    from fastapi import FastAPI
    from fastapi.exceptions import RequestValidationError
    from starlette.exceptions import HTTPException as StarletteHTTPException

    from rag.serve.bodies import openapi
    from rag.serve.routes import router

    svc = service or Service(config, tools=tools)
    app = FastAPI(title="rag", version=_version(), lifespan=_lifespan, docs_url=None, redoc_url=None,
                  openapi_url="/openapi.json")
    app.state.service = svc
    # Seen nonces of signed requests: shared by the workers of `rag serve --workers N` (NONCES_ENV).
    app.state.nonces = nonce_store(svc.settings.max_nonces, os.environ.get(NONCES_ENV) or None)
    if svc.settings.cors_origins:
        from fastapi.middleware.cors import CORSMiddleware

        app.add_middleware(CORSMiddleware, allow_origins=list(svc.settings.cors_origins),
                           allow_methods=["GET", "POST", "DELETE"],
                           allow_headers=["Authorization", "Content-Type", "X-Request-ID", "X-Rag-Principal",
                                          "X-Rag-Timestamp", "X-Rag-Nonce", "X-Rag-Signature"])
    app.middleware("http")(_frame)
    app.add_exception_handler(ServiceError, _service_error)
    app.add_exception_handler(StarletteHTTPException, _http_error)
    app.add_exception_handler(RequestValidationError, _validation_error)
    app.add_exception_handler(Exception, _unexpected)
    app.include_router(router)
    app.openapi = lambda: openapi(app, router.routes)  # the request bodies the routes read themselves
    return app


@contextlib.asynccontextmanager
async def _lifespan(app):
    svc: Service = app.state.service
    loop = asyncio.get_running_loop()
    # The pipeline's own asyncio.to_thread calls (Pipeline.astream) go to the compute thread too.
    loop.set_default_executor(svc.compute)
    starting = loop.run_in_executor(svc.compute, svc.start)
    starting.add_done_callback(lambda f: f.exception())  # logged by Service.start; keep serving /healthz
    try:
        yield
    finally:
        svc.close()


async def _frame(request, call_next):
    """Around every request: its id, the API key check, metrics and one log line."""
    svc: Service = request.app.state.service
    rid = _request_id(request.headers.get("x-request-id"))
    token = request_id.set(rid)
    t0 = time.perf_counter()
    status = 500
    request.state.key = None
    try:
        path = request.url.path
        if path not in OPEN_ROUTES:
            need = "admin" if path.startswith(ADMIN_ROUTES) and request.method != "GET" else "query"
            try:
                request.state.key = svc.keys.check(request.headers.get("authorization"), need)
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
        key = getattr(request.state, "key", None)
        extra = {"method": request.method, "path": request.url.path, "status": status,
                 "duration_ms": round(elapsed * 1e3, 2), "request_id": rid, "key": key.name if key else None}
        if hasattr(request.state, "reader"):  # set by the routes that read as a principal
            extra["principal"] = log_tag(request.state.reader)
        logger.info("request", extra=extra)
        request_id.reset(token)


# -- error bodies ----------------------------------------------------------------------------
async def _service_error(request, exc: ServiceError):
    return _error_response(exc, request_id.get())


async def _http_error(request, exc):
    code = {404: "not_found", 405: "method_not_allowed", 413: "payload_too_large"}.get(exc.status_code, "invalid_request")
    return _error_response(ServiceError(code, str(exc.detail)), request_id.get())


async def _validation_error(request, exc):
    from rag.serve.bodies import validation_message

    return _error_response(ServiceError("invalid_request", validation_message(exc.errors())), request_id.get())


async def _unexpected(request, exc: Exception):
    logger.exception("unhandled error")
    return _error_response(from_library(exc), request_id.get())


def _error_response(exc: ServiceError, rid: str):
    from fastapi.responses import JSONResponse

    return JSONResponse(exc.body(rid), status_code=exc.status, headers={**exc.headers, "X-Request-ID": rid})


def _version() -> str:
    from rag import __version__

    return __version__


def _request_id(given: str | None) -> str:
    if given and len(given) <= 128 and given.isprintable() and " " not in given:
        return given
    return uuid.uuid4().hex


__all__ = ["create_app", "app_from_env"]
