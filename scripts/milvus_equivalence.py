"""Retrieval quality of the Milvus backend next to the local one, in one run (issue 13).

    python scripts/milvus_equivalence.py [--sets scifact:train korquad1:test] [--uri .rag/eq/milvus.db]

Each set is indexed twice (local, in memory; milvus-lite in a file) with the set's shipped
config (configs/en.yaml for SciFact, configs/ko.yaml for KorQuAD), reranking off, and bm25 /
dense / hybrid nDCG@10 are compared. Writes results/milvus_equivalence.json and prints a table.
"""
from __future__ import annotations

import argparse
import json
import time
from datetime import date
from pathlib import Path

from rag._io import write_json
from rag.config import load_config
from rag.evaluation.retrieval import evaluate_retrieval
from rag.pipeline import Pipeline

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT.parent / "shared" / "data"
CONFIGS = {"scifact": "configs/en.yaml", "korquad1": "configs/ko.yaml"}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sets", nargs="+", default=["scifact:train", "korquad1:test"])
    ap.add_argument("--uri", default=str(ROOT / ".rag" / "eq" / "milvus.db"))
    ap.add_argument("--out", default=str(ROOT / "results" / "milvus_equivalence.json"))
    args = ap.parse_args()
    rows = []
    for item in args.sets:
        name, split = item.split(":")
        base = load_config(ROOT / CONFIGS[name])
        for backend in ("local", "milvus"):
            cfg = base.with_overrides({"index.backend": backend, "index.milvus.uri": args.uri})
            t0 = time.perf_counter()
            res = evaluate_retrieval(Pipeline(cfg), DATA / name, split, rerank=False)
            row = {"set": f"{name}/{split}", "backend": backend, "queries": res.n_queries,
                   "seconds": round(time.perf_counter() - t0, 1)}
            row |= {r: round(res.metrics[r]["ndcg@10"], 4) for r in ("bm25", "dense", "hybrid")}
            rows.append(row)
            print(json.dumps(row, ensure_ascii=False), flush=True)
    print(f"\n{'set':18}{'backend':>8}{'bm25':>9}{'dense':>9}{'hybrid':>9}")
    for r in rows:
        print(f"{r['set']:18}{r['backend']:>8}{r['bm25']:>9.4f}{r['dense']:>9.4f}{r['hybrid']:>9.4f}")
    deltas = {}
    for a, b in zip(rows[::2], rows[1::2]):
        deltas[a["set"]] = {r: round(b[r] - a[r], 4) for r in ("bm25", "dense", "hybrid")}
        print(f"{a['set']:18}{'delta':>8}" + "".join(f"{deltas[a['set']][r]:>+9.4f}" for r in ("bm25", "dense", "hybrid")))
    write_json(Path(args.out), {"date": date.today().isoformat(), "metric": "nDCG@10", "rows": rows,
                                "milvus_minus_local": deltas,
                                "command": "python scripts/milvus_equivalence.py"})


if __name__ == "__main__":
    main()
