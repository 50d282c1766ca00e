"""Batch answering: many questions through one answerer, resumable and crash-safe.

Input: JSONL (``{"id", "question", "history"?}`` per line; any other field is kept as
``gold`` for evaluation) or plain text (one question a line; its id is ``t-`` + the first
12 hex digits of the question's SHA-1, so the same text keeps its id when lines move).

Output: one :class:`BatchRecord` per line (JSON), carrying the question id and input
position, the config hash, the model ids and the git commit, and the answer's JSON.

Guarantees
- *Crash safety.* Each line is written with one ``write`` on an ``O_APPEND`` descriptor,
  then ``fsync``'d: a kill (even ``kill -9``) loses at most the questions in flight. A
  crash inside a write can leave only an unterminated last line; the next run moves it to
  ``OUTPUT.partial``, truncates the file to its last complete line, logs a warning and
  answers that question again.
- *Resume.* A rerun skips every id already in the output (``retry_failed`` reruns those
  whose latest line is ``failed``; the later line supersedes the earlier). An output whose
  lines were written under another configuration is refused (``force`` starts it over).
- *Failures.* An exception while answering one question becomes a ``failed`` line with the
  error type and message; the batch goes on (up to ``max_consecutive_failures`` in a row).
- *Order.* Questions are started in input order and at most ``concurrency`` are in flight.
  With an async answerer (``Pipeline.aanswer``), :meth:`BatchRunner.run` gives the event loop
  a one-thread default executor, so what ``aanswer`` hands to ``asyncio.to_thread``
  (retrieval, reranking, prompt building) runs one question at a time in input order, and
  only the awaited generation step overlaps. Retrieval results never depend on the order
  (read-only index, deterministic tie-breaks). A sync-only answerer runs in a thread pool of
  ``concurrency`` workers. Lines are appended in completion order and each identifies
  itself (``id``, ``index``); when the run finishes, the file is rewritten atomically in
  input order, one line per id (latest wins), so a finished batch is byte-identical in
  layout whatever the concurrency (only timings differ).
"""
from __future__ import annotations

import asyncio
import errno
import fcntl
import hashlib
import inspect
import json
import logging
import math
import os
import subprocess
import time
from concurrent.futures import FIRST_COMPLETED, ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Any, Callable, Iterable, Literal, Mapping, Protocol, Sequence

from rag._io import fsync_dir
from rag.errors import ConfigError, InputError, RagError
from rag.types import Turn, turns_from_json

logger = logging.getLogger(__name__)

SCHEMA = "rag.batch/1"
STATUSES = ("answered", "insufficient_evidence", "failed")
MAX_LISTED_PROBLEMS = 20


# --------------------------------------------------------------------------- errors
class BatchInputError(InputError):
    """The questions file is missing, unreadable, or has malformed / duplicate lines."""

    def __init__(self, message: str, problems: Sequence["InputProblem"] = ()) -> None:
        super().__init__(message)
        self.problems = tuple(problems)


class OutputFileError(RagError):
    """The results file cannot be appended to safely (another config, corrupt line, locked)."""


class BatchAbortedError(RagError):
    """Too many questions failed in a row; the lines written so far are kept."""


# --------------------------------------------------------------------------- the answerer protocol
class AnswerLike(Protocol):
    """What an answerer returns (``rag.pipeline.AnswerResult`` satisfies it)."""

    status: str

    def to_json(self) -> dict: ...


class Answerer(Protocol):
    def answer(self, question: str, history: Sequence[Any] = ()) -> AnswerLike: ...

    async def aanswer(self, question: str, history: Sequence[Any] = ()) -> AnswerLike: ...


# --------------------------------------------------------------------------- input
@dataclass(frozen=True)
class BatchQuestion:
    id: str
    question: str
    line: int  # 1-based line number in the input file
    index: int  # 0-based position among the valid questions of the input
    history: tuple[Turn, ...] = ()
    gold: Mapping[str, Any] = field(default_factory=dict)  # the input line's other fields (expected answers …)

    def __post_init__(self) -> None:
        object.__setattr__(self, "gold", MappingProxyType(dict(self.gold)))


@dataclass(frozen=True)
class InputProblem:
    line: int
    kind: Literal["malformed", "duplicate_id"]
    message: str

    def describe(self, path: Path | str) -> str:
        return f"{path}:{self.line}: {self.kind}: {self.message}"


