"""Tool results as evidence text: a compact schema (seed 004's ``!`` required / ``?`` optional
notation, ``//`` comments only where a name does not explain itself) followed by the data as YAML,
trimmed by rows and then by fields to a token cap, with every trim recorded."""
from __future__ import annotations

import copy
import json
import re
from dataclasses import dataclass
from typing import Any, Mapping

from rag.errors import InputError
from rag.text.tokens import TokenCounter

SELF_EXPLANATORY = frozenset(
    "id name title url uri html_url email login type description created_at updated_at deleted_at closed_at "
    "count total total_count size state body text label labels key value date time timestamp".split())
MAX_DEPTH = 6


class ToolResultError(InputError):
    """A tool result cannot be used as evidence (not JSON-serialisable...)."""


def to_json_value(value: Any) -> Any:
    """``value`` as plain JSON data (dicts, lists, str, numbers, bool, None) or :class:`ToolResultError`."""
    try:
        return json.loads(json.dumps(value, ensure_ascii=False, allow_nan=False))
    except (TypeError, ValueError) as exc:
        raise ToolResultError(f"the result is not JSON-serialisable ({exc})") from None


# --------------------------------------------------------------------------- schema
def name_words(name: str) -> list[str]:
    """The words of an identifier: ``list_redis-clusters``, ``repos/get`` and ``flavorRef`` split at
    ``_ - / .``, spaces and lower-to-upper case changes."""
    return [w for w in re.split(r"[_\-\s./]+|(?<=[a-z])(?=[A-Z])", name) if w]


def needs_comment(name: str, description: str) -> bool:
    """A ``// description`` only where the field name does not already say it."""
    if not description.strip() or name.lower() in SELF_EXPLANATORY:
        return False
    desc = description.lower()
    words = [w.lower() for w in name_words(name)]
    return not (words and all(w in desc for w in words) and len(desc.split()) <= 6)


def _type_text(schema: Mapping[str, Any]) -> str:
    if "enum" in schema and schema["enum"]:
        return " | ".join(json.dumps(v, ensure_ascii=False) for v in schema["enum"][:12])
    t = schema.get("type")
    if isinstance(t, list):
        types = [x for x in t if x != "null"]
        text = " | ".join(types) or "null"
        return text + (" | null" if "null" in t else "")
    if t is None:
        for key in ("oneOf", "anyOf"):
            if schema.get(key):
                return " | ".join(sorted({_type_text(s) for s in schema[key] if isinstance(s, Mapping)}))
        t = "object" if "properties" in schema else "any"
    if t == "array":
        items = schema.get("items") or {}
        if isinstance(items, Mapping) and (items.get("type") == "object" or "properties" in items):
            t = "array"
        else:
            t = f"array<{_type_text(items) if isinstance(items, Mapping) else 'any'}>"
    return t + (" | null" if schema.get("nullable") else "")


def _object_props(schema: Mapping[str, Any]) -> tuple[dict, set]:
    if schema.get("type") == "array" or ("items" in schema and "properties" not in schema):
        schema = schema.get("items") or {}
    props: dict = {}
    required: set = set()
    for part in [schema, *(schema.get("allOf") or [])]:
        if isinstance(part, Mapping):
            props.update(part.get("properties") or {})
            required.update(part.get("required") or [])
    return props, required


def render_schema(schema: Mapping[str, Any], data: Any = None, indent: int = 0, absent: bool = True) -> list[str]:
    """Lines of the schema: every field the API declares, so ``!``/``?`` tell a field missing from
    this response from one that does not exist. A nested object is expanded only where ``data`` has
    it. ``absent=False``: only the fields that occur in ``data`` (the trim of last resort)."""
    if indent // 2 >= MAX_DEPTH:
        return []
    props, required = _object_props(schema)
    present = _keys(data)
    lines = []
    for name, sub in props.items():
        if not isinstance(sub, Mapping):
            continue
        here = present is None or name in present
        if not here and not absent:
            continue
        mark = "!" if name in required else "?"
        line = f"{' ' * indent}{name}{mark}: {_type_text(sub)}"
        desc = str(sub.get("description") or "").strip().split("\n")[0]
        if needs_comment(name, desc):
            line += f" // {desc[:80]}"
        lines.append(line)
        child = _child(data, name)
        if _object_props(sub)[0] and (data is None or child not in (None, [])):
            lines.extend(render_schema(sub, child, indent + 2, absent))
    return lines


