"""Structure-aware segmentation of Korean and English text.

One segmenter serves chunking, context truncation, the extractive generator and the validator,
so that a unit is the same unit everywhere. :func:`segment` cuts a text into
:class:`Segment` units, each with exact offsets (``segment.text == text[start:end]``, stripped
of surrounding whitespace; every visible character belongs to exactly one segment):

- ``heading``: a markdown heading line (``## 제1장 총칙``) or a statute part heading line
  (``제2장 운임``, ``제1절 …``); the line is one unit;
- ``article``: a statute article heading: ``##### 제8조의2 (여비의 결제와 정산 등)``, or the
  ``제619조의2(제목)`` that opens an article in plain text (the body after it is a new unit);
- ``paragraph``: a unit starting at a paragraph mark ``①②…`` (``**①**`` in markdown), at a
  line start, after an article heading, or after the end of a sentence;
- ``item``: a unit starting at an enumerator at a line start: ``1.``, ``1\\.``, ``1의2.``,
  ``가.``, ``1)``, ``(1)``, ``가)`` or a bullet (``-``, ``*``, ``•`` …);
- ``note``: an amendment note (``<개정 2024. 6. 28.>``, ``[본조신설 2017. 3. 3.]``) that has no
  unit before it to attach to; a note after a sentence stays part of that sentence;
- ``sentence``: anything else.

The structural starts (headings, articles, paragraph marks, items), the bracket map and the locator
in force at an offset come from one line scan, :mod:`rag.text.structure`; this module cuts the text
between them into units.

Sentence rules (inside a unit):

- a sentence ends after ``. ! ? … 。 ！ ？`` (plus closing quotes/brackets and ``[S#]`` markers
  right after them) when whitespace or the end of the text follows; Korean written without a
  space after the period (``했다.그리고``) is split too;
- never inside brackets (``( ) [ ] < > 「 」 『 』 “ ” …``, matched pairs within a paragraph), so
  ``<개정 2012. 3. 5., 2017. 3.\\n3.>`` and ``(… 포함한다. 이하 같다)`` stay whole;
- never inside dates and decimals (``2024. 6. 28.``, ``23.5``), after common abbreviations and
  initials (``e.g.``, ``Dr.``, ``K.``), after an enumerator (``1.`` at a line start or after a
  sentence end, ``가.``), or before a lowercase word;
- a blank line, a form feed and every structural start always end a unit; a single newline
  does not (a hard-wrapped line: ``무선설비 또\\n는`` is one word) unless the line before it
  is short next to its neighbours (a title line) or ends a note. With ``newlines=True``
  (answers, where a line is usually its own sentence or list item) every newline ends a unit.

:func:`safe_cuts` gives the offsets where a text may be truncated; :func:`locate`,
:func:`refine_locator` and :func:`has_structure` (the structural position of an offset, from
:mod:`rag.text.structure`) are importable from here too. Results are cached per text.
"""
from __future__ import annotations

import bisect
import logging
import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Literal

from rag.lang.ko import segments as ko_segments
from rag.lang.ko import statute as ko_statute
from rag.text.structure import (
    HANGUL_ENUMERATORS,
    LEVEL_CONTINUE,
    LEVEL_PARAGRAPH,
    MIN_WRAP_WIDTH,
    NOTE,
    PARAGRAPH_MARKS,
    SENTENCE_PUNCT,
    SMALL_TEXT,
    WRAP_RATIO,
    Locator,
    SegmentKind,
    Structure,
    blank_follows,
    display_width,
    has_structure,
    is_hangul,
    locate,
    locator_at,
    parse_structure,
    refine_locator,
)

__all__ = ["MARKER_PATTERN", "NOTE", "CutLevel", "Locator", "Segment", "SegmentKind", "has_structure",
           "is_enumerator", "is_note", "locate", "refine_locator", "safe_cuts", "segment"]

logger = logging.getLogger(__name__)

CutLevel = Literal["sentence", "clause", "word"]

