"""API keys from the environment, in two roles: ``RAG_API_KEYS`` (query) and ``RAG_ADMIN_KEYS`` (admin).

Each variable is a comma-separated list of ``name:key``; clients send ``Authorization: Bearer KEY``.
An admin key may also query. With neither variable set, authentication is off (only allowed on a
loopback host unless ``serve.allow_unauthenticated``)."""
from __future__ import annotations

import hmac
import os
from dataclasses import dataclass
from typing import Literal, Mapping

from rag.errors import ConfigError
from rag.serve.errors import ServiceError

Role = Literal["query", "admin"]
QUERY_ENV, ADMIN_ENV = "RAG_API_KEYS", "RAG_ADMIN_KEYS"


@dataclass(frozen=True)
class Principal:
    name: str
    role: Role


@dataclass(frozen=True)
class ApiKeys:
    keys: tuple[tuple[str, Principal], ...] = ()  # (key, who)

    @property
    def enabled(self) -> bool:
        return bool(self.keys)

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> "ApiKeys":
        env = os.environ if env is None else env
        out: list[tuple[str, Principal]] = []
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
                out.append((key, Principal(name.strip(), role)))  # type: ignore[arg-type]
        return cls(tuple(out))

    def check(self, authorization: str | None, need: Role) -> Principal | None:
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
