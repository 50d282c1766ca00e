"""``rag index | add | delete``: build and update the index."""
from __future__ import annotations

from rag.cli.common import progress_bar, make_pipeline


def cmd_index(args) -> int:
    p = make_pipeline(args)
    docs = p.load_corpus()
    n_docs = len(docs)
    with progress_bar(None, "embedding") as bar:
        idx = p.build_index(docs, force=args.force, progress=bar.update)
    emb = p.embedder
    cached = f", {getattr(emb, 'hits', 0)} chunk embeddings reused from cache" if hasattr(emb, "hits") else ""
    print(f"indexed {n_docs} documents -> {len(idx)} chunks at {p.index_location}{cached}")
    return 0


def cmd_add(args) -> int:
    from rag.index.loaders import load_documents

    p = make_pipeline(args)
    docs = load_documents(args.path)
    rep = p.replace_documents(docs) if args.replace else p.add_documents(docs)
    print(f"added {len(rep.added)}, removed {len(rep.removed)}, unchanged {len(rep.unchanged)} "
          f"({rep.chunks_embedded} chunks embedded); index now {len(p.index)} chunks")
    return 0


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
