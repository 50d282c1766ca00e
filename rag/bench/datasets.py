"""Data recipes (``rag bench data NAME``): the derived evaluation sets the result pages use.

- ``msmarco-abstention``: an English NoMIRACL-style abstention set from BEIR queries unused in
  training (MS MARCO dev by default; SciFact ``train`` with ``--split train --holdout 40``, the queries
  both rerankers held out). For each sampled query the hybrid retriever (``--config``) returns its top
  passages from the dataset's pool; half of the queries (by hash) become answerable (their judged
  relevant passage plus the top non-relevant ones), the other half unanswerable (only non-relevant
  passages). Queries of the training runs' ``groups.jsonl`` files are excluded.
- ``crosslingual-abstention``: a NoMIRACL-style set with each question replaced by the same query in
  another language (MS MARCO ko is a translation of MS MARCO en with the same ids), the passages kept.
"""
from __future__ import annotations

import json
import random
from dataclasses import dataclass, field
from pathlib import Path

from rag.bench.errors import BenchOptionError
from rag.bench.harness import data_dir, read_jsonl, repo_path
from rag.bench.measurement import Measurement, Outcome


@dataclass(frozen=True)
class AbstentionOptions:
    dataset: str = field(default="", metadata={"help": "BEIR folder (default <data>/msmarco/en)"})
    config: str = "configs/en.yaml"
    split: str = field(default="test", metadata={"help": "the split whose queries are sampled (never a reported test split)"})
    groups: tuple[str, ...] = field(default=(), metadata={"help": "groups.jsonl of training runs whose queries are excluded"})
    holdout: int = field(default=0, metadata={"help": "keep only queries in this percent hash holdout"})
    queries: int = 600
    passages: int = 10
    seed: int = 11
    output: str = ".rag/data/msmarco_en_abstention.jsonl"


def make_abstention_set(o: AbstentionOptions) -> Outcome:
    from rag.config import load_config
    from rag.index import load_beir
    from rag.pipeline import Pipeline
    from rag.rerank import in_holdout, negative_documents
    from rag.retrieval import HybridRetriever

    ds = load_beir(o.dataset or data_dir() / "msmarco" / "en", o.split)
    # Every query id of a training run is excluded whatever its source: MS MARCO en and ko share ids.
    used = {row["query_id"] for g in o.groups for row in read_jsonl(g)}
    pool = sorted(q for q in ds.qrels if q not in used and (not o.holdout or in_holdout(ds.name, q, o.holdout)))
    random.Random(o.seed).shuffle(pool)
    qids = sorted(pool[:o.queries])
    pipe = Pipeline(load_config(repo_path(o.config)))
    index = pipe.new_index(ds.corpus)
    retr = HybridRetriever(index, pipe.components.embedder, pipe.config.retrieval)
    text = {c.document_id: c.text for c in index.chunks}
    searched = retr.search_many([ds.queries[q] for q in qids], candidates=60)
    out = repo_path(o.output)
    out.parent.mkdir(parents=True, exist_ok=True)
    n_ans = 0
    with open(out, "w", encoding="utf-8") as fh:
        for q, fused in zip(qids, searched):
            rel = {d for d, r in ds.qrels[q].items() if r > 0}
            neg = negative_documents(fused.candidates, rel)
            answerable = not in_holdout("msmarco-abstention", q, 50)
            docs = (sorted(rel)[:1] + neg[:o.passages - 1]) if answerable else neg[:o.passages]
            n_ans += answerable
            fh.write(json.dumps({"query_id": q, "question": ds.queries[q], "answerable": answerable,
                                 "passages": [{"docid": d, "title": "", "text": text[d]} for d in docs]},
                                ensure_ascii=False) + "\n")
    return Outcome({"wrote": str(out), "questions": len(qids), "answerable": n_ans},
                   f"wrote {out}: {len(qids)} questions, {n_ans} answerable", pipe.config.hash)


@dataclass(frozen=True)
class CrosslingualOptions:
    set: str = field(default=".rag/data/msmarco_ko_abstention.jsonl", metadata={"help": "NoMIRACL-style JSONL with query_id"})
    queries: str = field(default="", metadata={"help": "BEIR queries.jsonl of the other language (default <data>/msmarco/en)"})
    output: str = ".rag/data/msmarco_en2ko_abstention.jsonl"


def make_crosslingual_set(o: CrosslingualOptions) -> Outcome:
    queries = Path(o.queries) if o.queries else data_dir() / "msmarco" / "en" / "queries.jsonl"
    text = {row["_id"]: row["text"] for row in read_jsonl(queries)}
    rows = list(read_jsonl(repo_path(o.set)))
    missing = [row["query_id"] for row in rows if row["query_id"] not in text]
    if missing:
        raise BenchOptionError(f"{len(missing)} query ids of {o.set} are not in {queries} (first: {missing[0]})")
    out = repo_path(o.output)
    out.parent.mkdir(parents=True, exist_ok=True)
    with open(out, "w", encoding="utf-8") as fh:
        for row in rows:
            fh.write(json.dumps(dict(row, question=text[row["query_id"]]), ensure_ascii=False) + "\n")
    n_ans = sum(bool(row["answerable"]) for row in rows)
    return Outcome({"wrote": str(out), "questions": len(rows), "answerable": n_ans},
                   f"wrote {out}: {len(rows)} questions, {n_ans} answerable")


def _abstention_requires(o: AbstentionOptions) -> list[str]:
    ds = Path(o.dataset) if o.dataset else data_dir() / "msmarco" / "en"
    return ([] if ds.is_dir() else [f"{ds} is missing"]) + [f"{g} is missing" for g in o.groups if not Path(g).is_file()]


def _crosslingual_requires(o: CrosslingualOptions) -> list[str]:
    q = Path(o.queries) if o.queries else data_dir() / "msmarco" / "en" / "queries.jsonl"
    return [f"{p} is missing" for p in (repo_path(o.set), q) if not p.is_file()]


RECIPES = (
    Measurement("msmarco-abstention", "an English NoMIRACL-style abstention set from queries never trained on",
                AbstentionOptions, make_abstention_set, _abstention_requires),
    Measurement("crosslingual-abstention", "a NoMIRACL-style set with its questions in another language",
                CrosslingualOptions, make_crosslingual_set, _crosslingual_requires),
)

__all__ = ["AbstentionOptions", "CrosslingualOptions", "RECIPES", "make_abstention_set", "make_crosslingual_set"]
