"""The tool registry: what a chatbot backend can call, filled from Python, YAML or an OpenAPI 3 document.

A :class:`ToolSpec` is plain data (name, description, product, tags, the argument and response
JSON schemas, usage hints, and its effect: ``read`` or ``write``); the Python callable is bound
separately (:meth:`ToolRegistry.bind`), so a registry file never names code to import, and so is
the application's approval callback for write calls (:meth:`ToolRegistry.with_approval`)."""
from __future__ import annotations

import json
import logging
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterator, Mapping, Sequence

from rag.errors import InputError

logger = logging.getLogger(__name__)

_WIRE_NAME = re.compile(r"[^a-zA-Z0-9_-]")
_METHODS = ("get", "put", "post", "delete", "patch", "head", "options", "trace")
_READ_METHODS = frozenset({"get", "head", "options"})  # the HTTP methods that change nothing (RFC 9110 "safe")
EFFECTS = ("read", "write")
PRINCIPAL_PARAMETER = "principal"  # a bound function with a parameter of this name gets the caller


class ToolError(InputError):
    """A tool definition or registry is invalid (unknown tool, bad schema, duplicate name...)."""


def _frozen_json(value: Any, what: str) -> str:
    try:
        return json.dumps(value, ensure_ascii=False, sort_keys=True)
    except (TypeError, ValueError) as exc:
        raise ToolError(f"{what} is not JSON ({exc})") from None


@dataclass(frozen=True)
class ToolSpec:
    """One tool. ``parameters`` and ``response_schema`` are JSON Schema objects, kept as JSON text so
    the spec stays hashable and frozen (read them with :attr:`parameters` / :attr:`response`)."""

    name: str
    description: str = ""
    product: str = ""
    tags: tuple[str, ...] = ()
    parameters_json: str = '{"properties": {}, "type": "object"}'
    response_json: str = ""  # "" = no response schema (it is inferred from the data)
    hints: tuple[str, ...] = ()  # usage hints, sent right before the tool's first call
    # "read": it only fetches; "write": it changes something (offered only with tools.allow_write and
    # run only when the approval callback agrees); "": not declared (tools.undeclared_effect decides).
    effect: str = ""

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not self.name.strip():
            raise ToolError("a tool needs a non-empty name")
        if self.effect not in ("", *EFFECTS):
            raise ToolError(f"tool {self.name!r}: effect must be 'read' or 'write', got {self.effect!r}")
        params = json.loads(self.parameters_json)
        if not isinstance(params, dict) or params.get("type", "object") != "object":
            raise ToolError(f"tool {self.name!r}: parameters must be a JSON Schema of type object")
        object.__setattr__(self, "tags", tuple(str(t) for t in self.tags))
        object.__setattr__(self, "hints", tuple(str(h) for h in self.hints))

    @classmethod
    def make(cls, name: str, description: str = "", *, product: str = "", tags: Sequence[str] = (),
             parameters: Mapping[str, Any] | None = None, response_schema: Mapping[str, Any] | None = None,
             hints: Sequence[str] = (), effect: str = "") -> "ToolSpec":
        params = dict(parameters) if parameters else {"type": "object", "properties": {}}
        params.setdefault("type", "object")
        return cls(name, description, product, tuple(tags), _frozen_json(params, f"tool {name!r} parameters"),
                   _frozen_json(dict(response_schema), f"tool {name!r} response_schema") if response_schema else "",
                   tuple(hints), effect)

    def writes(self, undeclared: str = "write") -> bool:
        """Whether the tool changes something; a tool that declares no effect counts as ``undeclared``."""
        return (self.effect or undeclared) == "write"

    @property
    def parameters(self) -> dict:
        return json.loads(self.parameters_json)

    @property
    def response(self) -> dict | None:
        return json.loads(self.response_json) if self.response_json else None

    @property
    def wire_name(self) -> str:
        """The function name sent to the model (``^[a-zA-Z0-9_-]{1,64}$``): ``/`` and other characters
        become ``_``; a longer name keeps 55 characters and a hash of the whole name."""
        wire = _WIRE_NAME.sub("_", self.name)
        if len(wire) <= 64:
            return wire
        import hashlib

        return f"{wire[:55]}_{hashlib.sha256(self.name.encode()).hexdigest()[:8]}"

    def definition(self) -> dict:
        """The OpenAI ``tools`` entry (a dict only at the API boundary)."""
        return {"type": "function", "function": {"name": self.wire_name, "description": self.description[:1024],
                                                  "parameters": self.parameters}}


