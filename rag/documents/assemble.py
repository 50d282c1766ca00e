"""Building an :class:`Extracted` the same way in every loader.

A loader feeds blocks in reading order (:meth:`TextAssembler.block`), opens pages
(:meth:`TextAssembler.page`) where the format has them, and calls :meth:`TextAssembler.done`.
The assembler owns the layout every format shares, so the chunker sees the same shape whatever
the file was:

- a heading is written as a markdown heading (``## 제2장 근로계약``), so heading paths and statute
  structure are found exactly as for a ``.md`` file;
- paragraphs and headings are separated by a blank line; list items and table rows by one line
  break (rows of one table stay together), table cells joined by `` | ``;
- every string is cleaned first (:func:`clean`): NUL and other control characters removed, runs
  of spaces collapsed, line ends trimmed; a block that is empty after cleaning is dropped;
- a statute in a format whose markup the loader writes is written in statute markdown
  (:mod:`rag.documents.statute`: its units' headings at fixed levels, paragraph marks in bold).
"""
from __future__ import annotations

import re
import unicodedata
from typing import Mapping, Sequence

from rag.documents.model import Block, BlockKind, Extracted, ExtractionWarning, Format, Page
from rag.documents.statute import ARTICLE_LEVEL, article_heading, bold_paragraph_mark, part_level, split_article

_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u200b\u200e\u200f\u2028\u2029\ufeff\ufffe\uffff]")
_SPACES = re.compile(r"[ \t\u00a0\u3000]+")
_BLANKS = re.compile(r"\n{3,}")
CELL_SEPARATOR = " | "
# formats whose markup the loader writes (not the user): a statute in them is written in the markdown
# a statute's text is given in (articles as level-5 headings, paragraph marks in bold), so it is
# chunked, embedded and cited exactly as the same statute given as markdown text
RENDERED: frozenset[Format] = frozenset({"pdf", "docx", "html", "hwpx", "hwp"})


def clean(text: str) -> str:
    """NFC-normalised text without control characters (``\\n`` kept), inner space runs as one
    space, no trailing space on a line and at most one blank line in a row."""
    text = unicodedata.normalize("NFC", text.replace("\r\n", "\n").replace("\r", "\n"))
    text = text.replace("\f", "\n").replace("\v", "\n")
    text = _CONTROL.sub("", text)
    lines = [_SPACES.sub(" ", ln).strip() for ln in text.split("\n")]
    return _BLANKS.sub("\n\n", "\n".join(lines)).strip()


def control_free(text: str) -> bool:
    """True when ``text`` holds no NUL or control character but ``\\n`` and ``\\t``."""
    return _CONTROL.search(text.replace("\t", " ")) is None


