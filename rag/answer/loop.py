"""The regeneration loop: generate, validate, and on a contract failure ask again with the
exact violations, at most ``max_attempts`` times.

After the last failed attempt the result follows ``on_failure``: ``"insufficient_evidence"``
returns an abstention with reason ``validation_failed``; ``"error"`` raises
:class:`~rag.errors.AnswerContractError` carrying every attempt. An answer whose citations
did not validate is never returned.

With a ``fallback`` generator (and ``on_failure: insufficient_evidence``), a run whose attempts
all failed validation asks the fallback once, over the same prompt: an answer of it that
validates is returned with reason ``validated_fallback``; one that fails or abstains leaves the
outcome ``validation_failed``. Either way its attempt is recorded. A model that abstains with a
valid payload has not failed: the fallback is not asked. The loop knows no backend names: the
caller chooses the fallback (the pipeline: ``generation.fallback``).

Transport failures (timeouts, a server that keeps failing) raise
:class:`~rag.errors.GenerationError` subclasses: they are not contract failures, and retrying them
is the generator's job.
"""
from __future__ import annotations

import json
import logging
import time
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Literal

from rag.config import GenerationConfig
from rag.errors import AnswerContractError, InputError
from rag.answer.contract import (
    FORMAT_INSTRUCTION,
    GenerationOutput,
    GenerationRequest,
    Generator,
    TokenUsage,
    Violation,
    answer_json_schema,
)
from rag.context.prompt import Message, Prompt, messages_sha256
from rag.answer.validation import CitationValidator, ResolvedCitation, ValidationReport
from rag.text.tokens import TokenCounter


logger = logging.getLogger(__name__)

MAX_LISTED_VIOLATIONS = 12


@dataclass(frozen=True)
class AttemptRecord:
    attempt: int
    generator: str
    raw_text: str
    status: str | None  # the payload's status, None when it did not parse
    violations: tuple[Violation, ...]
    usage: TokenUsage
    generation_s: float
    validation_s: float
    transport_retries: int
    finish_reason: str | None
    request_sha256: str  # messages_sha256 of this attempt's messages (format instruction and feedback included)

    @property
    def ok(self) -> bool:
        return not self.violations


@dataclass(frozen=True)
class AnswerOutcome:
    status: Literal["answered", "insufficient_evidence"]
    answer: str
    citations: tuple[ResolvedCitation, ...]
    reason: str  # "validated", "validated_fallback", "model_abstained", "validation_failed", "no_context"
    attempts: tuple[AttemptRecord, ...]
    usage: TokenUsage
    latency_s: float
    # The report of the attempt the outcome rests on: the last attempt's, except after a fallback
    # that did not validate (then the last rejected attempt before it; the fallback's is in attempts)
    report: ValidationReport | None

    @property
    def violations(self) -> tuple[Violation, ...]:
        """The violations of the attempt the outcome rests on (empty when it validated)."""
        return self.report.violations if self.report is not None else ()


def question_of(prompt: Prompt) -> str:
    """The question of a prompt built by :class:`~rag.context.prompt.PromptBuilder` (final user turn)."""
    last = prompt.messages[-1].content if prompt.messages else ""
    head, sep, _ = last.partition("\n\nSOURCES\n")
    if not sep or not head.startswith("QUESTION\n"):
        raise InputError("cannot find the question in the prompt's last message; pass question= explicitly")
    return head[len("QUESTION\n"):]


def format_overhead(counter: TokenCounter, max_blocks: int, message_overhead: int = 0) -> int:
    """Tokens every request adds to the prompt for the answer format: the format instruction
    message and the JSON schema (with the largest source-id enum a prompt of ``max_blocks`` blocks
    can have), counted with the real tokenizer. The prompt builder subtracts it from the budget."""
    ids = [f"S{i}" for i in range(1, max_blocks + 1)]
    schema = json.dumps(answer_json_schema(ids), ensure_ascii=False, separators=(",", ":"))
    return counter.count(FORMAT_INSTRUCTION) + message_overhead + counter.count(schema) + message_overhead


_FEEDBACK_HEAD = "Your previous reply was rejected by the server for these reasons:\n"


