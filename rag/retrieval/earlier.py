"""A follow-up's search with the previous answer's evidence (issue 41).

1. **Find the earlier blocks** (:func:`earlier_hits`): both retrievers search only the documents the
   previous answer cited, within the request's filter and what the caller may read, for *this*
   query; of their hits, the blocks of the articles the answer cited (an evidence id's article, or
   an article its text named; every paragraph of it) are kept, each with this query's BM25 score
   and cosine.
2. **Join them to the candidates** (:func:`with_earlier`): each leg's list gains the blocks it
   missed, in score order, and a third list ``earlier`` holds them by their cosine to the
   follow-up, fused with ``retrieval.fusion.earlier_weight`` (0: no pull, they only join). So an
   earlier block rises by how well it matches the follow-up, the best-matching paragraph of the
   cited article most; a block the candidate limit would cut is kept after the others. Each
   carries an ``earlier`` retriever hit, so the trace shows which they are.

Only a follow-up (a question the resolver found does not stand alone) is searched this way; the
reranker, gate and generator read the earlier blocks like any other candidate.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from rag.config import FusionConfig
from rag.index.protocol import Index
from rag.lang.ko.statute import citation_parts
from rag.retrieval.fusion import fuse
from rag.types import Candidate, Chunk, EarlierEvidence, ScoredChunk, SearchFilter

MAX_BLOCKS = 12  # earlier blocks one follow-up may add
MAX_K = 512  # rows each restricted search may return


@dataclass(frozen=True)
class EarlierHits:
    """The earlier blocks found for one query: each leg's hits on them (ranks within the restricted
    search). ``dense`` holds every one of them (the dense leg scores every row); ``bm25`` those that
    share a term with the query."""

    bm25: tuple[ScoredChunk, ...] = ()
    dense: tuple[ScoredChunk, ...] = ()


def _articles(locator: str) -> set[str]:
    """The articles a block's locator names (``제5조~제6조``: both ends; a statute's citation label)."""
    return {p[0] for p in (citation_parts(side) for side in locator.split("~")) if p}


def earlier_hits(index: Index, query: str, vector: np.ndarray, earlier: EarlierEvidence, where: SearchFilter,
                 bm25: Callable[[Index, str, int, SearchFilter], list[ScoredChunk]]) -> EarlierHits:
    """Step 1 (module docstring): the blocks of the cited articles, scored for ``query`` / ``vector``
    within ``where``; ``bm25`` is the retriever's own BM25 leg (none on an engine without BM25 when
    the fusion gives it no weight). A cited block brings its whole article (every paragraph of it):
    a follow-up most often asks about the next clause of the article the answer quoted."""
    docs = [d for d in earlier.document_ids if not where.document_ids or d in where.document_ids]
    if not docs:
        return EarlierHits()
    sizes = [rec.n_chunks for (d, _), rec in index.documents.items() if d in docs]
    k = max(1, min(MAX_K, sum(sizes)))
    restricted = SearchFilter(tuple(docs), where.versions, where.readers, where.fields)
    # k covers every row of those documents, so the dense leg scores each block of them (best first).
    rows = index.search_dense(vector, k, restricted)
    cited = {(h.chunk.document_id, h.chunk.document_version, a) for h in rows
             if h.chunk.evidence_id in earlier.evidence_ids for a in _articles(h.chunk.locator)}
    named = {(doc, a) for doc, art in earlier.articles for a in _articles(art)}

    def wanted(c: Chunk) -> bool:
        return c.evidence_id in earlier.evidence_ids or any(
            (c.document_id, c.document_version, a) in cited or (c.document_id, a) in named
            for a in _articles(c.locator))

    dn = [h for h in rows if wanted(h.chunk)][:MAX_BLOCKS]
    keep = {h.chunk.evidence_id for h in dn}
    bm = [h for h in bm25(index, query, k, restricted) if h.chunk.evidence_id in keep]
    return EarlierHits(tuple(bm), tuple(dn))


def _joined(leg: list[ScoredChunk], extra: tuple[ScoredChunk, ...]) -> list[ScoredChunk]:
    have = {h.chunk.evidence_id for h in leg}
    items = [*leg, *(h for h in extra if h.chunk.evidence_id not in have)]
    items.sort(key=lambda h: (-float(h.score), h.chunk.evidence_id))
    return [ScoredChunk(h.chunk, h.score, i + 1) for i, h in enumerate(items)]


def with_earlier(config: FusionConfig, bm: list[ScoredChunk], dn: list[ScoredChunk], found: EarlierHits,
                 limit: int) -> list[Candidate]:
    """Step 2 (module docstring): the legs joined with the earlier blocks, fused; at most ``limit``
    candidates plus the earlier blocks the limit cut."""
    earlier = [ScoredChunk(h.chunk, h.score, i + 1) for i, h in enumerate(found.dense)]  # by cosine, best first
    fused = fuse({"bm25": _joined(bm, found.bm25), "dense": _joined(dn, found.dense), "earlier": earlier},
                 method=config.method, k=config.k, normalization=config.normalization,
                 weights={"bm25": config.bm25_weight, "dense": config.dense_weight, "earlier": config.earlier_weight})
    ids = {h.chunk.evidence_id for h in found.dense}
    kept = fused[:limit] + [c for c in fused[limit:] if c.chunk.evidence_id in ids]
    return [Candidate(c.chunk, c.score, i + 1, c.hits) for i, c in enumerate(kept)]
