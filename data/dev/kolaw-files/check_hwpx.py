"""How well the HWPX loader reads the rendered kolaw-dev files.

    .venv/bin/python data/dev/kolaw-files/check_hwpx.py

For every file in hwpx/ (written by render_hwpx.py), read through
:func:`rag.documents.files.read_file` (format detection, the loader, the plausibility checks),
made a document with the folder's manifest entry and chunked with configs/default.yaml's
``chunking`` section:

- ``ratio``: difflib ``SequenceMatcher`` ratio (autojunk off) between the extracted text and what
  the file shows (:func:`render_hwpx.shown_text`: no ``**`` or escapes, grid boxes as
  ``cell | cell`` rows), both NFC- and whitespace-normalised with the ``#`` heading marks removed;
  ``ratio_raw`` compares with the markdown source as it is;
- ``headings``: heading blocks found / ``#`` headings in the source, and whether their levels agree;
  ``articles``: the source's article headings (``제N조 (제목)``) found as heading blocks;
- ``table_rows``: table rows read / rows of the grid boxes rendered as ``hp:tbl``;
- ``boilerplate``: running header/footer strings and the picture's shape comment found in the
  extracted text, and ``chunks_with_boilerplate``: chunks holding one (both must be none);
- ``chunk_articles_match``: the articles the chunks start in (``제8조의2`` of a locator
  ``제8조의2제2항``), in order, are those of the JSONL document's chunks (the chunk cuts inside an
  article may differ: the markdown marks count as tokens there);
- ``title`` as the loader read it, and the time ``read_file`` took; the loader's own speed
  (best of five passes over the files held in memory).

A file is OK when ratio ≥ 0.999, the heading levels and table rows match, every article is found,
no boilerplate is anywhere and the title matches. Prints one OK/FAIL line per file, a summary, and
writes hwpx_check.json next to this script. Exit status 1 if any file fails.
"""
from __future__ import annotations

import json
import re
import time
import unicodedata
from pathlib import Path


import render_hwpx as render
from check_docx_html import ratio, throughput  # (the same comparison and speed pass)

from rag.config import load_config
from rag.documents.files import read_file, to_document
from rag.documents.hwpx import HwpxLoader
from rag.documents.manifest import load_manifest
from rag.index.chunking import Chunker
from rag.types import Document

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[2]

_MARKS = re.compile(r"^#{1,6} |\*\*", re.MULTILINE)  # our heading and bold marks
_HEADING = re.compile(r"^(#{1,6}) (.*)$", re.MULTILINE)
_ARTICLE = re.compile(r"^제\d+조(?:의\d+)?")
MIN_RATIO = 0.999


def normalise(text: str) -> str:
    return " ".join(unicodedata.normalize("NFC", _MARKS.sub("", text)).split())


def source_tables(text: str) -> int:
    return sum(len(rows) for level, lines in render.blocks(text) if level < 0
               and (rows := render.grid_rows(lines)) is not None)


def _articles(chunks) -> list[str]:
    """The articles the chunks start in, in order, each once (``제8조의2`` of ``제8조의2제2항``)."""
    out: list[str] = []
    for c in chunks:
        m = _ARTICLE.match(c.locator)
        if m and (not out or out[-1] != m.group(0)):
            out.append(m.group(0))
    return out


def check(path: Path, doc: dict, chunker: Chunker, manifest) -> dict:
    t0 = time.perf_counter()
    f = read_file(path)
    seconds = time.perf_counter() - t0
    ex = f.extracted
    text = ex.text
    shown = render.shown_text(doc["text"])
    source_levels = [len(m.group(1)) for m in _HEADING.finditer(shown)]
    heads = [(b.level, " ".join(text[b.start:b.end].lstrip("#").split())) for b in ex.blocks if b.kind == "heading"]
    articles = [" ".join(m.group(2).split()) for m in _HEADING.finditer(shown) if _ARTICLE.match(m.group(2))]
    found = {h for _, h in heads}
    missing = [a for a in articles if a not in found]
    boiler = render.boilerplate(doc)
    document = to_document(f, path.name, manifest.entry_for(path.name), folder=path.parent.name)
    chunks = chunker.chunk(document)
    source_chunks = chunker.chunk(Document(id=doc["id"], text=doc["text"], version=doc["version"],
                                           title=doc["title"], uri=doc["uri"]))
    r = {
        "file": f"{path.parent.name}/{path.name}",
        "format": ex.format,
        "chars": len(text),
        "ratio": round(ratio(normalise(text), normalise(shown)), 4),
        "ratio_raw": round(ratio(normalise(text), normalise(doc["text"])), 4),
        "headings": len(heads),
        "source_headings": len(source_levels),
        "levels_match": [lv for lv, _ in heads] == source_levels,
        "articles": len(articles) - len(missing),
        "source_articles": len(articles),
        "missing_articles": missing,
        "table_rows": sum(b.kind == "table_row" for b in ex.blocks),
        "source_table_rows": source_tables(doc["text"]),
        "boilerplate": [s for s in boiler if s in text],
        "chunks": len(chunks),
        "chunks_with_boilerplate": sum(any(s in c.text for s in boiler) for c in chunks),
        "chunk_articles_match": _articles(chunks) == _articles(source_chunks),
        "id": document.id,
        "version": document.version,
        "title": ex.title,
        "title_matches": ex.title == doc["title"],
        "warnings": [w.code for w in ex.warnings],
        "seconds": round(seconds, 4),
    }
    r["ok"] = (r["ratio"] >= MIN_RATIO and r["levels_match"] and not missing and not r["boilerplate"]
               and not r["chunks_with_boilerplate"] and r["table_rows"] == r["source_table_rows"]
               and r["title_matches"] and r["chunk_articles_match"] and (document.id, document.version) == (doc["id"], doc["version"]))
    return r


