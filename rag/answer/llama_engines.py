"""The llama.cpp engines behind ``generation.backend: llamacpp``, and a local OpenAI-compatible server.

Two Python packages run a GGUF with llama.cpp; the generator (:mod:`rag.answer.llamacpp`) talks to
either through the same call, ``create_chat_completion(messages=..., response_format=..., ...)``
returning an OpenAI-style dict:

- ``xllamacpp`` (MIT, Xorbits; ``pip install 'rag[llm]'``): a prebuilt CPU wheel, nothing to
  compile. Its ``Server`` is llama.cpp's own server engine, run in-process; :class:`XLlamaCppChat`
  adapts it. The engine also listens on an ephemeral loopback port (it cannot be turned off), so
  the in-process engine gets a random API key that nobody else knows.
- ``llama-cpp-python`` (MIT; ``pip install 'rag[llm-source]'``): compiles llama.cpp when it is
  installed; its ``Llama`` already has this call.

Both constrain generation by the request's JSON schema (``response_format={"type": "json_object",
"schema": ...}``): llama-cpp-python through llama.cpp's GBNF converter, the xllamacpp wheel through
llguidance (its ``json_schema_to_grammar`` returns a ``%llguidance`` grammar). The llm test tier checks,
for either engine, that every finished reply matches the patterns of
:func:`rag.answer.llamacpp.grammar_schema` (tests/llm/test_llm_answers.py, ``check_grammar``).

Which one: ``$RAG_LLAMACPP_ENGINE`` (``xllamacpp`` or ``llama-cpp-python``), else llama-cpp-python
when it is installed (someone installed it on purpose), else xllamacpp.

:mod:`rag.answer.llm_server` serves a GGUF over xllamacpp's OpenAI-compatible HTTP server.
"""
from __future__ import annotations

import importlib.util
import logging
import os
import secrets
import sys
from pathlib import Path
from typing import Any

from rag.errors import DependencyError, GenerationError, InputError, missing_dependency

logger = logging.getLogger(__name__)

ENGINE_ENV = "RAG_LLAMACPP_ENGINE"
XLLAMACPP = "xllamacpp"
LLAMA_CPP_PYTHON = "llama-cpp-python"
ENGINES = (XLLAMACPP, LLAMA_CPP_PYTHON)
_MODULES = {XLLAMACPP: "xllamacpp", LLAMA_CPP_PYTHON: "llama_cpp"}


def importable(module: str) -> bool:
    """Whether ``import module`` would find it (without importing it)."""
    if module in sys.modules:  # a test may install a stand-in, or None to hide the package
        return sys.modules[module] is not None
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):
        return False


def choose_engine(requested: str | None = None) -> str:
    """The engine to run: ``requested``, else ``$RAG_LLAMACPP_ENGINE``, else llama-cpp-python when it
    is installed, else xllamacpp. Raises :class:`DependencyError` when the chosen one (or, when
    nothing was asked for, either) is not installed, :class:`InputError` for an unknown name."""
    name = (requested or os.environ.get(ENGINE_ENV, "")).strip()
    if name:
        if name not in ENGINES:
            raise InputError(f"unknown llama.cpp engine {name!r} (from {'the caller' if requested else ENGINE_ENV}); "
                             f"choose one of: {', '.join(ENGINES)}")
        if not importable(_MODULES[name]):
            extra = "llm" if name == XLLAMACPP else "llm-source"
            raise missing_dependency(name, extra, f"generation.backend: llamacpp with {ENGINE_ENV}={name}")
        return name
    for engine in (LLAMA_CPP_PYTHON, XLLAMACPP):
        if importable(_MODULES[engine]):
            return engine
    raise DependencyError(
        "generation.backend: llamacpp needs the 'xllamacpp' package (a prebuilt llama.cpp wheel) or the "
        "'llama-cpp-python' package, and neither is installed. Install it with: pip install 'rag[llm]'  "
        "(or: pip install xllamacpp; pip install 'rag[llm-source]' builds llama-cpp-python instead)")


def engine_version(engine: str) -> str:
    """The installed version of an engine's distribution (``xllamacpp``, ``llama-cpp-python``)."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version(engine)
    except PackageNotFoundError:
        return "unknown"


def engine_params(path: str | Path, n_ctx: int, n_threads: int | None, seed: int) -> Any:
    """xllamacpp's ``CommonParams`` for one GGUF: one slot of ``n_ctx`` tokens, ``n_threads`` (None:
    llama.cpp's default), the sampling seed, no warm-up run, no web UI, quiet unless DEBUG logging."""
    import xllamacpp

    p = xllamacpp.CommonParams()
    p.model.path = str(path)
    p.n_ctx = n_ctx
    p.n_parallel = 1  # one slot: the whole window for one request, as llama-cpp-python has it
    if n_threads is not None:
        p.cpuparams.n_threads = n_threads
        p.cpuparams_batch.n_threads = n_threads
    p.sampling.seed = seed
    p.warmup = False
    p.ui = False
    p.endpoint_metrics = False
    p.verbosity = -1 if not logger.isEnabledFor(logging.DEBUG) else 3
    return p


class XLlamaCppChat:
    """A GGUF run in-process by xllamacpp's ``Server``, with llama-cpp-python's
    ``create_chat_completion`` call. The server's error replies become exceptions: a prompt over the
    window a ``ValueError`` (as llama-cpp-python raises it), anything else :class:`GenerationError`."""

    engine = XLLAMACPP

    def __init__(self, model_path: str | Path, *, n_ctx: int, n_threads: int | None = None, seed: int = 0) -> None:
        import xllamacpp

        p = engine_params(model_path, n_ctx, n_threads, seed)
        p.cache_ram_mib = 0  # no host-memory prompt cache beside the slot's own KV cache
        p.endpoint_slots = False
        p.api_keys = [secrets.token_urlsafe(32)]  # the loopback listener it always opens answers nobody
        self.model_path = str(model_path)
        self._server = xllamacpp.Server(p)  # RuntimeError on a file it cannot load
        logger.debug("xllamacpp engine for %s (its HTTP listener, locked with a random key: %s)", model_path,
                     self._server.listening_address)

    def create_chat_completion(self, **request: Any) -> dict:
        reply = self._server.handle_chat_completions({k: v for k, v in request.items() if v is not None})
        if not isinstance(reply, dict):
            raise GenerationError(f"xllamacpp returned {type(reply).__name__}, expected a chat completion dict")
        err = reply.get("error")
        if err is not None:
            detail = err.get("message", err) if isinstance(err, dict) else err
            kind = err.get("type", "") if isinstance(err, dict) else ""
            if kind == "exceed_context_size_error":
                raise ValueError(str(detail))
            raise GenerationError(f"xllamacpp rejected the request ({kind or 'error'}): {detail}")
        return reply


def load_chat_model(model_path: str | Path, *, n_ctx: int, n_threads: int | None, seed: int,
                    engine: str | None = None) -> Any:
    """An object with ``create_chat_completion(**kwargs) -> dict`` for the GGUF at ``model_path``
    (:func:`choose_engine` picks the engine). Loading errors propagate as the engine raises them."""
    name = choose_engine(engine)
    if name == LLAMA_CPP_PYTHON:
        from llama_cpp import Llama

        return Llama(model_path=str(model_path), n_ctx=n_ctx, n_threads=n_threads, seed=seed, verbose=False)
    return XLlamaCppChat(model_path, n_ctx=n_ctx, n_threads=n_threads, seed=seed)
