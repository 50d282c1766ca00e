"""The operational sections: batch runs, the tool phase and ``rag serve``. ``batch`` and ``serve`` never
change an answer (:attr:`rag.config.RagConfig.results_hash` leaves them out)."""
from __future__ import annotations

from typing import ClassVar, Literal

from pydantic import Field, model_validator

from rag.config.base import Section

__all__ = ["BatchConfig", "ServeConfig", "ToolsConfig"]


class BatchConfig(Section):
    """Batch runs over question sets (rag.batch): operational only, never changes an answer."""

    section: ClassVar[str] = "batch"
    concurrency: int = Field(4, ge=1, le=256)  # questions whose generation step may run at once
    fsync: bool = True  # fsync the results file after every line (kill -9 / power-loss safety)
    max_consecutive_failures: int | None = Field(50, ge=1)  # stop the batch (server down?); None: never


class ToolsConfig(Section):
    """Tools and live data (rag.tools, seed 004): which tools a question gets, and the tool loop."""

    section: ClassVar[str] = "tools"
    max_tools: int = Field(8, ge=1, le=128)  # tool definitions sent to the model at most
    # Products (first tag) kept, by their best tool's score; 0: no limit. A product named in the
    # question always decides the group. 0 measured best on the GitHub catalogue (docs/results/tools.md).
    max_products: int = Field(0, ge=0)
    min_score: float = Field(0.5, ge=0, le=1)  # fused score (min-max normalised per question) a tool needs
    min_similarity: float = Field(0.0, ge=-1, le=1)  # the best tool's dense cosine must reach it, else no tool is sent
    bm25_weight: float = Field(0.3, ge=0)
    dense_weight: float = Field(0.7, ge=0)
    max_calls: int = Field(6, ge=0)  # tool calls per question
    max_rounds: int = Field(4, ge=1)  # model turns in the tool phase
    call_timeout_s: float = Field(10.0, gt=0)
    max_result_tokens: int = Field(1200, ge=50)  # a result is trimmed (rows, then fields) to this many tokens
    hints: Literal["before_first_call", "with_definition"] = "before_first_call"

    @model_validator(mode="after")
    def _some_weight(self) -> "ToolsConfig":
        if self.bm25_weight + self.dense_weight <= 0:
            raise ValueError("bm25_weight + dense_weight must be > 0")
        return self


class ServeConfig(Section):
    """``rag serve`` (rag.serve): operational only, never changes an answer. Host, port and workers
    can be overridden on the command line; API keys come from the environment (RAG_API_KEYS,
    RAG_ADMIN_KEYS), never from the config."""

    section: ClassVar[str] = "serve"
    host: str = "127.0.0.1"
    port: int = Field(8000, ge=0, le=65535)
    workers: int = Field(1, ge=1, le=64)  # processes; each loads the models and follows the index on disk
    max_concurrency: int = Field(4, ge=1, le=1024)  # questions processed at once per worker
    max_queue: int = Field(32, ge=0)  # questions waiting for a slot; beyond it: 429 with Retry-After
    retry_after_s: int = Field(1, ge=1)
    request_timeout_s: float = Field(60.0, gt=0)  # whole request; past it: 504 with code "timeout"
    max_request_bytes: int = Field(1_000_000, gt=0)  # any body except POST /v1/documents
    max_documents_bytes: int = Field(50_000_000, gt=0)  # POST /v1/documents
    max_question_chars: int = Field(4000, gt=0)
    max_history_turns: int = Field(50, ge=0)
    cors_origins: tuple[str, ...] = ()  # empty: CORS off (no CORS headers at all)
    allow_unauthenticated: bool = False  # serve a non-loopback host without API keys (refused by default)
    shutdown_timeout_s: float = Field(30.0, gt=0)  # graceful shutdown: in-flight requests get this long
    index_poll_s: float = Field(1.0, gt=0)  # how often a worker checks the index on disk for a newer version
    follow: tuple[str, ...] = ()  # folders of files kept in sync with the index, as `rag sync` does (relative to the config)
    follow_interval_s: float = Field(30.0, gt=0)  # how often each followed folder is compared with the index
    trace: bool = True  # include the trace in answers unless the request says otherwise
    model_name: str = "rag"  # the model name /v1/chat/completions reports
    log_format: Literal["json", "text"] = "json"
