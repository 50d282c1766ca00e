"""Metadata filters: conditions on declared document fields (``retrieval.filter_fields``).

A request may narrow retrieval to documents whose metadata meets every condition: equality and
membership on ``keyword`` fields, ranges on ``number`` and ``date`` fields, equality on ``bool``
fields. A condition is checked against a document's metadata (its record), so the retrievers apply
it with access control, before their top-k, on both backends. A document that lacks the field, or
holds a value of another type, does not pass.

The request form (JSON, the service's ``filters.fields``, a batch line's ``filters``)::

    {"department": "hr",                      # keyword: equal (a list-valued field: any element)
     "region": ["kr", "jp"],                  # keyword: one of
     "year": {"gte": 2020, "lt": 2025},       # number: a range (gt, gte, lt, lte; eq)
     "effective": {"lte": "2025-06-30"},      # date: ISO 8601 dates, compared as dates
     "archived": false}                       # bool: equal
"""
from __future__ import annotations

import datetime
import math
from dataclasses import dataclass
from typing import Any, Literal, Mapping

from rag.errors import InputError

FieldType = Literal["keyword", "number", "date", "bool"]
FIELD_TYPES: tuple[str, ...] = ("keyword", "number", "date", "bool")
Op = Literal["eq", "in", "gt", "gte", "lt", "lte"]
RANGE_OPS = ("gt", "gte", "lt", "lte")
_OPS_BY_TYPE: dict[str, tuple[str, ...]] = {"keyword": ("eq", "in"), "number": ("eq", "in", *RANGE_OPS),
                                            "date": ("eq", *RANGE_OPS), "bool": ("eq",)}


class FieldFilterError(InputError):
    """A metadata filter names an undeclared field, an operator its type has not, or a bad value."""


@dataclass(frozen=True)
class FieldCondition:
    """One condition: ``field`` (of type ``kind``) ``op`` ``value``. ``value`` is a str, a number, a
    bool or an ISO date string, or a tuple of them for ``in``; build it with :func:`parse_fields`."""

    field: str
    kind: FieldType
    op: Op
    value: Any

    def __post_init__(self) -> None:
        if self.kind not in FIELD_TYPES:
            raise FieldFilterError(f"field {self.field!r}: unknown type {self.kind!r} (one of {', '.join(FIELD_TYPES)})")
        if self.op not in _OPS_BY_TYPE[self.kind]:
            raise FieldFilterError(f"field {self.field!r} ({self.kind}): no operator {self.op!r} "
                                   f"(use {', '.join(_OPS_BY_TYPE[self.kind])})")
        values = self.value if self.op == "in" else (self.value,)
        if self.op == "in" and (not isinstance(self.value, tuple) or not self.value):
            raise FieldFilterError(f"field {self.field!r}: 'in' needs a non-empty list of values")
        for v in values:
            _check_value(self.field, self.kind, v)

    def holds(self, metadata: Mapping[str, Any] | None) -> bool:
        """Whether a document with ``metadata`` meets the condition."""
        raw = (metadata or {}).get(self.field)
        have = [x for x in (raw if isinstance(raw, (list, tuple)) else [raw]) if _typed(self.kind, x) is not None]
        if not have:
            return False
        if self.op == "in":
            wanted = {_typed(self.kind, v) for v in self.value}
            return any(_typed(self.kind, x) in wanted for x in have)
        want = _typed(self.kind, self.value)
        return any(_compare(self.op, _typed(self.kind, x), want) for x in have)

    def to_json(self) -> dict:
        return {"field": self.field, "type": self.kind, "op": self.op,
                "value": list(self.value) if isinstance(self.value, tuple) else self.value}


def _check_value(name: str, kind: str, v: Any) -> None:
    if _typed(kind, v) is None:
        need = {"keyword": "a non-empty string", "number": "a finite number", "date": "an ISO date (YYYY-MM-DD)",
                "bool": "true or false"}[kind]
        raise FieldFilterError(f"field {name!r} ({kind}): {v!r} is not {need}")


def _typed(kind: str, v: Any) -> Any:
    """``v`` as a comparable value of ``kind``, or None when it is not one."""
    if kind == "keyword":
        return v if isinstance(v, str) and v else None
    if kind == "bool":
        return v if isinstance(v, bool) else None
    if kind == "number":
        ok = isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)
        return float(v) if ok else None
    if isinstance(v, str):
        try:
            return datetime.date.fromisoformat(v[:10])
        except ValueError:
            return None
    return None


def _compare(op: str, have: Any, want: Any) -> bool:
    return {"eq": have == want, "gt": have > want, "gte": have >= want, "lt": have < want,
            "lte": have <= want}[op]


def parse_fields(spec: Mapping[str, Any] | None, declared: Mapping[str, str]) -> tuple[FieldCondition, ...]:
    """The conditions of a request's ``fields`` mapping, checked against the ``declared`` field types;
    sorted by field and operator (a filter has one canonical form)."""
    if not spec:
        return ()
    if not isinstance(spec, Mapping):
        raise FieldFilterError(f"metadata filters must be a mapping of field to condition, got {type(spec).__name__}")
    out: list[FieldCondition] = []
    for name in sorted(spec):
        if name not in declared:
            known = ", ".join(sorted(declared)) or "none: declare them in retrieval.filter_fields"
            raise FieldFilterError(f"field {name!r} is not a declared filter field (declared: {known})")
        kind, cond = declared[name], spec[name]
        if isinstance(cond, Mapping):
            if not cond:
                raise FieldFilterError(f"field {name!r}: an empty condition; give an operator "
                                       f"({', '.join(_OPS_BY_TYPE[kind])})")
            for op in sorted(cond):
                value = cond[op]
                if op == "in":
                    if not isinstance(value, (list, tuple)):
                        raise FieldFilterError(f"field {name!r}: 'in' needs a list, got {value!r}")
                    value = tuple(value)
                out.append(FieldCondition(name, kind, op, value))
        elif isinstance(cond, (list, tuple)):
            out.append(FieldCondition(name, kind, "in", tuple(cond)))
        else:
            out.append(FieldCondition(name, kind, "eq", cond))
    return tuple(out)


__all__ = ["FIELD_TYPES", "FieldCondition", "FieldFilterError", "FieldType", "parse_fields"]
