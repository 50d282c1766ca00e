"""Validated YAML configuration: the one place where settings and their defaults are declared.

Every section is a frozen pydantic model with ``extra="forbid"``, so a typo is an error that
names its path. Relative paths are resolved against the folder of the config file.

The rule for how configuration reaches a component: a stage component takes its own section
as its ``config`` argument (``ContextBuilder(counter, config=ContextConfig(max_blocks=4))``),
defaulting to the section's defaults; collaborators (a token counter, an embedder, an index)
are separate arguments. There are no mirror settings classes, so every default is declared
here once. An invalid value is a :class:`~rag.errors.ConfigError` naming the dotted path,
whether it comes from a YAML file, a ``--set`` override or a section built in Python.

The sections live in :mod:`rag.config.indexing`, :mod:`rag.config.answering` and
:mod:`rag.config.operations`, the tree and its loading in :mod:`rag.config.root`, their base in
:mod:`rag.config.base`; every public name is importable from ``rag.config``.
"""
from __future__ import annotations

from rag.config.answering import (
    ABSTENTION_MESSAGES,
    LANGUAGE_KEYS,
    ContextConfig,
    FusionConfig,
    GateConfig,
    GenerationConfig,
    GuidelineConfig,
    RerankConfig,
    RetrievalConfig,
    SecurityConfig,
    ValidationConfig,
    VersionsAsOf,
)
from rag.config.base import Section, digest
from rag.config.conversation import ConversationConfig, RewriterConfig
from rag.config.indexing import (
    BM25Config,
    ChunkingConfig,
    CorpusConfig,
    DenseConfig,
    EmbeddingConfig,
    IndexConfig,
    MilvusConfig,
)
from rag.config.operations import BatchConfig, LimitsConfig, ServeConfig, ToolsConfig
from rag.config.root import RagConfig, load_config, parse_overrides, read_yaml
from rag.errors import ConfigError, ConfigValueError

__all__ = [
    "ABSTENTION_MESSAGES", "BM25Config", "BatchConfig", "ChunkingConfig", "ConfigError", "ConfigValueError",
    "ContextConfig", "ConversationConfig", "CorpusConfig", "DenseConfig", "EmbeddingConfig", "FusionConfig", "GateConfig",
    "GenerationConfig", "GuidelineConfig", "IndexConfig", "LANGUAGE_KEYS", "LimitsConfig", "MilvusConfig", "RagConfig",
    "RerankConfig", "RetrievalConfig", "RewriterConfig", "Section", "SecurityConfig", "ServeConfig", "ToolsConfig",
    "ValidationConfig", "VersionsAsOf", "digest", "load_config", "parse_overrides", "read_yaml",
]
