"""Scoring answers against a labelled question, and the numbers ``rag eval-answers`` reports.

- a fact is *found* when it occurs in the answer after both are normalised
  (:func:`normalize_fact_text`: NFKC, ``**`` and backslash escapes removed, all whitespace
  removed), or when ``rag.text.facts`` is installed and says the quantities are equal;
- an answerable question is *correct* when it was answered, every fact was found and one
  citation points at the gold document's current version; an unanswerable one is correct when
  the pipeline abstained;
- an answer sentence is *precise* (:func:`sentence_precise`) when it holds a gold fact or lies
  in the gold quote (:func:`in_gold_quote`); an answer's *precision* is the share of its
  sentences (:func:`rag.text.sentences.answer_sentences`) that are precise.

:func:`answer_metrics` turns the rows into the report's numbers (see its docstring).
"""
from __future__ import annotations

import math
import re
import statistics
import unicodedata
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from rag.evaluation.answer_dataset import AnswerQuestion, Gold
from rag.lang import ZERO_WIDTH
from rag.text.sentences import answer_sentences, strip_markers

QUOTE_GRAM = 4  # the length of the character runs that count as lying in the quote
QUOTE_COVERAGE = 0.8  # the share of a sentence's characters that must lie in the quote

_ESCAPE = re.compile(r"\\(.)", re.DOTALL)


def normalize_fact_text(text: str) -> str:
    """The form facts and answers are compared in: NFKC, zero-width characters dropped, markdown
    backslash escapes (``1\\.``) and ``**`` emphasis removed, then every whitespace character removed."""
    t = unicodedata.normalize("NFKC", text).translate(ZERO_WIDTH)
    t = _ESCAPE.sub(r"\1", t).replace("**", "")
    return "".join(t.split())


def _same_quantities(fact: str, answer: str) -> bool:
    """Whether the fact states at least one quantity and the answer states every one of them with
    an equal value (``1억6천500만원`` = ``165,000,000원``, ``10분의 3`` = ``30%``), as
    :mod:`rag.text.facts` reads them; False when that module is not available."""
    try:
        from rag.text.facts import claim_quantities, unsupported_quantities
    except ImportError:
        return False
    return bool(claim_quantities(fact)) and not unsupported_quantities(fact, answer)


def fact_found(fact: str, answer: str) -> bool:
    """``fact`` occurs in ``answer`` (both normalised with :func:`normalize_fact_text`), or its
    quantities do (see :func:`_same_quantities`)."""
    f = normalize_fact_text(fact)
    if f and f in normalize_fact_text(answer):
        return True
    return _same_quantities(fact, answer)


# -- answer precision ------------------------------------------------------------------
def quote_coverage(sentence: str, quote: str) -> float:
    """The share of the sentence's characters that lie in the quote, both with ``[S#]`` markers
    stripped and normalised with :func:`normalize_fact_text` (``s`` and ``q`` below).

    1.0 when ``s`` is a substring of ``q``. Otherwise a character of ``s`` lies in ``q`` when it
    is inside a run of :data:`QUOTE_GRAM` consecutive characters of ``s`` that also occurs in
    ``q`` (runs may overlap); a sentence shorter than that lies in the quote only as a substring.
    0.0 for an empty ``s`` or ``q``."""
    s, q = normalize_fact_text(strip_markers(sentence)), normalize_fact_text(strip_markers(quote))
    if not s or not q:
        return 0.0
    if s in q:
        return 1.0
    k = QUOTE_GRAM
    if len(s) < k:
        return 0.0
    grams = {q[i:i + k] for i in range(len(q) - k + 1)}
    covered = [False] * len(s)
    for i in range(len(s) - k + 1):
        if s[i:i + k] in grams:
            covered[i:i + k] = [True] * k
    return sum(covered) / len(s)


def in_gold_quote(sentence: str, quote: str) -> bool:
    """Whether the sentence lies in the quote: :func:`quote_coverage` ≥ :data:`QUOTE_COVERAGE`."""
    return quote_coverage(sentence, quote) >= QUOTE_COVERAGE


def sentence_precise(sentence: str, gold: Gold) -> bool:
    """Whether one answer sentence (``[S#]`` markers stripped) holds a gold answer fact
    (:func:`fact_found` on that sentence alone) or lies in the gold quote (:func:`in_gold_quote`;
    never when the question has no quote)."""
    text = strip_markers(sentence)
    if any(fact_found(f, text) for f in gold.answer_facts):
        return True
    return bool(gold.quote) and in_gold_quote(text, gold.quote)


