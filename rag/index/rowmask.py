"""Which documents (and rows) a search filter allows, decided once per distinct value.

A filter's access scope and metadata conditions depend on a document only through its access
metadata and the values of the filtered fields, and an index holds many documents but few
distinct such values (a group per department, a shard per tenant). :class:`DocumentTable` codes
every document by those values once per index version; :func:`allowed_documents` then checks each
distinct value once and maps the answer back to every document with numpy, so a filter costs
about the same whether it names one document in a hundred or all of them."""
from __future__ import annotations

import json
from typing import Any, Mapping, Sequence

import numpy as np

from rag.access.model import NOBODY


class DocumentTable:
    """The documents of one index version, coded for filtering. ``keys``: ``(id, version)`` in a
    fixed order; ``records``: their records (``access``, ``meta``), a key without one reads as
    nobody's; ``row_keys``: the key of every row, when rows are to be selected."""

    def __init__(self, keys: Sequence[tuple[str, str]], records: Mapping[tuple[str, str], Any],
                 row_keys: Sequence[tuple[str, str]] | None = None) -> None:
        self.keys = list(keys)
        self.records = records
        index = {k: i for i, k in enumerate(self.keys)}
        self.row_doc = (np.fromiter((index[k] for k in row_keys), np.int64, len(row_keys))
                        if row_keys is not None else None)
        self._ids = self._codes([k[0] for k in self.keys])
        self._versions = self._codes([k[1] for k in self.keys])
        recs = [records.get(k) for k in self.keys]
        self._access = self._codes([NOBODY if r is None else r.access for r in recs])
        self._fields: dict[str, tuple[list, np.ndarray]] = {}

    @staticmethod
    def _codes(values: Sequence[Any]) -> tuple[list, np.ndarray]:
        """(distinct values, the code of each) for hashable values."""
        distinct: dict[Any, int] = {}
        codes = np.fromiter((distinct.setdefault(v, len(distinct)) for v in values), np.int64, len(values))
        return list(distinct), codes

    def field(self, name: str) -> tuple[list, np.ndarray]:
        """(distinct metadata values of ``name``, as the documents hold them; the code of each)."""
        if name not in self._fields:
            seen: dict[str, int] = {}
            values: list = []
            codes = np.empty(len(self.keys), np.int64)
            for i, k in enumerate(self.keys):
                rec = self.records.get(k)
                v = rec.meta.get(name) if rec is not None else None
                key = json.dumps(v, sort_keys=True, default=str)
                if key not in seen:
                    seen[key] = len(values)
                    values.append(v)
                codes[i] = seen[key]
            self._fields[name] = (values, codes)
        return self._fields[name]

    @staticmethod
    def _mask(distinct: tuple[list, np.ndarray], ok) -> np.ndarray:
        values, codes = distinct
        return np.fromiter((bool(ok(v)) for v in values), bool, len(values))[codes]

    def allowed(self, where, readers: bool) -> np.ndarray:
        """A boolean per document: whether ``where`` allows it (``readers``: apply its access scopes)."""
        mask = np.ones(len(self.keys), bool)
        if where.document_ids:
            ids = set(where.document_ids)
            mask &= self._mask(self._ids, lambda v: v in ids)
        if where.versions:
            versions = set(where.versions)
            mask &= self._mask(self._versions, lambda v: v in versions)
        if readers:
            for scope in where.readers:
                mask &= self._mask(self._access, scope.allows)
        for cond in where.fields:
            mask &= self._mask(self.field(cond.field), lambda v, c=cond: c.holds({c.field: v}))
        return mask

    def tenant_rows(self, tenant: str | None) -> np.ndarray:
        """The rows of documents shared by every tenant (no tenant in their access) or of ``tenant``:
        the BM25 statistics a caller of ``tenant`` is scored with under ``security.isolate: tenant``."""
        ok = self._mask(self._access, lambda a: a is None or a.tenant is None or a.tenant == tenant)
        return np.flatnonzero(ok[self.row_doc]).astype(np.int64)

    def allowed_rows(self, where, readers: bool) -> np.ndarray:
        """The row numbers ``where`` allows, ascending."""
        return np.flatnonzero(self.allowed(where, readers)[self.row_doc]).astype(np.int64)


__all__ = ["DocumentTable"]
