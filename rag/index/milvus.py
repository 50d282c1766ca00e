"""The Milvus index backend: the same index API as :class:`rag.index.store.HybridIndex`, kept in a
Milvus collection (a milvus-lite file, a Milvus server, or a cluster; only the URI changes).

Two collections per index (``index.milvus.collection`` = ``C``)::

    C        one row per chunk: the chunk record (JSON), its vector, and its BM25 terms: the
             project's own analyzer tokens, each hashed to one ASCII word (``t`` + 16 hex) so the
             engine's ``standard`` tokenizer keeps exactly one term per token and the engine's BM25
             function (with the index's k1 and b) keeps the statistics, so an update never refits
    C_meta   the index parameters (checked on open, as the local index's params.json), the
             published state (generation, counts, rows pending removal) and one record per
             document incarnation

Versions. Every update writes its rows under a new generation ``g`` and then publishes ``g`` by
rewriting the one state row; readers pin the generation that was published when they started and
filter ``gen <= g``, so rows being written are invisible and a search sees whole updates only.
Removed documents are hidden at once (their incarnations are listed in the state) and their rows
are deleted ``purge_delay_s`` later, so a request pinned before the removal can still finish.
A write that died (a killed server, a killed process) leaves rows above the published generation;
the next write deletes them first, and ``add`` skips documents already indexed with the same
text, so rerunning an interrupted ingest completes it with nothing duplicated or lost.

Milvus servers older than 2.5 (the ``milvus`` 2.3.5 package) have no BM25: the collection is made
without terms, dense search works, and BM25 search raises :class:`UnsupportedByBackendError`.
"""
from __future__ import annotations

import contextlib
import copy
import hashlib
import json
import logging
import os
import re
import socket
import threading
import time
from dataclasses import asdict, dataclass
from typing import Callable, Iterable, Iterator, Sequence

import numpy as np

from rag import __version__
from rag.config import MilvusConfig, RagConfig
from rag.errors import (
    DuplicateDocumentError,
    IndexBackendError,
    IndexCorruptError,
    IndexMismatchError,
    IndexNotFoundError,
    InputError,
    UnsupportedByBackendError,
    missing_dependency,
)
from rag.index.chunking import Chunker
from rag.index.embedders import Embedder
from rag.index.layout import FORMAT_VERSION, DocumentRecord, IndexParams
from rag.index.store import (IndexedDocument, UpdateReport, check_document, check_params, chunk_and_embed,
                              chunk_from_json, passage_text, replace_plan, split_new, text_sha256)
from rag.index.loaders import check_unique
from rag.text.analyzers import Analyzer
from rag.types import Chunk, Document, ScoredChunk, SearchFilter

logger = logging.getLogger(__name__)

Progress = Callable[[int], None]

NEVER = 2**62  # gen_removed of a live document record
MAX_VARCHAR = 65535
_PENDING_MAX = 400  # incarnations listed as pending removal before the oldest are purged at once
LEASE_S = 120.0  # a writer's lease on the index; a dead writer's lease lapses after this
PAGE = 16384  # the most rows one Milvus query returns


def hashed_terms(tokens: Sequence[str]) -> str:
    """The analyzer's tokens as the engine's text: one ASCII word per token, order and repeats kept."""
    return " ".join("t" + hashlib.blake2b(t.encode("utf-8"), digest_size=8).hexdigest() for t in tokens)


def is_server_uri(uri: str) -> bool:
    return uri.startswith(("http://", "https://", "tcp://", "grpc://", "unix:"))


def supports_bm25(server_version: str) -> bool:
    """Milvus >= 2.5 and milvus-lite 3.x have the BM25 function and sparse vectors."""
    m = re.search(r"(\d+)\.(\d+)", server_version or "")
    return bool(m) and (int(m.group(1)), int(m.group(2))) >= (2, 5)


def _quote(value: str) -> str:
    """A string literal for a Milvus filter expression."""
    return json.dumps(value, ensure_ascii=False)


def _in(field_name: str, values: Iterable[str]) -> str:
    return f"{field_name} in [{', '.join(_quote(v) for v in values)}]"


@dataclass(frozen=True)
class _Pending:
    incarnation: str
    removed_gen: int
    removed_at: float


@dataclass(frozen=True)
class _View:
    """One published generation: what a pinned reader sees."""

    generation: int
    n_chunks: int
    pending: tuple[_Pending, ...]
    documents: dict  # (id, version) -> DocumentRecord
    incarnations: dict  # (id, version) -> incarnation ("<gen>:<id>:<version>")
    read_at: float = 0.0  # time.monotonic() when the records were read


_EMPTY = _View(0, 0, (), {}, {})