ToolFunction = Callable[..., Any]  # called with the arguments as keywords; sync or async


@dataclass(frozen=True)
class WriteRequest:
    """A write call the model asks for, as the approval callback sees it: the tool, the arguments
    (JSON text, already checked against the tool's schema) and who the request is for."""

    call_id: str
    tool: str
    description: str
    arguments: str
    principal: Any = None  # rag.access.Principal | None (the end user the request answers)


# Decides one write call: True runs it; False, an exception or a timeout refuses it. Sync or async.
Approver = Callable[[WriteRequest], Any]


def accepts_principal(fn: ToolFunction) -> bool:
    """Whether ``fn`` declares a parameter named ``principal`` (it then gets the caller's principal)."""
    import inspect

    try:
        params = inspect.signature(fn).parameters
    except (TypeError, ValueError):
        return False
    p = params.get(PRINCIPAL_PARAMETER)
    return p is not None and p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)


@dataclass(frozen=True)
class ToolRegistry:
    """Tools by name, in name order, with the callables bound to them."""

    specs: tuple[ToolSpec, ...] = ()
    functions: Mapping[str, ToolFunction] = field(default_factory=dict)
    approver: Approver | None = field(default=None, compare=False)  # decides each write call; None: none runs

    def __post_init__(self) -> None:
        specs = tuple(sorted(self.specs, key=lambda s: s.name))
        names = [s.name for s in specs]
        dup = sorted({n for n in names if names.count(n) > 1})
        if dup:
            raise ToolError(f"duplicate tool names: {', '.join(dup)}")
        wires: dict[str, str] = {}
        for s in specs:
            if s.wire_name in wires:
                raise ToolError(f"tools {wires[s.wire_name]!r} and {s.name!r} map to the same function name "
                                f"{s.wire_name!r}; rename one")
            wires[s.wire_name] = s.name
        unknown = sorted(set(self.functions) - set(names))
        if unknown:
            raise ToolError(f"functions bound to unknown tools: {', '.join(unknown)}")
        by_name = {s.name: s for s in specs}
        for name, fn in sorted(self.functions.items()):
            if PRINCIPAL_PARAMETER in (by_name[name].parameters.get("properties") or {}) and accepts_principal(fn):
                raise ToolError(f"tool {name!r}: its arguments declare {PRINCIPAL_PARAMETER!r}, which the server "
                                "passes to the bound function itself (the caller); rename the argument")
        if self.approver is not None and not callable(self.approver):
            raise ToolError("the approval callback is not callable")
        object.__setattr__(self, "specs", specs)
        object.__setattr__(self, "functions", dict(self.functions))
        object.__setattr__(self, "_by_name", {s.name: s for s in specs})
        object.__setattr__(self, "_by_wire", {s.wire_name: s for s in specs})

    def __len__(self) -> int:
        return len(self.specs)

    def __iter__(self) -> Iterator[ToolSpec]:
        return iter(self.specs)

    def __contains__(self, name: str) -> bool:
        return name in self._by_name

    def get(self, name: str) -> ToolSpec:
        """The tool called ``name`` (its registry name or its wire name)."""
        spec = self._by_name.get(name) or self._by_wire.get(name)
        if spec is None:
            raise ToolError(f"unknown tool {name!r}")
        return spec

    def function(self, name: str) -> ToolFunction | None:
        return self.functions.get(self.get(name).name)

    def bind(self, **functions: ToolFunction) -> "ToolRegistry":
        """A copy with callables bound by tool name: ``registry.bind(get_cluster=fn)``. For names that
        are not identifiers use :meth:`bind_map`."""
        return self.bind_map(functions)

    def bind_map(self, functions: Mapping[str, ToolFunction]) -> "ToolRegistry":
        for name, fn in functions.items():
            if not callable(fn):
                raise ToolError(f"the function bound to {name!r} is not callable")
        return ToolRegistry(self.specs, {**self.functions, **{self.get(n).name: f for n, f in functions.items()}},
                            self.approver)

    def with_tools(self, *specs: ToolSpec) -> "ToolRegistry":
        return ToolRegistry((*self.specs, *specs), self.functions, self.approver)

    def with_approval(self, approver: Approver | None) -> "ToolRegistry":
        """A copy whose write calls are each decided by ``approver`` (human in the loop); ``None``: none
        runs. Tools are indexed once per catalogue, so a copy per request costs nothing."""
        return ToolRegistry(self.specs, self.functions, approver)

    def undeclared(self) -> tuple[str, ...]:
        """The tools that declare no effect."""
        return tuple(s.name for s in self.specs if not s.effect)


