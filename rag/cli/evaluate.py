"""``rag eval-retrieval | train-reranker | calibrate | eval-abstention | eval-answers | eval-claims |
eval-addressing``: offline evaluation and training."""
from __future__ import annotations

import argparse

import json
from pathlib import Path

from rag._io import write_json
from rag.cli.common import DEFAULT_CONFIG, load_cli_config, make_pipeline, progress_bars, set_option


def cmd_eval_retrieval(args) -> int:
    from rag.evaluation.retrieval import evaluate_retrieval

    p = make_pipeline(args)
    progress, bars = progress_bars()

    try:
        qf = None
        if args.holdout:
            from rag.rerank.train import in_holdout

            name = Path(args.dataset).name
            qf = lambda q: in_holdout(name, q, args.holdout)  # noqa: E731
        if getattr(args, "reader_split", None):
            from rag.index.loaders import load_qrels
            from rag.reader.splits import beir_query_filter

            qf = beir_query_filter(args.dataset, load_qrels(args.dataset, args.split), args.reader_split)
        res = evaluate_retrieval(p, args.dataset, args.split, max_queries=args.max_queries, progress=progress,
                                 rerank=not args.no_rerank, query_filter=qf)
    finally:
        for b in bars.values():
            b.close()
    out = res.to_json()
    print(f"{res.dataset} / {res.split}: {res.n_queries} queries  (config {res.config_hash}, {res.embedding_model}, {res.analyzer})")
    names = list(next(iter(res.metrics.values())).keys())
    print(f"{'':10}" + "".join(f"{n:>12}" for n in names))
    for r, m in res.metrics.items():
        print(f"{r:10}" + "".join(f"{m[n]:>12.4f}" for n in names))
    if args.json:
        write_json(Path(args.json), out)
        print(f"wrote {args.json}")
    return 0


def cmd_train_reranker(args) -> int:
    from rag.pipeline import Pipeline
    from rag.rerank.train import load_groups, load_train_config, mine_groups, save_groups, train, write_model_card

    cfg = load_train_config(args.config)
    progress, bars = progress_bars()
    cache = Path(".rag/train") / cfg.name / "groups.jsonl"
    try:
        if cache.is_file():
            groups = load_groups(cache)
            print(f"reusing {len(groups)} mined training groups from {cache}")
        else:
            groups = mine_groups(cfg, lambda path, corpus: Pipeline.from_config(path).retriever_over(corpus), progress)
            save_groups(groups, cache)
        report = train(cfg, groups, progress)
    finally:
        for b in bars.values():
            b.close()
    metrics = {}
    if args.eval_dataset:
        from rag.config import load_config
        from rag.evaluation.retrieval import evaluate_retrieval
        from rag.rerank.train import in_holdout

        pc = load_config(args.eval_config).with_overrides({"rerank.model": str(report.output.resolve())})
        name = Path(args.eval_dataset).name
        res = evaluate_retrieval(Pipeline(pc), args.eval_dataset, "train",
                                 query_filter=lambda q: in_holdout(name, q, args.eval_holdout))
        metrics = {f"{name}_heldout_{k}": dict(v) for k, v in res.metrics.items() if k in ("hybrid", "rerank")}
        metrics["n_queries"] = res.n_queries
    card = write_model_card(cfg, report, groups, metrics)
    print(f"trained {report.steps} steps on {report.groups} groups in {report.seconds / 60:.1f} min "
          f"({report.pairs_per_second:.1f} pairs/s) -> {report.output}\nmodel card: {card}")
    return 0


def _scored(args):
    from rag.evaluation.abstention import score_questions
    from rag.evaluation.datasets import load_labelled

    p = make_pipeline(args)
    items = load_labelled(args.dataset, args.split, args.max_questions)
    progress, bars = progress_bars()
    try:
        return p, score_questions(p, items, progress)
    finally:
        for b in bars.values():
            b.close()


