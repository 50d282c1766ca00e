"""``rag reader data build --out DIR [--sources ...] [--limit N] … | rag reader data show [--out DIR]``,
``rag reader features`` / ``train-combiner`` / ``eval`` (the learned combination, docs/reader.md).

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


DEFAULT_FEATURES = "data/cache/reader/features"
# groups per (split, source) of the committed combiner (docs/reader.md, results/reader.md)
DEFAULT_LIMITS = "train=175,calib=60,calib:korquad1=40,eval=100,eval:msmarco=120,eval:squad2=120"


# the groups the committed combiner was trained (train), calibrated (calib) and measured (eval) on: the cache
# may hold more, and train-combiner / eval read only these unless told otherwise (--limits "": all)
SAMPLE_LIMITS = ("train=175,train:korquad1=250,train:msmarco=100,train:nomiracl-ko=100,train:scifact=100,"
                 "calib=50,calib:msmarco=40,calib:nomiracl-ko=40,calib:scifact=40,"
                 "eval=100,eval:msmarco=120,eval:squad2=120")


def parse_limits(text: str) -> dict[str, dict[str, int]]:
    """``train=120,calib=40,eval=100`` (groups per source) or ``eval:squad2=200`` (one source)."""
    from rag.reader.featstore import SOURCES, SPLITS

    out: dict[str, dict[str, int]] = {}
    for part in (p.strip() for p in text.split(",") if p.strip()):
        key, _, n = part.partition("=")
        split, _, source = key.partition(":")
        if split not in SPLITS or (source and source not in SOURCES) or not n.isdigit():
            raise SystemExit(f"bad --limits entry {part!r}: use SPLIT=N or SPLIT:SOURCE=N "
                             f"(splits {', '.join(SPLITS)}; sources {', '.join(SOURCES)})")
        for src in ([source] if source else SOURCES):
            out.setdefault(split, {})[src] = int(n)
    return out


def make_signals():
    """The reader's :class:`~rag.reader.features.Signals` with the shipped cross-encoder path (int8)."""
    from rag.config import RerankConfig
    from rag.reader.features import CE_MAX_LENGTH, CE_MODEL, Signals
    from rag.rerank.cross_encoder import CrossEncoderScorer

    cfg = RerankConfig(model=CE_MODEL, quantize=True, max_length=CE_MAX_LENGTH, batch_size=16)
    return Signals(CrossEncoderScorer(cfg, cache_size=0))


def cmd_features(args) -> int:
    import time

    from rag.reader.featstore import build_features

    t0 = time.perf_counter()
    limits = parse_limits(args.limits)

    def progress(source: str, done: int, total: int) -> None:
        print(f"{time.perf_counter() - t0:8.1f} s  {source}: chunk {done}/{total}", file=sys.stderr, flush=True)

    counts = build_features(Path(args.data), Path(args.features), limits, make_signals(), progress=progress)
    print(json.dumps({"groups": counts, "seconds": round(time.perf_counter() - t0, 1)}, indent=2))
    return 0


def cmd_train_combiner(args) -> int:
    from rag.reader.experiment import train_combiner

    comb = train_combiner(Path(args.features), Path(args.out), command=["rag", *sys.argv[1:]] if args.record else [],
                          limits=parse_limits(args.limits))
    for name in ("passage", "sentence", "answerable"):
        info = getattr(comb, name).info
        print(f"{name}: C={info['C']} calib log-loss {info['calib_log_loss']:.4f} "
              f"({info['calib_log_loss_after_platt']:.4f} after Platt; GBM {info.get('gbm_calib_log_loss')}), "
              f"train rows {info['train_rows']} ({info['train_positive']} positive)")
    a = comb.answerable.info
    print(f"answerable: sources {', '.join(a['sources'])}; threshold {a['threshold']:.4f} answers "
          f"{a['calib_at_threshold']['recall']:.3f} of the answerable calib questions at precision "
          f"{a['calib_at_threshold']['precision']:.3f}")
    print(f"{args.out}/combiner.json in {comb.meta['seconds']} s")
    return 0


def cmd_eval(args) -> int:
    from rag.reader.combine import Combiner
    from rag.reader.experiment import cost, evaluate, markdown

    comb = Combiner.load(Path(args.model) if args.model else None)
    report = evaluate(Path(args.features), comb, split=args.split, limits=parse_limits(args.limits))
    if args.cost:
        report["cost"] = cost(comb, Path(args.data), make_signals())
    if args.json:
        from rag._io import write_json

        write_json(Path(args.json), report)
    print(markdown(report))
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

    f = rsub.add_parser("features", help="compute (or resume) the combination's feature vectors of a sample")
    f.add_argument("--data", default=DEFAULT_OUT, help=f"the built data (default {DEFAULT_OUT})")
    f.add_argument("--features", default=DEFAULT_FEATURES, help=f"cache folder (default {DEFAULT_FEATURES})")
    f.add_argument("--limits", default=DEFAULT_LIMITS,
                   help=f"groups per (split, source): SPLIT=N or SPLIT:SOURCE=N, comma-separated ({DEFAULT_LIMITS})")
    f.set_defaults(func=cmd_features)
    t = rsub.add_parser("train-combiner",
                        help="fit the passage, sentence and answerable heads (train), pick and calibrate (calib)")
    t.add_argument("--features", default=DEFAULT_FEATURES)
    t.add_argument("--out", default="rag/_models/reader-combiner", help="where combiner.json goes")
    t.add_argument("--limits", default=SAMPLE_LIMITS,
                   help="groups per (split, source) read from the cache (default: the committed sample; \"\": all)")
    t.add_argument("--no-record", dest="record", action="store_false", help="leave the command out of the artifact")
    t.set_defaults(func=cmd_train_combiner)
    e = rsub.add_parser("eval", help="measure BM25, dense, cross-encoder and the combination side by side")
    e.add_argument("--features", default=DEFAULT_FEATURES)
    e.add_argument("--data", default=DEFAULT_OUT, help="the built data (for --cost)")
    e.add_argument("--model", default=None, help="combiner.json or its folder (default the committed one)")
    e.add_argument("--split", default="eval", choices=("train", "calib", "eval"))
    e.add_argument("--limits", default=SAMPLE_LIMITS,
                   help="groups per (split, source) read from the cache (default: the committed sample; \"\": all)")
    e.add_argument("--cost", action="store_true", help="also time 30 candidates: cross-encoder vs the extras")
    e.add_argument("--json", default=None, help="write the report as JSON here")
    e.set_defaults(func=cmd_eval)
    from rag.cli.reader_model import add_parsers as _model_parsers  # train-model | eval-model

    _model_parsers(rsub)
    from rag.cli.reader_units import add_parsers as _unit_parsers  # train-units

    _unit_parsers(rsub)
    from rag.cli.reader_nli import add_parsers as _nli_parsers  # nli build | train | eval

    _nli_parsers(rsub)
