"""``POST /v1/chat/completions``: the answer path behind the OpenAI chat-completions shape.

The assistant message is the validated answer with its ``[S#]`` markers (or the abstention
message); the extra top-level field ``rag`` carries the status, the machine-readable reason, the
resolved citations and the ``resolution`` (what a follow-up was rewritten to, and how). Streaming
sends the same answer as ``chat.completion.chunk`` deltas after validation, the ``rag`` field on
the last chunk, then ``data: [DONE]``. A request's ``rag.previous_citations`` (the last reply's
``rag.citations``, passed back) is what a follow-up's search adds (``conversation.earlier_evidence``)."""
from __future__ import annotations

import re
import time
import uuid
from typing import AsyncIterator, Awaitable, Callable

from rag.serve.errors import ServiceError
from rag.serve.schemas import ChatRequest, HistoryTurn


def question_and_history(req: ChatRequest) -> tuple[str, tuple[HistoryTurn, ...]]:
    """The last user message is the question; earlier user/assistant messages are the history."""
    msgs = [m for m in req.messages if m.role in ("user", "assistant")]
    if not msgs or msgs[-1].role != "user":
        raise ServiceError("invalid_request", "messages must end with a user message (the question)")
    question = msgs[-1].text()
    return question, tuple(HistoryTurn(role=m.role, content=m.text()) for m in msgs[:-1])


def rag_extra(served) -> dict:
    r = served.result
    return {"status": r.status, "abstained": r.status != "answered", "reason": r.reason or None,
            "citations": [{**c.__dict__, "where": c.where} for c in r.citations], "superseded": [v.to_json() for v in r.superseded],
            "warnings": [w.to_json() for w in r.warnings],
            "resolution": r.resolution.to_json() if r.resolution is not None else None,
            "index_version": served.index_version}


def _usage(r) -> dict:
    t = r.trace
    p, c = (t.prompt_tokens, t.completion_tokens) if t is not None else (0, 0)
    return {"prompt_tokens": p, "completion_tokens": c, "total_tokens": p + c}


def completion(served, model: str) -> dict:
    r = served.result
    return {"id": f"chatcmpl-{uuid.uuid4().hex}", "object": "chat.completion", "created": int(time.time()),
            "model": model, "system_fingerprint": None,
            "choices": [{"index": 0, "message": {"role": "assistant", "content": r.answer},
                         "finish_reason": "stop", "logprobs": None}],
            "usage": _usage(r), "rag": rag_extra(served)}


def pieces(text: str) -> list[str]:
    """The answer cut after sentence ends and line breaks (what a chat UI shows progressively)."""
    parts = re.findall(r".*?(?:[.!?。](?:\s+|$)|\n+|$)", text, flags=re.S)
    return [p for p in parts if p] or [text]


async def stream_chunks(work: Callable[[], Awaitable], model: str) -> AsyncIterator[tuple[str, object]]:
    """("", chunk) frames for the OpenAI stream; the answer is complete and validated before the first delta."""
    served = await work()
    cid, created = f"chatcmpl-{uuid.uuid4().hex}", int(time.time())

    def chunk(delta: dict, finish: str | None = None, **extra) -> dict:
        return {"id": cid, "object": "chat.completion.chunk", "created": created, "model": model,
                "system_fingerprint": None,
                "choices": [{"index": 0, "delta": delta, "finish_reason": finish, "logprobs": None}], **extra}

    yield "", chunk({"role": "assistant", "content": ""})
    for piece in pieces(served.result.answer):
        yield "", chunk({"content": piece})
    yield "", chunk({}, "stop", usage=_usage(served.result), rag=rag_extra(served))
    yield "", "[DONE]"
