"""Generators: turn a prompt into a structured answer payload.

- :class:`OpenAIGenerator` calls any OpenAI-compatible Chat Completions server through the
  ``openai`` client, with schema-constrained output (``json_schema``, or ``json_object``
  plus validation for servers without it), its own retry loop with exponential backoff on
  429 / 5xx / connection errors (the client's own retries are off, so every retry is
  logged and testable), and the API key read from the environment variable *named* in
  the config.
- :class:`ExtractiveGenerator` is the embedded default that needs no model: it picks the
  block sentences that best match the question and cites each one with its quote.

Both return a :class:`GenerationOutput`; neither decides whether the answer is
acceptable. That is the validator's job (``rag.validation``), and the regeneration loop
(``rag.answering``) ties the two together.
"""
from __future__ import annotations

import asyncio
import ipaddress
import json
import logging
import math
import os
import re
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, Protocol
from urllib.parse import urlparse

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from rag.context.builder import ContextBundle
from rag.errors import (
    ConfigError,
    GenerationError,
    GenerationServerError,
    GenerationTimeoutError,
    MissingApiKeyError,
    missing_dependency,
)
from rag.context.prompt import Message
from rag.text.sentences import content_terms, find_urls, split_sentences

if TYPE_CHECKING:
    from rag.config import GenerationConfig
    from rag.answer.validation import Violation

logger = logging.getLogger(__name__)

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


# --------------------------------------------------------------------------- payload
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


class Generator(Protocol):
    name: str

    def generate(self, request: GenerationRequest) -> GenerationOutput: ...

    async def agenerate(self, request: GenerationRequest) -> GenerationOutput: ...


# --------------------------------------------------------------------------- OpenAI-compatible
_DUMMY_KEY = "sk-local-no-key"


def is_loopback(base_url: str | None) -> bool:
    if not base_url:
        return False
    host = urlparse(base_url).hostname or ""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _retry_kind(exc: BaseException) -> Literal["timeout", "retry", "fatal"]:
    import openai

    if isinstance(exc, openai.APITimeoutError):
        return "timeout"
    if isinstance(exc, openai.APIConnectionError):
        return "retry"
    if isinstance(exc, openai.APIStatusError):
        return "retry" if exc.status_code == 429 or exc.status_code >= 500 else "fatal"
    return "fatal"