def cmd_calibrate(args) -> int:
    from rag.calibrate import calibrate, write_calibrated_config

    from rag.errors import InputError

    out = Path(args.out) if args.out else Path(args.config).with_suffix(".calibrated.yaml")
    if out.resolve().parent != Path(args.config).resolve().parent:
        raise InputError(f"--out must be next to {args.config} (relative paths in the config are resolved from there)")
    if args.auto or args.from_batch:  # --from-batch: the probes plus the batch's labelled lines
        return _calibrate_auto(args, out)
    if args.feedback_weight is not None:
        raise InputError("--feedback-weight weighs the labelled lines of --from-batch RESULTS.jsonl; add --from-batch")
    if args.standard_errors is not None:
        raise InputError("--standard-errors sets how --auto fits on probe questions; add --auto (a fit on labels "
                         "holds the target precision on the labelled questions themselves)")
    if args.dataset is None or args.target_precision is None:
        raise InputError("rag calibrate needs --dataset and --target-precision, or --auto (no labels: probe questions "
                         "built from the indexed corpus)")
    if not 0 < args.target_precision <= 1:
        raise InputError(f"--target-precision must be in (0, 1], got {args.target_precision}")
    p, scored = _scored(args)
    report_dir = Path(args.report or f"results/calibrate-{Path(args.config).stem}-{Path(args.dataset).stem}")
    rep = calibrate(p, scored, args.target_precision, report_dir, dataset=str(args.dataset), split=args.split)
    write_calibrated_config(Path(args.config), out, rep.config_updates)
    print(json.dumps(rep.summary, indent=2, ensure_ascii=False))
    print(f"wrote {out} and {report_dir}/(calibration.json, risk_coverage.png, histograms.png)")
    return 0


def _calibrate_auto(args, out: Path) -> int:
    from rag.access import Principal
    from rag.calibrate import DEFAULT_WEIGHT, STANDARD_ERRORS, auto_calibrate, read_feedback, write_calibrated_config

    from rag.errors import InputError

    if args.dataset is not None:
        raise InputError("--auto fits on the indexed corpus; drop --dataset (or drop --auto to fit on labels)")
    target = 0.9 if args.target_precision is None else args.target_precision
    if not 0 < target <= 1:
        raise InputError(f"--target-precision must be in (0, 1], got {target}")
    weight = DEFAULT_WEIGHT if args.feedback_weight is None else args.feedback_weight
    if args.feedback_weight is not None and not args.from_batch:
        raise InputError("--feedback-weight weighs the labelled lines of --from-batch RESULTS.jsonl; add --from-batch")
    if weight < 1:
        raise InputError(f"--feedback-weight must be >= 1 (how many probes one labelled question counts as), "
                         f"got {weight}")
    ses = STANDARD_ERRORS if args.standard_errors is None else args.standard_errors
    if not 0 <= ses <= 5:
        raise InputError(f"--standard-errors must be in [0, 5] (0: fit on the probes' own precision), got {ses}")
    feedback = read_feedback(args.from_batch) if args.from_batch else None  # bad lines: an error before any work
    p = make_pipeline(args)
    principal = Principal(args.principal) if args.principal else None
    report_dir = Path(args.report or f"results/calibrate-auto-{Path(args.config).stem}")
    progress, bars = progress_bars()
    try:
        rep = auto_calibrate(p, target, report_dir, per_language=args.probes, seed=args.seed, principal=principal,
                             progress=progress, feedback=feedback, feedback_weight=weight, standard_errors=ses)
    finally:
        for b in bars.values():
            b.close()
    write_calibrated_config(Path(args.config), out, rep.updates)
    shown = {k: v for k, v in rep.summary.items() if k != "groups"}
    if "feedback" in shown:
        shown["feedback"] = {k: v for k, v in shown["feedback"].items() if k not in ("groups_without_labels",)}
    print(json.dumps(shown, indent=2, ensure_ascii=False))
    print(f"wrote {out} and {report_dir}/(auto_calibration.json, auto_risk_coverage.png)")
    return 0


def cmd_eval_abstention(args) -> int:
    from rag.calibrate import thresholds_from_report
    from rag.evaluation.abstention import evaluate_abstention

    compare = thresholds_from_report(args.compare) if args.compare else None
    p, scored = _scored(args)
    out = evaluate_abstention(p, scored, compare)
    print(json.dumps(out, indent=2, ensure_ascii=False))
    if args.json:
        write_json(Path(args.json), out)
        print(f"wrote {args.json}")
    return 0


