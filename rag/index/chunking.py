"""Token-sized, paragraph- and sentence-aware chunking.

A document is cut into units: paragraphs when they fit, otherwise sentences, otherwise
words (a single word is never cut). Units are packed greedily up to ``max_tokens`` with
``overlap_tokens`` of trailing units repeated in the next chunk. A page break (form
feed, ``\\f``) is a hard boundary: no chunk spans two pages. Every chunk's text is
exactly ``doc.text[start_char:end_char]``.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from rag.config import ChunkingConfig
from rag.text.tokens import TiktokenCounter, TokenCounter
from rag.types import Chunk, Document

_PARA = re.compile(r"\n[ \t\r]*\n|\f")
# Sentence separator: the whitespace after . ! ? (and full-width forms), optionally
# followed by up to two closing quotes/brackets that stay with the sentence; or a line break.
_SENT = re.compile(
    r"(?<=[.!?。！？])\s+|(?<=[.!?。！？][\"'”’)\]])\s+|(?<=[.!?。！？][\"'”’)\]][\"'”’)\]])\s+|\n"
)
_WORD = re.compile(r"\S+")


@dataclass(frozen=True)
class _Unit:
    start: int
    end: int
    tokens: int
    page: int
    new_paragraph: bool


def _spans(text: str, start: int, end: int, splitter: re.Pattern[str]) -> list[tuple[int, int]]:
    out: list[tuple[int, int]] = []
    pos = start
    for m in splitter.finditer(text, start, end):
        out.append((pos, m.start()))
        pos = m.end()
    out.append((pos, end))
    trimmed = []
    for s, e in out:
        while s < e and text[s].isspace():
            s += 1
        while e > s and text[e - 1].isspace():
            e -= 1
        if s < e:
            trimmed.append((s, e))
    return trimmed


class Chunker:
    """Splits documents into :class:`Chunk` objects; stateless and deterministic."""

    def __init__(self, config: ChunkingConfig | None = None, counter: TokenCounter | None = None) -> None:
        """``config``: the ``chunking`` section; ``counter`` defaults to its tiktoken encoding."""
        self.config = config or ChunkingConfig()
        self.counter = counter or TiktokenCounter(self.config.encoding)

    @property
    def max_tokens(self) -> int:
        return self.config.max_tokens

    @property
    def overlap_tokens(self) -> int:
        return self.config.overlap_tokens

    def _units(self, text: str) -> list[_Unit]:
        units: list[_Unit] = []
        page_breaks = [m.start() for m in re.finditer("\f", text)]
        count = self.counter.count
        for ps, pe in _spans(text, 0, len(text), _PARA):
            page = 1 + sum(1 for b in page_breaks if b < ps)
            first = True
            n = count(text[ps:pe])
            if n <= self.max_tokens:
                units.append(_Unit(ps, pe, n, page, True))
                continue
            for ss, se in _spans(text, ps, pe, _SENT):
                n = count(text[ss:se])
                if n <= self.max_tokens:
                    units.append(_Unit(ss, se, n, page, first))
                    first = False
                    continue
                for m in _WORD.finditer(text, ss, se):
                    ws, we = m.start(), m.end()
                    units.append(_Unit(ws, we, count(text[ws:we]), page, first))
                    first = False
        return units

    def chunk(self, doc: Document) -> list[Chunk]:
        text = doc.text
        units = self._units(text)
        has_pages = "\f" in text
        chunks: list[Chunk] = []
        i = 0
        last_j = -1  # index of the last unit already emitted
        while i < len(units):
            j = self._pack(text, units, i)
            if j <= last_j:  # the overlap left no room for new text: restart without it
                i = last_j + 1
                j = self._pack(text, units, i)
            start, end = units[i].start, units[j].end
            chunks.append(
                Chunk(
                    evidence_id=f"{doc.id}:{doc.version}:{len(chunks)}",
                    document_id=doc.id,
                    document_version=doc.version,
                    ordinal=len(chunks),
                    text=text[start:end],
                    start_char=start,
                    end_char=end,
                    title=doc.title,
                    uri=doc.uri,
                    page=units[i].page if has_pages else None,
                )
            )
            last_j = j
            if j + 1 >= len(units):
                break
            # Next chunk starts early enough to repeat <= overlap_tokens of this one,
            # but never before i + 1 (progress) and never across a page break.
            nxt = j + 1
            back = 0
            while (
                nxt - 1 > i
                and units[nxt - 1].page == units[j + 1].page
                and back + units[nxt - 1].tokens <= self.overlap_tokens
            ):
                nxt -= 1
                back += units[nxt].tokens
            i = nxt
        return chunks

    def _pack(self, text: str, units: list[_Unit], i: int) -> int:
        """Index of the last unit of the chunk starting at unit ``i``."""
        j = i
        total = units[i].tokens
        while (
            j + 1 < len(units)
            and units[j + 1].page == units[i].page
            and total + units[j + 1].tokens + 1 <= self.max_tokens
        ):
            j += 1
            total += units[j].tokens + 1
        # The joined text can tokenize differently from the sum; shrink until it fits.
        while j > i and self.counter.count(text[units[i].start:units[j].end]) > self.max_tokens:
            j -= 1
        return j

    def chunk_all(self, docs: list[Document]) -> list[Chunk]:
        out: list[Chunk] = []
        for d in docs:
            out.extend(self.chunk(d))
        return out
