"""Calling a running ``rag serve`` from Python: the JSON API, the event stream and the OpenAI SDK.

    rag serve --config configs/default.yaml --build-index &
    python examples/serve_client.py http://127.0.0.1:8000 [API_KEY]
"""
from __future__ import annotations

import json
import sys

import httpx
import openai


def main(url: str, key: str | None = None) -> None:
    headers = {"Authorization": f"Bearer {key}"} if key else {}
    with httpx.Client(base_url=url, headers=headers, timeout=120) as http:
        # 1. One answer as JSON: status, the answer with [S#] markers, citations resolved by the server.
        res = http.post("/v1/answer", json={"question": "연차 휴가는 며칠인가요?", "trace": False}).json()
        print(res["status"], res["answer"].splitlines()[0])
        for c in res["citations"]:
            print(f"  [{c['source_id']}] {c['document_id']} v{c['document_version']} {c['start_char']}-{c['end_char']}")

        # 2. The same as server-sent events: retrieval and gate as they happen, then the validated answer.
        with http.stream("POST", "/v1/answer", json={"question": "How long is the annual leave?", "stream": True}) as r:
            event = ""
            for line in r.iter_lines():
                if line.startswith("event: "):
                    event = line[7:]
                elif line.startswith("data: ") and event == "answer":
                    print("streamed:", json.loads(line[6:])["status"])
                elif line.startswith("data: "):
                    print("event:", event)

    # 3. The OpenAI-compatible facade: existing chat front-ends work unchanged.
    client = openai.OpenAI(base_url=url + "/v1", api_key=key or "unused", max_retries=0)
    out = client.chat.completions.create(model="rag", messages=[{"role": "user", "content": "연차 휴가는 며칠인가요?"}])
    rag = out.model_extra["rag"]
    print("chat:", rag["status"], len(rag["citations"]), "citation(s)")


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2] if len(sys.argv) > 2 else None)
