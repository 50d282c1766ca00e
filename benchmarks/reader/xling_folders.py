"""BEIR folders for MS MARCO asked across languages: English questions over the Korean passages
(``msmarco-en-ko``) and Korean questions over the English ones (``msmarco-ko-en``).

The two shared folders (../shared/data/msmarco/{en,ko}) are translations of each other with the same
query ids, so a crossed folder is one side's corpus and qrels with the other side's queries (links, no
copies). ``rag eval-retrieval --reader-split eval`` then keeps the queries of the reader's eval split.

    python benchmarks/reader/xling_folders.py [--shared ../shared/data] [--out data/cache/xling]
"""
from __future__ import annotations

import argparse
import os
from pathlib import Path


def make(shared: Path, out: Path) -> list[Path]:
    made = []
    for q, p in (("en", "ko"), ("ko", "en")):
        dst = out / f"msmarco-{q}-{p}"
        (dst / "qrels").mkdir(parents=True, exist_ok=True)
        links = {dst / "corpus.jsonl": shared / "msmarco" / p / "corpus.jsonl",
                 dst / "queries.jsonl": shared / "msmarco" / q / "queries.jsonl",
                 dst / "qrels" / "test.tsv": shared / "msmarco" / p / "qrels" / "test.tsv"}
        for link, target in links.items():
            if not target.is_file():
                raise SystemExit(f"{target}: missing (the shared MS MARCO folders are needed)")
            if link.is_symlink() or link.exists():
                link.unlink()
            os.symlink(target.resolve(), link)
        made.append(dst)
    return made


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--shared", default="../shared/data")
    ap.add_argument("--out", default="data/cache/xling")
    a = ap.parse_args()
    for d in make(Path(a.shared), Path(a.out)):
        print(d)
