"""The tool registry (YAML, OpenAPI 3, Python) and tool results as schema + YAML evidence."""
from __future__ import annotations

import json

import pytest

from rag.text.tokens import make_counter
from rag.tools import (ToolError, ToolRegistry, ToolResultError, ToolSpec, compare_tokens, format_result, from_records,
                       infer_schema, load_tools)
from tests.conftest import FIXTURES
from tests.unit.tools.cloud import registry

COUNTER = make_counter("cl100k_base")
SEED_SCHEMA = {"type": "object", "required": ["services"], "properties": {"services": {
    "type": "array", "items": {"type": "object", "required": ["name", "flavor_ref"], "properties": {
        "name": {"type": "string", "description": "The name"},
        "flavor_ref": {"type": "string", "description": "서버 사양 ID"},
        "status": {"type": "string", "enum": ["active", "error"]}}}}}}


def test_seed_004_example_renders_exactly():
    out = format_result({"services": [{"name": "prod-redis", "flavor_ref": "m5.large", "status": "active"}]},
                        SEED_SCHEMA, COUNTER)
    assert out.text == ('# Schema\nservices!: array\n  name!: string\n  flavor_ref!: string // 서버 사양 ID\n'
                        '  status?: "active" | "error"\n\n# Data\nservices:\n- name: prod-redis\n'
                        '  flavor_ref: m5.large\n  status: active')
    assert out.trims == () and out.tokens == COUNTER.count(out.text)


def test_schema_lists_every_declared_field_and_infers_when_missing():
    data = {"services": [{"name": "a", "flavor_ref": "x"}]}  # status absent from this response
    text = format_result(data, SEED_SCHEMA, COUNTER).text
    assert '  status?: "active" | "error"' in text.split("# Data")[0]  # a field the API has: "?" says absent
    assert "status" not in text.split("# Data")[1]
    nested = {"type": "object", "required": ["id"], "properties": {
        "id": {"type": "integer"}, "owner": {"type": "object", "properties": {"login": {"type": "string"}}}}}
    lines = format_result({"id": 1}, nested, COUNTER).text.split("# Data")[0]
    assert "owner?: object" in lines and "login" not in lines  # an absent object is named, not expanded
    assert "  login?: string" in format_result({"id": 1, "owner": {"login": "k"}}, nested, COUNTER).text
    inferred = infer_schema([{"a": 1, "b": None}, {"a": 2, "b": "x"}])
    assert inferred["items"]["required"] == ["a"] and inferred["items"]["properties"]["b"] == {"type": "string"}
    text = format_result([{"a": 1, "b": None}, {"a": 2, "b": "x"}], None, COUNTER).text
    assert "a!: integer" in text and "b?: string" in text


def test_large_results_are_trimmed_by_rows_then_fields_and_recorded():
    data = {"alerts": [{"id": i, "message": "m" * 40, "raw": "r" * 300} for i in range(300)]}
    out = format_result(data, None, COUNTER, max_tokens=400)
    assert out.tokens <= 400
    assert out.trims[0].kind == "rows" and out.trims[0].total == 300 and 1 <= out.trims[0].kept < 300
    assert "# Trimmed\n$.alerts: kept" in out.text
    wide = format_result({"id": 1, "a": "x" * 3000, "b": "y" * 10}, {"type": "object", "required": ["id"],
                         "properties": {"id": {"type": "integer"}, "a": {"type": "string"}, "b": {"type": "string"}}},
                         COUNTER, max_tokens=100)
    assert [t.kind for t in wide.trims] == ["field"] and wide.trims[0].path == "$.a" and "yyyy" in wide.text


def test_absent_fields_are_the_first_schema_lines_trimmed():
    props = {f"field_{i:02d}": {"type": "string", "description": f"설명 {i}번 항목의 자세한 뜻과 단위"} for i in range(40)}
    schema = {"type": "object", "required": ["id"], "properties": {"id": {"type": "integer"}, **props}}
    full = format_result({"id": 7}, schema, COUNTER)
    assert "field_39?" in full.text and full.trims == ()
    out = format_result({"id": 7}, schema, COUNTER, max_tokens=60)
    assert [t.kind for t in out.trims] == ["schema"] and "field_39" not in out.text and "id!: integer" in out.text
    assert "fields absent from this response not described" in out.text and out.tokens <= 60


