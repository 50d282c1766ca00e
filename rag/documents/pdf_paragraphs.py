"""The lines of a PDF's pages as blocks: headings, paragraphs, list items and simple tables.

A PDF has no paragraphs, only positioned lines. Two lines belong to one block unless the second
starts a new one: a statute unit (``제3조 (…)``, ``①``, ``1.``, ``가.``, ``제2장``, ``부칙``), a
heading (larger or bold type), a vertical gap larger than the line spacing, an indented first
line, a change of type size, or a first line that the previous one left room for (the previous
line ended early: a hard break). A paragraph that runs across a page break stays one block.

Joining two lines of one block: a soft hyphen or a real trailing space settles it; else the
right margin does (:func:`junction`): when the next line's first character would have fitted on
the previous line the break was at a space. The breaks geometry leaves open are read by the
document's wrapping style: a document whose lines often end short of a word's width is wrapped
at spaces, so its open breaks are spaces; in a character-wrapped (or justified) document they go
to :func:`rag.documents.pdf_join.decide_spaces` (typography, then Korean morphology).

Tables: runs of two or more lines whose text falls into the same columns, parted by gaps wider
than :data:`rag.documents.pdf_layout.CELL_GAP` type sizes, become ``table`` rows (one row per
line: a cell wrapped over two lines gives two rows). Anything else stays lines. A ruled table
(a line carrying a :class:`rag.documents.pdf_layout.Table`) is one ``table`` block: a row per
grid row, each cell's lines joined like a paragraph's, its right rule the margin.
"""
from __future__ import annotations

import logging
import re
import statistics
from dataclasses import dataclass, field, replace
from typing import Literal, Sequence

from rag.documents.assemble import TextAssembler
from rag.documents.model import BlockKind
from rag.documents.pdf_join import decide_spaces
from rag.documents.pdf_layout import Line, TableCell
from rag.lang.ko import documents as ko_documents

log = logging.getLogger(__name__)

UNIT_START = re.compile(r"^(?:" + ko_documents.PDF_ARTICLE_START + r"|[\u2460-\u2473\u3251-\u325f])")
# Starts that also occur inside a sentence (``…정한`` | ``다. <신설>``, ``이 법`` | ``제2장 및``):
# a new block only where the previous line did not run to the margin.
WEAK_START = re.compile("^(?:" + ko_documents.PDF_WEAK_START + ")")
LIST_START = re.compile(r"^(?:\d{1,3}\.(?!\d)\s|" + ko_documents.PDF_LETTER_ITEM + r"|\(\d{1,2}\)\s"
                        r"|[•◦▪●○■□‐\-–]\s)")
_BOX = re.compile(r"[\u2500-\u257f]")
Verdict = Literal["space", "join", "hard", "open"]


@dataclass(frozen=True)
class Metrics:
    """What the body text of one file looks like."""

    body_size: float
    leading: float
    margins: dict[int, float]  # right text edge by page parity (0 even, 1 odd)
    space_ratio: float  # a space's advance over the type size

    def margin(self, page: int) -> float:
        return self.margins.get(page % 2, self.margins.get(-1, 0.0))


@dataclass
class _Block:
    kind: BlockKind
    level: int
    lines: list[Line]
    joins: list[str | None] = field(default_factory=list)  # before lines[1:]; None: open
    rows: list[list[str]] | None = None
    cells: list[list[_Block | None]] | None = None  # a ruled table: each cell's lines as a block


def measure(lines: Sequence[Line]) -> Metrics:
    lines = [ln for ln in lines if not ln.ocr and ln.table is None] or list(lines)
    chars: dict[float, int] = {}
    for ln in lines:
        key = round(ln.size * 2) / 2
        chars[key] = chars.get(key, 0) + len(ln.text)
    body = max(chars, key=lambda k: (chars[k], -k)) if chars else 10.0
    bodyl = [ln for ln in lines if abs(ln.size - body) <= 0.1 * body]
    steps = [a.y - b.y for a, b in zip(bodyl, bodyl[1:])
             if a.page == b.page and 0.8 * body < a.y - b.y < 3 * body]
    leading = statistics.median(steps) if steps else 1.4 * body
    margins: dict[int, float] = {}
    for parity, group in ((-1, bodyl), (0, [ln for ln in bodyl if ln.page % 2 == 0]),
                          (1, [ln for ln in bodyl if ln.page % 2 == 1])):
        if len(group) >= (1 if parity == -1 else 10):
            x1 = sorted(ln.x1 for ln in group)
            p95 = x1[int(0.95 * (len(x1) - 1))]
            margins[parity] = max(v for v in x1 if v <= p95 + body)
    spaces = [ln.space_adv / ln.size for ln in bodyl if ln.space_adv > 0]
    ratio = statistics.median(spaces) if spaces else 0.28
    return Metrics(body, leading, margins, ratio)


