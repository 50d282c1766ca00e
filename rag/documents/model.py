"""What a loader makes of one file: frozen types shared by every format.

A loader turns the bytes of one file into an :class:`Extracted`: one plain text (blocks joined by
line breaks, paragraphs by a blank line), the pages and blocks it saw as character spans of that
text, the file's own metadata and every warning. :mod:`rag.documents.files` turns it into the
:class:`rag.types.Document` the index holds.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal, Mapping, Protocol

from rag.types import freeze_metadata

Format = Literal["pdf", "docx", "html", "hwpx", "hwp", "markdown", "text"]
BlockKind = Literal["heading", "paragraph", "list_item", "table_row"]


@dataclass(frozen=True)
class Page:
    """Page ``number`` (1-based, as printed order in the file) is ``text[start:end]``."""

    number: int
    start: int
    end: int


@dataclass(frozen=True)
class Block:
    """One structural unit the loader saw: ``text[start:end]``; ``level`` is a heading's depth (1 = top)."""

    kind: BlockKind
    start: int
    end: int
    level: int = 0


@dataclass(frozen=True)
class ExtractionWarning:
    """Something a user should know about what was read: ``code`` is stable (``scanned_page``,
    ``header_removed``, ``low_text``, ``encoding_guessed``, ``table_flattened`` …)."""

    code: str
    message: str
    page: int | None = None


@dataclass(frozen=True)
class Extracted:
    """The text of one file with its structure. Invariants (checked by :func:`check_extracted`):
    spans lie inside ``text`` and are sorted; pages do not overlap; the text holds no NUL or
    other control character except ``\\n`` and ``\\t``."""

    format: Format
    text: str
    title: str = ""
    metadata: Mapping[str, object] = field(default_factory=dict)
    pages: tuple[Page, ...] = ()
    blocks: tuple[Block, ...] = ()
    warnings: tuple[ExtractionWarning, ...] = ()

    def __post_init__(self) -> None:
        object.__setattr__(self, "metadata", freeze_metadata(self.metadata))


class Loader(Protocol):
    """One file format: ``extract`` reads the whole file's bytes (``name`` is for messages) and
    raises a :class:`rag.errors.FileExtractionError` subclass when the file cannot be used."""

    format: Format

    def extract(self, data: bytes, name: str) -> Extracted: ...
