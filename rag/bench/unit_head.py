"""The learned unit head on held-back reader questions: how often the best unit of a question's bundle holds
the answer (the bundled head against today's hand-weighted score on the same units), and the AUROC of the
best score for "answerable" (SQuAD 2.0) — the numbers of docs/reader.md#the-learned-unit-head, for
``rag bench check``.

Needs the built reader data (``rag reader data build`` -> data/cache/reader). Same rows and measures as
``rag reader train-units`` (rag.evaluation.unit_training), computed afresh (no cache) so the check reads the
current code.
"""
from __future__ import annotations

import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from rag.bench.harness import repo_path
from rag.bench.measurement import Measurement, Outcome


@dataclass(frozen=True)
class Options:
    data: str = "data/cache/reader"
    config: str = field(default="configs/default.yaml", metadata={"help": "the generator and embedder read"})
    split: str = field(default="eval", metadata={"help": "eval (report) or calib"})
    per_source: int = field(default=600, metadata={"help": "questions per source (KorQuAD, SQuAD 2.0)"})


def run(o: Options) -> Outcome:
    from rag.answer.extractive import ExtractiveGenerator
    from rag.answer.unit_head import UnitHead
    from rag.config import load_config
    from rag.evaluation import unit_training as ut
    from rag.models.embedders import make_embedder
    from rag.pipeline.components import embedding_scorer

    cfg = load_config(repo_path(o.config))
    gen = ExtractiveGenerator(cfg.generation, embedding_scorer(make_embedder(cfg.embedding)), validation=cfg.validation)
    questions = ut.unit_questions(repo_path(o.data), o.split, o.per_source)
    with tempfile.TemporaryDirectory() as tmp:
        rows = ut.build_rows(gen, questions, Path(tmp) / o.split)
    report = ut.measure(rows, UnitHead.load())
    lines = ["| source | questions | top-1 head | top-1 rules | answerable AUROC head | rules |", "|---|---|---|---|---|---|"]
    lines += [f"| {s} | {r['questions']} | {r['head_top1']} | {r['rules_top1']} | {r['head_answerable_auroc']} | "
              f"{r['rules_answerable_auroc']} |" for s, r in report.items()]
    return Outcome({"split": o.split, "per_source": o.per_source, "sources": report}, "\n".join(lines))


def _requires(o: Options) -> list[str]:
    if not (repo_path(o.data) / "manifest.json").is_file():
        return [f"the reader data is not built at {o.data} (run `rag reader data build`)"]
    return []


MEASUREMENT = Measurement("unit-head", "the learned unit head vs the hand-weighted score on held-back reader questions",
                          Options, run, _requires)
