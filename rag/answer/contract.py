"""The answer contract: what a generator must return and how the server reads it.

- :class:`AnswerPayload` (``status``, ``answer``, ``citations``), strict and closed; its JSON
  schema is derived from the model (:func:`answer_json_schema`) and tightened to the prompt's
  source ids;
- :func:`parse_payload` reads raw model text (a fence or text around one JSON object is a
  free local repair);
- :class:`Violation`: one typed reason an answer broke the contract;
- :class:`GenerationRequest` / :class:`GenerationOutput` and the :class:`Generator` protocol
  that every generator implements, with the :class:`GeneratorCapabilities` it declares.
"""
from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from rag.context.builder import ContextBundle
from rag.context.prompt import Message

SCHEMA_NAME = "answer_with_citations"
FORMAT_INSTRUCTION = (
    "Reply with one JSON object and nothing else: "
    '{"status": "answered" or "insufficient_evidence", '
    '"answer": the answer, where every sentence ends with the [S#] ids of the sources that support it, '
    '"citations": [{"source_id": "S#", "claim": what that source supports, '
    '"quote": a short passage copied exactly from that source}]}. '
    'If the sources do not answer the question, reply {"status": "insufficient_evidence", "answer": "", '
    '"citations": []}.'
)


class CitationItem(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)

    source_id: str = Field(min_length=1, max_length=16)
    claim: str = Field(min_length=1, max_length=1000)
    quote: str = Field(max_length=2000)


class AnswerPayload(BaseModel):
    """What a generator must produce. Syntax only: the validator checks meaning."""

    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)

    status: Literal["answered", "insufficient_evidence"]
    answer: str = Field(max_length=8000)
    citations: tuple[CitationItem, ...] = Field(max_length=32)


def _tighten(node: Any, source_ids: Sequence[str] | None) -> Any:
    """Make a pydantic JSON schema strict-mode friendly: every object closed and fully required,
    no string length keywords (not supported by strict mode), tuples as plain arrays."""
    if isinstance(node, list):
        return [_tighten(x, source_ids) for x in node]
    if not isinstance(node, dict):
        return node
    out = {k: _tighten(v, source_ids) for k, v in node.items() if k not in ("minLength", "maxLength", "title")}
    if out.get("type") == "object" and "properties" in out:
        out["additionalProperties"] = False
        out["required"] = sorted(out["properties"])
        if source_ids and "source_id" in out["properties"]:
            out["properties"]["source_id"] = {"type": "string", "enum": list(source_ids)}
    return out


def _inline(node: Any, defs: Mapping[str, Any]) -> Any:
    if isinstance(node, list):
        return [_inline(x, defs) for x in node]
    if not isinstance(node, dict):
        return node
    ref = node.get("$ref")
    if isinstance(ref, str) and ref.startswith("#/$defs/"):
        return _inline(defs[ref[len("#/$defs/"):]], defs)
    return {k: _inline(v, defs) for k, v in node.items() if k != "$defs"}


def answer_json_schema(source_ids: Sequence[str] | None = None) -> dict:
    """The JSON schema sent to the server, derived from :class:`AnswerPayload`.

    References are inlined (grammar-constrained servers handle a flat schema best). With
    ``source_ids`` the ``source_id`` field is an enum of the bundle's ids, so a server that
    enforces the schema cannot even emit an unknown id (the validator still checks)."""
    raw = AnswerPayload.model_json_schema()
    return _tighten(_inline(raw, raw.get("$defs", {})), tuple(source_ids or ()))


_FENCE = re.compile(r"^\s*```[a-zA-Z]*\s*\n?(.*?)\n?\s*```\s*$", re.DOTALL)


@dataclass(frozen=True)
class ParseResult:
    payload: AnswerPayload | None
    error: str | None
    repaired: bool = False  # the JSON was found only after stripping fences / surrounding text


