"""Facts a claim must share with its source: quantities (numbers with their units, dates,
ratios, statute references) and the polarity of predicates (must / may / must not).

Pure functions over text, used by the citation validator and the extractive generator
(through :func:`rag.answer.support.check_support`). ``evidence`` is one text or a tuple of
texts (the blocks a sentence cites; a window never spans two of them). Everything derived
from an evidence text (its quantities, windows, clauses, term weights) is cached per text
with ``functools.lru_cache``, so checking a new claim against blocks seen before costs little;
:func:`clear_caches` empties those caches.

Quantities are read by :mod:`rag.text.quantities` (their values and units: :mod:`rag.text.units`), the
polarity of a clause by :mod:`rag.text.polarity`, the clauses and windows of an evidence text by
:mod:`rag.text.windows`; this module aligns a claim with its evidence, and its public names include
theirs (``from rag.text.facts import extract_quantities`` keeps working).

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

Lexical support (:func:`rag.text.windows.clause_support`)
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
from dataclasses import dataclass
from fractions import Fraction
from functools import lru_cache

from rag.lang import HANGUL_SYLLABLE
from rag.text.numerals import parse_english_number, parse_korean_number
from rag.text.polarity import (
    antonym_forms,
    clause_polarity,
    clean_clause,
    dropped_limit,
    may_drop_limit,
    may_have_opposites,
    opposite_words,
    predicate_polarity,
    word_stems,
)
from rag.text.quantities import claim_quantities, extract_quantities, normalize_facts
from rag.text.sentences import strip_markers
from rag.text.structure import NOTE
from rag.text.units import Kind, Quantity, same_quantity
from rag.text.windows import (
    EvidenceClause,
    EvidenceText,
    Window,
    aligned_windows,
    clause_support,
    coverage,
    evidence_sentences,
    evidence_windows,
    split_clauses,
    text_terms,
    window_score,
    windows_of,
)

__all__ = ["ALIGN_FALLBACK_MARGIN", "ALIGN_MARGIN", "EvidenceText", "Kind", "POLARITY_MIN_ALIGN",
           "POLARITY_MIN_ALIGN_EN", "Quantity", "Window", "claim_quantities", "clause_support", "clear_caches",
           "coverage", "evidence_windows", "extract_quantities", "misplaced_quantities", "normalize_facts",
           "parse_english_number", "parse_korean_number", "polarity_mismatch", "predicate_polarity",
           "same_quantity", "split_clauses", "unsupported_quantities"]


# --------------------------------------------------------------------------- matching
def _evidence_quantities(evidence: EvidenceText) -> tuple[Quantity, ...]:
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
def _index(evidence: EvidenceText) -> _Index:
    return _build_index(_evidence_quantities(evidence))


def unsupported_quantities(claim: str, evidence: EvidenceText) -> tuple[Quantity, ...]:
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


def misplaced_quantities(claim: str, evidence: EvidenceText) -> tuple[Quantity, ...]:
    """Claim quantities that the evidence states, but not in the windows aligned with the claim's
    clause (``20년 이상: 10일`` against a list whose ``20년 이상`` item says ``7일`` while ``10일``
    occurs in another paragraph). Quantities absent from the evidence are not listed here."""
    windows = windows_of(evidence)
    idx = _index(evidence)
    out: list[Quantity] = []
    for clause, clause_qs in _clause_quantities(claim):
        qs = [q for q in clause_qs if q.kind not in ("reference", "date")]  # dates are specific enough
        if not qs:
            continue
        terms = text_terms(clause)
        for q in qs:
            if not idx.stated(q):
                continue  # not stated at all: unsupported_quantities reports it
            # align without the quantity's own words, so that "16일" does not pull towards the row saying 16
            reduced = terms - text_terms(q.text)
            best, near = aligned_windows(reduced, windows, ALIGN_MARGIN)
            if any(same_quantity(q, e) for w in near for e in w.quantities):
                continue
            # ...unless those words are all that tells two windows apart ("4개월째부터" / "7개월째부터"): the
            # quantity is also in place when every window that matches the clause best with them holds it and
            # is nearly as good without them
            _, tops = aligned_windows(terms, windows, 0.0)
            if not tops or not all(any(same_quantity(q, e) for e in w.quantities)
                                   and window_score(reduced, w) >= best - ALIGN_FALLBACK_MARGIN for w in tops):
                out.append(q)
    return tuple(out)


# --------------------------------------------------------------------------- polarity
POLARITY_MIN_ALIGN = 0.34  # a claim clause whose best evidence clause covers less is not compared
POLARITY_MIN_ALIGN_EN = 0.5  # English clauses: whole stemmed words, and long clauses of mixed content


@dataclass(frozen=True)
class _Aligned:
    """Evidence windows with their clauses, and the idf of each term over the windows."""

    windows: tuple[tuple[frozenset[str], tuple[EvidenceClause, ...]], ...]
    weight: dict[str, float]
    clauses: tuple[EvidenceClause, ...]  # every clause once
    stems: frozenset[str]  # every word of the evidence, as word_stems gives it
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
def _aligned_evidence(evidence: EvidenceText) -> _Aligned:
    windows = windows_of(evidence)
    texts = (evidence,) if isinstance(evidence, str) else evidence
    n, df = 0, dict[str, int]()
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
                    every, frozenset().union(*map(word_stems, texts)), "\n".join(texts))


def _weighted(terms: frozenset[str], other: frozenset[str], weight: dict[str, float], total: float) -> float:
    return sum(weight[t] for t in terms & other) / total if total else 0.0


@lru_cache(maxsize=5_000)
def _claim_sentences(claim: str) -> list[tuple[frozenset[str], tuple[str, ...]]]:
    out = []
    for line in NOTE.sub(" ", strip_markers(claim)).split("\n"):
        for s in evidence_sentences(line):
            clauses = split_clauses(s)
            if clauses:
                out.append((text_terms(s), clauses))
    return out


def polarity_mismatch(claim: str, evidence: EvidenceText) -> str | None:
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
        self._clauses: list[EvidenceClause] | None = None

    def clauses(self) -> list[EvidenceClause]:
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
    terms = text_terms(cl)
    if not terms:
        return None
    scope = may_drop_limit(cl)
    words = clean_clause(cl)  # compared as the evidence clauses are: without what stands in brackets
    min_align = POLARITY_MIN_ALIGN if HANGUL_SYLLABLE.search(cl) else POLARITY_MIN_ALIGN_EN
    sign, bound, head = clause_polarity(cl)
    if sign is not None and head:
        # clauses with the same predicate (지급/압류/승인…) decide the sign when there are any close enough
        same = [(coverage(terms, c.terms), c) for c in every if c.head == head and c.sign is not None
                and c.bound == bound]
        same = [(s, c) for s, c in same if s >= min_align]
        if same:
            best_same = max(s for s, _ in same)
            near_same = [c for s, c in same if s >= best_same - 1e-9]
            for s, c in same:
                limited = dropped_limit(cl, c.text) if scope and s >= best_same - 0.1 else None
                if limited is not None:
                    return (f"the source limits this to {limited!r} only, the claim drops the limit: "
                            f"{_short(c.text)!r}")
            if all(c.sign != sign for c in near_same):
                said = "negative" if sign < 0 else "affirmative"
                return (f"the claim is {said} ({_short(cl, 60)!r}) but the source says the opposite: "
                        f"{_short(near_same[0].text)!r}")
            sign = None  # same polarity as the clause with the same predicate: only words are compared below
    antonyms = may_have_opposites(words, ev.stems, ev.text)
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
        anti = opposite_words(words, c.text)
        if anti is not None:
            return f"the claim says {anti[0]!r} where the source says {anti[1]!r}: {_short(c.text)!r}"
    for c in near if scope else ():
        limited = dropped_limit(cl, c.text)
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
    for fn in (normalize_facts, extract_quantities, split_clauses, evidence_windows, word_stems, _aligned_evidence,
               _claim_sentences, _index, _document_frequency, antonym_forms, _clause_quantities):
        fn.cache_clear()
