"""The same pipeline on Milvus: one config section changes, the code does not.

    python examples/milvus_backend.py [WORK_DIR]

Indexes the demo corpus into milvus-lite (embedded, a file under WORK_DIR), answers a question,
updates a document through the engine, and copies the index to a local folder with
`migrate` (no embedding again). Point `index.milvus.uri` at http://HOST:19530 for a server.
Runs offline with the bundled models (configs/default.yaml).
"""
from __future__ import annotations

import sys
import tempfile
from pathlib import Path

from rag.config import load_config
from rag.index.migrate import migrate
from rag.pipeline import Pipeline
from rag.types import Document

ROOT = Path(__file__).resolve().parents[1]


def main(work: Path) -> None:
    base = load_config(ROOT / "configs" / "default.yaml")
    on_milvus = base.with_overrides({"index.backend": "milvus", "index.milvus.uri": str(work / "rag.db"),
                                     "index.milvus.collection": "demo"})
    pipe = Pipeline(on_milvus)
    index = pipe.build_index()  # a rerun finds the documents there and embeds nothing
    print(f"indexed {len(index.documents)} document versions as {len(index)} chunks at {pipe.index_location}")

    result = pipe.answer("연차 휴가는 입사 첫해에 며칠인가요?")
    print(f"{result.status}: {result.answer}")
    for c in result.citations:
        print(f"  cites {c.evidence_id}")

    pipe.replace_documents([Document("bike-policy", "Employees may park bicycles for free in the basement.",
                                     version="2026.1", title="Bicycle parking")])
    top = pipe.search("Where can I park my bicycle?").candidates[0].chunk
    print(f"after the update the top hit is {top.evidence_id} (index {pipe.index.version_name})")
    pipe.delete_document("bike-policy")

    local = Pipeline(base.with_overrides({"index.path": str(work / "local-index")}))
    report = migrate(pipe, local)
    print(f"migrated to {local.index_location}: {report.copied} documents copied, {report.chunks} chunks")


if __name__ == "__main__":
    if len(sys.argv) > 1:
        main(Path(sys.argv[1]))
    else:
        with tempfile.TemporaryDirectory() as tmp:
            main(Path(tmp))
