"""OCR of one scanned PDF page: rendered by PDFium, read by the ``tesseract`` binary (TSV output).

Only used when :class:`rag.documents.pdf.PdfLoader` has ``ocr=True`` and ``tesseract`` is on
the PATH. The page is rendered in grey at ``dpi`` and piped to ``tesseract - - -l LANGS tsv`` as
a PGM image; words under ``min_confidence`` are dropped and the rest become :class:`Line`s in
page points, so the OCR'd page is joined into paragraphs like any other page.
"""
from __future__ import annotations

import statistics
import subprocess
from typing import Any

from rag.documents.assemble import clean
from rag.documents.pdf_layout import Line


def _pgm(page: Any, dpi: int) -> bytes:
    bitmap = page.render(scale=dpi / 72, grayscale=True)
    try:
        pixels = bitmap.to_numpy()
        if pixels.ndim == 3:
            pixels = pixels[:, :, 0]
        height, width = pixels.shape
        return b"P5\n%d %d\n255\n" % (width, height) + pixels.astype("uint8").tobytes()
    finally:
        bitmap.close()


def parse_tsv(tsv: str, page: int, page_height: float, dpi: int,
              min_confidence: float) -> tuple[list[Line], float | None]:
    """Lines (top first) and the mean confidence of the kept words from tesseract's TSV."""
    rows = [r.split("\t") for r in tsv.splitlines()[1:]]
    words: dict[tuple[str, str, str], list[tuple[float, float, float, float, str]]] = {}
    confs = []
    for r in rows:
        if len(r) < 12 or r[0] != "5" or not r[11].strip():
            continue
        conf = float(r[10])
        if conf < min_confidence:
            continue
        confs.append(conf)
        left, top, width, height = (float(v) * 72 / dpi for v in r[6:10])
        words.setdefault((r[2], r[3], r[4]), []).append((left, top, width, height, r[11]))
    lines = []
    for ws in words.values():
        ws.sort()
        size = statistics.median(w[3] for w in ws) or 10.0
        # tesseract's Korean model often cuts a word into syllables: a gap narrower than a
        # fifth of the type height is no space
        parts = [ws[0][4]]
        for prev, w in zip(ws, ws[1:]):
            parts.append(("" if w[0] - (prev[0] + prev[2]) < 0.2 * size else " ") + w[4])
        text = clean("".join(parts))
        if not text:
            continue
        first = ws[0]
        bottom = max(w[1] + w[3] for w in ws)
        lines.append(Line(page, text, first[0], max(w[0] + w[2] for w in ws), page_height - bottom,
                          size, False, first[2] / max(len(first[4]), 1), first[2], False, False,
                          0.0, (text,), (first[0],), ocr=True))
    lines.sort(key=lambda ln: -ln.y)
    return lines, (statistics.fmean(confs) if confs else None)


def ocr_lines(page: Any, number: int, tesseract: str, languages: str, dpi: int,
              min_confidence: float, timeout_s: float) -> tuple[list[Line], float | None]:
    """OCR one pypdfium2 page; raises OSError / SubprocessError when tesseract fails."""
    image = _pgm(page, dpi)
    proc = subprocess.run([tesseract, "-", "-", "-l", languages, "--dpi", str(dpi), "tsv"],
                          input=image, capture_output=True, timeout=timeout_s, check=False)
    if proc.returncode != 0:
        err = proc.stderr.decode("utf-8", "replace").strip().splitlines()
        raise OSError(f"tesseract exited {proc.returncode}: {err[-1] if err else 'no message'}")
    return parse_tsv(proc.stdout.decode("utf-8", "replace"), number, page.get_height(), dpi,
                     min_confidence)
