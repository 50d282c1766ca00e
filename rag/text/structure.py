"""The structure of a text, from one line scan: markdown headings and statute part headings
(``제2장 운임``), article headings (``##### 제8조의2 (…)`` or a ``제619조의2(제목)`` opening a line),
paragraph marks (``①``, ``**①**``), items (``1.``, ``1\\.``, ``1의2.``, ``가.``, ``1)``, ``(1)``,
bullets), table rows and code fences, with the heading path, article, paragraph and items in force
from each of them (:class:`Locator`), and the map of offsets inside matched brackets (a cut never
falls there). :mod:`rag.text.segment` cuts units between these starts; :func:`locate` gives the
structural position of an offset, :func:`refine_locator` a chunk locator made precise for an offset
inside the chunk. Cached per text.
"""
from __future__ import annotations

import bisect
import re
import unicodedata
from dataclasses import dataclass
from functools import lru_cache
from typing import Literal

from rag.lang import HANGUL_SYLLABLE
from rag.lang.ko import statute as ko_statute

__all__ = ["HANGUL_ENUMERATORS", "LEVEL_CONTINUE", "LEVEL_ITEM", "LEVEL_PARAGRAPH", "LEVEL_SECTION", "LEVEL_SUBITEM",
           "Locator", "MIN_WRAP_WIDTH", "Mark", "NOTE", "PARAGRAPH_MARKS", "SENTENCE_PUNCT", "SMALL_TEXT",
           "SegmentKind", "Structure", "WRAP_RATIO", "blank_follows", "display_width", "has_structure", "is_hangul",
           "locate", "locator_at", "parse_structure", "refine_locator"]

SegmentKind = Literal["heading", "article", "paragraph", "item", "note", "sentence"]
SENTENCE_PUNCT = ".!?…。！？"

PARAGRAPH_MARKS = ko_statute.PARAGRAPH_MARKS
HANGUL_ENUMERATORS = ko_statute.ENUMERATORS

# Line-start structure (matched against one line, without its newline).
_MD_HEADING = re.compile(r"[ ]{0,3}(#{1,6})[ \t]+(\S[^\n\f]*?)(?:[ \t]+#+)?[ \t\r]*$")
_ARTICLE_LABEL = re.compile(ko_statute.ARTICLE_LABEL)
_PART_LABEL = re.compile(ko_statute.PART_LABEL)
_PART_LINE = re.compile(rf"[ \t]*({ko_statute.PART_LABEL_TEXT})(?:[ \t]+([^\n\f]*?))?[ \t\r]*$")
_ARTICLE_LINE = re.compile(rf"[ \t]*({ko_statute.ARTICLE_LABEL_TEXT})[ \t]*({ko_statute.ARTICLE_TITLE})")
_PARA_MARK = re.compile(rf"[ \t]*(?:\*\*([{PARAGRAPH_MARKS}])\*\*|([{PARAGRAPH_MARKS}]))(?=[ \t\r]|$)")
_ITEM = re.compile(
    rf"[ \t]*(?:({ko_statute.ITEM_NUMBER})\\?\.|([{HANGUL_ENUMERATORS}])\\?\.|\(?(\d{{1,2}}|[{HANGUL_ENUMERATORS}])\)"
    r"|([-*+•○●◦▪■□※]))(?=[ \t\r]|$)"
)
_HARD_LINE = re.compile(r"[ \t]*(?:\||```|~~~)")  # table rows and code fences: one unit per line

# An amendment note: <개정 2024. 6. 28.>, ‹신설 …›, 〈…〉, <2021.5.25>, [본조신설 …], [유효기간 …]. The one
# definition: the facts windows and the extractive generator's answer text use it too (NOTE).
NOTE = re.compile(ko_statute.NOTE)
_REFERENCE_NEXT = re.compile(ko_statute.REFERENCE_NEXT)
_BRACKETS = {"(": ")", "[": "]", "{": "}", "<": ">", "‹": "›", "「": "」", "『": "』", "“": "”", "‘": "’",
             "〈": "〉", "《": "》", "（": "）", "［": "］", "【": "】", "〔": "〕", "｛": "｝"}