def _fmt(v) -> str:
    if v is None:
        return "-"
    return f"{v:.4f}" if isinstance(v, float) else str(v)


# The rows of the eval-answers tables, in print order.
ANSWER_TABLE = ("n", "n_answerable", "n_unanswerable", "accuracy_answerable", "answered_when_answerable",
                "abstained_when_unanswerable", "answered_when_unanswerable", "precision_of_answered",
                "answer_precision", "answer_precision_correct", "answer_chars_mean", "answer_chars_p50",
                "answer_sentences_mean", "superseded_cited", "validation_failed")


def metrics_table(title: str, metrics, names=ANSWER_TABLE) -> list[str]:
    """Plain aligned lines: ``title``, then one ``name  value`` line per metric of ``names`` that
    ``metrics`` has (``-`` for None)."""
    return [title] + [f"  {name:30}{_fmt(metrics[name]):>10}" for name in names if name in metrics]


def cmd_eval_answers(args) -> int:
    from rag.evaluation.faithfulness import eval_answers

    cfg = load_cli_config(args)
    progress, bars = progress_bars()
    try:
        rep = eval_answers(Path(args.dataset), cfg, progress=progress,
                           extra_questions=[Path(f) for f in args.questions or ()],
                           own_questions=not getattr(args, "only_questions", False),
                           files=Path(args.files) if getattr(args, "files", None) else None)
    finally:
        for b in bars.values():
            b.close()
    m = rep.metrics
    print(f"{rep.dataset}: {m['n']} questions ({m['n_answerable']} answerable, {m['n_unanswerable']} unanswerable)"
          f"  config {rep.config_hash}  {rep.seconds:.0f}s")
    if len(rep.question_files) > 1:
        print("  questions from " + ", ".join(rep.question_files))
    print("\n".join(metrics_table("all questions", m)))
    if "page_checked" in m:
        print(f"  citations of correct answers whose page holds the quote: {m['page_holds_quote']} of {m['page_checked']}")
    for style, s in rep.by_style.items():
        print()
        print("\n".join(metrics_table(f"style {style} (share correct {_fmt(s['accuracy'])})", s)))
    if args.json:
        write_json(Path(args.json), rep.to_json())
        print(f"wrote {args.json}")
    return 0


def _short(text: str, n: int = 110) -> str:
    t = " ".join(text.split())
    return t if len(t) <= n else t[:n - 1] + "…"


def cmd_eval_addressing(args) -> int:
    from rag.evaluation.addressing import eval_addressing

    cfg = load_cli_config(args)
    rep = eval_addressing(Path(args.dataset), cfg, claims_path=Path(args.claims) if args.claims else None)
    kinds = dict(rep.blocks.items())
    print(f"{rep.dataset}: {len(rep.questions)} questions with a gold quote "
          f"({sum(k == 'paragraph' for k in kinds.values())} paragraph blocks, "
          f"{sum(k == 'quote' for k in kinds.values())} quote blocks), {len(rep.claims)} paraphrase claims, "
          f"{len(rep.left_out)} nested pairs left out  (config {rep.config_hash})")
    print(f"  {'measure':34}{'k/n':>12}{'share':>10}")
    for name, sh in rep.shares.items():
        print(f"  {name:34}{f'{sh.k}/{sh.n}':>12}{_fmt(sh.rate):>10}")
    print("  violation codes (cases reporting each):")
    for kind, codes in rep.codes.items():
        print(f"    {kind:12}" + (", ".join(f"{c} {n}" for c, n in codes.items()) or "none"))
    fails = rep.failures
    print(f"  failures: {len(fails)}" + (f" (first {args.show})" if len(fails) > args.show else ""))
    for c in fails[:args.show]:
        answer = rep.claims[c.answer_from] if c.kind == "paraphrased" else rep.answers[c.answer_from]
        doc = "" if c.same_doc is None else (" same doc" if c.same_doc else " other doc")
        print(f"    {c.kind}{doc}: answer of {c.answer_from} for {c.question_id}: "
              f"{'accepted' if c.accepted else 'rejected'} [{', '.join(c.codes) or 'no violation'}]")
        print(f"      question: {_short(rep.questions[c.question_id])}")
        print(f"      answer:   {_short(answer)}")
    if args.json:
        write_json(Path(args.json), rep.to_json())
        print(f"wrote {args.json}")
    return 0


