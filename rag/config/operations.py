"""The operational sections: batch runs, the tool phase and ``rag serve``. ``batch`` and ``serve`` never
change an answer (:attr:`rag.config.RagConfig.results_hash` leaves them out)."""
from __future__ import annotations

from typing import ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from rag.config.base import Section
from rag.errors import QuestionTooLongError

__all__ = ["BatchConfig", "KeyPrincipal", "LimitsConfig", "ServeConfig", "ServeKey", "ToolsConfig"]


class BatchConfig(Section):
    """Batch runs over question sets (rag.batch): operational only, never changes an answer."""

    section: ClassVar[str] = "batch"
    concurrency: int = Field(4, ge=1, le=256)  # questions whose generation step may run at once
    fsync: bool = True  # fsync the results file after every line (kill -9 / power-loss safety)
    max_consecutive_failures: int | None = Field(50, ge=1)  # stop the batch (server down?); None: never


class LimitsConfig(Section):
    """What one request may carry, the same at every entry point: the Python API (``Pipeline.answer``,
    ``search``, ...), ``rag ask`` / ``rag batch`` and ``rag serve``. A request past a limit is refused
    before any work (:class:`rag.errors.QuestionTooLongError`; the service: 413 ``question_too_long``).
    Operational only: it refuses, it never changes an answer."""

    section: ClassVar[str] = "limits"
    max_question_chars: int = Field(4000, gt=0)  # characters of the question, leading/trailing space aside

    def check_question(self, question: object) -> None:
        """Refuse a question (a string; anything else is left to the caller's own check) longer than
        ``max_question_chars`` with a :class:`rag.errors.QuestionTooLongError`."""
        if isinstance(question, str) and len(question.strip()) > self.max_question_chars:
            raise QuestionTooLongError(len(question.strip()), self.max_question_chars)


class ToolsConfig(Section):
    """Tools and live data (rag.tools, seed 004): which tools a question gets, and the tool loop."""

    section: ClassVar[str] = "tools"
    max_tools: int = Field(8, ge=1, le=128)  # tool definitions sent to the model at most
    # Products (first tag) kept, by their best tool's score; 0: no limit. A product named in the
    # question always decides the group. 0 measured best on the GitHub catalogue (docs/results/tools.md).
    max_products: int = Field(0, ge=0)
    # The best tools of the whole ranking that are sent whatever product the question names (a product
    # named in passing must not shut out the tool the question is about); 0: the named product decides alone.
    keep_top: int = Field(2, ge=0)
    min_score: float = Field(0.5, ge=0, le=1)  # fused score (min-max normalised per question) a tool needs
    min_similarity: float = Field(0.0, ge=-1, le=1)  # the best tool's dense cosine must reach it, else no tool is sent
    bm25_weight: float = Field(0.3, ge=0)
    dense_weight: float = Field(0.7, ge=0)
    max_calls: int = Field(6, ge=0)  # tool calls per question
    max_rounds: int = Field(4, ge=1)  # model turns in the tool phase
    call_timeout_s: float = Field(10.0, gt=0)
    max_result_tokens: int = Field(1200, ge=50)  # a result is trimmed (rows, then fields) to this many tokens
    hints: Literal["before_first_call", "with_definition"] = "before_first_call"
    # Write tools (effect: write) are offered only when allowed, and each call then waits for the
    # registry's approval callback (ToolRegistry.with_approval); a tool that declares no effect counts
    # as undeclared_effect (write: a forgotten declaration never lets the model change anything).
    allow_write: bool = False
    undeclared_effect: Literal["read", "write"] = "write"
    approval_timeout_s: float = Field(120.0, gt=0)  # an approval that takes longer refuses the call
    # Tokens the tool phase keeps free in its prompt for the tool definitions' usage hints, the model's
    # calls and the results it reads back (the definitions are counted on top, exactly); taken from the
    # documents' share during the tool phase only; the answer's prompt is budgeted afresh.
    phase_reserve: int = Field(1500, ge=0)

    @model_validator(mode="after")
    def _some_weight(self) -> "ToolsConfig":
        if self.bm25_weight + self.dense_weight <= 0:
            raise ValueError("bm25_weight + dense_weight must be > 0")
        return self


class KeyPrincipal(BaseModel):
    """The fixed principal an API key reads as (``serve.keys.NAME.principal``)."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    user: str | None = None
    groups: tuple[str, ...] = ()
    tenant: str | None = None


class ServeKey(BaseModel):
    """What the API key named NAME (in RAG_API_KEYS / RAG_ADMIN_KEYS) reads as: a fixed ``principal``,
    or a ``trusted_backend`` that signs the end user per request with the secret in the environment
    variable ``secret_env`` (the secret itself is never in the config). docs/service.md."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    principal: KeyPrincipal | None = None
    trusted_backend: bool = False
    secret_env: str | None = None

    @model_validator(mode="after")
    def _one_kind(self) -> "ServeKey":
        if self.trusted_backend == (self.principal is not None):
            raise ValueError("give a key either principal: {user, groups, tenant} or trusted_backend: true")
        if self.trusted_backend and not self.secret_env:
            raise ValueError("a trusted_backend key needs secret_env: the environment variable holding its secret")
        if self.secret_env and not self.trusted_backend:
            raise ValueError("secret_env is only for trusted_backend keys")
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
    # max_question_chars moved to ``limits`` (one limit for every entry point); ``serve.max_question_chars``
    # in a config is still read as ``limits.max_question_chars`` (rag.config.root).
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
    # What each API key (by its name) reads as; a key not listed is anonymous (public documents only).
    keys: dict[str, ServeKey] = Field(default_factory=dict)
    principal_max_age_s: int = Field(300, ge=1)  # a signed principal older than this is refused (replay window)
    principal_max_future_s: int = Field(30, ge=0)  # ... and one timestamped further ahead than this (clock skew)
    # A signed request must carry X-Rag-Nonce, remembered for its window so a replay is refused;
    # false accepts clients written before nonces (their requests can be replayed within the window).
    principal_require_nonce: bool = True
    max_nonces: int = Field(100_000, ge=1)  # nonces remembered per server; past it the oldest are forgotten
