"""The Milvus index: the :class:`rag.index.protocol.Index` API over the collections of
:mod:`rag.index.milvus.collections`, written one generation at a time (:mod:`rag.index.milvus.writer`)."""
from __future__ import annotations

import copy
import json
import logging
import threading
from dataclasses import asdict
from typing import Iterable, Sequence

import numpy as np

from rag import __version__
from rag.config import RagConfig
from rag.errors import (
    ConfigError,
    DuplicateDocumentError,
    IndexMismatchError,
    IndexNotFoundError,
    InputError,
    UnsupportedByBackendError,
)
from rag.index.chunking import Chunker
from rag.models.embedders import Embedder
from rag.index.layout import (FORMAT_VERSION, DocumentRecord, IndexParams, RestrictedCache, check_params,
                              chunking_name)
from rag.index.loaders import check_unique
from rag.index.milvus.collections import Collections
from rag.index.milvus.engine import Engine, is_server_uri
from rag.index.milvus.records import (EMPTY, View, chunk_from_row, dense_search_params, hashed_terms, quote,
                                          view_filter)
from rag.index.milvus.writer import lease, purge_all, write_generation
from rag.index.updates import (IndexedDocument, Progress, UpdateReport, check_document, check_replace,
                               chunk_and_embed, keys_of, labels, replace_plan, same_contents, split_new)
from rag.text.analyzers import Analyzer
from rag.types import Chunk, Document, ScoredChunk, SearchFilter

logger = logging.getLogger(__name__)


