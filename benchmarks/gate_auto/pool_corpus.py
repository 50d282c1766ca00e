"""Pool a labelled abstention set's passages into a corpus `rag index` reads, and write a config for it.

Used by benchmarks/gate_auto/run.sh (issue 28: `rag calibrate --auto` measured on sets that come with
labels; the labels are never read here, only the passages).

    python benchmarks/gate_auto/pool_corpus.py corpus DATASET OUT.jsonl [--limit N]
    python benchmarks/gate_auto/pool_corpus.py config BASE.yaml OUT.yaml [--corpus C.jsonl] --index DIR --cache DIR

``corpus``: one document per unique passage, sorted by id, as JSONL (``id``, ``title``, ``text``).
NoMIRACL-style JSONL: ``id`` is the passage ``docid``; SQuAD 2.0 JSON: one document per paragraph with
the id `rag eval-abstention` gives it (``<article title>#<paragraph index>``, title with spaces).
``--limit N`` keeps the first N documents in id order.

``config``: BASE with ``corpus.paths``, ``index.path`` and ``embedding.cache_dir`` replaced by absolute
paths (so OUT may live anywhere) and ``name`` set to OUT's stem; everything else is copied as is.
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path


def passages(dataset: Path) -> dict[str, dict]:
    """docid -> {id, title, text}; the first text seen wins (conflicting duplicates are counted on stderr)."""
    docs: dict[str, dict] = {}
    conflicts = 0

    def put(docid: str, title: str, text: str) -> None:
        nonlocal conflicts
        old = docs.get(docid)
        if old is None:
            docs[docid] = {"id": docid, "title": title, "text": text}
        elif old["text"] != text or old["title"] != title:
            conflicts += 1

    if dataset.suffix == ".json":  # SQuAD 2.0: the ids rag.evaluation.datasets.load_labelled gives paragraphs
        for art in json.loads(dataset.read_text(encoding="utf-8"))["data"]:
            title = str(art.get("title", ""))
            for pi, para in enumerate(art.get("paragraphs", [])):
                put(f"{title}#{pi}", title.replace("_", " "), para["context"])
    else:  # NoMIRACL-style JSONL
        with dataset.open(encoding="utf-8") as f:
            for line in f:
                if line.strip():
                    for ps in json.loads(line)["passages"]:
                        put(str(ps["docid"]), str(ps.get("title") or ""), str(ps.get("text") or ""))
    if conflicts:
        print(f"{dataset}: {conflicts} repeated docids with another text (first kept)", file=sys.stderr)
    return docs


def write_corpus(dataset: Path, out: Path, limit: int | None) -> int:
    docs = passages(dataset)
    ids = sorted(docs)[:limit] if limit else sorted(docs)
    out.parent.mkdir(parents=True, exist_ok=True)
    with out.open("w", encoding="utf-8") as f:
        for d in ids:
            f.write(json.dumps(docs[d], ensure_ascii=False) + "\n")
    return len(ids)


def write_config(base: Path, out: Path, corpus: Path | None, index: Path, cache: Path) -> None:
    """``base`` with ``corpus`` (None: the base's own corpus paths, made absolute), ``index`` and ``cache``."""
    import yaml

    data = yaml.safe_load(base.read_text(encoding="utf-8")) or {}
    data["name"] = out.stem
    if corpus is not None:
        data.setdefault("corpus", {})["paths"] = [str(corpus.resolve())]
        data["corpus"]["format"] = "jsonl"
    else:
        data["corpus"]["paths"] = [str((base.parent / p).resolve()) for p in data["corpus"]["paths"]]
    data.setdefault("index", {})["path"] = str(index.resolve())
    data.setdefault("embedding", {})["cache_dir"] = str(cache.resolve())
    out.parent.mkdir(parents=True, exist_ok=True)
    header = (f"# {base.name} with the corpus, index and embedding cache swapped "
              f"(benchmarks/gate_auto/pool_corpus.py)\n")
    out.write_text(header + yaml.safe_dump(data, sort_keys=False, allow_unicode=True), encoding="utf-8")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    c = sub.add_parser("corpus")
    c.add_argument("dataset", type=Path)
    c.add_argument("out", type=Path)
    c.add_argument("--limit", type=int, default=None)
    g = sub.add_parser("config")
    g.add_argument("base", type=Path)
    g.add_argument("out", type=Path)
    g.add_argument("--corpus", type=Path, default=None, help="default: the base config's own corpus")
    g.add_argument("--index", type=Path, required=True)
    g.add_argument("--cache", type=Path, required=True)
    a = ap.parse_args(argv)
    if a.cmd == "corpus":
        n = write_corpus(a.dataset, a.out, a.limit)
        print(f"{a.out}: {n} documents")
    else:
        write_config(a.base, a.out, a.corpus, a.index, a.cache)
        print(f"{a.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
