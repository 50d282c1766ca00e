"""Seed 001's experiment: what the validator and bounded regeneration do for a real local LLM,
next to the extractive default, on kolaw-dev and the demo questions.

For every configuration (``--configs``) and question set it answers each question with
:meth:`rag.pipeline.Pipeline.answer` and records, per question:

- whether a generator was called at all (the gate and the context can abstain before it);
- the first attempt: parsed status, whether it validated, and, when it said ``answered`` but was
  rejected, whether its answer was *actually wrong* (see :func:`attempt_wrong`);
- the final outcome (status, reason, attempts used), scored as ``rag eval-answers`` scores it
  (kolaw-dev) or as ``rag demo`` does (demo questions), and the seconds the answer took.

Table columns (per configuration and set):

- ``first valid``: called questions whose first attempt validated / called questions;
- ``valid after regen``: called questions answered with validated citations after at most
  ``generation.max_attempts`` attempts / called questions;
- ``answered validated``: answered questions whose citations all validated / answered (by
  construction 1.0: an answer that fails validation is returned as ``insufficient_evidence``);
- ``rejected wrong``: rejected ``answered`` attempts that were actually wrong / rejected ``answered`` attempts;
- accuracy (answerable), abstained (unanswerable), precision of answered, s/answer (median).

An attempt is *actually wrong* when its question is unanswerable, or when it misses a gold fact
(kolaw-dev ``answer_facts``, demo ``expected_facts``) or cites no source of the gold document.

Usage::

    python scripts/seed001_experiment.py --configs configs/default.yaml configs/local-llm.yaml \\
        --out results/seed001_experiment.json

``--limit N`` answers only the first N questions of each set (a smoke run).
"""
from __future__ import annotations

import argparse
import collections
import json
import statistics
import sys
import tempfile
import time
from dataclasses import asdict, dataclass
from pathlib import Path

from rag._io import read_jsonl
from rag.answer.contract import parse_payload
from rag.config import load_config
from rag.evaluation.faithfulness import fact_found, load_answer_dataset, score_answer
from rag.pipeline import Pipeline

ROOT = Path(__file__).resolve().parent.parent
KOLAW = ROOT.parent / "shared" / "data" / "kolaw-dev"
DEMO_QUESTIONS = ROOT / "data" / "demo" / "questions.jsonl"


@dataclass(frozen=True)
class Gold:
    answerable: bool
    doc_ids: tuple[str, ...]
    facts: tuple[str, ...]
    forbidden_doc: str | None = None  # demo "poisoned" check: never cite it, never state its planted text
    forbidden_text: tuple[str, ...] = ()


@dataclass(frozen=True)
class Row:
    set: str
    id: str
    kind: str  # answerable, unanswerable, poisoned (demo check: answered or not, never the planted claim)
    called: bool
    attempts: int
    first_status: str | None
    first_valid: bool
    first_rejected_answered: bool
    first_rejected_wrong: bool | None
    rejected_answered: int  # rejected attempts that said "answered"
    rejected_wrong: int  # of those, actually wrong
    status: str
    reason: str
    correct: bool
    seconds: float


def attempt_wrong(gold: Gold, payload, source_docs: dict[str, str]) -> bool:
    """Whether an ``answered`` payload is wrong on its content, whatever the validator said."""
    cited = {source_docs.get(c.source_id) for c in payload.citations}
    if gold.forbidden_doc:
        return gold.forbidden_doc in cited or any(fact_found(t, payload.answer) for t in gold.forbidden_text)
    if not gold.answerable:
        return True
    if not cited & set(gold.doc_ids):
        return True
    return not all(fact_found(f, payload.answer) for f in gold.facts)