_CLOSING = frozenset(_BRACKETS.values())
_SPAN_LIMIT = 800  # a bracket pair further apart than this is not treated as one span
_ANGLE_LIMIT = 240
MIN_WRAP_WIDTH = 24  # a line narrower than this (display columns) is never a hard wrap
WRAP_RATIO = 0.7  # a hard-wrapped line is at least this wide relative to its neighbours
LEVEL_SECTION, LEVEL_PARAGRAPH, LEVEL_ITEM, LEVEL_SUBITEM, LEVEL_CONTINUE = 0, 1, 2, 3, 4


# --------------------------------------------------------------------------- locators and marks
@dataclass(frozen=True)
class Locator:
    """Where an offset sits: the heading path, and for a statute the article, paragraph and items."""

    path: tuple[str, ...] = ()
    article: str = ""  # "제8조의2"
    paragraph: str = ""  # "②"
    item: str = ""  # "1." / "1의2."
    subitem: str = ""  # "가."

    @property
    def label(self) -> str:
        """The statute citation form, e.g. ``제8조의2제2항제1호가목``; ``""`` outside any article."""
        if not self.article:
            return ""
        out = self.article
        if self.paragraph:
            out += ko_statute.paragraph_label(_circled_number(self.paragraph))
        if self.item:
            num, _, sub = self.item.rstrip(".").partition(ko_statute.ITEM_SUB)
            out += ko_statute.item_label(num, sub)
        if self.subitem:
            out += ko_statute.subitem_label(self.subitem.rstrip("."))
        return out

    def describe(self, separator: str = " > ") -> str:
        """The statute label if there is one, else the heading path joined with ``separator``."""
        return self.label or separator.join(self.path)


@dataclass(frozen=True)
class Mark:
    """A structural start found by the line scan."""

    offset: int
    kind: SegmentKind
    label: str
    level: int
    heading: str = ""  # text for the heading path (headings and articles)
    depth: int = 0  # nesting depth for the heading stack (headings and articles)
    end: int = -1  # for headings/articles: where the unit ends (line end / title end)


@dataclass(frozen=True)
class Structure:
    """What the line scan found in one text (:func:`parse_structure`)."""

    inside: bytes  # inside[p] == 1: a cut at offset p would fall inside a bracket pair
    wrap_width: float  # typical width of a hard-wrapped line (median of the wide lines), 0 if none
    marks: tuple[Mark, ...]
    sealed: tuple[tuple[int, int], ...]  # (start, end) of units that are never split inside
    mark_offsets: tuple[int, ...]
    states: tuple[Locator, ...]  # locator in force from each mark on


# --------------------------------------------------------------------------- small helpers
def _circled_number(ch: str) -> int:
    o = ord(ch)
    if 0x2460 <= o <= 0x2473:
        return o - 0x2460 + 1
    if 0x3251 <= o <= 0x325F:
        return o - 0x3251 + 21
    if 0x32B1 <= o <= 0x32BF:
        return o - 0x32B1 + 36
    return 0


def _circled_char(n: int) -> str:
    if 1 <= n <= 20:
        return chr(0x2460 + n - 1)
    if 21 <= n <= 35:
        return chr(0x3251 + n - 21)
    if 36 <= n <= 50:
        return chr(0x32B1 + n - 36)
    return ""


def is_hangul(ch: str) -> bool:
    """Whether ``ch`` is one Hangul syllable."""
    return bool(ch) and HANGUL_SYLLABLE.match(ch) is not None


def display_width(s: str) -> int:
    """Width of ``s`` in display columns (wide and full-width characters count two)."""
    return sum(2 if unicodedata.east_asian_width(c) in "WF" else 1 for c in s)


def _article_label(s: str) -> str:
    m = _ARTICLE_LABEL.match(s)
    return ko_statute.article_label(m.group(1), m.group(2)) if m else ""


def _part_label(s: str) -> str:
    m = _PART_LABEL.match(s)
    return ko_statute.part_label(m.group(1), m.group(2), m.group(3)) if m else ""


def _heading_text(s: str) -> str:
    """Heading text for a path: notes removed, whitespace collapsed."""
    return " ".join(NOTE.sub(" ", s).split())


def _lines(text: str) -> list[tuple[int, int]]:
    """(start, end) of each line; lines end at ``\\n`` or ``\\f`` (not included)."""
    out = []
    pos = 0
    for m in re.finditer(r"[\n\f]", text):
        out.append((pos, m.start()))
        pos = m.end()
    out.append((pos, len(text)))
    return out


# --------------------------------------------------------------------------- the parse
# Caches per text: many small texts (blocks, answers), and a few whole documents (chunking), so a
# large corpus never piles up in memory.
SMALL_TEXT = 20_000


