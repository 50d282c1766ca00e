"""``rag extract FILE`` and ``rag sync FOLDER``, and the per-file report of ``rag index`` / ``add``."""
from __future__ import annotations

import json
import sys
import time
from dataclasses import asdict
from pathlib import Path

from rag.cli.common import load_cli_config, make_pipeline, set_option

EXIT_FILES_FAILED = 3  # some files could not be read (the others were indexed)


def add_parsers(sub) -> None:
    from rag.cli.common import DEFAULT_CONFIG

    s = sub.add_parser("extract", help="what one file becomes, without indexing it: format, metadata, text per "
                                       "page or section with locators, the chunks, every warning")
    s.add_argument("file")
    s.add_argument("--json", action="store_true", help="print JSON instead of text")
    s.add_argument("--config", default=DEFAULT_CONFIG)
    set_option(s)
    s.set_defaults(func=cmd_extract)

    s = sub.add_parser("sync", help="bring the index to exactly a folder's files: add, replace and delete only "
                                    "what changed (resumable)")
    s.add_argument("folder")
    s.add_argument("--config", default=DEFAULT_CONFIG)
    s.add_argument("--dry-run", action="store_true", help="print the plan, change nothing")
    s.add_argument("--watch", type=float, default=None, metavar="SECONDS", help="sync again every SECONDS")
    s.add_argument("--on-error", choices=("skip", "fail"), default=None,
                   help="skip (default) or stop at the first file that cannot be read")
    s.add_argument("--report", default=None, help="where to write the JSON report (default: corpus.report)")
    set_option(s)
    s.set_defaults(func=cmd_sync)


def on_error_overrides(args) -> None:
    if getattr(args, "on_error", None):
        args.set = list(args.set or []) + [f"corpus.on_error={args.on_error}"]


def cmd_extract(args) -> int:
    from rag.documents import read_file
    from rag.documents.folder import file_document
    from rag.index.chunking import Chunker

    cfg = load_cli_config(args)
    path = Path(args.file)
    f = read_file(path, cfg.corpus, name=str(path))
    doc = file_document(f).document
    chunks = Chunker(cfg.chunking).chunk(doc)
    ex = f.extracted
    if args.json:
        out = {"file": str(path), "format": ex.format, "sha256": f.sha256, "id": doc.id, "version": doc.version,
               "title": doc.title, "uri": doc.uri, "metadata": {k: v for k, v in doc.metadata.items() if k != "pages"},
               "pages": [{"page": p.number, "start": p.start, "end": p.end, "text": ex.text[p.start:p.end]}
                         for p in ex.pages],
               "blocks": [asdict(b) for b in ex.blocks],
               "warnings": [asdict(w) for w in ex.warnings],
               "chunks": [{"evidence_id": c.evidence_id, "page": c.page, "page_end": c.page_end, "locator": c.locator,
                           "heading_path": list(c.heading_path), "start": c.start_char, "end": c.end_char,
                           "text": c.text} for c in chunks]}
        print(json.dumps(out, ensure_ascii=False, indent=2))
        return 0
    print(f"{path}: {ex.format}, {len(ex.text)} characters, {len(ex.pages) or 'no'} pages, {len(ex.blocks)} blocks")
    print(f"  id {doc.id}  version {doc.version}  title {doc.title!r}")
    extra = {k: v for k, v in doc.metadata.items() if k not in ("pages", "folder", "entry_sha256")}
    print(f"  metadata {json.dumps(extra, ensure_ascii=False)}")
    for w in ex.warnings:
        print(f"  warning [{w.code}]{f' page {w.page}' if w.page else ''}: {w.message}")
    for p in ex.pages:
        body = ex.text[p.start:p.end].strip()
        print(f"\n--- page {p.number} ({len(body)} characters)\n{body[:400]}{' …' if len(body) > 400 else ''}")
    print(f"\n{len(chunks)} chunks:")
    for c in chunks:
        from rag.context.builder import page_label

        where = " · ".join(x for x in (page_label(c.page, c.page_end), c.locator) if x)
        head = " ".join(c.text.split())[:90]
        print(f"  {c.evidence_id}  {where or '-'}  {head}")
    return 0