class MilvusIndex:
    """A hybrid index kept in Milvus; see :mod:`rag.index.milvus` for the layout and the versions."""

    backend = "milvus"

    def __init__(self, config: RagConfig, chunker: Chunker, analyzer: Analyzer, embedder: Embedder, *,
                 collection: str | None = None, dim: int | None = None) -> None:
        """Connects lazily (:meth:`open` or :meth:`create`). ``collection`` overrides
        ``index.milvus.collection`` (evaluation indexes a dataset into its own collection). ``dim``:
        the vector dimension when it is known already (``rag migrate`` copies vectors: no model is
        loaded to ask it); by default the embedder's, asked on first use."""
        if config.security.isolate == "tenant":
            raise ConfigError("security.isolate: tenant is not available on the milvus backend (its BM25 statistics "
                              "are the collection's): give each tenant its own collection (index.milvus.collection), "
                              "or use the local backend")
        self.config = config
        self.settings = config.index.milvus
        self.uri = self.settings.uri if is_server_uri(self.settings.uri) else str(config.resolve(self.settings.uri))
        self.collection = collection or self.settings.collection
        self.store = Collections(self.settings, self.uri, self.collection)
        self.meta = self.store.meta
        self.chunker = chunker
        self.analyzer = analyzer
        self.embedder = embedder
        self._dim: int | None = dim
        self._bm25: bool | None = None
        self._view = EMPTY
        self._lock = threading.Lock()  # guards _view
        self._write_lock = threading.RLock()
        self._read_only = False
        self._k1p1 = config.bm25.k1 + 1.0
        self._restricted = RestrictedCache()  # whether any document of a view has access metadata

    # -- opening -------------------------------------------------------------------
    @property
    def engine(self) -> Engine:
        return self.store.engine

    @property
    def where_label(self) -> str:
        return self.store.label

    def exists(self) -> bool:
        return self.store.exists()

    def open(self) -> "MilvusIndex":
        """Connect, check the stored parameters against this config and read the published state."""
        if not self.exists():
            raise IndexNotFoundError(f"no index at {self.where_label}; build it with `rag index --config <your config>`")
        self.store.load()
        params = self.check_compatible()
        self._dim = int(params["embedding_dim"])
        self._bm25 = bool(params.get("bm25", False))
        self.store.tenant_key = bool(params.get("tenant_key", False))
        self.refresh()
        return self

    def create(self, *, drop: bool = False) -> "MilvusIndex":
        """Create the collections (``drop``: remove existing ones first), or open them when they
        exist and match this config."""
        if drop:
            self.store.drop()
        if self.exists():
            return self.open()
        self.store.make(self.dim, self.config.bm25, asdict(self.params(n_documents=0, n_chunks=0)))
        return self.open()

    def drop(self) -> None:
        """Remove both collections (``rag index --force``, tests)."""
        self.store.drop()
        self._view = EMPTY

    # -- properties (as HybridIndex) ------------------------------------------------
    def __len__(self) -> int:
        return self._view.n_chunks

    @property
    def dim(self) -> int:
        if self._dim is None:
            self._dim = int(self.embedder.dim)
        return self._dim

    @property
    def documents(self) -> dict[tuple[str, str], DocumentRecord]:
        return self._view.documents

    @property
    def version_name(self) -> str:
        return f"gen-{self._view.generation:06d}"

    @property
    def generation(self) -> int:
        return self._view.generation

    @property
    def has_bm25(self) -> bool:
        if self._bm25 is None:
            self._bm25 = self.engine.bm25
        return self._bm25

    @property
    def chunking_name(self) -> str:
        return chunking_name(self.chunker)

    def params(self, n_documents: int | None = None, n_chunks: int | None = None) -> IndexParams:
        c = self.config
        return IndexParams(
            format_version=FORMAT_VERSION, package_version=__version__, index_config_hash=c.index_hash,
            analyzer=self.analyzer.name, bm25_backend="milvus", bm25_k1=c.bm25.k1, bm25_b=c.bm25.b,
            embedding_model=self.embedder.model_id, embedding_dim=self.dim, dense_index=self.settings.dense_index,
            chunking=self.chunking_name,
            n_documents=len(self._view.documents) if n_documents is None else n_documents,
            n_chunks=self._view.n_chunks if n_chunks is None else n_chunks,
        )

    def check_compatible(self) -> dict:
        """Read the stored parameters and refuse an index built with another model, analyzer,
        chunking, BM25 k1/b or format (:class:`IndexMismatchError`). Returns them."""
        params = self.store.params()
        check_params(params, self.embedder.model_id, self.analyzer.name, self.chunking_name, self.where_label,
                     elsewhere="index.milvus.collection")
        b = self.config.bm25
        if (params.get("bm25_k1"), params.get("bm25_b")) != (b.k1, b.b):
            raise IndexMismatchError(
                f"{self.where_label}: BM25 was built with k1={params.get('bm25_k1')} b={params.get('bm25_b')}, the "
                f"config asks for k1={b.k1} b={b.b} (the engine keeps them with its statistics); rebuild with "
                "`rag index --config ... --force` or set bm25.k1/bm25.b back")
        if bool(params.get("tenant_partitions")) != self.settings.tenant_partitions:
            logger.info("%s: made with tenant_partitions %s; the config says %s (the collection's is used; "
                        "rebuild to change it)", self.where_label, bool(params.get("tenant_partitions")),
                        self.settings.tenant_partitions)
        if params.get("dense_index") != self.settings.dense_index:
            logger.info("%s: built with dense index %s; the config says %s (the built one is used)",
                        self.where_label, params.get("dense_index"), self.settings.dense_index)
        return params

    # -- state -----------------------------------------------------------------------
    def refresh(self) -> View:
        """Read the published generation; when it moved, read the document records that changed
        since (all of them after ``purge_delay_s`` without a refresh: purged records are gone)."""
        gen, n_chunks, pending = self.store.read_state()
        with self._lock:
            view = self._view
        if gen != view.generation or view is EMPTY:
            view = self.store.next_view(view, gen, n_chunks, pending)
            with self._lock:
                if view.generation > self._view.generation:
                    self._view = view
                elif view.generation == self._view.generation:
                    view = self._view  # a writer's own view of the generation it wrote stays
        return view

    def _install(self, view: View) -> None:
        """The writer's view of the generation it just published (see ``write_generation``)."""
        with self._lock:
            if view.generation >= self._view.generation:
                self._view = view

    def snapshot(self) -> "MilvusIndex":
        """A read-only view pinned at the generation published now: later updates never show in it."""
        view = self.refresh() if not self._read_only else self._view
        pinned = copy.copy(self)
        pinned._view = view
        pinned._read_only = True
        pinned._lock = threading.Lock()
        return pinned

    def _writable(self, op: str) -> None:
        if self._read_only:
            raise InputError(f"cannot {op}: this is a read-only snapshot of the index; update the index itself")

    # -- searching -------------------------------------------------------------------
    def _hits(self, result, positive_only: bool) -> list[ScoredChunk]:
        scored = []
        for hit in result[0] if result else []:
            ent = hit["entity"]
            # BM25: milvus-lite 3 returns the score negated; divided by (k1 + 1) it is on the local
            # backend's (Lucene) scale, which drops that rank-preserving constant
            score = abs(float(hit["distance"])) / self._k1p1 if positive_only else float(hit["distance"])
            if positive_only and score <= 0:
                continue
            scored.append((score, chunk_from_row(ent)))
        scored.sort(key=lambda sc: (-sc[0], sc[1].document_id, sc[1].document_version, sc[1].ordinal))
        return [ScoredChunk(c, s, r + 1) for r, (s, c) in enumerate(scored)]

    def search_bm25(self, query: str, k: int, where: SearchFilter | None = None) -> list[ScoredChunk]:
        """The top ``k`` chunks by the engine's BM25 over the analyzer's tokens (score > 0)."""
        if not self.has_bm25:
            raise UnsupportedByBackendError(
                f"{self.where_label}: this server ({self.engine.version}) has no BM25 (Milvus >= 2.5 or milvus-lite "
                "3.x has); set retrieval.fusion.bm25_weight: 0 to search with the dense retriever only, or use "
                "another server")
        view = self._view
        tokens = self.analyzer(query)
        expr = view_filter(view, where, self._restricted(view.documents), self.store.tenant_key)
        if not tokens or not view.n_chunks or expr is None:
            return []
        e = self.engine
        with e.calls("BM25 search"):
            res = e.client.search(self.collection, data=[hashed_terms(tokens)], anns_field="sparse", limit=k,
                                  filter=expr, output_fields=["chunk"],
                                  search_params={"metric_type": "BM25"},
                                  consistency_level=self.settings.consistency)
        return self._hits(res, positive_only=True)

    def search_dense(self, query_vector: np.ndarray, k: int, where: SearchFilter | None = None) -> list[ScoredChunk]:
        """The top ``k`` chunks by inner product (exact with ``dense_index: FLAT``)."""
        view = self._view
        if not view.n_chunks:
            return []
        q = np.asarray(query_vector, dtype=np.float32).reshape(-1)
        if q.shape[0] != self.dim:
            raise IndexMismatchError(f"query vector has dimension {q.shape[0]}, index has {self.dim}")
        expr = view_filter(view, where, self._restricted(view.documents), self.store.tenant_key)
        if expr is None:
            return []
        e = self.engine
        with e.calls("dense search"):
            res = e.client.search(self.collection, data=[q.tolist()], anns_field="vec", limit=k,
                                  filter=expr, output_fields=["chunk"],
                                  search_params={"metric_type": "IP",
                                                 "params": dense_search_params(self.settings.dense_index)},
                                  consistency_level=self.settings.consistency)
        return self._hits(res, positive_only=False)

    def document_texts(self, doc_id: str, version: str) -> tuple[str, ...]:
        """Every chunk text of one indexed document version, in order."""
        return tuple(c.text for c in self._document_chunks(doc_id, version))

    def _document_chunks(self, doc_id: str, version: str, vectors: bool = False):
        inc = self._view.incarnations.get((doc_id, version))
        if inc is None:
            return [] if not vectors else ([], np.zeros((0, self.dim), np.float32))
        rows = list(self.store.iterate(self.collection, f"inc == {quote(inc)}",
                                       ["chunk"] + (["vec"] if vectors else [])))
        rows.sort(key=lambda r: json.loads(r["chunk"])["ordinal"])
        chunks = [chunk_from_row(r) for r in rows]
        if not vectors:
            return chunks
        vecs = np.asarray([r["vec"] for r in rows], dtype=np.float32).reshape(len(rows), self.dim)
        return chunks, vecs

    @property
    def chunks(self) -> list[Chunk]:
        """Every chunk of the pinned generation, sorted by (document id, version, ordinal). Reads the
        whole collection: for evaluation and small indexes, not per question."""
        view = self._view
        rows = self.store.iterate(self.collection, view_filter(view, None) or "", ["chunk"])
        out = [chunk_from_row(r) for r in rows]
        out.sort(key=lambda c: (c.document_id, c.document_version, c.ordinal))
        return out

    def export(self, keys: Sequence[tuple[str, str]]) -> list[IndexedDocument]:
        """The given documents with their chunks and vectors (``rag migrate``)."""
        out = []
        for key in keys:
            chunks, vecs = self._document_chunks(*key, vectors=True)
            out.append(IndexedDocument(self._view.documents[key], tuple(chunks), vecs))
        return out

    # -- updating --------------------------------------------------------------------
    def add(self, docs: Iterable[Document], progress: Progress | None = None):
        """Add documents (as :meth:`HybridIndex.add`), publishing every ``batch_documents``."""
        self._writable("add documents")
        docs = check_unique(list(docs))
        with self._write_lock:
            view = self.refresh()
            new, unchanged = split_new(view.documents, docs)
            embedded = 0
            step = self.settings.batch_documents
            for i in range(0, len(new), step):
                embedded += self._apply(self._prepare(new[i:i + step], progress), [])
        return UpdateReport(labels(d.key for d in new), (), tuple(unchanged), embedded)

    def replace(self, docs: Iterable[Document], progress: Progress | None = None):
        """Make each given document the only indexed version of its id, in one generation."""
        self._writable("replace documents")
        docs = check_unique(list(docs))
        check_replace(docs)
        with self._write_lock:
            view = self.refresh()
            keep, drop, new = replace_plan(view.documents, docs)
            embedded = self._apply(self._prepare(new, progress), drop) if (drop or new) else 0
        return UpdateReport(labels(d.key for d in new), labels(drop), labels(sorted(keep)), embedded)

    def delete(self, doc_id: str, version: str | None = None):
        """Delete every version of ``doc_id`` (or one version). Unknown ids are an error."""
        self._writable("delete documents")
        with self._write_lock:
            keys = keys_of(doc_id, version, self.refresh().documents)
            self._apply([], keys)
        return UpdateReport((), labels(keys), (), 0)

    def sync(self, docs: Sequence[Document], progress: Progress | None = None):
        """Make the index hold exactly ``docs`` (``rag index``): documents no longer in the corpus
        or whose text or access metadata changed are removed, new ones added in published batches, the rest kept.
        An interrupted sync resumes where it stopped when run again."""
        self._writable("index documents")
        docs = check_unique(list(docs))
        for d in docs:
            check_document(d)
        with self._write_lock:
            view = self.refresh()
            wanted = {d.key: d for d in docs}
            keep = {k for k, rec in view.documents.items() if k in wanted and same_contents(rec, wanted[k])}
            drop = sorted(k for k in view.documents if k not in keep)
            new = [d for d in docs if d.key not in keep]
            step = self.settings.batch_documents
            embedded = 0
            if drop and not new:
                self._apply([], drop)
            for i in range(0, len(new), step):
                embedded += self._apply(self._prepare(new[i:i + step], progress), drop if i == 0 else [])
        return UpdateReport(labels(d.key for d in new), labels(drop), labels(sorted(keep)), embedded)

    def import_documents(self, items: Sequence[IndexedDocument]) -> int:
        """Add already-chunked, already-embedded documents (``rag migrate``); ones indexed with the
        same text are skipped. Returns how many were added."""
        self._writable("import documents")
        with self._write_lock:
            view = self.refresh()
            fresh = [it for it in items if view.documents.get((it.record.id, it.record.version)) is None]
            clash = [it for it in items if (r := view.documents.get((it.record.id, it.record.version))) is not None
                     and r.text_sha256 != it.record.text_sha256]
            if clash:
                r = clash[0].record
                raise DuplicateDocumentError(f"{self.where_label} already holds {r.id!r} version {r.version!r} with "
                                             "different text; migrate into an empty or matching index")
            if fresh:
                self._apply(fresh, [])
        return len(fresh)

    def _prepare(self, docs: list[Document], progress: Progress | None) -> list[IndexedDocument]:
        return chunk_and_embed(docs, self.chunker, self.embedder, self.dim, progress)[0]

    def _apply(self, items: Sequence[IndexedDocument], drop: Sequence[tuple[str, str]]) -> int:
        """One generation under the writer lease (:func:`rag.index.milvus.writer.lease`)."""
        if self._dim is None or self._bm25 is None:
            self.open() if self.exists() else self.create()
        with lease(self.store, self):
            return write_generation(self.store, self.refresh, self._install, items, drop,
                                    self.analyzer if self.has_bm25 else None)

    def flush(self) -> None:
        """Seal what was written into the engine's segments (faster searches afterwards)."""
        self.store.flush()

    def purge(self) -> None:
        """Delete the rows of every removal now (no pinned reader will need them)."""
        with self._write_lock, lease(self.store, self):
            if purge_all(self.store):
                self.refresh()

    # -- persistence (the engine persists every published generation) ---------------------
    def save(self, path=None) -> None:
        """Nothing to do: every update was published to the engine when it returned."""
        return None
