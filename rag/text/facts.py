"""Facts a claim must share with its source: quantities (numbers with their units, dates,
ratios, statute references) and the polarity of predicates (must / may / must not).

Pure functions over text, used by the citation validator and the extractive generator
(through :func:`rag.answer.support.check_support`). ``evidence`` is one text or a tuple of
texts (the blocks a sentence cites; a window never spans two of them). Everything derived
from an evidence text (its quantities, windows, clauses, term weights) is cached per text
with ``functools.lru_cache``, so checking a new claim against blocks seen before costs little;
:func:`clear_caches` empties those caches.

Quantities are read by :mod:`rag.text.quantities`, the polarity of a clause by :mod:`rag.text.polarity`;
this module aligns a claim with its evidence, and its public names include theirs (``from rag.text.facts
import extract_quantities`` keeps working).

Matching (:func:`unsupported_quantities`, :func:`misplaced_quantities`)
    A claim quantity is supported by an evidence quantity of equal value in the same
    dimension after conversion (``2주일`` = ``14일``, ``2만원`` = ``20,000원``, ``10분의 3`` =
    ``30%`` = ``100분의 30``); a bare number on either side (a table cell ``15``, a claim's
    ``2기``) matches the same written number, except dates and references; a dated claim
    matches an evidence date that agrees on every part the claim gives. A number the claim
    computes from the source (15 + 5 = 20) is not stated there, so it is unsupported.
    Where it is stated matters too: each claim clause is aligned with the evidence windows
    (:func:`evidence_windows`: a sentence, two adjacent sentences, a list item with the
    sentence that announces the list, a table row with that sentence and the header) that
    cover most of its content terms, leaving out the quantity's own words, and a quantity
    the evidence states only elsewhere is *misplaced* (``20년 이상: 10일`` where the list
    item for 20년 says ``7일`` and ``10일`` belongs to another paragraph).

Lexical support (:func:`clause_support`)
    Each clause of the claim is scored by the share of its content terms found in its best
    window, and the claim scores as its weakest clause: a claim that adds a fact stated
    elsewhere (or nowhere) scores low even when all its words occur somewhere in the text.

Polarity mismatch (:func:`polarity_mismatch`)
    Alignment: a clause is compared with the evidence clauses that share its predicate's head
    (``지급``, ``압류``, ``승인``) and cover at least a third of its terms, the closest deciding;
    otherwise with the closest clause of the window its sentence shares the most idf-weighted
    terms with. A flip is reported when the signs differ (and no equally close clause has the
    claim's sign), when the claim uses the opposite of a word there (``유급``/``무급``,
    ``공개``/``비공개``, ``포함``/``제외``), or when the evidence limits a quantity (``1명에게만``,
    ``2분의 1…까지만``) and the claim drops the limit for ``모두``/``전액``/``all``.
"""
from __future__ import annotations

import math
import re
from dataclasses import dataclass
from fractions import Fraction
from functools import lru_cache

from rag.text.polarity import (
    _ANTONYM_PAIRS,
    _EXCLUSIVE_ANY,
    _PAREN,
    _UNIVERSAL,
    _antonym,
    _antonym_forms,
    _clean,
    _polarity,
    _scope_flip,
    _stems,
    predicate_polarity,
)
from rag.text.quantities import (
    Kind,
    Quantity,
    claim_quantities,
    extract_quantities,
    normalize_facts,
    parse_english_number,
    parse_korean_number,
    same_quantity,
)
from rag.text.segment import NOTE as _NOTE, segment
from rag.text.sentences import strip_markers
from rag.text.lexical import content_terms

__all__ = ["ALIGN_FALLBACK_MARGIN", "ALIGN_MARGIN", "Evidence", "Kind", "POLARITY_MIN_ALIGN",
           "POLARITY_MIN_ALIGN_EN", "Quantity", "Window", "claim_quantities", "clause_support", "clear_caches",
           "coverage", "evidence_windows", "extract_quantities", "misplaced_quantities", "normalize_facts",
           "parse_english_number", "parse_korean_number", "polarity_mismatch", "predicate_polarity",
           "same_quantity", "split_clauses", "unsupported_quantities"]


# --------------------------------------------------------------------------- matching
Evidence = str | tuple[str, ...]  # one text, or the texts of several cited blocks