def precise_sentences(answer: str, gold: Gold) -> tuple[bool, ...]:
    """:func:`sentence_precise` for each sentence of ``answer`` (:func:`answer_sentences`: every
    line ends a sentence, and one line may hold several), in order."""
    return tuple(sentence_precise(s.text, gold) for s in answer_sentences(answer))


# -- one answer --------------------------------------------------------------------------
@dataclass(frozen=True)
class GateReading:
    """What the gate saw for one question: its signal's top value, the key-term coverage of the best
    candidates (:class:`rag.rerank.evidence_fit.EvidenceFit`) and whether reading the question
    stopped it (``asked_fact_missing`` / ``key_terms_missing``)."""

    score: float | None
    coverage: float | None
    stopped_by_reading: bool

    @property
    def read_score(self) -> float | None:
        """The score as the gate applies it with the reading: moved below every score when the
        reading stopped the question."""
        if self.score is None:
            return None
        return self.score - READ_STOP_SHIFT if self.stopped_by_reading else self.score

    def to_json(self) -> dict:
        return {"score": self.score, "coverage": self.coverage, "stopped_by_reading": self.stopped_by_reading}


READ_STOP_SHIFT = 10.0  # larger than the spread of any gate signal (cosines, probabilities)


@dataclass(frozen=True)
class AnswerRow:
    """One question's outcome. ``correct``: answerable: answered, every fact found and the gold
    document's current version cited; unanswerable: abstained. ``superseded_cited``: answered and
    cites a non-current version of a document, or contains a superseded fact but not every gold fact.
    ``sentences``: the answer's sentence count when answered (else 0); ``answer_precision``: the
    share of those sentences that are precise (:func:`precise_sentences`), for an answered
    answerable question with at least one sentence (else None)."""

    id: str
    answerable: bool
    status: str
    reason: str
    answer: str
    cited: tuple[tuple[str, str], ...]  # (document id, version), sorted, unique
    facts_found: tuple[bool, ...]  # one per gold answer fact (empty when unanswerable)
    correct: bool
    superseded_cited: bool
    cited_gold_current: bool
    style: str | None = None
    answer_precision: float | None = None
    sentences: int = 0
    gate: GateReading | None = None

    @property
    def answered(self) -> bool:
        return self.status == "answered"

    def to_json(self) -> dict:
        out: dict[str, Any] = {"id": self.id, "answerable": self.answerable}
        if self.style is not None:
            out["style"] = self.style
        out.update({"status": self.status, "reason": self.reason, "answer": self.answer,
                    "cited": [list(c) for c in self.cited], "facts_found": list(self.facts_found),
                    "correct": self.correct, "superseded_cited": self.superseded_cited,
                    "cited_gold_current": self.cited_gold_current,
                    "answer_precision": None if self.answer_precision is None else round(self.answer_precision, 6),
                    "sentences": self.sentences})
        if self.gate is not None:
            out["gate"] = self.gate.to_json()
        return out


def score_answer(q: AnswerQuestion, status: str, answer: str, cited: Iterable[tuple[str, str]],
                 latest: Mapping[str, str], reason: str = "", gate: GateReading | None = None) -> AnswerRow:
    """Score one answer (``status`` ``answered`` or not, its text and the ``(document id, version)``
    pairs it cites) against ``q`` and the current versions ``latest``; ``gate``: what the gate saw,
    kept on the row for the gate's AUROC."""
    cites = tuple(sorted(set(cited)))
    answered = status == "answered"
    n_sent = len(answer_sentences(answer)) if answered else 0
    stale = answered and any(doc in latest and ver != latest[doc] for doc, ver in cites)
    if q.gold is None:
        return AnswerRow(q.id, False, status, reason, answer, cites, (), not answered, stale, False, q.style,
                         None, n_sent, gate)
    g = q.gold
    found = tuple(answered and fact_found(f, answer) for f in g.answer_facts)
    gold_current = answered and (g.doc_id, latest.get(g.doc_id)) in cites
    if answered and not all(found) and any(fact_found(f, answer) for f in g.superseded_facts):
        stale = True
    flags = precise_sentences(answer, g) if answered else ()
    precision = sum(flags) / len(flags) if flags else None
    return AnswerRow(q.id, True, status, reason, answer, cites, found, answered and all(found) and gold_current,
                     stale, gold_current, q.style, precision, n_sent, gate)


# -- metrics -----------------------------------------------------------------------------
def _share(k: int, n: int) -> float | None:
    return round(k / n, 6) if n else None


def _mean(values: Sequence[float]) -> float | None:
    return round(statistics.fmean(values), 6) if values else None


def answer_chars(answer: str) -> int:
    """The length of an answer in characters: ``[S#]`` markers removed and whitespace runs counted
    as one space (:func:`rag.text.sentences.strip_markers`)."""
    return len(strip_markers(answer))


