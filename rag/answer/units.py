"""What the extractive generator reads of each unit, before it decides: the units themselves and their
signals (:func:`unit_signals`), shared by the hand-weighted score and the learned unit head
(:mod:`rag.answer.unit_head`), so both read exactly the same numbers.

- **lexical**: IDF-weighted share of the question's content terms in the unit (:func:`idf_recall`; an item
  is read with its lead), **context** the same for its whole block (which carries the article heading);
- **fit**: 1 for a unit that states the asked kind of fact, ``extractive_kind_penalty`` for one that states
  none, in between for a question of several numeric parts (:func:`kind_fit`), times
  :func:`case_fit` (a bracket the question's own numbers miss);
- **model**: the scorer's score (the embedder's cosine or the reader's probability) for the
  ``extractive_model_candidates`` best units by lexical match and fit, and for
  ``extractive_crosslingual_candidates`` units of blocks in another language than the question;
- **coverage**: the question's key-term coverage of the unit read with its lead and section heading.
"""
from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from rag.config import GenerationConfig
from rag.context.builder import ContextBundle
from rag.errors import GenerationError
from rag.text.conditions import Given, bracket, given_values
from rag.lang import OTHER, detect_language
from rag.lang.en import answers as en_answers
from rag.lang.ko import answers as ko_answers
from rag.text.lexical import content_terms
from rag.text.question_analysis import QuestionAnalysis, fitting_quantities, holds_fact

SentenceScorer = Callable[[str, Sequence[str]], Sequence[float]]
"""(question, sentences) -> one score per sentence in [0, 1], higher is better (e.g. a cosine)."""


@dataclass(frozen=True)
class Unit:
    """One answer unit of a bundle: a sentence, paragraph or list item of one block."""

    block_pos: int
    sent_pos: int
    source_id: str
    raw: str  # verbatim block text (the quote)
    text: str  # the answer form (clean_unit)
    kinds: frozenset[str]  # quantity kinds it states
    delegates: bool = False  # the unit says the value is set elsewhere (별표, a decree, a notice)
    lead: str = ""  # for a list item: the sentence that introduces the list (an item is read with it)
    section: str = ""  # the heading of its block's section (the article: 제7조 (정근수당))
    score: float = 0.0
    lexical: float = 0.0  # IDF-weighted share of the question's terms in the unit
    context: float = 0.0  # the same for the unit's whole block
    pre: float = 0.0  # (1 - context_weight) * lexical + context_weight * context: the lexical match
    model: float | None = None  # the scorer's score, when it scored this unit
    coverage: float = 0.0  # the question's key-term coverage of the unit read with its lead and section


# Question words and interrogative endings that an answer sentence does not repeat
# (Hangul bigrams as the analyzer makes them, and a few English words).
QUESTION_TERMS = ko_answers.QUESTION_TERMS | en_answers.QUESTION_TERMS


def idf_recall(question: str, texts: Sequence[str]) -> list[float]:
    """IDF-weighted share of the question's content terms found in each text.

    IDF comes from the texts themselves (``log(1 + N / df)``; a term in no text gets the largest
    weight), so common words count for little and a question whose key terms appear nowhere
    scores low. Question words (QUESTION_TERMS) are ignored."""
    q = content_terms(question) - QUESTION_TERMS
    if not q or not texts:
        return [0.0] * len(texts)
    terms = [content_terms(s) for s in texts]
    n = len(texts)
    df = {t: sum(1 for s in terms if t in s) for t in q}
    w = {t: math.log(1 + n / max(df[t], 0.5)) for t in q}
    total = sum(w.values())
    return [sum(w[t] for t in q if t in s) / total for s in terms]


def section_terms(question: str, bundle: ContextBundle) -> list[int | None]:
    """Per block, how many of the question's content terms its section heading holds (None: no heading)."""
    q = content_terms(question) - QUESTION_TERMS
    return [len(q & content_terms(b.section)) if b.section else None for b in bundle.blocks]


@dataclass(frozen=True)
class UnitSignals:
    """The signals of one question's units, parallel to the unit list (module docstring)."""

    lexical: tuple[float, ...]
    context: tuple[float, ...]  # of the unit's block
    pre: tuple[float, ...]  # (1 - context_weight) * lexical + context_weight * context
    fit: tuple[float, ...]  # kind_fit * case_fit
    model: tuple[float | None, ...]  # None: the model did not score the unit
    cross: tuple[bool, ...]  # the unit's block is in another language than the question
    coverage: tuple[float, ...]
    floor: float  # the model score read as 0 (extractive_model_floor or extractive_reader_floor)


