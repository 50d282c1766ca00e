"""Index backends side by side (issue 13): local, milvus-lite (file and server), Milvus 2.3.5.

For each target and size: build time (``Pipeline.build_index`` from empty), query latency p50/p95
for BM25, dense and hybrid (``Pipeline.search``), the latency of adding and deleting one document,
and memory; at 10k chunks also a concurrency test (8 reader threads while the main thread writes)
with a whole-version check. One run, one process; the servers run on 127.0.0.1 and are stopped at
the end.

Embeddings come from the ``hashing`` backend (instant, deterministic, no model): this measures the
index engines, not an embedder. The time to chunk and embed each corpus is measured once on its own
and reported, so ``build - chunk+embed`` is the engine's share.

Corpus: real text, one sentence per document (one chunk each at ``chunking.max_tokens: 200``), half
Korean (MS MARCO-ko, NoMIRACL-ko, KorQuAD, kolaw-dev) and half English (MS MARCO-en, SciFact,
SQuAD 2.0, WiCE) from ../shared/data, shuffled with a fixed seed; the 10k corpus is the first 10k
of the 100k one. Queries: MS MARCO dev queries, Korean and English alternating.

    PYTHONPATH=. python scripts/bench_milvus.py [--sizes 10000 100000]
        [--targets local lite-file lite-server milvus-2.3.5] [--out results/bench_milvus.json]

A build that runs past --build-limit-s (default 900 s) is stopped between two published batches;
the cell reports "> limit", how many documents were indexed by then and an extrapolation from the
rate of its last minutes (labelled as such); its queries run over what was indexed.
"""
from __future__ import annotations

import argparse
import gc
import json
import os
import platform
import random
import re
import resource
import shutil
import statistics
import subprocess
import sys
import threading
import time
import traceback
from datetime import date
from pathlib import Path

import numpy as np

from rag._io import write_json
from rag.config import RagConfig
from rag.index.store import chunk_and_embed
from rag.pipeline import Pipeline
from rag.retrieval import HybridRetriever
from rag.types import Document

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT.parent / "shared" / "data"
TARGETS = ("local", "lite-file", "lite-server", "milvus-2.3.5")
NO_BM25 = "n/a (no BM25 before Milvus 2.5)"
TOKEN_ENV = "RAG_BENCH_MILVUS_TOKEN"
MACHINE = "2-core VM, 24 GiB, no GPU"
_SENT = re.compile(r"(?<=[.!?。])\s+")
MIN_CHARS, MAX_CHARS, MAX_TOKENS = 20, 600, 180


# ----------------------------------------------------------------------------------------- data


def _jsonl(rel: str):
    with open(DATA / rel, encoding="utf-8") as fh:
        for line in fh:
            if line.strip():
                yield json.loads(line)


def _sentences(text: str):
    for s in _SENT.split(text):
        s = " ".join(s.split())
        if MIN_CHARS <= len(s) <= MAX_CHARS:
            yield s


def _korean() -> list[tuple[str, str]]:
    out = [("msmarco-ko", s) for r in _jsonl("msmarco/ko/corpus.jsonl") for s in _sentences(r["text"])]
    seen: dict[str, str] = {}
    for r in _jsonl("nomiracl/ko.test.jsonl"):
        for p in r["passages"]:
            seen[p["docid"]] = p["text"]
    out += [("nomiracl-ko", s) for t in seen.values() for s in _sentences(t)]
    out += [("korquad1", s) for r in _jsonl("korquad1/corpus.jsonl") for s in _sentences(r["text"])]
    out += [("kolaw-dev", s) for r in _jsonl("kolaw-dev/corpus.jsonl") for s in _sentences(r["text"])]
    return out


def _english() -> list[tuple[str, str]]:
    out = [("msmarco-en", s) for r in _jsonl("msmarco/en/corpus.jsonl") for s in _sentences(r["text"])]
    out += [("scifact", s) for r in _jsonl("scifact/corpus.jsonl") for s in _sentences(r["text"])]
    squad = json.loads((DATA / "squad2" / "dev-v2.0-half.json").read_text(encoding="utf-8"))
    out += [("squad2", s) for a in squad["data"] for p in a["paragraphs"] for s in _sentences(p["context"])]
    out += [("wice", s) for r in _jsonl("wice/claim_dev.jsonl") for t in r.get("evidence") or []
            for s in _sentences(t)]
    return out