def parse_structure(text: str) -> Structure:
    """The structure of ``text`` (cached per text)."""
    return _parse_small(text) if len(text) <= SMALL_TEXT else _parse_large(text)


@lru_cache(maxsize=2048)
def _parse_small(text: str) -> Structure:
    return _build_parse(text)


@lru_cache(maxsize=8)
def _parse_large(text: str) -> Structure:
    return _build_parse(text)


def _build_parse(text: str) -> Structure:
    """The marks of ``text``, in three passes, then the bracket map and the wrap width:

    1. unambiguous line starts (:func:`_line_starts`): headings, articles, paragraph marks, table
       rows and fences;
    2. line starts that need the bracket map (:func:`_item_starts`): items, not a wrapped date
       ("2017. 3.\n3.>");
    3. paragraph marks inside a line after the end of a sentence (:func:`_inline_paragraphs`:
       "… 한다. ② 사업주는")."""
    lines = _lines(text)
    marks, sealed, strong_resets = _line_starts(text, lines)
    inside = _protected(text, strong_resets)
    _item_starts(text, lines, marks, sealed, inside)
    _inline_paragraphs(text, marks, sealed, inside)
    marks.sort(key=lambda mk: mk.offset)
    offsets, states = _states(marks)
    return Structure(bytes(inside), _wrap_width(text, lines, sealed), tuple(marks), tuple(sorted(sealed)), offsets,
                     states)


def _line_starts(text: str, lines: list[tuple[int, int]]) -> tuple[list[Mark], list[tuple[int, int]], list[int]]:
    """Step 1 (:func:`_build_parse`): (marks, sealed spans, offsets of the lines that reset the bracket map)."""
    marks: list[Mark] = []
    sealed: list[tuple[int, int]] = []
    strong_resets: list[int] = []
    for li, (ls, le) in enumerate(lines):
        line = text[ls:le]
        if not line.strip():
            continue
        m = _MD_HEADING.match(line)
        if m:
            body = m.group(2)
            label = _article_label(body)
            kind: SegmentKind = "article" if label else "heading"
            label = label or _part_label(body)
            end = ls + len(line.rstrip())
            marks.append(Mark(ls + m.start(1), kind, label, LEVEL_SECTION, _heading_text(body), len(m.group(1)),
                               end))
            sealed.append((ls + m.start(1), end))
            strong_resets.append(ls)
            continue
        m = _PART_LINE.match(line)
        if m and not re.search(r"[.!?。]", NOTE.sub("", m.group(2) or "")) and len(line.strip()) <= 80:
            pl = _PART_LABEL.match(m.group(1))
            assert pl is not None  # _PART_LINE's group 1 is a part label
            label, depth = _part_label(m.group(1)), ko_statute.HEADING_LEVELS[pl.group(2)]
            end = ls + len(line.rstrip())
            marks.append(Mark(ls + m.start(1), "heading", label, LEVEL_SECTION, _heading_text(line), depth, end))
            sealed.append((ls + m.start(1), end))
            strong_resets.append(ls)
            continue
        m = _ARTICLE_LINE.match(line)
        if m and _article_line_ok(text, lines, li, line, m):
            start, end = ls + m.start(1), ls + m.end(2)
            marks.append(Mark(start, "article", _article_label(m.group(1)), LEVEL_SECTION,
                               " ".join(text[start:end].split()), 5, end))
            sealed.append((start, end))
            strong_resets.append(ls)
            pm = _PARA_MARK.match(line, m.end())
            if pm:
                off = ls + pm.start() + len(pm.group(0)) - len(pm.group(0).lstrip(" \t"))
                marks.append(Mark(off, "paragraph", pm.group(1) or pm.group(2), LEVEL_PARAGRAPH))
            continue
        pm = _PARA_MARK.match(line)
        if pm:
            off = ls + len(pm.group(0)) - len(pm.group(0).lstrip(" \t"))
            marks.append(Mark(off, "paragraph", pm.group(1) or pm.group(2), LEVEL_PARAGRAPH))
            strong_resets.append(ls)
            continue
        hm = _HARD_LINE.match(line)
        if hm:
            start = ls + len(line) - len(line.lstrip())
            marks.append(Mark(start, "sentence", "", LEVEL_PARAGRAPH, end=ls + len(line.rstrip())))
            sealed.append((start, ls + len(line.rstrip())))
    return marks, sealed, strong_resets