def unit_signals(asked: QuestionAnalysis, bundle: ContextBundle, units: Sequence[Unit], config: GenerationConfig,
                 scorer: SentenceScorer | None) -> UnitSignals:
    """Every signal of every unit; the model scores the candidates the config names (module docstring)."""
    c = config
    question = asked.text
    read = [f"{u.lead} {u.text}" if u.lead else u.text for u in units]  # an item is read with its lead
    own = idf_recall(question, read)
    ctx_of = idf_recall(question, [b.text for b in bundle.blocks])
    cw = c.extractive_context_weight
    pre = [(1 - cw) * lex + cw * ctx_of[u.block_pos] for u, lex in zip(units, own)]
    # A question in another language than its block (English about Korean text) shares no terms
    # with it: there the model's score is the whole score.
    qlang = detect_language(question)
    cross_block = [detect_language(b.text) not in (qlang, OTHER) for b in bundle.blocks]
    given = case_numbers(asked)
    fit = [kind_fit(asked, u.text, c.extractive_kind_penalty) * case_fit(u.text, given, c.extractive_kind_penalty)
           for u in units]
    model: list[float | None] = [None] * len(units)
    if scorer is not None and c.extractive_model_weight > 0 and units:
        order = sorted(range(len(units)), key=lambda i: (-pre[i] * fit[i], units[i].block_pos, units[i].sent_pos))
        same = [i for i in order if not cross_block[units[i].block_pos]]
        xs = sorted((i for i in range(len(units)) if cross_block[units[i].block_pos]),
                    key=lambda i: (-fit[i], units[i].block_pos, units[i].sent_pos))
        top = same[:c.extractive_model_candidates] + xs[:c.extractive_crosslingual_candidates]
        sims = list(scorer(question, [units[i].text for i in top]))
        if len(sims) != len(top):
            raise GenerationError(f"the sentence scorer returned {len(sims)} scores for {len(top)} sentences")
        for i, x in zip(top, sims):
            model[i] = float(x)
    floor = c.extractive_reader_floor if c.extractive_scorer == "reader" else c.extractive_model_floor
    coverage = [asked.coverage(f"{u.section} {r}") for u, r in zip(units, read)]
    return UnitSignals(tuple(own), tuple(ctx_of[u.block_pos] for u in units), tuple(pre), tuple(fit), tuple(model),
                       tuple(cross_block[u.block_pos] for u in units), tuple(coverage), floor)


def rule_scores(signals: UnitSignals, weight: float) -> list[float]:
    """The hand-weighted score: ``(1 - weight) * pre + weight * model`` with the model score rescaled from
    [floor, 1] to [0, 1] (unscored units count 0 there; in a block of another language the model's score
    is the whole score), times ``fit``."""
    lo = signals.floor
    out = []
    for pre, fit, m, cross in zip(signals.pre, signals.fit, signals.model, signals.cross):
        scaled = 0.0 if m is None else min(1.0, max(0.0, (m - lo) / (1 - lo)))
        out.append((scaled if cross and weight > 0 else (1 - weight) * pre + weight * scaled) * fit)
    return out


def holds_asked(asked: QuestionAnalysis, text: str, directed: bool = True) -> bool:
    """The text states the asked fact, or the fact of one of the question's numeric parts (a
    question whose parts ask no number: True). ``directed``: a bound of the other direction than the
    limit asked ("4명을 초과하더라도" for "몇 명까지") does not count; undirected it does (a sentence after
    the answer may state the exception)."""
    if asked.numeric_parts:
        return any(holds_fact(p.kind, p.grain, text, p.limit if directed else "") for p in asked.numeric_parts)
    return asked.holds_asked_fact(text, directed) if not asked.parts else True


def case_numbers(asked: QuestionAnalysis) -> tuple[Given, ...]:
    """The numbers a numeric question states about the asker's case (:func:`given_values`); none for
    another kind: for "직원이 3명인데 연차를 줘야 하나요?" the bracket the number misses ("5명 이상의
    근로자를 사용하는 사업장") is the answer, not another case."""
    return given_values(asked.text) if asked.numeric else ()


def case_fit(text: str, given: tuple[Given, ...], penalty: float) -> float:
    """``penalty`` for a unit whose brackets on the question's own numbers none of them falls in
    ("4시간 이상인 공무원에게는 2만원" for a 3-hour trip): it speaks of another case; else 1."""
    return penalty if bracket(text, given).applies is False else 1.0


def kind_fit(asked: QuestionAnalysis, text: str, penalty: float) -> float:
    """1 for a unit that states the asked fact, ``penalty`` for one that states none; for a
    question of several numeric parts, in between by the share of parts it can answer (counted
    as fitting values: "1일 8시간, 1주 40시간" answers both "하루 몇 시간" and "일주일에 몇 시간")."""
    numeric = asked.numeric_parts
    if not numeric:
        return 1.0 if holds_asked(asked, text, directed=False) else penalty
    n = sum(min(1, fitting_quantities(p.kind, p.grain, text)) for p in numeric)
    if len({(p.kind, p.grain) for p in numeric}) == 1:  # parts of one kind: each needs its own value
        n = min(len(numeric), fitting_quantities(numeric[0].kind, numeric[0].grain, text))
    return penalty + (1 - penalty) * n / len(numeric)
