"""Warm before ready: ``/readyz`` says 503 (warming up) until the pipeline answered its warm-up question,
``/healthz`` stays OK, and a failed warm-up is reported while the service serves anyway."""
from __future__ import annotations

import contextlib
import logging
import threading

import httpx

from rag.config import load_config
from rag.errors import ModelLoadError
from rag.pipeline import Pipeline
from rag.pipeline.warmup import questions
from tests.conftest import write_config

Q = "연차 휴가는 며칠인가요?"


@contextlib.contextmanager
def serving(tmp_path, warmup):
    """A server whose pipeline warms up through ``warmup(original)``; yields (service, client)
    as soon as uvicorn listens (before it is ready)."""
    from rag.serve import ApiKeys, Service, create_app
    from tests.unit.serve.server import LiveServer

    cfg = load_config(write_config(tmp_path))
    Pipeline(cfg).build_index()
    service = Service(cfg, keys=ApiKeys.from_env({}, cfg.serve))
    original = service.pipeline.warmup
    service.pipeline.warmup = lambda: warmup(original)
    with LiveServer(create_app(cfg, service), wait_ready=False) as srv, \
            httpx.Client(base_url=srv.url, timeout=60) as client:
        yield service, client


def _wait_ready(client: httpx.Client) -> httpx.Response:
    for _ in range(1200):
        r = client.get("/readyz")
        if r.status_code == 200:
            return r
        threading.Event().wait(0.05)
    raise AssertionError("never ready: " + r.text)


def test_not_ready_until_the_warm_up_question_was_answered(tmp_path, caplog):
    caplog.set_level(logging.INFO)
    started, release = threading.Event(), threading.Event()

    def blocked(original):
        started.set()
        assert release.wait(60)
        return original()

    with serving(tmp_path, blocked) as (service, client):
        assert started.wait(60)
        r = client.get("/readyz")
        assert r.status_code == 503
        body = r.json()
        assert body["ready"] is False and body["status"] == "warming_up" and "warming up" in body["reason"]
        assert client.get("/healthz").status_code == 200  # liveness stays OK
        refused = client.post("/v1/answer", json={"question": Q})
        assert refused.status_code == 503 and refused.json()["error"]["code"] == "not_ready"
        release.set()
        body = _wait_ready(client).json()
        assert body["status"] == "ready" and body["warmup"]["ok"] is True
        seconds = body["warmup"]["seconds"]
        assert {"index", "embedder", "components", "generator", "answer"} <= set(seconds)
        assert body["warmup"]["languages"][0] == "ko"  # the demo corpus is Korean
        metrics = client.get("/metrics").text
        # Not counted as an answer or a question: only the warm-up gauge saw it.
        assert 'rag_warmup_seconds{part="answer"}' in metrics
        assert "rag_answers_total{" not in metrics and "rag_stage_seconds_count{" not in metrics
        assert client.post("/v1/answer", json={"question": Q}).status_code == 200
    messages = [rec.getMessage() for rec in caplog.records]
    ready = [m for m in messages if m.startswith("ready: index")]
    assert ready and "warmed up in" in ready[0]
    # The warm-up question is no request: no request line, no log line carries it.
    assert not any(questions()["ko"] in m or questions()["en"] in m for m in messages)
    assert sum(1 for rec in caplog.records if rec.getMessage() == "request" and rec.path == "/v1/answer") == 2


def test_a_failed_warm_up_is_reported_and_the_service_serves_anyway(tmp_path, caplog):
    caplog.set_level(logging.INFO)

    def failing(original):
        raise ModelLoadError("could not load cross-encoder 'nowhere': /secret/models/nowhere is missing")

    with serving(tmp_path, failing) as (service, client):
        body = _wait_ready(client).json()
        assert body["ready"] is True and body["warmup"]["ok"] is False
        err = body["warmup"]["error"]
        assert err["type"] == "ModelLoadError" and err["code"] == "internal"
        assert "could not load cross-encoder" in err["message"] and "/secret/models" not in err["message"]
        assert client.get("/healthz").status_code == 200
        r = client.post("/v1/answer", json={"question": Q})
        assert r.status_code == 200 and r.json()["status"] in ("answered", "insufficient_evidence")
    warned = [rec for rec in caplog.records if rec.levelno == logging.WARNING and "warm-up failed" in rec.getMessage()]
    assert warned and "serving anyway" in warned[0].getMessage()


def test_an_unexpected_warm_up_failure_carries_no_text(tmp_path):
    def failing(original):
        raise ValueError("입사 첫해 직원에게는 연차 휴가 16일이 부여된다.")  # e.g. a document's text in a message

    with serving(tmp_path, failing) as (service, client):
        err = _wait_ready(client).json()["warmup"]["error"]
        assert err["type"] == "ValueError" and "연차" not in err["message"] and "server log" in err["message"]