# A citation marker: [S1], [s 2], [S1, S3], [S1; 4]. The one definition of the pattern
# (re-exported by rag.text.sentences).
MARKER_PATTERN = r"\[\s*[Ss]\s*\d+(?:\s*[,;]\s*[Ss]?\s*\d+)*\s*\]"
_MARKER_RUN = rf"(?:\s*{MARKER_PATTERN})*"
_MARKERS_AFTER = re.compile(_MARKER_RUN)
_CLOSERS = "\"'”’»)\\]}」』〉》"
_BOUNDARY = re.compile(r"(?:[.!?…]+|[。！？]+)[" + re.escape(_CLOSERS) + r"]*" + _MARKER_RUN)
_PUNCT_CLOSED = re.compile(rf"[{re.escape(SENTENCE_PUNCT)}][{re.escape(_CLOSERS)}]+$")  # 'odd.)' at a line end
_DATE_END = re.compile(r"\d{2,4}\.\s?\d{1,2}\.\s?\d{1,2}$")  # "2024. 6. 28" before the final period
_WORDCHAR = re.compile(r"[^\W_]")
_ABBREVIATIONS = frozenset({
    "e.g", "i.e", "vs", "etc", "al", "fig", "figs", "eq", "eqs", "dr", "mr", "mrs", "ms", "prof", "no", "nos",
    "vol", "vols", "approx", "cf", "st", "jr", "sr", "inc", "ltd", "co", "corp", "dept", "est", "min", "max",
    "ca", "resp", "u.s", "u.k", "ph.d", "a.m", "p.m", "jan", "feb", "mar", "apr", "jun", "jul", "aug", "sep",
    "sept", "oct", "nov", "dec",
})
_NOTE_END = re.compile(rf"(?:{NOTE.pattern})$")
_NOTE_ONLY = re.compile(rf"(?:\s|[.,;:]|{NOTE.pattern})*")
_ENUM_ONLY = re.compile(
    rf"(?:\*\*)?(?:{ko_statute.ITEM_NUMBER}\\?\.|[{HANGUL_ENUMERATORS}]\\?\."
    rf"|\(?(?:\d{{1,2}}|[{HANGUL_ENUMERATORS}])\)"
    rf"|[{PARAGRAPH_MARKS}]|[-*+•○●◦▪■□※])(?:\*\*)?"
)

_ITEM_NUMBER = re.compile(ko_statute.ITEM_NUMBER)  # 1, 12, 1의2
_LOCATOR_WORD = re.compile(ko_segments.LOCATOR_WORD)


@dataclass(frozen=True)
class Segment:
    """One unit of text: ``text == source[start:end]``, stripped of surrounding whitespace.

    ``label`` names what starts the unit (``"제8조의2"``, ``"제1장"``, ``"①"``, ``"1."``,
    ``"가."``); ``path`` is the heading path in force at the unit (outermost first, the unit itself
    included when it is a heading). ``level`` is how deep a break the unit starts: 0 a section
    (heading or article), 1 a paragraph (a paragraph mark, or the first unit after a blank line),
    2 an item, 3 a sub-item (``가.``, ``1)``), 4 a further sentence of the same block."""

    text: str
    start: int
    end: int
    kind: SegmentKind = "sentence"
    label: str = ""
    path: tuple[str, ...] = ()
    level: int = LEVEL_CONTINUE


# --------------------------------------------------------------------------- sentence ends
def _enumerator_context(text: str, word_start: int, nxt: str) -> bool:
    """Whether the number token at ``word_start`` (followed by a period) reads as an enumerator."""
    line_start = text.rfind("\n", 0, word_start) + 1
    if not text[line_start:word_start].strip(" \t>*-#"):
        return True  # "1. 밀폐공간의 위험성" at a line start
    before = text[max(0, word_start - 40):word_start].rstrip()
    if not before:
        return True
    c = before[-1]
    if c in SENTENCE_PUNCT + ":>)]」』":
        return True  # "… 같다. 1. 첫째", "<개정 …> 1. 작업장소는"
    return is_hangul(c) and is_hangul(nxt)  # "위험성 2. 측정" (Korean running enumeration)


