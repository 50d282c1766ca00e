"""The order of version strings: which version of a document is the current one (the policy of which
versions a search may return is :mod:`rag.retrieval.versions`).

A version is any string (a date ``2026-01-02``, ``2025.1``, ``v10``). Versions compare with a
natural sort key: runs of ASCII digits compare as integers, the text between them as text, so
``2026-01-02 > 2023-01-01``, ``2025.1 > 2024.1`` and ``10 > 9``.
"""
from __future__ import annotations

import re
from collections.abc import Iterable

_DIGITS = re.compile(r"([0-9]+)")

VersionKey = tuple[tuple[int | str, ...], str]


def version_key(v: str) -> VersionKey:
    """Natural sort key of a version string: ``sorted(vs, key=version_key)`` puts the newest last.

    The text splits into alternating text and digit runs (text first, so positions always hold
    the same type); digit runs compare as integers. Versions equal as numbers (``01`` and ``1``)
    are ordered by the raw string, so the order is total and deterministic."""
    s = str(v)
    parts = _DIGITS.split(s)
    return tuple(int(p) if i % 2 else p for i, p in enumerate(parts)), s


def latest_versions(pairs: Iterable[tuple[str, str]]) -> dict[str, str]:
    """``{document id: greatest version}`` over ``(document id, version)`` pairs, keys sorted."""
    best: dict[str, str] = {}
    for doc_id, version in pairs:
        cur = best.get(doc_id)
        if cur is None or version_key(version) > version_key(cur):
            best[doc_id] = version
    return {k: best[k] for k in sorted(best)}
