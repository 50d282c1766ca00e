"""``rag calibrate --auto`` (no labels) against the shipped thresholds and thresholds fitted on labels,
everything scored with the labels only after fitting (docs/results/gate-auto.md).

Sets (``--sets``, run in this order):

- ``kolaw-dev``: kolaw-dev's corpus indexed with the shipped config; ``--auto`` fitted on it;
  ``rag eval-answers`` with the shipped, the ``--auto`` and a label-fitted config (the calib half's
  questions in ``--fit-language``, on the gate scores the shipped run recorded);
- ``kolaw-feedback`` (after ``kolaw-dev``): the calib half asked with ``rag batch`` and the ``--auto``
  config, each line labelled as a person checking it would, ``rag calibrate --from-batch`` on them, and
  every config scored on the eval half only;
- ``demo``: the bundled demo corpus, ``rag demo`` with the shipped and the ``--auto`` thresholds;
- ``nomiracl-ko``, ``squad2`` (long: the pooled corpora take 15 and 3 minutes to index): a labelled
  abstention set's passages pooled into one corpus, ``--auto`` on it, a label fit on the calib half
  (``rag calibrate --dataset --split calib``), ``rag eval-abstention --split eval`` with each config;
- ``nomiracl-ko-1k``: the time ``--auto`` takes on the first 1,000 pooled NoMIRACL-ko documents, from an
  empty index and cache.

Each step is a ``rag`` command in a child process (the commands a user runs), its wall time and peak
RSS recorded; logs, configs and reports stay under ``--work`` (default: a temporary folder).
"""
from __future__ import annotations

import json
import logging
import os
import re
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rag.bench import gate_auto_parts as parts
from rag.bench.harness import data_dir, repo_path
from rag.bench.measurement import Measurement, Outcome

log = logging.getLogger(__name__)

SETS = ("kolaw-dev", "kolaw-feedback", "demo", "nomiracl-ko", "squad2", "nomiracl-ko-1k")


@dataclass(frozen=True)
class Options:
    sets: tuple[str, ...] = field(default=("kolaw-dev", "kolaw-feedback", "demo"),
                                  metadata={"help": "which of " + ", ".join(SETS)})
    data: str = field(default="", metadata={"help": "data folder (default ../shared/data or $RAG_DATA_DIR)"})
    config: str = field(default="configs/default.yaml", metadata={"help": "the shipped settings"})
    work: str = field(default="", metadata={"help": "keep indexes, configs, logs and reports here (default: a "
                                                    "temporary folder); an index already there is reused"})
    target_precision: float = 0.9
    fit_language: str = field(default="ko", metadata={"help": "kolaw-dev's label fit reads these questions"})
    squad2_max_questions: int = field(default=0, metadata={"help": "0: every question of each SQuAD 2.0 half"})


@dataclass(frozen=True)
class Step:
    command: str
    seconds: float
    peak_rss_gb: float


class _Run:
    """One run's folders and the steps it timed."""

    def __init__(self, o: Options, work: Path) -> None:
        self.o, self.work = o, work
        self.data = Path(o.data) if o.data else data_dir()
        self.base = repo_path(o.config)
        self.steps: dict[str, dict[str, Step]] = {}

    def rag(self, name: str, step: str, *args: str | Path) -> str:
        """Run ``rag ARGS`` for set ``name``; its output is logged under work/NAME/STEP.log and returned."""
        argv = [sys.executable, "-m", "rag.cli", *map(str, args)]
        logfile = self.work / name / f"{step}.log"
        logfile.parent.mkdir(parents=True, exist_ok=True)
        t0 = time.perf_counter()
        with logfile.open("w", encoding="utf-8") as out:
            p = subprocess.Popen(argv, stdout=out, stderr=subprocess.STDOUT, cwd=str(repo_path(".")))
            _, status, usage = os.wait4(p.pid, 0)
            p.returncode = os.waitstatus_to_exitcode(status)
        seconds = time.perf_counter() - t0
        text = logfile.read_text(encoding="utf-8")
        if p.returncode != 0:
            raise RuntimeError(f"`rag {' '.join(map(str, args))}` exited {p.returncode}:\n{text[-2000:]}")
        self.steps.setdefault(name, {})[step] = Step(" ".join(map(str, args[:2])), round(seconds, 1),
                                                     round(usage.ru_maxrss / 1024 ** 2, 2))
        return text

    def folder(self, name: str) -> Path:
        return self.work / name

    def config(self, name: str) -> Path:
        return self.folder(name) / f"{name}.yaml"

    def index(self, name: str, fresh: bool = False) -> None:
        """``rag index`` the set's config; an index already in the work folder is kept unless ``fresh``."""
        idx = self.folder(name) / "index"
        if fresh:
            import shutil

            for p in (idx, self.folder(name) / "cache"):
                shutil.rmtree(p, ignore_errors=True)
        if idx.is_dir():
            log.info("%s: kept (remove it to index and time again)", idx)
            return
        self.rag(name, "index", "index", "--config", self.config(name))

    def auto(self, name: str) -> dict[str, Any]:
        """``rag calibrate --auto``; what it found and fitted."""
        report = self.folder(name) / "report-auto"
        self.rag(name, "auto", "calibrate", "--auto", "--config", self.config(name),
                 "--out", self.folder(name) / f"{name}.auto.yaml", "--report", report)
        return json.loads((report / "auto_calibration.json").read_text(encoding="utf-8"))

    def answers(self, name: str, variant: str, config: Path, *extra: str | Path) -> list[dict[str, Any]]:
        out = self.folder(name) / f"answers-{variant}.json"
        self.rag(name, f"answers-{variant}", "eval-answers", "--dataset", self.data / "kolaw-dev",
                 "--config", config, "--json", out, *extra)
        return list(json.loads(out.read_text(encoding="utf-8"))["rows"])