class _Engine:
    """The pymilvus client for one URI, with every call's failure turned into a typed error."""

    def __init__(self, settings: MilvusConfig, uri: str) -> None:
        try:
            from pymilvus import MilvusClient
        except ImportError:
            raise missing_dependency("pymilvus", "milvus", "index.backend: milvus") from None
        self.uri = uri
        self.settings = settings
        token = ""
        if settings.token_env:
            token = os.environ.get(settings.token_env, "")
            if not token:
                raise IndexBackendError(
                    f"index.milvus.token_env names {settings.token_env!r}, which is not set; export the token "
                    f"for {uri} in that variable (or remove token_env for a server without authentication)")
        if not is_server_uri(uri):
            parent = os.path.dirname(os.path.abspath(uri))
            os.makedirs(parent, exist_ok=True)
        _quiet_lite_notices()
        kwargs: dict = {"timeout": settings.timeout_s}
        if token:
            kwargs["token"] = token
        if settings.db_name:
            kwargs["db_name"] = settings.db_name
        with self.calls("connect"):
            self.client = _Timed(MilvusClient(uri, **kwargs), settings.timeout_s)
            self.version = str(self.client.get_server_version())
        self.bm25 = supports_bm25(self.version)
        # milvus-lite searches its unflushed rows row by row (10x slower at 5k rows): flush every
        # write there; a server flushes on its own, and is only asked to after bulk loads
        self.lite = "lite" in self.version.lower() and supports_bm25(self.version)

    @contextlib.contextmanager
    def calls(self, what: str) -> Iterator[None]:
        try:
            yield
        except IndexBackendError:
            raise
        except Exception as exc:  # pymilvus raises MilvusException, grpc errors, OSError, ...
            text = str(exc)
            hint = "check that the server is running and reachable, then rerun"
            low = text.lower()
            status = _grpc_status(exc)
            if status == "UNAUTHENTICATED" or "auth" in low or "credential" in low:
                hint = ("the server refused the credentials: put the right token (user:password or an API key) "
                        "in the variable named by index.milvus.token_env, then rerun")
            elif status == "UNAVAILABLE" or "illegal connection params" in low:
                hint = ("nothing answered there, or it refused the token: check that the server is running and "
                        "reachable and the token in index.milvus.token_env, then rerun")
            elif status == "DEADLINE_EXCEEDED":
                hint = f"no answer within index.milvus.timeout_s ({self.settings.timeout_s} s): check the server's load"
            elif "database" in low and "not" in low:
                hint = "create the database named in index.milvus.db_name first (or leave db_name empty)"
            raise IndexBackendError(f"Milvus at {self.uri}: {what} failed ({type(exc).__name__}: {text[:300]}); "
                                    f"{hint}. Nothing that was already published is lost; rerunning an "
                                    "interrupted ingest completes it.") from None


class _Timed:
    """The client with ``timeout=`` on every call: without one pymilvus retries for minutes."""

    def __init__(self, client, timeout: float) -> None:
        self._client, self._timeout = client, timeout

    def __getattr__(self, name: str):
        attr = getattr(self._client, name)
        if not callable(attr):
            return attr

        def call(*args, **kwargs):
            kwargs.setdefault("timeout", self._timeout)
            return attr(*args, **kwargs)

        return call


def _grpc_status(exc: BaseException) -> str:
    """The gRPC status name behind a pymilvus error (UNAUTHENTICATED, UNAVAILABLE, ...), or ""."""
    seen = 0
    while exc is not None and seen < 5:
        code = getattr(exc, "code", None)
        if callable(code):
            try:
                return str(getattr(code(), "name", ""))
            except Exception:  # noqa: BLE001 - not a grpc error after all
                pass
        exc, seen = exc.__cause__ or exc.__context__, seen + 1
    return ""