def _evidence_quantities(evidence: Evidence) -> tuple[Quantity, ...]:
    if isinstance(evidence, str):
        return extract_quantities(evidence)
    return tuple(q for text in evidence for q in extract_quantities(text))


def _ratio_value(q: Quantity) -> Fraction:
    return q.value / 100 if q.kind == "percent" else q.value


@dataclass(frozen=True)
class _Index:
    """Evidence quantities by value, written number and ratio, so a claim quantity is compared only with
    the few that can be equal to it."""

    by_value: dict[Fraction, list[Quantity]]
    by_number: dict[Fraction, list[Quantity]]
    by_ratio: dict[Fraction, list[Quantity]]
    dates: list[Quantity]

    def stated(self, q: Quantity) -> bool:
        cands = self.by_value.get(q.value, []) + self.by_number.get(q.number, [])
        if q.kind in ("ratio", "percent"):
            cands += self.by_ratio.get(_ratio_value(q), [])
        if q.kind == "date":
            cands += self.dates
        return any(same_quantity(q, e) for e in cands)


def _build_index(quantities: tuple[Quantity, ...]) -> _Index:
    idx = _Index({}, {}, {}, [])
    for e in quantities:
        idx.by_value.setdefault(e.value, []).append(e)
        idx.by_number.setdefault(e.number, []).append(e)
        if e.kind in ("ratio", "percent"):
            idx.by_ratio.setdefault(_ratio_value(e), []).append(e)
        if e.kind == "date":
            idx.dates.append(e)
    return idx


@lru_cache(maxsize=5_000)
def _index(evidence: Evidence) -> _Index:
    return _build_index(_evidence_quantities(evidence))


def unsupported_quantities(claim: str, evidence: Evidence) -> tuple[Quantity, ...]:
    """Claim quantities with no equal quantity anywhere in ``evidence`` (first of each value)."""
    idx = _index(evidence)
    out: list[Quantity] = []
    seen: set[tuple[Fraction, str, bool]] = set()
    for q in claim_quantities(claim):
        if (q.value, q.unit, q.rate) in seen:
            continue
        seen.add((q.value, q.unit, q.rate))
        if not idx.stated(q):
            out.append(q)
    return tuple(out)


# --------------------------------------------------------------------------- clauses and windows
# clause ends: a connective ending before a comma (하며, / 하고, / 하되, / 하나,), 며 before a space, or ';'
_CLAUSE_CUT = re.compile(r"(?<=[며고되나])\s*,\s+|(?<=지만)\s*,?\s+|(?<=는데),\s+|(?<=[며])\s+(?=[^\s])|(?<=[가-힣]이고)\s+(?=[^\s])|;\s*|(?<=[a-z0-9)]),\s+(?=(?:and|but|or|while|whereas|although|though)\s)|\s+(?=(?:but|whereas)\s)")
_ITEM = re.compile(r"^\s*(?:\d{1,3}|[가-하])\s?\\?\.\s")


def _terms(text: str) -> frozenset[str]:
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
    return [p for p in (x.strip(" ,") for x in out) if p and re.search(r"[가-힣A-Za-z]", p)]


@lru_cache(maxsize=20_000)
def split_clauses(text: str) -> tuple[str, ...]:
    """Clauses of ``text``: sentences, cut again after connective endings (``…하며,``, ``…하되,``, ``…고,``).
    Amendment notes (``<개정 …>``) are no clause: they state no rule."""
    out: list[str] = []
    text = _NOTE.sub(" ", strip_markers(text) if "[" in text else text)
    for line in text.split("\n"):
        for s in _sentences(line):
            out.extend(_cut_clauses(s))
    return tuple(out)


@dataclass(frozen=True)
class _EvClause:
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
    clauses: tuple[_EvClause, ...]
    quantities: tuple[Quantity, ...]  # the evidence's quantities that lie in this window


@dataclass(frozen=True)
class _Piece:
    text: str
    terms: frozenset[str]
    main_terms: frozenset[str]
    clauses: tuple[_EvClause, ...]
    spans: tuple[tuple[int, int], ...]  # offsets into normalize_facts(evidence)

    def __add__(self, other: _Piece) -> _Piece:
        return _Piece(f"{self.text} {other.text}", self.terms | other.terms, self.main_terms | other.main_terms,
                      self.clauses + other.clauses, self.spans + other.spans)


