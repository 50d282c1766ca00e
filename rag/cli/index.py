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
    print(f"indexed {n_docs} documents -> {len(idx)} chunks at {p.index_path}{cached}")
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