def answer_metrics(rows: Sequence[AnswerRow]) -> dict[str, float | int | None]:
    """The report's numbers over ``rows``; a share or mean whose denominator is 0 is ``None``.

    - ``accuracy_answerable``: correct answerable / answerable;
    - ``answered_when_answerable``: answered answerable / answerable;
    - ``abstained_when_unanswerable``, ``answered_when_unanswerable``: shares of the unanswerable;
    - ``precision_of_answered``: correct answerable / all answered (an answered unanswerable
      question counts as wrong); ``None`` when nothing was answered;
    - ``answer_precision``: the mean of :attr:`AnswerRow.answer_precision` over the answered
      answerable rows that have one; ``answer_precision_correct``: the same over correct rows;
    - ``answer_chars_mean``, ``answer_chars_p50``: mean and median :func:`answer_chars` of the
      answered rows; ``answer_sentences_mean``: their mean sentence count;
    - ``superseded_cited``: answered questions citing a non-current version (or giving the
      superseded answer), a count;
    - ``validation_failed``: questions with reason ``validation_failed``, a count;
    - ``gate_auroc_score``, ``gate_auroc_coverage``, ``gate_auroc_read``: :func:`gate_aurocs`."""
    ans = [r for r in rows if r.answerable]
    una = [r for r in rows if not r.answerable]
    answered = [r for r in rows if r.answered]
    una_answered = sum(r.answered for r in una)
    precision = [r.answer_precision for r in ans if r.answered and r.answer_precision is not None]
    precision_ok = [r.answer_precision for r in ans if r.correct and r.answer_precision is not None]
    chars = [answer_chars(r.answer) for r in answered]
    return {
        "n": len(rows),
        "n_answerable": len(ans),
        "n_unanswerable": len(una),
        "accuracy_answerable": _share(sum(r.correct for r in ans), len(ans)),
        "answered_when_answerable": _share(sum(r.answered for r in ans), len(ans)),
        "abstained_when_unanswerable": _share(len(una) - una_answered, len(una)),
        "answered_when_unanswerable": _share(una_answered, len(una)),
        "precision_of_answered": _share(sum(r.correct for r in answered if r.answerable), len(answered)),
        "answer_precision": _mean(precision),
        "answer_precision_correct": _mean(precision_ok),
        "answer_chars_mean": _mean(chars),
        "answer_chars_p50": round(float(statistics.median(chars)), 6) if chars else None,
        "answer_sentences_mean": _mean([r.sentences for r in answered]),
        "superseded_cited": sum(r.superseded_cited for r in answered),
        "validation_failed": sum(r.reason == "validation_failed" for r in rows),
        **gate_aurocs(rows),
    }


def gate_aurocs(rows: Sequence[AnswerRow]) -> dict[str, float | None]:
    """:func:`reading_aurocs` of the rows' gate readings and labels; left out (``{}``) unless every
    row has the gate's reading."""
    if any(r.gate is None for r in rows):
        return {}
    return reading_aurocs([r.gate for r in rows], [r.answerable for r in rows])


def reading_aurocs(readings: Sequence[GateReading], labels: Sequence[bool]) -> dict[str, float | None]:
    """AUROC of answerable (``labels`` True) against unanswerable questions for the gate's signal
    (``gate_auroc_score``), the key-term coverage of its best candidates (``gate_auroc_coverage``)
    and the signal with the reading applied (``gate_auroc_read``); ``{}`` unless both labels occur,
    and a metric is left out when a reading lacks its value."""
    from rag.evaluation.metrics import auroc

    if not readings or all(labels) or not any(labels):
        return {}
    out: dict[str, float | None] = {}
    for name, vals in (("score", [g.score for g in readings]), ("coverage", [g.coverage for g in readings]),
                       ("read", [g.read_score for g in readings])):
        if all(v is not None for v in vals):
            a = auroc(vals, list(labels))
            out[f"gate_auroc_{name}"] = None if math.isnan(a) else round(a, 4)
    return out


def style_metrics(rows: Sequence[AnswerRow]) -> dict[str, dict[str, float | int | None]]:
    """``{style: {"n", "accuracy", and every key of answer_metrics}}`` over the rows of each style,
    styles sorted; ``accuracy`` is the share of ``correct`` rows (answerable or not). Rows without a
    style are left out."""
    out: dict[str, dict[str, float | int | None]] = {}
    for style in sorted({r.style for r in rows if r.style is not None}):
        sub = [r for r in rows if r.style == style]
        out[style] = {"n": len(sub), "accuracy": _share(sum(r.correct for r in sub), len(sub)),
                      **answer_metrics(sub)}
    return out