def _is_end(text: str, m: re.Match, inside: bytes) -> bool:
    end = m.end()
    if inside[end] and end < len(text):
        return False  # inside brackets: "(… 포함한다. 이하 같다)", "<개정 2024. 6. 28.>"
    punct = m.group(0)
    if end >= len(text):
        return True
    if punct[0] in "。！？" or "[" in punct:
        return True  # full-width ends, and a citation marker after the punctuation, always close a sentence
    nxt = text[end]
    if not nxt.isspace():
        # Korean without a space: 다.그리고 / 요?네
        before = text[m.start() - 1] if m.start() > 0 else ""
        return is_hangul(before) and (is_hangul(nxt) or nxt.isupper())
    k = end
    n = len(text)
    while k < n and text[k].isspace():
        k += 1
    if k >= n:
        return True
    nxt = text[k]
    if punct[0] == "." and punct.rstrip(SENTENCE_PUNCT) == "":  # "3.]" / "28.>": a closer ended the date
        window = text[max(0, m.start() - 48):m.start()]
        word = re.search(r"(\S+)$", window)
        w = word.group(1).lower().lstrip("(\"'“‘") if word else ""
        w_plain = w.rstrip("\\")
        if w in _ABBREVIATIONS or (len(w) == 1 and w.isalpha() and w.isascii()):
            return False  # e.g. / Dr. / initials
        if w_plain[-1:].isdigit():
            if nxt.isdigit() or _DATE_END.search(window):
                return False  # 2024. 6. 28.
            if _ITEM_NUMBER.fullmatch(w_plain):
                word_start = m.start() - len(word.group(1)) if word else m.start()
                if _enumerator_context(text, word_start, nxt):
                    return False  # "1. 밀폐공간의 위험성", "<개정 …> 1. 작업장소는"
        if len(w_plain) == 1 and w_plain in HANGUL_ENUMERATORS:
            return False  # "가. 항목": a standalone Hangul enumerator
    return not (nxt.islower() and nxt.isascii())  # no split before "and" in "etc. and"


def _hard_newline(text: str, p: int, inside: bytes, line_start: int, wrap_width: float) -> bool:
    """Whether the single newline at ``p`` ends a unit (otherwise it is a hard wrap inside one)."""
    line = text[line_start:p].rstrip()
    if not line:
        return True
    q = text.find("\n", p + 1)
    nxt_line = text[p + 1:q if q >= 0 else len(text)].split("\f")[0].strip()
    if not nxt_line:
        return True
    if inside[p]:
        return False  # "(「전파법」 … 무선설비 또\n는 …)"
    last = line[-1]
    if last in SENTENCE_PUNCT or _PUNCT_CLOSED.search(line):
        return False  # the punctuation rule decides (a date "6.\n28." must not end here)
    if _NOTE_END.search(line[-240:]):
        return True  # a line ending in a complete note ends its unit
    if last == ",":
        return False
    w = display_width(line)
    if w < MIN_WRAP_WIDTH:
        return True
    return w < WRAP_RATIO * max(display_width(nxt_line), wrap_width)  # a title line, not a wrapped one


# --------------------------------------------------------------------------- segmenting
def _segments(text: str, newlines: bool) -> tuple[Segment, ...]:
    return _segments_small(text, newlines) if len(text) <= SMALL_TEXT else _segments_large(text, newlines)


@lru_cache(maxsize=20_000)
def _segments_small(text: str, newlines: bool) -> tuple[Segment, ...]:
    return _build_segments(text, newlines)


@lru_cache(maxsize=8)
def _segments_large(text: str, newlines: bool) -> tuple[Segment, ...]:
    return _build_segments(text, newlines)


