"""``rag reader data build --out DIR [--sources ...] [--limit N] … | rag reader data show [--out DIR]``.

Registered by :func:`add_parsers` from :func:`rag.cli.build_parser`; docs/reader.md documents them.
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

DEFAULT_OUT = "data/cache/reader"


def _command(args) -> list[str]:
    """The command as parsed (every option spelled out), for the manifest."""
    cmd = ["rag", "reader", "data", "build", "--out", args.out, "--shared", args.shared, "--cache", args.cache]
    for opt in ("sources", "limit", "negatives", "depth", "shard_questions"):
        v = getattr(args, opt)
        if v is not None:
            cmd += [f"--{opt.replace('_', '-')}", ",".join(v) if isinstance(v, list) else str(v)]
    return cmd + (["--force"] if args.force else [])


def cmd_build(args) -> int:
    from rag.cli.common import progress_bars
    from rag.reader.data import Recipe, build
    from rag.reader.inputs import Locations
    from rag.reader.report import markdown_table

    sources = tuple(s for part in args.sources or () for s in part.split(",") if s) or None
    recipe = Recipe(**{k: v for k, v in (("sources", sources), ("negatives", args.negatives), ("depth", args.depth),
                                         ("shard_questions", args.shard_questions), ("limit", args.limit))
                       if v is not None})
    loc = Locations(Path(args.shared).resolve(), Path(args.cache).resolve())
    progress, bars = progress_bars()
    try:
        report = build(recipe, loc, Path(args.out), force=args.force, command=_command(args), progress=progress)
    finally:
        for bar in bars.values():
            bar.close()
    m = report.manifest
    for f in m["missing_inputs"]:
        print(f"warning: {f['name']} absent (expected at {args.cache}/{f['expected_at']}): {f['origin']}", file=sys.stderr)
    print(markdown_table(m))
    print(f"{report.out}: {report.built} shards built, {report.reused} reused, {report.seconds:.1f} s this run "
          f"({m['seconds']['building_shards']:.1f} s building shards in all)", file=sys.stderr)
    return 0


def cmd_show(args) -> int:
    from rag.reader.data import read_manifest
    from rag.reader.report import markdown_table

    m = read_manifest(Path(args.out))
    if args.json:
        print(json.dumps(m, indent=2, ensure_ascii=False))
        return 0
    print(markdown_table(m))
    print(f"built {m['created']} by {' '.join(m['command'] or ['(library call)'])}; "
          f"{len(m['shards'])} shards; missing inputs: {[f['name'] for f in m['missing_inputs']] or 'none'}")
    return 0


def add_parsers(sub: argparse._SubParsersAction) -> None:
    s = sub.add_parser("reader", help="the learned reader: its training data (docs/reader.md)")
    rsub = s.add_subparsers(dest="reader_command", required=True)
    d = rsub.add_parser("data", help="the reader's labelled data: build it, or show what was built")
    dsub = d.add_subparsers(dest="reader_data_command", required=True)
    b = dsub.add_parser("build", help="build the labelled (question, passage, sentence) shards; resumable")
    b.add_argument("--out", default=DEFAULT_OUT, help=f"output folder (default {DEFAULT_OUT}, git-ignored)")
    b.add_argument("--sources", action="append", metavar="NAME[,NAME]",
                   help="korquad1, squad2, msmarco, nomiracl-ko, scifact (repeatable or comma-separated; default all)")
    b.add_argument("--limit", type=int, default=None, help="at most N questions per source (a fixed hash sample)")
    b.add_argument("--negatives", type=int, default=None, help="BM25-mined hard negative passages per question (7)")
    b.add_argument("--depth", type=int, default=None, help="BM25 candidates the negatives come from (50)")
    b.add_argument("--shard-questions", type=int, default=None, help="questions per shard (2000)")
    b.add_argument("--shared", default="../shared/data", help="the shared evaluation data (default ../shared/data)")
    b.add_argument("--cache", default="data/cache",
                   help="fetched inputs, e.g. korquad/KorQuAD_v1.0_train.json (default data/cache)")
    b.add_argument("--force", action="store_true", help="rebuild every shard, even in a folder of another recipe")
    b.set_defaults(func=cmd_build)
    sh = dsub.add_parser("show", help="the counts of a built folder")
    sh.add_argument("--out", default=DEFAULT_OUT)
    sh.add_argument("--json", action="store_true", help="print the whole manifest")
    sh.set_defaults(func=cmd_show)
