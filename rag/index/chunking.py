"""Token-sized, structure-, paragraph- and sentence-aware chunking.

Plain packing (``chunking.structure: plain``, and ``auto`` on a text without headings or
statute articles): a document is cut into units: paragraphs when they fit, otherwise
sentences, otherwise words (a single word is never cut). Units are packed greedily up to
``max_tokens`` with ``overlap_tokens`` of trailing units repeated in the next chunk.

Structured packing (``structure: auto`` on a text with markdown headings, statute part headings
or articles, found by :mod:`rag.text.segment`): the text is cut into sections, one per heading
or article, and a section boundary is hard: a chunk never holds the end of one article and the
start of the next, and the overlap never crosses it. A section that fits ``max_tokens`` is one
unit (so one article, one chunk); a longer one splits at paragraph marks (``①②``, or blank
lines where there are none), then items (``1.``), sub-items (``가.``), sentences, clauses and
words. Two exceptions keep chunks sensible: a heading with no text of its own (``## 제2장 운임``)
is packed with the section after it, and consecutive tiny sections (each under a quarter of
``max_tokens``, e.g. ``제6조의3 삭제``) are packed together while they fit. Each chunk carries
its ``heading_path`` (enclosing headings, outermost first, without a first heading equal to
the document title) and a ``locator``: the statute citation of its start (``제8조의2``,
``제8조의2제2항`` when it starts at paragraph ②, ``제1조~제3조`` for packed tiny articles), or
for other markdown the heading path joined with `` > ``.

Pages: a page break (form feed, ``\\f``) is a hard boundary in both modes: no chunk spans two
pages, and the page is 1 + the number of form feeds before the chunk. A document may instead
give its own page numbers in metadata: ``pages``, a list of ``[start_char, page_number]`` pairs
sorted by ``start_char`` (the page that begins at each offset), or ``page``, one int for the
whole document; a chunk's page is then the page at its start (``None`` before the first pair),
and these page starts are not hard boundaries: a page beginning inside a chunk (an article run
across a page break) is in its ``page_breaks``. A document read from a file (metadata ``format``)
also gives each chunk its ``boundaries``: where the loader's blocks (lines) begin. Every chunk's text is exactly
``doc.text[start_char:end_char]``, and chunking is deterministic.
"""
from __future__ import annotations

import bisect
import logging
import re
from dataclasses import dataclass
from typing import Mapping, Sequence

from rag.access.model import document_access
from rag.config import ChunkingConfig
from rag.errors import InputError
from rag.text.segment import Segment, safe_cuts, segment
from rag.text.structure import has_structure, locate
from rag.text.tokens import TiktokenCounter, TokenCounter
from rag.types import Chunk, Document

logger = logging.getLogger(__name__)

_PARA = re.compile(r"\n[ \t\r]*\n|\f")
# Sentence separator: the whitespace after . ! ? (and full-width forms), optionally
# followed by up to two closing quotes/brackets that stay with the sentence; or a line break.
_SENT = re.compile(
    r"(?<=[.!?。！？])\s+|(?<=[.!?。！？][\"'”’)\]])\s+|(?<=[.!?。！？][\"'”’)\]][\"'”’)\]])\s+|\n"
)
_WORD = re.compile(r"\S+")
_TINY_SHARE = 4  # a section under max_tokens // _TINY_SHARE tokens may share a chunk with its neighbours


@dataclass(frozen=True)
class _Unit:
    start: int
    end: int
    tokens: int
    page: int  # 1 + form feeds before the unit
    new_paragraph: bool
    group: int = 0  # units of different groups never share a chunk (pages; sections when structured)


@dataclass(frozen=True)
class _Section:
    atoms: tuple[Segment, ...]
    page: int
    heading_only: bool


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


def _strip_span(text: str, s: int, e: int) -> tuple[int, int]:
    while s < e and text[s].isspace():
        s += 1
    while e > s and text[e - 1].isspace():
        e -= 1
    return s, e


