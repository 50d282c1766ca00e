"""Quick start: index the demo corpus, search it, update it, build a budgeted prompt, and ask a
question and its follow-up.

    python examples/quickstart.py [INDEX_DIR]

Runs offline with the bundled models (configs/default.yaml).
"""
from __future__ import annotations

import sys
from pathlib import Path

from rag.config import load_config
from rag.pipeline import Pipeline
from rag.types import Turn
from rag.types import Document

ROOT = Path(__file__).resolve().parents[1]


def main(index_dir: str | None = None) -> None:
    config = load_config(ROOT / "configs" / "default.yaml")
    if index_dir:
        config = config.with_overrides({"index.path": index_dir})
    pipe = Pipeline(config)
    index = pipe.build_index(force=True)
    print(f"indexed {len(index.documents)} document versions as {len(index)} chunks")

    # Hybrid search: each candidate keeps what BM25 and the dense retriever said about it.
    result = pipe.search("연차 휴가는 입사 첫해에 며칠인가요?", candidates=5)
    for c in result.candidates:
        ranks = ", ".join(f"{h.retriever} #{h.rank}" for h in c.hits)
        print(f"{c.rank}. {c.chunk.evidence_id} ({ranks}) {c.chunk.uri}")

    # The corpus changes while the service runs: no rebuild, nothing re-embedded that was there.
    pipe.add_documents([Document("bike-policy", "Employees may park bicycles for free in the basement.",
                                 version="2026.1", title="Bicycle parking", uri="https://intranet.example/bike")])
    top = pipe.search("Where can I park my bicycle?").candidates[0].chunk
    print(f"after the update the top hit is {top.evidence_id}")
    pipe.delete_document("bike-policy")

    # A budgeted prompt: sources S1..Sn, a source map back to evidence, and a manifest.
    history = [Turn("user", "안녕하세요"), Turn("assistant", "무엇을 도와드릴까요?")]
    _, prompt = pipe.build_prompt("How often must passwords be changed?", history)
    m = prompt.manifest
    print(f"{len(m.blocks)} blocks, {m.evidence_tokens}/{m.evidence_budget} evidence tokens, "
          f"{len(m.dropped)} candidates not sent")
    s1 = prompt.source_map["S1"]
    print(f"S1 -> {s1.evidence_id} v{s1.document_version} chars {s1.start_char}-{s1.end_char} {s1.uri}")

    # A conversation: an answer goes back as the next question's history, its citations with it,
    # so the follow-up is resolved into a standalone question and searched with what was cited.
    first = pipe.answer("연차 휴가는 며칠인가요?")
    follow = pipe.answer("그럼 신입사원은요?", [Turn("user", first.question), first.as_turn()])
    res = follow.resolution
    print(f"follow-up: {res.question!r} ({res.method}; {res.reason}) -> {follow.status}: {follow.answer.splitlines()[0]}")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else None)
