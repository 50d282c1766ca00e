"""What every index backend offers the retriever, the pipeline and the service."""
from __future__ import annotations

from typing import Callable, Iterable, Mapping, Protocol, Sequence, runtime_checkable

import numpy as np

from rag.index.layout import DocumentRecord, IndexParams
from rag.index.updates import IndexedDocument, UpdateReport
from rag.types import Document, ScoredChunk, SearchFilter


@runtime_checkable
class Index(Protocol):
    """A hybrid index: :class:`rag.index.store.HybridIndex` (``index.backend: local``) or
    :class:`rag.index.milvus.MilvusIndex` (``index.backend: milvus``).

    Both keep per-retriever ranks and scores (fusion stays in :mod:`rag.retrieval`), both order
    ties by (document id, version, ordinal), and a :meth:`snapshot` sees one whole version. Where
    an index lives and how it is opened, built and kept current is its backend's business
    (:class:`rag.index.backend.IndexBackend`)."""

    backend: str
    has_bm25: bool

    def __len__(self) -> int: ...

    @property
    def documents(self) -> Mapping[tuple[str, str], DocumentRecord]: ...

    @property
    def version_name(self) -> str | None: ...

    @property
    def dim(self) -> int: ...

    def params(self) -> IndexParams: ...

    def snapshot(self) -> "Index": ...

    def search_bm25(self, query: str, k: int, where: SearchFilter | None = None) -> list[ScoredChunk]: ...

    def search_dense(self, query_vector: np.ndarray, k: int, where: SearchFilter | None = None) -> list[ScoredChunk]: ...

    def document_texts(self, doc_id: str, version: str) -> tuple[str, ...]: ...

    def add(self, docs: Iterable[Document], progress=None) -> UpdateReport: ...

    def replace(self, docs: Iterable[Document], progress=None) -> UpdateReport: ...

    def delete(self, doc_id: str, version: str | None = None) -> UpdateReport: ...

    def export(self, keys: Sequence[tuple[str, str]]) -> list[IndexedDocument]: ...

    def import_documents(self, items: Sequence[IndexedDocument]) -> int: ...


Operation = Callable[[Index], UpdateReport]
"""One update of an index (add, replace, delete, import), applied by
:meth:`rag.index.backend.IndexBackend.write` to the newest published version under the writer lock."""
