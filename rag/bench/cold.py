"""The first answer from a fresh ``rag ask`` process (issue 42: a cold answer within 2 s).

1. The demo corpus is indexed once into a temporary folder with ``--config`` (not timed).
2. ``--runs`` times, for a Korean and an English demo question in turn, a new process runs
   ``python -m rag.cli ask QUESTION --config C --set index.path=…``: the whole command is timed
   from outside (interpreter start, imports, the index and the models loaded, the answer printed).
3. Per language: median, min and max seconds, and whether every run answered the same (status and
   cited evidence ids, from ``--json``).

The English question loads the cross-encoder (``rerank.languages: [en]``), the Korean one the
kiwipiepy analyzer the gate reads the question with; neither is loaded by the other.
"""
from __future__ import annotations

import json
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from rag.bench.harness import repo_path
from rag.bench.measurement import Measurement, Outcome
from rag.lang.en import samples as en_samples
from rag.lang.ko import samples as ko_samples


@dataclass(frozen=True)
class Options:
    config: str = field(default="configs/default.yaml", metadata={"help": "the config asked with"})
    runs: int = field(default=5, metadata={"help": "fresh processes per question"})


def _questions() -> dict[str, str]:
    return {"ko": ko_samples.LANGUAGE_QUESTIONS[0], "en": en_samples.LANGUAGE_QUESTIONS[0]}


def _ask(config: Path, index: str, question: str) -> tuple[float, str]:
    """Wall seconds of one ``rag ask`` process, and what it answered (status and cited evidence)."""
    cmd = [sys.executable, "-m", "rag.cli", "ask", question, "--config", str(config), "--json",
           "--set", f"index.path={index}"]
    t0 = time.perf_counter()
    done = subprocess.run(cmd, capture_output=True, text=True, cwd=str(repo_path(".")))
    seconds = time.perf_counter() - t0
    if done.returncode != 0:
        raise RuntimeError(f"rag ask exited {done.returncode}: {done.stderr[-500:]}")
    res = json.loads(done.stdout)
    cited = ",".join(str(c.get("evidence_id", "")) for c in res.get("citations", []))
    return seconds, f"{res['status']}:{cited}"


def run(o: Options) -> Outcome:
    from rag.config import load_config
    from rag.pipeline import Pipeline

    config = repo_path(o.config)
    cfg = load_config(config)
    out: dict[str, dict[str, object]] = {}
    with tempfile.TemporaryDirectory(prefix="rag-bench-cold-") as tmp:
        index = str(Path(tmp) / "index")
        Pipeline(cfg.with_overrides({"index.path": index})).build_index()
        times: dict[str, list[float]] = {lang: [] for lang in _questions()}
        answers: dict[str, set[str]] = {lang: set() for lang in _questions()}
        for _ in range(o.runs):  # the languages alternate, so a busy moment falls on both
            for lang, q in _questions().items():
                s, a = _ask(config, index, q)
                times[lang].append(s)
                answers[lang].add(a)
    for lang, ts in times.items():
        out[lang] = {"question": _questions()[lang], "runs": len(ts), "median_s": round(statistics.median(ts), 2),
                     "min_s": round(min(ts), 2), "max_s": round(max(ts), 2), "same_answer": len(answers[lang]) == 1}
    lines = [f"a fresh `rag ask` process ({o.config}, {o.runs} runs per question), wall seconds",
             f"{'lang':<6}{'median':>8}{'min':>8}{'max':>8}  same answer"]
    lines += [f"{lang:<6}{r['median_s']:>8.2f}{r['min_s']:>8.2f}{r['max_s']:>8.2f}  {r['same_answer']}"
              for lang, r in out.items()]
    return Outcome({"languages": out}, "\n".join(lines), cfg.results_hash)


MEASUREMENT = Measurement("cold", "the first answer from a fresh `rag ask` process, Korean and English, wall seconds",
                          Options, run)
