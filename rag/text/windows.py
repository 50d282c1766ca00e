"""Clauses and evidence windows: the spans of a source text a claim clause is aligned with.

:func:`split_clauses` cuts a text into clauses (sentences, cut again after connective endings);
:func:`evidence_windows` gives the windows of one evidence text (a sentence, two adjacent sentences of
a paragraph, a list item with the sentence that announces the list, a table row with that sentence and
the table's header), each with its content terms, its clauses (with their polarity,
:func:`rag.text.polarity.clause_polarity`) and the quantities that lie in it. ``evidence`` is one text
or a tuple of texts (:data:`EvidenceText`: the blocks a sentence cites; a window never spans two of
them). :func:`clause_support` is the clause-aligned lexical support built on them; the quantity and
polarity checks of :mod:`rag.text.facts` align with the same windows. Cached per text
(:func:`rag.text.facts.clear_caches` empties the caches).
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from rag.lang import HANGUL_SYLLABLES
from rag.lang.ko import segments as ko_segments
from rag.text.lexical import content_terms
from rag.text.polarity import clause_polarity, clean_clause, strip_brackets
from rag.text.quantities import extract_quantities, normalize_facts
from rag.text.segment import segment
from rag.text.sentences import strip_markers
from rag.text.structure import NOTE
from rag.text.units import Quantity

__all__ = ["EvidenceClause", "EvidenceText", "Window", "aligned_windows", "clause_support", "coverage",
           "evidence_sentences", "evidence_windows", "split_clauses", "text_terms", "window_score", "windows_of"]

EvidenceText = str | tuple[str, ...]  # one text, or the texts of several cited blocks

# clause ends: a connective ending before a comma (하며, / 하고, / 하되, / 하나,), 며 before a space, or ';'
_CLAUSE_CUT = re.compile(ko_segments.CLAUSE_CUTS + r"|;\s*"
                         r"|(?<=[a-z0-9)]),\s+(?=(?:and|but|or|while|whereas|although|though)\s)|\s+(?=(?:but|whereas)\s)")
_ITEM = re.compile(r"^\s*(?:\d{1,3}|" + ko_segments.ITEM_LETTER + r")\s?\\?\.\s")
_LETTER = re.compile(f"[{HANGUL_SYLLABLES}A-Za-z]")


def text_terms(text: str) -> frozenset[str]:
    """``content_terms(text)``, built word by word: content_terms caches each word, and statute text
    repeats its words, so a long evidence text costs far less than one call on the whole of it."""
    words = text.split()
    return frozenset().union(*map(content_terms, words)) if words else frozenset()


def _cut_clauses(sentence: str) -> list[str]:
    """Clauses of one sentence; never cut inside brackets ("(…는 제외하되, …는 포함한다)")."""
    masked = _BRACKETED.sub(lambda m: "_" * len(m.group(0)), sentence) if "(" in sentence or "[" in sentence \
        else sentence
    out, pos = [], 0
    for m in _CLAUSE_CUT.finditer(masked):
        out.append(sentence[pos:m.start()])
        pos = m.end()
    out.append(sentence[pos:])
    return [p for p in (x.strip(" ,") for x in out) if p and _LETTER.search(p)]


@lru_cache(maxsize=20_000)
def split_clauses(text: str) -> tuple[str, ...]:
    """Clauses of ``text``: sentences, cut again after connective endings (``…하며,``, ``…하되,``, ``…고,``).
    Amendment notes (``<개정 …>``) are no clause: they state no rule."""
    out: list[str] = []
    text = NOTE.sub(" ", strip_markers(text) if "[" in text else text)
    for line in text.split("\n"):
        for s in evidence_sentences(line):
            out.extend(_cut_clauses(s))
    return tuple(out)


@dataclass(frozen=True)
class EvidenceClause:
    """One clause of an evidence window, with its terms and its final predicate's polarity
    (:func:`rag.text.polarity.clause_polarity`: sign, bound, head)."""

    text: str
    terms: frozenset[str]
    sign: int | None
    bound: bool
    head: str


@dataclass(frozen=True)
class Window:
    """A span of evidence a claim clause can be aligned with: one sentence, two adjacent sentences of a
    paragraph, a list item with the sentence that introduces it, or a table row with that sentence and
    the table's header."""

    text: str
    terms: frozenset[str]
    main_terms: frozenset[str]  # the terms outside brackets (an exception such as "(서울특별시는 제외한다)")
    clauses: tuple[EvidenceClause, ...]
    quantities: tuple[Quantity, ...]  # the evidence's quantities that lie in this window