def junction(prev: Line, line: Line, m: Metrics) -> Verdict:
    """What the page says about the break between ``prev`` and the next ``line``."""
    if prev.soft_hyphen:
        return "join"
    if prev.trailing_space:
        return "space"
    if prev.text.endswith("-") and prev.text[-2:-1].isalpha() and line.text[:1].islower():
        return "join"  # a hyphenated Latin word: the hyphen stays
    room = m.margin(prev.page) - prev.x1
    size = prev.size
    if room >= m.space_ratio * size + line.first_word + 0.15 * size:
        return "hard"
    if room >= line.first_adv + 0.1 * size:
        return "space"
    return "open"


def _heading_levels(lines: Sequence[Line], m: Metrics) -> dict[float, int]:
    sizes = sorted({round(ln.size * 2) / 2 for ln in lines if ln.size >= 1.08 * m.body_size},
                   reverse=True)
    levels = {s: min(i + 1, 6) for i, s in enumerate(sizes)}
    levels[0.0] = min(len(sizes) + 1, 6)  # bold at body size
    return levels


def _is_heading(ln: Line, m: Metrics) -> bool:
    if ln.ocr:
        return False
    if ln.size >= 1.08 * m.body_size:
        return True
    width = m.margin(ln.page) - ln.x0
    return ln.bold and ln.size >= 0.95 * m.body_size and ln.x1 - ln.x0 < 0.8 * width


def _row_like(ln: Line) -> bool:
    """Cells parted by wide gaps, and no box-drawing characters (a text-art box is a drawing)."""
    return len(ln.cells) >= 2 and not _BOX.search(ln.text)


def _table_rows(lines: Sequence[Line], start: int, m: Metrics) -> int:
    """How many lines from ``start`` form one table (0 when they do not)."""
    first = lines[start]
    if first.table is not None or not _row_like(first) or _is_heading(first, m):
        return 0
    anchors = list(first.cell_x)
    n = 1
    while start + n < len(lines):
        ln = lines[start + n]
        if ln.page != first.page or ln.table is not None or not _row_like(ln):
            break
        hits = sum(any(abs(x - a) <= ln.size for a in anchors) for x in ln.cell_x)
        if hits < 2:
            break
        anchors += [x for x in ln.cell_x if all(abs(x - a) > ln.size for a in anchors)]
        n += 1
    return n if n >= 2 else 0


def _columns(rows: Sequence[Line]) -> list[list[str]]:
    xs = sorted({x for ln in rows for x in ln.cell_x})
    cols: list[float] = []
    for x in xs:
        if not cols or x - cols[-1] > rows[0].size:
            cols.append(x)
    out = []
    for ln in rows:
        cells = [""] * len(cols)
        for text, x in zip(ln.cells, ln.cell_x):
            j = min(range(len(cols)), key=lambda k: abs(cols[k] - x))
            cells[j] = f"{cells[j]} {text}".strip()
        out.append(cells)
    return out


def _starts_block(cur: _Block, prev: Line, ln: Line, verdict: Verdict, m: Metrics,
                  heading: bool) -> bool:
    if cur.rows is not None or heading != (cur.kind == "heading"):
        return True
    if ln.page != prev.page and (ln.page != prev.page + 1 or heading):
        return True
    if ln.page == prev.page and prev.y - ln.y > 1.35 * m.leading * max(ln.size, prev.size) / m.body_size:
        return True
    if heading:
        return abs(ln.size - prev.size) > 0.05 * prev.size or verdict == "hard"
    if verdict == "hard" or UNIT_START.match(ln.text):
        return True
    if WEAK_START.match(ln.text):
        return verdict != "open"
    if LIST_START.match(ln.text):
        return True
    if abs(ln.size - prev.size) > 0.12 * prev.size:
        return True
    return ln.x0 > prev.x0 + 0.8 * ln.size and len(cur.lines) > 1


def _cell(cell: TableCell, m: Metrics) -> _Block:
    """One table cell's lines as a paragraph, its margin the cell's rules less the padding the
    widest line leaves (at most half a type size); a line is judged by its width, as if set from
    the left (the cell may centre its lines)."""
    pad = max(0.0, min(min(ln.x0 for ln in cell.lines) - cell.left,
                       cell.right - max(ln.x1 for ln in cell.lines), 0.5 * m.body_size))
    inside = Metrics(m.body_size, m.leading, {-1: cell.right - pad}, m.space_ratio)
    b = _Block("paragraph", 0, list(cell.lines))
    for prev, ln in zip(cell.lines, cell.lines[1:]):
        moved = replace(prev, x0=cell.left + pad, x1=cell.left + pad + prev.x1 - prev.x0)
        verdict = junction(moved, ln, inside)
        b.joins.append("" if verdict == "join" else None if verdict == "open" else " ")
    return b


