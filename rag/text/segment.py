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

:func:`locate` gives the structural position of an offset (heading path, article, paragraph,
item) and :func:`safe_cuts` the offsets where a text may be truncated. Results are cached per
text.
"""
from __future__ import annotations

import bisect
import logging
import re
import unicodedata
from dataclasses import dataclass
from functools import lru_cache
from typing import Literal

from rag.text.lang import HANGUL_SYLLABLE

logger = logging.getLogger(__name__)

SegmentKind = Literal["heading", "article", "paragraph", "item", "note", "sentence"]
CutLevel = Literal["sentence", "clause", "word"]

# A citation marker: [S1], [s 2], [S1, S3], [S1; 4]. The one definition of the pattern
# (re-exported by rag.text.sentences).
MARKER_PATTERN = r"\[\s*[Ss]\s*\d+(?:\s*[,;]\s*[Ss]?\s*\d+)*\s*\]"
_MARKER_RUN = rf"(?:\s*{MARKER_PATTERN})*"
_MARKERS_AFTER = re.compile(_MARKER_RUN)
_CLOSERS = "\"'”’»)\\]}」』〉》"
_SENT_PUNCT = ".!?…。！？"
_BOUNDARY = re.compile(r"(?:[.!?…]+|[。！？]+)[" + re.escape(_CLOSERS) + r"]*" + _MARKER_RUN)
_PUNCT_CLOSED = re.compile(rf"[{re.escape(_SENT_PUNCT)}][{re.escape(_CLOSERS)}]+$")  # 'odd.)' at a line end
_DATE_END = re.compile(r"\d{2,4}\.\s?\d{1,2}\.\s?\d{1,2}$")  # "2024. 6. 28" before the final period
_WORDCHAR = re.compile(r"[^\W_]")
_ABBREVIATIONS = frozenset({
    "e.g", "i.e", "vs", "etc", "al", "fig", "figs", "eq", "eqs", "dr", "mr", "mrs", "ms", "prof", "no", "nos",
    "vol", "vols", "approx", "cf", "st", "jr", "sr", "inc", "ltd", "co", "corp", "dept", "est", "min", "max",
    "ca", "resp", "u.s", "u.k", "ph.d", "a.m", "p.m", "jan", "feb", "mar", "apr", "jun", "jul", "aug", "sep",
    "sept", "oct", "nov", "dec",
})

# Paragraph marks ①..⑳, ㉑..㉟, ㊱..㊿.
_CIRCLED = "\u2460-\u2473\u3251-\u325f\u32b1-\u32bf"
_ENUM_HANGUL = "가나다라마바사아자차카타파하"

# Line-start structure (matched against one line, without its newline).
_MD_HEADING = re.compile(r"[ ]{0,3}(#{1,6})[ \t]+(\S[^\n\f]*?)(?:[ \t]+#+)?[ \t\r]*$")
_ARTICLE_LABEL = re.compile(r"제\s*(\d+)\s*조(?:\s*의\s*(\d+))?")
_PART_LABEL = re.compile(r"제\s*(\d+)\s*(편|장|절|관)(?:\s*의\s*(\d+))?")
_PART_LINE = re.compile(r"[ \t]*(제\s*\d+\s*(?:편|장|절|관)(?:\s*의\s*\d+)?)(?:[ \t]+([^\n\f]*?))?[ \t\r]*$")
_ARTICLE_LINE = re.compile(r"[ \t]*(제\s*\d+\s*조(?:\s*의\s*\d+)?)[ \t]*(\((?:[^()\n\f]|\([^()\n\f]*\)){1,100}\))")
_PARA_MARK = re.compile(rf"[ \t]*(?:\*\*([{_CIRCLED}])\*\*|([{_CIRCLED}]))(?=[ \t\r]|$)")
_ITEM = re.compile(
    rf"[ \t]*(?:(\d{{1,3}}(?:의\d{{1,2}})?)\\?\.|([{_ENUM_HANGUL}])\\?\.|\(?(\d{{1,2}}|[{_ENUM_HANGUL}])\)"
    r"|([-*+•○●◦▪■□※]))(?=[ \t\r]|$)"
)
_HARD_LINE = re.compile(r"[ \t]*(?:\||```|~~~)")  # table rows and code fences: one unit per line
# An amendment note: <개정 2024. 6. 28.>, ‹신설 …›, 〈…〉, <2021.5.25>, [본조신설 …], [유효기간 …]. The one
# definition: the facts windows and the extractive generator's answer text use it too (NOTE).
_NOTE = re.compile(
    r"[<‹〈]\s*(?:개정|신설|삭제|전문개정|제목개정|본조신설|타법개정|종전|시행일|\d{4}\s*\.)[^<>‹›〈〉\f]{0,300}[>›〉]"
    r"|\[\s*(?:본조|제목개정|전문개정|제목신설|종전|시행일|한시법|제목변경|신설|개정|타법개정|유효기간)"
    r"[^\[\]\f]{0,300}\]"
)
NOTE = _NOTE
_NOTE_END = re.compile(rf"(?:{_NOTE.pattern})$")
_NOTE_ONLY = re.compile(rf"(?:\s|[.,;:]|{_NOTE.pattern})*")
_ENUM_ONLY = re.compile(
    rf"(?:\*\*)?(?:\d{{1,3}}(?:의\d{{1,2}})?\\?\.|[{_ENUM_HANGUL}]\\?\.|\(?(?:\d{{1,2}}|[{_ENUM_HANGUL}])\)"
    rf"|[{_CIRCLED}]|[-*+•○●◦▪■□※])(?:\*\*)?"
)
_REFERENCE_NEXT = re.compile(r"(?:및|또는|내지|부터|까지|에서|에|의|와|과|ㆍ|·|,)(?:\s|$)")

_BRACKETS = {"(": ")", "[": "]", "{": "}", "<": ">", "‹": "›", "「": "」", "『": "』", "“": "”", "‘": "’",
             "〈": "〉", "《": "》", "（": "）", "［": "］", "【": "】", "〔": "〕", "｛": "｝"}
_CLOSING = frozenset(_BRACKETS.values())
_SPAN_LIMIT = 800  # a bracket pair further apart than this is not treated as one span
_ANGLE_LIMIT = 240
_MIN_WRAP_WIDTH = 24  # a line narrower than this (display columns) is never a hard wrap
_WRAP_RATIO = 0.7  # a hard-wrapped line is at least this wide relative to its neighbours

_LEVEL_SECTION, _LEVEL_PARAGRAPH, _LEVEL_ITEM, _LEVEL_SUBITEM, _LEVEL_CONTINUE = 0, 1, 2, 3, 4


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
    level: int = _LEVEL_CONTINUE


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
            out += f"제{_circled_number(self.paragraph)}항"
        if self.item:
            num, _, sub = self.item.rstrip(".").partition("의")
            out += f"제{num}호" + (f"의{sub}" if sub else "")
        if self.subitem:
            out += f"{self.subitem.rstrip('.')}목"
        return out

    def describe(self, separator: str = " > ") -> str:
        """The statute label if there is one, else the heading path joined with ``separator``."""
        return self.label or separator.join(self.path)


@dataclass(frozen=True)
class _Mark:
    """A structural start found by the line scan."""

    offset: int
    kind: SegmentKind
    label: str
    level: int
    heading: str = ""  # text for the heading path (headings and articles)
    depth: int = 0  # nesting depth for the heading stack (headings and articles)
    end: int = -1  # for headings/articles: where the unit ends (line end / title end)


@dataclass(frozen=True)
class _Parse:
    inside: bytes  # inside[p] == 1: a cut at offset p would fall inside a bracket pair
    wrap_width: float  # typical width of a hard-wrapped line (median of the wide lines), 0 if none
    marks: tuple[_Mark, ...]
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


def _is_hangul(ch: str) -> bool:
    return bool(ch) and HANGUL_SYLLABLE.match(ch) is not None


def _width(s: str) -> int:
    return sum(2 if unicodedata.east_asian_width(c) in "WF" else 1 for c in s)


def _article_label(s: str) -> str:
    m = _ARTICLE_LABEL.match(s)
    return f"제{m.group(1)}조" + (f"의{m.group(2)}" if m.group(2) else "") if m else ""


def _part_label(s: str) -> str:
    m = _PART_LABEL.match(s)
    return f"제{m.group(1)}{m.group(2)}" + (f"의{m.group(3)}" if m.group(3) else "") if m else ""


def _heading_text(s: str) -> str:
    """Heading text for a path: notes removed, whitespace collapsed."""
    return " ".join(_NOTE.sub(" ", s).split())


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
_SMALL_TEXT = 20_000


def _parse(text: str) -> _Parse:
    return _parse_small(text) if len(text) <= _SMALL_TEXT else _parse_large(text)


@lru_cache(maxsize=2048)
def _parse_small(text: str) -> _Parse:
    return _build_parse(text)


@lru_cache(maxsize=8)
def _parse_large(text: str) -> _Parse:
    return _build_parse(text)


def _build_parse(text: str) -> _Parse:
    lines = _lines(text)
    marks: list[_Mark] = []
    sealed: list[tuple[int, int]] = []
    strong_resets: list[int] = []

    # 1. unambiguous line starts: headings, articles, paragraph marks, table rows / fences
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
            marks.append(_Mark(ls + m.start(1), kind, label, _LEVEL_SECTION, _heading_text(body), len(m.group(1)),
                               end))
            sealed.append((ls + m.start(1), end))
            strong_resets.append(ls)
            continue
        m = _PART_LINE.match(line)
        if m and not re.search(r"[.!?。]", _NOTE.sub("", m.group(2) or "")) and len(line.strip()) <= 80:
            pl = _PART_LABEL.match(m.group(1))
            label, depth = _part_label(m.group(1)), {"편": 1, "장": 2, "절": 3, "관": 4}[pl.group(2)]
            end = ls + len(line.rstrip())
            marks.append(_Mark(ls + m.start(1), "heading", label, _LEVEL_SECTION, _heading_text(line), depth, end))
            sealed.append((ls + m.start(1), end))
            strong_resets.append(ls)
            continue
        m = _ARTICLE_LINE.match(line)
        if m and _article_line_ok(text, lines, li, line, m):
            start, end = ls + m.start(1), ls + m.end(2)
            marks.append(_Mark(start, "article", _article_label(m.group(1)), _LEVEL_SECTION,
                               " ".join(text[start:end].split()), 5, end))
            sealed.append((start, end))
            strong_resets.append(ls)
            pm = _PARA_MARK.match(line, m.end())
            if pm:
                off = ls + pm.start() + len(pm.group(0)) - len(pm.group(0).lstrip(" \t"))
                marks.append(_Mark(off, "paragraph", pm.group(1) or pm.group(2), _LEVEL_PARAGRAPH))
            continue
        pm = _PARA_MARK.match(line)
        if pm:
            off = ls + len(pm.group(0)) - len(pm.group(0).lstrip(" \t"))
            marks.append(_Mark(off, "paragraph", pm.group(1) or pm.group(2), _LEVEL_PARAGRAPH))
            strong_resets.append(ls)
            continue
        hm = _HARD_LINE.match(line)
        if hm:
            start = ls + len(line) - len(line.lstrip())
            marks.append(_Mark(start, "sentence", "", _LEVEL_PARAGRAPH, end=ls + len(line.rstrip())))
            sealed.append((start, ls + len(line.rstrip())))

    inside = _protected(text, strong_resets)

    # 2. line starts that need the bracket map: items (a wrapped date "2017. 3.\n3.>" is no item)
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
                    marks.append(_Mark(off, "item", f"{num}.", _LEVEL_ITEM))
                elif hangul:
                    marks.append(_Mark(off, "item", f"{hangul}.", _LEVEL_SUBITEM))
                elif paren:
                    marks.append(_Mark(off, "item", m.group(0).strip(), _LEVEL_SUBITEM))
                else:
                    marks.append(_Mark(off, "item", bullet, _LEVEL_ITEM))
        prev_line = line

    # 3. paragraph marks inside a line, after the end of a sentence ("… 한다. ② 사업주는")
    have = {mk.offset for mk in marks}
    for m in re.finditer(rf"(?<=[ \t])(?:\*\*)?([{_CIRCLED}])(?:\*\*)?(?=[ \t])", text):
        off = m.start()
        if off in have or inside[off] or _in_sealed(sealed, off):
            continue
        before = text[max(0, off - 40):off].rstrip()
        if before and before[-1] in ".>]":
            marks.append(_Mark(off, "paragraph", m.group(1), _LEVEL_PARAGRAPH))

    marks.sort(key=lambda mk: mk.offset)
    offsets, states = _states(marks)
    sealed_starts = {s for s, _ in sealed}
    widths = sorted(w for ls, le in lines
                    if (w := _width(text[ls:le].strip())) >= _MIN_WRAP_WIDTH
                    and ls + len(text[ls:le]) - len(text[ls:le].lstrip()) not in sealed_starts)
    wrap_width = widths[len(widths) // 2] if widths else 0
    return _Parse(bytes(inside), wrap_width, tuple(marks), tuple(sorted(sealed)), offsets, states)


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
    if not prev or prev[-1] in _SENT_PUNCT + ">]":
        return True
    return _width(prev) < _MIN_WRAP_WIDTH or _width(prev) < _WRAP_RATIO * _width(line)


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
        if i in reset_at or ch == "\f" or (ch == "\n" and _blank_follows(text, i)):
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


def _blank_follows(text: str, i: int) -> bool:
    """Whether the newline at ``i`` starts a blank line (only spaces/tabs/CR up to the next newline)."""
    j = i + 1
    n = len(text)
    while j < n and text[j] in " \t\r":
        j += 1
    return j < n and text[j] in "\n\f"


def _states(marks: list[_Mark]) -> tuple[tuple[int, ...], tuple[Locator, ...]]:
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
        elif mk.kind == "item" and mk.level == _LEVEL_SUBITEM and mk.label.endswith(".") and item:
            subitem = mk.label
        else:
            continue
        article = next((a for _, _, a in reversed(stack) if a), "")
        offsets.append(mk.offset)
        states.append(Locator(tuple(h for _, h, _ in stack), article, paragraph, item, subitem))
    return tuple(offsets), tuple(states)


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
    if c in _SENT_PUNCT + ":>)]」』":
        return True  # "… 같다. 1. 첫째", "<개정 …> 1. 작업장소는"
    return _is_hangul(c) and _is_hangul(nxt)  # "위험성 2. 측정" (Korean running enumeration)


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
        return _is_hangul(before) and (_is_hangul(nxt) or nxt.isupper())
    k = end
    n = len(text)
    while k < n and text[k].isspace():
        k += 1
    if k >= n:
        return True
    nxt = text[k]
    if punct[0] == "." and punct.rstrip(_SENT_PUNCT) == "":  # "3.]" / "28.>": a closer ended the date
        window = text[max(0, m.start() - 48):m.start()]
        word = re.search(r"(\S+)$", window)
        w = word.group(1).lower().lstrip("(\"'“‘") if word else ""
        w_plain = w.rstrip("\\")
        if w in _ABBREVIATIONS or (len(w) == 1 and w.isalpha() and w.isascii()):
            return False  # e.g. / Dr. / initials
        if w_plain[-1:].isdigit():
            if nxt.isdigit() or _DATE_END.search(window):
                return False  # 2024. 6. 28.
            if re.fullmatch(r"\d{1,3}(?:의\d{1,2})?", w_plain):
                word_start = m.start() - len(word.group(1)) if word else m.start()
                if _enumerator_context(text, word_start, nxt):
                    return False  # "1. 밀폐공간의 위험성", "<개정 …> 1. 작업장소는"
        if len(w_plain) == 1 and w_plain in _ENUM_HANGUL:
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
    if last in _SENT_PUNCT or _PUNCT_CLOSED.search(line):
        return False  # the punctuation rule decides (a date "6.\n28." must not end here)
    if _NOTE_END.search(line[-240:]):
        return True  # a line ending in a complete note ends its unit
    if last == ",":
        return False
    w = _width(line)
    if w < _MIN_WRAP_WIDTH:
        return True
    return w < _WRAP_RATIO * max(_width(nxt_line), wrap_width)  # a title line, not a wrapped one


# --------------------------------------------------------------------------- segmenting
def _segments(text: str, newlines: bool) -> tuple[Segment, ...]:
    return _segments_small(text, newlines) if len(text) <= _SMALL_TEXT else _segments_large(text, newlines)


@lru_cache(maxsize=20_000)
def _segments_small(text: str, newlines: bool) -> tuple[Segment, ...]:
    return _build_segments(text, newlines)


@lru_cache(maxsize=8)
def _segments_large(text: str, newlines: bool) -> tuple[Segment, ...]:
    return _build_segments(text, newlines)


def _build_segments(text: str, newlines: bool) -> tuple[Segment, ...]:
    if not text.strip():
        return ()
    parse = _parse(text)
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
    for m in _NOTE.finditer(text):
        c = m.start()
        while c > 0 and text[c - 1] in " \t\r\n" and not _blank_follows(text, c - 1):
            c -= 1
        if c in ends and m.start() not in mark_at:
            ends.discard(c)
            ends.add(_MARKERS_AFTER.match(text, m.end()).end())  # "<개정 …> [S1]": the markers come along
    cuts |= ends
    # single newlines: hard wraps stay inside a unit
    line_start = 0
    for m in re.finditer(r"[\n\f]", text):
        p = m.start()
        if m.group(0) == "\n" and not _blank_follows(text, p) and text[line_start:p].strip():
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


def _describe(text: str, parse: _Parse, pieces: list[tuple[int, int]]) -> list[Segment]:
    by_offset = {mk.offset: mk for mk in parse.marks}
    out: list[Segment] = []
    prev_end = 0
    prev_kind = ""
    for s, e in pieces:
        mk = by_offset.get(s)
        loc = _locate(parse, s)
        body = text[s:e]
        if mk is not None:
            kind, label, level = mk.kind, mk.label, mk.level
        else:
            kind, label = ("note" if _NOTE_ONLY.fullmatch(body) else "sentence"), ""
            level = _LEVEL_PARAGRAPH if (not out or _blank_between(text, prev_end, s)
                                         or prev_kind in ("heading", "article")) else _LEVEL_CONTINUE
        out.append(Segment(body, s, e, kind, label, loc.path, level))
        prev_end, prev_kind = e, kind
    return out


def _locate(parse: _Parse, offset: int) -> Locator:
    i = bisect.bisect_right(parse.mark_offsets, offset) - 1
    return parse.states[i] if i >= 0 else Locator()


# --------------------------------------------------------------------------- public API
def segment(text: str, newlines: bool = False) -> tuple[Segment, ...]:
    """Structure-aware units of ``text`` in order (cached per text). ``newlines=True`` makes every
    newline end a unit (answers)."""
    return _segments(text, newlines)


def locate(text: str, offset: int) -> Locator:
    """The structural position of ``offset`` in ``text``: heading path, article, paragraph, items."""
    return _locate(_parse(text), offset)


_LABEL = re.compile(r"(제\d+조(?:의\d+)?)(?:제(\d+)항)?(?:제(\d+)호(?:의(\d+))?)?(?:([가-하])목)?")


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
    item = f"{m.group(3)}" + (f"의{m.group(4)}" if m.group(4) else "") + "." if m.group(3) else ""
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
    return any(mk.kind in ("heading", "article") for mk in _parse(text).marks)


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
    return _safe_cuts(text, level) if len(text) <= _SMALL_TEXT else _build_safe_cuts(text, level)


@lru_cache(maxsize=4096)
def _safe_cuts(text: str, level: CutLevel) -> tuple[int, ...]:
    return _build_safe_cuts(text, level)


def _build_safe_cuts(text: str, level: CutLevel) -> tuple[int, ...]:
    cuts = {s.end for s in _segments(text, False)}
    if level == "sentence":
        return tuple(sorted(c for c in cuts if 0 < c <= len(text)))
    inside = _parse(text).inside
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
    return _ENUM_ONLY.fullmatch(w) is not None or re.fullmatch(r"제\d+(?:조|항|호)(?:의\d+)?", w) is not None
