"""The hybrid index: chunk store + BM25 + FAISS, persisted as a folder.

Layout (``path`` is the folder named in ``index.path``)::

    path/CURRENT            name of the live version folder, replaced atomically
    path/v-000007/          one complete index version
        params.json         format + package version, config hash, analyzer, model id, dim
        documents.jsonl     one record per (document id, version)
        chunks.jsonl        chunk store, in row order
        embeddings.npy      float32 [n_chunks, dim], row-aligned with chunks
        dense.faiss         FAISS inner-product index over the embeddings
        bm25/               vocabulary, per-chunk term ids, bm25s score matrix

A save writes a new version folder, syncs it, then swaps ``CURRENT``; a crash at any
point leaves the previous version loadable. The previous version is kept so a reader
that opened it just before the swap can finish.
"""
from __future__ import annotations

import copy
import json
import logging
import os
import shutil
import threading
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Iterable, Sequence

import numpy as np

from rag import __version__
from rag._io import fsync_dir, fsync_file, fsync_tree, read_jsonl
from rag.config import RagConfig
from rag.text.analyzers import Analyzer
from rag.index.bm25 import BM25Index, top_k_desc
from rag.index.chunking import Chunker
from rag.models.embedders import Embedder
from rag.errors import (
    DuplicateDocumentError,
    EmptyCorpusError,
    IndexCorruptError,
    IndexMismatchError,
    InputError,
    missing_dependency,
)
from rag.index.layout import (FORMAT_VERSION, DocumentRecord, IndexParams, RestrictedCache, check_params,
                              chunk_from_json, chunking_name, current_version, needs_readers, version_numbers)
from rag.index.loaders import check_unique
from rag.index.rowmask import DocumentTable
from rag.index.updates import (IndexedDocument, Progress, UpdateReport, check_replace, chunk_and_embed, keys_of,
                               labels, passage_text, replace_plan, split_new)
from rag.types import Chunk, Document, ScoredChunk, SearchFilter

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class _State:
    """One consistent version of the index contents (row-aligned lists)."""

    chunks: list
    embeddings: np.ndarray
    terms: list
    documents: dict
    vocab: dict


def _row_key(c: Chunk) -> tuple[str, str, int]:
    return (c.document_id, c.document_version, c.ordinal)


