"""Response examples and schemas for the formatting measurement, taken from the fetched catalogue.

For each operation below: the first 2xx ``application/json`` response's first example (local
``$ref``s followed) and its schema with local ``$ref``s inlined (nesting cut at 6). Written to
``.rag/data/tools/responses/<op with / as __>.json`` and ``….schema.json`` (indent 2, UTF-8).
Run by scripts/fetch_tool_catalogue.sh; data derived from the MIT-licensed catalogue stays out of git.

    python scripts/extract_tool_responses.py [CATALOGUE] [OUT_DIR]
"""
from __future__ import annotations

import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
MAX_DEPTH = 6
MAX_BYTES = 200 * 1024
OPERATIONS = (  # lists, wrapper objects holding a list, single large or nested objects
    "issues/list-for-repo", "pulls/list", "dependabot/list-alerts-for-repo", "code-scanning/list-alerts-for-repo",
    "secret-scanning/list-locations-for-alert", "secret-scanning/list-alerts-for-repo", "repos/list-commits",
    "repos/get-top-paths", "licenses/get-all-commonly-used",
    "actions/list-workflow-runs-for-repo", "actions/list-self-hosted-runners-for-org", "copilot/list-copilot-seats",
    "checks/list-for-ref", "search/repos", "repos/get-views", "projects/list-items-for-org",
    "codespaces/list-for-authenticated-user",
    "repos/get", "pulls/get", "repos/compare-commits-with-basehead", "repos/get-latest-release",
    "users/get-by-username", "rate-limit/get", "meta/get",
)


def follow(doc: dict, node):
    """``node`` with its local ``$ref`` chain followed."""
    while isinstance(node, dict) and "$ref" in node:
        target = doc
        for part in node["$ref"].lstrip("#/").split("/"):
            target = target[part.replace("~1", "/").replace("~0", "~")]
        node = target
    return node


def inline(doc: dict, node, depth: int = 0):
    """``node`` with every local ``$ref`` replaced by its target, at most ``MAX_DEPTH`` refs deep."""
    if isinstance(node, dict):
        if "$ref" in node:
            if depth >= MAX_DEPTH:
                target = follow(doc, node)
                cut = {"x-truncated-ref": node["$ref"]}
                cut.update({k: target[k] for k in ("type", "title") if isinstance(target, dict) and k in target})
                return cut
            return inline(doc, follow(doc, node), depth + 1)
        return {k: inline(doc, v, depth) for k, v in node.items()}
    if isinstance(node, list):
        return [inline(doc, v, depth) for v in node]
    return node


def example_and_schema(doc: dict, operation: dict) -> tuple[object, object]:
    for code in sorted(operation.get("responses", {})):
        if not code.startswith("2"):
            continue
        content = follow(doc, operation["responses"][code]).get("content", {}).get("application/json")
        if not content:
            continue
        if content.get("examples"):
            value = follow(doc, next(iter(content["examples"].values())))["value"]
        elif "example" in content:
            value = content["example"]
        else:
            continue
        return value, inline(doc, content.get("schema", {}))
    raise SystemExit(f"no 2xx application/json example for {operation.get('operationId')}")


def main() -> int:
    catalogue = Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT / ".rag/data/tools/catalogue.json"
    out = Path(sys.argv[2]) if len(sys.argv) > 2 else ROOT / ".rag/data/tools/responses"
    doc = json.loads(catalogue.read_text(encoding="utf-8"))
    by_id = {op["operationId"]: op for item in doc["paths"].values()
             for method, op in item.items() if method in ("get", "put", "post", "delete", "patch")}
    out.mkdir(parents=True, exist_ok=True)
    for op_id in OPERATIONS:
        value, schema = example_and_schema(doc, by_id[op_id])
        stem = op_id.replace("/", "__")
        for name, obj in ((f"{stem}.json", value), (f"{stem}.schema.json", schema)):
            text = json.dumps(obj, indent=2, ensure_ascii=False) + "\n"
            if len(text.encode()) > MAX_BYTES:
                raise SystemExit(f"{name} is {len(text.encode())} bytes, over {MAX_BYTES}")
            (out / name).write_text(text, encoding="utf-8")
    print(f"{len(OPERATIONS)} responses and schemas -> {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
