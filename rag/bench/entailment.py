"""The entailment head (docs/reader.md#the-entailment-head): its accuracy on the held-back NLI pairs (XNLI-ko
test, the SNLI test subset), and what it changes in the validator's claim checks — claims accepted per label,
today's checks against today's checks plus ``validation.check_entailment``, on kolaw-dev's labelled claims,
SciFact's SUPPORT / CONTRADICT claims with rationales and WiCE's claims (rag.evaluation.claim_sets), and the
model's cost per claim.

Needs the built NLI data (``rag reader nli build`` -> data/cache/nli/pairs.jsonl) and ../shared/data (or
``--data``) for the claims; ``rag bench check`` skips it, with the reason, when either is absent.
"""
from __future__ import annotations

import statistics
import time
from dataclasses import dataclass, field
from pathlib import Path

from rag.bench.harness import data_dir, repo_path
from rag.bench.measurement import Measurement, Outcome
from rag.lang.ko import samples as ko_samples


@dataclass(frozen=True)
class Options:
    data: str = field(default="", metadata={"help": "data folder (default ../shared/data or $RAG_DATA_DIR)"})
    nli: str = field(default="data/cache/nli/pairs.jsonl", metadata={"help": "built NLI pairs (rag reader nli build)"})
    config: str = field(default="configs/default.yaml", metadata={"help": "the validation settings read"})
    model: str = field(default="", metadata={"help": "entailment model folder (default: the bundled one)"})


def _claim_rates(o: Options, data: Path, entail) -> dict:
    from rag.answer.validation import CitationValidator
    from rag.config import load_config
    from rag.evaluation.claim_sets import accepted, scifact_claims, wice_claims
    from rag.evaluation.claims import eval_claims

    cfg = load_config(repo_path(o.config))
    on = cfg.validation.model_copy(update={"check_entailment": True})
    out: dict[str, dict] = {}
    kolaw = data / "kolaw-dev" / "claims.jsonl"
    if kolaw.is_file():
        rows = {}
        for name, c in (("today", cfg), ("with_entailment", cfg.model_copy(update={"validation": on}))):
            rep = eval_claims(kolaw, c, entailment=entail if name != "today" else None)
            rows[name] = {k: {"n": v.n, "accepted_n": v.accepted, "accepted": round(v.rate, 4)}
                          for k, v in rep.by_label.items()}
        out["kolaw-dev"] = rows
    for name, reader in (("scifact", scifact_claims), ("wice", wice_claims)):
        claims = reader(data)
        out[name] = {"today": accepted(claims, CitationValidator(cfg.validation)),
                     "with_entailment": accepted(claims, CitationValidator(on, entailment=entail))}
    return out


def run(o: Options) -> Outcome:
    from rag.reader.nli import evaluate
    from rag.rerank.entailment import EntailmentModel, model_dir

    data = Path(o.data) if o.data else data_dir()
    folder = model_dir(o.model or None, repo_path("."))
    model = EntailmentModel(folder)
    result: dict = {"model": str(folder.relative_to(repo_path("."))) if folder.is_relative_to(repo_path("."))
                    else str(folder)}
    lines = []
    scores = evaluate(folder, repo_path(o.nli), "eval")
    result["nli_eval"] = {s.source: s.to_json() for s in scores}
    lines += ["| NLI eval source | pairs | accuracy |", "|---|---|---|"]
    lines += [f"| {s.source} | {s.n} | {s.accuracy:.4f} |" for s in scores]
    rates = _claim_rates(o, data, model.probabilities)
    result["claims"] = rates
    lines += ["", "| claims | label | n | accepted today | with the entailment check |", "|---|---|---|---|---|"]
    for name, r in rates.items():
        for lab, v in r["today"].items():
            lines.append(f"| {name} | {lab} | {v['n']} | {v['accepted']:.3f} | {r['with_entailment'][lab]['accepted']:.3f} |")
    pairs = [ko_samples.ENTAILMENT_PAIR] * 5
    model.probabilities(pairs[:1])
    times = []
    for _ in range(20):
        t0 = time.perf_counter()
        model.probabilities(pairs)
        times.append((time.perf_counter() - t0) * 1000)
    result["ms_per_answer_of_5_claims_p50"] = round(statistics.median(times), 2)
    lines.append(f"\ncost: {result['ms_per_answer_of_5_claims_p50']} ms p50 for an answer of 5 claims (int8)")
    return Outcome(result, "\n".join(lines))


def _requires(o: Options) -> list[str]:
    data = Path(o.data) if o.data else data_dir()
    missing = []
    if not (data / "scifact").is_dir() or not (data / "wice").is_dir():
        missing.append(f"SciFact and WiCE not found under {data}")
    if not repo_path(o.nli).is_file():
        missing.append(f"{o.nli} not built (rag reader nli build --from DIR; docs/reader.md#the-entailment-head)")
    return missing


MEASUREMENT = Measurement("entailment", "the entailment head: NLI accuracy held back, and claims accepted with it",
                          Options, run, _requires)