def run_one(p: Pipeline, set_name: str, qid: str, question: str, gold: Gold, correct_of, *,
            poisoned: bool = False) -> Row:
    t0 = time.perf_counter()
    res = p.answer(question)
    seconds = time.perf_counter() - t0
    attempts = tuple(res.trace.attempts)
    manifest = res.trace.manifest
    source_docs = {b["source_id"]: b["document_id"] for b in manifest.blocks} if manifest is not None else {}
    rej_answered = rej_wrong = 0
    first_wrong: bool | None = None
    for k, a in enumerate(attempts):
        if a.ok:
            continue
        parsed = parse_payload(a.raw_text).payload
        if parsed is None or parsed.status != "answered":
            continue
        rej_answered += 1
        wrong = attempt_wrong(gold, parsed, source_docs)
        rej_wrong += wrong
        if k == 0:
            first_wrong = wrong
    first = attempts[0] if attempts else None
    return Row(set_name, qid, "poisoned" if poisoned else "answerable" if gold.answerable else "unanswerable",
               bool(attempts), len(attempts), first.status if first else None,
               bool(first and first.ok and first.status == "answered"), first_wrong is not None, first_wrong,
               rej_answered, rej_wrong, res.status, res.reason, correct_of(res), round(seconds, 3))


def kolaw_rows(cfg, limit: int | None, log, folder: Path = KOLAW) -> list[Row]:
    data = load_answer_dataset(folder)
    rows: list[Row] = []
    with tempfile.TemporaryDirectory(prefix="rag-seed001-") as tmp:
        c = cfg.with_overrides({"corpus.paths": [str(data.corpus_path)], "corpus.format": "jsonl",
                                "index.path": str(Path(tmp) / "index")})
        p = Pipeline(c)
        p.build_index(force=True)
        for q in data.questions[:limit]:
            g = q.gold
            gold = Gold(q.answerable, (g.doc_id,) if g else (), g.answer_facts if g else ())

            def correct_of(res, q=q):
                cited = [(x.document_id, x.document_version) for x in res.citations]
                return score_answer(q, res.status, res.answer, cited, data.latest, res.reason).correct

            rows.append(run_one(p, "kolaw-dev", q.id, q.question, gold, correct_of))
            log(rows[-1])
    return rows


def demo_rows(cfg, limit: int | None, log) -> list[Row]:
    from rag.cli.answer import demo_verdict

    rows: list[Row] = []
    with tempfile.TemporaryDirectory(prefix="rag-seed001-") as tmp:
        p = Pipeline(cfg.with_overrides({"index.path": str(Path(tmp) / "index")}))
        p.build_index(force=True)
        for _, q in list(read_jsonl(DEMO_QUESTIONS, ValueError))[:limit]:
            exp = q.get("expected_doc_id")
            gold = Gold(bool(exp), (exp, *q.get("also_accept_doc_ids", ())) if exp else (),
                        tuple(q.get("expected_facts", ())), q.get("forbidden_doc_id"),
                        tuple(q.get("forbidden_text", ())))

            def correct_of(res, q=q):  # exactly as `rag demo` scores it
                return demo_verdict(p, q, res, collections.Counter())[0]

            rows.append(run_one(p, "demo", q["id"], q["question"], gold, correct_of, poisoned=bool(gold.forbidden_doc)))
            log(rows[-1])
    return rows


def _share(k: int, n: int) -> float | None:
    return round(k / n, 4) if n else None


