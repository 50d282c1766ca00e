"""The short answer line of the extractive generator: the asked value as the source writes it.

:func:`answer_spans` takes the values of the asked kind from the chosen sentences, with the words
that bound them (``2주일 이내``, ``500만원 이하의 과태료``). When the question states the asker's
own number (``3시간 정도 외근``, ``40일째``, ``근속 15년 차``), the brackets of the sentence decide
(:mod:`rag.text.conditions`): a value of a bracket the number does not fall in is not the answer,
a bound on that number is the case's condition, not its answer (unless the question asks for the
bound: ``얼마 이하``), a value that repeats the question's number is an echo, and of two brackets
the number falls in the tighter one is the case's ("30일을 초과한 경우 … 10분의 2" for 40 days,
not the 15-day bracket before it).
"""
from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Protocol

from rag.lang.ko.answers import SPAN_TAIL
from rag.text.conditions import (Given, adjacent, against_limit, asks_bound, distance, echoes, given_values, governing,
                                 meets, within_bound)
from rag.text.facts import extract_quantities
from rag.text.lexical import normalize
from rag.text.question_analysis import QuestionAnalysis, holds_fact
from rag.text.questions import QUANTITY_KINDS

# What follows a value in a statute and belongs to it: "2주일 이내", "500만원 이하의 과태료".
_SPAN_TAIL = re.compile(SPAN_TAIL)
MAX_SPANS = 3


class SpanSource(Protocol):
    """What a span is read from: a sentence's answer text and the source it cites."""

    text: str
    source_id: str


def answer_spans(asked: QuestionAnalysis, units: Sequence[SpanSource]) -> list[tuple[str, str]]:
    """(value as the source writes it, source id) for the asked fact in ``units``, with the words
    that bound it (이내, 이하의 과태료). Values written right after each other are one span ("1일
    8시간", "18퍼센트 이상 23.5퍼센트 미만"; never across a comma or into the next clause), kept
    when it holds a value of the asked kind and grain and the question's own numbers allow it (see
    the module docstring). A question of several parts: each such span, one per numeric part (at
    most :data:`MAX_SPANS`), each once, in unit order; otherwise the one of the tightest bracket
    the question's numbers fall in, else the first."""
    from rag.text.quantities import normalize_facts

    kinds = [(p.kind, p.grain, p.limit) for p in asked.asked_numbers]
    if not kinds:
        return []
    given = given_values(asked.text)
    bound_ok = asks_bound(asked.text)
    family = set().union(*(QUANTITY_KINDS[k] for k, _, _ in kinds))
    found: list[tuple[str, str, float]] = []  # span, source, closeness of its bracket (inf: none)
    for u in units:
        text = normalize_facts(u.text)
        # values written next to each other are read together ("1일 8시간", "18퍼센트 이상 23.5퍼센트 미만")
        groups: list[tuple[int, int, bool]] = []  # start, end, holds a fitting value
        for q in extract_quantities(u.text):
            if q.implied or q.kind not in family:
                continue
            fits = any(holds_fact(k, g, q.text) and not against_limit(u.text, q, lim) for k, g, lim in kinds) \
                and not echoes(q, given)
            if groups and adjacent(text[groups[-1][1]:q.start]):
                groups[-1] = (groups[-1][0], q.end, groups[-1][2] or fits)
            else:
                groups.append((q.start, q.end, fits))
        for lo, hi, fits in groups:
            closeness = _bracket_closeness(u.text, lo, hi, given, bound_ok)
            if not fits or closeness is None:
                continue
            tail = _SPAN_TAIL.match(text[hi:])
            span = (text[lo:hi] + (tail.group() if tail else "")).strip()
            if span and span not in (x for x, _, _ in found) and normalize(span) in normalize(u.text):
                found.append((span, u.source_id, closeness))
            if asked.parts and len(found) >= min(MAX_SPANS, len(kinds)):
                return [(s, sid) for s, sid, _ in found]
    if asked.parts:
        return [(s, sid) for s, sid, _ in found]
    best = min(found, key=lambda f: f[2], default=None)  # the tightest bracket; ties: the first
    return [] if best is None else [(best[0], best[1])]


def _bracket_closeness(text: str, lo: int, hi: int, given: tuple[Given, ...], bound_ok: bool) -> float | None:
    """None when the span at ``lo:hi`` cannot answer for the question's numbers (a bound on them,
    or a value of a bracket they do not fall in); else how tight its bracket is (inf: none)."""
    if not given:
        return float("inf")
    if not bound_ok and within_bound(text, lo, hi, given):
        return None
    group = governing(text, lo, given)
    if group is None:
        return float("inf")
    return distance(group, given) if meets(group, given) else None
