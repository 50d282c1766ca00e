"""Where an answer's time goes, step by step, on real questions (issue 42, item 1): warm ``Pipeline.answer``
without an LLM, one process, questions one after another.

Three groups, each over an index built in memory once:

- ``ko``: kolaw-dev's Korean questions over its statutes (``kolaw-dev/corpus.jsonl``: two versions of one law);
- ``en-over-ko``: the same questions in English (``data/dev/kolaw-en``) over the same Korean statutes;
- ``en``: the demo's English questions over the demo corpus (no English statute set is here).

Per group: p50 / p95 of every step the trace names (``start``, the request path's steps, ``result``), of the
total, and of ``unnamed`` (the part of the total no step recorded), with the unnamed share of all the time
spent. The first ``--warmup`` questions of each group are answered untimed first (model loads).

``--against KEY=VALUE,...`` answers every question a second time with those config overrides, side by side
with the config (each with its own models, over the same index; which of the two answers first alternates
per question, as the second reads text caches the first filled): the same table for it under ``against``,
and how many results (status, answer, cited evidence) were identical.
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
    against: str = field(default="", metadata={
        "help": "config overrides KEY=VALUE[,KEY=VALUE] answered side by side with the config (e.g. rerank.quantize=false)"})


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
    from rag.lang import detect_language

    qs = [str(r["question"]) for _, r in read_jsonl(g.questions)]
    return [q for q in qs if g.lang is None or detect_language(q) == g.lang]


class _Tally:
    """Per-step milliseconds, totals, unnamed time and statuses of one config's answers."""

    def __init__(self) -> None:
        self.steps: dict[str, list[float]] = {}
        self.totals: list[float] = []
        self.unnamed: list[float] = []
        self.statuses: dict[str, int] = {}

    def add(self, res) -> tuple:
        self.statuses[res.status] = self.statuses.get(res.status, 0) + 1
        for name, ms in res.trace.steps:
            self.steps.setdefault(name, []).append(ms)
        self.totals.append(res.trace.timings_ms["total"])
        self.unnamed.append(res.trace.timings_ms["unnamed"])
        return res.status, res.answer, tuple(c.evidence_id for c in res.citations)

    def to_json(self) -> dict:
        t = self.totals
        return {"questions": len(t), "statuses": dict(sorted(self.statuses.items())),
                "steps": {name: latency_summary(v) for name, v in self.steps.items()},
                "total": latency_summary(t), "unnamed": latency_summary(self.unnamed),
                "unnamed_share": round(sum(self.unnamed) / sum(t), 4) if t else float("nan")}


def _measure(o: Options, g: Group) -> dict:
    from rag.config import load_config, parse_overrides
    from rag.pipeline import Pipeline

    cfg = load_config(repo_path(o.config)).with_overrides({"corpus.paths": [str(g.corpus)], "corpus.format": "jsonl"})
    probe = Pipeline(cfg)
    index = probe.new_index(probe.load_corpus())
    variants = {"config": Pipeline(cfg, embedder=probe.components.embedder, index=index)}
    if o.against:
        other = cfg.with_overrides(parse_overrides([x for x in o.against.split(",") if x.strip()], "--against"))
        variants["against"] = Pipeline(other, index=index)  # its own models (and query cache)
    questions = _questions(g)
    for p in variants.values():
        for q in questions[:o.warmup]:
            p.answer(q)
    tallies = {name: _Tally() for name in variants}
    identical = 0
    for i, q in enumerate(questions):
        order = list(variants.items())
        if i % 2:  # alternate which config answers first: the second reads text caches the first filled
            order.reverse()
        seen = {name: tallies[name].add(p.answer(q)) for name, p in order}
        identical += len(set(seen.values())) == 1
    out = tallies["config"].to_json()
    if "against" in tallies:
        out["against"] = {"overrides": o.against, **tallies["against"].to_json(), "identical_results": identical}
    return out


def run(o: Options) -> Outcome:
    from rag.config import load_config

    result = {g.name: _measure(o, g) for g in _groups(o)}
    lines = []
    for name, r in result.items():
        a = r.get("against")
        lines.append(f"{name}: {r['questions']} questions, {r['statuses']}; unnamed {100 * r['unnamed_share']:.2f} % "
                     "of the time" + (f"; against {a['overrides']}: {a['statuses']}, {a['identical_results']} "
                                      "identical results" if a else ""))
        lines.append(f"{'step (ms)':<14}{'p50':>10}{'p95':>10}" + (f"{'against p50':>14}{'p95':>10}" if a else ""))
        rows = list(r["steps"]) + ["unnamed", "total"]
        for s in rows:
            v = r["steps"].get(s) or r.get(s)
            line = f"{s:<14}{v['p50']:>10.2f}{v['p95']:>10.2f}"
            if a:
                w = a["steps"].get(s) or a.get(s)
                line += f"{w['p50']:>14.2f}{w['p95']:>10.2f}" if isinstance(w, dict) else f"{'-':>14}{'-':>10}"
            lines.append(line)
        lines.append("")
    return Outcome({"groups": result}, "\n".join(lines).rstrip(), load_config(repo_path(o.config)).hash)


def _requires(o: Options) -> list[str]:
    return [f"{g.name}: {path} not found" for g in _groups(o) for path in (g.corpus, g.questions) if not path.is_file()]


MEASUREMENT = Measurement("e2e-steps", "warm answers without an LLM, per named step, on Korean, English-over-Korean "
                          "and English questions; the unnamed share of the time", Options, run, _requires)
