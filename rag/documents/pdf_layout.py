"""From positioned glyphs to the lines of a page, and the running headers and footers of a file.

:mod:`rag.documents.pdf` reads each character's box from PDFium; this module groups them into
lines (by baseline, left to right, top to bottom), notes what the join of two lines needs (the
line's right edge, its first character's and first word's widths, whether a real space ends
it) and the wide gaps that split a line into table cells, and finds the lines that repeat at
the top or bottom of the pages (:func:`running_lines`). Multi-column pages and rotated text are
read as one column, line by line. A ruled table (:mod:`rag.documents.pdf_tables`) is one
:class:`Line` whose ``table`` holds its cells' lines.
"""
from __future__ import annotations

import math
import re
import statistics
from dataclasses import dataclass
from typing import Sequence

from rag.documents.assemble import clean
from rag.lang.en import documents as en_documents
from rag.lang.ko import documents as ko_documents

_SOFT_HYPHEN = ("\u00ad", "\x02")
CELL_GAP = 1.5  # a gap wider than this many font sizes, without a glyph in it, parts two cells
_OUT_OF = "(?:/|" + en_documents.PDF_PAGE_OF + ")"  # 3/10, 3 of 10
_PAGE_NUMBER = re.compile(
    r"^(?:[-–—~]\s*\d{1,4}\s*[-–—~]|[(\[]\s*\d{1,4}\s*[)\]]|\d{1,4}\s*" + _OUT_OF + r"\s*\d{1,4}"
    r"|(?:" + en_documents.PDF_PAGE_WORDS + r")\s*\d{1,4}(?:\s*" + _OUT_OF + r"\s*\d{1,4})?"
    r"|\d{1,4}\s*(?:" + ko_documents.PDF_PAGE_SUFFIXES + ")"
    r"|[-–—]?\s*\d{1,4}\s*[-–—]?)$", re.IGNORECASE)


@dataclass(frozen=True)
class Glyph:
    """One character as PDFium placed it: advance box ``x0``–``x1``, baseline ``y`` (points, origin
    bottom left), font size, weight >= 600, and whether PDFium saw a word gap before it."""

    ch: str
    x0: float
    x1: float
    y: float
    size: float
    bold: bool = False
    space_before: bool = False


@dataclass(frozen=True)
class Line:
    """One line of a page (``page`` 1-based): cleaned text and what joining it needs."""

    page: int
    text: str
    x0: float
    x1: float
    y: float
    size: float
    bold: bool
    first_adv: float  # advance of the first character
    first_word: float  # width of the first whitespace-separated word
    trailing_space: bool  # a real space glyph ended the line in the file
    soft_hyphen: bool  # the line ended in a soft hyphen (removed)
    space_adv: float  # median advance of the line's space glyphs (0 when none)
    cells: tuple[str, ...]  # the text runs between wide gaps (one when no gap)
    cell_x: tuple[float, ...]  # left edge of each cell
    ocr: bool = False  # read by OCR: word boxes, no type size or weight to trust
    table: Table | None = None  # the line stands for a ruled table (rag.documents.pdf_tables)


@dataclass(frozen=True)
class TableCell:
    """One cell of a ruled table: its lines, top to bottom, and its left and right rules (x)."""

    lines: tuple[Line, ...]
    left: float
    right: float


@dataclass(frozen=True)
class Table:
    """A ruled table's rows, top to bottom: a cell in the row where it starts, ``None`` in the
    rows below that it spans as well."""

    rows: tuple[tuple[TableCell | None, ...], ...]


def _segments(glyphs: Sequence[Glyph]) -> list[list[Glyph]]:
    """Runs of glyphs in content order that stay on one baseline and move rightwards."""
    runs: list[list[Glyph]] = []
    for g in glyphs:
        if runs:
            prev = runs[-1][-1]
            tol = 0.5 * max(g.size, prev.size, 1.0)
            if abs(g.y - prev.y) <= tol and g.x0 >= prev.x1 - tol:
                runs[-1].append(g)
                continue
        runs.append([g])
    return runs


def _merge_rows(runs: list[list[Glyph]]) -> list[list[Glyph]]:
    """Runs on one baseline (table cells, text drawn out of order) merged into rows, top first."""
    runs = sorted(runs, key=lambda r: (-r[0].y, r[0].x0))
    rows: list[list[list[Glyph]]] = []
    for run in runs:
        if rows:
            head = rows[-1][0][0]
            if abs(run[0].y - head.y) <= 0.3 * max(run[0].size, head.size, 1.0):
                rows[-1].append(run)
                continue
        rows.append([run])
    out = []
    for row in rows:
        row.sort(key=lambda r: r[0].x0)
        out.append([g for run in row for g in run])
    return out