def make_corpus(n: int, seed: int = 13) -> tuple[list[Document], list[str], dict]:
    """n one-sentence documents, Korean and English alternating (English fills in when Korean runs
    out), deduplicated and shuffled with a fixed seed; plus 100 held-out sentences for updates."""
    from rag.text.tokens import TiktokenCounter

    count = TiktokenCounter().count  # chunking.encoding's default, as the chunker counts
    pools = []
    for lang, pool in (("ko", _korean()), ("en", _english())):
        seen, uniq = set(), []
        for src, s in pool:
            if s not in seen and count(s) <= MAX_TOKENS:
                seen.add(s)
                uniq.append((lang, src, s))
        random.Random(seed).shuffle(uniq)
        pools.append(uniq)
    ko, en = pools
    spare = ko[-50:] + en[-50:]
    ko, en = ko[:-50], en[:-50]
    picked, i, j = [], 0, 0
    while len(picked) < n and (i < len(ko) or j < len(en)):
        if i < len(ko) and (len(picked) % 2 == 0 or j >= len(en)):
            picked.append(ko[i]); i += 1
        else:
            picked.append(en[j]); j += 1
    docs = [Document(f"{lang}-{k:06d}", text, "1", metadata={"source": src})
            for k, (lang, src, text) in enumerate(picked)]
    info = {"available_sentences": {"ko": len(ko), "en": len(en)}}
    return docs, [s for _, _, s in spare], info


def corpus_mix(docs: list[Document]) -> dict:
    mix: dict[str, int] = {}
    for d in docs:
        mix[d.metadata["source"]] = mix.get(d.metadata["source"], 0) + 1
    return dict(sorted(mix.items(), key=lambda kv: -kv[1]))


