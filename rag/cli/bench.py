"""``rag bench list | run NAME [options] [--out FILE] | check [--max-minutes M] [--only ID] | data NAME``
(and ``rag bench --check``, the same as ``rag bench check``).

Registered by :func:`add_parsers` from :func:`rag.cli.build_parser`; docs/benchmarks.md documents them.
"""
from __future__ import annotations

import argparse
import json
import sys


def _add_check_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--expected", default=None, help="expected-results file (default benchmarks/expected.yaml)")
    p.add_argument("--max-minutes", type=float, default=None,
                   help="skip entries whose max_minutes is over this (e.g. 10)")
    p.add_argument("--only", action="append", default=[], metavar="ID", help="check only this entry (repeatable)")


def cmd_list(args) -> int:
    from rag.bench.registry import describe, measurements, recipes

    print("measurements (rag bench run NAME [options] [--out FILE]):")
    for m in measurements().values():
        print("\n".join("  " + line for line in (describe(m) if args.options else describe(m)[:1])))
    print("data recipes (rag bench data NAME [options]):")
    for m in recipes().values():
        print("\n".join("  " + line for line in (describe(m) if args.options else describe(m)[:1])))
    return 0


def _run(name: str, argv: list[str], kind: str, known) -> int:
    from rag.bench.registry import get, run_measurement

    m = get(name, known)
    record, outcome = run_measurement(m, argv, prog=f"rag bench {kind} {name}",
                                      command=["rag", "bench", kind, name, *argv])
    if outcome.table:
        print(outcome.table)
    else:
        print(json.dumps(record["result"], indent=2, ensure_ascii=False, default=str))
    print(f"{name}: {record['seconds']:.1f} s, peak RSS {record['peak_rss_mb']:.0f} MB, commit "
          f"{(record['git_commit'] or '?')[:10]}{'+dirty' if record['git_dirty'] else ''}", file=sys.stderr)
    return 0


def cmd_run(args) -> int:
    from rag.bench.registry import measurements

    return _run(args.name, args.options, "run", measurements())


def cmd_data(args) -> int:
    from rag.bench.registry import recipes

    return _run(args.name, args.options, "data", recipes())


def cmd_check(args) -> int:
    from rag.bench.check import EXPECTED, check, load_expected

    verdicts = check(load_expected(args.expected or EXPECTED), max_minutes=args.max_minutes, only=args.only)
    return 1 if any(v.status == "FAIL" for v in verdicts) else 0


def cmd_bench(args) -> int:
    if args.check:
        return cmd_check(args)
    print("usage: rag bench {list,run,check,data} ... (or rag bench --check); see rag bench --help", file=sys.stderr)
    return 2


def add_parsers(sub: argparse._SubParsersAction) -> None:
    b = sub.add_parser("bench", help="measurements in one harness; --check compares them with benchmarks/expected.yaml")
    b.add_argument("--check", action="store_true", help="the same as `rag bench check`")
    _add_check_options(b)
    b.set_defaults(func=cmd_bench)
    bsub = b.add_subparsers(dest="bench_command")
    s = bsub.add_parser("list", help="the measurements and data recipes")
    s.add_argument("--options", action="store_true", help="also each one's options")
    s.set_defaults(func=cmd_list)
    s = bsub.add_parser("run", help="run one measurement; prints a table, --out FILE writes the stamped JSON",
                        add_help=False)
    s.add_argument("name")
    s.add_argument("options", nargs=argparse.REMAINDER, help="the measurement's options (rag bench run NAME --help)")
    s.set_defaults(func=cmd_run)
    s = bsub.add_parser("check", help="run benchmarks/expected.yaml and print OK / FAIL / SKIP per entry")
    _add_check_options(s)
    s.set_defaults(func=cmd_check)
    s = bsub.add_parser("data", help="build a derived data set (rag bench list shows the recipes)", add_help=False)
    s.add_argument("name")
    s.add_argument("options", nargs=argparse.REMAINDER)
    s.set_defaults(func=cmd_data)