class OpenAIGenerator:
    """Chat Completions through the ``openai`` client. The client is created on first use."""

    def __init__(self, config: GenerationConfig, *, http_client: Any = None,
                 sleep: Callable[[float], None] = time.sleep) -> None:
        self.config = config
        self.name = f"openai:{config.model}"
        self._http_client = http_client
        self._sleep = sleep
        self._client = None
        self._aclient = None

    # -- setup ----------------------------------------------------------------
    def api_key(self) -> str:
        c = self.config
        key = os.environ.get(c.api_key_env, "").strip()
        if key:
            return key
        if is_loopback(c.base_url):
            return _DUMMY_KEY
        where = c.base_url or "the OpenAI API"
        raise MissingApiKeyError(
            f"generation.api_key_env names {c.api_key_env!r}, but that environment variable is not set, and "
            f"{where} is not a loopback server. Export {c.api_key_env}=<your key>, point generation.api_key_env "
            "at the variable that holds it, or use generation.backend: extractive (no model needed).")

    def _client_kwargs(self) -> dict:
        c = self.config
        kw: dict = {"api_key": self.api_key(), "timeout": c.timeout_s, "max_retries": 0}
        if c.base_url:
            kw["base_url"] = c.base_url
        if self._http_client is not None:
            kw["http_client"] = self._http_client
        return kw

    @property
    def client(self):
        if self._client is None:
            try:
                import openai
            except ImportError:
                raise missing_dependency("openai", "core", "the OpenAI-compatible generator") from None
            self._client = openai.OpenAI(**self._client_kwargs())
        return self._client

    @property
    def aclient(self):
        if self._aclient is None:
            try:
                import openai
            except ImportError:
                raise missing_dependency("openai", "core", "the OpenAI-compatible generator") from None
            self._aclient = openai.AsyncOpenAI(**self._client_kwargs())
        return self._aclient

    def _params(self, request: GenerationRequest) -> dict:
        c = self.config
        if c.structured == "json_schema":
            fmt = {"type": "json_schema",
                   "json_schema": {"name": request.schema_name, "strict": True, "schema": dict(request.json_schema)}}
        elif c.structured == "json_object_schema":
            fmt = {"type": "json_object", "schema": dict(request.json_schema)}
        else:
            fmt = {"type": "json_object"}
        return {"model": c.model, "messages": [m.to_openai() for m in request.messages],
                "temperature": c.temperature, "max_tokens": c.max_tokens, "response_format": fmt}

    def _delay(self, retry: int) -> float:
        c = self.config
        return min(c.backoff_max_s, c.backoff_s * (2 ** retry))

    def _retry_or_raise(self, exc: Exception, retry: int, request: GenerationRequest) -> float:
        """The delay before retry ``retry + 1`` of a failed call, or the typed error when giving up.
        Shared by :meth:`generate` and :meth:`agenerate`; only their sleeping differs."""
        kind = _retry_kind(exc)
        if kind == "fatal" or retry >= self.config.max_retries:
            raise self._give_up(exc, kind, retry + 1) from exc
        delay = self._delay(retry)
        logger.warning("generation attempt %d: %s (%s); retry %d/%d in %.2fs", request.attempt,
                       type(exc).__name__, kind, retry + 1, self.config.max_retries, delay)
        return delay

    def _give_up(self, exc: BaseException, kind: str, tries: int) -> GenerationError:
        c = self.config
        where = c.base_url or "the OpenAI API"
        if kind == "timeout":
            return GenerationTimeoutError(
                f"{where} did not answer within generation.timeout_s={c.timeout_s:g}s ({tries} tries). "
                "Raise timeout_s, lower max_tokens, or check that the server is not overloaded.")
        hint = ""
        if "response_format" in str(exc) or "json_schema" in str(exc):
            # some servers (llama-cpp-python) answer an unsupported response_format with a 500
            hint = (f" The server may not support generation.structured={c.structured!r}: try json_object, or "
                    "json_object_schema for the llama-cpp-python server.")
        if kind == "retry":
            return GenerationServerError(
                f"{where} kept failing after {tries} tries ({type(exc).__name__}: {exc}). "
                f"Check the server and its logs, or raise generation.max_retries / backoff_s.{hint}")
        return GenerationError(f"{where} rejected the request ({type(exc).__name__}: {exc}).{hint}")

    def _output(self, resp: Any, t0: float, retries: int) -> GenerationOutput:
        choice = resp.choices[0] if getattr(resp, "choices", None) else None
        raw = (choice.message.content or "") if choice is not None and choice.message is not None else ""
        u = getattr(resp, "usage", None)
        usage = TokenUsage(int(getattr(u, "prompt_tokens", 0) or 0), int(getattr(u, "completion_tokens", 0) or 0))
        parsed = parse_payload(raw)
        if parsed.repaired and parsed.payload is not None:
            logger.info("repaired the model's JSON (fence or surrounding text removed)")
        return GenerationOutput(raw, parsed.payload, parsed.error, usage, time.perf_counter() - t0,
                                getattr(resp, "model", "") or self.config.model,
                                getattr(choice, "finish_reason", None), retries)

    # -- calls ----------------------------------------------------------------
    def generate(self, request: GenerationRequest) -> GenerationOutput:
        params = self._params(request)
        t0 = time.perf_counter()
        retry = 0
        while True:
            try:
                resp = self.client.chat.completions.create(**params)
                return self._output(resp, t0, retry)
            except GenerationError:
                raise
            except Exception as exc:
                self._sleep(self._retry_or_raise(exc, retry, request))
                retry += 1

    async def agenerate(self, request: GenerationRequest) -> GenerationOutput:
        params = self._params(request)
        t0 = time.perf_counter()
        retry = 0
        while True:
            try:
                resp = await self.aclient.chat.completions.create(**params)
                return self._output(resp, t0, retry)
            except GenerationError:
                raise
            except Exception as exc:
                await asyncio.sleep(self._retry_or_raise(exc, retry, request))
                retry += 1


# --------------------------------------------------------------------------- extractive
SentenceScorer = Callable[[str, Sequence[str]], Sequence[float]]
"""(question, sentences) -> one score per sentence, higher is better, comparable to the floor."""

_NO_ANSWER_KO = "제공된 자료에서 질문에 대한 답을 찾을 수 없습니다."
_NO_ANSWER_EN = "The provided sources do not contain the answer to this question."
_HOSTILE_ARTIFACTS = ("[source tag removed]", "(ref S")
_HANGUL = re.compile(r"[\uac00-\ud7a3]")


@dataclass(frozen=True)
class _Candidate:
    score: float
    block_pos: int
    sent_pos: int
    source_id: str
    text: str  # verbatim block text of the sentence


# Question words and interrogative endings that an answer sentence does not repeat
# (Hangul bigrams as the analyzer makes them, and a few English words).
QUESTION_TERMS = frozenset({
    "며칠", "얼마", "언제", "어디", "무엇", "누가", "누구", "어떻", "어떤", "어느", "인가", "가요", "나요", "까요", "니까", "는지", "인지", "은가",
    "는가", "할까", "을까", "습니", "입니", "합니", "되나", "있나", "없나", "하나요", "엇인", "디인", "마인", "마나", "마까", "제인", "칠인",
    "many", "much", "often", "long",
})


