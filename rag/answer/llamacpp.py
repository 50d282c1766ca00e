"""The in-process local LLM: a GGUF run by llama.cpp (``generation.backend: llamacpp``), through the
prebuilt ``xllamacpp`` wheel or ``llama-cpp-python`` (:mod:`rag.answer.llama_engines` picks one).

The answer JSON schema of the request is compiled by llama.cpp into a grammar
(``response_format={"type": "json_object", "schema": ...}``), so every finished reply parses; the
validator and the regeneration loop (``rag.answer.loop``) then treat it like any other generator's.
The grammar is tightened for small models (:func:`grammar_schema`; same keys, and everything it
allows the plain schema allows too):

- ``status`` is written last: made to choose it before writing anything, Qwen2.5-Coder-1.5B chose
  ``insufficient_evidence`` on every demo question tried, even with the answer in [S1]; writing
  the answer first, it answered;
- with ``generation.grammar_markers`` every answer sentence must end with one ``[S#]`` marker of
  the prompt's sources, and claims and quotes carry no markers and no line breaks: without it the
  1.5B left every sentence unmarked, copied markers into its quotes, and cited extra sources.
The model loads on first use, once per generator; a lock serialises every call (a ``Llama`` is not
thread-safe, and xllamacpp's engine has one slot), and :meth:`LlamaCppGenerator.agenerate` runs the
sync call in a worker thread.

``generation.model_path`` is a known model name (``qwen2.5-0.5b``, ``qwen2.5-1.5b``: installed by
``rag models install-llm NAME``) or a path to a GGUF file.
"""
from __future__ import annotations

import asyncio
import logging
import re
import threading
import time
from pathlib import Path
from typing import Any

from rag.answer.contract import NO_CAPABILITIES, GenerationOutput, GenerationRequest, TokenUsage, parse_payload
from rag.answer.llama_engines import choose_engine, load_chat_model
from rag.answer.llm_models import resolve_gguf
from rag.config import GenerationConfig
from rag.errors import GenerationError, ModelLoadError

logger = logging.getLogger(__name__)


def _ids_of(schema: dict) -> list[str]:
    try:
        return list(schema["properties"]["citations"]["items"]["properties"]["source_id"]["enum"])
    except (KeyError, TypeError):
        return []


def grammar_schema(schema: dict, markers: bool) -> dict:
    """The answer schema as the grammar should enforce it: ``status`` moved last and, with ``markers``,
    string patterns that end every answer sentence with one ``[S#]`` marker of the prompt's sources (a
    decimal point does not end a sentence) and keep markers and line breaks out of the answer text,
    claims and quotes. The patterns read the raw JSON text, as llama.cpp's grammar does: an escaped
    quote ``\\"`` is allowed, any other escape is not."""
    props = dict(schema.get("properties", {}))
    if "status" not in props:
        return schema
    if markers and {"answer", "citations"} <= props.keys():
        ids = "|".join(re.escape(i) for i in _ids_of(schema)) or "S[0-9]+"
        marker = r"\[(" + ids + r")\]"
        char = r'([^.!?\[\]\n"\\]|[.][0-9]|\\")'  # no sentence end, bracket, line break or lone backslash
        first = r'([^ .!?\[\]\n"\\]|\\")'  # a sentence starts with a character, not a space
        props["answer"] = {**props["answer"], "pattern": (
            "^(" + first + char + r"*[.!?]? ?" + marker + r"[.!?]? ?)*$")}
        item = props["citations"]["items"]
        plain = r'^([^\[\]\n"\\]|\\")*$'
        item_props = {k: ({**v, "pattern": plain} if k in ("claim", "quote") else v)
                      for k, v in item["properties"].items()}
        props["citations"] = {**props["citations"], "items": {**item, "properties": item_props}}
    order = [k for k in props if k != "status"] + ["status"]
    out = {**schema, "properties": {k: props[k] for k in order}}
    if "required" in schema:
        out["required"] = [k for k in order if k in schema["required"]]
    return out


class LlamaCppGenerator:
    """Schema-constrained chat completions from a local GGUF. ``base_dir`` resolves a relative
    ``model_path`` (the config file's folder; None: the working directory)."""

    capabilities = NO_CAPABILITIES

    def __init__(self, config: GenerationConfig | None = None, *, base_dir: str | Path | None = None) -> None:
        self.config = config if config is not None else GenerationConfig()
        self.base_dir = base_dir
        self.name = f"llamacpp:{self.config.model_path}"
        self._llm: Any = None
        self._lock = threading.Lock()

    def _load(self) -> Any:
        """The loaded model: a ``llama_cpp.Llama`` or an :class:`~rag.answer.llama_engines.XLlamaCppChat`
        (call with the lock held)."""
        if self._llm is None:
            engine = choose_engine()  # DependencyError naming the extra when neither engine is installed
            c = self.config
            path = resolve_gguf(c.model_path, self.base_dir)
            t0 = time.perf_counter()
            try:
                self._llm = load_chat_model(path, n_ctx=c.n_ctx, n_threads=c.n_threads, seed=c.seed, engine=engine)
            except Exception as exc:  # noqa: BLE001 - llama.cpp raises ValueError/RuntimeError on a bad file
                raise ModelLoadError(f"llama.cpp ({engine}) could not load {path} (generation.model_path "
                                     f"{c.model_path!r}): {exc}. Check that it is a complete GGUF file.") from exc
            logger.info("loaded %s with %s (n_ctx=%d, n_threads=%s) in %.1fs", path, engine, c.n_ctx, c.n_threads,
                        time.perf_counter() - t0)
        return self._llm

    def warm(self, question: str) -> None:
        """Load the GGUF in-process (nothing is generated)."""
        with self._lock:
            self._load()

    def generate(self, request: GenerationRequest) -> GenerationOutput:
        c = self.config
        messages = [m.to_openai() for m in request.messages]
        fmt = {"type": "json_object", "schema": grammar_schema(dict(request.json_schema), c.grammar_markers)}
        with self._lock:
            llm = self._load()
            t0 = time.perf_counter()
            try:
                resp = llm.create_chat_completion(messages=messages, response_format=fmt, temperature=c.temperature,
                                                  max_tokens=c.max_tokens, seed=c.seed)
            except ValueError as exc:  # "Requested tokens (N) exceed context window of M"
                raise GenerationError(
                    f"llama.cpp rejected the prompt: {exc}. The context budget is counted with "
                    "context.tokenizer, not the model's own tokenizer: lower context.context_limit or raise "
                    f"generation.n_ctx ({c.n_ctx}).") from exc
            latency = time.perf_counter() - t0
        choice = resp["choices"][0]
        raw = choice["message"].get("content") or ""
        u = resp.get("usage") or {}
        usage = TokenUsage(int(u.get("prompt_tokens", 0)), int(u.get("completion_tokens", 0)))
        logger.info("llamacpp attempt %d: %d prompt + %d completion tokens in %.1fs", request.attempt,
                    usage.prompt_tokens, usage.completion_tokens, latency)
        parsed = parse_payload(raw)
        return GenerationOutput(raw, parsed.payload, parsed.error, usage, latency, self.name,
                                choice.get("finish_reason"), 0)

    async def agenerate(self, request: GenerationRequest) -> GenerationOutput:
        return await asyncio.to_thread(self.generate, request)