def _build_segments(text: str, newlines: bool) -> tuple[Segment, ...]:
    if not text.strip():
        return ()
    parse = parse_structure(text)
    inside = parse.inside
    n = len(text)
    cuts: set[int] = set()
    no_cut = parse.sealed
    for mk in parse.marks:
        cuts.add(mk.offset)
        if mk.end >= 0:
            cuts.add(mk.end)
    for m in re.finditer(r"\n[ \t\r]*(?=[\n\f])|\f", text):
        cuts.add(m.start())
    ends: set[int] = set()
    for m in _BOUNDARY.finditer(text):
        if _is_end(text, m, inside):
            ends.add(m.end())
    # a note after a sentence end belongs to that sentence: "… 한다. <개정 2024. 6. 28.>" ends after the note
    mark_at = {mk.offset for mk in parse.marks}
    for m in NOTE.finditer(text):
        c = m.start()
        while c > 0 and text[c - 1] in " \t\r\n" and not blank_follows(text, c - 1):
            c -= 1
        if c in ends and m.start() not in mark_at:
            ends.discard(c)
            after = _MARKERS_AFTER.match(text, m.end())  # a starred group: it always matches
            ends.add(after.end() if after else m.end())  # "<개정 …> [S1]": the markers come along
    cuts |= ends
    # single newlines: hard wraps stay inside a unit
    line_start = 0
    for m in re.finditer(r"[\n\f]", text):
        p = m.start()
        if m.group(0) == "\n" and not blank_follows(text, p) and text[line_start:p].strip():
            if (newlines and not inside[p]) or _hard_newline(text, p, inside, line_start, parse.wrap_width):
                cuts.add(p)
        line_start = p + 1
    if no_cut:
        starts = [s for s, _ in no_cut]
        for c in list(cuts):
            i = bisect.bisect_right(starts, c) - 1
            if i >= 0 and no_cut[i][0] < c < no_cut[i][1]:
                cuts.discard(c)

    pieces: list[tuple[int, int]] = []
    pos = 0
    for cut in sorted(cuts) + [n]:
        if cut <= pos:
            continue
        s, e = pos, cut
        while s < e and text[s].isspace():
            s += 1
        while e > s and text[e - 1].isspace():
            e -= 1
        if s < e:
            pieces.append((s, e))
        pos = cut
    pieces = _join_fragments(text, pieces, {mk.offset for mk in parse.marks if mk.end >= 0})
    return tuple(_describe(text, parse, pieces))


def _join_fragments(text: str, pieces: list[tuple[int, int]], heading_starts: set[int]) -> list[tuple[int, int]]:
    """An enumerator alone joins the unit after it; a note or punctuation alone joins the unit
    before it (never across a blank line, never into a heading line)."""
    out: list[tuple[int, int]] = []
    carry: tuple[int, int] | None = None
    for s, e in pieces:
        body = text[s:e]
        if carry is not None:
            if _blank_between(text, carry[1], s):
                out.append(carry)
            else:
                s = carry[0]
            carry = None
        if _ENUM_ONLY.fullmatch(body):
            carry = (s, e)
            continue
        if out and (_NOTE_ONLY.fullmatch(body) or not _WORDCHAR.search(body)) \
                and not _blank_between(text, out[-1][1], s) and out[-1][0] not in heading_starts:
            out[-1] = (out[-1][0], e)
            continue
        out.append((s, e))
    if carry is not None:
        if out and not _blank_between(text, out[-1][1], carry[0]) and out[-1][0] not in heading_starts:
            out[-1] = (out[-1][0], carry[1])
        else:
            out.append(carry)
    return out


def _blank_between(text: str, a: int, b: int) -> bool:
    gap = text[a:b]
    return "\f" in gap or re.search(r"\n[ \t\r]*\n", gap) is not None


