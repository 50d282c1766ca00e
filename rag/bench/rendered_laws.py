"""What a reader sees of each kolaw-dev law in the files ``data/dev/kolaw-files/render_*.py`` wrote:
the reference texts and the page furniture :mod:`rag.bench.file_fidelity` compares the loaders with.

The renderers (``render_docx_html.py``, ``render_hwpx.py``) import these functions and read the page
furniture from the same ``furniture.json``, so what a file shows and what the measurement compares
the loaders with are one definition.
"""
from __future__ import annotations

import functools
import json
import re

from rag.bench.harness import repo_path

# ----------------------------------------------------------------------------- the page furniture
# data/dev/kolaw-files/furniture.json, which the renderers read too: in the HTML page around <main>, the DOCX
# page header / footer, the HWPX header / footer controls; none occurs in any law text, and none must be
# in what a loader extracts.
FURNITURE = repo_path("data/dev/kolaw-files/furniture.json")


@functools.lru_cache(maxsize=1)
def _furniture() -> dict:
    return json.loads(FURNITURE.read_text(encoding="utf-8"))


def boilerplate_html() -> tuple[str, ...]:
    h = _furniture()["html"]
    return (h["skip_link"], *h["nav_items"], h["header_text"], h["search_label"], h["breadcrumb"][2],
            h["cookie_text"], h["cookie_button"], *h["sidebar_items"], h["share_text"], *h["footer_text"],
            h["script_text"])


def boilerplate_docx() -> tuple[str, ...]:
    d = _furniture()["docx"]
    return (d["header"], d["footer"])


_HEADING = re.compile(r"^(#{1,6}) (.*)$")
_BOLD = re.compile(r"\*\*(.+?)\*\*")
_ESCAPE = re.compile(r"\\([\\`*_{}\[\]()#+\-.!|])")
_IMG = re.compile(r"</?img\b[^>]*>", re.IGNORECASE)


def file_stem(doc: dict) -> str:
    """``<id>_<version>``: the name every renderer gives a law's file (plus the format's suffix)."""
    return f"{doc['id']}_{doc['version']}"


def korean_date(iso: str) -> str:
    y, m, d = (int(x) for x in iso.split("-"))
    return f"{y}. {m}. {d}."


def hwpx_boilerplate(doc: dict) -> tuple[str, ...]:
    """The HWPX running header / footer strings and the picture's shape comment of one law."""
    h = _furniture()["hwpx"]
    when = f"[{h['in_force']} {korean_date(doc['version'])}]"
    return (f"{doc['title']} {when}", when, h["footer_left"], h["footer_right"], h["picture_comment"])


# ----------------------------------------------------------------------------- the source's blocks
def blocks(text: str) -> list[tuple[int, list[str]]]:
    """(heading level, or 0 for a paragraph, or -1 for an ``<img>`` formula block, lines) per
    blank-line-separated block of the markdown source; the blocks from an ``<img>`` line to its
    ``</img>`` are one formula block."""
    out: list[tuple[int, list[str]]] = []
    in_formula = False
    for raw in re.split(r"\n[ \t]*\n", text):
        lines = [ln.strip() for ln in raw.split("\n") if ln.strip()]
        if not lines:
            continue
        if in_formula:
            out[-1][1].extend(lines)
            in_formula = not any("</img>" in ln for ln in lines)
            continue
        m = _HEADING.match(lines[0])
        if m and len(lines) == 1:
            out.append((len(m.group(1)), [m.group(2).strip()]))
        elif lines[0].lower().startswith("<img"):
            out.append((-1, lines))
            in_formula = not any("</img>" in ln for ln in lines)
        else:
            out.append((0, lines))
    return out


def inline_runs(line: str) -> list[tuple[str, bool]]:
    """(text, bold) runs of one source line: ``**x**`` bold, markdown escapes and ``<img>`` tags removed."""
    line = _IMG.sub("", line)
    runs, pos = [], 0
    for m in _BOLD.finditer(line):
        if m.start() > pos:
            runs.append((line[pos:m.start()], False))
        runs.append((m.group(1), True))
        pos = m.end()
    runs.append((line[pos:], False))
    return [(_ESCAPE.sub(r"\1", t), b) for t, b in runs if t]


def plain_line(line: str) -> str:
    """A source line as shown: inline markup removed, stripped."""
    return "".join(t for t, _ in inline_runs(line)).strip()


def grid_rows(lines: list[str]) -> list[list[str]] | None:
    """The rows of a box-drawing grid (a box whose rules have ``┬``), blank rows dropped; None
    for a box that is a formula."""
    if not any("┬" in ln for ln in lines):
        return None
    rows = []
    for ln in lines:
        ln = ln.strip()
        if ln.startswith("│"):
            cells = [c.strip() for c in ln.strip("│").split("│")]
            if any(cells):
                rows.append(cells)
    return rows


def source_table_rows(text: str) -> int:
    """The rows of the source's grid boxes (each an ``hp:tbl`` in the HWPX)."""
    return sum(len(rows) for level, lines in blocks(text) if level < 0
               and (rows := grid_rows(lines)) is not None)


# ----------------------------------------------------------------------------- what a reader sees
def visible_text(text: str) -> str:
    """A law as its DOCX or HTML shows it: headings as ``#`` lines, inline markup removed."""
    out = []
    for level, lines in blocks(text):
        if level > 0:
            out.append("#" * level + " " + "".join(t for t, _ in inline_runs(lines[0])))
        else:
            rendered = ["".join(t for t, _ in inline_runs(ln)).strip() for ln in lines]
            out.append("\n".join(r for r in rendered if r))
    return "\n\n".join(o for o in out if o.strip())


def shown_text(text: str) -> str:
    """A law as its HWPX shows it: headings as ``#`` lines, inline markup removed, a grid box as
    ``cell | cell`` rows, a formula box as its text lines."""
    out = []
    for level, lines in blocks(text):
        if level > 0:
            out.append("#" * level + " " + plain_line(lines[0]))
            continue
        rows = grid_rows(lines) if level < 0 else None
        if rows is not None:
            out.append("\n".join(" | ".join(r) for r in rows))
        else:
            out.append("\n".join(p for p in (plain_line(ln) for ln in lines) if p))
    return "\n\n".join(o for o in out if o.strip())


__all__ = ["boilerplate_docx", "boilerplate_html", "blocks", "file_stem", "grid_rows", "hwpx_boilerplate",
           "inline_runs", "korean_date", "plain_line", "shown_text", "source_table_rows", "visible_text"]
