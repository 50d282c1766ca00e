"""Retrieval quality of the Milvus backend next to the local one, in one run.

Each set (``--sets NAME:SPLIT``; SciFact uses ``configs/en.yaml``, KorQuAD ``configs/ko.yaml``) is
indexed twice, local (in memory) and milvus-lite in a file, with reranking off, and bm25 / dense /
hybrid nDCG@10 are compared (``milvus_minus_local``). Indexing embeds the whole corpus twice unless an
embedding cache holds it: minutes to hours on a small CPU.
"""
from __future__ import annotations

import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from rag.bench.harness import data_dir, repo_path
from rag.bench.measurement import Measurement, Outcome
from rag.errors import RagError

CONFIGS = {"scifact": "configs/en.yaml", "korquad1": "configs/ko.yaml"}
RETRIEVERS = ("bm25", "dense", "hybrid")


@dataclass(frozen=True)
class Options:
    sets: tuple[str, ...] = field(default=("scifact:train",), metadata={"help": "NAME:SPLIT, NAME in scifact, korquad1"})
    uri: str = field(default="", metadata={"help": "milvus-lite file (default: a temporary one)"})
    max_queries: int = field(default=0, metadata={"help": "0: every query of the split"})


def _sets(o: Options) -> list[tuple[str, str]]:
    from rag.bench.errors import BenchOptionError

    out = []
    for item in o.sets:
        name, _, split = item.partition(":")
        if name not in CONFIGS or not split:
            raise BenchOptionError(f"--sets: {item!r} is not NAME:SPLIT with NAME in {sorted(CONFIGS)}")
        out.append((name, split))
    return out


def run(o: Options) -> Outcome:
    from rag.config import load_config
    from rag.evaluation import evaluate_retrieval
    from rag.pipeline import Pipeline

    rows, deltas = [], {}
    with tempfile.TemporaryDirectory(prefix="rag-eq-") as tmp:
        uri = o.uri or str(Path(tmp) / "milvus.db")
        for name, split in _sets(o):
            base = load_config(repo_path(CONFIGS[name]))
            got = {}
            for backend in ("local", "milvus"):
                cfg = base.with_overrides({"index.backend": backend, "index.milvus.uri": uri})
                t0 = time.perf_counter()
                res = evaluate_retrieval(Pipeline(cfg), data_dir() / name, split, rerank=False,
                                         max_queries=o.max_queries or None)
                got[backend] = {r: round(res.metrics[r]["ndcg@10"], 4) for r in RETRIEVERS}
                rows.append({"set": f"{name}/{split}", "backend": backend, "queries": res.n_queries,
                             "seconds": round(time.perf_counter() - t0, 1), **got[backend]})
            deltas[f"{name}/{split}"] = {r: round(got["milvus"][r] - got["local"][r], 4) for r in RETRIEVERS}
    table = [f"{'set':18}{'backend':>8}{'bm25':>9}{'dense':>9}{'hybrid':>9}"]
    table += [f"{r['set']:18}{r['backend']:>8}" + "".join(f"{r[x]:>9.4f}" for x in RETRIEVERS) for r in rows]
    table += [f"{s:18}{'delta':>8}" + "".join(f"{d[x]:>+9.4f}" for x in RETRIEVERS) for s, d in deltas.items()]
    return Outcome({"metric": "nDCG@10", "rows": rows, "milvus_minus_local": deltas}, "\n".join(table))


def _requires(o: Options) -> list[str]:
    try:
        sets = _sets(o)
    except RagError as exc:  # reported again, typed, by run
        return [str(exc)]
    missing = [f"{data_dir() / n} is missing" for n, _ in sets if not (data_dir() / n).is_dir()]
    try:
        import milvus_lite  # noqa: F401
    except ImportError:
        missing.append("milvus-lite is not installed (pip install -e '.[milvus]')")
    return missing


MEASUREMENT = Measurement("milvus_equivalence", "nDCG@10 of the Milvus backend next to the local one",
                          Options, run, _requires)
