"""Running one tool call: argument checks against the tool's JSON Schema, a timeout, and a typed
outcome for every way it can go wrong. Nothing here raises for a tool's own failure: the outcome
says what happened, and the loop reports it to the model."""
from __future__ import annotations

import asyncio
import concurrent.futures
import datetime
import inspect
import json
import logging
import time
from dataclasses import dataclass
from typing import Any, Literal

from rag.tools.format import ToolResultError, to_json_value
from rag.tools.registry import PRINCIPAL_PARAMETER, Approver, ToolFunction, ToolSpec, WriteRequest, accepts_principal

logger = logging.getLogger(__name__)

CallStatus = Literal["ok", "hinted", "refused", "not_approved", "invalid_arguments", "error", "timeout",
                     "invalid_result", "not_bound", "withheld", "no_room"]

# Hung synchronous tools keep their thread until they return; a small shared pool bounds them.
_POOL = concurrent.futures.ThreadPoolExecutor(max_workers=4, thread_name_prefix="rag-tool")


@dataclass(frozen=True)
class CallRecord:
    """One tool call as the loop saw it. ``result_json``: the JSON result when ``status`` is ok."""

    call_id: str
    tool: str
    arguments: str  # the arguments as JSON text (as the model sent them)
    status: CallStatus
    message: str = ""  # what went wrong, as reported back to the model
    called_at: str = ""  # ISO time (UTC) the call started
    duration_ms: float = 0.0
    result_json: str = ""

    @property
    def ok(self) -> bool:
        return self.status == "ok"

    def to_json(self) -> dict:
        return {"call_id": self.call_id, "tool": self.tool, "arguments": self.arguments, "status": self.status,
                "message": self.message, "called_at": self.called_at, "duration_ms": round(self.duration_ms, 2)}


def argument_errors(schema: dict, arguments: Any) -> list[str]:
    """What is wrong with ``arguments`` for ``schema`` (empty when they are valid), at most five."""
    if not isinstance(arguments, dict):
        return [f"the arguments must be a JSON object, got {type(arguments).__name__}"]
    import jsonschema

    validator = jsonschema.Draft202012Validator(schema)
    errs = sorted(validator.iter_errors(arguments), key=lambda e: (list(e.path), e.message))
    out = []
    for e in errs[:5]:
        where = "/".join(str(p) for p in e.path) or "(arguments)"
        out.append(f"{where}: {e.message[:200]}")
    return out


def parse_arguments(text: str) -> tuple[Any, str]:
    """(arguments, error): the model's JSON argument text parsed, or why it is not JSON."""
    try:
        return (json.loads(text) if text and text.strip() else {}), ""
    except ValueError as exc:
        return None, f"the arguments are not valid JSON ({exc.msg})"


def checked_arguments(spec: ToolSpec, fn: ToolFunction | None, arguments_text: str) -> tuple[Any, str]:
    """(arguments, error): the model's arguments parsed and checked against the tool's schema; a
    ``principal`` argument is refused when the bound function takes the caller from the server."""
    args, err = parse_arguments(arguments_text)
    if err:
        return None, err
    if fn is not None and accepts_principal(fn) and isinstance(args, dict) and PRINCIPAL_PARAMETER in args:
        return None, f"{PRINCIPAL_PARAMETER}: set by the server (the caller), not an argument"
    errs = argument_errors(spec.parameters, args)
    return (None, "; ".join(errs)) if errs else (args, "")


def approve(approver: Approver | None, request: WriteRequest, timeout_s: float) -> tuple[bool, str]:
    """(approved, why not): ask the application's approval callback about one write call. No callback,
    a false answer, an exception or no answer within ``timeout_s`` refuses it."""
    if approver is None:
        return False, "write calls need the application's approval and none is configured"
    try:
        if inspect.iscoroutinefunction(approver):
            verdict = _run_async(approver, {"request": request}, timeout_s, positional=True)
        else:
            verdict = _POOL.submit(approver, request).result(timeout=timeout_s)
    except (concurrent.futures.TimeoutError, asyncio.TimeoutError, TimeoutError):
        return False, f"no approval within {timeout_s:g} s"
    except Exception as exc:  # the callback's own failure refuses the call, never runs it
        logger.warning("approval callback for %s raised %s", request.tool, type(exc).__name__)
        return False, "the approval check failed"
    return (True, "") if verdict is True else (False, "the call was not approved")


def call_tool(spec: ToolSpec, fn: ToolFunction | None, call_id: str, arguments_text: str,
              timeout_s: float, principal: Any = None) -> CallRecord:
    """Check the arguments, run ``fn`` with a timeout (``principal`` passed when ``fn`` takes one),
    and make its result JSON."""
    now = datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")
    base = dict(call_id=call_id, tool=spec.name, arguments=arguments_text, called_at=now)
    args, err = checked_arguments(spec, fn, arguments_text)
    if err:
        return CallRecord(**base, status="invalid_arguments", message=err)
    if fn is None:
        return CallRecord(**base, status="not_bound", message=f"tool {spec.name} is not available on this server")
    if accepts_principal(fn):
        args = {**args, PRINCIPAL_PARAMETER: principal}
    t0 = time.perf_counter()
    try:
        if inspect.iscoroutinefunction(fn):
            result = _run_async(fn, args, timeout_s)
        else:
            result = _POOL.submit(fn, **args).result(timeout=timeout_s)
    except (concurrent.futures.TimeoutError, asyncio.TimeoutError, TimeoutError):
        return CallRecord(**base, status="timeout", message=f"the tool did not answer within {timeout_s:g} s",
                          duration_ms=(time.perf_counter() - t0) * 1e3)
    except Exception as exc:  # the tool's own failure: reported, never raised
        logger.warning("tool %s raised %s", spec.name, type(exc).__name__, exc_info=True)
        return CallRecord(**base, status="error", message=f"the tool failed: {type(exc).__name__}: {str(exc)[:200]}",
                          duration_ms=(time.perf_counter() - t0) * 1e3)
    ms = (time.perf_counter() - t0) * 1e3
    try:
        value = to_json_value(result)
    except ToolResultError as exc:
        return CallRecord(**base, status="invalid_result", message=str(exc), duration_ms=ms)
    return CallRecord(**base, status="ok", duration_ms=ms, result_json=json.dumps(value, ensure_ascii=False))


def _run_async(fn: ToolFunction, args: dict, timeout_s: float, positional: bool = False) -> Any:
    async def bounded():
        return await asyncio.wait_for(fn(*args.values()) if positional else fn(**args), timeout_s)

    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(bounded())
    # Called from inside an event loop (e.g. a service thread): run it on a loop of its own.
    return _POOL.submit(asyncio.run, bounded()).result(timeout=timeout_s + 1)