@dataclass(frozen=True)
class _Piece:
    text: str
    terms: frozenset[str]
    main_terms: frozenset[str]
    clauses: tuple[EvidenceClause, ...]
    spans: tuple[tuple[int, int], ...]  # offsets into normalize_facts(evidence)

    def __add__(self, other: _Piece) -> _Piece:
        return _Piece(f"{self.text} {other.text}", self.terms | other.terms, self.main_terms | other.main_terms,
                      self.clauses + other.clauses, self.spans + other.spans)


_BRACKETED = re.compile(r"\([^()]*\)|\[[^\[\]]*\]|「[^「」]*」")
# a sentence end inside evidence: a period after a Hangul syllable or a closing bracket, or after a word
# of English before a capital letter (evidence units only: answers use rag.text.sentences)
_UNIT_END = re.compile(rf"(?<=[{HANGUL_SYLLABLES})\]][.?!])\s+|(?<=[.?!][\"'”’])\s+"
                       rf"|(?<=[a-z0-9%][.?!])\s+(?=[A-Z{HANGUL_SYLLABLES}\"“(])|"
                       r"(?<=[。！？])\s*")


def _sentence_spans(line: str) -> list[tuple[int, int]]:
    """Sentences of one evidence line as offsets, never cut inside brackets (a definition in parentheses
    may end in '다.')."""
    masked = _BRACKETED.sub(lambda m: m.group(0).replace(".", "\u2024").replace("?", "\u2024"), line)
    cuts, pos = [], 0
    for m in _UNIT_END.finditer(masked):
        cuts.append((pos, m.start()))
        pos = m.end()
    cuts.append((pos, len(line)))
    out = []
    for a, b in cuts:
        seg = line[a:b]
        a2, b2 = a + len(seg) - len(seg.lstrip()), b - (len(seg) - len(seg.rstrip()))
        if b2 > a2:
            out.append((a2, b2))
    return out


def evidence_sentences(line: str) -> list[str]:
    return [line[a:b] for a, b in _sentence_spans(line)]


def _piece(text: str, start: int, end: int) -> _Piece:
    clauses = tuple(EvidenceClause(c, text_terms(c), *clause_polarity(c))
                    for sentence in evidence_sentences(clean_clause(text)) for c in _cut_clauses(sentence))
    return _Piece(text, text_terms(text), text_terms(_outside_brackets(text)), clauses, ((start, end),))


def _outside_brackets(text: str) -> str:
    return strip_brackets(text, " ")


_ANNOUNCES = re.compile(ko_segments.ANNOUNCING_WORDS + r"|(?i:following|as follows|below)|:$")
_TABLE_ROW = re.compile(r"[│|┃]")
_WORDCHAR = re.compile(r"[^\W_]")


def _unwrapped(t: str) -> str:
    """``t`` with hard wraps (a newline inside one segment of the shared segmenter, as in
    "일산화탄\n소의") turned into spaces, so a wrapped item or sentence stays one unit; table lines
    keep their newlines. Same length as ``t``."""
    if "\n" not in t:
        return t
    chars = list(t)
    for seg in segment(t):
        for i in range(seg.start, seg.end):
            if chars[i] == "\n":
                before = t.rfind("\n", 0, i) + 1
                after = t.find("\n", i + 1)
                lines = (t[before:i], t[i + 1:after if after >= 0 else len(t)])
                if not any(_TABLE_ROW.search(x) or x.lstrip().startswith(("#", "|")) for x in lines):
                    chars[i] = " "
    return "".join(chars)


def _units(t: str) -> list[tuple[int, str, _Piece]]:
    """(paragraph index, kind, piece) of every sentence, list item (text | item | row) of normalised text."""
    masked = NOTE.sub(lambda m: " " * len(m.group(0)), _unwrapped(t))
    units: list[tuple[int, str, _Piece]] = []
    pi, pos, blank = 0, 0, False
    for line in masked.split("\n"):
        start, pos = pos, pos + len(line) + 1
        if not line.strip():
            blank = True
            continue
        if blank and units:
            pi += 1
        blank = False
        if not _WORDCHAR.search(line) or line.lstrip().startswith("#"):
            continue  # a table border or a heading
        lead = len(line) - len(line.lstrip())
        if _TABLE_ROW.search(line):
            units.append((pi, "row", _piece(" ".join(_TABLE_ROW.sub(" ", line).split()), start, start + len(line))))
        elif _ITEM.match(line):
            units.append((pi, "item", _piece(line.strip(), start + lead, start + len(line.rstrip()))))
        else:
            units.extend((pi, "text", _piece(line[a:b], start + a, start + b)) for a, b in _sentence_spans(line))
    return units