class TextAssembler:
    """Accumulates blocks and pages into one text with their spans."""

    def __init__(self, fmt: Format) -> None:
        self.format: Format = fmt
        self._parts: list[str] = []
        self._len = 0
        self._blocks: list[Block] = []
        self._pages: list[tuple[int, int]] = []  # (number, start)
        self._pending: list[int] = []  # pages opened, their first block not written yet
        self._last_kind: BlockKind | None = None
        self._statute = False  # an article was written (a heading or a paragraph opening with one): marks in bold
        # characters the last block gained (a bold paragraph mark) or lost (an article heading moved out of
        # it) ahead of any offset inside it, against the text the loader passed
        self._shift = 0
        self.warnings: list[ExtractionWarning] = []

    @property
    def length(self) -> int:
        return self._len

    def _write(self, s: str) -> None:
        self._parts.append(s)
        self._len += len(s)

    def page(self, number: int) -> None:
        """Blocks from here on are on page ``number`` (a page with no block gets an empty span)."""
        self._pending.append(number)

    def page_inside(self, number: int, offset: int) -> None:
        """Page ``number`` starts ``offset`` characters into the last block written (a paragraph
        that runs across a page break stays one block). ``offset`` counts in the block's text as
        written, so pass text that :func:`clean` leaves unchanged."""
        last = self._blocks[-1]
        offset += self._shift  # not above 0 when the page starts inside an article heading moved out of it
        if not 0 < offset < last.end - last.start:
            raise ValueError(f"page {number} offset {offset} is not inside the last block")
        self._flush_pending(last.start)
        self._pages.append((number, last.start + offset))

    def _flush_pending(self, at: int) -> None:
        self._pages.extend((n, at) for n in self._pending)
        self._pending.clear()

    def _separator(self, kind: BlockKind) -> str:
        if not self._parts:
            return ""
        tight = kind in ("list_item", "table_row") and self._last_kind == kind
        return "\n" if tight else "\n\n"

    def block(self, kind: BlockKind, text: str, level: int = 0) -> Block | None:
        """Append one block; ``text`` is cleaned first, and inner line breaks are kept only in a
        paragraph (a heading, list item or table row is one line). Returns the block, or None
        when nothing was left to append."""
        body = clean(text)
        if kind != "paragraph":
            body = " ".join(body.split())
        else:
            body = _BLANKS.sub("\n", body.replace("\n\n", "\n"))
        if not body:
            return None
        moved = 0  # characters of the text passed in that went to an article heading before this block
        if kind == "paragraph" and self.format in RENDERED and (split := split_article(body)) is not None:
            heading, moved = split  # a print's "제3조(목적) ① …": the article's heading, then its paragraph
            written = self.block("heading", heading, ARTICLE_LEVEL)
            body = body[moved:]
            if not body:
                return written
        if kind == "heading":
            level, heading = self._statute_heading(body.lstrip("#").strip(), level)
            level = min(max(level, 1), 6)
            body = f"{'#' * level} {heading}"
        shift = -moved
        if self._statute and kind in ("paragraph", "list_item"):
            marked = bold_paragraph_mark(body)
            shift, body = shift + len(marked) - len(body), marked
        self._write(self._separator(kind))
        start = self._len
        self._flush_pending(start)
        self._write(body)
        blk = Block(kind, start, self._len, level if kind == "heading" else 0)
        self._blocks.append(blk)
        self._last_kind = kind
        self._shift = shift
        return blk

    def _statute_heading(self, heading: str, level: int) -> tuple[int, str]:
        """(level, text) of a heading: in the formats the loader writes the markup of, a statute unit's
        fixed level (an article's heading written ``제N조 (제목)``); else as given."""
        if self.format not in RENDERED:
            return level, heading
        article = article_heading(heading)
        if article is not None:
            self._statute = True
            return ARTICLE_LEVEL, article
        return part_level(heading) or level, heading

    def table(self, rows: Sequence[Sequence[str]]) -> None:
        """A table as one ``table_row`` block per row, cells cleaned and joined by `` | ``;
        empty rows dropped."""
        self._last_kind = None  # a new table starts after a blank line
        for row in rows:
            cells = [" ".join(clean(c).split()) for c in row]
            if any(cells):
                self.block("table_row", CELL_SEPARATOR.join(cells))
        self._last_kind = None

    def warn(self, code: str, message: str, page: int | None = None) -> None:
        self.warnings.append(ExtractionWarning(code, message, page))

    def done(self, *, title: str = "", metadata: Mapping[str, object] | None = None) -> Extracted:
        text = "".join(self._parts)
        self._flush_pending(len(text))
        pages: list[Page] = []
        starts = [(n, min(s, len(text))) for n, s in self._pages]
        for i, (n, s) in enumerate(starts):
            end = starts[i + 1][1] if i + 1 < len(starts) else len(text)
            pages.append(Page(n, s, max(s, end)))
        return Extracted(self.format, text, " ".join(clean(title).split()), dict(metadata or {}),
                         tuple(pages), tuple(self._blocks), tuple(self.warnings))
