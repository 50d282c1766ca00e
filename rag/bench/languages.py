"""Answer latency by language pair on the demo: Korean over Korean, English over Korean, English
over English, with the shipped reranker rule beside the one before it.

1. The demo corpus is indexed once into a temporary folder with ``--config``.
2. For each rule, a fresh :class:`Pipeline` on that index answers an untimed warm-up question
   in each language (model loads), then every question of the three sets once: the reranker caches the scores of
   a (question, passage) pair, so a repeated question would measure the cache.
   - ``shipped``: the config as given (the English-only reranker reads English passages only:
     ``rerank.passage_languages`` unset);
   - ``before``: ``rerank.passage_languages: [en, ko]`` (the English-only reranker scored every
     passage an English question retrieved, Korean ones too).
3. The first question after start-up: for each rule a new Python process opens the index and
   answers ``EN_KO[0]``; the time of that answer, model loads included.
4. Per rule and set: p50 / p95 of ``Pipeline.answer`` in milliseconds (no LLM: the extractive
   generator), and the share of questions the reranker applied to.
"""
from __future__ import annotations

import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from rag.bench.harness import latency_summary, repo_path
from rag.bench.measurement import Measurement, Outcome
from rag.lang.en import samples as en_samples
from rag.lang.ko import samples as ko_samples

KO = ko_samples.LANGUAGE_QUESTIONS
EN_KO = en_samples.LANGUAGE_QUESTIONS_ON_KOREAN  # the same Korean-only documents asked in English
EN = en_samples.LANGUAGE_QUESTIONS
SETS = {"ko->ko": KO, "en->ko": EN_KO, "en->en": EN}
RULES = {"shipped": {}, "before": {"rerank.passage_languages": ["en", "ko"]}}


@dataclass(frozen=True)
class Options:
    config: str = "configs/default.yaml"


FIRST = """
import sys, time
from rag.config import load_config
from rag.pipeline import Pipeline
cfg = load_config(sys.argv[1]).with_overrides(__import__("json").loads(sys.argv[2]))
p = Pipeline(cfg)
t0 = time.perf_counter()
p.answer(sys.argv[3])
print((time.perf_counter() - t0) * 1000)
"""


def _first(config: Path, overrides: dict) -> float:
    """Milliseconds of the first answer in a new process (model loads included)."""
    import json
    import subprocess
    import sys

    out = subprocess.run([sys.executable, "-c", FIRST, str(config), json.dumps(overrides), EN_KO[0]],
                         capture_output=True, text=True, check=True, cwd=str(repo_path(".")))
    return round(float(out.stdout.strip().splitlines()[-1]), 1)


def _rule(cfg, index_path: str, overrides: dict) -> dict[str, object]:
    from rag.pipeline import Pipeline

    p = Pipeline(cfg.with_overrides({**overrides, "index.path": index_path}))
    for q in (en_samples.LANGUAGE_WARMUP_QUESTION, ko_samples.LANGUAGE_WARMUP_QUESTION):  # loads for both languages
        p.answer(q)
    out: dict[str, object] = {}
    for name, questions in SETS.items():
        times, applied = [], 0
        for q in questions:
            t0 = time.perf_counter()
            r = p.answer(q)
            times.append((time.perf_counter() - t0) * 1000)
            applied += bool(r.trace and r.trace.rerank_applied)
        out[name] = {**latency_summary(times, 1), "rerank_applied": round(applied / len(times), 2)}
    return out


def run(o: Options) -> Outcome:
    from rag.config import load_config
    from rag.pipeline import Pipeline

    cfg = load_config(repo_path(o.config))
    with tempfile.TemporaryDirectory(prefix="rag-bench-lang-") as tmp:
        index = str(Path(tmp) / "index")
        Pipeline(cfg.with_overrides({"index.path": index})).build_index()
        rules = {name: _rule(cfg, index, ov) for name, ov in RULES.items()}
        for name, ov in RULES.items():
            rules[name]["first_question_ms"] = _first(repo_path(o.config), {**ov, "index.path": index})
    lines = [f"Pipeline.answer on the demo ({o.config}), ms; {len(KO)} questions per set, each once",
             f"{'rule':<9}{'set':<8}{'p50':>9}{'p95':>9}{'reranked':>10}"]
    for name, r in rules.items():
        for s in SETS:
            x = r[s]
            lines.append(f"{name:<9}{s:<8}{x['p50']:>9.1f}{x['p95']:>9.1f}{x['rerank_applied']:>10.2f}")
        lines.append(f"{name:<9}{'first question after start-up':<33}{r['first_question_ms']:>9.1f}")
    return Outcome(rules, "\n".join(lines))


MEASUREMENT = Measurement("languages", "answer latency by language pair (ko->ko, en->ko, en->en) on the demo, the "
                          "shipped reranker rule beside the one before it", Options, run)
