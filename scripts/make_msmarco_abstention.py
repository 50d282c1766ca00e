"""Build an English NoMIRACL-style abstention set from BEIR queries unused in training (MS MARCO
dev by default; SciFact ``train`` with ``--split train --holdout 40``, the queries both rerankers held out).

For each sampled query the hybrid retriever (configs/en.yaml) returns its top passages from
the MS MARCO passage pool. Half of the queries (by hash) become *answerable*: their judged
relevant passage plus the top non-relevant ones; the other half *unanswerable*: only
non-relevant passages (NoMIRACL's construction). Queries used to train the reranker (from
its groups.jsonl) are excluded. Writes JSONL in the NoMIRACL layout:

    python scripts/make_msmarco_abstention.py --groups .rag/train/reranker-minilm-listwise/groups.jsonl \
        --queries 600 --out .rag/data/msmarco_en_abstention.jsonl
    python scripts/make_msmarco_abstention.py --dataset ../shared/data/scifact --split train --holdout 40 \
        --queries 600 --out .rag/data/scifact_en_abstention.jsonl
"""
from __future__ import annotations

import argparse
import json
import random
import sys
from pathlib import Path


from rag.config import load_config
from rag.index import load_beir
from rag.pipeline import Pipeline
from rag.rerank import in_holdout
from rag.retrieval import HybridRetriever


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--dataset", default="../shared/data/msmarco/en")
    ap.add_argument("--config", default="configs/en.yaml")
    ap.add_argument("--split", default="test", help="the BEIR split whose queries are sampled (never a reported test split)")
    ap.add_argument("--groups", nargs="*", default=[], help="groups.jsonl of training runs whose queries are excluded")
    ap.add_argument("--holdout", type=int, default=0,
                    help="keep only queries in this percent hash holdout of the dataset (as train-reranker holds them out)")
    ap.add_argument("--queries", type=int, default=600)
    ap.add_argument("--passages", type=int, default=10)
    ap.add_argument("--seed", type=int, default=11)
    ap.add_argument("--out", default=".rag/data/msmarco_en_abstention.jsonl")
    args = ap.parse_args()
    ds = load_beir(args.dataset, args.split)
    # Every query id of the training run is excluded, whatever its source: MS MARCO en and ko share ids
    # (ko is a translation), so a query trained on in one language is not evaluated in the other.
    used = {json.loads(x)["query_id"] for g in args.groups for x in open(g, encoding="utf-8")}
    pool = sorted(q for q in ds.qrels if q not in used and (not args.holdout or in_holdout(ds.name, q, args.holdout)))
    random.Random(args.seed).shuffle(pool)
    qids = sorted(pool[: args.queries])
    pipe = Pipeline(load_config(args.config))
    index = pipe.new_index(ds.corpus)
    retr = HybridRetriever(index, pipe.embedder, pipe.config.retrieval)
    text = {c.document_id: c.text for c in index.chunks}
    searched = retr.search_many([ds.queries[q] for q in qids], candidates=60)
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    n_ans = 0
    with open(out, "w", encoding="utf-8") as fh:
        for q, fused in zip(qids, searched):
            t = ds.queries[q]
            rel = {d for d, r in ds.qrels[q].items() if r > 0}
            neg = []
            for c in fused.candidates:
                d = c.chunk.document_id
                if d not in rel and d not in neg:
                    neg.append(d)
            answerable = not in_holdout("msmarco-abstention", q, 50)
            docs = (sorted(rel)[:1] + neg[: args.passages - 1]) if answerable else neg[: args.passages]
            n_ans += answerable
            fh.write(json.dumps({"query_id": q, "question": t, "answerable": answerable,
                                 "passages": [{"docid": d, "title": "", "text": text[d]} for d in docs]},
                                ensure_ascii=False) + "\n")
    print(f"wrote {out}: {len(qids)} questions, {n_ans} answerable")
    return 0


if __name__ == "__main__":
    sys.exit(main())
