"""The two collections of one Milvus index (``C`` and ``C_meta``, see :mod:`rag.index.milvus`):
their schema, the parameters and state rows, and reading the published document records."""
from __future__ import annotations

import json
import logging
import time
from typing import Iterator

from rag.config import BM25Config, MilvusConfig
from rag.errors import IndexCorruptError
from rag.index.layout import DocumentRecord
from rag.index.milvus.engine import Engine
from rag.index.milvus.records import (EMPTY, MAX_TENANT, MAX_VARCHAR, Pending, View, dense_build_params,
                                          meta_row, record)

logger = logging.getLogger(__name__)

PAGE = 16384  # the most rows one Milvus query returns


def _state_body(view: View) -> dict:
    return {"generation": view.generation, "n_chunks": view.n_chunks,
            "pending": [[p.incarnation, p.removed_gen, p.removed_at] for p in view.pending]}


def state_row(view: View, gen: int) -> dict:
    """The state row that publishes ``view`` (its generation, chunk count and pending removals)."""
    return meta_row("state", "state", _state_body(view), gen)


class Collections:
    """Collection ``collection`` and its ``<collection>_meta`` on ``uri``; connects on first use."""

    def __init__(self, settings: MilvusConfig, uri: str, collection: str) -> None:
        self.settings = settings
        self.uri = uri
        self.collection = collection
        self.meta = f"{collection}_meta"
        self._engine: Engine | None = None
        # whether the chunk collection has the tenant field (collections made before it have not)
        self.tenant_key = False

    @property
    def engine(self) -> Engine:
        if self._engine is None:
            self._engine = Engine(self.settings, self.uri)
        return self._engine

    @property
    def label(self) -> str:
        """Where the index is, for messages: the URI, the database when one is named, the collection."""
        db = f" database {self.settings.db_name!r}" if self.settings.db_name else ""
        return f"Milvus {self.uri}{db} collection {self.collection!r}"

    # -- the collections ---------------------------------------------------------------
    def exists(self) -> bool:
        e = self.engine
        with e.calls("list collections"):
            return e.client.has_collection(self.collection)

    def load(self) -> None:
        """Load both collections (a restarted server has them released)."""
        e = self.engine
        with e.calls("load collection"):
            e.client.load_collection(self.meta)
            e.client.load_collection(self.collection)

    def drop(self) -> None:
        """Remove both collections, where they exist."""
        e = self.engine
        with e.calls("drop collection"):
            for name in (self.collection, self.meta):
                if e.client.has_collection(name):
                    e.client.drop_collection(name)

    def make(self, dim: int, bm25: BM25Config, params: dict) -> None:
        """Create both collections for vectors of ``dim`` (with the engine's BM25 on ``bm25.k1``/``b``
        where the server has it), holding ``params`` and the empty state."""
        from pymilvus import DataType, Function, FunctionType

        e, s = self.engine, self.settings
        has_bm25 = e.bm25
        schema = e.client.create_schema(auto_id=False, enable_dynamic_field=False)
        schema.add_field("pk", DataType.VARCHAR, is_primary=True, max_length=MAX_VARCHAR)
        schema.add_field("doc_id", DataType.VARCHAR, max_length=MAX_VARCHAR)
        schema.add_field("doc_version", DataType.VARCHAR, max_length=1024)
        schema.add_field("inc", DataType.VARCHAR, max_length=MAX_VARCHAR)
        schema.add_field("gen", DataType.INT64)
        # a document's access tenant ("" when it has none), in every scoped search's filter expression;
        # with tenant_partitions the partition key, so such a search reads only its tenants' partitions
        schema.add_field("tenant", DataType.VARCHAR, max_length=MAX_TENANT,
                         **({"is_partition_key": True} if s.tenant_partitions else {}))
        schema.add_field("chunk", DataType.VARCHAR, max_length=MAX_VARCHAR)
        schema.add_field("vec", DataType.FLOAT_VECTOR, dim=dim)
        index = e.client.prepare_index_params()
        index.add_index("vec", index_type=s.dense_index, metric_type="IP", **dense_build_params(s.dense_index))
        if has_bm25:
            schema.add_field("terms", DataType.VARCHAR, max_length=MAX_VARCHAR, enable_analyzer=True,
                             analyzer_params={"type": "standard"})
            schema.add_field("sparse", DataType.SPARSE_FLOAT_VECTOR)
            schema.add_function(Function(name="bm25", function_type=FunctionType.BM25,
                                         input_field_names=["terms"], output_field_names=["sparse"]))
            index.add_index("sparse", index_type="SPARSE_INVERTED_INDEX", metric_type="BM25",
                            params={"bm25_k1": bm25.k1, "bm25_b": bm25.b})
        meta = e.client.create_schema(auto_id=False, enable_dynamic_field=False)
        meta.add_field("pk", DataType.VARCHAR, is_primary=True, max_length=MAX_VARCHAR)
        meta.add_field("kind", DataType.VARCHAR, max_length=16)
        meta.add_field("body", DataType.VARCHAR, max_length=MAX_VARCHAR)
        meta.add_field("gen_added", DataType.INT64)
        meta.add_field("gen_removed", DataType.INT64)
        meta.add_field("vec", DataType.FLOAT_VECTOR, dim=2)  # Milvus wants a vector field in every collection
        meta_index = e.client.prepare_index_params()
        meta_index.add_index("vec", index_type="FLAT", metric_type="L2")
        params = {**params, "bm25": has_bm25, "server_version": e.version, "tenant_key": True,
                  "tenant_partitions": s.tenant_partitions}
        with e.calls("create collections"):
            if e.client.has_collection(self.meta):  # left by a creation that was interrupted
                e.client.drop_collection(self.meta)
            e.client.create_collection(self.meta, schema=meta, index_params=meta_index, consistency_level="Strong")
            e.client.insert(self.meta, [meta_row("params", "params", params, 0), state_row(EMPTY, 0)])
            e.client.create_collection(self.collection, schema=schema, index_params=index,
                                       consistency_level=s.consistency)
        self.tenant_key = True
        logger.info("created %s (dim %d, %s, BM25 %s; server %s)", self.label, dim, s.dense_index,
                    "in the engine" if has_bm25 else "not available", e.version)

    def flush(self) -> None:
        """Seal what was written into the engine's segments (faster searches afterwards)."""
        e = self.engine
        with e.calls("flush"):
            e.client.flush(self.collection)
            e.client.flush(self.meta)

    # -- the meta collection -----------------------------------------------------------
    def meta_get(self, pk: str) -> dict | None:
        e = self.engine
        # by primary key: a filter expression scans the collection on milvus-lite (136 ms vs 1.3 ms at 100k rows)
        with e.calls(f"read {pk}"):
            rows = e.client.get(self.meta, ids=[pk], output_fields=["body", "gen_added"], consistency_level="Strong")
        return dict(rows[0]) if rows else None

    def meta_put(self, pk: str, body: dict) -> None:
        with self.engine.calls(f"write {pk}"):
            self.engine.client.upsert(self.meta, [meta_row(pk, pk, body, 0)])

    def params(self) -> dict:
        """The stored index parameters (:class:`IndexCorruptError` when the row is missing)."""
        row = self.meta_get("params")
        if row is None:
            raise IndexCorruptError(f"{self.label}: the collection exists but its parameters row is missing "
                                    "(not a rag index, or its creation was interrupted); rebuild with "
                                    "`rag index --config ... --force`")
        return json.loads(row["body"])

    def read_state(self) -> tuple[int, int, tuple[Pending, ...]]:
        """The published generation, its chunk count and the removals pending purge."""
        row = None
        for attempt in range(5):  # an upsert in flight can hide the row for a moment
            row = self.meta_get("state")
            if row is not None:
                break
            time.sleep(0.05 * (attempt + 1))
        if row is None:
            raise IndexCorruptError(f"{self.label}: the state row is missing; rebuild with "
                                    "`rag index --config ... --force`")
        body = json.loads(row["body"])
        pending = tuple(Pending(str(i), int(g), float(t)) for i, g, t in body.get("pending", []))
        return int(body["generation"]), int(body["n_chunks"]), pending

    def publish(self, view: View, what: str) -> None:
        """Write the state row: readers see generation ``view.generation`` from now on."""
        with self.engine.calls(what):
            self.engine.client.upsert(self.meta, [state_row(view, view.generation)])

    def next_view(self, view: View, gen: int, n_chunks: int, pending: tuple[Pending, ...]) -> View:
        """The view of published generation ``gen``, read from ``view``: only the document records
        that changed since (all of them after ``purge_delay_s`` without a refresh: purged records
        are gone, or when ``view`` is the empty one or newer)."""
        now = time.monotonic()
        if view is EMPTY or gen < view.generation or now - view.read_at > self.settings.purge_delay_s / 2:
            documents, incs = self.read_documents(f"gen_added <= {gen} and gen_removed > {gen}")
        else:
            documents, incs = dict(view.documents), dict(view.incarnations)
            old = view.generation
            changed = f"(gen_added > {old} and gen_added <= {gen}) or (gen_removed > {old} and gen_removed <= {gen})"
            gone: list[tuple[DocumentRecord, str]] = []
            new: list[tuple[DocumentRecord, str]] = []
            for row in self.iterate(self.meta, f'kind == "doc" and ({changed})', ["body", "gen_removed"]):
                (gone if int(row["gen_removed"]) <= gen else new).append(record(row["body"]))
            for rec, inc in gone:
                if incs.get((rec.id, rec.version)) == inc:
                    del documents[(rec.id, rec.version)], incs[(rec.id, rec.version)]
            for rec, inc in new:
                documents[(rec.id, rec.version)], incs[(rec.id, rec.version)] = rec, inc
            documents = dict(sorted(documents.items()))
        return View(gen, n_chunks, pending, documents, incs, now)

    def read_documents(self, where: str) -> tuple[dict, dict]:
        documents: dict[tuple[str, str], DocumentRecord] = {}
        incs: dict[tuple[str, str], str] = {}
        for row in self.iterate(self.meta, f'kind == "doc" and {where}', ["body"]):
            rec, inc = record(row["body"])
            documents[(rec.id, rec.version)] = rec
            incs[(rec.id, rec.version)] = inc
        return dict(sorted(documents.items())), incs

    def iterate(self, collection: str, expr: str, fields: list[str]) -> Iterator[dict]:
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
