"""Generators: turn a prompt into a structured answer payload.

- :class:`OpenAIGenerator` calls any OpenAI-compatible Chat Completions server through the
  ``openai`` client, with schema-constrained output (``json_schema``, or ``json_object``
  plus validation for servers without it), its own retry loop with exponential backoff on
  429 / 5xx / connection errors (the client's own retries are off, so every retry is
  logged and testable), and the API key read from the environment variable *named* in
  the config.
- :class:`~rag.answer.llamacpp.LlamaCppGenerator` runs a local GGUF in-process
  (llama-cpp-python), grammar-constrained to the same schema.
- :class:`~rag.answer.extractive.ExtractiveGenerator` is the embedded default that needs no
  model (:func:`make_generator` picks one from the config).

All return a :class:`~rag.answer.contract.GenerationOutput`; none decides whether the
answer is acceptable. That is the validator's job (``rag.answer.validation``), and the
regeneration loop (``rag.answer.loop``) ties the two together.
"""
from __future__ import annotations

import asyncio
import ipaddress
import logging
import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal
from urllib.parse import urlparse

from rag.answer.contract import (GenerationOutput, GenerationRequest, Generator, GeneratorCapabilities, TokenUsage,
                                 parse_payload)
from rag.answer.extractive import ExtractiveGenerator, SentenceScorer
from rag.answer.unit_head import unit_head_for
from rag.answer.llamacpp import LlamaCppGenerator
from rag.errors import (
    GenerationError,
    GenerationServerError,
    GenerationTimeoutError,
    MissingApiKeyError,
    missing_dependency,
)

if TYPE_CHECKING:
    from rag.config import GenerationConfig, ValidationConfig

logger = logging.getLogger(__name__)

# --------------------------------------------------------------------------- OpenAI-compatible
_DUMMY_KEY = "sk-local-no-key"


def is_loopback(base_url: str | None) -> bool:
    return bool(base_url) and is_loopback_host(urlparse(base_url).hostname or "")


def is_loopback_host(host: str) -> bool:
    """``localhost`` or a loopback IP address (127.0.0.0/8, ::1)."""
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

    capabilities = GeneratorCapabilities(tool_calling=True)

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

    def warm(self, question: str) -> None:
        """Make both clients (nothing is sent)."""
        _ = self.client, self.aclient

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


def make_generator(config: GenerationConfig, *, scorer: SentenceScorer | None = None,
                   http_client: Any = None, validation: ValidationConfig | None = None,
                   base_dir: str | Path | None = None) -> Generator:
    """The generator a config asks for (constructors only store settings; nothing connects or loads
    yet). ``scorer`` and ``validation`` are used by the extractive generator only; ``base_dir`` (the
    config file's folder) resolves a relative ``model_path`` of the llamacpp generator."""
    if config.backend == "openai":
        return OpenAIGenerator(config, http_client=http_client)
    if config.backend == "llamacpp":
        return LlamaCppGenerator(config, base_dir=base_dir)
    return ExtractiveGenerator(config, scorer, validation=validation, head=unit_head_for(config, base_dir))
