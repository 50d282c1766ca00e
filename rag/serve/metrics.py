"""Prometheus metrics of one ``rag serve`` worker (each app has its own registry)."""
from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class Metrics:
    registry: object = field(default=None)

    def __post_init__(self) -> None:
        from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram

        r = self.registry = CollectorRegistry()
        buckets = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60)
        self.requests = Counter("rag_requests", "HTTP requests by endpoint and status", ["endpoint", "status"],
                                registry=r)
        self.latency = Histogram("rag_request_seconds", "Request latency by endpoint", ["endpoint"],
                                 buckets=buckets, registry=r)
        self.stage = Histogram("rag_stage_seconds", "Pipeline stage latency (from the answer trace)", ["stage"],
                               buckets=buckets, registry=r)
        self.answers = Counter("rag_answers", "Answers by status", ["status"], registry=r)
        self.abstentions = Counter("rag_abstentions", "Abstentions by reason", ["reason"], registry=r)
        self.validation_failures = Counter("rag_validation_failures",
                                           "Citation validation violations by code (every attempt)", ["code"],
                                           registry=r)
        self.rejected = Counter("rag_rejected", "Requests refused before running, by error code", ["code"],
                                registry=r)
        self.inflight = Gauge("rag_inflight", "Questions being processed", registry=r)
        self.queued = Gauge("rag_queued", "Questions waiting for a slot", registry=r)
        self.index_chunks = Gauge("rag_index_chunks", "Chunks in the served index version", registry=r)
        self.index_documents = Gauge("rag_index_documents", "Documents in the served index version", registry=r)
        # The start-up warm-up (rag.pipeline.warmup), by part; never counted in the request or answer metrics.
        self.warmup_seconds = Gauge("rag_warmup_seconds", "Seconds each part of the start-up warm-up took", ["part"],
                                    registry=r)
        self.document_updates = Counter("rag_document_updates", "Document updates applied", ["op"], registry=r)

    def observe_answer(self, result) -> None:
        """Count one AnswerResult: status, abstention reason, stage timings, validation violations."""
        self.answers.labels(result.status).inc()
        if result.status != "answered":
            self.abstentions.labels(result.reason or "unknown").inc()
        t = result.trace
        if t is None:
            return
        for stage, ms in t.timings_ms.items():
            self.stage.labels(stage).observe(ms / 1e3)
        for a in t.attempts:
            for v in a.violations:
                self.validation_failures.labels(v.code).inc()

    def render(self) -> tuple[bytes, str]:
        from prometheus_client import CONTENT_TYPE_LATEST, generate_latest

        return generate_latest(self.registry), CONTENT_TYPE_LATEST
