"""The connection to one Milvus URI (a milvus-lite file, a Milvus server, a cluster): the pymilvus
client with a timeout on every call, and every failure turned into an :class:`IndexBackendError`
that says what to check."""
from __future__ import annotations

import contextlib
import logging
import os
import re
from typing import Iterator

from rag.config import MilvusConfig
from rag.errors import IndexBackendError, missing_dependency

logger = logging.getLogger(__name__)


def is_server_uri(uri: str) -> bool:
    return uri.startswith(("http://", "https://", "tcp://", "grpc://", "unix:"))


def supports_bm25(server_version: str) -> bool:
    """Milvus >= 2.5 and milvus-lite 3.x have the BM25 function and sparse vectors."""
    m = re.search(r"(\d+)\.(\d+)", server_version or "")
    return m is not None and (int(m.group(1)), int(m.group(2))) >= (2, 5)


class Engine:
    """The pymilvus client for one URI, with every call's failure turned into a typed error."""

    def __init__(self, settings: MilvusConfig, uri: str) -> None:
        try:
            from pymilvus import MilvusClient
        except ImportError:
            raise missing_dependency("pymilvus", "milvus", "index.backend: milvus") from None
        self.uri = uri
        self.settings = settings
        token = ""
        if settings.token_env:
            token = os.environ.get(settings.token_env, "")
            if not token:
                raise IndexBackendError(
                    f"index.milvus.token_env names {settings.token_env!r}, which is not set; export the token "
                    f"for {uri} in that variable (or remove token_env for a server without authentication)")
        if not is_server_uri(uri):
            parent = os.path.dirname(os.path.abspath(uri))
            os.makedirs(parent, exist_ok=True)
        quiet_lite_notices()
        kwargs: dict = {"timeout": settings.timeout_s}
        if token:
            kwargs["token"] = token
        if settings.db_name:
            kwargs["db_name"] = settings.db_name
        with self.calls("connect"):
            self.client = Timed(MilvusClient(uri, **kwargs), settings.timeout_s)
            self.version = str(self.client.get_server_version())
        self.bm25 = supports_bm25(self.version)
        # milvus-lite searches its unflushed rows row by row (10x slower at 5k rows): flush every
        # write there; a server flushes on its own, and is only asked to after bulk loads
        self.lite = "lite" in self.version.lower() and supports_bm25(self.version)

    @contextlib.contextmanager
    def calls(self, what: str) -> Iterator[None]:
        try:
            yield
        except IndexBackendError:
            raise
        except Exception as exc:  # pymilvus raises MilvusException, grpc errors, OSError, ...
            text = str(exc)
            hint = "check that the server is running and reachable, then rerun"
            low = text.lower()
            status = _grpc_status(exc)
            if status == "UNAUTHENTICATED" or "auth" in low or "credential" in low:
                hint = ("the server refused the credentials: put the right token (user:password or an API key) "
                        "in the variable named by index.milvus.token_env, then rerun")
            elif status == "UNAVAILABLE" or "illegal connection params" in low:
                hint = ("nothing answered there, or it refused the token: check that the server is running and "
                        "reachable and the token in index.milvus.token_env, then rerun")
            elif status == "DEADLINE_EXCEEDED":
                hint = f"no answer within index.milvus.timeout_s ({self.settings.timeout_s} s): check the server's load"
            elif "database" in low and "not" in low:
                hint = "create the database named in index.milvus.db_name first (or leave db_name empty)"
            raise IndexBackendError(f"Milvus at {self.uri}: {what} failed ({type(exc).__name__}: {text[:300]}); "
                                    f"{hint}. Nothing that was already published is lost; rerunning an "
                                    "interrupted ingest completes it.") from None


class Timed:
    """The client with ``timeout=`` on every call: without one pymilvus retries for minutes."""

    def __init__(self, client, timeout: float) -> None:
        self._client, self._timeout = client, timeout

    def __getattr__(self, name: str):
        attr = getattr(self._client, name)
        if not callable(attr):
            return attr

        def call(*args, **kwargs):
            kwargs.setdefault("timeout", self._timeout)
            return attr(*args, **kwargs)

        return call


def _grpc_status(exc: BaseException | None) -> str:
    """The gRPC status name behind a pymilvus error (UNAUTHENTICATED, UNAVAILABLE, ...), or ""."""
    seen = 0
    while exc is not None and seen < 5:
        code = getattr(exc, "code", None)
        if callable(code):
            try:
                return str(getattr(code(), "name", ""))
            except Exception:  # noqa: BLE001 - not a grpc error after all
                pass
        exc, seen = exc.__cause__ or exc.__context__, seen + 1
    return ""


class _DropMvccNotice(logging.Filter):
    """pymilvus warns on every query iterator that milvus-lite has no MVCC timestamp to give; the
    iterator works without it."""

    def filter(self, record: logging.LogRecord) -> bool:
        return "mvccTs" not in record.getMessage()


class _DropUnimplemented(logging.Filter):
    """milvus-lite's in-process gRPC server logs a traceback for each call it does not implement
    (pymilvus asks for a timestamp while waiting for an index); the client carries on without it."""

    def filter(self, record: logging.LogRecord) -> bool:
        exc = record.exc_info[1] if record.exc_info else None
        return not isinstance(exc, NotImplementedError)


def quiet_lite_notices() -> None:
    for name, kind in (("grpc._server", _DropUnimplemented),
                       ("pymilvus.client.iterator.query_iterator", _DropMvccNotice)):
        log = logging.getLogger(name)
        if not any(isinstance(f, kind) for f in log.filters):
            log.addFilter(kind())