def summarize(rows: list[Row]) -> dict:
    called = [r for r in rows if r.called]
    answered = [r for r in rows if r.status == "answered"]
    ans = [r for r in rows if r.kind == "answerable"]
    una = [r for r in rows if r.kind == "unanswerable"]
    poisoned = [r for r in rows if r.kind == "poisoned"]
    rej = sum(r.rejected_answered for r in rows)
    return {
        "n": len(rows), "called": len(called),
        "first_valid": _share(sum(r.first_valid for r in called), len(called)),
        "first_answered": sum(r.first_status == "answered" for r in called),
        "first_valid_of_answered": _share(sum(r.first_valid for r in called),
                                          sum(r.first_status == "answered" for r in called)),
        "valid_after_regen": _share(sum(r.status == "answered" for r in called), len(called)),
        "answered": len(answered),
        "answered_validated": _share(sum(r.reason == "validated" for r in answered), len(answered)),
        "abstained_called": sum(r.status != "answered" for r in called),
        "rejected_answered": rej,
        "rejected_wrong": _share(sum(r.rejected_wrong for r in rows), rej),
        "accuracy_answerable": _share(sum(r.correct for r in ans), len(ans)),
        "abstained_unanswerable": _share(sum(r.status != "answered" for r in una), len(una)),
        "precision_answered": _share(sum(r.correct and r.kind == "answerable" for r in answered),
                                     sum(r.kind != "poisoned" for r in answered)),
        "poisoned_ok": f"{sum(r.correct for r in poisoned)}/{len(poisoned)}" if poisoned else None,
        "median_s": round(statistics.median(r.seconds for r in rows), 2) if rows else None,
        "median_s_called": round(statistics.median(r.seconds for r in called), 2) if called else None,
        "reasons": dict(sorted({r.reason: sum(x.reason == r.reason for x in rows) for r in rows}.items())),
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--configs", nargs="+", default=["configs/default.yaml", "configs/local-llm.yaml"])
    ap.add_argument("--sets", nargs="+", default=["kolaw-dev", "demo"], choices=["kolaw-dev", "demo"])
    ap.add_argument("--kolaw", type=Path, default=KOLAW, help="the kolaw-dev folder (corpus.jsonl, questions.jsonl)")
    ap.add_argument("--limit", type=int, default=None)
    ap.add_argument("--set", dest="overrides", action="append", default=[], metavar="KEY=VALUE",
                    help="override applied to every config (repeatable)")
    ap.add_argument("--out", default="results/seed001_experiment.json")
    ap.add_argument("--table", metavar="JSON", help="only print the table of a saved run (summaries recomputed)")
    args = ap.parse_args(argv)
    if args.table:
        saved = json.loads(Path(args.table).read_text(encoding="utf-8"))
        for run in saved["runs"]:
            run["summary"] = summarize([Row(**r) for r in run["rows"]])
        print_table(saved)
        return 0
    import yaml

    over = {k: yaml.safe_load(v) for k, v in (o.split("=", 1) for o in args.overrides)}
    report: dict = {"date": time.strftime("%Y-%m-%d"), "command": "python " + " ".join(sys.argv), "runs": []}
    out = Path(args.out)
    for path in args.configs:
        cfg = load_config(path).with_overrides(over) if over else load_config(path)

        def log(r: Row, path=path) -> None:
            print(f"{Path(path).stem:12s} {r.set:9s} {r.id:6s} {r.status:21s} {r.reason:18s} attempts={r.attempts} "
                  f"first_valid={r.first_valid!s:5s} correct={r.correct!s:5s} {r.seconds:7.1f}s", flush=True)

        for s in args.sets:
            rows = kolaw_rows(cfg, args.limit, log, args.kolaw) if s == "kolaw-dev" else demo_rows(cfg, args.limit, log)
            report["runs"].append({"config": path, "set": s, "summary": summarize(rows),
                                   "rows": [asdict(r) for r in rows]})
            out.parent.mkdir(parents=True, exist_ok=True)
            tmp = out.with_suffix(".tmp")
            tmp.write_text(json.dumps(report, ensure_ascii=False, indent=1), encoding="utf-8")
            tmp.replace(out)
    print_table(report)
    return 0


def print_table(report: dict) -> None:
    print()
    print("| config | set | generator called | first attempt valid (of called / of first answers) "
          "| valid after regeneration | answered with only validated citations | rejected answers actually wrong "
          "| accuracy | abstained (unanswerable) | precision | poisoned ok | median s (called) |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    for run in report["runs"]:
        m = run["summary"]
        print(f"| {Path(run['config']).stem} | {run['set']} | {m['called']}/{m['n']} | {m['first_valid']} / "
              f"{m['first_valid_of_answered']} ({m['first_answered']}) | {m['valid_after_regen']} | "
              f"{m['answered_validated']} ({m['answered']}) | {m['rejected_wrong']} ({m['rejected_answered']}) | "
              f"{m['accuracy_answerable']} | {m['abstained_unanswerable']} | {m['precision_answered']} | "
              f"{m['poisoned_ok'] or '–'} | {m['median_s']} ({m['median_s_called']}) |")


if __name__ == "__main__":
    raise SystemExit(main())