@dataclass(frozen=True)
class QuestionSet:
    path: Path
    format: Literal["jsonl", "text"]
    questions: tuple[BatchQuestion, ...]
    problems: tuple[InputProblem, ...]  # lines skipped (only with on_invalid="skip")


def text_id(question: str) -> str:
    return "t-" + hashlib.sha1(question.encode("utf-8")).hexdigest()[:12]


def _sniff(path: Path, lines: Sequence[bytes]) -> Literal["jsonl", "text"]:
    suffix = path.suffix.lower()
    if suffix in (".jsonl", ".ndjson"):
        return "jsonl"
    if suffix in (".txt", ".text"):
        return "text"
    for raw in lines:
        s = raw.strip()
        if s:
            return "jsonl" if s.startswith(b"{") else "text"
    return "text"


def _parse_jsonl_line(text: str) -> tuple[str, str, tuple[Turn, ...], dict]:
    try:
        obj = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ValueError(f"not valid JSON ({exc.msg} at column {exc.colno})") from None
    if not isinstance(obj, dict):
        raise ValueError(f"expected a JSON object, got {type(obj).__name__}")
    q = obj.get("question")
    if not isinstance(q, str) or not q.strip():
        raise ValueError("missing or empty 'question' (a non-empty string)")
    qid = obj.get("id")
    if qid is None:
        qid = text_id(q.strip())
    elif isinstance(qid, bool) or not isinstance(qid, (str, int)) or not str(qid).strip():
        raise ValueError(f"'id' must be a non-empty string or integer, got {qid!r}")
    gold = {k: v for k, v in obj.items() if k not in ("id", "question", "history")}
    return str(qid).strip(), q.strip(), turns_from_json(obj.get("history")), gold


def read_questions(path: str | Path, *, format: Literal["auto", "jsonl", "text"] = "auto",
                   on_invalid: Literal["stop", "skip"] = "stop") -> QuestionSet:
    """Read and check a questions file.

    Malformed lines and duplicate ids are collected with their line numbers; with
    ``on_invalid="stop"`` any problem raises :class:`BatchInputError` listing them, with
    ``"skip"`` those lines are left out (the first line of a duplicated id is kept) and
    returned in ``problems``."""
    if on_invalid not in ("stop", "skip"):
        raise ConfigError(f"on_invalid must be 'stop' or 'skip', got {on_invalid!r}")
    if format not in ("auto", "jsonl", "text"):
        raise ConfigError(f"format must be auto, jsonl or text, got {format!r}")
    p = Path(path)
    if not p.is_file():
        raise BatchInputError(f"questions file not found: {p} (give a JSONL file of {{\"id\", \"question\"}} "
                              "objects or a text file with one question a line)")
    try:
        data = p.read_bytes()
    except OSError as exc:
        raise BatchInputError(f"{p}: cannot read ({exc.strerror})") from None
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
    lines = data.split(b"\n")
    fmt = _sniff(p, lines) if format == "auto" else format
    problems: list[InputProblem] = []
    questions: list[BatchQuestion] = []
    first_line: dict[str, int] = {}
    for lineno, raw in enumerate(lines, 1):
        raw = raw.rstrip(b"\r")
        if not raw.strip():
            continue
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            problems.append(InputProblem(lineno, "malformed", f"not valid UTF-8 (byte {exc.start}: {exc.reason})"))
            continue
        if fmt == "text":
            q = text.strip()
            qid, history, gold = text_id(q), (), {}
        else:
            try:
                qid, q, history, gold = _parse_jsonl_line(text)
            except ValueError as exc:
                problems.append(InputProblem(lineno, "malformed", str(exc)))
                continue
        if qid in first_line:
            problems.append(InputProblem(lineno, "duplicate_id",
                                         f"id {qid!r} already used on line {first_line[qid]}"))
            continue
        first_line[qid] = lineno
        questions.append(BatchQuestion(qid, q, lineno, len(questions), history, gold))
    if problems and on_invalid == "stop":
        shown = "\n".join("  " + pr.describe(p) for pr in problems[:MAX_LISTED_PROBLEMS])
        more = f"\n  … and {len(problems) - MAX_LISTED_PROBLEMS} more" if len(problems) > MAX_LISTED_PROBLEMS else ""
        raise BatchInputError(f"{p}: {len(problems)} bad input line(s); fix them, or skip them with "
                              f"--on-invalid skip:\n{shown}{more}", problems)
    for pr in problems:
        logger.warning("skipping %s", pr.describe(p))
    if not questions:
        raise BatchInputError(f"{p}: no questions (expected {'JSONL objects with a question' if fmt == 'jsonl' else 'one question a line'})",
                              problems)
    return QuestionSet(p, fmt, tuple(questions), tuple(problems))


