"""The neural reader on the reader data's held-back groups: MRR and accuracy at 1 of the positive per
source / kind / language pair (passages: the answering window among 7 mined ones; sentences: the answer
sentence among 7 others), and the AUROC of a question's best score for "answerable here" (SQuAD 2.0,
NoMIRACL-ko, SciFact), int8 at 192 tokens — the numbers of docs/reader.md, for ``rag bench check``.

Needs the built reader data (``rag reader data build`` -> data/cache/reader). Same measures as
``rag reader eval-model`` (rag.reader.neural_eval).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from rag.bench.harness import repo_path
from rag.bench.measurement import Measurement, Outcome


@dataclass(frozen=True)
class Options:
    model: str = field(default="reader", metadata={"help": "reader, e5-ko-en, minilm or a model folder"})
    data: str = "data/cache/reader"
    split: str = field(default="eval", metadata={"help": "eval (report) or calib"})
    per_key: int = field(default=50, metadata={"help": "groups per source/kind/language pair"})
    max_length: int = 192


def run(o: Options) -> Outcome:
    from rag.config import RerankConfig
    from rag.reader import neural_eval as ne
    from rag.rerank import CrossEncoderScorer

    groups = ne.eval_groups(repo_path(o.data), o.per_key, split=o.split)
    scored = ne.score_groups(groups, ne.pair_scorer(o.model, o.max_length))
    keys = {r.key.replace("/", "_"): {"groups": r.groups, "mrr": r.mrr, "acc_at_1": r.acc_at_1}
            for r in ne.key_reports(scored)}
    aurocs = ne.answerable_auroc(scored)
    model_id = CrossEncoderScorer(RerankConfig(model=o.model, quantize=True)).model_id
    out = {"model": model_id, "split": o.split, "per_key": o.per_key, "groups": len(groups),
           "keys": keys, "answerable_auroc": aurocs}
    table = [ne.table({o.model: ne.key_reports(scored)}), "",
             "answerable AUROC: " + ", ".join(f"{k} {v:.3f}" for k, v in aurocs.items() if v is not None)]
    return Outcome(out, "\n".join(table))


def _requires(o: Options) -> list[str]:
    if not (repo_path(o.data) / "manifest.json").is_file():
        return [f"the reader data is not built at {o.data} (run `rag reader data build`)"]
    if o.model not in ("reader", "e5-ko-en", "minilm", "default") and not Path(o.model).is_dir():
        return [f"model folder {o.model} not found"]
    return []


MEASUREMENT = Measurement("reader", "the neural reader on held-back reader groups (MRR, acc@1, answerable AUROC)",
                          Options, run, _requires)