def _keys(data: Any) -> set | None:
    if isinstance(data, dict):
        return set(data)
    if isinstance(data, list):
        out: set = set()
        for row in data:
            if isinstance(row, dict):
                out |= set(row)
        return out
    return None


def _child(data: Any, name: str) -> Any:
    if isinstance(data, dict):
        return data.get(name)
    if isinstance(data, list):
        vals = [row.get(name) for row in data if isinstance(row, dict) and row.get(name) is not None]
        flat: list = []
        for v in vals:
            flat.extend(v if isinstance(v, list) else [v])
        return flat
    return None


def infer_schema(data: Any) -> dict:
    """A schema from the data itself: a field is required when every row has it, not null."""
    if isinstance(data, dict):
        return {"type": "object", "properties": {k: infer_schema(v) for k, v in data.items()},
                "required": [k for k, v in data.items() if v is not None]}
    if isinstance(data, list):
        rows = [r for r in data if isinstance(r, dict)]
        if rows and len(rows) == len(data):
            keys: dict[str, None] = {}
            for r in rows:
                keys.update(dict.fromkeys(r))
            props = {k: infer_schema(next((r[k] for r in rows if r.get(k) is not None), None)) for k in keys}
            req = [k for k in keys if all(r.get(k) is not None for r in rows)]
            return {"type": "array", "items": {"type": "object", "properties": props, "required": req}}
        return {"type": "array", "items": infer_schema(data[0]) if data else {}}
    t = {bool: "boolean", int: "integer", float: "number", str: "string"}.get(type(data))
    return {"type": t} if t else {}


# --------------------------------------------------------------------------- data
def render_data(data: Any) -> str:
    import yaml

    return yaml.safe_dump(data, allow_unicode=True, sort_keys=False, default_flow_style=False, width=10_000).rstrip()


@dataclass(frozen=True)
class Trim:
    """One trim of a result: rows of an array, or a field, left out to fit the token cap."""

    path: str
    kind: str  # "rows" | "schema" | "field" | "cut"
    kept: int = 0
    total: int = 0

    def text(self) -> str:
        if self.kind == "rows":
            return f"{self.path}: kept {self.kept} of {self.total} rows"
        if self.kind == "field":
            return f"{self.path}: field left out"
        if self.kind == "schema":
            return "schema: fields absent from this response not described"
        return f"data cut at {self.kept} tokens"


@dataclass(frozen=True)
class FormattedResult:
    text: str  # "# Schema\n...\n\n# Data\n..." (plus "# Trimmed" when trimmed)
    tokens: int
    trims: tuple[Trim, ...] = ()


