"""Near-duplicate evidence (``context.near_duplicates: drop``): character shingles and their Jaccard
overlap, which the context builder compares across documents."""
from __future__ import annotations

import unicodedata
from functools import lru_cache

__all__ = ["jaccard", "shingles"]


@lru_cache(maxsize=50_000)
def shingles(text: str, n: int = 5) -> frozenset[str]:
    """Character n-gram shingles of the whitespace-normalized, NFKC-lowercased text (cached per text)."""
    t = " ".join(unicodedata.normalize("NFKC", text).lower().split())
    if len(t) <= n:
        return frozenset({t})
    return frozenset(t[i:i + n] for i in range(len(t) - n + 1))


def jaccard(a: frozenset[str], b: frozenset[str]) -> float:
    if not a and not b:
        return 1.0
    return len(a & b) / len(a | b)
