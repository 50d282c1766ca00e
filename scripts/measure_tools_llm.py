"""The tool loop with a real local model: Qwen2.5-Coder (GGUF) behind llama-cpp-python's OpenAI-compatible
server on 127.0.0.1 (``--chat_format chatml-function-calling``), the seed-004-style cloud catalogue of
tests/fixtures/tools/cloud.yaml with its fake live data (tests/unit/tools/cloud.py), the demo corpus.

For each question: which tools were selected, which the model called and with what outcome, and the
final status (answered with validated citations, or abstained with the reason), with the time.

    rag models install-llm qwen2.5-1.5b
    PYTHONPATH=. python scripts/measure_tools_llm.py [--model qwen2.5-1.5b] [--out results/tools_llm.json]
"""
from __future__ import annotations

import argparse
import datetime
import json
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parents[1]

from rag.answer.llm_models import resolve_gguf
from rag.config import load_config
from rag.pipeline import Pipeline
from tests.unit.tools.cloud import registry

QUESTIONS = [
    ("Redis 클러스터 상태 알려줘", "list_redis_clusters"),
    ("prod-redis 클러스터의 초당 명령 수와 히트율은?", "get_redis_metrics"),
    ("프로젝트 p1의 오브젝트 스토리지 버킷 중 외부에 공개된 것은?", "list_buckets"),
    ("What is the status of the Redis clusters in project p1?", "list_redis_clusters"),
    ("프로젝트 p1에 최근 발생한 모니터링 알람 보여줘", "list_alerts"),
    ("연차 휴가는 며칠인가요?", None),  # a document question: no tool needed
]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", default="qwen2.5-1.5b")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--hints", default="before_first_call", choices=["before_first_call", "with_definition"])
    ap.add_argument("--out", default="results/tools_llm.json")
    args = ap.parse_args()
    gguf = resolve_gguf(args.model)
    port = free_port()
    log = open("/tmp/llama_server_tools.log", "w")
    server = subprocess.Popen([sys.executable, "-m", "llama_cpp.server", "--model", str(gguf), "--host", "127.0.0.1",
                               "--port", str(port), "--n_ctx", "4096", "--n_threads", str(args.threads),
                               "--chat_format", "chatml-function-calling"], stdout=log, stderr=subprocess.STDOUT)
    base = f"http://127.0.0.1:{port}/v1"
    rows = []
    try:
        for _ in range(600):
            try:
                if httpx.get(base + "/models", timeout=2).status_code == 200:
                    break
            except httpx.TransportError:
                time.sleep(1)
        cfg = load_config(ROOT / "configs" / "default.yaml").with_overrides({
            "generation.backend": "openai", "generation.base_url": base, "generation.model": args.model,
            "generation.timeout_s": 600, "generation.max_retries": 0, "generation.max_attempts": 2,
            "generation.max_tokens": 400, "context.output_reserve": 400, "context.context_limit": 3500,
            "generation.structured": "json_object_schema", "context.model": "gpt-4o-mini", "tools.max_tools": 4,
            "tools.max_rounds": 4, "tools.hints": args.hints})
        p = Pipeline(cfg)
        p.build_index()
        tools = registry()
        for q, expected in QUESTIONS:
            t0 = time.perf_counter()
            try:
                res = p.answer_with_tools(q, tools)
                tr = res.trace.tools
                rows.append({"question": q, "expected_tool": expected, "selected": list(tr.selection.names),
                             "calls": [{"tool": c.tool, "status": c.status, "arguments": c.arguments}
                                       for c in tr.phase.calls],
                             "status": res.status, "reason": res.reason, "answer": res.answer,
                             "citations": [f"{c.source_id}:{c.document_id}" for c in res.citations],
                             "attempts": [[v.code for v in a.violations] for a in res.trace.attempts],
                             "seconds": round(time.perf_counter() - t0, 1)})
            except Exception as exc:  # report and go on: one failure must not hide the others
                rows.append({"question": q, "error": f"{type(exc).__name__}: {exc}",
                             "seconds": round(time.perf_counter() - t0, 1)})
            print(json.dumps(rows[-1], ensure_ascii=False), flush=True)
    finally:
        server.terminate()
        server.wait(timeout=30)
        log.close()
    out = {"date": datetime.date.today().isoformat(), "model": args.model, "hints": args.hints, "rows": rows,
           "answered": sum(r.get("status") == "answered" for r in rows),
           "expected_tool_called_ok": sum(any(c["tool"] == r["expected_tool"] and c["status"] == "ok"
                                              for c in r.get("calls", [])) for r in rows if r.get("expected_tool"))}
    Path(args.out).write_text(json.dumps(out, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    print(f"answered {out['answered']}/{len(rows)}; expected tool called successfully: {out['expected_tool_called_ok']}/"
          f"{sum(1 for r in rows if r.get('expected_tool'))}; written {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