def lexical_question_scores(question: str, sentences: Sequence[str]) -> list[float]:
    """IDF-weighted share of the question's content terms found in each sentence.

    IDF comes from the candidate sentences themselves (``log(1 + N / df)``; a term in no
    sentence gets the largest weight), so common words count for little and a question
    whose key terms appear nowhere scores low. Question words (QUESTION_TERMS) are ignored."""
    q = content_terms(question) - QUESTION_TERMS
    if not q or not sentences:
        return [0.0] * len(sentences)
    terms = [content_terms(s) for s in sentences]
    n = len(sentences)
    df = {t: sum(1 for s in terms if t in s) for t in q}
    w = {t: math.log(1 + n / max(df[t], 0.5)) for t in q}
    total = sum(w.values())
    return [sum(w[t] for t in q if t in s) / total for s in terms]


class ExtractiveGenerator:
    """No-LLM answers: the best-matching block sentences, each cited with itself as the quote."""

    def __init__(self, max_sentences: int = 3, min_score: float = 0.3, scorer: SentenceScorer | None = None,
                 min_chars: int = 8, relative_floor: float = 0.6) -> None:
        if max_sentences < 1:
            raise ConfigError(f"extractive max_sentences must be >= 1, got {max_sentences}")
        self.max_sentences = max_sentences
        self.min_score = min_score
        self.scorer = scorer
        self.min_chars = min_chars
        self.relative_floor = relative_floor  # keep sentences scoring at least this share of the best one
        self.name = "extractive" + ("+scorer" if scorer else "")

    def _candidates(self, bundle: ContextBundle) -> list[_Candidate]:
        out = []
        for bi, block in enumerate(bundle.blocks):
            for si, s in enumerate(split_sentences(block.text)):
                text = s.text
                if len(text) < self.min_chars or find_urls(text) or any(a in text for a in _HOSTILE_ARTIFACTS):
                    continue  # URLs never reach an answer; defused injections are not answers
                out.append(_Candidate(0.0, bi, si, block.source_id, text))
        return out

    def compose(self, question: str, bundle: ContextBundle | None) -> AnswerPayload:
        cands = self._candidates(bundle) if bundle is not None else []
        texts = [c.text for c in cands]
        if self.scorer and texts:
            scores = list(self.scorer(question, texts))
        else:
            scores = lexical_question_scores(question, texts)
        if len(scores) != len(cands):
            raise GenerationError(f"the sentence scorer returned {len(scores)} scores for {len(cands)} sentences")
        ranked = sorted((_Candidate(float(sc), c.block_pos, c.sent_pos, c.source_id, c.text)
                         for c, sc in zip(cands, scores)),
                        key=lambda c: (-c.score, c.block_pos, c.sent_pos))
        chosen: list[_Candidate] = []
        floor = max(self.min_score, self.relative_floor * ranked[0].score) if ranked else self.min_score
        for c in ranked:
            if c.score < floor or len(chosen) >= self.max_sentences:
                break
            terms = content_terms(c.text)
            if any(_overlap(terms, content_terms(x.text)) >= 0.8 for x in chosen):
                continue  # near-repeat of a chosen sentence
            chosen.append(c)
        if not chosen:
            best = ranked[0].score if ranked else 0.0
            logger.info("extractive: best sentence score %.3f < floor %.3f: insufficient evidence", best,
                        self.min_score)
            return AnswerPayload(status="insufficient_evidence",
                                 answer=_NO_ANSWER_KO if _HANGUL.search(question) else _NO_ANSWER_EN, citations=())
        chosen.sort(key=lambda c: (c.block_pos, c.sent_pos))
        parts, cites = [], []
        for c in chosen:
            flat = " ".join(c.text.split())
            parts.append(f"{flat} [{c.source_id}]")
            cites.append(CitationItem(source_id=c.source_id, claim=flat, quote=c.text))
        return AnswerPayload(status="answered", answer="\n".join(parts), citations=tuple(cites))

    def generate(self, request: GenerationRequest) -> GenerationOutput:
        t0 = time.perf_counter()
        payload = self.compose(request.question, request.bundle)
        raw = json.dumps(payload.model_dump(mode="json"), ensure_ascii=False)
        return GenerationOutput(raw, payload, None, TokenUsage(), time.perf_counter() - t0, self.name, "stop", 0)

    async def agenerate(self, request: GenerationRequest) -> GenerationOutput:
        return self.generate(request)


def _overlap(a: frozenset[str], b: frozenset[str]) -> float:
    return len(a & b) / max(1, min(len(a), len(b)))


def make_generator(config: GenerationConfig, *, scorer: SentenceScorer | None = None,
                   http_client: Any = None) -> Generator:
    """The generator a config asks for (constructors only store settings; nothing connects yet)."""
    if config.backend == "openai":
        return OpenAIGenerator(config, http_client=http_client)
    return ExtractiveGenerator(config.extractive_max_sentences, config.extractive_min_score, scorer)
