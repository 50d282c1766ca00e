"""``rag serve`` as a process: start, graceful shutdown on SIGTERM, several workers, refusals."""
from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import httpx
import pytest

from rag.config import load_config
from rag.pipeline import Pipeline
from tests.conftest import write_config
from tests.fakes import Reply

ROOT = Path(__file__).resolve().parents[3]
Q = "연차 휴가는 며칠인가요?"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _start(cfg_path: Path, *args: str, env: dict | None = None) -> tuple[subprocess.Popen, str]:
    port = _free_port()
    proc = subprocess.Popen([sys.executable, "-m", "rag.cli", "serve", "--config", str(cfg_path), "--port", str(port),
                             *args], cwd=ROOT, env={**os.environ, **(env or {})}, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True)
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise AssertionError("rag serve exited:\n" + proc.stdout.read())
        try:
            if httpx.get(url + "/readyz", timeout=2).status_code == 200:
                return proc, url
        except httpx.TransportError:
            pass
        time.sleep(0.2)
    proc.kill()
    raise AssertionError("rag serve did not become ready:\n" + proc.stdout.read())


def test_sigterm_finishes_the_request_in_flight(tmp_path, fake_llm):
    cfg_path = write_config(tmp_path, generation={"backend": "openai", "model": "fake-model",
                                                  "base_url": fake_llm.base_url, "max_retries": 0,
                                                  "max_attempts": 1})
    valid = ('{"status": "answered", "answer": "입사 첫해에는 연차 휴가 16일이 부여된다. [S1]", "citations": '
             '[{"source_id": "S1", "claim": "입사 첫해에는 연차 휴가 16일이 부여된다.", '
             '"quote": "입사 첫해 직원에게는 연차 휴가 16일이 부여된다."}]}')
    fake_llm.script(Reply(valid, delay_s=2.0))
    proc, url = _start(cfg_path, "--build-index")
    try:
        got: list[httpx.Response] = []
        t = threading.Thread(target=lambda: got.append(httpx.post(url + "/v1/answer", json={"question": Q},
                                                                  timeout=30)))
        t.start()
        time.sleep(0.8)  # the request is waiting for the (slow) LLM
        proc.send_signal(signal.SIGTERM)
        t.join(timeout=30)
        # uvicorn shuts down gracefully, then re-raises the signal it caught: exit by SIGTERM is expected
        assert proc.wait(timeout=30) in (0, -signal.SIGTERM)
        assert got and got[0].status_code == 200, got[0].text if got else "no response"
        assert got[0].json()["status"] in ("answered", "insufficient_evidence")
        assert got[0].json()["trace"]["attempts"]  # the LLM answered; the request was not cut off
        with pytest.raises(httpx.TransportError):  # and new connections are refused
            httpx.get(url + "/healthz", timeout=2)
        logs = proc.stdout.read()
        assert '"message": "request"' in logs and '"request_id"' in logs  # structured JSON access lines
    finally:
        if proc.poll() is None:
            proc.kill()


def test_two_workers_follow_one_index(tmp_path):
    cfg_path = write_config(tmp_path, serve={"index_poll_s": 0.2})
    Pipeline(load_config(cfg_path)).build_index()
    proc, url = _start(cfg_path, "--workers", "2")
    try:
        with httpx.Client(base_url=url, timeout=30) as c:
            doc = {"id": "cafe", "text": "사내 카페는 오전 8시에 문을 엽니다."}
            assert c.post("/v1/documents", json={"documents": [doc]}).status_code == 200
            deadline = time.monotonic() + 20
            streak = 0
            while streak < 12 and time.monotonic() < deadline:  # consecutive hits, whichever worker answers
                r = c.post("/v1/search", json={"query": "카페 오전", "top": 3, "filters": {"document_ids": ["cafe"]}})
                streak = streak + 1 if r.json()["candidates"] else 0
                time.sleep(0.1)
            assert streak >= 12, "a worker kept serving the old index version"
            # Updates through either worker build on the newest version: nothing is lost.
            for i in range(4):
                assert c.post("/v1/documents", json={"documents": [{"id": f"n{i}", "text": f"메모 {i}"}]}).status_code == 200
        ids = {k[0] for k in Pipeline(load_config(cfg_path)).index.documents}
        assert {"cafe", "n0", "n1", "n2", "n3"} <= ids
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=30)


def test_refusals_before_start(tmp_path):
    cfg_path = write_config(tmp_path)
    env = {**os.environ, "RAG_API_KEYS": "", "RAG_ADMIN_KEYS": ""}
    run = lambda *a: subprocess.run([sys.executable, "-m", "rag.cli", "serve", "--config", str(cfg_path), *a],  # noqa: E731
                                    cwd=ROOT, env=env, capture_output=True, text=True, timeout=60)
    no_index = run("--port", "0")
    assert no_index.returncode == 2 and "rag index" in no_index.stderr
    open_host = run("--host", "0.0.0.0")
    assert open_host.returncode == 2 and "without API keys" in open_host.stderr
    bad_keys = subprocess.run([sys.executable, "-m", "rag.cli", "serve", "--config", str(cfg_path)], cwd=ROOT,
                              env={**env, "RAG_API_KEYS": "nokey"}, capture_output=True, text=True, timeout=60)
    assert bad_keys.returncode == 2 and "name:key" in bad_keys.stderr
