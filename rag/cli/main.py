"""Command line: ``rag index | add | delete | search | context | ask | eval-retrieval | train-reranker | calibrate |
eval-abstention | eval-answers | eval-claims | eval-addressing | demo | extract | sync | batch | experiment | compare |
models | serve | warmup | tools | migrate | bench | reader``."""
from __future__ import annotations

import argparse
import logging
import sys

from rag.cli.answer import cmd_ask, cmd_context, cmd_demo, cmd_search
from rag.cli.common import DEFAULT_CONFIG, filter_options, principal_options
from rag.cli.evaluate import (cmd_calibrate, cmd_eval_abstention, cmd_eval_addressing, cmd_eval_answers,
                              cmd_eval_claims, cmd_eval_retrieval, cmd_train_reranker)
from rag.cli.index import cmd_add, cmd_delete, cmd_index, cmd_migrate
from rag.errors import RagError


def _file_options(s) -> None:
    s.add_argument("--on-error", choices=("skip", "fail"), default=None,
                   help="a file that cannot be read: report it and go on (skip, the default) or stop (fail)")
    s.add_argument("--report", default=None, help="where to write the per-file JSON report (default: corpus.report)")


def build_parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(prog="rag", description="Grounded answers with provable citations.")
    ap.add_argument("-v", "--verbose", action="count", default=0, help="more logging (-vv for debug)")
    sub = ap.add_subparsers(dest="command", required=True)

    s = sub.add_parser("index", help="index the corpus named in the config")
    s.add_argument("--config", default=DEFAULT_CONFIG)
    s.add_argument("--force", action="store_true", help="overwrite an index built with another model/analyzer")
    _file_options(s)
    s.add_argument("--set", action="append", metavar="KEY=VALUE", help="override a config value (repeatable)")
    s.set_defaults(func=cmd_index)

    s = sub.add_parser("add", help="add documents (JSONL, folder or file) to an existing index")
    s.add_argument("path")
    s.add_argument("--config", default=DEFAULT_CONFIG)
    s.add_argument("--replace", action="store_true", help="make each given document the only version of its id")
    _file_options(s)
    s.add_argument("--set", action="append", metavar="KEY=VALUE", help="override a config value (repeatable)")
    s.set_defaults(func=cmd_add)

    s = sub.add_parser("delete", help="delete a document (all versions, or one) from the index")
    s.add_argument("doc_id")
    s.add_argument("--version", default=None)
    s.add_argument("--config", default=DEFAULT_CONFIG)
    s.add_argument("--set", action="append", metavar="KEY=VALUE", help="override a config value (repeatable)")
    s.set_defaults(func=cmd_delete)

    s = sub.add_parser("migrate", help="copy an index between backends (local <-> Milvus) without re-embedding; "
                                       "resumable")
    s.add_argument("--from", dest="source", required=True, metavar="CONFIG", help="config of the index to copy")
    s.add_argument("--to", dest="target", required=True, metavar="CONFIG", help="config of the index to fill")
    s.add_argument("--batch-documents", type=int, default=None,
                   help="documents per published batch (default: the target's index.milvus.batch_documents)")
    s.add_argument("--set", action="append", metavar="KEY=VALUE", help="override a value of the --to config")
    s.set_defaults(func=cmd_migrate)

    s = sub.add_parser("search", help="hybrid search: fused candidates with per-retriever ranks and scores")
    s.add_argument("query")
    s.add_argument("--config", default=DEFAULT_CONFIG)
    s.add_argument("--top", type=int, default=10)
    s.add_argument("--json", action="store_true")
    s.add_argument("--set", action="append", metavar="KEY=VALUE", help="override a config value (repeatable)")
    principal_options(s)
    filter_options(s)
    s.set_defaults(func=cmd_search)

    s = sub.add_parser("context", help="retrieve and build the budgeted prompt; print its manifest")
    s.add_argument("question")
    s.add_argument("--config", default=DEFAULT_CONFIG)
    s.add_argument("--history", help="JSON file: [{\"role\": \"user\", \"content\": ...}, ...]")
    s.add_argument("--show-prompt", action="store_true", help="also print the rendered messages")
    s.add_argument("--json", action="store_true")
    s.add_argument("--set", action="append", metavar="KEY=VALUE", help="override a config value (repeatable)")
    principal_options(s)
    filter_options(s)
    s.set_defaults(func=cmd_context)

    s = sub.add_parser("ask", help="answer a question with validated citations (or abstain)")
    s.add_argument("question")
    s.add_argument("--config", default=DEFAULT_CONFIG)
    s.add_argument("--history", help="JSON file: [{\"role\": \"user\", \"content\": ...}, ...]")
    s.add_argument("--json", action="store_true", help="print the whole AnswerResult (with its trace) as JSON")
    s.add_argument("--set", action="append", metavar="KEY=VALUE", help="override a config value (repeatable)")
    principal_options(s)
    filter_options(s)
    s.set_defaults(func=cmd_ask)

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
    s.add_argument("--set", action="append", metavar="KEY=VALUE", help="override a config value (repeatable)")
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
    s.add_argument("--set", action="append", metavar="KEY=VALUE", help="override a config value (repeatable)")
    s.set_defaults(func=cmd_calibrate)

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
    s.add_argument("--set", action="append", metavar="KEY=VALUE", help="override a config value (repeatable)")
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
    s.add_argument("--set", action="append", metavar="KEY=VALUE", help="override a config value (repeatable)")
    s.set_defaults(func=cmd_eval_answers)

    s = sub.add_parser("eval-claims", help="the validator's support check on labelled (claim, quote) pairs")
    s.add_argument("--dataset", required=True, help="claims.jsonl: id, doc_id, quote, claim, label")
    s.add_argument("--config", default=DEFAULT_CONFIG)
    s.add_argument("--corpus", default=None,
                   help="corpus JSONL the quotes come from (default: corpus.jsonl next to the claims file)")
    s.add_argument("--json", default=None, help="write the report (per-label counts and rows) here")
    s.add_argument("--set", action="append", metavar="KEY=VALUE", help="override a config value (repeatable)")
    s.set_defaults(func=cmd_eval_claims)

    s = sub.add_parser("eval-addressing", help="does the validator reject a gold answer given for another question? "
                                               "(no index, no retrieval)")
    s.add_argument("--dataset", required=True, help="folder with corpus.jsonl and questions.jsonl (claims.jsonl "
                                                    "optional)")
    s.add_argument("--config", default=DEFAULT_CONFIG, help="the validation section is used")
    s.add_argument("--claims", default=None, help="claims for the paraphrase cases (default: DATASET/claims.jsonl)")
    s.add_argument("--show", type=int, default=20, metavar="N", help="failures to print (default 20)")
    s.add_argument("--out", "--json", dest="json", default=None, help="write the report with every pair here")
    s.add_argument("--set", action="append", metavar="KEY=VALUE", help="override a config value (repeatable)")
    s.set_defaults(func=cmd_eval_addressing)

    s = sub.add_parser("demo", help="index the bundled demo corpus and run its questions")
    s.add_argument("--config", default=DEFAULT_CONFIG)
    s.add_argument("--questions", default=None)
    s.add_argument("--set", action="append", metavar="KEY=VALUE", help="override a config value (repeatable)")
    s.set_defaults(func=cmd_demo)

    from rag.cli.documents import add_parsers as _documents_parsers  # documents

    _documents_parsers(sub)
    from rag.cli.files import add_parsers as _files_parsers  # extract | sync

    _files_parsers(sub)
    from rag.cli.batch import add_parsers as _batch_parsers  # batch | experiment | compare

    _batch_parsers(sub)
    from rag.cli.models import add_parsers as _models_parsers  # models install-llm | list

    _models_parsers(sub)
    from rag.cli.serve import add_parsers as _serve_parsers  # serve

    _serve_parsers(sub)
    from rag.cli.warmup import add_parsers as _warmup_parsers  # warmup

    _warmup_parsers(sub)
    from rag.cli.tools import add_parsers as _tools_parsers  # tools select | format

    _tools_parsers(sub)
    from rag.cli.bench import add_parsers as _bench_parsers  # bench list | run | check | data

    _bench_parsers(sub)
    from rag.cli.reader import add_parsers as _reader_parsers  # reader data build | show

    _reader_parsers(sub)
    return ap


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    level = logging.WARNING - 10 * min(args.verbose, 2)
    logging.basicConfig(level=level, format="%(levelname)s %(name)s: %(message)s")
    # bm25s sets its own logger to DEBUG when it is imported (lazily, later): filter at the handler.
    for h in logging.getLogger().handlers:
        h.setLevel(level)
    try:
        return args.func(args)
    except RagError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
