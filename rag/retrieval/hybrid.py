"""Hybrid retrieval: BM25 top-k and dense top-k, fused into candidates."""
from __future__ import annotations

import logging
import time
from typing import Any, Sequence

from rag.access.model import Principal, ReaderScope
from rag.access.scope import reader_scope
from rag.config import RetrievalConfig, SecurityConfig
from rag.models.embedders import Embedder
from rag.errors import EmptyQueryError, InputError
from rag.retrieval.earlier import earlier_hits, with_earlier
from rag.retrieval.fusion import fuse
from rag.index.protocol import Index
from rag.types import Candidate, EarlierEvidence, ScoredChunk, SearchFilter, SearchResult

logger = logging.getLogger(__name__)


def check_query(query: object) -> str:
    if not isinstance(query, str):
        raise InputError(f"query must be a string, got {type(query).__name__}")
    if not query.strip():
        raise EmptyQueryError("the query is empty or whitespace only; ask a question with some words in it")
    return query.strip()


class HybridRetriever:
    """Runs both retrievers over one index (any backend, :class:`rag.index.protocol.Index`) and fuses their lists.

    Access control happens here, whatever the caller: every search turns its ``principal`` (None:
    anonymous) into a :class:`rag.access.ReaderScope` under ``security.default_access`` and adds it
    to the request's ``where`` (:meth:`rag.types.SearchFilter.restricted_to`), so both legs filter
    by it inside the index, before their top-k. A request filter narrows what the caller may read;
    it never replaces the scope."""

    def __init__(self, index: Index, embedder: Embedder, config: RetrievalConfig,
                 security: SecurityConfig | None = None) -> None:
        self.index = index
        self.embedder = embedder
        self.config = config
        self.security = security or SecurityConfig()

    def scope(self, principal: Principal | None = None) -> ReaderScope:
        """What ``principal`` (None: anonymous) may read under this retriever's ``security`` settings."""
        return reader_scope(principal, self.security)

    def restrict(self, where: SearchFilter | None, principal: Principal | None) -> SearchFilter:
        """``where`` intersected with what ``principal`` may read: the filter both legs apply."""
        return SearchFilter.within(where, self.scope(principal))

    def _bm25(self, index: Index, query: str, k: int, where: SearchFilter | None = None) -> list[ScoredChunk]:
        """BM25 hits, or none on an engine without BM25 when the fusion gives BM25 no weight
        (``retrieval.fusion.bm25_weight: 0``: dense-only search, e.g. on Milvus < 2.5)."""
        if not index.has_bm25 and self.config.fusion.bm25_weight == 0:
            return []
        return index.search_bm25(query, k, where)

    def bm25(self, query: str, k: int | None = None, *, where: SearchFilter | None = None,
             principal: Principal | None = None) -> list[ScoredChunk]:
        return self.index.search_bm25(check_query(query), k or self.config.bm25_top_k, self.restrict(where, principal))

    def dense(self, query: str, k: int | None = None, *, where: SearchFilter | None = None,
              principal: Principal | None = None) -> list[ScoredChunk]:
        vec = self.embedder.embed_queries([check_query(query)])[0]
        return self.index.search_dense(vec, k or self.config.dense_top_k, self.restrict(where, principal))

    def search(self, query: str, candidates: int | None = None, where: SearchFilter | None = None, *,
               principal: Principal | None = None, earlier: EarlierEvidence | None = None) -> SearchResult:
        """Fused candidates; ``where`` restricts both retrievers to the documents/versions it allows,
        within what ``principal`` (None: anonymous) may read. ``earlier``: what the previous answer
        of a conversation cited (a follow-up's search): those blocks join the candidates, scored for
        this query by both retrievers like any other (:mod:`rag.retrieval.earlier`)."""
        q = check_query(query)
        where = self.restrict(where, principal)
        index = self.index.snapshot()  # both retrievers see one version, whatever updates run meanwhile
        t0 = time.perf_counter()
        bm = self._bm25(index, q, self.config.bm25_top_k, where)
        t1 = time.perf_counter()
        vec = self.embedder.embed_queries([q])[0]
        t2 = time.perf_counter()
        dn = index.search_dense(vec, self.config.dense_top_k, where)
        t3 = time.perf_counter()
        timings = {"bm25": (t1 - t0) * 1e3, "embed_query": (t2 - t1) * 1e3, "dense": (t3 - t2) * 1e3}
        fused: tuple[Candidate, ...]
        if earlier:
            found = earlier_hits(index, q, vec, earlier, where, self._bm25)
            t4 = time.perf_counter()
            fused = tuple(with_earlier(self.config.fusion, bm, dn, found, candidates or self.config.candidates))
            timings["earlier"] = (t4 - t3) * 1e3
            t3 = t4
        else:
            fused = self.fuse(q, bm, dn, candidates).candidates
        timings["fusion"] = (time.perf_counter() - t3) * 1e3
        return SearchResult(q, fused, timings)

    def search_many(self, queries: Sequence[str], candidates: int | None = None, *,
                    principal: Principal | None = None) -> list[SearchResult]:
        """Fused candidates for many queries, embedding them in one batch (evaluation, training, scripts),
        within what ``principal`` (None: anonymous) may read."""
        qs = [check_query(q) for q in queries]
        vecs: Any = self.embedder.embed_queries(qs) if qs else []
        where = self.restrict(None, principal)
        return [self.fuse(q, self._bm25(self.index, q, self.config.bm25_top_k, where),
                          self.index.search_dense(v, self.config.dense_top_k, where), candidates)
                for q, v in zip(qs, vecs)]

    def fuse(self, query: str, bm: list[ScoredChunk], dn: list[ScoredChunk], candidates: int | None = None) -> SearchResult:
        f = self.config.fusion
        fused = fuse(
            {"bm25": bm, "dense": dn},
            method=f.method,
            k=f.k,
            weights={"bm25": f.bm25_weight, "dense": f.dense_weight},
            normalization=f.normalization,
            limit=candidates or self.config.candidates,
        )
        return SearchResult(query, tuple(fused))
