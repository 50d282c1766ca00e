"""The pipeline: wires the stages from one validated config."""
from __future__ import annotations

import logging
from pathlib import Path
from typing import Iterable

from rag.analyzers import make_analyzer
from rag.chunking import Chunker
from rag.config import RagConfig, load_config
from rag.embedders import CachedEmbedder, Embedder, EmbeddingCache, make_embedder
from rag.errors import IndexMismatchError
from rag.index import HybridIndex, IndexSettings, Progress, UpdateReport, build_index, index_exists
from rag.loaders import check_unique, load_documents
from rag.retrieval import HybridRetriever
from rag.tokens import TiktokenCounter
from rag.types import Document, SearchResult

logger = logging.getLogger(__name__)


class Pipeline:
    """Entry point of the Python API.

    >>> p = Pipeline.from_config("configs/default.yaml")   # doctest: +SKIP
    >>> p.build_index()                                    # doctest: +SKIP
    >>> p.search("연차 휴가는 며칠인가요?").candidates[0].chunk.evidence_id  # doctest: +SKIP
    """

    def __init__(self, config: RagConfig, embedder: Embedder | None = None) -> None:
        self.config = config
        self._embedder = embedder
        self._index: HybridIndex | None = None

    @classmethod
    def from_config(cls, path: str | Path | None = None, **kwargs) -> "Pipeline":
        return cls(load_config(path), **kwargs)

    # -- components --------------------------------------------------------------
    @property
    def embedder(self) -> Embedder:
        if self._embedder is None:
            e = self.config.embedding
            inner = make_embedder(e.backend, e.model, query_prefix=e.query_prefix, passage_prefix=e.passage_prefix,
                                  batch_size=e.batch_size, dim=e.dim, threads=e.threads)
            if e.cache_dir:
                inner = CachedEmbedder(inner, EmbeddingCache(self.config.resolve(e.cache_dir) / "embeddings.sqlite"))
            self._embedder = inner
        return self._embedder

    def settings(self) -> IndexSettings:
        c = self.config
        return IndexSettings(
            index_config_hash=c.index_hash,
            bm25_backend=c.bm25.backend,
            bm25_k1=c.bm25.k1,
            bm25_b=c.bm25.b,
            dense_index=c.dense.index,
            hnsw_m=c.dense.hnsw_m,
            hnsw_ef_construction=c.dense.hnsw_ef_construction,
            hnsw_ef_search=c.dense.hnsw_ef_search,
        )

    def chunker(self) -> Chunker:
        ch = self.config.chunking
        return Chunker(ch.max_tokens, ch.overlap_tokens, TiktokenCounter(ch.encoding))

    def analyzer(self):
        b = self.config.bm25
        return make_analyzer(b.analyzer, stem=b.stem, stopwords=b.stopwords)

    @property
    def index_path(self) -> Path:
        return self.config.resolve(self.config.index.path)

    def new_index(self, docs: Iterable[Document], progress: Progress | None = None) -> HybridIndex:
        """Build an in-memory index (not saved)."""
        return build_index(check_unique(list(docs)), self.settings(), self.chunker(), self.analyzer(), self.embedder, progress)

    @property
    def index(self) -> HybridIndex:
        if self._index is None:
            self._index = HybridIndex.load(self.index_path, self.settings(), self.chunker(), self.analyzer(), self.embedder)
        return self._index

    @property
    def retriever(self) -> HybridRetriever:
        return HybridRetriever(self.index, self.embedder, self.config.retrieval)

    # -- operations --------------------------------------------------------------
    def load_corpus(self) -> list[Document]:
        docs: list[Document] = []
        for p in self.config.corpus.paths:
            docs.extend(load_documents(self.config.resolve(p), self.config.corpus.format))
        return check_unique(docs)

    def build_index(self, docs: Iterable[Document] | None = None, *, force: bool = False,
                    progress: Progress | None = None) -> HybridIndex:
        """Index the corpus (or ``docs``) and save atomically to ``index.path``.

        An existing index built with another model/analyzer is refused unless ``force``;
        unchanged chunks are not embedded again (embedding cache)."""
        path = self.index_path
        if index_exists(path) and not force:
            try:
                HybridIndex.load(path, self.settings(), self.chunker(), self.analyzer(), self.embedder)
            except IndexMismatchError as exc:
                raise IndexMismatchError(f"{exc}\n(refusing to overwrite it; pass force=True / --force)") from None
        docs = self.load_corpus() if docs is None else list(docs)
        idx = self.new_index(docs, progress)
        idx.save(path)
        self._index = idx
        return idx

    def add_documents(self, docs: Iterable[Document]) -> UpdateReport:
        report = self.index.add(docs)
        self.index.save(self.index_path)
        return report

    def replace_documents(self, docs: Iterable[Document]) -> UpdateReport:
        report = self.index.replace(docs)
        self.index.save(self.index_path)
        return report

    def delete_document(self, doc_id: str, version: str | None = None) -> UpdateReport:
        report = self.index.delete(doc_id, version)
        self.index.save(self.index_path)
        return report

    def search(self, query: str, candidates: int | None = None) -> SearchResult:
        return self.retriever.search(query, candidates)
