"""API keys from the environment, in two roles: ``RAG_API_KEYS`` (query) and ``RAG_ADMIN_KEYS`` (admin).

Each variable is a comma-separated list of ``name:key``; clients send ``Authorization: Bearer KEY``.
An admin key may also query. With neither variable set, authentication is off (only allowed on a
loopback host unless ``serve.allow_unauthenticated``).

What a key may read comes from ``serve.keys`` (by the key's name): a fixed principal, or a trusted
backend that signs the end user per request (:mod:`rag.serve.principals`); a key not listed there
is anonymous and reads public documents only."""
from __future__ import annotations

import hmac
import os
from dataclasses import dataclass, field
from typing import Literal, Mapping

from rag.access import Principal as Reader
from rag.config import ServeConfig
from rag.errors import ConfigError, InputError
from rag.serve.errors import ServiceError

Role = Literal["query", "admin"]
QUERY_ENV, ADMIN_ENV = "RAG_API_KEYS", "RAG_ADMIN_KEYS"
MIN_SECRET_CHARS = 32


@dataclass(frozen=True)
class KeyHolder:
    """The holder of one API key: its name, its role, and what it reads as (``reader``: a fixed
    principal; ``trusted``: it signs the end user per request with ``secret``; neither: anonymous)."""

    name: str
    role: Role
    reader: Reader | None = None
    trusted: bool = False
    secret: bytes = field(default=b"", repr=False, compare=False)


@dataclass(frozen=True)
class ApiKeys:
    keys: tuple[tuple[str, KeyHolder], ...] = ()  # (key, who)

    @property
    def enabled(self) -> bool:
        return bool(self.keys)

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None, serve: ServeConfig | None = None) -> "ApiKeys":
        """The keys of ``env`` (default: the process environment), each bound to what ``serve.keys``
        says it reads as (a trusted backend's secret is read from ``env`` too)."""
        env = os.environ if env is None else env
        out: list[tuple[str, KeyHolder]] = []
        seen: set[str] = set()
        for var, role in ((ADMIN_ENV, "admin"), (QUERY_ENV, "query")):
            for i, item in enumerate(x.strip() for x in env.get(var, "").split(",")):
                if not item:
                    continue
                name, sep, key = item.partition(":")
                if not sep or not name.strip() or not key.strip():
                    raise ConfigError(f"{var}: entry {i + 1} is not 'name:key' (comma-separated list of name:key)")
                key = key.strip()
                if len(key) < 16:
                    raise ConfigError(f"{var}: the key of {name.strip()!r} is shorter than 16 characters; "
                                      "use a long random key (e.g. `python -c 'import secrets; print(secrets.token_urlsafe(32))'`)")
                if key in seen:
                    raise ConfigError(f"{var}: the key of {name.strip()!r} is used twice; give every client its own")
                seen.add(key)
                out.append((key, KeyHolder(name.strip(), role)))  # type: ignore[arg-type]
        return cls(tuple(_bound(out, serve, env)) if serve is not None else tuple(out))

    def check(self, authorization: str | None, need: Role) -> KeyHolder | None:
        """The caller for an ``Authorization`` header value; raises 401 / 403 as a :class:`ServiceError`."""
        if not self.enabled:
            return None
        scheme, _, token = (authorization or "").partition(" ")
        token = token.strip()
        if scheme.lower() != "bearer" or not token:
            raise ServiceError("unauthorized", "missing API key: send 'Authorization: Bearer <key>'",
                               {"WWW-Authenticate": "Bearer"})
        found = None
        for key, who in self.keys:  # compare with every key, in constant time each
            if hmac.compare_digest(key.encode(), token.encode()):
                found = who
        if found is None:
            raise ServiceError("unauthorized", "unknown API key", {"WWW-Authenticate": "Bearer"})
        if need == "admin" and found.role != "admin":
            raise ServiceError("forbidden", f"the key {found.name!r} may query but not change documents; "
                                            "use a key from RAG_ADMIN_KEYS")
        return found


def _bound(keys: list[tuple[str, KeyHolder]], serve: ServeConfig,
           env: Mapping[str, str]) -> list[tuple[str, KeyHolder]]:
    """``keys`` with what ``serve.keys`` says each reads as; a name there that no key has is an error."""
    names = {who.name for _, who in keys}
    unknown = sorted(set(serve.keys) - names)
    if unknown:
        raise ConfigError(f"serve.keys names {', '.join(map(repr, unknown))}, but no key of that name is in "
                          f"{QUERY_ENV} / {ADMIN_ENV}")
    out = []
    for key, who in keys:
        spec = serve.keys.get(who.name)
        if spec is None:
            out.append((key, who))
        elif spec.trusted_backend:
            var = spec.secret_env or ""
            secret = env.get(var, "").strip()
            if len(secret) < MIN_SECRET_CHARS:
                raise ConfigError(f"serve.keys.{who.name}: the environment variable {var} must hold the signing "
                                  f"secret, at least {MIN_SECRET_CHARS} characters "
                                  "(e.g. `python -c 'import secrets; print(secrets.token_hex(32))'`)")
            out.append((key, KeyHolder(who.name, who.role, trusted=True, secret=secret.encode())))
        else:
            p = spec.principal
            assert p is not None
            try:
                reader = Reader(p.user, tuple(p.groups), p.tenant)
            except InputError as exc:
                raise ConfigError(f"serve.keys.{who.name}.principal: {exc}") from None
            out.append((key, KeyHolder(who.name, who.role, reader=None if reader.anonymous else reader)))
    return out