@lru_cache(maxsize=5_000)
def evidence_windows(text: str) -> tuple[Window, ...]:
    """Windows of an evidence text (cached per text): each sentence, each pair of adjacent sentences of a
    paragraph, each list item with the sentence that introduces it, and each table row with that sentence
    and the table's header row. Heading lines (``# …``), HTML tags and amendment notes are left out."""
    t = normalize_facts(text)
    units = _units(t)
    out: list[_Piece] = []
    lead: _Piece | None = None
    header: _Piece | None = None
    lead_pi, intro = -1, False  # the lead is the paragraph's sentence that announces the list (다음 각 호)
    for k, (pi, kind, u) in enumerate(units):
        if kind == "item":
            out.append(lead + u if lead else u)
        elif kind == "row":
            if header is None:
                header = u
                out.append(lead + u if lead else u)
            else:
                out.append((lead + header + u) if lead else header + u)
        else:
            announces = bool(_ANNOUNCES.search(u.text))
            if pi != lead_pi or announces or not intro:
                lead, intro = u, announces
            lead_pi, header = pi, None
            out.append(u)
            if k + 1 < len(units) and units[k + 1][0] == pi and units[k + 1][1] == "text":
                out.append(u + units[k + 1][2])
    if not out and t.strip():
        out.append(_piece(t.strip(), 0, len(t)))
    quantities = extract_quantities(text)
    seen: dict[str, Window] = {}
    for p in out:
        if p.text not in seen:
            inside = tuple(q for q in quantities if any(a <= q.start < b for a, b in p.spans))
            seen[p.text] = Window(p.text, p.terms, p.main_terms, p.clauses, inside)
    return tuple(seen.values())


def coverage(terms: frozenset[str], window_terms: frozenset[str]) -> float:
    return len(terms & window_terms) / len(terms) if terms else 0.0


def window_score(clause_terms: frozenset[str], w: Window) -> float:
    return (len(clause_terms & w.terms) + len(clause_terms & w.main_terms)) / (2 * len(clause_terms)) \
        if clause_terms else 0.0


def aligned_windows(clause_terms: frozenset[str], windows: tuple[Window, ...], margin: float) -> tuple[float, list[Window]]:
    """The windows that cover the clause best: by all their terms, half-credited for terms that occur only
    in brackets (a window that names a place only to exclude it is a worse match)."""
    if not clause_terms or not windows:
        return 0.0, []
    n = len(clause_terms)
    shared = [len(clause_terms & w.terms) for w in windows]
    top = max(range(len(windows)), key=shared.__getitem__)

    def score(k: int) -> float:
        return (shared[k] + len(clause_terms & windows[k].main_terms)) / (2 * n)

    best = score(top)
    # a window scores at most shared/n, so only those can reach best - margin
    scores = [(score(k), w) for k, w in enumerate(windows) if shared[k] / n >= best - margin]
    best = max(s for s, _ in scores)
    return best, [w for s, w in scores if s >= best - margin and s > 0]


def windows_of(evidence: EvidenceText) -> tuple[Window, ...]:
    """The windows of every text of ``evidence``, in order (none spans two texts)."""
    if isinstance(evidence, str):
        return evidence_windows(evidence)
    return tuple(w for text in evidence for w in evidence_windows(text))


def clause_support(claim: str, evidence: EvidenceText) -> float:
    """Clause-aligned lexical support (0..1): each clause of the claim is scored by the share of its
    content terms found in the one evidence window (a sentence, two adjacent sentences, or a list item
    with its lead) that covers most of them, and the claim scores as its weakest clause. A claim that
    joins a fact of the evidence with a fact the evidence states nowhere in one place scores low even
    when every word occurs somewhere in the evidence."""
    windows = windows_of(evidence)
    scores = [max((coverage(terms, w.terms) for w in windows), default=0.0)
              for terms in (text_terms(c) for c in split_clauses(claim)) if terms]
    return min(scores) if scores else 0.0