_BRACKETED = re.compile(r"\([^()]*\)|\[[^\[\]]*\]|「[^「」]*」")
# a sentence end inside evidence: a period after a Hangul syllable or a closing bracket, or after a word
# of English before a capital letter (evidence units only: answers use rag.text.sentences)
_UNIT_END = re.compile(r"(?<=[가-힣)\]][.?!])\s+|(?<=[.?!][\"'”’])\s+|(?<=[a-z0-9%][.?!])\s+(?=[A-Z가-힣\"“(])|"
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


def _sentences(line: str) -> list[str]:
    return [line[a:b] for a, b in _sentence_spans(line)]


def _piece(text: str, start: int, end: int) -> _Piece:
    clauses = tuple(_EvClause(c, _terms(c), *_polarity(c))
                    for sentence in _sentences(_clean(text)) for c in _cut_clauses(sentence))
    return _Piece(text, _terms(text), _terms(_outside_brackets(text)), clauses, ((start, end),))


def _outside_brackets(text: str) -> str:
    prev = None
    while prev != text:
        prev, text = text, _PAREN.sub(" ", text)
    return text


_ANNOUNCES = re.compile(r"다음|아래|(?i:following|as follows|below)|:$")
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
    masked = _NOTE.sub(lambda m: " " * len(m.group(0)), _unwrapped(t))
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


def _score(clause_terms: frozenset[str], w: Window) -> float:
    return (len(clause_terms & w.terms) + len(clause_terms & w.main_terms)) / (2 * len(clause_terms)) \
        if clause_terms else 0.0


def _aligned(clause_terms: frozenset[str], windows: tuple[Window, ...], margin: float) -> tuple[float, list[Window]]:
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


def _windows(evidence: Evidence) -> tuple[Window, ...]:
    if isinstance(evidence, str):
        return evidence_windows(evidence)
    return tuple(w for text in evidence for w in evidence_windows(text))


def clause_support(claim: str, evidence: Evidence) -> float:
    """Clause-aligned lexical support (0..1): each clause of the claim is scored by the share of its
    content terms found in the one evidence window (a sentence, two adjacent sentences, or a list item
    with its lead) that covers most of them, and the claim scores as its weakest clause. A claim that
    joins a fact of the evidence with a fact the evidence states nowhere in one place scores low even
    when every word occurs somewhere in the evidence."""
    windows = _windows(evidence)
    scores = [max((coverage(terms, w.terms) for w in windows), default=0.0)
              for terms in (_terms(c) for c in split_clauses(claim)) if terms]
    return min(scores) if scores else 0.0


ALIGN_MARGIN = 0.02  # windows this close to the best one also count as aligned
ALIGN_FALLBACK_MARGIN = 0.05  # see misplaced_quantities


@lru_cache(maxsize=5_000)
def _clause_quantities(claim: str) -> tuple[tuple[str, tuple[Quantity, ...]], ...]:
    """Each clause of the claim with its quantities, taken from the claim's own (cached) extraction when
    normalisation kept the claim's offsets, else extracted clause by clause."""
    clauses = split_clauses(claim)
    qs = claim_quantities(claim)
    if len(clauses) == 1:
        return ((clauses[0], qs),)
    if normalize_facts(claim) != claim:
        return tuple((c, claim_quantities(c)) for c in clauses)
    out, pos = [], 0
    for c in clauses:
        start = claim.find(c, pos)
        if start < 0:
            return tuple((c, claim_quantities(c)) for c in clauses)
        end = pos = start + len(c)
        out.append((c, tuple(q for q in qs if start <= q.start and q.end <= end)))
    return tuple(out)


def misplaced_quantities(claim: str, evidence: Evidence) -> tuple[Quantity, ...]:
    """Claim quantities that the evidence states, but not in the windows aligned with the claim's
    clause (``20년 이상: 10일`` against a list whose ``20년 이상`` item says ``7일`` while ``10일``
    occurs in another paragraph). Quantities absent from the evidence are not listed here."""
    windows = _windows(evidence)
    idx = _index(evidence)
    out: list[Quantity] = []
    for clause, clause_qs in _clause_quantities(claim):
        qs = [q for q in clause_qs if q.kind not in ("reference", "date")]  # dates are specific enough
        if not qs:
            continue
        terms = _terms(clause)
        for q in qs:
            if not idx.stated(q):
                continue  # not stated at all: unsupported_quantities reports it
            # align without the quantity's own words, so that "16일" does not pull towards the row saying 16
            reduced = terms - _terms(q.text)
            best, near = _aligned(reduced, windows, ALIGN_MARGIN)
            if any(same_quantity(q, e) for w in near for e in w.quantities):
                continue
            # ...unless those words are all that tells two windows apart ("4개월째부터" / "7개월째부터"): the
            # quantity is also in place when every window that matches the clause best with them holds it and
            # is nearly as good without them
            _, tops = _aligned(terms, windows, 0.0)
            if not tops or not all(any(same_quantity(q, e) for e in w.quantities)
                                   and _score(reduced, w) >= best - ALIGN_FALLBACK_MARGIN for w in tops):
                out.append(q)
    return tuple(out)


# --------------------------------------------------------------------------- polarity
POLARITY_MIN_ALIGN = 0.34  # a claim clause whose best evidence clause covers less is not compared
POLARITY_MIN_ALIGN_EN = 0.5  # English clauses: whole stemmed words, and long clauses of mixed content


@dataclass(frozen=True)
class _Aligned:
    """Evidence windows with their clauses, and the idf of each term over the windows."""

    windows: tuple[tuple[frozenset[str], tuple[_EvClause, ...]], ...]
    weight: dict[str, float]
    clauses: tuple[_EvClause, ...]  # every clause once
    stems: frozenset[str]  # every word of the evidence, as _stems gives it
    text: str  # the evidence texts, joined


@lru_cache(maxsize=5_000)
def _document_frequency(text: str) -> tuple[int, dict[str, int]]:
    """(number of windows, in how many windows each term occurs) of one evidence text."""
    df: dict[str, int] = {}
    windows = evidence_windows(text)
    for w in windows:
        for t in w.terms:
            df[t] = df.get(t, 0) + 1
    return len(windows), df


@lru_cache(maxsize=5_000)
def _aligned_evidence(evidence: Evidence) -> _Aligned:
    windows = _windows(evidence)
    texts = (evidence,) if isinstance(evidence, str) else evidence
    n, df = 0, {}
    for text in texts:  # merged per text: each text's counts are cached
        k, d = _document_frequency(text)
        n += k
        if not df:
            df = dict(d)
        else:
            for t, c in d.items():
                df[t] = df.get(t, 0) + c
    every = tuple({c.text: c for w in windows for c in w.clauses}.values())
    return _Aligned(tuple((w.terms, w.clauses) for w in windows), {t: math.log(1 + n / d) for t, d in df.items()},
                    every, frozenset().union(*map(_stems, texts)), "\n".join(texts))


def _weighted(terms: frozenset[str], other: frozenset[str], weight: dict[str, float], total: float) -> float:
    return sum(weight[t] for t in terms & other) / total if total else 0.0


@lru_cache(maxsize=5_000)
def _claim_sentences(claim: str) -> list[tuple[frozenset[str], tuple[str, ...]]]:
    out = []
    for line in _NOTE.sub(" ", strip_markers(claim)).split("\n"):
        for s in _sentences(line):
            clauses = split_clauses(s)
            if clauses:
                out.append((_terms(s), clauses))
    return out


def polarity_mismatch(claim: str, evidence: Evidence) -> str | None:
    """A short reason when a clause of ``claim`` flips the obligation, permission or prohibition of the
    evidence clause it restates; None otherwise.

    Alignment has two steps: each claim sentence is matched with the evidence window (sentence, sentence
    pair, or list item with its lead) whose idf-weighted content terms it shares most; each clause of the
    claim sentence is then matched with the clause of that window that covers most of its terms."""
    ev = _aligned_evidence(evidence)
    if not ev.windows:
        return None
    for sent_terms, clauses in _claim_sentences(claim):
        top = _TopWindows(ev, sent_terms)
        for cl in clauses:
            reason = _clause_flip(cl, top, ev)
            if reason:
                return reason
    return None


class _TopWindows:
    """The clauses of the windows a claim sentence matches best (idf-weighted), computed when first asked."""

    def __init__(self, ev: _Aligned, sent_terms: frozenset[str]) -> None:
        self.ev, self.sent_terms = ev, sent_terms
        self._clauses: list[_EvClause] | None = None

    def clauses(self) -> list[_EvClause]:
        if self._clauses is None:
            weight = self.ev.weight
            known = self.sent_terms & weight.keys()  # terms the evidence has at all
            total = sum(weight[t] for t in known) + (len(self.sent_terms) - len(known))
            scored = [(_weighted(known, wt, weight, total), k) for k, (wt, _) in enumerate(self.ev.windows)]
            best = max((s for s, _ in scored), default=0.0)
            self._clauses = [c for s, k in scored if best > 0 and s >= best - 1e-9 for c in self.ev.windows[k][1]]
        return self._clauses


def _clause_flip(cl: str, top: _TopWindows, ev: _Aligned) -> str | None:
    every = ev.clauses
    terms = _terms(cl)
    if not terms:
        return None
    scope = not _EXCLUSIVE_ANY.search(cl) and bool(_UNIVERSAL.search(cl))  # could drop a limit (see _scope_flip)
    words = _clean(cl)  # compared as the evidence clauses are: without what stands in brackets
    min_align = POLARITY_MIN_ALIGN if re.search(r"[가-힣]", cl) else POLARITY_MIN_ALIGN_EN
    sign, bound, head = _polarity(cl)
    if sign is not None and head:
        # clauses with the same predicate (지급/압류/승인…) decide the sign when there are any close enough
        same = [(coverage(terms, c.terms), c) for c in every if c.head == head and c.sign is not None
                and c.bound == bound]
        same = [(s, c) for s, c in same if s >= min_align]
        if same:
            best_same = max(s for s, _ in same)
            near_same = [c for s, c in same if s >= best_same - 1e-9]
            for s, c in same:
                limited = _scope_flip(cl, c.text) if scope and s >= best_same - 0.1 else None
                if limited is not None:
                    return (f"the source limits this to {limited!r} only, the claim drops the limit: "
                            f"{_short(c.text)!r}")
            if all(c.sign != sign for c in near_same):
                said = "negative" if sign < 0 else "affirmative"
                return (f"the claim is {said} ({_short(cl, 60)!r}) but the source says the opposite: "
                        f"{_short(near_same[0].text)!r}")
            sign = None  # same polarity as the clause with the same predicate: only words are compared below
    antonyms = bool(_antonym_forms(words).keys() & ev.stems) or any(
        (x in words and y in ev.text) or (y in words and x in ev.text) for x, y in _ANTONYM_PAIRS)
    if sign is None and not antonyms and not scope:
        return None  # nothing left that could differ
    # Korean: the clauses of the window the claim sentence matches (a short clause such as "이 휴가는
    # 유급이다" is placed by its sentence); English: the clause that covers the claim clause best anywhere
    pool = top.clauses() if min_align == POLARITY_MIN_ALIGN else list(every)
    cands = [(coverage(terms, c.terms), c) for c in pool]
    if not cands:
        return None
    best = max(s for s, _ in cands)
    if best < min_align:
        return None
    near = [c for s, c in cands if s >= best - 1e-9]
    for c in near if antonyms else ():
        anti = _antonym(words, c.text)
        if anti is not None:
            return f"the claim says {anti[0]!r} where the source says {anti[1]!r}: {_short(c.text)!r}"
    for c in near if scope else ():
        limited = _scope_flip(cl, c.text)
        if limited is not None:
            return f"the source limits this to {limited!r} only, the claim drops the limit: {_short(c.text)!r}"
    if sign is None:
        return None
    comparable = [c for c in near if c.sign is not None and c.bound == bound]
    if not comparable or any(c.sign == sign for c in comparable):
        return None  # nothing to compare, or an equally close clause of the same polarity
    said = "negative" if sign < 0 else "affirmative"
    return (f"the claim is {said} ({_short(cl, 60)!r}) but the source says the opposite: "
            f"{_short(comparable[0].text)!r}")


def _short(text: str, n: int = 90) -> str:
    t = " ".join(text.split())
    return t if len(t) <= n else t[:n - 1] + "…"


def clear_caches() -> None:
    """Empty the per-text caches of this module, :mod:`rag.text.quantities` and
    :mod:`rag.text.polarity` (benchmarks measure cold validation with it)."""
    for fn in (normalize_facts, extract_quantities, split_clauses, evidence_windows, _stems, _aligned_evidence,
               _claim_sentences, _index, _document_frequency, _antonym_forms, _clause_quantities):
        fn.cache_clear()