# --------------------------------------------------------------------------- loading
def load_tools(path: str | Path, functions: Mapping[str, ToolFunction] | None = None) -> ToolRegistry:
    """A registry from a YAML/JSON file: a registry file (``tools: [...]``) or an OpenAPI 3 document
    (``openapi: 3.x`` with ``paths``)."""
    from rag.config import read_yaml

    p = Path(path)
    data = read_yaml(p, ToolError, "tools file")
    if isinstance(data, dict) and "openapi" in data and "paths" in data:
        reg = from_openapi(data, source=str(p))
    elif isinstance(data, dict) and isinstance(data.get("tools"), list):
        reg = from_records(data["tools"], source=str(p))
    else:
        raise ToolError(f"{p}: neither a tools file (a mapping with a 'tools' list) nor an OpenAPI 3 document "
                        "('openapi' and 'paths')")
    return reg.bind_map(functions) if functions else reg


_RECORD_KEYS = {"name", "description", "product", "tags", "parameters", "response_schema", "hints", "effect"}


def from_records(records: Sequence[Any], source: str = "<tools>") -> ToolRegistry:
    specs = []
    for i, r in enumerate(records):
        where = f"{source}: tools[{i}]"
        if not isinstance(r, dict):
            raise ToolError(f"{where}: must be a mapping")
        extra = sorted(set(r) - _RECORD_KEYS)
        if extra:
            raise ToolError(f"{where}: unknown keys {extra} (valid: {sorted(_RECORD_KEYS)})")
        if not isinstance(r.get("name"), str):
            raise ToolError(f"{where}: missing 'name'")
        for key in ("parameters", "response_schema"):
            if r.get(key) is not None and not isinstance(r[key], dict):
                raise ToolError(f"{where} ({r['name']}): '{key}' must be a JSON Schema mapping")
        hints = r.get("hints") or ()
        effect = r.get("effect") or ""
        if effect not in ("", *EFFECTS):
            raise ToolError(f"{where} ({r['name']}): 'effect' must be read or write, got {effect!r}")
        specs.append(ToolSpec.make(r["name"], str(r.get("description") or ""), product=str(r.get("product") or ""),
                                   tags=tuple(r.get("tags") or ()), parameters=r.get("parameters"),
                                   response_schema=r.get("response_schema"),
                                   hints=(hints,) if isinstance(hints, str) else tuple(hints), effect=effect))
    return ToolRegistry(tuple(specs))


