"""``rag index | add | delete``: build and update the index."""
from __future__ import annotations

import argparse

from pathlib import Path

from rag.cli.common import DEFAULT_CONFIG, make_pipeline, progress_bar, set_option
from rag.cli.files import (EXIT_FILES_FAILED, files_payload, on_error_overrides, print_failures, print_quarantined,
                           write_report)


def _report_path(args, p) -> Path:
    return Path(args.report) if getattr(args, "report", None) else p.config.resolve(p.config.corpus.report)


def cmd_index(args) -> int:
    """Index the corpus; files that cannot be read are reported (and in the JSON report) and the
    exit status is 3, the good ones indexed."""
    from rag.context.screen import screen_index
    from rag.index.loaders import check_corpus

    on_error_overrides(args)
    p = make_pipeline(args)
    with progress_bar(None, "reading files") as bar:
        load = p.read_corpus(progress=bar.update)
    docs = check_corpus(load)
    with progress_bar(None, "embedding") as bar:
        idx = p.build_index(docs, force=args.force, progress=bar.update)
    emb = p.components.embedder
    cached = f", {getattr(emb, 'hits', 0)} chunk embeddings reused from cache" if hasattr(emb, "hits") else ""
    failed = f"; {len(load.failures)} files failed" if load.failures else ""
    print(f"indexed {len(docs)} documents -> {len(idx)} chunks at {p.index_location}{cached}{failed}")
    found = screen_index(idx, p.config.security)
    print_quarantined(found)
    report = _report_path(args, p)
    if load.files or load.failures or found:
        write_report(report, {**files_payload(load), "quarantined": [w.to_json() for w in found]})
    print_failures(load.failures, load.warnings, load.ignored, report)
    return EXIT_FILES_FAILED if load.failures else 0


def cmd_add(args) -> int:
    """Add (or ``--replace``) the documents of a JSONL file, a folder or one file of any format."""
    from rag.context.screen import screen_index
    from rag.index.loaders import read_corpus

    on_error_overrides(args)
    p = make_pipeline(args)
    load = read_corpus(args.path, "auto", p.config.corpus)
    rep = p.replace_documents(load.documents) if args.replace else p.add_documents(load.documents)
    print(f"added {len(rep.added)}, removed {len(rep.removed)}, unchanged {len(rep.unchanged)} "
          f"({rep.chunks_embedded} chunks embedded); index now {len(p.index)} chunks")
    found = screen_index(p.index, p.config.security, [tuple(k.rsplit(":", 1)) for k in rep.added])
    print_quarantined(found)
    report = _report_path(args, p)
    if load.failures or found:
        write_report(report, {**files_payload(load), "quarantined": [w.to_json() for w in found]})
    print_failures(load.failures, load.warnings, load.ignored, report)
    return EXIT_FILES_FAILED if load.failures else 0


def cmd_delete(args) -> int:
    p = make_pipeline(args)
    rep = p.delete_document(args.doc_id, args.version)
    print(f"removed {', '.join(rep.removed)}; index now {len(p.index)} chunks")
    return 0


def cmd_migrate(args) -> int:
    from rag.config import load_config
    from rag.index.migrate import migrate
    from rag.pipeline import Pipeline
    from rag.cli.common import overrides

    src = Pipeline(load_config(args.source))
    ov = overrides(args.set)
    dst_cfg = load_config(args.target)
    dst = Pipeline(dst_cfg.with_overrides(ov) if ov else dst_cfg)
    with progress_bar(None, "copying") as bar:
        rep = migrate(src, dst, batch_documents=args.batch_documents, progress=bar.update)
    extra = f"; {len(rep.extra)} documents in the target are not in the source (left in place)" if rep.extra else ""
    print(f"migrated {src.index_location} -> {dst.index_location}: {rep.copied} documents copied, "
          f"{rep.already} already there, {rep.documents} in the source; target now {rep.chunks} chunks "
          f"({rep.seconds:.1f} s){extra}")
    return 0


def _file_options(s) -> None:
    s.add_argument("--on-error", choices=("skip", "fail"), default=None,
                   help="a file that cannot be read: report it and go on (skip, the default) or stop (fail)")
    s.add_argument("--report", default=None, help="where to write the per-file JSON report (default: corpus.report)")


def add_parsers(sub: argparse._SubParsersAction) -> None:
    """The parsers of ``rag index | add | delete | migrate``."""
    s = sub.add_parser("index", help="index the corpus named in the config")
    s.add_argument("--config", default=DEFAULT_CONFIG)
    s.add_argument("--force", action="store_true", help="overwrite an index built with another model/analyzer")
    _file_options(s)
    set_option(s)
    s.set_defaults(func=cmd_index)

    s = sub.add_parser("add", help="add documents (JSONL, folder or file) to an existing index")
    s.add_argument("path")
    s.add_argument("--config", default=DEFAULT_CONFIG)
    s.add_argument("--replace", action="store_true", help="make each given document the only version of its id")
    _file_options(s)
    set_option(s)
    s.set_defaults(func=cmd_add)

    s = sub.add_parser("delete", help="delete a document (all versions, or one) from the index")
    s.add_argument("doc_id")
    s.add_argument("--version", default=None)
    s.add_argument("--config", default=DEFAULT_CONFIG)
    set_option(s)
    s.set_defaults(func=cmd_delete)

    s = sub.add_parser("migrate", help="copy an index between backends (local <-> Milvus) without re-embedding; "
                                       "resumable")
    s.add_argument("--from", dest="source", required=True, metavar="CONFIG", help="config of the index to copy")
    s.add_argument("--to", dest="target", required=True, metavar="CONFIG", help="config of the index to fill")
    s.add_argument("--batch-documents", type=int, default=None,
                   help="documents per published batch (default: the target's index.milvus.batch_documents)")
    s.add_argument("--set", action="append", metavar="KEY=VALUE", help="override a value of the --to config")
    s.set_defaults(func=cmd_migrate)
