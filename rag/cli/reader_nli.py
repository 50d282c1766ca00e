"""``rag reader nli build | train | eval``: the entailment head (rag.reader.nli; docs/reader.md#the-entailment-head)."""
from __future__ import annotations

import argparse
import logging
import sys
from pathlib import Path

from rag._io import write_json

DEFAULT_DATA = "data/cache/nli/pairs.jsonl"


def cmd_build(args) -> int:
    from rag.reader import nli_data

    counts = nli_data.build(Path(args.from_dir), Path(args.out))
    print("| source | train | calib | eval |")
    print("|---|---|---|---|")
    for src, c in sorted(counts.items()):
        print(f"| {src} | {c.get('train', 0)} | {c.get('calib', 0)} | {c.get('eval', 0)} |")
    print(f"wrote {args.out}")
    return 0


def cmd_train(args) -> int:
    from rag.cli.common import progress_bars
    from rag.reader import nli

    logging.getLogger("rag.reader").setLevel(logging.INFO)  # the trainer and its step loop (rag.reader.training)
    cfg = nli.load_config(args.config)
    progress, bars = progress_bars()
    try:
        run = nli.train(cfg, progress)
    finally:
        for b in bars.values():
            b.close()
    print(f"trained {run.steps} steps over {run.pairs} pairs in {run.seconds:.0f} s (resumed at {run.resumed_from}); "
          f"loss {run.final_loss:.4f}; temperature {run.temperature} (calib log-loss {run.calib_log_loss:.4f})")
    print(f"wrote {run.output.resolve()}")
    return 0


def cmd_eval(args) -> int:
    from rag.reader import nli
    from rag.rerank.entailment import model_dir

    scores = nli.evaluate(model_dir(args.model), Path(args.data), args.split, quantize=not args.fp32)
    print("| source | pairs | accuracy |")
    print("|---|---|---|")
    for s in scores:
        print(f"| {s.source} | {s.n} | {s.accuracy:.4f} |")
    if args.json:
        write_json(Path(args.json), {"split": args.split, "model": args.model or "bundled", "int8": not args.fp32,
                                     "sources": [s.to_json() for s in scores], "command": ["rag", *sys.argv[1:]]})
        print(f"wrote {args.json}")
    return 0


def add_parsers(rsub: argparse._SubParsersAction) -> None:
    p = rsub.add_parser("nli", help="the entailment head: build its data, train it, measure it")
    sub = p.add_subparsers(dest="nli_command", required=True)
    b = sub.add_parser("build", help="read the public NLI files under a folder into data/cache/nli/pairs.jsonl")
    b.add_argument("--from", dest="from_dir", required=True,
                   help="a folder holding the files at their repository paths (rag/reader/nli_data.py lists them)")
    b.add_argument("--out", default=DEFAULT_DATA)
    b.set_defaults(func=cmd_build)
    t = sub.add_parser("train", help="fine-tune the e5 body on the train pairs (resumes from its checkpoint)")
    t.add_argument("--config", default="configs/reader/nli-e5.yaml")
    t.set_defaults(func=cmd_train)
    e = sub.add_parser("eval", help="accuracy per source on a split (eval: XNLI-ko test, SNLI test subset)")
    e.add_argument("--model", default=None, help="model folder (default: the bundled nli-e5-ko-en)")
    e.add_argument("--data", default=DEFAULT_DATA)
    e.add_argument("--split", default="eval", choices=("train", "calib", "eval"))
    e.add_argument("--fp32", action="store_true", help="without int8 dynamic quantization")
    e.add_argument("--json", default=None, help="write the scores as JSON here")
    e.set_defaults(func=cmd_eval)


__all__ = ["add_parsers"]
