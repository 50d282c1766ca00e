"""A local OpenAI-compatible server for a GGUF, run by xllamacpp (``pip install 'rag[llm]'``).

``python -m rag.answer.llm_server --model qwen2.5-0.5b --port 8080`` serves llama.cpp's own server
engine (``/v1/chat/completions`` with ``response_format`` JSON schemas compiled to a grammar,
``/v1/models``, ``/health``) on 127.0.0.1 until SIGTERM or Ctrl-C: what ``generation.backend:
openai`` with a loopback ``base_url`` and ``structured: json_object_schema`` talks to, and what
tests/llm starts. ``--api-key-env NAME`` requires the key held by that variable.
"""
from __future__ import annotations

import argparse
import logging
import os
import signal
import sys
from collections.abc import Sequence
from pathlib import Path

from rag.answer.llama_engines import engine_params, engine_version, importable
from rag.answer.llm_models import resolve_gguf
from rag.errors import InputError, RagError, missing_dependency

logger = logging.getLogger(__name__)


def serve(model_path: str | Path, *, host: str = "127.0.0.1", port: int = 8080, n_ctx: int = 4096,
          n_threads: int | None = None, seed: int = 0, api_key_env: str | None = None) -> None:
    """Serve the GGUF over xllamacpp's OpenAI-compatible HTTP server until SIGTERM or SIGINT. With
    ``api_key_env`` naming a set variable, requests must carry that key (``Authorization: Bearer``)."""
    if not importable("xllamacpp"):
        raise missing_dependency("xllamacpp", "llm", "the local OpenAI-compatible server")
    import xllamacpp

    p = engine_params(model_path, n_ctx, n_threads, seed)
    p.hostnames = [host]
    p.port = port
    if api_key_env:
        key = os.environ.get(api_key_env, "").strip()
        if not key:
            raise InputError(f"--api-key-env names {api_key_env!r}, but that environment variable is not set")
        p.api_keys = [key]
    # Block the signals before the server starts its threads (they inherit the mask), then wait for one here.
    stop = {signal.SIGINT, signal.SIGTERM}
    signal.pthread_sigmask(signal.SIG_BLOCK, stop)
    server = xllamacpp.Server(p)
    print(f"serving {model_path} on {server.listening_address}/v1 (xllamacpp {engine_version('xllamacpp')})",
          flush=True)
    got = signal.sigwait(stop)
    logger.info("signal %d: stopping the server", got)
    del server


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m rag.answer.llm_server",
                                 description="Serve a GGUF over an OpenAI-compatible HTTP API (xllamacpp).")
    ap.add_argument("--model", required=True, help="a GGUF path or a name installed by rag models install-llm")
    ap.add_argument("--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1)")
    ap.add_argument("--port", type=int, default=8080)
    ap.add_argument("--n-ctx", type=int, default=4096, help="llama.cpp's window in the model's tokens")
    ap.add_argument("--n-threads", type=int, default=None)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--api-key-env", default=None, help="NAME of an environment variable holding the required key")
    args = ap.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(levelname)s %(name)s: %(message)s")
    try:
        serve(resolve_gguf(args.model), host=args.host, port=args.port, n_ctx=args.n_ctx, n_threads=args.n_threads,
              seed=args.seed, api_key_env=args.api_key_env)
    except RuntimeError as exc:  # xllamacpp: "Failed to init server" (bad file, port in use)
        print(f"error: xllamacpp could not start the server for {args.model}: {exc}", file=sys.stderr)
        return 1
    except RagError as exc:  # no xllamacpp, no such model, no key
        print(f"error: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