def cmd_eval_claims(args) -> int:
    from rag.evaluation.claims import eval_claims

    cfg = load_cli_config(args)
    rep = eval_claims(Path(args.dataset), cfg, corpus_path=Path(args.corpus) if args.corpus else None)
    out = rep.to_json()
    print(f"{args.dataset}: {out['n']} claims  (config {cfg.hash})")
    print(f"  {'label':20}{'n':>6}{'accepted':>10}{'rate':>10}")
    for label, s in out["by_label"].items():
        print(f"  {label:20}{s['n']:>6}{s.get('accepted_n', '-'):>10}{_fmt(s['accepted']):>10}")
    if args.json:
        write_json(Path(args.json), out)
        print(f"wrote {args.json}")
    return 0


def add_parsers(sub: argparse._SubParsersAction) -> None:
    """The parsers of ``rag eval-retrieval | train-reranker | calibrate | eval-abstention | eval-answers |
    eval-claims | eval-addressing``."""
    _retrieval_and_gate_parsers(sub)
    _answer_evaluation_parsers(sub)


def _retrieval_and_gate_parsers(sub: argparse._SubParsersAction) -> None:
    s = sub.add_parser("eval-retrieval", help="nDCG/recall/MRR of bm25, dense and hybrid on a BEIR dataset")
    s.add_argument("--dataset", required=True, help="folder with corpus.jsonl, queries.jsonl, qrels/")
    s.add_argument("--split", default="test")
    s.add_argument("--config", default="configs/en.yaml")
    s.add_argument("--json", help="write the result JSON here")
    s.add_argument("--max-queries", type=int, default=None)
    s.add_argument("--holdout", type=int, default=0, metavar="PERCENT",
                   help="only the queries a training config with this holdout_percent kept out of training")
    s.add_argument("--reader-split", choices=("train", "calib", "eval"), default=None,
                   help="only the queries in this split of the reader's data (KorQuAD, MS MARCO; docs/reader.md)")
    s.add_argument("--no-rerank", action="store_true", help="skip the 'rerank' entry")
    set_option(s)
    s.set_defaults(func=cmd_eval_retrieval)

    s = sub.add_parser("train-reranker", help="fine-tune a cross-encoder reranker from a training config")
    s.add_argument("--config", required=True, help="e.g. configs/reranker/minilm-listwise.yaml")
    s.add_argument("--eval-dataset", default=None, help="BEIR folder whose held-out queries go in the model card")
    s.add_argument("--eval-config", default="configs/en.yaml")
    s.add_argument("--eval-holdout", type=int, default=40)
    s.set_defaults(func=cmd_train_reranker)

    s = sub.add_parser("calibrate", help="fit the gate threshold for a target precision (labelled questions, or "
                                         "--auto: probe questions built from the indexed corpus)")
    s.add_argument("--auto", action="store_true",
                   help="no labels: build answerable and near-miss probe questions from the indexed corpus and fit on them")
    s.add_argument("--probes", type=int, default=80, help="--auto: answerable probes per corpus language (as many unanswerable)")
    s.add_argument("--seed", type=int, default=0, help="--auto: which chunks the probes come from")
    s.add_argument("--as", dest="principal", default=None, help="--auto: build probes only from what this principal may read")
    s.add_argument("--from-batch", default=None, metavar="RESULTS.jsonl",
                   help="implies --auto: also fit on the lines of a `rag batch` results file labelled "
                        "\"label\": right | wrong | should_abstain (docs/rerank-and-gate.md)")
    s.add_argument("--feedback-weight", type=int, default=None,
                   help="--from-batch: how many probes one labelled question counts as (default 5)")
    s.add_argument("--standard-errors", type=float, default=None,
                   help="--auto: hold the target precision this many standard errors below what the probes measure "
                        "(default 1; 0: the probes' own precision)")
    s.add_argument("--dataset", default=None, help="NoMIRACL-style JSONL or SQuAD 2.0 JSON (not with --auto)")
    s.add_argument("--config", required=True)
    s.add_argument("--target-precision", type=float, default=None, help="required with --dataset; --auto: default 0.9")
    s.add_argument("--split", default="all", choices=["all", "calib", "eval", "reader-train", "reader-calib",
                                                     "reader-eval"],
                   help="calib/eval: a fixed 50/50 split of the questions (fit on calib, report on eval); "
                        "reader-*: the reader data's split (docs/reader.md)")
    s.add_argument("--max-questions", type=int, default=None)
    s.add_argument("--out", default=None, help="config to write (default: CONFIG with .calibrated.yaml)")
    s.add_argument("--report", default=None, help="folder for the JSON and PNGs (default results/calibrate-NAME)")
    set_option(s)
    s.set_defaults(func=cmd_calibrate)


