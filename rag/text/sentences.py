"""Sentence splitting and ``[S#]`` citation markers.

Shared by the extractive generator and the validator, so that a sentence the generator
picks is exactly one sentence to the validator too.

Sentence rules (Korean and English):

- a boundary follows ``. ! ? … 。 ！ ？`` (plus closing quotes/brackets and any ``[S#]``
  markers right after them) when whitespace or the end of text follows;
- Korean written without a space after the period (``했다.그리고``) is split too;
- no split inside numbers and dates (``2024. 6. 28.``, ``3.5``), after common English
  abbreviations and initials (``e.g.``, ``Dr.``, ``K.``), or before a lowercase word;
- blank lines always end a sentence; single newlines do too when ``newlines=True``
  (answers, where a line is usually a list item).
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from rag.text.lang import HANGUL_SYLLABLE

# A citation marker: [S1], [s 2], [S1, S3], [S1; 4]. The one definition of the pattern.
MARKER_PATTERN = r"\[\s*[Ss]\s*\d+(?:\s*[,;]\s*[Ss]?\s*\d+)*\s*\]"
MARKER = re.compile(MARKER_PATTERN)
_MARKER_RUN = rf"(?:\s*{MARKER_PATTERN})*"
_CLOSERS = "\"'”’»)\\]}」』〉》"
_BOUNDARY = re.compile(r"(?:[.!?…]+|[。！？]+)[" + re.escape(_CLOSERS) + r"]*" + _MARKER_RUN)
_DATE_END = re.compile(r"\d{2,4}\.\s?\d{1,2}\.\s?\d{1,2}$")  # "2024. 6. 28" before the final period
_WORDCHAR = re.compile(r"[^\W_]")
_ABBREVIATIONS = frozenset({
    "e.g", "i.e", "vs", "etc", "al", "fig", "figs", "eq", "eqs", "dr", "mr", "mrs", "ms", "prof", "no", "nos",
    "vol", "vols", "approx", "cf", "st", "jr", "sr", "inc", "ltd", "co", "corp", "dept", "est", "min", "max",
    "ca", "resp", "u.s", "u.k", "ph.d", "a.m", "p.m", "jan", "feb", "mar", "apr", "jun", "jul", "aug", "sep",
    "sept", "oct", "nov", "dec",
})


@dataclass(frozen=True)
class Sentence:
    """One sentence: ``text == source[start:end]`` (stripped of surrounding whitespace)."""

    text: str
    start: int
    end: int


def _is_boundary(text: str, m: re.Match) -> bool:
    end = m.end()
    punct = m.group(0)
    if end >= len(text):
        return True
    nxt = text[end]
    if punct[0] in "。！？" or "[" in punct:
        return True  # full-width ends, and a citation marker after the punctuation, always close a sentence
    if not nxt.isspace():
        # Korean without a space: 다.그리고 / 요?네
        before = text[m.start() - 1] if m.start() > 0 else ""
        return bool(HANGUL_SYLLABLE.match(before)) and (bool(HANGUL_SYLLABLE.match(nxt)) or nxt.isupper())
    rest = text[end:].lstrip(" \t")
    if not rest or rest[0] == "\n":
        return True
    if punct[0] == ".":
        before = text[:m.start()]
        word = re.search(r"(\S+)$", before)
        w = word.group(1).lower().lstrip("(\"'") if word else ""
        if w in _ABBREVIATIONS or (len(w) == 1 and w.isalpha() and w.isascii()):
            return False  # e.g. / Dr. / initials
        if before[-1:].isdigit() and (rest[0].isdigit() or _DATE_END.search(before)):
            return False  # 2024. 6. 28.
        if word and w.isdigit() and len(w) <= 3 and (word.start() == 0 or before[word.start() - 1] == "\n"):
            return False  # a list enumerator at the start of a line: "1. 밀폐공간의 위험성"
    return not (rest[0].islower() and rest[0].isascii())  # no split before "and" in "etc. and"


@lru_cache(maxsize=20_000)
def split_sentences(text: str, newlines: bool = False) -> tuple[Sentence, ...]:
    """Split ``text`` into sentences with offsets into ``text`` (cached per text)."""
    cuts: set[int] = set()
    for m in _BOUNDARY.finditer(text):
        if _is_boundary(text, m):
            cuts.add(m.end())
    for m in re.finditer(r"\n\s*\n" if not newlines else r"\n", text):
        cuts.add(m.start())
    out: list[Sentence] = []
    pos = 0
    for cut in sorted(cuts) + [len(text)]:
        if cut <= pos:
            continue
        piece = text[pos:cut]
        lead = len(piece) - len(piece.lstrip())
        body = piece.strip()
        if body:
            out.append(Sentence(body, pos + lead, pos + lead + len(body)))
        pos = cut
    return tuple(out)


def answer_sentences(answer: str) -> tuple[Sentence, ...]:
    """Sentences of an answer; a fragment made only of markers or punctuation joins the sentence before it."""
    merged: list[Sentence] = []
    for s in split_sentences(answer, newlines=True):
        if merged and not _WORDCHAR.search(MARKER.sub("", s.text)):
            prev = merged[-1]
            merged[-1] = Sentence(answer[prev.start:s.end], prev.start, s.end)
        else:
            merged.append(s)
    return tuple(m for m in merged if _WORDCHAR.search(MARKER.sub("", m.text)))


def marker_ids(text: str) -> tuple[str, ...]:
    """Source ids named by ``[S#]`` markers in ``text``, in order of appearance, without repeats."""
    seen: dict[str, None] = {}
    for m in MARKER.finditer(text):
        for d in re.findall(r"\d+", m.group(0)):
            seen.setdefault(f"S{int(d)}", None)
    return tuple(seen)


def strip_markers(text: str) -> str:
    return " ".join(MARKER.sub(" ", text).split())
