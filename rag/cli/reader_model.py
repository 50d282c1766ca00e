"""``rag reader train-model --config FILE`` and ``rag reader eval-model --model M [--model M ...]``: the
neural reader (rag.reader.neural, rag.reader.neural_eval; docs/reader.md)."""
from __future__ import annotations

import argparse
import logging
import sys
from pathlib import Path

from rag._io import write_json

DEFAULT_DATA = "data/cache/reader"


def cmd_train_model(args) -> int:
    from rag.cli.common import progress_bars
    from rag.reader import neural

    logging.getLogger("rag.reader").setLevel(logging.INFO)  # the trainer and its step loop (rag.reader.training)
    cfg = neural.load_config(args.config)
    progress, bars = progress_bars()
    try:
        run = neural.train(cfg, progress)
    finally:
        for b in bars.values():
            b.close()
    neural.write_card(cfg, run)
    print(f"{cfg.name}: {run.steps} steps, {run.groups} groups, {run.seconds:.0f} s "
          f"(resumed at step {run.resumed_from}), loss {run.final_loss:.4f} -> {run.output}")
    return 0


def cmd_eval_model(args) -> int:
    from rag.cli.common import progress_bars
    from rag.reader import neural_eval as ne

    groups = ne.eval_groups(Path(args.data), args.per_key, split=args.split)
    reports, aurocs = {}, {}
    progress, bars = progress_bars()
    try:
        for m in args.model:
            scored = ne.score_groups(groups, ne.pair_scorer(m, args.max_length, args.quantize),
                                     lambda d, n, m=m: progress(f"score {m}", d, n))
            reports[m] = ne.key_reports(scored)
            aurocs[m] = ne.answerable_auroc(scored)
            if args.calibrate and m == args.model[0]:
                cal = ne.fit_calibration(scored, f"reader data {args.split} split, {len(groups)} groups "
                                                 f"({args.per_key} per source/kind/pair), int8={args.quantize}")
                path = Path(args.calibrate)
                path.parent.mkdir(parents=True, exist_ok=True)
                cal.save(path)
                print(f"calibration a={cal.a:.4f} b={cal.b:.4f} on {cal.n} pairs -> {path}")
    finally:
        for b in bars.values():
            b.close()
    print(ne.table(reports))
    print()
    print("| source | " + " | ".join(f"{m} AUROC" for m in args.model) + " |")
    print("|---|" + "---|" * len(args.model))
    for src in sorted({s for a in aurocs.values() for s in a}):
        print(f"| {src} | " + " | ".join(f"{aurocs[m].get(src):.3f}" if aurocs[m].get(src) is not None else "–"
                                       for m in args.model) + " |")
    if args.json:
        write_json(Path(args.json), {
            "split": args.split, "per_key": args.per_key, "groups": len(groups), "max_length": args.max_length,
            "quantize": args.quantize, "command": ["rag", *sys.argv[1:]],
            "models": {m: {"keys": [r.__dict__ for r in reports[m]], "answerable_auroc": aurocs[m]} for m in args.model}})
        print(f"wrote {args.json}")
    return 0


def add_parsers(rsub: argparse._SubParsersAction) -> None:
    t = rsub.add_parser("train-model", help="train the neural reader from a config (resumes from its checkpoint)")
    t.add_argument("--config", default="configs/reader/reader-e5.yaml")
    t.set_defaults(func=cmd_train_model)
    e = rsub.add_parser("eval-model", help="score held-back reader groups with cross-encoders side by side")
    e.add_argument("--model", action="append", required=True,
                   help="reader, e5-ko-en, minilm or a model folder (repeatable: side by side)")
    e.add_argument("--data", default=DEFAULT_DATA)
    e.add_argument("--split", default="eval", choices=("train", "calib", "eval"))
    e.add_argument("--per-key", type=int, default=200, help="groups per source/kind/language pair (200)")
    e.add_argument("--max-length", type=int, default=192)
    e.add_argument("--no-quantize", dest="quantize", action="store_false", help="fp32 instead of int8")
    e.add_argument("--calibrate", default=None, metavar="FILE",
                   help="fit Platt scaling of the first model's logit on these groups (use --split calib)")
    e.add_argument("--json", default=None)
    e.set_defaults(func=cmd_eval_model)


__all__ = ["add_parsers"]