class MilvusIndex:
    """A hybrid index kept in Milvus; see the module docstring for the layout and the versions."""

    backend = "milvus"

    def __init__(self, config: RagConfig, chunker: Chunker, analyzer: Analyzer, embedder: Embedder, *,
                 collection: str | None = None) -> None:
        """Connects lazily (:meth:`open` or :meth:`create`). ``collection`` overrides
        ``index.milvus.collection`` (evaluation indexes a dataset into its own collection)."""
        self.config = config
        self.settings = config.index.milvus
        self.uri = self.settings.uri if is_server_uri(self.settings.uri) else str(config.resolve(self.settings.uri))
        self.collection = collection or self.settings.collection
        self.meta = f"{self.collection}_meta"
        self.chunker = chunker
        self.analyzer = analyzer
        self.embedder = embedder
        self._engine: _Engine | None = None
        self._dim: int | None = None
        self._bm25: bool | None = None
        self._view = _EMPTY
        self._lock = threading.Lock()  # guards _view
        self._write_lock = threading.RLock()
        self._read_only = False
        self._k1p1 = config.bm25.k1 + 1.0

    # -- opening -------------------------------------------------------------------
    @property
    def engine(self) -> _Engine:
        if self._engine is None:
            self._engine = _Engine(self.settings, self.uri)
        return self._engine

    @property
    def where_label(self) -> str:
        db = f" database {self.settings.db_name!r}" if self.settings.db_name else ""
        return f"Milvus {self.uri}{db} collection {self.collection!r}"

    def exists(self) -> bool:
        e = self.engine
        with e.calls("list collections"):
            return e.client.has_collection(self.collection)

    def open(self) -> "MilvusIndex":
        """Connect, check the stored parameters against this config and read the published state."""
        e = self.engine
        if not self.exists():
            raise IndexNotFoundError(f"no index at {self.where_label}; build it with `rag index --config <your config>`")
        with e.calls("load collection"):  # a restarted server has them released
            e.client.load_collection(self.meta)
            e.client.load_collection(self.collection)
        params = self.check_compatible()
        self._dim = int(params["embedding_dim"])
        self._bm25 = bool(params.get("bm25", False))
        self.refresh()
        return self

    def create(self, *, drop: bool = False) -> "MilvusIndex":
        """Create the collections (``drop``: remove existing ones first), or open them when they
        exist and match this config."""
        e = self.engine
        if drop:
            with e.calls("drop collection"):
                for name in (self.collection, self.meta):
                    if e.client.has_collection(name):
                        e.client.drop_collection(name)
        if self.exists():
            return self.open()
        self._make_collections()
        return self.open()

    def _make_collections(self) -> None:
        from pymilvus import DataType, Function, FunctionType

        e, s = self.engine, self.settings
        dim, bm25 = self.dim, e.bm25
        schema = e.client.create_schema(auto_id=False, enable_dynamic_field=False)
        schema.add_field("pk", DataType.VARCHAR, is_primary=True, max_length=MAX_VARCHAR)
        schema.add_field("doc_id", DataType.VARCHAR, max_length=MAX_VARCHAR)
        schema.add_field("doc_version", DataType.VARCHAR, max_length=1024)
        schema.add_field("inc", DataType.VARCHAR, max_length=MAX_VARCHAR)
        schema.add_field("gen", DataType.INT64)
        schema.add_field("chunk", DataType.VARCHAR, max_length=MAX_VARCHAR)
        schema.add_field("vec", DataType.FLOAT_VECTOR, dim=dim)
        index = e.client.prepare_index_params()
        index.add_index("vec", index_type=s.dense_index, metric_type="IP", **_dense_build_params(s.dense_index))
        if bm25:
            schema.add_field("terms", DataType.VARCHAR, max_length=MAX_VARCHAR, enable_analyzer=True,
                             analyzer_params={"type": "standard"})
            schema.add_field("sparse", DataType.SPARSE_FLOAT_VECTOR)
            schema.add_function(Function(name="bm25", function_type=FunctionType.BM25,
                                         input_field_names=["terms"], output_field_names=["sparse"]))
            b = self.config.bm25
            index.add_index("sparse", index_type="SPARSE_INVERTED_INDEX", metric_type="BM25",
                            params={"bm25_k1": b.k1, "bm25_b": b.b})
        meta = e.client.create_schema(auto_id=False, enable_dynamic_field=False)
        meta.add_field("pk", DataType.VARCHAR, is_primary=True, max_length=MAX_VARCHAR)
        meta.add_field("kind", DataType.VARCHAR, max_length=16)
        meta.add_field("body", DataType.VARCHAR, max_length=MAX_VARCHAR)
        meta.add_field("gen_added", DataType.INT64)
        meta.add_field("gen_removed", DataType.INT64)
        meta.add_field("vec", DataType.FLOAT_VECTOR, dim=2)  # Milvus wants a vector field in every collection
        meta_index = e.client.prepare_index_params()
        meta_index.add_index("vec", index_type="FLAT", metric_type="L2")
        params = {**asdict(self.params(n_documents=0, n_chunks=0)), "bm25": bm25, "server_version": e.version}
        with e.calls("create collections"):
            if e.client.has_collection(self.meta):  # left by a creation that was interrupted
                e.client.drop_collection(self.meta)
            e.client.create_collection(self.meta, schema=meta, index_params=meta_index, consistency_level="Strong")
            e.client.insert(self.meta, [_meta_row("params", "params", params, 0),
                                        _meta_row("state", "state", _state_body(_EMPTY), 0)])
            e.client.create_collection(self.collection, schema=schema, index_params=index,
                                       consistency_level=s.consistency)
        logger.info("created %s (dim %d, %s, BM25 %s; server %s)", self.where_label, dim, s.dense_index,
                    "in the engine" if bm25 else "not available", e.version)

    def drop(self) -> None:
        """Remove both collections (``rag index --force``, tests)."""
        e = self.engine
        with e.calls("drop collection"):
            for name in (self.collection, self.meta):
                if e.client.has_collection(name):
                    e.client.drop_collection(name)
        self._view = _EMPTY

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
        name = f"{self.chunker.counter.name}:max{self.chunker.max_tokens}:overlap{self.chunker.overlap_tokens}"
        return name if self.chunker.config.structure == "plain" else f"{name}:structure-{self.chunker.config.structure}"

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
        row = self._meta_get("params")
        if row is None:
            raise IndexCorruptError(f"{self.where_label}: the collection exists but its parameters row is missing "
                                    "(not a rag index, or its creation was interrupted); rebuild with "
                                    "`rag index --config ... --force`")
        params = json.loads(row["body"])
        check_params(params, self.embedder.model_id, self.analyzer.name, self.chunking_name, self.where_label,
                     elsewhere="index.milvus.collection")
        b = self.config.bm25
        if (params.get("bm25_k1"), params.get("bm25_b")) != (b.k1, b.b):
            raise IndexMismatchError(
                f"{self.where_label}: BM25 was built with k1={params.get('bm25_k1')} b={params.get('bm25_b')}, the "
                f"config asks for k1={b.k1} b={b.b} (the engine keeps them with its statistics); rebuild with "
                "`rag index --config ... --force` or set bm25.k1/bm25.b back")
        if params.get("dense_index") != self.settings.dense_index:
            logger.info("%s: built with dense index %s; the config says %s (the built one is used)",
                        self.where_label, params.get("dense_index"), self.settings.dense_index)
        return params

    # -- state -----------------------------------------------------------------------
    def _meta_get(self, pk: str) -> dict | None:
        e = self.engine
        # by primary key: a filter expression scans the collection on milvus-lite (136 ms vs 1.3 ms at 100k rows)
        with e.calls(f"read {pk}"):
            rows = e.client.get(self.meta, ids=[pk], output_fields=["body", "gen_added"], consistency_level="Strong")
        return dict(rows[0]) if rows else None

    def _read_state(self) -> tuple[int, int, tuple[_Pending, ...]]:
        row = None
        for attempt in range(5):  # an upsert in flight can hide the row for a moment
            row = self._meta_get("state")
            if row is not None:
                break
            time.sleep(0.05 * (attempt + 1))
        if row is None:
            raise IndexCorruptError(f"{self.where_label}: the state row is missing; rebuild with "
                                    "`rag index --config ... --force`")
        body = json.loads(row["body"])
        pending = tuple(_Pending(str(i), int(g), float(t)) for i, g, t in body.get("pending", []))
        return int(body["generation"]), int(body["n_chunks"]), pending

    def refresh(self) -> _View:
        """Read the published generation; when it moved, read the document records that changed
        since (all of them after ``purge_delay_s`` without a refresh: purged records are gone)."""
        gen, n_chunks, pending = self._read_state()
        with self._lock:
            view = self._view
        if gen != view.generation or view is _EMPTY:
            now = time.monotonic()
            if view is _EMPTY or gen < view.generation or now - view.read_at > self.settings.purge_delay_s / 2:
                documents, incs = self._read_documents(f"gen_added <= {gen} and gen_removed > {gen}")
            else:
                documents, incs = dict(view.documents), dict(view.incarnations)
                old = view.generation
                changed = f"(gen_added > {old} and gen_added <= {gen}) or (gen_removed > {old} and gen_removed <= {gen})"
                gone, new = [], []
                for row in self._iterate(self.meta, f'kind == "doc" and ({changed})', ["body", "gen_removed"]):
                    (gone if int(row["gen_removed"]) <= gen else new).append(_record(row["body"]))
                for rec, inc in gone:
                    if incs.get((rec.id, rec.version)) == inc:
                        del documents[(rec.id, rec.version)], incs[(rec.id, rec.version)]
                for rec, inc in new:
                    documents[(rec.id, rec.version)], incs[(rec.id, rec.version)] = rec, inc
                documents = dict(sorted(documents.items()))
            view = _View(gen, n_chunks, pending, documents, incs, now)
            with self._lock:
                if view.generation >= self._view.generation:
                    self._view = view
        return view

    def _read_documents(self, where: str) -> tuple[dict, dict]:
        documents: dict[tuple[str, str], DocumentRecord] = {}
        incs: dict[tuple[str, str], str] = {}
        for row in self._iterate(self.meta, f'kind == "doc" and {where}', ["body"]):
            rec, inc = _record(row["body"])
            documents[(rec.id, rec.version)] = rec
            incs[(rec.id, rec.version)] = inc
        return dict(sorted(documents.items())), incs

    def _iterate(self, collection: str, expr: str, fields: list[str]) -> Iterator[dict]:
        """Every row matching ``expr``: one query when they fit in one page, else the engine's
        query iterator in pages of ``PAGE`` rows (3 s for 100k rows on milvus-lite here)."""
        e = self.engine
        with e.calls(f"read {collection}"):
            rows = e.client.query(collection, filter=expr, output_fields=fields, limit=PAGE,
                                  consistency_level="Strong")
        if len(rows) < PAGE:
            yield from rows
            return
        with e.calls(f"read {collection}"):
            it = e.client.query_iterator(collection, batch_size=PAGE, filter=expr, output_fields=fields,
                                         consistency_level="Strong")
            try:
                while rows := it.next():
                    yield from rows
            finally:
                it.close()

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
    def _filter(self, view: _View, where: SearchFilter | None) -> str:
        parts = [f"gen <= {view.generation}"]
        hidden = [p.incarnation for p in view.pending if p.removed_gen <= view.generation]
        if hidden:
            parts.append(f"not ({_in('inc', hidden)})")
        if where:
            if where.document_ids:
                parts.append(_in("doc_id", where.document_ids))
            if where.versions:
                parts.append(_in("doc_version", where.versions))
        return " and ".join(parts)

    def _hits(self, result, positive_only: bool) -> list[ScoredChunk]:
        scored = []
        for hit in result[0] if result else []:
            ent = hit["entity"]
            # BM25: milvus-lite 3 returns the score negated; divided by (k1 + 1) it is on the local
            # backend's (Lucene) scale, which drops that rank-preserving constant
            score = abs(float(hit["distance"])) / self._k1p1 if positive_only else float(hit["distance"])
            if positive_only and score <= 0:
                continue
            scored.append((score, _chunk_from_row(ent)))
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
        if not tokens or not view.n_chunks:
            return []
        e = self.engine
        with e.calls("BM25 search"):
            res = e.client.search(self.collection, data=[hashed_terms(tokens)], anns_field="sparse", limit=k,
                                  filter=self._filter(view, where), output_fields=["chunk"],
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
        e = self.engine
        with e.calls("dense search"):
            res = e.client.search(self.collection, data=[q.tolist()], anns_field="vec", limit=k,
                                  filter=self._filter(view, where), output_fields=["chunk"],
                                  search_params={"metric_type": "IP",
                                                 "params": _dense_search_params(self.settings.dense_index)},
                                  consistency_level=self.settings.consistency)
        return self._hits(res, positive_only=False)

    def document_texts(self, doc_id: str, version: str) -> tuple[str, ...]:
        """Every chunk text of one indexed document version, in order."""
        return tuple(c.text for c in self._document_chunks(doc_id, version))

    def _document_chunks(self, doc_id: str, version: str, vectors: bool = False):
        inc = self._view.incarnations.get((doc_id, version))
        if inc is None:
            return [] if not vectors else ([], np.zeros((0, self.dim), np.float32))
        rows = list(self._iterate(self.collection, f"inc == {_quote(inc)}", ["chunk"] + (["vec"] if vectors else [])))
        rows.sort(key=lambda r: json.loads(r["chunk"])["ordinal"])
        chunks = [_chunk_from_row(r) for r in rows]
        if not vectors:
            return chunks
        vecs = np.asarray([r["vec"] for r in rows], dtype=np.float32).reshape(len(rows), self.dim)
        return chunks, vecs

    @property
    def chunks(self) -> list[Chunk]:
        """Every chunk of the pinned generation, sorted by (document id, version, ordinal). Reads the
        whole collection: for evaluation and small indexes, not per question."""
        view = self._view
        rows = self._iterate(self.collection, self._filter(view, None), ["chunk"])
        out = [_chunk_from_row(r) for r in rows]
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
        return UpdateReport(tuple(f"{d.id}:{d.version}" for d in new), (), tuple(unchanged), embedded)

    def replace(self, docs: Iterable[Document], progress: Progress | None = None):
        """Make each given document the only indexed version of its id, in one generation."""
        self._writable("replace documents")
        docs = check_unique(list(docs))
        ids = {d.id for d in docs}
        if len(ids) != len(docs):
            raise DuplicateDocumentError("replace() got two versions of one document id; pass one version per id")
        for d in docs:
            check_document(d)
        with self._write_lock:
            view = self.refresh()
            keep, drop, new = replace_plan(view.documents, docs)
            embedded = self._apply(self._prepare(new, progress), drop) if (drop or new) else 0
        return UpdateReport(tuple(f"{d.id}:{d.version}" for d in new), tuple(f"{i}:{v}" for i, v in drop),
                            tuple(f"{i}:{v}" for i, v in sorted(keep)), embedded)

    def delete(self, doc_id: str, version: str | None = None):
        """Delete every version of ``doc_id`` (or one version). Unknown ids are an error."""
        self._writable("delete documents")
        with self._write_lock:
            view = self.refresh()
            keys = sorted(k for k in view.documents if k[0] == doc_id and (version is None or k[1] == version))
            if not keys:
                what = f"{doc_id!r}" + (f" version {version!r}" if version is not None else "")
                raise InputError(f"cannot delete document {what}: it is not in the index")
            self._apply([], keys)
        return UpdateReport((), tuple(f"{i}:{v}" for i, v in keys), (), 0)

    def sync(self, docs: Sequence[Document], progress: Progress | None = None):
        """Make the index hold exactly ``docs`` (``rag index``): documents no longer in the corpus
        or whose text changed are removed, new ones added in published batches, the rest kept.
        An interrupted sync resumes where it stopped when run again."""
        self._writable("index documents")
        docs = check_unique(list(docs))
        for d in docs:
            check_document(d)
        with self._write_lock:
            view = self.refresh()
            wanted = {d.key: text_sha256(d.text) for d in docs}
            keep = {k for k, rec in view.documents.items() if wanted.get(k) == rec.text_sha256}
            drop = sorted(k for k in view.documents if k not in keep)
            new = [d for d in docs if d.key not in keep]
            step = self.settings.batch_documents
            embedded = 0
            if drop and not new:
                self._apply([], drop)
            for i in range(0, len(new), step):
                embedded += self._apply(self._prepare(new[i:i + step], progress), drop if i == 0 else [])
        return UpdateReport(tuple(f"{d.id}:{d.version}" for d in new), tuple(f"{i}:{v}" for i, v in drop),
                            tuple(f"{i}:{v}" for i, v in sorted(keep)), embedded)

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
        """One generation under the writer lease (see :meth:`_lease`)."""
        if self._dim is None or self._bm25 is None:
            self.open() if self.exists() else self.create()
        with self._lease():
            return self._write_generation(items, drop)

    @contextlib.contextmanager
    def _lease(self) -> Iterator[None]:
        """One writer at a time, across processes and machines: a lease row in the meta collection
        (holder, expiry). Milvus has no compare-and-set, so the claim is written, then read back
        after a pause; a lease whose holder is a dead process on this machine, or that expired
        (``LEASE_S``), is taken over. Waits up to ``timeout_s`` for a live holder."""
        me = f"{socket.gethostname()}:{os.getpid()}:{threading.get_ident()}:{id(self)}"
        deadline = time.monotonic() + max(self.settings.timeout_s, 5.0)
        while True:
            row = self._meta_get("lease")
            holder = json.loads(row["body"]) if row else {}
            free = (not holder or holder.get("owner") == me or holder.get("expires", 0) < time.time()
                    or _dead_here(str(holder.get("owner", ""))))
            if free:
                self._meta_put("lease", {"owner": me, "expires": time.time() + LEASE_S})
                time.sleep(0.05)
                row = self._meta_get("lease")
                if row and json.loads(row["body"]).get("owner") == me:
                    break
            if time.monotonic() > deadline:
                raise IndexBackendError(
                    f"{self.where_label}: another writer ({holder.get('owner', '?')}) holds the index; one writer "
                    f"at a time — retry when it is done (its lease lapses after {LEASE_S:.0f} s if it died)")
            time.sleep(0.2)
        try:
            yield
        finally:
            with contextlib.suppress(IndexBackendError):
                self._meta_put("lease", {"owner": "", "expires": 0})

    def _meta_put(self, pk: str, body: dict) -> None:
        with self.engine.calls(f"write {pk}"):
            self.engine.client.upsert(self.meta, [_meta_row(pk, pk, body, 0)])

    def _write_generation(self, items: Sequence[IndexedDocument], drop: Sequence[tuple[str, str]]) -> int:
        """Clean up after a dead writer, purge old removals, write the new rows, mark the dropped
        documents, publish. Returns the number of chunks written."""
        e = self.engine
        gen, n_chunks, pending = self._read_state()
        self._clean_unpublished(gen)
        now = time.time()
        pending = self._purge(pending, now, force=False)
        view = self.refresh()
        fresh = []
        for it in items:  # another writer may have got there between our check and the lease
            held = view.documents.get((it.record.id, it.record.version))
            if held is None:
                fresh.append(it)
            elif held.text_sha256 != it.record.text_sha256:
                raise DuplicateDocumentError(f"{self.where_label}: {it.record.id!r} version {it.record.version!r} "
                                             "was indexed with different text by another writer meanwhile; nothing "
                                             "of this update was published")
        items = fresh
        drop = [k for k in drop if k in view.documents]
        if not items and not drop:
            return 0
        g = gen + 1
        rows, records = [], []
        for it in items:
            rec = it.record
            inc = f"{g}:{rec.id}:{rec.version}"
            body = json.dumps({**asdict(rec), "incarnation": inc}, ensure_ascii=False, sort_keys=True)
            if len(body.encode("utf-8")) > MAX_VARCHAR:
                raise InputError(f"document {rec.id!r}: its title/uri/metadata take {len(body.encode())} bytes; "
                                 f"Milvus keeps at most {MAX_VARCHAR} per record — shorten the metadata")
            records.append(_doc_row(inc, body, g, NEVER))
            for c, v in zip(it.chunks, it.vectors):
                rows.append(self._chunk_row(c, v, g, inc))
        dropped = []
        for key in drop:
            rec, inc = view.documents[key], view.incarnations[key]
            body = json.dumps({**asdict(rec), "incarnation": inc}, ensure_ascii=False, sort_keys=True)
            dropped.append(_doc_row(inc, body, int(inc.split(":", 1)[0]), g))
        with e.calls(f"write generation {g}"):
            for i in range(0, len(rows), 500):
                e.client.insert(self.collection, rows[i:i + 500])
            for i in range(0, len(records), 500):
                e.client.insert(self.meta, records[i:i + 500])
            for i in range(0, len(dropped), 500):
                e.client.upsert(self.meta, dropped[i:i + 500])
        n_removed = sum(view.documents[k].n_chunks for k in drop)
        pending = pending + tuple(_Pending(view.incarnations[k], g, now) for k in drop)
        if len(pending) > _PENDING_MAX:
            pending = self._purge(pending, now, force=True, keep=_PENDING_MAX // 2)
        n = n_chunks + len(rows) - n_removed
        state = _View(g, n, pending, {}, {})
        with e.calls(f"publish generation {g}"):
            e.client.upsert(self.meta, [_meta_row("state", "state", _state_body(state), g)])
        if e.lite or len(rows) >= 10_000:
            self.flush()
        logger.info("%s: published generation %d (+%d documents / %d chunks, -%d documents)", self.where_label, g,
                    len(items), len(rows), len(drop))
        self.refresh()
        return len(rows)

    def _chunk_row(self, c: Chunk, v: np.ndarray, g: int, inc: str) -> dict:
        body = json.dumps(asdict(c), ensure_ascii=False, sort_keys=True)
        if len(body.encode("utf-8")) > MAX_VARCHAR:
            raise InputError(f"chunk {c.evidence_id!r} takes {len(body.encode())} bytes; Milvus keeps at most "
                             f"{MAX_VARCHAR} per field — lower chunking.max_tokens")
        pk = f"{g}:{c.evidence_id}"
        row = {"pk": pk, "doc_id": c.document_id, "doc_version": c.document_version,
               "inc": inc, "gen": g, "chunk": body, "vec": np.asarray(v, dtype=np.float32).tolist()}
        if self.has_bm25:
            terms = hashed_terms(self.analyzer(passage_text(c)))
            if len(terms) > MAX_VARCHAR:
                raise InputError(f"chunk {c.evidence_id!r} has {len(terms) // 17} BM25 tokens; Milvus keeps at most "
                                 f"{MAX_VARCHAR // 17} per chunk — lower chunking.max_tokens")
            row["terms"] = terms
        return row

    def _clean_unpublished(self, gen: int) -> None:
        """Delete what a writer that died before publishing left above generation ``gen``."""
        e = self.engine
        with e.calls("clean up an interrupted write"):
            orphans = e.client.query(self.collection, filter=f"gen > {gen}", output_fields=["pk"], limit=1,
                                     consistency_level="Strong")
            stale = e.client.query(self.meta, filter=f'kind == "doc" and (gen_added > {gen} or '
                                   f"(gen_removed > {gen} and gen_removed < {NEVER}))",
                                   output_fields=["pk", "body", "gen_added", "gen_removed"],
                                   consistency_level="Strong", limit=PAGE)
            if orphans:
                e.client.delete(self.collection, filter=f"gen > {gen}")
            dead = [r["pk"] for r in stale if int(r["gen_added"]) > gen]
            revive = [_doc_row(r["pk"][4:], r["body"], int(r["gen_added"]), NEVER)
                      for r in stale if int(r["gen_added"]) <= gen]
            if dead:
                e.client.delete(self.meta, filter=_in("pk", dead))
            if revive:
                e.client.upsert(self.meta, revive)
        if orphans or dead or revive:
            logger.warning("%s: removed the unpublished rows of an interrupted write above generation %d "
                           "(%d document records dropped, %d restored)", self.where_label, gen, len(dead), len(revive))

    def _purge(self, pending: tuple[_Pending, ...], now: float, force: bool, keep: int = 0) -> tuple[_Pending, ...]:
        """Delete the rows of removals older than ``purge_delay_s`` (``force``: all but the newest ``keep``)."""
        if not pending:
            return pending
        if force:
            due, rest = pending[:len(pending) - keep], pending[len(pending) - keep:]
        else:
            due = tuple(p for p in pending if now - p.removed_at >= self.settings.purge_delay_s)
            rest = tuple(p for p in pending if p not in due)
        if due:
            e = self.engine
            incs = [p.incarnation for p in due]
            with e.calls("purge removed rows"):
                for i in range(0, len(incs), 200):
                    part = incs[i:i + 200]
                    e.client.delete(self.collection, filter=_in("inc", part))
                    e.client.delete(self.meta, filter=_in("pk", [f"doc:{x}" for x in part]))
        return tuple(rest)

    def flush(self) -> None:
        """Seal what was written into the engine's segments (faster searches afterwards)."""
        e = self.engine
        with e.calls("flush"):
            e.client.flush(self.collection)
            e.client.flush(self.meta)

    def purge(self) -> None:
        """Delete the rows of every removal now (no pinned reader will need them)."""
        with self._write_lock, self._lease():
            gen, n_chunks, pending = self._read_state()
            if pending:
                self._purge(pending, time.time(), force=True)
                state = _View(gen, n_chunks, (), {}, {})
                with self.engine.calls("publish"):
                    self.engine.client.upsert(self.meta, [_meta_row("state", "state", _state_body(state), gen)])
                self.refresh()

    # -- persistence (the engine persists every published generation) ---------------------
    def save(self, path=None) -> None:
        """Nothing to do: every update was published to the engine when it returned."""
        return None


class _DropMvccNotice(logging.Filter):
    """pymilvus warns on every query iterator that milvus-lite has no MVCC timestamp to give; the
    iterator works without it."""

    def filter(self, record: logging.LogRecord) -> bool:
        return "mvccTs" not in record.getMessage()


class _DropUnimplemented(logging.Filter):
    """milvus-lite's in-process gRPC server logs a traceback for each call it does not implement
    (pymilvus asks for a timestamp while waiting for an index); the client carries on without it."""

    def filter(self, record: logging.LogRecord) -> bool:
        exc = record.exc_info[1] if record.exc_info else None
        return not isinstance(exc, NotImplementedError)


def _quiet_lite_notices() -> None:
    for name, kind in (("grpc._server", _DropUnimplemented),
                       ("pymilvus.client.iterator.query_iterator", _DropMvccNotice)):
        log = logging.getLogger(name)
        if not any(isinstance(f, kind) for f in log.filters):
            log.addFilter(kind())


def _dead_here(owner: str) -> bool:
    """Whether a lease holder ("host:pid:...") is a process of this machine that no longer runs."""
    host, _, rest = owner.partition(":")
    pid = rest.partition(":")[0]
    if host != socket.gethostname() or not pid.isdigit():
        return False
    try:
        os.kill(int(pid), 0)
    except ProcessLookupError:
        return True
    except PermissionError:
        return False
    return False


def _meta_row(pk: str, kind: str, body: dict, gen: int) -> dict:
    return {"pk": pk, "kind": kind, "body": json.dumps(body, ensure_ascii=False, sort_keys=True),
            "gen_added": gen, "gen_removed": NEVER, "vec": [0.0, 0.0]}


def _doc_row(incarnation: str, body: str, gen_added: int, gen_removed: int) -> dict:
    pk = f"doc:{incarnation}"
    return {"pk": pk, "kind": "doc", "body": body, "gen_added": gen_added, "gen_removed": gen_removed,
            "vec": [0.0, 0.0]}


def _state_body(view: _View) -> dict:
    return {"generation": view.generation, "n_chunks": view.n_chunks,
            "pending": [[p.incarnation, p.removed_gen, p.removed_at] for p in view.pending]}


def _record(body: str) -> tuple[DocumentRecord, str]:
    """A document row's body: the record and its incarnation."""
    data = json.loads(body)
    inc = data.pop("incarnation")
    return DocumentRecord(**data), inc


def _chunk_from_row(row: dict) -> Chunk:
    return chunk_from_json(json.loads(row["chunk"]))


def _dense_build_params(kind: str) -> dict:
    if kind == "HNSW":
        return {"params": {"M": 32, "efConstruction": 200}}
    if kind == "IVF_FLAT":
        return {"params": {"nlist": 1024}}
    return {}


def _dense_search_params(kind: str) -> dict:
    if kind == "HNSW":
        return {"ef": 128}
    if kind == "IVF_FLAT":
        return {"nprobe": 32}
    return {}
