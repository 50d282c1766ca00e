"""Ruled tables of a PDF page: the grid the page's rules draw, and the characters of each cell.

A table drawn with lines (a Hangul or Word export draws every cell edge as a short stroked line,
other writers stroke rectangles or fill thin ones) is invisible to the text layer: its cells are
just text at some positions, and a cell wrapped onto two lines interleaves with the cells beside
it. This module reads the page's path objects (PDFium, through ``pypdfium2.raw``), keeps their
horizontal and vertical straight pieces (:func:`page_rules`), groups the pieces that touch into
grids and splits each grid into cells (:func:`find_grids`): the distinct rule positions make an
elementary grid, and two neighbouring elementary cells are one (merged) cell where no rule parts
them. :func:`split_page` gives every character inside a grid to its cell and returns the rest of
the page's characters, which are read as before.

A grid counts as a table only when two of its cells lie side by side and two or more cells hold
text: a box drawn around a paragraph, an underline or a chart frame is left alone.
"""
from __future__ import annotations

import bisect
import ctypes
import logging
import statistics
from dataclasses import dataclass
from typing import Any, Sequence

from rag.documents.pdf_layout import Glyph, Line, Table, TableCell, page_lines

log = logging.getLogger(__name__)

AXIS_TOL = 1.0  # a straight piece whose ends differ by at most this much across is a rule
MIN_RULE = 3.0  # pieces shorter than this (points) are ignored
SNAP = 2.5  # rule positions closer than this are one (a double rule, a stroke's two edges)
TOUCH = 2.0  # how far apart two rules may end and still meet
MAX_RULES = 4000  # a page with more rule pieces is a drawing, not read for tables
_Matrix = tuple[float, float, float, float, float, float]


@dataclass(frozen=True)
class Rule:
    """A horizontal (``across`` is its y) or vertical (``across`` is its x) straight piece from
    ``lo`` to ``hi`` along it, page coordinates in points."""

    horizontal: bool
    across: float
    lo: float
    hi: float


@dataclass(frozen=True)
class Grid:
    """A ruled table: rule positions left to right (``xs``) and top to bottom (``ys``), and for
    every elementary cell (row ``i``, column ``j``) the id of the merged cell it belongs to."""

    xs: tuple[float, ...]
    ys: tuple[float, ...]
    owner: tuple[tuple[int, ...], ...]

    def cell_at(self, x: float, y: float) -> int | None:
        if not (self.xs[0] <= x <= self.xs[-1] and self.ys[-1] <= y <= self.ys[0]):
            return None
        j = min(max(bisect.bisect_right(self.xs, x) - 1, 0), len(self.xs) - 2)
        down = [-v for v in self.ys]
        i = min(max(bisect.bisect_right(down, -y) - 1, 0), len(self.ys) - 2)
        return self.owner[i][j]


def _matrix(raw: Any, obj: Any) -> _Matrix:
    m = raw.FS_MATRIX()
    if not raw.FPDFPageObj_GetMatrix(obj, m):
        return (1.0, 0.0, 0.0, 1.0, 0.0, 0.0)
    return (m.a, m.b, m.c, m.d, m.e, m.f)


def _compose(inner: tuple[float, ...], outer: tuple[float, ...]) -> _Matrix:
    a, b, c, d, e, f = inner
    A, B, C, D, E, F = outer
    return (a * A + b * C, a * B + b * D, c * A + d * C, c * B + d * D,
            e * A + f * C + E, e * B + f * D + F)


def _path_rules(raw: Any, obj: Any, m: tuple[float, ...], out: list[Rule]) -> None:
    fill, stroke = ctypes.c_int(), ctypes.c_int()
    if raw.FPDFPath_GetDrawMode(obj, fill, stroke) and not fill.value and not stroke.value:
        return  # drawn neither filled nor stroked: invisible
    a, b, c, d, e, f = m
    px, py = ctypes.c_float(), ctypes.c_float()
    start: tuple[float, float] | None = None
    cur: tuple[float, float] | None = None

    def piece(p: tuple[float, float], q: tuple[float, float]) -> None:
        dx, dy = abs(p[0] - q[0]), abs(p[1] - q[1])
        if dy <= AXIS_TOL and dx >= MIN_RULE:
            out.append(Rule(True, (p[1] + q[1]) / 2, min(p[0], q[0]), max(p[0], q[0])))
        elif dx <= AXIS_TOL and dy >= MIN_RULE:
            out.append(Rule(False, (p[0] + q[0]) / 2, min(p[1], q[1]), max(p[1], q[1])))

    for k in range(raw.FPDFPath_CountSegments(obj)):
        seg = raw.FPDFPath_GetPathSegment(obj, k)
        if not seg or not raw.FPDFPathSegment_GetPoint(seg, px, py):
            continue
        pt = (a * px.value + c * py.value + e, b * px.value + d * py.value + f)
        kind = raw.FPDFPathSegment_GetType(seg)
        if kind == raw.FPDF_SEGMENT_MOVETO or cur is None:
            start = pt
        elif kind == raw.FPDF_SEGMENT_LINETO:
            piece(cur, pt)
        cur = pt
        if raw.FPDFPathSegment_GetClose(seg) and start is not None:
            piece(pt, start)
            cur = start