def _line(page: int, glyphs: list[Glyph]) -> Line | None:
    soft = trailing_space = False
    while glyphs and (glyphs[-1].ch in _SOFT_HYPHEN or not glyphs[-1].ch.strip()):
        if glyphs.pop().ch in _SOFT_HYPHEN:
            soft = True
        else:
            trailing_space = not soft
    while glyphs and not glyphs[0].ch.strip():
        glyphs.pop(0)
    if not glyphs:
        return None
    size = statistics.median(g.size for g in glyphs) or 10.0
    cells: list[list[str]] = [[]]
    cell_x = [glyphs[0].x0]
    prev: Glyph | None = None
    for g in glyphs:
        if prev is not None:
            gap = g.x0 - prev.x1
            if gap > CELL_GAP * size and g.ch.strip():
                cells.append([])
                cell_x.append(g.x0)
            elif (g.space_before or gap > 0.2 * size) and prev.ch.strip() and g.ch.strip():
                cells[-1].append(" ")
        cells[-1].append(g.ch if g.ch.strip() else " ")
        prev = g
    texts = [clean("".join(c)) for c in cells]
    keep = [(t, x) for t, x in zip(texts, cell_x) if t]
    if not keep:
        return None
    text = " ".join(t for t, _ in keep)
    first = glyphs[0]
    word_end = first.x1
    for g in glyphs:
        if not g.ch.strip() or (g is not first and (g.space_before or g.x0 - word_end > 0.2 * size)):
            break
        word_end = g.x1
    spaces = [g.x1 - g.x0 for g in glyphs if g.ch == " " and g.x1 > g.x0]
    return Line(page, text, first.x0, glyphs[-1].x1, statistics.median(g.y for g in glyphs), size,
                all(g.bold for g in glyphs if g.ch.strip()), first.x1 - first.x0,
                word_end - first.x0, trailing_space, soft,
                statistics.median(spaces) if spaces else 0.0,
                tuple(t for t, _ in keep), tuple(x for _, x in keep))


def page_lines(page: int, glyphs: Sequence[Glyph]) -> list[Line]:
    """The lines of one page, top to bottom."""
    out = []
    for row in _merge_rows(_segments(glyphs)):
        line = _line(page, row)
        if line is not None:
            out.append(line)
    return out


def _norm(text: str) -> str:
    return re.sub(r"\d+", "0", "".join(text.split())).casefold()


def is_page_number(text: str) -> bool:
    return bool(_PAGE_NUMBER.match(text.strip()))


def running_lines(pages: Sequence[Sequence[Line]], edge: int = 2) -> tuple[set[tuple[int, int]], list[str]]:
    """The lines to drop as running headers and footers: ``(page index, line index)`` pairs and
    the distinct texts removed (first spelling of each). A line counts when it is among the first
    or last ``edge`` lines of its page and either reads as a page number (``- 4 -``, ``4 / 12``)
    or repeats, the same after digits are normalised and at the same height, on at least half
    of the pages (of three or more)."""
    drop: set[tuple[int, int]] = set()
    names: dict[str, str] = {}
    groups: dict[tuple[str, str], list[tuple[int, int, Line]]] = {}
    with_text = sum(1 for lines in pages if lines)
    for p, lines in enumerate(pages):
        zones = [("top", i) for i in range(min(edge, len(lines)))]
        zones += [("bottom", i) for i in range(max(len(lines) - edge, edge), len(lines))]
        for zone, i in zones:
            line = lines[i]
            if is_page_number(line.text):
                drop.add((p, i))
                names.setdefault("page number", line.text)
                continue
            groups.setdefault((zone, _norm(line.text)), []).append((p, i, line))
    need = max(2, math.ceil(0.5 * with_text))
    if with_text >= 3:
        for (_, key), members in groups.items():
            if len({p for p, _, _ in members}) < need:
                continue
            mid = statistics.median(m.y for _, _, m in members)
            same = [(p, i, m) for p, i, m in members if abs(m.y - mid) <= 1.5 * m.size]
            if len({p for p, _, _ in same}) >= need:
                drop.update((p, i) for p, i, _ in same)
                names.setdefault(key, same[0][2].text)
    return drop, list(names.values())