# --------------------------------------------------------------------------- run identity
@dataclass(frozen=True)
class RunInfo:
    """Stamped on every line: what produced it."""

    config_hash: str  # RagConfig.hash
    results_hash: str  # the config without its ``batch`` section: resume requires it to match
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


def results_hash(config) -> str:
    """Hash of every setting that can change an answer: the config minus its ``batch`` section."""
    d = config.model_dump(mode="json")
    d.pop("batch", None)
    return hashlib.sha256(json.dumps(d, sort_keys=True, ensure_ascii=False).encode()).hexdigest()[:16]


def model_ids(pipeline) -> dict[str, str]:
    """The models a pipeline answers with, without loading any of them."""
    own = getattr(pipeline, "model_ids", None)
    if callable(own):
        return {str(k): str(v) for k, v in own().items()}
    c = pipeline.config
    out = {"embedding": str(getattr(pipeline.embedder, "model_id", f"{c.embedding.backend}:{c.embedding.model}"))}
    r = getattr(c, "rerank", None)
    if r is not None:
        out["reranker"] = f"cross-encoder:{r.model}" if r.enabled else "none"
    g = getattr(c, "generation", None)
    if g is not None:
        out["generator"] = "extractive" if g.backend == "extractive" else f"{g.backend}:{g.model}"
    return out


def run_info(pipeline) -> RunInfo:
    commit, dirty = git_state()
    return RunInfo(pipeline.config.hash, results_hash(pipeline.config), model_ids(pipeline), commit, dirty)


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

    def __post_init__(self) -> None:
        for name in ("models", "timings_ms", "gold"):
            object.__setattr__(self, name, MappingProxyType(dict(getattr(self, name))))
        if self.result is not None:
            object.__setattr__(self, "result", MappingProxyType(dict(self.result)))

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
            "result": None if self.result is None else dict(self.result),
        }

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
            )
        except (KeyError, TypeError, ValueError) as exc:
            raise ValueError(f"malformed {SCHEMA} record ({exc})") from None


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
    common = dict(id=q.id, index=q.index, question=q.question, config_hash=info.config_hash,
                  results_hash=info.results_hash, models=info.models, git_commit=info.git_commit,
                  latency_ms=latency_ms, gold=q.gold)
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


# --------------------------------------------------------------------------- the results file
@dataclass(frozen=True)
class ExistingOutput:
    records: Mapping[str, BatchRecord]  # latest line per id
    lines: int
    superseded: int  # earlier lines of an id that appears again (retry of a failure)
    repaired_bytes: int  # length of an unterminated last line moved to OUTPUT.partial (0: none)


def scan_output(path: Path, *, repair: bool = True) -> ExistingOutput:
    """Read an existing results file. An unterminated last line (a crash while writing) is
    moved to ``PATH.partial`` and cut off when ``repair``; any other unreadable line raises
    :class:`OutputFileError` with its line number."""
    if not path.exists():
        return ExistingOutput({}, 0, 0, 0)
    if not path.is_file():
        raise OutputFileError(f"output {path} exists and is not a regular file")
    data = path.read_bytes()
    cut = data.rfind(b"\n") + 1
    tail = data[cut:]
    repaired = 0
    if tail:
        if not repair:
            raise OutputFileError(f"{path}: the last line is incomplete (a crash while writing)")
        with open(f"{path}.partial", "ab") as fh:
            fh.write(tail + b"\n")
            fh.flush()
            os.fsync(fh.fileno())
        with open(path, "r+b") as fh:
            fh.truncate(cut)
            fh.flush()
            os.fsync(fh.fileno())
        repaired = len(tail)
        n_line = data[:cut].count(b"\n") + 1
        logger.warning("%s: line %d was cut short (the process was killed while writing it); moved its %d bytes "
                       "to %s.partial and will answer that question again", path, n_line, repaired, path)
    records: dict[str, BatchRecord] = {}
    lines = superseded = 0
    for lineno, raw in enumerate(data[:cut].split(b"\n")[:-1], 1):
        if not raw.strip():
            continue
        try:
            rec = BatchRecord.from_json(json.loads(raw.decode("utf-8")))
        except (UnicodeDecodeError, ValueError) as exc:
            raise OutputFileError(
                f"{path}:{lineno}: not a rag batch result line ({exc}). This file was not written by "
                "`rag batch` or was edited; write to another file with -o, or pass --force to start it over") from None
        lines += 1
        if rec.id in records:
            superseded += 1
        records[rec.id] = rec
    return ExistingOutput(MappingProxyType(records), lines, superseded, repaired)