def page_rules(page: Any, raw: Any) -> list[Rule]:
    """The horizontal and vertical straight pieces of the visible paths of ``page`` (a raw
    ``FPDF_PAGE`` handle), form XObjects included."""
    out: list[Rule] = []
    stack: list[tuple[Any, bool, tuple[float, ...]]] = [(page, False, (1.0, 0.0, 0.0, 1.0, 0.0, 0.0))]
    while stack:
        holder, is_form, m = stack.pop()
        count = (raw.FPDFFormObj_CountObjects(holder) if is_form
                 else raw.FPDFPage_CountObjects(holder))
        for k in range(max(count, 0)):
            obj = (raw.FPDFFormObj_GetObject(holder, k) if is_form
                   else raw.FPDFPage_GetObject(holder, k))
            kind = raw.FPDFPageObj_GetType(obj)
            if kind == raw.FPDF_PAGEOBJ_PATH:
                _path_rules(raw, obj, _compose(_matrix(raw, obj), m), out)
            elif kind == raw.FPDF_PAGEOBJ_FORM and len(stack) < 8:
                stack.append((obj, True, _compose(_matrix(raw, obj), m)))
        if len(out) > MAX_RULES:
            log.debug("page with %d rule pieces: not read for tables", len(out))
            return []
    return out


class _Union:
    def __init__(self, n: int) -> None:
        self.up = list(range(n))

    def find(self, a: int) -> int:
        while self.up[a] != a:
            self.up[a] = self.up[self.up[a]]
            a = self.up[a]
        return a

    def join(self, a: int, b: int) -> None:
        self.up[self.find(a)] = self.find(b)


def _meet(h: Rule, v: Rule) -> bool:
    return (h.lo - TOUCH <= v.across <= h.hi + TOUCH) and (v.lo - TOUCH <= h.across <= v.hi + TOUCH)


def _snap(values: Sequence[float]) -> list[float]:
    out: list[list[float]] = []
    for v in sorted(values):
        if out and v - out[-1][-1] <= SNAP:
            out[-1].append(v)
        else:
            out.append([v])
    return [statistics.mean(g) for g in out]


def _covers(rules: Sequence[Rule], across: float, at: float) -> bool:
    return any(abs(r.across - across) <= SNAP and r.lo - TOUCH <= at <= r.hi + TOUCH for r in rules)


def _grid(rules: Sequence[Rule]) -> Grid | None:
    hs = [r for r in rules if r.horizontal]
    vs = [r for r in rules if not r.horizontal]
    if not hs or not vs:
        return None
    xs = _snap([v.across for v in vs] + [min(h.lo for h in hs), max(h.hi for h in hs)])
    ys = _snap([h.across for h in hs] + [min(v.lo for v in vs), max(v.hi for v in vs)])[::-1]
    if len(xs) < 3 or len(ys) < 2 or xs[-1] - xs[0] < 20 or ys[0] - ys[-1] < 8:
        return None
    rows, cols = len(ys) - 1, len(xs) - 1
    cells = _Union(rows * cols)
    for i in range(rows):
        mid_y = (ys[i] + ys[i + 1]) / 2
        for j in range(1, cols):  # the boundary at xs[j] between columns j-1 and j
            if not _covers(vs, xs[j], mid_y):
                cells.join(i * cols + j - 1, i * cols + j)
    for j in range(cols):
        mid_x = (xs[j] + xs[j + 1]) / 2
        for i in range(1, rows):  # the boundary at ys[i] between rows i-1 and i
            if not _covers(hs, ys[i], mid_x):
                cells.join((i - 1) * cols + j, i * cols + j)
    ids: dict[int, int] = {}
    owner = tuple(tuple(ids.setdefault(cells.find(i * cols + j), len(ids)) for j in range(cols))
                  for i in range(rows))
    if not any(len(set(row)) >= 2 for row in owner):
        return None  # no two cells side by side: a box, not a table
    return Grid(tuple(xs), tuple(ys), owner)


