"""Server-sent events for ``rag serve``: the response that holds an admission slot for the life of
the stream, and the frames of rag's own stream and of the OpenAI stream."""
import asyncio
import contextlib
import json
import logging
import time
from collections.abc import AsyncIterator

from fastapi.responses import StreamingResponse

from rag.serve.errors import ServiceError, from_library
from rag.serve.logs import request_id
from rag.serve.service import Service

logger = logging.getLogger(__name__)


class _SlotStream(StreamingResponse):
    """A stream that gives its admission slot back when it ends (finished, failed or the client left)."""

    def __init__(self, content: AsyncIterator[bytes], gate: contextlib.AsyncExitStack, **kwargs) -> None:
        super().__init__(content, **kwargs)
        self.gate = gate

    async def __call__(self, scope, receive, send) -> None:
        try:
            await super().__call__(scope, receive, send)
        finally:
            await self.gate.aclose()


async def sse_response(svc: Service, events: AsyncIterator[tuple[str, object]], openai: bool = False) -> StreamingResponse:
    """A server-sent-events response of ``events`` ((event, data) pairs). The admission slot is taken
    before the response starts (so a full queue is a real 429) and released when the stream ends; the
    timeout covers the stream."""
    gate = contextlib.AsyncExitStack()
    try:
        await asyncio.wait_for(gate.enter_async_context(svc.slot()), svc.settings.request_timeout_s)
    except asyncio.TimeoutError:
        raise ServiceError("timeout", "timed out waiting for a free slot") from None
    deadline = time.monotonic() + svc.settings.request_timeout_s

    async def body() -> AsyncIterator[bytes]:
        it = events.__aiter__()
        try:
            while True:
                left = deadline - time.monotonic()
                try:
                    event, data = await asyncio.wait_for(it.__anext__(), max(left, 0.001))
                except StopAsyncIteration:
                    break
                yield sse_frame(event, data)
        except asyncio.TimeoutError:
            svc.metrics.rejected.labels("timeout").inc()
            yield sse_error(ServiceError("timeout", "the request took longer than "
                                                    f"{svc.settings.request_timeout_s:g} s"), openai)
        except Exception as exc:  # headers are sent: report in-band, with the same codes as the JSON errors
            err = from_library(exc)
            if err.code == "internal":
                logger.exception("stream failed")
            yield sse_error(err, openai)

    return _SlotStream(body(), gate, media_type="text/event-stream",
                       headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"})


def sse_error(err: ServiceError, openai: bool) -> bytes:
    """An error after the stream started: ``event: error`` (rag's stream) or a data line with an
    ``error`` object (the OpenAI stream, which its SDK raises as an APIError)."""
    body = err.body(request_id.get())
    return sse_frame("", body) if openai else sse_frame("error", body["error"])


def sse_frame(event: str, data: object) -> bytes:
    """One frame; ``event == ""`` is the OpenAI stream's bare data line."""
    if event == "":
        payload = data if isinstance(data, str) else json.dumps(data, ensure_ascii=False)
        return f"data: {payload}\n\n".encode()
    return f"event: {event}\ndata: {json.dumps(data, ensure_ascii=False)}\n\n".encode()