class ResultWriter:
    """Appends whole lines with one ``write`` each on an ``O_APPEND`` descriptor, then fsyncs.

    Holds an exclusive ``flock`` on the file while open, so two batches never write one file."""

    def __init__(self, path: Path, *, fsync: bool = True) -> None:
        self.path = path
        self.fsync = fsync
        created = not path.exists()
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise OutputFileError(f"cannot create the folder of {path} ({exc.strerror})") from None
        try:
            self._fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        except OSError as exc:
            raise OutputFileError(f"cannot open {path} for appending ({exc.strerror}); give a writable file path "
                                  "with -o") from None
        try:
            fcntl.flock(self._fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as exc:
            os.close(self._fd)
            if exc.errno in (errno.EWOULDBLOCK, errno.EAGAIN, errno.EACCES):
                raise OutputFileError(f"{path} is being written by another `rag batch`; wait for it or use "
                                      "another -o") from None
            raise
        if created and fsync:
            fsync_dir(path.parent)

    def append(self, record: BatchRecord) -> None:
        data = (json.dumps(record.to_json(), ensure_ascii=False) + "\n").encode("utf-8")
        view = memoryview(data)
        while view:
            n = os.write(self._fd, view)
            view = view[n:]
        if self.fsync:
            os.fsync(self._fd)

    def close(self) -> None:
        if self._fd >= 0:
            os.close(self._fd)
            self._fd = -1

    def __enter__(self) -> "ResultWriter":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def compact_output(path: Path, order: Mapping[str, int], *, fsync: bool = True) -> int:
    """Rewrite the results file atomically: one line per id (the latest), in input order
    (ids not in ``order`` last, by their recorded index then id). Returns the line count."""
    existing = scan_output(path, repair=True)
    recs = sorted(existing.records.values(),
                  key=lambda r: (order.get(r.id, math.inf), r.index, r.id))
    tmp = path.with_name(f".{path.name}.sorting-{os.getpid()}")
    with open(tmp, "wb") as fh:
        for r in recs:
            fh.write((json.dumps(r.to_json(), ensure_ascii=False) + "\n").encode("utf-8"))
        fh.flush()
        if fsync:
            os.fsync(fh.fileno())
    os.replace(tmp, path)
    if fsync:
        fsync_dir(path.parent)
    return len(recs)


# --------------------------------------------------------------------------- summary
@dataclass(frozen=True)
class LatencyStats:
    n: int
    p50: float
    p95: float
    mean: float
    max: float

    @classmethod
    def of(cls, values: Sequence[float]) -> "LatencyStats":
        import numpy as np

        a = np.asarray([v for v in values if math.isfinite(v)], dtype=np.float64)
        if not len(a):
            return cls(0, math.nan, math.nan, math.nan, math.nan)
        return cls(len(a), float(np.percentile(a, 50)), float(np.percentile(a, 95)), float(a.mean()), float(a.max()))


@dataclass(frozen=True)
class BatchSummary:
    questions: int  # distinct ids in the output
    answered: int
    insufficient_evidence: int
    failed: int
    reasons: Mapping[str, int]  # status/reason -> count
    latency_ms: Mapping[str, LatencyStats]  # per stage (the answer's timings_ms), plus "wall" (time in flight)
    prompt_tokens: int
    completion_tokens: int
    attempts_mean: float

    def to_json(self) -> dict:
        def num(x: float) -> float | None:
            return None if math.isnan(x) else round(x, 3)

        return {"questions": self.questions, "answered": self.answered,
                "insufficient_evidence": self.insufficient_evidence, "failed": self.failed,
                "reasons": dict(self.reasons),
                "latency_ms": {k: {"n": s.n, "p50": num(s.p50), "p95": num(s.p95), "mean": num(s.mean),
                                   "max": num(s.max)} for k, s in self.latency_ms.items()},
                "tokens": {"prompt": self.prompt_tokens, "completion": self.completion_tokens},
                "attempts_mean": num(self.attempts_mean)}

    def table(self) -> str:
        """A plain-text summary for the terminal."""
        n = max(1, self.questions)
        lines = [f"{'questions':<24}{self.questions:>8}"]
        for label, v in (("answered", self.answered), ("abstained", self.insufficient_evidence),
                         ("failed", self.failed)):
            lines.append(f"{label:<24}{v:>8}  {100 * v / n:5.1f}%")
        if self.reasons:
            lines.append("reasons: " + ", ".join(f"{k} {v}" for k, v in self.reasons.items()))
        lines.append(f"tokens: prompt {self.prompt_tokens}, completion {self.completion_tokens}"
                     + ("" if math.isnan(self.attempts_mean) else f"; attempts/question {self.attempts_mean:.2f}"))
        lines.append("")
        lines.append(f"{'latency (ms)':<24}{'n':>7}{'p50':>11}{'p95':>11}{'max':>11}")
        for stage, s in self.latency_ms.items():
            lines.append(f"{stage:<24}{s.n:>7}{s.p50:>11.1f}{s.p95:>11.1f}{s.max:>11.1f}")
        return "\n".join(lines)


def summarize(records: Iterable[BatchRecord]) -> BatchSummary:
    recs = list(records)
    counts = {s: sum(1 for r in recs if r.status == s) for s in STATUSES}
    reasons: dict[str, int] = {}
    for r in recs:
        key = f"{r.status}:{r.error.type if r.error else r.reason or '-'}"
        reasons[key] = reasons.get(key, 0) + 1
    stages: dict[str, list[float]] = {}
    for r in recs:
        for k, v in r.timings_ms.items():
            stages.setdefault(k, []).append(v)
    lat = {k: LatencyStats.of(stages[k]) for k in stages}  # stage order of first appearance
    lat["wall"] = LatencyStats.of([r.latency_ms for r in recs])
    with_attempts = [r.attempts for r in recs if r.status != "failed" or r.attempts]
    return BatchSummary(
        len(recs), counts["answered"], counts["insufficient_evidence"], counts["failed"], dict(sorted(reasons.items())),
        lat, sum(r.prompt_tokens for r in recs), sum(r.completion_tokens for r in recs),
        sum(with_attempts) / len(with_attempts) if with_attempts else math.nan,
    )


# --------------------------------------------------------------------------- the runner
@dataclass(frozen=True)
class BatchOptions:
    concurrency: int = 4
    retry_failed: bool = False
    sort_output: bool = True
    fsync: bool = True
    force: bool = False
    max_consecutive_failures: int | None = 50

    def __post_init__(self) -> None:
        if self.concurrency < 1:
            raise ConfigError(f"batch concurrency must be >= 1, got {self.concurrency}")
        if self.max_consecutive_failures is not None and self.max_consecutive_failures < 1:
            raise ConfigError(f"max_consecutive_failures must be >= 1 or None, got {self.max_consecutive_failures}")

    @classmethod
    def from_config(cls, c, **overrides) -> "BatchOptions":  # c: rag.config.BatchConfig
        base = dict(concurrency=c.concurrency, fsync=c.fsync, max_consecutive_failures=c.max_consecutive_failures)
        base.update({k: v for k, v in overrides.items() if v is not None})
        return cls(**base)


@dataclass(frozen=True)
class BatchStart:
    todo: int  # questions this run will answer
    skipped_existing: int  # already in the output
    repaired_bytes: int  # a cut-off last line was removed (0: none)


@dataclass(frozen=True)
class BatchReport:
    output: Path
    summary: BatchSummary  # over every id in the output (this run and earlier ones)
    processed: int  # questions answered (or failed) by this run
    skipped_existing: int  # ids already in the output
    repaired_bytes: int
    seconds: float
    complete: bool  # every input id has a line


class BatchRunner:
    """``BatchRunner(pipeline, info).run(questions, Path("out.jsonl"))``; see the module docstring."""

    def __init__(self, answerer: Answerer, info: RunInfo, options: BatchOptions | None = None) -> None:
        self.answerer = answerer
        self.info = info
        self.options = options or BatchOptions()

    # -- planning --------------------------------------------------------------
    def plan(self, questions: Sequence[BatchQuestion], output: Path) -> tuple[list[BatchQuestion], ExistingOutput]:
        """The questions still to answer, after checking (and repairing) the output file."""
        opts = self.options
        existing = scan_output(output, repair=True)
        foreign = sorted({r.results_hash for r in existing.records.values()} - {self.info.results_hash})
        if foreign:
            n = sum(1 for r in existing.records.values() if r.results_hash != self.info.results_hash)
            raise OutputFileError(
                f"{output} holds {n} result(s) written under another configuration ({', '.join(foreign[:3])}; this "
                f"run is {self.info.results_hash}). Write to another file with -o, or pass --force to start it over")
        todo = []
        for q in questions:
            rec = existing.records.get(q.id)
            if rec is None or (opts.retry_failed and rec.status == "failed"):
                todo.append(q)
        return todo, existing

    # -- execution -------------------------------------------------------------
    def _is_async(self) -> bool:
        fn = getattr(self.answerer, "aanswer", None)
        return callable(fn) and inspect.iscoroutinefunction(fn)

    def run(self, questions: Sequence[BatchQuestion], output: str | Path,
            progress: Callable[[BatchRecord], None] | None = None,
            on_start: Callable[["BatchStart"], None] | None = None) -> BatchReport:
        """Answer every question not yet in ``output``; see the module docstring for the guarantees.

        ``on_start`` is called once the output is locked, checked and planned; ``progress``
        after each line is written."""
        if self._is_async():
            async def main() -> BatchReport:
                # One worker thread for everything the answerer sends to asyncio.to_thread (the pipeline's
                # retrieval and prompt building): CPU-bound retrieval runs one question at a time, in the
                # order the questions started (input order), while generation awaits overlap.
                asyncio.get_running_loop().set_default_executor(
                    ThreadPoolExecutor(max_workers=1, thread_name_prefix="rag-retrieval"))
                return await self.arun(questions, output, progress, on_start)

            return asyncio.run(main())
        with self._session(questions, output, progress, on_start) as s:
            if s.todo:
                self._run_threads(s.todo, s.state)
        return s.report

    async def arun(self, questions: Sequence[BatchQuestion], output: str | Path,
                   progress: Callable[[BatchRecord], None] | None = None,
                   on_start: Callable[["BatchStart"], None] | None = None) -> BatchReport:
        with self._session(questions, output, progress, on_start) as s:
            if s.todo:
                if self._is_async():
                    await self._run_async(s.todo, s.state)
                else:
                    await asyncio.get_running_loop().run_in_executor(None, self._run_threads, s.todo, s.state)
        return s.report

    def _session(self, questions: Sequence[BatchQuestion], output: str | Path,
                 progress: Callable[[BatchRecord], None] | None,
                 on_start: Callable[["BatchStart"], None] | None = None) -> "_Session":
        ids = [q.id for q in questions]
        if len(set(ids)) != len(ids):
            seen: set[str] = set()
            dup = sorted({i for i in ids if i in seen or seen.add(i)})[:5]
            raise BatchInputError(f"duplicate question ids: {', '.join(dup)}")
        return _Session(self, list(questions), Path(output), progress, on_start)

    async def _one_async(self, q: BatchQuestion) -> BatchRecord:
        t = time.perf_counter()
        try:
            res = await self.answerer.aanswer(q.question, history=q.history)
        except Exception as exc:  # noqa: BLE001 - recorded in the line; the batch goes on
            logger.warning("question %s failed: %s: %s", q.id, type(exc).__name__, exc)
            return make_record(q, self.info, None, (time.perf_counter() - t) * 1e3, exc)
        return make_record(q, self.info, res, (time.perf_counter() - t) * 1e3)

    async def _run_async(self, todo: Sequence[BatchQuestion], state: "_State") -> None:
        sem = asyncio.Semaphore(self.options.concurrency)
        tasks: set[asyncio.Task] = set()

        async def one(q: BatchQuestion) -> None:
            try:
                state.record(await self._one_async(q))
            finally:
                sem.release()

        try:
            for q in todo:  # started in input order; at most `concurrency` in flight
                await sem.acquire()
                state.check()
                t = asyncio.create_task(one(q))
                tasks.add(t)
                t.add_done_callback(tasks.discard)
            while tasks:
                await asyncio.gather(*list(tasks))
            state.check()
        except BaseException:
            for t in list(tasks):
                t.cancel()
            raise

    def _one_sync(self, q: BatchQuestion) -> BatchRecord:
        t = time.perf_counter()
        try:
            res = self.answerer.answer(q.question, history=q.history)
        except Exception as exc:  # noqa: BLE001 - recorded in the line; the batch goes on
            logger.warning("question %s failed: %s: %s", q.id, type(exc).__name__, exc)
            return make_record(q, self.info, None, (time.perf_counter() - t) * 1e3, exc)
        return make_record(q, self.info, res, (time.perf_counter() - t) * 1e3)

    def _run_threads(self, todo: Sequence[BatchQuestion], state: "_State") -> None:
        n = self.options.concurrency
        if n == 1:
            for q in todo:
                state.check()
                state.record(self._one_sync(q))
            state.check()
            return
        pool = ThreadPoolExecutor(max_workers=n, thread_name_prefix="rag-batch")
        pending: set = set()
        try:
            for q in todo:  # submitted in input order; at most `concurrency` in flight
                state.check()
                pending.add(pool.submit(self._one_sync, q))
                if len(pending) >= n:
                    done, pending = wait(pending, return_when=FIRST_COMPLETED)
                    for f in done:
                        state.record(f.result())
            while pending:
                done, pending = wait(pending, return_when=FIRST_COMPLETED)
                for f in done:
                    state.record(f.result())
            state.check()
        finally:
            for f in pending:
                f.cancel()
            pool.shutdown(wait=False, cancel_futures=True)


class _Session:
    """Lock the output, repair and plan; on a clean exit compact and summarize."""

    def __init__(self, runner: BatchRunner, questions: list[BatchQuestion], output: Path,
                 progress: Callable[[BatchRecord], None] | None,
                 on_start: Callable[["BatchStart"], None] | None = None) -> None:
        self.on_start = on_start
        self.runner = runner
        self.questions = questions
        self.output = output
        self.progress = progress
        self.todo: list[BatchQuestion] = []
        self.report: BatchReport | None = None

    def __enter__(self) -> "_Session":
        r = self.runner
        self.t0 = time.perf_counter()
        self.writer = ResultWriter(self.output, fsync=r.options.fsync)  # takes the lock first
        try:
            if r.options.force and self.output.stat().st_size:
                logger.warning("--force: starting %s over", self.output)
                os.ftruncate(self.writer._fd, 0)
            self.todo, self.existing = r.plan(self.questions, self.output)
        except BaseException:
            self.writer.close()
            raise
        self.state = _State(self.writer, self.progress, r.options.max_consecutive_failures)
        if self.on_start is not None:
            self.on_start(BatchStart(len(self.todo), len(self.questions) - len(self.todo),
                                     self.existing.repaired_bytes))
        return self

    def __exit__(self, exc_type, exc, tb) -> None:
        try:
            if exc_type is None:
                final = scan_output(self.output, repair=False)
                complete = all(q.id in final.records for q in self.questions)
                if complete and self.runner.options.sort_output:
                    compact_output(self.output, {q.id: q.index for q in self.questions},
                                   fsync=self.runner.options.fsync)
                    final = scan_output(self.output, repair=False)
                self.report = BatchReport(self.output, summarize(final.records.values()), self.state.written,
                                          len(self.questions) - len(self.todo), self.existing.repaired_bytes,
                                          time.perf_counter() - self.t0, complete)
        finally:
            self.writer.close()


class _State:
    """Writes records (one at a time) and counts consecutive failures."""

    def __init__(self, writer: ResultWriter, progress: Callable[[BatchRecord], None] | None,
                 max_consecutive_failures: int | None) -> None:
        import threading

        self.writer = writer
        self.progress = progress
        self.max_fail = max_consecutive_failures
        self.written = 0
        self.consecutive_failures = 0
        self.last_error: BatchFailure | None = None
        self._lock = threading.Lock()

    def record(self, rec: BatchRecord) -> None:
        with self._lock:
            self.writer.append(rec)
            self.written += 1
            if rec.status == "failed":
                self.consecutive_failures += 1
                self.last_error = rec.error
            else:
                self.consecutive_failures = 0
        if self.progress is not None:
            self.progress(rec)

    def check(self) -> None:
        if self.max_fail is not None and self.consecutive_failures >= self.max_fail:
            err = self.last_error
            raise BatchAbortedError(
                f"stopped after {self.consecutive_failures} questions failed in a row (last: "
                f"{err.type if err else '?'}: {err.message if err else '?'}). The lines written so far are kept; fix "
                "the cause (is the generation server up?) and rerun with --retry-failed")
