"""Retrieval: BM25 + dense search over the index, fused into one candidate list."""
from rag.retrieval.fusion import (
    fuse,
)
from rag.retrieval.hybrid import (
    check_query,
    HybridRetriever,
)

__all__ = [
    "HybridRetriever",
    "check_query",
    "fuse",
]