def format_result(data: Any, schema: Mapping[str, Any] | None, counter: TokenCounter,
                  max_tokens: int | None = None) -> FormattedResult:
    """The evidence text of a tool result, at most ``max_tokens`` tokens (trimmed and recorded)."""
    data = to_json_value(data)
    schema = schema or infer_schema(data)
    text = _render(data, schema, ())
    tokens = counter.count(text)
    trims: list[Trim] = []
    if max_tokens is None or tokens <= max_tokens:
        return FormattedResult(text, tokens, ())
    work = copy.deepcopy(data)
    absent = True
    while tokens > max_tokens:  # halve the largest array first
        path, arr = _largest_array(work)
        if arr is None or len(arr) <= 1:
            break
        total = _original_len(trims, path, len(arr))
        del arr[max(1, len(arr) // 2):]
        trims = [t for t in trims if t.path != path] + [Trim(path, "rows", len(arr), total)]
        text = _render(work, schema, trims)
        tokens = counter.count(text)
    if tokens > max_tokens and render_schema(schema, work) != render_schema(schema, work, absent=False):
        absent = False  # then describe only the fields this response has
        trims.append(Trim("$", "schema"))
        text = _render(work, schema, trims, absent)
        tokens = counter.count(text)
    while tokens > max_tokens:  # then leave out the biggest optional fields
        field_path = _biggest_field(work, schema)
        if field_path is None:
            break
        trims.append(Trim(field_path, "field"))
        text = _render(work, schema, trims, absent)
        tokens = counter.count(text)
    if tokens > max_tokens:  # last resort: cut the text
        trims.append(Trim("", "cut", max_tokens))
        text = cut_to_tokens(_render(work, schema, trims, absent), counter, max_tokens)
        tokens = counter.count(text)
    return FormattedResult(text, tokens, tuple(trims))


def _render(data: Any, schema: Mapping[str, Any], trims, absent: bool = True) -> str:
    lines = render_schema(schema, data, absent=absent)
    if not lines:
        lines = [_type_text(schema) if schema else "any"]
    out = "# Schema\n" + "\n".join(lines) + "\n\n# Data\n" + render_data(data)
    if trims:
        out += "\n\n# Trimmed\n" + "\n".join(t.text() for t in trims)
    return out


def _original_len(trims, path: str, now: int) -> int:
    return next((t.total for t in trims if t.path == path and t.kind == "rows"), now)


def _largest_array(data: Any, path: str = "$") -> tuple[str, list | None]:
    best: tuple[int, str, list | None] = (-1, path, None)
    stack = [(path, data)]
    while stack:
        p, node = stack.pop()
        if isinstance(node, list):
            size = len(json.dumps(node, ensure_ascii=False))
            if len(node) > 1 and size > best[0]:
                best = (size, p, node)
            stack.extend((f"{p}[{i}]", v) for i, v in enumerate(node[:1]))
        elif isinstance(node, dict):
            stack.extend((f"{p}.{k}", v) for k, v in node.items())
    return best[1], best[2]


def _biggest_field(data: Any, schema: Mapping[str, Any]) -> str | None:
    """Remove (in place) the field whose values take the most room, from the rows of the largest
    list of objects (or the top-level object); optional fields first. Return its path."""
    path, rows, row_schema = _row_set(data, schema)
    if not rows:
        return None
    _, required = _object_props(row_schema)
    sizes: dict[str, int] = {}
    for r in rows:
        for k, v in r.items():
            sizes[k] = sizes.get(k, 0) + len(json.dumps(v, ensure_ascii=False))
    # Optional fields first; required ones only when nothing else is left (the trim note says so).
    optional = [k for k in sizes if k not in required] or ([k for k in sizes] if len(sizes) > 1 else [])
    if not optional:
        return None
    k = max(optional, key=lambda x: (sizes[x], x))
    for r in rows:
        r.pop(k, None)
    return f"{path}.{k}"


def _row_set(data: Any, schema: Mapping[str, Any]) -> tuple[str, list, Mapping[str, Any]]:
    """(path, rows, their schema): the largest list of objects one level down, else the data itself."""
    if isinstance(data, list):
        return "$[*]", [r for r in data if isinstance(r, dict)], schema
    if not isinstance(data, dict):
        return "$", [], schema
    props, _ = _object_props(schema)
    lists = [(len(json.dumps(v, ensure_ascii=False)), k) for k, v in data.items()
             if isinstance(v, list) and v and all(isinstance(r, dict) for r in v)]
    if lists:
        _, k = max(lists)
        others = len(json.dumps({x: y for x, y in data.items() if x != k}, ensure_ascii=False))
        if others < max(lists)[0]:  # the rows hold most of the result: trim inside them
            sub = props.get(k) or {}
            return f"$.{k}[*]", data[k], sub if isinstance(sub, Mapping) else {}
    return "$", [data], schema


def cut_to_tokens(text: str, counter: TokenCounter, max_tokens: int) -> str:
    """The longest prefix of ``text`` that counts at most ``max_tokens``."""
    lo, hi = 0, len(text)
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if counter.count(text[:mid]) <= max_tokens:
            lo = mid
        else:
            hi = mid - 1
    return text[:lo]


@dataclass(frozen=True)
class TokenComparison:
    schema_yaml: int  # the evidence text: "# Schema" + "# Data" (YAML)
    yaml_data: int  # the YAML data alone
    minified_json: int
    pretty_json: int

    def to_json(self) -> dict:
        return {"schema_yaml": self.schema_yaml, "yaml_data": self.yaml_data, "minified_json": self.minified_json,
                "pretty_json": self.pretty_json}


def compare_tokens(data: Any, schema: Mapping[str, Any] | None, counter: TokenCounter) -> TokenComparison:
    """Tokens of the same result as schema + YAML (untrimmed), YAML alone, minified JSON and pretty JSON."""
    data = to_json_value(data)
    return TokenComparison(counter.count(format_result(data, schema, counter).text), counter.count(render_data(data)),
                           counter.count(json.dumps(data, ensure_ascii=False, separators=(",", ":"))),
                           counter.count(json.dumps(data, ensure_ascii=False, indent=2)))
