"""Error bodies of ``rag serve``: every error has a stable ``code``; no stack trace or file path leaves."""
from __future__ import annotations

import re

from rag.errors import (DuplicateDocumentError, GenerationError, GenerationTimeoutError, IndexError_, InputError,
                        QuestionTooLongError, RagError)

# Stable codes, their HTTP status and what a client should do (docs/service.md lists the same table).
CODES: dict[str, int] = {
    "invalid_request": 422,  # the body does not match the endpoint's schema
    "invalid_input": 400,  # well-formed, but the library refused it (empty question, bad document...)
    "unauthorized": 401,  # no key or an unknown key
    "replayed": 401,  # a signed request sent again unchanged (its X-Rag-Nonce was seen within the window)
    "principal_required": 401,  # security.require_principal and the request reads as nobody
    "forbidden": 403,  # a query key on an admin endpoint; a principal header from a key that may not send one
    "not_found": 404,
    "method_not_allowed": 405,
    "conflict": 409,  # a document version already indexed with other text (use mode: replace)
    "payload_too_large": 413,  # the request body is over serve.max_request_bytes / max_documents_bytes
    "question_too_long": 413,  # the question is over limits.max_question_chars
    "unsupported_media_type": 415,
    "overloaded": 429,  # the queue is full: retry after Retry-After seconds
    "internal": 500,
    "upstream_error": 502,  # the LLM server failed
    "not_ready": 503,  # models or index not loaded yet
    "timeout": 504,  # the request ran past serve.request_timeout_s
}

_PATH = re.compile(r"(?:[A-Za-z]:)?(?:[\\/][\w.\-~@+]+){2,}[\\/]?")


def scrub(message: str) -> str:
    """A message safe to return: file paths replaced, one line, bounded length."""
    text = _PATH.sub("<path>", str(message)).strip()
    text = " ".join(text.split())
    return text[:500]


class ServiceError(Exception):
    """An HTTP error with a stable code (``CODES``) and a message for the client."""

    def __init__(self, code: str, message: str, headers: dict[str, str] | None = None) -> None:
        super().__init__(message)
        if code not in CODES:
            raise ValueError(f"unknown service error code {code!r}")
        self.code = code
        self.status = CODES[code]
        self.message = scrub(message)
        self.headers = headers or {}

    def body(self, request_id: str) -> dict:
        return {"error": {"code": self.code, "message": self.message, "request_id": request_id}}


def from_library(exc: Exception) -> ServiceError:
    """The service error for an exception the library raised while serving a request."""
    if isinstance(exc, ServiceError):
        return exc
    if isinstance(exc, DuplicateDocumentError):
        return ServiceError("conflict", str(exc))
    if isinstance(exc, QuestionTooLongError):
        return ServiceError("question_too_long", str(exc))
    if isinstance(exc, InputError):
        return ServiceError("invalid_input", str(exc))
    if isinstance(exc, GenerationTimeoutError):
        return ServiceError("timeout", "the language model did not answer in time")
    if isinstance(exc, GenerationError):
        return ServiceError("upstream_error", "the language model server failed; see the server log")
    if isinstance(exc, IndexError_):
        return ServiceError("not_ready", "the index is not available; see the server log")
    if isinstance(exc, RagError):
        return ServiceError("internal", "the request failed; see the server log")
    return ServiceError("internal", "internal error; see the server log")