def group(pages: Sequence[Sequence[Line]], m: Metrics) -> list[_Block]:
    """Blocks in reading order, each line's join to the previous one settled or left open."""
    lines = [ln for page in pages for ln in page]
    levels = _heading_levels([ln for ln in lines if ln.table is None], m)
    blocks: list[_Block] = []
    i = 0
    while i < len(lines):
        ln = lines[i]
        if ln.table is not None:
            cells = [[_cell(c, m) if c is not None and c.lines else None for c in row]
                     for row in ln.table.rows]
            blocks.append(_Block("table_row", 0, [ln], cells=cells))
            i += 1
            continue
        n = _table_rows(lines, i, m)
        if n:
            rows = lines[i:i + n]
            blocks.append(_Block("table_row", 0, list(rows), rows=_columns(rows)))
            i += n
            continue
        heading = _is_heading(ln, m)
        cur = blocks[-1] if blocks else None
        verdict: Verdict = junction(cur.lines[-1], ln, m) if cur else "hard"
        if cur is None or cur.cells is not None or _starts_block(cur, cur.lines[-1], ln, verdict,
                                                                 m, heading):
            kind: BlockKind = ("heading" if heading else
                               "list_item" if LIST_START.match(ln.text) else "paragraph")
            level = levels.get(round(ln.size * 2) / 2, levels[0.0]) if heading else 0
            blocks.append(_Block(kind, level, [ln]))
        else:
            cur.lines.append(ln)
            cur.joins.append({"space": " ", "join": ""}.get(verdict))  # open: None
        i += 1
    _settle(blocks)
    return blocks


def _settle(blocks: list[_Block]) -> None:
    """Open joins: spaces in a word-wrapped document, else typography and morphology (table
    cells do not count towards the wrapping style)."""
    cells = [c for b in blocks if b.cells for row in b.cells for c in row if c is not None]
    open_at = [(b, k) for b in [*blocks, *cells] for k, j in enumerate(b.joins) if j is None]
    wraps = sure = 0
    for b in blocks:
        for k, j in enumerate(b.joins):
            prev = b.lines[k]
            if prev.soft_hyphen or prev.trailing_space or j == "":
                continue
            wraps += 1
            sure += j == " "
    word_wrapped = wraps >= 8 and sure >= 0.35 * wraps
    log.debug("pdf joins: %d wraps, %d settled by the margin, word-wrapped=%s, %d open",
              wraps, sure, word_wrapped, len(open_at))
    if word_wrapped:
        for b, k in open_at:
            b.joins[k] = " "
        return
    pairs = []
    for b, k in open_at:
        left = " ".join(ln.text for ln in b.lines[:k + 1])
        pairs.append((left, b.lines[k + 1].text))
    context = "\n".join(ln.text for b in [*blocks, *cells] for ln in b.lines if ln.table is None)
    for (b, k), space in zip(open_at, decide_spaces(pairs, context)):
        b.joins[k] = " " if space else ""


def _joined(b: _Block, page: int = 0) -> tuple[str, list[tuple[int, int]]]:
    """The block's text, and where in it each page after ``page`` starts."""
    text = b.lines[0].text
    page = max(page, b.lines[0].page)
    inside: list[tuple[int, int]] = []
    for ln, join in zip(b.lines[1:], b.joins):
        text += join or ""
        if ln.page > page:
            inside.append((ln.page, len(text)))
            page = ln.page
        text += ln.text
    return text, inside


def emit(blocks: Sequence[_Block], asm: TextAssembler, page_count: int) -> None:
    """Write the blocks into ``asm``, opening every page 1..``page_count`` in order."""
    page = 0
    for b in blocks:
        first = b.lines[0].page
        for n in range(page + 1, first + 1):
            asm.page(n)
        page = max(page, first)
        if b.rows is not None:
            asm.table(b.rows)
            continue
        if b.cells is not None:
            asm.table([[_joined(c)[0] if c else "" for c in row] for row in b.cells])
            continue
        text, inside = _joined(b, page)
        for n, _ in inside:
            page = max(page, n)
        written = asm.block(b.kind, text, b.level)
        for n, offset in inside:
            try:
                if written is None:
                    raise ValueError("nothing written")
                asm.page_inside(n, offset)
            except ValueError:  # the page then starts with the next block
                asm.page(n)
    for n in range(page + 1, page_count + 1):
        asm.page(n)
