"""``rag reader train-units``: the extractive generator's learned unit head (rag.answer.unit_head, trained and
measured by rag.evaluation.unit_training; docs/reader.md)."""
from __future__ import annotations

import argparse
import logging
import sys
from pathlib import Path

from rag._io import write_json

DEFAULT_DATA = "data/cache/reader"
DEFAULT_CACHE = "data/cache/unit-rows"


def _generator(config_path: str):
    from rag.answer.extractive import ExtractiveGenerator
    from rag.config import load_config
    from rag.errors import ConfigError
    from rag.models.embedders import make_embedder
    from rag.pipeline.components import embedding_scorer

    cfg = load_config(config_path)
    if cfg.generation.extractive_scorer != "embedding":
        raise ConfigError(f"{config_path}: generation.extractive_scorer is {cfg.generation.extractive_scorer!r}; the "
                          "unit head is fitted with the embedding scorer (the shipped one): use a config that sets it")
    return ExtractiveGenerator(cfg.generation, embedding_scorer(make_embedder(cfg.embedding)),
                               validation=cfg.validation)


def cmd_train_units(args) -> int:
    from rag.answer.unit_head import MODEL_DIR
    from rag.cli.common import progress_bars
    from rag.evaluation import unit_training as ut

    logging.getLogger("rag.evaluation.unit_training").setLevel(logging.INFO)
    data, cache = Path(args.data), Path(args.cache)
    gen = _generator(args.config)
    progress, bars = progress_bars()
    rows = {}
    try:
        for split, n in (("train", args.train), ("calib", args.calib)) + ((("eval", args.eval),) if args.eval else ()):
            qs = ut.unit_questions(data, split, n)
            rows[split] = ut.build_rows(gen, qs, cache / split, progress)
    finally:
        for b in bars.values():
            b.close()
    meta = {"trained_on": {s: {"questions": len(r.source), "units": int(len(r.y)), "positive_units": int(r.y.sum())}
                           for s, r in rows.items() if s != "eval"},
            "sources": list(ut.SOURCES), "config": args.config, "command": ["rag", *sys.argv[1:]]}
    head = ut.fit_unit_head(rows["train"], rows["calib"], "embedding", meta)
    out = Path(args.output) if args.output else MODEL_DIR
    out.mkdir(parents=True, exist_ok=True)
    write_json(out / "unit_head.json", head.to_json())
    report = {"head": head.head.info, "calib": ut.measure(rows["calib"], head)}
    if "eval" in rows:
        report["eval"] = ut.measure(rows["eval"], head)
    for split in [s for s in ("calib", "eval") if s in report]:
        print(f"## {split}")
        print("| source | questions | top-1 head | top-1 rules | AUROC head | AUROC rules |")
        print("|---|---|---|---|---|---|")
        for src, r in report[split].items():
            print(f"| {src} | {r['questions']} | {r['head_top1']} | {r['rules_top1']} | {r['head_answerable_auroc']} "
                  f"| {r['rules_answerable_auroc']} |")
    print(f"wrote {out / 'unit_head.json'}")
    if args.json:
        write_json(Path(args.json), {**report, "command": ["rag", *sys.argv[1:]]})
        print(f"wrote {args.json}")
    return 0


def add_parsers(rsub: argparse._SubParsersAction) -> None:
    t = rsub.add_parser("train-units", help="fit the extractive generator's learned unit head on the reader data")
    t.add_argument("--config", default="configs/default.yaml", help="the config whose generator and embedder it reads")
    t.add_argument("--data", default=DEFAULT_DATA)
    t.add_argument("--cache", default=DEFAULT_CACHE, help="unit rows per chunk of questions (resumable)")
    t.add_argument("--train", type=int, default=1500, help="train questions per source (1500)")
    t.add_argument("--calib", type=int, default=400, help="calib questions per source (400)")
    t.add_argument("--eval", type=int, default=0, help="eval questions per source to measure once (0: none)")
    t.add_argument("--output", default=None, help="folder for unit_head.json (default: the bundled rag/_models/unit-head)")
    t.add_argument("--json", default=None, help="write the measures here")
    t.set_defaults(func=cmd_train_units)


__all__ = ["add_parsers"]