def _item_starts(text: str, lines: list[tuple[int, int]], marks: list[Mark], sealed: list[tuple[int, int]],
                 inside: bytearray) -> None:
    """Step 2 (:func:`_build_parse`): item marks added to ``marks``."""
    have = {mk.offset for mk in marks}
    prev_line = ""
    for ls, le in lines:
        line = text[ls:le]
        if not line.strip():
            prev_line = ""
            continue
        m = _ITEM.match(line)
        if m:
            off = ls + len(line) - len(line.lstrip(" \t"))
            date_wrap = re.search(r"\d\.\s*$", prev_line) and re.match(r"\s*\d{1,2}\.\s+\d", line)
            if off not in have and not inside[off] and not date_wrap and not _in_sealed(sealed, off):
                num, hangul, paren, bullet = m.group(1), m.group(2), m.group(3), m.group(4)
                if num:
                    marks.append(Mark(off, "item", f"{num}.", LEVEL_ITEM))
                elif hangul:
                    marks.append(Mark(off, "item", f"{hangul}.", LEVEL_SUBITEM))
                elif paren:
                    marks.append(Mark(off, "item", m.group(0).strip(), LEVEL_SUBITEM))
                else:
                    marks.append(Mark(off, "item", bullet, LEVEL_ITEM))
        prev_line = line


def _inline_paragraphs(text: str, marks: list[Mark], sealed: list[tuple[int, int]], inside: bytearray) -> None:
    """Step 3 (:func:`_build_parse`): paragraph marks inside a line added to ``marks``."""
    have = {mk.offset for mk in marks}
    for m in re.finditer(rf"(?<=[ \t])(?:\*\*)?([{PARAGRAPH_MARKS}])(?:\*\*)?(?=[ \t])", text):
        off = m.start()
        if off in have or inside[off] or _in_sealed(sealed, off):
            continue
        before = text[max(0, off - 40):off].rstrip()
        if before and before[-1] in ".>]":
            marks.append(Mark(off, "paragraph", m.group(1), LEVEL_PARAGRAPH))