class HybridIndex:
    """The local backend (``index.backend: local``): one process, a versioned folder."""

    backend = "local"
    has_bm25 = True

    def __init__(self, config: RagConfig, chunker: Chunker, analyzer: Analyzer, embedder: Embedder, *,
                 dim: int | None = None) -> None:
        """``config``: what the contents depend on is read from its ``bm25`` and ``dense`` sections and
        its ``index_hash`` (chunking, bm25, embedding, dense); the built parts are passed in. ``dim``:
        the vector dimension when it is known already (``rag migrate`` copies vectors: no model is
        loaded to ask it); by default the embedder's, asked on first use."""
        self.config = config
        self.chunker = chunker
        self.analyzer = analyzer
        self.embedder = embedder
        self.documents: dict[tuple[str, str], DocumentRecord] = {}
        self.chunks: list[Chunk] = []
        self.embeddings = np.zeros((0, 0), dtype=np.float32)
        self.bm25 = BM25Index(config.bm25)
        self._faiss = None
        self._dim: int | None = dim
        self._lock = threading.Lock()  # guards the swap of (chunks, embeddings, bm25, faiss, documents)
        self._write_lock = threading.RLock()  # one update at a time
        self.version_name: str | None = None  # the saved version folder these contents are (v-000007), if any
        self._read_only = False
        # (chunks list, records) -> their DocumentTable (rows coded for filtering); latest version only
        self._row_spans: dict[str, tuple[object, object, DocumentTable]] = {}
        self._restricted = RestrictedCache()  # whether any document has access metadata
        # security.isolate: tenant: (the chunks list, {tenant: (its rows, a BM25 index of them)})
        self._tenant_indexes: tuple[object, dict] = (None, {})

    # -- properties ----------------------------------------------------------
    def __len__(self) -> int:
        return len(self.chunks)

    @property
    def dim(self) -> int:
        if self._dim is None:
            self._dim = int(self.embedder.dim)
        return self._dim

    @property
    def chunking_name(self) -> str:
        return chunking_name(self.chunker)

    def params(self) -> IndexParams:
        c = self.config
        return IndexParams(
            format_version=FORMAT_VERSION,
            package_version=__version__,
            index_config_hash=c.index_hash,
            analyzer=self.analyzer.name,
            bm25_backend=c.bm25.backend,
            bm25_k1=c.bm25.k1,
            bm25_b=c.bm25.b,
            embedding_model=self.embedder.model_id,
            embedding_dim=self.dim,
            dense_index=c.dense.index,
            chunking=self.chunking_name,
            n_documents=len(self.documents),
            n_chunks=len(self.chunks),
        )

    def snapshot(self) -> "HybridIndex":
        """A read-only view of the current contents: later updates of this index never show in it.

        Searches made through one snapshot all see the same version (a service pins one per
        request); updating a snapshot raises :class:`InputError`."""
        with self._lock:
            view = copy.copy(self)
        view._read_only = True
        return view

    def fork(self, chunker: Chunker, analyzer: Analyzer) -> "HybridIndex":
        """A writable copy of the current contents with its own chunker and analyzer: a writer
        thread updates (and saves) the fork while readers keep using this index and its analyzer,
        then publishes the fork in its place."""
        with self._lock:
            twin = copy.copy(self)
        twin.chunker, twin.analyzer = chunker, analyzer
        twin._lock, twin._write_lock = threading.Lock(), threading.RLock()
        twin._read_only = False
        twin._row_spans = {}
        twin._restricted = RestrictedCache()
        twin._tenant_indexes = (None, {})
        return twin

    def _writable(self, op: str) -> None:
        if self._read_only:
            raise InputError(f"cannot {op}: this is a read-only snapshot of the index; update the index itself")

    # -- building and updating ----------------------------------------------
    # Updates build the new chunk list, BM25 matrix and FAISS index off to the side and
    # swap them in under a short lock, so searches running in other threads always see
    # one consistent version. Writers are serialized by their own lock.
    def add(self, docs: Iterable[Document], progress: Progress | None = None) -> UpdateReport:
        """Add documents. An (id, version) already indexed with the same text is skipped;
        with different text it is an error (use :meth:`replace`)."""
        self._writable("add documents")
        docs = check_unique(list(docs))
        with self._write_lock:
            new, unchanged = split_new(self.documents, docs)
            embedded = 0
            if new:
                state, embedded = self._with(self._current(), new, progress)
                self._commit(state)
        return UpdateReport(labels(d.key for d in new), (), tuple(unchanged), embedded)

    def replace(self, docs: Iterable[Document], progress: Progress | None = None) -> UpdateReport:
        """Make each given document the only indexed version of its id."""
        self._writable("replace documents")
        docs = check_unique(list(docs))
        check_replace(docs)
        with self._write_lock:
            keep, drop, new = replace_plan(self.documents, docs)
            state = self._without(self._current(), set(drop))
            embedded = 0
            if new:
                state, embedded = self._with(state, new, progress)
            if drop or new:
                self._commit(state)
        return UpdateReport(labels(d.key for d in new), labels(drop), labels(sorted(keep)), embedded)

    def delete(self, doc_id: str, version: str | None = None) -> UpdateReport:
        """Delete every version of ``doc_id`` (or one version). Unknown ids are an error."""
        self._writable("delete documents")
        with self._write_lock:
            keys = keys_of(doc_id, version, self.documents)
            self._commit(self._without(self._current(), set(keys)))
        return UpdateReport((), labels(keys), (), 0)

    def _current(self) -> "_State":
        with self._lock:
            return _State(self.chunks, self.embeddings.reshape(-1, self.dim), self.bm25.doc_ids,
                          self.documents, self.bm25.vocab)

    def _with(self, st: "_State", docs: list[Document], progress: Progress | None) -> tuple["_State", int]:
        items, embedded = chunk_and_embed(docs, self.chunker, self.embedder, self.dim, progress)
        return self._merge(st, items), embedded

    def _merge(self, st: "_State", items: Sequence[IndexedDocument]) -> "_State":
        new_chunks = [c for it in items for c in it.chunks]
        vecs = (np.vstack([it.vectors.reshape(-1, self.dim) for it in items]) if new_chunks
                else np.zeros((0, self.dim), np.float32))
        scratch = BM25Index(self.config.bm25)
        scratch.vocab = dict(st.vocab)
        new_terms = [scratch.encode(self.analyzer(passage_text(c)), grow=True) for c in new_chunks]
        # Merge, keeping rows sorted by (document id, version, ordinal) whatever the insert order.
        all_chunks = st.chunks + new_chunks
        all_vecs = np.vstack([st.embeddings, vecs]) if len(st.chunks) else vecs
        all_terms = st.terms + new_terms
        order = sorted(range(len(all_chunks)), key=lambda i: _row_key(all_chunks[i]))
        documents = dict(st.documents)
        for it in items:
            documents[(it.record.id, it.record.version)] = it.record
        embeddings = np.ascontiguousarray(all_vecs[order]) if order else np.zeros((0, self.dim), np.float32)
        return _State([all_chunks[i] for i in order], embeddings, [all_terms[i] for i in order], documents,
                      scratch.vocab)

    def _without(self, st: "_State", keys: set[tuple[str, str]]) -> "_State":
        if not keys:
            return st
        keep = [i for i, c in enumerate(st.chunks) if (c.document_id, c.document_version) not in keys]
        documents = {k: v for k, v in st.documents.items() if k not in keys}
        return _State([st.chunks[i] for i in keep], np.ascontiguousarray(st.embeddings[keep]),
                      [st.terms[i] for i in keep], documents, st.vocab)

    def _commit(self, st: "_State") -> None:
        bm25 = BM25Index(self.config.bm25)
        bm25.vocab = st.vocab
        bm25.set_documents(st.terms)
        dense = self._make_faiss(st.embeddings)
        with self._lock:
            self.chunks, self.embeddings, self.bm25, self._faiss, self.documents = (
                st.chunks, st.embeddings, bm25, dense, st.documents)
            self.version_name = None  # not saved yet

    def _make_faiss(self, embeddings: np.ndarray):
        try:
            import faiss
        except ImportError:
            raise missing_dependency("faiss-cpu", "core", "dense retrieval") from None
        s = self.config.dense
        if s.index == "hnsw":
            index = faiss.IndexHNSWFlat(self.dim, s.hnsw_m, faiss.METRIC_INNER_PRODUCT)
            index.hnsw.efConstruction = s.hnsw_ef_construction
            index.hnsw.efSearch = s.hnsw_ef_search
        elif s.index == "flat_fp16":
            # Exhaustive scan over half-precision vectors: half the memory traffic of "flat".
            index = faiss.IndexScalarQuantizer(self.dim, faiss.ScalarQuantizer.QT_fp16, faiss.METRIC_INNER_PRODUCT)
            if len(embeddings):
                index.train(embeddings)
        else:
            index = faiss.IndexFlatIP(self.dim)
        if len(embeddings):
            index.add(np.ascontiguousarray(embeddings, dtype=np.float32))
        return index

    def _build_faiss(self) -> None:
        self._faiss = self._make_faiss(self.embeddings.reshape(-1, self.dim))

    # -- searching -------------------------------------------------------------
    def rows_for(self, chunks: list, where: SearchFilter, documents: dict | None = None) -> np.ndarray:
        """Row numbers of ``chunks`` (one version's rows) that ``where`` allows, ascending.
        ``documents``: the records of the same version (default the current ones); a filter with
        readers checks each document's access there (a row without a record is nobody's), a filter
        with field conditions its metadata. Decided once per distinct value (:mod:`rowmask`)."""
        records = self.documents if documents is None else documents
        readers = needs_readers(where, self._restricted(records))
        if not readers and not (where.document_ids or where.versions or where.fields):
            return np.arange(len(chunks), dtype=np.int64)
        return self._table(chunks, records).allowed_rows(where, readers)

    def _table(self, chunks: list, records: dict) -> DocumentTable:
        """The document table of ``chunks`` and ``records`` (built once per version)."""
        cached = self._row_spans.get("latest")
        if cached is None or cached[0] is not chunks or cached[1] is not records:
            row_keys = [(c.document_id, c.document_version) for c in chunks]
            table = DocumentTable(sorted(set(row_keys)), records, row_keys)
            cached = self._row_spans["latest"] = (chunks, records, table)
        return cached[2]

    def search_bm25(self, query: str, k: int, where: SearchFilter | None = None) -> list[ScoredChunk]:
        """The top ``k`` chunks by BM25 (score > 0); ``where`` keeps only the rows it allows."""
        with self._lock:
            chunks, bm25, documents = self.chunks, self.bm25, self.documents
        rows = self.rows_for(chunks, where, documents) if where else None
        tenant = self._tenant_bm25(chunks, bm25, documents, where)
        if tenant is not None:  # security.isolate: tenant scores with the tenant's own statistics
            part, sub_index = tenant
            scores = np.zeros(len(chunks), dtype=np.float32)
            scores[part] = sub_index.scores(self.analyzer(query))
            rows = part if rows is None else np.intersect1d(rows, part)
            sub, s = top_k_desc(scores[rows], k, positive_only=True) if len(rows) else (rows, rows)
            idx, scores = rows[sub], s
        elif rows is not None and len(rows) < len(chunks):  # a filter that allows every row is no filter
            scores = bm25.scores(self.analyzer(query))
            sub, s = top_k_desc(scores[rows], k, positive_only=True) if len(rows) else (rows, rows)
            idx, scores = rows[sub], s
        else:
            idx, scores = bm25.top_k(self.analyzer(query), k)
        return [ScoredChunk(chunks[i], float(s), r + 1) for r, (i, s) in enumerate(zip(idx, scores))]

    def _tenant_bm25(self, chunks: list, bm25: BM25Index, documents: dict, where: SearchFilter | None):
        """(rows, BM25 index of those rows) of the caller's tenant under ``security.isolate: tenant``
        (the tenant of the request's readers; none: the documents every tenant shares), else None."""
        if self.config.security.isolate != "tenant" or where is None or not where.readers:
            return None
        tenants = {r.principal.tenant if r.principal is not None else None for r in where.readers}
        tenant = tenants.pop() if len(tenants) == 1 else None
        of, cache = self._tenant_indexes
        if of is not chunks:
            cache = {}
            self._tenant_indexes = (chunks, cache)
        if tenant not in cache:
            part = self._table(chunks, documents).tenant_rows(tenant)
            cache[tenant] = (part, bm25.subset(part.tolist()))
        return cache[tenant]

    def search_dense(self, query_vector: np.ndarray, k: int, where: SearchFilter | None = None) -> list[ScoredChunk]:
        """The top ``k`` chunks by inner product; with ``where``, an exact scan of the allowed rows."""
        with self._lock:
            chunks, embeddings, dense, documents = self.chunks, self.embeddings, self._faiss, self.documents
        if not chunks or dense is None:
            return []
        q = np.asarray(query_vector, dtype=np.float32).reshape(1, -1)
        if q.shape[1] != self.dim:
            raise IndexMismatchError(f"query vector has dimension {q.shape[1]}, index has {self.dim}")
        rows = self.rows_for(chunks, where, documents) if where else None
        if rows is not None and len(rows) < len(chunks):  # a filter that allows every row is no filter
            if not len(rows):
                return []
            sub, scores = top_k_desc(np.asarray(embeddings[rows] @ q[0], dtype=np.float32), min(len(rows), k))
            return [ScoredChunk(chunks[i], float(s), r + 1) for r, (i, s) in enumerate(zip(rows[sub], scores))]
        kk = min(len(chunks), k)
        if self.config.dense.index == "flat":
            # Exact scores via numpy give deterministic tie-breaking by row.
            idx, scores = top_k_desc(embeddings @ q[0], kk)
        else:
            dist, ids = dense.search(q, kk)
            pairs = sorted(((float(d), int(i)) for d, i in zip(dist[0], ids[0]) if i >= 0), key=lambda x: (-x[0], x[1]))
            idx = np.array([i for _, i in pairs], dtype=np.int64)
            scores = np.array([d for d, _ in pairs], dtype=np.float32)
        return [ScoredChunk(chunks[i], float(s), r + 1) for r, (i, s) in enumerate(zip(idx, scores))]

    def document_texts(self, doc_id: str, version: str) -> tuple[str, ...]:
        """Every chunk text of one indexed document version, in order."""
        with self._lock:
            chunks = self.chunks
        rows = self.rows_for(chunks, SearchFilter(document_ids=(doc_id,)))
        return tuple(chunks[i].text for i in rows if chunks[i].document_version == version)

    def export(self, keys: Sequence[tuple[str, str]]) -> list[IndexedDocument]:
        """The given documents with their chunks and vectors (``rag migrate``)."""
        with self._lock:
            chunks, embeddings, documents = self.chunks, self.embeddings.reshape(-1, self.dim), self.documents
        out = []
        for key in keys:
            rows = [i for i in self.rows_for(chunks, SearchFilter(document_ids=(key[0],)))
                    if chunks[i].document_version == key[1]]
            out.append(IndexedDocument(documents[key], tuple(chunks[i] for i in rows),
                                       np.asarray(embeddings[rows], dtype=np.float32)))
        return out

    def import_documents(self, items: Sequence[IndexedDocument]) -> int:
        """Add already-chunked, already-embedded documents (``rag migrate``); ones indexed with the
        same text are skipped. Returns how many were added."""
        self._writable("import documents")
        with self._write_lock:
            fresh = []
            for it in items:
                rec = self.documents.get((it.record.id, it.record.version))
                if rec is None:
                    fresh.append(it)
                elif rec.text_sha256 != it.record.text_sha256:
                    raise DuplicateDocumentError(f"the index already holds {rec.id!r} version {rec.version!r} with "
                                                 "different text; migrate into an empty or matching index")
            if fresh:
                self._commit(self._merge(self._current(), fresh))
        return len(fresh)

    # -- persistence -----------------------------------------------------------
    def save(self, path: str | Path) -> Path:
        """Write a new version folder and swap ``CURRENT`` to it atomically."""
        with self._write_lock:  # no update can swap the contents mid-write
            return self._save(Path(path))

    def _save(self, path: Path) -> Path:
        import faiss

        root = Path(path)
        root.mkdir(parents=True, exist_ok=True)
        versions = version_numbers(root)
        name = f"v-{(max(versions) + 1) if versions else 1:06d}"
        tmp = root / f".tmp-{name}-{os.getpid()}"
        if tmp.exists():
            shutil.rmtree(tmp)
        tmp.mkdir()
        (tmp / "params.json").write_text(json.dumps(asdict(self.params()), indent=2, sort_keys=True), encoding="utf-8")
        with open(tmp / "documents.jsonl", "w", encoding="utf-8") as fh:
            for key in sorted(self.documents):
                fh.write(json.dumps(asdict(self.documents[key]), ensure_ascii=False, sort_keys=True) + "\n")
        with open(tmp / "chunks.jsonl", "w", encoding="utf-8") as fh:
            for c in self.chunks:
                fh.write(json.dumps(asdict(c), ensure_ascii=False, sort_keys=True) + "\n")
        np.save(tmp / "embeddings.npy", self.embeddings.reshape(-1, self.dim))
        if self._faiss is None:
            self._build_faiss()
        faiss.write_index(self._faiss, str(tmp / "dense.faiss"))
        self.bm25.save(tmp / "bm25")
        fsync_tree(tmp)
        os.replace(tmp, root / name)
        cur_tmp = root / f".CURRENT.tmp-{os.getpid()}"
        cur_tmp.write_text(name + "\n", encoding="utf-8")
        fsync_file(cur_tmp)
        os.replace(cur_tmp, root / "CURRENT")
        fsync_dir(root)
        self.version_name = name
        # Keep the new and the previous version; remove older ones and stale temp folders.
        for v in version_numbers(root):
            if v < int(name[2:]) - 1:
                shutil.rmtree(root / f"v-{v:06d}", ignore_errors=True)
        for stale in root.glob(".tmp-*"):
            if stale.is_dir() and not stale.name.endswith(f"-{os.getpid()}"):
                shutil.rmtree(stale, ignore_errors=True)
        logger.info("saved index %s (%d documents, %d chunks)", root / name, len(self.documents), len(self.chunks))
        return root / name

    def check_compatible(self, root: Path) -> dict:
        """Read the saved index's params.json (only) and refuse one built with another model,
        analyzer, chunking or format. Returns the params."""
        folder = current_version(root)
        try:
            params = json.loads((folder / "params.json").read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise IndexCorruptError(f"{folder}/params.json unreadable ({exc}); rebuild with `rag index`") from None
        check_params(params, self.embedder.model_id, self.analyzer.name, self.chunking_name, root)
        return params

    @classmethod
    def load(cls, path: str | Path, config: RagConfig, chunker: Chunker, analyzer: Analyzer,
             embedder: Embedder, mmap: bool = True) -> "HybridIndex":
        root = Path(path)
        folder = current_version(root)
        idx = cls(config, chunker, analyzer, embedder)
        params = idx.check_compatible(root)
        idx.version_name = folder.name
        idx._dim = int(params["embedding_dim"])
        try:
            for _, o in read_jsonl(folder / "documents.jsonl", ValueError):
                r = DocumentRecord(**o)
                idx.documents[(r.id, r.version)] = r
            idx.chunks = [chunk_from_json(o) for _, o in read_jsonl(folder / "chunks.jsonl", ValueError)]
            idx.embeddings = np.load(folder / "embeddings.npy", mmap_mode="r" if mmap else None)
        except (OSError, ValueError, TypeError) as exc:
            raise IndexCorruptError(f"{folder}: chunk store unreadable ({exc}); rebuild with `rag index`") from None
        if idx.embeddings.shape != (len(idx.chunks), idx._dim):
            raise IndexCorruptError(
                f"{folder}: embeddings shape {idx.embeddings.shape} does not match {len(idx.chunks)} chunks x {idx._dim}"
            )
        idx.bm25 = BM25Index.load(folder / "bm25", config.bm25, mmap=mmap)
        if len(idx.bm25) != len(idx.chunks):
            raise IndexCorruptError(f"{folder}: BM25 has {len(idx.bm25)} rows but there are {len(idx.chunks)} chunks")
        import faiss

        if config.dense.index == params.get("dense_index") and (folder / "dense.faiss").is_file():
            idx._faiss = faiss.read_index(str(folder / "dense.faiss"))
            if config.dense.index == "hnsw":
                idx._faiss.hnsw.efSearch = config.dense.hnsw_ef_search
        else:
            idx.embeddings = np.ascontiguousarray(idx.embeddings)
            idx._build_faiss()
        return idx


def build_index(docs: Sequence[Document], config: RagConfig, chunker: Chunker, analyzer: Analyzer,
                embedder: Embedder, progress: Progress | None = None) -> HybridIndex:
    if not docs:
        raise EmptyCorpusError("the corpus is empty: no documents were found to index")
    idx = HybridIndex(config, chunker, analyzer, embedder)
    idx.add(docs, progress)
    if not idx.chunks:
        raise EmptyCorpusError(f"the corpus has {len(docs)} documents but no text to index (all empty)")
    return idx
