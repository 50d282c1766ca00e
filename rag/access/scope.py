"""A principal under the configured security settings: the scope a request reads in."""
from __future__ import annotations

from collections.abc import Mapping

from rag.access.model import Principal, ReaderScope
from rag.config import SecurityConfig
from rag.errors import PrincipalRequiredError
from rag.types import SearchResult


def reader_scope(principal: Principal | None, security: SecurityConfig) -> ReaderScope:
    """What ``principal`` (None: anonymous) may read under ``security.default_access``."""
    if principal is not None and not isinstance(principal, Principal):
        raise TypeError(f"principal must be a rag.access.Principal or None, got {type(principal).__name__}")
    return ReaderScope(None if principal is None or principal.anonymous else principal, security.default_access)


def check_principal(principal: Principal | None, security: SecurityConfig) -> None:
    """Refuse a request without a principal when ``security.require_principal`` is set."""
    if security.require_principal and (principal is None or principal.anonymous):
        raise PrincipalRequiredError(
            "this configuration requires a principal on every request (security.require_principal: true); "
            "pass principal=Principal(user=..., groups=..., tenant=...) in Python, or --as/--group/--tenant "
            "on the command line")


def readable(search: SearchResult, records: Mapping, scope: ReaderScope) -> SearchResult:
    """``search`` without the candidates ``scope`` may not read, decided on ``records`` (the index's
    ``{(document id, version): record}``; a candidate whose record is gone is dropped too)."""
    keep = tuple(x for x in search.candidates
                 if (rec := records.get((x.chunk.document_id, x.chunk.document_version))) is not None
                 and scope.allows(rec.access))
    return search if len(keep) == len(search.candidates) else SearchResult(search.query, keep, search.timings_ms)
