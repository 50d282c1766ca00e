"""The base of every config section (frozen, ``extra="forbid"``, errors that name the dotted path) and
:func:`digest`, the short stable hash of config values."""
from __future__ import annotations

import hashlib
import json
from typing import Any, ClassVar

from pydantic import BaseModel, ConfigDict, ValidationError

from rag.errors import ConfigValueError

__all__ = ["Section", "digest", "format_errors"]


class Section(BaseModel):
    """A config section: frozen, an unknown key is an error; ``section`` is its dotted path in the tree."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    section: ClassVar[str] = ""  # dotted path of the section in the config tree

    def __init__(self, **data: Any) -> None:
        """Built directly in Python, a section reports bad values as a ConfigError too
        (validation through :class:`RagConfig` does not pass through here)."""
        try:
            super().__init__(**data)
        except ValidationError as exc:
            raise ConfigValueError(format_errors(exc, f"{type(self).__name__}(...)", self.section)) from None

    @classmethod
    def default(cls, name: str) -> Any:
        """The declared default of one key (for functions where ``None`` means "the config's default")."""
        return cls.model_fields[name].default


def digest(obj: object) -> str:
    """Short stable hash of a JSON-like value (sorted keys; other values by ``str``): config
    hashes, cache keys, run identities."""
    return hashlib.sha256(json.dumps(obj, sort_keys=True, ensure_ascii=False, default=str).encode()).hexdigest()[:16]


_BOUNDS = {"greater_than": ">", "greater_than_equal": ">=", "less_than": "<", "less_than_equal": "<="}


def format_errors(err: ValidationError, source: str, prefix: str = "") -> str:
    """``err`` as one message: each bad key by its dotted path (``prefix`` first), what it must be, and
    the value given."""
    lines = [f"invalid configuration in {source}:"]
    for e in err.errors():
        loc = ".".join([prefix] * bool(prefix) + [str(x) for x in e["loc"]]) or "<root>"
        msg = e["msg"]
        if e["type"] == "extra_forbidden":
            msg = "unknown key (check spelling; see configs/default.yaml for the valid keys)"
        elif e["type"] in _BOUNDS:
            bound = next(iter(e.get("ctx", {}).values()), "?")
            msg = f"must be {_BOUNDS[e['type']]} {bound:g}" if isinstance(bound, float) else f"must be {_BOUNDS[e['type']]} {bound}"
        elif msg.startswith("Value error, "):
            msg = msg[len("Value error, "):]
        got = e.get("input")
        shown = "" if e["type"] == "missing" or isinstance(got, dict) else f", got {got!r}"
        lines.append(f"  {loc}: {msg.lower() if msg[:1].isupper() and not msg[:2].isupper() else msg}{shown}")
    return "\n".join(lines)
