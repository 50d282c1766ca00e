"""One line of a batch results file: what produced it (:class:`RunInfo`) and the answer (:class:`BatchRecord`).

A line carries the question id and input position, the config hash, the model ids and the
git commit, the answer's JSON and the numbers of its trace (per-stage timings, tokens,
attempts); a question whose answering raised is a ``failed`` line with the error.
"""
from __future__ import annotations

import json
import math
import subprocess
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Any, Mapping

from rag.batch.questions import BatchQuestion

SCHEMA = "rag.batch/1"
STATUSES = ("answered", "insufficient_evidence", "failed")
UNRECORDED = "unrecorded"  # BatchRecord.principal of a line written before lines named their principal


# --------------------------------------------------------------------------- run identity
@dataclass(frozen=True)
class RunInfo:
    """Stamped on every line: what produced it."""

    config_hash: str  # RagConfig.hash
    results_hash: str  # RagConfig.results_hash (the config without ``batch``): resume requires it to match
    models: Mapping[str, str]
    git_commit: str | None
    git_dirty: bool | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "models", MappingProxyType(dict(self.models)))


_GIT_CACHE: dict[str, tuple[str | None, bool | None]] = {}


def git_state(path: str | Path | None = None) -> tuple[str | None, bool | None]:
    """(commit, dirty) of the git checkout holding ``path`` (default: this package); (None, None) outside git."""
    where = str(Path(path) if path else Path(__file__).resolve().parents[2])
    if where not in _GIT_CACHE:
        try:
            head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=where, capture_output=True, text=True, timeout=10)
            commit = head.stdout.strip() if head.returncode == 0 else None
            dirty = None
            if commit:
                st = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=where,
                                    capture_output=True, text=True, timeout=10)
                dirty = bool(st.stdout.strip()) if st.returncode == 0 else None
        except (OSError, subprocess.SubprocessError):
            commit, dirty = None, None
        _GIT_CACHE[where] = (commit, dirty)
    return _GIT_CACHE[where]


def model_ids(pipeline) -> dict[str, str]:
    """The models a pipeline answers with, without loading any of them."""
    own = getattr(pipeline, "model_ids", None)
    if callable(own):
        return {str(k): str(v) for k, v in own().items()}
    c = pipeline.config
    emb = pipeline.components.embedder
    out = {"embedding": str(getattr(emb, "model_id", f"{c.embedding.backend}:{c.embedding.model}"))}
    r = getattr(c, "rerank", None)
    if r is not None:
        out["reranker"] = f"cross-encoder:{r.model}" if r.enabled else "none"
    g = getattr(c, "generation", None)
    if g is not None:
        out["generator"] = "extractive" if g.backend == "extractive" else f"{g.backend}:{g.model}"
    return out


def run_info(pipeline) -> RunInfo:
    commit, dirty = git_state()
    return RunInfo(pipeline.config.hash, pipeline.config.results_hash, model_ids(pipeline), commit, dirty)


# --------------------------------------------------------------------------- records
@dataclass(frozen=True)
class BatchFailure:
    type: str
    message: str