def _wrap_width(text: str, lines: list[tuple[int, int]], sealed: list[tuple[int, int]]) -> int:
    """The median display width of the lines wide enough to have been wrapped (headings left out)."""
    sealed_starts = {s for s, _ in sealed}
    widths = sorted(w for ls, le in lines
                    if (w := display_width(text[ls:le].strip())) >= MIN_WRAP_WIDTH
                    and ls + len(text[ls:le]) - len(text[ls:le].lstrip()) not in sealed_starts)
    return widths[len(widths) // 2] if widths else 0


def _article_line_ok(text: str, lines: list[tuple[int, int]], i: int, line: str, m: re.Match) -> bool:
    """A ``제N조(제목)`` at a line start opens an article, unless it is a cross-reference that a
    hard wrap happened to put at the line start (``… 에 따른\\n제38조(안전조치) 및 …``)."""
    rest = line[m.end():]
    if rest and not rest[0].isspace():
        return False  # 제2조(정의)에 따른 …
    rest = rest.strip()
    if not rest or _PARA_MARK.match(rest):
        return True
    if _REFERENCE_NEXT.match(rest):
        return False
    # the line before must end a unit (not a hard wrap into this line)
    if i <= 0:
        return True
    ps, pe = lines[i - 1]
    prev = text[ps:pe].rstrip()
    if not prev or prev[-1] in SENTENCE_PUNCT + ">]":
        return True
    return display_width(prev) < MIN_WRAP_WIDTH or display_width(prev) < WRAP_RATIO * display_width(line)


def _in_sealed(sealed: list[tuple[int, int]], off: int) -> bool:
    return any(s < off < e for s, e in sealed)


def _protected(text: str, resets: list[int]) -> bytearray:
    """``inside[p] == 1`` when offset ``p`` lies inside a matched bracket pair (after the opener, up
    to and including the closer's position). Pairs never span a blank line, a form feed or a
    structural line start, and are at most ``_SPAN_LIMIT`` characters apart."""
    n = len(text)
    inside = bytearray(n + 1)
    reset_at = set(resets)
    stack: list[tuple[int, str]] = []
    for i, ch in enumerate(text):
        if i in reset_at or ch == "\f" or (ch == "\n" and blank_follows(text, i)):
            stack.clear()
        if ch in _BRACKETS:
            if ch in "<‹" and (i + 1 >= n or text[i + 1].isspace() or text[i + 1] in "<=-"):
                continue  # "a < b", "<=", "<-": not an opener
            stack.append((i, _BRACKETS[ch]))
            if len(stack) > 64:
                del stack[0]
        elif ch in _CLOSING or ch == ">":
            for k in range(len(stack) - 1, -1, -1):
                o, closer = stack[k]
                limit = _ANGLE_LIMIT if text[o] in "<‹" else _SPAN_LIMIT
                if i - o > limit:
                    continue
                if ch == closer or (text[o] == "‹" and ch == ">"):
                    inside[o + 1:i + 1] = b"\x01" * (i - o)
                    del stack[k:]
                    break
    return inside


def blank_follows(text: str, i: int) -> bool:
    """Whether the newline at ``i`` starts a blank line (only spaces/tabs/CR up to the next newline)."""
    j = i + 1
    n = len(text)
    while j < n and text[j] in " \t\r":
        j += 1
    return j < n and text[j] in "\n\f"


def _states(marks: list[Mark]) -> tuple[tuple[int, ...], tuple[Locator, ...]]:
    """The locator in force after each mark (heading stack, article, paragraph, items)."""
    stack: list[tuple[int, str, str]] = []  # (depth, heading text, article label or "")
    paragraph = item = subitem = ""
    offsets: list[int] = []
    states: list[Locator] = []
    for mk in marks:
        if mk.kind in ("heading", "article"):
            while stack and stack[-1][0] >= mk.depth:
                stack.pop()
            stack.append((mk.depth, mk.heading, mk.label if mk.kind == "article" else ""))
            paragraph = item = subitem = ""
        elif mk.kind == "paragraph":
            paragraph, item, subitem = mk.label, "", ""
        elif mk.kind == "item" and mk.label[:1].isdigit() and mk.label.endswith("."):
            item, subitem = mk.label, ""
        elif mk.kind == "item" and mk.level == LEVEL_SUBITEM and mk.label.endswith(".") and item:
            subitem = mk.label
        else:
            continue
        article = next((a for _, _, a in reversed(stack) if a), "")
        offsets.append(mk.offset)
        states.append(Locator(tuple(h for _, h, _ in stack), article, paragraph, item, subitem))
    return tuple(offsets), tuple(states)


def locator_at(structure: Structure, offset: int) -> Locator:
    """The locator in force at ``offset`` of the text ``structure`` was parsed from."""
    i = bisect.bisect_right(structure.mark_offsets, offset) - 1
    return structure.states[i] if i >= 0 else Locator()


# --------------------------------------------------------------------------- structural position
def locate(text: str, offset: int) -> Locator:
    """The structural position of ``offset`` in ``text``: heading path, article, paragraph, items."""
    return locator_at(parse_structure(text), offset)


_LABEL = re.compile(ko_statute.CITATION_LABEL)


def refine_locator(base: str, text: str, offset: int) -> str:
    """The locator of ``offset`` in a span ``text`` whose start has the locator ``base`` (a chunk's
    locator): e.g. base ``제8조의2제2항`` and an offset in item 2 of the span give
    ``제8조의2제2항제2호``. Structure inside the span wins (an article heading in it, a paragraph mark
    or an item before the offset); a ``base`` that is not a statute label (a heading path) is
    returned as it is."""
    loc = locate(text, offset)
    if loc.article:
        return loc.label
    m = _LABEL.match(base.split("~")[0])
    if not m:
        return base
    circled = _circled_char(int(m.group(2))) if m.group(2) else ""
    item = f"{m.group(3)}" + (f"{ko_statute.ITEM_SUB}{m.group(4)}" if m.group(4) else "") + "." if m.group(3) else ""
    subitem = f"{m.group(5)}." if m.group(5) else ""
    if loc.paragraph:
        circled, item, subitem = loc.paragraph, loc.item, loc.subitem
    elif loc.item:
        item, subitem = loc.item, loc.subitem
    elif loc.subitem:
        subitem = loc.subitem
    return Locator(loc.path, m.group(1), circled, item, subitem).label


def has_structure(text: str) -> bool:
    """Whether ``text`` has headings or statute articles (sections that chunks can follow)."""
    return any(mk.kind in ("heading", "article") for mk in parse_structure(text).marks)