def page_table(doc: Document) -> list[tuple[int, int]] | None:
    """The document's own page numbers from ``metadata["pages"]`` / ``metadata["page"]`` as sorted
    ``(start_char, page)`` pairs, or ``None`` when it gives none. Raises :class:`InputError`
    naming the document when the metadata is malformed."""
    meta: Mapping[str, object] = doc.metadata or {}
    where = f"document {doc.id!r} version {doc.version!r}"
    has_pages, has_page = "pages" in meta, "page" in meta
    if has_pages and has_page:
        raise InputError(f"{where}: metadata has both 'pages' and 'page'; give one of them")
    if has_page:
        page = meta["page"]
        if not _is_int(page) or page < 0:
            raise InputError(f"{where}: metadata 'page' must be a non-negative integer, got {page!r}")
        return [(0, int(page))]
    if not has_pages:
        return None
    pages = meta["pages"]
    if not isinstance(pages, Sequence) or isinstance(pages, (str, bytes)) or not pages:
        raise InputError(f"{where}: metadata 'pages' must be a non-empty list of [start_char, page_number] "
                         f"pairs, got {pages!r:.80}")
    out: list[tuple[int, int]] = []
    for k, pair in enumerate(pages):
        if (not isinstance(pair, Sequence) or isinstance(pair, (str, bytes)) or len(pair) != 2
                or not _is_int(pair[0]) or not _is_int(pair[1])):
            raise InputError(f"{where}: metadata pages[{k}] must be a [start_char, page_number] pair of integers, "
                             f"got {pair!r:.80}")
        start, page = int(pair[0]), int(pair[1])
        if not 0 <= start <= len(doc.text):
            raise InputError(f"{where}: metadata pages[{k}] starts at {start}, outside the text "
                             f"(0..{len(doc.text)})")
        if page < 0:
            raise InputError(f"{where}: metadata pages[{k}] has a negative page number {page}")
        if out and start <= out[-1][0]:
            raise InputError(f"{where}: metadata 'pages' must be sorted by start_char without repeats; "
                             f"pages[{k}] starts at {start} after {out[-1][0]}")
        out.append((start, page))
    return out


def _is_int(v: object) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def _page_at(table: list[tuple[int, int]], offset: int) -> int | None:
    i = bisect.bisect_right([s for s, _ in table], offset) - 1
    return table[i][1] if i >= 0 else None


def _line_starts(text: str, start: int, end: int) -> tuple[int, ...]:
    """Offsets into ``text[start:end]`` where a line begins (a block of a loaded file), 0 excluded."""
    out = []
    at = text.find("\n", start, end)
    while at != -1:
        if start < at + 1 < end and (not out or out[-1] != at + 1 - start):
            out.append(at + 1 - start)
        at = text.find("\n", at + 1, end)
    return tuple(out)