def _answer_evaluation_parsers(sub: argparse._SubParsersAction) -> None:
    s = sub.add_parser("eval-abstention", help="rerank each question's own passages and apply the gate")
    s.add_argument("--dataset", required=True, help="NoMIRACL-style JSONL or SQuAD 2.0 JSON")
    s.add_argument("--config", required=True)
    s.add_argument("--split", default="all", choices=["all", "calib", "eval", "reader-train", "reader-calib",
                                                     "reader-eval"],
                   help="calib/eval: a 50/50 hash split; reader-*: the reader data's split (docs/reader.md)")
    s.add_argument("--max-questions", type=int, default=None)
    s.add_argument("--json", default=None, help="write the result JSON here")
    s.add_argument("--compare", default=None, metavar="CALIBRATION_JSON",
                   help="also apply each signal's threshold from a `rag calibrate` report (e.g. fit on --split calib)")
    set_option(s)
    s.set_defaults(func=cmd_eval_abstention)

    s = sub.add_parser("eval-answers", help="index a labelled folder, answer its questions and score the answers")
    s.add_argument("--dataset", required=True, help="folder with corpus.jsonl and questions.jsonl")
    s.add_argument("--config", default=DEFAULT_CONFIG)
    s.add_argument("--files", default=None, metavar="FOLDER",
                   help="index this folder of files (the corpus rendered as PDF, DOCX …) instead of corpus.jsonl")
    s.add_argument("--questions", action="append", metavar="FILE",
                   help="more questions (JSONL, same format; a 'history' of earlier turns per question is "
                        "answered as a follow-up) answered over the dataset's corpus, after its own (repeatable)")
    s.add_argument("--only-questions", action="store_true",
                   help="answer only the --questions files, not the dataset's own questions.jsonl")
    s.add_argument("--json", "--out", dest="json", default=None,
                   help="write the report (metrics, per-style metrics and per-question rows) here")
    set_option(s)
    s.set_defaults(func=cmd_eval_answers)

    s = sub.add_parser("eval-claims", help="the validator's support check on labelled (claim, quote) pairs")
    s.add_argument("--dataset", required=True, help="claims.jsonl: id, doc_id, quote, claim, label")
    s.add_argument("--config", default=DEFAULT_CONFIG)
    s.add_argument("--corpus", default=None,
                   help="corpus JSONL the quotes come from (default: corpus.jsonl next to the claims file)")
    s.add_argument("--json", default=None, help="write the report (per-label counts and rows) here")
    set_option(s)
    s.set_defaults(func=cmd_eval_claims)

    s = sub.add_parser("eval-addressing", help="does the validator reject a gold answer given for another question? "
                                               "(no index, no retrieval)")
    s.add_argument("--dataset", required=True, help="folder with corpus.jsonl and questions.jsonl (claims.jsonl "
                                                    "optional)")
    s.add_argument("--config", default=DEFAULT_CONFIG, help="the validation section is used")
    s.add_argument("--claims", default=None, help="claims for the paraphrase cases (default: DATASET/claims.jsonl)")
    s.add_argument("--show", type=int, default=20, metavar="N", help="failures to print (default 20)")
    s.add_argument("--out", "--json", dest="json", default=None, help="write the report with every pair here")
    set_option(s)
    s.set_defaults(func=cmd_eval_addressing)