def test_not_json_serialisable_is_a_typed_error():
    with pytest.raises(ToolResultError, match="not JSON-serialisable"):
        format_result({"x": {1, 2}}, None, COUNTER)
    with pytest.raises(ToolResultError):
        format_result({"x": float("nan")}, None, COUNTER)


def test_token_comparison_counts_the_same_data_three_ways():
    data = [{"name": f"vm-{i}", "status": "active", "flavor": "m5.large"} for i in range(30)]
    cmp = compare_tokens(data, None, COUNTER)
    assert cmp.minified_json == COUNTER.count(json.dumps(data, ensure_ascii=False, separators=(",", ":")))
    assert cmp.pretty_json > cmp.minified_json and cmp.schema_yaml < cmp.pretty_json


def test_yaml_registry_and_bound_functions():
    reg = registry()
    assert len(reg) == 25 and [s.name for s in reg] == sorted(s.name for s in reg)
    spec = reg.get("list_buckets")
    assert spec.product == "ObjectStorage" and spec.hints and spec.parameters["required"] == ["project"]
    assert reg.function("list_buckets") is not None and reg.function("delete_vm") is None
    assert reg.get("list_redis_clusters").response["required"] == ["clusters"]
    with pytest.raises(ToolError, match="unknown tool"):
        reg.get("no_such_tool")
    with pytest.raises(ToolError, match="unknown tool 'no_such_tool'"):
        reg.bind(no_such_tool=lambda: 1)
    with pytest.raises(ToolError, match="functions bound to unknown tools"):
        ToolRegistry((ToolSpec.make("a"),), {"b": print})
    with pytest.raises(ToolError, match="duplicate"):
        ToolRegistry((ToolSpec.make("a"), ToolSpec.make("a")))
    with pytest.raises(ToolError, match="unknown keys"):
        from_records([{"name": "a", "callable": "os:system"}])
    with pytest.raises(ToolError, match="type object"):
        ToolSpec.make("a", parameters={"type": "array"})


def test_openapi_document_gives_one_tool_per_operation():
    reg = load_tools(FIXTURES / "tools" / "petstore.yaml")
    assert [s.name for s in reg] == ["pets/create", "pets/delete", "pets/get", "pets/list", "store/list-orders"]
    get = reg.get("pets/get")
    assert get.wire_name == "pets_get" and reg.get("pets_get") is get  # the model's function name maps back
    assert get.product == "pets" and get.description == "Get one pet"
    assert get.parameters["required"] == ["petId"]  # path-level $ref parameter, resolved
    create = reg.get("pets/create")
    assert create.parameters["properties"]["body"]["required"] == ["name"] and create.parameters["required"] == ["body"]
    orders = reg.get("store/list-orders")
    assert orders.product == "store" and orders.tags == ("store", "orders")
    assert "session" not in orders.parameters["properties"]  # cookies are not tool arguments
    listed = reg.get("pets/list")
    assert listed.description == "List pets Returns every pet, newest first."
    assert listed.response["type"] == "array" and reg.get("pets/delete").response is None
    # the recursive Pet.owner reference is cut, not followed forever
    assert json.dumps(get.response).count("owner") == 1


def test_bad_registry_files_name_the_file(tmp_path):
    p = tmp_path / "x.yaml"
    p.write_text("tools: 3\n", encoding="utf-8")
    with pytest.raises(ToolError, match="x.yaml"):
        load_tools(p)
    with pytest.raises(ToolError, match="not found"):
        load_tools(tmp_path / "missing.yaml")
    p.write_text("openapi: 2.0\npaths: {}\n", encoding="utf-8")
    with pytest.raises(ToolError, match="not supported"):
        load_tools(p)
