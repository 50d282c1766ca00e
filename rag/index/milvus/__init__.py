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
the next write deletes them first (after ``settle_s``, so the dead writer's requests still in
flight have landed: see :func:`~rag.index.milvus.writer.lease`), and ``add`` skips documents already indexed with the same
text, so rerunning an interrupted ingest completes it with nothing duplicated or lost.

Milvus servers older than 2.5 (the ``milvus`` 2.3.5 package) have no BM25: the collection is made
without terms, dense search works, and BM25 search raises :class:`UnsupportedByBackendError`.

Modules: :mod:`~rag.index.milvus.engine` (the connection and its typed errors),
:mod:`~rag.index.milvus.records` (the rows and the published view), :mod:`~rag.index.milvus.collections`
(the schema, the state row, reading the records), :mod:`~rag.index.milvus.writer` (the writer lease and
one generation) and :mod:`~rag.index.milvus.index` (:class:`MilvusIndex`).
"""
from rag.index.milvus.engine import is_server_uri, supports_bm25
from rag.index.milvus.index import MilvusIndex
from rag.index.milvus.records import hashed_terms

__all__ = ["MilvusIndex", "hashed_terms", "is_server_uri", "supports_bm25"]
