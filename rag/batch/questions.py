"""Reading a questions file for a batch run: JSONL or plain text, checked line by line.

JSONL: ``{"id", "question", "history"?, "previous_citations"?, "principal"?, "filters"?}`` per line
(``history``: earlier turns, an assistant turn with its ``citations``; ``previous_citations``: the
previous answer's, added to the history's last assistant turn; ``principal``:
``{"user", "groups", "tenant"}``, who asks; a line without one uses the run's default, e.g. ``rag
batch --as``; ``filters``: ``{"document_ids", "versions", "fields"}`` as the service takes them);
any other field is kept as ``gold`` for evaluation. Plain text: one question a line; its
id is ``t-`` + the first 12 hex digits of the question's SHA-1, so the same text keeps its id when
lines move.

A line that repeats an earlier one (the same id, question, history, principal, filters and other
fields; in a text file, the same question) is not an error: the question is answered once, and
the repeat is reported (:class:`RepeatedLine`, a warning). An id used again for anything else is
a bad line (``duplicate_id``): answering once would lose one of the two.
"""
from __future__ import annotations

import hashlib
import logging
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Any, Literal, Mapping, Sequence

from rag._io import parse_json_object
from rag.access.model import Principal
from rag.errors import ConfigError, InputError
from rag.fields import parse_fields
from rag.types import SearchFilter, Turn, citation_ids, turns_from_json, with_previous_citations

logger = logging.getLogger(__name__)

MAX_LISTED_PROBLEMS = 20


class BatchInputError(InputError):
    """The questions file is missing, unreadable, or has malformed lines or an id used for two
    different questions."""

    def __init__(self, message: str, problems: Sequence["InputProblem"] = ()) -> None:
        super().__init__(message)
        self.problems = tuple(problems)


@dataclass(frozen=True)
class BatchQuestion:
    id: str
    question: str
    line: int  # 1-based line number in the input file
    index: int  # 0-based position among the valid questions of the input
    history: tuple[Turn, ...] = ()
    gold: Mapping[str, Any] = field(default_factory=dict)  # the input line's other fields (expected answers …)
    principal: Principal | None = None  # who asks (None: anonymous)
    where: SearchFilter | None = None  # the line's filters

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
class RepeatedLine:
    """An input line that repeats line ``first_line`` exactly (same id and the same question, history,
    principal, filters and other fields): the question is answered once, for both."""

    line: int
    id: str
    first_line: int

    def describe(self, path: Path | str = "") -> str:
        where = f"{path}:{self.line}" if str(path) else f"line {self.line}"
        return f"{where}: repeats line {self.first_line} (id {self.id!r}); answered once"

    def to_json(self) -> dict:
        return {"line": self.line, "id": self.id, "first_line": self.first_line}


@dataclass(frozen=True)
class QuestionSet:
    path: Path
    format: Literal["jsonl", "text"]
    questions: tuple[BatchQuestion, ...]
    problems: tuple[InputProblem, ...]  # lines skipped (only with on_invalid="skip")
    repeated: tuple[RepeatedLine, ...] = ()  # lines that repeat an earlier one: answered once with it


def differences(first: BatchQuestion, other: BatchQuestion) -> list[str]:
    """What ``other`` asks differently from ``first`` (empty: it repeats it; line and position aside)."""
    return [name for name, a, b in (
        ("question", first.question, other.question), ("history", first.history, other.history),
        ("principal", first.principal, other.principal), ("filters", first.where, other.where),
        ("other fields", dict(first.gold), dict(other.gold))) if a != b]


def fold_repeats(questions: Sequence[BatchQuestion]) -> tuple[list[BatchQuestion], list[RepeatedLine]]:
    """``questions`` with each exact repeat of an earlier id left out, and those repeats. An id used
    for two different questions raises :class:`BatchInputError`."""
    first: dict[str, BatchQuestion] = {}
    kept: list[BatchQuestion] = []
    repeats: list[RepeatedLine] = []
    for q in questions:
        seen = first.get(q.id)
        if seen is None:
            first[q.id] = q
            kept.append(q)
            continue
        diff = differences(seen, q)
        if diff:
            raise BatchInputError(f"question id {q.id!r} is used for two different questions (lines {seen.line} and "
                                  f"{q.line} differ in {', '.join(diff)}); give each its own id")
        repeats.append(RepeatedLine(q.line, q.id, seen.line))
    return kept, repeats


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


def _line_filter(obj: dict, declared: Mapping[str, str]) -> SearchFilter | None:
    """A line's ``"filters"`` (``{"document_ids", "versions", "fields"}``, as the service takes them)."""
    f = obj.get("filters")
    if f is None:
        return None
    if not isinstance(f, dict) or set(f) - {"document_ids", "versions", "fields"}:
        raise ValueError("'filters' must be an object with document_ids, versions and/or fields")
    ids, versions = f.get("document_ids") or [], f.get("versions") or []
    if not all(isinstance(x, list) and all(isinstance(v, str) and v for v in x) for x in (ids, versions)):
        raise ValueError("'filters': document_ids and versions must be lists of non-empty strings")
    try:
        where = SearchFilter(tuple(ids), tuple(versions), fields=parse_fields(f.get("fields"), declared))
    except InputError as exc:
        raise ValueError(f"'filters': {exc}") from None
    return where or None