def from_openapi(doc: Mapping[str, Any], source: str = "<openapi>") -> ToolRegistry:
    """One tool per operation: name = ``operationId``, description = summary + description, product =
    the first tag, parameters = path/query/header parameters plus the JSON request body as ``body``,
    response schema = the first 2xx ``application/json`` response, effect = ``read`` for GET, HEAD
    and OPTIONS, else ``write`` (an operation's ``x-rag-effect`` overrides: a search by POST is a
    read). Local ``$ref``s are resolved."""
    version = str(doc.get("openapi", ""))
    if not version.startswith("3"):
        raise ToolError(f"{source}: OpenAPI {version or '?'} is not supported; convert it to OpenAPI 3")
    resolve = _Resolver(doc)
    specs = []
    skipped = 0
    for path in sorted(doc.get("paths") or {}):
        item = resolve(doc["paths"][path]) or {}
        shared = item.get("parameters") or []
        for method in _METHODS:
            op = item.get(method)
            if not isinstance(op, dict):
                continue
            op_id = op.get("operationId")
            if not op_id:
                skipped += 1
                continue
            desc = " ".join(x.strip() for x in (op.get("summary") or "", op.get("description") or "") if x and x.strip())
            tags = tuple(op.get("tags") or ())
            effect = op.get("x-rag-effect") or ("read" if method in _READ_METHODS else "write")
            if effect not in EFFECTS:
                raise ToolError(f"{source}: {method.upper()} {path} ({op_id}): x-rag-effect must be read or write, "
                                f"got {effect!r}")
            specs.append(ToolSpec.make(
                op_id, desc, product=tags[0] if tags else "", tags=tags,
                parameters=_op_parameters(resolve, [*shared, *(op.get("parameters") or [])], op.get("requestBody")),
                response_schema=_op_response(resolve, op.get("responses") or {}), effect=effect))
    if skipped:
        logger.warning("%s: %d operations without an operationId were skipped", source, skipped)
    if not specs:
        raise ToolError(f"{source}: no operation with an operationId")
    return ToolRegistry(tuple(specs))


class _Resolver:
    """Inline local ``#/...`` references, cutting cycles and depth at ``max_depth``."""

    def __init__(self, doc: Mapping[str, Any], max_depth: int = 6) -> None:
        self.doc = doc
        self.max_depth = max_depth

    def _target(self, ref: str) -> Any:
        if not ref.startswith("#/"):
            return {}
        node: Any = self.doc
        for part in ref[2:].split("/"):
            part = part.replace("~1", "/").replace("~0", "~")
            if not isinstance(node, Mapping) or part not in node:
                return {}
            node = node[part]
        return node

    def __call__(self, node: Any, depth: int = 0, seen: tuple[str, ...] = ()) -> Any:
        if isinstance(node, Mapping):
            ref = node.get("$ref")
            if isinstance(ref, str):
                if ref in seen or depth >= self.max_depth:
                    return {"type": "object"}
                return self(self._target(ref), depth + 1, (*seen, ref))
            return {k: self(v, depth + (k in ("properties", "items")), seen) for k, v in node.items()
                    if k not in ("example", "examples", "externalDocs", "xml")}
        if isinstance(node, list):
            return [self(v, depth, seen) for v in node]
        return node


def _op_parameters(resolve: _Resolver, params: Sequence[Any], body: Any) -> dict:
    props: dict[str, Any] = {}
    required: list[str] = []
    for p in params:
        p = resolve(p)
        if not isinstance(p, dict) or not p.get("name") or p.get("in") == "cookie":
            continue
        schema = dict(p.get("schema") or {"type": "string"})
        if p.get("description") and "description" not in schema:
            schema["description"] = str(p["description"])[:300]
        props[p["name"]] = schema
        if p.get("required") or p.get("in") == "path":
            required.append(p["name"])
    body = resolve(body) if body else None
    if isinstance(body, dict):
        schema = ((body.get("content") or {}).get("application/json") or {}).get("schema")
        if schema:
            props["body"] = schema
            if body.get("required"):
                required.append("body")
    out: dict[str, Any] = {"type": "object", "properties": props}
    if required:
        out["required"] = sorted(set(required))
    return out


def _op_response(resolve: _Resolver, responses: Mapping[str, Any]) -> dict | None:
    for code in sorted(str(c) for c in responses):
        if not code.startswith("2"):
            continue
        r = resolve(responses.get(code) if code in responses else responses.get(int(code)))
        schema = (((r or {}).get("content") or {}).get("application/json") or {}).get("schema")
        if schema:
            return schema
    return None


__all__ = ["Approver", "EFFECTS", "ToolError", "ToolFunction", "ToolRegistry", "ToolSpec", "WriteRequest",
           "accepts_principal", "from_openapi", "from_records", "load_tools"]