def _feedback_tail(source_ids: Sequence[str]) -> str:
    ids = ", ".join(source_ids) if source_ids else "(none)"
    return (f"\nReply again with a corrected JSON object. Valid source ids: {ids}. Every sentence needs a "
            "[S#] marker, every quote must be copied exactly from its source, and if the sources do not "
            "answer the question use status insufficient_evidence with no citations.")


def feedback_message(violations: Sequence[Violation], source_ids: Sequence[str], *,
                     counter: TokenCounter | None = None, max_tokens: int | None = None) -> Message:
    """The retry message listing the previous attempt's violations. With ``counter`` and
    ``max_tokens`` the listing is cut (whole lines, then "… and N more") so the message fits
    the prompt's ``feedback_reserve``."""
    shown = list(violations[:MAX_LISTED_VIOLATIONS])
    tail = _feedback_tail(source_ids)

    def text(k: int) -> str:
        lines = [f"- {v.describe()}" for v in shown[:k]]
        if len(violations) > k:
            lines.append(f"- … and {len(violations) - k} more")
        return _FEEDBACK_HEAD + "\n".join(lines) + tail

    k = len(shown)
    if counter is not None and max_tokens is not None:
        while k > 0 and counter.count(text(k)) > max_tokens:
            k -= 1
    return Message("user", text(k))


def build_request(prompt: Prompt, attempt: int, violations: Sequence[Violation], question: str, *,
                  format_instruction: bool = True) -> GenerationRequest:
    """The messages of one attempt: the prompt, the JSON format instruction (unless the caller's
    generator is told the format some other way) and the previous attempt's violations, cut to the
    prompt's ``feedback_reserve``."""
    ids = tuple(prompt.source_map)
    messages = list(prompt.messages)
    if format_instruction:
        messages.append(Message("user", FORMAT_INSTRUCTION))
    if violations:
        budget = prompt.manifest.budget
        room = max(0, budget.feedback_reserve - prompt.per_message_tokens)
        messages.append(feedback_message(violations, ids, counter=prompt.counter,
                                         max_tokens=room if prompt.counter is not None else None))
    return GenerationRequest(tuple(messages), answer_json_schema(ids), attempt, tuple(violations), question,
                             prompt.bundle)


