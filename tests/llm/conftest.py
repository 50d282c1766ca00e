"""LLM tier: a real local LLM, Qwen2.5-Coder-0.5B-Instruct Q4_K_M, through both paths:
in-process (``generation.backend: llamacpp``) and llama.cpp's OpenAI-compatible server, started
once per session on a free port of 127.0.0.1 and stopped after it: xllamacpp's
(``python -m rag.answer.llm_server``), or ``python -m llama_cpp.server`` when the tier runs
llama-cpp-python (installed, or ``RAG_LLAMACPP_ENGINE=llama-cpp-python``).

Install: ``pip install 'rag[llm]'`` (the prebuilt xllamacpp wheel) and ``rag models install-llm
qwen2.5-0.5b`` (``make test`` does both). Skipped, with the reason, when either is missing.
``RAG_LLM_GGUF`` may point at another GGUF; ``RAG_LLM_THREADS`` sets llama.cpp's threads (default 1:
two threads on a busy 2-core machine collapse).
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

from rag.answer.llama_engines import LLAMA_CPP_PYTHON, choose_engine, engine_version
from rag.answer.llm_models import MODELS, models_dir
from rag.errors import RagError

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
def engine() -> str:
    """The llama.cpp engine the tier runs (rag.answer.llama_engines.choose_engine: $RAG_LLAMACPP_ENGINE,
    else llama-cpp-python when installed, else the prebuilt xllamacpp)."""
    try:
        return choose_engine()
    except RagError as exc:
        pytest.skip(f"the llm tier needs a llama.cpp engine: {exc}")


@pytest.fixture(scope="session")
def gguf(engine) -> Path:
    """The GGUF the tier runs (a llama.cpp engine must be importable too)."""
    path = find_gguf()
    if path is None:
        where = os.environ.get("RAG_LLM_GGUF") or models_dir() / MODEL.filename
        pytest.skip(f"no GGUF at {where}: rag models install-llm {MODEL.name} (or set RAG_LLM_GGUF to a GGUF file)")
    crash = _generation_crashes(engine, path)
    if crash:
        pytest.skip(crash)
    return path


PROBE = """
import sys
from rag.answer.llama_engines import load_chat_model
llm = load_chat_model(sys.argv[2], n_ctx=256, n_threads=1, seed=0, engine=sys.argv[1])
print(llm.create_chat_completion(messages=[{"role": "user", "content": "Hello"}], max_tokens=2,
                                 temperature=0)["choices"][0]["message"]["content"])
"""


def _generation_crashes(engine: str, path: Path) -> str:
    """Why the installed engine cannot generate on this machine ("" when it can): two tokens
    generated in a subprocess first, so a build that crashes in native code (a llama-cpp-python built
    with -march=native on a VM that reports AMX but does not enable it segfaults in ``llama_decode``)
    skips this tier with its reason instead of killing the whole test session."""
    what = f"{engine} {engine_version(engine)}"
    try:
        proc = subprocess.run([sys.executable, "-c", PROBE, engine, str(path)], capture_output=True, text=True,
                              timeout=READY_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        return f"{what}: generating 2 tokens took over {READY_TIMEOUT_S:.0f}s"
    if proc.returncode == 0:
        return ""
    how = f"signal {-proc.returncode}" if proc.returncode < 0 else f"exit {proc.returncode}"
    hint = (" rebuild it without -march=native (the Makefile's LLAMA_CMAKE_ARGS, docs/local-llm.md)"
            if engine == LLAMA_CPP_PYTHON else "")
    return (f"{what} crashed ({how}) generating 2 tokens from {path.name} in a subprocess;{hint}: "
            f"{proc.stderr.strip()[-300:]}")


def server_command(engine: str, gguf: Path, port: int) -> list[str]:
    """The command that serves ``gguf`` OpenAI-compatibly on 127.0.0.1:``port`` with the tier's engine:
    xllamacpp's server (``python -m rag.answer.llm_server``) or llama-cpp-python's."""
    if engine == LLAMA_CPP_PYTHON:
        missing = [m for m in SERVER_MODULES if importlib.util.find_spec(m) is None]
        if missing:
            pytest.skip(f"the server path needs llama-cpp-python[server] (missing: {', '.join(missing)}); "
                        "pip install 'rag[llm-source]'")
        return [sys.executable, "-m", "llama_cpp.server", "--model", str(gguf), "--host", "127.0.0.1",
                "--port", str(port), "--n_ctx", str(N_CTX), "--n_threads", str(THREADS), "--seed", "0",
                "--verbose", "False"]
    return [sys.executable, "-m", "rag.answer.llm_server", "--model", str(gguf), "--host", "127.0.0.1",
            "--port", str(port), "--n-ctx", str(N_CTX), "--n-threads", str(THREADS), "--seed", "0"]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="session")
def llama_server(engine, gguf, tmp_path_factory):
    """Base URL (``http://127.0.0.1:PORT/v1``) of a running llama.cpp server; stopped after the session."""
    port = _free_port()
    cmd = server_command(engine, gguf, port)
    log_path = tmp_path_factory.mktemp("llama") / "server.log"
    log = open(log_path, "wb")  # noqa: SIM115 - the server process writes to it until teardown
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