@dataclass(frozen=True)
class BatchRecord:
    """One line of the results file."""

    id: str
    index: int
    question: str
    status: str  # answered | insufficient_evidence | failed
    reason: str
    config_hash: str
    results_hash: str
    models: Mapping[str, str]
    git_commit: str | None
    latency_ms: float  # wall time of this question in flight
    timings_ms: Mapping[str, float]  # per stage, from the answer's trace
    prompt_tokens: int
    completion_tokens: int
    attempts: int
    result: Mapping[str, Any] | None  # the answer's to_json(); None when answering raised
    error: BatchFailure | None = None
    gold: Mapping[str, Any] = field(default_factory=dict)
    # who it was answered for: ``{"user", "groups", "tenant"}``; None: anonymous; UNRECORDED: a line
    # written before batch lines named their principal
    principal: Mapping[str, Any] | None | str = None

    def __post_init__(self) -> None:
        for name in ("models", "timings_ms", "gold"):
            object.__setattr__(self, name, MappingProxyType(dict(getattr(self, name))))
        if self.result is not None:
            object.__setattr__(self, "result", MappingProxyType(dict(self.result)))
        if isinstance(self.principal, Mapping):
            object.__setattr__(self, "principal", MappingProxyType(dict(self.principal)))

    def answered_for(self, principal: Any) -> bool:
        """Whether this line was answered for ``principal`` (a :class:`rag.access.Principal` or None);
        a line that did not record its principal counts as answered for the anonymous caller."""
        mine = None if principal is None or principal.anonymous else principal.to_json()
        if self.principal == UNRECORDED:
            return mine is None
        return (dict(self.principal) if self.principal is not None else None) == mine

    def to_json(self) -> dict:
        return {
            "schema": SCHEMA, "id": self.id, "index": self.index, "status": self.status, "reason": self.reason,
            "question": self.question, "config_hash": self.config_hash, "results_hash": self.results_hash,
            "models": dict(self.models), "git_commit": self.git_commit, "latency_ms": round(self.latency_ms, 3),
            "timings_ms": {k: round(v, 3) for k, v in self.timings_ms.items()},
            "usage": {"prompt_tokens": self.prompt_tokens, "completion_tokens": self.completion_tokens},
            "attempts": self.attempts,
            "error": None if self.error is None else {"type": self.error.type, "message": self.error.message},
            "gold": dict(self.gold),
            **({} if self.principal == UNRECORDED else
               {"principal": None if self.principal is None else dict(self.principal)}),
            "result": None if self.result is None else dict(self.result),
        }

    def to_line(self) -> str:
        """The record as one results-file line (compact JSON, UTF-8 kept, newline-terminated)."""
        return json.dumps(self.to_json(), ensure_ascii=False) + "\n"

    @classmethod
    def from_json(cls, d: Any) -> "BatchRecord":
        """Parse one line's object; raises ValueError when it is not a batch record."""
        if not isinstance(d, dict) or d.get("schema") != SCHEMA:
            raise ValueError(f"not a {SCHEMA} record")
        try:
            err = d.get("error")
            usage = d.get("usage") or {}
            return cls(
                id=str(d["id"]), index=int(d["index"]), question=str(d.get("question", "")), status=str(d["status"]),
                reason=str(d.get("reason", "")), config_hash=str(d["config_hash"]),
                results_hash=str(d.get("results_hash", d["config_hash"])), models=dict(d.get("models") or {}),
                git_commit=d.get("git_commit"), latency_ms=float(d.get("latency_ms") or 0.0),
                timings_ms={str(k): float(v) for k, v in (d.get("timings_ms") or {}).items()},
                prompt_tokens=int(usage.get("prompt_tokens") or 0),
                completion_tokens=int(usage.get("completion_tokens") or 0), attempts=int(d.get("attempts") or 0),
                result=d.get("result"), error=BatchFailure(str(err["type"]), str(err["message"])) if err else None,
                gold=dict(d.get("gold") or {}),
                principal=_principal(d["principal"]) if "principal" in d else UNRECORDED,
            )
        except (KeyError, TypeError, ValueError) as exc:
            raise ValueError(f"malformed {SCHEMA} record ({exc})") from None


def _principal(value: Any) -> Mapping[str, Any] | None:
    if value is None:
        return None
    if not isinstance(value, dict):
        raise ValueError(f"principal must be an object or null, got {value!r:.60}")
    return value


def _get(obj: Any, name: str, default: Any = None) -> Any:
    if obj is None:
        return default
    if isinstance(obj, Mapping):
        return obj.get(name, default)
    return getattr(obj, name, default)


def trace_numbers(result: Any) -> tuple[dict[str, float], int, int, int]:
    """(timings_ms per stage, prompt tokens, completion tokens, attempts) from an answer's trace."""
    trace = _get(result, "trace")
    timings = _get(trace, "timings_ms") or {}
    usage = _get(trace, "usage")
    attempts = _get(trace, "attempts", 0)
    if isinstance(attempts, (list, tuple)):
        attempts = len(attempts)
    out_t = {}
    for k, v in dict(timings).items():
        try:
            f = float(v)
        except (TypeError, ValueError):
            continue
        if math.isfinite(f):
            out_t[str(k)] = f
    return (out_t, int(_get(usage, "prompt_tokens", 0) or 0), int(_get(usage, "completion_tokens", 0) or 0),
            int(attempts or 0))


def make_record(q: BatchQuestion, info: RunInfo, result: Any | None, latency_ms: float,
                error: BaseException | None = None) -> BatchRecord:
    who = None if q.principal is None or q.principal.anonymous else q.principal.to_json()
    common = dict(id=q.id, index=q.index, question=q.question, config_hash=info.config_hash,
                  results_hash=info.results_hash, models=info.models, git_commit=info.git_commit,
                  latency_ms=latency_ms, gold=q.gold, principal=who)
    if error is not None:
        msg = str(error) or type(error).__name__
        return BatchRecord(status="failed", reason="exception", timings_ms={}, prompt_tokens=0, completion_tokens=0,
                           attempts=0, result=None, error=BatchFailure(type(error).__name__, msg), **common)
    timings, pt, ct, attempts = trace_numbers(result)
    status = str(_get(result, "status", "failed"))
    if status not in STATUSES:
        return BatchRecord(status="failed", reason="bad_status", timings_ms=timings, prompt_tokens=pt,
                           completion_tokens=ct, attempts=attempts, result=None,
                           error=BatchFailure("BadStatus", f"the answerer returned status {status!r}"), **common)
    try:
        payload = result.to_json()
        json.dumps(payload, ensure_ascii=False)
    except Exception as exc:  # noqa: BLE001 - a result we cannot serialize is this question's failure
        return BatchRecord(status="failed", reason="unserializable", timings_ms=timings, prompt_tokens=pt,
                           completion_tokens=ct, attempts=attempts, result=None,
                           error=BatchFailure(type(exc).__name__, f"result.to_json() failed: {exc}"), **common)
    return BatchRecord(status=status, reason=str(_get(result, "reason", "") or ""), timings_ms=timings, prompt_tokens=pt,
                       completion_tokens=ct, attempts=attempts, result=payload, error=None, **common)
