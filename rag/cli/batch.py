"""Command line for batch runs and experiments: ``rag batch | experiment | compare``.

Registered by :func:`add_parsers` from :func:`rag.cli.build_parser`.
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from rag.cli.common import announce_gate, cli_principal, make_pipeline, principal_options, set_option


def cmd_batch(args) -> int:
    from tqdm import tqdm

    from rag.batch.questions import read_questions
    from rag.batch.records import run_info
    from rag.batch.runner import BatchRunner
    from rag.config import BatchConfig

    p = make_pipeline(args)
    qs = read_questions(args.questions, format=args.format, on_invalid=args.on_invalid,
                        principal=cli_principal(args), filter_fields=p.config.retrieval.filter_fields)
    if qs.problems:
        print(f"skipped {len(qs.problems)} bad input line(s): "
              + ", ".join(f"{p.line} ({p.kind})" for p in qs.problems[:10])
              + (" …" if len(qs.problems) > 10 else ""), file=sys.stderr)
    if qs.repeated:
        print(f"{len(qs.repeated)} repeated question line(s), answered once with the line they repeat: "
              + ", ".join(f"{r.line} (= {r.first_line})" for r in qs.repeated[:10])
              + (" …" if len(qs.repeated) > 10 else ""), file=sys.stderr)
    if not callable(getattr(p, "answer", None)):
        from rag.errors import RagError

        raise RagError("this version of rag has no Pipeline.answer(); `rag batch` needs the generation stage")
    p.index  # fail fast (IndexNotFoundError: run `rag index`) instead of one failed line per question
    announce_gate(p)  # an unset gate threshold fails here too, not once per question
    config = p.config.batch
    if args.concurrency is not None:  # validated as the config section is
        config = BatchConfig(**{**config.model_dump(), "concurrency": args.concurrency})
    runner = BatchRunner(p, run_info(p), config, retry_failed=args.retry_failed, sort_output=not args.no_sort,
                         force=args.force)
    out = Path(args.output)
    bars = []
    counts = {"answered": 0, "insufficient_evidence": 0, "failed": 0}

    def on_start(st) -> None:
        if st.skipped_existing:
            print(f"resuming {out}: {st.skipped_existing} of {len(qs.questions)} questions already done",
                  file=sys.stderr)
        bars.append(tqdm(total=st.todo, desc="answering", unit="q", file=sys.stderr, disable=None,
                         dynamic_ncols=True))

    def progress(rec) -> None:
        counts[rec.status] = counts.get(rec.status, 0) + 1
        bars[0].set_postfix(ok=counts["answered"], abstain=counts["insufficient_evidence"], fail=counts["failed"],
                            refresh=False)
        bars[0].update(1)

    try:
        rep = runner.run(qs, out, progress, on_start)
    finally:
        for bar in bars:
            bar.close()
    print(f"{out}: {rep.processed} processed now, {rep.skipped_existing} already there"
          + (f", repaired a cut-off last line ({rep.repaired_bytes} bytes)" if rep.repaired_bytes else "")
          + f"; {rep.seconds:.1f} s; config {runner.info.config_hash}, commit {(runner.info.git_commit or '?')[:10]}")
    print(rep.summary.table())
    if rep.repeated:
        print(f"repeated lines: {len(rep.repeated)} (answered once with the line they repeat)")
    if args.summary_json:  # ASCII-escaped JSON (rag._io.write_json keeps UTF-8)
        Path(args.summary_json).parent.mkdir(parents=True, exist_ok=True)
        summary = {**rep.summary.to_json(), "repeated": [r.to_json() for r in rep.repeated]}
        Path(args.summary_json).write_text(json.dumps(summary, indent=2) + "\n", encoding="utf-8")
    return 0 if rep.summary.failed == 0 else 1


def cmd_experiment(args) -> int:
    from tqdm import tqdm

    from rag.evaluation.experiments import ExperimentRunner, load_experiment
    from rag.evaluation.report import markdown_table, write_report

    exp = load_experiment(args.experiment)
    bars: dict[str, tqdm] = {}

    def progress(stage: str, done: int, total: int) -> None:
        if stage not in bars or bars[stage].total != (total or None):
            if stage in bars:
                bars[stage].close()
            bars[stage] = tqdm(total=total or None, desc=stage, file=sys.stderr, disable=None, dynamic_ncols=True,
                               leave=False)
        bars[stage].n = done
        bars[stage].refresh()

    runner = ExperimentRunner(exp, args.runs_dir, force=args.force, progress=progress)
    if args.prune:
        for d in runner.prune():
            print(f"removed {d} (not in the current grid)", file=sys.stderr)
    if args.dry_run:
        runner.check_dir()
        for plan, done in runner.status():
            print(f"{plan.config_hash}  {'done   ' if done else 'to run '}  {plan.label}")
        return 0
    if args.report_only:
        result = runner.completed()
    else:
        try:
            result = runner.run()
        finally:
            for b in bars.values():
                b.close()
    files = write_report(result, plots=False if args.no_plots else None)
    print(markdown_table([o.plan.label for o in result.outcomes], [o.plan.config_hash for o in result.outcomes],
                         [dict(o.metrics) for o in result.outcomes], exp.metrics))
    print(f"\nreport: {files.markdown}" + (f" (+ {', '.join(p.name for p in files.plots)})" if files.plots else ""))
    return 0


def cmd_compare(args) -> int:
    from rag.evaluation.report import compare_runs

    cmp = compare_runs(args.run_a, args.run_b)
    if args.json:
        print(json.dumps(cmp.to_json(), indent=2, ensure_ascii=False))
    else:
        print(cmp.table())
    return 0


def add_parsers(sub: argparse._SubParsersAction) -> None:
    default_config = "configs/default.yaml"
    s = sub.add_parser("batch", help="answer a file of questions; resumable, one JSON result per line")
    s.add_argument("questions", help="JSONL ({\"id\", \"question\", \"history\"?, \"principal\"?} per line) or text "
                   "(one question a line)")
    s.add_argument("-o", "--output", required=True, help="results JSONL (appended; rerun to resume)")
    s.add_argument("--config", default=default_config)
    s.add_argument("--format", choices=["auto", "jsonl", "text"], default="auto")
    s.add_argument("--concurrency", type=int, default=None, help="questions in flight (default: batch.concurrency)")
    s.add_argument("--on-invalid", choices=["stop", "skip"], default="stop",
                   help="malformed lines / an id used for two different questions: stop with the list (default) "
                   "or skip them (a line that repeats another exactly is answered once, never refused)")
    s.add_argument("--retry-failed", action="store_true", help="answer again the questions whose line is 'failed'")
    s.add_argument("--no-sort", action="store_true", help="leave lines in completion order at the end")
    s.add_argument("--force", action="store_true", help="start the output over (it is overwritten)")
    s.add_argument("--summary-json", default=None, help="also write the summary here")
    set_option(s)
    principal_options(s)  # the default principal of lines that name none
    s.set_defaults(func=cmd_batch)

    s = sub.add_parser("experiment", help="run a config grid on a dataset; write runs/NAME/ and REPORT.md")
    s.add_argument("experiment", help="experiment YAML, e.g. configs/experiments/fusion-scifact.yaml")
    s.add_argument("--runs-dir", default="runs")
    s.add_argument("--force", action="store_true", help="recompute complete runs / replace another experiment's runs")
    s.add_argument("--dry-run", action="store_true", help="list the runs (hash, done or not) and exit")
    s.add_argument("--report-only", action="store_true", help="rewrite the report from the complete runs")
    s.add_argument("--no-plots", action="store_true")
    s.add_argument("--prune", action="store_true", help="first remove run folders that are not in the current grid")
    s.set_defaults(func=cmd_experiment)

    s = sub.add_parser("compare", help="side-by-side metric deltas of two experiment runs")
    s.add_argument("run_a", help="run folder runs/NAME/HASH (a unique hash prefix is enough)")
    s.add_argument("run_b")
    s.add_argument("--json", action="store_true")
    s.set_defaults(func=cmd_compare)