def write_report(path: Path, payload: dict) -> None:
    from rag._io import atomic_write_text

    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write_text(path, json.dumps(payload, ensure_ascii=False, indent=2) + "\n")


def print_failures(failures, warnings, ignored, report: Path | None) -> None:
    for f in failures:
        print(f"  failed  {f.file}: [{f.reason}] {f.message}", file=sys.stderr)
    shown = [w for w in warnings if w.code not in ("header_removed",)]
    for w in shown[:20]:
        print(f"  warning {w.file}{f' p. {w.page}' if w.page else ''}: [{w.code}] {w.message}", file=sys.stderr)
    if len(shown) > 20:
        print(f"  … {len(shown) - 20} more warnings in the report", file=sys.stderr)
    if ignored:
        print(f"  ignored {len(ignored)} files that are not documents: {', '.join(ignored[:5])}"
              f"{' …' if len(ignored) > 5 else ''}", file=sys.stderr)
    if report is not None and (failures or warnings or ignored):
        print(f"  report: {report}", file=sys.stderr)


def print_quarantined(found, limit: int = 30) -> None:
    """What the quarantine will withhold (rag.context.screen.WithheldBlock records): one line per
    signal, with its document, scope and excerpt."""
    if not found:
        return
    from rag.context.screen import withheld_documents

    docs = withheld_documents(found)
    whole = sum(1 for v in docs.values() if v == "document")
    print(f"quarantined as suspected prompt injection: {len(docs)} documents ({whole} withheld whole, "
          f"{len(docs) - whole} in part), {len(found)} signals")
    for w in found[:limit]:
        what = "whole document" if w.scope == "document" else f"block {w.evidence_id}"
        print(f"  {w.document_id} @ {w.document_version}  {w.signal:<13} {what}  {w.excerpt!r}")
    if len(found) > limit:
        print(f"  … {len(found) - limit} more in the report")
    print("  (an operator can trust a document: security.trusted_documents, or trusted: true in the folder manifest)")


def files_payload(load) -> dict:
    return {"documents": [{"file": f.file, "format": f.format, "id": f.document.id, "version": f.document.version,
                           "pages": f.pages} for f in load.files],
            "failed": [asdict(f) for f in load.failures], "warnings": [asdict(w) for w in load.warnings],
            "ignored": list(load.ignored)}


def cmd_sync(args) -> int:
    from rag.cli.common import progress_bars
    from rag.context.screen import screen_synced
    from rag.index.sync import report_json, sync_folder

    on_error_overrides(args)
    p = make_pipeline(args)
    report = Path(args.report) if args.report else p.config.resolve(p.config.corpus.report)
    while True:
        progress, bars = progress_bars()  # check, read, embed, write: one bar each on stderr
        try:
            rep = sync_folder(p, args.folder, dry_run=args.dry_run, progress=progress)
        finally:
            for b in bars.values():
                b.close()
        if not args.dry_run:
            rep = screen_synced(p.index if p.index_exists() else None, p.config.security, rep)
        write_report(report, json.loads(report_json(rep)))
        verb = "would change" if args.dry_run else "synced"
        print(f"{verb} {rep.folder}: {rep.summary()} ({rep.chunks_embedded} chunks embedded, {rep.seconds:.1f} s); "
              f"index now {len(p.index) if p.index_exists() else 0} chunks")
        for what, items in (("added", rep.added), ("updated", rep.updated), ("removed", rep.removed)):
            for rel in items:
                print(f"  {what:<8}{rel}")
        print_quarantined(rep.quarantined)
        print_failures(rep.failed, rep.warnings, rep.ignored, report)
        if args.watch is None:
            return EXIT_FILES_FAILED if rep.failed else 0
        time.sleep(args.watch)
