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

Dataset kinds (each evaluated by one function, in its own module):
- ``beir`` (:func:`rag.evaluation.retrieval.evaluate_beir`): a BEIR folder; retrieval metrics of
  bm25, dense, hybrid and (when enabled) rerank, per-stage latency per query; the same loop
  and numbers as :func:`rag.evaluation.retrieval.evaluate_retrieval`. Queries are embedded
  in one batch (shared by runs with the same embedding settings), so ``latency.search``
  (bm25 + dense + fusion [+ rerank]) excludes query embedding; ``latency.embed_query``
  times the first 50 queries embedded one at a time.
- ``abstention`` (:func:`rag.evaluation.abstention.evaluate_abstention_run`): NoMIRACL JSONL
  or SQuAD 2.0 JSON (:func:`rag.evaluation.datasets.load_labelled`); the configured gate on
  each question's own passages (scores are shared by runs whose scoring settings match, so a
  threshold sweep scores once).
- ``questions`` (:func:`rag.evaluation.answers.evaluate_questions`): a question set (the
  ``rag batch`` input; ``expected_doc_id`` / ``answerable`` fields are used when present)
  answered end to end over the config's corpus; answer, abstention, context, citation,
  token and latency metrics from each answer's trace.
"""
from __future__ import annotations

import itertools
import json
import logging
import os
import shutil
import time
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType
from typing import Any, Literal, Mapping, Sequence

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from rag._io import write_json, write_jsonl
from rag.config import RagConfig, load_config, read_yaml
from rag.errors import ConfigError
from rag.evaluation.abstention import evaluate_abstention_run
from rag.evaluation.answers import AnswererFactory, evaluate_questions
from rag.evaluation.errors import ExperimentError, GridError, RunDirError, UnknownMetricError
from rag.evaluation.metrics import metric_family
from rag.evaluation.retrieval import evaluate_beir
from rag.evaluation.runs import DatasetSpec, Progress, RunCache, environment

logger = logging.getLogger(__name__)

DEFAULT_METRICS: Mapping[str, tuple[str, ...]] = MappingProxyType({
    "beir": ("retrieval.final.ndcg@10", "retrieval.final.recall@10", "retrieval.final.recall@100",
             "retrieval.final.mrr@10", "retrieval.hybrid.ndcg@10", "latency.search.p50_ms", "latency.search.p95_ms"),
    "abstention": ("abstention.auroc", "abstention.coverage", "abstention.precision_of_answered",
                   "abstention.answered_when_answerable", "abstention.abstained_when_unanswerable",
                   "abstention.accuracy"),
    "questions": ("answers.answered_rate", "answers.abstained_rate", "answers.failed_rate", "abstention.accuracy",
                  "answers.facts_right_rate", "answers.facts_precision_of_answered",
                  "retrieval.hit@1", "context.evidence_tokens.mean", "context.budget_use.mean",
                  "context.truncation_rate", "citations.validated_rate", "citations.support.p50",
                  "latency.total.p50_ms", "tokens.prompt.mean"),
})

# --------------------------------------------------------------------------- the experiment file
GridSpec = Mapping[str, Sequence[Any]] | Sequence[Mapping[str, Sequence[Any]]]


class ExperimentSpec(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

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


# --------------------------------------------------------------------------- running an experiment
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
        self.shared = RunCache()

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

    def completed(self) -> ExperimentResult:
        """The complete runs of the current grid as they are, computing nothing (to rewrite the report)."""
        return ExperimentResult(self.exp, self.exp_dir, tuple(self._reused(pl) for pl, done in self.status() if done))

    def _reused(self, plan: RunPlan) -> RunOutcome:
        run_dir = self.exp_dir / plan.config_hash
        metrics = json.loads((run_dir / "metrics.json").read_text(encoding="utf-8"))
        return RunOutcome(plan, run_dir, "reused", MappingProxyType(metrics), 0.0)

    def run(self) -> ExperimentResult:
        self.check_dir()
        self.exp_dir.mkdir(parents=True, exist_ok=True)
        for stale in self.exp_dir.glob(".partial-*"):
            logger.warning("removing %s (a run interrupted earlier)", stale)
            shutil.rmtree(stale, ignore_errors=True)
        write_json(self.exp_dir / "experiment.json",
                   {"identity": self.exp.identity(), "experiment_file": str(self.exp.path.resolve()),
                    "base_config": str(self.exp.base_config_path), "spec": self.exp.spec.model_dump(mode="json")},
                   atomic=False)
        outcomes = []
        for i, plan in enumerate(self.exp.runs):
            run_dir = self.exp_dir / plan.config_hash
            if _is_run_dir(run_dir) and not self.force:
                logger.info("run %d/%d %s (%s): complete, reused", i + 1, len(self.exp.runs), plan.label, plan.config_hash)
                outcomes.append(self._reused(plan))
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
            kind, d, path, cfg = self.exp.kind, self.exp.spec.dataset, self.exp.dataset_path, plan.config
            if kind == "beir":
                res = evaluate_beir(d, path, cfg, self.shared, self.progress)
            elif kind == "abstention":
                res = evaluate_abstention_run(d, path, cfg, self.shared, self.progress)
            else:
                res = evaluate_questions(d, path, cfg, self.shared, tmp, self.answerer_factory, self.progress)
            seconds = time.perf_counter() - t0
            header = (f"# Resolved config of run {plan.config_hash} ({plan.label}) of experiment {self.exp.spec.name}.\n"
                      f"# Relative paths resolve against {cfg.base_dir}\n")
            (tmp / "config.yaml").write_text(header + yaml.safe_dump(cfg.model_dump(mode="json"), sort_keys=False,
                                                                      allow_unicode=True), encoding="utf-8")
            # the folder is renamed into place when complete: its files need not be written atomically
            if res.rows:
                write_jsonl(tmp / "results.jsonl", res.rows, atomic=False)
            if res.curves is not None:
                write_json(tmp / "curves.json", res.curves, atomic=False)
            write_json(tmp / "environment.json", environment(res.models), atomic=False)
            write_json(tmp / "run.json", {
                "experiment": self.exp.spec.name, "config_hash": plan.config_hash, "label": plan.label,
                "overrides": dict(plan.overrides), "experiment_overrides": dict(self.exp.spec.overrides),
                "base_config": str(self.exp.base_config_path), "dataset": self.exp.identity()["dataset"],
                "started": started, "seconds": round(seconds, 3)}, atomic=False)
            write_json(tmp / "metrics.json", dict(res.metrics), atomic=False)  # last: its presence marks a complete run
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

