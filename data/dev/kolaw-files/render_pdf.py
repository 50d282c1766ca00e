"""Render each law of ``../shared/data/kolaw-dev/corpus.jsonl`` into an A4 PDF for the PDF loader.

Development data for :mod:`rag.documents.pdf` (measured by ``rag bench run file-fidelity``).
Every page carries a running header (the law title) and a footer ``- N -``; headings are bold and
larger, without their ``#`` marks; inline ``**bold**`` marks and markdown escapes (``1\\.``) are
dropped; text is hard-wrapped to the line width, paragraphs run on across page breaks. Documents alternate
between two wrapping styles: even positions in the corpus are wrapped at spaces (word wrap),
odd ones mid-word (character wrap, as Korean word processors do: a space that falls on a break
is dropped, so the PDF holds no trailing space there).

    .venv/bin/python data/dev/kolaw-files/render_pdf.py [--corpus PATH] [--out DIR]

Needs reportlab (dev extra) and a Korean TTF: NanumGothic (``apt-get install fonts-nanum``)
or ``--font`` / ``--bold-font``. Output is deterministic (reportlab ``invariant``).
"""
from __future__ import annotations

import argparse
import json
import re
from dataclasses import dataclass
from pathlib import Path

from reportlab.lib.pagesizes import A4
from reportlab.pdfbase import pdfmetrics
from reportlab.pdfbase.ttfonts import TTFont
from reportlab.pdfgen import canvas

HERE = Path(__file__).resolve().parent
CORPUS = HERE.parents[2].parent / "shared" / "data" / "kolaw-dev" / "corpus.jsonl"
FONT_DIRS = ["/usr/share/fonts/truetype/nanum", "/usr/share/fonts/nanum", "/Library/Fonts"]
REGULAR, BOLD = "Body", "BodyBold"

PAGE_W, PAGE_H = A4
LEFT, RIGHT, TOP, BOTTOM = 62.0, 62.0, 70.0, 64.0
BODY_SIZE, LEADING, PARA_GAP = 10.0, 15.0, 7.0
HEADING_SIZE = {1: 16.0, 2: 13.0, 3: 12.0, 4: 11.5, 5: 11.0, 6: 10.5}
INDENT = 12.0  # list items ("  1\\. ...") and tab-indented lines
_ESCAPE = re.compile(r"\\(.)")


@dataclass
class Line:
    text: str
    font: str
    size: float
    indent: float
    gap_before: float  # extra vertical space before this line (paragraph start)


def find_font(name: str, explicit: str | None) -> str:
    if explicit:
        return explicit
    for d in FONT_DIRS:
        p = Path(d) / name
        if p.exists():
            return str(p)
    raise SystemExit(f"{name} not found: apt-get install fonts-nanum, or pass --font/--bold-font")


def width(text: str, font: str, size: float) -> float:
    return pdfmetrics.stringWidth(text, font, size)


def wrap_words(text: str, font: str, size: float, room: float) -> list[str]:
    """Greedy wrap at spaces; a word wider than the line is broken by characters."""
    out: list[str] = []
    cur = ""
    for word in text.split(" "):
        if not word:
            continue
        trial = f"{cur} {word}" if cur else word
        if width(trial, font, size) <= room:
            cur = trial
            continue
        if cur:
            out.append(cur)
        cur = word
        while width(cur, font, size) > room:  # an overlong word
            pieces = wrap_chars(cur, font, size, room)
            out.extend(pieces[:-1])
            cur = pieces[-1]
    if cur:
        out.append(cur)
    return out


def wrap_chars(text: str, font: str, size: float, room: float) -> list[str]:
    """Greedy wrap by characters; a space on a break is dropped, no line starts with a space."""
    out: list[str] = []
    cur = ""
    for ch in text:
        if not cur and ch == " ":
            continue
        if width(cur + ch, font, size) <= room:
            cur += ch
            continue
        out.append(cur.rstrip(" "))
        cur = "" if ch == " " else ch
    if cur.strip():
        out.append(cur.rstrip(" "))
    return out


