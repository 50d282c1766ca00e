"""LLM tier: a real local LLM, Qwen2.5-Coder-0.5B-Instruct Q4_K_M, through both paths:
in-process (``generation.backend: llamacpp``) and llama.cpp's OpenAI-compatible server
(``python -m llama_cpp.server``, started once per session on a free loopback port).

Install: ``pip install 'rag[llm]'`` and ``rag models install-llm qwen2.5-0.5b`` (``make test``
does both). Skipped, with the reason, when either is missing. ``RAG_LLM_GGUF`` may point at
another GGUF; ``RAG_LLM_THREADS`` sets llama.cpp's threads (default 1: two threads on a busy
2-core machine collapse).
"""
from __future__ import annotations

import importlib.util
import os
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from rag.answer.llm_models import MODELS, models_dir

MODEL = MODELS["qwen2.5-0.5b"]
SERVER_MODULES = ("llama_cpp", "uvicorn", "fastapi", "sse_starlette", "starlette_context", "pydantic_settings")
READY_TIMEOUT_S = float(os.environ.get("RAG_LLM_READY_TIMEOUT", "180"))
THREADS = int(os.environ.get("RAG_LLM_THREADS", "1"))
N_CTX = 2048


def find_gguf() -> Path | None:
    override = os.environ.get("RAG_LLM_GGUF")
    path = Path(override) if override else models_dir() / MODEL.filename
    return path if path.is_file() else None


@pytest.fixture(scope="session")
def gguf() -> Path:
    """The GGUF the tier runs (llama-cpp-python must be importable too)."""
    if importlib.util.find_spec("llama_cpp") is None:
        pytest.skip("the llm tier needs llama-cpp-python: pip install 'rag[llm]'")
    path = find_gguf()
    if path is None:
        where = os.environ.get("RAG_LLM_GGUF") or models_dir() / MODEL.filename
        pytest.skip(f"no GGUF at {where}: rag models install-llm {MODEL.name} (or set RAG_LLM_GGUF to a GGUF file)")
    crash = _generation_crashes(path)
    if crash:
        pytest.skip(crash)
    return path


PROBE = """
import sys
from llama_cpp import Llama
llm = Llama(model_path=sys.argv[1], n_ctx=256, n_threads=1, seed=0, verbose=False)
print(llm("Hello", max_tokens=2, temperature=0)["choices"][0]["text"])
"""


def _generation_crashes(path: Path) -> str:
    """Why the installed llama-cpp-python cannot generate on this machine ("" when it can): two
    tokens generated in a subprocess first, so a build that crashes in native code (a native build
    on a VM that reports AMX but does not enable it segfaults in ``llama_decode``) skips this tier
    with its reason instead of killing the whole test session."""
    from importlib.metadata import version

    try:
        proc = subprocess.run([sys.executable, "-c", PROBE, str(path)], capture_output=True, text=True,
                              timeout=READY_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        return f"llama-cpp-python {version('llama-cpp-python')}: generating 2 tokens took over {READY_TIMEOUT_S:.0f}s"
    if proc.returncode == 0:
        return ""
    how = f"signal {-proc.returncode}" if proc.returncode < 0 else f"exit {proc.returncode}"
    return (f"llama-cpp-python {version('llama-cpp-python')} crashed ({how}) generating 2 tokens from {path.name} "
            f"in a subprocess; rebuild it without -march=native (the Makefile's LLAMA_CMAKE_ARGS, docs/local-llm.md): "
            f"{proc.stderr.strip()[-300:]}")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="session")
def llama_server(gguf, tmp_path_factory):
    """Base URL (``http://127.0.0.1:PORT/v1``) of a running llama.cpp server; stopped after the session."""
    missing = [m for m in SERVER_MODULES if importlib.util.find_spec(m) is None]
    if missing:
        pytest.skip(f"the server path needs llama-cpp-python[server] (missing: {', '.join(missing)}); "
                    "pip install 'rag[llm]'")
    port = _free_port()
    log_path = tmp_path_factory.mktemp("llama") / "server.log"
    log = open(log_path, "wb")  # noqa: SIM115 - the server process writes to it until teardown
    cmd = [sys.executable, "-m", "llama_cpp.server", "--model", str(gguf), "--host", "127.0.0.1", "--port", str(port),
           "--n_ctx", str(N_CTX), "--n_threads", str(THREADS), "--seed", "0", "--verbose", "False"]
    proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT)
    base = f"http://127.0.0.1:{port}/v1"
    try:
        deadline = time.monotonic() + READY_TIMEOUT_S
        while True:
            if proc.poll() is not None:
                tail = log_path.read_text(errors="replace")[-3000:]
                pytest.fail(f"llama.cpp server exited with {proc.returncode}:\n{tail}")
            try:
                with urllib.request.urlopen(f"{base}/models", timeout=2) as r:
                    if r.status == 200:
                        break
            except OSError:
                pass
            if time.monotonic() > deadline:
                pytest.fail(f"llama.cpp server not ready after {READY_TIMEOUT_S:.0f}s:\n"
                            f"{log_path.read_text(errors='replace')[-3000:]}")
            time.sleep(0.5)
        yield base
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        log.close()