def find_grids(rules: Sequence[Rule]) -> list[Grid]:
    """The tables the rules draw: rules that meet (or continue one another) are one drawing."""
    n = len(rules)
    groups = _Union(n)
    hs = [k for k in range(n) if rules[k].horizontal]
    vs = [k for k in range(n) if not rules[k].horizontal]
    for a in hs:
        for b in vs:
            if _meet(rules[a], rules[b]):
                groups.join(a, b)
    for same in (hs, vs):
        line = sorted(same, key=lambda k: (rules[k].across, rules[k].lo))
        for x, a in enumerate(line):
            for b in line[x + 1:]:
                if rules[b].across - rules[a].across > SNAP:
                    break
                if rules[b].lo <= rules[a].hi + TOUCH and rules[a].lo <= rules[b].hi + TOUCH:
                    groups.join(a, b)
    members: dict[int, list[Rule]] = {}
    for k in range(n):
        members.setdefault(groups.find(k), []).append(rules[k])
    out = [g for g in (_grid(m) for m in members.values()) if g is not None]
    return sorted(out, key=lambda g: -g.ys[0])


def _placeholder(page: int, grid: Grid, table: Table, sizes: list[float]) -> Line:
    """The line that stands for a table in the page's line order (its text: all the cells')."""
    text = " ".join(ln.text for row in table.rows for c in row if c for ln in c.lines)
    size = statistics.median(sizes) if sizes else 10.0
    return Line(page, text, grid.xs[0], grid.xs[-1], grid.ys[0], size, False, size, size,
                False, False, 0.0, (text,), (grid.xs[0],), table=table)


def _table(page: int, grid: Grid, glyphs: Sequence[Glyph]) -> Table | None:
    """Rows top to bottom; a cell is given in the row where it starts, ``None`` below that
    where it spans further rows; a cell spanning columns is given once."""
    lines = {cid: tuple(page_lines(page, gs)) for cid, gs in _by_cell(grid, glyphs).items()}
    if sum(1 for v in lines.values() if v) < 2:
        return None
    rows: list[tuple[TableCell | None, ...]] = []
    seen: set[int] = set()
    for i, ids in enumerate(grid.owner):
        row: list[TableCell | None] = []
        for j, cid in enumerate(ids):
            if j and ids[j - 1] == cid:
                continue  # the same cell, spanning columns
            if cid in seen:
                row.append(None)
                continue
            seen.add(cid)
            cols = [k for r in grid.owner for k, c in enumerate(r) if c == cid]
            row.append(TableCell(lines.get(cid, ()), grid.xs[min(cols)], grid.xs[max(cols) + 1]))
        rows.append(tuple(row))
    return Table(tuple(rows))


def _by_cell(grid: Grid, glyphs: Sequence[Glyph]) -> dict[int, list[Glyph]]:
    out: dict[int, list[Glyph]] = {}
    for g in glyphs:
        cid = grid.cell_at((g.x0 + g.x1) / 2, g.y + 0.3 * g.size)
        if cid is not None:
            out.setdefault(cid, []).append(g)
    return out


def split_page(page: int, glyphs: Sequence[Glyph], rules: Sequence[Rule]) -> list[Line]:
    """The lines of one page, top to bottom, each ruled table one line that carries it."""
    grids = find_grids(rules) if rules else []
    if not grids:
        return page_lines(page, glyphs)
    rest = list(glyphs)
    tables: list[Line] = []
    for grid in grids:
        inside = [g for g in rest if grid.cell_at((g.x0 + g.x1) / 2, g.y + 0.3 * g.size) is not None]
        table = _table(page, grid, inside) if inside else None
        if table is None:
            continue
        taken = set(map(id, inside))
        rest = [g for g in rest if id(g) not in taken]
        tables.append(_placeholder(page, grid, table, [g.size for g in inside if g.ch.strip()]))
    lines = page_lines(page, rest)
    for t in tables:
        at = next((k for k, ln in enumerate(lines) if ln.y < t.y), len(lines))
        lines.insert(at, t)
    return lines
