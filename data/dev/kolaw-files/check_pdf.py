"""How well :class:`rag.documents.pdf.PdfLoader` reads back the PDFs ``render_pdf.py`` made.

For each law: the character agreement (difflib ratio) of the extracted text with the source
text, both whitespace-normalised, the reference being what the PDF shows (the source with its
``#`` heading marks, ``**`` bold marks and markdown escapes removed; the extracted text with the
``#`` marks the assembler writes removed); the words glued (a space lost at a line break) and
split (a space added) found by aligning the two sequences of whitespace tokens; and the running
header/footer lines that survived (the law title or ``- N -`` more often than in the source).
Also pages per second over all files (median of ``--runs``).

    .venv/bin/python data/dev/kolaw-files/check_pdf.py [--corpus PATH] [--runs 3]

Writes ``pdf_check.json`` next to this script.
"""
from __future__ import annotations

import argparse
import difflib
import json
import re
import statistics
import time
import unicodedata
from pathlib import Path


from rag.documents.pdf import PdfLoader

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[2]

CORPUS = ROOT.parent / "shared" / "data" / "kolaw-dev" / "corpus.jsonl"
_FOOTER = re.compile(r"(?<!\S)[-–]\s?\d{1,4}\s?[-–](?!\S)")


def shown(markdown: str) -> str:
    """The source as the PDF shows it: no heading marks, bold marks or escapes; NFC (CJK
    compatibility ideographs become the unified ones, as :func:`rag.documents.assemble.clean`
    writes every loader's text)."""
    text = re.sub(r"(?m)^\s*#{1,6}\s+", "", markdown)
    text = re.sub(r"\\(.)", r"\1", text.replace("**", ""))
    return unicodedata.normalize("NFC", text)  # as every loader writes it (assemble.clean)


def extracted_plain(text: str) -> str:
    return re.sub(r"(?m)^#{1,6}\s+", "", text).replace("**", "")


def norm(text: str) -> str:
    return " ".join(text.split())


def word_errors(src: list[str], ext: list[str]) -> dict[str, object]:
    """Glued / split words and other token differences, with a few examples."""
    glued = split = other = 0
    examples: list[str] = []
    sm = difflib.SequenceMatcher(None, src, ext, autojunk=False)
    for op, i1, i2, j1, j2 in sm.get_opcodes():
        if op == "equal":
            continue
        a, b = src[i1:i2], ext[j1:j2]
        if op == "replace" and "".join(a) == "".join(b):
            if len(a) > len(b):
                glued += len(a) - len(b)
            else:
                split += len(b) - len(a)
            if len(examples) < 12:
                examples.append(f"{' '.join(a)!r} -> {' '.join(b)!r}")
        else:
            other += max(len(a), len(b))
            if len(examples) < 12:
                examples.append(f"{op}: {' '.join(a)[:60]!r} -> {' '.join(b)[:60]!r}")
    return {"glued": glued, "split": split, "other_tokens": other, "examples": examples}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--corpus", type=Path, default=CORPUS)
    ap.add_argument("--pdf", type=Path, default=HERE / "pdf")
    ap.add_argument("--runs", type=int, default=3)
    args = ap.parse_args()
    docs = {(d["id"], d["version"]): d for d in
            (json.loads(ln) for ln in args.corpus.read_text(encoding="utf-8").splitlines() if ln)}
    manifest = json.loads((args.pdf / "manifest.json").read_text(encoding="utf-8"))
    loader = PdfLoader()
    files = [(m, (args.pdf / m["file"]).read_bytes()) for m in manifest]
    loader.extract(files[0][1], files[0][0]["file"])  # warm-up: imports, kiwipiepy model
    rows = []
    for m, data in files:
        doc = docs[(m["id"], m["version"])]
        got = loader.extract(data, m["file"])
        src, ext = norm(shown(doc["text"])), norm(extracted_plain(got.text))
        ratio = difflib.SequenceMatcher(None, src, ext, autojunk=False).ratio()
        title = norm(doc["title"])
        left = max(0, ext.count(title) - src.count(title))
        left += max(0, len(_FOOTER.findall(ext)) - len(_FOOTER.findall(src)))
        words = word_errors(src.split(), ext.split())
        rows.append({"file": m["file"], "wrap": m["wrap"], "pages": len(got.pages),
                     "agreement": round(ratio, 5), "glued": words["glued"], "split": words["split"],
                     "other_tokens": words["other_tokens"], "source_words": len(src.split()),
                     "header_footer_left": left,
                     "warnings": [w.code for w in got.warnings], "examples": words["examples"]})
    speeds = []
    pages = sum(r["pages"] for r in rows)
    for _ in range(args.runs):
        t0 = time.perf_counter()
        for m, data in files:
            loader.extract(data, m["file"])
        speeds.append(pages / (time.perf_counter() - t0))
    print(f"{'file':52} {'wrap':4} {'pages':>5} {'agree':>7} {'glued':>5} {'split':>5} "
          f"{'other':>5} {'hdr':>3}")
    for r in rows:
        print(f"{r['file']:52} {r['wrap']:4} {r['pages']:5d} {r['agreement']:7.4f} {r['glued']:5d} "
              f"{r['split']:5d} {r['other_tokens']:5d} {r['header_footer_left']:3d}")
    summary = {"files": len(rows), "pages": pages,
               "min_agreement": min(r["agreement"] for r in rows),
               "mean_agreement": round(statistics.fmean(r["agreement"] for r in rows), 5),
               "glued": sum(r["glued"] for r in rows), "split": sum(r["split"] for r in rows),
               "source_words": sum(r["source_words"] for r in rows),
               "header_footer_left": sum(r["header_footer_left"] for r in rows),
               "pages_per_second_median": round(statistics.median(speeds), 1),
               "pages_per_second_runs": [round(s, 1) for s in speeds]}
    print(json.dumps(summary, ensure_ascii=False))
    (HERE / "pdf_check.json").write_text(
        json.dumps({"summary": summary, "files": rows}, ensure_ascii=False, indent=1) + "\n",
        encoding="utf-8")


if __name__ == "__main__":
    main()