def main() -> int:
    docs = render.load_corpus()
    folder = HERE / "hwpx"
    manifest = load_manifest(folder)
    chunker = Chunker(load_config(ROOT / "configs" / "default.yaml").chunking)
    rows = [check(folder / f"{render.file_stem(d)}.hwpx", d, chunker, manifest) for d in docs]
    for r in rows:
        print(f"{'OK  ' if r['ok'] else 'FAIL'} {r['file']:58} chars {r['chars']:6d} ratio {r['ratio']:.4f} "
              f"(raw {r['ratio_raw']:.4f}) headings {r['headings']}/{r['source_headings']} "
              f"levels {'ok' if r['levels_match'] else 'NO'} articles {r['articles']}/{r['source_articles']} "
              f"table rows {r['table_rows']}/{r['source_table_rows']} boilerplate {len(r['boilerplate'])} "
              f"(in {r['chunks_with_boilerplate']}/{r['chunks']} chunks) chunk articles "
              f"{'ok' if r['chunk_articles_match'] else 'differ'} {r['seconds'] * 1000:.1f} ms {','.join(r['warnings'])}")
        if r["missing_articles"]:
            print(f"     missing: {', '.join(r['missing_articles'][:10])}")
    secs = sum(r["seconds"] for r in rows)
    summary = {
        "files": len(rows),
        "ok": sum(r["ok"] for r in rows),
        "min_ratio": min(r["ratio"] for r in rows),
        "mean_ratio": round(sum(r["ratio"] for r in rows) / len(rows), 4),
        "mean_ratio_raw": round(sum(r["ratio_raw"] for r in rows) / len(rows), 4),
        "levels_match": sum(r["levels_match"] for r in rows),
        "articles": f"{sum(r['articles'] for r in rows)}/{sum(r['source_articles'] for r in rows)}",
        "table_rows": f"{sum(r['table_rows'] for r in rows)}/{sum(r['source_table_rows'] for r in rows)}",
        "titles_match": sum(r["title_matches"] for r in rows),
        "files_with_boilerplate": sum(bool(r["boilerplate"]) for r in rows),
        "chunks": sum(r["chunks"] for r in rows),
        "chunks_with_boilerplate": sum(r["chunks_with_boilerplate"] for r in rows),
        "chunk_articles_match": sum(r["chunk_articles_match"] for r in rows),
        "read_file_files_per_s": round(len(rows) / secs, 1),
        "loader": throughput([folder / f"{render.file_stem(d)}.hwpx" for d in docs], HwpxLoader()),
    }
    s = summary
    print(f"hwpx: {s['ok']}/{s['files']} OK, ratio min {s['min_ratio']:.4f} mean {s['mean_ratio']:.4f} "
          f"(raw source {s['mean_ratio_raw']:.4f}), heading levels match {s['levels_match']}/{s['files']}, "
          f"articles {s['articles']}, table rows {s['table_rows']}, titles {s['titles_match']}/{s['files']}, "
          f"boilerplate in {s['files_with_boilerplate']} files and {s['chunks_with_boilerplate']}/{s['chunks']} "
          f"chunks, chunk articles match {s['chunk_articles_match']}/{s['files']}, loader {s['loader']['files_per_s']} files/s "
          f"({s['loader']['chars_per_s']} chars/s, {s['loader']['mb_per_s']} MB/s of file)")
    (HERE / "hwpx_check.json").write_text(json.dumps({"summary": summary, "files": rows}, ensure_ascii=False,
                                                     indent=1) + "\n", encoding="utf-8")
    return 0 if s["ok"] == s["files"] else 1


if __name__ == "__main__":
    raise SystemExit(main())
