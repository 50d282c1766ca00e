"""Request bodies of ``rag serve``: read within the size limits, validated into the models of
:mod:`rag.serve.schemas`, and declared in ``/openapi.json``.

A route takes its body as a dependency, ``req: AnswerRequest = Depends(JsonBody(AnswerRequest))``:
the body is read here (a 413 before and while reading past the limit) and validated with the
project's own messages (``invalid_request``, 422), not FastAPI's. FastAPI therefore does not see
a body parameter; :func:`openapi` declares each :class:`JsonBody`'s model as the route's
``requestBody`` and puts the models under ``components/schemas``.
"""
import json
from collections.abc import Sequence
from typing import Any, Generic, Literal, TypeVar

from fastapi import Query, Request
from fastapi.openapi.utils import get_openapi
from fastapi.routing import APIRoute
from pydantic import BaseModel, ValidationError
from pydantic.json_schema import models_json_schema

from rag.serve.errors import ServiceError
from rag.serve.principals import request_reader
from rag.serve.schemas import DocumentIn, DocumentsRequest

M = TypeVar("M", bound=BaseModel)
Limit = Literal["max_request_bytes", "max_documents_bytes"]  # the serve setting that bounds the body
JSON = "application/json"
JSONL_TYPES = ("application/x-ndjson", "application/jsonl", "application/x-jsonlines")


class JsonBody(Generic[M]):
    """A FastAPI dependency: the request body as ``model``, read within ``serve.<limit>`` bytes."""

    def __init__(self, model: type[M], limit: Limit = "max_request_bytes") -> None:
        self.model = model
        self.limit = limit

    async def __call__(self, request: Request) -> M:
        return parse(self.model, await self.read(request))

    async def read(self, request: Request) -> bytes:
        """The body within the limit; the principal headers are checked against it before it is parsed."""
        body = await read_body(request, getattr(request.app.state.service.settings, self.limit))
        read_as(request, body)
        return body

    def content(self, ref: dict[str, Any]) -> dict[str, Any]:
        """The OpenAPI ``content`` of the body, ``ref`` being the model's schema reference."""
        return {JSON: {"schema": ref}}


class DocumentsBody(JsonBody[DocumentsRequest]):
    """``POST /v1/documents``: a JSON object, or JSONL with one document per line; ``?mode=`` applies to both."""

    def __init__(self) -> None:
        super().__init__(DocumentsRequest, "max_documents_bytes")

    async def __call__(self, request: Request,  # type: ignore[override]
                       mode: str | None = Query(None, description="add (default) or replace: each document "
                                                "becomes the only version of its id")) -> DocumentsRequest:
        body = await self.read(request)
        ctype = request.headers.get("content-type", JSON).split(";")[0].strip().lower()
        if ctype in JSONL_TYPES:
            return parse(DocumentsRequest, {"documents": jsonl_objects(body), "mode": "add" if mode is None else mode})
        if ctype not in (JSON, ""):
            raise ServiceError("unsupported_media_type", f"content type {ctype!r}: send application/json "
                                                          "({\"documents\": [...]}) or application/x-ndjson")
        req = parse(DocumentsRequest, body)
        if mode is None:
            return req
        # ?mode= applies to a JSON body too; a body that says otherwise is refused
        if "mode" in req.model_fields_set and req.mode != mode:
            raise ServiceError("invalid_request", f"the body says mode {req.mode!r} and the URL says mode={mode!r}; "
                                                  "give one")
        return parse(DocumentsRequest, {"documents": [d.model_dump() for d in req.documents], "mode": mode})

    def content(self, ref: dict[str, Any]) -> dict[str, Any]:
        line = {"schema": {"$ref": _ref(DocumentIn)}, "example": '{"id": "a", "text": "..."}\n'}
        return {JSON: {"schema": ref}, JSONL_TYPES[0]: line}


async def read_body(request: Request, limit: int) -> bytes:
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


def read_as(request: Request, body: bytes) -> None:
    """Who the request reads as (``request.state.reader``, None: anonymous), from its API key and
    its signed principal headers over ``body`` (:func:`rag.serve.principals.request_reader`)."""
    svc = request.app.state.service
    try:
        request.state.reader = request_reader(getattr(request.state, "key", None), request.headers, body, svc.settings,
                                       nonces=getattr(request.app.state, "nonces", None))
    except ServiceError as exc:
        svc.metrics.rejected.labels(exc.code).inc()
        raise


def parse(model: type[M], body: bytes | dict) -> M:
    """``body`` (JSON bytes, or an already decoded object) validated as ``model``, or a 422."""
    if isinstance(body, bytes) and not body.strip():
        raise ServiceError("invalid_request", "the request body is empty; send a JSON object")
    try:
        return model.model_validate(body) if isinstance(body, dict) else model.model_validate_json(body)
    except ValidationError as exc:
        raise ServiceError("invalid_request", validation_message(exc.errors())) from None


def validation_message(errors) -> str:
    """The ``invalid_request`` message for pydantic's (or FastAPI's) validation errors: the first five."""
    parts = []
    for e in list(errors)[:5]:
        loc = ".".join(str(x) for x in e.get("loc", ()) if x != "body") or "<body>"
        msg = "unknown field" if e.get("type") == "extra_forbidden" else e.get("msg", "invalid")
        parts.append(f"{loc}: {msg}")
    return "invalid request: " + "; ".join(parts)


def jsonl_objects(body: bytes) -> list:
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


# -- OpenAPI ----------------------------------------------------------------------------------
def _ref(model: type[BaseModel]) -> str:
    return f"#/components/schemas/{model.__name__}"


def body_of(route: object) -> JsonBody | None:
    """The :class:`JsonBody` dependency of ``route``, if it takes one."""
    if not isinstance(route, APIRoute):
        return None
    return next((d.call for d in route.dependant.dependencies if isinstance(d.call, JsonBody)), None)


def openapi(app, routes: Sequence[object]) -> dict[str, Any]:
    """``app``'s OpenAPI document with a ``requestBody`` for each of ``routes`` (those ``app`` includes
    without a prefix) that reads a :class:`JsonBody`, and the models (and the models they use) under
    ``components/schemas``; built once, then cached."""
    if app.openapi_schema is not None:
        return app.openapi_schema
    doc = get_openapi(title=app.title, version=app.version, openapi_version=app.openapi_version,
                      description=app.description, routes=app.routes, tags=app.openapi_tags, servers=app.servers)
    bodies = [(route, body) for route in routes if (body := body_of(route)) is not None]
    models = sorted({body.model for _, body in bodies}, key=lambda m: m.__name__)
    refs, defs = models_json_schema([(m, "validation") for m in models], ref_template="#/components/schemas/{model}")
    for route, body in bodies:
        for method in sorted(route.methods):
            operation = doc["paths"][route.path_format][method.lower()]
            operation["requestBody"] = {"required": True, "content": body.content(refs[(body.model, "validation")])}
    doc.setdefault("components", {}).setdefault("schemas", {}).update(defs.get("$defs", {}))
    app.openapi_schema = doc
    return doc
