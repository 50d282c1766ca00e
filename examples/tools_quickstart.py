"""Tools and live data (seed 004): a registry in Python, tool selection, and a result as schema + YAML.

    python examples/tools_quickstart.py

Runs offline with the bundled models (configs/default.yaml). Answering with tools needs an
OpenAI-compatible server with tool calling: pass its URL to see ``answer(..., tools=...)`` run
(``python examples/tools_quickstart.py http://127.0.0.1:8080/v1 MODEL``).
"""
from __future__ import annotations

import sys
from pathlib import Path

from rag.config import load_config
from rag.pipeline import Pipeline
from rag.text.tokens import make_counter
from rag.tools import ToolRegistry, ToolSpec, compare_tokens, format_result

ROOT = Path(__file__).resolve().parents[1]

CLUSTERS = {"type": "object", "required": ["clusters"], "properties": {"clusters": {"type": "array", "items": {
    "type": "object", "required": ["name", "flavor_ref", "status"], "properties": {
        "name": {"type": "string"}, "flavor_ref": {"type": "string", "description": "서버 사양 ID"},
        "status": {"type": "string", "enum": ["active", "error"]}}}}}}


def list_redis_clusters(project: str) -> dict:  # your backend call (sync or async)
    return {"clusters": [{"name": "prod-redis", "flavor_ref": "m5.large", "status": "active"},
                         {"name": "batch-redis", "flavor_ref": "m5.xlarge", "status": "error"}]}


def registry() -> ToolRegistry:
    project = {"type": "object", "properties": {"project": {"type": "string"}}, "required": ["project"]}
    specs = [
        ToolSpec.make("list_redis_clusters", "Redis 클러스터 목록과 상태를 조회합니다.", product="Redis",
                      parameters=project, response_schema=CLUSTERS, effect="read"),
        ToolSpec.make("get_redis_metrics", "Redis 클러스터의 초당 명령 수와 히트율을 조회합니다.", product="Redis",
                      parameters={"type": "object", "properties": {"cluster": {"type": "string"}}}, effect="read"),
        ToolSpec.make("list_vms", "가상 머신 목록과 전원 상태를 조회합니다.", product="VM", parameters=project,
                      effect="read"),
        ToolSpec.make("list_buckets", "오브젝트 스토리지 버킷 목록을 조회합니다.", product="ObjectStorage",
                      parameters=project, hints=("외부 공개 여부는 visibility 값으로 답한다.",), effect="read"),
    ]
    return ToolRegistry(tuple(specs)).bind(list_redis_clusters=list_redis_clusters)


def main(base_url: str | None = None, model: str = "gpt-4o-mini") -> None:
    config = load_config(ROOT / "configs" / "default.yaml")
    if base_url:
        config = config.with_overrides({"generation.backend": "openai", "generation.base_url": base_url,
                                        "generation.model": model})
    pipe = Pipeline(config)
    tools = registry()

    # 1. Selection: only the tools that matter for the question go to the model.
    sel = pipe.select_tools("Redis 클러스터 상태 알려줘", tools)
    print("selected:", ", ".join(f"{t.name} ({t.score:.2f})" for t in sel.selected), f"| left out: {sel.left_out}")

    # 2. A result as evidence: schema with ! required / ? optional, then the data as YAML.
    counter = make_counter(config.context.tokenizer, config.tokenizer_model)
    data = list_redis_clusters("p1")
    print(format_result(data, CLUSTERS, counter).text)
    print("tokens:", compare_tokens(data, CLUSTERS, counter).to_json())

    # 3. With a model that can call tools: the answer cites the tool result like a document.
    if base_url:
        pipe.build_index()
        res = pipe.answer("Redis 클러스터 상태 알려줘", tools=tools)
        print(res.status, res.answer)
        for c in res.citations:
            print(f"  [{c.source_id}] {c.document_id} at {c.document_version} {c.uri}")


if __name__ == "__main__":
    main(*sys.argv[1:3])