def _norm(s: str) -> str:
    return " ".join(s.split()).casefold()


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

    # -- plain units ---------------------------------------------------------
    def _units(self, text: str) -> list[_Unit]:
        units: list[_Unit] = []
        page_breaks = [m.start() for m in re.finditer("\f", text)]
        count = self.counter.count
        for ps, pe in _spans(text, 0, len(text), _PARA):
            page = 1 + sum(1 for b in page_breaks if b < ps)
            first = True
            n = count(text[ps:pe])
            if n <= self.max_tokens:
                units.append(_Unit(ps, pe, n, page, True, page))
                continue
            for ss, se in _spans(text, ps, pe, _SENT):
                n = count(text[ss:se])
                if n <= self.max_tokens:
                    units.append(_Unit(ss, se, n, page, first, page))
                    first = False
                    continue
                for m in _WORD.finditer(text, ss, se):
                    ws, we = m.start(), m.end()
                    units.append(_Unit(ws, we, count(text[ws:we]), page, first, page))
                    first = False
        return units

    # -- structured units ----------------------------------------------------
    def _sections(self, text: str) -> list[_Section]:
        """Atoms (segments not separated by whitespace are one atom) grouped into sections: a new
        section at each heading or article and at each form feed; a bare heading (no text before
        the next heading) opens the section after it instead of standing alone."""
        atoms: list[Segment] = []
        for seg in segment(text):
            if atoms and atoms[-1].end == seg.start:  # glued ("다.그리고"): never cut between them
                a = atoms[-1]
                atoms[-1] = Segment(text[a.start:seg.end], a.start, seg.end, a.kind, a.label, a.path, a.level)
            else:
                atoms.append(seg)
        breaks = [m.start() for m in re.finditer("\f", text)]
        sections: list[list[Segment]] = []
        pages: list[int] = []
        for a in atoms:
            page = 1 + bisect.bisect_left(breaks, a.start)
            bare = bool(sections) and all(x.kind == "heading" for x in sections[-1])
            if not sections or page != pages[-1] or (a.level == 0 and not bare):
                sections.append([a])
                pages.append(page)
            else:
                sections[-1].append(a)
        return [_Section(tuple(sec), page, all(x.kind == "heading" for x in sec))
                for sec, page in zip(sections, pages)]

    def _structured_units(self, text: str) -> list[_Unit]:
        count = self.counter.count
        tiny = self.max_tokens // _TINY_SHARE
        units: list[_Unit] = []
        group = 0
        prev_tiny = False
        prev_page = 0
        for sec in self._sections(text):
            start, end = sec.atoms[0].start, sec.atoms[-1].end
            n = count(text[start:end])
            is_tiny = n < tiny and not sec.heading_only
            # tiny sections share a group while they follow each other within one part (no part heading between)
            if not (is_tiny and prev_tiny and sec.page == prev_page and sec.atoms[0].kind != "heading"):
                group += 1
            prev_tiny, prev_page = is_tiny, sec.page
            if n <= self.max_tokens:
                units.append(_Unit(start, end, n, sec.page, True, group))
                continue
            atoms = list(sec.atoms)
            # leading headings stick to the first text after them, so no chunk is headings alone
            k = 0
            while k < len(atoms) - 1 and atoms[k].level == 0:
                k += 1
            glue = atoms[k - 1].end if k else -1  # end of the leading headings
            if k:
                a, b = atoms[0], atoms[k]
                atoms[:k + 1] = [Segment(text[a.start:b.end], a.start, b.end, a.kind, a.label, a.path, 0)]
            marked = any(a.kind == "paragraph" for a in atoms)
            levels = [0 if x == 0 else (4 if marked and a.kind == "sentence" and a.level == 1 else max(a.level, 1))
                      for x, a in enumerate(atoms)]
            self._split(text, atoms, levels, 0, len(atoms), 0, sec.page, group, units, glue)
        return units

    def _split(self, text: str, atoms: list[Segment], levels: list[int], lo: int, hi: int, depth: int,
               page: int, group: int, out: list[_Unit], glue: int = -1) -> None:
        """Units for atoms[lo:hi]: the whole span if it fits, else split at the shallowest level
        that divides it (paragraphs, items, sub-items, sentences), else clauses and words."""
        start, end = atoms[lo].start, atoms[hi - 1].end
        n = self.counter.count(text[start:end])
        if n <= self.max_tokens:
            out.append(_Unit(start, end, n, page, levels[lo] <= 1, group))
            return
        if hi - lo == 1:
            self._split_long(text, start, end, page, levels[lo] <= 1, group, out, glue)
            return
        for level in range(depth + 1, 5):
            cuts = [k for k in range(lo + 1, hi) if levels[k] <= level]
            if cuts:
                bounds = [lo, *cuts, hi]
                for a, b in zip(bounds, bounds[1:]):
                    self._split(text, atoms, levels, a, b, level, page, group, out, glue)
                return
        self._split_long(text, start, end, page, levels[lo] <= 1, group, out, glue)  # unreachable: level 4 divides

    def _split_long(self, text: str, start: int, end: int, page: int, first: bool, group: int,
                    out: list[_Unit], glue: int = -1) -> None:
        """One over-long unit: pieces between clause ends, then safe word ends, then any words.
        Text up to ``glue`` (leading headings) never forms a piece of its own."""
        count = self.counter.count
        body = text[start:end]
        clause = [start + c for c in safe_cuts(body, "clause")]
        word = [start + c for c in safe_cuts(body, "word")]
        for tier in (clause, word, None):
            if tier is None:
                for m in _WORD.finditer(text, start, end):
                    out.append(_Unit(m.start(), m.end(), count(m.group(0)), page, first, group))
                    first = False
                return
            pieces = []
            pos = start
            for c in [*tier, end]:
                if c <= pos:
                    continue
                s, e = _strip_span(text, pos, min(c, end))
                if s < e:
                    pieces.append((s, e))
                pos = c
            while len(pieces) > 1 and pieces[0][1] <= glue:
                pieces[:2] = [(pieces[0][0], pieces[1][1])]
            if len(pieces) > 1:
                for s, e in pieces:
                    n = count(text[s:e])
                    if n <= self.max_tokens:
                        out.append(_Unit(s, e, n, page, first, group))
                    else:
                        self._split_long(text, s, e, page, first, group, out, glue)
                    first = False
                return

    # -- chunks --------------------------------------------------------------
    def chunk(self, doc: Document) -> list[Chunk]:
        text = doc.text
        pages = page_table(doc)
        structured = self.config.structure == "auto" and bool(text.strip()) and has_structure(text)
        units = self._structured_units(text) if structured else self._units(text)
        segs = segment(text) if structured else ()
        seg_starts = [sg.start for sg in segs]
        has_pages = "\f" in text
        access = document_access(doc.id, doc.metadata)  # every chunk carries its document's access
        chunks: list[Chunk] = []
        i = 0
        last_j = -1  # index of the last unit already emitted
        while i < len(units):
            j = self._pack(text, units, i)
            if j <= last_j:  # the overlap left no room for new text: restart without it
                i = last_j + 1
                j = self._pack(text, units, i)
            start, end = units[i].start, units[j].end
            if pages is not None:
                page = _page_at(pages, start)
            else:
                page = units[i].page if has_pages else None
            locator, path = self._where(doc, segs, seg_starts, units, i, j) if structured else ("", ())
            chunks.append(Chunk(
                evidence_id=f"{doc.id}:{doc.version}:{len(chunks)}", document_id=doc.id,
                document_version=doc.version, ordinal=len(chunks), text=text[start:end], start_char=start,
                end_char=end, title=doc.title, uri=doc.uri, page=page, locator=locator, heading_path=path,
                page_breaks=tuple((s - start, n) for s, n in pages if start < s < end) if pages else (),
                boundaries=_line_starts(text, start, end) if "format" in doc.metadata else (),
                file=str(doc.metadata.get("file") or ""), access=access))
            last_j = j
            if j + 1 >= len(units):
                break
            i = self._next_start(units, i, j)
        return chunks

    def _next_start(self, units: list[_Unit], i: int, j: int) -> int:
        """Where the chunk after units[i..j] starts: early enough to repeat <= ``overlap_tokens`` of
        this one, but never before i + 1 (progress) and never across a page or section boundary."""
        nxt = j + 1
        back = 0
        while (
            nxt - 1 > i
            and units[nxt - 1].group == units[j + 1].group
            and back + units[nxt - 1].tokens <= self.overlap_tokens
        ):
            nxt -= 1
            back += units[nxt].tokens
        return nxt

    def _where(self, doc: Document, segs: Sequence[Segment], seg_starts: list[int], units: list[_Unit], i: int,
               j: int) -> tuple[str, tuple[str, ...]]:
        """(locator, heading_path) of the chunk made of units[i..j], taken where its own text starts
        (after any part headings packed in front of it)."""
        text = doc.text
        start, end = units[i].start, units[j].end
        k = bisect.bisect_left(seg_starts, start)
        anchor = next((s.start for s in segs[k:] if s.start >= end or s.kind != "heading"), start)
        anchor = anchor if anchor < end else start
        loc = locate(text, anchor)
        path = loc.path
        if path and doc.title and _norm(path[0]) == _norm(doc.title):
            path = path[1:]
        if loc.article:
            last = locate(text, units[j].start).article
            label = loc.label
            return (f"{label}~{last}" if last and last != loc.article else label), path
        return " > ".join(path), path

    def _pack(self, text: str, units: list[_Unit], i: int) -> int:
        """Index of the last unit of the chunk starting at unit ``i``."""
        j = i
        total = units[i].tokens
        while (
            j + 1 < len(units)
            and units[j + 1].group == units[i].group
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