def layout(text: str, char_wrap: bool) -> list[Line]:
    """The law's markdown as wrapped lines."""
    lines: list[Line] = []
    for para in text.split("\n\n"):
        first = True
        for raw in para.split("\n"):
            if not raw.strip():
                continue
            heading = re.match(r"^(#{1,6})\s+(.*)$", raw.strip())
            if heading:
                level = len(heading.group(1))
                font, size, indent = BOLD, HEADING_SIZE[level], 0.0
                body = heading.group(2)
            else:
                font, size = REGULAR, BODY_SIZE
                indent = INDENT if raw[:1] in (" ", "\t") else 0.0
                body = raw
            body = _ESCAPE.sub(r"\1", body.replace("**", "")).strip()
            body = re.sub(r"[ \t]+", lambda m: " " * len(m.group().replace("\t", " ")), body)
            room = PAGE_W - LEFT - RIGHT - indent
            wrapped = (wrap_words(body, font, size, room) if heading or not char_wrap
                       else wrap_chars(body, font, size, room))
            for i, piece in enumerate(wrapped):
                gap = (PARA_GAP + (4.0 if heading else 0.0)) if first and i == 0 else 0.0
                lines.append(Line(piece, font, size, indent, gap))
            first = False
    return lines


def render(doc: dict, out: Path, char_wrap: bool) -> int:
    """Write one PDF; returns its page count."""
    c = canvas.Canvas(str(out), pagesize=A4, invariant=1, pageCompression=1)
    c.setTitle(doc["title"])
    c.setAuthor("kolaw-dev render_pdf.py")
    page = 0

    def start_page() -> float:
        nonlocal page
        page += 1
        c.setFont(REGULAR, 8.5)
        c.drawCentredString(PAGE_W / 2, PAGE_H - 40, doc["title"])
        c.setLineWidth(0.4)
        c.line(LEFT, PAGE_H - 46, PAGE_W - RIGHT, PAGE_H - 46)
        c.setFont(REGULAR, 9)
        c.drawCentredString(PAGE_W / 2, 34, f"- {page} -")
        return PAGE_H - TOP

    y = start_page()
    for i, line in enumerate(layout(doc["text"], char_wrap)):
        step = (line.gap_before if i else 0.0) + max(LEADING, line.size * 1.45)
        if y - step < BOTTOM:
            c.showPage()
            y = start_page()
            step = max(LEADING, line.size * 1.45)  # no paragraph gap at a page top
        y -= step
        c.setFont(line.font, line.size)
        c.drawString(LEFT + line.indent, y, line.text)
    c.showPage()
    c.save()
    return page


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--corpus", type=Path, default=CORPUS)
    ap.add_argument("--out", type=Path, default=HERE / "pdf")
    ap.add_argument("--font")
    ap.add_argument("--bold-font")
    args = ap.parse_args()
    pdfmetrics.registerFont(TTFont(REGULAR, find_font("NanumGothic.ttf", args.font)))
    pdfmetrics.registerFont(TTFont(BOLD, find_font("NanumGothicBold.ttf", args.bold_font)))
    args.out.mkdir(parents=True, exist_ok=True)
    docs = [json.loads(ln) for ln in args.corpus.read_text(encoding="utf-8").splitlines() if ln]
    manifest = []
    for i, doc in enumerate(docs):
        char_wrap = i % 2 == 1
        name = f"{doc['id']}_{doc['version']}.pdf"
        pages = render(doc, args.out / name, char_wrap)
        manifest.append({"file": name, "id": doc["id"], "version": doc["version"],
                         "title": doc["title"], "wrap": "char" if char_wrap else "word",
                         "pages": pages})
        print(f"{name}: {pages} pages, {'char' if char_wrap else 'word'} wrap")
    (args.out / "manifest.json").write_text(json.dumps(manifest, ensure_ascii=False, indent=1) + "\n",
                                            encoding="utf-8")


if __name__ == "__main__":
    main()
