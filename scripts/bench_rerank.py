"""Rerank latency on CPU: p50/p95 per query for 10/30/50 candidates, and pairs/s.

For each model (``--models``: ``default`` = the committed MiniLM checkpoint, or checkpoint folders)
compares it run in fp32 with a dynamically int8-quantized copy (torch.ao quantize_dynamic on the
Linear layers), all side by side and interleaved in one run, and checks each copy's quality on
SciFact held-out queries when the data is there. Prints a table and writes results/bench_rerank.json.

    python scripts/bench_rerank.py [--repeats 15] [--threads 2]
    python scripts/bench_rerank.py --models default rag/_models/reranker-e5-ko-en --max-length 192
"""
from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

import numpy as np


from rag._io import read_jsonl
from rag.config import RerankConfig

from rag.rerank import CrossEncoderReranker, CrossEncoderScorer
from rag.types import Candidate, Chunk

SIZES = (10, 30, 50)


def passages(n: int, seed: int) -> list[Candidate]:
    """Realistic passages: SciFact abstracts when the data is present, else synthetic text."""
    corpus = Path(__file__).resolve().parents[2] / "shared/data/scifact/corpus.jsonl"
    rng = np.random.default_rng(seed)
    if corpus.is_file():
        rows = [r for _, r in read_jsonl(corpus)][:2000]
        texts = [f"{r['title']}\n\n{r['text']}" for r in rows]
    else:
        words = "cell protein gene patients risk increased study trial effect dose cancer model".split()
        texts = [" ".join(rng.choice(words, 150)) for _ in range(500)]
    pick = rng.choice(len(texts), n, replace=False)
    return [Candidate(Chunk(f"p{i}:1:0", f"p{i}", "1", 0, texts[j], 0, len(texts[j])), 1.0 / (i + 1), i + 1, ())
            for i, j in enumerate(pick)]


def quantized(scorer: CrossEncoderScorer) -> CrossEncoderScorer:
    """The same model, int8 (no cache: every timed call computes)."""
    return CrossEncoderScorer(scorer.config.model_copy(update={"quantize": True}), model=scorer.model, cache_size=0)


def bench(name: str, scorer: CrossEncoderScorer, repeats: int) -> list[dict]:
    rows = []
    r = CrossEncoderReranker(scorer, config=RerankConfig(top_n=50, languages=("en", "ko")))
    r.rerank("warm up query", passages(4, 0))
    for n in SIZES:
        times = []
        for rep in range(repeats):
            cands = passages(n, 100 + rep)
            t0 = time.perf_counter()
            r.rerank(f"query {rep}: does vitamin d reduce fracture risk in older adults", cands)
            times.append(time.perf_counter() - t0)
        p50 = statistics.median(times)
        p95 = float(np.percentile(times, 95))
        rows.append({"backend": name, "candidates": n, "p50_ms": round(p50 * 1e3, 1), "p95_ms": round(p95 * 1e3, 1),
                     "pairs_per_s": round(n / p50, 1)})
    return rows


def quality(scorer_fp32, scorer_int8, max_queries: int) -> dict | None:
    data = Path(__file__).resolve().parents[2] / "shared/data/scifact"
    if not data.is_dir():
        return None
    from rag.config import load_config
    from rag.index import load_beir
    from rag.evaluation.metrics import dedupe_docs, ndcg_at_k
    from rag.pipeline import Pipeline
    from rag.rerank import in_holdout
    from rag.retrieval import HybridRetriever

    ds = load_beir(data, "train")
    pipe = Pipeline(load_config("configs/en.yaml"))
    index = pipe.new_index(ds.corpus)
    retr = HybridRetriever(index, pipe.embedder, pipe.config.retrieval)
    qids = [q for q in sorted(ds.qrels) if in_holdout(ds.name, q, 40)][:max_queries]
    out = {"n_queries": len(qids)}
    rerankers = {"fp32": CrossEncoderReranker(scorer_fp32, config=RerankConfig(top_n=30)),
                 "int8": CrossEncoderReranker(scorer_int8, config=RerankConfig(top_n=30))}
    scores = {k: [] for k in rerankers}
    scores["hybrid"] = []
    for q, fused in zip(qids, retr.search_many([ds.queries[q] for q in qids], candidates=30)):
        t = ds.queries[q]
        scores["hybrid"].append(ndcg_at_k(dedupe_docs([c.chunk.document_id for c in fused.candidates]), ds.qrels[q], 10))
        for k, r in rerankers.items():
            res = r.rerank(t, fused.candidates)
            scores[k].append(ndcg_at_k(dedupe_docs([c.candidate.chunk.document_id for c in res.candidates]), ds.qrels[q], 10))
    out.update({f"ndcg@10_{k}": round(float(np.mean(v)), 4) for k, v in scores.items()})
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--repeats", type=int, default=15)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--quality-queries", type=int, default=150)
    ap.add_argument("--models", nargs="+", default=["default"], help="'default' or checkpoint folders")
    ap.add_argument("--max-length", type=int, default=None, help="pair length in tokens (default: each checkpoint's)")
    ap.add_argument("--out", default="results/bench_rerank.json")
    args = ap.parse_args()
    import torch

    torch.set_num_threads(args.threads)
    scorers = {}
    for m in args.models:
        tag = "minilm" if m == "default" else Path(m).name
        fp32 = CrossEncoderScorer(RerankConfig(batch_size=32, max_length=args.max_length),
                                  model=m if m == "default" else str(Path(m).resolve()), cache_size=0)
        scorers[tag] = (fp32, quantized(fp32))
    rows = []
    for rep in range(2):  # interleave the backends so machine noise hits all of them
        for tag, (fp32, int8) in scorers.items():
            rows += [dict(r, round=rep) for r in bench(f"{tag} fp32", fp32, args.repeats)]
            rows += [dict(r, round=rep) for r in bench(f"{tag} int8", int8, args.repeats)]
    final = [r for r in rows if r["round"] == 1]
    print(f"{'backend':>28} {'cands':>6} {'p50 ms':>8} {'p95 ms':>8} {'pairs/s':>8}")
    for r in final:
        print(f"{r['backend']:>28} {r['candidates']:>6} {r['p50_ms']:>8} {r['p95_ms']:>8} {r['pairs_per_s']:>8}")
    qualities = {}
    for tag, (fp32, int8) in scorers.items():
        fp32.cache_size = int8.cache_size = 100_000
        q = quality(fp32, int8, args.quality_queries)
        if q:
            qualities[tag] = q
            print(f"{tag}: quality on SciFact held-out queries:", q)
    out = {"threads": args.threads, "repeats": args.repeats, "max_length": args.max_length, "rows": final,
           "quality": qualities, "models": {t: s[0].model_id for t, s in scorers.items()}}
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(out, indent=2) + "\n", encoding="utf-8")
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
