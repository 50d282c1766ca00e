"""The whole configuration tree (:class:`RagConfig`, its hashes and ``--set`` overrides) and loading it
from YAML (:func:`load_config`, :func:`read_yaml`)."""
from __future__ import annotations

from pathlib import Path

from pydantic import Field, ValidationError, model_validator

from rag.config.answering import (
    ContextConfig,
    GateConfig,
    GenerationConfig,
    RerankConfig,
    RetrievalConfig,
    SecurityConfig,
    ValidationConfig,
)
from rag.config.base import Section, digest, format_errors
from rag.config.conversation import ConversationConfig
from rag.config.indexing import BM25Config, ChunkingConfig, CorpusConfig, DenseConfig, EmbeddingConfig, IndexConfig
from rag.config.operations import BatchConfig, LimitsConfig, ServeConfig, ToolsConfig
from rag.errors import ConfigError

__all__ = ["RagConfig", "load_config", "parse_overrides", "read_yaml"]


class RagConfig(Section):
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
    generation: GenerationConfig = Field(default_factory=GenerationConfig)  # its abstention messages: the profiles registered by then
    validation: ValidationConfig = ValidationConfig()
    security: SecurityConfig = SecurityConfig()
    conversation: ConversationConfig = ConversationConfig()
    batch: BatchConfig = BatchConfig()
    limits: LimitsConfig = LimitsConfig()
    serve: ServeConfig = ServeConfig()
    tools: ToolsConfig = ToolsConfig()
    base_dir: str = Field(".", exclude=True)

    @model_validator(mode="before")
    @classmethod
    def _moved_keys(cls, data: object) -> object:
        """``serve.max_question_chars`` (before ``limits`` held the one limit of every entry point) is
        read as ``limits.max_question_chars``; both, with different values, is an error."""
        serve = data.get("serve") if isinstance(data, dict) else None
        if not isinstance(serve, dict) or "max_question_chars" not in serve:
            return data
        serve = dict(serve)
        value = serve.pop("max_question_chars")
        limits = data.get("limits")
        limits = dict(limits) if isinstance(limits, dict) else {}
        if "max_question_chars" in limits and limits["max_question_chars"] != value:
            raise ValueError(f"serve.max_question_chars ({value}) and limits.max_question_chars "
                             f"({limits['max_question_chars']}) differ: keep only limits.max_question_chars, "
                             "the one limit of the Python API, the CLI and the service")
        limits["max_question_chars"] = value
        return {**data, "serve": serve, "limits": limits}

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
        if self.context.guideline_match == "llm" and self.generation.backend == "extractive":
            raise ValueError("context.guideline_match: llm needs an LLM generation.backend (openai or llamacpp), "
                             "not extractive; use auto or keyword")
        if (self.conversation.resolve == "llm" and self.generation.backend == "extractive"
                and self.conversation.rewriter is None):
            raise ValueError("conversation.resolve: llm needs an LLM generation.backend (openai or llamacpp) or a "
                             "conversation.rewriter, not extractive alone; use auto or rules")
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
        """Hash of every setting that can change an answer: the config minus its ``batch``, ``limits``
        and ``serve`` sections."""
        d = self.model_dump(mode="json")
        for section in ("batch", "limits", "serve"):
            d.pop(section, None)
        return digest(d)

    @property
    def index_hash(self) -> str:
        """Hash of the settings an index's contents depend on."""
        d = self.model_dump(mode="json")
        return digest({k: d[k] for k in ("chunking", "bm25", "embedding", "dense")} | {
            "embedding": {k: v for k, v in d["embedding"].items() if k not in ("batch_size", "cache_dir", "threads")}
        })

    def with_overrides(self, overrides: dict[str, object]) -> "RagConfig":
        """A copy with dotted-path overrides applied, validated again. Only what was set (in the file or
        by an override) is carried as set, so a default stays a default (``model_fields_set``)."""
        data = self.model_dump(mode="json", exclude_unset=True)
        full = self.model_dump(mode="json")
        for dotted, value in overrides.items():
            node, ref = data, full
            parts = dotted.split(".")
            for part in parts[:-1]:
                if not isinstance(ref.get(part), dict):
                    raise ConfigError(f"{dotted}: unknown config section '{part}'")
                node, ref = node.setdefault(part, {}), ref[part]
            node[parts[-1]] = value
        return _validate(data, source="overrides", base_dir=self.base_dir)


def _validate(data: object, *, source: str, base_dir: str) -> RagConfig:
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise ConfigError(f"{source}: the top level must be a mapping of sections, got {type(data).__name__}")
    try:
        return RagConfig.model_validate({**data, "base_dir": base_dir})
    except ValidationError as exc:
        raise ConfigError(format_errors(exc, source)) from None


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


def parse_overrides(pairs: list[str] | tuple[str, ...] | None, what: str = "--set") -> dict[str, object]:
    """``KEY=VALUE`` strings (``retrieval.fusion.k=30``; the value read as YAML) as the dict
    :meth:`RagConfig.with_overrides` takes; :class:`ConfigError` naming ``what`` for a string without ``=``."""
    import yaml

    out: dict[str, object] = {}
    for pair in pairs or []:
        key, sep, value = pair.partition("=")
        if not sep or not key.strip():
            raise ConfigError(f"{what} expects KEY=VALUE (e.g. retrieval.fusion.k=30), got {pair!r}")
        out[key.strip()] = yaml.safe_load(value)
    return out
