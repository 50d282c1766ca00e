"""Where an answer's time goes, step by step, on real questions (issue 42, item 1): warm ``Pipeline.answer``
without an LLM, one process, questions one after another.

Three groups, each over an index built in memory once:

- ``ko``: kolaw-dev's Korean questions over its statutes (``kolaw-dev/corpus.jsonl``: two versions of one law);
- ``en-over-ko``: the same questions in English (``data/dev/kolaw-en``) over the same Korean statutes;
- ``en``: the demo's English questions over the demo corpus (no English statute set is here).

Per group: p50 / p95 of every step the trace names (``start``, the request path's steps, ``result``), of the
total, and of ``unnamed`` (the part of the total no step recorded), with the unnamed share of all the time
spent. The first ``--warmup`` questions of each group are answered untimed first (model loads).
"""
from __future__ import annotations

import logging
from dataclasses import dataclass, field
from pathlib import Path

from rag.bench.harness import data_dir, latency_summary, repo_path
from rag.bench.measurement import Measurement, Outcome

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class Options:
    config: str = "configs/default.yaml"
    data: str = field(default="", metadata={"help": "data folder holding kolaw-dev/ (default ../shared/data)"})
    warmup: int = field(default=3, metadata={"help": "questions answered untimed first in each group"})


@dataclass(frozen=True)
class Group:
    name: str
    corpus: Path
    questions: Path
    lang: str | None  # keep only questions detected in this language (None: all)


def _groups(o: Options) -> tuple[Group, ...]:
    data = Path(o.data) if o.data else data_dir()
    kolaw = data / "kolaw-dev" / "corpus.jsonl"
    return (Group("ko", kolaw, data / "kolaw-dev" / "questions.jsonl", None),
            Group("en-over-ko", kolaw, repo_path("data/dev/kolaw-en/questions.jsonl"), None),
            Group("en", repo_path("data/demo/documents.jsonl"), repo_path("data/demo/questions.jsonl"), "en"))


def _questions(g: Group) -> list[str]:
    from rag._io import read_jsonl
    from rag.text.lang import detect_language

    qs = [str(r["question"]) for _, r in read_jsonl(g.questions)]
    return [q for q in qs if g.lang is None or detect_language(q) == g.lang]


def _measure(o: Options, g: Group) -> dict:
    from rag.config import load_config
    from rag.pipeline import Pipeline

    cfg = load_config(repo_path(o.config)).with_overrides({"corpus.paths": [str(g.corpus)], "corpus.format": "jsonl"})
    probe = Pipeline(cfg)
    p = Pipeline(cfg, embedder=probe.embedder, index=probe.new_index(probe.load_corpus()))
    questions = _questions(g)
    for q in questions[:o.warmup]:
        p.answer(q)
    steps: dict[str, list[float]] = {}
    totals, unnamed, statuses = [], [], {}
    for q in questions:
        res = p.answer(q)
        statuses[res.status] = statuses.get(res.status, 0) + 1
        for name, ms in res.trace.steps:
            steps.setdefault(name, []).append(ms)
        totals.append(res.trace.timings_ms["total"])
        unnamed.append(res.trace.timings_ms["unnamed"])
    return {"questions": len(questions), "statuses": dict(sorted(statuses.items())),
            "steps": {name: latency_summary(v) for name, v in steps.items()},
            "total": latency_summary(totals), "unnamed": latency_summary(unnamed),
            "unnamed_share": round(sum(unnamed) / sum(totals), 4) if totals else float("nan")}


def run(o: Options) -> Outcome:
    from rag.config import load_config

    result = {g.name: _measure(o, g) for g in _groups(o)}
    lines = []
    for name, r in result.items():
        lines += [f"{name}: {r['questions']} questions, {r['statuses']}; unnamed {100 * r['unnamed_share']:.2f} % of the time",
                  f"{'step (ms)':<14}{'p50':>10}{'p95':>10}"]
        rows = list(r["steps"].items()) + [("unnamed", r["unnamed"]), ("total", r["total"])]
        lines += [f"{s:<14}{v['p50']:>10.2f}{v['p95']:>10.2f}" for s, v in rows]
        lines.append("")
    return Outcome({"groups": result}, "\n".join(lines).rstrip(), load_config(repo_path(o.config)).hash)


def _requires(o: Options) -> list[str]:
    return [f"{g.name}: {path} not found" for g in _groups(o) for path in (g.corpus, g.questions) if not path.is_file()]


MEASUREMENT = Measurement("e2e-steps", "warm answers without an LLM, per named step, on Korean, English-over-Korean "
                          "and English questions; the unnamed share of the time", Options, run, _requires)