def _thresholds(config: Path) -> dict[str, float | None]:
    return {"threshold": parts.threshold_of(config), "en": parts.threshold_of(config, "en")}


# --------------------------------------------------------------------------- the sets
def _kolaw_dev(r: _Run) -> dict[str, Any]:
    name, w = "kolaw-dev", r.folder("kolaw-dev")
    parts.write_swapped_config(r.base, r.config(name), index=w / "index", cache=w / "cache",
                               corpus=r.data / "kolaw-dev" / "corpus.jsonl")
    r.index(name)
    auto = parts.auto_summary(r.auto(name))
    shipped = r.answers(name, "shipped", r.config(name))
    fit = parts.fit_on_answers(shipped, r.data / "kolaw-dev" / "questions.jsonl", r.o.fit_language,
                               r.o.target_precision, r.config(name), w / f"{name}.labels.yaml")
    rows = {"shipped": shipped, "auto": r.answers(name, "auto", w / f"{name}.auto.yaml"),
            "labels": r.answers(name, "labels", w / f"{name}.labels.yaml")}
    variants = {}
    for v, vrows in rows.items():
        cfg = r.config(name) if v == "shipped" else w / f"{name}.{v}.yaml"
        variants[v] = {"thresholds": _thresholds(cfg),
                       "eval_half": parts.answer_rates([x for x in vrows if parts.half(x["id"]) == "eval"])}
        if v != "labels":  # the label fit saw the calib half
            variants[v]["all"] = parts.answer_rates(vrows)
    return {"auto": auto, "label_fit": fit, "variants": variants}


def _kolaw_feedback(r: _Run) -> dict[str, Any]:
    name, w = "kolaw-feedback", r.folder("kolaw-dev")
    if not (w / "kolaw-dev.auto.yaml").is_file():
        raise RuntimeError("kolaw-feedback needs the kolaw-dev set's --auto config: run --sets kolaw-dev kolaw-feedback")
    halves = parts.split_halves(r.data / "kolaw-dev" / "questions.jsonl", w / "halves")
    batch = w / "batch-calib.jsonl"
    batch.unlink(missing_ok=True)
    r.rag(name, "batch-calib", "batch", w / "halves" / "calib.jsonl", "-o", batch, "--config", w / "kolaw-dev.auto.yaml")
    counts = parts.label_batch(r.data / "kolaw-dev", batch, w / "batch-calib-labelled.jsonl")
    r.rag(name, "feedback", "calibrate", "--from-batch", w / "batch-calib-labelled.jsonl",
          "--config", w / "kolaw-dev.auto.yaml", "--out", w / "kolaw-dev.feedback.yaml", "--report", w / "report-feedback")
    variants = {}
    for v in ("shipped", "auto", "feedback"):
        cfg = r.config("kolaw-dev") if v == "shipped" else w / f"kolaw-dev.{v}.yaml"
        rows = r.answers(name, f"eval-half-{v}", cfg, "--only-questions", "--questions", w / "halves" / "eval.jsonl")
        variants[v] = {"thresholds": _thresholds(cfg), "eval_half": parts.answer_rates(rows)}
    return {"halves": halves, "labels": {" / ".join(k): n for k, n in sorted(counts.items())}, "variants": variants}


_DEMO_LINE = re.compile(r"answered with the expected document cited: (\d+)/(\d+) answerable questions; "
                        r"abstained: (\d+)/(\d+) unanswerable questions; checks passed[^:]*: (\d+)/(\d+)")


def _demo(r: _Run) -> dict[str, Any]:
    name, w = "demo", r.folder("demo")
    parts.write_swapped_config(r.base, r.config(name), index=w / "index", cache=w / "cache")
    r.index(name)
    auto = parts.auto_summary(r.auto(name))
    variants = {}
    for v in ("shipped", "auto"):
        cfg = r.config(name) if v == "shipped" else w / f"{name}.auto.yaml"
        text = r.rag(name, f"demo-{v}", "demo", "--config", cfg, "--questions", repo_path("data/demo/questions.jsonl"))
        m = _DEMO_LINE.search(text)
        if m is None:
            raise RuntimeError(f"rag demo printed no tally line (log: {w / f'demo-{v}.log'})")
        a, na, u, nu, c, nc = map(int, m.groups())
        variants[v] = {"thresholds": _thresholds(cfg), "answered_expected": a, "answerable": na,
                       "abstained": u, "unanswerable": nu, "checks_passed": c, "checks": nc}
    return {"auto": auto, "variants": variants}


