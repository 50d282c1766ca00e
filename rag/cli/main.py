"""Command line: ``rag index | add | delete | search | context | ask | eval-retrieval | train-reranker | calibrate |
eval-abstention | eval-answers | eval-claims | eval-addressing | demo | extract | sync | batch | experiment | compare |
models | serve | warmup | tools | migrate | bench | reader``."""
from __future__ import annotations

import argparse
import logging
import sys

from rag.cli.answer import add_parsers as _answer_parsers
from rag.cli.evaluate import add_parsers as _evaluation_parsers
from rag.cli.index import add_parsers as _index_parsers
from rag.errors import RagError


def build_parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(prog="rag", description="Grounded answers with provable citations.")
    ap.add_argument("-v", "--verbose", action="count", default=0, help="more logging (-vv for debug)")
    sub = ap.add_subparsers(dest="command", required=True)
    _index_parsers(sub)  # index | add | delete | migrate
    _answer_parsers(sub)  # search | context | ask | demo
    _evaluation_parsers(sub)  # eval-* | train-reranker | calibrate
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
