"""Version policy: which version of each document may be answered from (``retrieval.versions``).

The index keeps every version of a document; answering uses one per document id:

- ``latest``: the greatest version (natural order: digit runs compare as numbers, so
  ``2026-01-02 > 2023-01-01``, ``2025.1 > 2024.1``, ``10 > 9``);
- ``{as_of: DATE}``: the greatest version whose effective date is on or before DATE. The
  effective date is the document metadata's ``effective_date`` (or ``valid_from``) when given,
  else the version itself when it reads as a date (``2026-01-02``, ``2024.06.28``). A version
  with no date is never "in force" while another version of the same document has one;
- ``all``: every version (the pre-policy behaviour).

Candidates of any other version are dropped before reranking and the gate, and reported as
:class:`SupersededVersion` so the user sees that the rule changed.
"""
from __future__ import annotations

import datetime
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from rag.access import ReaderScope
from rag.config import RetrievalConfig, VersionsAsOf
from rag.index.version_order import version_key
from rag.types import Candidate

_DATE = re.compile(r"^\s*(\d{4})\s*[-./]\s*(\d{1,2})\s*[-./]\s*(\d{1,2})\.?\s*$")


@dataclass(frozen=True)
class VersionInfo:
    """One version of a document as the policy sees it."""

    document_id: str
    version: str
    effective_date: datetime.date | None = None


@dataclass(frozen=True)
class SupersededVersion:
    """A retrieved version that the policy set aside, and the version answered from instead."""

    document_id: str
    version: str
    current_version: str | None  # None: no version of the document is in force (as_of before all)
    evidence_ids: tuple[str, ...]

    def to_json(self) -> dict:
        return {"document_id": self.document_id, "version": self.version,
                "current_version": self.current_version, "evidence_ids": list(self.evidence_ids)}


def parse_date(value: object) -> datetime.date | None:
    """A date from ``2026-01-02`` / ``2024.6.28`` / ``2024/06/28`` (or a date object); None otherwise."""
    if isinstance(value, datetime.date):
        return value
    m = _DATE.match(str(value)) if value is not None else None
    if not m:
        return None
    try:
        return datetime.date(int(m.group(1)), int(m.group(2)), int(m.group(3)))
    except ValueError:
        return None


def effective_date(version: str, metadata: Mapping[str, object] | None = None) -> datetime.date | None:
    meta = metadata or {}
    for key in ("effective_date", "valid_from"):
        if key in meta and (d := parse_date(meta[key])) is not None:
            return d
    return parse_date(version)


def allowed_versions(versions: Iterable[VersionInfo],
                     policy: RetrievalConfig | str | VersionsAsOf) -> dict[str, str | None] | None:
    """Per document id, the one version that may be answered from (None: none is in force).
    Returns None for the ``all`` policy (no filtering)."""
    pol = policy.versions if isinstance(policy, RetrievalConfig) else policy
    if pol == "all":
        return None
    by_doc: dict[str, list[VersionInfo]] = {}
    for v in versions:
        by_doc.setdefault(v.document_id, []).append(v)
    out: dict[str, str | None] = {}
    for doc, vs in sorted(by_doc.items()):
        if pol == "latest":
            out[doc] = max(vs, key=lambda v: version_key(v.version)).version
            continue
        assert isinstance(pol, VersionsAsOf)
        day = datetime.date.fromisoformat(str(pol.as_of))
        dated = [v for v in vs if v.effective_date is not None]
        if not dated:  # nothing to compare against: fall back to the latest
            out[doc] = max(vs, key=lambda v: version_key(v.version)).version
            continue
        in_force = [v for v in dated if v.effective_date is not None and v.effective_date <= day]
        out[doc] = max(in_force, key=lambda v: (v.effective_date, version_key(v.version))).version \
            if in_force else None
    return out


class VersionPolicy:
    """``retrieval.versions`` over an index's documents, per reader scope: :func:`allowed_versions`
    over the records the scope may read, recomputed only when the documents change (compared by
    identity: an index replaces, never mutates, its mapping of records) and, where any document
    carries access metadata, once per scope (at most :attr:`MAX_SCOPES` kept)."""

    MAX_SCOPES = 256

    def __init__(self, config: RetrievalConfig) -> None:
        self.config = config
        # (documents, policy over all, whether any has access metadata, policy per reader scope)
        self._state: tuple[object, dict[str, str | None] | None, bool, dict] | None = None

    def allowed(self, documents: Mapping, scope: ReaderScope) -> dict[str, str | None] | None:
        """Per document id the version ``scope`` may answer from (None: ``versions: all``)."""
        state = self._state  # read once: another thread may replace it for other documents meanwhile
        if state is None or state[0] is not documents:
            restricted = any(rec.access is not None for rec in documents.values())
            state = self._state = (documents, self._policy(documents.values()), restricted, {})
        _, everyone, restricted, per_scope = state
        if not restricted and scope.default_access == "public":  # every document is readable
            return everyone
        if scope not in per_scope:
            if len(per_scope) >= self.MAX_SCOPES:
                per_scope.clear()
            per_scope[scope] = self._policy(rec for rec in documents.values() if scope.allows(rec.access))
        return per_scope[scope]

    def _policy(self, records) -> dict[str, str | None] | None:
        infos = [VersionInfo(rec.id, rec.version, effective_date(rec.version, rec.meta)) for rec in records]
        return allowed_versions(infos, self.config)


def filter_versions(candidates: Sequence[Candidate], allowed: Mapping[str, str | None] | None
                    ) -> tuple[tuple[Candidate, ...], tuple[SupersededVersion, ...]]:
    """Keep candidates of allowed versions (order preserved); group the rest per (document, version)."""
    if allowed is None:
        return tuple(candidates), ()
    kept: list[Candidate] = []
    dropped: dict[tuple[str, str], list[str]] = {}
    for c in candidates:
        ch = c.chunk
        if ch.document_id not in allowed or allowed[ch.document_id] == ch.document_version:
            kept.append(c)  # a document the policy does not know (added after it was computed) stays
        else:
            dropped.setdefault((ch.document_id, ch.document_version), []).append(ch.evidence_id)
    superseded = tuple(SupersededVersion(d, v, allowed[d], tuple(ids)) for (d, v), ids in sorted(dropped.items()))
    return tuple(kept), superseded
