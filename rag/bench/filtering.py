"""The cost of filtering: hybrid query latency with a filter that allows 1 %, 10 % or 100 % of the
chunks, against no filter, on the local backend and on Milvus (milvus-lite in a file).

Synthetic documents (one chunk each, :func:`rag.bench.retrieval.synthetic_docs`) with seeded random
unit vectors; document ``i`` belongs to access group ``g{i % 100}`` and has the keyword field
``shard = s{i % 100}``. Two kinds of filter, each allowing 1, 10 or 100 of the 100 groups/shards:

- ``access``: the documents carry access metadata and the principal is in that many groups (the
  reader scope every request gets);
- ``field``: a metadata filter ``shard in [...]`` (``retrieval.filter_fields``) on public documents;
- ``tenant``: document ``i`` belongs to tenant ``t{i % 100}`` and the principal to ``t00``, so 1 %
  (a principal has one tenant); ``tenant-partitions``: the same on Milvus with
  ``index.milvus.tenant_partitions`` (the tenant is the partition key; not run on the local backend).

"none" is the same index with no filter (access: a principal in every group, which the backends
recognise as no restriction only when no document is restricted, so it is the unrestricted index
queried anonymously). A query is ``HybridRetriever.search``: both legs (top 100 each) and the fusion;
embedding the query is excluded (random vectors). Medians and p95 over ``--queries`` queries, after
a warm-up, all in one run.
"""
from __future__ import annotations

import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from rag.bench.harness import latency_summary
from rag.bench.measurement import Measurement, Outcome

SHARES = (1, 10, 100)
# The index section of each backend measured (config overrides, given the run's temporary folder).
INDEX = {"local": lambda folder: {"index.backend": "local", "index.path": str(folder / "index")},
         "milvus-lite": lambda folder: {"index.backend": "milvus", "index.milvus.uri": str(folder / "milvus.db"),
                                        "index.milvus.collection": "bench_filtering"}}
BACKENDS = tuple(INDEX)
HAS_PARTITIONS = {"local": False, "milvus-lite": True}  # whether the backend can partition by tenant
KINDS = ("access", "field", "tenant", "tenant-partitions")


@dataclass(frozen=True)
class Options:
    chunks: int = field(default=100_000, metadata={"help": "documents (one chunk each)"})
    queries: int = 50
    backends: tuple[str, ...] = field(default=BACKENDS, metadata={"help": "local and/or milvus-lite"})
    kinds: tuple[str, ...] = field(default=KINDS, metadata={"help": "access, field, tenant and/or tenant-partitions"})
    seed: int = 0


def _docs(n: int, seed: int, kind: str):
    from rag.bench.retrieval import synthetic_docs
    from rag.types import Document

    docs, queries = synthetic_docs(n, seed)
    out = []
    for i, d in enumerate(docs):
        meta = {"shard": f"s{i % 100:02d}"}
        if kind == "access":
            meta["access"] = {"groups": [f"g{i % 100:02d}"]}
        elif kind.startswith("tenant"):
            meta["access"] = {"tenant": f"t{i % 100:02d}"}
        out.append(Document(d.id, d.text, d.version, d.title, d.uri, meta))
    return out, queries


def _pipeline(backend: str, folder: Path, seed: int, partitions: bool = False):
    from rag.bench.retrieval import RandomEmbedder, synthetic_config
    from rag.pipeline import Pipeline

    extra = {"index.milvus.tenant_partitions": True} if partitions else {}
    cfg = synthetic_config(**INDEX[backend](folder), **{"retrieval.filter_fields": {"shard": "keyword"}}, **extra)
    return Pipeline(cfg, embedder=RandomEmbedder(seed=seed))


def _timed(p, queries: list[str], where=None, principal=None) -> dict:
    lat = []
    for q in queries[:3]:  # warm-up
        p.search(q, where=where, principal=principal)
    for q in queries:
        t = time.perf_counter()
        p.search(q, where=where, principal=principal)
        lat.append((time.perf_counter() - t) * 1e3)
    return latency_summary(lat)


def _one_backend(backend: str, o: Options) -> dict:
    from rag.access import Principal

    out: dict = {}
    for kind in o.kinds:
        if kind == "tenant-partitions" and not HAS_PARTITIONS[backend]:
            continue
        docs, queries = _docs(o.chunks, o.seed, kind)
        queries = queries[:o.queries]
        with tempfile.TemporaryDirectory(prefix="rag-bench-filter-") as tmp:
            p = _pipeline(backend, Path(tmp), o.seed, partitions=kind == "tenant-partitions")
            t0 = time.perf_counter()
            p.build_index(docs)
            row: dict = {"build_s": round(time.perf_counter() - t0, 1)}
            if kind == "field":
                row["none"] = _timed(p, queries)
            for share in SHARES if not kind.startswith("tenant") else (1,):
                names = [f"{'g' if kind == 'access' else 's'}{i:02d}" for i in range(share)]
                if kind.startswith("tenant"):
                    row[f"{share}%"] = _timed(p, queries, principal=Principal("bench", (), "t00"))
                elif kind == "access":
                    row[f"{share}%"] = _timed(p, queries, principal=Principal("bench", tuple(names)))
                else:
                    row[f"{share}%"] = _timed(p, queries, where=p.where({"shard": names}))
            out[kind] = row
            del p
    return out


def run(o: Options) -> Outcome:
    from rag.bench.errors import BenchOptionError

    bad = sorted(set(o.backends) - set(BACKENDS))
    if bad:
        raise BenchOptionError(f"--backends: unknown {bad}; choose from {BACKENDS}")
    bad = sorted(set(o.kinds) - set(KINDS))
    if bad:
        raise BenchOptionError(f"--kinds: unknown {bad}; choose from {KINDS}")
    res = {"chunks": o.chunks, "queries": o.queries, "backends": {b: _one_backend(b, o) for b in o.backends}}
    cols = ["none", *(f"{s}%" for s in SHARES)]
    table = [f"{o.chunks} chunks, {o.queries} hybrid queries: p50 ms (p95), by the share of chunks the filter allows",
             f"{'backend':<13}{'filter':<18}{'build s':>8}" + "".join(f"{c:>16}" for c in cols)]
    for b, kinds in res["backends"].items():
        for kind, row in kinds.items():
            cells = [f"{row[c]['p50']:.1f} ({row[c]['p95']:.1f})" if c in row else "-" for c in cols]
            table.append(f"{b:<13}{kind:<18}{row['build_s']:>8.1f}" + "".join(f"{x:>16}" for x in cells))
    return Outcome(res, "\n".join(table), None)


def _requires(o: Options) -> list[str]:
    if "milvus-lite" not in o.backends:
        return []
    try:
        import milvus_lite  # noqa: F401
    except ImportError:
        return ["milvus-lite is not installed (pip install 'rag[milvus]'), or pass --backends local"]
    return []


MEASUREMENT = Measurement("filtering", "hybrid query latency with filters allowing 1/10/100 % of the chunks, both backends",
                          Options, run, _requires)