def make_queries(n: int, seed: int = 13) -> list[str]:
    ko = [r["text"] for r in _jsonl("msmarco/ko/queries.jsonl")]
    en = [r["text"] for r in _jsonl("msmarco/en/queries.jsonl")]
    rng = random.Random(seed)
    ko, en = rng.sample(ko, (n + 1) // 2), rng.sample(en, n // 2)
    return [q for pair in zip(ko, en) for q in pair] + ko[len(en):]


# --------------------------------------------------------------------------------------- config


def make_config(target: str, size: int, work: Path, uri: str | None, token: str | None) -> RagConfig:
    cfg = {
        "name": f"bench-{target}-{size}",
        "index": {"backend": "local" if target == "local" else "milvus",
                  "path": str(work / f"local-{size}")},
        "chunking": {"max_tokens": 200},
        "bm25": {"analyzer": "korean_bigram"},
        "embedding": {"backend": "hashing", "dim": 384, "cache_dir": None},  # no cache: every build embeds
        "rerank": {"enabled": False},
    }
    if target != "local":
        milvus = {"uri": uri, "collection": f"bench_{size}"}  # everything else: MilvusConfig defaults
        if os.environ.get("RAG_BENCH_BATCH_DOCUMENTS"):  # larger published batches (fewer Strong round trips)
            milvus["batch_documents"] = int(os.environ["RAG_BENCH_BATCH_DOCUMENTS"])
        if token:
            milvus["token_env"] = TOKEN_ENV
        cfg["index"]["milvus"] = milvus
    return RagConfig.model_validate({**cfg, "base_dir": str(work)})


# -------------------------------------------------------------------------------------- helpers


def rss(pid: int | None = None) -> int:
    try:
        return int(Path(f"/proc/{pid or 'self'}/statm").read_text().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except OSError:
        return 0


def mb(n: float | None) -> float | None:
    return None if n is None else round(n / 2**20, 1)


def pct(xs: list[float], q: float) -> float | None:
    return round(float(np.percentile(xs, q)), 2) if xs else None


def loadavg() -> list[float]:
    return [round(x, 2) for x in os.getloadavg()]


def uptime() -> str:
    try:
        return subprocess.run(["uptime"], capture_output=True, text=True, timeout=5).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return ""


def git_state() -> str:
    def git(*a: str) -> str:
        try:
            return subprocess.run(["git", *a], capture_output=True, text=True, cwd=ROOT, timeout=10).stdout.strip()
        except (OSError, subprocess.SubprocessError):
            return ""
    dirty = git("status", "--porcelain", "--", "rag")
    return git("rev-parse", "--short", "HEAD") + (f" + uncommitted changes in rag/ ({len(dirty.splitlines())} files)"
                                                   if dirty else "")


class BuildStopped(Exception):
    pass


def log(msg: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {msg}", flush=True)


# ---------------------------------------------------------------------------------------- cells


def build(p: Pipeline, docs: list[Document], limit_s: float) -> dict:
    """p.build_index from empty; stopped (between two batches) once it runs past limit_s."""
    curve: list[tuple[float, int]] = []
    t0 = time.perf_counter()
    done = [0]

    def progress(n: int) -> None:
        done[0] += n
        t = time.perf_counter() - t0
        curve.append((round(t, 2), done[0]))
        if t > limit_s:
            raise BuildStopped

    out: dict = {}
    try:
        p.build_index(docs, force=True, progress=progress)
        out["build_s"] = round(time.perf_counter() - t0, 2)
        out["complete"] = True
    except BuildStopped:
        elapsed = time.perf_counter() - t0
        out["complete"] = False
        out["build_s"] = None
        out["stopped_after_s"] = round(elapsed, 1)
        idx = p.milvus_index().open()  # what was published before the stop
        p.use_index(idx)
        indexed = len(idx.documents)
        out["documents_indexed_when_stopped"] = indexed
        # Rate over the last third of the run (it slows as the collection grows): an optimistic
        # extrapolation, so the real build takes at least this long.
        tail = [c for c in curve if c[0] >= elapsed * 2 / 3] or curve[-2:]
        (ta, na), (tb, nb) = tail[0], curve[-1]
        rate = (nb - na) / (tb - ta) if tb > ta and nb > na else indexed / elapsed
        out["rate_last_third_docs_per_s"] = round(rate, 1)
        out["extrapolated_build_s_at_least"] = round(elapsed + (len(docs) - indexed) / rate, 0)
    out["chunks"] = len(p.index)
    out["documents"] = len(p.index.documents)
    out["curve"] = curve[:: max(1, len(curve) // 40)] + curve[-1:]
    return out


def query_latency(p: Pipeline, queries: list[str], warmup: int, k: int) -> dict:
    idx = p.index
    emb = p.embedder
    vecs = emb.embed_queries(queries)
    bm25_ok = idx.has_bm25
    for q, v in zip(queries[:warmup], vecs[:warmup]):
        idx.search_dense(v, k)
        if bm25_ok:
            idx.search_bm25(q, k)
            p.search(q)
    lat: dict[str, list[float]] = {"bm25": [], "dense": [], "hybrid": []}
    hits = {"bm25": 0, "dense": 0, "hybrid": 0}
    snap_ms: list[float] = []
    stages: dict[str, list[float]] = {}
    for q, v in zip(queries[warmup:], vecs[warmup:]):
        t = time.perf_counter(); idx.snapshot(); snap_ms.append((time.perf_counter() - t) * 1e3)
        if bm25_ok:
            t = time.perf_counter(); r = idx.search_bm25(q, k); lat["bm25"].append((time.perf_counter() - t) * 1e3)
            hits["bm25"] += len(r)
        t = time.perf_counter(); r = idx.search_dense(v, k); lat["dense"].append((time.perf_counter() - t) * 1e3)
        hits["dense"] += len(r)
        if bm25_ok:
            t = time.perf_counter(); r = p.search(q); lat["hybrid"].append((time.perf_counter() - t) * 1e3)
            hits["hybrid"] += len(r.candidates)
            for stage, ms in r.timings_ms.items():
                stages.setdefault(stage, []).append(ms)
    n = len(queries) - warmup
    out: dict = {"queries": n, "k": k}
    for name, xs in lat.items():
        if xs:
            out[name] = {"p50_ms": pct(xs, 50), "p95_ms": pct(xs, 95), "mean_ms": round(statistics.fmean(xs), 2),
                         "mean_hits": round(hits[name] / n, 1)}
        else:
            out[name] = NO_BM25
    # p.search = snapshot() (reads the published state on Milvus) + the stages below
    out["snapshot"] = {"p50_ms": pct(snap_ms, 50), "p95_ms": pct(snap_ms, 95)}
    out["hybrid_stages_p50_ms"] = {k: pct(v, 50) for k, v in stages.items()}
    return out


def update_latency(p: Pipeline, spare: list[str], reps: int, tag: str, persisted: bool) -> dict:
    """Median time to add one new one-chunk document, then to delete it (index API; ``persisted``:
    through the pipeline, which saves a version folder on the local backend)."""
    adds, dels = [], []
    for i in range(reps):
        d = Document(f"zz-update-{tag}-{i:03d}", spare[i % len(spare)] + f" (update {tag} {i})", "1")
        t = time.perf_counter()
        p.add_documents([d]) if persisted else p.index.add([d])
        adds.append((time.perf_counter() - t) * 1e3)
        t = time.perf_counter()
        p.delete_document(d.id) if persisted else p.index.delete(d.id)
        dels.append((time.perf_counter() - t) * 1e3)
    return {"reps": reps, "add_median_ms": round(statistics.median(adds), 1), "add_p95_ms": pct(adds, 95),
            "delete_median_ms": round(statistics.median(dels), 1), "delete_p95_ms": pct(dels, 95)}


def _pair_doc(k: int, side: str, version: str) -> Document:
    # a and b carry the same text, so they score alike and sit next to each other in any ranking
    extra = " revised" if version == "2" else ""
    return Document(f"pair-{k:05d}-{side}", f"whole version check pair{k:05d}marker quartz lantern{extra}", version)


def _pair_query(k: int) -> str:
    return f"pair{k:05d}marker quartz lantern"


def concurrency(p: Pipeline, queries: list[str], spare: list[str], duration: float, clients: int,
                write_every: float) -> dict:
    """``clients`` threads: snapshot(), then search (hybrid; dense only without BM25), while the main
    thread writes every ``write_every`` s: add a pair (one add([a, b])), replace it as a pair, add a
    single document, delete the previous single. A result holding one of a pair must hold both, in
    the same version."""
    index, emb, rcfg = p.index, p.embedder, p.config.retrieval
    bm25_ok = index.has_bm25
    stop = threading.Event()
    lock = threading.Lock()
    state = {"pairs": 0}  # pairs 0..pairs-1 were added (pairs itself may be in flight)
    stats = {"searches": 0, "errors": 0, "error_samples": [], "pair_searches": 0, "pair_results_with_pair": 0,
             "violations": 0, "violation_samples": [], "latency_ms": []}

    def check(names: list[tuple[str, str]]) -> str | None:
        seen: dict[str, dict[str, str]] = {}
        for doc_id, version in names:
            if doc_id.startswith("pair-"):
                _, k, side = doc_id.split("-")
                seen.setdefault(k, {})[side] = version
        for k, sides in seen.items():
            if set(sides) != {"a", "b"} or sides["a"] != sides["b"]:
                return f"pair {k}: {sides}"
        return None

    def reader(seed: int) -> None:
        rng = random.Random(seed)
        lats = []
        while not stop.is_set():
            pair_q = rng.random() < 0.5
            if pair_q:
                k = rng.randint(max(0, state["pairs"] - 20), state["pairs"])  # recent pairs, and the one in flight
                q = _pair_query(k)
            else:
                q = rng.choice(queries)
            t = time.perf_counter()
            try:
                snap = index.snapshot()
                if bm25_ok:
                    res = HybridRetriever(snap, emb, rcfg).search(q)
                    names = [(c.chunk.document_id, c.chunk.document_version) for c in res.candidates]
                else:
                    res = snap.search_dense(emb.embed_queries([q])[0], rcfg.dense_top_k)
                    names = [(c.chunk.document_id, c.chunk.document_version) for c in res]
                lats.append((time.perf_counter() - t) * 1e3)
                bad = check(names)
                with lock:
                    stats["searches"] += 1
                    if pair_q:
                        stats["pair_searches"] += 1
                        stats["pair_results_with_pair"] += any(n.startswith("pair-") for n, _ in names)
                    if bad:
                        stats["violations"] += 1
                        if len(stats["violation_samples"]) < 5:
                            stats["violation_samples"].append(f"{q!r}: {bad}")
            except Exception as exc:  # noqa: BLE001 - counted and reported
                with lock:
                    stats["errors"] += 1
                    if len(stats["error_samples"]) < 5:
                        stats["error_samples"].append(f"{type(exc).__name__}: {str(exc)[:300]}")
        with lock:
            stats["latency_ms"].extend(lats)

    writes = {"ops": 0, "errors": 0, "error_samples": [], "latency_ms": {"add_pair": [], "replace_pair": [],
                                                                          "add_one": [], "delete_one": []}}
    threads = [threading.Thread(target=reader, args=(i,), daemon=True) for i in range(clients)]
    t_start = time.perf_counter()
    for th in threads:
        th.start()
    step, single = 0, -1
    next_at = time.perf_counter()
    while time.perf_counter() - t_start < duration:
        op = ("add_pair", "replace_pair", "add_one", "delete_one")[step % 4]
        t = time.perf_counter()
        try:
            k = state["pairs"]
            if op == "add_pair":
                index.add([_pair_doc(k, "a", "1"), _pair_doc(k, "b", "1")])
            elif op == "replace_pair":
                index.replace([_pair_doc(k, "a", "2"), _pair_doc(k, "b", "2")])
                state["pairs"] = k + 1
            elif op == "add_one":
                single += 1
                index.add([Document(f"zz-single-{single:05d}", spare[single % len(spare)] + f" (single {single})")])
            elif single >= 1:
                index.delete(f"zz-single-{single - 1:05d}")
            else:
                op = ""  # nothing to delete yet
            if op:
                writes["latency_ms"][op].append((time.perf_counter() - t) * 1e3)
                writes["ops"] += 1
        except Exception as exc:  # noqa: BLE001
            writes["errors"] += 1
            if len(writes["error_samples"]) < 5:
                writes["error_samples"].append(f"{op}: {type(exc).__name__}: {str(exc)[:300]}")
        step += 1
        next_at += write_every
        time.sleep(max(0.0, next_at - time.perf_counter()))
    stop.set()
    for th in threads:
        th.join(timeout=120)
    elapsed = time.perf_counter() - t_start
    lats = stats.pop("latency_ms")
    out = {"clients": clients, "duration_s": round(elapsed, 1), "mode": "hybrid" if bm25_ok else "dense only",
           **stats, "searches_per_s": round(stats["searches"] / elapsed, 1),
           "search_p50_ms": pct(lats, 50), "search_p95_ms": pct(lats, 95),
           "stuck_readers": sum(th.is_alive() for th in threads),
           "writes": {"ops": writes["ops"], "errors": writes["errors"], "error_samples": writes["error_samples"],
                      "pairs_added_and_replaced": state["pairs"],
                      **{f"{op}_median_ms": round(statistics.median(v), 1) if v else None
                         for op, v in writes["latency_ms"].items()}}}
    return out


# ----------------------------------------------------------------------------------------- main


def fmt(x, unit="") -> str:
    if x is None:
        return "-"
    if isinstance(x, str):
        return x
    return f"{x:,.1f}{unit}" if isinstance(x, float) else f"{x:,}{unit}"


def table(cells: list[dict]) -> str:
    head = ("target", "chunks", "build s", "bm25 p50/p95 ms", "dense p50/p95 ms", "hybrid p50/p95 ms",
            "add ms", "delete ms", "server RSS MB", "process RSS MB")
    rows = [head]
    for c in cells:
        q = c.get("query", {})

        def lat(name: str) -> str:
            v = q.get(name)
            if isinstance(v, dict):
                return f"{v['p50_ms']:.1f} / {v['p95_ms']:.1f}"
            return "n/a" if v == NO_BM25 else "-"

        b = c.get("build", {})
        bs = fmt(b.get("build_s")) if b.get("complete") else (
            f"> {b.get('stopped_after_s', 0) / 60:.0f} min" if b else "-")
        u = c.get("update", {})
        rows.append((c["target"], f"{b.get('chunks', c['size']):,}", bs, lat("bm25"), lat("dense"), lat("hybrid"),
                     fmt(u.get("add_median_ms")), fmt(u.get("delete_median_ms")),
                     fmt(c.get("memory", {}).get("server_rss_mb")), fmt(c.get("memory", {}).get("process_rss_mb"))))
    widths = [max(len(str(r[i])) for r in rows) for i in range(len(head))]
    return "\n".join("  ".join(str(v).rjust(w) for v, w in zip(r, widths)) for r in rows)


def run_target(target: str, args, work: Path, docs_all: list[Document], spare: list[str],
               queries: list[str], out: Path) -> dict:
    """Every size of one target (in its own process: its RSS is this target's alone); ``out`` is
    rewritten after every size, so a killed child loses only the size it was on."""
    from tests.milvus_servers import start_lite_server, start_milvus235  # test helpers: 127.0.0.1 only

    res: dict = {"target": target, "cells": [], "concurrency": []}

    def save() -> None:
        res["peak_process_rss_mb"] = mb(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024)
        write_json(out, res)

    served = None
    uri, token = None, None
    try:
        if target == "lite-server":
            served = start_lite_server(work / "lite-server")
        elif target == "milvus-2.3.5":
            served = start_milvus235(work / "milvus235")
        if served is not None:
            uri, token = served.uri, served.token or None
            if token:
                os.environ[TOKEN_ENV] = token
            res["server"] = {"kind": served.kind, "uri": served.uri, "startup_s": round(served.startup_s, 1),
                             "idle_rss_mb": mb(served.rss_bytes())}
            log(f"{target}: started at {served.uri} in {served.startup_s:.1f} s, RSS {mb(served.rss_bytes())} MB")
        for n in sorted(args.sizes):
            if target == "lite-file":
                uri = str(work / f"lite-file-{n}.db")
            cell: dict = {"target": target, "size": n, "loadavg_start": loadavg()}
            res["cells"].append(cell)
            p = Pipeline(make_config(target, n, work, uri, token))
            try:
                log(f"{target} {n}: building")
                cell["build"] = build(p, docs_all[:n], args.build_limit_s)
                b = cell["build"]
                log(f"{target} {n}: build {b.get('build_s')} s complete={b['complete']} chunks={b['chunks']}")
                cell["memory"] = {"process_rss_mb_after_build": mb(rss())}
                if served is not None:
                    cell["memory"]["server_rss_mb_after_build"] = mb(served.rss_bytes())
                cell["query"] = query_latency(p, queries, args.warmup, args.k)
                if target != "local":  # the same searches at consistency Bounded (no wait for the newest writes)
                    pb = Pipeline(p.config.with_overrides({"index.milvus.consistency": "Bounded"}), embedder=p.embedder)
                    qb = query_latency(pb, queries, args.warmup, args.k)
                    cell["query_bounded"] = {m: qb[m] for m in ("bm25", "dense", "hybrid")}
                    del pb
                log(f"{target} {n}: queries {json.dumps(cell['query'])} bounded {json.dumps(cell.get('query_bounded'))}")
                cell["update"] = update_latency(p, spare, args.updates, f"{target}-{n}", persisted=False)
                if target == "local" and args.saved_updates:
                    cell["update_saved"] = update_latency(p, spare, args.saved_updates, f"saved-{n}", persisted=True)
                log(f"{target} {n}: updates {cell['update']} {cell.get('update_saved', '')}")
                if n == args.concurrency_size and args.concurrency_s > 0:
                    log(f"{target} {n}: concurrency {args.clients} readers x {args.concurrency_s} s")
                    c = concurrency(p, queries, spare, args.concurrency_s, args.clients, args.write_every)
                    c = {"target": target, "size": n, **c}
                    res["concurrency"].append(c)
                    log(f"{target} {n}: concurrency {json.dumps(c)}")
                cell["memory"]["process_rss_mb"] = mb(rss())
                if served is not None:
                    cell["memory"]["server_rss_mb"] = mb(served.rss_bytes())
            except Exception as exc:  # noqa: BLE001 - a failed cell is reported, the run goes on
                cell["error"] = f"{type(exc).__name__}: {str(exc)[:500]}"
                log(f"{target} {n}: FAILED {cell['error']}\n{traceback.format_exc()}")
            finally:
                cell["loadavg_end"] = loadavg()
                if target != "local":
                    try:
                        p.milvus_index().drop()  # free the server's memory for the next size
                    except Exception as exc:  # noqa: BLE001
                        cell["drop_error"] = str(exc)[:300]
                if target == "lite-file":
                    from milvus_lite.server_manager import server_manager_instance
                    server_manager_instance.release_server(uri)
                del p
                gc.collect()
                save()
    finally:
        if served is not None:
            served.stop()
        os.environ.pop(TOKEN_ENV, None)
    save()
    return res


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", nargs="+", type=int, default=[10_000, 100_000])
    ap.add_argument("--targets", nargs="+", choices=TARGETS, default=list(TARGETS))
    ap.add_argument("--queries", type=int, default=200)
    ap.add_argument("--warmup", type=int, default=10)
    ap.add_argument("--k", type=int, default=100, help="top-k of the single-retriever searches")
    ap.add_argument("--updates", type=int, default=20, help="add+delete pairs timed per cell")
    ap.add_argument("--saved-updates", type=int, default=5,
                    help="local only: add+delete through the pipeline (saves a version folder each time)")
    ap.add_argument("--concurrency-s", type=float, default=20.0)
    ap.add_argument("--concurrency-size", type=int, default=10_000)
    ap.add_argument("--clients", type=int, default=8)
    ap.add_argument("--write-every", type=float, default=0.2)
    ap.add_argument("--build-limit-s", type=float, default=900.0)
    ap.add_argument("--work", default=str(ROOT / ".rag" / "bench_milvus"))
    ap.add_argument("--out", default=str(ROOT / "results" / "bench_milvus.json"))
    ap.add_argument("--child", choices=TARGETS, help=argparse.SUPPRESS)  # internal: run one target, JSON to --out
    args = ap.parse_args()

    work = Path(args.work).resolve()
    t_run = time.perf_counter()
    docs_all, spare, corpus_info = make_corpus(max(args.sizes))
    queries = make_queries(args.warmup + args.queries)
    if args.child:
        run_target(args.child, args, work, docs_all, spare, queries, Path(args.out))
        return

    if work.exists():
        shutil.rmtree(work)
    work.mkdir(parents=True)
    log(f"uptime: {uptime()}")
    sizes = sorted(args.sizes)
    report: dict = {
        "date": date.today().isoformat(),
        "command": "PYTHONPATH=. python scripts/bench_milvus.py " + " ".join(sys.argv[1:]),
        "machine": MACHINE,
        "platform": f"{platform.system()} {platform.machine()}, Python {platform.python_version()}, "
                    f"{os.cpu_count()} cpus",
        "git": git_state(),
        "uptime_before": uptime(), "loadavg_before": loadavg(),
        "embedder": "hashing (dim 384): instant and deterministic; this measures the index engines, not an embedder",
        "corpus": {"unit": "one sentence per document = one chunk (chunking.max_tokens 200; sentences of "
                           f"{MIN_CHARS}-{MAX_CHARS} characters and at most {MAX_TOKENS} tokens)",
                   "sources": "../shared/data: msmarco ko/en, nomiracl ko, korquad1, kolaw-dev, scifact, squad2, wice",
                   **corpus_info},
        "queries": f"{args.queries} MS MARCO dev queries (ko and en alternating) after {args.warmup} warm-up ones",
        "settings": {k: v for k, v in vars(args).items() if k not in ("out", "work", "child")},
        "milvus_settings": "index.milvus defaults (dense_index FLAT, consistency Strong, batch_documents 256, "
                           "purge_delay_s 60); query_bounded: the same searches at consistency Bounded",
        "process": "each target runs in its own child process (process RSS = that target's client side; "
                   "lite-file's engine runs inside it); servers are separate processes",
        "prep": {}, "cells": [], "concurrency": [], "targets": {},
    }
    out_path = Path(args.out)

    def save() -> None:
        report["total_runtime_s"] = round(time.perf_counter() - t_run, 1)
        write_json(out_path, report)

    for n in sizes:
        docs = docs_all[:n]
        p = Pipeline(make_config("local", n, work, None, None))
        t = time.perf_counter()
        items, _ = chunk_and_embed(docs, p.chunker(), p.embedder, 384)
        prep = {"chunk_embed_s": round(time.perf_counter() - t, 2), "documents": n,
                "chunks": sum(len(it.chunks) for it in items), "mix": corpus_mix(docs),
                "mean_chars": round(statistics.fmean(len(d.text) for d in docs), 1)}
        del items
        report["prep"][str(n)] = prep
        log(f"corpus {n}: {prep}")
    save()

    limit = len(sizes) * (args.build_limit_s + 1200) + 600  # a child that hangs is killed, not waited for

    def child(target: str, todo: list[int], part: Path) -> dict:
        cmd = [sys.executable, str(Path(__file__).resolve()), "--child", target, "--out", str(part),
               "--work", str(work)]
        for name in ("sizes", "queries", "warmup", "k", "updates", "saved_updates", "concurrency_s",
                     "concurrency_size", "clients", "write_every", "build_limit_s"):
            v = todo if name == "sizes" else getattr(args, name)
            cmd += [f"--{name.replace('_', '-')}", *map(str, v if isinstance(v, list) else [v])]
        log(f"{target}: child process, sizes {todo}")
        t = time.perf_counter()
        try:
            rc = subprocess.run(cmd, timeout=limit, cwd=ROOT).returncode  # noqa: S603
        except subprocess.TimeoutExpired:
            rc = "timeout"
        info = {"child_rc": rc, "wall_s": round(time.perf_counter() - t, 1), "cells": [], "concurrency": []}
        if part.is_file():
            info |= json.loads(part.read_text(encoding="utf-8"))
        return info

    for target in args.targets:
        info = child(target, sizes, work / f"{target}.json")
        done = {c["size"] for c in info["cells"] if "memory" in c and "process_rss_mb" in c["memory"]}
        if isinstance(info["child_rc"], int) and info["child_rc"] < 0 and set(sizes) - done:
            # killed by a signal from outside (it happened once): run the sizes it had not finished again, once
            again = child(target, sorted(set(sizes) - done), work / f"{target}-retry.json")
            info["cells"] = [c for c in info["cells"] if c["size"] in done]
            for c in again["cells"]:
                c["retried_after"] = f"the first child exited with {info['child_rc']} (a signal from outside)"
            info["cells"] += again.pop("cells")
            info["concurrency"] += again.pop("concurrency")
            info["retry"] = again
            info["peak_process_rss_mb"] = max(info.get("peak_process_rss_mb") or 0, again.get("peak_process_rss_mb") or 0)
        report["cells"] += info.pop("cells")
        report["concurrency"] += info.pop("concurrency")
        report["targets"][target] = info
        save()

    report["uptime_after"] = uptime()
    report["loadavg_after"] = loadavg()
    save()
    print()
    print(table(report["cells"]))
    print()
    for c in report["concurrency"]:
        print(f"concurrency {c['target']} {c['size']:,}: {c['searches_per_s']} searches/s ({c['mode']}), "
              f"errors {c['errors']}, whole-version violations {c['violations']}, "
              f"writes {c['writes']['ops']} (errors {c['writes']['errors']})")
    for t, info in report["targets"].items():
        print(f"{t}: peak process RSS {info.get('peak_process_rss_mb')} MB, child {info['child_rc']}, {info['wall_s']} s")
    print(f"\ntotal {report['total_runtime_s'] / 60:.1f} min; wrote {out_path}")


if __name__ == "__main__":
    main()
