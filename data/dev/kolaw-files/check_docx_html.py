"""How well the DOCX and HTML loaders read the rendered kolaw-dev files.

    .venv/bin/python data/dev/kolaw-files/check_docx_html.py

For every file in docx/ and html/ (written by render_docx_html.py), read through
:func:`rag.documents.files.read_file` (format detection, the loader, the plausibility checks):

- ``ratio``: difflib ``SequenceMatcher`` ratio (autojunk off) between the extracted text and the
  source, both whitespace-normalised with the ``#`` heading marks removed; the source is what a
  reader of the file sees (:func:`render_docx_html.visible_text`: ``**`` and markdown escapes and
  ``<img>`` tags removed). ``ratio_raw`` compares with the markdown source as it is;
- ``headings``: heading blocks found / ``#`` headings in the source, and whether their levels agree;
- ``boilerplate``: navigation, banner, cookie, sidebar, share, footer, script (HTML) or page
  header/footer (DOCX) strings found in the extracted text (must be none);
- ``title`` as the loader read it, and the time ``read_file`` took;
- per format, the loader's own speed (best of five passes over the files held in memory).

Prints a table and writes docx_html_check.json next to this script.
"""
from __future__ import annotations

import difflib
import json
import re
import time
from pathlib import Path


import render_docx_html as render

from rag.documents.docx import DocxLoader
from rag.documents.files import read_file
from rag.documents.html import HtmlLoader

HERE = Path(__file__).resolve().parent

_MARKS = re.compile(r"^#{1,6} |\*\*", re.MULTILINE)  # our heading and bold marks


def normalise(text: str) -> str:
    return " ".join(_MARKS.sub("", text).split())


def ratio(a: str, b: str) -> float:
    if a == b:
        return 1.0
    return difflib.SequenceMatcher(None, a, b, autojunk=False).ratio()


def check(path: Path, doc: dict, boilerplate: tuple[str, ...]) -> dict:
    t0 = time.perf_counter()
    ex = read_file(path).extracted
    seconds = time.perf_counter() - t0
    text = ex.text
    source_levels = [len(m.group(1)) for m in re.finditer(r"^(#{1,6}) ", doc["text"], re.MULTILINE)]
    levels = [b.level for b in ex.blocks if b.kind == "heading"]
    return {
        "file": f"{path.parent.name}/{path.name}",
        "format": ex.format,
        "chars": len(text),
        "ratio": round(ratio(normalise(text), normalise(render.visible_text(doc["text"]))), 4),
        "ratio_raw": round(ratio(normalise(text), normalise(doc["text"])), 4),
        "headings": len(levels),
        "source_headings": len(source_levels),
        "levels_match": levels == source_levels,
        "boilerplate": [s for s in boilerplate if s in text],
        "title": ex.title,
        "title_matches": ex.title == doc["title"] or ex.title.startswith(doc["title"] + " |"),
        "warnings": [w.code for w in ex.warnings],
        "seconds": round(seconds, 4),
    }


def throughput(paths: list[Path], loader, repeats: int = 5) -> dict:
    """Loader-only speed over ``paths`` (bytes already in memory): the best of ``repeats`` passes."""
    blobs = [(p.name, p.read_bytes()) for p in paths]
    best = float("inf")
    for _ in range(repeats):
        t0 = time.perf_counter()
        chars = sum(len(loader.extract(data, name).text) for name, data in blobs)
        best = min(best, time.perf_counter() - t0)
    return {"files_per_s": round(len(blobs) / best, 1), "chars_per_s": round(chars / best),
            "mb_per_s": round(sum(len(d) for _, d in blobs) / best / 1e6, 2)}


def main() -> int:
    docs = render.load_corpus()
    rows = []
    for doc in docs:
        stem = render.file_stem(doc)
        rows.append(check(HERE / "docx" / f"{stem}.docx", doc, render.BOILERPLATE_DOCX))
        rows.append(check(HERE / "html" / f"{stem}.html", doc, render.BOILERPLATE_HTML))
    print(f"{'file':64} {'chars':>6} {'ratio':>6} {'raw':>6} {'head':>7} {'lvl':>3} {'boiler':>6} {'ms':>6}  warnings")
    for r in rows:
        print(f"{r['file']:64} {r['chars']:6d} {r['ratio']:6.4f} {r['ratio_raw']:6.4f} "
              f"{r['headings']:3d}/{r['source_headings']:<3d} {'ok' if r['levels_match'] else 'NO':>3} "
              f"{len(r['boilerplate']):6d} {r['seconds'] * 1000:6.1f}  {','.join(r['warnings'])}")
    summary = {}
    for fmt in ("docx", "html"):
        sel = [r for r in rows if r["format"] == fmt]
        secs = sum(r["seconds"] for r in sel)
        summary[fmt] = {
            "files": len(sel),
            "min_ratio": min(r["ratio"] for r in sel),
            "mean_ratio": round(sum(r["ratio"] for r in sel) / len(sel), 4),
            "mean_ratio_raw": round(sum(r["ratio_raw"] for r in sel) / len(sel), 4),
            "levels_match": sum(r["levels_match"] for r in sel),
            "titles_match": sum(r["title_matches"] for r in sel),
            "files_with_boilerplate": sum(bool(r["boilerplate"]) for r in sel),
            "read_file_files_per_s": round(len(sel) / secs, 1),
            "loader": throughput([HERE / r["file"] for r in sel], DocxLoader() if fmt == "docx" else HtmlLoader()),
        }
        s = summary[fmt]
        print(f"{fmt}: {s['files']} files, ratio min {s['min_ratio']:.4f} mean {s['mean_ratio']:.4f} "
              f"(raw source {s['mean_ratio_raw']:.4f}), heading levels match {s['levels_match']}/{s['files']}, "
              f"titles {s['titles_match']}/{s['files']}, boilerplate in {s['files_with_boilerplate']} files, "
              f"loader {s['loader']['files_per_s']} files/s ({s['loader']['chars_per_s']} chars/s, "
              f"{s['loader']['mb_per_s']} MB/s of file)")
    (HERE / "docx_html_check.json").write_text(json.dumps({"summary": summary, "files": rows}, ensure_ascii=False,
                                                          indent=1) + "\n", encoding="utf-8")
    return 0 if all(not r["boilerplate"] for r in rows) else 1


if __name__ == "__main__":
    raise SystemExit(main())