class _Loop:
    """Shared bookkeeping of the sync and async loops."""

    def __init__(self, prompt: Prompt, generator: Generator, validator: CitationValidator,
                 config: GenerationConfig, question: str | None, format_instruction: bool,
                 fallback: Generator | None = None) -> None:
        self.prompt = prompt
        self.generator = generator
        self.fallback = fallback
        self.current = generator  # the generator the next request goes to
        self.in_fallback = False  # True once every attempt of ``generator`` failed and the fallback took over
        self.validator = validator
        self.config = config
        self.format_instruction = format_instruction
        self.question = question if question is not None else question_of(prompt)
        self.records: list[AttemptRecord] = []
        self.t0 = time.perf_counter()
        self.last_report: ValidationReport | None = None
        self.sent: GenerationRequest | None = None

    def request(self) -> GenerationRequest:
        """The next attempt's request (the fallback's carries no feedback: it starts afresh)."""
        prev = self.records[-1].violations if self.records and not self.in_fallback else ()
        self.sent = build_request(self.prompt, len(self.records) + 1, prev, self.question,
                                  format_instruction=self.format_instruction)
        return self.sent

    def _attempt(self, generator: Generator, out: GenerationOutput, report: ValidationReport) -> AttemptRecord:
        return AttemptRecord(len(self.records) + 1, getattr(generator, "name", type(generator).__name__),
                             out.raw_text, report.status, report.violations, out.usage, out.latency_s,
                             report.latency_s, out.transport_retries, out.finish_reason,
                             messages_sha256(self.sent.messages) if self.sent is not None else "")

    def _validate(self, out: GenerationOutput) -> ValidationReport:
        """The validator's report on one output (its parsed payload, else its raw text), for the question."""
        payload = out.payload if out.payload is not None else out.raw_text
        return self.validator.validate(payload, self.prompt.source_map, question=self.question)

    def record(self, out: GenerationOutput) -> AnswerOutcome | None:
        """Validate one output; return the outcome when the loop is done, else None."""
        if self.in_fallback:
            return self._record_fallback(out)
        report = self._validate(out)
        if report.status is None and out.finish_reason == "length":
            cut = Violation("invalid_json", "the reply was cut off at the token limit before the JSON object was "
                            "complete; write a shorter answer with fewer, shorter citations")
            report = replace(report, violations=(cut, *report.violations))
        self.last_report = report
        n = len(self.records) + 1
        self.records.append(self._attempt(self.generator, out, report))
        if report.ok:
            reason = "validated" if report.status == "answered" else "model_abstained"
            logger.info("answer attempt %d: %s", n, reason)
            return self._outcome(report.status, report.answer, report.resolved, reason)
        logger.info("answer attempt %d/%d rejected: %s", n, self.config.max_attempts, ", ".join(report.codes))
        repeated = len(self.records) >= 2 and self.records[-2].raw_text == out.raw_text
        if n >= self.config.max_attempts or repeated:
            if repeated:
                logger.info("the generator repeated its rejected reply; stopping early")
            return self._fail()
        return None

    def _outcome(self, status, answer: str, citations, reason: str) -> AnswerOutcome:
        usage = TokenUsage()
        for r in self.records:
            usage = usage + r.usage
        return AnswerOutcome(status, answer, tuple(citations), reason, tuple(self.records), usage,
                             time.perf_counter() - self.t0, self.last_report)

    def no_context(self) -> AnswerOutcome:
        logger.info("no source blocks: insufficient evidence without calling the generator")
        return self._outcome("insufficient_evidence", "", (), "no_context")

    def _fail(self) -> AnswerOutcome:
        last = self.records[-1]
        if self.config.on_failure == "error":
            detail = "; ".join(v.describe() for v in last.violations[:5])
            raise AnswerContractError(
                f"no answer passed validation after {len(self.records)} attempts (last: {detail}). Check the "
                "model and prompt, raise generation.max_attempts, or set generation.on_failure: "
                "insufficient_evidence.", attempts=tuple(self.records))
        if self.fallback is not None:
            logger.info("all %d attempts failed validation; asking the fallback generator %s", len(self.records),
                        getattr(self.fallback, "name", type(self.fallback).__name__))
            self.current, self.in_fallback = self.fallback, True
            return None
        return self._outcome("insufficient_evidence", "", (), "validation_failed")

    def _record_fallback(self, out: GenerationOutput) -> AnswerOutcome:
        """Validate the fallback's output: its validated answer, else ``validation_failed`` (the
        report stays the last rejected attempt's)."""
        report = self._validate(out)
        rejected = len(self.records)
        self.records.append(self._attempt(self.fallback, out, report))
        name = self.records[-1].generator
        if report.ok and report.status == "answered":
            self.last_report = report
            logger.info("answer: the fallback generator %s validated after %d rejected attempts", name, rejected)
            return self._outcome("answered", report.answer, report.resolved, "validated_fallback")
        what = "abstained" if report.ok else "was rejected: " + ", ".join(report.codes)
        logger.info("answer: the fallback generator %s %s; validation_failed", name, what)
        return self._outcome("insufficient_evidence", "", (), "validation_failed")


def generate_answer(prompt: Prompt, generator: Generator, validator: CitationValidator,
                    config: GenerationConfig | None = None, *, question: str | None = None,
                    format_instruction: bool = True, fallback: Generator | None = None) -> AnswerOutcome:
    """Generate and validate with bounded regeneration; ``fallback`` answers once when every
    attempt failed validation. Returns the outcome; see the module docstring for the contract."""
    loop = _Loop(prompt, generator, validator, config or GenerationConfig(), question, format_instruction, fallback)
    done = loop.no_context() if not prompt.bundle.blocks else None
    while done is None:
        done = loop.record(loop.current.generate(loop.request()))
    return done


async def agenerate_answer(prompt: Prompt, generator: Generator, validator: CitationValidator,
                           config: GenerationConfig | None = None, *, question: str | None = None,
                           format_instruction: bool = True, fallback: Generator | None = None) -> AnswerOutcome:
    """Async twin of :func:`generate_answer`."""
    loop = _Loop(prompt, generator, validator, config or GenerationConfig(), question, format_instruction, fallback)
    done = loop.no_context() if not prompt.bundle.blocks else None
    while done is None:
        done = loop.record(await loop.current.agenerate(loop.request()))
    return done