def parse_payload(raw: str) -> ParseResult:
    """Parse and validate raw model text. A code fence or text around one JSON object is
    stripped (a local repair that costs no attempt); anything else is an error message."""
    if not isinstance(raw, str) or not raw.strip():
        return ParseResult(None, "empty reply: expected a JSON object")
    candidates = [raw]
    m = _FENCE.match(raw)
    if m:
        candidates.append(m.group(1))
    i, j = raw.find("{"), raw.rfind("}")
    if 0 <= i < j:
        candidates.append(raw[i:j + 1])
    first_error = ""
    for n, text in enumerate(candidates):
        try:
            return ParseResult(AnswerPayload.model_validate_json(text), None, repaired=n > 0)
        except ValidationError as exc:
            errs = exc.errors()
            if errs and errs[0]["type"] == "json_invalid":
                msg = f"not valid JSON ({errs[0]['msg']})"
            else:
                msg = "JSON does not match the schema: " + "; ".join(
                    f"{'.'.join(str(x) for x in e['loc']) or '<root>'}: {e['msg']}" for e in errs[:5])
            first_error = first_error or msg
            if not msg.startswith("not valid JSON"):
                return ParseResult(None, msg, repaired=n > 0)  # JSON found but wrong shape: no more repair
    return ParseResult(None, first_error)


ViolationCode = Literal[
    "invalid_json", "schema", "status_contract", "empty_answer", "unknown_source", "unknown_marker",
    "missing_marker", "marker_without_citation", "citation_not_referenced", "missing_quote", "quote_not_found",
    "unsupported_claim", "unsupported_sentence", "url_in_answer", "number_mismatch", "negation_mismatch",
    "duplicate_citation", "does_not_address", "claim_contradicted", "claim_not_entailed",
]


@dataclass(frozen=True)
class Violation:
    code: ViolationCode
    message: str
    source_id: str | None = None
    sentence: str | None = None

    def describe(self) -> str:
        return f"[{self.code}] {self.message}"


# --------------------------------------------------------------------------- request / output
@dataclass(frozen=True)
class TokenUsage:
    prompt_tokens: int = 0
    completion_tokens: int = 0

    @property
    def total_tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens

    def __add__(self, other: TokenUsage) -> TokenUsage:
        return TokenUsage(self.prompt_tokens + other.prompt_tokens, self.completion_tokens + other.completion_tokens)


@dataclass(frozen=True)
class GenerationRequest:
    """Everything a generator may use. ``messages`` are sent verbatim by an LLM generator."""

    messages: tuple[Message, ...]
    json_schema: Mapping[str, Any]
    attempt: int = 1
    violations: tuple[Violation, ...] = ()  # from the previous attempt (already in ``messages``)
    question: str = ""
    bundle: ContextBundle | None = None
    schema_name: str = SCHEMA_NAME


@dataclass(frozen=True)
class GenerationOutput:
    raw_text: str
    payload: AnswerPayload | None
    parse_error: str | None
    usage: TokenUsage = field(default_factory=TokenUsage)
    latency_s: float = 0.0
    model: str = ""
    finish_reason: str | None = None
    transport_retries: int = 0  # retried HTTP calls inside this attempt


@dataclass(frozen=True)
class GeneratorCapabilities:
    """What a generator declares it can do beyond answering (its ``capabilities`` attribute), so
    the pipeline never infers it from a class or a private name. ``tool_calling``: it can drive
    the tool phase, and its ``client`` is an OpenAI-compatible chat client (seed 004)."""

    tool_calling: bool = False


NO_CAPABILITIES = GeneratorCapabilities()


class Generator(Protocol):
    """What every generator implements. ``capabilities``: what it declares beyond answering;
    ``warm``: load what its first answer would (a model, a client) without asking it anything."""

    name: str
    capabilities: GeneratorCapabilities

    def generate(self, request: GenerationRequest) -> GenerationOutput: ...

    async def agenerate(self, request: GenerationRequest) -> GenerationOutput: ...

    def warm(self, question: str) -> None: ...


class ToolCallingGenerator(Generator, Protocol):
    """A generator whose capabilities declare ``tool_calling``: its ``client`` is an
    OpenAI-compatible chat client the tool phase drives."""

    client: Any


def capabilities_of(generator: object) -> GeneratorCapabilities:
    """The capabilities ``generator`` declares; none for one written before the attribute existed."""
    caps = getattr(generator, "capabilities", NO_CAPABILITIES)
    if not isinstance(caps, GeneratorCapabilities):
        raise TypeError(f"generator {getattr(generator, 'name', generator)!r}: capabilities must be a "
                        f"GeneratorCapabilities, got {type(caps).__name__}")
    return caps


def warm_generator(generator: object, question: str) -> None:
    """``generator.warm(question)``; nothing for one written before the method existed."""
    warm = getattr(generator, "warm", None)
    if callable(warm):
        warm(question)
