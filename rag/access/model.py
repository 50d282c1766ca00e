"""Who may read which document: a document's :class:`Access`, a caller's :class:`Principal`, the one
rule (:func:`can_read`) and the :class:`ReaderScope` the retrievers filter by.

The rule (docs/security.md):

- a document **without access metadata** is public: every caller, anonymous included, may read it;
  with ``security.default_access: private`` nobody may (give it access metadata to open it);
- a document **with access metadata** is never readable anonymously. A principal may read it when
  both hold:
  - ``tenant`` is unset, or equals the principal's tenant;
  - ``users`` and ``groups`` are both empty, or the principal's user is in ``users``, or one of
    the principal's groups is in ``groups``.
- an :class:`Access` that names nobody (no tenant, users or groups; never parsed from input, only
  :data:`NOBODY` for stored metadata that cannot be read) admits no one: unreadable rules fail closed.

This package is part of the foundation: it imports nothing of ``rag`` but the errors, so every
stage (the index, the retrievers, the pipeline, batch) can hold these types.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, Mapping

from rag.errors import AccessMetadataError, InputError

DefaultAccess = Literal["public", "private"]
_KEYS = ("groups", "users", "tenant")


def _names(value: object, what: str, key: str) -> tuple[str, ...]:
    if isinstance(value, str) or not isinstance(value, (list, tuple)):
        raise AccessMetadataError(f"{what}: access.{key} must be a list of names, got {value!r:.80}")
    for v in value:
        if not isinstance(v, str) or not v.strip():
            raise AccessMetadataError(f"{what}: access.{key} holds {v!r:.80}; each entry must be a non-empty string")
    return tuple(sorted({v.strip() for v in value}))


def _tenant(value: object, what: str, key: str = "tenant") -> str | None:
    if value is None:
        return None
    if not isinstance(value, str) or not value.strip():
        raise AccessMetadataError(f"{what}: access.{key} must be a non-empty string, got {value!r:.80}")
    return value.strip()


@dataclass(frozen=True)
class Access:
    """Who may read one document (the rule is in the module docstring). Names are sorted and unique."""

    groups: tuple[str, ...] = ()
    users: tuple[str, ...] = ()
    tenant: str | None = None

    def __post_init__(self) -> None:
        for name in ("groups", "users"):
            object.__setattr__(self, name, tuple(sorted(set(getattr(self, name)))))

    @property
    def names_nobody(self) -> bool:
        return not (self.groups or self.users or self.tenant)

    def to_json(self) -> dict:
        out: dict[str, object] = {"groups": list(self.groups), "users": list(self.users)}
        if self.tenant is not None:
            out["tenant"] = self.tenant
        return out

    @classmethod
    def parse(cls, value: object, document: str = "document") -> "Access":
        """The ``{"groups": [...], "users": [...], "tenant": "..."}`` mapping (or an :class:`Access`).
        Anything else (an unknown key, a bare string for a list, an empty name, a mapping naming
        nobody) is an :class:`AccessMetadataError` naming ``document`` and the bad key or value."""
        if isinstance(value, Access):
            if value.names_nobody:
                raise AccessMetadataError(f"{document}: access names no group, user or tenant")
            return value
        if not isinstance(value, Mapping):
            raise AccessMetadataError(f"{document}: access must be a mapping with groups, users and/or tenant, "
                                      f"got {value!r:.80}")
        unknown = sorted(str(k) for k in value if k not in _KEYS)
        if unknown:
            raise AccessMetadataError(f"{document}: access has unknown key(s) {', '.join(unknown)} "
                                      f"(known: {', '.join(_KEYS)})")
        access = cls(_names(value.get("groups", ()), document, "groups"),
                     _names(value.get("users", ()), document, "users"),
                     _tenant(value.get("tenant"), document))
        if access.names_nobody:
            raise AccessMetadataError(f"{document}: access names no group, user or tenant; remove it to make the "
                                      "document public, or name who may read it")
        return access


NOBODY = Access()  # stored access metadata that cannot be read: fail closed


def document_access(document_id: str, metadata: Mapping[str, object] | None) -> Access | None:
    """The access of a document from its metadata's ``access`` entry (None: no access metadata);
    a bad entry is an :class:`AccessMetadataError` naming the document."""
    if not metadata or metadata.get("access") is None:
        return None
    return Access.parse(metadata["access"], f"document {document_id!r}")


def stored_access(value: object) -> Access | None:
    """Access metadata read back from an index (a chunk or document record): None when absent
    (older indexes load as public), :data:`NOBODY` when it cannot be read (fails closed)."""
    if value is None:
        return None
    try:
        return Access.parse(value)
    except AccessMetadataError:
        return NOBODY


@dataclass(frozen=True)
class Principal:
    """Who is asking: a user id, its groups and its tenant (any may be absent)."""

    user: str | None = None
    groups: tuple[str, ...] = ()
    tenant: str | None = None

    def __post_init__(self) -> None:
        if isinstance(self.groups, str):
            raise InputError(f"Principal.groups must be a sequence of group names, got {self.groups!r}")
        for name in ("user", "tenant"):
            v = getattr(self, name)
            if v is not None and (not isinstance(v, str) or not v.strip()):
                raise InputError(f"Principal.{name} must be a non-empty string or None, got {v!r}")
        for g in self.groups:
            if not isinstance(g, str) or not g.strip():
                raise InputError(f"Principal.groups holds {g!r}; each group must be a non-empty string")
        object.__setattr__(self, "groups", tuple(sorted(set(self.groups))))

    @property
    def anonymous(self) -> bool:
        return self.user is None and not self.groups and self.tenant is None

    def to_json(self) -> dict:
        return {"user": self.user, "groups": list(self.groups), "tenant": self.tenant}

    @classmethod
    def parse(cls, value: object, where: str = "principal") -> "Principal | None":
        """``{"user": ..., "groups": [...], "tenant": ...}`` (or null: anonymous) as a principal;
        anything else is an :class:`InputError` naming ``where`` and the bad key."""
        if value is None:
            return None
        if not isinstance(value, Mapping):
            raise InputError(f"{where} must be an object with user, groups and/or tenant, got {value!r:.80}")
        unknown = sorted(str(k) for k in value if k not in ("user", "groups", "tenant"))
        if unknown:
            raise InputError(f"{where} has unknown key(s) {', '.join(unknown)} (known: user, groups, tenant)")
        groups = value.get("groups") or ()
        if isinstance(groups, str) or not isinstance(groups, (list, tuple)):
            raise InputError(f"{where}.groups must be a list of group names, got {groups!r:.80}")
        try:
            return cls(value.get("user"), tuple(groups), value.get("tenant"))
        except InputError as exc:
            raise InputError(f"{where}: {exc}") from None


ANONYMOUS: Principal | None = None  # the caller nobody named: reads public documents only


def can_read(principal: Principal | None, access: Access | None, default_access: DefaultAccess = "public") -> bool:
    """Whether ``principal`` (None: anonymous) may read a document with ``access`` (None: no access
    metadata). The rule, in full, is in this module's docstring:

    - no access metadata: readable by all when ``default_access`` is ``public``, by none when ``private``;
    - access metadata: never anonymously; ``tenant`` (when set) must equal the principal's tenant, and
      when ``users`` or ``groups`` are set the principal's user must be listed or one of its groups;
    - an access naming nobody (:data:`NOBODY`) admits no one."""
    if access is None:
        return default_access == "public"
    if access.names_nobody or principal is None or principal.anonymous:
        return False
    if access.tenant is not None and principal.tenant != access.tenant:
        return False
    if access.users or access.groups:
        return (principal.user is not None and principal.user in access.users) or \
            any(g in access.groups for g in principal.groups)
    return True


@dataclass(frozen=True)
class ReaderScope:
    """What one caller may read: its principal under the configured default. The retrievers apply
    it inside each search (:class:`rag.types.SearchFilter` ``readers``), before their top-k."""

    principal: Principal | None = None
    default_access: DefaultAccess = "public"

    def allows(self, access: Access | None) -> bool:
        return can_read(self.principal, access, self.default_access)

    def label(self) -> str:
        """The scope for logs and traces, without naming any document."""
        p = self.principal
        who = "anonymous" if p is None or p.anonymous else f"user={p.user} groups={len(p.groups)} tenant={p.tenant}"
        return f"{who} default={self.default_access}"