def _describe(text: str, parse: Structure, pieces: list[tuple[int, int]]) -> list[Segment]:
    by_offset = {mk.offset: mk for mk in parse.marks}
    out: list[Segment] = []
    prev_end = 0
    prev_kind = ""
    for s, e in pieces:
        mk = by_offset.get(s)
        loc = locator_at(parse, s)
        body = text[s:e]
        if mk is not None:
            kind, label, level = mk.kind, mk.label, mk.level
        else:
            kind, label = ("note" if _NOTE_ONLY.fullmatch(body) else "sentence"), ""
            level = LEVEL_PARAGRAPH if (not out or _blank_between(text, prev_end, s)
                                         or prev_kind in ("heading", "article")) else LEVEL_CONTINUE
        out.append(Segment(body, s, e, kind, label, loc.path, level))
        prev_end, prev_kind = e, kind
    return out


# --------------------------------------------------------------------------- public API
def segment(text: str, newlines: bool = False) -> tuple[Segment, ...]:
    """Structure-aware units of ``text`` in order (cached per text). ``newlines=True`` makes every
    newline end a unit (answers)."""
    return _segments(text, newlines)


def is_enumerator(text: str) -> bool:
    """Whether ``text`` (stripped) is only an enumerator or paragraph mark: ``1.``, ``가.``, ``②``, ``-``."""
    return _ENUM_ONLY.fullmatch(text.strip()) is not None


def is_note(text: str) -> bool:
    """Whether ``text`` is only amendment notes (``<개정 2024. 6. 28.>``, ``[본조신설 …]``) and punctuation."""
    return bool(text.strip()) and _NOTE_ONLY.fullmatch(text) is not None


def safe_cuts(text: str, level: CutLevel = "sentence") -> tuple[int, ...]:
    """Offsets where ``text`` may be cut (``text[:cut]`` kept), ascending.

    ``sentence``: the ends of units (sentences, items, headings, notes attached); ``clause``: also
    after ``,`` ``;`` ``:`` followed by whitespace; ``word``: also at spaces between words. Never
    inside brackets (so never inside a ``<개정 …>`` note), a date, a decimal number, or a
    hard-wrapped word, and never right after an enumerator. Cached per text."""
    if level not in ("sentence", "clause", "word"):
        raise ValueError(f"level must be 'sentence', 'clause' or 'word', got {level!r}")
    return _safe_cuts(text, level) if len(text) <= SMALL_TEXT else _build_safe_cuts(text, level)


@lru_cache(maxsize=4096)
def _safe_cuts(text: str, level: CutLevel) -> tuple[int, ...]:
    return _build_safe_cuts(text, level)


def _build_safe_cuts(text: str, level: CutLevel) -> tuple[int, ...]:
    cuts = {s.end for s in _segments(text, False)}
    if level == "sentence":
        return tuple(sorted(c for c in cuts if 0 < c <= len(text)))
    inside = parse_structure(text).inside
    for m in re.finditer(r"[,;:](?=[ \t\n])", text):
        p = m.end()
        if not inside[p] and not (m.group(0) == "," and text[p - 2:p - 1].isdigit() and _next_visible(text, p).isdigit()):
            cuts.add(p)
    if level == "word":
        for m in re.finditer(r"(?<=\S)[ \t\u3000]", text):
            p = m.start()
            if inside[p] or _cut_splits_token(text, p):
                continue
            cuts.add(p)
    return tuple(sorted(c for c in cuts if 0 < c <= len(text)))


def _next_visible(text: str, p: int) -> str:
    while p < len(text) and text[p].isspace():
        p += 1
    return text[p] if p < len(text) else ""


def _cut_splits_token(text: str, p: int) -> bool:
    """A cut at the space ``p`` would split a date/number group or leave an enumerator dangling."""
    word = re.search(r"(\S+)$", text[max(0, p - 24):p])
    w = word.group(1) if word else ""
    nxt = _next_visible(text, p)
    if re.fullmatch(r"\d{1,4}\.", w) and nxt.isdigit():
        return True  # "2024. 6. 28."
    if re.fullmatch(r"[\d,.]*\d", w) and nxt.isdigit():
        return True  # "1 000"
    return _ENUM_ONLY.fullmatch(w) is not None or _LOCATOR_WORD.fullmatch(w) is not None
