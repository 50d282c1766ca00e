"""Sentence splitting and ``[S#]`` citation markers.

Shared by the extractive generator and the validator, so that a sentence the generator
picks is exactly one sentence to the validator too. The units come from the structure-aware
segmenter (:mod:`rag.text.segment`), which chunking and context truncation use as well:

- a boundary follows ``. ! ? … 。 ！ ？`` (plus closing quotes/brackets and any ``[S#]``
  markers right after them) when whitespace or the end of text follows;
- Korean written without a space after the period (``했다.그리고``) is split too;
- no split inside brackets, numbers and dates (``2024. 6. 28.``, ``3.5``), after common English
  abbreviations and initials (``e.g.``, ``Dr.``, ``K.``), after an enumerator, or before a
  lowercase word;
- statute paragraph marks (``①``), line-start items (``1.``, ``1\\.``, ``가.``) and markdown
  headings start new units; amendment notes (``<개정 …>``) stay with the sentence before them;
- blank lines always end a sentence; a single newline inside a sentence is a hard wrap and not a
  boundary (the text stays verbatim: offsets span the newline), unless ``newlines=True``
  (answers, where a line is usually a list item).
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from rag.text.segment import MARKER_PATTERN, is_enumerator, is_note, segment

__all__ = ["MARKER", "MARKER_PATTERN", "Sentence", "answer_sentences", "marker_ids", "split_sentences",
           "strip_markers"]

MARKER = re.compile(MARKER_PATTERN)
_WORDCHAR = re.compile(r"[^\W_]")


@dataclass(frozen=True)
class Sentence:
    """One sentence: ``text == source[start:end]`` (stripped of surrounding whitespace)."""

    text: str
    start: int
    end: int


@lru_cache(maxsize=20_000)
def split_sentences(text: str, newlines: bool = False) -> tuple[Sentence, ...]:
    """Split ``text`` into sentences with offsets into ``text`` (cached per text)."""
    return tuple(Sentence(s.text, s.start, s.end) for s in segment(text, newlines))


def answer_sentences(answer: str) -> tuple[Sentence, ...]:
    """Sentences of an answer (every line ends a sentence). A fragment that is only an
    enumerator (``1.``, ``②``, ``-``) joins the sentence after it; one that is only markers, notes
    or punctuation joins the sentence before it, so no marker-less fragment is left over."""
    merged: list[Sentence] = []
    pending = -1  # start of enumerator-only fragments waiting for the next sentence
    for s in split_sentences(answer, newlines=True):
        core = MARKER.sub("", s.text)
        if is_enumerator(core) and not MARKER.search(s.text):
            pending = s.start if pending < 0 else pending
            continue
        start = pending if pending >= 0 else s.start
        pending = -1
        if merged and (not _WORDCHAR.search(core) or is_note(core) or is_enumerator(core)):
            prev = merged[-1]
            merged[-1] = Sentence(answer[prev.start:s.end], prev.start, s.end)
        else:
            merged.append(Sentence(answer[start:s.end], start, s.end))
    if pending >= 0:
        tail = answer[pending:].rstrip()
        end = pending + len(tail)
        if merged:
            prev = merged[-1]
            merged[-1] = Sentence(answer[prev.start:end], prev.start, end)
        else:
            merged.append(Sentence(tail, pending, end))
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