def _dataset(r: _Run, name: str) -> Path:
    return r.data / ("nomiracl/ko.test.jsonl" if name.startswith("nomiracl") else "squad2/dev-v2.0-half.json")


def _abstention(r: _Run, name: str) -> dict[str, Any]:
    w, ds = r.folder(name), _dataset(r, name)
    parts.write_pooled_corpus(ds, w / "corpus.jsonl")
    parts.write_swapped_config(r.base, r.config(name), index=w / "index", cache=w / "cache", corpus=w / "corpus.jsonl")
    limit = ("--max-questions", str(r.o.squad2_max_questions)) if name == "squad2" and r.o.squad2_max_questions else ()
    r.index(name)
    report = r.auto(name)
    r.rag(name, "calibrate-labels", "calibrate", "--dataset", ds, "--split", "calib", "--target-precision",
          str(r.o.target_precision), "--config", r.config(name), "--out", w / f"{name}.labels.yaml",
          "--report", w / "report-labels", *limit)
    labels = json.loads((w / "report-labels" / "calibration.json").read_text(encoding="utf-8"))
    import yaml

    configured = (yaml.safe_load(r.base.read_text(encoding="utf-8")).get("gate") or {}).get("signal", "probability")
    runs: dict[str, tuple[Path, list[str]]] = {
        "shipped": (r.config(name), []), "auto": (w / f"{name}.auto.yaml", []),
        "labels": (w / f"{name}.labels.yaml", [])}
    sets = parts.configured_fit(report, configured)
    if sets:
        runs["auto-configured"] = (r.config(name), sets)
    variants = {}
    for v, (cfg, over) in runs.items():
        out = w / f"eval-{v}.json"
        r.rag(name, f"eval-{v}", "eval-abstention", "--dataset", ds, "--config", cfg, "--split", "eval",
              "--json", out, *over, *limit)
        d = json.loads(out.read_text(encoding="utf-8"))
        variants[v] = {k: d.get(k) for k in ("signal", "threshold", "n", "abstained_when_unanswerable",
                                             "answered_when_answerable", "precision_of_answered", "auroc",
                                             "signals_auroc")}
    return {"auto": parts.auto_summary(report), "labels_fit": parts.labels_fit_summary(labels), "variants": variants}


def _timing_1k(r: _Run) -> dict[str, Any]:
    name, w = "nomiracl-ko-1k", r.folder("nomiracl-ko-1k")
    parts.write_pooled_corpus(_dataset(r, name), w / "corpus.jsonl", limit=1000)
    parts.write_swapped_config(r.base, r.config(name), index=w / "index", cache=w / "cache", corpus=w / "corpus.jsonl")
    r.index(name, fresh=True)
    return {"auto": parts.auto_summary(r.auto(name))}


def _run_set(r: _Run, name: str) -> dict[str, Any]:
    if name == "kolaw-dev":
        return _kolaw_dev(r)
    if name == "kolaw-feedback":
        return _kolaw_feedback(r)
    if name == "demo":
        return _demo(r)
    if name == "nomiracl-ko-1k":
        return _timing_1k(r)
    return _abstention(r, name)


def run(o: Options) -> Outcome:
    from rag.bench.gate_auto_table import table

    unknown = sorted(set(o.sets) - set(SETS))
    if unknown:
        raise ValueError(f"--sets: unknown {unknown}; known: {', '.join(SETS)}")
    with tempfile.TemporaryDirectory(prefix="rag-bench-gate-auto-") as tmp:
        r = _Run(o, Path(o.work).resolve() if o.work else Path(tmp))
        results = {}
        for name in (s for s in SETS if s in o.sets):
            log.info("gate-auto: %s", name)
            results[name] = _run_set(r, name)
        for name, steps in r.steps.items():
            results[name]["steps"] = {k: vars(s) for k, s in steps.items()}
    return Outcome({"sets": results}, table(results))


def _requires(o: Options) -> list[str]:
    data = Path(o.data) if o.data else data_dir()
    need = {"kolaw-dev": data / "kolaw-dev" / "questions.jsonl", "kolaw-feedback": data / "kolaw-dev" / "questions.jsonl",
            "nomiracl-ko": data / "nomiracl/ko.test.jsonl", "nomiracl-ko-1k": data / "nomiracl/ko.test.jsonl",
            "squad2": data / "squad2/dev-v2.0-half.json"}
    return [f"{name} needs {need[name]}" for name in o.sets if name in need and not need[name].is_file()]


MEASUREMENT = Measurement("gate-auto", "rag calibrate --auto (no labels) vs the shipped and label-fitted thresholds, "
                          "scored with the labels after fitting", Options, run, _requires)