def _parse_jsonl_line(text: str, declared: Mapping[str, str] | None = None
                      ) -> tuple[str, str, tuple[Turn, ...], dict, Principal | None, bool, SearchFilter | None]:
    obj = parse_json_object(text)
    q = obj.get("question")
    if not isinstance(q, str) or not q.strip():
        raise ValueError("missing or empty 'question' (a non-empty string)")
    qid = obj.get("id")
    if qid is None:
        qid = text_id(q.strip())
    elif isinstance(qid, bool) or not isinstance(qid, (str, int)) or not str(qid).strip():
        raise ValueError(f"'id' must be a non-empty string or integer, got {qid!r}")
    gold = {k: v for k, v in obj.items()
            if k not in ("id", "question", "history", "previous_citations", "principal", "filters")}
    try:
        principal = Principal.parse(obj.get("principal"), "'principal'")
    except InputError as exc:
        raise ValueError(str(exc)) from None
    where = _line_filter(obj, declared or {})
    history = with_previous_citations(turns_from_json(obj.get("history")),
                                      citation_ids(obj.get("previous_citations"), "'previous_citations'"))
    return (str(qid).strip(), q.strip(), history, gold, principal, "principal" in obj, where)


def read_questions(path: str | Path, *, format: Literal["auto", "jsonl", "text"] = "auto",
                   on_invalid: Literal["stop", "skip"] = "stop", principal: Principal | None = None,
                   filter_fields: Mapping[str, str] | None = None) -> QuestionSet:
    """Read and check a questions file. ``principal``: who asks the questions of lines that name
    none (a line's ``"principal"``, even ``null``, replaces it). ``filter_fields``: the fields a
    line's ``"filters"`` may name (``retrieval.filter_fields``).

    Malformed lines and ids used again for another question are collected with their line
    numbers; with ``on_invalid="stop"`` any problem raises :class:`BatchInputError` listing them,
    with ``"skip"`` those lines are left out (the first line of a duplicated id is kept) and
    returned in ``problems``. A line that repeats an earlier one exactly is no problem: it is left
    out of ``questions`` (answered once, with the first) and listed in ``repeated``."""
    if on_invalid not in ("stop", "skip"):
        raise ConfigError(f"on_invalid must be 'stop' or 'skip', got {on_invalid!r}")
    if format not in ("auto", "jsonl", "text"):
        raise ConfigError(f"format must be auto, jsonl or text, got {format!r}")
    p = Path(path)
    lines = _file_lines(p)
    fmt = _sniff(p, lines) if format == "auto" else format
    problems: list[InputProblem] = []
    questions: list[BatchQuestion] = []
    repeated: list[RepeatedLine] = []
    first: dict[str, BatchQuestion] = {}
    for lineno, raw in enumerate(lines, 1):
        bq = _line_question(lineno, raw, fmt, len(questions), principal, filter_fields)
        if bq is None:
            continue
        if isinstance(bq, InputProblem):
            problems.append(bq)
            continue
        seen = first.get(bq.id)
        if seen is not None:
            diff = differences(seen, bq)
            if not diff:  # the same question again: answered once
                repeated.append(RepeatedLine(lineno, bq.id, seen.line))
                continue
            problems.append(InputProblem(lineno, "duplicate_id",
                                         f"id {bq.id!r} already used on line {seen.line} for another question "
                                         f"(they differ in {', '.join(diff)}); give this line its own id"))
            continue
        first[bq.id] = bq
        questions.append(bq)
    _report(p, fmt, questions, problems, repeated, on_invalid)
    return QuestionSet(p, fmt, tuple(questions), tuple(problems), tuple(repeated))


def _file_lines(p: Path) -> list[bytes]:
    """The file's lines as bytes (a UTF-8 byte order mark dropped); :class:`BatchInputError` when
    it is missing or unreadable."""
    if not p.is_file():
        raise BatchInputError(f"questions file not found: {p} (give a JSONL file of {{\"id\", \"question\"}} "
                              "objects or a text file with one question a line)")
    try:
        data = p.read_bytes()
    except OSError as exc:
        raise BatchInputError(f"{p}: cannot read ({exc.strerror})") from None
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
    return data.split(b"\n")


def _line_question(lineno: int, raw: bytes, fmt: str, index: int, principal: Principal | None,
                   filter_fields: Mapping[str, str] | None) -> BatchQuestion | InputProblem | None:
    """One line as the question it asks (``index``: its position among the questions so far), the
    problem that makes it a bad line, or None for a blank line."""
    raw = raw.rstrip(b"\r")
    if not raw.strip():
        return None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        return InputProblem(lineno, "malformed", f"not valid UTF-8 (byte {exc.start}: {exc.reason})")
    if fmt == "text":
        q = text.strip()
        return BatchQuestion(text_id(q), q, lineno, index, (), {}, principal, None)
    try:
        qid, q, history, gold, own, named, where = _parse_jsonl_line(text, filter_fields)
    except ValueError as exc:
        return InputProblem(lineno, "malformed", str(exc))
    return BatchQuestion(qid, q, lineno, index, history, gold, own if named else principal, where)


def _report(p: Path, fmt: str, questions: list[BatchQuestion], problems: list[InputProblem],
            repeated: list[RepeatedLine], on_invalid: str) -> None:
    """Stop on bad lines (``on_invalid="stop"``: :class:`BatchInputError` listing them), else log each
    skipped and repeated line; stop when no question is left."""
    if problems and on_invalid == "stop":
        shown = "\n".join("  " + pr.describe(p) for pr in problems[:MAX_LISTED_PROBLEMS])
        more = f"\n  … and {len(problems) - MAX_LISTED_PROBLEMS} more" if len(problems) > MAX_LISTED_PROBLEMS else ""
        raise BatchInputError(f"{p}: {len(problems)} bad input line(s); fix them, or skip them with "
                              f"--on-invalid skip:\n{shown}{more}", problems)
    for pr in problems:
        logger.warning("skipping %s", pr.describe(p))
    for r in repeated:
        logger.warning("%s", r.describe(p))
    if not questions:
        raise BatchInputError(f"{p}: no questions (expected {'JSONL objects with a question' if fmt == 'jsonl' else 'one question a line'})",
                              problems)
