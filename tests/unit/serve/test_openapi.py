"""/openapi.json declares the request body of every JSON endpoint, with its model under components/schemas."""
from __future__ import annotations

import pytest

from rag.config import load_config
from rag.serve import create_app
from rag.serve.schemas import AnswerRequest, ChatRequest, ContextRequest, DocumentIn, DocumentsRequest, SearchRequest
from tests.conftest import write_config

BODIES = {  # path -> the model of its JSON body
    "/v1/answer": AnswerRequest,
    "/v1/search": SearchRequest,
    "/v1/context": ContextRequest,
    "/v1/chat/completions": ChatRequest,
    "/v1/documents": DocumentsRequest,
}


@pytest.fixture(scope="module")
def openapi(tmp_path_factory) -> dict:
    from fastapi.testclient import TestClient

    app = create_app(load_config(write_config(tmp_path_factory.mktemp("openapi"))))
    r = TestClient(app).get("/openapi.json")  # no lifespan: nothing loads, the document does not need it
    assert r.status_code == 200, r.text
    return r.json()


def _refs(node) -> set[str]:
    if isinstance(node, dict):
        return ({node["$ref"]} if isinstance(node.get("$ref"), str) else set()) | {
            x for v in node.values() for x in _refs(v)}
    if isinstance(node, list):
        return {x for v in node for x in _refs(v)}
    return set()


def test_every_json_post_endpoint_declares_its_request_body(openapi):
    schemas = openapi["components"]["schemas"]
    for path, model in BODIES.items():
        body = openapi["paths"][path]["post"].get("requestBody")
        assert body is not None, f"POST {path} declares no request body"
        assert body["required"] is True
        assert body["content"]["application/json"]["schema"] == {"$ref": f"#/components/schemas/{model.__name__}"}
        assert model.__name__ in schemas
        assert set(schemas[model.__name__]["properties"]) == set(model.model_fields)
    # A new POST / PUT / PATCH route without a declared body fails here.
    writes = {path for path, ops in openapi["paths"].items() for method in ops if method in ("post", "put", "patch")}
    assert writes == set(BODIES)


def test_models_and_the_models_they_use_are_components(openapi):
    schemas = openapi["components"]["schemas"]
    assert {"AnswerRequest", "SearchRequest", "ContextRequest", "ChatRequest", "DocumentsRequest", "DocumentIn",
            "Filters", "Options", "HistoryTurn", "ChatMessage"} <= set(schemas)
    assert schemas["AnswerRequest"]["required"] == ["question"]
    assert schemas["AnswerRequest"]["additionalProperties"] is False  # unknown keys are refused
    dangling = {r for r in _refs(openapi) if r.removeprefix("#/components/schemas/") not in schemas}
    assert not dangling


def test_documents_also_take_jsonl_and_a_mode_parameter(openapi):
    op = openapi["paths"]["/v1/documents"]["post"]
    line = op["requestBody"]["content"]["application/x-ndjson"]["schema"]
    assert line == {"$ref": f"#/components/schemas/{DocumentIn.__name__}"}
    assert [p["name"] for p in op.get("parameters", []) if p["in"] == "query"] == ["mode"]
