"""What the two Hangul word-processor loaders (:mod:`rag.documents.hwp`, HWP 5 records, and
:mod:`rag.documents.hwpx`, OWPML XML) share once a paragraph is read: writing its text pieces and
tables to the assembler, footnotes after the body, and choosing the title."""
from __future__ import annotations

import re
from typing import Protocol, Sequence, Union

from rag.documents.assemble import TextAssembler, clean
from rag.lang.en import documents as en_documents
from rag.lang.ko import documents as ko_documents

MAX_HEADING_CHARS = 120  # an outline-styled paragraph longer than this stays a paragraph
OUTLINE_STYLE = re.compile(rf"^\s*(?:{ko_documents.HWP_OUTLINE_STYLE}|{en_documents.HWP_OUTLINE_STYLE})\s*(\d+)\s*$",
                           re.IGNORECASE)
_OPENING_CHARS = 2000


class Table(Protocol):
    rows: list[list[str]]


Part = Union[str, Table]


class HangulBody:
    """Feeds one document's paragraphs to the assembler; the loaders collect ``notes`` (footnotes,
    endnotes) and count ``flattened`` nested tables while they read."""

    def __init__(self, asm: TextAssembler) -> None:
        self.asm = asm
        self.notes: list[str] = []
        self.flattened = 0
        self.first_text = ""  # the first paragraph or heading
        self.opening = ""  # the first ~2,000 characters of text, tables included

    def write(self, parts: Sequence[Part], level: int) -> None:
        """One paragraph's pieces in reading order; ``level`` > 0: an outline (heading) style."""
        for part in parts:
            if not isinstance(part, str):
                self.asm.table(part.rows)
                if len(self.opening) < _OPENING_CHARS:
                    self.opening += " ".join(c for row in part.rows for c in row)
                continue
            text = clean(part)
            heading = bool(level) and len(text) <= MAX_HEADING_CHARS and "\n" not in text
            if self.asm.block("heading" if heading else "paragraph", part, level):
                self.first_text = self.first_text or " ".join(text.split())
                if len(self.opening) < _OPENING_CHARS:
                    self.opening += text

    def finish(self) -> None:
        """Footnotes and endnotes after the body; a warning for flattened nested tables."""
        for note in self.notes:
            self.asm.block("paragraph", note)
        if self.flattened:
            self.asm.warn("table_flattened", f"{self.flattened} table(s) inside table cells were flattened into "
                                             "the cell text")


def pick_title(declared: str, body: HangulBody, meta: dict[str, object]) -> str:
    """The file's declared title when the opening text contains it, else the first paragraph.
    Real files often carry a stale title from the template they were made from ("기성회규약" on
    a 대학원편입학운영내규); such a title is kept as ``file_title`` in the metadata."""
    squash = "".join(declared.split())
    if squash and squash in "".join(body.opening.split()):
        return declared
    if squash:
        meta["file_title"] = declared
    return body.first_text[:200]
